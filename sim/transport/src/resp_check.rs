//! The responder's decision about an RC request, before anything is executed: rxe's checks in
//! rc-transport.md's order (PSN, opcode sequence, operation allowed on the QP, resources, RNR,
//! lengths, R_Key, the RETH's length against the packet, atomic alignment, the open WRITE's
//! residual). A pure function of the request, the QP's attributes and responder state and the
//! MR table; the model's responder acts on its answer, and the hardware's `resp_check`
//! computes the same [`Check`] from the same inputs.

use rnic_wire::ext::{AtomicEth, Reth};

use crate::mr::{AccessError, MrTable, Pd};
use crate::ops::{self, Pos};
use crate::psn;
use crate::qp::OpenMsg;
use crate::verbs::Access;

/// What the responder decides, with the reason when it refuses. The discriminants are the
/// hardware's verdict codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Check {
    /// In sequence and allowed: execute.
    Execute = 0,
    /// Ahead of ePSN, the first of its gap: one sequence-error NAK.
    NakSeq = 1,
    /// Ahead of ePSN, the gap already NAKed: dropped.
    SeqDrop = 2,
    /// Behind ePSN: a duplicate.
    Duplicate = 3,
    /// A SEND or WRITE with immediate and no receive WQE: RNR NAK.
    Rnr = 4,
    /// The opcode does not continue the open message (or opens one inside another).
    BadSequence = 5,
    /// The QP does not allow the operation (its access flags).
    QpAccess = 6,
    /// A READ or atomic on a QP that accepts none outstanding.
    NoResources = 7,
    /// The payload length does not fit the opcode and the path MTU, or the RETH's length
    /// exceeds 2^31.
    BadLength = 8,
    /// R_Key: no region at the key's index, or another tag.
    BadKey = 9,
    /// R_Key: the region is in another protection domain.
    WrongPd = 10,
    /// R_Key: the region does not grant the access.
    NoRight = 11,
    /// R_Key: the range is not inside the region.
    OutOfBounds = 12,
    /// A WRITE's first packet disagrees with the length its RETH announces.
    LengthMismatch = 13,
    /// An atomic's address is not 8-byte aligned.
    Unaligned = 14,
    /// A WRITE continuation carries more than the open WRITE has left, or its last packet less.
    Residual = 15,
}

impl Check {
    pub const ALL: [Check; 16] = [
        Check::Execute,
        Check::NakSeq,
        Check::SeqDrop,
        Check::Duplicate,
        Check::Rnr,
        Check::BadSequence,
        Check::QpAccess,
        Check::NoResources,
        Check::BadLength,
        Check::BadKey,
        Check::WrongPd,
        Check::NoRight,
        Check::OutOfBounds,
        Check::LengthMismatch,
        Check::Unaligned,
        Check::Residual,
    ];

    /// The hardware's verdict code.
    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(c: u8) -> Option<Check> {
        Check::ALL.get(usize::from(c)).copied()
    }

    /// A refusal with a remote access error NAK.
    pub fn is_access_error(self) -> bool {
        matches!(
            self,
            Check::BadKey | Check::WrongPd | Check::NoRight | Check::OutOfBounds
        )
    }

    /// A refusal with an invalid request NAK that moves the QP to ERR.
    pub fn is_invalid_request(self) -> bool {
        matches!(
            self,
            Check::BadSequence
                | Check::QpAccess
                | Check::NoResources
                | Check::BadLength
                | Check::LengthMismatch
                | Check::Unaligned
                | Check::Residual
        )
    }

    fn of_access_error(e: AccessError) -> Check {
        match e {
            AccessError::BadKey(_) => Check::BadKey,
            AccessError::WrongPd { .. } => Check::WrongPd,
            AccessError::NoRight { .. } => Check::NoRight,
            AccessError::OutOfBounds { .. } => Check::OutOfBounds,
        }
    }
}

/// Everything the decision reads.
#[derive(Clone, Debug)]
pub struct CheckInput {
    pub opcode: u8,
    pub psn: u32,
    /// Payload bytes (without pad).
    pub payload_len: usize,
    pub reth: Option<Reth>,
    pub atomic: Option<AtomicEth>,
    /// The responder state: expected PSN, the gap's NAK sent, the open message.
    pub epsn: u32,
    pub sent_nak: bool,
    pub open: Option<OpenMsg>,
    /// A receive WQE is in use or posted.
    pub wqe_ready: bool,
    /// The QP's attributes.
    pub access: Access,
    pub max_dest_rd_atomic: u8,
    pub mtu: u32,
    pub pd: Pd,
}

/// The access right an RC request opcode needs of the QP and the region.
pub fn need_of(opcode: u8) -> Access {
    if matches!(ops::position(opcode), Some((true, _))) {
        Access::REMOTE_WRITE
    } else if opcode == ops::RC_READ_REQUEST {
        Access::REMOTE_READ
    } else if matches!(opcode, ops::RC_COMPARE_SWAP | ops::RC_FETCH_ADD) {
        Access::REMOTE_ATOMIC
    } else {
        Access::NONE
    }
}

/// The responder's decision about an RC request (see the module doc for the order).
pub fn check(c: &CheckInput, mrs: &MrTable) -> Check {
    let d = psn::diff(c.psn, c.epsn);
    if d > 0 {
        return if c.sent_nak {
            Check::SeqDrop
        } else {
            Check::NakSeq
        };
    }
    if d < 0 {
        return Check::Duplicate;
    }
    let op = c.opcode;
    let pos = ops::position(op);
    let is_read = op == ops::RC_READ_REQUEST;
    let is_atomic = matches!(op, ops::RC_COMPARE_SWAP | ops::RC_FETCH_ADD);

    let seq_ok = matches!(
        (&c.open, pos),
        (Some(OpenMsg::Send), Some((false, Pos::Middle | Pos::Last)))
            | (
                Some(OpenMsg::Write { .. }),
                Some((true, Pos::Middle | Pos::Last))
            )
            | (None, Some((_, Pos::First | Pos::Only)))
            | (None, None)
    );
    if !seq_ok {
        return Check::BadSequence;
    }
    let need = need_of(op);
    let write = need == Access::REMOTE_WRITE;
    if !c.access.contains(need) {
        return Check::QpAccess;
    }
    if (is_read || is_atomic) && c.max_dest_rd_atomic == 0 {
        return Check::NoResources;
    }
    let needs_wqe = match pos {
        Some((false, Pos::First | Pos::Only)) => true,
        Some((true, Pos::Last | Pos::Only)) => {
            matches!(op, ops::RC_WRITE_LAST_IMM | ops::RC_WRITE_ONLY_IMM)
        }
        _ => false,
    };
    if needs_wqe && !c.wqe_ready {
        return Check::Rnr;
    }
    let mtu = c.mtu as usize;
    let len = c.payload_len;
    let len_ok = match pos {
        Some((_, Pos::Only)) => len <= mtu,
        Some((_, Pos::First | Pos::Middle)) => len == mtu,
        Some((_, Pos::Last)) => (1..=mtu).contains(&len),
        None => true,
    } && c.reth.is_none_or(|r| r.dma_len <= 1 << 31);
    if !len_ok {
        return Check::BadLength;
    }
    if let Some(r) = c.reth {
        if r.dma_len > 0 {
            if let Err(e) = mrs.check(r.rkey, c.pd, r.va, r.dma_len.into(), need) {
                return Check::of_access_error(e);
            }
        }
        if write {
            let fits = match pos {
                Some((_, Pos::Only)) => len == r.dma_len as usize,
                _ => (r.dma_len as usize) > mtu,
            };
            if !fits {
                return Check::LengthMismatch;
            }
        }
    }
    if let Some(a) = c.atomic {
        if a.va & 7 != 0 {
            return Check::Unaligned;
        }
        if let Err(e) = mrs.check(a.rkey, c.pd, a.va, 8, need) {
            return Check::of_access_error(e);
        }
    }
    if let (Some(OpenMsg::Write { resid, .. }), Some((true, p))) = (&c.open, pos) {
        let last = p == Pos::Last;
        if len as u64 > u64::from(*resid) || (last && len as u32 != *resid) {
            return Check::Residual;
        }
    }
    Check::Execute
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for (i, c) in Check::ALL.iter().enumerate() {
            assert_eq!(usize::from(c.code()), i);
            assert_eq!(Check::from_code(c.code()), Some(*c));
        }
        assert_eq!(Check::from_code(16), None);
    }
}
