//! The requester's segmentation: one packet of an RC send work request, as the transport
//! model's requester sends it. A work request (the `send_wqe`'s fixed part, its message length,
//! the QP's attribute row) and a position in it (the request's first PSN, the packet index `k`,
//! the packets sent since the last AckReq) go in; the packet's send descriptor (a transport
//! header) and what the requester does with it come out, four clocks later:
//!
//! - SEND and RDMA WRITE: packet `k` of `max(1, ceil(len / MTU))` carries the message's bytes
//!   from `k * MTU` (`m_off`, `m_take`); FIRST, MIDDLE, LAST or ONLY; a WRITE's FIRST or
//!   ONLY has the RETH (the remote address, R_Key and the whole length), a LAST or ONLY
//!   with immediate its ImmDt; SE on a SEND's last packet when the request is SOLICITED;
//! - RDMA READ: one READ request per call, for the responses from `k` on (the RETH's VA
//!   moved by `k * MTU`, its length what is left), taking the PSNs of all those responses
//!   (`m_span`), so a retry resumes a partly answered READ;
//! - CompareSwap and FetchAdd: the AtomicETH (swap and compare, or the addend);
//! - AckReq on the message's last packet, on READs and atomics, and whenever `ack_every`
//!   packets have gone without one (`m_next_noack` is the count after this packet).
//!
//! Go-back-N resends from any packet: the caller gives the `k` of the PSN to resend (the
//! completer's rewind) and a zero AckReq count, as the model does. `m_last` says the request is
//! fully sent with this packet (its last packet, or any READ or atomic), `m_npkts` how many PSNs
//! the whole request takes, and `m_bad` that the position or the request cannot be sent (an
//! opcode other than ibverbs' 0-6, a path MTU code outside 1-5, `k` past the request's end);
//! the descriptor is then not to be sent. The message length is at most 2^31 (the verbs layer
//! refuses longer), so `k * MTU` fits 32 bits for every `k` inside the request.
//!
//! One request at a time (`s_ready` while idle): a packet takes at least eight beats on the
//! wire, so four clocks of decision cost nothing. Stages, one adder level each (rule 15):
//!
//! 1. the opcode and MTU decoded; `k * MTU`, `len + MTU - 1`, the PSN, `k + 1`, the count + 1;
//! 2. the packet count `ceil(len / MTU)`, the last-packet and in-range compares, the bytes left
//!    (`len - k * MTU`), the READ's VA, the count compare;
//! 3. the payload length, the opcode by position, AckReq, the extension slots.
//!
//! UD sends are not segmented here (one packet, a DETH; the UD path will build it).

use rust_hdl::prelude::*;

use crate::row_table::{QP_BITS, qp_offset_of, row_offset_of};
use crate::transport_header::{TH_BITS, th_offset_of};
use crate::{field_join, field_split};

/// Bits of a send work request's fixed part (the bytes before its scatter/gather entries).
pub const SWQE_BITS: usize = 8 * rnic_regmap::desc::SEND_WQE.sge.unwrap().0 as usize;

/// `(offset, width)` of field `name` in a send work request's fixed part.
pub fn swqe_offset_of(name: &str) -> Option<(usize, usize)> {
    row_offset_of(&rnic_regmap::desc::SEND_WQE, name)
}

/// Clocks from a request taken to its packet valid.
pub const LATENCY: usize = 4;

field_split!(
    /// The work request fields segmentation reads.
    WqeFields, SWQE_BITS, swqe_offset_of, {
        op: 8 => "OPCODE",
        flags: 8 => "FLAGS",
        imm: 32 => "IMM",
        raddr: 64 => "REMOTE_ADDR",
        rkey: 32 => "RKEY",
        cmp_add: 64 => "COMPARE_ADD",
        swap: 64 => "SWAP",
    }
);

field_split!(
    /// The QP attributes segmentation reads.
    SegQpFields, QP_BITS, qp_offset_of, {
        mtu: 3 => "PATH_MTU",
        dest: 24 => "DEST_QPN",
        pkey: 16 => "PKEY",
    }
);

field_join!(
    /// A request packet as a send descriptor.
    ReqJoin, TH_BITS, th_offset_of, {
        op: 8 => "OpCode",
        se: 1 => "SE",
        pkey: 16 => "P_Key",
        dqp: 24 => "DestQP",
        ack: 1 => "AckReq",
        psn: 24 => "PSN",
        len: 16 => "payload_len",
        va: 64 => "ext_va",
        key: 32 => "ext_key",
        mid: 64 => "ext_mid",
        cmp: 64 => "ext_cmp",
    }
);

#[derive(LogicBlock)]
pub struct ReqSegment {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_valid: Signal<In, Bit>,
    pub s_ready: Signal<Out, Bit>,
    /// The work request's fixed part (byte 0 in bits 7:0).
    pub s_wqe: Signal<In, Bits<SWQE_BITS>>,
    /// Its message length: the sum of its scatter/gather entries' lengths.
    pub s_len: Signal<In, Bits<32>>,
    /// The QP's attribute row.
    pub s_qp: Signal<In, Bits<QP_BITS>>,
    /// The request's first PSN, the packet to send, and the packets sent since an AckReq.
    pub s_first_psn: Signal<In, Bits<24>>,
    pub s_pkt: Signal<In, Bits<24>>,
    pub s_noack: Signal<In, Bits<8>>,
    /// AckReq at least every this many packets (the model's `ack_every`; 0 or 1: on every one).
    pub ack_every: Signal<In, Bits<8>>,
    pub m_valid: Signal<Out, Bit>,
    pub m_ready: Signal<In, Bit>,
    /// The packet's send descriptor (P_Key and destination QP from the QP's row).
    pub m_desc: Signal<Out, Bits<TH_BITS>>,
    /// Where its payload starts in the message, and its length.
    pub m_off: Signal<Out, Bits<32>>,
    pub m_take: Signal<Out, Bits<16>>,
    /// The request is fully sent with this packet.
    pub m_last: Signal<Out, Bit>,
    /// PSNs the whole request takes; PSNs this packet takes (a READ's: its responses').
    pub m_npkts: Signal<Out, Bits<24>>,
    pub m_span: Signal<Out, Bits<24>>,
    /// Packets since an AckReq after this one.
    pub m_next_noack: Signal<Out, Bits<8>>,
    /// The request or the position cannot be sent.
    pub m_bad: Signal<Out, Bit>,

    wqe: WqeFields,
    qp: SegQpFields,
    out: ReqJoin,
    /// 0 idle, 1-3 the stages, 4 the packet is out.
    st: DFF<Bits<3>>,
    // ---- Stage 0: captured when taken (stable until the next).
    c_op: DFF<Bits<8>>,
    c_flags: DFF<Bits<8>>,
    c_imm: DFF<Bits<32>>,
    c_raddr: DFF<Bits<64>>,
    c_rkey: DFF<Bits<32>>,
    c_cmp: DFF<Bits<64>>,
    c_swap: DFF<Bits<64>>,
    c_len: DFF<Bits<32>>,
    c_mtu: DFF<Bits<3>>,
    c_dest: DFF<Bits<24>>,
    c_pkey: DFF<Bits<16>>,
    c_first: DFF<Bits<24>>,
    c_pkt: DFF<Bits<24>>,
    c_noack: DFF<Bits<8>>,
    c_every: DFF<Bits<8>>,
    // ---- Stage 1.
    r_write: DFF<Bit>,
    r_send: DFF<Bit>,
    r_imm: DFF<Bit>,
    r_read: DFF<Bit>,
    r_cas: DFF<Bit>,
    r_faa: DFF<Bit>,
    r_op_bad: DFF<Bit>,
    r_mtu_bad: DFF<Bit>,
    r_mtu: DFF<Bits<16>>,
    r_off: DFF<Bits<32>>,
    r_npk: DFF<Bits<24>>,
    r_psn: DFF<Bits<24>>,
    r_k1: DFF<Bits<24>>,
    r_kzero: DFF<Bit>,
    r_noack1: DFF<Bits<9>>,
    // ---- Stage 2.
    q_npkts: DFF<Bits<24>>,
    q_last: DFF<Bit>,
    q_in: DFF<Bit>,
    q_rem: DFF<Bits<32>>,
    q_span: DFF<Bits<24>>,
    q_va: DFF<Bits<64>>,
    q_ack_due: DFF<Bit>,
    // ---- Stage 3: the outputs.
    o_op: DFF<Bits<8>>,
    o_se: DFF<Bit>,
    o_ack: DFF<Bit>,
    o_len: DFF<Bits<16>>,
    o_va: DFF<Bits<64>>,
    o_key: DFF<Bits<32>>,
    o_mid: DFF<Bits<64>>,
    o_cmp: DFF<Bits<64>>,
    o_last: DFF<Bit>,
    o_noack: DFF<Bits<8>>,
    o_bad: DFF<Bit>,
    // ---- Locals.
    take: Signal<Local, Bit>,
    l_k32: Signal<Local, Bits<32>>,
    l_len36: Signal<Local, Bits<36>>,
    l_lenp: Signal<Local, Bits<36>>,
    l_mtum1: Signal<Local, Bits<36>>,
    l_one_pkt: Signal<Local, Bit>,
    l_kmax: Signal<Local, Bits<24>>,
    l_klt: Signal<Local, Bits<25>>,
    l_rem33: Signal<Local, Bits<33>>,
    l_first: Signal<Local, Bit>,
    l_only: Signal<Local, Bit>,
    l_mid: Signal<Local, Bit>,
    l_final: Signal<Local, Bit>,
    l_rd_at: Signal<Local, Bit>,
    l_payload: Signal<Local, Bit>,
    l_take: Signal<Local, Bits<16>>,
    l_ack: Signal<Local, Bit>,
    l_noack1: Signal<Local, Bits<8>>,
    l_imm_hi: Signal<Local, Bits<64>>,
    k_one3: Constant<Bits<3>>,
    k_one9: Constant<Bits<9>>,
    k_one24: Constant<Bits<24>>,
    k_mtu256: Constant<Bits<16>>,
    k_mtu512: Constant<Bits<16>>,
    k_mtu1024: Constant<Bits<16>>,
    k_mtu2048: Constant<Bits<16>>,
    k_mtu4096: Constant<Bits<16>>,
    k_mtum1_256: Constant<Bits<36>>,
    k_mtum1_512: Constant<Bits<36>>,
    k_mtum1_1024: Constant<Bits<36>>,
    k_mtum1_2048: Constant<Bits<36>>,
    k_mtum1_4096: Constant<Bits<36>>,
}

impl Default for ReqSegment {
    fn default() -> Self {
        ReqSegment {
            clock: Default::default(),
            reset: Default::default(),
            s_valid: Default::default(),
            s_ready: Default::default(),
            s_wqe: Default::default(),
            s_len: Default::default(),
            s_qp: Default::default(),
            s_first_psn: Default::default(),
            s_pkt: Default::default(),
            s_noack: Default::default(),
            ack_every: Default::default(),
            m_valid: Default::default(),
            m_ready: Default::default(),
            m_desc: Default::default(),
            m_off: Default::default(),
            m_take: Default::default(),
            m_last: Default::default(),
            m_npkts: Default::default(),
            m_span: Default::default(),
            m_next_noack: Default::default(),
            m_bad: Default::default(),
            wqe: Default::default(),
            qp: Default::default(),
            out: Default::default(),
            st: Default::default(),
            c_op: Default::default(),
            c_flags: Default::default(),
            c_imm: Default::default(),
            c_raddr: Default::default(),
            c_rkey: Default::default(),
            c_cmp: Default::default(),
            c_swap: Default::default(),
            c_len: Default::default(),
            c_mtu: Default::default(),
            c_dest: Default::default(),
            c_pkey: Default::default(),
            c_first: Default::default(),
            c_pkt: Default::default(),
            c_noack: Default::default(),
            c_every: Default::default(),
            r_write: Default::default(),
            r_send: Default::default(),
            r_imm: Default::default(),
            r_read: Default::default(),
            r_cas: Default::default(),
            r_faa: Default::default(),
            r_op_bad: Default::default(),
            r_mtu_bad: Default::default(),
            r_mtu: Default::default(),
            r_off: Default::default(),
            r_npk: Default::default(),
            r_psn: Default::default(),
            r_k1: Default::default(),
            r_kzero: Default::default(),
            r_noack1: Default::default(),
            q_npkts: Default::default(),
            q_last: Default::default(),
            q_in: Default::default(),
            q_rem: Default::default(),
            q_span: Default::default(),
            q_va: Default::default(),
            q_ack_due: Default::default(),
            o_op: Default::default(),
            o_se: Default::default(),
            o_ack: Default::default(),
            o_len: Default::default(),
            o_va: Default::default(),
            o_key: Default::default(),
            o_mid: Default::default(),
            o_cmp: Default::default(),
            o_last: Default::default(),
            o_noack: Default::default(),
            o_bad: Default::default(),
            take: Default::default(),
            l_k32: Default::default(),
            l_len36: Default::default(),
            l_lenp: Default::default(),
            l_mtum1: Default::default(),
            l_one_pkt: Default::default(),
            l_kmax: Default::default(),
            l_klt: Default::default(),
            l_rem33: Default::default(),
            l_first: Default::default(),
            l_only: Default::default(),
            l_mid: Default::default(),
            l_final: Default::default(),
            l_rd_at: Default::default(),
            l_payload: Default::default(),
            l_take: Default::default(),
            l_ack: Default::default(),
            l_noack1: Default::default(),
            l_imm_hi: Default::default(),
            k_one3: Constant::new(bits::<3>(1)),
            k_one9: Constant::new(bits::<9>(1)),
            k_one24: Constant::new(bits::<24>(1)),
            k_mtu256: Constant::new(bits::<16>(256)),
            k_mtu512: Constant::new(bits::<16>(512)),
            k_mtu1024: Constant::new(bits::<16>(1024)),
            k_mtu2048: Constant::new(bits::<16>(2048)),
            k_mtu4096: Constant::new(bits::<16>(4096)),
            k_mtum1_256: Constant::new(bits::<36>(255)),
            k_mtum1_512: Constant::new(bits::<36>(511)),
            k_mtum1_1024: Constant::new(bits::<36>(1023)),
            k_mtum1_2048: Constant::new(bits::<36>(2047)),
            k_mtum1_4096: Constant::new(bits::<36>(4095)),
        }
    }
}

impl Logic for ReqSegment {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st, c_op, c_flags, c_imm, c_raddr, c_rkey, c_cmp, c_swap, c_len, c_mtu,
            c_dest, c_pkey, c_first, c_pkt, c_noack, c_every, r_write, r_send, r_imm, r_read,
            r_cas, r_faa, r_op_bad, r_mtu_bad, r_mtu, r_off, r_npk, r_psn, r_k1, r_kzero, r_noack1,
            q_npkts, q_last, q_in, q_rem, q_span, q_va, q_ack_due, o_op, o_se, o_ack, o_len, o_va,
            o_key, o_mid, o_cmp, o_last, o_noack, o_bad
        );
        self.wqe.word.next = self.s_wqe.val();
        self.qp.word.next = self.s_qp.val();

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
        self.c_flags.d.next = self.c_flags.q.val();
        self.c_imm.d.next = self.c_imm.q.val();
        self.c_raddr.d.next = self.c_raddr.q.val();
        self.c_rkey.d.next = self.c_rkey.q.val();
        self.c_cmp.d.next = self.c_cmp.q.val();
        self.c_swap.d.next = self.c_swap.q.val();
        self.c_len.d.next = self.c_len.q.val();
        self.c_mtu.d.next = self.c_mtu.q.val();
        self.c_dest.d.next = self.c_dest.q.val();
        self.c_pkey.d.next = self.c_pkey.q.val();
        self.c_first.d.next = self.c_first.q.val();
        self.c_pkt.d.next = self.c_pkt.q.val();
        self.c_noack.d.next = self.c_noack.q.val();
        self.c_every.d.next = self.c_every.q.val();
        if self.take.val() {
            self.c_op.d.next = self.wqe.op.val();
            self.c_flags.d.next = self.wqe.flags.val();
            self.c_imm.d.next = self.wqe.imm.val();
            self.c_raddr.d.next = self.wqe.raddr.val();
            self.c_rkey.d.next = self.wqe.rkey.val();
            self.c_cmp.d.next = self.wqe.cmp_add.val();
            self.c_swap.d.next = self.wqe.swap.val();
            self.c_len.d.next = self.s_len.val();
            self.c_mtu.d.next = self.qp.mtu.val();
            self.c_dest.d.next = self.qp.dest.val();
            self.c_pkey.d.next = self.qp.pkey.val();
            self.c_first.d.next = self.s_first_psn.val();
            self.c_pkt.d.next = self.s_pkt.val();
            self.c_noack.d.next = self.s_noack.val();
            self.c_every.d.next = self.ack_every.val();
        }

        // ---- Stage 1: decode; k * MTU and len + MTU - 1 by the MTU code.
        // ibv_wr_opcode: 0 WRITE, 1 WRITE_WITH_IMM, 2 SEND, 3 SEND_WITH_IMM, 4 READ,
        // 5 CMP_AND_SWP, 6 FETCH_AND_ADD.
        self.r_write.d.next = (self.c_op.q.val() == 0) | (self.c_op.q.val() == 1);
        self.r_send.d.next = (self.c_op.q.val() == 2) | (self.c_op.q.val() == 3);
        self.r_imm.d.next = (self.c_op.q.val() == 1) | (self.c_op.q.val() == 3);
        self.r_read.d.next = self.c_op.q.val() == 4;
        self.r_cas.d.next = self.c_op.q.val() == 5;
        self.r_faa.d.next = self.c_op.q.val() == 6;
        self.r_op_bad.d.next = self.c_op.q.val() > 6;
        self.r_mtu_bad.d.next = (self.c_mtu.q.val() == 0) | (self.c_mtu.q.val() > 5);
        self.l_k32.next = bit_cast::<32, 24>(self.c_pkt.q.val());
        self.l_len36.next = bit_cast::<36, 32>(self.c_len.q.val());
        self.r_mtu.d.next = self.k_mtu256.val();
        self.r_off.d.next = self.l_k32.val() << 8;
        self.l_mtum1.next = self.k_mtum1_256.val();
        if self.c_mtu.q.val() == 2 {
            self.r_mtu.d.next = self.k_mtu512.val();
            self.r_off.d.next = self.l_k32.val() << 9;
            self.l_mtum1.next = self.k_mtum1_512.val();
        }
        if self.c_mtu.q.val() == 3 {
            self.r_mtu.d.next = self.k_mtu1024.val();
            self.r_off.d.next = self.l_k32.val() << 10;
            self.l_mtum1.next = self.k_mtum1_1024.val();
        }
        if self.c_mtu.q.val() == 4 {
            self.r_mtu.d.next = self.k_mtu2048.val();
            self.r_off.d.next = self.l_k32.val() << 11;
            self.l_mtum1.next = self.k_mtum1_2048.val();
        }
        if self.c_mtu.q.val() == 5 {
            self.r_mtu.d.next = self.k_mtu4096.val();
            self.r_off.d.next = self.l_k32.val() << 12;
            self.l_mtum1.next = self.k_mtum1_4096.val();
        }
        self.l_lenp.next = self.l_len36.val() + self.l_mtum1.val();
        self.r_npk.d.next = self.l_lenp.val().get_bits::<24>(8);
        if self.c_mtu.q.val() == 2 {
            self.r_npk.d.next = self.l_lenp.val().get_bits::<24>(9);
        }
        if self.c_mtu.q.val() == 3 {
            self.r_npk.d.next = self.l_lenp.val().get_bits::<24>(10);
        }
        if self.c_mtu.q.val() == 4 {
            self.r_npk.d.next = self.l_lenp.val().get_bits::<24>(11);
        }
        if self.c_mtu.q.val() == 5 {
            self.r_npk.d.next = self.l_lenp.val().get_bits::<24>(12);
        }
        self.r_psn.d.next = self.c_first.q.val() + self.c_pkt.q.val();
        self.r_k1.d.next = self.c_pkt.q.val() + self.k_one24.val();
        self.r_kzero.d.next = self.c_pkt.q.val() == 0;
        self.r_noack1.d.next = bit_cast::<9, 8>(self.c_noack.q.val()) + self.k_one9.val();

        // ---- Stage 2: the packet count and where k stands in it; the bytes left.
        // An atomic, and a message of no bytes, is one packet.
        self.l_one_pkt.next = self.r_cas.q.val() | self.r_faa.q.val() | (self.r_npk.q.val() == 0);
        self.l_kmax.next = self.r_npk.q.val();
        if self.l_one_pkt.val() {
            self.l_kmax.next = self.k_one24.val();
        }
        self.q_npkts.d.next = self.l_kmax.val();
        self.q_last.d.next = self.r_k1.q.val() == self.r_npk.q.val();
        if self.l_one_pkt.val() {
            self.q_last.d.next = self.r_kzero.q.val();
        }
        // k < npkts, as the borrow of k - npkts.
        self.l_klt.next =
            bit_cast::<25, 24>(self.c_pkt.q.val()) - bit_cast::<25, 24>(self.l_kmax.val());
        self.q_in.d.next = self.l_klt.val().get_bit(24);
        self.q_span.d.next = self.l_kmax.val() - self.c_pkt.q.val();
        self.l_rem33.next =
            bit_cast::<33, 32>(self.c_len.q.val()) - bit_cast::<33, 32>(self.r_off.q.val());
        self.q_rem.d.next = self.l_rem33.val().get_bits::<32>(0);
        if self.l_rem33.val().get_bit(32) {
            self.q_rem.d.next = 0.into();
        }
        self.q_va.d.next = self.c_raddr.q.val() + bit_cast::<64, 32>(self.r_off.q.val());
        self.q_ack_due.d.next = self.r_noack1.q.val() >= bit_cast::<9, 8>(self.c_every.q.val());

        // ---- Stage 3: the packet.
        self.l_rd_at.next = self.r_read.q.val() | self.r_cas.q.val() | self.r_faa.q.val();
        self.l_payload.next = self.r_write.q.val() | self.r_send.q.val();
        self.l_first.next = self.r_kzero.q.val() & !self.q_last.q.val();
        self.l_only.next = self.r_kzero.q.val() & self.q_last.q.val();
        self.l_mid.next = !self.r_kzero.q.val() & !self.q_last.q.val();
        self.l_final.next = self.q_last.q.val() | self.l_rd_at.val();
        self.l_take.next = self.q_rem.q.val().get_bits::<16>(0);
        if self.q_rem.q.val() > bit_cast::<32, 16>(self.r_mtu.q.val()) {
            self.l_take.next = self.r_mtu.q.val();
        }
        self.l_ack.next = self.l_final.val() | self.q_ack_due.q.val();
        self.l_noack1.next = self.r_noack1.q.val().get_bits::<8>(0);
        // The immediate rides on a LAST or ONLY, in ext_mid's upper half.
        self.l_imm_hi.next = 0.into();
        if self.q_last.q.val() & self.r_imm.q.val() {
            self.l_imm_hi.next = bit_cast::<64, 32>(self.c_imm.q.val()) << 32;
        }

        self.o_op.d.next = self.o_op.q.val();
        self.o_se.d.next = self.o_se.q.val();
        self.o_ack.d.next = self.o_ack.q.val();
        self.o_len.d.next = self.o_len.q.val();
        self.o_va.d.next = self.o_va.q.val();
        self.o_key.d.next = self.o_key.q.val();
        self.o_mid.d.next = self.o_mid.q.val();
        self.o_cmp.d.next = self.o_cmp.q.val();
        self.o_last.d.next = self.o_last.q.val();
        self.o_noack.d.next = self.o_noack.q.val();
        self.o_bad.d.next = self.o_bad.q.val();
        if self.st.q.val() == 3 {
            self.o_ack.d.next = self.l_ack.val();
            self.o_noack.d.next = self.l_noack1.val();
            if self.l_ack.val() {
                self.o_noack.d.next = 0.into();
            }
            self.o_last.d.next = self.l_final.val();
            self.o_bad.d.next = self.r_op_bad.q.val() | self.r_mtu_bad.q.val() | !self.q_in.q.val();
            self.o_se.d.next =
                self.r_send.q.val() & self.q_last.q.val() & self.c_flags.q.val().get_bit(2);
            self.o_len.d.next = 0.into();
            self.o_va.d.next = 0.into();
            self.o_key.d.next = 0.into();
            self.o_cmp.d.next = 0.into();
            if self.l_payload.val() {
                self.o_len.d.next = self.l_take.val();
            }
            // SEND: 0x00 FIRST, 0x01 MIDDLE, 0x02 LAST, 0x03 LAST_IMM, 0x04 ONLY,
            // 0x05 ONLY_IMM; WRITE: the same positions from 0x06.
            self.o_op.d.next = 2.into();
            if self.l_first.val() {
                self.o_op.d.next = 0.into();
            }
            if self.l_mid.val() {
                self.o_op.d.next = 1.into();
            }
            if self.l_only.val() {
                self.o_op.d.next = 4.into();
            }
            self.o_mid.d.next = self.l_imm_hi.val();
            if self.q_last.q.val() & self.r_imm.q.val() {
                self.o_op.d.next = 3.into();
                if self.l_only.val() {
                    self.o_op.d.next = 5.into();
                }
            }
            if self.r_write.q.val() {
                self.o_op.d.next = 8.into();
                if self.l_first.val() {
                    self.o_op.d.next = 6.into();
                }
                if self.l_mid.val() {
                    self.o_op.d.next = 7.into();
                }
                if self.l_only.val() {
                    self.o_op.d.next = 10.into();
                }
                if self.q_last.q.val() & self.r_imm.q.val() {
                    self.o_op.d.next = 9.into();
                    if self.l_only.val() {
                        self.o_op.d.next = 11.into();
                    }
                }
                // The RETH on FIRST and ONLY, below the immediate of an ONLY.
                if self.r_kzero.q.val() {
                    self.o_va.d.next = self.c_raddr.q.val();
                    self.o_key.d.next = self.c_rkey.q.val();
                    self.o_mid.d.next =
                        self.l_imm_hi.val() | bit_cast::<64, 32>(self.c_len.q.val());
                }
            }
            if self.r_read.q.val() {
                self.o_op.d.next = 12.into();
                self.o_va.d.next = self.q_va.q.val();
                self.o_key.d.next = self.c_rkey.q.val();
                self.o_mid.d.next = bit_cast::<64, 32>(self.q_rem.q.val());
            }
            if self.r_cas.q.val() | self.r_faa.q.val() {
                self.o_op.d.next = 20.into();
                self.o_va.d.next = self.c_raddr.q.val();
                self.o_key.d.next = self.c_rkey.q.val();
                self.o_mid.d.next = self.c_cmp.q.val();
                if self.r_cas.q.val() {
                    self.o_op.d.next = 19.into();
                    self.o_mid.d.next = self.c_swap.q.val();
                    self.o_cmp.d.next = self.c_cmp.q.val();
                }
            }
        }

        // ---- Out.
        self.out.op.next = self.o_op.q.val();
        self.out.se.next = self.o_se.q.val().into();
        self.out.pkey.next = self.c_pkey.q.val();
        self.out.dqp.next = self.c_dest.q.val();
        self.out.ack.next = self.o_ack.q.val().into();
        self.out.psn.next = self.r_psn.q.val();
        self.out.len.next = self.o_len.q.val();
        self.out.va.next = self.o_va.q.val();
        self.out.key.next = self.o_key.q.val();
        self.out.mid.next = self.o_mid.q.val();
        self.out.cmp.next = self.o_cmp.q.val();
        self.m_desc.next = self.out.word.val();
        self.m_off.next = self.r_off.q.val();
        self.m_take.next = self.o_len.q.val();
        self.m_last.next = self.o_last.q.val();
        self.m_npkts.next = self.q_npkts.q.val();
        self.m_span.next = self.q_span.q.val();
        if !self.r_read.q.val() {
            self.m_span.next = self.k_one24.val();
        }
        self.m_next_noack.next = self.o_noack.q.val();
        self.m_bad.next = self.o_bad.q.val();
    }
}
