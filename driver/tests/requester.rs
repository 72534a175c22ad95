//! The requester engine in hardware (`rnic_hw::requester`, rust-hdl and Verilator in
//! lock-step) against the transport model's requester, packet for packet. The model pair
//! (`common`) runs random work requests of every RC opcode over a link that drops frames; the
//! hardware holds A's QP: the same requests in its send ring in host memory, A's region behind
//! its DMA port, A's QP and region rows in its tables. Whenever A's requester has run (every
//! `poll`), the hardware is given what A's completer knows at that moment (the oldest
//! unacknowledged PSN, the ring's consumer and the first PSN of the request there, READs and
//! atomics completed, the rewinds A's completer asked for: NAKs, timeouts and RNR waits, and
//! whether an RNR wait is under way) and takes turns until it ends one without `more`: the
//! packets it sent in those turns equal the frames A sent in that poll, in order (send
//! descriptor and payload), so it stops where the model stops (the window, fences, the
//! READ/atomic limit) and goes back where the model goes back, also inside a message and
//! inside a partly answered READ. Every handshake stalls at random.

mod common;

use common::*;
use rnic_cosim::axis::Rng;
use rnic_cosim::transport::descriptor_of;
use rnic_driver::queues::encode_send;
use rnic_driver::requester_sim::{RequesterSim, View};
use rnic_driver::responder_sim::row_words;
use rnic_driver::tables::{QpContext, encode_mr, encode_qp};
use rnic_transport::verbs::{Mtu, QpState, QpType, SendFlags, WrOpcode};
use rnic_wire::RocePacket;

/// Device addresses: A's region and the send ring (256 requests of 128 bytes).
const BASE_A: u64 = 0x3_0000_1000;
const SQ_BASE: u64 = 0x5_0000_0000;
const SQ_LOG: u32 = 8;
/// The QP's row in the hardware's tables (its send ring is the same number).
const ROW: usize = 5;

/// What A's completer knows now, and the rewinds it asked for since `before`.
fn view_of(m: &Model, posted: &[Posted], rewinds: u8) -> View {
    let qp = m.a.qp(m.qa).unwrap();
    let cons = posted.len() - qp.sq.len();
    let rd_done = posted[..cons]
        .iter()
        .filter(|p| p.wr.opcode == WrOpcode::RdmaRead || p.wr.opcode.is_atomic())
        .count();
    View {
        oldest: qp.comp.psn,
        cons: cons as u16,
        front: qp.sq.front().and_then(|w| w.first_psn).unwrap_or(0),
        rd_done: rd_done as u8,
        rewinds,
        rnr: qp.comp.rnr_until.is_some(),
    }
}

struct Covered {
    packets: usize,
    retransmitted: u64,
    rewinds: u64,
    held: u64,
    /// Polls after which A's next request waited on a fence or the READ/atomic limit.
    fenced: u64,
    limited: u64,
    turns: u64,
    cycles: u64,
}

/// Why A's next request, not yet started, waits after a poll (fence, READ/atomic limit).
fn start_held(m: &Model) -> (bool, bool) {
    let qp = m.a.qp(m.qa).unwrap();
    let cur = qp.req.cur;
    let Some(w) = qp.sq.get(cur).filter(|w| w.first_psn.is_none()) else {
        return (false, false);
    };
    let rd = |op: WrOpcode| op == WrOpcode::RdmaRead || op.is_atomic();
    let open = qp.sq.range(..cur).filter(|w| rd(w.wr.opcode)).count();
    let fenced = w.wr.flags.contains(SendFlags::FENCE) && open > 0;
    let limited = rd(w.wr.opcode) && open >= usize::from(qp.attr.max_rd_atomic.max(1));
    (fenced, limited)
}

fn scenario(seed: u64, mtu: Mtu, ack_every: u32, drop: f64) -> Covered {
    let mut rng = Rng::new(seed);
    let mdra = 1 + rng.below(16) as u8;
    let mut m = model(&mut rng, mtu, ack_every, mdra);
    m.a.log_completer_steps(true);
    let fill_a = m.a.mr_bytes(m.mr_a.lkey).unwrap().to_vec();
    let posted = post(&mut m, &mut rng, 100, &fill_a);

    let ctx_a = QpContext {
        qp_type: QpType::Rc,
        pd: m.mr_a.pd.0,
        pkey: 0xFFFF,
        send_cq: 0,
        recv_cq: 0,
        sig_all: false,
    };
    let mut hw = RequesterSim::lockstep(seed, 0.25).unwrap();
    hw.set_qp(ROW, row_words(&encode_qp(&m.attr_a, &ctx_a).unwrap()));
    hw.set_mr(
        (m.mr_a.lkey >> 8) as usize,
        row_words(&encode_mr(&m.mr_a, BASE_A).unwrap()),
    );
    hw.map(BASE_A, fill_a.clone());
    hw.set_ring(ROW, SQ_BASE, SQ_LOG);
    hw.init_qp(ROW, m.attr_a.sq_psn, ack_every, 128).unwrap();
    for p in &posted {
        hw.post(ROW, &encode_send(&p.wr, 0).unwrap()).unwrap();
    }
    let mut turns = 0;

    const LAT: u64 = 2_000;
    let mut flight: Vec<(u64, u64, bool, Vec<u8>)> = Vec::new();
    let mut seq = 0u64;
    let mut rewinds = 0u8;
    let (mut timeouts, mut rnr_was) = (0u64, false);
    let mut cov = Covered {
        packets: 0,
        retransmitted: 0,
        rewinds: 0,
        held: 0,
        fenced: 0,
        limited: 0,
        turns: 0,
        cycles: 0,
    };
    for _ in 0..200_000 {
        let now = m.now;
        let fa = m.a.poll(now);
        // The rewinds A's completer asked for since the last poll: steps, timeouts, the end
        // of an RNR wait.
        let steps = m.a.take_completer_steps();
        let qa = m.a.qp(m.qa).unwrap();
        let mut n = steps
            .iter()
            .filter(|(_, s)| s.rewind && s.fail.is_none())
            .count() as u64;
        n += m.a.counters.comp_timeouts - timeouts;
        timeouts = m.a.counters.comp_timeouts;
        if rnr_was && qa.comp.rnr_until.is_none() {
            n += 1;
        }
        rnr_was = qa.comp.rnr_until.is_some();
        rewinds = rewinds.wrapping_add(n as u8);
        cov.rewinds += n;
        assert_eq!(qa.state(), QpState::Rts, "seed {seed}: A's QP left RTS");
        let view = view_of(&m, &posted, rewinds);
        hw.set_view(ROW, view);
        let t = hw.turns(ROW).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        turns += t.turns;
        let sent = t.sent;
        assert!(
            t.fails.is_empty(),
            "seed {seed}: requests failed: {:?}",
            t.fails
        );
        assert_eq!(
            sent.len(),
            fa.len(),
            "seed {seed} at {now} ns: the hardware sent {} packets, A {}",
            sent.len(),
            fa.len()
        );
        if fa.is_empty() && hw.producer(ROW) != Some(view.cons) {
            cov.held += 1;
        }
        let (fenced, limited) = start_held(&m);
        cov.fenced += u64::from(fenced);
        cov.limited += u64::from(limited);
        for (k, (h, bytes)) in sent.iter().zip(&fa).enumerate() {
            let p = RocePacket::parse(bytes).unwrap();
            let frame = p.repr();
            let (want, _, _) = descriptor_of(&frame);
            assert_eq!(
                h.desc,
                want.pack().to_vec(),
                "seed {seed} at {now} ns: packet {k} of {} (PSN {:#x})",
                fa.len(),
                frame.bth.psn
            );
            assert_eq!(
                h.payload, frame.payload,
                "seed {seed}: packet {k}'s payload"
            );
        }
        cov.packets += fa.len();
        for bytes in fa {
            if rng.chance(drop) {
                continue;
            }
            flight.push((now + LAT, seq, true, bytes));
            seq += 1;
        }
        for bytes in m.b.poll(now) {
            if rng.chance(drop) {
                continue;
            }
            flight.push((now + LAT, seq, false, bytes));
            seq += 1;
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
        if flight.first().is_some_and(|x| x.0 <= m.now) {
            let (_, _, to_b, bytes) = flight.remove(0);
            if to_b {
                m.b.receive(m.now, &bytes);
            } else {
                m.a.receive(m.now, &bytes);
            }
        }
    }
    let qa = m.a.qp(m.qa).unwrap();
    assert!(qa.sq.is_empty(), "seed {seed}: the pair did not finish");
    cov.retransmitted = hw.get("cnt_retransmitted");
    assert_eq!(
        hw.get("cnt_packets") + cov.retransmitted,
        cov.packets as u64,
        "seed {seed}: the engine's packet counts"
    );
    assert_eq!(hw.get("cnt_dma_err"), 0);
    cov.cycles = hw.cycle;
    cov.turns = turns;
    cov
}

#[test]
fn requester_sends_what_the_model_sends() {
    let mut total = Covered {
        packets: 0,
        retransmitted: 0,
        rewinds: 0,
        held: 0,
        fenced: 0,
        limited: 0,
        turns: 0,
        cycles: 0,
    };
    for (seed, mtu, every, drop) in [
        (1u64, Mtu::M256, 64u32, 0.0),
        (2, Mtu::M1024, 3, 0.05),
        (3, Mtu::M512, 1, 0.1),
    ] {
        let c = scenario(seed, mtu, every, drop);
        println!(
            "seed {seed}: {} packets ({} sent again), {} rewinds, {} polls held back ({} by a fence, {} by the READ/atomic limit), {} turns, {} clocks",
            c.packets, c.retransmitted, c.rewinds, c.held, c.fenced, c.limited, c.turns, c.cycles
        );
        total.packets += c.packets;
        total.fenced += c.fenced;
        total.limited += c.limited;
        total.retransmitted += c.retransmitted;
        total.rewinds += c.rewinds;
        total.held += c.held;
    }
    assert!(total.packets > 500, "{} packets", total.packets);
    assert!(
        total.retransmitted > 20,
        "{} sent again",
        total.retransmitted
    );
    assert!(total.held > 10, "{} polls held back", total.held);
    assert!(
        total.fenced > 0 && total.limited > 0,
        "no fence or limit held a request"
    );
}
