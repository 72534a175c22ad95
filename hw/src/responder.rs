//! The RC responder, WRITE path: requests from the opcode demultiplexer (a transport header,
//! then its payload), the QP's attribute and memory region rows looked up in the host
//! interface's tables, its responder state row in this engine's own block RAM, the decision of
//! [`crate::resp_check`], and then, as the transport model's responder does:
//!
//! - WRITE (FIRST, MIDDLE, LAST, ONLY): the payload written through the DMA port at the
//!   region's device address (FIRST and ONLY) or where the open WRITE left off (MIDDLE and
//!   LAST), then ePSN, the open WRITE's address and residual and, on its last packet, the MSN
//!   advanced; an ACK when AckReq is set, sent once the bytes are in host memory;
//! - a request ahead of ePSN: one sequence-error NAK per gap, the rest dropped;
//! - a duplicate SEND or WRITE: ACKed with ePSN - 1, not executed again;
//! - RNR: an RNR NAK with the QP's timer code (no receive queue yet, so every SEND);
//! - a remote access error or invalid request: its NAK, and the QP's responder state marked
//!   in error, so that later requests are dropped; nothing is written;
//! - requests for a QP beyond the table, not RC, not in RTR or RTS, or in error, and P_Keys
//!   other than the default: dropped and counted (`cnt_dropped`), their payload discarded.
//!
//! SEND, READ and atomics that pass the checks are not executed yet: counted
//! (`cnt_unsupported`) and dropped, the state unchanged. Responses leave as send descriptors
//! (a transport header) with the QP's row (`m_desc_qp`) for the address vector lookup.
//!
//! One request at a time. `s_init_*` resets a QP's state row (ePSN from its RQ_PSN) when the
//! QP enters RTR; it is taken while the engine is idle.

use rust_hdl::prelude::*;

use crate::resp_check::RespCheck;
use crate::row_table::{MR_BITS, QP_BITS, RS_BITS, qp_offset_of, rs_offset_of};
use crate::transport_header::{TH_BITS, th_offset_of};
use crate::{field_join, field_split};

field_split!(
    /// The request header fields the engine reads.
    ReqFields, TH_BITS, th_offset_of, {
        op: 8 => "OpCode",
        psn: 24 => "PSN",
        len: 16 => "payload_len",
        ack: 1 => "AckReq",
        dqp: 24 => "DestQP",
        key: 32 => "ext_key",
        mid: 64 => "ext_mid",
        pkey: 16 => "P_Key",
    }
);

field_split!(
    /// The QP attributes the engine reads.
    QpAttrFields, QP_BITS, qp_offset_of, {
        state: 3 => "STATE",
        qtype: 1 => "TYPE",
        dest: 24 => "DEST_QPN",
        pkey: 16 => "PKEY",
        rnr: 5 => "MIN_RNR_TIMER",
    }
);

field_split!(
    /// A responder state row.
    StateFields, RS_BITS, rs_offset_of, {
        epsn: 24 => "EPSN",
        msn: 24 => "MSN",
        nak: 1 => "SENT_NAK",
        open: 2 => "OPEN",
        addr: 64 => "WR_ADDR",
        resid: 32 => "WR_RESID",
        wlen: 32 => "WR_LEN",
        err: 1 => "ERROR",
    }
);

field_join!(
    /// A responder state row from its fields.
    StateJoin, RS_BITS, rs_offset_of, {
        epsn: 24 => "EPSN",
        msn: 24 => "MSN",
        nak: 1 => "SENT_NAK",
        open: 2 => "OPEN",
        addr: 64 => "WR_ADDR",
        resid: 32 => "WR_RESID",
        wlen: 32 => "WR_LEN",
        err: 1 => "ERROR",
    }
);

field_join!(
    /// An ACK or NAK as a send descriptor.
    AckJoin, TH_BITS, th_offset_of, {
        op: 8 => "OpCode",
        psn: 24 => "PSN",
        dqp: 24 => "DestQP",
        pkey: 16 => "P_Key",
        key: 32 => "ext_key",
    }
);

// Engine states (literals in the code, rule 5): 0 IDLE, 1 LOOK, 2 GOT, 3 PRE, 4 CHK, 5 ACT,
// 6 DMA_REQ, 7 DMA_DATA, 8 DRAIN, 9 DMA_DONE, 10 COMMIT, 11 RESP.

#[derive(LogicBlock)]
pub struct Responder<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Requests: transport headers, then their payloads.
    pub s_hdr_data: Signal<In, Bits<TH_BITS>>,
    pub s_hdr_valid: Signal<In, Bit>,
    pub s_hdr_ready: Signal<Out, Bit>,
    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    /// A QP entering RTR: its state row starts over with ePSN `s_init_psn`.
    pub s_init_valid: Signal<In, Bit>,
    pub s_init_ready: Signal<Out, Bit>,
    pub s_init_qp: Signal<In, Bits<A>>,
    pub s_init_psn: Signal<In, Bits<24>>,
    /// QP attribute lookups ([`crate::row_table`]).
    pub qp_look_valid: Signal<Out, Bit>,
    pub qp_look_ready: Signal<In, Bit>,
    pub qp_look_row: Signal<Out, Bits<A>>,
    pub qp_got_data: Signal<In, Bits<QP_BITS>>,
    /// Memory region lookups (by the key's index).
    pub mr_look_valid: Signal<Out, Bit>,
    pub mr_look_ready: Signal<In, Bit>,
    pub mr_look_row: Signal<Out, Bits<A>>,
    pub mr_got_data: Signal<In, Bits<MR_BITS>>,
    /// The DMA port's write side ([`crate::dma_arbiter`]); a write's address is the request's
    /// device address, at any byte.
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
    /// Responses (ACK, NAK) as send descriptors, with the QP's row.
    pub m_desc_valid: Signal<Out, Bit>,
    pub m_desc_ready: Signal<In, Bit>,
    pub m_desc_data: Signal<Out, Bits<TH_BITS>>,
    pub m_desc_qp: Signal<Out, Bits<A>>,
    /// Requests executed; dropped before the checks; passed but not executed yet; DMA writes
    /// the host refused (each wraps at 2^32).
    pub cnt_executed: Signal<Out, Bits<32>>,
    pub cnt_dropped: Signal<Out, Bits<32>>,
    pub cnt_unsupported: Signal<Out, Bits<32>>,
    pub cnt_dma_err: Signal<Out, Bits<32>>,

    chk: RespCheck<A>,
    mem: RAM<Bits<RS_BITS>, A>,
    req: ReqFields,
    qpf: QpAttrFields,
    stf: StateFields,
    st_out: StateJoin,
    ack: AckJoin,
    st: DFF<Bits<4>>,
    hdr: DFF<Bits<TH_BITS>>,
    qp_row: DFF<Bits<QP_BITS>>,
    mr_row: DFF<Bits<MR_BITS>>,
    st_row: DFF<Bits<RS_BITS>>,
    verdict: DFF<Bits<4>>,
    addr: DFF<Bits<64>>,
    /// The next state row and the response, decided in ACT.
    n_epsn: DFF<Bits<24>>,
    n_msn: DFF<Bits<24>>,
    n_nak: DFF<Bits<1>>,
    n_open: DFF<Bits<2>>,
    n_addr: DFF<Bits<64>>,
    n_resid: DFF<Bits<32>>,
    n_wlen: DFF<Bits<32>>,
    n_err: DFF<Bits<1>>,
    n_write: DFF<Bit>,
    r_send: DFF<Bit>,
    r_syn: DFF<Bits<8>>,
    r_psn: DFF<Bits<24>>,
    r_msn: DFF<Bits<24>>,
    dma_addr: DFF<Bits<64>>,
    cnt_exec: DFF<Bits<32>>,
    cnt_drop: DFF<Bits<32>>,
    cnt_unsup: DFF<Bits<32>>,
    cnt_dmae: DFF<Bits<32>>,
    // Locals.
    write: Signal<Local, Bit>,
    sendwrite: Signal<Local, Bit>,
    first: Signal<Local, Bit>,
    mid: Signal<Local, Bit>,
    last: Signal<Local, Bit>,
    only: Signal<Local, Bit>,
    len64: Signal<Local, Bits<64>>,
    len32: Signal<Local, Bits<32>>,
    psn_next: Signal<Local, Bits<24>>,
    psn_prev: Signal<Local, Bits<24>>,
    msn_next: Signal<Local, Bits<24>>,
    qp_hi: Signal<Local, Bit>,
    qp_ok: Signal<Local, Bit>,
    k_one24: Constant<Bits<24>>,
    k_one32: Constant<Bits<32>>,
    k_zero32: Constant<Bits<32>>,
    k_qp_hi: Constant<Bits<24>>,
    k_key_lo: Constant<Bits<32>>,
    k_pkey_mask: Constant<Bits<16>>,
    k_ack_op: Constant<Bits<8>>,
    k_rnr: Constant<Bits<8>>,
    k_syn_ack: Constant<Bits<8>>,
    k_syn_seq: Constant<Bits<8>>,
    k_syn_inv: Constant<Bits<8>>,
    k_syn_acc: Constant<Bits<8>>,
}

impl<const A: usize> Default for Responder<A> {
    fn default() -> Self {
        assert!((1..=16).contains(&A));
        Responder {
            clock: Default::default(),
            reset: Default::default(),
            s_hdr_data: Default::default(),
            s_hdr_valid: Default::default(),
            s_hdr_ready: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            s_init_valid: Default::default(),
            s_init_ready: Default::default(),
            s_init_qp: Default::default(),
            s_init_psn: Default::default(),
            qp_look_valid: Default::default(),
            qp_look_ready: Default::default(),
            qp_look_row: Default::default(),
            qp_got_data: Default::default(),
            mr_look_valid: Default::default(),
            mr_look_ready: Default::default(),
            mr_look_row: Default::default(),
            mr_got_data: Default::default(),
            m_dma_wr_req_valid: Default::default(),
            m_dma_wr_req_ready: Default::default(),
            m_dma_wr_req_addr: Default::default(),
            m_dma_wr_req_len: Default::default(),
            m_dma_wr_data_valid: Default::default(),
            m_dma_wr_data_ready: Default::default(),
            m_dma_wr_data: Default::default(),
            m_dma_wr_data_keep: Default::default(),
            m_dma_wr_data_last: Default::default(),
            m_dma_wr_done_valid: Default::default(),
            m_dma_wr_done_err: Default::default(),
            m_desc_valid: Default::default(),
            m_desc_ready: Default::default(),
            m_desc_data: Default::default(),
            m_desc_qp: Default::default(),
            cnt_executed: Default::default(),
            cnt_dropped: Default::default(),
            cnt_unsupported: Default::default(),
            cnt_dma_err: Default::default(),
            chk: Default::default(),
            mem: RAM::new(Default::default()),
            req: Default::default(),
            qpf: Default::default(),
            stf: Default::default(),
            st_out: Default::default(),
            ack: Default::default(),
            st: Default::default(),
            hdr: Default::default(),
            qp_row: Default::default(),
            mr_row: Default::default(),
            st_row: Default::default(),
            verdict: Default::default(),
            addr: Default::default(),
            n_epsn: Default::default(),
            n_msn: Default::default(),
            n_nak: Default::default(),
            n_open: Default::default(),
            n_addr: Default::default(),
            n_resid: Default::default(),
            n_wlen: Default::default(),
            n_err: Default::default(),
            n_write: Default::default(),
            r_send: Default::default(),
            r_syn: Default::default(),
            r_psn: Default::default(),
            r_msn: Default::default(),
            dma_addr: Default::default(),
            cnt_exec: Default::default(),
            cnt_drop: Default::default(),
            cnt_unsup: Default::default(),
            cnt_dmae: Default::default(),
            write: Default::default(),
            sendwrite: Default::default(),
            first: Default::default(),
            mid: Default::default(),
            last: Default::default(),
            only: Default::default(),
            len64: Default::default(),
            len32: Default::default(),
            psn_next: Default::default(),
            psn_prev: Default::default(),
            msn_next: Default::default(),
            qp_hi: Default::default(),
            qp_ok: Default::default(),
            k_one24: Constant::new(bits::<24>(1)),
            k_one32: Constant::new(bits::<32>(1)),
            k_zero32: Constant::new(bits::<32>(0)),
            k_qp_hi: Constant::new(bits::<24>((0xFF_FFFFu64 << A) & 0xFF_FFFF)),
            k_key_lo: Constant::new(bits::<32>(((1u64 << A) - 1) << 8)),
            k_pkey_mask: Constant::new(bits::<16>(0x7FFF)),
            k_ack_op: Constant::new(bits::<8>(0x11)),
            k_rnr: Constant::new(bits::<8>(0x20)),
            k_syn_ack: Constant::new(bits::<8>(0x1F)),
            k_syn_seq: Constant::new(bits::<8>(0x60)),
            k_syn_inv: Constant::new(bits::<8>(0x61)),
            k_syn_acc: Constant::new(bits::<8>(0x62)),
        }
    }
}

impl<const A: usize> Logic for Responder<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st, hdr, qp_row, mr_row, st_row, verdict, addr, n_epsn, n_msn, n_nak,
            n_open, n_addr, n_resid, n_wlen, n_err, n_write, r_send, r_syn, r_psn, r_msn, dma_addr,
            cnt_exec, cnt_drop, cnt_unsup, cnt_dmae
        );
        clock!(self, clock, chk);
        self.chk.reset.next = self.reset.val();
        self.mem.read_clock.next = self.clock.val();
        self.mem.write_clock.next = self.clock.val();

        // ---- Field views of the captured request and rows.
        self.req.word.next = self.hdr.q.val();
        self.qpf.word.next = self.qp_row.q.val();
        self.stf.word.next = self.st_row.q.val();

        // Opcode decode (SEND 0x00-0x05, 0x16, 0x17; WRITE 0x06-0x0B).
        self.write.next = (self.req.op.val() == 6)
            | (self.req.op.val() == 7)
            | (self.req.op.val() == 8)
            | (self.req.op.val() == 9)
            | (self.req.op.val() == 10)
            | (self.req.op.val() == 11);
        self.sendwrite.next = self.write.val()
            | (self.req.op.val() == 0)
            | (self.req.op.val() == 1)
            | (self.req.op.val() == 2)
            | (self.req.op.val() == 3)
            | (self.req.op.val() == 4)
            | (self.req.op.val() == 5)
            | (self.req.op.val() == 22)
            | (self.req.op.val() == 23);
        self.first.next = self.req.op.val() == 6;
        self.mid.next = self.req.op.val() == 7;
        self.last.next = (self.req.op.val() == 8) | (self.req.op.val() == 9);
        self.only.next = (self.req.op.val() == 10) | (self.req.op.val() == 11);
        self.len64.next = bit_cast::<64, 16>(self.req.len.val());
        self.len32.next = bit_cast::<32, 16>(self.req.len.val());
        self.psn_next.next = self.req.psn.val() + self.k_one24.val();
        self.psn_prev.next = self.stf.epsn.val() - self.k_one24.val();
        self.msn_next.next = self.stf.msn.val() + self.k_one24.val();
        self.qp_hi.next = (self.req.dqp.val() & self.k_qp_hi.val()).any();
        // QP 2 RTR or 3 RTS, RC, not in error; the default P_Key.
        self.qp_ok.next = ((self.qpf.state.val() == 2) | (self.qpf.state.val() == 3))
            & !self.qpf.qtype.val().any()
            & !self.stf.err.val().any()
            & ((self.req.pkey.val() & self.k_pkey_mask.val()) == self.k_pkey_mask.val());

        // ---- The check.
        self.chk.s_hdr.next = self.hdr.q.val();
        self.chk.s_qp.next = self.qp_row.q.val();
        self.chk.s_mr.next = self.mr_row.q.val();
        self.chk.s_state.next = self.st_row.q.val();
        self.chk.s_wqe_ready.next = false;
        self.chk.s_valid.next = (self.st.q.val() == 3) & self.qp_ok.val();
        self.chk.m_ready.next = self.st.q.val() == 4;

        // ---- Defaults.
        self.s_hdr_ready.next = false;
        self.s_init_ready.next = self.st.q.val() == 0;
        self.s_axis_tready.next = false;
        self.qp_look_valid.next = false;
        self.mr_look_valid.next = false;
        self.qp_look_row.next = self.req.dqp.val().get_bits::<A>(0);
        self.mr_look_row.next = self.req.key.val().get_bits::<A>(8);
        self.mem.read_address.next = self.req.dqp.val().get_bits::<A>(0);
        self.mem.write_address.next = self.req.dqp.val().get_bits::<A>(0);
        self.mem.write_enable.next = false;
        self.st_out.epsn.next = self.n_epsn.q.val();
        self.st_out.msn.next = self.n_msn.q.val();
        self.st_out.nak.next = self.n_nak.q.val();
        self.st_out.open.next = self.n_open.q.val();
        self.st_out.addr.next = self.n_addr.q.val();
        self.st_out.resid.next = self.n_resid.q.val();
        self.st_out.wlen.next = self.n_wlen.q.val();
        self.st_out.err.next = self.n_err.q.val();
        self.mem.write_data.next = self.st_out.word.val();
        self.m_dma_wr_req_valid.next = false;
        self.m_dma_wr_req_addr.next = self.dma_addr.q.val();
        self.m_dma_wr_req_len.next = self.req.len.val();
        self.m_dma_wr_data_valid.next = false;
        self.m_dma_wr_data.next = self.s_axis_tdata.val();
        self.m_dma_wr_data_keep.next = self.s_axis_tkeep.val();
        self.m_dma_wr_data_last.next = self.s_axis_tlast.val();
        self.ack.op.next = self.k_ack_op.val();
        self.ack.psn.next = self.r_psn.q.val();
        self.ack.dqp.next = self.qpf.dest.val();
        self.ack.pkey.next = self.qpf.pkey.val();
        self.ack.key.next =
            bit_cast::<32, 8>(self.r_syn.q.val()) << 24 | bit_cast::<32, 24>(self.r_msn.q.val());
        self.m_desc_data.next = self.ack.word.val();
        self.m_desc_qp.next = self.req.dqp.val().get_bits::<A>(0);
        self.m_desc_valid.next = self.st.q.val() == 11;

        self.st.d.next = self.st.q.val();
        self.hdr.d.next = self.hdr.q.val();
        self.qp_row.d.next = self.qp_row.q.val();
        self.mr_row.d.next = self.mr_row.q.val();
        self.st_row.d.next = self.st_row.q.val();
        self.verdict.d.next = self.verdict.q.val();
        self.addr.d.next = self.addr.q.val();
        self.n_epsn.d.next = self.n_epsn.q.val();
        self.n_msn.d.next = self.n_msn.q.val();
        self.n_nak.d.next = self.n_nak.q.val();
        self.n_open.d.next = self.n_open.q.val();
        self.n_addr.d.next = self.n_addr.q.val();
        self.n_resid.d.next = self.n_resid.q.val();
        self.n_wlen.d.next = self.n_wlen.q.val();
        self.n_err.d.next = self.n_err.q.val();
        self.n_write.d.next = self.n_write.q.val();
        self.r_send.d.next = self.r_send.q.val();
        self.r_syn.d.next = self.r_syn.q.val();
        self.r_psn.d.next = self.r_psn.q.val();
        self.r_msn.d.next = self.r_msn.q.val();
        self.dma_addr.d.next = self.dma_addr.q.val();
        self.cnt_exec.d.next = self.cnt_exec.q.val();
        self.cnt_drop.d.next = self.cnt_drop.q.val();
        self.cnt_unsup.d.next = self.cnt_unsup.q.val();
        self.cnt_dmae.d.next = self.cnt_dmae.q.val();

        // ---- IDLE: a state row to reset, else the next request.
        if self.st.q.val() == 0 {
            if self.s_init_valid.val() {
                self.mem.write_address.next = self.s_init_qp.val();
                self.st_out.epsn.next = self.s_init_psn.val();
                self.st_out.msn.next = 0.into();
                self.st_out.nak.next = 0.into();
                self.st_out.open.next = 0.into();
                self.st_out.addr.next = 0.into();
                self.st_out.resid.next = self.k_zero32.val();
                self.st_out.wlen.next = self.k_zero32.val();
                self.st_out.err.next = 0.into();
                self.mem.write_enable.next = true;
            } else {
                self.s_hdr_ready.next = true;
                if self.s_hdr_valid.val() {
                    self.hdr.d.next = self.s_hdr_data.val();
                    self.st.d.next = 1.into();
                }
            }
        }
        // ---- LOOK: the QP and region rows (answered next cycle); the state row's read.
        if self.st.q.val() == 1 {
            if self.qp_hi.val() {
                self.cnt_drop.d.next = self.cnt_drop.q.val() + self.k_one32.val();
                self.st.d.next = 8.into();
                self.r_send.d.next = false;
                self.n_write.d.next = false;
            } else {
                self.qp_look_valid.next = self.mr_look_ready.val();
                self.mr_look_valid.next = self.qp_look_ready.val();
                if self.qp_look_ready.val() & self.mr_look_ready.val() {
                    self.st.d.next = 2.into();
                }
            }
        }
        if self.st.q.val() == 2 {
            self.qp_row.d.next = self.qp_got_data.val();
            self.mr_row.d.next = self.mr_got_data.val();
            self.st_row.d.next = self.mem.read_data.val();
            self.st.d.next = 3.into();
        }
        // ---- PRE: the QP-level checks; then the responder's.
        if self.st.q.val() == 3 {
            self.r_send.d.next = false;
            self.n_write.d.next = false;
            if self.qp_ok.val() {
                if self.chk.s_ready.val() {
                    self.st.d.next = 4.into();
                }
            } else {
                self.cnt_drop.d.next = self.cnt_drop.q.val() + self.k_one32.val();
                self.st.d.next = 8.into();
            }
        }
        if (self.st.q.val() == 4) & self.chk.m_valid.val() {
            self.verdict.d.next = self.chk.m_verdict.val();
            self.addr.d.next = self.chk.m_addr.val();
            self.st.d.next = 5.into();
        }
        // ---- ACT: the next state row and the response, by verdict.
        if self.st.q.val() == 5 {
            self.n_epsn.d.next = self.stf.epsn.val();
            self.n_msn.d.next = self.stf.msn.val();
            self.n_nak.d.next = self.stf.nak.val();
            self.n_open.d.next = self.stf.open.val();
            self.n_addr.d.next = self.stf.addr.val();
            self.n_resid.d.next = self.stf.resid.val();
            self.n_wlen.d.next = self.stf.wlen.val();
            self.n_err.d.next = 0.into();
            self.n_write.d.next = true;
            self.r_send.d.next = true;
            self.r_psn.d.next = self.req.psn.val();
            self.r_msn.d.next = self.stf.msn.val();
            self.r_syn.d.next = self.k_syn_ack.val();
            self.dma_addr.d.next = self.stf.addr.val();
            if self.first.val() | self.only.val() {
                self.dma_addr.d.next = self.addr.q.val();
            }
            self.st.d.next = 8.into();
            if !self.req.len.val().any() {
                self.st.d.next = 10.into();
            }
            if self.verdict.q.val() == 0 {
                if self.write.val() {
                    self.cnt_exec.d.next = self.cnt_exec.q.val() + self.k_one32.val();
                    self.n_nak.d.next = 0.into();
                    self.n_epsn.d.next = self.psn_next.val();
                    if self.first.val() {
                        self.n_open.d.next = 2.into();
                        self.n_addr.d.next = self.addr.q.val() + self.len64.val();
                        self.n_resid.d.next =
                            self.req.mid.val().get_bits::<32>(0) - self.len32.val();
                        self.n_wlen.d.next = self.req.mid.val().get_bits::<32>(0);
                    }
                    if self.mid.val() {
                        self.n_addr.d.next = self.stf.addr.val() + self.len64.val();
                        self.n_resid.d.next = self.stf.resid.val() - self.len32.val();
                    }
                    if self.last.val() | self.only.val() {
                        self.n_open.d.next = 0.into();
                        self.n_msn.d.next = self.msn_next.val();
                        self.r_msn.d.next = self.msn_next.val();
                    }
                    self.r_send.d.next = self.req.ack.val().any();
                    if self.req.len.val().any() {
                        self.st.d.next = 6.into();
                    }
                } else {
                    self.cnt_unsup.d.next = self.cnt_unsup.q.val() + self.k_one32.val();
                    self.n_write.d.next = false;
                    self.r_send.d.next = false;
                }
            }
            if self.verdict.q.val() == 1 {
                self.n_nak.d.next = 1.into();
                self.r_syn.d.next = self.k_syn_seq.val();
                self.r_psn.d.next = self.stf.epsn.val();
            }
            if self.verdict.q.val() == 2 {
                self.n_write.d.next = false;
                self.r_send.d.next = false;
            }
            if self.verdict.q.val() == 3 {
                // A duplicate SEND or WRITE is ACKed with ePSN - 1; READ and atomic replays
                // come with the READ path.
                self.n_write.d.next = false;
                self.r_send.d.next = self.sendwrite.val();
                self.r_psn.d.next = self.psn_prev.val();
            }
            if self.verdict.q.val() == 4 {
                self.n_nak.d.next = 0.into();
                self.r_syn.d.next = self.k_rnr.val() | bit_cast::<8, 5>(self.qpf.rnr.val());
            }
            if (self.verdict.q.val() >= 5)
                & (self.verdict.q.val() != 9)
                & (self.verdict.q.val() != 10)
                & (self.verdict.q.val() != 11)
                & (self.verdict.q.val() != 12)
            {
                self.n_nak.d.next = 0.into();
                self.n_err.d.next = 1.into();
                self.r_syn.d.next = self.k_syn_inv.val();
            }
            if (self.verdict.q.val() == 9)
                | (self.verdict.q.val() == 10)
                | (self.verdict.q.val() == 11)
                | (self.verdict.q.val() == 12)
            {
                self.n_nak.d.next = 0.into();
                self.n_err.d.next = 1.into();
                self.r_syn.d.next = self.k_syn_acc.val();
            }
        }
        // ---- The WRITE's payload into host memory.
        if self.st.q.val() == 6 {
            self.m_dma_wr_req_valid.next = true;
            if self.m_dma_wr_req_ready.val() {
                self.st.d.next = 7.into();
            }
        }
        if self.st.q.val() == 7 {
            self.m_dma_wr_data_valid.next = self.s_axis_tvalid.val();
            self.s_axis_tready.next = self.m_dma_wr_data_ready.val();
            if self.s_axis_tvalid.val() & self.m_dma_wr_data_ready.val() & self.s_axis_tlast.val() {
                self.st.d.next = 9.into();
            }
        }
        if (self.st.q.val() == 9) & self.m_dma_wr_done_valid.val() {
            if self.m_dma_wr_done_err.val() {
                self.cnt_dmae.d.next = self.cnt_dmae.q.val() + self.k_one32.val();
            }
            self.st.d.next = 10.into();
        }
        // ---- A payload not written: discarded.
        if self.st.q.val() == 8 {
            self.s_axis_tready.next = true;
            if !self.req.len.val().any() {
                self.st.d.next = 10.into();
            }
            if self.s_axis_tvalid.val() & self.s_axis_tlast.val() {
                self.st.d.next = 10.into();
            }
        }
        // ---- COMMIT: the state row written back; then the response, if any.
        if self.st.q.val() == 10 {
            self.mem.write_enable.next = self.n_write.q.val();
            self.st.d.next = 0.into();
            if self.r_send.q.val() {
                self.st.d.next = 11.into();
            }
        }
        if (self.st.q.val() == 11) & self.m_desc_ready.val() {
            self.st.d.next = 0.into();
        }

        self.cnt_executed.next = self.cnt_exec.q.val();
        self.cnt_dropped.next = self.cnt_drop.q.val();
        self.cnt_unsupported.next = self.cnt_unsup.q.val();
        self.cnt_dma_err.next = self.cnt_dmae.q.val();
        if self.reset.val() {
            self.st.d.next = 0.into();
            self.cnt_exec.d.next = self.k_zero32.val();
            self.cnt_drop.d.next = self.k_zero32.val();
            self.cnt_unsup.d.next = self.k_zero32.val();
            self.cnt_dmae.d.next = self.k_zero32.val();
        }
    }
}
