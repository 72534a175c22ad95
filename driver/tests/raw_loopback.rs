//! The raw Ethernet path end to end: the driver's raw queues over the simulated host
//! interface (Verilator; rust-hdl in lock-step where marked), every frame sent through the
//! raw transmit ring, looped back at the MAC into the receive parser, bypassed to the raw
//! receive ring and read back by the driver, byte for byte.

use rnic_cosim::host::DeviceConfig;
use rnic_driver::raw::{RawConfig, RawQueues};
use rnic_driver::registers::reg_offset;
use rnic_driver::transport::{Budget, SimTransport, Transport};

/// A frame that is not RoCEv2 (EtherType 0x88B5, local experimental), `len` bytes.
fn frame(seed: u64, len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len];
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for b in f.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    f[..6].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
    f[12..14].copy_from_slice(&[0x88, 0xB5]);
    f
}

/// Sends every frame and reads them all back; returns what came back.
fn loop_frames<T: Transport>(q: &mut RawQueues<T>, frames: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    let mut next = 0;
    let mut idle = 0;
    while got.len() < frames.len() {
        while next < frames.len() && q.send(&frames[next]).unwrap() {
            next += 1;
        }
        let mut progressed = false;
        while let Some(r) = q.recv().unwrap() {
            assert!(!r.cut && !r.dma_error);
            got.push(r.frame);
            progressed = true;
        }
        if !progressed {
            q.wait(Budget::SHORT).unwrap();
            idle += 1;
            assert!(
                idle < 20_000,
                "stuck after {} of {} frames",
                got.len(),
                frames.len()
            );
        }
    }
    got
}

fn read(q: &mut RawQueues<SimTransport>, name: &str) -> u32 {
    q.t.read32(reg_offset(name).unwrap()).unwrap()
}

#[test]
fn random_frames_loop_back_identical_through_every_index_wrap() {
    let t = SimTransport::new(DeviceConfig {
        seed: 7,
        stall: 0.2,
        idle: 0.2,
        ..Default::default()
    })
    .unwrap();
    // 4-entry rings, 40 frames: every index wraps its ring ten times.
    let cfg = RawConfig {
        log_size: 2,
        interrupts: false,
        ..Default::default()
    };
    let mut q = RawQueues::new(t, cfg).unwrap();
    let frames: Vec<Vec<u8>> = (0..40)
        .map(|i| frame(i, 60 + (i as usize * 37) % 1455))
        .collect();
    let got = loop_frames(&mut q, &frames);
    assert_eq!(got, frames);
    assert_eq!(read(&mut q, "counters.RAW_TX_FRAMES"), 40);
    assert_eq!(read(&mut q, "counters.RAW_RX_FRAMES"), 40);
    assert_eq!(read(&mut q, "counters.RX_BYPASS"), 40);
    assert_eq!(read(&mut q, "counters.RAW_RX_DROPS"), 0);
    assert_eq!(read(&mut q, "counters.DMA_READ_ERRORS"), 0);
}

fn sim(seed: u64, stall: f64, lockstep: bool) -> SimTransport {
    SimTransport::new(DeviceConfig {
        lockstep,
        seed,
        stall,
        idle: stall,
    })
    .unwrap()
}

#[test]
fn in_lock_step_rust_hdl_and_verilator_agree_on_every_cycle() {
    let cfg = RawConfig {
        log_size: 2,
        interrupts: false,
        ..Default::default()
    };
    let mut q = RawQueues::new(sim(3, 0.3, true), cfg).unwrap();
    let frames: Vec<Vec<u8>> = [60, 61, 67, 1514, 64, 300, 59 + 8, 1000]
        .iter()
        .enumerate()
        .map(|(i, &n)| frame(100 + i as u64, n))
        .collect();
    assert_eq!(loop_frames(&mut q, &frames), frames);
}

#[test]
fn short_frames_come_back_padded_and_long_ones_cut_to_the_buffer() {
    let cfg = RawConfig {
        log_size: 3,
        buf_len: 64,
        interrupts: false,
    };
    let mut q = RawQueues::new(sim(4, 0.1, false), cfg).unwrap();
    let short = frame(1, 42);
    let long = frame(2, 200);
    assert!(q.send(&short).unwrap());
    assert!(q.send(&long).unwrap());
    let mut got = Vec::new();
    for _ in 0..2000 {
        if let Some(r) = q.recv().unwrap() {
            got.push(r);
        }
        if got.len() == 2 {
            break;
        }
        q.wait(Budget::SHORT).unwrap();
    }
    assert_eq!(got.len(), 2);
    let mut padded = short.clone();
    padded.resize(60, 0);
    assert_eq!((got[0].frame.clone(), got[0].cut), (padded, false));
    assert_eq!(
        (got[1].frame.clone(), got[1].cut),
        (long[..64].to_vec(), true)
    );
}

fn wait_frames(q: &mut RawQueues<SimTransport>, n: usize) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    for _ in 0..4000 {
        while let Some(r) = q.recv().unwrap() {
            got.push(r.frame);
        }
        if got.len() >= n {
            break;
        }
        q.t.wait(Budget::SHORT).unwrap();
    }
    got
}

#[test]
fn an_armed_completion_ring_interrupts_once_and_an_unarmed_one_never() {
    let mut q = RawQueues::new(sim(5, 0.0, false), RawConfig::default()).unwrap();
    assert!(!q.t.dev.env.irq_line);
    q.send(&frame(1, 100)).unwrap();
    let mut fired = false;
    for _ in 0..100 {
        if q.wait(Budget::SHORT).unwrap() {
            fired = true;
            break;
        }
    }
    assert!(fired, "armed: the first frame raises the interrupt");
    assert_eq!(q.take_irq_status().unwrap() & 0b10, 0b10, "RAW_RX pending");
    q.t.wait(Budget::SHORT).unwrap();
    assert!(!q.t.dev.env.irq_line, "cleared");
    assert_eq!(wait_frames(&mut q, 1).len(), 1);
    // Disarmed by the interrupt: the next frame raises nothing.
    let edges = q.t.dev.env.irq_edges;
    q.send(&frame(2, 100)).unwrap();
    assert_eq!(wait_frames(&mut q, 1).len(), 1);
    assert_eq!(q.t.dev.env.irq_edges, edges, "not armed, no interrupt");
    assert_eq!(read(&mut q, "ctrl.IRQ_STATUS") & 0b10, 0);
    // Armed again: the next one does.
    q.arm().unwrap();
    q.send(&frame(3, 100)).unwrap();
    assert_eq!(wait_frames(&mut q, 1).len(), 1);
    assert_eq!(q.t.dev.env.irq_edges, edges + 1);

    // Interrupts off altogether: frames arrive, the line stays low.
    let cfg = RawConfig {
        interrupts: false,
        ..Default::default()
    };
    let mut q = RawQueues::new(sim(6, 0.0, false), cfg).unwrap();
    for i in 0..3 {
        q.send(&frame(i, 80)).unwrap();
    }
    assert_eq!(wait_frames(&mut q, 3).len(), 3);
    assert_eq!(q.t.dev.env.irq_edges, 0);
}

fn ring_base(q: &mut RawQueues<SimTransport>, ring: u32) -> u64 {
    let lo = read(q, &format!("raw[{ring}].BASE_LO"));
    let hi = read(q, &format!("raw[{ring}].BASE_HI"));
    u64::from(hi) << 32 | u64::from(lo)
}

#[test]
fn a_device_that_lies_about_an_index_or_a_completion_is_refused() {
    let cfg = RawConfig {
        interrupts: false,
        ..Default::default()
    };
    let mut q = RawQueues::new(sim(7, 0.0, false), cfg).unwrap();
    // A completion with this pass's phase for a ring slot nothing was received into.
    let cq = ring_base(&mut q, 2);
    let mut e = [0u8; 16];
    e[0] = 60; // LEN
    e[4] = 7; // RING_INDEX
    e[15] = 0x80; // PHASE
    assert!(q.t.dev.env.mem.write(cq, &e));
    let err = q.recv().unwrap_err().to_string();
    assert!(err.contains("ring index 7"), "{err}");
    // A completion longer than its buffer.
    e[4] = 0;
    e[0..2].copy_from_slice(&4000u16.to_le_bytes());
    assert!(q.t.dev.env.mem.write(cq, &e));
    let err = q.recv().unwrap_err().to_string();
    assert!(err.contains("length 4000"), "{err}");
    assert_eq!(q.errors.bad_completion, 2);
    // A transmit consumer index beyond what was posted.
    q.t.write32(reg_offset("raw[0].CONS").unwrap(), 0x100)
        .unwrap();
    let err = q.tx_pending().unwrap_err().to_string();
    assert!(err.contains("CONS 256"), "{err}");
    assert_eq!(q.errors.bad_index, 1);
}

#[test]
fn dma_outside_every_mapped_buffer_is_refused_and_counted() {
    let cfg = RawConfig {
        interrupts: false,
        ..Default::default()
    };
    let mut q = RawQueues::new(sim(8, 0.0, false), cfg).unwrap();
    // The first receive descriptor now points at unmapped memory.
    let rx = ring_base(&mut q, 1);
    let first_buf = u64::from_le_bytes(q.t.dev.env.mem.read(rx, 8).unwrap().try_into().unwrap());
    let mut d = [0u8; 16];
    d[..8].copy_from_slice(&0x7_0000_0000u64.to_le_bytes());
    d[8..10].copy_from_slice(&2048u16.to_le_bytes());
    assert!(q.t.dev.env.mem.write(rx, &d));
    q.send(&frame(1, 100)).unwrap();
    let mut got = None;
    for _ in 0..2000 {
        if let Some(r) = q.recv().unwrap() {
            got = Some(r);
            break;
        }
        q.wait(Budget::SHORT).unwrap();
    }
    let r = got.expect("a completion");
    assert!(r.dma_error, "the completion reports the refused write");
    assert_eq!(read(&mut q, "counters.DMA_WRITE_ERRORS"), 1);
    assert_eq!(q.t.dev.env.dma.stats.refused_writes, 1);
    // Nothing landed in the buffer that descriptor used to name.
    assert!(
        q.t.dev
            .env
            .mem
            .read(first_buf, 2048)
            .unwrap()
            .iter()
            .all(|&b| b == 0)
    );
    // A transmit descriptor pointing outside, posted by hand in slot 2 after one good frame
    // in slot 1: the read is refused, the entry skipped, nothing sent for it.
    let tx = ring_base(&mut q, 0);
    q.send(&frame(2, 100)).unwrap();
    assert_eq!(wait_frames(&mut q, 1).len(), 1);
    let before = q.t.dev.env.mac.sent.len();
    assert_eq!(q.tx_pending().unwrap(), 0);
    let mut d = [0u8; 16];
    d[..8].copy_from_slice(&0x7_0000_0000u64.to_le_bytes());
    d[8..10].copy_from_slice(&100u16.to_le_bytes());
    assert!(q.t.dev.env.mem.write(tx + 2 * 16, &d));
    q.t.write32(reg_offset("raw[0].DOORBELL").unwrap(), 3)
        .unwrap();
    q.t.wait(Budget {
        cycles: 2000,
        ..Budget::SHORT
    })
    .unwrap();
    assert_eq!(read(&mut q, "counters.DMA_READ_ERRORS"), 1);
    assert_eq!(read(&mut q, "raw[0].CONS"), 3, "the bad entry is skipped");
    assert_eq!(q.t.dev.env.mac.sent.len(), before, "nothing sent for it");
}

#[test]
fn a_full_transmit_ring_says_so_and_frames_without_buffers_are_dropped_and_counted() {
    let cfg = RawConfig {
        log_size: 1,
        interrupts: false,
        ..Default::default()
    };
    let mut q = RawQueues::new(sim(9, 0.0, false), cfg).unwrap();
    // Two slots: the third send before the device runs finds the ring full.
    assert!(q.send(&frame(1, 1500)).unwrap());
    assert!(q.send(&frame(2, 1500)).unwrap());
    assert!(!q.send(&frame(3, 1500)).unwrap());
    // Let both come back without taking them: the two receive buffers are now used.
    q.t.wait(Budget {
        cycles: 5000,
        ..Budget::SHORT
    })
    .unwrap();
    // Twelve more frames with no buffer posted: the receive FIFO (16 KiB) takes ten, the
    // rest are dropped and counted.
    for i in 0..12 {
        while !q.send(&frame(10 + i, 1500)).unwrap() {
            q.t.wait(Budget::SHORT).unwrap();
        }
    }
    q.t.wait(Budget {
        cycles: 20_000,
        ..Budget::SHORT
    })
    .unwrap();
    let drops = read(&mut q, "counters.RAW_RX_DROPS");
    assert!(drops >= 1, "dropped: {drops}");
    // Everything not dropped still arrives, in order, intact.
    let got = wait_frames(&mut q, 14 - drops as usize);
    assert_eq!(got.len(), 14 - drops as usize);
    assert_eq!(got[0], frame(1, 1500));
    assert_eq!(got[1], frame(2, 1500));
}
