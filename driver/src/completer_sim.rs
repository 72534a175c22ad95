//! The hardware completer ([`rnic_hw::completer`]) in simulation, with what surrounds it in the
//! NIC: its QP attribute and memory region rows (as [`crate::tables`] encodes them), one send
//! ring per QP in host memory (the requests as [`crate::queues::encode_send`] writes them, a
//! producer index), host memory behind its DMA port (request reads, READ data and atomic
//! values written), the requester's send point of each QP (set by the caller), and one event
//! at a time: a response (its transport header words and payload), a timer's expiry, or a
//! request the requester refused. Each returns what the engine did: the completions it wrote
//! (`cqe` entries, with their CQ), its timer commands and its doorbells. Every ready the engine
//! waits on and every offer stalls at random with chance `stall` per cycle (0: none).
//!
//! Used by the tests (rust-hdl and Verilator in lock-step).

use std::collections::VecDeque;

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{HdlPorts, PortDut, PortLockStep, VerilatedPorts};
use rnic_hw::completer::Completer;

use crate::host_memory::{HostMemory, ReadBeat};
pub use crate::requester_sim::View;

/// The `completer` top.
pub type Top = Completer<6>;
/// QP and region rows of the `completer` top.
pub const ROWS: usize = Top::ROWS;

/// A timer command: arm (an RNR wait with the NAK's code, or the ACK timer with TIMEOUT) or
/// stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerCmd {
    pub qp: usize,
    pub arm: bool,
    pub rnr: bool,
    pub code: u8,
}

/// What the engine did with one event.
#[derive(Clone, Debug, Default)]
pub struct Handled {
    /// Completions, with their CQ, in order.
    pub cqes: Vec<(u16, [u8; 32])>,
    pub timers: Vec<TimerCmd>,
    /// QP rows whose doorbell rang.
    pub kicks: Vec<usize>,
    /// Cycles from the offer to the engine idle again.
    pub cycles: u64,
}

/// An event for the engine.
#[derive(Clone, Debug)]
pub enum Event {
    /// A response: its transport header words and payload.
    Response(Vec<u64>, Vec<u8>),
    /// QP row `.0`'s timer expired: an RNR wait's end (`.1`) or an ACK timeout.
    Expiry(usize, bool),
    /// The requester refused QP row `.0`'s request at ring index `.1` with status `.2`.
    Refused(usize, u16, u8),
}

#[derive(Clone, Copy, Debug)]
struct Ring {
    base: u64,
    log: u32,
    prod: u16,
}

pub struct CompleterSim<D: PortDut> {
    pub dut: D,
    rng: Rng,
    stall: f64,
    qp_rows: Vec<Vec<u64>>,
    mr_rows: Vec<Vec<u64>>,
    rings: Vec<Option<Ring>>,
    send_points: Vec<(u32, u16)>,
    memory: HostMemory,
    pub cycle: u64,
}

impl CompleterSim<PortLockStep<Top>> {
    /// The `completer` top, rust-hdl and Verilator in lock-step.
    pub fn lockstep(seed: u64, stall: f64) -> Result<Self, String> {
        let d = PortLockStep::new(Top::default(), "completer", seed)?;
        Ok(Self::new(d, seed, stall))
    }
}

impl CompleterSim<VerilatedPorts> {
    /// The `completer` top, Verilator alone.
    pub fn verilated(seed: u64, stall: f64) -> Result<Self, String>
    where
        Top: HdlPorts,
    {
        let d = VerilatedPorts::of::<Top>("completer")?;
        Ok(Self::new(d, seed, stall))
    }
}

impl<D: PortDut> CompleterSim<D> {
    fn new(mut dut: D, seed: u64, stall: f64) -> Self {
        let r = dut.input("reset");
        dut.set(r, 1);
        for _ in 0..4 {
            dut.settle().expect("reset settles");
            dut.tick();
        }
        dut.set(r, 0);
        CompleterSim {
            dut,
            rng: Rng::new(seed ^ 0xC0_4E7E),
            stall,
            qp_rows: vec![vec![0; 4]; ROWS],
            mr_rows: vec![vec![0; 4]; ROWS],
            rings: vec![None; ROWS],
            send_points: vec![(0, 0); ROWS],
            memory: HostMemory::default(),
            cycle: 0,
        }
    }

    /// QP attribute row `row` (the words of its port).
    pub fn set_qp(&mut self, row: usize, words: Vec<u64>) {
        self.qp_rows[row] = words;
    }

    /// Memory region row `row`.
    pub fn set_mr(&mut self, row: usize, words: Vec<u64>) {
        self.mr_rows[row] = words;
    }

    /// Host memory at device address `base`, holding `bytes`.
    pub fn map(&mut self, base: u64, bytes: &[u8]) {
        self.memory.map(base, bytes.len());
        self.memory.fill(base, bytes);
    }

    /// `len` bytes of host memory at `addr`.
    pub fn read(&self, addr: u64, len: usize) -> Option<&[u8]> {
        self.memory.read(addr, len)
    }

    /// QP `row`'s send ring: `2^log` requests of 128 bytes at `base` (mapped here), empty.
    pub fn set_ring(&mut self, row: usize, base: u64, log: u32) {
        self.memory.map(base, 128 << log);
        self.rings[row] = Some(Ring { base, log, prod: 0 });
    }

    /// Writes a `send_wqe` at the producer of QP `row`'s ring and moves the producer on.
    pub fn post(&mut self, row: usize, entry: &[u8]) -> Result<(), String> {
        let r = self.rings[row].ok_or(format!("QP row {row} has no send ring"))?;
        let at = r.base + 128 * u64::from(r.prod & ((1 << r.log) - 1) as u16);
        if !self.memory.fill(at, entry) {
            return Err(format!("the ring slot at {at:#x} is not mapped"));
        }
        self.rings[row] = Some(Ring {
            prod: r.prod.wrapping_add(1),
            ..r
        });
        Ok(())
    }

    /// The requester's send point of QP `row` from now on: one past the highest PSN sent,
    /// and the ring index of the next request to start.
    pub fn set_send_point(&mut self, row: usize, sent: u32, nstart: u16) {
        self.send_points[row] = (sent, nstart);
    }

    fn set(&mut self, name: &str, v: u64) {
        let i = self.dut.input(name);
        self.dut.set(i, v);
    }

    fn set_words(&mut self, name: &str, w: &[u64]) {
        let i = self.dut.input(name);
        self.dut.set_words(i, w);
    }

    pub fn get(&self, name: &str) -> u64 {
        self.dut.get(self.dut.output(name))
    }

    fn settle(&mut self) -> Result<(), String> {
        self.dut.settle().map_err(|e| e.to_string())
    }

    fn tick(&mut self) {
        self.dut.tick();
        self.cycle += 1;
    }

    fn go(&mut self) -> bool {
        self.stall == 0.0 || !self.rng.chance(self.stall)
    }

    /// Starts QP `row`'s rows (the QP entering RTS): its first PSN, the ring's producer as the
    /// consumer, the retry counters.
    pub fn init_qp(&mut self, row: usize, psn: u32, retry: u8, rnr: u8) -> Result<(), String> {
        let index = self.rings[row]
            .map(|r| r.prod)
            .ok_or(format!("QP row {row} has no send ring"))?;
        self.set("s_init_valid", 1);
        self.set("s_init_qp", row as u64);
        self.set("s_init_psn", psn.into());
        self.set("s_init_index", index.into());
        self.set("s_init_retry", retry.into());
        self.set("s_init_rnr", rnr.into());
        for _ in 0..20 {
            self.settle()?;
            let took = self.get("s_init_ready") == 1;
            self.tick();
            if took {
                self.set("s_init_valid", 0);
                for _ in 0..40 {
                    self.settle()?;
                    if self.get("busy") == 0 {
                        return Ok(());
                    }
                    self.tick();
                }
            }
        }
        Err(format!("QP row {row}'s rows were never started"))
    }

    /// QP `row`'s view, as the requester reads it.
    pub fn view(&mut self, row: usize) -> Result<View, String> {
        self.set("cv_look_qp", row as u64);
        self.settle()?;
        self.tick();
        self.settle()?;
        Ok(View {
            oldest: self.get("cv_got_oldest") as u32,
            cons: self.get("cv_got_cons") as u16,
            front: self.get("cv_got_front") as u32,
            rd_done: self.get("cv_got_rd_done") as u8,
            rewinds: self.get("cv_got_rewinds") as u8,
            rnr: self.get("cv_got_rnr") == 1,
            err: self.get("cv_got_err") == 1,
        })
    }

    /// One event, until the engine is idle again.
    pub fn handle(&mut self, ev: &Event) -> Result<Handled, String> {
        let mut out = Handled::default();
        let start = self.cycle;
        let (valid, ready) = match ev {
            Event::Response(..) => ("s_hdr_valid", "s_hdr_ready"),
            Event::Expiry(..) => ("s_exp_valid", "s_exp_ready"),
            Event::Refused(..) => ("s_fail_valid", "s_fail_ready"),
        };
        let mut payload: VecDeque<(u64, u64, bool)> = VecDeque::new();
        match ev {
            Event::Response(hdr, bytes) => {
                self.set_words("s_hdr_data", hdr);
                let n = bytes.len().div_ceil(8);
                for (k, c) in bytes.chunks(8).enumerate() {
                    let mut w = [0u8; 8];
                    w[..c.len()].copy_from_slice(c);
                    let keep = (1u64 << c.len()) - 1;
                    payload.push_back((u64::from_le_bytes(w), keep, k + 1 == n));
                }
            }
            Event::Expiry(row, rnr) => {
                self.set("s_exp_qp", *row as u64);
                self.set("s_exp_rnr", u64::from(*rnr));
            }
            Event::Refused(row, index, status) => {
                self.set("s_fail_qp", *row as u64);
                self.set("s_fail_index", (*index).into());
                self.set("s_fail_status", (*status).into());
            }
        }
        let (mut taken, mut was_busy) = (false, false);
        let mut beats: VecDeque<ReadBeat> = VecDeque::new();
        let (mut beat_shown, mut pay_shown) = (false, false);
        let (mut qp_got, mut sq_got) = (None, None);
        let mut mr_got = 0usize;
        let mut sp_q = 0usize;
        let mut cqe = Vec::new();
        let mut write: Option<(u64, usize, Vec<u8>)> = None;
        let mut dones: VecDeque<u32> = VecDeque::new();
        for _ in 0..2_000_000u64 {
            let c = self.cycle;
            let offer = !taken && self.go();
            self.set(valid, u64::from(offer));
            pay_shown = taken && !payload.is_empty() && (pay_shown || self.go());
            let (pd, pk, pl) = payload.front().copied().unwrap_or((0, 0, false));
            self.set("s_axis_tvalid", u64::from(pay_shown));
            self.set("s_axis_tdata", pd);
            self.set("s_axis_tkeep", pk);
            self.set("s_axis_tlast", u64::from(pl));
            let (qr, sr, mr) = (self.go(), self.go(), self.go());
            self.set("qp_look_ready", u64::from(qr));
            self.set("sq_look_ready", u64::from(sr));
            self.set("mr_look_ready", u64::from(mr));
            let qp = qp_got.map_or(vec![0; 4], |r: usize| self.qp_rows[r].clone());
            self.set_words("qp_got_data", &qp);
            let (sent, nstart) = self.send_points[sp_q];
            self.set("sp_got_sent", sent.into());
            self.set("sp_got_nstart", nstart.into());
            let ring = sq_got.and_then(|r: usize| self.rings[r]);
            self.set("sq_got_valid", u64::from(ring.is_some()));
            let ring = ring.unwrap_or(Ring {
                base: 0,
                log: 0,
                prod: 0,
            });
            self.set("sq_got_base", ring.base);
            self.set("sq_got_size", u64::from(ring.log) | 1 << 8);
            self.set("sq_got_prod", ring.prod.into());
            let mrow = self.mr_rows[mr_got].clone();
            self.set_words("mr_got_data", &mrow);
            let rq = self.go();
            self.set("m_dma_rd_req_ready", u64::from(rq));
            beat_shown = !beats.is_empty() && (beat_shown || self.go());
            let (bd, bl, be) = beats.front().copied().unwrap_or((0, false, false));
            self.set("m_dma_rd_data_valid", u64::from(beat_shown));
            self.set("m_dma_rd_data", bd);
            self.set("m_dma_rd_data_last", u64::from(bl));
            self.set("m_dma_rd_data_err", u64::from(be));
            let (wq, wd) = (self.go(), self.go());
            self.set("m_dma_wr_req_ready", u64::from(wq && write.is_none()));
            self.set("m_dma_wr_data_ready", u64::from(wd));
            let done = dones.front() == Some(&0);
            self.set("m_dma_wr_done_valid", u64::from(done));
            self.set("m_dma_wr_done_err", 0);
            let (cr, tr) = (self.go(), self.go());
            self.set("m_cqe_ready", u64::from(cr));
            self.set("m_tmr_ready", u64::from(tr));
            self.settle()?;

            if offer && self.get(ready) == 1 {
                taken = true;
            }
            if pay_shown && self.get("s_axis_tready") == 1 {
                payload.pop_front();
                pay_shown = false;
            }
            qp_got =
                (qr && self.get("qp_look_valid") == 1).then(|| self.get("qp_look_row") as usize);
            sq_got =
                (sr && self.get("sq_look_valid") == 1).then(|| self.get("sq_look_queue") as usize);
            if mr && self.get("mr_look_valid") == 1 {
                mr_got = self.get("mr_look_row") as usize;
            }
            sp_q = self.get("sp_look_qp") as usize;
            if rq && self.get("m_dma_rd_req_valid") == 1 {
                let addr = self.get("m_dma_rd_req_addr");
                let len = self.get("m_dma_rd_req_len") as usize;
                let read = self.memory.read_beats(addr, len);
                beats.extend(read.map_err(|e| format!("cycle {c}: {e}"))?);
            }
            if beat_shown && self.get("m_dma_rd_data_ready") == 1 {
                beats.pop_front();
                beat_shown = false;
            }
            if done {
                dones.pop_front();
            }
            for d in dones.iter_mut() {
                *d = d.saturating_sub(1);
            }
            if wq && write.is_none() && self.get("m_dma_wr_req_valid") == 1 {
                let addr = self.get("m_dma_wr_req_addr");
                let len = self.get("m_dma_wr_req_len") as usize;
                write = Some((addr, len, Vec::new()));
            }
            if wd && self.get("m_dma_wr_data_valid") == 1 {
                let keep = self.get("m_dma_wr_data_keep");
                let data = self.get("m_dma_wr_data").to_le_bytes();
                let last = self.get("m_dma_wr_data_last") == 1;
                let Some((addr, len, mut bytes)) = write.take() else {
                    return Err(format!("cycle {c}: write data before its request"));
                };
                let n = keep.trailing_ones() as usize;
                if keep >> n != 0 || (bytes.len() % 8 != 0 && n > 0) {
                    return Err(format!("cycle {c}: a write beat keeping {keep:#x}"));
                }
                bytes.extend_from_slice(&data[..n]);
                if last {
                    if bytes.len() != len || !self.memory.fill(addr, &bytes) {
                        return Err(format!(
                            "cycle {c}: a DMA write of {} bytes ({len} announced) at {addr:#x}",
                            bytes.len()
                        ));
                    }
                    let delay = if self.stall == 0.0 {
                        0
                    } else {
                        self.rng.below(4) as u32
                    };
                    dones.push_back(delay);
                } else {
                    write = Some((addr, len, bytes));
                }
            }
            if cr && self.get("m_cqe_valid") == 1 {
                cqe.extend_from_slice(&self.get("m_cqe_data").to_le_bytes());
                if self.get("m_cqe_last") == 1 {
                    let e: [u8; 32] = cqe
                        .as_slice()
                        .try_into()
                        .map_err(|_| format!("cycle {c}: a completion of {} bytes", cqe.len()))?;
                    out.cqes.push((self.get("m_cqe_cq") as u16, e));
                    cqe.clear();
                }
            }
            if tr && self.get("m_tmr_valid") == 1 {
                out.timers.push(TimerCmd {
                    qp: self.get("m_tmr_qp") as usize,
                    arm: self.get("m_tmr_arm") == 1,
                    rnr: self.get("m_tmr_rnr") == 1,
                    code: self.get("m_tmr_code") as u8,
                });
            }
            if self.get("m_kick_valid") == 1 {
                out.kicks.push(self.get("m_kick_qp") as usize);
            }
            let idle = was_busy && self.get("busy") == 0;
            was_busy |= taken && self.get("busy") == 1;
            self.tick();
            if idle && payload.is_empty() && write.is_none() && dones.is_empty() {
                if !beats.is_empty() || !cqe.is_empty() {
                    return Err(format!(
                        "cycle {c}: idle with a read or a completion unfinished"
                    ));
                }
                self.set(valid, 0);
                self.set("s_axis_tvalid", 0);
                out.cycles = self.cycle - start;
                return Ok(out);
            }
        }
        Err(format!("the event {ev:?} was never done"))
    }
}
