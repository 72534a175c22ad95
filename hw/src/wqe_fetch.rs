//! The descriptor fetch engine of one block of work rings (send or receive queues): queues
//! whose doorbell rang are marked pending; a round-robin pointer visits them one per cycle;
//! for a pending queue the engine looks it up in the queue manager and, while it is enabled
//! and its producer is ahead of its consumer, reads the work request at the consumer's slot
//! over the DMA port, hands its beats to the engine behind (`m_wqe_*`, the queue and the ring
//! index on every beat) and commits the consumer index one further. A queue goes back to the
//! end of the round after each request, so one busy queue cannot starve the others; an
//! empty or disabled queue leaves the pending set.
//!
//! The engine behind says it has room for a whole request (`m_wqe_room`) before a read is
//! issued, so the DMA port's shared read data channel never waits on it.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct WqeFetch<const Q: usize, const N: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Doorbells from the queue manager.
    pub db_valid: Signal<In, Bit>,
    pub db_queue: Signal<In, Bits<Q>>,

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

    /// The engine behind can take a whole work request.
    pub m_wqe_room: Signal<In, Bit>,
    pub m_wqe_valid: Signal<Out, Bit>,
    pub m_wqe_data: Signal<Out, Bits<64>>,
    pub m_wqe_last: Signal<Out, Bit>,
    /// The request could not be read (the host refused the DMA read).
    pub m_wqe_err: Signal<Out, Bit>,
    pub m_wqe_queue: Signal<Out, Bits<Q>>,
    pub m_wqe_index: Signal<Out, Bits<16>>,

    pending: DFF<Bits<N>>,
    ptr: DFF<Bits<Q>>,
    state: DFF<Bits<3>>,
    queue: DFF<Bits<Q>>,
    addr: DFF<Bits<64>>,
    cons: DFF<Bits<16>>,
    /// The queue's doorbell rang while its lookup was under way: its answer may be stale.
    rang: DFF<Bit>,
    /// The read request is offered: it stays offered until taken, whatever room says.
    offered: DFF<Bit>,

    size32: Signal<Local, Bits<32>>,
    mask: Signal<Local, Bits<16>>,
    ptr_bit: Signal<Local, Bits<N>>,
    q_bit: Signal<Local, Bits<N>>,
    db_bit: Signal<Local, Bits<N>>,
    pending_next: Signal<Local, Bits<N>>,

    k_idle: Constant<Bits<3>>,
    k_look: Constant<Bits<3>>,
    k_check: Constant<Bits<3>>,
    k_req: Constant<Bits<3>>,
    k_data: Constant<Bits<3>>,
    k_commit: Constant<Bits<3>>,
    k_one_n: Constant<Bits<N>>,
    k_one_q: Constant<Bits<Q>>,
    k_one16: Constant<Bits<16>>,
    k_one32: Constant<Bits<32>>,
    k_zero_n: Constant<Bits<N>>,
    k_entry_log: Constant<Bits<5>>,
    k_entry_len: Constant<Bits<16>>,
    k_tag: Constant<Bits<7>>,
}

impl<const Q: usize, const N: usize> WqeFetch<Q, N> {
    /// A fetch engine for `N = 2^Q` rings of `2^entry_log`-byte work requests.
    pub fn new(entry_log: u32) -> Self {
        assert_eq!(N, 1 << Q, "N is 2^Q");
        assert!((3..=12).contains(&entry_log));
        WqeFetch {
            clock: Default::default(),
            reset: Default::default(),
            db_valid: Default::default(),
            db_queue: Default::default(),
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
            m_wqe_room: Default::default(),
            m_wqe_valid: Default::default(),
            m_wqe_data: Default::default(),
            m_wqe_last: Default::default(),
            m_wqe_err: Default::default(),
            m_wqe_queue: Default::default(),
            m_wqe_index: Default::default(),
            pending: Default::default(),
            ptr: Default::default(),
            state: Default::default(),
            queue: Default::default(),
            addr: Default::default(),
            cons: Default::default(),
            rang: Default::default(),
            offered: Default::default(),
            size32: Default::default(),
            mask: Default::default(),
            ptr_bit: Default::default(),
            q_bit: Default::default(),
            db_bit: Default::default(),
            pending_next: Default::default(),
            k_idle: Constant::new(bits::<3>(0)),
            k_look: Constant::new(bits::<3>(1)),
            k_check: Constant::new(bits::<3>(2)),
            k_req: Constant::new(bits::<3>(3)),
            k_data: Constant::new(bits::<3>(4)),
            k_commit: Constant::new(bits::<3>(5)),
            k_one_n: Constant::new(bits::<N>(1)),
            k_one_q: Constant::new(bits::<Q>(1)),
            k_one16: Constant::new(bits::<16>(1)),
            k_one32: Constant::new(bits::<32>(1)),
            k_zero_n: Constant::new(bits::<N>(0)),
            k_entry_log: Constant::new(bits::<5>(u64::from(entry_log))),
            k_entry_len: Constant::new(bits::<16>(1 << entry_log)),
            k_tag: Constant::new(bits::<7>(4)),
        }
    }
}

impl<const Q: usize, const N: usize> Logic for WqeFetch<Q, N> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, pending, ptr, state, queue, addr, cons, rang, offered
        );

        self.ptr_bit.next = self.k_one_n.val() << self.ptr.q.val();
        self.q_bit.next = self.k_one_n.val() << self.queue.q.val();
        self.db_bit.next = self.k_one_n.val() << self.db_queue.val();
        self.pending_next.next = self.pending.q.val();
        self.size32.next = self.k_one32.val() << self.got_size.val().get_bits::<5>(0);
        self.mask.next = self.size32.val().get_bits::<16>(0) - self.k_one16.val();

        self.look_valid.next = false;
        self.look_queue.next = self.queue.q.val();
        self.commit_valid.next = false;
        self.commit_queue.next = self.queue.q.val();
        self.commit_index.next = self.cons.q.val() + self.k_one16.val();
        self.rd_req_valid.next = false;
        self.rd_req_addr.next = self.addr.q.val();
        self.rd_req_len.next = self.k_entry_len.val();
        self.rd_req_tag.next = self.k_tag.val();
        self.rd_data_ready.next = false;
        self.m_wqe_valid.next = false;
        self.m_wqe_data.next = self.rd_data.val();
        self.m_wqe_last.next = self.rd_data_last.val();
        self.m_wqe_err.next = self.rd_data_err.val();
        self.m_wqe_queue.next = self.queue.q.val();
        self.m_wqe_index.next = self.cons.q.val();

        if self.state.q.val() == self.k_idle.val() {
            // Visit one queue per cycle.
            if (self.pending.q.val() & self.ptr_bit.val()).any() {
                self.queue.d.next = self.ptr.q.val();
                self.rang.d.next = false;
                self.state.d.next = self.k_look.val();
            }
            self.ptr.d.next = self.ptr.q.val() + self.k_one_q.val();
        } else if self.state.q.val() == self.k_look.val() {
            self.look_valid.next = true;
            if self.look_ready.val() {
                self.state.d.next = self.k_check.val();
            }
        } else if self.state.q.val() == self.k_check.val() {
            if self.got_valid.val() {
                self.cons.d.next = self.got_cons.val();
                self.addr.d.next = self.got_base.val()
                    + (bit_cast::<64, 16>(self.got_cons.val() & self.mask.val())
                        << self.k_entry_log.val());
                self.state.d.next = self.k_req.val();
                // Disabled (SIZE.ENABLE, bit 8) or empty: no longer pending.
                if (!self.got_size.val().get_bit(8) | (self.got_prod.val() == self.got_cons.val()))
                    & !self.rang.q.val()
                {
                    self.pending_next.next = self.pending.q.val() & !self.q_bit.val();
                    self.state.d.next = self.k_idle.val();
                }
            }
        } else if self.state.q.val() == self.k_req.val() {
            // Room promised once is kept: an offered request is not withdrawn.
            self.rd_req_valid.next = self.m_wqe_room.val() | self.offered.q.val();
            self.offered.d.next = self.rd_req_valid.val() & !self.rd_req_ready.val();
            if self.rd_req_valid.val() & self.rd_req_ready.val() {
                self.state.d.next = self.k_data.val();
            }
        } else if self.state.q.val() == self.k_data.val() {
            // Room was promised: every beat is taken.
            self.rd_data_ready.next = true;
            self.m_wqe_valid.next = self.rd_data_valid.val();
            if self.rd_data_valid.val() & self.rd_data_last.val() {
                self.state.d.next = self.k_commit.val();
            }
        } else if self.state.q.val() == self.k_commit.val() {
            self.commit_valid.next = true;
            if self.commit_ready.val() {
                // Still pending; the round goes on past it.
                self.state.d.next = self.k_idle.val();
            }
        }
        // A doorbell marks its queue pending (after any clearing above).
        if self.db_valid.val() {
            self.pending_next.next = self.pending_next.val() | self.db_bit.val();
            if self.db_queue.val() == self.queue.q.val() {
                self.rang.d.next = true;
            }
        }
        self.pending.d.next = self.pending_next.val();

        if self.reset.val() {
            self.state.d.next = self.k_idle.val();
            self.offered.d.next = false;
            self.pending.d.next = self.k_zero_n.val();
        }
    }
}
