//! The transport's timers (`rnic_hw::qp_timers`, 1024 QPs):
//! - in lock-step (rust-hdl and Verilator) under random arm and stop commands and a slow
//!   completer, checked against the timers' contract from outside: every expiry belongs to an
//!   arm whose time had passed while it was the QP's latest (never early, never after a stop
//!   or a re-arm took its place), each arm fires at most once and in order, and an arm left in
//!   place fires within one tick and one sweep of its time;
//! - on purpose at the race the stale-read rule settles: due rows re-armed on each clock around
//!   the scanner's read of them keep their new arm;
//! - against the transport model's times: at 125 MHz (512 clocks a tick) every ACK timeout
//!   (`4.096 us x 2^timeout`) and RNR NAK timer code (IBTA table 45, `RNR_TIMER_NS`) fires no
//!   earlier than the model's deadline and at most one tick and one sweep after it.

use std::collections::VecDeque;

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{PortDut, PortLockStep, VerilatedPorts};
use rnic_hw::qp_timers::{QpTimers, RNR_TICKS, SCAN_LATENCY};
use rnic_transport::RNR_TIMER_NS;

const QPS: u64 = 1024;
/// Clocks from a row's read to its expiry queued, and through the queue's registers.
const PIPE: u64 = SCAN_LATENCY as u64 + 3;

/// The timers' ports, by index.
struct Io {
    reset: usize,
    tick_cycles: usize,
    valid: usize,
    qpn: usize,
    arm: usize,
    rnr: usize,
    code: usize,
    exp_ready: usize,
    cmd_ready: usize,
    exp_valid: usize,
    exp_qpn: usize,
    exp_rnr: usize,
    now: usize,
    busy: usize,
}

impl Io {
    fn of(d: &impl PortDut) -> Self {
        Io {
            reset: d.input("reset"),
            tick_cycles: d.input("tick_cycles"),
            valid: d.input("s_cmd_valid"),
            qpn: d.input("s_cmd_qpn"),
            arm: d.input("s_cmd_arm"),
            rnr: d.input("s_cmd_rnr"),
            code: d.input("s_cmd_code"),
            exp_ready: d.input("m_exp_ready"),
            cmd_ready: d.output("s_cmd_ready"),
            exp_valid: d.output("m_exp_valid"),
            exp_qpn: d.output("m_exp_qpn"),
            exp_rnr: d.output("m_exp_rnr"),
            now: d.output("now"),
            busy: d.output("busy"),
        }
    }
}

/// One arm of one QP, as the checker saw it.
#[derive(Clone, Debug)]
struct Arm {
    rnr: bool,
    /// The tick count on the clock the command was taken.
    start: u64,
    limit: u64,
    taken_at: u64,
    /// The clock a later command (arm or stop) took its place; `None` while it is the latest.
    ended_at: Option<u64>,
}

/// The timers' contract, checked from the ports. An expiry is pushed while its arm is the
/// QP's latest and due, and the expiry queue keeps order, so a QP's expiries match its arms in
/// order, each arm at most once: an expiry taken at clock `c` may stand for an arm due at or
/// before `c` and before its replacement. Arms replaced in flight may go unreported (the
/// completer re-checks anyway); the QP's last arm must be reported.
struct Checker {
    arms: Vec<Vec<Arm>>,
    /// Per QP, every expiry taken: (clock, rnr).
    exps: Vec<Vec<(u64, bool)>>,
    /// The tick count at each clock.
    ticks: Vec<u64>,
}

impl Checker {
    fn new() -> Self {
        Checker {
            arms: vec![Vec::new(); QPS as usize],
            exps: vec![Vec::new(); QPS as usize],
            ticks: Vec::new(),
        }
    }

    /// The first clock whose tick count is past `a`'s limit.
    fn due(&self, a: &Arm) -> Option<u64> {
        let from = a.taken_at as usize;
        self.ticks[from..]
            .iter()
            .position(|&t| t > a.start + a.limit)
            .map(|k| (from + k) as u64)
    }

    fn command(&mut self, cycle: u64, qpn: usize, arm: Option<(bool, u8)>) {
        if let Some(last) = self.arms[qpn].last_mut()
            && last.ended_at.is_none()
        {
            last.ended_at = Some(cycle);
        }
        if let Some((rnr, code)) = arm {
            let limit = if rnr {
                u64::from(RNR_TICKS[usize::from(code)])
            } else {
                1 << code
            };
            let start = self.ticks[cycle as usize];
            self.arms[qpn].push(Arm {
                rnr,
                start,
                limit,
                taken_at: cycle,
                ended_at: None,
            });
        }
    }

    fn fits(&self, a: &Arm, (take, rnr): (u64, bool)) -> bool {
        a.rnr == rnr
            && self
                .due(a)
                .is_some_and(|d| d <= take && a.ended_at.is_none_or(|e| d < e))
    }

    /// The QP's last arm when it is still in place (not stopped or replaced).
    fn standing(&self, qpn: usize) -> Option<&Arm> {
        self.arms[qpn].last().filter(|a| a.ended_at.is_none())
    }

    /// Whether the QP's standing arm (if any) has been reported.
    fn settled(&self, qpn: usize) -> bool {
        match self.standing(qpn) {
            None => true,
            Some(a) => self.exps[qpn]
                .last()
                .is_some_and(|&(t, _)| t >= a.taken_at && self.due(a).is_some_and(|d| t >= d)),
        }
    }

    /// Matches every QP's expiries to its arms; returns the expiries checked and the latest
    /// any standing arm was reported after it was due.
    fn check(&self, seed: u64) -> (usize, u64) {
        let (mut n, mut late) = (0, 0);
        for q in 0..QPS as usize {
            let (arms, exps) = (&self.arms[q], &self.exps[q]);
            let mut next = 0;
            let mut matched = Vec::new();
            for &x in exps {
                let k = (next..arms.len())
                    .find(|&k| self.fits(&arms[k], x))
                    .unwrap_or_else(|| {
                        panic!(
                            "seed {seed}: QP {q} expired at clock {} (rnr {}) with no arm due \
                             in place: arms {:?}, expiries {:?}",
                            x.0, x.1, arms, exps
                        )
                    });
                matched.push(k);
                next = k + 1;
            }
            n += exps.len();
            if let Some(a) = self.standing(q) {
                let last = arms.len() - 1;
                let x = *exps
                    .last()
                    .unwrap_or_else(|| panic!("seed {seed}: QP {q} never fired"));
                assert!(
                    matched.last() == Some(&last) || self.fits(a, x),
                    "seed {seed}: QP {q}'s last arm was not reported: arms {arms:?}, expiries {exps:?}"
                );
                late = late.max(x.0 - self.due(a).unwrap());
            }
        }
        (n, late)
    }
}

#[test]
fn random_commands_keep_the_contract_in_lock_step() {
    let mut total = 0;
    let mut worst = 0;
    for seed in 1..=3u64 {
        let mut d = PortLockStep::new(QpTimers::<10>::default(), "qp_timers", seed).unwrap();
        let mut rng = Rng::new(seed);
        let Io {
            reset,
            tick_cycles,
            valid,
            qpn,
            arm,
            rnr,
            code,
            exp_ready,
            cmd_ready,
            exp_valid,
            exp_qpn,
            exp_rnr,
            now,
            busy,
        } = Io::of(&d);
        let t = 1 + seed % 3;
        d.set(tick_cycles, t);
        // A few QPs at the table's ends and anywhere, so rows are hit often.
        let mut qps = vec![0u64, 1, 2, 511, 512, QPS - 1];
        qps.extend((0..26).map(|_| rng.below(QPS)));
        let mut c = Checker::new();
        let mut busy_seen = false;
        let drain_from = 60_000u64;
        let mut cycle = 0u64;
        loop {
            let rst = cycle < 2;
            d.set(reset, u64::from(rst));
            let drain = cycle >= drain_from;
            let q = qps[rng.below(qps.len() as u64) as usize];
            let is_arm = rng.chance(0.8);
            let is_rnr = rng.chance(0.25);
            let k = if is_rnr {
                1 + rng.below(4)
            } else {
                rng.below(6)
            };
            // Bursts of commands (rows re-armed and stopped while the scanner holds them),
            // then quiet, so arms stand long enough for the sweep to reach them.
            let rate = if cycle % 4096 < 512 { 0.3 } else { 0.004 };
            let v = !rst && !drain && rng.chance(rate);
            d.set(valid, u64::from(v));
            d.set(qpn, q);
            d.set(arm, u64::from(is_arm));
            d.set(rnr, u64::from(is_rnr));
            d.set(code, k);
            let ready = drain || rng.chance(0.6);
            d.set(exp_ready, u64::from(ready));
            d.settle().unwrap_or_else(|m| panic!("{m}"));
            c.ticks.push(d.get(now));
            if !rst {
                busy_seen |= d.get(busy) == 1;
                if d.get(busy) == 1 {
                    assert_eq!(
                        d.get(cmd_ready),
                        0,
                        "seed {seed}: a command taken while busy"
                    );
                    assert_eq!(d.get(exp_valid), 0, "seed {seed}: an expiry while busy");
                }
                if v && d.get(cmd_ready) == 1 {
                    c.command(cycle, q as usize, is_arm.then_some((is_rnr, k as u8)));
                }
                if ready && d.get(exp_valid) == 1 {
                    c.exps[d.get(exp_qpn) as usize].push((cycle, d.get(exp_rnr) == 1));
                }
            }
            d.tick();
            cycle += 1;
            // Every arm left in place is due within its limit and reported within a sweep;
            // then a sweep more, for any second report.
            let longest = u64::from(RNR_TICKS[4]).max(1 << 5);
            let end = drain_from + (longest + 2) * t + 2 * QPS + PIPE + 64;
            if cycle == end {
                break;
            }
        }
        let stuck: Vec<usize> = (0..QPS as usize).filter(|&q| !c.settled(q)).collect();
        assert!(stuck.is_empty(), "seed {seed}: QPs {stuck:?} never fired");
        assert!(busy_seen, "seed {seed}: no clearing after reset");
        let (n, late) = c.check(seed);
        assert!(n > 200, "seed {seed}: only {n} expiries");
        // Late by at most a sweep, the pipeline and the queue ahead of it.
        assert!(
            late <= QPS + PIPE + 16,
            "seed {seed}: an expiry {late} clocks after it was due"
        );
        total += n;
        worst = worst.max(late);
    }
    println!("{total} expiries over 3 seeds, at most {worst} clocks after due (sweep {QPS})");
}

#[test]
fn the_rom_rounds_the_models_rnr_times_up_to_ticks() {
    for (code, (&t, &ns)) in RNR_TICKS.iter().zip(RNR_TIMER_NS.iter()).enumerate() {
        assert_eq!(u64::from(t), ns.div_ceil(4096), "RNR timer code {code}");
    }
}

#[test]
fn timers_fire_after_the_models_deadlines_at_125_mhz() {
    const NS_PER_CLOCK: u64 = 8;
    const TICK: u64 = 512;
    let mut d = VerilatedPorts::of::<QpTimers<10>>("qp_timers").unwrap();
    let mut rng = Rng::new(7);
    let Io {
        reset,
        tick_cycles,
        valid,
        qpn,
        arm,
        rnr,
        code,
        exp_ready,
        cmd_ready,
        exp_valid,
        exp_qpn,
        exp_rnr,
        ..
    } = Io::of(&d);
    d.set(tick_cycles, TICK);
    d.set(exp_ready, 1);
    // Every ACK timeout up to 2^8 ticks and every RNR code up to 15 (1.92 ms), each on its own
    // QP, armed at scattered clocks.
    let mut todo: Vec<(u64, bool, u64, u64)> = Vec::new(); // (qpn, rnr, code, deadline ns)
    for k in 0..=8u64 {
        todo.push((k * 37 % QPS, false, k, 4096 << k));
    }
    for k in 1..=15u64 {
        todo.push((500 + k * 29, true, k, RNR_TIMER_NS[k as usize]));
    }
    let mut armed: Vec<Option<(u64, bool, u64)>> = vec![None; QPS as usize]; // (clock, rnr, ns)
    let mut late_ns = Vec::new();
    let mut cycle = 0u64;
    let mut next = 0;
    let mut at = 1500u64;
    while next < todo.len() || armed.iter().any(Option::is_some) {
        d.set(reset, u64::from(cycle < 2));
        let v = next < todo.len() && cycle >= at;
        if v {
            let (q, r, k, _) = todo[next];
            d.set(qpn, q);
            d.set(rnr, u64::from(r));
            d.set(code, k);
            d.set(arm, 1);
        }
        d.set(valid, u64::from(v));
        d.settle().unwrap();
        if v && d.get(cmd_ready) == 1 {
            let (q, r, _, ns) = todo[next];
            armed[q as usize] = Some((cycle, r, ns));
            next += 1;
            at = cycle + 1 + rng.below(700);
        }
        if d.get(exp_valid) == 1 {
            let q = d.get(exp_qpn) as usize;
            let (t0, r, ns) = armed[q]
                .take()
                .unwrap_or_else(|| panic!("QP {q} not armed"));
            assert_eq!(d.get(exp_rnr) == 1, r, "QP {q}: kind");
            let elapsed = (cycle - t0) * NS_PER_CLOCK;
            assert!(
                elapsed >= ns,
                "QP {q}: fired after {elapsed} ns, deadline {ns} ns"
            );
            late_ns.push((elapsed - ns, ns));
        }
        d.tick();
        cycle += 1;
        assert!(cycle < 2_000_000, "timers still armed at clock {cycle}");
    }
    let worst = late_ns.iter().map(|l| l.0).max().unwrap();
    // One tick of start rounding, the RNR codes' rounding up to a tick, one sweep, the pipe.
    let bound = 2 * TICK * NS_PER_CLOCK + (QPS + PIPE) * NS_PER_CLOCK;
    assert!(worst <= bound, "fired {worst} ns late (bound {bound} ns)");
    println!(
        "{} timers at 125 MHz: none early, at most {worst} ns late (tick 4096 ns, sweep {} ns)",
        late_ns.len(),
        QPS * NS_PER_CLOCK
    );
}

/// The race the stale-read rule settles, hit on purpose: rows that are due are re-armed with a
/// long timer on each clock around the scanner's read of them. Past the last of a run of
/// firing rows the scan advances one row per clock (expiries taken at once), so the first
/// sweep's last expiry tells when the next sweep reads each row. Whatever the old arm did, the
/// new arm must stand and fire at its own time: a fire from the stale read would clear the row
/// and lose it.
#[test]
fn a_row_re_armed_as_the_scanner_reads_it_keeps_its_new_arm() {
    let mut d = PortLockStep::new(QpTimers::<10>::default(), "qp_timers", 9).unwrap();
    let Io {
        reset,
        tick_cycles,
        valid,
        qpn,
        arm,
        rnr,
        code,
        exp_ready,
        cmd_ready,
        exp_valid,
        exp_qpn,
        exp_rnr,
        now,
        ..
    } = Io::of(&d);
    d.set(tick_cycles, 1);
    d.set(exp_ready, 1);
    d.set(rnr, 0);
    d.set(arm, 1);
    const FIRST: u64 = 600;
    const N: u64 = 32;
    // Commands: (QP, ACK code, not before clock).
    let mut cmds: VecDeque<(u64, u64, u64)> = (0..N).map(|j| (FIRST + j, 0, 0)).collect();
    let mut c = Checker::new();
    let mut last_take: Option<u64> = None;
    let mut planned = false;
    for cycle in 0..12_000u64 {
        d.set(reset, u64::from(cycle < 2));
        let cmd = cmds
            .front()
            .copied()
            .filter(|&(_, _, at)| cycle >= at && cycle >= 2);
        d.set(valid, u64::from(cmd.is_some()));
        if let Some((q, k, _)) = cmd {
            d.set(qpn, q);
            d.set(code, k);
        }
        d.settle().unwrap_or_else(|m| panic!("{m}"));
        c.ticks.push(d.get(now));
        if let Some((q, k, _)) = cmd
            && d.get(cmd_ready) == 1
        {
            c.command(cycle, q as usize, Some((false, k as u8)));
            cmds.pop_front();
        }
        if d.get(exp_valid) == 1 {
            let q = d.get(exp_qpn);
            c.exps[q as usize].push((cycle, d.get(exp_rnr) == 1));
            if q == FIRST + N - 1 && last_take.is_none() {
                last_take = Some(cycle);
            }
        }
        if let Some(x) = last_take
            && !planned
            && cmds.is_empty()
        {
            // Every row is due again (armed with 1 tick) long before the next sweep reads row
            // j about `x + 1024 - (N - 1 - j)` (less the clocks from a read to its expiry
            // taken); re-arm row j at `x + 1024 - (N - 1) - 16 + 2j`, so the command lands at
            // offsets from about -10 to +20 clocks from the read as j goes.
            for j in 0..N {
                cmds.push_back((FIRST + j, 0, cycle + 1));
            }
            for j in 0..N {
                cmds.push_back((FIRST + j, 10, x + 1024 - (N - 1) - 16 + 2 * j));
            }
            planned = true;
        }
        d.tick();
    }
    assert!(planned && cmds.is_empty(), "the re-arms were not all taken");
    c.check(9);
    let stuck: Vec<u64> = (FIRST..FIRST + N)
        .filter(|&q| !c.settled(q as usize))
        .collect();
    assert!(stuck.is_empty(), "QPs {stuck:?} lost their new arm");
}
