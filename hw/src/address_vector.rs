//! The address vector: where a QP's packets go, one table row per QP. Its layout is the
//! register map's `desc::ADDR_VECTOR` (fields packed from bit 0), shared with the driver and
//! the documentation; this module gives it to the hardware as bit offsets and a software
//! record. It mirrors the transport model's `AddressVector` (peer MAC, our IP and the peer's,
//! UDP source port, traffic class, IPv6 hop limit and flow label), with our IP as an index into
//! the NIC's GID table, so that a row stays narrow in block RAM.

use rnic_regmap::desc::{ADDR_VECTOR, packed_bits};

/// One entry of the address vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: &'static str,
    pub width: usize,
}

/// The entries, least significant first (the register map's fields).
pub fn entries() -> impl Iterator<Item = Entry> {
    ADDR_VECTOR.fields.iter().map(|f| Entry {
        name: f.name,
        width: usize::from(f.bits),
    })
}

/// Width of an address vector.
pub const AV_BITS: usize = packed_bits(ADDR_VECTOR.fields);

/// 64-bit words of an address vector.
pub const AV_WORDS: usize = AV_BITS.div_ceil(64);

/// Bit offset and width of entry `name`.
pub fn av_offset_of(name: &str) -> Option<(usize, usize)> {
    crate::row_table::row_offset_of(&ADDR_VECTOR, name)
}

/// An address vector as values by entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AvRecord {
    pub values: Vec<u64>,
}

crate::field_record!(
    AvRecord,
    "address vector entry",
    entries().map(|en| (en.name, en.width)),
    AV_WORDS
);

impl AvRecord {
    /// Sets the peer's GID (16 bytes, network order).
    pub fn set_dgid(&mut self, g: [u8; 16]) {
        self.set("DGID_HI", u64::from_be_bytes(g[..8].try_into().unwrap()));
        self.set("DGID_LO", u64::from_be_bytes(g[8..].try_into().unwrap()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header_channel::mask;

    #[test]
    fn pack_unpack_round_trip() {
        let mut r = AvRecord::zero();
        for (i, en) in entries().enumerate() {
            r.values[i] = 0x9E37_79B9_7F4A_7C15u64.rotate_left(3 * i as u32) & mask(en.width);
        }
        assert_eq!(AvRecord::unpack(&r.pack()), r);
        assert_eq!(AV_BITS, 233);
        // The packed words are the register map's row bytes, little-endian.
        let mut row = [0u8; 32];
        for (i, f) in ADDR_VECTOR.fields.iter().enumerate() {
            assert!(ADDR_VECTOR.set(&mut row, f.name, r.values[i]));
        }
        let words = r.pack();
        for (k, w) in words.iter().enumerate() {
            assert_eq!(
                *w,
                u64::from_le_bytes(row[8 * k..8 * k + 8].try_into().unwrap())
            );
        }
    }
}
