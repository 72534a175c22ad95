//! The whole board top (`board_1led`: PLL, reset synchronizers, RGMII MAC, both clock-domain
//! crossings, the core slot, the status LED) under Verilator, driven at its pins: RGMII frames
//! in on a receive clock unrelated to the input clock, RGMII frames out, the LED watched.
//! Expectations are independent of the hardware: the wire format by hand (preamble, SFD, FCS
//! by zlib's CRC-32), the core's verdicts by the software model, the LED by its specification
//! in `status_leds.rs`.

use rnic_cosim::board::{BoardRun, BoardStimulus, VerilatedBoard, run_board};
use rnic_cosim::mac::{TxWireFrame, WireByte, wire_frame, zlib_crc32};
use rnic_cosim::rx_model::{Expect, expect};

/// Hand-worked: seven 0x55 then the SFD 0xD5 (IEEE 802.3 clause 3.2.1-3.2.2).
const PREAMBLE_SFD: [u8; 8] = [0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0xD5];

fn padded(f: &[u8]) -> Vec<u8> {
    let mut p = f.to_vec();
    if p.len() < 60 {
        p.resize(60, 0);
    }
    p
}

fn wire(bytes: &[u8]) -> Vec<WireByte> {
    bytes
        .iter()
        .map(|&data| WireByte {
            data,
            dv: true,
            er: false,
        })
        .collect()
}

/// The data of a frame seen on the transmit pins, after checking its preamble, FCS and gap.
fn data_of(i: usize, w: &TxWireFrame) -> Vec<u8> {
    assert_eq!(w.errors, 0, "frame {i}: TX_ER");
    assert_eq!(&w.bytes[..8], &PREAMBLE_SFD, "frame {i}: preamble/SFD");
    let n = w.bytes.len();
    let data = w.bytes[8..n - 4].to_vec();
    let fcs = u32::from_le_bytes(w.bytes[n - 4..].try_into().unwrap());
    assert_eq!(fcs, zlib_crc32(&data), "frame {i}: FCS");
    if let Some(g) = w.gap_before {
        assert!(g >= 12, "frame {i}: inter-frame gap {g}");
    }
    data
}

struct Traffic {
    /// What the receive pins get, per frame.
    wire: Vec<Vec<u8>>,
    /// What must leave the transmit pins: RoCEv2 frames (rebuilt) and the others (bypassed),
    /// each class in order (the core's output merges the two streams frame by frame).
    roce_out: Vec<Vec<u8>>,
    other_out: Vec<Vec<u8>>,
    /// Frames the MAC must drop (bad FCS) and frames the core must drop (a failed check).
    fcs_bad: usize,
    core_bad: usize,
}

/// Reference RoCEv2 frames, an ARP request, a RoCEv2 frame with a flipped payload bit (the
/// core drops it: ICRC) and a frame with a bad FCS (the MAC drops it).
fn traffic(n_roce: usize) -> Traffic {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/golden/scapy_reference.pcap"
    );
    let frames: Vec<Vec<u8>> = rnic_wire::pcap::read_file(path)
        .expect("reference pcap")
        .records
        .into_iter()
        .map(|r| r.data)
        .collect();
    let mut t = Traffic {
        wire: Vec::new(),
        roce_out: Vec::new(),
        other_out: Vec::new(),
        fcs_bad: 0,
        core_bad: 0,
    };
    let mut arp = vec![0xFF; 6];
    arp.extend([0x02, 0, 0, 0, 0, 0x01, 0x08, 0x06]);
    arp.extend([0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 1, 10, 0, 0, 1]);
    arp.extend([0u8; 6]);
    arp.extend([10, 0, 0, 2]);
    let arp = padded(&arp);
    let mut bad_icrc = padded(&frames[5]);
    let k = frames[5].len() - 6;
    bad_icrc[k] ^= 0x10;
    for (i, f) in frames.iter().step_by(7).take(n_roce).enumerate() {
        let f = padded(f);
        match expect(&f, false).expect("model") {
            Expect::Accept(..) => t.roce_out.push(f.clone()),
            other => panic!("reference frame {i}: {other:?}"),
        }
        t.wire.push(wire_frame(&f));
        if i == 2 {
            assert_eq!(expect(&arp, false).unwrap(), Expect::Bypass);
            t.other_out.push(arp.clone());
            t.wire.push(wire_frame(&arp));
        }
        if i == 4 {
            assert!(matches!(expect(&bad_icrc, false).unwrap(), Expect::Drop(_)));
            t.core_bad += 1;
            t.wire.push(wire_frame(&bad_icrc));
        }
        if i == 6 {
            let mut w = wire_frame(&f);
            let n = w.len();
            w[n - 1] ^= 0x80;
            t.fcs_bad += 1;
            t.wire.push(w);
        }
    }
    t
}

fn stimulus(t: &Traffic, clk_half_ps: u64, rxc_half_ps: u64, rxc_phase_ps: u64) -> BoardStimulus {
    BoardStimulus {
        clk_half_ps,
        rxc_half_ps,
        rxc_phase_ps,
        link_down_cycles: 300,
        link_up_cycles: 300,
        rx_wire: t.wire.iter().map(|w| wire(w)).collect(),
        gap: 12,
        quiet_cycles: 3000,
        max_cycles: 400_000,
    }
}

fn check_frames(t: &Traffic, r: &BoardRun) {
    let (mut roce, mut other) = (Vec::new(), Vec::new());
    for (i, w) in r.tx_wire.iter().enumerate() {
        let d = data_of(i, w);
        if rnic_wire::locate(&d, &[rnic_wire::udp::ROCE_PORT]).is_some() {
            roce.push(d);
        } else {
            other.push(d);
        }
    }
    assert_eq!(roce.len(), t.roce_out.len(), "RoCEv2 frames out");
    assert_eq!(
        roce, t.roce_out,
        "RoCEv2 frames rebuilt byte for byte, in order"
    );
    assert_eq!(other, t.other_out, "other frames unchanged, in order");
}

/// The LED (active low, one LED): off in reset and while the PHY reports no link, on once
/// the link is up, and blinking (off first) after a bad frame.
fn check_led(r: &BoardRun) {
    assert!(!r.phy_reset_seen, "the PHY reset is held released");
    assert_eq!(r.leds.first().map(|c| c.led_n), Some(1), "off at power-up");
    assert_eq!(r.leds_at(r.link_up_ps), 1, "off while the link is down");
    // The link status crosses from the receive domain in a few clocks.
    let soon = r.link_up_ps + 200_000;
    assert_eq!(r.leds_at(soon), 0, "on with the link up: {:?}", r.leds);
    // Off, on with the link, and dark once a bad frame starts the slow blink (its first
    // phase lasts 2^24 clocks, longer than the run): nothing else, traffic's flicker is at
    // 2^21 clocks.
    let seq: Vec<u64> = r.leds.iter().map(|c| c.led_n).collect();
    assert_eq!(seq, [1, 0, 1], "LED changes {:?}", r.leds);
}

#[test]
fn frames_cross_both_clock_domains_and_come_back() {
    let t = traffic(12);
    assert_eq!((t.core_bad, t.fcs_bad), (1, 1));
    let mut b = VerilatedBoard::new("board_1led").expect("verilated board_1led");
    // A 125 MHz input clock and a receive clock 2 % slower, out of phase.
    let r = run_board(&mut b, &stimulus(&t, 4000, 4080, 1234));
    eprintln!(
        "board: {} input-clock cycles, {} frames out, LED changes {:?}",
        r.cycles,
        r.tx_wire.len(),
        r.leds
    );
    assert!(r.cycles < 400_000, "the run drained");
    check_frames(&t, &r);
    check_led(&r);
}

/// The same traffic with the receive clock faster than the input clock by 0.3 %, started
/// at another phase: the receive crossing fills faster than in the other test, and the
/// frames still come back.
#[test]
fn a_receive_clock_faster_than_the_core_clock() {
    let t = traffic(8);
    let mut b = VerilatedBoard::new("board_1led").expect("verilated board_1led");
    let r = run_board(&mut b, &stimulus(&t, 4000, 3988, 3111));
    check_frames(&t, &r);
    check_led(&r);
}
