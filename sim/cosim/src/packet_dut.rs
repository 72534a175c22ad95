//! The RX parser under simulation: its ports as plain values, adapters for rust-hdl's simulator
//! and Verilator, and a harness that runs frames through one or both (lock-step: every output
//! port compared on every cycle) with random idles on the input and random back-pressure on
//! each of the three outputs.

use rust_hdl::prelude::*;

use rnic_hw::header_channel::{HDR_BITS, HDR_WORDS, HeaderRecord};
use rnic_hw::header_extract::{bits_from_words, words_of};
use rnic_hw::rx_parser::{COUNTERS, RxParser};

use crate::axis::{Rng, beats};
use crate::verilated::{Port, Verilated};

/// Inputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxIn {
    pub reset: bool,
    pub tdata: u64,
    pub tkeep: u8,
    pub tlast: bool,
    pub tvalid: bool,
    pub tuser: bool,
    pub pay_ready: bool,
    pub byp_ready: bool,
    pub hdr_ready: bool,
}

/// Every output of one cycle, settled before the rising edge.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RxOut {
    pub s_tready: bool,
    pub pay: (u64, u8, bool, bool),
    pub byp: (u64, u8, bool, bool, bool),
    pub hdr_valid: bool,
    pub hdr: [u64; HDR_WORDS],
    pub counters: [u64; 12],
}

impl RxOut {
    /// (port, value words) of every output port, for mismatch reports.
    pub fn ports(&self) -> Vec<(&'static str, Vec<u64>)> {
        let mut v = vec![
            ("s_axis_tready", vec![u64::from(self.s_tready)]),
            ("m_axis_tdata", vec![self.pay.0]),
            ("m_axis_tkeep", vec![u64::from(self.pay.1)]),
            ("m_axis_tlast", vec![u64::from(self.pay.2)]),
            ("m_axis_tvalid", vec![u64::from(self.pay.3)]),
            ("m_bypass_tdata", vec![self.byp.0]),
            ("m_bypass_tkeep", vec![u64::from(self.byp.1)]),
            ("m_bypass_tlast", vec![u64::from(self.byp.2)]),
            ("m_bypass_tvalid", vec![u64::from(self.byp.3)]),
            ("m_bypass_tuser", vec![u64::from(self.byp.4)]),
            ("m_hdr_valid", vec![u64::from(self.hdr_valid)]),
            ("m_hdr_data", self.hdr.to_vec()),
        ];
        for (n, c) in COUNTERS.iter().zip(self.counters) {
            v.push((n, vec![c]));
        }
        v
    }
}

/// The RX parser under one simulator.
pub trait RxDut {
    /// Applies `i` with the clock low and returns the settled outputs.
    fn settle(&mut self, i: &RxIn) -> RxOut;
    /// One rising clock edge, inputs held.
    fn tick(&mut self);
}

/// The parser in rust-hdl's simulator (manual `simulate()` loop).
pub struct HdlRx {
    uut: Box<RxParser>,
    last: RxIn,
}

impl HdlRx {
    pub fn new() -> Self {
        let mut uut = Box::new(RxParser::new());
        uut.connect_all();
        HdlRx {
            uut,
            last: RxIn::default(),
        }
    }

    fn drive(&mut self, clock: bool, i: &RxIn) {
        let u = &mut self.uut;
        u.clock.next = clock.into();
        u.reset.next = i.reset;
        u.s_axis_tdata.next = bits::<64>(i.tdata);
        u.s_axis_tkeep.next = bits::<8>(u64::from(i.tkeep));
        u.s_axis_tlast.next = i.tlast;
        u.s_axis_tvalid.next = i.tvalid;
        u.s_axis_tuser.next = i.tuser;
        u.m_axis_tready.next = i.pay_ready;
        u.m_bypass_tready.next = i.byp_ready;
        u.m_hdr_ready.next = i.hdr_ready;
        assert!(
            simulate(&mut *self.uut, 1000),
            "rust-hdl model did not settle"
        );
    }
}

impl Default for HdlRx {
    fn default() -> Self {
        Self::new()
    }
}

impl RxDut for HdlRx {
    fn settle(&mut self, i: &RxIn) -> RxOut {
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
        ];
        RxOut {
            s_tready: u.s_axis_tready.val(),
            pay: (
                u.m_axis_tdata.val().to_u64(),
                u.m_axis_tkeep.val().to_u64() as u8,
                u.m_axis_tlast.val(),
                u.m_axis_tvalid.val(),
            ),
            byp: (
                u.m_bypass_tdata.val().to_u64(),
                u.m_bypass_tkeep.val().to_u64() as u8,
                u.m_bypass_tlast.val(),
                u.m_bypass_tvalid.val(),
                u.m_bypass_tuser.val(),
            ),
            hdr_valid: u.m_hdr_valid.val(),
            hdr: words_of(u.m_hdr_data.val())
                .try_into()
                .expect("the header port is HDR_WORDS words wide"),
            counters: c.map(|s| s.val().to_u64()),
        }
    }

    fn tick(&mut self) {
        let i = self.last;
        self.drive(true, &i);
    }
}

/// The parser under Verilator (top `rx_parser`).
pub struct VerilatedRx {
    pub model: Verilated,
    inp: [Port; 10],
    out: Vec<Port>,
}

const IN_PORTS: [&str; 10] = [
    "clock",
    "reset",
    "s_axis_tdata",
    "s_axis_tkeep",
    "s_axis_tlast",
    "s_axis_tvalid",
    "s_axis_tuser",
    "m_axis_tready",
    "m_bypass_tready",
    "m_hdr_ready",
];

const OUT_PORTS: [&str; 12] = [
    "s_axis_tready",
    "m_axis_tdata",
    "m_axis_tkeep",
    "m_axis_tlast",
    "m_axis_tvalid",
    "m_bypass_tdata",
    "m_bypass_tkeep",
    "m_bypass_tlast",
    "m_bypass_tvalid",
    "m_bypass_tuser",
    "m_hdr_valid",
    "m_hdr_data",
];

impl VerilatedRx {
    pub fn new() -> Result<Self, String> {
        let model = Verilated::new("rx_parser").ok_or("no verilated top rx_parser")?;
        let inp: [Port; 10] = model
            .ports(&IN_PORTS)?
            .try_into()
            .expect("one port per name");
        let names: Vec<&str> = OUT_PORTS.iter().chain(COUNTERS.iter()).copied().collect();
        let out = model.ports(&names)?;
        let mut d = VerilatedRx { model, inp, out };
        // Evaluate once with the clock low, or the first rising edge is missed.
        d.model.set(d.inp[0], 0);
        d.model.eval();
        Ok(d)
    }
}

impl RxDut for VerilatedRx {
    fn settle(&mut self, i: &RxIn) -> RxOut {
        let p = self.inp;
        let m = &mut self.model;
        m.set(p[0], 0);
        m.set(p[1], u64::from(i.reset));
        m.set(p[2], i.tdata);
        m.set(p[3], u64::from(i.tkeep));
        m.set(p[4], u64::from(i.tlast));
        m.set(p[5], u64::from(i.tvalid));
        m.set(p[6], u64::from(i.tuser));
        m.set(p[7], u64::from(i.pay_ready));
        m.set(p[8], u64::from(i.byp_ready));
        m.set(p[9], u64::from(i.hdr_ready));
        m.eval();
        let o = &self.out;
        let g = |k: usize| m.get(o[k]);
        let mut counters = [0u64; 12];
        for (k, c) in counters.iter_mut().enumerate() {
            *c = g(12 + k);
        }
        let mut hdr = [0u64; HDR_WORDS];
        m.get_into(o[11], &mut hdr);
        RxOut {
            s_tready: g(0) != 0,
            pay: (g(1), g(2) as u8, g(3) != 0, g(4) != 0),
            byp: (g(5), g(6) as u8, g(7) != 0, g(8) != 0, g(9) != 0),
            hdr_valid: g(10) != 0,
            hdr,
            counters,
        }
    }

    fn tick(&mut self) {
        self.model.set(self.inp[0], 1);
        self.model.eval();
    }
}

/// What a run produced.
#[derive(Clone, Debug, Default)]
pub struct RxRun {
    /// Header words in order.
    pub headers: Vec<HeaderRecord>,
    /// Payloads in order (one per accepted frame with a payload).
    pub payloads: Vec<Vec<u8>>,
    /// Bypass frames with their tuser.
    pub bypass: Vec<(Vec<u8>, bool)>,
    /// Final counters, in [`COUNTERS`] order.
    pub counters: [u64; 12],
    pub cycles: u64,
    /// Cycles from the first input beat taken to the last.
    pub in_cycles: u64,
    /// Bytes taken at the input.
    pub in_bytes: u64,
    /// Cycles from the first input beat taken to the first output beat (any stream).
    pub latency: Option<u64>,
    /// Output protocol problems (tkeep holes).
    pub errors: Vec<String>,
    /// The hardware's verdict per frame, in the order they were counted: the index in
    /// [`COUNTERS`] of the counter the frame incremented (accepted, bypass or a drop reason).
    pub verdicts: Vec<usize>,
}

/// How to drive a run.
#[derive(Clone, Debug)]
pub struct RxStimulus {
    /// Frames with the MAC's error flag.
    pub frames: Vec<(Vec<u8>, bool)>,
    pub seed: u64,
    pub idle: f64,
    pub stall: f64,
}

const RESET_CYCLES: u64 = 2;

/// Runs `a` alone, or `a` and `b` in lock-step (the first difference is an error naming the
/// cycle, the port and both values).
pub fn run<A: RxDut, B: RxDut>(
    a: &mut A,
    mut b: Option<&mut B>,
    s: &RxStimulus,
) -> Result<RxRun, String> {
    let mut rng = Rng::new(s.seed);
    let all: Vec<_> = s
        .frames
        .iter()
        .flat_map(|(f, u)| beats(f, u64::from(*u)))
        .collect();
    let total_frames = s.frames.len() as u64;
    let mut r = RxRun::default();
    let (mut next, mut presenting) = (0usize, false);
    let (mut cur, mut bcur) = (Vec::new(), Vec::new());
    let mut first_in = None;
    let mut last_in = 0;
    let limit = all.len() as u64 * 8 + 20_000;
    let mut cycle = 0u64;
    let mut quiet = 0u32;
    loop {
        let mut i = RxIn {
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
        i.pay_ready = !rng.chance(s.stall);
        i.byp_ready = !rng.chance(s.stall);
        i.hdr_ready = !rng.chance(s.stall);
        let oa = a.settle(&i);
        if let Some(b) = b.as_deref_mut() {
            let ob = b.settle(&i);
            if oa != ob {
                for ((port, va), (_, vb)) in oa.ports().into_iter().zip(ob.ports()) {
                    if va != vb {
                        return Err(format!(
                            "cycle {cycle}: {port} differs: rust-hdl {va:x?}, Verilator {vb:x?} (seed {:#x})",
                            s.seed
                        ));
                    }
                }
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
            let out_any = (oa.pay.3 && i.pay_ready) || (oa.byp.3 && i.byp_ready);
            if out_any && r.latency.is_none() {
                r.latency = first_in.map(|f| cycle - f);
            }
            if oa.pay.3 && i.pay_ready {
                collect(&mut r.errors, cycle, &mut cur, oa.pay.0, oa.pay.1, oa.pay.2);
                if oa.pay.2 {
                    r.payloads.push(std::mem::take(&mut cur));
                }
            }
            if oa.byp.3 && i.byp_ready {
                collect(
                    &mut r.errors,
                    cycle,
                    &mut bcur,
                    oa.byp.0,
                    oa.byp.1,
                    oa.byp.2,
                );
                if oa.byp.2 {
                    r.bypass.push((std::mem::take(&mut bcur), oa.byp.4));
                }
            }
            if oa.hdr_valid && i.hdr_ready {
                r.headers.push(HeaderRecord::unpack(&oa.hdr));
            }
        }
        for (k, (&now, &before)) in oa.counters.iter().zip(&r.counters).enumerate().skip(1) {
            for _ in 0..now.saturating_sub(before) {
                r.verdicts.push(k);
            }
        }
        r.counters = oa.counters;
        a.tick();
        if let Some(b) = b.as_deref_mut() {
            b.tick();
        }
        cycle += 1;
        let accepted = r.counters[1] as usize;
        let drained = next >= all.len()
            && r.counters[0] == total_frames
            && r.headers.len() == accepted
            && r.bypass.len() as u64 == r.counters[2]
            && !oa.pay.3
            && !oa.byp.3;
        // The last payload leaves a few cycles after its header: wait until all is quiet.
        quiet = if drained { quiet + 1 } else { 0 };
        if quiet > 16 || cycle > limit {
            break;
        }
    }
    r.cycles = cycle;
    r.in_cycles = first_in.map_or(0, |f| last_in - f + 1);
    Ok(r)
}

/// Appends an output beat's bytes to `buf`, noting a `tkeep` hole or a short non-last beat.
pub(crate) fn collect(
    errors: &mut Vec<String>,
    cycle: u64,
    buf: &mut Vec<u8>,
    d: u64,
    k: u8,
    last: bool,
) {
    let n = k.trailing_ones() as usize;
    if k.count_ones() as usize != n || n == 0 || (!last && n != 8) {
        errors.push(format!("cycle {cycle}: tkeep {k:#04x} (last {last})"));
    }
    buf.extend_from_slice(&d.to_le_bytes()[..n]);
}

/// A header word as the rust-hdl type (for tests that drive the parser's output into a builder).
pub fn header_bits(r: &HeaderRecord) -> Bits<HDR_BITS> {
    bits_from_words::<HDR_BITS>(&r.pack())
}

/// The frames of the shipped scapy reference trace (`tests/golden/scapy_reference.pcap`), each
/// with a clear MAC error flag.
pub fn scapy_reference_frames() -> Vec<(Vec<u8>, bool)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/golden/scapy_reference.pcap"
    );
    rnic_wire::pcap::read_file(path)
        .expect("reference trace")
        .records
        .into_iter()
        .map(|p| (p.data, false))
        .collect()
}
