//! Clock-domain crossings of the board wrapper: the stream FIFO between the MAC domains and
//! the core (rust-hdl's gray-coded `AsynchronousFIFO`) and a pulse synchronizer for events.

use rust_hdl::prelude::*;

/// Width of a stream beat through a crossing: tdata (64), tkeep (8), tlast, tuser.
pub const BEAT_BITS: usize = 74;

declare_async_fifo!(CdcFifo, Bits<74>, 16, 1);

/// One-cycle pulses from one domain to another (a toggle crossing, then an edge detector).
/// Pulses closer together than about three destination clocks merge.
#[derive(LogicBlock, Default)]
pub struct PulseSync {
    pub src_clock: Signal<In, Clock>,
    pub src_pulse: Signal<In, Bit>,
    pub dst_clock: Signal<In, Clock>,
    pub dst_pulse: Signal<Out, Bit>,
    toggle: DFF<Bit>,
    s1: DFF<Bit>,
    s2: DFF<Bit>,
    s3: DFF<Bit>,
}

impl Logic for PulseSync {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, src_clock, toggle);
        dff_setup!(self, dst_clock, s1, s2, s3);
        if self.src_pulse.val() {
            self.toggle.d.next = !self.toggle.q.val();
        }
        self.s1.d.next = self.toggle.q.val();
        self.s2.d.next = self.s1.q.val();
        self.s3.d.next = self.s2.q.val();
        self.dst_pulse.next = self.s2.q.val() ^ self.s3.q.val();
    }
}
