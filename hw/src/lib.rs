//! The rnic datapath as rust-hdl modules that generate Verilog.
//!
//! Coding rules for every module here: `hw/RULES.md`. Every module has a top in [`tops`] and
//! runs in lock-step against its Verilog under Verilator (`sim/cosim`).

pub mod address_vector;
pub mod axil_slave;
pub mod axis_register;
pub mod board_top;
pub mod cdc;
pub mod commit_fifo;
pub mod core_slot;
pub mod cq_path;
pub mod cq_writer;
pub mod crc32;
pub mod csr_file;
pub mod dma_arbiter;
pub mod ecp5_prims;
pub mod field_split;
pub mod frame_fifo;
pub mod frame_mux;
pub mod header_channel;
pub mod header_compact;
pub mod header_compose;
pub mod header_expand;
pub mod header_extract;
pub mod header_fifo;
pub mod header_register;
pub mod host_nic;
pub mod host_regs;
pub mod icrc_engine;
pub mod mac_rx;
pub mod mac_tx;
pub mod opcode_demux;
pub mod packet_loopback;
pub mod payload_scatter;
pub mod queue_mgr;
pub mod raw_rx;
pub mod raw_tx;
pub mod recv_wqe;
pub mod req_segment;
pub mod reset_sync;
pub mod resp_check;
pub mod responder;
pub mod responder_path;
pub mod rgmii_io;
pub mod rgmii_mac;
pub mod row_table;
pub mod rx_parser;
pub mod status_leds;
pub mod tops;
pub mod transport_header;
pub mod transport_rx;
pub mod transport_tx;
pub mod tx_builder;
pub mod width_conv;
pub mod wq_path;
pub mod wqe_fetch;
