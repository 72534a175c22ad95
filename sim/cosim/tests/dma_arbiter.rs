//! The DMA arbiter in lock-step (rust-hdl and Verilator on every cycle) under two random
//! clients and a random host: every read's data reaches the client that asked, in order;
//! every write's bytes reach the host whole and its done the right client; the host side's
//! tags name the client.

use rnic_cosim::dma_bench::run_arbiter;
use rnic_cosim::ports::{PortLockStep, VerilatedPorts};
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
