//! The completion path (queue manager and completion writer) in lock-step under a random
//! host: entries land at the producer's slot with this pass's phase, the producer advances
//! only after the write is done, a full or disabled ring refuses (counted), an armed CQ
//! interrupts once and is disarmed, and the host reads back what the writer committed.

use std::collections::HashMap;

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{PortDut, PortLockStep};
use rnic_hw::cq_path::CqPath;

type Dut = PortLockStep<CqPath<2>>;

struct Bench {
    d: Dut,
    rng: Rng,
    mem: HashMap<u64, u64>,
    write: Option<(u64, Vec<u64>)>,
    done: bool,
    events: Vec<(&'static str, u64)>,
}

impl Bench {
    fn set(&mut self, n: &str, v: u64) {
        let i = self.d.input(n);
        self.d.set(i, v);
    }
    fn get(&self, n: &str) -> u64 {
        self.d.get(self.d.output(n))
    }

    /// One cycle with the DMA host model; `beat` offers a completion beat (cq, data, last).
    /// Returns whether the beat was taken.
    fn cycle(&mut self, beat: Option<(u64, u64, bool)>) -> bool {
        let req_ready = self.write.is_none() && !self.done && !self.rng.chance(0.3);
        let data_ready = self.write.is_some() && !self.rng.chance(0.3);
        self.set("wr_req_ready", u64::from(req_ready));
        self.set("wr_data_ready", u64::from(data_ready));
        self.set("wr_done_valid", u64::from(self.done));
        self.set("wr_done_err", 0);
        let (cq, data, last) = beat.unwrap_or((0, 0, false));
        self.set("s_cqe_valid", u64::from(beat.is_some()));
        self.set("s_cqe_cq", cq);
        self.set("s_cqe_data", data);
        self.set("s_cqe_last", u64::from(last));
        self.d.settle().unwrap_or_else(|m| panic!("{m}"));
        self.done = false;
        if req_ready && self.get("wr_req_valid") != 0 {
            assert_eq!(self.get("wr_req_len"), 32);
            self.write = Some((self.get("wr_req_addr"), Vec::new()));
        }
        if data_ready && self.get("wr_data_valid") != 0 {
            let (addr, mut beats) = self.write.take().unwrap();
            beats.push(self.get("wr_data"));
            if self.get("wr_data_last") != 0 {
                assert_eq!(beats.len(), 4, "a CQE is four beats");
                for (k, b) in beats.iter().enumerate() {
                    self.mem.insert(addr + 8 * k as u64, *b);
                }
                self.done = true;
            } else {
                self.write = Some((addr, beats));
            }
        }
        for e in ["ev_written", "ev_overflow", "ev_irq"] {
            if self.get(e) != 0 {
                self.events.push((e, self.get("ev_irq_cq")));
            }
        }
        let taken = beat.is_some() && self.get("s_cqe_ready") != 0;
        self.d.tick();
        taken
    }

    fn reg_write(&mut self, q: u64, word: u64, v: u64) {
        self.set("reg_wr_en", 1);
        self.set("reg_wr_queue", q);
        self.set("reg_wr_word", word);
        self.set("reg_wr_data", v);
        self.cycle(None);
        self.set("reg_wr_en", 0);
    }

    fn reg_read(&mut self, q: u64, word: u64) -> u64 {
        self.set("reg_rd_start", 1);
        self.set("reg_rd_queue", q);
        self.set("reg_rd_word", word);
        self.cycle(None);
        self.set("reg_rd_start", 0);
        self.d.settle().unwrap();
        self.get("reg_rd_data")
    }
}

fn base(q: u64) -> u64 {
    0x10_0000 * (q + 1)
}

#[test]
fn completions_land_in_order_with_their_phase_and_full_rings_refuse() {
    for seed in 1..=3 {
        let d = PortLockStep::new(CqPath::<2>::default(), "cq_path", seed).unwrap();
        let mut b = Bench {
            d,
            rng: Rng::new(seed),
            mem: HashMap::new(),
            write: None,
            done: false,
            events: Vec::new(),
        };
        b.set("reset", 1);
        b.cycle(None);
        b.set("reset", 0);
        // Four 4-entry rings: 0 and 1 consumed by the host now and then (1 armed), 2 never
        // consumed (fills up), 3 disabled.
        for q in 0..4u64 {
            b.reg_write(q, 0, base(q));
            b.reg_write(q, 1, 0);
            let size = match q {
                1 => 2 | 1 << 8 | 1 << 9,
                3 => 2,
                _ => 2 | 1 << 8,
            };
            b.reg_write(q, 2, size);
            b.reg_write(q, 3, 0);
            b.reg_write(q, 4, 0);
        }
        let (mut prod, mut cons) = ([0u64; 4], [0u64; 4]);
        let (mut written, mut refused) = (0, 0);
        for n in 0..60u64 {
            let q = b.rng.below(4);
            if b.rng.chance(0.4) {
                let c = b.rng.below(2);
                cons[c as usize] = prod[c as usize];
                b.reg_write(c, 4, cons[c as usize]);
            }
            let data: Vec<u64> = (0..4)
                .map(|k| ((n << 8 | k) * 0x0101_0101) & !(1 << 63))
                .collect();
            b.events.clear();
            let mut k = 0;
            let mut cycles = 0;
            while k < 4 {
                if b.cycle(Some((q, data[k], k == 3))) {
                    k += 1;
                }
                cycles += 1;
                assert!(cycles < 500, "seed {seed}: completion {n} stuck");
            }
            while !b.events.iter().any(|e| e.0 != "ev_irq") {
                b.cycle(None);
                cycles += 1;
                assert!(cycles < 1000, "seed {seed}: completion {n} never finished");
            }
            let full = prod[q as usize] - cons[q as usize] >= 4;
            if q == 3 || full {
                assert!(
                    b.events.iter().any(|e| e.0 == "ev_overflow"),
                    "seed {seed} n {n}"
                );
                refused += 1;
                continue;
            }
            let p = prod[q as usize];
            let slot = base(q) + 32 * (p % 4);
            let phase = u64::from((p >> 2) & 1 == 0);
            for (k, want) in data.iter().enumerate() {
                let want = if k == 3 { want | phase << 63 } else { *want };
                assert_eq!(
                    b.mem.get(&(slot + 8 * k as u64)),
                    Some(&want),
                    "seed {seed} n {n}"
                );
            }
            let irq = b.events.iter().filter(|e| e.0 == "ev_irq").count();
            assert_eq!(
                irq,
                usize::from(q == 1 && p == 0),
                "seed {seed}: armed once"
            );
            prod[q as usize] += 1;
            written += 1;
        }
        assert!(written > 20 && refused > 5, "{written} {refused}");
        for q in 0..3u64 {
            assert_eq!(b.reg_read(q, 3), prod[q as usize], "PROD of CQ {q}");
        }
        assert_eq!(b.reg_read(1, 2) >> 9 & 1, 0, "CQ 1 disarmed");
        assert_eq!(b.reg_read(0, 2), 2 | 1 << 8);
    }
}
