//! The host's view of one ring of the register map, whatever block it is in (the raw rings,
//! the send, receive and completion queues): where its entries are, its two free-running
//! 16-bit indices, its registers, and the checks of what the device writes.
//!
//! A ring index is free running; entry `index mod 2^LOG_SIZE` holds it and a ring is full when
//! the producer is `2^LOG_SIZE` ahead of the consumer. Completion entries carry a phase bit
//! that is 1 on the ring's first pass and then alternates, so the host tells a new entry from
//! last pass's by memory alone. Nothing the device writes addresses memory before it has been
//! checked against what the host posted.

use rnic_regmap::desc::{self, Format};
use rnic_regmap::regs;

use crate::registers::off;
use crate::transport::{DmaRegion, Result, Transport, TransportError};

/// Refusals of what the device wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceErrors {
    /// An index register outside what the host posted.
    pub bad_index: u64,
    /// A completion entry the host cannot accept.
    pub bad_completion: u64,
}

/// Largest ring: 2^15 entries keeps "full" (`prod - cons == size`) apart from "empty" in 16-bit
/// indices, and an even number of passes per index wrap keeps the phase alternating across it.
pub(crate) const MAX_LOG_SIZE: u32 = 15;

/// Value of field `field` of register `reg` of every ring (`SIZE.ENABLE`, ...), placed at its
/// bits; a value wider than the field is an error naming both.
pub(crate) fn ring_field(reg: &str, field: &str, v: u32) -> Result<u32> {
    let f = regs::ring_register(reg)
        .and_then(|r| r.field(field))
        .unwrap_or_else(|| panic!("{reg}.{field} is in the map"));
    if u64::from(v) >> f.width != 0 {
        return Err(TransportError(format!(
            "{reg}.{field} is {} bits wide: {v} does not fit",
            f.width
        )));
    }
    Ok(v << f.lsb)
}

/// Bit of interrupt cause `cause` (`CQ`, `RAW_RX`, ...) in IRQ_ENABLE and IRQ_STATUS.
pub(crate) fn irq_bit(cause: &str) -> u32 {
    regs::irq_cause(cause)
        .unwrap_or_else(|| panic!("interrupt cause {cause} is in the map"))
        .mask()
}

/// Field `name` of an entry of `format`; panics naming it if the format has no such field (a
/// driver bug, as [`off`] for registers).
pub(crate) fn get(format: &Format, entry: &[u8], name: &str) -> u64 {
    format
        .get(entry, name)
        .unwrap_or_else(|| panic!("{}.{name} is in the format", format.name))
}

/// Sets field `name` of an entry of `format`, refusing a value the field cannot hold.
pub(crate) fn set(format: &Format, entry: &mut [u8], name: &str, v: u64) -> Result<()> {
    let d = format
        .field(name)
        .unwrap_or_else(|| panic!("{}.{name} is in the format", format.name));
    if !format.set(entry, name, v) {
        return Err(TransportError(format!(
            "{}.{name} is {} bits wide: {v:#x} does not fit",
            format.name, d.bits
        )));
    }
    Ok(())
}

/// One ring: queue `queue` of register block `block`.
#[derive(Clone, Debug)]
pub(crate) struct Ring {
    pub block: &'static str,
    pub queue: u32,
    pub mem: DmaRegion,
    pub log_size: u32,
    /// The completion queue a work ring reports to (SIZE.CQ; 0 for other rings).
    pub cq: u32,
    pub prod: u16,
    pub cons: u16,
    /// Bytes per entry.
    pub entry: usize,
}

impl Ring {
    /// Allocates the entries of queue `queue` of `block` (2^`log_size` of `entry` bytes each)
    /// through the transport. Refuses a queue the map does not have, a size out of
    /// 2^1..=2^15 and memory that is not 4 KiB aligned (BASE_LO holds address bits 31:12).
    pub fn new(
        t: &mut (impl Transport + ?Sized),
        block: &'static str,
        queue: u32,
        log_size: u32,
        entry: usize,
    ) -> Result<Ring> {
        if regs::offset(block, "BASE_LO", Some(queue)).is_none() {
            return Err(TransportError(format!(
                "{block} has no queue {queue} in the register map"
            )));
        }
        if !(1..=MAX_LOG_SIZE).contains(&log_size) {
            return Err(TransportError(format!(
                "{} ring size 2^{log_size} out of 2^1..=2^{MAX_LOG_SIZE}",
                regs::qualified_name(block, Some(queue), "SIZE")
            )));
        }
        let mem = t.alloc(entry << log_size)?;
        if mem.addr & 0xFFF != 0 || mem.len < entry << log_size {
            return Err(TransportError(format!(
                "the transport gave {} bytes at {:#x} for a ring of {} bytes, 4 KiB aligned",
                mem.len,
                mem.addr,
                entry << log_size
            )));
        }
        Ok(Ring {
            block,
            queue,
            mem,
            log_size,
            cq: 0,
            prod: 0,
            cons: 0,
            entry,
        })
    }

    pub fn size(&self) -> u16 {
        1 << self.log_size
    }

    pub fn slot(&self, index: u16) -> usize {
        usize::from(index & (self.size() - 1))
    }

    /// Byte offset of the entry of `index` in the ring's memory.
    pub fn at(&self, index: u16) -> usize {
        self.slot(index) * self.entry
    }

    /// Entries posted and not yet consumed, as the host last saw them.
    pub fn used(&self) -> u16 {
        self.prod.wrapping_sub(self.cons)
    }

    pub fn is_full(&self) -> bool {
        self.used() == self.size()
    }

    /// This ring's register `name` (checked present when the ring was made).
    pub fn reg(&self, name: &str) -> u32 {
        off(self.block, name, Some(self.queue))
    }

    /// `block[queue]` for messages.
    pub fn name(&self) -> String {
        format!("{}[{}]", self.block, self.queue)
    }

    /// The SIZE word: LOG_SIZE, ENABLE, ARM as given, CQ.
    pub fn size_word(&self, enable: bool, arm: bool) -> Result<u32> {
        Ok(ring_field("SIZE", "LOG_SIZE", self.log_size)?
            | ring_field("SIZE", "ENABLE", u32::from(enable))?
            | ring_field("SIZE", "ARM", u32::from(arm))?
            | ring_field("SIZE", "CQ", self.cq)?)
    }

    /// Programs the ring: disabled first, then its base, both indices at the host's (the NIC
    /// writes its index only while the ring is enabled, and its registers survive resets),
    /// then SIZE with ENABLE (and ARM if asked).
    pub fn program(&self, t: &mut (impl Transport + ?Sized), arm: bool) -> Result<()> {
        let size = self.size_word(true, arm)?;
        t.write32(self.reg("SIZE"), 0)?;
        t.write32(self.reg("BASE_LO"), self.mem.addr as u32)?;
        t.write32(self.reg("BASE_HI"), (self.mem.addr >> 32) as u32)?;
        t.write32(self.reg("PROD"), u32::from(self.prod))?;
        t.write32(self.reg("CONS"), u32::from(self.cons))?;
        t.write32(self.reg("SIZE"), size)
    }

    /// Rewrites SIZE with ARM: the next completion raises the interrupt (the NIC clears ARM
    /// when it does).
    pub fn arm(&self, t: &mut (impl Transport + ?Sized)) -> Result<()> {
        t.write32(self.reg("SIZE"), self.size_word(true, true)?)
    }

    /// Work rings: reads the device's consumer index, refusing (counted in `errors.bad_index`)
    /// one outside what was posted: it must lie between the host's last view and the producer.
    pub fn refresh_cons(
        &mut self,
        t: &mut (impl Transport + ?Sized),
        errors: &mut DeviceErrors,
    ) -> Result<()> {
        let raw = t.read32(self.reg("CONS"))?;
        let c = raw as u16;
        let done = c.wrapping_sub(self.cons);
        if raw >> 16 != 0 || done > self.used() {
            errors.bad_index += 1;
            return Err(TransportError(format!(
                "device wrote {}.CONS {raw}, outside {}..={}",
                self.name(),
                self.cons,
                self.prod
            )));
        }
        self.cons = c;
        Ok(())
    }

    /// The phase a new entry at the consumer's slot has: 1 on the first pass, then alternating.
    pub fn phase(&self) -> u64 {
        u64::from((self.cons >> self.log_size) & 1 == 0)
    }

    /// Completion rings: reads the entry at the consumer's slot into `entry` if it is new (its
    /// PHASE field is this pass's). The phase is read first and the rest after it, so no field
    /// is read from before the device's write of the entry.
    pub fn read_completion(
        &self,
        t: &mut (impl Transport + ?Sized),
        format: &Format,
        entry: &mut [u8],
    ) -> Result<bool> {
        assert_eq!(entry.len(), self.entry, "{} entries", format.name);
        let phase = format
            .field("PHASE")
            .unwrap_or_else(|| panic!("{}.PHASE is in the format", format.name));
        let at = self.at(self.cons);
        let b = usize::from(phase.byte);
        t.read_mem(&self.mem, at + b, &mut entry[b..=b])?;
        if desc::get(entry, phase) != self.phase() {
            return Ok(false);
        }
        t.read_mem(&self.mem, at, entry)?;
        Ok(true)
    }
}
