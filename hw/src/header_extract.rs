//! Header extraction: the first [`CAP_BYTES`] bytes of a frame in, every header field out,
//! generated from `rnic-wire`'s field tables and opcode table.
//!
//! A custom block (like [`crate::crc32::CrcXor`]): its `update` simulates with the wire model's
//! `Field::get`, and its `hdl` writes Verilog from the same tables, so a change of a field in
//! `rnic-wire` changes both. Positions follow the frame's shape: an 802.1Q tag moves everything
//! after byte 12 by 4 bytes, IPv6 moves UDP and above by 20, and an extension header sits where
//! the opcode's header list puts it (ImmDt after RETH or DETH, AtomicAckETH after AETH).
//!
//! Besides the header word ([`crate::header_channel`]) it gives the raw facts the parser's checks
//! need: the frame's shape, the IP and UDP length fields, the IPv4 checksum verdict and the
//! opcode's row of the table (known, payload allowed, extension length). Every output but the
//! checksum verdict is combinational logic of the capture register, which holds the first 14
//! beats of the frame (beat `k` in bits `64k..64k+63`, byte 0 of a beat in its low 8 bits),
//! written one beat per clock when `we` is set.
//!
//! The IPv4 header checksum is not summed from the capture in one cycle: each of the four
//! 16-bit lanes of a beat keeps a running sum of the header words that arrive in it (the window
//! follows the tag, known from beat 1's EtherType), a register adds the four lanes on every
//! clock, and the verdict tests that sum without folding it ([`csum_verifies`]). So `csum_ok` is
//! valid from the second clock after the beat that completes the IPv4 header (beat 4), which is
//! before the last beat of any frame long enough to be RoCEv2 (the UDP header ends in beat 5).

use rust_hdl::prelude::*;

use crate::header_channel::{ENTRIES, HDR_BITS, HeaderRecord, Source};
use rnic_wire::field::Field;
use rnic_wire::opcode::{Ext, OPCODES};
use rnic_wire::{bth, eth, ipv4, ipv6, udp};

/// Captured beats.
pub const CAP_BEATS: usize = 14;
/// Captured bytes: enough for the longest header stack (tag, IPv6, UDP, BTH, AtomicETH = 106).
pub const CAP_BYTES: usize = CAP_BEATS * 8;
/// Captured bits.
pub const CAP_BITS: usize = CAP_BYTES * 8;

/// Frame offset of the EtherType after a tag, and of the network header, by tag presence.
pub fn l3_offset(vlan: bool) -> usize {
    eth::LAYOUT.len + if vlan { eth::VLAN_LAYOUT.len } else { 0 }
}

/// Length of the IP header by version.
pub fn ip_header_len(v6: bool) -> usize {
    if v6 {
        ipv6::LAYOUT.len
    } else {
        ipv4::LAYOUT.len
    }
}

/// Frame offset of the UDP header.
pub fn udp_offset(vlan: bool, v6: bool) -> usize {
    l3_offset(vlan) + ip_header_len(v6)
}

/// Frame offset of the BTH.
pub fn bth_offset(vlan: bool, v6: bool) -> usize {
    udp_offset(vlan, v6) + udp::LAYOUT.len
}

/// Offset of extension header `h` after the BTH for opcode `code`, if the opcode carries it.
pub fn ext_offset(code: u8, h: Ext) -> Option<usize> {
    let info = OPCODES.iter().find(|o| o.code == code)?;
    let mut at = 0;
    for &x in info.headers {
        if x == h {
            return Some(at);
        }
        at += x.wire_len();
    }
    None
}

/// Beat whose lanes `lane` (16-bit words, lane 0 = beat bytes 0-1) belong to the IPv4 header,
/// with and without a tag: `(in_plain, in_tag)`.
pub fn csum_window(beat: usize, lane: usize) -> (bool, bool) {
    let at = 8 * beat + 2 * lane;
    let inside = |vlan: bool| (l3_offset(vlan)..l3_offset(vlan) + ipv4::LAYOUT.len).contains(&at);
    (inside(false), inside(true))
}

/// Whether the ones'-complement sum of the IPv4 header's words, given as their plain sum `s`
/// (at most ten words, so under 2^20), verifies: folding `s` gives 0xFFFF exactly when
/// `lo + hi` is 0xFFFF (`lo`, `hi` = bits 15..0 and 19..16), that is when bits 15..4 are all
/// ones and bits 3..0 are the complement of `hi`. Two LUT levels instead of two adders.
pub fn csum_verifies(s: u32) -> bool {
    let (lo, hi) = (s & 0xFFFF, (s >> 16) & 0xF);
    lo >> 4 == 0xFFF && lo & 0xF == !hi & 0xF
}

/// The bit of a shape (tag, IPv6) in `port_hits`.
pub fn shape_index(vlan: bool, v6: bool) -> usize {
    2 * usize::from(vlan) + usize::from(v6)
}

/// What the block computes, as plain values (the simulation side).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extracted {
    /// Entry values in [`ENTRIES`] order.
    pub values: Vec<u64>,
    pub vlan: bool,
    pub v6: bool,
    /// EtherType IPv4 with version 4 and IHL 5, or EtherType IPv6 with version 6.
    pub ip_ok: bool,
    pub proto_udp: bool,
    /// The port test at each shape's UDP offset, bit `2 * tag + ipv6` ([`shape_index`]).
    pub port_hits: u64,
    /// IPv4 MF set or a non-zero fragment offset.
    pub frag: bool,
    /// IPv4 total length or IPv6 payload length, as carried.
    pub ip_len: u64,
    pub udp_len: u64,
    /// IPv4 header checksum verifies (always true for IPv6).
    pub csum_ok: bool,
    pub opcode: u64,
    pub tver: u64,
    pub pad_cnt: u64,
    pub known: bool,
    pub has_payload: bool,
    pub ext_len: u64,
}

/// The header word's entries from the captured bytes, placed by the given shape and opcode
/// (the block uses the ones registered from earlier beats; [`extract`] the decoded ones).
pub fn entry_values(
    b: &[u8; CAP_BYTES],
    payload_len: u64,
    vlan: bool,
    v6: bool,
    opcode: u64,
) -> Vec<u64> {
    let get = |f: &Field, base: usize| f.get(&b[base..]);
    let l3 = l3_offset(vlan);
    let u = udp_offset(vlan, v6);
    let bt = bth_offset(vlan, v6);
    let mut values = Vec::with_capacity(ENTRIES.len());
    for en in ENTRIES {
        let v = match en.src {
            Source::PayloadLen => payload_len & 0xFFFF,
            Source::Vlan => u64::from(vlan),
            Source::V6 => u64::from(v6),
            Source::Eth(f) => get(&f, 0),
            Source::Tag(f) => {
                if vlan {
                    get(&f, eth::ETHERTYPE.byte)
                } else {
                    0
                }
            }
            Source::Ip(a, c) => match (v6, a, c) {
                (false, Some(f), _) | (true, _, Some(f)) => get(&f, l3),
                _ => 0,
            },
            Source::Udp(f) => get(&f, u),
            Source::Bth(f) => get(&f, bt),
            Source::Ext(h, f) => match ext_offset(opcode as u8, h) {
                Some(off) => get(&f, bt + bth::LAYOUT.len + off),
                _ => 0,
            },
        };
        values.push(v);
    }
    values
}

/// Extracts everything from the captured bytes (`payload_len` is placed in the header word).
pub fn extract(b: &[u8; CAP_BYTES], payload_len: u64) -> Extracted {
    extract_shaped(b, payload_len, None)
}

/// As [`extract`], with every field but `vlan` and `v6` read at the offsets of the given shape
/// (tag, IPv6) instead of the decoded one: what the block computes from the shape its consumer
/// registered (`sel_vlan`, `sel_v6`).
pub fn extract_shaped(
    b: &[u8; CAP_BYTES],
    payload_len: u64,
    shape: Option<(bool, bool)>,
) -> Extracted {
    let get = |f: &Field, base: usize| f.get(&b[base..]);
    let et_of = |vlan: bool| {
        let et_at = eth::ETHERTYPE.byte + if vlan { eth::VLAN_LAYOUT.len } else { 0 };
        get(&eth::ETHERTYPE, et_at - eth::ETHERTYPE.byte)
    };
    let dec_vlan = get(&eth::ETHERTYPE, 0) == u64::from(eth::ETHERTYPE_VLAN);
    let dec_v6 = et_of(dec_vlan) == u64::from(eth::ETHERTYPE_IPV6);
    let (vlan, v6) = shape.unwrap_or((dec_vlan, dec_v6));
    let ethertype = et_of(vlan);
    let l3 = l3_offset(vlan);
    let et_v6 = ethertype == u64::from(eth::ETHERTYPE_IPV6);
    let v4 = ethertype == u64::from(eth::ETHERTYPE_IPV4);
    let ip_ok = (v4 && get(&ipv4::VERSION, l3) == 4 && get(&ipv4::IHL, l3) == 5)
        || (et_v6 && get(&ipv6::VERSION, l3) == 6);
    let proto_udp = if v6 {
        get(&ipv6::NEXT_HEADER, l3) == u64::from(ipv4::PROTO_UDP)
    } else {
        get(&ipv4::PROTOCOL, l3) == u64::from(ipv4::PROTO_UDP)
    };
    let u = udp_offset(vlan, v6);
    let bt = bth_offset(vlan, v6);
    let opcode = get(&bth::OPCODE, bt);
    let info = OPCODES.iter().find(|o| u64::from(o.code) == opcode);
    let values = entry_values(b, payload_len, vlan, v6, opcode);
    let mut sum: u32 = 0;
    for k in 0..ipv4::LAYOUT.len / 2 {
        sum += u32::from(u16::from_be_bytes([b[l3 + 2 * k], b[l3 + 2 * k + 1]]));
    }
    let f1 = (sum & 0xFFFF) + (sum >> 16);
    let f2 = (f1 & 0xFFFF) + (f1 >> 16);
    Extracted {
        values,
        vlan: dec_vlan,
        v6: dec_v6,
        ip_ok,
        proto_udp,
        port_hits: [(false, false), (false, true), (true, false), (true, true)]
            .iter()
            .filter(|&&(t, s6)| get(&udp::DST_PORT, udp_offset(t, s6)) == u64::from(udp::ROCE_PORT))
            .fold(0, |m, &(t, s6)| m | 1 << shape_index(t, s6)),
        frag: !v6 && (get(&ipv4::MF, l3) != 0 || get(&ipv4::FRAG_OFFSET, l3) != 0),
        ip_len: if v6 {
            get(&ipv6::PAYLOAD_LEN, l3)
        } else {
            get(&ipv4::TOTAL_LEN, l3)
        },
        udp_len: get(&udp::LENGTH, u),
        csum_ok: v6 || f2 == 0xFFFF,
        opcode,
        tver: get(&bth::TVER, bt),
        pad_cnt: get(&bth::PAD_CNT, bt),
        known: info.is_some(),
        has_payload: info.is_some_and(|i| i.payload),
        ext_len: info.map_or(0, |i| i.ext_len() as u64),
    }
}

/// The extraction block.
#[derive(LogicBlock)]
pub struct HeaderExtract {
    pub clock: Signal<In, Clock>,
    /// Capture `data` as beat `beat` of the frame (beats past the capture are ignored).
    pub we: Signal<In, Bit>,
    pub beat: Signal<In, Bits<16>>,
    pub data: Signal<In, Bits<64>>,
    /// The shape and opcode the header word's fields are placed by: the consumer's registered
    /// copies of `vlan`, `v6` and `opcode` (right from the beat after the one that carries
    /// them, so the word's muxes do not wait on the decode).
    pub sel_vlan: Signal<In, Bit>,
    pub sel_v6: Signal<In, Bit>,
    pub sel_op: Signal<In, Bits<8>>,
    /// The header word (its `payload_len` entry is 0: the parser fills it in).
    pub rec: Signal<Out, Bits<HDR_BITS>>,
    pub vlan: Signal<Out, Bit>,
    pub v6: Signal<Out, Bit>,
    pub ip_ok: Signal<Out, Bit>,
    pub proto_udp: Signal<Out, Bit>,
    /// The RoCEv2 port at each shape's UDP offset (bit [`shape_index`]), so that a consumer
    /// that knows the shape from earlier beats selects it without the shape's decode.
    pub port_hits: Signal<Out, Bits<4>>,
    pub frag: Signal<Out, Bit>,
    pub ip_len: Signal<Out, Bits<16>>,
    pub udp_len: Signal<Out, Bits<16>>,
    pub csum_ok: Signal<Out, Bit>,
    pub opcode: Signal<Out, Bits<8>>,
    pub tver: Signal<Out, Bits<4>>,
    pub pad_cnt: Signal<Out, Bits<2>>,
    pub known: Signal<Out, Bit>,
    pub has_payload: Signal<Out, Bit>,
    pub ext_len: Signal<Out, Bits<8>>,
    _cap: [u8; CAP_BYTES],
    _dirty: bool,
    /// The checksum lanes and their registered sum (as the Verilog's `cs_l*` and `cs_s`).
    _lanes: [u32; 4],
    _cs_s: u32,
    _v6: bool,
    _sel: (bool, bool, u64),
}

impl Default for HeaderExtract {
    fn default() -> Self {
        HeaderExtract {
            clock: Default::default(),
            we: Default::default(),
            beat: Default::default(),
            data: Default::default(),
            sel_vlan: Default::default(),
            sel_v6: Default::default(),
            sel_op: Default::default(),
            rec: Default::default(),
            vlan: Default::default(),
            v6: Default::default(),
            ip_ok: Default::default(),
            proto_udp: Default::default(),
            port_hits: Default::default(),
            frag: Default::default(),
            ip_len: Default::default(),
            udp_len: Default::default(),
            csum_ok: Default::default(),
            opcode: Default::default(),
            tver: Default::default(),
            pad_cnt: Default::default(),
            known: Default::default(),
            has_payload: Default::default(),
            ext_len: Default::default(),
            _cap: [0; CAP_BYTES],
            _dirty: true,
            _lanes: [0; 4],
            _cs_s: 0,
            _v6: false,
            _sel: (false, false, 0),
        }
    }
}

/// Words (least significant first) into a wide `Bits`.
pub fn bits_from_words<const N: usize>(words: &[u64]) -> Bits<N> {
    let mut r: Bits<N> = Bits::default();
    for (i, &w) in words.iter().enumerate() {
        if 64 * i >= N {
            break;
        }
        r = r | (bit_cast::<N, 64>(bits::<64>(w)) << (64 * i) as u64);
    }
    r
}

/// A wide `Bits` as 64-bit words, least significant first.
pub fn words_of<const N: usize>(x: Bits<N>) -> Vec<u64> {
    (0..N.div_ceil(64))
        .map(|i| {
            let sh = x >> (64 * i) as u64;
            bit_cast::<64, N>(sh).to_u64()
        })
        .collect()
}

impl Logic for HeaderExtract {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            // The lanes' sum is registered from the lanes before this edge's beat.
            self._cs_s = self._lanes.iter().sum();
            if self.we.val() && self.beat.val().to_u64() < CAP_BEATS as u64 {
                let k = self.beat.val().to_u64() as usize;
                let bytes = self.data.val().to_u64().to_le_bytes();
                // The tag: from this beat when it carries the EtherType, else from the capture.
                let et = eth::ETHERTYPE.byte;
                let vlan = if k == et / 8 {
                    u16::from_be_bytes([bytes[et % 8], bytes[et % 8 + 1]]) == eth::ETHERTYPE_VLAN
                } else {
                    self._cap[et..et + 2] == eth::ETHERTYPE_VLAN.to_be_bytes()
                };
                for (i, lane) in self._lanes.iter_mut().enumerate() {
                    let (plain, tag) = csum_window(k, i);
                    let word = u32::from(u16::from_be_bytes([bytes[2 * i], bytes[2 * i + 1]]));
                    if k == 0 {
                        *lane = 0;
                    } else if (plain && !vlan) || (tag && vlan) {
                        *lane += word;
                    }
                }
                self._cap[8 * k..8 * k + 8].copy_from_slice(&bytes);
                self._dirty = true;
            }
        }
        self.csum_ok.next = self._v6 || csum_verifies(self._cs_s);
        let sel = (
            self.sel_vlan.val(),
            self.sel_v6.val(),
            self.sel_op.val().to_u64(),
        );
        if !self._dirty && sel == self._sel {
            return;
        }
        self._dirty = false;
        self._sel = sel;
        let x = extract_shaped(&self._cap, 0, Some((sel.0, sel.1)));
        self._v6 = x.v6;
        self.csum_ok.next = x.v6 || csum_verifies(self._cs_s);
        let values = entry_values(&self._cap, 0, sel.0, sel.1, sel.2);
        self.rec.next = bits_from_words::<HDR_BITS>(&HeaderRecord { values }.pack());
        self.vlan.next = x.vlan;
        self.v6.next = x.v6;
        self.ip_ok.next = x.ip_ok;
        self.proto_udp.next = x.proto_udp;
        self.port_hits.next = bits::<4>(x.port_hits);
        self.frag.next = x.frag;
        self.ip_len.next = bits::<16>(x.ip_len);
        self.udp_len.next = bits::<16>(x.udp_len);
        self.opcode.next = bits::<8>(x.opcode);
        self.tver.next = bits::<4>(x.tver);
        self.pad_cnt.next = bits::<2>(x.pad_cnt);
        self.known.next = x.known;
        self.has_payload.next = x.has_payload;
        self.ext_len.next = bits::<8>(x.ext_len);
    }

    fn connect(&mut self) {
        self.rec.connect();
        self.vlan.connect();
        self.v6.connect();
        self.ip_ok.connect();
        self.proto_udp.connect();
        self.port_hits.connect();
        self.frag.connect();
        self.ip_len.connect();
        self.udp_len.connect();
        self.csum_ok.connect();
        self.opcode.connect();
        self.tver.connect();
        self.pad_cnt.connect();
        self.known.connect();
        self.has_payload.connect();
        self.ext_len.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(verilog())
    }
}

/// The bits of `f` at frame offset `base`, as a Verilog concatenation of slices of `cap`.
fn slice(f: &Field, base: usize) -> String {
    bit_slices("cap", CAP_BITS, f, base)
}

/// The bits of field `f` placed at byte `base` of the byte vector `sig` (`bits` wide, byte 0 in
/// its low 8 bits), as a Verilog concatenation of slices, most significant first: usable as an
/// expression and as the target of an assignment.
pub(crate) fn bit_slices(sig: &str, bits: usize, f: &Field, base: usize) -> String {
    let n0 = 8 * base + f.bit_offset();
    let mut parts: Vec<(usize, usize)> = Vec::new();
    for n in n0..n0 + f.width as usize {
        let idx = 8 * (n / 8) + 7 - n % 8;
        match parts.last_mut() {
            Some((_, lo)) if *lo == idx + 1 => *lo = idx,
            _ => parts.push((idx, idx)),
        }
    }
    assert!(
        parts.iter().all(|&(hi, _)| hi < bits),
        "field {} at byte {base} is beyond {sig}",
        f.name
    );
    let s: Vec<String> = parts
        .iter()
        .map(|&(hi, lo)| {
            if hi == lo {
                format!("{sig}[{hi}]")
            } else {
                format!("{sig}[{hi}:{lo}]")
            }
        })
        .collect();
    format!("{{{}}}", s.join(", "))
}

/// `vlan ? a : b` over the two tag variants of a field whose base is `base(vlan)`.
fn by_vlan(f: &Field, base: impl Fn(bool) -> usize) -> String {
    format!(
        "(vlan ? {} : {})",
        slice(f, base(true)),
        slice(f, base(false))
    )
}

/// `v6 ? .. : ..` and `vlan ? .. : ..` over the four shapes.
fn by_shape(f: &Field, base: impl Fn(bool, bool) -> usize) -> String {
    format!(
        "(v6 ? {} : {})",
        by_vlan(f, |t| base(t, true)),
        by_vlan(f, |t| base(t, false))
    )
}

/// An 8-bit Verilog expression: the extension-header length of the opcode in signal `op`, from
/// the opcode table.
pub(crate) fn ext_len_chain(op: &str) -> String {
    let mut lens: Vec<usize> = OPCODES.iter().map(|o| o.ext_len()).collect();
    lens.sort_unstable();
    lens.dedup();
    let mut chain = "8'd0".to_string();
    for &l in lens.iter().rev() {
        if l == 0 {
            continue;
        }
        let codes: Vec<u8> = OPCODES
            .iter()
            .filter(|o| o.ext_len() == l)
            .map(|o| o.code)
            .collect();
        chain = format!(
            "{} ? 8'd{l} : ({chain})",
            op_any(&codes).replace("opcode", op)
        );
    }
    chain
}

pub(crate) fn op_any(codes: &[u8]) -> String {
    if codes.is_empty() {
        return "1'b0".into();
    }
    let t: Vec<String> = codes
        .iter()
        .map(|c| format!("(opcode == 8'd{c})"))
        .collect();
    format!("({})", t.join(" | "))
}

/// The Verilog body of the block, generated from the tables.
pub fn verilog() -> String {
    let mut v = String::new();
    let mut body = String::new();
    let w = |n: usize| {
        if n == 1 {
            String::new()
        } else {
            format!("[{}:0] ", n - 1)
        }
    };
    // Shape.
    let vlan_tag = eth::ETHERTYPE_VLAN;
    body.push_str(&format!(
        "    vlan = ({} == 16'd{vlan_tag});\n",
        slice(&eth::ETHERTYPE, 0)
    ));
    let et = by_vlan(
        &eth::ETHERTYPE,
        |t| if t { eth::VLAN_LAYOUT.len } else { 0 },
    );
    v.push_str("reg [15:0] ethertype;\n");
    body.push_str(&format!("    ethertype = {et};\n"));
    body.push_str(&format!(
        "    v6 = (ethertype == 16'd{});\n",
        eth::ETHERTYPE_IPV6
    ));
    let l3 = |t: bool| l3_offset(t);
    body.push_str(&format!(
        "    ip_ok = ((ethertype == 16'd{}) & ({} == 4'd4) & ({} == 4'd5)) | (v6 & ({} == 4'd6));\n",
        eth::ETHERTYPE_IPV4,
        by_vlan(&ipv4::VERSION, l3),
        by_vlan(&ipv4::IHL, l3),
        by_vlan(&ipv6::VERSION, l3)
    ));
    body.push_str(&format!(
        "    proto_udp = v6 ? ({} == 8'd{p}) : ({} == 8'd{p});\n",
        by_vlan(&ipv6::NEXT_HEADER, l3),
        by_vlan(&ipv4::PROTOCOL, l3),
        p = ipv4::PROTO_UDP
    ));
    for (t, s6) in [(false, false), (false, true), (true, false), (true, true)] {
        body.push_str(&format!(
            "    port_hits[{}] = ({} == 16'd{});\n",
            shape_index(t, s6),
            slice(&udp::DST_PORT, udp_offset(t, s6)),
            udp::ROCE_PORT
        ));
    }
    body.push_str(&format!(
        "    frag = !v6 & (({} != 1'b0) | ({} != 13'd0));\n",
        by_vlan(&ipv4::MF, l3),
        by_vlan(&ipv4::FRAG_OFFSET, l3)
    ));
    body.push_str(&format!(
        "    ip_len = v6 ? {} : {};\n",
        by_vlan(&ipv6::PAYLOAD_LEN, l3),
        by_vlan(&ipv4::TOTAL_LEN, l3)
    ));
    body.push_str(&format!(
        "    udp_len = {};\n",
        by_shape(&udp::LENGTH, udp_offset)
    ));
    // IPv4 header checksum: the registered sum of the lanes (see `csum_lanes`), tested unfolded.
    body.push_str("    csum_ok = v6 | ((cs_s[15:4] == 12'hFFF) & (cs_s[3:0] == ~cs_s[19:16]));\n");
    // BTH and the opcode table.
    body.push_str(&format!(
        "    opcode = {};\n",
        by_shape(&bth::OPCODE, bth_offset)
    ));
    body.push_str(&format!(
        "    tver = {};\n",
        by_shape(&bth::TVER, bth_offset)
    ));
    body.push_str(&format!(
        "    pad_cnt = {};\n",
        by_shape(&bth::PAD_CNT, bth_offset)
    ));
    // Every field but the shape itself is read at the registered shape's offsets
    // (`extract_shaped`): the muxes select on registers, not on the decode above.
    v.push_str("reg [15:0] ethertype_s;\n");
    let et_s = et.replace("(vlan ? ", "(sel_vlan ? ");
    let shaped: String = body
        .lines()
        .map(|l| {
            let t = l.trim_start();
            let field = [
                "ip_ok =",
                "proto_udp =",
                "frag =",
                "ip_len =",
                "udp_len =",
                "opcode =",
                "tver =",
                "pad_cnt =",
            ]
            .iter()
            .any(|p| t.starts_with(p));
            if t.starts_with("v6 =") {
                // The registered shape's EtherType, before its first use below.
                return format!("{l}\n    ethertype_s = {et_s};\n");
            }
            if !field {
                return format!("{l}\n");
            }
            let l = l
                .replace("(vlan ? ", "(sel_vlan ? ")
                .replace("(v6 ? ", "(sel_v6 ? ")
                .replace("= v6 ? ", "= sel_v6 ? ")
                .replace("= !v6 & ", "= !sel_v6 & ")
                .replace("(ethertype == ", "(ethertype_s == ")
                .replace(
                    "| (v6 & ",
                    &format!("| ((ethertype_s == 16'd{}) & ", eth::ETHERTYPE_IPV6),
                );
            format!("{l}\n")
        })
        .collect();
    body = shaped;
    let all: Vec<u8> = OPCODES.iter().map(|o| o.code).collect();
    let pay: Vec<u8> = OPCODES
        .iter()
        .filter(|o| o.payload)
        .map(|o| o.code)
        .collect();
    body.push_str(&format!("    known = {};\n", op_any(&all)));
    body.push_str(&format!("    has_payload = {};\n", op_any(&pay)));
    body.push_str(&format!("    ext_len = {};\n", ext_len_chain("opcode")));
    // The header word.
    let mut parts = Vec::new();
    for (i, en) in ENTRIES.iter().enumerate() {
        let name = format!("e{i}");
        v.push_str(&format!("reg {}{name};\n", w(en.width)));
        let zero = format!("{}'d0", en.width);
        let expr = match en.src {
            Source::PayloadLen => zero.clone(),
            Source::Vlan => "vlan".to_string(),
            Source::V6 => "v6".to_string(),
            Source::Eth(f) => slice(&f, 0),
            Source::Tag(f) => format!("(vlan ? {} : {zero})", slice(&f, eth::ETHERTYPE.byte)),
            Source::Ip(a, c) => {
                let a = a.map_or(zero.clone(), |f| by_vlan(&f, l3));
                let c = c.map_or(zero.clone(), |f| by_vlan(&f, l3));
                format!("(v6 ? {c} : {a})")
            }
            Source::Udp(f) => by_shape(&f, udp_offset),
            Source::Bth(f) => by_shape(&f, bth_offset),
            Source::Ext(h, f) => {
                let mut offs: Vec<usize> = OPCODES
                    .iter()
                    .filter_map(|o| ext_offset(o.code, h))
                    .collect();
                offs.sort_unstable();
                offs.dedup();
                let mut chain = zero.clone();
                for &off in offs.iter().rev() {
                    let codes: Vec<u8> = OPCODES
                        .iter()
                        .filter(|o| ext_offset(o.code, h) == Some(off))
                        .map(|o| o.code)
                        .collect();
                    let val = by_shape(&f, |t, s| bth_offset(t, s) + bth::LAYOUT.len + off);
                    chain = format!("{} ? {val} : ({chain})", op_any(&codes));
                }
                chain
            }
        };
        // Placed by the registered shape and opcode, not the ones decoded above.
        let expr = expr
            .replace("(vlan ? ", "(sel_vlan ? ")
            .replace("(v6 ? ", "(sel_v6 ? ")
            .replace("(opcode == ", "(sel_op == ");
        let expr = match en.src {
            Source::Vlan => "sel_vlan".to_string(),
            Source::V6 => "sel_v6".to_string(),
            _ => expr,
        };
        body.push_str(&format!("    {name} = {expr};\n"));
        parts.push(name);
    }
    parts.reverse();
    body.push_str(&format!("    rec = {{{}}};\n", parts.join(", ")));
    // The capture: one decoded enable per beat slot, not a shifter across the whole register.
    let mut cap = String::new();
    for k in 0..CAP_BEATS {
        cap.push_str(&format!(
            "    if (we && (beat == 16'd{k})) cap[{}:{}] <= data;\n",
            64 * k + 63,
            64 * k
        ));
    }
    format!(
        "reg [{}:0] cap;\n{v}{}always @(posedge clock) begin\n{cap}end\nalways @(*) begin\n{body}end\n",
        CAP_BITS - 1,
        csum_lanes()
    )
}

/// The checksum lanes: on every captured beat, lane `i` adds the beat's word `i` when it lies in
/// the IPv4 header (by the tag: from the beat itself when it carries the EtherType, else from
/// the capture), and beat 0 clears them; `cs_s` registers their sum on every clock.
fn csum_lanes() -> String {
    let et = eth::ETHERTYPE.byte;
    assert_eq!(et / 8, (et + 1) / 8, "the EtherType lies in one beat");
    let et_in = Field::new("et", et % 8, 0, 16);
    let mut v = String::new();
    v.push_str("reg [17:0] cs_l0;\nreg [17:0] cs_l1;\nreg [17:0] cs_l2;\nreg [17:0] cs_l3;\n");
    v.push_str("reg [19:0] cs_s;\nwire cs_vlan_in;\n");
    v.push_str(&format!(
        "assign cs_vlan_in = ({} == 16'd{});\n",
        bit_slices("data", 64, &et_in, 0),
        eth::ETHERTYPE_VLAN
    ));
    v.push_str("always @(posedge clock) begin\n");
    v.push_str("    cs_s <= {2'd0, cs_l0} + {2'd0, cs_l1} + {2'd0, cs_l2} + {2'd0, cs_l3};\n");
    v.push_str(&format!("    if (we && (beat < 16'd{CAP_BEATS})) begin\n"));
    v.push_str("        if (beat == 16'd0) begin\n");
    for i in 0..4 {
        assert_eq!(
            csum_window(0, i),
            (false, false),
            "no header word in beat 0"
        );
        v.push_str(&format!("            cs_l{i} <= 18'd0;\n"));
    }
    v.push_str("        end\n");
    for beat in 1..CAP_BEATS {
        let mut adds = String::new();
        for i in 0..4 {
            let (plain, tag) = csum_window(beat, i);
            let vl = if beat == et / 8 { "cs_vlan_in" } else { "vlan" };
            assert!(
                beat >= et / 8 || (!plain && !tag),
                "a header word before the EtherType"
            );
            let cond = match (plain, tag) {
                (false, false) => continue,
                (true, true) => "1'b1".to_string(),
                (true, false) => format!("!{vl}"),
                (false, true) => vl.to_string(),
            };
            let word = bit_slices("data", 64, &Field::new("w", 2 * i, 0, 16), 0);
            adds.push_str(&format!(
                "            if ({cond}) cs_l{i} <= cs_l{i} + {{2'd0, {word}}};\n"
            ));
        }
        if !adds.is_empty() {
            v.push_str(&format!(
                "        if (beat == 16'd{beat}) begin\n{adds}        end\n"
            ));
        }
    }
    v.push_str("    end\nend\n");
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verilog_mentions_every_entry_and_fits_the_capture() {
        let v = verilog();
        for i in 0..ENTRIES.len() {
            assert!(v.contains(&format!("e{i} = ")));
        }
        // The deepest field: AtomicETH compare behind a tag and IPv6 ends at byte 106.
        assert!(bth_offset(true, true) + bth::LAYOUT.len + 28 <= CAP_BYTES);
    }

    #[test]
    fn the_unfolded_test_is_the_fold() {
        let fold = |s: u32| {
            let f1 = (s & 0xFFFF) + (s >> 16);
            (f1 & 0xFFFF) + (f1 >> 16) == 0xFFFF
        };
        for s in 0..=10 * 0xFFFF {
            assert_eq!(csum_verifies(s), fold(s), "{s:#x}");
        }
    }

    #[test]
    fn the_checksum_window_is_the_ipv4_header() {
        for vlan in [false, true] {
            let n: usize = (0..CAP_BEATS)
                .flat_map(|b| (0..4).map(move |i| (b, i)))
                .filter(|&(b, i)| {
                    let (p, t) = csum_window(b, i);
                    if vlan { t } else { p }
                })
                .count();
            assert_eq!(n, ipv4::LAYOUT.len / 2);
        }
        // The header ends in beat 4; the UDP header (needed to be RoCEv2) ends after it.
        let last = |vlan: bool| (l3_offset(vlan) + ipv4::LAYOUT.len - 1) / 8;
        assert_eq!((last(false), last(true)), (4, 4));
        assert!((udp_offset(false, false) + udp::LAYOUT.len - 1) / 8 >= 5);
    }

    #[test]
    fn port_hit_bits_are_the_ones_the_parser_selects() {
        // rx_parser selects bits 0..3 by literal index (hdl_gen cannot take the function).
        assert_eq!(shape_index(false, false), 0);
        assert_eq!(shape_index(false, true), 1);
        assert_eq!(shape_index(true, false), 2);
        assert_eq!(shape_index(true, true), 3);
    }

    #[test]
    fn ext_offsets_follow_the_opcode_table() {
        assert_eq!(ext_offset(0x0B, Ext::ImmDt), Some(16));
        assert_eq!(ext_offset(0x65, Ext::ImmDt), Some(8));
        assert_eq!(ext_offset(0x12, Ext::AtomicAckEth), Some(4));
        assert_eq!(ext_offset(0x04, Ext::Reth), None);
    }
}
