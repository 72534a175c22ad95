//! The clear of a block RAM after reset: block RAM keeps its contents through a reset, so an
//! engine whose table the host does not write (timers, scheduled bits) walks every row once,
//! one per clock, while `busy` holds its other work off. The parent writes zero at `addr`
//! while `busy` is high.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct RamClear<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Clearing: the parent writes zero at `addr` this clock.
    pub busy: Signal<Out, Bit>,
    pub addr: Signal<Out, Bits<A>>,

    on: DFF<Bit>,
    idx: DFF<Bits<A>>,
    k_one: Constant<Bits<A>>,
    k_zero: Constant<Bits<A>>,
    k_last: Constant<Bits<A>>,
}

impl<const A: usize> Default for RamClear<A> {
    fn default() -> Self {
        RamClear {
            clock: Default::default(),
            reset: Default::default(),
            busy: Default::default(),
            addr: Default::default(),
            on: Default::default(),
            idx: Default::default(),
            k_one: Constant::new(bits::<A>(1)),
            k_zero: Constant::new(bits::<A>(0)),
            k_last: Constant::new(bits::<A>((1 << A) - 1)),
        }
    }
}

impl<const A: usize> Logic for RamClear<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, on, idx);
        self.busy.next = self.on.q.val();
        self.addr.next = self.idx.q.val();
        self.on.d.next = self.on.q.val();
        self.idx.d.next = self.idx.q.val();
        if self.on.q.val() {
            self.idx.d.next = self.idx.q.val() + self.k_one.val();
            if self.idx.q.val() == self.k_last.val() {
                self.on.d.next = false;
            }
        }
        if self.reset.val() {
            self.on.d.next = true;
            self.idx.d.next = self.k_zero.val();
        }
    }
}
