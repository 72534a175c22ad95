//! Memory regions: a table of MRs keyed `index << 8 | tag` (rxe's scheme; the tag changes when
//! a slot is reused, so a stale key fails), each with its protection domain, access rights,
//! virtual address range and the host bytes behind it. The one access check every local and
//! remote access goes through lives here.

use std::collections::BTreeMap;
use std::fmt;

use crate::verbs::Access;

/// A protection domain handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pd(pub u32);

/// What the caller asks of a new MR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MrSpec {
    pub pd: Pd,
    /// The virtual address the region is registered at.
    pub va: u64,
    pub len: u64,
    pub access: Access,
    /// A key to register under (index and tag), for replaying a capture's keys; `None` picks
    /// the next free index.
    pub key: Option<u32>,
}

/// A registered region as its owner sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MrInfo {
    pub lkey: u32,
    pub rkey: u32,
    pub va: u64,
    pub len: u64,
    pub pd: Pd,
    pub access: Access,
}

/// Why an access was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessError {
    /// No MR at the key's index, or a different tag.
    BadKey(u32),
    /// The MR belongs to another protection domain.
    WrongPd { key: u32, mr_pd: Pd, qp_pd: Pd },
    /// The MR does not grant the access.
    NoRight { key: u32, need: Access, has: Access },
    /// [va, va + len) is not inside the MR.
    OutOfBounds { key: u32, va: u64, len: u64 },
}

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AccessError::BadKey(k) => write!(f, "no memory region has key {k:#010x}"),
            AccessError::WrongPd { key, mr_pd, qp_pd } => write!(
                f,
                "key {key:#010x} is in PD {}, the QP in PD {}",
                mr_pd.0, qp_pd.0
            ),
            AccessError::NoRight { key, need, has } => {
                write!(f, "key {key:#010x} allows {has}, not {need}")
            }
            AccessError::OutOfBounds { key, va, len } => write!(
                f,
                "{len} bytes at {va:#x} are outside the region of key {key:#010x}"
            ),
        }
    }
}

/// A registration error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegError {
    KeyInUse(u32),
    IndexOutOfRange(u32),
    NoFreeSlot,
    TooLarge(u64),
    Overflow,
    /// REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE (ibv_reg_mr refuses it).
    RemoteWriteNeedsLocalWrite,
}

impl fmt::Display for RegError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegError::KeyInUse(k) => write!(f, "key {k:#010x}: its index is in use"),
            RegError::IndexOutOfRange(k) => {
                write!(f, "key {k:#010x}: index beyond the MR table")
            }
            RegError::NoFreeSlot => write!(f, "the MR table is full"),
            RegError::TooLarge(n) => write!(f, "a region of {n} bytes is too large to model"),
            RegError::Overflow => write!(f, "va + len overflows"),
            RegError::RemoteWriteNeedsLocalWrite => {
                write!(f, "REMOTE_WRITE or REMOTE_ATOMIC needs LOCAL_WRITE")
            }
        }
    }
}

struct Mr {
    key: u32,
    pd: Pd,
    access: Access,
    va: u64,
    data: Vec<u8>,
}

/// The MR table: `entries` slots, held sparsely (a replayed capture's keys may use any index).
pub struct MrTable {
    entries: usize,
    slots: BTreeMap<usize, Mr>,
    /// Next tag per slot that has been used.
    tags: BTreeMap<usize, u8>,
}

/// Largest region the model backs with memory.
pub const MAX_MR_LEN: u64 = 1 << 30;

impl MrTable {
    pub fn new(entries: usize) -> MrTable {
        MrTable {
            entries,
            slots: BTreeMap::new(),
            tags: BTreeMap::new(),
        }
    }

    pub fn register(&mut self, spec: MrSpec) -> Result<MrInfo, RegError> {
        if spec.len > MAX_MR_LEN {
            return Err(RegError::TooLarge(spec.len));
        }
        spec.va.checked_add(spec.len).ok_or(RegError::Overflow)?;
        if spec
            .access
            .intersects(Access::REMOTE_WRITE | Access::REMOTE_ATOMIC)
            && !spec.access.contains(Access::LOCAL_WRITE)
        {
            return Err(RegError::RemoteWriteNeedsLocalWrite);
        }
        let key = match spec.key {
            Some(k) => {
                let idx = (k >> 8) as usize;
                if idx >= self.entries {
                    return Err(RegError::IndexOutOfRange(k));
                }
                if self.slots.contains_key(&idx) {
                    return Err(RegError::KeyInUse(k));
                }
                k
            }
            None => {
                // Index 0 is never used, so key 0 is never valid.
                let idx = (1..self.entries)
                    .find(|i| !self.slots.contains_key(i))
                    .ok_or(RegError::NoFreeSlot)?;
                (idx as u32) << 8 | u32::from(self.tags.get(&idx).copied().unwrap_or(0))
            }
        };
        let idx = (key >> 8) as usize;
        self.tags.insert(idx, (key as u8).wrapping_add(1));
        self.slots.insert(
            idx,
            Mr {
                key,
                pd: spec.pd,
                access: spec.access,
                va: spec.va,
                data: vec![0; spec.len as usize],
            },
        );
        Ok(MrInfo {
            lkey: key,
            rkey: key,
            va: spec.va,
            len: spec.len,
            pd: spec.pd,
            access: spec.access,
        })
    }

    /// Removes the MR of `key`; false when there is none.
    pub fn deregister(&mut self, key: u32) -> bool {
        if self.get(key).is_some() {
            self.slots.remove(&((key >> 8) as usize));
            true
        } else {
            false
        }
    }

    fn get(&self, key: u32) -> Option<&Mr> {
        self.slots
            .get(&((key >> 8) as usize))
            .filter(|m| m.key == key)
    }

    fn get_mut(&mut self, key: u32) -> Option<&mut Mr> {
        self.slots
            .get_mut(&((key >> 8) as usize))
            .filter(|m| m.key == key)
    }

    /// True when an MR of `pd` is registered.
    pub fn uses_pd(&self, pd: Pd) -> bool {
        self.slots.values().any(|m| m.pd == pd)
    }

    pub fn info(&self, key: u32) -> Option<MrInfo> {
        self.get(key).map(|m| MrInfo {
            lkey: m.key,
            rkey: m.key,
            va: m.va,
            len: m.data.len() as u64,
            pd: m.pd,
            access: m.access,
        })
    }

    /// The check of transport-engine.md: key index and tag, PD, access, bounds. Returns the
    /// offset of `va` in the region. `need` NONE means local read (always allowed).
    pub fn check(
        &self,
        key: u32,
        pd: Pd,
        va: u64,
        len: u64,
        need: Access,
    ) -> Result<usize, AccessError> {
        let m = self.get(key).ok_or(AccessError::BadKey(key))?;
        if m.pd != pd {
            return Err(AccessError::WrongPd {
                key,
                mr_pd: m.pd,
                qp_pd: pd,
            });
        }
        if !m.access.contains(need) {
            return Err(AccessError::NoRight {
                key,
                need,
                has: m.access,
            });
        }
        let end = va.checked_add(len);
        let mr_end = m.va + m.data.len() as u64;
        if va < m.va || end.is_none_or(|e| e > mr_end) {
            return Err(AccessError::OutOfBounds { key, va, len });
        }
        Ok((va - m.va) as usize)
    }

    /// Bytes at `offset` of the MR (after a successful check).
    pub fn read(&self, key: u32, offset: usize, len: usize) -> &[u8] {
        &self.get(key).expect("checked key").data[offset..offset + len]
    }

    pub fn write(&mut self, key: u32, offset: usize, bytes: &[u8]) {
        self.get_mut(key).expect("checked key").data[offset..offset + bytes.len()]
            .copy_from_slice(bytes);
    }

    /// The whole region's bytes (for host programs and tests).
    pub fn bytes(&self, key: u32) -> Option<&[u8]> {
        self.get(key).map(|m| &m.data[..])
    }

    pub fn bytes_mut(&mut self, key: u32) -> Option<&mut [u8]> {
        self.get_mut(key).map(|m| &mut m.data[..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(access: Access) -> MrSpec {
        MrSpec {
            pd: Pd(1),
            va: 0x1000,
            len: 64,
            access,
            key: None,
        }
    }

    #[test]
    fn keys_carry_a_tag_that_changes_on_reuse() {
        let mut t = MrTable::new(4);
        let a = t.register(spec(Access::LOCAL_WRITE)).unwrap();
        assert_eq!(a.lkey, 0x100);
        assert!(t.deregister(a.lkey));
        let b = t.register(spec(Access::LOCAL_WRITE)).unwrap();
        assert_eq!(b.lkey, 0x101);
        assert_eq!(
            t.check(a.lkey, Pd(1), 0x1000, 1, Access::NONE),
            Err(AccessError::BadKey(0x100))
        );
    }

    #[test]
    fn the_check_covers_pd_rights_and_bounds() {
        let mut t = MrTable::new(4);
        let k = t
            .register(spec(Access::LOCAL_WRITE | Access::REMOTE_READ))
            .unwrap()
            .rkey;
        assert_eq!(t.check(k, Pd(1), 0x1000, 64, Access::REMOTE_READ), Ok(0));
        assert_eq!(t.check(k, Pd(1), 0x1010, 0, Access::REMOTE_READ), Ok(16));
        assert!(matches!(
            t.check(k, Pd(2), 0x1000, 1, Access::REMOTE_READ),
            Err(AccessError::WrongPd { .. })
        ));
        assert!(matches!(
            t.check(k, Pd(1), 0x1000, 1, Access::REMOTE_WRITE),
            Err(AccessError::NoRight { .. })
        ));
        for (va, len) in [(0xFFF, 1), (0x1000, 65), (0x1040, 1), (u64::MAX, 2)] {
            assert!(matches!(
                t.check(k, Pd(1), va, len, Access::REMOTE_READ),
                Err(AccessError::OutOfBounds { .. })
            ));
        }
        assert_eq!(
            t.register(spec(Access::REMOTE_WRITE)),
            Err(RegError::RemoteWriteNeedsLocalWrite)
        );
    }
}
