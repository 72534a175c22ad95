//! The sending side of RC: the scheduler ([`crate::req_sched`]), the requester
//! ([`crate::requester`]), the completer ([`crate::completer`]) and the ACK and RNR timers
//! ([`crate::qp_timers`], started through [`crate::timer_arm`]) joined into one engine that
//! sends a QP's requests, takes its responses and retransmits on its own (go-back-N from a
//! NAK's PSN, a timeout or an RNR wait's end), as the transport model's requester and
//! completer do together.
//!
//! Inside:
//! - **turns**: the scheduler offers QPs to the requester; a doorbell (`db_*`, the host's,
//!   after a send ring's producer moved) and the completer's kick (after a response or expiry
//!   moved a QP's view) both schedule a QP. The host's doorbell goes first; a kick that meets
//!   one waits a clock in a register (the completer kicks at most once per event, dozens of
//!   clocks apart);
//! - the requester reads the completer's **view** of a QP (`cv_*`) at each turn's start, the
//!   completer the requester's **send point** (`sp_*`) with each response, and a request the
//!   requester refuses goes to the completer to fail (`fail`);
//! - **timers**: every packet the requester sends restarts its QP's ACK timer (unless an RNR
//!   wait runs); the completer restarts it and turns it into RNR waits, and its stops are
//!   dropped (a timer left running expires into an ACK timeout the completer ignores when
//!   nothing is outstanding: see [`crate::timer_arm`]); expiries go to the completer.
//!
//! Outside, one port of each kind: the QP attribute, send ring and memory region lookups are
//! shared (the completer's first: its responses are the ones that must not wait; the row
//! tables answer the clock after a look is taken; a send ring look waits for its answer,
//! `sq_got_valid`, and its answer goes to the engine that asked); the DMA port is a
//! [`crate::dma_arbiter`] of the two (tag bit 0: the completer's reads of the send ring and
//! its writes of READ data and atomic values; 1: the requester's reads of requests and
//! payloads). Send descriptors and payloads leave as the requester makes them, responses come
//! in as the receive path's demultiplexer hands them, completions leave as the completer
//! writes them (`cqe`, four beats).
//!
//! `A` is log2 of the QPs, `F` of the requester's payload FIFO words.

use rust_hdl::prelude::*;

use crate::completer::Completer;
use crate::dma_arbiter::DmaArbiter;
use crate::qp_timers::QpTimers;
use crate::req_sched::ReqSched;
use crate::requester::Requester;
use crate::row_table::{MR_BITS, QP_BITS};
use crate::timer_arm::TimerArm;
use crate::transport_header::TH_BITS;

#[derive(LogicBlock)]
pub struct RequesterPath<const A: usize, const F: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// A send ring's producer moved (the host's doorbell, after the index landed).
    pub db_valid: Signal<In, Bit>,
    pub db_queue: Signal<In, Bits<A>>,
    /// A QP entering RTS: its SQ_PSN, its ring's consumer, RETRY_CNT and RNR_RETRY.
    pub s_init_valid: Signal<In, Bit>,
    pub s_init_ready: Signal<Out, Bit>,
    pub s_init_qp: Signal<In, Bits<A>>,
    pub s_init_psn: Signal<In, Bits<24>>,
    pub s_init_index: Signal<In, Bits<16>>,
    pub s_init_retry: Signal<In, Bits<3>>,
    pub s_init_rnr: Signal<In, Bits<3>>,
    /// AckReq every this many packets, the window of unacknowledged PSNs, clocks per tick.
    pub ack_every: Signal<In, Bits<8>>,
    pub max_unacked: Signal<In, Bits<24>>,
    pub tick_cycles: Signal<In, Bits<16>>,
    /// QP attribute rows.
    pub qp_look_valid: Signal<Out, Bit>,
    pub qp_look_ready: Signal<In, Bit>,
    pub qp_look_row: Signal<Out, Bits<A>>,
    pub qp_got_data: Signal<In, Bits<QP_BITS>>,
    /// Send rings: base, size, producer.
    pub sq_look_valid: Signal<Out, Bit>,
    pub sq_look_ready: Signal<In, Bit>,
    pub sq_look_queue: Signal<Out, Bits<A>>,
    pub sq_got_valid: Signal<In, Bit>,
    pub sq_got_base: Signal<In, Bits<64>>,
    pub sq_got_size: Signal<In, Bits<32>>,
    pub sq_got_prod: Signal<In, Bits<16>>,
    /// Memory region rows.
    pub mr_look_valid: Signal<Out, Bit>,
    pub mr_look_ready: Signal<In, Bit>,
    pub mr_look_row: Signal<Out, Bits<A>>,
    pub mr_got_data: Signal<In, Bits<MR_BITS>>,
    /// The DMA port (tag bit: 0 the completer, 1 the requester).
    pub m_dma_rd_req_valid: Signal<Out, Bit>,
    pub m_dma_rd_req_ready: Signal<In, Bit>,
    pub m_dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_rd_req_len: Signal<Out, Bits<16>>,
    pub m_dma_rd_req_tag: Signal<Out, Bits<2>>,
    pub m_dma_rd_data_valid: Signal<In, Bit>,
    pub m_dma_rd_data_ready: Signal<Out, Bit>,
    pub m_dma_rd_data: Signal<In, Bits<64>>,
    pub m_dma_rd_data_last: Signal<In, Bit>,
    pub m_dma_rd_data_err: Signal<In, Bit>,
    pub m_dma_rd_data_tag: Signal<In, Bits<2>>,
    pub m_dma_wr_req_valid: Signal<Out, Bit>,
    pub m_dma_wr_req_ready: Signal<In, Bit>,
    pub m_dma_wr_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_wr_req_len: Signal<Out, Bits<16>>,
    pub m_dma_wr_req_tag: Signal<Out, Bits<2>>,
    pub m_dma_wr_data_valid: Signal<Out, Bit>,
    pub m_dma_wr_data_ready: Signal<In, Bit>,
    pub m_dma_wr_data: Signal<Out, Bits<64>>,
    pub m_dma_wr_data_keep: Signal<Out, Bits<8>>,
    pub m_dma_wr_data_last: Signal<Out, Bit>,
    pub m_dma_wr_done_valid: Signal<In, Bit>,
    pub m_dma_wr_done_tag: Signal<In, Bits<2>>,
    pub m_dma_wr_done_err: Signal<In, Bit>,
    /// Request packets: send descriptors with the QP's row, payloads behind them.
    pub m_desc_valid: Signal<Out, Bit>,
    pub m_desc_ready: Signal<In, Bit>,
    pub m_desc_data: Signal<Out, Bits<TH_BITS>>,
    pub m_desc_qp: Signal<Out, Bits<A>>,
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    /// Responses and ACKs (transport headers), payloads behind them.
    pub s_hdr_valid: Signal<In, Bit>,
    pub s_hdr_ready: Signal<Out, Bit>,
    pub s_hdr_data: Signal<In, Bits<TH_BITS>>,
    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    /// Completions: the four beats of a `cqe`, the CQ on each.
    pub m_cqe_valid: Signal<Out, Bit>,
    pub m_cqe_ready: Signal<In, Bit>,
    pub m_cqe_cq: Signal<Out, Bits<16>>,
    pub m_cqe_data: Signal<Out, Bits<64>>,
    pub m_cqe_last: Signal<Out, Bit>,
    /// Counters: packets sent first and again, responses taken and dropped, ACK timeouts and
    /// RNR waits' ends handed to the completer, ACK timers armed by packets, DMA errors.
    pub cnt_packets: Signal<Out, Bits<32>>,
    pub cnt_retransmitted: Signal<Out, Bits<32>>,
    pub cnt_responses: Signal<Out, Bits<32>>,
    pub cnt_dropped: Signal<Out, Bits<32>>,
    pub cnt_expiries: Signal<Out, Bits<32>>,
    pub cnt_arms: Signal<Out, Bits<32>>,
    pub cnt_req_dma_err: Signal<Out, Bits<32>>,
    pub cnt_comp_dma_err: Signal<Out, Bits<32>>,
    /// Clearing tables after a reset.
    pub busy: Signal<Out, Bit>,

    sched: ReqSched<A>,
    req: Requester<A, F>,
    comp: Completer<A>,
    timers: QpTimers<A>,
    arm: TimerArm<A>,
    dma: DmaArbiter<1, 2>,
    /// A kick waiting for a clock without a doorbell.
    kick_v: DFF<Bit>,
    kick_q: DFF<Bits<A>>,
    /// Which engine took the init (both must).
    init_r: DFF<Bit>,
    init_c: DFF<Bit>,
    /// A refused request on its way to the completer.
    fail_v: DFF<Bit>,
    fail_qp: DFF<Bits<A>>,
    fail_index: DFF<Bits<16>>,
    fail_status: DFF<Bits<5>>,
    /// A send ring look waiting for its answer, and whose (the completer's: high).
    sq_wait: DFF<Bit>,
    sq_comp: DFF<Bit>,
    expiries: DFF<Bits<32>>,
    k_one32: Constant<Bits<32>>,
}

impl<const A: usize, const F: usize> Default for RequesterPath<A, F> {
    fn default() -> Self {
        RequesterPath {
            clock: Default::default(),
            reset: Default::default(),
            db_valid: Default::default(),
            db_queue: Default::default(),
            s_init_valid: Default::default(),
            s_init_ready: Default::default(),
            s_init_qp: Default::default(),
            s_init_psn: Default::default(),
            s_init_index: Default::default(),
            s_init_retry: Default::default(),
            s_init_rnr: Default::default(),
            ack_every: Default::default(),
            max_unacked: Default::default(),
            tick_cycles: Default::default(),
            qp_look_valid: Default::default(),
            qp_look_ready: Default::default(),
            qp_look_row: Default::default(),
            qp_got_data: Default::default(),
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
            m_dma_rd_req_tag: Default::default(),
            m_dma_rd_data_valid: Default::default(),
            m_dma_rd_data_ready: Default::default(),
            m_dma_rd_data: Default::default(),
            m_dma_rd_data_last: Default::default(),
            m_dma_rd_data_err: Default::default(),
            m_dma_rd_data_tag: Default::default(),
            m_dma_wr_req_valid: Default::default(),
            m_dma_wr_req_ready: Default::default(),
            m_dma_wr_req_addr: Default::default(),
            m_dma_wr_req_len: Default::default(),
            m_dma_wr_req_tag: Default::default(),
            m_dma_wr_data_valid: Default::default(),
            m_dma_wr_data_ready: Default::default(),
            m_dma_wr_data: Default::default(),
            m_dma_wr_data_keep: Default::default(),
            m_dma_wr_data_last: Default::default(),
            m_dma_wr_done_valid: Default::default(),
            m_dma_wr_done_tag: Default::default(),
            m_dma_wr_done_err: Default::default(),
            m_desc_valid: Default::default(),
            m_desc_ready: Default::default(),
            m_desc_data: Default::default(),
            m_desc_qp: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tuser: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            s_hdr_valid: Default::default(),
            s_hdr_ready: Default::default(),
            s_hdr_data: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            m_cqe_valid: Default::default(),
            m_cqe_ready: Default::default(),
            m_cqe_cq: Default::default(),
            m_cqe_data: Default::default(),
            m_cqe_last: Default::default(),
            cnt_packets: Default::default(),
            cnt_retransmitted: Default::default(),
            cnt_responses: Default::default(),
            cnt_dropped: Default::default(),
            cnt_expiries: Default::default(),
            cnt_arms: Default::default(),
            cnt_req_dma_err: Default::default(),
            cnt_comp_dma_err: Default::default(),
            busy: Default::default(),
            sched: Default::default(),
            req: Default::default(),
            comp: Default::default(),
            timers: Default::default(),
            arm: Default::default(),
            dma: DmaArbiter::new(),
            kick_v: Default::default(),
            kick_q: Default::default(),
            init_r: Default::default(),
            init_c: Default::default(),
            fail_v: Default::default(),
            fail_qp: Default::default(),
            fail_index: Default::default(),
            fail_status: Default::default(),
            sq_wait: Default::default(),
            sq_comp: Default::default(),
            expiries: Default::default(),
            k_one32: Constant::new(bits::<32>(1)),
        }
    }
}

impl<const A: usize, const F: usize> RequesterPath<A, F> {
    /// QPs (and rows of each table).
    pub const ROWS: usize = 1 << A;
}

impl<const A: usize, const F: usize> Logic for RequesterPath<A, F> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            kick_v,
            kick_q,
            init_r,
            init_c,
            fail_v,
            fail_qp,
            fail_index,
            fail_status,
            sq_wait,
            sq_comp,
            expiries
        );
        self.sched.clock.next = self.clock.val();
        self.sched.reset.next = self.reset.val();
        self.req.clock.next = self.clock.val();
        self.req.reset.next = self.reset.val();
        self.comp.clock.next = self.clock.val();
        self.comp.reset.next = self.reset.val();
        self.timers.clock.next = self.clock.val();
        self.timers.reset.next = self.reset.val();
        self.arm.clock.next = self.clock.val();
        self.arm.reset.next = self.reset.val();
        self.dma.clock.next = self.clock.val();
        self.dma.reset.next = self.reset.val();
        self.busy.next = self.sched.busy.val() | self.timers.busy.val() | self.arm.busy.val();

        // ---- Settings.
        self.req.ack_every.next = self.ack_every.val();
        self.req.max_unacked.next = self.max_unacked.val();
        self.timers.tick_cycles.next = self.tick_cycles.val();

        // ---- Doorbells and kicks into the scheduler.
        self.sched.db_valid.next = self.db_valid.val() | self.kick_v.q.val();
        self.sched.db_queue.next = self.kick_q.q.val();
        if self.db_valid.val() {
            self.sched.db_queue.next = self.db_queue.val();
        }
        if !self.db_valid.val() {
            self.kick_v.d.next = false;
        }
        if self.comp.m_kick_valid.val() {
            if self.db_valid.val() | self.kick_v.q.val() {
                self.kick_v.d.next = true;
                self.kick_q.d.next = self.comp.m_kick_qp.val();
            }
            if !self.db_valid.val() & !self.kick_v.q.val() {
                self.sched.db_valid.next = true;
                self.sched.db_queue.next = self.comp.m_kick_qp.val();
            }
        }

        // ---- Turns.
        self.req.s_turn_valid.next = self.sched.m_valid.val();
        self.req.s_turn_qp.next = self.sched.m_qpn.val();
        self.sched.m_ready.next = self.req.s_turn_ready.val();
        self.sched.s_done_valid.next = self.req.m_done_valid.val();
        self.sched.s_done_more.next = self.req.m_done_more.val();
        self.req.m_done_ready.next = self.sched.s_done_ready.val();

        // ---- A QP entering RTS: both engines take it.
        self.req.s_init_valid.next = self.s_init_valid.val() & !self.init_r.q.val();
        self.comp.s_init_valid.next = self.s_init_valid.val() & !self.init_c.q.val();
        self.req.s_init_qp.next = self.s_init_qp.val();
        self.req.s_init_psn.next = self.s_init_psn.val();
        self.req.s_init_index.next = self.s_init_index.val();
        self.comp.s_init_qp.next = self.s_init_qp.val();
        self.comp.s_init_psn.next = self.s_init_psn.val();
        self.comp.s_init_index.next = self.s_init_index.val();
        self.comp.s_init_retry.next = self.s_init_retry.val();
        self.comp.s_init_rnr.next = self.s_init_rnr.val();
        self.s_init_ready.next = (self.req.s_init_ready.val() | self.init_r.q.val())
            & (self.comp.s_init_ready.val() | self.init_c.q.val());
        self.init_r.d.next =
            self.init_r.q.val() | (self.req.s_init_valid.val() & self.req.s_init_ready.val());
        self.init_c.d.next =
            self.init_c.q.val() | (self.comp.s_init_valid.val() & self.comp.s_init_ready.val());
        if self.s_init_valid.val() & self.s_init_ready.val() {
            self.init_r.d.next = false;
            self.init_c.d.next = false;
        }

        // ---- Between the engines: view, send point, refused requests.
        self.comp.cv_look_qp.next = self.req.cv_look_qp.val();
        self.req.cv_look_ready.next = true;
        self.req.cv_got_oldest.next = self.comp.cv_got_oldest.val();
        self.req.cv_got_cons.next = self.comp.cv_got_cons.val();
        self.req.cv_got_front.next = self.comp.cv_got_front.val();
        self.req.cv_got_rd_done.next = self.comp.cv_got_rd_done.val();
        self.req.cv_got_rewinds.next = self.comp.cv_got_rewinds.val();
        self.req.cv_got_rnr.next = self.comp.cv_got_rnr.val();
        self.req.cv_got_err.next = self.comp.cv_got_err.val();
        self.req.sp_look_qp.next = self.comp.sp_look_qp.val();
        self.comp.sp_got_sent.next = self.req.sp_got_sent.val();
        self.comp.sp_got_nstart.next = self.req.sp_got_nstart.val();
        // A refused request waits in a register: the requester's state does not reach the
        // completer's choice of event in the same clock.
        self.req.m_fail_ready.next = !self.fail_v.q.val();
        if self.req.m_fail_valid.val() & !self.fail_v.q.val() {
            self.fail_v.d.next = true;
            self.fail_qp.d.next = self.req.m_fail_qp.val();
            self.fail_index.d.next = self.req.m_fail_index.val();
            self.fail_status.d.next = self.req.m_fail_status.val();
        }
        self.comp.s_fail_valid.next = self.fail_v.q.val();
        self.comp.s_fail_qp.next = self.fail_qp.q.val();
        self.comp.s_fail_index.next = self.fail_index.q.val();
        self.comp.s_fail_status.next = self.fail_status.q.val();
        if self.fail_v.q.val() & self.comp.s_fail_ready.val() {
            self.fail_v.d.next = false;
        }

        // ---- Timers: the completer's commands and the packets sent, expiries back.
        self.arm.s_cmd_valid.next = self.comp.m_tmr_valid.val();
        self.comp.m_tmr_ready.next = self.arm.s_cmd_ready.val();
        self.arm.s_cmd_qpn.next = self.comp.m_tmr_qp.val();
        self.arm.s_cmd_arm.next = self.comp.m_tmr_arm.val();
        self.arm.s_cmd_rnr.next = self.comp.m_tmr_rnr.val();
        self.arm.s_cmd_code.next = self.comp.m_tmr_code.val();
        self.timers.s_cmd_valid.next = self.arm.m_cmd_valid.val();
        self.arm.m_cmd_ready.next = self.timers.s_cmd_ready.val();
        self.timers.s_cmd_qpn.next = self.arm.m_cmd_qpn.val();
        self.timers.s_cmd_arm.next = self.arm.m_cmd_arm.val();
        self.timers.s_cmd_rnr.next = self.arm.m_cmd_rnr.val();
        self.timers.s_cmd_code.next = self.arm.m_cmd_code.val();
        self.arm.s_exp_valid.next = self.timers.m_exp_valid.val();
        self.timers.m_exp_ready.next = self.arm.s_exp_ready.val();
        self.arm.s_exp_qpn.next = self.timers.m_exp_qpn.val();
        self.arm.s_exp_rnr.next = self.timers.m_exp_rnr.val();
        self.comp.s_exp_valid.next = self.arm.m_exp_valid.val();
        self.arm.m_exp_ready.next = self.comp.s_exp_ready.val();
        self.comp.s_exp_qp.next = self.arm.m_exp_qpn.val();
        self.comp.s_exp_rnr.next = self.arm.m_exp_rnr.val();
        if self.arm.m_exp_valid.val() & self.comp.s_exp_ready.val() {
            self.expiries.d.next = self.expiries.q.val() + self.k_one32.val();
        }

        // ---- Request packets out; each taken is a packet sent for the timers.
        self.m_desc_valid.next = self.req.m_desc_valid.val() & self.arm.s_sent_ready.val();
        self.req.m_desc_ready.next = self.m_desc_ready.val() & self.arm.s_sent_ready.val();
        self.arm.s_sent_valid.next = self.req.m_desc_valid.val() & self.m_desc_ready.val();
        self.arm.s_sent_qpn.next = self.req.m_desc_qp.val();
        self.arm.s_sent_code.next = self.req.m_desc_timeout.val();
        self.m_desc_data.next = self.req.m_desc_data.val();
        self.m_desc_qp.next = self.req.m_desc_qp.val();
        self.m_axis_tdata.next = self.req.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.req.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.req.m_axis_tlast.val();
        self.m_axis_tuser.next = self.req.m_axis_tuser.val();
        self.m_axis_tvalid.next = self.req.m_axis_tvalid.val();
        self.req.m_axis_tready.next = self.m_axis_tready.val();

        // ---- Responses in, completions out.
        self.comp.s_hdr_valid.next = self.s_hdr_valid.val();
        self.s_hdr_ready.next = self.comp.s_hdr_ready.val();
        self.comp.s_hdr_data.next = self.s_hdr_data.val();
        self.comp.s_axis_tdata.next = self.s_axis_tdata.val();
        self.comp.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.comp.s_axis_tlast.next = self.s_axis_tlast.val();
        self.comp.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.s_axis_tready.next = self.comp.s_axis_tready.val();
        self.m_cqe_valid.next = self.comp.m_cqe_valid.val();
        self.comp.m_cqe_ready.next = self.m_cqe_ready.val();
        self.m_cqe_cq.next = self.comp.m_cqe_cq.val();
        self.m_cqe_data.next = self.comp.m_cqe_data.val();
        self.m_cqe_last.next = self.comp.m_cqe_last.val();

        // ---- Lookups, the completer's first. The row tables answer the clock after a look
        // is taken, to both engines (only the one that asked reads it).
        self.qp_look_valid.next = self.comp.qp_look_valid.val() | self.req.qp_look_valid.val();
        self.qp_look_row.next = self.req.qp_look_row.val();
        if self.comp.qp_look_valid.val() {
            self.qp_look_row.next = self.comp.qp_look_row.val();
        }
        self.comp.qp_look_ready.next = self.qp_look_ready.val();
        self.req.qp_look_ready.next = self.qp_look_ready.val() & !self.comp.qp_look_valid.val();
        self.comp.qp_got_data.next = self.qp_got_data.val();
        self.req.qp_got_data.next = self.qp_got_data.val();
        self.mr_look_valid.next = self.comp.mr_look_valid.val() | self.req.mr_look_valid.val();
        self.mr_look_row.next = self.req.mr_look_row.val();
        if self.comp.mr_look_valid.val() {
            self.mr_look_row.next = self.comp.mr_look_row.val();
        }
        self.comp.mr_look_ready.next = self.mr_look_ready.val();
        self.req.mr_look_ready.next = self.mr_look_ready.val() & !self.comp.mr_look_valid.val();
        self.comp.mr_got_data.next = self.mr_got_data.val();
        self.req.mr_got_data.next = self.mr_got_data.val();
        // A send ring look at a time; its answer to the engine that asked.
        self.sq_look_valid.next =
            (self.comp.sq_look_valid.val() | self.req.sq_look_valid.val()) & !self.sq_wait.q.val();
        self.sq_look_queue.next = self.req.sq_look_queue.val();
        if self.comp.sq_look_valid.val() {
            self.sq_look_queue.next = self.comp.sq_look_queue.val();
        }
        self.comp.sq_look_ready.next = self.sq_look_ready.val() & !self.sq_wait.q.val();
        self.req.sq_look_ready.next =
            self.sq_look_ready.val() & !self.sq_wait.q.val() & !self.comp.sq_look_valid.val();
        if self.sq_look_valid.val() & self.sq_look_ready.val() {
            self.sq_wait.d.next = true;
            self.sq_comp.d.next = self.comp.sq_look_valid.val();
        }
        if self.sq_got_valid.val() {
            self.sq_wait.d.next = false;
        }
        self.comp.sq_got_valid.next = self.sq_got_valid.val() & self.sq_comp.q.val();
        self.req.sq_got_valid.next = self.sq_got_valid.val() & !self.sq_comp.q.val();
        self.comp.sq_got_base.next = self.sq_got_base.val();
        self.comp.sq_got_size.next = self.sq_got_size.val();
        self.comp.sq_got_prod.next = self.sq_got_prod.val();
        self.req.sq_got_base.next = self.sq_got_base.val();
        self.req.sq_got_size.next = self.sq_got_size.val();
        self.req.sq_got_prod.next = self.sq_got_prod.val();

        // ---- DMA: client 0 the completer, 1 the requester (reads only).
        self.dma.s0_rd_req_valid.next = self.comp.m_dma_rd_req_valid.val();
        self.comp.m_dma_rd_req_ready.next = self.dma.s0_rd_req_ready.val();
        self.dma.s0_rd_req_addr.next = self.comp.m_dma_rd_req_addr.val();
        self.dma.s0_rd_req_len.next = self.comp.m_dma_rd_req_len.val();
        self.dma.s0_rd_req_tag.next = 0.into();
        self.comp.m_dma_rd_data_valid.next = self.dma.s0_rd_data_valid.val();
        self.dma.s0_rd_data_ready.next = self.comp.m_dma_rd_data_ready.val();
        self.dma.s0_wr_req_valid.next = self.comp.m_dma_wr_req_valid.val();
        self.comp.m_dma_wr_req_ready.next = self.dma.s0_wr_req_ready.val();
        self.dma.s0_wr_req_addr.next = self.comp.m_dma_wr_req_addr.val();
        self.dma.s0_wr_req_len.next = self.comp.m_dma_wr_req_len.val();
        self.dma.s0_wr_req_tag.next = 0.into();
        self.dma.s0_wr_data_valid.next = self.comp.m_dma_wr_data_valid.val();
        self.comp.m_dma_wr_data_ready.next = self.dma.s0_wr_data_ready.val();
        self.dma.s0_wr_data.next = self.comp.m_dma_wr_data.val();
        self.dma.s0_wr_data_keep.next = self.comp.m_dma_wr_data_keep.val();
        self.dma.s0_wr_data_last.next = self.comp.m_dma_wr_data_last.val();
        self.comp.m_dma_wr_done_valid.next = self.dma.s0_wr_done_valid.val();
        self.comp.m_dma_wr_done_err.next = self.dma.wr_done_err.val();
        self.comp.m_dma_rd_data.next = self.dma.rd_data.val();
        self.comp.m_dma_rd_data_last.next = self.dma.rd_data_last.val();
        self.comp.m_dma_rd_data_err.next = self.dma.rd_data_err.val();
        self.dma.s1_rd_req_valid.next = self.req.m_dma_rd_req_valid.val();
        self.req.m_dma_rd_req_ready.next = self.dma.s1_rd_req_ready.val();
        self.dma.s1_rd_req_addr.next = self.req.m_dma_rd_req_addr.val();
        self.dma.s1_rd_req_len.next = self.req.m_dma_rd_req_len.val();
        self.dma.s1_rd_req_tag.next = 0.into();
        self.req.m_dma_rd_data_valid.next = self.dma.s1_rd_data_valid.val();
        self.dma.s1_rd_data_ready.next = self.req.m_dma_rd_data_ready.val();
        self.req.m_dma_rd_data.next = self.dma.rd_data.val();
        self.req.m_dma_rd_data_last.next = self.dma.rd_data_last.val();
        self.req.m_dma_rd_data_err.next = self.dma.rd_data_err.val();
        self.dma.s1_wr_req_valid.next = false;
        self.dma.s1_wr_req_addr.next = 0.into();
        self.dma.s1_wr_req_len.next = 0.into();
        self.dma.s1_wr_req_tag.next = 0.into();
        self.dma.s1_wr_data_valid.next = false;
        self.dma.s1_wr_data.next = 0.into();
        self.dma.s1_wr_data_keep.next = 0.into();
        self.dma.s1_wr_data_last.next = false;
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

        // ---- Counters.
        self.cnt_packets.next = self.req.cnt_packets.val();
        self.cnt_retransmitted.next = self.req.cnt_retransmitted.val();
        self.cnt_responses.next = self.comp.cnt_responses.val();
        self.cnt_dropped.next = self.comp.cnt_dropped.val();
        self.cnt_expiries.next = self.expiries.q.val();
        self.cnt_arms.next = self.arm.cnt_arms.val();
        self.cnt_req_dma_err.next = self.req.cnt_dma_err.val();
        self.cnt_comp_dma_err.next = self.comp.cnt_dma_err.val();

        if self.reset.val() {
            self.kick_v.d.next = false;
            self.fail_v.d.next = false;
            self.init_r.d.next = false;
            self.init_c.d.next = false;
            self.sq_wait.d.next = false;
            self.expiries.d.next = 0.into();
        }
    }
}
