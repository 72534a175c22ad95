//! The host side of QEMU's `-netdev stream` (a TCP connection carrying each Ethernet frame
//! after a 4-byte big-endian length): a hub that joins guests, writes every frame it receives
//! to a pcap, and injects faults into RoCEv2 frames with a record of what it did.
//!
//! The pcap holds every frame as its sender sent it (before any fault), so a capture always
//! passes `rnic trace check`; the fault record names each affected frame by its index in that
//! pcap. A port is either a QEMU guest ([`Link::listen`]) or a simulator endpoint
//! ([`Link::attach_endpoint`], the same [`rnic_netsim::endpoint::Endpoint`] trait the network
//! simulator drives), so a Verilator NIC model can sit on a port.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use rnic_netsim::endpoint::{Ctx, Endpoint};
use rnic_netsim::packet::Packet;
use rnic_netsim::rng::Rng;
use rnic_wire::pcap::{LINKTYPE_ETHERNET, PcapWriter};
use serde::{Deserialize, Serialize};

/// The RoCEv2 UDP destination port.
pub const ROCE_PORT: u16 = 4791;
/// A frame held back for reordering is delivered after the next frame to its port, or when
/// the link has been quiet this long.
pub const HOLD_TIMEOUT: Duration = Duration::from_millis(30);
/// Largest frame accepted from a stream (QEMU sends at most 64 KiB + headers).
const MAX_FRAME: usize = 65536 + 64;

/// Which faults to inject into RoCEv2 frames. Counters run over all RoCEv2 frames of both
/// directions (the first is number 1); frames that are not RoCEv2 (ARP, the tools' TCP
/// exchange) always pass untouched.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FaultConfig {
    /// Drop every Nth RoCEv2 frame.
    pub drop_every: Option<u64>,
    /// Drop each RoCEv2 frame with this probability (seeded).
    pub drop_prob: Option<f64>,
    /// Hold every Nth RoCEv2 frame back and deliver it after the next frame to the same port.
    pub reorder_every: Option<u64>,
    /// Deliver every Nth RoCEv2 frame twice.
    pub duplicate_every: Option<u64>,
    /// Flip one (seeded) bit in the UDP payload of every Nth RoCEv2 frame.
    pub corrupt_every: Option<u64>,
    /// Flip one bit of each RoCEv2 frame with this probability (seeded). Unlike every-Nth
    /// faults it cannot fall into step with a retransmission round of a multiple of N frames
    /// and hit the same PSN every time.
    #[serde(default)]
    pub corrupt_prob: Option<f64>,
    pub seed: u64,
}

impl FaultConfig {
    /// Checks the values; errors say which one is wrong.
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [
            ("drop-every", self.drop_every),
            ("reorder-every", self.reorder_every),
            ("duplicate-every", self.duplicate_every),
            ("corrupt-every", self.corrupt_every),
        ] {
            if v == Some(0) {
                bail!("--{name} must be at least 1 (got 0)");
            }
        }
        for (name, v) in [
            ("drop-prob", self.drop_prob),
            ("corrupt-prob", self.corrupt_prob),
        ] {
            if let Some(p) = v.filter(|p| !(0.0..=1.0).contains(p)) {
                bail!("--{name} must be within 0..=1 (got {p})");
            }
        }
        Ok(())
    }

    pub fn is_none(&self) -> bool {
        self.drop_every.is_none()
            && self.drop_prob.is_none()
            && self.reorder_every.is_none()
            && self.duplicate_every.is_none()
            && self.corrupt_every.is_none()
            && self.corrupt_prob.is_none()
    }
}

/// What the link did to one frame.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum FaultAction {
    Drop,
    Duplicate,
    /// Delivered after the frame that followed it.
    Reorder,
    /// Bit `bit` (0 = LSB) of frame byte `byte` was flipped.
    Corrupt {
        byte: usize,
        bit: u8,
    },
}

/// One fault, naming the frame by its index in the pcap (0-based) and the RoCEv2 counter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultEvent {
    pub frame: u64,
    pub roce_frame: u64,
    pub from_port: usize,
    /// BTH opcode and PSN of the frame (for reading the record without the pcap).
    pub opcode: u8,
    pub psn: u32,
    #[serde(flatten)]
    pub action: FaultAction,
}

/// What a link run saw and did.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LinkReport {
    pub frames: u64,
    pub roce_frames: u64,
    pub frames_per_port: Vec<u64>,
    pub faults: Vec<FaultEvent>,
    pub pcap: PathBuf,
}

struct Inbound {
    port: usize,
    frame: Vec<u8>,
}

/// Where the hub sends frames for one port.
enum PortOut {
    Stream(TcpStream),
    Channel(Sender<Vec<u8>>),
}

impl PortOut {
    fn send(&mut self, frame: &[u8]) -> io::Result<()> {
        match self {
            PortOut::Stream(s) => {
                let mut buf = Vec::with_capacity(frame.len() + 4);
                buf.extend_from_slice(&(frame.len() as u32).to_be_bytes());
                buf.extend_from_slice(frame);
                s.write_all(&buf)
            }
            // An endpoint that has stopped just loses the frame, like a dead host.
            PortOut::Channel(c) => {
                let _ = c.send(frame.to_vec());
                Ok(())
            }
        }
    }
}

/// A port waiting for its QEMU guest to connect.
pub struct PendingPort {
    listener: TcpListener,
    port: u16,
}

impl PendingPort {
    /// The TCP port QEMU connects to.
    pub fn tcp_port(&self) -> u16 {
        self.port
    }

    /// QEMU arguments for a virtio-net NIC on this port.
    pub fn qemu_args(&self, id: &str, mac: &str) -> Vec<String> {
        vec![
            "-netdev".into(),
            format!(
                "stream,id={id},server=off,addr.type=inet,addr.host=127.0.0.1,addr.port={}",
                self.port
            ),
            "-device".into(),
            format!("virtio-net-pci,netdev={id},mac={mac},romfile="),
        ]
    }
}

/// A hub between ports, built up port by port, then run.
pub struct Link {
    outs: Vec<Option<PortOut>>,
    pending: Vec<(usize, PendingPort)>,
    tx: Sender<Inbound>,
    rx: Receiver<Inbound>,
    threads: Vec<JoinHandle<()>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Default for Link {
    fn default() -> Self {
        Self::new()
    }
}

impl Link {
    pub fn new() -> Link {
        let (tx, rx) = mpsc::channel();
        Link {
            outs: Vec::new(),
            pending: Vec::new(),
            tx,
            rx,
            threads: Vec::new(),
            stop: Default::default(),
        }
    }

    /// A new port for a QEMU guest: listens on a free port of 127.0.0.1. Returns the port
    /// index and what QEMU needs.
    pub fn listen(&mut self) -> Result<(usize, &PendingPort)> {
        let listener =
            TcpListener::bind("127.0.0.1:0").context("link: binding a port for a guest")?;
        let port = listener.local_addr()?.port();
        let idx = self.outs.len();
        self.outs.push(None);
        self.pending.push((idx, PendingPort { listener, port }));
        Ok((idx, &self.pending.last().expect("just pushed").1))
    }

    /// Waits until every guest port is connected. `alive` is asked between attempts and
    /// should fail when a guest has died (so a QEMU that cannot start is reported, not waited
    /// for); gives up at `deadline`.
    pub fn accept_all(
        &mut self,
        deadline: Instant,
        mut alive: impl FnMut() -> Result<()>,
    ) -> Result<()> {
        for (idx, p) in std::mem::take(&mut self.pending) {
            p.listener.set_nonblocking(true)?;
            let stream = loop {
                match p.listener.accept() {
                    Ok((s, _)) => break s,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        alive().with_context(|| {
                            format!("link: guest on port {idx} (tcp {}) never connected", p.port)
                        })?;
                        if Instant::now() >= deadline {
                            bail!("link: no guest connected to tcp port {} in time", p.port);
                        }
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    Err(e) => return Err(e).context("link: accept"),
                }
            };
            stream.set_nonblocking(false)?;
            stream.set_nodelay(true)?;
            let reader = stream.try_clone()?;
            self.outs[idx] = Some(PortOut::Stream(stream));
            let tx = self.tx.clone();
            self.threads
                .push(std::thread::spawn(move || read_stream(idx, reader, tx)));
        }
        Ok(())
    }

    /// Puts a simulator endpoint on a new port. Frames from the link that parse as RoCEv2
    /// reach `receive`; the others (ARP and such) are not for it. The endpoint's clock is
    /// wall-clock nanoseconds since the attach; its wake-ups are honoured on that clock.
    pub fn attach_endpoint<E: Endpoint + Send>(&mut self, ep: E) -> usize {
        let idx = self.outs.len();
        let (to_ep, from_link) = mpsc::channel::<Vec<u8>>();
        self.outs.push(Some(PortOut::Channel(to_ep)));
        let tx = self.tx.clone();
        let stop = self.stop.clone();
        self.threads.push(std::thread::spawn(move || {
            drive_endpoint(idx, ep, from_link, tx, stop)
        }));
        idx
    }

    /// Puts a port on the link for an in-process NIC (the verbs API's model backend): every
    /// frame the link delivers to the port, ARP included, arrives on the returned receiver;
    /// frames sent on the returned sender enter the link from the port. The port lives until
    /// the link stops.
    pub fn attach_channel(&mut self) -> (usize, Sender<Vec<u8>>, Receiver<Vec<u8>>) {
        let idx = self.outs.len();
        let (to_port, from_link) = mpsc::channel::<Vec<u8>>();
        self.outs.push(Some(PortOut::Channel(to_port)));
        let (to_link, from_port) = mpsc::channel::<Vec<u8>>();
        let tx = self.tx.clone();
        let stop = self.stop.clone();
        self.threads.push(std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                match from_port.recv_timeout(Duration::from_millis(20)) {
                    // An empty frame would read as a closed stream.
                    Ok(f) if f.is_empty() => {}
                    Ok(frame) => {
                        if tx.send(Inbound { port: idx, frame }).is_err() {
                            return;
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
        }));
        (idx, to_link, from_link)
    }

    /// Relays frames until every port has closed (or `stop_after` passes with no traffic and
    /// no stream port left), writing the pcap and applying `faults`.
    pub fn run(mut self, pcap: &Path, faults: &FaultConfig) -> Result<LinkReport> {
        faults.validate()?;
        let n = self.outs.len();
        drop(self.tx);
        let file = File::create(pcap).with_context(|| format!("creating {}", pcap.display()))?;
        let mut w = PcapWriter::new(BufWriter::new(file), LINKTYPE_ETHERNET, true)?;
        let mut inj = Injector::new(faults.clone());
        let mut report = LinkReport {
            frames_per_port: vec![0; n],
            pcap: pcap.to_owned(),
            ..Default::default()
        };
        // A frame held back for reordering, with its destination port.
        let mut held: Option<(usize, Vec<u8>)> = None;
        let streams = self
            .outs
            .iter()
            .filter(|o| matches!(o, Some(PortOut::Stream(_))))
            .count();
        let mut closed = 0;
        loop {
            let msg = match self.rx.recv_timeout(HOLD_TIMEOUT) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => {
                    if let Some((dst, f)) = held.take() {
                        deliver(&mut self.outs, dst, &f);
                    }
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            };
            if msg.frame.is_empty() {
                // A stream closed.
                closed += 1;
                if closed >= streams {
                    break;
                }
                continue;
            }
            let index = report.frames;
            report.frames += 1;
            report.frames_per_port[msg.port] += 1;
            w.write(now_ns(), &msg.frame)?;
            let roce = rnic_wire::packet::locate(&msg.frame, &[ROCE_PORT]).is_some();
            let actions = if roce {
                report.roce_frames += 1;
                inj.decide(&msg.frame)
            } else {
                Vec::new()
            };
            let mut frame = msg.frame;
            let (mut copies, mut hold) = (1, false);
            for a in &actions {
                match a {
                    FaultAction::Drop => copies = 0,
                    FaultAction::Duplicate => copies = 2,
                    FaultAction::Reorder => hold = true,
                    FaultAction::Corrupt { byte, bit } => frame[*byte] ^= 1 << bit,
                }
                let (opcode, psn) = bth_of(&frame);
                report.faults.push(FaultEvent {
                    frame: index,
                    roce_frame: inj.count,
                    from_port: msg.port,
                    opcode,
                    psn,
                    action: a.clone(),
                });
            }
            for dst in (0..n).filter(|&d| d != msg.port) {
                for _ in 0..copies {
                    if hold && held.is_none() {
                        held = Some((dst, frame.clone()));
                    } else {
                        deliver(&mut self.outs, dst, &frame);
                    }
                }
                if let Some((hd, f)) = held.take_if(|(hd, _)| *hd == dst && !hold) {
                    deliver(&mut self.outs, hd, &f);
                }
            }
        }
        if let Some((dst, f)) = held.take() {
            deliver(&mut self.outs, dst, &f);
        }
        w.finish()?.flush()?;
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        drop(self.outs);
        for t in self.threads {
            let _ = t.join();
        }
        Ok(report)
    }
}

fn deliver(outs: &mut [Option<PortOut>], dst: usize, frame: &[u8]) {
    if outs[dst].as_mut().is_some_and(|o| o.send(frame).is_err()) {
        // The peer went away (guest powered off); later frames to it are lost.
        outs[dst] = None;
    }
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// Offset of the BTH of a RoCEv2 frame (IPv4 with its IHL, or IPv6), if it has a whole one.
fn bth_offset(frame: &[u8]) -> Option<usize> {
    let loc = rnic_wire::packet::locate(frame, &[ROCE_PORT])?;
    let ip = *frame.get(loc.ip_offset)?;
    let l4 = if ip >> 4 == 4 {
        loc.ip_offset + usize::from(ip & 0xF) * 4
    } else {
        loc.ip_offset + 40
    };
    let b = l4 + 8;
    (frame.len() >= b + 12).then_some(b)
}

fn bth_of(frame: &[u8]) -> (u8, u32) {
    match bth_offset(frame) {
        Some(b) => {
            let h = &frame[b..];
            (h[0], u32::from_be_bytes([0, h[9], h[10], h[11]]))
        }
        None => (0, 0),
    }
}

/// Reads length-prefixed frames; an empty frame tells the hub the stream closed.
fn read_stream(port: usize, mut s: TcpStream, tx: Sender<Inbound>) {
    let mut len = [0u8; 4];
    loop {
        if s.read_exact(&mut len).is_err() {
            break;
        }
        let n = u32::from_be_bytes(len) as usize;
        if n == 0 || n > MAX_FRAME {
            break;
        }
        let mut frame = vec![0; n];
        if s.read_exact(&mut frame).is_err() {
            break;
        }
        if tx.send(Inbound { port, frame }).is_err() {
            return;
        }
    }
    let _ = tx.send(Inbound {
        port,
        frame: Vec::new(),
    });
}

/// Runs a simulator endpoint on the wall clock.
fn drive_endpoint<E: Endpoint>(
    port: usize,
    mut ep: E,
    from_link: Receiver<Vec<u8>>,
    tx: Sender<Inbound>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) {
    let t0 = Instant::now();
    let mut wakes: Vec<(u64, u64)> = Vec::new();
    let mut out = Vec::new();
    let mut new_wakes = Vec::new();
    let now = |t0: Instant| t0.elapsed().as_nanos() as u64;
    ep.start(&mut Ctx::detached(0, &mut out, &mut new_wakes));
    loop {
        for p in out.drain(..) {
            let p: Packet = p;
            if tx
                .send(Inbound {
                    port,
                    frame: p.frame,
                })
                .is_err()
            {
                return;
            }
        }
        wakes.append(&mut new_wakes);
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let t = now(t0);
        if let Some(i) = (0..wakes.len()).find(|&i| wakes[i].0 <= t) {
            let (_, token) = wakes.swap_remove(i);
            ep.wake(token, &mut Ctx::detached(t, &mut out, &mut new_wakes));
            continue;
        }
        let next = wakes.iter().map(|w| w.0).min();
        let wait = next.map_or(Duration::from_millis(20), |n| {
            Duration::from_nanos(n.saturating_sub(t)).min(Duration::from_millis(20))
        });
        match from_link.recv_timeout(wait) {
            Ok(frame) => {
                if let Ok(p) = Packet::from_frame(frame) {
                    ep.receive(p, &mut Ctx::detached(now(t0), &mut out, &mut new_wakes));
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// Decides the faults for each RoCEv2 frame in turn.
struct Injector {
    cfg: FaultConfig,
    rng: Rng,
    count: u64,
}

impl Injector {
    fn new(cfg: FaultConfig) -> Injector {
        Injector {
            rng: Rng::new(cfg.seed, 0x11c),
            cfg,
            count: 0,
        }
    }

    fn decide(&mut self, frame: &[u8]) -> Vec<FaultAction> {
        self.count += 1;
        let c = self.count;
        let every = |n: Option<u64>| n.is_some_and(|n| c % n == 0);
        let mut v = Vec::new();
        let random_drop = self
            .cfg
            .drop_prob
            .is_some_and(|p| (self.rng.next_u64() >> 11) as f64 / ((1u64 << 53) as f64) < p);
        if every(self.cfg.drop_every) || random_drop {
            v.push(FaultAction::Drop);
            return v;
        }
        // Drawn only when asked for, so that seeded runs without it are unchanged.
        let random_corrupt = self
            .cfg
            .corrupt_prob
            .is_some_and(|p| (self.rng.next_u64() >> 11) as f64 / ((1u64 << 53) as f64) < p);
        if let Some(b) =
            bth_offset(frame).filter(|_| every(self.cfg.corrupt_every) || random_corrupt)
        {
            // A bit the ICRC covers, so that the receiver must drop the frame: from the BTH to
            // the end of the IP packet, except BTH byte 4 (FECN, BECN, Resv6), which the ICRC
            // masks, and any Ethernet padding; and except the opcode (BTH byte 0): rxe in
            // Linux 6.1 computes the ICRC over the opcode's header length before it checks
            // that the opcode exists, so an undefined one (an ACK's 0x11 turned 0x19) makes it
            // read past the frame and panics the guest's kernel.
            let end = rnic_wire::packet::locate(frame, &[ROCE_PORT])
                .map_or(frame.len(), |l| l.ip_end.min(frame.len()));
            let span = end.saturating_sub(b).saturating_sub(2).max(1) as u64;
            let r = self.rng.next_u64();
            let mut off = 1 + (r % span) as usize;
            if off >= 4 {
                off += 1;
            }
            v.push(FaultAction::Corrupt {
                byte: (b + off).min(frame.len() - 1),
                bit: ((r >> 32) % 8) as u8,
            });
        }
        if every(self.cfg.duplicate_every) {
            v.push(FaultAction::Duplicate);
        }
        if every(self.cfg.reorder_every) {
            v.push(FaultAction::Reorder);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rnic_netsim::packet::{HostAddr, frame_desc};
    use rnic_wire::bth::BthRepr;
    use rnic_wire::ext::ExtHeaders;

    fn frame(psn: u32) -> Vec<u8> {
        let bth = BthRepr {
            opcode: 0x04,
            solicited: false,
            mig_req: false,
            tver: 0,
            pkey: 0xffff,
            fecn: false,
            becn: false,
            dest_qp: 0x11,
            ack_req: true,
            psn,
            resv6: 0,
            resv7: 0,
        };
        let (a, b) = (HostAddr::host(1), HostAddr::host(2));
        frame_desc(
            a,
            b,
            0,
            0,
            49152,
            bth,
            ExtHeaders::default(),
            vec![0xab; 16],
        )
        .build()
        .unwrap()
    }

    fn connect(port: u16) -> TcpStream {
        TcpStream::connect(("127.0.0.1", port)).unwrap()
    }

    fn send(s: &mut TcpStream, f: &[u8]) {
        s.write_all(&(f.len() as u32).to_be_bytes()).unwrap();
        s.write_all(f).unwrap();
    }

    fn recv(s: &mut TcpStream) -> Option<Vec<u8>> {
        let mut len = [0; 4];
        s.read_exact(&mut len).ok()?;
        let mut f = vec![0; u32::from_be_bytes(len) as usize];
        s.read_exact(&mut f).ok()?;
        Some(f)
    }

    /// Two fake guests; A sends `n` frames with PSN 0..n, B receives what the link delivers.
    fn run_two(faults: FaultConfig, n: u32) -> (LinkReport, Vec<Vec<u8>>, Vec<Vec<u8>>) {
        let (report, records, got) = run_two_captured(faults, n);
        (report, records.into_iter().map(|r| r.data).collect(), got)
    }

    /// [`run_two`], returning the capture's records (the frames as sent, with their times).
    fn run_two_captured(
        faults: FaultConfig,
        n: u32,
    ) -> (LinkReport, Vec<rnic_wire::pcap::Record>, Vec<Vec<u8>>) {
        let dir =
            std::env::temp_dir().join(format!("rnic-link-{}-{}", std::process::id(), now_ns()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut link = Link::new();
        let pa = link.listen().unwrap().1.tcp_port();
        let pb = link.listen().unwrap().1.tcp_port();
        let mut a = connect(pa);
        let mut b = connect(pb);
        link.accept_all(Instant::now() + Duration::from_secs(5), || Ok(()))
            .unwrap();
        let pcap = dir.join("t.pcap");
        let p2 = pcap.clone();
        let hub = std::thread::spawn(move || link.run(&p2, &faults).unwrap());
        let sent: Vec<_> = (0..n).map(frame).collect();
        for f in &sent {
            send(&mut a, f);
        }
        a.shutdown(std::net::Shutdown::Write).unwrap();
        b.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let mut got = Vec::new();
        while let Some(f) = recv(&mut b) {
            got.push(f);
        }
        b.shutdown(std::net::Shutdown::Write).unwrap();
        let report = hub.join().unwrap();
        let cap = rnic_wire::pcap::read_file(&pcap).unwrap();
        assert_eq!(cap.records.len() as u64, report.frames);
        for (r, s) in cap.records.iter().zip(&sent) {
            assert_eq!(&r.data, s, "the pcap holds frames as sent");
        }
        std::fs::remove_dir_all(dir).unwrap();
        (report, cap.records, got)
    }

    fn psn(f: &[u8]) -> u32 {
        rnic_wire::RocePacket::parse(f).unwrap().bth.psn
    }

    #[test]
    fn without_faults_every_frame_arrives_in_order() {
        let (r, sent, got) = run_two(FaultConfig::default(), 20);
        assert_eq!(got, sent);
        assert_eq!(r.roce_frames, 20);
        assert!(r.faults.is_empty());
    }

    #[test]
    fn drop_every_third_loses_frames_3_6_9() {
        let cfg = FaultConfig {
            drop_every: Some(3),
            ..Default::default()
        };
        let (r, _, got) = run_two(cfg, 10);
        let psns: Vec<u32> = got.iter().map(|f| psn(f)).collect();
        assert_eq!(psns, vec![0, 1, 3, 4, 6, 7, 9]);
        let dropped: Vec<u64> = r.faults.iter().map(|e| e.frame).collect();
        assert_eq!(dropped, vec![2, 5, 8]);
        assert!(r.faults.iter().all(|e| e.action == FaultAction::Drop));
        assert_eq!(r.faults[1].psn, 5);
    }

    #[test]
    fn duplicate_reorder_and_corrupt_do_what_the_record_says() {
        let cfg = FaultConfig {
            duplicate_every: Some(4),
            reorder_every: Some(5),
            corrupt_every: Some(7),
            seed: 9,
            ..Default::default()
        };
        let (r, sent, got) = run_two(cfg, 10);
        let psns: Vec<u32> = got.iter().map(|f| psn(f)).collect();
        // 4th (PSN 3) twice, 5th (PSN 4) after the 6th (PSN 5), 8th (PSN 7) twice.
        assert_eq!(psns, vec![0, 1, 2, 3, 3, 5, 4, 6, 7, 7, 8, 9]);
        let corrupt = r
            .faults
            .iter()
            .find_map(|e| match e.action {
                FaultAction::Corrupt { byte, bit } => Some((e.frame, byte, bit)),
                _ => None,
            })
            .unwrap();
        assert_eq!(corrupt.0, 6);
        // The 7th frame sent arrives 8th (after one duplicate), with exactly that bit flipped.
        let delivered = &got[7];
        let diff: Vec<usize> = (0..delivered.len())
            .filter(|&i| delivered[i] != sent[6][i])
            .collect();
        assert_eq!(diff, vec![corrupt.1]);
        assert_eq!(delivered[corrupt.1] ^ sent[6][corrupt.1], 1 << corrupt.2);
        assert!(!rnic_wire::RocePacket::parse(delivered).is_ok_and(|p| p.icrc_ok()));
    }

    /// The PSNs in the order `delivery_schedule` says the link delivered them.
    fn scheduled_psns(records: &[rnic_wire::pcap::Record], r: &LinkReport) -> Vec<u32> {
        crate::rxe::delivery_schedule(records, &r.faults)
            .iter()
            .flat_map(|d| std::iter::repeat_n(psn(&records[d.record].data), d.copies.into()))
            .collect()
    }

    #[test]
    fn the_delivery_schedule_is_what_the_link_delivered() {
        let cfg = FaultConfig {
            drop_every: Some(6),
            duplicate_every: Some(4),
            reorder_every: Some(5),
            corrupt_every: Some(7),
            seed: 3,
            ..Default::default()
        };
        let (r, records, got) = run_two_captured(cfg, 30);
        // The schedule counts the copies that arrive intact: a corrupted one fails the ICRC.
        let intact: Vec<u32> = got
            .iter()
            .filter(|f| rnic_wire::RocePacket::parse(f).is_ok_and(|p| p.icrc_ok()))
            .map(|f| psn(f))
            .collect();
        assert!(intact.len() < got.len(), "some frames were corrupted");
        assert_eq!(scheduled_psns(&records, &r), intact);
    }

    #[test]
    fn a_frame_held_at_the_end_arrives_after_the_quiet_time() {
        // The 10th and last frame is duplicated and held: one copy at once, the other once
        // the link has been quiet for HOLD_TIMEOUT, later than any frame was captured.
        let cfg = FaultConfig {
            duplicate_every: Some(10),
            reorder_every: Some(10),
            ..Default::default()
        };
        let (r, records, got) = run_two_captured(cfg, 10);
        let psns: Vec<u32> = got.iter().map(|f| psn(f)).collect();
        assert_eq!(psns, (0..10).chain([9]).collect::<Vec<u32>>());
        assert_eq!(scheduled_psns(&records, &r), psns);
        let schedule = crate::rxe::delivery_schedule(&records, &r.faults);
        let last = schedule.last().unwrap();
        assert_eq!((last.record, last.copies), (9, 1));
        let captured_last = records.last().unwrap().ts_ns;
        assert_eq!(
            last.ts_ns,
            captured_last + HOLD_TIMEOUT.as_nanos() as u64,
            "a held frame is delivered when the link has been quiet"
        );
        assert!(
            schedule[..schedule.len() - 1]
                .iter()
                .all(|d| d.ts_ns == records[d.record].ts_ns)
        );
    }

    #[test]
    fn probability_drops_follow_the_seed() {
        let cfg = |seed| FaultConfig {
            drop_prob: Some(0.3),
            seed,
            ..Default::default()
        };
        let (a, _, got_a) = run_two(cfg(1), 60);
        let (b, _, _) = run_two(cfg(1), 60);
        let (c, _, _) = run_two(cfg(2), 60);
        assert_eq!(a.faults, b.faults);
        assert_ne!(a.faults, c.faults);
        assert_eq!(got_a.len() + a.faults.len(), 60);
        // 60 draws at p = 0.3: 18 expected; far outside [5, 35] means the draw is broken.
        assert!((5..=35).contains(&a.faults.len()), "{}", a.faults.len());
    }

    #[test]
    fn bad_fault_values_are_refused() {
        let e = FaultConfig {
            drop_every: Some(0),
            ..Default::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("drop-every"));
        let e = FaultConfig {
            drop_prob: Some(1.5),
            ..Default::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("drop-prob"));
    }

    /// An endpoint that answers every RoCEv2 frame with the same frame, PSN + 1000.
    struct Echo;
    impl Endpoint for Echo {
        fn start(&mut self, _: &mut Ctx<'_>) {}
        fn receive(&mut self, mut pkt: Packet, ctx: &mut Ctx<'_>) {
            let b = pkt.meta.bth_off as usize;
            let psn =
                u32::from_be_bytes([0, pkt.frame[b + 9], pkt.frame[b + 10], pkt.frame[b + 11]]);
            let f = frame(psn + 1000);
            pkt.frame = f;
            ctx.send(pkt);
        }
        fn wake(&mut self, _: u64, _: &mut Ctx<'_>) {}
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    #[test]
    fn a_simulator_endpoint_sits_on_a_port() {
        let dir = std::env::temp_dir().join(format!("rnic-link-ep-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut link = Link::new();
        let pa = link.listen().unwrap().1.tcp_port();
        link.attach_endpoint(Echo);
        let mut a = connect(pa);
        link.accept_all(Instant::now() + Duration::from_secs(5), || Ok(()))
            .unwrap();
        let pcap = dir.join("e.pcap");
        let p2 = pcap.clone();
        let hub = std::thread::spawn(move || link.run(&p2, &FaultConfig::default()).unwrap());
        for p in 0..3 {
            send(&mut a, &frame(p));
        }
        let got: Vec<u32> = (0..3).map(|_| psn(&recv(&mut a).unwrap())).collect();
        assert_eq!(got, vec![1000, 1001, 1002]);
        a.shutdown(std::net::Shutdown::Both).unwrap();
        let r = hub.join().unwrap();
        assert_eq!(r.frames, 6);
        assert_eq!(r.frames_per_port, vec![3, 3]);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
