//! Two hardware NICs ([`crate::rc_nic_sim`], Verilator) connected by a cable that loses,
//! duplicates, delays (reorders) and corrupts frames, each running a workload of RDMA WRITE,
//! READ and SEND on one RC queue pair to the other, as `rnic sim rdma` and the two-NIC tests
//! run them. Nothing but the hardware decides what goes on the wire: PSNs, ACKs, NAKs, the
//! ACK timer and go-back-N are the NICs' own; the bench only moves frames, posts work
//! requests (a bounded number outstanding) and takes completions.
//!
//! Each host's memory (device address = VA + [`DMA_OFFSET`], all in one protection domain):
//! - the local region at [`LOCAL_VA`]: slot `k` is message `k`'s source (a WRITE's or SEND's
//!   bytes, [`message_bytes`]) or destination (a READ's);
//! - the exposed region at [`EXPOSED_VA`], which the peer accesses: its first half receives
//!   the peer's WRITEs (slot `k` for the peer's message `k`), its second half holds
//!   [`exposed_bytes`] and is what the peer READs (never written);
//! - the receive region at [`RECV_VA`]: one buffer per receive posted, in order.
//!
//! At the end every message is checked against what it must have done: a completion with
//! status success, opcode and length its own, in order; a WRITE's bytes in the peer's
//! exposed region, a READ's in the local slot, a SEND's in the peer's next receive buffer
//! with a receive completion of its length. A message is *delivered* when its completions say
//! so, *intact* when its bytes are where they belong too.

use std::collections::VecDeque;
use std::net::Ipv4Addr;

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::PortDut;
use rnic_transport::mr::{MrInfo, Pd};
use rnic_transport::verbs::{
    Access, AddressVector, Mtu, QpAttr, QpState, QpType, RecvWr, SendFlags, SendWr, WcOpcode,
    WcStatus, WrOpcode,
};
use rnic_wire::MacAddr;

use crate::queues::{Completion, encode_recv, encode_send};
use crate::rc_nic_sim::RcNicSim;
use crate::tables::{QpContext, Table, encode_av, encode_mr, encode_qp};

pub const LOCAL_VA: u64 = 0x1000_0000;
pub const EXPOSED_VA: u64 = 0x4000_0000;
pub const RECV_VA: u64 = 0x8000_0000;
/// Device address of a VA: the host's buffers sit at VA + this.
pub const DMA_OFFSET: u64 = 0x7_0000_0000;
const SQ_BASE: u64 = 0x5_0000_0000;
const RQ_BASE: u64 = 0x6_0000_0000;
const RING_LOG: u32 = 8;
/// Key indices of the three regions (the same in both NICs' tables), and their tags.
const KEY_LOCAL: u32 = 1 << 8 | 0x31;
const KEY_EXPOSED: u32 = 2 << 8 | 0x52;
const KEY_RECV: u32 = 3 << 8 | 0x73;
const PD: u32 = 1;
/// Each host's QP row (its QPN).
const QPN: [usize; 2] = [2, 5];
/// Completion queues: sends, receives.
const SEND_CQ: u16 = 0;
const RECV_CQ: u16 = 1;

/// A run: the workload, the link, the NICs' settings.
#[derive(Clone, Debug)]
pub struct PairConfig {
    pub seed: u64,
    /// Messages per host.
    pub messages: usize,
    /// Largest message, bytes (lengths are drawn from 1 up to it, a quarter of them small).
    pub max_len: u32,
    pub mtu: Mtu,
    /// Operations each host keeps outstanding.
    pub outstanding: usize,
    /// Link: chance per frame of loss, duplication, delay (by three latencies: reordering)
    /// and corruption (one byte flipped after the Ethernet header).
    pub loss: f64,
    pub dup: f64,
    pub reorder: f64,
    pub corrupt: f64,
    /// One-way latency of the cable, clocks.
    pub latency: u64,
    /// AckReq every this many packets; unacknowledged PSNs at most; clocks per timer tick and
    /// the QPs' TIMEOUT code (the ACK timer: 2^TIMEOUT ticks).
    pub ack_every: u32,
    pub window: u32,
    pub tick: u16,
    pub timeout: u8,
    /// Give up after this many clocks.
    pub limit: u64,
    /// Chance per clock that a ready or offer of the host side stalls.
    pub stall: f64,
    /// Which opcodes the workload draws from (WRITE, READ, SEND).
    pub ops: [bool; 3],
    /// Every message this long (else drawn as `max_len` says).
    pub len: Option<u32>,
    /// Only the first NIC posts work (the second answers).
    pub one_way: bool,
}

impl Default for PairConfig {
    fn default() -> Self {
        PairConfig {
            seed: 1,
            messages: 48,
            max_len: 8192,
            mtu: Mtu::M1024,
            outstanding: 8,
            loss: 0.0,
            dup: 0.0,
            reorder: 0.0,
            corrupt: 0.0,
            latency: 200,
            ack_every: 4,
            window: 32,
            tick: 8,
            timeout: 10,
            limit: 20_000_000,
            stall: 0.0,
            ops: [true; 3],
            len: None,
            one_way: false,
        }
    }
}

/// One message of a host's workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    pub opcode: WrOpcode,
    pub len: u32,
    /// The clock it was posted and the clock its completion was taken.
    pub posted: Option<u64>,
    pub completed: Option<u64>,
}

/// A sample of the run's progress.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sample {
    pub cycle: u64,
    /// Message bytes completed so far, and packets sent again so far (both NICs).
    pub bytes: u64,
    pub retransmitted: u64,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct PairReport {
    pub cycles: u64,
    pub messages: usize,
    pub delivered: usize,
    pub intact: usize,
    /// Bytes of the messages delivered intact.
    pub bytes: u64,
    pub work: [Vec<Message>; 2],
    /// Frames each NIC sent, and what the cable did to them.
    pub frames: [u64; 2],
    pub lost: u64,
    pub duplicated: u64,
    pub reordered: u64,
    pub corrupted: u64,
    /// Each NIC's counters at the end.
    pub counters: [crate::rc_nic_sim::Counters; 2],
    /// Every frame on the cable (the clock it started, the sender, the bytes as sent).
    pub wire: Vec<(u64, usize, Vec<u8>)>,
    pub samples: Vec<Sample>,
    /// What was wrong with each message that was not delivered intact.
    pub errors: Vec<String>,
}

impl PairReport {
    /// Message bytes delivered intact per clock.
    pub fn goodput_bpc(&self) -> f64 {
        if self.cycles == 0 {
            0.0
        } else {
            self.bytes as f64 / self.cycles as f64
        }
    }

    /// Clocks from post to completion of every completed message of `opcode` (or all).
    pub fn latencies(&self, opcode: Option<WrOpcode>) -> Vec<u64> {
        self.work
            .iter()
            .flatten()
            .filter(|m| opcode.is_none_or(|o| o == m.opcode))
            .filter_map(|m| Some(m.completed? - m.posted?))
            .collect()
    }

    pub fn retransmitted(&self) -> u64 {
        self.counters.iter().map(|c| c.retransmitted).sum()
    }
}

/// The bytes message `msg` of host `host` sends (WRITE, SEND): every message's differ.
pub fn message_bytes(host: usize, msg: usize, len: usize) -> Vec<u8> {
    crate::pattern::bytes((host as u64) << 48 ^ msg as u64, len)
}

/// The readable half of host `host`'s exposed region.
pub fn exposed_bytes(host: usize, len: usize) -> Vec<u8> {
    crate::pattern::bytes(0xE000_0000_0000_0000 ^ (host as u64) << 48, len)
}

struct Host {
    work: Vec<Message>,
    next: usize,
    /// Messages posted and not yet completed, in order.
    open: VecDeque<usize>,
    /// Receive completions taken (byte length), in order.
    recvs: Vec<u32>,
    /// Send completions out of place or failed.
    errors: Vec<String>,
}

impl PairConfig {
    fn slot(&self) -> u64 {
        u64::from(self.max_len.max(self.len.unwrap_or(0))).next_multiple_of(4096)
    }

    fn draw(&self, host: usize) -> Vec<Message> {
        let mut rng = Rng::new(self.seed.wrapping_mul(7919) ^ host as u64);
        let kinds: Vec<WrOpcode> = [WrOpcode::RdmaWrite, WrOpcode::RdmaRead, WrOpcode::Send]
            .into_iter()
            .zip(self.ops)
            .filter_map(|(o, on)| on.then_some(o))
            .collect();
        let n = if self.one_way && host == 1 {
            0
        } else {
            self.messages
        };
        (0..n)
            .map(|_| {
                let opcode = kinds[rng.below(kinds.len() as u64) as usize];
                let len = if let Some(len) = self.len {
                    len
                } else if rng.chance(0.25) {
                    1 + rng.below(64) as u32
                } else {
                    1 + rng.below(u64::from(self.max_len)) as u32
                };
                Message {
                    opcode,
                    len,
                    posted: None,
                    completed: None,
                }
            })
            .collect()
    }
}

fn mac(host: usize) -> MacAddr {
    MacAddr([2, 0, 0, 0, 0, 0xA + host as u8])
}

fn ip(host: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, 1 + host as u8)
}

/// Sets up host `h`'s NIC: identity, tables, rings, regions, receive buffers for the peer's
/// SENDs, and its QP started.
fn set_up<D: PortDut>(
    nic: &mut RcNicSim<D>,
    cfg: &PairConfig,
    h: usize,
    peer_sends: &[u32],
) -> Result<(), String> {
    let e = |e: crate::transport::TransportError| e.to_string();
    let p = 1 - h;
    nic.set_identity(
        mac(h).to_u64(),
        u128::from_be_bytes(ip(h).to_ipv6_mapped().octets()),
        64,
    );
    nic.settings(cfg.ack_every, cfg.window, cfg.tick);
    let psn = |host: usize| (0xFF_FF00 + 37 * host as u32 + cfg.seed as u32 * 11) & 0xFF_FFFF;
    let attr = QpAttr {
        state: QpState::Rts,
        access: Access::REMOTE_WRITE | Access::REMOTE_READ | Access::REMOTE_ATOMIC,
        av: Some(AddressVector::new(mac(p), ip(h).into(), ip(p).into())),
        path_mtu: cfg.mtu,
        timeout: cfg.timeout,
        retry_cnt: 7,
        rnr_retry: 7,
        min_rnr_timer: 1,
        max_rd_atomic: 16,
        max_dest_rd_atomic: 16,
        dest_qpn: QPN[p] as u32,
        sq_psn: psn(h),
        rq_psn: psn(p),
        ..Default::default()
    };
    let ctx = QpContext {
        qp_type: QpType::Rc,
        pd: PD,
        pkey: 0xFFFF,
        send_cq: SEND_CQ.into(),
        recv_cq: RECV_CQ.into(),
        sig_all: false,
    };
    let row = QPN[h];
    nic.write_row(Table::QpAttributes, row, encode_qp(&attr, &ctx).map_err(e)?);
    let av = attr.av.as_ref().expect("a path");
    nic.write_row(
        Table::AddressVectors,
        row,
        encode_av(av, 0, row as u32).map_err(e)?,
    );
    let slot = cfg.slot();
    let n = cfg.messages as u64;
    let regions = [
        (KEY_LOCAL, LOCAL_VA, n * slot, Access::LOCAL_WRITE),
        (
            KEY_EXPOSED,
            EXPOSED_VA,
            2 * n * slot,
            Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ,
        ),
        (
            KEY_RECV,
            RECV_VA,
            (peer_sends.len() as u64).max(1) * slot,
            Access::LOCAL_WRITE,
        ),
    ];
    for (key, va, len, access) in regions {
        let mr = MrInfo {
            lkey: key,
            rkey: key,
            va,
            len,
            pd: Pd(PD),
            access,
        };
        nic.write_row(
            Table::MemoryRegions,
            (key >> 8) as usize,
            encode_mr(&mr, va + DMA_OFFSET).map_err(e)?,
        );
        let mut bytes = vec![0u8; len as usize];
        if key == KEY_EXPOSED {
            let half = (n * slot) as usize;
            bytes[half..].copy_from_slice(&exposed_bytes(h, half));
        }
        nic.map(va + DMA_OFFSET, &bytes);
    }
    nic.set_rings(
        row,
        SQ_BASE,
        RING_LOG,
        RQ_BASE,
        RING_LOG.max(usize::BITS - peer_sends.len().leading_zeros()),
    );
    for (j, &len) in peer_sends.iter().enumerate() {
        let wr = RecvWr::new(j as u64).sge(RECV_VA + j as u64 * slot, len.max(1), KEY_RECV);
        nic.post_recv(row, &encode_recv(&wr).map_err(e)?)?;
    }
    nic.init_qp(
        row,
        attr.rq_psn,
        attr.sq_psn,
        attr.retry_cnt,
        attr.rnr_retry,
    )
}

/// The work request of a host's message `k`.
fn request(cfg: &PairConfig, k: usize, m: &Message) -> SendWr {
    let slot = cfg.slot();
    let local = LOCAL_VA + k as u64 * slot;
    let n = cfg.messages as u64;
    let wr = SendWr::new(k as u64, m.opcode)
        .sge(local, m.len, KEY_LOCAL)
        .flags(SendFlags::SIGNALED);
    match m.opcode {
        WrOpcode::RdmaWrite => wr.remote(EXPOSED_VA + k as u64 * slot, KEY_EXPOSED),
        WrOpcode::RdmaRead => wr.remote(EXPOSED_VA + (n + k as u64) * slot, KEY_EXPOSED),
        _ => wr,
    }
}

/// Runs two NICs through the workload and the cable of `cfg`.
pub fn run_pair<D: PortDut>(
    mut nics: [RcNicSim<D>; 2],
    cfg: &PairConfig,
    mut progress: impl FnMut(&Sample),
) -> Result<PairReport, String> {
    let mut hosts: Vec<Host> = (0..2)
        .map(|h| Host {
            work: cfg.draw(h),
            next: 0,
            open: VecDeque::new(),
            recvs: Vec::new(),
            errors: Vec::new(),
        })
        .collect();
    for h in 0..2 {
        let peer_sends: Vec<u32> = hosts[1 - h]
            .work
            .iter()
            .filter(|m| m.opcode == WrOpcode::Send)
            .map(|m| m.len)
            .collect();
        set_up(&mut nics[h], cfg, h, &peer_sends)?;
    }
    // The NICs take their tables and starts before any work is posted.
    while !(nics[0].quiet() && nics[1].quiet()) {
        for n in nics.iter_mut() {
            n.step()?;
        }
    }
    let start = nics[0].ports.cycle;
    let mut report = PairReport {
        messages: hosts.iter().map(|x| x.work.len()).sum(),
        ..Default::default()
    };
    // The cable's faults, drawn per frame.
    let mut cable = Rng::new(cfg.seed ^ 0xCAB1E);
    // In flight: arrival clock, sequence, to host, bytes.
    let mut flight: Vec<(u64, u64, usize, Vec<u8>)> = Vec::new();
    let mut seq = 0u64;
    let mut bytes_done = 0u64;
    let sample_every = 2048u64;
    let want_recvs: Vec<usize> = (0..2)
        .map(|h| {
            hosts[1 - h]
                .work
                .iter()
                .filter(|m| m.opcode == WrOpcode::Send)
                .count()
        })
        .collect();
    loop {
        let now = nics[0].ports.cycle - start;
        let done = hosts.iter().enumerate().all(|(h, x)| {
            x.next == x.work.len() && x.open.is_empty() && x.recvs.len() == want_recvs[h]
        });
        let failed = hosts.iter().any(|x| !x.errors.is_empty());
        if (done || failed) && flight.is_empty() && nics.iter().all(|n| n.quiet()) {
            report.cycles = now;
            break;
        }
        if now >= cfg.limit {
            report.cycles = now;
            report.errors.push(format!(
                "not done after {} clocks: {} and {} of {} messages completed",
                cfg.limit,
                hosts[0]
                    .work
                    .iter()
                    .filter(|m| m.completed.is_some())
                    .count(),
                hosts[1]
                    .work
                    .iter()
                    .filter(|m| m.completed.is_some())
                    .count(),
                cfg.messages
            ));
            for (h, n) in nics.iter().enumerate() {
                report.errors.push(format!("NIC {h}: {}", n.waiting()));
            }
            break;
        }
        // Post while under the bound.
        for h in 0..2 {
            let x = &mut hosts[h];
            while x.next < x.work.len() && x.open.len() < cfg.outstanding {
                let k = x.next;
                let m = x.work[k];
                let slot = cfg.slot();
                if matches!(m.opcode, WrOpcode::RdmaWrite | WrOpcode::Send) {
                    let at = LOCAL_VA + k as u64 * slot + DMA_OFFSET;
                    nics[h].fill(at, &message_bytes(h, k, m.len as usize))?;
                }
                let wr = request(cfg, k, &m);
                let entry = encode_send(&wr, 0).map_err(|e| e.to_string())?;
                nics[h].post_send(QPN[h], &entry)?;
                x.work[k].posted = Some(now);
                x.open.push_back(k);
                x.next += 1;
            }
        }
        // Frames arriving now.
        flight.sort_by_key(|f| (f.0, f.1));
        while flight.first().is_some_and(|f| f.0 <= now) {
            let (_, _, to, bytes) = flight.remove(0);
            nics[to].receive(bytes);
        }
        for (h, nic) in nics.iter_mut().enumerate() {
            nic.step().map_err(|e| format!("NIC {h}: {e}"))?;
        }
        // Frames sent: onto the cable.
        for (h, nic) in nics.iter_mut().enumerate() {
            for (at, f) in nic.sent.drain(..) {
                let at = at - start;
                report.frames[h] += 1;
                report.wire.push((at, h, f.clone()));
                if cable.chance(cfg.loss) {
                    report.lost += 1;
                    continue;
                }
                let copies = if cable.chance(cfg.dup) {
                    report.duplicated += 1;
                    2
                } else {
                    1
                };
                for _ in 0..copies {
                    let mut f = f.clone();
                    let mut arrive = at + cfg.latency + f.len().div_ceil(8) as u64;
                    if cable.chance(cfg.reorder) {
                        report.reordered += 1;
                        arrive += 3 * cfg.latency;
                    }
                    if cable.chance(cfg.corrupt) {
                        report.corrupted += 1;
                        let i = 14 + cable.below(f.len() as u64 - 14) as usize;
                        f[i] ^= 1 << cable.below(8);
                    }
                    flight.push((arrive, seq, 1 - h, f));
                    seq += 1;
                }
            }
        }
        // Completions.
        for h in 0..2 {
            for (cq, e) in nics[h].cqes.drain(..) {
                let c = Completion::decode(&e)
                    .map_err(|(f, v)| format!("NIC {h}: a completion with {f} {v:#x}"))?;
                let x = &mut hosts[h];
                if cq == RECV_CQ {
                    if c.status != WcStatus::Success || c.opcode != WcOpcode::Recv {
                        x.errors.push(format!(
                            "host {h}: receive {} completed {:?} {:?}",
                            x.recvs.len(),
                            c.status,
                            c.opcode
                        ));
                    }
                    x.recvs.push(c.byte_len);
                    continue;
                }
                let Some(k) = x.open.pop_front() else {
                    x.errors
                        .push(format!("host {h}: a completion of nothing posted: {c:?}"));
                    continue;
                };
                let m = x.work[k];
                let want = match m.opcode {
                    WrOpcode::RdmaWrite => WcOpcode::RdmaWrite,
                    WrOpcode::RdmaRead => WcOpcode::RdmaRead,
                    _ => WcOpcode::Send,
                };
                if c.wr_id != k as u64 || c.status != WcStatus::Success || c.opcode != want {
                    x.errors.push(format!(
                        "host {h} message {k} ({:?}, {} bytes): completed as wr_id {} {:?} {:?}",
                        m.opcode, m.len, c.wr_id, c.status, c.opcode
                    ));
                    continue;
                }
                x.work[k].completed = Some(now);
                bytes_done += u64::from(m.len);
            }
        }
        if now % sample_every == 0 {
            let s = Sample {
                cycle: now,
                bytes: bytes_done,
                retransmitted: nics.iter().map(|n| n.counters().retransmitted).sum(),
            };
            progress(&s);
            report.samples.push(s);
        }
    }
    report.samples.push(Sample {
        cycle: report.cycles,
        bytes: bytes_done,
        retransmitted: nics.iter().map(|n| n.counters().retransmitted).sum(),
    });
    report.counters = [nics[0].counters(), nics[1].counters()];
    check(&nics, cfg, &mut hosts, &mut report);
    report.work = [
        std::mem::take(&mut hosts[0].work),
        std::mem::take(&mut hosts[1].work),
    ];
    Ok(report)
}

/// Checks every message's bytes where they belong.
fn check<D: PortDut>(
    nics: &[RcNicSim<D>; 2],
    cfg: &PairConfig,
    hosts: &mut [Host],
    report: &mut PairReport,
) {
    let slot = cfg.slot();
    let n = cfg.messages as u64;
    for x in hosts.iter_mut() {
        report.errors.append(&mut x.errors);
    }
    for h in 0..2 {
        let p = 1 - h;
        let mut sends = 0usize;
        for (k, m) in hosts[h].work.iter().enumerate() {
            let len = m.len as usize;
            let delivered = m.completed.is_some()
                && (m.opcode != WrOpcode::Send || hosts[p].recvs.get(sends).is_some());
            let (got, want) = match m.opcode {
                WrOpcode::RdmaWrite => (
                    nics[p].read(EXPOSED_VA + DMA_OFFSET + k as u64 * slot, len),
                    message_bytes(h, k, len),
                ),
                WrOpcode::RdmaRead => {
                    let from = (n + k as u64) * slot;
                    let all = exposed_bytes(p, (n * slot) as usize);
                    let off = (from - n * slot) as usize;
                    (
                        nics[h].read(LOCAL_VA + DMA_OFFSET + k as u64 * slot, len),
                        all[off..off + len].to_vec(),
                    )
                }
                _ => {
                    let j = sends;
                    sends += 1;
                    let rlen = hosts[p].recvs.get(j).copied();
                    let got = nics[p].read(RECV_VA + DMA_OFFSET + j as u64 * slot, len);
                    if delivered && rlen != Some(m.len) {
                        report.errors.push(format!(
                            "host {h} message {k} (SEND, {len} bytes): received as {rlen:?} bytes"
                        ));
                        continue;
                    }
                    (got, message_bytes(h, k, len))
                }
            };
            if !delivered {
                continue;
            }
            report.delivered += 1;
            if got == Some(&want[..]) {
                report.intact += 1;
                report.bytes += m.len as u64;
            } else {
                report.errors.push(format!(
                    "host {h} message {k} ({:?}, {len} bytes): the bytes differ",
                    m.opcode
                ));
            }
        }
    }
}
