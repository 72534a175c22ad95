//! Co-simulation of the rnic hardware: the Verilator bridge ([`verilated`]), the stream models
//! ([`axis`]), the lock-step harness ([`lockstep`]) that runs a module in rust-hdl's simulator
//! and in Verilator side by side, and drivers for the modules ([`icrc`]).

pub mod axil;
pub mod axis;
pub mod board;
pub mod comp_step;
pub mod core;
pub mod dma_bench;
pub mod dut;
pub mod host;
pub mod icrc;
pub mod lockstep;
pub mod mac;
pub mod need;
pub mod packet_dut;
pub mod ports;
pub mod rx_model;
pub mod transport;
pub mod tx_dut;
pub mod verilated;
