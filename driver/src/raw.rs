//! The raw Ethernet queues over any [`Transport`], on the ring type the QP rings share.
//!
//! The raw queues are three rings of the register map's `raw` block: ring 0 transmits
//! (`raw_tx_desc`), ring 1 holds receive buffers (`raw_rx_desc`), ring 2 takes the receive
//! completions (`raw_cqe`, with a phase bit). Nothing the device writes is trusted: a
//! consumer index outside what was posted, a completion for another ring slot, a length
//! beyond its buffer or an unknown status is refused with an error that says what the device
//! wrote, counted, and never used to address memory.

use rnic_regmap::desc::{RAW_CQE, RAW_RX_DESC, RAW_TX_DESC};

use crate::registers::{self, check_magic, off};
pub use crate::ring::DeviceErrors;
use crate::ring::{Ring, get, irq_bit, set};
use crate::transport::{Budget, DmaRegion, Result, Transport, TransportError};

/// Settings of the raw queues.
#[derive(Clone, Copy, Debug)]
pub struct RawConfig {
    /// log2 of the entries of each ring (1..=12).
    pub log_size: u32,
    /// Bytes per receive buffer (a multiple of 8, 64..=9216).
    pub buf_len: usize,
    /// Raise the interrupt for received frames (IRQ_ENABLE.RAW_RX and the ring's ARM).
    pub interrupts: bool,
}

impl Default for RawConfig {
    fn default() -> Self {
        RawConfig {
            log_size: 6,
            buf_len: 2048,
            interrupts: true,
        }
    }
}

/// A frame the device delivered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    pub frame: Vec<u8>,
    /// The frame was longer than the buffer.
    pub cut: bool,
    /// The device could not write it (its DMA write was refused).
    pub dma_error: bool,
}

/// The raw Ethernet queues of one device.
pub struct RawQueues<T: Transport> {
    pub t: T,
    cfg: RawConfig,
    tx: Ring,
    rx: Ring,
    cq: Ring,
    tx_bufs: Vec<DmaRegion>,
    rx_bufs: Vec<DmaRegion>,
    pub errors: DeviceErrors,
}

const MAX_FRAME: usize = 9216;
/// The shortest frame on the wire (without FCS).
pub const MIN_FRAME: usize = 60;

impl<T: Transport> RawQueues<T> {
    /// Sets the rings up (disabled, programmed, enabled), posts every receive buffer and
    /// enables the NIC.
    pub fn new(mut t: T, cfg: RawConfig) -> Result<Self> {
        if !(1..=12).contains(&cfg.log_size) {
            return Err(TransportError(format!(
                "ring size 2^{} out of 2^1..=2^12",
                cfg.log_size
            )));
        }
        if cfg.buf_len % 8 != 0 || !(64..=MAX_FRAME).contains(&cfg.buf_len) {
            return Err(TransportError(format!(
                "receive buffer of {} bytes: give a multiple of 8 in 64..=9216",
                cfg.buf_len
            )));
        }
        check_magic(&mut t)?;
        let n = 1usize << cfg.log_size;
        let tx = Ring::new(
            &mut t,
            "raw",
            0,
            cfg.log_size,
            usize::from(RAW_TX_DESC.size),
        )?;
        let rx = Ring::new(
            &mut t,
            "raw",
            1,
            cfg.log_size,
            usize::from(RAW_RX_DESC.size),
        )?;
        let cq = Ring::new(&mut t, "raw", 2, cfg.log_size, usize::from(RAW_CQE.size))?;
        let mut tx_bufs = Vec::with_capacity(n);
        let mut rx_bufs = Vec::with_capacity(n);
        for _ in 0..n {
            tx_bufs.push(t.alloc(MAX_FRAME)?);
            rx_bufs.push(t.alloc(cfg.buf_len)?);
        }
        let mut q = RawQueues {
            t,
            cfg,
            tx,
            rx,
            cq,
            tx_bufs,
            rx_bufs,
            errors: DeviceErrors::default(),
        };
        q.t.write32(off("ctrl", "CTRL", None), 0)?;
        q.tx.program(&mut q.t, false)?;
        q.rx.program(&mut q.t, false)?;
        q.cq.program(&mut q.t, cfg.interrupts)?;
        let irq = if cfg.interrupts { irq_bit("RAW_RX") } else { 0 };
        q.t.write32(off("ctrl", "IRQ_ENABLE", None), irq)?;
        q.t.write32(off("ctrl", "CTRL", None), 1 << 1)?;
        for slot in 0..n {
            q.post_rx(slot)?;
        }
        q.t.write32(q.rx.reg("DOORBELL"), u32::from(q.rx.prod))?;
        Ok(q)
    }

    fn post_rx(&mut self, slot: usize) -> Result<()> {
        let mut d = [0u8; 16];
        set(&RAW_RX_DESC, &mut d, "ADDR", self.rx_bufs[slot].addr)?;
        set(&RAW_RX_DESC, &mut d, "BUF_LEN", self.cfg.buf_len as u64)?;
        self.t
            .write_mem(&self.rx.mem, self.rx.at(self.rx.prod), &d)?;
        self.rx.prod = self.rx.prod.wrapping_add(1);
        Ok(())
    }

    /// Frames posted for transmission that the NIC has not yet taken.
    pub fn tx_pending(&mut self) -> Result<u16> {
        self.tx.refresh_cons(&mut self.t, &mut self.errors)?;
        Ok(self.tx.used())
    }

    /// Queues `frame` (14..=9216 bytes; one under 60 bytes goes out zero-padded to 60, as a
    /// MAC pads it); false if the ring is full.
    pub fn send(&mut self, frame: &[u8]) -> Result<bool> {
        if !(14..=MAX_FRAME).contains(&frame.len()) {
            return Err(TransportError(format!(
                "a frame of {} bytes: raw frames are 14..=9216 bytes",
                frame.len()
            )));
        }
        if self.tx.is_full() {
            self.tx.refresh_cons(&mut self.t, &mut self.errors)?;
            if self.tx.is_full() {
                return Ok(false);
            }
        }
        let slot = self.tx.slot(self.tx.prod);
        let buf = self.tx_bufs[slot];
        let mut padded;
        let frame = if frame.len() < MIN_FRAME {
            padded = frame.to_vec();
            padded.resize(MIN_FRAME, 0);
            &padded[..]
        } else {
            frame
        };
        self.t.write_mem(&buf, 0, frame)?;
        let mut d = [0u8; 16];
        set(&RAW_TX_DESC, &mut d, "ADDR", buf.addr)?;
        set(&RAW_TX_DESC, &mut d, "LEN", frame.len() as u64)?;
        self.t
            .write_mem(&self.tx.mem, self.tx.at(self.tx.prod), &d)?;
        self.tx.prod = self.tx.prod.wrapping_add(1);
        self.t
            .write32(self.tx.reg("DOORBELL"), u32::from(self.tx.prod))?;
        Ok(true)
    }

    /// The next received frame, if the device has completed one.
    pub fn recv(&mut self) -> Result<Option<Received>> {
        let mut e = [0u8; 16];
        // The entry is new when its phase is this pass's: 1 on the first pass, then alternating.
        if !self.cq.read_completion(&mut self.t, &RAW_CQE, &mut e)? {
            return Ok(None);
        }
        let len = get(&RAW_CQE, &e, "LEN") as usize;
        let status = get(&RAW_CQE, &e, "STATUS");
        let index = get(&RAW_CQE, &e, "RING_INDEX") as u16;
        if index != self.rx.cons || len > self.cfg.buf_len || status > 2 {
            self.errors.bad_completion += 1;
            return Err(TransportError(format!(
                "device wrote completion {} (ring index {index}, length {len}, status {status}); expected ring index {} and at most {} bytes",
                self.cq.cons, self.rx.cons, self.cfg.buf_len
            )));
        }
        let rslot = self.rx.slot(self.rx.cons);
        let mut frame = vec![0u8; len];
        self.t.read_mem(&self.rx_bufs[rslot], 0, &mut frame)?;
        self.cq.cons = self.cq.cons.wrapping_add(1);
        self.rx.cons = self.rx.cons.wrapping_add(1);
        // Give the buffer back, and the completion entry.
        self.post_rx(rslot)?;
        self.t
            .write32(self.rx.reg("DOORBELL"), u32::from(self.rx.prod))?;
        self.t
            .write32(self.cq.reg("DOORBELL"), u32::from(self.cq.cons))?;
        Ok(Some(Received {
            frame,
            cut: status == 1,
            dma_error: status == 2,
        }))
    }

    /// Arms the completion ring: the next completion raises the interrupt.
    pub fn arm(&mut self) -> Result<()> {
        self.cq.arm(&mut self.t)
    }

    /// Pending interrupt causes, cleared.
    pub fn take_irq_status(&mut self) -> Result<u32> {
        registers::take_irq_status(&mut self.t)
    }

    /// Lets the device run (a simulated one) or waits for it (real hardware).
    pub fn wait(&mut self, budget: Budget) -> Result<bool> {
        self.t.wait(budget)
    }

    /// Every register of the map, by name, read from the device.
    pub fn dump(&mut self) -> Result<Vec<(String, u32)>> {
        registers::dump(&mut self.t)
    }
}
