//! A register slice for a header word `W` bits wide: one word held, every output a flip-flop.
//!
//! `s_ready` is the register's emptiness, so the sink's `m_ready` never reaches the source in
//! the same clock: a word taken by the sink frees the register at the next edge, and the next
//! word enters at the one after. One word every two clocks is plenty for headers, one a frame:
//! the shortest RoCEv2 frame (Ethernet, IPv4, UDP, BTH, ICRC: 58 bytes) is 8 beats.
//!
//! Why: an engine's header ready is combinational from its state, and a FIFO's read side
//! from its reader's ready; the receive path ([`crate::transport_rx`]) puts one between its
//! header FIFO and the demultiplexer, where that path limited Fmax.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct HeaderRegister<const W: usize> {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high: the register empty.
    pub reset: Signal<In, Bit>,
    pub s_data: Signal<In, Bits<W>>,
    pub s_valid: Signal<In, Bit>,
    pub s_ready: Signal<Out, Bit>,
    pub m_data: Signal<Out, Bits<W>>,
    pub m_valid: Signal<Out, Bit>,
    pub m_ready: Signal<In, Bit>,

    full: DFF<Bit>,
    data: DFF<Bits<W>>,
}

impl<const W: usize> Logic for HeaderRegister<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, full, data);
        self.s_ready.next = !self.full.q.val();
        self.m_valid.next = self.full.q.val();
        self.m_data.next = self.data.q.val();
        if self.full.q.val() {
            if self.m_ready.val() {
                self.full.d.next = false;
            }
        } else if self.s_valid.val() {
            self.data.d.next = self.s_data.val();
            self.full.d.next = true;
        }
        if self.reset.val() {
            self.full.d.next = false;
        }
    }
}
