//! The RoCEv2 invariant CRC (roce-wire.md, "ICRC").
//!
//! CRC-32 (IEEE 802.3) over: 8 bytes of 0xFF standing in for the InfiniBand LRH; the IP header
//! with its variant fields set to ones (IPv4 TOS, TTL, header checksum; IPv6 traffic class, flow
//! label, hop limit); the UDP header with the checksum set to 0xFFFF; the BTH with byte 4 (FECN,
//! BECN, reserved) set to 0xFF; then everything up to the ICRC. The trailer is the CRC least
//! significant byte first. Only the masked headers (at most 68 bytes) are copied; the rest of the
//! packet is fed to the CRC where it lies.

use crate::field::Field;
use crate::{Error, ErrorKind, Layer, bth, ipv4, ipv6, udp};

/// ICRC trailer length.
pub const LEN: usize = 4;

/// The CRC-32 register after the 8 0xFF bytes (soft-RoCE's seed, before the final XOR).
pub const SEED_AFTER_LRH: u32 = 0xDEBB_20E3;

/// Longest masked prefix: LRH stand-in, IPv6 header, UDP header, BTH.
const MAX_PREFIX: usize = 8 + 40 + 8 + 12;

/// The fields the ICRC sets to all ones in an IPv4 packet, as (offset of their header from the
/// IP header, field). The software ICRC and the hardware engine both take them from here.
pub const IPV4_MASKED: [(usize, Field); 8] = [
    (0, ipv4::DSCP),
    (0, ipv4::ECN),
    (0, ipv4::TTL),
    (0, ipv4::CHECKSUM),
    (20, udp::CHECKSUM),
    (28, bth::FECN),
    (28, bth::BECN),
    (28, bth::RESV6),
];

/// The same for IPv6: traffic class, flow label, hop limit, UDP checksum, BTH byte 4.
pub const IPV6_MASKED: [(usize, Field); 8] = [
    (0, ipv6::DSCP),
    (0, ipv6::ECN),
    (0, ipv6::FLOW_LABEL),
    (0, ipv6::HOP_LIMIT),
    (40, udp::CHECKSUM),
    (48, bth::FECN),
    (48, bth::BECN),
    (48, bth::RESV6),
];

/// The masked fields for an IPv4 (`v6` false) or IPv6 packet.
pub fn masked_fields(v6: bool) -> &'static [(usize, Field); 8] {
    if v6 { &IPV6_MASKED } else { &IPV4_MASKED }
}

/// Computes the ICRC of an IP packet that starts at `ip` and ends with its 4-byte ICRC (the IP
/// length exactly; Ethernet padding must already be cut off). `offset` is the packet's position
/// in the frame, for error messages.
pub fn compute(ip: &[u8], offset: usize) -> Result<u32, Error> {
    let version = ip.first().map(|b| b >> 4);
    let ip_len = match version {
        Some(4) => ipv4::LAYOUT.len,
        Some(6) => ipv6::LAYOUT.len,
        Some(v) => {
            return Err(Error::new(
                Layer::Ipv4,
                offset,
                ErrorKind::BadField {
                    field: "Version",
                    value: v.into(),
                },
            ));
        }
        None => return Err(Error::truncated(Layer::Ipv4, offset, 20, 0)),
    };
    if ip_len == ipv4::LAYOUT.len && ip[0] & 0x0F != 5 {
        return Err(Error::unsupported(
            Layer::Ipv4,
            offset,
            format!("IPv4 options (IHL {})", ip[0] & 0x0F),
        ));
    }
    let headers = ip_len + udp::LAYOUT.len + bth::LAYOUT.len;
    if ip.len() < headers + LEN {
        return Err(Error::truncated(
            Layer::Icrc,
            offset,
            headers + LEN,
            ip.len(),
        ));
    }
    let mut prefix = [0xFFu8; MAX_PREFIX];
    let masked = &mut prefix[8..8 + headers];
    masked.copy_from_slice(&ip[..headers]);
    for &(start, field) in masked_fields(ip_len == ipv6::LAYOUT.len) {
        field.set(&mut masked[start..], field.max());
    }
    // The first bytes never vary once the version and IHL are checked: start from their CRC.
    let (skip, seed, fixed) = if ip_len == ipv4::LAYOUT.len {
        (10, V4_SEED, &V4_FIXED[..])
    } else {
        (12, V6_SEED, &V6_FIXED[..])
    };
    debug_assert_eq!(&prefix[..skip], fixed);
    let mut h = crc32fast::Hasher::new_with_initial(seed);
    h.update(&prefix[skip..8 + headers]);
    h.update(&ip[headers..ip.len() - LEN]);
    Ok(h.finalize())
}

/// CRC-32 of `bytes` (zlib's value), at compile time.
const fn crc32_of(bytes: &[u8]) -> u32 {
    let mut r = !0u32;
    let mut i = 0;
    while i < bytes.len() {
        r ^= bytes[i] as u32;
        let mut k = 0;
        while k < 8 {
            r = (r >> 1) ^ (0xEDB8_8320 & (r & 1).wrapping_neg());
            k += 1;
        }
        i += 1;
    }
    !r
}

/// The ICRC input's first bytes that never vary: the LRH stand-in, then IPv4's version/IHL
/// (0x45, checked) and masked TOS, or IPv6's version with the masked traffic class and flow
/// label.
const V4_FIXED: [u8; 10] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x45, 0xFF];
const V6_FIXED: [u8; 12] = [
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x6F, 0xFF, 0xFF, 0xFF,
];
const V4_SEED: u32 = crc32_of(&V4_FIXED);
const V6_SEED: u32 = crc32_of(&V6_FIXED);

/// The ICRC carried in the last 4 bytes of the IP packet.
pub fn wire(ip: &[u8]) -> Option<u32> {
    let t = ip.len().checked_sub(LEN)?;
    Some(u32::from_le_bytes([ip[t], ip[t + 1], ip[t + 2], ip[t + 3]]))
}

/// Recomputes the ICRC of the IP packet `ip` and writes it into its last 4 bytes.
pub fn fill(ip: &mut [u8], offset: usize) -> Result<u32, Error> {
    let c = compute(ip, offset)?;
    let t = ip.len() - LEN;
    ip[t..].copy_from_slice(&c.to_le_bytes());
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The masked bytes, hand-listed from roce-wire.md, against the field tables.
    #[test]
    fn masked_fields_are_the_documented_bytes() {
        for (v6, want) in [
            (
                false,
                vec![
                    (1, 0xFF),
                    (8, 0xFF),
                    (10, 0xFF),
                    (11, 0xFF),
                    (26, 0xFF),
                    (27, 0xFF),
                    (32, 0xFF),
                ],
            ),
            (
                true,
                vec![
                    (0, 0x0F),
                    (1, 0xFF),
                    (2, 0xFF),
                    (3, 0xFF),
                    (7, 0xFF),
                    (46, 0xFF),
                    (47, 0xFF),
                    (52, 0xFF),
                ],
            ),
        ] {
            let mut m = [0u8; 60];
            for &(at, f) in masked_fields(v6) {
                f.set(&mut m[at..], f.max());
            }
            let got: Vec<(usize, u8)> = m
                .iter()
                .enumerate()
                .filter(|(_, b)| **b != 0)
                .map(|(i, b)| (i, *b))
                .collect();
            assert_eq!(got, want, "v6={v6}");
        }
    }

    #[test]
    fn fixed_prefix_seeds_continue_like_crc32fast() {
        let mut h = crc32fast::Hasher::new_with_initial(crc32_of(b"RoCE"));
        h.update(b"v2");
        assert_eq!(h.finalize(), crc32fast::hash(b"RoCEv2"));
        assert_eq!(V4_SEED, crc32fast::hash(&V4_FIXED));
    }

    #[test]
    fn seed_matches_soft_roce() {
        // The raw register (no final XOR) after eight 0xFF bytes.
        let mut h = crc32fast::Hasher::new();
        h.update(&[0xFF; 8]);
        assert_eq!(!h.finalize(), SEED_AFTER_LRH);
    }

    /// Frame 2 of the public vectors: the CNP captured on a ConnectX-4 Lx (ICRC 82fd002a on
    /// the wire, in roce-wire.md). The IP packet, from the IPv4 header to the ICRC.
    #[test]
    fn connectx4_cnp() {
        let mut ip = hex(concat!(
            "45c2003c718c4000401191610a0011010a001201",
            "000012b700280000",
            "8100ffff4000011800000000",
            "00000000000000000000000000000000",
            "82fd002a"
        ));
        let c = compute(&ip, 14).unwrap();
        assert_eq!(c.to_le_bytes(), [0x82, 0xfd, 0x00, 0x2a]);
        // Masked fields (TOS, TTL, IPv4 checksum, UDP checksum, BTH byte 4) do not matter ...
        for i in [1, 8, 10, 11, 26, 27, 32] {
            ip[i] ^= 0x5A;
        }
        assert_eq!(compute(&ip, 14).unwrap(), c);
        // ... but the PSN does.
        ip[39] ^= 1;
        assert_ne!(compute(&ip, 14).unwrap(), c);
        ip[39] ^= 1;
        assert_eq!(wire(&ip), Some(c));
        let mut copy = ip.clone();
        copy[56..].fill(0);
        assert_eq!(fill(&mut copy, 14).unwrap(), c);
        assert_eq!(copy, ip);
    }

    #[test]
    fn short_packet_is_an_error() {
        let e = compute(&[0x45; 30], 14).unwrap_err();
        assert_eq!(
            e.to_string(),
            "ICRC truncated at offset 14 (needs 44 bytes, 30 present)"
        );
        assert!(compute(&[], 14).is_err());
        assert!(compute(&[0x55; 80], 14).is_err());
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }
}
