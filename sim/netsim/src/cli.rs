//! The `rnic sim net`, `rnic sim dcqcn` and `rnic bench` surface of the simulator, as clap
//! argument structs and run functions that the `rnic` binary wires in.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, anyhow};

use crate::dcqcn::Profile;
use crate::dcqcn::events::{parse_events, run_events};
use crate::params::{Config, key_help};
use crate::scenario::{self, SCENARIOS};

fn parse_profile(s: &str) -> Result<Profile, String> {
    Profile::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Profile::ALL.iter().map(|(_, n)| *n).collect();
        format!(
            "unknown profile {s:?}; known profiles: {}",
            names.join(", ")
        )
    })
}

/// `rnic sim net`: run a network scenario.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = scenario_help())]
pub struct NetArgs {
    /// Scenario: two-flow (the default), incast, red-vs-cutoff or slow-vs-fast.
    #[arg(long, default_value = "two-flow")]
    pub scenario: String,
    /// DCQCN parameter profile: paper (default) or nvidia.
    #[arg(long, default_value = "paper", value_parser = parse_profile)]
    pub profile: Profile,
    /// Override a parameter, KEY=VALUE (repeatable; listed below).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// Seed of every random choice (same seed, same result).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output folder (default target/netsim/SCENARIO-PROFILE).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

fn scenario_help() -> String {
    let mut s = String::from("Scenarios:\n");
    for (n, d) in SCENARIOS {
        s.push_str(&format!("  {n:<14} {d}\n"));
    }
    s.push_str("\nParameters (--param KEY=VALUE):\n");
    s.push_str(&key_help());
    s
}

/// Runs `rnic sim net`: prints the summary on stdout (progress, if any, on stderr).
pub fn run_net(args: &NetArgs) -> anyhow::Result<()> {
    if !SCENARIOS.iter().any(|(n, _)| *n == args.scenario) {
        return Err(anyhow!(
            "unknown scenario {:?}; known scenarios: {}",
            args.scenario,
            scenario::scenario_names()
        ));
    }
    let cfg = Config::build(args.profile, args.seed, &args.params).map_err(|e| anyhow!(e))?;
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from("target/netsim").join(format!("{}-{}", args.scenario, args.profile))
    });
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    scenario::run_scenario(&args.scenario, &cfg, &out, &mut lock)?;
    lock.flush()?;
    Ok(())
}

/// `rnic sim dcqcn`: drive one reaction point with a timed event list.
#[derive(clap::Args, Debug, Clone)]
pub struct DcqcnArgs {
    /// Events file: lines of `TIME EVENT [VALUE]` (cnp, sent BYTES, tick, inc, byte, decay);
    /// TIME in ns or with a unit (us, ms, s).
    #[arg(long)]
    pub events: PathBuf,
    /// Parameter profile: paper (default) or nvidia.
    #[arg(long, default_value = "paper", value_parser = parse_profile)]
    pub profile: Profile,
    /// Override a parameter, KEY=VALUE (as for `sim net`; link_gbps sets the line rate).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// Use the floating-point model instead of the fixed-point one.
    #[arg(long)]
    pub float: bool,
}

/// Runs `rnic sim dcqcn`: prints the state after each event as CSV on stdout.
pub fn run_dcqcn(args: &DcqcnArgs) -> anyhow::Result<()> {
    let cfg = Config::build(args.profile, 1, &args.params).map_err(|e| anyhow!(e))?;
    let text = std::fs::read_to_string(&args.events)
        .with_context(|| format!("reading {}", args.events.display()))?;
    let events = parse_events(&text).map_err(|e| anyhow!("{}: {e}", args.events.display()))?;
    let csv = run_events(&cfg.dcqcn, args.float, &events);
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    lock.write_all(csv.as_bytes())?;
    lock.flush()?;
    Ok(())
}

/// The network benchmark of `rnic bench`: 16:1 incast at 100 Gb/s, 10 ms simulated.
pub fn bench_net() -> anyhow::Result<()> {
    let r = scenario::bench(10.0)?;
    let c = r.counters;
    println!(
        "netsim incast 16:1 100 Gb/s, {:.1} ms simulated: {:.3} s wall, {} frames delivered, {} link transmissions, {} events",
        r.sim_ns as f64 / 1e6,
        r.wall_s,
        c.delivered,
        c.hops,
        c.events
    );
    println!(
        "netsim packets/s (delivered frames per wall second): {:.0}",
        c.delivered as f64 / r.wall_s
    );
    println!(
        "netsim link transmissions/s: {:.0}; events/s: {:.0}",
        c.hops as f64 / r.wall_s,
        c.events as f64 / r.wall_s
    );
    println!(
        "netsim simulated/wall time: {:.5} ({:.1} x slower than real time)",
        r.sim_ns as f64 / 1e9 / r.wall_s,
        r.wall_s / (r.sim_ns as f64 / 1e9)
    );
    Ok(())
}
