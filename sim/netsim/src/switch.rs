//! The switch: IPv4 forwarding to per-port egress queues that share a finite buffer, RED ECN
//! marking on the egress queue length (the congestion point), drops on overflow counted per
//! port. Marking rewrites the frame bytes (ECN = CE) and fixes the IPv4 checksum.

use std::collections::HashMap;
use std::collections::VecDeque;

use crate::event::NodeId;
use crate::link::Link;
use crate::packet::Packet;
use crate::rng::Rng;
use crate::tap::Tap;

/// RED-style marking (dcqcn.md, congestion point): q <= Kmin never; Kmin < q <= Kmax with
/// probability Pmax (q - Kmin) / (Kmax - Kmin); q > Kmax always. Kmin = Kmax is cut-off
/// marking.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Red {
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    pub pmax: f64,
}

impl Red {
    /// The marking probability at queue length `q` bytes.
    pub fn probability(&self, q: u64) -> f64 {
        if q <= self.kmin_bytes {
            0.0
        } else if q > self.kmax_bytes {
            1.0
        } else {
            self.pmax * (q - self.kmin_bytes) as f64 / (self.kmax_bytes - self.kmin_bytes) as f64
        }
    }

    /// Draws the marking decision at queue length `q`.
    pub fn should_mark(&self, q: u64, rng: &mut Rng) -> bool {
        rng.chance(self.probability(q))
    }
}

/// When the switch decides to mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkAt {
    /// On arrival, on the queue length the packet finds (the paper's RED).
    Enqueue,
    /// When the packet starts leaving, on the queue length behind it (the HPCC simulator).
    Dequeue,
}

/// Switch configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SwitchConfig {
    /// Shared buffer for all egress queues, bytes.
    pub buffer_bytes: u64,
    /// Largest single egress queue, bytes.
    pub port_limit_bytes: u64,
    /// ECN marking; `None` marks nothing.
    pub red: Option<Red>,
    pub mark_at: MarkAt,
}

/// Counters of one egress port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortStats {
    /// Frames accepted into the queue.
    pub enqueued: u64,
    /// Frames that started transmission.
    pub sent: u64,
    /// Frames marked CE here.
    pub marked: u64,
    /// Frames that would have been marked but are Not-ECT.
    pub not_ect: u64,
    /// Frames dropped because the buffer or the port limit was full.
    pub dropped_overflow: u64,
    /// Largest queue seen, bytes.
    pub max_queue_bytes: u64,
}

/// An egress port: a FIFO queue in front of a link.
pub struct EgressPort {
    /// Frames waiting, the head being serialized while `busy`.
    pub queue: VecDeque<Packet>,
    /// Frame bytes in `queue`.
    pub queue_bytes: u64,
    pub link: Link,
    /// The node and port at the other end.
    pub peer: (NodeId, usize),
    /// Whether the head of the queue is being serialized.
    pub busy: bool,
    pub tap: Option<Tap>,
    pub stats: PortStats,
    /// Largest queue since the last [`EgressPort::take_peak`].
    pub peak_bytes: u64,
    /// Marking draws of this port.
    pub rng: Rng,
}

impl EgressPort {
    /// An idle port on `link` towards `peer`.
    pub fn new(link: Link, peer: (NodeId, usize), rng: Rng) -> Self {
        EgressPort {
            queue: VecDeque::new(),
            queue_bytes: 0,
            link,
            peer,
            busy: false,
            tap: None,
            stats: PortStats::default(),
            peak_bytes: 0,
            rng,
        }
    }

    /// Adds a packet to the tail (no limits).
    pub fn push(&mut self, pkt: Packet) {
        self.queue_bytes += pkt.len() as u64;
        self.queue.push_back(pkt);
        self.stats.enqueued += 1;
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.queue_bytes);
        self.peak_bytes = self.peak_bytes.max(self.queue_bytes);
    }

    /// The largest queue since the previous call; starts over from the current length.
    pub fn take_peak(&mut self) -> u64 {
        std::mem::replace(&mut self.peak_bytes, self.queue_bytes)
    }
}

/// Why a switch did not queue a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drop {
    /// Buffer or port limit full (counted on the egress port).
    Overflow,
    /// No route for the destination (counted on the switch).
    NoRoute,
}

/// A switch.
pub struct Switch {
    pub cfg: SwitchConfig,
    pub ports: Vec<EgressPort>,
    /// IPv4 destination -> egress port.
    pub routes: HashMap<u32, usize>,
    /// Frame bytes held in all queues.
    pub used_bytes: u64,
    /// Frames without a route.
    pub dropped_no_route: u64,
}

impl Switch {
    /// A switch with no ports yet.
    pub fn new(cfg: SwitchConfig) -> Self {
        Switch {
            cfg,
            ports: Vec::new(),
            routes: HashMap::new(),
            used_bytes: 0,
            dropped_no_route: 0,
        }
    }

    /// Forwards `pkt`: looks up its IPv4 destination (read from the frame), checks the buffer,
    /// marks at enqueue if configured, and queues it. Returns the egress port.
    pub fn enqueue(&mut self, mut pkt: Packet) -> Result<usize, Drop> {
        let Some(&port) = pkt.dst_ipv4().and_then(|ip| self.routes.get(&ip)) else {
            self.dropped_no_route += 1;
            return Err(Drop::NoRoute);
        };
        let len = pkt.len() as u64;
        let p = &mut self.ports[port];
        if self.used_bytes + len > self.cfg.buffer_bytes
            || p.queue_bytes + len > self.cfg.port_limit_bytes
        {
            p.stats.dropped_overflow += 1;
            return Err(Drop::Overflow);
        }
        if let (Some(red), MarkAt::Enqueue) = (self.cfg.red, self.cfg.mark_at) {
            mark(&red, p.queue_bytes, &mut pkt, &mut p.rng, &mut p.stats);
        }
        self.used_bytes += len;
        p.push(pkt);
        Ok(port)
    }

    /// Called as the head of `port` starts leaving: marks at dequeue if configured.
    pub fn on_dequeue(&mut self, port: usize) {
        if let (Some(red), MarkAt::Dequeue) = (self.cfg.red, self.cfg.mark_at) {
            let p = &mut self.ports[port];
            let Some(head) = p.queue.front_mut() else {
                return;
            };
            let behind = p.queue_bytes - head.len() as u64;
            mark(&red, behind, head, &mut p.rng, &mut p.stats);
        }
    }
}

fn mark(red: &Red, q: u64, pkt: &mut Packet, rng: &mut Rng, stats: &mut PortStats) {
    if red.should_mark(q, rng) {
        if pkt.mark_ce() {
            stats.marked += 1;
        } else {
            stats.not_ect += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn red_probability_follows_the_formula() {
        let r = Red {
            kmin_bytes: 5_000,
            kmax_bytes: 200_000,
            pmax: 0.01,
        };
        assert_eq!(r.probability(5_000), 0.0);
        assert_eq!(r.probability(200_001), 1.0);
        assert!((r.probability(102_500) - 0.005).abs() < 1e-12);
        let cutoff = Red {
            kmin_bytes: 40_000,
            kmax_bytes: 40_000,
            pmax: 1.0,
        };
        assert_eq!(cutoff.probability(40_000), 0.0);
        assert_eq!(cutoff.probability(40_001), 1.0);
    }
}
