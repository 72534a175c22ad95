//! Driving the RGMII MAC (`rnic_hw::rgmii_mac::RgmiiMac`): its ports as plain values, the
//! same two simulations behind one trait (rust-hdl's simulator and Verilator), a lock-step
//! runner that compares every output at every clock phase, and a bench that sends frames
//! into the transmit stream, decodes what appears on the RGMII pins, and plays wire frames
//! into the receive pins.
//!
//! One clock drives both MAC domains (`rx_clk`, `tx_clk`, `tx_clk90`). A cycle has four
//! evaluations: inputs set with the clock low; the rising edge; the falling-edge nibble set
//! with the clock high; the falling edge. RGMII bits 3:0 (and DV / EN) travel on the rising
//! edge, bits 7:4 (and DV^ER / EN^ER) on the falling edge.

use std::collections::VecDeque;
use std::fmt;

use rust_hdl::prelude::*;

use rnic_hw::rgmii_mac::RgmiiMac;

use crate::axis::{Beat, Rng, beats};
use crate::verilated::{Port, Verilated};

/// Inputs of the MAC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MacIn {
    pub reset: bool,
    pub rxd: u8,
    pub rx_ctl: bool,
    pub m_tready: bool,
    pub s_tdata: u64,
    pub s_tkeep: u8,
    pub s_tlast: bool,
    pub s_tuser: bool,
    pub s_tvalid: bool,
}

/// Outputs of the MAC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MacOut {
    pub m_tdata: u64,
    pub m_tkeep: u8,
    pub m_tlast: bool,
    pub m_tvalid: bool,
    pub rx_good: bool,
    pub rx_dropped: bool,
    pub rx_good_count: u16,
    pub rx_dropped_count: u16,
    pub link_up: bool,
    pub s_tready: bool,
    pub txd: u8,
    pub tx_ctl: bool,
    pub txc: bool,
    pub tx_sent: bool,
}

impl MacOut {
    /// (port name, value) pairs, for mismatch reports.
    pub fn fields(&self) -> [(&'static str, u64); 14] {
        [
            ("m_axis_tdata", self.m_tdata),
            ("m_axis_tkeep", u64::from(self.m_tkeep)),
            ("m_axis_tlast", u64::from(self.m_tlast)),
            ("m_axis_tvalid", u64::from(self.m_tvalid)),
            ("rx_good", u64::from(self.rx_good)),
            ("rx_dropped", u64::from(self.rx_dropped)),
            ("rx_good_count", u64::from(self.rx_good_count)),
            ("rx_dropped_count", u64::from(self.rx_dropped_count)),
            ("link_up", u64::from(self.link_up)),
            ("s_axis_tready", u64::from(self.s_tready)),
            ("rgmii_txd", u64::from(self.txd)),
            ("rgmii_tx_ctl", u64::from(self.tx_ctl)),
            ("rgmii_txc", u64::from(self.txc)),
            ("tx_sent", u64::from(self.tx_sent)),
        ]
    }
}

/// A simulation of the MAC: apply inputs and a clock level, get the settled outputs.
pub trait MacDut {
    fn apply(&mut self, clock: bool, i: &MacIn) -> MacOut;
}

/// The MAC in rust-hdl's simulator.
pub struct HdlMac {
    pub uut: RgmiiMac,
}

impl HdlMac {
    pub fn new() -> Self {
        let mut uut = RgmiiMac::new();
        uut.connect_all();
        HdlMac { uut }
    }
}

impl Default for HdlMac {
    fn default() -> Self {
        Self::new()
    }
}

impl MacDut for HdlMac {
    fn apply(&mut self, clock: bool, i: &MacIn) -> MacOut {
        let u = &mut self.uut;
        u.rx_clk.next = clock.into();
        u.tx_clk.next = clock.into();
        u.tx_clk90.next = clock.into();
        u.rx_reset.next = i.reset;
        u.tx_reset.next = i.reset;
        u.rgmii_rxd.next = bits::<4>(u64::from(i.rxd));
        u.rgmii_rx_ctl.next = i.rx_ctl;
        u.m_axis_tready.next = i.m_tready;
        u.s_axis_tdata.next = bits::<64>(i.s_tdata);
        u.s_axis_tkeep.next = bits::<8>(u64::from(i.s_tkeep));
        u.s_axis_tlast.next = i.s_tlast;
        u.s_axis_tuser.next = i.s_tuser;
        u.s_axis_tvalid.next = i.s_tvalid;
        assert!(simulate(u, 1000), "rust-hdl model did not settle");
        MacOut {
            m_tdata: u.m_axis_tdata.val().to_u64(),
            m_tkeep: u.m_axis_tkeep.val().to_u64() as u8,
            m_tlast: u.m_axis_tlast.val(),
            m_tvalid: u.m_axis_tvalid.val(),
            rx_good: u.rx_good.val(),
            rx_dropped: u.rx_dropped.val(),
            rx_good_count: u.rx_good_count.val().to_u64() as u16,
            rx_dropped_count: u.rx_dropped_count.val().to_u64() as u16,
            link_up: u.link_up.val(),
            s_tready: u.s_axis_tready.val(),
            txd: u.rgmii_txd.val().to_u64() as u8,
            tx_ctl: u.rgmii_tx_ctl.val(),
            txc: u.rgmii_txc.val(),
            tx_sent: u.tx_sent.val(),
        }
    }
}

const IN_PORTS: [&str; 12] = [
    "rx_clk",
    "tx_clk",
    "tx_clk90",
    "rx_reset",
    "tx_reset",
    "rgmii_rxd",
    "rgmii_rx_ctl",
    "m_axis_tready",
    "s_axis_tdata",
    "s_axis_tkeep",
    "s_axis_tlast",
    "s_axis_tuser",
];
const OUT_PORTS: [&str; 14] = [
    "m_axis_tdata",
    "m_axis_tkeep",
    "m_axis_tlast",
    "m_axis_tvalid",
    "rx_good",
    "rx_dropped",
    "rx_good_count",
    "rx_dropped_count",
    "link_up",
    "s_axis_tready",
    "rgmii_txd",
    "rgmii_tx_ctl",
    "rgmii_txc",
    "tx_sent",
];

/// The MAC under Verilator (top `rgmii_mac`).
pub struct VerilatedMac {
    pub model: Verilated,
    ins: Vec<Port>,
    s_tvalid: Port,
    outs: Vec<Port>,
}

impl VerilatedMac {
    pub fn new() -> Result<Self, String> {
        let model = Verilated::new("rgmii_mac").ok_or("no verilated top rgmii_mac")?;
        let ins = IN_PORTS
            .iter()
            .map(|n| model.port(n))
            .collect::<Result<Vec<_>, _>>()?;
        let outs = OUT_PORTS
            .iter()
            .map(|n| model.port(n))
            .collect::<Result<Vec<_>, _>>()?;
        let s_tvalid = model.port("s_axis_tvalid")?;
        let mut m = VerilatedMac {
            model,
            ins,
            s_tvalid,
            outs,
        };
        // Evaluate once with the clock low, or the first rising edge is missed.
        m.apply(false, &MacIn::default());
        Ok(m)
    }
}

impl MacDut for VerilatedMac {
    fn apply(&mut self, clock: bool, i: &MacIn) -> MacOut {
        let p = &self.ins;
        let m = &mut self.model;
        let c = u64::from(clock);
        m.set(p[0], c);
        m.set(p[1], c);
        m.set(p[2], c);
        m.set(p[3], u64::from(i.reset));
        m.set(p[4], u64::from(i.reset));
        m.set(p[5], u64::from(i.rxd & 15));
        m.set(p[6], u64::from(i.rx_ctl));
        m.set(p[7], u64::from(i.m_tready));
        m.set(p[8], i.s_tdata);
        m.set(p[9], u64::from(i.s_tkeep));
        m.set(p[10], u64::from(i.s_tlast));
        m.set(p[11], u64::from(i.s_tuser));
        m.set(self.s_tvalid, u64::from(i.s_tvalid));
        m.eval();
        let o = &self.outs;
        MacOut {
            m_tdata: m.get(o[0]),
            m_tkeep: m.get(o[1]) as u8,
            m_tlast: m.get(o[2]) != 0,
            m_tvalid: m.get(o[3]) != 0,
            rx_good: m.get(o[4]) != 0,
            rx_dropped: m.get(o[5]) != 0,
            rx_good_count: m.get(o[6]) as u16,
            rx_dropped_count: m.get(o[7]) as u16,
            link_up: m.get(o[8]) != 0,
            s_tready: m.get(o[9]) != 0,
            txd: m.get(o[10]) as u8,
            tx_ctl: m.get(o[11]) != 0,
            txc: m.get(o[12]) != 0,
            tx_sent: m.get(o[13]) != 0,
        }
    }
}

/// The first difference between two simulations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub cycle: u64,
    /// Which of the four evaluations of the cycle.
    pub phase: &'static str,
    pub port: &'static str,
    pub a: u64,
    pub b: u64,
    pub seed: u64,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cycle {} ({}): {} differs: rust-hdl {:#x}, Verilator {:#x} (replay with seed {:#x})",
            self.cycle, self.phase, self.port, self.a, self.b, self.seed
        )
    }
}

impl std::error::Error for Mismatch {}

/// The in-band status nibble a PHY shows between frames: link up, 1000 Mb/s, full duplex.
pub const INBAND_LINK_UP: u8 = 0b1101;

/// One byte on the RGMII receive pins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireByte {
    pub data: u8,
    pub dv: bool,
    pub er: bool,
}

/// A frame seen on the transmit pins: every byte while TX_EN was high, and the idle bytes
/// before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxWireFrame {
    pub bytes: Vec<u8>,
    /// Bytes sent with TX_ER.
    pub errors: usize,
    /// Idle bytes since the previous frame (`None` for the first).
    pub gap_before: Option<usize>,
}

/// Decodes the RGMII transmit pins one byte time at a time: the pins while the clock is high
/// (low nibble, TX_EN) and while it is low (high nibble, TX_EN ^ TX_ER).
#[derive(Clone, Debug, Default)]
pub struct TxDecoder {
    cur: Option<TxWireFrame>,
    idle_run: Option<usize>,
}

impl TxDecoder {
    /// Takes one byte time, `(txd, tx_ctl)` high then low; a frame that ended is returned.
    pub fn step(&mut self, hi: (u8, bool), lo: (u8, bool)) -> Option<TxWireFrame> {
        let (en, er) = (hi.1, hi.1 ^ lo.1);
        if en {
            let idle_run = self.idle_run;
            let f = self.cur.get_or_insert_with(|| TxWireFrame {
                bytes: Vec::new(),
                errors: 0,
                gap_before: idle_run,
            });
            f.bytes.push((hi.0 & 15) | (lo.0 << 4));
            f.errors += usize::from(er);
            self.idle_run = Some(0);
            None
        } else {
            self.idle_run = self.idle_run.map(|g| g + 1);
            self.cur.take()
        }
    }

    /// Whether TX_EN is low (no frame under way).
    pub fn idle(&self) -> bool {
        self.cur.is_none()
    }
}

/// What a bench run produced.
#[derive(Clone, Debug, Default)]
pub struct BenchResult {
    pub cycles: u64,
    /// Frames on the transmit pins.
    pub tx_wire: Vec<TxWireFrame>,
    /// Frames out of the receive stream.
    pub rx_frames: Vec<Vec<u8>>,
    pub rx_good_pulses: usize,
    pub rx_dropped_pulses: usize,
    pub tx_sent_pulses: usize,
    pub last: MacOut,
    /// Stream protocol problems on the receive output.
    pub errors: Vec<String>,
}

/// Stimulus of a bench run.
#[derive(Clone, Debug, Default)]
pub struct MacStimulus {
    /// Frames for the transmit stream, with the tuser of their last beat.
    pub tx_frames: Vec<(Vec<u8>, bool)>,
    /// Wire frames (preamble, SFD, data, FCS) for the receive pins, sent with a 12-byte gap.
    pub rx_wire: Vec<Vec<WireByte>>,
    pub seed: u64,
    /// Chance of an idle cycle before a transmit beat (only between frames unless
    /// `idle_inside`).
    pub idle: f64,
    /// Allow idles inside a frame (they can underrun the MAC).
    pub idle_inside: bool,
    /// Chance that the receive sink refuses a beat.
    pub stall: f64,
    /// Feed every frame that appears on the transmit pins back into the receive pins, after
    /// `corrupt` had its say (it gets the frame index and the wire bytes).
    pub loopback: bool,
}

/// The Ethernet FCS of `data`: CRC-32 as zlib computes it (IEEE 802.3, reflected, initial and
/// final XOR with ones), by crc32fast, the same implementation the software model uses and one
/// apart from the hardware's XOR matrices.
pub fn zlib_crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// The wire form of a frame: 7 preamble bytes, the SFD, the data, the FCS (zlib CRC-32, least
/// significant byte first).
pub fn wire_frame(data: &[u8]) -> Vec<u8> {
    let mut w = vec![0x55u8; 7];
    w.push(0xD5);
    w.extend_from_slice(data);
    w.extend_from_slice(&zlib_crc32(data).to_le_bytes());
    w
}

/// Runs `a` (and `b` in lock-step when given) on a stimulus. `corrupt(i, wire)` may change
/// looped-back frame `i` before it enters the receive pins.
pub fn run_bench(
    a: &mut dyn MacDut,
    mut b: Option<&mut dyn MacDut>,
    s: &MacStimulus,
    corrupt: &mut dyn FnMut(usize, &mut Vec<u8>),
    max_cycles: u64,
) -> Result<BenchResult, Mismatch> {
    let mut rng = Rng::new(s.seed);
    // Transmit source.
    let tx_beats: Vec<(Beat, bool)> = s
        .tx_frames
        .iter()
        .flat_map(|(f, u)| {
            beats(f, u64::from(*u))
                .into_iter()
                .enumerate()
                .map(|(k, b)| (b, k == 0))
        })
        .collect();
    let mut next_beat = 0usize;
    let mut presenting = false;
    // Receive pins: a queue of bytes (idles included).
    let mut rx_queue: VecDeque<WireByte> = VecDeque::new();
    let idle = WireByte {
        data: INBAND_LINK_UP,
        dv: false,
        er: false,
    };
    for w in &s.rx_wire {
        rx_queue.extend(std::iter::repeat_n(idle, 12));
        rx_queue.extend(w.iter().copied());
    }
    let mut looped = 0usize;
    // Transmit pins decoder.
    let mut tx_pins = TxDecoder::default();
    let mut res = BenchResult::default();
    let mut rx_cur: Vec<u8> = Vec::new();
    let want_tx = s.tx_frames.len();
    let want_rx_wire = s.rx_wire.len() + if s.loopback { want_tx } else { 0 };
    let mut cycle = 0u64;
    let mut quiet = 0u64;
    let mut last = MacOut::default();

    let mut step = |clock: bool,
                    i: &MacIn,
                    phase: &'static str,
                    cycle: u64,
                    b: &mut Option<&mut dyn MacDut>|
     -> Result<MacOut, Mismatch> {
        let oa = a.apply(clock, i);
        if let Some(b) = b.as_deref_mut() {
            let ob = b.apply(clock, i);
            for ((port, va), (_, vb)) in oa.fields().into_iter().zip(ob.fields()) {
                if va != vb {
                    return Err(Mismatch {
                        cycle,
                        phase,
                        port,
                        a: va,
                        b: vb,
                        seed: s.seed,
                    });
                }
            }
        }
        Ok(oa)
    };

    while cycle < max_cycles {
        let reset = cycle < 4;
        let mut i = MacIn {
            reset,
            ..Default::default()
        };
        // Transmit stream.
        if !reset && !presenting && next_beat < tx_beats.len() {
            let first = tx_beats[next_beat].1;
            let may_idle = first || s.idle_inside;
            if !(may_idle && rng.chance(s.idle)) {
                presenting = true;
            }
        }
        if presenting {
            let (bt, _) = tx_beats[next_beat];
            i.s_tvalid = true;
            i.s_tdata = bt.tdata;
            i.s_tkeep = bt.tkeep;
            i.s_tlast = bt.tlast;
            i.s_tuser = bt.tuser != 0;
        }
        i.m_tready = !rng.chance(s.stall);
        let wb = if reset {
            idle
        } else {
            rx_queue.pop_front().unwrap_or(idle)
        };
        i.rxd = wb.data & 15;
        i.rx_ctl = wb.dv;
        let o = step(false, &i, "inputs, clock low", cycle, &mut b)?;
        // Handshakes, decided on the settled outputs before the edge.
        let tx_take = presenting && o.s_tready;
        let rx_take = o.m_tvalid && i.m_tready;
        if rx_take && !reset {
            let n = o.m_tkeep.trailing_ones() as usize;
            if o.m_tkeep.count_ones() as usize != n || n == 0 || (!o.m_tlast && n != 8) {
                res.errors
                    .push(format!("cycle {cycle}: m_axis_tkeep {:#04x}", o.m_tkeep));
            }
            rx_cur.extend_from_slice(&o.m_tdata.to_le_bytes()[..n]);
            if o.m_tlast {
                res.rx_frames.push(std::mem::take(&mut rx_cur));
            }
        }
        if !reset {
            res.rx_good_pulses += usize::from(o.rx_good);
            res.rx_dropped_pulses += usize::from(o.rx_dropped);
            res.tx_sent_pulses += usize::from(o.tx_sent);
        }
        let hi = step(true, &i, "rising edge", cycle, &mut b)?;
        let mut i2 = i;
        i2.rxd = wb.data >> 4;
        i2.rx_ctl = wb.dv ^ wb.er;
        step(true, &i2, "falling-edge data, clock high", cycle, &mut b)?;
        let lo = step(false, &i2, "falling edge", cycle, &mut b)?;
        if tx_take {
            next_beat += 1;
            presenting = false;
        }
        // Decode the transmit pins: low nibble while the clock is high.
        if let Some(f) = tx_pins.step((hi.txd, hi.tx_ctl), (lo.txd, lo.tx_ctl)) {
            if s.loopback {
                let mut w = f.bytes.clone();
                corrupt(looped, &mut w);
                looped += 1;
                rx_queue.extend(std::iter::repeat_n(idle, 12));
                rx_queue.extend(w.iter().map(|&d| WireByte {
                    data: d,
                    dv: true,
                    er: false,
                }));
            }
            res.tx_wire.push(f);
        }
        last = lo;
        cycle += 1;
        // Done when everything was sent and received and the MAC has been quiet a while.
        let all_in = next_beat >= tx_beats.len() && rx_queue.is_empty();
        let seen = res.rx_good_pulses + res.rx_dropped_pulses;
        if all_in && res.tx_wire.len() >= want_tx && seen >= want_rx_wire && !o.m_tvalid {
            quiet += 1;
            if quiet > 64 {
                break;
            }
        } else {
            quiet = 0;
        }
    }
    res.cycles = cycle;
    res.last = last;
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zlib_check_value() {
        // zlib.crc32(b"123456789") == 0xCBF43926 (the CRC-32 check value).
        assert_eq!(zlib_crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(zlib_crc32(b""), 0);
    }
}
