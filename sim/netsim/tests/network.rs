//! Network-level tests: ECN marking frequency, conservation, determinism, CNP frames on the
//! wire, pcap taps, pacing, incast with and without DCQCN, and a scenario end to end.

use std::net::Ipv4Addr;

use rnic_netsim::dcqcn::np::{cnp_desc, cnp_packet};
use rnic_netsim::dcqcn::{DcqcnParams, Profile};
use rnic_netsim::link::{Link, LinkConfig};
use rnic_netsim::packet::{ECN_CE, HostAddr, WriteSegment};
use rnic_netsim::params::Config;
use rnic_netsim::rng::Rng;
use rnic_netsim::scenario::{
    Progress, build_star, receiver_qpn, run_scenario, run_star, sender_qpn,
};
use rnic_netsim::switch::{EgressPort, MarkAt, Red, Switch, SwitchConfig};
use rnic_netsim::traffic::Receiver;
use rnic_wire::RocePacket;
use rnic_wire::eth::MacAddr;

fn cfg(params: &[&str]) -> Config {
    let v: Vec<String> = params.iter().map(|s| s.to_string()).collect();
    Config::build(Profile::Paper, 1, &v).unwrap()
}

fn tmpdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("rnic-netsim-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Through the switch's real enqueue path, with the queue held at q bytes: the number of
/// frames marked CE (in their bytes) is within 5 sigma of the binomial mean n p, with
/// p = Pmax (q - Kmin) / (Kmax - Kmin).
#[test]
fn ecn_marking_frequency_within_binomial_bounds() {
    let red = Red {
        kmin_bytes: 5_000,
        kmax_bytes: 200_000,
        pmax: 0.2,
    };
    let mut sw = Switch::new(SwitchConfig {
        buffer_bytes: 10_000_000,
        port_limit_bytes: 10_000_000,
        red: Some(red),
        mark_at: MarkAt::Enqueue,
    });
    let link = Link::new(LinkConfig::new(40_000_000_000, 1000), Rng::new(1, 1));
    sw.ports.push(EgressPort::new(link, (1, 0), Rng::new(1, 2)));
    let (a, b) = (HostAddr::host(0), HostAddr::host(1));
    sw.routes.insert(u32::from(b.ip), 0);
    let seg = WriteSegment {
        dest_qp: 0x200,
        psn: 0,
        offset: 0,
        len: 926,
        msg_len: 1 << 30,
        va: 0,
        rkey: 1,
    };
    let pkt = seg.build(a, b, 0xC000);
    // 74 bytes of headers and ICRC, 926 of payload, 2 of pad.
    assert_eq!(pkt.len(), 1002);
    let len = pkt.len() as u64;
    let n = 40_000u64;
    for q_frames in [3u64, 50, 100, 150, 199, 201] {
        let q = q_frames * len;
        // Fill to q bytes (these fills may themselves be marked; they are not counted).
        while sw.ports[0].queue_bytes < q {
            sw.enqueue(pkt.clone()).unwrap();
        }
        let before = sw.ports[0].stats.marked;
        let mut marked_bytes = 0;
        for _ in 0..n {
            sw.enqueue(pkt.clone()).unwrap();
            let p = &mut sw.ports[0];
            let last = p.queue.pop_back().unwrap();
            p.queue_bytes -= len;
            sw.used_bytes -= len;
            if last.ecn() == ECN_CE {
                marked_bytes += 1;
                let parsed = RocePacket::parse(&last.frame).unwrap();
                assert_eq!(parsed.ip.checksum_ok(), Some(true));
                assert!(parsed.icrc_ok());
            }
        }
        let marked = sw.ports[0].stats.marked - before;
        assert_eq!(marked, marked_bytes, "counter and bytes agree");
        let p = red.probability(q);
        let want = p.min(1.0);
        let mean = n as f64 * want;
        let sigma = (n as f64 * want * (1.0 - want)).sqrt();
        assert!(
            (marked as f64 - mean).abs() <= 5.0 * sigma + 1e-9,
            "q={q}: {marked} marked, expected {mean:.0} +- {:.0}",
            5.0 * sigma
        );
        // Independent expectation of p from the doc's formula for the in-range cases.
        if (5_000..=200_000).contains(&q) {
            assert!((p - 0.2 * (q - 5000) as f64 / 195_000.0).abs() < 1e-12);
        }
    }
}

/// Every frame sent is received, dropped for a counted reason, or in flight at the end —
/// with loss, reordering, duplication and buffer overflow all happening, stopped mid-run.
#[test]
fn conservation_with_faults_and_overflow() {
    for dcqcn in ["dcqcn=1", "dcqcn=0"] {
        let c = cfg(&[
            "loss=0.01",
            "duplicate=0.01",
            "reorder=0.02",
            "buffer_kb=60",
            "port_buffer_kb=60",
            dcqcn,
        ]);
        let r = run_star(
            &c,
            "faults",
            &[0, 0, 0, 0],
            1_500_123,
            None,
            &mut Progress::quiet(),
        )
        .unwrap();
        let k = r.counters;
        assert!(
            k.lost > 0 && k.duplicated > 0 && k.dropped_overflow > 0,
            "{k:?}"
        );
        assert!(r.in_flight > 0);
        assert_eq!(
            k.injected + k.duplicated,
            k.delivered + k.lost + k.dropped_overflow + k.dropped_no_route + r.in_flight,
            "{k:?}"
        );
        r.conservation.clone().unwrap();
        assert_eq!(r.bad_frames(), 0);
    }
}

/// The same seed gives the same run; another seed a different one.
#[test]
fn same_seed_same_result() {
    let go = |seed: u64| {
        let mut c = cfg(&["loss=0.001", "reorder=0.01", "duplicate=0.001"]);
        c.seed = seed;
        let r = run_star(
            &c,
            "x",
            &[0, 300_000],
            2_000_000,
            None,
            &mut Progress::quiet(),
        )
        .unwrap();
        (r.csv(false), r.counters)
    };
    let a = go(7);
    assert_eq!(a, go(7));
    assert_ne!(a.0, go(8).0);
}

/// Frame 2 of the public vectors capture (roce-wire.md's golden CNP, ICRC 82fd002a), rebuilt
/// byte for byte from its fields.
#[test]
fn cnp_matches_the_golden_frame() {
    let golden = rnic_wire::parse_hex(
        "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a001201000012b7002800008100ffff40000118000000000000000000000000000000000000000082fd002a",
    )
    .unwrap();
    let src = HostAddr {
        mac: MacAddr([0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32]),
        ip: Ipv4Addr::new(10, 0, 17, 1),
    };
    let dst = HostAddr {
        mac: MacAddr([0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2]),
        ip: Ipv4Addr::new(10, 0, 18, 1),
    };
    let built = cnp_desc(src, dst, 0, 0x118, 0x718c).build().unwrap();
    assert_eq!(built, golden);
}

/// A CNP from the model parses, passes the ICRC and has every field roce-wire.md lists.
#[test]
fn model_cnp_parses_with_the_listed_fields() {
    let pkt = cnp_packet(HostAddr::host(5), HostAddr::host(0), 0x205, 0x105);
    let p = RocePacket::parse(&pkt.frame).unwrap();
    assert!(p.icrc_ok());
    assert_eq!(p.ip.checksum_ok(), Some(true));
    assert_eq!(p.bth.opcode, 0x81);
    assert!(p.bth.becn && !p.bth.fecn && !p.bth.ack_req && !p.bth.solicited && !p.bth.mig_req);
    assert_eq!(
        (p.bth.pkey, p.bth.psn, p.bth.dest_qp, p.pad_cnt),
        (0xFFFF, 0, 0x105, 0)
    );
    assert_eq!(pkt.frame[15], 0xC2, "TOS = DSCP 48 + ECT(0)");
    assert_eq!(&pkt.frame[16..18], &[0, 60], "IPv4 total length 60");
    assert_eq!(&pkt.frame[38..40], &[0, 40], "UDP length 40");
    assert_eq!(pkt.frame[46], 0x40, "BTH byte 4: BECN only");
    assert!(pkt.frame[54..70].iter().all(|&b| b == 0), "16 zero bytes");
    assert_eq!(p.icrc_offset, 70);
}

/// Taps write real frames: the captures re-read with the wire model's pcap reader, every
/// frame parses with a good ICRC and IPv4 checksum, the bottleneck capture holds CE-marked
/// WRITE packets and the receiver's capture holds CNPs addressed to the senders' QPs, no two
/// for one QP closer than N.
#[test]
fn taps_reread_and_cnps_on_the_wire_follow_the_rules() {
    let dir = tmpdir("taps");
    let c = cfg(&["tap_limit=100000"]);
    let prefix = dir.join("t");
    let r = run_star(
        &c,
        "t",
        &[0, 0],
        1_000_000,
        Some(&prefix),
        &mut Progress::quiet(),
    )
    .unwrap();
    assert_eq!(r.taps.len(), 2);
    let data = rnic_wire::pcap::read_file(&r.taps[0]).unwrap();
    let cnps = rnic_wire::pcap::read_file(&r.taps[1]).unwrap();
    assert!(data.records.len() > 1000);
    assert_eq!(cnps.records.len() as u64, r.cnps());
    assert!(r.cnps() > 0);
    let mut ce = 0;
    for rec in &data.records {
        let p = RocePacket::parse(&rec.data).unwrap();
        assert!(p.icrc_ok() && p.ip.checksum_ok() == Some(true));
        assert!(matches!(p.bth.opcode, 0x06..=0x08 | 0x0A));
        ce += usize::from(p.ip.repr().dscp_ecn().1 == ECN_CE);
    }
    assert_eq!(ce as u64, r.bottleneck.marked);
    assert!(ce > 0);
    let n_ns = 50_000 - 7;
    let mut last: [Option<u64>; 2] = [None; 2];
    for rec in &cnps.records {
        let p = RocePacket::parse(&rec.data).unwrap();
        assert!(p.icrc_ok());
        assert_eq!(p.bth.opcode, 0x81);
        let flow = (0..2)
            .find(|&i| sender_qpn(i) == p.bth.dest_qp)
            .expect("a sender's QP");
        if let Some(prev) = last[flow] {
            assert!(rec.ts_ns - prev >= n_ns, "CNPs {prev} and {} ns", rec.ts_ns);
        }
        last[flow] = Some(rec.ts_ns);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// One unthrottled flow fills the link: delivered wire bytes = line rate within 0.5%.
#[test]
fn a_lone_sender_runs_at_line_rate() {
    let c = cfg(&["link_gbps=10"]);
    let r = run_star(&c, "one", &[0], 2_000_000, None, &mut Progress::quiet()).unwrap();
    let g = r.mean_gbps(200_000, 2_000_000)[0];
    assert!((g - 10.0).abs() < 0.05, "{g} Gb/s");
    assert_eq!(r.cnps(), 0);
}

/// 4:1 incast into a 1.5 MB buffer: without DCQCN the queue overflows; with it no frame is
/// dropped and the flows share the link (Jain > 0.95 over the second half).
#[test]
fn incast_lossless_with_dcqcn_lossy_without() {
    let on = run_star(
        &cfg(&["buffer_kb=1500", "port_buffer_kb=1500"]),
        "on",
        &[0; 4],
        8_000_000,
        None,
        &mut Progress::quiet(),
    )
    .unwrap();
    let off = run_star(
        &cfg(&["buffer_kb=1500", "port_buffer_kb=1500", "dcqcn=0"]),
        "off",
        &[0; 4],
        2_000_000,
        None,
        &mut Progress::quiet(),
    )
    .unwrap();
    assert_eq!(on.counters.dropped_overflow, 0);
    assert!(off.counters.dropped_overflow > 0);
    assert!(on.jain() > 0.95, "{}", on.jain());
    assert!(on.cnps() > 0);
}

/// The receiver's notification point answers marks: every QP that saw a CE mark got a CNP,
/// and the senders saw exactly the CNPs the receiver sent (no loss configured).
#[test]
fn receiver_sends_cnps_to_the_marked_flows() {
    let c = cfg(&[]);
    let (mut net, senders, rx, _, _) = build_star(&c, &[0, 0, 0]).unwrap();
    net.run_until(2_000_000);
    let r = net.endpoint::<Receiver>(rx).unwrap();
    for i in 0..3 {
        let st = r.qp_stats(receiver_qpn(i));
        assert!(st.ce_marked > 0 && st.cnps_sent > 0 && st.cnps_sent <= st.ce_marked);
    }
    let sent: u64 = (0..3).map(|i| r.qp_stats(receiver_qpn(i)).cnps_sent).sum();
    // CNPs still on their way count as in flight.
    let got: u64 = senders
        .iter()
        .map(|&s| {
            net.endpoint::<rnic_netsim::traffic::Sender>(s)
                .unwrap()
                .stats
                .cnps
        })
        .sum();
    assert!(got <= sent && sent - got <= net.in_flight());
    let _ = DcqcnParams::profile(Profile::Paper, 40.0);
}

/// The two-flow scenario end to end (short): files written, last line `jain=X converge_us=Y`.
#[test]
fn two_flow_scenario_writes_files_and_the_last_line() {
    let dir = tmpdir("two-flow");
    let c = cfg(&[
        "duration_ms=3",
        "stagger_us=1000",
        "tap_limit=50",
        "conv_hold=1",
    ]);
    let mut out = Vec::new();
    let rep = run_scenario("two-flow", &c, &dir, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let last = text.lines().last().unwrap();
    let (j, conv) = last
        .strip_prefix("jain=")
        .and_then(|s| s.split_once(" converge_us="))
        .unwrap_or_else(|| panic!("last line {last:?}"));
    let j: f64 = j.parse().unwrap();
    let _: f64 = conv.parse().unwrap();
    assert!((0.5..=1.0).contains(&j));
    for f in [
        "two-flow.csv",
        "two-flow.svg",
        "two-flow-staggered-bottleneck.pcap",
    ] {
        assert!(rep.files.iter().any(|p| p.ends_with(f)), "{f}");
        assert!(dir.join(f).metadata().unwrap().len() > 0);
    }
    let e = run_scenario("three-flow", &c, &dir, &mut Vec::new())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("three-flow") && e.contains("incast") && e.contains("slow-vs-fast"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
