//! The ICRC engine in lock-step (rust-hdl against Verilator) on random traffic, its verdicts
//! and appended ICRCs against the software model.

use rnic_cosim::axis::Rng;
use rnic_cosim::dut::{HdlDut, VerilatedDut};
use rnic_cosim::icrc::{TUSER_BAD, TUSER_ROCE, expected_rx, random_frame, rx_mix};
use rnic_cosim::lockstep::{Stimulus, run};
use rnic_hw::icrc_engine::{IcrcEngine, Mode};

fn rx_run(seed: u64, n: usize, max_payload: usize, idle: f64, stall: f64) -> usize {
    let mut rng = Rng::new(seed);
    let frames = rx_mix(&mut rng, n, max_payload);
    let s = Stimulus {
        frames: frames.clone(),
        seed,
        idle,
        stall,
    };
    let mut a = HdlDut::new(IcrcEngine::new(Mode::Rx));
    let mut b = VerilatedDut::new("icrc_rx").unwrap();
    let r = run(&mut a, &mut b, &s).unwrap_or_else(|m| panic!("{m}"));
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.frames.len(), frames.len(), "seed {seed:#x}");
    let mut seen = [0usize; 4];
    for (i, ((inp, mac), out)) in frames.iter().zip(&r.frames).enumerate() {
        seen[out.tuser as usize & 3] += 1;
        assert_eq!(&out.data, inp, "seed {seed:#x} frame {i}: data changed");
        let (roce, bad) = expected_rx(inp, *mac != 0);
        let want = (u64::from(roce) * TUSER_ROCE) | (u64::from(bad) * TUSER_BAD);
        assert_eq!(
            out.tuser,
            want,
            "seed {seed:#x} frame {i} ({} bytes)",
            inp.len()
        );
    }
    // The mix exercises every verdict: good and bad RoCEv2, other frames good and bad.
    eprintln!(
        "seed {seed:#x}: other ok/bad {}/{}, roce ok/bad {}/{}",
        seen[0], seen[1], seen[2], seen[3]
    );
    assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
    frames.len()
}

#[test]
fn rx_small_frames_back_to_back() {
    rx_run(1, 300, 200, 0.0, 0.0);
}

#[test]
fn rx_with_idles_and_backpressure() {
    rx_run(2, 300, 600, 0.3, 0.3);
}

#[test]
fn tx_appends_the_icrc() {
    let seed = 7;
    let mut rng = Rng::new(seed);
    let full: Vec<Vec<u8>> = (0..200)
        .map(|_| random_frame(&mut rng, 300).build().unwrap())
        .collect();
    let frames: Vec<(Vec<u8>, u64)> = full
        .iter()
        .map(|f| (f[..f.len() - 4].to_vec(), 0))
        .collect();
    let s = Stimulus {
        frames,
        seed,
        idle: 0.2,
        stall: 0.2,
    };
    let mut a = HdlDut::new(IcrcEngine::new(Mode::Tx));
    let mut b = VerilatedDut::new("icrc_tx").unwrap();
    let r = run(&mut a, &mut b, &s).unwrap_or_else(|m| panic!("{m}"));
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    for (i, (want, out)) in full.iter().zip(&r.frames).enumerate() {
        assert_eq!(&out.data, want, "frame {i}");
        assert_eq!(out.tuser, TUSER_ROCE, "frame {i}");
    }
}
