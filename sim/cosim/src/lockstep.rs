//! The lock-step harness: the same stimulus into two simulations of one module (rust-hdl's
//! simulator and Verilator), every output compared on every cycle.

use std::fmt;

use crate::axis::{OutFrame, Rng, Sink, Source};
use crate::dut::{AxisDut, AxisIn};

/// Stimulus of a run.
#[derive(Clone, Debug)]
pub struct Stimulus {
    /// Frames with the tuser of their last input beat.
    pub frames: Vec<(Vec<u8>, u64)>,
    pub seed: u64,
    /// Chance of an idle cycle before each input beat.
    pub idle: f64,
    /// Chance that the sink refuses a beat.
    pub stall: f64,
}

/// The first difference between the two simulations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub cycle: u64,
    pub port: &'static str,
    pub a: u64,
    pub b: u64,
    pub seed: u64,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cycle {}: {} differs: rust-hdl {:#x}, Verilator {:#x} (replay with seed {:#x})",
            self.cycle, self.port, self.a, self.b, self.seed
        )
    }
}

impl std::error::Error for Mismatch {}

/// What a run produced.
#[derive(Clone, Debug, Default)]
pub struct RunResult {
    pub frames: Vec<OutFrame>,
    pub cycles: u64,
    pub beats_in: usize,
    pub beats_out: usize,
    /// Output protocol problems (tkeep holes).
    pub errors: Vec<String>,
    /// Cycles from the first input beat taken to the last, inclusive.
    pub in_cycles: u64,
    /// Payload bytes taken at the input (tkeep counted).
    pub in_bytes: u64,
}

const RESET_CYCLES: u64 = 2;

fn drain_limit(s: &Stimulus, beats: usize) -> u64 {
    // Generous: every beat may wait for idles and stalls; the pipeline then drains.
    let slow = 1.0 / (1.0 - s.idle.min(0.95)) / (1.0 - s.stall.min(0.95));
    (beats as f64 * slow * 4.0) as u64 + 1000
}

/// Runs `a` and `b` in lock-step; the first output difference is an error.
pub fn run<A: AxisDut, B: AxisDut>(
    a: &mut A,
    b: &mut B,
    s: &Stimulus,
) -> Result<RunResult, Mismatch> {
    drive(a, Some(b), s)
}

/// Runs one simulation alone (the same source and sink models).
pub fn run_one<A: AxisDut>(a: &mut A, s: &Stimulus) -> RunResult {
    match drive::<A, A>(a, None, s) {
        Ok(r) => r,
        Err(_) => unreachable!("a single simulation has nothing to mismatch"),
    }
}

fn drive<A: AxisDut, B: AxisDut>(
    a: &mut A,
    mut b: Option<&mut B>,
    s: &Stimulus,
) -> Result<RunResult, Mismatch> {
    let mut rng = Rng::new(s.seed);
    let mut src = Source::new(&s.frames, s.idle);
    let mut sink = Sink::new(s.stall);
    let limit = drain_limit(s, src.total_beats());
    let want_frames = s.frames.len();
    let mut cycle = 0u64;
    let (mut first_in, mut last_in, mut in_bytes) = (None, 0u64, 0u64);
    loop {
        let mut i = AxisIn {
            reset: cycle < RESET_CYCLES,
            ..Default::default()
        };
        if !i.reset {
            src.drive(&mut rng, &mut i);
        }
        sink.drive(&mut rng, &mut i);
        let oa = a.settle(&i);
        if let Some(b) = b.as_deref_mut() {
            let ob = b.settle(&i);
            for ((port, va), (_, vb)) in oa.fields().into_iter().zip(ob.fields()) {
                if va != vb {
                    return Err(Mismatch {
                        cycle,
                        port,
                        a: va,
                        b: vb,
                        seed: s.seed,
                    });
                }
            }
        }
        if !i.reset && i.tvalid && oa.s_tready {
            first_in.get_or_insert(cycle);
            last_in = cycle;
            in_bytes += u64::from(i.tkeep.count_ones());
        }
        if !i.reset {
            src.after(&i, &oa);
            sink.after(cycle, &i, &oa);
        }
        a.tick();
        if let Some(b) = b.as_deref_mut() {
            b.tick();
        }
        cycle += 1;
        if (src.done() && sink.frames.len() >= want_frames) || cycle > limit {
            break;
        }
    }
    Ok(RunResult {
        frames: sink.frames,
        cycles: cycle,
        beats_in: src.total_beats(),
        beats_out: sink.beats,
        errors: sink.errors,
        in_cycles: first_in.map_or(0, |f| last_in - f + 1),
        in_bytes,
    })
}
