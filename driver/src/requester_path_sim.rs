//! The sending side in hardware ([`rnic_hw::requester_path`]: scheduler, requester, completer
//! and timers) in simulation, clock by clock, with what surrounds it in the NIC: QP attribute
//! and memory region rows (as [`crate::tables`] encodes them) answered the clock after a look,
//! one send ring per QP in host memory (requests as [`crate::queues::encode_send`] writes
//! them, a producer index moved by [`RequesterPathSim::post`] and announced by a doorbell),
//! host memory behind the DMA port (reads answered in order, writes done a few clocks after
//! their last beat), and the network on the caller's side: [`RequesterPathSim::step`] collects
//! the packets the engine sends (send descriptor and payload) and the completions it writes,
//! and feeds it the responses the caller queued with [`RequesterPathSim::respond`]. Every
//! ready the engine waits on and every offer stalls at random with chance `stall` per clock.
//!
//! Used by the tests (rust-hdl and Verilator in lock-step) and by `rnic sim rdma`'s hardware
//! sender (Verilator alone).

use std::collections::VecDeque;

use rnic_cosim::ports::{HdlPorts, PortDut, PortLockStep, VerilatedPorts};
use rnic_hw::requester_path::RequesterPath;

use crate::bench_ports::BenchPorts;
use crate::host_memory::{DmaHost, HostMemory, SendRing};
pub use crate::requester_sim::{PacketSink, Sent};

/// The `requester_path` top.
pub type Top = RequesterPath<6, 10>;
/// QPs of the `requester_path` top.
pub const ROWS: usize = Top::ROWS;

/// The engine's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub packets: u64,
    pub retransmitted: u64,
    pub responses: u64,
    pub dropped: u64,
    pub expiries: u64,
    pub arms: u64,
    pub req_dma_err: u64,
    pub comp_dma_err: u64,
}

pub struct RequesterPathSim<D: PortDut> {
    pub ports: BenchPorts<D>,
    qp_rows: Vec<Vec<u64>>,
    mr_rows: Vec<Vec<u64>>,
    rings: Vec<Option<SendRing>>,
    memory: HostMemory,
    /// Doorbells and QP starts waiting to be presented.
    doorbells: VecDeque<usize>,
    inits: VecDeque<[u64; 5]>,
    /// Responses waiting to go in: transport header words and payload.
    responses: VecDeque<(Vec<u64>, Vec<u8>)>,
    hdr_taken: bool,
    payload: VecDeque<(u64, u64, bool)>,
    pay_shown: bool,
    // Lookups answered the next clock.
    qp_got: Option<usize>,
    mr_got: usize,
    sq_got: Option<usize>,
    // DMA: read beats in order with their tag; writes.
    dma: DmaHost,
    packets: PacketSink,
    cqe: Vec<u8>,
    /// Packets sent and completions written (CQ, entry), since the caller last took them.
    pub sent: Vec<Sent>,
    pub cqes: Vec<(u16, [u8; 32])>,
}

impl RequesterPathSim<PortLockStep<Top>> {
    /// The `requester_path` top, rust-hdl and Verilator in lock-step.
    pub fn lockstep(seed: u64, stall: f64) -> Result<Self, String> {
        let d = PortLockStep::new(Top::default(), "requester_path", seed)?;
        Self::new(d, seed, stall)
    }
}

impl RequesterPathSim<VerilatedPorts> {
    /// The `requester_path` top, Verilator alone.
    pub fn verilated(seed: u64, stall: f64) -> Result<Self, String>
    where
        Top: HdlPorts,
    {
        let d = VerilatedPorts::of::<Top>("requester_path")?;
        Self::new(d, seed, stall)
    }
}

impl<D: PortDut> RequesterPathSim<D> {
    fn new(dut: D, seed: u64, stall: f64) -> Result<Self, String> {
        let mut s = RequesterPathSim {
            ports: BenchPorts::new(dut, seed ^ 0x9A7B, stall)?,
            qp_rows: vec![vec![0; 4]; ROWS],
            mr_rows: vec![vec![0; 4]; ROWS],
            rings: vec![None; ROWS],
            memory: HostMemory::default(),
            doorbells: VecDeque::new(),
            inits: VecDeque::new(),
            responses: VecDeque::new(),
            hdr_taken: false,
            payload: VecDeque::new(),
            pay_shown: false,
            qp_got: None,
            mr_got: 0,
            sq_got: None,
            dma: DmaHost::default(),
            packets: PacketSink::default(),
            cqe: Vec::new(),
            sent: Vec::new(),
            cqes: Vec::new(),
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
        Err("the engine stayed busy after reset".into())
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

    /// `len` bytes of host memory at `addr`, if mapped.
    pub fn read(&self, addr: u64, len: usize) -> Option<&[u8]> {
        self.memory.read(addr, len)
    }

    /// QP `row`'s send ring: `2^log` requests of 128 bytes at `base` (mapped here), empty.
    pub fn set_ring(&mut self, row: usize, base: u64, log: u32) {
        self.rings[row] = Some(self.memory.send_ring(base, log));
    }

    /// The AckReq interval, the window and the clocks per timer tick.
    pub fn settings(&mut self, ack_every: u32, window: u32, tick_cycles: u16) {
        self.ports.set("ack_every", ack_every.into());
        self.ports.set("max_unacked", window.into());
        self.ports.set("tick_cycles", tick_cycles.into());
    }

    /// Starts QP `row` (entering RTS): its first PSN, its ring's producer as consumer,
    /// RETRY_CNT and RNR_RETRY. Presented from the next clock on.
    pub fn init_qp(&mut self, row: usize, psn: u32, retry: u8, rnr: u8) -> Result<(), String> {
        let r = self.rings[row].ok_or(format!("QP row {row} has no send ring"))?;
        self.inits.push_back([
            row as u64,
            psn.into(),
            r.prod.into(),
            retry.into(),
            rnr.into(),
        ]);
        Ok(())
    }

    /// Writes a `send_wqe` at the producer of QP `row`'s ring, moves the producer on and rings
    /// the doorbell.
    pub fn post(&mut self, row: usize, entry: &[u8]) -> Result<(), String> {
        let r = self.rings[row]
            .as_mut()
            .ok_or(format!("QP row {row} has no send ring"))?;
        self.memory.post_send(r, entry)?;
        self.doorbells.push_back(row);
        Ok(())
    }

    /// A response for the engine: its transport header (the receive path's words) and payload.
    pub fn respond(&mut self, hdr: Vec<u64>, payload: Vec<u8>) {
        self.responses.push_back((hdr, payload));
    }

    /// Responses not yet taken in whole.
    pub fn responses_pending(&self) -> usize {
        self.responses.len()
    }

    pub fn counters(&self) -> Counters {
        Counters {
            packets: self.ports.get("cnt_packets"),
            retransmitted: self.ports.get("cnt_retransmitted"),
            responses: self.ports.get("cnt_responses"),
            dropped: self.ports.get("cnt_dropped"),
            expiries: self.ports.get("cnt_expiries"),
            arms: self.ports.get("cnt_arms"),
            req_dma_err: self.ports.get("cnt_req_dma_err"),
            comp_dma_err: self.ports.get("cnt_comp_dma_err"),
        }
    }

    /// Nothing in flight on this side of the ports: no doorbell, start or response waiting,
    /// no DMA read, write or packet half done.
    pub fn quiet(&self) -> bool {
        self.doorbells.is_empty()
            && self.inits.is_empty()
            && self.responses.is_empty()
            && self.dma.idle()
            && self.packets.quiet()
            && self.cqe.is_empty()
    }

    /// One clock.
    pub fn step(&mut self) -> Result<(), String> {
        let c = self.ports.cycle;
        // Doorbells (no ready: taken as presented) and QP starts.
        let db = self.doorbells.front().copied().filter(|_| self.ports.go());
        self.ports.set("db_valid", u64::from(db.is_some()));
        self.ports.set("db_queue", db.unwrap_or(0) as u64);
        let init = self.inits.front().copied();
        self.ports.set("s_init_valid", u64::from(init.is_some()));
        if let Some([q, psn, index, retry, rnr]) = init {
            self.ports.set("s_init_qp", q);
            self.ports.set("s_init_psn", psn);
            self.ports.set("s_init_index", index);
            self.ports.set("s_init_retry", retry);
            self.ports.set("s_init_rnr", rnr);
        }
        // Responses: the header, then its payload.
        let offer = !self.hdr_taken && !self.responses.is_empty() && self.ports.go();
        self.ports.set("s_hdr_valid", u64::from(offer));
        if let Some((h, _)) = self.responses.front() {
            let h = h.clone();
            self.ports.set_words("s_hdr_data", &h);
        }
        self.pay_shown = !self.payload.is_empty() && (self.pay_shown || self.ports.go());
        let (pd, pk, pl) = self.payload.front().copied().unwrap_or((0, 0, false));
        self.ports.set("s_axis_tvalid", u64::from(self.pay_shown));
        self.ports.set("s_axis_tdata", pd);
        self.ports.set("s_axis_tkeep", pk);
        self.ports.set("s_axis_tlast", u64::from(pl));
        // Lookups.
        let (qr, sr, mr) = (self.ports.go(), self.ports.go(), self.ports.go());
        self.ports.set("qp_look_ready", u64::from(qr));
        self.ports.set("sq_look_ready", u64::from(sr));
        self.ports.set("mr_look_ready", u64::from(mr));
        let qp = self
            .qp_got
            .map_or(vec![0; 4], |r: usize| self.qp_rows[r].clone());
        self.ports.set_words("qp_got_data", &qp);
        let mrow = self.mr_rows[self.mr_got].clone();
        self.ports.set_words("mr_got_data", &mrow);
        let ring = self.sq_got.and_then(|r| self.rings[r]);
        self.ports.set("sq_got_valid", u64::from(ring.is_some()));
        let ring = ring.unwrap_or_default();
        self.ports.set("sq_got_base", ring.base);
        self.ports.set("sq_got_size", ring.size_word());
        self.ports.set("sq_got_prod", ring.prod.into());
        self.dma.drive(&mut self.ports);
        // Packets and completions out.
        let (dr, ar, cr) = (self.ports.go(), self.ports.go(), self.ports.go());
        self.ports.set("m_desc_ready", u64::from(dr));
        self.ports.set("m_axis_tready", u64::from(ar));
        self.ports.set("m_cqe_ready", u64::from(cr));
        self.ports.settle()?;

        if db.is_some() {
            self.doorbells.pop_front();
        }
        if init.is_some() && self.ports.get("s_init_ready") == 1 {
            self.inits.pop_front();
        }
        if offer && self.ports.get("s_hdr_ready") == 1 {
            let (_, bytes) = self.responses.front().expect("offered");
            let n = bytes.len().div_ceil(8);
            for (k, ch) in bytes.chunks(8).enumerate() {
                let mut w = [0u8; 8];
                w[..ch.len()].copy_from_slice(ch);
                let keep = (1u64 << ch.len()) - 1;
                self.payload
                    .push_back((u64::from_le_bytes(w), keep, k + 1 == n));
            }
            self.hdr_taken = true;
        }
        if self.pay_shown && self.ports.get("s_axis_tready") == 1 {
            self.payload.pop_front();
            self.pay_shown = false;
        }
        if self.hdr_taken && self.payload.is_empty() {
            self.responses.pop_front();
            self.hdr_taken = false;
        }
        self.qp_got = (qr && self.ports.get("qp_look_valid") == 1)
            .then(|| self.ports.get("qp_look_row") as usize);
        self.sq_got = (sr && self.ports.get("sq_look_valid") == 1)
            .then(|| self.ports.get("sq_look_queue") as usize);
        if mr && self.ports.get("mr_look_valid") == 1 {
            self.mr_got = self.ports.get("mr_look_row") as usize;
        }
        self.dma.take(&mut self.ports, &mut self.memory)?;
        if dr && self.ports.get("m_desc_valid") == 1 {
            let q = self.ports.get("m_desc_qp") as usize;
            self.packets.desc(q, self.ports.get_words("m_desc_data"), c);
        }
        if ar && self.ports.get("m_axis_tvalid") == 1 {
            let p = &self.ports;
            self.packets
                .beat(
                    p.get("m_axis_tdata"),
                    p.get("m_axis_tkeep"),
                    p.get("m_axis_tlast") == 1,
                    p.get("m_axis_tuser") != 0,
                )
                .map_err(|e| format!("cycle {c}: {e}"))?;
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
        self.packets.pair(&mut self.sent)
    }
}
