//! The ICRC engine in lock-step (rust-hdl against Verilator, every output on every cycle) on
//! random traffic, the reference traces and (with RNIC_GOLDEN_DIR) the real captures; its
//! verdicts and appended ICRCs checked against the software model.

use std::path::{Path, PathBuf};

use rnic_cosim::axis::Rng;
use rnic_cosim::dut::{HdlDut, VerilatedDut};
use rnic_cosim::icrc::{TUSER_BAD, TUSER_ROCE, expected_rx, random_frame, rx_mix, size_tier};
use rnic_cosim::lockstep::{RunResult, Stimulus, run};
use rnic_cosim::need;
use rnic_hw::icrc_engine::{IcrcEngine, Mode};
use rnic_wire::{RocePacket, icrc, ipv4, locate};

fn lockstep(mode: Mode, s: &Stimulus) -> RunResult {
    let top = match mode {
        Mode::Rx => "icrc_rx",
        Mode::Tx => "icrc_tx",
    };
    let mut a = HdlDut::new(IcrcEngine::new(mode));
    let mut b = VerilatedDut::new(top).unwrap();
    let r = run(&mut a, &mut b, s).unwrap_or_else(|m| panic!("{m}"));
    assert!(r.errors.is_empty(), "output protocol: {:?}", r.errors);
    assert_eq!(
        r.frames.len(),
        s.frames.len(),
        "seed {:#x}: frames out",
        s.seed
    );
    r
}

/// RX over `frames`: data unchanged, verdict as the software model says. Returns the counts of
/// (other good, other bad, RoCEv2 good, RoCEv2 bad).
fn rx_check(frames: Vec<(Vec<u8>, u64)>, seed: u64, idle: f64, stall: f64) -> [usize; 4] {
    let s = Stimulus {
        frames,
        seed,
        idle,
        stall,
    };
    let r = lockstep(Mode::Rx, &s);
    let mut seen = [0usize; 4];
    for (i, ((inp, mac), out)) in s.frames.iter().zip(&r.frames).enumerate() {
        assert_eq!(&out.data, inp, "seed {seed:#x} frame {i}: data changed");
        let (roce, bad) = expected_rx(inp, *mac != 0);
        let want = (u64::from(roce) * TUSER_ROCE) | (u64::from(bad) * TUSER_BAD);
        assert_eq!(
            out.tuser,
            want,
            "seed {seed:#x} frame {i} ({} bytes)",
            inp.len()
        );
        seen[out.tuser as usize & 3] += 1;
    }
    seen
}

#[test]
fn rx_ten_thousand_random_frames() {
    let mut total = 0;
    let mut sizes = (usize::MAX, 0usize);
    let mut kinds = std::collections::BTreeSet::new();
    for (seed, idle, stall) in [
        (11, 0.0, 0.0),
        (12, 0.1, 0.1),
        (13, 0.3, 0.2),
        (14, 0.0, 0.5),
    ] {
        let mut rng = Rng::new(seed);
        let frames = rx_mix(&mut rng, 2600, 0);
        for (f, _) in &frames {
            sizes = (sizes.0.min(f.len()), sizes.1.max(f.len()));
            if let Ok(p) = RocePacket::parse(f) {
                let v6 = matches!(p.ip, rnic_wire::IpParsed::V6(_));
                kinds.insert((v6, p.eth.vlan.is_some(), p.pad_cnt));
            }
        }
        total += frames.len();
        let seen = rx_check(frames, seed, idle, stall);
        eprintln!(
            "seed {seed}: other ok/bad {}/{}, roce ok/bad {}/{}",
            seen[0], seen[1], seen[2], seen[3]
        );
        assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
    }
    eprintln!("{total} frames, {} to {} bytes", sizes.0, sizes.1);
    assert!(total >= 10_000);
    assert_eq!(sizes.0, 60, "the smallest frames are MAC-padded to 60");
    assert!(sizes.1 >= 9000, "jumbo frames included");
    assert_eq!(kinds.len(), 16, "IPv4/IPv6 x tag x pad 0-3: {kinds:?}");
}

#[test]
fn tx_appends_the_icrc_to_random_frames() {
    for (seed, idle, stall) in [(21, 0.0, 0.0), (22, 0.2, 0.3)] {
        let mut rng = Rng::new(seed);
        let full: Vec<Vec<u8>> = (0..800)
            .map(|_| {
                let cap = size_tier(&mut rng);
                random_frame(&mut rng, cap).build().unwrap()
            })
            .collect();
        let frames = full
            .iter()
            .map(|f| (f[..f.len() - 4].to_vec(), 0))
            .collect();
        let s = Stimulus {
            frames,
            seed,
            idle,
            stall,
        };
        let r = lockstep(Mode::Tx, &s);
        for (i, (want, out)) in full.iter().zip(&r.frames).enumerate() {
            assert_eq!(&out.data, want, "seed {seed} frame {i}");
            assert_eq!(out.tuser, TUSER_ROCE, "seed {seed} frame {i}");
        }
    }
}

#[test]
fn tx_flags_a_frame_that_cannot_take_an_icrc() {
    let mut rng = Rng::new(5);
    let good = random_frame(&mut rng, 100).build().unwrap();
    let body = good[..good.len() - 4].to_vec();
    // One byte short: the covered length is no longer a multiple of 4.
    let odd = body[..body.len() - 1].to_vec();
    let s = Stimulus {
        frames: vec![(odd.clone(), 0), (body, 0)],
        seed: 5,
        idle: 0.0,
        stall: 0.0,
    };
    let r = lockstep(Mode::Tx, &s);
    assert_eq!(r.frames[0].data, odd, "passed unchanged");
    assert_eq!(r.frames[0].tuser, TUSER_ROCE | TUSER_BAD);
    assert_eq!(r.frames[1].data, good);
}

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/golden")
        .join(name)
}

fn pcap_frames(path: &Path) -> Vec<(Vec<u8>, u64)> {
    let cap = rnic_wire::pcap::read_file(path).unwrap_or_else(|e| panic!("{e}"));
    cap.records
        .into_iter()
        .filter(|r| r.linktype == rnic_wire::pcap::LINKTYPE_ETHERNET)
        .map(|r| (r.data, 0))
        .collect()
}

#[test]
fn reference_trace_passes_rx_and_is_rebuilt_by_tx() {
    let frames = pcap_frames(&golden("scapy_reference.pcap"));
    let n = frames.len();
    let seen = rx_check(frames.clone(), 31, 0.1, 0.1);
    assert_eq!(
        seen,
        [0, 0, n, 0],
        "every reference frame is RoCEv2 with a good ICRC"
    );
    let s = Stimulus {
        frames: frames
            .iter()
            .map(|(f, _)| (f[..f.len() - 4].to_vec(), 0))
            .collect(),
        seed: 32,
        idle: 0.1,
        stall: 0.1,
    };
    let r = lockstep(Mode::Tx, &s);
    for ((want, _), out) in frames.iter().zip(&r.frames) {
        assert_eq!(&out.data, want);
    }
}

#[test]
fn real_captures_pass_rx() {
    const TEST: &str = "real_captures_pass_rx";
    let Some(dir) = need::golden_dir(TEST) else {
        return;
    };
    let files = need::golden_captures(&dir);
    let mut n_roce = 0;
    for f in &files {
        let frames = pcap_frames(f);
        let roce = frames
            .iter()
            .filter(|(x, _)| locate(x, &[4791]).is_some())
            .count();
        let seen = rx_check(frames, 41, 0.0, 0.0);
        eprintln!("{}: roce ok {} of {roce}", f.display(), seen[2]);
        assert_eq!(seen[2], roce, "{}", f.display());
        assert_eq!(seen[3], 0, "{}", f.display());
        n_roce += roce;
    }
    need::at_least(TEST, "capture files", files.len(), need::GOLDEN_FILES);
    need::at_least(TEST, "RoCEv2 frames", n_roce, need::GOLDEN_ROCE_FRAMES);
}

/// Byte offsets of the masked fields of the frame's IP packet.
fn masked_bytes(frame: &[u8]) -> Vec<usize> {
    let loc = locate(frame, &[4791]).unwrap();
    let v6 = frame[loc.ip_offset] >> 4 == 6;
    let mut m = [0u8; 64];
    for &(at, f) in icrc::masked_fields(v6) {
        f.set(&mut m[at..], f.max());
    }
    m.iter()
        .enumerate()
        .filter(|(_, b)| **b == 0xFF)
        .map(|(i, _)| loc.ip_offset + i)
        .collect()
}

#[test]
fn flipped_covered_bits_fail_and_masked_fields_do_not() {
    let reference = pcap_frames(&golden("scapy_reference.pcap"));
    let mut rng = Rng::new(51);
    let mut frames = Vec::new();
    let mut want_bad = Vec::new();
    for (f, _) in reference.iter().take(400) {
        let loc = locate(f, &[4791]).unwrap();
        let masked = masked_bytes(f);
        // A flipped bit anywhere the ICRC covers (IP header to ICRC, outside masked bytes).
        let mut flip = f.clone();
        let at = loop {
            let at = loc.ip_offset + rng.below((loc.ip_end - loc.ip_offset) as u64) as usize;
            let v6_tc_nibble = at == loc.ip_offset && f[at] >> 4 == 6;
            if !masked.contains(&at) && !v6_tc_nibble {
                break at;
            }
        };
        flip[at] ^= 1 << rng.below(8);
        frames.push((flip, 0));
        want_bad.push(true);
        // What a switch may change: ECN to CE, DSCP, TTL / hop limit, FECN/BECN.
        let mut sw = f.clone();
        let ip = loc.ip_offset;
        let bth = ip + if sw[ip] >> 4 == 4 { 28 } else { 48 };
        if sw[ip] >> 4 == 4 {
            sw[ip + 1] = (rng.next_u64() as u8 & 0xFC) | 3;
            sw[ip + 8] = sw[ip + 8].wrapping_sub(1);
            let mut h = ipv4::Ipv4Header::new_checked(&mut sw[ip..], ip).unwrap();
            h.fill_checksum();
        } else {
            sw[ip] = 0x6F;
            sw[ip + 1] = 0xF3;
            sw[ip + 7] = sw[ip + 7].wrapping_sub(1);
        }
        sw[bth + 4] ^= 0xC0;
        frames.push((sw, 0));
        want_bad.push(false);
    }
    let s = Stimulus {
        frames: frames.clone(),
        seed: 52,
        idle: 0.05,
        stall: 0.05,
    };
    let r = lockstep(Mode::Rx, &s);
    for (i, (out, bad)) in r.frames.iter().zip(&want_bad).enumerate() {
        let (roce, sw_bad) = expected_rx(&frames[i].0, false);
        assert_eq!(
            out.tuser,
            (u64::from(roce) * TUSER_ROCE) | (u64::from(sw_bad) * TUSER_BAD),
            "variant {i}: engine and software model differ"
        );
        if *bad {
            // Flipped: never accepted as a good RoCEv2 frame (a flip in the version, protocol
            // or port makes it not RoCEv2 at all).
            assert_ne!(
                out.tuser, TUSER_ROCE,
                "variant {i}: a flipped bit went unnoticed"
            );
        } else {
            assert_eq!(
                out.tuser, TUSER_ROCE,
                "variant {i}: a masked field changed the verdict"
            );
        }
    }
}

/// The harness itself: two different modules must be reported, with cycle, port and seed.
#[test]
fn lockstep_reports_the_first_difference() {
    let mut rng = Rng::new(61);
    let frames = rx_mix(&mut rng, 20, 100);
    let s = Stimulus {
        frames,
        seed: 0x61,
        idle: 0.0,
        stall: 0.0,
    };
    let mut a = HdlDut::new(IcrcEngine::new(Mode::Rx));
    let mut b = VerilatedDut::new("icrc_tx").unwrap();
    let m = run(&mut a, &mut b, &s).expect_err("RX and TX differ");
    let text = m.to_string();
    assert!(
        text.contains("seed 0x61") && text.contains(m.port),
        "{text}"
    );
    assert_ne!(m.a, m.b);
}

#[test]
fn waveform_is_written() {
    let path = std::env::temp_dir().join("rnic_icrc_wave.vcd");
    let _ = std::fs::remove_file(&path);
    {
        let mut b = VerilatedDut::new("icrc_rx").unwrap();
        b.model.trace(&path).unwrap();
        let mut rng = Rng::new(71);
        let s = Stimulus {
            frames: rx_mix(&mut rng, 3, 64),
            seed: 71,
            idle: 0.0,
            stall: 0.0,
        };
        let r = rnic_cosim::lockstep::run_one(&mut b, &s);
        assert_eq!(r.frames.len(), 3);
    }
    let vcd = std::fs::read_to_string(&path).unwrap();
    assert!(vcd.contains("$var") && vcd.contains("s_axis_tdata") && vcd.contains("#10"));
}
