//! Traffic endpoints: a [`Sender`] runs one RDMA WRITE flow (a QP sending messages of a given
//! size from a start time), paced by its DCQCN reaction point; a [`Receiver`] counts what
//! arrives per QP and runs the notification point, answering CE marks with CNPs.
//!
//! There are no ACKs or retransmissions: the flows are open-loop, so loss shows as frames
//! counted dropped, not as a slowed sender.

use std::any::Any;
use std::collections::HashMap;

use rnic_wire::RocePacket;
use rnic_wire::opcode::CNP_OPCODE;

use crate::dcqcn::np::{NotificationPoint, NpAction, cnp_packet};
use crate::dcqcn::{RateControl, RpState};
use crate::endpoint::{Ctx, Endpoint};
use crate::event::Time;
use crate::packet::{ECN_CE, HostAddr, Kind, Packet, WriteSegment, udp_src_port};

/// One RDMA WRITE flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// The sender's QP.
    pub qpn: u32,
    /// The receiver's QP (BTH DestQP of the data).
    pub remote_qpn: u32,
    pub src: HostAddr,
    pub dst: HostAddr,
    /// Payload bytes per packet (path MTU).
    pub mtu: u32,
    /// Bytes per message (at least 1).
    pub message_bytes: u64,
    /// Messages to send (0 = no limit).
    pub messages: u64,
    /// First packet time, ns.
    pub start_ns: Time,
    /// No packet is started at or after this time, if set.
    pub stop_ns: Option<Time>,
}

/// Sender counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    pub packets: u64,
    /// Frame bytes handed to the MAC.
    pub frame_bytes: u64,
    pub payload_bytes: u64,
    pub messages: u64,
    /// CNPs received for this QP.
    pub cnps: u64,
}

const TOKEN_SEND: u64 = 0;
const TOKEN_RP: u64 = 1;

/// A host sending one flow, paced by a reaction point.
pub struct Sender {
    pub spec: FlowSpec,
    rp: Box<dyn RateControl>,
    /// Whether CNPs reach the reaction point (false: always line rate).
    pub dcqcn: bool,
    psn: u32,
    offset: u64,
    next_send_ps: u64,
    last_send_ps: Option<u64>,
    last_bits: u64,
    send_gen: u64,
    rp_gen: u64,
    rp_wake: Option<Time>,
    done: bool,
    pub stats: SenderStats,
}

impl Sender {
    /// A sender for `spec` with reaction point `rp`.
    pub fn new(spec: FlowSpec, rp: Box<dyn RateControl>, dcqcn: bool) -> Self {
        Sender {
            spec,
            rp,
            dcqcn,
            psn: 0,
            offset: 0,
            next_send_ps: spec.start_ns * 1000,
            last_send_ps: None,
            last_bits: 0,
            send_gen: 0,
            rp_gen: 0,
            rp_wake: None,
            done: false,
            stats: SenderStats::default(),
        }
    }

    /// The reaction point's rate now, b/s.
    pub fn rate_bps(&self) -> f64 {
        self.rp.rate_bps()
    }

    /// The reaction point's state.
    pub fn rp_state(&self) -> RpState {
        self.rp.state()
    }

    /// Whether the flow has sent all it will.
    pub fn done(&self) -> bool {
        self.done
    }

    fn schedule_send(&mut self, ctx: &mut Ctx<'_>) {
        if self.done {
            return;
        }
        self.send_gen += 1;
        ctx.wake_at(
            self.next_send_ps.div_ceil(1000),
            self.send_gen << 1 | TOKEN_SEND,
        );
    }

    fn schedule_rp(&mut self, ctx: &mut Ctx<'_>) {
        let d = self.rp.next_deadline_ns();
        if d != self.rp_wake {
            self.rp_wake = d;
            self.rp_gen += 1;
            if let Some(t) = d {
                ctx.wake_at(t, self.rp_gen << 1 | TOKEN_RP);
            }
        }
    }

    /// The rate changed: the next packet leaves one gap at the new rate after the last one.
    fn repace(&mut self, ctx: &mut Ctx<'_>) {
        if let Some(last) = self.last_send_ps {
            self.next_send_ps = (last + self.rp.tx_time_ps(self.last_bits)).max(ctx.now() * 1000);
            self.schedule_send(ctx);
        }
    }

    fn send_one(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        if self.spec.stop_ns.is_some_and(|s| now >= s) {
            self.done = true;
            return;
        }
        let s = &self.spec;
        let msg = s.message_bytes.max(1);
        let len = (msg - self.offset).min(u64::from(s.mtu.max(1))) as u32;
        let seg = WriteSegment {
            dest_qp: s.remote_qpn,
            psn: self.psn,
            offset: self.offset,
            len,
            msg_len: msg,
            va: 0x1_0000_0000 + self.offset,
            rkey: 0x1000 + s.remote_qpn,
        };
        let pkt = seg.build(s.src, s.dst, udp_src_port(s.qpn));
        let frame_bytes = pkt.len() as u64;
        let bits = pkt.wire_bytes() * 8;
        ctx.send(pkt);
        self.psn = (self.psn + 1) & 0xFF_FFFF;
        self.offset += u64::from(len);
        self.stats.packets += 1;
        self.stats.frame_bytes += frame_bytes;
        self.stats.payload_bytes += u64::from(len);
        if self.offset >= msg {
            self.offset = 0;
            self.stats.messages += 1;
            if s.messages != 0 && self.stats.messages >= s.messages {
                self.done = true;
            }
        }
        self.rp.on_sent(frame_bytes, now);
        // The nominal send time, to the picosecond, so that pacing keeps the exact rate.
        let sent_ps = self.next_send_ps;
        self.last_send_ps = Some(sent_ps);
        self.last_bits = bits;
        self.next_send_ps = sent_ps + self.rp.tx_time_ps(bits);
        self.schedule_send(ctx);
    }
}

impl Endpoint for Sender {
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        self.schedule_send(ctx);
    }

    fn receive(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) {
        if pkt.meta.kind != Kind::Cnp
            || pkt.opcode() != CNP_OPCODE
            || pkt.dest_qp() != self.spec.qpn
        {
            return;
        }
        self.stats.cnps += 1;
        if !self.dcqcn {
            return;
        }
        let before = self.rp.rate_bps();
        self.rp.on_cnp(ctx.now());
        if self.rp.rate_bps() != before {
            self.repace(ctx);
        }
        self.schedule_rp(ctx);
    }

    fn wake(&mut self, token: u64, ctx: &mut Ctx<'_>) {
        let generation = token >> 1;
        if token & 1 == TOKEN_SEND {
            if generation == self.send_gen && !self.done {
                self.send_one(ctx);
            }
        } else if generation == self.rp_gen {
            self.rp_wake = None;
            let before = self.rp.rate_bps();
            self.rp.advance(ctx.now());
            if self.rp.rate_bps() != before {
                self.repace(ctx);
            }
        }
        self.schedule_rp(ctx);
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The receiving side of one QP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpPeer {
    /// The sender's QP (where CNPs go).
    pub remote_qpn: u32,
    pub remote: HostAddr,
}

/// Per-QP receive counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecvStats {
    pub packets: u64,
    /// Wire bytes (frame, padding, FCS, preamble, gap): what the link carried.
    pub wire_bytes: u64,
    pub payload_bytes: u64,
    pub ce_marked: u64,
    pub cnps_sent: u64,
    /// Frames that failed the full parse, the ICRC or the IPv4 checksum (with `verify`).
    pub bad: u64,
}

/// A host receiving flows and running the notification point.
pub struct Receiver {
    pub addr: HostAddr,
    np: NotificationPoint,
    qps: HashMap<u32, QpPeer>,
    /// Counters per local QP.
    pub stats: HashMap<u32, RecvStats>,
    /// Frames for QPs it does not know.
    pub unknown_qp: u64,
    /// Parse every frame fully and check its ICRC and IPv4 checksum.
    pub verify: bool,
    /// Every CNP sent: (time, local QP).
    pub cnp_log: Vec<(Time, u32)>,
}

impl Receiver {
    /// A receiver at `addr` with notification point `np`.
    pub fn new(addr: HostAddr, np: NotificationPoint) -> Self {
        Receiver {
            addr,
            np,
            qps: HashMap::new(),
            stats: HashMap::new(),
            unknown_qp: 0,
            verify: false,
            cnp_log: Vec::new(),
        }
    }

    /// Registers local QP `qpn`, connected to `peer`.
    pub fn add_qp(&mut self, qpn: u32, peer: QpPeer) {
        self.qps.insert(qpn, peer);
        self.stats.insert(qpn, RecvStats::default());
    }

    /// Counters of local QP `qpn`.
    pub fn qp_stats(&self, qpn: u32) -> RecvStats {
        self.stats.get(&qpn).copied().unwrap_or_default()
    }

    /// The notification point.
    pub fn np(&self) -> &NotificationPoint {
        &self.np
    }

    fn send_cnp(&mut self, qpn: u32, ctx: &mut Ctx<'_>) {
        let Some(peer) = self.qps.get(&qpn).copied() else {
            return;
        };
        ctx.send(cnp_packet(self.addr, peer.remote, qpn, peer.remote_qpn));
        self.cnp_log.push((ctx.now(), qpn));
        if let Some(s) = self.stats.get_mut(&qpn) {
            s.cnps_sent += 1;
        }
    }
}

impl Endpoint for Receiver {
    fn start(&mut self, _ctx: &mut Ctx<'_>) {}

    fn receive(&mut self, pkt: Packet, ctx: &mut Ctx<'_>) {
        if pkt.meta.kind != Kind::Data {
            return;
        }
        let qpn = pkt.dest_qp();
        let Some(st) = self.stats.get_mut(&qpn) else {
            self.unknown_qp += 1;
            return;
        };
        st.packets += 1;
        st.wire_bytes += pkt.wire_bytes();
        st.payload_bytes += u64::from(pkt.meta.payload_len);
        if self.verify {
            let ok = RocePacket::parse(&pkt.frame)
                .is_ok_and(|p| p.icrc_ok() && p.ip.checksum_ok() != Some(false));
            if !ok {
                st.bad += 1;
            }
        }
        if pkt.ecn() == ECN_CE {
            st.ce_marked += 1;
            match self.np.on_ce(qpn, ctx.now()) {
                NpAction::Send => self.send_cnp(qpn, ctx),
                NpAction::Defer { at_ns } => ctx.wake_at(at_ns, u64::from(qpn)),
                NpAction::Pending => {}
            }
        }
    }

    fn wake(&mut self, token: u64, ctx: &mut Ctx<'_>) {
        let qpn = token as u32;
        if self.np.on_window_end(qpn, ctx.now()) {
            self.send_cnp(qpn, ctx);
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
