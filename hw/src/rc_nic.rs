//! The RC transport of one NIC in one top: the responder path ([`crate::responder_path`]:
//! the receive path, the responder, the QP attribute, memory region and address vector
//! tables, the transmit path) and the sending side ([`crate::requester_path`]: scheduler,
//! requester, completer, timers) joined, frames from the MAC in and frames to the MAC out.
//!
//! Inside:
//! - the receive path hands requests to the responder and responses and ACKs to the
//!   completer; CNPs are taken and dropped here (the reaction point is the DCQCN issue's);
//! - the requester's packets share the transmit path with the responder's, one packet (its
//!   descriptor, then its payload) at a time ([`crate::desc_mux`]), each with its QP's address
//!   vector;
//! - the sending side looks up QP attribute and memory region rows in the responder path's
//!   tables, when the responder does not look in the same clock;
//! - one DMA port for both ([`crate::dma_arbiter`]; tag bit 2: 0 the responder, 1 the sending
//!   side, whose own tag below says which of its engines) and one completion port
//!   ([`crate::cqe_mux`], a whole entry at a time).
//!
//! Outside: the host's table windows, doorbells and QP starts (the responder's with the
//! expected PSN, the sending side's with its SQ_PSN, ring consumer and retry counts), the
//! send and receive rings' lookups (the queue manager's answers), the DMA port, completions,
//! the frames that are not RoCEv2 (for the raw receive ring), and counters.
//!
//! `A` is log2 of the QPs, `R` of the responder's READ/atomic slots, `F` of its READ FIFO's
//! words, `G` of the requester's payload FIFO words.

use rust_hdl::prelude::*;

use crate::cqe_mux::CqeMux;
use crate::dma_arbiter::DmaArbiter;
use crate::requester_path::RequesterPath;
use crate::responder_path::ResponderPath;

#[derive(LogicBlock, Default)]
pub struct RcNic<const A: usize, const R: usize, const F: usize, const G: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Frames from the MAC (no FCS; `tuser` marks a bad frame).
    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tuser: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    /// Frames to the MAC: requests, responses, ACKs and NAKs.
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    /// Frames that are not RoCEv2 (to the raw receive queue).
    pub m_bypass_tdata: Signal<Out, Bits<64>>,
    pub m_bypass_tkeep: Signal<Out, Bits<8>>,
    pub m_bypass_tlast: Signal<Out, Bit>,
    pub m_bypass_tvalid: Signal<Out, Bit>,
    pub m_bypass_tuser: Signal<Out, Bit>,
    pub m_bypass_tready: Signal<In, Bit>,
    /// Our MAC, GID and IPv4 TTL; the AckReq interval, the window of unacknowledged PSNs and
    /// the clocks per timer tick.
    pub src_mac: Signal<In, Bits<48>>,
    pub sgid: Signal<In, Bits<128>>,
    pub ttl: Signal<In, Bits<8>>,
    pub ack_every: Signal<In, Bits<8>>,
    pub max_unacked: Signal<In, Bits<24>>,
    pub tick_cycles: Signal<In, Bits<16>>,
    /// The tables' register windows: row, word (7 commits the row) and data.
    pub qp_wr_en: Signal<In, Bit>,
    pub qp_wr_row: Signal<In, Bits<A>>,
    pub qp_wr_word: Signal<In, Bits<3>>,
    pub qp_wr_data: Signal<In, Bits<32>>,
    pub mr_wr_en: Signal<In, Bit>,
    pub mr_wr_row: Signal<In, Bits<A>>,
    pub mr_wr_word: Signal<In, Bits<3>>,
    pub mr_wr_data: Signal<In, Bits<32>>,
    pub av_wr_en: Signal<In, Bit>,
    pub av_wr_row: Signal<In, Bits<A>>,
    pub av_wr_word: Signal<In, Bits<3>>,
    pub av_wr_data: Signal<In, Bits<32>>,
    /// A QP's responder starting (RTR): its expected PSN.
    pub s_resp_init_valid: Signal<In, Bit>,
    pub s_resp_init_ready: Signal<Out, Bit>,
    pub s_resp_init_qp: Signal<In, Bits<A>>,
    pub s_resp_init_psn: Signal<In, Bits<24>>,
    /// A QP's sending side starting (RTS): SQ_PSN, its ring's consumer, RETRY_CNT, RNR_RETRY.
    pub s_req_init_valid: Signal<In, Bit>,
    pub s_req_init_ready: Signal<Out, Bit>,
    pub s_req_init_qp: Signal<In, Bits<A>>,
    pub s_req_init_psn: Signal<In, Bits<24>>,
    pub s_req_init_index: Signal<In, Bits<16>>,
    pub s_req_init_retry: Signal<In, Bits<3>>,
    pub s_req_init_rnr: Signal<In, Bits<3>>,
    /// A send ring's producer moved.
    pub db_valid: Signal<In, Bit>,
    pub db_queue: Signal<In, Bits<A>>,
    /// Send rings: base, size, producer (answered when `sq_got_valid`).
    pub sq_look_valid: Signal<Out, Bit>,
    pub sq_look_ready: Signal<In, Bit>,
    pub sq_look_queue: Signal<Out, Bits<A>>,
    pub sq_got_valid: Signal<In, Bit>,
    pub sq_got_base: Signal<In, Bits<64>>,
    pub sq_got_size: Signal<In, Bits<32>>,
    pub sq_got_prod: Signal<In, Bits<16>>,
    /// Receive rings and their consumers' commits.
    pub rq_look_valid: Signal<Out, Bit>,
    pub rq_look_ready: Signal<In, Bit>,
    pub rq_look_queue: Signal<Out, Bits<A>>,
    pub rq_got_valid: Signal<In, Bit>,
    pub rq_got_base: Signal<In, Bits<64>>,
    pub rq_got_size: Signal<In, Bits<32>>,
    pub rq_got_prod: Signal<In, Bits<16>>,
    pub rq_got_cons: Signal<In, Bits<16>>,
    pub rq_commit_valid: Signal<Out, Bit>,
    pub rq_commit_ready: Signal<In, Bit>,
    pub rq_commit_queue: Signal<Out, Bits<A>>,
    pub rq_commit_index: Signal<Out, Bits<16>>,
    /// The DMA port (tag bit 2: 0 the responder, 1 the sending side).
    pub m_dma_rd_req_valid: Signal<Out, Bit>,
    pub m_dma_rd_req_ready: Signal<In, Bit>,
    pub m_dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_rd_req_len: Signal<Out, Bits<16>>,
    pub m_dma_rd_req_tag: Signal<Out, Bits<3>>,
    pub m_dma_rd_data_valid: Signal<In, Bit>,
    pub m_dma_rd_data_ready: Signal<Out, Bit>,
    pub m_dma_rd_data: Signal<In, Bits<64>>,
    pub m_dma_rd_data_last: Signal<In, Bit>,
    pub m_dma_rd_data_err: Signal<In, Bit>,
    pub m_dma_rd_data_tag: Signal<In, Bits<3>>,
    pub m_dma_wr_req_valid: Signal<Out, Bit>,
    pub m_dma_wr_req_ready: Signal<In, Bit>,
    pub m_dma_wr_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_wr_req_len: Signal<Out, Bits<16>>,
    pub m_dma_wr_req_tag: Signal<Out, Bits<3>>,
    pub m_dma_wr_data_valid: Signal<Out, Bit>,
    pub m_dma_wr_data_ready: Signal<In, Bit>,
    pub m_dma_wr_data: Signal<Out, Bits<64>>,
    pub m_dma_wr_data_keep: Signal<Out, Bits<8>>,
    pub m_dma_wr_data_last: Signal<Out, Bit>,
    pub m_dma_wr_done_valid: Signal<In, Bit>,
    pub m_dma_wr_done_tag: Signal<In, Bits<3>>,
    pub m_dma_wr_done_err: Signal<In, Bit>,
    /// Completions of both sides: a `cqe`'s four beats, the CQ on each.
    pub m_cqe_valid: Signal<Out, Bit>,
    pub m_cqe_ready: Signal<In, Bit>,
    pub m_cqe_cq: Signal<Out, Bits<16>>,
    pub m_cqe_data: Signal<Out, Bits<64>>,
    pub m_cqe_last: Signal<Out, Bit>,
    /// Counters: requests executed and dropped by the responder; packets sent first and
    /// again, responses taken and dropped, ACK timeouts and RNR ends by the sending side;
    /// frames in, accepted, dropped for a bad ICRC, frames out.
    pub cnt_executed: Signal<Out, Bits<32>>,
    pub cnt_req_dropped: Signal<Out, Bits<32>>,
    pub cnt_packets: Signal<Out, Bits<32>>,
    pub cnt_retransmitted: Signal<Out, Bits<32>>,
    pub cnt_responses: Signal<Out, Bits<32>>,
    pub cnt_resp_dropped: Signal<Out, Bits<32>>,
    pub cnt_expiries: Signal<Out, Bits<32>>,
    pub rx_cnt_frames: Signal<Out, Bits<32>>,
    pub rx_cnt_accepted: Signal<Out, Bits<32>>,
    pub rx_cnt_drop_icrc: Signal<Out, Bits<32>>,
    pub tx_cnt_frames: Signal<Out, Bits<32>>,
    /// Clearing tables after a reset.
    pub busy: Signal<Out, Bit>,

    resp: ResponderPath<A, R, F>,
    send: RequesterPath<A, G>,
    dma: DmaArbiter<2, 3>,
    cqe: CqeMux,
}

impl<const A: usize, const R: usize, const F: usize, const G: usize> RcNic<A, R, F, G> {
    pub const ROWS: usize = 1 << A;
}

impl<const A: usize, const R: usize, const F: usize, const G: usize> Logic for RcNic<A, R, F, G> {
    #[hdl_gen]
    fn update(&mut self) {
        self.resp.clock.next = self.clock.val();
        self.resp.reset.next = self.reset.val();
        self.send.clock.next = self.clock.val();
        self.send.reset.next = self.reset.val();
        self.dma.clock.next = self.clock.val();
        self.dma.reset.next = self.reset.val();
        self.cqe.clock.next = self.clock.val();
        self.cqe.reset.next = self.reset.val();
        self.busy.next = self.send.busy.val();

        // ---- Frames in and out; what the receive path hands on.
        self.resp.s_axis_tdata.next = self.s_axis_tdata.val();
        self.resp.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.resp.s_axis_tlast.next = self.s_axis_tlast.val();
        self.resp.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.resp.s_axis_tuser.next = self.s_axis_tuser.val();
        self.s_axis_tready.next = self.resp.s_axis_tready.val();
        self.m_axis_tdata.next = self.resp.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.resp.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.resp.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.resp.m_axis_tvalid.val();
        self.m_axis_tuser.next = self.resp.m_axis_tuser.val();
        self.resp.m_axis_tready.next = self.m_axis_tready.val();
        self.m_bypass_tdata.next = self.resp.m_bypass_tdata.val();
        self.m_bypass_tkeep.next = self.resp.m_bypass_tkeep.val();
        self.m_bypass_tlast.next = self.resp.m_bypass_tlast.val();
        self.m_bypass_tvalid.next = self.resp.m_bypass_tvalid.val();
        self.m_bypass_tuser.next = self.resp.m_bypass_tuser.val();
        self.resp.m_bypass_tready.next = self.m_bypass_tready.val();
        self.resp.m_cnp_hdr_ready.next = true;
        self.send.s_hdr_valid.next = self.resp.m_resp_hdr_valid.val();
        self.resp.m_resp_hdr_ready.next = self.send.s_hdr_ready.val();
        self.send.s_hdr_data.next = self.resp.m_resp_hdr_data.val();
        self.send.s_axis_tdata.next = self.resp.m_resp_axis_tdata.val();
        self.send.s_axis_tkeep.next = self.resp.m_resp_axis_tkeep.val();
        self.send.s_axis_tlast.next = self.resp.m_resp_axis_tlast.val();
        self.send.s_axis_tvalid.next = self.resp.m_resp_axis_tvalid.val();
        self.resp.m_resp_axis_tready.next = self.send.s_axis_tready.val();
        // The sending side's packets into the shared transmit path.
        self.resp.s_req_desc_valid.next = self.send.m_desc_valid.val();
        self.send.m_desc_ready.next = self.resp.s_req_desc_ready.val();
        self.resp.s_req_desc_data.next = self.send.m_desc_data.val();
        self.resp.s_req_desc_qp.next = self.send.m_desc_qp.val();
        self.resp.s_req_axis_tdata.next = self.send.m_axis_tdata.val();
        self.resp.s_req_axis_tkeep.next = self.send.m_axis_tkeep.val();
        self.resp.s_req_axis_tlast.next = self.send.m_axis_tlast.val();
        self.resp.s_req_axis_tvalid.next = self.send.m_axis_tvalid.val();
        self.resp.s_req_axis_tuser.next = self.send.m_axis_tuser.val();
        self.send.m_axis_tready.next = self.resp.s_req_axis_tready.val();

        // ---- Settings, tables, starts, doorbells.
        self.resp.src_mac.next = self.src_mac.val();
        self.resp.sgid.next = self.sgid.val();
        self.resp.ttl.next = self.ttl.val();
        self.send.ack_every.next = self.ack_every.val();
        self.send.max_unacked.next = self.max_unacked.val();
        self.send.tick_cycles.next = self.tick_cycles.val();
        self.resp.qp_wr_en.next = self.qp_wr_en.val();
        self.resp.qp_wr_row.next = self.qp_wr_row.val();
        self.resp.qp_wr_word.next = self.qp_wr_word.val();
        self.resp.qp_wr_data.next = self.qp_wr_data.val();
        self.resp.mr_wr_en.next = self.mr_wr_en.val();
        self.resp.mr_wr_row.next = self.mr_wr_row.val();
        self.resp.mr_wr_word.next = self.mr_wr_word.val();
        self.resp.mr_wr_data.next = self.mr_wr_data.val();
        self.resp.av_wr_en.next = self.av_wr_en.val();
        self.resp.av_wr_row.next = self.av_wr_row.val();
        self.resp.av_wr_word.next = self.av_wr_word.val();
        self.resp.av_wr_data.next = self.av_wr_data.val();
        self.resp.req_qp_look_valid.next = self.send.qp_look_valid.val();
        self.send.qp_look_ready.next = self.resp.req_qp_look_ready.val();
        self.resp.req_qp_look_row.next = self.send.qp_look_row.val();
        self.send.qp_got_data.next = self.resp.req_qp_got_data.val();
        self.resp.req_mr_look_valid.next = self.send.mr_look_valid.val();
        self.send.mr_look_ready.next = self.resp.req_mr_look_ready.val();
        self.resp.req_mr_look_row.next = self.send.mr_look_row.val();
        self.send.mr_got_data.next = self.resp.req_mr_got_data.val();
        self.resp.s_init_valid.next = self.s_resp_init_valid.val();
        self.s_resp_init_ready.next = self.resp.s_init_ready.val();
        self.resp.s_init_qp.next = self.s_resp_init_qp.val();
        self.resp.s_init_psn.next = self.s_resp_init_psn.val();
        self.send.s_init_valid.next = self.s_req_init_valid.val();
        self.s_req_init_ready.next = self.send.s_init_ready.val();
        self.send.s_init_qp.next = self.s_req_init_qp.val();
        self.send.s_init_psn.next = self.s_req_init_psn.val();
        self.send.s_init_index.next = self.s_req_init_index.val();
        self.send.s_init_retry.next = self.s_req_init_retry.val();
        self.send.s_init_rnr.next = self.s_req_init_rnr.val();
        self.send.db_valid.next = self.db_valid.val();
        self.send.db_queue.next = self.db_queue.val();

        // ---- Rings.
        self.sq_look_valid.next = self.send.sq_look_valid.val();
        self.send.sq_look_ready.next = self.sq_look_ready.val();
        self.sq_look_queue.next = self.send.sq_look_queue.val();
        self.send.sq_got_valid.next = self.sq_got_valid.val();
        self.send.sq_got_base.next = self.sq_got_base.val();
        self.send.sq_got_size.next = self.sq_got_size.val();
        self.send.sq_got_prod.next = self.sq_got_prod.val();
        self.rq_look_valid.next = self.resp.rq_look_valid.val();
        self.resp.rq_look_ready.next = self.rq_look_ready.val();
        self.rq_look_queue.next = self.resp.rq_look_queue.val();
        self.resp.rq_got_valid.next = self.rq_got_valid.val();
        self.resp.rq_got_base.next = self.rq_got_base.val();
        self.resp.rq_got_size.next = self.rq_got_size.val();
        self.resp.rq_got_prod.next = self.rq_got_prod.val();
        self.resp.rq_got_cons.next = self.rq_got_cons.val();
        self.rq_commit_valid.next = self.resp.rq_commit_valid.val();
        self.resp.rq_commit_ready.next = self.rq_commit_ready.val();
        self.rq_commit_queue.next = self.resp.rq_commit_queue.val();
        self.rq_commit_index.next = self.resp.rq_commit_index.val();

        // ---- DMA: the responder is client 0 (no tag of its own), the sending side client 1.
        self.dma.s0_rd_req_valid.next = self.resp.m_dma_rd_req_valid.val();
        self.resp.m_dma_rd_req_ready.next = self.dma.s0_rd_req_ready.val();
        self.dma.s0_rd_req_addr.next = self.resp.m_dma_rd_req_addr.val();
        self.dma.s0_rd_req_len.next = self.resp.m_dma_rd_req_len.val();
        self.dma.s0_rd_req_tag.next = 0.into();
        self.resp.m_dma_rd_data_valid.next = self.dma.s0_rd_data_valid.val();
        self.dma.s0_rd_data_ready.next = self.resp.m_dma_rd_data_ready.val();
        self.resp.m_dma_rd_data.next = self.dma.rd_data.val();
        self.resp.m_dma_rd_data_last.next = self.dma.rd_data_last.val();
        self.resp.m_dma_rd_data_err.next = self.dma.rd_data_err.val();
        self.dma.s0_wr_req_valid.next = self.resp.m_dma_wr_req_valid.val();
        self.resp.m_dma_wr_req_ready.next = self.dma.s0_wr_req_ready.val();
        self.dma.s0_wr_req_addr.next = self.resp.m_dma_wr_req_addr.val();
        self.dma.s0_wr_req_len.next = self.resp.m_dma_wr_req_len.val();
        self.dma.s0_wr_req_tag.next = 0.into();
        self.dma.s0_wr_data_valid.next = self.resp.m_dma_wr_data_valid.val();
        self.resp.m_dma_wr_data_ready.next = self.dma.s0_wr_data_ready.val();
        self.dma.s0_wr_data.next = self.resp.m_dma_wr_data.val();
        self.dma.s0_wr_data_keep.next = self.resp.m_dma_wr_data_keep.val();
        self.dma.s0_wr_data_last.next = self.resp.m_dma_wr_data_last.val();
        self.resp.m_dma_wr_done_valid.next = self.dma.s0_wr_done_valid.val();
        self.resp.m_dma_wr_done_err.next = self.dma.wr_done_err.val();
        self.dma.s1_rd_req_valid.next = self.send.m_dma_rd_req_valid.val();
        self.send.m_dma_rd_req_ready.next = self.dma.s1_rd_req_ready.val();
        self.dma.s1_rd_req_addr.next = self.send.m_dma_rd_req_addr.val();
        self.dma.s1_rd_req_len.next = self.send.m_dma_rd_req_len.val();
        self.dma.s1_rd_req_tag.next = self.send.m_dma_rd_req_tag.val();
        self.send.m_dma_rd_data_valid.next = self.dma.s1_rd_data_valid.val();
        self.dma.s1_rd_data_ready.next = self.send.m_dma_rd_data_ready.val();
        self.send.m_dma_rd_data.next = self.dma.rd_data.val();
        self.send.m_dma_rd_data_last.next = self.dma.rd_data_last.val();
        self.send.m_dma_rd_data_err.next = self.dma.rd_data_err.val();
        self.send.m_dma_rd_data_tag.next = self.dma.rd_data_tag.val();
        self.dma.s1_wr_req_valid.next = self.send.m_dma_wr_req_valid.val();
        self.send.m_dma_wr_req_ready.next = self.dma.s1_wr_req_ready.val();
        self.dma.s1_wr_req_addr.next = self.send.m_dma_wr_req_addr.val();
        self.dma.s1_wr_req_len.next = self.send.m_dma_wr_req_len.val();
        self.dma.s1_wr_req_tag.next = self.send.m_dma_wr_req_tag.val();
        self.dma.s1_wr_data_valid.next = self.send.m_dma_wr_data_valid.val();
        self.send.m_dma_wr_data_ready.next = self.dma.s1_wr_data_ready.val();
        self.dma.s1_wr_data.next = self.send.m_dma_wr_data.val();
        self.dma.s1_wr_data_keep.next = self.send.m_dma_wr_data_keep.val();
        self.dma.s1_wr_data_last.next = self.send.m_dma_wr_data_last.val();
        self.send.m_dma_wr_done_valid.next = self.dma.s1_wr_done_valid.val();
        self.send.m_dma_wr_done_tag.next = self.dma.wr_done_tag.val();
        self.send.m_dma_wr_done_err.next = self.dma.wr_done_err.val();
        self.m_dma_rd_req_valid.next = self.dma.m_dma_rd_req_valid.val();
        self.dma.m_dma_rd_req_ready.next = self.m_dma_rd_req_ready.val();
        self.m_dma_rd_req_addr.next = self.dma.m_dma_rd_req_addr.val();
        self.m_dma_rd_req_len.next = self.dma.m_dma_rd_req_len.val();
        self.m_dma_rd_req_tag.next = self.dma.m_dma_rd_req_tag.val();
        self.dma.m_dma_rd_data_valid.next = self.m_dma_rd_data_valid.val();
        self.m_dma_rd_data_ready.next = self.dma.m_dma_rd_data_ready.val();
        self.dma.m_dma_rd_data.next = self.m_dma_rd_data.val();
        self.dma.m_dma_rd_data_last.next = self.m_dma_rd_data_last.val();
        self.dma.m_dma_rd_data_err.next = self.m_dma_rd_data_err.val();
        self.dma.m_dma_rd_data_tag.next = self.m_dma_rd_data_tag.val();
        self.m_dma_wr_req_valid.next = self.dma.m_dma_wr_req_valid.val();
        self.dma.m_dma_wr_req_ready.next = self.m_dma_wr_req_ready.val();
        self.m_dma_wr_req_addr.next = self.dma.m_dma_wr_req_addr.val();
        self.m_dma_wr_req_len.next = self.dma.m_dma_wr_req_len.val();
        self.m_dma_wr_req_tag.next = self.dma.m_dma_wr_req_tag.val();
        self.m_dma_wr_data_valid.next = self.dma.m_dma_wr_data_valid.val();
        self.dma.m_dma_wr_data_ready.next = self.m_dma_wr_data_ready.val();
        self.m_dma_wr_data.next = self.dma.m_dma_wr_data.val();
        self.m_dma_wr_data_keep.next = self.dma.m_dma_wr_data_keep.val();
        self.m_dma_wr_data_last.next = self.dma.m_dma_wr_data_last.val();
        self.dma.m_dma_wr_done_valid.next = self.m_dma_wr_done_valid.val();
        self.dma.m_dma_wr_done_tag.next = self.m_dma_wr_done_tag.val();
        self.dma.m_dma_wr_done_err.next = self.m_dma_wr_done_err.val();

        // ---- Completions.
        self.cqe.s0_cqe_valid.next = self.resp.m_cqe_valid.val();
        self.resp.m_cqe_ready.next = self.cqe.s0_cqe_ready.val();
        self.cqe.s0_cqe_cq.next = self.resp.m_cqe_cq.val();
        self.cqe.s0_cqe_data.next = self.resp.m_cqe_data.val();
        self.cqe.s0_cqe_last.next = self.resp.m_cqe_last.val();
        self.cqe.s1_cqe_valid.next = self.send.m_cqe_valid.val();
        self.send.m_cqe_ready.next = self.cqe.s1_cqe_ready.val();
        self.cqe.s1_cqe_cq.next = self.send.m_cqe_cq.val();
        self.cqe.s1_cqe_data.next = self.send.m_cqe_data.val();
        self.cqe.s1_cqe_last.next = self.send.m_cqe_last.val();
        self.m_cqe_valid.next = self.cqe.m_cqe_valid.val();
        self.cqe.m_cqe_ready.next = self.m_cqe_ready.val();
        self.m_cqe_cq.next = self.cqe.m_cqe_cq.val();
        self.m_cqe_data.next = self.cqe.m_cqe_data.val();
        self.m_cqe_last.next = self.cqe.m_cqe_last.val();

        // ---- Counters.
        self.resp.cnt_verdict_sel.next = 0.into();
        self.cnt_executed.next = self.resp.cnt_executed.val();
        self.cnt_req_dropped.next = self.resp.cnt_dropped.val();
        self.cnt_packets.next = self.send.cnt_packets.val();
        self.cnt_retransmitted.next = self.send.cnt_retransmitted.val();
        self.cnt_responses.next = self.send.cnt_responses.val();
        self.cnt_resp_dropped.next = self.send.cnt_dropped.val();
        self.cnt_expiries.next = self.send.cnt_expiries.val();
        self.rx_cnt_frames.next = self.resp.rx_cnt_frames.val();
        self.rx_cnt_accepted.next = self.resp.rx_cnt_accepted.val();
        self.rx_cnt_drop_icrc.next = self.resp.rx_cnt_drop_icrc.val();
        self.tx_cnt_frames.next = self.resp.tx_cnt_frames.val();
    }
}
