//! Ethernet II with at most one 802.1Q tag.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::field::{Field, Layout, header_view};
use crate::{Error, ErrorKind, Layer};

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
pub const ETHERTYPE_ARP: u16 = 0x0806;
pub const ETHERTYPE_VLAN: u16 = 0x8100;
pub const ETHERTYPE_QINQ: u16 = 0x88A8;

pub const DST: Field = Field::new("DstMAC", 0, 0, 48);
pub const SRC: Field = Field::new("SrcMAC", 6, 0, 48);
pub const ETHERTYPE: Field = Field::new("EtherType", 12, 0, 16);

/// The untagged Ethernet II header.
pub const LAYOUT: Layout = Layout {
    name: "Ethernet header",
    len: 14,
    fields: &[DST, SRC, ETHERTYPE],
};

pub const TPID: Field = Field::new("TPID", 0, 0, 16);
pub const PCP: Field = Field::new("PCP", 2, 0, 3);
pub const DEI: Field = Field::new("DEI", 2, 3, 1);
pub const VID: Field = Field::new("VID", 2, 4, 12);

/// The 802.1Q tag that sits where the EtherType would be (offset 12 of the frame); the inner
/// EtherType follows it.
pub const VLAN_LAYOUT: Layout = Layout {
    name: "802.1Q tag",
    len: 4,
    fields: &[TPID, PCP, DEI, VID],
};

header_view!(
    /// View over the first 14 bytes of a frame.
    EthernetHeader, LAYOUT, Layer::Ethernet, {
        dst, set_dst: u64 = DST;
        src, set_src: u64 = SRC;
        ethertype, set_ethertype: u16 = ETHERTYPE;
    }
);

header_view!(
    /// View over an 802.1Q tag (TPID and TCI).
    VlanHeader, VLAN_LAYOUT, Layer::Vlan, {
        tpid, set_tpid: u16 = TPID;
        pcp, set_pcp: u8 = PCP;
        dei, set_dei: bool = DEI;
        vid, set_vid: u16 = VID;
    }
);

/// A 48-bit MAC address, written `02:00:00:00:00:01`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    pub const BROADCAST: MacAddr = MacAddr([0xFF; 6]);

    pub fn from_u64(v: u64) -> Self {
        let b = v.to_be_bytes();
        MacAddr([b[2], b[3], b[4], b[5], b[6], b[7]])
    }

    pub fn to_u64(self) -> u64 {
        let mut b = [0u8; 8];
        b[2..].copy_from_slice(&self.0);
        u64::from_be_bytes(b)
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

impl FromStr for MacAddr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut out = [0u8; 6];
        let mut parts = s.split([':', '-']);
        for byte in out.iter_mut() {
            let p = parts
                .next()
                .ok_or_else(|| format!("MAC address {s:?} has fewer than 6 bytes"))?;
            if p.is_empty() || p.len() > 2 {
                return Err(format!("MAC address {s:?}: bad byte {p:?}"));
            }
            *byte = u8::from_str_radix(p, 16)
                .map_err(|_| format!("MAC address {s:?}: bad byte {p:?}"))?;
        }
        if parts.next().is_some() {
            return Err(format!("MAC address {s:?} has more than 6 bytes"));
        }
        Ok(MacAddr(out))
    }
}

impl Serialize for MacAddr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for MacAddr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// An 802.1Q tag's TCI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct VlanTag {
    pub pcp: u8,
    pub dei: bool,
    pub vid: u16,
}

/// The Ethernet header of a RoCEv2 frame (the EtherType follows from the IP version).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EthRepr {
    pub dst: MacAddr,
    pub src: MacAddr,
    pub vlan: Option<VlanTag>,
}

/// The parsed link layer of any frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EthParsed {
    pub repr: EthRepr,
    /// EtherType after the tag, if any.
    pub ethertype: u16,
    /// Offset of the network-layer header.
    pub payload_offset: usize,
}

impl EthRepr {
    /// Header length: 14, or 18 with a tag.
    pub fn header_len(&self) -> usize {
        if self.vlan.is_some() { 18 } else { 14 }
    }

    /// Parses the Ethernet header and at most one 802.1Q tag at the start of `frame`.
    pub fn parse(frame: &[u8]) -> Result<EthParsed, Error> {
        let eth = EthernetHeader::new_checked(frame, 0)?;
        let mut repr = EthRepr {
            dst: MacAddr::from_u64(eth.dst()),
            src: MacAddr::from_u64(eth.src()),
            vlan: None,
        };
        let mut ethertype = eth.ethertype();
        let mut offset = LAYOUT.len;
        if ethertype == ETHERTYPE_QINQ {
            return Err(Error::unsupported(
                Layer::Vlan,
                12,
                "802.1ad (QinQ) service tag",
            ));
        }
        if ethertype == ETHERTYPE_VLAN {
            let tag = VlanHeader::new_checked(&frame[12..], 12)?;
            if frame.len() < 18 {
                return Err(Error::truncated(Layer::Vlan, 12, 6, frame.len() - 12));
            }
            repr.vlan = Some(VlanTag {
                pcp: tag.pcp(),
                dei: tag.dei(),
                vid: tag.vid(),
            });
            ethertype = u16::from_be_bytes([frame[16], frame[17]]);
            offset = 18;
            if ethertype == ETHERTYPE_VLAN || ethertype == ETHERTYPE_QINQ {
                return Err(Error::unsupported(
                    Layer::Vlan,
                    16,
                    "more than one VLAN tag",
                ));
            }
        }
        if ethertype < 0x0600 {
            return Err(Error::new(
                Layer::Ethernet,
                offset - 2,
                ErrorKind::Unsupported(format!("802.3 length field {ethertype} (not Ethernet II)")),
            ));
        }
        Ok(EthParsed {
            repr,
            ethertype,
            payload_offset: offset,
        })
    }

    /// Writes the header (with the tag, if any) and `ethertype` into `buf`, which must hold
    /// `header_len()` bytes.
    pub fn emit(&self, buf: &mut [u8], ethertype: u16) {
        let mut eth = EthernetHeader { buf: &mut buf[..] };
        eth.set_dst(self.dst.to_u64());
        eth.set_src(self.src.to_u64());
        match self.vlan {
            None => eth.set_ethertype(ethertype),
            Some(tag) => {
                let mut v = VlanHeader {
                    buf: &mut buf[12..],
                };
                v.set_tpid(ETHERTYPE_VLAN);
                v.set_pcp(tag.pcp);
                v.set_dei(tag.dei);
                v.set_vid(tag.vid);
                buf[16..18].copy_from_slice(&ethertype.to_be_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mac_text_round_trip_and_errors() {
        let m: MacAddr = "18:3d:5e:0a:BB:01".parse().unwrap();
        assert_eq!(m.0, [0x18, 0x3d, 0x5e, 0x0a, 0xbb, 0x01]);
        assert_eq!(m.to_string(), "18:3d:5e:0a:bb:01");
        assert_eq!(MacAddr::from_u64(m.to_u64()), m);
        assert!("18:3d:5e:0a:bb".parse::<MacAddr>().is_err());
        assert!("18:3d:5e:0a:bb:01:02".parse::<MacAddr>().is_err());
        assert!("18:3d:5e:0a:bb:zz".parse::<MacAddr>().is_err());
    }

    #[test]
    fn vlan_tag_parse_hand_worked() {
        // TCI 0xA064: PCP 5, DEI 0, VID 100.
        let mut f = vec![0u8; 18];
        f[12..16].copy_from_slice(&[0x81, 0x00, 0xA0, 0x64]);
        f[16..18].copy_from_slice(&[0x86, 0xDD]);
        let p = EthRepr::parse(&f).unwrap();
        assert_eq!(
            p.repr.vlan,
            Some(VlanTag {
                pcp: 5,
                dei: false,
                vid: 100
            })
        );
        assert_eq!(p.ethertype, ETHERTYPE_IPV6);
        assert_eq!(p.payload_offset, 18);
        let mut g = vec![0u8; 18];
        p.repr.emit(&mut g, ETHERTYPE_IPV6);
        assert_eq!(f, g);
    }

    #[test]
    fn truncated_and_double_tag() {
        let e = EthRepr::parse(&[0u8; 10]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Ethernet header truncated at offset 0 (needs 14 bytes, 10 present)"
        );
        let mut f = vec![0u8; 22];
        f[12..14].copy_from_slice(&[0x81, 0x00]);
        f[16..18].copy_from_slice(&[0x81, 0x00]);
        assert!(matches!(
            EthRepr::parse(&f).unwrap_err().kind,
            ErrorKind::Unsupported(_)
        ));
    }
}
