//! The transport header: what the transport engines need of an accepted RoCEv2 packet, in a word
//! of [`TH_BITS`] bits instead of the header channel's [`HDR_BITS`](crate::header_channel::HDR_BITS)
//! (which also carries the MACs, the tag, both IP versions and the fields only a rebuild needs).
//! The layout is defined once, here, from the header channel's entry names; [`header_compact`]
//! (hardware) and [`TransportHeader`] (software) both follow [`ENTRIES`].
//!
//! | entry | bits | what |
//! |---|---|---|
//! | `class` | 2 | the opcode's consumer ([`Class`]): responder, completer, congestion logic |
//! | `payload_len` | 16 | payload bytes without pad |
//! | `v6`, `ECN` | 1, 2 | IP version; the ECN field (CE marks make CNPs) |
//! | `OpCode`, `SE`, `P_Key`, `DestQP`, `AckReq`, `PSN` | 74 | the BTH fields the transport reads |
//! | `src_gid_lo`, `src_gid_hi` | 128 | the source address as a GID (IPv4: `::ffff:a.b.c.d`), compared with the QP's address vector |
//! | `ext_va`, `ext_key`, `ext_mid`, `ext_cmp` | 224 | the extension-header union (below) |
//!
//! The extension headers share four slots; which meaning a slot has follows from the opcode:
//!
//! | slot | RETH (+ImmDt) | AtomicETH | AETH (+AtomicAckETH) | DETH (+ImmDt) | SEND_*_IMM, *_INV |
//! |---|---|---|---|---|---|
//! | `ext_va` (64) | VA | VA | original value | | |
//! | `ext_key` (32) | R_Key | R_Key | syndrome << 24 \| MSN | Q_Key | |
//! | `ext_mid` (64) | DMALength \| ImmDt << 32 | SwapAdd | | SrcQP \| ImmDt << 32 | ImmDt / IETH << 32 |
//! | `ext_cmp` (64) | | Compare | | | |
//!
//! Because the header channel zeroes every extension field its opcode does not carry, each slot
//! is the OR of its sources: no decode by opcode is needed to fill it.
//!
//! [`header_compact`]: crate::header_compact

use crate::header_channel::{HeaderRecord, mask, offset_of};

/// Which engine takes a packet, by opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// RC requests (SEND, WRITE, READ request, atomics) and UD SENDs: the responder.
    Request = 0,
    /// READ responses, ACKs and atomic ACKs: the completer.
    Response = 1,
    /// Congestion notification packets: the reaction point.
    Cnp = 2,
    /// Anything else the parser accepts (UC): no engine; dropped and counted.
    Other = 3,
}

impl Class {
    pub fn from_bits(v: u64) -> Class {
        match v & 3 {
            0 => Class::Request,
            1 => Class::Response,
            2 => Class::Cnp,
            _ => Class::Other,
        }
    }
}

/// The class of an opcode.
pub fn class_of(opcode: u8) -> Class {
    match opcode {
        0x00..=0x0C | 0x13 | 0x14 | 0x16 | 0x17 | 0x64 | 0x65 => Class::Request,
        0x0D..=0x12 => Class::Response,
        0x81 => Class::Cnp,
        _ => Class::Other,
    }
}

/// Where part of an entry's value comes from; an entry is the OR of its parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    /// The header channel entry of that name, shifted left by the given number of bits.
    Hdr(&'static str, usize),
    /// `0xFFFF << 32` when the packet is IPv4 (the IPv4-mapped GID's prefix), else 0.
    V4Prefix,
    /// The opcode's [`Class`].
    Class,
}

/// One entry of the transport header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: &'static str,
    pub width: usize,
    pub from: &'static [Src],
}

const fn e(name: &'static str, width: usize, from: &'static [Src]) -> Entry {
    Entry { name, width, from }
}

use Src::Hdr;

/// The entries, least significant first.
pub const ENTRIES: &[Entry] = &[
    e("class", 2, &[Src::Class]),
    e("payload_len", 16, &[Hdr("payload_len", 0)]),
    e("v6", 1, &[Hdr("v6", 0)]),
    e("ECN", 2, &[Hdr("ECN", 0)]),
    e("OpCode", 8, &[Hdr("OpCode", 0)]),
    e("SE", 1, &[Hdr("SE", 0)]),
    e("P_Key", 16, &[Hdr("P_Key", 0)]),
    e("DestQP", 24, &[Hdr("DestQP", 0)]),
    e("AckReq", 1, &[Hdr("AckReq", 0)]),
    e("PSN", 24, &[Hdr("PSN", 0)]),
    e(
        "src_gid_lo",
        64,
        &[Hdr("SrcLo", 0), Hdr("Src4", 0), Src::V4Prefix],
    ),
    e("src_gid_hi", 64, &[Hdr("SrcHi", 0)]),
    e(
        "ext_va",
        64,
        &[
            Hdr("RETH.VA", 0),
            Hdr("AtomicETH.VA", 0),
            Hdr("AtomicAckETH.Orig", 0),
        ],
    ),
    e(
        "ext_key",
        32,
        &[
            Hdr("RETH.R_Key", 0),
            Hdr("AtomicETH.R_Key", 0),
            Hdr("DETH.Q_Key", 0),
            Hdr("AETH.MSN", 0),
            Hdr("AETH.Syndrome", 24),
        ],
    ),
    e(
        "ext_mid",
        64,
        &[
            Hdr("RETH.DMALength", 0),
            Hdr("DETH.SrcQP", 0),
            Hdr("ImmDt", 32),
            Hdr("IETH.R_Key", 32),
            Hdr("AtomicETH.SwapAdd", 0),
        ],
    ),
    e("ext_cmp", 64, &[Hdr("AtomicETH.Compare", 0)]),
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

/// Width of the transport header.
pub const TH_BITS: usize = total_bits(ENTRIES);

/// 64-bit words of the transport header.
pub const TH_WORDS: usize = TH_BITS.div_ceil(64);

/// Bit offset and width of entry `name`.
pub fn th_offset_of(name: &str) -> Option<(usize, usize)> {
    let mut at = 0;
    for en in ENTRIES {
        if en.name == name {
            return Some((at, en.width));
        }
        at += en.width;
    }
    None
}

/// The transport header as values by entry, in [`ENTRIES`] order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransportHeader {
    pub values: Vec<u64>,
}

crate::field_record!(
    TransportHeader,
    "transport header entry",
    ENTRIES.iter().map(|en| (en.name, en.width)),
    TH_WORDS
);

impl TransportHeader {
    /// What [`header_compact`](crate::header_compact) makes of a header channel word.
    pub fn from_record(r: &HeaderRecord) -> Self {
        let mut t = Self::zero();
        for (i, en) in ENTRIES.iter().enumerate() {
            let mut v = 0u64;
            for f in en.from {
                v |= match *f {
                    Src::Hdr(name, sh) => r.get(name) << sh,
                    Src::V4Prefix => {
                        if r.get("v6") == 0 {
                            0xFFFF << 32
                        } else {
                            0
                        }
                    }
                    Src::Class => class_of(r.get("OpCode") as u8) as u64,
                };
            }
            t.values[i] = v & mask(en.width);
        }
        t
    }

    pub fn class(&self) -> Class {
        Class::from_bits(self.get("class"))
    }

    /// The source GID (16 bytes, network order).
    pub fn src_gid(&self) -> [u8; 16] {
        let mut g = [0u8; 16];
        g[..8].copy_from_slice(&self.get("src_gid_hi").to_be_bytes());
        g[8..].copy_from_slice(&self.get("src_gid_lo").to_be_bytes());
        g
    }
}

/// Every header channel entry an entry reads, with its offset and width there.
pub fn sources(en: &Entry) -> Vec<(usize, usize, usize)> {
    en.from
        .iter()
        .filter_map(|f| match *f {
            Src::Hdr(name, sh) => {
                let (off, w) = offset_of(name)
                    .unwrap_or_else(|| panic!("{}: no header channel entry {name}", en.name));
                Some((off, w, sh))
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rnic_wire::opcode::{OPCODES, Transport};

    /// Every source names a header channel entry and fits its slot; the classes agree with
    /// the opcode table's names.
    #[test]
    fn layout_is_consistent() {
        for en in ENTRIES {
            for (_, w, sh) in sources(en) {
                assert!(w + sh <= en.width, "{}: a source overflows", en.name);
            }
        }
        assert_eq!(TH_BITS, 447);
        for info in OPCODES.iter() {
            let want = match info.transport {
                Transport::Cnp => Class::Cnp,
                Transport::Uc => Class::Other,
                _ if info.name.starts_with("RDMA_READ_RESPONSE")
                    || info.name.ends_with("ACKNOWLEDGE") =>
                {
                    Class::Response
                }
                _ => Class::Request,
            };
            assert_eq!(class_of(info.code), want, "{info}");
        }
    }

    /// No two sources of one slot that an opcode can carry together overlap.
    #[test]
    fn union_slots_do_not_collide() {
        use rnic_wire::opcode::Ext;
        let fields_of = |x: Ext| -> &'static [&'static str] {
            match x {
                Ext::Reth => &["RETH.VA", "RETH.R_Key", "RETH.DMALength"],
                Ext::Aeth => &["AETH.Syndrome", "AETH.MSN"],
                Ext::ImmDt => &["ImmDt"],
                Ext::Ieth => &["IETH.R_Key"],
                Ext::AtomicEth => &[
                    "AtomicETH.VA",
                    "AtomicETH.R_Key",
                    "AtomicETH.SwapAdd",
                    "AtomicETH.Compare",
                ],
                Ext::AtomicAckEth => &["AtomicAckETH.Orig"],
                Ext::Deth => &["DETH.Q_Key", "DETH.SrcQP"],
                Ext::Cnp => &[],
            }
        };
        for info in OPCODES.iter() {
            let carried: Vec<&str> = info
                .headers
                .iter()
                .flat_map(|h| fields_of(*h))
                .copied()
                .collect();
            for en in ENTRIES {
                let mut used = 0u128;
                for f in en.from {
                    if let Src::Hdr(name, sh) = *f {
                        if !carried.contains(&name) {
                            continue;
                        }
                        let w = offset_of(name).unwrap().1;
                        let bits = ((1u128 << w) - 1) << sh;
                        assert_eq!(used & bits, 0, "{info}: {name} collides in {}", en.name);
                        used |= bits;
                    }
                }
            }
        }
    }

    #[test]
    fn pack_unpack_round_trip() {
        let mut t = TransportHeader::zero();
        for (i, en) in ENTRIES.iter().enumerate() {
            t.values[i] = 0x9E37_79B9_7F4A_7C15u64.rotate_left(i as u32) & mask(en.width);
        }
        assert_eq!(TransportHeader::unpack(&t.pack()), t);
        assert_eq!(th_offset_of("class"), Some((0, 2)));
    }
}
