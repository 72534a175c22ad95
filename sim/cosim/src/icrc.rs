//! Driving the ICRC engine: the expected verdict of a frame from the software model, random
//! frames for tests, and running captures through the Verilator model.

use std::net::{Ipv4Addr, Ipv6Addr};

use rnic_wire::bth::BthRepr;
use rnic_wire::ext::*;
use rnic_wire::ipv4::Ipv4Repr;
use rnic_wire::ipv6::Ipv6Repr;
use rnic_wire::opcode::{Ext, OPCODES};
use rnic_wire::udp::UdpRepr;
use rnic_wire::{EthRepr, IpRepr, MacAddr, RoceFrame, VlanTag, icrc, locate};

use crate::axis::Rng;

/// tuser bits of the engine's output.
pub const TUSER_BAD: u64 = 1;
pub const TUSER_ROCE: u64 = 2;

/// What the RX engine must say about `frame`, by the software model: (RoCEv2, bad).
pub fn expected_rx(frame: &[u8], mac_error: bool) -> (bool, bool) {
    let Some(loc) = locate(frame, &[udp_port()]) else {
        return (false, mac_error);
    };
    if frame[loc.ip_offset] != 0x45 && frame[loc.ip_offset] >> 4 == 4 {
        // IPv4 with options: the engine does not treat it as RoCEv2.
        return (false, mac_error);
    }
    let ip = loc.ip_packet(frame);
    let ok = !loc.truncated(frame)
        && (ip.len() % 4 == 0)
        && icrc::compute(ip, loc.ip_offset).is_ok_and(|c| Some(c) == icrc::wire(ip));
    (true, mac_error || !ok)
}

fn udp_port() -> u16 {
    rnic_wire::udp::ROCE_PORT
}

/// A random RoCEv2 frame description: any opcode, IPv4 or IPv6, with or without a tag, payload
/// up to `max_payload` bytes (and what fits a 9000-byte IP MTU).
pub fn random_frame(rng: &mut Rng, max_payload: usize) -> RoceFrame {
    let op = OPCODES[rng.below(OPCODES.len() as u64) as usize];
    let v6 = rng.chance(0.5);
    let ip = if v6 {
        IpRepr::V6(Ipv6Repr {
            src: Ipv6Addr::from(u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64())),
            dst: Ipv6Addr::from(u128::from(rng.next_u64())),
            dscp: rng.below(64) as u8,
            ecn: rng.below(4) as u8,
            flow_label: rng.below(1 << 20) as u32,
            hop_limit: rng.next_u64() as u8,
        })
    } else {
        IpRepr::V4(Ipv4Repr {
            src: Ipv4Addr::from(rng.next_u64() as u32),
            dst: Ipv4Addr::from(rng.next_u64() as u32),
            dscp: rng.below(64) as u8,
            ecn: rng.below(4) as u8,
            ttl: rng.next_u64() as u8,
            ident: rng.next_u64() as u16,
            dont_frag: rng.chance(0.5),
        })
    };
    let r = |rng: &mut Rng| rng.next_u64();
    let keep = |h: Ext| op.has(h);
    let mtu_room = 9000 - 40 - 8 - 12 - op.ext_len() - 4 - 3;
    let cap = max_payload.min(mtu_room);
    let len = if !op.payload {
        0
    } else if rng.chance(0.1) {
        cap
    } else {
        rng.below(cap as u64 + 1) as usize
    };
    RoceFrame {
        eth: EthRepr {
            dst: MacAddr::from_u64(r(rng)),
            src: MacAddr::from_u64(r(rng)),
            vlan: rng.chance(0.5).then(|| VlanTag {
                pcp: rng.below(8) as u8,
                dei: rng.chance(0.5),
                vid: rng.below(4096) as u16,
            }),
        },
        ip,
        udp: UdpRepr {
            src_port: r(rng) as u16,
            dst_port: udp_port(),
            checksum: if rng.chance(0.2) { r(rng) as u16 } else { 0 },
        },
        bth: BthRepr {
            opcode: op.code,
            solicited: rng.chance(0.5),
            mig_req: rng.chance(0.5),
            tver: 0,
            pkey: r(rng) as u16,
            fecn: rng.chance(0.3),
            becn: rng.chance(0.3),
            dest_qp: rng.below(1 << 24) as u32,
            ack_req: rng.chance(0.5),
            psn: rng.below(1 << 24) as u32,
            resv6: 0,
            resv7: 0,
        },
        ext: ExtHeaders {
            reth: keep(Ext::Reth).then(|| Reth {
                va: r(rng),
                rkey: r(rng) as u32,
                dma_len: r(rng) as u32,
            }),
            aeth: keep(Ext::Aeth).then(|| Aeth {
                syndrome: r(rng) as u8,
                msn: rng.below(1 << 24) as u32,
            }),
            immdt: keep(Ext::ImmDt).then(|| r(rng) as u32),
            ieth: keep(Ext::Ieth).then(|| r(rng) as u32),
            atomic_eth: keep(Ext::AtomicEth).then(|| AtomicEth {
                va: r(rng),
                rkey: r(rng) as u32,
                swap_add: r(rng),
                compare: r(rng),
            }),
            atomic_ack_eth: keep(Ext::AtomicAckEth).then(|| AtomicAckEth { orig: r(rng) }),
            deth: keep(Ext::Deth).then(|| Deth {
                qkey: r(rng) as u32,
                src_qp: rng.below(1 << 24) as u32,
                // Senders send it as zero; a receiver keeps what came.
                resv: if rng.chance(0.25) { r(rng) as u8 } else { 0 },
            }),
        },
        payload: (0..len).map(|_| r(rng) as u8).collect(),
    }
}

/// A payload cap drawn from tiers: mostly small frames, some MTU-sized, some jumbo (up to the
/// 9000-byte IP MTU).
pub fn size_tier(rng: &mut Rng) -> usize {
    match rng.below(10) {
        0..=6 => 256,
        7..=8 => 1500,
        _ => 9000,
    }
}

/// A mix for the RX engine: RoCEv2 frames (some with a flipped bit, some cut short, some
/// MAC-padded), and frames that are not RoCEv2 (ARP, UDP to another port). Returns frames with
/// the MAC error flag. `max_payload` 0 draws each frame's cap from [`size_tier`].
pub fn rx_mix(rng: &mut Rng, n: usize, max_payload: usize) -> Vec<(Vec<u8>, u64)> {
    (0..n)
        .map(|i| {
            let cap = if max_payload == 0 {
                size_tier(rng)
            } else {
                max_payload
            };
            let mut f = random_frame(rng, cap).build().expect("valid description");
            let roll = rng.below(100);
            match roll {
                0..=9 => {
                    // Flip one bit anywhere after the Ethernet header.
                    let at = 14 + rng.below(f.len() as u64 - 14) as usize;
                    f[at] ^= 1 << rng.below(8);
                }
                10..=12 => {
                    let cut = 1 + rng.below(f.len() as u64 - 1) as usize;
                    f.truncate(cut);
                }
                13..=15 => {
                    // Another UDP port: not RoCEv2.
                    let l3 = if f[12] == 0x81 { 18 } else { 14 };
                    let udp = l3 + if f[l3] >> 4 == 4 { 20 } else { 40 };
                    f[udp + 3] ^= 0x40;
                }
                16..=17 => {
                    f = vec![0xFF; 6];
                    f.extend([2, 0, 0, 0, 0, 1, 0x08, 0x06]);
                    f.extend((0..46).map(|_| rng.next_u64() as u8));
                }
                _ => {}
            }
            rnic_wire::pad_to_min(&mut f);
            // Every 7th frame arrives with the MAC's error flag.
            let mac_error = i % 7 == 6;
            (f, u64::from(mac_error))
        })
        .collect()
}
