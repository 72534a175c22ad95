//! Host memory as the simulated DMA port sees it: buffers at device addresses, read and
//! written by the engines' benches ([`crate::responder_sim`], [`crate::requester_sim`]).

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
