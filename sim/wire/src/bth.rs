//! Base Transport Header (12 bytes).

use serde::{Deserialize, Serialize};

use crate::Layer;
use crate::field::{Field, Layout, header_view};

pub const OPCODE: Field = Field::new("OpCode", 0, 0, 8);
pub const SE: Field = Field::new("SE", 1, 0, 1);
pub const MIG_REQ: Field = Field::new("MigReq", 1, 1, 1);
pub const PAD_CNT: Field = Field::new("PadCnt", 1, 2, 2);
pub const TVER: Field = Field::new("TVer", 1, 4, 4);
pub const PKEY: Field = Field::new("P_Key", 2, 0, 16);
pub const FECN: Field = Field::new("FECN", 4, 0, 1);
pub const BECN: Field = Field::new("BECN", 4, 1, 1);
pub const RESV6: Field = Field::new("Resv6", 4, 2, 6);
pub const DEST_QP: Field = Field::new("DestQP", 5, 0, 24);
pub const ACK_REQ: Field = Field::new("AckReq", 8, 0, 1);
pub const RESV7: Field = Field::new("Resv7", 8, 1, 7);
pub const PSN: Field = Field::new("PSN", 9, 0, 24);

pub const LAYOUT: Layout = Layout {
    name: "BTH",
    len: 12,
    fields: &[
        OPCODE, SE, MIG_REQ, PAD_CNT, TVER, PKEY, FECN, BECN, RESV6, DEST_QP, ACK_REQ, RESV7, PSN,
    ],
};

/// The BTH byte that the ICRC masks to 0xFF (FECN, BECN and six reserved bits).
pub const ICRC_MASKED_BYTE: usize = 4;

/// The default partition key.
pub const DEFAULT_PKEY: u16 = 0xFFFF;

header_view!(
    /// View over a 12-byte BTH.
    BthHeader, LAYOUT, Layer::Bth, {
        opcode, set_opcode: u8 = OPCODE;
        solicited, set_solicited: bool = SE;
        mig_req, set_mig_req: bool = MIG_REQ;
        pad_cnt, set_pad_cnt: u8 = PAD_CNT;
        tver, set_tver: u8 = TVER;
        pkey, set_pkey: u16 = PKEY;
        fecn, set_fecn: bool = FECN;
        becn, set_becn: bool = BECN;
        resv6, set_resv6: u8 = RESV6;
        dest_qp, set_dest_qp: u32 = DEST_QP;
        ack_req, set_ack_req: bool = ACK_REQ;
        resv7, set_resv7: u8 = RESV7;
        psn, set_psn: u32 = PSN;
    }
);

/// Every BTH field a description sets. PadCnt is derived from the payload length. The reserved
/// bits are carried so that a received frame is reproduced byte for byte (a Huawei RNIC sets a
/// bit of Resv6); senders leave them 0, and they may be omitted in JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BthRepr {
    pub opcode: u8,
    pub solicited: bool,
    pub mig_req: bool,
    pub tver: u8,
    pub pkey: u16,
    pub fecn: bool,
    pub becn: bool,
    pub dest_qp: u32,
    pub ack_req: bool,
    pub psn: u32,
    /// The six reserved bits of byte 4 (masked by the ICRC).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub resv6: u8,
    /// The seven reserved bits of byte 8.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub resv7: u8,
}

fn is_zero(v: &u8) -> bool {
    *v == 0
}

impl BthRepr {
    /// A BTH for `opcode` to `dest_qp` at `psn`: default P_Key, TVer 0, every flag clear.
    pub fn new(opcode: u8, dest_qp: u32, psn: u32) -> Self {
        BthRepr {
            opcode,
            solicited: false,
            mig_req: false,
            tver: 0,
            pkey: DEFAULT_PKEY,
            fecn: false,
            becn: false,
            dest_qp,
            ack_req: false,
            psn,
            resv6: 0,
            resv7: 0,
        }
    }

    /// Reads every field but PadCnt.
    pub fn parse<T: AsRef<[u8]>>(h: &BthHeader<T>) -> Self {
        BthRepr {
            opcode: h.opcode(),
            solicited: h.solicited(),
            mig_req: h.mig_req(),
            tver: h.tver(),
            pkey: h.pkey(),
            fecn: h.fecn(),
            becn: h.becn(),
            dest_qp: h.dest_qp(),
            ack_req: h.ack_req(),
            psn: h.psn(),
            resv6: h.resv6(),
            resv7: h.resv7(),
        }
    }

    /// Writes the header with the given PadCnt into `buf` (12 bytes).
    pub fn emit(&self, buf: &mut [u8], pad_cnt: u8) {
        buf[..LAYOUT.len].fill(0);
        let mut h = BthHeader { buf: &mut buf[..] };
        h.set_opcode(self.opcode);
        h.set_solicited(self.solicited);
        h.set_mig_req(self.mig_req);
        h.set_pad_cnt(pad_cnt);
        h.set_tver(self.tver);
        h.set_pkey(self.pkey);
        h.set_fecn(self.fecn);
        h.set_becn(self.becn);
        h.set_dest_qp(self.dest_qp);
        h.set_ack_req(self.ack_req);
        h.set_psn(self.psn);
        h.set_resv6(self.resv6);
        h.set_resv7(self.resv7);
    }
}

/// PadCnt for a payload of `len` bytes: the bytes that bring it to a multiple of 4.
pub fn pad_cnt_for(len: usize) -> u8 {
    (len.wrapping_neg() & 3) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CNP BTH as roce-wire.md gives it: opcode 0x81, P_Key 0xFFFF, byte 4 = 0x40 (BECN),
    /// AckReq 0, PSN 0; here for dest QP 0xd2.
    #[test]
    fn cnp_bth_hand_worked() {
        let r = BthRepr {
            opcode: 0x81,
            solicited: false,
            mig_req: false,
            tver: 0,
            pkey: DEFAULT_PKEY,
            fecn: false,
            becn: true,
            dest_qp: 0xd2,
            ack_req: false,
            psn: 0,
            resv6: 0,
            resv7: 0,
        };
        let mut b = [0u8; 12];
        r.emit(&mut b, 0);
        assert_eq!(b, [0x81, 0, 0xff, 0xff, 0x40, 0, 0, 0xd2, 0, 0, 0, 0]);
        assert_eq!(
            BthRepr::parse(&BthHeader::new_checked(&b[..], 0).unwrap()),
            r
        );
    }

    #[test]
    fn pad_counts() {
        assert_eq!(
            [0, 1, 2, 3, 4, 1023, 1024].map(pad_cnt_for),
            [0, 3, 2, 1, 0, 1, 0]
        );
        let mut b = [0u8; 12];
        BthRepr {
            opcode: 4,
            solicited: true,
            mig_req: true,
            tver: 0,
            pkey: 0x8001,
            fecn: true,
            becn: false,
            dest_qp: 0xABCDEF,
            ack_req: true,
            psn: 0x123456,
            resv6: 0,
            resv7: 0,
        }
        .emit(&mut b, 3);
        assert_eq!(
            b,
            [
                0x04, 0xF0, 0x80, 0x01, 0x80, 0xAB, 0xCD, 0xEF, 0x80, 0x12, 0x34, 0x56
            ]
        );
    }
}
