//! Every top's generated Verilog: rust-hdl's `check_all` (inside `verilog()`), yosys
//! elaboration (`yosys_validate`: no latches, nothing undriven, no duplicate modules), and
//! `verilator --lint-only` failing on the warnings that point at real mistakes.

use std::process::Command;

use rust_hdl::prelude::yosys_validate;

/// Verilator warnings that mean a real problem in generated code. WIDTH and the style
/// warnings are left out: the generated code is full of harmless ones. So is UNOPTFLAT:
/// rust-hdl writes a module's logic as one `always @(*)` block, which reads a submodule's
/// output and drives its input, and Verilator reports that as a loop even when the path goes
/// through a register; real combinational loops are caught by rust-hdl's `check_all`
/// (`check_logic_loops`) before the Verilog is written. PINMISSING is left out too: ECP5 cell
/// instances (EHXPLLL) leave unused pins open on purpose, and rust-hdl's own instances connect
/// every pin.
const FATAL: &[&str] = &[
    "LATCH",
    "NOLATCH",
    "MULTIDRIVEN",
    "UNDRIVEN",
    "ALWCOMBORDER",
    "BLKANDNBLK",
    "COMBDLY",
    "IMPLICIT",
    "CASEINCOMPLETE",
    "SELRANGE",
];

fn tool(name: &str) -> bool {
    Command::new(name).arg("-V").output().is_ok()
        || Command::new(name).arg("--version").output().is_ok()
}

#[test]
fn every_top_elaborates_in_yosys() {
    assert!(tool("yosys"), "yosys not found: apt-get install yosys");
    for top in rnic_hw::tops::all() {
        // Tops with ECP5 cells carry behavioural models of them for simulation inside
        // `ifndef SYNTHESIS`, which yosys defines: elaborate the models here.
        let v = format!("`undef SYNTHESIS\n{}", (top.verilog)());
        if let Err(e) = yosys_validate(&format!("rnic_{}", top.name), &v) {
            panic!("{}: yosys: {e:?}", top.name);
        }
    }
}

#[test]
fn every_top_passes_verilator_lint() {
    assert!(
        tool("verilator"),
        "verilator not found: apt-get install verilator"
    );
    let dir = std::env::temp_dir().join("rnic_verilator_lint");
    std::fs::create_dir_all(&dir).unwrap();
    for top in rnic_hw::tops::all() {
        let path = dir.join(format!("{}.v", top.name));
        std::fs::write(&path, (top.verilog)()).unwrap();
        let out = Command::new("verilator")
            .args(["--lint-only", "-Wall", "-Wno-fatal", "--top-module", "top"])
            .arg(&path)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr);
        let bad: Vec<&str> = text
            .lines()
            .filter(|l| {
                FATAL
                    .iter()
                    .any(|w| l.starts_with(&format!("%Warning-{w}:")))
                    || l.starts_with("%Error")
            })
            .collect();
        assert!(
            bad.is_empty(),
            "{}: verilator lint:\n{}",
            top.name,
            bad.join("\n")
        );
        assert!(
            out.status.success(),
            "{}: verilator failed:\n{text}",
            top.name
        );
    }
}
