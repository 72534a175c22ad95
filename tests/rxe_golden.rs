//! The golden Linux soft-RoCE traces (tests/golden/rxe/, made by `rnic qemu golden`): every
//! frame decodes and passes its ICRC, `rnic trace check` accepts each capture, and the RC
//! behaviour in them matches rc-transport.md: after a lost PSN one sequence-error NAK carries
//! it, the requester goes back to it and resends in order, duplicates are ACKed again.

mod common;

use std::collections::BTreeSet;
use std::process::Command;

use rnic::qemu_cli::GoldenEntry;
use rnic_qemu::analysis::{self, Frame};
use rnic_qemu::link::{FaultAction, LinkReport};
use rnic_qemu::rxe::deliveries;
use rnic_wire::{RocePacket, locate, pcap};

fn manifest() -> Vec<GoldenEntry> {
    let text = std::fs::read_to_string(common::golden("rxe/manifest.json")).expect("manifest");
    serde_json::from_str(&text).expect("manifest parses")
}

fn frames(e: &GoldenEntry) -> (analysis::Decoded, Vec<pcap::Record>) {
    let cap = pcap::read_file(common::golden(&format!("rxe/{}", e.file))).expect("pcap");
    let report = LinkReport {
        faults: e.fault_record.clone(),
        ..Default::default()
    };
    (
        analysis::decode(&cap.records, &deliveries(&report)),
        cap.records,
    )
}

#[test]
fn the_set_is_small_and_covers_loss() {
    let m = manifest();
    assert!(m.len() >= 4);
    let mut total = 0;
    for e in &m {
        total += std::fs::metadata(common::golden(&format!("rxe/{}", e.file)))
            .unwrap()
            .len();
        assert!(
            e.kernel.starts_with("6."),
            "{}: kernel {}",
            e.file,
            e.kernel
        );
    }
    assert!(total < 1 << 20, "golden rxe traces take {total} bytes");
    assert!(
        m.iter()
            .any(|e| e.faults.drop_every.is_some() && e.seq_naks > 0)
    );
}

#[test]
fn every_frame_decodes_and_passes_its_icrc() {
    for e in manifest() {
        let (_, records) = frames(&e);
        let mut roce = 0;
        for (i, r) in records.iter().enumerate() {
            if locate(&r.data, &[4791]).is_none() {
                continue;
            }
            roce += 1;
            let p =
                RocePacket::parse(&r.data).unwrap_or_else(|err| panic!("{} #{i}: {err}", e.file));
            assert!(p.icrc_ok(), "{} #{i}: ICRC", e.file);
        }
        assert!(roce > 0, "{}: no RoCEv2 frames", e.file);
    }
}

#[test]
fn rnic_trace_check_accepts_every_capture() {
    let files: Vec<_> = manifest()
        .iter()
        .map(|e| common::golden(&format!("rxe/{}", e.file)))
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_rnic"))
        .args(["trace", "check"])
        .args(&files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

fn is_seq_nak(f: &Frame) -> bool {
    f.opcode == 0x11 && f.syndrome == Some(0x60)
}

#[test]
fn rc_transport_behaviour_matches_the_rules() {
    for e in manifest() {
        let (d, _) = frames(&e);
        assert!(e.completed, "{}: the tool did not complete", e.file);
        let b = analysis::check_rc(&d.frames, analysis::infer_mtu(&d.frames));
        assert!(b.violations.is_empty(), "{}: {:?}", e.file, b.violations);

        // Independent of the model: which PSNs did the link drop, per direction?
        let dropped: BTreeSet<(String, u32)> = e
            .fault_record
            .iter()
            .filter(|f| f.action == FaultAction::Drop)
            .filter_map(|f| {
                let fr = d.frames.iter().find(|x| x.index as u64 == f.frame)?;
                assert_eq!(fr.psn, f.psn, "{}: fault record and pcap agree", e.file);
                Some((format!("{}->{}", fr.dst, fr.src), fr.psn))
            })
            .collect();
        let naks: Vec<&Frame> = d.frames.iter().filter(|f| is_seq_nak(f)).collect();
        if e.faults.drop_every.is_none() {
            assert!(naks.is_empty(), "{}: NAKs without loss", e.file);
            continue;
        }
        for n in &naks {
            // The NAK goes back to the requester and names a PSN the link dropped towards
            // the NAK's sender (the first one it is missing).
            let key = (format!("{}->{}", n.src, n.dst), n.psn);
            assert!(
                dropped.contains(&key),
                "{}: NAK at #{} for PSN {} that was not lost",
                e.file,
                n.index,
                n.psn
            );
            // Go-back-N: the requester resends that PSN, then the next ones in order, up to
            // the last one it had sent before the NAK (what follows may be a new episode).
            let is_req =
                |f: &&Frame| f.src == n.dst && f.dst == n.src && analysis::is_request(f.opcode);
            let highest = d
                .frames
                .iter()
                .filter(|f| f.index < n.index)
                .filter(is_req)
                .map(|f| f.psn)
                .max_by_key(|&p| analysis::psn_diff(p, n.psn))
                .expect("requests before the NAK");
            let resent: Vec<u32> = d
                .frames
                .iter()
                .filter(|f| f.index > n.index)
                .filter(is_req)
                .map(|f| f.psn)
                .skip_while(|&p| p != n.psn)
                .take((analysis::psn_diff(highest, n.psn) + 1).max(1) as usize)
                .collect();
            assert_eq!(
                resent.first(),
                Some(&n.psn),
                "{}: PSN {} never resent",
                e.file,
                n.psn
            );
            if e.tool != "ib_read_bw" {
                for w in resent.windows(2) {
                    assert_eq!(
                        w[1],
                        (w[0] + 1) & 0xFF_FFFF,
                        "{}: resend after NAK #{} not in order: {resent:?}",
                        e.file,
                        n.index
                    );
                }
            }
        }
        // One NAK per loss episode: never two NAKs for the same PSN in a row without the
        // PSN arriving in between.
        for w in naks.windows(2) {
            if w[0].psn == w[1].psn && w[0].src == w[1].src {
                let arrived = d.frames.iter().any(|f| {
                    f.index > w[0].index
                        && f.index < w[1].index
                        && f.dst == w[0].src
                        && f.psn == w[0].psn
                        && f.deliveries > 0
                        && analysis::is_request(f.opcode)
                });
                assert!(
                    arrived,
                    "{}: two NAKs for PSN {} in one episode",
                    e.file, w[0].psn
                );
            }
        }
        assert_eq!(b.duplicates, b.duplicates_reacked, "{}", e.file);
        assert_eq!(b.duplicate_reads, b.duplicate_reads_answered, "{}", e.file);
    }
}

#[test]
fn the_analysis_catches_a_doctored_trace() {
    // Take a trace with a sequence-error NAK and change the PSN the NAK carries: the model
    // must object (so the agreement above means something).
    let e = manifest()
        .into_iter()
        .find(|e| e.seq_naks > 0)
        .expect("a golden trace with a NAK");
    let (mut d, _) = frames(&e);
    let n = d.frames.iter_mut().find(|f| is_seq_nak(f)).unwrap();
    n.psn = (n.psn + 1) & 0xFF_FFFF;
    let b = analysis::check_rc(&d.frames, analysis::infer_mtu(&d.frames));
    assert!(!b.violations.is_empty(), "{}", e.file);
}
