//! The raw receive engine: frames the receive parser bypasses (ARP, IP, anything not
//! RoCEv2) into the host's raw receive ring. Frames land whole in a FIFO first (the parser
//! is never stalled: a frame that finds the FIFO full, arrives while the ring is disabled, or
//! is marked bad by the MAC is dropped and counted). For each frame the engine takes the next
//! receive buffer (`raw_rx_desc`: address, size) from the receive ring, writes the frame into
//! it over the DMA port (cut at the buffer's size), waits until the write is done, then writes
//! a `raw_cqe` (length, status, ring index, phase) into the completion ring and advances both
//! indices: a completion is never visible before the bytes it reports. A completion ring with
//! ARM set raises the RAW_RX interrupt for its next entry and is disarmed.

use rust_hdl::prelude::*;

use crate::commit_fifo::{CommitFifo, FRAME_ABITS};

/// CQE status codes.
pub const STATUS_OK: u64 = 0;
pub const STATUS_CUT: u64 = 1;
pub const STATUS_DMA_ERROR: u64 = 2;

#[derive(LogicBlock)]
pub struct RawRx {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// CTRL.ENABLE and both rings' SIZE.ENABLE.
    pub enable: Signal<In, Bit>,
    /// The receive ring (host produces buffers).
    pub rx_base: Signal<In, Bits<64>>,
    pub rx_log_size: Signal<In, Bits<5>>,
    pub rx_prod: Signal<In, Bits<16>>,
    pub rx_cons: Signal<In, Bits<16>>,
    pub rx_cons_load: Signal<Out, Bit>,
    pub rx_cons_next: Signal<Out, Bits<16>>,
    /// The completion ring (the NIC produces).
    pub cq_base: Signal<In, Bits<64>>,
    pub cq_log_size: Signal<In, Bits<5>>,
    pub cq_prod: Signal<In, Bits<16>>,
    pub cq_cons: Signal<In, Bits<16>>,
    pub cq_prod_load: Signal<Out, Bit>,
    pub cq_prod_next: Signal<Out, Bits<16>>,
    /// The completion ring's SIZE.ARM, and the request to clear it.
    pub cq_armed: Signal<In, Bit>,
    pub cq_disarm: Signal<Out, Bit>,

    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tuser: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,

    pub rd_req_valid: Signal<Out, Bit>,
    pub rd_req_ready: Signal<In, Bit>,
    pub rd_req_addr: Signal<Out, Bits<64>>,
    pub rd_req_len: Signal<Out, Bits<16>>,
    pub rd_req_tag: Signal<Out, Bits<7>>,
    pub rd_data_valid: Signal<In, Bit>,
    pub rd_data_ready: Signal<Out, Bit>,
    pub rd_data: Signal<In, Bits<64>>,
    pub rd_data_err: Signal<In, Bit>,
    pub wr_req_valid: Signal<Out, Bit>,
    pub wr_req_ready: Signal<In, Bit>,
    pub wr_req_addr: Signal<Out, Bits<64>>,
    pub wr_req_len: Signal<Out, Bits<16>>,
    pub wr_req_tag: Signal<Out, Bits<7>>,
    pub wr_data_valid: Signal<Out, Bit>,
    pub wr_data_ready: Signal<In, Bit>,
    pub wr_data: Signal<Out, Bits<64>>,
    pub wr_data_keep: Signal<Out, Bits<8>>,
    pub wr_data_last: Signal<Out, Bit>,
    pub wr_done_valid: Signal<In, Bit>,
    pub wr_done_err: Signal<In, Bit>,

    /// One-cycle events.
    pub ev_frame: Signal<Out, Bit>,
    pub ev_drop: Signal<Out, Bit>,
    pub ev_irq: Signal<Out, Bit>,
    pub ev_ring_error: Signal<Out, Bit>,
    pub ev_dma_read_error: Signal<Out, Bit>,
    pub ev_dma_write_error: Signal<Out, Bit>,

    fifo: CommitFifo<FRAME_ABITS>,
    /// Input side: the frame being received is being dropped.
    dropping: DFF<Bit>,
    /// Input side: in the middle of a frame.
    in_frame: DFF<Bit>,
    state: DFF<Bits<4>>,
    beat: DFF<Bit>,
    err: DFF<Bit>,
    buf_addr: DFF<Bits<64>>,
    buf_len: DFF<Bits<16>>,
    /// Bytes written into the buffer so far.
    written: DFF<Bits<16>>,
    cut: DFF<Bit>,
    wr_err: DFF<Bit>,
    done_seen: DFF<Bit>,

    rx_avail: Signal<Local, Bits<16>>,
    rx_size32: Signal<Local, Bits<32>>,
    rx_mask: Signal<Local, Bits<16>>,
    cq_used: Signal<Local, Bits<16>>,
    cq_size32: Signal<Local, Bits<32>>,
    cq_size: Signal<Local, Bits<16>>,
    cq_mask: Signal<Local, Bits<16>>,
    cq_pass: Signal<Local, Bits<32>>,
    room_left: Signal<Local, Bits<16>>,
    nbytes: Signal<Local, Bits<16>>,
    keep_cut: Signal<Local, Bits<16>>,
    keep: Signal<Local, Bits<8>>,
    fills: Signal<Local, Bit>,
    start_frame: Signal<Local, Bit>,
    status: Signal<Local, Bits<64>>,
    cqe0: Signal<Local, Bits<64>>,
    cqe1: Signal<Local, Bits<64>>,

    k_idle: Constant<Bits<4>>,
    k_req_desc: Constant<Bits<4>>,
    k_desc: Constant<Bits<4>>,
    k_req_write: Constant<Bits<4>>,
    k_data: Constant<Bits<4>>,
    k_drain: Constant<Bits<4>>,
    k_wait_data: Constant<Bits<4>>,
    k_req_cqe: Constant<Bits<4>>,
    k_cqe0: Constant<Bits<4>>,
    k_cqe1: Constant<Bits<4>>,
    k_wait_cqe: Constant<Bits<4>>,
    k_one16: Constant<Bits<16>>,
    k_one32: Constant<Bits<32>>,
    k_zero16: Constant<Bits<16>>,
    k_eight: Constant<Bits<16>>,
    k_sixteen: Constant<Bits<16>>,
    k_full_keep: Constant<Bits<8>>,
    k_tag_desc: Constant<Bits<7>>,
    k_tag_data: Constant<Bits<7>>,
    k_tag_cqe: Constant<Bits<7>>,
    k_status_cut: Constant<Bits<64>>,
    k_status_dma: Constant<Bits<64>>,
    k_phase: Constant<Bits<64>>,
}

impl Default for RawRx {
    fn default() -> Self {
        RawRx {
            clock: Default::default(),
            reset: Default::default(),
            enable: Default::default(),
            rx_base: Default::default(),
            rx_log_size: Default::default(),
            rx_prod: Default::default(),
            rx_cons: Default::default(),
            rx_cons_load: Default::default(),
            rx_cons_next: Default::default(),
            cq_base: Default::default(),
            cq_log_size: Default::default(),
            cq_prod: Default::default(),
            cq_cons: Default::default(),
            cq_prod_load: Default::default(),
            cq_prod_next: Default::default(),
            cq_armed: Default::default(),
            cq_disarm: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tuser: Default::default(),
            s_axis_tready: Default::default(),
            rd_req_valid: Default::default(),
            rd_req_ready: Default::default(),
            rd_req_addr: Default::default(),
            rd_req_len: Default::default(),
            rd_req_tag: Default::default(),
            rd_data_valid: Default::default(),
            rd_data_ready: Default::default(),
            rd_data: Default::default(),
            rd_data_err: Default::default(),
            wr_req_valid: Default::default(),
            wr_req_ready: Default::default(),
            wr_req_addr: Default::default(),
            wr_req_len: Default::default(),
            wr_req_tag: Default::default(),
            wr_data_valid: Default::default(),
            wr_data_ready: Default::default(),
            wr_data: Default::default(),
            wr_data_keep: Default::default(),
            wr_data_last: Default::default(),
            wr_done_valid: Default::default(),
            wr_done_err: Default::default(),
            ev_frame: Default::default(),
            ev_drop: Default::default(),
            ev_irq: Default::default(),
            ev_ring_error: Default::default(),
            ev_dma_read_error: Default::default(),
            ev_dma_write_error: Default::default(),
            fifo: Default::default(),
            dropping: Default::default(),
            in_frame: Default::default(),
            state: Default::default(),
            beat: Default::default(),
            err: Default::default(),
            buf_addr: Default::default(),
            buf_len: Default::default(),
            written: Default::default(),
            cut: Default::default(),
            wr_err: Default::default(),
            done_seen: Default::default(),
            rx_avail: Default::default(),
            rx_size32: Default::default(),
            rx_mask: Default::default(),
            cq_used: Default::default(),
            cq_size32: Default::default(),
            cq_size: Default::default(),
            cq_mask: Default::default(),
            cq_pass: Default::default(),
            room_left: Default::default(),
            nbytes: Default::default(),
            keep_cut: Default::default(),
            keep: Default::default(),
            fills: Default::default(),
            start_frame: Default::default(),
            status: Default::default(),
            cqe0: Default::default(),
            cqe1: Default::default(),
            k_idle: Constant::new(bits::<4>(0)),
            k_req_desc: Constant::new(bits::<4>(1)),
            k_desc: Constant::new(bits::<4>(2)),
            k_req_write: Constant::new(bits::<4>(3)),
            k_data: Constant::new(bits::<4>(4)),
            k_drain: Constant::new(bits::<4>(5)),
            k_wait_data: Constant::new(bits::<4>(6)),
            k_req_cqe: Constant::new(bits::<4>(7)),
            k_cqe0: Constant::new(bits::<4>(8)),
            k_cqe1: Constant::new(bits::<4>(9)),
            k_wait_cqe: Constant::new(bits::<4>(10)),
            k_one16: Constant::new(bits::<16>(1)),
            k_one32: Constant::new(bits::<32>(1)),
            k_zero16: Constant::new(bits::<16>(0)),
            k_eight: Constant::new(bits::<16>(8)),
            k_sixteen: Constant::new(bits::<16>(16)),
            k_full_keep: Constant::new(bits::<8>(0xFF)),
            k_tag_desc: Constant::new(bits::<7>(0)),
            k_tag_data: Constant::new(bits::<7>(1)),
            k_tag_cqe: Constant::new(bits::<7>(2)),
            k_status_cut: Constant::new(bits::<64>(STATUS_CUT << 16)),
            k_status_dma: Constant::new(bits::<64>(STATUS_DMA_ERROR << 16)),
            k_phase: Constant::new(bits::<64>(1 << 63)),
        }
    }
}

impl Logic for RawRx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, dropping, in_frame, state, beat, err, buf_addr, buf_len, written, cut,
            wr_err, done_seen
        );
        self.fifo.clock.next = self.clock.val();
        self.fifo.reset.next = self.reset.val();

        // ---- Input side: whole frames into the FIFO, never stalling the parser.
        self.s_axis_tready.next = true;
        self.ev_drop.next = false;
        self.start_frame.next = self.s_axis_tvalid.val() & !self.in_frame.q.val();
        self.fifo.wr_data.next = self.s_axis_tdata.val();
        self.fifo.wr_keep.next = self.s_axis_tkeep.val();
        self.fifo.wr_last.next = self.s_axis_tlast.val();
        self.fifo.wr_user.next = false;
        self.fifo.wr_en.next = false;
        self.fifo.commit.next = false;
        self.fifo.rewind.next = false;
        if self.s_axis_tvalid.val() {
            self.in_frame.d.next = !self.s_axis_tlast.val();
            // A frame is dropped from its first beat if the ring is off, and from the beat
            // that finds the FIFO full.
            if (self.start_frame.val() & !self.enable.val())
                | !self.fifo.room.val()
                | (self.dropping.q.val() & !self.start_frame.val())
            {
                self.dropping.d.next = !self.s_axis_tlast.val();
                self.fifo.rewind.next = true;
                if self.s_axis_tlast.val() {
                    self.ev_drop.next = true;
                }
            } else {
                self.fifo.wr_en.next = true;
                self.dropping.d.next = false;
                if self.s_axis_tlast.val() {
                    if self.s_axis_tuser.val() {
                        self.fifo.rewind.next = true;
                        self.ev_drop.next = true;
                    } else {
                        self.fifo.commit.next = true;
                    }
                }
            }
        }

        // ---- Ring arithmetic.
        self.rx_avail.next = self.rx_prod.val() - self.rx_cons.val();
        self.rx_size32.next = self.k_one32.val() << self.rx_log_size.val();
        self.rx_mask.next = self.rx_size32.val().get_bits::<16>(0) - self.k_one16.val();
        self.cq_used.next = self.cq_prod.val() - self.cq_cons.val();
        self.cq_size32.next = self.k_one32.val() << self.cq_log_size.val();
        self.cq_size.next = self.cq_size32.val().get_bits::<16>(0);
        self.cq_mask.next = self.cq_size.val() - self.k_one16.val();
        self.cq_pass.next = bit_cast::<32, 16>(self.cq_prod.val()) >> self.cq_log_size.val();

        // ---- Defaults of the engine side.
        self.rx_cons_load.next = false;
        self.rx_cons_next.next = self.rx_cons.val() + self.k_one16.val();
        self.cq_prod_load.next = false;
        self.cq_prod_next.next = self.cq_prod.val() + self.k_one16.val();
        self.cq_disarm.next = false;
        self.rd_req_valid.next = false;
        self.rd_req_addr.next =
            self.rx_base.val() + (bit_cast::<64, 16>(self.rx_cons.val() & self.rx_mask.val()) << 4);
        self.rd_req_len.next = self.k_sixteen.val();
        self.rd_req_tag.next = self.k_tag_desc.val();
        self.rd_data_ready.next = false;
        self.wr_req_valid.next = false;
        self.wr_req_addr.next = self.buf_addr.q.val();
        self.wr_req_len.next = self.buf_len.q.val();
        self.wr_req_tag.next = self.k_tag_data.val();
        self.wr_data_valid.next = false;
        self.wr_data.next = self.fifo.m_axis_tdata.val();
        self.wr_data_keep.next = self.fifo.m_axis_tkeep.val();
        self.wr_data_last.next = self.fifo.m_axis_tlast.val();
        self.fifo.m_axis_tready.next = false;
        self.ev_frame.next = false;
        self.ev_irq.next = false;
        self.ev_ring_error.next = false;
        self.ev_dma_read_error.next = false;
        self.ev_dma_write_error.next = false;

        // The buffer room left and what this beat would fill.
        self.room_left.next = self.buf_len.q.val() - self.written.q.val();
        self.keep_cut.next =
            (self.k_one16.val() << self.room_left.val().get_bits::<3>(0)) - self.k_one16.val();
        self.keep.next = self.fifo.m_axis_tkeep.val();
        self.fills.next = false;
        if self.room_left.val() <= self.k_eight.val() {
            self.fills.next = true;
            if self.room_left.val() < self.k_eight.val() {
                self.keep.next =
                    self.fifo.m_axis_tkeep.val() & self.keep_cut.val().get_bits::<8>(0);
            }
        }

        self.nbytes.next = bit_cast::<16, 4>(
            bit_cast::<4, 1>(self.keep.val().get_bits::<1>(0))
                + bit_cast::<4, 1>(self.keep.val().get_bits::<1>(1))
                + bit_cast::<4, 1>(self.keep.val().get_bits::<1>(2))
                + bit_cast::<4, 1>(self.keep.val().get_bits::<1>(3))
                + bit_cast::<4, 1>(self.keep.val().get_bits::<1>(4))
                + bit_cast::<4, 1>(self.keep.val().get_bits::<1>(5))
                + bit_cast::<4, 1>(self.keep.val().get_bits::<1>(6))
                + bit_cast::<4, 1>(self.keep.val().get_bits::<1>(7)),
        );

        // The completion: LEN[15:0], STATUS[23:16], RING_INDEX[47:32]; PHASE in bit 63 of the
        // second word (byte 0x0f, bit 7).
        self.status.next = bit_cast::<64, 16>(self.written.q.val())
            | (bit_cast::<64, 16>(self.rx_cons.val()) << 32);
        if self.cut.q.val() {
            self.status.next = self.status.val() | self.k_status_cut.val();
        }
        if self.wr_err.q.val() {
            self.status.next = self.status.val() | self.k_status_dma.val();
        }
        self.cqe0.next = self.status.val();
        self.cqe1.next = bit_cast::<64, 16>(self.k_zero16.val());
        if !self.cq_pass.val().get_bit(0) {
            self.cqe1.next = self.k_phase.val();
        }

        if self.state.q.val() == self.k_idle.val() {
            if self.enable.val()
                & self.fifo.m_axis_tvalid.val()
                & (self.rx_avail.val() != self.k_zero16.val())
                & (self.cq_used.val() < self.cq_size.val())
            {
                self.state.d.next = self.k_req_desc.val();
            }
        } else if self.state.q.val() == self.k_req_desc.val() {
            self.rd_req_valid.next = true;
            if self.rd_req_ready.val() {
                self.state.d.next = self.k_desc.val();
                self.beat.d.next = false;
                self.err.d.next = false;
            }
        } else if self.state.q.val() == self.k_desc.val() {
            self.rd_data_ready.next = true;
            if self.rd_data_valid.val() {
                self.beat.d.next = true;
                if self.rd_data_err.val() {
                    self.err.d.next = true;
                }
                if !self.beat.q.val() {
                    self.buf_addr.d.next = self.rd_data.val();
                } else {
                    self.buf_len.d.next = self.rd_data.val().get_bits::<16>(0);
                    self.written.d.next = self.k_zero16.val();
                    self.cut.d.next = false;
                    self.wr_err.d.next = false;
                    self.state.d.next = self.k_req_write.val();
                    if self.err.q.val() | self.rd_data_err.val() {
                        self.ev_dma_read_error.next = true;
                        self.rx_cons_load.next = true;
                        self.state.d.next = self.k_idle.val();
                    } else if self.rd_data.val().get_bits::<16>(0) == self.k_zero16.val() {
                        self.ev_ring_error.next = true;
                        self.rx_cons_load.next = true;
                        self.state.d.next = self.k_idle.val();
                    }
                }
            }
        } else if self.state.q.val() == self.k_req_write.val() {
            self.wr_req_valid.next = true;
            if self.wr_req_ready.val() {
                self.state.d.next = self.k_data.val();
            }
        } else if self.state.q.val() == self.k_data.val() {
            self.wr_data_valid.next = self.fifo.m_axis_tvalid.val();
            self.wr_data_keep.next = self.keep.val();
            self.wr_data_last.next = self.fifo.m_axis_tlast.val() | self.fills.val();
            self.fifo.m_axis_tready.next = self.wr_data_ready.val();
            if self.fifo.m_axis_tvalid.val() & self.wr_data_ready.val() {
                self.written.d.next = self.written.q.val() + self.nbytes.val();
                if self.keep.val() != self.fifo.m_axis_tkeep.val() {
                    self.cut.d.next = true;
                }
                if self.fifo.m_axis_tlast.val() {
                    self.state.d.next = self.k_wait_data.val();
                } else if self.fills.val() {
                    self.cut.d.next = true;
                    self.state.d.next = self.k_drain.val();
                }
            }
        } else if self.state.q.val() == self.k_drain.val() {
            // The buffer is full: the rest of the frame is dropped.
            self.fifo.m_axis_tready.next = true;
            if self.fifo.m_axis_tvalid.val() & self.fifo.m_axis_tlast.val() {
                self.state.d.next = self.k_wait_data.val();
            }
        } else if self.state.q.val() == self.k_wait_data.val() {
            if self.done_seen.q.val() {
                self.done_seen.d.next = false;
                self.state.d.next = self.k_req_cqe.val();
            }
        } else if self.state.q.val() == self.k_req_cqe.val() {
            self.wr_req_valid.next = true;
            self.wr_req_addr.next = self.cq_base.val()
                + (bit_cast::<64, 16>(self.cq_prod.val() & self.cq_mask.val()) << 4);
            self.wr_req_len.next = self.k_sixteen.val();
            self.wr_req_tag.next = self.k_tag_cqe.val();
            if self.wr_req_ready.val() {
                self.state.d.next = self.k_cqe0.val();
            }
        } else if self.state.q.val() == self.k_cqe0.val() {
            self.wr_data_valid.next = true;
            self.wr_data.next = self.cqe0.val();
            self.wr_data_keep.next = self.k_full_keep.val();
            self.wr_data_last.next = false;
            if self.wr_data_ready.val() {
                self.state.d.next = self.k_cqe1.val();
            }
        } else if self.state.q.val() == self.k_cqe1.val() {
            self.wr_data_valid.next = true;
            self.wr_data.next = self.cqe1.val();
            self.wr_data_keep.next = self.k_full_keep.val();
            self.wr_data_last.next = true;
            if self.wr_data_ready.val() {
                self.state.d.next = self.k_wait_cqe.val();
            }
        } else if (self.state.q.val() == self.k_wait_cqe.val()) & self.done_seen.q.val() {
            self.done_seen.d.next = false;
            self.rx_cons_load.next = true;
            self.cq_prod_load.next = true;
            self.ev_frame.next = true;
            if self.cq_armed.val() {
                self.ev_irq.next = true;
                self.cq_disarm.next = true;
            }
            self.state.d.next = self.k_idle.val();
        }

        // A write's done may come while the rest of a cut frame drains: kept until waited for.
        if self.wr_done_valid.val() {
            self.done_seen.d.next = true;
            if self.wr_done_err.val() {
                self.wr_err.d.next = true;
                self.ev_dma_write_error.next = true;
            }
        }

        if self.reset.val() {
            self.done_seen.d.next = false;
            self.state.d.next = self.k_idle.val();
            self.dropping.d.next = false;
            self.in_frame.d.next = false;
        }
    }
}
