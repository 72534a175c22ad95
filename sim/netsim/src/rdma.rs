//! RDMA over the simulated network: an [`RdmaHost`] is an endpoint that hosts one model NIC
//! ([`rnic_transport::Nic`]) and a workload on one RC queue pair connected to a peer. The
//! workload posts a list of operations (SEND, WRITE, READ, atomics, with or without immediate)
//! with a bounded number outstanding, keeps receive buffers posted, and records every
//! completion and every receive-side delivery. The NIC is polled whenever a frame arrives and
//! at its next timer deadline, so retransmission timers, RNR waits and go-back-N run exactly as
//! the model has them, over links that lose, reorder, duplicate or corrupt frames.
//!
//! [`run_pair`] builds the two-host network (two endpoints, one cable) and runs it until both
//! workloads are done.
//!
//! Memory of each host, all in one protection domain:
//! - the local region at [`LOCAL_VA`]: one slot per outstanding operation, holding the bytes a
//!   SEND or WRITE sends (filled with [`pattern`] when the operation is posted) or receiving the
//!   bytes of a READ or the original value of an atomic (little-endian);
//! - the exposed region at [`EXPOSED_VA`], which the peer WRITEs, READs and updates
//!   atomically; it starts as [`exposed_init`] (its first 64 bytes zero);
//! - the receive region at [`RECV_VA`]: one buffer per posted receive.

use std::any::Any;
use std::collections::VecDeque;
use std::net::IpAddr;

use rnic_transport::{
    Access, AddressVector, AttrMask, MrInfo, MrSpec, Nic, NicConfig, QpAttr, QpCap, QpInit, QpType,
    RecvWr, SendFlags, SendWr,
};
/// The transport model's vocabulary that workloads and their results use.
pub use rnic_transport::{Counters, Mtu, QpState, WcOpcode, WcStatus, WrOpcode};

use crate::endpoint::{Ctx, Endpoint};
use crate::event::{NodeId, Time};
use crate::link::{LinkConfig, LinkStats};
use crate::network::{Counters as NetCounters, Network};
use crate::packet::{HostAddr, Packet};

/// Virtual address of the local region (send sources, READ and atomic results).
pub const LOCAL_VA: u64 = 0x1000_0000;
/// Virtual address of the region the peer accesses.
pub const EXPOSED_VA: u64 = 0x4000_0000;
/// Virtual address of the receive buffers.
pub const RECV_VA: u64 = 0x8000_0000;

/// SplitMix64's finalizer: a cheap, well-mixed function of one word.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn fill(tag: u64, out: &mut [u8]) {
    let base = mix(tag);
    for (k, chunk) in out.chunks_mut(8).enumerate() {
        let w = mix(base ^ k as u64).to_le_bytes();
        chunk.copy_from_slice(&w[..chunk.len()]);
    }
}

/// Fills `out` with the payload of operation `msg` of host `host`: every message's bytes
/// differ from every other's, so a lost, repeated, reordered or shifted segment shows.
pub fn fill_pattern(host: usize, msg: usize, out: &mut [u8]) {
    fill((host as u64) << 48 ^ msg as u64, out);
}

/// The payload of operation `msg` of host `host` (see [`fill_pattern`]).
pub fn pattern(host: usize, msg: usize, len: usize) -> Vec<u8> {
    let mut v = vec![0; len];
    fill_pattern(host, msg, &mut v);
    v
}

/// Bytes at the start of the exposed region that start zero (counters for atomics).
pub const EXPOSED_ZEROED: usize = 64;

/// The initial contents of host `host`'s exposed region: [`EXPOSED_ZEROED`] zero bytes, then
/// a pattern of the host's own.
pub fn exposed_init(host: usize, len: usize) -> Vec<u8> {
    let mut v = vec![0; len];
    if len > EXPOSED_ZEROED {
        fill(
            0xE000_0000_0000_0000 ^ (host as u64) << 48,
            &mut v[EXPOSED_ZEROED..],
        );
    }
    v
}

/// The immediate data a `*_WITH_IMM` operation `msg` of host `host` carries.
pub fn imm_of(host: usize, msg: usize) -> u32 {
    (host as u32) << 31 | (msg as u32 & 0x7FFF_FFFF)
}

/// One operation of a workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    pub opcode: WrOpcode,
    /// Bytes sent, written or read (8 for the atomics).
    pub len: u32,
    /// Offset in the peer's exposed region (WRITE, READ, atomics; 8-aligned for atomics).
    pub remote_off: u64,
    /// FETCH_AND_ADD addend, CMP_AND_SWP compare value.
    pub compare_add: u64,
    /// CMP_AND_SWP swap value.
    pub swap: u64,
    /// Sets IBV_SEND_FENCE: wait for earlier READs and atomics to complete first.
    pub fence: bool,
}

impl Op {
    fn new(opcode: WrOpcode, len: u32, remote_off: u64) -> Op {
        Op {
            opcode,
            len,
            remote_off,
            compare_add: 0,
            swap: 0,
            fence: false,
        }
    }

    pub fn send(len: u32) -> Op {
        Op::new(WrOpcode::Send, len, 0)
    }

    pub fn send_imm(len: u32) -> Op {
        Op::new(WrOpcode::SendWithImm, len, 0)
    }

    pub fn write(remote_off: u64, len: u32) -> Op {
        Op::new(WrOpcode::RdmaWrite, len, remote_off)
    }

    pub fn write_imm(remote_off: u64, len: u32) -> Op {
        Op::new(WrOpcode::RdmaWriteWithImm, len, remote_off)
    }

    pub fn read(remote_off: u64, len: u32) -> Op {
        Op::new(WrOpcode::RdmaRead, len, remote_off)
    }

    pub fn fetch_add(remote_off: u64, add: u64) -> Op {
        Op {
            compare_add: add,
            ..Op::new(WrOpcode::AtomicFetchAndAdd, 8, remote_off)
        }
    }

    pub fn cmp_swap(remote_off: u64, compare: u64, swap: u64) -> Op {
        Op {
            compare_add: compare,
            swap,
            ..Op::new(WrOpcode::AtomicCmpAndSwp, 8, remote_off)
        }
    }

    /// The same operation with IBV_SEND_FENCE.
    pub fn fenced(self) -> Op {
        Op {
            fence: true,
            ..self
        }
    }

    /// True when the operation touches the peer's exposed region.
    pub fn is_remote(&self) -> bool {
        !self.opcode.is_send()
    }
}

/// What one host does, and how its QP is set up.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Posted in order, as the bound on outstanding operations allows.
    pub ops: Vec<Op>,
    /// Operations posted and not yet completed, at most.
    pub max_outstanding: usize,
    /// Receive work requests kept posted.
    pub recv_slots: usize,
    /// Bytes of each receive buffer.
    pub recv_len: u32,
    /// A consumed receive buffer is posted again this long after its completion (`None`: at
    /// once). A delay lets the receive queue run dry, so the peer meets RNR NAKs.
    pub repost_delay_ns: Option<Time>,
    /// Bytes of the peer's exposed region, which this workload's operations access (the peer
    /// registers that much).
    pub exposed_len: u64,
    pub path_mtu: Mtu,
    /// Local ACK timeout exponent (4.096 us x 2^timeout).
    pub timeout: u8,
    /// 7 is infinite.
    pub retry_cnt: u8,
    /// 7 is infinite.
    pub rnr_retry: u8,
    pub min_rnr_timer: u8,
    /// READs and atomics this host keeps outstanding (the peer keeps as many responder
    /// resources for it; 1..=16).
    pub max_rd_atomic: u8,
    /// First PSN this host sends (the peer expects it).
    pub start_psn: u32,
    /// Keep the bytes of each receive, READ and atomic result in the records (for checks;
    /// benchmarks turn it off).
    pub keep_data: bool,
}

impl Workload {
    /// `ops` with 16 outstanding, 32 receives of 64 KiB, a 256 KiB exposed region, path MTU
    /// 1024, a 1 ms ACK timeout and infinite retries.
    pub fn new(ops: Vec<Op>) -> Workload {
        Workload {
            ops,
            max_outstanding: 16,
            recv_slots: 32,
            recv_len: 64 << 10,
            repost_delay_ns: None,
            exposed_len: 256 << 10,
            path_mtu: Mtu::M1024,
            timeout: 8,
            retry_cnt: 7,
            rnr_retry: 7,
            min_rnr_timer: 1,
            max_rd_atomic: 16,
            start_psn: 0,
            keep_data: true,
        }
    }

    /// Checks that every operation fits the regions.
    pub fn check(&self) -> anyhow::Result<()> {
        if self.max_outstanding == 0 || self.recv_slots == 0 {
            anyhow::bail!("max_outstanding and recv_slots must be at least 1");
        }
        for (i, op) in self.ops.iter().enumerate() {
            if op.opcode.is_atomic() && (op.len != 8 || op.remote_off % 8 != 0) {
                anyhow::bail!("op {i}: an atomic is 8 bytes at an 8-aligned offset");
            }
            if op.is_remote() && op.remote_off + u64::from(op.len) > self.exposed_len {
                anyhow::bail!(
                    "op {i}: {} bytes at {} are outside the {}-byte exposed region",
                    op.len,
                    op.remote_off,
                    self.exposed_len
                );
            }
        }
        Ok(())
    }

    fn slot_len(&self) -> u64 {
        self.ops
            .iter()
            .map(|o| u64::from(o.len))
            .max()
            .unwrap_or(0)
            .max(8)
            .next_multiple_of(8)
    }
}

/// A completed send work request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendRecord {
    /// The operation's index in the workload.
    pub wr_id: u64,
    pub status: WcStatus,
    pub opcode: WcOpcode,
    pub byte_len: u32,
    /// Completion time, ns.
    pub at_ns: Time,
    /// READ: the bytes placed; atomics: the original value (8 bytes, little-endian); empty
    /// otherwise or without `keep_data`.
    pub data: Vec<u8>,
}

/// A receive completion (a SEND, or a WRITE with immediate, from the peer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecvRecord {
    pub wr_id: u64,
    pub status: WcStatus,
    pub opcode: WcOpcode,
    pub byte_len: u32,
    pub imm: Option<u32>,
    pub at_ns: Time,
    /// The bytes received (SEND), with `keep_data`.
    pub data: Vec<u8>,
}

/// What a host tells its peer to connect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerInfo {
    pub addr: HostAddr,
    pub qpn: u32,
    pub rkey: u32,
    pub va: u64,
    pub start_psn: u32,
    /// READs and atomics its requester keeps outstanding: the responder resources to keep.
    pub max_rd_atomic: u8,
}

/// A host running one model NIC and a workload on one RC QP.
pub struct RdmaHost {
    /// 0 or 1: the host's number in patterns.
    pub index: usize,
    pub addr: HostAddr,
    nic: Nic,
    qpn: u32,
    cq: usize,
    local: MrInfo,
    exposed: MrInfo,
    recv: MrInfo,
    slot_len: u64,
    peer: Option<PeerInfo>,
    wl: Workload,
    next_op: usize,
    outstanding: usize,
    recv_seq: u64,
    /// Receive slots waiting to be posted again, with their time (in time order).
    reposts: VecDeque<(Time, usize)>,
    wake_pending: Option<Time>,
    /// Send completions, in completion order.
    pub sent: Vec<SendRecord>,
    /// Receive completions, in completion order.
    pub received: Vec<RecvRecord>,
    /// post_send / post_recv refusals (a workload error).
    pub post_errors: Vec<String>,
    /// Frames handed to the NIC and taken from it.
    pub frames_in: u64,
    pub frames_out: u64,
    /// Frames the NIC sent that are not RoCEv2 (not put on the network).
    pub frames_not_sent: u64,
    done_at: Option<Time>,
}

/// Bits of a receive wr_id that hold its buffer slot.
const RECV_SLOT_BITS: u32 = 20;

impl RdmaHost {
    /// A host with its NIC, regions (an exposed region of `exposed_len` bytes: the peer
    /// workload's), CQ and QP (in INIT); [`RdmaHost::connect`] finishes the setup.
    pub fn new(
        index: usize,
        addr: HostAddr,
        wl: Workload,
        exposed_len: u64,
    ) -> anyhow::Result<RdmaHost> {
        wl.check()?;
        if wl.recv_slots >= 1 << RECV_SLOT_BITS {
            anyhow::bail!("at most {} receive slots", 1 << RECV_SLOT_BITS);
        }
        let mut nic = Nic::new(NicConfig::new(addr.mac, IpAddr::V4(addr.ip)));
        let pd = nic.alloc_pd();
        let slot_len = wl.slot_len();
        let reg = |nic: &mut Nic, va: u64, len: u64, access: Access| {
            nic.reg_mr(MrSpec {
                pd,
                va,
                len: len.max(8),
                access,
                key: None,
            })
        };
        let local = reg(
            &mut nic,
            LOCAL_VA,
            slot_len * wl.max_outstanding as u64,
            Access::LOCAL_WRITE,
        )?;
        let exposed = reg(
            &mut nic,
            EXPOSED_VA,
            exposed_len,
            Access::LOCAL_WRITE
                | Access::REMOTE_WRITE
                | Access::REMOTE_READ
                | Access::REMOTE_ATOMIC,
        )?;
        let recv = reg(
            &mut nic,
            RECV_VA,
            u64::from(wl.recv_len) * wl.recv_slots as u64,
            Access::LOCAL_WRITE,
        )?;
        let init = exposed_init(index, exposed.len as usize);
        nic.mr_bytes_mut(exposed.lkey)
            .expect("just registered")
            .copy_from_slice(&init[..]);
        let cq = nic.create_cq((wl.max_outstanding + wl.recv_slots) * 2 + 64)?;
        let mut qi = QpInit::new(QpType::Rc, pd, cq);
        qi.cap = QpCap {
            max_send_wr: wl.max_outstanding as u32,
            max_recv_wr: wl.recv_slots as u32,
            max_send_sge: 1,
            max_recv_sge: 1,
            max_inline_data: 0,
        };
        let qpn = nic.create_qp(&qi)?;
        let attr = QpAttr {
            state: QpState::Init,
            access: Access::REMOTE_WRITE | Access::REMOTE_READ | Access::REMOTE_ATOMIC,
            ..Default::default()
        };
        nic.modify_qp(qpn, &attr, AttrMask::STATE | AttrMask::RC_INIT)?;
        Ok(RdmaHost {
            index,
            addr,
            nic,
            qpn,
            cq,
            local,
            exposed,
            recv,
            slot_len,
            peer: None,
            wl,
            next_op: 0,
            outstanding: 0,
            recv_seq: 0,
            reposts: VecDeque::new(),
            wake_pending: None,
            sent: Vec::new(),
            received: Vec::new(),
            post_errors: Vec::new(),
            frames_in: 0,
            frames_out: 0,
            frames_not_sent: 0,
            done_at: None,
        })
    }

    /// What the peer needs to connect to this host.
    pub fn info(&self) -> PeerInfo {
        PeerInfo {
            addr: self.addr,
            qpn: self.qpn,
            rkey: self.exposed.rkey,
            va: EXPOSED_VA,
            start_psn: self.wl.start_psn,
            max_rd_atomic: self.wl.max_rd_atomic,
        }
    }

    /// Posts the receives and takes the QP through RTR to RTS towards `peer`.
    pub fn connect(&mut self, peer: PeerInfo) -> anyhow::Result<()> {
        for slot in 0..self.wl.recv_slots {
            self.post_recv(slot)?;
        }
        let wl = &self.wl;
        let attr = QpAttr {
            state: QpState::Rtr,
            av: Some(AddressVector::new(
                peer.addr.mac,
                IpAddr::V4(self.addr.ip),
                IpAddr::V4(peer.addr.ip),
            )),
            path_mtu: wl.path_mtu,
            dest_qpn: peer.qpn,
            rq_psn: peer.start_psn,
            max_dest_rd_atomic: peer.max_rd_atomic,
            min_rnr_timer: wl.min_rnr_timer,
            ..Default::default()
        };
        self.nic
            .modify_qp(self.qpn, &attr, AttrMask::STATE | AttrMask::RC_RTR)?;
        let attr = QpAttr {
            state: QpState::Rts,
            sq_psn: wl.start_psn,
            timeout: wl.timeout,
            retry_cnt: wl.retry_cnt,
            rnr_retry: wl.rnr_retry,
            max_rd_atomic: wl.max_rd_atomic,
            ..Default::default()
        };
        self.nic
            .modify_qp(self.qpn, &attr, AttrMask::STATE | AttrMask::RC_RTS)?;
        self.peer = Some(peer);
        Ok(())
    }

    fn post_recv(&mut self, slot: usize) -> anyhow::Result<()> {
        let wr_id = self.recv_seq << RECV_SLOT_BITS | slot as u64;
        self.recv_seq += 1;
        let len = self.wl.recv_len;
        let wr =
            RecvWr::new(wr_id).sge(RECV_VA + slot as u64 * u64::from(len), len, self.recv.lkey);
        self.nic.post_recv(self.qpn, wr)?;
        Ok(())
    }

    /// The model NIC.
    pub fn nic(&self) -> &Nic {
        &self.nic
    }

    /// The NIC's counters.
    pub fn counters(&self) -> &Counters {
        &self.nic.counters
    }

    /// The QP's number.
    pub fn qpn(&self) -> u32 {
        self.qpn
    }

    /// The QP's state.
    pub fn qp_state(&self) -> QpState {
        self.nic.qp(self.qpn).map_or(QpState::Reset, |q| q.state())
    }

    /// The workload.
    pub fn workload(&self) -> &Workload {
        &self.wl
    }

    /// The exposed region's bytes now.
    pub fn exposed(&self) -> &[u8] {
        self.nic.mr_bytes(self.exposed.lkey).expect("registered")
    }

    /// Every operation posted and completed (or the QP went to ERR and nothing is left).
    pub fn done(&self) -> bool {
        self.done_at.is_some()
    }

    /// When the last operation completed.
    pub fn done_at(&self) -> Option<Time> {
        self.done_at
    }

    fn local_addr(&self, op_index: usize) -> u64 {
        LOCAL_VA + (op_index % self.wl.max_outstanding) as u64 * self.slot_len
    }

    /// Posts operations while the bound allows; returns how many.
    fn post_more(&mut self) -> usize {
        let Some(peer) = self.peer else {
            return 0;
        };
        let mut n = 0;
        while self.next_op < self.wl.ops.len()
            && self.outstanding < self.wl.max_outstanding
            && self.post_errors.is_empty()
            && self.qp_state() == QpState::Rts
        {
            let i = self.next_op;
            let op = self.wl.ops[i];
            let addr = self.local_addr(i);
            if matches!(op.opcode, WrOpcode::Send | WrOpcode::SendWithImm) || op.opcode.is_write() {
                let at = (addr - LOCAL_VA) as usize;
                let mem = self.nic.mr_bytes_mut(self.local.lkey).expect("registered");
                fill_pattern(self.index, i, &mut mem[at..at + op.len as usize]);
            }
            let mut flags = SendFlags::SIGNALED;
            if op.fence {
                flags |= SendFlags::FENCE;
            }
            let mut wr = SendWr::new(i as u64, op.opcode).flags(flags);
            if op.len > 0 {
                wr = wr.sge(addr, op.len, self.local.lkey);
            }
            if op.is_remote() {
                wr = wr.remote(peer.va + op.remote_off, peer.rkey);
            }
            if matches!(
                op.opcode,
                WrOpcode::SendWithImm | WrOpcode::RdmaWriteWithImm
            ) {
                wr = wr.imm(imm_of(self.index, i));
            }
            if op.opcode.is_atomic() {
                wr = wr.atomic(op.compare_add, op.swap);
            }
            match self.nic.post_send(self.qpn, wr) {
                Ok(()) => {
                    self.next_op += 1;
                    self.outstanding += 1;
                    n += 1;
                }
                Err(e) => self.post_errors.push(format!("op {i}: {e}")),
            }
        }
        n
    }

    /// Takes every completion; returns how many.
    fn drain_cq(&mut self, now: Time) -> usize {
        let mut n = 0;
        loop {
            let wcs = self.nic.poll_cq(self.cq, 64);
            if wcs.is_empty() {
                return n;
            }
            n += wcs.len();
            for wc in wcs {
                if matches!(wc.opcode, WcOpcode::Recv | WcOpcode::RecvRdmaWithImm) {
                    let slot = (wc.wr_id & ((1 << RECV_SLOT_BITS) - 1)) as usize;
                    let data = if self.wl.keep_data
                        && wc.status == WcStatus::Success
                        && wc.opcode == WcOpcode::Recv
                    {
                        let at = slot * self.wl.recv_len as usize;
                        let mem = self.nic.mr_bytes(self.recv.lkey).expect("registered");
                        mem[at..at + wc.byte_len as usize].to_vec()
                    } else {
                        Vec::new()
                    };
                    let with_imm = wc.flags.contains(rnic_transport::WcFlags::WITH_IMM);
                    self.received.push(RecvRecord {
                        wr_id: wc.wr_id,
                        status: wc.status,
                        opcode: wc.opcode,
                        byte_len: wc.byte_len,
                        imm: with_imm.then_some(wc.imm),
                        at_ns: now,
                        data,
                    });
                    if self.qp_state() != QpState::Err {
                        match self.wl.repost_delay_ns {
                            Some(d) => self.reposts.push_back((now + d, slot)),
                            None => self.repost(slot),
                        }
                    }
                } else {
                    let i = wc.wr_id as usize;
                    let op = self.wl.ops.get(i).copied();
                    let data = match op {
                        Some(op)
                            if self.wl.keep_data
                                && wc.status == WcStatus::Success
                                && op.opcode.is_read_or_atomic() =>
                        {
                            let at = (self.local_addr(i) - LOCAL_VA) as usize;
                            let mem = self.nic.mr_bytes(self.local.lkey).expect("registered");
                            mem[at..at + op.len as usize].to_vec()
                        }
                        _ => Vec::new(),
                    };
                    self.outstanding = self.outstanding.saturating_sub(1);
                    self.sent.push(SendRecord {
                        wr_id: wc.wr_id,
                        status: wc.status,
                        opcode: wc.opcode,
                        byte_len: wc.byte_len,
                        at_ns: now,
                        data,
                    });
                }
            }
        }
    }

    fn repost(&mut self, slot: usize) {
        if let Err(e) = self.post_recv(slot) {
            self.post_errors.push(e.to_string());
        }
    }

    /// Posts, polls the NIC, sends its frames and takes completions until nothing changes;
    /// then asks to be woken at the NIC's next deadline (or the next delayed receive).
    fn pump(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        while let Some(&(t, slot)) = self.reposts.front() {
            if t > now {
                break;
            }
            self.reposts.pop_front();
            if self.qp_state() != QpState::Err {
                self.repost(slot);
            }
        }
        loop {
            let posted = self.post_more();
            for f in self.nic.poll(now) {
                // The network carries RoCEv2 frames only (the model's ARP replies stay here).
                match Packet::from_frame(f) {
                    Ok(pkt) => {
                        self.frames_out += 1;
                        ctx.send(pkt);
                    }
                    Err(_) => self.frames_not_sent += 1,
                }
            }
            let completed = self.drain_cq(now);
            if posted == 0 && completed == 0 {
                break;
            }
        }
        if self.done_at.is_none() {
            let all = self.next_op == self.wl.ops.len() && self.outstanding == 0;
            let dead = self.qp_state() == QpState::Err && self.outstanding == 0;
            if all || dead || !self.post_errors.is_empty() {
                self.done_at = Some(now);
            }
        }
        let next = match (self.nic.next_deadline(), self.reposts.front()) {
            (Some(d), Some(&(t, _))) => Some(d.min(t)),
            (d, r) => d.or(r.map(|&(t, _)| t)),
        };
        if let Some(d) = next {
            if self.wake_pending.is_none_or(|w| d < w) {
                self.wake_pending = Some(d);
                ctx.wake_at(d, d);
            }
        }
    }
}

impl Endpoint for RdmaHost {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        self.pump(ctx);
    }

    fn receive(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) {
        self.frames_in += 1;
        self.nic.receive(ctx.now(), &pkt.frame);
        self.pump(ctx);
    }

    fn wake(&mut self, token: u64, ctx: &mut Ctx<'_>) {
        if self.wake_pending == Some(token) {
            self.wake_pending = None;
        }
        self.pump(ctx);
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// One host's results after a run.
#[derive(Clone, Debug)]
pub struct HostReport {
    pub sent: Vec<SendRecord>,
    pub received: Vec<RecvRecord>,
    pub post_errors: Vec<String>,
    pub counters: Counters,
    /// The exposed region at the end.
    pub exposed: Vec<u8>,
    pub qp_state: QpState,
    pub done_at: Option<Time>,
    pub frames_in: u64,
    pub frames_out: u64,
}

impl HostReport {
    fn of(h: &RdmaHost) -> HostReport {
        HostReport {
            sent: h.sent.clone(),
            received: h.received.clone(),
            post_errors: h.post_errors.clone(),
            counters: h.nic.counters.clone(),
            exposed: h.exposed().to_vec(),
            qp_state: h.qp_state(),
            done_at: h.done_at,
            frames_in: h.frames_in,
            frames_out: h.frames_out,
        }
    }
}

/// The results of a two-host run.
#[derive(Clone, Debug)]
pub struct PairRun {
    /// Host 0 and host 1.
    pub hosts: [HostReport; 2],
    /// The cable's two directions: host 0 to 1, host 1 to 0.
    pub links: [LinkStats; 2],
    pub net: NetCounters,
    /// Simulated time when both workloads were done (or when the run stopped).
    pub sim_ns: Time,
    /// Both workloads finished before the limit.
    pub finished: bool,
    /// The run stopped unfinished with nothing left to happen: no frame in flight and no
    /// timer running (the transport is stuck, not slow).
    pub stuck: bool,
}

/// Builds two [`RdmaHost`]s (host 0 runs `w0`, host 1 runs `w1`), connected to each other and
/// added to `net` joined by one cable with `link`. Returns their node ids.
pub fn build_pair(
    net: &mut Network,
    link: LinkConfig,
    w0: Workload,
    w1: Workload,
) -> anyhow::Result<(NodeId, NodeId)> {
    let (a0, a1) = (HostAddr::host(0), HostAddr::host(1));
    let (x0, x1) = (w1.exposed_len, w0.exposed_len);
    let mut h0 = RdmaHost::new(0, a0, w0, x0)?;
    let mut h1 = RdmaHost::new(1, a1, w1, x1)?;
    let (i0, i1) = (h0.info(), h1.info());
    h0.connect(i1)?;
    h1.connect(i0)?;
    let n0 = net.add_host(a0, Box::new(h0));
    let n1 = net.add_host(a1, Box::new(h1));
    net.connect(n0, n1, link)?;
    Ok((n0, n1))
}

/// Runs two hosts (workloads `w0`, `w1`) over one cable with `link`, the faults drawn from
/// `seed`, until both workloads are done, nothing is left to happen, or the next event is past
/// `limit_ns`.
pub fn run_pair(
    seed: u64,
    link: LinkConfig,
    w0: Workload,
    w1: Workload,
    limit_ns: Time,
) -> anyhow::Result<PairRun> {
    let mut net = Network::new(seed);
    let (n0, n1) = build_pair(&mut net, link, w0, w1)?;
    fn host(net: &Network, n: NodeId) -> &RdmaHost {
        net.endpoint::<RdmaHost>(n).expect("an RdmaHost")
    }
    // Event time by event time, so the run stops at the last completion; an empty event
    // queue with work left means the hosts are stuck (no frame in flight, no timer running).
    net.run_until(0);
    let mut finished = false;
    loop {
        if host(&net, n0).done() && host(&net, n1).done() {
            finished = true;
            break;
        }
        match net.next_event_time() {
            Some(t) if t <= limit_ns => net.run_until(t),
            _ => break,
        }
    }
    let (h0, h1) = (host(&net, n0), host(&net, n1));
    let sim_ns = match (h0.done_at, h1.done_at) {
        (Some(a), Some(b)) => a.max(b),
        _ => net.now(),
    };
    let links = [
        net.port(n0, 0).expect("connected").link.stats,
        net.port(n1, 0).expect("connected").link.stats,
    ];
    Ok(PairRun {
        hosts: [HostReport::of(h0), HostReport::of(h1)],
        links,
        net: net.counters,
        sim_ns,
        finished,
        stuck: !finished && net.next_event_time().is_none(),
    })
}
