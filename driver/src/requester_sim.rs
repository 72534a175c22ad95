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

use rnic_cosim::ports::{HdlPorts, PortDut, PortLockStep, VerilatedPorts, field};
use rnic_hw::requester::Requester;
use rnic_hw::transport_header::th_offset_of;

use crate::bench_ports::BenchPorts;
use crate::host_memory::{HostMemory, ReadBeat, SendRing};

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

/// Packets as an engine hands them out: send descriptors (with their QP row and clock), the
/// payloads behind them (one frame per descriptor with a payload), paired into [`Sent`].
#[derive(Clone, Debug, Default)]
pub struct PacketSink {
    descs: VecDeque<(usize, Vec<u64>, u64)>,
    payloads: VecDeque<Vec<u8>>,
    frame: Vec<u8>,
}

impl PacketSink {
    /// A descriptor taken.
    pub fn desc(&mut self, qp: usize, words: Vec<u64>, cycle: u64) {
        self.descs.push_back((qp, words, cycle));
    }

    /// A payload beat taken; a last beat marked bad is an error.
    pub fn beat(&mut self, data: u64, keep: u64, last: bool, bad: bool) -> Result<(), String> {
        for (b, byte) in data.to_le_bytes().iter().enumerate() {
            if keep >> b & 1 == 1 {
                self.frame.push(*byte);
            }
        }
        if last {
            if bad {
                return Err("a payload marked bad".into());
            }
            self.payloads.push_back(std::mem::take(&mut self.frame));
        }
        Ok(())
    }

    /// Every descriptor whose payload is in (or that has none), with it, onto `out`.
    pub fn pair(&mut self, out: &mut Vec<Sent>) -> Result<(), String> {
        let at = th_offset_of("payload_len").expect("a field");
        while let Some((qp, desc, cycle)) = self.descs.front() {
            let len = field(desc, at) as usize;
            let payload = if len == 0 {
                Vec::new()
            } else if let Some(p) = self.payloads.pop_front() {
                if p.len() != len {
                    return Err(format!("a payload of {} bytes for {len}", p.len()));
                }
                p
            } else {
                break;
            };
            out.push(Sent {
                qp: *qp,
                desc: desc.clone(),
                payload,
                cycle: *cycle,
            });
            self.descs.pop_front();
        }
        Ok(())
    }

    /// No descriptor waiting for its payload, no payload half in.
    pub fn quiet(&self) -> bool {
        self.descs.is_empty() && self.frame.is_empty()
    }

    /// Payloads no descriptor claimed.
    pub fn orphans(&self) -> bool {
        !self.payloads.is_empty()
    }
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

pub struct RequesterSim<D: PortDut> {
    pub ports: BenchPorts<D>,
    qp_rows: Vec<Vec<u64>>,
    mr_rows: Vec<Vec<u64>>,
    rings: Vec<Option<SendRing>>,
    views: Vec<View>,
    /// Host memory behind the DMA port.
    memory: HostMemory,
}

impl RequesterSim<PortLockStep<Top>> {
    /// The `requester` top, rust-hdl and Verilator in lock-step.
    pub fn lockstep(seed: u64, stall: f64) -> Result<Self, String> {
        let d = PortLockStep::new(Top::default(), "requester", seed)?;
        Self::new(d, seed, stall)
    }
}

impl RequesterSim<VerilatedPorts> {
    /// The `requester` top, Verilator alone.
    pub fn verilated(seed: u64, stall: f64) -> Result<Self, String>
    where
        Top: HdlPorts,
    {
        let d = VerilatedPorts::of::<Top>("requester")?;
        Self::new(d, seed, stall)
    }
}

impl<D: PortDut> RequesterSim<D> {
    fn new(dut: D, seed: u64, stall: f64) -> Result<Self, String> {
        Ok(RequesterSim {
            ports: BenchPorts::new(dut, seed ^ 0x5EED, stall)?,
            qp_rows: vec![vec![0; 4]; ROWS],
            mr_rows: vec![vec![0; 4]; ROWS],
            rings: vec![None; ROWS],
            views: vec![View::default(); ROWS],
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

    /// The producer of QP `row`'s send ring.
    pub fn producer(&self, row: usize) -> Option<u16> {
        self.rings[row].map(|r| r.prod)
    }

    /// What the completer tells the engine about QP `row` from now on.
    pub fn set_view(&mut self, row: usize, v: View) {
        self.views[row] = v;
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
        self.ports.set("ack_every", ack_every.into());
        self.ports.set("max_unacked", window.into());
        self.ports.set("s_init_valid", 1);
        self.ports.set("s_init_qp", row as u64);
        self.ports.set("s_init_psn", psn.into());
        self.ports.set("s_init_index", index.into());
        for _ in 0..10 {
            self.ports.settle()?;
            let took = self.ports.get("s_init_ready") == 1;
            self.ports.tick();
            if took {
                self.ports.set("s_init_valid", 0);
                return Ok(());
            }
        }
        Err(format!("QP row {row}'s state row was never started"))
    }

    /// QP `row`'s send point, as the completer reads it: one past the highest PSN sent, and
    /// the ring index of the next request to start.
    pub fn send_point(&mut self, row: usize) -> Result<(u32, u16), String> {
        self.ports.set("sp_look_qp", row as u64);
        self.ports.settle()?;
        self.ports.tick();
        self.ports.settle()?;
        Ok((
            self.ports.get("sp_got_sent") as u32,
            self.ports.get("sp_got_nstart") as u16,
        ))
    }

    /// Turns for the QPs `rows`, round robin, each until one of its turns ends without
    /// `more`, until the last payload has left.
    pub fn turns(&mut self, rows: &[usize]) -> Result<Turns, String> {
        let mut out = Turns::default();
        let start = self.ports.cycle;
        let mut packets = PacketSink::default();
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
            let c = self.ports.cycle;
            let offer = !offered && !waiting.is_empty() && self.ports.go();
            if offer {
                row = waiting[0];
            }
            let ring = self.rings[row].expect("checked");
            self.ports.set("s_turn_valid", u64::from(offer));
            self.ports.set("s_turn_qp", row as u64);
            let done_ready = self.ports.go();
            self.ports.set("m_done_ready", u64::from(done_ready));
            let (qr, cr, sr, mr) = (
                self.ports.go(),
                self.ports.go(),
                self.ports.go(),
                self.ports.go(),
            );
            self.ports.set("qp_look_ready", u64::from(qr));
            self.ports.set("cv_look_ready", u64::from(cr));
            self.ports.set("sq_look_ready", u64::from(sr));
            self.ports.set("mr_look_ready", u64::from(mr));
            let qp = if qp_got {
                self.qp_rows[row].clone()
            } else {
                vec![0; 4]
            };
            self.ports.set_words("qp_got_data", &qp);
            let v = if cv_got {
                self.views[row]
            } else {
                View::default()
            };
            self.ports.set("cv_got_oldest", v.oldest.into());
            self.ports.set("cv_got_cons", v.cons.into());
            self.ports.set("cv_got_front", v.front.into());
            self.ports.set("cv_got_rd_done", (v.rd_done & 15).into());
            self.ports.set("cv_got_rewinds", (v.rewinds & 15).into());
            self.ports.set("cv_got_rnr", u64::from(v.rnr));
            self.ports.set("cv_got_err", u64::from(v.err));
            self.ports.set("sq_got_valid", u64::from(sq_got));
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
            let (dr, ar, fr) = (self.ports.go(), self.ports.go(), self.ports.go());
            self.ports.set("m_desc_ready", u64::from(dr));
            self.ports.set("m_axis_tready", u64::from(ar));
            self.ports.set("m_fail_ready", u64::from(fr));
            self.ports.settle()?;

            if offer && self.ports.get("s_turn_ready") == 1 {
                offered = true;
                waiting.pop_front();
                out.turns += 1;
            }
            if done_ready && self.ports.get("m_done_valid") == 1 {
                if !offered {
                    return Err(format!("cycle {c}: a turn ended that was never given"));
                }
                offered = false;
                if self.ports.get("m_done_more") == 1 {
                    waiting.push_back(row);
                }
            }
            let ask = |s: &Self, valid: &str, at: &str| -> Result<bool, String> {
                if s.ports.get(valid) == 0 {
                    return Ok(false);
                }
                match s.ports.get(at) as usize {
                    r if r == row => Ok(true),
                    r => Err(format!("cycle {c}: {at} {r}, the turn is row {row}'s")),
                }
            };
            qp_got = qr && ask(self, "qp_look_valid", "qp_look_row")?;
            cv_got = cr && ask(self, "cv_look_valid", "cv_look_qp")?;
            sq_got = sr && ask(self, "sq_look_valid", "sq_look_queue")?;
            if mr && self.ports.get("mr_look_valid") == 1 {
                mr_got = self.ports.get("mr_look_row") as usize;
            }
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
            if dr && self.ports.get("m_desc_valid") == 1 {
                if self.ports.get("m_desc_qp") as usize != row {
                    return Err(format!("cycle {c}: a descriptor for another row"));
                }
                packets.desc(row, self.ports.get_words("m_desc_data"), c);
            }
            if ar && self.ports.get("m_axis_tvalid") == 1 {
                let p = &self.ports;
                packets
                    .beat(
                        p.get("m_axis_tdata"),
                        p.get("m_axis_tkeep"),
                        p.get("m_axis_tlast") == 1,
                        p.get("m_axis_tuser") != 0,
                    )
                    .map_err(|e| format!("cycle {c}: {e}"))?;
            }
            if fr && self.ports.get("m_fail_valid") == 1 {
                if self.ports.get("m_fail_qp") as usize != row {
                    return Err(format!("cycle {c}: a failed request of another row"));
                }
                out.fails.push((
                    row,
                    self.ports.get("m_fail_index") as u16,
                    self.ports.get("m_fail_status") as u8,
                ));
            }
            self.ports.tick();
            packets.pair(&mut out.sent)?;
            if !offered && waiting.is_empty() && packets.quiet() {
                if packets.orphans() || !beats.is_empty() {
                    return Err("a payload without a packet, or a read never taken".into());
                }
                out.cycles = self.ports.cycle - start;
                return Ok(out);
            }
        }
        Err("the turns never ended".into())
    }
}
