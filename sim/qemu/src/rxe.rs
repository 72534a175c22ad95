//! Two soft-RoCE guests joined by the host link, running one of the verbs tools or perftest
//! (server on 10.0.0.1, client on 10.0.0.2), with a pcap, a fault record and a summary.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::analysis::{self, Behaviour, Summary};
use crate::image::GuestImage;
use crate::link::{FaultAction, FaultConfig, FaultEvent, HOLD_TIMEOUT, Link, LinkReport};
use crate::runner::{Guest, GuestConfig, Outcome};
use rnic_wire::pcap::{Delivery, Record};

/// The tools a scenario can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tool {
    RcPingpong,
    UdPingpong,
    SendBw,
    WriteBw,
    ReadBw,
    AtomicBw,
}

impl Tool {
    pub const ALL: [Tool; 6] = [
        Tool::RcPingpong,
        Tool::UdPingpong,
        Tool::SendBw,
        Tool::WriteBw,
        Tool::ReadBw,
        Tool::AtomicBw,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Tool::RcPingpong => "rc_pingpong",
            Tool::UdPingpong => "ud_pingpong",
            Tool::SendBw => "send_bw",
            Tool::WriteBw => "write_bw",
            Tool::ReadBw => "read_bw",
            Tool::AtomicBw => "atomic_bw",
        }
    }

    pub fn binary(self) -> &'static str {
        match self {
            Tool::RcPingpong => "ibv_rc_pingpong",
            Tool::UdPingpong => "ibv_ud_pingpong",
            Tool::SendBw => "ib_send_bw",
            Tool::WriteBw => "ib_write_bw",
            Tool::ReadBw => "ib_read_bw",
            Tool::AtomicBw => "ib_atomic_bw",
        }
    }

    /// Whether the transport recovers from loss (UD does not: a lost pingpong message stalls
    /// both sides until the timeout).
    pub fn reliable(self) -> bool {
        self != Tool::UdPingpong
    }

    /// Default iterations and message size: small, so that a run takes seconds under TCG and
    /// a capture stays small.
    pub fn defaults(self) -> (u32, u32) {
        match self {
            Tool::RcPingpong => (20, 2048),
            // A UD message is one packet: it must fit the path MTU (1024).
            Tool::UdPingpong => (20, 512),
            Tool::SendBw | Tool::WriteBw | Tool::ReadBw => (20, 8192),
            // Atomics are 8 bytes whatever -s says.
            Tool::AtomicBw => (20, 8),
        }
    }

    /// The tool's arguments (the client adds the server's address).
    pub fn args(self, iters: u32, size: u32) -> String {
        match self {
            Tool::RcPingpong | Tool::UdPingpong => {
                format!("-d rxe0 -g 1 -n {iters} -s {size}")
            }
            // -x 1: the IPv4 GID; -F: no CPU-frequency check; -u 18: a 1 s ACK timeout, so
            // that emulation's slowness does not cause spurious retransmissions.
            _ => format!("-d rxe0 -x 1 -F -u 18 -n {iters} -s {size} -m 1024"),
        }
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Tool {
    type Err = String;
    fn from_str(s: &str) -> Result<Tool, String> {
        Tool::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown scenario {s:?}; choose one of: {}",
                    Tool::ALL.map(Tool::name).join(", ")
                )
            })
    }
}

/// One scenario run's settings.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Scenario {
    pub tool: Tool,
    pub iters: u32,
    pub size: u32,
    pub faults: FaultConfig,
    /// For the whole run (boot, tool, poweroff).
    pub timeout_s: u64,
    pub memory_mb: u32,
}

impl Scenario {
    /// Checks the settings against what the tools accept; errors say which is wrong.
    pub fn validate(&self) -> Result<()> {
        self.faults.validate()?;
        if self.iters == 0 || self.size == 0 {
            bail!("iterations and message size must be at least 1");
        }
        if !matches!(self.tool, Tool::RcPingpong | Tool::UdPingpong) && self.iters < 5 {
            bail!(
                "{} needs at least 5 iterations (perftest refuses fewer)",
                self.tool.binary()
            );
        }
        if self.tool == Tool::UdPingpong && self.size > 1024 {
            bail!("ud_pingpong messages must fit in one packet of the 1024-byte path MTU");
        }
        Ok(())
    }

    pub fn new(tool: Tool) -> Scenario {
        let (iters, size) = tool.defaults();
        Scenario {
            tool,
            iters,
            size,
            faults: FaultConfig::default(),
            timeout_s: 120,
            memory_mb: 512,
        }
    }
}

/// The guest script: bring up eth0 and rxe0, wait for the port, run the tool. The client
/// retries while the server is not listening yet (it boots at the same time).
pub fn guest_script(sc: &Scenario, ip: &str, server: Option<&str>) -> String {
    let tool = sc.tool.binary();
    let args = sc.tool.args(sc.iters, sc.size);
    let run = match server {
        None => format!("{tool} {args}"),
        Some(s) => format!("{tool} {args} {s}"),
    };
    script(ip, "", &run)
}

/// The shell script around a tool: eth0 at `ip` with rxe0 on it, `setup` (more interfaces),
/// the port ACTIVE, then `run`, retried while it fails to connect; its status is the script's.
pub fn script(ip: &str, setup: &str, run: &str) -> String {
    format!(
        r#"set -u
exec 3>&1
ip link set lo up
ip link set eth0 up
ip addr add {ip}/24 dev eth0
{setup}rdma link add rxe0 type rxe netdev eth0 || exit 10
i=0
until grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null; do
  i=$((i+1)); [ $i -gt 100 ] && {{ echo "RNIC: rxe0 port never ACTIVE"; exit 11; }}
  sleep 0.1
done
echo "RNIC-PORT-ACTIVE"
n=0
while :; do
  {run} > /tmp/out 2>&1
  rc=$?
  cat /tmp/out
  if [ $rc -ne 0 ] && grep -qi "connect" /tmp/out && [ $n -lt 60 ]; then
    n=$((n+1)); sleep 0.5; continue
  fi
  break
done
echo "RNIC-TOOL-STATUS $rc"
exit $rc
"#
    )
}

/// The result of one scenario.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    pub scenario: Scenario,
    pub kernel: String,
    pub completed: bool,
    pub server_status: Option<i32>,
    pub client_status: Option<i32>,
    pub timed_out: bool,
    pub boot_s: Vec<f64>,
    pub elapsed_s: f64,
    pub summary: Summary,
    pub behaviour: Behaviour,
    pub link: LinkReport,
    pub out_dir: PathBuf,
}

/// Which frames the link delivered how often, from its fault record.
pub fn deliveries(report: &LinkReport) -> BTreeMap<usize, u8> {
    copies(&report.faults)
}

fn copies(faults: &[FaultEvent]) -> BTreeMap<usize, u8> {
    let mut m = BTreeMap::new();
    for e in faults {
        let v = match e.action {
            // A corrupted frame fails the ICRC, and so do both copies of a duplicated one.
            FaultAction::Drop | FaultAction::Corrupt { .. } => 0,
            FaultAction::Duplicate => 2,
            FaultAction::Reorder => continue,
        };
        let slot = m.entry(e.frame as usize).or_insert(v);
        *slot = (*slot).min(v);
    }
    m
}

/// The order in which the link delivered the frames of its capture, from its fault record:
/// each frame with the copies delivered and when, every frame once, a duplicated-and-held one
/// twice. The link holds at most one frame back (a frame marked for reordering while another
/// is held goes through at once; a corrupted one is held too) and releases it after the next
/// frame to the same port, here the next frame from the same side (source MAC) of the two-port
/// link, that is not itself marked (delivered at that frame's time), or when the link has been
/// quiet for [`HOLD_TIMEOUT`] (delivered that long after the last frame); of a frame both
/// duplicated and held, one copy goes at once.
pub fn delivery_schedule(records: &[Record], faults: &[FaultEvent]) -> Vec<Delivery> {
    let copies = copies(faults);
    let marked: BTreeSet<usize> = faults
        .iter()
        .filter(|e| e.action == FaultAction::Reorder)
        .map(|e| e.frame as usize)
        .collect();
    let hold = HOLD_TIMEOUT.as_nanos() as u64;
    let side = |r: &Record| r.data.get(6..12).map(<[u8]>::to_vec);
    let at = |record: usize, copies: u8, ts_ns: u64| Delivery {
        record,
        copies,
        ts_ns,
    };
    let mut out = Vec::with_capacity(records.len() + 1);
    // The held frame: its index, its side, the copies still to deliver.
    let mut held: Option<(usize, Option<Vec<u8>>, u8)> = None;
    for (i, r) in records.iter().enumerate() {
        if i > 0 && r.ts_ns.saturating_sub(records[i - 1].ts_ns) > hold {
            let quiet = records[i - 1].ts_ns + hold;
            out.extend(held.take().map(|h| at(h.0, h.2, quiet)));
        }
        let n = copies.get(&i).copied().unwrap_or(1);
        let is_marked = marked.contains(&i);
        if is_marked && held.is_none() {
            if n > 1 {
                out.push(at(i, n - 1, r.ts_ns));
            }
            held = Some((i, side(r), n.min(1)));
            continue;
        }
        out.push(at(i, n, r.ts_ns));
        if !is_marked && held.as_ref().is_some_and(|h| h.1 == side(r)) {
            out.extend(held.take().map(|h| at(h.0, h.2, r.ts_ns)));
        }
    }
    let quiet = records.last().map_or(0, |r| r.ts_ns + hold);
    out.extend(held.map(|h| at(h.0, h.2, quiet)));
    out
}

/// Decodes a capture as the link delivered it (drops, duplicates, corruptions and reordering
/// from its fault record), ready for [`analysis::check_rc`].
pub fn decode_delivered(records: &[Record], report: &LinkReport) -> analysis::Decoded {
    let mut d = analysis::decode(records, &deliveries(report));
    let by_index: BTreeMap<usize, analysis::Frame> =
        d.frames.drain(..).map(|f| (f.index, f)).collect();
    d.frames = delivery_schedule(records, &report.faults)
        .into_iter()
        .filter_map(|d| {
            by_index.get(&d.record).map(|f| analysis::Frame {
                deliveries: d.copies,
                ..f.clone()
            })
        })
        .collect();
    d
}

/// Runs a scenario: two guests and the link; writes `capture.pcap`, `faults.json`,
/// `summary.json` and the console logs into `out`.
pub fn run(image: &GuestImage, sc: &Scenario, out: &Path) -> Result<RunResult> {
    sc.validate()?;
    fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let started = Instant::now();
    let deadline = started + Duration::from_secs(sc.timeout_s);
    let mut link = Link::new();
    let server_args = link.listen()?.1.qemu_args("n0", "52:54:00:00:00:01");
    let client_args = link.listen()?.1.qemu_args("n0", "52:54:00:00:00:02");
    let guest = |name: &str, ip: &str, srv: Option<&str>, args: Vec<String>| GuestConfig {
        name: name.into(),
        memory_mb: sc.memory_mb,
        script: guest_script(sc, ip, srv),
        cmdline: vec![],
        args,
    };
    let mut server = Guest::start(image, &guest("server", "10.0.0.1", None, server_args), out)?;
    let mut client = Guest::start(
        image,
        &guest("client", "10.0.0.2", Some("10.0.0.1"), client_args),
        out,
    )?;
    link.accept_all(deadline, || {
        for g in [&mut server, &mut client] {
            if !g.poll()? {
                bail!(
                    "QEMU for guest {} exited before connecting: {}",
                    g.name(),
                    g.qemu_messages()
                );
            }
        }
        Ok(())
    })?;
    let pcap = out.join("capture.pcap");
    let faults = sc.faults.clone();
    let hub = std::thread::spawn(move || link.run(&pcap, &faults));
    // 30 s: far longer than any retry interval the tools use (67 ms to 1 s).
    let mut outcomes = Guest::wait_all(
        &mut [&mut server, &mut client],
        deadline,
        Duration::from_secs(30),
    )?;
    let co: Outcome = outcomes.pop().expect("two guests");
    let so: Outcome = outcomes.pop().expect("two guests");
    drop((server, client));
    let report = hub
        .join()
        .map_err(|_| anyhow::anyhow!("the link thread panicked"))??;
    let elapsed = started.elapsed();

    let cap = rnic_wire::pcap::read_file(&report.pcap)?;
    let decoded = decode_delivered(&cap.records, &report);
    let summary = analysis::summarize(&decoded);
    let behaviour = analysis::check_rc(&decoded.frames, analysis::infer_mtu(&decoded.frames));
    let result = RunResult {
        scenario: sc.clone(),
        kernel: image.kernel_version.clone(),
        completed: so.succeeded() && co.succeeded(),
        server_status: so.script_status,
        client_status: co.script_status,
        timed_out: so.timed_out || co.timed_out,
        boot_s: [&so, &co]
            .iter()
            .filter_map(|o| o.boot.map(|b| b.as_secs_f64()))
            .collect(),
        elapsed_s: elapsed.as_secs_f64(),
        summary,
        behaviour,
        link: report,
        out_dir: out.to_owned(),
    };
    fs::write(
        out.join("faults.json"),
        serde_json::to_string_pretty(&result.link.faults)?,
    )?;
    fs::write(
        out.join("summary.json"),
        serde_json::to_string_pretty(&result)?,
    )?;
    Ok(result)
}

/// The summary as text.
pub fn report_text(r: &RunResult) -> String {
    let mut s = String::new();
    let sc = &r.scenario;
    s += &format!(
        "scenario {} ({} -n {} -s {}), faults {}, kernel {}\n",
        sc.tool,
        sc.tool.binary(),
        sc.iters,
        sc.size,
        serde_json::to_string(&sc.faults).unwrap_or_default(),
        r.kernel
    );
    s += &format!(
        "completed: {} (server status {:?}, client status {:?}{})\n",
        r.completed,
        r.server_status,
        r.client_status,
        if r.timed_out { ", timed out" } else { "" }
    );
    s += &format!(
        "time: {:.1} s total, boot {}\n",
        r.elapsed_s,
        r.boot_s
            .iter()
            .map(|b| format!("{b:.1} s"))
            .collect::<Vec<_>>()
            .join(" / ")
    );
    let m = &r.summary;
    s += &format!(
        "frames: {} ({} RoCEv2, {} other, {} malformed, {} bad ICRC), {} dropped by the link\n",
        m.frames, m.roce_frames, m.non_roce_frames, m.malformed, m.icrc_bad, m.dropped_by_link
    );
    for (op, n) in &m.by_opcode {
        s += &format!("  {op:<34} {n}\n");
    }
    s += &format!("ACKs: {}\n", m.acks);
    if m.naks_by_syndrome.is_empty() {
        s += "NAKs: none\n";
    }
    for (k, n) in &m.naks_by_syndrome {
        s += &format!("{k}: {n}\n");
    }
    s += &format!("retransmitted packets: {}\n", m.retransmissions);
    for (flow, psns) in &m.retransmitted_psns {
        s += &format!("  {flow}: PSNs {}\n", ranges(psns));
    }
    let b = &r.behaviour;
    s += &format!(
        "transport: {} requests lost, {} sequence-error NAKs expected / {} seen, {} duplicates ({} re-ACKed), {} duplicate READs ({} answered), {} dropped silently after a NAK, {} after the responder fell silent\n",
        b.lost_requests.len(),
        b.seq_naks_expected,
        b.seq_naks_seen,
        b.duplicates,
        b.duplicates_reacked,
        b.duplicate_reads,
        b.duplicate_reads_answered,
        b.silently_dropped,
        b.after_responder_silent
    );
    for e in b.episodes.iter().take(8) {
        s += &format!(
            "  NAK at frame {} for PSN {}: resent in order {} ({} packets)\n",
            e.nak_frame,
            e.psn,
            ranges(&e.resent),
            e.resent.len()
        );
    }
    if b.episodes.len() > 8 {
        s += &format!(
            "  ... {} more NAK episodes in summary.json\n",
            b.episodes.len() - 8
        );
    }
    if b.violations.is_empty() {
        s += "model: agrees\n";
    } else {
        for v in &b.violations {
            s += &format!("model VIOLATION: {v}\n");
        }
    }
    s += &format!("output: {}\n", r.out_dir.display());
    s
}

/// PSNs as runs: `[1, 2, 3, 7]` -> `1-3 7`; at most 12 runs shown.
pub fn ranges(psns: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &p in psns {
        match runs.last_mut() {
            Some((_, end)) if p == (*end + 1) & 0xFF_FFFF => *end = p,
            _ => runs.push((p, p)),
        }
    }
    let mut out: Vec<String> = runs
        .iter()
        .take(12)
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    if runs.len() > 12 {
        out.push(format!("... ({} runs)", runs.len()));
    }
    if out.is_empty() {
        "none".into()
    } else {
        out.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psn_runs_are_compacted_across_the_wrap() {
        assert_eq!(ranges(&[1, 2, 3, 7, 0xFF_FFFF, 0, 1]), "1-3 7 16777215-1");
        assert_eq!(ranges(&[]), "none");
    }

    #[test]
    fn scenario_names_round_trip_and_bad_ones_are_explained() {
        for t in Tool::ALL {
            assert_eq!(t.name().parse::<Tool>().unwrap(), t);
        }
        let e = "rc_pinpong".parse::<Tool>().unwrap_err();
        assert!(e.contains("rc_pingpong") && e.contains("read_bw"), "{e}");
    }

    #[test]
    fn scripts_fit_the_kernel_command_line() {
        for t in Tool::ALL {
            let sc = Scenario::new(t);
            let s = guest_script(&sc, "10.0.0.2", Some("10.0.0.1"));
            assert!(crate::runner::base64(s.as_bytes()).len() < 1700, "{t}");
            assert!(s.contains(t.binary()));
            assert!(s.contains("10.0.0.1\n") || s.contains("10.0.0.1 "), "{t}");
        }
    }
}
