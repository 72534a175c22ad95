//! The device's registers by name (`block.NAME`, `block[queue].NAME`, as the register map
//! and `rnic regs doc` spell them), the identity check, and a dump of every register.

use rnic_regmap::regs;

use crate::transport::{Result, Transport, TransportError};

/// A register's offset from its name: `block.NAME` or `block[queue].NAME`.
pub fn reg_offset(name: &str) -> Result<u32> {
    let bad = || {
        TransportError(format!(
            "no register {name} (write block.NAME or block[q].NAME)"
        ))
    };
    let (block, reg) = name.split_once('.').ok_or_else(bad)?;
    let (block, queue) = match block.split_once('[') {
        Some((b, q)) => {
            let q = q.strip_suffix(']').ok_or_else(bad)?;
            (b, Some(q.parse::<u32>().map_err(|_| bad())?))
        }
        None => (block, None),
    };
    regs::offset(block, reg, queue).ok_or_else(bad)
}

/// A register the map is known to have; panics naming it if not (a driver bug).
pub(crate) fn off(block: &str, name: &str, q: Option<u32>) -> u32 {
    regs::offset(block, name, q).unwrap_or_else(|| panic!("{block}.{name} is in the map"))
}

/// Refuses a device whose ID block does not say "RNIC".
pub fn check_magic(t: &mut (impl Transport + ?Sized)) -> Result<()> {
    let magic = t.read32(off("id", "MAGIC", None))?;
    if magic != regs::MAGIC {
        return Err(TransportError(format!(
            "ID.MAGIC reads {magic:#010x}, not {:#010x}: not an rnic device",
            regs::MAGIC
        )));
    }
    Ok(())
}

/// Pending interrupt causes (IRQ_STATUS), cleared (it is write 1 to clear).
pub fn take_irq_status(t: &mut (impl Transport + ?Sized)) -> Result<u32> {
    let at = off("ctrl", "IRQ_STATUS", None);
    let v = t.read32(at)?;
    t.write32(at, v)?;
    Ok(v)
}

/// Every register of the map that the device's ID block says it has, by name.
pub fn dump(t: &mut dyn Transport) -> Result<Vec<(String, u32)>> {
    check_magic(t)?;
    let build = regs::Build {
        features: t.read32(off("id", "FEATURES", None))?,
        qps: t.read32(off("id", "NUM_QPS", None))?,
        mrs: t.read32(off("id", "NUM_MRS", None))?,
        cqs: t.read32(off("id", "NUM_CQS", None))?,
        clock_khz: t.read32(off("id", "CLOCK_KHZ", None))?,
        git_hash: t.read32(off("id", "GIT_HASH", None))?,
        build_date: t.read32(off("id", "BUILD_DATE", None))?,
    };
    let mut out = Vec::new();
    for (addr, b, q, r) in build.registers() {
        if r.access == regs::Access::Wo {
            continue;
        }
        out.push((regs::qualified_name(b.name, q, r.name), t.read32(addr)?));
    }
    Ok(out)
}
