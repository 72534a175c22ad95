//! The responder's decision about an RC request: the transport model's `resp_check` in
//! hardware. A request's transport header, its QP's attribute row, the responder state row,
//! the memory region row of the key it names (RETH or AtomicETH; any row when it names none)
//! and whether a receive WQE is ready go in together; a verdict code (the model's `Check`)
//! and the device address of the request's VA in that region come out, three clocks later:
//!
//! 1. PSN distance, opcode decode, the sequence check, sums for the bounds (`va + len`,
//!    the region's end, `va - region.va`) and the key, PD and rights compares;
//! 2. length compares against the path MTU, the bounds verdict, the device address;
//! 3. the verdicts in the model's order (the highest-priority refusal wins).
//!
//! One request at a time (`s_ready` while idle); a request header comes once per frame, and
//! the shortest request frame gives ten clocks. Fields come out of the rows by their layouts
//! ([`crate::field_split`]); `A` is log2 of the memory region rows (a key's index beyond them
//! is a bad key).

use rust_hdl::prelude::*;

use crate::field_split;
use crate::row_table::{MR_BITS, QP_BITS, RS_BITS, mr_offset_of, qp_offset_of, rs_offset_of};
use crate::transport_header::{TH_BITS, th_offset_of};

field_split!(
    /// The transport header fields the check reads.
    ThFields, TH_BITS, th_offset_of, {
        op: 8 => "OpCode",
        psn: 24 => "PSN",
        len: 16 => "payload_len",
        va: 64 => "ext_va",
        key: 32 => "ext_key",
        mid: 64 => "ext_mid",
    }
);

field_split!(
    /// The QP attribute fields the check reads.
    QpFields, QP_BITS, qp_offset_of, {
        access: 4 => "ACCESS",
        pd: 16 => "PD",
        mtu: 3 => "PATH_MTU",
        mdra: 5 => "MAX_DEST_RD_ATOMIC",
    }
);

field_split!(
    /// The memory region fields the check reads.
    MrFields, MR_BITS, mr_offset_of, {
        valid: 1 => "VALID",
        tag: 8 => "KEY_TAG",
        pd: 16 => "PD",
        access: 4 => "ACCESS",
        va: 64 => "VA",
        length: 64 => "LENGTH",
        base: 64 => "DMA_BASE",
    }
);

field_split!(
    /// The responder state fields the check reads.
    RsFields, RS_BITS, rs_offset_of, {
        epsn: 24 => "EPSN",
        sent_nak: 1 => "SENT_NAK",
        open: 2 => "OPEN",
        resid: 32 => "WR_RESID",
    }
);

/// Clocks from a request taken to its verdict valid.
pub const LATENCY: usize = 4;

#[derive(LogicBlock)]
pub struct RespCheck<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_valid: Signal<In, Bit>,
    pub s_ready: Signal<Out, Bit>,
    /// The request's transport header.
    pub s_hdr: Signal<In, Bits<TH_BITS>>,
    /// Its QP's attribute row.
    pub s_qp: Signal<In, Bits<QP_BITS>>,
    /// The memory region row of the key the request names.
    pub s_mr: Signal<In, Bits<MR_BITS>>,
    /// The QP's responder state row.
    pub s_state: Signal<In, Bits<RS_BITS>>,
    /// A receive WQE is in use or posted.
    pub s_wqe_ready: Signal<In, Bit>,
    pub m_valid: Signal<Out, Bit>,
    pub m_ready: Signal<In, Bit>,
    /// The model's `Check` code.
    pub m_verdict: Signal<Out, Bits<4>>,
    /// The device address of the request's VA in the region (`base + va - region.va`).
    pub m_addr: Signal<Out, Bits<64>>,
    /// The region row grants the request's access over its range (R_Key, PD, right, bounds),
    /// whatever the verdict: a duplicate READ is answered again only where it would be now.
    pub m_mr_ok: Signal<Out, Bit>,

    th: ThFields,
    qp: QpFields,
    mr: MrFields,
    rs: RsFields,
    /// 0 idle, 1-3 the stages, 4 the verdict is out.
    st: DFF<Bits<3>>,
    // ---- Stage 0: the request, captured when taken (stable until the next).
    c_op: DFF<Bits<8>>,
    c_psn: DFF<Bits<24>>,
    c_len: DFF<Bits<16>>,
    c_va: DFF<Bits<64>>,
    c_key: DFF<Bits<32>>,
    c_dlen: DFF<Bits<32>>,
    c_acc: DFF<Bits<4>>,
    c_pd: DFF<Bits<16>>,
    c_mtu: DFF<Bits<3>>,
    c_mdra: DFF<Bits<5>>,
    c_mvalid: DFF<Bit>,
    c_mtag: DFF<Bits<8>>,
    c_mpd: DFF<Bits<16>>,
    c_macc: DFF<Bits<4>>,
    c_mva: DFF<Bits<64>>,
    c_mlen: DFF<Bits<64>>,
    c_mbase: DFF<Bits<64>>,
    c_epsn: DFF<Bits<24>>,
    c_nak: DFF<Bit>,
    c_open: DFF<Bits<2>>,
    c_resid: DFF<Bits<32>>,
    c_wqe: DFF<Bit>,
    // ---- Stage 1 (from stage 0's registers).
    r_ahead: DFF<Bit>,
    r_behind: DFF<Bit>,
    r_first: DFF<Bit>,
    r_mid: DFF<Bit>,
    r_last: DFF<Bit>,
    r_only: DFF<Bit>,
    r_write: DFF<Bit>,
    r_atomic: DFF<Bit>,
    r_rd_atomic: DFF<Bit>,
    r_has_reth: DFF<Bit>,
    r_needs_wqe: DFF<Bit>,
    r_seq_ok: DFF<Bit>,
    r_qp_right: DFF<Bit>,
    r_mr_right: DFF<Bit>,
    r_key_ok: DFF<Bit>,
    r_pd_ok: DFF<Bit>,
    r_mdra_zero: DFF<Bit>,
    r_dlen_big: DFF<Bit>,
    r_dlen_zero: DFF<Bit>,
    r_unaligned: DFF<Bit>,
    r_len_zero: DFF<Bit>,
    r_len_eq_dlen: DFF<Bit>,
    r_len_gt_resid: DFF<Bit>,
    r_len_eq_resid: DFF<Bit>,
    r_mtu: DFF<Bits<32>>,
    r_end: DFF<Bits<65>>,
    r_mend: DFF<Bits<65>>,
    r_off: DFF<Bits<64>>,
    r_va_below: DFF<Bit>,
    // ---- Stage 2.
    q_len_le_mtu: DFF<Bit>,
    q_len_eq_mtu: DFF<Bit>,
    q_dlen_gt_mtu: DFF<Bit>,
    q_in_bounds: DFF<Bit>,
    q_addr: DFF<Bits<64>>,
    // ---- Stage 3.
    v_verdict: DFF<Bits<4>>,
    v_mr_ok: DFF<Bit>,
    // ---- Locals.
    d_psn: Signal<Local, Bits<24>>,
    l_first: Signal<Local, Bit>,
    l_mid: Signal<Local, Bit>,
    l_last: Signal<Local, Bit>,
    l_only: Signal<Local, Bit>,
    l_write: Signal<Local, Bit>,
    l_send: Signal<Local, Bit>,
    l_read: Signal<Local, Bit>,
    l_atomic: Signal<Local, Bit>,
    l_need: Signal<Local, Bits<4>>,
    l_olen: Signal<Local, Bits<32>>,
    l_len32: Signal<Local, Bits<32>>,
    l_len_ok: Signal<Local, Bit>,
    l_fits: Signal<Local, Bit>,
    l_mr_bad: Signal<Local, Bit>,
    l_mr_code: Signal<Local, Bits<4>>,
    l_resid_bad: Signal<Local, Bit>,
    l_v: Signal<Local, Bits<4>>,
    take: Signal<Local, Bit>,
    /// Key bits above the table's index: a key with any of them set names no row.
    k_key_hi: Constant<Bits<32>>,
    k_eight: Constant<Bits<32>>,
    k_dlen_max: Constant<Bits<32>>,
    k_mtu256: Constant<Bits<32>>,
    k_mtu512: Constant<Bits<32>>,
    k_mtu1024: Constant<Bits<32>>,
    k_mtu2048: Constant<Bits<32>>,
    k_mtu4096: Constant<Bits<32>>,
    k_one3: Constant<Bits<3>>,
}

impl<const A: usize> Default for RespCheck<A> {
    fn default() -> Self {
        assert!(A <= 24, "a key has 24 index bits");
        RespCheck {
            clock: Default::default(),
            reset: Default::default(),
            s_valid: Default::default(),
            s_ready: Default::default(),
            s_hdr: Default::default(),
            s_qp: Default::default(),
            s_mr: Default::default(),
            s_state: Default::default(),
            s_wqe_ready: Default::default(),
            m_valid: Default::default(),
            m_ready: Default::default(),
            m_verdict: Default::default(),
            m_addr: Default::default(),
            m_mr_ok: Default::default(),
            th: Default::default(),
            qp: Default::default(),
            mr: Default::default(),
            rs: Default::default(),
            st: Default::default(),
            c_op: Default::default(),
            c_psn: Default::default(),
            c_len: Default::default(),
            c_va: Default::default(),
            c_key: Default::default(),
            c_dlen: Default::default(),
            c_acc: Default::default(),
            c_pd: Default::default(),
            c_mtu: Default::default(),
            c_mdra: Default::default(),
            c_mvalid: Default::default(),
            c_mtag: Default::default(),
            c_mpd: Default::default(),
            c_macc: Default::default(),
            c_mva: Default::default(),
            c_mlen: Default::default(),
            c_mbase: Default::default(),
            c_epsn: Default::default(),
            c_nak: Default::default(),
            c_open: Default::default(),
            c_resid: Default::default(),
            c_wqe: Default::default(),
            r_ahead: Default::default(),
            r_behind: Default::default(),
            r_first: Default::default(),
            r_mid: Default::default(),
            r_last: Default::default(),
            r_only: Default::default(),
            r_write: Default::default(),
            r_atomic: Default::default(),
            r_rd_atomic: Default::default(),
            r_has_reth: Default::default(),
            r_needs_wqe: Default::default(),
            r_seq_ok: Default::default(),
            r_qp_right: Default::default(),
            r_mr_right: Default::default(),
            r_key_ok: Default::default(),
            r_pd_ok: Default::default(),
            r_mdra_zero: Default::default(),
            r_dlen_big: Default::default(),
            r_dlen_zero: Default::default(),
            r_unaligned: Default::default(),
            r_len_zero: Default::default(),
            r_len_eq_dlen: Default::default(),
            r_len_gt_resid: Default::default(),
            r_len_eq_resid: Default::default(),
            r_mtu: Default::default(),
            r_end: Default::default(),
            r_mend: Default::default(),
            r_off: Default::default(),
            r_va_below: Default::default(),
            q_len_le_mtu: Default::default(),
            q_len_eq_mtu: Default::default(),
            q_dlen_gt_mtu: Default::default(),
            q_in_bounds: Default::default(),
            q_addr: Default::default(),
            v_verdict: Default::default(),
            v_mr_ok: Default::default(),
            d_psn: Default::default(),
            l_first: Default::default(),
            l_mid: Default::default(),
            l_last: Default::default(),
            l_only: Default::default(),
            l_write: Default::default(),
            l_send: Default::default(),
            l_read: Default::default(),
            l_atomic: Default::default(),
            l_need: Default::default(),
            l_olen: Default::default(),
            l_len32: Default::default(),
            l_len_ok: Default::default(),
            l_fits: Default::default(),
            l_mr_bad: Default::default(),
            l_mr_code: Default::default(),
            l_resid_bad: Default::default(),
            l_v: Default::default(),
            take: Default::default(),
            k_key_hi: Constant::new(bits::<32>((0xFFFF_FFFFu64 << (8 + A)) & 0xFFFF_FFFF)),
            k_eight: Constant::new(bits::<32>(8)),
            k_dlen_max: Constant::new(bits::<32>(1 << 31)),
            k_mtu256: Constant::new(bits::<32>(256)),
            k_mtu512: Constant::new(bits::<32>(512)),
            k_mtu1024: Constant::new(bits::<32>(1024)),
            k_mtu2048: Constant::new(bits::<32>(2048)),
            k_mtu4096: Constant::new(bits::<32>(4096)),
            k_one3: Constant::new(bits::<3>(1)),
        }
    }
}

impl<const A: usize> Logic for RespCheck<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            st,
            c_op,
            c_psn,
            c_len,
            c_va,
            c_key,
            c_dlen,
            c_acc,
            c_pd,
            c_mtu,
            c_mdra,
            c_mvalid,
            c_mtag,
            c_mpd,
            c_macc,
            c_mva,
            c_mlen,
            c_mbase,
            c_epsn,
            c_nak,
            c_open,
            c_resid,
            c_wqe,
            r_ahead,
            r_behind,
            r_first,
            r_mid,
            r_last,
            r_only,
            r_write,
            r_atomic,
            r_rd_atomic,
            r_has_reth,
            r_needs_wqe,
            r_seq_ok,
            r_qp_right,
            r_mr_right,
            r_key_ok,
            r_pd_ok,
            r_mdra_zero,
            r_dlen_big,
            r_dlen_zero,
            r_unaligned,
            r_len_zero,
            r_len_eq_dlen,
            r_len_gt_resid,
            r_len_eq_resid,
            r_mtu,
            r_end,
            r_mend,
            r_off,
            r_va_below,
            q_len_le_mtu,
            q_len_eq_mtu,
            q_dlen_gt_mtu,
            q_in_bounds,
            q_addr,
            v_verdict,
            v_mr_ok
        );
        self.th.word.next = self.s_hdr.val();
        self.qp.word.next = self.s_qp.val();
        self.mr.word.next = self.s_mr.val();
        self.rs.word.next = self.s_state.val();

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
        self.c_op.d.next = self.c_op.q.val();
        self.c_psn.d.next = self.c_psn.q.val();
        self.c_len.d.next = self.c_len.q.val();
        self.c_va.d.next = self.c_va.q.val();
        self.c_key.d.next = self.c_key.q.val();
        self.c_dlen.d.next = self.c_dlen.q.val();
        self.c_acc.d.next = self.c_acc.q.val();
        self.c_pd.d.next = self.c_pd.q.val();
        self.c_mtu.d.next = self.c_mtu.q.val();
        self.c_mdra.d.next = self.c_mdra.q.val();
        self.c_mvalid.d.next = self.c_mvalid.q.val();
        self.c_mtag.d.next = self.c_mtag.q.val();
        self.c_mpd.d.next = self.c_mpd.q.val();
        self.c_macc.d.next = self.c_macc.q.val();
        self.c_mva.d.next = self.c_mva.q.val();
        self.c_mlen.d.next = self.c_mlen.q.val();
        self.c_mbase.d.next = self.c_mbase.q.val();
        self.c_epsn.d.next = self.c_epsn.q.val();
        self.c_nak.d.next = self.c_nak.q.val();
        self.c_open.d.next = self.c_open.q.val();
        self.c_resid.d.next = self.c_resid.q.val();
        self.c_wqe.d.next = self.c_wqe.q.val();
        if self.take.val() {
            self.c_op.d.next = self.th.op.val();
            self.c_psn.d.next = self.th.psn.val();
            self.c_len.d.next = self.th.len.val();
            self.c_va.d.next = self.th.va.val();
            self.c_key.d.next = self.th.key.val();
            // RETH: DMALength is the low half of the middle slot.
            self.c_dlen.d.next = self.th.mid.val().get_bits::<32>(0);
            self.c_acc.d.next = self.qp.access.val();
            self.c_pd.d.next = self.qp.pd.val();
            self.c_mtu.d.next = self.qp.mtu.val();
            self.c_mdra.d.next = self.qp.mdra.val();
            self.c_mvalid.d.next = self.mr.valid.val().any();
            self.c_mtag.d.next = self.mr.tag.val();
            self.c_mpd.d.next = self.mr.pd.val();
            self.c_macc.d.next = self.mr.access.val();
            self.c_mva.d.next = self.mr.va.val();
            self.c_mlen.d.next = self.mr.length.val();
            self.c_mbase.d.next = self.mr.base.val();
            self.c_epsn.d.next = self.rs.epsn.val();
            self.c_nak.d.next = self.rs.sent_nak.val().any();
            self.c_open.d.next = self.rs.open.val();
            self.c_resid.d.next = self.rs.resid.val();
            self.c_wqe.d.next = self.s_wqe_ready.val();
        }

        // ---- Stage 1: from the captured request (stable from the clock after the take).
        self.d_psn.next = self.c_psn.q.val() - self.c_epsn.q.val();
        self.r_behind.d.next = self.d_psn.val().get_bit(23);
        self.r_ahead.d.next = !self.d_psn.val().get_bit(23) & self.d_psn.val().any();
        // Opcode decode: SEND 0x00-0x05, 0x16, 0x17; WRITE 0x06-0x0B; READ 0x0C; atomics
        // 0x13, 0x14.
        self.l_send.next = (self.c_op.q.val() == 0)
            | (self.c_op.q.val() == 1)
            | (self.c_op.q.val() == 2)
            | (self.c_op.q.val() == 3)
            | (self.c_op.q.val() == 4)
            | (self.c_op.q.val() == 5)
            | (self.c_op.q.val() == 22)
            | (self.c_op.q.val() == 23);
        self.l_write.next = (self.c_op.q.val() == 6)
            | (self.c_op.q.val() == 7)
            | (self.c_op.q.val() == 8)
            | (self.c_op.q.val() == 9)
            | (self.c_op.q.val() == 10)
            | (self.c_op.q.val() == 11);
        self.l_first.next = (self.c_op.q.val() == 0) | (self.c_op.q.val() == 6);
        self.l_mid.next = (self.c_op.q.val() == 1) | (self.c_op.q.val() == 7);
        self.l_last.next = (self.c_op.q.val() == 2)
            | (self.c_op.q.val() == 3)
            | (self.c_op.q.val() == 22)
            | (self.c_op.q.val() == 8)
            | (self.c_op.q.val() == 9);
        self.l_only.next = (self.c_op.q.val() == 4)
            | (self.c_op.q.val() == 5)
            | (self.c_op.q.val() == 23)
            | (self.c_op.q.val() == 10)
            | (self.c_op.q.val() == 11);
        self.l_read.next = self.c_op.q.val() == 12;
        self.l_atomic.next = (self.c_op.q.val() == 19) | (self.c_op.q.val() == 20);
        self.l_need.next = 0.into();
        if self.l_write.val() {
            self.l_need.next = 2.into();
        }
        if self.l_read.val() {
            self.l_need.next = 4.into();
        }
        if self.l_atomic.val() {
            self.l_need.next = 8.into();
        }
        self.r_first.d.next = self.l_first.val();
        self.r_mid.d.next = self.l_mid.val();
        self.r_last.d.next = self.l_last.val();
        self.r_only.d.next = self.l_only.val();
        self.r_write.d.next = self.l_write.val();
        self.r_atomic.d.next = self.l_atomic.val();
        self.r_rd_atomic.d.next = self.l_read.val() | self.l_atomic.val();
        self.r_has_reth.d.next = (self.c_op.q.val() == 6)
            | (self.c_op.q.val() == 10)
            | (self.c_op.q.val() == 11)
            | (self.c_op.q.val() == 12);
        self.r_needs_wqe.d.next = (self.l_send.val() & (self.l_first.val() | self.l_only.val()))
            | (self.c_op.q.val() == 9)
            | (self.c_op.q.val() == 11);
        // Open message: 0 none, 1 SEND, 2 WRITE.
        self.r_seq_ok.d.next = ((self.c_open.q.val() == 1)
            & self.l_send.val()
            & (self.l_mid.val() | self.l_last.val()))
            | ((self.c_open.q.val() == 2)
                & self.l_write.val()
                & (self.l_mid.val() | self.l_last.val()))
            | ((self.c_open.q.val() == 0) & (self.l_first.val() | self.l_only.val()))
            | ((self.c_open.q.val() == 0) & !self.l_send.val() & !self.l_write.val());
        self.r_qp_right.d.next = (self.c_acc.q.val() & self.l_need.val()) == self.l_need.val();
        self.r_mr_right.d.next = (self.c_macc.q.val() & self.l_need.val()) == self.l_need.val();
        self.r_key_ok.d.next = self.c_mvalid.q.val()
            & (self.c_mtag.q.val() == self.c_key.q.val().get_bits::<8>(0))
            & !(self.c_key.q.val() & self.k_key_hi.val()).any();
        self.r_pd_ok.d.next = self.c_mpd.q.val() == self.c_pd.q.val();
        self.r_mdra_zero.d.next = !self.c_mdra.q.val().any();
        self.r_dlen_big.d.next = self.c_dlen.q.val() > self.k_dlen_max.val();
        self.r_dlen_zero.d.next = !self.c_dlen.q.val().any();
        self.r_unaligned.d.next = self.c_va.q.val().get_bits::<3>(0).any();
        self.l_len32.next = bit_cast::<32, 16>(self.c_len.q.val());
        self.r_len_zero.d.next = !self.c_len.q.val().any();
        self.r_len_eq_dlen.d.next = self.l_len32.val() == self.c_dlen.q.val();
        self.r_len_gt_resid.d.next = self.l_len32.val() > self.c_resid.q.val();
        self.r_len_eq_resid.d.next = self.l_len32.val() == self.c_resid.q.val();
        // ibv_mtu codes 1-5: 256 ... 4096.
        self.r_mtu.d.next = 0.into();
        if self.c_mtu.q.val() == 1 {
            self.r_mtu.d.next = self.k_mtu256.val();
        }
        if self.c_mtu.q.val() == 2 {
            self.r_mtu.d.next = self.k_mtu512.val();
        }
        if self.c_mtu.q.val() == 3 {
            self.r_mtu.d.next = self.k_mtu1024.val();
        }
        if self.c_mtu.q.val() == 4 {
            self.r_mtu.d.next = self.k_mtu2048.val();
        }
        if self.c_mtu.q.val() == 5 {
            self.r_mtu.d.next = self.k_mtu4096.val();
        }
        // Bounds: [va, va + len) inside [mr.va, mr.va + mr.len), sums at 65 bits so that
        // an overflowing range is out of bounds; an atomic's range is 8 bytes.
        self.l_olen.next = self.c_dlen.q.val();
        if self.l_atomic.val() {
            self.l_olen.next = self.k_eight.val();
        }
        self.r_end.d.next =
            bit_cast::<65, 64>(self.c_va.q.val()) + bit_cast::<65, 32>(self.l_olen.val());
        self.r_mend.d.next =
            bit_cast::<65, 64>(self.c_mva.q.val()) + bit_cast::<65, 64>(self.c_mlen.q.val());
        self.r_off.d.next = self.c_va.q.val() - self.c_mva.q.val();
        self.r_va_below.d.next = self.c_va.q.val() < self.c_mva.q.val();

        // ---- Stage 2.
        self.q_len_le_mtu.d.next = self.l_len32.val() <= self.r_mtu.q.val();
        self.q_len_eq_mtu.d.next = self.l_len32.val() == self.r_mtu.q.val();
        self.q_dlen_gt_mtu.d.next = self.c_dlen.q.val() > self.r_mtu.q.val();
        self.q_in_bounds.d.next =
            !self.r_va_below.q.val() & (self.r_end.q.val() <= self.r_mend.q.val());
        self.q_addr.d.next = self.c_mbase.q.val() + self.r_off.q.val();

        // ---- Stage 3: the verdict, lowest priority first (a later refusal overrides).
        self.l_len_ok.next = true;
        if self.r_only.q.val() {
            self.l_len_ok.next = self.q_len_le_mtu.q.val();
        }
        if self.r_first.q.val() | self.r_mid.q.val() {
            self.l_len_ok.next = self.q_len_eq_mtu.q.val();
        }
        if self.r_last.q.val() {
            self.l_len_ok.next = self.q_len_le_mtu.q.val() & !self.r_len_zero.q.val();
        }
        if self.r_has_reth.q.val() & self.r_dlen_big.q.val() {
            self.l_len_ok.next = false;
        }
        self.l_fits.next = self.q_dlen_gt_mtu.q.val();
        if self.r_only.q.val() {
            self.l_fits.next = self.r_len_eq_dlen.q.val();
        }
        self.l_mr_bad.next = !self.r_key_ok.q.val()
            | !self.r_pd_ok.q.val()
            | !self.r_mr_right.q.val()
            | !self.q_in_bounds.q.val();
        self.l_mr_code.next = 12.into();
        if !self.r_mr_right.q.val() {
            self.l_mr_code.next = 11.into();
        }
        if !self.r_pd_ok.q.val() {
            self.l_mr_code.next = 10.into();
        }
        if !self.r_key_ok.q.val() {
            self.l_mr_code.next = 9.into();
        }
        self.l_resid_bad.next =
            self.r_len_gt_resid.q.val() | (self.r_last.q.val() & !self.r_len_eq_resid.q.val());

        self.l_v.next = 0.into();
        if self.r_write.q.val()
            & (self.r_mid.q.val() | self.r_last.q.val())
            & self.l_resid_bad.val()
        {
            self.l_v.next = 15.into();
        }
        if self.r_atomic.q.val() & self.l_mr_bad.val() {
            self.l_v.next = self.l_mr_code.val();
        }
        if self.r_atomic.q.val() & self.r_unaligned.q.val() {
            self.l_v.next = 14.into();
        }
        if self.r_write.q.val() & self.r_has_reth.q.val() & !self.l_fits.val() {
            self.l_v.next = 13.into();
        }
        if self.r_has_reth.q.val() & !self.r_dlen_zero.q.val() & self.l_mr_bad.val() {
            self.l_v.next = self.l_mr_code.val();
        }
        if !self.l_len_ok.val() {
            self.l_v.next = 8.into();
        }
        if self.r_needs_wqe.q.val() & !self.c_wqe.q.val() {
            self.l_v.next = 4.into();
        }
        if self.r_rd_atomic.q.val() & self.r_mdra_zero.q.val() {
            self.l_v.next = 7.into();
        }
        if !self.r_qp_right.q.val() {
            self.l_v.next = 6.into();
        }
        if !self.r_seq_ok.q.val() {
            self.l_v.next = 5.into();
        }
        if self.r_behind.q.val() {
            self.l_v.next = 3.into();
        }
        if self.r_ahead.q.val() {
            self.l_v.next = 1.into();
            if self.c_nak.q.val() {
                self.l_v.next = 2.into();
            }
        }
        self.v_verdict.d.next = self.l_v.val();
        self.v_mr_ok.d.next = !self.l_mr_bad.val();
        self.m_verdict.next = self.v_verdict.q.val();
        self.m_mr_ok.next = self.v_mr_ok.q.val();
        self.m_addr.next = self.q_addr.q.val();
    }
}
