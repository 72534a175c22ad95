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

use rnic_cosim::ports::{HdlPorts, PortDut, PortLockStep, VerilatedPorts};
use rnic_hw::completer::Completer;

use crate::bench_ports::BenchPorts;
use crate::host_memory::{DmaWrites, HostMemory, ReadBeat, SendRing};
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

pub struct CompleterSim<D: PortDut> {
    pub ports: BenchPorts<D>,
    qp_rows: Vec<Vec<u64>>,
    mr_rows: Vec<Vec<u64>>,
    rings: Vec<Option<SendRing>>,
    send_points: Vec<(u32, u16)>,
    memory: HostMemory,
}

impl CompleterSim<PortLockStep<Top>> {
    /// The `completer` top, rust-hdl and Verilator in lock-step.
    pub fn lockstep(seed: u64, stall: f64) -> Result<Self, String> {
        let d = PortLockStep::new(Top::default(), "completer", seed)?;
        Self::new(d, seed, stall)
    }
}

impl CompleterSim<VerilatedPorts> {
    /// The `completer` top, Verilator alone.
    pub fn verilated(seed: u64, stall: f64) -> Result<Self, String>
    where
        Top: HdlPorts,
    {
        let d = VerilatedPorts::of::<Top>("completer")?;
        Self::new(d, seed, stall)
    }
}

impl<D: PortDut> CompleterSim<D> {
    fn new(dut: D, seed: u64, stall: f64) -> Result<Self, String> {
        Ok(CompleterSim {
            ports: BenchPorts::new(dut, seed ^ 0xC0_4E7E, stall)?,
            qp_rows: vec![vec![0; 4]; ROWS],
            mr_rows: vec![vec![0; 4]; ROWS],
            rings: vec![None; ROWS],
            send_points: vec![(0, 0); ROWS],
            memory: HostMemory::default(),
        })
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
        self.rings[row] = Some(self.memory.send_ring(base, log));
    }

    /// Writes a `send_wqe` at the producer of QP `row`'s ring and moves the producer on.
    pub fn post(&mut self, row: usize, entry: &[u8]) -> Result<(), String> {
        let r = self.rings[row]
            .as_mut()
            .ok_or(format!("QP row {row} has no send ring"))?;
        self.memory.post_send(r, entry)
    }

    /// The requester's send point of QP `row` from now on: one past the highest PSN sent,
    /// and the ring index of the next request to start.
    pub fn set_send_point(&mut self, row: usize, sent: u32, nstart: u16) {
        self.send_points[row] = (sent, nstart);
    }

    /// Starts QP `row`'s rows (the QP entering RTS): its first PSN, the ring's producer as the
    /// consumer, the retry counters.
    pub fn init_qp(&mut self, row: usize, psn: u32, retry: u8, rnr: u8) -> Result<(), String> {
        let index = self.rings[row]
            .map(|r| r.prod)
            .ok_or(format!("QP row {row} has no send ring"))?;
        self.ports.set("s_init_valid", 1);
        self.ports.set("s_init_qp", row as u64);
        self.ports.set("s_init_psn", psn.into());
        self.ports.set("s_init_index", index.into());
        self.ports.set("s_init_retry", retry.into());
        self.ports.set("s_init_rnr", rnr.into());
        for _ in 0..20 {
            self.ports.settle()?;
            let took = self.ports.get("s_init_ready") == 1;
            self.ports.tick();
            if took {
                self.ports.set("s_init_valid", 0);
                for _ in 0..40 {
                    self.ports.settle()?;
                    if self.ports.get("busy") == 0 {
                        return Ok(());
                    }
                    self.ports.tick();
                }
            }
        }
        Err(format!("QP row {row}'s rows were never started"))
    }

    /// QP `row`'s view, as the requester reads it.
    pub fn view(&mut self, row: usize) -> Result<View, String> {
        self.ports.set("cv_look_qp", row as u64);
        self.ports.settle()?;
        self.ports.tick();
        self.ports.settle()?;
        Ok(View {
            oldest: self.ports.get("cv_got_oldest") as u32,
            cons: self.ports.get("cv_got_cons") as u16,
            front: self.ports.get("cv_got_front") as u32,
            rd_done: self.ports.get("cv_got_rd_done") as u8,
            rewinds: self.ports.get("cv_got_rewinds") as u8,
            rnr: self.ports.get("cv_got_rnr") == 1,
            err: self.ports.get("cv_got_err") == 1,
        })
    }

    /// One event, until the engine is idle again.
    pub fn handle(&mut self, ev: &Event) -> Result<Handled, String> {
        let mut out = Handled::default();
        let start = self.ports.cycle;
        let (valid, ready) = match ev {
            Event::Response(..) => ("s_hdr_valid", "s_hdr_ready"),
            Event::Expiry(..) => ("s_exp_valid", "s_exp_ready"),
            Event::Refused(..) => ("s_fail_valid", "s_fail_ready"),
        };
        let mut payload: VecDeque<(u64, u64, bool)> = VecDeque::new();
        match ev {
            Event::Response(hdr, bytes) => {
                self.ports.set_words("s_hdr_data", hdr);
                let n = bytes.len().div_ceil(8);
                for (k, c) in bytes.chunks(8).enumerate() {
                    let mut w = [0u8; 8];
                    w[..c.len()].copy_from_slice(c);
                    let keep = (1u64 << c.len()) - 1;
                    payload.push_back((u64::from_le_bytes(w), keep, k + 1 == n));
                }
            }
            Event::Expiry(row, rnr) => {
                self.ports.set("s_exp_qp", *row as u64);
                self.ports.set("s_exp_rnr", u64::from(*rnr));
            }
            Event::Refused(row, index, status) => {
                self.ports.set("s_fail_qp", *row as u64);
                self.ports.set("s_fail_index", (*index).into());
                self.ports.set("s_fail_status", (*status).into());
            }
        }
        let (mut taken, mut was_busy) = (false, false);
        let mut beats: VecDeque<ReadBeat> = VecDeque::new();
        let (mut beat_shown, mut pay_shown) = (false, false);
        let (mut qp_got, mut sq_got) = (None, None);
        let mut mr_got = 0usize;
        let mut sp_q = 0usize;
        let mut cqe = Vec::new();
        let mut writes = DmaWrites::default();
        for _ in 0..2_000_000u64 {
            let c = self.ports.cycle;
            let offer = !taken && self.ports.go();
            self.ports.set(valid, u64::from(offer));
            pay_shown = taken && !payload.is_empty() && (pay_shown || self.ports.go());
            let (pd, pk, pl) = payload.front().copied().unwrap_or((0, 0, false));
            self.ports.set("s_axis_tvalid", u64::from(pay_shown));
            self.ports.set("s_axis_tdata", pd);
            self.ports.set("s_axis_tkeep", pk);
            self.ports.set("s_axis_tlast", u64::from(pl));
            let (qr, sr, mr) = (self.ports.go(), self.ports.go(), self.ports.go());
            self.ports.set("qp_look_ready", u64::from(qr));
            self.ports.set("sq_look_ready", u64::from(sr));
            self.ports.set("mr_look_ready", u64::from(mr));
            let qp = qp_got.map_or(vec![0; 4], |r: usize| self.qp_rows[r].clone());
            self.ports.set_words("qp_got_data", &qp);
            let (sent, nstart) = self.send_points[sp_q];
            self.ports.set("sp_got_sent", sent.into());
            self.ports.set("sp_got_nstart", nstart.into());
            let ring = sq_got.and_then(|r: usize| self.rings[r]);
            self.ports.set("sq_got_valid", u64::from(ring.is_some()));
            let ring = ring.unwrap_or_default();
            self.ports.set("sq_got_base", ring.base);
            self.ports.set("sq_got_size", ring.size_word());
            self.ports.set("sq_got_prod", ring.prod.into());
            let mrow = self.mr_rows[mr_got].clone();
            self.ports.set_words("mr_got_data", &mrow);
            let rq = self.ports.go();
            self.ports.set("m_dma_rd_req_ready", u64::from(rq));
            beat_shown = !beats.is_empty() && (beat_shown || self.ports.go());
            let (bd, bl, be) = beats.front().copied().unwrap_or((0, false, false));
            self.ports.set("m_dma_rd_data_valid", u64::from(beat_shown));
            self.ports.set("m_dma_rd_data", bd);
            self.ports.set("m_dma_rd_data_last", u64::from(bl));
            self.ports.set("m_dma_rd_data_err", u64::from(be));
            let (wq, wd) = (self.ports.go(), self.ports.go());
            self.ports
                .set("m_dma_wr_req_ready", u64::from(wq && writes.can_take()));
            self.ports.set("m_dma_wr_data_ready", u64::from(wd));
            self.ports
                .set("m_dma_wr_done_valid", u64::from(writes.done().is_some()));
            self.ports.set("m_dma_wr_done_err", 0);
            let (cr, tr) = (self.ports.go(), self.ports.go());
            self.ports.set("m_cqe_ready", u64::from(cr));
            self.ports.set("m_tmr_ready", u64::from(tr));
            self.ports.settle()?;

            if offer && self.ports.get(ready) == 1 {
                taken = true;
            }
            if pay_shown && self.ports.get("s_axis_tready") == 1 {
                payload.pop_front();
                pay_shown = false;
            }
            qp_got = (qr && self.ports.get("qp_look_valid") == 1)
                .then(|| self.ports.get("qp_look_row") as usize);
            sq_got = (sr && self.ports.get("sq_look_valid") == 1)
                .then(|| self.ports.get("sq_look_queue") as usize);
            if mr && self.ports.get("mr_look_valid") == 1 {
                mr_got = self.ports.get("mr_look_row") as usize;
            }
            sp_q = self.ports.get("sp_look_qp") as usize;
            if rq && self.ports.get("m_dma_rd_req_valid") == 1 {
                let addr = self.ports.get("m_dma_rd_req_addr");
                let len = self.ports.get("m_dma_rd_req_len") as usize;
                let read = self.memory.read_beats(addr, len);
                beats.extend(read.map_err(|e| format!("cycle {c}: {e}"))?);
            }
            if beat_shown && self.ports.get("m_dma_rd_data_ready") == 1 {
                beats.pop_front();
                beat_shown = false;
            }
            writes.clock();
            if wq && writes.can_take() && self.ports.get("m_dma_wr_req_valid") == 1 {
                let addr = self.ports.get("m_dma_wr_req_addr");
                let len = self.ports.get("m_dma_wr_req_len") as usize;
                writes.request(addr, len, 0);
            }
            if wd && self.ports.get("m_dma_wr_data_valid") == 1 {
                let keep = self.ports.get("m_dma_wr_data_keep");
                let data = self.ports.get("m_dma_wr_data");
                let last = self.ports.get("m_dma_wr_data_last") == 1;
                let ports = &mut self.ports;
                writes
                    .beat(&mut self.memory, data, keep, last, || {
                        DmaWrites::done_delay(ports)
                    })
                    .map_err(|e| format!("cycle {c}: {e}"))?;
            }
            if cr && self.ports.get("m_cqe_valid") == 1 {
                cqe.extend_from_slice(&self.ports.get("m_cqe_data").to_le_bytes());
                if self.ports.get("m_cqe_last") == 1 {
                    let e: [u8; 32] = cqe
                        .as_slice()
                        .try_into()
                        .map_err(|_| format!("cycle {c}: a completion of {} bytes", cqe.len()))?;
                    out.cqes.push((self.ports.get("m_cqe_cq") as u16, e));
                    cqe.clear();
                }
            }
            if tr && self.ports.get("m_tmr_valid") == 1 {
                out.timers.push(TimerCmd {
                    qp: self.ports.get("m_tmr_qp") as usize,
                    arm: self.ports.get("m_tmr_arm") == 1,
                    rnr: self.ports.get("m_tmr_rnr") == 1,
                    code: self.ports.get("m_tmr_code") as u8,
                });
            }
            if self.ports.get("m_kick_valid") == 1 {
                out.kicks.push(self.ports.get("m_kick_qp") as usize);
            }
            let idle = was_busy && self.ports.get("busy") == 0;
            was_busy |= taken && self.ports.get("busy") == 1;
            self.ports.tick();
            if idle && payload.is_empty() && writes.idle() {
                if !beats.is_empty() || !cqe.is_empty() {
                    return Err(format!(
                        "cycle {c}: idle with a read or a completion unfinished"
                    ));
                }
                self.ports.set(valid, 0);
                self.ports.set("s_axis_tvalid", 0);
                out.cycles = self.ports.cycle - start;
                return Ok(out);
            }
        }
        Err(format!("the event {ev:?} was never done"))
    }
}
