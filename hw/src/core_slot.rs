//! The slot where the core sits inside the board wrapper: one 64-bit AXI-Stream in from the
//! MAC, one out to the MAC, a bad-frame flag on the last beat, and event pulses for the
//! counters and LEDs. Today the core is the ICRC engine in RX mode (it checks the ICRC of
//! every RoCEv2 frame); swapping in the packet layer later touches only this file.

use rust_hdl::prelude::*;

use crate::icrc_engine::{IcrcEngine, Mode};

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
    /// Pulses when a frame the core found bad leaves it.
    pub frame_bad: Signal<Out, Bit>,
    /// Pulses when a RoCEv2 frame leaves the core.
    pub frame_roce: Signal<Out, Bit>,
    engine: IcrcEngine,
    done: Signal<Local, Bit>,
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
            engine: IcrcEngine::new(Mode::Rx),
            done: Default::default(),
        }
    }
}

impl Logic for CoreSlot {
    #[hdl_gen]
    fn update(&mut self) {
        self.engine.clock.next = self.clock.val();
        self.engine.reset.next = self.reset.val();
        self.engine.s_axis_tdata.next = self.s_axis_tdata.val();
        self.engine.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.engine.s_axis_tlast.next = self.s_axis_tlast.val();
        self.engine.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.engine.s_axis_tuser.next = self.s_axis_tuser.val();
        self.s_axis_tready.next = self.engine.s_axis_tready.val();
        self.m_axis_tdata.next = self.engine.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.engine.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.engine.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.engine.m_axis_tvalid.val();
        self.m_axis_tuser.next = self.engine.m_axis_tuser.val().get_bit(0);
        self.engine.m_axis_tready.next = self.m_axis_tready.val();
        self.done.next = self.engine.m_axis_tvalid.val()
            & self.m_axis_tready.val()
            & self.engine.m_axis_tlast.val();
        self.frame_bad.next = self.done.val() & self.engine.m_axis_tuser.val().get_bit(0);
        self.frame_roce.next = self.done.val() & self.engine.m_axis_tuser.val().get_bit(1);
    }
}
