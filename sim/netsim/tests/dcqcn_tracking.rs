//! The fixed-point reaction point tracks the floating-point one: the same random event
//! sequences drive both, and after every event
//! - |alpha_fixed - alpha_float| < 2^-16 / g (the contraction bound of the module docs), and
//! - |RC_fixed - RC_float| and |RT_fixed - RT_float| <= 2^-7 of line rate.

use rnic_netsim::dcqcn::rp_fixed::RpFixed;
use rnic_netsim::dcqcn::rp_float::RpFloat;
use rnic_netsim::dcqcn::{ALPHA_BITS, DcqcnParams, Profile, RateControl};
use rnic_netsim::rng::Rng;

const RATE_BOUND: f64 = 1.0 / 128.0;

fn track(p: &DcqcnParams, seed: u64, events: usize) -> (f64, f64) {
    let mut fx = RpFixed::new(p);
    let mut fl = RpFloat::new(p);
    let mut rng = Rng::new(seed, 99);
    let line = p.line_mbps * 1e6;
    let alpha_bound = 1.0 / f64::from(1u32 << ALPHA_BITS) / p.g;
    let (mut worst_rate, mut worst_alpha) = (0.0f64, 0.0f64);
    let mut cycle: u64 = 0;
    for i in 0..events {
        cycle += 1 + rng.next_u64() % 2000;
        let ns = cycle as f64 * p.clk_ps as f64 / 1000.0;
        match rng.next_u64() % 10 {
            0 | 1 => {
                let a = fx.cnp(cycle);
                let b = fl.cnp(ns);
                assert_eq!(a, b, "seed {seed} event {i}: cut spacing disagrees");
            }
            2..=4 => {
                fx.timer_event();
                fl.timer_event();
            }
            5 | 6 => {
                fx.byte_event();
                fl.byte_event();
            }
            _ => {
                fx.alpha_event();
                fl.alpha_event();
            }
        }
        let (a, b) = (fx.state(), fl.state());
        assert_eq!(
            (a.t_stage, a.bc_stage, a.active),
            (b.t_stage, b.bc_stage, b.active),
            "seed {seed} event {i}"
        );
        let dr = ((a.rc_bps - b.rc_bps).abs()).max((a.rt_bps - b.rt_bps).abs()) / line;
        let da = (a.alpha - b.alpha).abs();
        assert!(
            da < alpha_bound,
            "seed {seed} event {i}: alpha {} vs {}",
            a.alpha,
            b.alpha
        );
        assert!(dr <= RATE_BOUND, "seed {seed} event {i}: {a:?} vs {b:?}");
        worst_rate = worst_rate.max(dr);
        worst_alpha = worst_alpha.max(da);
    }
    (worst_rate, worst_alpha)
}

#[test]
fn fixed_tracks_float_paper_and_nvidia() {
    let mut params = Vec::new();
    for line in [1.0, 40.0, 100.0] {
        params.push(DcqcnParams::profile(Profile::Paper, line));
        let mut n = DcqcnParams::profile(Profile::Nvidia, line);
        // The release decision compares with line rate at each model's own resolution; the
        // models may release one event apart, after which their alphas differ by design.
        n.release_at_line = false;
        params.push(n);
        let mut ns3 = DcqcnParams::profile(Profile::Paper, line);
        ns3.g = 1.0 / 16.0;
        ns3.clamp_target = false;
        params.push(ns3);
    }
    let mut worst = (0.0f64, 0.0f64);
    for (k, p) in params.iter().enumerate() {
        for seed in 0..8 {
            let (r, a) = track(p, seed * 31 + k as u64, 3000);
            worst = (worst.0.max(r), worst.1.max(a));
        }
    }
    eprintln!(
        "worst rate error {:.3e} of line, worst alpha error {:.3e}",
        worst.0, worst.1
    );
}

/// The time-driven interface agrees too: the same CNP times and byte counts, timers from the
/// models' own clocks (T and K are whole cycles in fixed point: 55 us = 8594 cycles).
#[test]
fn fixed_tracks_float_driven_by_time() {
    let p = DcqcnParams::profile(Profile::Paper, 40.0);
    let mut fx = RpFixed::new(&p);
    let mut fl = RpFloat::new(&p);
    let mut rng = Rng::new(5, 5);
    let mut t: u64 = 0;
    for _ in 0..5000 {
        t += rng.next_u64() % 20_000;
        if rng.next_u64() % 8 == 0 {
            // A CNP at a cycle boundary (6.4 ns = 32/5 ns).
            let tc = t / 32 * 32;
            fx.on_cnp(tc);
            fl.on_cnp(tc);
        } else {
            let b = 1000 + rng.next_u64() % 100_000;
            fx.on_sent(b, t);
            fl.on_sent(b, t);
        }
        let (a, b) = (fx.state(), fl.state());
        assert!(
            (a.rc_bps - b.rc_bps).abs() / 40e9 <= RATE_BOUND,
            "{a:?} {b:?}"
        );
    }
}
