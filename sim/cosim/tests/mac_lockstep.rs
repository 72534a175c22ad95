//! The RGMII MAC: rust-hdl against Verilator in lock-step (every output at every clock
//! phase), and a loopback of the reference frames through the transmit and receive halves
//! with the wire checked byte by byte: preamble and SFD, padding, FCS (zlib CRC-32), gap;
//! frames corrupted on the wire are dropped and counted.

use rnic_cosim::axis::Rng;
use rnic_cosim::mac::{
    HdlMac, MacStimulus, VerilatedMac, WireByte, run_bench, wire_frame, zlib_crc32,
};

/// Hand-worked: seven 0x55 then the SFD 0xD5 (IEEE 802.3 clause 3.2.1-3.2.2).
const PREAMBLE_SFD: [u8; 8] = [0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0xD5];

fn reference_frames() -> Vec<Vec<u8>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/golden/scapy_reference.pcap"
    );
    let cap = rnic_wire::pcap::read_file(path).expect("reference pcap");
    cap.records.into_iter().map(|r| r.data).collect()
}

fn padded(f: &[u8]) -> Vec<u8> {
    let mut p = f.to_vec();
    if p.len() < 60 {
        p.resize(60, 0);
    }
    p
}

/// Checks one frame on the transmit pins against the frame that was sent.
fn check_wire(i: usize, sent: &[u8], poisoned: bool, w: &rnic_cosim::mac::TxWireFrame) {
    let data = padded(sent);
    assert_eq!(w.errors, 0, "frame {i}: TX_ER on the wire");
    assert_eq!(&w.bytes[..8], &PREAMBLE_SFD, "frame {i}: preamble/SFD");
    assert_eq!(
        w.bytes.len(),
        8 + data.len() + 4,
        "frame {i}: length on the wire"
    );
    assert_eq!(&w.bytes[8..8 + data.len()], &data[..], "frame {i}: data");
    let fcs = u32::from_le_bytes(w.bytes[w.bytes.len() - 4..].try_into().unwrap());
    if poisoned {
        assert_eq!(fcs, !zlib_crc32(&data), "frame {i}: poisoned FCS");
    } else {
        assert_eq!(fcs, zlib_crc32(&data), "frame {i}: FCS");
    }
    if let Some(g) = w.gap_before {
        assert!(g >= 12, "frame {i}: inter-frame gap {g} < 12");
    }
}

#[test]
fn lockstep_random_traffic() {
    let seed = 0x5eed_0001;
    let mut rng = Rng::new(seed);
    // Frames of every size class: runts that need padding, odd tails, a jumbo-ish one.
    let tx: Vec<(Vec<u8>, bool)> = (0..60)
        .map(|k| {
            let len = match k % 6 {
                0 => 1 + rng.below(59) as usize,
                1 => 60,
                2 => 61 + rng.below(100) as usize,
                3 => 64 + 8 * rng.below(20) as usize,
                4 => 200 + rng.below(1300) as usize,
                _ => 1 + rng.below(300) as usize,
            };
            let f: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            (f, k % 7 == 3)
        })
        .collect();
    // Receive pins: wire frames, some with a bad FCS, one with RX_ER, one with a bad preamble,
    // one too short.
    let mut rx_wire = Vec::new();
    let mut expect_rx = Vec::new();
    for k in 0..40 {
        let len = 60 + rng.below(200) as usize;
        let f: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        let mut w: Vec<WireByte> = wire_frame(&f)
            .into_iter()
            .map(|d| WireByte {
                data: d,
                dv: true,
                er: false,
            })
            .collect();
        let good = match k % 5 {
            1 => {
                let at = 8 + rng.below(w.len() as u64 - 8) as usize;
                w[at].data ^= 1 << rng.below(8);
                false
            }
            2 if k == 2 => {
                w[20].er = true;
                false
            }
            3 if k == 3 => {
                w[3].data = 0x12;
                false
            }
            4 if k == 4 => {
                w.truncate(8 + 30);
                false
            }
            _ => true,
        };
        if good {
            expect_rx.push(f);
        }
        rx_wire.push(w);
    }
    let s = MacStimulus {
        tx_frames: tx.clone(),
        rx_wire,
        seed,
        idle: 0.3,
        idle_inside: false,
        stall: 0.3,
        loopback: false,
    };
    let mut a = HdlMac::new();
    let mut b = VerilatedMac::new().unwrap();
    let r = run_bench(&mut a, Some(&mut b), &s, &mut |_, _| {}, 200_000)
        .unwrap_or_else(|m| panic!("{m}"));
    eprintln!("lock-step: {} cycles, 4 evaluations each", r.cycles);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.tx_wire.len(), tx.len());
    for (i, ((f, bad), w)) in tx.iter().zip(&r.tx_wire).enumerate() {
        check_wire(i, f, *bad, w);
    }
    assert_eq!(r.rx_frames, expect_rx, "received frames (bad ones dropped)");
    assert_eq!(usize::from(r.last.rx_good_count), expect_rx.len());
    assert_eq!(usize::from(r.last.rx_dropped_count), 40 - expect_rx.len());
    assert!(r.last.link_up, "in-band status between frames says link up");
}

#[test]
fn lockstep_underrun_poisons_the_frame() {
    // Idles inside frames starve the MAC: such frames go out with TX_ER and an inverted FCS.
    let seed = 0x5eed_0002;
    let mut rng = Rng::new(seed);
    let tx: Vec<(Vec<u8>, bool)> = (0..6)
        .map(|_| {
            let len = 100 + rng.below(200) as usize;
            ((0..len).map(|_| rng.next_u64() as u8).collect(), false)
        })
        .collect();
    let s = MacStimulus {
        tx_frames: tx.clone(),
        seed,
        idle: 0.95,
        idle_inside: true,
        loopback: true,
        ..Default::default()
    };
    let mut a = HdlMac::new();
    let mut b = VerilatedMac::new().unwrap();
    let r = run_bench(&mut a, Some(&mut b), &s, &mut |_, _| {}, 400_000)
        .unwrap_or_else(|m| panic!("{m}"));
    let starved = r.tx_wire.iter().filter(|w| w.errors > 0).count();
    assert!(starved > 0, "the stimulus starves at least one frame");
    for (i, w) in r.tx_wire.iter().enumerate() {
        if w.errors > 0 {
            let data_fcs = &w.bytes[8..];
            let (data, fcs) = data_fcs.split_at(data_fcs.len() - 4);
            assert_ne!(
                u32::from_le_bytes(fcs.try_into().unwrap()),
                zlib_crc32(data),
                "frame {i}: an underrun frame must not carry a valid FCS"
            );
        }
    }
    // Looped back, the starved frames are dropped and the others arrive intact.
    assert_eq!(r.rx_frames.len(), tx.len() - starved);
    assert_eq!(usize::from(r.last.rx_dropped_count), starved);
}

#[test]
fn loopback_of_the_reference_frames() {
    let frames = reference_frames();
    assert!(frames.len() > 500);
    let tx: Vec<(Vec<u8>, bool)> = frames.iter().map(|f| (f.clone(), false)).collect();
    let s = MacStimulus {
        tx_frames: tx,
        seed: 0x5eed_0003,
        idle: 0.2,
        stall: 0.2,
        loopback: true,
        ..Default::default()
    };
    // Every 7th frame gets a bit flipped on the wire (data or FCS), every 11th a byte cut.
    let mut corrupted = vec![false; frames.len()];
    let mut rng = Rng::new(0xbad);
    let mut corrupt = |i: usize, w: &mut Vec<u8>| {
        if i % 7 == 3 {
            let at = 8 + rng.below(w.len() as u64 - 8) as usize;
            w[at] ^= 1 << rng.below(8);
            corrupted[i] = true;
        } else if i % 11 == 5 {
            w.pop();
            corrupted[i] = true;
        }
    };
    let mut m = VerilatedMac::new().unwrap();
    let t = std::time::Instant::now();
    let r = run_bench(&mut m, None, &s, &mut corrupt, 2_000_000).unwrap();
    eprintln!(
        "loopback: {} frames, {} cycles in {:?}",
        frames.len(),
        r.cycles,
        t.elapsed()
    );
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.tx_wire.len(), frames.len());
    for (i, (f, w)) in frames.iter().zip(&r.tx_wire).enumerate() {
        check_wire(i, f, false, w);
    }
    let expect: Vec<Vec<u8>> = frames
        .iter()
        .zip(&corrupted)
        .filter(|(_, c)| !**c)
        .map(|(f, _)| padded(f))
        .collect();
    let n_bad = corrupted.iter().filter(|c| **c).count();
    assert!(n_bad > 50);
    assert_eq!(r.rx_frames.len(), expect.len(), "bad frames are dropped");
    assert_eq!(
        r.rx_frames, expect,
        "good frames arrive intact (padded to 60)"
    );
    assert_eq!(usize::from(r.last.rx_dropped_count), n_bad);
    assert_eq!(usize::from(r.last.rx_good_count), expect.len());
    assert_eq!(r.rx_dropped_pulses, n_bad);
    assert_eq!(r.tx_sent_pulses, frames.len());
}

/// The same loopback in rust-hdl's simulator for a slice of the frames (it is slower).
#[test]
fn loopback_in_rust_hdl_matches() {
    let frames: Vec<Vec<u8>> = reference_frames().into_iter().step_by(40).collect();
    let tx: Vec<(Vec<u8>, bool)> = frames.iter().map(|f| (f.clone(), false)).collect();
    let s = MacStimulus {
        tx_frames: tx,
        seed: 0x5eed_0004,
        loopback: true,
        ..Default::default()
    };
    let mut m = HdlMac::new();
    let r = run_bench(&mut m, None, &s, &mut |_, _| {}, 200_000).unwrap();
    let expect: Vec<Vec<u8>> = frames.iter().map(|f| padded(f)).collect();
    assert_eq!(r.rx_frames, expect);
}
