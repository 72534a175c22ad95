//! The raw transmit engine: frames from the host's raw transmit ring into the stream to the
//! MAC. For each entry between the consumer index (the NIC's) and the producer index (the
//! host's doorbell) it reads the `raw_tx_desc` (address, length) over the DMA port, reserves
//! room for the whole frame in its FIFO (so the DMA port's shared read data channel never
//! waits on the MAC), reads the frame, and advances the consumer index once the frame is in
//! the FIFO. A frame whose read the host refused is rolled back and counted as a DMA error;
//! a descriptor with a length outside 14..=9216 or a producer index more than the ring ahead
//! is refused and counted as a ring error (an over-long doorbell stops the ring until the
//! host rings again).

use rust_hdl::prelude::*;

use crate::commit_fifo::{CommitFifo, FRAME_ABITS, reserve_words};
/// Frame lengths a descriptor may give.
pub const MIN_LEN: u64 = 14;
pub const MAX_LEN: u64 = 9216;

#[derive(LogicBlock)]
pub struct RawTx {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// CTRL.ENABLE and the ring's SIZE.ENABLE.
    pub enable: Signal<In, Bit>,
    pub base: Signal<In, Bits<64>>,
    pub log_size: Signal<In, Bits<5>>,
    pub prod: Signal<In, Bits<16>>,
    pub cons: Signal<In, Bits<16>>,
    /// Write `cons_next` into the consumer index.
    pub cons_load: Signal<Out, Bit>,
    pub cons_next: Signal<Out, Bits<16>>,

    pub rd_req_valid: Signal<Out, Bit>,
    pub rd_req_ready: Signal<In, Bit>,
    pub rd_req_addr: Signal<Out, Bits<64>>,
    pub rd_req_len: Signal<Out, Bits<16>>,
    pub rd_req_tag: Signal<Out, Bits<7>>,
    pub rd_data_valid: Signal<In, Bit>,
    pub rd_data_ready: Signal<Out, Bit>,
    pub rd_data: Signal<In, Bits<64>>,
    pub rd_data_last: Signal<In, Bit>,
    pub rd_data_err: Signal<In, Bit>,

    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,

    /// One-cycle events for the counters and the interrupt.
    pub ev_frame: Signal<Out, Bit>,
    pub ev_ring_error: Signal<Out, Bit>,
    pub ev_dma_error: Signal<Out, Bit>,

    fifo: CommitFifo<FRAME_ABITS>,
    state: DFF<Bits<3>>,
    beat: DFF<Bit>,
    frame_addr: DFF<Bits<64>>,
    len: DFF<Bits<16>>,
    rem: DFF<Bits<16>>,
    err: DFF<Bit>,
    /// FIFO words reserved: frames being read plus beats not yet sent.
    held: DFF<Bits<16>>,
    /// The producer index of a refused doorbell: the ring waits until it changes.
    bad_prod: DFF<Bits<16>>,
    refused: DFF<Bit>,

    blocked: Signal<Local, Bit>,
    avail: Signal<Local, Bits<16>>,
    size32: Signal<Local, Bits<32>>,
    size: Signal<Local, Bits<16>>,
    mask: Signal<Local, Bits<16>>,
    slot: Signal<Local, Bits<16>>,
    beats: Signal<Local, Bits<16>>,
    len_p7: Signal<Local, Bits<16>>,
    take: Signal<Local, Bit>,
    keep: Signal<Local, Bits<8>>,
    keep_sh: Signal<Local, Bits<16>>,
    rem_next: Signal<Local, Bits<16>>,
    held_add: Signal<Local, Bits<16>>,
    held_sub: Signal<Local, Bits<16>>,
    fits: Signal<Local, Bits<16>>,

    k_idle: Constant<Bits<3>>,
    k_req_desc: Constant<Bits<3>>,
    k_desc: Constant<Bits<3>>,
    k_reserve: Constant<Bits<3>>,
    k_req_frame: Constant<Bits<3>>,
    k_data: Constant<Bits<3>>,
    k_refused: Constant<Bits<3>>,
    k_one16: Constant<Bits<16>>,
    k_one32: Constant<Bits<32>>,
    k_zero16: Constant<Bits<16>>,
    k_seven: Constant<Bits<16>>,
    k_eight: Constant<Bits<16>>,
    k_sixteen: Constant<Bits<16>>,
    k_min_len: Constant<Bits<16>>,
    k_max_len: Constant<Bits<16>>,
    k_reserve_words: Constant<Bits<16>>,
    k_full_keep: Constant<Bits<8>>,
    k_tag_desc: Constant<Bits<7>>,
    k_tag_frame: Constant<Bits<7>>,
}

impl Default for RawTx {
    fn default() -> Self {
        RawTx {
            clock: Default::default(),
            reset: Default::default(),
            enable: Default::default(),
            base: Default::default(),
            log_size: Default::default(),
            prod: Default::default(),
            cons: Default::default(),
            cons_load: Default::default(),
            cons_next: Default::default(),
            rd_req_valid: Default::default(),
            rd_req_ready: Default::default(),
            rd_req_addr: Default::default(),
            rd_req_len: Default::default(),
            rd_req_tag: Default::default(),
            rd_data_valid: Default::default(),
            rd_data_ready: Default::default(),
            rd_data: Default::default(),
            rd_data_last: Default::default(),
            rd_data_err: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tuser: Default::default(),
            m_axis_tready: Default::default(),
            ev_frame: Default::default(),
            ev_ring_error: Default::default(),
            ev_dma_error: Default::default(),
            fifo: Default::default(),
            state: Default::default(),
            beat: Default::default(),
            frame_addr: Default::default(),
            len: Default::default(),
            rem: Default::default(),
            err: Default::default(),
            held: Default::default(),
            bad_prod: Default::default(),
            refused: Default::default(),
            blocked: Default::default(),
            avail: Default::default(),
            size32: Default::default(),
            size: Default::default(),
            mask: Default::default(),
            slot: Default::default(),
            beats: Default::default(),
            len_p7: Default::default(),
            take: Default::default(),
            keep: Default::default(),
            keep_sh: Default::default(),
            rem_next: Default::default(),
            held_add: Default::default(),
            held_sub: Default::default(),
            fits: Default::default(),
            k_idle: Constant::new(bits::<3>(0)),
            k_req_desc: Constant::new(bits::<3>(1)),
            k_desc: Constant::new(bits::<3>(2)),
            k_reserve: Constant::new(bits::<3>(3)),
            k_req_frame: Constant::new(bits::<3>(4)),
            k_data: Constant::new(bits::<3>(5)),
            k_refused: Constant::new(bits::<3>(6)),
            k_one16: Constant::new(bits::<16>(1)),
            k_one32: Constant::new(bits::<32>(1)),
            k_zero16: Constant::new(bits::<16>(0)),
            k_seven: Constant::new(bits::<16>(7)),
            k_eight: Constant::new(bits::<16>(8)),
            k_sixteen: Constant::new(bits::<16>(16)),
            k_min_len: Constant::new(bits::<16>(MIN_LEN)),
            k_max_len: Constant::new(bits::<16>(MAX_LEN)),
            k_reserve_words: Constant::new(bits::<16>(reserve_words(FRAME_ABITS))),
            k_full_keep: Constant::new(bits::<8>(0xFF)),
            k_tag_desc: Constant::new(bits::<7>(0)),
            k_tag_frame: Constant::new(bits::<7>(1)),
        }
    }
}

impl Logic for RawTx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, beat, frame_addr, len, rem, err, held, bad_prod, refused
        );
        self.fifo.clock.next = self.clock.val();
        self.fifo.reset.next = self.reset.val();

        // Ring arithmetic (16-bit free-running indices).
        self.avail.next = self.prod.val() - self.cons.val();
        self.size32.next = self.k_one32.val() << self.log_size.val();
        self.size.next = self.size32.val().get_bits::<16>(0);
        self.mask.next = self.size.val() - self.k_one16.val();
        self.slot.next = self.cons.val() & self.mask.val();
        self.len_p7.next = self.len.q.val() + self.k_seven.val();
        self.beats.next = self.len_p7.val() >> 3;

        // Defaults.
        self.cons_load.next = false;
        self.cons_next.next = self.cons.val() + self.k_one16.val();
        self.rd_req_valid.next = false;
        self.rd_req_addr.next = self.base.val() + (bit_cast::<64, 16>(self.slot.val()) << 4);
        self.rd_req_len.next = self.k_sixteen.val();
        self.rd_req_tag.next = self.k_tag_desc.val();
        self.rd_data_ready.next = false;
        self.ev_frame.next = false;
        self.ev_ring_error.next = false;
        self.ev_dma_error.next = false;
        self.take.next = false;
        self.fifo.wr_en.next = false;
        self.fifo.wr_data.next = self.rd_data.val();
        self.fifo.wr_last.next = false;
        self.fifo.wr_user.next = false;
        self.fifo.commit.next = false;
        self.fifo.rewind.next = false;
        self.keep_sh.next =
            (self.k_one16.val() << self.rem.q.val().get_bits::<3>(0)) - self.k_one16.val();
        self.keep.next = self.k_full_keep.val();
        if self.rem.q.val() < self.k_eight.val() {
            self.keep.next = self.keep_sh.val().get_bits::<8>(0);
        }
        self.fifo.wr_keep.next = self.keep.val();
        self.rem_next.next = self.k_zero16.val();
        if self.rem.q.val() > self.k_eight.val() {
            self.rem_next.next = self.rem.q.val() - self.k_eight.val();
        }
        self.held_add.next = self.k_zero16.val();
        self.held_sub.next = self.k_zero16.val();
        self.fits.next = self.held.q.val() + self.beats.val();

        if self.refused.q.val() & (self.prod.val() != self.bad_prod.q.val()) {
            // A new doorbell lifts a refusal.
            self.refused.d.next = false;
        }
        self.blocked.next = self.refused.q.val() & (self.prod.val() == self.bad_prod.q.val());
        if self.state.q.val() == self.k_idle.val() {
            if self.enable.val() & (self.avail.val() != self.k_zero16.val()) & !self.blocked.val() {
                self.state.d.next = self.k_req_desc.val();
                if self.avail.val() > self.size.val() {
                    self.state.d.next = self.k_refused.val();
                    self.bad_prod.d.next = self.prod.val();
                    self.refused.d.next = true;
                    self.ev_ring_error.next = true;
                }
            }
        } else if self.state.q.val() == self.k_refused.val() {
            self.state.d.next = self.k_idle.val();
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
                    self.frame_addr.d.next = self.rd_data.val();
                } else {
                    self.len.d.next = self.rd_data.val().get_bits::<16>(0);
                }
                if self.beat.q.val() {
                    self.state.d.next = self.k_reserve.val();
                    if self.err.q.val() | self.rd_data_err.val() {
                        // Skip the entry whose descriptor could not be read.
                        self.ev_dma_error.next = true;
                        self.cons_load.next = true;
                        self.state.d.next = self.k_idle.val();
                    } else if (self.rd_data.val().get_bits::<16>(0) < self.k_min_len.val())
                        | (self.rd_data.val().get_bits::<16>(0) > self.k_max_len.val())
                    {
                        self.ev_ring_error.next = true;
                        self.cons_load.next = true;
                        self.state.d.next = self.k_idle.val();
                    }
                }
            }
        } else if self.state.q.val() == self.k_reserve.val() {
            if self.fits.val() <= self.k_reserve_words.val() {
                self.held_add.next = self.beats.val();
                self.rem.d.next = self.len.q.val();
                self.err.d.next = false;
                self.state.d.next = self.k_req_frame.val();
            }
        } else if self.state.q.val() == self.k_req_frame.val() {
            self.rd_req_valid.next = true;
            self.rd_req_addr.next = self.frame_addr.q.val();
            self.rd_req_len.next = self.len.q.val();
            self.rd_req_tag.next = self.k_tag_frame.val();
            if self.rd_req_ready.val() {
                self.state.d.next = self.k_data.val();
            }
        } else if self.state.q.val() == self.k_data.val() {
            // Room is reserved: the data is always taken.
            self.rd_data_ready.next = true;
            if self.rd_data_valid.val() {
                self.take.next = true;
                self.fifo.wr_en.next = true;
                self.fifo.wr_last.next = self.rem.q.val() <= self.k_eight.val();
                self.fifo.wr_user.next = self.err.q.val() | self.rd_data_err.val();
                self.rem.d.next = self.rem_next.val();
                if self.rd_data_err.val() {
                    self.err.d.next = true;
                }
                if self.rem.q.val() <= self.k_eight.val() {
                    self.cons_load.next = true;
                    self.state.d.next = self.k_idle.val();
                    if self.err.q.val() | self.rd_data_err.val() {
                        self.fifo.rewind.next = true;
                        self.held_sub.next = self.beats.val();
                        self.ev_dma_error.next = true;
                    } else {
                        self.fifo.commit.next = true;
                        self.ev_frame.next = true;
                    }
                }
            }
        }

        // Reservation: frames being read, and beats still in the FIFO.
        self.m_axis_tdata.next = self.fifo.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.fifo.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.fifo.m_axis_tlast.val();
        self.m_axis_tuser.next = self.fifo.m_axis_tuser.val();
        self.m_axis_tvalid.next = self.fifo.m_axis_tvalid.val();
        self.fifo.m_axis_tready.next = self.m_axis_tready.val();
        if self.fifo.m_axis_tvalid.val() & self.m_axis_tready.val() {
            self.held.d.next =
                self.held.q.val() + self.held_add.val() - self.held_sub.val() - self.k_one16.val();
        } else {
            self.held.d.next = self.held.q.val() + self.held_add.val() - self.held_sub.val();
        }

        if self.reset.val() {
            self.state.d.next = self.k_idle.val();
            self.held.d.next = self.k_zero16.val();
            self.refused.d.next = false;
        }
    }
}
