//! What an RC trace says about the transport, from the wire alone: frames by opcode, NAKs by
//! syndrome, retransmitted PSNs, and a check of the responder and requester behaviour against
//! the rules of rc-transport.md (taken from Linux rxe), given which frames the link delivered.
//!
//! The responder model: per request flow (requester IP to responder IP; one RC QP pair per
//! host pair, as with the verbs tools and perftest `-q 1`) the expected PSN starts at the
//! flow's first request. A delivered request with PSN == ePSN is executed (ePSN += 1, or the
//! READ's packet count); one ahead draws ONE "PSN sequence error" NAK carrying ePSN, later
//! ones are dropped silently until ePSN arrives; one behind is a duplicate: a SEND/WRITE is
//! ACKed with ePSN - 1, a READ is answered again. The requester: after a sequence-error NAK
//! for PSN p it resends from p onwards in order (go-back-N).
//!
//! This module is the behavioural reference for the hardware transport: the same checks run
//! on a trace of our NIC against rxe.

use std::collections::BTreeMap;
use std::net::IpAddr;

use rnic_wire::ext::Syndrome;
use rnic_wire::pcap::Record;
use rnic_wire::{IpParsed, RocePacket};
use serde::{Deserialize, Serialize};

/// The RoCEv2 UDP port.
const ROCE_PORT: u16 = 4791;
const PSN_MASK: u32 = 0xFF_FFFF;

/// One RoCEv2 frame of a trace, with what the analysis needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    /// Index in the capture (all frames counted).
    pub index: usize,
    pub ts_ns: u64,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub opcode: u8,
    pub dest_qp: u32,
    pub psn: u32,
    pub ack_req: bool,
    /// AETH syndrome, for ACK/NAK and READ responses.
    pub syndrome: Option<u8>,
    /// RETH DMA length (READ and WRITE requests).
    pub dma_len: Option<u32>,
    pub payload_len: usize,
    pub icrc_ok: bool,
    /// How many times the link delivered it: 0 dropped (or corrupted), 1, or 2 (duplicated).
    pub deliveries: u8,
}

/// A decoded capture.
#[derive(Clone, Debug, Default)]
pub struct Decoded {
    pub frames: Vec<Frame>,
    pub total: usize,
    pub non_roce: usize,
    /// Frames to the RoCEv2 port that the wire model rejects: index and reason.
    pub malformed: Vec<(usize, String)>,
}

/// Decodes every RoCEv2 frame of `records` with the wire model. `deliveries[i]` says how often
/// frame `i` was delivered (default 1).
pub fn decode(records: &[Record], deliveries: &BTreeMap<usize, u8>) -> Decoded {
    let mut d = Decoded {
        total: records.len(),
        ..Default::default()
    };
    for (index, r) in records.iter().enumerate() {
        if rnic_wire::locate(&r.data, &[ROCE_PORT]).is_none() {
            d.non_roce += 1;
            continue;
        }
        let p = match RocePacket::parse(&r.data) {
            Ok(p) => p,
            Err(e) => {
                d.malformed.push((index, e.to_string()));
                continue;
            }
        };
        let (src, dst) = match &p.ip {
            IpParsed::V4(v) => (IpAddr::V4(v.repr.src), IpAddr::V4(v.repr.dst)),
            IpParsed::V6(v) => (IpAddr::V6(v.repr.src), IpAddr::V6(v.repr.dst)),
        };
        d.frames.push(Frame {
            index,
            ts_ns: r.ts_ns,
            src,
            dst,
            opcode: p.bth.opcode,
            dest_qp: p.bth.dest_qp,
            psn: p.bth.psn,
            ack_req: p.bth.ack_req,
            syndrome: p.ext.aeth.map(|a| a.syndrome),
            dma_len: p.ext.reth.map(|r| r.dma_len),
            payload_len: p.payload.len(),
            icrc_ok: p.icrc_ok(),
            deliveries: deliveries.get(&index).copied().unwrap_or(1),
        });
    }
    d
}

/// The opcode's name as the wire model's table gives it, e.g. `RC_SEND_FIRST`.
pub fn opcode_name(op: u8) -> String {
    rnic_wire::opcode::lookup(op).map_or_else(|| format!("opcode {op:#04x}"), |i| i.to_string())
}

fn is_rc(op: u8) -> bool {
    op >> 5 == 0
}

/// An RC request (SEND, WRITE, READ request, atomics).
pub fn is_request(op: u8) -> bool {
    is_rc(op) && matches!(op & 0x1F, 0x00..=0x0C | 0x13 | 0x14 | 0x16 | 0x17)
}

fn is_read_request(op: u8) -> bool {
    op == 0x0C
}

/// An RC READ response packet.
pub fn is_read_response(op: u8) -> bool {
    is_rc(op) && matches!(op, 0x0D..=0x10)
}

fn is_ack(op: u8) -> bool {
    op == 0x11
}

/// `a - b` as a signed PSN distance (24-bit serial arithmetic).
pub fn psn_diff(a: u32, b: u32) -> i32 {
    ((a.wrapping_sub(b) << 8) as i32) >> 8
}

fn psn_add(a: u32, n: u32) -> u32 {
    a.wrapping_add(n) & PSN_MASK
}

/// Direction of traffic between two hosts.
fn flow_name(src: IpAddr, dst: IpAddr) -> String {
    format!("{src}->{dst}")
}

/// The counts a scenario reports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub frames: usize,
    pub roce_frames: usize,
    pub non_roce_frames: usize,
    pub malformed: usize,
    pub icrc_bad: usize,
    pub by_opcode: BTreeMap<String, usize>,
    /// NAKs (and RNR NAKs) by syndrome, e.g. `NAK PSN sequence error`.
    pub naks_by_syndrome: BTreeMap<String, usize>,
    pub acks: usize,
    /// Request (and READ response) PSNs sent more than once, per direction.
    pub retransmitted_psns: BTreeMap<String, Vec<u32>>,
    pub retransmissions: usize,
    pub dropped_by_link: usize,
}

/// Counts frames by opcode, NAKs by syndrome, and retransmitted PSNs.
pub fn summarize(d: &Decoded) -> Summary {
    let mut s = Summary {
        frames: d.total,
        roce_frames: d.frames.len(),
        non_roce_frames: d.non_roce,
        malformed: d.malformed.len(),
        ..Default::default()
    };
    let mut seen: BTreeMap<(String, bool, u32), usize> = BTreeMap::new();
    for f in &d.frames {
        *s.by_opcode.entry(opcode_name(f.opcode)).or_default() += 1;
        if !f.icrc_ok {
            s.icrc_bad += 1;
        }
        if f.deliveries == 0 {
            s.dropped_by_link += 1;
        }
        if is_ack(f.opcode) {
            match f.syndrome.map(Syndrome::decode) {
                Some(Syndrome::Ack { .. }) => s.acks += 1,
                Some(other) => {
                    *s.naks_by_syndrome.entry(nak_name(other)).or_default() += 1;
                }
                None => {}
            }
        }
        let req = is_request(f.opcode);
        if req || is_read_response(f.opcode) {
            let key = (flow_name(f.src, f.dst), req, f.psn);
            let n = seen.entry(key).or_default();
            *n += 1;
            if *n == 2 {
                s.retransmitted_psns
                    .entry(flow_name(f.src, f.dst))
                    .or_default()
                    .push(f.psn);
            }
            if *n >= 2 {
                s.retransmissions += 1;
            }
        }
    }
    s
}

fn nak_name(s: Syndrome) -> String {
    match s {
        Syndrome::Nak { code: 0 } => "NAK PSN sequence error (0x60)".into(),
        Syndrome::Nak { code: 1 } => "NAK invalid request (0x61)".into(),
        Syndrome::Nak { code: 2 } => "NAK remote access error (0x62)".into(),
        Syndrome::Nak { code: 3 } => "NAK remote operational error (0x63)".into(),
        Syndrome::Nak { code } => format!("NAK code {code}"),
        Syndrome::RnrNak { timer } => format!("RNR NAK timer {timer}"),
        other => format!("{other}"),
    }
}

/// One sequence-error NAK seen on the wire, and what the requester did about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NakEpisode {
    pub flow: String,
    /// Capture index of the NAK.
    pub nak_frame: usize,
    pub psn: u32,
    /// Capture index of the first resent request with that PSN (None: never resent, or the
    /// NAK was lost so the requester could not react to it).
    pub resent_at: Option<usize>,
    /// PSNs resent in order from `psn`.
    pub resent: Vec<u32>,
}

/// The behaviour found in a trace and every disagreement with the model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Behaviour {
    pub path_mtu: usize,
    /// Request PSNs the link did not deliver.
    pub lost_requests: Vec<(String, u32)>,
    pub seq_naks_expected: usize,
    pub seq_naks_seen: usize,
    pub episodes: Vec<NakEpisode>,
    /// Duplicate SEND/WRITE requests delivered to the responder, and how many were ACKed
    /// with ePSN - 1 afterwards.
    pub duplicates: usize,
    pub duplicates_reacked: usize,
    /// Duplicate READ requests, and how many were answered again.
    pub duplicate_reads: usize,
    pub duplicate_reads_answered: usize,
    /// Requests dropped silently by the responder (out of sequence after a NAK).
    pub silently_dropped: usize,
    /// Requests that arrived after the responder's last frame (no expectation about them).
    pub after_responder_silent: usize,
    pub violations: Vec<String>,
}

/// The path MTU: the payload of FIRST/MIDDLE packets (always a full MTU), else 1024.
pub fn infer_mtu(frames: &[Frame]) -> usize {
    frames
        .iter()
        .filter(|f| {
            is_rc(f.opcode) && matches!(f.opcode & 0x1F, 0x00 | 0x01 | 0x06 | 0x07 | 0x0D | 0x0E)
        })
        .map(|f| f.payload_len)
        .max()
        .unwrap_or(1024)
}

enum Expect {
    SeqNak {
        psn: u32,
        after: usize,
    },
    DupAck {
        psn: u32,
        after: usize,
    },
    ReadReplay {
        psn: u32,
        after: usize,
    },
    /// A duplicate atomic: answered from the saved result with its own PSN.
    AtomicReplay {
        psn: u32,
        after: usize,
    },
}

/// Checks the RC behaviour of every request flow against the model (module docs).
pub fn check_rc(frames: &[Frame], path_mtu: usize) -> Behaviour {
    let mut b = Behaviour {
        path_mtu,
        ..Default::default()
    };
    let mut flows: Vec<(IpAddr, IpAddr)> = Vec::new();
    for f in frames.iter().filter(|f| is_request(f.opcode)) {
        if !flows.contains(&(f.src, f.dst)) {
            flows.push((f.src, f.dst));
        }
    }
    for (req, resp) in flows {
        check_flow(frames, req, resp, &mut b);
    }
    b
}

fn packets_of(f: &Frame, mtu: usize) -> u32 {
    if is_read_request(f.opcode) {
        let len = f.dma_len.unwrap_or(0) as usize;
        len.div_ceil(mtu.max(1)).max(1) as u32
    } else {
        1
    }
}

fn check_flow(frames: &[Frame], req_ip: IpAddr, resp_ip: IpAddr, b: &mut Behaviour) {
    let name = flow_name(req_ip, resp_ip);
    let requests: Vec<&Frame> = frames
        .iter()
        .filter(|f| f.src == req_ip && f.dst == resp_ip && is_request(f.opcode))
        .collect();
    // Requests as the responder received them (delivery order); responses as it sent them
    // (capture order, each once).
    let mut responses: Vec<&Frame> = frames
        .iter()
        .filter(|f| f.src == resp_ip && f.dst == req_ip && is_rc(f.opcode) && !is_request(f.opcode))
        .collect();
    responses.sort_by_key(|f| f.index);
    responses.dedup_by_key(|f| f.index);
    let mtu = b.path_mtu;

    // The responder as the model says it behaves.
    let mut expects = Vec::new();
    let mut epsn = requests.first().map(|f| f.psn);
    let mut nak_sent = false;
    for f in &requests {
        if f.deliveries == 0 {
            b.lost_requests.push((name.clone(), f.psn));
        }
        for _ in 0..f.deliveries {
            let e = epsn.expect("set from the first request");
            let d = psn_diff(f.psn, e);
            if d == 0 {
                epsn = Some(psn_add(e, packets_of(f, mtu)));
                nak_sent = false;
            } else if d > 0 {
                if nak_sent {
                    b.silently_dropped += 1;
                } else {
                    expects.push(Expect::SeqNak {
                        psn: e,
                        after: f.index,
                    });
                    nak_sent = true;
                }
            } else if is_read_request(f.opcode) {
                expects.push(Expect::ReadReplay {
                    psn: f.psn,
                    after: f.index,
                });
            } else if matches!(f.opcode, 0x13 | 0x14) {
                expects.push(Expect::AtomicReplay {
                    psn: f.psn,
                    after: f.index,
                });
            } else {
                expects.push(Expect::DupAck {
                    psn: psn_add(e, PSN_MASK),
                    after: f.index,
                });
            }
        }
    }

    // What it did.
    let seq_naks: Vec<&Frame> = responses
        .iter()
        .copied()
        .filter(|f| is_ack(f.opcode) && f.syndrome == Some(0x60))
        .collect();
    // Requests that reached the responder after its last frame on the wire get no expectation:
    // its QP may be gone (ibv_rc_pingpong exits with no closing handshake, so a lost final ACK
    // leaves the peer retrying into a destroyed QP). A responder that stops answering for
    // another reason shows up as a tool that did not complete.
    let responder_last = frames
        .iter()
        .filter(|f| f.src == resp_ip)
        .map(|f| f.index)
        .max()
        .unwrap_or(0);
    let before = expects.len();
    expects.retain(|e| {
        let (Expect::SeqNak { after, .. }
        | Expect::DupAck { after, .. }
        | Expect::ReadReplay { after, .. }
        | Expect::AtomicReplay { after, .. }) = e;
        *after < responder_last
    });
    b.after_responder_silent += before - expects.len();
    let expected_naks: Vec<(u32, usize)> = expects
        .iter()
        .filter_map(|e| match e {
            Expect::SeqNak { psn, after } => Some((*psn, *after)),
            _ => None,
        })
        .collect();
    b.seq_naks_expected += expected_naks.len();
    b.seq_naks_seen += seq_naks.len();
    if seq_naks.len() != expected_naks.len() {
        b.violations.push(format!(
            "{name}: {} sequence-error NAKs expected (PSNs {:?}), {} seen (PSNs {:?})",
            expected_naks.len(),
            expected_naks.iter().map(|e| e.0).collect::<Vec<_>>(),
            seq_naks.len(),
            seq_naks.iter().map(|f| f.psn).collect::<Vec<_>>()
        ));
    }
    for (n, (psn, after)) in seq_naks.iter().zip(&expected_naks) {
        if n.psn != *psn || n.index < *after {
            b.violations.push(format!(
                "{name}: sequence-error NAK at frame {} carries PSN {} ; the model expects PSN {} after frame {}",
                n.index, n.psn, psn, after
            ));
        }
    }
    for e in &expects {
        match *e {
            Expect::DupAck { psn, after } => {
                b.duplicates += 1;
                let acked = responses.iter().any(|f| {
                    f.index > after
                        && is_ack(f.opcode)
                        && matches!(f.syndrome.map(Syndrome::decode), Some(Syndrome::Ack { .. }))
                        && f.psn == psn
                });
                if acked {
                    b.duplicates_reacked += 1;
                } else {
                    b.violations.push(format!(
                        "{name}: duplicate request at frame {after} was not ACKed with PSN {psn} (ePSN - 1)"
                    ));
                }
            }
            Expect::ReadReplay { psn, after } => {
                b.duplicate_reads += 1;
                if responses
                    .iter()
                    .any(|f| f.index > after && is_read_response(f.opcode) && f.psn == psn)
                {
                    b.duplicate_reads_answered += 1;
                } else {
                    b.violations.push(format!(
                        "{name}: duplicate READ request at frame {after} (PSN {psn}) was not answered again"
                    ));
                }
            }
            Expect::AtomicReplay { psn, after } => {
                b.duplicates += 1;
                if responses
                    .iter()
                    .any(|f| f.index > after && f.opcode == 0x12 && f.psn == psn)
                {
                    b.duplicates_reacked += 1;
                } else {
                    b.violations.push(format!(
                        "{name}: duplicate atomic at frame {after} (PSN {psn}) was not answered from the saved result"
                    ));
                }
            }
            Expect::SeqNak { .. } => {}
        }
    }

    // The requester: go-back-N from each NAK it received, in the order it sent.
    let mut requests = requests;
    requests.sort_by_key(|f| f.index);
    requests.dedup_by_key(|f| f.index);
    for nak in &seq_naks {
        let p = nak.psn;
        let sent_before: Vec<&&Frame> = requests.iter().filter(|f| f.index < nak.index).collect();
        let Some(highest) = sent_before
            .iter()
            .map(|f| psn_add(f.psn, packets_of(f, mtu) - 1))
            .reduce(|a, c| if psn_diff(c, a) > 0 { c } else { a })
        else {
            continue;
        };
        let after: Vec<&&Frame> = requests.iter().filter(|f| f.index > nak.index).collect();
        let start = after.iter().position(|f| f.psn == p);
        let mut ep = NakEpisode {
            flow: name.clone(),
            nak_frame: nak.index,
            psn: p,
            resent_at: start.map(|i| after[i].index),
            resent: Vec::new(),
        };
        match start {
            // A NAK that arrives while a retry is under way is ignored (rxe's
            // started_retry): fine when the responder later got past p anyway.
            None if nak.deliveries > 0
                && psn_diff(highest, p) >= 0
                && !responses.iter().any(|r| {
                    r.index > nak.index
                        && if is_ack(r.opcode) {
                            match r.syndrome.map(Syndrome::decode) {
                                Some(Syndrome::Ack { .. }) => psn_diff(r.psn, p) >= 0,
                                Some(Syndrome::Nak { code: 0 }) => psn_diff(r.psn, p) > 0,
                                _ => false,
                            }
                        } else {
                            // READ responses and atomic ACKs answer requests at their PSN.
                            psn_diff(r.psn, p) >= 0
                        }
                }) =>
            {
                b.violations.push(format!(
                    "{name}: after the sequence-error NAK at frame {} the requester never resent PSN {p}",
                    nak.index
                ));
            }
            None => {}
            Some(i) => {
                let mut next = p;
                for f in &after[i..] {
                    let d = psn_diff(f.psn, next);
                    if d == 0 {
                        ep.resent.push(f.psn);
                        next = psn_add(next, packets_of(f, mtu));
                    } else if d < 0 {
                        break; // another rewind: a new episode
                    } else if psn_diff(next, highest) <= 0 && !is_read_request(f.opcode) {
                        b.violations.push(format!(
                            "{name}: go-back-N from PSN {p} skipped PSN {next} (frame {} carries PSN {})",
                            f.index, f.psn
                        ));
                        break;
                    } else {
                        break;
                    }
                }
            }
        }
        b.episodes.push(ep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 2));
    const B: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1));

    /// A tiny trace language: requests from A to B and responses from B to A, in order.
    struct T(Vec<Frame>);
    impl T {
        fn push(
            &mut self,
            src: IpAddr,
            dst: IpAddr,
            opcode: u8,
            psn: u32,
            syn: Option<u8>,
            del: u8,
        ) -> &mut Self {
            let index = self.0.len();
            self.0.push(Frame {
                index,
                ts_ns: index as u64,
                src,
                dst,
                opcode,
                dest_qp: 0x11,
                psn,
                ack_req: true,
                syndrome: syn,
                dma_len: None,
                payload_len: 1024,
                icrc_ok: true,
                deliveries: del,
            });
            self
        }
        fn send(&mut self, psn: u32) -> &mut Self {
            self.push(A, B, 0x04, psn, None, 1)
        }
        fn lost(&mut self, psn: u32) -> &mut Self {
            self.push(A, B, 0x04, psn, None, 0)
        }
        fn ack(&mut self, psn: u32) -> &mut Self {
            self.push(B, A, 0x11, psn, Some(0x1F), 1)
        }
        fn nak(&mut self, psn: u32) -> &mut Self {
            self.push(B, A, 0x11, psn, Some(0x60), 1)
        }
    }

    fn trace() -> T {
        T(Vec::new())
    }

    #[test]
    fn psn_distance_wraps_at_24_bits() {
        assert_eq!(psn_diff(0, 0xFF_FFFF), 1);
        assert_eq!(psn_diff(0xFF_FFFF, 0), -1);
        // rc-transport.md: ePSN + 2^23 - 1 is ahead, ePSN + 2^23 is behind.
        assert!(psn_diff(5 + (1 << 23) - 1, 5) > 0);
        assert!(psn_diff((5 + (1 << 23)) & PSN_MASK, 5) < 0);
    }

    #[test]
    fn a_loss_with_one_nak_and_go_back_n_agrees_with_the_model() {
        let mut t = trace();
        t.send(0)
            .send(1)
            .lost(2)
            .send(3)
            .nak(2)
            .send(4)
            .send(2)
            .send(3)
            .send(4)
            .ack(4);
        let b = check_rc(&t.0, 1024);
        assert!(b.violations.is_empty(), "{:?}", b.violations);
        assert_eq!((b.seq_naks_expected, b.seq_naks_seen), (1, 1));
        assert_eq!(
            b.silently_dropped, 1,
            "PSN 4 after the NAK is dropped silently"
        );
        assert_eq!(b.episodes[0].resent, vec![2, 3, 4]);
        assert_eq!(b.lost_requests, vec![(flow_name(A, B), 2)]);
    }

    #[test]
    fn a_nak_with_the_wrong_psn_is_reported() {
        let mut t = trace();
        t.send(0).lost(1).send(2).nak(2).send(1).send(2).ack(2);
        let b = check_rc(&t.0, 1024);
        assert!(
            b.violations.iter().any(|v| v.contains("expects PSN 1")),
            "{:?}",
            b.violations
        );
    }

    #[test]
    fn two_naks_for_one_loss_are_reported() {
        let mut t = trace();
        t.send(0)
            .lost(1)
            .send(2)
            .nak(1)
            .send(3)
            .nak(1)
            .send(1)
            .send(2)
            .send(3)
            .ack(3);
        let b = check_rc(&t.0, 1024);
        assert_eq!(b.seq_naks_seen, 2);
        assert!(
            b.violations
                .iter()
                .any(|v| v.contains("1 sequence-error NAKs expected")),
            "{:?}",
            b.violations
        );
    }

    #[test]
    fn selective_retransmission_is_not_go_back_n() {
        let mut t = trace();
        t.send(0)
            .lost(1)
            .send(2)
            .send(3)
            .nak(1)
            .send(1)
            .send(4)
            .ack(4);
        let b = check_rc(&t.0, 1024);
        assert!(
            b.violations.iter().any(|v| v.contains("skipped PSN 2")),
            "{:?}",
            b.violations
        );
    }

    #[test]
    fn duplicates_must_be_reacked_with_epsn_minus_one() {
        let mut good = trace();
        good.send(0).send(1).ack(1).send(1).ack(1);
        let b = check_rc(&good.0, 1024);
        assert!(b.violations.is_empty(), "{:?}", b.violations);
        assert_eq!((b.duplicates, b.duplicates_reacked), (1, 1));

        let mut bad = trace();
        bad.send(0).send(1).ack(1).send(1).ack(0);
        let b = check_rc(&bad.0, 1024);
        assert_eq!((b.duplicates, b.duplicates_reacked), (1, 0));
        assert!(
            b.violations.iter().any(|v| v.contains("PSN 1 (ePSN - 1)")),
            "{:?}",
            b.violations
        );
    }

    #[test]
    fn retries_into_a_silent_responder_are_not_held_against_it() {
        // The final ACK is lost and the responder is gone: the requester's retries go
        // unanswered. No expectation after the responder's last frame...
        let mut t = trace();
        t.send(0).send(1).ack(1).send(1).ack(1);
        t.0[4].deliveries = 0;
        t.send(1).send(1);
        let b = check_rc(&t.0, 1024);
        assert!(b.violations.is_empty(), "{:?}", b.violations);
        assert_eq!(b.after_responder_silent, 2);
        assert_eq!((b.duplicates, b.duplicates_reacked), (1, 1));
        // ...but one before it still counts.
        let mut t = trace();
        t.send(0).send(1).ack(1).send(1).send(1).ack(0);
        let b = check_rc(&t.0, 1024);
        assert_eq!((b.duplicates, b.duplicates_reacked), (2, 0));
    }

    #[test]
    fn a_missing_nak_is_reported() {
        let mut t = trace();
        t.send(0).lost(1).send(2).send(1).send(2).ack(2);
        let b = check_rc(&t.0, 1024);
        assert_eq!(b.seq_naks_expected, 1);
        assert!(!b.violations.is_empty());
    }

    #[test]
    fn read_requests_advance_epsn_by_their_packet_count() {
        let mut t = trace();
        t.push(A, B, 0x0C, 10, None, 1);
        t.0[0].dma_len = Some(4096);
        t.0[0].payload_len = 0;
        t.push(A, B, 0x0C, 14, None, 1);
        t.0[1].dma_len = Some(100);
        t.0[1].payload_len = 0;
        let b = check_rc(&t.0, 1024);
        assert_eq!(
            b.seq_naks_expected, 0,
            "PSN 14 follows a 4-packet READ at PSN 10"
        );
        assert!(b.violations.is_empty(), "{:?}", b.violations);
    }

    #[test]
    fn summary_counts_retransmissions_and_naks() {
        let mut t = trace();
        t.send(0).lost(1).send(2).nak(1).send(1).send(2).ack(2);
        let d = Decoded {
            frames: t.0.clone(),
            total: 7,
            ..Default::default()
        };
        let s = summarize(&d);
        assert_eq!(s.retransmitted_psns[&flow_name(A, B)], vec![1, 2]);
        assert_eq!(s.retransmissions, 2);
        assert_eq!(s.naks_by_syndrome["NAK PSN sequence error (0x60)"], 1);
        assert_eq!(s.acks, 1);
        assert_eq!(s.dropped_by_link, 1);
        assert_eq!(s.by_opcode["RC_SEND_ONLY"], 5);
    }
}
