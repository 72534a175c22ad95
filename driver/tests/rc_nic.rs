//! Two hardware NICs (`rnic_hw::rc_nic`: responder path and sending side in one top) talking
//! RC to each other over a cable (`rnic_driver::rc_pair`), each posting WRITEs, READs and
//! SENDs to the other. The expectation is independent of both: every message's completion
//! (in order, status success, its own opcode) and its bytes where the verbs say they land (a
//! WRITE's in the peer's region, a READ's in the local slot, a SEND's in the peer's next
//! receive buffer, with a receive completion of its length), the bytes drawn per message. On
//! a clean cable nothing may be sent twice; on a faulty one (loss, duplication, reordering,
//! corruption) the NICs must recover by themselves (NAKs, ACK timeouts, go-back-N) and still
//! deliver every message exactly once and intact. The first case runs both NICs as rust-hdl
//! and Verilator in lock-step; the others Verilator alone.

use rnic_driver::rc_nic_sim::RcNicSim;
use rnic_driver::rc_pair::{PairConfig, PairReport, run_pair};
use rnic_transport::verbs::Mtu;

fn assert_all_intact(r: &PairReport, what: &str) {
    assert!(
        r.errors.is_empty(),
        "{what}: {} errors, first: {:?}",
        r.errors.len(),
        &r.errors[..r.errors.len().min(5)]
    );
    assert_eq!(r.delivered, r.messages, "{what}: delivered");
    assert_eq!(r.intact, r.messages, "{what}: intact");
    assert!(r.messages > 0 && r.bytes > 0, "{what}: a workload ran");
}

#[test]
fn two_nics_in_lockstep_on_a_clean_cable() {
    // rust-hdl's simulation of a top this size recurses deeply.
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(lockstep_run)
        .unwrap()
        .join()
        .unwrap();
}

fn lockstep_run() {
    let cfg = PairConfig {
        seed: 3,
        messages: 6,
        max_len: 3000,
        outstanding: 3,
        ..Default::default()
    };
    let nics = [
        RcNicSim::lockstep(11, 0.1).unwrap(),
        RcNicSim::lockstep(12, 0.1).unwrap(),
    ];
    let r = run_pair(nics, &cfg, |_| {}).unwrap();
    assert_all_intact(&r, "lock-step");
    assert_eq!(r.retransmitted(), 0, "a clean cable: nothing sent again");
    println!(
        "lock-step: {} messages, {} clocks, {} + {} frames",
        r.messages, r.cycles, r.frames[0], r.frames[1]
    );
}

#[test]
fn two_nics_recover_from_a_faulty_cable() {
    let cases = [
        // (seed, mtu, loss, dup, reorder, corrupt, stall)
        (1, Mtu::M1024, 0.0, 0.0, 0.0, 0.0, 0.0),
        (2, Mtu::M4096, 0.02, 0.01, 0.01, 0.01, 0.1),
        (3, Mtu::M1024, 0.05, 0.02, 0.02, 0.02, 0.0),
        (4, Mtu::M1024, 0.10, 0.0, 0.0, 0.0, 0.05),
    ];
    let mut resent = 0;
    let mut timeouts = 0;
    for (seed, mtu, loss, dup, reorder, corrupt, stall) in cases {
        let cfg = PairConfig {
            seed,
            mtu,
            loss,
            dup,
            reorder,
            corrupt,
            stall,
            ..Default::default()
        };
        let nics = [
            RcNicSim::verilated(seed, stall).unwrap(),
            RcNicSim::verilated(seed + 100, stall).unwrap(),
        ];
        let r = run_pair(nics, &cfg, |_| {}).unwrap();
        let what = format!("seed {seed}, loss {loss}");
        assert_all_intact(&r, &what);
        let faults = r.lost + r.duplicated + r.reordered + r.corrupted;
        if loss == 0.0 {
            assert_eq!(r.retransmitted(), 0, "{what}: a clean cable");
        } else {
            assert!(faults > 0, "{what}: the cable did something");
            assert!(
                r.retransmitted() > 0,
                "{what}: losses are recovered by sending again"
            );
        }
        let c = r.counters;
        // A flipped byte lands in a field the ICRC covers, the IPv4 checksum covers, or
        // neither (the UDP checksum, the masked BTH bits): no more ICRC drops than flips.
        assert!(
            c[0].rx_drop_icrc + c[1].rx_drop_icrc <= r.corrupted,
            "{what}: only corrupted frames fail their ICRC"
        );
        resent += r.retransmitted();
        timeouts += c[0].expiries + c[1].expiries;
        println!(
            "{what}: {} messages in {} clocks, goodput {:.2} B/clock, {} lost {} dup {} reordered \
             {} corrupted, {} sent again, {} timeouts",
            r.messages,
            r.cycles,
            r.goodput_bpc(),
            r.lost,
            r.duplicated,
            r.reordered,
            r.corrupted,
            r.retransmitted(),
            c[0].expiries + c[1].expiries
        );
    }
    println!("{resent} packets sent again, {timeouts} timer expiries over the faulty cases");
}
