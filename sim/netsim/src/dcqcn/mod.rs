//! DCQCN reference model (Zhu et al., SIGCOMM 2015; facts in `shared/docs/dcqcn.md`).
//!
//! Three parts: the notification point ([`np`]: per-QP CNP generation at the receiver, CNP
//! frames), and the reaction point (per-QP rate control at the sender) twice: [`rp_fixed`] in
//! the fixed-point arithmetic the hardware will use, and [`rp_float`] in `f64` as the
//! reference the fixed-point model is tested against. Both implement [`RateControl`].
//!
//! # Fixed-point formats (the hardware's registers)
//! | quantity | format | one unit |
//! |---|---|---|
//! | rates RC, RT, R_AI, R_HAI, min rate | unsigned, line rate = 2^20 ([`RATE_ONE`]) | line rate / 2^20 (95.4 kb/s at 100 Gb/s) |
//! | alpha, g, largest cut | unsigned Q0.16, 1.0 = 2^16 ([`ALPHA_ONE`]) | 2^-16 |
//! | timers (K, T_inc, N, cut spacing) | cycles of the core clock, `clk_ps` (default 6400 ps: 156.25 MHz) | 1 cycle |
//! | byte counter, B | bytes (frame bytes handed to the MAC, FCS excluded) | 1 byte |
//!
//! Per event the fixed-point model uses only adds, subtracts, shifts, compares and multiplies
//! (RC * alpha, alpha * g, i * R_HAI): no division. Conversion from the parameters below
//! (Mb/s, microseconds, fractions) to registers is done once, in software, by
//! [`RpRegs::from_params`], and rounds to nearest.
//!
//! Alpha has 16 fraction bits, not the 10 of NVIDIA's `rpg_gd` description: with 10 bits and
//! g = 1/256 the decay alpha -= alpha * g truncates to a step of one LSB once alpha < 256/1024,
//! so alpha decays linearly instead of geometrically and the error bound below (2^-b / g) is
//! 0.25, which is useless. With 16 bits it is 2^-8.
//!
//! # Tracking bound (tested in `tests/dcqcn_tracking.rs`)
//! Each fixed-point alpha step adds an error in [0, 1 LSB) and multiplies the previous error by
//! (1 - g), so |alpha_fixed - alpha_float| < 2^-16 / g for any sequence of events (2^-8 for
//! g = 1/256). Rates: every rate operation adds at most one LSB (2^-20 of line rate) plus
//! RC * |alpha error| / 2 at a cut, and fast recovery halves any earlier error; the test drives
//! both models with the same random event sequences and checks |RC_fixed - RC_float| <= 2^-7
//! of line rate (and the alpha bound above) after every event.
//!
//! # Choices where implementations differ (all are parameters)
//! - Cut: `RT = RC` (`clamp_target = 1`, paper; NVIDIA's `rp_clamp_tgt_rate` defaults to 0,
//!   so the nvidia profile keeps RT, except at a first CNP where RT = RC = line), then `RC = max(min_rate, RC * (1 -
//!   alpha/2))` using alpha *before* its update, then `alpha = (1-g) alpha + g` (paper order).
//!   The cut is limited to `max_cut` of RC (NVIDIA `rpg_min_dec_fac`, 50%).
//! - First CNP: the reaction point is idle (no timers, alpha held at `alpha_init` = 1) until the
//!   first CNP, which therefore halves the rate (doc's check: RT = line, RC = line/2). If
//!   `first_cnp_rate_mbps` is non-zero, the first CNP sets RC to that rate instead (mlx5
//!   `rate_to_set_on_first_cnp`).
//! - Release at line rate (`release_at_line`, NVIDIA profile): when an increase brings RC and
//!   RT to line rate, the limiter goes idle again and the next CNP is a first CNP.
//! - Cut spacing (`min_dec_us`, NVIDIA 4 us): a CNP arriving sooner than this after the last
//!   cut is ignored entirely (counted), alpha included.
//! - Stage counting: an increase event decides its stage from (T, BC) *before* incrementing
//!   its own counter, so with F = 5 the first five events after a cut are fast recovery
//!   (75, 87.5, 93.75, 96.875, 98.4375 % after a halving) and the sixth is additive.
//! - Hyper increase adds `i * R_HAI` with `i = min(T, BC) - F + 1`.
//! - Fast recovery `RC = (RT + RC) / 2` rounds up in fixed point so RC can reach RT.
//! - Alpha decay runs every K while the limiter is active; the alpha timer and the increase
//!   timer restart at every accepted CNP; the byte counter carries its excess over B.
//! - The notification point sends at most one CNP per N per QP; a CE packet inside the window
//!   makes it send one CNP when the window ends (NVIDIA's interval is per port; here per QP).

pub mod events;
pub mod np;
pub mod rp_fixed;
pub mod rp_float;

use std::fmt;

/// Line rate in the fixed-point rate unit: rates are fractions of line rate with 20 bits.
pub const RATE_BITS: u32 = 20;
/// The fixed-point value of line rate.
pub const RATE_ONE: u32 = 1 << RATE_BITS;
/// Fraction bits of alpha, g and the largest cut.
pub const ALPHA_BITS: u32 = 16;
/// The fixed-point value of 1.0 for alpha.
pub const ALPHA_ONE: u32 = 1 << ALPHA_BITS;

/// A named parameter set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Profile {
    /// The paper / htsim column of the table (the default).
    #[default]
    Paper,
    /// NVIDIA firmware defaults.
    Nvidia,
}

impl Profile {
    /// All profiles with their names.
    pub const ALL: [(Profile, &'static str); 2] =
        [(Profile::Paper, "paper"), (Profile::Nvidia, "nvidia")];

    /// The profile called `name`.
    pub fn from_name(name: &str) -> Option<Profile> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(p, _)| *p)
    }

    /// The profile's name.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Paper => "paper",
            Profile::Nvidia => "nvidia",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Every DCQCN parameter in natural units. The fixed-point model converts them to registers
/// ([`RpRegs`]); the floating-point model uses them as they are.
#[derive(Clone, Debug, PartialEq)]
pub struct DcqcnParams {
    /// Line rate of the port in Mb/s (the rate cap).
    pub line_mbps: f64,
    /// N: minimum interval between CNPs for one QP, microseconds.
    pub cnp_interval_us: f64,
    /// K: alpha decay period, microseconds.
    pub alpha_timer_us: f64,
    /// g: alpha gain, a fraction.
    pub g: f64,
    /// T_inc: rate increase timer period, microseconds.
    pub inc_timer_us: f64,
    /// B: byte counter period in bytes (0 disables the byte counter).
    pub byte_reset: u64,
    /// F: fast recovery threshold (stages).
    pub f: u32,
    /// R_AI: additive increase step, Mb/s.
    pub rai_mbps: f64,
    /// R_HAI: hyper increase step, Mb/s.
    pub rhai_mbps: f64,
    /// Minimum rate, Mb/s.
    pub min_rate_mbps: f64,
    /// Alpha before the first CNP (and after a release at line rate).
    pub alpha_init: f64,
    /// Largest single cut as a fraction of RC.
    pub max_cut: f64,
    /// Minimum spacing between cuts, microseconds (0 = none).
    pub min_dec_us: f64,
    /// RT = RC on every cut (true) or RT left alone (false).
    pub clamp_target: bool,
    /// Go idle (first-CNP state) when RC and RT reach line rate.
    pub release_at_line: bool,
    /// Rate set by a first CNP, Mb/s (0 = cut by alpha as any CNP).
    pub first_cnp_rate_mbps: f64,
    /// Core clock period of the fixed-point model, picoseconds.
    pub clk_ps: u64,
}

impl DcqcnParams {
    /// The parameters of `profile` for a port of `line_gbps`.
    pub fn profile(profile: Profile, line_gbps: f64) -> Self {
        let line_mbps = line_gbps * 1000.0;
        match profile {
            Profile::Paper => DcqcnParams {
                line_mbps,
                cnp_interval_us: 50.0,
                alpha_timer_us: 55.0,
                g: 1.0 / 256.0,
                inc_timer_us: 55.0,
                byte_reset: 10_000_000,
                f: 5,
                rai_mbps: 40.0,
                // htsim: R_HAI = link / 10.
                rhai_mbps: line_mbps / 10.0,
                // The paper gives none; ns3-rdma's 100 Mb/s.
                min_rate_mbps: 100.0,
                alpha_init: 1.0,
                max_cut: 0.5,
                min_dec_us: 0.0,
                clamp_target: true,
                release_at_line: false,
                first_cnp_rate_mbps: 0.0,
                clk_ps: 6400,
            },
            Profile::Nvidia => DcqcnParams {
                line_mbps,
                cnp_interval_us: 4.0,
                alpha_timer_us: 1.0,
                // dce_tcp_g = 1019 of 1024 is the decay term (1 - g).
                g: 5.0 / 1024.0,
                inc_timer_us: 300.0,
                byte_reset: 32767 * 64,
                f: 1,
                rai_mbps: 5.0,
                rhai_mbps: 50.0,
                min_rate_mbps: 1.0,
                alpha_init: 1.0,
                max_cut: 0.5,
                min_dec_us: 4.0,
                // mlx5 `rp_clamp_tgt_rate` defaults to 0: RT keeps its value at a cut.
                clamp_target: false,
                release_at_line: true,
                first_cnp_rate_mbps: 0.0,
                clk_ps: 6400,
            },
        }
    }

    /// Checks ranges; the message names the parameter.
    pub fn validate(&self) -> Result<(), String> {
        let pos = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(format!("{name} must be a positive number, got {v}"))
            }
        };
        let nonneg = |name: &str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(format!("{name} must be zero or positive, got {v}"))
            }
        };
        let frac = |name: &str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(format!("{name} must be within 0..1, got {v}"))
            }
        };
        pos("line rate", self.line_mbps)?;
        nonneg("cnp_interval_us", self.cnp_interval_us)?;
        pos("alpha_timer_us", self.alpha_timer_us)?;
        pos("inc_timer_us", self.inc_timer_us)?;
        frac("g", self.g)?;
        frac("alpha_init", self.alpha_init)?;
        frac("max_cut", self.max_cut)?;
        nonneg("rai_mbps", self.rai_mbps)?;
        nonneg("rhai_mbps", self.rhai_mbps)?;
        nonneg("min_rate_mbps", self.min_rate_mbps)?;
        nonneg("min_dec_us", self.min_dec_us)?;
        nonneg("first_cnp_rate_mbps", self.first_cnp_rate_mbps)?;
        if self.min_rate_mbps > self.line_mbps {
            return Err(format!(
                "min_rate_mbps {} exceeds the line rate {} Mb/s",
                self.min_rate_mbps, self.line_mbps
            ));
        }
        if self.f == 0 || self.f > 1000 {
            return Err(format!("f must be within 1..1000, got {}", self.f));
        }
        if self.clk_ps == 0 || self.clk_ps > 1_000_000 {
            return Err(format!(
                "clk_ps must be within 1..1000000, got {}",
                self.clk_ps
            ));
        }
        if self.byte_reset > u64::from(u32::MAX) {
            return Err(format!(
                "byte_reset {} does not fit 32 bits",
                self.byte_reset
            ));
        }
        Ok(())
    }

    /// Nanoseconds to clock cycles (floor), as the fixed-point model counts time.
    pub fn ns_to_cycles(&self, ns: u64) -> u64 {
        (u128::from(ns) * 1000 / u128::from(self.clk_ps)) as u64
    }

    /// Start of a clock cycle in nanoseconds, rounded up.
    pub fn cycles_to_ns(&self, cycles: u64) -> u64 {
        (u128::from(cycles) * u128::from(self.clk_ps)).div_ceil(1000) as u64
    }

    /// Microseconds to whole cycles, rounded to nearest.
    pub fn us_to_cycles(&self, us: f64) -> u64 {
        (us * 1e6 / self.clk_ps as f64).round() as u64
    }
}

/// The register values of one reaction point, derived from [`DcqcnParams`] (rounded to
/// nearest). Units in the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RpRegs {
    /// Alpha gain g, Q0.16.
    pub g: u32,
    /// Alpha at start and after a release, Q0.16.
    pub alpha_init: u32,
    /// Largest cut as a fraction of RC, Q0.16.
    pub max_cut: u32,
    /// K in cycles.
    pub alpha_timer: u64,
    /// T_inc in cycles.
    pub inc_timer: u64,
    /// Minimum spacing between cuts in cycles.
    pub min_dec: u64,
    /// B in bytes (0 = off).
    pub byte_reset: u32,
    /// F.
    pub f: u32,
    /// R_AI in rate units.
    pub rai: u32,
    /// R_HAI in rate units.
    pub rhai: u32,
    /// Minimum rate in rate units.
    pub min_rate: u32,
    /// First-CNP rate in rate units (0 = cut by alpha).
    pub first_cnp_rate: u32,
    /// RT = RC on a cut.
    pub clamp_target: bool,
    /// Go idle at line rate.
    pub release_at_line: bool,
}

/// A rate in Mb/s as a fixed-point rate register, rounded to nearest, capped at line rate.
pub fn mbps_to_rate(mbps: f64, line_mbps: f64) -> u32 {
    let v = (mbps / line_mbps * f64::from(RATE_ONE)).round();
    v.clamp(0.0, f64::from(RATE_ONE)) as u32
}

/// A fraction as Q0.16, rounded to nearest.
pub fn frac_to_q16(x: f64) -> u32 {
    (x * f64::from(ALPHA_ONE))
        .round()
        .clamp(0.0, f64::from(ALPHA_ONE)) as u32
}

impl RpRegs {
    /// Registers for `p`.
    pub fn from_params(p: &DcqcnParams) -> Self {
        RpRegs {
            g: frac_to_q16(p.g),
            alpha_init: frac_to_q16(p.alpha_init),
            max_cut: frac_to_q16(p.max_cut),
            alpha_timer: p.us_to_cycles(p.alpha_timer_us).max(1),
            inc_timer: p.us_to_cycles(p.inc_timer_us).max(1),
            min_dec: p.us_to_cycles(p.min_dec_us),
            byte_reset: p.byte_reset as u32,
            f: p.f,
            rai: mbps_to_rate(p.rai_mbps, p.line_mbps),
            rhai: mbps_to_rate(p.rhai_mbps, p.line_mbps),
            min_rate: mbps_to_rate(p.min_rate_mbps, p.line_mbps),
            first_cnp_rate: mbps_to_rate(p.first_cnp_rate_mbps, p.line_mbps),
            clamp_target: p.clamp_target,
            release_at_line: p.release_at_line,
        }
    }
}

/// Which increase rule an increase event applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    FastRecovery,
    Additive,
    Hyper,
}

/// A snapshot of one reaction point in natural units, for CSV output and comparisons.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RpState {
    /// Current rate RC, b/s.
    pub rc_bps: f64,
    /// Target rate RT, b/s.
    pub rt_bps: f64,
    /// Alpha, 0..1.
    pub alpha: f64,
    /// Timer stage T.
    pub t_stage: u32,
    /// Byte stage BC.
    pub bc_stage: u32,
    /// Bytes counted towards the next byte event.
    pub byte_count: u64,
    /// Whether the limiter is engaged (false before the first CNP or after a release).
    pub active: bool,
    /// CNPs that caused a cut.
    pub cuts: u64,
    /// CNPs ignored because of the cut spacing.
    pub ignored_cnps: u64,
}

impl RpState {
    /// CSV header matching [`RpState::csv_row`].
    pub const CSV_HEADER: &'static str =
        "rc_mbps,rt_mbps,alpha,t_stage,bc_stage,byte_count,active,cuts,ignored_cnps";

    /// One CSV row.
    pub fn csv_row(&self) -> String {
        format!(
            "{:.6},{:.6},{:.8},{},{},{},{},{},{}",
            self.rc_bps / 1e6,
            self.rt_bps / 1e6,
            self.alpha,
            self.t_stage,
            self.bc_stage,
            self.byte_count,
            u8::from(self.active),
            self.cuts,
            self.ignored_cnps
        )
    }
}

/// A reaction point driven by time: the interface a sender (or a test) uses.
///
/// Time is in nanoseconds; the fixed-point model converts it to cycles of its clock. Callers
/// must call [`RateControl::advance`] with non-decreasing times; `on_cnp` and `on_sent` advance
/// first, so timer events due before the call fire before the CNP or the bytes count.
pub trait RateControl {
    /// A CNP for this QP arrived.
    fn on_cnp(&mut self, now_ns: u64);
    /// `bytes` were sent (advances the byte counter).
    fn on_sent(&mut self, bytes: u64, now_ns: u64);
    /// Fires every timer event due at or before `now_ns`.
    fn advance(&mut self, now_ns: u64);
    /// The next time a timer event is due, if any.
    fn next_deadline_ns(&self) -> Option<u64>;
    /// The current rate RC in b/s.
    fn rate_bps(&self) -> f64;
    /// The whole state.
    fn state(&self) -> RpState;
    /// Nanoseconds to send `bits` at the current rate, in picoseconds (pacing).
    fn tx_time_ps(&self, bits: u64) -> u64;
}
