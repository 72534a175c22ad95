//! The completer: ACKs, NAKs, READ responses and atomic ACKs against the send queue. A
//! coalesced ACK completes every request it covers; a response implies the ACK of everything
//! before it; an ACK beyond a READ or atomic that has no response yet is an implied NAK.
//! Retries go back to the oldest unacknowledged PSN (also inside a message); only a timeout
//! may start a second retry while one is under way; retry_cnt and rnr_retry (7 = forever) run
//! out into error completions, the QP into ERR and every later request is flushed.

use rnic_wire::RocePacket;
use rnic_wire::ext::Syndrome;

use crate::nic::Env;
use crate::ops;
use crate::psn;
use crate::qp::{Qp, RNR_TIMER_NS, SendWqe};
use crate::requester::scatter;
use crate::responder::recv_wc;
use crate::verbs::*;

/// The completion of a send WQE.
pub(crate) fn wc_for(qp: &Qp, wqe: &SendWqe, status: WcStatus) -> WorkCompletion {
    WorkCompletion {
        wr_id: wqe.wr.wr_id,
        status,
        opcode: wqe.wr.opcode.wc_opcode(),
        byte_len: if status == WcStatus::Success {
            wqe.len
        } else {
            0
        },
        imm: 0,
        qp_num: qp.qpn,
        src_qp: 0,
        flags: WcFlags::NONE,
    }
}

/// The QP is in ERR: every queued request completes flushed (signaled or not), receive WQEs
/// too, and the timers stop.
pub(crate) fn flush(qp: &mut Qp, env: &mut Env<'_>) {
    for wqe in std::mem::take(&mut qp.sq) {
        let wc = wc_for(qp, &wqe, WcStatus::WrFlushErr);
        env.complete(qp.send_cq, wc);
    }
    if let Some(r) = qp.resp.recv.take() {
        let wc = recv_wc(qp, r.wr.wr_id, WcStatus::WrFlushErr, WcOpcode::Recv, 0);
        env.complete(qp.recv_cq, wc);
    }
    for wr in std::mem::take(&mut qp.rq) {
        let wc = recv_wc(qp, wr.wr_id, WcStatus::WrFlushErr, WcOpcode::Recv, 0);
        env.complete(qp.recv_cq, wc);
    }
    qp.req.cur = 0;
    qp.req.pkt = 0;
    qp.comp.timer = None;
    qp.comp.rnr_until = None;
}

/// WQE `idx` fails with `status`; the ones before it (still in flight) and after it are
/// flushed, in queue order, and the QP goes to ERR.
pub(crate) fn fail_at(qp: &mut Qp, idx: usize, status: WcStatus, env: &mut Env<'_>) {
    for (i, wqe) in std::mem::take(&mut qp.sq).into_iter().enumerate() {
        let s = if i == idx {
            status
        } else {
            WcStatus::WrFlushErr
        };
        let wc = wc_for(qp, &wqe, s);
        env.complete(qp.send_cq, wc);
    }
    qp.attr.state = QpState::Err;
    qp.attr.cur_state = QpState::Err;
    flush(qp, env);
}

fn reset_retry(qp: &mut Qp) {
    qp.comp.retry_cnt = qp.attr.retry_cnt;
    qp.comp.rnr_retry = qp.attr.rnr_retry;
    qp.comp.started_retry = false;
}

/// Completes the front WQE successfully.
fn complete_front(qp: &mut Qp, env: &mut Env<'_>) {
    let wqe = qp.sq.pop_front().expect("a front WQE");
    if wqe.signaled {
        let wc = wc_for(qp, &wqe, WcStatus::Success);
        env.complete(qp.send_cq, wc);
    }
    if qp.req.cur > 0 {
        qp.req.cur -= 1;
    } else {
        // The requester was resending this one: go on with the next from where the peer is.
        qp.req.pkt = match qp.sq.front().and_then(|w| w.first_psn) {
            Some(f) => psn::diff(qp.comp.psn, f).max(0) as u32,
            None => 0,
        };
        if let Some(w) = qp.sq.front() {
            qp.req.pkt = qp.req.pkt.min(w.npkts.saturating_sub(1));
        }
    }
    reset_retry(qp);
}

/// Completes the SEND and WRITE requests wholly before `upto` and moves the oldest
/// unacknowledged PSN up to it (not past a READ or atomic still waiting for its response).
/// Returns the last PSN of that READ or atomic, if one is waiting at the front.
fn complete_covered(qp: &mut Qp, upto: u32, env: &mut Env<'_>) -> Option<u32> {
    let mut blocked = None;
    while let Some(w) = qp.sq.front() {
        let (Some(first), Some(last)) = (w.first_psn, w.last_psn()) else {
            break;
        };
        if w.wr.opcode.is_read_or_atomic() {
            blocked = Some((first, last));
            break;
        }
        if psn::lt(last, upto) {
            complete_front(qp, env);
        } else {
            break;
        }
    }
    let target = match blocked {
        Some((first, _)) if psn::lt(first, upto) => {
            if psn::lt(qp.comp.psn, first) {
                first
            } else {
                qp.comp.psn
            }
        }
        _ => upto,
    };
    if psn::lt(qp.comp.psn, target) {
        qp.comp.psn = target;
    }
    blocked.map(|(_, last)| last)
}

/// Something sent is not acknowledged yet.
fn outstanding(qp: &Qp) -> bool {
    psn::lt(qp.comp.psn, qp.req.sent_upto)
}

/// Re-arms the ACK timer after progress, or stops it when nothing is outstanding.
fn rearm(qp: &mut Qp, env: &Env<'_>) {
    qp.comp.timer = if outstanding(qp) {
        qp.ack_timeout_ns().map(|t| env.now + t)
    } else {
        None
    };
}

/// Points the requester at the oldest unacknowledged PSN.
fn rewind(qp: &mut Qp) {
    let Some(front) = qp.sq.front() else {
        return;
    };
    let Some(first) = front.first_psn else {
        return;
    };
    let k = psn::diff(qp.comp.psn, first).max(0) as u32;
    qp.req.cur = 0;
    qp.req.pkt = if front.wr.opcode.is_atomic() {
        0
    } else {
        k.min(front.npkts - 1)
    };
    qp.req.noack_pkts = 0;
}

/// A NAK, an implied NAK or a timeout asks for a retry.
fn error_retry(qp: &mut Qp, timeout: bool, env: &mut Env<'_>) {
    if qp.comp.started_retry && !timeout {
        env.counters.comp_retry_suppressed += 1;
        return;
    }
    if qp.comp.retry_cnt == 0 {
        fail_at(qp, 0, WcStatus::RetryExcErr, env);
        return;
    }
    if qp.comp.retry_cnt != 7 {
        qp.comp.retry_cnt -= 1;
    }
    if outstanding(qp) {
        qp.comp.started_retry = true;
        rewind(qp);
    }
}

/// A response for this QP (receive checks already passed).
pub(crate) fn receive(qp: &mut Qp, pkt: &RocePacket<'_>, env: &mut Env<'_>) {
    let p = pkt.bth.psn;
    let before = qp.comp.psn;
    let before_len = qp.sq.len();
    match pkt.opcode.code {
        ops::RC_ACKNOWLEDGE => {
            env.counters.comp_acks += 1;
            let syn = pkt.ext.aeth.map_or(ops::AETH_ACK, |a| a.syndrome);
            match Syndrome::decode(syn) {
                Syndrome::Ack { .. } => {
                    let blocked = complete_covered(qp, psn::add(p, 1), env);
                    if psn::lt(before, qp.comp.psn) {
                        // Forward progress restores the retry counters and ends the retry
                        // under way (rxe: reset_retry_counters on every good ACK).
                        reset_retry(qp);
                    }
                    if let Some(last) = blocked {
                        if psn::lt(last, p) {
                            env.counters.comp_implied_nak += 1;
                            error_retry(qp, false, env);
                        }
                    }
                }
                Syndrome::RnrNak { timer } => {
                    env.counters.nak_rnr_received += 1;
                    complete_covered(qp, p, env);
                    if qp.comp.rnr_retry == 0 {
                        fail_at(qp, 0, WcStatus::RnrRetryExcErr, env);
                        return;
                    }
                    if qp.comp.rnr_retry != 7 {
                        qp.comp.rnr_retry -= 1;
                    }
                    qp.comp.rnr_until = Some(env.now + RNR_TIMER_NS[usize::from(timer & 0x1F)]);
                    qp.comp.timer = None;
                    return;
                }
                Syndrome::Nak { code: 0 } => {
                    env.counters.nak_seq_received += 1;
                    complete_covered(qp, p, env);
                    error_retry(qp, false, env);
                }
                Syndrome::Nak { code } => {
                    env.counters.nak_error_received += 1;
                    complete_covered(qp, p, env);
                    let status = match code {
                        1 => WcStatus::RemInvReqErr,
                        2 => WcStatus::RemAccessErr,
                        3 => WcStatus::RemOpErr,
                        _ => WcStatus::BadRespErr,
                    };
                    if qp.sq.front().is_some_and(|w| w.first_psn.is_some()) {
                        fail_at(qp, 0, status, env);
                    }
                    return;
                }
                Syndrome::Reserved(_) => {
                    env.counters.comp_stale += 1;
                    return;
                }
            }
        }
        ops::RC_READ_RESPONSE_FIRST..=ops::RC_READ_RESPONSE_ONLY => {
            env.counters.comp_read_responses += 1;
            complete_covered(qp, p, env);
            read_response(qp, pkt, env);
        }
        ops::RC_ATOMIC_ACKNOWLEDGE => {
            env.counters.comp_atomic_acks += 1;
            complete_covered(qp, p, env);
            atomic_ack(qp, pkt, env);
        }
        _ => env.counters.comp_stale += 1,
    }
    if qp.state() == QpState::Rts && (qp.comp.psn != before || qp.sq.len() != before_len) {
        rearm(qp, env);
    }
}

fn read_response(qp: &mut Qp, pkt: &RocePacket<'_>, env: &mut Env<'_>) {
    let p = pkt.bth.psn;
    let Some(w) = qp.sq.front() else {
        env.counters.comp_stale += 1;
        return;
    };
    let (Some(first), Some(last)) = (w.first_psn, w.last_psn()) else {
        env.counters.comp_stale += 1;
        return;
    };
    if w.wr.opcode != WrOpcode::RdmaRead || psn::lt(p, first) || psn::lt(last, p) {
        env.counters.comp_stale += 1;
        return;
    }
    let d = psn::diff(p, qp.comp.psn);
    if d < 0 {
        env.counters.comp_stale += 1;
        return;
    }
    if d > 0 {
        env.counters.comp_implied_nak += 1;
        error_retry(qp, false, env);
        return;
    }
    let mtu = qp.mtu();
    let k = psn::diff(p, first) as u32;
    let is_last = p == last;
    let expect_len = if is_last { w.len - k * mtu } else { mtu };
    let op = pkt.opcode.code;
    let op_ok = if is_last {
        matches!(op, ops::RC_READ_RESPONSE_LAST | ops::RC_READ_RESPONSE_ONLY)
    } else {
        matches!(
            op,
            ops::RC_READ_RESPONSE_FIRST | ops::RC_READ_RESPONSE_MIDDLE
        )
    };
    if !op_ok || pkt.payload.len() != expect_len as usize {
        fail_at(qp, 0, WcStatus::BadRespErr, env);
        return;
    }
    let sgl = w.wr.sg_list.clone();
    if !scatter(env.mrs, &sgl, k * mtu, pkt.payload(), qp.pd) {
        fail_at(qp, 0, WcStatus::LocProtErr, env);
        return;
    }
    qp.comp.psn = psn::add(p, 1);
    reset_retry(qp);
    if is_last {
        qp.sq[0].done = true;
        complete_front(qp, env);
    }
}

fn atomic_ack(qp: &mut Qp, pkt: &RocePacket<'_>, env: &mut Env<'_>) {
    let p = pkt.bth.psn;
    let Some(w) = qp.sq.front() else {
        env.counters.comp_stale += 1;
        return;
    };
    if !w.wr.opcode.is_atomic() || w.first_psn != Some(p) {
        env.counters.comp_stale += 1;
        return;
    }
    let orig = pkt.ext.atomic_ack_eth.map_or(0, |a| a.orig);
    let sgl = w.wr.sg_list.clone();
    if !scatter(env.mrs, &sgl, 0, &orig.to_le_bytes(), qp.pd) {
        fail_at(qp, 0, WcStatus::LocProtErr, env);
        return;
    }
    qp.comp.psn = psn::add(p, 1);
    qp.sq[0].done = true;
    complete_front(qp, env);
}

/// Timers at `env.now`: the end of an RNR wait resends from the NAK's PSN; an expired ACK
/// timer with something outstanding retries.
pub(crate) fn on_time(qp: &mut Qp, env: &mut Env<'_>) {
    if qp.state() != QpState::Rts {
        return;
    }
    if qp.comp.rnr_until.is_some_and(|t| env.now >= t) {
        qp.comp.rnr_until = None;
        rewind(qp);
        rearm(qp, env);
    }
    if qp.comp.timer.is_some_and(|t| env.now >= t) {
        if outstanding(qp) {
            env.counters.comp_timeouts += 1;
            qp.comp.timer = qp.ack_timeout_ns().map(|t| env.now + t);
            error_retry(qp, true, env);
        } else {
            qp.comp.timer = None;
        }
    }
}
