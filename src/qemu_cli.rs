//! `rnic qemu`: the real-kernel harness (soft-RoCE peers in QEMU guests, their captures).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use rnic_qemu::analysis;
use rnic_qemu::image;
use rnic_qemu::link::{FaultConfig, FaultEvent};
use rnic_qemu::rxe::{self, Scenario, Tool};

#[derive(Args)]
pub struct QemuArgs {
    #[command(subcommand)]
    cmd: QemuCmd,
}

#[derive(Subcommand)]
enum QemuCmd {
    /// Two soft-RoCE (rdma_rxe) guests joined by the host link, running one tool; writes the
    /// pcap, the fault record and a summary. Exit 0 when the tool completed on both sides and
    /// the trace agrees with the RC model, 1 otherwise.
    Rxe(ScenarioArgs),
    /// A real tool in a soft-RoCE guest against our NIC on the host link (the tools' TCP
    /// exchange over the guest's user-mode NIC). Ends with one line `scenario=S nic=model
    /// guest=ROLE completed=yes|no frames=N faults=N naks=N retransmitted=N check=ok|failed`;
    /// exit 0 only when both tools completed and the capture checks out.
    Interop(crate::interop_cli::InteropArgs),
    /// Build (or find in the cache) a guest image and print its files.
    Image {
        /// rxe or vfio (vfio needs --binary).
        #[arg(default_value = "rxe")]
        kind: String,
        /// The static test binary for the vfio image.
        #[arg(long)]
        binary: Option<PathBuf>,
    },
    /// Regenerate the golden rxe traces: a fixed set of small runs, each capture copied to
    /// DIR/NAME.pcap, with DIR/manifest.json (kernel, tool, parameters, seed, fault record).
    Golden {
        #[arg(long, default_value = "tests/golden/rxe")]
        out: PathBuf,
    },
    /// Summarize a capture (frames by opcode, NAKs, retransmissions) and check it against the
    /// RC model; `--faults` gives the link's record of what it dropped (faults.json, or a
    /// manifest.json with an entry for the capture).
    Analyze {
        pcap: PathBuf,
        #[arg(long)]
        faults: Option<PathBuf>,
    },
}

/// A scenario and its faults, as `qemu rxe` and `qemu interop` take them.
#[derive(Args, Debug)]
pub struct ScenarioArgs {
    /// rc_pingpong, ud_pingpong, send_bw, write_bw, read_bw or atomic_bw.
    #[arg(long)]
    pub scenario: Tool,
    /// Drop every Nth RoCEv2 frame.
    #[arg(long)]
    pub drop_every: Option<u64>,
    /// Drop each RoCEv2 frame with this probability (seeded by --seed).
    #[arg(long)]
    pub drop_prob: Option<f64>,
    /// Deliver every Nth RoCEv2 frame after the next one.
    #[arg(long)]
    pub reorder_every: Option<u64>,
    /// Deliver every Nth RoCEv2 frame twice.
    #[arg(long)]
    pub duplicate_every: Option<u64>,
    /// Flip one bit of every Nth RoCEv2 frame.
    #[arg(long)]
    pub corrupt_every: Option<u64>,
    /// Flip one bit of each RoCEv2 frame with this probability (seeded by --seed).
    #[arg(long)]
    pub corrupt_prob: Option<f64>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Iterations (default per tool: 20).
    #[arg(long)]
    pub iters: Option<u32>,
    /// Message size in bytes (default per tool).
    #[arg(long)]
    pub size: Option<u32>,
    /// Seconds for the whole run.
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
    /// Output directory (default under target/qemu: runs/SCENARIO[-drop-N] for rxe,
    /// interop/SCENARIO-ROLE for interop).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: &QemuArgs) -> Result<ExitCode> {
    match &args.cmd {
        QemuCmd::Rxe(a) => run_rxe(a),
        QemuCmd::Interop(a) => crate::interop_cli::run(a),
        QemuCmd::Image { kind, binary } => {
            let spec = match (kind.as_str(), binary) {
                ("rxe", _) => image::rxe_spec(),
                ("vfio", Some(b)) => image::vfio_spec(b),
                ("vfio", None) => anyhow::bail!("the vfio image needs --binary PATH"),
                (k, _) => anyhow::bail!("unknown image kind {k:?}: rxe or vfio"),
            };
            let img = image::build(&spec, &image::default_cache_dir())?;
            println!("kernel {}", img.kernel_version);
            println!("vmlinux {}", img.vmlinux.display());
            println!("initrd {}", img.initrd.display());
            println!("modules {}", img.modules.join(" "));
            Ok(ExitCode::SUCCESS)
        }
        QemuCmd::Analyze { pcap, faults } => analyze(pcap, faults.as_deref()),
        QemuCmd::Golden { out } => golden(out),
    }
}

/// The golden set: name, tool, iterations, size, drop every N.
pub const GOLDEN: &[(&str, Tool, u32, u32, Option<u64>)] = &[
    ("rc_pingpong", Tool::RcPingpong, 10, 2048, None),
    ("rc_pingpong-drop-7", Tool::RcPingpong, 10, 2048, Some(7)),
    ("ud_pingpong", Tool::UdPingpong, 10, 512, None),
    ("send_bw-drop-9", Tool::SendBw, 5, 2048, Some(9)),
    ("write_bw-drop-9", Tool::WriteBw, 5, 2048, Some(9)),
    ("read_bw-drop-9", Tool::ReadBw, 5, 2048, Some(9)),
];

/// One golden trace as the manifest records it.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct GoldenEntry {
    pub file: String,
    pub kernel: String,
    pub tool: String,
    pub command: String,
    pub iters: u32,
    pub size: u32,
    pub faults: FaultConfig,
    pub fault_record: Vec<FaultEvent>,
    pub completed: bool,
    pub frames: usize,
    pub seq_naks: usize,
    pub retransmissions: usize,
}

fn golden(out: &Path) -> Result<ExitCode> {
    image::require_packages(image::PACKAGES)?;
    let img = image::build(&image::rxe_spec(), &image::default_cache_dir())?;
    std::fs::create_dir_all(out)?;
    let mut entries = Vec::new();
    let mut ok = true;
    for &(name, tool, iters, size, drop) in GOLDEN {
        let mut sc = Scenario::new(tool);
        sc.iters = iters;
        sc.size = size;
        sc.faults.drop_every = drop;
        sc.timeout_s = 120;
        let dir = image::default_cache_dir().join("golden").join(name);
        let r = rxe::run(&img, &sc, &dir)?;
        print!("{}", rxe::report_text(&r));
        ok &= r.completed && r.behaviour.violations.is_empty();
        let file = format!("{name}.pcap");
        std::fs::copy(&r.link.pcap, out.join(&file))?;
        entries.push(GoldenEntry {
            file,
            kernel: r.kernel.clone(),
            tool: tool.binary().into(),
            command: format!("{} {}", tool.binary(), tool.args(iters, size)),
            iters,
            size,
            faults: sc.faults.clone(),
            fault_record: r.link.faults.clone(),
            completed: r.completed,
            frames: r.summary.frames,
            seq_naks: r.behaviour.seq_naks_seen,
            retransmissions: r.summary.retransmissions,
        });
    }
    std::fs::write(
        out.join("manifest.json"),
        serde_json::to_string_pretty(&entries)? + "\n",
    )?;
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

impl ScenarioArgs {
    /// The scenario these options describe, checked.
    pub fn scenario(&self) -> Result<Scenario> {
        let mut sc = Scenario::new(self.scenario);
        if let Some(n) = self.iters {
            sc.iters = n;
        }
        if let Some(s) = self.size {
            sc.size = s;
        }
        sc.timeout_s = self.timeout;
        sc.faults = FaultConfig {
            drop_every: self.drop_every,
            drop_prob: self.drop_prob,
            reorder_every: self.reorder_every,
            duplicate_every: self.duplicate_every,
            corrupt_every: self.corrupt_every,
            corrupt_prob: self.corrupt_prob,
            seed: self.seed,
        };
        sc.validate()?;
        Ok(sc)
    }
}

fn run_rxe(a: &ScenarioArgs) -> Result<ExitCode> {
    let sc = a.scenario()?;
    image::require_packages(image::PACKAGES)?;
    let out = a.out.clone().unwrap_or_else(|| {
        let mut name = a.scenario.name().to_string();
        if let Some(n) = a.drop_every {
            name += &format!("-drop-{n}");
        }
        image::default_cache_dir().join("runs").join(name)
    });
    let img = image::build(&image::rxe_spec(), &image::default_cache_dir())?;
    let r = rxe::run(&img, &sc, &out)?;
    print!("{}", rxe::report_text(&r));
    Ok(if r.completed && r.behaviour.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn analyze(pcap: &Path, faults: Option<&Path>) -> Result<ExitCode> {
    let cap = rnic_wire::pcap::read_file(pcap)?;
    let events = match faults {
        Some(f) => crate::replay_cli::read_faults(f, pcap)?,
        None => Vec::new(),
    };
    let report = rnic_qemu::link::LinkReport {
        faults: events,
        ..Default::default()
    };
    let d = rxe::decode_delivered(&cap.records, &report);
    let s = analysis::summarize(&d);
    let b = analysis::check_rc(&d.frames, analysis::infer_mtu(&d.frames));
    println!("{}", serde_json::to_string_pretty(&s)?);
    println!("{}", serde_json::to_string_pretty(&b)?);
    Ok(
        if b.violations.is_empty() && s.malformed == 0 && s.icrc_bad == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        },
    )
}
