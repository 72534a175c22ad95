//! How the driver reaches a device: 32-bit register access in the CSR window, DMA-able
//! memory the device sees at device addresses, and waiting for the interrupt. Two
//! implementations: [`VfioTransport`] (a PCI device bound to vfio-pci: BAR0 is the CSR window,
//! buffers are mapped through the IOMMU, the interrupt is MSI through an eventfd) and
//! [`SimTransport`] (the Verilator host interface in this process: its DMA port reads and
//! writes the driver's buffers, time passes only while the driver waits).
//!
//! Ordering: a driver writes descriptors into memory and then rings a doorbell, and reads a
//! completion's phase before its other fields. `write32` is therefore a release (memory
//! writes before it are visible to the device first) and `read_mem` after a register read or
//! a phase check an acquire; the VFIO transport puts fences there, the simulated one is
//! sequential by construction.

use std::sync::atomic::{Ordering, fence};
use std::time::{Duration, Instant};

use rnic_cosim::host::{DeviceConfig, SimDevice};

use crate::{Bar, Device, DmaBuffer, Interrupt};

/// A transport error: what failed, in words a user can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportError(pub String);

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TransportError {}

pub type Result<T> = std::result::Result<T, TransportError>;

fn err(e: impl std::fmt::Display) -> TransportError {
    TransportError(e.to_string())
}

/// A buffer the device can reach: its index in the transport and its device address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaRegion {
    pub index: usize,
    pub addr: u64,
    pub len: usize,
}

/// How long to wait: simulated devices count clock cycles, real ones time.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub cycles: u64,
    pub time: Duration,
}

impl Budget {
    pub const SHORT: Budget = Budget {
        cycles: 256,
        time: Duration::from_millis(1),
    };
}

pub trait Transport {
    fn read32(&mut self, offset: u32) -> Result<u32>;
    /// A register write, ordered after every memory write before it.
    fn write32(&mut self, offset: u32, v: u32) -> Result<()>;
    /// `len` bytes of zeroed DMA-able memory, 4 KiB aligned.
    fn alloc(&mut self, len: usize) -> Result<DmaRegion>;
    fn read_mem(&mut self, r: &DmaRegion, offset: usize, out: &mut [u8]) -> Result<()>;
    fn write_mem(&mut self, r: &DmaRegion, offset: usize, data: &[u8]) -> Result<()>;
    /// Lets the device run until its interrupt fires or `budget` passes; true if it fired.
    fn wait(&mut self, budget: Budget) -> Result<bool>;
}

fn check_range(r: &DmaRegion, offset: usize, len: usize) -> Result<()> {
    if offset.checked_add(len).is_none_or(|e| e > r.len) {
        return Err(TransportError(format!(
            "access of {len} bytes at offset {offset} outside a {}-byte DMA buffer",
            r.len
        )));
    }
    Ok(())
}

/// The simulated host interface (Verilator, or Verilator and rust-hdl in lock-step).
pub struct SimTransport {
    pub dev: SimDevice,
    regions: Vec<DmaRegion>,
}

impl SimTransport {
    pub fn new(cfg: DeviceConfig) -> Result<Self> {
        Ok(SimTransport {
            dev: SimDevice::new(cfg).map_err(err)?,
            regions: Vec::new(),
        })
    }
}

impl Transport for SimTransport {
    fn read32(&mut self, offset: u32) -> Result<u32> {
        self.dev.read32(offset).map_err(err)
    }
    fn write32(&mut self, offset: u32, v: u32) -> Result<()> {
        self.dev.write32(offset, v).map_err(err)
    }
    fn alloc(&mut self, len: usize) -> Result<DmaRegion> {
        let addr = self.dev.env.mem.alloc(len);
        let r = DmaRegion {
            index: self.regions.len(),
            addr,
            len,
        };
        self.regions.push(r);
        Ok(r)
    }
    fn read_mem(&mut self, r: &DmaRegion, offset: usize, out: &mut [u8]) -> Result<()> {
        check_range(r, offset, out.len())?;
        let b = self
            .dev
            .env
            .mem
            .read(r.addr + offset as u64, out.len())
            .ok_or_else(|| TransportError(format!("no buffer at {:#x}", r.addr)))?;
        out.copy_from_slice(b);
        Ok(())
    }
    fn write_mem(&mut self, r: &DmaRegion, offset: usize, data: &[u8]) -> Result<()> {
        check_range(r, offset, data.len())?;
        if !self.dev.env.mem.write(r.addr + offset as u64, data) {
            return Err(TransportError(format!("no buffer at {:#x}", r.addr)));
        }
        Ok(())
    }
    fn wait(&mut self, budget: Budget) -> Result<bool> {
        let start = self.dev.env.irq_edges;
        let mut left = budget.cycles;
        while left > 0 {
            let n = left.min(16);
            self.dev.run(n).map_err(err)?;
            left -= n;
            if self.dev.env.irq_edges != start || self.dev.env.irq_line {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// A PCI device bound to vfio-pci: BAR0 is the CSR window.
pub struct VfioTransport {
    pub device: Device,
    bar: Bar,
    buffers: Vec<(DmaBuffer, DmaRegion)>,
    irq: Option<Interrupt>,
    next_iova: u64,
}

impl VfioTransport {
    /// Opens the device at `bdf` (e.g. `0000:00:04.0`), maps BAR0, enables bus mastering
    /// and, if the device has it, MSI.
    pub fn open(bdf: &str) -> Result<Self> {
        let device = Device::open(bdf).map_err(err)?;
        let bar = device.map_bar(0).map_err(err)?;
        device.enable_bus_master().map_err(err)?;
        let irq = device.enable_msi().ok();
        Ok(VfioTransport {
            device,
            bar,
            buffers: Vec::new(),
            irq,
            next_iova: 0x1_0000_0000,
        })
    }

    fn buffer(&self, r: &DmaRegion) -> Result<&DmaBuffer> {
        self.buffers
            .get(r.index)
            .filter(|(_, x)| x == r)
            .map(|(b, _)| b)
            .ok_or_else(|| TransportError(format!("DMA buffer {} is not this device's", r.index)))
    }
}

impl Transport for VfioTransport {
    fn read32(&mut self, offset: u32) -> Result<u32> {
        let v = self.bar.read32(offset as usize).map_err(err)?;
        // Memory the device wrote before this register read is read after it.
        fence(Ordering::Acquire);
        Ok(v)
    }
    fn write32(&mut self, offset: u32, v: u32) -> Result<()> {
        // Descriptors written before a doorbell reach memory before the doorbell.
        fence(Ordering::Release);
        self.bar.write32(offset as usize, v).map_err(err)
    }
    fn alloc(&mut self, len: usize) -> Result<DmaRegion> {
        let size = len.next_multiple_of(4096).max(4096);
        let buf = DmaBuffer::new(size).map_err(err)?;
        let iova = self.next_iova;
        // SAFETY: `buf` is a page-aligned anonymous mapping of `size` bytes owned by this
        // transport, kept (in `buffers`) until the transport is dropped, and accessed only
        // through its volatile accessors, never through a Rust reference.
        unsafe { self.device.dma_map(iova, buf.as_ptr(), size) }.map_err(err)?;
        self.next_iova += size as u64 + 0x1_0000;
        let r = DmaRegion {
            index: self.buffers.len(),
            addr: iova,
            len,
        };
        self.buffers.push((buf, r));
        Ok(r)
    }
    fn read_mem(&mut self, r: &DmaRegion, offset: usize, out: &mut [u8]) -> Result<()> {
        check_range(r, offset, out.len())?;
        fence(Ordering::Acquire);
        let b = self.buffer(r)?;
        out.copy_from_slice(&b.read(offset, out.len()));
        Ok(())
    }
    fn write_mem(&mut self, r: &DmaRegion, offset: usize, data: &[u8]) -> Result<()> {
        check_range(r, offset, data.len())?;
        self.buffer(r)?.write(offset, data);
        Ok(())
    }
    fn wait(&mut self, budget: Budget) -> Result<bool> {
        match &self.irq {
            Some(i) => Ok(i.wait(budget.time).map_err(err)? > 0),
            None => {
                let end = Instant::now() + budget.time;
                while Instant::now() < end {
                    std::thread::sleep(Duration::from_micros(50));
                }
                Ok(false)
            }
        }
    }
}

impl Drop for VfioTransport {
    fn drop(&mut self) {
        for (b, r) in &self.buffers {
            let _ = self.device.dma_unmap(r.addr, b.len());
        }
    }
}
