//! Two packet sources onto one transmit path: each source hands send descriptors (a transport
//! header with its QP's row) and, behind each descriptor whose `payload_len` is not zero, that
//! many payload bytes on its own stream. Payloads pass in the order their descriptors were
//! taken, each whole from its own source: the mux keeps the sources of the payload passing
//! and of the next one (two entries), and offers a descriptor only while the second is free,
//! so the next packet's descriptor is looked at and taken while the payload before it still
//! streams (no gap between packets), and the transmit path's payload stream always belongs to
//! the descriptors it took. When both sources wait, the one that did not send last goes first
//! (round robin).
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
    /// A descriptor offered and not yet taken (`dsel` keeps its source).
    hold: DFF<Bit>,
    dsel: DFF<Bit>,
    /// The payload passing (`pown`, from `psel`) and the next one (`qown`, from `qsel`).
    pown: DFF<Bit>,
    psel: DFF<Bit>,
    qown: DFF<Bit>,
    qsel: DFF<Bit>,
    /// The source that sent the last descriptor.
    last_sel: DFF<Bit>,
    pick: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    has_pay: Signal<Local, Bit>,
    pay_end: Signal<Local, Bit>,
}

impl<const A: usize> Logic for DescMux<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, hold, dsel, pown, psel, qown, qsel, last_sel);
        // The descriptor's source: held while offered, else round robin.
        self.pick.next =
            self.s1_desc_valid.val() & (!self.s0_desc_valid.val() | !self.last_sel.q.val());
        if self.hold.q.val() {
            self.pick.next = self.dsel.q.val();
        }
        // Descriptors: offered while the second payload entry is free.
        self.m_desc_data.next = self.s0_desc_data.val();
        self.m_desc_qp.next = self.s0_desc_qp.val();
        self.m_desc_valid.next = self.s0_desc_valid.val() & !self.qown.q.val();
        if self.pick.val() {
            self.m_desc_data.next = self.s1_desc_data.val();
            self.m_desc_qp.next = self.s1_desc_qp.val();
            self.m_desc_valid.next = self.s1_desc_valid.val() & !self.qown.q.val();
        }
        self.s0_desc_ready.next = self.m_desc_ready.val() & !self.pick.val() & !self.qown.q.val();
        self.s1_desc_ready.next = self.m_desc_ready.val() & self.pick.val() & !self.qown.q.val();
        // Payload: only the first entry's source, only while it is there.
        self.m_axis_tdata.next = self.s0_axis_tdata.val();
        self.m_axis_tkeep.next = self.s0_axis_tkeep.val();
        self.m_axis_tlast.next = self.s0_axis_tlast.val();
        self.m_axis_tuser.next = self.s0_axis_tuser.val();
        self.m_axis_tvalid.next = self.s0_axis_tvalid.val() & self.pown.q.val();
        if self.psel.q.val() {
            self.m_axis_tdata.next = self.s1_axis_tdata.val();
            self.m_axis_tkeep.next = self.s1_axis_tkeep.val();
            self.m_axis_tlast.next = self.s1_axis_tlast.val();
            self.m_axis_tuser.next = self.s1_axis_tuser.val();
            self.m_axis_tvalid.next = self.s1_axis_tvalid.val() & self.pown.q.val();
        }
        self.s0_axis_tready.next =
            self.m_axis_tready.val() & self.pown.q.val() & !self.psel.q.val();
        self.s1_axis_tready.next = self.m_axis_tready.val() & self.pown.q.val() & self.psel.q.val();

        self.take.next = self.m_desc_valid.val() & self.m_desc_ready.val();
        // The class is the header's lowest entry, `payload_len` the next (bits 2..18).
        self.has_pay.next = self.m_desc_data.val().get_bits::<16>(2).any();
        self.pay_end.next =
            self.m_axis_tvalid.val() & self.m_axis_tready.val() & self.m_axis_tlast.val();
        self.hold.d.next = self.hold.q.val();
        self.dsel.d.next = self.dsel.q.val();
        self.last_sel.d.next = self.last_sel.q.val();
        if self.m_desc_valid.val() {
            self.hold.d.next = !self.m_desc_ready.val();
            self.dsel.d.next = self.pick.val();
        }
        if self.take.val() {
            self.last_sel.d.next = self.pick.val();
        }
        // The payload entries: the first leaves at its last beat (the second moves up), a
        // descriptor with a payload taken joins behind what is left.
        self.pown.d.next = self.pown.q.val();
        self.psel.d.next = self.psel.q.val();
        self.qown.d.next = self.qown.q.val();
        self.qsel.d.next = self.qsel.q.val();
        if self.pay_end.val() {
            self.pown.d.next = self.qown.q.val();
            self.psel.d.next = self.qsel.q.val();
            self.qown.d.next = false;
        }
        if self.take.val() & self.has_pay.val() {
            if self.pown.q.val() & !self.pay_end.val() {
                self.qown.d.next = true;
                self.qsel.d.next = self.pick.val();
            } else {
                self.pown.d.next = true;
                self.psel.d.next = self.pick.val();
            }
        }
        if self.reset.val() {
            self.hold.d.next = false;
            self.pown.d.next = false;
            self.qown.d.next = false;
            self.last_sel.d.next = true;
        }
    }
}
