//! The CRC matrices' two Verilog forms (`crc32::CrcXor::hdl`: the column network that yosys
//! synthesizes, the byte tables that Verilator runs) compute the same function as the columns.
//!
//! Each form is evaluated in yosys on the zero vector, every unit vector and some random
//! vectors, against the XOR of the columns (`CrcXor::eval`, what rust-hdl simulates). The column form is linear by construction (an XOR
//! of single input bits ANDed with constants), so the unit vectors decide it completely; the
//! table form is also run against rust-hdl's simulation by every lock-step test.

use std::process::Command;

use rnic_hw::crc32::CrcXor;
use rust_hdl::prelude::*;

/// The vectors: zero, the 64 unit vectors, 32 pseudo-random words (xorshift64, fixed seed).
fn vectors() -> Vec<u64> {
    let mut v = vec![0u64];
    v.extend((0..64).map(|i| 1u64 << i));
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..32 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        v.push(s);
    }
    v
}

/// Evaluates the module `crc` written by `m.hdl()` in yosys, `synthesis` choosing the form,
/// on every vector; returns `y` per vector.
fn eval_in_yosys(m: &CrcXor, synthesis: bool, name: &str) -> Vec<u32> {
    let body = match m.hdl() {
        Verilog::Custom(b) => b,
        _ => panic!("CrcXor writes custom Verilog"),
    };
    let switch = if synthesis {
        "`define SYNTHESIS"
    } else {
        "`undef SYNTHESIS"
    };
    let src = format!(
        "{switch}\nmodule crc(x, y);\ninput wire [63:0] x;\noutput reg [31:0] y;\n{body}endmodule\n"
    );
    let dir = std::env::temp_dir().join(format!("rnic-crc-forms-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.v"));
    std::fs::write(&path, src).unwrap();
    let mut script = format!(
        "read_verilog {}; hierarchy -top crc; proc; memory; opt_clean;",
        path.display()
    );
    for x in vectors() {
        script.push_str(&format!(" eval -set x 64'h{x:x} -show y;"));
    }
    let out = Command::new("yosys")
        .args(["-p", &script])
        .output()
        .expect("yosys not found: apt-get install yosys");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{name}: yosys failed:\n{text}");
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("Eval result: \\y = "))
        .map(|v| {
            // Decimal when it fits a signed 32-bit integer, `32'<binary>` otherwise.
            let v = v.trim_end_matches('.');
            match v.strip_prefix("32'") {
                Some(b) => u32::from_str_radix(b, 2),
                None => v.parse::<u32>(),
            }
            .unwrap_or_else(|e| panic!("{name}: {v:?}: {e}"))
        })
        .collect()
}

#[test]
fn both_verilog_forms_equal_the_columns() {
    let matrices = [
        ("data8", CrcXor::data(8)),
        ("data6", CrcXor::data(6)),
        ("data2", CrcXor::data(2)),
        ("state8", CrcXor::state(8)),
        ("state6", CrcXor::state(6)),
        ("state2", CrcXor::state(2)),
    ];
    let xs = vectors();
    for (name, m) in &matrices {
        let want: Vec<u32> = xs.iter().map(|&x| m.eval(x)).collect();
        assert!(want.iter().any(|&y| y != 0), "{name}: all-zero matrix");
        for synthesis in [true, false] {
            let form = if synthesis { "columns" } else { "tables" };
            let got = eval_in_yosys(m, synthesis, &format!("{name}_{form}"));
            assert_eq!(got.len(), xs.len(), "{name} {form}: one result per vector");
            for ((x, g), w) in xs.iter().zip(&got).zip(&want) {
                assert_eq!(g, w, "{name} {form}: x = {x:#018x}");
            }
        }
    }
}

#[test]
fn the_table_form_is_the_columns_by_byte() {
    // Independent of yosys: each table entry is the XOR of its byte's columns.
    let m = CrcXor::data(6);
    let tables = m.byte_tables();
    assert_eq!(tables.len(), 6);
    for (k, t) in tables.iter().enumerate() {
        for v in [0usize, 1, 0x80, 0xA5, 0xFF] {
            assert_eq!(t[v], m.eval((v as u64) << (8 * k)));
        }
    }
}
