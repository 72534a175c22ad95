//! Two completion sources onto one completion port, a whole `cqe` at a time: a source keeps
//! the port from its first beat to its `last`, and when both wait the one that did not send
//! last goes first (round robin). The beats pass straight through (a 2:1 mux, ready back to
//! the granted source); the grant is a register while an entry is half sent.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct CqeMux {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s0_cqe_valid: Signal<In, Bit>,
    pub s0_cqe_ready: Signal<Out, Bit>,
    pub s0_cqe_cq: Signal<In, Bits<16>>,
    pub s0_cqe_data: Signal<In, Bits<64>>,
    pub s0_cqe_last: Signal<In, Bit>,
    pub s1_cqe_valid: Signal<In, Bit>,
    pub s1_cqe_ready: Signal<Out, Bit>,
    pub s1_cqe_cq: Signal<In, Bits<16>>,
    pub s1_cqe_data: Signal<In, Bits<64>>,
    pub s1_cqe_last: Signal<In, Bit>,
    pub m_cqe_valid: Signal<Out, Bit>,
    pub m_cqe_ready: Signal<In, Bit>,
    pub m_cqe_cq: Signal<Out, Bits<16>>,
    pub m_cqe_data: Signal<Out, Bits<64>>,
    pub m_cqe_last: Signal<Out, Bit>,
    /// An entry half sent: `sel` keeps the port until its last beat.
    busy: DFF<Bit>,
    sel: DFF<Bit>,
    /// The source that sent the last entry.
    last_sel: DFF<Bit>,
    pick: Signal<Local, Bit>,
}

impl Logic for CqeMux {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, busy, sel, last_sel);
        self.pick.next =
            self.s1_cqe_valid.val() & (!self.s0_cqe_valid.val() | !self.last_sel.q.val());
        if self.busy.q.val() {
            self.pick.next = self.sel.q.val();
        }
        self.m_cqe_valid.next = self.s0_cqe_valid.val();
        self.m_cqe_cq.next = self.s0_cqe_cq.val();
        self.m_cqe_data.next = self.s0_cqe_data.val();
        self.m_cqe_last.next = self.s0_cqe_last.val();
        if self.pick.val() {
            self.m_cqe_valid.next = self.s1_cqe_valid.val();
            self.m_cqe_cq.next = self.s1_cqe_cq.val();
            self.m_cqe_data.next = self.s1_cqe_data.val();
            self.m_cqe_last.next = self.s1_cqe_last.val();
        }
        self.s0_cqe_ready.next = self.m_cqe_ready.val() & !self.pick.val() & !self.reset.val();
        self.s1_cqe_ready.next = self.m_cqe_ready.val() & self.pick.val() & !self.reset.val();
        self.busy.d.next = self.busy.q.val();
        self.sel.d.next = self.sel.q.val();
        self.last_sel.d.next = self.last_sel.q.val();
        if self.m_cqe_valid.val() & self.m_cqe_ready.val() & !self.reset.val() {
            self.busy.d.next = !self.m_cqe_last.val();
            self.sel.d.next = self.pick.val();
            if self.m_cqe_last.val() {
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
