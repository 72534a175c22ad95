//! The NIC as the host sees it: the CSR port (AXI4-Lite) and register file of the
//! `rnic-regmap` map, the DMA port (`m_dma_*`, shared by the engines through a tree of
//! arbiters), the raw transmit engine feeding the stream to the MAC (`m_axis_*`), and the
//! receive parser on the stream from the MAC (`s_axis_*`), whose bypassed frames (ARP, IP,
//! anything not RoCEv2) the raw receive engine writes into the host's raw receive ring.
//! RoCEv2 frames the parser accepts go to the transport (none yet: consumed and counted).
//!
//! The QP rings face the transport's engines: the send and receive rings' fetch engines hand
//! the work requests the host posted (doorbell, then a DMA read of the slot) out on
//! `m_sq_wqe_*` and `m_rq_wqe_*`, each request's beats with its ring and index, only while
//! the engine behind says it has room for a whole one (`*_room`); completions come in on
//! `s_cqe_*` (a `cqe`'s four beats, the CQ number on the first) and the completion writer
//! puts them in the host's completion rings with their phase bit, an armed CQ raising the CQ
//! interrupt cause once.
//!
//! DMA clients, as a tree of two-client arbiters: the raw engines (transmit reads, receive
//! reads and writes) on one side of the top arbiter, the queue engines (send fetch and the
//! completion writer, receive fetch) on the other.
//!
//! The register settings the engines read come out of the file's storage word by word; the
//! word numbers are those of [`crate::host_regs`] (checked by its tests against the slices
//! used here).

use rust_hdl::prelude::*;

use crate::address_vector::AV_BITS;
use crate::axil_slave::{ADDR_BITS, AxilSlave};
use crate::cq_path::CqPath;
use crate::csr_file::CsrFile;
use crate::dma_arbiter::DmaArbiter;
use crate::host_regs::{HOST_BUILD, LOG_QUEUES, queue_area, table};
use crate::raw_rx::RawRx;
use crate::raw_tx::RawTx;
use crate::row_table::{MR_BITS, QP_BITS, RowTable};
use crate::rx_parser::RxParser;
use crate::wq_path::WqPath;

/// log2 of the bytes of a send and of a receive work request (`send_wqe`, `recv_wqe`).
pub const SEND_WQE_LOG: u32 = 7;
pub const RECV_WQE_LOG: u32 = 6;

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
    /// Frames to the MAC.
    pub m_axis_tdata: Signal<Out, Bits<64>>,
    pub m_axis_tkeep: Signal<Out, Bits<8>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    /// The DMA port (see [`crate::dma_arbiter`]).
    pub m_dma_rd_req_valid: Signal<Out, Bit>,
    pub m_dma_rd_req_ready: Signal<In, Bit>,
    pub m_dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_rd_req_len: Signal<Out, Bits<16>>,
    pub m_dma_rd_req_tag: Signal<Out, Bits<8>>,
    pub m_dma_rd_data_valid: Signal<In, Bit>,
    pub m_dma_rd_data_ready: Signal<Out, Bit>,
    pub m_dma_rd_data: Signal<In, Bits<64>>,
    pub m_dma_rd_data_last: Signal<In, Bit>,
    pub m_dma_rd_data_err: Signal<In, Bit>,
    pub m_dma_rd_data_tag: Signal<In, Bits<8>>,
    pub m_dma_wr_req_valid: Signal<Out, Bit>,
    pub m_dma_wr_req_ready: Signal<In, Bit>,
    pub m_dma_wr_req_addr: Signal<Out, Bits<64>>,
    pub m_dma_wr_req_len: Signal<Out, Bits<16>>,
    pub m_dma_wr_req_tag: Signal<Out, Bits<8>>,
    pub m_dma_wr_data_valid: Signal<Out, Bit>,
    pub m_dma_wr_data_ready: Signal<In, Bit>,
    pub m_dma_wr_data: Signal<Out, Bits<64>>,
    pub m_dma_wr_data_keep: Signal<Out, Bits<8>>,
    pub m_dma_wr_data_last: Signal<Out, Bit>,
    pub m_dma_wr_done_valid: Signal<In, Bit>,
    pub m_dma_wr_done_tag: Signal<In, Bits<8>>,
    pub m_dma_wr_done_err: Signal<In, Bit>,
    /// Work requests from the send rings: 64-bit beats of a `send_wqe`, the ring (QP) and
    /// the index on every beat, `err` when the host refused the read. No ready: a request is
    /// fetched only while `m_sq_wqe_room` says the engine can take all of it.
    pub m_sq_wqe_room: Signal<In, Bit>,
    pub m_sq_wqe_valid: Signal<Out, Bit>,
    pub m_sq_wqe_data: Signal<Out, Bits<64>>,
    pub m_sq_wqe_last: Signal<Out, Bit>,
    pub m_sq_wqe_err: Signal<Out, Bit>,
    pub m_sq_wqe_queue: Signal<Out, Bits<6>>,
    pub m_sq_wqe_index: Signal<Out, Bits<16>>,
    /// Receive requests from the receive rings (`recv_wqe`), the same way.
    pub m_rq_wqe_room: Signal<In, Bit>,
    pub m_rq_wqe_valid: Signal<Out, Bit>,
    pub m_rq_wqe_data: Signal<Out, Bits<64>>,
    pub m_rq_wqe_last: Signal<Out, Bit>,
    pub m_rq_wqe_err: Signal<Out, Bit>,
    pub m_rq_wqe_queue: Signal<Out, Bits<6>>,
    pub m_rq_wqe_index: Signal<Out, Bits<16>>,
    /// Completions: the four beats of a `cqe`, the CQ read on the first.
    pub s_cqe_valid: Signal<In, Bit>,
    pub s_cqe_ready: Signal<Out, Bit>,
    pub s_cqe_cq: Signal<In, Bits<6>>,
    pub s_cqe_data: Signal<In, Bits<64>>,
    pub s_cqe_last: Signal<In, Bit>,
    /// Address vector lookups by the engines ([`crate::row_table`]): a row, answered the next
    /// cycle.
    pub av_look_valid: Signal<In, Bit>,
    pub av_look_ready: Signal<Out, Bit>,
    pub av_look_row: Signal<In, Bits<LOG_QUEUES>>,
    pub av_got_valid: Signal<Out, Bit>,
    pub av_got_row: Signal<Out, Bits<LOG_QUEUES>>,
    pub av_got_data: Signal<Out, Bits<AV_BITS>>,
    /// Memory region lookups (by key index).
    pub mr_look_valid: Signal<In, Bit>,
    pub mr_look_ready: Signal<Out, Bit>,
    pub mr_look_row: Signal<In, Bits<LOG_QUEUES>>,
    pub mr_got_valid: Signal<Out, Bit>,
    pub mr_got_row: Signal<Out, Bits<LOG_QUEUES>>,
    pub mr_got_data: Signal<Out, Bits<MR_BITS>>,
    /// QP attribute lookups.
    pub qp_look_valid: Signal<In, Bit>,
    pub qp_look_ready: Signal<Out, Bit>,
    pub qp_look_row: Signal<In, Bits<LOG_QUEUES>>,
    pub qp_got_valid: Signal<Out, Bit>,
    pub qp_got_row: Signal<Out, Bits<LOG_QUEUES>>,
    pub qp_got_data: Signal<Out, Bits<QP_BITS>>,
    /// The interrupt: a pending cause that is enabled.
    pub irq: Signal<Out, Bit>,

    axil: AxilSlave,
    csr: CsrFile,
    rx: RxParser,
    dma: DmaArbiter<7, 8>,
    dma_raw: DmaArbiter<6, 7>,
    dma_q: DmaArbiter<6, 7>,
    raw_tx: RawTx,
    raw_rx: RawRx,
    sq: WqPath<6, 64>,
    rq: WqPath<6, 64>,
    cq: CqPath<6>,
    /// The address vector table and its register window.
    av: RowTable<AV_BITS, LOG_QUEUES>,
    av_w: Signal<Local, Bit>,
    av_rs: Signal<Local, Bit>,
    av_r: Signal<Local, Bit>,
    k_av_area: Constant<Bits<13>>,
    /// The memory region table and its register window.
    mr: RowTable<MR_BITS, LOG_QUEUES>,
    mr_w: Signal<Local, Bit>,
    mr_rs: Signal<Local, Bit>,
    mr_r: Signal<Local, Bit>,
    k_mr_area: Constant<Bits<13>>,
    /// The QP attribute table and its register window.
    qp: RowTable<QP_BITS, LOG_QUEUES>,
    qp_w: Signal<Local, Bit>,
    qp_rs: Signal<Local, Bit>,
    qp_r: Signal<Local, Bit>,
    k_qp_area: Constant<Bits<13>>,
    sq_w: Signal<Local, Bit>,
    rq_w: Signal<Local, Bit>,
    cq_w: Signal<Local, Bit>,
    sq_rs: Signal<Local, Bit>,
    rq_rs: Signal<Local, Bit>,
    cq_rs: Signal<Local, Bit>,
    sq_r: Signal<Local, Bit>,
    rq_r: Signal<Local, Bit>,
    cq_r: Signal<Local, Bit>,
    k_sq_area: Constant<Bits<13>>,
    k_rq_area: Constant<Bits<13>>,
    k_cq_area: Constant<Bits<13>>,
    k_words: Constant<Bits<3>>,
    cnt_tx_frames: DFF<Bits<32>>,
    cnt_dma_rd_err: DFF<Bits<32>>,
    cnt_dma_wr_err: DFF<Bits<32>>,
    cnt_ring_err: DFF<Bits<32>>,
    cnt_raw_drops: DFF<Bits<32>>,
    cnt_raw_tx: DFF<Bits<32>>,
    cnt_raw_rx: DFF<Bits<32>>,
    cnt_wqe: DFF<Bits<32>>,
    cnt_cqe: DFF<Bits<32>>,
    cnt_cq_overflow: DFF<Bits<32>>,
    sq_fetched: Signal<Local, Bit>,
    rq_fetched: Signal<Local, Bit>,
    wqe_rd_err: Signal<Local, Bit>,
    dp_reset: Signal<Local, Bit>,
    enabled: Signal<Local, Bit>,
    irq_set: Signal<Local, Bits<32>>,
    load_en: Signal<Local, Bits<4>>,
    load_data: Signal<Local, Bits<128>>,
    status: Signal<Local, Bits<768>>,
    store: Signal<Local, Bits<768>>,
    k_zero32: Constant<Bits<32>>,
    k_one32: Constant<Bits<32>>,
    k_zero4: Constant<Bits<4>>,
    k_zero6: Constant<Bits<6>>,
    k_zero8: Constant<Bits<8>>,
    k_zero16: Constant<Bits<16>>,
    k_zero64: Constant<Bits<64>>,
    k_irq_cq: Constant<Bits<32>>,
    k_irq_raw_rx: Constant<Bits<32>>,
    k_irq_raw_tx: Constant<Bits<32>>,
    k_irq_error: Constant<Bits<32>>,
    k_not_arm: Constant<Bits<32>>,
    k_link_up: Constant<Bits<768>>,
    k_reset_done: Constant<Bits<768>>,
}

impl HostNic {
    pub fn new() -> Self {
        let entries = table(&HOST_BUILD).expect("the host register table");
        assert_eq!(LOG_QUEUES, 6, "the queue paths have 2^6 rings");
        let irq = |name: &str| {
            let f = rnic_regmap::regs::irq_cause(name).expect("an interrupt cause");
            Constant::new(bits::<32>(u64::from(f.mask())))
        };
        let size_field = |name: &str| {
            rnic_regmap::regs::ring_register("SIZE")
                .and_then(|r| r.field(name))
                .expect("a SIZE field")
                .mask()
        };
        let area = |b: &str| {
            let (base, stride) = queue_area(b);
            assert_eq!(stride, 32);
            assert_eq!(base % (32 << LOG_QUEUES), 0, "{b}: queue area aligned");
            Constant::new(bits::<13>(u64::from(base >> 11)))
        };
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
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tuser: Default::default(),
            m_axis_tready: Default::default(),
            m_dma_rd_req_valid: Default::default(),
            m_dma_rd_req_ready: Default::default(),
            m_dma_rd_req_addr: Default::default(),
            m_dma_rd_req_len: Default::default(),
            m_dma_rd_req_tag: Default::default(),
            m_dma_rd_data_valid: Default::default(),
            m_dma_rd_data_ready: Default::default(),
            m_dma_rd_data: Default::default(),
            m_dma_rd_data_last: Default::default(),
            m_dma_rd_data_err: Default::default(),
            m_dma_rd_data_tag: Default::default(),
            m_dma_wr_req_valid: Default::default(),
            m_dma_wr_req_ready: Default::default(),
            m_dma_wr_req_addr: Default::default(),
            m_dma_wr_req_len: Default::default(),
            m_dma_wr_req_tag: Default::default(),
            m_dma_wr_data_valid: Default::default(),
            m_dma_wr_data_ready: Default::default(),
            m_dma_wr_data: Default::default(),
            m_dma_wr_data_keep: Default::default(),
            m_dma_wr_data_last: Default::default(),
            m_dma_wr_done_valid: Default::default(),
            m_dma_wr_done_tag: Default::default(),
            m_dma_wr_done_err: Default::default(),
            m_sq_wqe_room: Default::default(),
            m_sq_wqe_valid: Default::default(),
            m_sq_wqe_data: Default::default(),
            m_sq_wqe_last: Default::default(),
            m_sq_wqe_err: Default::default(),
            m_sq_wqe_queue: Default::default(),
            m_sq_wqe_index: Default::default(),
            m_rq_wqe_room: Default::default(),
            m_rq_wqe_valid: Default::default(),
            m_rq_wqe_data: Default::default(),
            m_rq_wqe_last: Default::default(),
            m_rq_wqe_err: Default::default(),
            m_rq_wqe_queue: Default::default(),
            m_rq_wqe_index: Default::default(),
            s_cqe_valid: Default::default(),
            s_cqe_ready: Default::default(),
            s_cqe_cq: Default::default(),
            s_cqe_data: Default::default(),
            s_cqe_last: Default::default(),
            av_look_valid: Default::default(),
            av_look_ready: Default::default(),
            av_look_row: Default::default(),
            av_got_valid: Default::default(),
            av_got_row: Default::default(),
            av_got_data: Default::default(),
            mr_look_valid: Default::default(),
            mr_look_ready: Default::default(),
            mr_look_row: Default::default(),
            mr_got_valid: Default::default(),
            mr_got_row: Default::default(),
            mr_got_data: Default::default(),
            qp_look_valid: Default::default(),
            qp_look_ready: Default::default(),
            qp_look_row: Default::default(),
            qp_got_valid: Default::default(),
            qp_got_row: Default::default(),
            qp_got_data: Default::default(),
            irq: Default::default(),
            axil: Default::default(),
            csr: CsrFile::new(entries),
            rx: RxParser::new(),
            dma: DmaArbiter::new(),
            dma_raw: DmaArbiter::new(),
            dma_q: DmaArbiter::new(),
            raw_tx: Default::default(),
            raw_rx: Default::default(),
            sq: WqPath::new(SEND_WQE_LOG),
            rq: WqPath::new(RECV_WQE_LOG),
            cq: CqPath::default(),
            av: RowTable::default(),
            av_w: Default::default(),
            av_rs: Default::default(),
            av_r: Default::default(),
            k_av_area: area("address_vectors"),
            mr: RowTable::default(),
            mr_w: Default::default(),
            mr_rs: Default::default(),
            mr_r: Default::default(),
            k_mr_area: area("memory_regions"),
            qp: RowTable::default(),
            qp_w: Default::default(),
            qp_rs: Default::default(),
            qp_r: Default::default(),
            k_qp_area: area("qp_attributes"),
            sq_w: Default::default(),
            rq_w: Default::default(),
            cq_w: Default::default(),
            sq_rs: Default::default(),
            rq_rs: Default::default(),
            cq_rs: Default::default(),
            sq_r: Default::default(),
            rq_r: Default::default(),
            cq_r: Default::default(),
            k_sq_area: area("send_queues"),
            k_rq_area: area("receive_queues"),
            k_cq_area: area("completion_queues"),
            k_words: Constant::new(bits::<3>(6)),
            cnt_tx_frames: Default::default(),
            cnt_dma_rd_err: Default::default(),
            cnt_dma_wr_err: Default::default(),
            cnt_ring_err: Default::default(),
            cnt_raw_drops: Default::default(),
            cnt_raw_tx: Default::default(),
            cnt_raw_rx: Default::default(),
            cnt_wqe: Default::default(),
            cnt_cqe: Default::default(),
            cnt_cq_overflow: Default::default(),
            sq_fetched: Default::default(),
            rq_fetched: Default::default(),
            wqe_rd_err: Default::default(),
            dp_reset: Default::default(),
            enabled: Default::default(),
            irq_set: Default::default(),
            load_en: Default::default(),
            load_data: Default::default(),
            status: Default::default(),
            store: Default::default(),
            k_zero32: Constant::new(bits::<32>(0)),
            k_one32: Constant::new(bits::<32>(1)),
            k_zero4: Constant::new(bits::<4>(0)),
            k_zero6: Constant::new(bits::<6>(0)),
            k_zero8: Constant::new(bits::<8>(0)),
            k_zero16: Constant::new(bits::<16>(0)),
            k_zero64: Constant::new(bits::<64>(0)),
            k_irq_cq: irq("CQ"),
            k_irq_raw_rx: irq("RAW_RX"),
            k_irq_raw_tx: irq("RAW_TX"),
            k_irq_error: irq("ERROR"),
            k_not_arm: Constant::new(bits::<32>(u64::from(!size_field("ARM")))),
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
        dff_setup!(
            self,
            clock,
            cnt_tx_frames,
            cnt_dma_rd_err,
            cnt_dma_wr_err,
            cnt_ring_err,
            cnt_raw_drops,
            cnt_raw_tx,
            cnt_raw_rx,
            cnt_wqe,
            cnt_cqe,
            cnt_cq_overflow
        );
        self.axil.clock.next = self.clock.val();
        self.csr.clock.next = self.clock.val();
        self.rx.clock.next = self.clock.val();
        self.dma.clock.next = self.clock.val();
        self.dma_raw.clock.next = self.clock.val();
        self.dma_q.clock.next = self.clock.val();
        self.raw_tx.clock.next = self.clock.val();
        self.raw_rx.clock.next = self.clock.val();
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
        self.csr.rd_addr.next = self.axil.reg_rd_addr.val();

        self.store.next = self.csr.store.val();
        self.dp_reset.next = self.reset.val() | self.store.val().get_bit(0);

        // ---- The QP rings: queue areas decoded by address bits 23:11, queue 10:5, word 4:2
        // (host_regs::queue_area); words 0..=5 exist.
        self.sq_w.next = (self.axil.reg_wr_addr.val().get_bits::<13>(11) == self.k_sq_area.val())
            & (self.axil.reg_wr_addr.val().get_bits::<3>(2) < self.k_words.val())
            & (self.axil.reg_wr_addr.val().get_bits::<2>(0) == 0);
        self.rq_w.next = (self.axil.reg_wr_addr.val().get_bits::<13>(11) == self.k_rq_area.val())
            & (self.axil.reg_wr_addr.val().get_bits::<3>(2) < self.k_words.val())
            & (self.axil.reg_wr_addr.val().get_bits::<2>(0) == 0);
        self.cq_w.next = (self.axil.reg_wr_addr.val().get_bits::<13>(11) == self.k_cq_area.val())
            & (self.axil.reg_wr_addr.val().get_bits::<3>(2) < self.k_words.val())
            & (self.axil.reg_wr_addr.val().get_bits::<2>(0) == 0);
        self.sq_rs.next = (self.axil.reg_rd_start_addr.val().get_bits::<13>(11)
            == self.k_sq_area.val())
            & self.axil.reg_rd_start.val();
        self.rq_rs.next = (self.axil.reg_rd_start_addr.val().get_bits::<13>(11)
            == self.k_rq_area.val())
            & self.axil.reg_rd_start.val();
        self.cq_rs.next = (self.axil.reg_rd_start_addr.val().get_bits::<13>(11)
            == self.k_cq_area.val())
            & self.axil.reg_rd_start.val();
        self.sq_r.next = (self.axil.reg_rd_addr.val().get_bits::<13>(11) == self.k_sq_area.val())
            & (self.axil.reg_rd_addr.val().get_bits::<3>(2) < self.k_words.val())
            & (self.axil.reg_rd_addr.val().get_bits::<2>(0) == 0);
        self.rq_r.next = (self.axil.reg_rd_addr.val().get_bits::<13>(11) == self.k_rq_area.val())
            & (self.axil.reg_rd_addr.val().get_bits::<3>(2) < self.k_words.val())
            & (self.axil.reg_rd_addr.val().get_bits::<2>(0) == 0);
        self.cq_r.next = (self.axil.reg_rd_addr.val().get_bits::<13>(11) == self.k_cq_area.val())
            & (self.axil.reg_rd_addr.val().get_bits::<3>(2) < self.k_words.val())
            & (self.axil.reg_rd_addr.val().get_bits::<2>(0) == 0);
        self.sq.clock.next = self.clock.val();
        self.rq.clock.next = self.clock.val();
        self.cq.clock.next = self.clock.val();
        self.sq.reset.next = self.dp_reset.val();
        self.rq.reset.next = self.dp_reset.val();
        self.cq.reset.next = self.dp_reset.val();
        self.sq.reg_wr_en.next = self.axil.reg_wr_en.val() & self.sq_w.val();
        self.rq.reg_wr_en.next = self.axil.reg_wr_en.val() & self.rq_w.val();
        self.cq.reg_wr_en.next = self.axil.reg_wr_en.val() & self.cq_w.val();
        self.sq.reg_wr_queue.next = self.axil.reg_wr_addr.val().get_bits::<6>(5);
        self.rq.reg_wr_queue.next = self.axil.reg_wr_addr.val().get_bits::<6>(5);
        self.cq.reg_wr_queue.next = self.axil.reg_wr_addr.val().get_bits::<6>(5);
        self.sq.reg_wr_word.next = self.axil.reg_wr_addr.val().get_bits::<3>(2);
        self.rq.reg_wr_word.next = self.axil.reg_wr_addr.val().get_bits::<3>(2);
        self.cq.reg_wr_word.next = self.axil.reg_wr_addr.val().get_bits::<3>(2);
        self.sq.reg_wr_data.next = self.axil.reg_wr_data.val();
        self.rq.reg_wr_data.next = self.axil.reg_wr_data.val();
        self.cq.reg_wr_data.next = self.axil.reg_wr_data.val();
        self.sq.reg_rd_start.next = self.sq_rs.val();
        self.rq.reg_rd_start.next = self.rq_rs.val();
        self.cq.reg_rd_start.next = self.cq_rs.val();
        self.sq.reg_rd_queue.next = self.axil.reg_rd_start_addr.val().get_bits::<6>(5);
        self.rq.reg_rd_queue.next = self.axil.reg_rd_start_addr.val().get_bits::<6>(5);
        self.cq.reg_rd_queue.next = self.axil.reg_rd_start_addr.val().get_bits::<6>(5);
        self.sq.reg_rd_word.next = self.axil.reg_rd_start_addr.val().get_bits::<3>(2);
        self.rq.reg_rd_word.next = self.axil.reg_rd_start_addr.val().get_bits::<3>(2);
        self.cq.reg_rd_word.next = self.axil.reg_rd_start_addr.val().get_bits::<3>(2);
        // Work requests out to the transport's engines, completions in.
        self.sq.m_wqe_room.next = self.m_sq_wqe_room.val();
        self.m_sq_wqe_valid.next = self.sq.m_wqe_valid.val();
        self.m_sq_wqe_data.next = self.sq.m_wqe_data.val();
        self.m_sq_wqe_last.next = self.sq.m_wqe_last.val();
        self.m_sq_wqe_err.next = self.sq.m_wqe_err.val();
        self.m_sq_wqe_queue.next = self.sq.m_wqe_queue.val();
        self.m_sq_wqe_index.next = self.sq.m_wqe_index.val();
        self.rq.m_wqe_room.next = self.m_rq_wqe_room.val();
        self.m_rq_wqe_valid.next = self.rq.m_wqe_valid.val();
        self.m_rq_wqe_data.next = self.rq.m_wqe_data.val();
        self.m_rq_wqe_last.next = self.rq.m_wqe_last.val();
        self.m_rq_wqe_err.next = self.rq.m_wqe_err.val();
        self.m_rq_wqe_queue.next = self.rq.m_wqe_queue.val();
        self.m_rq_wqe_index.next = self.rq.m_wqe_index.val();
        self.cq.s_cqe_valid.next = self.s_cqe_valid.val();
        self.s_cqe_ready.next = self.cq.s_cqe_ready.val();
        self.cq.s_cqe_cq.next = self.s_cqe_cq.val();
        self.cq.s_cqe_data.next = self.s_cqe_data.val();
        self.cq.s_cqe_last.next = self.s_cqe_last.val();

        // ---- The address vector table: rows decoded as the queues (row 10:5, word 4:2; all
        // eight words exist), looked up by the engines.
        self.av_w.next = (self.axil.reg_wr_addr.val().get_bits::<13>(11) == self.k_av_area.val())
            & (self.axil.reg_wr_addr.val().get_bits::<2>(0) == 0);
        self.av_rs.next = (self.axil.reg_rd_start_addr.val().get_bits::<13>(11)
            == self.k_av_area.val())
            & self.axil.reg_rd_start.val();
        self.av_r.next = (self.axil.reg_rd_addr.val().get_bits::<13>(11) == self.k_av_area.val())
            & (self.axil.reg_rd_addr.val().get_bits::<2>(0) == 0);
        self.av.clock.next = self.clock.val();
        self.av.reset.next = self.dp_reset.val();
        self.av.wr_en.next = self.axil.reg_wr_en.val() & self.av_w.val();
        self.av.wr_row.next = self.axil.reg_wr_addr.val().get_bits::<6>(5);
        self.av.wr_word.next = self.axil.reg_wr_addr.val().get_bits::<3>(2);
        self.av.wr_data.next = self.axil.reg_wr_data.val();
        self.av.rd_start.next = self.av_rs.val();
        self.av.rd_row.next = self.axil.reg_rd_start_addr.val().get_bits::<6>(5);
        self.av.rd_word.next = self.axil.reg_rd_start_addr.val().get_bits::<3>(2);
        self.av.look_valid.next = self.av_look_valid.val();
        self.av.look_row.next = self.av_look_row.val();
        self.av_look_ready.next = self.av.look_ready.val();
        self.av_got_valid.next = self.av.got_valid.val();
        self.av_got_row.next = self.av.got_row.val();
        self.av_got_data.next = self.av.got_data.val();

        // ---- The memory region table, decoded as the address vector table.
        self.mr_w.next = (self.axil.reg_wr_addr.val().get_bits::<13>(11) == self.k_mr_area.val())
            & (self.axil.reg_wr_addr.val().get_bits::<2>(0) == 0);
        self.mr_rs.next = (self.axil.reg_rd_start_addr.val().get_bits::<13>(11)
            == self.k_mr_area.val())
            & self.axil.reg_rd_start.val();
        self.mr_r.next = (self.axil.reg_rd_addr.val().get_bits::<13>(11) == self.k_mr_area.val())
            & (self.axil.reg_rd_addr.val().get_bits::<2>(0) == 0);
        self.mr.clock.next = self.clock.val();
        self.mr.reset.next = self.dp_reset.val();
        self.mr.wr_en.next = self.axil.reg_wr_en.val() & self.mr_w.val();
        self.mr.wr_row.next = self.axil.reg_wr_addr.val().get_bits::<6>(5);
        self.mr.wr_word.next = self.axil.reg_wr_addr.val().get_bits::<3>(2);
        self.mr.wr_data.next = self.axil.reg_wr_data.val();
        self.mr.rd_start.next = self.mr_rs.val();
        self.mr.rd_row.next = self.axil.reg_rd_start_addr.val().get_bits::<6>(5);
        self.mr.rd_word.next = self.axil.reg_rd_start_addr.val().get_bits::<3>(2);
        self.mr.look_valid.next = self.mr_look_valid.val();
        self.mr.look_row.next = self.mr_look_row.val();
        self.mr_look_ready.next = self.mr.look_ready.val();
        self.mr_got_valid.next = self.mr.got_valid.val();
        self.mr_got_row.next = self.mr.got_row.val();
        self.mr_got_data.next = self.mr.got_data.val();

        // ---- The QP attribute table, decoded as the address vector table.
        self.qp_w.next = (self.axil.reg_wr_addr.val().get_bits::<13>(11) == self.k_qp_area.val())
            & (self.axil.reg_wr_addr.val().get_bits::<2>(0) == 0);
        self.qp_rs.next = (self.axil.reg_rd_start_addr.val().get_bits::<13>(11)
            == self.k_qp_area.val())
            & self.axil.reg_rd_start.val();
        self.qp_r.next = (self.axil.reg_rd_addr.val().get_bits::<13>(11) == self.k_qp_area.val())
            & (self.axil.reg_rd_addr.val().get_bits::<2>(0) == 0);
        self.qp.clock.next = self.clock.val();
        self.qp.reset.next = self.dp_reset.val();
        self.qp.wr_en.next = self.axil.reg_wr_en.val() & self.qp_w.val();
        self.qp.wr_row.next = self.axil.reg_wr_addr.val().get_bits::<6>(5);
        self.qp.wr_word.next = self.axil.reg_wr_addr.val().get_bits::<3>(2);
        self.qp.wr_data.next = self.axil.reg_wr_data.val();
        self.qp.rd_start.next = self.qp_rs.val();
        self.qp.rd_row.next = self.axil.reg_rd_start_addr.val().get_bits::<6>(5);
        self.qp.rd_word.next = self.axil.reg_rd_start_addr.val().get_bits::<3>(2);
        self.qp.look_valid.next = self.qp_look_valid.val();
        self.qp.look_row.next = self.qp_look_row.val();
        self.qp_look_ready.next = self.qp.look_ready.val();
        self.qp_got_valid.next = self.qp.got_valid.val();
        self.qp_got_row.next = self.qp.got_row.val();
        self.qp_got_data.next = self.qp.got_data.val();

        self.axil.reg_wr_hit.next = self.csr.wr_hit.val()
            | self.sq_w.val()
            | self.rq_w.val()
            | self.cq_w.val()
            | self.av_w.val()
            | self.mr_w.val()
            | self.qp_w.val();
        self.axil.reg_rd_data.next = self.csr.rd_data.val();
        self.axil.reg_rd_hit.next = self.csr.rd_hit.val()
            | self.sq_r.val()
            | self.rq_r.val()
            | self.cq_r.val()
            | self.av_r.val()
            | self.mr_r.val()
            | self.qp_r.val();
        if self.av_r.val() {
            self.axil.reg_rd_data.next = self.av.rd_data.val();
        }
        if self.mr_r.val() {
            self.axil.reg_rd_data.next = self.mr.rd_data.val();
        }
        if self.qp_r.val() {
            self.axil.reg_rd_data.next = self.qp.rd_data.val();
        }
        if self.sq_r.val() {
            self.axil.reg_rd_data.next = self.sq.reg_rd_data.val();
        }
        if self.rq_r.val() {
            self.axil.reg_rd_data.next = self.rq.reg_rd_data.val();
        }
        if self.cq_r.val() {
            self.axil.reg_rd_data.next = self.cq.reg_rd_data.val();
        }

        // Storage words (host_regs::SL_*): CTRL 0 (RESET bit 0, ENABLE bit 1), IRQ_ENABLE 1,
        // IRQ_STATUS 2; raw ring r at 6 + 5 r: BASE_LO, BASE_HI, SIZE (LOG_SIZE 4:0, ENABLE
        // 8, ARM 9), PROD, CONS.
        self.enabled.next = self.store.val().get_bit(1);
        self.rx.reset.next = self.dp_reset.val();
        self.dma.reset.next = self.dp_reset.val();
        self.dma_raw.reset.next = self.dp_reset.val();
        self.dma_q.reset.next = self.dp_reset.val();
        self.raw_tx.reset.next = self.dp_reset.val();
        self.raw_rx.reset.next = self.dp_reset.val();

        // ---- Raw transmit engine on ring 0.
        self.raw_tx.enable.next = self.enabled.val() & self.store.val().get_bit(264);
        self.raw_tx.base.next = bit_cast::<64, 32>(self.store.val().get_bits::<32>(192))
            | (bit_cast::<64, 32>(self.store.val().get_bits::<32>(224)) << 32);
        self.raw_tx.log_size.next = self.store.val().get_bits::<5>(256);
        self.raw_tx.prod.next = self.store.val().get_bits::<16>(288);
        self.raw_tx.cons.next = self.store.val().get_bits::<16>(320);
        // ---- Raw receive engine on rings 1 (buffers) and 2 (completions).
        self.raw_rx.enable.next =
            self.enabled.val() & self.store.val().get_bit(424) & self.store.val().get_bit(584);
        self.raw_rx.rx_base.next = bit_cast::<64, 32>(self.store.val().get_bits::<32>(352))
            | (bit_cast::<64, 32>(self.store.val().get_bits::<32>(384)) << 32);
        self.raw_rx.rx_log_size.next = self.store.val().get_bits::<5>(416);
        self.raw_rx.rx_prod.next = self.store.val().get_bits::<16>(448);
        self.raw_rx.rx_cons.next = self.store.val().get_bits::<16>(480);
        self.raw_rx.cq_base.next = bit_cast::<64, 32>(self.store.val().get_bits::<32>(512))
            | (bit_cast::<64, 32>(self.store.val().get_bits::<32>(544)) << 32);
        self.raw_rx.cq_log_size.next = self.store.val().get_bits::<5>(576);
        self.raw_rx.cq_armed.next = self.store.val().get_bit(585);
        self.raw_rx.cq_prod.next = self.store.val().get_bits::<16>(608);
        self.raw_rx.cq_cons.next = self.store.val().get_bits::<16>(640);

        // Load ports: 0 ring 0 CONS, 1 ring 1 CONS, 2 ring 2 PROD, 3 ring 2 SIZE (disarm).
        self.load_en.next = self.k_zero4.val();
        self.load_data.next = bit_cast::<128, 16>(self.raw_tx.cons_next.val())
            | (bit_cast::<128, 16>(self.raw_rx.rx_cons_next.val()) << 32)
            | (bit_cast::<128, 16>(self.raw_rx.cq_prod_next.val()) << 64)
            | (bit_cast::<128, 32>(self.store.val().get_bits::<32>(576) & self.k_not_arm.val())
                << 96);
        if self.raw_tx.cons_load.val() {
            self.load_en.next = self.load_en.val().replace_bit(0, true);
        }
        if self.raw_rx.rx_cons_load.val() {
            self.load_en.next = self.load_en.val().replace_bit(1, true);
        }
        if self.raw_rx.cq_prod_load.val() {
            self.load_en.next = self.load_en.val().replace_bit(2, true);
        }
        if self.raw_rx.cq_disarm.val() {
            self.load_en.next = self.load_en.val().replace_bit(3, true);
        }
        self.csr.load_en.next = self.load_en.val();
        self.csr.load_data.next = self.load_data.val();

        // ---- Interrupt causes: CQ (an armed completion ring got an entry), RAW_RX (armed
        // raw completion), RAW_TX (ring drained), ERROR.
        self.irq_set.next = self.k_zero32.val();
        if self.cq.ev_irq.val() {
            self.irq_set.next = self.irq_set.val() | self.k_irq_cq.val();
        }
        if self.raw_rx.ev_irq.val() {
            self.irq_set.next = self.irq_set.val() | self.k_irq_raw_rx.val();
        }
        if self.raw_tx.ev_frame.val() & (self.raw_tx.cons_next.val() == self.raw_tx.prod.val()) {
            self.irq_set.next = self.irq_set.val() | self.k_irq_raw_tx.val();
        }
        if self.raw_tx.ev_dma_error.val()
            | self.raw_rx.ev_dma_read_error.val()
            | self.raw_rx.ev_dma_write_error.val()
            | self.cq.ev_dma_error.val()
            | self.wqe_rd_err.val()
        {
            self.irq_set.next = self.irq_set.val() | self.k_irq_error.val();
        }
        self.csr.irq_set.next = self.irq_set.val();
        // IRQ_STATUS (word 2) & IRQ_ENABLE (word 1).
        self.irq.next =
            (self.store.val().get_bits::<32>(64) & self.store.val().get_bits::<32>(32)).any();

        // ---- DMA: the raw arbiter (client 0 the transmit engine, reads only; client 1 the
        // receive engine) and the queue arbiter (client 0 the send fetch engine's reads and
        // the completion writer's writes; client 1 the receive fetch engine) under the top
        // one (client 0 raw, client 1 queues). Every client's tags fit the 6 bits it has here.
        self.dma_raw.s0_rd_req_valid.next = self.raw_tx.rd_req_valid.val();
        self.raw_tx.rd_req_ready.next = self.dma_raw.s0_rd_req_ready.val();
        self.dma_raw.s0_rd_req_addr.next = self.raw_tx.rd_req_addr.val();
        self.dma_raw.s0_rd_req_len.next = self.raw_tx.rd_req_len.val();
        self.dma_raw.s0_rd_req_tag.next = self.raw_tx.rd_req_tag.val().get_bits::<6>(0);
        self.raw_tx.rd_data_valid.next = self.dma_raw.s0_rd_data_valid.val();
        self.dma_raw.s0_rd_data_ready.next = self.raw_tx.rd_data_ready.val();
        self.raw_tx.rd_data.next = self.dma_raw.rd_data.val();
        self.raw_tx.rd_data_last.next = self.dma_raw.rd_data_last.val();
        self.raw_tx.rd_data_err.next = self.dma_raw.rd_data_err.val();
        self.dma_raw.s0_wr_req_valid.next = false;
        self.dma_raw.s0_wr_req_addr.next = self.k_zero64.val();
        self.dma_raw.s0_wr_req_len.next = self.k_zero16.val();
        self.dma_raw.s0_wr_req_tag.next = self.k_zero6.val();
        self.dma_raw.s0_wr_data_valid.next = false;
        self.dma_raw.s0_wr_data.next = self.k_zero64.val();
        self.dma_raw.s0_wr_data_keep.next = self.k_zero8.val();
        self.dma_raw.s0_wr_data_last.next = false;
        self.dma_raw.s1_rd_req_valid.next = self.raw_rx.rd_req_valid.val();
        self.raw_rx.rd_req_ready.next = self.dma_raw.s1_rd_req_ready.val();
        self.dma_raw.s1_rd_req_addr.next = self.raw_rx.rd_req_addr.val();
        self.dma_raw.s1_rd_req_len.next = self.raw_rx.rd_req_len.val();
        self.dma_raw.s1_rd_req_tag.next = self.raw_rx.rd_req_tag.val().get_bits::<6>(0);
        self.raw_rx.rd_data_valid.next = self.dma_raw.s1_rd_data_valid.val();
        self.dma_raw.s1_rd_data_ready.next = self.raw_rx.rd_data_ready.val();
        self.raw_rx.rd_data.next = self.dma_raw.rd_data.val();
        self.raw_rx.rd_data_err.next = self.dma_raw.rd_data_err.val();
        self.dma_raw.s1_wr_req_valid.next = self.raw_rx.wr_req_valid.val();
        self.raw_rx.wr_req_ready.next = self.dma_raw.s1_wr_req_ready.val();
        self.dma_raw.s1_wr_req_addr.next = self.raw_rx.wr_req_addr.val();
        self.dma_raw.s1_wr_req_len.next = self.raw_rx.wr_req_len.val();
        self.dma_raw.s1_wr_req_tag.next = self.raw_rx.wr_req_tag.val().get_bits::<6>(0);
        self.dma_raw.s1_wr_data_valid.next = self.raw_rx.wr_data_valid.val();
        self.raw_rx.wr_data_ready.next = self.dma_raw.s1_wr_data_ready.val();
        self.dma_raw.s1_wr_data.next = self.raw_rx.wr_data.val();
        self.dma_raw.s1_wr_data_keep.next = self.raw_rx.wr_data_keep.val();
        self.dma_raw.s1_wr_data_last.next = self.raw_rx.wr_data_last.val();
        self.raw_rx.wr_done_valid.next = self.dma_raw.s1_wr_done_valid.val();
        self.raw_rx.wr_done_err.next = self.dma_raw.wr_done_err.val();

        self.dma_q.s0_rd_req_valid.next = self.sq.rd_req_valid.val();
        self.sq.rd_req_ready.next = self.dma_q.s0_rd_req_ready.val();
        self.dma_q.s0_rd_req_addr.next = self.sq.rd_req_addr.val();
        self.dma_q.s0_rd_req_len.next = self.sq.rd_req_len.val();
        self.dma_q.s0_rd_req_tag.next = self.sq.rd_req_tag.val().get_bits::<6>(0);
        self.sq.rd_data_valid.next = self.dma_q.s0_rd_data_valid.val();
        self.dma_q.s0_rd_data_ready.next = self.sq.rd_data_ready.val();
        self.sq.rd_data.next = self.dma_q.rd_data.val();
        self.sq.rd_data_last.next = self.dma_q.rd_data_last.val();
        self.sq.rd_data_err.next = self.dma_q.rd_data_err.val();
        self.dma_q.s0_wr_req_valid.next = self.cq.wr_req_valid.val();
        self.cq.wr_req_ready.next = self.dma_q.s0_wr_req_ready.val();
        self.dma_q.s0_wr_req_addr.next = self.cq.wr_req_addr.val();
        self.dma_q.s0_wr_req_len.next = self.cq.wr_req_len.val();
        self.dma_q.s0_wr_req_tag.next = self.cq.wr_req_tag.val().get_bits::<6>(0);
        self.dma_q.s0_wr_data_valid.next = self.cq.wr_data_valid.val();
        self.cq.wr_data_ready.next = self.dma_q.s0_wr_data_ready.val();
        self.dma_q.s0_wr_data.next = self.cq.wr_data.val();
        self.dma_q.s0_wr_data_keep.next = self.cq.wr_data_keep.val();
        self.dma_q.s0_wr_data_last.next = self.cq.wr_data_last.val();
        self.cq.wr_done_valid.next = self.dma_q.s0_wr_done_valid.val();
        self.cq.wr_done_err.next = self.dma_q.wr_done_err.val();
        self.dma_q.s1_rd_req_valid.next = self.rq.rd_req_valid.val();
        self.rq.rd_req_ready.next = self.dma_q.s1_rd_req_ready.val();
        self.dma_q.s1_rd_req_addr.next = self.rq.rd_req_addr.val();
        self.dma_q.s1_rd_req_len.next = self.rq.rd_req_len.val();
        self.dma_q.s1_rd_req_tag.next = self.rq.rd_req_tag.val().get_bits::<6>(0);
        self.rq.rd_data_valid.next = self.dma_q.s1_rd_data_valid.val();
        self.dma_q.s1_rd_data_ready.next = self.rq.rd_data_ready.val();
        self.rq.rd_data.next = self.dma_q.rd_data.val();
        self.rq.rd_data_last.next = self.dma_q.rd_data_last.val();
        self.rq.rd_data_err.next = self.dma_q.rd_data_err.val();
        self.dma_q.s1_wr_req_valid.next = false;
        self.dma_q.s1_wr_req_addr.next = self.k_zero64.val();
        self.dma_q.s1_wr_req_len.next = self.k_zero16.val();
        self.dma_q.s1_wr_req_tag.next = self.k_zero6.val();
        self.dma_q.s1_wr_data_valid.next = false;
        self.dma_q.s1_wr_data.next = self.k_zero64.val();
        self.dma_q.s1_wr_data_keep.next = self.k_zero8.val();
        self.dma_q.s1_wr_data_last.next = false;

        // The two arbiters as the top one's clients.
        self.dma.s0_rd_req_valid.next = self.dma_raw.m_dma_rd_req_valid.val();
        self.dma_raw.m_dma_rd_req_ready.next = self.dma.s0_rd_req_ready.val();
        self.dma.s0_rd_req_addr.next = self.dma_raw.m_dma_rd_req_addr.val();
        self.dma.s0_rd_req_len.next = self.dma_raw.m_dma_rd_req_len.val();
        self.dma.s0_rd_req_tag.next = self.dma_raw.m_dma_rd_req_tag.val();
        self.dma_raw.m_dma_rd_data_valid.next = self.dma.s0_rd_data_valid.val();
        self.dma.s0_rd_data_ready.next = self.dma_raw.m_dma_rd_data_ready.val();
        self.dma_raw.m_dma_rd_data.next = self.dma.rd_data.val();
        self.dma_raw.m_dma_rd_data_last.next = self.dma.rd_data_last.val();
        self.dma_raw.m_dma_rd_data_err.next = self.dma.rd_data_err.val();
        self.dma_raw.m_dma_rd_data_tag.next = self.dma.rd_data_tag.val();
        self.dma.s0_wr_req_valid.next = self.dma_raw.m_dma_wr_req_valid.val();
        self.dma_raw.m_dma_wr_req_ready.next = self.dma.s0_wr_req_ready.val();
        self.dma.s0_wr_req_addr.next = self.dma_raw.m_dma_wr_req_addr.val();
        self.dma.s0_wr_req_len.next = self.dma_raw.m_dma_wr_req_len.val();
        self.dma.s0_wr_req_tag.next = self.dma_raw.m_dma_wr_req_tag.val();
        self.dma.s0_wr_data_valid.next = self.dma_raw.m_dma_wr_data_valid.val();
        self.dma_raw.m_dma_wr_data_ready.next = self.dma.s0_wr_data_ready.val();
        self.dma.s0_wr_data.next = self.dma_raw.m_dma_wr_data.val();
        self.dma.s0_wr_data_keep.next = self.dma_raw.m_dma_wr_data_keep.val();
        self.dma.s0_wr_data_last.next = self.dma_raw.m_dma_wr_data_last.val();
        self.dma_raw.m_dma_wr_done_valid.next = self.dma.s0_wr_done_valid.val();
        self.dma_raw.m_dma_wr_done_tag.next = self.dma.wr_done_tag.val();
        self.dma_raw.m_dma_wr_done_err.next = self.dma.wr_done_err.val();
        self.dma.s1_rd_req_valid.next = self.dma_q.m_dma_rd_req_valid.val();
        self.dma_q.m_dma_rd_req_ready.next = self.dma.s1_rd_req_ready.val();
        self.dma.s1_rd_req_addr.next = self.dma_q.m_dma_rd_req_addr.val();
        self.dma.s1_rd_req_len.next = self.dma_q.m_dma_rd_req_len.val();
        self.dma.s1_rd_req_tag.next = self.dma_q.m_dma_rd_req_tag.val();
        self.dma_q.m_dma_rd_data_valid.next = self.dma.s1_rd_data_valid.val();
        self.dma.s1_rd_data_ready.next = self.dma_q.m_dma_rd_data_ready.val();
        self.dma_q.m_dma_rd_data.next = self.dma.rd_data.val();
        self.dma_q.m_dma_rd_data_last.next = self.dma.rd_data_last.val();
        self.dma_q.m_dma_rd_data_err.next = self.dma.rd_data_err.val();
        self.dma_q.m_dma_rd_data_tag.next = self.dma.rd_data_tag.val();
        self.dma.s1_wr_req_valid.next = self.dma_q.m_dma_wr_req_valid.val();
        self.dma_q.m_dma_wr_req_ready.next = self.dma.s1_wr_req_ready.val();
        self.dma.s1_wr_req_addr.next = self.dma_q.m_dma_wr_req_addr.val();
        self.dma.s1_wr_req_len.next = self.dma_q.m_dma_wr_req_len.val();
        self.dma.s1_wr_req_tag.next = self.dma_q.m_dma_wr_req_tag.val();
        self.dma.s1_wr_data_valid.next = self.dma_q.m_dma_wr_data_valid.val();
        self.dma_q.m_dma_wr_data_ready.next = self.dma.s1_wr_data_ready.val();
        self.dma.s1_wr_data.next = self.dma_q.m_dma_wr_data.val();
        self.dma.s1_wr_data_keep.next = self.dma_q.m_dma_wr_data_keep.val();
        self.dma.s1_wr_data_last.next = self.dma_q.m_dma_wr_data_last.val();
        self.dma_q.m_dma_wr_done_valid.next = self.dma.s1_wr_done_valid.val();
        self.dma_q.m_dma_wr_done_tag.next = self.dma.wr_done_tag.val();
        self.dma_q.m_dma_wr_done_err.next = self.dma.wr_done_err.val();

        // The top arbiter on the host's DMA port.
        self.m_dma_rd_req_valid.next = self.dma.m_dma_rd_req_valid.val();
        self.dma.m_dma_rd_req_ready.next = self.m_dma_rd_req_ready.val();
        self.m_dma_rd_req_addr.next = self.dma.m_dma_rd_req_addr.val();
        self.m_dma_rd_req_len.next = self.dma.m_dma_rd_req_len.val();
        self.m_dma_rd_req_tag.next = self.dma.m_dma_rd_req_tag.val();
        self.dma.m_dma_rd_data_valid.next = self.m_dma_rd_data_valid.val();
        self.m_dma_rd_data_ready.next = self.dma.m_dma_rd_data_ready.val();
        self.dma.m_dma_rd_data.next = self.m_dma_rd_data.val();
        self.dma.m_dma_rd_data_last.next = self.m_dma_rd_data_last.val();
        self.dma.m_dma_rd_data_err.next = self.m_dma_rd_data_err.val();
        self.dma.m_dma_rd_data_tag.next = self.m_dma_rd_data_tag.val();
        self.m_dma_wr_req_valid.next = self.dma.m_dma_wr_req_valid.val();
        self.dma.m_dma_wr_req_ready.next = self.m_dma_wr_req_ready.val();
        self.m_dma_wr_req_addr.next = self.dma.m_dma_wr_req_addr.val();
        self.m_dma_wr_req_len.next = self.dma.m_dma_wr_req_len.val();
        self.m_dma_wr_req_tag.next = self.dma.m_dma_wr_req_tag.val();
        self.m_dma_wr_data_valid.next = self.dma.m_dma_wr_data_valid.val();
        self.dma.m_dma_wr_data_ready.next = self.m_dma_wr_data_ready.val();
        self.m_dma_wr_data.next = self.dma.m_dma_wr_data.val();
        self.m_dma_wr_data_keep.next = self.dma.m_dma_wr_data_keep.val();
        self.m_dma_wr_data_last.next = self.dma.m_dma_wr_data_last.val();
        self.dma.m_dma_wr_done_valid.next = self.m_dma_wr_done_valid.val();
        self.dma.m_dma_wr_done_tag.next = self.m_dma_wr_done_tag.val();
        self.dma.m_dma_wr_done_err.next = self.m_dma_wr_done_err.val();

        // ---- Streams: raw transmit to the MAC; the MAC into the parser; bypass to raw rx.
        self.m_axis_tdata.next = self.raw_tx.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.raw_tx.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.raw_tx.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.raw_tx.m_axis_tvalid.val();
        self.m_axis_tuser.next = self.raw_tx.m_axis_tuser.val();
        self.raw_tx.m_axis_tready.next = self.m_axis_tready.val();
        self.rx.s_axis_tdata.next = self.s_axis_tdata.val();
        self.rx.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.rx.s_axis_tlast.next = self.s_axis_tlast.val();
        self.rx.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.rx.s_axis_tuser.next = self.s_axis_tuser.val();
        self.s_axis_tready.next = self.rx.s_axis_tready.val();
        // Accepted RoCEv2 frames: the transport's, consumed until it exists.
        self.rx.m_hdr_ready.next = true;
        self.rx.m_axis_tready.next = true;
        self.raw_rx.s_axis_tdata.next = self.rx.m_bypass_tdata.val();
        self.raw_rx.s_axis_tkeep.next = self.rx.m_bypass_tkeep.val();
        self.raw_rx.s_axis_tlast.next = self.rx.m_bypass_tlast.val();
        self.raw_rx.s_axis_tvalid.next = self.rx.m_bypass_tvalid.val();
        self.raw_rx.s_axis_tuser.next = self.rx.m_bypass_tuser.val();
        self.rx.m_bypass_tready.next = self.raw_rx.s_axis_tready.val();

        // ---- Counters. A fetched request ends on its last beat; one the host refused to
        // read comes out with err on its beats. Every read event (a request fetched, a read
        // error) comes with a beat of the shared read data channel and every write error with
        // a write done, one per cycle, so ORing the engines' events counts each once.
        self.sq_fetched.next = self.sq.m_wqe_valid.val() & self.sq.m_wqe_last.val();
        self.rq_fetched.next = self.rq.m_wqe_valid.val() & self.rq.m_wqe_last.val();
        self.wqe_rd_err.next = (self.sq_fetched.val() & self.sq.m_wqe_err.val())
            | (self.rq_fetched.val() & self.rq.m_wqe_err.val());
        if self.raw_tx.m_axis_tvalid.val()
            & self.m_axis_tready.val()
            & self.raw_tx.m_axis_tlast.val()
        {
            self.cnt_tx_frames.d.next = self.cnt_tx_frames.q.val() + self.k_one32.val();
        }
        if self.raw_tx.ev_dma_error.val()
            | self.raw_rx.ev_dma_read_error.val()
            | self.wqe_rd_err.val()
        {
            self.cnt_dma_rd_err.d.next = self.cnt_dma_rd_err.q.val() + self.k_one32.val();
        }
        if self.raw_rx.ev_dma_write_error.val() | self.cq.ev_dma_error.val() {
            self.cnt_dma_wr_err.d.next = self.cnt_dma_wr_err.q.val() + self.k_one32.val();
        }
        if self.raw_tx.ev_ring_error.val() | self.raw_rx.ev_ring_error.val() {
            self.cnt_ring_err.d.next = self.cnt_ring_err.q.val() + self.k_one32.val();
        }
        if self.raw_rx.ev_drop.val() {
            self.cnt_raw_drops.d.next = self.cnt_raw_drops.q.val() + self.k_one32.val();
        }
        if self.raw_tx.ev_frame.val() {
            self.cnt_raw_tx.d.next = self.cnt_raw_tx.q.val() + self.k_one32.val();
        }
        if self.raw_rx.ev_frame.val() {
            self.cnt_raw_rx.d.next = self.cnt_raw_rx.q.val() + self.k_one32.val();
        }
        if self.sq_fetched.val() | self.rq_fetched.val() {
            self.cnt_wqe.d.next = self.cnt_wqe.q.val() + self.k_one32.val();
        }
        if self.cq.ev_written.val() {
            self.cnt_cqe.d.next = self.cnt_cqe.q.val() + self.k_one32.val();
        }
        if self.cq.ev_overflow.val() {
            self.cnt_cq_overflow.d.next = self.cnt_cq_overflow.q.val() + self.k_one32.val();
        }
        if self.dp_reset.val() {
            self.cnt_tx_frames.d.next = self.k_zero32.val();
            self.cnt_dma_rd_err.d.next = self.k_zero32.val();
            self.cnt_dma_wr_err.d.next = self.k_zero32.val();
            self.cnt_ring_err.d.next = self.k_zero32.val();
            self.cnt_raw_drops.d.next = self.k_zero32.val();
            self.cnt_raw_tx.d.next = self.k_zero32.val();
            self.cnt_raw_rx.d.next = self.k_zero32.val();
            self.cnt_wqe.d.next = self.k_zero32.val();
            self.cnt_cqe.d.next = self.k_zero32.val();
            self.cnt_cq_overflow.d.next = self.k_zero32.val();
        }

        // ---- Status words (host_regs::ST_*): receive counters 0..11, TX_FRAMES 12, DMA
        // read and write errors 13, 14, ring errors 15, STATUS 16, raw drops 17, raw frames
        // sent 18 and received 19, requests fetched 20, completions written 21, completions
        // refused 22.
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
            | (bit_cast::<768, 32>(self.rx.cnt_drop_icrc.val()) << 352)
            | (bit_cast::<768, 32>(self.cnt_tx_frames.q.val()) << 384)
            | (bit_cast::<768, 32>(self.cnt_dma_rd_err.q.val()) << 416)
            | (bit_cast::<768, 32>(self.cnt_dma_wr_err.q.val()) << 448)
            | (bit_cast::<768, 32>(self.cnt_ring_err.q.val()) << 480)
            | (bit_cast::<768, 32>(self.cnt_raw_drops.q.val()) << 544)
            | (bit_cast::<768, 32>(self.cnt_raw_tx.q.val()) << 576)
            | (bit_cast::<768, 32>(self.cnt_raw_rx.q.val()) << 608)
            | (bit_cast::<768, 32>(self.cnt_wqe.q.val()) << 640)
            | (bit_cast::<768, 32>(self.cnt_cqe.q.val()) << 672)
            | (bit_cast::<768, 32>(self.cnt_cq_overflow.q.val()) << 704);
        if self.link_up.val() {
            self.status.next = self.status.val() | self.k_link_up.val();
        }
        if !self.reset.val() {
            self.status.next = self.status.val() | self.k_reset_done.val();
        }
        self.csr.status.next = self.status.val();
    }
}
