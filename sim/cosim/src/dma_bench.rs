//! A bench for the DMA arbiter: two client models issuing reads and writes of random length
//! (a client's address carries its number in bit 40, so the host can tell whose request it
//! got), and a host model that answers reads with a pattern of the address and checks every
//! write's bytes. Each client checks that it gets exactly its own read data, in order, and a
//! done for each of its writes; the host checks that the tag's top bit names the client.

use std::collections::VecDeque;

use crate::axis::Rng;
use crate::lockstep::Mismatch;
use crate::ports::PortDut;

/// The host memory pattern: the 8 bytes at `addr`.
pub fn pattern(addr: u64) -> u64 {
    addr.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (addr >> 7)
}

/// What a run did.
#[derive(Debug, Default)]
pub struct ArbiterRun {
    pub cycles: u64,
    pub read_beats: u64,
    pub write_beats: u64,
    pub reads: u64,
    pub writes: u64,
    /// Protocol or data errors found by the models.
    pub errors: Vec<String>,
}

#[derive(Clone, Copy)]
enum Op {
    Read { addr: u64, len: u64 },
    Write { addr: u64, len: u64 },
}

struct Client {
    n: usize,
    ops: VecDeque<Op>,
    tag: u64,
    /// Reads issued, not yet answered: (addr, len, tag), and beats received of the first.
    reads: VecDeque<(u64, u64, u64)>,
    beat: u64,
    /// The write whose data is being sent: (addr, beats, next beat).
    writing: Option<(u64, u64, u64)>,
    dones_due: VecDeque<u64>,
    // Decisions of this cycle.
    rd_valid: bool,
    wr_valid: bool,
    data_valid: bool,
    rd_ready: bool,
}

impl Client {
    fn p(&self, name: &str) -> String {
        format!("s{}_{name}", self.n)
    }
}

struct HostWrite {
    tag: u64,
    addr: u64,
    len: u64,
    got: u64,
}

/// Runs `ops` random operations per client through the arbiter; `stall` is the chance of a
/// ready or valid held low on any side (0: back to back).
pub fn run_arbiter(
    d: &mut dyn PortDut,
    seed: u64,
    stall: f64,
    ops: usize,
) -> Result<ArbiterRun, Mismatch> {
    let mut rng = Rng::new(seed);
    let mut clients: Vec<Client> = (0..2)
        .map(|n| Client {
            n,
            ops: (0..ops)
                .map(|i| {
                    let addr = (n as u64) << 40 | (rng.below(1 << 20) * 8);
                    let len = 1 + rng.below(if i % 3 == 0 { 512 } else { 64 });
                    if rng.chance(0.5) {
                        Op::Read { addr, len }
                    } else {
                        Op::Write { addr, len }
                    }
                })
                .collect(),
            tag: 0,
            reads: VecDeque::new(),
            beat: 0,
            writing: None,
            dones_due: VecDeque::new(),
            rd_valid: false,
            wr_valid: false,
            data_valid: false,
            rd_ready: false,
        })
        .collect();
    let mut run = ArbiterRun::default();
    let mut host_reads: VecDeque<(u64, u64, u64)> = VecDeque::new();
    let mut host_beat = 0u64;
    let mut host_write: Option<HostWrite> = None;
    let mut host_done: Option<(u64, bool)> = None;
    let i = |d: &dyn PortDut, n: &str| d.input(n);
    let o = |d: &dyn PortDut, n: &str| d.get(d.output(n));
    d.set(i(d, "reset"), 1);
    d.settle()?;
    d.tick();
    d.set(i(d, "reset"), 0);
    let limit = 200 * ops as u64 + 10_000;
    loop {
        let all_done = clients.iter().all(|c| {
            c.ops.is_empty() && c.reads.is_empty() && c.writing.is_none() && c.dones_due.is_empty()
        });
        if all_done || run.cycles > limit {
            if !all_done {
                run.errors
                    .push(format!("not finished after {limit} cycles"));
            }
            break;
        }
        // ---- Drive: clients.
        for c in clients.iter_mut() {
            // A request or beat once offered stays offered until taken.
            let go = !rng.chance(stall) || c.rd_valid || c.wr_valid;
            let (mut ra, mut rl, mut wa, mut wl) = (0, 0, 0, 0);
            match c.ops.front() {
                Some(Op::Read { addr, len }) if go && (c.rd_valid || c.reads.len() < 2) => {
                    c.rd_valid = true;
                    (ra, rl) = (*addr, *len);
                }
                Some(Op::Write { addr, len }) if go && c.writing.is_none() => {
                    c.wr_valid = true;
                    (wa, wl) = (*addr, *len);
                }
                _ => {}
            }
            d.set(i(d, &c.p("rd_req_valid")), u64::from(c.rd_valid));
            d.set(i(d, &c.p("rd_req_addr")), ra);
            d.set(i(d, &c.p("rd_req_len")), rl);
            d.set(i(d, &c.p("rd_req_tag")), c.tag & 0x7F);
            d.set(i(d, &c.p("wr_req_valid")), u64::from(c.wr_valid));
            d.set(i(d, &c.p("wr_req_addr")), wa);
            d.set(i(d, &c.p("wr_req_len")), wl);
            d.set(i(d, &c.p("wr_req_tag")), c.tag & 0x7F);
            c.rd_ready = !rng.chance(stall);
            d.set(i(d, &c.p("rd_data_ready")), u64::from(c.rd_ready));
            c.data_valid = c.writing.is_some() && (c.data_valid || !rng.chance(stall));
            let (mut data, mut keep, mut last) = (0, 0, false);
            if let Some((addr, beats, k)) = c.writing {
                data = !pattern(addr + 8 * k);
                keep = 0xFF;
                last = k + 1 == beats;
            }
            d.set(i(d, &c.p("wr_data_valid")), u64::from(c.data_valid));
            d.set(i(d, &c.p("wr_data")), data);
            d.set(i(d, &c.p("wr_data_keep")), keep);
            d.set(i(d, &c.p("wr_data_last")), u64::from(last));
        }
        // ---- Drive: host.
        let h_rd_req_ready = host_reads.len() < 4 && !rng.chance(stall);
        d.set(i(d, "m_dma_rd_req_ready"), u64::from(h_rd_req_ready));
        let h_rd_valid = !host_reads.is_empty() && !rng.chance(stall);
        let (mut hd, mut hl, mut ht) = (0, false, 0);
        if let (true, Some(&(addr, len, tag))) = (h_rd_valid, host_reads.front()) {
            hd = pattern(addr + 8 * host_beat);
            hl = host_beat + 1 == len.div_ceil(8);
            ht = tag;
        }
        d.set(i(d, "m_dma_rd_data_valid"), u64::from(h_rd_valid));
        d.set(i(d, "m_dma_rd_data"), hd);
        d.set(i(d, "m_dma_rd_data_last"), u64::from(hl));
        d.set(i(d, "m_dma_rd_data_err"), 0);
        d.set(i(d, "m_dma_rd_data_tag"), ht);
        let h_wr_req_ready = host_write.is_none() && host_done.is_none() && !rng.chance(stall);
        d.set(i(d, "m_dma_wr_req_ready"), u64::from(h_wr_req_ready));
        let h_wr_data_ready = host_write.is_some() && !rng.chance(stall);
        d.set(i(d, "m_dma_wr_data_ready"), u64::from(h_wr_data_ready));
        let h_done = host_done.take();
        d.set(i(d, "m_dma_wr_done_valid"), u64::from(h_done.is_some()));
        d.set(i(d, "m_dma_wr_done_tag"), h_done.map_or(0, |x| x.0));
        d.set(
            i(d, "m_dma_wr_done_err"),
            u64::from(h_done.is_some_and(|x| x.1)),
        );

        d.settle()?;

        // ---- Observe: host side.
        if h_rd_req_ready && o(d, "m_dma_rd_req_valid") != 0 {
            let (addr, len, tag) = (
                o(d, "m_dma_rd_req_addr"),
                o(d, "m_dma_rd_req_len"),
                o(d, "m_dma_rd_req_tag"),
            );
            if tag >> 7 != addr >> 40 & 1 {
                run.errors
                    .push(format!("read of {addr:#x} tagged {tag:#x}"));
            }
            run.reads += 1;
            host_reads.push_back((addr, len, tag));
        }
        if h_rd_valid && o(d, "m_dma_rd_data_ready") != 0 {
            run.read_beats += 1;
            host_beat += 1;
            if host_reads
                .front()
                .is_some_and(|r| host_beat == r.1.div_ceil(8))
            {
                host_reads.pop_front();
                host_beat = 0;
            }
        }
        if h_wr_data_ready && o(d, "m_dma_wr_data_valid") != 0 {
            run.write_beats += 1;
            let w = host_write.as_mut().expect("a write");
            let want = !pattern(w.addr + 8 * w.got);
            if o(d, "m_dma_wr_data") != want {
                run.errors
                    .push(format!("write {:#x} beat {}: wrong data", w.addr, w.got));
            }
            w.got += 1;
            if o(d, "m_dma_wr_data_last") != 0 {
                let w = host_write.take().expect("a write");
                if w.got != w.len.div_ceil(8) {
                    run.errors
                        .push(format!("write {:#x}: {} beats", w.addr, w.got));
                }
                host_done = Some((w.tag, false));
            }
        }
        if h_wr_req_ready && o(d, "m_dma_wr_req_valid") != 0 {
            let (addr, len, tag) = (
                o(d, "m_dma_wr_req_addr"),
                o(d, "m_dma_wr_req_len"),
                o(d, "m_dma_wr_req_tag"),
            );
            if tag >> 7 != addr >> 40 & 1 {
                run.errors
                    .push(format!("write of {addr:#x} tagged {tag:#x}"));
            }
            run.writes += 1;
            host_write = Some(HostWrite {
                tag,
                addr,
                len,
                got: 0,
            });
        }
        // ---- Observe: clients.
        let (rd, rd_last, rd_tag) = (o(d, "rd_data"), o(d, "rd_data_last"), o(d, "rd_data_tag"));
        let done_tag = o(d, "wr_done_tag");
        for c in clients.iter_mut() {
            if c.rd_valid && o(d, &c.p("rd_req_ready")) != 0 {
                c.rd_valid = false;
                if let Some(Op::Read { addr, len }) = c.ops.pop_front() {
                    c.reads.push_back((addr, len, c.tag & 0x7F));
                }
                c.tag += 1;
            }
            if c.wr_valid && o(d, &c.p("wr_req_ready")) != 0 {
                c.wr_valid = false;
                if let Some(Op::Write { addr, len }) = c.ops.pop_front() {
                    c.writing = Some((addr, len.div_ceil(8), 0));
                    c.dones_due.push_back(c.tag & 0x7F);
                }
                c.tag += 1;
            }
            if c.rd_ready && o(d, &c.p("rd_data_valid")) != 0 {
                match c.reads.front().copied() {
                    Some((addr, len, tag)) => {
                        let last = c.beat + 1 == len.div_ceil(8);
                        if rd != pattern(addr + 8 * c.beat)
                            || rd_tag != tag
                            || (rd_last != 0) != last
                        {
                            run.errors.push(format!(
                                "client {} read {addr:#x} beat {}: data, tag or last wrong",
                                c.n, c.beat
                            ));
                        }
                        c.beat += 1;
                        if last {
                            c.reads.pop_front();
                            c.beat = 0;
                        }
                    }
                    None => run
                        .errors
                        .push(format!("client {}: read data unasked for", c.n)),
                }
            }
            if c.data_valid && o(d, &c.p("wr_data_ready")) != 0 {
                c.data_valid = false;
                if let Some((addr, beats, k)) = c.writing {
                    c.writing = (k + 1 < beats).then_some((addr, beats, k + 1));
                }
            }
            if o(d, &c.p("wr_done_valid")) != 0 {
                match c.dones_due.pop_front() {
                    Some(t) if t == done_tag => {}
                    other => run.errors.push(format!(
                        "client {}: done {done_tag:#x}, expected {other:?}",
                        c.n
                    )),
                }
            }
        }
        d.tick();
        run.cycles += 1;
    }
    Ok(run)
}
