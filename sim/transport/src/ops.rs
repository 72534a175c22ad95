//! The BTH opcodes the engines send and test for (values from the wire model's opcode table).

pub const RC_SEND_FIRST: u8 = 0x00;
pub const RC_SEND_MIDDLE: u8 = 0x01;
pub const RC_SEND_LAST: u8 = 0x02;
pub const RC_SEND_LAST_IMM: u8 = 0x03;
pub const RC_SEND_ONLY: u8 = 0x04;
pub const RC_SEND_ONLY_IMM: u8 = 0x05;
pub const RC_WRITE_FIRST: u8 = 0x06;
pub const RC_WRITE_MIDDLE: u8 = 0x07;
pub const RC_WRITE_LAST: u8 = 0x08;
pub const RC_WRITE_LAST_IMM: u8 = 0x09;
pub const RC_WRITE_ONLY: u8 = 0x0A;
pub const RC_WRITE_ONLY_IMM: u8 = 0x0B;
pub const RC_READ_REQUEST: u8 = 0x0C;
pub const RC_READ_RESPONSE_FIRST: u8 = 0x0D;
pub const RC_READ_RESPONSE_MIDDLE: u8 = 0x0E;
pub const RC_READ_RESPONSE_LAST: u8 = 0x0F;
pub const RC_READ_RESPONSE_ONLY: u8 = 0x10;
pub const RC_ACKNOWLEDGE: u8 = 0x11;
pub const RC_ATOMIC_ACKNOWLEDGE: u8 = 0x12;
pub const RC_COMPARE_SWAP: u8 = 0x13;
pub const RC_FETCH_ADD: u8 = 0x14;
pub const RC_SEND_LAST_INV: u8 = 0x16;
pub const RC_SEND_ONLY_INV: u8 = 0x17;
pub const UD_SEND_ONLY: u8 = 0x64;
pub const UD_SEND_ONLY_IMM: u8 = 0x65;

/// AETH syndromes.
pub const AETH_ACK: u8 = 0x1F;
pub const AETH_RNR_NAK: u8 = 0x20;
pub const AETH_NAK_SEQ: u8 = 0x60;
pub const AETH_NAK_INV_REQ: u8 = 0x61;
pub const AETH_NAK_REM_ACCESS: u8 = 0x62;
pub const AETH_NAK_REM_OP: u8 = 0x63;

/// Where a packet sits in its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pos {
    First,
    Middle,
    Last,
    Only,
}

/// The SEND or WRITE opcode of a packet at `pos`.
pub fn send_write_opcode(write: bool, pos: Pos, imm: bool) -> u8 {
    match (write, pos, imm) {
        (false, Pos::First, _) => RC_SEND_FIRST,
        (false, Pos::Middle, _) => RC_SEND_MIDDLE,
        (false, Pos::Last, false) => RC_SEND_LAST,
        (false, Pos::Last, true) => RC_SEND_LAST_IMM,
        (false, Pos::Only, false) => RC_SEND_ONLY,
        (false, Pos::Only, true) => RC_SEND_ONLY_IMM,
        (true, Pos::First, _) => RC_WRITE_FIRST,
        (true, Pos::Middle, _) => RC_WRITE_MIDDLE,
        (true, Pos::Last, false) => RC_WRITE_LAST,
        (true, Pos::Last, true) => RC_WRITE_LAST_IMM,
        (true, Pos::Only, false) => RC_WRITE_ONLY,
        (true, Pos::Only, true) => RC_WRITE_ONLY_IMM,
    }
}

/// The position of an RC SEND or WRITE request opcode; `None` for the others.
pub fn position(op: u8) -> Option<(bool, Pos)> {
    Some(match op {
        RC_SEND_FIRST => (false, Pos::First),
        RC_SEND_MIDDLE => (false, Pos::Middle),
        RC_SEND_LAST | RC_SEND_LAST_IMM | RC_SEND_LAST_INV => (false, Pos::Last),
        RC_SEND_ONLY | RC_SEND_ONLY_IMM | RC_SEND_ONLY_INV => (false, Pos::Only),
        RC_WRITE_FIRST => (true, Pos::First),
        RC_WRITE_MIDDLE => (true, Pos::Middle),
        RC_WRITE_LAST | RC_WRITE_LAST_IMM => (true, Pos::Last),
        RC_WRITE_ONLY | RC_WRITE_ONLY_IMM => (true, Pos::Only),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes_agree_with_the_wire_table() {
        for (code, name) in [
            (RC_SEND_LAST_IMM, "RC_SEND_LAST_WITH_IMMEDIATE"),
            (RC_WRITE_ONLY_IMM, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE"),
            (RC_READ_RESPONSE_ONLY, "RC_RDMA_READ_RESPONSE_ONLY"),
            (RC_ATOMIC_ACKNOWLEDGE, "RC_ATOMIC_ACKNOWLEDGE"),
            (RC_FETCH_ADD, "RC_FETCH_ADD"),
            (RC_SEND_ONLY_INV, "RC_SEND_ONLY_WITH_INVALIDATE"),
            (UD_SEND_ONLY_IMM, "UD_SEND_ONLY_WITH_IMMEDIATE"),
        ] {
            assert_eq!(rnic_wire::opcode::lookup(code).unwrap().to_string(), name);
        }
    }
}
