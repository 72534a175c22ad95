//! The RC requester: packets of a QP's requests in turns of the scheduler ([`crate::req_sched`]),
//! as the transport model's requester (`requester::run`) sends them. For the QP `q` of a turn:
//!
//! 1. its attribute row (`qp_look_*`), the completer's view of it (`cv_look_*`: the oldest
//!    unacknowledged PSN, the send ring's consumer, the first PSN of the request there, READs
//!    and atomics completed and rewinds asked for, each mod 16, an RNR wait) and its requester
//!    state row (`req_state` in the register map, this engine's block RAM) are read;
//! 2. the completer's moves are followed: a rewind it asked for (go-back-N after a NAK, a
//!    timeout or an RNR wait) or a consumer that passed the request being sent puts the
//!    requester at the consumer's request, at the packet of the oldest unacknowledged PSN
//!    (clamped to the request's last packet; an atomic from its start), and a rewind sends the
//!    next packet with AckReq counting from zero, as the model's `rewind` and `complete_front`;
//! 3. the QP must be an RC QP in RTS, not in an RNR wait and not failed (the view's error:
//!    the completer flushed its ring); the request at the requester's index is read and its
//!    entries checked ([`crate::send_wqe`]); an empty ring ends the turn;
//! 4. the window: a packet whose PSN is `max_unacked` or more past the oldest unacknowledged
//!    waits; a request not yet started waits behind an outstanding READ or atomic when it is
//!    fenced, and a READ or atomic waits while `max(1, MAX_RD_ATOMIC)` are outstanding. A
//!    request starting takes its PSNs (`NEXT_PSN` moves by its packet count); one whose
//!    entries fail the local check (or whose length is above 2^31) is handed to the
//!    completer to fail (`m_fail_*`, LOC_PROT_ERR or LOC_LEN_ERR; the model's `fail_at`), as
//!    is one segmentation refuses (LOC_QP_OP_ERR), and nothing is sent;
//! 5. the packet ([`crate::req_segment`]): its payload read from host memory
//!    ([`crate::payload_gather`]) into a frame FIFO once the FIFO has room for it, then its
//!    send descriptor out with the QP's row (`m_desc_*`) and the payload whole behind it on
//!    `m_axis_*` (`tuser` marks a payload whose read the host refused);
//! 6. the row written back: the next packet, or the next request after the last, AckReq's
//!    count, the highest PSN sent (a packet below it counts as a retransmission).
//!
//! A turn sends up to eight packets: after a packet the engine goes on with the request's
//! next (from its PSN: the window checked again) or reads the next request, with the
//! completer's view read at the turn's start (the oldest PSN only moves forward, so an old
//! view errs on the side of waiting). The turn ends (`m_done_*`) with `more` after its eighth
//! packet, without when the QP waits for the
//! completer (the window, a fence, the READ/atomic limit, an RNR wait), for its ring, or is
//! not an RC QP in RTS: the completer rings the QP's doorbell when it moves. `s_init_*`
//! starts a QP's row when it enters RTS: its SQ_PSN and the send ring's consumer.
//!
//! The send request reader holds its answer until its next request, and segmentation its
//! packet until taken, so both are read in place until the row is written. The DMA read port
//! is the request reader's while it reads, the payload gather's otherwise (one packet at a
//! time: the gather's reads are done once its payload's last beat is out). `A` is log2 of the
//! QP and region rows, `F` of the FIFO's words (10: one MTU-4096 payload read while the one
//! before it drains).
//!
//! Each descriptor carries the QP's TIMEOUT out (`m_desc_timeout`): a packet sent arms the ACK
//! timer when it is idle ([`crate::timer_arm`], in [`crate::requester_path`]).
//!
//! Not here yet: UD sends (a UD QP's turn ends without sending).

use rust_hdl::prelude::*;

use crate::commit_fifo::{CommitFifo, reserve_words};
use crate::payload_gather::PayloadGather;
use crate::req_segment::{ReqSegment, SWQE_BITS, swqe_offset_of};
use crate::row_table::{MR_BITS, QP_BITS, RQ_BITS, qp_offset_of, rq_offset_of};
use crate::send_wqe::SendWqe;
use crate::transport_header::TH_BITS;
use crate::{field_join, field_split};

field_split!(
    /// The QP attributes the engine reads.
    ReqQpFields, QP_BITS, qp_offset_of, {
        state: 3 => "STATE",
        qtype: 1 => "TYPE",
        pd: 16 => "PD",
        mra: 5 => "MAX_RD_ATOMIC",
        mtu: 3 => "PATH_MTU",
        timeout: 5 => "TIMEOUT",
    }
);

field_split!(
    /// A requester state row, as read.
    RqFields, RQ_BITS, rq_offset_of, {
        next_psn: 24 => "NEXT_PSN",
        nstart: 16 => "NSTART",
        cur: 16 => "CUR",
        first: 24 => "CUR_FIRST",
        pkt: 24 => "PKT",
        noack: 8 => "NOACK",
        passed: 4 => "PASSED",
        seen: 4 => "SEEN_REWINDS",
        sent: 24 => "SENT_UPTO",
    }
);

field_join!(
    /// A requester state row, as written.
    RqJoin, RQ_BITS, rq_offset_of, {
        next_psn: 24 => "NEXT_PSN",
        nstart: 16 => "NSTART",
        cur: 16 => "CUR",
        first: 24 => "CUR_FIRST",
        pkt: 24 => "PKT",
        noack: 8 => "NOACK",
        passed: 4 => "PASSED",
        seen: 4 => "SEEN_REWINDS",
        sent: 24 => "SENT_UPTO",
    }
);

field_split!(
    /// The request fields the engine reads itself.
    ReqWqeFields, SWQE_BITS, swqe_offset_of, {
        op: 8 => "OPCODE",
        flags: 8 => "FLAGS",
    }
);

// Engine states (literals in the code, rule 5): 0 IDLE, 1 LOOK, 2 ROW, 3 GATE, 4 WQE (the
// reader's request), 5 WQE_WAIT, 6 COUNT (the packet count), 7 CLAMP, 8 PSN, 9 DECIDE,
// 10 SEG, 11 SEG_WAIT, 12 ROOM (the gather's command), 13 GATHER, 14 FAIL, 15 DESC, 16 WB,
// 17 DONE.

#[derive(LogicBlock)]
pub struct Requester<const A: usize, const F: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// A turn for a QP, and its end (`more`: it has work left).
    pub s_turn_valid: Signal<In, Bit>,
    pub s_turn_ready: Signal<Out, Bit>,
    pub s_turn_qp: Signal<In, Bits<A>>,
    pub m_done_valid: Signal<Out, Bit>,
    pub m_done_ready: Signal<In, Bit>,
    pub m_done_more: Signal<Out, Bit>,
    /// A QP entering RTS: its row starts at PSN `s_init_psn` and send ring index
    /// `s_init_index`; taken between turns.
    pub s_init_valid: Signal<In, Bit>,
    pub s_init_ready: Signal<Out, Bit>,
    pub s_init_qp: Signal<In, Bits<A>>,
    pub s_init_psn: Signal<In, Bits<24>>,
    pub s_init_index: Signal<In, Bits<16>>,
    /// AckReq at least every this many packets; the window of unacknowledged PSNs.
    pub ack_every: Signal<In, Bits<8>>,
    pub max_unacked: Signal<In, Bits<24>>,
    /// QP attribute lookups ([`crate::row_table`]: answered the clock after).
    pub qp_look_valid: Signal<Out, Bit>,
    pub qp_look_ready: Signal<In, Bit>,
    pub qp_look_row: Signal<Out, Bits<A>>,
    pub qp_got_data: Signal<In, Bits<QP_BITS>>,
    /// The completer's view of a QP, answered the clock after: the oldest unacknowledged
    /// PSN, the send ring's consumer and the first PSN of its request (once started), READs
    /// and atomics completed and rewinds asked for (mod 16), an RNR wait under way, a failure.
    pub cv_look_valid: Signal<Out, Bit>,
    pub cv_look_ready: Signal<In, Bit>,
    pub cv_look_qp: Signal<Out, Bits<A>>,
    pub cv_got_oldest: Signal<In, Bits<24>>,
    pub cv_got_cons: Signal<In, Bits<16>>,
    pub cv_got_front: Signal<In, Bits<24>>,
    pub cv_got_rd_done: Signal<In, Bits<4>>,
    pub cv_got_rewinds: Signal<In, Bits<4>>,
    pub cv_got_rnr: Signal<In, Bit>,
    /// A request failed: the completer flushed the ring (nothing more is sent).
    pub cv_got_err: Signal<In, Bit>,
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
    /// The DMA port's read side ([`crate::dma_arbiter`]).
    pub m_dma_rd_req_valid: Signal<Out, Bit>,
    pub m_dma_rd_req_ready: Signal<In, Bit>,
    pub m_dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_rd_req_len: Signal<Out, Bits<16>>,
    pub m_dma_rd_data_valid: Signal<In, Bit>,
    pub m_dma_rd_data_ready: Signal<Out, Bit>,
    pub m_dma_rd_data: Signal<In, Bits<64>>,
    pub m_dma_rd_data_last: Signal<In, Bit>,
    pub m_dma_rd_data_err: Signal<In, Bit>,
    /// Request packets as send descriptors, with the QP's row.
    pub m_desc_valid: Signal<Out, Bit>,
    pub m_desc_ready: Signal<In, Bit>,
    pub m_desc_data: Signal<Out, Bits<TH_BITS>>,
    pub m_desc_qp: Signal<Out, Bits<A>>,
    /// The QP's TIMEOUT, with each descriptor (the ACK timer a packet sent arms:
    /// [`crate::timer_arm`]).
    pub m_desc_timeout: Signal<Out, Bits<5>>,
    /// Their payloads, one frame per descriptor with a payload.
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    /// A request the completer is to fail (ibv_wc_status), at its send ring index.
    pub m_fail_valid: Signal<Out, Bit>,
    pub m_fail_ready: Signal<In, Bit>,
    pub m_fail_qp: Signal<Out, Bits<A>>,
    pub m_fail_index: Signal<Out, Bits<16>>,
    pub m_fail_status: Signal<Out, Bits<5>>,
    /// Packets sent for the first time; sent again; send ring reads the host refused (each
    /// wraps at 2^32).
    /// The completer's reads of a QP's send point (`sp_look_qp` each clock, answered the clock
    /// after): one past the highest PSN sent, and the ring index of the next request to start
    /// (the requests from the consumer up to it have their PSNs).
    pub sp_look_qp: Signal<In, Bits<A>>,
    pub sp_got_sent: Signal<Out, Bits<24>>,
    pub sp_got_nstart: Signal<Out, Bits<16>>,
    pub cnt_packets: Signal<Out, Bits<32>>,
    pub cnt_retransmitted: Signal<Out, Bits<32>>,
    pub cnt_dma_err: Signal<Out, Bits<32>>,

    mem: RAM<Bits<RQ_BITS>, A>,
    /// A copy of each row's SENT_UPTO and NSTART for the completer's reads.
    sp_mem: RAM<Bits<40>, A>,
    wqe: SendWqe<A, A>,
    seg: ReqSegment,
    gather: PayloadGather,
    fifo: CommitFifo<F>,
    qpf: ReqQpFields,
    rqf: RqFields,
    rq_out: RqJoin,
    wf: ReqWqeFields,
    st: DFF<Bits<5>>,
    q: DFF<Bits<A>>,
    qp_row: DFF<Bits<QP_BITS>>,
    row: DFF<Bits<RQ_BITS>>,
    qp_asked: DFF<Bit>,
    qp_have: DFF<Bit>,
    cv_asked: DFF<Bit>,
    cv_have: DFF<Bit>,
    cv_oldest: DFF<Bits<24>>,
    cv_cons: DFF<Bits<16>>,
    cv_front: DFF<Bits<24>>,
    cv_rd_done: DFF<Bits<4>>,
    cv_rewinds: DFF<Bits<4>>,
    cv_rnr: DFF<Bit>,
    cv_err: DFF<Bit>,
    /// The row being worked on (written back at the turn's end).
    w_next: DFF<Bits<24>>,
    w_nstart: DFF<Bits<16>>,
    w_cur: DFF<Bits<16>>,
    w_first: DFF<Bits<24>>,
    w_pkt: DFF<Bits<24>>,
    w_noack: DFF<Bits<8>>,
    w_passed: DFF<Bits<4>>,
    w_seen: DFF<Bits<4>>,
    w_sent: DFF<Bits<24>>,
    /// The position came from the completer: the packet index is to be clamped.
    w_clamp: DFF<Bit>,
    /// The request at `w_cur` has its PSNs; it is a READ or an atomic; an atomic.
    started: DFF<Bit>,
    rdat: DFF<Bit>,
    atomic: DFF<Bit>,
    npk: DFF<Bits<24>>,
    this_psn: DFF<Bits<24>>,
    more: DFF<Bit>,
    /// Packets sent in this turn.
    burst: DFF<Bits<4>>,
    status: DFF<Bits<5>>,
    need: DFF<Bits<12>>,
    used: DFF<Bits<12>>,
    cnt_pkts: DFF<Bits<32>>,
    cnt_retx: DFF<Bits<32>>,
    cnt_dmae: DFF<Bits<32>>,

    l_dist: Signal<Local, Bits<24>>,
    l_behind: Signal<Local, Bits<16>>,
    l_kraw: Signal<Local, Bits<24>>,
    l_npkm1: Signal<Local, Bits<24>>,
    l_lenp: Signal<Local, Bits<36>>,
    l_open: Signal<Local, Bits<4>>,
    l_limit: Signal<Local, Bits<5>>,
    l_words: Signal<Local, Bits<17>>,
    l_fits: Signal<Local, Bits<12>>,
    l_rel: Signal<Local, Bits<24>>,
    l_sub: Signal<Local, Bits<12>>,
    l_big: Signal<Local, Bit>,
    l_wait: Signal<Local, Bit>,
    l_refuse: Signal<Local, Bit>,
    wqe_sel: Signal<Local, Bit>,
    k_one4: Constant<Bits<4>>,
    k_one5: Constant<Bits<5>>,
    k_one12: Constant<Bits<12>>,
    k_one16: Constant<Bits<16>>,
    k_one24: Constant<Bits<24>>,
    k_one32: Constant<Bits<32>>,
    k_seven17: Constant<Bits<17>>,
    k_zero12: Constant<Bits<12>>,
    k_reserve: Constant<Bits<12>>,
    k_m255: Constant<Bits<36>>,
    k_m511: Constant<Bits<36>>,
    k_m1023: Constant<Bits<36>>,
    k_m2047: Constant<Bits<36>>,
    k_m4095: Constant<Bits<36>>,
}

impl<const A: usize, const F: usize> Requester<A, F> {
    /// QP rows.
    pub const ROWS: usize = 1 << A;
}

impl<const A: usize, const F: usize> Default for Requester<A, F> {
    fn default() -> Self {
        assert!((10..=11).contains(&F), "a FIFO holds an MTU-4096 payload");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_turn_valid: Default::default(),
            s_turn_ready: Default::default(),
            s_turn_qp: Default::default(),
            m_done_valid: Default::default(),
            m_done_ready: Default::default(),
            m_done_more: Default::default(),
            s_init_valid: Default::default(),
            s_init_ready: Default::default(),
            s_init_qp: Default::default(),
            s_init_psn: Default::default(),
            s_init_index: Default::default(),
            ack_every: Default::default(),
            max_unacked: Default::default(),
            qp_look_valid: Default::default(),
            qp_look_ready: Default::default(),
            qp_look_row: Default::default(),
            qp_got_data: Default::default(),
            cv_look_valid: Default::default(),
            cv_look_ready: Default::default(),
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
            m_desc_valid: Default::default(),
            m_desc_ready: Default::default(),
            m_desc_data: Default::default(),
            m_desc_qp: Default::default(),
            m_desc_timeout: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tuser: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            m_fail_valid: Default::default(),
            m_fail_ready: Default::default(),
            m_fail_qp: Default::default(),
            m_fail_index: Default::default(),
            m_fail_status: Default::default(),
            sp_look_qp: Default::default(),
            sp_got_sent: Default::default(),
            sp_got_nstart: Default::default(),
            cnt_packets: Default::default(),
            cnt_retransmitted: Default::default(),
            cnt_dma_err: Default::default(),
            mem: Default::default(),
            sp_mem: Default::default(),
            wqe: Default::default(),
            seg: Default::default(),
            gather: Default::default(),
            fifo: Default::default(),
            qpf: Default::default(),
            rqf: Default::default(),
            rq_out: Default::default(),
            wf: Default::default(),
            st: Default::default(),
            q: Default::default(),
            qp_row: Default::default(),
            row: Default::default(),
            qp_asked: Default::default(),
            qp_have: Default::default(),
            cv_asked: Default::default(),
            cv_have: Default::default(),
            cv_oldest: Default::default(),
            cv_cons: Default::default(),
            cv_front: Default::default(),
            cv_rd_done: Default::default(),
            cv_rewinds: Default::default(),
            cv_rnr: Default::default(),
            cv_err: Default::default(),
            w_next: Default::default(),
            w_nstart: Default::default(),
            w_cur: Default::default(),
            w_first: Default::default(),
            w_pkt: Default::default(),
            w_noack: Default::default(),
            w_passed: Default::default(),
            w_seen: Default::default(),
            w_sent: Default::default(),
            w_clamp: Default::default(),
            started: Default::default(),
            rdat: Default::default(),
            atomic: Default::default(),
            npk: Default::default(),
            this_psn: Default::default(),
            more: Default::default(),
            burst: Default::default(),
            status: Default::default(),
            need: Default::default(),
            used: Default::default(),
            cnt_pkts: Default::default(),
            cnt_retx: Default::default(),
            cnt_dmae: Default::default(),
            l_dist: Default::default(),
            l_behind: Default::default(),
            l_kraw: Default::default(),
            l_npkm1: Default::default(),
            l_lenp: Default::default(),
            l_open: Default::default(),
            l_limit: Default::default(),
            l_words: Default::default(),
            l_fits: Default::default(),
            l_rel: Default::default(),
            l_sub: Default::default(),
            l_big: Default::default(),
            l_wait: Default::default(),
            l_refuse: Default::default(),
            wqe_sel: Default::default(),
            k_one4: Constant::new(1.into()),
            k_one5: Constant::new(1.into()),
            k_one12: Constant::new(1.into()),
            k_one16: Constant::new(1.into()),
            k_one24: Constant::new(1.into()),
            k_one32: Constant::new(1.into()),
            k_seven17: Constant::new(7.into()),
            k_zero12: Constant::new(0.into()),
            k_reserve: Constant::new(bits::<12>(reserve_words(F))),
            k_m255: Constant::new(255.into()),
            k_m511: Constant::new(511.into()),
            k_m1023: Constant::new(1023.into()),
            k_m2047: Constant::new(2047.into()),
            k_m4095: Constant::new(4095.into()),
        }
    }
}

impl<const A: usize, const F: usize> Logic for Requester<A, F> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st, q, qp_row, row, qp_asked, qp_have, cv_asked, cv_have, cv_oldest,
            cv_cons, cv_front, cv_rd_done, cv_rewinds, cv_rnr, cv_err, w_next, w_nstart, w_cur,
            w_first, w_pkt, w_noack, w_passed, w_seen, w_sent, w_clamp, started, rdat, atomic, npk,
            this_psn, more, burst, status, need, used, cnt_pkts, cnt_retx, cnt_dmae
        );
        clock!(self, clock, wqe, seg, gather, fifo);
        self.wqe.reset.next = self.reset.val();
        self.seg.reset.next = self.reset.val();
        self.gather.reset.next = self.reset.val();
        self.fifo.reset.next = self.reset.val();
        self.mem.read_clock.next = self.clock.val();
        self.mem.write_clock.next = self.clock.val();
        self.sp_mem.read_clock.next = self.clock.val();
        self.sp_mem.write_clock.next = self.clock.val();

        // ---- Field views.
        self.qpf.word.next = self.qp_row.q.val();
        self.rqf.word.next = self.row.q.val();
        self.wf.word.next = self.wqe.m_wqe.val();
        self.rq_out.next_psn.next = self.w_next.q.val();
        self.rq_out.nstart.next = self.w_nstart.q.val();
        self.rq_out.cur.next = self.w_cur.q.val();
        self.rq_out.first.next = self.w_first.q.val();
        self.rq_out.pkt.next = self.w_pkt.q.val();
        self.rq_out.noack.next = self.w_noack.q.val();
        self.rq_out.passed.next = self.w_passed.q.val();
        self.rq_out.seen.next = self.w_seen.q.val();
        self.rq_out.sent.next = self.w_sent.q.val();

        // ---- Locals.
        self.l_dist.next = self.this_psn.q.val() - self.cv_oldest.q.val();
        self.l_behind.next = self.rqf.cur.val() - self.cv_cons.q.val();
        self.l_kraw.next = self.cv_oldest.q.val() - self.cv_front.q.val();
        self.l_npkm1.next = self.npk.q.val() - self.k_one24.val();
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
        self.l_open.next = self.w_passed.q.val() - self.cv_rd_done.q.val();
        self.l_limit.next = self.qpf.mra.val();
        if !self.qpf.mra.val().any() {
            self.l_limit.next = self.k_one5.val();
        }
        self.l_words.next = bit_cast::<17, 16>(self.seg.m_take.val()) + self.k_seven17.val();
        self.l_fits.next = self.used.q.val() + self.need.q.val();
        self.l_rel.next = self.this_psn.q.val() - self.w_sent.q.val();
        self.l_big.next = self.wqe.m_total.val().get_bit(33)
            | self.wqe.m_total.val().get_bit(32)
            | (self.wqe.m_total.val().get_bit(31) & self.wqe.m_total.val().get_bits::<31>(0).any());
        // The packet waits (the window; for a request starting, a fence behind an
        // outstanding READ or atomic, or the READ/atomic limit), or the request is refused.
        self.l_wait.next = (!self.l_dist.val().get_bit(23)
            & (self.l_dist.val() >= self.max_unacked.val()))
            | (!self.started.q.val()
                & ((self.wf.flags.val().get_bit(0) & self.l_open.val().any())
                    | (self.rdat.q.val()
                        & (bit_cast::<5, 4>(self.l_open.val()) >= self.l_limit.val()))));
        self.l_refuse.next = !self.started.q.val() & (!self.wqe.m_ok.val() | self.l_big.val());

        // ---- Defaults.
        self.s_turn_ready.next = false;
        self.s_init_ready.next = false;
        self.m_done_valid.next = self.st.q.val() == 17;
        self.m_done_more.next = self.more.q.val();
        self.qp_look_valid.next = (self.st.q.val() == 1) & !self.qp_asked.q.val();
        self.qp_look_row.next = self.q.q.val();
        self.cv_look_valid.next = (self.st.q.val() == 1) & !self.cv_asked.q.val();
        self.cv_look_qp.next = self.q.q.val();
        self.m_fail_valid.next = self.st.q.val() == 14;
        self.m_fail_qp.next = self.q.q.val();
        self.m_fail_index.next = self.w_cur.q.val();
        self.m_fail_status.next = self.status.q.val();
        self.m_desc_valid.next = self.st.q.val() == 15;
        self.m_desc_data.next = self.seg.m_desc.val();
        self.m_desc_qp.next = self.q.q.val();
        self.m_desc_timeout.next = self.qpf.timeout.val();
        self.mem.read_address.next = self.q.q.val();
        self.mem.write_address.next = self.q.q.val();
        self.mem.write_data.next = self.rq_out.word.val();
        self.mem.write_enable.next = self.st.q.val() == 17;
        // The send point's copy: written with the row, and after every packet during a turn
        // (states 4 and 8 follow a packet's write-back, 16, with the working registers
        // committed), so the completer knows of a packet as soon as it has left, not only when
        // the turn of up to eight ends.
        self.sp_mem.read_address.next = self.sp_look_qp.val();
        self.sp_got_sent.next = self.sp_mem.read_data.val().get_bits::<24>(0);
        self.sp_got_nstart.next = self.sp_mem.read_data.val().get_bits::<16>(24);
        self.sp_mem.write_address.next = self.q.q.val();
        self.sp_mem.write_data.next = bit_cast::<40, 24>(self.w_sent.q.val())
            | (bit_cast::<40, 16>(self.w_nstart.q.val()) << 24);
        self.sp_mem.write_enable.next =
            (self.st.q.val() == 17) | (self.st.q.val() == 4) | (self.st.q.val() == 8);

        // The request reader.
        self.wqe.s_req_valid.next = self.st.q.val() == 4;
        self.wqe.s_req_ring.next = self.q.q.val();
        self.wqe.s_req_index.next = self.w_cur.q.val();
        self.wqe.s_req_pd.next = self.qpf.pd.val();
        self.wqe.m_ready.next = self.st.q.val() == 5;
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

        // Segmentation, held until the packet is out.
        self.seg.s_valid.next = self.st.q.val() == 10;
        self.seg.s_wqe.next = self.wqe.m_wqe.val();
        self.seg.s_len.next = self.wqe.m_total.val().get_bits::<32>(0);
        self.seg.s_qp.next = self.qp_row.q.val();
        self.seg.s_first_psn.next = self.w_first.q.val();
        self.seg.s_pkt.next = self.w_pkt.q.val();
        self.seg.s_noack.next = self.w_noack.q.val();
        self.seg.ack_every.next = self.ack_every.val();
        self.seg.m_ready.next = false;

        // The payload gather, its stream into the FIFO (room reserved before its command).
        self.gather.s_cmd_valid.next = false;
        self.gather.s_cmd_addr0.next = self.wqe.m_addr0.val();
        self.gather.s_cmd_addr1.next = self.wqe.m_addr1.val();
        self.gather.s_cmd_addr2.next = self.wqe.m_addr2.val();
        self.gather.s_cmd_addr3.next = self.wqe.m_addr3.val();
        self.gather.s_cmd_len0.next = self.wqe.m_len0.val();
        self.gather.s_cmd_len1.next = self.wqe.m_len1.val();
        self.gather.s_cmd_len2.next = self.wqe.m_len2.val();
        self.gather.s_cmd_len3.next = self.wqe.m_len3.val();
        self.gather.s_cmd_off.next = self.seg.m_off.val();
        self.gather.s_cmd_take.next = self.seg.m_take.val();
        self.gather.m_axis_tready.next = true;
        self.fifo.wr_en.next = self.gather.m_axis_tvalid.val();
        self.fifo.wr_data.next = self.gather.m_axis_tdata.val();
        self.fifo.wr_keep.next = self.gather.m_axis_tkeep.val();
        self.fifo.wr_last.next = self.gather.m_axis_tlast.val();
        self.fifo.wr_user.next = self.gather.m_axis_tuser.val();
        self.fifo.commit.next = self.gather.m_axis_tvalid.val() & self.gather.m_axis_tlast.val();
        self.fifo.rewind.next = false;
        self.m_axis_tdata.next = self.fifo.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.fifo.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.fifo.m_axis_tlast.val();
        self.m_axis_tuser.next = self.fifo.m_axis_tuser.val();
        self.m_axis_tvalid.next = self.fifo.m_axis_tvalid.val();
        self.fifo.m_axis_tready.next = self.m_axis_tready.val();
        // Words reserved: payloads being read plus words not yet sent.
        self.l_sub.next = self.k_zero12.val();
        if self.fifo.m_axis_tvalid.val() & self.m_axis_tready.val() {
            self.l_sub.next = self.k_one12.val();
        }
        self.used.d.next = self.used.q.val() - self.l_sub.val();

        // The DMA read port: the request reader's while it reads.
        self.wqe_sel.next = (self.st.q.val() == 4) | (self.st.q.val() == 5);
        self.m_dma_rd_req_valid.next = self.gather.m_dma_rd_req_valid.val();
        self.m_dma_rd_req_addr.next = self.gather.m_dma_rd_req_addr.val();
        self.m_dma_rd_req_len.next = self.gather.m_dma_rd_req_len.val();
        self.m_dma_rd_data_ready.next = self.gather.m_dma_rd_data_ready.val();
        self.gather.m_dma_rd_req_ready.next = self.m_dma_rd_req_ready.val() & !self.wqe_sel.val();
        self.gather.m_dma_rd_data_valid.next = self.m_dma_rd_data_valid.val() & !self.wqe_sel.val();
        self.wqe.m_dma_rd_req_ready.next = self.m_dma_rd_req_ready.val() & self.wqe_sel.val();
        self.wqe.m_dma_rd_data_valid.next = self.m_dma_rd_data_valid.val() & self.wqe_sel.val();
        if self.wqe_sel.val() {
            self.m_dma_rd_req_valid.next = self.wqe.m_dma_rd_req_valid.val();
            self.m_dma_rd_req_addr.next = self.wqe.m_dma_rd_req_addr.val();
            self.m_dma_rd_req_len.next = self.wqe.m_dma_rd_req_len.val();
            self.m_dma_rd_data_ready.next = self.wqe.m_dma_rd_data_ready.val();
        }
        self.gather.m_dma_rd_data.next = self.m_dma_rd_data.val();
        self.gather.m_dma_rd_data_last.next = self.m_dma_rd_data_last.val();
        self.gather.m_dma_rd_data_err.next = self.m_dma_rd_data_err.val();
        self.wqe.m_dma_rd_data.next = self.m_dma_rd_data.val();
        self.wqe.m_dma_rd_data_last.next = self.m_dma_rd_data_last.val();
        self.wqe.m_dma_rd_data_err.next = self.m_dma_rd_data_err.val();

        self.cnt_packets.next = self.cnt_pkts.q.val();
        self.cnt_retransmitted.next = self.cnt_retx.q.val();
        self.cnt_dma_err.next = self.cnt_dmae.q.val();

        match self.st.q.val().index() {
            0 => {
                // A QP entering RTS first, then a turn.
                self.s_init_ready.next = true;
                self.mem.write_address.next = self.s_init_qp.val();
                self.rq_out.next_psn.next = self.s_init_psn.val();
                self.rq_out.nstart.next = self.s_init_index.val();
                self.rq_out.cur.next = self.s_init_index.val();
                self.rq_out.first.next = self.s_init_psn.val();
                self.rq_out.pkt.next = 0.into();
                self.rq_out.noack.next = 0.into();
                self.rq_out.passed.next = 0.into();
                self.rq_out.seen.next = 0.into();
                self.rq_out.sent.next = self.s_init_psn.val();
                self.mem.write_enable.next = self.s_init_valid.val();
                self.sp_mem.write_address.next = self.s_init_qp.val();
                self.sp_mem.write_data.next = bit_cast::<40, 24>(self.s_init_psn.val())
                    | (bit_cast::<40, 16>(self.s_init_index.val()) << 24);
                self.sp_mem.write_enable.next = self.s_init_valid.val();
                self.s_turn_ready.next = !self.s_init_valid.val();
                if self.s_turn_valid.val() & !self.s_init_valid.val() {
                    self.q.d.next = self.s_turn_qp.val();
                    self.qp_asked.d.next = false;
                    self.qp_have.d.next = false;
                    self.cv_asked.d.next = false;
                    self.cv_have.d.next = false;
                    self.burst.d.next = 0.into();
                    self.st.d.next = 1.into();
                }
            }
            1 => {
                // The QP's row, the completer's view and (from the RAM) the state row.
                if self.qp_asked.q.val() & !self.qp_have.q.val() {
                    self.qp_row.d.next = self.qp_got_data.val();
                    self.qp_have.d.next = true;
                }
                if self.qp_look_ready.val() & !self.qp_asked.q.val() {
                    self.qp_asked.d.next = true;
                }
                if self.cv_asked.q.val() & !self.cv_have.q.val() {
                    self.cv_oldest.d.next = self.cv_got_oldest.val();
                    self.cv_cons.d.next = self.cv_got_cons.val();
                    self.cv_front.d.next = self.cv_got_front.val();
                    self.cv_rd_done.d.next = self.cv_got_rd_done.val();
                    self.cv_rewinds.d.next = self.cv_got_rewinds.val();
                    self.cv_rnr.d.next = self.cv_got_rnr.val();
                    self.cv_err.d.next = self.cv_got_err.val();
                    self.cv_have.d.next = true;
                }
                if self.cv_look_ready.val() & !self.cv_asked.q.val() {
                    self.cv_asked.d.next = true;
                }
                if self.qp_have.q.val() & self.cv_have.q.val() {
                    self.st.d.next = 2.into();
                }
            }
            2 => {
                self.row.d.next = self.mem.read_data.val();
                self.st.d.next = 3.into();
            }
            3 => {
                // Follow the completer: a rewind, or a consumer past the request being sent.
                self.w_next.d.next = self.rqf.next_psn.val();
                self.w_nstart.d.next = self.rqf.nstart.val();
                self.w_cur.d.next = self.rqf.cur.val();
                self.w_first.d.next = self.rqf.first.val();
                self.w_pkt.d.next = self.rqf.pkt.val();
                self.w_noack.d.next = self.rqf.noack.val();
                self.w_passed.d.next = self.rqf.passed.val();
                self.w_seen.d.next = self.cv_rewinds.q.val();
                self.w_sent.d.next = self.rqf.sent.val();
                self.w_clamp.d.next = false;
                if (self.cv_rewinds.q.val() != self.rqf.seen.val())
                    | self.l_behind.val().get_bit(15)
                {
                    self.w_cur.d.next = self.cv_cons.q.val();
                    self.w_first.d.next = self.cv_front.q.val();
                    self.w_passed.d.next = self.cv_rd_done.q.val();
                    self.w_pkt.d.next = self.l_kraw.val();
                    if self.l_kraw.val().get_bit(23) {
                        self.w_pkt.d.next = 0.into();
                    }
                    self.w_clamp.d.next = true;
                    if self.cv_rewinds.q.val() != self.rqf.seen.val() {
                        self.w_noack.d.next = 0.into();
                    }
                }
                self.more.d.next = false;
                self.st.d.next = 17.into();
                if (self.qpf.state.val() == 3)
                    & !self.qpf.qtype.val().any()
                    & !self.cv_rnr.q.val()
                    & !self.cv_err.q.val()
                {
                    self.st.d.next = 4.into();
                }
            }
            4 => {
                if self.wqe.s_req_ready.val() {
                    self.st.d.next = 5.into();
                }
            }
            5 => {
                // The request: none (the ring is empty) or refused by the host ends the turn.
                self.started.d.next = self.w_cur.q.val() != self.w_nstart.q.val();
                self.rdat.d.next =
                    (self.wf.op.val() == 4) | (self.wf.op.val() == 5) | (self.wf.op.val() == 6);
                self.atomic.d.next = (self.wf.op.val() == 5) | (self.wf.op.val() == 6);
                if self.wqe.m_valid.val() {
                    self.st.d.next = 6.into();
                    if self.wqe.m_empty.val() | self.wqe.m_dma_err.val() {
                        self.more.d.next = false;
                        self.st.d.next = 17.into();
                    }
                    if self.wqe.m_dma_err.val() {
                        self.cnt_dmae.d.next = self.cnt_dmae.q.val() + self.k_one32.val();
                    }
                }
            }
            6 => {
                // Its packet count: one for an atomic or an empty message.
                self.npk.d.next = self.l_lenp.val().get_bits::<24>(8);
                if self.qpf.mtu.val() == 2 {
                    self.npk.d.next = self.l_lenp.val().get_bits::<24>(9);
                }
                if self.qpf.mtu.val() == 3 {
                    self.npk.d.next = self.l_lenp.val().get_bits::<24>(10);
                }
                if self.qpf.mtu.val() == 4 {
                    self.npk.d.next = self.l_lenp.val().get_bits::<24>(11);
                }
                if self.qpf.mtu.val() == 5 {
                    self.npk.d.next = self.l_lenp.val().get_bits::<24>(12);
                }
                if self.atomic.q.val() | !self.wqe.m_total.val().any() {
                    self.npk.d.next = self.k_one24.val();
                }
                self.st.d.next = 7.into();
            }
            7 => {
                // A position from the completer: inside the request (an atomic from its
                // start), or its start when it has no PSNs yet.
                if self.w_clamp.q.val() {
                    if self.l_npkm1.val() < self.w_pkt.q.val() {
                        self.w_pkt.d.next = self.l_npkm1.val();
                    }
                    if self.atomic.q.val() | !self.started.q.val() {
                        self.w_pkt.d.next = 0.into();
                    }
                }
                self.st.d.next = 8.into();
            }
            8 => {
                self.this_psn.d.next = self.w_first.q.val() + self.w_pkt.q.val();
                if !self.started.q.val() {
                    self.this_psn.d.next = self.w_next.q.val();
                }
                self.st.d.next = 9.into();
            }
            9 => {
                // The window, the fence, the READ/atomic limit, the local check; a request
                // starting takes its PSNs.
                self.more.d.next = false;
                if self.l_wait.val() {
                    self.st.d.next = 17.into();
                } else if self.l_refuse.val() {
                    self.status.d.next = 4.into();
                    if self.l_big.val() {
                        self.status.d.next = 1.into();
                    }
                    self.st.d.next = 14.into();
                } else {
                    self.st.d.next = 10.into();
                    if !self.started.q.val() {
                        self.started.d.next = true;
                        self.w_first.d.next = self.w_next.q.val();
                        self.w_next.d.next = self.w_next.q.val() + self.npk.q.val();
                        self.w_nstart.d.next = self.w_nstart.q.val() + self.k_one16.val();
                        self.w_pkt.d.next = 0.into();
                    }
                }
            }
            10 => {
                if self.seg.s_ready.val() {
                    self.st.d.next = 11.into();
                }
            }
            11 => {
                self.need.d.next = self.l_words.val().get_bits::<12>(3);
                if self.seg.m_valid.val() {
                    self.st.d.next = 12.into();
                    if self.seg.m_bad.val() {
                        self.seg.m_ready.next = true;
                        self.status.d.next = 2.into();
                        self.st.d.next = 14.into();
                    }
                }
            }
            12 => {
                // The payload's command once the FIFO has room for its words.
                if !self.seg.m_take.val().any() {
                    self.st.d.next = 15.into();
                } else if self.l_fits.val() <= self.k_reserve.val() {
                    self.gather.s_cmd_valid.next = true;
                    if self.gather.s_cmd_ready.val() {
                        self.used.d.next = self.l_fits.val() - self.l_sub.val();
                        self.st.d.next = 13.into();
                    }
                }
            }
            13 => {
                if self.gather.m_axis_tvalid.val() & self.gather.m_axis_tlast.val() {
                    self.st.d.next = 15.into();
                }
            }
            14 => {
                if self.m_fail_ready.val() {
                    self.more.d.next = false;
                    self.st.d.next = 17.into();
                }
            }
            15 => {
                if self.m_desc_ready.val() {
                    self.st.d.next = 16.into();
                }
            }
            16 => {
                // The row moves on; the packet counted.
                self.seg.m_ready.next = true;
                self.w_noack.d.next = self.seg.m_next_noack.val();
                if self.l_rel.val().get_bit(23) {
                    self.cnt_retx.d.next = self.cnt_retx.q.val() + self.k_one32.val();
                } else {
                    self.cnt_pkts.d.next = self.cnt_pkts.q.val() + self.k_one32.val();
                    self.w_sent.d.next = self.this_psn.q.val() + self.seg.m_span.val();
                }
                self.w_pkt.d.next = self.w_pkt.q.val() + self.k_one24.val();
                if self.seg.m_last.val() {
                    self.w_cur.d.next = self.w_cur.q.val() + self.k_one16.val();
                    self.w_pkt.d.next = 0.into();
                    self.w_first.d.next = self.w_first.q.val() + self.npk.q.val();
                    if self.rdat.q.val() {
                        self.w_passed.d.next = self.w_passed.q.val() + self.k_one4.val();
                    }
                }
                // Up to eight packets a turn: the request's next, or the next request.
                self.w_clamp.d.next = false;
                self.burst.d.next = self.burst.q.val() + self.k_one4.val();
                self.more.d.next = true;
                self.st.d.next = 17.into();
                if self.burst.q.val() != 7 {
                    self.st.d.next = 8.into();
                    if self.seg.m_last.val() {
                        self.st.d.next = 4.into();
                    }
                }
            }
            17 => {
                // The row written back (every clock here: the same word).
                if self.m_done_ready.val() {
                    self.st.d.next = 0.into();
                }
            }
            _ => {
                self.st.d.next = 0.into();
            }
        }
        if self.reset.val() {
            self.st.d.next = 0.into();
            self.used.d.next = 0.into();
            self.cnt_pkts.d.next = 0.into();
            self.cnt_retx.d.next = 0.into();
            self.cnt_dmae.d.next = 0.into();
        }
    }
}
