//! The completer's decision about a response, one step at a time: a pure function of the
//! response, the completer state, the requester's send point and the oldest unacknowledged
//! request. A coalesced ACK completes several requests, so a response is decided in steps:
//! each step either completes the oldest request ([`Verdict::Complete`]; the caller removes it
//! and steps again with the next one) or is the response's last, saying what it does to the
//! completer state, the ACK timer, the requester (go back) and the send queue (fail). The
//! model's completer acts on the steps, and the hardware's `comp_check` computes the same
//! [`Step`] from the same inputs.

use rnic_wire::ext::Syndrome;

use crate::ops;
use crate::psn;
use crate::verbs::WcStatus;

/// What a response does, as far as one step sees. The discriminants are the hardware's
/// verdict codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The oldest request is a SEND or WRITE wholly before the response's PSN: complete it
    /// and step again.
    Complete = 0,
    /// An ACK: the oldest unacknowledged PSN moves up to it.
    Ack = 1,
    /// An ACK beyond a READ or atomic that has no response yet: retry.
    ImpliedNak = 2,
    /// A sequence-error NAK: retry from its PSN.
    NakSeq = 3,
    /// An RNR NAK: wait for its timer, then resend.
    Rnr = 4,
    /// A NAK for an invalid request, a remote access or operational error: the oldest request
    /// fails.
    NakErr = 5,
    /// Nothing to act on: a reserved syndrome, a response to no outstanding request, a
    /// duplicate, an opcode that is not a response.
    Stale = 6,
    /// The READ response expected next: its payload goes to the request's buffer at
    /// [`Step::offset`]; the last completes the READ.
    ReadData = 7,
    /// A READ response beyond the one expected (one was lost): retry.
    ReadGap = 8,
    /// A READ response with the wrong opcode or length for its place in the READ: the READ
    /// fails.
    BadResp = 9,
    /// The atomic's acknowledgement: its original value goes to the request's buffer and the
    /// atomic completes.
    AtomicData = 10,
}

impl Verdict {
    pub const ALL: [Verdict; 11] = [
        Verdict::Complete,
        Verdict::Ack,
        Verdict::ImpliedNak,
        Verdict::NakSeq,
        Verdict::Rnr,
        Verdict::NakErr,
        Verdict::Stale,
        Verdict::ReadData,
        Verdict::ReadGap,
        Verdict::BadResp,
        Verdict::AtomicData,
    ];

    /// The hardware's verdict code.
    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(c: u8) -> Option<Verdict> {
        Verdict::ALL.get(usize::from(c)).copied()
    }
}

/// What the ACK timer does after the step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Timer {
    /// Left as it is.
    Keep = 0,
    /// Restarted: something sent is still unacknowledged after progress.
    Arm = 1,
    /// Stopped: nothing is outstanding, or an RNR wait replaces it.
    Stop = 2,
}

/// The kind of the oldest request, as the completer tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    SendWrite = 0,
    Read = 1,
    Atomic = 2,
}

/// The oldest request in the send queue, once the requester has sent (part of) it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Front {
    pub kind: Kind,
    pub first_psn: u32,
    /// PSNs it takes (a READ: one per response packet); at least 1.
    pub npkts: u32,
    /// Its length in bytes.
    pub len: u32,
}

impl Front {
    pub fn last_psn(&self) -> u32 {
        psn::add(self.first_psn, self.npkts.saturating_sub(1))
    }
}

/// The completer state a step reads and writes (the completer's row).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CompRow {
    /// The oldest PSN not yet acknowledged.
    pub psn: u32,
    pub retry_cnt: u8,
    pub rnr_retry: u8,
    /// A NAK- or implied-NAK-started retry is under way.
    pub started_retry: bool,
}

/// Everything one step reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepInput {
    /// The response's BTH opcode and PSN, its AETH syndrome ([`ops::AETH_ACK`] when it has
    /// no AETH) and payload length.
    pub opcode: u8,
    pub psn: u32,
    pub syndrome: u8,
    pub payload_len: u32,
    /// The path MTU in bytes.
    pub mtu: u32,
    /// The QP's RETRY_CNT and RNR_RETRY attributes (progress restores the counters to them).
    pub attr_retry_cnt: u8,
    pub attr_rnr_retry: u8,
    pub row: CompRow,
    /// One past the highest PSN the requester has sent.
    pub sent_upto: u32,
    /// The oldest request, if it has been sent.
    pub front: Option<Front>,
    /// An earlier step of this response completed a request.
    pub completed: bool,
}

/// What one step decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub verdict: Verdict,
    /// The completer state after the step (for `ReadData` and `AtomicData`, once the payload
    /// is placed; a refused placement fails the request instead).
    pub row: CompRow,
    /// The oldest request completes (successfully) after this step.
    pub complete: bool,
    /// The oldest request fails with this status; the QP goes to ERR.
    pub fail: Option<WcStatus>,
    /// The requester goes back to the oldest unacknowledged PSN.
    pub rewind: bool,
    /// A retry was asked for while one is under way: ignored, and counted.
    pub suppressed: bool,
    /// An RNR wait starts, for the syndrome's timer code.
    pub rnr_wait: bool,
    pub timer: Timer,
    /// `ReadData`: the payload's byte offset in the READ's buffer.
    pub offset: u32,
}

fn is_read_response(op: u8) -> bool {
    (ops::RC_READ_RESPONSE_FIRST..=ops::RC_READ_RESPONSE_ONLY).contains(&op)
}

/// Progress restores the retry counters to the QP's attributes and ends a retry under way.
fn restore(i: &StepInput, row: &mut CompRow) {
    row.retry_cnt = i.attr_retry_cnt;
    row.rnr_retry = i.attr_rnr_retry;
    row.started_retry = false;
}

/// The PSN below which the response acknowledges SENDs and WRITEs, or `None` when it
/// acknowledges nothing (a reserved syndrome, an opcode that is not a response).
fn covers_upto(i: &StepInput) -> Option<u32> {
    match i.opcode {
        ops::RC_ACKNOWLEDGE => match Syndrome::decode(i.syndrome) {
            Syndrome::Ack { .. } => Some(psn::add(i.psn, 1)),
            Syndrome::Reserved(_) => None,
            Syndrome::RnrNak { .. } | Syndrome::Nak { .. } => Some(i.psn),
        },
        ops::RC_ATOMIC_ACKNOWLEDGE => Some(i.psn),
        op if is_read_response(op) => Some(i.psn),
        _ => None,
    }
}

/// One step of the completer on a response.
pub fn step(i: &StepInput) -> Step {
    let mut s = Step {
        verdict: Verdict::Stale,
        row: i.row,
        complete: false,
        fail: None,
        rewind: false,
        suppressed: false,
        rnr_wait: false,
        timer: Timer::Keep,
        offset: 0,
    };
    let Some(upto) = covers_upto(i) else {
        return s;
    };
    if let Some(f) = i.front {
        if f.kind == Kind::SendWrite && psn::lt(f.last_psn(), upto) {
            s.verdict = Verdict::Complete;
            s.complete = true;
            restore(i, &mut s.row);
            return s;
        }
    }
    // The oldest unacknowledged PSN moves up to the response, not past a READ or atomic
    // still waiting for its own.
    let blocked = i.front.filter(|f| f.kind != Kind::SendWrite);
    let target = match blocked {
        Some(f) if psn::lt(f.first_psn, upto) => {
            if psn::lt(i.row.psn, f.first_psn) {
                f.first_psn
            } else {
                i.row.psn
            }
        }
        _ => upto,
    };
    if psn::lt(s.row.psn, target) {
        s.row.psn = target;
    }
    let p = i.psn;
    // A retry (NAK, implied NAK): at most one under way; retry_cnt runs out into an error.
    let retry = |s: &mut Step| {
        if s.row.started_retry {
            s.suppressed = true;
        } else if s.row.retry_cnt == 0 {
            s.fail = Some(WcStatus::RetryExcErr);
        } else {
            if s.row.retry_cnt != 7 {
                s.row.retry_cnt -= 1;
            }
            if psn::lt(s.row.psn, i.sent_upto) {
                s.row.started_retry = true;
                s.rewind = true;
            }
        }
    };
    match i.opcode {
        ops::RC_ACKNOWLEDGE => match Syndrome::decode(i.syndrome) {
            Syndrome::Ack { .. } => {
                s.verdict = Verdict::Ack;
                if psn::lt(i.row.psn, s.row.psn) {
                    restore(i, &mut s.row);
                }
                if blocked.is_some_and(|f| psn::lt(f.last_psn(), p)) {
                    s.verdict = Verdict::ImpliedNak;
                    retry(&mut s);
                }
            }
            Syndrome::RnrNak { .. } => {
                s.verdict = Verdict::Rnr;
                if s.row.rnr_retry == 0 {
                    s.fail = Some(WcStatus::RnrRetryExcErr);
                } else {
                    if s.row.rnr_retry != 7 {
                        s.row.rnr_retry -= 1;
                    }
                    s.rnr_wait = true;
                    s.timer = Timer::Stop;
                }
                return s;
            }
            // Covers nothing: returned above.
            Syndrome::Reserved(_) => return s,
            Syndrome::Nak { code } => {
                if code == 0 {
                    s.verdict = Verdict::NakSeq;
                    retry(&mut s);
                } else {
                    s.verdict = Verdict::NakErr;
                    if i.front.is_some() {
                        s.fail = Some(match code {
                            1 => WcStatus::RemInvReqErr,
                            2 => WcStatus::RemAccessErr,
                            3 => WcStatus::RemOpErr,
                            _ => WcStatus::BadRespErr,
                        });
                    }
                    return s;
                }
            }
        },
        ops::RC_ATOMIC_ACKNOWLEDGE => {
            if i.front
                .is_some_and(|f| f.kind == Kind::Atomic && f.first_psn == p)
            {
                s.verdict = Verdict::AtomicData;
                s.row.psn = psn::add(p, 1);
                s.complete = true;
                restore(i, &mut s.row);
            }
        }
        _ => read_response(i, &mut s, retry),
    }
    if s.fail.is_none() && (s.row.psn != i.row.psn || i.completed || s.complete) {
        s.timer = if psn::lt(s.row.psn, i.sent_upto) {
            Timer::Arm
        } else {
            Timer::Stop
        };
    }
    s
}

fn read_response(i: &StepInput, s: &mut Step, retry: impl Fn(&mut Step)) {
    let p = i.psn;
    let Some(f) = i.front else {
        return;
    };
    let last = f.last_psn();
    if f.kind != Kind::Read || psn::lt(p, f.first_psn) || psn::lt(last, p) {
        return;
    }
    let d = psn::diff(p, s.row.psn);
    if d < 0 {
        return;
    }
    if d > 0 {
        s.verdict = Verdict::ReadGap;
        retry(s);
        return;
    }
    let k = psn::diff(p, f.first_psn) as u32;
    let is_last = p == last;
    // Below the READ's length when its packet count fits it; modulo 2^32 as in hardware.
    let offset = k.wrapping_mul(i.mtu);
    let expect_len = if is_last {
        f.len.wrapping_sub(offset)
    } else {
        i.mtu
    };
    let op_ok = if is_last {
        matches!(
            i.opcode,
            ops::RC_READ_RESPONSE_LAST | ops::RC_READ_RESPONSE_ONLY
        )
    } else {
        matches!(
            i.opcode,
            ops::RC_READ_RESPONSE_FIRST | ops::RC_READ_RESPONSE_MIDDLE
        )
    };
    if !op_ok || i.payload_len != expect_len {
        s.verdict = Verdict::BadResp;
        s.fail = Some(WcStatus::BadRespErr);
        return;
    }
    s.verdict = Verdict::ReadData;
    s.offset = offset;
    s.row.psn = psn::add(p, 1);
    restore(i, &mut s.row);
    s.complete = is_last;
}
