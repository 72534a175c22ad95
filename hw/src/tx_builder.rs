//! The RoCEv2 transmit builder: a header channel and a payload stream in; complete frames out on
//! a 64-bit AXI-Stream to the MAC (Ethernet, optional 802.1Q tag, IPv4 with its header checksum
//! or IPv6, UDP, BTH, extension headers, payload, zero pad bytes, ICRC).
//!
//! # Interface
//! A producer (the transport engine; in tests the receive parser) presents one header word
//! ([`crate::header_channel`]) on `s_hdr_*`, then exactly `payload_len` bytes on `s_axis_*`
//! (none for a packet without payload), lane 0 first, `tkeep` low-aligned, `tlast` on the last
//! beat. DSCP, ECN, TTL and every BTH and extension-header field come from the header word
//! as they are (the producer sets ECN, normally ECT(0)); lengths, the IPv4 checksum, PadCnt and
//! the ICRC are derived ([`crate::header_compose`]). No Ethernet padding is added: the MAC pads
//! a short frame to 60 bytes.
//!
//! A payload stream that disagrees with `payload_len` (`tlast` early or late, or a last beat
//! with the wrong `tkeep`) is a producer bug: the frame still leaves at its declared length (zeros
//! where payload is missing), marked bad with `m_axis_tuser` on its last beat so the MAC sends it
//! with a bad FCS, beats after the declared length are discarded up to `tlast`, and
//! `cnt_len_err` counts the frame (the next frame's header beats may leave while they are
//! discarded; its payload is taken after them). The stream stays in step for the next frame.
//!
//! A payload beat with `s_axis_tuser` set carries data the producer could not get (a DMA read
//! the host refused): the frame leaves at its length as usual, marked bad on its last beat, so
//! no receiver takes it as good. The producer counts why; `cnt_len_err` does not.
//!
//! # Pipeline
//! Header composition derives the lengths and the IPv4 checksum of the header word waiting at
//! the input over [`crate::header_compose::LATENCY`] clocks (while the previous frame leaves),
//! and its bytes are registered when the frame starts; the beat generator then emits header
//! beats from a shift register, the payload realigned by the header length modulo 8 (a 128-bit
//! window over the previous and current payload beats), and the pad; an output register; the
//! ICRC engine in TX mode (3 cycles), which appends the ICRC; a register slice
//! ([`crate::axis_register`], 1 cycle) on the output, so `m_axis_tready` reaches no logic but
//! the slice's. A header word is taken from the
//! channel into a holding register as soon as that is free (`s_hdr_ready` is a register, not a
//! function of the output's ready), its derivation runs while the frame before it leaves, and
//! it starts its frame on the cycle the last beat of that frame is emitted, so frames leave
//! back to back; the payload input waits while header beats are emitted and for one cycle when
//! the ICRC needs a beat of its own.

use rust_hdl::prelude::*;

use crate::axis_register::AxisRegister;
use crate::header_channel::HDR_BITS;
use crate::header_compose::HeaderCompose;
use crate::header_extract::CAP_BITS;
use crate::icrc_engine::{IcrcEngine, Mode};

/// Counter ports, in order.
pub const TX_COUNTERS: [&str; 2] = ["cnt_frames", "cnt_len_err"];

#[derive(LogicBlock)]
pub struct TxBuilder {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high.
    pub reset: Signal<In, Bit>,
    /// The header channel: one word per frame.
    pub s_hdr_data: Signal<In, Bits<HDR_BITS>>,
    pub s_hdr_valid: Signal<In, Bit>,
    pub s_hdr_ready: Signal<Out, Bit>,
    /// The payload stream: `payload_len` bytes per frame; `tuser` on any beat marks the
    /// frame bad.
    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tuser: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    /// Frames to the MAC; `tuser` on the last beat marks a frame to send with a bad FCS.
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    /// Frames emitted, and frames whose payload stream disagreed with `payload_len`.
    pub cnt_frames: Signal<Out, Bits<32>>,
    pub cnt_len_err: Signal<Out, Bits<32>>,
    comp: HeaderCompose,
    icrc: IcrcEngine,
    /// A register slice on the output, the stream that leaves the layer.
    out_reg: AxisRegister,
    /// The header word waiting for its frame (taken from the channel as soon as this is free).
    hs: DFF<Bits<HDR_BITS>>,
    hs_valid: DFF<Bit>,
    busy: DFF<Bit>,
    drain: DFF<Bit>,
    /// The header bytes of beat `ob` (`hlow`) and of the beats after it (`hb`, shifted down a
    /// beat at a time). `hb` matters only while header beats leave; otherwise it follows the
    /// composer's word, so its enable is registered state and `adv` alone (no payload handshake).
    hlow: DFF<Bits<64>>,
    hb: DFF<Bits<CAP_BITS>>,
    hb_load: Signal<Local, Bit>,
    hb_shift: Signal<Local, Bit>,
    ob: DFF<Bits<16>>,
    ib: DFF<Bits<16>>,
    nh: DFF<Bits<16>>,
    np: DFF<Bits<16>>,
    /// The last payload input beat (`np - 1`; meaningless without payload).
    npm1: DFF<Bits<16>>,
    /// `ob >= nh`, `ob == lastb` and `ib < np`, kept as registers (set at the start, updated
    /// as `ob` and `ib` advance) so the emit and start logic compares nothing.
    in_pay_q: DFF<Bit>,
    is_last_q: DFF<Bit>,
    ib_more_q: DFF<Bit>,
    /// The last payload beat's keep and data mask, and the frame's last beat's keep.
    lkeep: DFF<Bits<8>>,
    ldmask: DFF<Bits<64>>,
    lokeep: DFF<Bits<8>>,
    lastb: DFF<Bits<16>>,
    flen: DFF<Bits<16>>,
    plen: DFF<Bits<16>>,
    sh: DFF<Bits<3>>,
    prev: DFF<Bits<64>>,
    in_done: DFF<Bit>,
    bad: DFF<Bit>,
    /// A payload beat of this frame came marked bad (`s_axis_tuser`).
    ubad: DFF<Bit>,
    late: DFF<Bit>,
    o_valid: DFF<Bit>,
    o_data: DFF<Bits<64>>,
    o_keep: DFF<Bits<8>>,
    o_last: DFF<Bit>,
    o_user: DFF<Bit>,
    c_frames: DFF<Bits<32>>,
    c_len_err: DFF<Bits<32>>,
    /// The reset input one clock late: everything inside resets from this register, so the
    /// reset's fanout starts at a flip-flop and no logic depends on the input combinationally
    /// (which also keeps that logic out of Verilator's per-evaluation input region).
    rst: DFF<Bit>,
    adv: Signal<Local, Bit>,
    in_pay: Signal<Local, Bit>,
    need_in: Signal<Local, Bit>,
    emit: Signal<Local, Bit>,
    go: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    is_last: Signal<Local, Bit>,
    ob1: Signal<Local, Bits<16>>,
    fin: Signal<Local, Bit>,
    ib1: Signal<Local, Bits<16>>,
    last_in: Signal<Local, Bit>,
    /// `ib == npm1`, kept as a register beside `ib`.
    last_in_q: DFF<Bit>,
    pmask: Signal<Local, Bits<8>>,
    dmask: Signal<Local, Bits<64>>,
    cur: Signal<Local, Bits<64>>,
    err_now: Signal<Local, Bit>,
    late_now: Signal<Local, Bit>,
    bad_now: Signal<Local, Bit>,
    ubad_now: Signal<Local, Bit>,
    cat: Signal<Local, Bits<128>>,
    shamt: Signal<Local, Bits<7>>,
    shifted: Signal<Local, Bits<128>>,
    data: Signal<Local, Bits<64>>,
    okeep: Signal<Local, Bits<8>>,
    free: Signal<Local, Bit>,
    start: Signal<Local, Bit>,
    hl16: Signal<Local, Bits<16>>,
    pl16: Signal<Local, Bits<16>>,
    np_sum: Signal<Local, Bits<16>>,
    pl_m1: Signal<Local, Bits<16>>,
    st_nh: Signal<Local, Bits<16>>,
    st_np: Signal<Local, Bits<16>>,
    st_lastb: Signal<Local, Bits<16>>,
    st_lkeep: Signal<Local, Bits<8>>,
    st_ldmask: Signal<Local, Bits<64>>,
    st_lokeep: Signal<Local, Bits<8>>,
    pl_lo: Signal<Local, Bits<3>>,
    fl_lo: Signal<Local, Bits<3>>,
    fl_m1: Signal<Local, Bits<16>>,
    k_one16: Constant<Bits<16>>,
    k_seven16: Constant<Bits<16>>,
    k_one32: Constant<Bits<32>>,
    k_zero32: Constant<Bits<32>>,
    k_ff8: Constant<Bits<8>>,
    k_ones64: Constant<Bits<64>>,
    k_zero64: Constant<Bits<64>>,
    k_sixty4: Constant<Bits<7>>,
    k_zero16: Constant<Bits<16>>,
    k_zero3: Constant<Bits<3>>,
}

impl TxBuilder {
    /// A builder with its header composer and ICRC engine.
    pub fn new() -> Self {
        TxBuilder {
            clock: Default::default(),
            reset: Default::default(),
            s_hdr_data: Default::default(),
            s_hdr_valid: Default::default(),
            s_hdr_ready: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tuser: Default::default(),
            s_axis_tready: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tuser: Default::default(),
            m_axis_tready: Default::default(),
            cnt_frames: Default::default(),
            cnt_len_err: Default::default(),
            comp: HeaderCompose::default(),
            icrc: IcrcEngine::new(Mode::Tx),
            out_reg: AxisRegister::new(),
            hs: Default::default(),
            hs_valid: Default::default(),
            busy: Default::default(),
            drain: Default::default(),
            hlow: Default::default(),
            hb: Default::default(),
            hb_load: Default::default(),
            hb_shift: Default::default(),
            ob: Default::default(),
            ib: Default::default(),
            nh: Default::default(),
            np: Default::default(),
            npm1: Default::default(),
            in_pay_q: Default::default(),
            is_last_q: Default::default(),
            ib_more_q: Default::default(),
            lkeep: Default::default(),
            ldmask: Default::default(),
            lokeep: Default::default(),
            lastb: Default::default(),
            flen: Default::default(),
            plen: Default::default(),
            sh: Default::default(),
            prev: Default::default(),
            in_done: Default::default(),
            bad: Default::default(),
            ubad: Default::default(),
            late: Default::default(),
            o_valid: Default::default(),
            o_data: Default::default(),
            o_keep: Default::default(),
            o_last: Default::default(),
            o_user: Default::default(),
            c_frames: Default::default(),
            c_len_err: Default::default(),
            rst: Default::default(),
            adv: Default::default(),
            in_pay: Default::default(),
            need_in: Default::default(),
            emit: Default::default(),
            go: Default::default(),
            take: Default::default(),
            is_last: Default::default(),
            ob1: Default::default(),
            fin: Default::default(),
            ib1: Default::default(),
            last_in: Default::default(),
            last_in_q: Default::default(),
            pmask: Default::default(),
            dmask: Default::default(),
            cur: Default::default(),
            err_now: Default::default(),
            late_now: Default::default(),
            bad_now: Default::default(),
            ubad_now: Default::default(),
            cat: Default::default(),
            shamt: Default::default(),
            shifted: Default::default(),
            data: Default::default(),
            okeep: Default::default(),
            free: Default::default(),
            start: Default::default(),
            hl16: Default::default(),
            pl16: Default::default(),
            np_sum: Default::default(),
            pl_m1: Default::default(),
            st_nh: Default::default(),
            st_np: Default::default(),
            st_lastb: Default::default(),
            st_lkeep: Default::default(),
            st_ldmask: Default::default(),
            st_lokeep: Default::default(),
            pl_lo: Default::default(),
            fl_lo: Default::default(),
            fl_m1: Default::default(),
            k_one16: Constant::new(bits::<16>(1)),
            k_seven16: Constant::new(bits::<16>(7)),
            k_one32: Constant::new(bits::<32>(1)),
            k_zero32: Constant::new(bits::<32>(0)),
            k_ff8: Constant::new(bits::<8>(0xFF)),
            k_ones64: Constant::new(bits::<64>(u64::MAX)),
            k_zero64: Constant::new(bits::<64>(0)),
            k_sixty4: Constant::new(bits::<7>(64)),
            k_zero16: Constant::new(bits::<16>(0)),
            k_zero3: Constant::new(bits::<3>(0)),
        }
    }
}

impl Default for TxBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for TxBuilder {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, hs, hs_valid, busy, drain, hlow, hb, last_in_q, ob, ib, nh, np, npm1,
            in_pay_q, is_last_q, ib_more_q, lkeep, ldmask, lokeep, lastb, flen, plen, sh, prev,
            in_done, bad, ubad, late, o_valid, o_data, o_keep, o_last, o_user, c_frames, c_len_err,
            rst
        );
        self.rst.d.next = self.reset.val();
        self.icrc.clock.next = self.clock.val();
        self.icrc.reset.next = self.rst.q.val();
        self.out_reg.clock.next = self.clock.val();
        self.out_reg.reset.next = self.rst.q.val();
        self.comp.clock.next = self.clock.val();
        self.comp.reset.next = self.rst.q.val();
        self.comp.rec.next = self.hs.q.val();
        self.comp.valid.next = self.hs_valid.q.val();

        // ---- Flow control: the output register moves when the ICRC engine takes a beat.
        // Not gated by `reset` (every register it moves is reset, and the handshakes below are
        // gated), so the reset net's fanout stays out of the emit logic.
        self.adv.next = !self.o_valid.q.val() | self.icrc.s_axis_tready.val();

        // ---- The beat `ob` of the current frame.
        self.in_pay.next = self.in_pay_q.q.val();
        self.need_in.next = self.in_pay.val() & !self.in_done.q.val() & self.ib_more_q.q.val();
        // A payload beat is taken only once the previous frame's overlong payload is drained.
        self.emit.next = self.busy.q.val()
            & (!self.need_in.val() | (self.s_axis_tvalid.val() & !self.drain.q.val()));
        self.go.next = self.adv.val() & self.emit.val();
        self.take.next = self.go.val() & self.need_in.val();
        self.is_last.next = self.is_last_q.q.val();
        self.ob1.next = self.ob.q.val() + self.k_one16.val();
        self.fin.next = self.go.val() & self.is_last.val();

        // Payload bytes left at input beat `ib`, and the lanes they fill.
        self.ib1.next = self.ib.q.val() + self.k_one16.val();
        self.last_in.next = self.last_in_q.q.val();
        // Only the last payload beat is partial: its masks are the frame's, set at its start.
        self.pmask.next = self.k_ff8.val();
        self.dmask.next = self.k_ones64.val();
        if self.last_in.val() {
            self.pmask.next = self.lkeep.q.val();
            self.dmask.next = self.ldmask.q.val();
        }
        self.cur.next = self.k_zero64.val();
        if self.take.val() {
            self.cur.next = self.s_axis_tdata.val() & self.dmask.val();
        }
        self.err_now.next = self.take.val()
            & ((self.s_axis_tlast.val() != self.last_in.val())
                | (self.s_axis_tkeep.val() != self.pmask.val()));
        self.late_now.next =
            self.late.q.val() | (self.take.val() & self.last_in.val() & !self.s_axis_tlast.val());
        self.bad_now.next = self.bad.q.val() | self.err_now.val();
        self.ubad_now.next = self.ubad.q.val() | (self.take.val() & self.s_axis_tuser.val());

        // The payload realigned behind the header: lanes below `sh` from the previous beat.
        self.cat.next =
            (bit_cast::<128, 64>(self.cur.val()) << 64) | bit_cast::<128, 64>(self.prev.q.val());
        self.shamt.next = self.k_sixty4.val() - (bit_cast::<7, 3>(self.sh.q.val()) << 3);
        self.shifted.next = self.cat.val() >> self.shamt.val();
        self.data.next = self.hlow.q.val() | self.shifted.val().get_bits::<64>(0);
        self.okeep.next = self.lokeep.q.val();

        // ---- Payload stream: taken for the frame, or discarded up to `tlast` after a late end.
        self.s_axis_tready.next =
            ((self.busy.q.val() & self.adv.val() & self.need_in.val() & !self.drain.q.val())
                | self.drain.q.val())
                & !self.rst.q.val();
        if self.drain.q.val() & self.s_axis_tvalid.val() & self.s_axis_tlast.val() {
            self.drain.d.next = false;
        }

        // ---- The header: taken when idle or on the cycle the last beat leaves.
        // Not held back by a drain: the next frame's header beats may leave meanwhile.
        self.free.next = !self.busy.q.val() | self.fin.val();
        self.s_hdr_ready.next = !self.hs_valid.q.val() & !self.rst.q.val();
        if self.s_hdr_valid.val() & !self.hs_valid.q.val() {
            self.hs.d.next = self.s_hdr_data.val();
            self.hs_valid.d.next = true;
        }
        self.start.next =
            self.free.val() & self.hs_valid.q.val() & self.comp.ready.val() & !self.rst.q.val();
        if self.start.val() {
            self.hs_valid.d.next = false;
        }
        self.comp.take.next = self.start.val();
        self.hl16.next = bit_cast::<16, 8>(self.comp.hdr_len.val());
        self.pl16.next = self.hs.q.val().get_bits::<16>(0);
        self.np_sum.next = self.pl16.val() + self.k_seven16.val();
        self.pl_m1.next = self.pl16.val() - self.k_one16.val();
        self.pl_lo.next = self.pl16.val().get_bits::<3>(0);
        self.fl_lo.next = self.comp.frame_len.val().get_bits::<3>(0);
        self.st_lkeep.next = self.k_ff8.val();
        self.st_ldmask.next = self.k_ones64.val();
        if self.pl_lo.val() != self.k_zero3.val() {
            self.st_lkeep.next = !(self.k_ff8.val() << self.pl_lo.val());
            self.st_ldmask.next =
                !(self.k_ones64.val() << (bit_cast::<6, 3>(self.pl_lo.val()) << 3));
        }
        self.st_lokeep.next = self.k_ff8.val();
        if self.fl_lo.val() != self.k_zero3.val() {
            self.st_lokeep.next = !(self.k_ff8.val() << self.fl_lo.val());
        }
        self.fl_m1.next = self.comp.frame_len.val() - self.k_one16.val();
        self.st_nh.next = self.hl16.val() >> 3;
        self.st_np.next = self.np_sum.val() >> 3;
        self.st_lastb.next = self.fl_m1.val() >> 3;

        if self.go.val() {
            self.ob.d.next = self.ob1.val();
            self.in_pay_q.d.next = self.ob1.val() >= self.nh.q.val();
            self.is_last_q.d.next = self.ob1.val() == self.lastb.q.val();
            // Past the header's last (partial) beat there are no header bytes.
            self.hlow.d.next = self.hb.q.val().get_bits::<64>(0);
            if self.in_pay_q.q.val() {
                self.hlow.d.next = self.k_zero64.val();
            }
            self.prev.d.next = self.cur.val();
            self.bad.d.next = self.bad_now.val();
            self.ubad.d.next = self.ubad_now.val();
            self.late.d.next = self.late_now.val();
        }
        if self.take.val() {
            self.ib.d.next = self.ib1.val();
            self.last_in_q.d.next = self.ib1.val() == self.npm1.q.val();
            self.ib_more_q.d.next = self.ib1.val() < self.np.q.val();
            if self.s_axis_tlast.val() {
                self.in_done.d.next = true;
            }
        }
        if self.fin.val() {
            self.busy.d.next = false;
            self.c_frames.d.next = self.c_frames.q.val() + self.k_one32.val();
            if self.bad_now.val() {
                self.c_len_err.d.next = self.c_len_err.q.val() + self.k_one32.val();
            }
            if self.late_now.val() {
                self.drain.d.next = true;
            }
        }
        if self.start.val() {
            self.busy.d.next = true;
            self.hlow.d.next = self.comp.hdr.val().get_bits::<64>(0);
            self.flen.d.next = self.comp.frame_len.val();
            self.plen.d.next = self.pl16.val();
            self.sh.d.next = self.comp.hdr_len.val().get_bits::<3>(0);
            self.nh.d.next = self.st_nh.val();
            self.np.d.next = self.st_np.val();
            self.npm1.d.next = self.pl_m1.val() >> 3;
            self.last_in_q.d.next = (self.pl_m1.val() >> 3) == self.k_zero16.val();
            self.lkeep.d.next = self.st_lkeep.val();
            self.ldmask.d.next = self.st_ldmask.val();
            self.lokeep.d.next = self.st_lokeep.val();
            self.lastb.d.next = self.st_lastb.val();
            self.ob.d.next = self.k_zero16.val();
            self.ib.d.next = self.k_zero16.val();
            self.in_pay_q.d.next = self.st_nh.val() == self.k_zero16.val();
            self.is_last_q.d.next = self.st_lastb.val() == self.k_zero16.val();
            self.ib_more_q.d.next = self.st_np.val() != self.k_zero16.val();
            self.prev.d.next = self.k_zero64.val();
            self.in_done.d.next = false;
            self.bad.d.next = false;
            self.ubad.d.next = false;
            self.late.d.next = false;
        }

        // `hb` outside the header beats (idle, or from the first payload beat on) loads the
        // composer's word, so it holds the next frame's when that starts; in the header beats
        // it shifts, and loads when the frame's last beat is a header beat and the next starts.
        self.hb_load.next = !self.busy.q.val() | self.in_pay_q.q.val();
        self.hb_shift.next = self.adv.val() & self.busy.q.val() & !self.in_pay_q.q.val();
        if self.hb_load.val() {
            self.hb.d.next = self.comp.hdr.val() >> 64;
        }
        if self.hb_shift.val() {
            self.hb.d.next = self.hb.q.val() >> 64;
            if self.is_last_q.q.val() & self.hs_valid.q.val() & self.comp.ready.val() {
                self.hb.d.next = self.comp.hdr.val() >> 64;
            }
        }

        // ---- Output register into the ICRC engine.
        if self.adv.val() {
            self.o_valid.d.next = self.emit.val();
            self.o_data.d.next = self.data.val();
            self.o_keep.d.next = self.k_ff8.val();
            if self.is_last.val() {
                self.o_keep.d.next = self.okeep.val();
            }
            self.o_last.d.next = self.is_last.val();
            self.o_user.d.next = self.is_last.val() & (self.bad_now.val() | self.ubad_now.val());
        }
        self.icrc.s_axis_tdata.next = self.o_data.q.val();
        self.icrc.s_axis_tkeep.next = self.o_keep.q.val();
        self.icrc.s_axis_tlast.next = self.o_last.q.val();
        self.icrc.s_axis_tvalid.next = self.o_valid.q.val();
        self.icrc.s_axis_tuser.next = self.o_user.q.val();
        self.out_reg.s_axis_tdata.next = self.icrc.m_axis_tdata.val();
        self.out_reg.s_axis_tkeep.next = self.icrc.m_axis_tkeep.val();
        self.out_reg.s_axis_tlast.next = self.icrc.m_axis_tlast.val();
        self.out_reg.s_axis_tvalid.next = self.icrc.m_axis_tvalid.val();
        self.out_reg.s_axis_tuser.next = self.icrc.m_axis_tuser.val().get_bit(0);
        self.icrc.m_axis_tready.next = self.out_reg.s_axis_tready.val();
        self.m_axis_tdata.next = self.out_reg.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.out_reg.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.out_reg.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.out_reg.m_axis_tvalid.val();
        self.m_axis_tuser.next = self.out_reg.m_axis_tuser.val();
        self.out_reg.m_axis_tready.next = self.m_axis_tready.val();
        self.cnt_frames.next = self.c_frames.q.val();
        self.cnt_len_err.next = self.c_len_err.q.val();

        if self.rst.q.val() {
            self.hs_valid.d.next = false;
            self.busy.d.next = false;
            self.drain.d.next = false;
            self.o_valid.d.next = false;
            self.c_frames.d.next = self.k_zero32.val();
            self.c_len_err.d.next = self.k_zero32.val();
        }
    }
}
