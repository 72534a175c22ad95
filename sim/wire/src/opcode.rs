//! The opcode table: for every RC, UC and UD opcode (and the CNP), its name and the headers
//! that follow the BTH, in order.

use std::fmt;

/// The transport an opcode belongs to (its upper three bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transport {
    Rc,
    Uc,
    Ud,
    /// Congestion notification packet (opcode 0x81, RoCEv2 Annex A17.9.3).
    Cnp,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Rc => "RC",
            Transport::Uc => "UC",
            Transport::Ud => "UD",
            Transport::Cnp => "CNP",
        }
    }
}

/// A header that can follow the BTH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ext {
    Reth,
    Aeth,
    ImmDt,
    Ieth,
    AtomicEth,
    AtomicAckEth,
    Deth,
    /// The 16 reserved bytes of a CNP.
    Cnp,
}

impl Ext {
    /// Length in bytes.
    pub fn wire_len(self) -> usize {
        use crate::ext::*;
        match self {
            Ext::Reth => RETH_LAYOUT.len,
            Ext::Aeth => AETH_LAYOUT.len,
            Ext::ImmDt => IMMDT_LAYOUT.len,
            Ext::Ieth => IETH_LAYOUT.len,
            Ext::AtomicEth => ATOMIC_ETH_LAYOUT.len,
            Ext::AtomicAckEth => ATOMIC_ACK_ETH_LAYOUT.len,
            Ext::Deth => DETH_LAYOUT.len,
            Ext::Cnp => CNP_LAYOUT.len,
        }
    }

    /// The error layer of this header.
    pub fn layer(self) -> crate::Layer {
        use crate::Layer;
        match self {
            Ext::Reth => Layer::Reth,
            Ext::Aeth => Layer::Aeth,
            Ext::ImmDt => Layer::ImmDt,
            Ext::Ieth => Layer::Ieth,
            Ext::AtomicEth => Layer::AtomicEth,
            Ext::AtomicAckEth => Layer::AtomicAckEth,
            Ext::Deth => Layer::Deth,
            Ext::Cnp => Layer::Cnp,
        }
    }
}

/// One row of the opcode table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpcodeInfo {
    pub code: u8,
    pub transport: Transport,
    /// Operation name without the transport, e.g. `RDMA_WRITE_FIRST`.
    pub name: &'static str,
    /// Headers after the BTH, in wire order.
    pub headers: &'static [Ext],
    /// Whether a payload may follow the headers.
    pub payload: bool,
}

impl OpcodeInfo {
    /// Total length of the headers after the BTH.
    pub fn ext_len(&self) -> usize {
        self.headers.iter().map(|h| h.wire_len()).sum()
    }

    pub fn has(&self, h: Ext) -> bool {
        self.headers.contains(&h)
    }
}

impl fmt::Display for OpcodeInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.transport {
            Transport::Cnp => f.write_str("CNP"),
            t => write!(f, "{}_{}", t.name(), self.name),
        }
    }
}

use Ext::*;

/// Operations shared by RC and UC, by low five bits: (low bits, name, headers, payload).
type Row = (u8, &'static str, &'static [Ext], bool);

const SEND_WRITE: [Row; 12] = [
    (0x00, "SEND_FIRST", &[], true),
    (0x01, "SEND_MIDDLE", &[], true),
    (0x02, "SEND_LAST", &[], true),
    (0x03, "SEND_LAST_WITH_IMMEDIATE", &[ImmDt], true),
    (0x04, "SEND_ONLY", &[], true),
    (0x05, "SEND_ONLY_WITH_IMMEDIATE", &[ImmDt], true),
    (0x06, "RDMA_WRITE_FIRST", &[Reth], true),
    (0x07, "RDMA_WRITE_MIDDLE", &[], true),
    (0x08, "RDMA_WRITE_LAST", &[], true),
    (0x09, "RDMA_WRITE_LAST_WITH_IMMEDIATE", &[ImmDt], true),
    (0x0A, "RDMA_WRITE_ONLY", &[Reth], true),
    (0x0B, "RDMA_WRITE_ONLY_WITH_IMMEDIATE", &[Reth, ImmDt], true),
];

const RC_ONLY: [Row; 11] = [
    (0x0C, "RDMA_READ_REQUEST", &[Reth], false),
    (0x0D, "RDMA_READ_RESPONSE_FIRST", &[Aeth], true),
    (0x0E, "RDMA_READ_RESPONSE_MIDDLE", &[], true),
    (0x0F, "RDMA_READ_RESPONSE_LAST", &[Aeth], true),
    (0x10, "RDMA_READ_RESPONSE_ONLY", &[Aeth], true),
    (0x11, "ACKNOWLEDGE", &[Aeth], false),
    (0x12, "ATOMIC_ACKNOWLEDGE", &[Aeth, AtomicAckEth], false),
    (0x13, "COMPARE_SWAP", &[AtomicEth], false),
    (0x14, "FETCH_ADD", &[AtomicEth], false),
    (0x16, "SEND_LAST_WITH_INVALIDATE", &[Ieth], true),
    (0x17, "SEND_ONLY_WITH_INVALIDATE", &[Ieth], true),
];

const fn row(base: u8, t: Transport, r: Row) -> OpcodeInfo {
    OpcodeInfo {
        code: base | r.0,
        transport: t,
        name: r.1,
        headers: r.2,
        payload: r.3,
    }
}

const fn build_table() -> [OpcodeInfo; 38] {
    let filler = row(0, Transport::Rc, SEND_WRITE[0]);
    let mut t = [filler; 38];
    let mut n = 0;
    let mut i = 0;
    while i < SEND_WRITE.len() {
        t[n] = row(0x00, Transport::Rc, SEND_WRITE[i]);
        n += 1;
        i += 1;
    }
    i = 0;
    while i < RC_ONLY.len() {
        t[n] = row(0x00, Transport::Rc, RC_ONLY[i]);
        n += 1;
        i += 1;
    }
    i = 0;
    while i < SEND_WRITE.len() {
        t[n] = row(0x20, Transport::Uc, SEND_WRITE[i]);
        n += 1;
        i += 1;
    }
    t[n] = row(0x60, Transport::Ud, (0x04, "SEND_ONLY", &[Deth], true));
    t[n + 1] = row(
        0x60,
        Transport::Ud,
        (0x05, "SEND_ONLY_WITH_IMMEDIATE", &[Deth, ImmDt], true),
    );
    t[n + 2] = OpcodeInfo {
        code: CNP_OPCODE,
        transport: Transport::Cnp,
        name: "CNP",
        headers: &[Cnp],
        payload: false,
    };
    t
}

/// The CNP opcode.
pub const CNP_OPCODE: u8 = 0x81;

/// Every opcode this model knows, in ascending order.
pub static OPCODES: [OpcodeInfo; 38] = build_table();

/// Looks an opcode up; `None` for an opcode no transport here defines.
pub fn lookup(code: u8) -> Option<&'static OpcodeInfo> {
    OPCODES.iter().find(|o| o.code == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_the_spec_rows() {
        let names: Vec<String> = OPCODES.iter().map(|o| o.to_string()).collect();
        assert_eq!(names.len(), 38);
        assert_eq!(lookup(0x00).unwrap().to_string(), "RC_SEND_FIRST");
        assert_eq!(lookup(0x0B).unwrap().headers, &[Reth, ImmDt]);
        assert!(!lookup(0x0C).unwrap().payload);
        assert_eq!(lookup(0x12).unwrap().headers, &[Aeth, AtomicAckEth]);
        assert_eq!(lookup(0x17).unwrap().headers, &[Ieth]);
        assert_eq!(lookup(0x2A).unwrap().to_string(), "UC_RDMA_WRITE_ONLY");
        assert_eq!(lookup(0x65).unwrap().headers, &[Deth, ImmDt]);
        assert_eq!(lookup(0x81).unwrap().ext_len(), 16);
        assert_eq!(lookup(0x13).unwrap().ext_len(), 28);
        // Not defined: RC 0x15, UC READ, UD SEND_FIRST, everything above 0x81.
        for op in [0x15, 0x18, 0x2C, 0x60, 0x66, 0x80, 0x82, 0xFF] {
            assert!(lookup(op).is_none(), "{op:#x}");
        }
        let mut sorted = OPCODES.map(|o| o.code).to_vec();
        sorted.dedup();
        assert!(sorted.windows(2).all(|w| w[0] < w[1]));
    }
}
