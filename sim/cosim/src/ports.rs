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

/// A port value as the bench sees it: at most 64 bits.
pub trait PortValue {
    fn from_u64(v: u64) -> Self;
    fn as_u64(&self) -> u64;
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
        let masked = if N >= 64 { v } else { v & ((1u64 << N) - 1) };
        bits::<N>(masked)
    }
    fn as_u64(&self) -> u64 {
        self.to_u64()
    }
}

/// A rust-hdl block whose ports a bench drives by index (see [`hdl_ports!`]).
pub trait HdlPorts: Block {
    const INPUTS: &'static [&'static str];
    const OUTPUTS: &'static [&'static str];
    fn set_clock(&mut self, high: bool);
    fn set_input(&mut self, i: usize, v: u64);
    fn get_output(&self, o: usize) -> u64;
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
        }
    };
}

/// A module under simulation, driven by port index.
pub trait PortDut {
    fn inputs(&self) -> &'static [&'static str];
    fn outputs(&self) -> &'static [&'static str];
    /// Drives input `i` (held until changed).
    fn set(&mut self, i: usize, v: u64);
    /// Output `o` as of the last settle.
    fn get(&self, o: usize) -> u64;
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
        for n in inputs.iter().chain(outputs) {
            let p = model.desc().ports.iter().find(|p| p.name == *n);
            match p {
                Some(p) if p.width > 64 => {
                    return Err(format!("port {n} of {top} is wider than 64 bits"));
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
    fn settle(&mut self) -> Result<(), Mismatch> {
        self.model.set(self.clock, 0);
        self.model.eval();
        for (v, p) in self.values.iter_mut().zip(&self.outs) {
            *v = self.model.get(*p);
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
    fn settle(&mut self) -> Result<(), Mismatch> {
        self.hdl.settle()?;
        self.ver.settle()?;
        for (o, name) in B::OUTPUTS.iter().enumerate() {
            let (a, b) = (self.hdl.get(o), self.ver.get(o));
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
