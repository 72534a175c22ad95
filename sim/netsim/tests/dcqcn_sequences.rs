//! The deterministic sequences of dcqcn.md, in fixed and in floating point, and the
//! notification point's one-CNP-per-N rule (also as a property).

use proptest::prelude::*;
use rnic_netsim::dcqcn::np::{NotificationPoint, NpAction};
use rnic_netsim::dcqcn::rp_fixed::RpFixed;
use rnic_netsim::dcqcn::rp_float::RpFloat;
use rnic_netsim::dcqcn::{ALPHA_BITS, DcqcnParams, Profile, RateControl, Stage};

const LINE_GBPS: f64 = 100.0;

fn paper() -> DcqcnParams {
    DcqcnParams::profile(Profile::Paper, LINE_GBPS)
}

/// RC and RT as percent of line rate.
fn pct(rp: &dyn RateControl) -> (f64, f64) {
    let s = rp.state();
    (s.rc_bps / 1e9, s.rt_bps / 1e9)
}

/// dcqcn.md: "After the first CNP: RT = 100, RC = 50. Successive timer events: RC = 75, 87.5,
/// 93.75, 96.875, 98.4375 (fast recovery); then RT = 100 + R_AI capped at line rate."
trait TimerEvent {
    fn timer(&mut self) -> Stage;
}
impl TimerEvent for RpFixed {
    fn timer(&mut self) -> Stage {
        self.timer_event()
    }
}
impl TimerEvent for RpFloat {
    fn timer(&mut self) -> Stage {
        self.timer_event()
    }
}

fn check_doc_sequence<R: RateControl + TimerEvent>(rp: &mut R, tol: f64) {
    assert_eq!(pct(rp), (100.0, 100.0));
    rp.on_cnp(0);
    let (rc, rt) = pct(rp);
    assert!(
        (rt - 100.0).abs() <= tol && (rc - 50.0).abs() <= tol,
        "rc {rc} rt {rt}"
    );
    for want in [75.0, 87.5, 93.75, 96.875, 98.4375] {
        assert_eq!(rp.timer(), Stage::FastRecovery);
        let (rc, rt) = pct(rp);
        assert!((rc - want).abs() <= tol, "rc {rc} want {want}");
        assert!((rt - 100.0).abs() <= tol);
    }
    assert_eq!(rp.timer(), Stage::Additive);
    let (rc, rt) = pct(rp);
    // RT = min(100, 100 + 0.04) = 100; RC = (100 + 98.4375) / 2.
    assert!(
        (rt - 100.0).abs() <= tol && (rc - 99.21875).abs() <= tol,
        "rc {rc} rt {rt}"
    );
}

#[test]
fn doc_sequence_fixed_point_exact() {
    let mut rp = RpFixed::new(&paper());
    check_doc_sequence(&mut rp, 0.0);
}

#[test]
fn doc_sequence_floating_point_exact() {
    let mut rp = RpFloat::new(&paper());
    check_doc_sequence(&mut rp, 1e-9);
}

/// The same sequence driven by time alone: the increase timer fires every T = 55 us after the
/// CNP (in fixed point, 55 us is 8594 cycles of 6.4 ns = 55001.6 ns).
#[test]
fn doc_sequence_driven_by_the_timer() {
    let p = paper();
    let mut fixed = RpFixed::new(&p);
    let mut float = RpFloat::new(&p);
    let t0 = 1_000_000; // 1 ms, a multiple of the 6.4 ns clock (156250 cycles)
    fixed.on_cnp(t0);
    float.on_cnp(t0);
    for (k, want) in [75.0, 87.5, 93.75, 96.875, 98.4375].into_iter().enumerate() {
        let k = k as u64 + 1;
        let just_before = t0 + k * 55_000 - 1;
        let fixed_due = t0 + (k * 8594 * 64).div_ceil(10);
        fixed.advance(fixed_due - 1);
        float.advance(just_before);
        assert!(pct(&fixed).0 < want, "fixed fired early at event {k}");
        assert!(pct(&float).0 < want, "float fired early at event {k}");
        fixed.advance(fixed_due);
        float.advance(t0 + k * 55_000);
        assert_eq!(pct(&fixed).0, want);
        assert!((pct(&float).0 - want).abs() < 1e-9);
    }
}

/// A hand-worked sequence through additive and hyper increase (line 100 Gb/s, F = 5,
/// R_AI = 0.04, R_HAI = 10 Gb/s): two CNPs (alpha stays 1), six timer events, eight byte
/// events. Values worked by hand in Gb/s.
#[test]
fn additive_then_hyper_increase_hand_worked() {
    let p = paper();
    let want: [(Stage, f64, f64); 14] = [
        (Stage::FastRecovery, 37.5, 50.0),
        (Stage::FastRecovery, 43.75, 50.0),
        (Stage::FastRecovery, 46.875, 50.0),
        (Stage::FastRecovery, 48.4375, 50.0),
        (Stage::FastRecovery, 49.21875, 50.0),
        (Stage::Additive, 49.629375, 50.04),
        (Stage::Additive, 49.8546875, 50.08),
        (Stage::Additive, 49.98734375, 50.12),
        (Stage::Additive, 50.073671875, 50.16),
        (Stage::Additive, 50.1368359375, 50.20),
        (Stage::Additive, 50.18841796875, 50.24),
        // BC = 5, T = 6: hyper with i = 1, then 2, then 3 (RT capped at 100).
        (Stage::Hyper, 55.214208984375, 60.24),
        (Stage::Hyper, 67.7271044921875, 80.24),
        (Stage::Hyper, 83.86355224609375, 100.0),
    ];
    let mut fl = RpFloat::new(&p);
    let mut fx = RpFixed::new(&p);
    fl.cnp(0.0);
    fl.cnp(1000.0);
    fx.cnp(0);
    fx.cnp(1000);
    assert_eq!(pct(&fl), (25.0, 50.0));
    assert_eq!(pct(&fx), (25.0, 50.0));
    for (i, (stage, rc, rt)) in want.into_iter().enumerate() {
        let (sl, sx) = if i < 6 {
            (fl.timer_event(), fx.timer_event())
        } else {
            (fl.byte_event(), fx.byte_event())
        };
        assert_eq!((sl, sx), (stage, stage), "event {i}");
        let (frc, frt) = pct(&fl);
        assert!(
            (frc - rc).abs() < 1e-9 && (frt - rt).abs() < 1e-9,
            "float event {i}: {frc} {frt}"
        );
        // Fixed point: R_AI rounds to 419 units (39.959 Mb/s), so RT may lag by 0.041 Mb/s
        // per additive step, plus one LSB (95 kb/s at 100 Gb/s) per operation.
        let (xrc, xrt) = pct(&fx);
        assert!(
            (xrc - rc).abs() < 2e-3 && (xrt - rt).abs() < 2e-3,
            "fixed event {i}: {xrc} {xrt}"
        );
    }
}

/// Alpha after k quiet periods is (1 - g)^k: exactly (to rounding) in floating point, and
/// within the fixed-point bound 2^-16 / g, for both profiles' g.
#[test]
fn alpha_decays_geometrically() {
    for profile in [Profile::Paper, Profile::Nvidia] {
        let p = DcqcnParams::profile(profile, LINE_GBPS);
        let bound = 1.0 / f64::from(1u32 << ALPHA_BITS) / p.g;
        let mut fl = RpFloat::new(&p);
        let mut fx = RpFixed::new(&p);
        fl.cnp(0.0);
        fx.cnp(0);
        // alpha = 1 before the CNP, so after it (1 - g) + g = 1.
        assert_eq!(fl.alpha, 1.0);
        let mut k = 0;
        for target in [1, 10, 100, 1000, 3000] {
            while k < target {
                fl.alpha_event();
                fx.alpha_event();
                k += 1;
            }
            let want = (1.0 - p.g).powi(k);
            let fxa = f64::from(fx.alpha) / f64::from(1u32 << ALPHA_BITS);
            assert!((fl.alpha - want).abs() < 1e-12, "{profile} k={k}");
            assert!(
                (fxa - want).abs() < bound,
                "{profile} k={k}: {fxa} vs {want}, bound {bound}"
            );
        }
    }
}

/// Alpha decay by time: K = 55 us; after 10 K without a CNP alpha = (1 - 1/256)^10.
#[test]
fn alpha_decay_by_the_alpha_timer() {
    let p = paper();
    let mut fl = RpFloat::new(&p);
    fl.on_cnp(0);
    fl.advance(10 * 55_000);
    assert!((fl.alpha - (1.0f64 - 1.0 / 256.0).powi(10)).abs() < 1e-12);
}

/// The first CNP cuts to half even after a long quiet time (the limiter is idle until then),
/// and with `first_cnp_rate_mbps` it sets that rate.
#[test]
fn first_cnp_behaviour() {
    let p = paper();
    let mut fx = RpFixed::new(&p);
    fx.advance(50_000_000);
    fx.on_cnp(50_000_000);
    assert_eq!(pct(&fx).0, 50.0);
    let mut q = paper();
    q.first_cnp_rate_mbps = 10_000.0;
    let mut fx = RpFixed::new(&q);
    let mut fl = RpFloat::new(&q);
    fx.on_cnp(0);
    fl.on_cnp(0);
    assert!((pct(&fx).0 - 10.0).abs() < 1e-4 && (pct(&fl).0 - 10.0).abs() < 1e-9);
}

/// NVIDIA profile: cuts closer than 4 us are ignored; RT is kept at a cut (clamp 0); the
/// limiter is released at line rate and the next CNP halves again.
#[test]
fn nvidia_cut_spacing_and_release() {
    let p = DcqcnParams::profile(Profile::Nvidia, LINE_GBPS);
    let mut fx = RpFixed::new(&p);
    fx.on_cnp(0);
    assert_eq!(pct(&fx), (50.0, 100.0));
    fx.on_cnp(3_000);
    assert_eq!(fx.state().ignored_cnps, 1);
    assert_eq!(pct(&fx).0, 50.0);
    fx.on_cnp(4_000);
    assert!(pct(&fx).0 < 50.0);
    assert_eq!(pct(&fx).1, 100.0, "RT kept at a cut");
    // F = 1: one fast recovery step, then additive; RC climbs towards RT = line.
    for _ in 0..40 {
        fx.timer_event();
    }
    assert!(!fx.active(), "released at line rate: {:?}", fx.state());
    assert_eq!(pct(&fx), (100.0, 100.0));
    fx.on_cnp(10_000_000);
    assert_eq!(pct(&fx).0, 50.0);
}

/// Drives a notification point with CE marks at `times` (ns, sorted) for `qps`, executing
/// deferred CNPs at their due times; returns the CNP times per QP.
fn drive_np(np: &mut NotificationPoint, marks: &[(u64, u32)]) -> Vec<(u64, u32)> {
    let mut pending: Vec<(u64, u32)> = Vec::new();
    let mut sent = Vec::new();
    let fire_due = |np: &mut NotificationPoint,
                    pending: &mut Vec<(u64, u32)>,
                    until: u64,
                    sent: &mut Vec<(u64, u32)>| {
        pending.sort();
        while let Some(&(t, q)) = pending.first() {
            if t > until {
                break;
            }
            pending.remove(0);
            if np.on_window_end(q, t) {
                sent.push((t, q));
            }
        }
    };
    for &(t, q) in marks {
        fire_due(np, &mut pending, t, &mut sent);
        match np.on_ce(q, t) {
            NpAction::Send => sent.push((t, q)),
            NpAction::Defer { at_ns } => pending.push((at_ns, q)),
            NpAction::Pending => {}
        }
    }
    fire_due(np, &mut pending, u64::MAX, &mut sent);
    sent
}

fn check_np(
    marks: &[(u64, u32)],
    sent: &[(u64, u32)],
    n_ns: u64,
    clk_ns: u64,
) -> Result<(), String> {
    for q in 0..4 {
        let times: Vec<u64> = sent.iter().filter(|s| s.1 == q).map(|s| s.0).collect();
        for w in times.windows(2) {
            // N is a whole number of cycles within one cycle of N; times are floored to cycles.
            if w[1] - w[0] + 2 * clk_ns < n_ns {
                return Err(format!(
                    "qp {q}: CNPs at {} and {} ns, closer than {n_ns}",
                    w[0], w[1]
                ));
            }
        }
        for &(t, _) in marks.iter().filter(|m| m.1 == q) {
            if !times.iter().any(|&c| c >= t && c <= t + n_ns + 2 * clk_ns) {
                return Err(format!("qp {q}: CE at {t} ns not answered within N"));
            }
        }
    }
    Ok(())
}

/// Hand-worked: N = 50 us; marks at 0, 10, 20, 60, 120 us on one QP -> CNPs at 0, 50 (one,
/// deferred from the marks at 10 and 20), 100 (the mark at 60 falls in the window that began
/// at 50) and 150 us (the mark at 120 in the window that began at 100).
#[test]
fn np_hand_worked() {
    let p = paper();
    let mut np = NotificationPoint::new(&p);
    let marks: Vec<(u64, u32)> = [0, 10_000, 20_000, 60_000, 120_000]
        .iter()
        .map(|&t| (t, 0))
        .collect();
    let sent = drive_np(&mut np, &marks);
    let times: Vec<u64> = sent.iter().map(|s| s.0 / 100).collect();
    // 50 us = 7813 cycles (7812.5 rounded) = 50003.2 ns; deferred times come out in whole ns.
    assert_eq!(times, vec![0, 500, 1000, 1500]);
    assert_eq!(np.cnps, 4);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn np_never_more_than_one_cnp_per_interval(
        gaps in proptest::collection::vec((0u64..30_000, 0u32..4), 1..200),
        nvidia in any::<bool>(),
    ) {
        let p = DcqcnParams::profile(if nvidia { Profile::Nvidia } else { Profile::Paper }, 40.0);
        let n_ns = (p.cnp_interval_us * 1000.0) as u64;
        let mut t = 0;
        let marks: Vec<(u64, u32)> = gaps.iter().map(|&(g, q)| { t += g; (t, q) }).collect();
        let mut np = NotificationPoint::new(&p);
        let sent = drive_np(&mut np, &marks);
        prop_assert!(sent.len() <= marks.len());
        if let Err(e) = check_np(&marks, &sent, n_ns, 7) {
            prop_assert!(false, "{}", e);
        }
    }
}
