//! The responder: requests that passed the NIC's receive checks, through rxe's responder
//! checks in order (PSN, opcode sequence, operation allowed on the QP, resources, lengths,
//! R_Key), then executed: SEND into posted receives, WRITE into memory, READ answered in
//! MTU-sized responses, atomics 8-byte aligned with the original value saved for duplicates.
//! ACKs on AckReq, one sequence-error NAK per gap, duplicates re-ACKed with ePSN - 1 or
//! replayed, RNR NAKs with min_rnr_timer, and class A/C errors NAKed with the QP moved to ERR.
//! No byte of a refused request is written.

use rnic_wire::RocePacket;
use rnic_wire::ext::{Aeth, AtomicAckEth, ExtHeaders};

use crate::completer;
use crate::nic::{Env, bth};
use crate::ops::{self, Pos};
use crate::psn;
use crate::qp::{OpenMsg, Qp, RecvInProgress, Resource, VerbsError};
use crate::requester::scatter;
use crate::resp_check::{Check, CheckInput, check};
use crate::verbs::*;

/// An RC request opcode (SEND, WRITE, READ request, atomics).
pub(crate) fn is_request(op: u8) -> bool {
    matches!(op, 0x00..=0x0C | 0x13 | 0x14 | 0x16 | 0x17)
}

/// Queues a receive work request.
pub(crate) fn post_recv(qp: &mut Qp, wr: RecvWr, env: &mut Env<'_>) -> Result<(), VerbsError> {
    let e = |r: String| {
        Err(VerbsError::new(
            "post_recv",
            format!("QP {:#x}: {r}", qp.qpn),
        ))
    };
    if qp.state() == QpState::Reset {
        return e("the QP is in RESET".into());
    }
    if qp.rq.len() >= qp.cap.max_recv_wr as usize {
        return e(format!(
            "the receive queue is full ({} entries)",
            qp.cap.max_recv_wr
        ));
    }
    if wr.sg_list.len() > qp.cap.max_recv_sge as usize {
        return e(format!(
            "{} scatter/gather entries, the QP takes {}",
            wr.sg_list.len(),
            qp.cap.max_recv_sge
        ));
    }
    if qp.state() == QpState::Err {
        let wc = recv_wc(qp, wr.wr_id, WcStatus::WrFlushErr, WcOpcode::Recv, 0);
        env.complete(qp.recv_cq, wc);
        return Ok(());
    }
    qp.rq.push_back(wr);
    Ok(())
}

pub(crate) fn recv_wc(
    qp: &Qp,
    wr_id: u64,
    status: WcStatus,
    opcode: WcOpcode,
    byte_len: u32,
) -> WorkCompletion {
    WorkCompletion {
        wr_id,
        status,
        opcode,
        byte_len,
        imm: 0,
        qp_num: qp.qpn,
        src_qp: 0,
        flags: WcFlags::NONE,
    }
}

/// Sends an ACK or NAK with `syndrome` for `psn`, carrying the current MSN.
fn ack(qp: &Qp, syndrome: u8, psn: u32, env: &mut Env<'_>) {
    let av = qp.attr.av.expect("RC in RTR");
    let ext = ExtHeaders {
        aeth: Some(Aeth {
            syndrome,
            msn: qp.resp.msn,
        }),
        ..Default::default()
    };
    let c = &mut *env.counters;
    match syndrome {
        ops::AETH_ACK => c.acks_sent += 1,
        ops::AETH_NAK_SEQ => c.nak_seq_sent += 1,
        ops::AETH_NAK_INV_REQ => c.nak_inv_req_sent += 1,
        ops::AETH_NAK_REM_ACCESS => c.nak_rem_access_sent += 1,
        ops::AETH_NAK_REM_OP => c.nak_rem_op_sent += 1,
        s if s & 0xE0 == ops::AETH_RNR_NAK => c.nak_rnr_sent += 1,
        _ => {}
    }
    let b = bth(ops::RC_ACKNOWLEDGE, qp.attr.dest_qpn, psn, false);
    env.send(qp.qpn, &av, b, ext, Vec::new());
}

/// A class A or C error: NAK with `syndrome` for the packet, the receive WQE in use (if any)
/// completes with `status`, and the QP goes to ERR.
fn fatal(qp: &mut Qp, syndrome: u8, status: WcStatus, psn: u32, env: &mut Env<'_>) {
    ack(qp, syndrome, psn, env);
    if let Some(r) = qp.resp.recv.take() {
        let wc = recv_wc(qp, r.wr.wr_id, status, WcOpcode::Recv, r.offset);
        env.complete(qp.recv_cq, wc);
    }
    qp.attr.state = QpState::Err;
    qp.attr.cur_state = QpState::Err;
    completer::flush(qp, env);
}

/// Handles a request for this QP (receive checks already passed).
pub(crate) fn receive(qp: &mut Qp, pkt: &RocePacket<'_>, env: &mut Env<'_>) {
    if qp.qp_type == QpType::Ud {
        receive_ud(qp, pkt, env);
        return;
    }
    let p = pkt.bth.psn;
    let input = CheckInput {
        opcode: pkt.opcode.code,
        psn: p,
        payload_len: pkt.payload.len(),
        reth: pkt.ext.reth,
        atomic: pkt.ext.atomic_eth,
        epsn: qp.resp.epsn,
        sent_nak: qp.resp.sent_nak,
        open: qp.resp.open.clone(),
        wqe_ready: qp.resp.recv.is_some() || !qp.rq.is_empty(),
        access: qp.attr.access,
        max_dest_rd_atomic: qp.attr.max_dest_rd_atomic,
        mtu: qp.mtu(),
        pd: qp.pd,
    };
    let verdict = check(&input, env.mrs);
    match verdict {
        Check::NakSeq | Check::SeqDrop => {
            env.counters.resp_out_of_sequence += 1;
            if verdict == Check::SeqDrop {
                env.counters.resp_out_of_sequence_dropped += 1;
            } else {
                qp.resp.sent_nak = true;
                let e = qp.resp.epsn;
                ack(qp, ops::AETH_NAK_SEQ, e, env);
            }
            return;
        }
        Check::Duplicate => return duplicate(qp, pkt, env),
        _ => {}
    }
    qp.resp.sent_nak = false;
    if verdict == Check::Rnr {
        let syn = ops::AETH_RNR_NAK | (qp.attr.min_rnr_timer & 0x1F);
        ack(qp, syn, p, env);
        return;
    }
    if verdict.is_access_error() {
        return fatal(qp, ops::AETH_NAK_REM_ACCESS, WcStatus::RemAccessErr, p, env);
    }
    if verdict != Check::Execute {
        return fatal(qp, ops::AETH_NAK_INV_REQ, WcStatus::RemInvReqErr, p, env);
    }
    let op = pkt.opcode.code;
    let pos = ops::position(op);
    let is_read = op == ops::RC_READ_REQUEST;
    let is_atomic = matches!(op, ops::RC_COMPARE_SWAP | ops::RC_FETCH_ADD);
    let len = pkt.payload.len();
    let pd = qp.pd;

    env.counters.resp_executed += 1;
    if is_read {
        return execute_read(qp, pkt, env);
    }
    if is_atomic {
        return execute_atomic(qp, pkt, env);
    }
    let (write, pos) = pos.expect("SEND or WRITE");
    if write {
        if let Some(r) = pkt.ext.reth {
            qp.resp.open = Some(OpenMsg::Write {
                rkey: r.rkey,
                va: r.va,
                resid: r.dma_len,
            });
            qp.resp.write_len = r.dma_len;
        }
        let Some(OpenMsg::Write { rkey, va, resid }) = qp.resp.open.clone() else {
            unreachable!("sequence checked");
        };
        let last = matches!(pos, Pos::Last | Pos::Only);
        if len > 0 {
            let at = env
                .mrs
                .check(rkey, pd, va, len as u64, Access::REMOTE_WRITE)
                .expect("the whole range was checked at the first packet");
            env.mrs.write(rkey, at, pkt.payload());
        }
        qp.resp.open = (!last).then_some(OpenMsg::Write {
            rkey,
            va: va + len as u64,
            resid: resid - len as u32,
        });
        if last {
            if let Some(imm) = pkt.ext.immdt {
                let wr = qp.rq.pop_front().expect("checked: a WQE is posted");
                let mut wc = recv_wc(
                    qp,
                    wr.wr_id,
                    WcStatus::Success,
                    WcOpcode::RecvRdmaWithImm,
                    qp.resp.write_len,
                );
                wc.imm = imm;
                wc.flags = WcFlags::WITH_IMM;
                env.complete(qp.recv_cq, wc);
            }
            qp.resp.msn = psn::add(qp.resp.msn, 1);
        }
    } else {
        if qp.resp.recv.is_none() {
            let wr = qp.rq.pop_front().expect("checked: a WQE is posted");
            // A receive WQE whose buffers the NIC may not write is malformed.
            let ok = wr.sg_list.iter().all(|s| {
                env.mrs
                    .check(s.lkey, pd, s.addr, s.length.into(), Access::LOCAL_WRITE)
                    .is_ok()
            });
            qp.resp.recv = Some(RecvInProgress { wr, offset: 0 });
            if !ok {
                return fatal(qp, ops::AETH_NAK_REM_OP, WcStatus::LocQpOpErr, p, env);
            }
        }
        let r = qp.resp.recv.as_mut().expect("taken above");
        if !scatter(env.mrs, &r.wr.sg_list, r.offset, pkt.payload(), pd) {
            return fatal(qp, ops::AETH_NAK_INV_REQ, WcStatus::LocLenErr, p, env);
        }
        r.offset += len as u32;
        let last = matches!(pos, Pos::Last | Pos::Only);
        qp.resp.open = (!last).then_some(OpenMsg::Send);
        if last {
            let r = qp.resp.recv.take().expect("in progress");
            let mut wc = recv_wc(qp, r.wr.wr_id, WcStatus::Success, WcOpcode::Recv, r.offset);
            if let Some(imm) = pkt.ext.immdt {
                wc.imm = imm;
                wc.flags = WcFlags::WITH_IMM;
            }
            env.complete(qp.recv_cq, wc);
            qp.resp.msn = psn::add(qp.resp.msn, 1);
        }
    }
    qp.resp.epsn = psn::add(p, 1);
    if pkt.bth.ack_req {
        ack(qp, ops::AETH_ACK, p, env);
    }
}

fn remember(qp: &mut Qp, r: Resource) {
    let cap = usize::from(qp.attr.max_dest_rd_atomic.max(1));
    while qp.resp.resources.len() >= cap {
        qp.resp.resources.pop_front();
    }
    qp.resp.resources.push_back(r);
}

fn execute_read(qp: &mut Qp, pkt: &RocePacket<'_>, env: &mut Env<'_>) {
    let r = pkt.ext.reth.expect("a READ request has a RETH");
    let p = pkt.bth.psn;
    let n = r.dma_len.div_ceil(qp.mtu()).max(1);
    qp.resp.msn = psn::add(qp.resp.msn, 1);
    remember(
        qp,
        Resource::Read {
            first_psn: p,
            last_psn: psn::add(p, n - 1),
            va: r.va,
            len: r.dma_len,
            rkey: r.rkey,
        },
    );
    qp.resp.epsn = psn::add(p, n);
    read_responses(qp, r.rkey, r.va, r.dma_len, p, false, env);
}

/// READ responses for `len` bytes at `va` from PSN `first`; a replay that starts inside the
/// original response begins with MIDDLE (or LAST), as rxe's does.
fn read_responses(qp: &Qp, rkey: u32, va: u64, len: u32, first: u32, mid: bool, env: &mut Env<'_>) {
    let av = qp.attr.av.expect("RC in RTR");
    let mtu = qp.mtu();
    let n = len.div_ceil(mtu).max(1);
    let data = if len == 0 {
        Vec::new()
    } else {
        let at = env
            .mrs
            .check(rkey, qp.pd, va, len.into(), Access::REMOTE_READ)
            .expect("checked before executing");
        env.mrs.read(rkey, at, len as usize).to_vec()
    };
    for i in 0..n {
        let (op, aeth) = match (n, i, mid) {
            (1, _, false) => (ops::RC_READ_RESPONSE_ONLY, true),
            (1, _, true) => (ops::RC_READ_RESPONSE_LAST, true),
            (_, 0, false) => (ops::RC_READ_RESPONSE_FIRST, true),
            (_, i, _) if i + 1 == n => (ops::RC_READ_RESPONSE_LAST, true),
            _ => (ops::RC_READ_RESPONSE_MIDDLE, false),
        };
        let from = (i * mtu) as usize;
        let to = (from + mtu as usize).min(data.len());
        let ext = ExtHeaders {
            aeth: aeth.then_some(Aeth {
                syndrome: ops::AETH_ACK,
                msn: qp.resp.msn,
            }),
            ..Default::default()
        };
        let b = bth(op, qp.attr.dest_qpn, psn::add(first, i), false);
        env.send(qp.qpn, &av, b, ext, data[from..to].to_vec());
        env.counters.read_responses_sent += 1;
    }
}

fn execute_atomic(qp: &mut Qp, pkt: &RocePacket<'_>, env: &mut Env<'_>) {
    let a = pkt.ext.atomic_eth.expect("an atomic has an AtomicETH");
    let p = pkt.bth.psn;
    let at = env
        .mrs
        .check(a.rkey, qp.pd, a.va, 8, Access::REMOTE_ATOMIC)
        .expect("checked");
    let orig = u64::from_le_bytes(env.mrs.read(a.rkey, at, 8).try_into().expect("8 bytes"));
    let new = if pkt.opcode.code == ops::RC_COMPARE_SWAP {
        if orig == a.compare { a.swap_add } else { orig }
    } else {
        orig.wrapping_add(a.swap_add)
    };
    env.mrs.write(a.rkey, at, &new.to_le_bytes());
    qp.resp.msn = psn::add(qp.resp.msn, 1);
    remember(qp, Resource::Atomic { psn: p, orig });
    qp.resp.epsn = psn::add(p, 1);
    atomic_ack(qp, p, orig, env);
}

fn atomic_ack(qp: &Qp, p: u32, orig: u64, env: &mut Env<'_>) {
    let av = qp.attr.av.expect("RC in RTR");
    let ext = ExtHeaders {
        aeth: Some(Aeth {
            syndrome: ops::AETH_ACK,
            msn: qp.resp.msn,
        }),
        atomic_ack_eth: Some(AtomicAckEth { orig }),
        ..Default::default()
    };
    let b = bth(ops::RC_ATOMIC_ACKNOWLEDGE, qp.attr.dest_qpn, p, false);
    env.send(qp.qpn, &av, b, ext, Vec::new());
    env.counters.atomic_acks_sent += 1;
}

/// A request behind ePSN.
fn duplicate(qp: &mut Qp, pkt: &RocePacket<'_>, env: &mut Env<'_>) {
    env.counters.resp_duplicate += 1;
    let p = pkt.bth.psn;
    let op = pkt.opcode.code;
    if ops::position(op).is_some() {
        // Not executed again; the ACK says how far we are.
        let prev = psn::sub(qp.resp.epsn, 1);
        ack(qp, ops::AETH_ACK, prev, env);
        return;
    }
    let found = qp.resp.resources.iter().position(|r| match *r {
        Resource::Read {
            first_psn,
            last_psn,
            ..
        } => op == ops::RC_READ_REQUEST && psn::le(first_psn, p) && psn::le(p, last_psn),
        Resource::Atomic { psn: ap, .. } => op != ops::RC_READ_REQUEST && ap == p,
    });
    let Some(i) = found else {
        env.counters.resp_duplicate_dropped += 1;
        return;
    };
    match qp.resp.resources[i].clone() {
        Resource::Read {
            first_psn,
            va,
            len,
            rkey,
            last_psn,
        } => {
            let r = pkt.ext.reth.expect("a READ request has a RETH");
            let inside = r.va >= va
                && r.dma_len <= len
                && r.va + u64::from(r.dma_len) <= va + u64::from(len)
                && r.rkey == rkey;
            if !inside
                || env
                    .mrs
                    .check(rkey, qp.pd, r.va, r.dma_len.into(), Access::REMOTE_READ)
                    .is_err()
            {
                env.counters.resp_duplicate_dropped += 1;
                return;
            }
            // rxe moves the saved start to the replayed address and keeps the length.
            qp.resp.resources[i] = Resource::Read {
                first_psn,
                last_psn,
                va: r.va,
                len,
                rkey,
            };
            read_responses(qp, rkey, r.va, r.dma_len, p, p != first_psn, env);
        }
        Resource::Atomic { orig, .. } => atomic_ack(qp, p, orig, env),
    }
}

/// A UD SEND: into the next receive WQE with the 40-byte GRH area first; dropped when no WQE
/// is posted or the message does not fit.
fn receive_ud(qp: &mut Qp, pkt: &RocePacket<'_>, env: &mut Env<'_>) {
    let Some(wr) = qp.rq.front() else {
        env.counters.ud_dropped += 1;
        return;
    };
    let mut data = vec![0u8; 40];
    let iph = &pkt.frame[pkt.ip_offset..];
    match pkt.ip {
        rnic_wire::IpParsed::V4(_) => data[20..40].copy_from_slice(&iph[..20]),
        rnic_wire::IpParsed::V6(_) => data.copy_from_slice(&iph[..40]),
    }
    data.extend_from_slice(pkt.payload());
    let room: u64 = wr.sg_list.iter().map(|s| u64::from(s.length)).sum();
    if data.len() as u64 > room {
        env.counters.ud_dropped += 1;
        return;
    }
    let wr = qp.rq.pop_front().expect("front exists");
    let pd = qp.pd;
    if !scatter(env.mrs, &wr.sg_list, 0, &data, pd) {
        let wc = recv_wc(qp, wr.wr_id, WcStatus::LocProtErr, WcOpcode::Recv, 0);
        env.complete(qp.recv_cq, wc);
        qp.attr.state = QpState::Err;
        qp.attr.cur_state = QpState::Err;
        completer::flush(qp, env);
        return;
    }
    env.counters.resp_executed += 1;
    let mut wc = recv_wc(
        qp,
        wr.wr_id,
        WcStatus::Success,
        WcOpcode::Recv,
        data.len() as u32,
    );
    wc.src_qp = pkt.ext.deth.map_or(0, |d| d.src_qp);
    wc.flags = WcFlags::GRH;
    if let Some(imm) = pkt.ext.immdt {
        wc.imm = imm;
        wc.flags |= WcFlags::WITH_IMM;
    }
    env.complete(qp.recv_cq, wc);
}
