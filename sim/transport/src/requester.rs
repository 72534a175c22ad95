//! The requester: send work requests into packets. Segmentation at the path MTU, PSN
//! assignment (a READ takes one PSN per response packet), AckReq on the last packet of a
//! message and at least every `ack_every` packets, the window of unacknowledged PSNs, fence
//! and the outstanding READ/atomic limit; resending from any PSN after the completer asks
//! for a retry (go-back-N re-reads the send queue, no copy of sent data is kept).

use rnic_wire::ext::{AtomicEth, Deth, ExtHeaders, Reth};

use crate::mr::MrTable;
use crate::nic::{Env, bth};
use crate::psn;
use crate::qp::{Qp, SendWqe, VerbsError};
use crate::verbs::*;
use crate::{completer, ops};

/// Checks a send work request and queues it.
pub(crate) fn post(qp: &mut Qp, wr: SendWr, env: &mut Env<'_>) -> Result<(), VerbsError> {
    let e = |r: String| {
        Err(VerbsError::new(
            "post_send",
            format!("QP {:#x}: {r}", qp.qpn),
        ))
    };
    match qp.state() {
        QpState::Rts | QpState::Err => {}
        s => return e(format!("the QP is in {s}; sends need RTS")),
    }
    if qp.sq.len() >= qp.cap.max_send_wr as usize {
        return e(format!(
            "the send queue is full ({} entries)",
            qp.cap.max_send_wr
        ));
    }
    if wr.sg_list.len() > qp.cap.max_send_sge as usize {
        return e(format!(
            "{} scatter/gather entries, the QP takes {}",
            wr.sg_list.len(),
            qp.cap.max_send_sge
        ));
    }
    let len = wr.total_len();
    if len > 1 << 31 {
        return e(format!("message of {len} bytes is above 2^31"));
    }
    let len = len as u32;
    match qp.qp_type {
        QpType::Ud => {
            if !wr.opcode.is_send() {
                return e(format!("{:?} is not a UD operation", wr.opcode));
            }
            if wr.ud.is_none() {
                return e("a UD send needs a destination (address handle, QPN, Q_Key)".into());
            }
            if len as usize > env.cfg.port_mtu.bytes() {
                return e(format!(
                    "UD message of {len} bytes is above the MTU {}",
                    env.cfg.port_mtu.bytes()
                ));
            }
        }
        QpType::Rc => {
            if wr.opcode.is_atomic() && (wr.sg_list.len() != 1 || len != 8) {
                return e("an atomic takes exactly one 8-byte scatter/gather entry".into());
            }
        }
    }
    let mtu = qp.mtu();
    let npkts = match (qp.qp_type, wr.opcode) {
        (QpType::Ud, _) => 1,
        (_, op) if op.is_atomic() => 1,
        _ => len.div_ceil(mtu).max(1),
    };
    let signaled = qp.sq_sig_all || wr.flags.contains(SendFlags::SIGNALED);
    let wqe = SendWqe {
        wr,
        len,
        npkts,
        first_psn: None,
        signaled,
        done: false,
    };
    if qp.state() == QpState::Err {
        // Posted to a QP in error: completes flushed at once.
        let wc = completer::wc_for(qp, &wqe, WcStatus::WrFlushErr);
        env.complete(qp.send_cq, wc);
        return Ok(());
    }
    qp.sq.push_back(wqe);
    Ok(())
}

/// True when the requester could send something now.
pub(crate) fn has_work(qp: &Qp) -> bool {
    qp.state() == QpState::Rts && qp.comp.rnr_until.is_none() && qp.req.cur < qp.sq.len()
}

/// The local key check of a work request's scatter/gather list.
fn check_local(mrs: &MrTable, qp: &Qp, wqe: &SendWqe) -> Result<(), WcStatus> {
    let need = if wqe.wr.opcode.is_read_or_atomic() {
        Access::LOCAL_WRITE
    } else {
        Access::NONE
    };
    for s in &wqe.wr.sg_list {
        mrs.check(s.lkey, qp.pd, s.addr, s.length.into(), need)
            .map_err(|_| WcStatus::LocProtErr)?;
    }
    Ok(())
}

/// `len` bytes of a scatter/gather list from logical offset `off` (keys already checked).
pub(crate) fn gather(
    mrs: &MrTable,
    sgl: &[Sge],
    mut off: u32,
    len: u32,
    pd: crate::mr::Pd,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(len as usize);
    for s in sgl {
        if out.len() == len as usize {
            break;
        }
        if off >= s.length {
            off -= s.length;
            continue;
        }
        let take = (s.length - off).min(len - out.len() as u32);
        let at = mrs
            .check(
                s.lkey,
                pd,
                s.addr + u64::from(off),
                take.into(),
                Access::NONE,
            )
            .expect("checked when the request started");
        out.extend_from_slice(mrs.read(s.lkey, at, take as usize));
        off = 0;
    }
    out
}

/// Where the message bytes `[off, off + len)` fall in entries of the given lengths: for each
/// entry they meet, in order, its index, the bytes skipped at its start and the bytes taken;
/// `None` when the entries end first. The hardware's `sge_pieces` computes the same pieces.
pub fn scatter_plan(lens: &[u32], off: u32, len: u32) -> Option<Vec<(usize, u32, u32)>> {
    let mut plan = Vec::new();
    let (mut skip, mut left) = (off, len);
    for (i, &l) in lens.iter().enumerate() {
        if left == 0 {
            break;
        }
        if skip >= l {
            skip -= l;
            continue;
        }
        let take = (l - skip).min(left);
        plan.push((i, skip, take));
        left -= take;
        skip = 0;
    }
    (left == 0).then_some(plan)
}

/// Writes `bytes` into a scatter/gather list from logical offset `off`. False when the list is
/// too short or a key does not allow the write (nothing is written then).
pub(crate) fn scatter(
    mrs: &mut MrTable,
    sgl: &[Sge],
    off: u32,
    bytes: &[u8],
    pd: crate::mr::Pd,
) -> bool {
    // Check everything first, then write.
    let lens: Vec<u32> = sgl.iter().map(|s| s.length).collect();
    let Some(pieces) = scatter_plan(&lens, off, bytes.len() as u32) else {
        return false;
    };
    let mut plan = Vec::new();
    for (i, skip, take) in pieces {
        let s = &sgl[i];
        let Ok(at) = mrs.check(
            s.lkey,
            pd,
            s.addr + u64::from(skip),
            take.into(),
            Access::LOCAL_WRITE,
        ) else {
            return false;
        };
        plan.push((s.lkey, at, take as usize));
    }
    let mut from = 0;
    for (key, at, n) in plan {
        mrs.write(key, at, &bytes[from..from + n]);
        from += n;
    }
    true
}

/// Sends what the QP may send now.
pub(crate) fn run(qp: &mut Qp, env: &mut Env<'_>) {
    while has_work(qp) {
        let cur = qp.req.cur;
        let wqe = &qp.sq[cur];
        let next_psn = match wqe.first_psn {
            Some(p) => psn::add(p, qp.req.pkt),
            None => qp.req.next_psn,
        };
        if qp.qp_type == QpType::Rc
            && psn::diff(next_psn, qp.comp.psn) >= env.cfg.max_unacked_psns as i32
        {
            return;
        }
        if wqe.first_psn.is_none() {
            let earlier = qp.sq.range(..cur);
            let rd_atomic_open = earlier
                .filter(|w| w.wr.opcode.is_read_or_atomic() && !w.done)
                .count();
            if wqe.wr.flags.contains(SendFlags::FENCE) && rd_atomic_open > 0 {
                return;
            }
            if wqe.wr.opcode.is_read_or_atomic()
                && rd_atomic_open >= usize::from(qp.attr.max_rd_atomic.max(1))
            {
                return;
            }
            if let Err(status) = check_local(env.mrs, qp, wqe) {
                completer::fail_at(qp, cur, status, env);
                return;
            }
            let n = wqe.npkts;
            qp.sq[cur].first_psn = Some(qp.req.next_psn);
            qp.req.next_psn = psn::add(qp.req.next_psn, n);
            qp.req.pkt = 0;
        }
        match qp.qp_type {
            QpType::Ud => send_ud(qp, env),
            QpType::Rc => send_rc_packet(qp, env),
        }
    }
}

fn send_ud(qp: &mut Qp, env: &mut Env<'_>) {
    let wqe = qp.sq.pop_front().expect("has_work");
    let dest = wqe.wr.ud.expect("checked at post");
    let with_imm = wqe.wr.opcode == WrOpcode::SendWithImm;
    let payload = gather(env.mrs, &wqe.wr.sg_list, 0, wqe.len, qp.pd);
    let qkey = if dest.remote_qkey & 0x8000_0000 != 0 {
        qp.attr.qkey
    } else {
        dest.remote_qkey
    };
    let mut b = bth(
        if with_imm {
            ops::UD_SEND_ONLY_IMM
        } else {
            ops::UD_SEND_ONLY
        },
        dest.remote_qpn,
        wqe.first_psn.expect("started"),
        false,
    );
    b.solicited = wqe.wr.flags.contains(SendFlags::SOLICITED);
    let ext = ExtHeaders {
        deth: Some(Deth {
            qkey,
            src_qp: qp.qpn,
            resv: 0,
        }),
        immdt: with_imm.then_some(wqe.wr.imm),
        ..Default::default()
    };
    env.send(qp.qpn, &dest.av, b, ext, payload);
    env.counters.req_packets += 1;
    qp.req.cur = 0;
    if wqe.signaled {
        let wc = completer::wc_for(qp, &wqe, WcStatus::Success);
        env.complete(qp.send_cq, wc);
    }
}

/// Sends packet `req.pkt` of WQE `req.cur`.
fn send_rc_packet(qp: &mut Qp, env: &mut Env<'_>) {
    let mtu = qp.mtu();
    let av = qp.attr.av.expect("an RC QP in RTS has an address vector");
    let cur = qp.req.cur;
    let k = qp.req.pkt;
    let wqe = &qp.sq[cur];
    let n = wqe.npkts;
    let first = wqe.first_psn.expect("started");
    let this_psn = psn::add(first, k);
    let op = wqe.wr.opcode;
    let mut ext = ExtHeaders::default();
    let mut payload = Vec::new();
    let last = op.is_read_or_atomic() || k + 1 == n;
    let opcode = if op.is_read_or_atomic() {
        if op == WrOpcode::RdmaRead {
            let off = k * mtu;
            ext.reth = Some(Reth {
                va: wqe.wr.remote_addr + u64::from(off),
                rkey: wqe.wr.rkey,
                dma_len: wqe.len - off.min(wqe.len),
            });
            ops::RC_READ_REQUEST
        } else {
            let (swap_add, compare) = if op == WrOpcode::AtomicCmpAndSwp {
                (wqe.wr.swap, wqe.wr.compare_add)
            } else {
                (wqe.wr.compare_add, 0)
            };
            ext.atomic_eth = Some(AtomicEth {
                va: wqe.wr.remote_addr,
                rkey: wqe.wr.rkey,
                swap_add,
                compare,
            });
            if op == WrOpcode::AtomicCmpAndSwp {
                ops::RC_COMPARE_SWAP
            } else {
                ops::RC_FETCH_ADD
            }
        }
    } else {
        let off = k * mtu;
        let take = (wqe.len - off.min(wqe.len)).min(mtu);
        payload = gather(env.mrs, &wqe.wr.sg_list, off, take, qp.pd);
        let imm = matches!(op, WrOpcode::SendWithImm | WrOpcode::RdmaWriteWithImm);
        let pos = if n == 1 {
            ops::Pos::Only
        } else if k == 0 {
            ops::Pos::First
        } else if k + 1 == n {
            ops::Pos::Last
        } else {
            ops::Pos::Middle
        };
        if op.is_write() && matches!(pos, ops::Pos::First | ops::Pos::Only) {
            ext.reth = Some(Reth {
                va: wqe.wr.remote_addr,
                rkey: wqe.wr.rkey,
                dma_len: wqe.len,
            });
        }
        if imm && matches!(pos, ops::Pos::Last | ops::Pos::Only) {
            ext.immdt = Some(wqe.wr.imm);
        }
        ops::send_write_opcode(op.is_write(), pos, imm)
    };
    let ack_req = last || qp.req.noack_pkts + 1 >= env.cfg.ack_every;
    qp.req.noack_pkts = if ack_req { 0 } else { qp.req.noack_pkts + 1 };
    let mut b = bth(opcode, qp.attr.dest_qpn, this_psn, ack_req);
    b.solicited = last && op.is_send() && wqe.wr.flags.contains(SendFlags::SOLICITED);
    env.send(qp.qpn, &av, b, ext, payload);
    if psn::lt(this_psn, qp.req.sent_upto) {
        env.counters.req_retransmitted += 1;
    } else {
        env.counters.req_packets += 1;
        // A READ request takes the PSNs of all its responses.
        let end = if op == WrOpcode::RdmaRead { n - k } else { 1 };
        qp.req.sent_upto = psn::add(this_psn, end);
    }
    if op.is_read_or_atomic() || k + 1 == n {
        qp.req.cur += 1;
        qp.req.pkt = 0;
    } else {
        qp.req.pkt += 1;
    }
    if qp.comp.timer.is_none() {
        qp.comp.timer = qp.ack_timeout_ns().map(|t| env.now + t);
    }
}
