//! The register slice in lock-step (rust-hdl against Verilator, every output on every cycle)
//! on random frames with random idles and back-pressure: every frame leaves unchanged, with its
//! `tuser`, and with neither idles nor back-pressure one beat leaves per cycle.

use rnic_cosim::axis::Rng;
use rnic_cosim::dut::{HdlDut, VerilatedDut};
use rnic_cosim::lockstep::{Stimulus, run};
use rnic_hw::axis_register::AxisRegister;

fn random_frames(rng: &mut Rng, n: usize) -> Vec<(Vec<u8>, u64)> {
    (0..n)
        .map(|_| {
            let len = 1 + rng.below(200) as usize;
            let data = (0..len).map(|_| rng.next_u64() as u8).collect();
            (data, u64::from(rng.chance(0.3)))
        })
        .collect()
}

#[test]
fn frames_pass_unchanged_under_back_pressure() {
    // What the runs covered: frames of one beat, frames of many, frames with `tuser` set.
    let (mut single, mut long, mut flagged) = (0, 0, 0);
    for (seed, idle, stall) in [
        (1, 0.0, 0.0),
        (2, 0.2, 0.0),
        (3, 0.0, 0.3),
        (4, 0.3, 0.3),
        (5, 0.0, 0.8),
        (6, 0.8, 0.1),
    ] {
        let mut rng = Rng::new(seed);
        let s = Stimulus {
            frames: random_frames(&mut rng, 300),
            seed,
            idle,
            stall,
        };
        let mut a = HdlDut::new(AxisRegister::new());
        let mut b = VerilatedDut::new("axis_register").unwrap();
        let r = run(&mut a, &mut b, &s).unwrap_or_else(|m| panic!("{m}"));
        assert!(r.errors.is_empty(), "seed {seed}: {:?}", r.errors);
        assert_eq!(r.frames.len(), s.frames.len(), "seed {seed}: frames out");
        for (i, ((data, user), out)) in s.frames.iter().zip(&r.frames).enumerate() {
            assert_eq!(&out.data, data, "seed {seed} frame {i}: data");
            assert_eq!(out.tuser, *user, "seed {seed} frame {i}: tuser");
        }
        if idle == 0.0 && stall == 0.0 {
            // Full rate: every input beat taken on consecutive cycles.
            assert_eq!(
                r.in_cycles as usize, r.beats_in,
                "seed {seed}: a bubble at full rate"
            );
        }
        single += r.frames.iter().filter(|f| f.data.len() <= 8).count();
        long += r.frames.iter().filter(|f| f.data.len() > 64).count();
        flagged += r.frames.iter().filter(|f| f.tuser == 1).count();
    }
    assert!(
        single >= 20 && long >= 500 && flagged >= 300,
        "coverage: {single} one-beat, {long} long, {flagged} flagged frames"
    );
}
