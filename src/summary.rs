//! One-line summaries of frames that are not RoCEv2 (ARP, TCP, other UDP, ICMP, ...).

use std::net::{Ipv4Addr, Ipv6Addr};

use rnic_wire::eth::{self, EthRepr};

/// A frame's layer path (`eth/vlan/ipv4/tcp`) and a short description.
pub struct Summary {
    pub layers: String,
    pub text: String,
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

/// Summarises any Ethernet frame without judging it; truncated headers are said so.
pub fn summarize(frame: &[u8]) -> Summary {
    if let Some(len) = be16(frame, 12).filter(|&t| t < 0x0600) {
        return Summary {
            layers: "eth/802.3".into(),
            text: format!("IEEE 802.3 frame with LLC, length {len}"),
        };
    }
    let e = match EthRepr::parse(frame) {
        Ok(e) => e,
        Err(err) => {
            return Summary {
                layers: "eth".into(),
                text: format!("malformed: {err}"),
            };
        }
    };
    let mut layers = String::from("eth");
    if let Some(tag) = e.repr.vlan {
        layers.push_str(&format!("/vlan{}", tag.vid));
    }
    let l3 = &frame[e.payload_offset..];
    let text = match e.ethertype {
        eth::ETHERTYPE_ARP => {
            layers.push_str("/arp");
            arp(l3)
        }
        eth::ETHERTYPE_IPV4 => {
            layers.push_str("/ipv4");
            ipv4(l3, &mut layers)
        }
        eth::ETHERTYPE_IPV6 => {
            layers.push_str("/ipv6");
            ipv6(l3, &mut layers)
        }
        0x88CC => {
            layers.push_str("/lldp");
            "LLDP".into()
        }
        other => format!("EtherType {other:#06x}"),
    };
    Summary { layers, text }
}

fn arp(b: &[u8]) -> String {
    if b.len() < 28 {
        return format!("ARP truncated ({} of 28 bytes)", b.len());
    }
    let spa = Ipv4Addr::new(b[14], b[15], b[16], b[17]);
    let tpa = Ipv4Addr::new(b[24], b[25], b[26], b[27]);
    let sha = rnic_wire::MacAddr([b[8], b[9], b[10], b[11], b[12], b[13]]);
    match be16(b, 6) {
        Some(1) => format!("ARP who-has {tpa} tell {spa}"),
        Some(2) => format!("ARP {spa} is-at {sha}"),
        Some(op) => format!("ARP op {op}"),
        None => "ARP".into(),
    }
}

fn ipv4(b: &[u8], layers: &mut String) -> String {
    if b.len() < 20 {
        return format!("IPv4 truncated ({} of 20 bytes)", b.len());
    }
    let ihl = usize::from(b[0] & 0x0F) * 4;
    let src = Ipv4Addr::new(b[12], b[13], b[14], b[15]);
    let dst = Ipv4Addr::new(b[16], b[17], b[18], b[19]);
    let total = usize::from(be16(b, 2).unwrap_or(0));
    let end = total.clamp(ihl.min(b.len()), b.len());
    let body = b.get(ihl..end).unwrap_or(&[]);
    transport(b[9], &src.to_string(), &dst.to_string(), body, layers)
}

fn ipv6(b: &[u8], layers: &mut String) -> String {
    if b.len() < 40 {
        return format!("IPv6 truncated ({} of 40 bytes)", b.len());
    }
    let mut a = [0u8; 16];
    a.copy_from_slice(&b[8..24]);
    let src = Ipv6Addr::from(a);
    a.copy_from_slice(&b[24..40]);
    let dst = Ipv6Addr::from(a);
    let end = (40 + usize::from(be16(b, 4).unwrap_or(0))).min(b.len());
    transport(
        b[6],
        &src.to_string(),
        &dst.to_string(),
        &b[40..end],
        layers,
    )
}

fn transport(proto: u8, src: &str, dst: &str, body: &[u8], layers: &mut String) -> String {
    match proto {
        6 => {
            layers.push_str("/tcp");
            let (Some(sp), Some(dp)) = (be16(body, 0), be16(body, 2)) else {
                return format!("TCP {src} > {dst} truncated");
            };
            let flags = body.get(13).copied().unwrap_or(0);
            let names: Vec<&str> = [
                (0x02, "SYN"),
                (0x10, "ACK"),
                (0x01, "FIN"),
                (0x04, "RST"),
                (0x08, "PSH"),
            ]
            .iter()
            .filter(|(bit, _)| flags & bit != 0)
            .map(|(_, n)| *n)
            .collect();
            let hdr = body.get(12).map_or(20, |o| usize::from(o >> 4) * 4);
            format!(
                "TCP {src}:{sp} > {dst}:{dp} [{}] len={}",
                names.join(","),
                body.len().saturating_sub(hdr)
            )
        }
        17 => {
            layers.push_str("/udp");
            let (Some(sp), Some(dp)) = (be16(body, 0), be16(body, 2)) else {
                return format!("UDP {src} > {dst} truncated");
            };
            format!(
                "UDP {src}:{sp} > {dst}:{dp} len={}",
                body.len().saturating_sub(8)
            )
        }
        1 => {
            layers.push_str("/icmp");
            let t = body.first().copied().unwrap_or(0);
            let what = match t {
                0 => "echo reply".to_string(),
                8 => "echo request".to_string(),
                3 => "destination unreachable".to_string(),
                _ => format!("type {t}"),
            };
            format!("ICMP {src} > {dst} {what}")
        }
        58 => {
            layers.push_str("/icmpv6");
            let t = body.first().copied().unwrap_or(0);
            let what = match t {
                128 => "echo request".to_string(),
                129 => "echo reply".to_string(),
                133 => "router solicitation".to_string(),
                134 => "router advertisement".to_string(),
                135 => "neighbor solicitation".to_string(),
                136 => "neighbor advertisement".to_string(),
                143 => "multicast listener report v2".to_string(),
                _ => format!("type {t}"),
            };
            format!("ICMPv6 {src} > {dst} {what}")
        }
        0 => format!("IPv6 {src} > {dst} hop-by-hop options"),
        p => format!("IP {src} > {dst} protocol {p}"),
    }
}
