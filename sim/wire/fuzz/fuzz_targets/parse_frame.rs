//! Fuzz the frame parser: no input may panic, and whatever parses must rebuild to a frame that
//! parses to the same description.
//!
//! Run: `cd sim/wire && cargo fuzz run parse_frame` (cargo-fuzz; nightly, or stable with
//! `RUSTC_BOOTSTRAP=1`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rnic_wire::{RocePacket, icrc, locate, pcap};

fuzz_target!(|data: &[u8]| {
    let _ = locate(data, &[4791]);
    let _ = icrc::compute(data, 0);
    let _ = pcap::parse(data);
    if let Ok(p) = RocePacket::parse(data) {
        let _ = p.icrc_ok();
        let desc = p.repr();
        // Reserved bits and a non-zero UDP checksum are not part of the description, so the
        // rebuilt frame may differ in those bytes; its description may not.
        let built = desc.build().expect("a parsed description builds");
        let again = RocePacket::parse(&built).expect("a built frame parses");
        assert_eq!(again.repr(), desc);
        assert!(again.icrc_ok());
    }
});
