//! What a test needs from outside the repository (the real captures through
//! `RNIC_GOLDEN_DIR`, python3 with scapy, yosys, nextpnr) and what it must have checked.
//!
//! One rule for every test: when `CI` is set (`.ci/run` sets it) a missing input fails the
//! test with what is missing and how to get it; outside CI the test may skip, saying so on
//! stderr. A test that ran asserts a minimum count of what it checked ([`at_least`]), so an
//! input that is present but empty, or filtered down to nothing, fails too.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether the tests run under CI: `CI` set to anything but empty, `0` or `false`.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// Reports that `test` lacks `what` (`how` says how to get it): a failure under CI, a skip
/// (said on stderr) otherwise. Returns so that the caller can skip.
pub fn missing(test: &str, what: &str, how: &str) {
    assert!(
        !in_ci(),
        "{test}: missing {what} ({how}); with CI set a missing input fails the test"
    );
    eprintln!("{test}: SKIPPED: missing {what} ({how})");
}

/// The directory of the real captures, from `RNIC_GOLDEN_DIR`; `None` when it is not set and
/// the test may skip (see [`missing`]). A value that is not a directory always fails.
pub fn golden_dir(test: &str) -> Option<PathBuf> {
    match std::env::var_os("RNIC_GOLDEN_DIR") {
        Some(d) if !d.is_empty() => {
            let d = PathBuf::from(d);
            assert!(
                d.is_dir(),
                "{test}: RNIC_GOLDEN_DIR={} is not a directory",
                d.display()
            );
            Some(d)
        }
        _ => {
            missing(
                test,
                "the real captures",
                "set RNIC_GOLDEN_DIR, e.g. RNIC_GOLDEN_DIR=../shared/golden",
            );
            None
        }
    }
}

/// What the real captures hold (`RNIC_GOLDEN_DIR`: three captures beside `rxe/`, ten in it):
/// the counts the tests that read all of them must reach.
pub const GOLDEN_FILES: usize = 13;
pub const GOLDEN_FRAMES: usize = 11_887;
pub const GOLDEN_ROCE_FRAMES: usize = 11_452;

/// Every capture (`.pcap`, `.pcapng`) in `dir` and in `dir/rxe`, sorted; a directory that
/// cannot be read fails the test.
pub fn golden_captures(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for d in [dir.to_path_buf(), dir.join("rxe")] {
        let rd = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for e in rd {
            let p = e.unwrap_or_else(|e| panic!("{}: {e}", d.display())).path();
            if p.extension().is_some_and(|x| x == "pcap" || x == "pcapng") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// Whether python3 can import scapy's RoCE layer; `false` when the test may skip.
pub fn scapy(test: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import scapy.contrib.roce"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        missing(
            test,
            "python3 with scapy",
            "python3 -m pip install scapy==2.8.0",
        );
    }
    ok
}

/// Whether `program` runs (`program arg` exits at all); `false` when the test may skip.
pub fn tool(test: &str, program: &str, arg: &str, how: &str) -> bool {
    let ok = Command::new(program).arg(arg).output().is_ok();
    if !ok {
        missing(test, program, how);
    }
    ok
}

/// Asserts that `test` checked at least `min` of `what` (it got `got`).
pub fn at_least(test: &str, what: &str, got: usize, min: usize) {
    assert!(
        got >= min,
        "{test}: checked {got} {what}, fewer than the {min} its inputs hold"
    );
    eprintln!("{test}: checked {got} {what}");
}
