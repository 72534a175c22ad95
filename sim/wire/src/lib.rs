//! RoCEv2 wire model: the project's software oracle.
//!
//! Header layouts are defined once, as field tables ([`field::Layout`]), and read by the typed
//! views, by the owned representations and (later) by the hardware generators. On top of them:
//! the opcode table ([`opcode`]), the ICRC ([`icrc`]), the frame builder and parser
//! ([`RoceFrame`], [`RocePacket`]) and capture files ([`pcap`]). Nothing here depends on HDL
//! code, and no input, however malformed, makes it panic.

pub mod bth;
pub mod error;
pub mod eth;
pub mod ext;
pub mod field;
pub mod icrc;
pub mod ipv4;
pub mod ipv6;
pub mod opcode;
pub mod packet;
pub mod pcap;
pub mod udp;

pub use error::{BuildError, Error, ErrorKind, Layer};
pub use eth::{EthRepr, MacAddr, VlanTag};
pub use opcode::{OpcodeInfo, Transport};
pub use packet::{IpParsed, IpRepr, RoceFrame, RoceLocation, RocePacket, locate, pad_to_min};

/// Parses a hex string (whitespace ignored) into bytes.
pub fn parse_hex(s: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if digits.len() % 2 != 0 {
        return Err(format!(
            "hex string has an odd number of digits ({})",
            digits.len()
        ));
    }
    digits
        .chunks(2)
        .enumerate()
        .map(|(i, p)| {
            let txt = std::str::from_utf8(p).unwrap_or("??");
            u8::from_str_radix(txt, 16).map_err(|_| format!("bad hex digits {txt:?} at {}", 2 * i))
        })
        .collect()
}
