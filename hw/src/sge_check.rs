//! One scatter/gather entry checked against the memory region table, as the transport model's
//! `MrTable::check`: the region looked up by the key's index, then the key's tag and the bits
//! above the index (a key past the table names no row), the QP's PD, LOCAL_WRITE when the
//! caller needs it (a receive request's entries, a READ's or an atomic's destination), and the
//! bounds (the entry's range inside the region, sums at 65 bits so that a range wrapping past
//! 2^64 is out of bounds); the entry's device address is the region's base plus its offset.
//!
//! The caller holds the entry (`s_*`) from `s_valid` until `m_valid`; `s_ready` is the
//! lookup's handshake. Then: the row captured, the sums and compares registered, and the
//! answer (`m_valid` for one clock, `m_pass`, `m_dev_addr`), three clocks after the lookup.
//! Shared by the receive request fetch ([`crate::recv_wqe`]) and the send request fetch
//! ([`crate::send_wqe`]).

use rust_hdl::prelude::*;

use crate::resp_check::MrFields;
use crate::row_table::MR_BITS;

#[derive(LogicBlock)]
pub struct SgeCheck<const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_valid: Signal<In, Bit>,
    pub s_ready: Signal<Out, Bit>,
    pub s_addr: Signal<In, Bits<64>>,
    pub s_len: Signal<In, Bits<32>>,
    pub s_key: Signal<In, Bits<32>>,
    pub s_pd: Signal<In, Bits<16>>,
    /// LOCAL_WRITE is needed (else a local read, which every region allows).
    pub s_write: Signal<In, Bit>,
    /// Memory region lookups by the key's index ([`crate::row_table`]).
    pub mr_look_valid: Signal<Out, Bit>,
    pub mr_look_ready: Signal<In, Bit>,
    pub mr_look_row: Signal<Out, Bits<A>>,
    pub mr_got_data: Signal<In, Bits<MR_BITS>>,
    pub m_valid: Signal<Out, Bit>,
    pub m_pass: Signal<Out, Bit>,
    pub m_dev_addr: Signal<Out, Bits<64>>,

    mr: MrFields,
    // 0 IDLE (looking up), 1 GOT, 2 SUMS, 3 ANSWER.
    st: DFF<Bits<2>>,
    row: DFF<Bits<MR_BITS>>,
    x_end: DFF<Bits<65>>,
    x_mend: DFF<Bits<65>>,
    x_off: DFF<Bits<64>>,
    x_below: DFF<Bit>,
    x_key_ok: DFF<Bit>,
    k_key_hi: Constant<Bits<32>>,
}

impl<const A: usize> Default for SgeCheck<A> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_valid: Default::default(),
            s_ready: Default::default(),
            s_addr: Default::default(),
            s_len: Default::default(),
            s_key: Default::default(),
            s_pd: Default::default(),
            s_write: Default::default(),
            mr_look_valid: Default::default(),
            mr_look_ready: Default::default(),
            mr_look_row: Default::default(),
            mr_got_data: Default::default(),
            m_valid: Default::default(),
            m_pass: Default::default(),
            m_dev_addr: Default::default(),
            mr: Default::default(),
            st: Default::default(),
            row: Default::default(),
            x_end: Default::default(),
            x_mend: Default::default(),
            x_off: Default::default(),
            x_below: Default::default(),
            x_key_ok: Default::default(),
            k_key_hi: Constant::new(bits::<32>((0xFFFF_FFFFu64 >> (A + 8)) << (A + 8))),
        }
    }
}

impl<const A: usize> Logic for SgeCheck<A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st, row, x_end, x_mend, x_off, x_below, x_key_ok
        );
        self.mr.word.next = self.row.q.val();
        self.mr_look_row.next = self.s_key.val().get_bits::<A>(8);
        self.mr_look_valid.next = false;
        self.s_ready.next = false;
        self.m_valid.next = false;
        self.m_pass.next = self.x_key_ok.q.val()
            & !self.x_below.q.val()
            & (self.x_end.q.val() <= self.x_mend.q.val());
        self.m_dev_addr.next = self.mr.base.val() + self.x_off.q.val();
        if self.st.q.val() == 0 {
            self.mr_look_valid.next = self.s_valid.val();
            self.s_ready.next = self.mr_look_ready.val();
            if self.s_valid.val() & self.mr_look_ready.val() {
                self.st.d.next = 1.into();
            }
        }
        if self.st.q.val() == 1 {
            self.row.d.next = self.mr_got_data.val();
            self.st.d.next = 2.into();
        }
        if self.st.q.val() == 2 {
            self.x_end.d.next =
                bit_cast::<65, 64>(self.s_addr.val()) + bit_cast::<65, 32>(self.s_len.val());
            self.x_mend.d.next =
                bit_cast::<65, 64>(self.mr.va.val()) + bit_cast::<65, 64>(self.mr.length.val());
            self.x_off.d.next = self.s_addr.val() - self.mr.va.val();
            self.x_below.d.next = self.s_addr.val() < self.mr.va.val();
            self.x_key_ok.d.next = self.mr.valid.val().any()
                & (self.mr.tag.val() == self.s_key.val().get_bits::<8>(0))
                & !(self.s_key.val() & self.k_key_hi.val()).any()
                & (self.mr.pd.val() == self.s_pd.val())
                & (!self.s_write.val() | self.mr.access.val().get_bit(0));
            self.st.d.next = 3.into();
        }
        if self.st.q.val() == 3 {
            self.m_valid.next = true;
            self.st.d.next = 0.into();
        }
        if self.reset.val() {
            self.st.d.next = 0.into();
        }
    }
}
