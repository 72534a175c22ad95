//! The QP rings over any [`Transport`]: a queue pair's send ring (`send_queues`, `send_wqe`
//! entries), its receive ring (`receive_queues`, `recv_wqe`) and the completion rings they
//! report to (`completion_queues`, `cqe` entries with a phase bit), as the register map and
//! the formats in `rnic-regmap` define them.
//!
//! The host owns a work ring's producer: it writes the request at the producer's slot and
//! rings DOORBELL with the new producer; the fetch engine reads requests while PROD is ahead
//! of CONS and moves CONS one further for each. The NIC owns a completion ring's producer: it
//! writes an entry with this pass's phase (1 on the ring's first pass, then alternating) and
//! advances PROD once the write is done; the host takes the entry when its phase is the
//! current pass's and rings DOORBELL with its new consumer index. An armed completion ring
//! raises the CQ interrupt for one entry and is disarmed by the NIC.
//!
//! A device shares one transport among all its rings, so a ring holds only the host's view of
//! it and every operation takes the transport. Nothing the device writes is trusted: a
//! consumer index outside what was posted and a completion with a status or opcode ibverbs
//! does not have are refused with an error that says what the device wrote, counted in the
//! ring's [`DeviceErrors`], and never used to address memory.

use rnic_regmap::desc::{CQE, Format, RECV_WQE, SEND_WQE, SGE};

use crate::registers::{check_magic, off};
pub use crate::ring::DeviceErrors;
use crate::ring::{Ring, get, irq_bit, set};
use crate::transport::{Budget, Result, Transport, TransportError};
use crate::verbs::{RecvWr, SendFlags, SendWr, Sge, WcFlags, WcOpcode, WcStatus, WorkCompletion};

/// Which work ring of a QP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkKind {
    Send,
    Receive,
}

impl WorkKind {
    /// The register block of these rings.
    pub fn block(self) -> &'static str {
        match self {
            WorkKind::Send => "send_queues",
            WorkKind::Receive => "receive_queues",
        }
    }

    /// The format of their entries.
    pub fn format(self) -> &'static Format {
        match self {
            WorkKind::Send => &SEND_WQE,
            WorkKind::Receive => &RECV_WQE,
        }
    }
}

/// Reads a count of the ID block and refuses `index` at or beyond it.
fn check_index(
    t: &mut (impl Transport + ?Sized),
    count: &str,
    what: &str,
    index: u32,
) -> Result<()> {
    let n = t.read32(off("id", count, None))?;
    if index >= n {
        return Err(TransportError(format!(
            "{what} {index}: the device has {n} (ID.{count})"
        )));
    }
    Ok(())
}

/// A send or receive ring of one QP.
#[derive(Debug)]
pub struct WorkRing {
    kind: WorkKind,
    ring: Ring,
    /// What this ring refused of the device's writes.
    pub errors: DeviceErrors,
}

impl WorkRing {
    /// Sets up the `kind` ring of QP `qp`: 2^`log_size` entries (1..=15) of DMA memory,
    /// programmed disabled, then its base, indices 0, and SIZE with LOG_SIZE, ENABLE and the
    /// completion queue `cq` it reports to. Refuses a device that is not an rnic, and a QP or
    /// CQ the device does not have.
    pub fn new(
        t: &mut (impl Transport + ?Sized),
        kind: WorkKind,
        qp: u32,
        log_size: u32,
        cq: u32,
    ) -> Result<WorkRing> {
        check_magic(t)?;
        check_index(t, "NUM_QPS", "QP", qp)?;
        check_index(t, "NUM_CQS", "completion queue", cq)?;
        let entry = usize::from(kind.format().size);
        let mut ring = Ring::new(t, kind.block(), qp, log_size, entry)?;
        ring.cq = cq;
        ring.program(t, false)?;
        Ok(WorkRing {
            kind,
            ring,
            errors: DeviceErrors::default(),
        })
    }

    pub fn kind(&self) -> WorkKind {
        self.kind
    }

    /// The QP (queue index in its block).
    pub fn qp(&self) -> u32 {
        self.ring.queue
    }

    /// The completion queue the ring reports to.
    pub fn cq(&self) -> u32 {
        self.ring.cq
    }

    /// Entries of the ring.
    pub fn size(&self) -> u16 {
        self.ring.size()
    }

    /// The producer index: the index the next post gets.
    pub fn producer(&self) -> u16 {
        self.ring.prod
    }

    /// The consumer index as the host last read it.
    pub fn consumer(&self) -> u16 {
        self.ring.cons
    }

    /// Requests posted that the NIC has not yet taken, reading its consumer index (refused
    /// and counted if it lies outside what was posted).
    pub fn pending(&mut self, t: &mut (impl Transport + ?Sized)) -> Result<u16> {
        self.ring.refresh_cons(t, &mut self.errors)?;
        Ok(self.ring.used())
    }

    /// Posts one entry (a whole `send_wqe` or `recv_wqe`, as [`encode_send`] and
    /// [`encode_recv`] make them): writes it at the producer's slot, advances the producer
    /// and rings DOORBELL with it. Returns the entry's ring index (a completion's WQE_INDEX).
    /// Refuses an entry of the wrong size, and a full ring: when the host's view is full it
    /// reads the NIC's consumer index first, refusing (and counting) one outside what was
    /// posted.
    pub fn post(&mut self, t: &mut (impl Transport + ?Sized), entry: &[u8]) -> Result<u16> {
        if entry.len() != self.ring.entry {
            return Err(TransportError(format!(
                "a {}-byte entry for {}: its {} entries are {} bytes",
                entry.len(),
                self.ring.name(),
                self.kind.format().name,
                self.ring.entry
            )));
        }
        if self.ring.is_full() {
            self.ring.refresh_cons(t, &mut self.errors)?;
            if self.ring.is_full() {
                return Err(TransportError(format!(
                    "{} is full: {} entries posted and not yet taken",
                    self.ring.name(),
                    self.ring.used()
                )));
            }
        }
        let index = self.ring.prod;
        t.write_mem(&self.ring.mem, self.ring.at(index), entry)?;
        self.ring.prod = index.wrapping_add(1);
        t.write32(self.ring.reg("DOORBELL"), u32::from(self.ring.prod))?;
        Ok(index)
    }
}

/// Puts `sges` into the scatter/gather entries of `format` in `entry`, with NUM_SGE.
fn encode_sges(format: &Format, entry: &mut [u8], sges: &[Sge]) -> Result<()> {
    let (first, max) = format
        .sge
        .unwrap_or_else(|| panic!("{} has scatter/gather entries", format.name));
    if sges.len() > usize::from(max) {
        return Err(TransportError(format!(
            "{} scatter/gather entries: a {} holds at most {max}",
            sges.len(),
            format.name
        )));
    }
    set(format, entry, "NUM_SGE", sges.len() as u64)?;
    for (i, s) in sges.iter().enumerate() {
        let at = usize::from(first) + i * usize::from(SGE.size);
        let e = &mut entry[at..at + usize::from(SGE.size)];
        set(&SGE, e, "ADDR", s.addr)?;
        set(&SGE, e, "LENGTH", u64::from(s.length))?;
        set(&SGE, e, "LKEY", u64::from(s.lkey))?;
    }
    Ok(())
}

/// The `send_wqe` entry of a verbs send work request, as the hardware reads it from a send
/// ring. A UD request names its destination's address vector by `av_index`, the entry the
/// driver gave it in the NIC's address vector table (ignored for RC). Refuses more
/// scatter/gather entries than the format has, flags it has no bit for (INLINE), and a UD
/// QPN wider than its 24 bits.
pub fn encode_send(wr: &SendWr, av_index: u16) -> Result<Vec<u8>> {
    let f = &SEND_WQE;
    let known = SendFlags::FENCE | SendFlags::SIGNALED | SendFlags::SOLICITED;
    if wr.flags.bits() & !known.bits() != 0 {
        return Err(TransportError(format!(
            "send flags {}: a send_wqe has only FENCE, SIGNALED and SOLICITED",
            wr.flags
        )));
    }
    let mut e = vec![0u8; usize::from(f.size)];
    set(f, &mut e, "WR_ID", wr.wr_id)?;
    set(f, &mut e, "OPCODE", u64::from(wr.opcode.code()))?;
    set(f, &mut e, "FLAGS", u64::from(wr.flags.bits()))?;
    set(f, &mut e, "IMM", u64::from(wr.imm))?;
    set(f, &mut e, "REMOTE_ADDR", wr.remote_addr)?;
    set(f, &mut e, "RKEY", u64::from(wr.rkey))?;
    set(f, &mut e, "COMPARE_ADD", wr.compare_add)?;
    set(f, &mut e, "SWAP", wr.swap)?;
    if let Some(ud) = &wr.ud {
        set(f, &mut e, "UD_REMOTE_QPN", u64::from(ud.remote_qpn))?;
        set(f, &mut e, "UD_REMOTE_QKEY", u64::from(ud.remote_qkey))?;
        set(f, &mut e, "UD_AV_INDEX", u64::from(av_index))?;
    }
    encode_sges(f, &mut e, &wr.sg_list)?;
    Ok(e)
}

/// The `recv_wqe` entry of a verbs receive work request; refuses more scatter/gather entries
/// than the format has.
pub fn encode_recv(wr: &RecvWr) -> Result<Vec<u8>> {
    let mut e = vec![0u8; usize::from(RECV_WQE.size)];
    set(&RECV_WQE, &mut e, "WR_ID", wr.wr_id)?;
    encode_sges(&RECV_WQE, &mut e, &wr.sg_list)?;
    Ok(e)
}

/// A completion as the `cqe` format holds it, every field decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub wr_id: u64,
    pub byte_len: u32,
    /// Immediate data, when `flags` has WITH_IMM.
    pub imm: u32,
    /// The QP the request was posted to.
    pub qpn: u32,
    /// UD receives: the sender's QPN.
    pub src_qp: u32,
    pub status: WcStatus,
    pub opcode: WcOpcode,
    pub flags: WcFlags,
    /// The request's index in its ring (what [`WorkRing::post`] returned).
    pub wqe_index: u16,
}

impl Completion {
    /// A `cqe` entry field by field (PHASE aside); a status or opcode that is not one of
    /// ibverbs' is refused with the field's name and value.
    pub fn decode(e: &[u8; CQE.size as usize]) -> std::result::Result<Self, (&'static str, u64)> {
        let status = get(&CQE, e, "STATUS");
        let status = WcStatus::from_code(status as u32).ok_or(("STATUS", status))?;
        let opcode = get(&CQE, e, "OPCODE");
        let opcode = WcOpcode::from_code(opcode as u32).ok_or(("OPCODE", opcode))?;
        Ok(Completion {
            wr_id: get(&CQE, e, "WR_ID"),
            byte_len: get(&CQE, e, "BYTE_LEN") as u32,
            imm: get(&CQE, e, "IMM") as u32,
            qpn: get(&CQE, e, "QPN") as u32,
            src_qp: get(&CQE, e, "SRC_QP") as u32,
            status,
            opcode,
            flags: WcFlags(get(&CQE, e, "FLAGS") as u32),
            wqe_index: get(&CQE, e, "WQE_INDEX") as u16,
        })
    }

    /// The verbs API's work completion.
    pub fn work_completion(&self) -> WorkCompletion {
        WorkCompletion {
            wr_id: self.wr_id,
            status: self.status,
            opcode: self.opcode,
            byte_len: self.byte_len,
            imm: self.imm,
            qp_num: self.qpn,
            src_qp: self.src_qp,
            flags: self.flags,
        }
    }
}

/// A completion ring.
#[derive(Debug)]
pub struct CompletionRing {
    ring: Ring,
    /// What this ring refused of the device's writes.
    pub errors: DeviceErrors,
}

impl CompletionRing {
    /// Sets up completion queue `cq`: 2^`log_size` entries (1..=15) of DMA memory, programmed
    /// disabled, then its base, indices 0, and SIZE with LOG_SIZE and ENABLE (not armed).
    /// Refuses a device that is not an rnic and a CQ it does not have.
    pub fn new(t: &mut (impl Transport + ?Sized), cq: u32, log_size: u32) -> Result<Self> {
        check_magic(t)?;
        check_index(t, "NUM_CQS", "completion queue", cq)?;
        let ring = Ring::new(t, "completion_queues", cq, log_size, usize::from(CQE.size))?;
        ring.program(t, false)?;
        Ok(CompletionRing {
            ring,
            errors: DeviceErrors::default(),
        })
    }

    /// The completion queue's number.
    pub fn cqn(&self) -> u32 {
        self.ring.queue
    }

    /// Entries of the ring.
    pub fn size(&self) -> u16 {
        self.ring.size()
    }

    /// The consumer index: the entry the next poll reads.
    pub fn consumer(&self) -> u16 {
        self.ring.cons
    }

    /// Arms the ring: the NIC raises the CQ interrupt for its next entry and disarms it. Sets
    /// IRQ_ENABLE.CQ if it is not set, so the interrupt reaches the host.
    pub fn arm(&mut self, t: &mut (impl Transport + ?Sized)) -> Result<()> {
        let en = off("ctrl", "IRQ_ENABLE", None);
        let v = t.read32(en)?;
        if v & irq_bit("CQ") == 0 {
            t.write32(en, v | irq_bit("CQ"))?;
        }
        self.ring.arm(t)
    }

    /// The next completion, if the NIC has written one: the entry at the consumer's slot is
    /// new when its PHASE is this pass's. A status or opcode that is not one of ibverbs' (as
    /// the format lists them) is refused with an error naming the field and value, counted in
    /// `errors.bad_completion`, and the entry is not consumed. A taken entry advances the
    /// consumer and rings DOORBELL with it.
    pub fn poll(&mut self, t: &mut (impl Transport + ?Sized)) -> Result<Option<Completion>> {
        let mut e = [0u8; CQE.size as usize];
        if !self.ring.read_completion(t, &CQE, &mut e)? {
            return Ok(None);
        }
        let c = match Completion::decode(&e) {
            Ok(c) => c,
            Err((field, v)) => return Err(self.refuse(field, v)),
        };
        self.ring.cons = self.ring.cons.wrapping_add(1);
        t.write32(self.ring.reg("DOORBELL"), u32::from(self.ring.cons))?;
        Ok(Some(c))
    }

    /// Counts a refused entry and says why.
    fn refuse(&mut self, field: &str, v: u64) -> TransportError {
        self.errors.bad_completion += 1;
        TransportError(format!(
            "device wrote {} entry {} with {field} {v}: not an ibverbs value the cqe format has",
            self.ring.name(),
            self.ring.cons
        ))
    }

    /// The next completion, waiting up to `budget` for one: polls; if there is none, arms the
    /// ring and polls again (an entry written before the arm raises no interrupt), lets the
    /// device run (or waits for its interrupt) and polls once more. The CQ interrupt cause is
    /// cleared after the wait; it is shared by every completion ring, so a host with several
    /// polls them all after a wait.
    pub fn wait(
        &mut self,
        t: &mut (impl Transport + ?Sized),
        budget: Budget,
    ) -> Result<Option<Completion>> {
        if let Some(c) = self.poll(t)? {
            return Ok(Some(c));
        }
        self.arm(t)?;
        if let Some(c) = self.poll(t)? {
            return Ok(Some(c));
        }
        t.wait(budget)?;
        t.write32(off("ctrl", "IRQ_STATUS", None), irq_bit("CQ"))?;
        self.poll(t)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::transport::DmaRegion;
    use crate::verbs::{AddressVector, MacAddr, UdDest, WrOpcode};

    // The fake device reads the register map as REGISTERS.md prints it, written out by hand:
    // a second reading of the map, not the driver's.
    const MAGIC: u32 = 0x524E_4943;
    const ID_MAGIC: u32 = 0x008;
    const ID_NUM_QPS: u32 = 0x01C;
    const ID_NUM_CQS: u32 = 0x024;
    const IRQ_ENABLE: u32 = 0x110;
    const IRQ_STATUS: u32 = 0x114;
    const IRQ_CQ: u32 = 1 << 0;
    const BASE_LO: u32 = 0x00;
    const BASE_HI: u32 = 0x04;
    const SIZE: u32 = 0x08;
    const PROD: u32 = 0x0C;
    const CONS: u32 = 0x10;
    const DOORBELL: u32 = 0x14;
    const SIZE_ENABLE: u32 = 1 << 8;
    const SIZE_ARM: u32 = 1 << 9;
    const QPS: u32 = 16;
    const CQS: u32 = 8;
    const SQ: &str = "send_queues";
    const RQ: &str = "receive_queues";
    const CQ: &str = "completion_queues";

    /// Queue 0's registers of each ring block.
    fn first_queue(block: &str) -> u32 {
        match block {
            SQ => 0x00_2000,
            RQ => 0x10_2000,
            CQ => 0x20_2000,
            _ => panic!("no block {block}"),
        }
    }

    fn ring_reg(block: &str, q: u32, reg: u32) -> u32 {
        first_queue(block) + 0x20 * q + reg
    }

    /// The block, queue and register word of a ring register offset.
    fn decode(offset: u32) -> Option<(&'static str, u32, u32)> {
        [SQ, RQ, CQ].into_iter().find_map(|b| {
            let rel = offset.checked_sub(first_queue(b))?;
            (rel < 0x20 * 1024).then_some((b, rel / 0x20, rel % 0x20))
        })
    }

    type DeviceAction = Box<dyn FnOnce(&mut Fake)>;

    /// A small device: registers as a map, DMA memory as vectors, and the NIC's side of the
    /// rings (a fetch engine and a completion writer) for the tests to drive.
    struct Fake {
        regs: HashMap<u32, u32>,
        mem: Vec<(DmaRegion, Vec<u8>)>,
        next_addr: u64,
        /// Every register write, in order.
        writes: Vec<(u32, u32)>,
        /// Every host read of memory: (buffer, offset, length).
        reads: Vec<(usize, usize, usize)>,
        /// What the device does while the host waits.
        on_wait: Vec<DeviceAction>,
        waits: u32,
    }

    impl Fake {
        fn new() -> Fake {
            let regs = HashMap::from([(ID_MAGIC, MAGIC), (ID_NUM_QPS, QPS), (ID_NUM_CQS, CQS)]);
            Fake {
                regs,
                mem: Vec::new(),
                // Above 4 GiB, so BASE_HI matters.
                next_addr: 0x1_2345_0000,
                writes: Vec::new(),
                reads: Vec::new(),
                on_wait: Vec::new(),
                waits: 0,
            }
        }

        fn reg(&self, offset: u32) -> u32 {
            self.regs.get(&offset).copied().unwrap_or(0)
        }

        fn rreg(&self, block: &str, q: u32, reg: u32) -> u32 {
            self.reg(ring_reg(block, q, reg))
        }

        fn set_rreg(&mut self, block: &str, q: u32, reg: u32, v: u32) {
            self.regs.insert(ring_reg(block, q, reg), v);
        }

        /// Register writes to one ring, as (register word, value).
        fn ring_writes(&self, block: &str, q: u32) -> Vec<(u32, u32)> {
            self.writes
                .iter()
                .filter_map(|&(o, v)| match decode(o) {
                    Some((b, i, w)) if b == block && i == q => Some((w, v)),
                    _ => None,
                })
                .collect()
        }

        fn doorbells(&self, block: &str, q: u32) -> Vec<u32> {
            self.ring_writes(block, q)
                .into_iter()
                .filter(|&(w, _)| w == DOORBELL)
                .map(|(_, v)| v)
                .collect()
        }

        /// The device's view of memory: `len` bytes at device address `addr`, inside one
        /// buffer (anything else is a bug of the test).
        fn dev_mem(&mut self, addr: u64, len: usize) -> &mut [u8] {
            let (r, m) = self
                .mem
                .iter_mut()
                .find(|(r, _)| (r.addr..r.addr + r.len as u64).contains(&addr))
                .unwrap_or_else(|| panic!("no buffer at {addr:#x}"));
            let at = (addr - r.addr) as usize;
            &mut m[at..at + len]
        }

        fn ring_base(&self, block: &str, q: u32) -> u64 {
            u64::from(self.rreg(block, q, BASE_HI)) << 32 | u64::from(self.rreg(block, q, BASE_LO))
        }

        fn log_size(&self, block: &str, q: u32) -> u32 {
            self.rreg(block, q, SIZE) & 0x1F
        }

        /// The fetch engine: the request at the consumer's slot when PROD is ahead of CONS,
        /// and CONS one further.
        fn fetch(&mut self, block: &str, q: u32, entry: usize) -> Option<Vec<u8>> {
            let (prod, cons) = (self.rreg(block, q, PROD), self.rreg(block, q, CONS));
            if self.rreg(block, q, SIZE) & SIZE_ENABLE == 0 || prod == cons {
                return None;
            }
            let slot = u64::from(cons & ((1 << self.log_size(block, q)) - 1));
            let addr = self.ring_base(block, q) + slot * entry as u64;
            let e = self.dev_mem(addr, entry).to_vec();
            self.set_rreg(block, q, CONS, (cons + 1) & 0xFFFF);
            Some(e)
        }

        /// The completion writer: `cqe` at the producer's slot of CQ `cq` with this pass's
        /// phase (1 on the first pass), then PROD one further; an armed CQ raises the CQ cause
        /// and is disarmed. False if the ring is disabled or full.
        fn complete(&mut self, cq: u32, mut cqe: [u8; 32]) -> bool {
            let log = self.log_size(CQ, cq);
            let (prod, cons) = (self.rreg(CQ, cq, PROD), self.rreg(CQ, cq, CONS));
            let size = self.rreg(CQ, cq, SIZE);
            if size & SIZE_ENABLE == 0 || (prod.wrapping_sub(cons) & 0xFFFF) >= 1 << log {
                return false;
            }
            if (prod >> log) & 1 == 0 {
                cqe[31] |= 0x80;
            } else {
                cqe[31] &= 0x7F;
            }
            let addr = self.ring_base(CQ, cq) + 32 * u64::from(prod & ((1 << log) - 1));
            self.dev_mem(addr, 32).copy_from_slice(&cqe);
            self.set_rreg(CQ, cq, PROD, (prod + 1) & 0xFFFF);
            if size & SIZE_ARM != 0 {
                self.set_rreg(CQ, cq, SIZE, size & !SIZE_ARM);
                *self.regs.entry(IRQ_STATUS).or_default() |= IRQ_CQ;
            }
            true
        }

        fn region(&mut self, r: &DmaRegion, offset: usize, len: usize) -> &mut Vec<u8> {
            let (mine, m) = &mut self.mem[r.index];
            assert_eq!(*mine, *r, "a region of this transport");
            assert!(
                offset + len <= m.len(),
                "host access of {len} bytes at {offset} outside a {}-byte buffer",
                m.len()
            );
            m
        }
    }

    impl Transport for Fake {
        fn read32(&mut self, offset: u32) -> Result<u32> {
            Ok(match decode(offset) {
                Some((_, _, DOORBELL)) => 0,
                _ => self.reg(offset),
            })
        }

        fn write32(&mut self, offset: u32, v: u32) -> Result<()> {
            self.writes.push((offset, v));
            match decode(offset) {
                // The doorbell writes the index the host owns.
                Some((CQ, q, DOORBELL)) => self.set_rreg(CQ, q, CONS, v & 0xFFFF),
                Some((b, q, DOORBELL)) => self.set_rreg(b, q, PROD, v & 0xFFFF),
                _ if offset == IRQ_STATUS => {
                    *self.regs.entry(IRQ_STATUS).or_default() &= !v;
                }
                _ => {
                    self.regs.insert(offset, v);
                }
            }
            Ok(())
        }

        fn alloc(&mut self, len: usize) -> Result<DmaRegion> {
            let r = DmaRegion {
                index: self.mem.len(),
                addr: self.next_addr,
                len,
            };
            self.next_addr += len.next_multiple_of(4096) as u64 + 0x1000;
            self.mem.push((r, vec![0; len]));
            Ok(r)
        }

        fn read_mem(&mut self, r: &DmaRegion, offset: usize, out: &mut [u8]) -> Result<()> {
            self.reads.push((r.index, offset, out.len()));
            let m = self.region(r, offset, out.len());
            out.copy_from_slice(&m[offset..offset + out.len()]);
            Ok(())
        }

        fn write_mem(&mut self, r: &DmaRegion, offset: usize, data: &[u8]) -> Result<()> {
            let m = self.region(r, offset, data.len());
            m[offset..offset + data.len()].copy_from_slice(data);
            Ok(())
        }

        fn wait(&mut self, _budget: Budget) -> Result<bool> {
            self.waits += 1;
            for f in std::mem::take(&mut self.on_wait) {
                f(self);
            }
            Ok(self.reg(IRQ_STATUS) & self.reg(IRQ_ENABLE) != 0)
        }
    }

    /// A completion's fields, laid out by hand at REGISTERS.md's byte offsets.
    #[derive(Clone, Copy, Default)]
    struct Cqe {
        wr_id: u64,
        byte_len: u32,
        imm: u32,
        qpn: u32,
        src_qp: u32,
        status: u8,
        opcode: u8,
        flags: u8,
        wqe_index: u16,
    }

    impl Cqe {
        fn bytes(&self) -> [u8; 32] {
            let mut e = [0u8; 32];
            e[0x00..0x08].copy_from_slice(&self.wr_id.to_le_bytes());
            e[0x08..0x0C].copy_from_slice(&self.byte_len.to_le_bytes());
            e[0x0C..0x10].copy_from_slice(&self.imm.to_le_bytes());
            e[0x10..0x13].copy_from_slice(&self.qpn.to_le_bytes()[..3]);
            e[0x14..0x17].copy_from_slice(&self.src_qp.to_le_bytes()[..3]);
            e[0x18] = self.status;
            e[0x19] = self.opcode;
            e[0x1A] = self.flags;
            e[0x1C..0x1E].copy_from_slice(&self.wqe_index.to_le_bytes());
            e
        }

        fn ok(wr_id: u64) -> Cqe {
            Cqe {
                wr_id,
                opcode: 128,
                ..Cqe::default()
            }
        }
    }

    /// A send request whose bytes name it.
    fn entry(n: u8, len: usize) -> Vec<u8> {
        (0..len).map(|i| n ^ (i as u8)).collect()
    }

    #[test]
    fn rings_are_programmed_disabled_then_enabled() {
        let mut t = Fake::new();
        let s = WorkRing::new(&mut t, WorkKind::Send, 3, 4, 7).unwrap();
        let r = WorkRing::new(&mut t, WorkKind::Receive, 2, 3, 1).unwrap();
        let c = CompletionRing::new(&mut t, 5, 5).unwrap();
        // send_queues[3] at 0x2000 + 3 * 0x20; SIZE = LOG_SIZE 4 | ENABLE | CQ 7 << 16.
        let (sa, ra, ca) = (t.mem[0].0.addr, t.mem[1].0.addr, t.mem[2].0.addr);
        let w: Vec<_> = t.writes.iter().copied().filter(|w| w.0 >= 0x2000).collect();
        let lo = |a: u64| a as u32;
        let hi = |a: u64| (a >> 32) as u32;
        assert_eq!(
            w,
            [
                (0x2068, 0),
                (0x2060, lo(sa)),
                (0x2064, hi(sa)),
                (0x206C, 0),
                (0x2070, 0),
                (0x2068, 0x0007_0104),
                (0x10_2048, 0),
                (0x10_2040, lo(ra)),
                (0x10_2044, hi(ra)),
                (0x10_204C, 0),
                (0x10_2050, 0),
                (0x10_2048, 0x0001_0103),
                (0x20_20A8, 0),
                (0x20_20A0, lo(ca)),
                (0x20_20A4, hi(ca)),
                (0x20_20AC, 0),
                (0x20_20B0, 0),
                (0x20_20A8, 0x0000_0105),
            ]
        );
        assert_eq!(hi(sa), 1, "the fake's buffers lie above 4 GiB");
        assert_eq!(
            [t.mem[0].0.len, t.mem[1].0.len, t.mem[2].0.len],
            [16 * 128, 8 * 64, 32 * 32]
        );
        assert_eq!(
            (s.qp(), s.cq(), s.size(), s.kind()),
            (3, 7, 16, WorkKind::Send)
        );
        assert_eq!((r.qp(), r.cq(), r.size()), (2, 1, 8));
        assert_eq!((c.cqn(), c.size()), (5, 32));
    }

    #[test]
    fn rings_the_device_lacks_are_refused() {
        let mut t = Fake::new();
        let e = WorkRing::new(&mut t, WorkKind::Send, QPS, 4, 0).unwrap_err();
        assert!(e.0.contains("QP 16") && e.0.contains("NUM_QPS"), "{e}");
        let e = WorkRing::new(&mut t, WorkKind::Receive, 0, 4, CQS).unwrap_err();
        assert!(e.0.contains("completion queue 8"), "{e}");
        let e = CompletionRing::new(&mut t, CQS, 4).unwrap_err();
        assert!(e.0.contains("NUM_CQS"), "{e}");
        for log in [0, 16] {
            let e = WorkRing::new(&mut t, WorkKind::Send, 0, log, 0).unwrap_err();
            assert!(e.0.contains("out of 2^1..=2^15"), "{e}");
        }
        // A device claiming more queues than the map has room for.
        t.regs.insert(ID_NUM_QPS, 100_000);
        let e = WorkRing::new(&mut t, WorkKind::Send, 5000, 4, 0).unwrap_err();
        assert!(e.0.contains("no queue 5000"), "{e}");
        assert!(t.mem.is_empty() && t.writes.is_empty(), "nothing set up");
        t.regs.insert(ID_MAGIC, 0);
        let e = CompletionRing::new(&mut t, 0, 4).unwrap_err();
        assert!(e.0.contains("not an rnic"), "{e}");
    }

    #[test]
    fn post_fills_wraps_and_refuses_a_full_ring() {
        let mut t = Fake::new();
        let mut s = WorkRing::new(&mut t, WorkKind::Send, 1, 2, 0).unwrap();
        for n in 0..4u8 {
            assert_eq!(s.post(&mut t, &entry(n, 128)).unwrap(), u16::from(n));
        }
        assert_eq!(t.doorbells(SQ, 1), [1, 2, 3, 4]);
        // Full: the host reads CONS, the NIC has taken nothing.
        let e = s.post(&mut t, &entry(9, 128)).unwrap_err();
        assert!(e.0.contains("send_queues[1] is full"), "{e}");
        assert_eq!((s.producer(), t.doorbells(SQ, 1).len()), (4, 4));
        assert_eq!(s.pending(&mut t).unwrap(), 4);
        // The NIC takes two, in order, from their slots.
        assert_eq!(t.fetch(SQ, 1, 128), Some(entry(0, 128)));
        assert_eq!(t.fetch(SQ, 1, 128), Some(entry(1, 128)));
        // Two more fit, in slots 0 and 1 (indices 4 and 5), and no third.
        assert_eq!(s.post(&mut t, &entry(4, 128)).unwrap(), 4);
        assert_eq!(s.consumer(), 2);
        assert_eq!(s.post(&mut t, &entry(5, 128)).unwrap(), 5);
        assert!(s.post(&mut t, &entry(6, 128)).is_err());
        assert_eq!(&t.mem[0].1[..128], &entry(4, 128)[..]);
        assert_eq!(&t.mem[0].1[128..256], &entry(5, 128)[..]);
        for n in [2, 3, 4, 5] {
            assert_eq!(t.fetch(SQ, 1, 128), Some(entry(n, 128)));
        }
        assert_eq!(t.fetch(SQ, 1, 128), None);
        assert_eq!(s.pending(&mut t).unwrap(), 0);
        // Round and round: indices run on past the ring and past 16 bits.
        for i in 6..70_000u32 {
            let n = i as u8;
            assert_eq!(s.post(&mut t, &entry(n, 128)).unwrap(), i as u16);
            assert_eq!(t.fetch(SQ, 1, 128), Some(entry(n, 128)));
        }
        assert_eq!(s.errors, DeviceErrors::default());
    }

    #[test]
    fn an_entry_of_the_wrong_size_is_refused() {
        let mut t = Fake::new();
        let mut s = WorkRing::new(&mut t, WorkKind::Send, 0, 2, 0).unwrap();
        let mut r = WorkRing::new(&mut t, WorkKind::Receive, 0, 2, 0).unwrap();
        let e = s.post(&mut t, &[0; 64]).unwrap_err();
        assert!(e.0.contains("64-byte") && e.0.contains("128 bytes"), "{e}");
        assert!(r.post(&mut t, &[0; 128]).is_err());
        assert!(r.post(&mut t, &[]).is_err());
        assert_eq!(r.post(&mut t, &[7; 64]).unwrap(), 0);
        assert_eq!((s.producer(), t.doorbells(SQ, 0).len()), (0, 0));
        assert_eq!(t.fetch(RQ, 0, 64), Some(vec![7; 64]));
    }

    #[test]
    fn a_lying_consumer_index_is_refused_and_counted() {
        let mut t = Fake::new();
        let mut s = WorkRing::new(&mut t, WorkKind::Send, 2, 2, 0).unwrap();
        for n in 0..4 {
            s.post(&mut t, &entry(n, 128)).unwrap();
        }
        let before = t.mem[0].1.clone();
        // Beyond the producer, behind the host's last view, and with bits above the index.
        for (k, lie) in [5u32, 0xFFFF, 0x1_0002, 0x8000].into_iter().enumerate() {
            t.set_rreg(SQ, 2, CONS, lie);
            let e = s.post(&mut t, &entry(9, 128)).unwrap_err();
            assert!(e.0.contains(&format!("CONS {lie},")), "{e}");
            assert_eq!(s.errors.bad_index, 2 * k as u64 + 1);
            assert!(s.pending(&mut t).is_err());
            assert_eq!(s.errors.bad_index, 2 * k as u64 + 2);
            assert_eq!((s.producer(), s.consumer()), (4, 0));
        }
        assert_eq!(t.mem[0].1, before, "nothing written");
        assert_eq!(t.doorbells(SQ, 2).len(), 4);
        // The truth is taken.
        t.set_rreg(SQ, 2, CONS, 4);
        assert_eq!(s.post(&mut t, &entry(9, 128)).unwrap(), 4);
        assert_eq!(s.consumer(), 4);
    }

    #[test]
    fn a_completion_is_decoded_field_by_field_and_consumed() {
        let mut t = Fake::new();
        let mut c = CompletionRing::new(&mut t, 3, 2).unwrap();
        assert_eq!(c.poll(&mut t).unwrap(), None);
        // Only the phase byte of an entry that is not new is read.
        assert_eq!(t.reads, [(0, 0x1F, 1)]);
        let cqe = Cqe {
            wr_id: 0x0123_4567_89AB_CDEF,
            byte_len: 0x1122_3344,
            imm: 0xDEAD_BEEF,
            qpn: 0xAB_CDEF,
            src_qp: 0x12_3456,
            status: 12,
            opcode: 129,
            flags: 3,
            wqe_index: 0xFEDC,
        };
        assert!(t.complete(3, cqe.bytes()));
        t.reads.clear();
        let got = c.poll(&mut t).unwrap().unwrap();
        // The phase first, then the entry: nothing is read from before the device's write.
        assert_eq!(t.reads, [(0, 0x1F, 1), (0, 0, 32)]);
        assert_eq!(
            got,
            Completion {
                wr_id: 0x0123_4567_89AB_CDEF,
                byte_len: 0x1122_3344,
                imm: 0xDEAD_BEEF,
                qpn: 0xAB_CDEF,
                src_qp: 0x12_3456,
                status: WcStatus::RetryExcErr,
                opcode: WcOpcode::RecvRdmaWithImm,
                flags: WcFlags::GRH | WcFlags::WITH_IMM,
                wqe_index: 0xFEDC,
            }
        );
        let wc = got.work_completion();
        assert_eq!(
            (wc.qp_num, wc.status, wc.byte_len),
            (0xAB_CDEF, WcStatus::RetryExcErr, 0x1122_3344)
        );
        assert_eq!(c.consumer(), 1);
        // completion_queues[3].DOORBELL (0x202000 + 3 * 0x20 + 0x14) carries the consumer.
        assert_eq!(t.writes.last(), Some(&(0x20_2074, 1)));
        assert_eq!(t.rreg(CQ, 3, CONS), 1);
        assert_eq!(c.poll(&mut t).unwrap(), None);
        assert_eq!(c.errors, DeviceErrors::default());
    }

    #[test]
    fn every_ibverbs_status_and_opcode_is_taken_and_no_other() {
        let mut t = Fake::new();
        let mut c = CompletionRing::new(&mut t, 0, 4).unwrap();
        let names = |status: WcStatus, opcode: WcOpcode| (status.name(), opcode.name());
        for (status, opcode, want) in [
            (0, 0, ("IBV_WC_SUCCESS", "IBV_WC_SEND")),
            (1, 1, ("IBV_WC_LOC_LEN_ERR", "IBV_WC_RDMA_WRITE")),
            (5, 2, ("IBV_WC_WR_FLUSH_ERR", "IBV_WC_RDMA_READ")),
            (10, 3, ("IBV_WC_REM_ACCESS_ERR", "IBV_WC_COMP_SWAP")),
            (11, 4, ("IBV_WC_REM_OP_ERR", "IBV_WC_FETCH_ADD")),
            (13, 128, ("IBV_WC_RNR_RETRY_EXC_ERR", "IBV_WC_RECV")),
        ] {
            let cqe = Cqe {
                status,
                opcode,
                ..Cqe::default()
            };
            assert!(t.complete(0, cqe.bytes()));
            let got = c.poll(&mut t).unwrap().unwrap();
            assert_eq!(names(got.status, got.opcode), want);
        }
        for s in 0..=255u32 {
            assert_eq!(WcStatus::from_code(s).is_some(), s <= 13, "status {s}");
        }
        for o in 0..=255u32 {
            let known = o <= 4 || o == 128 || o == 129;
            assert_eq!(WcOpcode::from_code(o).is_some(), known, "opcode {o}");
        }
    }

    #[test]
    fn a_completion_with_a_bad_status_or_opcode_is_refused_counted_and_kept() {
        let mut t = Fake::new();
        let mut c = CompletionRing::new(&mut t, 1, 2).unwrap();
        assert!(t.complete(1, Cqe::ok(10).bytes()));
        assert_eq!(c.poll(&mut t).unwrap().unwrap().wr_id, 10);
        let bells = t.doorbells(CQ, 1);
        // Entry 1: status 14 (IBV_WC_LOC_RDD_VIOL_ERR, which the format does not list).
        let bad = Cqe {
            status: 14,
            ..Cqe::ok(11)
        };
        assert!(t.complete(1, bad.bytes()));
        for n in 1..=2 {
            let e = c.poll(&mut t).unwrap_err();
            assert!(
                e.0.contains("completion_queues[1] entry 1") && e.0.contains("STATUS 14"),
                "{e}"
            );
            assert_eq!(c.errors.bad_completion, n);
            assert_eq!(c.consumer(), 1);
        }
        // The device rewrites it with opcode 5 (IBV_WC_BIND_MW, not in the format), then 130.
        let slot1 = t.ring_base(CQ, 1) + 32;
        for (op, n) in [(5u8, 3), (130, 4)] {
            let e = t.dev_mem(slot1, 32);
            e[0x18] = 0;
            e[0x19] = op;
            let err = c.poll(&mut t).unwrap_err();
            assert!(err.0.contains(&format!("OPCODE {op}")), "{err}");
            assert_eq!(c.errors.bad_completion, n);
        }
        assert_eq!(t.doorbells(CQ, 1), bells, "nothing consumed");
        t.dev_mem(slot1, 32)[0x19] = 128;
        assert_eq!(c.poll(&mut t).unwrap().unwrap().wr_id, 11);
        assert_eq!(c.consumer(), 2);
    }

    #[test]
    fn the_phase_flips_on_every_pass_and_a_stale_entry_is_not_taken() {
        let mut t = Fake::new();
        let mut c = CompletionRing::new(&mut t, 2, 2).unwrap();
        let mut phases = Vec::new();
        let mut wr = 0u64;
        for pass in 0..3 {
            for slot in 0..4u64 {
                assert!(t.complete(2, Cqe::ok(wr).bytes()));
                let addr = t.ring_base(CQ, 2) + 32 * slot;
                phases.push(t.dev_mem(addr, 32)[0x1F] >> 7);
                let got = c.poll(&mut t).unwrap().unwrap();
                assert_eq!(got.wr_id, wr, "pass {pass} slot {slot}");
                wr += 1;
            }
            // Every slot holds this pass's entry: stale for the next pass.
            assert_eq!(c.poll(&mut t).unwrap(), None);
            assert_eq!(c.consumer(), 4 * (pass + 1));
        }
        assert_eq!(phases, [1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1]);
        // A device that writes an entry with last pass's phase (1, where indices 12..16 want
        // 0): not new, not taken, not consumed.
        let slot0 = t.ring_base(CQ, 2);
        let mut stale = Cqe::ok(99).bytes();
        stale[0x1F] = 0x80;
        t.dev_mem(slot0, 32).copy_from_slice(&stale);
        let bells = t.doorbells(CQ, 2).len();
        assert_eq!(c.poll(&mut t).unwrap(), None);
        assert_eq!((c.consumer(), t.doorbells(CQ, 2).len()), (12, bells));
        // A full ring: the NIC refuses a fifth entry until the host consumes.
        for i in 0..4 {
            assert!(t.complete(2, Cqe::ok(100 + i).bytes()));
        }
        assert!(!t.complete(2, Cqe::ok(104).bytes()));
        assert_eq!(c.poll(&mut t).unwrap().unwrap().wr_id, 100);
        assert!(t.complete(2, Cqe::ok(104).bytes()));
        for i in 101..=104 {
            assert_eq!(c.poll(&mut t).unwrap().unwrap().wr_id, i);
        }
        assert_eq!(c.poll(&mut t).unwrap(), None);
        assert_eq!(c.errors, DeviceErrors::default());
    }

    #[test]
    fn arm_and_wait() {
        let mut t = Fake::new();
        let mut c = CompletionRing::new(&mut t, 4, 3).unwrap();
        c.arm(&mut t).unwrap();
        // completion_queues[4].SIZE: LOG_SIZE 3 | ENABLE | ARM; IRQ_ENABLE.CQ set.
        assert_eq!(t.reg(0x20_2088), 0x303);
        assert_eq!(t.reg(IRQ_ENABLE), IRQ_CQ);
        // An entry already there: no wait.
        assert!(t.complete(4, Cqe::ok(1).bytes()));
        assert_eq!(t.reg(IRQ_STATUS), IRQ_CQ);
        assert_eq!(t.rreg(CQ, 4, SIZE), 0x103, "disarmed by the NIC");
        assert_eq!(crate::registers::take_irq_status(&mut t).unwrap(), IRQ_CQ);
        assert_eq!(t.reg(IRQ_STATUS), 0);
        assert_eq!(c.wait(&mut t, Budget::SHORT).unwrap().unwrap().wr_id, 1);
        assert_eq!(t.waits, 0);
        // None yet: armed, then the device completes while the host waits.
        t.on_wait.push(Box::new(|t: &mut Fake| {
            assert!(t.complete(4, Cqe::ok(2).bytes()))
        }));
        assert_eq!(c.wait(&mut t, Budget::SHORT).unwrap().unwrap().wr_id, 2);
        assert_eq!(t.waits, 1);
        assert_eq!(t.reg(IRQ_STATUS), 0, "the CQ cause is cleared");
        // Nothing comes.
        assert_eq!(c.wait(&mut t, Budget::SHORT).unwrap(), None);
        assert_eq!(t.rreg(CQ, 4, SIZE), 0x303, "still armed");
    }

    /// REGISTERS.md, by hand: WR_ID 0x00 (8), OPCODE 0x08, FLAGS 0x09, NUM_SGE 0x0a, IMM 0x0c
    /// (4), REMOTE_ADDR 0x10 (8), RKEY 0x18 (4), UD_REMOTE_QPN 0x1c (3), COMPARE_ADD 0x20 (8),
    /// SWAP 0x28 (8), UD_REMOTE_QKEY 0x30 (4), UD_AV_INDEX 0x34 (2), SGE i at 0x40 + 16 i:
    /// ADDR (8), LENGTH (4), LKEY (4).
    #[test]
    fn send_wqe_bytes_are_the_map_s() {
        let sges: Vec<Sge> = (0..4u32)
            .map(|i| Sge {
                addr: 0x1111_2222_3333_4400 + u64::from(i),
                length: 0x100 * (i + 1),
                lkey: 0xA000_0000 | i,
            })
            .collect();
        let w = SendWr {
            wr_id: 0x0102_0304_0506_0708,
            opcode: WrOpcode::AtomicCmpAndSwp,
            flags: SendFlags::SIGNALED | SendFlags::FENCE,
            imm: 0x4433_2211,
            remote_addr: 0x8877_6655_4433_2211,
            rkey: 0x1357_9BDF,
            compare_add: 0xC0C1_C2C3_C4C5_C6C7,
            swap: 0x5A5B_5C5D_5E5F_6061,
            ud: Some(UdDest {
                av: AddressVector::new(
                    MacAddr([2, 0, 0, 0, 0, 1]),
                    "10.0.0.1".parse().unwrap(),
                    "10.0.0.2".parse().unwrap(),
                ),
                remote_qpn: 0x00AB_CDEF,
                remote_qkey: 0x1122_3344,
            }),
            sg_list: sges,
        };
        let mut want = [0u8; 128];
        want[0x00..0x08].copy_from_slice(&[0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01]);
        want[0x08] = 5; // IBV_WR_ATOMIC_CMP_AND_SWP
        want[0x09] = 3; // FENCE | SIGNALED
        want[0x0A] = 4;
        want[0x0C..0x10].copy_from_slice(&[0x11, 0x22, 0x33, 0x44]);
        want[0x10..0x18].copy_from_slice(&[0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]);
        want[0x18..0x1C].copy_from_slice(&[0xDF, 0x9B, 0x57, 0x13]);
        want[0x1C..0x1F].copy_from_slice(&[0xEF, 0xCD, 0xAB]);
        want[0x20..0x28].copy_from_slice(&[0xC7, 0xC6, 0xC5, 0xC4, 0xC3, 0xC2, 0xC1, 0xC0]);
        want[0x28..0x30].copy_from_slice(&[0x61, 0x60, 0x5F, 0x5E, 0x5D, 0x5C, 0x5B, 0x5A]);
        want[0x30..0x34].copy_from_slice(&[0x44, 0x33, 0x22, 0x11]);
        want[0x34..0x36].copy_from_slice(&[0xEF, 0xBE]);
        for i in 0..4 {
            let at = 0x40 + 16 * i;
            want[at..at + 8].copy_from_slice(&[i as u8, 0x44, 0x33, 0x33, 0x22, 0x22, 0x11, 0x11]);
            want[at + 8..at + 12].copy_from_slice(&[0, i as u8 + 1, 0, 0]);
            want[at + 12..at + 16].copy_from_slice(&[i as u8, 0, 0, 0xA0]);
        }
        assert_eq!(encode_send(&w, 0xBEEF).unwrap(), want);

        // The opcodes by number; a short list leaves the later SGEs and the UD words zero.
        for (op, code) in [
            (WrOpcode::RdmaWrite, 0),
            (WrOpcode::RdmaWriteWithImm, 1),
            (WrOpcode::Send, 2),
            (WrOpcode::SendWithImm, 3),
            (WrOpcode::RdmaRead, 4),
            (WrOpcode::AtomicCmpAndSwp, 5),
            (WrOpcode::AtomicFetchAndAdd, 6),
        ] {
            let mut s = SendWr::new(7, op);
            s.flags = SendFlags::SOLICITED;
            s.sg_list = w.sg_list[..1].to_vec();
            let mut want = [0u8; 128];
            want[0] = 7;
            want[0x08] = code;
            want[0x09] = 4;
            want[0x0A] = 1;
            want[0x40..0x50].copy_from_slice(&encode_send(&w, 0).unwrap()[0x40..0x50]);
            // The AV index means nothing without UD.
            assert_eq!(encode_send(&s, 0xBEEF).unwrap(), want, "{op:?}");
        }
    }

    #[test]
    fn send_wqes_the_format_cannot_hold_are_refused() {
        let sge = Sge {
            addr: 1,
            length: 2,
            lkey: 3,
        };
        let mut s = SendWr::new(1, WrOpcode::Send);
        s.sg_list = vec![sge; 5];
        let e = encode_send(&s, 0).unwrap_err();
        assert!(
            e.0.contains("5 scatter/gather") && e.0.contains("at most 4"),
            "{e}"
        );
        s.sg_list = vec![sge; 4];
        assert!(encode_send(&s, 0).is_ok());
        s.flags = SendFlags::SIGNALED | SendFlags::INLINE;
        let e = encode_send(&s, 0).unwrap_err();
        assert!(e.0.contains("INLINE"), "{e}");
        s.flags = SendFlags(0x80);
        assert!(encode_send(&s, 0).is_err());
        s.flags = SendFlags::NONE;
        s.ud = Some(UdDest {
            av: AddressVector::new(
                MacAddr([2, 0, 0, 0, 0, 1]),
                "10.0.0.1".parse().unwrap(),
                "10.0.0.2".parse().unwrap(),
            ),
            remote_qpn: 1 << 24,
            remote_qkey: 0,
        });
        let e = encode_send(&s, 0).unwrap_err();
        assert!(
            e.0.contains("UD_REMOTE_QPN") && e.0.contains("24 bits"),
            "{e}"
        );
    }

    /// REGISTERS.md, by hand: WR_ID 0x00 (8), NUM_SGE 0x08, SGE i at 0x10 + 16 i.
    #[test]
    fn recv_wqe_bytes_are_the_map_s() {
        let r = RecvWr {
            wr_id: 0xF0E0_D0C0_B0A0_9080,
            sg_list: (0..3u32)
                .map(|i| Sge {
                    addr: 0x10 * u64::from(i + 1),
                    length: 0x0102_0300 + i,
                    lkey: 0x0A0B_0C00 + i,
                })
                .collect(),
        };
        let mut want = [0u8; 64];
        want[0..8].copy_from_slice(&[0x80, 0x90, 0xA0, 0xB0, 0xC0, 0xD0, 0xE0, 0xF0]);
        want[8] = 3;
        for i in 0..3 {
            let at = 0x10 + 16 * i;
            want[at] = 0x10 * (i as u8 + 1);
            want[at + 8..at + 12].copy_from_slice(&[i as u8, 0x03, 0x02, 0x01]);
            want[at + 12..at + 16].copy_from_slice(&[i as u8, 0x0C, 0x0B, 0x0A]);
        }
        assert_eq!(encode_recv(&r).unwrap(), want);
        let four = RecvWr {
            wr_id: 0,
            sg_list: vec![r.sg_list[0]; 4],
        };
        let e = encode_recv(&four).unwrap_err();
        assert!(e.0.contains("at most 3"), "{e}");
        // Posted, it is what the fetch engine reads.
        let mut t = Fake::new();
        let mut q = WorkRing::new(&mut t, WorkKind::Receive, 9, 1, 2).unwrap();
        assert_eq!(q.post(&mut t, &encode_recv(&r).unwrap()).unwrap(), 0);
        assert_eq!(t.fetch(RQ, 9, 64), Some(want.to_vec()));
    }
}
