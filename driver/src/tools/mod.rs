//! Host tools over the verbs API, compatible on the wire and over TCP with the real ones:
//! the rdma-core pingpong examples ([`pingpong`]), perftest's bandwidth tests ([`perftest`]) and the neighbour resolution they need
//! ([`neighbour`]).

pub mod exchange;
pub mod neighbour;
pub mod perftest;
pub mod pingpong;
