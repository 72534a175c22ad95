//! The RoCEv2 receive parser: a 64-bit AXI-Stream of Ethernet frames from the MAC (no FCS) in;
//! a header channel, a payload stream and a bypass stream out; drop counters.
//!
//! # What it accepts
//! Ethernet II with at most one 802.1Q tag; IPv4 (version 4, IHL 5, header checksum verified,
//! no fragments) or IPv6 (next header UDP); UDP destination port 4791; the BTH; the extension
//! headers the opcode calls for (from `rnic_wire::opcode::OPCODES`); the CNP. The IP length
//! delimits the packet: bytes after it are Ethernet padding (allowed up to a 60-byte frame), and
//! its last 4 bytes are the ICRC, checked by the [`IcrcEngine`] in front of the parser. The input
//! and the bypass output pass through register slices ([`crate::axis_register`], 1 cycle
//! each), so `s_axis_tready` is a register and `m_bypass_tready` reaches only the slice.
//!
//! A frame is RoCEv2 when its EtherType (after an optional tag) is IPv4 with first byte 0x45 or
//! IPv6 with version 6, the protocol / next header is UDP, the frame holds the whole UDP header
//! and the destination port is 4791. Every other frame (ARP, TCP, other UDP, IPv4 with options,
//! runts) leaves unchanged on the bypass stream, with `tuser` = the MAC's error flag.
//!
//! # Drop policy: dropped before release
//! A bad RoCEv2 frame is dropped before any of its payload is released: the payload is written
//! into a block-RAM frame FIFO ([`CommitFifo`]) as it arrives and committed only when the last
//! beat has shown every check passing, so the payload stream carries nothing but whole, good
//! payloads and consumers (the transport engine, DMA) never have to undo a write. The price is
//! store-and-forward latency (a frame's length plus a few cycles) and 2 x 16 KiB of block RAM
//! (payload and bypass FIFOs, 2048 x 74 bits each, room for any frame up to 9216 bytes); the
//! alternative, flagging on the last beat, would push the rollback into every consumer. The header
//! word of an accepted frame is presented on the header channel when its payload is committed,
//! so a consumer takes a header, then `payload_len` bytes from the payload stream (none for a
//! packet without payload).
//!
//! Each frame gets one verdict, the first that applies in this order ([`Reason`]): oversize
//! (more than 1152 beats, any frame), truncated (the frame ends before its IP length), fragment
//! (IPv4 MF or offset), IPv4 header checksum, lengths (UDP length not equal to what the IP length
//! leaves, or an IP length too short for BTH and ICRC), TVer not 0, unknown opcode, lengths again
//! (IP length too short for the opcode's headers, not a multiple of 4, a payload on an opcode
//! that has none, or a frame longer than both 60 bytes and its IP packet), PadCnt larger than the
//! payload, bad ICRC (or the MAC's error flag). Every verdict is counted.
//!
//! # Pipeline
//! ICRC engine (3 cycles) -> capture and header extraction ([`HeaderExtract`], generated from the
//! field tables) with the checks (stage 1) -> realigner and FIFO writes (stage 2) -> FIFO read
//! (2 cycles). The realigner shifts the payload by its start offset modulo 8 (the start depends
//! on the tag, the IP version and the opcode) so that the payload stream's first byte is lane 0,
//! and cuts the pad and ICRC with an exact `tkeep`. Every stage moves one beat per clock; the
//! input stalls only when a FIFO is nearly full, or when an accepted frame ends while the header
//! of the one before it still waits on the header channel (a one-word slot).

use rust_hdl::prelude::*;

use crate::axis_register::AxisRegister;
use crate::commit_fifo::{CommitFifo, FRAME_ABITS};
use crate::header_channel::HDR_BITS;
use crate::header_extract::{HeaderExtract, bth_offset, ip_header_len, l3_offset, udp_offset};
use crate::icrc_engine::{IcrcEngine, Mode};
use rnic_wire::{bth, icrc, udp};

/// Frames longer than this many beats (9216 bytes) are dropped as oversize.
pub const MAX_BEATS: u64 = 1152;
/// The Ethernet minimum frame without FCS: a frame up to this length may carry MAC padding.
pub const MIN_FRAME: u64 = 60;

/// The offsets of a frame's shape (tag, IPv6) that the checks compare against, as the
/// constants the parser muxes by shape.
pub mod shape {
    use super::*;

    /// The frame offset the IP length counts from: the IPv4 header, or the end of the IPv6 header
    /// (its payload length excludes the fixed header).
    pub fn ip_base(vlan: bool, v6: bool) -> u64 {
        (l3_offset(vlan) + if v6 { ip_header_len(true) } else { 0 }) as u64
    }

    /// The payload's start without extension headers.
    pub fn payload_base(vlan: bool, v6: bool) -> u64 {
        (bth_offset(vlan, v6) + bth::LAYOUT.len) as u64
    }

    /// The end of the UDP header.
    pub fn udp_end(vlan: bool, v6: bool) -> u64 {
        (udp_offset(vlan, v6) + udp::LAYOUT.len) as u64
    }

    /// The end of the UDP destination port: a frame that reaches it says whether it is RoCEv2.
    pub fn port_end(vlan: bool, v6: bool) -> u64 {
        (udp_offset(vlan, v6) + udp::DST_PORT.byte + 2) as u64
    }

    /// A frame offset `e = 8 m + r` as `(m, 1 << (r - 1))`: the beat a frame that ends there
    /// ends in, and the keep bit of its last byte. Needs `1 <= r` and `m < 15` (the parser's
    /// saturating beat count).
    pub fn end_split(e: u64) -> (u64, u64) {
        assert!(e % 8 != 0 && e / 8 < 15, "end {e}");
        (e / 8, 1 << (e % 8 - 1))
    }

    /// [`udp_end`] as [`end_split`] gives it.
    pub fn udp_end_split(vlan: bool, v6: bool) -> (u64, u64) {
        end_split(udp_end(vlan, v6))
    }

    /// [`port_end`] as [`end_split`] gives it.
    pub fn port_end_split(vlan: bool, v6: bool) -> (u64, u64) {
        end_split(port_end(vlan, v6))
    }

    /// What the payload length is, less the IP length and plus PadCnt and the extension
    /// length (20-bit two's complement: it is negative).
    pub fn len_base(vlan: bool, v6: bool) -> u64 {
        (ip_base(vlan, v6) - icrc::LEN as u64).wrapping_sub(payload_base(vlan, v6)) & 0xF_FFFF
    }

    /// The shortest IP length that holds the BTH and the ICRC (same with or without a tag).
    pub fn min_ip_len(v6: bool) -> u64 {
        let v = payload_base(false, v6) + icrc::LEN as u64 - ip_base(false, v6);
        debug_assert_eq!(
            v,
            payload_base(true, v6) + icrc::LEN as u64 - ip_base(true, v6)
        );
        v
    }
}

/// A frame's verdict, as the counters and the software model number them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    Accept = 0,
    Oversize = 1,
    Truncated = 2,
    Fragment = 3,
    Checksum = 4,
    Length = 5,
    Tver = 6,
    Opcode = 7,
    Padcnt = 8,
    Icrc = 9,
}

impl Reason {
    /// Every drop reason, in counter order.
    pub const DROPS: [Reason; 9] = [
        Reason::Oversize,
        Reason::Truncated,
        Reason::Fragment,
        Reason::Checksum,
        Reason::Length,
        Reason::Tver,
        Reason::Opcode,
        Reason::Padcnt,
        Reason::Icrc,
    ];

    /// Short name (as printed by the CLI).
    pub fn name(self) -> &'static str {
        match self {
            Reason::Accept => "accepted",
            Reason::Oversize => "oversize",
            Reason::Truncated => "truncated",
            Reason::Fragment => "fragment",
            Reason::Checksum => "ipv4_checksum",
            Reason::Length => "length",
            Reason::Tver => "tver",
            Reason::Opcode => "unknown_opcode",
            Reason::Padcnt => "padcnt",
            Reason::Icrc => "icrc",
        }
    }

    /// The counter port of this verdict.
    pub fn counter(self) -> &'static str {
        match self {
            Reason::Accept => "cnt_accepted",
            Reason::Oversize => "cnt_drop_oversize",
            Reason::Truncated => "cnt_drop_truncated",
            Reason::Fragment => "cnt_drop_fragment",
            Reason::Checksum => "cnt_drop_checksum",
            Reason::Length => "cnt_drop_length",
            Reason::Tver => "cnt_drop_tver",
            Reason::Opcode => "cnt_drop_opcode",
            Reason::Padcnt => "cnt_drop_padcnt",
            Reason::Icrc => "cnt_drop_icrc",
        }
    }
}

/// Every counter port, in order.
pub const COUNTERS: [&str; 12] = [
    "cnt_frames",
    "cnt_accepted",
    "cnt_bypass",
    "cnt_drop_oversize",
    "cnt_drop_truncated",
    "cnt_drop_fragment",
    "cnt_drop_checksum",
    "cnt_drop_length",
    "cnt_drop_tver",
    "cnt_drop_opcode",
    "cnt_drop_padcnt",
    "cnt_drop_icrc",
];

#[derive(LogicBlock)]
pub struct RxParser {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    /// Set by the MAC on the last beat of a frame it found bad.
    pub s_axis_tuser: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    /// The payload stream: whole payloads of accepted frames, pad and ICRC removed.
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    /// The bypass stream: non-RoCEv2 frames, unchanged (`tuser` = the MAC's flag).
    pub m_bypass_tdata: Signal<Out, Bits<64>>,
    pub m_bypass_tkeep: Signal<Out, Bits<8>>,
    pub m_bypass_tlast: Signal<Out, Bit>,
    pub m_bypass_tvalid: Signal<Out, Bit>,
    pub m_bypass_tuser: Signal<Out, Bit>,
    pub m_bypass_tready: Signal<In, Bit>,
    /// The header channel: one word per accepted frame ([`crate::header_channel`]).
    pub m_hdr_data: Signal<Out, Bits<HDR_BITS>>,
    pub m_hdr_valid: Signal<Out, Bit>,
    pub m_hdr_ready: Signal<In, Bit>,
    /// Counters (see [`Reason`]); they wrap at 2^32.
    pub cnt_frames: Signal<Out, Bits<32>>,
    pub cnt_accepted: Signal<Out, Bits<32>>,
    pub cnt_bypass: Signal<Out, Bits<32>>,
    pub cnt_drop_oversize: Signal<Out, Bits<32>>,
    pub cnt_drop_truncated: Signal<Out, Bits<32>>,
    pub cnt_drop_fragment: Signal<Out, Bits<32>>,
    pub cnt_drop_checksum: Signal<Out, Bits<32>>,
    pub cnt_drop_length: Signal<Out, Bits<32>>,
    pub cnt_drop_tver: Signal<Out, Bits<32>>,
    pub cnt_drop_opcode: Signal<Out, Bits<32>>,
    pub cnt_drop_padcnt: Signal<Out, Bits<32>>,
    pub cnt_drop_icrc: Signal<Out, Bits<32>>,
    /// Register slices on the streams that cross the layer's edge: the input, the bypass.
    in_reg: AxisRegister,
    byp_reg: AxisRegister,
    icrc: IcrcEngine,
    ex: HeaderExtract,
    pay: CommitFifo<FRAME_ABITS>,
    byp: CommitFifo<FRAME_ABITS>,
    beat_a: DFF<Bits<16>>,
    /// `beat_a + 1`, and `beat_a` saturated at 15, kept as counters beside it.
    beat_b: DFF<Bits<17>>,
    beat_s: DFF<Bits<4>>,
    r1_valid: DFF<Bit>,
    r1_data: DFF<Bits<64>>,
    r1_keep: DFF<Bits<8>>,
    r1_last: DFF<Bit>,
    r1_user: DFF<Bits<2>>,
    r1_beat: DFF<Bits<16>>,
    /// The frame so far reaches the end of the UDP header, and the end of its destination
    /// port, for each shape.
    r1_ue: DFF<Bits<4>>,
    r1_pe: DFF<Bits<4>>,
    /// The frame so far is shorter than its IP packet, or longer than it and 60 bytes.
    r1_trunc: DFF<Bit>,
    r1_long: DFF<Bit>,
    /// The length checks of stage 1 as registered flags (see "Checks one clock ahead").
    f_short: DFF<Bit>,
    f_ne: DFF<Bit>,
    f_pad: DFF<Bit>,
    f_len_a: DFF<Bit>,
    /// The frame so far against the IP end: shorter, equal; and longer than 60 bytes.
    fl_lt: Signal<Local, Bit>,
    fl_eq: Signal<Local, Bit>,
    fl_gt60: Signal<Local, Bit>,
    ie_m: Signal<Local, Bits<17>>,
    ie_r: Signal<Local, Bits<3>>,
    k_minf_m: Constant<Bits<4>>,
    k_minf_r: Constant<Bits<3>>,
    fl_lo: Signal<Local, Bits<3>>,
    ue_in: Signal<Local, Bits<4>>,
    ue_ok: Signal<Local, Bit>,
    pe_in: Signal<Local, Bits<4>>,
    pe_ok: Signal<Local, Bit>,
    /// The extractor's outputs one clock late (see "Stage 1" in `update`).
    q_vlan: DFF<Bit>,
    /// Sums and tests of the extractor's fields, registered with them (`d_*` their inputs).
    q_ip_end: DFF<Bits<20>>,
    /// The IP length less the shortest (BTH and ICRC), and less that and PadCnt: what the
    /// extension headers and the payload may fill (negative: bit 19).
    q_room: DFF<Bits<20>>,
    q_roomp: DFF<Bits<20>>,
    /// The UDP length plus the IPv4 header (what the IP length must equal).
    q_udp_adj: DFF<Bits<20>>,
    d_ip_len: Signal<Local, Bits<20>>,
    d_nl: Signal<Local, Bits<20>>,
    d_nlp: Signal<Local, Bits<20>>,
    q_op: DFF<Bits<8>>,
    q_ip_ok: DFF<Bit>,
    q_proto_udp: DFF<Bit>,
    port_sel: Signal<Local, Bit>,
    hdr_load: Signal<Local, Bit>,
    q_v6: DFF<Bit>,
    q_ip_len: DFF<Bits<20>>,
    q_frag: DFF<Bit>,
    q_tver: DFF<Bits<4>>,
    q_pad: DFF<Bits<20>>,
    q_known: DFF<Bit>,
    q_has_payload: DFF<Bit>,
    q_ext_len: DFF<Bits<20>>,
    ipe_base: Signal<Local, Bits<20>>,
    pstart_c: Signal<Local, Bits<20>>,
    bth_beat_c: Signal<Local, Bits<20>>,
    lena_c: Signal<Local, Bits<20>>,
    udp_adj: Signal<Local, Bits<20>>,
    plen: Signal<Local, Bits<20>>,
    r2_len: DFF<Bits<20>>,
    r2_nb: DFF<Bits<20>>,
    r2_nbm1: DFF<Bits<20>>,
    r2_elb: DFF<Bits<20>>,
    k_out: DFF<Bits<20>>,
    px: Signal<Local, Bits<20>>,
    len_t: Signal<Local, Bits<20>>,
    len7_t: Signal<Local, Bits<20>>,
    lenm1_t: Signal<Local, Bits<20>>,
    elb_t: Signal<Local, Bits<20>>,
    len_v: Signal<Local, Bits<20>>,
    len7_v: Signal<Local, Bits<20>>,
    lenm1_v: Signal<Local, Bits<20>>,
    elb_v: Signal<Local, Bits<20>>,
    len_neg: Signal<Local, Bit>,
    /// The input beat where output beat `k_out` starts: `(r2_p >> 3) + k_out`, as a counter.
    q_beat: DFF<Bits<20>>,
    k_out_zero: Signal<Local, Bit>,
    in_first: Signal<Local, Bit>,
    p_inc: Signal<Local, Bit>,
    full_in: Signal<Local, Bit>,
    end_in: Signal<Local, Bit>,
    /// `k_out + 1`, counted beside it.
    k1: DFF<Bits<20>>,
    tail_last: Signal<Local, Bit>,
    len_lo: Signal<Local, Bits<3>>,
    k_lc_pp: Constant<Bits<20>>,
    k_lc_tp: Constant<Bits<20>>,
    k_lc_p6: Constant<Bits<20>>,
    k_lc_t6: Constant<Bits<20>>,
    k_lc7_pp: Constant<Bits<20>>,
    k_lc7_tp: Constant<Bits<20>>,
    k_lc7_p6: Constant<Bits<20>>,
    k_lc7_t6: Constant<Bits<20>>,
    k_lcm1_pp: Constant<Bits<20>>,
    k_lcm1_tp: Constant<Bits<20>>,
    k_lcm1_p6: Constant<Bits<20>>,
    k_lcm1_t6: Constant<Bits<20>>,
    k_elbc_pp: Constant<Bits<20>>,
    k_elbc_tp: Constant<Bits<20>>,
    k_elbc_p6: Constant<Bits<20>>,
    k_elbc_t6: Constant<Bits<20>>,
    r2_valid: DFF<Bit>,
    r2_data: DFF<Bits<64>>,
    r2_keep: DFF<Bits<8>>,
    r2_last: DFF<Bit>,
    r2_mac_bad: DFF<Bit>,
    r2_beat: DFF<Bits<16>>,
    r2_p: DFF<Bits<20>>,
    /// The beat is past the BTH's and within the oversize limit; the verdict is accept and
    /// not bypass (decided in stage 1 with the rest).
    r2_past_bth: DFF<Bit>,
    r2_in_range: DFF<Bit>,
    r2_acc: DFF<Bit>,
    r2_reason: DFF<Bits<4>>,
    r2_bypass: DFF<Bit>,
    r2_rec: DFF<Bits<HDR_BITS>>,
    prev: DFF<Bits<64>>,
    hdr_valid: DFF<Bit>,
    hdr_data: DFF<Bits<HDR_BITS>>,
    /// The verdict of the frame that left stage 2 on the last clock, for the counters.
    ev_fin: DFF<Bit>,
    ev_bypass: DFF<Bit>,
    ev_commit: DFF<Bit>,
    ev_reason: DFF<Bits<4>>,
    c_frames: DFF<Bits<32>>,
    c_accepted: DFF<Bits<32>>,
    c_bypass: DFF<Bits<32>>,
    c_drop_oversize: DFF<Bits<32>>,
    c_drop_truncated: DFF<Bits<32>>,
    c_drop_fragment: DFF<Bits<32>>,
    c_drop_checksum: DFF<Bits<32>>,
    c_drop_length: DFF<Bits<32>>,
    c_drop_tver: DFF<Bits<32>>,
    c_drop_opcode: DFF<Bits<32>>,
    c_drop_padcnt: DFF<Bits<32>>,
    c_drop_icrc: DFF<Bits<32>>,
    /// The reset input one clock late: everything inside resets from this register, so the
    /// reset's fanout starts at a flip-flop and no logic depends on the input combinationally
    /// (which also keeps that logic out of Verilator's per-evaluation input region).
    rst: DFF<Bit>,
    adv: Signal<Local, Bit>,
    need_slot: Signal<Local, Bit>,
    ta: Signal<Local, Bit>,
    pstart: Signal<Local, Bits<20>>,
    udp_bad: Signal<Local, Bit>,
    roce: Signal<Local, Bit>,
    oversize: Signal<Local, Bit>,
    trunc: Signal<Local, Bit>,
    len_a: Signal<Local, Bit>,
    len_b: Signal<Local, Bit>,
    pad_bad: Signal<Local, Bit>,
    icrc_bad: Signal<Local, Bit>,
    reason: Signal<Local, Bits<4>>,
    bypass: Signal<Local, Bit>,
    beat2: Signal<Local, Bits<20>>,
    in_range: Signal<Local, Bit>,
    emit: Signal<Local, Bit>,
    cat: Signal<Local, Bits<128>>,
    beat_eq: Signal<Local, Bit>,
    shamt: Signal<Local, Bits<7>>,
    shifted: Signal<Local, Bits<128>>,
    kshift: Signal<Local, Bits<8>>,
    okeep: Signal<Local, Bits<8>>,
    olast: Signal<Local, Bit>,
    fin: Signal<Local, Bit>,
    commit_pay: Signal<Local, Bit>,
    commit_byp: Signal<Local, Bit>,
    tshamt: Signal<Local, Bits<6>>,
    tail_word: Signal<Local, Bits<64>>,
    tkeep_l: Signal<Local, Bits<8>>,
    tail_need: Signal<Local, Bit>,
    tail_pending: DFF<Bit>,
    tail_data: DFF<Bits<64>>,
    tail_keep: DFF<Bits<8>>,
    pend_commit: DFF<Bit>,
    pend_rewind: DFF<Bit>,
    /// By shape (tag, IPv6), indexed `_pp` plain IPv4, `_tp` tag IPv4, `_p6`, `_t6`: where the
    /// IP packet's length counts from; the payload start without extension
    /// headers; the BTH's beat; the end of the UDP header.
    k_ipe_pp: Constant<Bits<20>>,
    k_ipe_tp: Constant<Bits<20>>,
    k_ipe_p6: Constant<Bits<20>>,
    k_ipe_t6: Constant<Bits<20>>,
    k_pst_pp: Constant<Bits<20>>,
    k_pst_tp: Constant<Bits<20>>,
    k_pst_p6: Constant<Bits<20>>,
    k_pst_t6: Constant<Bits<20>>,
    k_bb_pp: Constant<Bits<20>>,
    k_bb_tp: Constant<Bits<20>>,
    k_bb_p6: Constant<Bits<20>>,
    k_bb_t6: Constant<Bits<20>>,
    /// The end of the UDP header as `8 m + r` (1 <= r <= 7): `m` (`k_um_*`) and the keep bit
    /// of byte `r - 1` (`k_ur_*`).
    k_um_pp: Constant<Bits<4>>,
    k_um_tp: Constant<Bits<4>>,
    k_um_p6: Constant<Bits<4>>,
    k_um_t6: Constant<Bits<4>>,
    k_ur_pp: Constant<Bits<8>>,
    k_ur_tp: Constant<Bits<8>>,
    k_ur_p6: Constant<Bits<8>>,
    k_ur_t6: Constant<Bits<8>>,
    /// The end of the UDP destination port, the same way (`k_pm_*`, `k_pr_*`).
    k_pm_pp: Constant<Bits<4>>,
    k_pm_tp: Constant<Bits<4>>,
    k_pm_p6: Constant<Bits<4>>,
    k_pm_t6: Constant<Bits<4>>,
    k_pr_pp: Constant<Bits<8>>,
    k_pr_tp: Constant<Bits<8>>,
    k_pr_p6: Constant<Bits<8>>,
    k_pr_t6: Constant<Bits<8>>,
    /// The shortest IP length with a BTH and an ICRC (IPv4, IPv6), and the IPv4 header length
    /// (what UDP's length leaves of IPv4's).
    k_lena4: Constant<Bits<20>>,
    k_lena6: Constant<Bits<20>>,
    /// Minus the shortest IP length, and minus that and PadCnt 0-3 (20-bit two's complement).
    k_nl4: Constant<Bits<20>>,
    k_nl6: Constant<Bits<20>>,
    k_nlp4_1: Constant<Bits<20>>,
    k_nlp4_2: Constant<Bits<20>>,
    k_nlp4_3: Constant<Bits<20>>,
    k_nlp6_1: Constant<Bits<20>>,
    k_nlp6_2: Constant<Bits<20>>,
    k_nlp6_3: Constant<Bits<20>>,
    k_iph4: Constant<Bits<20>>,
    k_max_beats: Constant<Bits<16>>,
    k_zero20: Constant<Bits<20>>,
    k_one20: Constant<Bits<20>>,
    k_seven20: Constant<Bits<20>>,
    k_eight20: Constant<Bits<20>>,
    k_zero16: Constant<Bits<16>>,
    k_one16: Constant<Bits<16>>,
    k_one32: Constant<Bits<32>>,
    k_zero32: Constant<Bits<32>>,
    k_ff8: Constant<Bits<8>>,
    k_zero2: Constant<Bits<2>>,
    k_zero4: Constant<Bits<4>>,
    k_zero3: Constant<Bits<3>>,
    k_one17: Constant<Bits<17>>,
    k_one4: Constant<Bits<4>>,
    k_fifteen4: Constant<Bits<4>>,
    k_r_accept: Constant<Bits<4>>,
    k_r_oversize: Constant<Bits<4>>,
    k_r_truncated: Constant<Bits<4>>,
    k_r_fragment: Constant<Bits<4>>,
    k_r_checksum: Constant<Bits<4>>,
    k_r_length: Constant<Bits<4>>,
    k_r_tver: Constant<Bits<4>>,
    k_r_opcode: Constant<Bits<4>>,
    k_r_padcnt: Constant<Bits<4>>,
    k_r_icrc: Constant<Bits<4>>,
}

impl RxParser {
    /// A parser with its ICRC checker and FIFOs.
    pub fn new() -> Self {
        let c20 = |v: u64| Constant::new(bits::<20>(v));
        let neg = |v: u64| v.wrapping_neg() & 0xF_FFFF;
        RxParser {
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
            m_axis_tready: Default::default(),
            m_bypass_tdata: Default::default(),
            m_bypass_tkeep: Default::default(),
            m_bypass_tlast: Default::default(),
            m_bypass_tvalid: Default::default(),
            m_bypass_tuser: Default::default(),
            m_bypass_tready: Default::default(),
            m_hdr_data: Default::default(),
            m_hdr_valid: Default::default(),
            m_hdr_ready: Default::default(),
            cnt_frames: Default::default(),
            cnt_accepted: Default::default(),
            cnt_bypass: Default::default(),
            cnt_drop_oversize: Default::default(),
            cnt_drop_truncated: Default::default(),
            cnt_drop_fragment: Default::default(),
            cnt_drop_checksum: Default::default(),
            cnt_drop_length: Default::default(),
            cnt_drop_tver: Default::default(),
            cnt_drop_opcode: Default::default(),
            cnt_drop_padcnt: Default::default(),
            cnt_drop_icrc: Default::default(),
            in_reg: AxisRegister::new(),
            byp_reg: AxisRegister::new(),
            icrc: IcrcEngine::new(Mode::Rx),
            ex: HeaderExtract::default(),
            pay: CommitFifo::default(),
            byp: CommitFifo::default(),
            beat_a: Default::default(),
            beat_b: Default::default(),
            beat_s: Default::default(),
            r1_valid: Default::default(),
            r1_data: Default::default(),
            r1_keep: Default::default(),
            r1_last: Default::default(),
            r1_user: Default::default(),
            r1_beat: Default::default(),
            r1_ue: Default::default(),
            r1_pe: Default::default(),
            r1_trunc: Default::default(),
            r1_long: Default::default(),
            f_short: Default::default(),
            f_ne: Default::default(),
            f_pad: Default::default(),
            f_len_a: Default::default(),
            fl_lt: Default::default(),
            fl_eq: Default::default(),
            fl_gt60: Default::default(),
            ie_m: Default::default(),
            ie_r: Default::default(),
            k_minf_m: Constant::new(bits::<4>(MIN_FRAME / 8)),
            k_minf_r: Constant::new(bits::<3>(MIN_FRAME % 8)),
            fl_lo: Default::default(),
            ue_in: Default::default(),
            ue_ok: Default::default(),
            pe_in: Default::default(),
            pe_ok: Default::default(),
            q_vlan: Default::default(),
            q_ip_end: Default::default(),
            q_room: Default::default(),
            q_roomp: Default::default(),
            q_udp_adj: Default::default(),
            d_ip_len: Default::default(),
            d_nl: Default::default(),
            d_nlp: Default::default(),
            q_op: Default::default(),
            q_ip_ok: Default::default(),
            q_proto_udp: Default::default(),
            port_sel: Default::default(),
            hdr_load: Default::default(),
            q_v6: Default::default(),
            q_ip_len: Default::default(),
            q_frag: Default::default(),
            q_tver: Default::default(),
            q_pad: Default::default(),
            q_known: Default::default(),
            q_has_payload: Default::default(),
            q_ext_len: Default::default(),
            ipe_base: Default::default(),
            pstart_c: Default::default(),
            bth_beat_c: Default::default(),
            lena_c: Default::default(),
            udp_adj: Default::default(),
            plen: Default::default(),
            r2_len: Default::default(),
            r2_nb: Default::default(),
            r2_nbm1: Default::default(),
            r2_elb: Default::default(),
            k_out: Default::default(),
            px: Default::default(),
            len_t: Default::default(),
            len7_t: Default::default(),
            lenm1_t: Default::default(),
            elb_t: Default::default(),
            len_v: Default::default(),
            len7_v: Default::default(),
            lenm1_v: Default::default(),
            elb_v: Default::default(),
            len_neg: Default::default(),
            q_beat: Default::default(),
            k_out_zero: Default::default(),
            in_first: Default::default(),
            p_inc: Default::default(),
            full_in: Default::default(),
            end_in: Default::default(),
            k1: Default::default(),
            tail_last: Default::default(),
            len_lo: Default::default(),
            k_lc_pp: c20(shape::len_base(false, false)),
            k_lc_tp: c20(shape::len_base(true, false)),
            k_lc_p6: c20(shape::len_base(false, true)),
            k_lc_t6: c20(shape::len_base(true, true)),
            k_lc7_pp: c20(shape::len_base(false, false).wrapping_add(7)),
            k_lc7_tp: c20(shape::len_base(true, false).wrapping_add(7)),
            k_lc7_p6: c20(shape::len_base(false, true).wrapping_add(7)),
            k_lc7_t6: c20(shape::len_base(true, true).wrapping_add(7)),
            k_lcm1_pp: c20(shape::len_base(false, false).wrapping_sub(1)),
            k_lcm1_tp: c20(shape::len_base(true, false).wrapping_sub(1)),
            k_lcm1_p6: c20(shape::len_base(false, true).wrapping_sub(1)),
            k_lcm1_t6: c20(shape::len_base(true, true).wrapping_sub(1)),
            k_elbc_pp: c20(shape::ip_base(false, false) - icrc::LEN as u64 - 1),
            k_elbc_tp: c20(shape::ip_base(true, false) - icrc::LEN as u64 - 1),
            k_elbc_p6: c20(shape::ip_base(false, true) - icrc::LEN as u64 - 1),
            k_elbc_t6: c20(shape::ip_base(true, true) - icrc::LEN as u64 - 1),
            r2_valid: Default::default(),
            r2_data: Default::default(),
            r2_keep: Default::default(),
            r2_last: Default::default(),
            r2_mac_bad: Default::default(),
            r2_beat: Default::default(),
            r2_p: Default::default(),
            r2_past_bth: Default::default(),
            r2_in_range: Default::default(),
            r2_acc: Default::default(),
            r2_reason: Default::default(),
            r2_bypass: Default::default(),
            r2_rec: Default::default(),
            prev: Default::default(),
            hdr_valid: Default::default(),
            hdr_data: Default::default(),
            ev_fin: Default::default(),
            ev_bypass: Default::default(),
            ev_commit: Default::default(),
            ev_reason: Default::default(),
            c_frames: Default::default(),
            c_accepted: Default::default(),
            c_bypass: Default::default(),
            c_drop_oversize: Default::default(),
            c_drop_truncated: Default::default(),
            c_drop_fragment: Default::default(),
            c_drop_checksum: Default::default(),
            c_drop_length: Default::default(),
            c_drop_tver: Default::default(),
            c_drop_opcode: Default::default(),
            c_drop_padcnt: Default::default(),
            c_drop_icrc: Default::default(),
            rst: Default::default(),
            adv: Default::default(),
            need_slot: Default::default(),
            ta: Default::default(),
            pstart: Default::default(),
            udp_bad: Default::default(),
            roce: Default::default(),
            oversize: Default::default(),
            trunc: Default::default(),
            len_a: Default::default(),
            len_b: Default::default(),
            pad_bad: Default::default(),
            icrc_bad: Default::default(),
            reason: Default::default(),
            bypass: Default::default(),
            beat2: Default::default(),
            in_range: Default::default(),
            emit: Default::default(),
            cat: Default::default(),
            beat_eq: Default::default(),
            shamt: Default::default(),
            shifted: Default::default(),
            kshift: Default::default(),
            okeep: Default::default(),
            olast: Default::default(),
            fin: Default::default(),
            commit_pay: Default::default(),
            commit_byp: Default::default(),
            tshamt: Default::default(),
            tail_word: Default::default(),
            tkeep_l: Default::default(),
            tail_need: Default::default(),
            tail_pending: Default::default(),
            tail_data: Default::default(),
            tail_keep: Default::default(),
            pend_commit: Default::default(),
            pend_rewind: Default::default(),
            k_ipe_pp: c20(shape::ip_base(false, false)),
            k_ipe_tp: c20(shape::ip_base(true, false)),
            k_ipe_p6: c20(shape::ip_base(false, true)),
            k_ipe_t6: c20(shape::ip_base(true, true)),
            k_pst_pp: c20(shape::payload_base(false, false)),
            k_pst_tp: c20(shape::payload_base(true, false)),
            k_pst_p6: c20(shape::payload_base(false, true)),
            k_pst_t6: c20(shape::payload_base(true, true)),
            k_bb_pp: c20(bth_offset(false, false) as u64 / 8),
            k_bb_tp: c20(bth_offset(true, false) as u64 / 8),
            k_bb_p6: c20(bth_offset(false, true) as u64 / 8),
            k_bb_t6: c20(bth_offset(true, true) as u64 / 8),
            k_um_pp: Constant::new(bits::<4>(shape::udp_end_split(false, false).0)),
            k_um_tp: Constant::new(bits::<4>(shape::udp_end_split(true, false).0)),
            k_um_p6: Constant::new(bits::<4>(shape::udp_end_split(false, true).0)),
            k_um_t6: Constant::new(bits::<4>(shape::udp_end_split(true, true).0)),
            k_ur_pp: Constant::new(bits::<8>(shape::udp_end_split(false, false).1)),
            k_ur_tp: Constant::new(bits::<8>(shape::udp_end_split(true, false).1)),
            k_ur_p6: Constant::new(bits::<8>(shape::udp_end_split(false, true).1)),
            k_ur_t6: Constant::new(bits::<8>(shape::udp_end_split(true, true).1)),
            k_pm_pp: Constant::new(bits::<4>(shape::port_end_split(false, false).0)),
            k_pm_tp: Constant::new(bits::<4>(shape::port_end_split(true, false).0)),
            k_pm_p6: Constant::new(bits::<4>(shape::port_end_split(false, true).0)),
            k_pm_t6: Constant::new(bits::<4>(shape::port_end_split(true, true).0)),
            k_pr_pp: Constant::new(bits::<8>(shape::port_end_split(false, false).1)),
            k_pr_tp: Constant::new(bits::<8>(shape::port_end_split(true, false).1)),
            k_pr_p6: Constant::new(bits::<8>(shape::port_end_split(false, true).1)),
            k_pr_t6: Constant::new(bits::<8>(shape::port_end_split(true, true).1)),
            k_lena4: c20(shape::min_ip_len(false)),
            k_lena6: c20(shape::min_ip_len(true)),
            k_nl4: c20(neg(shape::min_ip_len(false))),
            k_nl6: c20(neg(shape::min_ip_len(true))),
            k_nlp4_1: c20(neg(shape::min_ip_len(false) + 1)),
            k_nlp4_2: c20(neg(shape::min_ip_len(false) + 2)),
            k_nlp4_3: c20(neg(shape::min_ip_len(false) + 3)),
            k_nlp6_1: c20(neg(shape::min_ip_len(true) + 1)),
            k_nlp6_2: c20(neg(shape::min_ip_len(true) + 2)),
            k_nlp6_3: c20(neg(shape::min_ip_len(true) + 3)),
            k_iph4: c20(ip_header_len(false) as u64),
            k_max_beats: Constant::new(bits::<16>(MAX_BEATS)),
            k_zero20: c20(0),
            k_one20: c20(1),
            k_seven20: c20(7),
            k_eight20: c20(8),
            k_zero16: Constant::new(bits::<16>(0)),
            k_one16: Constant::new(bits::<16>(1)),
            k_one32: Constant::new(bits::<32>(1)),
            k_zero32: Constant::new(bits::<32>(0)),
            k_ff8: Constant::new(bits::<8>(0xFF)),
            k_zero2: Constant::new(bits::<2>(0)),
            k_zero4: Constant::new(bits::<4>(0)),
            k_zero3: Constant::new(bits::<3>(0)),
            k_one17: Constant::new(bits::<17>(1)),
            k_one4: Constant::new(bits::<4>(1)),
            k_fifteen4: Constant::new(bits::<4>(15)),
            k_r_accept: Constant::new(bits::<4>(Reason::Accept as u64)),
            k_r_oversize: Constant::new(bits::<4>(Reason::Oversize as u64)),
            k_r_truncated: Constant::new(bits::<4>(Reason::Truncated as u64)),
            k_r_fragment: Constant::new(bits::<4>(Reason::Fragment as u64)),
            k_r_checksum: Constant::new(bits::<4>(Reason::Checksum as u64)),
            k_r_length: Constant::new(bits::<4>(Reason::Length as u64)),
            k_r_tver: Constant::new(bits::<4>(Reason::Tver as u64)),
            k_r_opcode: Constant::new(bits::<4>(Reason::Opcode as u64)),
            k_r_padcnt: Constant::new(bits::<4>(Reason::Padcnt as u64)),
            k_r_icrc: Constant::new(bits::<4>(Reason::Icrc as u64)),
        }
    }
}

impl Default for RxParser {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for RxParser {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            tail_pending,
            tail_data,
            tail_keep,
            pend_commit,
            pend_rewind,
            beat_a,
            beat_b,
            beat_s,
            r1_valid,
            r1_data,
            r1_keep,
            r1_last,
            r1_user,
            r1_beat,
            r1_ue,
            r1_pe,
            r1_trunc,
            r1_long,
            f_short,
            f_ne,
            f_pad,
            f_len_a,
            q_vlan,
            q_ip_end,
            q_room,
            q_roomp,
            q_udp_adj,
            q_op,
            q_ip_ok,
            q_proto_udp,
            q_v6,
            q_ip_len,
            q_frag,
            q_tver,
            q_pad,
            q_known,
            q_has_payload,
            q_ext_len,
            r2_valid,
            r2_data,
            r2_keep,
            r2_last,
            r2_mac_bad,
            r2_beat,
            r2_p,
            r2_len,
            r2_nb,
            r2_nbm1,
            r2_elb,
            r2_past_bth,
            r2_in_range,
            r2_acc,
            r2_reason,
            r2_bypass,
            r2_rec,
            prev,
            k_out,
            k1,
            q_beat,
            hdr_valid,
            hdr_data,
            ev_fin,
            ev_bypass,
            ev_commit,
            ev_reason,
            c_frames,
            c_accepted,
            c_bypass,
            c_drop_oversize,
            c_drop_truncated,
            c_drop_fragment,
            c_drop_checksum,
            c_drop_length,
            c_drop_tver,
            c_drop_opcode,
            c_drop_padcnt,
            c_drop_icrc,
            rst
        );
        self.rst.d.next = self.reset.val();
        self.in_reg.clock.next = self.clock.val();
        self.byp_reg.clock.next = self.clock.val();
        self.icrc.clock.next = self.clock.val();
        self.ex.clock.next = self.clock.val();
        self.pay.clock.next = self.clock.val();
        self.byp.clock.next = self.clock.val();
        self.in_reg.reset.next = self.rst.q.val();
        self.byp_reg.reset.next = self.rst.q.val();
        self.icrc.reset.next = self.rst.q.val();
        self.pay.reset.next = self.rst.q.val();
        self.byp.reset.next = self.rst.q.val();

        // ---- Flow control: everything moves when both FIFOs have room, unless an accepted
        // frame ends while the previous header still waits on the header channel.
        self.need_slot.next = self.r2_valid.q.val() & self.r2_last.q.val() & self.r2_acc.q.val();
        // Not gated by `reset`: every register it moves is reset, and the ICRC engine in front
        // refuses input in reset.
        self.adv.next = self.pay.room.val()
            & self.byp.room.val()
            & (!self.need_slot.val() | !self.hdr_valid.q.val() | self.m_hdr_ready.val());
        self.in_reg.s_axis_tdata.next = self.s_axis_tdata.val();
        self.in_reg.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.in_reg.s_axis_tlast.next = self.s_axis_tlast.val();
        self.in_reg.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.in_reg.s_axis_tuser.next = self.s_axis_tuser.val();
        self.s_axis_tready.next = self.in_reg.s_axis_tready.val();
        self.icrc.s_axis_tdata.next = self.in_reg.m_axis_tdata.val();
        self.icrc.s_axis_tkeep.next = self.in_reg.m_axis_tkeep.val();
        self.icrc.s_axis_tlast.next = self.in_reg.m_axis_tlast.val();
        self.icrc.s_axis_tvalid.next = self.in_reg.m_axis_tvalid.val();
        self.icrc.s_axis_tuser.next = self.in_reg.m_axis_tuser.val();
        self.in_reg.m_axis_tready.next = self.icrc.s_axis_tready.val();
        self.icrc.m_axis_tready.next = self.adv.val();
        self.ta.next = self.adv.val() & self.icrc.m_axis_tvalid.val();

        // ---- Stage 0: beat counter and capture.
        self.ex.we.next = self.ta.val();
        self.ex.beat.next = self.beat_a.q.val();
        self.ex.data.next = self.icrc.m_axis_tdata.val();
        self.beat_a.d.next = self.beat_a.q.val();
        self.beat_b.d.next = self.beat_b.q.val();
        self.beat_s.d.next = self.beat_s.q.val();
        if self.ta.val() {
            self.beat_a.d.next = self.beat_a.q.val() + self.k_one16.val();
            self.beat_b.d.next = self.beat_b.q.val() + self.k_one17.val();
            if self.beat_a.q.val().all() {
                self.beat_a.d.next = self.beat_a.q.val();
                self.beat_b.d.next = self.beat_b.q.val();
            }
            if self.beat_s.q.val() != self.k_fifteen4.val() {
                self.beat_s.d.next = self.beat_s.q.val() + self.k_one4.val();
            }
            if self.icrc.m_axis_tlast.val() {
                self.beat_a.d.next = self.k_zero16.val();
                self.beat_b.d.next = self.k_one17.val();
                self.beat_s.d.next = self.k_zero4.val();
            }
        }
        self.r1_valid.d.next = self.r1_valid.q.val();
        self.r1_data.d.next = self.r1_data.q.val();
        self.r1_keep.d.next = self.r1_keep.q.val();
        self.r1_last.d.next = self.r1_last.q.val();
        self.r1_user.d.next = self.r1_user.q.val();
        self.r1_beat.d.next = self.r1_beat.q.val();
        // The frame's length up to and including this beat (meaningful on the last beat), with
        // no adder: `tkeep` is contiguous from bit 0, so a full beat ends at 8 `beat_b` and a
        // partial one at 8 `beat_a` + `fl_lo`, its byte count.
        self.fl_lo.next = self
            .k_zero3
            .val()
            .replace_bit(
                0,
                (self.icrc.m_axis_tkeep.val().get_bit(0)
                    & !self.icrc.m_axis_tkeep.val().get_bit(1))
                    | (self.icrc.m_axis_tkeep.val().get_bit(2)
                        & !self.icrc.m_axis_tkeep.val().get_bit(3))
                    | (self.icrc.m_axis_tkeep.val().get_bit(4)
                        & !self.icrc.m_axis_tkeep.val().get_bit(5))
                    | (self.icrc.m_axis_tkeep.val().get_bit(6)
                        & !self.icrc.m_axis_tkeep.val().get_bit(7)),
            )
            .replace_bit(
                1,
                (self.icrc.m_axis_tkeep.val().get_bit(1)
                    & !self.icrc.m_axis_tkeep.val().get_bit(3))
                    | (self.icrc.m_axis_tkeep.val().get_bit(5)
                        & !self.icrc.m_axis_tkeep.val().get_bit(7)),
            )
            .replace_bit(
                2,
                self.icrc.m_axis_tkeep.val().get_bit(3) & !self.icrc.m_axis_tkeep.val().get_bit(7),
            );
        // Against the IP end `8 m + r` (registered): the beat counters are compared with `m`
        // (registers only), the byte count of the beat with `r`, and `tkeep` picks.
        self.ie_m.next = bit_cast::<17, 20>(self.q_ip_end.q.val() >> 3);
        self.ie_r.next = self.q_ip_end.q.val().get_bits::<3>(0);
        self.fl_lt.next = (bit_cast::<17, 16>(self.beat_a.q.val()) < self.ie_m.val())
            | ((bit_cast::<17, 16>(self.beat_a.q.val()) == self.ie_m.val())
                & (self.fl_lo.val() < self.ie_r.val()));
        self.fl_eq.next = (bit_cast::<17, 16>(self.beat_a.q.val()) == self.ie_m.val())
            & (self.fl_lo.val() == self.ie_r.val());
        // Past the Ethernet minimum (60 bytes, `8 m + r` with `m < 15` for the saturated count).
        self.fl_gt60.next = (self.beat_s.q.val() > self.k_minf_m.val())
            | ((self.beat_s.q.val() == self.k_minf_m.val())
                & (self.fl_lo.val() > self.k_minf_r.val()));
        if self.icrc.m_axis_tkeep.val().get_bit(7) {
            self.fl_lt.next = (self.beat_b.q.val() < self.ie_m.val())
                | ((self.beat_b.q.val() == self.ie_m.val())
                    & (self.ie_r.val() != self.k_zero3.val()));
            self.fl_eq.next =
                (self.beat_b.q.val() == self.ie_m.val()) & (self.ie_r.val() == self.k_zero3.val());
            self.fl_gt60.next = self.beat_s.q.val() >= self.k_minf_m.val();
        }
        // The frame reaches the end of the UDP header (8 m + r, 1 <= r <= 7) when it is past beat
        // m, or ends in beat m with byte r - 1 kept. Bits as `header_extract::shape_index`:
        // plain IPv4, plain IPv6, tag IPv4, tag IPv6.
        self.ue_in.next = self
            .k_zero4
            .val()
            .replace_bit(
                0,
                (self.beat_s.q.val() > self.k_um_pp.val())
                    | ((self.beat_s.q.val() == self.k_um_pp.val())
                        & (self.icrc.m_axis_tkeep.val() & self.k_ur_pp.val()).any()),
            )
            .replace_bit(
                1,
                (self.beat_s.q.val() > self.k_um_p6.val())
                    | ((self.beat_s.q.val() == self.k_um_p6.val())
                        & (self.icrc.m_axis_tkeep.val() & self.k_ur_p6.val()).any()),
            )
            .replace_bit(
                2,
                (self.beat_s.q.val() > self.k_um_tp.val())
                    | ((self.beat_s.q.val() == self.k_um_tp.val())
                        & (self.icrc.m_axis_tkeep.val() & self.k_ur_tp.val()).any()),
            )
            .replace_bit(
                3,
                (self.beat_s.q.val() > self.k_um_t6.val())
                    | ((self.beat_s.q.val() == self.k_um_t6.val())
                        & (self.icrc.m_axis_tkeep.val() & self.k_ur_t6.val()).any()),
            );
        // The same for the end of the destination port.
        self.pe_in.next = self
            .k_zero4
            .val()
            .replace_bit(
                0,
                (self.beat_s.q.val() > self.k_pm_pp.val())
                    | ((self.beat_s.q.val() == self.k_pm_pp.val())
                        & (self.icrc.m_axis_tkeep.val() & self.k_pr_pp.val()).any()),
            )
            .replace_bit(
                1,
                (self.beat_s.q.val() > self.k_pm_p6.val())
                    | ((self.beat_s.q.val() == self.k_pm_p6.val())
                        & (self.icrc.m_axis_tkeep.val() & self.k_pr_p6.val()).any()),
            )
            .replace_bit(
                2,
                (self.beat_s.q.val() > self.k_pm_tp.val())
                    | ((self.beat_s.q.val() == self.k_pm_tp.val())
                        & (self.icrc.m_axis_tkeep.val() & self.k_pr_tp.val()).any()),
            )
            .replace_bit(
                3,
                (self.beat_s.q.val() > self.k_pm_t6.val())
                    | ((self.beat_s.q.val() == self.k_pm_t6.val())
                        & (self.icrc.m_axis_tkeep.val() & self.k_pr_t6.val()).any()),
            );
        self.r1_ue.d.next = self.r1_ue.q.val();
        self.r1_pe.d.next = self.r1_pe.q.val();
        self.r1_trunc.d.next = self.r1_trunc.q.val();
        self.r1_long.d.next = self.r1_long.q.val();
        if self.adv.val() {
            self.r1_trunc.d.next = self.fl_lt.val();
            self.r1_long.d.next = !self.fl_lt.val() & !self.fl_eq.val() & self.fl_gt60.val();
            self.r1_ue.d.next = self.ue_in.val();
            self.r1_pe.d.next = self.pe_in.val();
            self.r1_valid.d.next = self.icrc.m_axis_tvalid.val();
            self.r1_data.d.next = self.icrc.m_axis_tdata.val();
            self.r1_keep.d.next = self.icrc.m_axis_tkeep.val();
            self.r1_last.d.next = self.icrc.m_axis_tlast.val();
            self.r1_user.d.next = self.icrc.m_axis_tuser.val();
            self.r1_beat.d.next = self.beat_a.q.val();
        }

        // ---- Stage 1: offsets, lengths and the verdict (meaningful on the last beat).
        // The extractor's decoded fields are registered (`q_*`: the capture as it was before
        // this beat) so that no adder sits behind the decode. That is enough: a field read late
        // only matters when the frame reaches past it by more than a beat. The BTH's first two
        // bytes (opcode, TVer, PadCnt) are needed from the beat after the BTH's beat on (the
        // payload start), and for a verdict only when the IP length covers the BTH and the ICRC,
        // so the frame ends at least 16 bytes after the BTH starts; the IP and UDP lengths and
        // flags lie in beats 2-7 and matter only then too (or, for the truncation check, once
        // the frame reaches the end of its UDP header, beat 5 or later); so do the EtherType, IP
        // version and protocol of the RoCEv2 test (beats 1-3). Only the UDP port, which can lie
        // in the frame's last beat, is taken from the capture as it is (at the registered
        // shape's offset), and the checksum is registered inside the extractor.
        self.q_vlan.d.next = self.ex.vlan.val();
        self.q_op.d.next = self.ex.opcode.val();
        self.ex.sel_vlan.next = self.q_vlan.q.val();
        self.ex.sel_v6.next = self.q_v6.q.val();
        self.ex.sel_op.next = self.q_op.q.val();
        self.q_ip_ok.d.next = self.ex.ip_ok.val();
        self.q_proto_udp.d.next = self.ex.proto_udp.val();
        self.q_v6.d.next = self.ex.v6.val();
        self.q_ip_len.d.next = bit_cast::<20, 16>(self.ex.ip_len.val());
        self.q_frag.d.next = self.ex.frag.val();
        self.q_tver.d.next = self.ex.tver.val();
        self.q_pad.d.next = bit_cast::<20, 2>(self.ex.pad_cnt.val());
        self.q_known.d.next = self.ex.known.val();
        self.q_has_payload.d.next = self.ex.has_payload.val();
        self.q_ext_len.d.next = bit_cast::<20, 8>(self.ex.ext_len.val());
        // Shape constants.
        self.ipe_base.next = self.k_ipe_pp.val();
        self.pstart_c.next = self.k_pst_pp.val();
        self.bth_beat_c.next = self.k_bb_pp.val();
        if self.q_vlan.q.val() & !self.q_v6.q.val() {
            self.ipe_base.next = self.k_ipe_tp.val();
            self.pstart_c.next = self.k_pst_tp.val();
            self.bth_beat_c.next = self.k_bb_tp.val();
        }
        if !self.q_vlan.q.val() & self.q_v6.q.val() {
            self.ipe_base.next = self.k_ipe_p6.val();
            self.pstart_c.next = self.k_pst_p6.val();
            self.bth_beat_c.next = self.k_bb_p6.val();
        }
        if self.q_vlan.q.val() & self.q_v6.q.val() {
            self.ipe_base.next = self.k_ipe_t6.val();
            self.pstart_c.next = self.k_pst_t6.val();
            self.bth_beat_c.next = self.k_bb_t6.val();
        }
        self.lena_c.next = self.k_lena4.val();
        self.udp_adj.next = bit_cast::<20, 16>(self.ex.udp_len.val()) + self.k_iph4.val();
        if self.q_v6.q.val() {
            self.lena_c.next = self.k_lena6.val();
            self.udp_adj.next = bit_cast::<20, 16>(self.ex.udp_len.val());
        }
        // Registered with the fields (the shape constants are those of the fields' shape): the
        // IP packet's end and the UDP length as the IP length must equal it.
        self.d_ip_len.next = bit_cast::<20, 16>(self.ex.ip_len.val());
        self.q_ip_end.d.next = self.ipe_base.val() + self.d_ip_len.val();
        // The room left for the extension headers (and the payload): the IP length less a
        // constant chosen by version (and PadCnt), so the extension length, which comes last
        // (after the opcode's decode), is compared in stage 1 rather than added here.
        self.d_nl.next = self.k_nl4.val();
        self.d_nlp.next = self.k_nl4.val();
        if self.ex.pad_cnt.val() == 1 {
            self.d_nlp.next = self.k_nlp4_1.val();
        }
        if self.ex.pad_cnt.val() == 2 {
            self.d_nlp.next = self.k_nlp4_2.val();
        }
        if self.ex.pad_cnt.val() == 3 {
            self.d_nlp.next = self.k_nlp4_3.val();
        }
        if self.q_v6.q.val() {
            self.d_nl.next = self.k_nl6.val();
            self.d_nlp.next = self.k_nl6.val();
            if self.ex.pad_cnt.val() == 1 {
                self.d_nlp.next = self.k_nlp6_1.val();
            }
            if self.ex.pad_cnt.val() == 2 {
                self.d_nlp.next = self.k_nlp6_2.val();
            }
            if self.ex.pad_cnt.val() == 3 {
                self.d_nlp.next = self.k_nlp6_3.val();
            }
        }
        self.q_room.d.next = self.d_ip_len.val() + self.d_nl.val();
        self.q_roomp.d.next = self.d_ip_len.val() + self.d_nlp.val();
        self.q_udp_adj.d.next = self.udp_adj.val();
        // ---- Checks one clock ahead. Each comparison of the verdict is registered as a flag:
        // the frame's length against the IP end on the beat's way into stage 1 (the IP end is
        // known from beat 4 on, a RoCEv2 frame ends in beat 5 or later), and the registered
        // lengths against each other a clock after they are (the extension length, the latest,
        // follows the opcode by two clocks; a frame ends at least two beats after its opcode).
        self.f_short.d.next = self.q_room.q.val() < self.q_ext_len.q.val();
        self.f_ne.d.next = self.q_room.q.val() != self.q_ext_len.q.val();
        self.f_pad.d.next =
            self.q_roomp.q.val().get_bit(19) | (self.q_ext_len.q.val() > self.q_roomp.q.val());
        self.udp_bad.next = self.q_udp_adj.q.val() != self.q_ip_len.q.val();
        self.f_len_a.d.next = self.udp_bad.val() | (self.q_ip_len.q.val() < self.lena_c.val());
        // Every comparison is between registers: no adder in front of it.
        self.pstart.next = self.pstart_c.val() + self.q_ext_len.q.val();
        // The payload length (IP length less headers, extension headers, pad and ICRC), plus 7
        // and less 1, and the beat that holds the payload's last byte: two adders each.
        self.px.next = self.q_pad.q.val() + self.q_ext_len.q.val();
        self.len_t.next = self.k_lc_pp.val();
        self.len7_t.next = self.k_lc7_pp.val();
        self.lenm1_t.next = self.k_lcm1_pp.val();
        self.elb_t.next = self.k_elbc_pp.val();
        if self.q_vlan.q.val() & !self.q_v6.q.val() {
            self.len_t.next = self.k_lc_tp.val();
            self.len7_t.next = self.k_lc7_tp.val();
            self.lenm1_t.next = self.k_lcm1_tp.val();
            self.elb_t.next = self.k_elbc_tp.val();
        }
        if !self.q_vlan.q.val() & self.q_v6.q.val() {
            self.len_t.next = self.k_lc_p6.val();
            self.len7_t.next = self.k_lc7_p6.val();
            self.lenm1_t.next = self.k_lcm1_p6.val();
            self.elb_t.next = self.k_elbc_p6.val();
        }
        if self.q_vlan.q.val() & self.q_v6.q.val() {
            self.len_t.next = self.k_lc_t6.val();
            self.len7_t.next = self.k_lc7_t6.val();
            self.lenm1_t.next = self.k_lcm1_t6.val();
            self.elb_t.next = self.k_elbc_t6.val();
        }
        self.len_v.next = (self.len_t.val() + self.q_ip_len.q.val()) - self.px.val();
        self.len7_v.next = (self.len7_t.val() + self.q_ip_len.q.val()) - self.px.val();
        self.lenm1_v.next = (self.lenm1_t.val() + self.q_ip_len.q.val()) - self.px.val();
        self.elb_v.next = (self.elb_t.val() + self.q_ip_len.q.val()) - self.q_pad.q.val();
        self.len_neg.next = self.len_v.val().get_bit(19);
        // The port as captured (it can lie in this beat), at the offset of the shape known from
        // the earlier beats.
        self.port_sel.next = self.ex.port_hits.val().get_bit(0);
        if self.q_vlan.q.val() & !self.q_v6.q.val() {
            self.port_sel.next = self.ex.port_hits.val().get_bit(2);
        }
        if !self.q_vlan.q.val() & self.q_v6.q.val() {
            self.port_sel.next = self.ex.port_hits.val().get_bit(1);
        }
        if self.q_vlan.q.val() & self.q_v6.q.val() {
            self.port_sel.next = self.ex.port_hits.val().get_bit(3);
        }
        self.ue_ok.next = self.r1_ue.q.val().get_bit(0);
        self.pe_ok.next = self.r1_pe.q.val().get_bit(0);
        if self.q_vlan.q.val() & !self.q_v6.q.val() {
            self.ue_ok.next = self.r1_ue.q.val().get_bit(2);
            self.pe_ok.next = self.r1_pe.q.val().get_bit(2);
        }
        if !self.q_vlan.q.val() & self.q_v6.q.val() {
            self.ue_ok.next = self.r1_ue.q.val().get_bit(1);
            self.pe_ok.next = self.r1_pe.q.val().get_bit(1);
        }
        if self.q_vlan.q.val() & self.q_v6.q.val() {
            self.ue_ok.next = self.r1_ue.q.val().get_bit(3);
            self.pe_ok.next = self.r1_pe.q.val().get_bit(3);
        }
        // RoCEv2 once the destination port is in the frame (as the wire model decides); a frame
        // that ends inside the rest of the UDP header is a truncated RoCEv2 frame.
        self.roce.next = self.q_ip_ok.q.val()
            & self.q_proto_udp.q.val()
            & self.port_sel.val()
            & self.pe_ok.val();
        self.oversize.next = self.r1_beat.q.val() >= self.k_max_beats.val();
        // The comparisons are registered flags (see "Checks one clock ahead" above), so the
        // verdict's priority sits behind registers alone.
        self.trunc.next = self.r1_trunc.q.val() | !self.ue_ok.val();
        self.len_a.next = self.f_len_a.q.val();
        // The IP length against the headers' (`room` less the extension length); a negative
        // room is a length error of `len_a` too, which outranks these.
        self.len_b.next = self.q_room.q.val().get_bit(19)
            | self.f_short.q.val()
            | (self.q_ip_len.q.val().get_bits::<2>(0) != self.k_zero2.val())
            | (!self.q_has_payload.q.val() & self.f_ne.q.val())
            | self.r1_long.q.val();
        // PadCnt larger than the payload (ICRC offset less payload start); a negative payload is
        // a length error above, which outranks this.
        self.pad_bad.next = self.f_pad.q.val();
        self.icrc_bad.next = self.r1_user.q.val().get_bit(0) | !self.r1_user.q.val().get_bit(1);
        self.reason.next = self.k_r_accept.val();
        if self.icrc_bad.val() {
            self.reason.next = self.k_r_icrc.val();
        }
        if self.pad_bad.val() {
            self.reason.next = self.k_r_padcnt.val();
        }
        if self.len_b.val() {
            self.reason.next = self.k_r_length.val();
        }
        if !self.q_known.q.val() {
            self.reason.next = self.k_r_opcode.val();
        }
        if self.q_tver.q.val() != self.k_zero4.val() {
            self.reason.next = self.k_r_tver.val();
        }
        if self.len_a.val() {
            self.reason.next = self.k_r_length.val();
        }
        if !self.ex.csum_ok.val() {
            self.reason.next = self.k_r_checksum.val();
        }
        if self.q_frag.q.val() {
            self.reason.next = self.k_r_fragment.val();
        }
        if self.trunc.val() {
            self.reason.next = self.k_r_truncated.val();
        }
        self.bypass.next = !self.roce.val() & !self.oversize.val();
        if !self.roce.val() {
            self.reason.next = self.k_r_accept.val();
        }
        if self.oversize.val() {
            self.reason.next = self.k_r_oversize.val();
        }

        self.r2_valid.d.next = self.r2_valid.q.val();
        self.r2_data.d.next = self.r2_data.q.val();
        self.r2_keep.d.next = self.r2_keep.q.val();
        self.r2_last.d.next = self.r2_last.q.val();
        self.r2_mac_bad.d.next = self.r2_mac_bad.q.val();
        self.r2_beat.d.next = self.r2_beat.q.val();
        self.r2_p.d.next = self.r2_p.q.val();
        self.r2_len.d.next = self.r2_len.q.val();
        self.r2_nb.d.next = self.r2_nb.q.val();
        self.r2_nbm1.d.next = self.r2_nbm1.q.val();
        self.r2_elb.d.next = self.r2_elb.q.val();
        self.r2_past_bth.d.next = self.r2_past_bth.q.val();
        self.r2_in_range.d.next = self.r2_in_range.q.val();
        self.r2_acc.d.next = self.r2_acc.q.val();
        self.r2_reason.d.next = self.r2_reason.q.val();
        self.r2_bypass.d.next = self.r2_bypass.q.val();
        // The header word follows the extractor on every clock but those that hold a last beat
        // in stage 2 (where the header slot takes it): it matters only there, and was taken on
        // the clock that beat moved in. So its HDR_BITS-wide enable reads two registers, not `adv`.
        self.r2_rec.d.next = self.ex.rec.val();
        if self.r2_valid.q.val() & self.r2_last.q.val() {
            self.r2_rec.d.next = self.r2_rec.q.val();
        }
        if self.adv.val() {
            self.r2_valid.d.next = self.r1_valid.q.val();
            self.r2_data.d.next = self.r1_data.q.val();
            self.r2_keep.d.next = self.r1_keep.q.val();
            self.r2_last.d.next = self.r1_last.q.val();
            self.r2_mac_bad.d.next = self.r1_user.q.val().get_bit(0);
            self.r2_beat.d.next = self.r1_beat.q.val();
            self.r2_p.d.next = self.pstart.val();
            // Payload beats out: none for a negative payload (a length error).
            self.r2_len.d.next = self.len_v.val();
            self.r2_nb.d.next = self.len7_v.val() >> 3;
            if self.len_neg.val() {
                self.r2_nb.d.next = self.k_zero20.val();
            }
            self.r2_nbm1.d.next = self.lenm1_v.val() >> 3;
            self.r2_elb.d.next = self.elb_v.val() >> 3;
            // Stage 2's beat tests, made here on the beat they will hold.
            self.r2_past_bth.d.next =
                bit_cast::<20, 16>(self.r1_beat.q.val()) > self.bth_beat_c.val();
            self.r2_in_range.d.next = self.r1_beat.q.val() < self.k_max_beats.val();
            self.r2_acc.d.next = (self.reason.val() == self.k_r_accept.val()) & !self.bypass.val();
            self.r2_reason.d.next = self.reason.val();
            self.r2_bypass.d.next = self.bypass.val();
        }

        // ---- Stage 2: realign the payload, write the FIFOs, commit or rewind.
        // Output beat `k_out` covers payload bytes 8k..8k+7, frame bytes pstart+8k onwards: it
        // starts in input beat `q_beat` and is complete when the input reaches its last byte or
        // the payload's last byte (`r2_elb`). All but `q_beat` are constants of the frame.
        self.beat2.next = bit_cast::<20, 16>(self.r2_beat.q.val());
        self.p_inc.next = self.r2_p.q.val().get_bits::<3>(0) != self.k_zero3.val();
        self.beat_eq.next = self.q_beat.q.val() == self.beat2.val();
        self.full_in.next =
            (self.q_beat.q.val() < self.beat2.val()) | (!self.p_inc.val() & self.beat_eq.val());
        self.end_in.next = self.r2_elb.q.val() <= self.beat2.val();
        self.in_range.next = self.r2_in_range.q.val();
        self.emit.next = self.r2_valid.q.val()
            & self.r2_past_bth.q.val()
            & (self.k_out.q.val() < self.r2_nb.q.val())
            & (self.full_in.val() | self.end_in.val())
            & self.in_range.val();
        // Shifted both ways before the select, so the compare and the shifter run side by side:
        // a beat that starts in this input beat is this beat shifted (`tail_word`), else it
        // spans the previous one and this.
        self.cat.next = (bit_cast::<128, 64>(self.r2_data.q.val()) << 64)
            | bit_cast::<128, 64>(self.prev.q.val());
        self.shamt.next = bit_cast::<7, 3>(self.r2_p.q.val().get_bits::<3>(0)) << 3;
        self.shifted.next = self.cat.val() >> self.shamt.val();
        self.len_lo.next = self.r2_len.q.val().get_bits::<3>(0);
        self.kshift.next = self.k_ff8.val() << self.len_lo.val();
        self.olast.next = self.k_out.q.val() == self.r2_nbm1.q.val();
        self.okeep.next = self.k_ff8.val();
        if self.olast.val() & (self.len_lo.val() != self.k_zero3.val()) {
            self.okeep.next = !self.kshift.val();
        }
        self.fin.next = self.adv.val() & self.r2_valid.q.val() & self.r2_last.q.val();
        self.commit_pay.next = self.fin.val() & self.r2_acc.q.val();
        self.commit_byp.next = self.fin.val() & self.r2_bypass.q.val();

        // The tail: when the last payload beat needs bytes of the frame's last input beat that
        // also completed the beat before it, it is written one clock later (the next frame's
        // first beats never write payload), and the commit or rewind waits for it.
        self.tail_last.next = self.k_out.q.val() == self.r2_nbm1.q.val();
        if self.emit.val() {
            self.tail_last.next = self.k1.q.val() == self.r2_nbm1.q.val();
        }
        self.tshamt.next = bit_cast::<6, 3>(self.r2_p.q.val().get_bits::<3>(0)) << 3;
        self.tail_word.next = self.r2_data.q.val() >> self.tshamt.val();
        self.tkeep_l.next = self.k_ff8.val();
        if self.tail_last.val() & (self.len_lo.val() != self.k_zero3.val()) {
            self.tkeep_l.next = !self.kshift.val();
        }
        self.tail_need.next = self.fin.val()
            & (((self.k_out.q.val() < self.r2_nb.q.val()) & !self.emit.val())
                | (self.k1.q.val() < self.r2_nb.q.val()))
            & self.r2_past_bth.q.val()
            & self.in_range.val();
        self.pay.wr_en.next = self.adv.val() & (self.emit.val() | self.tail_pending.q.val());
        self.pay.wr_data.next = self.shifted.val().get_bits::<64>(0);
        if self.beat_eq.val() {
            self.pay.wr_data.next = self.tail_word.val();
        }
        self.pay.wr_keep.next = self.okeep.val();
        self.pay.wr_last.next = self.olast.val();
        if self.tail_pending.q.val() {
            self.pay.wr_data.next = self.tail_data.q.val();
            self.pay.wr_keep.next = self.tail_keep.q.val();
            self.pay.wr_last.next = true;
        }
        self.pay.wr_user.next = false;
        self.pay.commit.next = self.adv.val() & self.pend_commit.q.val();
        self.pay.rewind.next = self.adv.val() & self.pend_rewind.q.val();
        self.tail_pending.d.next = self.tail_pending.q.val();
        self.tail_data.d.next = self.tail_data.q.val();
        self.tail_keep.d.next = self.tail_keep.q.val();
        self.pend_commit.d.next = self.pend_commit.q.val();
        self.pend_rewind.d.next = self.pend_rewind.q.val();
        if self.adv.val() {
            self.tail_pending.d.next = self.tail_need.val();
            self.tail_data.d.next = self.tail_word.val();
            self.tail_keep.d.next = self.tkeep_l.val();
            self.pend_commit.d.next = self.commit_pay.val();
            self.pend_rewind.d.next = self.fin.val() & !self.commit_pay.val();
        }
        self.byp.wr_en.next = self.adv.val() & self.r2_valid.q.val() & self.in_range.val();
        self.byp.wr_data.next = self.r2_data.q.val();
        self.byp.wr_keep.next = self.r2_keep.q.val();
        self.byp.wr_last.next = self.r2_last.q.val();
        self.byp.wr_user.next = self.r2_mac_bad.q.val() & self.r2_last.q.val();
        self.byp.commit.next = self.commit_byp.val();
        self.byp.rewind.next = self.fin.val() & !self.commit_byp.val();

        self.prev.d.next = self.prev.q.val();
        self.k_out.d.next = self.k_out.q.val();
        self.q_beat.d.next = self.q_beat.q.val();
        // `q_beat` follows `(r2_p >> 3) + k_out`: it takes the next payload start while no
        // output beat has left (the start is constant from the payload's first beat on), and
        // counts with `k_out` after.
        self.k_out_zero.next = self.k_out.q.val() == self.k_zero20.val();
        self.in_first.next = self.k_out_zero.val() & !(self.r2_valid.q.val() & self.emit.val());
        if self.adv.val() & self.in_first.val() {
            self.q_beat.d.next = self.pstart.val() >> 3;
        }
        if self.adv.val() & self.r2_valid.q.val() {
            self.prev.d.next = self.r2_data.q.val();
            if self.emit.val() {
                self.k_out.d.next = self.k1.q.val();
                self.k1.d.next = self.k1.q.val() + self.k_one20.val();
                self.q_beat.d.next = self.q_beat.q.val() + self.k_one20.val();
            }
            if self.r2_last.q.val() {
                self.k_out.d.next = self.k_zero20.val();
                self.k1.d.next = self.k_one20.val();
                self.q_beat.d.next = self.pstart.val() >> 3;
            }
        }

        // ---- Header channel.
        self.plen.next = self.r2_len.q.val();
        self.hdr_valid.d.next = self.hdr_valid.q.val();
        self.hdr_data.d.next = self.hdr_data.q.val();
        if self.m_hdr_ready.val() {
            self.hdr_valid.d.next = false;
        }
        // The word is loaded on every last beat that finds the slot free (or being freed), whether
        // or not the frame is committed: only `hdr_valid` waits on the verdict, so the wide load
        // enable does not.
        self.hdr_load.next = self.r2_valid.q.val()
            & self.r2_last.q.val()
            & (!self.hdr_valid.q.val() | self.m_hdr_ready.val());
        if self.hdr_load.val() {
            // The payload length (entry 0 of the word, left 0 by the extractor).
            self.hdr_data.d.next =
                self.r2_rec.q.val() | bit_cast::<HDR_BITS, 16>(self.plen.val().get_bits::<16>(0));
        }
        if self.commit_pay.val() {
            self.hdr_valid.d.next = true;
        }
        self.m_hdr_valid.next = self.hdr_valid.q.val();
        self.m_hdr_data.next = self.hdr_data.q.val();

        // ---- Output streams.
        self.m_axis_tdata.next = self.pay.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.pay.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.pay.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.pay.m_axis_tvalid.val();
        self.pay.m_axis_tready.next = self.m_axis_tready.val();
        self.byp_reg.s_axis_tdata.next = self.byp.m_axis_tdata.val();
        self.byp_reg.s_axis_tkeep.next = self.byp.m_axis_tkeep.val();
        self.byp_reg.s_axis_tlast.next = self.byp.m_axis_tlast.val();
        self.byp_reg.s_axis_tuser.next = self.byp.m_axis_tuser.val();
        self.byp_reg.s_axis_tvalid.next = self.byp.m_axis_tvalid.val();
        self.byp.m_axis_tready.next = self.byp_reg.s_axis_tready.val();
        self.m_bypass_tdata.next = self.byp_reg.m_axis_tdata.val();
        self.m_bypass_tkeep.next = self.byp_reg.m_axis_tkeep.val();
        self.m_bypass_tlast.next = self.byp_reg.m_axis_tlast.val();
        self.m_bypass_tuser.next = self.byp_reg.m_axis_tuser.val();
        self.m_bypass_tvalid.next = self.byp_reg.m_axis_tvalid.val();
        self.byp_reg.m_axis_tready.next = self.m_bypass_tready.val();

        // ---- Counters.
        self.c_frames.d.next = self.c_frames.q.val();
        self.c_accepted.d.next = self.c_accepted.q.val();
        self.c_bypass.d.next = self.c_bypass.q.val();
        self.c_drop_oversize.d.next = self.c_drop_oversize.q.val();
        self.c_drop_truncated.d.next = self.c_drop_truncated.q.val();
        self.c_drop_fragment.d.next = self.c_drop_fragment.q.val();
        self.c_drop_checksum.d.next = self.c_drop_checksum.q.val();
        self.c_drop_length.d.next = self.c_drop_length.q.val();
        self.c_drop_tver.d.next = self.c_drop_tver.q.val();
        self.c_drop_opcode.d.next = self.c_drop_opcode.q.val();
        self.c_drop_padcnt.d.next = self.c_drop_padcnt.q.val();
        self.c_drop_icrc.d.next = self.c_drop_icrc.q.val();
        // A clock after the verdict leaves stage 2 (registered: `fin` waits on `adv`, which has
        // the largest fanout in the parser).
        self.ev_fin.d.next = self.fin.val();
        self.ev_bypass.d.next = self.r2_bypass.q.val();
        self.ev_commit.d.next = self.commit_pay.val();
        self.ev_reason.d.next = self.r2_reason.q.val();
        if self.ev_fin.q.val() {
            self.c_frames.d.next = self.c_frames.q.val() + self.k_one32.val();
            if self.ev_bypass.q.val() {
                self.c_bypass.d.next = self.c_bypass.q.val() + self.k_one32.val();
            }
            if self.ev_commit.q.val() {
                self.c_accepted.d.next = self.c_accepted.q.val() + self.k_one32.val();
            }
            if self.ev_reason.q.val() == self.k_r_oversize.val() {
                self.c_drop_oversize.d.next = self.c_drop_oversize.q.val() + self.k_one32.val();
            }
            if self.ev_reason.q.val() == self.k_r_truncated.val() {
                self.c_drop_truncated.d.next = self.c_drop_truncated.q.val() + self.k_one32.val();
            }
            if self.ev_reason.q.val() == self.k_r_fragment.val() {
                self.c_drop_fragment.d.next = self.c_drop_fragment.q.val() + self.k_one32.val();
            }
            if self.ev_reason.q.val() == self.k_r_checksum.val() {
                self.c_drop_checksum.d.next = self.c_drop_checksum.q.val() + self.k_one32.val();
            }
            if self.ev_reason.q.val() == self.k_r_length.val() {
                self.c_drop_length.d.next = self.c_drop_length.q.val() + self.k_one32.val();
            }
            if self.ev_reason.q.val() == self.k_r_tver.val() {
                self.c_drop_tver.d.next = self.c_drop_tver.q.val() + self.k_one32.val();
            }
            if self.ev_reason.q.val() == self.k_r_opcode.val() {
                self.c_drop_opcode.d.next = self.c_drop_opcode.q.val() + self.k_one32.val();
            }
            if self.ev_reason.q.val() == self.k_r_padcnt.val() {
                self.c_drop_padcnt.d.next = self.c_drop_padcnt.q.val() + self.k_one32.val();
            }
            if self.ev_reason.q.val() == self.k_r_icrc.val() {
                self.c_drop_icrc.d.next = self.c_drop_icrc.q.val() + self.k_one32.val();
            }
        }
        self.cnt_frames.next = self.c_frames.q.val();
        self.cnt_accepted.next = self.c_accepted.q.val();
        self.cnt_bypass.next = self.c_bypass.q.val();
        self.cnt_drop_oversize.next = self.c_drop_oversize.q.val();
        self.cnt_drop_truncated.next = self.c_drop_truncated.q.val();
        self.cnt_drop_fragment.next = self.c_drop_fragment.q.val();
        self.cnt_drop_checksum.next = self.c_drop_checksum.q.val();
        self.cnt_drop_length.next = self.c_drop_length.q.val();
        self.cnt_drop_tver.next = self.c_drop_tver.q.val();
        self.cnt_drop_opcode.next = self.c_drop_opcode.q.val();
        self.cnt_drop_padcnt.next = self.c_drop_padcnt.q.val();
        self.cnt_drop_icrc.next = self.c_drop_icrc.q.val();

        // ---- Reset.
        if self.rst.q.val() {
            self.beat_a.d.next = self.k_zero16.val();
            self.beat_b.d.next = self.k_one17.val();
            self.beat_s.d.next = self.k_zero4.val();
            self.r1_valid.d.next = false;
            self.r2_valid.d.next = false;
            self.r1_last.d.next = false;
            self.r2_last.d.next = false;
            self.k_out.d.next = self.k_zero20.val();
            self.k1.d.next = self.k_one20.val();
            self.hdr_valid.d.next = false;
            self.tail_pending.d.next = false;
            self.pend_commit.d.next = false;
            self.pend_rewind.d.next = false;
            self.ev_fin.d.next = false;
            self.c_frames.d.next = self.k_zero32.val();
            self.c_accepted.d.next = self.k_zero32.val();
            self.c_bypass.d.next = self.k_zero32.val();
            self.c_drop_oversize.d.next = self.k_zero32.val();
            self.c_drop_truncated.d.next = self.k_zero32.val();
            self.c_drop_fragment.d.next = self.k_zero32.val();
            self.c_drop_checksum.d.next = self.k_zero32.val();
            self.c_drop_length.d.next = self.k_zero32.val();
            self.c_drop_tver.d.next = self.k_zero32.val();
            self.c_drop_opcode.d.next = self.k_zero32.val();
            self.c_drop_padcnt.d.next = self.k_zero32.val();
            self.c_drop_icrc.d.next = self.k_zero32.val();
        }
    }
}
