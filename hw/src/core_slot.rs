//! The slot where the core sits inside the board wrapper: one 64-bit AXI-Stream in from the
//! MAC, one out to the MAC, a bad-frame flag on the last beat, and event pulses for the
//! counters and LEDs. The core is the packet layer in loopback ([`PacketLoopback`]): every
//! RoCEv2 frame it accepts leaves rebuilt from its parsed fields (ICRC recomputed), every other
//! frame leaves unchanged through the bypass stream, and a RoCEv2 frame that fails a check
//! (ICRC, lengths, checksum, opcode, ...) is dropped and counted. The two streams share the
//! port a frame at a time ([`FrameMux`]).

use rust_hdl::prelude::*;

use crate::frame_mux::FrameMux;
use crate::packet_loopback::PacketLoopback;

#[derive(LogicBlock)]
pub struct CoreSlot {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    /// On the last beat: the frame is already bad.
    pub s_axis_tuser: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    /// On the last beat: the frame is bad (the MAC sends it with an inverted FCS).
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    /// Pulses when the core drops a frame, or passes on one the MAC found bad.
    pub frame_bad: Signal<Out, Bit>,
    /// Pulses when a rebuilt RoCEv2 frame leaves the core.
    pub frame_roce: Signal<Out, Bit>,
    lb: PacketLoopback,
    mux: FrameMux,
    done: Signal<Local, Bit>,
    /// The low bits of the parser's frame, accepted and bypass counters as last seen: each
    /// counts at most once per clock, so a flipped bit is a count.
    seen: DFF<Bits<3>>,
    now: Signal<Local, Bits<3>>,
    dropped: Signal<Local, Bit>,
    k_zero3: Constant<Bits<3>>,
}

impl Default for CoreSlot {
    fn default() -> Self {
        CoreSlot {
            clock: Default::default(),
            reset: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tuser: Default::default(),
            s_axis_tready: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tuser: Default::default(),
            m_axis_tready: Default::default(),
            frame_bad: Default::default(),
            frame_roce: Default::default(),
            lb: PacketLoopback::new(),
            mux: Default::default(),
            done: Default::default(),
            seen: Default::default(),
            now: Default::default(),
            dropped: Default::default(),
            k_zero3: Constant::new(bits::<3>(0)),
        }
    }
}

impl Logic for CoreSlot {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, seen);
        self.lb.clock.next = self.clock.val();
        self.lb.reset.next = self.reset.val();
        self.mux.clock.next = self.clock.val();
        self.mux.reset.next = self.reset.val();
        self.lb.s_axis_tdata.next = self.s_axis_tdata.val();
        self.lb.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.lb.s_axis_tlast.next = self.s_axis_tlast.val();
        self.lb.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.lb.s_axis_tuser.next = self.s_axis_tuser.val();
        self.s_axis_tready.next = self.lb.s_axis_tready.val();
        // Rebuilt frames on input 0, bypassed ones on input 1.
        self.mux.s0_axis_tdata.next = self.lb.m_axis_tdata.val();
        self.mux.s0_axis_tkeep.next = self.lb.m_axis_tkeep.val();
        self.mux.s0_axis_tlast.next = self.lb.m_axis_tlast.val();
        self.mux.s0_axis_tvalid.next = self.lb.m_axis_tvalid.val();
        self.mux.s0_axis_tuser.next = self.lb.m_axis_tuser.val();
        self.lb.m_axis_tready.next = self.mux.s0_axis_tready.val();
        self.mux.s1_axis_tdata.next = self.lb.m_bypass_tdata.val();
        self.mux.s1_axis_tkeep.next = self.lb.m_bypass_tkeep.val();
        self.mux.s1_axis_tlast.next = self.lb.m_bypass_tlast.val();
        self.mux.s1_axis_tvalid.next = self.lb.m_bypass_tvalid.val();
        self.mux.s1_axis_tuser.next = self.lb.m_bypass_tuser.val();
        self.lb.m_bypass_tready.next = self.mux.s1_axis_tready.val();
        self.m_axis_tdata.next = self.mux.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.mux.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.mux.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.mux.m_axis_tvalid.val();
        self.m_axis_tuser.next = self.mux.m_axis_tuser.val();
        self.mux.m_axis_tready.next = self.m_axis_tready.val();

        // ---- Events.
        self.done.next =
            self.mux.m_axis_tvalid.val() & self.m_axis_tready.val() & self.mux.m_axis_tlast.val();
        self.now.next = self
            .seen
            .q
            .val()
            .replace_bit(0, self.lb.cnt_frames.val().get_bit(0))
            .replace_bit(1, self.lb.cnt_accepted.val().get_bit(0))
            .replace_bit(2, self.lb.cnt_bypass.val().get_bit(0));
        self.seen.d.next = self.now.val();
        // A frame counted that was neither accepted nor bypassed was dropped.
        self.dropped.next = (self.now.val().get_bit(0) != self.seen.q.val().get_bit(0))
            & (self.now.val().get_bit(1) == self.seen.q.val().get_bit(1))
            & (self.now.val().get_bit(2) == self.seen.q.val().get_bit(2));
        self.frame_bad.next = self.dropped.val() | (self.done.val() & self.mux.m_axis_tuser.val());
        self.frame_roce.next = self.done.val() & !self.mux.grant.val();
        if self.reset.val() {
            self.seen.d.next = self.k_zero3.val();
        }
    }
}
