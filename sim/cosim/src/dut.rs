//! A module with one AXI-Stream input and one AXI-Stream output, as the lock-step harness
//! drives it: in rust-hdl's simulator or in Verilator, through the same two calls.

use rust_hdl::prelude::*;

use crate::verilated::{Port, Verilated};

/// Inputs of one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AxisIn {
    pub reset: bool,
    pub tdata: u64,
    pub tkeep: u8,
    pub tlast: bool,
    pub tvalid: bool,
    pub tuser: u64,
    /// The sink's `m_axis_tready`.
    pub m_tready: bool,
}

/// Outputs of one cycle, settled before the rising edge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AxisOut {
    pub s_tready: bool,
    pub tdata: u64,
    pub tkeep: u8,
    pub tlast: bool,
    pub tvalid: bool,
    pub tuser: u64,
}

impl AxisOut {
    /// (port name, value) pairs, for mismatch reports.
    pub fn fields(&self) -> [(&'static str, u64); 6] {
        [
            ("s_axis_tready", u64::from(self.s_tready)),
            ("m_axis_tdata", self.tdata),
            ("m_axis_tkeep", u64::from(self.tkeep)),
            ("m_axis_tlast", u64::from(self.tlast)),
            ("m_axis_tvalid", u64::from(self.tvalid)),
            ("m_axis_tuser", self.tuser),
        ]
    }
}

/// A stream-to-stream module under simulation.
pub trait AxisDut {
    /// Applies `i` with the clock low and returns the settled outputs.
    fn settle(&mut self, i: &AxisIn) -> AxisOut;
    /// One rising clock edge, inputs held.
    fn tick(&mut self);
}

/// A rust-hdl block with the standard stream ports (`clock`, `reset`, `s_axis_*`, `m_axis_*`).
pub trait HdlAxisPorts: Block {
    fn drive(&mut self, clock: bool, i: &AxisIn);
    fn sample(&self) -> AxisOut;
}

/// An `m_axis_tuser` value as the harness's word: a multi-bit `Bits` or a single `Bit`.
pub trait UserWord {
    fn word(self) -> u64;
}

impl<const N: usize> UserWord for Bits<N> {
    fn word(self) -> u64 {
        self.to_u64()
    }
}

impl UserWord for bool {
    fn word(self) -> u64 {
        u64::from(self)
    }
}

/// Implements [`HdlAxisPorts`] for a block whose stream ports use the standard names.
#[macro_export]
macro_rules! hdl_axis_ports {
    ($t:ty) => {
        impl $crate::dut::HdlAxisPorts for $t {
            fn drive(&mut self, clock: bool, i: &$crate::dut::AxisIn) {
                use rust_hdl::prelude::*;
                self.clock.next = clock.into();
                self.reset.next = i.reset;
                self.s_axis_tdata.next = bits::<64>(i.tdata);
                self.s_axis_tkeep.next = bits::<8>(u64::from(i.tkeep));
                self.s_axis_tlast.next = i.tlast;
                self.s_axis_tvalid.next = i.tvalid;
                self.s_axis_tuser.next = i.tuser & 1 == 1;
                self.m_axis_tready.next = i.m_tready;
            }
            fn sample(&self) -> $crate::dut::AxisOut {
                $crate::dut::AxisOut {
                    s_tready: self.s_axis_tready.val(),
                    tdata: self.m_axis_tdata.val().to_u64(),
                    tkeep: self.m_axis_tkeep.val().to_u64() as u8,
                    tlast: self.m_axis_tlast.val(),
                    tvalid: self.m_axis_tvalid.val(),
                    tuser: $crate::dut::UserWord::word(self.m_axis_tuser.val()),
                }
            }
        }
    };
}

hdl_axis_ports!(rnic_hw::icrc_engine::IcrcEngine);

hdl_axis_ports!(rnic_hw::axis_register::AxisRegister);

/// A rust-hdl block run by a manual `simulate()` loop.
pub struct HdlDut<B: HdlAxisPorts> {
    pub uut: B,
    last: AxisIn,
}

impl<B: HdlAxisPorts> HdlDut<B> {
    pub fn new(mut uut: B) -> Self {
        uut.connect_all();
        HdlDut {
            uut,
            last: AxisIn::default(),
        }
    }
}

impl<B: HdlAxisPorts> AxisDut for HdlDut<B> {
    fn settle(&mut self, i: &AxisIn) -> AxisOut {
        self.last = *i;
        self.uut.drive(false, i);
        assert!(
            simulate(&mut self.uut, 1000),
            "rust-hdl model did not settle"
        );
        self.uut.sample()
    }

    fn tick(&mut self) {
        let i = self.last;
        self.uut.drive(true, &i);
        assert!(
            simulate(&mut self.uut, 1000),
            "rust-hdl model did not settle"
        );
    }
}

/// A Verilator model with the standard stream ports.
pub struct VerilatedDut {
    pub model: Verilated,
    ports: [Port; 14],
}

const PORTS: [&str; 14] = [
    "clock",
    "reset",
    "s_axis_tdata",
    "s_axis_tkeep",
    "s_axis_tlast",
    "s_axis_tvalid",
    "s_axis_tuser",
    "m_axis_tready",
    "s_axis_tready",
    "m_axis_tdata",
    "m_axis_tkeep",
    "m_axis_tlast",
    "m_axis_tvalid",
    "m_axis_tuser",
];

impl VerilatedDut {
    pub fn new(top: &str) -> Result<Self, String> {
        let model = Verilated::new(top).ok_or_else(|| format!("no verilated top {top}"))?;
        let mut ports = [model.port("clock")?; 14];
        for (p, name) in ports.iter_mut().zip(PORTS) {
            *p = model.port(name)?;
        }
        let mut d = VerilatedDut { model, ports };
        // Evaluate once with the clock low, or the first rising edge is missed.
        d.model.set(d.ports[0], 0);
        d.model.eval();
        Ok(d)
    }
}

impl AxisDut for VerilatedDut {
    fn settle(&mut self, i: &AxisIn) -> AxisOut {
        let p = self.ports;
        let m = &mut self.model;
        m.set(p[0], 0);
        m.set(p[1], u64::from(i.reset));
        m.set(p[2], i.tdata);
        m.set(p[3], u64::from(i.tkeep));
        m.set(p[4], u64::from(i.tlast));
        m.set(p[5], u64::from(i.tvalid));
        m.set(p[6], i.tuser);
        m.set(p[7], u64::from(i.m_tready));
        m.eval();
        AxisOut {
            s_tready: m.get(p[8]) != 0,
            tdata: m.get(p[9]),
            tkeep: m.get(p[10]) as u8,
            tlast: m.get(p[11]) != 0,
            tvalid: m.get(p[12]) != 0,
            tuser: m.get(p[13]),
        }
    }

    fn tick(&mut self) {
        self.model.set(self.ports[0], 1);
        self.model.eval();
    }
}
