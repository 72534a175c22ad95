//! Modules with any ports, driven by name: the same inputs into rust-hdl's simulator and into
//! Verilator, every named output compared after every settle. The stream harness
//! ([`crate::lockstep`]) covers modules with one stream in and one out; this one covers the
//! rest (register ports, DMA ports, several streams), whose test benches are models of what
//! sits around the module (a bus master, host memory) written against [`PortDut`].
//!
//! A block lists its ports once with [`hdl_ports!`]; a bench resolves each name to an index
//! once ([`PortDut::input`], [`PortDut::output`]) and then sets and reads by index, so the two
//! simulations and a Verilator-only run ([`VerilatedPorts`]) take the same bench.

use rust_hdl::prelude::*;

use crate::lockstep::Mismatch;
use crate::verilated::{Port, Verilated};

/// A port value as the bench sees it: a 64-bit word, or 64-bit words (least significant
/// first) for a wider port.
pub trait PortValue: Sized {
    fn from_u64(v: u64) -> Self;
    fn as_u64(&self) -> u64;
    fn from_words(w: &[u64]) -> Self {
        Self::from_u64(w.first().copied().unwrap_or(0))
    }
    fn to_words(&self) -> Vec<u64> {
        vec![self.as_u64()]
    }
}

impl PortValue for bool {
    fn from_u64(v: u64) -> Self {
        v & 1 == 1
    }
    fn as_u64(&self) -> u64 {
        u64::from(*self)
    }
}

impl<const N: usize> PortValue for Bits<N> {
    fn from_u64(v: u64) -> Self {
        if N > 64 {
            return rnic_hw::header_extract::bits_from_words::<N>(&[v]);
        }
        let masked = if N == 64 { v } else { v & ((1u64 << N) - 1) };
        bits::<N>(masked)
    }
    fn as_u64(&self) -> u64 {
        if N > 64 {
            return rnic_hw::header_extract::words_of(*self)[0];
        }
        self.to_u64()
    }
    fn from_words(w: &[u64]) -> Self {
        rnic_hw::header_extract::bits_from_words::<N>(w)
    }
    fn to_words(&self) -> Vec<u64> {
        rnic_hw::header_extract::words_of(*self)
    }
}

/// A rust-hdl block whose ports a bench drives by index (see [`hdl_ports!`]).
pub trait HdlPorts: Block {
    const INPUTS: &'static [&'static str];
    const OUTPUTS: &'static [&'static str];
    fn set_clock(&mut self, high: bool);
    fn set_input(&mut self, i: usize, v: u64);
    fn get_output(&self, o: usize) -> u64;
    /// Wide ports: 64-bit words, least significant first.
    fn set_input_words(&mut self, i: usize, w: &[u64]);
    fn get_output_words(&self, o: usize) -> Vec<u64>;
}

/// Lists a block's ports (besides `clock`) for [`HdlPorts`]: every name must be a field of
/// the block and a port of its Verilog top.
#[macro_export]
macro_rules! hdl_ports {
    ($t:ty { inputs: [$($i:ident),* $(,)?], outputs: [$($o:ident),* $(,)?] $(,)? }) => {
        impl $crate::ports::HdlPorts for $t {
            const INPUTS: &'static [&'static str] = &[$(stringify!($i)),*];
            const OUTPUTS: &'static [&'static str] = &[$(stringify!($o)),*];
            fn set_clock(&mut self, high: bool) {
                self.clock.next = high.into();
            }
            #[allow(unused_assignments)]
            fn set_input(&mut self, i: usize, v: u64) {
                let mut k = 0usize;
                $(
                    if i == k {
                        self.$i.next = $crate::ports::PortValue::from_u64(v);
                        return;
                    }
                    k += 1;
                )*
                panic!("no input {i}");
            }
            #[allow(unused_assignments)]
            fn get_output(&self, o: usize) -> u64 {
                let mut k = 0usize;
                $(
                    if o == k {
                        return $crate::ports::PortValue::as_u64(&self.$o.val());
                    }
                    k += 1;
                )*
                panic!("no output {o}");
            }
            #[allow(unused_assignments)]
            fn set_input_words(&mut self, i: usize, w: &[u64]) {
                let mut k = 0usize;
                $(
                    if i == k {
                        self.$i.next = $crate::ports::PortValue::from_words(w);
                        return;
                    }
                    k += 1;
                )*
                panic!("no input {i}");
            }
            #[allow(unused_assignments)]
            fn get_output_words(&self, o: usize) -> Vec<u64> {
                let mut k = 0usize;
                $(
                    if o == k {
                        return $crate::ports::PortValue::to_words(&self.$o.val());
                    }
                    k += 1;
                )*
                panic!("no output {o}");
            }
        }
    };
}

/// A module under simulation, driven by port index.
pub trait PortDut {
    fn inputs(&self) -> &'static [&'static str];
    fn outputs(&self) -> &'static [&'static str];
    /// Drives input `i` (held until changed).
    fn set(&mut self, i: usize, v: u64);
    /// Output `o` as of the last settle (its low word if it is wider than 64 bits).
    fn get(&self, o: usize) -> u64;
    /// Drives a port of any width from 64-bit words, least significant first.
    fn set_words(&mut self, i: usize, w: &[u64]);
    /// Output `o` of any width as 64-bit words, least significant first.
    fn get_words(&self, o: usize) -> Vec<u64>;
    /// Evaluates with the clock low; a lock-step pair reports its first disagreement.
    fn settle(&mut self) -> Result<(), Mismatch>;
    /// One rising clock edge, inputs held.
    fn tick(&mut self);
    /// Rising edges so far.
    fn cycle(&self) -> u64;

    /// The index of input `name`; panics naming it if there is none (a bench bug).
    fn input(&self, name: &str) -> usize {
        self.inputs()
            .iter()
            .position(|n| *n == name)
            .unwrap_or_else(|| panic!("no input {name}"))
    }

    /// The index of output `name`; panics naming it if there is none.
    fn output(&self, name: &str) -> usize {
        self.outputs()
            .iter()
            .position(|n| *n == name)
            .unwrap_or_else(|| panic!("no output {name}"))
    }
}

/// A rust-hdl block run by `simulate()`.
pub struct HdlPortSim<B: HdlPorts> {
    pub uut: B,
    cycle: u64,
}

impl<B: HdlPorts> HdlPortSim<B> {
    pub fn new(mut uut: B) -> Self {
        uut.connect_all();
        HdlPortSim { uut, cycle: 0 }
    }
}

impl<B: HdlPorts> PortDut for HdlPortSim<B> {
    fn inputs(&self) -> &'static [&'static str] {
        B::INPUTS
    }
    fn outputs(&self) -> &'static [&'static str] {
        B::OUTPUTS
    }
    fn set(&mut self, i: usize, v: u64) {
        self.uut.set_input(i, v);
    }
    fn get(&self, o: usize) -> u64 {
        self.uut.get_output(o)
    }
    fn set_words(&mut self, i: usize, w: &[u64]) {
        self.uut.set_input_words(i, w);
    }
    fn get_words(&self, o: usize) -> Vec<u64> {
        self.uut.get_output_words(o)
    }
    fn settle(&mut self) -> Result<(), Mismatch> {
        self.uut.set_clock(false);
        assert!(
            simulate(&mut self.uut, 1000),
            "rust-hdl model did not settle"
        );
        Ok(())
    }
    fn tick(&mut self) {
        self.uut.set_clock(true);
        assert!(
            simulate(&mut self.uut, 1000),
            "rust-hdl model did not settle"
        );
        self.cycle += 1;
    }
    fn cycle(&self) -> u64 {
        self.cycle
    }
}

/// A Verilator model with the ports a block lists.
pub struct VerilatedPorts {
    pub model: Verilated,
    inputs: &'static [&'static str],
    outputs: &'static [&'static str],
    clock: Port,
    ins: Vec<Port>,
    outs: Vec<Port>,
    values: Vec<u64>,
    /// The words of each output wider than 64 bits (empty for a narrow one).
    wide: Vec<Vec<u64>>,
    cycle: u64,
}

impl VerilatedPorts {
    /// The verilated top `top` with the ports of `B`.
    pub fn of<B: HdlPorts>(top: &str) -> Result<Self, String> {
        Self::new(top, B::INPUTS, B::OUTPUTS)
    }

    pub fn new(
        top: &str,
        inputs: &'static [&'static str],
        outputs: &'static [&'static str],
    ) -> Result<Self, String> {
        let model = Verilated::new(top).ok_or_else(|| format!("no verilated top {top}"))?;
        let mut wide = Vec::new();
        for n in inputs.iter().chain(outputs) {
            let p = model.desc().ports.iter().find(|p| p.name == *n);
            match p {
                Some(p) if !p.input => {
                    let words = if p.width > 64 {
                        (p.width as usize).div_ceil(64)
                    } else {
                        0
                    };
                    wide.push(vec![0; words]);
                }
                Some(_) => {}
                None => return Err(format!("top {top} has no port {n}")),
            }
        }
        let mut v = VerilatedPorts {
            clock: model.port("clock")?,
            ins: model.ports(inputs)?,
            outs: model.ports(outputs)?,
            model,
            inputs,
            outputs,
            values: vec![0; outputs.len()],
            wide,
            cycle: 0,
        };
        // Evaluate once with the clock low, or the first rising edge is missed.
        v.model.set(v.clock, 0);
        v.model.eval();
        Ok(v)
    }
}

impl PortDut for VerilatedPorts {
    fn inputs(&self) -> &'static [&'static str] {
        self.inputs
    }
    fn outputs(&self) -> &'static [&'static str] {
        self.outputs
    }
    fn set(&mut self, i: usize, v: u64) {
        self.model.set(self.ins[i], v);
    }
    fn get(&self, o: usize) -> u64 {
        self.values[o]
    }
    fn set_words(&mut self, i: usize, w: &[u64]) {
        self.model.set_wide(self.ins[i], w);
    }
    fn get_words(&self, o: usize) -> Vec<u64> {
        if self.wide[o].is_empty() {
            vec![self.values[o]]
        } else {
            self.wide[o].clone()
        }
    }
    fn settle(&mut self) -> Result<(), Mismatch> {
        self.model.set(self.clock, 0);
        self.model.eval();
        for ((v, w), p) in self.values.iter_mut().zip(&mut self.wide).zip(&self.outs) {
            if w.is_empty() {
                *v = self.model.get(*p);
            } else {
                self.model.get_into(*p, w);
                *v = w[0];
            }
        }
        Ok(())
    }
    fn tick(&mut self) {
        self.model.set(self.clock, 1);
        self.model.eval();
        self.cycle += 1;
    }
    fn cycle(&self) -> u64 {
        self.cycle
    }
}

/// Two simulations of one block in lock-step: outputs read from the rust-hdl one, every
/// output compared on every settle.
pub struct PortLockStep<B: HdlPorts> {
    pub hdl: HdlPortSim<B>,
    pub ver: VerilatedPorts,
    /// Reported with a mismatch, so a failing random run can be replayed.
    pub seed: u64,
}

impl<B: HdlPorts> PortLockStep<B> {
    pub fn new(uut: B, top: &str, seed: u64) -> Result<Self, String> {
        Ok(PortLockStep {
            hdl: HdlPortSim::new(uut),
            ver: VerilatedPorts::of::<B>(top)?,
            seed,
        })
    }
}

impl<B: HdlPorts> PortDut for PortLockStep<B> {
    fn inputs(&self) -> &'static [&'static str] {
        B::INPUTS
    }
    fn outputs(&self) -> &'static [&'static str] {
        B::OUTPUTS
    }
    fn set(&mut self, i: usize, v: u64) {
        self.hdl.set(i, v);
        self.ver.set(i, v);
    }
    fn get(&self, o: usize) -> u64 {
        self.hdl.get(o)
    }
    fn set_words(&mut self, i: usize, w: &[u64]) {
        self.hdl.set_words(i, w);
        self.ver.set_words(i, w);
    }
    fn get_words(&self, o: usize) -> Vec<u64> {
        self.hdl.get_words(o)
    }
    fn settle(&mut self) -> Result<(), Mismatch> {
        self.hdl.settle()?;
        self.ver.settle()?;
        for (o, name) in B::OUTPUTS.iter().enumerate() {
            let (mut a, mut b) = (self.hdl.get(o), self.ver.get(o));
            if a == b && !self.ver.wide[o].is_empty() {
                // A wide port: the first word that differs.
                let hw = self.hdl.get_words(o);
                if let Some(k) = (0..hw.len()).find(|&k| hw[k] != self.ver.wide[o][k]) {
                    (a, b) = (hw[k], self.ver.wide[o][k]);
                }
            }
            if a != b {
                return Err(Mismatch {
                    cycle: self.hdl.cycle(),
                    port: name,
                    a,
                    b,
                    seed: self.seed,
                });
            }
        }
        Ok(())
    }
    fn tick(&mut self) {
        self.hdl.tick();
        self.ver.tick();
    }
    fn cycle(&self) -> u64 {
        self.hdl.cycle()
    }
}

/// The handshake of a block that takes one request at a time and answers a fixed number of
/// clocks later (`resp_check`, `req_segment`): `s_ready` exactly while idle, the answer valid
/// from `latency` clocks after the take and not before, unchanged until taken. A test calls
/// [`FixedLatency::cycle`] after each settle and [`FixedLatency::tick`] after each edge.
/// Sets field `(offset, width)` (at most 64 bits, inside one 64-bit word) of a port value held
/// as 64-bit words, least significant first: a row or header packed by its layout.
pub fn set_field(words: &mut [u64], (off, width): (usize, usize), v: u64) {
    assert!(off % 64 + width <= 64, "field at {off} straddles a word");
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    };
    words[off / 64] &= !(mask << (off % 64));
    words[off / 64] |= (v & mask) << (off % 64);
}

/// Field `(offset, width)` of a port value held as 64-bit words (as [`set_field`]).
pub fn field(words: &[u64], (off, width): (usize, usize)) -> u64 {
    assert!(off % 64 + width <= 64, "field at {off} straddles a word");
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    };
    (words[off / 64] >> (off % 64)) & mask
}

pub struct FixedLatency {
    latency: usize,
    since: Option<usize>,
    held: Option<Vec<Vec<u64>>>,
}

impl FixedLatency {
    pub fn new(latency: usize) -> Self {
        FixedLatency {
            latency,
            since: None,
            held: None,
        }
    }

    /// Forgets the request in progress (a reset cycle).
    pub fn reset(&mut self) {
        self.since = None;
        self.held = None;
    }

    /// Checks one settled cycle; `answer` reads the answer's outputs. Returns whether a
    /// request was taken, and the answer if it was taken (`m_ready`) this cycle.
    pub fn cycle(
        &mut self,
        cycle: u64,
        (s_valid, s_ready): (bool, bool),
        (m_valid, m_ready): (bool, bool),
        answer: impl FnOnce() -> Vec<Vec<u64>>,
    ) -> (bool, Option<Vec<Vec<u64>>>) {
        match self.since {
            Some(n) => {
                assert!(!s_ready, "cycle {cycle}: busy");
                assert_eq!(
                    m_valid,
                    n >= self.latency,
                    "cycle {cycle}: {n} clocks after the take"
                );
            }
            None => {
                assert!(s_ready, "cycle {cycle}: idle");
                assert!(!m_valid, "cycle {cycle}: no answer while idle");
            }
        }
        let mut out = None;
        if m_valid {
            let v = answer();
            if let Some(h) = &self.held {
                assert_eq!(&v, h, "cycle {cycle}: the answer holds until taken");
            }
            self.held = Some(v);
            if m_ready {
                out = self.held.take();
                self.since = None;
            }
        }
        let took = self.since.is_none() && s_valid && s_ready;
        if took {
            self.since = Some(0);
        }
        (took, out)
    }

    /// After the clock edge.
    pub fn tick(&mut self) {
        if let Some(n) = self.since.as_mut() {
            if self.held.is_none() || *n < self.latency {
                *n += 1;
            }
        }
    }
}
