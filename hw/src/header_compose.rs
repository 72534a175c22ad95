//! Header composition: a header word in, the frame's header bytes out (Ethernet, tag, IPv4 or
//! IPv6, UDP, BTH, extension headers), generated from `rnic-wire`'s field tables and opcode
//! table. The inverse of [`crate::header_extract`].
//!
//! A custom block, purely combinational: its `update` simulates by writing the fields into bytes
//! with the wire model's `Field::set`, and its `hdl` writes Verilog from the same placement plan
//! ([`plan`]), so a change of a field in `rnic-wire` changes both. The transmit side derives what
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
use crate::header_extract::{
    CAP_BITS, CAP_BYTES, bit_slices, bits_from_words, ext_len_chain, op_any, words_of,
};
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

/// The composition block.
#[derive(LogicBlock)]
pub struct HeaderCompose {
    /// The header word.
    pub rec: Signal<In, Bits<HDR_BITS>>,
    /// Header bytes, byte `j` in bits `8j..8j+7`.
    pub hdr: Signal<Out, Bits<CAP_BITS>>,
    pub hdr_len: Signal<Out, Bits<8>>,
    pub pad: Signal<Out, Bits<2>>,
    pub frame_len: Signal<Out, Bits<16>>,
    _plan: Plan,
    _last: Option<Vec<u64>>,
}

impl Default for HeaderCompose {
    fn default() -> Self {
        HeaderCompose {
            rec: Default::default(),
            hdr: Default::default(),
            hdr_len: Default::default(),
            pad: Default::default(),
            frame_len: Default::default(),
            _plan: plan(),
            _last: None,
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
        if self._last.as_ref() == Some(&words) {
            return;
        }
        let c = compose(&unpack(&words), &self._plan);
        self._last = Some(words);
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
        Val::Derived(Derived::Ip4Len) => "ip4_len".into(),
        Val::Derived(Derived::UdpLen) => "udp_len".into(),
        Val::Derived(Derived::Pad) => "pad".into(),
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
    decl.push_str(
        "reg [15:0] ethertype;\nreg [7:0] ext_len;\nreg [15:0] udp_len;\nreg [15:0] ip4_len;\n\
         reg [19:0] cs_sum;\nreg [16:0] cs_f1;\nreg [15:0] cs_f2;\n",
    );
    body.push_str(&format!(
        "    ethertype = e{v6} ? 16'd{} : 16'd{};\n",
        eth::ETHERTYPE_IPV6,
        eth::ETHERTYPE_IPV4
    ));
    body.push_str(&format!("    pad = 2'd0 - e{pl}[1:0];\n"));
    body.push_str(&format!(
        "    ext_len = {};\n",
        ext_len_chain(&format!("e{op}"))
    ));
    body.push_str(&format!(
        "    udp_len = 16'd{} + {{8'd0, ext_len}} + e{pl} + {{14'd0, pad}};\n",
        udp::LAYOUT.len + bth::LAYOUT.len + 4
    ));
    body.push_str(&format!(
        "    ip4_len = udp_len + 16'd{};\n",
        ipv4::LAYOUT.len
    ));
    for b in [&p.eth_plain, &p.eth_tag, &p.ip4, &p.ip6, &p.udp, &p.bth] {
        emit_buf(&mut decl, &mut body, b);
    }
    // The IPv4 checksum over the header just composed (its checksum field still zero).
    let words: Vec<String> = (0..ipv4::LAYOUT.len / 2)
        .map(|k| {
            let f = Field::new("word", 2 * k, 0, 16);
            format!(
                "{{4'd0, {}}}",
                bit_slices("ip4", 8 * ipv4::LAYOUT.len, &f, 0)
            )
        })
        .collect();
    body.push_str(&format!("    cs_sum = {};\n", words.join(" + ")));
    body.push_str("    cs_f1 = {1'b0, cs_sum[15:0]} + {13'd0, cs_sum[19:16]};\n");
    body.push_str("    cs_f2 = cs_f1[15:0] + {15'd0, cs_f1[16]};\n");
    body.push_str(&format!(
        "    {} = ~cs_f2;\n",
        bit_slices("ip4", 8 * ipv4::LAYOUT.len, &ipv4::CHECKSUM, 0)
    ));
    let xbits = 8 * p.ext_bytes;
    decl.push_str(&format!("reg [{}:0] xh;\n", xbits - 1));
    let mut xchain = format!("{xbits}'d0");
    for (codes, b) in p.exts.iter().rev() {
        emit_buf(&mut decl, &mut body, b);
        xchain = format!(
            "{} ? {} : ({xchain})",
            op_any(codes).replace("opcode", &format!("e{op}")),
            b.name
        );
    }
    body.push_str(&format!("    xh = {xchain};\n"));
    // Assembly by shape.
    let mut shapes = Vec::new();
    for tag in [false, true] {
        for six in [false, true] {
            let e = if tag { &p.eth_tag } else { &p.eth_plain };
            let i = if six { &p.ip6 } else { &p.ip4 };
            let len = e.len + i.len + p.udp.len + p.bth.len;
            let fill = CAP_BYTES - len - p.ext_bytes;
            let mut parts = vec![];
            if fill > 0 {
                parts.push(format!("{}'d0", 8 * fill));
            }
            parts.push("xh".to_string());
            parts.push(p.bth.name.clone());
            parts.push(p.udp.name.clone());
            parts.push(i.name.clone());
            parts.push(e.name.clone());
            shapes.push((tag, six, len, parts.join(", ")));
        }
    }
    let cond = |tag: bool, six: bool| {
        format!(
            "({}e{vl} & {}e{v6})",
            if tag { "" } else { "!" },
            if six { "" } else { "!" }
        )
    };
    for (n, (tag, six, len, cat)) in shapes.iter().enumerate() {
        let kw = if n == 0 { "if" } else { "else if" };
        let c = if n == 3 {
            "    else begin\n".to_string()
        } else {
            format!("    {kw} {} begin\n", cond(*tag, *six))
        };
        body.push_str(&c);
        body.push_str(&format!("        hdr = {{{cat}}};\n"));
        body.push_str(&format!("        hdr_len = 8'd{len} + ext_len;\n"));
        body.push_str("    end\n");
    }
    body.push_str(&format!(
        "    frame_len = {{8'd0, hdr_len}} + e{pl} + {{14'd0, pad}};\n"
    ));
    format!("{decl}always @(*) begin\n{body}end\n")
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
    fn verilog_declares_every_buffer() {
        let v = verilog(&plan());
        for name in ["eth_p", "eth_t", "ip4", "ip6", "udp_h", "bth_h", "xh"] {
            assert!(v.contains(&format!(" {name};")), "{name}");
        }
    }
}
