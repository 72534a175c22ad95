//! The DMA port and the arbiter that shares it between two engines (more engines share it
//! through a tree of arbiters: an arbiter is itself a client of the one above).
//!
//! The DMA port hides the host bus (PCIe, or the simulated device's memory) behind one shape,
//! the same for every client and for the host side (`m_dma_*`):
//! - read: request `rd_req {addr, len, tag}` -> `ceil(len / 8)` data beats `rd_data {data,
//!   last, err, tag}`, byte `addr + 8 k + i` in bits `8 i + 7 .. 8 i` of beat `k`, in request
//!   order; `err` on every beat of a read the host refused (outside every mapped buffer);
//! - write: request `wr_req {addr, len, tag}`, then data beats `wr_data {data, keep, last}`,
//!   at most `len` bytes, contiguous from `addr`, the last beat marked; then `wr_done {tag,
//!   err}` once the bytes are in host memory (or refused). Done has no ready: clients always
//!   take it.
//!
//! Read addresses are 8-byte aligned; a write may start at any byte (the bytes of its beats
//! follow one another from `addr`: the responder writes a WRITE's payload where its VA
//! falls, and the host side aligns); `len` is 1..=65535 bytes; a client's tags are `T` bits and
//! the host side's `M = T + 1` (the arbiter adds the client's number as the top bit and
//! routes the answers by it); the host interface's top arbiter has `T = 7`, `M = 8`. Every
//! channel has valid and ready (but done); a request, once valid, holds its fields until
//! taken. The arbiter keeps offering the client it offered until the host takes the request,
//! and offers exactly that client's valid: a client that withdraws anyway is not taken in its
//! absence.
//!
//! Deadlock: read data of both clients shares one channel, so a client that stops taking its
//! data would stall the other's. A client therefore issues a read only when it has room for
//! all of the data (the raw transmit engine reserves its FIFO space first), the rule of
//! reserving a response slot before accepting that hardware RNICs learned the hard way.
//! Writes are granted one at a time, each request with its data burst.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct DmaArbiter<const T: usize, const M: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    pub s0_rd_req_valid: Signal<In, Bit>,
    pub s0_rd_req_ready: Signal<Out, Bit>,
    pub s0_rd_req_addr: Signal<In, Bits<64>>,
    pub s0_rd_req_len: Signal<In, Bits<16>>,
    pub s0_rd_req_tag: Signal<In, Bits<T>>,
    pub s0_rd_data_valid: Signal<Out, Bit>,
    pub s0_rd_data_ready: Signal<In, Bit>,
    pub s0_wr_req_valid: Signal<In, Bit>,
    pub s0_wr_req_ready: Signal<Out, Bit>,
    pub s0_wr_req_addr: Signal<In, Bits<64>>,
    pub s0_wr_req_len: Signal<In, Bits<16>>,
    pub s0_wr_req_tag: Signal<In, Bits<T>>,
    pub s0_wr_data_valid: Signal<In, Bit>,
    pub s0_wr_data_ready: Signal<Out, Bit>,
    pub s0_wr_data: Signal<In, Bits<64>>,
    pub s0_wr_data_keep: Signal<In, Bits<8>>,
    pub s0_wr_data_last: Signal<In, Bit>,
    pub s0_wr_done_valid: Signal<Out, Bit>,

    pub s1_rd_req_valid: Signal<In, Bit>,
    pub s1_rd_req_ready: Signal<Out, Bit>,
    pub s1_rd_req_addr: Signal<In, Bits<64>>,
    pub s1_rd_req_len: Signal<In, Bits<16>>,
    pub s1_rd_req_tag: Signal<In, Bits<T>>,
    pub s1_rd_data_valid: Signal<Out, Bit>,
    pub s1_rd_data_ready: Signal<In, Bit>,
    pub s1_wr_req_valid: Signal<In, Bit>,
    pub s1_wr_req_ready: Signal<Out, Bit>,
    pub s1_wr_req_addr: Signal<In, Bits<64>>,
    pub s1_wr_req_len: Signal<In, Bits<16>>,
    pub s1_wr_req_tag: Signal<In, Bits<T>>,
    pub s1_wr_data_valid: Signal<In, Bit>,
    pub s1_wr_data_ready: Signal<Out, Bit>,
    pub s1_wr_data: Signal<In, Bits<64>>,
    pub s1_wr_data_keep: Signal<In, Bits<8>>,
    pub s1_wr_data_last: Signal<In, Bit>,
    pub s1_wr_done_valid: Signal<Out, Bit>,

    /// Read data and write done fields, shared by both clients (each has its own valid).
    pub rd_data: Signal<Out, Bits<64>>,
    pub rd_data_last: Signal<Out, Bit>,
    pub rd_data_err: Signal<Out, Bit>,
    pub rd_data_tag: Signal<Out, Bits<T>>,
    pub wr_done_tag: Signal<Out, Bits<T>>,
    pub wr_done_err: Signal<Out, Bit>,

    pub m_dma_rd_req_valid: Signal<Out, Bit>,
    pub m_dma_rd_req_ready: Signal<In, Bit>,
    pub m_dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_rd_req_len: Signal<Out, Bits<16>>,
    pub m_dma_rd_req_tag: Signal<Out, Bits<M>>,
    pub m_dma_rd_data_valid: Signal<In, Bit>,
    pub m_dma_rd_data_ready: Signal<Out, Bit>,
    pub m_dma_rd_data: Signal<In, Bits<64>>,
    pub m_dma_rd_data_last: Signal<In, Bit>,
    pub m_dma_rd_data_err: Signal<In, Bit>,
    pub m_dma_rd_data_tag: Signal<In, Bits<M>>,
    pub m_dma_wr_req_valid: Signal<Out, Bit>,
    pub m_dma_wr_req_ready: Signal<In, Bit>,
    pub m_dma_wr_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_wr_req_len: Signal<Out, Bits<16>>,
    pub m_dma_wr_req_tag: Signal<Out, Bits<M>>,
    pub m_dma_wr_data_valid: Signal<Out, Bit>,
    pub m_dma_wr_data_ready: Signal<In, Bit>,
    pub m_dma_wr_data: Signal<Out, Bits<64>>,
    pub m_dma_wr_data_keep: Signal<Out, Bits<8>>,
    pub m_dma_wr_data_last: Signal<Out, Bit>,
    pub m_dma_wr_done_valid: Signal<In, Bit>,
    pub m_dma_wr_done_tag: Signal<In, Bits<M>>,
    pub m_dma_wr_done_err: Signal<In, Bit>,

    /// The client served last (round robin), per direction.
    rd_last: DFF<Bit>,
    wr_last: DFF<Bit>,
    /// A request offered and not yet taken keeps its client.
    rd_lock: DFF<Bit>,
    rd_lock_sel: DFF<Bit>,
    wr_lock: DFF<Bit>,
    wr_lock_sel: DFF<Bit>,
    /// A write burst in progress; its client is `wr_last`, the one granted last.
    wr_busy: DFF<Bit>,

    rd_pick: Signal<Local, Bit>,
    wr_pick: Signal<Local, Bit>,
    rd_fire: Signal<Local, Bit>,
    wr_fire: Signal<Local, Bit>,
    /// The answer (read data, write done) is client 1's: the tag's client bit.
    rd_data_c1: Signal<Local, Bit>,
    wr_done_c1: Signal<Local, Bit>,
    tag_m: Signal<Local, Bits<M>>,
    wtag_m: Signal<Local, Bits<M>>,
    /// The client bit of a host-side tag (bit `T`).
    k_client: Constant<Bits<M>>,
}

impl<const T: usize, const M: usize> DmaArbiter<T, M> {
    pub fn new() -> Self {
        assert_eq!(M, T + 1, "the host side's tag is the client's and one bit");
        DmaArbiter {
            clock: Default::default(),
            reset: Default::default(),
            s0_rd_req_valid: Default::default(),
            s0_rd_req_ready: Default::default(),
            s0_rd_req_addr: Default::default(),
            s0_rd_req_len: Default::default(),
            s0_rd_req_tag: Default::default(),
            s0_rd_data_valid: Default::default(),
            s0_rd_data_ready: Default::default(),
            s0_wr_req_valid: Default::default(),
            s0_wr_req_ready: Default::default(),
            s0_wr_req_addr: Default::default(),
            s0_wr_req_len: Default::default(),
            s0_wr_req_tag: Default::default(),
            s0_wr_data_valid: Default::default(),
            s0_wr_data_ready: Default::default(),
            s0_wr_data: Default::default(),
            s0_wr_data_keep: Default::default(),
            s0_wr_data_last: Default::default(),
            s0_wr_done_valid: Default::default(),
            s1_rd_req_valid: Default::default(),
            s1_rd_req_ready: Default::default(),
            s1_rd_req_addr: Default::default(),
            s1_rd_req_len: Default::default(),
            s1_rd_req_tag: Default::default(),
            s1_rd_data_valid: Default::default(),
            s1_rd_data_ready: Default::default(),
            s1_wr_req_valid: Default::default(),
            s1_wr_req_ready: Default::default(),
            s1_wr_req_addr: Default::default(),
            s1_wr_req_len: Default::default(),
            s1_wr_req_tag: Default::default(),
            s1_wr_data_valid: Default::default(),
            s1_wr_data_ready: Default::default(),
            s1_wr_data: Default::default(),
            s1_wr_data_keep: Default::default(),
            s1_wr_data_last: Default::default(),
            s1_wr_done_valid: Default::default(),
            rd_data: Default::default(),
            rd_data_last: Default::default(),
            rd_data_err: Default::default(),
            rd_data_tag: Default::default(),
            wr_done_tag: Default::default(),
            wr_done_err: Default::default(),
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
            rd_last: Default::default(),
            wr_last: Default::default(),
            rd_lock: Default::default(),
            rd_lock_sel: Default::default(),
            wr_lock: Default::default(),
            wr_lock_sel: Default::default(),
            wr_busy: Default::default(),
            rd_pick: Default::default(),
            wr_pick: Default::default(),
            rd_fire: Default::default(),
            wr_fire: Default::default(),
            rd_data_c1: Default::default(),
            wr_done_c1: Default::default(),
            tag_m: Default::default(),
            wtag_m: Default::default(),
            k_client: Constant::new(bits::<M>(1) << T as u64),
        }
    }
}

impl<const T: usize, const M: usize> Default for DmaArbiter<T, M> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const T: usize, const M: usize> Logic for DmaArbiter<T, M> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            rd_last,
            wr_last,
            rd_lock,
            rd_lock_sel,
            wr_lock,
            wr_lock_sel,
            wr_busy
        );

        // ---- Read requests: round robin, held while offered.
        self.rd_pick.next =
            self.s1_rd_req_valid.val() & (!self.s0_rd_req_valid.val() | !self.rd_last.q.val());
        if self.rd_lock.q.val() {
            self.rd_pick.next = self.rd_lock_sel.q.val();
        }
        // The offer is the picked client's: a client held by the lock that withdrew its
        // request offers nothing, and the lock lets go.
        self.m_dma_rd_req_valid.next = self.s0_rd_req_valid.val();
        if self.rd_pick.val() {
            self.m_dma_rd_req_valid.next = self.s1_rd_req_valid.val();
        }
        self.m_dma_rd_req_addr.next = self.s0_rd_req_addr.val();
        self.m_dma_rd_req_len.next = self.s0_rd_req_len.val();
        self.tag_m.next = bit_cast::<M, T>(self.s0_rd_req_tag.val());
        if self.rd_pick.val() {
            self.m_dma_rd_req_addr.next = self.s1_rd_req_addr.val();
            self.m_dma_rd_req_len.next = self.s1_rd_req_len.val();
            self.tag_m.next = bit_cast::<M, T>(self.s1_rd_req_tag.val()) | self.k_client.val();
        }
        self.m_dma_rd_req_tag.next = self.tag_m.val();
        self.s0_rd_req_ready.next = self.m_dma_rd_req_ready.val() & !self.rd_pick.val();
        self.s1_rd_req_ready.next = self.m_dma_rd_req_ready.val() & self.rd_pick.val();
        self.rd_fire.next = self.m_dma_rd_req_valid.val() & self.m_dma_rd_req_ready.val();
        if self.rd_fire.val() {
            self.rd_last.d.next = self.rd_pick.val();
        }
        self.rd_lock.d.next = self.m_dma_rd_req_valid.val() & !self.m_dma_rd_req_ready.val();
        self.rd_lock_sel.d.next = self.rd_pick.val();

        // ---- Read data: routed by the tag's top bit.
        self.rd_data.next = self.m_dma_rd_data.val();
        self.rd_data_last.next = self.m_dma_rd_data_last.val();
        self.rd_data_err.next = self.m_dma_rd_data_err.val();
        self.rd_data_tag.next = self.m_dma_rd_data_tag.val().get_bits::<T>(0);
        self.rd_data_c1.next = (self.m_dma_rd_data_tag.val() & self.k_client.val()).any();
        self.s0_rd_data_valid.next = self.m_dma_rd_data_valid.val() & !self.rd_data_c1.val();
        self.s1_rd_data_valid.next = self.m_dma_rd_data_valid.val() & self.rd_data_c1.val();
        self.m_dma_rd_data_ready.next = self.s0_rd_data_ready.val();
        if self.rd_data_c1.val() {
            self.m_dma_rd_data_ready.next = self.s1_rd_data_ready.val();
        }

        // ---- Write requests: one burst at a time.
        self.wr_pick.next =
            self.s1_wr_req_valid.val() & (!self.s0_wr_req_valid.val() | !self.wr_last.q.val());
        if self.wr_lock.q.val() {
            self.wr_pick.next = self.wr_lock_sel.q.val();
        }
        self.m_dma_wr_req_valid.next = self.s0_wr_req_valid.val() & !self.wr_busy.q.val();
        if self.wr_pick.val() {
            self.m_dma_wr_req_valid.next = self.s1_wr_req_valid.val() & !self.wr_busy.q.val();
        }
        self.m_dma_wr_req_addr.next = self.s0_wr_req_addr.val();
        self.m_dma_wr_req_len.next = self.s0_wr_req_len.val();
        self.wtag_m.next = bit_cast::<M, T>(self.s0_wr_req_tag.val());
        if self.wr_pick.val() {
            self.m_dma_wr_req_addr.next = self.s1_wr_req_addr.val();
            self.m_dma_wr_req_len.next = self.s1_wr_req_len.val();
            self.wtag_m.next = bit_cast::<M, T>(self.s1_wr_req_tag.val()) | self.k_client.val();
        }
        self.m_dma_wr_req_tag.next = self.wtag_m.val();
        self.s0_wr_req_ready.next =
            self.m_dma_wr_req_ready.val() & !self.wr_busy.q.val() & !self.wr_pick.val();
        self.s1_wr_req_ready.next =
            self.m_dma_wr_req_ready.val() & !self.wr_busy.q.val() & self.wr_pick.val();
        self.wr_fire.next = self.m_dma_wr_req_valid.val() & self.m_dma_wr_req_ready.val();
        if self.wr_fire.val() {
            self.wr_last.d.next = self.wr_pick.val();
            self.wr_busy.d.next = true;
        }
        self.wr_lock.d.next = self.m_dma_wr_req_valid.val() & !self.m_dma_wr_req_ready.val();
        self.wr_lock_sel.d.next = self.wr_pick.val();

        // ---- Write data from the burst's owner.
        self.m_dma_wr_data_valid.next = self.wr_busy.q.val() & self.s0_wr_data_valid.val();
        self.m_dma_wr_data.next = self.s0_wr_data.val();
        self.m_dma_wr_data_keep.next = self.s0_wr_data_keep.val();
        self.m_dma_wr_data_last.next = self.s0_wr_data_last.val();
        if self.wr_last.q.val() {
            self.m_dma_wr_data_valid.next = self.wr_busy.q.val() & self.s1_wr_data_valid.val();
            self.m_dma_wr_data.next = self.s1_wr_data.val();
            self.m_dma_wr_data_keep.next = self.s1_wr_data_keep.val();
            self.m_dma_wr_data_last.next = self.s1_wr_data_last.val();
        }
        self.s0_wr_data_ready.next =
            self.wr_busy.q.val() & !self.wr_last.q.val() & self.m_dma_wr_data_ready.val();
        self.s1_wr_data_ready.next =
            self.wr_busy.q.val() & self.wr_last.q.val() & self.m_dma_wr_data_ready.val();
        if self.m_dma_wr_data_valid.val()
            & self.m_dma_wr_data_ready.val()
            & self.m_dma_wr_data_last.val()
        {
            self.wr_busy.d.next = false;
        }

        // ---- Write done: routed by the tag's top bit.
        self.wr_done_tag.next = self.m_dma_wr_done_tag.val().get_bits::<T>(0);
        self.wr_done_err.next = self.m_dma_wr_done_err.val();
        self.wr_done_c1.next = (self.m_dma_wr_done_tag.val() & self.k_client.val()).any();
        self.s0_wr_done_valid.next = self.m_dma_wr_done_valid.val() & !self.wr_done_c1.val();
        self.s1_wr_done_valid.next = self.m_dma_wr_done_valid.val() & self.wr_done_c1.val();

        if self.reset.val() {
            self.rd_lock.d.next = false;
            self.wr_lock.d.next = false;
            self.wr_busy.d.next = false;
            self.rd_last.d.next = false;
            self.wr_last.d.next = false;
        }
    }
}
