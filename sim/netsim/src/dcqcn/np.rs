//! The notification point (receiver side): per-QP CNP generation with a minimum interval N,
//! and the CNP frame itself.
//!
//! On a CE-marked packet for a QP: if no CNP went to that QP in the last N, send one now;
//! otherwise remember it and send one CNP when the window ends. So at most one CNP per N per
//! QP, and every CE mark is answered within N. Time is kept in clock cycles (the same clock as
//! the reaction point), N in cycles rounded to nearest.

use std::collections::HashMap;

use rnic_wire::bth::{self, BthRepr};
use rnic_wire::ext::ExtHeaders;
use rnic_wire::opcode::CNP_OPCODE;

use super::DcqcnParams;
use crate::packet::{ECN_ECT0, HostAddr, Kind, Meta, Packet, frame_desc, udp_src_port};

/// DSCP of CNPs (NVIDIA `cnp_dscp` = 48; with ECT(0) the TOS byte is 0xC2).
pub const CNP_DSCP: u8 = 48;

/// What to do about a CE mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NpAction {
    /// Send a CNP now.
    Send,
    /// A CNP went out less than N ago: one will be due at this time (ns); call
    /// [`NotificationPoint::on_window_end`] then.
    Defer { at_ns: u64 },
    /// A deferred CNP is already pending.
    Pending,
}

#[derive(Clone, Copy, Debug, Default)]
struct QpState {
    last: Option<u64>,
    pending: bool,
}

/// CNP pacing for every QP of one receiver.
#[derive(Clone, Debug)]
pub struct NotificationPoint {
    interval: u64,
    clk_ps: u64,
    qps: HashMap<u32, QpState>,
    /// CE-marked packets seen.
    pub ce_seen: u64,
    /// CNPs this point decided to send.
    pub cnps: u64,
}

impl NotificationPoint {
    /// A notification point with N = `p.cnp_interval_us`.
    pub fn new(p: &DcqcnParams) -> Self {
        NotificationPoint {
            interval: p.us_to_cycles(p.cnp_interval_us),
            clk_ps: p.clk_ps.max(1),
            qps: HashMap::new(),
            ce_seen: 0,
            cnps: 0,
        }
    }

    fn cycles(&self, ns: u64) -> u64 {
        (u128::from(ns) * 1000 / u128::from(self.clk_ps)) as u64
    }

    fn ns(&self, cycles: u64) -> u64 {
        (u128::from(cycles) * u128::from(self.clk_ps)).div_ceil(1000) as u64
    }

    /// N in clock cycles.
    pub fn interval_cycles(&self) -> u64 {
        self.interval
    }

    /// A CE-marked packet for local QP `qpn` arrived at `now_ns`.
    pub fn on_ce(&mut self, qpn: u32, now_ns: u64) -> NpAction {
        self.ce_seen += 1;
        let now = self.cycles(now_ns);
        let interval = self.interval;
        let st = self.qps.entry(qpn).or_default();
        match st.last {
            Some(last) if now.saturating_sub(last) < interval => {
                if st.pending {
                    NpAction::Pending
                } else {
                    st.pending = true;
                    let at = last + interval;
                    NpAction::Defer { at_ns: self.ns(at) }
                }
            }
            _ => {
                st.last = Some(now);
                st.pending = false;
                self.cnps += 1;
                NpAction::Send
            }
        }
    }

    /// The window of `qpn` may have ended: true when a deferred CNP must be sent now.
    pub fn on_window_end(&mut self, qpn: u32, now_ns: u64) -> bool {
        let now = self.cycles(now_ns);
        let interval = self.interval;
        let Some(st) = self.qps.get_mut(&qpn) else {
            return false;
        };
        let due = st.last.is_none_or(|l| now.saturating_sub(l) >= interval);
        if st.pending && due {
            st.pending = false;
            st.last = Some(now);
            self.cnps += 1;
            true
        } else {
            false
        }
    }
}

/// A CNP from `src` (the receiver of the marked flow) to `dst` (its sender) for the sender's
/// QP `dest_qp`, per roce-wire.md: opcode 0x81, BECN = 1, P_Key 0xFFFF, PSN 0, AckReq 0, 16
/// zero bytes, DSCP 48 with ECT(0), UDP source port from `src_qp` (the receiver's QP), IP
/// identification 0.
pub fn cnp_packet(src: HostAddr, dst: HostAddr, src_qp: u32, dest_qp: u32) -> Packet {
    let frame = cnp_desc(src, dst, udp_src_port(src_qp), dest_qp, 0)
        .build()
        .expect("a CNP description builds");
    Packet {
        frame,
        meta: Meta {
            id: 0,
            ip_off: 14,
            bth_off: 42,
            ipv4: true,
            kind: Kind::Cnp,
            payload_len: 0,
        },
    }
}

/// The description of a CNP with a given UDP source port and IP identification (the fields a
/// NIC chooses freely).
pub fn cnp_desc(
    src: HostAddr,
    dst: HostAddr,
    udp_src: u16,
    dest_qp: u32,
    ident: u16,
) -> rnic_wire::RoceFrame {
    let bth = BthRepr {
        opcode: CNP_OPCODE,
        solicited: false,
        mig_req: false,
        tver: 0,
        pkey: bth::DEFAULT_PKEY,
        fecn: false,
        becn: true,
        dest_qp: dest_qp & 0xFF_FFFF,
        ack_req: false,
        psn: 0,
        resv6: 0,
        resv7: 0,
    };
    let mut desc = frame_desc(
        src,
        dst,
        CNP_DSCP,
        ECN_ECT0,
        udp_src,
        bth,
        ExtHeaders::default(),
        Vec::new(),
    );
    if let rnic_wire::IpRepr::V4(ip) = &mut desc.ip {
        ip.ident = ident;
    }
    desc
}
