//! IPv6 (fixed 40-byte header; extension headers are reported as unsupported).

use std::net::Ipv6Addr;

use serde::{Deserialize, Serialize};

use crate::field::{Field, Layout, header_view};
use crate::{Error, ErrorKind, Layer};

pub const VERSION: Field = Field::new("Version", 0, 0, 4);
/// The traffic class is split into DSCP (upper 6 bits) and ECN (lower 2 bits).
pub const DSCP: Field = Field::new("DSCP", 0, 4, 6);
pub const ECN: Field = Field::new("ECN", 1, 2, 2);
pub const FLOW_LABEL: Field = Field::new("FlowLabel", 1, 4, 20);
pub const PAYLOAD_LEN: Field = Field::new("PayloadLength", 4, 0, 16);
pub const NEXT_HEADER: Field = Field::new("NextHeader", 6, 0, 8);
pub const HOP_LIMIT: Field = Field::new("HopLimit", 7, 0, 8);
/// Addresses are 128 bits; each is split into two 64-bit halves.
pub const SRC_HI: Field = Field::new("SrcAddrHi", 8, 0, 64);
pub const SRC_LO: Field = Field::new("SrcAddrLo", 16, 0, 64);
pub const DST_HI: Field = Field::new("DstAddrHi", 24, 0, 64);
pub const DST_LO: Field = Field::new("DstAddrLo", 32, 0, 64);

pub const LAYOUT: Layout = Layout {
    name: "IPv6 header",
    len: 40,
    fields: &[
        VERSION,
        DSCP,
        ECN,
        FLOW_LABEL,
        PAYLOAD_LEN,
        NEXT_HEADER,
        HOP_LIMIT,
        SRC_HI,
        SRC_LO,
        DST_HI,
        DST_LO,
    ],
};

header_view!(
    /// View over a 40-byte IPv6 header.
    Ipv6Header, LAYOUT, Layer::Ipv6, {
        version, set_version: u8 = VERSION;
        dscp, set_dscp: u8 = DSCP;
        ecn, set_ecn: u8 = ECN;
        flow_label, set_flow_label: u32 = FLOW_LABEL;
        payload_len, set_payload_len: u16 = PAYLOAD_LEN;
        next_header, set_next_header: u8 = NEXT_HEADER;
        hop_limit, set_hop_limit: u8 = HOP_LIMIT;
        src_hi, set_src_hi: u64 = SRC_HI;
        src_lo, set_src_lo: u64 = SRC_LO;
        dst_hi, set_dst_hi: u64 = DST_HI;
        dst_lo, set_dst_lo: u64 = DST_LO;
    }
);

impl<T: AsRef<[u8]>> Ipv6Header<T> {
    pub fn src(&self) -> Ipv6Addr {
        Ipv6Addr::from((u128::from(self.src_hi()) << 64) | u128::from(self.src_lo()))
    }
    pub fn dst(&self) -> Ipv6Addr {
        Ipv6Addr::from((u128::from(self.dst_hi()) << 64) | u128::from(self.dst_lo()))
    }
}

/// The IPv6 fields a RoCEv2 frame description carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ipv6Repr {
    pub src: Ipv6Addr,
    pub dst: Ipv6Addr,
    pub dscp: u8,
    pub ecn: u8,
    pub flow_label: u32,
    pub hop_limit: u8,
}

/// A parsed IPv6 header with the derived fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv6Parsed {
    pub repr: Ipv6Repr,
    pub next_header: u8,
    pub payload_len: u16,
}

impl Ipv6Repr {
    /// Parses the IPv6 header at the start of `packet`; the payload length must fit.
    pub fn parse(packet: &[u8], offset: usize) -> Result<Ipv6Parsed, Error> {
        let h = Ipv6Header::new_checked(packet, offset)?;
        if h.version() != 6 {
            return Err(Error::new(
                Layer::Ipv6,
                offset,
                ErrorKind::BadField {
                    field: "Version",
                    value: h.version().into(),
                },
            ));
        }
        let total = LAYOUT.len + usize::from(h.payload_len());
        if total > packet.len() {
            return Err(Error::truncated(Layer::Ipv6, offset, total, packet.len()));
        }
        Ok(Ipv6Parsed {
            repr: Ipv6Repr {
                src: h.src(),
                dst: h.dst(),
                dscp: h.dscp(),
                ecn: h.ecn(),
                flow_label: h.flow_label(),
                hop_limit: h.hop_limit(),
            },
            next_header: h.next_header(),
            payload_len: h.payload_len(),
        })
    }

    /// Writes a complete header into `buf` (40 bytes).
    pub fn emit(&self, buf: &mut [u8], next_header: u8, payload_len: u16) {
        let mut h = Ipv6Header { buf: &mut buf[..] };
        h.set_version(6);
        h.set_dscp(self.dscp);
        h.set_ecn(self.ecn);
        h.set_flow_label(self.flow_label);
        h.set_payload_len(payload_len);
        h.set_next_header(next_header);
        h.set_hop_limit(self.hop_limit);
        let s = u128::from(self.src);
        let d = u128::from(self.dst);
        h.set_src_hi((s >> 64) as u64);
        h.set_src_lo(s as u64);
        h.set_dst_hi((d >> 64) as u64);
        h.set_dst_lo(d as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traffic_class_split_hand_worked() {
        // Version 6, TC 0xC2 (DSCP 48, ECT(0)), flow label 0x12345: 6C 21 23 45.
        let r = Ipv6Repr {
            src: "fe80::1".parse().unwrap(),
            dst: "2001:db8::2".parse().unwrap(),
            dscp: 48,
            ecn: 2,
            flow_label: 0x12345,
            hop_limit: 255,
        };
        let mut b = vec![0u8; 48];
        r.emit(&mut b, 17, 8);
        assert_eq!(&b[..8], &[0x6C, 0x21, 0x23, 0x45, 0x00, 0x08, 17, 255]);
        assert_eq!(b[8], 0xfe);
        assert_eq!(b[23], 1);
        let p = Ipv6Repr::parse(&b, 14).unwrap();
        assert_eq!(p.repr, r);
        let e = Ipv6Repr::parse(&b[..47], 14).unwrap_err();
        assert_eq!(
            e.to_string(),
            "IPv6 header truncated at offset 14 (needs 48 bytes, 47 present)"
        );
    }
}
