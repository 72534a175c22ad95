//! The inverse of [`crate::header_compact`] on the transmit side: a send descriptor (a
//! [transport header](crate::transport_header): BTH fields, payload length, the extension-header
//! union), the QP's [address vector](crate::address_vector), our GID (from the GID table, by the
//! vector's `sgid_index`), our MAC and the IPv4 TTL in; the header channel word the transmit
//! builder composes a frame from, out. Wiring and muxes by IP version, from the table
//! [`sources`]; combinational.
//!
//! The frames are the transport model's (`Env::send`): no VLAN tag, IPv4 identification 0 with
//! DF set, UDP checksum 0, every reserved bit and MigReq 0. An extension field takes its union
//! slot whether or not the opcode carries its header: the composer writes only the headers the
//! opcode calls for.

use rust_hdl::prelude::*;

use crate::address_vector::{AV_BITS, av_offset_of};
use crate::header_channel::{ENTRIES as HDR_ENTRIES, HDR_BITS, HeaderRecord, bits_at, mask};
use crate::header_extract::{bits_from_words, words_of};
use crate::transport_header::{TH_BITS, th_offset_of};

/// Where bits of a header channel entry come from: `(source, low bit in it)`, as many bits as
/// the entry is wide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sel {
    /// An entry of the send descriptor.
    Desc(&'static str, usize),
    /// An entry of the address vector.
    Av(&'static str, usize),
    /// Our GID (`sgid`, 128 bits).
    Sgid(usize),
    SrcMac,
    Ttl,
    Const(u64),
}

/// When a source applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    Always,
    V4,
    V6,
}

use Sel::*;
use When::*;

/// The sources of header channel entry `name`, ORed; an entry with none is zero.
pub fn sources(name: &str) -> &'static [(Sel, When)] {
    match name {
        "payload_len" => &[(Desc("payload_len", 0), Always)],
        "v6" => &[(Av("V6", 0), Always)],
        "DstMAC" => &[(Av("DMAC", 0), Always)],
        "SrcMAC" => &[(SrcMac, Always)],
        "DSCP" => &[(Av("TRAFFIC_CLASS", 2), Always)],
        "ECN" => &[(Av("TRAFFIC_CLASS", 0), Always)],
        "TTL" => &[(Ttl, V4), (Av("HOP_LIMIT", 0), V6)],
        "DF" => &[(Const(1), V4)],
        "Src4" => &[(Sgid(0), V4)],
        "Dst4" => &[(Av("DGID_LO", 0), V4)],
        "FlowLabel" => &[(Av("FLOW_LABEL", 0), V6)],
        "SrcHi" => &[(Sgid(64), V6)],
        "SrcLo" => &[(Sgid(0), V6)],
        "DstHi" => &[(Av("DGID_HI", 0), V6)],
        "DstLo" => &[(Av("DGID_LO", 0), V6)],
        "SrcPort" => &[(Av("UDP_SPORT", 0), Always)],
        "DstPort" => &[(Const(rnic_wire::udp::ROCE_PORT as u64), Always)],
        "OpCode" => &[(Desc("OpCode", 0), Always)],
        "SE" => &[(Desc("SE", 0), Always)],
        "P_Key" => &[(Desc("P_Key", 0), Always)],
        "DestQP" => &[(Desc("DestQP", 0), Always)],
        "AckReq" => &[(Desc("AckReq", 0), Always)],
        "PSN" => &[(Desc("PSN", 0), Always)],
        "RETH.VA" | "AtomicETH.VA" | "AtomicAckETH.Orig" => &[(Desc("ext_va", 0), Always)],
        "RETH.R_Key" | "AtomicETH.R_Key" | "DETH.Q_Key" => &[(Desc("ext_key", 0), Always)],
        "AETH.MSN" => &[(Desc("ext_key", 0), Always)],
        "AETH.Syndrome" => &[(Desc("ext_key", 24), Always)],
        "RETH.DMALength" | "DETH.SrcQP" | "AtomicETH.SwapAdd" => &[(Desc("ext_mid", 0), Always)],
        "ImmDt" | "IETH.R_Key" => &[(Desc("ext_mid", 32), Always)],
        "AtomicETH.Compare" => &[(Desc("ext_cmp", 0), Always)],
        _ => &[],
    }
}

/// Header channel entries that are zero on purpose (no tag, fields the model sends as 0, fields
/// the composer derives).
pub const ZERO: &[&str] = &[
    "vlan",
    "PCP",
    "DEI",
    "VID",
    "Identification",
    "UdpChecksum",
    "MigReq",
    "PadCnt",
    "TVer",
    "FECN",
    "BECN",
    "Resv6",
    "Resv7",
    "DETH.Reserved",
];

/// The bus a source reads, its Verilog name, and the bit its field starts at there.
fn bus_of(s: Sel) -> Option<(&'static str, usize, usize)> {
    let (bus, at, width) = match s {
        Desc(n, lo) => {
            let (o, w) = th_offset_of(n).unwrap_or_else(|| panic!("no descriptor entry {n}"));
            ("desc", o + lo, w - lo)
        }
        Av(n, lo) => {
            let (o, w) = av_offset_of(n).unwrap_or_else(|| panic!("no AV entry {n}"));
            ("av", o + lo, w - lo)
        }
        Sgid(lo) => ("sgid", lo, 128 - lo),
        SrcMac => ("src_mac", 0, 48),
        Ttl => ("ttl", 0, 8),
        Const(_) => return None,
    };
    Some((bus, at, width))
}

/// What the block computes, in software: the header channel record.
pub fn expand(desc: &[u64], av: &[u64], sgid: u128, src_mac: u64, ttl: u8) -> HeaderRecord {
    let v6 = {
        let (o, _) = av_offset_of("V6").expect("V6");
        bits_at(av, o, 1) == 1
    };
    let sgid_w = [sgid as u64, (sgid >> 64) as u64];
    let mut r = HeaderRecord::zero();
    for (k, en) in HDR_ENTRIES.iter().enumerate() {
        let mut v = 0u64;
        for &(s, when) in sources(en.name) {
            let on = match when {
                Always => true,
                V4 => !v6,
                V6 => v6,
            };
            if !on {
                continue;
            }
            v |= match s {
                Desc(..) | Av(..) | Sgid(_) => {
                    let (bus, at, _) = bus_of(s).expect("a bus");
                    let words: &[u64] = match bus {
                        "desc" => desc,
                        "av" => av,
                        _ => &sgid_w,
                    };
                    bits_at(words, at, en.width)
                }
                SrcMac => src_mac,
                Ttl => u64::from(ttl),
                Const(c) => c,
            };
        }
        r.values[k] = v & mask(en.width);
    }
    r
}

#[derive(LogicBlock, Default)]
pub struct HeaderExpand {
    /// The send descriptor (a transport header; `class` and the source GID are not read).
    pub desc: Signal<In, Bits<TH_BITS>>,
    /// The QP's address vector.
    pub av: Signal<In, Bits<AV_BITS>>,
    /// Our GID: the GID table's entry `sgid_index`.
    pub sgid: Signal<In, Bits<128>>,
    pub src_mac: Signal<In, Bits<48>>,
    /// The IPv4 TTL.
    pub ttl: Signal<In, Bits<8>>,
    /// The header channel word.
    pub rec: Signal<Out, Bits<HDR_BITS>>,
}

impl Logic for HeaderExpand {
    fn update(&mut self) {
        let sg = words_of(self.sgid.val());
        let r = expand(
            &words_of(self.desc.val()),
            &words_of(self.av.val()),
            u128::from(sg[0]) | u128::from(sg[1]) << 64,
            self.src_mac.val().to_u64(),
            self.ttl.val().to_u64() as u8,
        );
        self.rec.next = bits_from_words::<HDR_BITS>(&r.pack());
    }

    fn connect(&mut self) {
        self.rec.connect();
    }

    /// `rec` as one concatenation of the header channel's entries (the last first), each the
    /// OR of its sources, a source for one IP version gated by the vector's `v6` bit.
    fn hdl(&self) -> Verilog {
        let (v6, _) = av_offset_of("V6").expect("V6");
        let fields: Vec<String> = HDR_ENTRIES
            .iter()
            .rev()
            .map(|en| {
                let w = en.width;
                let terms: Vec<String> = sources(en.name)
                    .iter()
                    .map(|&(s, when)| {
                        let t = match bus_of(s) {
                            Some((bus, at, have)) => {
                                let take = w.min(have);
                                if take == w {
                                    format!("{bus}[{}:{at}]", at + take - 1)
                                } else {
                                    format!("{{{}'d0, {bus}[{}:{at}]}}", w - take, at + take - 1)
                                }
                            }
                            None => match s {
                                Const(c) => format!("{w}'d{c}"),
                                _ => unreachable!(),
                            },
                        };
                        match when {
                            Always => t,
                            V4 => format!("(av[{v6}] ? {w}'d0 : {t})"),
                            V6 => format!("(av[{v6}] ? {t} : {w}'d0)"),
                        }
                    })
                    .collect();
                if terms.is_empty() {
                    format!("    {w}'d0")
                } else {
                    format!("    ({})", terms.join(" | "))
                }
            })
            .collect();
        Verilog::Custom(format!(
            "always @(*) rec = {{\n{}\n}};\n",
            fields.join(",\n")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every header channel entry is sourced or zero on purpose, and every source is as wide
    /// as its entry (or is a constant or our own field, zero-extended).
    #[test]
    fn every_entry_is_accounted_for() {
        for en in HDR_ENTRIES {
            let s = sources(en.name);
            assert!(
                !s.is_empty() || ZERO.contains(&en.name),
                "{} has no source",
                en.name
            );
            assert!(
                s.is_empty() || !ZERO.contains(&en.name),
                "{} is both",
                en.name
            );
            for &(sel, _) in s {
                if let Some((bus, _, have)) = bus_of(sel) {
                    assert!(have >= en.width, "{}: {bus} has {have} bits", en.name);
                }
            }
        }
    }
}
