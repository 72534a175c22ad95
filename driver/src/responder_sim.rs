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
//! Used by the tests (rust-hdl and Verilator in lock-step) and by `rnic bench responder`
//! (Verilator alone).

use std::collections::VecDeque;

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{PortDut, PortLockStep, VerilatedPorts};
use rnic_cosim::transport::expect_header;
use rnic_hw::responder::Responder;
use rnic_hw::transport_header::TransportHeader;
use rnic_wire::RocePacket;

use crate::tables::Row;

/// Rows of each table (`Responder<6, 10>`).
pub const ROWS: usize = 64;

/// A response the engine sent: its send descriptor (transport header words), QP row and
/// payload (the descriptor's `payload_len` bytes), and the cycle the descriptor left.
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
    /// Per request, the cycle its last beat (its header, without payload) was taken.
    pub taken: Vec<u64>,
}

/// A receive ring: its base device address, log2 of its entries, producer and consumer.
#[derive(Clone, Copy, Debug, Default)]
struct RecvRing {
    base: u64,
    log: u32,
    prod: u16,
    cons: u16,
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
    qp_rows: Vec<Vec<u64>>,
    mr_rows: Vec<Vec<u64>>,
    rings: Vec<Option<RecvRing>>,
    /// Host memory: buffers at device addresses.
    memory: Vec<(u64, Vec<u8>)>,
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

impl ResponderSim<PortLockStep<Responder<6, 10>>> {
    /// rust-hdl and Verilator in lock-step (every output compared every cycle).
    pub fn lockstep(seed: u64, stall: f64) -> Result<Self, String> {
        let d = PortLockStep::new(Responder::<6, 10>::default(), "responder", seed)?;
        Ok(Self::new(d, seed, stall))
    }
}

impl ResponderSim<VerilatedPorts> {
    /// Verilator alone.
    pub fn verilated(seed: u64, stall: f64) -> Result<Self, String> {
        let d = VerilatedPorts::of::<Responder<6, 10>>("responder")?;
        Ok(Self::new(d, seed, stall))
    }
}

impl<D: PortDut> ResponderSim<D> {
    fn new(mut dut: D, seed: u64, stall: f64) -> Self {
        let r = dut.input("reset");
        dut.set(r, 1);
        dut.settle().expect("reset settles");
        dut.tick();
        dut.set(r, 0);
        ResponderSim {
            dut,
            rng: Rng::new(seed ^ 0x5EED),
            stall,
            qp_rows: vec![Vec::new(); ROWS],
            mr_rows: vec![Vec::new(); ROWS],
            rings: vec![None; ROWS],
            memory: Vec::new(),
            completions: Vec::new(),
            cycle: 0,
        }
    }

    pub fn set_qp(&mut self, row: usize, r: &Row) {
        self.qp_rows[row] = row_words(r);
    }

    pub fn set_mr(&mut self, row: usize, r: &Row) {
        self.mr_rows[row] = row_words(r);
    }

    /// Gives QP row `row` an enabled receive ring of 2^`log` entries at device address
    /// `base` (mapped here), empty.
    pub fn set_rq(&mut self, row: usize, base: u64, log: u32) {
        let bytes = (rnic_regmap::desc::RECV_WQE.size as usize) << log;
        self.map(base, bytes);
        self.rings[row] = Some(RecvRing {
            base,
            log,
            ..Default::default()
        });
    }

    /// Posts a receive request into row `row`'s ring at once; refuses a full or missing ring.
    pub fn post_recv(&mut self, row: usize, entry: &[u8]) -> Result<(), String> {
        let r = self.rings[row].ok_or(format!("QP row {row} has no receive ring"))?;
        if r.prod.wrapping_sub(r.cons) >= 1 << r.log {
            return Err(format!("QP row {row}'s receive ring is full"));
        }
        let slot = u64::from(r.prod) & ((1 << r.log) - 1);
        let size = u64::from(rnic_regmap::desc::RECV_WQE.size);
        if !self.fill(r.base + slot * size, entry) {
            return Err("a receive request outside its ring".into());
        }
        self.rings[row] = Some(RecvRing {
            prod: r.prod.wrapping_add(1),
            ..r
        });
        Ok(())
    }

    /// Row `row`'s receive ring's consumer (the requests the engine used up).
    pub fn rq_consumer(&self, row: usize) -> Option<u16> {
        self.rings[row].map(|r| r.cons)
    }

    /// Maps `len` zeroed bytes of host memory at device address `base`.
    pub fn map(&mut self, base: u64, len: usize) {
        self.memory.push((base, vec![0; len]));
    }

    /// Host memory at `addr`, if mapped.
    pub fn read(&self, addr: u64, len: usize) -> Option<&[u8]> {
        self.memory.iter().find_map(|(b, m)| {
            let at = addr.checked_sub(*b)? as usize;
            m.get(at..at.checked_add(len)?)
        })
    }

    /// Writes `bytes` into host memory at `addr`; false when that is not mapped.
    pub fn fill(&mut self, addr: u64, bytes: &[u8]) -> bool {
        for (b, m) in &mut self.memory {
            if let Some(at) = addr.checked_sub(*b) {
                let at = at as usize;
                if at + bytes.len() <= m.len() {
                    m[at..at + bytes.len()].copy_from_slice(bytes);
                    return true;
                }
            }
        }
        false
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

    /// Feeds `frames` (RoCEv2 requests the parser accepted) and runs until the engine is idle
    /// with nothing pending; returns the responses in order.
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
        let mut posts: VecDeque<&Post> = {
            let mut v: Vec<&Post> = posts.iter().collect();
            v.sort_by_key(|p| p.before);
            v.into()
        };
        let mut next_frame = 0usize;
        let mut reqs: VecDeque<(Vec<u64>, Vec<u8>)> = VecDeque::new();
        for f in frames {
            let p = RocePacket::parse(f).map_err(|e| format!("a request frame: {e}"))?;
            reqs.push_back((expect_header(&p).pack().to_vec(), p.payload().to_vec()));
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
        let (qlr, qgd, mlr, mgd) = (
            i(d, "qp_look_ready"),
            i(d, "qp_got_data"),
            i(d, "mr_look_ready"),
            i(d, "mr_got_data"),
        );
        let (wqr, wdr, wdv, wde, dsr) = (
            i(d, "m_dma_wr_req_ready"),
            i(d, "m_dma_wr_data_ready"),
            i(d, "m_dma_wr_done_valid"),
            i(d, "m_dma_wr_done_err"),
            i(d, "m_desc_ready"),
        );
        let (o_hr, o_tr, o_qv, o_qr, o_mv, o_mr) = (
            o(d, "s_hdr_ready"),
            o(d, "s_axis_tready"),
            o(d, "qp_look_valid"),
            o(d, "qp_look_row"),
            o(d, "mr_look_valid"),
            o(d, "mr_look_row"),
        );
        let (o_wqv, o_wqa, o_wql, o_wdv, o_wd, o_wk, o_wl) = (
            o(d, "m_dma_wr_req_valid"),
            o(d, "m_dma_wr_req_addr"),
            o(d, "m_dma_wr_req_len"),
            o(d, "m_dma_wr_data_valid"),
            o(d, "m_dma_wr_data"),
            o(d, "m_dma_wr_data_keep"),
            o(d, "m_dma_wr_data_last"),
        );
        let (o_dv, o_dd, o_dq) = (o(d, "m_desc_valid"), o(d, "m_desc_data"), o(d, "m_desc_qp"));
        let (rqr, rdv, rdd, rdl, rde, ptr) = (
            i(d, "m_dma_rd_req_ready"),
            i(d, "m_dma_rd_data_valid"),
            i(d, "m_dma_rd_data"),
            i(d, "m_dma_rd_data_last"),
            i(d, "m_dma_rd_data_err"),
            i(d, "m_axis_tready"),
        );
        let (o_rqv, o_rqa, o_rql, o_rdr) = (
            o(d, "m_dma_rd_req_valid"),
            o(d, "m_dma_rd_req_addr"),
            o(d, "m_dma_rd_req_len"),
            o(d, "m_dma_rd_data_ready"),
        );
        let (o_pv, o_pd, o_pk, o_pl, o_pu) = (
            o(d, "m_axis_tvalid"),
            o(d, "m_axis_tdata"),
            o(d, "m_axis_tkeep"),
            o(d, "m_axis_tlast"),
            o(d, "m_axis_tuser"),
        );
        let (rlr, rgv, rgb, rgs, rgp, rgc, rcr, cqr) = (
            i(d, "rq_look_ready"),
            i(d, "rq_got_valid"),
            i(d, "rq_got_base"),
            i(d, "rq_got_size"),
            i(d, "rq_got_prod"),
            i(d, "rq_got_cons"),
            i(d, "rq_commit_ready"),
            i(d, "m_cqe_ready"),
        );
        let (o_rlv, o_rlq, o_rcv, o_rcq, o_rci) = (
            o(d, "rq_look_valid"),
            o(d, "rq_look_queue"),
            o(d, "rq_commit_valid"),
            o(d, "rq_commit_queue"),
            o(d, "rq_commit_index"),
        );
        let (o_cv, o_ccq, o_cd, o_cl) = (
            o(d, "m_cqe_valid"),
            o(d, "m_cqe_cq"),
            o(d, "m_cqe_data"),
            o(d, "m_cqe_last"),
        );
        let mut rq_look: Option<usize> = None;
        let mut cqe: Vec<u8> = Vec::new();
        let zero_qp = vec![0u64; self.qp_rows.iter().map(Vec::len).max().unwrap_or(4).max(4)];
        let zero_mr = vec![0u64; self.mr_rows.iter().map(Vec::len).max().unwrap_or(4).max(4)];

        let mut out = Vec::new();
        let mut stats = RunStats::default();
        let start = self.cycle;
        let mut hdr_taken = false;
        let mut beat = 0usize;
        let (mut qp_look, mut mr_look): (Option<usize>, Option<usize>) = (None, None);
        let mut write: Option<(u64, usize, Vec<u8>, bool)> = None;
        let mut done_in: Option<(u32, bool)> = None;
        // Reads taken: their beats (data, refused) still to deliver, in order.
        let mut beats: VecDeque<(u64, bool, bool)> = VecDeque::new();
        let mut beat_shown = false;
        let mut payload: Vec<u8> = Vec::new();
        let mut payloads: VecDeque<Vec<u8>> = VecDeque::new();
        let mut idle = 0;
        for _ in 0..50_000_000u64 {
            let cycle = self.cycle;
            let hdr_valid = reqs.front().is_some() && !hdr_taken && self.go();
            self.dut.set(hv, u64::from(hdr_valid));
            let (mut tv, mut tl) = (false, false);
            if let Some((h, pl)) = reqs.front() {
                self.dut.set_words(hd, h);
                if hdr_taken && beat * 8 < pl.len() {
                    let n = (pl.len() - beat * 8).min(8);
                    let mut w = [0u8; 8];
                    w[..n].copy_from_slice(&pl[beat * 8..beat * 8 + n]);
                    tl = beat * 8 + n == pl.len();
                    self.dut.set(tdata, u64::from_le_bytes(w));
                    self.dut.set(tkeep, (1u64 << n) - 1);
                    tv = true;
                }
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
            let wq = write.is_none() && done_in.is_none() && self.go();
            let wd = write.is_some() && self.go();
            self.dut.set(wqr, u64::from(wq));
            self.dut.set(wdr, u64::from(wd));
            let done = done_in.filter(|d| d.0 == 0);
            self.dut.set(wdv, u64::from(done.is_some()));
            self.dut.set(wde, u64::from(done.is_some_and(|d| d.1)));
            let dr = self.go();
            self.dut.set(dsr, u64::from(dr));
            let rq = self.go();
            self.dut.set(rqr, u64::from(rq));
            // A beat once shown stays until taken.
            beat_shown = beats.front().is_some() && (beat_shown || self.go());
            let (bd, bl, be) = beats.front().copied().unwrap_or((0, false, false));
            self.dut.set(rdv, u64::from(beat_shown));
            self.dut.set(rdd, bd);
            self.dut.set(rdl, u64::from(bl));
            self.dut.set(rde, u64::from(be));
            let pr = self.go();
            self.dut.set(ptr, u64::from(pr));
            let (rl, rc, cr) = (self.go(), self.go(), self.go());
            self.dut.set(rlr, u64::from(rl));
            self.dut.set(rcr, u64::from(rc));
            self.dut.set(cqr, u64::from(cr));
            // The ring looked up last cycle (disabled: SIZE 0).
            let ring = rq_look.take().map(|k| self.rings.get(k).copied().flatten());
            self.dut.set(rgv, u64::from(ring.is_some()));
            let r = ring.flatten();
            self.dut.set(rgb, r.map_or(0, |r| r.base));
            self.dut
                .set(rgs, r.map_or(0, |r| u64::from(r.log) | 1 << 8));
            self.dut.set(rgp, r.map_or(0, |r| u64::from(r.prod)));
            self.dut.set(rgc, r.map_or(0, |r| u64::from(r.cons)));
            self.step()?;

            // Requests are posted while the engine is idle before the frame they precede.
            if !hdr_taken && self.dut.get(o_hr) == 1 {
                while posts.front().is_some_and(|p| p.before <= next_frame) {
                    let p = posts.pop_front().expect("checked");
                    self.post_recv(p.row, &p.entry)?;
                }
                if !posts.is_empty() && reqs.is_empty() {
                    return Err("receive requests posted after the last request".into());
                }
            }
            if rl && self.dut.get(o_rlv) == 1 {
                rq_look = Some(self.dut.get(o_rlq) as usize);
            }
            if rc && self.dut.get(o_rcv) == 1 {
                let row = self.dut.get(o_rcq) as usize;
                let index = self.dut.get(o_rci) as u16;
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
            if cr && self.dut.get(o_cv) == 1 {
                cqe.extend_from_slice(&self.dut.get(o_cd).to_le_bytes());
                if self.dut.get(o_cl) == 1 {
                    let e: [u8; 32] = cqe.as_slice().try_into().map_err(|_| {
                        format!("cycle {cycle}: a completion of {} bytes", cqe.len())
                    })?;
                    self.completions.push((self.dut.get(o_ccq) as u16, e));
                    cqe.clear();
                }
            }

            if hdr_valid && self.dut.get(o_hr) == 1 {
                hdr_taken = true;
                beat = 0;
                if reqs.front().is_some_and(|r| r.1.is_empty()) {
                    reqs.pop_front();
                    next_frame += 1;
                    hdr_taken = false;
                    stats.taken.push(cycle);
                }
            }
            if tv && self.dut.get(o_tr) == 1 {
                beat += 1;
                if tl {
                    reqs.pop_front();
                    next_frame += 1;
                    hdr_taken = false;
                    stats.taken.push(cycle);
                }
            }
            if qr && self.dut.get(o_qv) == 1 {
                qp_look = Some(self.dut.get(o_qr) as usize);
            }
            if mr && self.dut.get(o_mv) == 1 {
                mr_look = Some(self.dut.get(o_mr) as usize);
            }
            match done_in.as_mut() {
                Some((0, _)) => done_in = None,
                Some((n, _)) => *n -= 1,
                None => {}
            }
            if wq && self.dut.get(o_wqv) == 1 {
                let addr = self.dut.get_words(o_wqa)[0];
                let len = self.dut.get(o_wql) as usize;
                write = Some((addr, len, Vec::new(), false));
            }
            if wd && self.dut.get(o_wdv) == 1 {
                let keep = self.dut.get(o_wk);
                let data = self.dut.get(o_wd).to_le_bytes();
                let last = self.dut.get(o_wl) == 1;
                let (addr, len, mut bytes, mut bad) = write.take().expect("data after a request");
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
                    done_in = Some((delay, false));
                } else {
                    write = Some((addr, len, bytes, bad));
                }
            }
            if dr && self.dut.get(o_dv) == 1 {
                out.push(Response {
                    desc: self.dut.get_words(o_dd),
                    qp: self.dut.get(o_dq) as usize,
                    payload: Vec::new(),
                    cycle,
                });
            }
            if rq && self.dut.get(o_rqv) == 1 {
                let addr = self.dut.get_words(o_rqa)[0];
                let len = self.dut.get(o_rql) as usize;
                if addr % 8 != 0 || len == 0 {
                    return Err(format!(
                        "cycle {cycle}: a DMA read of {len} bytes at {addr:#x} (reads are 8-byte aligned, 1 byte or more)"
                    ));
                }
                let n = len.div_ceil(8);
                let bytes = self.read(addr, n * 8).map(<[u8]>::to_vec);
                for k in 0..n {
                    let w = bytes.as_ref().map_or(0, |b| {
                        u64::from_le_bytes(b[8 * k..8 * k + 8].try_into().expect("8 bytes"))
                    });
                    beats.push_back((w, k + 1 == n, bytes.is_none()));
                }
                stats.dma_reads += 1;
                stats.dma_read_bytes += len as u64;
            }
            if beat_shown && self.dut.get(o_rdr) == 1 {
                beats.pop_front();
                beat_shown = false;
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
            let quiet = reqs.is_empty()
                && self.dut.get(o_hr) == 1
                && write.is_none()
                && done_in.is_none()
                && beats.is_empty()
                && cqe.is_empty()
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
}
