//! The tops the Verilator bridge builds: one entry per module under lock-step test. rust-hdl
//! names every top `module top`; the bridge gives each its own prefix.

use rust_hdl::prelude::*;

use crate::icrc_engine::{IcrcEngine, Mode};

/// A top: its name (the Verilator prefix and the Rust accessor) and how to build it.
pub struct Top {
    pub name: &'static str,
    pub verilog: fn() -> String,
}

fn verilog_of<B: Block>(mut uut: B) -> String {
    uut.connect_all();
    if let Err(e) = check_all(&uut) {
        panic!("rust-hdl check failed: {e:?}");
    }
    generate_verilog(&uut)
}

/// Tops that are only placed and routed (`rnic build --core-only`): other parameters of a
/// module that [`TOPS`] runs under Verilator and in lock-step.
pub const PNR_TOPS: &[Top] = &[
    // The responder path sized for the LFE5U-25F (56 DP16KD): 64 QPs, regions and address
    // vectors as `responder_path`, but eight READ/atomic slots per QP (not sixteen) and a READ
    // FIFO of 1024 words (not 2048, as the `responder` top), 9 DP16KD less. Its block RAM
    // fits (53 of 56 DP16KD), its logic does not: nextpnr packs it into 92 % of the 25F's
    // logic cells and finds no legal placement.
    Top {
        name: "responder_path_25f",
        verilog: || verilog_of(crate::responder_path::ResponderPath::<6, 9, 10>::default()),
    },
    // The RC transport sized for the LFE5UM5G-85F: 1024 QPs, regions and address vectors,
    // four READ/atomic slots per QP (as `responder_path_1k`).
    Top {
        name: "rc_nic_1k",
        verilog: || verilog_of(crate::rc_nic::RcNic::<10, 12, 11, 10>::default()),
    },
];

/// Every top of the hardware crate.
pub const TOPS: &[Top] = &[
    Top {
        name: "icrc_rx",
        verilog: || verilog_of(IcrcEngine::new(Mode::Rx)),
    },
    Top {
        name: "icrc_tx",
        verilog: || verilog_of(IcrcEngine::new(Mode::Tx)),
    },
    // The register slice on the packet layer's edge streams.
    Top {
        name: "axis_register",
        verilog: || verilog_of(crate::axis_register::AxisRegister::new()),
    },
    // The RGMII MAC with its 64-bit streams (ECP5 DDR cells as simulation models).
    Top {
        name: "rgmii_mac",
        verilog: crate::board_top::mac_verilog,
    },
    // A whole board top (one LED, 25 MHz in), to prove it verilates with the cell models.
    Top {
        name: "board_1led",
        verilog: || {
            let pll = crate::ecp5_prims::PllConfig::new(25.0, 100.0).expect("PLL");
            crate::board_top::board_verilog(pll, 1).expect("board top")
        },
    },
    // The RoCEv2 receive parser (ICRC check, header channel, payload, bypass, drop counters).
    Top {
        name: "rx_parser",
        verilog: || verilog_of(crate::rx_parser::RxParser::new()),
    },
    // The RoCEv2 transmit builder (header composition, payload realignment, ICRC appended).
    Top {
        name: "tx_builder",
        verilog: || verilog_of(crate::tx_builder::TxBuilder::new()),
    },
    // Receive parser into transmit builder: accepted frames leave rebuilt from their fields.
    Top {
        name: "packet_loopback",
        verilog: || verilog_of(crate::packet_loopback::PacketLoopback::new()),
    },
    // The board's core slot: the packet loopback, its bypass merged back onto one stream.
    Top {
        name: "core_slot",
        verilog: || verilog_of(crate::core_slot::CoreSlot::default()),
    },
    // The CSR port (AXI4-Lite) alone.
    Top {
        name: "axil_slave",
        verilog: || verilog_of(crate::axil_slave::AxilSlave::default()),
    },
    // The DMA port's arbiter between two engines.
    Top {
        name: "dma_arbiter",
        verilog: || verilog_of(crate::dma_arbiter::DmaArbiter::<7, 8>::new()),
    },
    // A queue manager of 16 work rings (the NIC commits the consumer index).
    Top {
        name: "queue_mgr",
        verilog: || verilog_of(crate::queue_mgr::QueueMgr::<4>::new(false)),
    },
    // The completion path of 4 CQs: queue manager and completion writer.
    Top {
        name: "cq_path",
        verilog: || verilog_of(crate::cq_path::CqPath::<2>::default()),
    },
    // The work request path of 4 rings of 64-byte requests: queue manager and fetch engine.
    Top {
        name: "wq_path",
        verilog: || verilog_of(crate::wq_path::WqPath::<2, 4>::new(6)),
    },
    // A FIFO of 16 transport headers.
    Top {
        name: "header_fifo",
        verilog: || {
            verilog_of(crate::header_fifo::HeaderFifo::<
                { crate::transport_header::TH_BITS },
                4,
            >::default())
        },
    },
    // The register slice on a stream of transport headers.
    Top {
        name: "header_register",
        verilog: || {
            verilog_of(crate::header_register::HeaderRegister::<
                { crate::transport_header::TH_BITS },
            >::default())
        },
    },
    // The demultiplexer of transport headers and payloads by opcode class.
    Top {
        name: "opcode_demux",
        verilog: || verilog_of(crate::opcode_demux::OpcodeDemux::default()),
    },
    // The receive parser, header FIFO and demultiplexer: the transport's receive path.
    Top {
        name: "transport_rx",
        verilog: || verilog_of(crate::transport_rx::TransportRx::default()),
    },
    // A send descriptor and address vector expanded and built into a frame.
    Top {
        name: "transport_tx",
        verilog: || verilog_of(crate::transport_tx::TransportTx::default()),
    },
    // A table of 16 address vectors: host register window and engine lookups.
    Top {
        name: "row_table",
        verilog: || {
            verilog_of(crate::row_table::RowTable::<
                { crate::address_vector::AV_BITS },
                4,
            >::default())
        },
    },
    // The responder's decision about a request (64 memory region rows).
    Top {
        name: "resp_check",
        verilog: || verilog_of(crate::resp_check::RespCheck::<6>::default()),
    },
    // The requester's segmentation: one packet of a send work request.
    Top {
        name: "req_segment",
        verilog: || verilog_of(crate::req_segment::ReqSegment::default()),
    },
    // The requester's scheduler: round robin over 1024 QPs with work.
    Top {
        name: "req_sched",
        verilog: || verilog_of(crate::req_sched::ReqSched::<10>::default()),
    },
    // The completer's decision about a response, one step at a time.
    Top {
        name: "comp_check",
        verilog: || verilog_of(crate::comp_check::CompCheck::default()),
    },
    // The transport's timers: 1024 QPs, lazy timestamps, one row scanned per clock.
    Top {
        name: "qp_timers",
        verilog: || verilog_of(crate::qp_timers::QpTimers::<10>::default()),
    },
    // A packet's payload read from host memory across up to four entries at any byte.
    Top {
        name: "payload_gather",
        verilog: || verilog_of(crate::payload_gather::PayloadGather::default()),
    },
    // A message's byte range against its four scatter/gather entries: the pieces.
    Top {
        name: "sge_pieces",
        verilog: || verilog_of(crate::sge_pieces::SgePieces::default()),
    },
    // A payload written to host memory in up to four pieces at any byte.
    Top {
        name: "payload_scatter",
        verilog: || verilog_of(crate::payload_scatter::PayloadScatter::default()),
    },
    // The receive request at a ring's head, its entries checked (64 region rows, 4 rings).
    Top {
        name: "recv_wqe",
        verilog: || verilog_of(crate::recv_wqe::RecvWqe::<6, 2>::default()),
    },
    // The send request at the requester's index, its entries checked (64 region rows, 4 rings).
    Top {
        name: "send_wqe",
        verilog: || verilog_of(crate::send_wqe::SendWqe::<6, 2>::default()),
    },
    // The requester: one packet per turn, 64 QP and region rows, a 1024-word payload FIFO.
    Top {
        name: "requester",
        verilog: || verilog_of(crate::requester::Requester::<6, 10>::default()),
    },
    // The completer: 64 QP and region rows.
    Top {
        name: "completer",
        verilog: || verilog_of(crate::completer::Completer::<6>::default()),
    },
    // The sending side: scheduler, requester, completer and timers, 64 QPs.
    Top {
        name: "requester_path",
        verilog: || verilog_of(crate::requester_path::RequesterPath::<6, 10>::default()),
    },
    // The responder with 64 QP and region rows, and the 25F variant's 1024-word READ FIFO (so
    // that size runs in lock-step; `responder_path` has 2048 words).
    Top {
        name: "responder",
        verilog: || verilog_of(crate::responder::Responder::<6, 10, 10>::default()),
    },
    // The responder sized for the LFE5UM5G-85F: 1024 QP and region rows, four READ/atomic
    // slots per QP (4096 slots: sixteen per QP would take 160 of the part's 208 DP16KD).
    Top {
        name: "responder_1k",
        verilog: || verilog_of(crate::responder::Responder::<10, 12, 11>::default()),
    },
    // The responder with the packet layer and its tables: frames in, frames out.
    Top {
        name: "responder_path",
        verilog: || verilog_of(crate::responder_path::ResponderPath::<6, 10, 11>::default()),
    },
    // The same, sized for the LFE5UM5G-85F: 1024 QPs, regions and address vectors.
    Top {
        name: "responder_path_1k",
        verilog: || verilog_of(crate::responder_path::ResponderPath::<10, 12, 11>::default()),
    },
    // The RC transport of one NIC: the responder path and the sending side sharing the
    // packet layer, the tables, the DMA port and the completions; 64 QPs.
    Top {
        name: "rc_nic",
        verilog: || verilog_of(crate::rc_nic::RcNic::<6, 10, 11, 10>::default()),
    },
    // The host interface: CSR port and register file in front of the receive parser.
    Top {
        name: "host_nic",
        verilog: || verilog_of(crate::host_nic::HostNic::new()),
    },
];

/// Every top, [`TOPS`] then [`PNR_TOPS`].
pub fn all() -> impl Iterator<Item = &'static Top> {
    TOPS.iter().chain(PNR_TOPS)
}

/// A top of [`all`] by name.
pub fn find(name: &str) -> Option<&'static Top> {
    all().find(|t| t.name == name)
}

/// The names of [`all`] the tops.
pub fn names() -> Vec<&'static str> {
    all().map(|t| t.name).collect()
}
