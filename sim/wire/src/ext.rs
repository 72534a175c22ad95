//! The headers that follow the BTH: RETH, AETH, ImmDt, IETH, AtomicETH, AtomicAckETH, DETH and
//! the CNP body. All big-endian.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::Layer;
use crate::field::{Field, Layout, header_view};

pub const RETH_VA: Field = Field::new("VA", 0, 0, 64);
pub const RETH_RKEY: Field = Field::new("R_Key", 8, 0, 32);
pub const RETH_DMA_LEN: Field = Field::new("DMALength", 12, 0, 32);
/// RDMA Extended Transport Header.
pub const RETH_LAYOUT: Layout = Layout {
    name: "RETH",
    len: 16,
    fields: &[RETH_VA, RETH_RKEY, RETH_DMA_LEN],
};

pub const AETH_SYNDROME: Field = Field::new("Syndrome", 0, 0, 8);
pub const AETH_MSN: Field = Field::new("MSN", 1, 0, 24);
/// ACK Extended Transport Header.
pub const AETH_LAYOUT: Layout = Layout {
    name: "AETH",
    len: 4,
    fields: &[AETH_SYNDROME, AETH_MSN],
};

pub const IMMDT_IMM: Field = Field::new("Immediate", 0, 0, 32);
/// Immediate Data Extended Transport Header.
pub const IMMDT_LAYOUT: Layout = Layout {
    name: "ImmDt",
    len: 4,
    fields: &[IMMDT_IMM],
};

pub const IETH_RKEY: Field = Field::new("R_Key", 0, 0, 32);
/// Invalidate Extended Transport Header.
pub const IETH_LAYOUT: Layout = Layout {
    name: "IETH",
    len: 4,
    fields: &[IETH_RKEY],
};

pub const ATOMIC_VA: Field = Field::new("VA", 0, 0, 64);
pub const ATOMIC_RKEY: Field = Field::new("R_Key", 8, 0, 32);
pub const ATOMIC_SWAP_ADD: Field = Field::new("SwapAddData", 12, 0, 64);
pub const ATOMIC_COMPARE: Field = Field::new("CompareData", 20, 0, 64);
/// Atomic Extended Transport Header.
pub const ATOMIC_ETH_LAYOUT: Layout = Layout {
    name: "AtomicETH",
    len: 28,
    fields: &[ATOMIC_VA, ATOMIC_RKEY, ATOMIC_SWAP_ADD, ATOMIC_COMPARE],
};

pub const ATOMIC_ACK_ORIG: Field = Field::new("OrigRemData", 0, 0, 64);
/// Atomic Acknowledge Extended Transport Header.
pub const ATOMIC_ACK_ETH_LAYOUT: Layout = Layout {
    name: "AtomicAckETH",
    len: 8,
    fields: &[ATOMIC_ACK_ORIG],
};

pub const DETH_QKEY: Field = Field::new("Q_Key", 0, 0, 32);
pub const DETH_RESV: Field = Field::new("Reserved", 4, 0, 8);
pub const DETH_SRC_QP: Field = Field::new("SrcQP", 5, 0, 24);
/// Datagram Extended Transport Header. Its reserved byte is carried as it came (covered by the
/// ICRC, sent as zero by a sender), as the BTH's reserved bits are.
pub const DETH_LAYOUT: Layout = Layout {
    name: "DETH",
    len: 8,
    fields: &[DETH_QKEY, DETH_RESV, DETH_SRC_QP],
};

/// The CNP body: 16 reserved bytes, sent as zero.
pub const CNP_LAYOUT: Layout = Layout {
    name: "CNP body",
    len: 16,
    fields: &[],
};

header_view!(RethHeader, RETH_LAYOUT, Layer::Reth, {
    va, set_va: u64 = RETH_VA;
    rkey, set_rkey: u32 = RETH_RKEY;
    dma_len, set_dma_len: u32 = RETH_DMA_LEN;
});
header_view!(AethHeader, AETH_LAYOUT, Layer::Aeth, {
    syndrome, set_syndrome: u8 = AETH_SYNDROME;
    msn, set_msn: u32 = AETH_MSN;
});
header_view!(ImmDtHeader, IMMDT_LAYOUT, Layer::ImmDt, {
    imm, set_imm: u32 = IMMDT_IMM;
});
header_view!(IethHeader, IETH_LAYOUT, Layer::Ieth, {
    rkey, set_rkey: u32 = IETH_RKEY;
});
header_view!(AtomicEthHeader, ATOMIC_ETH_LAYOUT, Layer::AtomicEth, {
    va, set_va: u64 = ATOMIC_VA;
    rkey, set_rkey: u32 = ATOMIC_RKEY;
    swap_add, set_swap_add: u64 = ATOMIC_SWAP_ADD;
    compare, set_compare: u64 = ATOMIC_COMPARE;
});
header_view!(AtomicAckEthHeader, ATOMIC_ACK_ETH_LAYOUT, Layer::AtomicAckEth, {
    orig, set_orig: u64 = ATOMIC_ACK_ORIG;
});
header_view!(DethHeader, DETH_LAYOUT, Layer::Deth, {
    qkey, set_qkey: u32 = DETH_QKEY;
    resv, set_resv: u8 = DETH_RESV;
    src_qp, set_src_qp: u32 = DETH_SRC_QP;
});

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reth {
    pub va: u64,
    pub rkey: u32,
    pub dma_len: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Aeth {
    pub syndrome: u8,
    pub msn: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AtomicEth {
    pub va: u64,
    pub rkey: u32,
    pub swap_add: u64,
    pub compare: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AtomicAckEth {
    pub orig: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deth {
    pub qkey: u32,
    pub src_qp: u32,
    /// The reserved byte 4 (zero when sent; kept as received).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub resv: u8,
}

fn is_zero(v: &u8) -> bool {
    *v == 0
}

/// The extension-header values of one packet; which ones are present follows from the opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ExtHeaders {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reth: Option<Reth>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aeth: Option<Aeth>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub immdt: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ieth: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic_eth: Option<AtomicEth>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic_ack_eth: Option<AtomicAckEth>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deth: Option<Deth>,
}

/// The AETH syndrome decoded (roce-wire.md, "AETH syndrome").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syndrome {
    /// ACK with a credit count code (31 = unlimited).
    Ack { credit_code: u8 },
    /// RNR NAK with a timer code.
    RnrNak { timer: u8 },
    /// NAK with its code (0 PSN sequence error ... 4 invalid RD request).
    Nak { code: u8 },
    /// Type 0b10, reserved.
    Reserved(u8),
}

/// Receive WQE credits for each credit code 0..=30; 31 means unlimited.
pub const CREDITS: [u32; 31] = [
    0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536,
    2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
];

impl Syndrome {
    pub fn decode(s: u8) -> Syndrome {
        let low = s & 0x1F;
        match (s >> 5) & 3 {
            0 => Syndrome::Ack { credit_code: low },
            1 => Syndrome::RnrNak { timer: low },
            3 => Syndrome::Nak { code: low },
            _ => Syndrome::Reserved(s),
        }
    }
}

impl fmt::Display for Syndrome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Syndrome::Ack { credit_code: 31 } => write!(f, "ACK credits=unlimited"),
            Syndrome::Ack { credit_code } => {
                write!(f, "ACK credits={}", CREDITS[usize::from(credit_code)])
            }
            Syndrome::RnrNak { timer } => write!(f, "RNR_NAK timer={timer}"),
            Syndrome::Nak { code } => {
                let what = match code {
                    0 => "PSN_SEQUENCE_ERROR",
                    1 => "INVALID_REQUEST",
                    2 => "REMOTE_ACCESS_ERROR",
                    3 => "REMOTE_OPERATIONAL_ERROR",
                    4 => "INVALID_RD_REQUEST",
                    _ => "RESERVED",
                };
                write!(f, "NAK {what}")
            }
            Syndrome::Reserved(s) => write!(f, "reserved syndrome {s:#04x}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syndromes_from_roce_wire() {
        assert_eq!(Syndrome::decode(0x1F).to_string(), "ACK credits=unlimited");
        assert_eq!(Syndrome::decode(0x0D).to_string(), "ACK credits=96");
        assert_eq!(Syndrome::decode(0x60).to_string(), "NAK PSN_SEQUENCE_ERROR");
        assert_eq!(Syndrome::decode(0x61).to_string(), "NAK INVALID_REQUEST");
        assert_eq!(
            Syndrome::decode(0x62).to_string(),
            "NAK REMOTE_ACCESS_ERROR"
        );
        assert_eq!(
            Syndrome::decode(0x63).to_string(),
            "NAK REMOTE_OPERATIONAL_ERROR"
        );
        assert_eq!(Syndrome::decode(0x2E), Syndrome::RnrNak { timer: 14 });
        assert_eq!(Syndrome::decode(0x40), Syndrome::Reserved(0x40));
    }

    #[test]
    fn deth_reserved_byte_is_its_own_field() {
        let b = [0x11, 0x22, 0x33, 0x44, 0xEE, 0x00, 0x00, 0x01];
        let d = DethHeader::new_checked(&b[..], 0).unwrap();
        assert_eq!((d.qkey(), d.resv(), d.src_qp()), (0x1122_3344, 0xEE, 1));
    }
}
