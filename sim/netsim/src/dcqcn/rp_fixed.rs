//! The reaction point in the hardware's fixed-point arithmetic (formats in the [module
//! docs](super)): rates as fractions of line rate with 20 bits, alpha and g as Q0.16, timers in
//! clock cycles, the byte counter in bytes. Every per-event operation is an add, subtract,
//! shift, compare or multiply.

use super::{
    ALPHA_BITS, ALPHA_ONE, DcqcnParams, RATE_BITS, RATE_ONE, RateControl, RpRegs, RpState, Stage,
};

/// One QP's reaction point in fixed point.
#[derive(Clone, Debug)]
pub struct RpFixed {
    regs: RpRegs,
    line_bps: u64,
    clk_ps: u64,
    /// Current rate RC (line rate = 2^20).
    pub rc: u32,
    /// Target rate RT (line rate = 2^20).
    pub rt: u32,
    /// Alpha, Q0.16.
    pub alpha: u32,
    /// Timer stage T.
    pub t_stage: u32,
    /// Byte stage BC.
    pub bc_stage: u32,
    /// Bytes counted towards the next byte event.
    pub byte_count: u64,
    active: bool,
    next_inc: u64,
    next_alpha: u64,
    last_cut: Option<u64>,
    cuts: u64,
    ignored: u64,
}

impl RpFixed {
    /// A reaction point at line rate, idle until its first CNP.
    pub fn new(p: &DcqcnParams) -> Self {
        Self::with_regs(
            RpRegs::from_params(p),
            (p.line_mbps * 1e6).round() as u64,
            p.clk_ps,
        )
    }

    /// A reaction point from register values, for a line of `line_bps` and a clock of
    /// `clk_ps`.
    pub fn with_regs(regs: RpRegs, line_bps: u64, clk_ps: u64) -> Self {
        RpFixed {
            regs,
            line_bps: line_bps.max(1),
            clk_ps: clk_ps.max(1),
            rc: RATE_ONE,
            rt: RATE_ONE,
            alpha: regs.alpha_init,
            t_stage: 0,
            bc_stage: 0,
            byte_count: 0,
            active: false,
            next_inc: 0,
            next_alpha: 0,
            last_cut: None,
            cuts: 0,
            ignored: 0,
        }
    }

    /// The registers in use.
    pub fn regs(&self) -> &RpRegs {
        &self.regs
    }

    /// Whether the limiter is engaged.
    pub fn active(&self) -> bool {
        self.active
    }

    /// A CNP at clock cycle `now`: the cut (module docs for the order). Returns false when the
    /// CNP was ignored because of the cut spacing.
    pub fn cnp(&mut self, now: u64) -> bool {
        let r = self.regs;
        if self.active
            && r.min_dec > 0
            && self
                .last_cut
                .is_some_and(|l| now.saturating_sub(l) < r.min_dec)
        {
            self.ignored += 1;
            return false;
        }
        let first = !self.active;
        if first {
            self.active = true;
            self.alpha = r.alpha_init;
        }
        if r.clamp_target || first {
            self.rt = self.rc;
        }
        if first && r.first_cnp_rate > 0 {
            self.rc = r.first_cnp_rate.min(self.rc).max(r.min_rate);
        } else {
            let rc = u64::from(self.rc);
            let cut = (rc * u64::from(self.alpha)) >> (ALPHA_BITS + 1);
            let limit = (rc * u64::from(r.max_cut)) >> ALPHA_BITS;
            let new = rc - cut.min(limit);
            self.rc = (new as u32).max(r.min_rate);
        }
        self.alpha = self.alpha - mul_q16(self.alpha, r.g) + r.g;
        self.t_stage = 0;
        self.bc_stage = 0;
        self.byte_count = 0;
        self.next_inc = now + r.inc_timer;
        self.next_alpha = now + r.alpha_timer;
        self.last_cut = Some(now);
        self.cuts += 1;
        true
    }

    /// One alpha-timer expiry: alpha = (1 - g) alpha.
    pub fn alpha_event(&mut self) {
        self.alpha -= mul_q16(self.alpha, self.regs.g);
    }

    /// One increase-timer expiry.
    pub fn timer_event(&mut self) -> Stage {
        let s = self.increase();
        self.t_stage = self.t_stage.saturating_add(1);
        self.check_release();
        s
    }

    /// One byte-counter expiry.
    pub fn byte_event(&mut self) -> Stage {
        let s = self.increase();
        self.bc_stage = self.bc_stage.saturating_add(1);
        self.check_release();
        s
    }

    fn increase(&mut self) -> Stage {
        let r = self.regs;
        let hi = self.t_stage.max(self.bc_stage);
        let lo = self.t_stage.min(self.bc_stage);
        let stage = if hi < r.f {
            Stage::FastRecovery
        } else if lo < r.f {
            Stage::Additive
        } else {
            Stage::Hyper
        };
        let one = u64::from(RATE_ONE);
        match stage {
            Stage::FastRecovery => {}
            Stage::Additive => {
                self.rt = (u64::from(self.rt) + u64::from(r.rai)).min(one) as u32;
            }
            Stage::Hyper => {
                let i = u64::from(lo - r.f + 1);
                self.rt = (u64::from(self.rt) + i * u64::from(r.rhai)).min(one) as u32;
            }
        }
        // Rounds up so that RC reaches RT.
        self.rc = ((u64::from(self.rt) + u64::from(self.rc) + 1) >> 1).min(one) as u32;
        stage
    }

    fn check_release(&mut self) {
        if self.regs.release_at_line && self.rc == RATE_ONE && self.rt == RATE_ONE {
            self.active = false;
            self.alpha = self.regs.alpha_init;
            self.t_stage = 0;
            self.bc_stage = 0;
            self.byte_count = 0;
        }
    }

    /// Fires the timer events due at or before clock cycle `now`, earliest first (alpha before
    /// increase when both are due in the same cycle).
    pub fn advance_cycles(&mut self, now: u64) {
        while self.active {
            let next = self.next_inc.min(self.next_alpha);
            if next > now {
                break;
            }
            if self.next_alpha <= self.next_inc {
                self.alpha_event();
                self.next_alpha += self.regs.alpha_timer;
            } else {
                self.timer_event();
                self.next_inc += self.regs.inc_timer;
            }
        }
    }

    /// Counts `bytes` sent; fires a byte event for every B bytes.
    pub fn sent(&mut self, bytes: u64) {
        let b = u64::from(self.regs.byte_reset);
        if !self.active || b == 0 {
            return;
        }
        self.byte_count += bytes;
        while self.active && self.byte_count >= b {
            self.byte_count -= b;
            self.byte_event();
        }
    }

    fn ns_to_cycles(&self, ns: u64) -> u64 {
        (u128::from(ns) * 1000 / u128::from(self.clk_ps)) as u64
    }
}

/// `x * q` with `q` in Q0.16 (floor).
fn mul_q16(x: u32, q: u32) -> u32 {
    ((u64::from(x) * u64::from(q)) >> ALPHA_BITS) as u32
}

impl RateControl for RpFixed {
    fn on_cnp(&mut self, now_ns: u64) {
        let c = self.ns_to_cycles(now_ns);
        self.advance_cycles(c);
        self.cnp(c);
    }

    fn on_sent(&mut self, bytes: u64, now_ns: u64) {
        self.advance(now_ns);
        self.sent(bytes);
    }

    fn advance(&mut self, now_ns: u64) {
        let c = self.ns_to_cycles(now_ns);
        self.advance_cycles(c);
    }

    fn next_deadline_ns(&self) -> Option<u64> {
        self.active.then(|| {
            let c = self.next_inc.min(self.next_alpha);
            (u128::from(c) * u128::from(self.clk_ps)).div_ceil(1000) as u64
        })
    }

    fn rate_bps(&self) -> f64 {
        self.line_bps as f64 * f64::from(self.rc) / f64::from(RATE_ONE)
    }

    fn state(&self) -> RpState {
        let line = self.line_bps as f64;
        RpState {
            rc_bps: line * f64::from(self.rc) / f64::from(RATE_ONE),
            rt_bps: line * f64::from(self.rt) / f64::from(RATE_ONE),
            alpha: f64::from(self.alpha) / f64::from(ALPHA_ONE),
            t_stage: self.t_stage,
            bc_stage: self.bc_stage,
            byte_count: self.byte_count,
            active: self.active,
            cuts: self.cuts,
            ignored_cnps: self.ignored,
        }
    }

    fn tx_time_ps(&self, bits: u64) -> u64 {
        // bits / (line * rc / 2^20) seconds, in picoseconds.
        let num = (u128::from(bits) * 1_000_000_000_000u128) << RATE_BITS;
        let den = u128::from(self.line_bps) * u128::from(self.rc.max(1));
        num.div_ceil(den) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dcqcn::Profile;

    /// The doc's deterministic check in register values: line = 2^20, a halving, then
    /// 75, 87.5, 93.75, 96.875, 98.4375 % exactly (these are binary fractions).
    #[test]
    fn fast_recovery_registers_exact() {
        let p = DcqcnParams::profile(Profile::Paper, 100.0);
        let mut rp = RpFixed::new(&p);
        assert!(rp.cnp(0));
        assert_eq!((rp.rt, rp.rc), (1 << 20, 1 << 19));
        let want = [786_432, 917_504, 983_040, 1_015_808, 1_032_192];
        for w in want {
            assert_eq!(rp.timer_event(), Stage::FastRecovery);
            assert_eq!(rp.rc, w);
        }
        assert_eq!(rp.timer_event(), Stage::Additive);
        // RT = min(line, line + R_AI) = line; RC = (2^20 + 1032192 + 1) >> 1.
        assert_eq!((rp.rt, rp.rc), (1 << 20, 1_040_384));
    }

    #[test]
    fn alpha_update_on_cnp_hand_worked() {
        // alpha = 1, g = 256/65536: alpha' = 65536 - 256 + 256 = 65536; after one decay
        // 65536 - 256 = 65280; after a CNP from 65280: 65280 - 255 + 256 = 65281.
        let p = DcqcnParams::profile(Profile::Paper, 40.0);
        let mut rp = RpFixed::new(&p);
        rp.cnp(0);
        assert_eq!(rp.alpha, 65_536);
        rp.alpha_event();
        assert_eq!(rp.alpha, 65_280);
        rp.cnp(1_000_000);
        assert_eq!(rp.alpha, 65_281);
    }

    #[test]
    fn pacing_time_at_half_rate() {
        // 40 Gb/s at half rate: 8000 bits take 400 ns.
        let p = DcqcnParams::profile(Profile::Paper, 40.0);
        let mut rp = RpFixed::new(&p);
        assert_eq!(rp.tx_time_ps(8000), 200_000);
        rp.cnp(0);
        assert_eq!(rp.tx_time_ps(8000), 400_000);
    }
}
