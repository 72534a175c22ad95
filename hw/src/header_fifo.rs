//! A FIFO of header words, `W` bits wide and `2^A` deep, between the receive parser's header
//! channel and the transport engines: the parser hands a header over the clock its payload is
//! committed and goes on parsing, while an engine takes its time over its tables. Shallow and
//! wide, so synthesis puts it in LUT RAM (16 deep: `W / 4` RAM slices) rather than in block RAM
//! sized by width.
//!
//! The read side is first-word-fall-through, as [`crate::commit_fifo`]: the RAM's registered
//! output feeds an output register. `s_ready` is a register (decided a clock early), so the
//! writer's flow control never waits on the fill count.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct HeaderFifo<const W: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_data: Signal<In, Bits<W>>,
    pub s_valid: Signal<In, Bit>,
    pub s_ready: Signal<Out, Bit>,
    pub m_data: Signal<Out, Bits<W>>,
    pub m_valid: Signal<Out, Bit>,
    pub m_ready: Signal<In, Bit>,
    /// Words held (RAM and output register), for benches and status.
    pub fill: Signal<Out, Bits<8>>,

    mem: RAM<Bits<W>, A>,
    wr_ptr: DFF<Bits<A>>,
    rd_ptr: DFF<Bits<A>>,
    last_addr: DFF<Bits<A>>,
    ram_valid: DFF<Bit>,
    out_valid: DFF<Bit>,
    out_word: DFF<Bits<W>>,
    ready_q: DFF<Bit>,
    count: DFF<Bits<8>>,

    push: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    wr_next: Signal<Local, Bits<A>>,
    used: Signal<Local, Bits<A>>,
    avail: Signal<Local, Bit>,
    out_load: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    k_one: Constant<Bits<A>>,
    k_zero: Constant<Bits<A>>,
    /// The RAM holds at most `2^A - 1` words; `s_ready` drops one word early.
    k_limit: Constant<Bits<A>>,
    k_one8: Constant<Bits<8>>,
    k_zero8: Constant<Bits<8>>,
}

impl<const W: usize, const A: usize> Default for HeaderFifo<W, A> {
    fn default() -> Self {
        assert!((2..=7).contains(&A), "2^A entries, A in 2..=7");
        HeaderFifo {
            clock: Default::default(),
            reset: Default::default(),
            s_data: Default::default(),
            s_valid: Default::default(),
            s_ready: Default::default(),
            m_data: Default::default(),
            m_valid: Default::default(),
            m_ready: Default::default(),
            fill: Default::default(),
            mem: RAM::new(Default::default()),
            wr_ptr: Default::default(),
            rd_ptr: Default::default(),
            last_addr: Default::default(),
            ram_valid: Default::default(),
            out_valid: Default::default(),
            out_word: Default::default(),
            ready_q: Default::default(),
            count: Default::default(),
            push: Default::default(),
            pop: Default::default(),
            wr_next: Default::default(),
            used: Default::default(),
            avail: Default::default(),
            out_load: Default::default(),
            issue: Default::default(),
            k_one: Constant::new(bits::<A>(1)),
            k_zero: Constant::new(bits::<A>(0)),
            k_limit: Constant::new(bits::<A>((1 << A) - 2)),
            k_one8: Constant::new(bits::<8>(1)),
            k_zero8: Constant::new(bits::<8>(0)),
        }
    }
}

impl<const W: usize, const A: usize> Logic for HeaderFifo<W, A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, wr_ptr, rd_ptr, last_addr, ram_valid, out_valid, out_word, ready_q, count
        );
        self.mem.read_clock.next = self.clock.val();
        self.mem.write_clock.next = self.clock.val();

        // ---- Write side.
        self.push.next = self.s_valid.val() & self.ready_q.q.val();
        self.mem.write_data.next = self.s_data.val();
        self.mem.write_address.next = self.wr_ptr.q.val();
        self.mem.write_enable.next = self.push.val();
        self.wr_next.next = self.wr_ptr.q.val();
        if self.push.val() {
            self.wr_next.next = self.wr_ptr.q.val() + self.k_one.val();
        }
        self.wr_ptr.d.next = self.wr_next.val();
        // Words in the RAM not yet read out, after this clock's write: ready for another if
        // that leaves one more free (a word written meanwhile is counted by `wr_next`).
        self.used.next = self.wr_next.val() - self.rd_ptr.q.val();
        self.ready_q.d.next = self.used.val() < self.k_limit.val();
        self.s_ready.next = self.ready_q.q.val();

        // ---- Read side: RAM register, then the output register.
        self.avail.next = self.rd_ptr.q.val() != self.wr_ptr.q.val();
        self.out_load.next =
            self.ram_valid.q.val() & (!self.out_valid.q.val() | self.m_ready.val());
        self.issue.next = self.avail.val() & (!self.ram_valid.q.val() | self.out_load.val());
        self.mem.read_address.next = self.last_addr.q.val();
        self.rd_ptr.d.next = self.rd_ptr.q.val();
        self.last_addr.d.next = self.last_addr.q.val();
        if self.issue.val() {
            self.mem.read_address.next = self.rd_ptr.q.val();
            self.last_addr.d.next = self.rd_ptr.q.val();
            self.rd_ptr.d.next = self.rd_ptr.q.val() + self.k_one.val();
        }
        self.ram_valid.d.next = self.issue.val() | (self.ram_valid.q.val() & !self.out_load.val());
        self.out_valid.d.next =
            self.out_load.val() | (self.out_valid.q.val() & !self.m_ready.val());
        self.out_word.d.next = self.out_word.q.val();
        if self.out_load.val() {
            self.out_word.d.next = self.mem.read_data.val();
        }
        self.m_valid.next = self.out_valid.q.val();
        self.m_data.next = self.out_word.q.val();

        // ---- Fill: words pushed less words popped.
        self.pop.next = self.out_valid.q.val() & self.m_ready.val();
        self.count.d.next = self.count.q.val();
        if self.push.val() & !self.pop.val() {
            self.count.d.next = self.count.q.val() + self.k_one8.val();
        }
        if !self.push.val() & self.pop.val() {
            self.count.d.next = self.count.q.val() - self.k_one8.val();
        }
        self.fill.next = self.count.q.val();

        if self.reset.val() {
            self.wr_ptr.d.next = self.k_zero.val();
            self.rd_ptr.d.next = self.k_zero.val();
            self.ram_valid.d.next = false;
            self.out_valid.d.next = false;
            self.ready_q.d.next = true;
            self.count.d.next = self.k_zero8.val();
        }
    }
}
