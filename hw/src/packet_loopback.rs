//! The packet layer in loopback: the receive parser's header channel and payload stream feed
//! the transmit builder directly, so every accepted RoCEv2 frame leaves rebuilt from its parsed
//! fields. Frames from the MAC in; rebuilt frames and the bypass stream out; the counters of both
//! halves. It proves the two halves agree on the header word (a frame comes back byte for byte
//! only if every field survives the trip), and it is what `rnic sim loopback` runs.

use rust_hdl::prelude::*;

use crate::rx_parser::RxParser;
use crate::tx_builder::TxBuilder;

#[derive(LogicBlock)]
pub struct PacketLoopback {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    /// Set by the MAC on the last beat of a frame it found bad.
    pub s_axis_tuser: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    /// Rebuilt frames (`tuser` marks a frame to send with a bad FCS).
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    /// Non-RoCEv2 frames, unchanged.
    pub m_bypass_tdata: Signal<Out, Bits<64>>,
    pub m_bypass_tkeep: Signal<Out, Bits<8>>,
    pub m_bypass_tlast: Signal<Out, Bit>,
    pub m_bypass_tvalid: Signal<Out, Bit>,
    pub m_bypass_tuser: Signal<Out, Bit>,
    pub m_bypass_tready: Signal<In, Bit>,
    /// The receive parser's counters ([`crate::rx_parser::COUNTERS`]).
    pub cnt_frames: Signal<Out, Bits<32>>,
    pub cnt_accepted: Signal<Out, Bits<32>>,
    pub cnt_bypass: Signal<Out, Bits<32>>,
    pub cnt_drop_oversize: Signal<Out, Bits<32>>,
    pub cnt_drop_truncated: Signal<Out, Bits<32>>,
    pub cnt_drop_fragment: Signal<Out, Bits<32>>,
    pub cnt_drop_checksum: Signal<Out, Bits<32>>,
    pub cnt_drop_length: Signal<Out, Bits<32>>,
    pub cnt_drop_tver: Signal<Out, Bits<32>>,
    pub cnt_drop_opcode: Signal<Out, Bits<32>>,
    pub cnt_drop_padcnt: Signal<Out, Bits<32>>,
    pub cnt_drop_icrc: Signal<Out, Bits<32>>,
    /// The transmit builder's counters ([`crate::tx_builder::TX_COUNTERS`], prefixed `tx_`).
    pub tx_cnt_frames: Signal<Out, Bits<32>>,
    pub tx_cnt_len_err: Signal<Out, Bits<32>>,
    rx: RxParser,
    tx: TxBuilder,
}

impl PacketLoopback {
    pub fn new() -> Self {
        PacketLoopback {
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
            m_bypass_tdata: Default::default(),
            m_bypass_tkeep: Default::default(),
            m_bypass_tlast: Default::default(),
            m_bypass_tvalid: Default::default(),
            m_bypass_tuser: Default::default(),
            m_bypass_tready: Default::default(),
            cnt_frames: Default::default(),
            cnt_accepted: Default::default(),
            cnt_bypass: Default::default(),
            cnt_drop_oversize: Default::default(),
            cnt_drop_truncated: Default::default(),
            cnt_drop_fragment: Default::default(),
            cnt_drop_checksum: Default::default(),
            cnt_drop_length: Default::default(),
            cnt_drop_tver: Default::default(),
            cnt_drop_opcode: Default::default(),
            cnt_drop_padcnt: Default::default(),
            cnt_drop_icrc: Default::default(),
            tx_cnt_frames: Default::default(),
            tx_cnt_len_err: Default::default(),
            rx: RxParser::new(),
            tx: TxBuilder::new(),
        }
    }
}

impl Default for PacketLoopback {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for PacketLoopback {
    #[hdl_gen]
    fn update(&mut self) {
        self.rx.clock.next = self.clock.val();
        self.tx.clock.next = self.clock.val();
        self.rx.reset.next = self.reset.val();
        self.tx.reset.next = self.reset.val();
        // MAC side in.
        self.rx.s_axis_tdata.next = self.s_axis_tdata.val();
        self.rx.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.rx.s_axis_tlast.next = self.s_axis_tlast.val();
        self.rx.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.rx.s_axis_tuser.next = self.s_axis_tuser.val();
        self.s_axis_tready.next = self.rx.s_axis_tready.val();
        // Header channel and payload, receive to transmit.
        self.tx.s_hdr_data.next = self.rx.m_hdr_data.val();
        self.tx.s_hdr_valid.next = self.rx.m_hdr_valid.val();
        self.rx.m_hdr_ready.next = self.tx.s_hdr_ready.val();
        self.tx.s_axis_tdata.next = self.rx.m_axis_tdata.val();
        self.tx.s_axis_tkeep.next = self.rx.m_axis_tkeep.val();
        self.tx.s_axis_tlast.next = self.rx.m_axis_tlast.val();
        self.tx.s_axis_tvalid.next = self.rx.m_axis_tvalid.val();
        // The parser passes on only payloads it has checked: none is marked bad.
        self.tx.s_axis_tuser.next = false;
        self.rx.m_axis_tready.next = self.tx.s_axis_tready.val();
        // MAC side out.
        self.m_axis_tdata.next = self.tx.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.tx.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.tx.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.tx.m_axis_tvalid.val();
        self.m_axis_tuser.next = self.tx.m_axis_tuser.val();
        self.tx.m_axis_tready.next = self.m_axis_tready.val();
        self.m_bypass_tdata.next = self.rx.m_bypass_tdata.val();
        self.m_bypass_tkeep.next = self.rx.m_bypass_tkeep.val();
        self.m_bypass_tlast.next = self.rx.m_bypass_tlast.val();
        self.m_bypass_tvalid.next = self.rx.m_bypass_tvalid.val();
        self.m_bypass_tuser.next = self.rx.m_bypass_tuser.val();
        self.rx.m_bypass_tready.next = self.m_bypass_tready.val();
        // Counters.
        self.cnt_frames.next = self.rx.cnt_frames.val();
        self.cnt_accepted.next = self.rx.cnt_accepted.val();
        self.cnt_bypass.next = self.rx.cnt_bypass.val();
        self.cnt_drop_oversize.next = self.rx.cnt_drop_oversize.val();
        self.cnt_drop_truncated.next = self.rx.cnt_drop_truncated.val();
        self.cnt_drop_fragment.next = self.rx.cnt_drop_fragment.val();
        self.cnt_drop_checksum.next = self.rx.cnt_drop_checksum.val();
        self.cnt_drop_length.next = self.rx.cnt_drop_length.val();
        self.cnt_drop_tver.next = self.rx.cnt_drop_tver.val();
        self.cnt_drop_opcode.next = self.rx.cnt_drop_opcode.val();
        self.cnt_drop_padcnt.next = self.rx.cnt_drop_padcnt.val();
        self.cnt_drop_icrc.next = self.rx.cnt_drop_icrc.val();
        self.tx_cnt_frames.next = self.tx.cnt_frames.val();
        self.tx_cnt_len_err.next = self.tx.cnt_len_err.val();
    }
}
