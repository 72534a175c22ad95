//! The builder checked by scapy on frames the shipped reference does not have: random field
//! values, payloads up to a 9000-byte jumbo frame, IPv4 and IPv6, with and without a tag. scapy
//! decodes each frame and recomputes its ICRC. Without python3 and scapy it skips, saying so, or
//! under CI fails; `.ci/run` and the README's test command install it.

mod common;

use std::process::Command;

use rnic_cosim::axis::Rng;
use rnic_wire::opcode::OPCODES;
use rnic_wire::{IpRepr, RoceFrame};

/// 400 random descriptions of every opcode, tagged or not, IPv4 or IPv6, up to jumbo frames.
fn random_descriptions() -> Vec<RoceFrame> {
    let (m, _) = common::scapy_reference();
    let mut rng = Rng::new(0x005E_ED0F_5CA9);
    let mut frames: Vec<RoceFrame> = Vec::new();
    for i in 0..400 {
        // Start from a reference description of a random opcode, then change every field.
        let op = OPCODES[rng.below(OPCODES.len() as u64) as usize];
        let base = m
            .frames
            .iter()
            .find(|e| e.desc.bth.opcode == op.code)
            .unwrap();
        let mut d = base.desc.clone();
        d.bth.psn = rng.below(1 << 24) as u32;
        d.bth.dest_qp = rng.below(1 << 24) as u32;
        d.bth.pkey = rng.next_u64() as u16;
        d.udp.src_port = rng.next_u64() as u16;
        d.eth.vlan = (i % 2 == 0).then_some(rnic_wire::VlanTag {
            pcp: rng.below(8) as u8,
            dei: false,
            vid: rng.below(4096) as u16,
        });
        if i % 3 == 0 {
            if let IpRepr::V4(_) = d.ip {
                let other = m
                    .frames
                    .iter()
                    .find(|e| matches!(e.desc.ip, IpRepr::V6(_)))
                    .unwrap();
                d.ip = other.desc.ip;
            }
        }
        if op.payload {
            // Up to a jumbo frame: 9000 bytes of IP MTU minus the headers.
            let max = 9000 - 40 - 8 - 12 - op.ext_len() - 4 - 3;
            let len = if i % 10 == 0 {
                max as u64
            } else {
                rng.below(max as u64 + 1)
            };
            d.payload = (0..len).map(|_| rng.next_u64() as u8).collect();
        }
        frames.push(d);
    }
    frames
}

/// scapy decodes every frame of `path` and agrees with the descriptions.
fn scapy_check(path: &std::path::Path, frames: &[RoceFrame], built: &[Vec<u8>]) {
    let out = Command::new("python3")
        .arg(common::golden("scapy_verify.py"))
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), frames.len());
    for ((v, f), wire) in lines.iter().zip(frames).zip(built) {
        let n = &v["frame"];
        assert_eq!(v["icrc_ok"], true, "frame {n}: scapy rejects the ICRC");
        assert_eq!(v["opcode"], f.bth.opcode, "frame {n}");
        assert_eq!(v["dqpn"], f.bth.dest_qp, "frame {n}");
        assert_eq!(v["psn"], f.bth.psn, "frame {n}");
        assert_eq!(v["padcount"], (4 - f.payload.len() % 4) % 4, "frame {n}");
        let l3 = f.eth.header_len();
        assert_eq!(v["ip_len"], wire.len() - l3, "frame {n}");
        assert_eq!(
            v["udp_len"],
            wire.len() - l3 - f.ip.header_len(),
            "frame {n}"
        );
        assert_eq!(
            v["vlan"],
            serde_json::json!(f.eth.vlan.map(|t| t.vid)),
            "frame {n}"
        );
    }
}

#[test]
fn scapy_accepts_random_and_jumbo_frames() {
    if !rnic_cosim::need::scapy("scapy_accepts_random_and_jumbo_frames") {
        return;
    }
    let frames = random_descriptions();
    let built: Vec<Vec<u8>> = frames.iter().map(|f| f.build().unwrap()).collect();
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("scapy_oracle.pcap");
    rnic_wire::pcap::write_file(&path, built.iter().map(|f| (0, &f[..]))).unwrap();
    scapy_check(&path, &frames, &built);
    assert!(built.iter().any(|f| f.len() >= 9000));
}

/// The same frames received and rebuilt by the hardware (`rnic sim loopback`, Verilator):
/// scapy decodes every rebuilt frame and recomputes its ICRC.
#[test]
fn scapy_accepts_frames_the_hardware_rebuilt() {
    if !rnic_cosim::need::scapy("scapy_accepts_frames_the_hardware_rebuilt") {
        return;
    }
    let frames = random_descriptions();
    let built: Vec<Vec<u8>> = frames.iter().map(|f| f.build().unwrap()).collect();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let input = dir.join("scapy_loopback_in.pcap");
    let output = dir.join("scapy_loopback_out.pcap");
    rnic_wire::pcap::write_file(&input, built.iter().map(|f| (0, &f[..]))).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_rnic"))
        .args(["sim", "loopback"])
        .arg(&input)
        .arg(&output)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let rebuilt: Vec<Vec<u8>> = rnic_wire::pcap::read_file(&output)
        .unwrap()
        .records
        .into_iter()
        .map(|r| r.data)
        .collect();
    assert_eq!(rebuilt.len(), frames.len());
    scapy_check(&output, &frames, &rebuilt);
}
