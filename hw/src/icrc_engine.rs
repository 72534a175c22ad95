//! The ICRC engine: a 64-bit AXI-Stream of Ethernet frames in, the same frames out, computing
//! the RoCEv2 ICRC at 8 bytes per clock.
//!
//! - RX mode checks the ICRC of every RoCEv2 frame (Ethernet II, at most one 802.1Q tag,
//!   IPv4 without options or IPv6, UDP destination port 4791) and passes the frame on unchanged;
//!   on its last beat `m_axis_tuser[1]` says the frame is RoCEv2 and `m_axis_tuser[0]` that it is
//!   bad (ICRC mismatch, an IP length that is not a multiple of 4, a frame shorter than its IP
//!   length, or `s_axis_tuser` set by the MAC). The IP length delimits the packet, so Ethernet
//!   padding after a short packet is ignored.
//! - TX mode takes RoCEv2 frames without their ICRC (the IP length already counts it) and
//!   appends the ICRC after the last byte; when that needs a beat more, the input waits one
//!   cycle. A RoCEv2 frame whose length is not a multiple of 4 from the IP header on passes
//!   unchanged with `m_axis_tuser[0]` set. Other frames pass unchanged in both modes.
//!
//! How it works. The CRC covers 8 bytes of 0xFF, then the IP packet with some fields set to
//! ones. Ethernet puts the IP header at byte 14 (18 with a tag), so the 8 stand-in bytes are
//! frame bytes 6..14 (10..18): the engine forces them to 0xFF and starts from the register
//! value after the ones that fall in earlier beats (a constant, [`reg_after_ones`]). Every
//! covered length is a multiple of 4 and starts at 6 or 2 modulo 8, so a frame's covered bytes
//! end 2 or 6 bytes into a beat: the engine needs 8-, 6- and 2-byte updates only. The masked
//! fields per beat come from a table built from the wire model's field lists
//! (`rnic_wire::icrc::masked_fields`).
//!
//! Pipeline (every register moves when the output can): stage 0 parses the input beat and masks
//! it; stage 1 registers the data term of the CRC (the XOR matrix of the data, a cycle ahead of
//! the register term, for Fmax); stage 2 updates the CRC register; the output stage shows the
//! beat with the verdict or the ICRC. Latency: 3 cycles. Throughput: one beat per cycle.

use rust_hdl::prelude::*;

use crate::crc32::{CrcXor, serial};

/// The RoCEv2 UDP port.
const ROCE_PORT: u16 = 4791;

/// Which way the engine works.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Check the ICRC, mark bad frames.
    Rx,
    /// Append the ICRC.
    Tx,
}

/// CRC register after `n` bytes of 0xFF from the initial all-ones register.
pub fn reg_after_ones(n: usize) -> u32 {
    serial(!0, &vec![0xFF; n])
}

/// The OR masks (0xFF for a masked byte, 0x0F for the IPv6 traffic-class nibble) of beats 0..15
/// for a frame with (`v6`, `vlan`), indexed by beat. Built from the wire model's field lists;
/// it includes the 8 stand-in bytes before the IP header.
pub fn beat_masks(v6: bool, vlan: bool) -> [u64; 16] {
    let l3 = if vlan { 18 } else { 14 };
    let mut frame = [0u8; 128];
    frame[l3 - 8..l3].fill(0xFF);
    for &(at, f) in rnic_wire::icrc::masked_fields(v6) {
        f.set(&mut frame[l3 + at..], f.max());
    }
    let mut out = [0u64; 16];
    for (k, o) in out.iter_mut().enumerate() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&frame[8 * k..8 * k + 8]);
        *o = u64::from_le_bytes(w);
    }
    out
}

/// The mask table as a ROM addressed by the beat (`beat[3:0]`), one row holding the masks of
/// all four frame shapes: bits `64 * s ..` for shape `s = {v6, vlan}`. The address is a
/// register, so the ROM sits outside the stage-0 logic that decides the shape from the beat
/// itself (the tag and the EtherType arrive in beats 1 and 2), and that logic only selects.
fn mask_rom() -> ROM<Bits<256>, 4> {
    let mut contents = std::collections::BTreeMap::new();
    for beat in 0..16usize {
        let row: Vec<u64> = (0..4)
            .map(|s| beat_masks(s & 2 != 0, s & 1 != 0)[beat])
            .collect();
        contents.insert(
            bits::<4>(beat as u64),
            crate::header_extract::bits_from_words::<256>(&row),
        );
    }
    ROM::new(contents)
}

/// CRC actions carried from stage 0 to the register.
const ACT_HOLD: u64 = 0;
const ACT_LOAD: u64 = 1;
const ACT_UPD8: u64 = 2;
const ACT_PART: u64 = 3;

#[derive(LogicBlock)]
pub struct IcrcEngine {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high.
    pub reset: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    /// Set by the MAC on the last beat of a frame it found bad.
    pub s_axis_tuser: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    /// On the last beat: bit 0 bad, bit 1 RoCEv2.
    pub m_axis_tuser: Signal<Out, Bits<2>>,
    pub m_axis_tready: Signal<In, Bit>,

    // Stage 0: the per-frame parse state.
    beat: DFF<Bits<16>>,
    vlan: DFF<Bit>,
    v6: DFF<Bit>,
    ip_ok: DFF<Bit>,
    ver_ok: DFF<Bit>,
    proto_ok: DFF<Bit>,
    port_ok: DFF<Bit>,
    len_ok: DFF<Bit>,
    end_beat: DFF<Bits<16>>,
    end_hi: DFF<Bit>,
    crc_done: DFF<Bit>,
    icrc_got: DFF<Bit>,
    icrc_wire: DFF<Bits<32>>,
    // Stage 1.
    r1_valid: DFF<Bit>,
    r1_data: DFF<Bits<64>>,
    r1_masked: DFF<Bits<64>>,
    r1_keep: DFF<Bits<8>>,
    r1_last: DFF<Bit>,
    r1_roce: DFF<Bit>,
    r1_err: DFF<Bit>,
    r1_act: DFF<Bits<2>>,
    r1_six: DFF<Bit>,
    r1_load6: DFF<Bit>,
    r1_append: DFF<Bit>,
    // Stage 2.
    r2_valid: DFF<Bit>,
    r2_data: DFF<Bits<64>>,
    r2_keep: DFF<Bits<8>>,
    r2_last: DFF<Bit>,
    r2_roce: DFF<Bit>,
    r2_err: DFF<Bit>,
    r2_act: DFF<Bits<2>>,
    r2_six: DFF<Bit>,
    r2_load6: DFF<Bit>,
    r2_append: DFF<Bit>,
    r2_term: DFF<Bits<32>>,
    // Stage 3 (output) and the CRC register.
    state: DFF<Bits<32>>,
    r3_valid: DFF<Bit>,
    r3_data: DFF<Bits<64>>,
    r3_keep: DFF<Bits<8>>,
    r3_last: DFF<Bit>,
    r3_roce: DFF<Bit>,
    r3_err: DFF<Bit>,
    r3_append: DFF<Bit>,
    r3_six: DFF<Bit>,
    extra: DFF<Bit>,
    extra_bytes: DFF<Bits<16>>,

    // The XOR matrices.
    d8: CrcXor,
    d6: CrcXor,
    d2: CrcXor,
    s8: CrcXor,
    s6: CrcXor,
    s2: CrcXor,
    masks: ROM<Bits<256>, 4>,

    // Locals.
    adv: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    b1: Signal<Local, Bit>,
    /// `beat == 1` and `beat == 2`, kept as registers beside the beat counter.
    b1q: DFF<Bit>,
    b2q: DFF<Bit>,
    b2: Signal<Local, Bit>,
    cur_vlan: Signal<Local, Bit>,
    cur_v6: Signal<Local, Bit>,
    cur_ip: Signal<Local, Bit>,
    cur_ver: Signal<Local, Bit>,
    cur_proto: Signal<Local, Bit>,
    cur_port: Signal<Local, Bit>,
    cur_len4: Signal<Local, Bits<16>>,
    cur_len6: Signal<Local, Bits<16>>,
    cur_end4: Signal<Local, Bits<16>>,
    cur_end6: Signal<Local, Bits<16>>,
    cur_end: Signal<Local, Bits<16>>,
    end_off4: Signal<Local, Bits<16>>,
    end_off6: Signal<Local, Bits<16>>,
    cur_end_beat: Signal<Local, Bits<16>>,
    cur_end_hi: Signal<Local, Bit>,
    cur_len_ok: Signal<Local, Bit>,
    at_end: Signal<Local, Bit>,
    cur_got: Signal<Local, Bit>,
    cur_roce: Signal<Local, Bit>,
    act: Signal<Local, Bits<2>>,
    six: Signal<Local, Bit>,
    tx_ok_last: Signal<Local, Bit>,
    icrc: Signal<Local, Bits<32>>,
    /// The beat's mask, selected from the ROM row by the shape.
    mask: Signal<Local, Bits<64>>,

    // Constants.
    tx: Constant<Bit>,
    load2: Constant<Bits<32>>,
    load6: Constant<Bits<32>>,
    k_zero16: Constant<Bits<16>>,
    k_one16: Constant<Bits<16>>,
    k_vlan_off: Constant<Bits<16>>,
    k_plain_off: Constant<Bits<16>>,
    k_plain6_off: Constant<Bits<16>>,
    k_vlan6_off: Constant<Bits<16>>,
    k_act_hold: Constant<Bits<2>>,
    k_act_load: Constant<Bits<2>>,
    k_act_upd8: Constant<Bits<2>>,
    k_act_part: Constant<Bits<2>>,
    k_81: Constant<Bits<8>>,
    k_00: Constant<Bits<8>>,
    k_08: Constant<Bits<8>>,
    k_86: Constant<Bits<8>>,
    k_dd: Constant<Bits<8>>,
    k_45: Constant<Bits<8>>,
    k_udp: Constant<Bits<8>>,
    k_six4: Constant<Bits<4>>,
    k_port_hi: Constant<Bits<8>>,
    k_port_lo: Constant<Bits<8>>,
    k_keep2: Constant<Bits<8>>,
    k_keep6: Constant<Bits<8>>,
    k_keep8: Constant<Bits<8>>,
    k_user_roce: Constant<Bits<2>>,
    k_user_bad: Constant<Bits<2>>,
    k_user_none: Constant<Bits<2>>,
    k_two3: Constant<Bits<3>>,
    k_six3: Constant<Bits<3>>,
    k_low16: Constant<Bits<64>>,
    k_low48: Constant<Bits<64>>,
}

impl IcrcEngine {
    pub fn new(mode: Mode) -> Self {
        let c8 = |v: u64| Constant::new(bits::<8>(v));
        let c16 = |v: u64| Constant::new(bits::<16>(v));
        let c2 = |v: u64| Constant::new(bits::<2>(v));
        IcrcEngine {
            clock: Default::default(),
            reset: Default::default(),
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
            beat: Default::default(),
            vlan: Default::default(),
            v6: Default::default(),
            ip_ok: Default::default(),
            ver_ok: Default::default(),
            proto_ok: Default::default(),
            port_ok: Default::default(),
            len_ok: Default::default(),
            end_beat: Default::default(),
            end_hi: Default::default(),
            crc_done: Default::default(),
            icrc_got: Default::default(),
            icrc_wire: Default::default(),
            r1_valid: Default::default(),
            r1_data: Default::default(),
            r1_masked: Default::default(),
            r1_keep: Default::default(),
            r1_last: Default::default(),
            r1_roce: Default::default(),
            r1_err: Default::default(),
            r1_act: Default::default(),
            r1_six: Default::default(),
            r1_load6: Default::default(),
            r1_append: Default::default(),
            r2_valid: Default::default(),
            r2_data: Default::default(),
            r2_keep: Default::default(),
            r2_last: Default::default(),
            r2_roce: Default::default(),
            r2_err: Default::default(),
            r2_act: Default::default(),
            r2_six: Default::default(),
            r2_load6: Default::default(),
            r2_append: Default::default(),
            r2_term: Default::default(),
            state: Default::default(),
            r3_valid: Default::default(),
            r3_data: Default::default(),
            r3_keep: Default::default(),
            r3_last: Default::default(),
            r3_roce: Default::default(),
            r3_err: Default::default(),
            r3_append: Default::default(),
            r3_six: Default::default(),
            extra: Default::default(),
            extra_bytes: Default::default(),
            d8: CrcXor::data(8),
            d6: CrcXor::data(6),
            d2: CrcXor::data(2),
            s8: CrcXor::state(8),
            s6: CrcXor::state(6),
            s2: CrcXor::state(2),
            masks: mask_rom(),
            adv: Default::default(),
            take: Default::default(),
            b1: Default::default(),
            b1q: Default::default(),
            b2q: Default::default(),
            b2: Default::default(),
            cur_vlan: Default::default(),
            cur_v6: Default::default(),
            cur_ip: Default::default(),
            cur_ver: Default::default(),
            cur_proto: Default::default(),
            cur_port: Default::default(),
            cur_len4: Default::default(),
            cur_len6: Default::default(),
            cur_end4: Default::default(),
            cur_end6: Default::default(),
            cur_end: Default::default(),
            end_off4: Default::default(),
            end_off6: Default::default(),
            cur_end_beat: Default::default(),
            cur_end_hi: Default::default(),
            cur_len_ok: Default::default(),
            at_end: Default::default(),
            cur_got: Default::default(),
            cur_roce: Default::default(),
            act: Default::default(),
            six: Default::default(),
            tx_ok_last: Default::default(),
            icrc: Default::default(),
            mask: Default::default(),
            tx: Constant::new(mode == Mode::Tx),
            load2: Constant::new(bits::<32>(u64::from(reg_after_ones(2)))),
            load6: Constant::new(bits::<32>(u64::from(reg_after_ones(6)))),
            k_zero16: c16(0),
            k_one16: c16(1),
            // CRC end (frame offset of the ICRC) = l3 + IP length - 4.
            k_vlan_off: c16(18 - 4),
            k_plain_off: c16(14 - 4),
            k_plain6_off: c16(14 + 40 - 4),
            k_vlan6_off: c16(18 + 40 - 4),
            k_act_hold: c2(ACT_HOLD),
            k_act_load: c2(ACT_LOAD),
            k_act_upd8: c2(ACT_UPD8),
            k_act_part: c2(ACT_PART),
            k_81: c8(0x81),
            k_00: c8(0x00),
            k_08: c8(0x08),
            k_86: c8(0x86),
            k_dd: c8(0xDD),
            k_45: c8(0x45),
            k_udp: c8(17),
            k_six4: Constant::new(bits::<4>(6)),
            k_port_hi: c8(u64::from(ROCE_PORT >> 8)),
            k_port_lo: c8(u64::from(ROCE_PORT & 0xFF)),
            k_keep2: c8(0x03),
            k_keep6: c8(0x3F),
            k_keep8: c8(0xFF),
            k_user_roce: c2(2),
            k_user_bad: c2(1),
            k_user_none: c2(0),
            k_two3: Constant::new(bits::<3>(2)),
            k_six3: Constant::new(bits::<3>(6)),
            k_low16: Constant::new(bits::<64>(0xFFFF)),
            k_low48: Constant::new(bits::<64>(0xFFFF_FFFF_FFFF)),
        }
    }
}

impl Logic for IcrcEngine {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            beat,
            b1q,
            b2q,
            vlan,
            v6,
            ip_ok,
            ver_ok,
            proto_ok,
            port_ok,
            len_ok,
            end_beat,
            end_hi,
            crc_done,
            icrc_got,
            icrc_wire,
            r1_valid,
            r1_data,
            r1_masked,
            r1_keep,
            r1_last,
            r1_roce,
            r1_err,
            r1_act,
            r1_six,
            r1_load6,
            r1_append,
            r2_valid,
            r2_data,
            r2_keep,
            r2_last,
            r2_roce,
            r2_err,
            r2_act,
            r2_six,
            r2_load6,
            r2_append,
            r2_term,
            state,
            r3_valid,
            r3_data,
            r3_keep,
            r3_last,
            r3_roce,
            r3_err,
            r3_append,
            r3_six,
            extra,
            extra_bytes
        );

        // ---- Flow control: every stage moves when the output can take a beat.
        self.adv.next = !self.extra.q.val() & (!self.r3_valid.q.val() | self.m_axis_tready.val());
        // In TX mode the builder in front gates its own handshakes in reset, so the reset net
        // stays out of its emit logic.
        self.s_axis_tready.next = self.adv.val() & (!self.reset.val() | self.tx.val());
        self.take.next = self.adv.val() & self.s_axis_tvalid.val() & !self.reset.val();

        // ---- Stage 0: parse the input beat.
        self.b1.next = self.b1q.q.val();
        self.b2.next = self.b2q.q.val();
        // 802.1Q tag: EtherType 0x8100 at frame bytes 12-13 (beat 1, bytes 4-5).
        self.cur_vlan.next = self.vlan.q.val();
        if self.b1.val() {
            self.cur_vlan.next = (self.s_axis_tdata.val().get_bits::<8>(32) == self.k_81.val())
                & (self.s_axis_tdata.val().get_bits::<8>(40) == self.k_00.val());
        }
        // EtherType IPv4 / IPv6 and the first IP byte: beat 1 bytes 4-7, or beat 2 bytes 0-3
        // behind a tag.
        self.cur_v6.next = self.v6.q.val();
        self.cur_ip.next = self.ip_ok.q.val();
        self.cur_ver.next = self.ver_ok.q.val();
        if self.b1.val() & !self.cur_vlan.val() {
            self.cur_v6.next = (self.s_axis_tdata.val().get_bits::<8>(32) == self.k_86.val())
                & (self.s_axis_tdata.val().get_bits::<8>(40) == self.k_dd.val());
            self.cur_ip.next = self.cur_v6.val()
                | ((self.s_axis_tdata.val().get_bits::<8>(32) == self.k_08.val())
                    & (self.s_axis_tdata.val().get_bits::<8>(40) == self.k_00.val()));
            self.cur_ver.next = (self.cur_v6.val()
                & (self.s_axis_tdata.val().get_bits::<4>(52) == self.k_six4.val()))
                | (!self.cur_v6.val()
                    & (self.s_axis_tdata.val().get_bits::<8>(48) == self.k_45.val()));
        }
        if self.b2.val() & self.vlan.q.val() {
            self.cur_v6.next = (self.s_axis_tdata.val().get_bits::<8>(0) == self.k_86.val())
                & (self.s_axis_tdata.val().get_bits::<8>(8) == self.k_dd.val());
            self.cur_ip.next = self.cur_v6.val()
                | ((self.s_axis_tdata.val().get_bits::<8>(0) == self.k_08.val())
                    & (self.s_axis_tdata.val().get_bits::<8>(8) == self.k_00.val()));
            self.cur_ver.next = (self.cur_v6.val()
                & (self.s_axis_tdata.val().get_bits::<4>(20) == self.k_six4.val()))
                | (!self.cur_v6.val()
                    & (self.s_axis_tdata.val().get_bits::<8>(16) == self.k_45.val()));
        }
        // Protocol UDP: IPv4 byte 9 / IPv6 byte 6 from the IP header.
        self.cur_proto.next = self.proto_ok.q.val();
        if self.b2.val() & !self.vlan.q.val() & !self.v6.q.val() {
            self.cur_proto.next = self.s_axis_tdata.val().get_bits::<8>(56) == self.k_udp.val();
        }
        if self.b2.val() & !self.vlan.q.val() & self.v6.q.val() {
            self.cur_proto.next = self.s_axis_tdata.val().get_bits::<8>(32) == self.k_udp.val();
        }
        if (self.beat.q.val() == 3) & self.vlan.q.val() & !self.v6.q.val() {
            self.cur_proto.next = self.s_axis_tdata.val().get_bits::<8>(24) == self.k_udp.val();
        }
        if (self.beat.q.val() == 3) & self.vlan.q.val() & self.v6.q.val() {
            self.cur_proto.next = self.s_axis_tdata.val().get_bits::<8>(0) == self.k_udp.val();
        }
        // UDP destination port: frame bytes 36-37 (IPv4), 40-41 (IPv4, tag), 56-57 (IPv6),
        // 60-61 (IPv6, tag).
        self.cur_port.next = self.port_ok.q.val();
        if (self.beat.q.val() == 4) & !self.vlan.q.val() & !self.v6.q.val() {
            self.cur_port.next = (self.s_axis_tdata.val().get_bits::<8>(32)
                == self.k_port_hi.val())
                & (self.s_axis_tdata.val().get_bits::<8>(40) == self.k_port_lo.val());
        }
        if (self.beat.q.val() == 5) & self.vlan.q.val() & !self.v6.q.val() {
            self.cur_port.next = (self.s_axis_tdata.val().get_bits::<8>(0) == self.k_port_hi.val())
                & (self.s_axis_tdata.val().get_bits::<8>(8) == self.k_port_lo.val());
        }
        if (self.beat.q.val() == 7) & !self.vlan.q.val() & self.v6.q.val() {
            self.cur_port.next = (self.s_axis_tdata.val().get_bits::<8>(0) == self.k_port_hi.val())
                & (self.s_axis_tdata.val().get_bits::<8>(8) == self.k_port_lo.val());
        }
        if (self.beat.q.val() == 7) & self.vlan.q.val() & self.v6.q.val() {
            self.cur_port.next = (self.s_axis_tdata.val().get_bits::<8>(32)
                == self.k_port_hi.val())
                & (self.s_axis_tdata.val().get_bits::<8>(40) == self.k_port_lo.val());
        }
        // IP length (beat 2): IPv4 total length at IP bytes 2-3, IPv6 payload length at 4-5;
        // the frame offset of the ICRC, l3 + IP length - 4 (+ 40 for the IPv6 header). Both
        // versions are summed side by side (the tag is known from beat 1) and the version, which
        // a tagged frame shows in this same beat, only selects.
        self.cur_len4.next = (bit_cast::<16, 8>(self.s_axis_tdata.val().get_bits::<8>(0)) << 8)
            | bit_cast::<16, 8>(self.s_axis_tdata.val().get_bits::<8>(8));
        self.cur_len6.next = (bit_cast::<16, 8>(self.s_axis_tdata.val().get_bits::<8>(16)) << 8)
            | bit_cast::<16, 8>(self.s_axis_tdata.val().get_bits::<8>(24));
        self.end_off4.next = self.k_plain_off.val();
        self.end_off6.next = self.k_plain6_off.val();
        if self.vlan.q.val() {
            self.cur_len4.next = (bit_cast::<16, 8>(self.s_axis_tdata.val().get_bits::<8>(32))
                << 8)
                | bit_cast::<16, 8>(self.s_axis_tdata.val().get_bits::<8>(40));
            self.cur_len6.next = (bit_cast::<16, 8>(self.s_axis_tdata.val().get_bits::<8>(48))
                << 8)
                | bit_cast::<16, 8>(self.s_axis_tdata.val().get_bits::<8>(56));
            self.end_off4.next = self.k_vlan_off.val();
            self.end_off6.next = self.k_vlan6_off.val();
        }
        self.cur_end4.next = self.cur_len4.val() + self.end_off4.val();
        self.cur_end6.next = self.cur_len6.val() + self.end_off6.val();
        self.cur_end.next = self.cur_end4.val();
        if self.cur_v6.val() {
            self.cur_end.next = self.cur_end6.val();
        }
        self.cur_end_beat.next = self.cur_end.val() >> 3;
        self.cur_end_hi.next = self.cur_end.val().get_bits::<3>(0) == self.k_six3.val();
        self.cur_len_ok.next =
            self.cur_end_hi.val() | (self.cur_end.val().get_bits::<3>(0) == self.k_two3.val());
        if !self.b2.val() {
            self.cur_end_beat.next = self.end_beat.q.val();
            self.cur_end_hi.next = self.end_hi.q.val();
            self.cur_len_ok.next = self.len_ok.q.val();
        }

        // ---- The CRC action of this beat.
        self.at_end.next = !self.b2.val()
            & !self.b1.val()
            & (self.beat.q.val() != self.k_zero16.val())
            & !self.crc_done.q.val()
            & (self.beat.q.val() == self.end_beat.q.val());
        self.six.next = self.end_hi.q.val();
        self.tx_ok_last.next = false;
        if self.tx.val() {
            self.at_end.next = !self.b1.val()
                & (self.beat.q.val() != self.k_zero16.val())
                & self.s_axis_tlast.val();
            self.six.next = self.s_axis_tkeep.val() == self.k_keep6.val();
            self.tx_ok_last.next = self.at_end.val()
                & ((self.s_axis_tkeep.val() == self.k_keep6.val())
                    | (self.s_axis_tkeep.val() == self.k_keep2.val()));
        }
        self.act.next = self.k_act_upd8.val();
        if self.crc_done.q.val() {
            self.act.next = self.k_act_hold.val();
        }
        if self.at_end.val() {
            self.act.next = self.k_act_part.val();
        }
        if self.beat.q.val() == self.k_zero16.val() {
            self.act.next = self.k_act_load.val();
        }
        if self.b1.val() & self.cur_vlan.val() {
            self.act.next = self.k_act_load.val();
        }

        // ---- The wire ICRC (RX): bytes 2-5 of the end beat, or bytes 6-7 of the end beat and
        // 0-1 of the next.
        self.cur_got.next = self.icrc_got.q.val();
        self.icrc_wire.d.next = self.icrc_wire.q.val();
        if self.at_end.val() & !self.end_hi.q.val() {
            self.icrc_wire.d.next = self.s_axis_tdata.val().get_bits::<32>(16);
            self.cur_got.next = true;
        }
        if self.at_end.val() & self.end_hi.q.val() {
            self.icrc_wire.d.next = bit_cast::<32, 16>(self.s_axis_tdata.val().get_bits::<16>(48));
        }
        if self.crc_done.q.val() & self.end_hi.q.val() & !self.icrc_got.q.val() {
            self.icrc_wire.d.next = self.icrc_wire.q.val()
                | (bit_cast::<32, 16>(self.s_axis_tdata.val().get_bits::<16>(0)) << 16);
            self.cur_got.next = true;
        }
        if !self.take.val() {
            self.icrc_wire.d.next = self.icrc_wire.q.val();
        }

        // RoCEv2 as far as this beat tells.
        self.cur_roce.next =
            self.cur_ip.val() & self.cur_ver.val() & self.cur_proto.val() & self.cur_port.val();

        // ---- Masking: the beat's table row, the shape's mask in it; beats past 15 have no
        // masks.
        self.masks.address.next = self.beat.q.val().get_bits::<4>(0);
        self.mask.next = self.masks.data.val().get_bits::<64>(0);
        if !self.cur_v6.val() & self.cur_vlan.val() {
            self.mask.next = self.masks.data.val().get_bits::<64>(64);
        }
        if self.cur_v6.val() & !self.cur_vlan.val() {
            self.mask.next = self.masks.data.val().get_bits::<64>(128);
        }
        if self.cur_v6.val() & self.cur_vlan.val() {
            self.mask.next = self.masks.data.val().get_bits::<64>(192);
        }

        // ---- Stage 0 registers (parse state) and stage 1.
        self.beat.d.next = self.beat.q.val();
        self.vlan.d.next = self.vlan.q.val();
        self.v6.d.next = self.v6.q.val();
        self.ip_ok.d.next = self.ip_ok.q.val();
        self.ver_ok.d.next = self.ver_ok.q.val();
        self.proto_ok.d.next = self.proto_ok.q.val();
        self.port_ok.d.next = self.port_ok.q.val();
        self.len_ok.d.next = self.len_ok.q.val();
        self.end_beat.d.next = self.end_beat.q.val();
        self.end_hi.d.next = self.end_hi.q.val();
        self.crc_done.d.next = self.crc_done.q.val();
        self.icrc_got.d.next = self.icrc_got.q.val();
        if self.take.val() {
            self.b1q.d.next = (self.beat.q.val() == self.k_zero16.val()) & !self.s_axis_tlast.val();
            self.b2q.d.next = self.b1q.q.val() & !self.s_axis_tlast.val();
            self.beat.d.next = self.beat.q.val() + self.k_one16.val();
            if self.beat.q.val().get_bits::<4>(12).all() {
                self.beat.d.next = self.beat.q.val();
            }
            self.vlan.d.next = self.cur_vlan.val();
            self.v6.d.next = self.cur_v6.val();
            self.ip_ok.d.next = self.cur_ip.val();
            self.ver_ok.d.next = self.cur_ver.val();
            self.proto_ok.d.next = self.cur_proto.val();
            self.port_ok.d.next = self.cur_port.val();
            self.end_beat.d.next = self.cur_end_beat.val();
            self.end_hi.d.next = self.cur_end_hi.val();
            self.len_ok.d.next = self.cur_len_ok.val();
            self.crc_done.d.next = self.crc_done.q.val() | self.at_end.val();
            self.icrc_got.d.next = self.cur_got.val();
            if self.s_axis_tlast.val() {
                self.beat.d.next = self.k_zero16.val();
                self.vlan.d.next = false;
                self.v6.d.next = false;
                self.ip_ok.d.next = false;
                self.ver_ok.d.next = false;
                self.proto_ok.d.next = false;
                self.port_ok.d.next = false;
                self.len_ok.d.next = false;
                self.end_beat.d.next = self.k_zero16.val();
                self.crc_done.d.next = false;
                self.icrc_got.d.next = false;
            }
        }

        self.r1_valid.d.next = self.r1_valid.q.val();
        self.r1_data.d.next = self.r1_data.q.val();
        self.r1_masked.d.next = self.r1_masked.q.val();
        self.r1_keep.d.next = self.r1_keep.q.val();
        self.r1_last.d.next = self.r1_last.q.val();
        self.r1_roce.d.next = self.r1_roce.q.val();
        self.r1_err.d.next = self.r1_err.q.val();
        self.r1_act.d.next = self.r1_act.q.val();
        self.r1_six.d.next = self.r1_six.q.val();
        self.r1_load6.d.next = self.r1_load6.q.val();
        self.r1_append.d.next = self.r1_append.q.val();
        if self.adv.val() {
            self.r1_valid.d.next = self.take.val();
            self.r1_data.d.next = self.s_axis_tdata.val();
            self.r1_masked.d.next = self.s_axis_tdata.val() | self.mask.val();
            if self.beat.q.val().get_bits::<12>(4).any() {
                self.r1_masked.d.next = self.s_axis_tdata.val();
            }
            self.r1_keep.d.next = self.s_axis_tkeep.val();
            self.r1_last.d.next = self.s_axis_tlast.val();
            self.r1_roce.d.next = self.cur_roce.val();
            // Errors known at the input: the MAC's flag; for RX a RoCEv2 frame whose IP length
            // is not a multiple of 4 or that ends before its ICRC; for TX one that cannot take
            // an ICRC.
            self.r1_err.d.next = self.s_axis_tuser.val();
            if !self.tx.val() & self.cur_roce.val() & self.s_axis_tlast.val() {
                self.r1_err.d.next =
                    self.s_axis_tuser.val() | !self.cur_len_ok.val() | !self.cur_got.val();
            }
            if self.tx.val() & self.cur_roce.val() & self.s_axis_tlast.val() {
                self.r1_err.d.next = self.s_axis_tuser.val() | !self.tx_ok_last.val();
            }
            self.r1_act.d.next = self.act.val();
            self.r1_six.d.next = self.six.val();
            self.r1_load6.d.next = self.b1.val();
            self.r1_append.d.next = self.tx.val()
                & self.cur_roce.val()
                & self.tx_ok_last.val()
                & !self.s_axis_tuser.val();
            if !self.take.val() {
                self.r1_act.d.next = self.k_act_hold.val();
                self.r1_last.d.next = false;
                self.r1_append.d.next = false;
            }
        }

        // ---- Stage 1 -> 2: the data term of the CRC.
        self.d8.x.next = self.r1_masked.q.val();
        self.d6.x.next = self.r1_masked.q.val();
        self.d2.x.next = self.r1_masked.q.val();
        self.r2_valid.d.next = self.r2_valid.q.val();
        self.r2_data.d.next = self.r2_data.q.val();
        self.r2_keep.d.next = self.r2_keep.q.val();
        self.r2_last.d.next = self.r2_last.q.val();
        self.r2_roce.d.next = self.r2_roce.q.val();
        self.r2_err.d.next = self.r2_err.q.val();
        self.r2_act.d.next = self.r2_act.q.val();
        self.r2_six.d.next = self.r2_six.q.val();
        self.r2_load6.d.next = self.r2_load6.q.val();
        self.r2_append.d.next = self.r2_append.q.val();
        self.r2_term.d.next = self.r2_term.q.val();
        if self.adv.val() {
            self.r2_valid.d.next = self.r1_valid.q.val();
            self.r2_data.d.next = self.r1_data.q.val();
            self.r2_keep.d.next = self.r1_keep.q.val();
            self.r2_last.d.next = self.r1_last.q.val();
            self.r2_roce.d.next = self.r1_roce.q.val();
            self.r2_err.d.next = self.r1_err.q.val();
            self.r2_act.d.next = self.r1_act.q.val();
            self.r2_six.d.next = self.r1_six.q.val();
            self.r2_load6.d.next = self.r1_load6.q.val();
            self.r2_append.d.next = self.r1_append.q.val();
            self.r2_term.d.next = self.d8.y.val();
            if self.r1_act.q.val() == self.k_act_part.val() {
                self.r2_term.d.next = self.d2.y.val();
                if self.r1_six.q.val() {
                    self.r2_term.d.next = self.d6.y.val();
                }
            }
        }

        // ---- Stage 2: the CRC register.
        self.s8.x.next = bit_cast::<64, 32>(self.state.q.val());
        self.s6.x.next = bit_cast::<64, 32>(self.state.q.val());
        self.s2.x.next = bit_cast::<64, 32>(self.state.q.val());
        self.state.d.next = self.state.q.val();
        self.r3_valid.d.next = self.r3_valid.q.val();
        self.r3_data.d.next = self.r3_data.q.val();
        self.r3_keep.d.next = self.r3_keep.q.val();
        self.r3_last.d.next = self.r3_last.q.val();
        self.r3_roce.d.next = self.r3_roce.q.val();
        self.r3_err.d.next = self.r3_err.q.val();
        self.r3_append.d.next = self.r3_append.q.val();
        self.r3_six.d.next = self.r3_six.q.val();
        if self.adv.val() {
            if self.r2_act.q.val() == self.k_act_load.val() {
                self.state.d.next = self.load2.val();
                if self.r2_load6.q.val() {
                    self.state.d.next = self.load6.val();
                }
            }
            if self.r2_act.q.val() == self.k_act_upd8.val() {
                self.state.d.next = self.s8.y.val() ^ self.r2_term.q.val();
            }
            if self.r2_act.q.val() == self.k_act_part.val() {
                self.state.d.next = self.s2.y.val() ^ self.r2_term.q.val();
                if self.r2_six.q.val() {
                    self.state.d.next = self.s6.y.val() ^ self.r2_term.q.val();
                }
            }
            self.r3_valid.d.next = self.r2_valid.q.val();
            self.r3_data.d.next = self.r2_data.q.val();
            self.r3_keep.d.next = self.r2_keep.q.val();
            self.r3_last.d.next = self.r2_last.q.val();
            self.r3_roce.d.next = self.r2_roce.q.val();
            self.r3_err.d.next = self.r2_err.q.val();
            self.r3_append.d.next = self.r2_append.q.val();
            self.r3_six.d.next = self.r2_six.q.val();
        }

        // ---- Output.
        self.icrc.next = !self.state.q.val();
        self.m_axis_tvalid.next = self.r3_valid.q.val() | self.extra.q.val();
        self.m_axis_tdata.next = self.r3_data.q.val();
        self.m_axis_tkeep.next = self.r3_keep.q.val();
        self.m_axis_tlast.next = self.r3_last.q.val();
        self.m_axis_tuser.next = self.k_user_none.val();
        if self.r3_last.q.val() & self.r3_roce.q.val() {
            self.m_axis_tuser.next = self.k_user_roce.val();
        }
        if self.r3_last.q.val() & self.r3_err.q.val() {
            self.m_axis_tuser.next = self.m_axis_tuser.val() | self.k_user_bad.val();
        }
        if !self.tx.val()
            & self.r3_last.q.val()
            & self.r3_roce.q.val()
            & (self.icrc.val() != self.icrc_wire.q.val())
        {
            self.m_axis_tuser.next = self.k_user_roce.val() | self.k_user_bad.val();
        }
        self.extra.d.next = self.extra.q.val();
        self.extra_bytes.d.next = self.extra_bytes.q.val();
        if self.r3_append.q.val() {
            if self.r3_six.q.val() {
                // Six data bytes: ICRC bytes 0-1 in bytes 6-7, bytes 2-3 in an extra beat.
                self.m_axis_tdata.next = (self.r3_data.q.val() & self.k_low48.val())
                    | (bit_cast::<64, 16>(self.icrc.val().get_bits::<16>(0)) << 48);
                self.m_axis_tkeep.next = self.k_keep8.val();
                self.m_axis_tlast.next = false;
                self.m_axis_tuser.next = self.k_user_none.val();
                if self.m_axis_tready.val() & !self.extra.q.val() {
                    self.extra.d.next = true;
                    self.extra_bytes.d.next = self.icrc.val().get_bits::<16>(16);
                }
            } else {
                // Two data bytes: the ICRC in bytes 2-5.
                self.m_axis_tdata.next = (self.r3_data.q.val() & self.k_low16.val())
                    | (bit_cast::<64, 32>(self.icrc.val()) << 16);
                self.m_axis_tkeep.next = self.k_keep6.val();
            }
        }
        if self.extra.q.val() {
            self.m_axis_tdata.next = bit_cast::<64, 16>(self.extra_bytes.q.val());
            self.m_axis_tkeep.next = self.k_keep2.val();
            self.m_axis_tlast.next = true;
            self.m_axis_tuser.next = self.k_user_roce.val();
            if self.m_axis_tready.val() {
                self.extra.d.next = false;
            }
        }

        // ---- Reset.
        if self.reset.val() {
            self.beat.d.next = self.k_zero16.val();
            self.b1q.d.next = false;
            self.b2q.d.next = false;
            self.crc_done.d.next = false;
            self.icrc_got.d.next = false;
            self.r1_valid.d.next = false;
            self.r2_valid.d.next = false;
            self.r3_valid.d.next = false;
            self.r1_last.d.next = false;
            self.r2_last.d.next = false;
            self.r3_last.d.next = false;
            self.r1_append.d.next = false;
            self.r2_append.d.next = false;
            self.r3_append.d.next = false;
            self.extra.d.next = false;
        }
    }
}
