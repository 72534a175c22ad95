//! The hardware responder (`rnic_hw::responder`, rust-hdl and Verilator in lock-step) against
//! the transport model's responder, on what the model's requester sends: two model NICs run
//! random RDMA WRITEs, READs and atomics (any length and offset, several MTUs, PSNs about to
//! wrap, 1-16 READs and atomics outstanding; on the 1024-row top four, the most it keeps)
//! over a link that drops, duplicates and delays frames both ways, so the stream the
//! responder sees has gaps, duplicates, reordering and go-back-N retransmissions (duplicate
//! READs answered again, duplicate atomics from the kept value). Every frame the model's
//! responder received goes, in the same order, into the hardware; every ACK, NAK, READ
//! response and atomic acknowledge the hardware sends equals the model's (send descriptor
//! and payload), the region's bytes in host memory equal the model's region, and the executed
//! and dropped-duplicate counts equal the model's. A second scenario aims requests outside the
//! region: the remote access NAK, not one byte written, the QP's later requests dropped. The
//! bench stalls every ready the engine waits on at random.

mod common;

use common::*;
use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{PortDut, PortLockStep};
use rnic_cosim::transport::descriptor_of;
use rnic_driver::queues::{Completion, encode_recv};
use rnic_driver::responder_sim::{Post, ResponderSim};
use rnic_driver::tables::{encode_av, encode_mr, encode_qp};
use rnic_hw::responder::Responder;
use rnic_hw::responder_path::ResponderPath;
use rnic_hw::transport_header::TransportHeader;
use rnic_transport::counters::Counters;
use rnic_transport::mr::{MrInfo, MrSpec};
use rnic_transport::resp_check::Check;
use rnic_transport::verbs::{Access, AttrMask, Mtu, RecvWr, SendWr, WcStatus, WrOpcode};
use rnic_wire::RocePacket;

/// Posts `n` requests to random offsets of B's region (`outside`: some aimed past its end):
/// WRITEs only, or (`mix`) WRITEs, READs of random length and 8-byte atomics (compare-and-swap
/// and fetch-and-add, often on the zeroed start so that some swaps happen).
fn post_requests(m: &mut Model, rng: &mut Rng, n: usize, outside: bool, mix: bool) {
    let mtu = m.attr_b.path_mtu.bytes() as u64;
    for i in 0..n {
        let kind = if mix { rng.below(20) } else { 0 };
        let wr = if kind >= 17 {
            let mut off = if rng.chance(0.5) {
                8 * rng.below(32)
            } else {
                8 * rng.below(LEN_B / 8)
            };
            if outside && rng.chance(0.15) {
                off = LEN_B + 8 * rng.below(8);
            }
            let dst = 8 * rng.below(64 * 1024 / 8);
            let (op, cmp) = if kind == 19 {
                (WrOpcode::AtomicFetchAndAdd, rng.next_u64())
            } else if rng.chance(0.6) {
                (WrOpcode::AtomicCmpAndSwp, 0)
            } else {
                (WrOpcode::AtomicCmpAndSwp, rng.next_u64())
            };
            SendWr::new(i as u64, op)
                .sge(m.mr_a.va + dst, 8, m.mr_a.lkey)
                .remote(VA_B + off, KEY_B)
                .atomic(cmp, rng.next_u64())
        } else {
            let len = match rng.below(4) {
                0 => rng.below(16),
                1 => mtu * (1 + rng.below(3)) - rng.below(2),
                _ => rng.below(3 * mtu + 100),
            };
            let mut off = rng.below(LEN_B - len + 1);
            if outside && rng.chance(0.15) {
                off = LEN_B - len + 1 + rng.below(64);
            }
            let src = rng.below(64 * 1024 - len + 1);
            let op = if kind >= 10 {
                WrOpcode::RdmaRead
            } else {
                WrOpcode::RdmaWrite
            };
            SendWr::new(i as u64, op)
                .sge(m.mr_a.va + src, len as u32, m.mr_a.lkey)
                .remote(VA_B + off, KEY_B)
        };
        // A QP in error refuses (or flushes) the rest.
        let _ = m.a.post_send(m.qa, wr);
    }
}

/// What the hardware did with a stream of frames.
struct HwRun {
    /// The responder path's frames.
    frames: Vec<Vec<u8>>,
    /// Responses: send descriptor and payload.
    resp: Vec<(Vec<u64>, Vec<u8>)>,
    memory: Vec<u8>,
    executed: u64,
    dropped: u64,
    replayed: u64,
    dup_dropped: u64,
    dma_writes: u64,
    dma_reads: u64,
    verdicts: Vec<u64>,
    recv_refused: u64,
    early_headers: u64,
}

/// The responder's counts by verdict against the model's counters: executed, sequence NAKs,
/// requests dropped in a NAKed gap, duplicates, RNR NAKs, remote access NAKs (the four key
/// and bounds verdicts), and the invalid request and remote operation NAKs (the other
/// refusals and the SENDs their receive request refused).
fn check_verdicts(seed: u64, v: &[u64], recv_refused: u64, c: &Counters) {
    let sum = |r: &[usize]| r.iter().map(|&k| v[k]).sum::<u64>();
    assert_eq!(
        [v[0], v[1], v[2], v[3], v[4], sum(&[9, 10, 11, 12])],
        [
            c.resp_executed,
            c.nak_seq_sent,
            c.resp_out_of_sequence_dropped,
            c.resp_duplicate,
            c.nak_rnr_sent,
            c.nak_rem_access_sent
        ],
        "seed {seed}: verdict counts (executed, sequence NAK, gap dropped, duplicate, RNR, access)"
    );
    assert_eq!(
        sum(&[5, 6, 7, 8, 13, 14, 15]) + recv_refused,
        c.nak_inv_req_sent + c.nak_rem_op_sent,
        "seed {seed}: refusals"
    );
}

/// Which responder top a scenario runs.
#[derive(Clone, Copy, PartialEq)]
enum Top {
    /// `responder`: 64 rows, sixteen READ/atomic slots per QP.
    Rows64,
    /// `responder_1k`: 1024 rows, four slots per QP.
    Rows1k,
    /// `responder_path`: the 64-row responder with the receive and transmit paths and its
    /// tables, frames in and out.
    Path64,
    /// `responder_path_1k`: the same with 1024 rows.
    Path1k,
}

impl Top {
    fn slots(self) -> u64 {
        (match self {
            Top::Rows64 | Top::Path64 => Responder::<6, 10, 10>::SLOTS,
            Top::Rows1k | Top::Path1k => Responder::<10, 12, 11>::SLOTS,
        }) as u64
    }

    fn path(self) -> bool {
        matches!(self, Top::Path64 | Top::Path1k)
    }
}

/// The responder of `top` (lock-step, every ready stalling at random) with B's QP and region.
fn run_hw(top: Top, m: &Model, frames: &[Vec<u8>], seed: u64) -> HwRun {
    match top {
        Top::Rows64 => run_on(ResponderSim::lockstep(seed, 0.25).unwrap(), m, frames, seed),
        Top::Rows1k => run_on(
            ResponderSim::<PortLockStep<Responder<10, 12, 11>>>::lockstep_of(
                "responder_1k",
                seed,
                0.25,
            )
            .unwrap(),
            m,
            frames,
            seed,
        ),
        Top::Path64 => run_on(
            ResponderSim::<PortLockStep<ResponderPath<6, 10, 11>>>::path_lockstep(
                "responder_path",
                seed,
                0.25,
            )
            .unwrap(),
            m,
            frames,
            seed,
        ),
        Top::Path1k => run_on(
            ResponderSim::<PortLockStep<ResponderPath<10, 12, 11>>>::path_lockstep(
                "responder_path_1k",
                seed,
                0.25,
            )
            .unwrap(),
            m,
            frames,
            seed,
        ),
    }
}

/// B in the hardware: its QP's row (row `qb` mod the rows; for the responder path also its
/// address vector and B's MAC, GID and TTL), started at its RQ PSN, and `regions` (each
/// region's row, and its bytes at its device address). Returns the QP's row.
fn set_up_b<D: PortDut>(
    s: &mut ResponderSim<D>,
    m: &Model,
    regions: &[(MrInfo, u64, &[u8])],
) -> usize {
    let row = m.qb as usize & (s.rows() - 1);
    s.set_qp(row, &encode_qp(&m.attr_b, &m.ctx_b).unwrap());
    let av = m.attr_b.av.as_ref().expect("B's QP has a path");
    s.set_av(row, &encode_av(av, 0, m.qb).unwrap());
    s.set_identity(
        MAC_B.to_u64(),
        u128::from_be_bytes(IP_B.to_ipv6_mapped().octets()),
        m.b.cfg.ttl,
    );
    for (mr, base, fill) in regions {
        s.set_mr((mr.rkey >> 8) as usize, &encode_mr(mr, *base).unwrap());
        s.map(*base, fill.len());
        assert!(s.fill(*base, fill));
    }
    s.init_qp(row, m.attr_b.rq_psn).unwrap();
    row
}

fn run_on<D: PortDut>(mut s: ResponderSim<D>, m: &Model, frames: &[Vec<u8>], seed: u64) -> HwRun {
    let qp_index = set_up_b(&mut s, m, &[(m.mr_b, BASE_B, &m.fill_b)]);
    let (resp, stats) = s.run(frames).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    assert!(
        resp.iter().all(|r| r.qp == qp_index || r.qp == usize::MAX),
        "responses name the QP's row"
    );
    assert_eq!(stats.passed_on, 0, "seed {seed}: only requests reach B");
    HwRun {
        frames: std::mem::take(&mut s.sent),
        resp: resp.into_iter().map(|r| (r.desc, r.payload)).collect(),
        memory: s.read(BASE_B, LEN_B as usize).expect("mapped").to_vec(),
        executed: s.counter("cnt_executed"),
        dropped: s.counter("cnt_dropped"),
        replayed: s.counter("cnt_replayed"),
        dup_dropped: s.counter("cnt_dup_dropped"),
        dma_writes: stats.dma_writes,
        dma_reads: stats.dma_reads,
        verdicts: (0..16).map(|v| s.verdict_count(v).unwrap()).collect(),
        recv_refused: s.counter("cnt_recv_refused"),
        early_headers: stats.early_headers,
    }
}

/// B's responses as send descriptors (the transport header words) with their payloads.
fn model_responses(frames: &[Vec<u8>]) -> Vec<(Vec<u64>, Vec<u8>)> {
    frames
        .iter()
        .map(|f| {
            let p = RocePacket::parse(f).expect("parses").repr();
            (descriptor_of(&p).0.pack().to_vec(), p.payload.clone())
        })
        .collect()
}

/// What a scenario covered.
#[derive(Default)]
struct Covered {
    frames: usize,
    dma_writes: u64,
    dma_reads: u64,
    read_responses: u64,
    atomic_acks: u64,
    replayed: u64,
    early_headers: u64,
}

/// A run of `top` against the model; with `mix`, READs and atomics with MAX_DEST_RD_ATOMIC
/// at random up to the top's slots per QP (`responder_1k`: always at its four, the limit).
fn scenario(top: Top, seed: u64, mtu: Mtu, f: Faults, outside: bool, mix: bool) -> Covered {
    let mut rng = Rng::new(seed);
    let ack_every = 1 + rng.below(8) as u32;
    let mdra = match (mix, top) {
        (false, _) => 1,
        (true, Top::Rows64 | Top::Path64) => 1 + rng.below(top.slots()) as u8,
        (true, Top::Rows1k | Top::Path1k) => top.slots() as u8,
    };
    let mut m = model(&mut rng, mtu, ack_every, mdra);
    let mut to_b = Vec::new();
    let mut from_b = Vec::new();
    // The path runs the parser too, in lock-step: one round of requests, not three.
    let rounds = if top.path() { 1 } else { 3 };
    for _ in 0..rounds {
        post_requests(&mut m, &mut rng, 30, outside, mix);
        let (t, r) = run_model(&mut m, &mut rng, f, None);
        to_b.extend(t);
        from_b.extend(r);
    }
    let hw = run_hw(top, &m, &to_b, seed);
    let want = model_responses(&from_b);
    for (k, (g, w)) in hw.resp.iter().zip(&want).enumerate() {
        assert_eq!(
            g.0,
            w.0,
            "seed {seed}: response {k} of {}: hardware {:x?}, model {:x?}",
            want.len(),
            g.0,
            w.0
        );
        if let Some(b) = (0..w.1.len()).find(|&b| g.1.get(b) != w.1.get(b)) {
            panic!(
                "seed {seed}: response {k}: payload byte {b} of {} differs (hardware {} bytes)",
                w.1.len(),
                g.1.len()
            );
        }
        assert_eq!(g.1.len(), w.1.len(), "seed {seed}: response {k}: payload");
    }
    assert_eq!(hw.resp.len(), want.len(), "seed {seed}: responses");
    if top.path() {
        // Frame for frame, byte for byte: the frames B's model sent.
        for (k, (g, w)) in hw.frames.iter().zip(&from_b).enumerate() {
            assert!(
                g == w,
                "seed {seed}: frame {k}: hardware {g:02x?}, model {w:02x?}"
            );
        }
        assert_eq!(hw.frames.len(), from_b.len(), "seed {seed}: frames");
    }
    let model_mem = m.b.mr_bytes(m.mr_b.rkey).expect("B's region");
    if let Some(k) = (0..model_mem.len()).find(|&k| model_mem[k] != hw.memory[k]) {
        panic!(
            "seed {seed}: region byte {k:#x} differs: hardware {:#x}, model {:#x}",
            hw.memory[k], model_mem[k]
        );
    }
    assert_eq!(
        hw.executed, m.b.counters.resp_executed,
        "seed {seed}: executed"
    );
    assert_eq!(
        hw.dup_dropped, m.b.counters.resp_duplicate_dropped,
        "seed {seed}: duplicates matching nothing kept"
    );
    check_verdicts(seed, &hw.verdicts, hw.recv_refused, &m.b.counters);
    if outside {
        assert!(
            m.b.counters.nak_rem_access_sent > 0,
            "seed {seed}: a WRITE outside the region"
        );
    }
    let count = |op: u8| {
        want.iter()
            .filter(|r| TransportHeader::unpack(&r.0).get("OpCode") == u64::from(op))
            .count() as u64
    };
    let c = Covered {
        frames: to_b.len(),
        dma_writes: hw.dma_writes,
        dma_reads: hw.dma_reads,
        read_responses: (0x0D..=0x10).map(count).sum(),
        atomic_acks: count(0x12),
        replayed: hw.replayed,
        early_headers: hw.early_headers,
    };
    eprintln!(
        "seed {seed} mtu {} mdra {mdra} slots {}: {} frames in, {} responses ({} READ responses, {} atomic ACKs), {} DMA writes, {} DMA reads, {} executed, {} replayed, {} dropped, {} headers taken ahead of a payload",
        mtu.bytes(),
        top.slots(),
        c.frames,
        want.len(),
        c.read_responses,
        c.atomic_acks,
        c.dma_writes,
        c.dma_reads,
        hw.executed,
        c.replayed,
        hw.dropped,
        c.early_headers
    );
    c
}

#[test]
fn writes_over_a_faulty_link_equal_the_model() {
    let f = Faults {
        drop: 0.05,
        dup: 0.03,
        delay: 0.03,
    };
    let mut frames = 0;
    let mut writes = 0;
    let mut early = 0;
    for (seed, mtu) in [
        (1, Mtu::M256),
        (2, Mtu::M1024),
        (3, Mtu::M4096),
        (4, Mtu::M512),
    ] {
        let c = scenario(Top::Rows64, seed, mtu, f, false, false);
        frames += c.frames;
        writes += c.dma_writes;
        early += c.early_headers;
    }
    // The front half (the next WRITE's tables and check while a payload goes to memory, the
    // state row forwarded) ran, and often.
    assert!(
        frames > 1000 && writes > 500 && early > 200,
        "{frames} frames, {writes} DMA writes, {early} headers taken ahead of a payload"
    );
}

#[test]
fn reads_and_atomics_over_a_faulty_link_equal_the_model() {
    let f = Faults {
        drop: 0.05,
        dup: 0.03,
        delay: 0.03,
    };
    let mut all = Covered::default();
    for (seed, mtu) in [
        (21, Mtu::M256),
        (22, Mtu::M1024),
        (23, Mtu::M4096),
        (24, Mtu::M512),
    ] {
        let c = scenario(Top::Rows64, seed, mtu, f, false, true);
        all.frames += c.frames;
        all.dma_reads += c.dma_reads;
        all.read_responses += c.read_responses;
        all.atomic_acks += c.atomic_acks;
        all.replayed += c.replayed;
    }
    assert!(
        all.read_responses > 200 && all.atomic_acks > 20 && all.replayed > 5,
        "{} READ responses, {} atomic ACKs, {} replays",
        all.read_responses,
        all.atomic_acks,
        all.replayed
    );
}
#[test]
fn requests_outside_the_region_are_refused_as_the_model() {
    let f = Faults {
        drop: 0.02,
        dup: 0.02,
        delay: 0.0,
    };
    for seed in 11..=13 {
        scenario(Top::Rows64, seed, Mtu::M1024, f, true, seed == 13);
    }
}

/// The responder sized for the 85F (1024 rows, four slots per QP) with four READs and atomics
/// outstanding, the most it honours: slot numbers wrap mod 16 while the table keeps four rows
/// per QP, and every duplicate is answered as the model answers it.
#[test]
fn reads_and_atomics_at_four_slots_per_qp_equal_the_model() {
    let f = Faults {
        drop: 0.05,
        dup: 0.03,
        delay: 0.03,
    };
    let mut all = Covered::default();
    for (seed, mtu) in [(27, Mtu::M1024), (28, Mtu::M256)] {
        let c = scenario(Top::Rows1k, seed, mtu, f, false, true);
        all.read_responses += c.read_responses;
        all.atomic_acks += c.atomic_acks;
        all.replayed += c.replayed;
    }
    assert!(
        all.read_responses > 100 && all.atomic_acks > 10 && all.replayed > 2,
        "{} READ responses, {} atomic ACKs, {} replays",
        all.read_responses,
        all.atomic_acks,
        all.replayed
    );
}

/// B's receive ring: its device address and log2 of its entries.
const RQ_BASE: u64 = 0x3_0000_0000;
const RQ_LOG: u32 = 8;

/// How a SEND scenario spoils one receive request (at most one: the QP is in error after it).
#[derive(Clone, Copy, PartialEq)]
enum Spoil {
    None,
    /// An entry's key with a wrong tag: the first packet fails (LOC_QP_OP_ERR).
    Key,
    /// Entries a byte or more shorter than the message (LOC_LEN_ERR).
    Short,
}

/// A receive request for a message of `len` bytes: 0-3 entries in B's region (none only for
/// an empty message) totalling `len` or a little more, each at a random offset.
fn recv_for(rng: &mut Rng, wr_id: u64, len: u64, spoil: Spoil) -> RecvWr {
    let mut total = len + if rng.chance(0.5) { 0 } else { rng.below(64) };
    if spoil == Spoil::Short {
        total = len - 1 - rng.below(len.min(8));
    }
    let n = if total == 0 && rng.chance(0.5) {
        0
    } else {
        1 + rng.below(3)
    };
    let mut wr = RecvWr::new(wr_id);
    let mut left = total;
    for k in 0..n {
        let take = if k + 1 == n {
            left
        } else {
            rng.below(left + 1)
        };
        left -= take;
        let off = rng.below(LEN_B - take + 1);
        let mut key = KEY_B;
        if spoil == Spoil::Key && k + 1 == n {
            key ^= 1 + rng.below(255) as u32;
        }
        wr = wr.sge(VA_B + off, take as u32, key);
    }
    wr
}

/// SENDs (with and without immediate) and WRITEs with immediate from A, each taking one of B's
/// receive requests. Some requests are posted only after A has met RNR NAKs for lack of them;
/// with `spoil`, one request is bad and the QP fails there, its ring flushed. The hardware
/// gets the same requests in its ring at the same points of the frame stream, and must send
/// what the model sends, write the same bytes and hand over the same completions, in order,
/// with their ring indices.
fn send_scenario(seed: u64, mtu: Mtu, f: Faults, spoil: Spoil) -> (usize, usize, u64) {
    let mut rng = Rng::new(seed);
    let ack_every = 1 + rng.below(8) as u32;
    let mut m = model(&mut rng, mtu, ack_every, 1);
    let mtu_b = m.attr_b.path_mtu.bytes() as u64;
    let row = (m.qb & 63) as usize;
    let (mut to_b, mut from_b) = (Vec::new(), Vec::new());
    let mut posts = Vec::new();
    let mut post = |m: &mut Model, before: usize, wr: RecvWr| {
        posts.push(Post {
            before,
            row,
            entry: encode_recv(&wr).unwrap(),
        });
        m.b.post_recv(m.qb, wr).unwrap();
    };
    let mut wr_id = 0u64;
    let rounds = if spoil == Spoil::None { 3 } else { 1 };
    let n = 14;
    for _ in 0..rounds {
        let bad = if spoil == Spoil::None {
            n
        } else {
            rng.below(n as u64) as usize
        };
        let mut held = Vec::new();
        let hold = if spoil == Spoil::None {
            1 + rng.below(3) as usize
        } else {
            0
        };
        for k in 0..n {
            let mut len = match rng.below(4) {
                0 => rng.below(16),
                1 => mtu_b * (1 + rng.below(3)) - rng.below(2),
                _ => rng.below(3 * mtu_b + 100),
            };
            let mut kind = rng.below(4);
            let s = if k == bad {
                // The bad one is a SEND (a WRITE with immediate does not use the entries).
                kind %= 3;
                len = len.max(1);
                spoil
            } else {
                Spoil::None
            };
            let wr = recv_for(&mut rng, 1000 + wr_id, len, s);
            if k + hold >= n {
                held.push(wr);
            } else {
                post(&mut m, to_b.len(), wr);
            }
            let src = rng.below(64 * 1024 - len + 1);
            let mut sw = match kind {
                0 | 1 => SendWr::new(wr_id, WrOpcode::Send),
                2 => SendWr::new(wr_id, WrOpcode::SendWithImm).imm(rng.next_u64() as u32),
                _ => SendWr::new(wr_id, WrOpcode::RdmaWriteWithImm)
                    .imm(rng.next_u64() as u32)
                    .remote(VA_B + rng.below(LEN_B - len + 1), KEY_B),
            };
            if len > 0 {
                sw = sw.sge(m.mr_a.va + src, len as u32, m.mr_a.lkey);
            }
            let _ = m.a.post_send(m.qa, sw);
            wr_id += 1;
        }
        if !held.is_empty() {
            // A meets RNR NAKs for the last messages; then they get their requests.
            let until = m.now + 3_000_000;
            let (t, r) = run_model(&mut m, &mut rng, f, Some(until));
            to_b.extend(t);
            from_b.extend(r);
            for wr in held {
                post(&mut m, to_b.len(), wr);
            }
        }
        let (t, r) = run_model(&mut m, &mut rng, f, None);
        to_b.extend(t);
        from_b.extend(r);
    }

    let mut s = ResponderSim::lockstep(seed, 0.25).unwrap();
    assert_eq!(set_up_b(&mut s, &m, &[(m.mr_b, BASE_B, &m.fill_b)]), row);
    s.set_rq(row, RQ_BASE, RQ_LOG);
    let (resp, _) = s
        .run_posting(&to_b, &posts)
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));

    let want = model_responses(&from_b);
    for (k, (g, w)) in resp.iter().zip(&want).enumerate() {
        assert_eq!(
            (&g.desc, &g.payload),
            (&w.0, &w.1),
            "seed {seed}: response {k} of {}",
            want.len()
        );
    }
    assert_eq!(resp.len(), want.len(), "seed {seed}: responses");
    let hw_mem = s.read(BASE_B, LEN_B as usize).expect("mapped");
    let model_mem = m.b.mr_bytes(m.mr_b.rkey).expect("B's region");
    if let Some(k) = (0..model_mem.len()).find(|&k| model_mem[k] != hw_mem[k]) {
        panic!(
            "seed {seed}: region byte {k:#x} differs: hardware {:#x}, model {:#x}",
            hw_mem[k], model_mem[k]
        );
    }
    let wcs = m.b.poll_cq(m.cq_b, 100_000);
    for (k, ((cq, e), wc)) in s.completions.iter().zip(&wcs).enumerate() {
        let c = Completion::decode(e).unwrap_or_else(|f| panic!("seed {seed}: cqe {k}: {f:?}"));
        assert_eq!(
            (
                &c.work_completion(),
                u32::from(*cq),
                usize::from(c.wqe_index)
            ),
            (wc, m.ctx_b.recv_cq, k),
            "seed {seed}: completion {k} of {}",
            wcs.len()
        );
    }
    assert_eq!(s.completions.len(), wcs.len(), "seed {seed}: completions");
    assert_eq!(
        s.rq_consumer(row),
        Some(wcs.len() as u16),
        "seed {seed}: the ring's consumer"
    );
    assert_eq!(
        s.counter("cnt_executed"),
        m.b.counters.resp_executed,
        "seed {seed}: executed"
    );
    let verdicts: Vec<u64> = (0..16).map(|v| s.verdict_count(v).unwrap()).collect();
    check_verdicts(
        seed,
        &verdicts,
        s.counter("cnt_recv_refused"),
        &m.b.counters,
    );
    let rnr = want
        .iter()
        .filter(|r| {
            let h = TransportHeader::unpack(&r.0);
            h.get("OpCode") == 0x11 && h.get("ext_key") >> 29 == 1
        })
        .count();
    let errors = wcs.iter().filter(|w| w.status != WcStatus::Success).count();
    eprintln!(
        "seed {seed} mtu {}: {} frames in, {} responses ({rnr} RNR NAKs), {} completions ({errors} errors)",
        mtu.bytes(),
        to_b.len(),
        want.len(),
        wcs.len()
    );
    (wcs.len(), rnr, errors as u64)
}

#[test]
fn sends_into_receive_requests_equal_the_model() {
    let f = Faults {
        drop: 0.04,
        dup: 0.03,
        delay: 0.03,
    };
    let (mut wcs, mut rnr) = (0, 0);
    for (seed, mtu) in [(31, Mtu::M256), (32, Mtu::M1024), (33, Mtu::M4096)] {
        let (w, r, e) = send_scenario(seed, mtu, f, Spoil::None);
        assert_eq!(e, 0, "seed {seed}: no errors without a bad request");
        wcs += w;
        rnr += r;
    }
    assert!(wcs >= 100 && rnr > 0, "{wcs} completions, {rnr} RNR NAKs");
}

#[test]
fn bad_receive_requests_fail_the_qp_as_the_model() {
    let f = Faults {
        drop: 0.02,
        dup: 0.02,
        delay: 0.0,
    };
    for (seed, spoil) in [
        (41, Spoil::Key),
        (42, Spoil::Short),
        (43, Spoil::Key),
        (44, Spoil::Short),
    ] {
        let (_, _, errors) = send_scenario(seed, Mtu::M1024, f, spoil);
        assert!(errors > 0, "seed {seed}: the bad request fails");
    }
}

/// B's other regions for the memory-protection matrix: key, rights, in another PD?
const KEY_OTHER_PD: u32 = 4 << 8 | 0x11;
const KEY_NO_WRITE: u32 = 5 << 8 | 0x22;
const KEY_NO_READ: u32 = 6 << 8 | 0x33;
const KEY_NO_ATOMIC: u32 = 7 << 8 | 0x44;
const OTHER_LEN: u64 = 4096;
const OTHER_REGIONS: [(u32, Access, bool); 4] = [
    (
        KEY_OTHER_PD,
        Access(
            Access::LOCAL_WRITE.0
                | Access::REMOTE_WRITE.0
                | Access::REMOTE_READ.0
                | Access::REMOTE_ATOMIC.0,
        ),
        true,
    ),
    (
        KEY_NO_WRITE,
        Access(Access::LOCAL_WRITE.0 | Access::REMOTE_READ.0 | Access::REMOTE_ATOMIC.0),
        false,
    ),
    (
        KEY_NO_READ,
        Access(Access::LOCAL_WRITE.0 | Access::REMOTE_WRITE.0 | Access::REMOTE_ATOMIC.0),
        false,
    ),
    (
        KEY_NO_ATOMIC,
        Access(Access::LOCAL_WRITE.0 | Access::REMOTE_WRITE.0 | Access::REMOTE_READ.0),
        false,
    ),
];

/// A region's VA and device address by its key index.
fn other_va(key: u32) -> u64 {
    0x7F00_2000_0000 + u64::from(key >> 8) * 0x1_0000
}
fn other_base(key: u32) -> u64 {
    0x2_1000_0000 + u64::from(key >> 8) * 0x1_0000
}

/// A WRITE ONLY's RETH announcing more, or fewer, bytes than the packet carries.
fn reth_longer(f: &mut Vec<u8>) {
    reth_len_by(f, 8);
}
fn reth_shorter(f: &mut Vec<u8>) {
    reth_len_by(f, -8);
}
fn reth_len_by(f: &mut Vec<u8>, d: i64) {
    let mut p = RocePacket::parse(f).expect("A's frame parses").repr();
    if p.bth.opcode == 0x0A {
        let reth = p.ext.reth.as_mut().expect("WRITE ONLY has a RETH");
        reth.dma_len = (i64::from(reth.dma_len) + d) as u32;
        *f = p.build().expect("rebuilds");
    }
}

/// One refused request of the memory-protection matrix: what A asks of B, and what the
/// specification says B answers (rc-transport.md, receive checks 5-8, and rxe's error
/// classes): the verdict the responder counts it under and the NAK's syndrome.
struct Refused {
    what: &'static str,
    op: WrOpcode,
    key: u32,
    va: u64,
    len: u32,
    /// The QP's own access flags, when not every right.
    qp_access: Option<Access>,
    mangle: Option<fn(&mut Vec<u8>)>,
    verdict: Check,
    syndrome: u8,
}

/// A's bad request and, behind it before its NAK is back, a good WRITE: B NAKs the first with
/// the case's syndrome at its PSN, puts the QP in error and drops the second; the hardware
/// sends the model's NAK, counts the case's verdict once and nothing else, and writes not one
/// byte of any region.
fn refused_case(seed: u64, c: &Refused) {
    let mut rng = Rng::new(seed);
    let mut m = model(&mut rng, Mtu::M1024, 1, 4);
    let other_pd = m.b.alloc_pd();
    let mut regions = vec![(m.mr_b, BASE_B, m.fill_b.clone())];
    for (key, access, foreign) in OTHER_REGIONS {
        let mr =
            m.b.reg_mr(MrSpec {
                pd: if foreign { other_pd } else { m.mr_b.pd },
                va: other_va(key),
                len: OTHER_LEN,
                access,
                key: Some(key),
            })
            .unwrap();
        let fill: Vec<u8> = (0..OTHER_LEN).map(|_| rng.next_u64() as u8).collect();
        m.b.mr_bytes_mut(key).unwrap().copy_from_slice(&fill);
        regions.push((mr, other_base(key), fill));
    }
    if let Some(access) = c.qp_access {
        m.attr_b.access = access;
        m.b.modify_qp(m.qb, &m.attr_b, AttrMask::ACCESS_FLAGS)
            .unwrap();
    }
    m.mangle = c.mangle;
    let psn = m.a.qp(m.qa).unwrap().attr.sq_psn;
    let mut bad = SendWr::new(1, c.op)
        .sge(m.mr_a.va, c.len, m.mr_a.lkey)
        .remote(c.va, c.key);
    if matches!(
        c.op,
        WrOpcode::AtomicCmpAndSwp | WrOpcode::AtomicFetchAndAdd
    ) {
        bad = bad.atomic(0, 1);
    }
    m.a.post_send(m.qa, bad).unwrap();
    let good = SendWr::new(2, WrOpcode::RdmaWrite)
        .sge(m.mr_a.va, 64, m.mr_a.lkey)
        .remote(VA_B, KEY_B);
    m.a.post_send(m.qa, good).unwrap();
    let (to_b, from_b) = run_model(&mut m, &mut rng, NO_FAULTS, None);

    // The model answers as the specification says.
    let want = model_responses(&from_b);
    assert_eq!(want.len(), 1, "{}: the model sends one NAK", c.what);
    let nak = RocePacket::parse(&from_b[0]).unwrap().repr();
    let aeth = nak.ext.aeth.expect("a NAK has an AETH");
    assert_eq!(
        (nak.bth.opcode, nak.bth.psn, aeth.syndrome),
        (0x11, psn, c.syndrome),
        "{}: the model's NAK (opcode, PSN, syndrome)",
        c.what
    );
    assert!(to_b.len() >= 2, "{}: both requests reached B", c.what);

    // The hardware answers as the model, and writes nothing.
    let mut s = ResponderSim::lockstep(seed, 0.25).unwrap();
    let loaded: Vec<(MrInfo, u64, &[u8])> = regions
        .iter()
        .map(|(mr, b, f)| (*mr, *b, f.as_slice()))
        .collect();
    set_up_b(&mut s, &m, &loaded);
    let (resp, stats) = s.run(&to_b).unwrap_or_else(|e| panic!("{}: {e}", c.what));
    let got: Vec<_> = resp.into_iter().map(|r| (r.desc, r.payload)).collect();
    assert_eq!(got, want, "{}: the hardware's responses", c.what);
    assert_eq!(stats.dma_writes, 0, "{}: DMA writes", c.what);
    let verdicts: Vec<u64> = (0..16).map(|v| s.verdict_count(v).unwrap()).collect();
    let mut only = vec![0; 16];
    only[c.verdict as usize] = 1;
    assert_eq!(verdicts, only, "{}: requests by verdict", c.what);
    assert_eq!(
        s.counter("cnt_dropped"),
        to_b.len() as u64 - 1,
        "{}: the QP in error drops the rest",
        c.what
    );
    for (mr, base, fill) in &regions {
        let model_mem = m.b.mr_bytes(mr.rkey).unwrap();
        assert!(
            model_mem == &fill[..],
            "{}: the model wrote region {:#x}",
            c.what,
            mr.rkey
        );
        assert!(
            s.read(*base, fill.len()).unwrap() == &fill[..],
            "{}: the hardware wrote region {:#x}",
            c.what,
            mr.rkey
        );
    }
}

/// The memory-protection matrix: every way a WRITE, READ or atomic can be refused by its
/// R_Key, its range or its lengths (wrong key, wrong tag, wrong PD, each right missing, VA
/// below, past the end and straddling it, a range whose end wraps 2^64, a message whose first
/// packet fits but whose RETH does not, an unaligned atomic, a RETH disagreeing with its
/// payload, a QP without the right), each against the model and the specification.
#[test]
fn the_memory_protection_matrix_equals_the_model() {
    let all = Access(Access::REMOTE_WRITE.0 | Access::REMOTE_READ.0 | Access::REMOTE_ATOMIC.0);
    let end = VA_B + LEN_B;
    let case = |what, op, key, va, len| Refused {
        what,
        op,
        key,
        va,
        len,
        qp_access: None,
        mangle: None,
        verdict: Check::OutOfBounds,
        syndrome: 0x62,
    };
    use WrOpcode::{AtomicCmpAndSwp as Cas, AtomicFetchAndAdd as Faa, RdmaRead, RdmaWrite};
    let cases = [
        Refused {
            verdict: Check::BadKey,
            ..case(
                "key index with no region",
                RdmaWrite,
                9 << 8 | 0x5A,
                VA_B,
                16,
            )
        },
        Refused {
            verdict: Check::BadKey,
            ..case("wrong tag", RdmaWrite, KEY_B ^ 1, VA_B, 16)
        },
        Refused {
            verdict: Check::BadKey,
            ..case("wrong tag, READ", RdmaRead, KEY_B ^ 0x80, VA_B, 16)
        },
        Refused {
            verdict: Check::WrongPd,
            ..case(
                "region of another PD",
                RdmaWrite,
                KEY_OTHER_PD,
                other_va(KEY_OTHER_PD),
                16,
            )
        },
        Refused {
            verdict: Check::WrongPd,
            ..case(
                "atomic, region of another PD",
                Faa,
                KEY_OTHER_PD,
                other_va(KEY_OTHER_PD),
                8,
            )
        },
        Refused {
            verdict: Check::NoRight,
            ..case(
                "no remote write",
                RdmaWrite,
                KEY_NO_WRITE,
                other_va(KEY_NO_WRITE),
                16,
            )
        },
        Refused {
            verdict: Check::NoRight,
            ..case(
                "no remote read",
                RdmaRead,
                KEY_NO_READ,
                other_va(KEY_NO_READ),
                16,
            )
        },
        Refused {
            verdict: Check::NoRight,
            ..case(
                "no remote atomic",
                Cas,
                KEY_NO_ATOMIC,
                other_va(KEY_NO_ATOMIC),
                8,
            )
        },
        case("VA one below", RdmaWrite, KEY_B, VA_B - 1, 16),
        case("READ below", RdmaRead, KEY_B, VA_B - 4096, 100),
        case("past the end", RdmaWrite, KEY_B, end, 8),
        case("straddling the end", RdmaWrite, KEY_B, end - 8, 16),
        case("READ straddling the end", RdmaRead, KEY_B, end - 100, 3000),
        case("atomic past the end", Faa, KEY_B, end, 8),
        case(
            "first packet inside, message past the end",
            RdmaWrite,
            KEY_B,
            end - 2048,
            3072,
        ),
        case("VA + length wraps 2^64", RdmaWrite, KEY_B, u64::MAX - 7, 64),
        case("READ wrapping 2^64", RdmaRead, KEY_B, u64::MAX - 31, 4096),
        // rxe's RESPST_ERR_MISALIGNED_ATOMIC is class C: invalid request, not access.
        Refused {
            verdict: Check::Unaligned,
            syndrome: 0x61,
            ..case("unaligned atomic", Cas, KEY_B, VA_B + 4, 8)
        },
        Refused {
            verdict: Check::LengthMismatch,
            syndrome: 0x61,
            mangle: Some(reth_longer),
            ..case("RETH longer than the payload", RdmaWrite, KEY_B, VA_B, 64)
        },
        Refused {
            verdict: Check::LengthMismatch,
            syndrome: 0x61,
            mangle: Some(reth_shorter),
            ..case("RETH shorter than the payload", RdmaWrite, KEY_B, VA_B, 64)
        },
        Refused {
            verdict: Check::QpAccess,
            syndrome: 0x61,
            qp_access: Some(Access(all.0 & !Access::REMOTE_WRITE.0)),
            ..case("QP without remote write", RdmaWrite, KEY_B, VA_B, 16)
        },
        Refused {
            verdict: Check::QpAccess,
            syndrome: 0x61,
            qp_access: Some(Access(all.0 & !Access::REMOTE_ATOMIC.0)),
            ..case("QP without remote atomic", Faa, KEY_B, VA_B, 8)
        },
    ];
    for (k, c) in cases.iter().enumerate() {
        refused_case(60 + k as u64, c);
    }
    // Every refusal of the check's R_Key, range and length stages is among them.
    for v in [
        Check::QpAccess,
        Check::BadKey,
        Check::WrongPd,
        Check::NoRight,
        Check::OutOfBounds,
        Check::LengthMismatch,
        Check::Unaligned,
    ] {
        assert!(cases.iter().any(|c| c.verdict == v), "{v:?} covered");
    }
}

/// The responder with the packet layer and its tables (`responder_path`): the frames B's
/// model received go in as frames, in order, through the receive parser and its header FIFO;
/// every frame out of the transmit path equals the frame B's model sent, byte for byte, and
/// host memory equals B's region. WRITEs, READs and atomics over a faulty link, every ready
/// stalling at random; the 1024-row top once (lock-step).
/// A READ whose DMA reads the host refuses (B's region is in the table, but its device
/// address is not mapped, as an IOMMU refuses it): the responder path sends every response
/// segment the model sends, each with the model's headers but marked bad (no ICRC, `tuser` on
/// its last beat for a bad FCS), none as good data, and counts each refused read in
/// `cnt_dma_err`. rust-hdl and Verilator in lock-step.
#[test]
fn a_read_the_host_refuses_leaves_marked_bad() {
    let mut rng = Rng::new(71);
    let mut m = model(&mut rng, Mtu::M1024, 1, 4);
    let read = SendWr::new(1, WrOpcode::RdmaRead)
        .sge(m.mr_a.va, 2500, m.mr_a.lkey)
        .remote(VA_B + 72, KEY_B);
    m.a.post_send(m.qa, read).unwrap();
    let (to_b, from_b) = run_model(&mut m, &mut rng, NO_FAULTS, None);
    assert_eq!(to_b.len(), 1, "the model's requester sends one READ");
    assert_eq!(
        from_b.len(),
        3,
        "the model answers 2500 bytes in three segments"
    );
    let run = move || {
        let mut s = ResponderSim::<PortLockStep<ResponderPath<6, 10, 11>>>::path_lockstep(
            "responder_path",
            71,
            0.25,
        )
        .unwrap();
        set_up_b(&mut s, &m, &[]);
        s.set_mr((KEY_B >> 8) as usize, &encode_mr(&m.mr_b, BASE_B).unwrap());
        let (_, stats) = s.run(&to_b).unwrap_or_else(|e| panic!("{e}"));
        assert!(s.sent.is_empty(), "{} frames sent as good", s.sent.len());
        assert_eq!(s.marked.len(), from_b.len(), "frames marked bad");
        for (k, (got, want)) in s.marked.iter().zip(&from_b).enumerate() {
            let n = RocePacket::parse(want).unwrap().payload().len();
            let headers = want.len() - 4 - (4 - n % 4) % 4 - n;
            assert_eq!(
                got.len(),
                want.len() - 4,
                "segment {k}: its length, no ICRC"
            );
            assert_eq!(
                got[..headers],
                want[..headers],
                "segment {k}: the model's headers"
            );
        }
        assert_eq!(stats.dma_reads, 3, "one DMA read per segment");
        assert_eq!(s.counter("cnt_dma_err"), 3, "refused reads counted");
        assert_eq!(s.counter("cnt_executed"), 1, "the READ executed");
    };
    // The path's rust-hdl model is one deep struct: more stack than a test thread has.
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(run)
        .unwrap()
        .join()
        .unwrap_or_else(|_| panic!("the refused READ failed"));
}

#[test]
fn the_responder_path_sends_the_models_frames() {
    let f = Faults {
        drop: 0.04,
        dup: 0.03,
        delay: 0.03,
    };
    let mut all = Covered::default();
    for (top, seed, mtu, mix) in [
        (Top::Path64, 51, Mtu::M1024, false),
        (Top::Path64, 52, Mtu::M256, true),
        (Top::Path64, 53, Mtu::M4096, true),
        (Top::Path1k, 54, Mtu::M1024, true),
    ] {
        // The path's rust-hdl model is one deep struct: more stack than a test thread has.
        let c = std::thread::Builder::new()
            .stack_size(1 << 30)
            .spawn(move || scenario(top, seed, mtu, f, false, mix))
            .unwrap()
            .join()
            .unwrap_or_else(|_| panic!("seed {seed}: the scenario failed"));
        all.frames += c.frames;
        all.read_responses += c.read_responses;
        all.atomic_acks += c.atomic_acks;
        all.dma_writes += c.dma_writes;
    }
    assert!(
        all.frames > 100 && all.read_responses > 20 && all.atomic_acks > 3 && all.dma_writes > 20,
        "{} frames, {} READ responses, {} atomic ACKs, {} DMA writes",
        all.frames,
        all.read_responses,
        all.atomic_acks,
        all.dma_writes
    );
}
