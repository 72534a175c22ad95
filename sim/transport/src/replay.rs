//! Conformance by replay: the requests of every RC QP in a capture, fed in captured order (as
//! the link delivered them) into our responder, set up to match, and our responses compared one
//! by one with the ones the real responder sent: opcode, PSN, AETH syndrome and MSN, payload.
//!
//! What is inferred from the capture, per responder QP (host IP, QPN): the requester's QPN
//! (the destination of the responses; with several candidates, the one whose rxe source port
//! the requests carry), ePSN from the first request, the path MTU (the payload of FIRST and
//! MIDDLE packets), one MR per R_Key covering every range the requests use with the rights
//! they need, memory contents (WRITE data arrives by replay; bytes only ever read start as the
//! first READ response covering them), and enough posted receives. [`QpOverride`] and
//! [`MrOverride`] replace any of it for streams without a responder side.
//!
//! A responder that has been destroyed answers nothing (ibv_rc_pingpong has no closing
//! handshake), so requests delivered after a QP's last captured response (by the link's delivery
//! time: a frame the link held back arrives late) are fed but not compared.
//! AETH credit counts are compared only as "an ACK": a peer that advertises credits counts
//! its posted receives, which no capture shows; rxe always sends "unlimited".

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use rnic_wire::pcap::{Delivery, Record};
use rnic_wire::udp::ROCE_PORT;
use rnic_wire::{IpParsed, MacAddr, RocePacket};

use crate::mr::{MrInfo, MrSpec, Pd};
use crate::nic::{Nic, NicConfig, rxe_source_port};
use crate::ops;
use crate::psn;
use crate::qp::{QpInit, VerbsError};
use crate::verbs::*;

/// `--qp QPN:EPSN:MTU[:PD[:DEST_QPN]]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpOverride {
    pub qpn: u32,
    pub epsn: u32,
    pub mtu: Mtu,
    pub pd: u32,
    pub dest_qpn: Option<u32>,
}

/// `--mr RKEY:VA:LEN:ACCESS[:PD]`; memory starts zeroed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MrOverride {
    pub rkey: u32,
    pub va: u64,
    pub len: u64,
    pub access: Access,
    pub pd: u32,
}

#[derive(Clone, Debug, Default)]
pub struct Options {
    pub qps: Vec<QpOverride>,
    pub mrs: Vec<MrOverride>,
    /// The order, number of times and time the link delivered each frame. `None`: every frame
    /// once, in captured order, at its captured time.
    pub schedule: Option<Vec<Delivery>>,
}

/// The responder NIC a replay feeds: the model itself, or another NIC (the hardware) set up
/// as the model was, from the model's own tables ([`replay_on`]).
pub trait ReplayNic {
    /// Delivers `frame` at time `at` (ns); returns the frames it sent in answer.
    fn deliver(&mut self, at: u64, frame: &[u8]) -> Result<Vec<Vec<u8>>, String>;
    /// Requests executed so far.
    fn executed(&self) -> u64;
    /// The bytes of region `key` (a key of the model's setup).
    fn region(&self, key: u32) -> Option<Vec<u8>>;
    /// Writes `bytes` into region `key` from byte `offset` (the host's own bytes, which only
    /// the capture shows).
    fn set_region(&mut self, key: u32, offset: usize, bytes: &[u8]);
    /// Its counters by name.
    fn counts(&mut self) -> Result<Vec<(&'static str, u64)>, String>;
}

impl ReplayNic for Nic {
    fn deliver(&mut self, at: u64, frame: &[u8]) -> Result<Vec<Vec<u8>>, String> {
        self.receive(at, frame);
        Ok(self.poll(at))
    }
    fn executed(&self) -> u64 {
        self.counters.resp_executed
    }
    fn region(&self, key: u32) -> Option<Vec<u8>> {
        self.mr_bytes(key).map(<[u8]>::to_vec)
    }
    fn set_region(&mut self, key: u32, offset: usize, bytes: &[u8]) {
        if let Some(m) = self.mr_bytes_mut(key) {
            m[offset..offset + bytes.len()].copy_from_slice(bytes);
        }
    }
    fn counts(&mut self) -> Result<Vec<(&'static str, u64)>, String> {
        Ok(self.counters.iter().collect())
    }
}

/// What a responder host's NIC holds once the replay has set it up: its QPs (the capture's
/// QPNs, in RTR, receives posted) and every region's key (the capture's R_Keys, then one
/// receive buffer per QP).
#[derive(Clone, Debug)]
pub struct Setup {
    pub qpns: Vec<u32>,
    pub keys: Vec<u32>,
}

/// One response frame, ours or the capture's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// Capture index: of the response itself (expected) or of the request that caused it (ours).
    pub frame: usize,
    pub ts_ns: u64,
    pub opcode: u8,
    pub psn: u32,
    pub syndrome: Option<u8>,
    pub msn: Option<u32>,
    pub payload: Vec<u8>,
}

impl Response {
    fn from_packet(frame: usize, ts_ns: u64, p: &RocePacket<'_>) -> Response {
        Response {
            frame,
            ts_ns,
            opcode: p.bth.opcode,
            psn: p.bth.psn,
            syndrome: p.ext.aeth.map(|a| a.syndrome),
            msn: p.ext.aeth.map(|a| a.msn),
            payload: p.payload().to_vec(),
        }
    }

    /// Equal as the comparison sees it; a credit-carrying ACK equals any positive ACK.
    pub fn matches(&self, other: &Response) -> bool {
        let syn = |s: Option<u8>| s.map(|s| if s & 0xE0 == 0 { 0x1F } else { s });
        self.opcode == other.opcode
            && self.psn == other.psn
            && syn(self.syndrome) == syn(other.syndrome)
            && self.msn == other.msn
            && self.payload == other.payload
    }

    /// A one-line description.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} psn={}",
            rnic_wire::opcode::lookup(self.opcode)
                .map_or_else(|| format!("opcode {:#04x}", self.opcode), |o| o.to_string()),
            self.psn
        );
        if let (Some(syn), Some(msn)) = (self.syndrome, self.msn) {
            s.push_str(&format!(
                " aeth=[{} msn={msn}]",
                rnic_wire::ext::Syndrome::decode(syn)
            ));
        }
        s.push_str(&format!(" len={}", self.payload.len()));
        s
    }
}

/// A pair that differs, or a response on one side only.
#[derive(Clone, Debug)]
pub struct Mismatch {
    pub index: usize,
    pub expected: Option<Response>,
    pub ours: Option<Response>,
}

/// The replay of one responder QP.
#[derive(Clone, Debug)]
pub struct QpReplay {
    pub responder: IpAddr,
    pub qpn: u32,
    pub requester: IpAddr,
    pub requester_qpn: u32,
    pub epsn: u32,
    pub mtu: Mtu,
    /// Request frames fed (each delivered copy counts).
    pub requests: usize,
    /// Requests after the responder's last captured response: fed, not compared.
    pub after_silence: usize,
    /// Captured ACKs for requests that did not ask for one, which a responder may send at
    /// will (hardware NICs do): left out of `expected`.
    pub unsolicited: usize,
    pub expected: Vec<Response>,
    pub ours: Vec<Response>,
    pub matched: usize,
    pub mismatches: Vec<Mismatch>,
}

/// The whole replay.
pub struct Report {
    pub qps: Vec<QpReplay>,
    /// Our responses in the order we sent them: (timestamp, frame).
    pub frames: Vec<(u64, Vec<u8>)>,
    /// The final bytes of every `--mr` region, concatenated in option order.
    pub memory: Vec<u8>,
    /// Counters of each responder NIC, by IP: name and value.
    pub counters: Vec<(IpAddr, Vec<(&'static str, u64)>)>,
}

impl Report {
    pub fn requests(&self) -> usize {
        self.qps.iter().map(|q| q.requests).sum()
    }
    pub fn expected(&self) -> usize {
        self.qps.iter().map(|q| q.expected.len()).sum()
    }
    pub fn ours(&self) -> usize {
        self.qps.iter().map(|q| q.ours.len()).sum()
    }
    pub fn matched(&self) -> usize {
        self.qps.iter().map(|q| q.matched).sum()
    }
    pub fn mismatched(&self) -> usize {
        self.qps.iter().map(|q| q.mismatches.len()).sum()
    }

    /// The last line of `rnic trace replay`.
    pub fn summary_line(&self) -> String {
        format!(
            "qps={} requests={} expected={} ours={} matched={} mismatched={}",
            self.qps.len(),
            self.requests(),
            self.expected(),
            self.ours(),
            self.matched(),
            self.mismatched()
        )
    }
}

/// A RoCEv2 frame of the capture with what the replay needs.
struct Seen<'a> {
    index: usize,
    ts: u64,
    src: IpAddr,
    dst: IpAddr,
    pkt: RocePacket<'a>,
}

fn addrs(p: &RocePacket<'_>) -> (IpAddr, IpAddr) {
    match &p.ip {
        IpParsed::V4(v) => (IpAddr::V4(v.repr.src), IpAddr::V4(v.repr.dst)),
        IpParsed::V6(v) => (IpAddr::V6(v.repr.src), IpAddr::V6(v.repr.dst)),
    }
}

fn is_response(op: u8) -> bool {
    matches!(op, 0x0D..=0x12)
}

/// Everything inferred about one responder QP.
struct Plan {
    responder: IpAddr,
    qpn: u32,
    requester: IpAddr,
    requester_qpn: u32,
    requester_mac: MacAddr,
    responder_mac: MacAddr,
    sport: u16,
    epsn: u32,
    mtu: Mtu,
    pd: u32,
    receives: usize,
    recv_len: u64,
    /// Capture indices of its requests and of its responses.
    requests: Vec<usize>,
    responses: Vec<usize>,
}

/// Replays `records` into the model. Errors (no RC traffic, a QPN override that matches
/// nothing) say what is wrong.
pub fn replay(records: &[Record], opts: &Options) -> Result<Report, String> {
    replay_on(records, opts, &mut |nic, _| Ok(Box::new(nic)))
}

/// Makes the NIC a replay feeds from a responder host's model NIC, set up.
pub type Attach<'a> = dyn FnMut(Nic, &Setup) -> Result<Box<dyn ReplayNic>, String> + 'a;

/// Replays `records` into the NIC `attach` makes of each responder host's model NIC once it is
/// set up (the model itself, or hardware given the same tables).
pub fn replay_on(
    records: &[Record],
    opts: &Options,
    attach: &mut Attach<'_>,
) -> Result<Report, String> {
    let seen: Vec<Seen<'_>> = records
        .iter()
        .enumerate()
        .filter(|(_, r)| rnic_wire::locate(&r.data, &[ROCE_PORT]).is_some())
        .filter_map(|(index, r)| {
            let pkt = RocePacket::parse(&r.data).ok()?;
            let (src, dst) = addrs(&pkt);
            Some(Seen {
                index,
                ts: r.ts_ns,
                src,
                dst,
                pkt,
            })
        })
        .collect();
    let by_index: BTreeMap<usize, usize> =
        seen.iter().enumerate().map(|(i, s)| (s.index, i)).collect();
    let rc = |s: &Seen<'_>| s.pkt.bth.opcode >> 5 == 0;

    // Responder QPs, in order of first request.
    let mut keys: Vec<(IpAddr, u32)> = Vec::new();
    let mut requests: BTreeMap<(IpAddr, u32), Vec<usize>> = BTreeMap::new();
    for (i, s) in seen.iter().enumerate() {
        if rc(s) && crate::responder::is_request(s.pkt.bth.opcode) {
            let k = (s.dst, s.pkt.bth.dest_qp);
            if !requests.contains_key(&k) {
                keys.push(k);
            }
            requests.entry(k).or_default().push(i);
        }
    }
    if keys.is_empty() {
        return Err("no RC requests in the capture".into());
    }
    for o in &opts.qps {
        if !keys.iter().any(|k| k.1 == o.qpn) {
            return Err(format!(
                "--qp {:#x}: no RC request in the capture is for that QPN",
                o.qpn
            ));
        }
    }

    let mut plans = Vec::new();
    for k in &keys {
        let reqs = &requests[k];
        let first = &seen[reqs[0]];
        let requester = first.src;
        let ov = opts.qps.iter().find(|o| o.qpn == k.1);
        // Responses from this responder to the requester's host; the requester's QPN.
        let cands: BTreeSet<u32> = seen
            .iter()
            .filter(|s| {
                rc(s) && is_response(s.pkt.bth.opcode) && s.src == k.0 && s.dst == requester
            })
            .map(|s| s.pkt.bth.dest_qp)
            .collect();
        let sport = first.pkt.udp.repr.src_port;
        let requester_qpn = ov.and_then(|o| o.dest_qpn).or_else(|| {
            if cands.len() == 1 {
                cands.first().copied()
            } else {
                cands
                    .iter()
                    .copied()
                    .find(|&q| rxe_source_port(q) == sport)
                    .or_else(|| cands.first().copied())
            }
        });
        let requester_qpn = requester_qpn.unwrap_or(0);
        let responses: Vec<usize> = seen
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                rc(s)
                    && is_response(s.pkt.bth.opcode)
                    && s.src == k.0
                    && s.dst == requester
                    && s.pkt.bth.dest_qp == requester_qpn
            })
            .map(|(i, _)| i)
            .collect();
        let mtu = match ov {
            Some(o) => o.mtu,
            None => infer_mtu(reqs.iter().chain(&responses).map(|&i| &seen[i].pkt)),
        };
        let m = mtu.bytes() as u64;
        // Receives: one per SEND message and WRITE with immediate, and room for the longest.
        let (mut msgs, mut longest, mut open) = (0usize, m, None::<u32>);
        for &i in reqs {
            let b = &seen[i].pkt.bth;
            match ops::position(b.opcode) {
                Some((false, ops::Pos::First)) => {
                    msgs += 1;
                    open = Some(b.psn);
                }
                Some((false, ops::Pos::Only)) => msgs += 1,
                Some((false, ops::Pos::Last)) => {
                    if let Some(f) = open.take() {
                        let n = psn::diff(b.psn, f).max(0) as u64 + 1;
                        longest = longest.max(n * m);
                    }
                }
                Some((true, ops::Pos::Last | ops::Pos::Only))
                    if seen[i].pkt.ext.immdt.is_some() =>
                {
                    msgs += 1
                }
                _ => {}
            }
        }
        let responder_mac = responses
            .first()
            .map(|&i| seen[i].pkt.eth.src)
            .unwrap_or(first.pkt.eth.dst);
        let sport_back = responses
            .first()
            .map(|&i| seen[i].pkt.udp.repr.src_port)
            .unwrap_or_else(|| rxe_source_port(k.1));
        plans.push(Plan {
            responder: k.0,
            qpn: k.1,
            requester,
            requester_qpn,
            requester_mac: first.pkt.eth.src,
            responder_mac,
            sport: sport_back,
            epsn: ov.map_or(first.pkt.bth.psn, |o| o.epsn),
            mtu,
            pd: ov.map_or(1, |o| o.pd),
            receives: msgs + 16,
            recv_len: longest.min(64 << 20),
            requests: reqs.clone(),
            responses,
        });
    }

    // One NIC per responder host, holding its QPs and the MRs their requests use.
    let mut hosts: Vec<IpAddr> = Vec::new();
    for p in &plans {
        if !hosts.contains(&p.responder) {
            hosts.push(p.responder);
        }
    }
    let mut nics: Vec<Box<dyn ReplayNic>> = Vec::new();
    let mut memory_keys: Vec<(usize, u32)> = Vec::new();
    // The inferred regions of each host, by key.
    let mut inferred_keys: Vec<BTreeMap<u32, MrInfo>> = Vec::new();
    let mut qp_of: BTreeMap<(IpAddr, u32), usize> = BTreeMap::new();
    for (h, ip) in hosts.iter().enumerate() {
        let host_plans: Vec<(usize, &Plan)> = plans
            .iter()
            .enumerate()
            .filter(|(_, p)| p.responder == *ip)
            .collect();
        let mut cfg = NicConfig::new(host_plans[0].1.responder_mac, *ip);
        cfg.max_rd_atomic = 128;
        cfg.max_mrs = 1 << 24;
        let mut nic = Nic::new(cfg);
        let max_pd = host_plans
            .iter()
            .map(|(_, p)| p.pd)
            .chain(opts.mrs.iter().map(|m| m.pd))
            .max()
            .unwrap_or(1);
        for _ in 0..max_pd {
            nic.alloc_pd();
        }
        // MRs: the overrides, then every R_Key the requests use.
        let mut ranges: BTreeMap<u32, (u64, u64, Access, u32)> = BTreeMap::new();
        for &(_, p) in &host_plans {
            for &i in &p.requests {
                let pkt = &seen[i].pkt;
                let (rkey, va, len, need) = if let Some(r) = pkt.ext.reth {
                    if r.dma_len == 0 {
                        continue;
                    }
                    let need = if pkt.bth.opcode == ops::RC_READ_REQUEST {
                        Access::REMOTE_READ
                    } else {
                        Access::REMOTE_WRITE
                    };
                    (r.rkey, r.va, u64::from(r.dma_len), need)
                } else if let Some(a) = pkt.ext.atomic_eth {
                    (a.rkey, a.va, 8, Access::REMOTE_ATOMIC)
                } else {
                    continue;
                };
                let e = ranges
                    .entry(rkey)
                    .or_insert((va, va + len, Access::NONE, p.pd));
                e.0 = e.0.min(va);
                e.1 = e.1.max(va.saturating_add(len));
                e.2 |= need;
            }
        }
        for m in &opts.mrs {
            let mut access = m.access;
            if access.intersects(Access::REMOTE_WRITE | Access::REMOTE_ATOMIC) {
                access |= Access::LOCAL_WRITE;
            }
            nic.reg_mr(MrSpec {
                pd: Pd(m.pd),
                va: m.va,
                len: m.len,
                access,
                key: Some(m.rkey),
            })
            .map_err(|e| format!("--mr {:#x}: {e}", m.rkey))?;
            memory_keys.push((h, m.rkey));
        }
        let mut inferred = BTreeMap::new();
        for (&rkey, &(lo, hi, access, pd)) in &ranges {
            if opts.mrs.iter().any(|m| m.rkey == rkey) {
                continue;
            }
            let access = access | Access::LOCAL_WRITE;
            nic.reg_mr(MrSpec {
                pd: Pd(pd),
                va: lo,
                len: hi - lo,
                access,
                key: Some(rkey),
            })
            .map_err(|e| {
                format!(
                    "R_Key {rkey:#x} ({} bytes at {lo:#x}): {e}; give it with --mr",
                    hi - lo
                )
            })?;
            inferred.insert(rkey, nic.mr_info(rkey).expect("registered"));
        }
        let mut keys: Vec<u32> = opts.mrs.iter().map(|m| m.rkey).collect();
        keys.extend(inferred.keys());
        inferred_keys.push(inferred);
        // A receive buffer per QP, above every key the capture uses.
        let top = ranges
            .keys()
            .chain(opts.mrs.iter().map(|m| &m.rkey))
            .map(|k| k >> 8)
            .max()
            .unwrap_or(0);
        let cq = nic.create_cq(1 << 16).map_err(|e| e.to_string())?;
        for (n, &(pi, p)) in host_plans.iter().enumerate() {
            let recv = nic
                .reg_mr(MrSpec {
                    pd: Pd(p.pd),
                    va: 0x7000_0000_0000 + ((n as u64) << 32),
                    len: p.recv_len,
                    access: Access::LOCAL_WRITE,
                    key: Some((top + 1 + n as u32) << 8),
                })
                .map_err(|e| format!("receive buffer: {e}"))?;
            keys.push(recv.lkey);
            let mut init = QpInit::new(QpType::Rc, Pd(p.pd), cq);
            init.qpn = Some(p.qpn);
            init.cap.max_recv_wr = p.receives as u32;
            init.cap.max_send_wr = 1;
            let qpn = nic.create_qp(&init).map_err(|e| e.to_string())?;
            let attr = QpAttr {
                state: QpState::Init,
                access: Access::REMOTE_WRITE | Access::REMOTE_READ | Access::REMOTE_ATOMIC,
                av: Some(AddressVector {
                    udp_sport: p.sport,
                    ..AddressVector::new(p.requester_mac, p.responder, p.requester)
                }),
                path_mtu: p.mtu,
                dest_qpn: p.requester_qpn,
                rq_psn: p.epsn,
                max_dest_rd_atomic: 128,
                ..Default::default()
            };
            let e = |e: VerbsError| e.to_string();
            nic.modify_qp(qpn, &attr, AttrMask::STATE | AttrMask::RC_INIT)
                .map_err(e)?;
            let rtr = QpAttr {
                state: QpState::Rtr,
                ..attr.clone()
            };
            nic.modify_qp(qpn, &rtr, AttrMask::STATE | AttrMask::RC_RTR)
                .map_err(e)?;
            for w in 0..p.receives {
                nic.post_recv(
                    qpn,
                    RecvWr::new(w as u64).sge(recv.va, p.recv_len as u32, recv.lkey),
                )
                .map_err(e)?;
            }
            qp_of.insert((p.responder, p.qpn), pi);
        }
        let setup = Setup {
            qpns: host_plans.iter().map(|(_, p)| p.qpn).collect(),
            keys,
        };
        nics.push(attach(nic, &setup)?);
    }

    // Feed the requests as the link delivered them.
    let schedule = opts
        .schedule
        .clone()
        .unwrap_or_else(|| Delivery::as_captured(records));

    let mut out = Vec::new();
    // Bytes of inferred MRs written by replayed WRITEs, per host and key.
    let mut written: Vec<BTreeMap<u32, Vec<bool>>> = vec![BTreeMap::new(); hosts.len()];
    let mut qps: Vec<QpReplay> = plans
        .iter()
        .map(|p| QpReplay {
            responder: p.responder,
            qpn: p.qpn,
            requester: p.requester,
            requester_qpn: p.requester_qpn,
            epsn: p.epsn,
            mtu: p.mtu,
            requests: 0,
            after_silence: 0,
            unsolicited: 0,
            expected: p
                .responses
                .iter()
                .map(|&i| Response::from_packet(seen[i].index, seen[i].ts, &seen[i].pkt))
                .collect(),
            ours: Vec::new(),
            matched: 0,
            mismatches: Vec::new(),
        })
        .collect();
    for Delivery {
        record: idx,
        copies,
        ts_ns: at,
    } in schedule
    {
        let Some(&si) = by_index.get(&idx) else {
            continue;
        };
        let s = &seen[si];
        if !(rc(s) && crate::responder::is_request(s.pkt.bth.opcode)) {
            continue;
        }
        let Some(&pi) = qp_of.get(&(s.dst, s.pkt.bth.dest_qp)) else {
            continue;
        };
        let h = hosts
            .iter()
            .position(|x| *x == s.dst)
            .expect("a host per plan");
        let last_response = plans[pi].responses.last().map(|&i| seen[i].ts);
        let silent = last_response.is_some_and(|t| at > t);
        for _ in 0..copies {
            qps[pi].requests += 1;
            if silent {
                qps[pi].after_silence += 1;
            }
            let op = s.pkt.bth.opcode;
            if op == ops::RC_READ_REQUEST {
                reveal(
                    nics[h].as_mut(),
                    &seen,
                    by_index[&idx],
                    &plans[pi],
                    &inferred_keys[h],
                    &written[h],
                );
            }
            let executed = nics[h].executed();
            let answers = nics[h].deliver(at, s.pkt.frame)?;
            if let (Some(r), true) = (s.pkt.ext.reth, op != ops::RC_READ_REQUEST) {
                if nics[h].executed() > executed {
                    if let Some(info) = inferred_keys[h].get(&r.rkey) {
                        mark_written(info, &mut written[h], r.rkey, r.va, r.dma_len);
                    }
                }
            }
            for f in answers {
                out.push((at, f.clone()));
                if silent {
                    continue;
                }
                if let Ok(p) = RocePacket::parse(&f) {
                    qps[pi].ours.push(Response::from_packet(idx, at, &p));
                }
            }
        }
    }
    for (q, p) in qps.iter_mut().zip(&plans) {
        let optional: Vec<bool> = p
            .responses
            .iter()
            .map(|&i| unsolicited_ack(&seen, &p.requests, i))
            .collect();
        let (mut i, mut j) = (0, 0);
        let mut kept = Vec::new();
        while i < q.expected.len() || j < q.ours.len() {
            match (q.expected.get(i), q.ours.get(j)) {
                (Some(e), Some(o)) if e.matches(o) => {
                    q.matched += 1;
                    kept.push(e.clone());
                    i += 1;
                    j += 1;
                }
                (Some(_), _) if optional[i] => {
                    q.unsolicited += 1;
                    i += 1;
                }
                (e, o) => {
                    q.mismatches.push(Mismatch {
                        index: kept.len(),
                        expected: e.cloned(),
                        ours: o.cloned(),
                    });
                    if let Some(e) = e {
                        kept.push(e.clone());
                    }
                    i += usize::from(e.is_some());
                    j += usize::from(o.is_some());
                }
            }
        }
        q.expected = kept;
    }
    let mut memory = Vec::new();
    for &(h, key) in &memory_keys {
        memory.extend_from_slice(&nics[h].region(key).expect("registered"));
    }
    let mut counters = Vec::new();
    for (ip, n) in hosts.iter().zip(&mut nics) {
        counters.push((*ip, n.counts()?));
    }
    Ok(Report {
        qps,
        frames: out,
        memory,
        counters,
    })
}

/// The path MTU: the payload of FIRST and MIDDLE packets when there are any, else the
/// smallest MTU that holds every payload (at least 1024, rxe's default on a 1500-byte link).
fn infer_mtu<'a>(pkts: impl Iterator<Item = &'a RocePacket<'a>>) -> Mtu {
    let mut exact = None;
    let mut largest = 0;
    for p in pkts {
        let op = p.bth.opcode;
        let full = matches!(
            ops::position(op),
            Some((_, ops::Pos::First | ops::Pos::Middle))
        ) || matches!(
            op,
            ops::RC_READ_RESPONSE_FIRST | ops::RC_READ_RESPONSE_MIDDLE
        );
        let n = p.payload.len();
        if full {
            exact = exact.or(Mtu::from_bytes(n));
        }
        largest = largest.max(n);
    }
    exact.unwrap_or_else(|| {
        [Mtu::M1024, Mtu::M2048, Mtu::M4096]
            .into_iter()
            .find(|m| m.bytes() >= largest)
            .unwrap_or(Mtu::M4096)
    })
}

/// A positive ACK whose PSN names a request that, as last sent before it, had AckReq clear.
fn unsolicited_ack(seen: &[Seen<'_>], requests: &[usize], resp: usize) -> bool {
    let r = &seen[resp];
    if r.pkt.bth.opcode != ops::RC_ACKNOWLEDGE
        || r.pkt.ext.aeth.is_none_or(|a| a.syndrome & 0xE0 != 0)
    {
        return false;
    }
    requests
        .iter()
        .rev()
        .map(|&i| &seen[i])
        .find(|q| q.index < r.index && q.pkt.bth.psn == r.pkt.bth.psn)
        .is_some_and(|q| !q.pkt.bth.ack_req)
}

fn mark_written(
    info: &MrInfo,
    written: &mut BTreeMap<u32, Vec<bool>>,
    rkey: u32,
    va: u64,
    len: u32,
) {
    let w = written
        .entry(rkey)
        .or_insert_with(|| vec![false; info.len as usize]);
    let lo = va.max(info.va);
    let hi = (va + u64::from(len)).min(info.va + info.len);
    for a in lo..hi {
        w[(a - info.va) as usize] = true;
    }
}

/// Before a READ request is fed: the bytes it reads that no replayed WRITE has written are the
/// host's own, which only the capture shows; they take the values of the captured response
/// that followed the request. (Host programs change their buffers locally: rping refreshes its
/// source buffer every round.)
fn reveal(
    nic: &mut dyn ReplayNic,
    seen: &[Seen<'_>],
    req: usize,
    p: &Plan,
    inferred: &BTreeMap<u32, MrInfo>,
    written: &BTreeMap<u32, Vec<bool>>,
) {
    let rq = &seen[req];
    let Some(r) = rq.pkt.ext.reth else {
        return;
    };
    let Some(info) = inferred.get(&r.rkey).filter(|_| r.dma_len != 0) else {
        return;
    };
    let m = p.mtu.bytes() as u64;
    let n = u64::from(r.dma_len).div_ceil(m).max(1) as i32;
    let first = rq.pkt.bth.psn;
    let mut done = BTreeSet::new();
    let w = written.get(&r.rkey);
    for &i in &p.responses {
        let s = &seen[i];
        if s.index < rq.index || !matches!(s.pkt.bth.opcode, 0x0D..=0x10) {
            continue;
        }
        let d = psn::diff(s.pkt.bth.psn, first);
        if d < 0 || d >= n || !done.insert(d) {
            continue;
        }
        let at = r.va + d as u64 * m;
        // Runs of bytes inside the region that no replayed WRITE wrote.
        let mut run: Option<(usize, Vec<u8>)> = None;
        for (j, &b) in s.pkt.payload().iter().enumerate() {
            let a = at + j as u64;
            let o = (a >= info.va && a < info.va + info.len).then(|| (a - info.va) as usize);
            match o.filter(|&o| !w.is_some_and(|w| w[o])) {
                Some(o) => match &mut run {
                    Some((start, bytes)) if *start + bytes.len() == o => bytes.push(b),
                    _ => {
                        if let Some((start, bytes)) = run.take() {
                            nic.set_region(r.rkey, start, &bytes);
                        }
                        run = Some((o, vec![b]));
                    }
                },
                None => {
                    if let Some((start, bytes)) = run.take() {
                        nic.set_region(r.rkey, start, &bytes);
                    }
                }
            }
        }
        if let Some((start, bytes)) = run {
            nic.set_region(r.rkey, start, &bytes);
        }
        if done.len() == n as usize {
            break;
        }
    }
}
