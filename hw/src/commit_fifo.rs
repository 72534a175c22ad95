//! A store-and-forward frame FIFO in block RAM with commit and rewind: the writer writes a
//! frame's beats speculatively, then either commits them (the reader may now see them) or
//! rewinds (they vanish). The reader only ever sees whole, committed frames.
//!
//! A word is `{tuser, tlast, tkeep[7:0], tdata[63:0]}` (74 bits), `2^A` words deep: a FIFO
//! of frames has [`FRAME_ABITS`] (2048 words: a 9216-byte frame is 1152 beats); one that only
//! holds segments of the path MTU may have fewer. `room` is low when fewer than [`SLACK`]
//! words are free; the writer must not write then. It is a register (decided a clock early,
//! one word short), so the writer's flow control does not wait on the fill count's
//! subtraction. The read side is a first-word-fall-through stream: the RAM's registered
//! output feeds an output register, one word per clock.

use std::collections::BTreeMap;

use rust_hdl::prelude::*;

/// Address bits of a FIFO that holds any frame: 2048 words.
pub const FRAME_ABITS: usize = 11;
/// Words kept free.
pub const SLACK: u64 = 8;
/// Words a writer that reserves room before it reads may reserve in a FIFO of `2^abits`
/// words: the FIFO less its slack.
pub const fn reserve_words(abits: usize) -> u64 {
    (1 << abits) - SLACK
}

/// Width of a stored word.
const WORD: usize = 74;

#[derive(LogicBlock)]
pub struct CommitFifo<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Write a word this clock.
    pub wr_en: Signal<In, Bit>,
    pub wr_data: Signal<In, Bits<64>>,
    pub wr_keep: Signal<In, Bits<8>>,
    pub wr_last: Signal<In, Bit>,
    pub wr_user: Signal<In, Bit>,
    /// Make every word written so far (and this clock's) visible to the reader.
    pub commit: Signal<In, Bit>,
    /// Forget every uncommitted word (and this clock's).
    pub rewind: Signal<In, Bit>,
    /// At least `SLACK` words are free.
    pub room: Signal<Out, Bit>,
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,

    mem: RAM<Bits<WORD>, A>,
    wr_ptr: DFF<Bits<A>>,
    commit_ptr: DFF<Bits<A>>,
    rd_ptr: DFF<Bits<A>>,
    last_addr: DFF<Bits<A>>,
    ram_valid: DFF<Bit>,
    out_valid: DFF<Bit>,
    out_word: DFF<Bits<WORD>>,

    used: Signal<Local, Bits<A>>,
    /// `room`, registered: computed one word short, as one more word may arrive meanwhile.
    room_q: DFF<Bit>,
    wr_next: Signal<Local, Bits<A>>,
    avail: Signal<Local, Bit>,
    out_load: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    word_in: Signal<Local, Bits<WORD>>,

    k_one: Constant<Bits<A>>,
    k_zero: Constant<Bits<A>>,
    k_limit: Constant<Bits<A>>,
    k_last_bit: Constant<Bits<WORD>>,
    k_user_bit: Constant<Bits<WORD>>,
}

impl<const A: usize> Default for CommitFifo<A> {
    fn default() -> Self {
        CommitFifo {
            clock: Default::default(),
            reset: Default::default(),
            wr_en: Default::default(),
            wr_data: Default::default(),
            wr_keep: Default::default(),
            wr_last: Default::default(),
            wr_user: Default::default(),
            commit: Default::default(),
            rewind: Default::default(),
            room: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tuser: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            mem: RAM::new(BTreeMap::new()),
            wr_ptr: Default::default(),
            commit_ptr: Default::default(),
            rd_ptr: Default::default(),
            last_addr: Default::default(),
            ram_valid: Default::default(),
            out_valid: Default::default(),
            out_word: Default::default(),
            used: Default::default(),
            room_q: Default::default(),
            wr_next: Default::default(),
            avail: Default::default(),
            out_load: Default::default(),
            issue: Default::default(),
            word_in: Default::default(),
            k_one: Constant::new(bits::<A>(1)),
            k_zero: Constant::new(bits::<A>(0)),
            k_limit: Constant::new(bits::<A>((1 << A) - SLACK - 1)),
            k_last_bit: Constant::new(bit_cast::<WORD, 64>(bits::<64>(1)) << 72),
            k_user_bit: Constant::new(bit_cast::<WORD, 64>(bits::<64>(1)) << 73),
        }
    }
}

impl<const A: usize> Logic for CommitFifo<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, wr_ptr, commit_ptr, rd_ptr, last_addr, ram_valid, out_valid, out_word,
            room_q
        );
        self.mem.read_clock.next = self.clock.val();
        self.mem.write_clock.next = self.clock.val();

        // ---- Write side.
        self.word_in.next = bit_cast::<WORD, 64>(self.wr_data.val())
            | (bit_cast::<WORD, 8>(self.wr_keep.val()) << 64);
        if self.wr_last.val() {
            self.word_in.next = self.word_in.val() | self.k_last_bit.val();
        }
        if self.wr_user.val() {
            self.word_in.next = self.word_in.val() | self.k_user_bit.val();
        }
        self.mem.write_data.next = self.word_in.val();
        self.mem.write_address.next = self.wr_ptr.q.val();
        self.mem.write_enable.next = self.wr_en.val() & !self.reset.val();
        self.wr_next.next = self.wr_ptr.q.val();
        if self.wr_en.val() {
            self.wr_next.next = self.wr_ptr.q.val() + self.k_one.val();
        }
        self.wr_ptr.d.next = self.wr_next.val();
        self.commit_ptr.d.next = self.commit_ptr.q.val();
        if self.commit.val() {
            self.commit_ptr.d.next = self.wr_next.val();
        }
        if self.rewind.val() {
            self.wr_ptr.d.next = self.commit_ptr.q.val();
        }
        self.used.next = self.wr_ptr.q.val() - self.rd_ptr.q.val();
        self.room_q.d.next = self.used.val() < self.k_limit.val();
        self.room.next = self.room_q.q.val();

        // ---- Read side: RAM register, then the output register.
        self.avail.next = self.rd_ptr.q.val() != self.commit_ptr.q.val();
        self.out_load.next =
            self.ram_valid.q.val() & (!self.out_valid.q.val() | self.m_axis_tready.val());
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
            self.out_load.val() | (self.out_valid.q.val() & !self.m_axis_tready.val());
        self.out_word.d.next = self.out_word.q.val();
        if self.out_load.val() {
            self.out_word.d.next = self.mem.read_data.val();
        }
        self.m_axis_tvalid.next = self.out_valid.q.val();
        self.m_axis_tdata.next = self.out_word.q.val().get_bits::<64>(0);
        self.m_axis_tkeep.next = self.out_word.q.val().get_bits::<8>(64);
        self.m_axis_tlast.next = self.out_word.q.val().get_bit(72);
        self.m_axis_tuser.next = self.out_word.q.val().get_bit(73);

        if self.reset.val() {
            self.wr_ptr.d.next = self.k_zero.val();
            self.commit_ptr.d.next = self.k_zero.val();
            self.rd_ptr.d.next = self.k_zero.val();
            self.ram_valid.d.next = false;
            self.out_valid.d.next = false;
        }
    }
}
