//! The `rnic trace` commands end to end: output format, exit codes, repairs.

mod common;

use common::{last_line, rnic, stdout, tmp};

use std::path::Path;

use rnic_wire::pcap::{self, PcapWriter};

fn write_pcap(path: &Path, frames: &[Vec<u8>]) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = PcapWriter::new(f, 1, false).unwrap();
    for (i, fr) in frames.iter().enumerate() {
        w.write(1_000_000 * i as u64, fr).unwrap();
    }
    w.finish().unwrap();
}

fn reference_path() -> String {
    common::golden("scapy_reference.pcap").display().to_string()
}

#[test]
fn check_passes_the_reference_trace() {
    let o = rnic(&["trace", "check", &reference_path()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(last_line(&o), "frames=536 roce=536 icrc_ok=536 icrc_bad=0");
}

#[test]
fn check_fails_on_a_flipped_bit_and_fix_repairs_it() {
    let (_, frames) = common::scapy_reference();
    let mut bad = frames[..10].to_vec();
    let n = bad[4].len();
    bad[4][n - 8] ^= 0x04; // a payload byte of frame 5
    let in_path = tmp("cli", "flipped.pcap");
    write_pcap(&in_path, &bad);
    let o = rnic(&["trace", "check", in_path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(last_line(&o), "frames=10 roce=10 icrc_ok=9 icrc_bad=1");
    assert!(stdout(&o).contains("#5: "), "{}", stdout(&o));
    assert!(stdout(&o).contains("icrc=BAD(wire "), "{}", stdout(&o));

    let out_path = tmp("cli", "fixed.pcap");
    let o = rnic(&[
        "trace",
        "fix",
        in_path.to_str().unwrap(),
        out_path.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        last_line(&o),
        "frames=10 roce=10 icrc_changed=1 ipv4_checksum_changed=0 unfixable=0"
    );
    let o = rnic(&["trace", "check", out_path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    // Only frame 5 changed, and only in its ICRC; the flipped payload bit stays.
    let fixed = pcap::read_file(&out_path).unwrap();
    for (i, r) in fixed.records.iter().enumerate() {
        if i == 4 {
            assert_eq!(r.data[..n - 4], bad[4][..n - 4]);
            assert_ne!(r.data[n - 4..], bad[4][n - 4..]);
        } else {
            assert_eq!(r.data, bad[i]);
        }
    }
}

#[test]
fn check_fails_on_a_bad_ipv4_checksum() {
    let (m, frames) = common::scapy_reference();
    let i = m
        .frames
        .iter()
        .position(|e| matches!(e.desc.ip, rnic_wire::IpRepr::V4(_)) && e.desc.eth.vlan.is_none())
        .unwrap();
    let mut f = frames[i].clone();
    f[14 + 10] ^= 0xFF; // the header checksum; the ICRC masks it
    let p = tmp("cli", "ipcsum.pcap");
    write_pcap(&p, &[f]);
    let o = rnic(&["trace", "check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("ipv4_checksum=BAD"), "{}", stdout(&o));
    assert_eq!(last_line(&o), "frames=1 roce=1 icrc_ok=1 icrc_bad=0");
}

#[test]
fn unreadable_inputs_exit_2_naming_the_file() {
    let missing = tmp("cli", "does-not-exist.pcap");
    let o = rnic(&["trace", "check", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("does-not-exist.pcap") && err.contains("No such file"),
        "{err}"
    );

    let garbage = tmp("cli", "garbage.pcap");
    std::fs::write(&garbage, b"this is not a capture").unwrap();
    let o = rnic(&[
        "trace",
        "check",
        garbage.to_str().unwrap(),
        &reference_path(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("garbage.pcap: at byte 0: not a pcap or pcapng file"),
        "{err}"
    );
    // The readable file is still checked and counted.
    assert_eq!(last_line(&o), "frames=536 roce=536 icrc_ok=536 icrc_bad=0");

    let o = rnic(&["trace", "show", garbage.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn roce_port_option_adds_a_port() {
    let (m, _) = common::scapy_reference();
    let mut d = m.frames[0].desc.clone();
    d.udp.dst_port = 5000;
    let p = tmp("cli", "port5000.pcap");
    write_pcap(&p, &[d.build().unwrap()]);
    let o = rnic(&["trace", "check", p.to_str().unwrap()]);
    assert_eq!(last_line(&o), "frames=1 roce=0 icrc_ok=0 icrc_bad=0");
    let o = rnic(&["trace", "check", "--roce-port", "5000", p.to_str().unwrap()]);
    assert_eq!(last_line(&o), "frames=1 roce=1 icrc_ok=1 icrc_bad=0");
    let o = rnic(&["trace", "show", p.to_str().unwrap()]);
    assert!(stdout(&o).contains(":5000 len="), "{}", stdout(&o));
}

#[test]
fn show_json_gives_the_description_of_every_frame() {
    let (m, _) = common::scapy_reference();
    let o = rnic(&["trace", "show", "--json", &reference_path()]);
    assert_eq!(o.status.code(), Some(0));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(lines.len(), m.frames.len());
    for (v, e) in lines.iter().zip(&m.frames) {
        assert_eq!(v["kind"], "roce");
        assert_eq!(v["icrc"], "ok");
        let desc: rnic_wire::RoceFrame = serde_json::from_value(v["desc"].clone()).unwrap();
        assert_eq!(desc, e.desc, "{}", e.name);
    }
}

#[test]
fn show_text_names_opcodes_and_summarises_other_frames() {
    let (m, frames) = common::scapy_reference();
    // An ARP request (10.0.0.1 asks for 10.0.0.2), built by hand.
    let mut arp = vec![0xFF; 6];
    arp.extend([2, 0, 0, 0, 0, 1, 0x08, 0x06]);
    arp.extend([0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 1, 10, 0, 0, 1]);
    arp.extend([0, 0, 0, 0, 0, 0, 10, 0, 0, 2]);
    let cnp = m
        .frames
        .iter()
        .position(|e| e.desc.bth.opcode == 0x81)
        .unwrap();
    let p = tmp("cli", "mixed.pcap");
    write_pcap(&p, &[arp, frames[cnp].clone(), frames[0].clone()]);
    let o = rnic(&["trace", "show", p.to_str().unwrap()]);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[0].contains("eth/arp") && lines[0].contains("ARP who-has 10.0.0.2 tell 10.0.0.1")
    );
    assert!(
        lines[1].contains(" CNP ") && lines[1].contains("BECN") && lines[1].ends_with("icrc=ok")
    );
    let qp = format!("qp={:#08x}", m.frames[0].desc.bth.dest_qp);
    assert!(
        lines[2].contains("RC_SEND_FIRST") && lines[2].contains(&qp),
        "{}",
        lines[2]
    );
}

#[test]
fn sim_icrc_runs_the_hardware_checker() {
    let o = rnic(&["sim", "icrc", &reference_path()]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(last_line(&o), "frames=536 roce=536 icrc_ok=536 icrc_bad=0");

    // A flipped payload bit and an ARP frame: one bad, one not RoCEv2.
    let (_, frames) = common::scapy_reference();
    let mut bad = frames[3].clone();
    let n = bad.len();
    bad[n - 6] ^= 0x10;
    let mut arp = vec![0xFF; 6];
    arp.extend([2, 0, 0, 0, 0, 1, 0x08, 0x06]);
    arp.extend([0u8; 46]);
    let p = tmp("cli", "sim_icrc_bad.pcap");
    write_pcap(&p, &[frames[0].clone(), bad, arp]);
    let wave = tmp("cli", "sim_icrc.vcd");
    let _ = std::fs::remove_file(&wave);
    let o = rnic(&[
        "sim",
        "icrc",
        "--verbose",
        "--vcd",
        wave.to_str().unwrap(),
        p.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("#2 len=") && out.contains("roce icrc=BAD"),
        "{out}"
    );
    assert!(out.contains("#3 len=60 not RoCEv2"), "{out}");
    assert_eq!(last_line(&o), "frames=3 roce=2 icrc_ok=1 icrc_bad=1");
    assert!(std::fs::metadata(&wave).is_ok_and(|m| m.len() > 1000));

    let o = rnic(&["sim", "icrc", tmp("cli", "missing.pcap").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.pcap"));
}

/// A good frame, the same with a flipped payload bit (dropped: ICRC) and an ARP frame (bypass).
fn mixed_frames() -> Vec<Vec<u8>> {
    let (_, frames) = common::scapy_reference();
    let mut bad = frames[3].clone();
    let n = bad.len();
    bad[n - 6] ^= 0x10;
    let mut arp = vec![0xFF; 6];
    arp.extend([2, 0, 0, 0, 0, 1, 0x08, 0x06]);
    arp.extend([0u8; 46]);
    vec![frames[3].clone(), bad, arp]
}

#[test]
fn sim_rx_gives_the_hardware_verdict_of_every_frame() {
    let p = tmp("cli", "sim_rx_mixed.pcap");
    write_pcap(&p, &mixed_frames());
    let acc = tmp("cli", "sim_rx_accepted.pcap");
    let o = rnic(&[
        "sim",
        "rx",
        "--verbose",
        "--out",
        acc.to_str().unwrap(),
        p.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].ends_with("accepted"), "{out}");
    assert!(lines[1].ends_with("icrc"), "{out}");
    assert!(lines[2].ends_with("bypass"), "{out}");
    assert!(out.contains("cnt_drop_icrc        1"), "{out}");
    assert_eq!(last_line(&o), "frames=3 accepted=1 dropped=1 bypass=1");
    let written = pcap::read_file(&acc).unwrap().records;
    assert_eq!(written.len(), 1);
    assert_eq!(written[0].data, mixed_frames()[0]);
}

/// A RoCEv2 frame cut inside its UDP header after the destination port: the wire model calls
/// it a truncated RoCEv2 frame (`locate` finds it, `parse` fails), and so do the hardware's
/// counters; `--verbose` shows the verdict with no disagreement.
#[test]
fn sim_rx_counts_a_frame_cut_inside_its_udp_header_as_truncated() {
    let (_, frames) = common::scapy_reference();
    let f = &frames[3];
    let l3 = if f[12..14] == [0x81, 0x00] { 18 } else { 14 };
    let udp = l3 + if f[l3] >> 4 == 4 { 20 } else { 40 };
    let cut = f[..udp + 6].to_vec();
    assert!(rnic_wire::locate(&cut, &[rnic_wire::udp::ROCE_PORT]).is_some());
    assert!(rnic_wire::RocePacket::parse(&cut).is_err());
    let p = tmp("cli", "sim_rx_cut_udp.pcap");
    write_pcap(&p, &[f.clone(), cut]);
    let o = rnic(&["sim", "rx", "--verbose", p.to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].ends_with("accepted"), "{out}");
    assert!(lines[1].ends_with("truncated"), "{out}");
    assert!(!out.contains("software model"), "{out}");
    assert!(out.contains("cnt_drop_truncated   1"), "{out}");
    assert_eq!(last_line(&o), "frames=2 accepted=1 dropped=1 bypass=0");
}

#[test]
fn sim_loopback_rebuilds_frames_byte_for_byte() {
    let out = tmp("cli", "loopback_reference.pcap");
    let o = rnic(&["sim", "loopback", &reference_path(), out.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        last_line(&o),
        "frames=536 accepted=536 dropped=0 bypass=0 rebuilt=536 identical=536"
    );
    // The reference frames carry no Ethernet padding: the rebuilt trace is the same bytes.
    let (_, frames) = common::scapy_reference();
    let got: Vec<Vec<u8>> = pcap::read_file(&out)
        .unwrap()
        .records
        .into_iter()
        .map(|r| r.data)
        .collect();
    assert_eq!(got, frames);
    let o = rnic(&["trace", "check", out.to_str().unwrap()]);
    assert_eq!(last_line(&o), "frames=536 roce=536 icrc_ok=536 icrc_bad=0");

    // Mixed input: one frame rebuilt, one dropped, one bypassed.
    let p = tmp("cli", "loopback_mixed.pcap");
    write_pcap(&p, &mixed_frames());
    let out = tmp("cli", "loopback_mixed_out.pcap");
    let byp = tmp("cli", "loopback_mixed_bypass.pcap");
    let o = rnic(&[
        "sim",
        "loopback",
        "--bypass",
        byp.to_str().unwrap(),
        p.to_str().unwrap(),
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        last_line(&o),
        "frames=3 accepted=1 dropped=1 bypass=1 rebuilt=1 identical=1"
    );
    let m = mixed_frames();
    assert_eq!(pcap::read_file(&out).unwrap().records[0].data, m[0]);
    assert_eq!(pcap::read_file(&byp).unwrap().records[0].data, m[2]);

    let o = rnic(&[
        "sim",
        "loopback",
        tmp("cli", "missing.pcap").to_str().unwrap(),
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.pcap"));
}
