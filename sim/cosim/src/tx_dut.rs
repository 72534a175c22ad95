//! The transmit builder and the packet loopback under simulation: ports as plain values,
//! adapters for rust-hdl's simulator and Verilator, and harnesses that run traffic through one
//! or both (lock-step: every output port compared on every cycle) with random idles on the
//! inputs and random back-pressure on the outputs.

use rust_hdl::prelude::*;

use rnic_hw::header_channel::{HDR_WORDS, HeaderRecord};
use rnic_hw::header_extract::bits_from_words;
use rnic_hw::packet_loopback::PacketLoopback;
use rnic_hw::rx_parser::COUNTERS;
use rnic_hw::tx_builder::{TX_COUNTERS, TxBuilder};

use crate::axis::{Beat, Rng, beats};
use crate::packet_dut::collect;
use crate::verilated::{Port, Verilated};

/// A stream's outputs of one cycle: (tdata, tkeep, tlast, tvalid, tuser).
pub type Stream = (u64, u8, bool, bool, bool);

fn stream_ports(prefix: &'static str, s: &Stream) -> Vec<(String, Vec<u64>)> {
    vec![
        (format!("{prefix}_tdata"), vec![s.0]),
        (format!("{prefix}_tkeep"), vec![u64::from(s.1)]),
        (format!("{prefix}_tlast"), vec![u64::from(s.2)]),
        (format!("{prefix}_tvalid"), vec![u64::from(s.3)]),
        (format!("{prefix}_tuser"), vec![u64::from(s.4)]),
    ]
}

/// Names the first differing port, if any.
fn first_difference(
    a: Vec<(String, Vec<u64>)>,
    b: Vec<(String, Vec<u64>)>,
) -> Option<(String, Vec<u64>, Vec<u64>)> {
    a.into_iter()
        .zip(b)
        .find(|((_, va), (_, vb))| va != vb)
        .map(|((p, va), (_, vb))| (p, va, vb))
}

// ------------------------------------------------------------------------------------------
// The transmit builder.

/// Inputs of one cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TxIn {
    pub reset: bool,
    pub hdr_valid: bool,
    pub hdr: [u64; HDR_WORDS],
    pub tdata: u64,
    pub tkeep: u8,
    pub tlast: bool,
    pub tvalid: bool,
    pub tuser: bool,
    pub m_ready: bool,
}

/// Every output of one cycle, settled before the rising edge.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TxOut {
    pub hdr_ready: bool,
    pub s_tready: bool,
    pub m: Stream,
    pub counters: [u64; 2],
}

impl TxOut {
    fn ports(&self) -> Vec<(String, Vec<u64>)> {
        let mut v = vec![
            ("s_hdr_ready".to_string(), vec![u64::from(self.hdr_ready)]),
            ("s_axis_tready".to_string(), vec![u64::from(self.s_tready)]),
        ];
        v.extend(stream_ports("m_axis", &self.m));
        for (n, c) in TX_COUNTERS.iter().zip(self.counters) {
            v.push((n.to_string(), vec![c]));
        }
        v
    }
}

/// The builder under one simulator.
pub trait TxDut {
    fn settle(&mut self, i: &TxIn) -> TxOut;
    fn tick(&mut self);
}

/// The builder in rust-hdl's simulator.
pub struct HdlTx {
    uut: Box<TxBuilder>,
    last: TxIn,
}

impl HdlTx {
    pub fn new() -> Self {
        let mut uut = Box::new(TxBuilder::new());
        uut.connect_all();
        HdlTx {
            uut,
            last: TxIn::default(),
        }
    }

    fn drive(&mut self, clock: bool, i: &TxIn) {
        let u = &mut self.uut;
        u.clock.next = clock.into();
        u.reset.next = i.reset;
        u.s_hdr_valid.next = i.hdr_valid;
        u.s_hdr_data.next = bits_from_words(&i.hdr);
        u.s_axis_tdata.next = bits::<64>(i.tdata);
        u.s_axis_tkeep.next = bits::<8>(u64::from(i.tkeep));
        u.s_axis_tlast.next = i.tlast;
        u.s_axis_tvalid.next = i.tvalid;
        u.s_axis_tuser.next = i.tuser;
        u.m_axis_tready.next = i.m_ready;
        assert!(
            simulate(&mut *self.uut, 1000),
            "rust-hdl model did not settle"
        );
    }
}

impl Default for HdlTx {
    fn default() -> Self {
        Self::new()
    }
}

impl TxDut for HdlTx {
    fn settle(&mut self, i: &TxIn) -> TxOut {
        self.drive(false, i);
        self.last = i.clone();
        let u = &self.uut;
        TxOut {
            hdr_ready: u.s_hdr_ready.val(),
            s_tready: u.s_axis_tready.val(),
            m: (
                u.m_axis_tdata.val().to_u64(),
                u.m_axis_tkeep.val().to_u64() as u8,
                u.m_axis_tlast.val(),
                u.m_axis_tvalid.val(),
                u.m_axis_tuser.val(),
            ),
            counters: [u.cnt_frames.val().to_u64(), u.cnt_len_err.val().to_u64()],
        }
    }

    fn tick(&mut self) {
        let i = self.last.clone();
        self.drive(true, &i);
    }
}

const TX_IN: [&str; 10] = [
    "clock",
    "reset",
    "s_hdr_valid",
    "s_hdr_data",
    "s_axis_tdata",
    "s_axis_tkeep",
    "s_axis_tlast",
    "s_axis_tvalid",
    "m_axis_tready",
    "s_axis_tuser",
];

const TX_OUT: [&str; 7] = [
    "s_hdr_ready",
    "s_axis_tready",
    "m_axis_tdata",
    "m_axis_tkeep",
    "m_axis_tlast",
    "m_axis_tvalid",
    "m_axis_tuser",
];

/// The builder under Verilator (top `tx_builder`).
pub struct VerilatedTx {
    pub model: Verilated,
    inp: Vec<Port>,
    out: Vec<Port>,
}

impl VerilatedTx {
    pub fn new() -> Result<Self, String> {
        let mut model = Verilated::new("tx_builder").ok_or("no verilated top tx_builder")?;
        let inp = model.ports(&TX_IN)?;
        let names: Vec<&str> = TX_OUT.iter().chain(TX_COUNTERS.iter()).copied().collect();
        let out = model.ports(&names)?;
        model.set(inp[0], 0);
        model.eval();
        Ok(VerilatedTx { model, inp, out })
    }
}

impl TxDut for VerilatedTx {
    fn settle(&mut self, i: &TxIn) -> TxOut {
        let p = &self.inp;
        let m = &mut self.model;
        m.set(p[0], 0);
        m.set(p[1], u64::from(i.reset));
        m.set(p[2], u64::from(i.hdr_valid));
        m.set_wide(p[3], &i.hdr);
        m.set(p[4], i.tdata);
        m.set(p[5], u64::from(i.tkeep));
        m.set(p[6], u64::from(i.tlast));
        m.set(p[7], u64::from(i.tvalid));
        m.set(p[8], u64::from(i.m_ready));
        m.set(p[9], u64::from(i.tuser));
        m.eval();
        let g = |k: usize| m.get(self.out[k]);
        TxOut {
            hdr_ready: g(0) != 0,
            s_tready: g(1) != 0,
            m: (g(2), g(3) as u8, g(4) != 0, g(5) != 0, g(6) != 0),
            counters: [g(7), g(8)],
        }
    }

    fn tick(&mut self) {
        self.model.set(self.inp[0], 1);
        self.model.eval();
    }
}

/// How to drive a transmit run.
#[derive(Clone, Debug)]
pub struct TxStimulus {
    /// Header words with their payloads.
    pub items: Vec<(HeaderRecord, Vec<u8>)>,
    pub seed: u64,
    /// Chance of an idle cycle on the header and on the payload input.
    pub idle: f64,
    /// Chance of back-pressure on the output.
    pub stall: f64,
    /// Per item (none when shorter), the payload beat sent with `tuser` set: data the producer
    /// could not get, so the frame must leave marked bad.
    pub bad_beat: Vec<Option<usize>>,
}

/// What a run produced.
#[derive(Clone, Debug, Default)]
pub struct TxRun {
    /// Frames out, with their `tuser` (bad) flag.
    pub frames: Vec<(Vec<u8>, bool)>,
    pub counters: [u64; 2],
    pub cycles: u64,
    /// Cycles from the first output beat to the last, and bytes out.
    pub out_cycles: u64,
    pub out_bytes: u64,
    /// Cycles from the first header taken to the first output beat.
    pub latency: Option<u64>,
    /// Output protocol problems (tkeep holes).
    pub errors: Vec<String>,
}

const RESET_CYCLES: u64 = 2;

/// Runs `a` alone, or `a` and `b` in lock-step.
pub fn run_tx<A: TxDut, B: TxDut>(
    a: &mut A,
    mut b: Option<&mut B>,
    s: &TxStimulus,
) -> Result<TxRun, String> {
    let mut rng = Rng::new(s.seed);
    let pay: Vec<Beat> = s
        .items
        .iter()
        .enumerate()
        .filter(|(_, (_, p))| !p.is_empty())
        .flat_map(|(k, (_, p))| {
            let bad = s.bad_beat.get(k).copied().flatten();
            beats(p, 0).into_iter().enumerate().map(move |(j, mut b)| {
                b.tuser = u64::from(bad == Some(j));
                b
            })
        })
        .collect();
    let words: Vec<[u64; HDR_WORDS]> = s.items.iter().map(|(h, _)| h.pack()).collect();
    let mut r = TxRun::default();
    let (mut nh, mut np) = (0usize, 0usize);
    let (mut hp, mut pp) = (false, false);
    let mut cur = Vec::new();
    let mut first_hdr = None;
    let mut first_out = None;
    let mut last_out = 0;
    let total: usize = s.items.iter().map(|(_, p)| p.len() + 200).sum();
    let limit = total as u64 + 20_000;
    let mut cycle = 0u64;
    loop {
        let mut i = TxIn {
            reset: cycle < RESET_CYCLES,
            ..Default::default()
        };
        if !i.reset {
            if !hp && nh < words.len() && !rng.chance(s.idle) {
                hp = true;
            }
            if !pp && np < pay.len() && !rng.chance(s.idle) {
                pp = true;
            }
            if hp {
                i.hdr_valid = true;
                i.hdr = words[nh];
            }
            if pp {
                let bt = pay[np];
                i.tvalid = true;
                i.tdata = bt.tdata;
                i.tkeep = bt.tkeep;
                i.tlast = bt.tlast;
                i.tuser = bt.tuser & 1 == 1;
            }
        }
        i.m_ready = !rng.chance(s.stall);
        let oa = a.settle(&i);
        if let Some(b) = b.as_deref_mut() {
            let ob = b.settle(&i);
            if let Some((port, va, vb)) = first_difference(oa.ports(), ob.ports()) {
                return Err(format!(
                    "cycle {cycle}: {port} differs: rust-hdl {va:x?}, Verilator {vb:x?} (seed {:#x})",
                    s.seed
                ));
            }
        }
        if !i.reset {
            if i.hdr_valid && oa.hdr_ready {
                first_hdr.get_or_insert(cycle);
                nh += 1;
                hp = false;
            }
            if i.tvalid && oa.s_tready {
                np += 1;
                pp = false;
            }
            let (d, k, l, v, u) = oa.m;
            if v && i.m_ready {
                if first_out.is_none() {
                    first_out = Some(cycle);
                    r.latency = first_hdr.map(|f| cycle - f);
                }
                last_out = cycle;
                r.out_bytes += u64::from(k.count_ones());
                collect(&mut r.errors, cycle, &mut cur, d, k, l);
                if l {
                    r.frames.push((std::mem::take(&mut cur), u));
                }
            }
        }
        r.counters = oa.counters;
        a.tick();
        if let Some(b) = b.as_deref_mut() {
            b.tick();
        }
        cycle += 1;
        if r.frames.len() >= s.items.len() && nh >= words.len() || cycle > limit {
            break;
        }
    }
    r.cycles = cycle;
    r.out_cycles = first_out.map_or(0, |f| last_out - f + 1);
    Ok(r)
}

// ------------------------------------------------------------------------------------------
// The packet loopback.

/// Inputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LbIn {
    pub reset: bool,
    pub tdata: u64,
    pub tkeep: u8,
    pub tlast: bool,
    pub tvalid: bool,
    pub tuser: bool,
    pub m_ready: bool,
    pub byp_ready: bool,
}

/// Every output of one cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LbOut {
    pub s_tready: bool,
    pub m: Stream,
    pub byp: Stream,
    /// The receive counters ([`COUNTERS`]) then the transmit counters ([`TX_COUNTERS`]).
    pub counters: [u64; 14],
}

impl LbOut {
    fn ports(&self) -> Vec<(String, Vec<u64>)> {
        let mut v = vec![("s_axis_tready".to_string(), vec![u64::from(self.s_tready)])];
        v.extend(stream_ports("m_axis", &self.m));
        v.extend(stream_ports("m_bypass", &self.byp));
        for (n, c) in lb_counter_names().into_iter().zip(self.counters) {
            v.push((n, vec![c]));
        }
        v
    }
}

/// Counter port names of the loopback top.
pub fn lb_counter_names() -> Vec<String> {
    COUNTERS
        .iter()
        .map(|c| c.to_string())
        .chain(TX_COUNTERS.iter().map(|c| format!("tx_{c}")))
        .collect()
}

/// The loopback under one simulator.
pub trait LbDut {
    fn settle(&mut self, i: &LbIn) -> LbOut;
    fn tick(&mut self);
}

/// The loopback in rust-hdl's simulator.
pub struct HdlLoopback {
    uut: Box<PacketLoopback>,
    last: LbIn,
}

impl HdlLoopback {
    pub fn new() -> Self {
        let mut uut = Box::new(PacketLoopback::new());
        uut.connect_all();
        HdlLoopback {
            uut,
            last: LbIn::default(),
        }
    }

    fn drive(&mut self, clock: bool, i: &LbIn) {
        let u = &mut self.uut;
        u.clock.next = clock.into();
        u.reset.next = i.reset;
        u.s_axis_tdata.next = bits::<64>(i.tdata);
        u.s_axis_tkeep.next = bits::<8>(u64::from(i.tkeep));
        u.s_axis_tlast.next = i.tlast;
        u.s_axis_tvalid.next = i.tvalid;
        u.s_axis_tuser.next = i.tuser;
        u.m_axis_tready.next = i.m_ready;
        u.m_bypass_tready.next = i.byp_ready;
        assert!(
            simulate(&mut *self.uut, 1000),
            "rust-hdl model did not settle"
        );
    }
}

impl Default for HdlLoopback {
    fn default() -> Self {
        Self::new()
    }
}

impl LbDut for HdlLoopback {
    fn settle(&mut self, i: &LbIn) -> LbOut {
        self.drive(false, i);
        self.last = *i;
        let u = &self.uut;
        let c = [
            &u.cnt_frames,
            &u.cnt_accepted,
            &u.cnt_bypass,
            &u.cnt_drop_oversize,
            &u.cnt_drop_truncated,
            &u.cnt_drop_fragment,
            &u.cnt_drop_checksum,
            &u.cnt_drop_length,
            &u.cnt_drop_tver,
            &u.cnt_drop_opcode,
            &u.cnt_drop_padcnt,
            &u.cnt_drop_icrc,
            &u.tx_cnt_frames,
            &u.tx_cnt_len_err,
        ];
        LbOut {
            s_tready: u.s_axis_tready.val(),
            m: (
                u.m_axis_tdata.val().to_u64(),
                u.m_axis_tkeep.val().to_u64() as u8,
                u.m_axis_tlast.val(),
                u.m_axis_tvalid.val(),
                u.m_axis_tuser.val(),
            ),
            byp: (
                u.m_bypass_tdata.val().to_u64(),
                u.m_bypass_tkeep.val().to_u64() as u8,
                u.m_bypass_tlast.val(),
                u.m_bypass_tvalid.val(),
                u.m_bypass_tuser.val(),
            ),
            counters: c.map(|s| s.val().to_u64()),
        }
    }

    fn tick(&mut self) {
        let i = self.last;
        self.drive(true, &i);
    }
}

const LB_IN: [&str; 9] = [
    "clock",
    "reset",
    "s_axis_tdata",
    "s_axis_tkeep",
    "s_axis_tlast",
    "s_axis_tvalid",
    "s_axis_tuser",
    "m_axis_tready",
    "m_bypass_tready",
];

const LB_OUT: [&str; 11] = [
    "s_axis_tready",
    "m_axis_tdata",
    "m_axis_tkeep",
    "m_axis_tlast",
    "m_axis_tvalid",
    "m_axis_tuser",
    "m_bypass_tdata",
    "m_bypass_tkeep",
    "m_bypass_tlast",
    "m_bypass_tvalid",
    "m_bypass_tuser",
];

/// The loopback under Verilator (top `packet_loopback`).
pub struct VerilatedLoopback {
    pub model: Verilated,
    inp: Vec<Port>,
    out: Vec<Port>,
}

impl VerilatedLoopback {
    pub fn new() -> Result<Self, String> {
        let mut model =
            Verilated::new("packet_loopback").ok_or("no verilated top packet_loopback")?;
        let inp = model.ports(&LB_IN)?;
        let counters = lb_counter_names();
        let names: Vec<&str> = LB_OUT
            .iter()
            .copied()
            .chain(counters.iter().map(|s| s.as_str()))
            .collect();
        let out = model.ports(&names)?;
        model.set(inp[0], 0);
        model.eval();
        Ok(VerilatedLoopback { model, inp, out })
    }
}

impl LbDut for VerilatedLoopback {
    fn settle(&mut self, i: &LbIn) -> LbOut {
        let p = &self.inp;
        let m = &mut self.model;
        m.set(p[0], 0);
        m.set(p[1], u64::from(i.reset));
        m.set(p[2], i.tdata);
        m.set(p[3], u64::from(i.tkeep));
        m.set(p[4], u64::from(i.tlast));
        m.set(p[5], u64::from(i.tvalid));
        m.set(p[6], u64::from(i.tuser));
        m.set(p[7], u64::from(i.m_ready));
        m.set(p[8], u64::from(i.byp_ready));
        m.eval();
        let g = |k: usize| m.get(self.out[k]);
        let mut counters = [0u64; 14];
        for (k, c) in counters.iter_mut().enumerate() {
            *c = g(11 + k);
        }
        LbOut {
            s_tready: g(0) != 0,
            m: (g(1), g(2) as u8, g(3) != 0, g(4) != 0, g(5) != 0),
            byp: (g(6), g(7) as u8, g(8) != 0, g(9) != 0, g(10) != 0),
            counters,
        }
    }

    fn tick(&mut self) {
        self.model.set(self.inp[0], 1);
        self.model.eval();
    }
}

/// How to drive a loopback run.
#[derive(Clone, Debug)]
pub struct LbStimulus {
    /// Frames with the MAC's error flag.
    pub frames: Vec<(Vec<u8>, bool)>,
    pub seed: u64,
    pub idle: f64,
    pub stall: f64,
}

/// What a loopback run produced.
#[derive(Clone, Debug, Default)]
pub struct LbRun {
    /// Rebuilt frames with their bad flag.
    pub frames: Vec<(Vec<u8>, bool)>,
    pub bypass: Vec<(Vec<u8>, bool)>,
    pub counters: [u64; 14],
    pub cycles: u64,
    /// Cycles from the first input beat taken to the last, and bytes taken.
    pub in_cycles: u64,
    pub in_bytes: u64,
    /// Cycles from the first rebuilt beat to the last, and bytes out.
    pub out_cycles: u64,
    pub out_bytes: u64,
    /// Cycles from the first input beat to the first rebuilt beat.
    pub latency: Option<u64>,
    pub errors: Vec<String>,
}

/// Runs `a` alone, or `a` and `b` in lock-step.
pub fn run_loopback<A: LbDut, B: LbDut>(
    a: &mut A,
    mut b: Option<&mut B>,
    s: &LbStimulus,
) -> Result<LbRun, String> {
    let mut rng = Rng::new(s.seed);
    let all: Vec<Beat> = s
        .frames
        .iter()
        .flat_map(|(f, u)| beats(f, u64::from(*u)))
        .collect();
    let total_frames = s.frames.len() as u64;
    let mut r = LbRun::default();
    let (mut next, mut presenting) = (0usize, false);
    let (mut cur, mut bcur) = (Vec::new(), Vec::new());
    let (mut first_in, mut last_in) = (None, 0);
    let (mut first_out, mut last_out) = (None, 0);
    let limit = all.len() as u64 * 8 + 20_000;
    let mut cycle = 0u64;
    let mut quiet = 0u32;
    loop {
        let mut i = LbIn {
            reset: cycle < RESET_CYCLES,
            ..Default::default()
        };
        if !i.reset {
            if !presenting && next < all.len() && !rng.chance(s.idle) {
                presenting = true;
            }
            if presenting {
                let bt = all[next];
                i.tvalid = true;
                i.tdata = bt.tdata;
                i.tkeep = bt.tkeep;
                i.tlast = bt.tlast;
                i.tuser = bt.tuser & 1 == 1;
            }
        }
        i.m_ready = !rng.chance(s.stall);
        i.byp_ready = !rng.chance(s.stall);
        let oa = a.settle(&i);
        if let Some(b) = b.as_deref_mut() {
            let ob = b.settle(&i);
            if let Some((port, va, vb)) = first_difference(oa.ports(), ob.ports()) {
                return Err(format!(
                    "cycle {cycle}: {port} differs: rust-hdl {va:x?}, Verilator {vb:x?} (seed {:#x})",
                    s.seed
                ));
            }
        }
        if !i.reset {
            if i.tvalid && oa.s_tready {
                first_in.get_or_insert(cycle);
                last_in = cycle;
                r.in_bytes += u64::from(i.tkeep.count_ones());
                next += 1;
                presenting = false;
            }
            let (d, k, l, v, u) = oa.m;
            if v && i.m_ready {
                if first_out.is_none() {
                    first_out = Some(cycle);
                    r.latency = first_in.map(|f| cycle - f);
                }
                last_out = cycle;
                r.out_bytes += u64::from(k.count_ones());
                collect(&mut r.errors, cycle, &mut cur, d, k, l);
                if l {
                    r.frames.push((std::mem::take(&mut cur), u));
                }
            }
            let (d, k, l, v, u) = oa.byp;
            if v && i.byp_ready {
                collect(&mut r.errors, cycle, &mut bcur, d, k, l);
                if l {
                    r.bypass.push((std::mem::take(&mut bcur), u));
                }
            }
        }
        r.counters = oa.counters;
        a.tick();
        if let Some(b) = b.as_deref_mut() {
            b.tick();
        }
        cycle += 1;
        let drained = next >= all.len()
            && r.counters[0] == total_frames
            && r.frames.len() as u64 == r.counters[1]
            && r.bypass.len() as u64 == r.counters[2];
        quiet = if drained { quiet + 1 } else { 0 };
        if quiet > 16 || cycle > limit {
            break;
        }
    }
    r.cycles = cycle;
    r.in_cycles = first_in.map_or(0, |f| last_in - f + 1);
    r.out_cycles = first_out.map_or(0, |f| last_out - f + 1);
    Ok(r)
}
