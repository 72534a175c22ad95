//! The completion writer: completions from the engines into the host's completion rings. A
//! completion arrives as the four 64-bit beats of a `cqe` (32 bytes) with the CQ number on
//! its first beat; the writer looks the CQ up in its queue manager, refuses it (counted) if
//! the ring is disabled or full, writes the entry over the DMA port at the producer's slot
//! with the PHASE bit of this pass (1 on the first pass, then alternating), and once the
//! write is done advances the producer. An armed CQ raises its interrupt for that entry and
//! is disarmed. Engines hand a completion over only after the payload writes it reports are
//! done, so no entry is ever visible before its data.

use rust_hdl::prelude::*;

/// The CQE's PHASE bit: byte 0x1f, bit 7, so bit 63 of the fourth beat.
pub const PHASE_BIT: usize = 63;

#[derive(LogicBlock)]
pub struct CqWriter<const Q: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// The completion, four beats; `s_cqe_cq` is read on the first.
    pub s_cqe_valid: Signal<In, Bit>,
    pub s_cqe_ready: Signal<Out, Bit>,
    pub s_cqe_cq: Signal<In, Bits<Q>>,
    pub s_cqe_data: Signal<In, Bits<64>>,
    pub s_cqe_last: Signal<In, Bit>,

    pub look_valid: Signal<Out, Bit>,
    pub look_ready: Signal<In, Bit>,
    pub look_queue: Signal<Out, Bits<Q>>,
    pub got_valid: Signal<In, Bit>,
    pub got_base: Signal<In, Bits<64>>,
    pub got_size: Signal<In, Bits<32>>,
    pub got_prod: Signal<In, Bits<16>>,
    pub got_cons: Signal<In, Bits<16>>,
    pub commit_valid: Signal<Out, Bit>,
    pub commit_ready: Signal<In, Bit>,
    pub commit_queue: Signal<Out, Bits<Q>>,
    pub commit_index: Signal<Out, Bits<16>>,
    pub disarm_valid: Signal<Out, Bit>,
    pub disarm_ready: Signal<In, Bit>,
    pub disarm_queue: Signal<Out, Bits<Q>>,
    pub disarm_size: Signal<Out, Bits<32>>,

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

    /// One-cycle events: an entry written, one refused (ring off or full), a refused DMA
    /// write, an interrupt for CQ `ev_irq_cq`.
    pub ev_written: Signal<Out, Bit>,
    pub ev_overflow: Signal<Out, Bit>,
    pub ev_dma_error: Signal<Out, Bit>,
    pub ev_irq: Signal<Out, Bit>,
    pub ev_irq_cq: Signal<Out, Bits<Q>>,

    state: DFF<Bits<3>>,
    cq: DFF<Bits<Q>>,
    base: DFF<Bits<64>>,
    size: DFF<Bits<32>>,
    prod: DFF<Bits<16>>,
    done_seen: DFF<Bit>,

    size32: Signal<Local, Bits<32>>,
    ring: Signal<Local, Bits<16>>,
    mask: Signal<Local, Bits<16>>,
    g_size32: Signal<Local, Bits<32>>,
    g_ring: Signal<Local, Bits<16>>,
    g_used: Signal<Local, Bits<16>>,
    pass: Signal<Local, Bits<32>>,

    k_idle: Constant<Bits<3>>,
    k_look: Constant<Bits<3>>,
    k_req: Constant<Bits<3>>,
    k_data: Constant<Bits<3>>,
    k_wait: Constant<Bits<3>>,
    k_commit: Constant<Bits<3>>,
    k_drop: Constant<Bits<3>>,
    k_one16: Constant<Bits<16>>,
    k_one32: Constant<Bits<32>>,
    k_len: Constant<Bits<16>>,
    k_full_keep: Constant<Bits<8>>,
    k_tag: Constant<Bits<7>>,
    k_phase: Constant<Bits<64>>,
}

impl<const Q: usize> Default for CqWriter<Q> {
    fn default() -> Self {
        CqWriter {
            clock: Default::default(),
            reset: Default::default(),
            s_cqe_valid: Default::default(),
            s_cqe_ready: Default::default(),
            s_cqe_cq: Default::default(),
            s_cqe_data: Default::default(),
            s_cqe_last: Default::default(),
            look_valid: Default::default(),
            look_ready: Default::default(),
            look_queue: Default::default(),
            got_valid: Default::default(),
            got_base: Default::default(),
            got_size: Default::default(),
            got_prod: Default::default(),
            got_cons: Default::default(),
            commit_valid: Default::default(),
            commit_ready: Default::default(),
            commit_queue: Default::default(),
            commit_index: Default::default(),
            disarm_valid: Default::default(),
            disarm_ready: Default::default(),
            disarm_queue: Default::default(),
            disarm_size: Default::default(),
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
            ev_written: Default::default(),
            ev_overflow: Default::default(),
            ev_dma_error: Default::default(),
            ev_irq: Default::default(),
            ev_irq_cq: Default::default(),
            state: Default::default(),
            cq: Default::default(),
            base: Default::default(),
            size: Default::default(),
            prod: Default::default(),
            done_seen: Default::default(),
            size32: Default::default(),
            ring: Default::default(),
            mask: Default::default(),
            g_size32: Default::default(),
            g_ring: Default::default(),
            g_used: Default::default(),
            pass: Default::default(),
            k_idle: Constant::new(bits::<3>(0)),
            k_look: Constant::new(bits::<3>(1)),
            k_req: Constant::new(bits::<3>(2)),
            k_data: Constant::new(bits::<3>(3)),
            k_wait: Constant::new(bits::<3>(4)),
            k_commit: Constant::new(bits::<3>(5)),
            k_drop: Constant::new(bits::<3>(6)),
            k_one16: Constant::new(bits::<16>(1)),
            k_one32: Constant::new(bits::<32>(1)),
            k_len: Constant::new(bits::<16>(32)),
            k_full_keep: Constant::new(bits::<8>(0xFF)),
            k_tag: Constant::new(bits::<7>(3)),
            k_phase: Constant::new(bits::<64>(1 << PHASE_BIT)),
        }
    }
}

impl<const Q: usize> Logic for CqWriter<Q> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, cq, base, size, prod, done_seen);

        // The looked-up ring: entries, slot mask, fill, this pass (SIZE.LOG_SIZE is 4:0).
        self.size32.next = self.k_one32.val() << self.size.q.val().get_bits::<5>(0);
        self.ring.next = self.size32.val().get_bits::<16>(0);
        self.mask.next = self.ring.val() - self.k_one16.val();
        self.g_size32.next = self.k_one32.val() << self.got_size.val().get_bits::<5>(0);
        self.g_ring.next = self.g_size32.val().get_bits::<16>(0);
        self.g_used.next = self.got_prod.val() - self.got_cons.val();
        self.pass.next =
            bit_cast::<32, 16>(self.prod.q.val()) >> self.size.q.val().get_bits::<5>(0);

        self.s_cqe_ready.next = false;
        self.look_valid.next = false;
        self.look_queue.next = self.s_cqe_cq.val();
        self.commit_valid.next = false;
        self.commit_queue.next = self.cq.q.val();
        self.commit_index.next = self.prod.q.val() + self.k_one16.val();
        self.disarm_valid.next = false;
        self.disarm_queue.next = self.cq.q.val();
        self.disarm_size.next = self.size.q.val();
        self.wr_req_valid.next = false;
        self.wr_req_addr.next =
            self.base.q.val() + (bit_cast::<64, 16>(self.prod.q.val() & self.mask.val()) << 5);
        self.wr_req_len.next = self.k_len.val();
        self.wr_req_tag.next = self.k_tag.val();
        self.wr_data_valid.next = false;
        self.wr_data.next = self.s_cqe_data.val();
        if self.s_cqe_last.val() {
            self.wr_data.next = self.s_cqe_data.val() & !self.k_phase.val();
            if !self.pass.val().get_bit(0) {
                self.wr_data.next = self.s_cqe_data.val() | self.k_phase.val();
            }
        }
        self.wr_data_keep.next = self.k_full_keep.val();
        self.wr_data_last.next = self.s_cqe_last.val();
        self.ev_written.next = false;
        self.ev_overflow.next = false;
        self.ev_dma_error.next = false;
        self.ev_irq.next = false;
        self.ev_irq_cq.next = self.cq.q.val();

        if self.state.q.val() == self.k_idle.val() {
            if self.s_cqe_valid.val() {
                self.look_valid.next = true;
                if self.look_ready.val() {
                    self.cq.d.next = self.s_cqe_cq.val();
                    self.state.d.next = self.k_look.val();
                }
            }
        } else if self.state.q.val() == self.k_look.val() {
            if self.got_valid.val() {
                self.base.d.next = self.got_base.val();
                self.size.d.next = self.got_size.val();
                self.prod.d.next = self.got_prod.val();
                self.state.d.next = self.k_req.val();
                // Disabled (SIZE.ENABLE, bit 8), or full: refused.
                if !self.got_size.val().get_bit(8) | (self.g_used.val() >= self.g_ring.val()) {
                    self.ev_overflow.next = true;
                    self.state.d.next = self.k_drop.val();
                }
            }
        } else if self.state.q.val() == self.k_req.val() {
            self.wr_req_valid.next = true;
            if self.wr_req_ready.val() {
                self.state.d.next = self.k_data.val();
            }
        } else if self.state.q.val() == self.k_data.val() {
            self.wr_data_valid.next = self.s_cqe_valid.val();
            self.s_cqe_ready.next = self.wr_data_ready.val();
            if self.s_cqe_valid.val() & self.wr_data_ready.val() & self.s_cqe_last.val() {
                self.state.d.next = self.k_wait.val();
            }
        } else if self.state.q.val() == self.k_wait.val() {
            if self.done_seen.q.val() {
                self.done_seen.d.next = false;
                self.state.d.next = self.k_commit.val();
            }
        } else if self.state.q.val() == self.k_commit.val() {
            self.commit_valid.next = true;
            self.disarm_valid.next = self.size.q.val().get_bit(9);
            if self.commit_ready.val() & (self.disarm_ready.val() | !self.size.q.val().get_bit(9)) {
                self.ev_written.next = true;
                self.ev_irq.next = self.size.q.val().get_bit(9);
                self.state.d.next = self.k_idle.val();
            }
        } else if self.state.q.val() == self.k_drop.val() {
            self.s_cqe_ready.next = true;
            if self.s_cqe_valid.val() & self.s_cqe_last.val() {
                self.state.d.next = self.k_idle.val();
            }
        }
        if self.wr_done_valid.val() {
            self.done_seen.d.next = true;
            if self.wr_done_err.val() {
                self.ev_dma_error.next = true;
            }
        }
        if self.reset.val() {
            self.state.d.next = self.k_idle.val();
            self.done_seen.d.next = false;
        }
    }
}
