//! Reset synchronizer: a reset for one clock domain from a level in any other domain (the PLL's
//! lock, a button). The reset asserts two clocks after its source, is held for 15 clocks after
//! the source goes away, and is asserted for the first 15 clocks after configuration (every
//! register starts at zero), so a domain whose clock runs from power-up starts in reset.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct ResetSync {
    pub clock: Signal<In, Clock>,
    /// Reset request, any domain, active high.
    pub arst: Signal<In, Bit>,
    /// Reset of this domain, active high.
    pub rst: Signal<Out, Bit>,
    s1: DFF<Bit>,
    s2: DFF<Bit>,
    hold: DFF<Bits<4>>,
    o_rst: DFF<Bit>,
    k_one: Constant<Bits<4>>,
    k_zero: Constant<Bits<4>>,
}

impl Default for ResetSync {
    fn default() -> Self {
        ResetSync {
            clock: Default::default(),
            arst: Default::default(),
            rst: Default::default(),
            s1: Default::default(),
            s2: Default::default(),
            hold: Default::default(),
            o_rst: Default::default(),
            k_one: Constant::new(bits::<4>(1)),
            k_zero: Constant::new(bits::<4>(0)),
        }
    }
}

impl Logic for ResetSync {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, s1, s2, hold, o_rst);
        self.s1.d.next = self.arst.val();
        self.s2.d.next = self.s1.q.val();
        if !self.hold.q.val().all() {
            self.hold.d.next = self.hold.q.val() + self.k_one.val();
        }
        if self.s2.q.val() {
            self.hold.d.next = self.k_zero.val();
        }
        self.o_rst.d.next = !self.hold.q.val().all() | self.s2.q.val();
        self.rst.next = self.o_rst.q.val();
    }
}
