//! IPv4 (20-byte header, no options, no fragments).

use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::field::{Field, Layout, header_view};
use crate::{Error, ErrorKind, Layer};

pub const PROTO_UDP: u8 = 17;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_ICMP: u8 = 1;

pub const VERSION: Field = Field::new("Version", 0, 0, 4);
pub const IHL: Field = Field::new("IHL", 0, 4, 4);
pub const DSCP: Field = Field::new("DSCP", 1, 0, 6);
pub const ECN: Field = Field::new("ECN", 1, 6, 2);
pub const TOTAL_LEN: Field = Field::new("TotalLength", 2, 0, 16);
pub const IDENT: Field = Field::new("Identification", 4, 0, 16);
pub const DF: Field = Field::new("DF", 6, 1, 1);
pub const MF: Field = Field::new("MF", 6, 2, 1);
pub const FRAG_OFFSET: Field = Field::new("FragmentOffset", 6, 3, 13);
pub const TTL: Field = Field::new("TTL", 8, 0, 8);
pub const PROTOCOL: Field = Field::new("Protocol", 9, 0, 8);
pub const CHECKSUM: Field = Field::new("HeaderChecksum", 10, 0, 16);
pub const SRC: Field = Field::new("SrcAddr", 12, 0, 32);
pub const DST: Field = Field::new("DstAddr", 16, 0, 32);

pub const LAYOUT: Layout = Layout {
    name: "IPv4 header",
    len: 20,
    fields: &[
        VERSION,
        IHL,
        DSCP,
        ECN,
        TOTAL_LEN,
        IDENT,
        DF,
        MF,
        FRAG_OFFSET,
        TTL,
        PROTOCOL,
        CHECKSUM,
        SRC,
        DST,
    ],
};

header_view!(
    /// View over a 20-byte IPv4 header.
    Ipv4Header, LAYOUT, Layer::Ipv4, {
        version, set_version: u8 = VERSION;
        ihl, set_ihl: u8 = IHL;
        dscp, set_dscp: u8 = DSCP;
        ecn, set_ecn: u8 = ECN;
        total_len, set_total_len: u16 = TOTAL_LEN;
        ident, set_ident: u16 = IDENT;
        dont_frag, set_dont_frag: bool = DF;
        more_frags, set_more_frags: bool = MF;
        frag_offset, set_frag_offset: u16 = FRAG_OFFSET;
        ttl, set_ttl: u8 = TTL;
        protocol, set_protocol: u8 = PROTOCOL;
        checksum, set_checksum: u16 = CHECKSUM;
        src, set_src: u32 = SRC;
        dst, set_dst: u32 = DST;
    }
);

impl<T: AsRef<[u8]>> Ipv4Header<T> {
    /// True when the header checksum verifies.
    pub fn checksum_ok(&self) -> bool {
        checksum(self.as_bytes()) == 0
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Header<T> {
    /// Recomputes the header checksum.
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let c = checksum(self.as_bytes());
        self.set_checksum(c);
    }
}

/// The Internet checksum (RFC 1071) of `data`: ones' complement of the ones' complement sum.
/// Over a header whose checksum field is correct, it is 0.
pub fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u32::from(*last) << 8;
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// The IPv4 fields a RoCEv2 frame description carries (lengths, protocol and checksum are
/// derived).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ipv4Repr {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub dscp: u8,
    pub ecn: u8,
    pub ttl: u8,
    pub ident: u16,
    pub dont_frag: bool,
}

/// A parsed IPv4 header with the derived fields the description leaves out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Parsed {
    pub repr: Ipv4Repr,
    pub protocol: u8,
    pub total_len: u16,
    pub checksum: u16,
    pub checksum_ok: bool,
}

impl Ipv4Repr {
    /// Parses the IPv4 header at the start of `packet` (`offset` is its position in the frame).
    /// Options and fragments are reported as unsupported; the total length must fit in
    /// `packet`. A bad checksum is reported in the result, not as an error, so that callers can
    /// count it.
    pub fn parse(packet: &[u8], offset: usize) -> Result<Ipv4Parsed, Error> {
        let h = Ipv4Header::new_checked(packet, offset)?;
        if h.version() != 4 {
            return Err(Error::new(
                Layer::Ipv4,
                offset,
                ErrorKind::BadField {
                    field: "Version",
                    value: h.version().into(),
                },
            ));
        }
        if h.ihl() != 5 {
            return Err(Error::unsupported(
                Layer::Ipv4,
                offset,
                format!(
                    "IPv4 options (IHL {}, {} bytes of header)",
                    h.ihl(),
                    h.ihl() * 4
                ),
            ));
        }
        if h.more_frags() || h.frag_offset() != 0 {
            return Err(Error::unsupported(
                Layer::Ipv4,
                offset,
                format!(
                    "IPv4 fragment (MF {}, offset {})",
                    u8::from(h.more_frags()),
                    h.frag_offset()
                ),
            ));
        }
        let total = usize::from(h.total_len());
        if total < LAYOUT.len {
            return Err(Error::new(
                Layer::Ipv4,
                offset,
                ErrorKind::LengthMismatch(format!("total length {total} is below 20")),
            ));
        }
        if total > packet.len() {
            return Err(Error::truncated(Layer::Ipv4, offset, total, packet.len()));
        }
        Ok(Ipv4Parsed {
            repr: Ipv4Repr {
                src: Ipv4Addr::from(h.src()),
                dst: Ipv4Addr::from(h.dst()),
                dscp: h.dscp(),
                ecn: h.ecn(),
                ttl: h.ttl(),
                ident: h.ident(),
                dont_frag: h.dont_frag(),
            },
            protocol: h.protocol(),
            total_len: h.total_len(),
            checksum: h.checksum(),
            checksum_ok: h.checksum_ok(),
        })
    }

    /// Writes a complete header with a valid checksum into `buf` (20 bytes).
    pub fn emit(&self, buf: &mut [u8], protocol: u8, total_len: u16) {
        buf[..LAYOUT.len].fill(0);
        let mut h = Ipv4Header { buf: &mut buf[..] };
        h.set_version(4);
        h.set_ihl(5);
        h.set_dscp(self.dscp);
        h.set_ecn(self.ecn);
        h.set_total_len(total_len);
        h.set_ident(self.ident);
        h.set_dont_frag(self.dont_frag);
        h.set_ttl(self.ttl);
        h.set_protocol(protocol);
        h.set_src(self.src.into());
        h.set_dst(self.dst.into());
        h.fill_checksum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_hand_worked() {
        // RFC 1071's worked example: 0x0001 + 0xf203 + 0xf4f5 + 0xf6f7 = 0x2_ddf0 -> 0xddf2,
        // complemented 0x220d.
        assert_eq!(
            checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            0x220d
        );
        let r = Ipv4Repr {
            src: Ipv4Addr::new(172, 16, 10, 99),
            dst: Ipv4Addr::new(172, 16, 10, 12),
            dscp: 0,
            ecn: 0,
            ttl: 64,
            ident: 0x1c46,
            dont_frag: true,
        };
        let mut b = [0u8; 20];
        r.emit(&mut b, PROTO_TCP, 0x3c);
        // The classic textbook header 4500 003c 1c46 4000 4006 b1e6 ac10 0a63 ac10 0a0c.
        assert_eq!(u16::from_be_bytes([b[10], b[11]]), 0xb1e6);
        let p = Ipv4Repr::parse(
            &{
                let mut v = b.to_vec();
                v.resize(0x3c, 0);
                v
            },
            14,
        )
        .unwrap();
        assert!(p.checksum_ok);
        assert_eq!(p.repr, r);
    }

    #[test]
    fn options_fragments_and_lengths_are_named() {
        let r = Ipv4Repr {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 0,
            ecn: 2,
            ttl: 64,
            ident: 1,
            dont_frag: false,
        };
        let mut b = vec![0u8; 40];
        r.emit(&mut b, PROTO_UDP, 40);
        let mut opt = b.clone();
        opt[0] = 0x46;
        let e = Ipv4Repr::parse(&opt, 14).unwrap_err();
        assert!(e.to_string().contains("IPv4 options"), "{e}");
        assert_eq!(e.offset, 14);
        let mut frag = b.clone();
        frag[6] = 0x20;
        let e = Ipv4Repr::parse(&frag, 14).unwrap_err();
        assert!(e.to_string().contains("IPv4 fragment"), "{e}");
        let e = Ipv4Repr::parse(&b[..30], 14).unwrap_err();
        assert_eq!(
            e.to_string(),
            "IPv4 header truncated at offset 14 (needs 40 bytes, 30 present)"
        );
        let mut bad = b.clone();
        bad[8] ^= 1;
        assert!(!Ipv4Repr::parse(&bad, 14).unwrap().checksum_ok);
    }
}
