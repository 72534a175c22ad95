//! `rnic`: the command-line tool of the rnic RoCEv2 NIC.

use rnic::{bench, trace};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "rnic",
    version,
    about = "RoCEv2 RDMA NIC for FPGAs: traces, simulation, builds"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Decode, check and repair RoCEv2 packet captures (pcap, pcapng).
    #[command(subcommand)]
    Trace(TraceCmd),
    /// Run simulations: the hardware under Verilator, the network simulator with DCQCN.
    #[command(subcommand)]
    Sim(SimCmd),
    /// Write the Verilog of a hardware top.
    Gen(rnic::packet_cli::GenArgs),
    /// Build a bitstream for a board (yosys, nextpnr-ecp5, ecppack) with a resource and timing
    /// report, or synthesize and place the core alone.
    Build(rnic::fpga::BuildArgs),
    /// Load a bitstream onto a board with openFPGALoader.
    Flash(rnic::fpga::FlashArgs),
    /// The register map and descriptor formats (defined once in hw/regmap) as documents.
    Regs(rnic::regs_cli::RegsArgs),
    /// Measure performance figures.
    Bench(bench::BenchArgs),
    /// Real-kernel harness: soft-RoCE peers and VFIO in QEMU guests.
    Qemu(rnic::qemu_cli::QemuArgs),
    /// ibv_rc_pingpong / ibv_ud_pingpong on our NIC (the model) through a network interface.
    Pingpong(rnic::tools_cli::PingpongArgs),
    /// perftest's ib_{send,write,read,atomic}_bw on our NIC (the model) through an interface.
    Perf(rnic::tools_cli::PerfArgs),
}

#[derive(Subcommand)]
enum SimCmd {
    /// Run a capture through the hardware ICRC checker (the RX engine) under Verilator.
    Icrc(rnic::sim::SimIcrcArgs),
    /// Run a capture through the hardware receive parser under Verilator: header channel,
    /// payload, bypass, drop counters.
    Rx(rnic::packet_cli::SimRxArgs),
    /// Run a capture through the hardware receive parser and transmit builder under Verilator
    /// (receive then transmit); write the rebuilt frames to a pcap.
    Loopback(rnic::packet_cli::SimLoopbackArgs),
    /// Send a capture's frames through the raw transmit ring of the simulated host interface
    /// (Verilator), loop them back through the receive parser to the raw receive ring, and
    /// write what the driver received. Last line `frames=N sent=N received=N identical=N`;
    /// exit 0 when every frame came back identical (one under 60 bytes zero-padded to 60).
    Raw(rnic::raw_cli::SimRawArgs),
    /// Two hardware NICs under Verilator running RDMA WRITE, READ and SEND to each other
    /// through a lossy cable: goodput, latency, retransmissions, a pcap and a plot. Last line
    /// `messages=N delivered=N intact=N goodput_bpc=X`; exit 0 when all were delivered intact.
    Rdma(rnic::rdma_cli::SimRdmaArgs),
    /// Packet-level network scenario with DCQCN senders, an ECN-marking switch and CNPs.
    Net(rnic_netsim::cli::NetArgs),
    /// Apply a timed list of events to one DCQCN reaction point; print its state as CSV.
    Dcqcn(rnic_netsim::cli::DcqcnArgs),
}

#[derive(Subcommand)]
enum TraceCmd {
    /// One line per frame: layers, opcode, QP, PSN, extension headers, ICRC verdict.
    Show {
        #[command(flatten)]
        opts: trace::ShowOpts,
        /// Capture files (pcap or pcapng).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Verify the ICRC and IPv4 header checksum of every RoCEv2 frame. Exit 0 when all pass,
    /// 1 when any fails, 2 when an input cannot be read.
    Check {
        #[command(flatten)]
        opts: trace::CheckOpts,
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Replay a capture's RC requests into our responder and compare our responses with the
    /// captured ones. Exit 0 when every response matches, 1 when one does not, 2 on bad input.
    Replay(rnic::replay_cli::ReplayArgs),
    /// Recompute the ICRC and IPv4 header checksum of every RoCEv2 frame; copy the others.
    Fix {
        #[command(flatten)]
        opts: trace::PortOpts,
        /// Input capture.
        input: PathBuf,
        /// Output pcap (nanosecond timestamps).
        output: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Trace(TraceCmd::Show { opts, files }) => trace::show(&opts, &files),
        Cmd::Trace(TraceCmd::Check { opts, files }) => trace::check(&opts, &files),
        Cmd::Trace(TraceCmd::Fix {
            opts,
            input,
            output,
        }) => trace::fix(&opts, &input, &output),
        Cmd::Trace(TraceCmd::Replay(args)) => rnic::replay_cli::run(&args),
        Cmd::Sim(SimCmd::Icrc(args)) => rnic::sim::run(&args),
        Cmd::Sim(SimCmd::Rx(args)) => rnic::packet_cli::run_sim_rx(&args),
        Cmd::Sim(SimCmd::Loopback(args)) => rnic::packet_cli::run_sim_loopback(&args),
        Cmd::Sim(SimCmd::Raw(args)) => rnic::raw_cli::run_sim_raw(&args),
        Cmd::Sim(SimCmd::Rdma(args)) => rnic::rdma_cli::run(&args),
        Cmd::Gen(args) => rnic::packet_cli::run_gen(&args),
        Cmd::Build(args) => rnic::fpga::run_build(&args),
        Cmd::Flash(args) => rnic::fpga::run_flash(&args),
        Cmd::Sim(SimCmd::Net(args)) => rnic_netsim::cli::run_net(&args).map(|()| ExitCode::SUCCESS),
        Cmd::Sim(SimCmd::Dcqcn(args)) => {
            rnic_netsim::cli::run_dcqcn(&args).map(|()| ExitCode::SUCCESS)
        }
        Cmd::Bench(args) => bench::run(&args),
        Cmd::Regs(args) => rnic::regs_cli::run(&args),
        Cmd::Qemu(args) => rnic::qemu_cli::run(&args),
        Cmd::Pingpong(args) => rnic::tools_cli::run_pingpong(&args),
        Cmd::Perf(args) => rnic::tools_cli::run_perf(&args),
    };
    match result {
        Ok(code) => code,
        // A reader that stops early (`rnic trace show f | head`) is not an error.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
