//! The sending side in hardware (`rnic_hw::requester_path`: scheduler, requester, completer
//! and timers joined) running on its own against a model responder over a faulty link, and
//! ending where the transport model ends. A model pair (`common`) is given random work
//! requests of every RC opcode and run on a clean link: that is the expectation. The same
//! requests (drawn from the same seed) go into the hardware's send ring, its doorbell rung;
//! clock by clock the packets it sends become frames (`frame_of`) for a second model B, over
//! a link that drops, duplicates and delays frames both ways, and B's responses go back to the
//! hardware. Nothing tells the hardware what to do: its ACK timer (armed by the packets it
//! sends, timer ticks of a few clocks), its go-back-N and its completions are its own.
//! At the end: the completions it wrote equal the model requester's (wr_id, status, opcode,
//! length, ring index, in order), B's completions and region equal the reference B's (every
//! message exactly once, in order, intact), and A's region in host memory (READ data, atomics'
//! original values) equals the reference A's. Lossy cases must retransmit and time out, and
//! the counters must add up. The first case runs rust-hdl and Verilator in lock-step; the
//! lossy ones run the Verilator model alone (hundreds of thousands of clocks).

mod common;

use common::*;
use rnic_cosim::axis::Rng;
use rnic_cosim::ports::PortDut;
use rnic_cosim::transport::{descriptor_of, frame_of};
use rnic_driver::queues::{Completion, encode_send};
use rnic_driver::requester_path_sim::RequesterPathSim;
use rnic_driver::responder_sim::row_words;
use rnic_driver::tables::{QpContext, encode_mr, encode_qp};
use rnic_hw::transport_header::TransportHeader;
use rnic_transport::mr::MrInfo;
use rnic_transport::verbs::{Mtu, QpType, SendFlags, SendWr, WorkCompletion, WrOpcode};
use rnic_wire::{RoceFrame, RocePacket};

const BASE_A: u64 = 0x3_0000_1000;
const SQ_BASE: u64 = 0x5_0000_0000;
const SQ_LOG: u32 = 8;
/// The hardware rows of a scenario's QPs.
const ROWS: [usize; 2] = [5, 9];
const KEY_INDEX: u32 = 20;
/// One-way link latency in clocks; clocks per timer tick and the hardware QP's TIMEOUT code
/// (2^10 ticks: 8192 clocks, several round trips).
const LAT: u64 = 400;
const TICK: u16 = 8;
const TIMEOUT: u8 = 10;

#[derive(Debug, Default)]
struct Run {
    cycles: u64,
    sent: u64,
    to_b: u64,
    to_a: u64,
    lost: u64,
    completions: usize,
    packets: u64,
    retransmitted: u64,
    expiries: u64,
    arms: u64,
}

/// One QP of the hardware's: its reference pair and its live responder.
struct Side {
    row: usize,
    key: u32,
    base: u64,
    /// The reference pair (clean link, run to the end) and the pair whose B answers the
    /// hardware (its A only posts).
    r: Model,
    m: Model,
    posted: Vec<Posted>,
    want_a: Vec<WorkCompletion>,
    want_b: Vec<WorkCompletion>,
    got_b: Vec<WorkCompletion>,
    template: RoceFrame,
}

/// QP `k` of a scenario: random requests (drawn twice from one seed: the reference's and the
/// live pair's) and the reference run.
fn side(seed: u64, k: usize, mtu: Mtu, ack_every: u32, n: usize) -> Side {
    let mut rng = Rng::new(seed * 1000 + k as u64);
    let mdra = 1 + rng.below(16) as u8;
    let mut rng_ref = rng.clone();
    let mut r = model(&mut rng_ref, mtu, ack_every, mdra);
    let fill_ref = r.a.mr_bytes(r.mr_a.lkey).unwrap().to_vec();
    let mut posted_ref = post_in(&mut r, &mut rng_ref, n, &fill_ref, true);
    let mut m = model(&mut rng, mtu, ack_every, mdra);
    let fill_a = m.a.mr_bytes(m.mr_a.lkey).unwrap().to_vec();
    let mut posted = post_in(&mut m, &mut rng, n, &fill_a, true);
    // A signalled request last: its completion says everything before it completed too.
    for (mm, p) in [(&mut r, &mut posted_ref), (&mut m, &mut posted)] {
        let wr = SendWr::new(99_999, WrOpcode::RdmaWrite)
            .sge(mm.mr_a.va, 40, mm.mr_a.lkey)
            .remote(VA_B + 64, KEY_B)
            .flags(SendFlags::SIGNALED);
        mm.a.post_send(mm.qa, wr.clone()).unwrap();
        p.push(Posted {
            wr,
            bytes: Vec::new(),
        });
    }
    assert_eq!(fill_a, fill_ref);
    assert_eq!(
        posted.iter().map(|p| &p.wr).collect::<Vec<_>>(),
        posted_ref.iter().map(|p| &p.wr).collect::<Vec<_>>(),
        "seed {seed}: both runs drew the same requests"
    );
    run_model(&mut r, &mut Rng::new(seed ^ 1), NO_FAULTS, None);
    let cq_a = r.a.qp(r.qa).unwrap().send_cq;
    let want_a = r.a.poll_cq(cq_a, 10_000);
    let want_b = r.b.poll_cq(r.cq_b, 10_000);
    let template = RocePacket::parse(&r.sent_a[0]).unwrap().repr();
    Side {
        row: ROWS[k],
        key: (KEY_INDEX + k as u32) << 8 | (m.mr_a.lkey & 0xFF),
        base: BASE_A + 0x10_0000 * k as u64,
        r,
        m,
        posted,
        want_a,
        want_b,
        got_b: Vec::new(),
        template,
    }
}

/// Runs `qps` QPs of `n` random requests each on the hardware, each against its own model
/// responder over the faulty link, and checks the end against the reference runs.
fn scenario<D: PortDut>(
    mut hw: RequesterPathSim<D>,
    seed: u64,
    mtu: Mtu,
    ack_every: u32,
    f: Faults,
    n: usize,
    qps: usize,
) -> Run {
    let mut sides: Vec<Side> = (0..qps).map(|k| side(seed, k, mtu, ack_every, n)).collect();
    hw.settings(ack_every, 128, TICK);
    for (k, sd) in sides.iter().enumerate() {
        let ctx_a = QpContext {
            qp_type: QpType::Rc,
            pd: sd.m.mr_a.pd.0,
            pkey: 0xFFFF,
            send_cq: 0,
            recv_cq: 0,
            sig_all: false,
        };
        let mr = MrInfo {
            lkey: sd.key,
            ..sd.m.mr_a
        };
        let mut attr = sd.m.attr_a.clone();
        attr.timeout = TIMEOUT;
        hw.set_qp(sd.row, row_words(&encode_qp(&attr, &ctx_a).unwrap()));
        hw.set_mr(
            (sd.key >> 8) as usize,
            row_words(&encode_mr(&mr, sd.base).unwrap()),
        );
        let fill_a = sd.m.a.mr_bytes(sd.m.mr_a.lkey).unwrap().to_vec();
        hw.map(sd.base, &fill_a);
        hw.set_ring(sd.row, SQ_BASE + 0x10_0000 * k as u64, SQ_LOG);
        hw.init_qp(sd.row, attr.sq_psn, attr.retry_cnt, attr.rnr_retry)
            .unwrap();
    }
    // The requests, QP after QP, a doorbell each.
    for sd in &sides {
        for p in &sd.posted {
            let mut wr = p.wr.clone();
            for s in &mut wr.sg_list {
                s.lkey = sd.key;
            }
            hw.post(sd.row, &encode_send(&wr, 0).unwrap()).unwrap();
        }
    }
    let want_total: usize = sides.iter().map(|s| s.want_a.len()).sum();

    let mut run = Run::default();
    let mut link = Rng::new(seed ^ 0x11A7);
    // In flight: arrival clock, sequence, QP (side), to B?, bytes.
    let mut flight: Vec<(u64, u64, usize, bool, Vec<u8>)> = Vec::new();
    let mut seq = 0u64;
    let limit = 3_000_000u64;
    loop {
        assert!(
            hw.ports.cycle < limit,
            "seed {seed}: not done after {limit} clocks ({} of {want_total} completions, {run:?}, {:?})",
            hw.cqes.len(),
            hw.counters()
        );
        hw.step().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let now = hw.ports.cycle;
        let mut out: Vec<(usize, bool, Vec<u8>)> = Vec::new();
        for s in hw.sent.drain(..) {
            let k = sides
                .iter()
                .position(|sd| sd.row == s.qp)
                .unwrap_or_else(|| panic!("seed {seed}: a packet of row {}", s.qp));
            let th = TransportHeader::unpack(&s.desc);
            let frame = frame_of(&th, &s.payload, &sides[k].template)
                .and_then(|f| f.build().map_err(|e| e.to_string()))
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            out.push((k, true, frame));
            run.sent += 1;
        }
        for (k, sd) in sides.iter_mut().enumerate() {
            for bytes in sd.m.b.poll(now) {
                out.push((k, false, bytes));
            }
        }
        for (k, to_b, bytes) in out {
            let at = f.arrivals(&mut link, now, LAT);
            run.lost += u64::from(at.is_empty());
            for t in at {
                flight.push((t, seq, k, to_b, bytes.clone()));
                seq += 1;
            }
        }
        flight.sort_by_key(|x| (x.0, x.1));
        while flight.first().is_some_and(|x| x.0 <= now) {
            let (_, _, k, to_b, bytes) = flight.remove(0);
            if to_b {
                run.to_b += 1;
                sides[k].m.b.receive(now, &bytes);
            } else {
                run.to_a += 1;
                let pkt = RocePacket::parse(&bytes).unwrap().repr();
                let (mut th, _, _) = descriptor_of(&pkt);
                th.set("DestQP", sides[k].row as u64);
                hw.respond(th.pack().to_vec(), pkt.payload.clone());
            }
        }
        for sd in sides.iter_mut() {
            let cq = sd.m.cq_b;
            let wcs = sd.m.b.poll_cq(cq, 10_000);
            sd.got_b.extend(wcs);
        }
        if hw.cqes.len() >= want_total && flight.is_empty() && hw.quiet() {
            break;
        }
    }
    // A few clocks more: nothing else is sent or completed.
    for _ in 0..2_000 {
        hw.step().unwrap();
    }
    assert!(hw.sent.is_empty(), "seed {seed}: packets after the end");
    run.cycles = hw.ports.cycle;
    let mut got: Vec<Vec<(WorkCompletion, u16)>> = vec![Vec::new(); qps];
    for (cq, e) in &hw.cqes {
        let c = Completion::decode(e).unwrap_or_else(|f| panic!("seed {seed}: {f:?}"));
        assert_eq!(*cq, 0, "seed {seed}: a completion on CQ {cq}");
        let k = sides
            .iter()
            .position(|sd| sd.row == c.qpn as usize)
            .unwrap_or_else(|| panic!("seed {seed}: a completion of row {}", c.qpn));
        let mut wc = c.work_completion();
        wc.qp_num = sides[k].r.qa;
        got[k].push((wc, c.wqe_index));
    }
    for (k, sd) in sides.iter().enumerate() {
        let want: Vec<_> = sd
            .want_a
            .iter()
            .map(|wc| {
                let i = sd
                    .posted
                    .iter()
                    .position(|p| p.wr.wr_id == wc.wr_id)
                    .expect("a posted request");
                (wc.clone(), i as u16)
            })
            .collect();
        assert_eq!(got[k], want, "seed {seed}: QP {k}'s completions");
        run.completions += got[k].len();
        assert_eq!(
            sd.got_b, sd.want_b,
            "seed {seed}: QP {k}'s responder's completions"
        );
        let (mem_b, ref_b) = (
            sd.m.b.mr_bytes(KEY_B).unwrap(),
            sd.r.b.mr_bytes(KEY_B).unwrap(),
        );
        if let Some(i) = (0..ref_b.len()).find(|&i| mem_b[i] != ref_b[i]) {
            panic!(
                "seed {seed}: QP {k}'s responder's region byte {i:#x} differs from the reference's"
            );
        }
        let hw_a = hw.read(sd.base, A_LEN as usize).expect("mapped").to_vec();
        let ref_a = sd.r.a.mr_bytes(sd.r.mr_a.lkey).unwrap();
        if let Some(i) = (0..ref_a.len()).find(|&i| hw_a[i] != ref_a[i]) {
            panic!(
                "seed {seed}: QP {k}'s region byte {i:#x} differs: hardware {:#x}, reference {:#x}",
                hw_a[i], ref_a[i]
            );
        }
    }
    let c = hw.counters();
    assert_eq!(c.responses, run.to_a, "seed {seed}: responses counted");
    assert_eq!(c.req_dma_err + c.comp_dma_err, 0, "seed {seed}: DMA errors");
    assert_eq!(
        c.packets + c.retransmitted,
        run.sent,
        "seed {seed}: packets counted"
    );
    run.packets = c.packets;
    run.retransmitted = c.retransmitted;
    run.expiries = c.expiries;
    run.arms = c.arms;
    run
}

fn report(seed: u64, r: &Run) {
    println!(
        "seed {seed}: {} clocks, {} completions, {} packets sent ({} first, {} again), {} frames lost, {} to B, {} to A, {} expiries, {} ACK timers armed by packets",
        r.cycles,
        r.completions,
        r.sent,
        r.packets,
        r.retransmitted,
        r.lost,
        r.to_b,
        r.to_a,
        r.expiries,
        r.arms
    );
}

#[test]
fn the_sending_side_in_lockstep_completes_what_the_model_completes() {
    // The path's rust-hdl model is one deep struct: more stack than a test thread has.
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(lockstep_runs)
        .unwrap()
        .join()
        .unwrap_or_else(|_| panic!("the lock-step runs failed"));
}

/// A clean run, then a lossy one: rust-hdl and Verilator agree on every port every clock.
fn lockstep_runs() {
    let seed = 1;
    let hw = RequesterPathSim::lockstep(seed, 0.2).unwrap();
    let r = scenario(hw, seed, Mtu::M512, 3, NO_FAULTS, 14, 1);
    report(seed, &r);
    assert_eq!(r.retransmitted, 0, "a clean link retransmits nothing");
    assert_eq!(r.expiries, 0, "a clean link times nothing out");
    assert!(r.arms > 0, "packets sent arm the ACK timer");
    let seed = 5;
    let hw = RequesterPathSim::lockstep(seed, 0.2).unwrap();
    let f = Faults {
        drop: 0.05,
        dup: 0.02,
        delay: 0.02,
    };
    let r = scenario(hw, seed, Mtu::M256, 2, f, 16, 2);
    report(seed, &r);
    assert!(
        r.retransmitted > 0 && r.lost > 0,
        "the lossy run retransmits"
    );
}

#[test]
fn the_sending_side_recovers_from_a_faulty_link_on_its_own() {
    let cases: [(u64, Mtu, u32, Faults, usize, usize); 4] = [
        (
            2,
            Mtu::M1024,
            4,
            Faults {
                drop: 0.05,
                dup: 0.02,
                delay: 0.02,
            },
            60,
            2,
        ),
        (
            3,
            Mtu::M256,
            2,
            Faults {
                drop: 0.1,
                dup: 0.0,
                delay: 0.05,
            },
            80,
            1,
        ),
        (
            4,
            Mtu::M4096,
            64,
            Faults {
                drop: 0.02,
                dup: 0.05,
                delay: 0.0,
            },
            40,
            2,
        ),
        (
            6,
            Mtu::M512,
            1,
            Faults {
                drop: 0.15,
                dup: 0.05,
                delay: 0.05,
            },
            40,
            2,
        ),
    ];
    let (mut again, mut expiries, mut completions) = (0, 0, 0);
    // Each case twice, on other requests and another fault pattern.
    for (seed, mtu, every, f, n, qps) in cases
        .into_iter()
        .flat_map(|c| [c, (c.0 + 100, c.1, c.2, c.3, c.4, c.5)])
    {
        let hw = RequesterPathSim::verilated(seed, 0.1).unwrap();
        let r = scenario(hw, seed, mtu, every, f, n, qps);
        report(seed, &r);
        again += r.retransmitted;
        expiries += r.expiries;
        completions += r.completions;
    }
    assert!(again > 600, "{again} packets sent again");
    assert!(expiries > 20, "{expiries} ACK timeouts");
    assert!(completions > 300, "{completions} completions");
}
