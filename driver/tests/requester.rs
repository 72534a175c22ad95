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

use std::collections::VecDeque;

use common::*;
use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{PortDut, PortLockStep};
use rnic_cosim::transport::descriptor_of;
use rnic_driver::queues::encode_send;
use rnic_driver::responder_sim::row_words;
use rnic_driver::tables::{QpContext, encode_mr, encode_qp};
use rnic_hw::requester::Requester;
use rnic_transport::verbs::{Mtu, QpState, QpType, SendFlags, WrOpcode};
use rnic_wire::RocePacket;

/// Device addresses: A's region and the send ring (256 requests of 128 bytes).
const BASE_A: u64 = 0x3_0000_1000;
const SQ_BASE: u64 = 0x5_0000_0000;
const SQ_LOG: u64 = 8;
/// The QP's row in the hardware's tables (its send ring is the same number).
const ROW: u64 = 5;

type Dut = PortLockStep<Requester<6, 10>>;

/// A packet the hardware sent: its descriptor words and payload.
struct Sent {
    desc: Vec<u64>,
    payload: Vec<u8>,
}

/// What the completer tells the requester.
#[derive(Clone, Copy, Default)]
struct View {
    oldest: u32,
    cons: u16,
    front: u32,
    rd_done: u8,
    rewinds: u8,
    rnr: bool,
}

struct Hw {
    d: Dut,
    rng: Rng,
    qp: Vec<u64>,
    mrs: Vec<Vec<u64>>,
    /// Host memory: A's region and the send ring.
    region: Vec<u8>,
    ring: Vec<u8>,
    prod: u16,
    view: View,
    /// Clocks run, turns taken, packets sent.
    cycles: u64,
    turns: u64,
}

impl Hw {
    fn read(&self, addr: u64, len: usize) -> Option<Vec<u8>> {
        for (base, mem) in [(BASE_A, &self.region), (SQ_BASE, &self.ring)] {
            if let Some(at) = addr.checked_sub(base) {
                let at = at as usize;
                if at + len <= mem.len() {
                    return Some(mem[at..at + len].to_vec());
                }
            }
        }
        None
    }

    fn set(&mut self, name: &str, v: u64) {
        let i = self.d.input(name);
        self.d.set(i, v);
    }

    fn get(&self, name: &str) -> u64 {
        self.d.get(self.d.output(name))
    }

    fn settle(&mut self) {
        self.d.settle().unwrap_or_else(|e| panic!("{e}"));
    }

    fn tick(&mut self) {
        self.d.tick();
        self.cycles += 1;
    }

    fn reset(&mut self, psn: u32, every: u32) {
        self.set("reset", 1);
        self.set("ack_every", every.into());
        self.set("max_unacked", 128);
        for _ in 0..3 {
            self.settle();
            self.tick();
        }
        self.set("reset", 0);
        self.set("s_init_valid", 1);
        self.set("s_init_qp", ROW);
        self.set("s_init_psn", psn.into());
        self.set("s_init_index", 0);
        for _ in 0..10 {
            self.settle();
            let took = self.get("s_init_ready") == 1;
            self.tick();
            if took {
                self.set("s_init_valid", 0);
                return;
            }
        }
        panic!("the QP's row was never started");
    }

    /// Turns for the QP until one ends without `more`: the packets sent, and the requests
    /// handed to the completer to fail (index, status).
    fn turns(&mut self) -> (Vec<Sent>, Vec<(u64, u64)>) {
        let (mut sent, mut fails) = (Vec::new(), Vec::new());
        let mut descs: VecDeque<Vec<u64>> = VecDeque::new();
        let mut payloads: VecDeque<Vec<u8>> = VecDeque::new();
        let mut frame = Vec::new();
        let mut beats: VecDeque<(u64, bool, bool)> = VecDeque::new();
        let (mut beat_shown, mut qp_got, mut cv_got, mut sq_got) = (false, false, false, None);
        let mut mr_got = 0usize;
        let mut offered = false;
        let mut last_more = true;
        let mut n_turns = 0;
        for _ in 0..2_000_000 {
            let go = |r: &mut Rng| r.chance(0.75);
            // Inputs for this clock.
            let offer = !offered && last_more && self.rng.chance(0.8);
            self.set("s_turn_valid", u64::from(offer));
            self.set("s_turn_qp", ROW);
            let done_ready = go(&mut self.rng);
            self.set("m_done_ready", u64::from(done_ready));
            let (qr, cr, sr, mr) = (
                go(&mut self.rng),
                go(&mut self.rng),
                go(&mut self.rng),
                go(&mut self.rng),
            );
            self.set("qp_look_ready", u64::from(qr));
            self.set("cv_look_ready", u64::from(cr));
            self.set("sq_look_ready", u64::from(sr));
            self.set("mr_look_ready", u64::from(mr));
            let qp = if qp_got { self.qp.clone() } else { vec![0; 4] };
            let i = self.d.input("qp_got_data");
            self.d.set_words(i, &qp);
            let v = if cv_got { self.view } else { View::default() };
            self.set("cv_got_oldest", v.oldest.into());
            self.set("cv_got_cons", v.cons.into());
            self.set("cv_got_front", v.front.into());
            self.set("cv_got_rd_done", (v.rd_done & 15).into());
            self.set("cv_got_rewinds", (v.rewinds & 15).into());
            self.set("cv_got_rnr", u64::from(v.rnr));
            let ring = sq_got.take();
            self.set("sq_got_valid", u64::from(ring.is_some()));
            self.set("sq_got_base", SQ_BASE);
            self.set("sq_got_size", SQ_LOG | 1 << 8);
            self.set("sq_got_prod", self.prod.into());
            let row = self.mrs[mr_got].clone();
            let i = self.d.input("mr_got_data");
            self.d.set_words(i, &row);
            let rq = go(&mut self.rng);
            self.set("m_dma_rd_req_ready", u64::from(rq));
            beat_shown = !beats.is_empty() && (beat_shown || go(&mut self.rng));
            let (bd, bl, be) = beats.front().copied().unwrap_or((0, false, false));
            self.set("m_dma_rd_data_valid", u64::from(beat_shown));
            self.set("m_dma_rd_data", bd);
            self.set("m_dma_rd_data_last", u64::from(bl));
            self.set("m_dma_rd_data_err", u64::from(be));
            let (dr, ar, fr) = (go(&mut self.rng), go(&mut self.rng), go(&mut self.rng));
            self.set("m_desc_ready", u64::from(dr));
            self.set("m_axis_tready", u64::from(ar));
            self.set("m_fail_ready", u64::from(fr));
            self.settle();

            // What the engine offered.
            if offer && self.get("s_turn_ready") == 1 {
                offered = true;
                n_turns += 1;
            }
            if done_ready && self.get("m_done_valid") == 1 {
                assert!(offered, "a turn ended that was never given");
                offered = false;
                last_more = self.get("m_done_more") == 1;
            }
            qp_got = qr && self.get("qp_look_valid") == 1;
            if qp_got {
                assert_eq!(self.get("qp_look_row"), ROW);
            }
            cv_got = cr && self.get("cv_look_valid") == 1;
            if cv_got {
                assert_eq!(self.get("cv_look_qp"), ROW);
            }
            if sr && self.get("sq_look_valid") == 1 {
                assert_eq!(self.get("sq_look_queue"), ROW);
                sq_got = Some(());
            }
            if mr && self.get("mr_look_valid") == 1 {
                mr_got = self.get("mr_look_row") as usize;
            }
            if rq && self.get("m_dma_rd_req_valid") == 1 {
                let addr = self.get("m_dma_rd_req_addr");
                let len = self.get("m_dma_rd_req_len") as usize;
                assert!(
                    addr % 8 == 0 && len > 0,
                    "a read of {len} bytes at {addr:#x}"
                );
                let n = len.div_ceil(8);
                let bytes = self.read(addr, n * 8);
                for k in 0..n {
                    let w = bytes.as_ref().map_or(0, |b| {
                        u64::from_le_bytes(b[8 * k..8 * k + 8].try_into().unwrap())
                    });
                    beats.push_back((w, k + 1 == n, bytes.is_none()));
                }
            }
            if beat_shown && self.get("m_dma_rd_data_ready") == 1 {
                beats.pop_front();
                beat_shown = false;
            }
            if dr && self.get("m_desc_valid") == 1 {
                assert_eq!(self.get("m_desc_qp"), ROW);
                let o = self.d.output("m_desc_data");
                descs.push_back(self.d.get_words(o));
            }
            if ar && self.get("m_axis_tvalid") == 1 {
                let keep = self.get("m_axis_tkeep");
                let data = self.get("m_axis_tdata").to_le_bytes();
                for (b, byte) in data.iter().enumerate() {
                    if keep >> b & 1 == 1 {
                        frame.push(*byte);
                    }
                }
                if self.get("m_axis_tlast") == 1 {
                    assert_eq!(self.get("m_axis_tuser"), 0, "a payload marked bad");
                    payloads.push_back(std::mem::take(&mut frame));
                }
            }
            if fr && self.get("m_fail_valid") == 1 {
                assert_eq!(self.get("m_fail_qp"), ROW);
                fails.push((self.get("m_fail_index"), self.get("m_fail_status")));
            }
            self.tick();
            // Pair descriptors with their payloads.
            while let Some(desc) = descs.front() {
                let len = field(desc, "payload_len") as usize;
                if len == 0 {
                    sent.push(Sent {
                        desc: descs.pop_front().unwrap(),
                        payload: Vec::new(),
                    });
                } else if let Some(p) = payloads.pop_front() {
                    assert_eq!(p.len(), len, "a payload of {} bytes for {len}", p.len());
                    sent.push(Sent {
                        desc: descs.pop_front().unwrap(),
                        payload: p,
                    });
                } else {
                    break;
                }
            }
            // The last turn is over once its payloads have left the FIFO.
            if !offered && !last_more && descs.is_empty() && frame.is_empty() {
                assert!(
                    payloads.is_empty() && beats.is_empty(),
                    "a payload without a packet"
                );
                self.turns += n_turns;
                return (sent, fails);
            }
        }
        panic!("the turns never ended");
    }
}

fn field(words: &[u64], name: &str) -> u64 {
    let (off, width) = rnic_hw::transport_header::th_offset_of(name).unwrap();
    rnic_cosim::ports::field(words, (off, width))
}

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
    let mut mrs = vec![vec![0u64; 4]; 64];
    mrs[(m.mr_a.lkey >> 8) as usize] = row_words(&encode_mr(&m.mr_a, BASE_A).unwrap());
    let mut ring = vec![0u8; 128 << SQ_LOG];
    for (i, p) in posted.iter().enumerate() {
        ring[128 * i..128 * (i + 1)].copy_from_slice(&encode_send(&p.wr, 0).unwrap());
    }
    let mut hw = Hw {
        d: Dut::new(Requester::<6, 10>::default(), "requester", seed).unwrap(),
        rng: Rng::new(seed ^ 0x5EED),
        qp: row_words(&encode_qp(&m.attr_a, &ctx_a).unwrap()),
        mrs,
        region: fill_a.clone(),
        ring,
        prod: posted.len() as u16,
        view: View::default(),
        cycles: 0,
        turns: 0,
    };
    hw.reset(m.attr_a.sq_psn, ack_every);

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
        hw.view = view_of(&m, &posted, rewinds);
        let (sent, fails) = hw.turns();
        assert!(fails.is_empty(), "seed {seed}: requests failed: {fails:?}");
        assert_eq!(
            sent.len(),
            fa.len(),
            "seed {seed} at {now} ns: the hardware sent {} packets, A {}",
            sent.len(),
            fa.len()
        );
        if fa.is_empty() && hw.prod != hw.view.cons {
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
    cov.cycles = hw.cycles;
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
        cycles: 0,
    };
    for (seed, mtu, every, drop) in [
        (1u64, Mtu::M256, 64u32, 0.0),
        (2, Mtu::M1024, 3, 0.05),
        (3, Mtu::M512, 1, 0.1),
    ] {
        let c = scenario(seed, mtu, every, drop);
        println!(
            "seed {seed}: {} packets ({} sent again), {} rewinds, {} polls held back ({} by a fence, {} by the READ/atomic limit), {} clocks",
            c.packets, c.retransmitted, c.rewinds, c.held, c.fenced, c.limited, c.cycles
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
