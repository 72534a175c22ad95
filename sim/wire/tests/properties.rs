//! Property tests: no input makes the model panic, and building then parsing a random
//! description gives the description back.

use std::net::{Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;
use rnic_wire::bth::BthRepr;
use rnic_wire::ext::*;
use rnic_wire::ipv4::Ipv4Repr;
use rnic_wire::ipv6::Ipv6Repr;
use rnic_wire::opcode::{Ext, OPCODES};
use rnic_wire::udp::UdpRepr;
use rnic_wire::{EthRepr, IpRepr, MacAddr, RoceFrame, RocePacket, VlanTag, icrc, locate, pcap};

fn eth() -> impl Strategy<Value = EthRepr> {
    (
        any::<[u8; 6]>(),
        any::<[u8; 6]>(),
        proptest::option::of((0u8..8, any::<bool>(), 0u16..4096)),
    )
        .prop_map(|(d, s, v)| EthRepr {
            dst: MacAddr(d),
            src: MacAddr(s),
            vlan: v.map(|(pcp, dei, vid)| VlanTag { pcp, dei, vid }),
        })
}

fn ip() -> impl Strategy<Value = IpRepr> {
    prop_oneof![
        (
            any::<u32>(),
            any::<u32>(),
            0u8..64,
            0u8..4,
            any::<u8>(),
            any::<u16>(),
            any::<bool>()
        )
            .prop_map(|(s, d, dscp, ecn, ttl, ident, df)| IpRepr::V4(Ipv4Repr {
                src: Ipv4Addr::from(s),
                dst: Ipv4Addr::from(d),
                dscp,
                ecn,
                ttl,
                ident,
                dont_frag: df,
            })),
        (
            any::<u128>(),
            any::<u128>(),
            0u8..64,
            0u8..4,
            0u32..(1 << 20),
            any::<u8>()
        )
            .prop_map(|(s, d, dscp, ecn, fl, hl)| IpRepr::V6(Ipv6Repr {
                src: Ipv6Addr::from(s),
                dst: Ipv6Addr::from(d),
                dscp,
                ecn,
                flow_label: fl,
                hop_limit: hl,
            })),
    ]
}

fn bth(opcode: u8) -> impl Strategy<Value = BthRepr> {
    (
        any::<[bool; 5]>(),
        any::<u16>(),
        0u32..(1 << 24),
        0u32..(1 << 24),
        (0u8..64, 0u8..128),
    )
        .prop_map(move |(f, pkey, qp, psn, resv)| BthRepr {
            opcode,
            solicited: f[0],
            mig_req: f[1],
            tver: 0,
            pkey,
            fecn: f[2],
            becn: f[3],
            dest_qp: qp,
            ack_req: f[4],
            psn,
            resv6: resv.0,
            resv7: resv.1,
        })
}

fn ext_values() -> impl Strategy<Value = ExtHeaders> {
    (
        (any::<u64>(), any::<u32>(), any::<u32>()),
        (any::<u8>(), 0u32..(1 << 24)),
        any::<u32>(),
        any::<u32>(),
        (any::<u64>(), any::<u32>(), any::<u64>(), any::<u64>()),
        any::<u64>(),
        (any::<u32>(), 0u32..(1 << 24), any::<u8>()),
    )
        .prop_map(|(r, a, imm, ieth, at, orig, d)| ExtHeaders {
            reth: Some(Reth {
                va: r.0,
                rkey: r.1,
                dma_len: r.2,
            }),
            aeth: Some(Aeth {
                syndrome: a.0,
                msn: a.1,
            }),
            immdt: Some(imm),
            ieth: Some(ieth),
            atomic_eth: Some(AtomicEth {
                va: at.0,
                rkey: at.1,
                swap_add: at.2,
                compare: at.3,
            }),
            atomic_ack_eth: Some(AtomicAckEth { orig }),
            deth: Some(Deth {
                qkey: d.0,
                src_qp: d.1,
                resv: d.2,
            }),
        })
}

/// A random valid description: any opcode of the table with exactly its headers.
fn frame() -> impl Strategy<Value = RoceFrame> {
    (0..OPCODES.len()).prop_flat_map(|i| {
        let op = OPCODES[i];
        let max_payload = if op.payload { 600 } else { 0 };
        (
            eth(),
            ip(),
            (any::<u16>(), any::<u16>()),
            bth(op.code),
            ext_values(),
            proptest::collection::vec(any::<u8>(), 0..=max_payload),
        )
            .prop_map(move |(eth, ip, (sport, csum), bth, all, payload)| {
                let keep = |h: Ext| op.has(h);
                RoceFrame {
                    eth,
                    ip,
                    udp: UdpRepr {
                        src_port: sport,
                        dst_port: 4791,
                        checksum: csum,
                    },
                    bth,
                    ext: ExtHeaders {
                        reth: all.reth.filter(|_| keep(Ext::Reth)),
                        aeth: all.aeth.filter(|_| keep(Ext::Aeth)),
                        immdt: all.immdt.filter(|_| keep(Ext::ImmDt)),
                        ieth: all.ieth.filter(|_| keep(Ext::Ieth)),
                        atomic_eth: all.atomic_eth.filter(|_| keep(Ext::AtomicEth)),
                        atomic_ack_eth: all.atomic_ack_eth.filter(|_| keep(Ext::AtomicAckEth)),
                        deth: all.deth.filter(|_| keep(Ext::Deth)),
                    },
                    payload,
                }
            })
    })
}

fn no_panic(bytes: &[u8]) {
    let _ = RocePacket::parse(bytes).map(|p| (p.icrc_ok(), p.repr()));
    let _ = locate(bytes, &[4791]);
    let _ = EthRepr::parse(bytes);
    let _ = icrc::compute(bytes, 0);
    let _ = pcap::parse(bytes);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn build_then_parse_returns_the_description(f in frame()) {
        let wire = f.build().unwrap();
        let p = RocePacket::parse(&wire).unwrap();
        prop_assert!(p.icrc_ok());
        prop_assert_eq!(p.ip.checksum_ok(), match f.ip { IpRepr::V4(_) => Some(true), _ => None });
        prop_assert_eq!(p.repr(), f.clone());
        // With Ethernet minimum-size padding the packet still parses to the same thing.
        let mut padded = wire.clone();
        rnic_wire::pad_to_min(&mut padded);
        padded.extend_from_slice(&[0; 3]);
        let q = RocePacket::parse(&padded).unwrap();
        prop_assert!(q.icrc_ok());
        prop_assert_eq!(q.repr(), f);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        no_panic(&bytes);
    }

    /// Damaged valid frames (cut short, bytes overwritten) reach deeper into the parser than
    /// random bytes do.
    #[test]
    fn damaged_frames_never_panic(
        f in frame(),
        cut in any::<prop::sample::Index>(),
        hits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
    ) {
        let mut wire = f.build().unwrap();
        for (at, v) in hits {
            let i = at.index(wire.len());
            wire[i] = v;
        }
        no_panic(&wire);
        let n = cut.index(wire.len() + 1);
        no_panic(&wire[..n]);
    }
}

#[test]
fn builder_rejects_what_does_not_fit() {
    let mut f = RoceFrame {
        eth: EthRepr {
            dst: MacAddr([0; 6]),
            src: MacAddr([0; 6]),
            vlan: None,
        },
        ip: IpRepr::V4(Ipv4Repr {
            src: Ipv4Addr::LOCALHOST,
            dst: Ipv4Addr::LOCALHOST,
            dscp: 0,
            ecn: 0,
            ttl: 1,
            ident: 0,
            dont_frag: false,
        }),
        udp: UdpRepr {
            src_port: 1,
            dst_port: 4791,
            checksum: 0,
        },
        bth: BthRepr {
            opcode: 0x0A,
            solicited: false,
            mig_req: false,
            tver: 0,
            pkey: 0xFFFF,
            fecn: false,
            becn: false,
            dest_qp: 1 << 24,
            ack_req: false,
            psn: 0,
            resv6: 0,
            resv7: 0,
        },
        ext: ExtHeaders::default(),
        payload: vec![1, 2, 3],
    };
    assert_eq!(
        f.build().unwrap_err().to_string(),
        "BTH DestQP = 0x1000000 does not fit (max 0xffffff)"
    );
    f.bth.dest_qp = 1;
    assert_eq!(
        f.build().unwrap_err().to_string(),
        "opcode 0x0a needs a RETH"
    );
    f.bth.opcode = 0x11;
    f.ext.aeth = Some(Aeth {
        syndrome: 0x1F,
        msn: 0,
    });
    assert_eq!(
        f.build().unwrap_err().to_string(),
        "opcode 0x11 carries no payload (3 bytes given)"
    );
    f.bth.opcode = 0x15;
    assert_eq!(f.build().unwrap_err().to_string(), "unknown opcode 0x15");
    f.bth.opcode = 0x04;
    assert_eq!(
        f.build().unwrap_err().to_string(),
        "opcode 0x04 does not carry a AETH"
    );
    f.ext.aeth = None;
    f.payload = vec![0; 70_000];
    assert!(matches!(
        f.build().unwrap_err(),
        rnic_wire::BuildError::TooLong { .. }
    ));
}
