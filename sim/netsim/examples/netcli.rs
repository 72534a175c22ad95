//! A stand-in for the `rnic sim` subcommands while developing the simulator:
//! `cargo run --release -p rnic-netsim --example netcli -- net --scenario two-flow`.

use clap::{Parser, Subcommand};
use rnic_netsim::cli::{DcqcnArgs, NetArgs, bench_net, run_dcqcn, run_net};

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a network scenario.
    Net(NetArgs),
    /// Drive one reaction point with an events file.
    Dcqcn(DcqcnArgs),
    /// The simulator benchmark.
    Bench,
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().cmd {
        Cmd::Net(a) => run_net(&a),
        Cmd::Dcqcn(a) => run_dcqcn(&a),
        Cmd::Bench => bench_net(),
    }
}
