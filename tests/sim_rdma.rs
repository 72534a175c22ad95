//! `rnic sim rdma`: two hardware NICs (Verilator) through a lossy cable. Its last line counts
//! the messages, and every one must be delivered intact (exit 0); the pcap it writes holds
//! every frame on the cable, each a well-formed RoCEv2 frame with a good ICRC (checked by the
//! wire model, independently of the hardware that built them), with requests both ways
//! (WRITE, READ and SEND opcodes) and ACKs; with loss, packets are sent again (a PSN seen
//! twice in one direction); the plot is an SVG; bad options exit 2 naming the option.

mod common;

use std::collections::HashSet;

use common::{last_line, rnic, stdout, tmp};
use rnic_wire::{RocePacket, pcap};

fn field(line: &str, key: &str) -> u64 {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in {line:?}"))
        .parse()
        .unwrap_or_else(|_| panic!("{key} in {line:?}"))
}

#[test]
fn two_hardware_nics_deliver_every_message_through_a_lossy_cable() {
    let dir = tmp("sim_rdma", "lossy");
    let o = rnic(&[
        "sim",
        "rdma",
        "--loss",
        "0.03",
        "--seed",
        "7",
        "--messages",
        "24",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let last = last_line(&o);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}\n{}",
        stdout(&o),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(last.starts_with("messages=48 "), "{last}");
    assert_eq!(field(&last, "delivered"), 48, "{last}");
    assert_eq!(field(&last, "intact"), 48, "{last}");
    let goodput: f64 = last.rsplit("goodput_bpc=").next().unwrap().parse().unwrap();
    assert!(
        goodput > 0.0 && goodput <= 16.0,
        "two 8-byte-per-clock links: {goodput}"
    );
    let text = stdout(&o);
    let resent: u64 = text
        .lines()
        .find(|l| l.starts_with("retransmissions="))
        .map(|l| field(l, "retransmissions"))
        .expect("a retransmissions line");
    assert!(resent > 0, "3 % loss: something sent again\n{text}");

    let cap = pcap::read_file(dir.join("rdma.pcap")).unwrap();
    assert!(cap.records.len() > 100, "{} frames", cap.records.len());
    let mut opcodes = HashSet::new();
    let mut seen = HashSet::new();
    let mut again = 0;
    for r in &cap.records {
        let p = RocePacket::parse(&r.data).unwrap_or_else(|e| panic!("a frame on the cable: {e}"));
        assert!(p.icrc_ok(), "the ICRC of every frame the NICs built");
        let p = p.repr();
        opcodes.insert(p.bth.opcode);
        if !seen.insert((p.bth.dest_qp, p.bth.opcode, p.bth.psn)) {
            again += 1;
        }
    }
    for (op, name) in [(0x06, "WRITE_FIRST"), (0x0C, "READ_REQUEST"), (0x11, "ACK")] {
        assert!(opcodes.contains(&op), "no {name} on the cable: {opcodes:?}");
    }
    assert!(
        opcodes.iter().any(|o| *o <= 0x05),
        "SENDs on the cable: {opcodes:?}"
    );
    assert!(
        opcodes.iter().any(|o| (0x0D..=0x0F).contains(o)),
        "READ responses on the cable: {opcodes:?}"
    );
    assert!(again > 0, "a packet sent again shows in the capture");
    let svg = std::fs::read_to_string(dir.join("rdma.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("goodput"),
        "an SVG plot"
    );
}

#[test]
fn bad_options_exit_2_naming_the_option() {
    for (args, name) in [
        (vec!["--loss", "0.9"], "--loss"),
        (vec!["--mtu", "1500"], "--mtu"),
        (vec!["--messages", "0"], "--messages"),
    ] {
        let mut all = vec!["sim", "rdma"];
        all.extend(args);
        let o = rnic(&all);
        assert_eq!(o.status.code(), Some(2), "{all:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(name),
            "{all:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
