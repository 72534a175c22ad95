//! The board's core slot ([`rnic_hw::core_slot::CoreSlot`]) driven as the board drives it: frames
//! from the MAC in, one merged stream out, and its event pulses counted. The same bench runs it
//! in rust-hdl and Verilator in lock-step ([`crate::ports::PortLockStep`]) or in Verilator alone.

use crate::axis::{OutFrame, Rng, Sink, Source};
use crate::dut::{AxisIn, AxisOut};
use crate::hdl_ports;
use crate::lockstep::Stimulus;
use crate::ports::PortDut;

hdl_ports!(rnic_hw::core_slot::CoreSlot {
    inputs: [
        reset,
        s_axis_tdata,
        s_axis_tkeep,
        s_axis_tlast,
        s_axis_tvalid,
        s_axis_tuser,
        m_axis_tready,
    ],
    outputs: [
        s_axis_tready,
        m_axis_tdata,
        m_axis_tkeep,
        m_axis_tlast,
        m_axis_tvalid,
        m_axis_tuser,
        frame_bad,
        frame_roce,
    ],
});

/// What a run of the core produced.
#[derive(Clone, Debug, Default)]
pub struct CoreRun {
    /// Frames on the output, in order, with `tuser` of their last beat.
    pub frames: Vec<OutFrame>,
    /// `frame_bad` and `frame_roce` pulses.
    pub bad_pulses: u64,
    pub roce_pulses: u64,
    /// Output protocol problems (tkeep holes).
    pub errors: Vec<String>,
    pub cycles: u64,
}

const RESET_CYCLES: u64 = 4;

/// Feeds `s.frames` and collects the output until `want` frames left or the run drains
/// (`want` is the number the caller expects back; the core drops bad frames).
pub fn run_core<D: PortDut>(d: &mut D, s: &Stimulus, want: usize) -> Result<CoreRun, String> {
    let p_in = [
        d.input("reset"),
        d.input("s_axis_tdata"),
        d.input("s_axis_tkeep"),
        d.input("s_axis_tlast"),
        d.input("s_axis_tvalid"),
        d.input("s_axis_tuser"),
        d.input("m_axis_tready"),
    ];
    let p_out = [
        d.output("s_axis_tready"),
        d.output("m_axis_tdata"),
        d.output("m_axis_tkeep"),
        d.output("m_axis_tlast"),
        d.output("m_axis_tvalid"),
        d.output("m_axis_tuser"),
        d.output("frame_bad"),
        d.output("frame_roce"),
    ];
    let mut rng = Rng::new(s.seed);
    let mut src = Source::new(&s.frames, s.idle);
    let mut sink = Sink::new(s.stall);
    let limit = src.total_beats() as u64 * 12 + 20_000;
    let mut r = CoreRun::default();
    let mut quiet = 0u64;
    loop {
        let cycle = d.cycle();
        let mut i = AxisIn {
            reset: cycle < RESET_CYCLES,
            ..Default::default()
        };
        if !i.reset {
            src.drive(&mut rng, &mut i);
        }
        sink.drive(&mut rng, &mut i);
        let vals = [
            u64::from(i.reset),
            i.tdata,
            u64::from(i.tkeep),
            u64::from(i.tlast),
            u64::from(i.tvalid),
            i.tuser & 1,
            u64::from(i.m_tready),
        ];
        for (port, v) in p_in.iter().zip(vals) {
            d.set(*port, v);
        }
        d.settle().map_err(|m| m.to_string())?;
        let o = AxisOut {
            s_tready: d.get(p_out[0]) == 1,
            tdata: d.get(p_out[1]),
            tkeep: d.get(p_out[2]) as u8,
            tlast: d.get(p_out[3]) == 1,
            tvalid: d.get(p_out[4]) == 1,
            tuser: d.get(p_out[5]),
        };
        if !i.reset {
            r.bad_pulses += d.get(p_out[6]);
            r.roce_pulses += d.get(p_out[7]);
            src.after(&i, &o);
            sink.after(cycle, &i, &o);
        }
        d.tick();
        // Done when everything went in and either the expected frames are out or nothing has
        // moved for a while (a frame fewer than expected then fails the caller's comparison).
        quiet = if o.tvalid { 0 } else { quiet + 1 };
        if src.done() && (sink.frames.len() >= want && quiet > 64 || quiet > 4_000) {
            break;
        }
        if d.cycle() > limit {
            return Err(format!(
                "no end after {limit} cycles: {} of {want} frames out",
                sink.frames.len()
            ));
        }
    }
    r.cycles = d.cycle();
    r.frames = sink.frames;
    r.errors = sink.errors;
    Ok(r)
}
