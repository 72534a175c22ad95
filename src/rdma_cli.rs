//! `rnic sim rdma`: two hardware NICs under Verilator (the `rc_nic` top: receive path,
//! responder, requester, completer, timers, transmit path) running RDMA WRITE, READ and SEND
//! to each other through a lossy cable ([`rnic_driver::rc_pair`]). Prints goodput in bytes per
//! clock, latency in clocks and retransmissions; writes the cable's frames to a pcap and
//! goodput and retransmissions over time to an SVG; ends with
//! `messages=N delivered=N intact=N goodput_bpc=X` (exit 0 when every message was delivered
//! intact, 1 when one was not, 2 on bad input or a simulation error).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use rnic_driver::rc_nic_sim::RcNicSim;
use rnic_driver::rc_pair::{PairConfig, PairReport, run_pair};
use rnic_netsim::plot::{self, Panel, Series};
use rnic_transport::verbs::{Mtu, WrOpcode};
use rnic_wire::pcap::{LINKTYPE_ETHERNET, PcapWriter};

/// Nanoseconds per clock in the pcap's timestamps (125 MHz: 8 bytes per clock is 1 Gb/s x 8).
const NS_PER_CLOCK: u64 = 8;

/// `rnic sim rdma`.
#[derive(clap::Args, Debug)]
pub struct SimRdmaArgs {
    /// Chance that the cable loses a frame (0..=0.5).
    #[arg(long, default_value_t = 0.01)]
    pub loss: f64,
    /// Seed of the workload and the cable's faults.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where to write `rdma.pcap` (every frame on the cable, as sent) and `rdma.svg`.
    #[arg(long, default_value = "rdma-out")]
    pub out: PathBuf,
    /// Messages each NIC sends (WRITE, READ and SEND drawn at random).
    #[arg(long, default_value_t = 48)]
    pub messages: usize,
    /// Largest message in bytes (1..=65536).
    #[arg(long, default_value_t = 8192)]
    pub max_len: u32,
    /// Path MTU: 256, 512, 1024, 2048 or 4096.
    #[arg(long, default_value_t = 1024)]
    pub mtu: u32,
    /// Chance that the cable duplicates, delays (reorders) or corrupts a frame.
    #[arg(long, default_value_t = 0.0)]
    pub dup: f64,
    #[arg(long, default_value_t = 0.0)]
    pub reorder: f64,
    #[arg(long, default_value_t = 0.0)]
    pub corrupt: f64,
    /// One-way latency of the cable in clocks.
    #[arg(long, default_value_t = 200)]
    pub latency: u64,
    /// Work requests each NIC keeps outstanding.
    #[arg(long, default_value_t = 8)]
    pub outstanding: usize,
}

fn mtu_of(bytes: u32) -> Result<Mtu> {
    Ok(match bytes {
        256 => Mtu::M256,
        512 => Mtu::M512,
        1024 => Mtu::M1024,
        2048 => Mtu::M2048,
        4096 => Mtu::M4096,
        _ => bail!("--mtu {bytes}: the path MTU is 256, 512, 1024, 2048 or 4096"),
    })
}

fn config(a: &SimRdmaArgs) -> Result<PairConfig> {
    for (name, p) in [
        ("--loss", a.loss),
        ("--dup", a.dup),
        ("--reorder", a.reorder),
        ("--corrupt", a.corrupt),
    ] {
        if !(0.0..=0.5).contains(&p) {
            bail!("{name} {p}: a chance per frame, 0 to 0.5");
        }
    }
    if a.messages == 0 || a.messages > 200 {
        bail!("--messages {}: 1 to 200 per NIC", a.messages);
    }
    if a.max_len == 0 || a.max_len > 65536 {
        bail!("--max-len {}: 1 to 65536 bytes", a.max_len);
    }
    if a.outstanding == 0 || a.outstanding > 64 {
        bail!("--outstanding {}: 1 to 64", a.outstanding);
    }
    Ok(PairConfig {
        seed: a.seed,
        messages: a.messages,
        max_len: a.max_len,
        mtu: mtu_of(a.mtu)?,
        outstanding: a.outstanding,
        loss: a.loss,
        dup: a.dup,
        reorder: a.reorder,
        corrupt: a.corrupt,
        latency: a.latency,
        ..Default::default()
    })
}

/// Median and maximum of `v` (sorted here).
fn median_max(mut v: Vec<u64>) -> Option<(u64, u64)> {
    v.sort_unstable();
    Some((*v.get(v.len() / 2)?, *v.last()?))
}

fn write_outputs(a: &SimRdmaArgs, r: &PairReport) -> Result<(PathBuf, PathBuf)> {
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let pcap = a.out.join("rdma.pcap");
    let f = std::fs::File::create(&pcap).with_context(|| format!("creating {}", pcap.display()))?;
    let mut w = PcapWriter::new(std::io::BufWriter::new(f), LINKTYPE_ETHERNET, true)?;
    let mut wire: Vec<&(u64, usize, Vec<u8>)> = r.wire.iter().collect();
    wire.sort_by_key(|x| x.0);
    for (at, _, bytes) in wire {
        w.write(at * NS_PER_CLOCK, bytes)?;
    }
    drop(w);
    // Goodput and retransmissions per interval between samples.
    let mut goodput = Vec::new();
    let mut resent = Vec::new();
    for pair in r.samples.windows(2) {
        let (s0, s1) = (pair[0], pair[1]);
        let dt = (s1.cycle - s0.cycle).max(1) as f64;
        let x = s1.cycle as f64 / 1000.0;
        goodput.push((x, (s1.bytes - s0.bytes) as f64 / dt));
        resent.push((x, (s1.retransmitted - s0.retransmitted) as f64));
    }
    let svg = a.out.join("rdma.svg");
    plot::write(
        &svg,
        &format!(
            "rnic sim rdma: two Verilator NICs, loss {}, seed {}",
            a.loss, a.seed
        ),
        &[
            Panel {
                title: "goodput (message bytes completed per clock)".into(),
                x_label: "kiloclocks".into(),
                y_label: "bytes / clock".into(),
                series: vec![Series {
                    name: "both NICs".into(),
                    points: goodput,
                }],
            },
            Panel {
                title: "packets sent again".into(),
                x_label: "kiloclocks".into(),
                y_label: "packets per interval".into(),
                series: vec![Series {
                    name: "both NICs".into(),
                    points: resent,
                }],
            },
        ],
    )?;
    Ok((pcap, svg))
}

/// Exit 0 when every message was delivered intact, 1 when one was not; an error (bad input,
/// a simulation that failed) is the caller's to report (exit 2).
pub fn run(a: &SimRdmaArgs) -> Result<ExitCode> {
    Ok(if run_inner(a)? {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn run_inner(a: &SimRdmaArgs) -> Result<bool> {
    let cfg = config(a)?;
    let t0 = Instant::now();
    let nics = [
        RcNicSim::verilated(cfg.seed, 0.0).map_err(anyhow::Error::msg)?,
        RcNicSim::verilated(cfg.seed + 1, 0.0).map_err(anyhow::Error::msg)?,
    ];
    println!(
        "two rc_nic tops under Verilator, {} messages each (WRITE, READ, SEND up to {} bytes), \
         MTU {}, cable: latency {} clocks, loss {}, dup {}, reorder {}, corrupt {}",
        cfg.messages,
        cfg.max_len,
        cfg.mtu.bytes(),
        cfg.latency,
        cfg.loss,
        cfg.dup,
        cfg.reorder,
        cfg.corrupt
    );
    let mut last = Instant::now();
    let r = run_pair(nics, &cfg, |s| {
        if last.elapsed().as_secs() >= 5 {
            last = Instant::now();
            eprintln!(
                "  clock {}: {} bytes completed, {} packets sent again",
                s.cycle, s.bytes, s.retransmitted
            );
        }
    })
    .map_err(anyhow::Error::msg)?;
    let secs = t0.elapsed().as_secs_f64();
    let (pcap, svg) = write_outputs(a, &r)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "clocks={} simulated in {secs:.1} s ({:.0} clocks/s per NIC pair)",
        r.cycles,
        r.cycles as f64 / secs.max(1e-9)
    )?;
    for (name, op) in [
        ("write", WrOpcode::RdmaWrite),
        ("read", WrOpcode::RdmaRead),
        ("send", WrOpcode::Send),
    ] {
        let n = r.work.iter().flatten().filter(|m| m.opcode == op).count();
        let bytes: u64 = r
            .work
            .iter()
            .flatten()
            .filter(|m| m.opcode == op)
            .map(|m| u64::from(m.len))
            .sum();
        match median_max(r.latencies(Some(op))) {
            Some((med, max)) => writeln!(
                out,
                "{name}: {n} messages, {bytes} bytes, latency median {med} clocks, max {max}"
            )?,
            None => writeln!(out, "{name}: {n} messages, {bytes} bytes")?,
        }
    }
    writeln!(
        out,
        "cable: {} + {} frames sent, {} lost, {} duplicated, {} reordered, {} corrupted",
        r.frames[0], r.frames[1], r.lost, r.duplicated, r.reordered, r.corrupted
    )?;
    for (h, c) in r.counters.iter().enumerate() {
        writeln!(
            out,
            "nic {h}: packets={} retransmitted={} ack_timeouts={} requests_executed={} \
             responses={} rx_frames={} rx_drop_icrc={} tx_frames={}",
            c.packets,
            c.retransmitted,
            c.expiries,
            c.executed,
            c.responses,
            c.rx_frames,
            c.rx_drop_icrc,
            c.tx_frames
        )?;
    }
    writeln!(
        out,
        "retransmissions={} pcap={} plot={}",
        r.retransmitted(),
        pcap.display(),
        svg.display()
    )?;
    for e in r.errors.iter().take(10) {
        writeln!(out, "error: {e}")?;
    }
    writeln!(
        out,
        "messages={} delivered={} intact={} goodput_bpc={:.3}",
        r.messages,
        r.delivered,
        r.intact,
        r.goodput_bpc()
    )?;
    Ok(r.errors.is_empty() && r.delivered == r.messages && r.intact == r.messages)
}
