//! `rnic bench sim`: how fast the packet layer's tops simulate, under Verilator and in
//! rust-hdl's own `simulate()` loop, on the same back-to-back frames; cycles per second of
//! each and their ratio. Each run also checks that the top did its work (every frame out as
//! the software model says), so a broken model cannot post a fast figure.

use std::time::Instant;

use anyhow::{Result, anyhow, bail};
use rnic_cosim::axis::{OutFrame, Rng};
use rnic_cosim::dut::{HdlDut, VerilatedDut};
use rnic_cosim::icrc::{TUSER_BAD, TUSER_ROCE};
use rnic_cosim::lockstep::{Stimulus, run_one};
use rnic_cosim::packet_dut::{self, HdlRx, RxStimulus, VerilatedRx};
use rnic_cosim::rx_model::record_of;
use rnic_cosim::tx_dut::{
    HdlLoopback, HdlTx, LbStimulus, TxStimulus, VerilatedLoopback, VerilatedTx, run_loopback,
    run_tx,
};
use rnic_hw::icrc_engine::{IcrcEngine, Mode};
use rnic_wire::RocePacket;

/// Payload of the benchmark frames: RDMA WRITE ONLY over IPv4 with a RETH, 1122 bytes on
/// the wire with the ICRC (1126 with a VLAN tag, which half of them carry).
const PAYLOAD: usize = 1048;
/// Frames per Verilator run, and per rust-hdl run (which is far slower).
const V_FRAMES: usize = 2000;
const H_FRAMES: usize = 40;
/// Runs of each; the fastest counts (the machine is noisy).
const ROUNDS: usize = 3;

/// One top's figures.
struct Figures {
    top: &'static str,
    v_cps: f64,
    h_cps: f64,
}

/// A top's figures: the fastest of `ROUNDS` runs under Verilator (`v`) and in rust-hdl (`h`),
/// each returning the cycles it simulated.
fn figures(
    top: &'static str,
    v: impl FnMut() -> Result<u64>,
    h: impl FnMut() -> Result<u64>,
) -> Result<Figures> {
    Ok(Figures {
        top,
        v_cps: cps(v)?,
        h_cps: cps(h)?,
    })
}

/// The fastest of `ROUNDS` runs of `f`, which returns the cycles it simulated.
fn cps(mut f: impl FnMut() -> Result<u64>) -> Result<f64> {
    let mut best: f64 = 0.0;
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let cycles = f()?;
        best = best.max(cycles as f64 / t.elapsed().as_secs_f64());
    }
    Ok(best)
}

fn frames(n: usize) -> Result<Vec<Vec<u8>>> {
    let mut rng = Rng::new(0x5117);
    (0..n)
        .map(|_| crate::packet_cli::bench_frame(&mut rng, PAYLOAD))
        .collect()
}

/// The first `n` frames out must be good and equal the frames the software model built.
fn identical(top: &str, got: &[(Vec<u8>, bool)], want: &[Vec<u8>], n: usize) -> Result<()> {
    let same = got
        .iter()
        .zip(want)
        .filter(|((g, bad), w)| !bad && g == *w)
        .count();
    if same != n || got.len() != n {
        bail!(
            "{top} gave {} frames, {same} of the {n} sent identical to the model's",
            got.len()
        );
    }
    Ok(())
}

fn icrc(all: &[Vec<u8>]) -> Result<Figures> {
    let stim = |n: usize| Stimulus {
        frames: all[..n].iter().map(|f| (f.clone(), 0)).collect(),
        seed: 1,
        idle: 0.0,
        stall: 0.0,
    };
    // Every frame back unchanged, flagged RoCEv2 with a good ICRC.
    let check = |got: &[OutFrame], n: usize| -> Result<()> {
        let good = got
            .iter()
            .zip(all)
            .filter(|(o, w)| o.data == **w && o.tuser & TUSER_ROCE != 0 && o.tuser & TUSER_BAD == 0)
            .count();
        if good != n || got.len() != n {
            bail!(
                "icrc_rx gave {} frames, {good} of the {n} sent passed",
                got.len()
            );
        }
        Ok(())
    };
    let (sv, sh) = (stim(V_FRAMES), stim(H_FRAMES));
    figures(
        "icrc_rx",
        || {
            let mut v = VerilatedDut::new("icrc_rx").map_err(anyhow::Error::msg)?;
            let r = run_one(&mut v, &sv);
            check(&r.frames, V_FRAMES)?;
            Ok(r.cycles)
        },
        || {
            let mut h = HdlDut::new(IcrcEngine::new(Mode::Rx));
            let r = run_one(&mut h, &sh);
            check(&r.frames, H_FRAMES)?;
            Ok(r.cycles)
        },
    )
}

fn rx(all: &[Vec<u8>]) -> Result<Figures> {
    let stim = |n: usize| RxStimulus {
        frames: all[..n].iter().map(|f| (f.clone(), false)).collect(),
        seed: 1,
        idle: 0.0,
        stall: 0.0,
    };
    let check = |accepted: u64, n: usize| -> Result<()> {
        if accepted != n as u64 {
            bail!("rx_parser accepted {accepted} of {n} frames");
        }
        Ok(())
    };
    let (sv, sh) = (stim(V_FRAMES), stim(H_FRAMES));
    figures(
        "rx_parser",
        || {
            let mut v = VerilatedRx::new().map_err(|e| anyhow!(e))?;
            let r = packet_dut::run::<_, VerilatedRx>(&mut v, None, &sv).map_err(|e| anyhow!(e))?;
            check(r.counters[1], V_FRAMES)?;
            Ok(r.cycles)
        },
        || {
            let mut h = HdlRx::new();
            let r = packet_dut::run::<_, HdlRx>(&mut h, None, &sh).map_err(|e| anyhow!(e))?;
            check(r.counters[1], H_FRAMES)?;
            Ok(r.cycles)
        },
    )
}

fn tx(all: &[Vec<u8>]) -> Result<Figures> {
    let items = all
        .iter()
        .map(|f| {
            let p = RocePacket::parse(f)?;
            Ok((record_of(&p), p.payload().to_vec()))
        })
        .collect::<Result<Vec<_>>>()?;
    let stim = |n: usize| TxStimulus {
        items: items[..n].to_vec(),
        seed: 1,
        idle: 0.0,
        stall: 0.0,
        bad_beat: Vec::new(),
    };
    let check = |got: &[(Vec<u8>, bool)], n: usize| identical("tx_builder", got, all, n);
    let (sv, sh) = (stim(V_FRAMES), stim(H_FRAMES));
    figures(
        "tx_builder",
        || {
            let mut v = VerilatedTx::new().map_err(|e| anyhow!(e))?;
            let r = run_tx::<_, VerilatedTx>(&mut v, None, &sv).map_err(|e| anyhow!(e))?;
            check(&r.frames, V_FRAMES)?;
            Ok(r.cycles)
        },
        || {
            let mut h = HdlTx::new();
            let r = run_tx::<_, HdlTx>(&mut h, None, &sh).map_err(|e| anyhow!(e))?;
            check(&r.frames, H_FRAMES)?;
            Ok(r.cycles)
        },
    )
}

fn loopback(all: &[Vec<u8>]) -> Result<Figures> {
    let stim = |n: usize| LbStimulus {
        frames: all[..n].iter().map(|f| (f.clone(), false)).collect(),
        seed: 1,
        idle: 0.0,
        stall: 0.0,
    };
    let check = |got: &[(Vec<u8>, bool)], n: usize| identical("packet_loopback", got, all, n);
    let (sv, sh) = (stim(V_FRAMES), stim(H_FRAMES));
    figures(
        "packet_loopback",
        || {
            let mut v = VerilatedLoopback::new().map_err(|e| anyhow!(e))?;
            let r =
                run_loopback::<_, VerilatedLoopback>(&mut v, None, &sv).map_err(|e| anyhow!(e))?;
            check(&r.frames, V_FRAMES)?;
            Ok(r.cycles)
        },
        || {
            let mut h = HdlLoopback::new();
            let r = run_loopback::<_, HdlLoopback>(&mut h, None, &sh).map_err(|e| anyhow!(e))?;
            check(&r.frames, H_FRAMES)?;
            Ok(r.cycles)
        },
    )
}

/// Prints a table of every top, then the packet loopback's figures as the last line.
pub fn bench_sim() -> Result<()> {
    let all = frames(V_FRAMES)?;
    let (lo, hi) = all.iter().fold((usize::MAX, 0), |(lo, hi), f| {
        (lo.min(f.len()), hi.max(f.len()))
    });
    println!(
        "simulation speed: back-to-back {lo}-{hi}-byte RDMA WRITE ONLY frames (IPv4), no \
         idles, no back-pressure; {V_FRAMES} frames under Verilator, {H_FRAMES} in rust-hdl; \
         best of {ROUNDS}"
    );
    println!(
        "{:<16} {:>15} {:>15} {:>8}",
        "top", "verilator c/s", "rust-hdl c/s", "ratio"
    );
    let mut last = None;
    for f in [icrc(&all)?, rx(&all)?, tx(&all)?, loopback(&all)?] {
        println!(
            "{:<16} {:>15.0} {:>15.0} {:>8.1}",
            f.top,
            f.v_cps,
            f.h_cps,
            f.v_cps / f.h_cps
        );
        last = Some(f);
    }
    let f = last.expect("the loopback ran last");
    println!(
        "top={} verilator_cps={:.0} rusthdl_cps={:.0} ratio={:.1}",
        f.top,
        f.v_cps,
        f.h_cps,
        f.v_cps / f.h_cps
    );
    Ok(())
}
