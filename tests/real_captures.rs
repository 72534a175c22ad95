//! The wire model against real captures (`RNIC_GOLDEN_DIR`, see `.ci/run`): hardware NICs,
//! public vectors, scapy, and Linux soft-RoCE. Every RoCEv2 frame decodes, passes its ICRC, and
//! is rebuilt byte for byte from its parsed description; a flipped bit in ICRC-covered bytes
//! fails; the fields the ICRC masks do not matter.

mod common;

use std::path::Path;

use rnic_wire::{RocePacket, icrc, ipv4, locate, pcap};

/// (RoCEv2 frames, ICRC ok) for one capture.
fn check_file(path: &Path) -> (usize, usize) {
    let cap = pcap::read_file(path).unwrap_or_else(|e| panic!("{e}"));
    let (mut roce, mut ok) = (0, 0);
    for (i, r) in cap.records.iter().enumerate() {
        let Some(_) = locate(&r.data, &[4791]) else {
            continue;
        };
        roce += 1;
        let name = format!("{} #{}", path.display(), i + 1);
        let p = RocePacket::parse(&r.data).unwrap_or_else(|e| panic!("{name}: {e}"));
        if p.icrc_ok() {
            ok += 1;
        }
        assert_eq!(
            p.ip.checksum_ok(),
            p.ip.checksum_ok().map(|_| true),
            "{name}"
        );
        // Rebuild from the description: identical up to the end of the IP packet.
        let built = p.repr().build().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            built[..],
            r.data[..p.icrc_offset + 4],
            "{name}: rebuilt frame differs"
        );
    }
    (roce, ok)
}

#[test]
fn every_real_frame_decodes_and_passes() {
    let Some(dir) = common::real_captures("every_real_frame_decodes_and_passes") else {
        return;
    };
    let mut checked = 0;
    let beside_rxe = [
        ("huawei_rc_send_ack.pcap", 105),
        ("public_vectors_read_cnp_uc.pcap", 3),
        ("scapy_oracle_ops.pcap", 23),
    ];
    for (file, want) in beside_rxe {
        let got = check_file(&dir.join(file));
        checked += got.0;
        eprintln!("{file}: roce={} icrc_ok={}", got.0, got.1);
        assert_eq!(got, (want, want), "{file}");
    }
    let rxe = dir.join("rxe");
    let mut files: Vec<_> = std::fs::read_dir(&rxe)
        .unwrap_or_else(|e| panic!("{}: {e}", rxe.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
        .collect();
    files.sort();
    let test = "every_real_frame_decodes_and_passes";
    rnic_cosim::need::at_least(
        test,
        "rxe capture files",
        files.len(),
        rnic_cosim::need::GOLDEN_FILES - beside_rxe.len(),
    );
    for f in files {
        let (roce, ok) = check_file(&f);
        eprintln!("{}: roce={roce} icrc_ok={ok}", f.display());
        assert!(roce > 0, "{}", f.display());
        assert_eq!(roce, ok, "{}", f.display());
        checked += roce;
    }
    rnic_cosim::need::at_least(
        test,
        "RoCEv2 frames",
        checked,
        rnic_cosim::need::GOLDEN_ROCE_FRAMES,
    );
}

/// Offsets (within the IP packet) of the bytes the ICRC masks.
fn masked(ip: &[u8]) -> Vec<usize> {
    let (ip_len, mut m) = if ip[0] >> 4 == 4 {
        (20, vec![1, 8, 10, 11])
    } else {
        (40, vec![0, 1, 2, 3, 7])
    };
    m.extend([ip_len + 6, ip_len + 7, ip_len + 8 + 4]);
    m
}

#[test]
fn flipped_covered_bits_fail_and_masked_fields_do_not_matter() {
    let Some(dir) =
        common::real_captures("flipped_covered_bits_fail_and_masked_fields_do_not_matter")
    else {
        return;
    };
    let mut flips = 0usize;
    for file in [
        "huawei_rc_send_ack.pcap",
        "public_vectors_read_cnp_uc.pcap",
        "scapy_oracle_ops.pcap",
    ] {
        let cap = pcap::read_file(dir.join(file)).unwrap();
        for (i, r) in cap.records.iter().enumerate() {
            let Some(loc) = locate(&r.data, &[4791]) else {
                continue;
            };
            let name = format!("{file} #{}", i + 1);
            let mut ip = loc.ip_packet(&r.data).to_vec();
            let good = icrc::compute(&ip, 0).unwrap();
            let skip = masked(&ip);
            // IPv6 byte 0: the version nibble is covered, the traffic-class nibble is masked.
            let v6 = ip[0] >> 4 == 6;
            // Every bit of the small frames; for the 1 KiB ones, every bit of the headers and
            // one bit in every byte of the rest.
            let ends_at = ip.len();
            for byte in 0..ends_at {
                if skip.contains(&byte) && !(v6 && byte == 0) {
                    continue;
                }
                let bits: Vec<u8> = if v6 && byte == 0 {
                    vec![0, 1, 2, 3]
                } else if byte < 100 || ends_at < 200 {
                    (0..8).collect()
                } else {
                    vec![(byte % 8) as u8]
                };
                for bit in bits {
                    ip[byte] ^= 0x80 >> bit;
                    let calc = icrc::compute(&ip, 0).ok();
                    let wire = icrc::wire(&ip);
                    assert_ne!(
                        calc, wire,
                        "{name}: flipping byte {byte} bit {bit} went unnoticed"
                    );
                    ip[byte] ^= 0x80 >> bit;
                    flips += 1;
                }
            }
            // What a switch may change: TTL / hop limit, DSCP and ECN (CE marking), FECN and
            // BECN; it fixes the IPv4 checksum, and the ICRC still holds.
            let mut sw = ip.clone();
            let bth4 = if v6 { 40 + 8 + 4 } else { 20 + 8 + 4 };
            if v6 {
                sw[0] = 0x6F;
                sw[1] ^= 0xF0;
                sw[7] = sw[7].wrapping_sub(3);
            } else {
                sw[1] = 0xC3;
                sw[8] = sw[8].wrapping_sub(3);
                let mut h = ipv4::Ipv4Header::new_checked(&mut sw[..], 0).unwrap();
                h.fill_checksum();
            }
            sw[bth4] ^= 0xC0;
            assert_eq!(
                icrc::compute(&sw, 0).unwrap(),
                good,
                "{name}: masked fields"
            );
        }
    }
    eprintln!("{flips} single-bit flips detected");
    assert!(flips > 100_000);
}
