//! The header channel: every parsed field of a RoCEv2 packet packed into one wide word, with its
//! layout defined once, here, from `rnic-wire`'s field tables.
//!
//! The RX parser ([`crate::rx_parser`]) fills the word from the received headers; the software
//! side ([`HeaderRecord`]) packs and unpacks it. Entry `k` of [`ENTRIES`] occupies `width` bits
//! starting at the sum of the widths of the entries before it (entry 0 at bit 0).
//!
//! | entries | source |
//! |---|---|
//! | `payload_len` (16) | payload bytes without pad (derived) |
//! | `vlan`, `v6` (1 each) | an 802.1Q tag is present; the network layer is IPv6 |
//! | `DstMAC`, `SrcMAC` | `rnic_wire::eth` |
//! | `PCP`, `DEI`, `VID` | `rnic_wire::eth` (tag; zero without one) |
//! | `DSCP`, `ECN`, `TTL` | IPv4 or IPv6 field of that name (`TTL` = IPv6 hop limit) |
//! | `Identification`, `DF`, `Src4`, `Dst4` | IPv4 only (zero for IPv6) |
//! | `FlowLabel`, `SrcHi/Lo`, `DstHi/Lo` | IPv6 only (zero for IPv4) |
//! | `SrcPort`, `DstPort`, `Checksum` | UDP |
//! | every BTH field (reserved bits included) | `rnic_wire::bth::LAYOUT` |
//! | every field of RETH, AETH, ImmDt, IETH, AtomicETH, AtomicAckETH, DETH | `rnic_wire::ext`; zero when the opcode does not carry the header |
//!
//! Lengths (IP, UDP), the IPv4 checksum, PadCnt's pad bytes and the ICRC are not carried: the
//! transmit side derives them. The UDP checksum and the BTH reserved bits are carried so that a
//! received frame is rebuilt byte for byte.

use rnic_wire::field::Field;
use rnic_wire::opcode::Ext;
use rnic_wire::{bth, eth, ext, ipv4, ipv6, udp};

/// Where an entry's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Payload length in bytes (derived by the parser).
    PayloadLen,
    /// 1 when the frame carries an 802.1Q tag.
    Vlan,
    /// 1 when the network layer is IPv6.
    V6,
    /// A field of the Ethernet header (frame offset 0).
    Eth(Field),
    /// A field of the 802.1Q tag (frame offset 12); zero without a tag.
    Tag(Field),
    /// A field of the IP header: the IPv4 field, the IPv6 field (either may be absent: then the
    /// entry is zero for that version).
    Ip(Option<Field>, Option<Field>),
    /// A field of the UDP header.
    Udp(Field),
    /// A field of the BTH.
    Bth(Field),
    /// A field of an extension header (zero when the opcode does not carry it).
    Ext(Ext, Field),
}

/// One entry of the header word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: &'static str,
    pub width: usize,
    pub src: Source,
}

const fn e(name: &'static str, width: usize, src: Source) -> Entry {
    Entry { name, width, src }
}
const fn wf(name: &'static str, f: Field, src: Source) -> Entry {
    Entry {
        name,
        width: f.width as usize,
        src,
    }
}

/// The entries, least significant first.
pub const ENTRIES: &[Entry] = &[
    e("payload_len", 16, Source::PayloadLen),
    e("vlan", 1, Source::Vlan),
    e("v6", 1, Source::V6),
    wf("DstMAC", eth::DST, Source::Eth(eth::DST)),
    wf("SrcMAC", eth::SRC, Source::Eth(eth::SRC)),
    wf("PCP", eth::PCP, Source::Tag(eth::PCP)),
    wf("DEI", eth::DEI, Source::Tag(eth::DEI)),
    wf("VID", eth::VID, Source::Tag(eth::VID)),
    wf(
        "DSCP",
        ipv4::DSCP,
        Source::Ip(Some(ipv4::DSCP), Some(ipv6::DSCP)),
    ),
    wf(
        "ECN",
        ipv4::ECN,
        Source::Ip(Some(ipv4::ECN), Some(ipv6::ECN)),
    ),
    wf(
        "TTL",
        ipv4::TTL,
        Source::Ip(Some(ipv4::TTL), Some(ipv6::HOP_LIMIT)),
    ),
    wf(
        "Identification",
        ipv4::IDENT,
        Source::Ip(Some(ipv4::IDENT), None),
    ),
    wf("DF", ipv4::DF, Source::Ip(Some(ipv4::DF), None)),
    wf("Src4", ipv4::SRC, Source::Ip(Some(ipv4::SRC), None)),
    wf("Dst4", ipv4::DST, Source::Ip(Some(ipv4::DST), None)),
    wf(
        "FlowLabel",
        ipv6::FLOW_LABEL,
        Source::Ip(None, Some(ipv6::FLOW_LABEL)),
    ),
    wf("SrcHi", ipv6::SRC_HI, Source::Ip(None, Some(ipv6::SRC_HI))),
    wf("SrcLo", ipv6::SRC_LO, Source::Ip(None, Some(ipv6::SRC_LO))),
    wf("DstHi", ipv6::DST_HI, Source::Ip(None, Some(ipv6::DST_HI))),
    wf("DstLo", ipv6::DST_LO, Source::Ip(None, Some(ipv6::DST_LO))),
    wf("SrcPort", udp::SRC_PORT, Source::Udp(udp::SRC_PORT)),
    wf("DstPort", udp::DST_PORT, Source::Udp(udp::DST_PORT)),
    wf("UdpChecksum", udp::CHECKSUM, Source::Udp(udp::CHECKSUM)),
    wf("OpCode", bth::OPCODE, Source::Bth(bth::OPCODE)),
    wf("SE", bth::SE, Source::Bth(bth::SE)),
    wf("MigReq", bth::MIG_REQ, Source::Bth(bth::MIG_REQ)),
    wf("PadCnt", bth::PAD_CNT, Source::Bth(bth::PAD_CNT)),
    wf("TVer", bth::TVER, Source::Bth(bth::TVER)),
    wf("P_Key", bth::PKEY, Source::Bth(bth::PKEY)),
    wf("FECN", bth::FECN, Source::Bth(bth::FECN)),
    wf("BECN", bth::BECN, Source::Bth(bth::BECN)),
    wf("Resv6", bth::RESV6, Source::Bth(bth::RESV6)),
    wf("DestQP", bth::DEST_QP, Source::Bth(bth::DEST_QP)),
    wf("AckReq", bth::ACK_REQ, Source::Bth(bth::ACK_REQ)),
    wf("Resv7", bth::RESV7, Source::Bth(bth::RESV7)),
    wf("PSN", bth::PSN, Source::Bth(bth::PSN)),
    wf(
        "RETH.VA",
        ext::RETH_VA,
        Source::Ext(Ext::Reth, ext::RETH_VA),
    ),
    wf(
        "RETH.R_Key",
        ext::RETH_RKEY,
        Source::Ext(Ext::Reth, ext::RETH_RKEY),
    ),
    wf(
        "RETH.DMALength",
        ext::RETH_DMA_LEN,
        Source::Ext(Ext::Reth, ext::RETH_DMA_LEN),
    ),
    wf(
        "AETH.Syndrome",
        ext::AETH_SYNDROME,
        Source::Ext(Ext::Aeth, ext::AETH_SYNDROME),
    ),
    wf(
        "AETH.MSN",
        ext::AETH_MSN,
        Source::Ext(Ext::Aeth, ext::AETH_MSN),
    ),
    wf(
        "ImmDt",
        ext::IMMDT_IMM,
        Source::Ext(Ext::ImmDt, ext::IMMDT_IMM),
    ),
    wf(
        "IETH.R_Key",
        ext::IETH_RKEY,
        Source::Ext(Ext::Ieth, ext::IETH_RKEY),
    ),
    wf(
        "AtomicETH.VA",
        ext::ATOMIC_VA,
        Source::Ext(Ext::AtomicEth, ext::ATOMIC_VA),
    ),
    wf(
        "AtomicETH.R_Key",
        ext::ATOMIC_RKEY,
        Source::Ext(Ext::AtomicEth, ext::ATOMIC_RKEY),
    ),
    wf(
        "AtomicETH.SwapAdd",
        ext::ATOMIC_SWAP_ADD,
        Source::Ext(Ext::AtomicEth, ext::ATOMIC_SWAP_ADD),
    ),
    wf(
        "AtomicETH.Compare",
        ext::ATOMIC_COMPARE,
        Source::Ext(Ext::AtomicEth, ext::ATOMIC_COMPARE),
    ),
    wf(
        "AtomicAckETH.Orig",
        ext::ATOMIC_ACK_ORIG,
        Source::Ext(Ext::AtomicAckEth, ext::ATOMIC_ACK_ORIG),
    ),
    wf(
        "DETH.Q_Key",
        ext::DETH_QKEY,
        Source::Ext(Ext::Deth, ext::DETH_QKEY),
    ),
    wf(
        "DETH.SrcQP",
        ext::DETH_SRC_QP,
        Source::Ext(Ext::Deth, ext::DETH_SRC_QP),
    ),
    wf(
        "DETH.Reserved",
        ext::DETH_RESV,
        Source::Ext(Ext::Deth, ext::DETH_RESV),
    ),
];

const fn total_bits(entries: &[Entry]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < entries.len() {
        n += entries[i].width;
        i += 1;
    }
    n
}

/// Width of the header word.
pub const HDR_BITS: usize = total_bits(ENTRIES);

/// 64-bit words of the header word.
pub const HDR_WORDS: usize = HDR_BITS.div_ceil(64);

/// Bit offset of entry `name` in the header word.
pub fn offset_of(name: &str) -> Option<(usize, usize)> {
    let mut at = 0;
    for en in ENTRIES {
        if en.name == name {
            return Some((at, en.width));
        }
        at += en.width;
    }
    None
}

/// The header word as values by entry, in [`ENTRIES`] order; the software form of the channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderRecord {
    pub values: Vec<u64>,
}

crate::field_record!(
    HeaderRecord,
    "header entry",
    ENTRIES.iter().map(|en| (en.name, en.width)),
    HDR_WORDS
);

/// The methods every record of named fields has (the header word, the transport header, the
/// address vector): a struct `$t { values: Vec<u64> }` whose entries, in order from bit 0, are
/// the `(name, width)` pairs `$entries` yields, packed into `$words` 64-bit words.
#[macro_export]
macro_rules! field_record {
    ($t:ident, $what:literal, $entries:expr, $words:expr) => {
        impl $t {
            /// A record of zeros.
            pub fn zero() -> Self {
                $t {
                    values: vec![0; $entries.count()],
                }
            }

            fn index(name: &str) -> (usize, usize) {
                $entries
                    .enumerate()
                    .find(|(_, (n, _))| *n == name)
                    .map(|(i, (_, w))| (i, w))
                    .unwrap_or_else(|| panic!("no {} {name}", $what))
            }

            /// The value of entry `name` (panics on an unknown name: names are compile-time
            /// facts).
            pub fn get(&self, name: &str) -> u64 {
                self.values[Self::index(name).0]
            }

            /// Sets entry `name` (truncated to its width).
            pub fn set(&mut self, name: &str, v: u64) {
                let (i, w) = Self::index(name);
                self.values[i] = v & $crate::header_channel::mask(w);
            }

            /// Packs into 64-bit words, least significant first.
            pub fn pack(&self) -> [u64; $words] {
                let mut words = [0u64; $words];
                $crate::header_channel::pack_values(
                    $entries.map(|(_, w)| w),
                    &self.values,
                    &mut words,
                );
                words
            }

            /// Unpacks from 64-bit words, least significant first.
            pub fn unpack(words: &[u64]) -> Self {
                $t {
                    values: $crate::header_channel::unpack_values($entries.map(|(_, w)| w), words),
                }
            }

            /// `name=value` pairs of the non-zero entries, for messages.
            pub fn describe(&self) -> String {
                $entries
                    .zip(&self.values)
                    .filter(|(_, v)| **v != 0)
                    .map(|((n, _), v)| format!("{n}={v:#x}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        }
    };
}

/// Packs values of the given widths into 64-bit words, the first value at bit 0 (the layout
/// of every record here: header channel, transport header, address vector).
pub fn pack_values(widths: impl Iterator<Item = usize>, values: &[u64], words: &mut [u64]) {
    let mut at = 0;
    for (w, &v) in widths.zip(values) {
        for b in 0..w {
            if v >> b & 1 == 1 {
                words[(at + b) / 64] |= 1 << ((at + b) % 64);
            }
        }
        at += w;
    }
}

/// `w` bits (at most 64) of 64-bit words, least significant first, from bit `at`; bits past
/// the words are zero.
pub fn bits_at(words: &[u64], at: usize, w: usize) -> u64 {
    let mut v = 0u64;
    for b in 0..w {
        let bit = at + b;
        if words
            .get(bit / 64)
            .is_some_and(|x| x >> (bit % 64) & 1 == 1)
        {
            v |= 1 << b;
        }
    }
    v
}

/// The inverse of [`pack_values`].
pub fn unpack_values(widths: impl Iterator<Item = usize>, words: &[u64]) -> Vec<u64> {
    let mut at = 0;
    widths
        .map(|w| {
            let v = bits_at(words, at, w);
            at += w;
            v
        })
        .collect()
}

/// A mask of `w` low bits.
pub fn mask(w: usize) -> u64 {
    if w >= 64 { u64::MAX } else { (1u64 << w) - 1 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rnic_wire::field::all_layouts;

    /// Every field of every layout is carried, except those the transmit side derives (lengths,
    /// version, IHL, protocol, checksums, fragment fields, TPID, EtherType, NextHeader).
    #[test]
    fn every_wire_field_is_carried() {
        let derived = [
            "EtherType",
            "TPID",
            "Version",
            "IHL",
            "TotalLength",
            "MF",
            "FragmentOffset",
            "Protocol",
            "HeaderChecksum",
            "PayloadLength",
            "NextHeader",
            "Length",
        ];
        let carried: Vec<Field> = ENTRIES
            .iter()
            .flat_map(|en| match en.src {
                Source::Eth(f) | Source::Tag(f) | Source::Udp(f) | Source::Bth(f) => vec![f],
                Source::Ext(_, f) => vec![f],
                Source::Ip(a, b) => a.into_iter().chain(b).collect(),
                _ => vec![],
            })
            .collect();
        for layout in all_layouts() {
            for f in layout.fields {
                if derived.contains(&f.name) {
                    continue;
                }
                assert!(
                    carried.contains(f),
                    "{}.{} is not carried",
                    layout.name,
                    f.name
                );
            }
        }
        for en in ENTRIES {
            if let Source::Ip(Some(a), Some(b)) = en.src {
                assert_eq!(a.width, b.width, "{}", en.name);
            }
        }
    }

    #[test]
    fn pack_unpack_round_trip() {
        let mut r = HeaderRecord::zero();
        for (i, en) in ENTRIES.iter().enumerate() {
            r.values[i] = 0x9E37_79B9_7F4A_7C15u64.rotate_left(i as u32) & mask(en.width);
        }
        assert_eq!(HeaderRecord::unpack(&r.pack()), r);
        assert_eq!(offset_of("payload_len"), Some((0, 16)));
        assert_eq!(offset_of("vlan"), Some((16, 1)));
    }
}
