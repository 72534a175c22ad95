//! A byte range of a message against its four scatter/gather entries: the pieces of
//! [`crate::payload_scatter`]'s command. A packet's payload covers the message's bytes
//! `[off, off + len)`; the entries, in order, hold the message's bytes `[0, c1)`, `[c1, c2)`,
//! `[c2, c3)`, `[c3, total)`. Each piece is the intersection of the range with one entry: its
//! device address (the entry's plus the range's start inside it) and its length (0 when they
//! do not meet); `over` when the range runs past the entries' total. The transport model's
//! `scatter_plan` walks the entries the same way (skip, take). Used by the responder (a SEND's
//! packet across the receive request's three entries, the fourth empty) and by the completer
//! (a READ response across the READ's four).
//!
//! Four registered stages, no handshake: the inputs hold steady and the outputs follow them.
//!
//! 1. the range's end and the entries' starts (`m_off`, `m_end` from here);
//! 2. each piece's range in the message, `[max(off, start), min(end, next start))`, and
//!    `m_over`;
//! 3. each piece's start inside its entry and its length (`m_len*` from here);
//! 4. each piece's device address (`m_addr*`), the entry addresses read here.

use rust_hdl::prelude::*;

/// Clocks from steady inputs to every output steady.
pub const LATENCY: usize = 4;

#[derive(LogicBlock, Default)]
pub struct SgePieces {
    pub clock: Signal<In, Clock>,
    /// The range: its start in the message and its length.
    pub s_off: Signal<In, Bits<34>>,
    pub s_len: Signal<In, Bits<16>>,
    /// The entries' device addresses and lengths (zero for entries not used), and their total.
    pub s_addr0: Signal<In, Bits<64>>,
    pub s_len0: Signal<In, Bits<32>>,
    pub s_addr1: Signal<In, Bits<64>>,
    pub s_len1: Signal<In, Bits<32>>,
    pub s_addr2: Signal<In, Bits<64>>,
    pub s_len2: Signal<In, Bits<32>>,
    pub s_addr3: Signal<In, Bits<64>>,
    pub s_len3: Signal<In, Bits<32>>,
    pub s_total: Signal<In, Bits<34>>,
    /// The range (one clock after the inputs).
    pub m_off: Signal<Out, Bits<34>>,
    pub m_end: Signal<Out, Bits<34>>,
    /// The range ends past the entries (two clocks).
    pub m_over: Signal<Out, Bit>,
    /// The pieces: lengths (three clocks) and device addresses (four).
    pub m_addr0: Signal<Out, Bits<64>>,
    pub m_len0: Signal<Out, Bits<16>>,
    pub m_addr1: Signal<Out, Bits<64>>,
    pub m_len1: Signal<Out, Bits<16>>,
    pub m_addr2: Signal<Out, Bits<64>>,
    pub m_len2: Signal<Out, Bits<16>>,
    pub m_addr3: Signal<Out, Bits<64>>,
    pub m_len3: Signal<Out, Bits<16>>,

    // Stage 1.
    x_off: DFF<Bits<34>>,
    x_end: DFF<Bits<34>>,
    x_c1: DFF<Bits<34>>,
    x_c2: DFF<Bits<34>>,
    x_c3: DFF<Bits<34>>,
    x_c4: DFF<Bits<34>>,
    // Stage 2.
    y_c1: DFF<Bits<34>>,
    y_c2: DFF<Bits<34>>,
    y_c3: DFF<Bits<34>>,
    y_lo0: DFF<Bits<34>>,
    y_hi0: DFF<Bits<34>>,
    y_lo1: DFF<Bits<34>>,
    y_hi1: DFF<Bits<34>>,
    y_lo2: DFF<Bits<34>>,
    y_hi2: DFF<Bits<34>>,
    y_lo3: DFF<Bits<34>>,
    y_hi3: DFF<Bits<34>>,
    y_over: DFF<Bit>,
    // Stage 3.
    q_off0: DFF<Bits<34>>,
    q_off1: DFF<Bits<34>>,
    q_off2: DFF<Bits<34>>,
    q_off3: DFF<Bits<34>>,
    q_len0: DFF<Bits<16>>,
    q_len1: DFF<Bits<16>>,
    q_len2: DFF<Bits<16>>,
    q_len3: DFF<Bits<16>>,
    // Stage 4.
    p_a0: DFF<Bits<64>>,
    p_a1: DFF<Bits<64>>,
    p_a2: DFF<Bits<64>>,
    p_a3: DFF<Bits<64>>,

    d_lo1: Signal<Local, Bits<34>>,
    d_lo2: Signal<Local, Bits<34>>,
    d_lo3: Signal<Local, Bits<34>>,
    d_len0: Signal<Local, Bits<34>>,
    d_len1: Signal<Local, Bits<34>>,
    d_len2: Signal<Local, Bits<34>>,
    d_len3: Signal<Local, Bits<34>>,
}

impl Logic for SgePieces {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, x_off, x_end, x_c1, x_c2, x_c3, x_c4, y_c1, y_c2, y_c3, y_lo0, y_hi0,
            y_lo1, y_hi1, y_lo2, y_hi2, y_lo3, y_hi3, y_over, q_off0, q_off1, q_off2, q_off3,
            q_len0, q_len1, q_len2, q_len3, p_a0, p_a1, p_a2, p_a3
        );
        // ---- 1: the range's end and the entries' starts.
        self.x_off.d.next = self.s_off.val();
        self.x_end.d.next = self.s_off.val() + bit_cast::<34, 16>(self.s_len.val());
        self.x_c1.d.next = bit_cast::<34, 32>(self.s_len0.val());
        self.x_c2.d.next =
            bit_cast::<34, 32>(self.s_len0.val()) + bit_cast::<34, 32>(self.s_len1.val());
        self.x_c3.d.next = bit_cast::<34, 32>(self.s_len0.val())
            + bit_cast::<34, 32>(self.s_len1.val())
            + bit_cast::<34, 32>(self.s_len2.val());
        self.x_c4.d.next = self.s_total.val();

        // ---- 2: each piece's range [max(off, start), min(end, next start)).
        self.y_c1.d.next = self.x_c1.q.val();
        self.y_c2.d.next = self.x_c2.q.val();
        self.y_c3.d.next = self.x_c3.q.val();
        self.y_lo0.d.next = self.x_off.q.val();
        self.y_hi0.d.next = self.x_end.q.val();
        if self.x_c1.q.val() < self.x_end.q.val() {
            self.y_hi0.d.next = self.x_c1.q.val();
        }
        self.y_lo1.d.next = self.x_off.q.val();
        if self.x_c1.q.val() > self.x_off.q.val() {
            self.y_lo1.d.next = self.x_c1.q.val();
        }
        self.y_hi1.d.next = self.x_end.q.val();
        if self.x_c2.q.val() < self.x_end.q.val() {
            self.y_hi1.d.next = self.x_c2.q.val();
        }
        self.y_lo2.d.next = self.x_off.q.val();
        if self.x_c2.q.val() > self.x_off.q.val() {
            self.y_lo2.d.next = self.x_c2.q.val();
        }
        self.y_hi2.d.next = self.x_end.q.val();
        if self.x_c3.q.val() < self.x_end.q.val() {
            self.y_hi2.d.next = self.x_c3.q.val();
        }
        self.y_lo3.d.next = self.x_off.q.val();
        if self.x_c3.q.val() > self.x_off.q.val() {
            self.y_lo3.d.next = self.x_c3.q.val();
        }
        self.y_hi3.d.next = self.x_end.q.val();
        if self.x_c4.q.val() < self.x_end.q.val() {
            self.y_hi3.d.next = self.x_c4.q.val();
        }
        self.y_over.d.next = self.x_end.q.val() > self.x_c4.q.val();

        // ---- 3: each piece's start inside its entry, and its length.
        self.d_lo1.next = self.y_lo1.q.val() - self.y_c1.q.val();
        self.d_lo2.next = self.y_lo2.q.val() - self.y_c2.q.val();
        self.d_lo3.next = self.y_lo3.q.val() - self.y_c3.q.val();
        self.d_len0.next = self.y_hi0.q.val() - self.y_lo0.q.val();
        self.d_len1.next = self.y_hi1.q.val() - self.y_lo1.q.val();
        self.d_len2.next = self.y_hi2.q.val() - self.y_lo2.q.val();
        self.d_len3.next = self.y_hi3.q.val() - self.y_lo3.q.val();
        self.q_off0.d.next = self.y_lo0.q.val();
        self.q_off1.d.next = self.d_lo1.val();
        self.q_off2.d.next = self.d_lo2.val();
        self.q_off3.d.next = self.d_lo3.val();
        self.q_len0.d.next = 0.into();
        if self.y_hi0.q.val() > self.y_lo0.q.val() {
            self.q_len0.d.next = self.d_len0.val().get_bits::<16>(0);
        }
        self.q_len1.d.next = 0.into();
        if self.y_hi1.q.val() > self.y_lo1.q.val() {
            self.q_len1.d.next = self.d_len1.val().get_bits::<16>(0);
        }
        self.q_len2.d.next = 0.into();
        if self.y_hi2.q.val() > self.y_lo2.q.val() {
            self.q_len2.d.next = self.d_len2.val().get_bits::<16>(0);
        }
        self.q_len3.d.next = 0.into();
        if self.y_hi3.q.val() > self.y_lo3.q.val() {
            self.q_len3.d.next = self.d_len3.val().get_bits::<16>(0);
        }

        // ---- 4: the device addresses.
        self.p_a0.d.next = self.s_addr0.val() + bit_cast::<64, 34>(self.q_off0.q.val());
        self.p_a1.d.next = self.s_addr1.val() + bit_cast::<64, 34>(self.q_off1.q.val());
        self.p_a2.d.next = self.s_addr2.val() + bit_cast::<64, 34>(self.q_off2.q.val());
        self.p_a3.d.next = self.s_addr3.val() + bit_cast::<64, 34>(self.q_off3.q.val());

        self.m_off.next = self.x_off.q.val();
        self.m_end.next = self.x_end.q.val();
        self.m_over.next = self.y_over.q.val();
        self.m_addr0.next = self.p_a0.q.val();
        self.m_addr1.next = self.p_a1.q.val();
        self.m_addr2.next = self.p_a2.q.val();
        self.m_addr3.next = self.p_a3.q.val();
        self.m_len0.next = self.q_len0.q.val();
        self.m_len1.next = self.q_len1.q.val();
        self.m_len2.next = self.q_len2.q.val();
        self.m_len3.next = self.q_len3.q.val();
    }
}
