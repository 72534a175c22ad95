//! The RGMII 1 GbE MAC with its 64-bit AXI-Stream faces:
//!
//! ```text
//! RGMII rx -> IDDRX1F -> MacRx -> Upsize8to64 -> FrameFifo (drops bad frames) -> m_axis
//! s_axis -> Downsize64to8 -> MacTx -> ODDRX1F -> RGMII tx
//! ```
//!
//! The receive side runs on the PHY's receive clock `rx_clk`; the transmit side on `tx_clk`
//! (125 MHz), with `tx_clk90` for the transmit clock output. Counters of good and dropped
//! frames live in the receive domain.

use rust_hdl::prelude::*;

use crate::frame_fifo::FrameFifo;
use crate::mac_rx::MacRx;
use crate::mac_tx::MacTx;
use crate::rgmii_io::{RgmiiRxIo, RgmiiTxIo};
use crate::width_conv::{Downsize64to8, Upsize8to64};

/// Address bits of the receive frame FIFO: 512 beats of 8 bytes, room for two 1518-byte
/// frames (and one 4 KiB-MTU frame).
pub const RX_FIFO_BITS: usize = 9;

#[derive(LogicBlock)]
pub struct RgmiiMac {
    // Receive domain.
    pub rx_clk: Signal<In, Clock>,
    pub rx_reset: Signal<In, Bit>,
    pub rgmii_rxd: Signal<In, Bits<4>>,
    pub rgmii_rx_ctl: Signal<In, Bit>,
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    /// Pulses per frame received with a good FCS.
    pub rx_good: Signal<Out, Bit>,
    /// Pulses per frame dropped (bad FCS, bad preamble, too short, or no room).
    pub rx_dropped: Signal<Out, Bit>,
    pub rx_good_count: Signal<Out, Bits<16>>,
    pub rx_dropped_count: Signal<Out, Bits<16>>,
    /// In-band link status from the PHY.
    pub link_up: Signal<Out, Bit>,
    // Transmit domain.
    pub tx_clk: Signal<In, Clock>,
    pub tx_clk90: Signal<In, Clock>,
    pub tx_reset: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    /// On the last beat: send the frame with an inverted FCS.
    pub s_axis_tuser: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    pub rgmii_txd: Signal<Out, Bits<4>>,
    pub rgmii_tx_ctl: Signal<Out, Bit>,
    pub rgmii_txc: Signal<Out, Bit>,
    /// Pulses per frame sent.
    pub tx_sent: Signal<Out, Bit>,

    rx_io: RgmiiRxIo,
    mac_rx: MacRx,
    up: Upsize8to64,
    fifo: FrameFifo<RX_FIFO_BITS>,
    down: Downsize64to8,
    mac_tx: MacTx,
    tx_io: RgmiiTxIo,
    good_cnt: DFF<Bits<16>>,
    drop_cnt: DFF<Bits<16>>,
    drop_any: Signal<Local, Bit>,
    k_one16: Constant<Bits<16>>,
    k_zero16: Constant<Bits<16>>,
}

impl Default for RgmiiMac {
    fn default() -> Self {
        Self::new()
    }
}

impl RgmiiMac {
    pub fn new() -> Self {
        RgmiiMac {
            rx_clk: Default::default(),
            rx_reset: Default::default(),
            rgmii_rxd: Default::default(),
            rgmii_rx_ctl: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            rx_good: Default::default(),
            rx_dropped: Default::default(),
            rx_good_count: Default::default(),
            rx_dropped_count: Default::default(),
            link_up: Default::default(),
            tx_clk: Default::default(),
            tx_clk90: Default::default(),
            tx_reset: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tuser: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            rgmii_txd: Default::default(),
            rgmii_tx_ctl: Default::default(),
            rgmii_txc: Default::default(),
            tx_sent: Default::default(),
            rx_io: Default::default(),
            mac_rx: Default::default(),
            up: Default::default(),
            fifo: Default::default(),
            down: Default::default(),
            mac_tx: Default::default(),
            tx_io: Default::default(),
            good_cnt: Default::default(),
            drop_cnt: Default::default(),
            drop_any: Default::default(),
            k_one16: Constant::new(bits::<16>(1)),
            k_zero16: Constant::new(bits::<16>(0)),
        }
    }
}

impl Logic for RgmiiMac {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, rx_clk, good_cnt, drop_cnt);
        // ---- Receive.
        self.rx_io.rxc.next = self.rx_clk.val();
        self.rx_io.rgmii_rxd.next = self.rgmii_rxd.val();
        self.rx_io.rgmii_rx_ctl.next = self.rgmii_rx_ctl.val();
        self.link_up.next = self.rx_io.link_up.val();

        self.mac_rx.clock.next = self.rx_clk.val();
        self.mac_rx.reset.next = self.rx_reset.val();
        self.mac_rx.gmii_rxd.next = self.rx_io.gmii_rxd.val();
        self.mac_rx.gmii_rx_dv.next = self.rx_io.gmii_rx_dv.val();
        self.mac_rx.gmii_rx_er.next = self.rx_io.gmii_rx_er.val();

        self.up.clock.next = self.rx_clk.val();
        self.up.reset.next = self.rx_reset.val();
        self.up.s_tdata.next = self.mac_rx.m_tdata.val();
        self.up.s_tvalid.next = self.mac_rx.m_tvalid.val();
        self.up.s_tlast.next = self.mac_rx.m_tlast.val();
        self.up.s_tuser.next = self.mac_rx.m_tuser.val();

        self.fifo.clock.next = self.rx_clk.val();
        self.fifo.reset.next = self.rx_reset.val();
        self.fifo.s_tdata.next = self.up.m_tdata.val();
        self.fifo.s_tkeep.next = self.up.m_tkeep.val();
        self.fifo.s_tlast.next = self.up.m_tlast.val();
        self.fifo.s_tuser.next = self.up.m_tuser.val();
        self.fifo.s_tvalid.next = self.up.m_tvalid.val();
        self.m_axis_tdata.next = self.fifo.m_tdata.val();
        self.m_axis_tkeep.next = self.fifo.m_tkeep.val();
        self.m_axis_tlast.next = self.fifo.m_tlast.val();
        self.m_axis_tvalid.next = self.fifo.m_tvalid.val();
        self.fifo.m_tready.next = self.m_axis_tready.val();

        // A frame is dropped by the MAC (no data byte reached the FIFO) or by the FIFO; a frame
        // that reached the FIFO bad is dropped there, so count the FIFO's drops and the MAC's
        // bad frames that never had an output byte.
        self.drop_any.next =
            self.fifo.dropped.val() | (self.mac_rx.frame_bad.val() & !self.mac_rx.m_tvalid.val());
        self.rx_good.next = self.mac_rx.frame_good.val();
        self.rx_dropped.next = self.drop_any.val();
        if self.mac_rx.frame_good.val() {
            self.good_cnt.d.next = self.good_cnt.q.val() + self.k_one16.val();
        }
        if self.drop_any.val() {
            self.drop_cnt.d.next = self.drop_cnt.q.val() + self.k_one16.val();
        }
        if self.rx_reset.val() {
            self.good_cnt.d.next = self.k_zero16.val();
            self.drop_cnt.d.next = self.k_zero16.val();
        }
        self.rx_good_count.next = self.good_cnt.q.val();
        self.rx_dropped_count.next = self.drop_cnt.q.val();

        // ---- Transmit.
        self.down.clock.next = self.tx_clk.val();
        self.down.reset.next = self.tx_reset.val();
        self.down.s_tdata.next = self.s_axis_tdata.val();
        self.down.s_tkeep.next = self.s_axis_tkeep.val();
        self.down.s_tlast.next = self.s_axis_tlast.val();
        self.down.s_tuser.next = self.s_axis_tuser.val();
        self.down.s_tvalid.next = self.s_axis_tvalid.val();
        self.s_axis_tready.next = self.down.s_tready.val();

        self.mac_tx.clock.next = self.tx_clk.val();
        self.mac_tx.reset.next = self.tx_reset.val();
        self.mac_tx.s_tdata.next = self.down.m_tdata.val();
        self.mac_tx.s_tvalid.next = self.down.m_tvalid.val();
        self.mac_tx.s_tlast.next = self.down.m_tlast.val();
        self.mac_tx.s_tuser.next = self.down.m_tuser.val();
        self.down.m_tready.next = self.mac_tx.s_tready.val();
        self.tx_sent.next = self.mac_tx.frame_sent.val();

        self.tx_io.txc.next = self.tx_clk.val();
        self.tx_io.txc90.next = self.tx_clk90.val();
        self.tx_io.gmii_txd.next = self.mac_tx.gmii_txd.val();
        self.tx_io.gmii_tx_en.next = self.mac_tx.gmii_tx_en.val();
        self.tx_io.gmii_tx_er.next = self.mac_tx.gmii_tx_er.val();
        self.rgmii_txd.next = self.tx_io.rgmii_txd.val();
        self.rgmii_tx_ctl.next = self.tx_io.rgmii_tx_ctl.val();
        self.rgmii_txc.next = self.tx_io.rgmii_txc.val();
    }
}
