//! `rnic trace replay --role responder CAPTURE`: the requests of every RC QP of a capture fed
//! into our responder (the transport model), our responses compared with the captured ones.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use rnic_driver::replay_hw::HwReplayNic;
use rnic_qemu::link::FaultEvent;
use rnic_qemu::rxe;
use rnic_transport::replay::{self, MrOverride, Options, QpOverride};
use rnic_transport::{Access, Mtu};
use rnic_wire::pcap::{self, Delivery, LINKTYPE_ETHERNET, PcapWriter};

/// Which side of the capture our NIC replaces.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Feed the requester's frames into our responder.
    Responder,
}

/// Which NIC answers.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum NicKind {
    /// The software transport model.
    Model,
    /// The hardware responder under Verilator, set up as the model is (its transmit path
    /// shapes the responses).
    Hw,
}

#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    /// Which side our NIC plays.
    #[arg(long, value_enum, default_value = "responder")]
    pub role: Role,
    /// The capture (pcap or pcapng).
    pub capture: PathBuf,
    /// Which NIC answers: the transport model, or the hardware responder under Verilator.
    #[arg(long, value_enum, default_value = "model")]
    pub nic: NicKind,
    /// Frames the link did not deliver as captured: the harness's faults.json, or a
    /// manifest.json whose entry for this capture holds a fault record.
    #[arg(long, conflicts_with = "drops")]
    pub faults: Option<PathBuf>,
    /// Dropped frames: one 1-based frame number per line, optionally followed by a direction.
    /// Without --faults or --drops, NAME.drops.txt beside the capture is used if present.
    #[arg(long)]
    pub drops: Option<PathBuf>,
    /// A responder QP to set up instead of inferring it: QPN:EPSN:MTU[:PD[:DEST_QPN]]
    /// (numbers decimal or 0x-hex, MTU in bytes).
    #[arg(long = "qp", value_name = "SPEC", value_parser = parse_qp)]
    pub qps: Vec<QpOverride>,
    /// A memory region instead of an inferred one: RKEY:VA:LEN:ACCESS[:PD], ACCESS letters
    /// w (remote write), r (remote read), a (remote atomic); memory starts zeroed.
    #[arg(long = "mr", value_name = "SPEC", value_parser = parse_mr)]
    pub mrs: Vec<MrOverride>,
    /// Write our responses to this pcap.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write the final bytes of every --mr region, concatenated in option order.
    #[arg(long)]
    pub memory_out: Option<PathBuf>,
    /// Print every mismatch with its frame numbers.
    #[arg(long, short)]
    pub verbose: bool,
}

fn num(s: &str, what: &str) -> Result<u64, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("{what} {s:?} is not a number"))
}

fn parse_qp(s: &str) -> Result<QpOverride, String> {
    let f: Vec<&str> = s.split(':').collect();
    if !(3..=5).contains(&f.len()) {
        return Err(format!("{s:?}: expected QPN:EPSN:MTU[:PD[:DEST_QPN]]"));
    }
    let qpn = num(f[0], "QPN")?;
    let epsn = num(f[1], "EPSN")?;
    let mtu_bytes = num(f[2], "MTU")?;
    let mtu = Mtu::from_bytes(mtu_bytes as usize)
        .ok_or_else(|| format!("MTU {mtu_bytes} is not 256, 512, 1024, 2048 or 4096"))?;
    for (name, v) in [("QPN", qpn), ("EPSN", epsn)] {
        if v > 0xFF_FFFF {
            return Err(format!("{name} {v:#x} does not fit 24 bits"));
        }
    }
    let pd = f.get(3).map(|p| num(p, "PD")).transpose()?.unwrap_or(1);
    if pd == 0 || pd > 1024 {
        return Err(format!("PD {pd} is outside 1..=1024"));
    }
    let dest_qpn = f.get(4).map(|p| num(p, "DEST_QPN")).transpose()?;
    if dest_qpn.is_some_and(|d| d > 0xFF_FFFF) {
        return Err("DEST_QPN does not fit 24 bits".into());
    }
    Ok(QpOverride {
        qpn: qpn as u32,
        epsn: epsn as u32,
        mtu,
        pd: pd as u32,
        dest_qpn: dest_qpn.map(|d| d as u32),
    })
}

fn parse_mr(s: &str) -> Result<MrOverride, String> {
    let f: Vec<&str> = s.split(':').collect();
    if !(4..=5).contains(&f.len()) {
        return Err(format!("{s:?}: expected RKEY:VA:LEN:ACCESS[:PD]"));
    }
    let rkey = num(f[0], "RKEY")?;
    if rkey > u64::from(u32::MAX) {
        return Err(format!("RKEY {rkey:#x} does not fit 32 bits"));
    }
    let va = num(f[1], "VA")?;
    let len = num(f[2], "LEN")?;
    if len > rnic_transport::mr::MAX_MR_LEN {
        return Err(format!("LEN {len} is above the model's 1 GiB"));
    }
    if va.checked_add(len).is_none() {
        return Err("VA + LEN overflows 64 bits".into());
    }
    let mut access = Access::NONE;
    for c in f[3].chars() {
        access |= match c {
            'w' => Access::REMOTE_WRITE,
            'r' => Access::REMOTE_READ,
            'a' => Access::REMOTE_ATOMIC,
            '-' => Access::NONE,
            other => return Err(format!("access letter {other:?} is not w, r or a")),
        };
    }
    let pd = f.get(4).map(|p| num(p, "PD")).transpose()?.unwrap_or(1);
    if pd == 0 || pd > 1024 {
        return Err(format!("PD {pd} is outside 1..=1024"));
    }
    Ok(MrOverride {
        rkey: rkey as u32,
        va,
        len,
        access,
        pd: pd as u32,
    })
}

/// Reads a fault record: a list of fault events (faults.json), or a manifest (a list of
/// entries with `file` and `fault_record`) from which the entry of `capture` is taken.
pub fn read_faults(path: &Path, capture: &Path) -> Result<Vec<FaultEvent>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let list = v
        .as_array()
        .with_context(|| format!("{}: expected a JSON list", path.display()))?;
    if list.iter().any(|e| e.get("fault_record").is_some()) {
        let name = capture
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let entry = list
            .iter()
            .find(|e| e.get("file").and_then(|f| f.as_str()) == Some(name))
            .with_context(|| format!("{}: no entry for {name}", path.display()))?;
        return serde_json::from_value(entry["fault_record"].clone())
            .with_context(|| format!("{}: the fault record of {name}", path.display()));
    }
    serde_json::from_value(v)
        .with_context(|| format!("{}: not a list of fault events", path.display()))
}

/// Reads a drops file: one 1-based frame number per line, optionally a direction after it;
/// returns the 0-based indices.
pub fn read_drops(path: &Path) -> Result<BTreeSet<usize>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut d = BTreeSet::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let first = line.split_whitespace().next().expect("non-empty");
        let frame: usize = first.parse().ok().filter(|&f| f >= 1).with_context(|| {
            format!(
                "{}:{}: {first:?} is not a 1-based frame number",
                path.display(),
                n + 1
            )
        })?;
        d.insert(frame - 1);
    }
    Ok(d)
}

pub fn run(a: &ReplayArgs) -> Result<ExitCode> {
    let cap = pcap::read_file(&a.capture)?;
    let n = cap.records.len();
    let named_beyond = |max: Option<usize>| -> Result<()> {
        match max {
            Some(m) if m >= n => bail!(
                "the fault record names frame {} but {} has {n} frames",
                m + 1,
                a.capture.display()
            ),
            _ => Ok(()),
        }
    };
    let beside = a.capture.with_extension("drops.txt");
    let drops = match (&a.faults, &a.drops) {
        (Some(_), _) => None,
        (None, Some(d)) => Some(read_drops(d)?),
        (None, None) if beside.is_file() => Some(read_drops(&beside)?),
        (None, None) => None,
    };
    let schedule = if let Some(f) = &a.faults {
        let events = read_faults(f, &a.capture)?;
        named_beyond(events.iter().map(|e| e.frame as usize).max())?;
        Some(rxe::delivery_schedule(&cap.records, &events))
    } else if let Some(d) = drops {
        named_beyond(d.iter().next_back().copied())?;
        let mut all = Delivery::as_captured(&cap.records);
        for x in &mut all {
            x.copies = u8::from(!d.contains(&x.record));
        }
        Some(all)
    } else {
        None
    };
    let opts = Options {
        qps: a.qps.clone(),
        mrs: a.mrs.clone(),
        schedule,
    };
    let mut notes = Vec::new();
    let report = match a.nic {
        NicKind::Model => replay::replay(&cap.records, &opts),
        NicKind::Hw => replay::replay_on(&cap.records, &opts, &mut |nic, setup| {
            let hw = HwReplayNic::from_model(&nic, setup)?;
            notes.extend(hw.notes().iter().cloned());
            Ok(Box::new(hw))
        }),
    }
    .map_err(|e| anyhow::anyhow!("{}: {e}", a.capture.display()))?;
    for n in &notes {
        println!("hw: {n}");
    }
    for q in &report.qps {
        println!(
            "qp {:#08x}@{} <- {:#08x}@{}: epsn={} mtu={} requests={} expected={} ours={} matched={} mismatched={}{}{}",
            q.qpn,
            q.responder,
            q.requester_qpn,
            q.requester,
            q.epsn,
            q.mtu.bytes(),
            q.requests,
            q.expected.len(),
            q.ours.len(),
            q.matched,
            q.mismatches.len(),
            if q.unsolicited > 0 {
                format!(" ({} unsolicited ACKs not compared)", q.unsolicited)
            } else {
                String::new()
            },
            if q.after_silence > 0 {
                format!(
                    " ({} requests after the responder's last response, not compared)",
                    q.after_silence
                )
            } else {
                String::new()
            }
        );
        if a.verbose {
            for m in &q.mismatches {
                let expected = match &m.expected {
                    Some(r) => format!("captured frame {}: {}", r.frame + 1, r.describe()),
                    None => "captured: none".into(),
                };
                let ours = match &m.ours {
                    Some(r) => format!("ours for request frame {}: {}", r.frame + 1, r.describe()),
                    None => "ours: none".into(),
                };
                println!("  mismatch #{}: {expected} | {ours}", m.index + 1);
            }
            for (ip, c) in &report.counters {
                let nonzero: Vec<String> = c
                    .iter()
                    .filter(|(_, v)| *v != 0)
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                println!("  counters {ip}: {}", nonzero.join(" "));
            }
        }
    }
    if let Some(out) = &a.out {
        let file = File::create(out).with_context(|| format!("creating {}", out.display()))?;
        let mut w = PcapWriter::new(BufWriter::new(file), LINKTYPE_ETHERNET, true)?;
        for (ts, f) in &report.frames {
            w.write(*ts, f)?;
        }
        w.finish()?;
    }
    if let Some(m) = &a.memory_out {
        std::fs::write(m, &report.memory).with_context(|| format!("writing {}", m.display()))?;
    }
    println!("{}", report.summary_line());
    Ok(if report.mismatched() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
