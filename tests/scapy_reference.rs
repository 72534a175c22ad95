//! The builder and parser against scapy (an independent RoCEv2 implementation): every frame of
//! `tests/golden/scapy_reference.pcap` is rebuilt byte for byte from its description, and
//! parsing the frame returns the description.

mod common;

use std::collections::BTreeSet;

use rnic_wire::opcode::OPCODES;
use rnic_wire::{IpRepr, RocePacket};

#[test]
fn builder_reproduces_every_scapy_frame() {
    let (m, frames) = common::scapy_reference();
    assert!(m.generator.starts_with("scapy "), "{}", m.generator);
    assert_eq!(m.frames.len(), frames.len());
    for (e, wire) in m.frames.iter().zip(&frames) {
        let built = e
            .desc
            .build()
            .unwrap_or_else(|err| panic!("{}: {err}", e.name));
        if built != *wire {
            let at = built.iter().zip(wire).position(|(a, b)| a != b);
            panic!(
                "{}: built {} bytes, scapy {} bytes, first difference at {at:?}",
                e.name,
                built.len(),
                wire.len()
            );
        }
    }
}

#[test]
fn parser_recovers_every_scapy_description() {
    let (m, frames) = common::scapy_reference();
    for (e, wire) in m.frames.iter().zip(&frames) {
        let p = RocePacket::parse(wire).unwrap_or_else(|err| panic!("{}: {err}", e.name));
        assert!(p.icrc_ok(), "{}: ICRC", e.name);
        assert!(p.ip.checksum_ok().unwrap_or(true), "{}", e.name);
        assert_eq!(p.repr(), e.desc, "{}", e.name);
        assert_eq!(usize::from(p.pad_cnt), (4 - e.desc.payload.len() % 4) % 4);
        assert!(p.pad().iter().all(|&b| b == 0));
    }
}

/// The reference covers every opcode of the table, IPv4 and IPv6, with and without a tag, and
/// every pad count for opcodes with a payload.
#[test]
fn reference_covers_the_opcode_table() {
    let (m, _) = common::scapy_reference();
    let seen: BTreeSet<(u8, bool, bool, usize)> = m
        .frames
        .iter()
        .map(|e| {
            let d = &e.desc;
            let v6 = matches!(d.ip, IpRepr::V6(_));
            (d.bth.opcode, v6, d.eth.vlan.is_some(), d.payload.len() % 4)
        })
        .collect();
    for op in &OPCODES {
        for v6 in [false, true] {
            for vlan in [false, true] {
                let pads: &[usize] = if op.payload { &[0, 1, 2, 3] } else { &[0] };
                for &pad in pads {
                    assert!(
                        seen.contains(&(op.code, v6, vlan, pad)),
                        "{op} v6={v6} vlan={vlan} payload%4={pad} missing"
                    );
                }
            }
        }
    }
}
