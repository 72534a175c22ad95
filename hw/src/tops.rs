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
];
