//! The requester's scheduler: round robin over the QPs whose send queue has work, one turn at
//! a time, in constant hardware for any number of QPs (a FIFO of QP numbers and one bit per
//! QP in block RAM, as Corundum's transmit scheduler), not a pending bitmap scanned by a
//! pointer.
//!
//! - A **doorbell** (`db_*`, from the send queues' manager, after the producer index landed)
//!   schedules its QP: a QP not yet scheduled goes to the end of the FIFO; a scheduled one is
//!   left where it is (it reads its producer index when its turn comes), unless it is the QP
//!   being served, which then gets another turn.
//! - A **turn** (`m_*`): the QP at the head of the FIFO is offered; once taken it is being
//!   served until the requester reports the turn's end (`s_done_*`): with `more` (work left,
//!   or held back by its rate limiter: the DCQCN hook) or a doorbell during the turn, it goes
//!   to the end of the FIFO, otherwise it leaves the schedule. Every scheduled QP gets one
//!   turn per round.
//! - The scheduled bits live in block RAM, read one clock after the doorbell: the bits written
//!   in the clock before (set by a doorbell, cleared by a QP leaving) and a clear not yet
//!   written are forwarded, so a QP is in the FIFO at most once and a doorbell is never lost.
//! - The FIFO has one write port: a doorbell's push goes first, a returning QP waits in a
//!   holding register (at most `2^A` clocks of back-to-back new doorbells), and the turn's end
//!   is not taken while one is waiting.
//! - **Reset** clears the scheduled bits (`busy` for `2^A` clocks; doorbells then are
//!   dropped: the host rings only after it set its queues up).

use rust_hdl::prelude::*;

use crate::ram_clear::RamClear;

#[derive(LogicBlock)]
pub struct ReqSched<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub db_valid: Signal<In, Bit>,
    pub db_queue: Signal<In, Bits<A>>,

    pub m_valid: Signal<Out, Bit>,
    pub m_ready: Signal<In, Bit>,
    pub m_qpn: Signal<Out, Bits<A>>,

    pub s_done_valid: Signal<In, Bit>,
    pub s_done_ready: Signal<Out, Bit>,
    /// The QP has work left (or its rate limiter held it back): it goes to the end of the round.
    pub s_done_more: Signal<In, Bit>,

    /// A turn is under way (taken, not yet ended).
    pub serving: Signal<Out, Bit>,
    pub busy: Signal<Out, Bit>,

    fifo: RAM<Bits<A>, A>,
    sched: RAM<Bit, A>,
    clear: RamClear<A>,

    head: DFF<Bits<A>>,
    tail: DFF<Bits<A>>,
    count: DFF<Bits<17>>,
    rd_pend: DFF<Bit>,
    out_valid: DFF<Bit>,
    out_q: DFF<Bits<A>>,
    serv: DFF<Bit>,
    serv_q: DFF<Bits<A>>,
    rang: DFF<Bit>,
    hold_valid: DFF<Bit>,
    hold_q: DFF<Bits<A>>,
    clr_valid: DFF<Bit>,
    clr_q: DFF<Bits<A>>,
    d1_valid: DFF<Bit>,
    d1_q: DFF<Bits<A>>,
    last_set: DFF<Bit>,
    last_set_q: DFF<Bits<A>>,
    last_clr: DFF<Bit>,
    last_clr_q: DFF<Bits<A>>,

    scheduled: Signal<Local, Bit>,
    db_push: Signal<Local, Bit>,
    hold_push: Signal<Local, Bit>,
    push: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    grant: Signal<Local, Bit>,
    done: Signal<Local, Bit>,
    db_serving: Signal<Local, Bit>,
    requeue: Signal<Local, Bit>,
    clr_write: Signal<Local, Bit>,
    k_one_a: Constant<Bits<A>>,
    k_zero_a: Constant<Bits<A>>,
    k_one17: Constant<Bits<17>>,
    k_zero17: Constant<Bits<17>>,
}

impl<const A: usize> Default for ReqSched<A> {
    fn default() -> Self {
        assert!((2..=16).contains(&A), "2^A QPs, A in 2..=16");
        ReqSched {
            clock: Default::default(),
            reset: Default::default(),
            db_valid: Default::default(),
            db_queue: Default::default(),
            m_valid: Default::default(),
            m_ready: Default::default(),
            m_qpn: Default::default(),
            s_done_valid: Default::default(),
            s_done_ready: Default::default(),
            s_done_more: Default::default(),
            serving: Default::default(),
            busy: Default::default(),
            fifo: RAM::new(Default::default()),
            sched: RAM::new(Default::default()),
            clear: Default::default(),
            head: Default::default(),
            tail: Default::default(),
            count: Default::default(),
            rd_pend: Default::default(),
            out_valid: Default::default(),
            out_q: Default::default(),
            serv: Default::default(),
            serv_q: Default::default(),
            rang: Default::default(),
            hold_valid: Default::default(),
            hold_q: Default::default(),
            clr_valid: Default::default(),
            clr_q: Default::default(),
            d1_valid: Default::default(),
            d1_q: Default::default(),
            last_set: Default::default(),
            last_set_q: Default::default(),
            last_clr: Default::default(),
            last_clr_q: Default::default(),
            scheduled: Default::default(),
            db_push: Default::default(),
            hold_push: Default::default(),
            push: Default::default(),
            pop: Default::default(),
            grant: Default::default(),
            done: Default::default(),
            db_serving: Default::default(),
            requeue: Default::default(),
            clr_write: Default::default(),
            k_one_a: Constant::new(bits::<A>(1)),
            k_zero_a: Constant::new(bits::<A>(0)),
            k_one17: Constant::new(bits::<17>(1)),
            k_zero17: Constant::new(bits::<17>(0)),
        }
    }
}

impl<const A: usize> Logic for ReqSched<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, head, tail, count, rd_pend, out_valid, out_q, serv, serv_q, rang,
            hold_valid, hold_q, clr_valid, clr_q, d1_valid, d1_q, last_set, last_set_q, last_clr,
            last_clr_q
        );
        self.fifo.read_clock.next = self.clock.val();
        self.fifo.write_clock.next = self.clock.val();
        self.sched.read_clock.next = self.clock.val();
        self.sched.write_clock.next = self.clock.val();
        self.clear.clock.next = self.clock.val();
        self.clear.reset.next = self.reset.val();

        // ---- Doorbell, clock 0: read the QP's scheduled bit.
        self.sched.read_address.next = self.db_queue.val();
        self.d1_valid.d.next = self.db_valid.val() & !self.clear.busy.val();
        self.d1_q.d.next = self.db_queue.val();

        // ---- Doorbell, clock 1: the bit, with the writes the RAM did not show forwarded.
        self.scheduled.next = self.sched.read_data.val();
        if self.last_clr.q.val() & (self.last_clr_q.q.val() == self.d1_q.q.val()) {
            self.scheduled.next = false;
        }
        if self.clr_valid.q.val() & (self.clr_q.q.val() == self.d1_q.q.val()) {
            self.scheduled.next = false;
        }
        if self.last_set.q.val() & (self.last_set_q.q.val() == self.d1_q.q.val()) {
            self.scheduled.next = true;
        }
        self.db_push.next = self.d1_valid.q.val() & !self.scheduled.val();
        self.db_serving.next = self.d1_valid.q.val()
            & self.scheduled.val()
            & self.serv.q.val()
            & (self.serv_q.q.val() == self.d1_q.q.val());

        // ---- The turn's end.
        self.s_done_ready.next =
            self.serv.q.val() & !self.hold_valid.q.val() & !self.clr_valid.q.val();
        self.done.next = self.s_done_valid.val() & self.s_done_ready.val();
        self.requeue.next = self.s_done_more.val() | self.rang.q.val() | self.db_serving.val();

        // ---- FIFO writes: a doorbell's push first, then a QP returning from its turn.
        self.hold_push.next = self.hold_valid.q.val() & !self.db_push.val();
        self.push.next = self.db_push.val() | self.hold_push.val();
        self.fifo.write_address.next = self.tail.q.val();
        self.fifo.write_data.next = self.d1_q.q.val();
        if self.hold_push.val() {
            self.fifo.write_data.next = self.hold_q.q.val();
        }
        self.fifo.write_enable.next = self.push.val();
        self.tail.d.next = self.tail.q.val();
        if self.push.val() {
            self.tail.d.next = self.tail.q.val() + self.k_one_a.val();
        }
        self.hold_valid.d.next = self.hold_valid.q.val() & !self.hold_push.val();
        self.hold_q.d.next = self.hold_q.q.val();
        if self.done.val() & self.requeue.val() {
            self.hold_valid.d.next = true;
            self.hold_q.d.next = self.serv_q.q.val();
        }

        // ---- Scheduled bits: a doorbell's set first, then a pending clear.
        self.clr_write.next = self.clr_valid.q.val() & !self.db_push.val();
        self.sched.write_address.next = self.d1_q.q.val();
        self.sched.write_data.next = true;
        self.sched.write_enable.next = self.db_push.val();
        if self.clr_write.val() {
            self.sched.write_address.next = self.clr_q.q.val();
            self.sched.write_data.next = false;
            self.sched.write_enable.next = true;
        }
        self.last_set.d.next = self.db_push.val();
        self.last_set_q.d.next = self.d1_q.q.val();
        self.last_clr.d.next = self.clr_write.val();
        self.last_clr_q.d.next = self.clr_q.q.val();
        self.clr_valid.d.next = self.clr_valid.q.val() & !self.clr_write.val();
        // A QP scheduled again before its clear was written keeps its bit.
        if self.db_push.val() & (self.clr_q.q.val() == self.d1_q.q.val()) {
            self.clr_valid.d.next = false;
        }
        self.clr_q.d.next = self.clr_q.q.val();
        if self.done.val() & !self.requeue.val() {
            self.clr_valid.d.next = true;
            self.clr_q.d.next = self.serv_q.q.val();
        }

        // ---- Turns: read the head when nothing is offered or served, offer it.
        self.pop.next = !self.serv.q.val()
            & !self.out_valid.q.val()
            & !self.rd_pend.q.val()
            & (self.count.q.val() != 0);
        self.fifo.read_address.next = self.head.q.val();
        self.head.d.next = self.head.q.val();
        if self.pop.val() {
            self.head.d.next = self.head.q.val() + self.k_one_a.val();
        }
        self.rd_pend.d.next = self.pop.val();
        self.grant.next = self.out_valid.q.val() & self.m_ready.val();
        self.out_valid.d.next =
            self.rd_pend.q.val() | (self.out_valid.q.val() & !self.m_ready.val());
        self.out_q.d.next = self.out_q.q.val();
        if self.rd_pend.q.val() {
            self.out_q.d.next = self.fifo.read_data.val();
        }
        self.m_valid.next = self.out_valid.q.val();
        self.m_qpn.next = self.out_q.q.val();
        self.count.d.next = self.count.q.val();
        if self.push.val() & !self.pop.val() {
            self.count.d.next = self.count.q.val() + self.k_one17.val();
        }
        if !self.push.val() & self.pop.val() {
            self.count.d.next = self.count.q.val() - self.k_one17.val();
        }

        // ---- Serving.
        self.serv.d.next = self.serv.q.val();
        self.serv_q.d.next = self.serv_q.q.val();
        self.rang.d.next = self.rang.q.val() | self.db_serving.val();
        if self.done.val() {
            self.serv.d.next = false;
            self.rang.d.next = false;
        }
        if self.grant.val() {
            self.serv.d.next = true;
            self.serv_q.d.next = self.out_q.q.val();
            // A doorbell decided as the turn starts belongs to it.
            self.rang.d.next = self.d1_valid.q.val()
                & self.scheduled.val()
                & (self.d1_q.q.val() == self.out_q.q.val());
        }
        self.serving.next = self.serv.q.val();

        // ---- Reset: clear every scheduled bit, one per clock.
        self.busy.next = self.clear.busy.val();
        if self.clear.busy.val() {
            self.sched.write_address.next = self.clear.addr.val();
            self.sched.write_data.next = false;
            self.sched.write_enable.next = true;
        }
        if self.reset.val() {
            self.head.d.next = self.k_zero_a.val();
            self.tail.d.next = self.k_zero_a.val();
            self.count.d.next = self.k_zero17.val();
            self.rd_pend.d.next = false;
            self.out_valid.d.next = false;
            self.serv.d.next = false;
            self.rang.d.next = false;
            self.hold_valid.d.next = false;
            self.clr_valid.d.next = false;
            self.d1_valid.d.next = false;
            self.last_set.d.next = false;
            self.last_clr.d.next = false;
        }
    }
}
