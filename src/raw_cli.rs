//! `rnic sim raw` (frames through the raw rings of the simulated host interface and back),
//! `rnic regs dump` (every register by name) and `rnic bench raw`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use rnic_cosim::host::DeviceConfig;
use rnic_driver::raw::{MIN_FRAME, RawConfig, RawQueues};
use rnic_driver::registers::{dump, reg_offset};
use rnic_driver::transport::{Budget, SimTransport, Transport, VfioTransport};
use rnic_wire::pcap::{self, LINKTYPE_ETHERNET, PcapWriter};

/// `rnic sim raw`.
#[derive(clap::Args, Debug)]
pub struct SimRawArgs {
    /// Frames to send (pcap or pcapng, Ethernet without FCS, 14..=9216 bytes each).
    pub input: PathBuf,
    /// Where to write the frames the raw receive ring delivered (pcap).
    pub output: PathBuf,
    /// Run rust-hdl's simulation beside Verilator and compare every output on every cycle.
    #[arg(long)]
    pub lockstep: bool,
    /// Seed of the stalls and idles.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Chance of a stall cycle on the DMA port, the CSR port and the transmit side.
    #[arg(long, default_value_t = 0.0)]
    pub stall: f64,
    /// Chance of an idle cycle on the receive side.
    #[arg(long, default_value_t = 0.0)]
    pub idle: f64,
    /// log2 of the entries of each raw ring.
    #[arg(long, default_value_t = 6)]
    pub ring_log: u32,
    /// Bytes per receive buffer (a multiple of 8, 64..=9216).
    #[arg(long, default_value_t = 9216)]
    pub buf_len: usize,
}

/// How a looped-back frame compares with the one sent.
fn identical(sent: &[u8], got: &[u8]) -> bool {
    if sent.len() >= MIN_FRAME {
        return sent == got;
    }
    got.len() == MIN_FRAME
        && got[..sent.len()] == *sent
        && got[sent.len()..].iter().all(|&b| b == 0)
}

/// Received frames paired with the sent frames they are copies of, in order: (received,
/// sent). Frames the receive path kept (RoCEv2 ones, drops) are skipped over.
fn matched(sent: &[Vec<u8>], got: &[Vec<u8>]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut j = 0;
    for (i, g) in got.iter().enumerate() {
        let mut k = j;
        while k < sent.len() && !identical(&sent[k], g) {
            k += 1;
        }
        if k < sent.len() {
            out.push((i, k));
            j = k + 1;
        }
    }
    out
}

fn check_probability(name: &str, p: f64) -> Result<()> {
    if !(0.0..1.0).contains(&p) {
        bail!("--{name} {p}: give a probability in [0, 1)");
    }
    Ok(())
}

/// What a raw run did.
pub struct RawRun {
    pub sent: usize,
    pub received: Vec<Vec<u8>>,
    pub cycles: u64,
    pub seconds: f64,
}

/// Bytes a raw run keeps in flight (sent, not yet back): less than the raw receive FIFO's
/// 16 KiB, so a loopback never overruns it while the receive engine writes to the host (the
/// NIC would drop and count what does not fit, as on a real link).
pub const IN_FLIGHT_BYTES: usize = 12 * 1024;

/// Sends `frames` through the raw transmit ring and collects what the receive ring delivers,
/// until every frame is back or accounted for, or the device has been quiet for a while.
///
/// Frames in flight are counted, not matched: `IN_FLIGHT_BYTES` over the longest frame of
/// the run. A frame the receive path keeps from the ring (RoCEv2, or dropped) never comes
/// back, so when the window is full and nothing arrives the counters say how many it kept.
pub fn run_raw(q: &mut RawQueues<SimTransport>, frames: &[Vec<u8>]) -> Result<RawRun> {
    let start = Instant::now();
    let c0 = q.t.dev.cycles();
    let longest = frames
        .iter()
        .map(|f| f.len().max(MIN_FRAME))
        .max()
        .unwrap_or(MIN_FRAME);
    let window = (IN_FLIGHT_BYTES / longest).max(1);
    let (mut next, mut received, mut quiet, mut kept) = (0, Vec::new(), 0u64, 0usize);
    let quiet_limit = 200_000;
    while received.len() < frames.len() && quiet < quiet_limit {
        let mut progressed = false;
        while next < frames.len()
            && next < received.len() + kept + window
            && q.send(&frames[next]).map_err(|e| anyhow!(e))?
        {
            next += 1;
            progressed = true;
        }
        while let Some(r) = q.recv().map_err(|e| anyhow!(e))? {
            received.push(r.frame);
            progressed = true;
        }
        if progressed {
            quiet = 0;
            continue;
        }
        q.wait(Budget::SHORT).map_err(|e| anyhow!(e))?;
        quiet += Budget::SHORT.cycles;
        let stalled = next == frames.len() || next >= received.len() + kept + window;
        if stalled && quiet % 2048 == 0 {
            let now = not_for_the_ring(q)?;
            if now != kept {
                kept = now;
                quiet = 0;
            }
            // Everything sent is back or kept: done.
            if next == frames.len() && received.len() + kept >= frames.len() {
                break;
            }
        }
    }
    Ok(RawRun {
        sent: next,
        received,
        cycles: q.t.dev.cycles() - c0,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Frames the receive path kept from the raw ring: accepted as RoCEv2, or dropped (any
/// reason, counted).
fn not_for_the_ring(q: &mut RawQueues<SimTransport>) -> Result<usize> {
    let mut n = 0u64;
    for c in rnic_regmap::regs::RX_COUNTERS
        .iter()
        .filter(|c| **c != "RX_FRAMES" && **c != "RX_BYPASS")
        .chain(&["RAW_RX_DROPS"])
    {
        let at = reg_offset(&format!("counters.{c}")).map_err(|e| anyhow!(e))?;
        n += u64::from(q.t.read32(at).map_err(|e| anyhow!(e))?);
    }
    Ok(n as usize)
}

pub fn run_sim_raw(a: &SimRawArgs) -> Result<ExitCode> {
    check_probability("stall", a.stall)?;
    check_probability("idle", a.idle)?;
    let cap = pcap::read_file(&a.input).map_err(|e| anyhow!("{e}"))?;
    let mut frames = Vec::new();
    for (i, r) in cap.records.iter().enumerate() {
        if r.linktype != LINKTYPE_ETHERNET {
            bail!("{}: frame {}: not Ethernet", a.input.display(), i + 1);
        }
        if !(14..=9216).contains(&r.data.len()) || r.data.len() < r.orig_len as usize {
            bail!(
                "{}: frame {}: {} bytes captured of {}: raw frames are whole, 14..=9216 bytes",
                a.input.display(),
                i + 1,
                r.data.len(),
                r.orig_len
            );
        }
        frames.push(r.data.clone());
    }
    let t = SimTransport::new(DeviceConfig {
        lockstep: a.lockstep,
        seed: a.seed,
        stall: a.stall,
        idle: a.idle,
    })
    .map_err(|e| anyhow!(e))?;
    let cfg = RawConfig {
        log_size: a.ring_log,
        buf_len: a.buf_len,
        interrupts: false,
    };
    let mut q = RawQueues::new(t, cfg).map_err(|e| anyhow!(e))?;
    let run = run_raw(&mut q, &frames)?;
    let file = std::fs::File::create(&a.output)
        .with_context(|| format!("creating {}", a.output.display()))?;
    let mut w = PcapWriter::new(std::io::BufWriter::new(file), LINKTYPE_ETHERNET, true)
        .with_context(|| format!("writing {}", a.output.display()))?;
    let matches = matched(&frames, &run.received);
    for (i, f) in run.received.iter().enumerate() {
        // A frame keeps the time of the frame it is a copy of (of the previous one if none).
        let sent = matches.iter().rev().find(|m| m.0 <= i).map_or(0, |m| m.1);
        let ts = cap.records.get(sent).map_or(0, |r| r.ts_ns);
        w.write(ts, f)
            .with_context(|| format!("writing {}", a.output.display()))?;
    }
    w.finish()
        .with_context(|| format!("writing {}", a.output.display()))?;
    let same = matched(&frames, &run.received).len();
    let mut names = Vec::new();
    for n in [
        "counters.RX_ACCEPTED",
        "counters.RAW_RX_DROPS",
        "counters.DMA_READ_ERRORS",
        "counters.DMA_WRITE_ERRORS",
    ] {
        let v = q.t.read32(reg_offset(n)?).map_err(|e| anyhow!(e))?;
        if v > 0 {
            names.push(format!("{n}={v}"));
        }
    }
    if !names.is_empty() {
        eprintln!(
            "note: {} (RoCEv2 frames go to the transport, not the raw ring)",
            names.join(" ")
        );
    }
    println!(
        "cycles={} seconds={:.3} cycles_per_s={:.0}",
        run.cycles,
        run.seconds,
        run.cycles as f64 / run.seconds.max(1e-9)
    );
    println!(
        "frames={} sent={} received={} identical={}",
        frames.len(),
        run.sent,
        run.received.len(),
        same
    );
    Ok(
        if same == frames.len() && run.received.len() == frames.len() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        },
    )
}

/// `rnic regs dump`.
pub fn run_dump(vfio: Option<&str>) -> Result<ExitCode> {
    let regs = match vfio {
        Some(bdf) => {
            let mut t = VfioTransport::open(bdf).map_err(|e| anyhow!(e))?;
            dump(&mut t)
        }
        None => {
            let mut t = SimTransport::new(DeviceConfig::default()).map_err(|e| anyhow!(e))?;
            dump(&mut t)
        }
    }
    .map_err(|e| anyhow!(e))
    .context("reading the registers")?;
    let mut out = std::io::stdout().lock();
    for (name, v) in regs {
        writeln!(out, "{name:<32} {v:#010x}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `rnic bench raw`: raw loopback at 64 and 1514 bytes under Verilator, and the DMA
/// arbiter's utilisation under back-to-back requests from both clients.
pub fn bench_raw() -> Result<()> {
    let mut d = rnic_cosim::ports::VerilatedPorts::of::<rnic_hw::dma_arbiter::DmaArbiter<7, 8>>(
        "dma_arbiter",
    )
    .map_err(|e| anyhow!(e))?;
    let run = rnic_cosim::dma_bench::run_arbiter(&mut d, 1, 0.0, 4000).map_err(|e| anyhow!(e))?;
    if !run.errors.is_empty() {
        bail!("DMA arbiter: {}", run.errors.join("; "));
    }
    println!(
        "DMA arbiter, two clients back to back ({} reads, {} writes of 1..512 bytes): read data {:.3} beats/cycle, write data {:.3} beats/cycle, {:.3} both",
        run.reads,
        run.writes,
        run.read_beats as f64 / run.cycles as f64,
        run.write_beats as f64 / run.cycles as f64,
        (run.read_beats + run.write_beats) as f64 / run.cycles as f64
    );
    println!("raw loopback (host_nic under Verilator, driver rings, no stalls):");
    for len in [64usize, 1514] {
        let frames: Vec<Vec<u8>> = (0..2000)
            .map(|i| {
                let mut f: Vec<u8> = (0..len).map(|j| (i * 7 + j * 13) as u8).collect();
                f[12..14].copy_from_slice(&[0x88, 0xB5]);
                f
            })
            .collect();
        let t = SimTransport::new(DeviceConfig::default()).map_err(|e| anyhow!(e))?;
        let mut q = RawQueues::new(
            t,
            RawConfig {
                log_size: 8,
                buf_len: 2048,
                interrupts: false,
            },
        )
        .map_err(|e| anyhow!(e))?;
        let run = run_raw(&mut q, &frames)?;
        if run.received != frames {
            let same = frames
                .iter()
                .zip(&run.received)
                .take_while(|(a, b)| a == b)
                .count();
            let regs: Vec<String> = dump(&mut q.t)
                .map_err(|e| anyhow!(e))?
                .into_iter()
                .filter(|(n, v)| n.starts_with("counters") && *v != 0 || n.starts_with("raw"))
                .map(|(n, v)| format!("{n}={v:#x}"))
                .collect();
            bail!(
                "{len}-byte frames: {} of {} came back, the first {same} identical ({})",
                run.received.len(),
                frames.len(),
                regs.join(" ")
            );
        }
        let s = q.t.dev.env.dma.stats;
        let bytes = (len * frames.len()) as f64;
        println!(
            "  {len:>4} B: {:.0} frames/s, {:.3} bytes/cycle, {:.1} cycles/frame, {:.2} M cycles/s; DMA read beats {:.3}/cycle, write beats {:.3}/cycle",
            frames.len() as f64 / run.seconds,
            bytes / run.cycles as f64,
            run.cycles as f64 / frames.len() as f64,
            run.cycles as f64 / run.seconds / 1e6,
            s.read_beats as f64 / run.cycles as f64,
            s.write_beats as f64 / run.cycles as f64,
        );
    }
    Ok(())
}
