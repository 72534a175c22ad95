//! `rnic bench`: performance figures, printed as ratios and per-byte costs so that the
//! machine's noise does not blur them.

use std::hint::black_box;
use std::net::Ipv4Addr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use rnic_wire::bth::BthRepr;
use rnic_wire::ext::{ExtHeaders, Reth};
use rnic_wire::ipv4::Ipv4Repr;
use rnic_wire::udp::UdpRepr;
use rnic_wire::{EthRepr, IpRepr, MacAddr, RoceFrame, icrc};

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// What to measure.
    #[arg(value_enum, default_value = "all")]
    pub what: What,
    /// Payload bytes of each RDMA WRITE ONLY frame of the ICRC benchmark (4 KiB gives
    /// 4170-byte frames with IPv4, UDP, BTH, RETH and ICRC).
    #[arg(long, default_value_t = 4096)]
    pub payload: usize,
    /// Measurement rounds; the best round of each side is reported.
    #[arg(long, default_value_t = 30)]
    pub rounds: u32,
    /// RDMA WRITEs of 64 KiB per run of the transport benchmark.
    #[arg(long, default_value_t = 5000)]
    pub messages: usize,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    All,
    /// Software ICRC against plain crc32fast.
    Icrc,
    /// Network simulator: 16:1 incast at 100 Gb/s over 10 ms of simulated time.
    Net,
    /// The hardware ICRC engine under Verilator: bytes per cycle (its speed against rust-hdl's
    /// loop is `sim`'s).
    IcrcHw,
    /// The hardware receive parser under Verilator: bytes per cycle, cycles per second.
    Packet,
    /// Two model NICs (rnic-transport) on one netsim cable: 64 KiB RDMA WRITEs at path MTU
    /// 1024, lossless and with 1 % loss; simulated frames and messages per wall second.
    Transport,
    /// The raw Ethernet path under Verilator: driver rings, DMA, loopback at 64 and 1514 bytes.
    Raw,
    /// The hardware responder's WRITE path under Verilator: bytes per cycle into host memory
    /// at path MTU 1024 and 4096, and a small WRITE's ACK latency in cycles.
    Responder,
    /// The hardware requester under Verilator: payload bytes per cycle of 64 KiB WRITEs at
    /// path MTU 1024 and 4096, cycles per 64-byte SEND and per 64 KiB READ request.
    Requester,
    /// Two hardware NICs (the whole RC transport) under Verilator: goodput of WRITE, READ and
    /// SEND at path MTU 1024 and 4096, a small WRITE's latency in clocks, goodput against loss.
    Rdma,
    /// Simulation speed of the packet layer's tops (ICRC engine, receive parser, transmit
    /// builder, packet loopback): Verilator and rust-hdl cycles per second and their ratio;
    /// the last line is `top=packet_loopback verilator_cps=X rusthdl_cps=Y ratio=Z`.
    Sim,
}

pub fn run(args: &BenchArgs) -> Result<ExitCode> {
    if matches!(args.what, What::All | What::Icrc) {
        bench_icrc(args.payload, args.rounds)?;
    }
    if matches!(args.what, What::All | What::IcrcHw) {
        bench_icrc_hw()?;
    }
    if matches!(args.what, What::All | What::Packet) {
        crate::packet_cli::bench_packet()?;
    }
    if matches!(args.what, What::All | What::Net) {
        rnic_netsim::cli::bench_net()?;
    }
    if matches!(args.what, What::All | What::Raw) {
        crate::raw_cli::bench_raw()?;
    }
    if matches!(args.what, What::All | What::Transport) {
        bench_transport(args.messages, args.rounds.min(3))?;
    }
    if matches!(args.what, What::All | What::Responder) {
        crate::responder_bench::bench_responder()?;
    }
    if matches!(args.what, What::All | What::Requester) {
        crate::requester_bench::bench_requester()?;
    }
    if matches!(args.what, What::All | What::Rdma) {
        crate::rdma_bench::bench_rdma()?;
    }
    if matches!(args.what, What::All | What::Sim) {
        crate::bench_sim::bench_sim()?;
    }
    Ok(ExitCode::SUCCESS)
}

/// RDMA WRITE ONLY frames (IPv4, no tag) with `payload` bytes each, all different.
fn frames(payload: usize, count: usize) -> Result<Vec<Vec<u8>>> {
    if payload > 9000 {
        bail!("--payload {payload}: at most 9000 (a jumbo frame)");
    }
    (0..count)
        .map(|i| {
            let f = RoceFrame {
                eth: EthRepr {
                    dst: MacAddr([2, 0, 0, 0, 0, 2]),
                    src: MacAddr([2, 0, 0, 0, 0, 1]),
                    vlan: None,
                },
                ip: IpRepr::V4(Ipv4Repr {
                    src: Ipv4Addr::new(10, 0, 0, 1),
                    dst: Ipv4Addr::new(10, 0, 0, 2),
                    dscp: 26,
                    ecn: 2,
                    ttl: 64,
                    ident: i as u16,
                    dont_frag: true,
                }),
                udp: UdpRepr {
                    src_port: 0xC000,
                    dst_port: 4791,
                    checksum: 0,
                },
                bth: BthRepr {
                    opcode: 0x0A,
                    solicited: false,
                    mig_req: false,
                    tver: 0,
                    pkey: 0xFFFF,
                    fecn: false,
                    becn: false,
                    dest_qp: 0x11,
                    ack_req: true,
                    psn: i as u32,
                    resv6: 0,
                    resv7: 0,
                },
                ext: ExtHeaders {
                    reth: Some(Reth {
                        va: 0x1000,
                        rkey: 0x1234,
                        dma_len: payload as u32,
                    }),
                    ..Default::default()
                },
                payload: (0..payload).map(|j| (i * 31 + j * 7) as u8).collect(),
            };
            Ok(f.build()?)
        })
        .collect()
}

/// Best time of `rounds` rounds of `f` over every frame, `reps` times.
fn best(rounds: u32, reps: usize, frames: &[Vec<u8>], f: impl Fn(&[u8]) -> u32) -> Duration {
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            let mut acc = 0u32;
            for _ in 0..reps {
                for fr in frames {
                    acc ^= f(black_box(fr));
                }
            }
            black_box(acc);
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn bench_icrc(payload: usize, rounds: u32) -> Result<()> {
    let frames = frames(payload, 64)?;
    let size = frames[0].len();
    let reps = (64 << 20) / (size * frames.len()).max(1) + 1; // about 64 MiB per round
    let bytes = (reps * frames.len() * size) as f64;
    let icrc_of = |f: &[u8]| icrc::compute(&f[14..], 14).unwrap_or(0);
    let plain = |f: &[u8]| crc32fast::hash(f);
    // Warm up both, then interleave the rounds so drifting clocks hit both sides alike.
    best(2, reps, &frames, icrc_of);
    best(2, reps, &frames, plain);
    let (mut t_icrc, mut t_plain) = (Duration::MAX, Duration::MAX);
    for _ in 0..rounds.max(1) {
        t_icrc = t_icrc.min(best(1, reps, &frames, icrc_of));
        t_plain = t_plain.min(best(1, reps, &frames, plain));
    }
    let gbps = |t: Duration| bytes / t.as_secs_f64() / 1e9;
    println!(
        "icrc: {size}-byte frames, {} frames per round, best of {rounds} rounds",
        reps * frames.len()
    );
    println!(
        "icrc::compute  {:>7.2} GB/s  {:.3} ns/byte",
        gbps(t_icrc),
        t_icrc.as_secs_f64() * 1e9 / bytes
    );
    println!(
        "crc32fast::hash {:>6.2} GB/s  {:.3} ns/byte",
        gbps(t_plain),
        t_plain.as_secs_f64() * 1e9 / bytes
    );
    println!(
        "icrc_vs_crc32fast_ratio={:.3}",
        t_plain.as_secs_f64() / t_icrc.as_secs_f64()
    );
    Ok(())
}

/// The ICRC engine: simulation speed in both simulators on the same back-to-back frames, and
/// the bytes per cycle it sustains.
fn bench_icrc_hw() -> Result<()> {
    use rnic_cosim::axis::Rng;
    use rnic_cosim::dut::VerilatedDut;
    use rnic_cosim::icrc::{random_frame, size_tier};
    use rnic_cosim::lockstep::{Stimulus, run_one};

    let mut rng = Rng::new(0xBE4C);
    let full: Vec<Vec<u8>> = (0..400)
        .map(|_| {
            let cap = size_tier(&mut rng);
            random_frame(&mut rng, cap).build().expect("valid")
        })
        .collect();
    let stim = |frames: Vec<(Vec<u8>, u64)>| Stimulus {
        frames,
        seed: 1,
        idle: 0.0,
        stall: 0.0,
    };
    let rx = stim(full.iter().map(|f| (f.clone(), 0)).collect());
    let tx = stim(
        full.iter()
            .map(|f| (f[..f.len() - 4].to_vec(), 0))
            .collect(),
    );

    let mut v = VerilatedDut::new("icrc_rx").map_err(anyhow::Error::msg)?;
    let r = run_one(&mut v, &rx);
    let mut vt = VerilatedDut::new("icrc_tx").map_err(anyhow::Error::msg)?;
    let rt = run_one(&mut vt, &tx);

    println!(
        "icrc-hw: {} frames, {} bytes, back to back",
        rx.frames.len(),
        r.in_bytes
    );
    println!("(Verilator against rust-hdl's simulate() loop: rnic bench sim)");
    let beats = |s: &Stimulus| -> u64 {
        s.frames
            .iter()
            .map(|(f, _)| f.len().div_ceil(8) as u64)
            .sum()
    };
    println!(
        "rx: {} input beats in {} cycles: bytes_per_cycle={:.3} (ideal {:.3}: 8 except last beats)",
        beats(&rx),
        r.in_cycles,
        r.in_bytes as f64 / r.in_cycles as f64,
        r.in_bytes as f64 / beats(&rx) as f64
    );
    println!(
        "tx: {} input beats in {} cycles: bytes_per_cycle={:.3} (a frame whose ICRC needs one more beat holds the input a cycle)",
        beats(&tx),
        rt.in_cycles,
        rt.in_bytes as f64 / rt.in_cycles as f64
    );
    Ok(())
}

/// One run of the transport benchmark.
struct TransportRun {
    run: rnic_netsim::rdma::PairRun,
    wall: Duration,
}

/// Two model NICs on a 10 Gb/s, 1 us cable: host 0 WRITEs `messages` times 64 KiB (path MTU
/// 1024, 8 outstanding) to host 1, over a lossless link and one losing 1 % of frames each way.
/// Prints the simulated work done per wall second: frames delivered to the NICs (data and
/// ACKs, retransmissions included) and messages completed, the ratio of lossy to lossless, and
/// the NICs' counters of the lossy run.
fn bench_transport(messages: usize, rounds: u32) -> Result<()> {
    use rnic_netsim::link::LinkConfig;
    use rnic_netsim::rdma::{Op, WcStatus, Workload, run_pair};

    const MSG: u32 = 64 << 10;
    const TARGETS: u64 = 16;
    if messages == 0 {
        bail!("--messages must be at least 1");
    }
    let mut writer = Workload::new(
        (0..messages)
            .map(|i| Op::write((i as u64 % TARGETS) * u64::from(MSG), MSG))
            .collect(),
    );
    writer.exposed_len = TARGETS * u64::from(MSG);
    writer.max_outstanding = 8;
    writer.keep_data = false;
    let mut idle = Workload::new(Vec::new());
    idle.exposed_len = 8;
    idle.recv_slots = 1;
    idle.recv_len = 8;
    idle.keep_data = false;

    let one = |loss: f64| -> Result<TransportRun> {
        let mut link = LinkConfig::new(10_000_000_000, 1000);
        link.loss = loss;
        let mut best: Option<TransportRun> = None;
        for _ in 0..rounds.max(1) {
            let t = Instant::now();
            let run = run_pair(1, link, writer.clone(), idle.clone(), 60_000_000_000)?;
            let wall = t.elapsed();
            let sent = &run.hosts[0].sent;
            if !run.finished
                || sent.len() != messages
                || sent.iter().any(|c| c.status != WcStatus::Success)
            {
                bail!(
                    "transport bench at loss {loss}: {} of {messages} WRITEs completed successfully",
                    sent.iter()
                        .filter(|c| c.status == WcStatus::Success)
                        .count()
                );
            }
            if best.as_ref().is_none_or(|b| wall < b.wall) {
                best = Some(TransportRun { run, wall });
            }
        }
        Ok(best.expect("at least one round"))
    };
    let clean = one(0.0)?;
    let lossy = one(0.01)?;

    println!(
        "transport: 2 model NICs, 10 Gb/s 1 us cable, {messages} RDMA WRITEs of 64 KiB \
         (path MTU 1024, 8 outstanding), best of {} rounds",
        rounds.max(1)
    );
    let rates = |name: &str, r: &TransportRun| -> (f64, f64) {
        let s = r.wall.as_secs_f64();
        let frames = r.run.net.delivered as f64;
        let (fps, mps) = (frames / s, messages as f64 / s);
        println!(
            "{name:<9} {:>8.3} ms simulated, {:>7} frames ({} lost, {} retransmitted) in \
             {:.3} s wall: {fps:>10.0} frames/s {mps:>8.0} messages/s; goodput {:.2} Gb/s simulated",
            r.run.sim_ns as f64 / 1e6,
            r.run.net.delivered,
            r.run.net.lost,
            r.run.hosts[0].counters.req_retransmitted,
            s,
            messages as f64 * f64::from(MSG) * 8.0 / r.run.sim_ns as f64,
        );
        (fps, mps)
    };
    let (cf, cm) = rates("lossless", &clean);
    let (lf, lm) = rates("loss 1%", &lossy);
    println!(
        "transport_lossy_vs_lossless_ratio={:.3} (messages/s; frames/s {:.3})",
        lm / cm,
        lf / cf
    );
    println!("counters of the 1% loss run (writer, target):");
    let (a, b) = (&lossy.run.hosts[0].counters, &lossy.run.hosts[1].counters);
    let w = a.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for ((name, x), (_, y)) in a.iter().zip(b.iter()) {
        println!("  {name:<w$} {x:>9} {y:>9}");
    }
    Ok(())
}
