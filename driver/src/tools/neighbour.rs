//! Resolving a peer's MAC address with ARP through the device's raw path, as the kernel's
//! neighbour table does for rxe before RTR.

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use rnic_wire::eth::ETHERTYPE_ARP;

use crate::verbs::{Context, MacAddr, VerbsError, VerbsResult};

/// An ARP request from `mac`/`ip` for `target`, broadcast, padded to 60 bytes.
pub fn arp_request(mac: MacAddr, ip: Ipv4Addr, target: Ipv4Addr) -> Vec<u8> {
    let mut f = vec![0xFF; 6];
    f.extend_from_slice(&mac.0);
    f.extend_from_slice(&ETHERTYPE_ARP.to_be_bytes());
    f.extend_from_slice(&[0, 1, 0x08, 0x00, 6, 4, 0, 1]);
    f.extend_from_slice(&mac.0);
    f.extend_from_slice(&ip.octets());
    f.extend_from_slice(&[0; 6]);
    f.extend_from_slice(&target.octets());
    f.resize(60, 0);
    f
}

/// The sender of an ARP reply for `target`, if `frame` is one.
pub fn arp_reply_from(frame: &[u8], target: Ipv4Addr) -> Option<MacAddr> {
    if frame.len() < 42 || u16::from_be_bytes([frame[12], frame[13]]) != ETHERTYPE_ARP {
        return None;
    }
    let a = &frame[14..42];
    (a[6..8] == [0, 2] && a[14..18] == target.octets())
        .then(|| MacAddr(a[8..14].try_into().expect("6 bytes")))
}

/// Asks for `target`'s MAC (every 200 ms) until a reply comes or `timeout` passes. The device
/// must be running (in the background, or driven here).
pub fn resolve(ctx: &Context, target: IpAddr, timeout: Duration) -> VerbsResult<MacAddr> {
    let err = |r: String| VerbsError::new("resolve", r);
    let IpAddr::V4(t) = target else {
        return Err(err(format!(
            "{target}: only IPv4 peers are resolved (ARP); IPv6 neighbour discovery is not implemented"
        )));
    };
    let IpAddr::V4(ours) = ctx.gid()? else {
        return Err(err("the device's first GID is not IPv4".into()));
    };
    let mac = ctx.query_device().mac;
    let deadline = Instant::now() + timeout;
    let mut next_ask = Instant::now();
    loop {
        if Instant::now() >= next_ask {
            ctx.send_raw(arp_request(mac, ours, t))?;
            next_ask = Instant::now() + Duration::from_millis(200);
        }
        for f in ctx.take_raw() {
            if let Some(m) = arp_reply_from(&f, t) {
                return Ok(m);
            }
        }
        if Instant::now() >= deadline {
            return Err(err(format!("no ARP reply from {t} in {timeout:?}")));
        }
        ctx.progress(Duration::from_millis(10))?;
    }
}
