//! The transport's timers, one per QP, by lazy timestamps (`transport-engine.md`): a row per QP
//! in block RAM `{armed, kind, code, start}`, a global tick of 4.096 us, and a scanner that
//! reads one row per clock and reports the QPs whose time has passed. Nothing counts down per
//! QP, so 1024 timers cost two block RAMs and one comparator, and arming writes one row.
//!
//! - **Tick**: `now` counts ticks of `tick_cycles` clocks (512 at 125 MHz make 4.096 us), 32
//!   bits, so every ACK timeout code (up to 2^31 ticks) is exact.
//! - **Commands** (`s_cmd_*`, from the completer, the table's one writer besides the scanner):
//!   arm QP `qpn` as an ACK timer (`rnr` low: `2^code` ticks, IBTA's `4.096 us x 2^timeout`) or
//!   as an RNR wait (`rnr` high: the RNR NAK's timer code, IBTA table 45 rounded up to whole
//!   ticks), replacing whatever the row held; or stop it (`arm` low).
//! - **Expiry**: a row fires when more than its limit of whole ticks have passed since the tick
//!   it was armed in, so a timer never fires early, and late by at most one tick plus one sweep
//!   of the table (`2^A` clocks) when `m_exp` is taken at once. The scanner clears the row as
//!   it fires (`s_cmd_ready` is low on that clock only) and queues `{qpn, rnr}` on `m_exp_*`;
//!   a row written by a command after the scanner read it is not fired from the stale read.
//!   The completer checks that something is still outstanding before it retries, which settles
//!   an ACK that crossed the expiry.
//! - **Reset** clears every row (`busy` for `2^A` clocks, no commands taken): block RAM keeps
//!   its contents through a reset, and a timer armed before it must not fire after.
//!
//! Pipeline: the scanner reads row `i` (clock 0), registers the RAM's word (clock 1), computes
//! the ticks elapsed and the row's limit (clock 2), compares them (clock 3), fires from
//! registers only (clock 4). It reads a row only while the expiry queue has room for every row
//! in flight.

use rust_hdl::prelude::*;

use crate::header_fifo::HeaderFifo;
use crate::ram_clear::RamClear;

/// Bits of a timer row: armed (bit 0), RNR (bit 1), code (bits 2-6), start tick (bits 7-38).
pub const ROW_BITS: usize = 39;

/// Clocks from a scan read to the fire decision.
pub const SCAN_LATENCY: usize = 4;

/// RNR NAK timer codes (IBTA table 45) in whole 4.096 us ticks, rounded up (code 0 is
/// 655.36 ms, code 1 is 0.01 ms: 3 ticks). The scanner's ROM arms are these literals; a test
/// ties both to the table in nanoseconds of the transport model.
pub const RNR_TICKS: [u32; 32] = [
    160_000, 3, 5, 8, 10, 15, 20, 30, 40, 59, 79, 118, 157, 235, 313, 469, 625, 938, 1250, 1875,
    2500, 3750, 5000, 7500, 10000, 15000, 20000, 30000, 40000, 60000, 80000, 120_000,
];

#[derive(LogicBlock)]
pub struct QpTimers<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Clocks per 4.096 us tick (512 at 125 MHz, 640 at 156.25 MHz); 0 or 1 ticks every clock.
    pub tick_cycles: Signal<In, Bits<16>>,

    pub s_cmd_valid: Signal<In, Bit>,
    pub s_cmd_ready: Signal<Out, Bit>,
    pub s_cmd_qpn: Signal<In, Bits<A>>,
    /// Arm (high) or stop (low).
    pub s_cmd_arm: Signal<In, Bit>,
    /// An RNR wait (high) or an ACK timer (low).
    pub s_cmd_rnr: Signal<In, Bit>,
    /// The ACK timeout (`2^code` ticks) or the RNR NAK's timer code.
    pub s_cmd_code: Signal<In, Bits<5>>,

    pub m_exp_valid: Signal<Out, Bit>,
    pub m_exp_ready: Signal<In, Bit>,
    pub m_exp_qpn: Signal<Out, Bits<A>>,
    pub m_exp_rnr: Signal<Out, Bit>,

    /// The tick count.
    pub now: Signal<Out, Bits<32>>,
    /// Clearing the table after a reset.
    pub busy: Signal<Out, Bit>,

    mem: RAM<Bits<ROW_BITS>, A>,
    exp: HeaderFifo<32, 3>,
    clear: RamClear<A>,

    pre: DFF<Bits<16>>,
    tick: DFF<Bits<32>>,
    scan: DFF<Bits<A>>,
    // Stage 1: the RAM's word is for row `i1`.
    v1: DFF<Bit>,
    i1: DFF<Bits<A>>,
    s1: DFF<Bit>,
    // Stage 1b: the RAM's word, registered.
    vb: DFF<Bit>,
    ib: DFF<Bits<A>>,
    sb: DFF<Bit>,
    rowb: DFF<Bits<ROW_BITS>>,
    // Stage 2: elapsed ticks and the row's limit.
    v2: DFF<Bit>,
    i2: DFF<Bits<A>>,
    s2: DFF<Bit>,
    armed2: DFF<Bit>,
    rnr2: DFF<Bit>,
    elapsed2: DFF<Bits<32>>,
    limit2: DFF<Bits<32>>,
    // Stage 3: the decision's inputs, all registers.
    v3: DFF<Bit>,
    i3: DFF<Bits<A>>,
    s3: DFF<Bit>,
    armed3: DFF<Bit>,
    rnr3: DFF<Bit>,
    over3: DFF<Bit>,

    pre_inc: Signal<Local, Bits<16>>,
    take: Signal<Local, Bit>,
    fire: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    row_in: Signal<Local, Bits<ROW_BITS>>,
    start_w: Signal<Local, Bits<ROW_BITS>>,
    code_w: Signal<Local, Bits<ROW_BITS>>,
    code: Signal<Local, Bits<5>>,
    ack_limit: Signal<Local, Bits<32>>,
    rnr_limit: Signal<Local, Bits<32>>,
    exp_word: Signal<Local, Bits<32>>,
    hit_cmd0: Signal<Local, Bit>,
    hit_cmd1: Signal<Local, Bit>,
    hit_cmd2: Signal<Local, Bit>,
    hit_cmdb: Signal<Local, Bit>,
    room: Signal<Local, Bit>,
    k_one16: Constant<Bits<16>>,
    k_zero16: Constant<Bits<16>>,
    k_one32: Constant<Bits<32>>,
    k_one_a: Constant<Bits<A>>,
    k_zero_a: Constant<Bits<A>>,
    /// Fill of the expiry queue at which the scanner may read (room for four in flight).
    k_room: Constant<Bits<8>>,
}

impl<const A: usize> Default for QpTimers<A> {
    fn default() -> Self {
        // A row is read again a sweep after it was read, after its clear was written.
        assert!((3..=16).contains(&A), "2^A QPs, A in 3..=16");
        QpTimers {
            clock: Default::default(),
            reset: Default::default(),
            tick_cycles: Default::default(),
            s_cmd_valid: Default::default(),
            s_cmd_ready: Default::default(),
            s_cmd_qpn: Default::default(),
            s_cmd_arm: Default::default(),
            s_cmd_rnr: Default::default(),
            s_cmd_code: Default::default(),
            m_exp_valid: Default::default(),
            m_exp_ready: Default::default(),
            m_exp_qpn: Default::default(),
            m_exp_rnr: Default::default(),
            now: Default::default(),
            busy: Default::default(),
            mem: RAM::new(Default::default()),
            exp: Default::default(),
            clear: Default::default(),
            pre: Default::default(),
            tick: Default::default(),
            scan: Default::default(),
            v1: Default::default(),
            i1: Default::default(),
            s1: Default::default(),
            vb: Default::default(),
            ib: Default::default(),
            sb: Default::default(),
            rowb: Default::default(),
            v2: Default::default(),
            i2: Default::default(),
            s2: Default::default(),
            armed2: Default::default(),
            rnr2: Default::default(),
            elapsed2: Default::default(),
            limit2: Default::default(),
            v3: Default::default(),
            i3: Default::default(),
            s3: Default::default(),
            armed3: Default::default(),
            rnr3: Default::default(),
            over3: Default::default(),
            pre_inc: Default::default(),
            take: Default::default(),
            fire: Default::default(),
            issue: Default::default(),
            row_in: Default::default(),
            start_w: Default::default(),
            code_w: Default::default(),
            code: Default::default(),
            ack_limit: Default::default(),
            rnr_limit: Default::default(),
            exp_word: Default::default(),
            hit_cmd0: Default::default(),
            hit_cmd1: Default::default(),
            hit_cmd2: Default::default(),
            hit_cmdb: Default::default(),
            room: Default::default(),
            k_one16: Constant::new(bits::<16>(1)),
            k_zero16: Constant::new(bits::<16>(0)),
            k_one32: Constant::new(bits::<32>(1)),
            k_one_a: Constant::new(bits::<A>(1)),
            k_zero_a: Constant::new(bits::<A>(0)),
            k_room: Constant::new(bits::<8>(2)),
        }
    }
}

impl<const A: usize> Logic for QpTimers<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, pre, tick, scan, v1, i1, s1, vb, ib, sb, rowb, v2, i2, s2, armed2, rnr2,
            elapsed2, limit2, v3, i3, s3, armed3, rnr3, over3
        );
        self.mem.read_clock.next = self.clock.val();
        self.mem.write_clock.next = self.clock.val();
        self.exp.clock.next = self.clock.val();
        self.exp.reset.next = self.reset.val();
        self.clear.clock.next = self.clock.val();
        self.clear.reset.next = self.reset.val();

        // ---- The tick.
        self.pre_inc.next = self.pre.q.val() + self.k_one16.val();
        self.pre.d.next = self.pre_inc.val();
        self.tick.d.next = self.tick.q.val();
        if self.pre_inc.val() >= self.tick_cycles.val() {
            self.pre.d.next = self.k_zero16.val();
            self.tick.d.next = self.tick.q.val() + self.k_one32.val();
        }
        self.now.next = self.tick.q.val();

        // ---- Stage 3: fire from registers. The row is cleared on the write port, so no
        // command is taken this clock.
        self.fire.next = self.v3.q.val()
            & self.armed3.q.val()
            & self.over3.q.val()
            & !self.s3.q.val()
            & self.exp.s_ready.val();
        self.exp_word.next = bit_cast::<32, A>(self.i3.q.val());
        self.exp_word.next = self.exp_word.val().replace_bit(24, self.rnr3.q.val());
        self.exp.s_data.next = self.exp_word.val();
        self.exp.s_valid.next = self.fire.val();
        self.m_exp_valid.next = self.exp.m_valid.val();
        self.m_exp_qpn.next = self.exp.m_data.val().get_bits::<A>(0);
        self.m_exp_rnr.next = self.exp.m_data.val().get_bit(24);
        self.exp.m_ready.next = self.m_exp_ready.val();

        // ---- Commands.
        self.s_cmd_ready.next = !self.clear.busy.val() & !self.fire.val();
        self.take.next = self.s_cmd_valid.val() & self.s_cmd_ready.val();
        self.start_w.next = bit_cast::<ROW_BITS, 32>(self.tick.q.val()) << 7;
        self.code_w.next = bit_cast::<ROW_BITS, 5>(self.s_cmd_code.val()) << 2;
        self.row_in.next = self.start_w.val() | self.code_w.val();
        self.row_in.next = self.row_in.val().replace_bit(1, self.s_cmd_rnr.val());
        self.row_in.next = self.row_in.val().replace_bit(0, true);
        if !self.s_cmd_arm.val() {
            self.row_in.next = 0.into();
        }
        self.mem.write_address.next = self.s_cmd_qpn.val();
        self.mem.write_data.next = self.row_in.val();
        self.mem.write_enable.next = self.take.val();
        if self.fire.val() {
            self.mem.write_address.next = self.i3.q.val();
            self.mem.write_data.next = 0.into();
            self.mem.write_enable.next = true;
        }
        // A command to a row in flight makes the scanner's read of it stale.
        self.hit_cmd0.next = self.take.val() & (self.s_cmd_qpn.val() == self.scan.q.val());
        self.hit_cmd1.next = self.take.val() & (self.s_cmd_qpn.val() == self.i1.q.val());
        self.hit_cmdb.next = self.take.val() & (self.s_cmd_qpn.val() == self.ib.q.val());
        self.hit_cmd2.next = self.take.val() & (self.s_cmd_qpn.val() == self.i2.q.val());

        // ---- Stage 0: read the next row while the expiry queue has room for all in flight.
        self.room.next = self.exp.fill.val() <= self.k_room.val();
        self.issue.next = !self.clear.busy.val() & self.room.val();
        self.mem.read_address.next = self.scan.q.val();
        self.scan.d.next = self.scan.q.val();
        if self.issue.val() {
            self.scan.d.next = self.scan.q.val() + self.k_one_a.val();
        }
        self.v1.d.next = self.issue.val();
        self.i1.d.next = self.scan.q.val();
        self.s1.d.next = self.hit_cmd0.val();

        // ---- Stage 1: the RAM's word into a register (its clock-to-out is most of a clock).
        self.vb.d.next = self.v1.q.val();
        self.ib.d.next = self.i1.q.val();
        self.sb.d.next = self.s1.q.val() | self.hit_cmd1.val();
        self.rowb.d.next = self.mem.read_data.val();

        // ---- Stage 1b: elapsed ticks and the limit of the row's kind and code.
        self.code.next = self.rowb.q.val().get_bits::<5>(2);
        self.ack_limit.next = self.k_one32.val() << self.code.val();
        self.rnr_limit.next = 0.into();
        match self.code.val().index() {
            0 => self.rnr_limit.next = 160000.into(),
            1 => self.rnr_limit.next = 3.into(),
            2 => self.rnr_limit.next = 5.into(),
            3 => self.rnr_limit.next = 8.into(),
            4 => self.rnr_limit.next = 10.into(),
            5 => self.rnr_limit.next = 15.into(),
            6 => self.rnr_limit.next = 20.into(),
            7 => self.rnr_limit.next = 30.into(),
            8 => self.rnr_limit.next = 40.into(),
            9 => self.rnr_limit.next = 59.into(),
            10 => self.rnr_limit.next = 79.into(),
            11 => self.rnr_limit.next = 118.into(),
            12 => self.rnr_limit.next = 157.into(),
            13 => self.rnr_limit.next = 235.into(),
            14 => self.rnr_limit.next = 313.into(),
            15 => self.rnr_limit.next = 469.into(),
            16 => self.rnr_limit.next = 625.into(),
            17 => self.rnr_limit.next = 938.into(),
            18 => self.rnr_limit.next = 1250.into(),
            19 => self.rnr_limit.next = 1875.into(),
            20 => self.rnr_limit.next = 2500.into(),
            21 => self.rnr_limit.next = 3750.into(),
            22 => self.rnr_limit.next = 5000.into(),
            23 => self.rnr_limit.next = 7500.into(),
            24 => self.rnr_limit.next = 10000.into(),
            25 => self.rnr_limit.next = 15000.into(),
            26 => self.rnr_limit.next = 20000.into(),
            27 => self.rnr_limit.next = 30000.into(),
            28 => self.rnr_limit.next = 40000.into(),
            29 => self.rnr_limit.next = 60000.into(),
            30 => self.rnr_limit.next = 80000.into(),
            _ => self.rnr_limit.next = 120000.into(),
        }
        self.v2.d.next = self.vb.q.val();
        self.i2.d.next = self.ib.q.val();
        self.s2.d.next = self.sb.q.val() | self.hit_cmdb.val();
        self.armed2.d.next = self.rowb.q.val().get_bit(0);
        self.rnr2.d.next = self.rowb.q.val().get_bit(1);
        self.elapsed2.d.next = self.tick.q.val() - self.rowb.q.val().get_bits::<32>(7);
        self.limit2.d.next = self.ack_limit.val();
        if self.rowb.q.val().get_bit(1) {
            self.limit2.d.next = self.rnr_limit.val();
        }

        // ---- Stage 2: the comparison.
        self.v3.d.next = self.v2.q.val();
        self.i3.d.next = self.i2.q.val();
        self.s3.d.next = self.s2.q.val() | self.hit_cmd2.val();
        self.armed3.d.next = self.armed2.q.val();
        self.rnr3.d.next = self.rnr2.q.val();
        self.over3.d.next = self.elapsed2.q.val() > self.limit2.q.val();

        // ---- Reset: clear every row, one per clock.
        self.busy.next = self.clear.busy.val();
        if self.clear.busy.val() {
            self.mem.write_address.next = self.clear.addr.val();
            self.mem.write_data.next = 0.into();
            self.mem.write_enable.next = true;
        }
        if self.reset.val() {
            self.scan.d.next = self.k_zero_a.val();
            self.v1.d.next = false;
            self.vb.d.next = false;
            self.v2.d.next = false;
            self.v3.d.next = false;
            self.pre.d.next = self.k_zero16.val();
            self.tick.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rom_is_the_table() {
        // The scanner's ROM arms are written as literals (a `match` on constants does not
        // translate); this ties each to `RNR_TICKS`.
        let src = include_str!("qp_timers.rs");
        for (code, t) in RNR_TICKS.iter().enumerate() {
            let arm = if code == 31 {
                format!("_ => self.rnr_limit.next = {t}.into(),")
            } else {
                format!("{code} => self.rnr_limit.next = {t}.into(),")
            };
            assert!(src.contains(&arm), "ROM arm for code {code}: {arm}");
        }
    }
}
