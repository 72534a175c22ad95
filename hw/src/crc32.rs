//! CRC-32 (IEEE 802.3, reflected) as XOR matrices, generated when the Verilog is generated.
//!
//! The CRC register update over `n` bytes is linear in (register, data): `next = S_n(reg) ^
//! D_n(data)`. [`CrcMatrix`] computes the columns of `S_n` and `D_n` by pushing unit vectors
//! through the bit-serial definition, and [`CrcXor`] is a combinational block whose simulation
//! XORs the columns and whose Verilog is the flat XOR network written out from the same
//! columns. The lock-step tests check that both agree; the software model checks the math.

use rust_hdl::prelude::*;

/// The reflected CRC-32 polynomial.
pub const POLY: u32 = 0xEDB8_8320;

/// One byte through the bit-serial CRC register (no init, no final XOR).
pub fn serial_byte(mut reg: u32, byte: u8) -> u32 {
    reg ^= u32::from(byte);
    for _ in 0..8 {
        reg = (reg >> 1) ^ (POLY & (reg & 1).wrapping_neg());
    }
    reg
}

/// The register after `bytes`, starting from `reg`.
pub fn serial(reg: u32, bytes: &[u8]) -> u32 {
    bytes.iter().fold(reg, |r, &b| serial_byte(r, b))
}

/// The linear maps of an `n`-byte register update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrcMatrix {
    /// Bytes consumed per update.
    pub bytes: usize,
    /// `state_cols[i]`: the contribution of register bit `i`.
    pub state_cols: [u32; 32],
    /// `data_cols[8 * k + b]`: the contribution of bit `b` of data byte `k` (byte 0 first on
    /// the wire, bit 0 = least significant).
    pub data_cols: Vec<u32>,
}

impl CrcMatrix {
    pub fn new(bytes: usize) -> Self {
        let zeros = vec![0u8; bytes];
        let mut state_cols = [0u32; 32];
        for (i, c) in state_cols.iter_mut().enumerate() {
            *c = serial(1 << i, &zeros);
        }
        let data_cols = (0..bytes * 8)
            .map(|bit| {
                let mut d = zeros.clone();
                d[bit / 8] = 1 << (bit % 8);
                serial(0, &d)
            })
            .collect();
        CrcMatrix {
            bytes,
            state_cols,
            data_cols,
        }
    }

    /// `S_n(reg)`.
    pub fn state_term(&self, reg: u32) -> u32 {
        xor_cols(&self.state_cols, u64::from(reg))
    }

    /// `D_n(data)` over the low `bytes` bytes of `data` (byte 0 in bits 7:0).
    pub fn data_term(&self, data: u64) -> u32 {
        xor_cols(&self.data_cols, data)
    }
}

fn xor_cols(cols: &[u32], x: u64) -> u32 {
    cols.iter()
        .enumerate()
        .filter(|(i, _)| x >> i & 1 == 1)
        .fold(0, |acc, (_, c)| acc ^ c)
}

/// A combinational XOR matrix: `y = M x`, with `M` given by its columns (one per input bit,
/// at most 64). Used for both terms of a CRC update.
#[derive(LogicBlock)]
pub struct CrcXor {
    pub x: Signal<In, Bits<64>>,
    pub y: Signal<Out, Bits<32>>,
    _cols: Vec<u32>,
}

impl CrcXor {
    pub fn new(cols: Vec<u32>) -> Self {
        assert!(cols.len() <= 64, "at most 64 input bits");
        CrcXor {
            x: Signal::default(),
            y: Signal::default(),
            _cols: cols,
        }
    }

    /// The data term of an `n`-byte update.
    pub fn data(n: usize) -> Self {
        Self::new(CrcMatrix::new(n).data_cols)
    }

    /// The register term of an `n`-byte update (input bits 31:0).
    pub fn state(n: usize) -> Self {
        Self::new(CrcMatrix::new(n).state_cols.to_vec())
    }
}

impl Logic for CrcXor {
    fn update(&mut self) {
        self.y.next = bits::<32>(u64::from(xor_cols(&self._cols, self.x.val().to_u64())));
    }

    fn connect(&mut self) {
        self.y.connect();
    }

    /// Written by columns, `y = ({32{x[i]}} & col_i) ^ ...`: after constant folding each bit
    /// of `y` is the XOR of the `x` bits whose column has it set, the same network as one
    /// equation per output bit, but Verilator evaluates it as word-wide ANDs and XORs rather
    /// than one parity and one bit insertion per output bit (12-15 % off the packet
    /// loopback's Verilator time, `rnic bench sim`).
    fn hdl(&self) -> Verilog {
        let terms: Vec<String> = self
            ._cols
            .iter()
            .enumerate()
            .filter(|(_, c)| **c != 0)
            .map(|(i, c)| format!("({{32{{x[{i}]}}}} & 32'h{c:08x})"))
            .collect();
        let rhs = if terms.is_empty() {
            "32'h0".to_string()
        } else {
            terms.join(" ^\n        ")
        };
        Verilog::Custom(format!("always @(*) begin\n    y = {rhs};\nend\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrices_match_the_serial_crc() {
        // zlib.crc32(b"123456789") == 0xCBF43926, the CRC-32 check value.
        assert_eq!(!serial(!0, b"123456789"), 0xCBF4_3926);
        let data = *b"\x01\x23\x45\x67\x89\xab\xcd\xef";
        let word = u64::from_le_bytes(data);
        for n in [2usize, 6, 8] {
            let m = CrcMatrix::new(n);
            for reg in [0u32, !0, 0xDEBB_20E3, 0x1234_5678] {
                let masked = if n == 8 {
                    word
                } else {
                    word & ((1 << (8 * n)) - 1)
                };
                assert_eq!(
                    m.state_term(reg) ^ m.data_term(masked),
                    serial(reg, &data[..n]),
                    "n={n} reg={reg:#x}"
                );
            }
        }
    }
}
