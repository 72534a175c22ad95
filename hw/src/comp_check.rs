//! The completer's decision about a response, one step at a time: the transport model's
//! `comp_check::step` in hardware. A response's transport header, its QP's attribute row, the
//! completer state row, the requester's send point and the oldest request of the send queue
//! (present once sent: its kind, first PSN, packet count and length) go in together; the
//! model's `Step` comes out four clocks later: a verdict code, the completer state row after
//! the step, and what the completer does next (complete the oldest request, fail it with a
//! status, make the requester go back, start an RNR wait, restart or stop the ACK timer,
//! place READ data at an offset). A coalesced ACK takes one step per request it completes
//! (verdict 0) and a last one.
//!
//! 1. opcode and syndrome decode, the covered PSN (`psn + 1` for an ACK), the oldest
//!    request's last PSN, PSN distances from the captured fields, the READ data's offset;
//! 2. the distances that need stage 1's sums (last against the covered PSN, against the
//!    response's), the READ's last-packet length;
//! 3. the decision in the model's order, from registers only.
//!
//! One step at a time (`s_ready` while idle); the shortest response (an ACK, 66 bytes) gives
//! nine clocks at eight bytes per clock.

use rust_hdl::prelude::*;

use crate::row_table::{CS_BITS, QP_BITS, cs_offset_of, qp_offset_of};
use crate::transport_header::{TH_BITS, th_offset_of};
use crate::{field_join, field_split};

field_split!(
    /// The transport header fields the step reads.
    ThFields, TH_BITS, th_offset_of, {
        op: 8 => "OpCode",
        psn: 24 => "PSN",
        len: 16 => "payload_len",
        key: 32 => "ext_key",
    }
);

field_split!(
    /// The QP attribute fields the step reads.
    QpFields, QP_BITS, qp_offset_of, {
        mtu: 3 => "PATH_MTU",
        retry: 3 => "RETRY_CNT",
        rnr: 3 => "RNR_RETRY",
    }
);

field_split!(
    /// The completer state row, as read.
    CsFields, CS_BITS, cs_offset_of, {
        psn: 24 => "OLDEST_PSN",
        retry: 3 => "RETRY_CNT",
        rnr: 3 => "RNR_RETRY",
        started: 1 => "STARTED_RETRY",
    }
);

field_join!(
    /// The completer state row, as written.
    CsJoin, CS_BITS, cs_offset_of, {
        psn: 24 => "OLDEST_PSN",
        retry: 3 => "RETRY_CNT",
        rnr: 3 => "RNR_RETRY",
        started: 1 => "STARTED_RETRY",
    }
);

/// Clocks from a step taken to its decision valid.
pub const LATENCY: usize = 4;

#[derive(LogicBlock)]
pub struct CompCheck {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_valid: Signal<In, Bit>,
    pub s_ready: Signal<Out, Bit>,
    /// The response's transport header (the AETH syndrome is `ext_key`'s top byte).
    pub s_hdr: Signal<In, Bits<TH_BITS>>,
    /// Its QP's attribute row.
    pub s_qp: Signal<In, Bits<QP_BITS>>,
    /// The QP's completer state row.
    pub s_state: Signal<In, Bits<CS_BITS>>,
    /// One past the highest PSN the requester has sent.
    pub s_sent_upto: Signal<In, Bits<24>>,
    /// The oldest request of the send queue has been (partly) sent.
    pub s_front_valid: Signal<In, Bit>,
    /// Its kind: 0 SEND or WRITE, 1 READ, 2 atomic.
    pub s_front_kind: Signal<In, Bits<2>>,
    pub s_front_first: Signal<In, Bits<24>>,
    /// PSNs it takes (a READ: one per response packet).
    pub s_front_npkts: Signal<In, Bits<24>>,
    /// Its length in bytes.
    pub s_front_len: Signal<In, Bits<32>>,
    /// An earlier step of this response completed a request.
    pub s_completed: Signal<In, Bit>,
    pub m_valid: Signal<Out, Bit>,
    pub m_ready: Signal<In, Bit>,
    /// The model's `Verdict` code.
    pub m_verdict: Signal<Out, Bits<4>>,
    /// The completer state row after the step.
    pub m_state: Signal<Out, Bits<CS_BITS>>,
    /// The oldest request completes successfully.
    pub m_complete: Signal<Out, Bit>,
    /// The oldest request fails with `m_status` (an `ibv_wc_status`); the QP goes to ERR.
    pub m_fail: Signal<Out, Bit>,
    pub m_status: Signal<Out, Bits<5>>,
    /// The requester goes back to the oldest unacknowledged PSN.
    pub m_rewind: Signal<Out, Bit>,
    /// A retry asked for while one is under way (ignored, to be counted).
    pub m_suppressed: Signal<Out, Bit>,
    /// An RNR wait starts (the syndrome's timer code).
    pub m_rnr_wait: Signal<Out, Bit>,
    /// The ACK timer: 0 kept, 1 restarted, 2 stopped.
    pub m_timer: Signal<Out, Bits<2>>,
    /// READ data: the payload's byte offset in the READ's buffer.
    pub m_offset: Signal<Out, Bits<32>>,

    th: ThFields,
    qp: QpFields,
    cs: CsFields,
    cs_out: CsJoin,
    /// 0 idle, 1-3 the stages, 4 the decision is out.
    st: DFF<Bits<3>>,
    // ---- Stage 0: the step's inputs, captured when taken (stable until the next).
    c_op: DFF<Bits<8>>,
    c_psn: DFF<Bits<24>>,
    c_syn: DFF<Bits<8>>,
    c_plen: DFF<Bits<16>>,
    c_mtu: DFF<Bits<3>>,
    c_aretry: DFF<Bits<3>>,
    c_arnr: DFF<Bits<3>>,
    c_cpsn: DFF<Bits<24>>,
    c_retry: DFF<Bits<3>>,
    c_rnr: DFF<Bits<3>>,
    c_started: DFF<Bits<1>>,
    c_sent: DFF<Bits<24>>,
    c_fv: DFF<Bit>,
    c_kind: DFF<Bits<2>>,
    c_first: DFF<Bits<24>>,
    /// The packet count less one (0 for a count of 0).
    c_nm1: DFF<Bits<24>>,
    c_flen: DFF<Bits<32>>,
    c_done: DFF<Bit>,
    // ---- Stage 1 (from stage 0's registers).
    r_ack: DFF<Bit>,
    r_atom: DFF<Bit>,
    r_covers: DFF<Bit>,
    /// READ response FIRST or MIDDLE; LAST or ONLY.
    r_rd_fm: DFF<Bit>,
    r_rd_lo: DFF<Bit>,
    r_syn: DFF<Bits<2>>,
    r_code: DFF<Bits<5>>,
    r_p1: DFF<Bits<24>>,
    r_upto: DFF<Bits<24>>,
    r_last: DFF<Bits<24>>,
    r_pf_neg: DFF<Bit>,
    r_p_eq_first: DFF<Bit>,
    r_pc_neg: DFF<Bit>,
    r_pc_zero: DFF<Bit>,
    r_cpsn_lt_first: DFF<Bit>,
    r_cpsn_lt_sent: DFF<Bit>,
    r_first_lt_sent: DFF<Bit>,
    r_mtu: DFF<Bits<32>>,
    r_off: DFF<Bits<32>>,
    // ---- Stage 2.
    q_last_lt_upto: DFF<Bit>,
    q_first_lt_upto: DFF<Bit>,
    q_cpsn_lt_upto: DFF<Bit>,
    q_upto_lt_sent: DFF<Bit>,
    q_p1_lt_sent: DFF<Bit>,
    q_p1_ne_cpsn: DFF<Bit>,
    q_last_lt_p: DFF<Bit>,
    q_p_eq_last: DFF<Bit>,
    q_len_last_ok: DFF<Bit>,
    q_len_mid_ok: DFF<Bit>,
    // ---- Stage 3: the decision.
    v_verdict: DFF<Bits<4>>,
    v_psn: DFF<Bits<24>>,
    v_retry: DFF<Bits<3>>,
    v_rnr: DFF<Bits<3>>,
    v_started: DFF<Bits<1>>,
    v_complete: DFF<Bit>,
    v_fail: DFF<Bit>,
    v_status: DFF<Bits<5>>,
    v_rewind: DFF<Bit>,
    v_supp: DFF<Bit>,
    v_rnr_wait: DFF<Bit>,
    v_timer: DFF<Bits<2>>,
    // ---- Locals.
    take: Signal<Local, Bit>,
    l_nm1: Signal<Local, Bits<24>>,
    l_read: Signal<Local, Bit>,
    l_p1: Signal<Local, Bits<24>>,
    l_pf: Signal<Local, Bits<24>>,
    l_pc: Signal<Local, Bits<24>>,
    l_cf: Signal<Local, Bits<24>>,
    l_cs: Signal<Local, Bits<24>>,
    l_fs: Signal<Local, Bits<24>>,
    l_pf32: Signal<Local, Bits<32>>,
    l_lu: Signal<Local, Bits<24>>,
    l_fu: Signal<Local, Bits<24>>,
    l_cu: Signal<Local, Bits<24>>,
    l_us: Signal<Local, Bits<24>>,
    l_p1s: Signal<Local, Bits<24>>,
    l_lp: Signal<Local, Bits<24>>,
    l_rest: Signal<Local, Bits<32>>,
    l_plen32: Signal<Local, Bits<32>>,
    l_blocked: Signal<Local, Bit>,
    l_bl_first: Signal<Local, Bit>,
    l_moves: Signal<Local, Bit>,
    l_npsn: Signal<Local, Bits<24>>,
    l_nout: Signal<Local, Bit>,
    l_d_neg: Signal<Local, Bit>,
    l_d_zero: Signal<Local, Bit>,
    l_rst: Signal<Local, Bit>,
    l_retry_in: Signal<Local, Bits<3>>,
    l_started_in: Signal<Local, Bits<1>>,
    l_do_retry: Signal<Local, Bit>,
    l_rearm: Signal<Local, Bit>,
    l_data: Signal<Local, Bit>,
    l_v: Signal<Local, Bits<4>>,
    l_psn: Signal<Local, Bits<24>>,
    l_retry: Signal<Local, Bits<3>>,
    l_rnr: Signal<Local, Bits<3>>,
    l_started: Signal<Local, Bits<1>>,
    l_complete: Signal<Local, Bit>,
    l_fail: Signal<Local, Bit>,
    l_status: Signal<Local, Bits<5>>,
    l_rewind: Signal<Local, Bit>,
    l_supp: Signal<Local, Bit>,
    l_rnr_wait: Signal<Local, Bit>,
    l_timer: Signal<Local, Bits<2>>,
    k_one3: Constant<Bits<3>>,
    k_one24: Constant<Bits<24>>,
    k_mtu256: Constant<Bits<32>>,
    k_mtu512: Constant<Bits<32>>,
    k_mtu1024: Constant<Bits<32>>,
    k_mtu2048: Constant<Bits<32>>,
    k_mtu4096: Constant<Bits<32>>,
}

impl Default for CompCheck {
    fn default() -> Self {
        CompCheck {
            clock: Default::default(),
            reset: Default::default(),
            s_valid: Default::default(),
            s_ready: Default::default(),
            s_hdr: Default::default(),
            s_qp: Default::default(),
            s_state: Default::default(),
            s_sent_upto: Default::default(),
            s_front_valid: Default::default(),
            s_front_kind: Default::default(),
            s_front_first: Default::default(),
            s_front_npkts: Default::default(),
            s_front_len: Default::default(),
            s_completed: Default::default(),
            m_valid: Default::default(),
            m_ready: Default::default(),
            m_verdict: Default::default(),
            m_state: Default::default(),
            m_complete: Default::default(),
            m_fail: Default::default(),
            m_status: Default::default(),
            m_rewind: Default::default(),
            m_suppressed: Default::default(),
            m_rnr_wait: Default::default(),
            m_timer: Default::default(),
            m_offset: Default::default(),
            th: Default::default(),
            qp: Default::default(),
            cs: Default::default(),
            cs_out: Default::default(),
            st: Default::default(),
            c_op: Default::default(),
            c_psn: Default::default(),
            c_syn: Default::default(),
            c_plen: Default::default(),
            c_mtu: Default::default(),
            c_aretry: Default::default(),
            c_arnr: Default::default(),
            c_cpsn: Default::default(),
            c_retry: Default::default(),
            c_rnr: Default::default(),
            c_started: Default::default(),
            c_sent: Default::default(),
            c_fv: Default::default(),
            c_kind: Default::default(),
            c_first: Default::default(),
            c_nm1: Default::default(),
            c_flen: Default::default(),
            c_done: Default::default(),
            r_ack: Default::default(),
            r_atom: Default::default(),
            r_covers: Default::default(),
            r_rd_fm: Default::default(),
            r_rd_lo: Default::default(),
            r_syn: Default::default(),
            r_code: Default::default(),
            r_p1: Default::default(),
            r_upto: Default::default(),
            r_last: Default::default(),
            r_pf_neg: Default::default(),
            r_p_eq_first: Default::default(),
            r_pc_neg: Default::default(),
            r_pc_zero: Default::default(),
            r_cpsn_lt_first: Default::default(),
            r_cpsn_lt_sent: Default::default(),
            r_first_lt_sent: Default::default(),
            r_mtu: Default::default(),
            r_off: Default::default(),
            q_last_lt_upto: Default::default(),
            q_first_lt_upto: Default::default(),
            q_cpsn_lt_upto: Default::default(),
            q_upto_lt_sent: Default::default(),
            q_p1_lt_sent: Default::default(),
            q_p1_ne_cpsn: Default::default(),
            q_last_lt_p: Default::default(),
            q_p_eq_last: Default::default(),
            q_len_last_ok: Default::default(),
            q_len_mid_ok: Default::default(),
            v_verdict: Default::default(),
            v_psn: Default::default(),
            v_retry: Default::default(),
            v_rnr: Default::default(),
            v_started: Default::default(),
            v_complete: Default::default(),
            v_fail: Default::default(),
            v_status: Default::default(),
            v_rewind: Default::default(),
            v_supp: Default::default(),
            v_rnr_wait: Default::default(),
            v_timer: Default::default(),
            take: Default::default(),
            l_nm1: Default::default(),
            l_read: Default::default(),
            l_p1: Default::default(),
            l_pf: Default::default(),
            l_pc: Default::default(),
            l_cf: Default::default(),
            l_cs: Default::default(),
            l_fs: Default::default(),
            l_pf32: Default::default(),
            l_lu: Default::default(),
            l_fu: Default::default(),
            l_cu: Default::default(),
            l_us: Default::default(),
            l_p1s: Default::default(),
            l_lp: Default::default(),
            l_rest: Default::default(),
            l_plen32: Default::default(),
            l_blocked: Default::default(),
            l_bl_first: Default::default(),
            l_moves: Default::default(),
            l_npsn: Default::default(),
            l_nout: Default::default(),
            l_d_neg: Default::default(),
            l_d_zero: Default::default(),
            l_rst: Default::default(),
            l_retry_in: Default::default(),
            l_started_in: Default::default(),
            l_do_retry: Default::default(),
            l_rearm: Default::default(),
            l_data: Default::default(),
            l_v: Default::default(),
            l_psn: Default::default(),
            l_retry: Default::default(),
            l_rnr: Default::default(),
            l_started: Default::default(),
            l_complete: Default::default(),
            l_fail: Default::default(),
            l_status: Default::default(),
            l_rewind: Default::default(),
            l_supp: Default::default(),
            l_rnr_wait: Default::default(),
            l_timer: Default::default(),
            k_one3: Constant::new(bits::<3>(1)),
            k_one24: Constant::new(bits::<24>(1)),
            k_mtu256: Constant::new(bits::<32>(256)),
            k_mtu512: Constant::new(bits::<32>(512)),
            k_mtu1024: Constant::new(bits::<32>(1024)),
            k_mtu2048: Constant::new(bits::<32>(2048)),
            k_mtu4096: Constant::new(bits::<32>(4096)),
        }
    }
}

impl Logic for CompCheck {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            st,
            c_op,
            c_psn,
            c_syn,
            c_plen,
            c_mtu,
            c_aretry,
            c_arnr,
            c_cpsn,
            c_retry,
            c_rnr,
            c_started,
            c_sent,
            c_fv,
            c_kind,
            c_first,
            c_nm1,
            c_flen,
            c_done,
            r_ack,
            r_atom,
            r_covers,
            r_rd_fm,
            r_rd_lo,
            r_syn,
            r_code,
            r_p1,
            r_upto,
            r_last,
            r_pf_neg,
            r_p_eq_first,
            r_pc_neg,
            r_pc_zero,
            r_cpsn_lt_first,
            r_cpsn_lt_sent,
            r_first_lt_sent,
            r_mtu,
            r_off,
            q_last_lt_upto,
            q_first_lt_upto,
            q_cpsn_lt_upto,
            q_upto_lt_sent,
            q_p1_lt_sent,
            q_p1_ne_cpsn,
            q_last_lt_p,
            q_p_eq_last,
            q_len_last_ok,
            q_len_mid_ok,
            v_verdict,
            v_psn,
            v_retry,
            v_rnr,
            v_started,
            v_complete,
            v_fail,
            v_status,
            v_rewind,
            v_supp,
            v_rnr_wait,
            v_timer
        );
        self.th.word.next = self.s_hdr.val();
        self.qp.word.next = self.s_qp.val();
        self.cs.word.next = self.s_state.val();

        // ---- Handshake and stage counter.
        self.s_ready.next = self.st.q.val() == 0;
        self.m_valid.next = self.st.q.val() == 4;
        self.take.next = self.s_valid.val() & (self.st.q.val() == 0);
        self.st.d.next = self.st.q.val();
        if self.take.val() | ((self.st.q.val() != 0) & (self.st.q.val() != 4)) {
            self.st.d.next = self.st.q.val() + self.k_one3.val();
        }
        if (self.st.q.val() == 4) & self.m_ready.val() {
            self.st.d.next = 0.into();
        }
        if self.reset.val() {
            self.st.d.next = 0.into();
        }

        // ---- Stage 0: capture.
        self.l_nm1.next = self.s_front_npkts.val() - self.k_one24.val();
        if !self.s_front_npkts.val().any() {
            self.l_nm1.next = 0.into();
        }
        self.c_op.d.next = self.c_op.q.val();
        self.c_psn.d.next = self.c_psn.q.val();
        self.c_syn.d.next = self.c_syn.q.val();
        self.c_plen.d.next = self.c_plen.q.val();
        self.c_mtu.d.next = self.c_mtu.q.val();
        self.c_aretry.d.next = self.c_aretry.q.val();
        self.c_arnr.d.next = self.c_arnr.q.val();
        self.c_cpsn.d.next = self.c_cpsn.q.val();
        self.c_retry.d.next = self.c_retry.q.val();
        self.c_rnr.d.next = self.c_rnr.q.val();
        self.c_started.d.next = self.c_started.q.val();
        self.c_sent.d.next = self.c_sent.q.val();
        self.c_fv.d.next = self.c_fv.q.val();
        self.c_kind.d.next = self.c_kind.q.val();
        self.c_first.d.next = self.c_first.q.val();
        self.c_nm1.d.next = self.c_nm1.q.val();
        self.c_flen.d.next = self.c_flen.q.val();
        self.c_done.d.next = self.c_done.q.val();
        if self.take.val() {
            self.c_op.d.next = self.th.op.val();
            self.c_psn.d.next = self.th.psn.val();
            // The AETH: MSN in the low 24 bits, the syndrome above.
            self.c_syn.d.next = self.th.key.val().get_bits::<8>(24);
            self.c_plen.d.next = self.th.len.val();
            self.c_mtu.d.next = self.qp.mtu.val();
            self.c_aretry.d.next = self.qp.retry.val();
            self.c_arnr.d.next = self.qp.rnr.val();
            self.c_cpsn.d.next = self.cs.psn.val();
            self.c_retry.d.next = self.cs.retry.val();
            self.c_rnr.d.next = self.cs.rnr.val();
            self.c_started.d.next = self.cs.started.val();
            self.c_sent.d.next = self.s_sent_upto.val();
            self.c_fv.d.next = self.s_front_valid.val();
            self.c_kind.d.next = self.s_front_kind.val();
            self.c_first.d.next = self.s_front_first.val();
            self.c_nm1.d.next = self.l_nm1.val();
            self.c_flen.d.next = self.s_front_len.val();
            self.c_done.d.next = self.s_completed.val();
        }

        // ---- Stage 1: from the captured step (stable from the clock after the take).
        // Opcodes: READ response 0x0D-0x10 (FIRST, MIDDLE, LAST, ONLY), ACK 0x11, atomic
        // ACK 0x12.
        self.l_read.next = (self.c_op.q.val() == 13)
            | (self.c_op.q.val() == 14)
            | (self.c_op.q.val() == 15)
            | (self.c_op.q.val() == 16);
        self.r_ack.d.next = self.c_op.q.val() == 17;
        self.r_atom.d.next = self.c_op.q.val() == 18;
        self.r_rd_fm.d.next = (self.c_op.q.val() == 13) | (self.c_op.q.val() == 14);
        self.r_rd_lo.d.next = (self.c_op.q.val() == 15) | (self.c_op.q.val() == 16);
        // Syndrome class: 0 ACK, 1 RNR NAK, 2 reserved, 3 NAK.
        self.r_syn.d.next = self.c_syn.q.val().get_bits::<2>(5);
        self.r_code.d.next = self.c_syn.q.val().get_bits::<5>(0);
        self.r_covers.d.next = ((self.c_op.q.val() == 17)
            & (self.c_syn.q.val().get_bits::<2>(5) != 2))
            | (self.c_op.q.val() == 18)
            | self.l_read.val();
        self.l_p1.next = self.c_psn.q.val() + self.k_one24.val();
        self.r_p1.d.next = self.l_p1.val();
        // An ACK covers its own PSN; a NAK, a READ response and an atomic ACK what is before.
        self.r_upto.d.next = self.c_psn.q.val();
        if (self.c_op.q.val() == 17) & (self.c_syn.q.val().get_bits::<2>(5) == 0) {
            self.r_upto.d.next = self.l_p1.val();
        }
        self.r_last.d.next = self.c_first.q.val() + self.c_nm1.q.val();
        self.l_pf.next = self.c_psn.q.val() - self.c_first.q.val();
        self.r_pf_neg.d.next = self.l_pf.val().get_bit(23);
        self.r_p_eq_first.d.next = self.c_psn.q.val() == self.c_first.q.val();
        self.l_pc.next = self.c_psn.q.val() - self.c_cpsn.q.val();
        self.r_pc_neg.d.next = self.l_pc.val().get_bit(23);
        self.r_pc_zero.d.next = !self.l_pc.val().any();
        self.l_cf.next = self.c_cpsn.q.val() - self.c_first.q.val();
        self.r_cpsn_lt_first.d.next = self.l_cf.val().get_bit(23);
        self.l_cs.next = self.c_cpsn.q.val() - self.c_sent.q.val();
        self.r_cpsn_lt_sent.d.next = self.l_cs.val().get_bit(23);
        self.l_fs.next = self.c_first.q.val() - self.c_sent.q.val();
        self.r_first_lt_sent.d.next = self.l_fs.val().get_bit(23);
        // The READ data's offset: its packet index times the path MTU (ibv_mtu 1-5:
        // 256 ... 4096), modulo 2^32 as the model.
        self.l_pf32.next = bit_cast::<32, 24>(self.l_pf.val());
        self.r_mtu.d.next = 0.into();
        self.r_off.d.next = 0.into();
        if self.c_mtu.q.val() == 1 {
            self.r_mtu.d.next = self.k_mtu256.val();
            self.r_off.d.next = self.l_pf32.val() << 8;
        }
        if self.c_mtu.q.val() == 2 {
            self.r_mtu.d.next = self.k_mtu512.val();
            self.r_off.d.next = self.l_pf32.val() << 9;
        }
        if self.c_mtu.q.val() == 3 {
            self.r_mtu.d.next = self.k_mtu1024.val();
            self.r_off.d.next = self.l_pf32.val() << 10;
        }
        if self.c_mtu.q.val() == 4 {
            self.r_mtu.d.next = self.k_mtu2048.val();
            self.r_off.d.next = self.l_pf32.val() << 11;
        }
        if self.c_mtu.q.val() == 5 {
            self.r_mtu.d.next = self.k_mtu4096.val();
            self.r_off.d.next = self.l_pf32.val() << 12;
        }

        // ---- Stage 2: distances that need stage 1's sums.
        self.l_lu.next = self.r_last.q.val() - self.r_upto.q.val();
        self.q_last_lt_upto.d.next = self.l_lu.val().get_bit(23);
        self.l_fu.next = self.c_first.q.val() - self.r_upto.q.val();
        self.q_first_lt_upto.d.next = self.l_fu.val().get_bit(23);
        self.l_cu.next = self.c_cpsn.q.val() - self.r_upto.q.val();
        self.q_cpsn_lt_upto.d.next = self.l_cu.val().get_bit(23);
        self.l_us.next = self.r_upto.q.val() - self.c_sent.q.val();
        self.q_upto_lt_sent.d.next = self.l_us.val().get_bit(23);
        self.l_p1s.next = self.r_p1.q.val() - self.c_sent.q.val();
        self.q_p1_lt_sent.d.next = self.l_p1s.val().get_bit(23);
        self.q_p1_ne_cpsn.d.next = self.r_p1.q.val() != self.c_cpsn.q.val();
        self.l_lp.next = self.r_last.q.val() - self.c_psn.q.val();
        self.q_last_lt_p.d.next = self.l_lp.val().get_bit(23);
        self.q_p_eq_last.d.next = self.c_psn.q.val() == self.r_last.q.val();
        // The last READ response carries what the earlier ones left; the others the MTU.
        self.l_rest.next = self.c_flen.q.val() - self.r_off.q.val();
        self.l_plen32.next = bit_cast::<32, 16>(self.c_plen.q.val());
        self.q_len_last_ok.d.next = self.l_rest.val() == self.l_plen32.val();
        self.q_len_mid_ok.d.next = self.l_plen32.val() == self.r_mtu.q.val();

        // ---- Stage 3: the decision, from registers.
        // The oldest unacknowledged PSN moves up to the covered PSN, not past a READ or
        // atomic still waiting for its response (then to its first PSN).
        self.l_blocked.next = self.c_fv.q.val() & self.c_kind.q.val().any();
        self.l_bl_first.next = self.l_blocked.val() & self.q_first_lt_upto.q.val();
        self.l_moves.next = self.q_cpsn_lt_upto.q.val();
        self.l_npsn.next = self.r_upto.q.val();
        self.l_nout.next = self.q_upto_lt_sent.q.val();
        if self.l_bl_first.val() {
            self.l_moves.next = self.r_cpsn_lt_first.q.val();
            self.l_npsn.next = self.c_first.q.val();
            self.l_nout.next = self.r_first_lt_sent.q.val();
        }
        if !self.l_moves.val() {
            self.l_npsn.next = self.c_cpsn.q.val();
            self.l_nout.next = self.r_cpsn_lt_sent.q.val();
        }
        // The READ response's distance from the moved PSN (moved to the covered PSN, it is
        // the response's own).
        self.l_d_neg.next = false;
        self.l_d_zero.next = true;
        if self.l_moves.val() & self.l_bl_first.val() {
            self.l_d_neg.next = self.r_pf_neg.q.val();
            self.l_d_zero.next = self.r_p_eq_first.q.val();
        }
        if !self.l_moves.val() {
            self.l_d_neg.next = self.r_pc_neg.q.val();
            self.l_d_zero.next = self.r_pc_zero.q.val();
        }
        // Progress (an ACK that moves the PSN) restores the retry counters first.
        self.l_rst.next = self.r_ack.q.val() & (self.r_syn.q.val() == 0) & self.l_moves.val();
        self.l_retry_in.next = self.c_retry.q.val();
        self.l_started_in.next = self.c_started.q.val();
        if self.l_rst.val() {
            self.l_retry_in.next = self.c_aretry.q.val();
            self.l_started_in.next = 0.into();
        }

        self.l_v.next = 6.into();
        self.l_psn.next = self.c_cpsn.q.val();
        self.l_retry.next = self.c_retry.q.val();
        self.l_rnr.next = self.c_rnr.q.val();
        self.l_started.next = self.c_started.q.val();
        self.l_complete.next = false;
        self.l_fail.next = false;
        self.l_status.next = 0.into();
        self.l_rewind.next = false;
        self.l_supp.next = false;
        self.l_rnr_wait.next = false;
        self.l_timer.next = 0.into();
        self.l_do_retry.next = false;
        self.l_rearm.next = false;
        self.l_data.next = false;
        if self.r_covers.q.val() {
            if self.c_fv.q.val() & !self.c_kind.q.val().any() & self.q_last_lt_upto.q.val() {
                // A SEND or WRITE wholly covered: complete it, step again.
                self.l_v.next = 0.into();
                self.l_complete.next = true;
                self.l_retry.next = self.c_aretry.q.val();
                self.l_rnr.next = self.c_arnr.q.val();
                self.l_started.next = 0.into();
            } else {
                self.l_psn.next = self.l_npsn.val();
                if self.r_ack.q.val() {
                    if self.r_syn.q.val() == 0 {
                        self.l_v.next = 1.into();
                        self.l_rearm.next = true;
                        if self.l_rst.val() {
                            self.l_retry.next = self.c_aretry.q.val();
                            self.l_rnr.next = self.c_arnr.q.val();
                            self.l_started.next = 0.into();
                        }
                        if self.l_blocked.val() & self.q_last_lt_p.q.val() {
                            self.l_v.next = 2.into();
                            self.l_do_retry.next = true;
                        }
                    } else if self.r_syn.q.val() == 1 {
                        self.l_v.next = 4.into();
                        if !self.c_rnr.q.val().any() {
                            self.l_fail.next = true;
                            self.l_status.next = 13.into();
                        } else {
                            if self.c_rnr.q.val() != 7 {
                                self.l_rnr.next = self.c_rnr.q.val() - self.k_one3.val();
                            }
                            self.l_rnr_wait.next = true;
                            self.l_timer.next = 2.into();
                        }
                    } else if !self.r_code.q.val().any() {
                        self.l_v.next = 3.into();
                        self.l_rearm.next = true;
                        self.l_do_retry.next = true;
                    } else {
                        self.l_v.next = 5.into();
                        if self.c_fv.q.val() {
                            self.l_fail.next = true;
                            self.l_status.next = 7.into();
                            if self.r_code.q.val() == 1 {
                                self.l_status.next = 9.into();
                            }
                            if self.r_code.q.val() == 2 {
                                self.l_status.next = 10.into();
                            }
                            if self.r_code.q.val() == 3 {
                                self.l_status.next = 11.into();
                            }
                        }
                    }
                } else if self.r_atom.q.val() {
                    self.l_rearm.next = true;
                    if self.c_fv.q.val() & (self.c_kind.q.val() == 2) & self.r_p_eq_first.q.val() {
                        self.l_v.next = 10.into();
                        self.l_data.next = true;
                        self.l_complete.next = true;
                    }
                } else {
                    self.l_rearm.next = true;
                    if self.c_fv.q.val()
                        & (self.c_kind.q.val() == 1)
                        & !self.r_pf_neg.q.val()
                        & !self.q_last_lt_p.q.val()
                        & !self.l_d_neg.val()
                    {
                        if !self.l_d_zero.val() {
                            self.l_v.next = 8.into();
                            self.l_do_retry.next = true;
                        } else if self.q_p_eq_last.q.val() {
                            if self.r_rd_lo.q.val() & self.q_len_last_ok.q.val() {
                                self.l_v.next = 7.into();
                                self.l_data.next = true;
                                self.l_complete.next = true;
                            } else {
                                self.l_v.next = 9.into();
                                self.l_fail.next = true;
                                self.l_status.next = 7.into();
                            }
                        } else if self.r_rd_fm.q.val() & self.q_len_mid_ok.q.val() {
                            self.l_v.next = 7.into();
                            self.l_data.next = true;
                        } else {
                            self.l_v.next = 9.into();
                            self.l_fail.next = true;
                            self.l_status.next = 7.into();
                        }
                    }
                }
            }
        }
        // Data placed: the PSN moves past the response and the counters are restored.
        if self.l_data.val() {
            self.l_psn.next = self.r_p1.q.val();
            self.l_retry.next = self.c_aretry.q.val();
            self.l_rnr.next = self.c_arnr.q.val();
            self.l_started.next = 0.into();
        }
        // A retry: at most one under way; RETRY_CNT runs out into an error; the requester
        // goes back only when something is outstanding.
        if self.l_do_retry.val() {
            if self.l_started_in.val().any() {
                self.l_supp.next = true;
            } else if !self.l_retry_in.val().any() {
                self.l_fail.next = true;
                self.l_status.next = 12.into();
            } else {
                if self.l_retry_in.val() != 7 {
                    self.l_retry.next = self.l_retry_in.val() - self.k_one3.val();
                }
                if self.l_nout.val() {
                    self.l_started.next = 1.into();
                    self.l_rewind.next = true;
                }
            }
        }
        // The ACK timer after progress: restarted while something is outstanding.
        if self.l_rearm.val() & !self.l_fail.val() {
            if self.l_data.val() {
                if self.q_p1_ne_cpsn.q.val() | self.c_done.q.val() | self.l_complete.val() {
                    self.l_timer.next = 2.into();
                    if self.q_p1_lt_sent.q.val() {
                        self.l_timer.next = 1.into();
                    }
                }
            } else if self.l_moves.val() | self.c_done.q.val() {
                self.l_timer.next = 2.into();
                if self.l_nout.val() {
                    self.l_timer.next = 1.into();
                }
            }
        }
        self.v_verdict.d.next = self.l_v.val();
        self.v_psn.d.next = self.l_psn.val();
        self.v_retry.d.next = self.l_retry.val();
        self.v_rnr.d.next = self.l_rnr.val();
        self.v_started.d.next = self.l_started.val();
        self.v_complete.d.next = self.l_complete.val();
        self.v_fail.d.next = self.l_fail.val();
        self.v_status.d.next = self.l_status.val();
        self.v_rewind.d.next = self.l_rewind.val();
        self.v_supp.d.next = self.l_supp.val();
        self.v_rnr_wait.d.next = self.l_rnr_wait.val();
        self.v_timer.d.next = self.l_timer.val();

        self.cs_out.psn.next = self.v_psn.q.val();
        self.cs_out.retry.next = self.v_retry.q.val();
        self.cs_out.rnr.next = self.v_rnr.q.val();
        self.cs_out.started.next = self.v_started.q.val();
        self.m_verdict.next = self.v_verdict.q.val();
        self.m_state.next = self.cs_out.word.val();
        self.m_complete.next = self.v_complete.q.val();
        self.m_fail.next = self.v_fail.q.val();
        self.m_status.next = self.v_status.q.val();
        self.m_rewind.next = self.v_rewind.q.val();
        self.m_suppressed.next = self.v_supp.q.val();
        self.m_rnr_wait.next = self.v_rnr_wait.q.val();
        self.m_timer.next = self.v_timer.q.val();
        self.m_offset.next = self.r_off.q.val();
    }
}
