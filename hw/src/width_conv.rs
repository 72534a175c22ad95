//! Stream width converters between the MAC's 8-bit side and the core's 64-bit AXI-Stream.
//! Byte 0 of a beat is `tdata[7:0]`; `tkeep` has one bit per byte, contiguous from bit 0.

use rust_hdl::prelude::*;

/// 8 bits to 64: collects bytes into beats. The input cannot stall (it comes from the MAC) and
/// neither can the output: a beat leaves, for one cycle, when 8 bytes are in or the frame ends.
#[derive(LogicBlock)]
pub struct Upsize8to64 {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_tdata: Signal<In, Bits<8>>,
    pub s_tvalid: Signal<In, Bit>,
    pub s_tlast: Signal<In, Bit>,
    pub s_tuser: Signal<In, Bit>,
    pub m_tdata: Signal<Out, Bits<64>>,
    pub m_tkeep: Signal<Out, Bits<8>>,
    pub m_tlast: Signal<Out, Bit>,
    pub m_tuser: Signal<Out, Bit>,
    pub m_tvalid: Signal<Out, Bit>,
    acc: DFF<Bits<64>>,
    keep: DFF<Bits<8>>,
    idx: DFF<Bits<3>>,
    o_data: DFF<Bits<64>>,
    o_keep: DFF<Bits<8>>,
    o_last: DFF<Bit>,
    o_user: DFF<Bit>,
    o_valid: DFF<Bit>,
    shamt: Signal<Local, Bits<6>>,
    acc_next: Signal<Local, Bits<64>>,
    keep_next: Signal<Local, Bits<8>>,
    k_one3: Constant<Bits<3>>,
    k_seven3: Constant<Bits<3>>,
    k_zero3: Constant<Bits<3>>,
    k_one8: Constant<Bits<8>>,
    k_zero8: Constant<Bits<8>>,
    k_zero64: Constant<Bits<64>>,
}

impl Default for Upsize8to64 {
    fn default() -> Self {
        Upsize8to64 {
            clock: Default::default(),
            reset: Default::default(),
            s_tdata: Default::default(),
            s_tvalid: Default::default(),
            s_tlast: Default::default(),
            s_tuser: Default::default(),
            m_tdata: Default::default(),
            m_tkeep: Default::default(),
            m_tlast: Default::default(),
            m_tuser: Default::default(),
            m_tvalid: Default::default(),
            acc: Default::default(),
            keep: Default::default(),
            idx: Default::default(),
            o_data: Default::default(),
            o_keep: Default::default(),
            o_last: Default::default(),
            o_user: Default::default(),
            o_valid: Default::default(),
            shamt: Default::default(),
            acc_next: Default::default(),
            keep_next: Default::default(),
            k_one3: Constant::new(bits::<3>(1)),
            k_seven3: Constant::new(bits::<3>(7)),
            k_zero3: Constant::new(bits::<3>(0)),
            k_one8: Constant::new(bits::<8>(1)),
            k_zero8: Constant::new(bits::<8>(0)),
            k_zero64: Constant::new(bits::<64>(0)),
        }
    }
}

impl Logic for Upsize8to64 {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, acc, keep, idx, o_data, o_keep, o_last, o_user, o_valid
        );
        self.shamt.next = bit_cast::<6, 3>(self.idx.q.val()) << 3;
        self.acc_next.next =
            self.acc.q.val() | (bit_cast::<64, 8>(self.s_tdata.val()) << self.shamt.val());
        self.keep_next.next = self.keep.q.val() | (self.k_one8.val() << self.idx.q.val());
        self.o_valid.d.next = false;
        if self.s_tvalid.val() {
            self.acc.d.next = self.acc_next.val();
            self.keep.d.next = self.keep_next.val();
            self.idx.d.next = self.idx.q.val() + self.k_one3.val();
            if self.s_tlast.val() | (self.idx.q.val() == self.k_seven3.val()) {
                self.o_valid.d.next = true;
                self.o_data.d.next = self.acc_next.val();
                self.o_keep.d.next = self.keep_next.val();
                self.o_last.d.next = self.s_tlast.val();
                self.o_user.d.next = self.s_tlast.val() & self.s_tuser.val();
                self.acc.d.next = self.k_zero64.val();
                self.keep.d.next = self.k_zero8.val();
                self.idx.d.next = self.k_zero3.val();
            }
        }
        if self.reset.val() {
            self.acc.d.next = self.k_zero64.val();
            self.keep.d.next = self.k_zero8.val();
            self.idx.d.next = self.k_zero3.val();
            self.o_valid.d.next = false;
        }
        self.m_tdata.next = self.o_data.q.val();
        self.m_tkeep.next = self.o_keep.q.val();
        self.m_tlast.next = self.o_last.q.val();
        self.m_tuser.next = self.o_user.q.val();
        self.m_tvalid.next = self.o_valid.q.val();
    }
}

/// 64 bits to 8: one byte per handshake on the output, with back-pressure on both sides. A new
/// beat is taken in the cycle the last byte of the previous one leaves, so a frame flows
/// without gaps when the output is always ready.
#[derive(LogicBlock)]
pub struct Downsize64to8 {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_tdata: Signal<In, Bits<64>>,
    pub s_tkeep: Signal<In, Bits<8>>,
    pub s_tlast: Signal<In, Bit>,
    pub s_tuser: Signal<In, Bit>,
    pub s_tvalid: Signal<In, Bit>,
    pub s_tready: Signal<Out, Bit>,
    pub m_tdata: Signal<Out, Bits<8>>,
    pub m_tlast: Signal<Out, Bit>,
    pub m_tuser: Signal<Out, Bit>,
    pub m_tvalid: Signal<Out, Bit>,
    pub m_tready: Signal<In, Bit>,
    data: DFF<Bits<64>>,
    rem: DFF<Bits<8>>,
    last: DFF<Bit>,
    user: DFF<Bit>,
    valid: DFF<Bit>,
    take: Signal<Local, Bit>,
    final_byte: Signal<Local, Bit>,
    load: Signal<Local, Bit>,
    k_upper7: Constant<Bits<8>>,
}

impl Default for Downsize64to8 {
    fn default() -> Self {
        Downsize64to8 {
            clock: Default::default(),
            reset: Default::default(),
            s_tdata: Default::default(),
            s_tkeep: Default::default(),
            s_tlast: Default::default(),
            s_tuser: Default::default(),
            s_tvalid: Default::default(),
            s_tready: Default::default(),
            m_tdata: Default::default(),
            m_tlast: Default::default(),
            m_tuser: Default::default(),
            m_tvalid: Default::default(),
            m_tready: Default::default(),
            data: Default::default(),
            rem: Default::default(),
            last: Default::default(),
            user: Default::default(),
            valid: Default::default(),
            take: Default::default(),
            final_byte: Default::default(),
            load: Default::default(),
            k_upper7: Constant::new(bits::<8>(0xFE)),
        }
    }
}

impl Logic for Downsize64to8 {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, data, rem, last, user, valid);
        self.take.next = self.valid.q.val() & self.m_tready.val();
        // The byte on the output is the beat's last one when no kept byte follows it.
        self.final_byte.next = !(self.rem.q.val() & self.k_upper7.val()).any();
        self.s_tready.next =
            (!self.valid.q.val() | (self.take.val() & self.final_byte.val())) & !self.reset.val();
        self.load.next = self.s_tvalid.val() & self.s_tready.val();
        if self.take.val() {
            self.data.d.next = self.data.q.val() >> 8;
            self.rem.d.next = self.rem.q.val() >> 1;
            if self.final_byte.val() {
                self.valid.d.next = false;
            }
        }
        if self.load.val() {
            self.data.d.next = self.s_tdata.val();
            self.rem.d.next = self.s_tkeep.val();
            self.last.d.next = self.s_tlast.val();
            self.user.d.next = self.s_tuser.val();
            self.valid.d.next = true;
        }
        if self.reset.val() {
            self.valid.d.next = false;
        }
        self.m_tdata.next = self.data.q.val().get_bits::<8>(0);
        self.m_tvalid.next = self.valid.q.val();
        self.m_tlast.next = self.valid.q.val() & self.last.q.val() & self.final_byte.val();
        self.m_tuser.next = self.valid.q.val() & self.user.q.val() & self.final_byte.val();
    }
}
