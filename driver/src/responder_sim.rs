//! The hardware responder ([`rnic_hw::responder`]) in simulation, with what surrounds it in
//! the NIC: the QP attribute and memory region tables (rows as [`crate::tables`] encodes
//! them), host memory behind its DMA port (reads and writes), requests in as frames (header,
//! then payload, as the opcode demultiplexer hands them on), responses out as send descriptors
//! with their payloads, the receive rings' queue manager (ring n is QP row n's: base, size,
//! producer and consumer; requests posted into host memory at the producer's slot, between
//! two requests to the engine) and the completions it hands over. Every ready the engine waits on (table lookups, DMA requests and data,
//! descriptor, payload) and every input valid stalls at random with chance `stall` per cycle
//! (0: none), and DMA writes complete 0-3 cycles after their last beat (at once with `stall`
//! 0).
//!
//! The same bench runs the responder path ([`rnic_hw::responder_path`]: the receive path,
//! the responder, its tables and the transmit path in one top): requests go in as the frames
//! themselves, responses come out as frames, and the tables are written through their
//! register windows before the run, as the driver writes them.
//!
//! Used by the tests (rust-hdl and Verilator in lock-step) and by `rnic bench responder`
//! (Verilator alone).

use std::collections::VecDeque;

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{HdlPorts, PortDut, PortLockStep, VerilatedPorts};
use rnic_cosim::transport::{descriptor_of, expect_header};
use rnic_hw::responder::Responder;
use rnic_hw::responder_path::ResponderPath;
use rnic_hw::transport_header::TransportHeader;
use rnic_wire::RocePacket;

use crate::host_memory::{HostMemory, RecvRing};
use crate::tables::Row;

/// Rows of each table of the `responder` top (`Responder<6, 10, 10>`: sixteen READ/atomic
/// slots per QP, a 1024-word READ FIFO).
pub const ROWS: usize = Responder::<6, 10, 10>::ROWS;
/// READs and atomics the `responder` top keeps per QP.
pub const SLOTS: usize = Responder::<6, 10, 10>::SLOTS;

/// A response the engine sent: its send descriptor (transport header words), QP row and
/// payload (the descriptor's `payload_len` bytes), and the cycle the descriptor left. From
/// the responder path, the descriptor and payload parsed from the frame, `qp` `usize::MAX`
/// (a frame does not name the row) and the cycle of the frame's first beat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub desc: Vec<u64>,
    pub qp: usize,
    pub payload: Vec<u8>,
    pub cycle: u64,
}

/// What a run measured.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    pub cycles: u64,
    pub dma_writes: u64,
    pub dma_bytes: u64,
    pub dma_reads: u64,
    pub dma_read_bytes: u64,
    /// Payload bytes sent (READ responses).
    pub payload_bytes: u64,
    /// Per request, the cycle its last beat (its header, without payload) was taken; on the
    /// responder path, the last beat of its frame.
    pub taken: Vec<u64>,
    /// The responder path: headers and frames the receive path handed to the completer, the
    /// congestion logic or the bypass.
    pub passed_on: u64,
    /// The responder alone: headers taken while an earlier request's payload was still going
    /// in (the engine's front half at work).
    pub early_headers: u64,
}

/// How the bench reaches the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Front {
    /// The responder alone: transport headers and payloads in, table lookups answered from
    /// the bench's rows, send descriptors and payloads out.
    Engine,
    /// The responder path: frames in and out, tables written through their windows.
    Path,
}

/// A receive request to post into QP row `row`'s ring before request `before` of a run (the
/// index of its frame) is handed to the engine.
#[derive(Clone, Debug)]
pub struct Post {
    pub before: usize,
    pub row: usize,
    /// The `recv_wqe` entry.
    pub entry: Vec<u8>,
}

/// The responder and its bench.
pub struct ResponderSim<D: PortDut> {
    pub dut: D,
    rng: Rng,
    stall: f64,
    front: Front,
    qp_rows: Vec<Vec<u64>>,
    mr_rows: Vec<Vec<u64>>,
    /// Rows set and not yet written through their windows (responder path): table, row,
    /// words.
    pending: Vec<(&'static str, usize, Vec<u64>)>,
    /// Our MAC, GID and TTL (responder path).
    identity: (u64, u128, u8),
    /// The frames the responder path sent, in order.
    pub sent: Vec<Vec<u8>>,
    /// The frames it sent marked bad (`tuser` on the last beat: a READ response whose DMA
    /// read the host refused), in order; not in [`Self::sent`].
    pub marked: Vec<Vec<u8>>,
    rings: Vec<Option<RecvRing>>,
    /// Rows of each table.
    rows: usize,
    /// Host memory behind the DMA port.
    memory: HostMemory,
    /// Completions handed over: the CQ and the `cqe` (PHASE clear: the writer's to set).
    pub completions: Vec<(u16, [u8; 32])>,
    pub cycle: u64,
}

/// A table row as the port's words.
pub fn row_words(r: &Row) -> Vec<u64> {
    r.chunks(2)
        .map(|p| u64::from(p[0]) | u64::from(p[1]) << 32)
        .collect()
}

impl ResponderSim<PortLockStep<Responder<6, 10, 10>>> {
    /// The `responder` top, rust-hdl and Verilator in lock-step (every output compared every
    /// cycle).
    pub fn lockstep(seed: u64, stall: f64) -> Result<Self, String> {
        Self::lockstep_of("responder", seed, stall)
    }
}

impl<const A: usize, const R: usize, const F: usize> ResponderSim<PortLockStep<Responder<A, R, F>>>
where
    Responder<A, R, F>: HdlPorts,
{
    /// The top `top` (a `Responder<A, R, F>`), rust-hdl and Verilator in lock-step.
    pub fn lockstep_of(top: &str, seed: u64, stall: f64) -> Result<Self, String> {
        let d = PortLockStep::new(Responder::<A, R, F>::default(), top, seed)?;
        Ok(Self::new(d, Responder::<A, R, F>::ROWS, seed, stall))
    }
}

impl ResponderSim<VerilatedPorts> {
    /// The `responder` top, Verilator alone.
    pub fn verilated(seed: u64, stall: f64) -> Result<Self, String> {
        let d = VerilatedPorts::of::<Responder<6, 10, 10>>("responder")?;
        Ok(Self::new(d, ROWS, seed, stall))
    }

    /// The responder path top `top` (a `ResponderPath<A, R, F>`), Verilator alone.
    pub fn path_verilated<const A: usize, const R: usize, const F: usize>(
        top: &str,
        seed: u64,
        stall: f64,
    ) -> Result<Self, String>
    where
        ResponderPath<A, R, F>: HdlPorts,
    {
        let d = VerilatedPorts::of::<ResponderPath<A, R, F>>(top)?;
        Ok(Self::new(d, Responder::<A, R, F>::ROWS, seed, stall).into_path())
    }
}

impl<const A: usize, const R: usize, const F: usize>
    ResponderSim<PortLockStep<ResponderPath<A, R, F>>>
where
    ResponderPath<A, R, F>: HdlPorts,
{
    /// The responder path top `top` (a `ResponderPath<A, R, F>`), rust-hdl and Verilator in
    /// lock-step.
    pub fn path_lockstep(top: &str, seed: u64, stall: f64) -> Result<Self, String> {
        let d = PortLockStep::new(ResponderPath::<A, R, F>::default(), top, seed)?;
        Ok(Self::new(d, Responder::<A, R, F>::ROWS, seed, stall).into_path())
    }
}

impl<D: PortDut> ResponderSim<D> {
    fn new(mut dut: D, rows: usize, seed: u64, stall: f64) -> Self {
        let r = dut.input("reset");
        dut.set(r, 1);
        for _ in 0..4 {
            dut.settle().expect("reset settles");
            dut.tick();
        }
        dut.set(r, 0);
        ResponderSim {
            dut,
            rng: Rng::new(seed ^ 0x5EED),
            stall,
            front: Front::Engine,
            qp_rows: vec![Vec::new(); rows],
            mr_rows: vec![Vec::new(); rows],
            pending: Vec::new(),
            identity: (0, 0, 64),
            sent: Vec::new(),
            marked: Vec::new(),
            rings: vec![None; rows],
            rows,
            memory: HostMemory::default(),
            completions: Vec::new(),
            cycle: 0,
        }
    }

    /// Rows of each table.
    pub fn rows(&self) -> usize {
        self.rows
    }

    fn into_path(mut self) -> Self {
        self.front = Front::Path;
        self
    }

    pub fn set_qp(&mut self, row: usize, r: &Row) {
        self.set_row("qp", row, r);
    }

    pub fn set_mr(&mut self, row: usize, r: &Row) {
        self.set_row("mr", row, r);
    }

    /// QP row `row`'s address vector (the responder path's responses go by it; the engine
    /// alone hands descriptors out with the row and never reads it).
    pub fn set_av(&mut self, row: usize, r: &Row) {
        self.set_row("av", row, r);
    }

    /// A row of table `table` (`qp`, `mr` or `av`): the engine alone has its QP and region
    /// lookups answered from the bench's copies; the path's rows wait to be written through
    /// the table's window (`{table}_wr_*`) before the next run.
    fn set_row(&mut self, table: &'static str, row: usize, r: &Row) {
        let words = row_words(r);
        match (self.front, table) {
            (Front::Path, _) => self.pending.push((table, row, words)),
            (Front::Engine, "qp") => self.qp_rows[row] = words,
            (Front::Engine, "mr") => self.mr_rows[row] = words,
            (Front::Engine, _) => {}
        }
    }

    /// Our MAC, GID and IPv4 TTL, as the responder path's frames carry them.
    pub fn set_identity(&mut self, mac: u64, gid: u128, ttl: u8) {
        self.identity = (mac, gid, ttl);
    }

    /// Gives QP row `row` an enabled receive ring of 2^`log` entries at device address
    /// `base` (mapped here), empty.
    pub fn set_rq(&mut self, row: usize, base: u64, log: u32) {
        self.rings[row] = Some(self.memory.recv_ring(base, log));
    }

    /// Posts a receive request into row `row`'s ring at once; refuses a full or missing ring.
    pub fn post_recv(&mut self, row: usize, entry: &[u8]) -> Result<(), String> {
        let r = self.rings[row]
            .as_mut()
            .ok_or(format!("QP row {row} has no receive ring"))?;
        self.memory
            .post_recv(r, entry)
            .map_err(|e| format!("QP row {row}: {e}"))
    }

    /// Row `row`'s receive ring's consumer (the requests the engine used up).
    pub fn rq_consumer(&self, row: usize) -> Option<u16> {
        self.rings[row].map(|r| r.cons)
    }

    /// Maps `len` zeroed bytes of host memory at device address `base`.
    pub fn map(&mut self, base: u64, len: usize) {
        self.memory.map(base, len);
    }

    /// Host memory at `addr`, if mapped.
    pub fn read(&self, addr: u64, len: usize) -> Option<&[u8]> {
        self.memory.read(addr, len)
    }

    /// Writes `bytes` into host memory at `addr`; false when that is not mapped.
    pub fn fill(&mut self, addr: u64, bytes: &[u8]) -> bool {
        self.memory.fill(addr, bytes)
    }

    /// A counter output (`cnt_*`).
    pub fn counter(&self, name: &str) -> u64 {
        self.dut.get(self.dut.output(name))
    }

    /// The count of requests checked with verdict `v` (the model's `Check` code), read through
    /// the engine's selector (one clock).
    pub fn verdict_count(&mut self, v: u8) -> Result<u64, String> {
        let sel = self.dut.input("cnt_verdict_sel");
        self.dut.set(sel, u64::from(v));
        self.step()?;
        self.tick();
        self.step()?;
        Ok(self.counter("cnt_verdict"))
    }

    fn step(&mut self) -> Result<(), String> {
        self.dut.settle().map_err(|m| m.to_string())
    }

    fn tick(&mut self) {
        self.dut.tick();
        self.cycle += 1;
    }

    fn go(&mut self) -> bool {
        self.stall == 0.0 || !self.rng.chance(self.stall)
    }

    /// Starts QP `row`'s responder state over, expecting PSN `psn` next.
    pub fn init_qp(&mut self, row: usize, psn: u32) -> Result<(), String> {
        let d = &mut self.dut;
        let [v, q, p] = ["s_init_valid", "s_init_qp", "s_init_psn"].map(|n| d.input(n));
        let ready = d.output("s_init_ready");
        d.set(v, 1);
        d.set(q, row as u64);
        d.set(p, u64::from(psn));
        for _ in 0..100_000 {
            self.step()?;
            let ok = self.dut.get(ready) == 1;
            self.tick();
            if ok {
                self.dut.set(v, 0);
                return Ok(());
            }
        }
        Err("the responder never took the QP's initialisation".into())
    }

    /// Feeds `frames` (RoCEv2 requests) and runs until the engine is idle with nothing
    /// pending; returns the responses in order.
    pub fn run(&mut self, frames: &[Vec<u8>]) -> Result<(Vec<Response>, RunStats), String> {
        self.run_posting(frames, &[])
    }

    /// As [`Self::run`], posting `posts` into the receive rings on the way (each once the
    /// engine is idle before its request, so between two requests).
    pub fn run_posting(
        &mut self,
        frames: &[Vec<u8>],
        posts: &[Post],
    ) -> Result<(Vec<Response>, RunStats), String> {
        let mut posts: Vec<&Post> = posts.iter().collect();
        posts.sort_by_key(|p| p.before);
        match self.front {
            Front::Engine => self.run_engine(frames, posts.into()),
            Front::Path => self.run_path(frames, posts.into()),
        }
    }

    /// Posts the requests due before frame `next`; an error once the frames have run out.
    fn post_due(
        &mut self,
        posts: &mut VecDeque<&Post>,
        next: usize,
        frames_left: bool,
    ) -> Result<(), String> {
        while posts.front().is_some_and(|p| p.before <= next) {
            let p = posts.pop_front().expect("checked");
            self.post_recv(p.row, &p.entry)?;
        }
        if !posts.is_empty() && !frames_left {
            return Err("receive requests posted after the last request".into());
        }
        Ok(())
    }

    /// The responder alone: each request's transport header (the wire model's parse, which
    /// the receive path equals) and payload in, its table lookups answered from the bench's
    /// rows, send descriptors and payloads out.
    fn run_engine(
        &mut self,
        frames: &[Vec<u8>],
        mut posts: VecDeque<&Post>,
    ) -> Result<(Vec<Response>, RunStats), String> {
        // Headers and payloads are two streams, as the opcode demultiplexer hands them on: a
        // header may be taken before the payloads ahead of it are (the engine's front half
        // takes the next one while a WRITE's payload goes to memory).
        let mut reqs: Vec<(Vec<u64>, Vec<u8>)> = Vec::new();
        for f in frames {
            let p = RocePacket::parse(f).map_err(|e| format!("a request frame: {e}"))?;
            reqs.push((expect_header(&p).pack().to_vec(), p.payload().to_vec()));
        }
        let i = |d: &D, n: &str| d.input(n);
        let o = |d: &D, n: &str| d.output(n);
        let d = &self.dut;
        let (hv, hd, tdata, tkeep, tvalid, tlast) = (
            i(d, "s_hdr_valid"),
            i(d, "s_hdr_data"),
            i(d, "s_axis_tdata"),
            i(d, "s_axis_tkeep"),
            i(d, "s_axis_tvalid"),
            i(d, "s_axis_tlast"),
        );
        let (qlr, qgd, mlr, mgd, dsr, ptr) = (
            i(d, "qp_look_ready"),
            i(d, "qp_got_data"),
            i(d, "mr_look_ready"),
            i(d, "mr_got_data"),
            i(d, "m_desc_ready"),
            i(d, "m_axis_tready"),
        );
        let (o_hr, o_tr, o_qv, o_qr, o_mv, o_mr) = (
            o(d, "s_hdr_ready"),
            o(d, "s_axis_tready"),
            o(d, "qp_look_valid"),
            o(d, "qp_look_row"),
            o(d, "mr_look_valid"),
            o(d, "mr_look_row"),
        );
        let (o_dv, o_dd, o_dq) = (o(d, "m_desc_valid"), o(d, "m_desc_data"), o(d, "m_desc_qp"));
        let (o_pv, o_pd, o_pk, o_pl, o_pu) = (
            o(d, "m_axis_tvalid"),
            o(d, "m_axis_tdata"),
            o(d, "m_axis_tkeep"),
            o(d, "m_axis_tlast"),
            o(d, "m_axis_tuser"),
        );
        let mut host = HostSide::new(d);
        let zero_qp = vec![0u64; self.qp_rows.iter().map(Vec::len).max().unwrap_or(4).max(4)];
        let zero_mr = vec![0u64; self.mr_rows.iter().map(Vec::len).max().unwrap_or(4).max(4)];

        let mut out = Vec::new();
        let mut stats = RunStats::default();
        let start = self.cycle;
        stats.taken = vec![0; reqs.len()];
        // Headers taken; the request whose payload goes in (past those without).
        let (mut hq, mut pq) = (0usize, 0usize);
        let mut beat = 0usize;
        let (mut qp_look, mut mr_look): (Option<usize>, Option<usize>) = (None, None);
        let mut payload: Vec<u8> = Vec::new();
        let mut payloads: VecDeque<Vec<u8>> = VecDeque::new();
        let mut idle = 0;
        for _ in 0..50_000_000u64 {
            let cycle = self.cycle;
            let hdr_valid = hq < reqs.len() && self.go();
            self.dut.set(hv, u64::from(hdr_valid));
            if let Some((h, _)) = reqs.get(hq) {
                self.dut.set_words(hd, h);
            }
            let (mut tv, mut tl) = (false, false);
            if let Some((_, pl)) = reqs.get(pq).filter(|_| pq < hq) {
                let n = (pl.len() - beat * 8).min(8);
                let mut w = [0u8; 8];
                w[..n].copy_from_slice(&pl[beat * 8..beat * 8 + n]);
                tl = beat * 8 + n == pl.len();
                self.dut.set(tdata, u64::from_le_bytes(w));
                self.dut.set(tkeep, (1u64 << n) - 1);
                tv = true;
            }
            let tv = tv && self.go();
            self.dut.set(tvalid, u64::from(tv));
            self.dut.set(tlast, u64::from(tl));
            let (qr, mr) = (self.go(), self.go());
            self.dut.set(qlr, u64::from(qr));
            self.dut.set(mlr, u64::from(mr));
            let qrow = qp_look
                .take()
                .and_then(|k| self.qp_rows.get(k))
                .filter(|r| !r.is_empty())
                .unwrap_or(&zero_qp);
            self.dut.set_words(qgd, qrow);
            let mrow = mr_look
                .take()
                .and_then(|k| self.mr_rows.get(k))
                .filter(|r| !r.is_empty())
                .unwrap_or(&zero_mr);
            self.dut.set_words(mgd, mrow);
            let dr = self.go();
            self.dut.set(dsr, u64::from(dr));
            let pr = self.go();
            self.dut.set(ptr, u64::from(pr));
            self.drive_host(&mut host);
            self.step()?;

            // Requests are posted while the engine is ready for the header of the frame they
            // precede.
            if self.dut.get(o_hr) == 1 {
                self.post_due(&mut posts, hq, hq < reqs.len())?;
            }
            if hdr_valid && self.dut.get(o_hr) == 1 {
                if reqs[hq].1.is_empty() {
                    stats.taken[hq] = cycle;
                }
                if pq < hq {
                    stats.early_headers += 1;
                }
                hq += 1;
            }
            if tv && self.dut.get(o_tr) == 1 {
                beat += 1;
                if tl {
                    stats.taken[pq] = cycle;
                    pq += 1;
                    beat = 0;
                }
            }
            while pq < hq && reqs[pq].1.is_empty() {
                pq += 1;
            }
            if qr && self.dut.get(o_qv) == 1 {
                qp_look = Some(self.dut.get(o_qr) as usize);
            }
            if mr && self.dut.get(o_mv) == 1 {
                mr_look = Some(self.dut.get(o_mr) as usize);
            }
            self.take_host(&mut host, cycle, &mut stats)?;
            if dr && self.dut.get(o_dv) == 1 {
                out.push(Response {
                    desc: self.dut.get_words(o_dd),
                    qp: self.dut.get(o_dq) as usize,
                    payload: Vec::new(),
                    cycle,
                });
            }
            if pr && self.dut.get(o_pv) == 1 {
                let keep = self.dut.get(o_pk);
                let n = keep.trailing_ones() as usize;
                let last = self.dut.get(o_pl) == 1;
                if keep >> n != 0 || (n < 8 && !last) || n == 0 {
                    return Err(format!("cycle {cycle}: payload beat with keep {keep:#x}"));
                }
                if self.dut.get(o_pu) == 1 {
                    return Err(format!("cycle {cycle}: a payload marked bad"));
                }
                payload.extend_from_slice(&self.dut.get(o_pd).to_le_bytes()[..n]);
                if last {
                    stats.payload_bytes += payload.len() as u64;
                    payloads.push_back(std::mem::take(&mut payload));
                }
            }
            let quiet = pq == reqs.len()
                && self.dut.get(o_hr) == 1
                && !host.busy()
                && self.dut.get(o_pv) == 0;
            idle = if quiet { idle + 1 } else { 0 };
            self.tick();
            if idle > 20 {
                stats.cycles = self.cycle - start - 20;
                for r in &mut out {
                    let len = TransportHeader::unpack(&r.desc).get("payload_len") as usize;
                    if len > 0 {
                        r.payload = payloads
                            .pop_front()
                            .ok_or("a descriptor without its payload")?;
                        if r.payload.len() != len {
                            return Err(format!(
                                "a payload of {} bytes for a descriptor of {len}",
                                r.payload.len()
                            ));
                        }
                    }
                }
                if !payloads.is_empty() {
                    return Err(format!("{} payloads without a descriptor", payloads.len()));
                }
                return Ok((out, stats));
            }
        }
        Err("the responder did not finish".into())
    }

    /// Writes the rows set since the last run through their tables' register windows (the
    /// responder path only): eight 32-bit words a row, the last committing it.
    fn write_tables(&mut self) -> Result<(), String> {
        for (table, row, words) in std::mem::take(&mut self.pending) {
            let [en, r, w, data] = ["wr_en", "wr_row", "wr_word", "wr_data"]
                .map(|n| self.dut.input(&format!("{table}_{n}")));
            for k in 0..8 {
                let word = words.get(k / 2).copied().unwrap_or(0) >> (32 * (k % 2)) & 0xFFFF_FFFF;
                self.dut.set(en, 1);
                self.dut.set(r, row as u64);
                self.dut.set(w, k as u64);
                self.dut.set(data, word);
                self.step()?;
                self.tick();
            }
            self.dut.set(en, 0);
        }
        Ok(())
    }

    /// The responder path: frames in through the receive path, frames out of the transmit
    /// path (each response parsed back into its descriptor and payload, the frame kept in
    /// [`Self::sent`]; one marked bad only kept, in [`Self::marked`]); whatever the receive
    /// path hands elsewhere (responses, CNPs, other frames) is taken and counted in
    /// [`RunStats::passed_on`].
    fn run_path(
        &mut self,
        frames: &[Vec<u8>],
        mut posts: VecDeque<&Post>,
    ) -> Result<(Vec<Response>, RunStats), String> {
        /// Cycles with nothing in flight that make the path idle: longer than a frame takes
        /// from its last beat through the parser to the responder.
        const QUIET: u64 = 64;
        self.write_tables()?;
        let i = |d: &D, n: &str| d.input(n);
        let o = |d: &D, n: &str| d.output(n);
        let d = &self.dut;
        let s_in =
            ["tdata", "tkeep", "tlast", "tvalid", "tuser"].map(|n| i(d, &format!("s_axis_{n}")));
        let o_sr = o(d, "s_axis_tready");
        let i_mr = i(d, "m_axis_tready");
        let m_out =
            ["tdata", "tkeep", "tlast", "tvalid", "tuser"].map(|n| o(d, &format!("m_axis_{n}")));
        let sinks = ["m_resp_hdr_", "m_resp_axis_t", "m_cnp_hdr_", "m_bypass_t"];
        let sink_in: Vec<usize> = sinks.iter().map(|s| i(d, &format!("{s}ready"))).collect();
        // What is counted: a response's or CNP's header, and a bypassed frame's last beat.
        let o_rh = o(d, "m_resp_hdr_valid");
        let o_ch = o(d, "m_cnp_hdr_valid");
        let (o_bv, o_bl) = (o(d, "m_bypass_tvalid"), o(d, "m_bypass_tlast"));
        let (o_idle, o_fill) = (o(d, "resp_idle"), o(d, "rx_hdr_fill"));
        let (i_mac, i_gid, i_ttl) = (i(d, "src_mac"), i(d, "sgid"), i(d, "ttl"));
        let mut host = HostSide::new(d);
        let (mac, gid, ttl) = self.identity;
        self.dut.set(i_mac, mac);
        self.dut.set_words(i_gid, &[gid as u64, (gid >> 64) as u64]);
        self.dut.set(i_ttl, u64::from(ttl));
        for &k in &sink_in {
            self.dut.set(k, 1);
        }

        let mut out = Vec::new();
        let mut stats = RunStats::default();
        let start = self.cycle;
        let (mut next_frame, mut beat) = (0usize, 0usize);
        let mut frame_out: Vec<u8> = Vec::new();
        let mut first_beat = 0u64;
        let mut idle = 0u64;
        for _ in 0..50_000_000u64 {
            let cycle = self.cycle;
            // A frame starts only once the requests due before it are posted, which waits
            // for the path to be idle.
            let due = beat == 0 && posts.front().is_some_and(|p| p.before <= next_frame);
            if due && idle >= QUIET {
                self.post_due(&mut posts, next_frame, next_frame < frames.len())?;
            }
            let due = beat == 0 && posts.front().is_some_and(|p| p.before <= next_frame);
            let f = frames.get(next_frame).filter(|_| !due);
            let mut tl = false;
            if let Some(f) = f {
                let n = (f.len() - beat * 8).min(8);
                let mut w = [0u8; 8];
                w[..n].copy_from_slice(&f[beat * 8..beat * 8 + n]);
                tl = beat * 8 + n == f.len();
                self.dut.set(s_in[0], u64::from_le_bytes(w));
                self.dut.set(s_in[1], (1u64 << n) - 1);
            }
            let tv = f.is_some() && self.go();
            self.dut.set(s_in[2], u64::from(tl));
            self.dut.set(s_in[3], u64::from(tv));
            self.dut.set(s_in[4], 0);
            let mr = self.go();
            self.dut.set(i_mr, u64::from(mr));
            self.drive_host(&mut host);
            self.step()?;

            if tv && self.dut.get(o_sr) == 1 {
                beat += 1;
                if tl {
                    beat = 0;
                    next_frame += 1;
                    stats.taken.push(cycle);
                }
            }
            let bypassed = self.dut.get(o_bv) == 1 && self.dut.get(o_bl) == 1;
            for taken in [self.dut.get(o_rh) == 1, self.dut.get(o_ch) == 1, bypassed] {
                stats.passed_on += u64::from(taken);
            }
            self.take_host(&mut host, cycle, &mut stats)?;
            let out_valid = self.dut.get(m_out[3]) == 1;
            if mr && out_valid {
                let keep = self.dut.get(m_out[1]);
                let n = keep.trailing_ones() as usize;
                let last = self.dut.get(m_out[2]) == 1;
                if keep >> n != 0 || (n < 8 && !last) || n == 0 {
                    return Err(format!("cycle {cycle}: frame beat with keep {keep:#x}"));
                }
                if frame_out.is_empty() {
                    first_beat = cycle;
                }
                frame_out.extend_from_slice(&self.dut.get(m_out[0]).to_le_bytes()[..n]);
                if last && self.dut.get(m_out[4]) == 1 {
                    self.marked.push(std::mem::take(&mut frame_out));
                } else if last {
                    let f = std::mem::take(&mut frame_out);
                    let p = RocePacket::parse(&f)
                        .map_err(|e| format!("cycle {cycle}: a frame sent: {e}"))?
                        .repr();
                    stats.payload_bytes += p.payload.len() as u64;
                    out.push(Response {
                        desc: descriptor_of(&p).0.pack().to_vec(),
                        qp: usize::MAX,
                        payload: p.payload.clone(),
                        cycle: first_beat,
                    });
                    self.sent.push(f);
                }
            }
            let quiet = beat == 0
                && self.dut.get(o_idle) == 1
                && self.dut.get(o_fill) == 0
                && !host.busy()
                && !out_valid
                && frame_out.is_empty();
            idle = if quiet { idle + 1 } else { 0 };
            self.tick();
            if idle > QUIET && next_frame == frames.len() {
                stats.cycles = self.cycle - start - QUIET - 1;
                return Ok((out, stats));
            }
        }
        Err(format!(
            "the responder path did not finish: frame {next_frame} of {} (beat {beat}), \
             responder idle {}, headers waiting {}, host side busy {}, posts due {}",
            frames.len(),
            self.dut.get(o_idle),
            self.dut.get(o_fill),
            host.busy(),
            posts.len()
        ))
    }

    /// Drives the host side's inputs for this cycle.
    fn drive_host(&mut self, h: &mut HostSide) {
        h.wq = h.write.is_none() && h.done_in.is_none() && self.go();
        h.wd = h.write.is_some() && self.go();
        self.dut.set(h.wqr, u64::from(h.wq));
        self.dut.set(h.wdr, u64::from(h.wd));
        let done = h.done_in.filter(|d| d.0 == 0);
        self.dut.set(h.wdv, u64::from(done.is_some()));
        self.dut.set(h.wde, u64::from(done.is_some_and(|d| d.1)));
        h.rq = self.go();
        self.dut.set(h.rqr, u64::from(h.rq));
        // A beat once shown stays until taken.
        h.beat_shown = h.beats.front().is_some() && (h.beat_shown || self.go());
        let (bd, bl, be) = h.beats.front().copied().unwrap_or((0, false, false));
        self.dut.set(h.rdv, u64::from(h.beat_shown));
        self.dut.set(h.rdd, bd);
        self.dut.set(h.rdl, u64::from(bl));
        self.dut.set(h.rde, u64::from(be));
        (h.rl, h.rc, h.cr) = (self.go(), self.go(), self.go());
        self.dut.set(h.rlr, u64::from(h.rl));
        self.dut.set(h.rcr, u64::from(h.rc));
        self.dut.set(h.cqr, u64::from(h.cr));
        // The ring looked up last cycle (disabled: SIZE 0).
        let ring = h
            .rq_look
            .take()
            .map(|k| self.rings.get(k).copied().flatten());
        self.dut.set(h.rgv, u64::from(ring.is_some()));
        let r = ring.flatten();
        self.dut.set(h.rgb, r.map_or(0, |r| r.base));
        self.dut.set(h.rgs, r.map_or(0, |r| r.size_word()));
        self.dut.set(h.rgp, r.map_or(0, |r| u64::from(r.prod)));
        self.dut.set(h.rgc, r.map_or(0, |r| u64::from(r.cons)));
    }

    /// Takes what the engine offered the host side this cycle (after the settle).
    fn take_host(
        &mut self,
        h: &mut HostSide,
        cycle: u64,
        stats: &mut RunStats,
    ) -> Result<(), String> {
        if h.rl && self.dut.get(h.o_rlv) == 1 {
            h.rq_look = Some(self.dut.get(h.o_rlq) as usize);
        }
        if h.rc && self.dut.get(h.o_rcv) == 1 {
            let row = self.dut.get(h.o_rcq) as usize;
            let index = self.dut.get(h.o_rci) as u16;
            let r = self.rings[row].as_mut().ok_or(format!(
                "cycle {cycle}: a commit to row {row}, which has no ring"
            ))?;
            if index != r.cons.wrapping_add(1) || r.cons == r.prod {
                return Err(format!(
                    "cycle {cycle}: row {row}'s ring committed to {index} (producer {}, consumer {})",
                    r.prod, r.cons
                ));
            }
            r.cons = index;
        }
        if h.cr && self.dut.get(h.o_cv) == 1 {
            h.cqe.extend_from_slice(&self.dut.get(h.o_cd).to_le_bytes());
            if self.dut.get(h.o_cl) == 1 {
                let e: [u8; 32] =
                    h.cqe.as_slice().try_into().map_err(|_| {
                        format!("cycle {cycle}: a completion of {} bytes", h.cqe.len())
                    })?;
                self.completions.push((self.dut.get(h.o_ccq) as u16, e));
                h.cqe.clear();
            }
        }
        match h.done_in.as_mut() {
            Some((0, _)) => h.done_in = None,
            Some((n, _)) => *n -= 1,
            None => {}
        }
        if h.wq && self.dut.get(h.o_wqv) == 1 {
            let addr = self.dut.get_words(h.o_wqa)[0];
            let len = self.dut.get(h.o_wql) as usize;
            h.write = Some((addr, len, Vec::new(), false));
        }
        if h.wd && self.dut.get(h.o_wdv) == 1 {
            let keep = self.dut.get(h.o_wk);
            let data = self.dut.get(h.o_wd).to_le_bytes();
            let last = self.dut.get(h.o_wl) == 1;
            let (addr, len, mut bytes, mut bad) = h.write.take().expect("data after a request");
            let n = keep.trailing_ones() as usize;
            bad |= keep >> n != 0 || (bytes.len() % 8 != 0 && n > 0);
            bytes.extend_from_slice(&data[..n]);
            if last {
                let ok = !bad && bytes.len() == len && self.fill(addr, &bytes);
                if !ok {
                    return Err(format!(
                        "cycle {cycle}: a refused DMA write of {} bytes ({len} announced) at {addr:#x}",
                        bytes.len()
                    ));
                }
                stats.dma_writes += 1;
                stats.dma_bytes += len as u64;
                let delay = if self.stall == 0.0 {
                    0
                } else {
                    self.rng.below(4) as u32
                };
                h.done_in = Some((delay, false));
            } else {
                h.write = Some((addr, len, bytes, bad));
            }
        }
        if h.rq && self.dut.get(h.o_rqv) == 1 {
            let addr = self.dut.get_words(h.o_rqa)[0];
            let len = self.dut.get(h.o_rql) as usize;
            let beats = self
                .memory
                .read_beats(addr, len)
                .map_err(|e| format!("cycle {cycle}: {e}"))?;
            h.beats.extend(beats);
            stats.dma_reads += 1;
            stats.dma_read_bytes += len as u64;
        }
        if h.beat_shown && self.dut.get(h.o_rdr) == 1 {
            h.beats.pop_front();
            h.beat_shown = false;
        }
        Ok(())
    }
}

/// The engine's host side, the same for both fronts: the DMA port (reads answered from host
/// memory, writes into it), the receive rings' lookups and commits, and the completions; the
/// ports' indices, this cycle's readies and what is in flight.
struct HostSide {
    wqr: usize,
    wdr: usize,
    wdv: usize,
    wde: usize,
    rqr: usize,
    rdv: usize,
    rdd: usize,
    rdl: usize,
    rde: usize,
    rlr: usize,
    rgv: usize,
    rgb: usize,
    rgs: usize,
    rgp: usize,
    rgc: usize,
    rcr: usize,
    cqr: usize,
    o_wqv: usize,
    o_wqa: usize,
    o_wql: usize,
    o_wdv: usize,
    o_wd: usize,
    o_wk: usize,
    o_wl: usize,
    o_rqv: usize,
    o_rqa: usize,
    o_rql: usize,
    o_rdr: usize,
    o_rlv: usize,
    o_rlq: usize,
    o_rcv: usize,
    o_rcq: usize,
    o_rci: usize,
    o_cv: usize,
    o_ccq: usize,
    o_cd: usize,
    o_cl: usize,
    /// This cycle's readies: write request and data, read request, ring lookup and commit,
    /// completion.
    wq: bool,
    wd: bool,
    rq: bool,
    rl: bool,
    rc: bool,
    cr: bool,
    /// The ring looked up last cycle.
    rq_look: Option<usize>,
    /// The completion's beats so far.
    cqe: Vec<u8>,
    /// A write taken: address, length, bytes so far, refused.
    write: Option<(u64, usize, Vec<u8>, bool)>,
    /// A write's done, in so many cycles (refused?).
    done_in: Option<(u32, bool)>,
    /// Reads taken: their beats (data, last, refused) still to deliver, in order.
    beats: VecDeque<(u64, bool, bool)>,
    beat_shown: bool,
}

impl HostSide {
    fn new<D: PortDut>(d: &D) -> Self {
        let i = |n: &str| d.input(n);
        let o = |n: &str| d.output(n);
        HostSide {
            wqr: i("m_dma_wr_req_ready"),
            wdr: i("m_dma_wr_data_ready"),
            wdv: i("m_dma_wr_done_valid"),
            wde: i("m_dma_wr_done_err"),
            rqr: i("m_dma_rd_req_ready"),
            rdv: i("m_dma_rd_data_valid"),
            rdd: i("m_dma_rd_data"),
            rdl: i("m_dma_rd_data_last"),
            rde: i("m_dma_rd_data_err"),
            rlr: i("rq_look_ready"),
            rgv: i("rq_got_valid"),
            rgb: i("rq_got_base"),
            rgs: i("rq_got_size"),
            rgp: i("rq_got_prod"),
            rgc: i("rq_got_cons"),
            rcr: i("rq_commit_ready"),
            cqr: i("m_cqe_ready"),
            o_wqv: o("m_dma_wr_req_valid"),
            o_wqa: o("m_dma_wr_req_addr"),
            o_wql: o("m_dma_wr_req_len"),
            o_wdv: o("m_dma_wr_data_valid"),
            o_wd: o("m_dma_wr_data"),
            o_wk: o("m_dma_wr_data_keep"),
            o_wl: o("m_dma_wr_data_last"),
            o_rqv: o("m_dma_rd_req_valid"),
            o_rqa: o("m_dma_rd_req_addr"),
            o_rql: o("m_dma_rd_req_len"),
            o_rdr: o("m_dma_rd_data_ready"),
            o_rlv: o("rq_look_valid"),
            o_rlq: o("rq_look_queue"),
            o_rcv: o("rq_commit_valid"),
            o_rcq: o("rq_commit_queue"),
            o_rci: o("rq_commit_index"),
            o_cv: o("m_cqe_valid"),
            o_ccq: o("m_cqe_cq"),
            o_cd: o("m_cqe_data"),
            o_cl: o("m_cqe_last"),
            wq: false,
            wd: false,
            rq: false,
            rl: false,
            rc: false,
            cr: false,
            rq_look: None,
            cqe: Vec::new(),
            write: None,
            done_in: None,
            beats: VecDeque::new(),
            beat_shown: false,
        }
    }

    /// Something in flight: a write, its done, read beats or a completion.
    fn busy(&self) -> bool {
        self.write.is_some()
            || self.done_in.is_some()
            || !self.beats.is_empty()
            || !self.cqe.is_empty()
    }
}
