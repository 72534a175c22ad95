//! The transport's receive path: the header FIFO and the opcode demultiplexer in lock-step on
//! random stimulus, and the whole path (`transport_rx`: parser, transport headers, FIFO,
//! demultiplexer) in lock-step on random traffic and under Verilator on the real captures,
//! each header checked against the wire model's parse of its frame, each payload against the
//! frame's bytes. And the point of the FIFO: engines that think in bursts do not stall the
//! line.

use std::collections::VecDeque;

use rnic_cosim::axis::Rng;
use rnic_cosim::need;
use rnic_cosim::ports::{PortDut, PortLockStep, VerilatedPorts};
use rnic_cosim::rx_model::{Expect, expect, rx_traffic};
use rnic_cosim::transport::{Engine, RX_PATH_COUNTERS, RxPathRun, expect_header, run_rx_path};
use rnic_hw::header_fifo::HeaderFifo;
use rnic_hw::header_register::HeaderRegister;
use rnic_hw::opcode_demux::OpcodeDemux;
use rnic_hw::rx_parser::COUNTERS;
use rnic_hw::transport_header::{Class, TH_BITS, TH_WORDS, TransportHeader};
use rnic_hw::transport_rx::TransportRx;
use rnic_wire::RocePacket;

/// Words in, words out in order, none lost or doubled, at random pace on both sides; `s_ready`
/// never drops below the FIFO's depth, and `fill` counts what it holds.
#[test]
fn header_fifo_passes_every_word_in_order() {
    for seed in 1..=3u64 {
        let mut d =
            PortLockStep::new(HeaderFifo::<TH_BITS, 4>::default(), "header_fifo", seed).unwrap();
        let (i_reset, i_data, i_valid, i_ready) = (
            d.input("reset"),
            d.input("s_data"),
            d.input("s_valid"),
            d.input("m_ready"),
        );
        let (o_sready, o_data, o_valid, o_fill) = (
            d.output("s_ready"),
            d.output("m_data"),
            d.output("m_valid"),
            d.output("fill"),
        );
        let mut rng = Rng::new(seed);
        let mut want: VecDeque<Vec<u64>> = VecDeque::new();
        let mut offered: Option<Vec<u64>> = None;
        let (mut pushed, mut popped, mut full_seen) = (0u64, 0u64, false);
        for cycle in 0..6000u64 {
            let reset = cycle < 3;
            d.set(i_reset, u64::from(reset));
            // Phases: fill (reader slow), drain (writer slow), then mixed.
            let (p_push, p_pop) = match cycle / 1500 {
                0 => (0.9, 0.1),
                1 => (0.1, 0.9),
                _ => (0.6, 0.6),
            };
            if offered.is_none() && !reset && rng.chance(p_push) {
                offered = Some(rng.words(TH_BITS));
            }
            let words = offered.clone().unwrap_or_else(|| vec![0; TH_WORDS]);
            d.set_words(i_data, &words);
            d.set(i_valid, u64::from(offered.is_some()));
            let ready = rng.chance(p_pop);
            d.set(i_ready, u64::from(ready));
            d.settle().unwrap_or_else(|m| panic!("{m}"));
            if reset {
                d.tick();
                continue;
            }
            assert_eq!(d.get(o_fill), pushed - popped, "cycle {cycle}: fill");
            if d.get(o_sready) == 0 {
                assert!(
                    pushed - popped >= 14,
                    "cycle {cycle}: refused with {} held",
                    pushed - popped
                );
                full_seen = true;
            }
            if offered.is_some() && d.get(o_sready) == 1 {
                want.push_back(offered.take().unwrap());
                pushed += 1;
            }
            if ready && d.get(o_valid) == 1 {
                let got = d.get_words(o_data);
                assert_eq!(Some(got), want.pop_front(), "cycle {cycle}: word {popped}");
                popped += 1;
            }
            d.tick();
        }
        assert!(
            popped > 1000 && full_seen,
            "seed {seed}: {popped} words, full seen {full_seen}"
        );
    }
}

/// Words in, words out in order, none lost or doubled, at random pace on both sides; `s_ready`
/// is exactly the register's emptiness (never the sink's `m_ready` of the same clock), and a
/// word held stays put until it is taken.
#[test]
fn header_register_passes_every_word_in_order() {
    for seed in 1..=3u64 {
        let mut d = PortLockStep::new(
            HeaderRegister::<TH_BITS>::default(),
            "header_register",
            seed,
        )
        .unwrap();
        let (i_reset, i_data, i_valid, i_ready) = (
            d.input("reset"),
            d.input("s_data"),
            d.input("s_valid"),
            d.input("m_ready"),
        );
        let (o_sready, o_data, o_valid) =
            (d.output("s_ready"), d.output("m_data"), d.output("m_valid"));
        let mut rng = Rng::new(seed * 13);
        let mut held: Option<Vec<u64>> = None;
        let mut offered: Option<Vec<u64>> = None;
        let (mut pushed, mut popped, mut stalled) = (0u64, 0u64, 0u64);
        for cycle in 0..4000u64 {
            let reset = cycle < 3;
            d.set(i_reset, u64::from(reset));
            if offered.is_none() && !reset && rng.chance(0.7) {
                offered = Some(rng.words(TH_BITS));
            }
            let words = offered.clone().unwrap_or_else(|| vec![0; TH_WORDS]);
            d.set_words(i_data, &words);
            d.set(i_valid, u64::from(offered.is_some()));
            let ready = rng.chance(0.6);
            d.set(i_ready, u64::from(ready));
            d.settle().unwrap_or_else(|m| panic!("{m}"));
            if reset {
                d.tick();
                continue;
            }
            assert_eq!(
                d.get(o_sready),
                u64::from(held.is_none()),
                "cycle {cycle}: s_ready"
            );
            assert_eq!(
                d.get(o_valid),
                u64::from(held.is_some()),
                "cycle {cycle}: m_valid"
            );
            let mut next = held.clone();
            if let Some(w) = &held {
                assert_eq!(&d.get_words(o_data), w, "cycle {cycle}: word {popped}");
                if ready {
                    next = None;
                    popped += 1;
                } else {
                    stalled += 1;
                }
            } else if let Some(w) = offered.take() {
                next = Some(w);
                pushed += 1;
            }
            held = next;
            d.tick();
        }
        assert!(
            popped > 800 && pushed == popped + u64::from(held.is_some()) && stalled > 200,
            "seed {seed}: {pushed} in, {popped} out, {stalled} stalled"
        );
    }
}

/// Random headers with random classes and payload lengths, and their payloads: each engine's
/// port carries exactly the headers of its class, in order, and its payloads in the order of
/// its headers (one header may run ahead of the payload in progress); class `Other` headers
/// and CNP payloads are swallowed, and the others counted.
#[test]
fn opcode_demux_routes_by_class_with_payloads() {
    for seed in 1..=3u64 {
        let mut d = PortLockStep::new(OpcodeDemux::default(), "opcode_demux", seed).unwrap();
        let mut rng = Rng::new(seed * 77);
        // The stimulus: headers with a class and a payload length, payload bytes numbered.
        let mut hdrs: VecDeque<(Vec<u64>, Vec<u8>)> = VecDeque::new();
        let mut want: [Vec<(Vec<u64>, Vec<u8>)>; 4] = Default::default();
        for n in 0..400u64 {
            let mut w = rng.words(TH_BITS);
            let class = rng.below(4);
            let len = if rng.chance(0.3) {
                0
            } else {
                1 + rng.below(90)
            };
            w[0] = (w[0] & !0x3_FFFF) | class | len << 2;
            let pay: Vec<u8> = (0..len).map(|k| (n * 31 + k) as u8).collect();
            want[class as usize].push((w.clone(), if class < 2 { pay.clone() } else { vec![] }));
            hdrs.push_back((w, pay));
        }
        let beats: VecDeque<(u64, u8, bool)> = hdrs
            .iter()
            .flat_map(|(_, p)| {
                rnic_cosim::axis::beats(p, 0)
                    .into_iter()
                    .filter(move |_| !p.is_empty())
            })
            .map(|b| (b.tdata, b.tkeep, b.tlast))
            .collect();
        let mut beats = beats;
        let ins = [
            "reset",
            "s_hdr_data",
            "s_hdr_valid",
            "s_axis_tdata",
            "s_axis_tkeep",
            "s_axis_tlast",
            "s_axis_tvalid",
            "m_req_hdr_ready",
            "m_req_axis_tready",
            "m_resp_hdr_ready",
            "m_resp_axis_tready",
            "m_cnp_hdr_ready",
        ]
        .map(|n| d.input(n));
        let mut got: [Vec<(Vec<u64>, Vec<u8>)>; 4] = Default::default();
        let mut cur: [Vec<u8>; 2] = Default::default();
        // Per engine, its headers still waiting for their payload, oldest first.
        let mut waiting: [VecDeque<usize>; 2] = Default::default();
        for cycle in 0..40_000u64 {
            let reset = cycle < 3;
            let hv = !reset && !hdrs.is_empty() && rng.chance(0.7);
            let pv = !reset && !beats.is_empty() && rng.chance(0.7);
            let h = hdrs
                .front()
                .map(|h| h.0.clone())
                .unwrap_or_else(|| vec![0; TH_WORDS]);
            let b = beats.front().copied().unwrap_or((0, 0, false));
            let ready: Vec<bool> = (0..5).map(|_| rng.chance(0.6)).collect();
            let vals = [
                u64::from(reset),
                0,
                u64::from(hv),
                b.0,
                u64::from(b.1),
                u64::from(b.2),
                u64::from(pv),
                u64::from(ready[0]),
                u64::from(ready[1]),
                u64::from(ready[2]),
                u64::from(ready[3]),
                u64::from(ready[4]),
            ];
            for (k, v) in vals.into_iter().enumerate() {
                if k == 1 {
                    d.set_words(ins[1], &h);
                } else {
                    d.set(ins[k], v);
                }
            }
            d.settle().unwrap_or_else(|m| panic!("{m}"));
            let g = |d: &PortLockStep<OpcodeDemux>, n: &str| d.get(d.output(n));
            if !reset {
                if hv && g(&d, "s_hdr_ready") == 1 {
                    hdrs.pop_front();
                }
                if pv && g(&d, "s_axis_tready") == 1 {
                    beats.pop_front();
                }
                for (k, p) in ["req", "resp", "cnp"].into_iter().enumerate() {
                    let r = ready[[0, 2, 4][k]];
                    if r && g(&d, &format!("m_{p}_hdr_valid")) == 1 {
                        let o = d.output(&format!("m_{p}_hdr_data"));
                        let w = d.get_words(o);
                        if k < 2 && (w[0] >> 2) & 0xFFFF != 0 {
                            waiting[k].push_back(got[k].len());
                        }
                        got[k].push((w, vec![]));
                    }
                    if k < 2 && ready[[1, 3][k]] && g(&d, &format!("m_{p}_axis_tvalid")) == 1 {
                        let n = g(&d, &format!("m_{p}_axis_tkeep")).trailing_ones() as usize;
                        cur[k].extend_from_slice(
                            &g(&d, &format!("m_{p}_axis_tdata")).to_le_bytes()[..n],
                        );
                        if g(&d, &format!("m_{p}_axis_tlast")) == 1 {
                            let n = waiting[k]
                                .pop_front()
                                .expect("a payload with no header before it");
                            got[k][n].1 = std::mem::take(&mut cur[k]);
                        }
                    }
                }
            }
            d.tick();
        }
        assert!(
            hdrs.is_empty() && beats.is_empty(),
            "seed {seed}: input left over"
        );
        for k in 0..3 {
            assert_eq!(got[k].len(), want[k].len(), "seed {seed}: class {k} count");
            for (n, (g, w)) in got[k].iter().zip(&want[k]).enumerate() {
                assert_eq!(g.0, w.0, "seed {seed}: class {k} header {n}");
                assert_eq!(g.1, w.1, "seed {seed}: class {k} payload {n}");
            }
        }
        d.settle().unwrap();
        let drops = d.get(d.output("cnt_drop_class"));
        assert_eq!(drops, want[3].len() as u64, "seed {seed}: class-3 drops");
    }
}

/// The run against the models: the parser's verdicts and counters from `rx_model`, and for
/// every accepted frame its transport header from the wire model, at its class's engine, with
/// its payload.
fn check(frames: &[(Vec<u8>, u64)], r: &RxPathRun) -> usize {
    assert!(
        r.errors.is_empty(),
        "stream errors: {:?}",
        &r.errors[..r.errors.len().min(5)]
    );
    let mut want: [Vec<(TransportHeader, Vec<u8>)>; 4] = Default::default();
    let mut counts = [0u64; 13];
    let mut bypass = 0;
    for (i, (f, bad)) in frames.iter().enumerate() {
        counts[0] += 1;
        match expect(f, *bad != 0).unwrap_or_else(|m| panic!("frame {i}: {m}")) {
            Expect::Bypass => {
                counts[2] += 1;
                bypass += 1;
            }
            Expect::Drop(reason) => {
                counts[COUNTERS
                    .iter()
                    .position(|c| *c == reason.counter())
                    .unwrap()] += 1;
            }
            Expect::Accept(_, payload) => {
                counts[1] += 1;
                let p = RocePacket::parse(f).unwrap_or_else(|e| panic!("frame {i}: {e}"));
                let t = expect_header(&p);
                let c = t.class();
                if c == Class::Other {
                    counts[12] += 1;
                }
                want[c as usize].push((t, if c == Class::Cnp { vec![] } else { payload }));
            }
        }
    }
    for (k, name) in RX_PATH_COUNTERS.iter().enumerate() {
        assert_eq!(r.counters[k], counts[k], "counter {name}");
    }
    assert_eq!(r.bypass.len(), bypass, "bypass frames");
    let cnp: Vec<(TransportHeader, Vec<u8>)> = r.cnp.iter().map(|h| (h.clone(), vec![])).collect();
    for (k, got) in [&r.req, &r.resp, &cnp].into_iter().enumerate() {
        assert_eq!(got.len(), want[k].len(), "class {k}: packet count");
        for (n, (g, w)) in got.iter().zip(&want[k]).enumerate() {
            assert_eq!(
                g.0,
                w.0,
                "class {k} packet {n}:\n got  {}\n want {}",
                g.0.describe(),
                w.0.describe()
            );
            assert_eq!(g.1, w.1, "class {k} packet {n}: payload");
        }
    }
    want.iter().map(Vec::len).sum()
}

fn engines(think: [u64; 3]) -> [Engine; 3] {
    think.map(|t| Engine::new(vec![t], 0.2))
}

/// Random traffic (good frames of every opcode and both IP versions, broken frames, other
/// frames), rust-hdl and Verilator in lock-step, engines of different speeds.
#[test]
fn transport_rx_lockstep_on_random_traffic() {
    for seed in 1..=2u64 {
        let mut rng = Rng::new(seed);
        let frames: Vec<(Vec<u8>, u64)> = rx_traffic(&mut rng, 120, 300)
            .into_iter()
            .map(|(f, b)| (f, u64::from(b)))
            .collect();
        let mut d = PortLockStep::new(TransportRx::default(), "transport_rx", seed).unwrap();
        let [mut a, mut b, mut c] = engines([3, 7, 1]);
        let r = run_rx_path(&mut d, &frames, seed, 0.1, [&mut a, &mut b, &mut c])
            .unwrap_or_else(|m| panic!("seed {seed}: {m}"));
        let n = check(&frames, &r);
        assert!(n > 60, "seed {seed}: only {n} accepted");
        assert!(
            !r.req.is_empty() && !r.resp.is_empty(),
            "seed {seed}: both engines fed"
        );
    }
}

/// Real captures (`RNIC_GOLDEN_DIR`), under Verilator: every header and payload as the wire
/// model reads the frame.
#[test]
fn transport_rx_real_captures() {
    const TEST: &str = "transport_rx real_captures";
    let Some(dir) = need::golden_dir(TEST) else {
        return;
    };
    let files = need::golden_captures(&dir);
    let mut total = 0;
    for (k, path) in files.iter().enumerate() {
        let cap =
            rnic_wire::pcap::read_file(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let frames: Vec<(Vec<u8>, u64)> = cap
            .records
            .into_iter()
            .filter(|r| r.linktype == 1 && r.data.len() == r.orig_len as usize)
            .map(|r| (r.data, 0))
            .collect();
        let mut d = VerilatedPorts::of::<TransportRx>("transport_rx").unwrap();
        let [mut a, mut b, mut c] = engines([2, 2, 2]);
        let r = run_rx_path(&mut d, &frames, k as u64, 0.05, [&mut a, &mut b, &mut c])
            .unwrap_or_else(|m| panic!("{}: {m}", path.display()));
        total += check(&frames, &r);
    }
    need::at_least(TEST, "capture files", files.len(), need::GOLDEN_FILES);
    need::at_least(TEST, "accepted real frames", total, need::GOLDEN_FRAMES / 2);
}

/// Back-to-back RDMA WRITE frames with 256-byte payloads (43 beats on the line, 32 payload
/// beats to the responder) and a responder that thinks in bursts: fifteen headers at once,
/// then 150 cycles (three and a half frames) over the sixteenth; 660 cycles per sixteen frames
/// against the line's 688. The FIFO absorbs the bursts, so the input stalls no more than
/// behind a responder that never thinks; a responder slower than the line on average stalls
/// it (the bench can fail).
#[test]
fn engines_that_think_in_bursts_do_not_stall_the_line() {
    let mut rng = Rng::new(5);
    let frames: Vec<(Vec<u8>, u64)> = (0..160)
        .map(|_| {
            loop {
                let mut d = rnic_cosim::icrc::random_frame(&mut rng, 256);
                if d.bth.opcode == 0x0A {
                    d.payload = (0..256).map(|k| k as u8).collect();
                    return (d.build().unwrap(), 0);
                }
            }
        })
        .collect();
    let run = |think: Vec<u64>| {
        let mut d = VerilatedPorts::of::<TransportRx>("transport_rx").unwrap();
        let mut req = Engine::new(think, 0.0);
        let [_, mut b, mut c] = engines([0, 0, 0]);
        let r = run_rx_path(&mut d, &frames, 1, 0.0, [&mut req, &mut b, &mut c]).unwrap();
        check(&frames, &r);
        r
    };
    let eager = run(vec![0]);
    let mut pattern = vec![0; 15];
    pattern.push(150);
    let bursty = run(pattern);
    assert_eq!(
        bursty.input_stalls, eager.input_stalls,
        "the line stalled behind a bursty responder"
    );
    assert!(
        bursty.max_fill >= 3,
        "the FIFO held {} headers at most",
        bursty.max_fill
    );
    let slow = run(vec![60]);
    assert!(
        slow.input_stalls > eager.input_stalls + 1000,
        "a responder slower than the line must stall it ({} stalls)",
        slow.input_stalls
    );
}
