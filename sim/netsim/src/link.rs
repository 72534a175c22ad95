//! Links: one direction of a cable, with a bandwidth, a propagation delay and seeded faults
//! (loss, reordering by extra delay, duplication, corruption of one bit).

use crate::event::Time;
use crate::rng::Rng;

/// How a link behaves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkConfig {
    /// Bits per second.
    pub bandwidth_bps: u64,
    /// Propagation delay, nanoseconds.
    pub delay_ns: u64,
    /// Probability that a frame is lost.
    pub loss: f64,
    /// Probability that a frame is held back by `reorder_delay_ns`, so that later frames
    /// overtake it.
    pub reorder: f64,
    /// Extra delay of a reordered frame, nanoseconds.
    pub reorder_delay_ns: u64,
    /// Probability that a frame arrives twice.
    pub duplicate: f64,
    /// Probability that one bit of a frame's UDP payload (BTH onwards, outside the bits the
    /// ICRC masks) is flipped, so that the receiver's ICRC check fails. A duplicate of a
    /// corrupted frame carries the same flip.
    pub corrupt: f64,
}

impl LinkConfig {
    /// A fault-free link.
    pub fn new(bandwidth_bps: u64, delay_ns: u64) -> Self {
        LinkConfig {
            bandwidth_bps,
            delay_ns,
            loss: 0.0,
            reorder: 0.0,
            reorder_delay_ns: 0,
            duplicate: 0.0,
            corrupt: 0.0,
        }
    }
}

/// Counters of one link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Frames serialized.
    pub frames: u64,
    /// Wire bytes serialized (with FCS, preamble, gap).
    pub wire_bytes: u64,
    pub lost: u64,
    pub reordered: u64,
    pub duplicated: u64,
    /// Frames with a bit flipped.
    pub corrupted: u64,
}

/// One direction of a cable.
#[derive(Clone, Debug)]
pub struct Link {
    pub cfg: LinkConfig,
    rng: Rng,
    /// When the transmitter is free, in picoseconds (finer than the event clock so that
    /// back-to-back frames add up to the exact line rate).
    busy_until_ps: u64,
    pub stats: LinkStats,
}

/// What became of one serialized frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// Arrival time of the frame, or `None` when it was lost.
    pub first: Option<Time>,
    /// Arrival time of a duplicate, if one was made.
    pub duplicate: Option<Time>,
    /// Random bits choosing the bit to flip when the frame is corrupted (see [`corrupt`]).
    pub corrupt: Option<u64>,
}

impl Link {
    /// A link; `rng` drives its faults.
    pub fn new(cfg: LinkConfig, rng: Rng) -> Self {
        Link {
            cfg,
            rng,
            busy_until_ps: 0,
            stats: LinkStats::default(),
        }
    }

    /// Serialization time of `wire_bytes`, picoseconds.
    pub fn tx_ps(&self, wire_bytes: u64) -> u64 {
        ((u128::from(wire_bytes) * 8 * 1_000_000_000_000)
            .div_ceil(u128::from(self.cfg.bandwidth_bps.max(1)))) as u64
    }

    /// Starts serializing a frame of `wire_bytes` at `now`; `back_to_back` means it follows
    /// the previous frame without a gap (it starts when that one ended, to the picosecond).
    /// Returns the time the last bit leaves.
    pub fn start(&mut self, now: Time, back_to_back: bool, wire_bytes: u64) -> Time {
        let start = if back_to_back {
            self.busy_until_ps
        } else {
            (now * 1000).max(self.busy_until_ps)
        };
        self.busy_until_ps = start + self.tx_ps(wire_bytes);
        self.stats.frames += 1;
        self.stats.wire_bytes += wire_bytes;
        self.busy_until_ps.div_ceil(1000)
    }

    /// Decides the fate of the frame whose last bit left at `end`.
    pub fn deliver(&mut self, end: Time) -> Delivery {
        let arrive = end + self.cfg.delay_ns;
        if self.rng.chance(self.cfg.loss) {
            self.stats.lost += 1;
            return Delivery {
                first: None,
                duplicate: None,
                corrupt: None,
            };
        }
        let mut first = arrive;
        if self.rng.chance(self.cfg.reorder) {
            self.stats.reordered += 1;
            first += self.cfg.reorder_delay_ns;
        }
        let duplicate = if self.rng.chance(self.cfg.duplicate) {
            self.stats.duplicated += 1;
            Some(arrive + 1)
        } else {
            None
        };
        // Drawn last, and only when enabled, so that links without corruption see the same
        // random stream as before it existed.
        let corrupt = if self.rng.chance(self.cfg.corrupt) {
            self.stats.corrupted += 1;
            Some(self.rng.next_u64())
        } else {
            None
        };
        Delivery {
            first: Some(first),
            duplicate,
            corrupt,
        }
    }
}

/// Flips one bit of `frame` from byte `from` (the BTH: the start of the UDP payload) to the
/// end, chosen by `r`, skipping BTH byte 4 (FECN, BECN, reserved), which the ICRC masks; so
/// the ICRC of a RoCEv2 frame no longer matches. Returns the bit flipped (byte index * 8 +
/// bit), or `None` when the region is empty.
pub fn corrupt(frame: &mut [u8], from: usize, r: u64) -> Option<usize> {
    let masked = from + 4;
    let bytes = frame.len().saturating_sub(from);
    let usable = if masked < frame.len() {
        bytes - 1
    } else {
        bytes
    };
    if usable == 0 {
        return None;
    }
    let k = (r % (usable as u64 * 8)) as usize;
    let mut byte = from + k / 8;
    if byte >= masked && masked < frame.len() {
        byte += 1;
    }
    frame[byte] ^= 1 << (k % 8);
    Some(byte * 8 + k % 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_to_back_frames_add_up_exactly() {
        // 1000 frames of 1048 wire bytes at 100 Gb/s: 83.84 ns each, 83840 ns in all.
        let mut l = Link::new(LinkConfig::new(100_000_000_000, 500), Rng::new(1, 0));
        let mut end = l.start(0, false, 1048);
        for _ in 1..1000 {
            end = l.start(end, true, 1048);
        }
        assert_eq!(end, 83_840);
        assert_eq!(l.deliver(end).first, Some(84_340));
    }

    #[test]
    fn corruption_flips_one_bit_outside_the_masked_byte() {
        for r in 0..2000u64 {
            let mut f = vec![0u8; 30];
            let bit = corrupt(&mut f, 10, r.wrapping_mul(0x9E37_79B9_7F4A_7C15)).unwrap();
            let set: Vec<usize> = (0..f.len() * 8)
                .filter(|&i| f[i / 8] >> (i % 8) & 1 == 1)
                .collect();
            assert_eq!(set, [bit]);
            assert!(bit / 8 >= 10 && bit / 8 != 14, "bit {bit}");
        }
        assert_eq!(corrupt(&mut [0u8; 10], 10, 5), None);
    }

    #[test]
    fn corruption_is_counted_and_off_by_default() {
        let mut cfg = LinkConfig::new(10_000_000_000, 1000);
        let mut l = Link::new(cfg, Rng::new(3, 0));
        assert!((0..1000).all(|i| l.deliver(i).corrupt.is_none()));
        cfg.corrupt = 0.25;
        let mut l = Link::new(cfg, Rng::new(3, 0));
        let n = (0..4000)
            .filter(|&i| l.deliver(i).corrupt.is_some())
            .count() as u64;
        assert_eq!(n, l.stats.corrupted);
        // Binomial(4000, 0.25): mean 1000, sigma 27.4.
        assert!((850..1150).contains(&n), "{n}");
    }
}
