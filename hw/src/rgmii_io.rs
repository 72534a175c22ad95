//! RGMII to GMII and back with the ECP5 DDR registers.
//!
//! RGMII (v2.0) carries a GMII byte per clock on 4 wires at both edges: bits 3:0 on the rising
//! edge, bits 7:4 on the falling edge; the control wire carries RX_DV / TX_EN on the rising
//! edge and DV XOR ER on the falling edge. Between frames (DV and ER both low) a PHY may report
//! its link on RXD: bit 0 link up, bits 2:1 speed, bit 3 full duplex (in-band status).

use rust_hdl::prelude::*;

use crate::ecp5_prims::{Iddrx1f, Oddrx1f};

/// The receive side: 5 `IDDRX1F` and the GMII byte they make, one cycle after the falling edge
/// that completed it.
#[derive(LogicBlock)]
pub struct RgmiiRxIo {
    pub rxc: Signal<In, Clock>,
    pub rgmii_rxd: Signal<In, Bits<4>>,
    pub rgmii_rx_ctl: Signal<In, Bit>,
    pub gmii_rxd: Signal<Out, Bits<8>>,
    pub gmii_rx_dv: Signal<Out, Bit>,
    pub gmii_rx_er: Signal<Out, Bit>,
    /// In-band link status, updated on every idle cycle.
    pub link_up: Signal<Out, Bit>,
    data: [Iddrx1f; 4],
    ctl: Iddrx1f,
    link: DFF<Bit>,
    rx_byte: Signal<Local, Bits<8>>,
    k_zero8: Constant<Bits<8>>,
}

impl Default for RgmiiRxIo {
    fn default() -> Self {
        RgmiiRxIo {
            rxc: Default::default(),
            rgmii_rxd: Default::default(),
            rgmii_rx_ctl: Default::default(),
            gmii_rxd: Default::default(),
            gmii_rx_dv: Default::default(),
            gmii_rx_er: Default::default(),
            link_up: Default::default(),
            data: Default::default(),
            ctl: Default::default(),
            link: Default::default(),
            rx_byte: Default::default(),
            k_zero8: Constant::new(bits::<8>(0)),
        }
    }
}

impl Logic for RgmiiRxIo {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, rxc, link);
        self.rx_byte.next = self.k_zero8.val();
        for i in 0..4 {
            self.data[i].sclk.next = self.rxc.val();
            self.data[i].d.next = self.rgmii_rxd.val().get_bit(i);
            self.rx_byte.next = self.rx_byte.val().replace_bit(i, self.data[i].q0.val());
            self.rx_byte.next = self.rx_byte.val().replace_bit(i + 4, self.data[i].q1.val());
        }
        self.ctl.sclk.next = self.rxc.val();
        self.ctl.d.next = self.rgmii_rx_ctl.val();
        self.gmii_rxd.next = self.rx_byte.val();
        self.gmii_rx_dv.next = self.ctl.q0.val();
        self.gmii_rx_er.next = self.ctl.q0.val() ^ self.ctl.q1.val();
        if !self.ctl.q0.val() & !self.ctl.q1.val() {
            self.link.d.next = self.rx_byte.val().get_bit(0);
        }
        self.link_up.next = self.link.q.val();
    }
}

/// The transmit side: 6 `ODDRX1F` (4 data, control, clock). The data registers run on `txc`;
/// the clock output runs on `txc90` (the same 125 MHz shifted by 90 degrees), so the clock edge
/// sits in the middle of the data eye for a PHY without its own transmit delay.
#[derive(LogicBlock)]
pub struct RgmiiTxIo {
    pub txc: Signal<In, Clock>,
    pub txc90: Signal<In, Clock>,
    pub gmii_txd: Signal<In, Bits<8>>,
    pub gmii_tx_en: Signal<In, Bit>,
    pub gmii_tx_er: Signal<In, Bit>,
    pub rgmii_txd: Signal<Out, Bits<4>>,
    pub rgmii_tx_ctl: Signal<Out, Bit>,
    pub rgmii_txc: Signal<Out, Bit>,
    data: [Oddrx1f; 4],
    ctl: Oddrx1f,
    clk: Oddrx1f,
    nib: Signal<Local, Bits<4>>,
    k_zero4: Constant<Bits<4>>,
}

impl Default for RgmiiTxIo {
    fn default() -> Self {
        RgmiiTxIo {
            txc: Default::default(),
            txc90: Default::default(),
            gmii_txd: Default::default(),
            gmii_tx_en: Default::default(),
            gmii_tx_er: Default::default(),
            rgmii_txd: Default::default(),
            rgmii_tx_ctl: Default::default(),
            rgmii_txc: Default::default(),
            data: Default::default(),
            ctl: Default::default(),
            clk: Default::default(),
            nib: Default::default(),
            k_zero4: Constant::new(bits::<4>(0)),
        }
    }
}

impl Logic for RgmiiTxIo {
    #[hdl_gen]
    fn update(&mut self) {
        self.nib.next = self.k_zero4.val();
        for i in 0..4 {
            self.data[i].sclk.next = self.txc.val();
            self.data[i].d0.next = self.gmii_txd.val().get_bit(i);
            self.data[i].d1.next = self.gmii_txd.val().get_bit(i + 4);
            self.nib.next = self.nib.val().replace_bit(i, self.data[i].q.val());
        }
        self.ctl.sclk.next = self.txc.val();
        self.ctl.d0.next = self.gmii_tx_en.val();
        self.ctl.d1.next = self.gmii_tx_en.val() ^ self.gmii_tx_er.val();
        self.clk.sclk.next = self.txc90.val();
        self.clk.d0.next = true;
        self.clk.d1.next = false;
        self.rgmii_txd.next = self.nib.val();
        self.rgmii_tx_ctl.next = self.ctl.q.val();
        self.rgmii_txc.next = self.clk.q.val();
    }
}
