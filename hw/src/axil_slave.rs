//! The CSR port: an AXI4-Lite slave (32-bit data, 24-bit byte addresses) in front of a
//! register file. One transaction of each kind at a time, as AXI4-Lite masters expect.
//!
//! Writes: the address and data are taken together (`awready` and `wready` rise in the same
//! cycle, once both are valid and no response is pending) and reach the register file as a
//! one-cycle `reg_wr_en`. Only whole-word writes are carried out: a write with `wstrb` other
//! than 0xF is answered SLVERR and changes nothing; an address the file does not decode is
//! answered DECERR. Reads: the address is registered, the file's read mux answers the next
//! cycle, and the data is registered into `rdata` (DECERR and 0 for an undecoded address).
//! Reads have no side effects.

use rust_hdl::prelude::*;

/// Address bits of the CSR window (16 MiB).
pub const ADDR_BITS: usize = 24;

/// AXI response codes.
pub const RESP_OKAY: u64 = 0;
pub const RESP_SLVERR: u64 = 2;
pub const RESP_DECERR: u64 = 3;

#[derive(LogicBlock)]
pub struct AxilSlave {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
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
    /// To the register file: a whole-word write this cycle.
    pub reg_wr_en: Signal<Out, Bit>,
    pub reg_wr_addr: Signal<Out, Bits<ADDR_BITS>>,
    pub reg_wr_data: Signal<Out, Bits<32>>,
    /// The file decodes `reg_wr_addr`.
    pub reg_wr_hit: Signal<In, Bit>,
    /// A read address taken this cycle (for block RAM behind the file, which must start its
    /// read now to answer next cycle).
    pub reg_rd_start: Signal<Out, Bit>,
    pub reg_rd_start_addr: Signal<Out, Bits<ADDR_BITS>>,
    /// The address the file's read mux answers (registered).
    pub reg_rd_addr: Signal<Out, Bits<ADDR_BITS>>,
    pub reg_rd_data: Signal<In, Bits<32>>,
    pub reg_rd_hit: Signal<In, Bit>,

    bvalid: DFF<Bit>,
    bresp: DFF<Bits<2>>,
    rd_addr: DFF<Bits<ADDR_BITS>>,
    /// A read address taken last cycle: the mux answers this cycle.
    rd_pending: DFF<Bit>,
    rvalid: DFF<Bit>,
    rdata: DFF<Bits<32>>,
    rresp: DFF<Bits<2>>,

    take_w: Signal<Local, Bit>,
    take_r: Signal<Local, Bit>,
    whole: Signal<Local, Bit>,

    k_okay: Constant<Bits<2>>,
    k_slverr: Constant<Bits<2>>,
    k_decerr: Constant<Bits<2>>,
    k_all: Constant<Bits<4>>,
    k_zero: Constant<Bits<32>>,
}

impl Default for AxilSlave {
    fn default() -> Self {
        AxilSlave {
            clock: Default::default(),
            reset: Default::default(),
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
            reg_wr_en: Default::default(),
            reg_wr_addr: Default::default(),
            reg_wr_data: Default::default(),
            reg_wr_hit: Default::default(),
            reg_rd_start: Default::default(),
            reg_rd_start_addr: Default::default(),
            reg_rd_addr: Default::default(),
            reg_rd_data: Default::default(),
            reg_rd_hit: Default::default(),
            bvalid: Default::default(),
            bresp: Default::default(),
            rd_addr: Default::default(),
            rd_pending: Default::default(),
            rvalid: Default::default(),
            rdata: Default::default(),
            rresp: Default::default(),
            take_w: Default::default(),
            take_r: Default::default(),
            whole: Default::default(),
            k_okay: Constant::new(bits::<2>(RESP_OKAY)),
            k_slverr: Constant::new(bits::<2>(RESP_SLVERR)),
            k_decerr: Constant::new(bits::<2>(RESP_DECERR)),
            k_all: Constant::new(bits::<4>(0xF)),
            k_zero: Constant::new(bits::<32>(0)),
        }
    }
}

impl Logic for AxilSlave {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, bvalid, bresp, rd_addr, rd_pending, rvalid, rdata, rresp
        );

        // ---- Writes.
        self.take_w.next =
            self.s_axil_awvalid.val() & self.s_axil_wvalid.val() & !self.bvalid.q.val();
        self.whole.next = self.s_axil_wstrb.val() == self.k_all.val();
        self.s_axil_awready.next = self.take_w.val();
        self.s_axil_wready.next = self.take_w.val();
        self.reg_wr_addr.next = self.s_axil_awaddr.val();
        self.reg_wr_data.next = self.s_axil_wdata.val();
        self.reg_wr_en.next = self.take_w.val() & self.whole.val() & self.reg_wr_hit.val();
        if self.take_w.val() {
            self.bvalid.d.next = true;
            self.bresp.d.next = self.k_okay.val();
            if !self.whole.val() {
                self.bresp.d.next = self.k_slverr.val();
            }
            if !self.reg_wr_hit.val() {
                self.bresp.d.next = self.k_decerr.val();
            }
        } else if self.s_axil_bready.val() {
            self.bvalid.d.next = false;
        }
        self.s_axil_bvalid.next = self.bvalid.q.val();
        self.s_axil_bresp.next = self.bresp.q.val();

        // ---- Reads: address register, then data register.
        self.take_r.next =
            self.s_axil_arvalid.val() & !self.rd_pending.q.val() & !self.rvalid.q.val();
        self.s_axil_arready.next = self.take_r.val();
        self.reg_rd_start.next = self.take_r.val();
        self.reg_rd_start_addr.next = self.s_axil_araddr.val();
        if self.take_r.val() {
            self.rd_addr.d.next = self.s_axil_araddr.val();
        }
        self.rd_pending.d.next = self.take_r.val();
        self.reg_rd_addr.next = self.rd_addr.q.val();
        if self.rd_pending.q.val() {
            self.rvalid.d.next = true;
            self.rdata.d.next = self.k_zero.val();
            self.rresp.d.next = self.k_decerr.val();
            if self.reg_rd_hit.val() {
                self.rdata.d.next = self.reg_rd_data.val();
                self.rresp.d.next = self.k_okay.val();
            }
        } else if self.s_axil_rready.val() {
            self.rvalid.d.next = false;
        }
        self.s_axil_rvalid.next = self.rvalid.q.val();
        self.s_axil_rdata.next = self.rdata.q.val();
        self.s_axil_rresp.next = self.rresp.q.val();

        if self.reset.val() {
            self.bvalid.d.next = false;
            self.rd_pending.d.next = false;
            self.rvalid.d.next = false;
        }
    }
}
