//! The completer's step in hardware (`rnic_hw::comp_check`, rust-hdl and Verilator in
//! lock-step) against the transport model's (`rnic_transport::comp_check::step`) on random
//! steps aimed at every boundary the decision has: ACKs, every syndrome class and NAK code,
//! READ responses of every opcode before, at, inside and past the oldest request, atomic
//! ACKs at and beside their PSN; the oldest unacknowledged PSN before, at and past the
//! oldest request's first PSN; the requester's send point around both; retry counters at 0,
//! 7 and between, a retry under way or not; PSNs around 2^24; lengths around the MTU's
//! multiples. Every decision equals the model's (the verdict, the completer state row after
//! the step, completion, failure and its status, rewind, suppression, RNR wait, the ACK
//! timer, and the READ data's offset), and the handshake holds: a step is taken only while
//! idle, its decision comes out `LATENCY` clocks later and stays until taken.

use std::collections::HashMap;

use rnic_cosim::axis::Rng;
use rnic_cosim::comp_step::{read_step, set_step};
use rnic_cosim::ports::{FixedLatency, PortDut, PortLockStep};
use rnic_hw::comp_check::{CompCheck, LATENCY};
use rnic_transport::comp_check::{CompRow, Front, Kind, StepInput, Timer, Verdict, step};
use rnic_transport::ops;
use rnic_transport::psn;
use rnic_transport::verbs::WcStatus;

fn pick<T: Copy>(rng: &mut Rng, xs: &[T]) -> T {
    xs[rng.below(xs.len() as u64) as usize]
}

/// A PSN near `base`: at it, a few before or after, or anywhere.
fn near(rng: &mut Rng, base: u32) -> u32 {
    match rng.below(6) {
        0 => base,
        1 => psn::add(base, 1 + rng.below(3) as u32),
        2 => psn::sub(base, 1 + rng.below(3) as u32),
        3 => psn::add(base, rng.below(40) as u32),
        4 => psn::sub(base, rng.below(40) as u32),
        _ => rng.below(1 << 24) as u32,
    }
}

fn counter(rng: &mut Rng) -> u8 {
    let any = rng.below(8) as u8;
    pick(rng, &[0, 0, 1, 2, 6, 7, 7, any])
}

/// A random step input aimed at the decision's boundaries.
fn random_input(rng: &mut Rng) -> StepInput {
    let mut i = any_input(rng);
    if rng.chance(0.25) {
        in_sequence_read_response(rng, &mut i);
    }
    i
}

/// Turns `i` into a READ response at the oldest unacknowledged PSN, inside the READ, with the
/// opcode and length of its place (mostly): the steps that place data.
fn in_sequence_read_response(rng: &mut Rng, i: &mut StepInput) {
    let len = rng.below(u64::from(5 * i.mtu)) as u32;
    let npkts = len.div_ceil(i.mtu).max(1);
    let first = rng.below(1 << 24) as u32;
    let k = rng.below(u64::from(npkts)) as u32;
    let last = k + 1 == npkts;
    i.front = Some(Front {
        kind: Kind::Read,
        first_psn: first,
        npkts,
        len,
    });
    i.psn = psn::add(first, k);
    i.row.psn = if rng.chance(0.8) { i.psn } else { first };
    i.opcode = match (npkts == 1, k == 0, last) {
        (true, ..) => ops::RC_READ_RESPONSE_ONLY,
        (false, true, _) => ops::RC_READ_RESPONSE_FIRST,
        (false, false, true) => ops::RC_READ_RESPONSE_LAST,
        _ => ops::RC_READ_RESPONSE_MIDDLE,
    };
    if rng.chance(0.1) {
        i.opcode = pick(rng, &[13, 14, 15, 16]);
    }
    i.payload_len = if last { len - k * i.mtu } else { i.mtu };
    if rng.chance(0.1) {
        i.payload_len ^= 1 << rng.below(5);
    }
    i.sent_upto = psn::add(first, npkts - 1 + rng.below(3) as u32);
}

/// A step anywhere near the decision's boundaries.
fn any_input(rng: &mut Rng) -> StepInput {
    let code = 1 + rng.below(5) as u32;
    let mtu = 128u32 << code;
    let base = if rng.chance(0.2) {
        psn::sub(0, rng.below(20) as u32)
    } else {
        rng.below(1 << 24) as u32
    };
    let kind = pick(rng, &[Kind::SendWrite, Kind::Read, Kind::Atomic]);
    let (len, npkts) = match kind {
        Kind::Atomic => (8, 1),
        Kind::Read => {
            let len = match rng.below(4) {
                0 => rng.below(1 << 31) as u32,
                1 => mtu * rng.below(6) as u32,
                2 => (mtu * rng.below(6) as u32).saturating_sub(1) + rng.below(3) as u32,
                _ => rng.below(u64::from(4 * mtu)) as u32,
            };
            (len, len.div_ceil(mtu).max(1))
        }
        Kind::SendWrite => {
            let len = rng.below(u64::from(6 * mtu)) as u32;
            (len, len.div_ceil(mtu).max(1))
        }
    };
    let npkts = if rng.chance(0.05) {
        rng.below(1 << 24) as u32
    } else {
        npkts
    };
    let front = rng.chance(0.85).then_some(Front {
        kind,
        first_psn: base,
        npkts,
        len,
    });
    let last = psn::add(base, npkts.saturating_sub(1));
    let from = if rng.chance(0.5) { base } else { last };
    let cpsn = near(rng, from);
    let anchor = pick(rng, &[base, last, cpsn, psn::add(last, 1)]);
    let p = near(rng, anchor);
    let from = pick(rng, &[psn::add(last, 1), p, cpsn, base]);
    let sent_upto = near(rng, from);
    let opcode = if rng.chance(0.95) {
        pick(
            rng,
            &[
                ops::RC_ACKNOWLEDGE,
                ops::RC_ACKNOWLEDGE,
                ops::RC_ACKNOWLEDGE,
                ops::RC_READ_RESPONSE_FIRST,
                ops::RC_READ_RESPONSE_MIDDLE,
                ops::RC_READ_RESPONSE_LAST,
                ops::RC_READ_RESPONSE_ONLY,
                ops::RC_ATOMIC_ACKNOWLEDGE,
            ],
        )
    } else {
        rng.below(256) as u8
    };
    let class = rng.below(4) as u8;
    let low = if class == 3 {
        let any = rng.below(32) as u8;
        pick(rng, &[0, 0, 1, 2, 3, 4, any])
    } else {
        rng.below(32) as u8
    };
    let syndrome = (rng.below(2) as u8) << 7 | class << 5 | low;
    // READ payloads: the MTU, the rest of the READ at its packet, or near them.
    let k = psn::diff(p, base).max(0) as u32;
    let rest = len.wrapping_sub(k.wrapping_mul(mtu));
    let payload_len = match rng.below(4) {
        0 => mtu,
        1 if rest < 1 << 16 => rest,
        2 => (mtu + rng.below(3) as u32).saturating_sub(1),
        _ => rng.below(1 << 16) as u32,
    };
    StepInput {
        opcode,
        psn: p,
        syndrome,
        payload_len,
        mtu,
        attr_retry_cnt: counter(rng),
        attr_rnr_retry: counter(rng),
        row: CompRow {
            psn: cpsn,
            retry_cnt: counter(rng),
            rnr_retry: counter(rng),
            started_retry: rng.chance(0.3),
        },
        sent_upto,
        front,
        completed: rng.chance(0.3),
    }
}

#[test]
fn random_steps_equal_the_model_in_lock_step() {
    let mut seen: HashMap<(Verdict, Option<WcStatus>, bool, bool, Timer), usize> = HashMap::new();
    let mut steps = 0;
    for seed in 1..=3u64 {
        let mut d = PortLockStep::new(CompCheck::default(), "comp_check", seed).unwrap();
        let mut rng = Rng::new(seed);
        let [reset, s_valid, m_ready] = ["reset", "s_valid", "m_ready"].map(|n| d.input(n));
        let [s_ready, m_valid] = ["s_ready", "m_valid"].map(|n| d.output(n));
        // Every decision output: held unchanged until taken.
        let outs = [
            "m_verdict",
            "m_state",
            "m_complete",
            "m_fail",
            "m_status",
            "m_rewind",
            "m_suppressed",
            "m_rnr_wait",
            "m_timer",
            "m_offset",
        ]
        .map(|n| d.output(n));
        let mut hs = FixedLatency::new(LATENCY);
        let mut pending: Option<StepInput> = None;
        let mut input = random_input(&mut rng);
        for cycle in 0..30_000u64 {
            let rst = cycle < 2;
            d.set(reset, u64::from(rst));
            let valid = !rst && rng.chance(0.7);
            d.set(s_valid, u64::from(valid));
            set_step(&mut d, &input, &mut rng);
            let ready = rng.chance(0.6);
            d.set(m_ready, u64::from(ready));
            d.settle().unwrap_or_else(|m| panic!("{m}"));
            if rst {
                hs.reset();
                d.tick();
                continue;
            }
            let (took, answer) = hs.cycle(
                cycle,
                (valid, d.get(s_ready) == 1),
                (d.get(m_valid) == 1, ready),
                || outs.iter().map(|&o| d.get_words(o)).collect(),
            );
            if answer.is_some() {
                let i = pending.take().expect("an answer to a step taken");
                let s = step(&i);
                let hw = read_step(&d).unwrap_or_else(|e| panic!("{e}\n{i:?}"));
                assert_eq!(hw, s, "hardware, then the model\n{i:?}");
                *seen
                    .entry((s.verdict, s.fail, s.rewind, s.suppressed, s.timer))
                    .or_default() += 1;
                steps += 1;
            }
            if took {
                pending = Some(input);
                input = random_input(&mut rng);
            }
            d.tick();
            hs.tick();
        }
    }
    let mut lines: Vec<String> = seen.iter().map(|(k, n)| format!("{k:?}: {n}")).collect();
    lines.sort();
    println!("{steps} steps\n{}", lines.join("\n"));
    assert!(steps > 9_000, "{steps} steps decided");
    for v in Verdict::ALL {
        let n: usize = seen.iter().filter(|(k, _)| k.0 == v).map(|(_, n)| n).sum();
        assert!(n >= 20, "verdict {v:?} decided {n} times");
    }
    for st in [
        WcStatus::RemInvReqErr,
        WcStatus::RemAccessErr,
        WcStatus::RemOpErr,
        WcStatus::BadRespErr,
        WcStatus::RetryExcErr,
        WcStatus::RnrRetryExcErr,
    ] {
        assert!(
            seen.keys().any(|k| k.1 == Some(st)),
            "no step failed with {st:?}"
        );
    }
    for t in [Timer::Keep, Timer::Arm, Timer::Stop] {
        assert!(seen.keys().any(|k| k.4 == t), "the timer never {t:?}");
    }
    assert!(seen.keys().any(|k| k.2), "no step rewound");
    assert!(seen.keys().any(|k| k.3), "no retry suppressed");
}
