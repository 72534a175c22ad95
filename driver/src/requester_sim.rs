//! The hardware requester ([`rnic_hw::requester`]) in simulation, with what surrounds it in the
//! NIC: its QP attribute and memory region rows (as [`crate::tables`] encodes them), one send
//! ring per QP in host memory (the requests as [`crate::queues::encode_send`] writes them, a
//! producer index), host memory behind its DMA port, the completer's view of each QP (set by
//! the caller between runs), and the scheduler's turns: [`RequesterSim::turns`] gives QPs
//! turns in round robin, each until one of its turns ends without `more`, and returns the
//! packets sent (QP row, send descriptor and payload) and the requests handed to the
//! completer to fail. Every ready the engine waits
//! on and every offer stalls at random with chance `stall` per cycle (0: none).
//!
//! Used by the tests (rust-hdl and Verilator in lock-step) and by `rnic bench requester`
//! (Verilator alone).

use std::collections::VecDeque;

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{HdlPorts, PortDut, PortLockStep, VerilatedPorts, field};
use rnic_hw::requester::Requester;
use rnic_hw::transport_header::th_offset_of;

use crate::host_memory::{HostMemory, ReadBeat};

/// The `requester` top.
pub type Top = Requester<6, 10>;
/// QP and region rows of the `requester` top.
pub const ROWS: usize = Top::ROWS;

/// A packet the engine sent: its send descriptor (transport header words) and payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sent {
    pub qp: usize,
    pub desc: Vec<u64>,
    pub payload: Vec<u8>,
    /// The cycle its descriptor left.
    pub cycle: u64,
}

/// What the completer tells the requester about a QP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct View {
    /// The oldest unacknowledged PSN.
    pub oldest: u32,
    /// The send ring's consumer and the first PSN of its request (once started).
    pub cons: u16,
    pub front: u32,
    /// READs and atomics completed, rewinds asked for (each mod 16).
    pub rd_done: u8,
    pub rewinds: u8,
    /// An RNR wait is under way.
    pub rnr: bool,
    /// A request failed and the ring was flushed.
    pub err: bool,
}

/// What a run of turns did.
#[derive(Clone, Debug, Default)]
pub struct Turns {
    pub sent: Vec<Sent>,
    /// Requests handed to the completer to fail: QP row, send ring index, `ibv_wc_status`.
    pub fails: Vec<(usize, u16, u8)>,
    /// Turns taken, and cycles from the first offer to the last payload out.
    pub turns: u64,
    pub cycles: u64,
}

/// A send ring in host memory.
#[derive(Clone, Copy, Debug)]
struct Ring {
    base: u64,
    log: u32,
    prod: u16,
}

pub struct RequesterSim<D: PortDut> {
    pub dut: D,
    rng: Rng,
    stall: f64,
    qp_rows: Vec<Vec<u64>>,
    mr_rows: Vec<Vec<u64>>,
    rings: Vec<Option<Ring>>,
    views: Vec<View>,
    /// Host memory behind the DMA port.
    memory: HostMemory,
    pub cycle: u64,
}

impl RequesterSim<PortLockStep<Top>> {
    /// The `requester` top, rust-hdl and Verilator in lock-step.
    pub fn lockstep(seed: u64, stall: f64) -> Result<Self, String> {
        let d = PortLockStep::new(Top::default(), "requester", seed)?;
        Ok(Self::new(d, seed, stall))
    }
}

impl RequesterSim<VerilatedPorts> {
    /// The `requester` top, Verilator alone.
    pub fn verilated(seed: u64, stall: f64) -> Result<Self, String>
    where
        Top: HdlPorts,
    {
        let d = VerilatedPorts::of::<Top>("requester")?;
        Ok(Self::new(d, seed, stall))
    }
}

impl<D: PortDut> RequesterSim<D> {
    fn new(mut dut: D, seed: u64, stall: f64) -> Self {
        let r = dut.input("reset");
        dut.set(r, 1);
        for _ in 0..4 {
            dut.settle().expect("reset settles");
            dut.tick();
        }
        dut.set(r, 0);
        RequesterSim {
            dut,
            rng: Rng::new(seed ^ 0x5EED),
            stall,
            qp_rows: vec![vec![0; 4]; ROWS],
            mr_rows: vec![vec![0; 4]; ROWS],
            rings: vec![None; ROWS],
            views: vec![View::default(); ROWS],
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

    /// The producer of QP `row`'s send ring.
    pub fn producer(&self, row: usize) -> Option<u16> {
        self.rings[row].map(|r| r.prod)
    }

    /// What the completer tells the engine about QP `row` from now on.
    pub fn set_view(&mut self, row: usize, v: View) {
        self.views[row] = v;
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

    /// Sets the AckReq interval and the window, and starts QP `row`'s state row at PSN `psn`
    /// and its ring's producer (the QP entering RTS).
    pub fn init_qp(
        &mut self,
        row: usize,
        psn: u32,
        ack_every: u32,
        window: u32,
    ) -> Result<(), String> {
        let index = self
            .producer(row)
            .ok_or(format!("QP row {row} has no send ring"))?;
        self.set("ack_every", ack_every.into());
        self.set("max_unacked", window.into());
        self.set("s_init_valid", 1);
        self.set("s_init_qp", row as u64);
        self.set("s_init_psn", psn.into());
        self.set("s_init_index", index.into());
        for _ in 0..10 {
            self.settle()?;
            let took = self.get("s_init_ready") == 1;
            self.tick();
            if took {
                self.set("s_init_valid", 0);
                return Ok(());
            }
        }
        Err(format!("QP row {row}'s state row was never started"))
    }

    /// QP `row`'s send point, as the completer reads it: one past the highest PSN sent, and
    /// the ring index of the next request to start.
    pub fn send_point(&mut self, row: usize) -> Result<(u32, u16), String> {
        self.set("sp_look_qp", row as u64);
        self.settle()?;
        self.tick();
        self.settle()?;
        Ok((
            self.get("sp_got_sent") as u32,
            self.get("sp_got_nstart") as u16,
        ))
    }

    /// Turns for the QPs `rows`, round robin, each until one of its turns ends without
    /// `more`, until the last payload has left.
    pub fn turns(&mut self, rows: &[usize]) -> Result<Turns, String> {
        let mut out = Turns::default();
        let start = self.cycle;
        let mut descs: VecDeque<(usize, Vec<u64>, u64)> = VecDeque::new();
        let mut payloads: VecDeque<Vec<u8>> = VecDeque::new();
        let mut frame = Vec::new();
        let mut beats: VecDeque<ReadBeat> = VecDeque::new();
        let (mut beat_shown, mut qp_got, mut cv_got, mut sq_got) = (false, false, false, false);
        let mut mr_got = 0usize;
        // QPs waiting for a turn, and the one being served.
        let mut waiting: VecDeque<usize> = rows.iter().copied().collect();
        let mut row = waiting.front().copied().unwrap_or(0);
        let mut offered = false;
        for &r in rows {
            if self.rings[r].is_none() {
                return Err(format!("QP row {r} has no send ring"));
            }
        }
        for _ in 0..50_000_000u64 {
            let c = self.cycle;
            let offer = !offered && !waiting.is_empty() && self.go();
            if offer {
                row = waiting[0];
            }
            let ring = self.rings[row].expect("checked");
            self.set("s_turn_valid", u64::from(offer));
            self.set("s_turn_qp", row as u64);
            let done_ready = self.go();
            self.set("m_done_ready", u64::from(done_ready));
            let (qr, cr, sr, mr) = (self.go(), self.go(), self.go(), self.go());
            self.set("qp_look_ready", u64::from(qr));
            self.set("cv_look_ready", u64::from(cr));
            self.set("sq_look_ready", u64::from(sr));
            self.set("mr_look_ready", u64::from(mr));
            let qp = if qp_got {
                self.qp_rows[row].clone()
            } else {
                vec![0; 4]
            };
            self.set_words("qp_got_data", &qp);
            let v = if cv_got {
                self.views[row]
            } else {
                View::default()
            };
            self.set("cv_got_oldest", v.oldest.into());
            self.set("cv_got_cons", v.cons.into());
            self.set("cv_got_front", v.front.into());
            self.set("cv_got_rd_done", (v.rd_done & 15).into());
            self.set("cv_got_rewinds", (v.rewinds & 15).into());
            self.set("cv_got_rnr", u64::from(v.rnr));
            self.set("cv_got_err", u64::from(v.err));
            self.set("sq_got_valid", u64::from(sq_got));
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
            let (dr, ar, fr) = (self.go(), self.go(), self.go());
            self.set("m_desc_ready", u64::from(dr));
            self.set("m_axis_tready", u64::from(ar));
            self.set("m_fail_ready", u64::from(fr));
            self.settle()?;

            if offer && self.get("s_turn_ready") == 1 {
                offered = true;
                waiting.pop_front();
                out.turns += 1;
            }
            if done_ready && self.get("m_done_valid") == 1 {
                if !offered {
                    return Err(format!("cycle {c}: a turn ended that was never given"));
                }
                offered = false;
                if self.get("m_done_more") == 1 {
                    waiting.push_back(row);
                }
            }
            let ask = |s: &Self, valid: &str, at: &str| -> Result<bool, String> {
                if s.get(valid) == 0 {
                    return Ok(false);
                }
                match s.get(at) as usize {
                    r if r == row => Ok(true),
                    r => Err(format!("cycle {c}: {at} {r}, the turn is row {row}'s")),
                }
            };
            qp_got = qr && ask(self, "qp_look_valid", "qp_look_row")?;
            cv_got = cr && ask(self, "cv_look_valid", "cv_look_qp")?;
            sq_got = sr && ask(self, "sq_look_valid", "sq_look_queue")?;
            if mr && self.get("mr_look_valid") == 1 {
                mr_got = self.get("mr_look_row") as usize;
            }
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
            if dr && self.get("m_desc_valid") == 1 {
                if self.get("m_desc_qp") as usize != row {
                    return Err(format!("cycle {c}: a descriptor for another row"));
                }
                let o = self.dut.output("m_desc_data");
                descs.push_back((row, self.dut.get_words(o), c));
            }
            if ar && self.get("m_axis_tvalid") == 1 {
                let keep = self.get("m_axis_tkeep");
                for (b, byte) in self.get("m_axis_tdata").to_le_bytes().iter().enumerate() {
                    if keep >> b & 1 == 1 {
                        frame.push(*byte);
                    }
                }
                if self.get("m_axis_tlast") == 1 {
                    if self.get("m_axis_tuser") != 0 {
                        return Err(format!("cycle {c}: a payload marked bad"));
                    }
                    payloads.push_back(std::mem::take(&mut frame));
                }
            }
            if fr && self.get("m_fail_valid") == 1 {
                if self.get("m_fail_qp") as usize != row {
                    return Err(format!("cycle {c}: a failed request of another row"));
                }
                out.fails.push((
                    row,
                    self.get("m_fail_index") as u16,
                    self.get("m_fail_status") as u8,
                ));
            }
            self.tick();
            // Descriptors with their payloads.
            while let Some((qp, desc, at)) = descs.front() {
                let (off, width) = th_offset_of("payload_len").expect("a field");
                let len = field(desc, (off, width)) as usize;
                let payload = if len == 0 {
                    Vec::new()
                } else if let Some(p) = payloads.pop_front() {
                    if p.len() != len {
                        return Err(format!("a payload of {} bytes for {len}", p.len()));
                    }
                    p
                } else {
                    break;
                };
                out.sent.push(Sent {
                    qp: *qp,
                    desc: desc.clone(),
                    payload,
                    cycle: *at,
                });
                descs.pop_front();
            }
            if !offered && waiting.is_empty() && descs.is_empty() && frame.is_empty() {
                if !payloads.is_empty() || !beats.is_empty() {
                    return Err("a payload without a packet, or a read never taken".into());
                }
                out.cycles = self.cycle - start;
                return Ok(out);
            }
        }
        Err("the turns never ended".into())
    }
}
