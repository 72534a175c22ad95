//! The responder with the packet layer and its tables: frames from the MAC in, frames to the
//! MAC out. The receive path ([`crate::transport_rx`]) hands requests with their payloads to
//! the responder ([`crate::responder`]), which reads its QP attribute and memory region rows
//! from tables in block RAM here ([`crate::row_table`]); its send descriptors get the QP's
//! address vector from the third table (row = the QP's row) and leave, with the READ
//! responses' payloads, through the transmit path ([`crate::transport_tx`]). Responses and
//! ACKs for the completer, CNPs and the bypassed frames leave on their own ports.
//!
//! The host writes the three tables through their register windows (`qp_wr_*`, `mr_wr_*`,
//! `av_wr_*`: eight 32-bit words a row, word 7 committing it, as `host_nic` does); the DMA
//! port, the receive rings and the completions are the responder's own ports. Our MAC, GID
//! and TTL are configuration inputs.
//!
//! Request payloads reach the responder through a register slice ([`crate::axis_register`]),
//! READ response payloads leave it through one, and so does the data it writes to host
//! memory: readies are combinational through each module (the responder's from its state,
//! the transmit builder's from its pipeline, the payload scatter's from the DMA port's) and
//! would otherwise reach into the registers on the other side. (The receive path slices
//! its own header stream, before the demultiplexer.)
//! A send descriptor waits for its address vector: the AV row is looked up while the
//! descriptor is held (one clock), registered (the next), then the descriptor and the vector
//! go to the transmit path together, 2 clocks more than the responder alone.
//! `A` is log2 of the rows of each table, `R` of the responder's resource slots, `F` of its
//! READ FIFO's words.

use rust_hdl::prelude::*;

use crate::address_vector::AV_BITS;
use crate::axis_register::AxisRegister;
use crate::desc_mux::DescMux;
use crate::responder::Responder;
use crate::row_table::{MR_BITS, QP_BITS, RowTable};
use crate::transport_header::TH_BITS;
use crate::transport_rx::TransportRx;
use crate::transport_tx::TransportTx;

#[derive(LogicBlock, Default)]
pub struct ResponderPath<const A: usize, const R: usize, const F: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Frames from the MAC (no FCS; `tuser` marks a bad frame).
    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tuser: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    /// Frames to the MAC: ACKs, NAKs, READ responses and atomic acknowledges.
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    /// Responses and ACKs from peers (to the completer), with their payloads.
    pub m_resp_hdr_data: Signal<Out, Bits<TH_BITS>>,
    pub m_resp_hdr_valid: Signal<Out, Bit>,
    pub m_resp_hdr_ready: Signal<In, Bit>,
    pub m_resp_axis_tdata: Signal<Out, Bits<64>>,
    pub m_resp_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_resp_axis_tlast: Signal<Out, Bit>,
    pub m_resp_axis_tvalid: Signal<Out, Bit>,
    pub m_resp_axis_tready: Signal<In, Bit>,
    /// CNPs (to the congestion logic).
    pub m_cnp_hdr_data: Signal<Out, Bits<TH_BITS>>,
    pub m_cnp_hdr_valid: Signal<Out, Bit>,
    pub m_cnp_hdr_ready: Signal<In, Bit>,
    /// Frames that are not RoCEv2 (to the raw receive queue).
    pub m_bypass_tdata: Signal<Out, Bits<64>>,
    pub m_bypass_tkeep: Signal<Out, Bits<8>>,
    pub m_bypass_tlast: Signal<Out, Bit>,
    pub m_bypass_tvalid: Signal<Out, Bit>,
    pub m_bypass_tuser: Signal<Out, Bit>,
    pub m_bypass_tready: Signal<In, Bit>,
    /// Our MAC, GID and IPv4 TTL.
    pub src_mac: Signal<In, Bits<48>>,
    pub sgid: Signal<In, Bits<128>>,
    pub ttl: Signal<In, Bits<8>>,
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
    /// A QP's responder state started over (see [`crate::responder`]).
    pub s_init_valid: Signal<In, Bit>,
    pub s_init_ready: Signal<Out, Bit>,
    pub s_init_qp: Signal<In, Bits<A>>,
    pub s_init_psn: Signal<In, Bits<24>>,
    /// The sending side's packets: send descriptors (with the QP's row) and their payloads,
    /// sent between the responder's (see [`crate::desc_mux`]). Idle in the `responder_path`
    /// top; `rc_nic` connects its requester here.
    pub s_req_desc_valid: Signal<In, Bit>,
    pub s_req_desc_ready: Signal<Out, Bit>,
    pub s_req_desc_data: Signal<In, Bits<TH_BITS>>,
    pub s_req_desc_qp: Signal<In, Bits<A>>,
    pub s_req_axis_tdata: Signal<In, Bits<64>>,
    pub s_req_axis_tkeep: Signal<In, Bits<8>>,
    pub s_req_axis_tlast: Signal<In, Bit>,
    pub s_req_axis_tvalid: Signal<In, Bit>,
    pub s_req_axis_tuser: Signal<In, Bit>,
    pub s_req_axis_tready: Signal<Out, Bit>,
    /// The sending side's lookups of the QP attribute and memory region tables, served when
    /// the responder does not look in the same clock (answered the clock after, as its own).
    pub req_qp_look_valid: Signal<In, Bit>,
    pub req_qp_look_ready: Signal<Out, Bit>,
    pub req_qp_look_row: Signal<In, Bits<A>>,
    pub req_qp_got_data: Signal<Out, Bits<QP_BITS>>,
    pub req_mr_look_valid: Signal<In, Bit>,
    pub req_mr_look_ready: Signal<Out, Bit>,
    pub req_mr_look_row: Signal<In, Bits<A>>,
    pub req_mr_got_data: Signal<Out, Bits<MR_BITS>>,
    /// The DMA port.
    pub m_dma_rd_req_valid: Signal<Out, Bit>,
    pub m_dma_rd_req_ready: Signal<In, Bit>,
    pub m_dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_rd_req_len: Signal<Out, Bits<16>>,
    pub m_dma_rd_data_valid: Signal<In, Bit>,
    pub m_dma_rd_data_ready: Signal<Out, Bit>,
    pub m_dma_rd_data: Signal<In, Bits<64>>,
    pub m_dma_rd_data_last: Signal<In, Bit>,
    pub m_dma_rd_data_err: Signal<In, Bit>,
    pub m_dma_wr_req_valid: Signal<Out, Bit>,
    pub m_dma_wr_req_ready: Signal<In, Bit>,
    pub m_dma_wr_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_wr_req_len: Signal<Out, Bits<16>>,
    pub m_dma_wr_data_valid: Signal<Out, Bit>,
    pub m_dma_wr_data_ready: Signal<In, Bit>,
    pub m_dma_wr_data: Signal<Out, Bits<64>>,
    pub m_dma_wr_data_keep: Signal<Out, Bits<8>>,
    pub m_dma_wr_data_last: Signal<Out, Bit>,
    pub m_dma_wr_done_valid: Signal<In, Bit>,
    pub m_dma_wr_done_err: Signal<In, Bit>,
    /// The receive rings and the completions.
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
    pub m_cqe_valid: Signal<Out, Bit>,
    pub m_cqe_ready: Signal<In, Bit>,
    pub m_cqe_cq: Signal<Out, Bits<16>>,
    pub m_cqe_data: Signal<Out, Bits<64>>,
    pub m_cqe_last: Signal<Out, Bit>,
    /// The responder idle (no request in hand), and headers waiting for it or the others.
    pub resp_idle: Signal<Out, Bit>,
    pub rx_hdr_fill: Signal<Out, Bits<8>>,
    /// The responder's counters ([`crate::responder`]).
    pub cnt_executed: Signal<Out, Bits<32>>,
    pub cnt_dropped: Signal<Out, Bits<32>>,
    pub cnt_dma_err: Signal<Out, Bits<32>>,
    pub cnt_replayed: Signal<Out, Bits<32>>,
    pub cnt_dup_dropped: Signal<Out, Bits<32>>,
    pub cnt_recv_refused: Signal<Out, Bits<32>>,
    pub cnt_verdict_sel: Signal<In, Bits<4>>,
    pub cnt_verdict: Signal<Out, Bits<32>>,
    /// The receive path's counters by reason ([`crate::transport_rx`]).
    pub rx_cnt_frames: Signal<Out, Bits<32>>,
    pub rx_cnt_accepted: Signal<Out, Bits<32>>,
    pub rx_cnt_bypass: Signal<Out, Bits<32>>,
    pub rx_cnt_drop_oversize: Signal<Out, Bits<32>>,
    pub rx_cnt_drop_truncated: Signal<Out, Bits<32>>,
    pub rx_cnt_drop_fragment: Signal<Out, Bits<32>>,
    pub rx_cnt_drop_checksum: Signal<Out, Bits<32>>,
    pub rx_cnt_drop_length: Signal<Out, Bits<32>>,
    pub rx_cnt_drop_tver: Signal<Out, Bits<32>>,
    pub rx_cnt_drop_opcode: Signal<Out, Bits<32>>,
    pub rx_cnt_drop_padcnt: Signal<Out, Bits<32>>,
    pub rx_cnt_drop_icrc: Signal<Out, Bits<32>>,
    pub rx_cnt_drop_class: Signal<Out, Bits<32>>,
    /// The transmit path's counters.
    pub tx_cnt_frames: Signal<Out, Bits<32>>,
    pub tx_cnt_len_err: Signal<Out, Bits<32>>,
    rx: TransportRx,
    req_slice: AxisRegister,
    rsp_slice: AxisRegister,
    sq_slice: AxisRegister,
    wr_slice: AxisRegister,
    mux: DescMux<A>,
    resp: Responder<A, R, F>,
    tx: TransportTx,
    qp: RowTable<QP_BITS, A>,
    mr: RowTable<MR_BITS, A>,
    av: RowTable<AV_BITS, A>,
    /// The descriptor's wait for its vector: 0 looking it up, 1 reading it, 2 sending.
    aj_st: DFF<Bits<2>>,
    aj_av: DFF<Bits<AV_BITS>>,
}

impl<const A: usize, const R: usize, const F: usize> Logic for ResponderPath<A, R, F> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, aj_st, aj_av);
        self.rx.clock.next = self.clock.val();
        self.req_slice.clock.next = self.clock.val();
        self.req_slice.reset.next = self.reset.val();
        self.rsp_slice.clock.next = self.clock.val();
        self.rsp_slice.reset.next = self.reset.val();
        self.sq_slice.clock.next = self.clock.val();
        self.sq_slice.reset.next = self.reset.val();
        self.mux.clock.next = self.clock.val();
        self.mux.reset.next = self.reset.val();
        self.wr_slice.clock.next = self.clock.val();
        self.wr_slice.reset.next = self.reset.val();
        self.resp.clock.next = self.clock.val();
        self.tx.clock.next = self.clock.val();
        self.qp.clock.next = self.clock.val();
        self.mr.clock.next = self.clock.val();
        self.av.clock.next = self.clock.val();
        self.rx.reset.next = self.reset.val();
        self.resp.reset.next = self.reset.val();
        self.tx.reset.next = self.reset.val();
        self.qp.reset.next = self.reset.val();
        self.mr.reset.next = self.reset.val();
        self.av.reset.next = self.reset.val();

        // ---- Frames in.
        self.rx.s_axis_tdata.next = self.s_axis_tdata.val();
        self.rx.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.rx.s_axis_tlast.next = self.s_axis_tlast.val();
        self.rx.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.rx.s_axis_tuser.next = self.s_axis_tuser.val();
        self.s_axis_tready.next = self.rx.s_axis_tready.val();
        // Requests to the responder.
        self.resp.s_hdr_data.next = self.rx.m_req_hdr_data.val();
        self.resp.s_hdr_valid.next = self.rx.m_req_hdr_valid.val();
        self.rx.m_req_hdr_ready.next = self.resp.s_hdr_ready.val();
        // The payload through a register slice: the responder's ready is combinational from
        // its state, and would otherwise reach through the demultiplexer into the parser's
        // payload FIFO (76.6 MHz on LFE5UM5G-85F-8: `rnic build --core-only --top
        // responder_path_1k --part LFE5UM5G-85F-8`, seed 1).
        self.req_slice.s_axis_tdata.next = self.rx.m_req_axis_tdata.val();
        self.req_slice.s_axis_tkeep.next = self.rx.m_req_axis_tkeep.val();
        self.req_slice.s_axis_tlast.next = self.rx.m_req_axis_tlast.val();
        self.req_slice.s_axis_tvalid.next = self.rx.m_req_axis_tvalid.val();
        self.req_slice.s_axis_tuser.next = false;
        self.rx.m_req_axis_tready.next = self.req_slice.s_axis_tready.val();
        self.resp.s_axis_tdata.next = self.req_slice.m_axis_tdata.val();
        self.resp.s_axis_tkeep.next = self.req_slice.m_axis_tkeep.val();
        self.resp.s_axis_tlast.next = self.req_slice.m_axis_tlast.val();
        self.resp.s_axis_tvalid.next = self.req_slice.m_axis_tvalid.val();
        self.req_slice.m_axis_tready.next = self.resp.s_axis_tready.val();
        // Responses, CNPs and the bypass out.
        self.m_resp_hdr_data.next = self.rx.m_resp_hdr_data.val();
        self.m_resp_hdr_valid.next = self.rx.m_resp_hdr_valid.val();
        self.rx.m_resp_hdr_ready.next = self.m_resp_hdr_ready.val();
        self.m_resp_axis_tdata.next = self.rx.m_resp_axis_tdata.val();
        self.m_resp_axis_tkeep.next = self.rx.m_resp_axis_tkeep.val();
        self.m_resp_axis_tlast.next = self.rx.m_resp_axis_tlast.val();
        self.m_resp_axis_tvalid.next = self.rx.m_resp_axis_tvalid.val();
        self.rx.m_resp_axis_tready.next = self.m_resp_axis_tready.val();
        self.m_cnp_hdr_data.next = self.rx.m_cnp_hdr_data.val();
        self.m_cnp_hdr_valid.next = self.rx.m_cnp_hdr_valid.val();
        self.rx.m_cnp_hdr_ready.next = self.m_cnp_hdr_ready.val();
        self.m_bypass_tdata.next = self.rx.m_bypass_tdata.val();
        self.m_bypass_tkeep.next = self.rx.m_bypass_tkeep.val();
        self.m_bypass_tlast.next = self.rx.m_bypass_tlast.val();
        self.m_bypass_tvalid.next = self.rx.m_bypass_tvalid.val();
        self.m_bypass_tuser.next = self.rx.m_bypass_tuser.val();
        self.rx.m_bypass_tready.next = self.m_bypass_tready.val();

        // ---- Tables: the host's windows (no read-back here); the responder's lookups.
        self.qp.wr_en.next = self.qp_wr_en.val();
        self.qp.wr_row.next = self.qp_wr_row.val();
        self.qp.wr_word.next = self.qp_wr_word.val();
        self.qp.wr_data.next = self.qp_wr_data.val();
        self.qp.rd_start.next = false;
        self.qp.rd_row.next = 0.into();
        self.qp.rd_word.next = 0.into();
        self.qp.look_valid.next = self.resp.qp_look_valid.val() | self.req_qp_look_valid.val();
        self.qp.look_row.next = self.req_qp_look_row.val();
        if self.resp.qp_look_valid.val() {
            self.qp.look_row.next = self.resp.qp_look_row.val();
        }
        self.resp.qp_look_ready.next = self.qp.look_ready.val();
        self.req_qp_look_ready.next = self.qp.look_ready.val() & !self.resp.qp_look_valid.val();
        self.resp.qp_got_data.next = self.qp.got_data.val();
        self.req_qp_got_data.next = self.qp.got_data.val();
        self.mr.wr_en.next = self.mr_wr_en.val();
        self.mr.wr_row.next = self.mr_wr_row.val();
        self.mr.wr_word.next = self.mr_wr_word.val();
        self.mr.wr_data.next = self.mr_wr_data.val();
        self.mr.rd_start.next = false;
        self.mr.rd_row.next = 0.into();
        self.mr.rd_word.next = 0.into();
        self.mr.look_valid.next = self.resp.mr_look_valid.val() | self.req_mr_look_valid.val();
        self.mr.look_row.next = self.req_mr_look_row.val();
        if self.resp.mr_look_valid.val() {
            self.mr.look_row.next = self.resp.mr_look_row.val();
        }
        self.resp.mr_look_ready.next = self.mr.look_ready.val();
        self.req_mr_look_ready.next = self.mr.look_ready.val() & !self.resp.mr_look_valid.val();
        self.resp.mr_got_data.next = self.mr.got_data.val();
        self.req_mr_got_data.next = self.mr.got_data.val();
        self.av.wr_en.next = self.av_wr_en.val();
        self.av.wr_row.next = self.av_wr_row.val();
        self.av.wr_word.next = self.av_wr_word.val();
        self.av.wr_data.next = self.av_wr_data.val();
        self.av.rd_start.next = false;
        self.av.rd_row.next = 0.into();
        self.av.rd_word.next = 0.into();

        // ---- Descriptors out, the responder's and the sending side's one packet at a time,
        // each with its QP's address vector: looked up while the mux holds the descriptor,
        // registered, then offered to the transmit path.
        self.mux.s0_desc_valid.next = self.resp.m_desc_valid.val();
        self.resp.m_desc_ready.next = self.mux.s0_desc_ready.val();
        self.mux.s0_desc_data.next = self.resp.m_desc_data.val();
        self.mux.s0_desc_qp.next = self.resp.m_desc_qp.val();
        self.mux.s1_desc_valid.next = self.s_req_desc_valid.val();
        self.s_req_desc_ready.next = self.mux.s1_desc_ready.val();
        self.mux.s1_desc_data.next = self.s_req_desc_data.val();
        self.mux.s1_desc_qp.next = self.s_req_desc_qp.val();
        self.av.look_valid.next = false;
        self.av.look_row.next = self.mux.m_desc_qp.val();
        self.mux.m_desc_ready.next = false;
        self.tx.s_desc_valid.next = false;
        self.tx.s_desc_data.next = self.mux.m_desc_data.val();
        self.tx.s_desc_av.next = self.aj_av.q.val();
        self.tx.s_desc_sgid.next = self.sgid.val();
        self.tx.src_mac.next = self.src_mac.val();
        self.tx.ttl.next = self.ttl.val();
        if self.aj_st.q.val() == 0 {
            self.av.look_valid.next = self.mux.m_desc_valid.val();
            if self.mux.m_desc_valid.val() & self.av.look_ready.val() {
                self.aj_st.d.next = 1.into();
            }
        }
        if self.aj_st.q.val() == 1 {
            self.aj_av.d.next = self.av.got_data.val();
            self.aj_st.d.next = 2.into();
        }
        if self.aj_st.q.val() == 2 {
            self.tx.s_desc_valid.next = true;
            self.mux.m_desc_ready.next = self.tx.s_desc_ready.val();
            if self.tx.s_desc_ready.val() {
                self.aj_st.d.next = 0.into();
            }
        }
        if self.reset.val() {
            self.aj_st.d.next = 0.into();
        }
        // READ response payloads, through a register slice: the builder's `s_axis_tready`
        // follows its output's handshake, and reached the responder's READ FIFO's read
        // address (114.7 MHz, seed 1 of the 1024-row path on LFE5UM5G-85F-8).
        self.rsp_slice.s_axis_tdata.next = self.resp.m_axis_tdata.val();
        self.rsp_slice.s_axis_tkeep.next = self.resp.m_axis_tkeep.val();
        self.rsp_slice.s_axis_tlast.next = self.resp.m_axis_tlast.val();
        self.rsp_slice.s_axis_tvalid.next = self.resp.m_axis_tvalid.val();
        self.rsp_slice.s_axis_tuser.next = self.resp.m_axis_tuser.val();
        self.resp.m_axis_tready.next = self.rsp_slice.s_axis_tready.val();
        self.mux.s0_axis_tdata.next = self.rsp_slice.m_axis_tdata.val();
        self.mux.s0_axis_tkeep.next = self.rsp_slice.m_axis_tkeep.val();
        self.mux.s0_axis_tlast.next = self.rsp_slice.m_axis_tlast.val();
        self.mux.s0_axis_tvalid.next = self.rsp_slice.m_axis_tvalid.val();
        self.mux.s0_axis_tuser.next = self.rsp_slice.m_axis_tuser.val();
        self.rsp_slice.m_axis_tready.next = self.mux.s0_axis_tready.val();
        // The sending side's payloads, through their own slice for the same reason.
        self.sq_slice.s_axis_tdata.next = self.s_req_axis_tdata.val();
        self.sq_slice.s_axis_tkeep.next = self.s_req_axis_tkeep.val();
        self.sq_slice.s_axis_tlast.next = self.s_req_axis_tlast.val();
        self.sq_slice.s_axis_tvalid.next = self.s_req_axis_tvalid.val();
        self.sq_slice.s_axis_tuser.next = self.s_req_axis_tuser.val();
        self.s_req_axis_tready.next = self.sq_slice.s_axis_tready.val();
        self.mux.s1_axis_tdata.next = self.sq_slice.m_axis_tdata.val();
        self.mux.s1_axis_tkeep.next = self.sq_slice.m_axis_tkeep.val();
        self.mux.s1_axis_tlast.next = self.sq_slice.m_axis_tlast.val();
        self.mux.s1_axis_tvalid.next = self.sq_slice.m_axis_tvalid.val();
        self.mux.s1_axis_tuser.next = self.sq_slice.m_axis_tuser.val();
        self.sq_slice.m_axis_tready.next = self.mux.s1_axis_tready.val();
        self.tx.s_axis_tdata.next = self.mux.m_axis_tdata.val();
        self.tx.s_axis_tkeep.next = self.mux.m_axis_tkeep.val();
        self.tx.s_axis_tlast.next = self.mux.m_axis_tlast.val();
        self.tx.s_axis_tvalid.next = self.mux.m_axis_tvalid.val();
        // A segment whose DMA read failed leaves marked bad, not as good data.
        self.tx.s_axis_tuser.next = self.mux.m_axis_tuser.val();
        self.mux.m_axis_tready.next = self.tx.s_axis_tready.val();
        // Frames out.
        self.m_axis_tdata.next = self.tx.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.tx.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.tx.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.tx.m_axis_tvalid.val();
        self.m_axis_tuser.next = self.tx.m_axis_tuser.val();
        self.tx.m_axis_tready.next = self.m_axis_tready.val();

        // ---- The responder's own ports.
        self.resp.s_init_valid.next = self.s_init_valid.val();
        self.s_init_ready.next = self.resp.s_init_ready.val();
        self.resp.s_init_qp.next = self.s_init_qp.val();
        self.resp.s_init_psn.next = self.s_init_psn.val();
        self.m_dma_rd_req_valid.next = self.resp.m_dma_rd_req_valid.val();
        self.resp.m_dma_rd_req_ready.next = self.m_dma_rd_req_ready.val();
        self.m_dma_rd_req_addr.next = self.resp.m_dma_rd_req_addr.val();
        self.m_dma_rd_req_len.next = self.resp.m_dma_rd_req_len.val();
        self.resp.m_dma_rd_data_valid.next = self.m_dma_rd_data_valid.val();
        self.m_dma_rd_data_ready.next = self.resp.m_dma_rd_data_ready.val();
        self.resp.m_dma_rd_data.next = self.m_dma_rd_data.val();
        self.resp.m_dma_rd_data_last.next = self.m_dma_rd_data_last.val();
        self.resp.m_dma_rd_data_err.next = self.m_dma_rd_data_err.val();
        self.m_dma_wr_req_valid.next = self.resp.m_dma_wr_req_valid.val();
        self.resp.m_dma_wr_req_ready.next = self.m_dma_wr_req_ready.val();
        self.m_dma_wr_req_addr.next = self.resp.m_dma_wr_req_addr.val();
        self.m_dma_wr_req_len.next = self.resp.m_dma_wr_req_len.val();
        // The write data through a register slice: the payload scatter's beat leaving is
        // combinational with the port's ready and drives its window's enables; a register
        // between them and the host's DMA engine keeps that engine's ready out of them (seed 2
        // of the 1024-row path ended there, 115.0 MHz: `rnic build --core-only --top
        // responder_path_1k --part LFE5UM5G-85F-8 --freq 125 --seeds 3`).
        self.wr_slice.s_axis_tdata.next = self.resp.m_dma_wr_data.val();
        self.wr_slice.s_axis_tkeep.next = self.resp.m_dma_wr_data_keep.val();
        self.wr_slice.s_axis_tlast.next = self.resp.m_dma_wr_data_last.val();
        self.wr_slice.s_axis_tvalid.next = self.resp.m_dma_wr_data_valid.val();
        self.wr_slice.s_axis_tuser.next = false;
        self.resp.m_dma_wr_data_ready.next = self.wr_slice.s_axis_tready.val();
        self.m_dma_wr_data_valid.next = self.wr_slice.m_axis_tvalid.val();
        self.wr_slice.m_axis_tready.next = self.m_dma_wr_data_ready.val();
        self.m_dma_wr_data.next = self.wr_slice.m_axis_tdata.val();
        self.m_dma_wr_data_keep.next = self.wr_slice.m_axis_tkeep.val();
        self.m_dma_wr_data_last.next = self.wr_slice.m_axis_tlast.val();
        self.resp.m_dma_wr_done_valid.next = self.m_dma_wr_done_valid.val();
        self.resp.m_dma_wr_done_err.next = self.m_dma_wr_done_err.val();
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
        self.m_cqe_valid.next = self.resp.m_cqe_valid.val();
        self.resp.m_cqe_ready.next = self.m_cqe_ready.val();
        self.m_cqe_cq.next = self.resp.m_cqe_cq.val();
        self.m_cqe_data.next = self.resp.m_cqe_data.val();
        self.m_cqe_last.next = self.resp.m_cqe_last.val();

        // ---- Status and counters.
        self.resp_idle.next = self.resp.s_hdr_ready.val();
        self.rx_hdr_fill.next = self.rx.hdr_fill.val();
        self.cnt_executed.next = self.resp.cnt_executed.val();
        self.cnt_dropped.next = self.resp.cnt_dropped.val();
        self.cnt_dma_err.next = self.resp.cnt_dma_err.val();
        self.cnt_replayed.next = self.resp.cnt_replayed.val();
        self.cnt_dup_dropped.next = self.resp.cnt_dup_dropped.val();
        self.cnt_recv_refused.next = self.resp.cnt_recv_refused.val();
        self.resp.cnt_verdict_sel.next = self.cnt_verdict_sel.val();
        self.cnt_verdict.next = self.resp.cnt_verdict.val();
        self.rx_cnt_frames.next = self.rx.cnt_frames.val();
        self.rx_cnt_accepted.next = self.rx.cnt_accepted.val();
        self.rx_cnt_bypass.next = self.rx.cnt_bypass.val();
        self.rx_cnt_drop_oversize.next = self.rx.cnt_drop_oversize.val();
        self.rx_cnt_drop_truncated.next = self.rx.cnt_drop_truncated.val();
        self.rx_cnt_drop_fragment.next = self.rx.cnt_drop_fragment.val();
        self.rx_cnt_drop_checksum.next = self.rx.cnt_drop_checksum.val();
        self.rx_cnt_drop_length.next = self.rx.cnt_drop_length.val();
        self.rx_cnt_drop_tver.next = self.rx.cnt_drop_tver.val();
        self.rx_cnt_drop_opcode.next = self.rx.cnt_drop_opcode.val();
        self.rx_cnt_drop_padcnt.next = self.rx.cnt_drop_padcnt.val();
        self.rx_cnt_drop_icrc.next = self.rx.cnt_drop_icrc.val();
        self.rx_cnt_drop_class.next = self.rx.cnt_drop_class.val();
        self.tx_cnt_frames.next = self.tx.cnt_frames.val();
        self.tx_cnt_len_err.next = self.tx.cnt_len_err.val();
    }
}
