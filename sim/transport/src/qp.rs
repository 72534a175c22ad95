//! Queue pairs: attributes, the state machine with `ibv_modify_qp`'s rules (which attributes
//! each transition requires and allows), and the per-engine state rows, one per writer as the
//! hardware will hold them: requester, completer, responder.

use std::collections::VecDeque;
use std::fmt;

use crate::mr::Pd;
use crate::verbs::*;

/// A verbs call refused, with the reason ibverbs users would want to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerbsError {
    pub call: &'static str,
    pub reason: String,
}

impl VerbsError {
    pub fn new(call: &'static str, reason: impl Into<String>) -> VerbsError {
        VerbsError {
            call,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for VerbsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.call, self.reason)
    }
}

impl std::error::Error for VerbsError {}

/// A send queue entry and its progress.
#[derive(Clone, Debug)]
pub struct SendWqe {
    pub wr: SendWr,
    pub len: u32,
    /// Packets (PSNs) the operation takes: a READ takes one per response packet.
    pub npkts: u32,
    /// PSN of its first packet, once the requester has started it.
    pub first_psn: Option<u32>,
    pub signaled: bool,
    /// READ responses placed so far (bytes), atomic result received.
    pub done: bool,
}

impl SendWqe {
    pub fn last_psn(&self) -> Option<u32> {
        self.first_psn
            .map(|p| crate::psn::add(p, self.npkts.saturating_sub(1)))
    }
}

/// Requester state (the TX engine's row).
#[derive(Clone, Debug, Default)]
pub struct ReqState {
    /// Next PSN to assign to a new operation.
    pub next_psn: u32,
    /// Index in the send queue of the operation being sent, and its next packet.
    pub cur: usize,
    pub pkt: u32,
    /// Packets sent since the last AckReq.
    pub noack_pkts: u32,
    /// One past the highest PSN sent so far: a packet below it is a retransmission.
    pub sent_upto: u32,
}

/// Completer state (the ACK path's row).
#[derive(Clone, Debug, Default)]
pub struct CompState {
    /// Oldest PSN not yet acknowledged.
    pub psn: u32,
    pub retry_cnt: u8,
    pub rnr_retry: u8,
    /// A NAK- or implied-NAK-started retry is under way (rxe's `started_retry`).
    pub started_retry: bool,
    /// ACK timer deadline, ns.
    pub timer: Option<u64>,
    /// RNR wait: no sending until then, then resend from `psn`.
    pub rnr_until: Option<u64>,
}

/// A saved READ or atomic, for answering duplicates (the responder's resources).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resource {
    Read {
        first_psn: u32,
        last_psn: u32,
        va: u64,
        len: u32,
        rkey: u32,
    },
    Atomic {
        psn: u32,
        orig: u64,
    },
}

/// The message the responder is in the middle of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenMsg {
    Send,
    Write { rkey: u32, va: u64, resid: u32 },
}

/// A receive WQE being filled.
#[derive(Clone, Debug)]
pub struct RecvInProgress {
    pub wr: RecvWr,
    pub offset: u32,
}

/// Responder state (the RX engine's row).
#[derive(Clone, Debug, Default)]
pub struct RespState {
    pub epsn: u32,
    pub msn: u32,
    pub open: Option<OpenMsg>,
    /// The one sequence-error NAK for the current gap has been sent.
    pub sent_nak: bool,
    pub recv: Option<RecvInProgress>,
    /// WRITE_WITH_IMM: the total length the completion reports.
    pub write_len: u32,
    pub resources: VecDeque<Resource>,
}

/// A queue pair.
#[derive(Clone, Debug)]
pub struct Qp {
    pub qpn: u32,
    pub qp_type: QpType,
    pub pd: Pd,
    pub send_cq: usize,
    pub recv_cq: usize,
    pub sq_sig_all: bool,
    pub cap: QpCap,
    pub attr: QpAttr,
    pub sq: VecDeque<SendWqe>,
    pub rq: VecDeque<RecvWr>,
    pub req: ReqState,
    pub comp: CompState,
    pub resp: RespState,
}

/// What a QP needs at creation (`ibv_qp_init_attr`).
#[derive(Clone, Debug)]
pub struct QpInit {
    pub qp_type: QpType,
    pub pd: Pd,
    pub send_cq: usize,
    pub recv_cq: usize,
    pub cap: QpCap,
    pub sq_sig_all: bool,
    /// A QPN to create the QP under (replaying a capture); `None` takes the next free one.
    pub qpn: Option<u32>,
}

impl QpInit {
    pub fn new(qp_type: QpType, pd: Pd, cq: usize) -> QpInit {
        QpInit {
            qp_type,
            pd,
            send_cq: cq,
            recv_cq: cq,
            cap: QpCap::default(),
            sq_sig_all: false,
            qpn: None,
        }
    }
}

/// (required, optional) attributes of a transition, as the kernel's `qp_state_table` has them
/// for RC and UD; `None` when the transition is not legal.
fn transition(t: QpType, from: QpState, to: QpState) -> Option<(AttrMask, AttrMask)> {
    use AttrMask as M;
    use QpState::*;
    let rc = t == QpType::Rc;
    let init_attrs = if rc { M::RC_INIT } else { M::UD_INIT };
    let rts_opt = if rc {
        M::CUR_STATE | M::ACCESS_FLAGS | M::MIN_RNR_TIMER
    } else {
        M::CUR_STATE | M::QKEY
    };
    Some(match (from, to) {
        (_, Reset) | (_, Err) => (M::NONE, M::NONE),
        (Reset, Init) => (init_attrs, M::NONE),
        (Init, Init) => (M::NONE, init_attrs),
        (Init, Rtr) if rc => (M::RC_RTR, M::PKEY_INDEX | M::ACCESS_FLAGS),
        (Init, Rtr) => (M::NONE, M::PKEY_INDEX | M::QKEY),
        (Rtr, Rts) if rc => (M::RC_RTS, rts_opt),
        (Rtr, Rts) => (M::SQ_PSN, rts_opt),
        (Rts, Rts) => (M::NONE, rts_opt),
        _ => return None,
    })
}

/// Limits of the device that attribute checks need.
#[derive(Clone, Copy, Debug)]
pub struct DeviceLimits {
    pub max_rd_atomic: u8,
    pub max_mtu: Mtu,
}

impl Qp {
    pub fn new(qpn: u32, init: &QpInit) -> Qp {
        Qp {
            qpn,
            qp_type: init.qp_type,
            pd: init.pd,
            send_cq: init.send_cq,
            recv_cq: init.recv_cq,
            sq_sig_all: init.sq_sig_all,
            cap: init.cap,
            attr: QpAttr::default(),
            sq: VecDeque::new(),
            rq: VecDeque::new(),
            req: ReqState::default(),
            comp: CompState::default(),
            resp: RespState::default(),
        }
    }

    pub fn state(&self) -> QpState {
        self.attr.state
    }

    /// Checks a modify call against the transition table and the attribute ranges; applies it
    /// when legal. `our_ip` says whether an address is one of the NIC's. Entering ERR or RESET
    /// is left to the caller (it flushes and clears); this returns the new state.
    pub fn check_modify(
        &self,
        attr: &QpAttr,
        mask: AttrMask,
        limits: DeviceLimits,
        our_ip: impl Fn(std::net::IpAddr) -> bool,
    ) -> Result<QpState, VerbsError> {
        let err = |r: String| {
            Err(VerbsError::new(
                "modify_qp",
                format!("QP {}: {r}", self.qpn),
            ))
        };
        let cur = self.attr.state;
        if mask.contains(AttrMask::CUR_STATE) && attr.cur_state != cur {
            return err(format!(
                "cur_state {} does not match the QP's state {cur}",
                attr.cur_state
            ));
        }
        let to = if mask.contains(AttrMask::STATE) {
            attr.state
        } else {
            cur
        };
        if matches!(to, QpState::Sqd | QpState::Sqe) {
            return err(format!("state {to} is not supported"));
        }
        let Some((required, optional)) = transition(self.qp_type, cur, to) else {
            return err(format!("{cur} -> {to} is not a legal transition"));
        };
        let given = mask & !(AttrMask::STATE);
        let missing = required & !given;
        if missing != AttrMask::NONE {
            return err(format!("{cur} -> {to} requires {missing}"));
        }
        let extra = given & !(required | optional);
        if extra != AttrMask::NONE {
            return err(format!("{cur} -> {to} does not take {extra}"));
        }
        let has = |m: AttrMask| given.contains(m);
        if has(AttrMask::PORT) && attr.port != 1 {
            return err(format!(
                "port {} does not exist (the NIC has port 1)",
                attr.port
            ));
        }
        if has(AttrMask::PKEY_INDEX) && attr.pkey_index != 0 {
            return err(format!(
                "P_Key index {} is outside the table (one entry, 0xFFFF)",
                attr.pkey_index
            ));
        }
        for (m, name, v, max) in [
            (AttrMask::TIMEOUT, "timeout", attr.timeout, 31),
            (AttrMask::RETRY_CNT, "retry_cnt", attr.retry_cnt, 7),
            (AttrMask::RNR_RETRY, "rnr_retry", attr.rnr_retry, 7),
            (
                AttrMask::MIN_RNR_TIMER,
                "min_rnr_timer",
                attr.min_rnr_timer,
                31,
            ),
            (
                AttrMask::MAX_QP_RD_ATOMIC,
                "max_rd_atomic",
                attr.max_rd_atomic,
                limits.max_rd_atomic,
            ),
            (
                AttrMask::MAX_DEST_RD_ATOMIC,
                "max_dest_rd_atomic",
                attr.max_dest_rd_atomic,
                limits.max_rd_atomic,
            ),
        ] {
            if has(m) && v > max {
                return err(format!("{name} {v} is above {max}"));
            }
        }
        for (m, name, v) in [
            (AttrMask::RQ_PSN, "rq_psn", attr.rq_psn),
            (AttrMask::SQ_PSN, "sq_psn", attr.sq_psn),
            (AttrMask::DEST_QPN, "dest_qp_num", attr.dest_qpn),
        ] {
            if has(m) && v > crate::psn::PSN_MASK {
                return err(format!("{name} {v:#x} does not fit 24 bits"));
            }
        }
        if has(AttrMask::PATH_MTU) && attr.path_mtu > limits.max_mtu {
            return err(format!(
                "path MTU {} is above the port's {}",
                attr.path_mtu.bytes(),
                limits.max_mtu.bytes()
            ));
        }
        if has(AttrMask::ACCESS_FLAGS) && attr.access.bits() & !0xF != 0 {
            return err(format!("unknown access flags {}", attr.access));
        }
        if has(AttrMask::AV) {
            let Some(av) = attr.av else {
                return err("AV in the mask but no address vector given".into());
            };
            if av.sip.is_ipv4() != av.dip.is_ipv4() {
                return err(format!(
                    "address vector mixes IP versions ({} -> {})",
                    av.sip, av.dip
                ));
            }
            if !our_ip(av.sip) {
                return err(format!("source address {} is not one of the NIC's", av.sip));
            }
            if av.flow_label > 0xF_FFFF {
                return err(format!(
                    "flow label {:#x} does not fit 20 bits",
                    av.flow_label
                ));
            }
        }
        Ok(to)
    }

    /// Applies the attributes of a checked modify call.
    pub fn apply(&mut self, attr: &QpAttr, mask: AttrMask, to: QpState) {
        let has = |m: AttrMask| mask.contains(m);
        let a = &mut self.attr;
        if has(AttrMask::ACCESS_FLAGS) {
            a.access = attr.access;
        }
        if has(AttrMask::PKEY_INDEX) {
            a.pkey_index = attr.pkey_index;
        }
        if has(AttrMask::PORT) {
            a.port = attr.port;
        }
        if has(AttrMask::QKEY) {
            a.qkey = attr.qkey;
        }
        if has(AttrMask::AV) {
            a.av = attr.av;
        }
        if has(AttrMask::PATH_MTU) {
            a.path_mtu = attr.path_mtu;
        }
        if has(AttrMask::TIMEOUT) {
            a.timeout = attr.timeout;
        }
        if has(AttrMask::RETRY_CNT) {
            a.retry_cnt = attr.retry_cnt;
            self.comp.retry_cnt = attr.retry_cnt;
        }
        if has(AttrMask::RNR_RETRY) {
            a.rnr_retry = attr.rnr_retry;
            self.comp.rnr_retry = attr.rnr_retry;
        }
        if has(AttrMask::MAX_QP_RD_ATOMIC) {
            a.max_rd_atomic = attr.max_rd_atomic;
        }
        if has(AttrMask::MAX_DEST_RD_ATOMIC) {
            a.max_dest_rd_atomic = attr.max_dest_rd_atomic;
        }
        if has(AttrMask::MIN_RNR_TIMER) {
            a.min_rnr_timer = attr.min_rnr_timer;
        }
        if has(AttrMask::DEST_QPN) {
            a.dest_qpn = attr.dest_qpn;
        }
        if has(AttrMask::RQ_PSN) {
            a.rq_psn = attr.rq_psn;
            self.resp.epsn = attr.rq_psn;
            self.resp.msn = 0;
        }
        if has(AttrMask::SQ_PSN) {
            a.sq_psn = attr.sq_psn;
            self.req.next_psn = attr.sq_psn;
            self.req.sent_upto = attr.sq_psn;
            self.comp.psn = attr.sq_psn;
        }
        a.state = to;
        a.cur_state = to;
    }

    /// Back to RESET: queues emptied, engine state cleared, attributes to their defaults.
    pub fn reset(&mut self) {
        self.sq.clear();
        self.rq.clear();
        self.req = ReqState::default();
        self.comp = CompState::default();
        self.resp = RespState::default();
        self.attr = QpAttr::default();
    }

    /// The ACK timeout in ns (`4.096 us x 2^timeout`), `None` when disabled.
    pub fn ack_timeout_ns(&self) -> Option<u64> {
        (self.attr.timeout != 0).then(|| 4096u64 << self.attr.timeout)
    }

    pub fn mtu(&self) -> u32 {
        self.attr.path_mtu.bytes() as u32
    }
}

/// RNR NAK timer codes (IBTA table 45), in ns: code 0 is 655.36 ms.
pub const RNR_TIMER_NS: [u64; 32] = [
    655_360_000,
    10_000,
    20_000,
    30_000,
    40_000,
    60_000,
    80_000,
    120_000,
    160_000,
    240_000,
    320_000,
    480_000,
    640_000,
    960_000,
    1_280_000,
    1_920_000,
    2_560_000,
    3_840_000,
    5_120_000,
    7_680_000,
    10_240_000,
    15_360_000,
    20_480_000,
    30_720_000,
    40_960_000,
    61_440_000,
    81_920_000,
    122_880_000,
    163_840_000,
    245_760_000,
    327_680_000,
    491_520_000,
];

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> DeviceLimits {
        DeviceLimits {
            max_rd_atomic: 16,
            max_mtu: Mtu::M4096,
        }
    }

    #[test]
    fn transitions_follow_the_kernel_table() {
        let qp = Qp::new(17, &QpInit::new(QpType::Rc, Pd(1), 0));
        let mut a = QpAttr {
            state: QpState::Rtr,
            ..Default::default()
        };
        let e = qp
            .check_modify(&a, AttrMask::STATE, limits(), |_| true)
            .unwrap_err();
        assert!(
            e.reason.contains("RESET -> RTR is not a legal transition"),
            "{e}"
        );
        a.state = QpState::Init;
        let e = qp
            .check_modify(&a, AttrMask::STATE | AttrMask::PORT, limits(), |_| true)
            .unwrap_err();
        assert!(e.reason.contains("requires ACCESS_FLAGS|PKEY_INDEX"), "{e}");
        let ok = AttrMask::STATE | AttrMask::PORT | AttrMask::PKEY_INDEX | AttrMask::ACCESS_FLAGS;
        assert_eq!(
            qp.check_modify(&a, ok, limits(), |_| true),
            Ok(QpState::Init)
        );
        let e = qp
            .check_modify(&a, ok | AttrMask::SQ_PSN, limits(), |_| true)
            .unwrap_err();
        assert!(e.reason.contains("does not take SQ_PSN"), "{e}");
        a.port = 2;
        assert!(qp.check_modify(&a, ok, limits(), |_| true).is_err());
    }

    #[test]
    fn the_ack_timeout_doubles_per_step() {
        let mut qp = Qp::new(17, &QpInit::new(QpType::Rc, Pd(1), 0));
        qp.attr.timeout = 14;
        assert_eq!(qp.ack_timeout_ns(), Some(67_108_864));
        qp.attr.timeout = 0;
        assert_eq!(qp.ack_timeout_ns(), None);
    }
}
