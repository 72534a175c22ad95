//! `rnic sim rx`, `rnic sim loopback`, `rnic gen` and `rnic bench packet`: the hardware receive
//! parser and the receive-then-transmit loopback under Verilator on captures, Verilog of a named
//! top, and the packet layer's throughput figures.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use rnic_cosim::axis::Rng;
use rnic_cosim::packet_dut::{RxRun, RxStimulus, VerilatedRx, run};
use rnic_cosim::rx_model::{Expect, expect, record_of};
use rnic_cosim::tx_dut::{
    LbStimulus, TxStimulus, VerilatedLoopback, VerilatedTx, lb_counter_names, run_loopback, run_tx,
};
use rnic_hw::rx_parser::{COUNTERS, Reason};
use rnic_wire::RocePacket;
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

/// `rnic sim loopback`.
#[derive(clap::Args, Debug)]
pub struct SimLoopbackArgs {
    /// Capture (pcap or pcapng) of Ethernet frames without FCS.
    pub input: PathBuf,
    /// Where to write the rebuilt frames (pcap), in the order they leave the builder.
    pub output: PathBuf,
    /// Write the bypassed (non-RoCEv2) frames to this pcap.
    #[arg(long, value_name = "BYPASS.pcap")]
    pub bypass: Option<PathBuf>,
    /// Write a VCD waveform of the run.
    #[arg(long, value_name = "PATH")]
    pub vcd: Option<PathBuf>,
    /// Print the counters as JSON (before the summary line).
    #[arg(long)]
    pub json: bool,
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
    /// Per frame: "accepted", "bypass" or the drop reason, as the hardware counted it.
    pub verdicts: Vec<&'static str>,
    /// Per frame, the same by the software model.
    pub model: Vec<&'static str>,
    pub frames: Vec<Vec<u8>>,
}

/// Runs the frames of `file` through the verilated RX parser.
pub fn sim_rx(file: &Path, vcd: Option<&Path>) -> Result<SimRx> {
    let frames = read_frames(file)?;
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
    let model = frames
        .iter()
        .map(|f| match expect(f, false) {
            Ok(e) => e.reason().map_or("bypass", Reason::name),
            Err(_) => "model-error",
        })
        .collect();
    let verdicts = r.verdicts.iter().map(|&k| verdict_name(k)).collect();
    Ok(SimRx {
        run: r,
        verdicts,
        model,
        frames,
    })
}

/// The verdict a counter (by its index in [`COUNTERS`]) stands for.
fn verdict_name(k: usize) -> &'static str {
    if COUNTERS[k] == "cnt_bypass" {
        return "bypass";
    }
    std::iter::once(Reason::Accept)
        .chain(Reason::DROPS)
        .find(|r| r.counter() == COUNTERS[k])
        .map_or("unknown", Reason::name)
}

/// `rnic sim rx`.
pub fn run_sim_rx(a: &SimRxArgs) -> Result<ExitCode> {
    let s = sim_rx(&a.file, a.vcd.as_deref())?;
    let c = s.run.counters;
    if a.verbose {
        for (i, f) in s.frames.iter().enumerate() {
            let hw = s.verdicts.get(i).copied().unwrap_or("(no verdict)");
            let note = if s.model[i] == hw {
                String::new()
            } else {
                format!("  (software model: {})", s.model[i])
            };
            println!("frame {:>5}: {:>5} bytes  {hw}{note}", i + 1, f.len());
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
    // The hardware's verdicts must agree with the model's, frame by frame.
    let differ = s
        .frames
        .iter()
        .enumerate()
        .filter(|(i, _)| s.verdicts.get(*i) != s.model.get(*i))
        .count();
    if differ > 0 || s.verdicts.len() != s.frames.len() {
        eprintln!(
            "warning: the hardware and the software model disagree on {differ} of {} frames",
            s.frames.len()
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// Ethernet frames of a capture, or an error naming the file.
fn read_frames(file: &Path) -> Result<Vec<Vec<u8>>> {
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
    Ok(frames)
}

/// `rnic sim loopback`: the frames of a capture through the verilated receive parser and
/// transmit builder (top `packet_loopback`); the rebuilt frames to a pcap. Every rebuilt frame
/// is compared with the software model's rebuild of the same parsed frame (its pad bytes zero)
/// and with the received frame cut to its IP length. Exit 1 on a difference from the model.
pub fn run_sim_loopback(a: &SimLoopbackArgs) -> Result<ExitCode> {
    let frames = read_frames(&a.input)?;
    let mut v = VerilatedLoopback::new().map_err(|e| anyhow!(e))?;
    if let Some(p) = &a.vcd {
        v.model.trace(p).map_err(|e| anyhow!(e))?;
    }
    let s = LbStimulus {
        frames: frames.iter().map(|f| (f.clone(), false)).collect(),
        seed: 1,
        idle: 0.0,
        stall: 0.0,
    };
    let r = run_loopback::<_, VerilatedLoopback>(&mut v, None, &s).map_err(|e| anyhow!(e))?;
    write_pcap(&a.output, r.frames.iter().map(|(f, _)| f.as_slice()))?;
    if let Some(p) = &a.bypass {
        write_pcap(p, r.bypass.iter().map(|(f, _)| f.as_slice()))?;
    }
    // What the model expects back, in order.
    let mut want = Vec::new();
    for f in &frames {
        if let Ok(Expect::Accept(..)) = expect(f, false) {
            let p = RocePacket::parse(f)?;
            let l3 = p.eth.header_len();
            want.push((p.repr().build()?, f[..l3 + p.ip_packet().len()].to_vec()));
        }
    }
    let same_as_model = r
        .frames
        .iter()
        .zip(&want)
        .filter(|((got, bad), (m, _))| !bad && got == m)
        .count();
    let identical = r
        .frames
        .iter()
        .zip(&want)
        .filter(|((got, _), (_, orig))| got == orig)
        .count();
    let names = lb_counter_names();
    if a.json {
        let m: serde_json::Map<String, serde_json::Value> = names
            .iter()
            .zip(r.counters)
            .map(|(n, v)| (n.clone(), v.into()))
            .collect();
        println!("{}", serde_json::Value::Object(m));
    } else {
        for (name, v) in names.iter().zip(r.counters) {
            println!("{name:<20} {v}");
        }
    }
    if let Some(p) = &a.vcd {
        println!("waveform: {}", p.display());
    }
    println!(
        "latency {} cycles (first input beat to first rebuilt beat); {} cycles; wrote {}",
        r.latency.map_or("-".to_string(), |l| l.to_string()),
        r.cycles,
        a.output.display()
    );
    let c = r.counters;
    let dropped: u64 = c[3..12].iter().sum();
    println!(
        "frames={} accepted={} dropped={} bypass={} rebuilt={} identical={}",
        c[0],
        c[1],
        dropped,
        c[2],
        r.frames.len(),
        identical
    );
    if same_as_model != want.len() || r.frames.len() != want.len() {
        eprintln!(
            "error: {} of {} rebuilt frames equal the software model's rebuild",
            same_as_model,
            want.len()
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
    let Some(top) = rnic_hw::tops::find(&a.top) else {
        let names = rnic_hw::tops::names();
        bail!("unknown top {:?}; known tops: {}", a.top, names.join(", "));
    };
    std::fs::create_dir_all(&a.out).with_context(|| format!("{}", a.out.display()))?;
    let path = a.out.join(format!("{}.v", top.name));
    let v = (top.verilog)();
    std::fs::write(&path, &v).with_context(|| format!("{}", path.display()))?;
    println!("{} ({} lines)", path.display(), v.lines().count());
    Ok(ExitCode::SUCCESS)
}

/// A back-to-back benchmark frame: RC RDMA_WRITE_ONLY over IPv4 with `payload` bytes.
pub(crate) fn bench_frame(rng: &mut Rng, payload: usize) -> Result<Vec<u8>> {
    let mut d = rnic_cosim::icrc::random_frame(rng, 0);
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
    Ok(d.build()?)
}

const BENCH_PAYLOADS: [usize; 4] = [64, 256, 1024, 4096];

fn bench_count(payload: usize) -> usize {
    (2_000_000 / (payload + 80)).clamp(200, 5000)
}

fn bench_header() {
    println!(
        "{:>8} {:>7} {:>10} {:>9} {:>13} {:>15}",
        "payload", "frames", "bytes/cyc", "latency", "cycles", "cycles/s"
    );
}

/// `rnic bench packet`: the RX parser and the TX builder under Verilator on back-to-back RDMA
/// WRITE frames (IPv4, no idles, no back-pressure) with payloads of 64, 256, 1024 and 4096
/// bytes: bytes per cycle (RX: input side; TX: output side, ICRC included), latency in cycles
/// (RX: first input beat to first output beat; TX: first header taken to first output beat)
/// and simulated cycles per second.
pub fn bench_packet() -> Result<()> {
    println!("RX parser (Verilator), back-to-back RC RDMA_WRITE_ONLY frames, IPv4");
    bench_header();
    for payload in BENCH_PAYLOADS {
        let mut rng = Rng::new(payload as u64);
        let n = bench_count(payload);
        let frames = (0..n)
            .map(|_| Ok((bench_frame(&mut rng, payload)?, false)))
            .collect::<Result<Vec<_>>>()?;
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
    println!("TX builder (Verilator), the same frames from header words and payloads");
    bench_header();
    for payload in BENCH_PAYLOADS {
        let mut rng = Rng::new(payload as u64);
        let n = bench_count(payload);
        let mut want = Vec::with_capacity(n);
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            let f = bench_frame(&mut rng, payload)?;
            let p = RocePacket::parse(&f)?;
            items.push((record_of(&p), p.payload().to_vec()));
            want.push(f);
        }
        let s = TxStimulus {
            items,
            seed: 1,
            idle: 0.0,
            stall: 0.0,
            bad_beat: Vec::new(),
        };
        let mut v = VerilatedTx::new().map_err(|e| anyhow!(e))?;
        let t = Instant::now();
        let r = run_tx::<_, VerilatedTx>(&mut v, None, &s).map_err(|e| anyhow!(e))?;
        let secs = t.elapsed().as_secs_f64();
        let good = r
            .frames
            .iter()
            .zip(&want)
            .filter(|((g, bad), w)| !bad && g == *w)
            .count();
        if good != n {
            bail!("{good} of {n} frames built as the software model builds them");
        }
        println!(
            "{:>8} {:>7} {:>10.3} {:>9} {:>13} {:>15.0}",
            payload,
            n,
            r.out_bytes as f64 / r.out_cycles as f64,
            r.latency.unwrap_or(0),
            r.cycles,
            r.cycles as f64 / secs
        );
    }
    Ok(())
}
