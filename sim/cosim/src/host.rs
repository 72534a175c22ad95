//! The host interface under simulation as a device a driver talks to: the `host_nic` top
//! (in rust-hdl and Verilator in lock-step, or in Verilator alone) with what sits around it on
//! a real board: host memory behind the DMA port ([`HostMemory`], [`DmaServer`]), the CSR
//! port's AXI4-Lite master, and the MAC side looped back ([`MacLoop`]: every frame the NIC
//! sends comes back into its receive path).
//!
//! Host memory is a set of mapped buffers at device addresses with unmapped gaps between
//! them; the DMA server refuses any request that does not lie wholly inside one buffer (read
//! beats come back with `err`, a write lands nowhere and completes with `err`) and counts it,
//! as an IOMMU would.

use std::collections::{BTreeMap, VecDeque};

use crate::axil::{AxilMaster, BusError, Env};
use crate::axis::Rng;
use crate::hdl_ports;
use crate::lockstep::Mismatch;
use crate::ports::{PortDut, PortLockStep, VerilatedPorts};
use rnic_hw::host_nic::HostNic;

hdl_ports!(rnic_hw::axil_slave::AxilSlave {
    inputs: [
        reset,
        s_axil_awaddr,
        s_axil_awvalid,
        s_axil_wdata,
        s_axil_wstrb,
        s_axil_wvalid,
        s_axil_bready,
        s_axil_araddr,
        s_axil_arvalid,
        s_axil_rready,
        reg_wr_hit,
        reg_rd_data,
        reg_rd_hit,
    ],
    outputs: [
        s_axil_awready,
        s_axil_wready,
        s_axil_bresp,
        s_axil_bvalid,
        s_axil_arready,
        s_axil_rdata,
        s_axil_rresp,
        s_axil_rvalid,
        reg_wr_en,
        reg_wr_addr,
        reg_wr_data,
        reg_rd_addr,
    ],
});

hdl_ports!(rnic_hw::host_nic::HostNic {
    inputs: [
        reset,
        link_up,
        s_axil_awaddr,
        s_axil_awvalid,
        s_axil_wdata,
        s_axil_wstrb,
        s_axil_wvalid,
        s_axil_bready,
        s_axil_araddr,
        s_axil_arvalid,
        s_axil_rready,
        s_axis_tdata,
        s_axis_tkeep,
        s_axis_tlast,
        s_axis_tvalid,
        s_axis_tuser,
        m_axis_tready,
        m_dma_rd_req_ready,
        m_dma_rd_data_valid,
        m_dma_rd_data,
        m_dma_rd_data_last,
        m_dma_rd_data_err,
        m_dma_rd_data_tag,
        m_dma_wr_req_ready,
        m_dma_wr_data_ready,
        m_dma_wr_done_valid,
        m_dma_wr_done_tag,
        m_dma_wr_done_err,
        m_sq_wqe_room,
        m_rq_wqe_room,
        s_cqe_valid,
        s_cqe_cq,
        s_cqe_data,
        s_cqe_last,
        av_look_valid,
        av_look_row,
        mr_look_valid,
        mr_look_row,
        qp_look_valid,
        qp_look_row,
    ],
    outputs: [
        s_axil_awready,
        s_axil_wready,
        s_axil_bresp,
        s_axil_bvalid,
        s_axil_arready,
        s_axil_rdata,
        s_axil_rresp,
        s_axil_rvalid,
        s_axis_tready,
        m_axis_tdata,
        m_axis_tkeep,
        m_axis_tlast,
        m_axis_tvalid,
        m_axis_tuser,
        m_dma_rd_req_valid,
        m_dma_rd_req_addr,
        m_dma_rd_req_len,
        m_dma_rd_req_tag,
        m_dma_rd_data_ready,
        m_dma_wr_req_valid,
        m_dma_wr_req_addr,
        m_dma_wr_req_len,
        m_dma_wr_req_tag,
        m_dma_wr_data_valid,
        m_dma_wr_data,
        m_dma_wr_data_keep,
        m_dma_wr_data_last,
        m_sq_wqe_valid,
        m_sq_wqe_data,
        m_sq_wqe_last,
        m_sq_wqe_err,
        m_sq_wqe_queue,
        m_sq_wqe_index,
        m_rq_wqe_valid,
        m_rq_wqe_data,
        m_rq_wqe_last,
        m_rq_wqe_err,
        m_rq_wqe_queue,
        m_rq_wqe_index,
        s_cqe_ready,
        av_look_ready,
        av_got_valid,
        av_got_row,
        av_got_data,
        mr_look_ready,
        mr_got_valid,
        mr_got_row,
        mr_got_data,
        qp_look_ready,
        qp_got_valid,
        qp_got_row,
        qp_got_data,
        irq,
    ],
});

hdl_ports!(rnic_hw::dma_arbiter::DmaArbiter<7, 8> {
    inputs: [
        reset,
        s0_rd_req_valid,
        s0_rd_req_addr,
        s0_rd_req_len,
        s0_rd_req_tag,
        s0_rd_data_ready,
        s0_wr_req_valid,
        s0_wr_req_addr,
        s0_wr_req_len,
        s0_wr_req_tag,
        s0_wr_data_valid,
        s0_wr_data,
        s0_wr_data_keep,
        s0_wr_data_last,
        s1_rd_req_valid,
        s1_rd_req_addr,
        s1_rd_req_len,
        s1_rd_req_tag,
        s1_rd_data_ready,
        s1_wr_req_valid,
        s1_wr_req_addr,
        s1_wr_req_len,
        s1_wr_req_tag,
        s1_wr_data_valid,
        s1_wr_data,
        s1_wr_data_keep,
        s1_wr_data_last,
        m_dma_rd_req_ready,
        m_dma_rd_data_valid,
        m_dma_rd_data,
        m_dma_rd_data_last,
        m_dma_rd_data_err,
        m_dma_rd_data_tag,
        m_dma_wr_req_ready,
        m_dma_wr_data_ready,
        m_dma_wr_done_valid,
        m_dma_wr_done_tag,
        m_dma_wr_done_err,
    ],
    outputs: [
        s0_rd_req_ready,
        s0_rd_data_valid,
        s0_wr_req_ready,
        s0_wr_data_ready,
        s0_wr_done_valid,
        s1_rd_req_ready,
        s1_rd_data_valid,
        s1_wr_req_ready,
        s1_wr_data_ready,
        s1_wr_done_valid,
        rd_data,
        rd_data_last,
        rd_data_err,
        rd_data_tag,
        wr_done_tag,
        wr_done_err,
        m_dma_rd_req_valid,
        m_dma_rd_req_addr,
        m_dma_rd_req_len,
        m_dma_rd_req_tag,
        m_dma_rd_data_ready,
        m_dma_wr_req_valid,
        m_dma_wr_req_addr,
        m_dma_wr_req_len,
        m_dma_wr_req_tag,
        m_dma_wr_data_valid,
        m_dma_wr_data,
        m_dma_wr_data_keep,
        m_dma_wr_data_last,
    ],
});

hdl_ports!(rnic_hw::queue_mgr::QueueMgr<4> {
    inputs: [
        reset, wr_en, wr_queue, wr_word, wr_data, rd_start, rd_queue, rd_word, look_valid,
        look_queue, commit_valid, commit_queue, commit_index, disarm_valid, disarm_queue,
        disarm_size,
    ],
    outputs: [
        rd_data, look_ready, got_valid, got_queue, got_base, got_size, got_prod, got_cons,
        commit_ready, db_valid, db_queue, disarm_ready,
    ],
});

hdl_ports!(rnic_hw::cq_path::CqPath<2> {
    inputs: [
        reset, reg_wr_en, reg_wr_queue, reg_wr_word, reg_wr_data, reg_rd_start, reg_rd_queue, reg_rd_word, s_cqe_valid, s_cqe_cq, s_cqe_data, s_cqe_last, wr_req_ready, wr_data_ready, wr_done_valid, wr_done_err,
    ],
    outputs: [
        reg_rd_data, s_cqe_ready, wr_req_valid, wr_req_addr, wr_req_len, wr_req_tag, wr_data_valid, wr_data, wr_data_keep, wr_data_last, ev_written, ev_overflow, ev_dma_error, ev_irq, ev_irq_cq,
    ],
});

hdl_ports!(rnic_hw::wq_path::WqPath<2, 4> {
    inputs: [
        reset, reg_wr_en, reg_wr_queue, reg_wr_word, reg_wr_data, reg_rd_start, reg_rd_queue, reg_rd_word, rd_req_ready, rd_data_valid, rd_data, rd_data_last, rd_data_err, m_wqe_room,
    ],
    outputs: [
        reg_rd_data, rd_req_valid, rd_req_addr, rd_req_len, rd_req_tag, rd_data_ready, m_wqe_valid, m_wqe_data, m_wqe_last, m_wqe_err, m_wqe_queue, m_wqe_index,
    ],
});

/// The port indices the surroundings use, resolved once.
struct Pins {
    m_axis_tready: usize,
    m_dma_rd_data: usize,
    m_dma_rd_data_err: usize,
    m_dma_rd_data_last: usize,
    m_dma_rd_data_tag: usize,
    m_dma_rd_data_valid: usize,
    m_dma_rd_req_ready: usize,
    m_dma_wr_data_ready: usize,
    m_dma_wr_done_err: usize,
    m_dma_wr_done_tag: usize,
    m_dma_wr_done_valid: usize,
    m_dma_wr_req_ready: usize,
    s_axis_tdata: usize,
    s_axis_tkeep: usize,
    s_axis_tlast: usize,
    s_axis_tuser: usize,
    s_axis_tvalid: usize,
    o_m_axis_tdata: usize,
    o_m_axis_tkeep: usize,
    o_m_axis_tlast: usize,
    o_m_axis_tvalid: usize,
    o_m_dma_rd_data_ready: usize,
    o_m_dma_rd_req_addr: usize,
    o_m_dma_rd_req_len: usize,
    o_m_dma_rd_req_tag: usize,
    o_m_dma_rd_req_valid: usize,
    o_m_dma_wr_data: usize,
    o_m_dma_wr_data_keep: usize,
    o_m_dma_wr_data_last: usize,
    o_m_dma_wr_data_valid: usize,
    o_m_dma_wr_req_addr: usize,
    o_m_dma_wr_req_len: usize,
    o_m_dma_wr_req_tag: usize,
    o_m_dma_wr_req_valid: usize,
    o_s_axis_tready: usize,
    /// The send and receive fetch engines' outputs: room in; valid, data, last, err, queue,
    /// index out.
    wqe: [WqePins; 2],
    s_cqe_valid: usize,
    s_cqe_cq: usize,
    s_cqe_data: usize,
    s_cqe_last: usize,
    o_s_cqe_ready: usize,
}

struct WqePins {
    room: usize,
    valid: usize,
    data: usize,
    last: usize,
    err: usize,
    queue: usize,
    index: usize,
}

impl WqePins {
    fn new(d: &dyn PortDut, ring: &str) -> Self {
        let o = |n: &str| d.output(&format!("m_{ring}_wqe_{n}"));
        WqePins {
            room: d.input(&format!("m_{ring}_wqe_room")),
            valid: o("valid"),
            data: o("data"),
            last: o("last"),
            err: o("err"),
            queue: o("queue"),
            index: o("index"),
        }
    }
}

impl Pins {
    fn new(d: &dyn PortDut) -> Self {
        Pins {
            m_axis_tready: d.input("m_axis_tready"),
            m_dma_rd_data: d.input("m_dma_rd_data"),
            m_dma_rd_data_err: d.input("m_dma_rd_data_err"),
            m_dma_rd_data_last: d.input("m_dma_rd_data_last"),
            m_dma_rd_data_tag: d.input("m_dma_rd_data_tag"),
            m_dma_rd_data_valid: d.input("m_dma_rd_data_valid"),
            m_dma_rd_req_ready: d.input("m_dma_rd_req_ready"),
            m_dma_wr_data_ready: d.input("m_dma_wr_data_ready"),
            m_dma_wr_done_err: d.input("m_dma_wr_done_err"),
            m_dma_wr_done_tag: d.input("m_dma_wr_done_tag"),
            m_dma_wr_done_valid: d.input("m_dma_wr_done_valid"),
            m_dma_wr_req_ready: d.input("m_dma_wr_req_ready"),
            s_axis_tdata: d.input("s_axis_tdata"),
            s_axis_tkeep: d.input("s_axis_tkeep"),
            s_axis_tlast: d.input("s_axis_tlast"),
            s_axis_tuser: d.input("s_axis_tuser"),
            s_axis_tvalid: d.input("s_axis_tvalid"),
            o_m_axis_tdata: d.output("m_axis_tdata"),
            o_m_axis_tkeep: d.output("m_axis_tkeep"),
            o_m_axis_tlast: d.output("m_axis_tlast"),
            o_m_axis_tvalid: d.output("m_axis_tvalid"),
            o_m_dma_rd_data_ready: d.output("m_dma_rd_data_ready"),
            o_m_dma_rd_req_addr: d.output("m_dma_rd_req_addr"),
            o_m_dma_rd_req_len: d.output("m_dma_rd_req_len"),
            o_m_dma_rd_req_tag: d.output("m_dma_rd_req_tag"),
            o_m_dma_rd_req_valid: d.output("m_dma_rd_req_valid"),
            o_m_dma_wr_data: d.output("m_dma_wr_data"),
            o_m_dma_wr_data_keep: d.output("m_dma_wr_data_keep"),
            o_m_dma_wr_data_last: d.output("m_dma_wr_data_last"),
            o_m_dma_wr_data_valid: d.output("m_dma_wr_data_valid"),
            o_m_dma_wr_req_addr: d.output("m_dma_wr_req_addr"),
            o_m_dma_wr_req_len: d.output("m_dma_wr_req_len"),
            o_m_dma_wr_req_tag: d.output("m_dma_wr_req_tag"),
            o_m_dma_wr_req_valid: d.output("m_dma_wr_req_valid"),
            o_s_axis_tready: d.output("s_axis_tready"),
            wqe: [WqePins::new(d, "sq"), WqePins::new(d, "rq")],
            s_cqe_valid: d.input("s_cqe_valid"),
            s_cqe_cq: d.input("s_cqe_cq"),
            s_cqe_data: d.input("s_cqe_data"),
            s_cqe_last: d.input("s_cqe_last"),
            o_s_cqe_ready: d.output("s_cqe_ready"),
        }
    }
}

/// Where the first buffer is mapped, and the unmapped gap after every buffer.
const FIRST: u64 = 0x1_0000_0000;
const GAP: u64 = 0x1_0000;

/// Host memory as the device sees it: buffers at device addresses.
#[derive(Default)]
pub struct HostMemory {
    buffers: BTreeMap<u64, Vec<u8>>,
    next: u64,
}

impl HostMemory {
    /// Maps a zeroed buffer of `len` bytes; returns its device address (4 KiB aligned).
    pub fn alloc(&mut self, len: usize) -> u64 {
        if self.next == 0 {
            self.next = FIRST;
        }
        let addr = self.next;
        self.buffers.insert(addr, vec![0; len]);
        self.next = (addr + len as u64 + GAP).next_multiple_of(0x1000);
        addr
    }

    /// The buffer holding all of `addr .. addr + len`, and the offset in it.
    fn locate(&self, addr: u64, len: usize) -> Option<(u64, usize)> {
        let (&base, buf) = self.buffers.range(..=addr).next_back()?;
        let off = (addr - base) as usize;
        (off.checked_add(len)? <= buf.len()).then_some((base, off))
    }

    /// `len` bytes at `addr`, if they lie in one buffer.
    pub fn read(&self, addr: u64, len: usize) -> Option<&[u8]> {
        let (base, off) = self.locate(addr, len)?;
        Some(&self.buffers[&base][off..off + len])
    }

    /// Writes `bytes` at `addr` if they lie in one buffer; false (and nothing written) if not.
    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> bool {
        match self.locate(addr, bytes.len()) {
            Some((base, off)) => {
                let buf = self.buffers.get_mut(&base).expect("located");
                buf[off..off + bytes.len()].copy_from_slice(bytes);
                true
            }
            None => false,
        }
    }
}

/// DMA statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DmaStats {
    pub reads: u64,
    pub writes: u64,
    pub read_beats: u64,
    pub write_beats: u64,
    pub refused_reads: u64,
    pub refused_writes: u64,
}

/// The host side of the DMA port: reads and writes `HostMemory`, with random stalls.
pub struct DmaServer {
    rng: Rng,
    pub stall: f64,
    reads: VecDeque<(u64, Vec<u64>, bool)>,
    beat: usize,
    write: Option<Write>,
    done: Option<(u64, bool)>,
    pub stats: DmaStats,
    // Cycle decisions, made in drive and used in observe.
    rd_req_ready: bool,
    rd_data_valid: bool,
    wr_req_ready: bool,
    wr_data_ready: bool,
    done_valid: bool,
}

struct Write {
    tag: u64,
    addr: u64,
    len: usize,
    bytes: Vec<u8>,
    bad: bool,
}

impl DmaServer {
    pub fn new(seed: u64, stall: f64) -> Self {
        DmaServer {
            rng: Rng::new(seed),
            stall,
            reads: VecDeque::new(),
            beat: 0,
            write: None,
            done: None,
            stats: DmaStats::default(),
            rd_req_ready: false,
            rd_data_valid: false,
            wr_req_ready: false,
            wr_data_ready: false,
            done_valid: false,
        }
    }

    /// The tags and lengths in beats of the reads waiting for their data to be taken.
    pub fn pending_reads(&self) -> Vec<(u64, usize, usize)> {
        self.reads
            .iter()
            .map(|(t, b, _)| (*t, b.len(), self.beat))
            .collect()
    }

    fn go(&mut self) -> bool {
        !self.rng.chance(self.stall)
    }

    fn drive(&mut self, d: &mut dyn PortDut, p: &Pins) {
        self.rd_req_ready = self.reads.len() < 4 && self.go();
        d.set(p.m_dma_rd_req_ready, u64::from(self.rd_req_ready));
        self.rd_data_valid = false;
        let (mut data, mut last, mut err, mut tag) = (0, false, false, 0);
        let go = self.go();
        if let (Some((t, beats, e)), true) = (self.reads.front(), go) {
            self.rd_data_valid = true;
            data = beats[self.beat];
            last = self.beat + 1 == beats.len();
            err = *e;
            tag = *t;
        }
        d.set(p.m_dma_rd_data_valid, u64::from(self.rd_data_valid));
        d.set(p.m_dma_rd_data, data);
        d.set(p.m_dma_rd_data_last, u64::from(last));
        d.set(p.m_dma_rd_data_err, u64::from(err));
        d.set(p.m_dma_rd_data_tag, tag);
        self.wr_req_ready = self.write.is_none() && self.done.is_none() && self.go();
        d.set(p.m_dma_wr_req_ready, u64::from(self.wr_req_ready));
        self.wr_data_ready = self.write.is_some() && self.go();
        d.set(p.m_dma_wr_data_ready, u64::from(self.wr_data_ready));
        self.done_valid = self.done.is_some();
        let (dt, de) = self.done.unwrap_or((0, false));
        d.set(p.m_dma_wr_done_valid, u64::from(self.done_valid));
        d.set(p.m_dma_wr_done_tag, dt);
        d.set(p.m_dma_wr_done_err, u64::from(de));
    }

    fn observe(&mut self, d: &dyn PortDut, p: &Pins, mem: &mut HostMemory) {
        if self.done_valid {
            self.done = None;
        }
        if self.rd_req_ready && d.get(p.o_m_dma_rd_req_valid) != 0 {
            let (addr, len, tag) = (
                d.get(p.o_m_dma_rd_req_addr),
                d.get(p.o_m_dma_rd_req_len) as usize,
                d.get(p.o_m_dma_rd_req_tag),
            );
            self.stats.reads += 1;
            let n = len.div_ceil(8).max(1);
            let bytes = if addr % 8 == 0 && len > 0 {
                mem.read(addr, len).map(<[u8]>::to_vec)
            } else {
                None
            };
            let beats = match &bytes {
                Some(b) => (0..n)
                    .map(|k| {
                        let mut w = [0u8; 8];
                        let chunk = &b[8 * k..(8 * k + 8).min(len)];
                        w[..chunk.len()].copy_from_slice(chunk);
                        u64::from_le_bytes(w)
                    })
                    .collect(),
                None => vec![0; n],
            };
            if bytes.is_none() {
                self.stats.refused_reads += 1;
            }
            self.reads.push_back((tag, beats, bytes.is_none()));
        }
        if self.rd_data_valid && d.get(p.o_m_dma_rd_data_ready) != 0 {
            self.stats.read_beats += 1;
            self.beat += 1;
            if self.reads.front().is_some_and(|r| self.beat == r.1.len()) {
                self.reads.pop_front();
                self.beat = 0;
            }
        }
        if self.wr_data_ready && d.get(p.o_m_dma_wr_data_valid) != 0 {
            self.stats.write_beats += 1;
            let w = self.write.as_mut().expect("a write in progress");
            let (data, keep) = (d.get(p.o_m_dma_wr_data), d.get(p.o_m_dma_wr_data_keep));
            let bytes = data.to_le_bytes();
            // Bytes are contiguous: keep is a run from bit 0.
            let n = keep.trailing_ones() as usize;
            if keep >> n != 0 || (w.bytes.len() % 8 != 0 && n > 0) {
                w.bad = true;
            }
            w.bytes.extend_from_slice(&bytes[..n]);
            if d.get(p.o_m_dma_wr_data_last) != 0 {
                let w = self.write.take().expect("a write");
                let ok = !w.bad
                    && w.bytes.len() <= w.len
                    && mem.locate(w.addr, w.len).is_some()
                    && mem.write(w.addr, &w.bytes);
                if !ok {
                    self.stats.refused_writes += 1;
                }
                self.done = Some((w.tag, !ok));
            }
        }
        if self.wr_req_ready && d.get(p.o_m_dma_wr_req_valid) != 0 {
            self.stats.writes += 1;
            let addr = d.get(p.o_m_dma_wr_req_addr);
            self.write = Some(Write {
                tag: d.get(p.o_m_dma_wr_req_tag),
                addr,
                len: d.get(p.o_m_dma_wr_req_len) as usize,
                bytes: Vec::new(),
                // Writes may start at any byte (the port's contract); reads are aligned.
                bad: false,
            });
        }
    }
}

/// The MAC side looped back: frames the NIC sends are queued and fed into its receive path.
pub struct MacLoop {
    rng: Rng,
    /// Chance the loop holds `m_axis_tready` low for a cycle.
    pub stall: f64,
    /// Chance of an idle cycle on the receive side.
    pub idle: f64,
    queue: VecDeque<(u64, u8, bool)>,
    current: Vec<u8>,
    /// Every frame the NIC sent, in order.
    pub sent: Vec<Vec<u8>>,
    tready: bool,
    tvalid: bool,
}

impl MacLoop {
    pub fn new(seed: u64, stall: f64, idle: f64) -> Self {
        MacLoop {
            rng: Rng::new(seed),
            stall,
            idle,
            queue: VecDeque::new(),
            current: Vec::new(),
            sent: Vec::new(),
            tready: false,
            tvalid: false,
        }
    }

    fn drive(&mut self, d: &mut dyn PortDut, p: &Pins) {
        self.tready = !self.rng.chance(self.stall);
        d.set(p.m_axis_tready, u64::from(self.tready));
        self.tvalid = !self.queue.is_empty() && !self.rng.chance(self.idle);
        let (data, keep, last) = self.queue.front().copied().unwrap_or((0, 0, false));
        d.set(p.s_axis_tvalid, u64::from(self.tvalid));
        d.set(p.s_axis_tdata, data);
        d.set(p.s_axis_tkeep, u64::from(keep));
        d.set(p.s_axis_tlast, u64::from(last));
        d.set(p.s_axis_tuser, 0);
    }

    fn observe(&mut self, d: &dyn PortDut, p: &Pins) {
        if self.tvalid && d.get(p.o_s_axis_tready) != 0 {
            self.queue.pop_front();
        }
        if self.tready && d.get(p.o_m_axis_tvalid) != 0 {
            let (data, keep, last) = (
                d.get(p.o_m_axis_tdata),
                d.get(p.o_m_axis_tkeep) as u8,
                d.get(p.o_m_axis_tlast) != 0,
            );
            self.queue.push_back((data, keep, last));
            let n = keep.count_ones() as usize;
            self.current.extend_from_slice(&data.to_le_bytes()[..n]);
            if last {
                self.sent.push(std::mem::take(&mut self.current));
            }
        }
    }
}

/// A work request a fetch engine handed out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fetched {
    pub queue: u64,
    pub index: u64,
    pub bytes: Vec<u8>,
    /// The host refused the DMA read of it.
    pub err: bool,
}

/// The transport's side of the QP rings, standing in for the engines that come with the
/// transport: it takes every work request the send and receive fetch engines hand out (saying
/// now and then that it has no room, so that fetching waits), and hands in completions.
pub struct QueueEngines {
    rng: Rng,
    /// Chance of a cycle without room for a request.
    pub busy: f64,
    /// Requests from the send rings (0) and the receive rings (1), in the order handed out.
    pub fetched: [Vec<Fetched>; 2],
    current: [Vec<u8>; 2],
    /// Completions to hand in: the CQ and the 32 bytes of its `cqe`.
    pub cqes: VecDeque<(u64, [u8; 32])>,
    beat: usize,
    cqe_valid: bool,
}

impl QueueEngines {
    pub fn new(seed: u64, busy: f64) -> Self {
        QueueEngines {
            rng: Rng::new(seed),
            busy,
            fetched: [Vec::new(), Vec::new()],
            current: [Vec::new(), Vec::new()],
            cqes: VecDeque::new(),
            beat: 0,
            cqe_valid: false,
        }
    }

    fn drive(&mut self, d: &mut dyn PortDut, p: &Pins) {
        for w in &p.wqe {
            let room = !self.rng.chance(self.busy);
            d.set(w.room, u64::from(room));
        }
        let (mut cq, mut data, mut last) = (0, 0, false);
        if let Some((q, bytes)) = self.cqes.front() {
            // A beat once offered stays offered until taken.
            self.cqe_valid = self.cqe_valid || !self.rng.chance(self.busy);
            cq = *q;
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[8 * self.beat..8 * self.beat + 8]);
            data = u64::from_le_bytes(w);
            last = self.beat == 3;
        }
        d.set(p.s_cqe_valid, u64::from(self.cqe_valid));
        d.set(p.s_cqe_cq, cq);
        d.set(p.s_cqe_data, data);
        d.set(p.s_cqe_last, u64::from(last));
    }

    fn observe(&mut self, d: &dyn PortDut, p: &Pins) {
        for (k, w) in p.wqe.iter().enumerate() {
            if d.get(w.valid) == 0 {
                continue;
            }
            self.current[k].extend_from_slice(&d.get(w.data).to_le_bytes());
            if d.get(w.last) != 0 {
                self.fetched[k].push(Fetched {
                    queue: d.get(w.queue),
                    index: d.get(w.index),
                    bytes: std::mem::take(&mut self.current[k]),
                    err: d.get(w.err) != 0,
                });
            }
        }
        if self.cqe_valid && d.get(p.o_s_cqe_ready) != 0 {
            self.cqe_valid = false;
            self.beat += 1;
            if self.beat == 4 {
                self.beat = 0;
                self.cqes.pop_front();
            }
        }
    }
}

/// Everything around the NIC, run on every cycle.
pub struct Surroundings {
    pub mem: HostMemory,
    pub dma: DmaServer,
    pub mac: MacLoop,
    pub engines: QueueEngines,
    irq: usize,
    pins: Pins,
    /// The interrupt line as of the last cycle.
    pub irq_line: bool,
    /// Rising edges of the interrupt line.
    pub irq_edges: u64,
}

impl Env for Surroundings {
    fn drive(&mut self, d: &mut dyn PortDut) {
        self.dma.drive(d, &self.pins);
        self.mac.drive(d, &self.pins);
        self.engines.drive(d, &self.pins);
    }
    fn observe(&mut self, d: &dyn PortDut) {
        self.dma.observe(d, &self.pins, &mut self.mem);
        self.mac.observe(d, &self.pins);
        self.engines.observe(d, &self.pins);
        let line = d.get(self.irq) != 0;
        if line && !self.irq_line {
            self.irq_edges += 1;
        }
        self.irq_line = line;
    }
}

/// How a simulated device runs.
#[derive(Clone, Copy, Debug)]
pub struct DeviceConfig {
    /// rust-hdl and Verilator in lock-step (slow, compares every output), or Verilator alone.
    pub lockstep: bool,
    pub seed: u64,
    /// Chance of a stall cycle on the DMA port, the CSR port and the MAC's transmit side.
    pub stall: f64,
    /// Chance of an idle cycle on the receive side.
    pub idle: f64,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig {
            lockstep: false,
            seed: 1,
            stall: 0.0,
            idle: 0.0,
        }
    }
}

/// The simulated host interface.
pub struct SimDevice {
    pub dut: Box<dyn PortDut>,
    pub env: Surroundings,
    bus: AxilMaster,
}

impl SimDevice {
    pub fn new(cfg: DeviceConfig) -> Result<Self, String> {
        let mut dut: Box<dyn PortDut> = if cfg.lockstep {
            Box::new(PortLockStep::new(HostNic::new(), "host_nic", cfg.seed)?)
        } else {
            Box::new(VerilatedPorts::of::<HostNic>("host_nic")?)
        };
        let bus = AxilMaster::new(dut.as_ref(), cfg.seed ^ 0xA5, cfg.stall);
        let env = Surroundings {
            mem: HostMemory::default(),
            dma: DmaServer::new(cfg.seed ^ 0x5A, cfg.stall),
            mac: MacLoop::new(cfg.seed ^ 0x33, cfg.stall, cfg.idle),
            engines: QueueEngines::new(cfg.seed ^ 0x77, cfg.stall),
            irq: dut.output("irq"),
            pins: Pins::new(dut.as_ref()),
            irq_line: false,
            irq_edges: 0,
        };
        let (reset, link) = (dut.input("reset"), dut.input("link_up"));
        dut.set(link, 1);
        dut.set(reset, 1);
        let mut d = SimDevice { dut, env, bus };
        for _ in 0..4 {
            d.run(1).map_err(|e| e.to_string())?;
        }
        d.dut.set(reset, 0);
        Ok(d)
    }

    /// Runs `cycles` clock cycles.
    pub fn run(&mut self, cycles: u64) -> Result<(), Mismatch> {
        for _ in 0..cycles {
            crate::axil::cycle(self.dut.as_mut(), &mut self.env)?;
        }
        Ok(())
    }

    pub fn read32(&mut self, addr: u32) -> Result<u32, BusError> {
        let (v, resp) = self.bus.read_env(self.dut.as_mut(), &mut self.env, addr)?;
        if resp != 0 {
            return Err(BusError::Response { addr, resp });
        }
        Ok(v)
    }

    pub fn write32(&mut self, addr: u32, v: u32) -> Result<(), BusError> {
        let resp = self
            .bus
            .write_strb_env(self.dut.as_mut(), &mut self.env, addr, v, 0xF)?;
        if resp != 0 {
            return Err(BusError::Response { addr, resp });
        }
        Ok(())
    }

    pub fn cycles(&self) -> u64 {
        self.dut.cycle()
    }
}
