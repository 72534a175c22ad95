//! An AXI4-Lite master for test benches and the simulated device: one write or read at a
//! time through the `s_axil_*` ports of a [`PortDut`], with seeded random delays on the
//! response ready signals, every cycle settled (and so compared, in lock-step).

use crate::axis::Rng;
use crate::lockstep::Mismatch;
use crate::ports::PortDut;

/// What else runs on the bus's cycles (a DMA server, a stream loop): `drive` sets its inputs
/// before every settle, `observe` reads the settled outputs before every clock edge.
pub trait Env {
    fn drive(&mut self, dut: &mut dyn PortDut);
    fn observe(&mut self, dut: &dyn PortDut);
}

/// Nothing else on the bus.
pub struct NoEnv;

impl Env for NoEnv {
    fn drive(&mut self, _: &mut dyn PortDut) {}
    fn observe(&mut self, _: &dyn PortDut) {}
}

/// One cycle: `env` drives, settle, `env` observes, clock edge.
pub fn cycle(dut: &mut dyn PortDut, env: &mut dyn Env) -> Result<(), Mismatch> {
    env.drive(dut);
    dut.settle()?;
    env.observe(dut);
    dut.tick();
    Ok(())
}

/// The response of a transaction: 0 OKAY, 2 SLVERR, 3 DECERR.
pub type Resp = u8;

/// Cycles a transaction may take before the bench gives up (a hung slave).
const TIMEOUT: u64 = 1000;

pub struct AxilMaster {
    awaddr: usize,
    awvalid: usize,
    awready: usize,
    wdata: usize,
    wstrb: usize,
    wvalid: usize,
    wready: usize,
    bresp: usize,
    bvalid: usize,
    bready: usize,
    araddr: usize,
    arvalid: usize,
    arready: usize,
    rdata: usize,
    rresp: usize,
    rvalid: usize,
    rready: usize,
    rng: Rng,
    /// Chance that the master holds a response ready low for another cycle.
    pub stall: f64,
}

/// A slave that never answered.
#[derive(Debug)]
pub enum BusError {
    Mismatch(Mismatch),
    Timeout {
        what: &'static str,
        addr: u32,
    },
    /// An error response (2 SLVERR, 3 DECERR) where the caller needed OKAY.
    Response {
        addr: u32,
        resp: Resp,
    },
}

impl From<Mismatch> for BusError {
    fn from(m: Mismatch) -> Self {
        BusError::Mismatch(m)
    }
}

impl std::fmt::Display for BusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BusError::Mismatch(m) => m.fmt(f),
            BusError::Timeout { what, addr } => {
                write!(
                    f,
                    "AXI4-Lite {what} of {addr:#x}: no answer in {TIMEOUT} cycles"
                )
            }
            BusError::Response { addr, resp } => {
                let name = match resp {
                    2 => "SLVERR",
                    3 => "DECERR",
                    _ => "an error",
                };
                write!(f, "AXI4-Lite access of {addr:#x} answered {name}")
            }
        }
    }
}

impl std::error::Error for BusError {}

impl AxilMaster {
    pub fn new(dut: &dyn PortDut, seed: u64, stall: f64) -> Self {
        AxilMaster {
            awaddr: dut.input("s_axil_awaddr"),
            awvalid: dut.input("s_axil_awvalid"),
            awready: dut.output("s_axil_awready"),
            wdata: dut.input("s_axil_wdata"),
            wstrb: dut.input("s_axil_wstrb"),
            wvalid: dut.input("s_axil_wvalid"),
            wready: dut.output("s_axil_wready"),
            bresp: dut.output("s_axil_bresp"),
            bvalid: dut.output("s_axil_bvalid"),
            bready: dut.input("s_axil_bready"),
            araddr: dut.input("s_axil_araddr"),
            arvalid: dut.input("s_axil_arvalid"),
            arready: dut.output("s_axil_arready"),
            rdata: dut.output("s_axil_rdata"),
            rresp: dut.output("s_axil_rresp"),
            rvalid: dut.output("s_axil_rvalid"),
            rready: dut.input("s_axil_rready"),
            rng: Rng::new(seed),
            stall,
        }
    }

    /// Runs cycles (with `env`) until every output of `high` is high in a settled cycle, with
    /// `ready` (if given) driven randomly high meanwhile; takes that edge and returns the
    /// outputs `read` as they were in it.
    #[allow(clippy::too_many_arguments)]
    fn until(
        &mut self,
        dut: &mut dyn PortDut,
        env: &mut dyn Env,
        high: &[usize],
        ready: Option<usize>,
        read: &[usize],
        what: &'static str,
        addr: u32,
    ) -> Result<Vec<u64>, BusError> {
        for _ in 0..TIMEOUT {
            let r = ready.map(|p| {
                let up = !self.rng.chance(self.stall);
                dut.set(p, u64::from(up));
                up
            });
            env.drive(dut);
            dut.settle()?;
            env.observe(dut);
            let fire = high.iter().all(|&o| dut.get(o) != 0) && r.unwrap_or(true);
            let got = read.iter().map(|&o| dut.get(o)).collect();
            dut.tick();
            if fire {
                if let Some(p) = ready {
                    dut.set(p, 0);
                }
                return Ok(got);
            }
        }
        Err(BusError::Timeout { what, addr })
    }

    /// A write of `data` with byte strobes `strb`; returns the response.
    pub fn write_strb(
        &mut self,
        dut: &mut dyn PortDut,
        addr: u32,
        data: u32,
        strb: u8,
    ) -> Result<Resp, BusError> {
        self.write_strb_env(dut, &mut NoEnv, addr, data, strb)
    }

    /// [`AxilMaster::write_strb`] with `env` running on every cycle.
    pub fn write_strb_env(
        &mut self,
        dut: &mut dyn PortDut,
        env: &mut dyn Env,
        addr: u32,
        data: u32,
        strb: u8,
    ) -> Result<Resp, BusError> {
        dut.set(self.awaddr, u64::from(addr));
        dut.set(self.wdata, u64::from(data));
        dut.set(self.wstrb, u64::from(strb));
        dut.set(self.awvalid, 1);
        dut.set(self.wvalid, 1);
        // This slave takes address and data together.
        let (aw, w) = (self.awready, self.wready);
        self.until(dut, env, &[aw, w], None, &[], "write", addr)?;
        dut.set(self.awvalid, 0);
        dut.set(self.wvalid, 0);
        // The response is registered: visible from the next cycle on.
        let (bvalid, bready, bresp) = (self.bvalid, self.bready, self.bresp);
        let got = self.until(
            dut,
            env,
            &[bvalid],
            Some(bready),
            &[bresp],
            "write response",
            addr,
        )?;
        Ok(got[0] as Resp)
    }

    /// A whole-word write.
    pub fn write(&mut self, dut: &mut dyn PortDut, addr: u32, data: u32) -> Result<Resp, BusError> {
        self.write_strb(dut, addr, data, 0xF)
    }

    /// A read; returns the data and the response.
    pub fn read(&mut self, dut: &mut dyn PortDut, addr: u32) -> Result<(u32, Resp), BusError> {
        self.read_env(dut, &mut NoEnv, addr)
    }

    /// [`AxilMaster::read`] with `env` running on every cycle.
    pub fn read_env(
        &mut self,
        dut: &mut dyn PortDut,
        env: &mut dyn Env,
        addr: u32,
    ) -> Result<(u32, Resp), BusError> {
        dut.set(self.araddr, u64::from(addr));
        dut.set(self.arvalid, 1);
        let arready = self.arready;
        self.until(dut, env, &[arready], None, &[], "read", addr)?;
        dut.set(self.arvalid, 0);
        let (rvalid, rready, rdata, rresp) = (self.rvalid, self.rready, self.rdata, self.rresp);
        let got = self.until(
            dut,
            env,
            &[rvalid],
            Some(rready),
            &[rdata, rresp],
            "read data",
            addr,
        )?;
        Ok((got[0] as u32, got[1] as Resp))
    }
}
