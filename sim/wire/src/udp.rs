//! UDP.

use serde::{Deserialize, Serialize};

use crate::field::{Field, Layout, header_view};
use crate::{Error, ErrorKind, Layer};

/// The IANA port of RoCEv2.
pub const ROCE_PORT: u16 = 4791;

pub const SRC_PORT: Field = Field::new("SrcPort", 0, 0, 16);
pub const DST_PORT: Field = Field::new("DstPort", 2, 0, 16);
pub const LENGTH: Field = Field::new("Length", 4, 0, 16);
pub const CHECKSUM: Field = Field::new("Checksum", 6, 0, 16);

pub const LAYOUT: Layout = Layout {
    name: "UDP header",
    len: 8,
    fields: &[SRC_PORT, DST_PORT, LENGTH, CHECKSUM],
};

header_view!(
    /// View over an 8-byte UDP header.
    UdpHeader, LAYOUT, Layer::Udp, {
        src_port, set_src_port: u16 = SRC_PORT;
        dst_port, set_dst_port: u16 = DST_PORT;
        length, set_length: u16 = LENGTH;
        checksum, set_checksum: u16 = CHECKSUM;
    }
);

/// The UDP fields a RoCEv2 frame description carries. The length is derived. The checksum is
/// sent as given: RoCEv2 senders normally send 0 (the ICRC covers the packet and the ICRC masks
/// this field), but some NICs fill it in, and a received frame is reproduced as it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub checksum: u16,
}

fn is_zero(v: &u16) -> bool {
    *v == 0
}

/// A parsed UDP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpParsed {
    pub repr: UdpRepr,
    pub length: u16,
}

impl UdpRepr {
    /// Parses the UDP header at the start of `datagram`, which is the IP payload exactly; the
    /// UDP length must equal its length.
    pub fn parse(datagram: &[u8], offset: usize) -> Result<UdpParsed, Error> {
        let h = UdpHeader::new_checked(datagram, offset)?;
        if usize::from(h.length()) != datagram.len() {
            return Err(Error::new(
                Layer::Udp,
                offset,
                ErrorKind::LengthMismatch(format!(
                    "UDP length {} but the IP length leaves {} bytes",
                    h.length(),
                    datagram.len()
                )),
            ));
        }
        Ok(UdpParsed {
            repr: UdpRepr {
                src_port: h.src_port(),
                dst_port: h.dst_port(),
                checksum: h.checksum(),
            },
            length: h.length(),
        })
    }

    /// Writes the header into `buf` (8 bytes).
    pub fn emit(&self, buf: &mut [u8], length: u16) {
        let mut h = UdpHeader { buf: &mut buf[..] };
        h.set_src_port(self.src_port);
        h.set_dst_port(self.dst_port);
        h.set_length(length);
        h.set_checksum(self.checksum);
    }
}
