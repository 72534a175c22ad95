//! Two AXI-Stream inputs onto one output, a whole frame at a time: an input keeps the output
//! from its first beat to its `tlast`, and when both wait the one that did not send last goes
//! first (round robin), so neither starves the other. The data path is a 2:1 mux and the
//! ready goes straight back to the granted input (no buffering, no added latency); the grant
//! is a register, so nothing in the mux depends on the idle input.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct FrameMux {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s0_axis_tdata: Signal<In, Bits<64>>,
    pub s0_axis_tkeep: Signal<In, Bits<8>>,
    pub s0_axis_tlast: Signal<In, Bit>,
    pub s0_axis_tvalid: Signal<In, Bit>,
    pub s0_axis_tuser: Signal<In, Bit>,
    pub s0_axis_tready: Signal<Out, Bit>,
    pub s1_axis_tdata: Signal<In, Bits<64>>,
    pub s1_axis_tkeep: Signal<In, Bits<8>>,
    pub s1_axis_tlast: Signal<In, Bit>,
    pub s1_axis_tvalid: Signal<In, Bit>,
    pub s1_axis_tuser: Signal<In, Bit>,
    pub s1_axis_tready: Signal<Out, Bit>,
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    /// The input that owns the output this cycle (1: `s1`).
    pub grant: Signal<Out, Bit>,
    /// A frame is in progress: `sel` keeps the output until its last beat.
    busy: DFF<Bit>,
    sel: DFF<Bit>,
    /// The input that sent the last frame.
    last_sel: DFF<Bit>,
    pick: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
}

impl Logic for FrameMux {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, busy, sel, last_sel);
        // Between frames: s1 when only it waits, or when both wait and s0 sent last.
        self.pick.next =
            self.s1_axis_tvalid.val() & (!self.s0_axis_tvalid.val() | !self.last_sel.q.val());
        if self.busy.q.val() {
            self.pick.next = self.sel.q.val();
        }
        self.grant.next = self.pick.val();
        self.m_axis_tdata.next = self.s0_axis_tdata.val();
        self.m_axis_tkeep.next = self.s0_axis_tkeep.val();
        self.m_axis_tlast.next = self.s0_axis_tlast.val();
        self.m_axis_tvalid.next = self.s0_axis_tvalid.val();
        self.m_axis_tuser.next = self.s0_axis_tuser.val();
        if self.pick.val() {
            self.m_axis_tdata.next = self.s1_axis_tdata.val();
            self.m_axis_tkeep.next = self.s1_axis_tkeep.val();
            self.m_axis_tlast.next = self.s1_axis_tlast.val();
            self.m_axis_tvalid.next = self.s1_axis_tvalid.val();
            self.m_axis_tuser.next = self.s1_axis_tuser.val();
        }
        self.s0_axis_tready.next = self.m_axis_tready.val() & !self.pick.val() & !self.reset.val();
        self.s1_axis_tready.next = self.m_axis_tready.val() & self.pick.val() & !self.reset.val();
        self.take.next = self.m_axis_tvalid.val() & self.m_axis_tready.val() & !self.reset.val();
        self.busy.d.next = self.busy.q.val();
        self.sel.d.next = self.sel.q.val();
        self.last_sel.d.next = self.last_sel.q.val();
        if self.take.val() {
            self.busy.d.next = !self.m_axis_tlast.val();
            self.sel.d.next = self.pick.val();
            if self.m_axis_tlast.val() {
                self.last_sel.d.next = self.pick.val();
            }
        }
        if self.reset.val() {
            self.busy.d.next = false;
            self.sel.d.next = false;
            self.last_sel.d.next = true;
        }
    }
}
