//! AXI-Stream source and sink models (64-bit tdata, 8-bit tkeep, tlast, tvalid, tready, tuser)
//! with random idle cycles on the source and random back-pressure on the sink.

use crate::dut::{AxisIn, AxisOut};

/// A small seeded generator (SplitMix64): the same seed replays the same run.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A random word of `bits` bits, as 64-bit words from bit 0 (the bits above it zero).
    pub fn words(&mut self, bits: usize) -> Vec<u64> {
        let mut w: Vec<u64> = (0..bits.div_ceil(64)).map(|_| self.next_u64()).collect();
        if bits % 64 != 0 {
            let last = w.len() - 1;
            w[last] &= (1u64 << (bits % 64)) - 1;
        }
        w
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p && p > 0.0
    }
}

/// One beat on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Beat {
    pub tdata: u64,
    pub tkeep: u8,
    pub tlast: bool,
    pub tuser: u64,
}

/// Splits a frame into beats: byte 0 in tdata bits 7:0, tkeep on the last beat; `tuser` on the
/// last beat.
pub fn beats(frame: &[u8], tuser: u64) -> Vec<Beat> {
    let n = frame.len().div_ceil(8).max(1);
    (0..n)
        .map(|k| {
            let chunk = frame
                .get(8 * k..(8 * k + 8).min(frame.len()))
                .unwrap_or(&[]);
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            let last = k + 1 == n;
            Beat {
                tdata: u64::from_le_bytes(w),
                tkeep: if chunk.len() == 8 {
                    0xFF
                } else {
                    (1u16 << chunk.len()) as u8 - 1
                },
                tlast: last,
                tuser: if last { tuser } else { 0 },
            }
        })
        .collect()
}

/// Feeds frames, one beat per handshake, idling at random between beats.
pub struct Source {
    beats: Vec<Beat>,
    next: usize,
    presenting: bool,
    idle: f64,
}

impl Source {
    /// `frames` with their input tuser; `idle` is the chance of an idle cycle before a beat.
    pub fn new(frames: &[(Vec<u8>, u64)], idle: f64) -> Self {
        let beats = frames.iter().flat_map(|(f, u)| beats(f, *u)).collect();
        Source {
            beats,
            next: 0,
            presenting: false,
            idle,
        }
    }

    pub fn done(&self) -> bool {
        self.next >= self.beats.len()
    }

    pub fn total_beats(&self) -> usize {
        self.beats.len()
    }

    /// Fills the stream inputs for this cycle.
    pub fn drive(&mut self, rng: &mut Rng, i: &mut AxisIn) {
        if !self.presenting && !self.done() && !rng.chance(self.idle) {
            self.presenting = true;
        }
        i.tvalid = self.presenting;
        let b = self.beats.get(self.next).copied().unwrap_or(Beat {
            tdata: 0,
            tkeep: 0,
            tlast: false,
            tuser: 0,
        });
        if self.presenting {
            i.tdata = b.tdata;
            i.tkeep = b.tkeep;
            i.tlast = b.tlast;
            i.tuser = b.tuser;
        } else {
            i.tdata = 0;
            i.tkeep = 0;
            i.tlast = false;
            i.tuser = 0;
        }
    }

    /// Called after the outputs settled: the beat moves on if it was taken.
    pub fn after(&mut self, i: &AxisIn, o: &AxisOut) {
        if i.tvalid && o.s_tready {
            self.next += 1;
            self.presenting = false;
        }
    }
}

/// A frame collected by the sink, with the tuser of its last beat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutFrame {
    pub data: Vec<u8>,
    pub tuser: u64,
}

/// Takes beats, applying random back-pressure, and collects frames.
pub struct Sink {
    stall: f64,
    current: Vec<u8>,
    pub frames: Vec<OutFrame>,
    pub beats: usize,
    /// A protocol problem seen on the output (a tkeep hole, tkeep empty).
    pub errors: Vec<String>,
}

impl Sink {
    pub fn new(stall: f64) -> Self {
        Sink {
            stall,
            current: Vec::new(),
            frames: Vec::new(),
            beats: 0,
            errors: Vec::new(),
        }
    }

    pub fn drive(&mut self, rng: &mut Rng, i: &mut AxisIn) {
        i.m_tready = !rng.chance(self.stall);
    }

    pub fn after(&mut self, cycle: u64, i: &AxisIn, o: &AxisOut) {
        if !(o.tvalid && i.m_tready) {
            return;
        }
        self.beats += 1;
        let n = o.tkeep.trailing_ones() as usize;
        if o.tkeep.count_ones() as usize != n || n == 0 || (!o.tlast && n != 8) {
            self.errors.push(format!(
                "cycle {cycle}: tkeep {:#04x} (last {})",
                o.tkeep, o.tlast
            ));
        }
        self.current.extend_from_slice(&o.tdata.to_le_bytes()[..n]);
        if o.tlast {
            self.frames.push(OutFrame {
                data: std::mem::take(&mut self.current),
                tuser: o.tuser,
            });
        }
    }
}
