//! The completer's step in hardware (`rnic_hw::comp_check`, rust-hdl and Verilator in
//! lock-step) against the transport model's completer at work: two model NICs run random work
//! requests of every RC opcode over a link that drops, duplicates and delays frames both ways,
//! and every step A's completer decided (for each ACK, coalesced ACK, NAK, READ response and
//! atomic ACK it received: one per request completed, and a last), with the completer state,
//! send point and oldest request it read, is decided again by the hardware, equal in every
//! output. The random steps of `sim/cosim/tests/comp_check.rs` reach the corners a working
//! pair never does (retries running out, remote errors, RNR NAKs); these are the steps a
//! completer meets.

mod common;

use std::collections::BTreeMap;

use common::*;
use rnic_cosim::axis::Rng;
use rnic_cosim::comp_step::step_once;
use rnic_cosim::ports::{PortDut, PortLockStep};
use rnic_hw::comp_check::CompCheck;
use rnic_transport::comp_check::{Step, StepInput, Timer};
use rnic_transport::verbs::Mtu;

/// The steps A's completer decided while the pair ran 100 random work requests.
fn scenario(seed: u64, mtu: Mtu, ack_every: u32, f: Faults) -> Vec<(StepInput, Step)> {
    let mut rng = Rng::new(seed);
    let mdra = 1 + rng.below(16) as u8;
    let mut m = model(&mut rng, mtu, ack_every, mdra);
    m.a.log_completer_steps(true);
    let fill_a = m.a.mr_bytes(m.mr_a.lkey).unwrap().to_vec();
    post(&mut m, &mut rng, 100, &fill_a);
    run_model(&mut m, &mut rng, f, None);
    m.a.take_completer_steps()
}

#[test]
fn completer_steps_over_a_faulty_link_equal_the_model() {
    let f = Faults {
        drop: 0.05,
        dup: 0.03,
        delay: 0.05,
    };
    let mut d = PortLockStep::new(CompCheck::default(), "comp_check", 1).unwrap();
    let reset = d.input("reset");
    d.set(reset, 1);
    d.settle().unwrap();
    d.tick();
    d.set(reset, 0);
    let mut noise = Rng::new(0xC0);
    let mut verdicts = BTreeMap::new();
    let (mut steps, mut rewinds, mut armed, mut stopped) = (0, 0, 0, 0);
    for (seed, mtu, every) in [
        (21, Mtu::M256, 64),
        (22, Mtu::M1024, 3),
        (23, Mtu::M4096, 1),
        (24, Mtu::M512, 8),
        (25, Mtu::M2048, 16),
    ] {
        for (n, (i, s)) in scenario(seed, mtu, every, f).into_iter().enumerate() {
            let hw = step_once(&mut d, &i, &mut noise)
                .unwrap_or_else(|e| panic!("seed {seed} step {n}: {e}\n{i:?}"));
            assert_eq!(
                hw, s,
                "seed {seed} step {n}: the hardware's decision, then the model's\n{i:?}"
            );
            *verdicts.entry(format!("{:?}", s.verdict)).or_insert(0usize) += 1;
            steps += 1;
            rewinds += usize::from(s.rewind);
            armed += usize::from(s.timer == Timer::Arm);
            stopped += usize::from(s.timer == Timer::Stop);
        }
    }
    eprintln!(
        "{steps} steps, {rewinds} rewinds, timer restarted {armed} and stopped {stopped} times: {verdicts:?}"
    );
    for (v, min) in [
        ("Complete", 200),
        ("Ack", 100),
        ("ImpliedNak", 10),
        ("NakSeq", 5),
        ("Stale", 5),
        ("ReadData", 50),
        ("ReadGap", 2),
        ("AtomicData", 20),
    ] {
        let n = verdicts.get(v).copied().unwrap_or(0);
        assert!(n >= min, "{v}: {n} steps (at least {min} expected)");
    }
    assert!(
        rewinds >= 5 && armed >= 50 && stopped >= 5,
        "{rewinds} rewinds, {armed} restarts, {stopped} stops"
    );
}
