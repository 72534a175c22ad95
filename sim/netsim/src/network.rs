//! The network: hosts (endpoints) and switches joined by full-duplex links, driven by the
//! event queue. Keeps the packet accounts that the conservation check reads.

use std::path::Path;

use crate::endpoint::{Ctx, Endpoint};
use crate::event::{Event, EventQueue, NodeId, Time};
use crate::link::{Link, LinkConfig};
use crate::packet::{HostAddr, Packet};
use crate::rng::Rng;
use crate::switch::{Drop, EgressPort, Switch, SwitchConfig};
use crate::tap::Tap;

/// A host: an endpoint behind one egress port (its NIC's MAC, unlimited queue).
pub struct Host {
    pub addr: HostAddr,
    pub endpoint: Box<dyn Endpoint>,
    pub port: Option<EgressPort>,
}

/// A node of the network.
pub enum Node {
    Host(Box<Host>),
    Switch(Switch),
}

/// Packet accounts of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Frames handed to the network by endpoints.
    pub injected: u64,
    /// Extra copies made by duplicating links.
    pub duplicated: u64,
    /// Frames with a bit flipped by a link (delivered, to fail their ICRC).
    pub corrupted: u64,
    /// Frames delivered to endpoints.
    pub delivered: u64,
    /// Frames lost on links.
    pub lost: u64,
    /// Frames dropped by full switch buffers.
    pub dropped_overflow: u64,
    /// Frames dropped for lack of a route.
    pub dropped_no_route: u64,
    /// Frames started on some link (every hop).
    pub hops: u64,
    /// Events processed.
    pub events: u64,
}

/// The simulated network.
pub struct Network {
    nodes: Vec<Node>,
    events: EventQueue,
    now: Time,
    seed: u64,
    streams: u64,
    started: bool,
    next_id: u64,
    /// Packet accounts.
    pub counters: Counters,
    out: Vec<Packet>,
    wakes: Vec<(Time, u64)>,
}

impl Network {
    /// An empty network; `seed` drives every random choice.
    pub fn new(seed: u64) -> Self {
        Network {
            nodes: Vec::new(),
            events: EventQueue::new(),
            now: 0,
            seed,
            streams: 0,
            started: false,
            next_id: 0,
            counters: Counters::default(),
            out: Vec::new(),
            wakes: Vec::new(),
        }
    }

    fn rng(&mut self) -> Rng {
        self.streams += 1;
        Rng::new(self.seed, self.streams)
    }

    /// Current simulated time, ns.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Adds a host; connect it with [`Network::connect`].
    pub fn add_host(&mut self, addr: HostAddr, endpoint: Box<dyn Endpoint>) -> NodeId {
        self.nodes.push(Node::Host(Box::new(Host {
            addr,
            endpoint,
            port: None,
        })));
        self.nodes.len() - 1
    }

    /// Adds a switch.
    pub fn add_switch(&mut self, cfg: SwitchConfig) -> NodeId {
        self.nodes.push(Node::Switch(Switch::new(cfg)));
        self.nodes.len() - 1
    }

    fn add_port(&mut self, node: NodeId, port: EgressPort) -> anyhow::Result<usize> {
        match &mut self.nodes[node] {
            Node::Host(h) => {
                if h.port.is_some() {
                    anyhow::bail!("host node {node} already has its one port");
                }
                h.port = Some(port);
                Ok(0)
            }
            Node::Switch(s) => {
                s.ports.push(port);
                Ok(s.ports.len() - 1)
            }
        }
    }

    fn next_port(&self, node: NodeId) -> usize {
        match &self.nodes[node] {
            Node::Host(_) => 0,
            Node::Switch(s) => s.ports.len(),
        }
    }

    /// Joins `a` and `b` with a full-duplex cable: one link each way, both with `cfg`. When
    /// one side is a host and the other a switch, the switch routes the host's IPv4 address to
    /// the new port. Returns the port numbers at `a` and at `b`.
    pub fn connect(
        &mut self,
        a: NodeId,
        b: NodeId,
        cfg: LinkConfig,
    ) -> anyhow::Result<(usize, usize)> {
        if a >= self.nodes.len() || b >= self.nodes.len() || a == b {
            anyhow::bail!("cannot connect nodes {a} and {b}");
        }
        let (pa, pb) = (self.next_port(a), self.next_port(b));
        let (la, ra) = (Link::new(cfg, self.rng()), self.rng());
        let (lb, rb) = (Link::new(cfg, self.rng()), self.rng());
        self.add_port(a, EgressPort::new(la, (b, pb), ra))?;
        self.add_port(b, EgressPort::new(lb, (a, pa), rb))?;
        for (sw, host, port) in [(a, b, pa), (b, a, pb)] {
            let ip = match &self.nodes[host] {
                Node::Host(h) => u32::from(h.addr.ip),
                Node::Switch(_) => continue,
            };
            if let Node::Switch(s) = &mut self.nodes[sw] {
                s.routes.insert(ip, port);
            }
        }
        Ok((pa, pb))
    }

    /// Adds a route for `ip` at a switch.
    pub fn add_route(&mut self, switch: NodeId, ip: std::net::Ipv4Addr, port: usize) {
        if let Some(Node::Switch(s)) = self.nodes.get_mut(switch) {
            s.routes.insert(u32::from(ip), port);
        }
    }

    fn port_mut(&mut self, node: NodeId, port: usize) -> Option<&mut EgressPort> {
        match self.nodes.get_mut(node)? {
            Node::Host(h) => h.port.as_mut().filter(|_| port == 0),
            Node::Switch(s) => s.ports.get_mut(port),
        }
    }

    /// The egress port `port` of `node`.
    pub fn port(&self, node: NodeId, port: usize) -> Option<&EgressPort> {
        match self.nodes.get(node)? {
            Node::Host(h) => h.port.as_ref().filter(|_| port == 0),
            Node::Switch(s) => s.ports.get(port),
        }
    }

    /// Largest egress queue of a port since the previous call (see [`EgressPort::take_peak`]).
    pub fn take_peak(&mut self, node: NodeId, port: usize) -> u64 {
        self.port_mut(node, port).map_or(0, |p| p.take_peak())
    }

    /// Captures every frame that starts on the egress link of `port` at `node` into a pcap
    /// file (at most `limit` frames).
    pub fn tap(
        &mut self,
        node: NodeId,
        port: usize,
        path: &Path,
        limit: u64,
    ) -> anyhow::Result<()> {
        let tap = Tap::create(path, limit)
            .map_err(|e| anyhow::anyhow!("creating {}: {e}", path.display()))?;
        let p = self
            .port_mut(node, port)
            .ok_or_else(|| anyhow::anyhow!("node {node} has no port {port}"))?;
        p.tap = Some(tap);
        Ok(())
    }

    /// The switch at `node`.
    pub fn switch(&self, node: NodeId) -> Option<&Switch> {
        match self.nodes.get(node)? {
            Node::Switch(s) => Some(s),
            Node::Host(_) => None,
        }
    }

    /// The endpoint of host `node`, if it is a `T`.
    pub fn endpoint<T: 'static>(&self, node: NodeId) -> Option<&T> {
        match self.nodes.get(node)? {
            Node::Host(h) => h.endpoint.as_any().downcast_ref::<T>(),
            Node::Switch(_) => None,
        }
    }

    /// Frames in queues or on links (not yet delivered or dropped).
    pub fn in_flight(&self) -> u64 {
        let queued: u64 = self
            .nodes
            .iter()
            .map(|n| match n {
                Node::Host(h) => h.port.as_ref().map_or(0, |p| p.queue.len() as u64),
                Node::Switch(s) => s.ports.iter().map(|p| p.queue.len() as u64).sum(),
            })
            .sum();
        let on_links = self
            .events
            .iter()
            .filter(|e| matches!(e, Event::Arrive { .. }))
            .count() as u64;
        queued + on_links
    }

    /// Checks that every frame injected (or duplicated) was delivered, dropped for a counted
    /// reason, or is still in flight.
    pub fn conservation(&self) -> Result<(), String> {
        let c = &self.counters;
        let inn = c.injected + c.duplicated;
        let out = c.delivered + c.lost + c.dropped_overflow + c.dropped_no_route + self.in_flight();
        if inn == out {
            Ok(())
        } else {
            Err(format!("{inn} frames in, {out} accounted for: {c:?}"))
        }
    }

    /// Time of the next pending event (`None` when nothing is scheduled: the network is idle
    /// until something outside it acts).
    pub fn next_event_time(&self) -> Option<Time> {
        self.events.peek_time()
    }

    /// Runs every event up to and including time `until`, then sets the clock to `until`.
    pub fn run_until(&mut self, until: Time) {
        if !self.started {
            self.started = true;
            for node in 0..self.nodes.len() {
                self.call_endpoint(node, |e, ctx| e.start(ctx));
            }
        }
        while let Some(t) = self.events.peek_time() {
            if t > until {
                break;
            }
            let Some((t, ev)) = self.events.pop() else {
                break;
            };
            self.now = t;
            self.counters.events += 1;
            self.handle(ev);
        }
        self.now = self.now.max(until);
    }

    /// Flushes every tap; the first error names its file.
    pub fn finish(&mut self) -> anyhow::Result<()> {
        for n in &mut self.nodes {
            let ports: Vec<&mut EgressPort> = match n {
                Node::Host(h) => h.port.iter_mut().collect(),
                Node::Switch(s) => s.ports.iter_mut().collect(),
            };
            for p in ports {
                if let Some(t) = p.tap.as_mut() {
                    t.finish()?;
                }
            }
        }
        Ok(())
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::Arrive { node, port: _, pkt } => match &mut self.nodes[node] {
                Node::Host(_) => {
                    self.counters.delivered += 1;
                    self.call_endpoint(node, |e, ctx| e.receive(pkt, ctx));
                }
                Node::Switch(s) => match s.enqueue(pkt) {
                    Ok(egress) => {
                        if !s.ports[egress].busy {
                            self.start_tx(node, egress, false);
                        }
                    }
                    Err(Drop::Overflow) => self.counters.dropped_overflow += 1,
                    Err(Drop::NoRoute) => self.counters.dropped_no_route += 1,
                },
            },
            Event::TxDone { node, port } => self.tx_done(node, port),
            Event::Wake { node, token } => self.call_endpoint(node, |e, ctx| e.wake(token, ctx)),
        }
    }

    fn start_tx(&mut self, node: NodeId, port: usize, back_to_back: bool) {
        let now = self.now;
        if let Node::Switch(s) = &mut self.nodes[node] {
            s.on_dequeue(port);
        }
        let Some(p) = self.port_mut(node, port) else {
            return;
        };
        let Some(head) = p.queue.front() else {
            return;
        };
        let wire = head.wire_bytes();
        if let Some(tap) = p.tap.as_mut() {
            tap.record(now, &head.frame);
        }
        p.stats.sent += 1;
        p.busy = true;
        let end = p.link.start(now, back_to_back, wire);
        self.counters.hops += 1;
        self.events.push(end, Event::TxDone { node, port });
    }

    fn tx_done(&mut self, node: NodeId, port: usize) {
        let now = self.now;
        let Some(p) = self.port_mut(node, port) else {
            return;
        };
        p.busy = false;
        let Some(mut pkt) = p.queue.pop_front() else {
            return;
        };
        let len = pkt.len() as u64;
        p.queue_bytes -= len;
        let peer = p.peer;
        let d = p.link.deliver(now);
        let more = !p.queue.is_empty();
        if let Node::Switch(s) = &mut self.nodes[node] {
            s.used_bytes -= len;
        }
        if let Some(r) = d.corrupt {
            if crate::link::corrupt(&mut pkt.frame, usize::from(pkt.meta.bth_off), r).is_some() {
                self.counters.corrupted += 1;
            }
        }
        match (d.first, d.duplicate) {
            (None, _) => self.counters.lost += 1,
            (Some(t), dup) => {
                if let Some(td) = dup {
                    let mut copy = pkt.clone();
                    self.next_id += 1;
                    copy.meta.id = self.next_id;
                    self.counters.duplicated += 1;
                    self.events.push(
                        td,
                        Event::Arrive {
                            node: peer.0,
                            port: peer.1,
                            pkt: copy,
                        },
                    );
                }
                self.events.push(
                    t,
                    Event::Arrive {
                        node: peer.0,
                        port: peer.1,
                        pkt,
                    },
                );
            }
        }
        if more {
            self.start_tx(node, port, true);
        }
    }

    fn call_endpoint(&mut self, node: NodeId, f: impl FnOnce(&mut dyn Endpoint, &mut Ctx<'_>)) {
        let now = self.now;
        let mut out = std::mem::take(&mut self.out);
        let mut wakes = std::mem::take(&mut self.wakes);
        let Node::Host(h) = &mut self.nodes[node] else {
            return;
        };
        let backlog = h.port.as_ref().map_or(0, |p| p.queue_bytes);
        {
            let mut ctx = Ctx {
                now,
                out: &mut out,
                wakes: &mut wakes,
                backlog_bytes: backlog,
            };
            f(h.endpoint.as_mut(), &mut ctx);
        }
        for (t, token) in wakes.drain(..) {
            self.events.push(t.max(now), Event::Wake { node, token });
        }
        let mut start = false;
        if let Node::Host(h) = &mut self.nodes[node] {
            for mut pkt in out.drain(..) {
                self.next_id += 1;
                pkt.meta.id = self.next_id;
                self.counters.injected += 1;
                match h.port.as_mut() {
                    Some(p) => {
                        p.push(pkt);
                        start |= !p.busy;
                    }
                    // An unconnected host's frames go nowhere: counted as unroutable.
                    None => self.counters.dropped_no_route += 1,
                }
            }
        }
        if start {
            self.start_tx(node, 0, false);
        }
        self.out = out;
        self.wakes = wakes;
    }
}
