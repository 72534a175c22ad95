//! The reaction point in `f64`: rates in b/s, alpha and g as real fractions, time in
//! nanoseconds. The same rules and order as [`super::rp_fixed`]; the reference that the
//! fixed-point model is tested against.

use super::{DcqcnParams, RateControl, RpState, Stage};

/// One QP's reaction point in floating point.
#[derive(Clone, Debug)]
pub struct RpFloat {
    p: DcqcnParams,
    line: f64,
    /// Current rate RC, b/s.
    pub rc: f64,
    /// Target rate RT, b/s.
    pub rt: f64,
    /// Alpha.
    pub alpha: f64,
    /// Timer stage T.
    pub t_stage: u32,
    /// Byte stage BC.
    pub bc_stage: u32,
    /// Bytes counted towards the next byte event.
    pub byte_count: u64,
    active: bool,
    next_inc: f64,
    next_alpha: f64,
    last_cut: Option<f64>,
    cuts: u64,
    ignored: u64,
}

impl RpFloat {
    /// A reaction point at line rate, idle until its first CNP.
    pub fn new(p: &DcqcnParams) -> Self {
        let line = p.line_mbps * 1e6;
        RpFloat {
            p: p.clone(),
            line,
            rc: line,
            rt: line,
            alpha: p.alpha_init,
            t_stage: 0,
            bc_stage: 0,
            byte_count: 0,
            active: false,
            next_inc: 0.0,
            next_alpha: 0.0,
            last_cut: None,
            cuts: 0,
            ignored: 0,
        }
    }

    /// Whether the limiter is engaged.
    pub fn active(&self) -> bool {
        self.active
    }

    /// A CNP at time `now` (ns). Returns false when it was ignored for the cut spacing.
    pub fn cnp(&mut self, now: f64) -> bool {
        let p = &self.p;
        let min_dec = p.min_dec_us * 1000.0;
        if self.active && min_dec > 0.0 && self.last_cut.is_some_and(|l| now - l < min_dec) {
            self.ignored += 1;
            return false;
        }
        let first = !self.active;
        if first {
            self.active = true;
            self.alpha = p.alpha_init;
        }
        if p.clamp_target || first {
            self.rt = self.rc;
        }
        let min_rate = p.min_rate_mbps * 1e6;
        if first && p.first_cnp_rate_mbps > 0.0 {
            self.rc = (p.first_cnp_rate_mbps * 1e6).min(self.rc).max(min_rate);
        } else {
            let cut = (self.rc * self.alpha / 2.0).min(self.rc * p.max_cut);
            self.rc = (self.rc - cut).max(min_rate);
        }
        self.alpha = (1.0 - p.g) * self.alpha + p.g;
        self.t_stage = 0;
        self.bc_stage = 0;
        self.byte_count = 0;
        self.next_inc = now + p.inc_timer_us * 1000.0;
        self.next_alpha = now + p.alpha_timer_us * 1000.0;
        self.last_cut = Some(now);
        self.cuts += 1;
        true
    }

    /// One alpha-timer expiry.
    pub fn alpha_event(&mut self) {
        self.alpha *= 1.0 - self.p.g;
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
        let f = self.p.f;
        let hi = self.t_stage.max(self.bc_stage);
        let lo = self.t_stage.min(self.bc_stage);
        let stage = if hi < f {
            Stage::FastRecovery
        } else if lo < f {
            Stage::Additive
        } else {
            Stage::Hyper
        };
        match stage {
            Stage::FastRecovery => {}
            Stage::Additive => self.rt = (self.rt + self.p.rai_mbps * 1e6).min(self.line),
            Stage::Hyper => {
                let i = f64::from(lo - f + 1);
                self.rt = (self.rt + i * self.p.rhai_mbps * 1e6).min(self.line);
            }
        }
        self.rc = ((self.rt + self.rc) / 2.0).min(self.line);
        stage
    }

    fn check_release(&mut self) {
        // "At line rate" within the fixed-point model's resolution (2^-20 of line rate).
        let eps = self.line / f64::from(super::RATE_ONE);
        if self.p.release_at_line && self.line - self.rc < eps && self.line - self.rt < eps {
            self.active = false;
            self.rc = self.line;
            self.rt = self.line;
            self.alpha = self.p.alpha_init;
            self.t_stage = 0;
            self.bc_stage = 0;
            self.byte_count = 0;
        }
    }

    /// Fires the timer events due at or before `now` (ns).
    pub fn advance_ns(&mut self, now: f64) {
        while self.active {
            let next = self.next_inc.min(self.next_alpha);
            if next > now {
                break;
            }
            if self.next_alpha <= self.next_inc {
                self.alpha_event();
                self.next_alpha += self.p.alpha_timer_us * 1000.0;
            } else {
                self.timer_event();
                self.next_inc += self.p.inc_timer_us * 1000.0;
            }
        }
    }

    /// Counts `bytes` sent; fires a byte event for every B bytes.
    pub fn sent(&mut self, bytes: u64) {
        let b = self.p.byte_reset;
        if !self.active || b == 0 {
            return;
        }
        self.byte_count += bytes;
        while self.active && self.byte_count >= b {
            self.byte_count -= b;
            self.byte_event();
        }
    }
}

impl RateControl for RpFloat {
    fn on_cnp(&mut self, now_ns: u64) {
        self.advance_ns(now_ns as f64);
        self.cnp(now_ns as f64);
    }

    fn on_sent(&mut self, bytes: u64, now_ns: u64) {
        self.advance_ns(now_ns as f64);
        self.sent(bytes);
    }

    fn advance(&mut self, now_ns: u64) {
        self.advance_ns(now_ns as f64);
    }

    fn next_deadline_ns(&self) -> Option<u64> {
        self.active
            .then(|| self.next_inc.min(self.next_alpha).ceil().max(0.0) as u64)
    }

    fn rate_bps(&self) -> f64 {
        self.rc
    }

    fn state(&self) -> RpState {
        RpState {
            rc_bps: self.rc,
            rt_bps: self.rt,
            alpha: self.alpha,
            t_stage: self.t_stage,
            bc_stage: self.bc_stage,
            byte_count: self.byte_count,
            active: self.active,
            cuts: self.cuts,
            ignored_cnps: self.ignored,
        }
    }

    fn tx_time_ps(&self, bits: u64) -> u64 {
        (bits as f64 * 1e12 / self.rc.max(1.0)).ceil() as u64
    }
}
