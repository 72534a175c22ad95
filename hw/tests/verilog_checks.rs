//! Every top's generated Verilog: rust-hdl's `check_all` (inside `verilog()`), yosys
//! elaboration (`yosys_validate`: no latches, nothing undriven, no duplicate modules), and
//! `verilator --lint-only` failing on the warnings that point at real mistakes; and the
//! sources free of match guards, which `#[hdl_gen]` drops from the Verilog (`hw/RULES.md`, 5).

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

/// A match arm on a decimal literal or `_` with a guard (`4 if x => ...`): `#[hdl_gen]` writes
/// the pattern and drops the guard, so the Verilog would take the arm whatever `x` is.
#[test]
fn no_hdl_match_arm_has_a_guard() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = 0;
    let mut hdl_fns = 0;
    let mut guards = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("hw/src") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        files += 1;
        let text = std::fs::read_to_string(&path).expect("read");
        // Only inside `#[hdl_gen]` functions: from the attribute to the brace closing the
        // function it marks (plain Rust elsewhere may use guards).
        let (mut in_hdl, mut depth, mut opened) = (false, 0i64, false);
        for (n, line) in text.lines().enumerate() {
            let t = line.trim_start();
            if t.starts_with("#[hdl_gen]") {
                (in_hdl, depth, opened) = (true, 0, false);
                hdl_fns += 1;
                continue;
            }
            if !in_hdl {
                continue;
            }
            depth += t.matches('{').count() as i64 - t.matches('}').count() as i64;
            opened |= t.contains('{');
            if opened && depth <= 0 {
                in_hdl = false;
            }
            let pat = t.split_whitespace().next().unwrap_or("");
            let numeric = !pat.is_empty() && pat.chars().all(|c| c.is_ascii_digit());
            if (numeric || pat == "_") && t[pat.len()..].trim_start().starts_with("if ") {
                guards.push(format!("{}:{}: {}", path.display(), n + 1, t));
            }
        }
    }
    assert!(files > 40, "only {files} sources in {}", dir.display());
    assert!(hdl_fns > 40, "only {hdl_fns} #[hdl_gen] functions found");
    assert!(guards.is_empty(), "match guards in HDL: {guards:#?}");
}
