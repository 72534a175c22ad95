//! Host memory as the simulated DMA port sees it: buffers at device addresses, read and
//! written by the engines' benches ([`crate::responder_sim`], [`crate::requester_sim`],
//! [`crate::completer_sim`], [`crate::requester_path_sim`]); the send rings in it, and the
//! host side of the DMA port's writes.

use std::collections::VecDeque;

/// Buffers at device addresses.
#[derive(Clone, Debug, Default)]
pub struct HostMemory {
    buffers: Vec<(u64, Vec<u8>)>,
}

/// One beat of a read's answer: the data word, the read's last beat, refused by the host.
pub type ReadBeat = (u64, bool, bool);

impl HostMemory {
    /// Maps `len` zeroed bytes at device address `base`.
    pub fn map(&mut self, base: u64, len: usize) {
        self.buffers.push((base, vec![0; len]));
    }

    /// The bytes at `addr`, if mapped.
    pub fn read(&self, addr: u64, len: usize) -> Option<&[u8]> {
        self.buffers.iter().find_map(|(b, m)| {
            let at = addr.checked_sub(*b)? as usize;
            m.get(at..at.checked_add(len)?)
        })
    }

    /// Writes `bytes` at `addr`; false when that is not mapped.
    pub fn fill(&mut self, addr: u64, bytes: &[u8]) -> bool {
        for (b, m) in &mut self.buffers {
            if let Some(at) = addr.checked_sub(*b).map(|a| a as usize)
                && let Some(dst) = at
                    .checked_add(bytes.len())
                    .and_then(|end| m.get_mut(at..end))
            {
                dst.copy_from_slice(bytes);
                return true;
            }
        }
        false
    }

    /// The answer to a DMA read of `len` bytes at `addr` (8-byte aligned, 1 byte or more):
    /// `ceil(len / 8)` beats, every one refused when the bytes are not mapped.
    pub fn read_beats(&self, addr: u64, len: usize) -> Result<Vec<ReadBeat>, String> {
        if addr % 8 != 0 || len == 0 {
            return Err(format!(
                "a DMA read of {len} bytes at {addr:#x} (reads are 8-byte aligned, 1 byte or more)"
            ));
        }
        let n = len.div_ceil(8);
        let bytes = self.read(addr, n * 8);
        Ok((0..n)
            .map(|k| {
                let w = bytes.map_or(0, |b| {
                    u64::from_le_bytes(b[8 * k..8 * k + 8].try_into().expect("8 bytes"))
                });
                (w, k + 1 == n, bytes.is_none())
            })
            .collect())
    }
}

/// A send ring in host memory: `2^log` requests of 128 bytes at `base`, and its producer.
#[derive(Clone, Copy, Debug, Default)]
pub struct SendRing {
    pub base: u64,
    pub log: u32,
    pub prod: u16,
}

impl SendRing {
    /// The ring's size word as the queue manager answers a look (log2 of the slots, and the
    /// slot size 2^7 in bits 8 up).
    pub fn size_word(&self) -> u64 {
        u64::from(self.log) | 1 << 8
    }
}

impl HostMemory {
    /// An empty send ring of `2^log` slots at `base`, mapped here.
    pub fn send_ring(&mut self, base: u64, log: u32) -> SendRing {
        self.map(base, 128 << log);
        SendRing { base, log, prod: 0 }
    }

    /// Writes a `send_wqe` at `ring`'s producer and moves the producer on.
    pub fn post_send(&mut self, ring: &mut SendRing, entry: &[u8]) -> Result<(), String> {
        let at = ring.base + 128 * u64::from(ring.prod & ((1 << ring.log) - 1) as u16);
        if !self.fill(at, entry) {
            return Err(format!("the ring slot at {at:#x} is not mapped"));
        }
        ring.prod = ring.prod.wrapping_add(1);
        Ok(())
    }
}

/// A receive ring in host memory: its base device address, log2 of its entries (`recv_wqe`s
/// of 64 bytes), producer and consumer.
#[derive(Clone, Copy, Debug, Default)]
pub struct RecvRing {
    pub base: u64,
    pub log: u32,
    pub prod: u16,
    pub cons: u16,
}

impl RecvRing {
    /// The ring's size word as the queue manager answers a look (log2 of the slots, and the
    /// slot size 2^6 in bits 8 up, as the receive path reads it).
    pub fn size_word(&self) -> u64 {
        u64::from(self.log) | 1 << 8
    }
}

impl HostMemory {
    /// An empty receive ring of `2^log` slots at `base`, mapped here.
    pub fn recv_ring(&mut self, base: u64, log: u32) -> RecvRing {
        self.map(base, (rnic_regmap::desc::RECV_WQE.size as usize) << log);
        RecvRing {
            base,
            log,
            ..Default::default()
        }
    }

    /// Writes a `recv_wqe` at `ring`'s producer and moves the producer on; refuses a full ring.
    pub fn post_recv(&mut self, ring: &mut RecvRing, entry: &[u8]) -> Result<(), String> {
        if ring.prod.wrapping_sub(ring.cons) >= 1 << ring.log {
            return Err("the receive ring is full".into());
        }
        let size = u64::from(rnic_regmap::desc::RECV_WQE.size);
        let at = ring.base + size * u64::from(ring.prod & ((1 << ring.log) - 1) as u16);
        if !self.fill(at, entry) {
            return Err(format!("the ring slot at {at:#x} is not mapped"));
        }
        ring.prod = ring.prod.wrapping_add(1);
        Ok(())
    }
}

/// The host side of the DMA port's writes: one request at a time with its beats, the bytes
/// written into host memory at the last beat, its done (with the request's tag) presented
/// some clocks later.
#[derive(Clone, Debug, Default)]
pub struct DmaWrites {
    /// The write being received: address, length, tag, bytes so far.
    cur: Option<(u64, usize, u64, Vec<u8>)>,
    /// Dones to present: clocks to wait, tag.
    dones: VecDeque<(u32, u64)>,
}

impl DmaWrites {
    /// The delay of a done: up to three clocks when the bench stalls, none otherwise.
    pub fn done_delay<D: rnic_cosim::ports::PortDut>(
        ports: &mut crate::bench_ports::BenchPorts<D>,
    ) -> u32 {
        if ports.stalls() {
            ports.below(4) as u32
        } else {
            0
        }
    }

    /// A request can be taken now.
    pub fn can_take(&self) -> bool {
        self.cur.is_none()
    }

    /// The tag of the done presented this clock.
    pub fn done(&self) -> Option<u64> {
        self.dones.front().filter(|d| d.0 == 0).map(|d| d.1)
    }

    /// Nothing received and not yet done.
    pub fn idle(&self) -> bool {
        self.cur.is_none() && self.dones.is_empty()
    }

    /// After the clock: the done presented was taken (dones have no ready), the others wait
    /// one clock less.
    pub fn clock(&mut self) {
        if self.done().is_some() {
            self.dones.pop_front();
        }
        for d in self.dones.iter_mut() {
            d.0 = d.0.saturating_sub(1);
        }
    }

    /// A request taken.
    pub fn request(&mut self, addr: u64, len: usize, tag: u64) {
        self.cur = Some((addr, len, tag, Vec::new()));
    }

    /// A data beat taken (bytes contiguous from the low lane); at the last, the bytes go into
    /// `mem` and the done waits `delay()` clocks.
    pub fn beat(
        &mut self,
        mem: &mut HostMemory,
        data: u64,
        keep: u64,
        last: bool,
        delay: impl FnOnce() -> u32,
    ) -> Result<(), String> {
        let Some((addr, len, tag, mut bytes)) = self.cur.take() else {
            return Err("write data before its request".into());
        };
        let n = keep.trailing_ones() as usize;
        if keep >> n != 0 || (bytes.len() % 8 != 0 && n > 0) {
            return Err(format!("a write beat keeping {keep:#x}"));
        }
        bytes.extend_from_slice(&data.to_le_bytes()[..n]);
        if !last {
            self.cur = Some((addr, len, tag, bytes));
            return Ok(());
        }
        if bytes.len() != len || !mem.fill(addr, &bytes) {
            return Err(format!(
                "a DMA write of {} bytes ({len} announced) at {addr:#x}",
                bytes.len()
            ));
        }
        self.dones.push_back((delay(), tag));
        Ok(())
    }
}

/// The host side of a tagged DMA port (`m_dma_*` with `rd_req_tag`, `rd_data_tag` and
/// `wr_done_tag`), driven by port name: reads answered from host memory in order, each beat
/// with its read's tag, a beat once shown kept until taken; writes through [`DmaWrites`].
/// [`DmaHost::drive`] sets the inputs before the settle, [`DmaHost::take`] takes what the top
/// offered after it.
#[derive(Clone, Debug, Default)]
pub struct DmaHost {
    beats: VecDeque<(u64, bool, bool, u64)>,
    beat_shown: bool,
    writes: DmaWrites,
    /// This clock's readies: read request, write request, write data.
    rq: bool,
    wq: bool,
    wd: bool,
}

impl DmaHost {
    /// Nothing read and not yet delivered, nothing written and not yet done.
    pub fn idle(&self) -> bool {
        self.beats.is_empty() && self.writes.idle()
    }

    /// This clock's inputs of the DMA port.
    pub fn drive<D: rnic_cosim::ports::PortDut>(
        &mut self,
        ports: &mut crate::bench_ports::BenchPorts<D>,
    ) {
        self.rq = ports.go();
        ports.set("m_dma_rd_req_ready", u64::from(self.rq));
        self.beat_shown = !self.beats.is_empty() && (self.beat_shown || ports.go());
        let (bd, bl, be, bt) = self.beats.front().copied().unwrap_or((0, false, false, 0));
        ports.set("m_dma_rd_data_valid", u64::from(self.beat_shown));
        ports.set("m_dma_rd_data", bd);
        ports.set("m_dma_rd_data_last", u64::from(bl));
        ports.set("m_dma_rd_data_err", u64::from(be));
        ports.set("m_dma_rd_data_tag", bt);
        (self.wq, self.wd) = (ports.go(), ports.go());
        ports.set(
            "m_dma_wr_req_ready",
            u64::from(self.wq && self.writes.can_take()),
        );
        ports.set("m_dma_wr_data_ready", u64::from(self.wd));
        let done = self.writes.done();
        ports.set("m_dma_wr_done_valid", u64::from(done.is_some()));
        ports.set("m_dma_wr_done_tag", done.unwrap_or(0));
        ports.set("m_dma_wr_done_err", 0);
    }

    /// What the port offered this clock (after the settle), against `memory`.
    pub fn take<D: rnic_cosim::ports::PortDut>(
        &mut self,
        ports: &mut crate::bench_ports::BenchPorts<D>,
        memory: &mut HostMemory,
    ) -> Result<(), String> {
        let c = ports.cycle;
        if self.rq && ports.get("m_dma_rd_req_valid") == 1 {
            let addr = ports.get("m_dma_rd_req_addr");
            let len = ports.get("m_dma_rd_req_len") as usize;
            let tag = ports.get("m_dma_rd_req_tag");
            let read = memory
                .read_beats(addr, len)
                .map_err(|e| format!("cycle {c}: {e}"))?;
            self.beats
                .extend(read.into_iter().map(|(d, l, e)| (d, l, e, tag)));
        }
        if self.beat_shown && ports.get("m_dma_rd_data_ready") == 1 {
            self.beats.pop_front();
            self.beat_shown = false;
        }
        self.writes.clock();
        if self.wq && self.writes.can_take() && ports.get("m_dma_wr_req_valid") == 1 {
            let addr = ports.get("m_dma_wr_req_addr");
            let len = ports.get("m_dma_wr_req_len") as usize;
            let tag = ports.get("m_dma_wr_req_tag");
            self.writes.request(addr, len, tag);
        }
        if self.wd && ports.get("m_dma_wr_data_valid") == 1 {
            let keep = ports.get("m_dma_wr_data_keep");
            let data = ports.get("m_dma_wr_data");
            let last = ports.get("m_dma_wr_data_last") == 1;
            self.writes
                .beat(memory, data, keep, last, || DmaWrites::done_delay(ports))
                .map_err(|e| format!("cycle {c}: {e}"))?;
        }
        Ok(())
    }
}
