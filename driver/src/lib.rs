//! The VFIO transport of the rnic driver: open a PCI device bound to vfio-pci (container,
//! group, device), read its regions, map BARs, access registers with volatile loads and stores,
//! enable bus mastering, map and unmap DMA memory through the IOMMU, and receive MSI through
//! an eventfd. Every error names the device and the step that failed.
//!
//! No Rust reference ever points into a BAR or into memory a device may write: both are held
//! as raw mappings and read or written with volatile accessors.
//!
//! Above the transport sits the verbs API host programs are written against ([`verbs`]): a
//! [`verbs::Backend`] trait a device implements and ibverbs-style wrappers on it
//! ([`verbs::Context`], protection domains, memory regions, completion queues, queue pairs and
//! `ibv_modify_qp` builders), speaking the transport model's vocabulary. The one backend today
//! is [`model::ModelBackend`], the RoCEv2 transport model on a frame link (two of them talk
//! in one process over [`model::ChannelLink`]); the Verilator and VFIO hardware backends will
//! implement the same trait.
//!
//! Beside it, the host interface's own layers: [`transport::Transport`] (registers, DMA
//! memory, interrupts; over VFIO or over the simulated device), and on it [`registers`]
//! (registers by name, the identity check, a dump), [`raw`] (the raw Ethernet queues) and
//! [`queues`] (the QP rings: send, receive and completion rings), both on one ring type.

use std::fmt;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use memmap2::{MmapOptions, MmapRaw};
use vfio_ioctls::{VfioContainer, VfioDevice, VfioOps};
use vmm_sys_util::eventfd::EventFd;

pub mod bench_ports;
pub mod completer_sim;
pub mod host_memory;
pub mod model;
pub mod queues;
pub mod raw;
pub mod rawsock;
pub mod rc_nic_sim;
pub mod rc_pair;
pub mod registers;
pub mod replay_hw;
pub mod requester_path_sim;
pub mod requester_sim;
pub mod responder_sim;
mod ring;
pub mod tables;
pub mod tools;
pub mod transport;
pub mod verbs;

/// Region index of PCI configuration space (VFIO_PCI_CONFIG_REGION_INDEX).
pub const CONFIG_REGION: u32 = 7;
/// PCI command register offset and its bus-master bit.
pub const PCI_COMMAND: u64 = 0x04;
pub const PCI_COMMAND_MEMORY: u16 = 1 << 1;
pub const PCI_COMMAND_MASTER: u16 = 1 << 2;
/// Region flags (linux/vfio.h).
pub const REGION_READ: u32 = 1 << 0;
pub const REGION_WRITE: u32 = 1 << 1;
pub const REGION_MMAP: u32 = 1 << 2;

/// What failed, on which device, at which step.
#[derive(Debug)]
pub struct Error {
    pub device: String,
    pub step: &'static str,
    pub detail: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "VFIO device {}: {}: {}",
            self.device, self.step, self.detail
        )
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// One region of the device as VFIO describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionInfo {
    pub index: u32,
    /// Offset of the region in the device file (for mmap and pread).
    pub offset: u64,
    pub size: u64,
    pub flags: u32,
}

/// An open VFIO device with its own container.
pub struct Device {
    name: String,
    container: Arc<VfioContainer>,
    dev: VfioDevice,
}

impl Device {
    /// Opens the PCI device `bdf` (e.g. `0000:00:03.0`), which must be bound to vfio-pci: opens
    /// the container, adds the device's IOMMU group and sets the type-1 IOMMU.
    pub fn open(bdf: &str) -> Result<Device> {
        Self::open_sysfs(&PathBuf::from("/sys/bus/pci/devices").join(bdf))
    }

    /// Opens the device at a sysfs path.
    pub fn open_sysfs(path: &Path) -> Result<Device> {
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into(),
        );
        let err = |step: &'static str, detail: String| Error {
            device: name.clone(),
            step,
            detail,
        };
        let driver = std::fs::read_link(path.join("driver"))
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()));
        if driver.as_deref() != Some("vfio-pci") {
            return Err(err(
                "check driver",
                format!(
                    "bound to {}, not vfio-pci (echo vfio-pci > {}/driver_override; echo {name} > /sys/bus/pci/drivers_probe)",
                    driver.as_deref().unwrap_or("no driver"),
                    path.display()
                ),
            ));
        }
        let container = Arc::new(
            VfioContainer::new(None)
                .map_err(|e| err("open container /dev/vfio/vfio", e.to_string()))?,
        );
        let ops: Arc<dyn VfioOps> = container.clone();
        let dev = VfioDevice::new(path, ops, false)
            .map_err(|e| err("open group and device", e.to_string()))?;
        Ok(Device {
            name,
            container,
            dev,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    fn err(&self, step: &'static str, detail: impl Into<String>) -> Error {
        Error {
            device: self.name.clone(),
            step,
            detail: detail.into(),
        }
    }

    /// Region `index` (0-5 BARs, 6 ROM, 7 config space). A region the device lacks has size 0.
    pub fn region(&self, index: u32) -> RegionInfo {
        RegionInfo {
            index,
            offset: self.dev.get_region_offset(index),
            size: self.dev.get_region_size(index),
            flags: self.dev.get_region_flags(index),
        }
    }

    /// Maps BAR `index` into this process.
    pub fn map_bar(&self, index: u32) -> Result<Bar> {
        let r = self.region(index);
        if r.size == 0 {
            return Err(self.err("map BAR", format!("BAR{index} is absent (size 0)")));
        }
        if r.flags & REGION_MMAP == 0 {
            return Err(self.err(
                "map BAR",
                format!("BAR{index} cannot be mmapped (flags {:#x})", r.flags),
            ));
        }
        let len = usize::try_from(r.size).map_err(|_| self.err("map BAR", "size exceeds usize"))?;
        let map = MmapOptions::new()
            .offset(r.offset)
            .len(len)
            .map_raw(self.dev.as_raw_fd())
            .map_err(|e| {
                self.err(
                    "map BAR",
                    format!("mmap of BAR{index} ({len} bytes at {:#x}): {e}", r.offset),
                )
            })?;
        Ok(Bar {
            device: self.name.clone(),
            index,
            map,
        })
    }

    fn config_io(&self, offset: u64, buf: &mut [u8], write: bool) -> Result<()> {
        let r = self.region(CONFIG_REGION);
        if offset + buf.len() as u64 > r.size {
            return Err(self.err(
                "config space",
                format!("offset {offset:#x} beyond {:#x}", r.size),
            ));
        }
        let fd = self.dev.as_raw_fd();
        let at = (r.offset + offset) as libc::off_t;
        let n = if write {
            // SAFETY: pwrite reads buf.len() bytes from a live slice; the fd is the device's.
            unsafe { libc::pwrite(fd, buf.as_ptr().cast(), buf.len(), at) }
        } else {
            // SAFETY: pread writes at most buf.len() bytes into a live, exclusively borrowed slice.
            unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), at) }
        };
        if n != buf.len() as isize {
            let e = std::io::Error::last_os_error();
            return Err(self.err(
                if write { "config write" } else { "config read" },
                format!("{} bytes at {offset:#x}: {e}", buf.len()),
            ));
        }
        Ok(())
    }

    pub fn config_read_u16(&self, offset: u64) -> Result<u16> {
        let mut b = [0; 2];
        self.config_io(offset, &mut b, false)?;
        Ok(u16::from_le_bytes(b))
    }

    pub fn config_read_u32(&self, offset: u64) -> Result<u32> {
        let mut b = [0; 4];
        self.config_io(offset, &mut b, false)?;
        Ok(u32::from_le_bytes(b))
    }

    pub fn config_write_u16(&self, offset: u64, v: u16) -> Result<()> {
        self.config_io(offset, &mut v.to_le_bytes(), true)
    }

    /// Sets memory decoding and bus mastering in the command register (vfio-pci leaves bus
    /// mastering off; without it the device cannot DMA).
    pub fn enable_bus_master(&self) -> Result<()> {
        let cmd = self.config_read_u16(PCI_COMMAND)?;
        self.config_write_u16(PCI_COMMAND, cmd | PCI_COMMAND_MASTER | PCI_COMMAND_MEMORY)?;
        let now = self.config_read_u16(PCI_COMMAND)?;
        if now & PCI_COMMAND_MASTER == 0 {
            return Err(self.err(
                "enable bus master",
                format!("command register reads {now:#06x}"),
            ));
        }
        Ok(())
    }

    /// Makes `len` bytes at `host` visible to the device at I/O virtual address `iova`.
    ///
    /// # Safety
    /// `host..host + len` must be a live mapping owned by the caller, page aligned, that stays
    /// mapped until [`Device::dma_unmap`] of the same range, and that no Rust reference points
    /// into while it is mapped (the device may write it at any time).
    pub unsafe fn dma_map(&self, iova: u64, host: *mut u8, len: usize) -> Result<()> {
        // SAFETY: the caller's contract is the one vfio_dma_map states.
        unsafe { self.container.vfio_dma_map(iova, len, host) }
            .map_err(|e| self.err("DMA map", format!("iova {iova:#x} len {len:#x}: {e}")))
    }

    /// Removes a mapping made by [`Device::dma_map`].
    pub fn dma_unmap(&self, iova: u64, len: usize) -> Result<()> {
        self.container
            .vfio_dma_unmap(iova, len)
            .map_err(|e| self.err("DMA unmap", format!("iova {iova:#x} len {len:#x}: {e}")))
    }

    /// Enables one MSI vector signalled through a new eventfd.
    pub fn enable_msi(&self) -> Result<Interrupt> {
        let fd = EventFd::new(libc::EFD_NONBLOCK)
            .map_err(|e| self.err("create eventfd", e.to_string()))?;
        self.dev
            .enable_msi(vec![&fd])
            .map_err(|e| self.err("enable MSI", e.to_string()))?;
        Ok(Interrupt {
            device: self.name.clone(),
            fd,
        })
    }

    pub fn disable_msi(&self) -> Result<()> {
        self.dev
            .disable_msi()
            .map_err(|e| self.err("disable MSI", e.to_string()))
    }
}

/// An MSI vector's eventfd.
pub struct Interrupt {
    device: String,
    fd: EventFd,
}

impl Interrupt {
    /// Waits up to `timeout` for the interrupt; returns how many arrived (0 on timeout).
    pub fn wait(&self, timeout: Duration) -> Result<u64> {
        let mut p = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: poll on one valid pollfd that lives across the call.
        let n = unsafe { libc::poll(&mut p, 1, ms) };
        if n < 0 {
            return Err(Error {
                device: self.device.clone(),
                step: "wait for MSI",
                detail: std::io::Error::last_os_error().to_string(),
            });
        }
        if n == 0 {
            return Ok(0);
        }
        self.fd.read().map_err(|e| Error {
            device: self.device.clone(),
            step: "read MSI eventfd",
            detail: e.to_string(),
        })
    }
}

/// A mapped BAR: registers by offset, volatile, bounds-checked.
pub struct Bar {
    device: String,
    index: u32,
    map: MmapRaw,
}

impl Bar {
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.len() == 0
    }

    fn ptr(&self, offset: usize, width: usize) -> Result<*mut u8> {
        if offset % width != 0 || offset + width > self.map.len() {
            return Err(Error {
                device: self.device.clone(),
                step: "BAR access",
                detail: format!(
                    "BAR{} offset {offset:#x} width {width} is unaligned or beyond {:#x}",
                    self.index,
                    self.map.len()
                ),
            });
        }
        // SAFETY: offset + width lies within the mapping (checked above).
        Ok(unsafe { self.map.as_mut_ptr().add(offset) })
    }

    pub fn read32(&self, offset: usize) -> Result<u32> {
        let p = self.ptr(offset, 4)?.cast::<u32>();
        // SAFETY: p is aligned and inside the live mapping; volatile, as device memory must be.
        Ok(u32::from_le(unsafe { p.read_volatile() }))
    }

    pub fn write32(&self, offset: usize, v: u32) -> Result<()> {
        let p = self.ptr(offset, 4)?.cast::<u32>();
        // SAFETY: p is aligned and inside the live mapping; volatile, as device memory must be.
        unsafe { p.write_volatile(v.to_le()) };
        Ok(())
    }

    pub fn read64(&self, offset: usize) -> Result<u64> {
        let p = self.ptr(offset, 8)?.cast::<u64>();
        // SAFETY: as read32, 8-byte aligned.
        Ok(u64::from_le(unsafe { p.read_volatile() }))
    }

    pub fn write64(&self, offset: usize, v: u64) -> Result<()> {
        let p = self.ptr(offset, 8)?.cast::<u64>();
        // SAFETY: as write32, 8-byte aligned.
        unsafe { p.write_volatile(v.to_le()) };
        Ok(())
    }

    pub fn read8(&self, offset: usize) -> Result<u8> {
        let p = self.ptr(offset, 1)?;
        // SAFETY: inside the live mapping.
        Ok(unsafe { p.read_volatile() })
    }

    pub fn write8(&self, offset: usize, v: u8) -> Result<()> {
        let p = self.ptr(offset, 1)?;
        // SAFETY: inside the live mapping.
        unsafe { p.write_volatile(v) };
        Ok(())
    }
}

/// Anonymous page-aligned memory for DMA, accessed only through volatile byte accessors.
pub struct DmaBuffer {
    map: MmapRaw,
}

impl DmaBuffer {
    pub fn new(len: usize) -> std::io::Result<DmaBuffer> {
        let map = MmapOptions::new().len(len).map_anon()?;
        Ok(DmaBuffer {
            map: MmapRaw::from(map),
        })
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.len() == 0
    }

    /// The start, for [`Device::dma_map`].
    pub fn as_ptr(&self) -> *mut u8 {
        self.map.as_mut_ptr()
    }

    /// Copies `data` in at `offset` (panics beyond the end).
    pub fn write(&self, offset: usize, data: &[u8]) {
        assert!(
            offset + data.len() <= self.len(),
            "DMA buffer write out of range"
        );
        for (i, b) in data.iter().enumerate() {
            // SAFETY: offset + i < len (asserted), inside the live mapping.
            unsafe { self.map.as_mut_ptr().add(offset + i).write_volatile(*b) };
        }
    }

    /// Copies `len` bytes out from `offset` (panics beyond the end).
    pub fn read(&self, offset: usize, len: usize) -> Vec<u8> {
        assert!(offset + len <= self.len(), "DMA buffer read out of range");
        (0..len)
            // SAFETY: offset + i < len (asserted), inside the live mapping.
            .map(|i| unsafe { self.map.as_ptr().add(offset + i).read_volatile() })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opening_a_device_not_bound_to_vfio_names_device_and_step() {
        let dir =
            std::env::temp_dir().join(format!("rnic-vfio-{}/0000:00:99.0", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = Device::open_sysfs(&dir)
            .err()
            .expect("no driver, no device");
        let s = e.to_string();
        assert!(
            s.contains("0000:00:99.0")
                && s.contains("check driver")
                && s.contains("driver_override"),
            "{s}"
        );
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }

    #[test]
    fn dma_buffer_round_trips_bytes() {
        let b = DmaBuffer::new(8192).unwrap();
        assert_eq!(b.as_ptr() as usize % 4096, 0, "page aligned");
        b.write(4000, &[1, 2, 3, 4, 5]);
        assert_eq!(b.read(3999, 7), vec![0, 1, 2, 3, 4, 5, 0]);
    }
}

/// Test patterns both sides of a shared-memory test can compute.
pub mod pattern {
    /// `len` bytes derived from `seed` (a 64-bit LCG's high bytes): different seeds give
    /// different bytes almost everywhere.
    pub fn bytes(seed: u64, len: usize) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (x >> 56) as u8
            })
            .collect()
    }
}
