//! The completer engine in hardware (`rnic_hw::completer`, rust-hdl and Verilator in
//! lock-step) against the transport model's completer, response for response. A model pair
//! (`common`) runs random work requests of every RC opcode over a link that drops frames; the
//! hardware holds A's QP: the same requests in its send ring in host memory, A's region behind
//! its DMA port, A's QP and region rows in its tables. Every response A receives goes to the
//! hardware too (its transport header and payload, with the requester's send point at that
//! moment), and every ACK timeout and end of an RNR wait A's completer handles is handed to the
//! hardware as its timer's expiry. After each: the completions the hardware wrote equal those
//! A's completer produced (wr_id, status, opcode, length, ring index, in order; coalesced ACKs
//! completing several requests, unsignalled ones completing none), its timer command equals
//! the model's decision (an RNR wait with the NAK's code, the ACK timer restarted or stopped,
//! or nothing), and the view it gives the requester equals A's (the oldest unacknowledged PSN,
//! the ring's consumer and the first PSN of its request, READs and atomics completed and the
//! rewinds asked for, mod 16, an RNR wait). At the end A's region in host memory equals the
//! model's: READ responses placed across the READ's entries at their offsets, atomics'
//! original values. A fifth case holds B's receive requests back, so SENDs meet RNR NAKs and
//! their waits end in the hardware as in the model; a sixth ends with a WRITE whose R_Key B
//! refuses: its remote access NAK fails it, the requests after it complete flushed (read
//! from the ring for their wr_id), the view is left in error and the responses still in
//! flight are dropped, as A drops them. Every handshake stalls at random.

mod common;

use common::*;
use rnic_cosim::axis::Rng;
use rnic_cosim::transport::descriptor_of;
use rnic_driver::completer_sim::{CompleterSim, Event, TimerCmd, View};
use rnic_driver::queues::{Completion, encode_send};
use rnic_driver::responder_sim::row_words;
use rnic_driver::tables::{QpContext, encode_mr, encode_qp};
use rnic_hw::transport_header::{Class, class_of};
use rnic_transport::comp_check::{Step, Timer};
use rnic_transport::mr::MrInfo;
use rnic_transport::verbs::{Mtu, QpState, QpType, RecvWr, SendWr, WrOpcode};
use rnic_wire::RocePacket;

const BASE_A: u64 = 0x3_0000_1000;
const SQ_BASE: u64 = 0x5_0000_0000;
const SQ_LOG: u32 = 8;
const ROW: usize = 5;
const KEY_INDEX: u32 = 20;

#[derive(Default)]
struct Covered {
    responses: u64,
    cqes: usize,
    coalesced: u64,
    reads_placed: u64,
    atomics: u64,
    rewinds: u64,
    timeouts: u64,
    rnr_waits: u64,
    failed: u64,
    dropped: u64,
    cycles: u64,
}

/// A's view now: what its completer knows (`rewinds` counted by the caller).
fn model_view(m: &Model, posted: &[Posted], rewinds: u8) -> View {
    let qp = m.a.qp(m.qa).unwrap();
    let cons = posted.len() - qp.sq.len();
    let rd_done = posted[..cons]
        .iter()
        .filter(|p| p.wr.opcode == WrOpcode::RdmaRead || p.wr.opcode.is_atomic())
        .count();
    View {
        oldest: qp.comp.psn,
        cons: cons as u16,
        front: qp
            .sq
            .front()
            .and_then(|w| w.first_psn)
            .unwrap_or(qp.req.next_psn),
        rd_done: (rd_done & 15) as u8,
        rewinds: rewinds & 15,
        rnr: qp.comp.rnr_until.is_some(),
        err: qp.state() == QpState::Err,
    }
}

/// The requester's send point: one past the highest PSN sent, the next request to start.
fn send_point(m: &Model, posted: &[Posted]) -> (u32, u16) {
    let qa = m.a.qp(m.qa).unwrap();
    let unstarted = qa.sq.iter().filter(|w| w.first_psn.is_none()).count();
    (qa.req.sent_upto, (posted.len() - unstarted) as u16)
}

/// The timer command the model's last step of a response asks for.
fn timer_of(s: &Step, syndrome: u8, timeout: u8) -> Option<(bool, bool, u8)> {
    if s.fail.is_some() {
        // The failure's flush stops the timers.
        return Some((false, false, 0));
    }
    if s.rnr_wait {
        return Some((true, true, syndrome & 0x1F));
    }
    match s.timer {
        Timer::Keep => None,
        Timer::Arm if timeout != 0 => Some((true, false, timeout)),
        Timer::Arm | Timer::Stop => Some((false, false, 0)),
    }
}

/// What a case adds to the random requests.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Twist {
    None,
    /// SENDs only, B's receive requests posted one every 30 rounds.
    Rnr,
    /// A WRITE with an R_Key B refuses, then WRITEs that are flushed.
    Fail,
}

/// `n` SENDs on A; their receive requests for B, held back.
fn post_sends(m: &mut Model, rng: &mut Rng, n: usize, fill_a: &[u8]) -> (Vec<Posted>, Vec<RecvWr>) {
    let mut out = Vec::new();
    let mut recvs = Vec::new();
    for i in 0..n {
        let len = rng.below(3000);
        let at = rng.below(A_SRC - len + 1);
        let wr = SendWr::new(i as u64, WrOpcode::Send)
            .sge(m.mr_a.va + at, len as u32, m.mr_a.lkey)
            .flags(rnic_transport::verbs::SendFlags::SIGNALED);
        let dst = rng.below(LEN_B - len + 1);
        recvs.push(RecvWr::new(i as u64).sge(VA_B + dst, len as u32, KEY_B));
        m.a.post_send(m.qa, wr.clone()).unwrap();
        out.push(Posted {
            wr,
            bytes: fill_a[at as usize..(at + len) as usize].to_vec(),
        });
    }
    (out, recvs)
}

fn scenario(seed: u64, mtu: Mtu, ack_every: u32, drop: f64, n: usize, twist: Twist) -> Covered {
    let mut rng = Rng::new(seed);
    let mut hw = CompleterSim::lockstep(seed, 0.25).unwrap();
    let mdra = 1 + rng.below(16) as u8;
    let mut m = model(&mut rng, mtu, ack_every, mdra);
    m.a.log_completer_steps(true);
    let fill_a = m.a.mr_bytes(m.mr_a.lkey).unwrap().to_vec();
    let (mut posted, mut held) = if twist == Twist::Rnr {
        post_sends(&mut m, &mut rng, n, &fill_a)
    } else {
        (post(&mut m, &mut rng, n, &fill_a), Vec::new())
    };
    if twist == Twist::Fail {
        for k in 0..6u64 {
            let key = if k == 0 { KEY_B ^ 0x100 } else { KEY_B };
            let wr = SendWr::new(10_000 + k, WrOpcode::RdmaWrite)
                .sge(m.mr_a.va + 64 * k, 64, m.mr_a.lkey)
                .remote(VA_B, key);
            m.a.post_send(m.qa, wr.clone()).unwrap();
            posted.push(Posted {
                wr,
                bytes: fill_a[64 * k as usize..64 * (k as usize + 1)].to_vec(),
            });
        }
    }
    let posted = posted;
    let cq_a = m.a.qp(m.qa).unwrap().send_cq;
    let ctx_a = QpContext {
        qp_type: QpType::Rc,
        pd: m.mr_a.pd.0,
        pkey: 0xFFFF,
        send_cq: 0,
        recv_cq: 0,
        sig_all: false,
    };
    let key = KEY_INDEX << 8 | (m.mr_a.lkey & 0xFF);
    let mr = MrInfo {
        lkey: key,
        ..m.mr_a
    };
    hw.set_qp(ROW, row_words(&encode_qp(&m.attr_a, &ctx_a).unwrap()));
    hw.set_mr(
        KEY_INDEX as usize,
        row_words(&encode_mr(&mr, BASE_A).unwrap()),
    );
    hw.map(BASE_A, &fill_a);
    hw.set_ring(ROW, SQ_BASE, SQ_LOG);
    hw.init_qp(ROW, m.attr_a.sq_psn, m.attr_a.retry_cnt, m.attr_a.rnr_retry)
        .unwrap();
    for p in &posted {
        let mut wr = p.wr.clone();
        for s in &mut wr.sg_list {
            s.lkey = key;
        }
        hw.post(ROW, &encode_send(&wr, 0).unwrap()).unwrap();
    }
    let timeout = m.attr_a.timeout;
    let mut cov = Covered::default();
    let (mut rewinds, mut timeouts_seen, mut rnr_was) = (0u8, 0u64, false);
    let mut flight: Vec<(u64, u64, bool, Vec<u8>)> = Vec::new();
    let mut seq = 0u64;
    let check_view = |hw: &mut CompleterSim<_>, m: &Model, rewinds: u8, what: &str| {
        let got = hw.view(ROW).unwrap();
        let want = model_view(m, &posted, rewinds);
        assert_eq!(got, want, "seed {seed}: the view after {what}");
    };
    let check_cqes = |hw_cqes: &[(u16, [u8; 32])], m: &mut Model, what: &str| -> usize {
        let wcs = m.a.poll_cq(cq_a, 10_000);
        let got: Vec<_> = hw_cqes
            .iter()
            .map(|(cq, e)| {
                let c = Completion::decode(e).unwrap_or_else(|f| panic!("seed {seed}: {f:?}"));
                assert_eq!(*cq, 0, "seed {seed}: a completion on CQ {cq}");
                assert_eq!(c.qpn as usize, ROW, "seed {seed}: the completion's QPN");
                let mut wc = c.work_completion();
                wc.qp_num = m.qa;
                (wc, c.wqe_index)
            })
            .collect();
        let want: Vec<_> = wcs
            .iter()
            .map(|wc| {
                let k = posted
                    .iter()
                    .position(|p| p.wr.wr_id == wc.wr_id)
                    .expect("a posted request");
                (wc.clone(), k as u16)
            })
            .collect();
        assert_eq!(got, want, "seed {seed}: completions after {what}");
        wcs.len()
    };
    for round in 0..400_000 {
        // A's poll: its timers first (handed to the hardware as expiries, with the send point
        // they saw), then its requester.
        let (sent, nstart) = send_point(&m, &posted);
        hw.set_send_point(ROW, sent, nstart);
        let fa = m.a.poll(m.now);
        let steps = m.a.take_completer_steps();
        assert!(steps.is_empty(), "seed {seed}: steps outside a response");
        if round % 30 == 29 && !held.is_empty() {
            m.b.post_recv(m.qb, held.remove(0)).unwrap();
        }
        let qa = m.a.qp(m.qa).unwrap();
        if twist != Twist::Fail {
            assert_eq!(qa.state(), QpState::Rts, "seed {seed}: A's QP left RTS");
        }
        let rnr_ended = rnr_was && qa.comp.rnr_until.is_none();
        let timeouts = m.a.counters.comp_timeouts - timeouts_seen;
        timeouts_seen = m.a.counters.comp_timeouts;
        let mut events = Vec::new();
        if rnr_ended {
            events.push(Event::Expiry(ROW, true));
        }
        for _ in 0..timeouts {
            events.push(Event::Expiry(ROW, false));
        }
        for ev in &events {
            let h = hw.handle(ev).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            rewinds = rewinds.wrapping_add(1);
            cov.rewinds += 1;
            cov.cycles += h.cycles;
            assert!(h.cqes.is_empty(), "seed {seed}: completions on an expiry");
        }
        cov.timeouts += timeouts;
        rnr_was = qa.comp.rnr_until.is_some();
        if !events.is_empty() {
            check_view(&mut hw, &m, rewinds, "an expiry");
        }
        // The link: A's frames, B's answers, then one event.
        const LAT: u64 = 2_000;
        let now = m.now;
        let fb = m.b.poll(now);
        for (to_b, frames) in [(true, fa), (false, fb)] {
            for bytes in frames {
                if rng.chance(drop) {
                    continue;
                }
                flight.push((now + LAT, seq, to_b, bytes));
                seq += 1;
            }
        }
        flight.sort_by_key(|x| (x.0, x.1));
        let frame_t = flight.first().map(|x| x.0);
        let timer_t = [m.a.next_deadline(), m.b.next_deadline()]
            .into_iter()
            .flatten()
            .min();
        let Some(t) = [frame_t, timer_t].into_iter().flatten().min() else {
            break;
        };
        m.now = m.now.max(t);
        if flight.first().is_none_or(|x| x.0 > m.now) {
            continue;
        }
        let (_, _, to_b, bytes) = flight.remove(0);
        if to_b {
            m.b.receive(m.now, &bytes);
            continue;
        }
        let pkt = RocePacket::parse(&bytes).unwrap().repr();
        assert_eq!(class_of(pkt.bth.opcode), Class::Response);
        let (sent, nstart) = send_point(&m, &posted);
        hw.set_send_point(ROW, sent, nstart);
        let was_err = m.a.qp(m.qa).unwrap().state() == QpState::Err;
        m.a.receive(m.now, &bytes);
        let steps = m.a.take_completer_steps();
        let (mut th, _, _) = descriptor_of(&pkt);
        th.set("DestQP", ROW as u64);
        let ev = Event::Response(th.pack().to_vec(), pkt.payload.clone());
        let h = hw
            .handle(&ev)
            .unwrap_or_else(|e| panic!("seed {seed} round {round}: {e}"));
        cov.responses += 1;
        cov.cycles += h.cycles;
        if was_err {
            // A drops it; so does the hardware.
            assert!(steps.is_empty());
            assert!(h.cqes.is_empty() && h.kicks.is_empty() && h.timers.is_empty());
            cov.dropped += 1;
            continue;
        }
        let what = format!(
            "round {round}'s response (opcode {:#x}, PSN {:#x})",
            pkt.bth.opcode, pkt.bth.psn
        );
        let n = check_cqes(&h.cqes, &mut m, &what);
        cov.cqes += n;
        let last = steps.last().expect("a response takes a step");
        let done = steps
            .iter()
            .filter(|(_, s)| s.complete || s.verdict.code() == 0)
            .count();
        cov.coalesced += u64::from(done > 1);
        cov.reads_placed += u64::from(last.1.verdict.code() == 7);
        cov.atomics += u64::from(last.1.verdict.code() == 10);
        cov.rnr_waits += u64::from(last.1.rnr_wait);
        if last.1.rewind && last.1.fail.is_none() {
            rewinds = rewinds.wrapping_add(1);
            cov.rewinds += 1;
        }
        let want = timer_of(&last.1, last.0.syndrome, timeout);
        let got: Vec<_> = h
            .timers
            .iter()
            .map(|t: &TimerCmd| {
                assert_eq!(t.qp, ROW);
                (t.arm, t.rnr, if t.arm { t.code } else { 0 })
            })
            .collect();
        assert_eq!(
            got,
            want.into_iter().collect::<Vec<_>>(),
            "seed {seed}: the timer after {what}"
        );
        assert_eq!(h.kicks, vec![ROW], "seed {seed}: the doorbell after {what}");
        rnr_was = m.a.qp(m.qa).unwrap().comp.rnr_until.is_some();
        if last.1.fail.is_some() {
            cov.failed += 1;
            let got = hw.view(ROW).unwrap();
            assert!(got.err, "seed {seed}: the view is in error");
            assert_eq!(
                usize::from(got.cons),
                posted.len(),
                "seed {seed}: flushed up to the producer"
            );
        } else {
            check_view(&mut hw, &m, rewinds, &what);
        }
    }
    let qa = m.a.qp(m.qa).unwrap();
    assert!(qa.sq.is_empty(), "seed {seed}: the pair did not finish");
    let hw_mem = hw.read(BASE_A, A_LEN as usize).expect("mapped").to_vec();
    let model_mem = m.a.mr_bytes(m.mr_a.lkey).unwrap();
    if let Some(k) = (0..model_mem.len()).find(|&k| model_mem[k] != hw_mem[k]) {
        panic!(
            "seed {seed}: A's region byte {k:#x} differs: hardware {:#x}, model {:#x}",
            hw_mem[k], model_mem[k]
        );
    }
    assert_eq!(hw.ports.get("cnt_responses"), cov.responses);
    assert_eq!(hw.ports.get("cnt_dropped"), cov.dropped);
    assert_eq!(hw.ports.get("cnt_dma_err"), 0);
    cov
}

#[test]
fn completer_completes_what_the_model_completes() {
    let cases: [(u64, Mtu, u32, f64, usize, Twist); 6] = [
        (1, Mtu::M256, 64, 0.0, 80, Twist::None),
        (2, Mtu::M1024, 3, 0.05, 60, Twist::None),
        (3, Mtu::M512, 1, 0.1, 50, Twist::None),
        (4, Mtu::M4096, 2, 0.05, 40, Twist::None),
        (5, Mtu::M1024, 4, 0.02, 12, Twist::Rnr),
        (6, Mtu::M512, 2, 0.0, 30, Twist::Fail),
    ];
    let mut total = Covered::default();
    for (seed, mtu, every, drop, n, twist) in cases {
        let c = scenario(seed, mtu, every, drop, n, twist);
        println!(
            "seed {seed}: {} responses ({} dropped), {} completions ({} responses completing several), {} READ responses placed, {} atomics, {} rewinds ({} timeouts), {} RNR waits, {} failed, {} clocks",
            c.responses,
            c.dropped,
            c.cqes,
            c.coalesced,
            c.reads_placed,
            c.atomics,
            c.rewinds,
            c.timeouts,
            c.rnr_waits,
            c.failed,
            c.cycles
        );
        total.rnr_waits += c.rnr_waits;
        total.failed += c.failed;
        total.responses += c.responses;
        total.cqes += c.cqes;
        total.coalesced += c.coalesced;
        total.reads_placed += c.reads_placed;
        total.atomics += c.atomics;
        total.rewinds += c.rewinds;
        total.timeouts += c.timeouts;
    }
    assert!(total.responses > 300, "{} responses", total.responses);
    assert!(total.coalesced > 5, "{} coalesced ACKs", total.coalesced);
    assert!(total.reads_placed > 30 && total.atomics > 10);
    assert!(total.rewinds > 5 && total.timeouts > 0);
    assert!(total.rnr_waits > 3, "{} RNR waits", total.rnr_waits);
    assert_eq!(total.failed, 1, "the refused WRITE fails");
}
