//! Host tools over the verbs API, compatible on the wire and over TCP with the real ones:
//! the rdma-core pingpong examples ([`pingpong`]) and the neighbour resolution they need
//! ([`neighbour`]).

pub mod exchange;
pub mod neighbour;
pub mod pingpong;
