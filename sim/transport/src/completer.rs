//! The completer: ACKs, NAKs, READ responses and atomic ACKs against the send queue. A
//! coalesced ACK completes every request it covers; a response implies the ACK of everything
//! before it; an ACK beyond a READ or atomic that has no response yet is an implied NAK.
//! Retries go back to the oldest unacknowledged PSN (also inside a message); only a timeout
//! may start a second retry while one is under way; retry_cnt and rnr_retry (7 = forever) run
//! out into error completions, the QP into ERR and every later request is flushed.

use rnic_wire::RocePacket;
use rnic_wire::ext::Syndrome;

use crate::comp_check::{self, CompRow, Front, Kind, Step, StepInput, Timer, Verdict};
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

/// Removes the front WQE, completing it successfully (the completer state is the caller's).
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
}

/// Something sent is not acknowledged yet.
fn outstanding(qp: &Qp) -> bool {
    psn::lt(qp.comp.psn, qp.req.sent_upto)
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

/// A timeout asks for a retry (the step function decides the ones responses ask for).
fn timeout_retry(qp: &mut Qp, env: &mut Env<'_>) {
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

/// The oldest request as the step function sees it: present once it has been sent.
fn front_of(qp: &Qp) -> Option<Front> {
    let w = qp.sq.front()?;
    let first_psn = w.first_psn?;
    let kind = if w.wr.opcode == WrOpcode::RdmaRead {
        Kind::Read
    } else if w.wr.opcode.is_atomic() {
        Kind::Atomic
    } else {
        Kind::SendWrite
    };
    Some(Front {
        kind,
        first_psn,
        npkts: w.npkts,
        len: w.len,
    })
}

/// Counts a response once, by its opcode and syndrome.
fn count(pkt: &RocePacket<'_>, syndrome: u8, env: &mut Env<'_>) {
    let c = &mut env.counters;
    match pkt.opcode.code {
        ops::RC_ACKNOWLEDGE => {
            c.comp_acks += 1;
            match Syndrome::decode(syndrome) {
                Syndrome::Ack { .. } => {}
                Syndrome::RnrNak { .. } => c.nak_rnr_received += 1,
                Syndrome::Nak { code: 0 } => c.nak_seq_received += 1,
                Syndrome::Nak { .. } => c.nak_error_received += 1,
                Syndrome::Reserved(_) => c.comp_stale += 1,
            }
        }
        ops::RC_READ_RESPONSE_FIRST..=ops::RC_READ_RESPONSE_ONLY => c.comp_read_responses += 1,
        ops::RC_ATOMIC_ACKNOWLEDGE => c.comp_atomic_acks += 1,
        _ => c.comp_stale += 1,
    }
}

/// A response for this QP (receive checks already passed), decided by
/// [`comp_check::step`]: requests it covers complete one per step, then its last step acts.
pub(crate) fn receive(qp: &mut Qp, pkt: &RocePacket<'_>, env: &mut Env<'_>) {
    let syndrome = pkt.ext.aeth.map_or(ops::AETH_ACK, |a| a.syndrome);
    count(pkt, syndrome, env);
    let mut completed = false;
    loop {
        let input = StepInput {
            opcode: pkt.opcode.code,
            psn: pkt.bth.psn,
            syndrome,
            payload_len: pkt.payload.len() as u32,
            mtu: qp.mtu(),
            attr_retry_cnt: qp.attr.retry_cnt,
            attr_rnr_retry: qp.attr.rnr_retry,
            row: CompRow {
                psn: qp.comp.psn,
                retry_cnt: qp.comp.retry_cnt,
                rnr_retry: qp.comp.rnr_retry,
                started_retry: qp.comp.started_retry,
            },
            sent_upto: qp.req.sent_upto,
            front: front_of(qp),
            completed,
        };
        let s = comp_check::step(&input);
        if let Some(log) = env.comp_log.as_mut() {
            log.push((input, s));
        }
        if s.verdict == Verdict::Complete {
            set_row(qp, &s.row);
            complete_front(qp, env);
            completed = true;
            continue;
        }
        act(qp, pkt, syndrome, &s, env);
        return;
    }
}

fn set_row(qp: &mut Qp, row: &CompRow) {
    qp.comp.psn = row.psn;
    qp.comp.retry_cnt = row.retry_cnt;
    qp.comp.rnr_retry = row.rnr_retry;
    qp.comp.started_retry = row.started_retry;
}

/// The last step of a response: place READ data or an atomic's value, then the state, the
/// failure, the requester's rewind, the completion, the RNR wait and the ACK timer.
fn act(qp: &mut Qp, pkt: &RocePacket<'_>, syndrome: u8, s: &Step, env: &mut Env<'_>) {
    let placed = match s.verdict {
        Verdict::ReadData => Some(pkt.payload().to_vec()),
        Verdict::AtomicData => {
            let orig = pkt.ext.atomic_ack_eth.map_or(0, |a| a.orig);
            Some(orig.to_le_bytes().to_vec())
        }
        Verdict::Stale => {
            // READ responses and atomic ACKs were counted as such; stale ones count again.
            if matches!(
                pkt.opcode.code,
                ops::RC_READ_RESPONSE_FIRST
                    ..=ops::RC_READ_RESPONSE_ONLY | ops::RC_ATOMIC_ACKNOWLEDGE
            ) {
                env.counters.comp_stale += 1;
            }
            None
        }
        Verdict::ImpliedNak | Verdict::ReadGap => {
            env.counters.comp_implied_nak += 1;
            None
        }
        _ => None,
    };
    if let Some(data) = placed {
        let sgl = qp.sq[0].wr.sg_list.clone();
        if !scatter(env.mrs, &sgl, s.offset, &data, qp.pd) {
            // The response acknowledged everything before it.
            if psn::lt(qp.comp.psn, pkt.bth.psn) {
                qp.comp.psn = pkt.bth.psn;
            }
            fail_at(qp, 0, WcStatus::LocProtErr, env);
            return;
        }
    }
    if s.suppressed {
        env.counters.comp_retry_suppressed += 1;
    }
    set_row(qp, &s.row);
    if let Some(status) = s.fail {
        fail_at(qp, 0, status, env);
        return;
    }
    if s.rewind {
        rewind(qp);
    }
    if s.complete {
        qp.sq[0].done = true;
        complete_front(qp, env);
    }
    if s.rnr_wait {
        qp.comp.rnr_until = Some(env.now + RNR_TIMER_NS[usize::from(syndrome & 0x1F)]);
    }
    match s.timer {
        Timer::Keep => {}
        Timer::Arm => qp.comp.timer = qp.ack_timeout_ns().map(|t| env.now + t),
        Timer::Stop => qp.comp.timer = None,
    }
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
        qp.comp.timer = if outstanding(qp) {
            qp.ack_timeout_ns().map(|t| env.now + t)
        } else {
            None
        };
    }
    if qp.comp.timer.is_some_and(|t| env.now >= t) {
        if outstanding(qp) {
            env.counters.comp_timeouts += 1;
            qp.comp.timer = qp.ack_timeout_ns().map(|t| env.now + t);
            timeout_retry(qp, env);
        } else {
            qp.comp.timer = None;
        }
    }
}
