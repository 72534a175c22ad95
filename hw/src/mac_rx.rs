//! The receive half of the Ethernet MAC: GMII bytes in, frames out as an 8-bit stream without
//! preamble, SFD and FCS.
//!
//! A frame is the bytes while `gmii_rx_dv` is high. The MAC skips any number of preamble bytes
//! (0x55) up to the SFD (0xD5); a frame with anything else before the SFD is discarded. After
//! the SFD every byte goes through the CRC-32 register (reflected, initialised to ones); a
//! frame whose FCS is right leaves the register at the residue [`FCS_RESIDUE`]. Bytes leave
//! five behind the wire so that the four FCS bytes are never sent on, and the last data byte
//! leaves, marked `m_tlast`, in the cycle after `gmii_rx_dv` falls, with `m_tuser` set when the
//! frame is bad: FCS wrong, `gmii_rx_er` seen, or shorter than 64 bytes with its FCS. A frame
//! too short to have a data byte produces no output. Every frame ends with one pulse on
//! `frame_good` or `frame_bad` (discarded frames count as bad). The stream cannot stall.

use rust_hdl::prelude::*;

use crate::crc32::CrcXor;

/// The CRC-32 register after a frame and its own (correct) FCS.
pub const FCS_RESIDUE: u32 = 0xDEBB_20E3;

const ST_IDLE: u64 = 0;
const ST_DATA: u64 = 1;
const ST_DISCARD: u64 = 2;

#[derive(LogicBlock)]
pub struct MacRx {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high.
    pub reset: Signal<In, Bit>,
    pub gmii_rxd: Signal<In, Bits<8>>,
    pub gmii_rx_dv: Signal<In, Bit>,
    pub gmii_rx_er: Signal<In, Bit>,
    pub m_tdata: Signal<Out, Bits<8>>,
    pub m_tvalid: Signal<Out, Bit>,
    pub m_tlast: Signal<Out, Bit>,
    /// On the last byte: the frame is bad.
    pub m_tuser: Signal<Out, Bit>,
    pub frame_good: Signal<Out, Bit>,
    pub frame_bad: Signal<Out, Bit>,

    state: DFF<Bits<2>>,
    sr0: DFF<Bits<8>>,
    sr1: DFF<Bits<8>>,
    sr2: DFF<Bits<8>>,
    sr3: DFF<Bits<8>>,
    sr4: DFF<Bits<8>>,
    held: DFF<Bits<3>>,
    len: DFF<Bits<16>>,
    crc: DFF<Bits<32>>,
    err: DFF<Bit>,
    o_data: DFF<Bits<8>>,
    o_valid: DFF<Bit>,
    o_last: DFF<Bit>,
    o_user: DFF<Bit>,
    o_good: DFF<Bit>,
    o_bad: DFF<Bit>,
    d1: CrcXor,
    s1: CrcXor,
    good: Signal<Local, Bit>,
    k_idle: Constant<Bits<2>>,
    k_data: Constant<Bits<2>>,
    k_discard: Constant<Bits<2>>,
    k_pre: Constant<Bits<8>>,
    k_sfd: Constant<Bits<8>>,
    k_ones32: Constant<Bits<32>>,
    k_residue: Constant<Bits<32>>,
    k_zero3: Constant<Bits<3>>,
    k_one3: Constant<Bits<3>>,
    k_five3: Constant<Bits<3>>,
    k_zero16: Constant<Bits<16>>,
    k_one16: Constant<Bits<16>>,
    k_min_len: Constant<Bits<16>>,
}

impl Default for MacRx {
    fn default() -> Self {
        MacRx {
            clock: Default::default(),
            reset: Default::default(),
            gmii_rxd: Default::default(),
            gmii_rx_dv: Default::default(),
            gmii_rx_er: Default::default(),
            m_tdata: Default::default(),
            m_tvalid: Default::default(),
            m_tlast: Default::default(),
            m_tuser: Default::default(),
            frame_good: Default::default(),
            frame_bad: Default::default(),
            state: Default::default(),
            sr0: Default::default(),
            sr1: Default::default(),
            sr2: Default::default(),
            sr3: Default::default(),
            sr4: Default::default(),
            held: Default::default(),
            len: Default::default(),
            crc: Default::default(),
            err: Default::default(),
            o_data: Default::default(),
            o_valid: Default::default(),
            o_last: Default::default(),
            o_user: Default::default(),
            o_good: Default::default(),
            o_bad: Default::default(),
            d1: CrcXor::data(1),
            s1: CrcXor::state(1),
            good: Default::default(),
            k_idle: Constant::new(bits::<2>(ST_IDLE)),
            k_data: Constant::new(bits::<2>(ST_DATA)),
            k_discard: Constant::new(bits::<2>(ST_DISCARD)),
            k_pre: Constant::new(bits::<8>(0x55)),
            k_sfd: Constant::new(bits::<8>(0xD5)),
            k_ones32: Constant::new(bits::<32>(0xFFFF_FFFF)),
            k_residue: Constant::new(bits::<32>(u64::from(FCS_RESIDUE))),
            k_zero3: Constant::new(bits::<3>(0)),
            k_one3: Constant::new(bits::<3>(1)),
            k_five3: Constant::new(bits::<3>(5)),
            k_zero16: Constant::new(bits::<16>(0)),
            k_one16: Constant::new(bits::<16>(1)),
            k_min_len: Constant::new(bits::<16>(64)),
        }
    }
}

impl Logic for MacRx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, sr0, sr1, sr2, sr3, sr4, held, len, crc, err, o_data, o_valid,
            o_last, o_user, o_good, o_bad
        );
        self.d1.x.next = bit_cast::<64, 8>(self.gmii_rxd.val());
        self.s1.x.next = bit_cast::<64, 32>(self.crc.q.val());
        self.good.next = (self.crc.q.val() == self.k_residue.val())
            & !self.err.q.val()
            & (self.len.q.val() >= self.k_min_len.val());

        self.o_valid.d.next = false;
        self.o_last.d.next = false;
        self.o_user.d.next = false;
        self.o_good.d.next = false;
        self.o_bad.d.next = false;
        self.o_data.d.next = self.sr4.q.val();

        if self.state.q.val() == self.k_idle.val() {
            if self.gmii_rx_dv.val() & (self.gmii_rxd.val() == self.k_sfd.val()) {
                self.state.d.next = self.k_data.val();
                self.crc.d.next = self.k_ones32.val();
                self.held.d.next = self.k_zero3.val();
                self.len.d.next = self.k_zero16.val();
                self.err.d.next = self.gmii_rx_er.val();
            }
            if self.gmii_rx_dv.val()
                & (self.gmii_rxd.val() != self.k_sfd.val())
                & (self.gmii_rxd.val() != self.k_pre.val())
            {
                self.state.d.next = self.k_discard.val();
            }
        }
        if (self.state.q.val() == self.k_discard.val()) & !self.gmii_rx_dv.val() {
            self.state.d.next = self.k_idle.val();
            self.o_bad.d.next = true;
        }
        if self.state.q.val() == self.k_data.val() {
            if self.gmii_rx_dv.val() {
                self.sr0.d.next = self.gmii_rxd.val();
                self.sr1.d.next = self.sr0.q.val();
                self.sr2.d.next = self.sr1.q.val();
                self.sr3.d.next = self.sr2.q.val();
                self.sr4.d.next = self.sr3.q.val();
                self.crc.d.next = self.s1.y.val() ^ self.d1.y.val();
                if !self.len.q.val().all() {
                    self.len.d.next = self.len.q.val() + self.k_one16.val();
                }
                self.err.d.next = self.err.q.val() | self.gmii_rx_er.val();
                if self.held.q.val() == self.k_five3.val() {
                    self.o_valid.d.next = true;
                } else {
                    self.held.d.next = self.held.q.val() + self.k_one3.val();
                }
            } else {
                self.state.d.next = self.k_idle.val();
                self.o_good.d.next = self.good.val();
                self.o_bad.d.next = !self.good.val();
                if self.held.q.val() == self.k_five3.val() {
                    self.o_valid.d.next = true;
                    self.o_last.d.next = true;
                    self.o_user.d.next = !self.good.val();
                }
            }
        }

        if self.reset.val() {
            self.state.d.next = self.k_idle.val();
            self.o_valid.d.next = false;
            self.o_last.d.next = false;
            self.o_good.d.next = false;
            self.o_bad.d.next = false;
        }

        self.m_tdata.next = self.o_data.q.val();
        self.m_tvalid.next = self.o_valid.q.val();
        self.m_tlast.next = self.o_last.q.val();
        self.m_tuser.next = self.o_user.q.val();
        self.frame_good.next = self.o_good.q.val();
        self.frame_bad.next = self.o_bad.q.val();
    }
}
