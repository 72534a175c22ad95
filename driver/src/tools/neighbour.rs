//! Resolving a peer's MAC address with ARP through the device's raw path, as the kernel's
//! neighbour table does for rxe before RTR.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use rnic_transport::arp;

use crate::verbs::{Context, MacAddr, VerbsError, VerbsResult};

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
            ctx.send_raw(arp::request(mac, ours, t))?;
            next_ask = Instant::now() + Duration::from_millis(200);
        }
        for f in ctx.take_raw() {
            if let Some(m) = arp::reply_from(&f, t) {
                return Ok(m);
            }
        }
        if Instant::now() >= deadline {
            return Err(err(format!("no ARP reply from {t} in {timeout:?}")));
        }
        ctx.progress(Duration::from_millis(10))?;
    }
}
