//! The NIC's answer to ARP: a request for one of its IPv4 addresses gets a reply from its MAC
//! (rxe resolves the peer's MAC before RTR, with a 1 s timeout, so the NIC must answer for the
//! whole run). Everything else that is not RoCEv2 goes to the raw receive queue.

use std::net::{IpAddr, Ipv4Addr};

use rnic_wire::MacAddr;
use rnic_wire::eth::ETHERTYPE_ARP;

/// Ethernet header and the 28-byte ARP body for IPv4 over Ethernet.
const ARP_LEN: usize = 14 + 28;
const OP_REQUEST: u16 = 1;
const OP_REPLY: u16 = 2;

/// An ARP request's sender and the address it asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArpRequest {
    pub sender_mac: MacAddr,
    pub sender_ip: Ipv4Addr,
    pub target_ip: Ipv4Addr,
}

/// Parses an untagged ARP request (Ethernet, IPv4); `None` for anything else.
pub fn parse_request(frame: &[u8]) -> Option<ArpRequest> {
    if frame.len() < ARP_LEN || u16::from_be_bytes([frame[12], frame[13]]) != ETHERTYPE_ARP {
        return None;
    }
    let a = &frame[14..ARP_LEN];
    let be = |i: usize| u16::from_be_bytes([a[i], a[i + 1]]);
    if be(0) != 1 || be(2) != 0x0800 || a[4] != 6 || a[5] != 4 || be(6) != OP_REQUEST {
        return None;
    }
    Some(ArpRequest {
        sender_mac: MacAddr(a[8..14].try_into().expect("6 bytes")),
        sender_ip: Ipv4Addr::new(a[14], a[15], a[16], a[17]),
        target_ip: Ipv4Addr::new(a[24], a[25], a[26], a[27]),
    })
}

/// An ARP packet (IPv4 over Ethernet) from `sender` to `target`, in a frame to `dst`, padded
/// to 60 bytes.
fn packet(
    op: u16,
    dst: MacAddr,
    sender: (MacAddr, Ipv4Addr),
    target: (MacAddr, Ipv4Addr),
) -> Vec<u8> {
    let mut f = Vec::with_capacity(60);
    f.extend_from_slice(&dst.0);
    f.extend_from_slice(&sender.0.0);
    f.extend_from_slice(&ETHERTYPE_ARP.to_be_bytes());
    f.extend_from_slice(&[0, 1, 0x08, 0x00, 6, 4]);
    f.extend_from_slice(&op.to_be_bytes());
    f.extend_from_slice(&sender.0.0);
    f.extend_from_slice(&sender.1.octets());
    f.extend_from_slice(&target.0.0);
    f.extend_from_slice(&target.1.octets());
    f.resize(60, 0);
    f
}

/// The reply to `frame` when it is an ARP request for one of `ips`.
pub fn answer(frame: &[u8], mac: MacAddr, ips: &[IpAddr]) -> Option<Vec<u8>> {
    let r = parse_request(frame)?;
    if !ips.contains(&IpAddr::V4(r.target_ip)) {
        return None;
    }
    Some(packet(
        OP_REPLY,
        r.sender_mac,
        (mac, r.target_ip),
        (r.sender_mac, r.sender_ip),
    ))
}

/// A broadcast request from `mac`/`ip` asking for `target`'s MAC.
pub fn request(mac: MacAddr, ip: Ipv4Addr, target: Ipv4Addr) -> Vec<u8> {
    packet(
        OP_REQUEST,
        MacAddr([0xFF; 6]),
        (mac, ip),
        (MacAddr([0; 6]), target),
    )
}

/// The MAC `target` answers with, if `frame` is an ARP reply from it.
pub fn reply_from(frame: &[u8], target: Ipv4Addr) -> Option<MacAddr> {
    if frame.len() < ARP_LEN || u16::from_be_bytes([frame[12], frame[13]]) != ETHERTYPE_ARP {
        return None;
    }
    let a = &frame[14..ARP_LEN];
    (a[6..8] == OP_REPLY.to_be_bytes() && a[14..18] == target.octets())
        .then(|| MacAddr(a[8..14].try_into().expect("6 bytes")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// "ARP who-has 10.0.0.1 tell 10.0.0.2", as Linux sent it in tests/golden/rxe/*.pcap.
    fn request() -> Vec<u8> {
        let mut f = vec![0xFF; 6];
        f.extend_from_slice(&[0x52, 0x54, 0, 0, 0, 2, 0x08, 0x06]);
        f.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
        f.extend_from_slice(&[0x52, 0x54, 0, 0, 0, 2, 10, 0, 0, 2]);
        f.extend_from_slice(&[0, 0, 0, 0, 0, 0, 10, 0, 0, 1]);
        f
    }

    #[test]
    fn a_request_for_our_address_gets_a_reply_from_our_mac() {
        let mac = MacAddr([0x52, 0x54, 0, 0, 0, 1]);
        let ours = [IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1))];
        let r = answer(&request(), mac, &ours).unwrap();
        assert_eq!(r.len(), 60);
        assert_eq!(&r[..6], &[0x52, 0x54, 0, 0, 0, 2]);
        assert_eq!(&r[6..12], &mac.0);
        assert_eq!(&r[20..22], &[0, 2]);
        assert_eq!(&r[22..32], &[0x52, 0x54, 0, 0, 0, 1, 10, 0, 0, 1]);
        assert_eq!(&r[32..42], &[0x52, 0x54, 0, 0, 0, 2, 10, 0, 0, 2]);
        let other = [IpAddr::V4(Ipv4Addr::new(10, 0, 0, 9))];
        assert_eq!(answer(&request(), mac, &other), None);
        let mut reply = request();
        reply[21] = 2;
        assert_eq!(answer(&reply, mac, &ours), None);
    }

    #[test]
    fn our_request_is_the_one_linux_sends_and_the_reply_names_the_mac() {
        let ask = super::request(
            MacAddr([0x52, 0x54, 0, 0, 0, 2]),
            Ipv4Addr::new(10, 0, 0, 2),
            Ipv4Addr::new(10, 0, 0, 1),
        );
        let mut linux = request();
        linux.resize(60, 0);
        assert_eq!(ask, linux);
        let mac = MacAddr([0x52, 0x54, 0, 0, 0, 1]);
        let ours = [IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1))];
        let reply = answer(&ask, mac, &ours).unwrap();
        assert_eq!(reply_from(&reply, Ipv4Addr::new(10, 0, 0, 1)), Some(mac));
        assert_eq!(reply_from(&reply, Ipv4Addr::new(10, 0, 0, 9)), None);
        assert_eq!(reply_from(&ask, Ipv4Addr::new(10, 0, 0, 1)), None);
    }
}
