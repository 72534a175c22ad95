//! The QP rings of the host interface end to end, as a host sees them: rings programmed
//! through the CSR port, work requests written into host memory and announced by doorbell,
//! fetched by DMA and handed to the transport's side (`m_sq_wqe_*`, `m_rq_wqe_*`) exactly
//! once, in order per ring, whole, with their ring and index; completions handed in
//! (`s_cqe_*`) land in the host's completion ring at the producer's slot with the pass's
//! phase bit, the producer register follows, a full ring refuses and counts, an armed CQ
//! interrupts once and is disarmed, an unarmed one never does, a ring in unmapped memory
//! gives an error-flagged request and a counted DMA error. Run in lock-step (rust-hdl and
//! Verilator compared on every output, every cycle) with stalls everywhere, and in Verilator
//! alone for longer runs with wraps of every index.

use rnic_cosim::axis::Rng;
use rnic_cosim::host::{DeviceConfig, Fetched, SimDevice};
use rnic_regmap::desc::{CQE, RECV_WQE, SEND_WQE};
use rnic_regmap::regs;

fn off(block: &str, name: &str, q: Option<u32>) -> u32 {
    regs::offset(block, name, q).unwrap_or_else(|| panic!("{block}.{name} {q:?}"))
}

fn irq_bit(name: &str) -> u32 {
    regs::irq_cause(name).unwrap().mask()
}

/// The bits of field `field` of register `reg` (its own or a queue's) of block `block`.
fn bits_of(block: &str, reg: &str, field: &str) -> u32 {
    let b = regs::BLOCKS.iter().find(|b| b.name == block).unwrap();
    let per_queue = b.per_queue.map_or(&[][..], |(_, r)| r);
    b.registers
        .iter()
        .chain(per_queue)
        .find(|r| r.name == reg)
        .and_then(|r| r.field(field))
        .unwrap_or_else(|| panic!("{block}.{reg}.{field}"))
        .mask()
}

/// A ring the test programmed: its block, queue, memory and size.
struct Ring {
    block: &'static str,
    q: u32,
    base: u64,
    log: u32,
    entry: usize,
}

impl Ring {
    fn new(d: &mut SimDevice, block: &'static str, q: u32, log: u32, entry: usize) -> Self {
        let base = d.env.mem.alloc(entry << log);
        let r = Ring {
            block,
            q,
            base,
            log,
            entry,
        };
        r.program(d, base, 0);
        r
    }

    fn program(&self, d: &mut SimDevice, base: u64, flags: u32) {
        let q = Some(self.q);
        d.write32(off(self.block, "BASE_LO", q), base as u32)
            .unwrap();
        d.write32(off(self.block, "BASE_HI", q), (base >> 32) as u32)
            .unwrap();
        let enable = bits_of(self.block, "SIZE", "ENABLE");
        d.write32(off(self.block, "SIZE", q), self.log | enable | flags)
            .unwrap();
    }

    fn reg(&self, d: &mut SimDevice, name: &str) -> u32 {
        d.read32(off(self.block, name, Some(self.q))).unwrap()
    }

    fn doorbell(&self, d: &mut SimDevice, index: u16) {
        d.write32(off(self.block, "DOORBELL", Some(self.q)), u32::from(index))
            .unwrap();
    }

    fn slot_addr(&self, index: u64) -> u64 {
        self.base + (index & ((1 << self.log) - 1)) * self.entry as u64
    }
}

fn counter(d: &mut SimDevice, name: &str) -> u32 {
    d.read32(off("counters", name, None)).unwrap()
}

/// Random request bytes with the ring, queue and sequence number in the first word (WR_ID).
fn request(rng: &mut Rng, len: usize, kind: u64, q: u32, n: u64) -> Vec<u8> {
    let mut b: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
    b[..8].copy_from_slice(&(kind << 56 | u64::from(q) << 32 | n).to_le_bytes());
    b
}

/// Runs until `done` holds, at most `limit` cycles.
fn run_until(d: &mut SimDevice, limit: u64, what: &str, done: impl Fn(&SimDevice) -> bool) {
    for _ in 0..limit {
        if done(d) {
            return;
        }
        d.run(1).unwrap();
    }
    panic!(
        "{what}: not done after {limit} cycles: fetched {} {}",
        d.env.engines.fetched[0].len(),
        d.env.engines.fetched[1].len()
    );
}

/// Posts `per_ring` requests to each work ring, a ring's worth of the smallest ring (2) at
/// a time per ring, waiting for the fetches between rounds (so every index wraps on a long
/// run), and checks what the transport's side received.
fn work_rings(d: &mut SimDevice, rng: &mut Rng, per_ring: u64) {
    let mut rings = Vec::new();
    for (kind, block, fmt, queues) in [
        (0usize, "send_queues", &SEND_WQE, [0u32, 5, 63]),
        (1usize, "receive_queues", &RECV_WQE, [0u32, 17, 62]),
    ] {
        for (i, q) in queues.into_iter().enumerate() {
            let log = 1 + i as u32; // 2, 4 and 8 entries
            let ring = Ring::new(d, block, q, log, usize::from(fmt.size));
            rings.push((kind, ring, Vec::new()));
        }
    }
    let mut posted = 0u64;
    while posted < per_ring {
        let step = 2.min(per_ring - posted);
        for (kind, r, sent) in rings.iter_mut() {
            for n in posted..posted + step {
                let b = request(rng, r.entry, *kind as u64, r.q, n);
                assert!(d.env.mem.write(r.slot_addr(n), &b));
                sent.push(b);
            }
            r.doorbell(d, (posted + step) as u16);
        }
        posted += step;
        let each = 3 * posted as usize;
        run_until(d, 200_000, "fetching", |d| {
            d.env.engines.fetched[0].len() == each && d.env.engines.fetched[1].len() == each
        });
        for (_, r, _) in &rings {
            assert_eq!(u64::from(r.reg(d, "CONS")), posted, "{} {}", r.block, r.q);
        }
    }
    for (kind, r, sent) in &rings {
        let got: Vec<&Fetched> = d.env.engines.fetched[*kind]
            .iter()
            .filter(|f| f.queue == u64::from(r.q))
            .collect();
        assert_eq!(got.len(), sent.len(), "{} {}", r.block, r.q);
        for (n, (f, b)) in got.iter().zip(sent).enumerate() {
            assert!(!f.err, "{} {} #{n}", r.block, r.q);
            assert_eq!(f.index, n as u64, "{} {} #{n}", r.block, r.q);
            assert_eq!(&f.bytes, b, "{} {} #{n}", r.block, r.q);
        }
    }
}

/// A completion's bytes with its PHASE bit clear (the writer sets it) and a marker.
fn completion(rng: &mut Rng, cq: u32, n: u64) -> [u8; 32] {
    let mut b = [0u8; 32];
    for x in b.iter_mut() {
        *x = rng.next_u64() as u8;
    }
    b[..8].copy_from_slice(&(u64::from(cq) << 32 | n).to_le_bytes());
    let phase = CQE.field("PHASE").unwrap();
    b[usize::from(phase.byte)] &= !(1 << phase.bit);
    b
}

fn completion_rings(d: &mut SimDevice, rng: &mut Rng, rounds: u64) {
    let status = off("ctrl", "IRQ_STATUS", None);
    d.write32(off("ctrl", "IRQ_ENABLE", None), irq_bit("CQ"))
        .unwrap();
    let armed = Ring::new(d, "completion_queues", 1, 2, usize::from(CQE.size));
    let quiet = Ring::new(d, "completion_queues", 62, 3, usize::from(CQE.size));
    armed.program(d, armed.base, bits_of("completion_queues", "SIZE", "ARM"));
    let phase = CQE.field("PHASE").unwrap();
    let (mut cons_a, mut cons_q) = (0u64, 0u64);
    for round in 0..rounds {
        // One more than the armed ring holds: the last is refused and counted.
        let over0 = counter(d, "CQ_OVERFLOWS");
        let written0 = counter(d, "CQE_WRITTEN");
        let edges0 = d.env.irq_edges;
        let mut want_a = Vec::new();
        let mut want_q = Vec::new();
        for k in 0..5u64 {
            let b = completion(rng, 1, round * 8 + k);
            d.env.engines.cqes.push_back((1, b));
            if k < 4 {
                want_a.push(b);
            }
            let b = completion(rng, 62, round * 8 + k);
            d.env.engines.cqes.push_back((62, b));
            want_q.push(b);
        }
        run_until(d, 200_000, "completions", |d| d.env.engines.cqes.is_empty());
        d.run(200).unwrap();
        assert_eq!(counter(d, "CQ_OVERFLOWS") - over0, 1, "round {round}");
        assert_eq!(counter(d, "CQE_WRITTEN") - written0, 9, "round {round}");
        for (r, want, cons) in [
            (&armed, &want_a, &mut cons_a),
            (&quiet, &want_q, &mut cons_q),
        ] {
            assert_eq!(
                u64::from(r.reg(d, "PROD")),
                (*cons + want.len() as u64) & 0xFFFF,
                "CQ {} round {round}",
                r.q
            );
            for w in want.iter() {
                let mut b = *w;
                // The pass's phase: 1 on the first pass over the ring, then alternating.
                let pass = (*cons >> r.log) & 1;
                b[usize::from(phase.byte)] |= ((pass == 0) as u8) << phase.bit;
                let got = d.env.mem.read(r.slot_addr(*cons), 32).unwrap();
                assert_eq!(got, &b[..], "CQ {} entry {cons} round {round}", r.q);
                *cons += 1;
            }
            // The host consumes everything.
            r.doorbell(d, *cons as u16);
        }
        // The armed ring interrupted once (its first entry) and was disarmed.
        assert_eq!(d.env.irq_edges - edges0, 1, "round {round}");
        assert_ne!(d.read32(status).unwrap() & irq_bit("CQ"), 0);
        assert_eq!(
            armed.reg(d, "SIZE") & bits_of("completion_queues", "SIZE", "ARM"),
            0,
            "disarmed"
        );
        d.write32(status, irq_bit("CQ")).unwrap();
        d.run(4).unwrap();
        assert!(!d.env.irq_line, "the line falls once the cause is cleared");
        // Re-armed for the next round.
        armed.program(d, armed.base, bits_of("completion_queues", "SIZE", "ARM"));
    }
}

/// A ring whose base lies in no mapped buffer: the request comes out flagged, the DMA read
/// error is counted, nothing else moves.
fn unmapped_ring(d: &mut SimDevice) {
    let r = Ring::new(d, "send_queues", 9, 2, usize::from(SEND_WQE.size));
    r.program(d, 0x7000_0000_0000, 0);
    let errors0 = counter(d, "DMA_READ_ERRORS");
    let before = d.env.engines.fetched[0].len();
    r.doorbell(d, 1);
    run_until(d, 50_000, "the refused fetch", |d| {
        d.env.engines.fetched[0].len() == before + 1
    });
    let f = d.env.engines.fetched[0].last().unwrap().clone();
    assert!(f.err && f.queue == 9 && f.index == 0, "{f:?}");
    assert_eq!(counter(d, "DMA_READ_ERRORS") - errors0, 1);
}

fn whole_run(cfg: DeviceConfig, per_ring: u64, rounds: u64) {
    let mut d = SimDevice::new(cfg).unwrap();
    let mut rng = Rng::new(cfg.seed);
    d.write32(off("ctrl", "CTRL", None), bits_of("ctrl", "CTRL", "ENABLE"))
        .unwrap();
    let fetched0 = counter(&mut d, "WQE_FETCHED");
    work_rings(&mut d, &mut rng, per_ring);
    let fetched = (d.env.engines.fetched[0].len() + d.env.engines.fetched[1].len()) as u32;
    assert_eq!(counter(&mut d, "WQE_FETCHED") - fetched0, fetched);
    completion_rings(&mut d, &mut rng, rounds);
    unmapped_ring(&mut d);
    assert_eq!(d.env.dma.stats.refused_writes, 0);
    assert!(d.env.mac.sent.is_empty(), "nothing reached the wire");
}

#[test]
fn rings_in_lockstep_under_stalls() {
    whole_run(
        DeviceConfig {
            lockstep: true,
            seed: 3,
            stall: 0.3,
            idle: 0.0,
        },
        6,
        2,
    );
}

#[test]
fn every_index_wraps_in_verilator() {
    for (seed, stall) in [(1, 0.2), (2, 0.0), (3, 0.3)] {
        whole_run(
            DeviceConfig {
                lockstep: false,
                seed,
                stall,
                idle: 0.0,
            },
            40,
            6,
        );
    }
}
