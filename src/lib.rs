//! The `rnic` command-line tool's commands, as a library so that tests can drive them.

pub mod bench;
pub mod bench_sim;
pub mod build_table;
pub mod fpga;
pub mod interop_cli;
pub mod ooc;
pub mod packet_cli;
pub mod qemu_cli;
pub mod raw_cli;
pub mod rdma_bench;
pub mod rdma_cli;
pub mod regs_cli;
pub mod replay_cli;
pub mod requester_bench;
pub mod responder_bench;
pub mod sim;
pub mod summary;
pub mod tools_cli;
pub mod trace;
