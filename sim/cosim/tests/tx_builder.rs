//! The transmit builder and the receive-then-transmit loopback, against the software model:
//! every frame the builder emits must equal what `rnic_wire::RoceFrame::build` makes of the same
//! description, and every RoCEv2 frame the receive parser accepts must come back byte for byte
//! (Ethernet padding aside: the MAC adds it). rust-hdl and Verilator run in lock-step (every
//! output port compared on every cycle) on random traffic; long runs use Verilator alone.

use std::time::Instant;

use rnic_cosim::axis::Rng;
use rnic_cosim::icrc::random_frame;
use rnic_cosim::need;
use rnic_cosim::rx_model::{Expect, expect, record_of, rx_traffic};
use rnic_cosim::tx_dut::{
    HdlLoopback, HdlTx, LbRun, LbStimulus, TxRun, TxStimulus, VerilatedLoopback, VerilatedTx,
    run_loopback, run_tx,
};
use rnic_hw::header_channel::HeaderRecord;
use rnic_wire::RocePacket;

/// A frame cut to its IP length (what the builder emits for it), or `None` when it is not one
/// the model parses.
fn unpadded(f: &[u8]) -> Vec<u8> {
    let p = RocePacket::parse(f).expect("the model parses it");
    f[..p.eth.header_len() + p.ip_packet().len()].to_vec()
}

/// Random transmit work: (header word, payload, expected frame). The header word's PadCnt is
/// scrambled (the builder derives it) and the BTH reserved bits are random (carried).
fn tx_items(rng: &mut Rng, n: usize, max_payload: usize) -> Vec<(HeaderRecord, Vec<u8>, Vec<u8>)> {
    (0..n)
        .map(|_| {
            let tier = [0usize, 16, 64, 256, 1024, max_payload][rng.below(6) as usize];
            let mut d = random_frame(rng, tier.min(max_payload));
            d.bth.resv6 = rng.below(64) as u8;
            d.bth.resv7 = rng.below(128) as u8;
            let f = d.build().expect("random frames build");
            let p = RocePacket::parse(&f).expect("built frames parse");
            let mut h = record_of(&p);
            h.set("PadCnt", rng.below(4));
            (h, p.payload().to_vec(), f)
        })
        .collect()
}

fn check_tx(want: &[Vec<u8>], r: &TxRun) {
    assert!(
        r.errors.is_empty(),
        "stream errors: {:?}",
        &r.errors[..3.min(r.errors.len())]
    );
    assert_eq!(r.frames.len(), want.len(), "frame count");
    for (i, ((got, bad), w)) in r.frames.iter().zip(want).enumerate() {
        assert!(!bad, "frame {i} marked bad");
        assert_eq!(got, w, "frame {i}");
    }
    assert_eq!(r.counters, [want.len() as u64, 0], "counters");
}

fn tx_stimulus(
    items: &[(HeaderRecord, Vec<u8>, Vec<u8>)],
    seed: u64,
    idle: f64,
    stall: f64,
) -> TxStimulus {
    TxStimulus {
        items: items
            .iter()
            .map(|(h, p, _)| (h.clone(), p.clone()))
            .collect(),
        seed,
        idle,
        stall,
        bad_beat: Vec::new(),
    }
}

fn want_of(items: &[(HeaderRecord, Vec<u8>, Vec<u8>)]) -> Vec<Vec<u8>> {
    items.iter().map(|(_, _, f)| f.clone()).collect()
}

/// rust-hdl and Verilator in lock-step on random frames with idles and back-pressure, then long
/// runs under Verilator alone; every frame equal to the software model's build.
#[test]
fn tx_lockstep_then_verilator_random_traffic() {
    let t = Instant::now();
    let (mut lock, mut long) = (0, 0);
    for seed in [0x7E57_0001u64, 0x7E57_0002, 0x7E57_0003] {
        let mut rng = Rng::new(seed);
        let items = tx_items(&mut rng, 3400, 256);
        let s = tx_stimulus(&items, seed, 0.2, 0.2);
        let mut a = HdlTx::new();
        let mut b = VerilatedTx::new().expect("verilated tx_builder");
        let r = run_tx(&mut a, Some(&mut b), &s).unwrap_or_else(|e| panic!("{e}"));
        check_tx(&want_of(&items), &r);
        lock += items.len();
        let items = tx_items(&mut rng, 3400, 9000);
        let (idle, stall) = if seed & 1 == 1 {
            (0.1, 0.1)
        } else {
            (0.0, 0.0)
        };
        let s = tx_stimulus(&items, seed, idle, stall);
        let mut v = VerilatedTx::new().expect("verilated tx_builder");
        let r = run_tx::<_, VerilatedTx>(&mut v, None, &s).expect("single run");
        check_tx(&want_of(&items), &r);
        long += items.len();
    }
    eprintln!(
        "lock-step frames {lock}, Verilator frames {long}, {:.1?}",
        t.elapsed()
    );
    assert!(lock >= 10_000 && long >= 10_000);
}

/// Line rate: back-to-back frames, inputs always valid, output always ready: the output carries
/// a beat on every cycle from the first to the last (no idle cycle between frames).
#[test]
fn tx_line_rate_back_to_back() {
    for max in [0usize, 64, 256, 1024, 4096, 8000] {
        let mut rng = Rng::new(0x7A7E + max as u64);
        let items: Vec<_> = (0..60)
            .map(|_| {
                let mut d = random_frame(&mut rng, max);
                // Fixed size per run (random_frame picks any length up to `max`).
                if !d.payload.is_empty() || max == 0 {
                    d.payload = vec![0xA5; max.min(9000 - 40 - 8 - 12 - 28 - 4 - 3)];
                }
                if d.validate().is_err() {
                    d.payload.clear();
                }
                let f = d.build().expect("build");
                let p = RocePacket::parse(&f).expect("parse");
                (record_of(&p), p.payload().to_vec(), f)
            })
            .collect();
        let beats: u64 = items
            .iter()
            .map(|(_, _, f)| f.len().div_ceil(8) as u64)
            .sum();
        let s = tx_stimulus(&items, 1, 0.0, 0.0);
        let mut v = VerilatedTx::new().expect("verilated tx_builder");
        let r = run_tx::<_, VerilatedTx>(&mut v, None, &s).expect("run");
        check_tx(&want_of(&items), &r);
        eprintln!(
            "payload {max}: {beats} beats in {} cycles, {:.3} bytes/cycle, latency {:?}",
            r.out_cycles,
            r.out_bytes as f64 / r.out_cycles as f64,
            r.latency
        );
        assert_eq!(
            r.out_cycles, beats,
            "payload {max}: idle cycles on the output"
        );
    }
}

/// A payload stream that disagrees with the header's payload length: the frame leaves at its
/// declared length (without ICRC) marked bad and is counted; the frames around it are intact.
#[test]
fn tx_payload_length_mismatch_is_marked_and_counted() {
    let mut rng = Rng::new(0xBAD1);
    let mut items = Vec::new();
    while items.len() < 9 {
        let it = tx_items(&mut rng, 1, 200).remove(0);
        if it.1.len() >= 24 {
            items.push(it);
        }
    }
    // Item 2: the stream ends a beat early (payload_len 8 more than the stream).
    // Item 5: the stream runs a beat long (payload_len 8 less).
    // Item 7: the stream's last beat carries one byte more than payload_len says.
    let mut s = tx_stimulus(&items, 5, 0.1, 0.1);
    let declared = |s: &TxStimulus, i: usize| s.items[i].0.get("payload_len");
    let d2 = declared(&s, 2) + 8;
    s.items[2].0.set("payload_len", d2);
    let d5 = declared(&s, 5) - 8;
    s.items[5].0.set("payload_len", d5);
    let d7 = declared(&s, 7) - 1;
    s.items[7].0.set("payload_len", d7);
    for seed in [1u64, 2] {
        s.seed = seed;
        let mut a = HdlTx::new();
        let mut b = VerilatedTx::new().expect("verilated tx_builder");
        let r = run_tx(&mut a, Some(&mut b), &s).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.frames.len(), items.len());
        for (i, ((got, bad), (_, _, want))) in r.frames.iter().zip(&items).enumerate() {
            if [2, 5, 7].contains(&i) {
                assert!(bad, "frame {i} must be marked bad");
                let len_delta = s.items[i].0.get("payload_len") as i64 - items[i].1.len() as i64;
                let pad = |n: i64| (4 - n % 4) % 4;
                let n = items[i].1.len() as i64;
                // The ICRC engine appends no ICRC to a frame marked bad.
                let want_len = want.len() as i64 - 4 + len_delta + pad(n + len_delta) - pad(n);
                assert_eq!(got.len() as i64, want_len, "frame {i}: declared length");
            } else {
                assert!(!bad, "frame {i}");
                assert_eq!(got, want, "frame {i}");
            }
        }
        assert_eq!(r.counters, [items.len() as u64, 3]);
    }
}

/// A payload beat marked bad (`s_axis_tuser`: data the producer's DMA read could not get),
/// the first, a middle or the last of its frame: that frame leaves at its length, its bytes as
/// given and no ICRC, marked bad on its last beat; it is not a length error, and the frames
/// around it are intact. rust-hdl and Verilator in lock-step.
#[test]
fn tx_payload_marked_bad_leaves_marked() {
    for seed in [0x05E4_0001u64, 0x05E4_0002, 0x05E4_0003] {
        let mut rng = Rng::new(seed);
        let items = tx_items(&mut rng, 400, 1024);
        let mut s = tx_stimulus(&items, seed, 0.1, 0.1);
        s.bad_beat = items
            .iter()
            .map(|(_, p, _)| {
                let n = p.len().div_ceil(8);
                (n > 0 && rng.chance(0.3)).then(|| match rng.below(3) {
                    0 => 0,
                    1 => n - 1,
                    _ => rng.below(n as u64) as usize,
                })
            })
            .collect();
        let marked = s.bad_beat.iter().filter(|b| b.is_some()).count();
        assert!(marked >= 50, "seed {seed:#x}: {marked} frames marked");
        let mut a = HdlTx::new();
        let mut b = VerilatedTx::new().expect("verilated tx_builder");
        let r = run_tx(&mut a, Some(&mut b), &s).unwrap_or_else(|e| panic!("{e}"));
        assert!(r.errors.is_empty(), "stream errors: {:?}", r.errors);
        assert_eq!(r.frames.len(), items.len(), "frame count");
        for (i, ((got, bad), (_, _, want))) in r.frames.iter().zip(&items).enumerate() {
            if s.bad_beat[i].is_some() {
                assert!(bad, "seed {seed:#x}: frame {i} must be marked bad");
                assert_eq!(got[..], want[..want.len() - 4], "seed {seed:#x}: frame {i}");
            } else {
                assert!(!bad, "seed {seed:#x}: frame {i} marked bad");
                assert_eq!(got, want, "seed {seed:#x}: frame {i}");
            }
        }
        assert_eq!(
            r.counters,
            [items.len() as u64, 0],
            "seed {seed:#x}: counters"
        );
    }
}

// ---- Receive then transmit.

/// Checks a loopback run against the model: accepted frames come back as the model builds their
/// parsed description (which zeroes pad bytes a sender filled with anything else); with `exact`,
/// also equal to the received frame itself, cut to its IP length.
fn check_loopback(frames: &[(Vec<u8>, bool)], r: &LbRun, exact: bool) {
    assert!(
        r.errors.is_empty(),
        "stream errors: {:?}",
        &r.errors[..3.min(r.errors.len())]
    );
    let mut rebuilt = Vec::new();
    let mut bypass = Vec::new();
    for (i, (f, mac_bad)) in frames.iter().enumerate() {
        match expect(f, *mac_bad).unwrap_or_else(|e| panic!("frame {i}: {e}")) {
            Expect::Accept(..) => {
                let p = RocePacket::parse(f).expect("accepted frames parse");
                let want = p.repr().build().expect("parsed descriptions build");
                if exact {
                    assert_eq!(want, unpadded(f), "frame {i}: the model's own rebuild");
                }
                rebuilt.push(want);
            }
            Expect::Bypass => bypass.push((f.clone(), *mac_bad)),
            Expect::Drop(_) => {}
        }
    }
    assert_eq!(r.frames.len(), rebuilt.len(), "rebuilt frame count");
    for (i, ((got, bad), want)) in r.frames.iter().zip(&rebuilt).enumerate() {
        assert!(!bad, "rebuilt frame {i} marked bad");
        assert_eq!(got, want, "rebuilt frame {i}");
    }
    assert_eq!(r.bypass, bypass, "bypass frames");
    assert_eq!(r.counters[12], rebuilt.len() as u64, "tx frames");
    assert_eq!(r.counters[13], 0, "tx length errors");
}

fn loopback_verilator(
    frames: Vec<(Vec<u8>, bool)>,
    seed: u64,
    idle: f64,
    stall: f64,
    exact: bool,
) -> LbRun {
    let s = LbStimulus {
        frames,
        seed,
        idle,
        stall,
    };
    let mut v = VerilatedLoopback::new().expect("verilated packet_loopback");
    let r = run_loopback::<_, VerilatedLoopback>(&mut v, None, &s).expect("run");
    check_loopback(&s.frames, &r, exact);
    r
}

/// UD frames whose DETH reserved byte is not zero (a receiver keeps what came, as it does the
/// BTH's reserved bits): the header channel carries the byte and the rebuilt frame has it,
/// byte for byte with the received one and with a valid ICRC over it.
#[test]
fn deth_reserved_byte_survives_receive_and_rebuild() {
    let mut rng = Rng::new(0xDE7);
    let mut frames = Vec::new();
    while frames.len() < 40 {
        let mut d = random_frame(&mut rng, 200);
        let resv = 1 + (frames.len() as u8).wrapping_mul(37) % 255;
        let Some(deth) = d.ext.deth.as_mut() else {
            continue;
        };
        deth.resv = resv;
        let f = d.build().expect("build");
        let p = RocePacket::parse(&f).expect("parse");
        assert_eq!(p.ext.deth.map(|x| x.resv), Some(resv));
        assert!(p.icrc_ok());
        assert_eq!(record_of(&p).get("DETH.Reserved"), u64::from(resv));
        frames.push((f, false));
    }
    let r = loopback_verilator(frames.clone(), 0xDE7, 0.1, 0.1, true);
    assert_eq!(r.frames.len(), frames.len());
    for ((got, bad), (want, _)) in r.frames.iter().zip(&frames) {
        assert!(!bad);
        assert_eq!(got, want);
    }
}

/// Mixed traffic (good, broken, non-RoCE) through receive and transmit, rust-hdl and Verilator in
/// lock-step: accepted frames come back byte for byte, others are bypassed or dropped.
#[test]
fn loopback_lockstep_random_traffic() {
    for seed in [0x100B_0001u64, 0x100B_0002] {
        let mut rng = Rng::new(seed);
        let frames = rx_traffic(&mut rng, 100, 600);
        let s = LbStimulus {
            frames,
            seed,
            idle: 0.15,
            stall: 0.15,
        };
        let mut a = HdlLoopback::new();
        let mut b = VerilatedLoopback::new().expect("verilated packet_loopback");
        let r = run_loopback(&mut a, Some(&mut b), &s).unwrap_or_else(|e| panic!("{e}"));
        check_loopback(&s.frames, &r, false);
    }
}

/// Every frame of the scapy reference trace comes back byte for byte.
#[test]
fn loopback_reference_trace_byte_for_byte() {
    let frames = rnic_cosim::packet_dut::scapy_reference_frames();
    let n = frames.len();
    let r = loopback_verilator(frames, 9, 0.05, 0.05, true);
    assert_eq!(r.frames.len(), n, "every reference frame is rebuilt");
}

/// Real captures (`RNIC_GOLDEN_DIR`): every RoCEv2 frame the parser accepts comes back byte for
/// byte; the others are bypassed unchanged.
#[test]
fn loopback_real_captures_byte_for_byte() {
    const TEST: &str = "loopback_real_captures_byte_for_byte";
    let Some(dir) = need::golden_dir(TEST) else {
        return;
    };
    let files = need::golden_captures(&dir);
    let (mut total, mut rebuilt) = (0, 0);
    for path in &files {
        let cap =
            rnic_wire::pcap::read_file(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let frames: Vec<(Vec<u8>, bool)> = cap
            .records
            .into_iter()
            .filter(|r| r.linktype == 1 && r.data.len() == r.orig_len as usize)
            .map(|r| (r.data, false))
            .collect();
        total += frames.len();
        let r = loopback_verilator(frames, 3, 0.0, 0.0, true);
        rebuilt += r.frames.len();
    }
    eprintln!("real frames {total}, rebuilt byte for byte {rebuilt}");
    need::at_least(TEST, "capture files", files.len(), need::GOLDEN_FILES);
    need::at_least(TEST, "real frames", total, need::GOLDEN_FRAMES);
    need::at_least(
        TEST,
        "RoCEv2 frames rebuilt byte for byte",
        rebuilt,
        need::GOLDEN_ROCE_FRAMES,
    );
}

/// Line rate through receive and transmit: back-to-back frames of one size in, output always
/// ready: the input never waits.
#[test]
fn loopback_line_rate_back_to_back() {
    let mut waited = Vec::new();
    for max in [0usize, 64, 256, 1024, 4096, 8000] {
        let mut rng = Rng::new(0x1001 + max as u64);
        // RC SEND_ONLY frames of one length (random addresses, tags and IP versions).
        let frames: Vec<(Vec<u8>, bool)> = (0..60)
            .map(|_| {
                let mut d = random_frame(&mut rng, 0);
                d.bth.opcode = 0x04;
                d.ext = Default::default();
                d.payload = vec![0x5A; max];
                let mut f = d.build().expect("build");
                rnic_wire::pad_to_min(&mut f);
                (f, false)
            })
            .collect();
        let beats: u64 = frames.iter().map(|(f, _)| f.len().div_ceil(8) as u64).sum();
        let r = loopback_verilator(frames, 1, 0.0, 0.0, true);
        eprintln!(
            "payload {max}: {beats} input beats in {} cycles ({:.3} bytes/cycle in, {:.3} out), latency {:?}",
            r.in_cycles,
            r.in_bytes as f64 / r.in_cycles as f64,
            r.out_bytes as f64 / r.out_cycles as f64,
            r.latency
        );
        waited.push((max, r.in_cycles - beats));
    }
    // Mixed sizes: the builder takes a header only when it starts that frame, and the parser
    // holds one header; a frame that ends while the header before it still waits (two small
    // frames behind a jumbo frame) makes the input wait. Reported, not a requirement: in the NIC
    // the receive transport engine, not the builder, takes the parser's headers.
    let mut rng = Rng::new(0x1002);
    let frames: Vec<(Vec<u8>, bool)> = (0..400)
        .map(|_| {
            let tier = [0usize, 64, 1024, 8000][rng.below(4) as usize];
            let mut f = random_frame(&mut rng, tier).build().expect("build");
            rnic_wire::pad_to_min(&mut f);
            (f, false)
        })
        .collect();
    let beats: u64 = frames.iter().map(|(f, _)| f.len().div_ceil(8) as u64).sum();
    let r = loopback_verilator(frames, 1, 0.0, 0.0, true);
    eprintln!(
        "mixed sizes: {beats} input beats in {} cycles ({:.1} % of line rate)",
        r.in_cycles,
        100.0 * beats as f64 / r.in_cycles as f64
    );
    assert!(
        waited.iter().all(|&(_, w)| w == 0),
        "the input waited: {waited:?}"
    );
}
