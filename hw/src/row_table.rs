//! A table of `2^A` rows of `W` bits (at most 256) in block RAM, written and read by the host
//! through a register window of eight words per row (`regs::ROW`), looked up by the engines.
//!
//! - Host writes: words 0-6 land in a staging register; a write of word 7 commits the row
//!   (staging and word 7) at once, so an engine never sees half a row. A row is written
//!   whole: the driver keeps no partial updates.
//! - Host reads: `rd_start` with a row and word answers on `rd_data` the next cycle (the RAM's
//!   registered output), the row as committed; host reads go first, as in the queue manager.
//! - Engines: `look_*` reads a row (answered the next cycle on `got_*`, while `look_ready` was
//!   high). A lookup sees the commits of earlier cycles (the RAM reads before it writes).
//!
//! Block RAM keeps its contents through resets: the driver writes every row it uses.

use rnic_regmap::desc::{
    COMP_STATE, COMP_VIEW, Format, MR_ENTRY, QP_ATTR, REQ_STATE, RESP_RESOURCE, RESP_STATE,
    packed_bits,
};
use rust_hdl::prelude::*;

/// Bits of a memory region table row (`desc::MR_ENTRY`).
pub const MR_BITS: usize = packed_bits(MR_ENTRY.fields);
/// Bits of a QP attribute table row (`desc::QP_ATTR`).
pub const QP_BITS: usize = packed_bits(QP_ATTR.fields);
/// Bits of a responder state row (`desc::RESP_STATE`).
pub const RS_BITS: usize = packed_bits(RESP_STATE.fields);
/// Bits of a responder resource slot (`desc::RESP_RESOURCE`).
pub const RR_BITS: usize = packed_bits(RESP_RESOURCE.fields);

/// Bits of a completer view row (`desc::COMP_VIEW`).
pub const CV_BITS: usize = packed_bits(COMP_VIEW.fields);

/// Bits of a requester state row (`desc::REQ_STATE`).
pub const RQ_BITS: usize = packed_bits(REQ_STATE.fields);

/// Bits of a completer state row (`desc::COMP_STATE`).
pub const CS_BITS: usize = packed_bits(COMP_STATE.fields);

/// `(offset, width)` of field `name` in a packed row of format `fmt`.
pub fn row_offset_of(fmt: &Format, name: &str) -> Option<(usize, usize)> {
    fmt.field(name).map(|f| {
        (
            8 * usize::from(f.byte) + usize::from(f.bit),
            usize::from(f.bits),
        )
    })
}

/// A field of a memory region row.
pub fn mr_offset_of(name: &str) -> Option<(usize, usize)> {
    row_offset_of(&MR_ENTRY, name)
}

/// A field of a QP attribute row.
pub fn qp_offset_of(name: &str) -> Option<(usize, usize)> {
    row_offset_of(&QP_ATTR, name)
}

/// A field of a responder state row.
pub fn rs_offset_of(name: &str) -> Option<(usize, usize)> {
    row_offset_of(&RESP_STATE, name)
}

/// A field of a completer state row.
pub fn cs_offset_of(name: &str) -> Option<(usize, usize)> {
    row_offset_of(&COMP_STATE, name)
}

/// A field of a completer view row.
pub fn cv_offset_of(name: &str) -> Option<(usize, usize)> {
    row_offset_of(&COMP_VIEW, name)
}

/// A field of a requester state row.
pub fn rq_offset_of(name: &str) -> Option<(usize, usize)> {
    row_offset_of(&REQ_STATE, name)
}

/// `(offset, width)` of field `name` in a responder resource slot.
pub fn rr_offset_of(name: &str) -> Option<(usize, usize)> {
    row_offset_of(&RESP_RESOURCE, name)
}

#[derive(LogicBlock)]
pub struct RowTable<const W: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub wr_en: Signal<In, Bit>,
    pub wr_row: Signal<In, Bits<A>>,
    pub wr_word: Signal<In, Bits<3>>,
    pub wr_data: Signal<In, Bits<32>>,
    pub rd_start: Signal<In, Bit>,
    pub rd_row: Signal<In, Bits<A>>,
    pub rd_word: Signal<In, Bits<3>>,
    pub rd_data: Signal<Out, Bits<32>>,
    pub look_valid: Signal<In, Bit>,
    pub look_ready: Signal<Out, Bit>,
    pub look_row: Signal<In, Bits<A>>,
    pub got_valid: Signal<Out, Bit>,
    pub got_row: Signal<Out, Bits<A>>,
    pub got_data: Signal<Out, Bits<W>>,

    mem: RAM<Bits<W>, A>,
    s0: DFF<Bits<32>>,
    s1: DFF<Bits<32>>,
    s2: DFF<Bits<32>>,
    s3: DFF<Bits<32>>,
    s4: DFF<Bits<32>>,
    s5: DFF<Bits<32>>,
    s6: DFF<Bits<32>>,
    rd_word_q: DFF<Bits<3>>,
    look_q: DFF<Bit>,
    look_row_q: DFF<Bits<A>>,
    row: Signal<Local, Bits<256>>,
    out: Signal<Local, Bits<256>>,
}

impl<const W: usize, const A: usize> Default for RowTable<W, A> {
    fn default() -> Self {
        assert!(W <= 256, "a row is at most eight words");
        RowTable {
            clock: Default::default(),
            reset: Default::default(),
            wr_en: Default::default(),
            wr_row: Default::default(),
            wr_word: Default::default(),
            wr_data: Default::default(),
            rd_start: Default::default(),
            rd_row: Default::default(),
            rd_word: Default::default(),
            rd_data: Default::default(),
            look_valid: Default::default(),
            look_ready: Default::default(),
            look_row: Default::default(),
            got_valid: Default::default(),
            got_row: Default::default(),
            got_data: Default::default(),
            mem: RAM::new(Default::default()),
            s0: Default::default(),
            s1: Default::default(),
            s2: Default::default(),
            s3: Default::default(),
            s4: Default::default(),
            s5: Default::default(),
            s6: Default::default(),
            rd_word_q: Default::default(),
            look_q: Default::default(),
            look_row_q: Default::default(),
            row: Default::default(),
            out: Default::default(),
        }
    }
}

impl<const W: usize, const A: usize> Logic for RowTable<W, A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, s0, s1, s2, s3, s4, s5, s6, rd_word_q, look_q, look_row_q
        );
        self.mem.read_clock.next = self.clock.val();
        self.mem.write_clock.next = self.clock.val();

        // ---- Host writes: stage words 0-6; word 7 commits.
        self.s0.d.next = self.s0.q.val();
        if self.wr_en.val() & (self.wr_word.val() == 0) {
            self.s0.d.next = self.wr_data.val();
        }
        self.s1.d.next = self.s1.q.val();
        if self.wr_en.val() & (self.wr_word.val() == 1) {
            self.s1.d.next = self.wr_data.val();
        }
        self.s2.d.next = self.s2.q.val();
        if self.wr_en.val() & (self.wr_word.val() == 2) {
            self.s2.d.next = self.wr_data.val();
        }
        self.s3.d.next = self.s3.q.val();
        if self.wr_en.val() & (self.wr_word.val() == 3) {
            self.s3.d.next = self.wr_data.val();
        }
        self.s4.d.next = self.s4.q.val();
        if self.wr_en.val() & (self.wr_word.val() == 4) {
            self.s4.d.next = self.wr_data.val();
        }
        self.s5.d.next = self.s5.q.val();
        if self.wr_en.val() & (self.wr_word.val() == 5) {
            self.s5.d.next = self.wr_data.val();
        }
        self.s6.d.next = self.s6.q.val();
        if self.wr_en.val() & (self.wr_word.val() == 6) {
            self.s6.d.next = self.wr_data.val();
        }
        self.row.next = bit_cast::<256, 32>(self.s0.q.val())
            | (bit_cast::<256, 32>(self.s1.q.val()) << 32)
            | (bit_cast::<256, 32>(self.s2.q.val()) << 64)
            | (bit_cast::<256, 32>(self.s3.q.val()) << 96)
            | (bit_cast::<256, 32>(self.s4.q.val()) << 128)
            | (bit_cast::<256, 32>(self.s5.q.val()) << 160)
            | (bit_cast::<256, 32>(self.s6.q.val()) << 192)
            | (bit_cast::<256, 32>(self.wr_data.val()) << 224);
        self.mem.write_data.next = bit_cast::<W, 256>(self.row.val());
        self.mem.write_address.next = self.wr_row.val();
        self.mem.write_enable.next = self.wr_en.val() & (self.wr_word.val() == 7);

        // ---- One read port: the host's read first, else an engine's lookup.
        self.look_ready.next = !self.rd_start.val();
        self.mem.read_address.next = self.look_row.val();
        if self.rd_start.val() {
            self.mem.read_address.next = self.rd_row.val();
        }
        self.rd_word_q.d.next = self.rd_word.val();
        self.look_q.d.next = self.look_valid.val() & !self.rd_start.val();
        self.look_row_q.d.next = self.look_row.val();

        self.got_valid.next = self.look_q.q.val();
        self.got_row.next = self.look_row_q.q.val();
        self.got_data.next = self.mem.read_data.val();
        self.out.next = bit_cast::<256, W>(self.mem.read_data.val());
        self.rd_data.next = self.out.val().get_bits::<32>(0);
        if self.rd_word_q.q.val() == 1 {
            self.rd_data.next = self.out.val().get_bits::<32>(32);
        }
        if self.rd_word_q.q.val() == 2 {
            self.rd_data.next = self.out.val().get_bits::<32>(64);
        }
        if self.rd_word_q.q.val() == 3 {
            self.rd_data.next = self.out.val().get_bits::<32>(96);
        }
        if self.rd_word_q.q.val() == 4 {
            self.rd_data.next = self.out.val().get_bits::<32>(128);
        }
        if self.rd_word_q.q.val() == 5 {
            self.rd_data.next = self.out.val().get_bits::<32>(160);
        }
        if self.rd_word_q.q.val() == 6 {
            self.rd_data.next = self.out.val().get_bits::<32>(192);
        }
        if self.rd_word_q.q.val() == 7 {
            self.rd_data.next = self.out.val().get_bits::<32>(224);
        }
        if self.reset.val() {
            self.look_q.d.next = false;
        }
    }
}
