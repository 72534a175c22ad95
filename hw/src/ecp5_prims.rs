//! ECP5 primitives the board wrapper needs: the DDR input and output registers (`IDDRX1F`,
//! `ODDRX1F`), the PLL (`EHXPLLL`), and (for the frame FIFO) the block RAM `DP16KD`.
//!
//! Each is a rust-hdl block with two faces:
//! - a simulation model in Rust (`update`), so rust-hdl's simulator runs designs that use it;
//! - Verilog that instantiates the vendor cell by name (a [`Wrapper`]), which yosys'
//!   `synth_ecp5` maps to the real primitive.
//!
//! For Verilator, [`SIM_MODELS`] holds behavioural Verilog modules with the cells' names and
//! ports, guarded by `` `ifndef SYNTHESIS `` (yosys defines `SYNTHESIS`, Verilator does not), so
//! the same generated file is synthesized with the real cells and simulated with the models.
//! [`with_sim_models`] appends them once per file (rust-hdl would emit a wrapper's `cores` once
//! per instance, which would define the modules several times).
//!
//! Timing in both models (IDDRX1F, ODDRX1F):
//! - `IDDRX1F`: `D` is sampled on every rising and every falling edge of `SCLK`; on the next
//!   rising edge `Q0` shows the rising-edge sample and `Q1` the falling-edge sample that
//!   followed it. RGMII puts bits 3:0 (and RX_DV) on the rising edge, so `Q0` carries them.
//! - `ODDRX1F`: `D0` and `D1` are captured on the rising edge of `SCLK`; `Q` shows `D0` while
//!   `SCLK` is high and `D1` while it is low.
//! - `EHXPLLL`: the simulation models forward `CLKI` to every output and hold `LOCK` high;
//!   they exist so that a board top elaborates and verilates, not to model the PLL.

use rust_hdl::prelude::*;

/// Behavioural models of the ECP5 cells used here, for simulators only.
pub const SIM_MODELS: &str = r#"
`ifndef SYNTHESIS
// Simulation models of ECP5 cells (rnic-hw ecp5_prims.rs); yosys uses its own cells.
module IDDRX1F(input D, input SCLK, input RST, output reg Q0, output reg Q1);
  reg pos;
  reg neg;
  initial begin pos = 1'b0; neg = 1'b0; Q0 = 1'b0; Q1 = 1'b0; end
  always @(posedge SCLK) begin
    pos <= D;
    Q0 <= pos;
    Q1 <= neg;
  end
  always @(negedge SCLK) neg <= D;
endmodule

module ODDRX1F(input D0, input D1, input SCLK, input RST, output Q);
  reg r0;
  reg r1;
  initial begin r0 = 1'b0; r1 = 1'b0; end
  always @(posedge SCLK) begin
    r0 <= D0;
    r1 <= D1;
  end
  assign Q = SCLK ? r0 : r1;
endmodule

module EHXPLLL(input CLKI, input CLKFB, input RST, input STDBY, input PHASESEL0,
  input PHASESEL1, input PHASEDIR, input PHASESTEP, input PHASELOADREG, input PLLWAKESYNC,
  input ENCLKOP, input ENCLKOS, input ENCLKOS2, input ENCLKOS3,
  output CLKOP, output CLKOS, output CLKOS2, output CLKOS3, output LOCK, output INTLOCK,
  output REFCLK, output CLKINTFB);
  parameter CLKI_DIV = 1;
  parameter CLKFB_DIV = 1;
  parameter CLKOP_DIV = 8;
  parameter CLKOS_DIV = 8;
  parameter CLKOS2_DIV = 8;
  parameter CLKOS3_DIV = 8;
  parameter CLKOP_ENABLE = "ENABLED";
  parameter CLKOS_ENABLE = "DISABLED";
  parameter CLKOS2_ENABLE = "DISABLED";
  parameter CLKOS3_ENABLE = "DISABLED";
  parameter CLKOP_CPHASE = 0;
  parameter CLKOS_CPHASE = 0;
  parameter CLKOS2_CPHASE = 0;
  parameter CLKOS3_CPHASE = 0;
  parameter CLKOP_FPHASE = 0;
  parameter CLKOS_FPHASE = 0;
  parameter CLKOS2_FPHASE = 0;
  parameter CLKOS3_FPHASE = 0;
  parameter FEEDBK_PATH = "CLKOP";
  parameter OUTDIVIDER_MUXA = "DIVA";
  parameter OUTDIVIDER_MUXB = "DIVB";
  parameter OUTDIVIDER_MUXC = "DIVC";
  parameter OUTDIVIDER_MUXD = "DIVD";
  parameter PLLRST_ENA = "DISABLED";
  parameter INTFB_WAKE = "DISABLED";
  parameter STDBY_ENABLE = "DISABLED";
  parameter DPHASE_SOURCE = "DISABLED";
  // Not a PLL: every output follows the input clock (structural simulation only).
  assign CLKOP = CLKI;
  assign CLKOS = CLKI;
  assign CLKOS2 = CLKI;
  assign CLKOS3 = CLKI;
  assign LOCK = 1'b1;
  assign INTLOCK = 1'b1;
  assign REFCLK = CLKI;
  assign CLKINTFB = CLKI;
endmodule
`endif
"#;

/// Appends [`SIM_MODELS`] and [`dp16kd_model`] to a generated Verilog file.
pub fn with_sim_models(mut verilog: String) -> String {
    verilog.push_str(SIM_MODELS);
    verilog.push_str(&dp16kd_model());
    verilog
}

/// `{P13, P12, ..., P0}`: the pins `P<hi-1>` down to `P<lo>` as one vector.
fn pin_vector(prefix: &str, lo: usize, hi: usize) -> String {
    let pins: Vec<String> = (lo..hi).rev().map(|i| format!("{prefix}{i}")).collect();
    format!("{{{}}}", pins.join(", "))
}

/// A behavioural model of the block RAM cell `DP16KD` in the one configuration the design
/// uses (the frame FIFO's [`crate::frame_fifo::Bram73`]): 512 words of 36 bits,
/// pseudo-dual-port, written on port A (word address `ADA13:5`, byte enables `ADA3:0`, data
/// `DIB17:0, DIA17:0`) and read on port B (word address `ADB13:5`, data `DOB17:0, DOA17:0`).
/// `CEB` latches the read address; with `REGMODE_A` and `REGMODE_B` both `"OUTREG"` the next
/// edge with `OCEB` high loads the output register from the latched address, otherwise the
/// word shows directly. Words start at zero, like the rust-hdl model. For simulators only.
pub fn dp16kd_model() -> String {
    let mut ports: Vec<String> = Vec::new();
    for side in ["A", "B"] {
        for p in ["CLK", "CE", "OCE", "WE", "RST", "CS0", "CS1", "CS2"] {
            let name = match p.strip_prefix("CS") {
                Some(n) => format!("CS{side}{n}"),
                None => format!("{p}{side}"),
            };
            ports.push(format!("input {name}"));
        }
        for i in 0..14 {
            ports.push(format!("input AD{side}{i}"));
        }
        for i in 0..18 {
            ports.push(format!("input DI{side}{i}"));
        }
        for i in 0..18 {
            ports.push(format!("output DO{side}{i}"));
        }
    }
    let mut port_lines = String::new();
    for chunk in ports.chunks(8) {
        port_lines.push_str("  ");
        port_lines.push_str(&chunk.join(", "));
        port_lines.push_str(",\n");
    }
    port_lines.truncate(port_lines.len() - 2);
    let mut params = String::new();
    for (name, default) in [
        ("DATA_WIDTH_A", "18"),
        ("DATA_WIDTH_B", "18"),
        ("REGMODE_A", "\"NOREG\""),
        ("REGMODE_B", "\"NOREG\""),
        ("RESETMODE", "\"SYNC\""),
        ("ASYNC_RESET_RELEASE", "\"SYNC\""),
        ("CSDECODE_A", "\"0b000\""),
        ("CSDECODE_B", "\"0b000\""),
        ("WRITEMODE_A", "\"NORMAL\""),
        ("WRITEMODE_B", "\"NORMAL\""),
        ("GSR", "\"ENABLED\""),
    ] {
        params.push_str(&format!("  parameter {name} = {default};\n"));
    }
    format!(
        "
`ifndef SYNTHESIS
// Simulation model of DP16KD, 512 x 36 pseudo-dual-port only (rnic-hw ecp5_prims.rs).
module DP16KD(
{port_lines});
{params}  wire [8:0] wa = {wa};
  wire [3:0] be = {be};
  wire [35:0] di = {{{dib}, {dia}}};
  wire [8:0] ra_in = {rb};
  reg [35:0] mem[0:511];
  reg [8:0] ra;
  reg [35:0] q;
  integer i;
  initial begin
    for (i = 0; i < 512; i = i + 1) mem[i] = 36'b0;
    ra = 9'b0;
    q = 36'b0;
  end
  always @(posedge CLKA) begin
    if (CEA && WEA) begin
      if (be[0]) mem[wa][8:0] <= di[8:0];
      if (be[1]) mem[wa][17:9] <= di[17:9];
      if (be[2]) mem[wa][26:18] <= di[26:18];
      if (be[3]) mem[wa][35:27] <= di[35:27];
    end
  end
  always @(posedge CLKB) begin
    if (CEB) ra <= ra_in;
    if (OCEB) q <= mem[ra];
  end
  wire [35:0] dout = (REGMODE_A == \"OUTREG\" && REGMODE_B == \"OUTREG\") ? q : mem[ra];
  assign {{{dob}, {doa}}} = dout;
endmodule
`endif
",
        wa = pin_vector("ADA", 5, 14),
        be = pin_vector("ADA", 0, 4),
        rb = pin_vector("ADB", 5, 14),
        dia = pin_vector("DIA", 0, 18),
        dib = pin_vector("DIB", 0, 18),
        doa = pin_vector("DOA", 0, 18),
        dob = pin_vector("DOB", 0, 18),
    )
}

/// `IDDRX1F`: one DDR input bit, two single-rate outputs (see the module docs for timing).
#[derive(LogicBlock, Default)]
pub struct Iddrx1f {
    /// Pad input (must come straight from a top-level port in a real design).
    pub d: Signal<In, Bit>,
    pub sclk: Signal<In, Clock>,
    /// The rising-edge sample.
    pub q0: Signal<Out, Bit>,
    /// The falling-edge sample that followed it.
    pub q1: Signal<Out, Bit>,
    _pos: bool,
    _neg: bool,
}

impl Logic for Iddrx1f {
    fn update(&mut self) {
        if self.sclk.pos_edge() {
            self.q0.next = self._pos;
            self.q1.next = self._neg;
            self._pos = self.d.val();
        }
        if self.sclk.neg_edge() {
            self._neg = self.d.val();
        }
    }

    fn connect(&mut self) {
        self.q0.connect();
        self.q1.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Wrapper(Wrapper {
            code: "IDDRX1F iddr(.D(d), .SCLK(sclk), .RST(1'b0), .Q0(q0), .Q1(q1));\n".into(),
            cores: String::new(),
        })
    }
}

/// `ODDRX1F`: two single-rate bits out as one DDR output (see the module docs for timing).
#[derive(LogicBlock, Default)]
pub struct Oddrx1f {
    /// Shown while `sclk` is high.
    pub d0: Signal<In, Bit>,
    /// Shown while `sclk` is low.
    pub d1: Signal<In, Bit>,
    pub sclk: Signal<In, Clock>,
    /// Pad output (must go straight to a top-level port in a real design).
    pub q: Signal<Out, Bit>,
    _r0: bool,
    _r1: bool,
}

impl Logic for Oddrx1f {
    fn update(&mut self) {
        if self.sclk.pos_edge() {
            self._r0 = self.d0.val();
            self._r1 = self.d1.val();
        }
        self.q.next = if self.sclk.val().clk {
            self._r0
        } else {
            self._r1
        };
    }

    fn connect(&mut self) {
        self.q.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Wrapper(Wrapper {
            code: "ODDRX1F oddr(.D0(d0), .D1(d1), .SCLK(sclk), .RST(1'b0), .Q(q));\n".into(),
            cores: String::new(),
        })
    }
}

/// Settings of one EHXPLLL: a 125 MHz primary output (CLKOP, also the feedback), the same
/// frequency shifted by 90 degrees (CLKOS, for the RGMII transmit clock) and the core clock
/// (CLKOS2). Divider and phase rules follow Project Trellis' `ecppll`: VCO = input /
/// `clki_div` * `clkfb_div` * `clkop_div`, 400-800 MHz; a zero-phase output has CPHASE = half
/// the primary divider; each VCO period of extra CPHASE delays by 360 / div degrees.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PllConfig {
    pub clkin_mhz: f64,
    pub clki_div: u32,
    pub clkfb_div: u32,
    pub clkop_div: u32,
    pub clkos_div: u32,
    pub clkos2_div: u32,
    pub clkop_cphase: u32,
    pub clkos_cphase: u32,
    pub clkos2_cphase: u32,
}

/// The PFD and VCO limits of the ECP5 PLL (MHz), as `ecppll` uses them.
const PFD_MIN: f64 = 3.125;
const PFD_MAX: f64 = 400.0;
const VCO_MIN: f64 = 400.0;
const VCO_MAX: f64 = 800.0;

impl PllConfig {
    /// Finds exact dividers for 125 MHz (0 and 90 degrees) and `core_mhz` from `clkin_mhz`.
    pub fn new(clkin_mhz: f64, core_mhz: f64) -> Result<Self, String> {
        let mut best: Option<(f64, PllConfig)> = None;
        for clki_div in 1..=128u32 {
            let pfd = clkin_mhz / f64::from(clki_div);
            if !(PFD_MIN..=PFD_MAX).contains(&pfd) {
                continue;
            }
            for clkfb_div in 1..=80u32 {
                for clkop_div in 1..=128u32 {
                    let vco = pfd * f64::from(clkfb_div) * f64::from(clkop_div);
                    if !(VCO_MIN..=VCO_MAX).contains(&vco) {
                        continue;
                    }
                    let fop = vco / f64::from(clkop_div);
                    if (fop - 125.0).abs() > 1e-6 {
                        continue;
                    }
                    let core_div = (vco / core_mhz).round() as u32;
                    if core_div == 0 || core_div > 128 {
                        continue;
                    }
                    if (vco / f64::from(core_div) - core_mhz).abs() > 1e-6 {
                        continue;
                    }
                    // 90 degrees at 125 MHz = 2 ns = a quarter of the primary divider.
                    if clkop_div % 4 != 0 {
                        continue;
                    }
                    let half = clkop_div / 2;
                    let cfg = PllConfig {
                        clkin_mhz,
                        clki_div,
                        clkfb_div,
                        clkop_div,
                        clkos_div: clkop_div,
                        clkos2_div: core_div,
                        clkop_cphase: half,
                        clkos_cphase: half + clkop_div / 4,
                        clkos2_cphase: half,
                    };
                    // Prefer a VCO near 600 MHz, as ecppll does.
                    let score = (vco - 600.0).abs();
                    if best.as_ref().is_none_or(|(s, _)| score < *s) {
                        best = Some((score, cfg));
                    }
                }
            }
        }
        best.map(|(_, c)| c).ok_or_else(|| {
            format!(
                "no EHXPLLL setting makes exactly 125 MHz and {core_mhz} MHz from {clkin_mhz} MHz"
            )
        })
    }

    /// The VCO frequency in MHz.
    pub fn vco_mhz(&self) -> f64 {
        self.clkin_mhz / f64::from(self.clki_div)
            * f64::from(self.clkfb_div)
            * f64::from(self.clkop_div)
    }

    /// The core clock in MHz.
    pub fn core_mhz(&self) -> f64 {
        self.vco_mhz() / f64::from(self.clkos2_div)
    }
}

/// `EHXPLLL` configured by a [`PllConfig`].
#[derive(LogicBlock)]
pub struct Ehxplll {
    pub clki: Signal<In, Clock>,
    /// 125 MHz.
    pub clkop: Signal<Out, Clock>,
    /// 125 MHz, 90 degrees after `clkop`.
    pub clkos: Signal<Out, Clock>,
    /// The core clock.
    pub clkos2: Signal<Out, Clock>,
    pub lock: Signal<Out, Bit>,
    _cfg: PllConfig,
}

impl Ehxplll {
    pub fn new(cfg: PllConfig) -> Self {
        Ehxplll {
            clki: Default::default(),
            clkop: Default::default(),
            clkos: Default::default(),
            clkos2: Default::default(),
            lock: Default::default(),
            _cfg: cfg,
        }
    }
}

impl Logic for Ehxplll {
    fn update(&mut self) {
        self.clkop.next = self.clki.val();
        self.clkos.next = self.clki.val();
        self.clkos2.next = self.clki.val();
        self.lock.next = true;
    }

    fn connect(&mut self) {
        self.clkop.connect();
        self.clkos.connect();
        self.clkos2.connect();
        self.lock.connect();
    }

    fn hdl(&self) -> Verilog {
        let c = &self._cfg;
        let fmt = |x: f64| {
            let s = format!("{x:.6}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        };
        let code = format!(
            r#"wire clkfb;
(* FREQUENCY_PIN_CLKI="{fin}", FREQUENCY_PIN_CLKOP="125", FREQUENCY_PIN_CLKOS="125", FREQUENCY_PIN_CLKOS2="{fcore}", ICP_CURRENT="12", LPF_RESISTOR="8", MFG_ENABLE_FILTEROPAMP="1", MFG_GMCREF_SEL="2" *)
EHXPLLL #(
  .PLLRST_ENA("DISABLED"), .INTFB_WAKE("DISABLED"), .STDBY_ENABLE("DISABLED"),
  .DPHASE_SOURCE("DISABLED"), .OUTDIVIDER_MUXA("DIVA"), .OUTDIVIDER_MUXB("DIVB"),
  .OUTDIVIDER_MUXC("DIVC"), .OUTDIVIDER_MUXD("DIVD"),
  .CLKI_DIV({clki_div}), .CLKFB_DIV({clkfb_div}), .FEEDBK_PATH("INT_OP"),
  .CLKOP_ENABLE("ENABLED"), .CLKOP_DIV({clkop_div}), .CLKOP_CPHASE({op_cp}), .CLKOP_FPHASE(0),
  .CLKOS_ENABLE("ENABLED"), .CLKOS_DIV({clkos_div}), .CLKOS_CPHASE({os_cp}), .CLKOS_FPHASE(0),
  .CLKOS2_ENABLE("ENABLED"), .CLKOS2_DIV({clkos2_div}), .CLKOS2_CPHASE({os2_cp}), .CLKOS2_FPHASE(0)
) pll (
  .CLKI(clki), .CLKFB(clkfb), .CLKINTFB(clkfb), .CLKOP(clkop), .CLKOS(clkos), .CLKOS2(clkos2),
  .RST(1'b0), .STDBY(1'b0), .PHASESEL0(1'b0), .PHASESEL1(1'b0), .PHASEDIR(1'b0),
  .PHASESTEP(1'b0), .PHASELOADREG(1'b0), .PLLWAKESYNC(1'b0), .ENCLKOP(1'b0), .ENCLKOS(1'b0),
  .ENCLKOS2(1'b0), .ENCLKOS3(1'b0), .LOCK(lock)
);
"#,
            fin = fmt(c.clkin_mhz),
            fcore = fmt(c.core_mhz()),
            clki_div = c.clki_div,
            clkfb_div = c.clkfb_div,
            clkop_div = c.clkop_div,
            op_cp = c.clkop_cphase,
            clkos_div = c.clkos_div,
            os_cp = c.clkos_cphase,
            clkos2_div = c.clkos2_div,
            os2_cp = c.clkos2_cphase,
        );
        Verilog::Wrapper(Wrapper {
            code,
            cores: String::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pll_for_the_boards() {
        // 25 MHz (Colorlight): PFD 25, VCO 500 = 25 * 5 * 4; 125 = 500 / 4; 100 = 500 / 5.
        let c = PllConfig::new(25.0, 100.0).unwrap();
        assert!((c.vco_mhz() - 500.0).abs() < 1e-9, "{c:?}");
        assert_eq!((c.clkop_div, c.clkos2_div), (4, 5), "{c:?}");
        // Zero phase = half the primary divider; +90 degrees = one VCO period more.
        assert_eq!((c.clkop_cphase, c.clkos_cphase, c.clkos2_cphase), (2, 3, 2));
        // 100 MHz (ECPIX-5).
        let c = PllConfig::new(100.0, 100.0).unwrap();
        assert!((c.core_mhz() - 100.0).abs() < 1e-9, "{c:?}");
        assert!((c.vco_mhz() / f64::from(c.clkop_div) - 125.0).abs() < 1e-9);
        assert!(PllConfig::new(25.0, 99.0).is_err());
    }

    #[test]
    fn ddr_models() {
        #[derive(LogicBlock, Default)]
        struct Pair {
            clock: Signal<In, Clock>,
            d: Signal<In, Bit>,
            i: Iddrx1f,
            o: Oddrx1f,
        }
        impl Logic for Pair {
            #[hdl_gen]
            fn update(&mut self) {
                self.i.sclk.next = self.clock.val();
                self.o.sclk.next = self.clock.val();
                self.i.d.next = self.d.val();
                self.o.d0.next = self.i.q0.val();
                self.o.d1.next = self.i.q1.val();
            }
        }
        let mut p = Pair::default();
        p.connect_all();
        // Rising-edge bits 1,0,1,1 and falling-edge bits 0,0,1,0.
        let rise = [true, false, true, true, false, false];
        let fall = [false, false, true, false, false, false];
        let mut seen = vec![];
        for k in 0..6 {
            // Data settles before each edge, as on the wire.
            p.d.next = rise[k];
            assert!(simulate(&mut p, 100));
            p.clock.next = true.into();
            assert!(simulate(&mut p, 100));
            seen.push((p.i.q0.val(), p.i.q1.val(), p.o.q.val()));
            p.d.next = fall[k];
            assert!(simulate(&mut p, 100));
            p.clock.next = false.into();
            assert!(simulate(&mut p, 100));
        }
        // After edge k, IDDR shows the pair sampled in cycle k-1.
        for k in 1..6 {
            assert_eq!(
                (seen[k].0, seen[k].1),
                (rise[k - 1], fall[k - 1]),
                "cycle {k}"
            );
        }
        // The ODDR re-serializes the pair one cycle later: while high it shows d0.
        for k in 2..6 {
            assert_eq!(seen[k].2, rise[k - 2], "cycle {k}");
        }
    }
}
