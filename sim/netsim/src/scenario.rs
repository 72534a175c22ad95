//! The experiments of dcqcn.md on a star network: N senders and one receiver on one switch,
//! all links alike, the bottleneck being the switch port towards the receiver. Each scenario
//! writes a CSV and an SVG plot into its output folder and prints a summary.
//!
//! Figures of merit:
//! - throughput: wire bytes delivered per flow (frame + FCS + preamble + gap), so that the
//!   flows of a saturated bottleneck add up to its line rate;
//! - Jain's index: over each flow's mean throughput in the second half of the time after the
//!   last flow started;
//! - convergence: from the last flow's start, bins of `conv_bin_us`; the flows have
//!   converged at the start of the first of `conv_hold` consecutive bins in which every
//!   flow's throughput is within `conv_tol` of the fair share (the mean of the flows' steady throughputs, so the share of
//!   the link that DCQCN actually fills); `converge_us` counts from the last flow's start (-1
//!   when no bin qualifies).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::dcqcn::np::NotificationPoint;
use crate::dcqcn::rp_fixed::RpFixed;
use crate::dcqcn::rp_float::RpFloat;
use crate::dcqcn::{Profile, RateControl};
use crate::event::NodeId;
use crate::link::LinkConfig;
use crate::network::{Counters, Network};
use crate::packet::HostAddr;
use crate::params::Config;
use crate::plot::{self, Panel, Series};
use crate::stats::{first_fair_bin, jain, summarize};
use crate::switch::{MarkAt, PortStats, Red, SwitchConfig};
use crate::traffic::{FlowSpec, QpPeer, Receiver, RecvStats, Sender, SenderStats};

/// The scenarios, with a line each.
pub const SCENARIOS: &[(&str, &str)] = &[
    (
        "two-flow",
        "two flows, one bottleneck, started together and staggered",
    ),
    ("incast", "N:1 incast for N = 2, 4, 8, 16 (or --param n=N)"),
    (
        "red-vs-cutoff",
        "queue length under RED marking and under cut-off marking (Kmin = Kmax)",
    ),
    (
        "slow-vs-fast",
        "convergence with T = 1.5 ms, B = 150 KB against T = 55 us, B = 10 MB",
    ),
];

/// Names of the scenarios, for error messages.
pub fn scenario_names() -> String {
    SCENARIOS
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Progress on stderr, only when stderr is a terminal, at most five times a second.
pub struct Progress {
    enabled: bool,
    label: String,
    total_ns: u64,
    done_ns: u64,
    last: Instant,
    shown: bool,
}

impl Progress {
    /// A progress line for `total_ns` of simulated time.
    pub fn new(label: &str, total_ns: u64) -> Self {
        Progress {
            enabled: std::io::stderr().is_terminal(),
            label: label.into(),
            total_ns: total_ns.max(1),
            done_ns: 0,
            last: Instant::now(),
            shown: false,
        }
    }

    /// No output at all.
    pub fn quiet() -> Self {
        let mut p = Progress::new("", 1);
        p.enabled = false;
        p
    }

    fn update(&mut self, run_done_ns: u64) {
        if !self.enabled || self.last.elapsed().as_millis() < 200 {
            return;
        }
        self.last = Instant::now();
        let done = self.done_ns + run_done_ns;
        let pct = (done as f64 / self.total_ns as f64 * 100.0).min(100.0);
        let filled = (pct / 5.0) as usize;
        eprint!(
            "\r{} [{}{}] {pct:5.1}% {:.1}/{:.1} ms simulated",
            self.label,
            "#".repeat(filled),
            " ".repeat(20 - filled.min(20)),
            done as f64 / 1e6,
            self.total_ns as f64 / 1e6
        );
        self.shown = true;
    }

    fn run_finished(&mut self, run_ns: u64) {
        self.done_ns += run_ns;
    }

    fn finish(&mut self) {
        if self.shown {
            eprintln!();
            self.shown = false;
        }
    }
}

/// The recorded time series and counters of one run.
pub struct Run {
    pub label: String,
    /// Start time of each flow, ns.
    pub starts_ns: Vec<u64>,
    pub duration_ns: u64,
    pub sample_ns: u64,
    /// Sample times, microseconds (the end of each sampling period).
    pub t_us: Vec<f64>,
    /// Sending rate RC per flow per sample, Gb/s.
    pub rc_gbps: Vec<Vec<f64>>,
    /// Cumulative wire bytes delivered per flow at each sample.
    pub cum_bytes: Vec<Vec<u64>>,
    /// Bottleneck queue at each sample and its peak during the period, KB.
    pub queue_kb: Vec<f64>,
    pub queue_peak_kb: Vec<f64>,
    pub counters: Counters,
    /// The bottleneck port's counters.
    pub bottleneck: PortStats,
    pub senders: Vec<SenderStats>,
    pub receivers: Vec<RecvStats>,
    /// Frames in flight at the end.
    pub in_flight: u64,
    /// The conservation check's verdict.
    pub conservation: Result<(), String>,
    /// Pcap files written.
    pub taps: Vec<PathBuf>,
}

/// Sender QPN of flow `i`.
pub fn sender_qpn(i: usize) -> u32 {
    0x100 + i as u32
}

/// Receiver QPN of flow `i`.
pub fn receiver_qpn(i: usize) -> u32 {
    0x200 + i as u32
}

/// The star network of `cfg` with one flow per entry of `starts_ns`, not yet run. Returns the
/// network, the sender nodes, the receiver node, the switch node and the bottleneck port.
pub fn build_star(
    cfg: &Config,
    starts_ns: &[u64],
) -> anyhow::Result<(Network, Vec<NodeId>, NodeId, NodeId, usize)> {
    let n = &cfg.net;
    let mut net = Network::new(cfg.seed);
    let red = Red {
        kmin_bytes: (n.kmin_kb * 1000.0) as u64,
        kmax_bytes: (n.kmax_kb * 1000.0) as u64,
        pmax: n.pmax,
    };
    let sw = net.add_switch(SwitchConfig {
        buffer_bytes: (n.buffer_kb * 1000.0) as u64,
        port_limit_bytes: (n.port_buffer_kb * 1000.0) as u64,
        red: Some(red),
        mark_at: if n.mark_dequeue {
            MarkAt::Dequeue
        } else {
            MarkAt::Enqueue
        },
    });
    let link = LinkConfig {
        bandwidth_bps: (n.link_gbps * 1e9).round() as u64,
        delay_ns: n.delay_ns,
        loss: n.loss,
        reorder: n.reorder,
        reorder_delay_ns: n.reorder_delay_ns,
        duplicate: n.duplicate,
        corrupt: 0.0,
    };
    let rx_addr = HostAddr::host(starts_ns.len() as u32);
    let mut receiver = Receiver::new(rx_addr, NotificationPoint::new(&cfg.dcqcn));
    receiver.verify = n.verify;
    let mut senders = Vec::new();
    for (i, &start) in starts_ns.iter().enumerate() {
        let addr = HostAddr::host(i as u32);
        let spec = FlowSpec {
            qpn: sender_qpn(i),
            remote_qpn: receiver_qpn(i),
            src: addr,
            dst: rx_addr,
            mtu: n.mtu,
            message_bytes: (n.message_kb * 1000.0).round().max(1.0) as u64,
            messages: 0,
            start_ns: start,
            stop_ns: None,
        };
        receiver.add_qp(
            receiver_qpn(i),
            QpPeer {
                remote_qpn: sender_qpn(i),
                remote: addr,
            },
        );
        let rp: Box<dyn RateControl> = if n.rp_float {
            Box::new(RpFloat::new(&cfg.dcqcn))
        } else {
            Box::new(RpFixed::new(&cfg.dcqcn))
        };
        let node = net.add_host(addr, Box::new(Sender::new(spec, rp, n.dcqcn)));
        net.connect(node, sw, link)?;
        senders.push(node);
    }
    let rx = net.add_host(rx_addr, Box::new(receiver));
    let (_, bottleneck) = net.connect(rx, sw, link)?;
    Ok((net, senders, rx, sw, bottleneck))
}

/// Runs the star network for `duration_ns`, sampling every `sample_us`. With `tap_prefix`,
/// the bottleneck link and the receiver's link (its CNPs) are captured to
/// `<prefix>-bottleneck.pcap` and `<prefix>-cnp.pcap`.
pub fn run_star(
    cfg: &Config,
    label: &str,
    starts_ns: &[u64],
    duration_ns: u64,
    tap_prefix: Option<&Path>,
    progress: &mut Progress,
) -> anyhow::Result<Run> {
    let (mut net, senders, rx, sw, bottleneck) = build_star(cfg, starts_ns)?;
    let mut taps = Vec::new();
    if let (Some(prefix), true) = (tap_prefix, cfg.net.tap_limit > 0) {
        let b = PathBuf::from(format!("{}-bottleneck.pcap", prefix.display()));
        let c = PathBuf::from(format!("{}-cnp.pcap", prefix.display()));
        net.tap(sw, bottleneck, &b, cfg.net.tap_limit)?;
        net.tap(rx, 0, &c, cfg.net.tap_limit)?;
        taps.extend([b, c]);
    }
    let sample_ns = ((cfg.net.sample_us * 1000.0).round() as u64).max(1);
    let flows = starts_ns.len();
    let mut run = Run {
        label: label.into(),
        starts_ns: starts_ns.to_vec(),
        duration_ns,
        sample_ns,
        t_us: Vec::new(),
        rc_gbps: vec![Vec::new(); flows],
        cum_bytes: vec![Vec::new(); flows],
        queue_kb: Vec::new(),
        queue_peak_kb: Vec::new(),
        counters: Counters::default(),
        bottleneck: PortStats::default(),
        senders: Vec::new(),
        receivers: Vec::new(),
        in_flight: 0,
        conservation: Ok(()),
        taps,
    };
    let mut t = 0;
    while t < duration_ns {
        t = (t + sample_ns).min(duration_ns);
        net.run_until(t);
        run.t_us.push(t as f64 / 1000.0);
        let r = net.endpoint::<Receiver>(rx).expect("the receiver node");
        for (i, &s) in senders.iter().enumerate() {
            let snd = net.endpoint::<Sender>(s).expect("a sender node");
            let rate = if t >= starts_ns[i] {
                snd.rate_bps() / 1e9
            } else {
                0.0
            };
            run.rc_gbps[i].push(rate);
            run.cum_bytes[i].push(r.qp_stats(receiver_qpn(i)).wire_bytes);
        }
        let q = net.port(sw, bottleneck).map_or(0, |p| p.queue_bytes);
        run.queue_kb.push(q as f64 / 1000.0);
        run.queue_peak_kb
            .push(net.take_peak(sw, bottleneck) as f64 / 1000.0);
        progress.update(t);
    }
    progress.run_finished(duration_ns);
    net.finish()?;
    run.counters = net.counters;
    run.bottleneck = net
        .port(sw, bottleneck)
        .map(|p| p.stats)
        .unwrap_or_default();
    for &s in &senders {
        run.senders.push(
            net.endpoint::<Sender>(s)
                .map(|x| x.stats)
                .unwrap_or_default(),
        );
    }
    let r = net.endpoint::<Receiver>(rx).expect("the receiver node");
    run.receivers = (0..flows).map(|i| r.qp_stats(receiver_qpn(i))).collect();
    run.in_flight = net.in_flight();
    run.conservation = net.conservation();
    Ok(run)
}

impl Run {
    /// Number of flows.
    pub fn flows(&self) -> usize {
        self.starts_ns.len()
    }

    /// Start of the last flow, ns.
    pub fn last_start(&self) -> u64 {
        self.starts_ns.iter().copied().max().unwrap_or(0)
    }

    fn cum_at(&self, flow: usize, t_ns: u64) -> u64 {
        // Samples are at (k + 1) * sample_ns (the last one possibly shorter).
        let k = (t_ns / self.sample_ns) as usize;
        if k == 0 {
            0
        } else {
            self.cum_bytes[flow][(k - 1).min(self.cum_bytes[flow].len() - 1)]
        }
    }

    /// Mean throughput of each flow between two times, Gb/s.
    pub fn mean_gbps(&self, from_ns: u64, to_ns: u64) -> Vec<f64> {
        let dt = to_ns.saturating_sub(from_ns).max(1) as f64;
        (0..self.flows())
            .map(|f| (self.cum_at(f, to_ns) - self.cum_at(f, from_ns)) as f64 * 8.0 / dt)
            .collect()
    }

    /// Throughput per flow in bins of `bin_ns` starting at `from_ns`: (bin end in us, Gb/s).
    pub fn bins(&self, from_ns: u64, bin_ns: u64) -> Vec<(f64, Vec<f64>)> {
        let bin_ns = bin_ns.max(self.sample_ns) / self.sample_ns * self.sample_ns;
        let from_ns = from_ns / self.sample_ns * self.sample_ns;
        let mut out = Vec::new();
        let mut t = from_ns;
        while t + bin_ns <= self.duration_ns {
            out.push(((t + bin_ns) as f64 / 1000.0, self.mean_gbps(t, t + bin_ns)));
            t += bin_ns;
        }
        out
    }

    /// Each flow's mean throughput over the second half of the time after the last start.
    pub fn steady_gbps(&self) -> Vec<f64> {
        let ls = self.last_start().min(self.duration_ns);
        self.mean_gbps(ls + (self.duration_ns - ls) / 2, self.duration_ns)
    }

    /// Jain's index over the second half of the time after the last start.
    pub fn jain(&self) -> f64 {
        jain(&self.steady_gbps())
    }

    /// Convergence time after the last start, microseconds (`None`: not converged).
    pub fn converge_us(&self, bin_us: f64, tol: f64, hold: u32) -> Option<f64> {
        let steady = self.steady_gbps();
        let fair = steady.iter().sum::<f64>() / steady.len().max(1) as f64;
        let bin_ns = (bin_us * 1000.0) as u64;
        let bins: Vec<Vec<f64>> = self
            .bins(self.last_start(), bin_ns)
            .into_iter()
            .map(|(_, b)| b)
            .collect();
        let real_bin = bin_ns.max(self.sample_ns) / self.sample_ns * self.sample_ns;
        first_fair_bin(&bins, fair, tol, hold as usize)
            .map(|i| (i as u64 * real_bin) as f64 / 1000.0)
    }

    /// Queue samples (KB) at or after `from_ns`.
    pub fn queue_after(&self, from_ns: u64) -> Vec<f64> {
        self.t_us
            .iter()
            .zip(&self.queue_kb)
            .filter(|(t, _)| **t * 1000.0 >= from_ns as f64)
            .map(|(_, q)| *q)
            .collect()
    }

    /// CNPs sent by the receiver.
    pub fn cnps(&self) -> u64 {
        self.receivers.iter().map(|r| r.cnps_sent).sum()
    }

    /// Frames received with a bad ICRC or checksum.
    pub fn bad_frames(&self) -> u64 {
        self.receivers.iter().map(|r| r.bad).sum()
    }

    fn rc_series(&self, prefix: &str) -> Vec<Series> {
        (0..self.flows())
            .map(|f| Series {
                name: format!("{prefix}flow {}", f + 1),
                points: self
                    .t_us
                    .iter()
                    .copied()
                    .zip(self.rc_gbps[f].iter().copied())
                    .collect(),
            })
            .collect()
    }

    fn thr_series(&self, bin_ns: u64, prefix: &str) -> Vec<Series> {
        let bins = self.bins(0, bin_ns);
        (0..self.flows())
            .map(|f| Series {
                name: format!("{prefix}flow {}", f + 1),
                points: bins.iter().map(|(t, b)| (*t, b[f])).collect(),
            })
            .collect()
    }

    fn queue_series(&self, name: &str) -> Series {
        Series {
            name: name.into(),
            points: self
                .t_us
                .iter()
                .copied()
                .zip(self.queue_peak_kb.iter().copied())
                .collect(),
        }
    }

    /// CSV rows: t_us, rc per flow, delivered throughput per flow over the sampling period,
    /// queue at the sample and peak queue in the period.
    pub fn csv(&self, with_label: bool) -> String {
        let mut s = String::new();
        if with_label {
            s.push_str("run,");
        }
        s.push_str("t_us");
        for f in 1..=self.flows() {
            s.push_str(&format!(",rc_gbps_{f}"));
        }
        for f in 1..=self.flows() {
            s.push_str(&format!(",thr_gbps_{f}"));
        }
        s.push_str(",queue_kb,queue_peak_kb\n");
        for k in 0..self.t_us.len() {
            if with_label {
                s.push_str(&self.label);
                s.push(',');
            }
            s.push_str(&format!("{:.3}", self.t_us[k]));
            for f in 0..self.flows() {
                s.push_str(&format!(",{:.4}", self.rc_gbps[f][k]));
            }
            let t_prev = if k == 0 { 0.0 } else { self.t_us[k - 1] };
            let dt_ns = ((self.t_us[k] - t_prev) * 1000.0).max(1.0);
            for f in 0..self.flows() {
                let prev = if k == 0 { 0 } else { self.cum_bytes[f][k - 1] };
                let gbps = (self.cum_bytes[f][k] - prev) as f64 * 8.0 / dt_ns;
                s.push_str(&format!(",{gbps:.4}"));
            }
            s.push_str(&format!(
                ",{:.3},{:.3}\n",
                self.queue_kb[k], self.queue_peak_kb[k]
            ));
        }
        s
    }

    /// One line of counters.
    pub fn counters_line(&self) -> String {
        let c = &self.counters;
        format!(
            "marked={} cnps={} drops={} bad_frames={} delivered={} in_flight={} conservation={}",
            self.bottleneck.marked,
            self.cnps(),
            c.dropped_overflow + c.lost + c.dropped_no_route,
            self.bad_frames(),
            c.delivered,
            self.in_flight,
            if self.conservation.is_ok() {
                "ok"
            } else {
                "FAILED"
            }
        )
    }
}

fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))
}

fn ms_to_ns(ms: f64) -> u64 {
    (ms * 1e6).round() as u64
}

fn fmt_rates(v: &[f64]) -> String {
    v.iter()
        .map(|x| format!("{x:.2}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a scenario produced.
#[derive(Debug, Default)]
pub struct Report {
    /// Files written.
    pub files: Vec<PathBuf>,
    /// Summary lines (also printed).
    pub lines: Vec<String>,
}

impl Report {
    fn say(&mut self, w: &mut dyn Write, line: String) -> anyhow::Result<()> {
        writeln!(w, "{line}")?;
        self.lines.push(line);
        Ok(())
    }
}

/// Runs scenario `name` with `cfg`, writing files into `out_dir` and the summary to `w`.
pub fn run_scenario(
    name: &str,
    cfg: &Config,
    out_dir: &Path,
    w: &mut dyn Write,
) -> anyhow::Result<Report> {
    if !SCENARIOS.iter().any(|(n, _)| *n == name) {
        anyhow::bail!(
            "unknown scenario {name:?}; known scenarios: {}",
            scenario_names()
        );
    }
    std::fs::create_dir_all(out_dir)
        .map_err(|e| anyhow::anyhow!("creating {}: {e}", out_dir.display()))?;
    let mut rep = Report::default();
    rep.say(
        w,
        format!(
            "scenario {name}: profile {} seed {} link {} Gb/s delay {} ns mtu {} RED {}/{} KB pmax {} rp {}",
            cfg.profile,
            cfg.seed,
            cfg.net.link_gbps,
            cfg.net.delay_ns,
            cfg.net.mtu,
            cfg.net.kmin_kb,
            cfg.net.kmax_kb,
            cfg.net.pmax,
            if cfg.net.rp_float { "float" } else { "fixed" }
        ),
    )?;
    match name {
        "two-flow" => two_flow(cfg, out_dir, w, &mut rep)?,
        "incast" => incast(cfg, out_dir, w, &mut rep)?,
        "red-vs-cutoff" => red_vs_cutoff(cfg, out_dir, w, &mut rep)?,
        _ => slow_vs_fast(cfg, out_dir, w, &mut rep)?,
    }
    Ok(rep)
}

fn conv_text(c: Option<f64>) -> String {
    c.map_or("-1".into(), |v| format!("{v:.0}"))
}

fn two_flow(cfg: &Config, dir: &Path, w: &mut dyn Write, rep: &mut Report) -> anyhow::Result<()> {
    let dur = ms_to_ns(cfg.net.duration_ms.unwrap_or(100.0));
    let stagger = ((cfg.net.stagger_us * 1000.0) as u64).min(dur);
    let mut progress = Progress::new("two-flow", 2 * dur);
    let mut runs = Vec::new();
    for (label, starts) in [("together", [0, 0]), ("staggered", [0, stagger])] {
        let prefix = dir.join(format!("two-flow-{label}"));
        runs.push(run_star(
            cfg,
            label,
            &starts,
            dur,
            Some(&prefix),
            &mut progress,
        )?);
    }
    progress.finish();
    let bin_ns = (cfg.net.conv_bin_us * 1000.0) as u64;
    let mut csv = String::new();
    let mut panels = Vec::new();
    let mut last = String::new();
    for r in &runs {
        let ls = r.last_start();
        let mean = r.steady_gbps();
        let j = r.jain();
        let conv = r.converge_us(cfg.net.conv_bin_us, cfg.net.conv_tol, cfg.net.conv_hold);
        let q = summarize(&r.queue_after(ls + (dur - ls) / 2));
        rep.say(
            w,
            format!(
                "two-flow/{}: starts {} us; steady Gb/s [{}] jain={j:.4} converge_us={} ({} bins of {} us within {} of fair); queue mean {:.1} KB max {:.1} KB; {}",
                r.label,
                r.starts_ns.iter().map(|s| format!("{}", s / 1000)).collect::<Vec<_>>().join(","),
                fmt_rates(&mean),
                conv_text(conv),
                cfg.net.conv_hold,
                cfg.net.conv_bin_us,
                cfg.net.conv_tol,
                q.mean,
                q.max,
                r.counters_line()
            ),
        )?;
        csv.push_str(&r.csv(true));
        panels.push(Panel {
            title: format!("{}: sending rate RC", r.label),
            x_label: "time (us)".into(),
            y_label: "Gb/s".into(),
            series: r.rc_series(""),
        });
        panels.push(Panel {
            title: format!(
                "{}: delivered throughput ({} us bins)",
                r.label,
                bin_ns / 1000
            ),
            x_label: "time (us)".into(),
            y_label: "Gb/s".into(),
            series: r.thr_series(bin_ns, ""),
        });
        last = format!("jain={j:.4} converge_us={}", conv_text(conv));
        rep.files.extend(r.taps.iter().cloned());
    }
    panels.push(Panel {
        title: "bottleneck queue (peak per sample)".into(),
        x_label: "time (us)".into(),
        y_label: "KB".into(),
        series: runs.iter().map(|r| r.queue_series(&r.label)).collect(),
    });
    // A CSV with one header per run would be awkward: the runs have the same columns, so the
    // second header is dropped.
    let mut lines = csv.lines();
    let header = lines.next().unwrap_or_default().to_string();
    let body: Vec<&str> = lines.filter(|l| *l != header).collect();
    let csv_path = dir.join("two-flow.csv");
    write_file(&csv_path, &format!("{header}\n{}\n", body.join("\n")))?;
    let svg = dir.join("two-flow.svg");
    plot::write(
        &svg,
        &format!("DCQCN two flows ({} profile)", cfg.profile),
        &panels,
    )?;
    rep.files.extend([csv_path, svg]);
    rep.say(w, format!("wrote {}", file_list(&rep.files)))?;
    // The required last line: the staggered run (convergence from an unfair start).
    rep.say(w, last)?;
    Ok(())
}

fn file_list(files: &[PathBuf]) -> String {
    files
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

fn incast(cfg: &Config, dir: &Path, w: &mut dyn Write, rep: &mut Report) -> anyhow::Result<()> {
    let dur = ms_to_ns(cfg.net.duration_ms.unwrap_or(50.0));
    let ns: Vec<u32> = cfg.net.n.map_or(vec![2, 4, 8, 16], |n| vec![n]);
    let mut progress = Progress::new("incast", dur * ns.len() as u64);
    let mut panels = Vec::new();
    let mut queues = Vec::new();
    for &n in &ns {
        let starts = vec![0; n as usize];
        let label = format!("n{n}");
        let prefix = dir.join(format!("incast-{label}"));
        let r = run_star(cfg, &label, &starts, dur, Some(&prefix), &mut progress)?;
        let mean = r.mean_gbps(dur / 2, dur);
        let q = summarize(&r.queue_after(dur / 2));
        let qmax = r.queue_peak_kb.iter().copied().fold(0.0, f64::max);
        let total: f64 = mean.iter().sum();
        progress.finish();
        rep.say(
            w,
            format!(
                "incast n={n}: per-flow Gb/s (second half) [{}] sum {total:.2} fair {:.2} jain={:.4}; queue mean {:.1} KB std {:.1} KB max {qmax:.1} KB (second half max {:.1}); drops={} {}",
                fmt_rates(&mean),
                cfg.net.link_gbps / f64::from(n),
                r.jain(),
                q.mean,
                q.std,
                q.max,
                r.bottleneck.dropped_overflow,
                r.counters_line()
            ),
        )?;
        let csv_path = dir.join(format!("incast-{label}.csv"));
        write_file(&csv_path, &r.csv(false))?;
        rep.files.push(csv_path);
        rep.files.extend(r.taps.iter().cloned());
        panels.push(Panel {
            title: format!("{n}:1 incast: sending rate RC per flow"),
            x_label: "time (us)".into(),
            y_label: "Gb/s".into(),
            series: r.rc_series(""),
        });
        queues.push(r.queue_series(&format!("{n}:1")));
    }
    panels.push(Panel {
        title: "bottleneck queue (peak per sample)".into(),
        x_label: "time (us)".into(),
        y_label: "KB".into(),
        series: queues,
    });
    let svg = dir.join("incast.svg");
    plot::write(
        &svg,
        &format!("DCQCN N:1 incast ({} profile)", cfg.profile),
        &panels,
    )?;
    rep.files.push(svg);
    rep.say(w, format!("wrote {}", file_list(&rep.files)))?;
    Ok(())
}

fn red_vs_cutoff(
    cfg: &Config,
    dir: &Path,
    w: &mut dyn Write,
    rep: &mut Report,
) -> anyhow::Result<()> {
    let dur = ms_to_ns(cfg.net.duration_ms.unwrap_or(50.0));
    let n = cfg.net.n.unwrap_or(8) as usize;
    let mut progress = Progress::new("red-vs-cutoff", 2 * dur);
    let mut cut = cfg.clone();
    cut.net.kmin_kb = cfg.net.kcut_kb;
    cut.net.kmax_kb = cfg.net.kcut_kb;
    cut.net.pmax = 1.0;
    let red_label = format!(
        "RED {}/{} KB {}",
        cfg.net.kmin_kb, cfg.net.kmax_kb, cfg.net.pmax
    );
    let cut_label = format!("cut-off {} KB", cfg.net.kcut_kb);
    let mut runs = Vec::new();
    for (c, label, file) in [(cfg, &red_label, "red"), (&cut, &cut_label, "cutoff")] {
        let prefix = dir.join(format!("red-vs-cutoff-{file}"));
        runs.push(run_star(
            c,
            label,
            &vec![0; n],
            dur,
            Some(&prefix),
            &mut progress,
        )?);
    }
    progress.finish();
    let from = dur / 5;
    for r in &runs {
        let q = summarize(&r.queue_after(from));
        rep.say(
            w,
            format!(
                "red-vs-cutoff {n}:1 {}: queue after {} us: mean {:.1} KB std {:.1} KB min {:.1} KB max {:.1} KB; jain={:.4} sum {:.2} Gb/s; {}",
                r.label,
                from / 1000,
                q.mean,
                q.std,
                q.min,
                q.max,
                r.jain(),
                r.mean_gbps(from, dur).iter().sum::<f64>(),
                r.counters_line()
            ),
        )?;
        rep.files.extend(r.taps.iter().cloned());
    }
    let mut csv =
        String::from("t_us,queue_red_kb,queue_cutoff_kb,queue_peak_red_kb,queue_peak_cutoff_kb\n");
    for k in 0..runs[0].t_us.len() {
        csv.push_str(&format!(
            "{:.3},{:.3},{:.3},{:.3},{:.3}\n",
            runs[0].t_us[k],
            runs[0].queue_kb[k],
            runs[1].queue_kb[k],
            runs[0].queue_peak_kb[k],
            runs[1].queue_peak_kb[k]
        ));
    }
    let csv_path = dir.join("red-vs-cutoff.csv");
    write_file(&csv_path, &csv)?;
    let svg = dir.join("red-vs-cutoff.svg");
    plot::write(
        &svg,
        &format!(
            "{n}:1, RED against cut-off marking ({} profile)",
            cfg.profile
        ),
        &[Panel {
            title: "bottleneck queue (peak per sample)".into(),
            x_label: "time (us)".into(),
            y_label: "KB".into(),
            series: runs.iter().map(|r| r.queue_series(&r.label)).collect(),
        }],
    )?;
    rep.files.extend([csv_path, svg]);
    rep.say(w, format!("wrote {}", file_list(&rep.files)))?;
    Ok(())
}

fn slow_vs_fast(
    cfg: &Config,
    dir: &Path,
    w: &mut dyn Write,
    rep: &mut Report,
) -> anyhow::Result<()> {
    let dur = ms_to_ns(cfg.net.duration_ms.unwrap_or(100.0));
    let stagger = ((cfg.net.stagger_us * 1000.0) as u64).min(dur);
    let mut progress = Progress::new("slow-vs-fast", 2 * dur);
    let mut slow = cfg.clone();
    slow.dcqcn.inc_timer_us = 1500.0;
    slow.dcqcn.byte_reset = 150_000;
    let mut fast = cfg.clone();
    fast.dcqcn.inc_timer_us = 55.0;
    fast.dcqcn.byte_reset = 10_000_000;
    let mut runs = Vec::new();
    for (c, label, file) in [
        (&slow, "slow T=1.5ms B=150KB", "slow"),
        (&fast, "fast T=55us B=10MB", "fast"),
    ] {
        let prefix = dir.join(format!("slow-vs-fast-{file}"));
        runs.push(run_star(
            c,
            label,
            &[0, stagger],
            dur,
            Some(&prefix),
            &mut progress,
        )?);
    }
    progress.finish();
    let bin_ns = (cfg.net.conv_bin_us * 1000.0) as u64;
    let mut series = Vec::new();
    let mut tput = Vec::new();
    for r in &runs {
        let conv = r.converge_us(cfg.net.conv_bin_us, cfg.net.conv_tol, cfg.net.conv_hold);
        rep.say(
            w,
            format!(
                "slow-vs-fast {}: steady Gb/s [{}] jain={:.4} converge_us={}; {}",
                r.label,
                fmt_rates(&r.steady_gbps()),
                r.jain(),
                conv_text(conv),
                r.counters_line()
            ),
        )?;
        let short = r.label.split(' ').next().unwrap_or("").to_string();
        series.extend(r.rc_series(&format!("{short} ")));
        tput.extend(r.thr_series(bin_ns, &format!("{short} ")));
        rep.files.extend(r.taps.iter().cloned());
    }
    let mut csv = String::from(
        "t_us,slow_rc_gbps_1,slow_rc_gbps_2,fast_rc_gbps_1,fast_rc_gbps_2,slow_queue_kb,fast_queue_kb\n",
    );
    for k in 0..runs[0].t_us.len() {
        csv.push_str(&format!(
            "{:.3},{:.4},{:.4},{:.4},{:.4},{:.3},{:.3}\n",
            runs[0].t_us[k],
            runs[0].rc_gbps[0][k],
            runs[0].rc_gbps[1][k],
            runs[1].rc_gbps[0][k],
            runs[1].rc_gbps[1][k],
            runs[0].queue_kb[k],
            runs[1].queue_kb[k]
        ));
    }
    let csv_path = dir.join("slow-vs-fast.csv");
    write_file(&csv_path, &csv)?;
    let svg = dir.join("slow-vs-fast.svg");
    plot::write(
        &svg,
        &format!(
            "Slow (T=1.5 ms, B=150 KB) against fast (T=55 us, B=10 MB), {} profile",
            cfg.profile
        ),
        &[
            Panel {
                title: "sending rate RC".into(),
                x_label: "time (us)".into(),
                y_label: "Gb/s".into(),
                series,
            },
            Panel {
                title: format!("delivered throughput ({} us bins)", bin_ns / 1000),
                x_label: "time (us)".into(),
                y_label: "Gb/s".into(),
                series: tput,
            },
        ],
    )?;
    rep.files.extend([csv_path, svg]);
    rep.say(w, format!("wrote {}", file_list(&rep.files)))?;
    Ok(())
}

/// Figures of the benchmark run.
#[derive(Clone, Copy, Debug)]
pub struct BenchResult {
    pub sim_ns: u64,
    pub wall_s: f64,
    pub counters: Counters,
}

/// The benchmark: 16:1 incast at 100 Gb/s for 10 ms of simulated time, paper profile, no
/// taps, no per-frame verification.
pub fn bench(duration_ms: f64) -> anyhow::Result<BenchResult> {
    let cfg = Config::build(
        Profile::Paper,
        1,
        &[
            "link_gbps=100".into(),
            "verify=0".into(),
            "tap_limit=0".into(),
            "sample_us=100".into(),
        ],
    )
    .map_err(anyhow::Error::msg)?;
    let dur = ms_to_ns(duration_ms);
    let t0 = Instant::now();
    let r = run_star(&cfg, "bench", &[0; 16], dur, None, &mut Progress::quiet())?;
    Ok(BenchResult {
        sim_ns: dur,
        wall_s: t0.elapsed().as_secs_f64(),
        counters: r.counters,
    })
}
