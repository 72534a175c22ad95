//! The DMA port and the arbiter that shares it between two engines.
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
//! Addresses are 8-byte aligned; `len` is 1..=65535 bytes; the host side's tags are 8 bits
//! and a client's 7 (the arbiter adds the client's number as the top bit and routes the
//! answers by it). Every channel has valid and ready (but done); a request, once valid,
//! holds its fields until taken.
//!
//! Deadlock: read data of both clients shares one channel, so a client that stops taking its
//! data would stall the other's. A client therefore issues a read only when it has room for
//! all of the data (the raw transmit engine reserves its FIFO space first), the rule of
//! reserving a response slot before accepting that hardware RNICs learned the hard way.
//! Writes are granted one at a time, each request with its data burst.

use rust_hdl::prelude::*;

/// Bits of a client's tag.
pub const CLIENT_TAG_BITS: usize = 7;

#[derive(LogicBlock, Default)]
pub struct DmaArbiter {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,

    pub s0_rd_req_valid: Signal<In, Bit>,
    pub s0_rd_req_ready: Signal<Out, Bit>,
    pub s0_rd_req_addr: Signal<In, Bits<64>>,
    pub s0_rd_req_len: Signal<In, Bits<16>>,
    pub s0_rd_req_tag: Signal<In, Bits<7>>,
    pub s0_rd_data_valid: Signal<Out, Bit>,
    pub s0_rd_data_ready: Signal<In, Bit>,
    pub s0_wr_req_valid: Signal<In, Bit>,
    pub s0_wr_req_ready: Signal<Out, Bit>,
    pub s0_wr_req_addr: Signal<In, Bits<64>>,
    pub s0_wr_req_len: Signal<In, Bits<16>>,
    pub s0_wr_req_tag: Signal<In, Bits<7>>,
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
    pub s1_rd_req_tag: Signal<In, Bits<7>>,
    pub s1_rd_data_valid: Signal<Out, Bit>,
    pub s1_rd_data_ready: Signal<In, Bit>,
    pub s1_wr_req_valid: Signal<In, Bit>,
    pub s1_wr_req_ready: Signal<Out, Bit>,
    pub s1_wr_req_addr: Signal<In, Bits<64>>,
    pub s1_wr_req_len: Signal<In, Bits<16>>,
    pub s1_wr_req_tag: Signal<In, Bits<7>>,
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
    pub rd_data_tag: Signal<Out, Bits<7>>,
    pub wr_done_tag: Signal<Out, Bits<7>>,
    pub wr_done_err: Signal<Out, Bit>,

    pub m_dma_rd_req_valid: Signal<Out, Bit>,
    pub m_dma_rd_req_ready: Signal<In, Bit>,
    pub m_dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_rd_req_len: Signal<Out, Bits<16>>,
    pub m_dma_rd_req_tag: Signal<Out, Bits<8>>,
    pub m_dma_rd_data_valid: Signal<In, Bit>,
    pub m_dma_rd_data_ready: Signal<Out, Bit>,
    pub m_dma_rd_data: Signal<In, Bits<64>>,
    pub m_dma_rd_data_last: Signal<In, Bit>,
    pub m_dma_rd_data_err: Signal<In, Bit>,
    pub m_dma_rd_data_tag: Signal<In, Bits<8>>,
    pub m_dma_wr_req_valid: Signal<Out, Bit>,
    pub m_dma_wr_req_ready: Signal<In, Bit>,
    pub m_dma_wr_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_wr_req_len: Signal<Out, Bits<16>>,
    pub m_dma_wr_req_tag: Signal<Out, Bits<8>>,
    pub m_dma_wr_data_valid: Signal<Out, Bit>,
    pub m_dma_wr_data_ready: Signal<In, Bit>,
    pub m_dma_wr_data: Signal<Out, Bits<64>>,
    pub m_dma_wr_data_keep: Signal<Out, Bits<8>>,
    pub m_dma_wr_data_last: Signal<Out, Bit>,
    pub m_dma_wr_done_valid: Signal<In, Bit>,
    pub m_dma_wr_done_tag: Signal<In, Bits<8>>,
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
    rd_any: Signal<Local, Bit>,
    wr_any: Signal<Local, Bit>,
    rd_fire: Signal<Local, Bit>,
    wr_fire: Signal<Local, Bit>,
    tag8: Signal<Local, Bits<8>>,
    wtag8: Signal<Local, Bits<8>>,
}

impl Logic for DmaArbiter {
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
        self.rd_any.next = self.s0_rd_req_valid.val() | self.s1_rd_req_valid.val();
        self.rd_pick.next =
            self.s1_rd_req_valid.val() & (!self.s0_rd_req_valid.val() | !self.rd_last.q.val());
        if self.rd_lock.q.val() {
            self.rd_pick.next = self.rd_lock_sel.q.val();
        }
        self.m_dma_rd_req_valid.next = self.rd_any.val();
        self.m_dma_rd_req_addr.next = self.s0_rd_req_addr.val();
        self.m_dma_rd_req_len.next = self.s0_rd_req_len.val();
        self.tag8.next = bit_cast::<8, 7>(self.s0_rd_req_tag.val());
        if self.rd_pick.val() {
            self.m_dma_rd_req_addr.next = self.s1_rd_req_addr.val();
            self.m_dma_rd_req_len.next = self.s1_rd_req_len.val();
            self.tag8.next = bit_cast::<8, 7>(self.s1_rd_req_tag.val()).replace_bit(7, true);
        }
        self.m_dma_rd_req_tag.next = self.tag8.val();
        self.s0_rd_req_ready.next = self.m_dma_rd_req_ready.val() & !self.rd_pick.val();
        self.s1_rd_req_ready.next = self.m_dma_rd_req_ready.val() & self.rd_pick.val();
        self.rd_fire.next = self.rd_any.val() & self.m_dma_rd_req_ready.val();
        if self.rd_fire.val() {
            self.rd_last.d.next = self.rd_pick.val();
        }
        self.rd_lock.d.next = self.rd_any.val() & !self.m_dma_rd_req_ready.val();
        self.rd_lock_sel.d.next = self.rd_pick.val();

        // ---- Read data: routed by the tag's top bit.
        self.rd_data.next = self.m_dma_rd_data.val();
        self.rd_data_last.next = self.m_dma_rd_data_last.val();
        self.rd_data_err.next = self.m_dma_rd_data_err.val();
        self.rd_data_tag.next = self.m_dma_rd_data_tag.val().get_bits::<7>(0);
        self.s0_rd_data_valid.next =
            self.m_dma_rd_data_valid.val() & !self.m_dma_rd_data_tag.val().get_bit(7);
        self.s1_rd_data_valid.next =
            self.m_dma_rd_data_valid.val() & self.m_dma_rd_data_tag.val().get_bit(7);
        self.m_dma_rd_data_ready.next = self.s0_rd_data_ready.val();
        if self.m_dma_rd_data_tag.val().get_bit(7) {
            self.m_dma_rd_data_ready.next = self.s1_rd_data_ready.val();
        }

        // ---- Write requests: one burst at a time.
        self.wr_any.next =
            (self.s0_wr_req_valid.val() | self.s1_wr_req_valid.val()) & !self.wr_busy.q.val();
        self.wr_pick.next =
            self.s1_wr_req_valid.val() & (!self.s0_wr_req_valid.val() | !self.wr_last.q.val());
        if self.wr_lock.q.val() {
            self.wr_pick.next = self.wr_lock_sel.q.val();
        }
        self.m_dma_wr_req_valid.next = self.wr_any.val();
        self.m_dma_wr_req_addr.next = self.s0_wr_req_addr.val();
        self.m_dma_wr_req_len.next = self.s0_wr_req_len.val();
        self.wtag8.next = bit_cast::<8, 7>(self.s0_wr_req_tag.val());
        if self.wr_pick.val() {
            self.m_dma_wr_req_addr.next = self.s1_wr_req_addr.val();
            self.m_dma_wr_req_len.next = self.s1_wr_req_len.val();
            self.wtag8.next = bit_cast::<8, 7>(self.s1_wr_req_tag.val()).replace_bit(7, true);
        }
        self.m_dma_wr_req_tag.next = self.wtag8.val();
        self.s0_wr_req_ready.next =
            self.m_dma_wr_req_ready.val() & !self.wr_busy.q.val() & !self.wr_pick.val();
        self.s1_wr_req_ready.next =
            self.m_dma_wr_req_ready.val() & !self.wr_busy.q.val() & self.wr_pick.val();
        self.wr_fire.next = self.wr_any.val() & self.m_dma_wr_req_ready.val();
        if self.wr_fire.val() {
            self.wr_last.d.next = self.wr_pick.val();
            self.wr_busy.d.next = true;
        }
        self.wr_lock.d.next = self.wr_any.val() & !self.m_dma_wr_req_ready.val();
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
        self.wr_done_tag.next = self.m_dma_wr_done_tag.val().get_bits::<7>(0);
        self.wr_done_err.next = self.m_dma_wr_done_err.val();
        self.s0_wr_done_valid.next =
            self.m_dma_wr_done_valid.val() & !self.m_dma_wr_done_tag.val().get_bit(7);
        self.s1_wr_done_valid.next =
            self.m_dma_wr_done_valid.val() & self.m_dma_wr_done_tag.val().get_bit(7);

        if self.reset.val() {
            self.rd_lock.d.next = false;
            self.wr_lock.d.next = false;
            self.wr_busy.d.next = false;
            self.rd_last.d.next = false;
            self.wr_last.d.next = false;
        }
    }
}
