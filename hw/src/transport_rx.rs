//! The receive side of the transport's packet path: the receive parser, its header channel
//! compacted to transport headers ([`crate::header_compact`]) into a header FIFO
//! ([`crate::header_fifo`], [`HDR_FIFO_DEPTH`] deep), and the demultiplexer by opcode class
//! ([`crate::opcode_demux`]). Frames from the MAC in; requests to the responder, responses to
//! the completer, CNPs to the congestion logic, other frames on the bypass stream, out.
//!
//! The FIFO decouples the parser from the engines: while an engine reads its tables over
//! several clocks, the parser goes on accepting frames, their payloads waiting in its 2 KB
//! payload FIFO and their headers here. The input stalls only when the FIFO is full (or the
//! payload FIFO is), that is, when the engines fall behind the line for longer than the FIFO
//! covers.
//!
//! Between the FIFO and the demultiplexer a register slice ([`crate::header_register`]):
//! an engine's header ready is combinational from its state and passes through the
//! demultiplexer, and it would otherwise reach the FIFO's read pointer and LUT-RAM address
//! (113.4 MHz on one seed of the 1024-row responder path on LFE5UM5G-85F-8). The slice
//! passes a header every two clocks; a frame takes at least eight. It sits before the
//! demultiplexer, not after it, so an engine still has each header before its payload.

use rust_hdl::prelude::*;

use crate::header_compact::HeaderCompact;
use crate::header_fifo::HeaderFifo;
use crate::header_register::HeaderRegister;
use crate::opcode_demux::OpcodeDemux;
use crate::rx_parser::RxParser;
use crate::transport_header::TH_BITS;

/// Address bits of the header FIFO: 16 headers (14 in its RAM, 2 in its registers).
pub const HDR_FIFO_ABITS: usize = 4;
/// Headers the FIFO holds.
pub const HDR_FIFO_DEPTH: usize = 1 << HDR_FIFO_ABITS;

#[derive(LogicBlock, Default)]
pub struct TransportRx {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Frames from the MAC (no FCS).
    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    /// Set by the MAC on the last beat of a frame it found bad.
    pub s_axis_tuser: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    /// Requests and their payloads, to the responder.
    pub m_req_hdr_data: Signal<Out, Bits<TH_BITS>>,
    pub m_req_hdr_valid: Signal<Out, Bit>,
    pub m_req_hdr_ready: Signal<In, Bit>,
    pub m_req_axis_tdata: Signal<Out, Bits<64>>,
    pub m_req_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_req_axis_tlast: Signal<Out, Bit>,
    pub m_req_axis_tvalid: Signal<Out, Bit>,
    pub m_req_axis_tready: Signal<In, Bit>,
    /// Responses and ACKs, with READ response payloads, to the completer.
    pub m_resp_hdr_data: Signal<Out, Bits<TH_BITS>>,
    pub m_resp_hdr_valid: Signal<Out, Bit>,
    pub m_resp_hdr_ready: Signal<In, Bit>,
    pub m_resp_axis_tdata: Signal<Out, Bits<64>>,
    pub m_resp_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_resp_axis_tlast: Signal<Out, Bit>,
    pub m_resp_axis_tvalid: Signal<Out, Bit>,
    pub m_resp_axis_tready: Signal<In, Bit>,
    /// CNPs to the congestion logic.
    pub m_cnp_hdr_data: Signal<Out, Bits<TH_BITS>>,
    pub m_cnp_hdr_valid: Signal<Out, Bit>,
    pub m_cnp_hdr_ready: Signal<In, Bit>,
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
    /// Accepted packets no engine takes (UC), dropped by the demultiplexer.
    pub cnt_drop_class: Signal<Out, Bits<32>>,
    /// Headers waiting in the FIFO and the slice after it.
    pub hdr_fill: Signal<Out, Bits<8>>,
    rx: RxParser,
    compact: HeaderCompact,
    fifo: HeaderFifo<TH_BITS, HDR_FIFO_ABITS>,
    slice: HeaderRegister<TH_BITS>,
    demux: OpcodeDemux,
    /// Headers in the slice (0 or 1), added to the FIFO's for `hdr_fill`.
    slice_n: Signal<Local, Bits<8>>,
}

impl Logic for TransportRx {
    #[hdl_gen]
    fn update(&mut self) {
        self.rx.clock.next = self.clock.val();
        self.fifo.clock.next = self.clock.val();
        self.slice.clock.next = self.clock.val();
        self.slice.reset.next = self.reset.val();
        self.demux.clock.next = self.clock.val();
        self.rx.reset.next = self.reset.val();
        self.fifo.reset.next = self.reset.val();
        self.demux.reset.next = self.reset.val();
        // MAC side in.
        self.rx.s_axis_tdata.next = self.s_axis_tdata.val();
        self.rx.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.rx.s_axis_tlast.next = self.s_axis_tlast.val();
        self.rx.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.rx.s_axis_tuser.next = self.s_axis_tuser.val();
        self.s_axis_tready.next = self.rx.s_axis_tready.val();
        // Header channel -> transport header -> FIFO -> slice -> demultiplexer.
        self.compact.rec.next = self.rx.m_hdr_data.val();
        self.fifo.s_data.next = self.compact.th.val();
        self.fifo.s_valid.next = self.rx.m_hdr_valid.val();
        self.rx.m_hdr_ready.next = self.fifo.s_ready.val();
        self.slice.s_data.next = self.fifo.m_data.val();
        self.slice.s_valid.next = self.fifo.m_valid.val();
        self.fifo.m_ready.next = self.slice.s_ready.val();
        self.demux.s_hdr_data.next = self.slice.m_data.val();
        self.demux.s_hdr_valid.next = self.slice.m_valid.val();
        self.slice.m_ready.next = self.demux.s_hdr_ready.val();
        self.slice_n.next = 0.into();
        if self.slice.m_valid.val() {
            self.slice_n.next = 1.into();
        }
        self.hdr_fill.next = self.fifo.fill.val() + self.slice_n.val();
        // Payload stream -> demultiplexer.
        self.demux.s_axis_tdata.next = self.rx.m_axis_tdata.val();
        self.demux.s_axis_tkeep.next = self.rx.m_axis_tkeep.val();
        self.demux.s_axis_tlast.next = self.rx.m_axis_tlast.val();
        self.demux.s_axis_tvalid.next = self.rx.m_axis_tvalid.val();
        self.rx.m_axis_tready.next = self.demux.s_axis_tready.val();
        // Engines.
        self.m_req_hdr_data.next = self.demux.m_req_hdr_data.val();
        self.m_req_hdr_valid.next = self.demux.m_req_hdr_valid.val();
        self.demux.m_req_hdr_ready.next = self.m_req_hdr_ready.val();
        self.m_req_axis_tdata.next = self.demux.m_req_axis_tdata.val();
        self.m_req_axis_tkeep.next = self.demux.m_req_axis_tkeep.val();
        self.m_req_axis_tlast.next = self.demux.m_req_axis_tlast.val();
        self.m_req_axis_tvalid.next = self.demux.m_req_axis_tvalid.val();
        self.demux.m_req_axis_tready.next = self.m_req_axis_tready.val();
        self.m_resp_hdr_data.next = self.demux.m_resp_hdr_data.val();
        self.m_resp_hdr_valid.next = self.demux.m_resp_hdr_valid.val();
        self.demux.m_resp_hdr_ready.next = self.m_resp_hdr_ready.val();
        self.m_resp_axis_tdata.next = self.demux.m_resp_axis_tdata.val();
        self.m_resp_axis_tkeep.next = self.demux.m_resp_axis_tkeep.val();
        self.m_resp_axis_tlast.next = self.demux.m_resp_axis_tlast.val();
        self.m_resp_axis_tvalid.next = self.demux.m_resp_axis_tvalid.val();
        self.demux.m_resp_axis_tready.next = self.m_resp_axis_tready.val();
        self.m_cnp_hdr_data.next = self.demux.m_cnp_hdr_data.val();
        self.m_cnp_hdr_valid.next = self.demux.m_cnp_hdr_valid.val();
        self.demux.m_cnp_hdr_ready.next = self.m_cnp_hdr_ready.val();
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
        self.cnt_drop_class.next = self.demux.cnt_drop_class.val();
    }
}
