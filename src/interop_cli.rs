//! `rnic qemu interop`: a real tool in a soft-RoCE guest against our NIC on the host link.
//! The guest runs the rdma-core tool; the host runs our tool (`rnic_driver::tools`) on our
//! NIC (the transport model), attached to the capturing, fault-injecting link; the tools'
//! TCP exchange goes over the guest's user-mode NIC. The capture is checked with the RC trace
//! analysis.

use std::fs;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use clap::Args;
use rnic_driver::model::{ChannelLink, ModelBackend, NicConfig};
use rnic_driver::tools::perftest;
use rnic_driver::tools::pingpong::{self, Role};
use rnic_driver::verbs::{Context, MacAddr};
use rnic_qemu::interop::{self, GuestRole};
use rnic_qemu::link::{FaultConfig, Link};
use rnic_qemu::runner::{self, Guest, GuestConfig};
use rnic_qemu::rxe::{self, Scenario, Tool};

use crate::qemu_cli::ScenarioArgs;
use rnic_qemu::{analysis, image};

/// Which NIC the host side runs.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum NicKind {
    /// The software transport model (rnic-transport).
    Model,
}

#[derive(Args, Debug)]
pub struct InteropArgs {
    /// The NIC on the host side.
    #[arg(long, value_enum, default_value = "model")]
    pub nic: NicKind,
    /// The guest tool's side of the TCP exchange.
    #[arg(long, value_enum)]
    pub guest_role: GuestRole,
    #[command(flatten)]
    pub run: ScenarioArgs,
}

/// What one run did, as summary.json holds it.
#[derive(serde::Serialize)]
struct RunSummary {
    scenario: String,
    nic: &'static str,
    guest_role: GuestRole,
    iters: u32,
    size: u32,
    faults: FaultConfig,
    completed: bool,
    guest_status: Option<i32>,
    guest_timed_out: bool,
    ours: Result<String, String>,
    elapsed_s: f64,
    summary: analysis::Summary,
    behaviour: analysis::Behaviour,
    link: rnic_qemu::link::LinkReport,
    counters: Vec<(String, u64)>,
}

/// Connects to the guest's forwarded port once its tool listens, as the guest says on its
/// console ([`interop::LISTENING`]): QEMU's forward accepts a connection whether or not
/// anything listens in the guest, and resets it later if nothing does.
fn connect_when_listening(port: u16, console: &Path, deadline: Instant) -> Result<TcpStream> {
    loop {
        if Instant::now() >= deadline {
            bail!("the guest's tool never listened on its TCP port");
        }
        let listening = fs::read_to_string(console)
            .map(|c| c.lines().any(|l| l.trim() == interop::LISTENING))
            .unwrap_or(false);
        if listening {
            if let Ok(s) = TcpStream::connect(("127.0.0.1", port)) {
                return Ok(s);
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn accept_until(l: &TcpListener, deadline: Instant) -> Result<TcpStream> {
    l.set_nonblocking(true)?;
    loop {
        match l.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false)?;
                return Ok(s);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    bail!("the guest's tool never connected");
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(e).context("accepting the guest's connection"),
        }
    }
}

/// The last line of a run, exactly as scripts read it.
fn last_line(
    sc: &Scenario,
    role: GuestRole,
    completed: bool,
    counts: [usize; 4],
    ok: bool,
) -> String {
    let [frames, faults, naks, retransmitted] = counts;
    format!(
        "scenario={} nic=model guest={} completed={} frames={frames} faults={faults} naks={naks} retransmitted={retransmitted} check={}",
        sc.tool.name(),
        role.name(),
        if completed { "yes" } else { "no" },
        if ok { "ok" } else { "failed" }
    )
}

/// Bad arguments exit 2 (through `main`); once they are good, a run that cannot finish (no
/// packages, a guest that dies, a link that fails) says why and ends with the last line,
/// `completed=no`, exit 1, like a run whose tools did not complete.
pub fn run(a: &InteropArgs) -> Result<ExitCode> {
    let sc = a.run.scenario()?;
    if sc.tool == Tool::UdPingpong && !sc.faults.is_none() {
        bail!("ud_pingpong does not recover from loss (UD): run it without faults");
    }
    match execute(a, &sc) {
        Ok(code) => Ok(code),
        Err(e) => {
            println!("error: {e:#}");
            println!("{}", last_line(&sc, a.guest_role, false, [0; 4], false));
            Ok(ExitCode::from(1))
        }
    }
}

fn execute(a: &InteropArgs, sc: &Scenario) -> Result<ExitCode> {
    image::require_packages(image::PACKAGES)?;
    let out = a.run.out.clone().unwrap_or_else(|| {
        image::default_cache_dir().join("interop").join(format!(
            "{}-{}",
            sc.tool,
            a.guest_role.name()
        ))
    });
    fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let img = image::build(&image::rxe_spec(), &image::default_cache_dir())?;

    let started = Instant::now();
    let deadline = started + Duration::from_secs(sc.timeout_s);
    let mut link = Link::new();
    let mut args = link.listen()?.1.qemu_args("n0", interop::GUEST_MAC);
    let (_, to_link, from_link) = link.attach_channel();
    let cfg = NicConfig::new(
        MacAddr(interop::HOST_NIC_MAC),
        std::net::IpAddr::from(interop::HOST_NIC_IP),
    );
    let ctx = Context::open(ModelBackend::new(
        cfg,
        ChannelLink::from_channels(to_link, from_link),
    ));
    let background = ctx.run_in_background();

    let (host_port, listener) = match a.guest_role {
        GuestRole::Server => (runner::free_port()?, None),
        GuestRole::Client => {
            let l = TcpListener::bind("127.0.0.1:0").context("binding the host's TCP port")?;
            (l.local_addr()?.port(), Some(l))
        }
    };
    args.extend(interop::user_nic_args(a.guest_role, host_port));
    let cfg = GuestConfig {
        name: "guest".into(),
        memory_mb: sc.memory_mb,
        script: interop::guest_script(sc, a.guest_role, host_port),
        cmdline: vec![],
        args,
    };
    let mut guest = Guest::start(&img, &cfg, &out)?;
    link.accept_all(deadline, || {
        if !guest.poll()? {
            bail!("QEMU exited before connecting: {}", guest.qemu_messages());
        }
        Ok(())
    })?;
    let pcap = out.join("capture.pcap");
    let faults = sc.faults.clone();
    let hub = std::thread::spawn(move || link.run(&pcap, &faults));

    let tool_ctx = ctx.clone();
    let console = guest.console().to_path_buf();
    let role = a.guest_role;
    let guest_done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let guest_ok = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (done, ok) = (guest_done.clone(), guest_ok.clone());
    let tool = sc.tool;
    let (iters, size) = (sc.iters, sc.size);
    let ours = std::thread::spawn(move || -> Result<String, String> {
        let tcp = match role {
            GuestRole::Server => {
                connect_when_listening(host_port, &console, deadline).map_err(|e| e.to_string())?
            }
            GuestRole::Client => accept_until(listener.as_ref().expect("bound"), deadline)
                .map_err(|e| e.to_string())?,
        };
        let test = match tool {
            Tool::RcPingpong | Tool::UdPingpong => None,
            Tool::SendBw => Some(perftest::Test::Send),
            Tool::WriteBw => Some(perftest::Test::Write),
            Tool::ReadBw => Some(perftest::Test::Read),
            Tool::AtomicBw => Some(perftest::Test::Atomic),
        };
        if let Some(test) = test {
            // perftest syncs over TCP around the run, so no lingering is needed.
            let mut o = perftest::Options::new(test);
            o.iters = iters;
            o.size = size;
            // The guest's tool runs with -u 18 (1 s): slow emulation, no spurious retries.
            o.timeout = 18;
            let client = role == GuestRole::Server;
            return perftest::run(&tool_ctx, tcp, client, &o).map(|r| r.text());
        }
        let mut opts = pingpong::Options::new(tool == Tool::UdPingpong);
        opts.iters = iters;
        opts.size = size;
        opts.timeout = Duration::from_secs(30);
        opts.peer_done = Some(ok);
        let r = match role {
            GuestRole::Server => Role::Client(tcp),
            GuestRole::Client => Role::Server(tcp),
        };
        let session = pingpong::run(&tool_ctx, r, &opts)?;
        // Our QP keeps answering (re-ACKing duplicates) until the guest's tool has finished.
        session.linger(Duration::from_secs(3600), Duration::from_secs(3600), || {
            done.load(std::sync::atomic::Ordering::Relaxed)
        });
        Ok(session.report.text())
    });
    let outcome = guest.wait(deadline);
    if outcome.as_ref().is_ok_and(|o| o.succeeded()) {
        guest_ok.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    guest_done.store(true, std::sync::atomic::Ordering::Relaxed);
    let outcome = outcome?;
    let ours = ours
        .join()
        .map_err(|_| anyhow::anyhow!("our tool's thread panicked"))?;
    let counters: Vec<(String, u64)> = ctx
        .counters()
        .iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    drop(background);
    drop(ctx);
    drop(guest);
    let report = hub
        .join()
        .map_err(|_| anyhow::anyhow!("the link thread panicked"))??;

    let cap = rnic_wire::pcap::read_file(&report.pcap)?;
    let decoded = rxe::decode_delivered(&cap.records, &report);
    let summary = analysis::summarize(&decoded);
    let behaviour = analysis::check_rc(&decoded.frames, analysis::infer_mtu(&decoded.frames));
    let check_ok =
        behaviour.violations.is_empty() && summary.malformed == 0 && summary.icrc_bad == 0;
    let completed = outcome.succeeded() && ours.is_ok();
    let console = fs::read_to_string(&outcome.console).unwrap_or_default();
    let ours_text = match &ours {
        Ok(t) => t.clone(),
        Err(e) => format!("error: {e}\n"),
    };
    fs::write(out.join("ours.txt"), &ours_text)?;
    fs::write(
        out.join("faults.json"),
        serde_json::to_string_pretty(&report.faults)?,
    )?;
    let naks: usize = summary.naks_by_syndrome.values().sum();
    let s = RunSummary {
        scenario: sc.tool.name().into(),
        nic: "model",
        guest_role: a.guest_role,
        iters: sc.iters,
        size: sc.size,
        faults: sc.faults.clone(),
        completed,
        guest_status: outcome.script_status,
        guest_timed_out: outcome.timed_out,
        ours: ours.clone(),
        elapsed_s: started.elapsed().as_secs_f64(),
        summary: summary.clone(),
        behaviour: behaviour.clone(),
        link: report.clone(),
        counters,
    };
    fs::write(out.join("summary.json"), serde_json::to_string_pretty(&s)?)?;

    println!(
        "guest {} ({}): {}",
        sc.tool.binary(),
        a.guest_role.name(),
        match (outcome.script_status, outcome.timed_out) {
            (_, true) => "timed out".to_string(),
            (Some(0), _) => "completed".to_string(),
            (st, _) => format!("failed (status {st:?})"),
        }
    );
    print!("ours: {ours_text}");
    if !completed {
        let tail: Vec<&str> = console
            .lines()
            .filter(|l| !l.starts_with("RNIC-"))
            .collect();
        println!("guest console, last lines:");
        for l in &tail[tail.len().saturating_sub(8)..] {
            println!("  {l}");
        }
    }
    for v in &behaviour.violations {
        println!("check: {v}");
    }
    println!("output in {}", out.display());
    println!(
        "{}",
        last_line(
            sc,
            a.guest_role,
            completed,
            [
                summary.frames,
                report.faults.len(),
                naks,
                summary.retransmissions
            ],
            check_ok
        )
    );
    Ok(if completed && check_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
