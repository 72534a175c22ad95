//! CRC-32 (IEEE 802.3, reflected) as XOR matrices, generated when the Verilog is generated.
//!
//! The CRC register update over `n` bytes is linear in (register, data): `next = S_n(reg) ^
//! D_n(data)`. [`CrcMatrix`] computes the columns of `S_n` and `D_n` by pushing unit vectors
//! through the bit-serial definition, and [`CrcXor`] is a combinational block whose simulation
//! XORs the columns and whose Verilog is written from the same columns: the flat XOR network
//! for synthesis, byte tables for Verilator. The lock-step tests check that the simulation and
//! Verilator agree, `hw/tests/crc_forms.rs` that both Verilog forms do; the software model
//! checks the math.

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
        self.y.next = bits::<32>(u64::from(self.eval(self.x.val().to_u64())));
    }

    fn connect(&mut self) {
        self.y.connect();
    }

    /// Two forms of one function, chosen by the `SYNTHESIS` macro (yosys defines it, Verilator
    /// does not; the ECP5 cell models use the same switch):
    /// - for synthesis, written by columns, `y = ({32{x[i]}} & col_i) ^ ...`: after constant
    ///   folding each bit of `y` is the XOR of the `x` bits whose column has it set, the flat
    ///   network the LUTs implement;
    /// - for simulation, one 256-entry table per input byte, `y = tab0[x[7:0]] ^ tab1[x[15:8]]
    ///   ^ ...` ([`CrcXor::byte_tables`]): Verilator evaluates one load per byte instead of
    ///   four word operations per column.
    ///
    /// The lock-step tests run the table form against `update`; `hw/tests/
    /// crc_forms.rs` evaluates both forms in yosys on every unit vector, which decides the
    /// column form completely (it is linear by construction).
    fn hdl(&self) -> Verilog {
        let terms: Vec<String> = self
            ._cols
            .iter()
            .enumerate()
            .filter(|(_, c)| **c != 0)
            .map(|(i, c)| format!("({{32{{x[{i}]}}}} & 32'h{c:08x})"))
            .collect();
        let by_cols = if terms.is_empty() {
            "32'h0".to_string()
        } else {
            terms.join(" ^\n        ")
        };
        let tables = self.byte_tables();
        let mut by_bytes = String::new();
        for k in 0..tables.len() {
            by_bytes.push_str(&format!("reg [31:0] tab{k} [0:255];\n"));
        }
        by_bytes.push_str("initial begin\n");
        for (k, t) in tables.iter().enumerate() {
            for (r, words) in t.chunks(8).enumerate() {
                let line: Vec<String> = words
                    .iter()
                    .enumerate()
                    .map(|(j, w)| format!("tab{k}[{}] = 32'h{w:08x};", 8 * r + j))
                    .collect();
                by_bytes.push_str(&format!("    {}\n", line.join(" ")));
            }
        }
        by_bytes.push_str("end\n");
        let lookups: Vec<String> = (0..tables.len())
            .map(|k| format!("tab{k}[x[{}:{}]]", 8 * k + 7, 8 * k))
            .collect();
        let lookups = if lookups.is_empty() {
            "32'h0".to_string()
        } else {
            lookups.join(" ^ ")
        };
        Verilog::Custom(format!(
            "`ifdef SYNTHESIS\nalways @(*) begin\n    y = {by_cols};\nend\n`else\n{by_bytes}\
             always @(*) begin\n    y = {lookups};\nend\n`endif\n"
        ))
    }
}

impl CrcXor {
    /// The simulation form's tables: `tables[k][v]` is `y` for input byte `k` equal to `v` and
    /// every other input bit clear, one table per started byte of the columns.
    pub fn byte_tables(&self) -> Vec<[u32; 256]> {
        self._cols
            .chunks(8)
            .map(|byte_cols| {
                let mut t = [0u32; 256];
                for (v, e) in t.iter_mut().enumerate() {
                    *e = xor_cols(byte_cols, v as u64);
                }
                t
            })
            .collect()
    }

    /// `y` for input `x`: the XOR of the columns of the set bits (what `update` simulates).
    pub fn eval(&self, x: u64) -> u32 {
        xor_cols(&self._cols, x)
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
