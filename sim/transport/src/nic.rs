//! One model NIC: its addresses, the PD, MR, CQ and QP tables, the receive checks in rc-transport.md's
//! order, the dispatch of requests to the responder and of responses to the completer, and the
//! transmit queue. No I/O and no clock: frames come in through [`Nic::receive`], go out through
//! [`Nic::poll`], and every call says what time it is.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::IpAddr;

use rnic_wire::bth::BthRepr;
use rnic_wire::eth::EthRepr;
use rnic_wire::ext::ExtHeaders;
use rnic_wire::ipv4::Ipv4Repr;
use rnic_wire::ipv6::Ipv6Repr;
use rnic_wire::opcode::Transport;
use rnic_wire::udp::{ROCE_PORT, UdpRepr};
use rnic_wire::{ErrorKind, IpParsed, IpRepr, MacAddr, RoceFrame, RocePacket};

use crate::comp_check::{Step, StepInput};
use crate::counters::Counters;
use crate::mr::{MrInfo, MrSpec, MrTable, Pd, RegError};
use crate::qp::{DeviceLimits, Qp, QpInit, VerbsError};
use crate::verbs::*;
use crate::{completer, requester, responder};

/// What a NIC is: its addresses and table sizes.
#[derive(Clone, Debug)]
pub struct NicConfig {
    pub mac: MacAddr,
    /// Addresses the NIC answers to (its GIDs' IPs).
    pub ips: Vec<IpAddr>,
    /// IPv4 TTL of everything sent (rxe uses the route's, 64).
    pub ttl: u8,
    pub max_qps: usize,
    pub max_mrs: usize,
    pub max_cqe: usize,
    /// Unacknowledged PSNs a requester may have in flight (rxe: 128).
    pub max_unacked_psns: u32,
    /// AckReq at least every this many packets (rxe: 64).
    pub ack_every: u32,
    /// Device limit of outstanding READ/atomics per QP (each way).
    pub max_rd_atomic: u8,
    /// UD messages and the largest path MTU.
    pub port_mtu: Mtu,
}

impl NicConfig {
    pub fn new(mac: MacAddr, ip: IpAddr) -> NicConfig {
        NicConfig {
            mac,
            ips: vec![ip],
            ttl: 64,
            max_qps: 1024,
            max_mrs: 1024,
            max_cqe: 65536,
            max_unacked_psns: 128,
            ack_every: 64,
            max_rd_atomic: 16,
            port_mtu: Mtu::M4096,
        }
    }
}

/// A completion queue.
#[derive(Clone, Debug, Default)]
pub struct Cq {
    pub depth: usize,
    pub entries: VecDeque<WorkCompletion>,
}

/// What the engines share while handling one event: the tables other than the QP's own row,
/// the transmit queue, the counters and the time.
pub(crate) struct Env<'a> {
    pub cfg: &'a NicConfig,
    pub mrs: &'a mut MrTable,
    pub cqs: &'a mut Vec<Cq>,
    pub tx: &'a mut VecDeque<Vec<u8>>,
    pub counters: &'a mut Counters,
    pub now: u64,
    pub comp_log: &'a mut Option<Vec<(StepInput, Step)>>,
}

impl Env<'_> {
    /// Adds a completion to CQ `cq`; counts an overflow instead when it is full.
    pub fn complete(&mut self, cq: usize, wc: WorkCompletion) {
        if wc.status != WcStatus::Success {
            self.counters.wc_errors += 1;
        }
        let c = &mut self.cqs[cq];
        if c.entries.len() >= c.depth {
            self.counters.cq_overflow += 1;
        } else {
            c.entries.push_back(wc);
        }
    }

    /// Builds a RoCEv2 frame from `qp` to its peer (or to `av` for UD) and queues it.
    pub fn send(
        &mut self,
        qp_number: u32,
        av: &AddressVector,
        bth: BthRepr,
        ext: ExtHeaders,
        payload: Vec<u8>,
    ) {
        let ip = match (av.sip, av.dip) {
            (IpAddr::V4(src), IpAddr::V4(dst)) => IpRepr::V4(Ipv4Repr {
                src,
                dst,
                dscp: av.traffic_class >> 2,
                ecn: av.traffic_class & 3,
                ttl: self.cfg.ttl,
                ident: 0,
                dont_frag: true,
            }),
            (IpAddr::V6(src), IpAddr::V6(dst)) => IpRepr::V6(Ipv6Repr {
                src,
                dst,
                dscp: av.traffic_class >> 2,
                ecn: av.traffic_class & 3,
                flow_label: av.flow_label,
                hop_limit: av.hop_limit,
            }),
            _ => unreachable!("modify_qp refuses mixed address vectors"),
        };
        let sport = if av.udp_sport != 0 {
            av.udp_sport
        } else {
            rxe_source_port(qp_number)
        };
        let frame = RoceFrame {
            eth: EthRepr {
                dst: av.dmac,
                src: self.cfg.mac,
                vlan: None,
            },
            ip,
            udp: UdpRepr {
                src_port: sport,
                dst_port: ROCE_PORT,
                checksum: 0,
            },
            bth,
            ext,
            payload,
        };
        let bytes = frame
            .build()
            .expect("the engines build only frames the wire model accepts");
        self.tx.push_back(bytes);
    }
}

/// rxe's UDP source port of a QP: `0xC000 + hash_32(qpn, 14)`.
pub fn rxe_source_port(qpn: u32) -> u16 {
    0xC000 | (qpn.wrapping_mul(0x61C8_8647) >> 18) as u16
}

/// The destination IP of a located frame whose IP packet holds at least the UDP header and a
/// whole BTH; `None` when it is shorter.
fn dst_ip_if_bth(frame: &[u8], loc: &rnic_wire::RoceLocation) -> Option<IpAddr> {
    let ip = loc.ip_packet(frame);
    let (hdr, dst) = match ip.first()? >> 4 {
        4 => (
            usize::from(ip[0] & 0x0F) * 4,
            IpAddr::from(<[u8; 4]>::try_from(ip.get(16..20)?).ok()?),
        ),
        6 => (
            40,
            IpAddr::from(<[u8; 16]>::try_from(ip.get(24..40)?).ok()?),
        ),
        _ => return None,
    };
    (ip.len() >= hdr + 8 + 12).then_some(dst)
}

/// A BTH with the defaults every packet of ours carries.
pub(crate) fn bth(opcode: u8, dest_qp: u32, psn: u32, ack_req: bool) -> BthRepr {
    BthRepr {
        ack_req,
        ..BthRepr::new(opcode, dest_qp, psn)
    }
}

/// One model NIC.
pub struct Nic {
    pub cfg: NicConfig,
    mrs: MrTable,
    pds: BTreeSet<u32>,
    next_pd: u32,
    cqs: Vec<Cq>,
    qps: BTreeMap<u32, Qp>,
    next_qpn: u32,
    tx: VecDeque<Vec<u8>>,
    raw_rx: VecDeque<Vec<u8>>,
    pub counters: Counters,
    /// Round-robin start of the requester scan.
    rr: u32,
    /// Every completer step decided, with what it read, while logging is on
    /// ([`Nic::log_completer_steps`]): what the hardware's `comp_check` is compared with.
    comp_log: Option<Vec<(StepInput, Step)>>,
}

impl Nic {
    pub fn new(cfg: NicConfig) -> Nic {
        Nic {
            mrs: MrTable::new(cfg.max_mrs),
            cfg,
            pds: BTreeSet::new(),
            next_pd: 1,
            cqs: Vec::new(),
            qps: BTreeMap::new(),
            // rxe's first QPN; 0 and 1 are the special QPs.
            next_qpn: 0x11,
            tx: VecDeque::new(),
            raw_rx: VecDeque::new(),
            counters: Counters::default(),
            rr: 0,
            comp_log: None,
        }
    }

    fn limits(&self) -> DeviceLimits {
        DeviceLimits {
            max_rd_atomic: self.cfg.max_rd_atomic,
            max_mtu: self.cfg.port_mtu,
        }
    }

    // ---- verbs ----

    pub fn alloc_pd(&mut self) -> Pd {
        let pd = self.next_pd;
        self.next_pd += 1;
        self.pds.insert(pd);
        Pd(pd)
    }

    pub fn reg_mr(&mut self, spec: MrSpec) -> Result<MrInfo, VerbsError> {
        if !self.pds.contains(&spec.pd.0) {
            return Err(VerbsError::new(
                "reg_mr",
                format!("PD {} does not exist", spec.pd.0),
            ));
        }
        self.mrs
            .register(spec)
            .map_err(|e: RegError| VerbsError::new("reg_mr", e.to_string()))
    }

    pub fn dereg_mr(&mut self, key: u32) -> Result<(), VerbsError> {
        if self.mrs.deregister(key) {
            Ok(())
        } else {
            Err(VerbsError::new(
                "dereg_mr",
                format!("no MR has key {key:#010x}"),
            ))
        }
    }

    /// The bytes of an MR (the host memory behind it).
    pub fn mr_bytes(&self, key: u32) -> Option<&[u8]> {
        self.mrs.bytes(key)
    }

    pub fn mr_bytes_mut(&mut self, key: u32) -> Option<&mut [u8]> {
        self.mrs.bytes_mut(key)
    }

    pub fn mr_info(&self, key: u32) -> Option<MrInfo> {
        self.mrs.info(key)
    }

    pub fn create_cq(&mut self, depth: usize) -> Result<usize, VerbsError> {
        if depth == 0 || depth > self.cfg.max_cqe {
            return Err(VerbsError::new(
                "create_cq",
                format!("depth {depth} is outside 1..={}", self.cfg.max_cqe),
            ));
        }
        self.cqs.push(Cq {
            depth,
            entries: VecDeque::new(),
        });
        Ok(self.cqs.len() - 1)
    }

    pub fn create_qp(&mut self, init: &QpInit) -> Result<u32, VerbsError> {
        let e = |r: String| Err(VerbsError::new("create_qp", r));
        if !self.pds.contains(&init.pd.0) {
            return e(format!("PD {} does not exist", init.pd.0));
        }
        for cq in [init.send_cq, init.recv_cq] {
            if cq >= self.cqs.len() || self.cqs[cq].depth == 0 {
                return e(format!("CQ {cq} does not exist"));
            }
        }
        if self.qps.len() >= self.cfg.max_qps {
            return e(format!("all {} QPs are in use", self.cfg.max_qps));
        }
        let qpn = match init.qpn {
            Some(n) if !(2..=crate::psn::PSN_MASK).contains(&n) => {
                return e(format!("QPN {n:#x} is reserved or does not fit 24 bits"));
            }
            Some(n) if self.qps.contains_key(&n) => return e(format!("QPN {n:#x} is in use")),
            Some(n) => n,
            None => {
                while self.qps.contains_key(&self.next_qpn) {
                    self.next_qpn = (self.next_qpn + 1) & crate::psn::PSN_MASK;
                }
                let n = self.next_qpn;
                self.next_qpn = (n + 1).max(2) & crate::psn::PSN_MASK;
                n
            }
        };
        self.qps.insert(qpn, Qp::new(qpn, init));
        Ok(qpn)
    }

    pub fn destroy_qp(&mut self, qpn: u32) -> Result<(), VerbsError> {
        self.qps
            .remove(&qpn)
            .map(|_| ())
            .ok_or_else(|| VerbsError::new("destroy_qp", format!("no QP {qpn:#x}")))
    }

    pub fn qp(&self, qpn: u32) -> Option<&Qp> {
        self.qps.get(&qpn)
    }

    pub fn modify_qp(&mut self, qpn: u32, attr: &QpAttr, mask: AttrMask) -> Result<(), VerbsError> {
        let limits = self.limits();
        let ips = self.cfg.ips.clone();
        let (qps, mut env) = self.split(0);
        let qp = qps
            .get_mut(&qpn)
            .ok_or_else(|| VerbsError::new("modify_qp", format!("no QP {qpn:#x}")))?;
        let to = qp.check_modify(attr, mask, limits, |ip| ips.contains(&ip))?;
        match to {
            QpState::Reset => qp.reset(),
            QpState::Err => {
                qp.apply(attr, mask, QpState::Err);
                completer::flush(qp, &mut env);
            }
            _ => qp.apply(attr, mask, to),
        }
        Ok(())
    }

    /// Posts a send work request. It is checked for shape here (opcode for the QP type, SGE
    /// count, atomic sizes); keys are checked when the requester starts it, as hardware does.
    pub fn post_send(&mut self, qpn: u32, wr: SendWr) -> Result<(), VerbsError> {
        let (qps, mut env) = self.split(0);
        let qp = qps
            .get_mut(&qpn)
            .ok_or_else(|| VerbsError::new("post_send", format!("no QP {qpn:#x}")))?;
        requester::post(qp, wr, &mut env)
    }

    pub fn post_recv(&mut self, qpn: u32, wr: RecvWr) -> Result<(), VerbsError> {
        let (qps, mut env) = self.split(0);
        let qp = qps
            .get_mut(&qpn)
            .ok_or_else(|| VerbsError::new("post_recv", format!("no QP {qpn:#x}")))?;
        responder::post_recv(qp, wr, &mut env)
    }

    /// Takes up to `max` completions from CQ `cq` (none from a CQ that does not exist: see
    /// [`Nic::cq_exists`]).
    pub fn poll_cq(&mut self, cq: usize, max: usize) -> Vec<WorkCompletion> {
        let Some(c) = self.cqs.get_mut(cq) else {
            return Vec::new();
        };
        let n = max.min(c.entries.len());
        c.entries.drain(..n).collect()
    }

    pub fn cq_exists(&self, cq: usize) -> bool {
        self.cqs.get(cq).is_some_and(|c| c.depth > 0)
    }

    /// Frees a PD no QP or MR uses.
    pub fn dealloc_pd(&mut self, pd: Pd) -> Result<(), VerbsError> {
        let e = |r: String| Err(VerbsError::new("dealloc_pd", r));
        if !self.pds.contains(&pd.0) {
            return e(format!("PD {} does not exist", pd.0));
        }
        if self.qps.values().any(|q| q.pd == pd) || self.mrs.uses_pd(pd) {
            return e(format!("PD {} is still used by a QP or an MR", pd.0));
        }
        self.pds.remove(&pd.0);
        Ok(())
    }

    /// Frees a CQ no QP uses; its slot is not reused, so other CQ numbers stay valid.
    pub fn destroy_cq(&mut self, cq: usize) -> Result<(), VerbsError> {
        let e = |r: String| Err(VerbsError::new("destroy_cq", r));
        if cq >= self.cqs.len() || self.cqs[cq].depth == 0 {
            return e(format!("CQ {cq} does not exist"));
        }
        if self
            .qps
            .values()
            .any(|q| q.send_cq == cq || q.recv_cq == cq)
        {
            return e(format!("CQ {cq} is still used by a QP"));
        }
        self.cqs[cq] = Cq::default();
        Ok(())
    }

    // ---- frames ----

    fn split(&mut self, now: u64) -> (&mut BTreeMap<u32, Qp>, Env<'_>) {
        (
            &mut self.qps,
            Env {
                cfg: &self.cfg,
                mrs: &mut self.mrs,
                cqs: &mut self.cqs,
                tx: &mut self.tx,
                counters: &mut self.counters,
                now,
                comp_log: &mut self.comp_log,
            },
        )
    }

    /// Starts (or stops) logging every completer step with what it read.
    pub fn log_completer_steps(&mut self, on: bool) {
        self.comp_log = on.then(Vec::new);
    }

    /// The completer steps logged since the last call, in order.
    pub fn take_completer_steps(&mut self) -> Vec<(StepInput, Step)> {
        self.comp_log
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// A frame arrived at time `now` (ns). Responses it causes are queued for [`Nic::poll`].
    pub fn receive(&mut self, now: u64, frame: &[u8]) {
        self.counters.rx_frames += 1;
        let Some(loc) = rnic_wire::locate(frame, &[ROCE_PORT]) else {
            if let Some(reply) = crate::arp::answer(frame, self.cfg.mac, &self.cfg.ips) {
                self.counters.arp_replies += 1;
                self.tx.push_back(reply);
                return;
            }
            self.counters.rx_raw += 1;
            self.raw_rx.push_back(frame.to_vec());
            return;
        };
        let pkt = match RocePacket::parse(frame) {
            Ok(p) => p,
            Err(e) => {
                // Once a whole BTH is there, rxe checks the destination address before the
                // BTH's fields and the extension headers (rc-transport.md, check 1).
                if dst_ip_if_bth(frame, &loc).is_some_and(|d| !self.cfg.ips.contains(&d)) {
                    self.counters.drop_not_our_ip += 1;
                } else if matches!(e.kind, ErrorKind::BadField { field: "TVer", .. }) {
                    self.counters.drop_bad_tver += 1;
                } else {
                    self.counters.drop_malformed += 1;
                }
                return;
            }
        };
        let (src, dst) = match &pkt.ip {
            IpParsed::V4(v) => (IpAddr::V4(v.repr.src), IpAddr::V4(v.repr.dst)),
            IpParsed::V6(v) => (IpAddr::V6(v.repr.src), IpAddr::V6(v.repr.dst)),
        };
        if !self.cfg.ips.contains(&dst) {
            self.counters.drop_not_our_ip += 1;
            return;
        }
        let op = pkt.opcode;
        if op.transport == Transport::Cnp {
            if pkt.icrc_ok() {
                self.counters.rx_cnp += 1;
            } else {
                self.counters.drop_bad_icrc += 1;
            }
            return;
        }
        let dest_qp = pkt.bth.dest_qp;
        if dest_qp == 0 {
            self.counters.drop_qp0 += 1;
            return;
        }
        let (qps, mut env) = self.split(now);
        let Some(qp) = qps.get_mut(&dest_qp) else {
            env.counters.drop_no_qp += 1;
            return;
        };
        let fits = matches!(
            (op.transport, qp.qp_type),
            (Transport::Rc, QpType::Rc) | (Transport::Ud, QpType::Ud)
        );
        if !fits {
            env.counters.drop_wrong_transport += 1;
            return;
        }
        let request = op.transport == Transport::Ud || responder::is_request(op.code);
        let state_ok = if request {
            matches!(qp.state(), QpState::Rtr | QpState::Rts)
        } else {
            qp.state() == QpState::Rts
        };
        if !state_ok {
            env.counters.drop_bad_state += 1;
            return;
        }
        if qp.qp_type == QpType::Rc {
            let av = qp.attr.av.expect("an RC QP in RTR has an address vector");
            if src != av.dip || dst != av.sip {
                env.counters.drop_address_mismatch += 1;
                return;
            }
        }
        if pkt.bth.pkey & 0x7FFF != 0x7FFF {
            env.counters.drop_bad_pkey += 1;
            return;
        }
        if let Some(d) = pkt.ext.deth {
            if d.qkey != qp.attr.qkey {
                env.counters.drop_bad_qkey += 1;
                return;
            }
        }
        if !pkt.icrc_ok() {
            env.counters.drop_bad_icrc += 1;
            return;
        }
        if request {
            responder::receive(qp, &pkt, &mut env);
        } else {
            completer::receive(qp, &pkt, &mut env);
        }
    }

    /// Runs timers and the requester at time `now` and returns every frame ready to leave, in
    /// order.
    pub fn poll(&mut self, now: u64) -> Vec<Vec<u8>> {
        let start = self.rr;
        self.rr = self.rr.wrapping_add(1);
        let (qps, mut env) = self.split(now);
        for qp in qps.values_mut() {
            completer::on_time(qp, &mut env);
        }
        // Round robin: each pass starts one QP further on.
        let n = qps.len().max(1);
        let keys: Vec<u32> = qps.keys().copied().collect();
        for i in 0..keys.len() {
            let k = keys[(i + start as usize) % n];
            let qp = qps.get_mut(&k).expect("listed key");
            requester::run(qp, &mut env);
        }
        self.tx.drain(..).collect()
    }

    /// The earliest time a timer needs [`Nic::poll`] called.
    pub fn next_deadline(&self) -> Option<u64> {
        self.qps
            .values()
            .filter_map(|q| match (q.comp.timer, q.comp.rnr_until) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            })
            .min()
    }

    /// Frames that were not RoCEv2, oldest first (ARP and such, for whoever answers them).
    pub fn take_raw(&mut self) -> Vec<Vec<u8>> {
        self.raw_rx.drain(..).collect()
    }

    /// Queues a raw frame for transmission.
    pub fn send_raw(&mut self, frame: Vec<u8>) {
        self.tx.push_back(frame);
    }
}
