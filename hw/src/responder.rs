//! The RC responder: requests from the opcode demultiplexer (a transport header, then its
//! payload), the QP's attribute and memory region rows looked up in the host interface's
//! tables, its responder state row and resource slots in this engine's own block RAM, the
//! decision of [`crate::resp_check`], and then, as the transport model's responder does:
//!
//! - WRITE (FIRST, MIDDLE, LAST, ONLY): the payload written through the DMA port at the
//!   region's device address (FIRST and ONLY) or where the open WRITE left off (MIDDLE and
//!   LAST), then ePSN, the open WRITE's address and residual and, on its last packet, the MSN
//!   advanced; an ACK when AckReq is set, sent once the bytes are in host memory; WRITE LAST
//!   and ONLY with immediate complete the receive request at the ring's head
//!   (RECV_RDMA_WITH_IMM, the WRITE's length);
//! - SEND (FIRST, MIDDLE, LAST, ONLY, with immediate or invalidate): for every packet the
//!   receive request at the head of the QP's receive ring is read and its entries checked
//!   ([`crate::recv_wqe`]; the ring moves on only when a message completes, so every packet
//!   of a message finds its request there); the packet's bytes, from where the message's
//!   earlier packets left off (`WR_LEN` of the state row), go into the entries as up to three
//!   DMA writes ([`crate::payload_scatter`]); the last packet's completion (RECV, the
//!   message's length, the immediate) is handed over once the bytes are in host memory, then
//!   the request is committed. Entries the NIC may not write (first packet: remote operation
//!   NAK, LOC_QP_OP_ERR) or too short for the message (invalid request NAK, LOC_LEN_ERR) are
//!   fatal, not one byte written;
//! - READ: the MSN advanced, ePSN moved past the responses, the READ kept in a resource slot,
//!   then one response per path MTU (FIRST, MIDDLE ..., LAST, or ONLY; AETH on all but
//!   MIDDLE), each payload read through the DMA port into a frame FIFO (room reserved before
//!   the read, so the shared read data channel never waits on the transmit path), realigned
//!   from the 8-byte-aligned reads to the VA's byte, and its descriptor sent once the whole
//!   payload is in the FIFO (so a frame never waits for its payload mid-way);
//! - CompareSwap and FetchAdd: the 8 bytes read, the new value written back, the original
//!   kept in a resource slot and returned in an ATOMIC ACKNOWLEDGE once the write is done;
//! - a request ahead of ePSN: one sequence-error NAK per gap, the rest dropped;
//! - a duplicate SEND or WRITE: ACKed with ePSN - 1, not executed again; a duplicate READ
//!   inside a kept READ (and allowed by its region now) answered again from host memory from
//!   its PSN (starting with MIDDLE or LAST when it starts inside the original), the slot's VA
//!   moved to it; a duplicate atomic answered with the kept original value; one matching no
//!   slot dropped;
//! - RNR: an RNR NAK with the QP's timer code when a SEND's first packet (or a WRITE with
//!   immediate's last) finds the receive ring empty;
//! - a remote access error or invalid request: its NAK, and the QP's responder state marked
//!   in error, so that later requests are dropped; nothing is written. Then the receive ring
//!   is flushed: the request a SEND in progress was using completes with the error
//!   (REM_ACCESS_ERR, REM_INV_REQ_ERR, or the SEND's own) and the bytes it took, every other
//!   posted request with WR_FLUSH_ERR, each committed after its completion. Requests posted
//!   after that are the host's to flush (the QP is in ERR);
//! - requests for a QP beyond the table, not RC, not in RTR or RTS, or in error, and P_Keys
//!   other than the default: dropped and counted (`cnt_dropped`), their payload discarded.
//!
//! A QP keeps its newest min(MAX_DEST_RD_ATOMIC, 2^(R - A)) READs and atomics: the slots
//! per QP, 1 to 16, are the device's `max_qp_rd_atom` (the model keeps MAX_DEST_RD_ATOMIC, so
//! the two are equal while MAX_DEST_RD_ATOMIC is within it; perftest keeps 16 outstanding).
//! The resource table has 2^R slots, 177 bits each. The model checks a SEND's entries in full
//! at its first packet and only the parts each later packet writes; here every packet checks them
//! in full (equal unless a region shrinks under a message in progress). A refused read of a
//! receive request drops the packet (`cnt_dma_err`); a READ response segment whose read the
//! host refused leaves with its payload marked bad (`m_axis_tuser`: the transmit path sends
//! the frame with a bad FCS, so the requester retries as after a loss) and is counted there
//! too. Responses leave as send
//! descriptors (a transport header) with the QP's row (`m_desc_qp`) for the address vector
//! lookup; a descriptor with a payload has it whole on `m_axis_*`, in descriptor order.
//!
//! One request executes at a time, but a WRITE's tables and check overlap the packet before
//! it: while a WRITE or SEND packet's payload goes to host memory, a front half takes the next
//! header and, if it is a WRITE without immediate, reads its QP, region and state rows (the
//! state row the packet in progress will write back, when both are the same QP's) and runs
//! the check, so the next WRITE starts in ACT as soon as the current packet commits (any
//! other header waits for IDLE). Back to back
//! at MTU 4096 a WRITE packet costs five clocks besides its 512 beats (`rnic bench
//! responder`). `s_init_*` resets a QP's state row (ePSN from its RQ_PSN, no kept READ or
//! atomic) when the QP enters RTR; it is taken while the engine is idle and the front half
//! holds no request. `A` is log2 of the QP and region rows, `R` of the resource slots (`A` to
//! `A + 4`), `F` of the READ responses' FIFO words (10 or 11). A segment reserves its words
//! before its read and frees them as they leave: with 2048 words two segments of MTU 4096
//! (513 words each) are read ahead, with 1024 (four DP16KD less) one is read while the one
//! before it drains, so READ responses at MTU 4096 pay the DMA read's latency once a segment
//! (`rnic bench responder` runs the `responder` top, 1024 words).

use rust_hdl::prelude::*;

use crate::commit_fifo::{CommitFifo, reserve_words};
use crate::payload_scatter::PayloadScatter;
use crate::recv_wqe::RecvWqe;
use crate::resp_check::RespCheck;
use crate::row_table::{
    MR_BITS, QP_BITS, RR_BITS, RS_BITS, qp_offset_of, rr_offset_of, rs_offset_of,
};
use crate::sge_pieces::SgePieces;
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
        va: 64 => "ext_va",
        key: 32 => "ext_key",
        mid: 64 => "ext_mid",
        cmp: 64 => "ext_cmp",
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
        mtu: 3 => "PATH_MTU",
        mdra: 5 => "MAX_DEST_RD_ATOMIC",
        pd: 16 => "PD",
        rcq: 16 => "RECV_CQ",
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
        rcount: 5 => "RES_COUNT",
        rhead: 4 => "RES_HEAD",
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
        rcount: 5 => "RES_COUNT",
        rhead: 4 => "RES_HEAD",
    }
);

field_split!(
    /// A resource slot.
    ResFields, RR_BITS, rr_offset_of, {
        kind: 1 => "KIND",
        first: 24 => "FIRST_PSN",
        last: 24 => "LAST_PSN",
        va: 64 => "VA",
        len: 32 => "LEN",
        rkey: 32 => "RKEY",
    }
);

field_join!(
    /// A resource slot from its fields.
    ResJoin, RR_BITS, rr_offset_of, {
        kind: 1 => "KIND",
        first: 24 => "FIRST_PSN",
        last: 24 => "LAST_PSN",
        va: 64 => "VA",
        len: 32 => "LEN",
        rkey: 32 => "RKEY",
    }
);

field_join!(
    /// A response (ACK, NAK, READ response, atomic acknowledge) as a send descriptor.
    AckJoin, TH_BITS, th_offset_of, {
        op: 8 => "OpCode",
        psn: 24 => "PSN",
        len: 16 => "payload_len",
        dqp: 24 => "DestQP",
        pkey: 16 => "P_Key",
        key: 32 => "ext_key",
        va: 64 => "ext_va",
    }
);

// Engine states (literals in the code, rule 5): 0 IDLE, 1 LOOK, 2 GOT, 3 PRE, 4 CHK, 5 ACT,
// 6 WR_CMD (the payload scatter's command), 7 WR_WAIT (its writes), 8 DRAIN, (9 unused),
// 10 COMMIT, 11 RESP, 12 RES_ADDR, 13 RES_WAIT,
// 14 RD_SEG, 15 RD_REQ, 16 RD_DATA, 17 RD_FLUSH, 18 RD_DESC, 19 AT_RD, 20 AT_DATA, 21 AT_WR,
// 22 AT_WDATA, 23 AT_DONE, 24 RES_WR, 25 RES_REG, 26 RES_TEST.

#[derive(LogicBlock)]
pub struct Responder<const A: usize, const R: usize, const F: usize> {
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
    /// The DMA port's read side ([`crate::dma_arbiter`]): 8-byte-aligned reads, data in
    /// request order.
    pub m_dma_rd_req_valid: Signal<Out, Bit>,
    pub m_dma_rd_req_ready: Signal<In, Bit>,
    pub m_dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_rd_req_len: Signal<Out, Bits<16>>,
    pub m_dma_rd_data_valid: Signal<In, Bit>,
    pub m_dma_rd_data_ready: Signal<Out, Bit>,
    pub m_dma_rd_data: Signal<In, Bits<64>>,
    pub m_dma_rd_data_last: Signal<In, Bit>,
    pub m_dma_rd_data_err: Signal<In, Bit>,
    /// The DMA port's write side; a write's address is the request's device address, at any
    /// byte.
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
    /// Responses as send descriptors, with the QP's row.
    pub m_desc_valid: Signal<Out, Bit>,
    pub m_desc_ready: Signal<In, Bit>,
    pub m_desc_data: Signal<Out, Bits<TH_BITS>>,
    pub m_desc_qp: Signal<Out, Bits<A>>,
    /// The receive rings' queue manager ([`crate::queue_mgr`], engine side): ring n is QP row
    /// n's; a receive request is committed (`rq_commit_*`, the consumer moved past it) once
    /// its completion has been handed over.
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
    /// Completions for the completion writer ([`crate::cq_writer`]): a `cqe`'s four beats,
    /// the CQ (the QP's RECV_CQ) with every beat.
    pub m_cqe_valid: Signal<Out, Bit>,
    pub m_cqe_ready: Signal<In, Bit>,
    pub m_cqe_cq: Signal<Out, Bits<16>>,
    pub m_cqe_data: Signal<Out, Bits<64>>,
    pub m_cqe_last: Signal<Out, Bit>,
    /// The payloads of READ responses, one frame per descriptor with a payload; `tuser` marks
    /// a payload whose read the host refused.
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    /// Requests executed; dropped before the checks; DMA reads and writes the host refused;
    /// duplicates answered again; duplicates matching no kept READ or atomic (each wraps at
    /// 2^32).
    pub cnt_executed: Signal<Out, Bits<32>>,
    pub cnt_dropped: Signal<Out, Bits<32>>,
    pub cnt_dma_err: Signal<Out, Bits<32>>,
    pub cnt_replayed: Signal<Out, Bits<32>>,
    pub cnt_dup_dropped: Signal<Out, Bits<32>>,
    /// SENDs whose receive request refused them (entries the NIC may not write, or too short
    /// for the message).
    pub cnt_recv_refused: Signal<Out, Bits<32>>,
    /// Requests checked, by verdict (the model's `Check` codes: 0 executed, 1 sequence NAK, 2
    /// dropped in a NAKed gap, 3 duplicate, 4 RNR, 5-15 the refusals): the count of verdict
    /// `cnt_verdict_sel`, a clock later. Kept in distributed RAM from configuration on (a
    /// reset does not clear them).
    pub cnt_verdict_sel: Signal<In, Bits<4>>,
    pub cnt_verdict: Signal<Out, Bits<32>>,

    chk: RespCheck<A>,
    mem: RAM<Bits<RS_BITS>, A>,
    /// The verdict counts, twice: the engine's copy (read for the increment) and the host's.
    verdicts: RAM<Bits<32>, 4>,
    verdicts_host: RAM<Bits<32>, 4>,
    res: RAM<Bits<RR_BITS>, R>,
    fifo: CommitFifo<F>,
    scat: PayloadScatter,
    recv: RecvWqe<A, A>,
    req: ReqFields,
    qpf: QpAttrFields,
    stf: StateFields,
    st_out: StateJoin,
    rsf: ResFields,
    rs_out: ResJoin,
    ack: AckJoin,
    st: DFF<Bits<5>>,
    hdr: DFF<Bits<TH_BITS>>,
    qp_row: DFF<Bits<QP_BITS>>,
    mr_row: DFF<Bits<MR_BITS>>,
    st_row: DFF<Bits<RS_BITS>>,
    verdict: DFF<Bits<4>>,
    addr: DFF<Bits<64>>,
    mr_ok: DFF<Bit>,
    /// The next state row and the response, decided in ACT.
    n_epsn: DFF<Bits<24>>,
    n_msn: DFF<Bits<24>>,
    n_nak: DFF<Bits<1>>,
    n_open: DFF<Bits<2>>,
    n_addr: DFF<Bits<64>>,
    n_resid: DFF<Bits<32>>,
    n_wlen: DFF<Bits<32>>,
    n_err: DFF<Bits<1>>,
    n_rcount: DFF<Bits<5>>,
    n_rhead: DFF<Bits<4>>,
    n_write: DFF<Bit>,
    r_send: DFF<Bit>,
    r_read: DFF<Bit>,
    r_op: DFF<Bits<8>>,
    r_syn: DFF<Bits<8>>,
    r_psn: DFF<Bits<24>>,
    r_msn: DFF<Bits<24>>,
    r_orig: DFF<Bits<64>>,
    dma_addr: DFF<Bits<64>>,
    /// The resource slot being written (ACT) or scanned (duplicates), and its new contents.
    slot: DFF<Bits<4>>,
    e_kind: DFF<Bits<1>>,
    e_first: DFF<Bits<24>>,
    e_last: DFF<Bits<24>>,
    e_va: DFF<Bits<64>>,
    e_len: DFF<Bits<32>>,
    e_rkey: DFF<Bits<32>>,
    /// The resource slot read (the block RAM's output, registered) and its tests, a clock
    /// later.
    res_q: DFF<Bits<RR_BITS>>,
    t_match: DFF<Bit>,
    t_in: DFF<Bit>,
    /// A kept READ's end and the request's, registered before they are compared.
    res_end_q: DFF<Bits<65>>,
    req_end_q: DFF<Bits<65>>,
    /// An atomic's new value.
    at_new: DFF<Bits<64>>,
    /// READ responses: the next segment's device address, bytes left, PSN; the first response
    /// of this run; a replay starting inside the original.
    rd_addr: DFF<Bits<64>>,
    rd_left: DFF<Bits<32>>,
    rd_psn: DFF<Bits<24>>,
    rd_first: DFF<Bit>,
    rd_mid: DFF<Bit>,
    /// The segment: bytes, opcode, last of the run, AETH, output words less one, last keep.
    rd_seg: DFF<Bits<16>>,
    rd_op: DFF<Bits<8>>,
    rd_last: DFF<Bit>,
    rd_aeth: DFF<Bit>,
    rd_outs_m1: DFF<Bits<10>>,
    rd_lkeep: DFF<Bits<8>>,
    rd_off: DFF<Bits<3>>,
    /// The realigner: output words written, the previous beat held, a read error seen.
    rd_ocnt: DFF<Bits<10>>,
    rd_prev: DFF<Bits<64>>,
    rd_have: DFF<Bit>,
    rd_err: DFF<Bit>,
    /// FIFO words reserved: segments being read plus words not yet sent.
    rsv: DFF<Bits<12>>,
    cnt_exec: DFF<Bits<32>>,
    cnt_drop: DFF<Bits<32>>,
    cnt_dmae: DFF<Bits<32>>,
    cnt_rep: DFF<Bits<32>>,
    cnt_dupd: DFF<Bits<32>>,
    cnt_rref: DFF<Bits<32>>,
    /// The receive request at the ring's head has been read for this request.
    wq_have: DFF<Bit>,
    /// The request uses the receive request at the ring's head (a SEND, or a WRITE with
    /// immediate's last packet), registered: the header is steady from LOOK on, and the
    /// decode would otherwise sit in front of the check's handshake.
    need_wqe: DFF<Bit>,
    /// A SEND's pieces ([`crate::sge_pieces`]: four registered stages from the request, the
    /// state row and the receive request, steady from RQ_WAIT on; ACT comes at least five
    /// clocks later).
    pieces: SgePieces,
    /// The completion to hand over after the payload (status, opcode, flags, byte length,
    /// immediate), and its beat.
    c_pend: DFF<Bit>,
    c_status: DFF<Bits<8>>,
    c_op: DFF<Bits<8>>,
    c_flags: DFF<Bits<8>>,
    c_len: DFF<Bits<32>>,
    c_imm: DFF<Bits<32>>,
    c_beat: DFF<Bits<2>>,
    /// A fatal error: the receive ring is flushed after the NAK (`fl_pend`, then `fl_on`
    /// in the loop), its head completing with `fl_status` and `fl_len` (the receive in
    /// progress) and the rest with WR_FLUSH_ERR.
    fl_pend: DFF<Bit>,
    fl_on: DFF<Bit>,
    fl_status: DFF<Bits<8>>,
    fl_len: DFF<Bits<32>>,
    /// The next request's front half (LOOK, the rows, PRE, the check) while a WRITE or SEND
    /// packet's payload goes to host memory (PF_TAKE 0, PF_LOOK 1, PF_ROWS 2, PF_PRE 3,
    /// PF_CHECK 4, PF_READY 5, PF_DROP 6, PF_HELD 7): the next header is taken when the packet
    /// in progress completes nothing and flushes nothing and no QP reset waits (whatever its
    /// opcode, so that `s_hdr_ready` does not hang on the header's bits); only a WRITE without
    /// immediate (no receive request, no resource slot) goes on, any other is held for IDLE.
    /// The state row read is the one the packet in progress writes back when both are the
    /// same QP's. IDLE (or COMMIT) then goes straight to ACT, or counts the drop, or goes to
    /// LOOK with the held header.
    pf: DFF<Bits<3>>,
    pf_write: Signal<Local, Bit>,
    /// COMMIT with nothing more to do, and the front half's request ready: straight to ACT.
    adopt_now: Signal<Local, Bit>,
    /// A request starting: LOOK, or the front half's request leaving it (ACT or the drop).
    starting: Signal<Local, Bit>,
    /// LOOK's lookups asked (main states or front half), and answered.
    looking: Signal<Local, Bit>,
    looked: Signal<Local, Bit>,
    pf_fwd: Signal<Local, Bit>,
    /// What a request's back half reads after ACT, kept there, as the front half's registers
    /// may hold the next request by then: its QP row, the ACK's destination QP and P_Key,
    /// whether it has a payload, and the payload scatter's command.
    b_row: DFF<Bits<A>>,
    b_dest: DFF<Bits<24>>,
    b_pkey: DFF<Bits<16>>,
    has_pay: DFF<Bit>,
    sc_a0: DFF<Bits<64>>,
    sc_a1: DFF<Bits<64>>,
    sc_a2: DFF<Bits<64>>,
    sc_l0: DFF<Bits<16>>,
    sc_l1: DFF<Bits<16>>,
    sc_l2: DFF<Bits<16>>,
    // Locals.
    write: Signal<Local, Bit>,
    send: Signal<Local, Bit>,
    s_first: Signal<Local, Bit>,
    s_last: Signal<Local, Bit>,
    s_only: Signal<Local, Bit>,
    imm: Signal<Local, Bit>,
    wimm_end: Signal<Local, Bit>,
    wq_ok: Signal<Local, Bit>,
    s_off: Signal<Local, Bits<34>>,
    sendwrite: Signal<Local, Bit>,
    read: Signal<Local, Bit>,
    atomic: Signal<Local, Bit>,
    first: Signal<Local, Bit>,
    mid: Signal<Local, Bit>,
    last: Signal<Local, Bit>,
    only: Signal<Local, Bit>,
    len64: Signal<Local, Bits<64>>,
    len32: Signal<Local, Bits<32>>,
    dlen: Signal<Local, Bits<32>>,
    psn_next: Signal<Local, Bits<24>>,
    psn_prev: Signal<Local, Bits<24>>,
    msn_next: Signal<Local, Bits<24>>,
    qp_hi: Signal<Local, Bit>,
    qp_ok: Signal<Local, Bit>,
    mtu: Signal<Local, Bits<32>>,
    mtu_m1: Signal<Local, Bits<32>>,
    rd_sum: Signal<Local, Bits<32>>,
    rd_n_c: Signal<Local, Bits<24>>,
    /// The READ's response count and PSNs, registered: the request and the QP row are
    /// steady from PRE on, and ACT comes at least four clocks later (the check's pipeline).
    rd_n: DFF<Bits<24>>,
    rd_lastpsn: DFF<Bits<24>>,
    rd_endpsn: DFF<Bits<24>>,
    cap: Signal<Local, Bits<5>>,
    count1: Signal<Local, Bits<5>>,
    oldest: Signal<Local, Bits<4>>,
    newest: Signal<Local, Bits<4>>,
    res_at: Signal<Local, Bits<R>>,
    d_lo: Signal<Local, Bits<24>>,
    d_hi: Signal<Local, Bits<24>>,
    s_match: Signal<Local, Bit>,
    in_range: Signal<Local, Bit>,
    seg_gt: Signal<Local, Bit>,
    seg: Signal<Local, Bits<16>>,
    seg_tail: Signal<Local, Bits<16>>,
    /// The beats of a segment of the READ's remaining length, less one.
    seg_m1l: Signal<Local, Bits<16>>,
    /// The path MTU and its beats less one, registered from the QP row (steady from PRE on;
    /// the first segment is cut clocks after ACT).
    mtu_r: DFF<Bits<32>>,
    mtu_wm1: DFF<Bits<10>>,
    mtu_w32: Signal<Local, Bits<32>>,
    fits: Signal<Local, Bits<12>>,
    rd_word: Signal<Local, Bits<64>>,
    rd_wlast: Signal<Local, Bit>,
    rsv_add: Signal<Local, Bits<12>>,
    /// The reservation of a segment's read, added to `rsv` a clock after the read leaves (the
    /// next segment's room test comes clocks later), so that the room test, the read's
    /// handshake and the `rsv` adder are not one path.
    rsv_addq: DFF<Bits<12>>,
    rsv_sub: Signal<Local, Bits<12>>,
    k_one2: Constant<Bits<2>>,
    k_one4: Constant<Bits<4>>,
    k_one5: Constant<Bits<5>>,
    /// Resource slots per QP (2^(R - A)), log2 of it, and the mask of a slot's number.
    k_slots5: Constant<Bits<5>>,
    k_slot_shift: Constant<Bits<3>>,
    k_slot_mask: Constant<Bits<R>>,
    k_one10: Constant<Bits<10>>,
    k_one12: Constant<Bits<12>>,
    k_zero12: Constant<Bits<12>>,
    k_one16: Constant<Bits<16>>,
    k_eight16: Constant<Bits<16>>,
    k_reserve: Constant<Bits<12>>,
    k_one24: Constant<Bits<24>>,
    k_one32: Constant<Bits<32>>,
    k_zero32: Constant<Bits<32>>,
    k_zero64: Constant<Bits<64>>,
    k_align: Constant<Bits<64>>,
    k_all8: Constant<Bits<8>>,
    k_mtu256: Constant<Bits<32>>,
    k_mtu512: Constant<Bits<32>>,
    k_mtu1024: Constant<Bits<32>>,
    k_mtu2048: Constant<Bits<32>>,
    k_mtu4096: Constant<Bits<32>>,
    k_qp_hi: Constant<Bits<24>>,
    k_pkey_mask: Constant<Bits<16>>,
    k_ack_op: Constant<Bits<8>>,
    k_atomic_ack_op: Constant<Bits<8>>,
    k_rnr: Constant<Bits<8>>,
    k_syn_ack: Constant<Bits<8>>,
    k_syn_seq: Constant<Bits<8>>,
    k_syn_inv: Constant<Bits<8>>,
    k_syn_acc: Constant<Bits<8>>,
    k_syn_op: Constant<Bits<8>>,
}

impl<const A: usize, const R: usize, const F: usize> Responder<A, R, F> {
    /// QP (and memory region) rows.
    pub const ROWS: usize = 1 << A;
    /// READs and atomics kept per QP: the most MAX_DEST_RD_ATOMIC this responder honours.
    pub const SLOTS: usize = 1 << (R - A);
}

impl<const A: usize, const R: usize, const F: usize> Default for Responder<A, R, F> {
    fn default() -> Self {
        assert!((1..=16).contains(&A));
        assert!(
            (A..=A + 4).contains(&R),
            "R is A to A + 4: 1 to 16 resource slots per QP"
        );
        assert!(
            (10..=11).contains(&F),
            "F is 10 or 11: a READ FIFO of 1024 or 2048 words (a segment of MTU 4096 is 513)"
        );
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
            m_desc_valid: Default::default(),
            m_desc_ready: Default::default(),
            m_desc_data: Default::default(),
            m_desc_qp: Default::default(),
            rq_look_valid: Default::default(),
            rq_look_ready: Default::default(),
            rq_look_queue: Default::default(),
            rq_got_valid: Default::default(),
            rq_got_base: Default::default(),
            rq_got_size: Default::default(),
            rq_got_prod: Default::default(),
            rq_got_cons: Default::default(),
            rq_commit_valid: Default::default(),
            rq_commit_ready: Default::default(),
            rq_commit_queue: Default::default(),
            rq_commit_index: Default::default(),
            m_cqe_valid: Default::default(),
            m_cqe_ready: Default::default(),
            m_cqe_cq: Default::default(),
            m_cqe_data: Default::default(),
            m_cqe_last: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tuser: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            cnt_executed: Default::default(),
            cnt_dropped: Default::default(),
            cnt_dma_err: Default::default(),
            cnt_replayed: Default::default(),
            cnt_dup_dropped: Default::default(),
            cnt_recv_refused: Default::default(),
            cnt_verdict_sel: Default::default(),
            cnt_verdict: Default::default(),
            chk: Default::default(),
            mem: RAM::new(Default::default()),
            verdicts: RAM::new(Default::default()),
            verdicts_host: RAM::new(Default::default()),
            res: RAM::new(Default::default()),
            fifo: Default::default(),
            scat: Default::default(),
            pieces: Default::default(),
            recv: Default::default(),
            req: Default::default(),
            qpf: Default::default(),
            stf: Default::default(),
            st_out: Default::default(),
            rsf: Default::default(),
            rs_out: Default::default(),
            ack: Default::default(),
            st: Default::default(),
            hdr: Default::default(),
            qp_row: Default::default(),
            mr_row: Default::default(),
            st_row: Default::default(),
            verdict: Default::default(),
            addr: Default::default(),
            mr_ok: Default::default(),
            n_epsn: Default::default(),
            n_msn: Default::default(),
            n_nak: Default::default(),
            n_open: Default::default(),
            n_addr: Default::default(),
            n_resid: Default::default(),
            n_wlen: Default::default(),
            n_err: Default::default(),
            n_rcount: Default::default(),
            n_rhead: Default::default(),
            n_write: Default::default(),
            r_send: Default::default(),
            r_read: Default::default(),
            r_op: Default::default(),
            r_syn: Default::default(),
            r_psn: Default::default(),
            r_msn: Default::default(),
            r_orig: Default::default(),
            dma_addr: Default::default(),
            slot: Default::default(),
            e_kind: Default::default(),
            e_first: Default::default(),
            e_last: Default::default(),
            e_va: Default::default(),
            e_len: Default::default(),
            e_rkey: Default::default(),
            res_q: Default::default(),
            t_match: Default::default(),
            t_in: Default::default(),
            res_end_q: Default::default(),
            req_end_q: Default::default(),
            at_new: Default::default(),
            rd_addr: Default::default(),
            rd_left: Default::default(),
            rd_psn: Default::default(),
            rd_first: Default::default(),
            rd_mid: Default::default(),
            rd_seg: Default::default(),
            rd_op: Default::default(),
            rd_last: Default::default(),
            rd_aeth: Default::default(),
            rd_outs_m1: Default::default(),
            rd_lkeep: Default::default(),
            rd_off: Default::default(),
            rd_ocnt: Default::default(),
            rd_prev: Default::default(),
            rd_have: Default::default(),
            rd_err: Default::default(),
            rsv: Default::default(),
            cnt_exec: Default::default(),
            cnt_drop: Default::default(),
            cnt_dmae: Default::default(),
            cnt_rep: Default::default(),
            cnt_dupd: Default::default(),
            cnt_rref: Default::default(),
            wq_have: Default::default(),
            c_pend: Default::default(),
            c_status: Default::default(),
            c_op: Default::default(),
            c_flags: Default::default(),
            c_len: Default::default(),
            c_imm: Default::default(),
            c_beat: Default::default(),
            fl_pend: Default::default(),
            fl_on: Default::default(),
            fl_status: Default::default(),
            fl_len: Default::default(),
            pf: Default::default(),
            pf_write: Default::default(),
            adopt_now: Default::default(),
            starting: Default::default(),
            looking: Default::default(),
            looked: Default::default(),
            pf_fwd: Default::default(),
            b_row: Default::default(),
            b_dest: Default::default(),
            b_pkey: Default::default(),
            has_pay: Default::default(),
            sc_a0: Default::default(),
            sc_a1: Default::default(),
            sc_a2: Default::default(),
            sc_l0: Default::default(),
            sc_l1: Default::default(),
            sc_l2: Default::default(),
            send: Default::default(),
            s_first: Default::default(),
            s_last: Default::default(),
            s_only: Default::default(),
            imm: Default::default(),
            wimm_end: Default::default(),
            need_wqe: Default::default(),
            wq_ok: Default::default(),
            s_off: Default::default(),
            write: Default::default(),
            sendwrite: Default::default(),
            read: Default::default(),
            atomic: Default::default(),
            first: Default::default(),
            mid: Default::default(),
            last: Default::default(),
            only: Default::default(),
            len64: Default::default(),
            len32: Default::default(),
            dlen: Default::default(),
            psn_next: Default::default(),
            psn_prev: Default::default(),
            msn_next: Default::default(),
            qp_hi: Default::default(),
            qp_ok: Default::default(),
            mtu: Default::default(),
            mtu_m1: Default::default(),
            rd_sum: Default::default(),
            rd_n_c: Default::default(),
            rd_n: Default::default(),
            rd_lastpsn: Default::default(),
            rd_endpsn: Default::default(),
            cap: Default::default(),
            count1: Default::default(),
            oldest: Default::default(),
            newest: Default::default(),
            res_at: Default::default(),
            d_lo: Default::default(),
            d_hi: Default::default(),
            s_match: Default::default(),
            in_range: Default::default(),
            seg_gt: Default::default(),
            seg: Default::default(),
            seg_tail: Default::default(),
            seg_m1l: Default::default(),
            mtu_r: Default::default(),
            mtu_wm1: Default::default(),
            mtu_w32: Default::default(),
            fits: Default::default(),
            rd_word: Default::default(),
            rd_wlast: Default::default(),
            rsv_add: Default::default(),
            rsv_addq: Default::default(),
            rsv_sub: Default::default(),
            k_one2: Constant::new(bits::<2>(1)),
            k_one4: Constant::new(bits::<4>(1)),
            k_one5: Constant::new(bits::<5>(1)),
            k_slots5: Constant::new(bits::<5>(1 << (R - A))),
            k_slot_shift: Constant::new(bits::<3>((R - A) as u64)),
            k_slot_mask: Constant::new(bits::<R>((1 << (R - A)) - 1)),
            k_one10: Constant::new(bits::<10>(1)),
            k_one12: Constant::new(bits::<12>(1)),
            k_zero12: Constant::new(bits::<12>(0)),
            k_one16: Constant::new(bits::<16>(1)),
            k_eight16: Constant::new(bits::<16>(8)),
            k_reserve: Constant::new(bits::<12>(reserve_words(F))),
            k_one24: Constant::new(bits::<24>(1)),
            k_one32: Constant::new(bits::<32>(1)),
            k_zero32: Constant::new(bits::<32>(0)),
            k_zero64: Constant::new(bits::<64>(0)),
            k_align: Constant::new(bits::<64>(!7u64)),
            k_all8: Constant::new(bits::<8>(0xFF)),
            k_mtu256: Constant::new(bits::<32>(256)),
            k_mtu512: Constant::new(bits::<32>(512)),
            k_mtu1024: Constant::new(bits::<32>(1024)),
            k_mtu2048: Constant::new(bits::<32>(2048)),
            k_mtu4096: Constant::new(bits::<32>(4096)),
            k_qp_hi: Constant::new(bits::<24>((0xFF_FFFFu64 << A) & 0xFF_FFFF)),
            k_pkey_mask: Constant::new(bits::<16>(0x7FFF)),
            k_ack_op: Constant::new(bits::<8>(0x11)),
            k_atomic_ack_op: Constant::new(bits::<8>(0x12)),
            k_rnr: Constant::new(bits::<8>(0x20)),
            k_syn_ack: Constant::new(bits::<8>(0x1F)),
            k_syn_seq: Constant::new(bits::<8>(0x60)),
            k_syn_inv: Constant::new(bits::<8>(0x61)),
            k_syn_acc: Constant::new(bits::<8>(0x62)),
            k_syn_op: Constant::new(bits::<8>(0x63)),
        }
    }
}

impl<const A: usize, const R: usize, const F: usize> Logic for Responder<A, R, F> {
    // The state machine's arms keep their conditions as `if`s inside the arm: `#[hdl_gen]`
    // writes a match arm's pattern and drops its guard, so a guard would vanish from the
    // Verilog.
    #[allow(clippy::collapsible_match)]
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st, hdr, qp_row, mr_row, st_row, verdict, addr, mr_ok, n_epsn, n_msn,
            n_nak, n_open, n_addr, n_resid, n_wlen, n_err, n_rcount, n_rhead, n_write, r_send,
            r_read, r_op, r_syn, r_psn, r_msn, r_orig, dma_addr, slot, e_kind, e_first, e_last,
            e_va, e_len, e_rkey, res_q, t_match, t_in, res_end_q, req_end_q, at_new, rd_addr,
            rd_left, rd_psn, rd_first, rd_mid, rd_seg, rd_op, rd_last, rd_aeth, rd_outs_m1,
            rd_lkeep, rd_off, rd_ocnt, rd_prev, rd_have, rd_err, rd_n, rd_lastpsn, rd_endpsn, rsv,
            cnt_exec, cnt_drop, cnt_dmae, cnt_rep, cnt_dupd, cnt_rref, wq_have, need_wqe, rsv_addq,
            c_pend, c_status, c_op, c_flags, c_len, c_imm, c_beat, fl_pend, fl_on, fl_status,
            fl_len, pf, mtu_r, mtu_wm1, b_row, b_dest, b_pkey, has_pay, sc_a0, sc_a1, sc_a2, sc_l0,
            sc_l1, sc_l2
        );
        clock!(self, clock, chk, fifo, scat, recv, pieces);
        self.recv.reset.next = self.reset.val();
        self.scat.reset.next = self.reset.val();
        self.chk.reset.next = self.reset.val();
        self.fifo.reset.next = self.reset.val();
        self.mem.read_clock.next = self.clock.val();
        self.verdicts.read_clock.next = self.clock.val();
        self.verdicts.write_clock.next = self.clock.val();
        self.verdicts_host.read_clock.next = self.clock.val();
        self.verdicts_host.write_clock.next = self.clock.val();
        // The verdict counts: the verdict's count read as it leaves the check, written back
        // one more in ACT (to both copies).
        self.verdicts.read_address.next = self.verdict.q.val();
        if (self.st.q.val() == 4) | (self.pf.q.val() == 4) {
            self.verdicts.read_address.next = self.chk.m_verdict.val();
        }
        self.verdicts.write_address.next = self.verdict.q.val();
        self.verdicts.write_data.next = self.verdicts.read_data.val() + self.k_one32.val();
        self.verdicts.write_enable.next = self.st.q.val() == 5;
        self.verdicts_host.write_address.next = self.verdict.q.val();
        self.verdicts_host.write_data.next = self.verdicts.read_data.val() + self.k_one32.val();
        self.verdicts_host.write_enable.next = self.st.q.val() == 5;
        self.verdicts_host.read_address.next = self.cnt_verdict_sel.val();
        self.cnt_verdict.next = self.verdicts_host.read_data.val();
        self.mem.write_clock.next = self.clock.val();
        self.res.read_clock.next = self.clock.val();
        self.res.write_clock.next = self.clock.val();

        // ---- Field views of the captured request and rows.
        self.req.word.next = self.hdr.q.val();
        self.pf_write.next = (self.req.op.val() == 6)
            | (self.req.op.val() == 7)
            | (self.req.op.val() == 8)
            | (self.req.op.val() == 10);
        self.pf_fwd.next =
            self.n_write.q.val() & (self.b_row.q.val() == self.req.dqp.val().get_bits::<A>(0));
        self.qpf.word.next = self.qp_row.q.val();
        self.stf.word.next = self.st_row.q.val();
        self.res_q.d.next = self.res.read_data.val();
        self.rsf.word.next = self.res_q.q.val();

        // Opcode decode (SEND 0x00-0x05, 0x16, 0x17; WRITE 0x06-0x0B; READ 0x0C; atomics 0x13,
        // 0x14).
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
        self.read.next = self.req.op.val() == 12;
        self.atomic.next = (self.req.op.val() == 19) | (self.req.op.val() == 20);
        self.first.next = self.req.op.val() == 6;
        self.mid.next = self.req.op.val() == 7;
        self.last.next = (self.req.op.val() == 8) | (self.req.op.val() == 9);
        self.only.next = (self.req.op.val() == 10) | (self.req.op.val() == 11);
        // SEND FIRST 0x00, MIDDLE 0x01, LAST 0x02 (0x03 with immediate, 0x16 with invalidate),
        // ONLY 0x04 (0x05, 0x17); WRITE LAST and ONLY with immediate (0x09, 0x0B) complete a
        // receive request too.
        self.send.next = self.sendwrite.val() & !self.write.val();
        self.s_first.next = self.req.op.val() == 0;
        self.s_last.next =
            (self.req.op.val() == 2) | (self.req.op.val() == 3) | (self.req.op.val() == 22);
        self.s_only.next =
            (self.req.op.val() == 4) | (self.req.op.val() == 5) | (self.req.op.val() == 23);
        self.imm.next = (self.req.op.val() == 3)
            | (self.req.op.val() == 5)
            | (self.req.op.val() == 9)
            | (self.req.op.val() == 11);
        self.wimm_end.next = (self.req.op.val() == 9) | (self.req.op.val() == 11);
        self.need_wqe.d.next = self.send.val() | self.wimm_end.val();
        self.wq_ok.next = self.recv.m_ok.val() & !self.recv.m_empty.val();

        // ---- A SEND's pieces: the packet's range of the message against the receive
        // request's three entries (the fourth empty).
        self.s_off.next = bit_cast::<34, 32>(self.stf.wlen.val());
        if self.s_first.val() | self.s_only.val() {
            self.s_off.next = 0.into();
        }
        self.pieces.s_off.next = self.s_off.val();
        self.pieces.s_len.next = self.req.len.val();
        self.pieces.s_addr0.next = self.recv.m_addr0.val();
        self.pieces.s_len0.next = self.recv.m_len0.val();
        self.pieces.s_addr1.next = self.recv.m_addr1.val();
        self.pieces.s_len1.next = self.recv.m_len1.val();
        self.pieces.s_addr2.next = self.recv.m_addr2.val();
        self.pieces.s_len2.next = self.recv.m_len2.val();
        self.pieces.s_addr3.next = self.k_zero64.val();
        self.pieces.s_len3.next = 0.into();
        self.pieces.s_total.next = self.recv.m_total.val();
        self.len64.next = bit_cast::<64, 16>(self.req.len.val());
        self.len32.next = bit_cast::<32, 16>(self.req.len.val());
        // RETH: DMALength is the low half of the middle slot.
        self.dlen.next = self.req.mid.val().get_bits::<32>(0);
        self.psn_next.next = self.req.psn.val() + self.k_one24.val();
        self.psn_prev.next = self.stf.epsn.val() - self.k_one24.val();
        self.msn_next.next = self.stf.msn.val() + self.k_one24.val();
        self.qp_hi.next = (self.req.dqp.val() & self.k_qp_hi.val()).any();
        // QP 2 RTR or 3 RTS, RC, not in error; the default P_Key.
        self.qp_ok.next = ((self.qpf.state.val() == 2) | (self.qpf.state.val() == 3))
            & !self.qpf.qtype.val().any()
            & !self.stf.err.val().any()
            & ((self.req.pkey.val() & self.k_pkey_mask.val()) == self.k_pkey_mask.val());

        // ---- READ arithmetic: the path MTU, responses n = max(1, ceil(len / MTU)).
        self.mtu.next = self.k_mtu256.val();
        if self.qpf.mtu.val() == 2 {
            self.mtu.next = self.k_mtu512.val();
        }
        if self.qpf.mtu.val() == 3 {
            self.mtu.next = self.k_mtu1024.val();
        }
        if self.qpf.mtu.val() == 4 {
            self.mtu.next = self.k_mtu2048.val();
        }
        if self.qpf.mtu.val() == 5 {
            self.mtu.next = self.k_mtu4096.val();
        }
        self.mtu_m1.next = self.mtu.val() - self.k_one32.val();
        self.mtu_r.d.next = self.mtu.val();
        self.mtu_w32.next = (self.mtu.val() >> 3) - self.k_one32.val();
        self.mtu_wm1.d.next = self.mtu_w32.val().get_bits::<10>(0);
        self.rd_sum.next = self.dlen.val() + self.mtu_m1.val();
        self.rd_n_c.next = bit_cast::<24, 32>(self.rd_sum.val() >> 8);
        if self.qpf.mtu.val() == 2 {
            self.rd_n_c.next = bit_cast::<24, 32>(self.rd_sum.val() >> 9);
        }
        if self.qpf.mtu.val() == 3 {
            self.rd_n_c.next = bit_cast::<24, 32>(self.rd_sum.val() >> 10);
        }
        if self.qpf.mtu.val() == 4 {
            self.rd_n_c.next = bit_cast::<24, 32>(self.rd_sum.val() >> 11);
        }
        if self.qpf.mtu.val() == 5 {
            self.rd_n_c.next = bit_cast::<24, 32>(self.rd_sum.val() >> 12);
        }
        if !self.dlen.val().any() {
            self.rd_n_c.next = self.k_one24.val();
        }
        self.rd_n.d.next = self.rd_n_c.val();
        self.rd_endpsn.d.next = self.req.psn.val() + self.rd_n.q.val();
        self.rd_lastpsn.d.next = self.req.psn.val() + self.rd_n.q.val() - self.k_one24.val();

        // ---- Resource slots: the QP keeps its newest RES_COUNT READs and atomics, slot
        // numbers RES_HEAD - RES_COUNT to RES_HEAD - 1 (mod 16), as the model keeps its queue
        // of them; a new one takes RES_HEAD and RES_COUNT becomes min(RES_COUNT + 1, cap),
        // cap = min(max(mdra, 1), slots). Slot number n is row n mod `slots` of the QP's rows
        // in the table: the kept ones are at most `slots` consecutive numbers, so no two of
        // them share a row.
        self.cap.next = self.qpf.mdra.val();
        if !self.qpf.mdra.val().any() {
            self.cap.next = 1.into();
        }
        if self.qpf.mdra.val() > self.k_slots5.val() {
            self.cap.next = self.k_slots5.val();
        }
        self.count1.next = self.stf.rcount.val() + self.k_one5.val();
        if self.count1.val() > self.cap.val() {
            self.count1.next = self.cap.val();
        }
        self.oldest.next = self.stf.rhead.val() - self.stf.rcount.val().get_bits::<4>(0);
        self.newest.next = self.stf.rhead.val() - self.k_one4.val();
        self.res_at.next = (bit_cast::<R, A>(self.req.dqp.val().get_bits::<A>(0))
            << self.k_slot_shift.val())
            | (bit_cast::<R, 4>(self.slot.q.val()) & self.k_slot_mask.val());
        // A kept slot answers a duplicate: a READ whose responses' PSNs hold it, an atomic at
        // its PSN (24-bit half-space compares, rule 2).
        self.d_lo.next = self.req.psn.val() - self.rsf.first.val();
        self.d_hi.next = self.rsf.last.val() - self.req.psn.val();
        self.s_match.next = false;
        if self.read.val() & !self.rsf.kind.val().any() {
            self.s_match.next = !self.d_lo.val().get_bit(23) & !self.d_hi.val().get_bit(23);
        }
        if self.atomic.val() & self.rsf.kind.val().any() {
            self.s_match.next = self.req.psn.val() == self.rsf.first.val();
        }
        // The two ends are sums: registered, then compared a clock later (the adder and the
        // 65-bit compare in one clock set Fmax at 103.3 MHz: `rnic build --core-only --top
        // responder_path_1k --part LFE5UM5G-85F-8`, seed 1).
        self.req_end_q.d.next =
            bit_cast::<65, 64>(self.req.va.val()) + bit_cast::<65, 32>(self.dlen.val());
        self.res_end_q.d.next =
            bit_cast::<65, 64>(self.rsf.va.val()) + bit_cast::<65, 32>(self.rsf.len.val());
        self.in_range.next = (self.req.va.val() >= self.rsf.va.val())
            & (self.dlen.val() <= self.rsf.len.val())
            & (self.req_end_q.q.val() <= self.res_end_q.q.val())
            & (self.req.key.val() == self.rsf.rkey.val())
            & self.mr_ok.q.val();

        // ---- A READ response's segment, from the registered run.
        self.seg_gt.next = self.rd_left.q.val() > self.mtu_r.q.val();
        self.seg.next = self.rd_left.q.val().get_bits::<16>(0);
        if self.seg_gt.val() {
            self.seg.next = self.mtu_r.q.val().get_bits::<16>(0);
        }
        self.seg_tail.next =
            bit_cast::<16, 3>(self.rd_addr.q.val().get_bits::<3>(0)) + self.seg.val();
        // ceil(seg / 8) - 1 = (seg - 1) / 8 (all ones for an empty segment, as before), taken
        // from the remaining length beside the compare, not after it.
        self.seg_m1l.next = (self.rd_left.q.val().get_bits::<16>(0) - self.k_one16.val()) >> 3;
        self.fits.next =
            self.rsv.q.val() + bit_cast::<12, 10>(self.rd_outs_m1.q.val()) + self.k_one12.val();

        // The realigner's word: the beat itself at offset 0, else the held beat's upper bytes
        // and this beat's lower ones (in RD_FLUSH the held beat's alone: `m_dma_rd_data` is
        // not read there).
        self.rd_word.next = self.m_dma_rd_data.val();
        if self.rd_off.q.val() == 1 {
            self.rd_word.next = (self.rd_prev.q.val() >> 8) | (self.m_dma_rd_data.val() << 56);
        }
        if self.rd_off.q.val() == 2 {
            self.rd_word.next = (self.rd_prev.q.val() >> 16) | (self.m_dma_rd_data.val() << 48);
        }
        if self.rd_off.q.val() == 3 {
            self.rd_word.next = (self.rd_prev.q.val() >> 24) | (self.m_dma_rd_data.val() << 40);
        }
        if self.rd_off.q.val() == 4 {
            self.rd_word.next = (self.rd_prev.q.val() >> 32) | (self.m_dma_rd_data.val() << 32);
        }
        if self.rd_off.q.val() == 5 {
            self.rd_word.next = (self.rd_prev.q.val() >> 40) | (self.m_dma_rd_data.val() << 24);
        }
        if self.rd_off.q.val() == 6 {
            self.rd_word.next = (self.rd_prev.q.val() >> 48) | (self.m_dma_rd_data.val() << 16);
        }
        if self.rd_off.q.val() == 7 {
            self.rd_word.next = (self.rd_prev.q.val() >> 56) | (self.m_dma_rd_data.val() << 8);
        }
        if self.st.q.val() == 17 {
            self.rd_word.next = self.rd_prev.q.val() >> 8;
            if self.rd_off.q.val() == 2 {
                self.rd_word.next = self.rd_prev.q.val() >> 16;
            }
            if self.rd_off.q.val() == 3 {
                self.rd_word.next = self.rd_prev.q.val() >> 24;
            }
            if self.rd_off.q.val() == 4 {
                self.rd_word.next = self.rd_prev.q.val() >> 32;
            }
            if self.rd_off.q.val() == 5 {
                self.rd_word.next = self.rd_prev.q.val() >> 40;
            }
            if self.rd_off.q.val() == 6 {
                self.rd_word.next = self.rd_prev.q.val() >> 48;
            }
            if self.rd_off.q.val() == 7 {
                self.rd_word.next = self.rd_prev.q.val() >> 56;
            }
        }
        self.rd_wlast.next = self.rd_ocnt.q.val() == self.rd_outs_m1.q.val();

        // ---- The check.
        self.chk.s_hdr.next = self.hdr.q.val();
        self.chk.s_qp.next = self.qp_row.q.val();
        self.chk.s_mr.next = self.mr_row.q.val();
        self.chk.s_state.next = self.st_row.q.val();
        self.chk.s_wqe_ready.next = !self.recv.m_empty.val();
        self.chk.s_valid.next = ((self.st.q.val() == 3)
            & self.qp_ok.val()
            & (!self.need_wqe.q.val() | self.wq_have.q.val()))
            | ((self.pf.q.val() == 3) & self.qp_ok.val());
        self.chk.m_ready.next = (self.st.q.val() == 4) | (self.pf.q.val() == 4);

        // ---- Defaults.
        self.s_hdr_ready.next = false;
        self.s_init_ready.next = (self.st.q.val() == 0) & !self.pf.q.val().any();
        self.s_axis_tready.next = false;
        self.qp_look_valid.next = false;
        self.qp_look_row.next = self.req.dqp.val().get_bits::<A>(0);
        // The region lookups and the DMA reads are the receive request fetch's while it runs
        // (RQ_REQ, RQ_WAIT): it is idle otherwise, its valids low.
        self.mr_look_valid.next = self.recv.mr_look_valid.val();
        self.mr_look_row.next = self.req.key.val().get_bits::<A>(8);
        if self.st.q.val() == 28 {
            self.mr_look_row.next = self.recv.mr_look_row.val();
        }
        self.recv.s_req_valid.next = false;
        self.recv.s_req_ring.next = self.req.dqp.val().get_bits::<A>(0);
        self.recv.s_req_pd.next = self.qpf.pd.val();
        self.recv.m_ready.next = false;
        self.recv.look_ready.next = self.rq_look_ready.val();
        self.recv.got_valid.next = self.rq_got_valid.val();
        self.recv.got_base.next = self.rq_got_base.val();
        self.recv.got_size.next = self.rq_got_size.val();
        self.recv.got_prod.next = self.rq_got_prod.val();
        self.recv.got_cons.next = self.rq_got_cons.val();
        self.rq_look_valid.next = self.recv.look_valid.val();
        self.rq_look_queue.next = self.recv.look_queue.val();
        self.recv.mr_look_ready.next = self.mr_look_ready.val();
        self.recv.mr_got_data.next = self.mr_got_data.val();
        self.recv.m_dma_rd_req_ready.next = self.m_dma_rd_req_ready.val();
        self.recv.m_dma_rd_data_valid.next =
            self.m_dma_rd_data_valid.val() & (self.st.q.val() == 28);
        self.recv.m_dma_rd_data.next = self.m_dma_rd_data.val();
        self.recv.m_dma_rd_data_last.next = self.m_dma_rd_data_last.val();
        self.recv.m_dma_rd_data_err.next = self.m_dma_rd_data_err.val();
        self.rq_commit_valid.next = false;
        self.rq_commit_queue.next = self.req.dqp.val().get_bits::<A>(0);
        self.rq_commit_index.next = self.recv.m_index.val() + self.k_one16.val();
        // The completion's beats (cqe: WR_ID; BYTE_LEN, IMM; QPN, SRC_QP; STATUS, OPCODE,
        // FLAGS, WQE_INDEX), PHASE left to the writer.
        self.m_cqe_valid.next = self.st.q.val() == 29;
        self.m_cqe_cq.next = self.qpf.rcq.val();
        self.m_cqe_last.next = self.c_beat.q.val() == 3;
        self.m_cqe_data.next = self.recv.m_wr_id.val();
        if self.c_beat.q.val() == 1 {
            self.m_cqe_data.next = bit_cast::<64, 32>(self.c_imm.q.val()) << 32
                | bit_cast::<64, 32>(self.c_len.q.val());
        }
        if self.c_beat.q.val() == 2 {
            self.m_cqe_data.next = bit_cast::<64, 24>(self.req.dqp.val());
        }
        if self.c_beat.q.val() == 3 {
            self.m_cqe_data.next = bit_cast::<64, 16>(self.recv.m_index.val()) << 32
                | bit_cast::<64, 8>(self.c_flags.q.val()) << 16
                | bit_cast::<64, 8>(self.c_op.q.val()) << 8
                | bit_cast::<64, 8>(self.c_status.q.val());
        }
        self.mem.read_address.next = self.req.dqp.val().get_bits::<A>(0);
        self.mem.write_address.next = self.b_row.q.val();
        self.mem.write_enable.next = false;
        self.st_out.epsn.next = self.n_epsn.q.val();
        self.st_out.msn.next = self.n_msn.q.val();
        self.st_out.nak.next = self.n_nak.q.val();
        self.st_out.open.next = self.n_open.q.val();
        self.st_out.addr.next = self.n_addr.q.val();
        self.st_out.resid.next = self.n_resid.q.val();
        self.st_out.wlen.next = self.n_wlen.q.val();
        self.st_out.err.next = self.n_err.q.val();
        self.st_out.rcount.next = self.n_rcount.q.val();
        self.st_out.rhead.next = self.n_rhead.q.val();
        self.mem.write_data.next = self.st_out.word.val();
        self.res.read_address.next = self.res_at.val();
        self.res.write_address.next = self.res_at.val();
        self.res.write_enable.next = false;
        self.rs_out.kind.next = self.e_kind.q.val();
        self.rs_out.first.next = self.e_first.q.val();
        self.rs_out.last.next = self.e_last.q.val();
        self.rs_out.va.next = self.e_va.q.val();
        self.rs_out.len.next = self.e_len.q.val();
        self.rs_out.rkey.next = self.e_rkey.q.val();
        self.res.write_data.next = self.rs_out.word.val();
        self.m_dma_rd_req_valid.next = self.recv.m_dma_rd_req_valid.val();
        self.m_dma_rd_req_addr.next = self.rd_addr.q.val() & self.k_align.val();
        self.m_dma_rd_req_len.next = self.seg_tail.val();
        if self.st.q.val() == 28 {
            self.m_dma_rd_req_addr.next = self.recv.m_dma_rd_req_addr.val();
            self.m_dma_rd_req_len.next = self.recv.m_dma_rd_req_len.val();
        }
        self.m_dma_rd_data_ready.next = self.recv.m_dma_rd_data_ready.val();
        // The DMA port's write side: the payload scatter's, but for an atomic's write.
        self.scat.s_cmd_valid.next = false;
        self.scat.s_cmd_addr0.next = self.sc_a0.q.val();
        self.scat.s_cmd_len0.next = self.sc_l0.q.val();
        self.scat.s_cmd_addr1.next = self.sc_a1.q.val();
        self.scat.s_cmd_len1.next = self.sc_l1.q.val();
        self.scat.s_cmd_addr2.next = self.sc_a2.q.val();
        self.scat.s_cmd_len2.next = self.sc_l2.q.val();
        self.scat.s_cmd_addr3.next = self.k_zero64.val();
        self.scat.s_cmd_len3.next = 0.into();
        self.scat.s_axis_tdata.next = self.s_axis_tdata.val();
        self.scat.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.scat.s_axis_tlast.next = self.s_axis_tlast.val();
        self.scat.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.scat.m_dma_wr_req_ready.next = self.m_dma_wr_req_ready.val();
        self.scat.m_dma_wr_data_ready.next = self.m_dma_wr_data_ready.val();
        self.scat.m_dma_wr_done_valid.next =
            self.m_dma_wr_done_valid.val() & (self.st.q.val() == 7);
        self.scat.m_dma_wr_done_err.next = self.m_dma_wr_done_err.val();
        self.scat.m_done_ready.next = false;
        self.m_dma_wr_req_valid.next = self.scat.m_dma_wr_req_valid.val();
        self.m_dma_wr_req_addr.next = self.scat.m_dma_wr_req_addr.val();
        self.m_dma_wr_req_len.next = self.scat.m_dma_wr_req_len.val();
        self.m_dma_wr_data_valid.next = self.scat.m_dma_wr_data_valid.val();
        self.m_dma_wr_data.next = self.scat.m_dma_wr_data.val();
        self.m_dma_wr_data_keep.next = self.scat.m_dma_wr_data_keep.val();
        self.m_dma_wr_data_last.next = self.scat.m_dma_wr_data_last.val();
        self.ack.op.next = self.r_op.q.val();
        self.ack.psn.next = self.r_psn.q.val();
        self.ack.len.next = 0.into();
        self.ack.dqp.next = self.b_dest.q.val();
        self.ack.pkey.next = self.b_pkey.q.val();
        self.ack.key.next =
            bit_cast::<32, 8>(self.r_syn.q.val()) << 24 | bit_cast::<32, 24>(self.r_msn.q.val());
        self.ack.va.next = self.r_orig.q.val();
        self.m_desc_data.next = self.ack.word.val();
        self.m_desc_qp.next = self.b_row.q.val();
        self.m_desc_valid.next = (self.st.q.val() == 11) | (self.st.q.val() == 18);
        self.fifo.wr_en.next = false;
        self.fifo.wr_data.next = self.rd_word.val();
        self.fifo.wr_keep.next = self.k_all8.val();
        self.fifo.wr_last.next = self.rd_wlast.val();
        self.fifo.wr_user.next = self.rd_err.q.val() | self.m_dma_rd_data_err.val();
        self.fifo.commit.next = false;
        self.fifo.rewind.next = false;
        self.m_axis_tdata.next = self.fifo.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.fifo.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.fifo.m_axis_tlast.val();
        self.m_axis_tuser.next = self.fifo.m_axis_tuser.val();
        self.m_axis_tvalid.next = self.fifo.m_axis_tvalid.val();
        self.fifo.m_axis_tready.next = self.m_axis_tready.val();
        self.rsv_add.next = self.k_zero12.val();
        self.rsv_sub.next = self.k_zero12.val();
        if self.fifo.m_axis_tvalid.val() & self.m_axis_tready.val() {
            self.rsv_sub.next = self.k_one12.val();
        }
        if self.rd_wlast.val() {
            self.fifo.wr_keep.next = self.rd_lkeep.q.val();
        }

        self.st.d.next = self.st.q.val();
        self.hdr.d.next = self.hdr.q.val();
        self.qp_row.d.next = self.qp_row.q.val();
        self.mr_row.d.next = self.mr_row.q.val();
        self.st_row.d.next = self.st_row.q.val();
        self.verdict.d.next = self.verdict.q.val();
        self.addr.d.next = self.addr.q.val();
        self.mr_ok.d.next = self.mr_ok.q.val();
        self.n_epsn.d.next = self.n_epsn.q.val();
        self.n_msn.d.next = self.n_msn.q.val();
        self.n_nak.d.next = self.n_nak.q.val();
        self.n_open.d.next = self.n_open.q.val();
        self.n_addr.d.next = self.n_addr.q.val();
        self.n_resid.d.next = self.n_resid.q.val();
        self.n_wlen.d.next = self.n_wlen.q.val();
        self.n_err.d.next = self.n_err.q.val();
        self.n_rcount.d.next = self.n_rcount.q.val();
        self.n_rhead.d.next = self.n_rhead.q.val();
        self.n_write.d.next = self.n_write.q.val();
        self.r_send.d.next = self.r_send.q.val();
        self.r_read.d.next = self.r_read.q.val();
        self.r_op.d.next = self.r_op.q.val();
        self.r_syn.d.next = self.r_syn.q.val();
        self.r_psn.d.next = self.r_psn.q.val();
        self.r_msn.d.next = self.r_msn.q.val();
        self.r_orig.d.next = self.r_orig.q.val();
        self.dma_addr.d.next = self.dma_addr.q.val();
        self.slot.d.next = self.slot.q.val();
        self.e_kind.d.next = self.e_kind.q.val();
        self.e_first.d.next = self.e_first.q.val();
        self.e_last.d.next = self.e_last.q.val();
        self.e_va.d.next = self.e_va.q.val();
        self.e_len.d.next = self.e_len.q.val();
        self.e_rkey.d.next = self.e_rkey.q.val();
        self.at_new.d.next = self.at_new.q.val();
        self.rd_addr.d.next = self.rd_addr.q.val();
        self.rd_left.d.next = self.rd_left.q.val();
        self.rd_psn.d.next = self.rd_psn.q.val();
        self.rd_first.d.next = self.rd_first.q.val();
        self.rd_mid.d.next = self.rd_mid.q.val();
        self.rd_seg.d.next = self.rd_seg.q.val();
        self.rd_op.d.next = self.rd_op.q.val();
        self.rd_last.d.next = self.rd_last.q.val();
        self.rd_aeth.d.next = self.rd_aeth.q.val();
        self.rd_outs_m1.d.next = self.rd_outs_m1.q.val();
        self.rd_lkeep.d.next = self.rd_lkeep.q.val();
        self.rd_off.d.next = self.rd_off.q.val();
        self.rd_ocnt.d.next = self.rd_ocnt.q.val();
        self.rd_prev.d.next = self.rd_prev.q.val();
        self.rd_have.d.next = self.rd_have.q.val();
        self.rd_err.d.next = self.rd_err.q.val();
        self.cnt_exec.d.next = self.cnt_exec.q.val();
        self.cnt_drop.d.next = self.cnt_drop.q.val();
        self.cnt_dmae.d.next = self.cnt_dmae.q.val();
        self.cnt_rep.d.next = self.cnt_rep.q.val();
        self.cnt_dupd.d.next = self.cnt_dupd.q.val();

        self.adopt_now.next = (self.st.q.val() == 10)
            & (self.pf.q.val() == 5)
            & !self.r_send.q.val()
            & !self.r_read.q.val()
            & !self.c_pend.q.val();
        self.starting.next = (self.st.q.val() == 1)
            | ((self.st.q.val() == 0) & ((self.pf.q.val() == 5) | (self.pf.q.val() == 6)))
            | self.adopt_now.val();
        self.looking.next = ((self.st.q.val() == 1)
            | ((self.pf.q.val() == 1) & self.pf_write.val()))
            & !self.qp_hi.val();
        // ---- A request starting (LOOK, or ACT or the drop straight from the front half):
        // nothing of the one before carries over.
        if self.starting.val() {
            self.wq_have.d.next = false;
            self.fl_on.d.next = false;
            self.fl_pend.d.next = false;
            self.c_pend.d.next = false;
            self.r_send.d.next = false;
            self.r_read.d.next = false;
            self.n_write.d.next = false;
            self.has_pay.d.next = self.req.len.val().any();
        }
        // ---- LOOK (here or in the front half): the QP and region rows (answered next
        // cycle); the state row's read. ROWS: the rows, the state row forwarded from the
        // packet in progress when it writes back the same QP's (never in LOOK's own ROWS:
        // LOOK clears `n_write`). The check's answer, for either.
        if self.looking.val() {
            self.qp_look_valid.next = self.mr_look_ready.val();
            self.mr_look_valid.next = self.qp_look_ready.val();
        }
        self.looked.next = self.looking.val() & self.qp_look_ready.val() & self.mr_look_ready.val();
        if (self.st.q.val() == 2) | (self.pf.q.val() == 2) {
            self.qp_row.d.next = self.qp_got_data.val();
            self.mr_row.d.next = self.mr_got_data.val();
            self.st_row.d.next = self.mem.read_data.val();
            if self.pf_fwd.val() {
                self.st_row.d.next = self.st_out.word.val();
            }
        }
        if ((self.st.q.val() == 4) | (self.pf.q.val() == 4)) & self.chk.m_valid.val() {
            self.verdict.d.next = self.chk.m_verdict.val();
            self.addr.d.next = self.chk.m_addr.val();
            self.mr_ok.d.next = self.chk.m_mr_ok.val();
        }
        // ---- The front half: the next request taken while this one's payload goes to host
        // memory (PF_TAKE), then as LOOK, the rows, PRE and the check would, into the same
        // registers (the back half reads only what ACT kept).
        // PF_TAKE's header is taken at the end of this function.
        if self.pf.q.val() == 1 {
            if !self.pf_write.val() {
                self.pf.d.next = 7.into();
            } else if self.qp_hi.val() {
                self.pf.d.next = 6.into();
            } else if self.looked.val() {
                self.pf.d.next = 2.into();
            }
        }
        if self.pf.q.val() == 2 {
            self.pf.d.next = 3.into();
        }
        if self.pf.q.val() == 3 {
            if self.qp_ok.val() {
                if self.chk.s_ready.val() {
                    self.pf.d.next = 4.into();
                }
            } else {
                self.pf.d.next = 6.into();
            }
        }
        if (self.pf.q.val() == 4) & self.chk.m_valid.val() {
            self.pf.d.next = 5.into();
        }
        // The duplicate scan's tests (states 12-26 below), registered every clock.
        self.t_match.d.next = self.s_match.val();
        self.t_in.d.next = self.in_range.val();
        // ---- The state machine: one arm per state (a case, so that each register's next
        // value is one parallel mux over the states, not a chain of one mux per state).
        match self.st.q.val().index() {
            0 => {
                // ---- IDLE: a state row to reset, else the next request.
                // The front half's request first: it came before any reset waiting now.
                if self.pf.q.val() == 5 {
                    self.pf.d.next = 0.into();
                    self.st.d.next = 5.into();
                } else if self.pf.q.val() == 6 {
                    self.cnt_drop.d.next = self.cnt_drop.q.val() + self.k_one32.val();
                    self.pf.d.next = 0.into();
                    self.st.d.next = 8.into();
                } else if self.pf.q.val() == 7 {
                    self.pf.d.next = 0.into();
                    self.st.d.next = 1.into();
                } else if self.pf.q.val().any() {
                    // The front half is still on its request.
                } else if self.s_init_valid.val() {
                    self.mem.write_address.next = self.s_init_qp.val();
                    self.st_out.epsn.next = self.s_init_psn.val();
                    self.st_out.msn.next = 0.into();
                    self.st_out.nak.next = 0.into();
                    self.st_out.open.next = 0.into();
                    self.st_out.addr.next = 0.into();
                    self.st_out.resid.next = self.k_zero32.val();
                    self.st_out.wlen.next = self.k_zero32.val();
                    self.st_out.err.next = 0.into();
                    self.st_out.rcount.next = 0.into();
                    self.st_out.rhead.next = 0.into();
                    self.mem.write_enable.next = true;
                }
                // Else the next request's header: taken at the end of this function.
            }
            1 => {
                if self.qp_hi.val() {
                    self.cnt_drop.d.next = self.cnt_drop.q.val() + self.k_one32.val();
                    self.st.d.next = 8.into();
                } else if self.looked.val() {
                    self.st.d.next = 2.into();
                }
            }
            2 => {
                self.st.d.next = 3.into();
            }
            3 => {
                // ---- PRE: the QP-level checks; then the responder's.
                if self.qp_ok.val() {
                    if self.need_wqe.q.val() & !self.wq_have.q.val() {
                        self.st.d.next = 27.into();
                    } else if self.chk.s_ready.val() {
                        self.st.d.next = 4.into();
                    }
                } else {
                    self.cnt_drop.d.next = self.cnt_drop.q.val() + self.k_one32.val();
                    self.st.d.next = 8.into();
                }
            }
            4 => {
                if self.chk.m_valid.val() {
                    self.st.d.next = 5.into();
                }
            }
            5 => {
                // ---- ACT: the next state row and the response, by verdict.
                self.b_row.d.next = self.req.dqp.val().get_bits::<A>(0);
                self.b_dest.d.next = self.qpf.dest.val();
                self.b_pkey.d.next = self.qpf.pkey.val();
                self.sc_a0.d.next = self.stf.addr.val();
                if self.first.val() | self.only.val() {
                    self.sc_a0.d.next = self.addr.q.val();
                }
                self.sc_l0.d.next = self.req.len.val();
                self.sc_a1.d.next = self.k_zero64.val();
                self.sc_l1.d.next = 0.into();
                self.sc_a2.d.next = self.k_zero64.val();
                self.sc_l2.d.next = 0.into();
                if self.send.val() {
                    self.sc_a0.d.next = self.pieces.m_addr0.val();
                    self.sc_l0.d.next = self.pieces.m_len0.val();
                    self.sc_a1.d.next = self.pieces.m_addr1.val();
                    self.sc_l1.d.next = self.pieces.m_len1.val();
                    self.sc_a2.d.next = self.pieces.m_addr2.val();
                    self.sc_l2.d.next = self.pieces.m_len2.val();
                }
                self.n_epsn.d.next = self.stf.epsn.val();
                self.n_msn.d.next = self.stf.msn.val();
                self.n_nak.d.next = self.stf.nak.val();
                self.n_open.d.next = self.stf.open.val();
                self.n_addr.d.next = self.stf.addr.val();
                self.n_resid.d.next = self.stf.resid.val();
                self.n_wlen.d.next = self.stf.wlen.val();
                self.n_err.d.next = 0.into();
                self.n_rcount.d.next = self.stf.rcount.val();
                self.n_rhead.d.next = self.stf.rhead.val();
                self.n_write.d.next = true;
                self.r_send.d.next = true;
                self.r_op.d.next = self.k_ack_op.val();
                self.r_psn.d.next = self.req.psn.val();
                self.r_msn.d.next = self.stf.msn.val();
                self.r_syn.d.next = self.k_syn_ack.val();
                self.r_orig.d.next = self.k_zero64.val();
                self.dma_addr.d.next = self.stf.addr.val();
                if self.first.val() | self.only.val() | self.atomic.val() {
                    self.dma_addr.d.next = self.addr.q.val();
                }
                // The READ run (execution or replay) starts at the request.
                self.rd_addr.d.next = self.addr.q.val();
                self.rd_left.d.next = self.dlen.val();
                self.rd_psn.d.next = self.req.psn.val();
                self.rd_first.d.next = true;
                self.rd_mid.d.next = false;
                self.slot.d.next = self.stf.rhead.val();
                self.e_kind.d.next = 0.into();
                if self.atomic.val() {
                    self.e_kind.d.next = 1.into();
                }
                self.e_first.d.next = self.req.psn.val();
                self.e_last.d.next = self.req.psn.val();
                self.e_va.d.next = self.req.va.val();
                self.e_len.d.next = self.dlen.val();
                self.e_rkey.d.next = self.req.key.val();
                // A completion (SEND, WRITE with immediate); a fatal error's flush, whose first
                // request is the receive in progress when a SEND is open.
                self.c_pend.d.next = false;
                self.c_status.d.next = 0.into();
                self.c_op.d.next = 128.into();
                self.c_flags.d.next = 0.into();
                self.c_len.d.next = self.pieces.m_end.val().get_bits::<32>(0);
                self.c_imm.d.next = self.k_zero32.val();
                if self.imm.val() {
                    self.c_flags.d.next = 2.into();
                    self.c_imm.d.next = self.req.mid.val().get_bits::<32>(32);
                }
                self.fl_pend.d.next = false;
                self.fl_status.d.next = 5.into();
                self.fl_len.d.next = self.k_zero32.val();
                if self.stf.open.val() == 1 {
                    self.fl_status.d.next = 9.into();
                    self.fl_len.d.next = self.stf.wlen.val();
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
                            self.n_resid.d.next = self.dlen.val() - self.len32.val();
                            self.n_wlen.d.next = self.dlen.val();
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
                        // With immediate: the receive request completes with the WRITE's length.
                        if self.wimm_end.val() {
                            self.c_pend.d.next = true;
                            self.c_op.d.next = 129.into();
                            self.c_len.d.next = self.stf.wlen.val();
                            if self.only.val() {
                                self.c_len.d.next = self.dlen.val();
                            }
                        }
                        self.r_send.d.next = self.req.ack.val().any();
                        if self.req.len.val().any() {
                            self.st.d.next = 6.into();
                        }
                    } else if self.read.val() | self.atomic.val() {
                        // Kept in the slot at RES_HEAD (RES_WR), then the responses (READ) or the
                        // read-modify-write and its acknowledge (atomic).
                        self.cnt_exec.d.next = self.cnt_exec.q.val() + self.k_one32.val();
                        self.n_nak.d.next = 0.into();
                        self.n_msn.d.next = self.msn_next.val();
                        self.r_msn.d.next = self.msn_next.val();
                        self.n_rcount.d.next = self.count1.val();
                        self.n_rhead.d.next = self.stf.rhead.val() + self.k_one4.val();
                        if self.read.val() {
                            self.n_epsn.d.next = self.rd_endpsn.q.val();
                            self.e_last.d.next = self.rd_lastpsn.q.val();
                            self.r_send.d.next = false;
                            self.r_read.d.next = true;
                            self.st.d.next = 24.into();
                        } else {
                            self.n_epsn.d.next = self.psn_next.val();
                            self.r_op.d.next = self.k_atomic_ack_op.val();
                            self.st.d.next = 19.into();
                        }
                    } else {
                        // A SEND: its bytes into the receive request's entries, from where the
                        // message's earlier packets left off; its last packet completes it. A
                        // request whose entries the NIC may not write (first packet) or too short
                        // for the message is a fatal error, nothing written.
                        self.cnt_exec.d.next = self.cnt_exec.q.val() + self.k_one32.val();
                        self.n_nak.d.next = 0.into();
                        if self.wq_ok.val() & !self.pieces.m_over.val() {
                            self.n_epsn.d.next = self.psn_next.val();
                            self.n_open.d.next = 1.into();
                            self.n_wlen.d.next = self.pieces.m_end.val().get_bits::<32>(0);
                            if self.s_last.val() | self.s_only.val() {
                                self.n_open.d.next = 0.into();
                                self.n_msn.d.next = self.msn_next.val();
                                self.r_msn.d.next = self.msn_next.val();
                                self.c_pend.d.next = true;
                            }
                            self.r_send.d.next = self.req.ack.val().any();
                            if self.req.len.val().any() {
                                self.st.d.next = 6.into();
                            }
                        } else {
                            self.cnt_rref.d.next = self.cnt_rref.q.val() + self.k_one32.val();
                            self.n_err.d.next = 1.into();
                            self.r_syn.d.next = self.k_syn_inv.val();
                            self.fl_pend.d.next = true;
                            self.fl_status.d.next = 1.into();
                            self.fl_len.d.next = self.pieces.m_off.val().get_bits::<32>(0);
                            if !self.wq_ok.val() & (self.s_first.val() | self.s_only.val()) {
                                self.r_syn.d.next = self.k_syn_op.val();
                                self.fl_status.d.next = 2.into();
                            }
                        }
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
                    // A duplicate SEND or WRITE is ACKed with ePSN - 1; a READ or atomic is looked
                    // for among the kept ones, oldest first (as the model looks), and dropped when
                    // none is kept.
                    self.n_write.d.next = false;
                    self.r_send.d.next = self.sendwrite.val();
                    self.r_psn.d.next = self.psn_prev.val();
                    if self.read.val() | self.atomic.val() {
                        self.r_send.d.next = false;
                        self.slot.d.next = self.oldest.val();
                        self.st.d.next = 12.into();
                        if !self.stf.rcount.val().any() {
                            self.cnt_dupd.d.next = self.cnt_dupd.q.val() + self.k_one32.val();
                            self.st.d.next = 8.into();
                        }
                    }
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
                    self.fl_pend.d.next = true;
                }
                if (self.verdict.q.val() == 9)
                    | (self.verdict.q.val() == 10)
                    | (self.verdict.q.val() == 11)
                    | (self.verdict.q.val() == 12)
                {
                    self.n_nak.d.next = 0.into();
                    self.n_err.d.next = 1.into();
                    self.r_syn.d.next = self.k_syn_acc.val();
                    self.fl_pend.d.next = true;
                    if self.stf.open.val() == 1 {
                        self.fl_status.d.next = 10.into();
                    }
                }
            }
            6 => {
                // ---- The WRITE's payload into host memory.
                self.scat.s_cmd_valid.next = true;
                if self.scat.s_cmd_ready.val() {
                    self.st.d.next = 7.into();
                }
            }
            7 => {
                // The scatter takes the payload; what it leaves of it is discarded (DRAIN).
                self.s_axis_tready.next = self.scat.s_axis_tready.val();
                self.scat.m_done_ready.next = true;
                if self.scat.m_done_valid.val() {
                    if self.scat.m_done_err.val() {
                        self.cnt_dmae.d.next = self.cnt_dmae.q.val() + self.k_one32.val();
                    }
                    self.st.d.next = 8.into();
                    if self.scat.m_done_tail.val() {
                        self.st.d.next = 10.into();
                    }
                }
            }
            8 => {
                // ---- A payload not written: discarded.
                self.s_axis_tready.next = true;
                if !self.has_pay.q.val() {
                    self.st.d.next = 10.into();
                }
                if self.s_axis_tvalid.val() & self.s_axis_tlast.val() {
                    self.st.d.next = 10.into();
                }
            }
            10 => {
                // ---- COMMIT: the state row written back; then the response, if any.
                self.mem.write_enable.next = self.n_write.q.val();
                self.st.d.next = 0.into();
                if self.adopt_now.val() {
                    // Nothing more for this request: the front half's goes to ACT (as IDLE).
                    self.pf.d.next = 0.into();
                    self.st.d.next = 5.into();
                }
                if self.r_send.q.val() {
                    self.st.d.next = 11.into();
                }
                if self.r_read.q.val() {
                    self.st.d.next = 14.into();
                }
                if self.c_pend.q.val() {
                    self.c_beat.d.next = 0.into();
                    self.st.d.next = 29.into();
                }
            }
            11 => {
                if self.m_desc_ready.val() {
                    self.st.d.next = 0.into();
                    if self.fl_pend.q.val() {
                        self.fl_on.d.next = true;
                        self.st.d.next = 27.into();
                    }
                }
            }
            27 => {
                // ---- The receive request at the ring's head (RQ_REQ, RQ_WAIT): for a request that
                // uses one (then the check), or for the flush (then its completion, or the end).
                self.recv.s_req_valid.next = true;
                if self.recv.s_req_ready.val() {
                    self.st.d.next = 28.into();
                }
            }
            28 => {
                if self.recv.m_valid.val() {
                    self.recv.m_ready.next = true;
                    if self.recv.m_dma_err.val() {
                        self.cnt_dmae.d.next = self.cnt_dmae.q.val() + self.k_one32.val();
                    }
                    if self.fl_on.q.val() {
                        self.st.d.next = 0.into();
                        if !self.recv.m_empty.val() & !self.recv.m_dma_err.val() {
                            self.c_status.d.next = self.fl_status.q.val();
                            self.c_len.d.next = self.fl_len.q.val();
                            self.c_op.d.next = 128.into();
                            self.c_flags.d.next = 0.into();
                            self.c_imm.d.next = self.k_zero32.val();
                            self.c_beat.d.next = 0.into();
                            self.st.d.next = 29.into();
                        }
                    } else {
                        // A request read refused: the request is dropped (the requester sends it
                        // again).
                        self.wq_have.d.next = true;
                        self.st.d.next = 3.into();
                        if self.recv.m_dma_err.val() {
                            self.st.d.next = 8.into();
                        }
                    }
                }
            }
            29 => {
                // ---- CQE: the completion's four beats; then the request committed (RQ_COMMIT).
                if self.m_cqe_ready.val() {
                    self.c_beat.d.next = self.c_beat.q.val() + self.k_one2.val();
                    if self.c_beat.q.val() == 3 {
                        self.st.d.next = 30.into();
                    }
                }
            }
            30 => {
                self.rq_commit_valid.next = true;
                if self.rq_commit_ready.val() {
                    // The flush goes on with the next request (completing with WR_FLUSH_ERR);
                    // else the response, if any.
                    self.fl_status.d.next = 5.into();
                    self.fl_len.d.next = self.k_zero32.val();
                    self.st.d.next = 0.into();
                    if self.r_send.q.val() {
                        self.st.d.next = 11.into();
                    }
                    if self.fl_on.q.val() {
                        self.st.d.next = 27.into();
                    }
                }
            }
            12 => {
                // ---- A duplicate READ or atomic: the kept slots, one per five clocks (the
                // address, the block RAM's output, its register, the ends' registers, the
                // tests' registers).
                self.st.d.next = 13.into();
            }
            13 => {
                self.st.d.next = 25.into();
            }
            25 => {
                self.st.d.next = 9.into();
            }
            9 => {
                self.st.d.next = 26.into();
            }
            26 => {
                if !self.t_match.q.val() {
                    self.slot.d.next = self.slot.q.val() + self.k_one4.val();
                    self.st.d.next = 12.into();
                    if self.slot.q.val() == self.newest.val() {
                        self.cnt_dupd.d.next = self.cnt_dupd.q.val() + self.k_one32.val();
                        self.st.d.next = 8.into();
                    }
                } else {
                    self.st.d.next = 8.into();
                    if self.atomic.val() {
                        self.cnt_rep.d.next = self.cnt_rep.q.val() + self.k_one32.val();
                        self.r_send.d.next = true;
                        self.r_op.d.next = self.k_atomic_ack_op.val();
                        self.r_psn.d.next = self.req.psn.val();
                        self.r_orig.d.next = self.rsf.va.val();
                    } else if self.t_in.q.val() {
                        // Answered again from its PSN; the slot's VA moves to the replay's.
                        self.cnt_rep.d.next = self.cnt_rep.q.val() + self.k_one32.val();
                        self.r_read.d.next = true;
                        self.rd_mid.d.next = self.req.psn.val() != self.rsf.first.val();
                        // Written in RES_WR, from registers: the slot's block RAM is far from
                        // the opcode decode and the tests.
                        self.e_kind.d.next = self.rsf.kind.val();
                        self.e_first.d.next = self.rsf.first.val();
                        self.e_last.d.next = self.rsf.last.val();
                        self.e_va.d.next = self.req.va.val();
                        self.e_len.d.next = self.rsf.len.val();
                        self.e_rkey.d.next = self.rsf.rkey.val();
                        self.st.d.next = 24.into();
                    } else {
                        self.cnt_dupd.d.next = self.cnt_dupd.q.val() + self.k_one32.val();
                    }
                }
            }
            24 => {
                // ---- RES_WR: the executed READ or atomic into its slot (or a replayed READ's new VA
                // into its own).
                self.res.write_enable.next = true;
                self.st.d.next = 8.into();
            }
            19 => {
                // ---- An atomic: read the 8 bytes, write the new value, then the acknowledge.
                self.m_dma_rd_req_valid.next = true;
                self.m_dma_rd_req_addr.next = self.dma_addr.q.val();
                self.m_dma_rd_req_len.next = self.k_eight16.val();
                if self.m_dma_rd_req_ready.val() {
                    self.st.d.next = 20.into();
                }
            }
            20 => {
                self.m_dma_rd_data_ready.next = true;
                if self.m_dma_rd_data_valid.val() {
                    if self.m_dma_rd_data_err.val() {
                        self.cnt_dmae.d.next = self.cnt_dmae.q.val() + self.k_one32.val();
                    }
                    // CompareSwap 0x13: the swap value when the original equals the compare;
                    // FetchAdd 0x14: the sum.
                    self.r_orig.d.next = self.m_dma_rd_data.val();
                    self.e_va.d.next = self.m_dma_rd_data.val();
                    self.at_new.d.next = self.m_dma_rd_data.val() + self.req.mid.val();
                    if self.req.op.val() == 19 {
                        self.at_new.d.next = self.m_dma_rd_data.val();
                        if self.m_dma_rd_data.val() == self.req.cmp.val() {
                            self.at_new.d.next = self.req.mid.val();
                        }
                    }
                    self.st.d.next = 21.into();
                }
            }
            21 => {
                self.m_dma_wr_req_valid.next = true;
                self.m_dma_wr_req_addr.next = self.dma_addr.q.val();
                self.m_dma_wr_req_len.next = self.k_eight16.val();
                if self.m_dma_wr_req_ready.val() {
                    self.st.d.next = 22.into();
                }
            }
            22 => {
                self.m_dma_wr_data_valid.next = true;
                self.m_dma_wr_data.next = self.at_new.q.val();
                self.m_dma_wr_data_keep.next = self.k_all8.val();
                self.m_dma_wr_data_last.next = true;
                if self.m_dma_wr_data_ready.val() {
                    self.st.d.next = 23.into();
                }
            }
            23 => {
                if self.m_dma_wr_done_valid.val() {
                    if self.m_dma_wr_done_err.val() {
                        self.cnt_dmae.d.next = self.cnt_dmae.q.val() + self.k_one32.val();
                    }
                    self.st.d.next = 24.into();
                }
            }
            14 => {
                // ---- READ responses: a segment at a time.
                // FIRST 0x0D, MIDDLE 0x0E, LAST 0x0F, ONLY 0x10; a replay from inside the
                // original starts with MIDDLE or LAST.
                self.rd_seg.d.next = self.seg.val();
                self.rd_last.d.next = !self.seg_gt.val();
                self.rd_off.d.next = self.rd_addr.q.val().get_bits::<3>(0);
                self.rd_outs_m1.d.next = self.seg_m1l.val().get_bits::<10>(0);
                if self.seg_gt.val() {
                    self.rd_outs_m1.d.next = self.mtu_wm1.q.val();
                }
                self.rd_lkeep.d.next = self.k_all8.val();
                if self.seg.val().get_bits::<3>(0) == 1 {
                    self.rd_lkeep.d.next = 1.into();
                }
                if self.seg.val().get_bits::<3>(0) == 2 {
                    self.rd_lkeep.d.next = 3.into();
                }
                if self.seg.val().get_bits::<3>(0) == 3 {
                    self.rd_lkeep.d.next = 7.into();
                }
                if self.seg.val().get_bits::<3>(0) == 4 {
                    self.rd_lkeep.d.next = 15.into();
                }
                if self.seg.val().get_bits::<3>(0) == 5 {
                    self.rd_lkeep.d.next = 31.into();
                }
                if self.seg.val().get_bits::<3>(0) == 6 {
                    self.rd_lkeep.d.next = 63.into();
                }
                if self.seg.val().get_bits::<3>(0) == 7 {
                    self.rd_lkeep.d.next = 127.into();
                }
                self.rd_ocnt.d.next = 0.into();
                self.rd_have.d.next = false;
                self.rd_err.d.next = false;
                self.rd_aeth.d.next = true;
                self.rd_op.d.next = 14.into();
                if self.seg_gt.val() {
                    self.rd_aeth.d.next = false;
                    if self.rd_first.q.val() & !self.rd_mid.q.val() {
                        self.rd_op.d.next = 13.into();
                        self.rd_aeth.d.next = true;
                    }
                } else {
                    self.rd_op.d.next = 15.into();
                    if self.rd_first.q.val() & !self.rd_mid.q.val() {
                        self.rd_op.d.next = 16.into();
                    }
                }
                self.st.d.next = 15.into();
                if !self.seg.val().any() {
                    self.st.d.next = 18.into();
                }
            }
            15 => {
                // The read, once the FIFO has room for the segment's words.
                if self.fits.val() <= self.k_reserve.val() {
                    self.m_dma_rd_req_valid.next = true;
                    if self.m_dma_rd_req_ready.val() {
                        self.rsv_add.next =
                            bit_cast::<12, 10>(self.rd_outs_m1.q.val()) + self.k_one12.val();
                        self.st.d.next = 16.into();
                    }
                }
            }
            16 => {
                // The data, realigned into the FIFO; the segment committed with its last word.
                self.m_dma_rd_data_ready.next = true;
                if self.m_dma_rd_data_valid.val() {
                    self.rd_prev.d.next = self.m_dma_rd_data.val();
                    self.rd_have.d.next = true;
                    if self.m_dma_rd_data_err.val() {
                        self.rd_err.d.next = true;
                    }
                    if !self.rd_off.q.val().any() | self.rd_have.q.val() {
                        self.fifo.wr_en.next = true;
                        self.fifo.commit.next = self.rd_wlast.val();
                        self.rd_ocnt.d.next = self.rd_ocnt.q.val() + self.k_one10.val();
                    }
                    if self.m_dma_rd_data_last.val() {
                        self.st.d.next = 17.into();
                        if (!self.rd_off.q.val().any() | self.rd_have.q.val()) & self.rd_wlast.val()
                        {
                            self.st.d.next = 18.into();
                        }
                    }
                }
            }
            17 => {
                self.fifo.wr_en.next = true;
                self.fifo.wr_user.next = self.rd_err.q.val();
                self.fifo.commit.next = true;
                self.st.d.next = 18.into();
            }
            18 => {
                if self.m_desc_ready.val() {
                    if self.rd_err.q.val() {
                        self.cnt_dmae.d.next = self.cnt_dmae.q.val() + self.k_one32.val();
                    }
                    self.rd_addr.d.next =
                        self.rd_addr.q.val() + bit_cast::<64, 16>(self.rd_seg.q.val());
                    self.rd_left.d.next =
                        self.rd_left.q.val() - bit_cast::<32, 16>(self.rd_seg.q.val());
                    self.rd_psn.d.next = self.rd_psn.q.val() + self.k_one24.val();
                    self.rd_first.d.next = false;
                    self.st.d.next = 14.into();
                    if self.rd_last.q.val() {
                        self.st.d.next = 0.into();
                    }
                }
                self.ack.op.next = self.rd_op.q.val();
                self.ack.psn.next = self.rd_psn.q.val();
                self.ack.len.next = self.rd_seg.q.val();
                self.ack.va.next = self.k_zero64.val();
                self.ack.key.next = bit_cast::<32, 8>(self.k_syn_ack.val()) << 24
                    | bit_cast::<32, 24>(self.r_msn.q.val());
                if !self.rd_aeth.q.val() {
                    self.ack.key.next = self.k_zero32.val();
                }
            }
            _ => {}
        }
        self.rsv_addq.d.next = self.rsv_add.val();
        self.rsv.d.next = self.rsv.q.val() + self.rsv_addq.q.val() - self.rsv_sub.val();

        self.cnt_executed.next = self.cnt_exec.q.val();
        self.cnt_dropped.next = self.cnt_drop.q.val();
        self.cnt_dma_err.next = self.cnt_dmae.q.val();
        self.cnt_replayed.next = self.cnt_rep.q.val();
        self.cnt_dup_dropped.next = self.cnt_dupd.q.val();
        self.cnt_recv_refused.next = self.cnt_rref.q.val();
        // ---- A header taken, in IDLE or PF_TAKE. Last of all the assignments to `st` and
        // `pf` (none of the others is for these states), so that the header's valid, which
        // comes through the demultiplexer, reaches the state registers through the last mux
        // only, not through every state's.
        if (self.st.q.val() == 0) & !self.pf.q.val().any() & !self.s_init_valid.val() {
            self.s_hdr_ready.next = true;
            if self.s_hdr_valid.val() {
                self.hdr.d.next = self.s_hdr_data.val();
                self.st.d.next = 1.into();
            }
        }
        if (self.pf.q.val() == 0)
            & (self.st.q.val() == 7)
            & !self.c_pend.q.val()
            & !self.fl_pend.q.val()
            & !self.s_init_valid.val()
        {
            self.s_hdr_ready.next = true;
            if self.s_hdr_valid.val() {
                self.hdr.d.next = self.s_hdr_data.val();
                self.pf.d.next = 1.into();
            }
        }
        if self.reset.val() {
            self.st.d.next = 0.into();
            self.pf.d.next = 0.into();
            self.rsv.d.next = self.k_zero12.val();
            self.rsv_addq.d.next = self.k_zero12.val();
            self.cnt_exec.d.next = self.k_zero32.val();
            self.cnt_drop.d.next = self.k_zero32.val();
            self.cnt_dmae.d.next = self.k_zero32.val();
            self.cnt_rep.d.next = self.k_zero32.val();
            self.cnt_dupd.d.next = self.k_zero32.val();
            self.cnt_rref.d.next = self.k_zero32.val();
        }
    }
}
