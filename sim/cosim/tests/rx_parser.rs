//! The RoCEv2 receive parser (`rnic_hw::rx_parser`) against the software model
//! (`rnic_cosim::rx_model`, built on `rnic-wire`): rust-hdl and Verilator in lock-step on random
//! traffic, the scapy reference trace field by field, real captures (`RNIC_GOLDEN_DIR`), and a
//! malformed-frame matrix with one test per drop reason.

use std::time::Instant;

use rnic_cosim::axis::Rng;
use rnic_cosim::need;
use rnic_cosim::packet_dut::{HdlRx, RxRun, RxStimulus, VerilatedRx, run};
use rnic_cosim::rx_model::{Break, Expect, apply, expect, rx_traffic};
use rnic_hw::header_channel::HeaderRecord;
use rnic_hw::rx_parser::{COUNTERS, Reason};
use rnic_wire::RocePacket;

/// Checks a run against the model: headers, payloads, bypass frames and every counter.
fn check(frames: &[(Vec<u8>, bool)], r: &RxRun) {
    assert!(
        r.errors.is_empty(),
        "stream errors: {:?}",
        &r.errors[..r.errors.len().min(5)]
    );
    let mut headers: Vec<HeaderRecord> = Vec::new();
    let mut payloads = Vec::new();
    let mut bypass = Vec::new();
    let mut counts = [0u64; 12];
    for (i, (f, bad)) in frames.iter().enumerate() {
        let e = expect(f, *bad).unwrap_or_else(|m| panic!("frame {i}: {m}"));
        counts[0] += 1;
        match e {
            Expect::Bypass => {
                counts[2] += 1;
                bypass.push((f.clone(), *bad));
            }
            Expect::Drop(reason) => {
                let k = COUNTERS
                    .iter()
                    .position(|c| *c == reason.counter())
                    .unwrap();
                counts[k] += 1;
            }
            Expect::Accept(h, p) => {
                counts[1] += 1;
                headers.push(*h);
                if !p.is_empty() {
                    payloads.push(p);
                }
            }
        }
    }
    for (k, name) in COUNTERS.iter().enumerate() {
        assert_eq!(r.counters[k], counts[k], "counter {name}");
    }
    assert_eq!(r.headers.len(), headers.len(), "header count");
    for (i, (got, want)) in r.headers.iter().zip(&headers).enumerate() {
        assert_eq!(
            got,
            want,
            "header {i}:\n got  {}\n want {}",
            got.describe(),
            want.describe()
        );
    }
    assert_eq!(r.payloads.len(), payloads.len(), "payload count");
    for (i, (got, want)) in r.payloads.iter().zip(&payloads).enumerate() {
        assert_eq!(got, want, "payload {i}");
    }
    assert_eq!(r.bypass, bypass, "bypass frames");
}

fn verilator_run(frames: Vec<(Vec<u8>, bool)>, seed: u64, idle: f64, stall: f64) -> RxRun {
    let s = RxStimulus {
        frames,
        seed,
        idle,
        stall,
    };
    let mut v = VerilatedRx::new().expect("verilated rx_parser");
    let r = run::<_, VerilatedRx>(&mut v, None, &s).expect("single run");
    check(&s.frames, &r);
    r
}

/// rust-hdl and Verilator in lock-step, every output port compared every cycle, on random
/// traffic with idles and back-pressure; then the long run under Verilator alone. Both checked
/// against the model.
#[test]
fn lockstep_then_verilator_random_traffic() {
    let t = Instant::now();
    let mut lock_frames = 0;
    let mut long_frames = 0;
    for seed in [0x5EED_0001u64, 0x5EED_0002, 0x5EED_0003] {
        let mut rng = Rng::new(seed);
        let frames = rx_traffic(&mut rng, 3400, 256);
        let s = RxStimulus {
            frames,
            seed,
            idle: 0.2,
            stall: 0.2,
        };
        let mut a = HdlRx::new();
        let mut b = VerilatedRx::new().expect("verilated rx_parser");
        let r = run(&mut a, Some(&mut b), &s).unwrap_or_else(|e| panic!("{e}"));
        check(&s.frames, &r);
        lock_frames += s.frames.len();
        let frames = rx_traffic(&mut rng, 3400, 1100);
        long_frames += frames.len();
        let (idle, stall) = if seed & 1 == 1 {
            (0.1, 0.1)
        } else {
            (0.0, 0.0)
        };
        verilator_run(frames, seed, idle, stall);
    }
    eprintln!(
        "lock-step frames {lock_frames}, Verilator frames {long_frames}, {:.1?}",
        t.elapsed()
    );
    assert!(lock_frames >= 10_000 && long_frames >= 10_000);
}

/// Line rate: back-to-back good frames, no idles, no back-pressure: the input never waits, and
/// the output carries every payload.
#[test]
fn line_rate_back_to_back() {
    for max in [0usize, 64, 1024, 8000] {
        let mut rng = Rng::new(0x11AE + max as u64);
        let frames: Vec<(Vec<u8>, bool)> = (0..60)
            .map(|_| {
                let d = rnic_cosim::icrc::random_frame(&mut rng, max);
                (d.build().unwrap(), false)
            })
            .collect();
        let beats: u64 = frames.iter().map(|(f, _)| f.len().div_ceil(8) as u64).sum();
        let r = verilator_run(frames, 1, 0.0, 0.0);
        eprintln!(
            "payload <= {max}: {} beats in {} cycles, {:.3} bytes/cycle, latency {:?}",
            beats,
            r.in_cycles,
            r.in_bytes as f64 / r.in_cycles as f64,
            r.latency
        );
        assert!(
            r.in_cycles == beats,
            "payload <= {max}: {} input cycles for about {beats} beats",
            r.in_cycles
        );
    }
}

/// Every frame of the scapy reference trace: every header field equals the model's parse, every
/// payload equals the model's, nothing else comes out.
#[test]
fn reference_trace_fields_equal_the_model() {
    let frames = rnic_cosim::packet_dut::scapy_reference_frames();
    let n = frames.len();
    let r = verilator_run(frames, 7, 0.05, 0.05);
    assert_eq!(
        r.counters[1] as usize, n,
        "every reference frame is accepted"
    );
}

/// Real captures (`RNIC_GOLDEN_DIR`, and its `rxe/`): every RoCEv2 frame is accepted with the
/// model's fields; other frames are bypassed unchanged.
#[test]
fn real_captures() {
    const TEST: &str = "rx_parser real_captures";
    let Some(dir) = need::golden_dir(TEST) else {
        return;
    };
    let files = need::golden_captures(&dir);
    let mut total = 0;
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
        verilator_run(frames, 3, 0.1, 0.1);
    }
    need::at_least(TEST, "capture files", files.len(), need::GOLDEN_FILES);
    need::at_least(TEST, "real frames", total, need::GOLDEN_FRAMES);
}

/// One broken frame between two good ones: the counter of its reason is 1, and the payload
/// stream and header channel carry only the good frames.
fn matrix(b: Break, want: Reason) {
    for (k, v6) in [false, true].into_iter().enumerate() {
        if v6 && matches!(b, Break::Fragment | Break::Checksum) {
            continue;
        }
        let mut rng = Rng::new(0xBAD0 + k as u64 + 16 * want as u64);
        let mut good = || loop {
            let d = rnic_cosim::icrc::random_frame(&mut rng, 300);
            let is_v6 = matches!(d.ip, rnic_wire::IpRepr::V6(_));
            let info = d.opcode().unwrap();
            let usable = is_v6 == v6
                && info.payload
                && (b != Break::PadCnt || d.payload.is_empty())
                && (b == Break::PadCnt || d.payload.len() > 8);
            if usable {
                return d.build().unwrap();
            }
        };
        let (g1, mut bad, g2) = (good(), good(), good());
        let mut rng2 = Rng::new(99);
        apply(&mut bad, b, &mut rng2);
        let frames = vec![(g1, false), (bad.clone(), false), (g2, false)];
        assert_eq!(
            expect(&bad, false).unwrap(),
            Expect::Drop(want),
            "the model's verdict on the broken frame"
        );
        let r = verilator_run(frames.clone(), 5, 0.0, 0.0);
        let k = COUNTERS.iter().position(|c| *c == want.counter()).unwrap();
        assert_eq!(r.counters[k], 1, "{}", want.counter());
        assert_eq!(r.counters[1], 2, "the two good frames are accepted");
        let good_payloads: Vec<Vec<u8>> = [&frames[0].0, &frames[2].0]
            .iter()
            .map(|f| rnic_wire::RocePacket::parse(f).unwrap().payload().to_vec())
            .filter(|p| !p.is_empty())
            .collect();
        assert_eq!(r.payloads, good_payloads, "only good payloads are released");
        assert_eq!(r.headers.len(), 2);
        assert!(r.bypass.is_empty());
    }
}

#[test]
fn drop_truncated() {
    matrix(Break::Truncate, Reason::Truncated);
}
#[test]
fn drop_fragment() {
    matrix(Break::Fragment, Reason::Fragment);
}
#[test]
fn drop_ipv4_checksum() {
    matrix(Break::Checksum, Reason::Checksum);
}
#[test]
fn drop_length_mismatch() {
    matrix(Break::UdpLength, Reason::Length);
}
#[test]
fn drop_tver() {
    matrix(Break::Tver, Reason::Tver);
}
#[test]
fn drop_unknown_opcode() {
    matrix(Break::Opcode, Reason::Opcode);
}
#[test]
fn drop_padcnt() {
    matrix(Break::PadCnt, Reason::Padcnt);
}
#[test]
fn drop_bad_icrc() {
    matrix(Break::Icrc, Reason::Icrc);
}

/// A frame longer than 9216 bytes is dropped as oversize (and the FIFOs do not fill up).
#[test]
fn drop_oversize() {
    let mut rng = Rng::new(42);
    let d = rnic_cosim::icrc::random_frame(&mut rng, 100);
    let mut big = d.build().unwrap();
    big.resize(9300, 0xA5);
    let frames = vec![(big, false), (d.build().unwrap(), false)];
    let r = verilator_run(frames, 1, 0.0, 0.0);
    assert_eq!(r.counters[3], 1);
}

/// Short frames where the checks meet the capture: every frame cut at every length up to its
/// first 130 bytes, and frames whose IP length is rewritten so that they end just past it (with
/// the IPv4 checksum fixed or left stale), for every shape and opcode. The parser reads the
/// decoded header one beat late and the checksum from per-lane sums; both must give the model's
/// verdict on every one, in lock-step with rust-hdl for part of them.
#[test]
fn cut_and_relengthed_frames_at_every_length() {
    let mut rng = Rng::new(0xC07_0001);
    let mut frames: Vec<(Vec<u8>, bool)> = Vec::new();
    let mut inside_udp = 0;
    for _ in 0..48 {
        let f = rnic_cosim::icrc::random_frame(&mut rng, 40)
            .build()
            .expect("build");
        let l3 = if f[12..14] == [0x81, 0x00] { 18 } else { 14 };
        let udp = l3 + if f[l3] >> 4 == 4 { 20 } else { 40 };
        for cut in 14..=f.len().min(130) {
            let c = &f[..cut];
            // The verdict's first question, RoCEv2 or not, as the wire model answers it: a
            // frame is RoCEv2 once its UDP destination port is in it, so one cut inside the
            // rest of the UDP header is a truncated RoCEv2 frame, not a bypassed one.
            let model = expect(c, false).unwrap();
            let wire = rnic_wire::locate(c, &[rnic_wire::udp::ROCE_PORT]).is_some();
            assert_eq!(
                wire,
                model != Expect::Bypass,
                "cut at {cut}: wire model RoCEv2={wire}, parser model {model:?}"
            );
            if (udp + 4..udp + 8).contains(&cut) {
                assert_eq!(model, Expect::Drop(Reason::Truncated), "cut at {cut}");
                assert!(RocePacket::parse(c).is_err(), "cut at {cut}");
                inside_udp += 1;
            }
            frames.push((c.to_vec(), false));
        }
    }
    for _ in 0..600 {
        let mut f = rnic_cosim::icrc::random_frame(&mut rng, 40)
            .build()
            .expect("build");
        let l3 = if f[12..14] == [0x81, 0x00] { 18 } else { 14 };
        let v4 = f[l3] >> 4 == 4;
        let base = if v4 { l3 } else { l3 + 40 };
        // An IP length ending 0-7 bytes before the frame's end, anywhere from the IP header on.
        let end = (base + 20 + rng.below(80) as usize).min(f.len());
        let ip_len = (end - base).saturating_sub(rng.below(8) as usize);
        let at = if v4 { l3 + 2 } else { l3 + 4 };
        f[at..at + 2].copy_from_slice(&(ip_len as u16).to_be_bytes());
        if v4 && rng.chance(0.7) {
            f[l3 + 10..l3 + 12].copy_from_slice(&[0, 0]);
            let c = rnic_wire::ipv4::checksum(&f[l3..l3 + 20]);
            f[l3 + 10..l3 + 12].copy_from_slice(&c.to_be_bytes());
        }
        f.truncate(end);
        if rng.chance(0.5) {
            rnic_wire::pad_to_min(&mut f);
        }
        frames.push((f, false));
    }
    assert_eq!(
        inside_udp,
        48 * 4,
        "frames cut inside the UDP header after its port"
    );
    let n = frames.len();
    let r = verilator_run(frames.clone(), 0xC07, 0.1, 0.1);
    let verdicts = |reason: Reason| {
        r.counters[COUNTERS
            .iter()
            .position(|c| *c == reason.counter())
            .unwrap()]
    };
    for reason in [Reason::Truncated, Reason::Checksum, Reason::Length] {
        assert!(verdicts(reason) >= 50, "{reason:?}: {}", verdicts(reason));
    }
    let s = RxStimulus {
        frames: frames.into_iter().step_by(7).collect(),
        seed: 0xC08,
        idle: 0.2,
        stall: 0.2,
    };
    let mut a = HdlRx::new();
    let mut b = VerilatedRx::new().expect("verilated rx_parser");
    let lock = run(&mut a, Some(&mut b), &s).unwrap_or_else(|e| panic!("{e}"));
    check(&s.frames, &lock);
    assert!(n > 4000, "{n} frames");
}
