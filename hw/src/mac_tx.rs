//! The transmit half of the Ethernet MAC: frames in as an 8-bit stream, GMII bytes out with
//! preamble, SFD, padding, FCS and the inter-frame gap.
//!
//! On the wire a frame is 7 bytes 0x55, the SFD 0xD5, the data (zero-padded to 60 bytes), the
//! FCS (the complemented CRC-32 register, least significant byte first), then at least 12
//! idle bytes before the next preamble. The MAC starts a frame when the stream has a byte and
//! then takes one byte per clock; if the stream runs dry inside a frame (an underrun) the
//! MAC sends the byte with `gmii_tx_er` set and poisons the frame. A frame marked bad with
//! `s_tuser` on its last byte, or poisoned, leaves with its FCS inverted, so every receiver
//! drops it. Outputs are registered. `frame_sent` pulses once per frame.

use rust_hdl::prelude::*;

use crate::crc32::CrcXor;

const ST_IDLE: u64 = 0;
const ST_PRE: u64 = 1;
const ST_DATA: u64 = 2;
const ST_PAD: u64 = 3;
const ST_FCS: u64 = 4;
const ST_GAP: u64 = 5;

/// Minimum frame length without FCS.
pub const MIN_DATA: u64 = 60;
/// Idle bytes between frames.
pub const GAP: u64 = 12;

#[derive(LogicBlock)]
pub struct MacTx {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high.
    pub reset: Signal<In, Bit>,
    pub s_tdata: Signal<In, Bits<8>>,
    pub s_tvalid: Signal<In, Bit>,
    pub s_tlast: Signal<In, Bit>,
    /// On the last byte: send this frame with a bad FCS.
    pub s_tuser: Signal<In, Bit>,
    pub s_tready: Signal<Out, Bit>,
    pub gmii_txd: Signal<Out, Bits<8>>,
    pub gmii_tx_en: Signal<Out, Bit>,
    pub gmii_tx_er: Signal<Out, Bit>,
    pub frame_sent: Signal<Out, Bit>,
    /// Pulses when a frame underran.
    pub underrun: Signal<Out, Bit>,

    state: DFF<Bits<3>>,
    cnt: DFF<Bits<4>>,
    /// Data and padding bytes sent, saturating at 63.
    dcount: DFF<Bits<6>>,
    crc: DFF<Bits<32>>,
    poison: DFF<Bit>,
    o_txd: DFF<Bits<8>>,
    o_en: DFF<Bit>,
    o_er: DFF<Bit>,
    o_sent: DFF<Bit>,
    o_underrun: DFF<Bit>,
    d1: CrcXor,
    s1: CrcXor,
    tx_byte: Signal<Local, Bits<8>>,
    take: Signal<Local, Bit>,
    next_cnt: Signal<Local, Bits<4>>,
    enough: Signal<Local, Bit>,
    fcs: Signal<Local, Bits<32>>,
    k_idle: Constant<Bits<3>>,
    k_pre: Constant<Bits<3>>,
    k_data: Constant<Bits<3>>,
    k_pad: Constant<Bits<3>>,
    k_fcs: Constant<Bits<3>>,
    k_gap: Constant<Bits<3>>,
    k_preamble: Constant<Bits<8>>,
    k_sfd: Constant<Bits<8>>,
    k_zero8: Constant<Bits<8>>,
    k_ones32: Constant<Bits<32>>,
    k_zero4: Constant<Bits<4>>,
    k_one4: Constant<Bits<4>>,
    k_seven4: Constant<Bits<4>>,
    k_three4: Constant<Bits<4>>,
    k_gap_last4: Constant<Bits<4>>,
    k_b0: Constant<Bits<4>>,
    k_b1: Constant<Bits<4>>,
    k_b2: Constant<Bits<4>>,
    k_zero6: Constant<Bits<6>>,
    k_one6: Constant<Bits<6>>,
    k_min_last6: Constant<Bits<6>>,
}

impl Default for MacTx {
    fn default() -> Self {
        let c3 = |v: u64| Constant::new(bits::<3>(v));
        let c4 = |v: u64| Constant::new(bits::<4>(v));
        let c6 = |v: u64| Constant::new(bits::<6>(v));
        MacTx {
            clock: Default::default(),
            reset: Default::default(),
            s_tdata: Default::default(),
            s_tvalid: Default::default(),
            s_tlast: Default::default(),
            s_tuser: Default::default(),
            s_tready: Default::default(),
            gmii_txd: Default::default(),
            gmii_tx_en: Default::default(),
            gmii_tx_er: Default::default(),
            frame_sent: Default::default(),
            underrun: Default::default(),
            state: Default::default(),
            cnt: Default::default(),
            dcount: Default::default(),
            crc: Default::default(),
            poison: Default::default(),
            o_txd: Default::default(),
            o_en: Default::default(),
            o_er: Default::default(),
            o_sent: Default::default(),
            o_underrun: Default::default(),
            d1: CrcXor::data(1),
            s1: CrcXor::state(1),
            tx_byte: Default::default(),
            take: Default::default(),
            next_cnt: Default::default(),
            enough: Default::default(),
            fcs: Default::default(),
            k_idle: c3(ST_IDLE),
            k_pre: c3(ST_PRE),
            k_data: c3(ST_DATA),
            k_pad: c3(ST_PAD),
            k_fcs: c3(ST_FCS),
            k_gap: c3(ST_GAP),
            k_preamble: Constant::new(bits::<8>(0x55)),
            k_sfd: Constant::new(bits::<8>(0xD5)),
            k_zero8: Constant::new(bits::<8>(0)),
            k_ones32: Constant::new(bits::<32>(0xFFFF_FFFF)),
            k_zero4: c4(0),
            k_one4: c4(1),
            k_seven4: c4(7),
            k_three4: c4(3),
            // GAP - 1 cycles here and at least one in IDLE.
            k_gap_last4: c4(GAP - 2),
            k_b0: c4(0),
            k_b1: c4(1),
            k_b2: c4(2),
            k_zero6: c6(0),
            k_one6: c6(1),
            // The byte that brings the frame to MIN_DATA bytes is sent with dcount at this.
            k_min_last6: c6(MIN_DATA - 1),
        }
    }
}

impl Logic for MacTx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, cnt, dcount, crc, poison, o_txd, o_en, o_er, o_sent, o_underrun
        );
        self.take.next = (self.state.q.val() == self.k_data.val()) & self.s_tvalid.val();
        self.s_tready.next = self.take.val();
        self.next_cnt.next = self.cnt.q.val() + self.k_one4.val();
        // The byte sent now makes the frame long enough (no padding needed after it).
        self.enough.next = self.dcount.q.val() >= self.k_min_last6.val();
        // The byte that enters the CRC this cycle (data or padding).
        self.tx_byte.next = self.k_zero8.val();
        if self.take.val() {
            self.tx_byte.next = self.s_tdata.val();
        }
        self.d1.x.next = bit_cast::<64, 8>(self.tx_byte.val());
        self.s1.x.next = bit_cast::<64, 32>(self.crc.q.val());
        self.fcs.next = !self.crc.q.val();
        if self.poison.q.val() {
            self.fcs.next = self.crc.q.val();
        }

        self.o_txd.d.next = self.k_zero8.val();
        self.o_en.d.next = false;
        self.o_er.d.next = false;
        self.o_sent.d.next = false;
        self.o_underrun.d.next = false;

        if (self.state.q.val() == self.k_idle.val()) & self.s_tvalid.val() {
            self.state.d.next = self.k_pre.val();
            self.cnt.d.next = self.k_zero4.val();
            self.poison.d.next = false;
        }
        if self.state.q.val() == self.k_pre.val() {
            self.o_en.d.next = true;
            self.o_txd.d.next = self.k_preamble.val();
            self.cnt.d.next = self.next_cnt.val();
            if self.cnt.q.val() == self.k_seven4.val() {
                self.o_txd.d.next = self.k_sfd.val();
                self.state.d.next = self.k_data.val();
                self.cnt.d.next = self.k_zero4.val();
                self.crc.d.next = self.k_ones32.val();
                self.dcount.d.next = self.k_zero6.val();
            }
        }
        if self.state.q.val() == self.k_data.val() {
            self.o_en.d.next = true;
            self.o_txd.d.next = self.tx_byte.val();
            self.crc.d.next = self.s1.y.val() ^ self.d1.y.val();
            if !self.enough.val() {
                self.dcount.d.next = self.dcount.q.val() + self.k_one6.val();
            }
            if self.take.val() {
                if self.s_tlast.val() {
                    self.poison.d.next = self.poison.q.val() | self.s_tuser.val();
                    self.cnt.d.next = self.k_zero4.val();
                    if self.enough.val() {
                        self.state.d.next = self.k_fcs.val();
                    } else {
                        self.state.d.next = self.k_pad.val();
                    }
                }
            } else {
                // Underrun: the byte goes out as an error and the frame is poisoned.
                self.o_er.d.next = true;
                self.poison.d.next = true;
                self.o_underrun.d.next = true;
            }
        }
        if self.state.q.val() == self.k_pad.val() {
            self.o_en.d.next = true;
            self.crc.d.next = self.s1.y.val() ^ self.d1.y.val();
            self.dcount.d.next = self.dcount.q.val() + self.k_one6.val();
            if self.enough.val() {
                self.state.d.next = self.k_fcs.val();
            }
        }
        if self.state.q.val() == self.k_fcs.val() {
            self.o_en.d.next = true;
            self.o_txd.d.next = self.fcs.val().get_bits::<8>(24);
            if self.cnt.q.val() == self.k_b0.val() {
                self.o_txd.d.next = self.fcs.val().get_bits::<8>(0);
            }
            if self.cnt.q.val() == self.k_b1.val() {
                self.o_txd.d.next = self.fcs.val().get_bits::<8>(8);
            }
            if self.cnt.q.val() == self.k_b2.val() {
                self.o_txd.d.next = self.fcs.val().get_bits::<8>(16);
            }
            self.cnt.d.next = self.next_cnt.val();
            if self.cnt.q.val() == self.k_three4.val() {
                self.state.d.next = self.k_gap.val();
                self.cnt.d.next = self.k_zero4.val();
                self.o_sent.d.next = true;
            }
        }
        if self.state.q.val() == self.k_gap.val() {
            self.cnt.d.next = self.next_cnt.val();
            if self.cnt.q.val() == self.k_gap_last4.val() {
                self.state.d.next = self.k_idle.val();
            }
        }

        if self.reset.val() {
            self.state.d.next = self.k_idle.val();
            self.o_en.d.next = false;
            self.o_er.d.next = false;
            self.o_sent.d.next = false;
            self.o_underrun.d.next = false;
        }

        self.gmii_txd.next = self.o_txd.q.val();
        self.gmii_tx_en.next = self.o_en.q.val();
        self.gmii_tx_er.next = self.o_er.q.val();
        self.frame_sent.next = self.o_sent.q.val();
        self.underrun.next = self.o_underrun.q.val();
    }
}
