//! The RC completer: what comes back for a QP's requests, against its send ring, as the
//! transport model's completer (`completer::receive`, `on_time`, `fail_at`) handles it. Events,
//! one at a time:
//!
//! - **a response** (`s_hdr_*`, from the opcode demultiplexer; a READ response's payload on
//!   `s_axis_*`): its QP's attribute row, the completer state row (`comp_state`), the view row
//!   (`comp_view`: the ring's consumer, the first PSN of the request there, READs and atomics
//!   completed, rewinds asked for, an RNR wait, an error) and the requester's send point are
//!   read; the request at the consumer (the oldest, present once the requester has started it)
//!   is read from the send ring with its entries checked ([`crate::send_wqe`]; kept while the
//!   next response finds the same request); then [`crate::comp_check`] decides one step at a
//!   time: a step that completes the oldest request (a coalesced ACK covering it) writes its
//!   completion (if signalled), moves the consumer and the front PSN on, and steps again with
//!   the next request; the last step acts: READ data is placed at its offset across the READ's
//!   entries ([`crate::sge_pieces`], [`crate::payload_scatter`]), an atomic's original value
//!   at its destination; the state row written; a failure completes the oldest request with
//!   its status and flushes the rest; a rewind counted; the READ or atomic completed; an RNR
//!   wait started or the ACK timer restarted or stopped ([`crate::qp_timers`]' commands);
//! - **a timer's expiry** (`s_exp_*`): the end of an RNR wait counts a rewind and restarts the
//!   ACK timer when something is outstanding; an ACK timeout with something outstanding spends
//!   a retry (none left: the oldest request fails with RETRY_EXC_ERR), starts a retry and
//!   counts a rewind, and restarts the timer;
//! - **a request the requester refused** (`s_fail_*`, its local check): it completes with the
//!   requester's status, the requests before it (in flight) and after it with WR_FLUSH_ERR.
//!
//! A failure leaves the view in error (`ERR`): the send ring is flushed up to its producer at
//! that moment (each request read for its `wr_id`), later responses and expiries are dropped.
//! Responses for a QP beyond the table, not RC, not in RTS, in error, or with another P_Key
//! than the default are dropped and counted, their payload discarded.
//!
//! After every event the requester's doorbell rings (`m_kick_*`): a completion opens its
//! window, a rewind sends again. The requester reads the view and the oldest PSN from a copy
//! of the rows (`cv_look_qp`, answered the clock after). `s_init_*` starts a QP's rows when it
//! enters RTS (its SQ_PSN and the ring's consumer, the retry counters from its attributes).
//!
//! Not here yet: the receive ring's flush when a request fails (the responder's ring).

use rust_hdl::prelude::*;

use crate::comp_check::{CompCheck, CsFields, CsJoin};
use crate::payload_scatter::PayloadScatter;
use crate::req_segment::{SWQE_BITS, swqe_offset_of};
use crate::row_table::{CS_BITS, CV_BITS, MR_BITS, QP_BITS, cv_offset_of, qp_offset_of};
use crate::send_wqe::SendWqe;
use crate::sge_pieces::SgePieces;
use crate::transport_header::{TH_BITS, th_offset_of};
use crate::{field_join, field_split};

field_split!(
    /// The response header fields the engine reads itself.
    CpThFields, TH_BITS, th_offset_of, {
        psn: 24 => "PSN",
        len: 16 => "payload_len",
        dqp: 24 => "DestQP",
        pkey: 16 => "P_Key",
        va: 64 => "ext_va",
        key: 32 => "ext_key",
    }
);

field_split!(
    /// The QP attributes the engine reads.
    CpQpFields, QP_BITS, qp_offset_of, {
        state: 3 => "STATE",
        qtype: 1 => "TYPE",
        pd: 16 => "PD",
        mtu: 3 => "PATH_MTU",
        timeout: 5 => "TIMEOUT",
        retry: 3 => "RETRY_CNT",
        rnr: 3 => "RNR_RETRY",
        scq: 16 => "SEND_CQ",
        sigall: 1 => "SIG_ALL",
    }
);

field_split!(
    /// A view row, as read.
    CpCvFields, CV_BITS, cv_offset_of, {
        cons: 16 => "CONS",
        front: 24 => "FRONT_PSN",
        rd: 4 => "RD_DONE",
        rew: 4 => "REWINDS",
        rnr: 1 => "RNR_WAIT",
        err: 1 => "ERR",
    }
);

field_join!(
    /// A view row, as written.
    CpCvJoin, CV_BITS, cv_offset_of, {
        cons: 16 => "CONS",
        front: 24 => "FRONT_PSN",
        rd: 4 => "RD_DONE",
        rew: 4 => "REWINDS",
        rnr: 1 => "RNR_WAIT",
        err: 1 => "ERR",
    }
);

field_split!(
    /// The request fields the engine reads (its completion's).
    CpWqeFields, SWQE_BITS, swqe_offset_of, {
        wr_id: 64 => "WR_ID",
        op: 8 => "OPCODE",
        flags: 8 => "FLAGS",
    }
);

/// Bits of the requester's copy of a QP's rows: the view, then the oldest PSN.
pub const RV_BITS: usize = CV_BITS + 24;

// Engine states (literals in the code, rule 5): 0 IDLE, 1 LOOK, 2 ROWS, 3 FRONT, 4 FRONT_WAIT,
// 5 NPK, 6 STEP, 7 STEP_WAIT, 8 PIECES, 9 PLACE, 10 PLACE_WAIT, 11 DISCARD, 12 FINISH, 13 CQE,
// 14 FL_REQ, 15 FL_WAIT, 16 TIMER, 17 WB, 18 EXP.
// Events: 0 a response, 1 an ACK timeout, 2 the end of an RNR wait, 3 a refused request.

#[derive(LogicBlock)]
pub struct Completer<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Responses (transport headers), and READ responses' payloads in their order.
    pub s_hdr_valid: Signal<In, Bit>,
    pub s_hdr_ready: Signal<Out, Bit>,
    pub s_hdr_data: Signal<In, Bits<TH_BITS>>,
    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    /// A timer's expiry ([`crate::qp_timers`]): an RNR wait's end (`rnr`) or an ACK timeout.
    pub s_exp_valid: Signal<In, Bit>,
    pub s_exp_ready: Signal<Out, Bit>,
    pub s_exp_qp: Signal<In, Bits<A>>,
    pub s_exp_rnr: Signal<In, Bit>,
    /// A request the requester refused, at its ring index, with its `ibv_wc_status`.
    pub s_fail_valid: Signal<In, Bit>,
    pub s_fail_ready: Signal<Out, Bit>,
    pub s_fail_qp: Signal<In, Bits<A>>,
    pub s_fail_index: Signal<In, Bits<16>>,
    pub s_fail_status: Signal<In, Bits<5>>,
    /// A QP entering RTS: its first PSN and the send ring's consumer; taken between events.
    pub s_init_valid: Signal<In, Bit>,
    pub s_init_ready: Signal<Out, Bit>,
    pub s_init_qp: Signal<In, Bits<A>>,
    pub s_init_psn: Signal<In, Bits<24>>,
    pub s_init_index: Signal<In, Bits<16>>,
    pub s_init_retry: Signal<In, Bits<3>>,
    pub s_init_rnr: Signal<In, Bits<3>>,
    /// QP attribute lookups ([`crate::row_table`]: answered the clock after).
    pub qp_look_valid: Signal<Out, Bit>,
    pub qp_look_ready: Signal<In, Bit>,
    pub qp_look_row: Signal<Out, Bits<A>>,
    pub qp_got_data: Signal<In, Bits<QP_BITS>>,
    /// The requester's send point of QP `sp_look_qp`, answered the clock after.
    pub sp_look_qp: Signal<Out, Bits<A>>,
    pub sp_got_sent: Signal<In, Bits<24>>,
    pub sp_got_nstart: Signal<In, Bits<16>>,
    /// The requester's reads of a QP's view and oldest PSN, answered the clock after.
    pub cv_look_qp: Signal<In, Bits<A>>,
    pub cv_got_oldest: Signal<Out, Bits<24>>,
    pub cv_got_cons: Signal<Out, Bits<16>>,
    pub cv_got_front: Signal<Out, Bits<24>>,
    pub cv_got_rd_done: Signal<Out, Bits<4>>,
    pub cv_got_rewinds: Signal<Out, Bits<4>>,
    pub cv_got_rnr: Signal<Out, Bit>,
    pub cv_got_err: Signal<Out, Bit>,
    /// The send rings' queue manager (ring n is QP row n's).
    pub sq_look_valid: Signal<Out, Bit>,
    pub sq_look_ready: Signal<In, Bit>,
    pub sq_look_queue: Signal<Out, Bits<A>>,
    pub sq_got_valid: Signal<In, Bit>,
    pub sq_got_base: Signal<In, Bits<64>>,
    pub sq_got_size: Signal<In, Bits<32>>,
    pub sq_got_prod: Signal<In, Bits<16>>,
    /// Memory region lookups (by the key's index).
    pub mr_look_valid: Signal<Out, Bit>,
    pub mr_look_ready: Signal<In, Bit>,
    pub mr_look_row: Signal<Out, Bits<A>>,
    pub mr_got_data: Signal<In, Bits<MR_BITS>>,
    /// The DMA port: requests read, READ data and atomic values written.
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
    /// Completions for the completion writer: a `cqe`'s four beats.
    pub m_cqe_valid: Signal<Out, Bit>,
    pub m_cqe_ready: Signal<In, Bit>,
    pub m_cqe_cq: Signal<Out, Bits<16>>,
    pub m_cqe_data: Signal<Out, Bits<64>>,
    pub m_cqe_last: Signal<Out, Bit>,
    /// Timer commands ([`crate::qp_timers`]): arm (an RNR wait with `code` the NAK's timer
    /// code, or the ACK timer with `code` the QP's TIMEOUT) or stop.
    pub m_tmr_valid: Signal<Out, Bit>,
    pub m_tmr_ready: Signal<In, Bit>,
    pub m_tmr_qp: Signal<Out, Bits<A>>,
    pub m_tmr_arm: Signal<Out, Bit>,
    pub m_tmr_rnr: Signal<Out, Bit>,
    pub m_tmr_code: Signal<Out, Bits<5>>,
    /// The requester's doorbell for QP `m_kick_qp` (one clock).
    pub m_kick_valid: Signal<Out, Bit>,
    pub m_kick_qp: Signal<Out, Bits<A>>,
    /// Responses taken; dropped (no such QP, not RC in RTS, in error, P_Key); request reads
    /// and payload writes the host refused.
    pub cnt_responses: Signal<Out, Bits<32>>,
    pub cnt_dropped: Signal<Out, Bits<32>>,
    pub cnt_dma_err: Signal<Out, Bits<32>>,
    /// An event is being handled.
    pub busy: Signal<Out, Bit>,

    /// Completer state and view rows; the requester's copy of the view and oldest PSN.
    cs_mem: RAM<Bits<CS_BITS>, A>,
    cv_mem: RAM<Bits<CV_BITS>, A>,
    rv_mem: RAM<Bits<RV_BITS>, A>,
    step: CompCheck,
    wqe: SendWqe<A, A>,
    pieces: SgePieces,
    scat: PayloadScatter,
    thf: CpThFields,
    qpf: CpQpFields,
    csf: CsFields,
    cs_new: CsJoin,
    cvf: CpCvFields,
    cv_out: CpCvJoin,
    rvf: CpCvFields,
    wf: CpWqeFields,

    st: DFF<Bits<5>>,
    ev: DFF<Bits<2>>,
    q: DFF<Bits<A>>,
    hdr: DFF<Bits<TH_BITS>>,
    qp_row: DFF<Bits<QP_BITS>>,
    qp_asked: DFF<Bit>,
    qp_have: DFF<Bit>,
    sent: DFF<Bits<24>>,
    nstart: DFF<Bits<16>>,
    /// The completer state row being worked on (comp_check's word).
    w_cs: DFF<Bits<CS_BITS>>,
    /// The view being worked on.
    v_cons: DFF<Bits<16>>,
    v_front: DFF<Bits<24>>,
    v_rd: DFF<Bits<4>>,
    v_rew: DFF<Bits<4>>,
    v_rnr: DFF<Bits<1>>,
    v_err: DFF<Bits<1>>,
    /// The request the send request reader answered last: its QP and index.
    f_tag_v: DFF<Bit>,
    f_tag_q: DFF<Bits<A>>,
    f_tag_i: DFF<Bits<16>>,
    /// The oldest request: present, kind (0 SEND/WRITE, 1 READ, 2 atomic), packets.
    f_have: DFF<Bit>,
    f_kind: DFF<Bits<2>>,
    f_npk: DFF<Bits<24>>,
    /// An earlier step of this response completed a request; this step completed one and
    /// the response steps again; the response is dropped.
    completed: DFF<Bit>,
    d_more: DFF<Bit>,
    skip: DFF<Bit>,
    /// The step's state row, kept while its READ data or atomic value is placed.
    d_cs: DFF<Bits<CS_BITS>>,
    /// The last step's actions.
    d_fail: DFF<Bit>,
    d_status: DFF<Bits<5>>,
    d_rewind: DFF<Bit>,
    d_complete: DFF<Bit>,
    d_rnr: DFF<Bit>,
    d_timer: DFF<Bits<2>>,
    d_off: DFF<Bits<32>>,
    /// Placement: READ data or an atomic's value; the pieces' clocks; the value's beat sent;
    /// the payload still to discard.
    p_atomic: DFF<Bit>,
    p_wait: DFF<Bits<3>>,
    p_sent: DFF<Bit>,
    p_err: DFF<Bit>,
    drain: DFF<Bit>,
    /// The completion being written: its beat, status, byte length, ring index, and the state
    /// to go on in.
    c_beat: DFF<Bits<2>>,
    c_status: DFF<Bits<5>>,
    c_len: DFF<Bits<32>>,
    c_idx: DFF<Bits<16>>,
    c_ret: DFF<Bits<5>>,
    /// The flush: the next index, the failing one and its status.
    fl_idx: DFF<Bits<16>>,
    fl_fidx: DFF<Bits<16>>,
    fl_status: DFF<Bits<5>>,
    /// The timer command to send.
    t_pend: DFF<Bit>,
    t_arm: DFF<Bit>,
    t_rnr: DFF<Bit>,
    t_code: DFF<Bits<5>>,
    cnt_resp: DFF<Bits<32>>,
    cnt_drop: DFF<Bits<32>>,
    cnt_dmae: DFF<Bits<32>>,

    l_lenp: Signal<Local, Bits<36>>,
    l_wcop: Signal<Local, Bits<8>>,
    l_signaled: Signal<Local, Bit>,
    l_ok: Signal<Local, Bit>,
    l_out: Signal<Local, Bits<24>>,
    l_psnd: Signal<Local, Bits<24>>,
    l_hit: Signal<Local, Bit>,
    k_one2: Constant<Bits<2>>,
    k_one4: Constant<Bits<4>>,
    k_one3: Constant<Bits<3>>,
    k_one16: Constant<Bits<16>>,
    k_one32: Constant<Bits<32>>,
    k_qp_hi: Constant<Bits<24>>,
    k_pkey_mask: Constant<Bits<16>>,
    k_m255: Constant<Bits<36>>,
    k_m511: Constant<Bits<36>>,
    k_m1023: Constant<Bits<36>>,
    k_m2047: Constant<Bits<36>>,
    k_m4095: Constant<Bits<36>>,
    k_one24: Constant<Bits<24>>,
    k_eight16: Constant<Bits<16>>,
}

impl<const A: usize> Completer<A> {
    /// QP rows.
    pub const ROWS: usize = 1 << A;
}

impl<const A: usize> Default for Completer<A> {
    fn default() -> Self {
        // The requester's copy is written and read at these widths as literals (rule 5).
        assert_eq!((CV_BITS, RV_BITS), (50, 74), "the view's layout");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_hdr_valid: Default::default(),
            s_hdr_ready: Default::default(),
            s_hdr_data: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            s_exp_valid: Default::default(),
            s_exp_ready: Default::default(),
            s_exp_qp: Default::default(),
            s_exp_rnr: Default::default(),
            s_fail_valid: Default::default(),
            s_fail_ready: Default::default(),
            s_fail_qp: Default::default(),
            s_fail_index: Default::default(),
            s_fail_status: Default::default(),
            s_init_valid: Default::default(),
            s_init_ready: Default::default(),
            s_init_qp: Default::default(),
            s_init_psn: Default::default(),
            s_init_index: Default::default(),
            s_init_retry: Default::default(),
            s_init_rnr: Default::default(),
            qp_look_valid: Default::default(),
            qp_look_ready: Default::default(),
            qp_look_row: Default::default(),
            qp_got_data: Default::default(),
            sp_look_qp: Default::default(),
            sp_got_sent: Default::default(),
            sp_got_nstart: Default::default(),
            cv_look_qp: Default::default(),
            cv_got_oldest: Default::default(),
            cv_got_cons: Default::default(),
            cv_got_front: Default::default(),
            cv_got_rd_done: Default::default(),
            cv_got_rewinds: Default::default(),
            cv_got_rnr: Default::default(),
            cv_got_err: Default::default(),
            sq_look_valid: Default::default(),
            sq_look_ready: Default::default(),
            sq_look_queue: Default::default(),
            sq_got_valid: Default::default(),
            sq_got_base: Default::default(),
            sq_got_size: Default::default(),
            sq_got_prod: Default::default(),
            mr_look_valid: Default::default(),
            mr_look_ready: Default::default(),
            mr_look_row: Default::default(),
            mr_got_data: Default::default(),
            m_dma_rd_req_valid: Default::default(),
            m_dma_rd_req_ready: Default::default(),
            m_dma_rd_req_addr: Default::default(),
            m_dma_rd_req_len: Default::default(),
            m_dma_rd_data_valid: Default::default(),
            m_dma_rd_data_ready: Default::default(),
            m_dma_rd_data: Default::default(),
            m_dma_rd_data_last: Default::default(),
            m_dma_rd_data_err: Default::default(),
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
            m_cqe_valid: Default::default(),
            m_cqe_ready: Default::default(),
            m_cqe_cq: Default::default(),
            m_cqe_data: Default::default(),
            m_cqe_last: Default::default(),
            m_tmr_valid: Default::default(),
            m_tmr_ready: Default::default(),
            m_tmr_qp: Default::default(),
            m_tmr_arm: Default::default(),
            m_tmr_rnr: Default::default(),
            m_tmr_code: Default::default(),
            m_kick_valid: Default::default(),
            m_kick_qp: Default::default(),
            cnt_responses: Default::default(),
            cnt_dropped: Default::default(),
            cnt_dma_err: Default::default(),
            busy: Default::default(),
            cs_mem: Default::default(),
            cv_mem: Default::default(),
            rv_mem: Default::default(),
            step: Default::default(),
            wqe: Default::default(),
            pieces: Default::default(),
            scat: Default::default(),
            thf: Default::default(),
            qpf: Default::default(),
            csf: Default::default(),
            cs_new: Default::default(),
            cvf: Default::default(),
            cv_out: Default::default(),
            rvf: Default::default(),
            wf: Default::default(),
            st: Default::default(),
            ev: Default::default(),
            q: Default::default(),
            hdr: Default::default(),
            qp_row: Default::default(),
            qp_asked: Default::default(),
            qp_have: Default::default(),
            sent: Default::default(),
            nstart: Default::default(),
            w_cs: Default::default(),
            v_cons: Default::default(),
            v_front: Default::default(),
            v_rd: Default::default(),
            v_rew: Default::default(),
            v_rnr: Default::default(),
            v_err: Default::default(),
            f_tag_v: Default::default(),
            f_tag_q: Default::default(),
            f_tag_i: Default::default(),
            f_have: Default::default(),
            f_kind: Default::default(),
            f_npk: Default::default(),
            completed: Default::default(),
            d_more: Default::default(),
            skip: Default::default(),
            d_cs: Default::default(),
            d_fail: Default::default(),
            d_status: Default::default(),
            d_rewind: Default::default(),
            d_complete: Default::default(),
            d_rnr: Default::default(),
            d_timer: Default::default(),
            d_off: Default::default(),
            p_atomic: Default::default(),
            p_wait: Default::default(),
            p_sent: Default::default(),
            p_err: Default::default(),
            drain: Default::default(),
            c_beat: Default::default(),
            c_status: Default::default(),
            c_len: Default::default(),
            c_idx: Default::default(),
            c_ret: Default::default(),
            fl_idx: Default::default(),
            fl_fidx: Default::default(),
            fl_status: Default::default(),
            t_pend: Default::default(),
            t_arm: Default::default(),
            t_rnr: Default::default(),
            t_code: Default::default(),
            cnt_resp: Default::default(),
            cnt_drop: Default::default(),
            cnt_dmae: Default::default(),
            l_lenp: Default::default(),
            l_wcop: Default::default(),
            l_signaled: Default::default(),
            l_ok: Default::default(),
            l_out: Default::default(),
            l_psnd: Default::default(),
            l_hit: Default::default(),
            k_one2: Constant::new(bits::<2>(1)),
            k_one4: Constant::new(bits::<4>(1)),
            k_one3: Constant::new(bits::<3>(1)),
            k_one16: Constant::new(bits::<16>(1)),
            k_one32: Constant::new(bits::<32>(1)),
            k_qp_hi: Constant::new(bits::<24>((0xFF_FFFFu64 << A) & 0xFF_FFFF)),
            k_pkey_mask: Constant::new(bits::<16>(0x7FFF)),
            k_m255: Constant::new(255.into()),
            k_m511: Constant::new(511.into()),
            k_m1023: Constant::new(1023.into()),
            k_m2047: Constant::new(2047.into()),
            k_m4095: Constant::new(4095.into()),
            k_one24: Constant::new(bits::<24>(1)),
            k_eight16: Constant::new(bits::<16>(8)),
        }
    }
}

impl<const A: usize> Logic for Completer<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st, ev, q, hdr, qp_row, qp_asked, qp_have, sent, nstart, w_cs, v_cons,
            v_front, v_rd, v_rew, v_rnr, v_err, f_tag_v, f_tag_q, f_tag_i, f_have, f_kind, f_npk,
            completed, d_more, skip, d_cs, d_fail, d_status, d_rewind, d_complete, d_rnr, d_timer,
            d_off, p_atomic, p_wait, p_sent, p_err, drain, c_beat, c_status, c_len, c_idx, c_ret,
            fl_idx, fl_fidx, fl_status, t_pend, t_arm, t_rnr, t_code, cnt_resp, cnt_drop, cnt_dmae
        );
        clock!(self, clock, step, wqe, pieces, scat);
        self.cs_mem.read_clock.next = self.clock.val();
        self.cs_mem.write_clock.next = self.clock.val();
        self.cv_mem.read_clock.next = self.clock.val();
        self.cv_mem.write_clock.next = self.clock.val();
        self.rv_mem.read_clock.next = self.clock.val();
        self.rv_mem.write_clock.next = self.clock.val();
        self.step.reset.next = self.reset.val();
        self.wqe.reset.next = self.reset.val();
        self.scat.reset.next = self.reset.val();

        self.thf.word.next = self.hdr.q.val();
        self.qpf.word.next = self.qp_row.q.val();
        self.csf.word.next = self.w_cs.q.val();
        self.cvf.word.next = self.cv_mem.read_data.val();
        self.wf.word.next = self.wqe.m_wqe.val();
        self.cv_out.cons.next = self.v_cons.q.val();
        self.cv_out.front.next = self.v_front.q.val();
        self.cv_out.rd.next = self.v_rd.q.val();
        self.cv_out.rew.next = self.v_rew.q.val();
        self.cv_out.rnr.next = self.v_rnr.q.val();
        self.cv_out.err.next = self.v_err.q.val();
        self.cs_new.psn.next = self.csf.psn.val();
        self.cs_new.retry.next = self.csf.retry.val();
        self.cs_new.rnr.next = self.csf.rnr.val();
        self.cs_new.started.next = self.csf.started.val();

        // ---- Defaults.
        self.s_hdr_ready.next = false;
        self.s_exp_ready.next = false;
        self.s_fail_ready.next = false;
        self.s_init_ready.next = false;
        self.s_axis_tready.next = false;
        self.qp_look_valid.next = (self.st.q.val() == 1) & !self.qp_asked.q.val();
        self.qp_look_row.next = self.q.q.val();
        self.sp_look_qp.next = self.q.q.val();
        self.m_cqe_valid.next = false;
        self.m_cqe_cq.next = self.qpf.scq.val();
        self.m_cqe_data.next = 0.into();
        self.m_cqe_last.next = self.c_beat.q.val() == 3;
        self.m_tmr_valid.next = (self.st.q.val() == 16) & self.t_pend.q.val();
        self.m_tmr_qp.next = self.q.q.val();
        self.m_tmr_arm.next = self.t_arm.q.val();
        self.m_tmr_rnr.next = self.t_rnr.q.val();
        self.m_tmr_code.next = self.t_code.q.val();
        self.m_kick_valid.next = false;
        self.m_kick_qp.next = self.q.q.val();
        self.cnt_responses.next = self.cnt_resp.q.val();
        self.cnt_dropped.next = self.cnt_drop.q.val();
        self.cnt_dma_err.next = self.cnt_dmae.q.val();
        self.busy.next = self.st.q.val().any();

        // ---- The rows: read at the event's QP; the requester's copy at its own.
        self.cs_mem.read_address.next = self.q.q.val();
        self.cv_mem.read_address.next = self.q.q.val();
        self.cs_mem.write_address.next = self.q.q.val();
        self.cv_mem.write_address.next = self.q.q.val();
        self.rv_mem.write_address.next = self.q.q.val();
        self.cs_mem.write_data.next = self.w_cs.q.val();
        self.cv_mem.write_data.next = self.cv_out.word.val();
        self.rv_mem.write_data.next = bit_cast::<74, 50>(self.cv_out.word.val())
            | (bit_cast::<74, 24>(self.csf.psn.val()) << 50);
        self.cs_mem.write_enable.next = self.st.q.val() == 17;
        self.cv_mem.write_enable.next = self.st.q.val() == 17;
        self.rv_mem.write_enable.next = self.st.q.val() == 17;
        self.rv_mem.read_address.next = self.cv_look_qp.val();
        self.rvf.word.next = self.rv_mem.read_data.val().get_bits::<50>(0);
        self.cv_got_cons.next = self.rvf.cons.val();
        self.cv_got_front.next = self.rvf.front.val();
        self.cv_got_rd_done.next = self.rvf.rd.val();
        self.cv_got_rewinds.next = self.rvf.rew.val();
        self.cv_got_rnr.next = self.rvf.rnr.val().any();
        self.cv_got_err.next = self.rvf.err.val().any();
        self.cv_got_oldest.next = self.rv_mem.read_data.val().get_bits::<24>(50);

        // ---- The step: the working rows and the oldest request.
        self.step.s_valid.next = self.st.q.val() == 6;
        self.step.s_hdr.next = self.hdr.q.val();
        self.step.s_qp.next = self.qp_row.q.val();
        self.step.s_state.next = self.w_cs.q.val();
        self.step.s_sent_upto.next = self.sent.q.val();
        self.step.s_front_valid.next = self.f_have.q.val();
        self.step.s_front_kind.next = self.f_kind.q.val();
        self.step.s_front_first.next = self.v_front.q.val();
        self.step.s_front_npkts.next = self.f_npk.q.val();
        self.step.s_front_len.next = self.wqe.m_total.val().get_bits::<32>(0);
        self.step.s_completed.next = self.completed.q.val();
        self.step.m_ready.next = self.st.q.val() == 7;

        // ---- The send request reader: the ring of the event's QP, at `v_cons` (a front) or
        // the flush's index.
        self.wqe.s_req_valid.next = false;
        self.wqe.s_req_ring.next = self.q.q.val();
        self.wqe.s_req_index.next = self.v_cons.q.val();
        if self.st.q.val() == 14 {
            self.wqe.s_req_index.next = self.fl_idx.q.val();
        }
        self.wqe.s_req_pd.next = self.qpf.pd.val();
        self.wqe.m_ready.next = false;
        self.sq_look_valid.next = self.wqe.look_valid.val();
        self.wqe.look_ready.next = self.sq_look_ready.val();
        self.sq_look_queue.next = self.wqe.look_queue.val();
        self.wqe.got_valid.next = self.sq_got_valid.val();
        self.wqe.got_base.next = self.sq_got_base.val();
        self.wqe.got_size.next = self.sq_got_size.val();
        self.wqe.got_prod.next = self.sq_got_prod.val();
        self.mr_look_valid.next = self.wqe.mr_look_valid.val();
        self.wqe.mr_look_ready.next = self.mr_look_ready.val();
        self.mr_look_row.next = self.wqe.mr_look_row.val();
        self.wqe.mr_got_data.next = self.mr_got_data.val();
        self.m_dma_rd_req_valid.next = self.wqe.m_dma_rd_req_valid.val();
        self.wqe.m_dma_rd_req_ready.next = self.m_dma_rd_req_ready.val();
        self.m_dma_rd_req_addr.next = self.wqe.m_dma_rd_req_addr.val();
        self.m_dma_rd_req_len.next = self.wqe.m_dma_rd_req_len.val();
        self.wqe.m_dma_rd_data_valid.next = self.m_dma_rd_data_valid.val();
        self.m_dma_rd_data_ready.next = self.wqe.m_dma_rd_data_ready.val();
        self.wqe.m_dma_rd_data.next = self.m_dma_rd_data.val();
        self.wqe.m_dma_rd_data_last.next = self.m_dma_rd_data_last.val();
        self.wqe.m_dma_rd_data_err.next = self.m_dma_rd_data_err.val();

        // The request's completion opcode (ibv_wc_opcode) and whether it is signalled.
        self.l_wcop.next = 1.into();
        if (self.wf.op.val() == 2) | (self.wf.op.val() == 3) {
            self.l_wcop.next = 0.into();
        }
        if self.wf.op.val() == 4 {
            self.l_wcop.next = 2.into();
        }
        if self.wf.op.val() == 5 {
            self.l_wcop.next = 3.into();
        }
        if self.wf.op.val() == 6 {
            self.l_wcop.next = 4.into();
        }
        self.l_signaled.next = self.wf.flags.val().get_bit(1) | self.qpf.sigall.val().any();
        // Its packets: max(1, ceil(len / MTU)), one for an atomic.
        self.l_lenp.next = bit_cast::<36, 34>(self.wqe.m_total.val()) + self.k_m255.val();
        if self.qpf.mtu.val() == 2 {
            self.l_lenp.next = bit_cast::<36, 34>(self.wqe.m_total.val()) + self.k_m511.val();
        }
        if self.qpf.mtu.val() == 3 {
            self.l_lenp.next = bit_cast::<36, 34>(self.wqe.m_total.val()) + self.k_m1023.val();
        }
        if self.qpf.mtu.val() == 4 {
            self.l_lenp.next = bit_cast::<36, 34>(self.wqe.m_total.val()) + self.k_m2047.val();
        }
        if self.qpf.mtu.val() == 5 {
            self.l_lenp.next = bit_cast::<36, 34>(self.wqe.m_total.val()) + self.k_m4095.val();
        }
        // The response is for a QP this engine serves.
        self.l_ok.next = !(self.thf.dqp.val() & self.k_qp_hi.val()).any()
            & (self.qpf.state.val() == 3)
            & !self.qpf.qtype.val().any()
            & !self.cvf.err.val().any()
            & ((self.thf.pkey.val() & self.k_pkey_mask.val()) == self.k_pkey_mask.val());
        // Something sent is unacknowledged (oldest < sent).
        self.l_out.next = self.csf.psn.val() - self.sent.q.val();
        // A refused placement: the response acknowledged what was before it (oldest < psn).
        self.l_psnd.next = self.csf.psn.val() - self.thf.psn.val();
        // The reader's answer is this QP's request at the consumer.
        self.l_hit.next = self.f_tag_v.q.val()
            & (self.f_tag_q.q.val() == self.q.q.val())
            & (self.f_tag_i.q.val() == self.v_cons.q.val());

        // ---- Placement: the pieces of the READ's entries, the payload or the atomic's value.
        self.pieces.s_off.next = bit_cast::<34, 32>(self.d_off.q.val());
        self.pieces.s_len.next = self.thf.len.val();
        if self.p_atomic.q.val() {
            self.pieces.s_len.next = self.k_eight16.val();
        }
        self.pieces.s_addr0.next = self.wqe.m_addr0.val();
        self.pieces.s_len0.next = self.wqe.m_len0.val();
        self.pieces.s_addr1.next = self.wqe.m_addr1.val();
        self.pieces.s_len1.next = self.wqe.m_len1.val();
        self.pieces.s_addr2.next = self.wqe.m_addr2.val();
        self.pieces.s_len2.next = self.wqe.m_len2.val();
        self.pieces.s_addr3.next = self.wqe.m_addr3.val();
        self.pieces.s_len3.next = self.wqe.m_len3.val();
        self.pieces.s_total.next = self.wqe.m_total.val();
        self.scat.s_cmd_valid.next = false;
        self.scat.s_cmd_addr0.next = self.pieces.m_addr0.val();
        self.scat.s_cmd_len0.next = self.pieces.m_len0.val();
        self.scat.s_cmd_addr1.next = self.pieces.m_addr1.val();
        self.scat.s_cmd_len1.next = self.pieces.m_len1.val();
        self.scat.s_cmd_addr2.next = self.pieces.m_addr2.val();
        self.scat.s_cmd_len2.next = self.pieces.m_len2.val();
        self.scat.s_cmd_addr3.next = self.pieces.m_addr3.val();
        self.scat.s_cmd_len3.next = self.pieces.m_len3.val();
        // The payload goes to the scatter while placing READ data; an atomic's value is one
        // beat of its own.
        self.scat.s_axis_tdata.next = self.s_axis_tdata.val();
        self.scat.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.scat.s_axis_tlast.next = self.s_axis_tlast.val();
        self.scat.s_axis_tvalid.next = false;
        if self.p_atomic.q.val() {
            self.scat.s_axis_tdata.next = self.thf.va.val();
            self.scat.s_axis_tkeep.next = 255.into();
            self.scat.s_axis_tlast.next = true;
            self.scat.s_axis_tvalid.next = (self.st.q.val() == 10) & !self.p_sent.q.val();
        } else if self.st.q.val() == 10 {
            self.scat.s_axis_tvalid.next = self.s_axis_tvalid.val();
            self.s_axis_tready.next = self.scat.s_axis_tready.val();
        }
        if self.p_atomic.q.val() & (self.st.q.val() == 10) & self.scat.s_axis_tready.val() {
            self.p_sent.d.next = true;
        }
        self.scat.m_dma_wr_req_ready.next = self.m_dma_wr_req_ready.val();
        self.scat.m_dma_wr_data_ready.next = self.m_dma_wr_data_ready.val();
        self.scat.m_dma_wr_done_valid.next = self.m_dma_wr_done_valid.val();
        self.scat.m_dma_wr_done_err.next = self.m_dma_wr_done_err.val();
        self.scat.m_done_ready.next = false;
        self.m_dma_wr_req_valid.next = self.scat.m_dma_wr_req_valid.val();
        self.m_dma_wr_req_addr.next = self.scat.m_dma_wr_req_addr.val();
        self.m_dma_wr_req_len.next = self.scat.m_dma_wr_req_len.val();
        self.m_dma_wr_data_valid.next = self.scat.m_dma_wr_data_valid.val();
        self.m_dma_wr_data.next = self.scat.m_dma_wr_data.val();
        self.m_dma_wr_data_keep.next = self.scat.m_dma_wr_data_keep.val();
        self.m_dma_wr_data_last.next = self.scat.m_dma_wr_data_last.val();

        // ---- The completion's beats (cqe: WR_ID; BYTE_LEN, IMM; QPN, SRC_QP; STATUS, OPCODE,
        // FLAGS, WQE_INDEX), PHASE left to the writer. The QPN is the row.
        self.m_cqe_data.next = self.wf.wr_id.val();
        if self.c_beat.q.val() == 1 {
            self.m_cqe_data.next = bit_cast::<64, 32>(self.c_len.q.val());
        }
        if self.c_beat.q.val() == 2 {
            self.m_cqe_data.next = bit_cast::<64, A>(self.q.q.val());
        }
        if self.c_beat.q.val() == 3 {
            self.m_cqe_data.next = bit_cast::<64, 16>(self.c_idx.q.val()) << 32
                | bit_cast::<64, 8>(self.l_wcop.val()) << 8
                | bit_cast::<64, 5>(self.c_status.q.val());
        }

        match self.st.q.val().index() {
            0 => {
                // An event: a refused request, an expiry, a response; a QP's init between.
                self.s_init_ready.next = true;
                self.completed.d.next = false;
                self.skip.d.next = false;
                self.qp_asked.d.next = false;
                self.qp_have.d.next = false;
                self.t_pend.d.next = false;
                self.drain.d.next = false;
                self.p_atomic.d.next = false;
                if self.s_init_valid.val() {
                    // Both rows at once: write them from the working registers next clock.
                    self.q.d.next = self.s_init_qp.val();
                    self.cs_new.psn.next = self.s_init_psn.val();
                    self.cs_new.retry.next = self.s_init_retry.val();
                    self.cs_new.rnr.next = self.s_init_rnr.val();
                    self.cs_new.started.next = 0.into();
                    self.w_cs.d.next = self.cs_new.word.val();
                    self.v_cons.d.next = self.s_init_index.val();
                    self.v_front.d.next = self.s_init_psn.val();
                    self.v_rd.d.next = 0.into();
                    self.v_rew.d.next = 0.into();
                    self.v_rnr.d.next = 0.into();
                    self.v_err.d.next = 0.into();
                    self.f_tag_v.d.next = false;
                    self.st.d.next = 17.into();
                } else if self.s_fail_valid.val() {
                    self.s_fail_ready.next = true;
                    self.q.d.next = self.s_fail_qp.val();
                    self.fl_fidx.d.next = self.s_fail_index.val();
                    self.fl_status.d.next = self.s_fail_status.val();
                    self.ev.d.next = 3.into();
                    self.st.d.next = 1.into();
                } else if self.s_exp_valid.val() {
                    self.s_exp_ready.next = true;
                    self.q.d.next = self.s_exp_qp.val();
                    self.ev.d.next = 1.into();
                    if self.s_exp_rnr.val() {
                        self.ev.d.next = 2.into();
                    }
                    self.st.d.next = 1.into();
                } else if self.s_hdr_valid.val() {
                    self.s_hdr_ready.next = true;
                    self.hdr.d.next = self.s_hdr_data.val();
                    self.thf.word.next = self.s_hdr_data.val();
                    self.q.d.next = self.thf.dqp.val().get_bits::<A>(0);
                    self.ev.d.next = 0.into();
                    self.cnt_resp.d.next = self.cnt_resp.q.val() + self.k_one32.val();
                    self.st.d.next = 1.into();
                }
            }
            1 => {
                // The attribute row; the state rows and the send point are read meanwhile.
                if self.qp_look_ready.val() & !self.qp_asked.q.val() {
                    self.qp_asked.d.next = true;
                }
                if self.qp_asked.q.val() {
                    self.qp_row.d.next = self.qp_got_data.val();
                    self.st.d.next = 2.into();
                }
            }
            2 => {
                self.w_cs.d.next = self.cs_mem.read_data.val();
                self.v_cons.d.next = self.cvf.cons.val();
                self.v_front.d.next = self.cvf.front.val();
                self.v_rd.d.next = self.cvf.rd.val();
                self.v_rew.d.next = self.cvf.rew.val();
                self.v_rnr.d.next = self.cvf.rnr.val();
                self.v_err.d.next = self.cvf.err.val();
                self.sent.d.next = self.sp_got_sent.val();
                self.nstart.d.next = self.sp_got_nstart.val();
                if self.ev.q.val() == 0 {
                    if self.l_ok.val() {
                        self.st.d.next = 3.into();
                    } else {
                        self.cnt_drop.d.next = self.cnt_drop.q.val() + self.k_one32.val();
                        self.skip.d.next = true;
                        self.drain.d.next = self.thf.len.val().any();
                        self.st.d.next = 11.into();
                    }
                } else if self.ev.q.val() == 3 {
                    self.fl_idx.d.next = self.cvf.cons.val();
                    self.st.d.next = 14.into();
                } else if (self.qpf.state.val() == 3) & !self.cvf.err.val().any() {
                    self.st.d.next = 18.into();
                } else {
                    self.st.d.next = 0.into();
                }
            }
            3 => {
                // The oldest request, present once started: read unless the reader holds it.
                self.f_have.d.next = self.v_cons.q.val() != self.nstart.q.val();
                if self.v_cons.q.val() == self.nstart.q.val() {
                    self.st.d.next = 6.into();
                } else if self.l_hit.val() {
                    self.st.d.next = 5.into();
                } else {
                    self.wqe.s_req_valid.next = true;
                    if self.wqe.s_req_ready.val() {
                        self.f_tag_v.d.next = false;
                        self.st.d.next = 4.into();
                    }
                }
            }
            4 => {
                if self.wqe.m_valid.val() {
                    self.wqe.m_ready.next = true;
                    if self.wqe.m_dma_err.val() | self.wqe.m_empty.val() {
                        // The host refused the read (or took the request back): the
                        // response is dropped.
                        self.cnt_dmae.d.next = self.cnt_dmae.q.val() + self.k_one32.val();
                        self.skip.d.next = true;
                        self.drain.d.next = self.thf.len.val().any();
                        self.st.d.next = 11.into();
                    } else {
                        self.f_tag_v.d.next = true;
                        self.f_tag_q.d.next = self.q.q.val();
                        self.f_tag_i.d.next = self.v_cons.q.val();
                        self.st.d.next = 5.into();
                    }
                }
            }
            5 => {
                // Its kind and packet count.
                self.f_kind.d.next = 0.into();
                if self.wf.op.val() == 4 {
                    self.f_kind.d.next = 1.into();
                }
                if (self.wf.op.val() == 5) | (self.wf.op.val() == 6) {
                    self.f_kind.d.next = 2.into();
                }
                self.f_npk.d.next = self.l_lenp.val().get_bits::<24>(8);
                if self.qpf.mtu.val() == 2 {
                    self.f_npk.d.next = self.l_lenp.val().get_bits::<24>(9);
                }
                if self.qpf.mtu.val() == 3 {
                    self.f_npk.d.next = self.l_lenp.val().get_bits::<24>(10);
                }
                if self.qpf.mtu.val() == 4 {
                    self.f_npk.d.next = self.l_lenp.val().get_bits::<24>(11);
                }
                if self.qpf.mtu.val() == 5 {
                    self.f_npk.d.next = self.l_lenp.val().get_bits::<24>(12);
                }
                if (self.wf.op.val() == 5) | (self.wf.op.val() == 6) | !self.wqe.m_total.val().any()
                {
                    self.f_npk.d.next = self.k_one24.val();
                }
                self.st.d.next = 6.into();
            }
            6 => {
                if self.step.s_ready.val() {
                    self.st.d.next = 7.into();
                }
            }
            7 => {
                if self.step.m_valid.val() {
                    self.w_cs.d.next = self.step.m_state.val();
                    self.d_cs.d.next = self.step.m_state.val();
                    self.d_more.d.next = self.step.m_verdict.val() == 0;
                    if self.step.m_verdict.val() == 0 {
                        // A request the response covers: its completion, then the next.
                        self.completed.d.next = true;
                        self.d_complete.d.next = true;
                        self.d_fail.d.next = false;
                        self.d_rewind.d.next = false;
                        self.d_rnr.d.next = false;
                        self.d_timer.d.next = 0.into();
                        self.st.d.next = 12.into();
                    } else {
                        self.d_complete.d.next = self.step.m_complete.val();
                        self.d_fail.d.next = self.step.m_fail.val();
                        self.d_status.d.next = self.step.m_status.val();
                        self.d_rewind.d.next = self.step.m_rewind.val();
                        self.d_rnr.d.next = self.step.m_rnr_wait.val();
                        self.d_timer.d.next = self.step.m_timer.val();
                        self.d_off.d.next = self.step.m_offset.val();
                        self.drain.d.next = self.thf.len.val().any();
                        self.p_wait.d.next = 0.into();
                        self.p_sent.d.next = false;
                        self.p_err.d.next = false;
                        if (self.step.m_verdict.val() == 7) | (self.step.m_verdict.val() == 10) {
                            // The state row waits for the placement (a refusal fails the
                            // READ or atomic instead).
                            self.w_cs.d.next = self.w_cs.q.val();
                            self.p_atomic.d.next = self.step.m_verdict.val() == 10;
                            self.st.d.next = 8.into();
                        } else {
                            self.st.d.next = 11.into();
                        }
                    }
                }
            }
            8 => {
                // The pieces settle from the registered offset and entries.
                self.p_wait.d.next = self.p_wait.q.val() + self.k_one3.val();
                if self.p_wait.q.val() == 5 {
                    if self.pieces.m_over.val() {
                        self.p_err.d.next = true;
                        self.st.d.next = 11.into();
                    } else {
                        self.st.d.next = 9.into();
                    }
                }
            }
            9 => {
                self.scat.s_cmd_valid.next = true;
                if self.scat.s_cmd_ready.val() {
                    self.st.d.next = 10.into();
                }
            }
            10 => {
                // The payload (or the value) through the scatter, until its writes are done.
                if self.scat.m_done_valid.val() {
                    self.scat.m_done_ready.next = true;
                    self.p_err.d.next = self.scat.m_done_err.val();
                    if self.scat.m_done_err.val() {
                        self.cnt_dmae.d.next = self.cnt_dmae.q.val() + self.k_one32.val();
                    } else {
                        self.w_cs.d.next = self.d_cs.q.val();
                    }
                    self.drain.d.next = !self.p_atomic.q.val()
                        & self.thf.len.val().any()
                        & !self.scat.m_done_tail.val();
                    self.st.d.next = 11.into();
                }
            }
            11 => {
                // What is left of the payload is discarded; a dropped response ends here.
                if self.drain.q.val() {
                    self.s_axis_tready.next = true;
                    if self.s_axis_tvalid.val() & self.s_axis_tlast.val() {
                        self.drain.d.next = false;
                    }
                } else if self.skip.q.val() {
                    self.st.d.next = 0.into();
                } else {
                    self.st.d.next = 12.into();
                }
            }
            12 => {
                // The last step's actions, in the model's order.
                if self.p_err.q.val() {
                    // A refused placement fails the READ or atomic; what was before the
                    // response is acknowledged.
                    self.p_err.d.next = false;
                    if self.l_psnd.val().get_bit(23) {
                        self.cs_new.psn.next = self.thf.psn.val();
                        self.w_cs.d.next = self.cs_new.word.val();
                    }
                    self.fl_idx.d.next = self.v_cons.q.val();
                    self.fl_fidx.d.next = self.v_cons.q.val();
                    self.fl_status.d.next = 4.into();
                    self.st.d.next = 14.into();
                } else if self.d_fail.q.val() {
                    self.d_fail.d.next = false;
                    self.fl_idx.d.next = self.v_cons.q.val();
                    self.fl_fidx.d.next = self.v_cons.q.val();
                    self.fl_status.d.next = self.d_status.q.val();
                    self.st.d.next = 14.into();
                } else if self.d_complete.q.val() {
                    self.d_complete.d.next = false;
                    self.c_status.d.next = 0.into();
                    self.c_len.d.next = self.wqe.m_total.val().get_bits::<32>(0);
                    self.c_idx.d.next = self.v_cons.q.val();
                    self.c_beat.d.next = 0.into();
                    self.c_ret.d.next = 12.into();
                    if self.l_signaled.val() {
                        self.st.d.next = 13.into();
                    }
                    self.v_cons.d.next = self.v_cons.q.val() + self.k_one16.val();
                    self.v_front.d.next = self.v_front.q.val() + self.f_npk.q.val();
                    if self.f_kind.q.val().any() {
                        self.v_rd.d.next = self.v_rd.q.val() + self.k_one4.val();
                    }
                    if self.d_more.q.val() {
                        // A Complete step: the next request, and the response's next step.
                        self.c_ret.d.next = 3.into();
                        if !self.l_signaled.val() {
                            self.st.d.next = 3.into();
                        }
                    }
                } else {
                    if self.d_rewind.q.val() {
                        self.v_rew.d.next = self.v_rew.q.val() + self.k_one4.val();
                    }
                    self.t_pend.d.next = true;
                    self.t_rnr.d.next = false;
                    self.t_arm.d.next = self.qpf.timeout.val().any();
                    self.t_code.d.next = self.qpf.timeout.val();
                    if self.d_rnr.q.val() {
                        self.v_rnr.d.next = 1.into();
                        self.t_arm.d.next = true;
                        self.t_rnr.d.next = true;
                        self.t_code.d.next = self.thf.key.val().get_bits::<5>(24);
                    } else if self.d_timer.q.val() == 2 {
                        self.t_arm.d.next = false;
                    } else if self.d_timer.q.val() == 0 {
                        self.t_pend.d.next = false;
                    }
                    self.st.d.next = 16.into();
                }
            }
            13 => {
                self.m_cqe_valid.next = true;
                if self.m_cqe_ready.val() {
                    self.c_beat.d.next = self.c_beat.q.val() + self.k_one2.val();
                    if self.c_beat.q.val() == 3 {
                        self.st.d.next = self.c_ret.q.val();
                    }
                }
            }
            14 => {
                // The flush: the request at `fl_idx` read (the ring's end reached: done).
                self.wqe.s_req_valid.next = true;
                if self.wqe.s_req_ready.val() {
                    self.f_tag_v.d.next = false;
                    self.st.d.next = 15.into();
                }
            }
            15 => {
                if self.wqe.m_valid.val() {
                    self.wqe.m_ready.next = true;
                    if self.wqe.m_empty.val() {
                        self.v_err.d.next = 1.into();
                        self.v_rnr.d.next = 0.into();
                        self.v_cons.d.next = self.fl_idx.q.val();
                        self.t_pend.d.next = true;
                        self.t_arm.d.next = false;
                        self.t_rnr.d.next = false;
                        self.st.d.next = 16.into();
                    } else {
                        // Its completion: the failing one's status, else WR_FLUSH_ERR.
                        self.c_status.d.next = 5.into();
                        if self.fl_idx.q.val() == self.fl_fidx.q.val() {
                            self.c_status.d.next = self.fl_status.q.val();
                        }
                        self.c_len.d.next = 0.into();
                        self.c_idx.d.next = self.fl_idx.q.val();
                        self.c_beat.d.next = 0.into();
                        self.c_ret.d.next = 14.into();
                        self.fl_idx.d.next = self.fl_idx.q.val() + self.k_one16.val();
                        self.st.d.next = 13.into();
                    }
                }
            }
            16 => {
                if !self.t_pend.q.val() | self.m_tmr_ready.val() {
                    self.st.d.next = 17.into();
                }
            }
            17 => {
                // The rows written; the requester's doorbell.
                self.m_kick_valid.next = true;
                self.st.d.next = 0.into();
            }
            18 => {
                // An expiry, as the model's `on_time`.
                self.t_pend.d.next = true;
                self.t_rnr.d.next = false;
                self.t_arm.d.next = self.qpf.timeout.val().any();
                self.t_code.d.next = self.qpf.timeout.val();
                if self.ev.q.val() == 2 {
                    // The end of an RNR wait: go back, and time what is outstanding.
                    self.v_rnr.d.next = 0.into();
                    self.v_rew.d.next = self.v_rew.q.val() + self.k_one4.val();
                    if !self.l_out.val().get_bit(23) {
                        self.t_arm.d.next = false;
                    }
                    self.st.d.next = 16.into();
                } else if !self.l_out.val().get_bit(23) {
                    // An ACK timeout with nothing outstanding: the timer is already off.
                    self.t_pend.d.next = false;
                    self.st.d.next = 17.into();
                } else if !self.csf.retry.val().any() {
                    self.fl_idx.d.next = self.v_cons.q.val();
                    self.fl_fidx.d.next = self.v_cons.q.val();
                    self.fl_status.d.next = 12.into();
                    self.st.d.next = 14.into();
                } else {
                    if self.csf.retry.val() != 7 {
                        self.cs_new.retry.next = self.csf.retry.val() - self.k_one3.val();
                    }
                    self.cs_new.started.next = 1.into();
                    self.w_cs.d.next = self.cs_new.word.val();
                    self.v_rew.d.next = self.v_rew.q.val() + self.k_one4.val();
                    self.st.d.next = 16.into();
                }
            }
            _ => {
                self.st.d.next = 0.into();
            }
        }
        if self.reset.val() {
            self.st.d.next = 0.into();
            self.f_tag_v.d.next = false;
        }
    }
}
