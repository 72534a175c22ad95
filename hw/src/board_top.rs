//! The board top: pins, PLL, resets, the RGMII MAC, the clock-domain crossings, the core and
//! the LEDs. One design for every board; a board differs by its input clock (PLL settings)
//! and its LED count.
//!
//! ```text
//! clk_in -> EHXPLLL -> tx 125 MHz, tx 125 MHz +90 deg, core clock
//! rgmii rx (rxc) -> MAC rx -> frame FIFO -> CdcFifo -> CoreSlot (core clock) -> CdcFifo
//!   -> MAC tx (tx clock) -> rgmii tx
//! ```
//!
//! The core (the packet layer in loopback, [`CoreSlot`]) sends every frame back out of the same
//! port: a RoCEv2 frame rebuilt from its parsed fields, anything else unchanged; a RoCEv2 frame
//! that fails a check is dropped, and a frame the MAC found bad goes out with an inverted FCS,
//! so the first switch or NIC drops it. The PHY reset is held
//! released: on the Colorlight 5A-75B the FPGA's clock comes from a PHY, so resetting the PHYs
//! would stop the FPGA's own clock.

use rust_hdl::prelude::*;

use crate::cdc::{CdcFifo, PulseSync};
use crate::core_slot::CoreSlot;
use crate::ecp5_prims::{Ehxplll, PllConfig, with_sim_models};
use crate::reset_sync::ResetSync;
use crate::rgmii_mac::RgmiiMac;
use crate::status_leds::StatusLeds;

#[derive(LogicBlock)]
pub struct BoardTop<const L: usize> {
    pub clk_in: Signal<In, Clock>,
    pub rgmii_rxc: Signal<In, Clock>,
    pub rgmii_rxd: Signal<In, Bits<4>>,
    pub rgmii_rx_ctl: Signal<In, Bit>,
    pub rgmii_txc: Signal<Out, Bit>,
    pub rgmii_txd: Signal<Out, Bits<4>>,
    pub rgmii_tx_ctl: Signal<Out, Bit>,
    pub phy_rst_n: Signal<Out, Bit>,
    pub led_n: Signal<Out, Bits<L>>,
    pll: Ehxplll,
    rst_rx: ResetSync,
    rst_tx: ResetSync,
    rst_core: ResetSync,
    mac: RgmiiMac,
    rx_cdc: CdcFifo,
    core: CoreSlot,
    tx_cdc: CdcFifo,
    sync_rx_good: PulseSync,
    sync_rx_drop: PulseSync,
    sync_tx_sent: PulseSync,
    link_s1: DFF<Bit>,
    link_s2: DFF<Bit>,
    leds: StatusLeds<L>,
    rx_word: Signal<Local, Bits<74>>,
    tx_word: Signal<Local, Bits<74>>,
    core_in: Signal<Local, Bits<74>>,
    tx_out: Signal<Local, Bits<74>>,
}

impl<const L: usize> BoardTop<L> {
    pub fn new(pll: PllConfig) -> Self {
        BoardTop {
            clk_in: Default::default(),
            rgmii_rxc: Default::default(),
            rgmii_rxd: Default::default(),
            rgmii_rx_ctl: Default::default(),
            rgmii_txc: Default::default(),
            rgmii_txd: Default::default(),
            rgmii_tx_ctl: Default::default(),
            phy_rst_n: Default::default(),
            led_n: Default::default(),
            pll: Ehxplll::new(pll),
            rst_rx: Default::default(),
            rst_tx: Default::default(),
            rst_core: Default::default(),
            mac: RgmiiMac::new(),
            rx_cdc: Default::default(),
            core: Default::default(),
            tx_cdc: Default::default(),
            sync_rx_good: Default::default(),
            sync_rx_drop: Default::default(),
            sync_tx_sent: Default::default(),
            link_s1: Default::default(),
            link_s2: Default::default(),
            leds: Default::default(),
            rx_word: Default::default(),
            tx_word: Default::default(),
            core_in: Default::default(),
            tx_out: Default::default(),
        }
    }
}

impl<const L: usize> Logic for BoardTop<L> {
    #[hdl_gen]
    fn update(&mut self) {
        // ---- Clocks and resets.
        self.pll.clki.next = self.clk_in.val();
        self.rst_rx.clock.next = self.rgmii_rxc.val();
        self.rst_rx.arst.next = !self.pll.lock.val();
        self.rst_tx.clock.next = self.pll.clkop.val();
        self.rst_tx.arst.next = !self.pll.lock.val();
        self.rst_core.clock.next = self.pll.clkos2.val();
        self.rst_core.arst.next = !self.pll.lock.val();
        self.phy_rst_n.next = true;

        // ---- MAC.
        self.mac.rx_clk.next = self.rgmii_rxc.val();
        self.mac.rx_reset.next = self.rst_rx.rst.val();
        self.mac.rgmii_rxd.next = self.rgmii_rxd.val();
        self.mac.rgmii_rx_ctl.next = self.rgmii_rx_ctl.val();
        self.mac.tx_clk.next = self.pll.clkop.val();
        self.mac.tx_clk90.next = self.pll.clkos.val();
        self.mac.tx_reset.next = self.rst_tx.rst.val();
        self.rgmii_txd.next = self.mac.rgmii_txd.val();
        self.rgmii_tx_ctl.next = self.mac.rgmii_tx_ctl.val();
        self.rgmii_txc.next = self.mac.rgmii_txc.val();

        // ---- Receive crossing: {tuser, tlast, tkeep, tdata}.
        self.rx_cdc.write_clock.next = self.rgmii_rxc.val();
        self.rx_cdc.read_clock.next = self.pll.clkos2.val();
        self.rx_word.next = bit_cast::<74, 64>(self.mac.m_axis_tdata.val())
            | (bit_cast::<74, 8>(self.mac.m_axis_tkeep.val()) << 64);
        self.rx_word.next = self
            .rx_word
            .val()
            .replace_bit(72, self.mac.m_axis_tlast.val());
        self.rx_cdc.data_in.next = self.rx_word.val();
        self.rx_cdc.write.next = self.mac.m_axis_tvalid.val() & !self.rx_cdc.full.val();
        self.mac.m_axis_tready.next = !self.rx_cdc.full.val();

        // ---- Core.
        self.core.clock.next = self.pll.clkos2.val();
        self.core.reset.next = self.rst_core.rst.val();
        self.core_in.next = self.rx_cdc.data_out.val();
        self.core.s_axis_tdata.next = self.core_in.val().get_bits::<64>(0);
        self.core.s_axis_tkeep.next = self.core_in.val().get_bits::<8>(64);
        self.core.s_axis_tlast.next = self.core_in.val().get_bit(72);
        self.core.s_axis_tuser.next = self.core_in.val().get_bit(73);
        self.core.s_axis_tvalid.next = !self.rx_cdc.empty.val();
        self.rx_cdc.read.next = !self.rx_cdc.empty.val() & self.core.s_axis_tready.val();

        // ---- Transmit crossing.
        self.tx_cdc.write_clock.next = self.pll.clkos2.val();
        self.tx_cdc.read_clock.next = self.pll.clkop.val();
        self.tx_word.next = bit_cast::<74, 64>(self.core.m_axis_tdata.val())
            | (bit_cast::<74, 8>(self.core.m_axis_tkeep.val()) << 64);
        self.tx_word.next = self
            .tx_word
            .val()
            .replace_bit(72, self.core.m_axis_tlast.val());
        self.tx_word.next = self
            .tx_word
            .val()
            .replace_bit(73, self.core.m_axis_tuser.val());
        self.tx_cdc.data_in.next = self.tx_word.val();
        self.tx_cdc.write.next = self.core.m_axis_tvalid.val() & !self.tx_cdc.full.val();
        self.core.m_axis_tready.next = !self.tx_cdc.full.val();
        self.tx_out.next = self.tx_cdc.data_out.val();
        self.mac.s_axis_tdata.next = self.tx_out.val().get_bits::<64>(0);
        self.mac.s_axis_tkeep.next = self.tx_out.val().get_bits::<8>(64);
        self.mac.s_axis_tlast.next = self.tx_out.val().get_bit(72);
        self.mac.s_axis_tuser.next = self.tx_out.val().get_bit(73);
        self.mac.s_axis_tvalid.next = !self.tx_cdc.empty.val();
        self.tx_cdc.read.next = !self.tx_cdc.empty.val() & self.mac.s_axis_tready.val();

        // ---- Events into the core domain, and the LEDs.
        self.sync_rx_good.src_clock.next = self.rgmii_rxc.val();
        self.sync_rx_good.src_pulse.next = self.mac.rx_good.val();
        self.sync_rx_good.dst_clock.next = self.pll.clkos2.val();
        self.sync_rx_drop.src_clock.next = self.rgmii_rxc.val();
        self.sync_rx_drop.src_pulse.next = self.mac.rx_dropped.val();
        self.sync_rx_drop.dst_clock.next = self.pll.clkos2.val();
        self.sync_tx_sent.src_clock.next = self.pll.clkop.val();
        self.sync_tx_sent.src_pulse.next = self.mac.tx_sent.val();
        self.sync_tx_sent.dst_clock.next = self.pll.clkos2.val();
        self.link_s1.clock.next = self.pll.clkos2.val();
        self.link_s2.clock.next = self.pll.clkos2.val();
        self.link_s1.d.next = self.mac.link_up.val();
        self.link_s2.d.next = self.link_s1.q.val();

        self.leds.clock.next = self.pll.clkos2.val();
        self.leds.reset.next = self.rst_core.rst.val();
        self.leds.link.next = self.link_s2.q.val();
        self.leds.rx_frame.next = self.sync_rx_good.dst_pulse.val();
        self.leds.tx_frame.next = self.sync_tx_sent.dst_pulse.val();
        self.leds.fcs_bad.next = self.sync_rx_drop.dst_pulse.val();
        self.leds.core_bad.next = self.core.frame_bad.val();
        self.led_n.next = self.leds.led_n.val();
    }
}

fn checked_verilog<B: Block>(mut uut: B) -> String {
    uut.connect_all();
    if let Err(e) = check_all(&uut) {
        panic!("rust-hdl check failed: {e:?}");
    }
    with_sim_models(generate_verilog(&uut))
}

/// The Verilog of a board top with `leds` LEDs (1 or 12) from a PLL setting, with the
/// simulation models of the ECP5 cells appended (skipped by synthesis).
pub fn board_verilog(pll: PllConfig, leds: usize) -> Result<String, String> {
    match leds {
        1 => Ok(checked_verilog(BoardTop::<1>::new(pll))),
        12 => Ok(checked_verilog(BoardTop::<12>::new(pll))),
        n => Err(format!("a board top drives 1 or 12 LEDs, not {n}")),
    }
}

/// The Verilog of the core alone, as it sits in the board (for `rnic build --core-only`).
pub fn core_verilog() -> String {
    checked_verilog(CoreSlot::default())
}

/// The Verilog of the MAC alone (for its lock-step top).
pub fn mac_verilog() -> String {
    checked_verilog(RgmiiMac::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_top_generates() {
        let v = board_verilog(PllConfig::new(25.0, 100.0).unwrap(), 1).unwrap();
        assert!(v.contains("EHXPLLL #("), "the PLL is instantiated");
        assert_eq!(v.matches("IDDRX1F iddr(").count(), 5);
        assert_eq!(v.matches("ODDRX1F oddr(").count(), 6);
        assert_eq!(
            v.matches("module IDDRX1F(").count(),
            1,
            "one simulation model"
        );
        let v12 = board_verilog(PllConfig::new(100.0, 100.0).unwrap(), 12).unwrap();
        assert!(v12.contains("output reg [11:0] led_n") || v12.contains("[11:0] led_n"));
        assert!(board_verilog(PllConfig::new(25.0, 100.0).unwrap(), 3).is_err());
        if let Ok(dir) = std::env::var("RNIC_DUMP_VERILOG") {
            std::fs::write(format!("{dir}/board1.v"), &v).unwrap();
            std::fs::write(format!("{dir}/board12.v"), &v12).unwrap();
            std::fs::write(format!("{dir}/mac.v"), mac_verilog()).unwrap();
            std::fs::write(format!("{dir}/core.v"), core_verilog()).unwrap();
        }
    }
}
