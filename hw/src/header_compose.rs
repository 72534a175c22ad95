//! Header composition: a header word in, the frame's header bytes out (Ethernet, tag, IPv4 or
//! IPv6, UDP, BTH, extension headers), generated from `rnic-wire`'s field tables and opcode
//! table. The inverse of [`crate::header_extract`].
//!
//! A custom block: its `update` simulates by writing the fields into bytes with the wire model's
//! `Field::set`, and its `hdl` writes Verilog from the same placement plan ([`plan`]), so a
//! change of a field in `rnic-wire` changes both.
//!
//! # Pipeline
//! The lengths and the IPv4 checksum are derived over [`LATENCY`] clocks, one adder level per
//! clock ([`Stage`]): extension length, pad and the pair sums of the IPv4 words; UDP and IPv4
//! length and quad sums; header and frame length and the sum less one pair; the whole sum; the
//! fold and complement. The header word must stay on `rec` meanwhile, as a valid header channel
//! holds it until taken: `ready` rises when the word has been presented (`valid`) for
//! [`LATENCY`] clocks without being taken (`take`), and only then are the outputs the word's.
//! The header bytes themselves are wiring from `rec` and the derived registers, muxed by shape.
//! A header comes once per frame and the shortest frame takes more clocks than [`LATENCY`], so
//! frames still leave back to back; an idle builder starts [`LATENCY`] clocks later. The transmit side derives what
//! the header word does not carry: EtherTypes and TPID, IP version, IHL, protocol / next header,
//! the IPv4 total length and header checksum (MF and fragment offset 0), the IPv6 payload length,
//! the UDP length, and PadCnt (the pad that brings the payload to a multiple of 4: the header
//! word's `PadCnt` entry is ignored). The lengths count the 4-byte ICRC, which the ICRC engine
//! appends after the frame.
//!
//! Outputs: `hdr`, the header bytes (byte `j` in bits `8j..8j+7`, zero past `hdr_len`);
//! `hdr_len`; `pad`; `frame_len`, the frame's length without the ICRC (header, payload, pad).

use rust_hdl::prelude::*;

use crate::header_channel::{ENTRIES, HDR_BITS, Source};
use crate::header_extract::{CAP_BITS, CAP_BYTES, bit_slices, bits_from_words, op_any, words_of};
use rnic_wire::field::Field;
use rnic_wire::opcode::{Ext, OPCODES};
use rnic_wire::{bth, eth, ipv4, ipv6, udp};

/// A value the transmit side derives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Derived {
    /// The EtherType of the network layer (IPv4 or IPv6).
    EtherType,
    /// IPv4 total length: 20 + UDP length.
    Ip4Len,
    /// UDP length (also the IPv6 payload length): 8 + 12 + extension headers + payload + pad + 4.
    UdpLen,
    /// PadCnt.
    Pad,
}

/// Where a field's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Val {
    /// Entry `k` of the header word.
    Entry(usize),
    Const(u64),
    Derived(Derived),
}

/// One field written into a header buffer at byte `base`.
#[derive(Clone, Copy, Debug)]
pub struct Place {
    pub field: Field,
    pub base: usize,
    pub val: Val,
}

/// A header buffer: a name (the Verilog register), its length in bytes, its fields.
#[derive(Clone, Debug)]
pub struct Buf {
    pub name: String,
    pub len: usize,
    pub places: Vec<Place>,
}

/// The placement plan: Ethernet without and with a tag, IPv4, IPv6, UDP, BTH, and one buffer
/// per distinct extension-header list of the opcode table (with the opcodes that use it).
#[derive(Clone, Debug)]
pub struct Plan {
    pub eth_plain: Buf,
    pub eth_tag: Buf,
    pub ip4: Buf,
    pub ip6: Buf,
    pub udp: Buf,
    pub bth: Buf,
    pub exts: Vec<(Vec<u8>, Buf)>,
    /// Bytes reserved for extension headers (the longest list).
    pub ext_bytes: usize,
}

fn entry_index(pred: impl Fn(&Source) -> bool) -> usize {
    ENTRIES
        .iter()
        .position(|e| pred(&e.src))
        .expect("the header word has this entry")
}

/// Index of the `vlan` entry.
pub fn vlan_entry() -> usize {
    entry_index(|s| *s == Source::Vlan)
}

/// Index of the `v6` entry.
pub fn v6_entry() -> usize {
    entry_index(|s| *s == Source::V6)
}

/// Index of the `payload_len` entry.
pub fn payload_entry() -> usize {
    entry_index(|s| *s == Source::PayloadLen)
}

/// Index of the BTH opcode entry.
pub fn opcode_entry() -> usize {
    entry_index(|s| *s == Source::Bth(bth::OPCODE))
}

fn buf(name: &str, len: usize) -> Buf {
    Buf {
        name: name.to_string(),
        len,
        places: Vec::new(),
    }
}

fn put(b: &mut Buf, field: Field, base: usize, val: Val) {
    b.places.push(Place { field, base, val });
}

/// The distinct extension-header lists of the opcode table, with their opcodes.
pub fn ext_groups() -> Vec<(Vec<u8>, &'static [Ext])> {
    let mut groups: Vec<(Vec<u8>, &'static [Ext])> = Vec::new();
    for o in OPCODES {
        match groups.iter_mut().find(|(_, h)| *h == o.headers) {
            Some((codes, _)) => codes.push(o.code),
            None => groups.push((vec![o.code], o.headers)),
        }
    }
    groups
}

/// Builds the plan from the header word's entries and the field tables.
pub fn plan() -> Plan {
    let tag_at = eth::ETHERTYPE.byte;
    let mut eth_plain = buf("eth_p", eth::LAYOUT.len);
    let mut eth_tag = buf("eth_t", eth::LAYOUT.len + eth::VLAN_LAYOUT.len);
    let mut ip4 = buf("ip4", ipv4::LAYOUT.len);
    let mut ip6 = buf("ip6", ipv6::LAYOUT.len);
    let mut udp_b = buf("udp_h", udp::LAYOUT.len);
    let mut bth_b = buf("bth_h", bth::LAYOUT.len);
    let groups = ext_groups();
    let ext_bytes = groups
        .iter()
        .map(|(_, h)| h.iter().map(|x| x.wire_len()).sum::<usize>())
        .max()
        .unwrap_or(0);
    let mut exts: Vec<(Vec<u8>, Buf)> = groups
        .iter()
        .enumerate()
        .map(|(i, (codes, _))| (codes.clone(), buf(&format!("x{i}"), ext_bytes)))
        .collect();
    let eth_type = Val::Derived(Derived::EtherType);
    put(&mut eth_plain, eth::ETHERTYPE, 0, eth_type);
    put(
        &mut eth_tag,
        eth::TPID,
        tag_at,
        Val::Const(eth::ETHERTYPE_VLAN.into()),
    );
    put(&mut eth_tag, eth::ETHERTYPE, eth::VLAN_LAYOUT.len, eth_type);
    put(&mut ip4, ipv4::VERSION, 0, Val::Const(4));
    put(&mut ip4, ipv4::IHL, 0, Val::Const(5));
    put(&mut ip4, ipv4::TOTAL_LEN, 0, Val::Derived(Derived::Ip4Len));
    put(
        &mut ip4,
        ipv4::PROTOCOL,
        0,
        Val::Const(ipv4::PROTO_UDP.into()),
    );
    put(&mut ip6, ipv6::VERSION, 0, Val::Const(6));
    put(
        &mut ip6,
        ipv6::PAYLOAD_LEN,
        0,
        Val::Derived(Derived::UdpLen),
    );
    put(
        &mut ip6,
        ipv6::NEXT_HEADER,
        0,
        Val::Const(ipv4::PROTO_UDP.into()),
    );
    put(&mut udp_b, udp::LENGTH, 0, Val::Derived(Derived::UdpLen));
    for (k, en) in ENTRIES.iter().enumerate() {
        let v = Val::Entry(k);
        match en.src {
            Source::PayloadLen | Source::Vlan | Source::V6 => {}
            Source::Eth(f) => {
                put(&mut eth_plain, f, 0, v);
                put(&mut eth_tag, f, 0, v);
            }
            Source::Tag(f) => put(&mut eth_tag, f, tag_at, v),
            Source::Ip(a, c) => {
                if let Some(f) = a {
                    put(&mut ip4, f, 0, v);
                }
                if let Some(f) = c {
                    put(&mut ip6, f, 0, v);
                }
            }
            Source::Udp(f) => put(&mut udp_b, f, 0, v),
            Source::Bth(f) if f == bth::PAD_CNT => {
                put(&mut bth_b, f, 0, Val::Derived(Derived::Pad));
            }
            Source::Bth(f) => put(&mut bth_b, f, 0, v),
            Source::Ext(h, f) => {
                for ((_, hs), (_, b)) in groups.iter().zip(exts.iter_mut()) {
                    let mut at = 0;
                    for &x in hs.iter() {
                        if x == h {
                            put(b, f, at, v);
                        }
                        at += x.wire_len();
                    }
                }
            }
        }
    }
    Plan {
        eth_plain,
        eth_tag,
        ip4,
        ip6,
        udp: udp_b,
        bth: bth_b,
        exts,
        ext_bytes,
    }
}

/// What the block computes, as plain values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Composed {
    pub bytes: [u8; CAP_BYTES],
    pub hdr_len: usize,
    pub pad: u8,
    /// Frame length without the ICRC.
    pub frame_len: usize,
}

/// The IPv4 header checksum of a 20-byte header whose checksum field is zero.
fn ip4_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for k in 0..h.len() / 2 {
        sum += u32::from(u16::from_be_bytes([h[2 * k], h[2 * k + 1]]));
    }
    let f1 = (sum & 0xFFFF) + (sum >> 16);
    let f2 = (f1 & 0xFFFF) + (f1 >> 16);
    !(f2 as u16)
}

/// Composes the header bytes from the entry values (in [`ENTRIES`] order).
pub fn compose(values: &[u64], p: &Plan) -> Composed {
    let vlan = values[vlan_entry()] & 1 == 1;
    let v6 = values[v6_entry()] & 1 == 1;
    let payload = (values[payload_entry()] & 0xFFFF) as usize;
    let opcode = values[opcode_entry()] as u8;
    let pad = ((4 - payload % 4) % 4) as u8;
    let ext = p.exts.iter().find(|(codes, _)| codes.contains(&opcode));
    let ext_len: usize = OPCODES
        .iter()
        .find(|o| o.code == opcode)
        .map_or(0, |o| o.ext_len());
    // 16-bit arithmetic, as in the hardware.
    let udp_len =
        (udp::LAYOUT.len + bth::LAYOUT.len + ext_len + payload + usize::from(pad) + 4) & 0xFFFF;
    let ip4_len = (udp_len + ipv4::LAYOUT.len) & 0xFFFF;
    let derived = |d: Derived| -> u64 {
        match d {
            Derived::EtherType => u64::from(if v6 {
                eth::ETHERTYPE_IPV6
            } else {
                eth::ETHERTYPE_IPV4
            }),
            Derived::Ip4Len => ip4_len as u64,
            Derived::UdpLen => udp_len as u64,
            Derived::Pad => pad.into(),
        }
    };
    let fill = |b: &Buf| -> Vec<u8> {
        let mut out = vec![0u8; b.len];
        for pl in &b.places {
            let v = match pl.val {
                Val::Entry(k) => values[k],
                Val::Const(c) => c,
                Val::Derived(d) => derived(d),
            };
            pl.field.set(&mut out[pl.base..], v);
        }
        out
    };
    let mut hdr: Vec<u8> = fill(if vlan { &p.eth_tag } else { &p.eth_plain });
    if v6 {
        hdr.extend(fill(&p.ip6));
    } else {
        let mut h = fill(&p.ip4);
        let c = ip4_checksum(&h);
        ipv4::CHECKSUM.set(&mut h, c.into());
        hdr.extend(h);
    }
    hdr.extend(fill(&p.udp));
    hdr.extend(fill(&p.bth));
    let hdr_len = hdr.len() + ext_len;
    match ext {
        Some((_, b)) => hdr.extend(fill(b)),
        None => hdr.extend(vec![0u8; p.ext_bytes]),
    }
    let mut bytes = [0u8; CAP_BYTES];
    bytes[..hdr.len()].copy_from_slice(&hdr);
    Composed {
        bytes,
        hdr_len,
        pad,
        frame_len: (hdr_len + payload + usize::from(pad)) & 0xFFFF,
    }
}

/// Clocks from a header word on `rec` to its derived values.
pub const LATENCY: u8 = 5;

/// The derivation pipeline's registers (one struct for every stage; a stage sets the fields its
/// Verilog registers hold and leaves the others 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stage {
    /// One bit per extension-header group of the plan: the group of the opcode.
    pub xs: u32,
    pub pad: u8,
    /// Payload plus pad.
    pub pp: u16,
    /// Extension length, plus 24 (UDP, BTH, ICRC), plus 44 (and IPv4).
    pub xl: u8,
    pub xl24: u8,
    pub xl44: u8,
    /// Header length without extension headers (by shape), then with them.
    pub hlb: u8,
    pub hl: u8,
    pub udp: u16,
    pub ip4: u16,
    pub fl: u16,
    /// Pair, quad and partial sums of the IPv4 words (total length and checksum 0).
    pub p: [u32; 5],
    pub q: [u32; 3],
    pub r: u32,
    pub r2: u32,
    pub s: u32,
    /// The IPv4 header checksum.
    pub cs: u16,
}

fn shape_len(p: &Plan, vlan: bool, v6: bool) -> usize {
    let e = if vlan { &p.eth_tag } else { &p.eth_plain };
    let i = if v6 { &p.ip6 } else { &p.ip4 };
    e.len + i.len + p.udp.len + p.bth.len
}

/// The IPv4 buffer with its total length left 0 (the words the first stage sums).
fn ip4_zero_len(p: &Plan) -> Buf {
    let mut b = p.ip4.clone();
    b.name = "ip4z".into();
    for pl in &mut b.places {
        if pl.val == Val::Derived(Derived::Ip4Len) {
            pl.val = Val::Const(0);
        }
    }
    b
}

fn fill_buf(b: &Buf, values: &[u64], derived: &dyn Fn(Derived) -> u64) -> Vec<u8> {
    let mut out = vec![0u8; b.len];
    for pl in &b.places {
        let v = match pl.val {
            Val::Entry(k) => values[k],
            Val::Const(c) => c,
            Val::Derived(d) => derived(d),
        };
        pl.field.set(&mut out[pl.base..], v);
    }
    out
}

impl Stage {
    /// Stage 1, from the header word's entry values.
    pub fn first(values: &[u64], p: &Plan) -> Stage {
        let vlan = values[vlan_entry()] & 1 == 1;
        let v6 = values[v6_entry()] & 1 == 1;
        let plen = (values[payload_entry()] & 0xFFFF) as u16;
        let opcode = values[opcode_entry()] as u8;
        let pad = 0u8.wrapping_sub(plen as u8) & 3;
        let xl = OPCODES
            .iter()
            .find(|o| o.code == opcode)
            .map_or(0, |o| o.ext_len()) as u8;
        let xs = p
            .exts
            .iter()
            .enumerate()
            .filter(|(_, (codes, _))| codes.contains(&opcode))
            .fold(0, |m, (i, _)| m | 1 << i);
        let z = fill_buf(&ip4_zero_len(p), values, &|_| 0);
        let w = |k: usize| u32::from(u16::from_be_bytes([z[2 * k], z[2 * k + 1]]));
        Stage {
            xs,
            pad,
            pp: plen.wrapping_add(pad.into()),
            xl,
            xl24: xl.wrapping_add(24),
            xl44: xl.wrapping_add(44),
            hlb: shape_len(p, vlan, v6) as u8,
            p: std::array::from_fn(|k| w(2 * k) + w(2 * k + 1)),
            ..Stage::default()
        }
    }

    /// The stage after this one.
    pub fn next(&self, n: u8) -> Stage {
        let c = *self;
        let keep = Stage {
            xs: c.xs,
            pad: c.pad,
            hl: c.hl,
            udp: c.udp,
            ip4: c.ip4,
            fl: c.fl,
            ..Stage::default()
        };
        match n {
            2 => Stage {
                udp: c.pp.wrapping_add(c.xl24.into()),
                ip4: c.pp.wrapping_add(c.xl44.into()),
                q: [c.p[0] + c.p[1], c.p[2] + c.p[3], c.p[4]],
                hl: c.hlb.wrapping_add(c.xl),
                pp: c.pp,
                ..keep
            },
            3 => Stage {
                r: c.q[0] + c.q[1],
                r2: c.q[2] + u32::from(c.ip4),
                fl: u16::from(c.hl).wrapping_add(c.pp),
                ..keep
            },
            4 => Stage {
                s: c.r + c.r2,
                ..keep
            },
            5 => {
                let (lo, hi) = (c.s & 0xFFFF, c.s >> 16 & 0xF);
                let a = lo + hi;
                let f = if a >> 16 & 1 == 1 { lo + (hi + 1) } else { a };
                Stage {
                    cs: !(f as u16),
                    ..keep
                }
            }
            _ => panic!("no stage {n}"),
        }
    }
}

/// The header as the block presents it from the entry values on `rec` and the last stage.
pub fn compose_with(values: &[u64], p: &Plan, st: &Stage) -> Composed {
    let vlan = values[vlan_entry()] & 1 == 1;
    let v6 = values[v6_entry()] & 1 == 1;
    let derived = |d: Derived| -> u64 {
        match d {
            Derived::EtherType => u64::from(if v6 {
                eth::ETHERTYPE_IPV6
            } else {
                eth::ETHERTYPE_IPV4
            }),
            Derived::Ip4Len => st.ip4.into(),
            Derived::UdpLen => st.udp.into(),
            Derived::Pad => st.pad.into(),
        }
    };
    let mut hdr = fill_buf(
        if vlan { &p.eth_tag } else { &p.eth_plain },
        values,
        &derived,
    );
    if v6 {
        hdr.extend(fill_buf(&p.ip6, values, &derived));
    } else {
        let mut h = fill_buf(&p.ip4, values, &derived);
        ipv4::CHECKSUM.set(&mut h, st.cs.into());
        hdr.extend(h);
    }
    hdr.extend(fill_buf(&p.udp, values, &derived));
    hdr.extend(fill_buf(&p.bth, values, &derived));
    let mut ext = vec![0u8; p.ext_bytes];
    for (i, (_, b)) in p.exts.iter().enumerate() {
        if st.xs >> i & 1 == 1 {
            for (x, y) in ext.iter_mut().zip(fill_buf(b, values, &derived)) {
                *x |= y;
            }
        }
    }
    hdr.extend(ext);
    let mut bytes = [0u8; CAP_BYTES];
    bytes[..hdr.len()].copy_from_slice(&hdr);
    Composed {
        bytes,
        hdr_len: st.hl.into(),
        pad: st.pad,
        frame_len: st.fl.into(),
    }
}

/// The composition block.
#[derive(LogicBlock)]
pub struct HeaderCompose {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high (clears `ready`).
    pub reset: Signal<In, Bit>,
    /// The header word, held while `valid` until `take`.
    pub rec: Signal<In, Bits<HDR_BITS>>,
    pub valid: Signal<In, Bit>,
    /// The word is taken on this clock (the next word may follow).
    pub take: Signal<In, Bit>,
    /// The outputs are the word's.
    pub ready: Signal<Out, Bit>,
    /// Header bytes, byte `j` in bits `8j..8j+7`.
    pub hdr: Signal<Out, Bits<CAP_BITS>>,
    pub hdr_len: Signal<Out, Bits<8>>,
    pub pad: Signal<Out, Bits<2>>,
    pub frame_len: Signal<Out, Bits<16>>,
    _plan: Plan,
    _words: Option<Vec<u64>>,
    _values: Vec<u64>,
    _first: Stage,
    _stages: [Stage; LATENCY as usize],
    _age: u8,
    _shown: Option<(Vec<u64>, Stage)>,
}

impl Default for HeaderCompose {
    fn default() -> Self {
        HeaderCompose {
            clock: Default::default(),
            reset: Default::default(),
            rec: Default::default(),
            valid: Default::default(),
            take: Default::default(),
            ready: Default::default(),
            hdr: Default::default(),
            hdr_len: Default::default(),
            pad: Default::default(),
            frame_len: Default::default(),
            _plan: plan(),
            _words: None,
            _values: Vec::new(),
            _first: Stage::default(),
            _stages: [Stage::default(); LATENCY as usize],
            _age: 0,
            _shown: None,
        }
    }
}

/// Entry values of a packed header word.
fn unpack(words: &[u64]) -> Vec<u64> {
    crate::header_channel::HeaderRecord::unpack(words).values
}

impl Logic for HeaderCompose {
    fn update(&mut self) {
        let words = words_of(self.rec.val());
        if self._words.as_ref() != Some(&words) {
            self._values = unpack(&words);
            self._first = Stage::first(&self._values, &self._plan);
            self._words = Some(words);
        }
        if self.clock.pos_edge() {
            let n = LATENCY as usize;
            for k in (1..n).rev() {
                self._stages[k] = self._stages[k - 1].next(k as u8 + 1);
            }
            self._stages[0] = self._first;
            self._age = if self.reset.val() || !self.valid.val() || self.take.val() {
                0
            } else {
                (self._age + 1).min(LATENCY)
            };
        }
        self.ready.next = self._age == LATENCY;
        let last = self._stages[LATENCY as usize - 1];
        let key = (self._words.clone().unwrap_or_default(), last);
        if self._shown.as_ref() == Some(&key) {
            return;
        }
        let c = compose_with(&self._values, &self._plan, &last);
        self._shown = Some(key);
        let mut hw = vec![0u64; CAP_BYTES / 8];
        for (k, w) in hw.iter_mut().enumerate() {
            *w = u64::from_le_bytes(c.bytes[8 * k..8 * k + 8].try_into().expect("8 bytes"));
        }
        self.hdr.next = bits_from_words::<CAP_BITS>(&hw);
        self.hdr_len.next = bits::<8>(c.hdr_len as u64);
        self.pad.next = bits::<2>(c.pad.into());
        self.frame_len.next = bits::<16>(c.frame_len as u64);
    }

    fn connect(&mut self) {
        self.ready.connect();
        self.hdr.connect();
        self.hdr_len.connect();
        self.pad.connect();
        self.frame_len.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(verilog(&self._plan))
    }
}

fn val_expr(v: Val, f: &Field) -> String {
    match v {
        Val::Entry(k) => format!("e{k}"),
        Val::Const(c) => format!("{}'d{c}", f.width),
        Val::Derived(Derived::EtherType) => "ethertype".into(),
        Val::Derived(Derived::Ip4Len) => "s5_ip4".into(),
        Val::Derived(Derived::UdpLen) => "s5_udp".into(),
        Val::Derived(Derived::Pad) => "s5_pad".into(),
    }
}

fn emit_buf(decl: &mut String, body: &mut String, b: &Buf) {
    let bits = 8 * b.len;
    decl.push_str(&format!("reg [{}:0] {};\n", bits - 1, b.name));
    body.push_str(&format!("    {} = {bits}'d0;\n", b.name));
    for pl in &b.places {
        body.push_str(&format!(
            "    {} = {};\n",
            bit_slices(&b.name, bits, &pl.field, pl.base),
            val_expr(pl.val, &pl.field)
        ));
    }
}

/// An 8-bit Verilog expression: the extension-header length of the opcode in `op`, plus `add`.
fn len_chain(op: &str, add: usize) -> String {
    let mut lens: Vec<usize> = OPCODES.iter().map(|o| o.ext_len()).collect();
    lens.sort_unstable();
    lens.dedup();
    let mut chain = format!("8'd{add}");
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
            "{} ? 8'd{} : ({chain})",
            op_any(&codes).replace("opcode", op),
            l + add
        );
    }
    chain
}

/// The Verilog body of the block, generated from the plan.
pub fn verilog(p: &Plan) -> String {
    let mut decl = String::new();
    let mut body = String::new();
    let mut at = 0;
    for (k, en) in ENTRIES.iter().enumerate() {
        let w = en.width;
        if w == 1 {
            decl.push_str(&format!("reg e{k};\n"));
            body.push_str(&format!("    e{k} = rec[{at}];\n"));
        } else {
            decl.push_str(&format!("reg [{}:0] e{k};\n", w - 1));
            body.push_str(&format!("    e{k} = rec[{}:{at}];\n", at + w - 1));
        }
        at += w;
    }
    let (vl, v6, pl, op) = (vlan_entry(), v6_entry(), payload_entry(), opcode_entry());
    let nx = p.exts.len();
    decl.push_str("reg [15:0] ethertype;\nreg [1:0] pad_in;\n");
    body.push_str(&format!(
        "    ethertype = e{v6} ? 16'd{} : 16'd{};\n",
        eth::ETHERTYPE_IPV6,
        eth::ETHERTYPE_IPV4
    ));
    body.push_str(&format!("    pad_in = 2'd0 - e{pl}[1:0];\n"));
    // The IPv4 words with total length 0, for the first stage's pair sums.
    let z = ip4_zero_len(p);
    emit_buf(&mut decl, &mut body, &z);
    let word = |k: usize| {
        bit_slices(
            "ip4z",
            8 * ipv4::LAYOUT.len,
            &Field::new("word", 2 * k, 0, 16),
            0,
        )
    };
    // The pipeline registers.
    let mut regs = vec![
        ("s1_xs", nx),
        ("s1_pad", 2),
        ("s1_pp", 16),
        ("s1_xl", 8),
        ("s1_xl24", 8),
        ("s1_xl44", 8),
        ("s1_hlb", 8),
    ];
    for k in 0..5 {
        regs.push((["s1_p0", "s1_p1", "s1_p2", "s1_p3", "s1_p4"][k], 17));
    }
    regs.extend([
        ("s2_udp", 16),
        ("s2_ip4", 16),
        ("s2_q0", 18),
        ("s2_q1", 18),
        ("s2_q2", 17),
        ("s2_hl", 8),
        ("s2_pp", 16),
        ("s3_r", 19),
        ("s3_r2", 18),
        ("s3_fl", 16),
        ("s4_s", 20),
        ("s5_cs", 16),
        ("age", 3),
    ]);
    // Carried unchanged from stage 2 (or 3) to 5.
    for st in 2..=5 {
        regs.push((["s2_xs", "s3_xs", "s4_xs", "s5_xs"][st - 2], nx));
        regs.push((["s2_pad", "s3_pad", "s4_pad", "s5_pad"][st - 2], 2));
        if st >= 3 {
            regs.push((["", "s3_udp", "s4_udp", "s5_udp"][st - 2], 16));
            regs.push((["", "s3_ip4", "s4_ip4", "s5_ip4"][st - 2], 16));
            regs.push((["", "s3_hl", "s4_hl", "s5_hl"][st - 2], 8));
        }
        if st >= 4 {
            regs.push((["", "", "s4_fl", "s5_fl"][st - 2], 16));
        }
    }
    for (name, w) in &regs {
        decl.push_str(&format!("reg [{}:0] {name};\n", w - 1));
    }
    decl.push_str("wire [16:0] cs_a;\nwire [4:0] cs_hi1;\nwire [15:0] cs_b;\n");
    let mut seq = String::new();
    let onehot: Vec<String> = (0..nx)
        .rev()
        .map(|i| op_any(&p.exts[i].0).replace("opcode", &format!("e{op}")))
        .collect();
    seq.push_str(&format!("    s1_xs <= {{{}}};\n", onehot.join(", ")));
    seq.push_str("    s1_pad <= pad_in;\n");
    seq.push_str(&format!("    s1_pp <= e{pl} + {{14'd0, pad_in}};\n"));
    let op_e = format!("e{op}");
    seq.push_str(&format!("    s1_xl <= {};\n", len_chain(&op_e, 0)));
    let l24 = udp::LAYOUT.len + bth::LAYOUT.len + 4;
    seq.push_str(&format!("    s1_xl24 <= {};\n", len_chain(&op_e, l24)));
    seq.push_str(&format!(
        "    s1_xl44 <= {};\n",
        len_chain(&op_e, l24 + ipv4::LAYOUT.len)
    ));
    seq.push_str(&format!(
        "    s1_hlb <= e{vl} ? (e{v6} ? 8'd{} : 8'd{}) : (e{v6} ? 8'd{} : 8'd{});\n",
        shape_len(p, true, true),
        shape_len(p, true, false),
        shape_len(p, false, true),
        shape_len(p, false, false)
    ));
    for k in 0..5 {
        seq.push_str(&format!(
            "    s1_p{k} <= {{1'b0, {}}} + {{1'b0, {}}};\n",
            word(2 * k),
            word(2 * k + 1)
        ));
    }
    seq.push_str(
        "    s2_udp <= s1_pp + {8'd0, s1_xl24};\n    s2_ip4 <= s1_pp + {8'd0, s1_xl44};\n\
         \x20   s2_q0 <= {1'b0, s1_p0} + {1'b0, s1_p1};\n    s2_q1 <= {1'b0, s1_p2} + {1'b0, s1_p3};\n\
         \x20   s2_q2 <= s1_p4;\n    s2_hl <= s1_hlb + s1_xl;\n    s2_pp <= s1_pp;\n\
         \x20   s2_xs <= s1_xs;\n    s2_pad <= s1_pad;\n\
         \x20   s3_r <= {1'b0, s2_q0} + {1'b0, s2_q1};\n    s3_r2 <= {1'b0, s2_q2} + {2'd0, s2_ip4};\n\
         \x20   s3_fl <= {8'd0, s2_hl} + s2_pp;\n    s3_udp <= s2_udp;\n    s3_ip4 <= s2_ip4;\n\
         \x20   s3_hl <= s2_hl;\n    s3_xs <= s2_xs;\n    s3_pad <= s2_pad;\n\
         \x20   s4_s <= {1'b0, s3_r} + {2'd0, s3_r2};\n    s4_fl <= s3_fl;\n    s4_udp <= s3_udp;\n\
         \x20   s4_ip4 <= s3_ip4;\n    s4_hl <= s3_hl;\n    s4_xs <= s3_xs;\n    s4_pad <= s3_pad;\n\
         \x20   s5_cs <= ~(cs_a[16] ? cs_b : cs_a[15:0]);\n    s5_fl <= s4_fl;\n    s5_udp <= s4_udp;\n\
         \x20   s5_ip4 <= s4_ip4;\n    s5_hl <= s4_hl;\n    s5_xs <= s4_xs;\n    s5_pad <= s4_pad;\n",
    );
    seq.push_str(&format!(
        "    if (reset | !valid | take) age <= 3'd0;\n    else if (age != 3'd{LATENCY}) age <= age + 3'd1;\n"
    ));
    // Fold without a second carry chain: lo + hi, or lo + (hi + 1) when that carries.
    let mut assigns = String::from(
        "assign cs_a = {1'b0, s4_s[15:0]} + {13'd0, s4_s[19:16]};\n\
         assign cs_hi1 = {1'b0, s4_s[19:16]} + 5'd1;\n\
         assign cs_b = s4_s[15:0] + {11'd0, cs_hi1};\n",
    );
    assigns.push_str(&format!("assign ready = (age == 3'd{LATENCY});\n"));
    for b in [&p.eth_plain, &p.eth_tag, &p.ip4, &p.ip6, &p.udp, &p.bth] {
        emit_buf(&mut decl, &mut body, b);
    }
    body.push_str(&format!(
        "    {} = s5_cs;\n",
        bit_slices("ip4", 8 * ipv4::LAYOUT.len, &ipv4::CHECKSUM, 0)
    ));
    let xbits = 8 * p.ext_bytes;
    decl.push_str(&format!("reg [{}:0] xh;\n", xbits - 1));
    let mut terms = Vec::new();
    for (i, (_, b)) in p.exts.iter().enumerate() {
        emit_buf(&mut decl, &mut body, b);
        terms.push(format!("({{{xbits}{{s5_xs[{i}]}}}} & {})", b.name));
    }
    body.push_str(&format!("    xh = {};\n", terms.join(" | ")));
    // Assembly by shape.
    for (n, (tag, six)) in [(false, false), (false, true), (true, false), (true, true)]
        .into_iter()
        .enumerate()
    {
        let e = if tag { &p.eth_tag } else { &p.eth_plain };
        let i = if six { &p.ip6 } else { &p.ip4 };
        let len = shape_len(p, tag, six);
        let fill = CAP_BYTES - len - p.ext_bytes;
        let mut parts = vec![];
        if fill > 0 {
            parts.push(format!("{}'d0", 8 * fill));
        }
        parts.extend([
            "xh".to_string(),
            p.bth.name.clone(),
            p.udp.name.clone(),
            i.name.clone(),
            e.name.clone(),
        ]);
        let c = if n == 3 {
            "    else begin\n".to_string()
        } else {
            format!(
                "    {} ({}e{vl} & {}e{v6}) begin\n",
                if n == 0 { "if" } else { "else if" },
                if tag { "" } else { "!" },
                if six { "" } else { "!" }
            )
        };
        body.push_str(&c);
        body.push_str(&format!(
            "        hdr = {{{}}};\n    end\n",
            parts.join(", ")
        ));
    }
    body.push_str("    hdr_len = s5_hl;\n    frame_len = s5_fl;\n    pad = s5_pad;\n");
    format!(
        "{decl}{assigns}always @(posedge clock) begin\n{seq}end\nalways @(*) begin\n{body}end\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_places_every_carried_entry() {
        let p = plan();
        let mut seen = vec![false; ENTRIES.len()];
        let all = [&p.eth_plain, &p.eth_tag, &p.ip4, &p.ip6, &p.udp, &p.bth]
            .into_iter()
            .chain(p.exts.iter().map(|(_, b)| b));
        for b in all {
            for pl in &b.places {
                if let Val::Entry(k) = pl.val {
                    seen[k] = true;
                }
                assert!(pl.base + pl.field.end_byte() <= b.len, "{}", b.name);
            }
        }
        for (k, en) in ENTRIES.iter().enumerate() {
            let derived = matches!(en.src, Source::PayloadLen | Source::Vlan | Source::V6)
                || en.src == Source::Bth(bth::PAD_CNT);
            assert_eq!(seen[k], !derived, "{}", en.name);
        }
        assert_eq!(p.ext_bytes, 28);
    }

    #[test]
    fn the_pipeline_computes_what_compose_does() {
        let p = plan();
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let codes: Vec<u8> = OPCODES.iter().map(|o| o.code).chain([0x1F, 0xFF]).collect();
        for n in 0..3000 {
            let mut values: Vec<u64> = ENTRIES
                .iter()
                .map(|e| next() & ((1u128 << e.width) - 1) as u64)
                .collect();
            values[opcode_entry()] = codes[n % codes.len()].into();
            if n % 3 == 0 {
                values[payload_entry()] &= 0x3FFF;
            }
            let mut st = Stage::first(&values, &p);
            for k in 2..=LATENCY {
                st = st.next(k);
            }
            assert_eq!(
                compose_with(&values, &p, &st),
                compose(&values, &p),
                "case {n}"
            );
        }
    }

    #[test]
    fn verilog_declares_every_buffer() {
        let v = verilog(&plan());
        for name in ["eth_p", "eth_t", "ip4", "ip6", "udp_h", "bth_h", "xh"] {
            assert!(v.contains(&format!(" {name};")), "{name}");
        }
    }
}
