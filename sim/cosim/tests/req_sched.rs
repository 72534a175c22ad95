//! The requester's scheduler (`rnic_hw::req_sched`, 1024 QPs) in lock-step (rust-hdl and
//! Verilator) under random doorbells (bursts of distinct QPs on back-to-back clocks, repeated
//! rings, rings during a QP's own turn and as it ends) and a requester that takes turns late
//! and ends them late, checked from outside against what a round-robin scheduler owes:
//! - no doorbell is lost: every work request posted gets its turn, and when the doorbells stop
//!   every QP's work drains;
//! - no turn is offered to a QP without work (so a QP is never scheduled twice);
//! - round robin: while a QP that still has work waits for its next turn, no other QP gets
//!   two turns.

use std::collections::HashSet;

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{PortDut, PortLockStep};
use rnic_hw::req_sched::ReqSched;

const QPS: u64 = 1024;

#[test]
fn random_doorbells_get_fair_turns_in_lock_step() {
    let mut turns_total = 0u64;
    for seed in 1..=3u64 {
        let mut d = PortLockStep::new(ReqSched::<10>::default(), "req_sched", seed).unwrap();
        let mut rng = Rng::new(seed);
        let [reset, db_valid, db_queue, m_ready, done_valid, done_more] = [
            "reset",
            "db_valid",
            "db_queue",
            "m_ready",
            "s_done_valid",
            "s_done_more",
        ]
        .map(|n| d.input(n));
        let [m_valid, m_qpn, done_ready, serving, busy] =
            ["m_valid", "m_qpn", "s_done_ready", "serving", "busy"].map(|n| d.output(n));
        let mut qps = vec![0u64, 1, 2, 511, QPS - 1];
        qps.extend((0..25).map(|_| rng.below(QPS)));
        qps.sort();
        qps.dedup();
        // Work requests posted and not yet given a turn, per QP.
        let mut work = vec![0u64; QPS as usize];
        // The turn under way: QP, whether the requester saw more work, the clock it ends.
        let mut turn: Option<(usize, bool, u64)> = None;
        // A QP that still had work when its turn ended waits for the next; the QPs granted
        // since.
        let mut waiting = vec![false; QPS as usize];
        let mut seen: Vec<HashSet<usize>> = vec![HashSet::new(); QPS as usize];
        let mut burst = 0u64;
        let mut burst_q = 0u64;
        let (mut turns, mut rings, mut rang_in_turn) = (0u64, 0u64, 0u64);
        let drain_from = 40_000u64;
        let mut cycle = 0u64;
        loop {
            let rst = cycle < 2;
            d.set(reset, u64::from(rst));
            let drain = cycle >= drain_from;
            // Doorbells: quiet, single rings, or a burst of distinct QPs on successive clocks.
            if burst == 0 && rng.chance(0.002) {
                burst = 5 + rng.below(40);
                burst_q = rng.below(QPS);
            }
            let (ring, q) = if drain {
                (false, 0)
            } else if burst > 0 {
                burst -= 1;
                burst_q = (burst_q + 1 + rng.below(3)) % QPS;
                (true, burst_q)
            } else {
                // Often the QP whose turn it is: a ring during its turn, or as it ends.
                let q = match turn {
                    Some((p, _, _)) if rng.chance(0.3) => p as u64,
                    _ => qps[rng.below(qps.len() as u64) as usize],
                };
                (rng.chance(0.1), q)
            };
            d.set(db_valid, u64::from(ring && !rst));
            d.set(db_queue, q);
            let take = drain || rng.chance(0.6);
            d.set(m_ready, u64::from(take));
            let ending = turn.filter(|t| cycle >= t.2);
            d.set(done_valid, u64::from(ending.is_some()));
            d.set(done_more, u64::from(ending.is_some_and(|t| t.1)));
            d.settle().unwrap_or_else(|m| panic!("{m}"));
            if rst {
                d.tick();
                cycle += 1;
                continue;
            }
            let is_busy = d.get(busy) == 1;
            if is_busy {
                assert_eq!(d.get(m_valid), 0, "seed {seed}: a turn while clearing");
            } else if ring {
                work[q as usize] += 1;
                rings += 1;
                if turn.is_some_and(|t| t.0 == q as usize) {
                    rang_in_turn += 1;
                }
            }
            assert_eq!(
                d.get(serving) == 1,
                turn.is_some(),
                "seed {seed} clock {cycle}: serving"
            );
            if let Some((p, _, _)) = ending
                && d.get(done_ready) == 1
            {
                turn = None;
                if work[p] > 0 {
                    waiting[p] = true;
                    seen[p].clear();
                }
            }
            if take && d.get(m_valid) == 1 {
                let r = d.get(m_qpn) as usize;
                assert!(
                    turn.is_none(),
                    "seed {seed} clock {cycle}: two turns at once"
                );
                assert!(
                    work[r] > 0,
                    "seed {seed} clock {cycle}: a turn for QP {r}, which has no work"
                );
                for p in 0..QPS as usize {
                    if waiting[p] && p != r {
                        assert!(
                            seen[p].insert(r),
                            "seed {seed} clock {cycle}: QP {r} got a second turn while QP {p} waited"
                        );
                    }
                }
                waiting[r] = false;
                seen[r].clear();
                // The turn takes one request; the requester sees whether more are posted.
                work[r] -= 1;
                let more = work[r] > 0;
                let len = if drain { 0 } else { rng.below(6) };
                turn = Some((r, more, cycle + 1 + len));
                turns += 1;
            }
            d.tick();
            cycle += 1;
            if drain && turn.is_none() && work.iter().all(|&w| w == 0) {
                // A few hundred clocks more: no turn may be offered now.
                for _ in 0..300 {
                    d.set(db_valid, 0);
                    d.set(m_ready, 1);
                    d.set(done_valid, 0);
                    d.settle().unwrap_or_else(|m| panic!("{m}"));
                    assert_eq!(d.get(m_valid), 0, "seed {seed}: a turn with no work");
                    d.tick();
                }
                break;
            }
            assert!(
                cycle < drain_from + 40_000,
                "seed {seed}: work never drained: {:?}",
                work.iter()
                    .enumerate()
                    .filter(|w| *w.1 > 0)
                    .collect::<Vec<_>>()
            );
        }
        assert_eq!(turns, rings, "seed {seed}: one turn per request");
        assert!(
            rang_in_turn > 50,
            "seed {seed}: only {rang_in_turn} rings during a turn"
        );
        turns_total += turns;
    }
    println!("{turns_total} turns over 3 seeds, none lost, none unfair");
}
