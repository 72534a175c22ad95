//! The DMA arbiter in lock-step (rust-hdl and Verilator on every cycle) under two random
//! clients and a random host: every read's data reaches the client that asked, in order;
//! every write's bytes reach the host whole and its done the right client; the host side's
//! tags name the client; a client that withdraws an offer is not taken in its absence.

use rnic_cosim::dma_bench::run_arbiter;
use rnic_cosim::ports::{PortDut, PortLockStep, VerilatedPorts};
use rnic_hw::dma_arbiter::DmaArbiter;

#[test]
fn two_clients_share_the_port_without_losing_or_mixing_anything() {
    for seed in 1..=3 {
        let mut d = PortLockStep::new(DmaArbiter::<7, 8>::new(), "dma_arbiter", seed).unwrap();
        let run = run_arbiter(&mut d, seed, 0.3, 60).unwrap();
        assert!(run.errors.is_empty(), "seed {seed}: {:?}", run.errors);
        assert_eq!(run.reads + run.writes, 120, "seed {seed}");
        assert!(run.reads > 20 && run.writes > 20);
    }
}

#[test]
fn back_to_back_requests_all_complete_unmixed() {
    let mut d = VerilatedPorts::of::<DmaArbiter<7, 8>>("dma_arbiter").unwrap();
    let run = run_arbiter(&mut d, 9, 0.0, 400).unwrap();
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.reads + run.writes, 800);
}

/// A client that withdraws a request the host has not taken (the rule says it must not, but
/// the arbiter must not invent one): the grant held for it offers nothing while it is gone,
/// the host never sees its fields with the other client's valid, and the other client is
/// served once the hold lets go. Reads and writes, rust-hdl and Verilator in lock-step.
#[test]
fn a_withdrawn_offer_is_not_taken_in_its_absence() {
    for ch in ["rd", "wr"] {
        let mut d = PortLockStep::new(DmaArbiter::<7, 8>::new(), "dma_arbiter", 1).unwrap();
        let set = |d: &mut PortLockStep<DmaArbiter<7, 8>>, n: &str, v: u64| {
            let i = d.input(n);
            d.set(i, v);
        };
        let get = |d: &PortLockStep<DmaArbiter<7, 8>>, n: &str| d.get(d.output(n));
        set(&mut d, "reset", 1);
        d.settle().unwrap();
        d.tick();
        set(&mut d, "reset", 0);
        let (a0, a1) = (0x1000, 0x2000);
        // Client 0 offers; the host is not ready: the grant holds client 0.
        set(&mut d, &format!("s0_{ch}_req_valid"), 1);
        set(&mut d, &format!("s0_{ch}_req_addr"), a0);
        set(&mut d, &format!("s1_{ch}_req_addr"), a1);
        set(&mut d, &format!("m_dma_{ch}_req_ready"), 0);
        d.settle().unwrap();
        assert_eq!(get(&d, &format!("m_dma_{ch}_req_valid")), 1);
        assert_eq!(get(&d, &format!("m_dma_{ch}_req_addr")), a0);
        d.tick();
        // Client 0 withdraws, client 1 offers, the host is ready: nothing is offered.
        set(&mut d, &format!("s0_{ch}_req_valid"), 0);
        set(&mut d, &format!("s1_{ch}_req_valid"), 1);
        set(&mut d, &format!("m_dma_{ch}_req_ready"), 1);
        d.settle().unwrap();
        assert_eq!(
            get(&d, &format!("m_dma_{ch}_req_valid")),
            0,
            "{ch}: an offer of nobody"
        );
        assert_eq!(get(&d, &format!("s1_{ch}_req_ready")), 0, "{ch}");
        d.tick();
        // The hold has let go: client 1 is offered and taken, its tag naming it.
        d.settle().unwrap();
        assert_eq!(get(&d, &format!("m_dma_{ch}_req_valid")), 1, "{ch}");
        assert_eq!(get(&d, &format!("m_dma_{ch}_req_addr")), a1, "{ch}");
        assert_eq!(get(&d, &format!("m_dma_{ch}_req_tag")) >> 7, 1, "{ch}");
        assert_eq!(get(&d, &format!("s1_{ch}_req_ready")), 1, "{ch}");
        d.tick();
    }
}
