//! Header field layouts: the one source of truth for where every field sits.
//!
//! Each header is described by a [`Layout`]: its length and a table of [`Field`]s, each given as
//! (byte offset, bit offset from the most significant bit of that byte, width in bits), in
//! network byte order. The software model reads and writes fields through these tables, and the
//! hardware crate reads the same tables to generate its parser and builder, so a change made here
//! changes both.

/// One field of a header: `width` bits starting `bit` bits below the most significant bit of
/// byte `byte`, big-endian.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Field name as the specification spells it (used in error messages and generated code).
    pub name: &'static str,
    /// Byte offset of the field's first bit from the start of the header.
    pub byte: usize,
    /// Bit offset of the field's first (most significant) bit within that byte, 0 = MSB.
    pub bit: u8,
    /// Width in bits, 1 to 64.
    pub width: u8,
}

impl Field {
    /// A field of `width` bits at (`byte`, `bit`).
    pub const fn new(name: &'static str, byte: usize, bit: u8, width: u8) -> Self {
        Field {
            name,
            byte,
            bit,
            width,
        }
    }

    /// Offset of the first bit from the start of the header, counting from the MSB of byte 0.
    pub const fn bit_offset(&self) -> usize {
        self.byte * 8 + self.bit as usize
    }

    /// One past the last byte the field touches.
    pub const fn end_byte(&self) -> usize {
        (self.bit_offset() + self.width as usize).div_ceil(8)
    }

    /// Largest value the field holds.
    pub const fn max(&self) -> u64 {
        if self.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }

    /// Number of bytes spanned, which is at most 8 for every field in this crate.
    const fn span(&self) -> usize {
        self.end_byte() - self.byte
    }

    /// Reads the field from `header`. `header` must be at least `end_byte()` long; views check
    /// that once when they are created.
    pub fn get(&self, header: &[u8]) -> u64 {
        let span = self.span();
        let mut acc: u64 = 0;
        for &b in &header[self.byte..self.byte + span] {
            acc = (acc << 8) | u64::from(b);
        }
        let low_unused = span * 8 - self.bit as usize - self.width as usize;
        (acc >> low_unused) & self.max()
    }

    /// Writes `value` (truncated to the field width) into `header`, leaving other bits alone.
    pub fn set(&self, header: &mut [u8], value: u64) {
        let span = self.span();
        let low_unused = span * 8 - self.bit as usize - self.width as usize;
        let mask = self.max() << low_unused;
        let bytes = &mut header[self.byte..self.byte + span];
        let mut acc: u64 = 0;
        for &b in bytes.iter() {
            acc = (acc << 8) | u64::from(b);
        }
        acc = (acc & !mask) | ((value << low_unused) & mask);
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (acc >> (8 * (span - 1 - i))) as u8;
        }
    }
}

/// A fixed-size header: its name, length in bytes and field table.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    /// Header name as used in error messages ("BTH", "IPv4 header", ...).
    pub name: &'static str,
    /// Length in bytes.
    pub len: usize,
    /// Every named field, in wire order. Bits not covered are reserved (sent as zero).
    pub fields: &'static [Field],
}

impl Layout {
    /// Looks a field up by name.
    pub fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// Every header layout of the model, for code generators and documentation.
pub fn all_layouts() -> [&'static Layout; 14] {
    use crate::*;
    [
        &eth::LAYOUT,
        &eth::VLAN_LAYOUT,
        &ipv4::LAYOUT,
        &ipv6::LAYOUT,
        &udp::LAYOUT,
        &bth::LAYOUT,
        &ext::RETH_LAYOUT,
        &ext::AETH_LAYOUT,
        &ext::IMMDT_LAYOUT,
        &ext::IETH_LAYOUT,
        &ext::ATOMIC_ETH_LAYOUT,
        &ext::ATOMIC_ACK_ETH_LAYOUT,
        &ext::DETH_LAYOUT,
        &ext::CNP_LAYOUT,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_is_consistent() {
        for layout in all_layouts() {
            let mut covered = vec![false; layout.len * 8];
            for f in layout.fields {
                assert!(f.width >= 1 && f.width <= 64, "{}.{}", layout.name, f.name);
                assert!(f.bit < 8, "{}.{}", layout.name, f.name);
                assert!(f.span() <= 8, "{}.{} spans > 8 bytes", layout.name, f.name);
                assert!(
                    f.end_byte() <= layout.len,
                    "{}.{} overruns",
                    layout.name,
                    f.name
                );
                let bits = &mut covered[f.bit_offset()..f.bit_offset() + f.width as usize];
                assert!(
                    bits.iter().all(|b| !b),
                    "{}.{} overlaps another field",
                    layout.name,
                    f.name
                );
                bits.fill(true);
            }
        }
    }

    #[test]
    fn get_and_set_hand_worked() {
        // BTH byte 1 = SE(1) M(1) PadCnt(2) TVer(4): 0b1_0_11_0000 = 0xB0.
        let pad = Field::new("PadCnt", 1, 2, 2);
        let mut hdr = [0u8; 4];
        hdr[1] = 0xB0;
        assert_eq!(pad.get(&hdr), 3);
        pad.set(&mut hdr, 1);
        assert_eq!(hdr[1], 0x90);
        // A 24-bit field at byte 1: DestQP-style.
        let qp = Field::new("QP", 1, 0, 24);
        qp.set(&mut hdr, 0x12_3456);
        assert_eq!(hdr, [0x00, 0x12, 0x34, 0x56]);
        assert_eq!(qp.get(&hdr), 0x12_3456);
        // A 20-bit field that starts mid-byte: the IPv6 flow label.
        let fl = Field::new("FlowLabel", 1, 4, 20);
        let mut v6 = [0x6F, 0xFF, 0xFF, 0xFF];
        assert_eq!(fl.get(&v6), 0xF_FFFF);
        fl.set(&mut v6, 0x1_2345);
        assert_eq!(v6, [0x6F, 0xF1, 0x23, 0x45]);
        // A full 64-bit field.
        let va = Field::new("VA", 0, 0, 64);
        let mut r = [0u8; 8];
        va.set(&mut r, 0x0102_0304_0506_0708);
        assert_eq!(r, [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(va.get(&r), 0x0102_0304_0506_0708);
    }
}

/// Conversion between a field's raw bits and the Rust type its accessor returns.
pub trait FieldValue: Copy {
    fn from_bits(v: u64) -> Self;
    fn to_bits(self) -> u64;
}

macro_rules! field_value_int {
    ($($t:ty),*) => {$(
        impl FieldValue for $t {
            fn from_bits(v: u64) -> Self {
                v as $t
            }
            fn to_bits(self) -> u64 {
                u64::from(self)
            }
        }
    )*};
}
field_value_int!(u8, u16, u32, u64);

impl FieldValue for bool {
    fn from_bits(v: u64) -> Self {
        v != 0
    }
    fn to_bits(self) -> u64 {
        u64::from(self)
    }
}

/// Declares a zero-copy view over a header: `new_checked` checks the length once, after which
/// no accessor can panic. Accessors read and write through the header's field table.
macro_rules! header_view {
    (
        $(#[$meta:meta])*
        $view:ident, $layout:expr, $layer:expr,
        { $( $(#[$fmeta:meta])* $get:ident, $set:ident : $ty:ty = $field:expr; )* }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug)]
        pub struct $view<T> {
            buf: T,
        }

        impl<T: AsRef<[u8]>> $view<T> {
            /// Header length in bytes.
            pub const LEN: usize = $layout.len;

            /// Wraps `buf`, which must hold at least the header; `offset` (the header's position
            /// in the frame) is only used for the error message.
            pub fn new_checked(buf: T, offset: usize) -> Result<Self, $crate::Error> {
                let have = buf.as_ref().len();
                if have < Self::LEN {
                    return Err($crate::Error::truncated($layer, offset, Self::LEN, have));
                }
                Ok($view { buf })
            }

            /// The underlying buffer.
            pub fn into_inner(self) -> T {
                self.buf
            }

            /// The header's bytes.
            pub fn as_bytes(&self) -> &[u8] {
                &self.buf.as_ref()[..Self::LEN]
            }

            $(
                $(#[$fmeta])*
                pub fn $get(&self) -> $ty {
                    <$ty as $crate::field::FieldValue>::from_bits($field.get(self.buf.as_ref()))
                }
            )*
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> $view<T> {
            $(
                pub fn $set(&mut self, value: $ty) {
                    $field.set(self.buf.as_mut(), $crate::field::FieldValue::to_bits(value))
                }
            )*
        }
    };
}
pub(crate) use header_view;
