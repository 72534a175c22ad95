//! The ACK timer restarted by packets sent: the one path into the timers
//! ([`crate::qp_timers`]), shared by the completer's commands and the requester's packets.
//!
//! Every packet sent (`s_sent_*`: its QP and the QP's TIMEOUT code) restarts its QP's ACK
//! timer (`2^code` ticks; code 0: no timeout), unless an RNR wait runs for the QP; the
//! completer's restarts and RNR waits pass on to the timers; its stops are taken and dropped:
//! a timer left running expires, and the completer ignores an ACK timeout that finds nothing
//! outstanding (the model's `on_time`). So the ACK timer always runs while a packet is
//! unacknowledged, whatever the completer's view of the send point was when it decided: the
//! completer reads the requester's send point with each response, and a stop decided on a
//! view read before a packet went out (the packet finding the timer running, so not arming
//! it) left that packet without a timer, and its QP waiting for ever once it was lost
//! (`driver/tests/requester_path.rs`, seed 6, once the DMA writes' timing moved). Restarting
//! on every packet also means a timeout never comes sooner than `2^code` ticks after the last
//! packet sent: no premature timeout of a packet sent late in a timer's run.
//!
//! The timers keep their rows in block RAM that only their scanner reads, so this module keeps
//! one bit per QP beside them: an RNR wait runs, set by the completer's RNR waits, cleared by
//! its restarts of the ACK timer and by an expiry as this module takes it. A packet sent reads
//! its QP's bit (one clock) and the next clock decides. Whichever is taken, one thing happens
//! per clock, so the bit is never read stale:
//! - a completer command (`s_cmd_*`) goes to the timers first (a stop is taken, not passed on)
//!   and sets or clears the bit;
//! - else a packet sent, held in a register since it was taken, reads its bit, and the next
//!   clock decides (nothing else is taken then);
//! - else an expiry (`s_exp_*` from the timers) clears the bit and goes into the register the
//!   completer takes it from (`m_exp_*`).
//!
//! A packet is taken into its register whenever that is free (`s_sent_ready` is a register),
//! and the completer's expiry port is driven from a register: nothing of the requester's
//! handshake or of this module's choice reaches the completer's choice of event in one clock.
//!
//! Reset clears the bits (`busy` for `2^A` clocks, nothing taken).

use rust_hdl::prelude::*;

use crate::ram_clear::RamClear;

#[derive(LogicBlock)]
pub struct TimerArm<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// The completer's timer commands (as [`crate::qp_timers`] takes them).
    pub s_cmd_valid: Signal<In, Bit>,
    pub s_cmd_ready: Signal<Out, Bit>,
    pub s_cmd_qpn: Signal<In, Bits<A>>,
    pub s_cmd_arm: Signal<In, Bit>,
    pub s_cmd_rnr: Signal<In, Bit>,
    pub s_cmd_code: Signal<In, Bits<5>>,
    /// A packet sent: its QP and the QP's TIMEOUT.
    pub s_sent_valid: Signal<In, Bit>,
    pub s_sent_ready: Signal<Out, Bit>,
    pub s_sent_qpn: Signal<In, Bits<A>>,
    pub s_sent_code: Signal<In, Bits<5>>,
    /// To the timers.
    pub m_cmd_valid: Signal<Out, Bit>,
    pub m_cmd_ready: Signal<In, Bit>,
    pub m_cmd_qpn: Signal<Out, Bits<A>>,
    pub m_cmd_arm: Signal<Out, Bit>,
    pub m_cmd_rnr: Signal<Out, Bit>,
    pub m_cmd_code: Signal<Out, Bits<5>>,
    /// Expiries from the timers, handed on to the completer.
    pub s_exp_valid: Signal<In, Bit>,
    pub s_exp_ready: Signal<Out, Bit>,
    pub s_exp_qpn: Signal<In, Bits<A>>,
    pub s_exp_rnr: Signal<In, Bit>,
    pub m_exp_valid: Signal<Out, Bit>,
    pub m_exp_ready: Signal<In, Bit>,
    pub m_exp_qpn: Signal<Out, Bits<A>>,
    pub m_exp_rnr: Signal<Out, Bit>,
    /// ACK timers started or restarted by a packet sent.
    pub cnt_arms: Signal<Out, Bits<32>>,
    /// Clearing the bits after a reset.
    pub busy: Signal<Out, Bit>,

    /// An RNR wait runs, per QP.
    armed: RAM<Bits<1>, A>,
    clear: RamClear<A>,
    /// An expiry for the completer.
    ev: DFF<Bit>,
    eq: DFF<Bits<A>>,
    ernr: DFF<Bit>,
    /// A packet sent, taken and waiting for its turn.
    sv: DFF<Bit>,
    sq: DFF<Bits<A>>,
    scode: DFF<Bits<5>>,
    /// A packet's QP bit is being read (the clock after its turn).
    check: DFF<Bit>,
    p_qpn: DFF<Bits<A>>,
    p_code: DFF<Bits<5>>,
    arms: DFF<Bits<32>>,
    idle: Signal<Local, Bit>,
    take_cmd: Signal<Local, Bit>,
    take_sent: Signal<Local, Bit>,
    take_exp: Signal<Local, Bit>,
    k_one32: Constant<Bits<32>>,
}

impl<const A: usize> Default for TimerArm<A> {
    fn default() -> Self {
        assert!((3..=16).contains(&A), "2^A QPs, A in 3..=16");
        TimerArm {
            clock: Default::default(),
            reset: Default::default(),
            s_cmd_valid: Default::default(),
            s_cmd_ready: Default::default(),
            s_cmd_qpn: Default::default(),
            s_cmd_arm: Default::default(),
            s_cmd_rnr: Default::default(),
            s_cmd_code: Default::default(),
            s_sent_valid: Default::default(),
            s_sent_ready: Default::default(),
            s_sent_qpn: Default::default(),
            s_sent_code: Default::default(),
            m_cmd_valid: Default::default(),
            m_cmd_ready: Default::default(),
            m_cmd_qpn: Default::default(),
            m_cmd_arm: Default::default(),
            m_cmd_rnr: Default::default(),
            m_cmd_code: Default::default(),
            s_exp_valid: Default::default(),
            s_exp_ready: Default::default(),
            s_exp_qpn: Default::default(),
            s_exp_rnr: Default::default(),
            m_exp_valid: Default::default(),
            m_exp_ready: Default::default(),
            m_exp_qpn: Default::default(),
            m_exp_rnr: Default::default(),
            cnt_arms: Default::default(),
            busy: Default::default(),
            armed: RAM::new(Default::default()),
            clear: Default::default(),
            ev: Default::default(),
            eq: Default::default(),
            ernr: Default::default(),
            sv: Default::default(),
            sq: Default::default(),
            scode: Default::default(),
            check: Default::default(),
            p_qpn: Default::default(),
            p_code: Default::default(),
            arms: Default::default(),
            idle: Default::default(),
            take_cmd: Default::default(),
            take_sent: Default::default(),
            take_exp: Default::default(),
            k_one32: Constant::new(bits::<32>(1)),
        }
    }
}

impl<const A: usize> Logic for TimerArm<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, ev, eq, ernr, sv, sq, scode, check, p_qpn, p_code, arms
        );
        self.armed.read_clock.next = self.clock.val();
        self.armed.write_clock.next = self.clock.val();
        self.clear.clock.next = self.clock.val();
        self.clear.reset.next = self.reset.val();
        self.busy.next = self.clear.busy.val();
        self.cnt_arms.next = self.arms.q.val();

        self.idle.next = !self.clear.busy.val() & !self.check.q.val();
        // The completer's restarts and RNR waits pass straight through; its stops are taken
        // and dropped.
        self.m_cmd_valid.next = self.s_cmd_valid.val() & self.s_cmd_arm.val() & self.idle.val();
        self.m_cmd_qpn.next = self.s_cmd_qpn.val();
        self.m_cmd_arm.next = self.s_cmd_arm.val();
        self.m_cmd_rnr.next = self.s_cmd_rnr.val();
        self.m_cmd_code.next = self.s_cmd_code.val();
        self.s_cmd_ready.next = (self.m_cmd_ready.val() | !self.s_cmd_arm.val()) & self.idle.val();
        self.take_cmd.next = self.s_cmd_valid.val() & self.s_cmd_ready.val();
        // A packet sent into its register.
        self.s_sent_ready.next = !self.sv.q.val();
        if self.s_sent_valid.val() & !self.sv.q.val() {
            self.sv.d.next = true;
            self.sq.d.next = self.s_sent_qpn.val();
            self.scode.d.next = self.s_sent_code.val();
        }
        // The held packet's turn, when no command is offered.
        self.take_sent.next = self.sv.q.val() & self.idle.val() & !self.s_cmd_valid.val();
        if self.take_sent.val() {
            self.sv.d.next = false;
        }
        // An expiry, when neither is, into the register the completer takes it from.
        self.m_exp_valid.next = self.ev.q.val();
        self.m_exp_qpn.next = self.eq.q.val();
        self.m_exp_rnr.next = self.ernr.q.val();
        if self.ev.q.val() & self.m_exp_ready.val() {
            self.ev.d.next = false;
        }
        self.s_exp_ready.next =
            !self.ev.q.val() & self.idle.val() & !self.s_cmd_valid.val() & !self.sv.q.val();
        self.take_exp.next = self.s_exp_valid.val() & self.s_exp_ready.val();
        if self.take_exp.val() {
            self.ev.d.next = true;
            self.eq.d.next = self.s_exp_qpn.val();
            self.ernr.d.next = self.s_exp_rnr.val();
        }

        self.armed.read_address.next = self.sq.q.val();
        if self.check.q.val() {
            // Held while the timers do not take the arm.
            self.armed.read_address.next = self.p_qpn.q.val();
        }
        self.armed.write_address.next = self.s_cmd_qpn.val();
        self.armed.write_data.next = 0.into();
        self.armed.write_enable.next = false;
        if self.take_cmd.val() & self.s_cmd_arm.val() {
            self.armed.write_enable.next = true;
            if self.s_cmd_rnr.val() {
                self.armed.write_data.next = 1.into();
            }
        }
        if self.take_exp.val() {
            self.armed.write_address.next = self.s_exp_qpn.val();
            self.armed.write_enable.next = true;
        }
        self.check.d.next = self.take_sent.val();
        self.p_qpn.d.next = self.p_qpn.q.val();
        self.p_code.d.next = self.p_code.q.val();
        if self.take_sent.val() {
            self.p_qpn.d.next = self.sq.q.val();
            self.p_code.d.next = self.scode.q.val();
        }
        // The clock after: restart the ACK timer unless an RNR wait runs, if the QP has a
        // timeout (the bit stays clear).
        if self.check.q.val() & !self.armed.read_data.val().any() & self.p_code.q.val().any() {
            self.m_cmd_valid.next = true;
            self.m_cmd_qpn.next = self.p_qpn.q.val();
            self.m_cmd_arm.next = true;
            self.m_cmd_rnr.next = false;
            self.m_cmd_code.next = self.p_code.q.val();
            self.check.d.next = !self.m_cmd_ready.val();
            if self.m_cmd_ready.val() {
                self.arms.d.next = self.arms.q.val() + self.k_one32.val();
            }
        }
        if self.clear.busy.val() {
            self.armed.write_address.next = self.clear.addr.val();
            self.armed.write_data.next = 0.into();
            self.armed.write_enable.next = true;
        }
        if self.reset.val() {
            self.ev.d.next = false;
            self.sv.d.next = false;
            self.check.d.next = false;
            self.arms.d.next = 0.into();
        }
    }
}
