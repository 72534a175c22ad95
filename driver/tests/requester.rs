//! The requester engine in hardware (`rnic_hw::requester`, rust-hdl and Verilator in
//! lock-step) against the transport model's requester, packet for packet. One to three model
//! pairs (`common`) run random work requests of every RC opcode over links that drop frames;
//! the hardware holds every pair's A QP at its own row, served in round robin: the same
//! requests in its send ring in host memory, A's region behind its DMA port (at its own key
//! index), A's QP and region rows in its tables. Whenever A's requester has run (every
//! `poll`), the hardware is given what A's completer knows at that moment (the oldest
//! unacknowledged PSN, the ring's consumer and the first PSN of the request there, READs and
//! atomics completed, the rewinds A's completer asked for: NAKs, timeouts and RNR waits, and
//! whether an RNR wait is under way) and takes turns until it ends one without `more`: the
//! packets it sent in those turns equal the frames A sent in that poll, in order (send
//! descriptor and payload), so it stops where the model stops (the window, fences, the
//! READ/atomic limit) and goes back where the model goes back, also inside a message and
//! inside a partly answered READ, while the other QPs' turns come between. The send point the
//! completer reads (one past the highest PSN sent, the next request to start) equals A's
//! after every run of turns. A fourth case sends WRITEs longer than the window at MTU 256 with
//! AckReq every 5 packets, so rewinds land while packets since the last AckReq are counted
//! (the engine that kept that count across a rewind passed the first three cases and fails
//! this one). Every handshake stalls at random.

mod common;

use common::*;
use rnic_cosim::axis::Rng;
use rnic_cosim::transport::descriptor_of;
use rnic_driver::queues::encode_send;
use rnic_driver::requester_sim::{RequesterSim, View};
use rnic_driver::responder_sim::row_words;
use rnic_driver::tables::{QpContext, encode_mr, encode_qp};
use rnic_transport::mr::MrInfo;
use rnic_transport::verbs::{Mtu, QpState, QpType, SendFlags, SendWr, WrOpcode};
use rnic_wire::RocePacket;

/// Device addresses of pair `i`'s region and send ring (256 requests of 128 bytes) are these
/// plus `i * STRIDE`.
const BASE_A: u64 = 0x3_0000_1000;
const SQ_BASE: u64 = 0x5_0000_0000;
const STRIDE: u64 = 0x100_0000;
const SQ_LOG: u32 = 8;
/// Pair `i`'s QP row (its send ring is the same number) and region key index.
const ROW0: usize = 5;
const KEY0: u32 = 20;

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
        err: false,
    }
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

#[derive(Default)]
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

/// One model pair and its link.
struct Pair {
    m: Model,
    posted: Vec<Posted>,
    row: usize,
    flight: Vec<(u64, u64, bool, Vec<u8>)>,
    seq: u64,
    rewinds: u8,
    timeouts: u64,
    rnr_was: bool,
    quiet: bool,
}

impl Pair {
    /// A's poll: its frames, and its completer's view (with the rewinds it asked for since
    /// the last poll: steps, timeouts, the end of an RNR wait).
    fn poll(&mut self, cov: &mut Covered) -> (Vec<Vec<u8>>, View) {
        let fa = self.m.a.poll(self.m.now);
        let steps = self.m.a.take_completer_steps();
        let qa = self.m.a.qp(self.m.qa).unwrap();
        let mut n = steps
            .iter()
            .filter(|(_, s)| s.rewind && s.fail.is_none())
            .count() as u64;
        n += self.m.a.counters.comp_timeouts - self.timeouts;
        self.timeouts = self.m.a.counters.comp_timeouts;
        if self.rnr_was && qa.comp.rnr_until.is_none() {
            n += 1;
        }
        self.rnr_was = qa.comp.rnr_until.is_some();
        self.rewinds = self.rewinds.wrapping_add(n as u8);
        cov.rewinds += n;
        assert_eq!(qa.state(), QpState::Rts, "A's QP left RTS");
        let (fenced, limited) = start_held(&self.m);
        cov.fenced += u64::from(fenced);
        cov.limited += u64::from(limited);
        (fa, view_of(&self.m, &self.posted, self.rewinds))
    }

    /// The link after A's frames: B's answers, then the next event (one frame delivered).
    fn advance(&mut self, rng: &mut Rng, fa: Vec<Vec<u8>>, drop: f64) {
        const LAT: u64 = 2_000;
        let now = self.m.now;
        let fb = self.m.b.poll(now);
        for (to_b, frames) in [(true, fa), (false, fb)] {
            for bytes in frames {
                if rng.chance(drop) {
                    continue;
                }
                self.flight.push((now + LAT, self.seq, to_b, bytes));
                self.seq += 1;
            }
        }
        self.flight.sort_by_key(|x| (x.0, x.1));
        let frame_t = self.flight.first().map(|x| x.0);
        let timer_t = [self.m.a.next_deadline(), self.m.b.next_deadline()]
            .into_iter()
            .flatten()
            .min();
        let Some(t) = [frame_t, timer_t].into_iter().flatten().min() else {
            self.quiet = true;
            return;
        };
        self.m.now = self.m.now.max(t);
        if self.flight.first().is_some_and(|x| x.0 <= self.m.now) {
            let (_, _, to_b, bytes) = self.flight.remove(0);
            if to_b {
                self.m.b.receive(self.m.now, &bytes);
            } else {
                self.m.a.receive(self.m.now, &bytes);
            }
        }
    }
}

/// Posts `n` RDMA WRITEs of 8 to 24 KiB from A's source half (one or two entries) to B's
/// region: at MTU 256 two of them pass the 128-PSN window, so the requester waits inside a
/// message with packets since its last AckReq, where a rewind must count them from zero.
fn post_long(m: &mut Model, rng: &mut Rng, n: usize, fill_a: &[u8]) -> Vec<Posted> {
    (0..n)
        .map(|i| {
            let len = 8192 + rng.below(16 * 1024 + 1);
            let at = rng.below(A_SRC - len + 1);
            let split = rng.below(len + 1);
            let mut wr = SendWr::new(i as u64, WrOpcode::RdmaWrite)
                .sge(m.mr_a.va + at, split as u32, m.mr_a.lkey)
                .sge(m.mr_a.va + at + split, (len - split) as u32, m.mr_a.lkey)
                .remote(VA_B + rng.below(LEN_B - len + 1), KEY_B);
            if rng.chance(0.3) {
                wr = wr.flags(SendFlags::SIGNALED);
            }
            m.a.post_send(m.qa, wr.clone()).unwrap();
            Posted {
                wr,
                bytes: fill_a[at as usize..(at + len) as usize].to_vec(),
            }
        })
        .collect()
}

/// Pairs of the given path MTUs sharing the engine, AckReq every `ack_every` packets, links
/// dropping `drop` of the frames each way, `n` requests each (random ones of every opcode, or
/// long WRITEs).
fn scenario(seed: u64, mtus: &[Mtu], ack_every: u32, drop: f64, n: usize, long: bool) -> Covered {
    let mut rng = Rng::new(seed);
    let mut hw = RequesterSim::lockstep(seed, 0.25).unwrap();
    let mut pairs = Vec::new();
    for (i, &mtu) in mtus.iter().enumerate() {
        let mdra = 1 + rng.below(16) as u8;
        let mut m = model(&mut rng, mtu, ack_every, mdra);
        m.a.log_completer_steps(true);
        let fill_a = m.a.mr_bytes(m.mr_a.lkey).unwrap().to_vec();
        let posted = if long {
            post_long(&mut m, &mut rng, n, &fill_a)
        } else {
            post(&mut m, &mut rng, n, &fill_a)
        };
        let row = ROW0 + i;
        let ctx_a = QpContext {
            qp_type: QpType::Rc,
            pd: m.mr_a.pd.0,
            pkey: 0xFFFF,
            send_cq: 0,
            recv_cq: 0,
            sig_all: false,
        };
        // A's region at its own key index in the shared table.
        let key = (KEY0 + i as u32) << 8 | (m.mr_a.lkey & 0xFF);
        let mr = MrInfo {
            lkey: key,
            ..m.mr_a
        };
        let base = BASE_A + i as u64 * STRIDE;
        hw.set_qp(row, row_words(&encode_qp(&m.attr_a, &ctx_a).unwrap()));
        hw.set_mr(
            (key >> 8) as usize,
            row_words(&encode_mr(&mr, base).unwrap()),
        );
        hw.map(base, &fill_a);
        hw.set_ring(row, SQ_BASE + i as u64 * STRIDE, SQ_LOG);
        hw.init_qp(row, m.attr_a.sq_psn, ack_every, 128).unwrap();
        for p in &posted {
            let mut wr = p.wr.clone();
            for s in &mut wr.sg_list {
                s.lkey = key;
            }
            hw.post(row, &encode_send(&wr, 0).unwrap()).unwrap();
        }
        pairs.push(Pair {
            m,
            posted,
            row,
            flight: Vec::new(),
            seq: 0,
            rewinds: 0,
            timeouts: 0,
            rnr_was: false,
            quiet: false,
        });
    }
    let rows: Vec<usize> = pairs.iter().map(|p| p.row).collect();
    let mut cov = Covered::default();
    let mut interleaved = 0;
    for round in 0..400_000 {
        if pairs.iter().all(|p| p.quiet) {
            break;
        }
        let mut frames = Vec::new();
        for p in &mut pairs {
            let (fa, view) = p.poll(&mut cov);
            hw.set_view(p.row, view);
            if fa.is_empty() && hw.producer(p.row) != Some(view.cons) {
                cov.held += 1;
            }
            frames.push(fa);
        }
        let t = hw
            .turns(&rows)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert!(
            t.fails.is_empty(),
            "seed {seed}: requests failed: {:?}",
            t.fails
        );
        cov.turns += t.turns;
        if t.sent.windows(2).any(|w| w[0].qp != w[1].qp) {
            interleaved += 1;
        }
        for (p, fa) in pairs.iter().zip(&frames) {
            let sent: Vec<_> = t.sent.iter().filter(|s| s.qp == p.row).collect();
            let now = p.m.now;
            assert_eq!(
                sent.len(),
                fa.len(),
                "seed {seed} round {round}: QP row {} sent {} packets at {now} ns, A {}",
                p.row,
                sent.len(),
                fa.len()
            );
            for (k, (h, bytes)) in sent.iter().zip(fa).enumerate() {
                let frame = RocePacket::parse(bytes).unwrap().repr();
                let (want, _, _) = descriptor_of(&frame);
                assert_eq!(
                    h.desc,
                    want.pack().to_vec(),
                    "seed {seed} round {round}: QP row {} packet {k} of {} (PSN {:#x})",
                    p.row,
                    fa.len(),
                    frame.bth.psn
                );
                assert_eq!(
                    h.payload, frame.payload,
                    "seed {seed}: packet {k}'s payload"
                );
            }
            cov.packets += fa.len();
            // The send point the completer reads.
            let qa = p.m.a.qp(p.m.qa).unwrap();
            let started = p.posted.len() - qa.sq.iter().filter(|w| w.first_psn.is_none()).count();
            let sp = hw.send_point(p.row).unwrap();
            assert_eq!(
                sp,
                (qa.req.sent_upto, started as u16),
                "seed {seed} round {round}: QP row {}'s send point",
                p.row
            );
        }
        for (p, fa) in pairs.iter_mut().zip(frames) {
            if !p.quiet {
                p.advance(&mut rng, fa, drop);
            }
        }
    }
    for p in &pairs {
        let qa = p.m.a.qp(p.m.qa).unwrap();
        assert!(
            qa.sq.is_empty(),
            "seed {seed}: pair {} did not finish",
            p.row
        );
    }
    if pairs.len() > 1 {
        assert!(
            interleaved > 0,
            "seed {seed}: no run of turns served two QPs"
        );
    }
    // A failed QP (the view's error: its ring flushed) sends nothing though its ring holds a
    // request; the same view without the error sends it.
    let p = &pairs[0];
    let mut wr = p.posted[0].wr.clone();
    for s in &mut wr.sg_list {
        s.lkey = KEY0 << 8 | (p.m.mr_a.lkey & 0xFF);
    }
    hw.post(p.row, &encode_send(&wr, 0).unwrap()).unwrap();
    let mut v = view_of(&p.m, &p.posted, p.rewinds);
    v.err = true;
    hw.set_view(p.row, v);
    let t = hw.turns(&[p.row]).unwrap();
    assert!(
        t.sent.is_empty(),
        "seed {seed}: a failed QP sent {} packets",
        t.sent.len()
    );
    v.err = false;
    hw.set_view(p.row, v);
    let t = hw.turns(&[p.row]).unwrap();
    assert!(
        !t.sent.is_empty(),
        "seed {seed}: the request after the error was cleared"
    );
    let extra = t.sent.len() as u64;
    cov.retransmitted = hw.ports.get("cnt_retransmitted");
    assert_eq!(
        hw.ports.get("cnt_packets") + cov.retransmitted,
        cov.packets as u64 + extra,
        "seed {seed}: the engine's packet counts"
    );
    assert_eq!(hw.ports.get("cnt_dma_err"), 0);
    cov.cycles = hw.ports.cycle;
    cov
}

/// A test case: seed, the pairs' path MTUs, AckReq interval, loss, requests per pair, long
/// WRITEs.
type Case = (u64, &'static [Mtu], u32, f64, usize, bool);

#[test]
fn requester_sends_what_the_model_sends() {
    let mut total = Covered::default();
    let cases: [Case; 4] = [
        (1, &[Mtu::M256], 64, 0.0, 100, false),
        (2, &[Mtu::M1024, Mtu::M512], 3, 0.05, 60, false),
        (3, &[Mtu::M512, Mtu::M256, Mtu::M4096], 1, 0.1, 40, false),
        (4, &[Mtu::M256], 5, 0.03, 5, true),
    ];
    for (seed, mtus, every, drop, n, long) in cases {
        let c = scenario(seed, mtus, every, drop, n, long);
        println!(
            "seed {seed}, {} QPs: {} packets ({} sent again), {} rewinds, {} polls held back ({} by a fence, {} by the READ/atomic limit), {} turns, {} clocks",
            mtus.len(),
            c.packets,
            c.retransmitted,
            c.rewinds,
            c.held,
            c.fenced,
            c.limited,
            c.turns,
            c.cycles
        );
        total.packets += c.packets;
        total.retransmitted += c.retransmitted;
        total.rewinds += c.rewinds;
        total.held += c.held;
        total.fenced += c.fenced;
        total.limited += c.limited;
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
