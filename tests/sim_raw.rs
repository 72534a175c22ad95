//! `rnic sim raw`: the shipped traces' non-RoCE frames (IPv6 neighbour discovery, ARP, ...)
//! and random frames through the raw rings of the simulated host interface and back, byte
//! for byte; RoCEv2 frames in the input are accepted by the receive parser (not the raw ring)
//! and reported; bad input named.

mod common;

use common::{golden, last_line, rnic, stdout, tmp};
use rnic_wire::{RocePacket, pcap};

fn non_roce_frames() -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    for name in [
        "rxe/rc_pingpong.pcap",
        "rxe/ud_pingpong.pcap",
        "rxe/write_bw-drop-9.pcap",
        "rxe/read_bw-drop-9.pcap",
    ] {
        let cap = pcap::read_file(golden(name)).unwrap();
        for r in cap.records {
            if RocePacket::parse(&r.data).is_err() {
                out.push((r.ts_ns, r.data));
            }
        }
    }
    out
}

#[test]
fn the_shipped_traces_non_roce_frames_come_back_identical() {
    let frames = non_roce_frames();
    assert!(frames.len() > 100, "{} frames", frames.len());
    let (input, output) = (tmp("sim_raw", "in.pcap"), tmp("sim_raw", "out.pcap"));
    pcap::write_file(&input, frames.iter().map(|(t, f)| (*t, &f[..]))).unwrap();
    let o = rnic(&[
        "sim",
        "raw",
        input.to_str().unwrap(),
        output.to_str().unwrap(),
        "--stall",
        "0.1",
        "--idle",
        "0.1",
        "--ring-log",
        "3",
    ]);
    let n = frames.len();
    assert_eq!(
        last_line(&o),
        format!("frames={n} sent={n} received={n} identical={n}"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(0));
    // The output holds them, short ones padded to 60 bytes.
    let back = pcap::read_file(&output).unwrap();
    assert_eq!(back.records.len(), n);
    for ((_, sent), got) in frames.iter().zip(&back.records) {
        let mut want = sent.clone();
        if want.len() < 60 {
            want.resize(60, 0);
        }
        assert_eq!(got.data, want);
    }
}

#[test]
fn roce_frames_go_to_the_transport_and_the_run_says_so() {
    let cap = pcap::read_file(golden("rxe/rc_pingpong.pcap")).unwrap();
    let roce: Vec<_> = cap
        .records
        .iter()
        .filter(|r| RocePacket::parse(&r.data).is_ok_and(|p| p.icrc_ok()))
        .take(5)
        .collect();
    assert_eq!(roce.len(), 5);
    let (input, output) = (tmp("sim_raw", "roce.pcap"), tmp("sim_raw", "roce_out.pcap"));
    pcap::write_file(&input, roce.iter().map(|r| (r.ts_ns, &r.data[..]))).unwrap();
    let o = rnic(&[
        "sim",
        "raw",
        input.to_str().unwrap(),
        output.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert_eq!(last_line(&o), "frames=5 sent=5 received=0 identical=0");
    assert!(String::from_utf8_lossy(&o.stderr).contains("counters.RX_ACCEPTED=5"));
}

#[test]
fn a_mixed_capture_brings_back_exactly_its_non_roce_frames() {
    let path = golden("rxe/rc_pingpong.pcap");
    let cap = pcap::read_file(&path).unwrap();
    let n = cap.records.len();
    let others = cap
        .records
        .iter()
        .filter(|r| RocePacket::parse(&r.data).is_err())
        .count();
    assert!(others > 0 && others < n);
    let out = tmp("sim_raw", "mixed_out.pcap");
    let o = rnic(&["sim", "raw", path.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        last_line(&o),
        format!("frames={n} sent={n} received={others} identical={others}")
    );
}

#[test]
fn bad_arguments_are_named() {
    let out = tmp("sim_raw", "x.pcap");
    let o = rnic(&["sim", "raw", "/nonexistent.pcap", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent.pcap"));
    let input = tmp("sim_raw", "tiny.pcap");
    pcap::write_file(&input, [(0u64, &[0u8; 10][..])]).unwrap();
    let o = rnic(&["sim", "raw", input.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("frame 1") && e.contains("14..=9216"), "{e}");
    let o = rnic(&[
        "sim",
        "raw",
        input.to_str().unwrap(),
        out.to_str().unwrap(),
        "--stall",
        "1.5",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--stall"));
}

#[test]
fn regs_dump_names_every_register_of_the_simulated_device() {
    let o = rnic(&["regs", "dump"]);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    assert!(
        text.lines()
            .any(|l| l.starts_with("id.MAGIC") && l.ends_with("0x524e4943"))
    );
    assert!(text.lines().any(|l| l.starts_with("raw[2].SIZE")));
    assert!(text.lines().any(|l| l.starts_with("counters.RAW_RX_DROPS")));
}
