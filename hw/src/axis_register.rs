//! A register slice for a 64-bit AXI-Stream: every output, `s_axis_tready` included, comes
//! from a flip-flop, at full throughput (one beat per cycle) and one cycle of latency.
//!
//! The skid buffer: an output register and a second, holding register. `s_axis_tready` is a
//! register, so the sink's `m_axis_tready` reaches the source a cycle later; a beat that
//! arrives in that cycle while the output is stalled goes into the holding register, and the
//! input closes until it has drained.
//!
//! Why. The packet layer's streams are combinational from `tready` in to `tready` out through
//! every stage (`adv` in each module). At the layer's edges that makes timing paths from one
//! module's output handshake through another's pipeline, and it puts the whole pipeline in
//! Verilator's input region, evaluated again on every change of an input. The receive parser
//! and the transmit builder put a slice on each stream that leaves or enters the layer
//! (`hw/RULES.md`, rule 23).

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct AxisRegister {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: both registers empty, input closed.
    pub reset: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tuser: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,

    ready: DFF<Bit>,
    // The output register.
    o_valid: DFF<Bit>,
    o_data: DFF<Bits<64>>,
    o_keep: DFF<Bits<8>>,
    o_last: DFF<Bit>,
    o_user: DFF<Bit>,
    // The holding register.
    h_valid: DFF<Bit>,
    h_data: DFF<Bits<64>>,
    h_keep: DFF<Bits<8>>,
    h_last: DFF<Bit>,
    h_user: DFF<Bit>,
}

impl AxisRegister {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Logic for AxisRegister {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, ready, o_valid, o_data, o_keep, o_last, o_user, h_valid, h_data, h_keep,
            h_last, h_user
        );
        self.s_axis_tready.next = self.ready.q.val();
        self.m_axis_tdata.next = self.o_data.q.val();
        self.m_axis_tkeep.next = self.o_keep.q.val();
        self.m_axis_tlast.next = self.o_last.q.val();
        self.m_axis_tvalid.next = self.o_valid.q.val();
        self.m_axis_tuser.next = self.o_user.q.val();

        // Open next cycle when the sink takes now, or when the holding register is empty and
        // this cycle cannot fill it (the output is empty, or nothing arrives).
        self.ready.d.next = self.m_axis_tready.val()
            | (!self.h_valid.q.val() & (!self.o_valid.q.val() | !self.s_axis_tvalid.val()));
        if self.ready.q.val() {
            // Open: the holding register is empty. The arriving beat (or its absence) goes to
            // the output when that moves, else into the holding register.
            if self.m_axis_tready.val() | !self.o_valid.q.val() {
                self.o_valid.d.next = self.s_axis_tvalid.val();
                self.o_data.d.next = self.s_axis_tdata.val();
                self.o_keep.d.next = self.s_axis_tkeep.val();
                self.o_last.d.next = self.s_axis_tlast.val();
                self.o_user.d.next = self.s_axis_tuser.val();
            } else {
                self.h_valid.d.next = self.s_axis_tvalid.val();
                self.h_data.d.next = self.s_axis_tdata.val();
                self.h_keep.d.next = self.s_axis_tkeep.val();
                self.h_last.d.next = self.s_axis_tlast.val();
                self.h_user.d.next = self.s_axis_tuser.val();
            }
        } else if self.m_axis_tready.val() {
            // Closed and the output moves: the held beat replaces it.
            self.o_valid.d.next = self.h_valid.q.val();
            self.o_data.d.next = self.h_data.q.val();
            self.o_keep.d.next = self.h_keep.q.val();
            self.o_last.d.next = self.h_last.q.val();
            self.o_user.d.next = self.h_user.q.val();
            self.h_valid.d.next = false;
        }
        if self.reset.val() {
            self.ready.d.next = false;
            self.o_valid.d.next = false;
            self.h_valid.d.next = false;
        }
    }
}
