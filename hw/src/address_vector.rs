//! The address vector: where a QP's packets go, one table row per QP (RC) or per address
//! handle (UD), defined once here. It mirrors the transport model's `AddressVector` (peer MAC,
//! our IP and the peer's, UDP source port, traffic class, IPv6 hop limit and flow label), with
//! our IP as an index into the NIC's GID table, so that a row stays narrow in block RAM.
//!
//! | entry | bits | what |
//! |---|---|---|
//! | `dmac` | 48 | the peer's MAC |
//! | `dgid_lo`, `dgid_hi` | 128 | the peer's address as a GID (IPv4: `::ffff:a.b.c.d`) |
//! | `sgid_index` | 4 | our address: an entry of the NIC's GID table |
//! | `udp_sport` | 16 | UDP source port (the driver resolves the model's "0 = from the QPN") |
//! | `traffic_class` | 8 | the IP TOS / traffic class byte (DSCP << 2 \| ECN) |
//! | `hop_limit` | 8 | IPv6 hop limit (IPv4 uses the NIC's TTL) |
//! | `flow_label` | 20 | IPv6 flow label |
//! | `v6` | 1 | the path is IPv6 |

use crate::header_channel::{mask, pack_values, unpack_values};

/// One entry of the address vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: &'static str,
    pub width: usize,
}

const fn e(name: &'static str, width: usize) -> Entry {
    Entry { name, width }
}

/// The entries, least significant first.
pub const ENTRIES: &[Entry] = &[
    e("dmac", 48),
    e("dgid_lo", 64),
    e("dgid_hi", 64),
    e("sgid_index", 4),
    e("udp_sport", 16),
    e("traffic_class", 8),
    e("hop_limit", 8),
    e("flow_label", 20),
    e("v6", 1),
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

/// Width of an address vector.
pub const AV_BITS: usize = total_bits(ENTRIES);

/// 64-bit words of an address vector.
pub const AV_WORDS: usize = AV_BITS.div_ceil(64);

/// Bit offset and width of entry `name`.
pub fn av_offset_of(name: &str) -> Option<(usize, usize)> {
    let mut at = 0;
    for en in ENTRIES {
        if en.name == name {
            return Some((at, en.width));
        }
        at += en.width;
    }
    None
}

/// An address vector as values by entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AvRecord {
    pub values: Vec<u64>,
}

impl AvRecord {
    pub fn zero() -> Self {
        AvRecord {
            values: vec![0; ENTRIES.len()],
        }
    }

    fn index(name: &str) -> usize {
        ENTRIES
            .iter()
            .position(|en| en.name == name)
            .unwrap_or_else(|| panic!("no address vector entry {name}"))
    }

    pub fn get(&self, name: &str) -> u64 {
        self.values[Self::index(name)]
    }

    pub fn set(&mut self, name: &str, v: u64) {
        let i = Self::index(name);
        self.values[i] = v & mask(ENTRIES[i].width);
    }

    /// Sets the peer's GID (16 bytes, network order).
    pub fn set_dgid(&mut self, g: [u8; 16]) {
        self.set("dgid_hi", u64::from_be_bytes(g[..8].try_into().unwrap()));
        self.set("dgid_lo", u64::from_be_bytes(g[8..].try_into().unwrap()));
    }

    /// Packs into 64-bit words, least significant first.
    pub fn pack(&self) -> [u64; AV_WORDS] {
        let mut words = [0u64; AV_WORDS];
        pack_values(ENTRIES.iter().map(|en| en.width), &self.values, &mut words);
        words
    }

    /// Unpacks from 64-bit words, least significant first.
    pub fn unpack(words: &[u64]) -> Self {
        AvRecord {
            values: unpack_values(ENTRIES.iter().map(|en| en.width), words),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_unpack_round_trip() {
        let mut r = AvRecord::zero();
        for (i, en) in ENTRIES.iter().enumerate() {
            r.values[i] = 0x9E37_79B9_7F4A_7C15u64.rotate_left(3 * i as u32) & mask(en.width);
        }
        assert_eq!(AvRecord::unpack(&r.pack()), r);
        assert_eq!(AV_BITS, 233);
    }
}
