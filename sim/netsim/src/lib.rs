//! Packet-level network simulator for RoCEv2 with a DCQCN reference model.
//!
//! - [`network`]: discrete-event network (integer-nanosecond time) of hosts and switches
//!   joined by [`link`]s; frames in flight are real RoCEv2 frames ([`packet`]) built by the
//!   wire model; [`switch`] queues, RED ECN marking and drops; [`tap`] pcap captures.
//! - [`endpoint`]: the host interface (receive, emit, wake) that a Verilator NIC model will
//!   implement later.
//! - [`dcqcn`]: notification point, CNP frames, reaction point in fixed and floating point.
//! - [`rdma`]: hosts running the model NIC of `rnic-transport` (RC QPs with retransmission)
//!   and a workload of SENDs, WRITEs, READs and atomics; two of them over one cable.
//! - [`traffic`]: RDMA WRITE senders paced by DCQCN and CNP-generating receivers.
//! - [`scenario`]: the paper's experiments (two flows, incast, RED vs cut-off, slow vs fast
//!   parameters) writing CSV, SVG ([`plot`]) and a summary; [`cli`] is the `rnic sim` surface.

pub mod cli;
pub mod dcqcn;
pub mod endpoint;
pub mod event;
pub mod link;
pub mod network;
pub mod packet;
pub mod params;
pub mod plot;
pub mod rdma;
pub mod rng;
pub mod scenario;
pub mod stats;
pub mod switch;
pub mod tap;
pub mod traffic;
