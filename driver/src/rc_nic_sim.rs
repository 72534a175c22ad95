//! The RC transport of one NIC in hardware ([`rnic_hw::rc_nic`]: responder path and sending
//! side in one top) in simulation, clock by clock, with what surrounds it in the NIC: the
//! tables written through their register windows (rows as [`crate::tables`] encodes them, one
//! word per clock, as the driver writes them), one send and one receive ring per QP in host
//! memory (the queue manager's answers to the engines' looks; requests written as
//! [`crate::queues::encode_send`] and [`crate::queues::encode_recv`] make them, a send
//! ring's doorbell rung by [`RcNicSim::post_send`]), host memory behind the DMA port (reads
//! answered in order, writes done a few clocks after their last beat), completions taken as
//! they are written, and the MAC on the caller's side: frames given with [`RcNicSim::receive`]
//! go in, frames the NIC sends collect in [`RcNicSim::sent`]. Every ready the NIC waits on and
//! every offer stalls at random with chance `stall` per clock.
//!
//! Used by the two-NIC tests and by `rnic sim rdma` (Verilator alone) and its lock-step test.

use std::collections::VecDeque;

use rnic_cosim::ports::{HdlPorts, PortDut, PortLockStep, VerilatedPorts};
use rnic_hw::rc_nic::RcNic;

use crate::bench_ports::BenchPorts;
use crate::host_memory::{DmaHost, HostMemory, RecvRing, SendRing};
use crate::tables::{Row, Table};

/// The `rc_nic` top.
pub type Top = RcNic<6, 10, 11, 10>;
/// QPs of the `rc_nic` top.
pub const ROWS: usize = Top::ROWS;

/// The NIC's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub executed: u64,
    pub req_dropped: u64,
    pub packets: u64,
    pub retransmitted: u64,
    pub responses: u64,
    pub resp_dropped: u64,
    pub expiries: u64,
    pub rx_frames: u64,
    pub rx_accepted: u64,
    pub rx_drop_icrc: u64,
    pub tx_frames: u64,
}

/// The prefix of a table's write window among the top's ports.
fn window(t: Table) -> &'static str {
    match t {
        Table::QpAttributes => "qp",
        Table::MemoryRegions => "mr",
        Table::AddressVectors => "av",
    }
}

pub struct RcNicSim<D: PortDut> {
    pub ports: BenchPorts<D>,
    memory: HostMemory,
    sq: Vec<Option<SendRing>>,
    rq: Vec<Option<RecvRing>>,
    /// Table rows waiting for their window, and the next word of the first.
    rows: VecDeque<(Table, usize, Row)>,
    row_word: usize,
    doorbells: VecDeque<usize>,
    resp_inits: VecDeque<[u64; 2]>,
    req_inits: VecDeque<[u64; 5]>,
    /// Frames to receive, the next beat of the first, and whether its beat is shown.
    frames_in: VecDeque<Vec<u8>>,
    beat_in: usize,
    in_shown: bool,
    /// The frame being sent, and the clock of its first beat.
    frame_out: Vec<u8>,
    out_start: u64,
    sq_got: Option<usize>,
    rq_got: Option<usize>,
    dma: DmaHost,
    cqe: Vec<u8>,
    /// Frames sent (the clock of the first beat, the bytes), since the caller last took them.
    pub sent: Vec<(u64, Vec<u8>)>,
    /// Frames sent marked bad (a DMA read failed under them): dropped at the MAC, counted.
    pub sent_bad: u64,
    /// Completions written (CQ, entry), since the caller last took them.
    pub cqes: Vec<(u16, [u8; 32])>,
    /// Frames that were not RoCEv2 (taken, counted).
    pub bypassed: u64,
}

impl RcNicSim<PortLockStep<Top>> {
    /// The `rc_nic` top, rust-hdl and Verilator in lock-step.
    pub fn lockstep(seed: u64, stall: f64) -> Result<Self, String> {
        let d = PortLockStep::new(Top::default(), "rc_nic", seed)?;
        Self::new(d, seed, stall)
    }
}

impl RcNicSim<VerilatedPorts> {
    /// The `rc_nic` top, Verilator alone.
    pub fn verilated(seed: u64, stall: f64) -> Result<Self, String>
    where
        Top: HdlPorts,
    {
        let d = VerilatedPorts::of::<Top>("rc_nic")?;
        Self::new(d, seed, stall)
    }
}

impl<D: PortDut> RcNicSim<D> {
    fn new(dut: D, seed: u64, stall: f64) -> Result<Self, String> {
        let mut s = RcNicSim {
            ports: BenchPorts::new(dut, seed ^ 0x2C41, stall)?,
            memory: HostMemory::default(),
            sq: vec![None; ROWS],
            rq: vec![None; ROWS],
            rows: VecDeque::new(),
            row_word: 0,
            doorbells: VecDeque::new(),
            resp_inits: VecDeque::new(),
            req_inits: VecDeque::new(),
            frames_in: VecDeque::new(),
            beat_in: 0,
            in_shown: false,
            frame_out: Vec::new(),
            out_start: 0,
            sq_got: None,
            rq_got: None,
            dma: DmaHost::default(),
            cqe: Vec::new(),
            sent: Vec::new(),
            sent_bad: 0,
            cqes: Vec::new(),
            bypassed: 0,
        };
        // The tables' clears after reset.
        for _ in 0..10_000 {
            s.ports.settle()?;
            let busy = s.ports.get("busy") == 1;
            s.ports.tick();
            if !busy {
                return Ok(s);
            }
        }
        Err("the NIC stayed busy after reset".into())
    }

    /// Our MAC, GID (IPv4: `::ffff:a.b.c.d`) and IPv4 TTL.
    pub fn set_identity(&mut self, mac: u64, gid: u128, ttl: u8) {
        self.ports.set("src_mac", mac);
        self.ports
            .set_words("sgid", &[gid as u64, (gid >> 64) as u64]);
        self.ports.set("ttl", ttl.into());
    }

    /// The AckReq interval, the window of unacknowledged PSNs and the clocks per timer tick.
    pub fn settings(&mut self, ack_every: u32, window: u32, tick_cycles: u16) {
        self.ports.set("ack_every", ack_every.into());
        self.ports.set("max_unacked", window.into());
        self.ports.set("tick_cycles", tick_cycles.into());
    }

    /// Writes row `row` of `table` through its window (eight words, one per clock, from the
    /// next clock on, before anything else the caller asks).
    pub fn write_row(&mut self, table: Table, row: usize, words: Row) {
        self.rows.push_back((table, row, words));
    }

    /// Host memory at device address `base`, holding `bytes`.
    pub fn map(&mut self, base: u64, bytes: &[u8]) {
        self.memory.map(base, bytes.len());
        self.memory.fill(base, bytes);
    }

    /// Writes `bytes` into host memory at `addr` (mapped before).
    pub fn fill(&mut self, addr: u64, bytes: &[u8]) -> Result<(), String> {
        if self.memory.fill(addr, bytes) {
            Ok(())
        } else {
            Err(format!("{} bytes at {addr:#x}: not mapped", bytes.len()))
        }
    }

    /// `len` bytes of host memory at `addr`, if mapped.
    pub fn read(&self, addr: u64, len: usize) -> Option<&[u8]> {
        self.memory.read(addr, len)
    }

    /// QP `row`'s send ring (`2^log` requests at `base`) and receive ring (`2^rlog` at
    /// `rbase`), both mapped here, empty.
    pub fn set_rings(&mut self, row: usize, base: u64, log: u32, rbase: u64, rlog: u32) {
        self.sq[row] = Some(self.memory.send_ring(base, log));
        self.rq[row] = Some(self.memory.recv_ring(rbase, rlog));
    }

    /// Starts QP `row`: its responder expecting `rq_psn`, its sending side at `sq_psn` (the
    /// ring's producer as consumer) with RETRY_CNT and RNR_RETRY. Presented from the next
    /// clock on, after the table writes asked before.
    pub fn init_qp(
        &mut self,
        row: usize,
        rq_psn: u32,
        sq_psn: u32,
        retry: u8,
        rnr: u8,
    ) -> Result<(), String> {
        let r = self.sq[row].ok_or(format!("QP row {row} has no send ring"))?;
        self.resp_inits.push_back([row as u64, rq_psn.into()]);
        self.req_inits.push_back([
            row as u64,
            sq_psn.into(),
            r.prod.into(),
            retry.into(),
            rnr.into(),
        ]);
        Ok(())
    }

    /// Writes a `send_wqe` at the producer of QP `row`'s send ring, moves the producer on and
    /// rings the doorbell.
    pub fn post_send(&mut self, row: usize, entry: &[u8]) -> Result<(), String> {
        let r = self.sq[row]
            .as_mut()
            .ok_or(format!("QP row {row} has no send ring"))?;
        self.memory.post_send(r, entry)?;
        self.doorbells.push_back(row);
        Ok(())
    }

    /// Writes a `recv_wqe` at the producer of QP `row`'s receive ring and moves it on.
    pub fn post_recv(&mut self, row: usize, entry: &[u8]) -> Result<(), String> {
        let r = self.rq[row]
            .as_mut()
            .ok_or(format!("QP row {row} has no receive ring"))?;
        self.memory
            .post_recv(r, entry)
            .map_err(|e| format!("QP row {row}: {e}"))
    }

    /// Receive requests of QP `row` posted and not yet used.
    pub fn recv_posted(&self, row: usize) -> usize {
        self.rq[row].map_or(0, |r| usize::from(r.prod.wrapping_sub(r.cons)))
    }

    /// A frame from the wire (no FCS), taken after those given before.
    pub fn receive(&mut self, frame: Vec<u8>) {
        self.frames_in.push_back(frame);
    }

    /// Frames given and not yet taken in whole.
    pub fn receiving(&self) -> usize {
        self.frames_in.len()
    }

    pub fn counters(&self) -> Counters {
        let g = |n: &str| self.ports.get(n);
        Counters {
            executed: g("cnt_executed"),
            req_dropped: g("cnt_req_dropped"),
            packets: g("cnt_packets"),
            retransmitted: g("cnt_retransmitted"),
            responses: g("cnt_responses"),
            resp_dropped: g("cnt_resp_dropped"),
            expiries: g("cnt_expiries"),
            rx_frames: g("rx_cnt_frames"),
            rx_accepted: g("rx_cnt_accepted"),
            rx_drop_icrc: g("rx_cnt_drop_icrc"),
            tx_frames: g("tx_cnt_frames"),
        }
    }

    /// Nothing waiting on this side of the ports: no table write, doorbell, start or frame to
    /// give, no DMA read, write, frame or completion half done.
    pub fn quiet(&self) -> bool {
        self.rows.is_empty()
            && self.doorbells.is_empty()
            && self.resp_inits.is_empty()
            && self.req_inits.is_empty()
            && self.frames_in.is_empty()
            && self.dma.idle()
            && self.frame_out.is_empty()
            && self.cqe.is_empty()
    }

    /// The NIC's offers and readies as last settled, and what waits on this side: for a
    /// run that does not finish.
    pub fn waiting(&self) -> String {
        let names = [
            "s_axis_tready",
            "m_axis_tvalid",
            "m_dma_rd_req_valid",
            "m_dma_rd_data_ready",
            "m_dma_wr_req_valid",
            "m_dma_wr_data_valid",
            "m_cqe_valid",
            "sq_look_valid",
            "rq_look_valid",
            "rq_commit_valid",
            "busy",
        ];
        let ports: Vec<String> = names
            .iter()
            .map(|n| format!("{n}={}", self.ports.get(n)))
            .collect();
        format!(
            "{}; frames to take {}, DMA idle {}, counters {:?}",
            ports.join(" "),
            self.frames_in.len(),
            self.dma.idle(),
            self.counters()
        )
    }

    /// One clock.
    pub fn step(&mut self) -> Result<(), String> {
        let c = self.ports.cycle;
        // Table writes first: nothing else is presented while one is under way.
        for t in [
            Table::QpAttributes,
            Table::MemoryRegions,
            Table::AddressVectors,
        ] {
            self.ports.set(&format!("{}_wr_en", window(t)), 0);
        }
        let writing = self.rows.front().copied();
        if let Some((t, row, words)) = writing {
            let p = window(t);
            self.ports.set(&format!("{p}_wr_en"), 1);
            self.ports.set(&format!("{p}_wr_row"), row as u64);
            self.ports
                .set(&format!("{p}_wr_word"), self.row_word as u64);
            self.ports
                .set(&format!("{p}_wr_data"), words[self.row_word].into());
        }
        let idle = writing.is_none();
        // Doorbells (no ready) and QP starts.
        let db = self
            .doorbells
            .front()
            .copied()
            .filter(|_| idle && self.ports.go());
        self.ports.set("db_valid", u64::from(db.is_some()));
        self.ports.set("db_queue", db.unwrap_or(0) as u64);
        let ri = self.resp_inits.front().copied().filter(|_| idle);
        self.ports.set("s_resp_init_valid", u64::from(ri.is_some()));
        if let Some([q, psn]) = ri {
            self.ports.set("s_resp_init_qp", q);
            self.ports.set("s_resp_init_psn", psn);
        }
        let si = self.req_inits.front().copied().filter(|_| idle);
        self.ports.set("s_req_init_valid", u64::from(si.is_some()));
        if let Some([q, psn, index, retry, rnr]) = si {
            self.ports.set("s_req_init_qp", q);
            self.ports.set("s_req_init_psn", psn);
            self.ports.set("s_req_init_index", index);
            self.ports.set("s_req_init_retry", retry);
            self.ports.set("s_req_init_rnr", rnr);
        }
        // Frames in: a beat once shown stays until taken.
        let (mut fd, mut fk, mut fl) = (0, 0, false);
        if let Some(f) = self.frames_in.front() {
            let at = self.beat_in * 8;
            let n = (f.len() - at).min(8);
            let mut w = [0u8; 8];
            w[..n].copy_from_slice(&f[at..at + n]);
            (fd, fk, fl) = (u64::from_le_bytes(w), (1u64 << n) - 1, at + n == f.len());
        }
        self.in_shown = !self.frames_in.is_empty() && (self.in_shown || self.ports.go());
        self.ports.set("s_axis_tvalid", u64::from(self.in_shown));
        self.ports.set("s_axis_tdata", fd);
        self.ports.set("s_axis_tkeep", fk);
        self.ports.set("s_axis_tlast", u64::from(fl));
        self.ports.set("s_axis_tuser", 0);
        // Ring looks: the queue manager answers the clock after.
        let (sr, rr, rc) = (self.ports.go(), self.ports.go(), self.ports.go());
        self.ports.set("sq_look_ready", u64::from(sr));
        self.ports.set("rq_look_ready", u64::from(rr));
        self.ports.set("rq_commit_ready", u64::from(rc));
        let ring = self.sq_got.and_then(|r| self.sq[r]);
        self.ports.set("sq_got_valid", u64::from(ring.is_some()));
        let ring = ring.unwrap_or_default();
        self.ports.set("sq_got_base", ring.base);
        self.ports.set("sq_got_size", ring.size_word());
        self.ports.set("sq_got_prod", ring.prod.into());
        let ring = self.rq_got.map(|r| self.rq[r]);
        self.ports.set("rq_got_valid", u64::from(ring.is_some()));
        let ring = ring.flatten();
        self.ports.set("rq_got_base", ring.map_or(0, |r| r.base));
        self.ports
            .set("rq_got_size", ring.map_or(0, |r| r.size_word()));
        self.ports
            .set("rq_got_prod", ring.map_or(0, |r| r.prod.into()));
        self.ports
            .set("rq_got_cons", ring.map_or(0, |r| r.cons.into()));
        self.dma.drive(&mut self.ports);
        // Frames out, the bypass and completions.
        let (ar, cr) = (self.ports.go(), self.ports.go());
        self.ports.set("m_axis_tready", u64::from(ar));
        self.ports.set("m_bypass_tready", 1);
        self.ports.set("m_cqe_ready", u64::from(cr));
        self.ports.settle()?;

        if writing.is_some() {
            self.row_word += 1;
            if self.row_word == 8 {
                self.row_word = 0;
                self.rows.pop_front();
            }
        }
        if db.is_some() {
            self.doorbells.pop_front();
        }
        if ri.is_some() && self.ports.get("s_resp_init_ready") == 1 {
            self.resp_inits.pop_front();
        }
        if si.is_some() && self.ports.get("s_req_init_ready") == 1 {
            self.req_inits.pop_front();
        }
        if self.in_shown && self.ports.get("s_axis_tready") == 1 {
            self.in_shown = false;
            self.beat_in += 1;
            if fl {
                self.frames_in.pop_front();
                self.beat_in = 0;
            }
        }
        self.sq_got = (sr && self.ports.get("sq_look_valid") == 1)
            .then(|| self.ports.get("sq_look_queue") as usize);
        self.rq_got = (rr && self.ports.get("rq_look_valid") == 1)
            .then(|| self.ports.get("rq_look_queue") as usize);
        if rc && self.ports.get("rq_commit_valid") == 1 {
            let row = self.ports.get("rq_commit_queue") as usize;
            let index = self.ports.get("rq_commit_index") as u16;
            let r = self.rq[row].as_mut().ok_or(format!(
                "cycle {c}: a commit to row {row}, which has no ring"
            ))?;
            if index != r.cons.wrapping_add(1) || r.cons == r.prod {
                return Err(format!(
                    "cycle {c}: row {row}'s receive ring committed to {index} (producer {}, \
                     consumer {})",
                    r.prod, r.cons
                ));
            }
            r.cons = index;
        }
        self.dma.take(&mut self.ports, &mut self.memory)?;
        if ar && self.ports.get("m_axis_tvalid") == 1 {
            let keep = self.ports.get("m_axis_tkeep");
            let n = keep.trailing_ones() as usize;
            let last = self.ports.get("m_axis_tlast") == 1;
            if keep >> n != 0 || (n < 8 && !last) || n == 0 {
                return Err(format!("cycle {c}: a frame beat keeping {keep:#x}"));
            }
            if self.frame_out.is_empty() {
                self.out_start = c;
            }
            let d = self.ports.get("m_axis_tdata").to_le_bytes();
            self.frame_out.extend_from_slice(&d[..n]);
            if last {
                let f = std::mem::take(&mut self.frame_out);
                if self.ports.get("m_axis_tuser") != 0 {
                    self.sent_bad += 1;
                } else {
                    self.sent.push((self.out_start, f));
                }
            }
        }
        if self.ports.get("m_bypass_tvalid") == 1 && self.ports.get("m_bypass_tlast") == 1 {
            self.bypassed += 1;
        }
        if cr && self.ports.get("m_cqe_valid") == 1 {
            self.cqe
                .extend_from_slice(&self.ports.get("m_cqe_data").to_le_bytes());
            if self.ports.get("m_cqe_last") == 1 {
                let e: [u8; 32] =
                    self.cqe.as_slice().try_into().map_err(|_| {
                        format!("cycle {c}: a completion of {} bytes", self.cqe.len())
                    })?;
                self.cqes.push((self.ports.get("m_cqe_cq") as u16, e));
                self.cqe.clear();
            }
        }
        self.ports.tick();
        Ok(())
    }
}
