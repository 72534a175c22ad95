//! `rnic trace replay --role responder`: the model responder against real Linux rxe (every
//! golden trace of tests/golden/rxe, and with RNIC_GOLDEN_DIR the shared rxe captures and the
//! Huawei hardware exchange) with zero mismatches; a tampered capture and a forgotten drop
//! record are caught; `--qp`/`--mr` streams checked against hand-worked responses and memory;
//! bad input exits 2 naming what is wrong.

mod common;

use common::{last_line, rnic, stdout, tmp};

use std::net::Ipv4Addr;
use std::path::Path;

use rnic::qemu_cli::GoldenEntry;
use rnic_netsim::packet::{HostAddr, frame_desc};
use rnic_wire::bth::BthRepr;
use rnic_wire::ext::{AtomicEth, ExtHeaders, Reth};
use rnic_wire::{MacAddr, RocePacket, pcap};

/// The numbers of the last line `qps=.. requests=.. expected=.. ours=.. matched=.. mismatched=..`.
fn counts(line: &str) -> [usize; 6] {
    let keys = [
        "qps",
        "requests",
        "expected",
        "ours",
        "matched",
        "mismatched",
    ];
    let mut out = [usize::MAX; 6];
    for (i, part) in line.split(' ').enumerate() {
        let (k, v) = part
            .split_once('=')
            .unwrap_or_else(|| panic!("bad line {line:?}"));
        assert_eq!(k, keys[i], "{line}");
        out[i] = v.parse().unwrap();
    }
    assert!(out.iter().all(|&v| v != usize::MAX), "{line}");
    out
}

fn manifest() -> Vec<GoldenEntry> {
    let text = std::fs::read_to_string(common::golden("rxe/manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Replays `path` and asserts zero mismatches; returns the counts.
fn replay_clean(path: &Path, extra: &[&str]) -> [usize; 6] {
    let p = path.to_str().unwrap();
    let mut args = vec!["trace", "replay", "--role", "responder", p];
    args.extend_from_slice(extra);
    let o = rnic(&args);
    let line = last_line(&o);
    let c = counts(&line);
    assert!(
        o.status.success(),
        "{p}: exit {:?}\n{}",
        o.status,
        stdout(&o)
    );
    assert_eq!(c[5], 0, "{p}: {line}");
    assert!(c[2] > 0 && c[2] == c[3] && c[3] == c[4], "{p}: {line}");
    c
}

#[test]
fn every_golden_rc_trace_replays_without_a_mismatch() {
    let m = manifest();
    let faults = common::golden("rxe/manifest.json");
    let mut rc = 0;
    for e in &m {
        let path = common::golden(&format!("rxe/{}", e.file));
        if e.tool == "ibv_ud_pingpong" {
            // No RC traffic: a clear error, exit 2.
            let o = rnic(&["trace", "replay", path.to_str().unwrap()]);
            assert_eq!(o.status.code(), Some(2), "{}", e.file);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains("no RC requests"), "{err}");
            continue;
        }
        let c = replay_clean(&path, &["--faults", faults.to_str().unwrap()]);
        eprintln!("{}: {:?}", e.file, c);
        rc += 1;
    }
    assert!(rc >= 5, "only {rc} RC traces in the manifest");
}

#[test]
fn the_drop_record_matters() {
    // Without its fault record a lossy capture's responder would have seen frames that never
    // reached it: the replay must notice.
    let e = manifest()
        .into_iter()
        .find(|e| e.file.starts_with("write_bw-drop"))
        .expect("a lossy write_bw trace");
    assert!(!e.fault_record.is_empty());
    let path = common::golden(&format!("rxe/{}", e.file));
    let o = rnic(&["trace", "replay", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(counts(&last_line(&o))[5] > 0);
    // The same record as a drops file (1-based numbers) gives a clean replay.
    let drops = tmp("replay", "write.drops.txt");
    let text: String = e
        .fault_record
        .iter()
        .map(|f| format!("{} {}\n", f.frame + 1, ["A>B", "B>A"][f.from_port % 2]))
        .collect();
    std::fs::write(&drops, text).unwrap();
    replay_clean(&path, &["--drops", drops.to_str().unwrap()]);
}

#[test]
fn a_tampered_response_is_a_mismatch() {
    // Raise the MSN of one captured ACK (ICRC recomputed): the replay must flag exactly it.
    let path = common::golden("rxe/rc_pingpong.pcap");
    let mut cap = pcap::read_file(&path).unwrap();
    let mut changed = None;
    for (i, r) in cap.records.iter_mut().enumerate() {
        let Ok(p) = RocePacket::parse(&r.data) else {
            continue;
        };
        if p.bth.opcode == 0x11 && changed.is_none() {
            let mut f = p.repr();
            let a = f.ext.aeth.as_mut().unwrap();
            a.msn += 1;
            r.data = f.build().unwrap();
            changed = Some(i);
        }
    }
    let changed = changed.expect("an ACK in rc_pingpong");
    let out = tmp("replay", "tampered.pcap");
    pcap::write_file(&out, cap.records.iter().map(|r| (r.ts_ns, &r.data[..]))).unwrap();
    let o = rnic(&["trace", "replay", out.to_str().unwrap(), "--verbose"]);
    assert_eq!(o.status.code(), Some(1));
    let c = counts(&last_line(&o));
    assert_eq!(c[5], 1, "{}", stdout(&o));
    assert!(
        stdout(&o).contains(&format!("captured frame {}:", changed + 1)),
        "{}",
        stdout(&o)
    );
}

fn frame(opcode: u8, psn: u32, ext: ExtHeaders, payload: Vec<u8>, ack_req: bool) -> Vec<u8> {
    let host = |n: u8| HostAddr {
        mac: MacAddr([2, 0, 0, 0, 0, n]),
        ip: Ipv4Addr::new(10, 9, 0, n),
    };
    let bth = BthRepr {
        ack_req,
        ..BthRepr::new(opcode, 0x12, psn)
    };
    frame_desc(host(1), host(2), 0, 0, 0xC123, bth, ext, payload)
        .build()
        .unwrap()
}

#[test]
fn a_stream_without_a_responder_side_uses_the_given_qp_and_mr() {
    // WRITE 300 bytes at 0x1010, READ them back (two 256-byte responses), FETCH_ADD 5 at
    // 0x1000 twice: hand-worked responses and final memory.
    let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 1) as u8).collect();
    let reth = |va, len| ExtHeaders {
        reth: Some(Reth {
            va,
            rkey: 0x1234,
            dma_len: len,
        }),
        ..Default::default()
    };
    let fadd = ExtHeaders {
        atomic_eth: Some(AtomicEth {
            va: 0x1000,
            rkey: 0x1234,
            swap_add: 5,
            compare: 0,
        }),
        ..Default::default()
    };
    let frames = [
        frame(0x06, 100, reth(0x1010, 300), data[..256].to_vec(), false),
        frame(0x08, 101, ExtHeaders::default(), data[256..].to_vec(), true),
        frame(0x0C, 102, reth(0x1010, 300), vec![], true),
        frame(0x14, 104, fadd, vec![], true),
        frame(0x14, 105, fadd, vec![], true),
    ];
    let cap = tmp("replay", "stream.pcap");
    pcap::write_file(
        &cap,
        frames
            .iter()
            .enumerate()
            .map(|(i, f)| (i as u64 * 1000, &f[..])),
    )
    .unwrap();
    let (out, mem) = (tmp("replay", "ours.pcap"), tmp("replay", "mem.bin"));
    let o = rnic(&[
        "trace",
        "replay",
        cap.to_str().unwrap(),
        "--qp",
        "0x12:100:256:1:0x77",
        "--mr",
        "0x1234:0x1000:0x200:wra",
        "--out",
        out.to_str().unwrap(),
        "--memory-out",
        mem.to_str().unwrap(),
    ]);
    // Nothing captured to compare with: every response of ours is unmatched.
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert_eq!(
        last_line(&o),
        "qps=1 requests=5 expected=0 ours=5 matched=0 mismatched=5"
    );
    let ours = pcap::read_file(&out).unwrap();
    // Opcode, PSN, AETH syndrome and MSN, payload, atomic original value.
    type Response = (u8, u32, u8, u32, Vec<u8>, Option<u64>);
    let got: Vec<Response> = ours
        .records
        .iter()
        .map(|r| {
            let p = RocePacket::parse(&r.data).unwrap();
            assert_eq!(p.bth.dest_qp, 0x77);
            assert!(p.icrc_ok());
            let a = p.ext.aeth.unwrap();
            (
                p.bth.opcode,
                p.bth.psn,
                a.syndrome,
                a.msn,
                p.payload().to_vec(),
                p.ext.atomic_ack_eth.map(|x| x.orig),
            )
        })
        .collect();
    let want = vec![
        (0x11, 101, 0x1F, 1, vec![], None),
        (0x0D, 102, 0x1F, 2, data[..256].to_vec(), None),
        (0x0F, 103, 0x1F, 2, data[256..].to_vec(), None),
        (0x12, 104, 0x1F, 3, vec![], Some(0)),
        (0x12, 105, 0x1F, 4, vec![], Some(5)),
    ];
    assert_eq!(got, want);
    let m = std::fs::read(&mem).unwrap();
    assert_eq!(m.len(), 0x200);
    assert_eq!(&m[..8], &10u64.to_le_bytes());
    assert_eq!(&m[0x10..0x10 + 300], &data[..]);
    assert!(m[8..0x10].iter().chain(&m[0x10 + 300..]).all(|&b| b == 0));
}

#[test]
fn bad_input_names_what_is_wrong() {
    let good = common::golden("rxe/rc_pingpong.pcap");
    let good = good.to_str().unwrap();
    for (args, needle) in [
        (vec![good, "--qp", "0x11:5"], "QPN:EPSN:MTU"),
        (vec![good, "--qp", "0x11:5:1000"], "MTU 1000"),
        (vec![good, "--mr", "1:0:16:x"], "access letter"),
        (vec![good, "--qp", "0x999:0:1024"], "no RC request"),
        (vec!["/nonexistent/x.pcap"], "/nonexistent/x.pcap"),
        (vec![good, "--drops", "/nonexistent/d.txt"], "d.txt"),
    ] {
        let mut a = vec!["trace", "replay"];
        a.extend(args.iter());
        let o = rnic(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{a:?}: {err}");
    }
}

#[test]
fn the_shared_captures_replay_without_a_mismatch() {
    let Some(dir) = common::real_captures("the_shared_captures_replay_without_a_mismatch") else {
        return;
    };
    let rxe = dir.join("rxe");
    let mut n = 0;
    for entry in std::fs::read_dir(&rxe).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_none_or(|e| e != "pcap") || p.ends_with("ud.pcap") {
            continue;
        }
        // A NAME.drops.txt beside a lossy capture is picked up by itself.
        let c = replay_clean(&p, &[]);
        eprintln!("{}: {c:?}", p.display());
        n += 1;
    }
    assert!(n >= 9, "only {n} shared rxe captures");
    let c = replay_clean(&dir.join("huawei_rc_send_ack.pcap"), &[]);
    assert_eq!(c[0], 2, "both directions of the Huawei exchange");
}
