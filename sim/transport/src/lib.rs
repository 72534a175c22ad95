//! Reference model of the RoCEv2 transport: Reliable Connection and Unreliable Datagram, as
//! Linux soft-RoCE (rxe) behaves on the wire (`../shared/docs/rc-transport.md`).
//!
//! A [`Nic`] holds protection domains, memory regions (keys `index << 8 | tag`), completion
//! queues and queue pairs; its requester turns work requests into packets, its responder
//! checks and executes requests, its completer turns responses into completions and retries
//! by go-back-N. There is no I/O and no clock: frames go in with [`Nic::receive`] and out of
//! [`Nic::poll`], each call is told the time, so every run is reproducible. Every frame is
//! built and parsed by `rnic-wire`. The hardware engines are compared with this model frame
//! for frame.

pub mod arp;
pub mod comp_check;
pub mod completer;
pub mod counters;
pub mod mr;
pub mod nic;
pub mod ops;
pub mod psn;
pub mod qp;
pub mod replay;
pub mod requester;
pub mod resp_check;
pub mod responder;
pub mod verbs;

pub use counters::Counters;
pub use mr::{AccessError, MrInfo, MrSpec, Pd};
pub use nic::{Cq, Nic, NicConfig, rxe_source_port};
pub use qp::{Qp, QpInit, RNR_TIMER_NS, VerbsError};
pub use rnic_wire::MacAddr;
pub use verbs::*;
