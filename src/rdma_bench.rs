//! `rnic bench rdma`: two hardware NICs (the `rc_nic` top under Verilator, no stalls) on a
//! cable of 200 clocks, one posting and the other answering: goodput of 64 KiB WRITEs, READs
//! and SENDs at path MTU 1024 and 4096 (message bytes per clock against the 8 of a beat),
//! eight outstanding; the latency of an 8-byte WRITE from post to completion on a cable of no
//! delay, one at a time; goodput of 16 KiB WRITEs against the cable's loss rate, plotted.

use std::path::Path;

use anyhow::Result;
use rnic_driver::rc_nic_sim::RcNicSim;
use rnic_driver::rc_pair::{PairConfig, PairReport, run_pair};
use rnic_netsim::plot::{self, Panel, Series};
use rnic_transport::verbs::{Mtu, WrOpcode};

fn run(cfg: &PairConfig) -> Result<PairReport> {
    let nics = [
        RcNicSim::verilated(cfg.seed, 0.0).map_err(anyhow::Error::msg)?,
        RcNicSim::verilated(cfg.seed + 1, 0.0).map_err(anyhow::Error::msg)?,
    ];
    let r = run_pair(nics, cfg, |_| {}).map_err(anyhow::Error::msg)?;
    if !r.errors.is_empty() || r.intact != r.messages {
        anyhow::bail!(
            "{} of {} messages intact: {:?}",
            r.intact,
            r.messages,
            &r.errors[..r.errors.len().min(3)]
        );
    }
    Ok(r)
}

fn one_way(op: usize, mtu: Mtu, len: u32, messages: usize) -> PairConfig {
    let mut ops = [false; 3];
    ops[op] = true;
    PairConfig {
        messages,
        max_len: len,
        len: Some(len),
        mtu,
        ops,
        one_way: true,
        window: 64,
        ..Default::default()
    }
}

pub fn bench_rdma() -> Result<()> {
    println!("rdma: two rc_nic tops under Verilator, a cable of 200 clocks, one NIC posting");
    for mtu in [Mtu::M1024, Mtu::M4096] {
        for (op, name) in [(0, "WRITE"), (1, "READ"), (2, "SEND")] {
            let r = run(&one_way(op, mtu, 65536, 32))?;
            let g = r.goodput_bpc();
            println!(
                "  {name:5} 64 KiB x {} at MTU {}: {} clocks, goodput {g:.3} bytes/clock ({:.1} % \
                 of 8)",
                r.messages,
                mtu.bytes(),
                r.cycles,
                100.0 * g / 8.0
            );
        }
    }
    let mut cfg = one_way(0, Mtu::M1024, 8, 24);
    cfg.outstanding = 1;
    cfg.latency = 0;
    let r = run(&cfg)?;
    let mut lat = r.latencies(Some(WrOpcode::RdmaWrite));
    lat.sort_unstable();
    println!(
        "  8-byte WRITE, one at a time, cable of 0 clocks: post to completion median {} clocks \
         (min {}, max {})",
        lat[lat.len() / 2],
        lat[0],
        lat[lat.len() - 1]
    );
    let mut points = Vec::new();
    for loss in [0.0, 0.001, 0.003, 0.01, 0.03, 0.1] {
        let mut cfg = one_way(0, Mtu::M1024, 16384, 32);
        cfg.loss = loss;
        cfg.seed = 5;
        let r = run(&cfg)?;
        println!(
            "  loss {:5.1} %: 16 KiB WRITEs at MTU 1024: goodput {:.3} bytes/clock, {} sent again, \
             {} ACK timeouts",
            100.0 * loss,
            r.goodput_bpc(),
            r.retransmitted(),
            r.counters[0].expiries
        );
        points.push((100.0 * loss, r.goodput_bpc()));
    }
    let dir = Path::new("target/bench");
    std::fs::create_dir_all(dir)?;
    let svg = dir.join("rdma_loss.svg");
    plot::write(
        &svg,
        "rnic bench rdma: goodput against loss (two Verilator NICs, 16 KiB WRITEs, MTU 1024)",
        &[Panel {
            title: "goodput".into(),
            x_label: "frames lost (%)".into(),
            y_label: "bytes / clock".into(),
            series: vec![Series {
                name: "WRITE".into(),
                points,
            }],
        }],
    )?;
    println!("  plot: {}", svg.display());
    Ok(())
}
