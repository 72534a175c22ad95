//! Host tools over the verbs API, compatible on the wire and over TCP with the real ones:
//! the rdma-core pingpong examples ([`pingpong`]), perftest's bandwidth tests ([`perftest`]) and the neighbour resolution they need
//! ([`neighbour`]).

pub mod exchange;
pub mod neighbour;
pub mod perftest;
pub mod pingpong;

/// A first PSN that differs from run to run (the tools use `lrand48() & 0xffffff`).
pub fn random_psn() -> u32 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ u64::from(std::process::id()) << 32;
    ((t ^ (t >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as u32 & 0xFF_FFFF
}

/// A verbs or other error as the tools report it.
fn fail(e: impl std::fmt::Display) -> String {
    e.to_string()
}
