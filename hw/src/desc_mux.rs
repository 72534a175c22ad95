//! Two packet sources onto one transmit path: each source hands send descriptors (a transport
//! header with its QP's row) and, behind each descriptor whose `payload_len` is not zero, that
//! many payload bytes on its own stream. The mux passes one packet at a time: a descriptor,
//! then (if it has one) its whole payload from the same source, before it offers the next
//! descriptor, so the transmit path's payload stream always belongs to the descriptor it took.
//! When both sources wait, the one that did not send last goes first (round robin).
//!
//! A descriptor once offered stays offered until taken (the choice is held in a register), as
//! AXI-Stream asks: the consumer may look at it for several clocks (the address vector lookup)
//! before taking it. The payload passes straight through (a 2:1 mux, ready back to the owner).
//!
//! `A` is log2 of the QP rows.

use rust_hdl::prelude::*;

use crate::transport_header::TH_BITS;

#[derive(LogicBlock, Default)]
pub struct DescMux<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s0_desc_valid: Signal<In, Bit>,
    pub s0_desc_ready: Signal<Out, Bit>,
    pub s0_desc_data: Signal<In, Bits<TH_BITS>>,
    pub s0_desc_qp: Signal<In, Bits<A>>,
    pub s0_axis_tdata: Signal<In, Bits<64>>,
    pub s0_axis_tkeep: Signal<In, Bits<8>>,
    pub s0_axis_tlast: Signal<In, Bit>,
    pub s0_axis_tvalid: Signal<In, Bit>,
    pub s0_axis_tuser: Signal<In, Bit>,
    pub s0_axis_tready: Signal<Out, Bit>,
    pub s1_desc_valid: Signal<In, Bit>,
    pub s1_desc_ready: Signal<Out, Bit>,
    pub s1_desc_data: Signal<In, Bits<TH_BITS>>,
    pub s1_desc_qp: Signal<In, Bits<A>>,
    pub s1_axis_tdata: Signal<In, Bits<64>>,
    pub s1_axis_tkeep: Signal<In, Bits<8>>,
    pub s1_axis_tlast: Signal<In, Bit>,
    pub s1_axis_tvalid: Signal<In, Bit>,
    pub s1_axis_tuser: Signal<In, Bit>,
    pub s1_axis_tready: Signal<Out, Bit>,
    pub m_desc_valid: Signal<Out, Bit>,
    pub m_desc_ready: Signal<In, Bit>,
    pub m_desc_data: Signal<Out, Bits<TH_BITS>>,
    pub m_desc_qp: Signal<Out, Bits<A>>,
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    /// A descriptor offered and not yet taken (`sel` keeps it).
    hold: DFF<Bit>,
    /// A taken descriptor's payload passing (from `sel`).
    own: DFF<Bit>,
    sel: DFF<Bit>,
    /// The source that sent the last descriptor.
    last_sel: DFF<Bit>,
    pick: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
}

impl<const A: usize> Logic for DescMux<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, hold, own, sel, last_sel);
        // A new choice only when nothing is offered or passing.
        self.pick.next =
            self.s1_desc_valid.val() & (!self.s0_desc_valid.val() | !self.last_sel.q.val());
        if self.hold.q.val() | self.own.q.val() {
            self.pick.next = self.sel.q.val();
        }
        // Descriptors: offered only between packets.
        self.m_desc_data.next = self.s0_desc_data.val();
        self.m_desc_qp.next = self.s0_desc_qp.val();
        self.m_desc_valid.next = self.s0_desc_valid.val() & !self.own.q.val();
        if self.pick.val() {
            self.m_desc_data.next = self.s1_desc_data.val();
            self.m_desc_qp.next = self.s1_desc_qp.val();
            self.m_desc_valid.next = self.s1_desc_valid.val() & !self.own.q.val();
        }
        self.s0_desc_ready.next = self.m_desc_ready.val() & !self.pick.val() & !self.own.q.val();
        self.s1_desc_ready.next = self.m_desc_ready.val() & self.pick.val() & !self.own.q.val();
        // Payload: only the owner's, only while it owns.
        self.m_axis_tdata.next = self.s0_axis_tdata.val();
        self.m_axis_tkeep.next = self.s0_axis_tkeep.val();
        self.m_axis_tlast.next = self.s0_axis_tlast.val();
        self.m_axis_tuser.next = self.s0_axis_tuser.val();
        self.m_axis_tvalid.next = self.s0_axis_tvalid.val() & self.own.q.val();
        if self.sel.q.val() {
            self.m_axis_tdata.next = self.s1_axis_tdata.val();
            self.m_axis_tkeep.next = self.s1_axis_tkeep.val();
            self.m_axis_tlast.next = self.s1_axis_tlast.val();
            self.m_axis_tuser.next = self.s1_axis_tuser.val();
            self.m_axis_tvalid.next = self.s1_axis_tvalid.val() & self.own.q.val();
        }
        self.s0_axis_tready.next = self.m_axis_tready.val() & self.own.q.val() & !self.sel.q.val();
        self.s1_axis_tready.next = self.m_axis_tready.val() & self.own.q.val() & self.sel.q.val();

        self.take.next = self.m_desc_valid.val() & self.m_desc_ready.val();
        self.hold.d.next = self.hold.q.val();
        self.own.d.next = self.own.q.val();
        self.sel.d.next = self.sel.q.val();
        self.last_sel.d.next = self.last_sel.q.val();
        if self.m_desc_valid.val() {
            self.hold.d.next = !self.m_desc_ready.val();
            self.sel.d.next = self.pick.val();
        }
        if self.take.val() {
            self.last_sel.d.next = self.pick.val();
            // The class is the header's lowest entry, `payload_len` the next (bits 2..18).
            self.own.d.next = self.m_desc_data.val().get_bits::<16>(2).any();
        }
        if self.m_axis_tvalid.val() & self.m_axis_tready.val() & self.m_axis_tlast.val() {
            self.own.d.next = false;
        }
        if self.reset.val() {
            self.hold.d.next = false;
            self.own.d.next = false;
            self.sel.d.next = false;
            self.last_sel.d.next = true;
        }
    }
}
