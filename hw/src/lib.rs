//! The rnic datapath as rust-hdl modules that generate Verilog.
//!
//! Coding rules for every module here: `hw/RULES.md`. Every module has a top in [`tops`] and
//! runs in lock-step against its Verilog under Verilator (`sim/cosim`).

pub mod crc32;
pub mod icrc_engine;
pub mod tops;
