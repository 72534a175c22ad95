//! `rnic sim icrc`: run a capture through the hardware ICRC checker under Verilator.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, anyhow};
use rnic_cosim::dut::VerilatedDut;
use rnic_cosim::icrc::{TUSER_BAD, TUSER_ROCE};
use rnic_cosim::lockstep::{Stimulus, run_one};
use rnic_wire::pcap::{self, LINKTYPE_ETHERNET};

#[derive(clap::Args, Debug)]
pub struct SimIcrcArgs {
    /// Capture (pcap or pcapng) of Ethernet frames.
    pub file: PathBuf,
    /// Write a VCD waveform of the run to this path.
    #[arg(long, value_name = "PATH")]
    pub vcd: Option<PathBuf>,
    /// Print the verdict of every frame.
    #[arg(long, short)]
    pub verbose: bool,
}

/// Counts of a run, as the last line prints them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IcrcCounts {
    pub frames: usize,
    pub roce: usize,
    pub icrc_ok: usize,
    pub icrc_bad: usize,
}

/// Runs `file` through the RX ICRC engine; returns the counts.
pub fn sim_icrc(file: &Path, vcd: Option<&Path>, verbose: bool) -> Result<(IcrcCounts, u64)> {
    let cap = pcap::read_file(file)?;
    let frames: Vec<(Vec<u8>, u64)> = cap
        .records
        .iter()
        .filter(|r| r.linktype == LINKTYPE_ETHERNET && !r.data.is_empty())
        .map(|r| (r.data.clone(), 0))
        .collect();
    let mut dut = VerilatedDut::new("icrc_rx").map_err(|e| anyhow!(e))?;
    if let Some(p) = vcd {
        dut.model.trace(p).map_err(|e| anyhow!(e))?;
    }
    let s = Stimulus {
        frames,
        seed: 0,
        idle: 0.0,
        stall: 0.0,
    };
    let r = run_one(&mut dut, &s);
    if r.frames.len() != s.frames.len() {
        return Err(anyhow!(
            "the engine gave {} frames back for {}",
            r.frames.len(),
            s.frames.len()
        ));
    }
    let mut c = IcrcCounts {
        frames: cap.records.len(),
        ..Default::default()
    };
    for (i, out) in r.frames.iter().enumerate() {
        let roce = out.tuser & TUSER_ROCE != 0;
        let bad = out.tuser & TUSER_BAD != 0;
        if roce {
            c.roce += 1;
            if bad {
                c.icrc_bad += 1;
            } else {
                c.icrc_ok += 1;
            }
        }
        if verbose {
            let verdict = match (roce, bad) {
                (true, false) => "roce icrc=ok",
                (true, true) => "roce icrc=BAD",
                (false, false) => "not RoCEv2",
                (false, true) => "not RoCEv2, MAC error",
            };
            println!("#{} len={} {verdict}", i + 1, out.data.len());
        }
    }
    Ok((c, r.cycles))
}

pub fn run(a: &SimIcrcArgs) -> Result<ExitCode> {
    let (c, cycles) = match sim_icrc(&a.file, a.vcd.as_deref(), a.verbose) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    if let Some(p) = &a.vcd {
        println!("waveform: {}", p.display());
    }
    println!("cycles={cycles}");
    println!(
        "frames={} roce={} icrc_ok={} icrc_bad={}",
        c.frames, c.roce, c.icrc_ok, c.icrc_bad
    );
    Ok(if c.icrc_bad > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
