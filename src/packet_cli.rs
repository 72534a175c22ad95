//! `rnic sim rx`, `rnic gen` and `rnic bench packet`: the hardware receive parser under
//! Verilator on captures, Verilog of a named top, and the parser's throughput figures.
//!
//! `rnic sim loopback` (receive then transmit) waits for the TX builder, which is not built yet.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use rnic_cosim::axis::Rng;
use rnic_cosim::packet_dut::{RxRun, RxStimulus, VerilatedRx, run};
use rnic_cosim::rx_model::expect;
use rnic_hw::rx_parser::{COUNTERS, Reason};
use rnic_wire::pcap::{self, LINKTYPE_ETHERNET};

/// `rnic sim rx`.
#[derive(clap::Args, Debug)]
pub struct SimRxArgs {
    /// Capture (pcap or pcapng) of Ethernet frames without FCS.
    pub file: PathBuf,
    /// Write the accepted frames (those whose payload the parser released) to this pcap.
    #[arg(long, value_name = "ACCEPTED.pcap")]
    pub out: Option<PathBuf>,
    /// Write the bypassed (non-RoCEv2) frames to this pcap.
    #[arg(long, value_name = "BYPASS.pcap")]
    pub bypass: Option<PathBuf>,
    /// Write a VCD waveform of the run.
    #[arg(long, value_name = "PATH")]
    pub vcd: Option<PathBuf>,
    /// Print the counters as JSON (before the summary line).
    #[arg(long)]
    pub json: bool,
    /// One verdict per frame.
    #[arg(long, short)]
    pub verbose: bool,
}

/// `rnic gen`.
#[derive(clap::Args, Debug)]
pub struct GenArgs {
    /// Name of the top (see `rnic_hw::tops::TOPS`).
    #[arg(long)]
    pub top: String,
    /// Directory to write `<top>.v` into (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// The result of `rnic sim rx`.
#[derive(Clone, Debug)]
pub struct SimRx {
    pub run: RxRun,
    /// Per frame: "accepted", "bypass" or the drop reason, as the counters classify it by the
    /// software model (the hardware's counters are checked against these counts).
    pub verdicts: Vec<&'static str>,
    pub frames: Vec<Vec<u8>>,
}

/// Runs the frames of `file` through the verilated RX parser.
pub fn sim_rx(file: &Path, vcd: Option<&Path>) -> Result<SimRx> {
    let cap = pcap::read_file(file)?;
    let frames: Vec<Vec<u8>> = cap
        .records
        .into_iter()
        .filter(|r| r.linktype == LINKTYPE_ETHERNET && !r.data.is_empty())
        .map(|r| r.data)
        .collect();
    if frames.is_empty() {
        bail!("{}: no Ethernet frames", file.display());
    }
    let mut v = VerilatedRx::new().map_err(|e| anyhow!(e))?;
    if let Some(p) = vcd {
        v.model.trace(p).map_err(|e| anyhow!(e))?;
    }
    let s = RxStimulus {
        frames: frames.iter().map(|f| (f.clone(), false)).collect(),
        seed: 1,
        idle: 0.0,
        stall: 0.0,
    };
    let r = run::<_, VerilatedRx>(&mut v, None, &s).map_err(|e| anyhow!(e))?;
    let verdicts = frames
        .iter()
        .map(|f| match expect(f, false) {
            Ok(e) => e.reason().map_or("bypass", Reason::name),
            Err(_) => "model-error",
        })
        .collect();
    Ok(SimRx {
        run: r,
        verdicts,
        frames,
    })
}

/// `rnic sim rx`.
pub fn run_sim_rx(a: &SimRxArgs) -> Result<ExitCode> {
    let s = sim_rx(&a.file, a.vcd.as_deref())?;
    let c = s.run.counters;
    if a.verbose {
        for (i, v) in s.verdicts.iter().enumerate() {
            println!("frame {:>5}: {:>5} bytes  {v}", i + 1, s.frames[i].len());
        }
    }
    let accepted: Vec<&Vec<u8>> = s
        .frames
        .iter()
        .zip(&s.verdicts)
        .filter(|(_, v)| **v == "accepted")
        .map(|(f, _)| f)
        .collect();
    if let Some(p) = &a.out {
        write_pcap(p, accepted.iter().map(|f| f.as_slice()))?;
    }
    if let Some(p) = &a.bypass {
        write_pcap(p, s.run.bypass.iter().map(|(f, _)| f.as_slice()))?;
    }
    for (name, v) in COUNTERS.iter().zip(c) {
        if !a.json {
            println!("{name:<20} {v}");
        }
    }
    if a.json {
        let m: serde_json::Map<String, serde_json::Value> = COUNTERS
            .iter()
            .zip(c)
            .map(|(n, v)| (n.to_string(), v.into()))
            .collect();
        println!("{}", serde_json::Value::Object(m));
    }
    if let Some(p) = &a.vcd {
        println!("waveform: {}", p.display());
    }
    let dropped: u64 = c[3..].iter().sum();
    println!(
        "frames={} accepted={} dropped={} bypass={}",
        c[0], c[1], dropped, c[2]
    );
    // The hardware's counters must agree with the model's verdicts.
    let model_accepted = s.verdicts.iter().filter(|v| **v == "accepted").count() as u64;
    if model_accepted != c[1] {
        eprintln!(
            "warning: the software model accepts {model_accepted} frames, the hardware {}",
            c[1]
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn write_pcap<'a>(path: &Path, frames: impl Iterator<Item = &'a [u8]>) -> Result<()> {
    let file = std::fs::File::create(path).with_context(|| format!("{}", path.display()))?;
    let mut w = pcap::PcapWriter::new(std::io::BufWriter::new(file), LINKTYPE_ETHERNET, false)
        .with_context(|| format!("{}", path.display()))?;
    for (i, f) in frames.enumerate() {
        w.write(i as u64 * 1000, f)
            .with_context(|| format!("{}", path.display()))?;
    }
    w.finish()
        .with_context(|| format!("{}", path.display()))?
        .flush()?;
    Ok(())
}

/// `rnic gen`: writes `<DIR>/<top>.v`.
pub fn run_gen(a: &GenArgs) -> Result<ExitCode> {
    let Some(top) = rnic_hw::tops::TOPS.iter().find(|t| t.name == a.top) else {
        let names: Vec<&str> = rnic_hw::tops::TOPS.iter().map(|t| t.name).collect();
        bail!("unknown top {:?}; known tops: {}", a.top, names.join(", "));
    };
    std::fs::create_dir_all(&a.out).with_context(|| format!("{}", a.out.display()))?;
    let path = a.out.join(format!("{}.v", top.name));
    let v = (top.verilog)();
    std::fs::write(&path, &v).with_context(|| format!("{}", path.display()))?;
    println!("{} ({} lines)", path.display(), v.lines().count());
    Ok(ExitCode::SUCCESS)
}

/// `rnic bench packet`: the RX parser under Verilator on back-to-back RDMA WRITE frames (IPv4,
/// no idles, no back-pressure) with payloads of 64, 256, 1024 and 4096 bytes: input bytes per
/// cycle, latency (first input beat to first output beat) and simulated cycles per second.
pub fn bench_packet() -> Result<()> {
    println!("RX parser (Verilator), back-to-back RC RDMA_WRITE_ONLY frames, IPv4");
    println!(
        "{:>8} {:>7} {:>10} {:>9} {:>13} {:>15}",
        "payload", "frames", "bytes/cyc", "latency", "cycles", "cycles/s"
    );
    for payload in [64usize, 256, 1024, 4096] {
        let mut rng = Rng::new(payload as u64);
        let n = (2_000_000 / (payload + 80)).clamp(200, 5000);
        let frames: Vec<(Vec<u8>, bool)> = (0..n)
            .map(|_| {
                let mut d = rnic_cosim::icrc::random_frame(&mut rng, 0);
                d.bth.opcode = 0x0A;
                d.ext = rnic_wire::ext::ExtHeaders {
                    reth: Some(rnic_wire::ext::Reth {
                        va: rng.next_u64(),
                        rkey: 7,
                        dma_len: payload as u32,
                    }),
                    ..Default::default()
                };
                d.ip = rnic_wire::IpRepr::V4(rnic_wire::ipv4::Ipv4Repr {
                    src: [10, 0, 0, 1].into(),
                    dst: [10, 0, 0, 2].into(),
                    dscp: 26,
                    ecn: 2,
                    ttl: 64,
                    ident: 0,
                    dont_frag: true,
                });
                d.payload = (0..payload).map(|i| i as u8).collect();
                Ok((d.build()?, false))
            })
            .collect::<Result<_, rnic_wire::BuildError>>()?;
        let s = RxStimulus {
            frames,
            seed: 1,
            idle: 0.0,
            stall: 0.0,
        };
        let mut v = VerilatedRx::new().map_err(|e| anyhow!(e))?;
        let t = Instant::now();
        let r = run::<_, VerilatedRx>(&mut v, None, &s).map_err(|e| anyhow!(e))?;
        let secs = t.elapsed().as_secs_f64();
        if r.counters[1] != n as u64 {
            bail!("{} of {n} frames accepted", r.counters[1]);
        }
        println!(
            "{:>8} {:>7} {:>10.3} {:>9} {:>13} {:>15.0}",
            payload,
            n,
            r.in_bytes as f64 / r.in_cycles as f64,
            r.latency.unwrap_or(0),
            r.cycles,
            r.cycles as f64 / secs
        );
    }
    println!("TX builder: not built yet (see issue 4)");
    Ok(())
}
