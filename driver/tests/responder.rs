//! The hardware responder (`rnic_hw::responder`, rust-hdl and Verilator in lock-step) against
//! the transport model's responder, on what the model's requester sends: two model NICs run
//! random RDMA WRITEs, READs and atomics (any length and offset, several MTUs, PSNs about to
//! wrap, 1-4 READs and atomics outstanding) over a link that drops, duplicates and delays
//! frames both ways, so the stream the responder sees has gaps, duplicates, reordering and
//! go-back-N retransmissions (duplicate READs answered again, duplicate atomics from the kept
//! value). Every frame the model's responder received goes, in the same order, into the
//! hardware; every ACK, NAK, READ response and atomic acknowledge the hardware sends equals
//! the model's (send descriptor and payload), the region's bytes in host memory equal the
//! model's region, and the executed and dropped-duplicate counts equal the model's. A second
//! scenario aims requests outside the region: the remote access NAK, not one byte written, the
//! QP's later requests dropped. The bench stalls every ready the engine waits on at random.

use std::net::{IpAddr, Ipv4Addr};

use rnic_cosim::axis::Rng;
use rnic_cosim::transport::descriptor_of;
use rnic_driver::queues::{Completion, encode_recv};
use rnic_driver::responder_sim::{Post, ResponderSim};
use rnic_driver::tables::{QpContext, encode_mr, encode_qp};
use rnic_hw::transport_header::TransportHeader;
use rnic_transport::counters::Counters;
use rnic_transport::mr::{MrInfo, MrSpec};
use rnic_transport::nic::{Nic, NicConfig};
use rnic_transport::qp::QpInit;
use rnic_transport::verbs::{
    Access, AddressVector, AttrMask, Mtu, QpAttr, QpState, QpType, RecvWr, SendWr, WcStatus,
    WrOpcode,
};
use rnic_wire::{MacAddr, RocePacket};

const MAC_A: MacAddr = MacAddr([2, 0, 0, 0, 0, 0xA]);
const MAC_B: MacAddr = MacAddr([2, 0, 0, 0, 0, 0xB]);
const IP_A: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const IP_B: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
/// The responder's region: its key (index 3, a tag), VA, length and device address.
const KEY_B: u32 = 3 << 8 | 0x5A;
const VA_B: u64 = 0x7F00_1234_5000;
const LEN_B: u64 = 48 * 1024;
const BASE_B: u64 = 0x2_0000_1000;

struct Model {
    a: Nic,
    b: Nic,
    qa: u32,
    qb: u32,
    mr_a: MrInfo,
    /// B's region as it was filled, before any request.
    fill_b: Vec<u8>,
    attr_b: QpAttr,
    ctx_b: QpContext,
    mr_b: MrInfo,
    /// B's completion queue.
    cq_b: usize,
    /// The link: the model's time, frames in flight (arrival time, sequence, to B?, bytes).
    now: u64,
    seq: u64,
    flight: Vec<(u64, u64, bool, Vec<u8>)>,
}

fn bring_up(nic: &mut Nic, qpn: u32, attr: &QpAttr) {
    let masks = [
        (
            QpState::Init,
            AttrMask(
                AttrMask::STATE.0
                    | AttrMask::PKEY_INDEX.0
                    | AttrMask::PORT.0
                    | AttrMask::ACCESS_FLAGS.0,
            ),
        ),
        (
            QpState::Rtr,
            AttrMask(
                AttrMask::STATE.0
                    | AttrMask::AV.0
                    | AttrMask::PATH_MTU.0
                    | AttrMask::DEST_QPN.0
                    | AttrMask::RQ_PSN.0
                    | AttrMask::MAX_DEST_RD_ATOMIC.0
                    | AttrMask::MIN_RNR_TIMER.0,
            ),
        ),
        (
            QpState::Rts,
            AttrMask(
                AttrMask::STATE.0
                    | AttrMask::SQ_PSN.0
                    | AttrMask::TIMEOUT.0
                    | AttrMask::RETRY_CNT.0
                    | AttrMask::RNR_RETRY.0
                    | AttrMask::MAX_QP_RD_ATOMIC.0,
            ),
        ),
    ];
    let mut a = attr.clone();
    for (state, mask) in masks {
        a.state = state;
        nic.modify_qp(qpn, &a, mask).unwrap();
    }
}

fn model(rng: &mut Rng, mtu: Mtu, ack_every: u32, mdra: u8) -> Model {
    let mut ca = NicConfig::new(MAC_A, IpAddr::V4(IP_A));
    ca.ack_every = ack_every;
    let mut a = Nic::new(ca);
    let mut b = Nic::new(NicConfig::new(MAC_B, IpAddr::V4(IP_B)));
    let (pa, pb) = (a.alloc_pd(), b.alloc_pd());
    let (ca, cb) = (a.create_cq(4096).unwrap(), b.create_cq(4096).unwrap());
    let qa = a.create_qp(&QpInit::new(QpType::Rc, pa, ca)).unwrap();
    let qb = b.create_qp(&QpInit::new(QpType::Rc, pb, cb)).unwrap();
    let mr_a = a
        .reg_mr(MrSpec {
            pd: pa,
            va: 0x10_0000,
            len: 64 * 1024,
            access: Access::LOCAL_WRITE,
            key: None,
        })
        .unwrap();
    let fill: Vec<u8> = (0..64 * 1024).map(|_| rng.next_u64() as u8).collect();
    a.mr_bytes_mut(mr_a.lkey).unwrap().copy_from_slice(&fill);
    let mr_b = b
        .reg_mr(MrSpec {
            pd: pb,
            va: VA_B,
            len: LEN_B,
            access: Access::LOCAL_WRITE
                | Access::REMOTE_WRITE
                | Access::REMOTE_READ
                | Access::REMOTE_ATOMIC,
            key: Some(KEY_B),
        })
        .unwrap();
    // Random bytes, but the first 256 zero: compare-and-swap targets that can succeed.
    let fill_b: Vec<u8> = (0..LEN_B)
        .map(|k| if k < 256 { 0 } else { rng.next_u64() as u8 })
        .collect();
    b.mr_bytes_mut(mr_b.rkey).unwrap().copy_from_slice(&fill_b);
    // PSNs near the wrap, so that it happens mid-stream.
    let psn_a = (1 << 24) - 1 - rng.below(200) as u32;
    let conn = |sip, dip, dmac, dest_qpn| QpAttr {
        access: Access::REMOTE_WRITE | Access::REMOTE_READ | Access::REMOTE_ATOMIC,
        av: Some(AddressVector::new(dmac, IpAddr::V4(sip), IpAddr::V4(dip))),
        path_mtu: mtu,
        timeout: 14,
        retry_cnt: 7,
        rnr_retry: 7,
        min_rnr_timer: 12,
        max_rd_atomic: mdra,
        max_dest_rd_atomic: mdra,
        dest_qpn,
        ..Default::default()
    };
    let mut at = conn(IP_A, IP_B, MAC_B, qb);
    at.sq_psn = psn_a;
    at.rq_psn = 100;
    let mut bt = conn(IP_B, IP_A, MAC_A, qa);
    bt.sq_psn = 100;
    bt.rq_psn = psn_a;
    bring_up(&mut a, qa, &at);
    bring_up(&mut b, qb, &bt);
    bt.state = QpState::Rts;
    let ctx_b = QpContext {
        qp_type: QpType::Rc,
        pd: pb.0,
        pkey: 0xFFFF,
        send_cq: cb as u32,
        recv_cq: cb as u32,
        sig_all: false,
    };
    Model {
        a,
        b,
        qa,
        qb,
        mr_a,
        fill_b,
        attr_b: bt,
        ctx_b,
        mr_b,
        cq_b: cb,
        now: 0,
        seq: 0,
        flight: Vec::new(),
    }
}

/// Link faults, per frame.
#[derive(Clone, Copy)]
struct Faults {
    drop: f64,
    dup: f64,
    delay: f64,
}

/// Runs the pair until quiet (or, with `until`, until nothing happens before that time);
/// returns the frames B received, in order, and B's responses.
fn run_model(
    m: &mut Model,
    rng: &mut Rng,
    f: Faults,
    until: Option<u64>,
) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    const LAT: u64 = 2_000;
    let (mut to_b, mut from_b) = (Vec::new(), Vec::new());
    for _ in 0..2_000_000 {
        let now = m.now;
        for to_b_dir in [true, false] {
            let frames = if to_b_dir {
                m.a.poll(now)
            } else {
                m.b.poll(now)
            };
            for bytes in frames {
                if !to_b_dir {
                    from_b.push(bytes.clone());
                }
                if rng.chance(f.drop) {
                    continue;
                }
                let copies = if rng.chance(f.dup) { 2 } else { 1 };
                for _ in 0..copies {
                    let extra = if rng.chance(f.delay) { 3 * LAT } else { 0 };
                    m.flight
                        .push((now + LAT + extra, m.seq, to_b_dir, bytes.clone()));
                    m.seq += 1;
                }
            }
        }
        m.flight.sort_by_key(|x| (x.0, x.1));
        let frame_t = m.flight.first().map(|x| x.0);
        let timer_t = [m.a.next_deadline(), m.b.next_deadline()]
            .into_iter()
            .flatten()
            .min();
        let Some(t) = [frame_t, timer_t].into_iter().flatten().min() else {
            return (to_b, from_b);
        };
        if until.is_some_and(|u| t > u) {
            return (to_b, from_b);
        }
        m.now = m.now.max(t);
        let now = m.now;
        while m.flight.first().is_some_and(|x| x.0 <= now) {
            let (_, _, dir, bytes) = m.flight.remove(0);
            if dir {
                to_b.push(bytes.clone());
                m.b.receive(now, &bytes);
            } else {
                m.a.receive(now, &bytes);
            }
        }
    }
    panic!("the model pair did not settle");
}

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

/// The responder (lock-step, every ready stalling at random) with B's QP and region.
fn run_hw(m: &Model, frames: &[Vec<u8>], seed: u64) -> HwRun {
    let mut s = ResponderSim::lockstep(seed, 0.25).unwrap();
    let qp_index = (m.qb & 63) as usize;
    s.set_qp(qp_index, &encode_qp(&m.attr_b, &m.ctx_b).unwrap());
    s.set_mr((KEY_B >> 8) as usize, &encode_mr(&m.mr_b, BASE_B).unwrap());
    s.map(BASE_B, LEN_B as usize);
    assert!(s.fill(BASE_B, &m.fill_b));
    s.init_qp(qp_index, m.attr_b.rq_psn).unwrap();
    let (resp, stats) = s.run(frames).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    assert!(
        resp.iter().all(|r| r.qp == qp_index),
        "responses name the QP's row"
    );
    HwRun {
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
}

fn scenario(seed: u64, mtu: Mtu, f: Faults, outside: bool, mix: bool) -> Covered {
    let mut rng = Rng::new(seed);
    let ack_every = 1 + rng.below(8) as u32;
    let mdra = if mix { 1 + rng.below(16) as u8 } else { 1 };
    let mut m = model(&mut rng, mtu, ack_every, mdra);
    let mut to_b = Vec::new();
    let mut from_b = Vec::new();
    for _ in 0..3 {
        post_requests(&mut m, &mut rng, 30, outside, mix);
        let (t, r) = run_model(&mut m, &mut rng, f, None);
        to_b.extend(t);
        from_b.extend(r);
    }
    let hw = run_hw(&m, &to_b, seed);
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
    };
    eprintln!(
        "seed {seed} mtu {} mdra {mdra}: {} frames in, {} responses ({} READ responses, {} atomic ACKs), {} DMA writes, {} DMA reads, {} executed, {} replayed, {} dropped",
        mtu.bytes(),
        c.frames,
        want.len(),
        c.read_responses,
        c.atomic_acks,
        c.dma_writes,
        c.dma_reads,
        hw.executed,
        c.replayed,
        hw.dropped
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
    for (seed, mtu) in [
        (1, Mtu::M256),
        (2, Mtu::M1024),
        (3, Mtu::M4096),
        (4, Mtu::M512),
    ] {
        let c = scenario(seed, mtu, f, false, false);
        frames += c.frames;
        writes += c.dma_writes;
    }
    assert!(
        frames > 1000 && writes > 500,
        "{frames} frames, {writes} DMA writes"
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
        let c = scenario(seed, mtu, f, false, true);
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
        scenario(seed, Mtu::M1024, f, true, seed == 13);
    }
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
    s.set_qp(row, &encode_qp(&m.attr_b, &m.ctx_b).unwrap());
    s.set_mr((KEY_B >> 8) as usize, &encode_mr(&m.mr_b, BASE_B).unwrap());
    s.map(BASE_B, LEN_B as usize);
    assert!(s.fill(BASE_B, &m.fill_b));
    s.set_rq(row, RQ_BASE, RQ_LOG);
    s.init_qp(row, m.attr_b.rq_psn).unwrap();
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
