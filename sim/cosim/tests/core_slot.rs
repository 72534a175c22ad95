//! The board's core slot against the software model: every RoCEv2 frame the model accepts leaves
//! rebuilt from its parsed description, every other frame leaves unchanged (flagged bad when the
//! MAC flagged it), every frame the model drops is gone and pulses `frame_bad`; the two output
//! classes keep their order and never interleave. In lock-step (rust-hdl and Verilator on every
//! cycle) under random traffic, and in Verilator on the scapy reference trace.

use std::collections::VecDeque;

use rnic_cosim::axis::Rng;
use rnic_cosim::core::{CoreRun, run_core};
use rnic_cosim::lockstep::Stimulus;
use rnic_cosim::ports::{PortLockStep, VerilatedPorts};
use rnic_cosim::rx_model::{Expect, expect, rx_traffic};
use rnic_hw::core_slot::CoreSlot;
use rnic_wire::RocePacket;

/// What the core must send for `frames`: rebuilt frames and bypassed ones (with their flag), in
/// their input order, and the number of `frame_bad` pulses.
struct Want {
    rebuilt: VecDeque<Vec<u8>>,
    bypass: VecDeque<(Vec<u8>, bool)>,
    bad: u64,
}

fn want(frames: &[(Vec<u8>, bool)]) -> Want {
    let mut w = Want {
        rebuilt: VecDeque::new(),
        bypass: VecDeque::new(),
        bad: 0,
    };
    for (i, (f, mac_bad)) in frames.iter().enumerate() {
        match expect(f, *mac_bad).unwrap_or_else(|e| panic!("frame {i}: {e}")) {
            Expect::Accept(..) => {
                let p = RocePacket::parse(f).expect("accepted frames parse");
                w.rebuilt
                    .push_back(p.repr().build().expect("parsed descriptions build"));
            }
            Expect::Bypass => {
                w.bypass.push_back((f.clone(), *mac_bad));
                w.bad += u64::from(*mac_bad);
            }
            Expect::Drop(_) => w.bad += 1,
        }
    }
    w
}

fn check(frames: &[(Vec<u8>, bool)], r: &CoreRun) {
    assert!(
        r.errors.is_empty(),
        "stream errors: {:?}",
        &r.errors[..3.min(r.errors.len())]
    );
    let mut w = want(frames);
    let (n_rebuilt, n_bypass) = (w.rebuilt.len(), w.bypass.len());
    for (k, out) in r.frames.iter().enumerate() {
        let tuser = out.tuser & 1 == 1;
        if w.rebuilt.front() == Some(&out.data) && !tuser {
            w.rebuilt.pop_front();
        } else if w.bypass.front() == Some(&(out.data.clone(), tuser)) {
            w.bypass.pop_front();
        } else {
            panic!(
                "output frame {k} ({} bytes, tuser {tuser}) is neither the next rebuilt frame \
                 nor the next bypassed one ({} and {} left)",
                out.data.len(),
                w.rebuilt.len(),
                w.bypass.len()
            );
        }
    }
    assert!(
        w.rebuilt.is_empty(),
        "{} rebuilt frames missing",
        w.rebuilt.len()
    );
    assert!(
        w.bypass.is_empty(),
        "{} bypassed frames missing",
        w.bypass.len()
    );
    assert_eq!(r.roce_pulses, n_rebuilt as u64, "frame_roce pulses");
    assert_eq!(r.bad_pulses, w.bad, "frame_bad pulses");
    assert!(
        n_rebuilt > 0 && n_bypass > 0,
        "the traffic has both classes"
    );
}

#[test]
fn lockstep_random_traffic_equals_the_model() {
    for seed in [0xC0DE_0001u64, 0xC0DE_0002] {
        let mut rng = Rng::new(seed);
        let frames = rx_traffic(&mut rng, 120, 600);
        let s = Stimulus {
            frames: frames
                .iter()
                .map(|(f, b)| (f.clone(), u64::from(*b)))
                .collect(),
            seed,
            idle: 0.15,
            stall: 0.2,
        };
        let w = want(&frames);
        let mut d = PortLockStep::new(CoreSlot::default(), "core_slot", seed).unwrap();
        let r = run_core(&mut d, &s, w.rebuilt.len() + w.bypass.len())
            .unwrap_or_else(|e| panic!("seed {seed:#x}: {e}"));
        check(&frames, &r);
    }
}

#[test]
fn reference_trace_comes_back_byte_for_byte() {
    let frames = rnic_cosim::packet_dut::scapy_reference_frames();
    let s = Stimulus {
        frames: frames
            .iter()
            .map(|(f, b)| (f.clone(), u64::from(*b)))
            .collect(),
        seed: 5,
        idle: 0.05,
        stall: 0.3,
    };
    let w = want(&frames);
    assert_eq!(
        w.rebuilt.len(),
        frames.len(),
        "every reference frame is RoCEv2 and good"
    );
    let mut d = VerilatedPorts::of::<CoreSlot>("core_slot").unwrap();
    let r = run_core(&mut d, &s, frames.len()).unwrap();
    for (k, (out, (f, _))) in r.frames.iter().zip(&frames).enumerate() {
        let p = RocePacket::parse(f).unwrap();
        assert_eq!(
            out.data,
            f[..p.eth.header_len() + p.ip_packet().len()],
            "frame {k}"
        );
    }
    assert_eq!(r.frames.len(), frames.len());
    assert_eq!((r.roce_pulses, r.bad_pulses), (frames.len() as u64, 0));
}
