//! The NIC as the host sees it: the CSR port (AXI4-Lite) and register file of the
//! `rnic-regmap` map, in front of the receive parser, whose counters the host reads. RoCEv2
//! frames the parser accepts go to the transport (none yet: consumed and counted); the
//! frames it bypasses (ARP, IP, ...) leave on `m_bypass_*` for the raw receive ring.
//!
//! The register settings the engines read come out of the file's storage word by word; the
//! word numbers are those of [`crate::host_regs`] (checked by its tests against the slices
//! used here).

use rust_hdl::prelude::*;

use crate::axil_slave::{ADDR_BITS, AxilSlave};
use crate::csr_file::CsrFile;
use crate::host_regs::{HOST_BUILD, table};
use crate::rx_parser::RxParser;

#[derive(LogicBlock)]
pub struct HostNic {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// The MAC's link state (STATUS.LINK_UP).
    pub link_up: Signal<In, Bit>,
    pub s_axil_awaddr: Signal<In, Bits<ADDR_BITS>>,
    pub s_axil_awvalid: Signal<In, Bit>,
    pub s_axil_awready: Signal<Out, Bit>,
    pub s_axil_wdata: Signal<In, Bits<32>>,
    pub s_axil_wstrb: Signal<In, Bits<4>>,
    pub s_axil_wvalid: Signal<In, Bit>,
    pub s_axil_wready: Signal<Out, Bit>,
    pub s_axil_bresp: Signal<Out, Bits<2>>,
    pub s_axil_bvalid: Signal<Out, Bit>,
    pub s_axil_bready: Signal<In, Bit>,
    pub s_axil_araddr: Signal<In, Bits<ADDR_BITS>>,
    pub s_axil_arvalid: Signal<In, Bit>,
    pub s_axil_arready: Signal<Out, Bit>,
    pub s_axil_rdata: Signal<Out, Bits<32>>,
    pub s_axil_rresp: Signal<Out, Bits<2>>,
    pub s_axil_rvalid: Signal<Out, Bit>,
    pub s_axil_rready: Signal<In, Bit>,
    /// Frames from the MAC.
    pub s_axis_tdata: Signal<In, Bits<64>>,
    pub s_axis_tkeep: Signal<In, Bits<8>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tuser: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    /// Frames that are not RoCEv2.
    pub m_bypass_tdata: Signal<Out, Bits<64>>,
    pub m_bypass_tkeep: Signal<Out, Bits<8>>,
    pub m_bypass_tlast: Signal<Out, Bit>,
    pub m_bypass_tvalid: Signal<Out, Bit>,
    pub m_bypass_tuser: Signal<Out, Bit>,
    pub m_bypass_tready: Signal<In, Bit>,
    /// The interrupt: a pending cause that is enabled.
    pub irq: Signal<Out, Bit>,

    axil: AxilSlave,
    csr: CsrFile,
    rx: RxParser,
    status: Signal<Local, Bits<768>>,
    store: Signal<Local, Bits<768>>,
    k_zero32: Constant<Bits<32>>,
    k_zero_load_en: Constant<Bits<4>>,
    k_zero_load: Constant<Bits<128>>,
    k_link_up: Constant<Bits<768>>,
    k_reset_done: Constant<Bits<768>>,
}

impl HostNic {
    pub fn new() -> Self {
        let entries = table(&HOST_BUILD).expect("the host register table");
        HostNic {
            clock: Default::default(),
            reset: Default::default(),
            link_up: Default::default(),
            s_axil_awaddr: Default::default(),
            s_axil_awvalid: Default::default(),
            s_axil_awready: Default::default(),
            s_axil_wdata: Default::default(),
            s_axil_wstrb: Default::default(),
            s_axil_wvalid: Default::default(),
            s_axil_wready: Default::default(),
            s_axil_bresp: Default::default(),
            s_axil_bvalid: Default::default(),
            s_axil_bready: Default::default(),
            s_axil_araddr: Default::default(),
            s_axil_arvalid: Default::default(),
            s_axil_arready: Default::default(),
            s_axil_rdata: Default::default(),
            s_axil_rresp: Default::default(),
            s_axil_rvalid: Default::default(),
            s_axil_rready: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tuser: Default::default(),
            s_axis_tready: Default::default(),
            m_bypass_tdata: Default::default(),
            m_bypass_tkeep: Default::default(),
            m_bypass_tlast: Default::default(),
            m_bypass_tvalid: Default::default(),
            m_bypass_tuser: Default::default(),
            m_bypass_tready: Default::default(),
            irq: Default::default(),
            axil: Default::default(),
            csr: CsrFile::new(entries),
            rx: RxParser::new(),
            status: Default::default(),
            store: Default::default(),
            k_zero32: Constant::new(bits::<32>(0)),
            k_zero_load_en: Constant::new(bits::<4>(0)),
            k_zero_load: Constant::new(bits::<128>(0)),
            k_link_up: Constant::new(bit_cast::<768, 1>(bits::<1>(1)) << 512),
            k_reset_done: Constant::new(bit_cast::<768, 1>(bits::<1>(1)) << 513),
        }
    }
}

impl Default for HostNic {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for HostNic {
    #[hdl_gen]
    fn update(&mut self) {
        self.axil.clock.next = self.clock.val();
        self.csr.clock.next = self.clock.val();
        self.rx.clock.next = self.clock.val();
        self.axil.reset.next = self.reset.val();
        self.csr.reset.next = self.reset.val();

        // ---- CSR port and register file.
        self.axil.s_axil_awaddr.next = self.s_axil_awaddr.val();
        self.axil.s_axil_awvalid.next = self.s_axil_awvalid.val();
        self.s_axil_awready.next = self.axil.s_axil_awready.val();
        self.axil.s_axil_wdata.next = self.s_axil_wdata.val();
        self.axil.s_axil_wstrb.next = self.s_axil_wstrb.val();
        self.axil.s_axil_wvalid.next = self.s_axil_wvalid.val();
        self.s_axil_wready.next = self.axil.s_axil_wready.val();
        self.s_axil_bresp.next = self.axil.s_axil_bresp.val();
        self.s_axil_bvalid.next = self.axil.s_axil_bvalid.val();
        self.axil.s_axil_bready.next = self.s_axil_bready.val();
        self.axil.s_axil_araddr.next = self.s_axil_araddr.val();
        self.axil.s_axil_arvalid.next = self.s_axil_arvalid.val();
        self.s_axil_arready.next = self.axil.s_axil_arready.val();
        self.s_axil_rdata.next = self.axil.s_axil_rdata.val();
        self.s_axil_rresp.next = self.axil.s_axil_rresp.val();
        self.s_axil_rvalid.next = self.axil.s_axil_rvalid.val();
        self.axil.s_axil_rready.next = self.s_axil_rready.val();
        self.csr.wr_en.next = self.axil.reg_wr_en.val();
        self.csr.wr_addr.next = self.axil.reg_wr_addr.val();
        self.csr.wr_data.next = self.axil.reg_wr_data.val();
        self.axil.reg_wr_hit.next = self.csr.wr_hit.val();
        self.csr.rd_addr.next = self.axil.reg_rd_addr.val();
        self.axil.reg_rd_data.next = self.csr.rd_data.val();
        self.axil.reg_rd_hit.next = self.csr.rd_hit.val();
        self.store.next = self.csr.store.val();

        // CTRL.RESET (bit 0 of word 0) resets the datapath.
        self.rx.reset.next = self.reset.val() | self.store.val().get_bit(0);

        // ---- Status words (host_regs::ST_*): receive counters 0..11, TX_FRAMES 12, DMA
        // read and write errors 13, 14, ring errors 15, STATUS 16.
        self.status.next = bit_cast::<768, 32>(self.rx.cnt_frames.val())
            | (bit_cast::<768, 32>(self.rx.cnt_accepted.val()) << 32)
            | (bit_cast::<768, 32>(self.rx.cnt_bypass.val()) << 64)
            | (bit_cast::<768, 32>(self.rx.cnt_drop_oversize.val()) << 96)
            | (bit_cast::<768, 32>(self.rx.cnt_drop_truncated.val()) << 128)
            | (bit_cast::<768, 32>(self.rx.cnt_drop_fragment.val()) << 160)
            | (bit_cast::<768, 32>(self.rx.cnt_drop_checksum.val()) << 192)
            | (bit_cast::<768, 32>(self.rx.cnt_drop_length.val()) << 224)
            | (bit_cast::<768, 32>(self.rx.cnt_drop_tver.val()) << 256)
            | (bit_cast::<768, 32>(self.rx.cnt_drop_opcode.val()) << 288)
            | (bit_cast::<768, 32>(self.rx.cnt_drop_padcnt.val()) << 320)
            | (bit_cast::<768, 32>(self.rx.cnt_drop_icrc.val()) << 352);
        if self.link_up.val() {
            self.status.next = self.status.val() | self.k_link_up.val();
        }
        if !self.reset.val() {
            self.status.next = self.status.val() | self.k_reset_done.val();
        }
        self.csr.status.next = self.status.val();
        self.csr.irq_set.next = self.k_zero32.val();
        self.csr.load_en.next = self.k_zero_load_en.val();
        self.csr.load_data.next = self.k_zero_load.val();
        // IRQ_STATUS (word 2) & IRQ_ENABLE (word 1).
        self.irq.next =
            (self.store.val().get_bits::<32>(64) & self.store.val().get_bits::<32>(32)).any();

        // ---- Receive parser.
        self.rx.s_axis_tdata.next = self.s_axis_tdata.val();
        self.rx.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.rx.s_axis_tlast.next = self.s_axis_tlast.val();
        self.rx.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.rx.s_axis_tuser.next = self.s_axis_tuser.val();
        self.s_axis_tready.next = self.rx.s_axis_tready.val();
        // Accepted RoCEv2 frames: the transport's, consumed until it exists.
        self.rx.m_hdr_ready.next = true;
        self.rx.m_axis_tready.next = true;
        self.m_bypass_tdata.next = self.rx.m_bypass_tdata.val();
        self.m_bypass_tkeep.next = self.rx.m_bypass_tkeep.val();
        self.m_bypass_tlast.next = self.rx.m_bypass_tlast.val();
        self.m_bypass_tvalid.next = self.rx.m_bypass_tvalid.val();
        self.m_bypass_tuser.next = self.rx.m_bypass_tuser.val();
        self.rx.m_bypass_tready.next = self.m_bypass_tready.val();
    }
}
