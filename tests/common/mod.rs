//! Helpers shared by the end-to-end tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rnic_wire::RoceFrame;
use serde::Deserialize;

/// The project's own reference traces.
pub fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

#[derive(Deserialize)]
pub struct Manifest {
    pub generator: String,
    pub frames: Vec<Entry>,
}

#[derive(Deserialize)]
pub struct Entry {
    pub name: String,
    pub desc: RoceFrame,
}

/// The scapy reference manifest and the frames of its pcap, in order.
pub fn scapy_reference() -> (Manifest, Vec<Vec<u8>>) {
    let text = std::fs::read_to_string(golden("scapy_reference.json")).expect("manifest");
    let m: Manifest = serde_json::from_str(&text).expect("manifest parses");
    let cap = rnic_wire::pcap::read_file(golden("scapy_reference.pcap")).expect("pcap");
    let frames = cap.records.into_iter().map(|r| r.data).collect();
    (m, frames)
}

/// The directory of the real captures, from `RNIC_GOLDEN_DIR`; `None` when it is not set
/// and the test may skip (outside CI; under CI it fails: [`rnic_cosim::need`]).
pub fn real_captures(test: &str) -> Option<PathBuf> {
    rnic_cosim::need::golden_dir(test)
}

/// Runs the `rnic` binary under test.
pub fn rnic(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rnic"))
        .args(args)
        .output()
        .expect("run rnic")
}

/// Runs `rnic`: whether it succeeded, and its standard output and error together.
pub fn rnic_text(args: &[&str]) -> (bool, String) {
    let out = rnic(args);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn last_line(o: &Output) -> String {
    stdout(o).lines().last().unwrap_or_default().to_owned()
}

/// A path for `name` in the test's own scratch folder `dir`.
pub fn tmp(dir: &str, name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}
