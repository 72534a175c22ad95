//! The receive parser's expected behaviour, from the software model: for one frame, whether it
//! is bypassed, dropped (and why) or accepted (with its header word and payload).
//!
//! The verdict rules are those documented in `rnic_hw::rx_parser` (one reason per frame, first
//! match wins), computed here on bytes with `rnic-wire`; an accepted frame's header word is
//! built from [`RocePacket::parse`]'s view (its typed fields), not from the hardware's offsets,
//! and its ICRC is checked with `rnic_wire::icrc`.

use rnic_hw::header_channel::HeaderRecord;
use rnic_hw::rx_parser::{MAX_BEATS, MIN_FRAME, Reason};
use rnic_wire::opcode;
use rnic_wire::{IpParsed, RocePacket, eth, ipv4, udp};

/// What the parser must do with a frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Leaves unchanged on the bypass stream.
    Bypass,
    /// Dropped and counted.
    Drop(Reason),
    /// Accepted: header word and payload.
    Accept(Box<HeaderRecord>, Vec<u8>),
}

impl Expect {
    /// The counter verdict (Accept for an accepted frame; Bypass is not a reason).
    pub fn reason(&self) -> Option<Reason> {
        match self {
            Expect::Bypass => None,
            Expect::Drop(r) => Some(*r),
            Expect::Accept(..) => Some(Reason::Accept),
        }
    }
}

fn be16(f: &[u8], at: usize) -> usize {
    usize::from(u16::from_be_bytes([f[at], f[at + 1]]))
}

/// The expected verdict for `frame` (`mac_bad`: the MAC flagged it).
pub fn expect(frame: &[u8], mac_bad: bool) -> Result<Expect, String> {
    let fl = frame.len();
    if fl > MAX_BEATS as usize * 8 {
        return Ok(Expect::Drop(Reason::Oversize));
    }
    if fl < 14 {
        return Ok(Expect::Bypass);
    }
    let vlan = be16(frame, 12) == usize::from(eth::ETHERTYPE_VLAN);
    let l3 = if vlan { 18 } else { 14 };
    if fl < l3 {
        return Ok(Expect::Bypass);
    }
    let et = be16(frame, l3 - 2);
    let v6 = et == usize::from(eth::ETHERTYPE_IPV6);
    let iph = if v6 { 40 } else { 20 };
    let udp_off = l3 + iph;
    // Whether the frame is RoCEv2 is known once the UDP destination port is in it (the wire
    // model's rule, `rnic_wire::locate`); one that ends before the UDP header does is a
    // truncated RoCEv2 frame.
    if fl < udp_off + 4 {
        return Ok(Expect::Bypass);
    }
    let ip_ok = (et == usize::from(eth::ETHERTYPE_IPV4) && frame[l3] == 0x45)
        || (v6 && frame[l3] >> 4 == 6);
    let proto = if v6 { frame[l3 + 6] } else { frame[l3 + 9] };
    if !ip_ok || proto != ipv4::PROTO_UDP || be16(frame, udp_off + 2) != usize::from(udp::ROCE_PORT)
    {
        return Ok(Expect::Bypass);
    }
    let len_field = if v6 {
        be16(frame, l3 + 4)
    } else {
        be16(frame, l3 + 2)
    };
    let ip_end = l3 + len_field + if v6 { 40 } else { 0 };
    let bth = udp_off + 8;
    if fl < ip_end || fl < bth {
        return Ok(Expect::Drop(Reason::Truncated));
    }
    if !v6 && (frame[l3 + 6] & 0x20 != 0 || be16(frame, l3 + 6) & 0x1FFF != 0) {
        return Ok(Expect::Drop(Reason::Fragment));
    }
    if !v6 && ipv4::checksum(&frame[l3..l3 + 20]) != 0 {
        return Ok(Expect::Drop(Reason::Checksum));
    }
    let udp_len = be16(frame, udp_off + 4);
    if ip_end < udp_off || udp_len != ip_end - udp_off || ip_end < bth + 16 {
        return Ok(Expect::Drop(Reason::Length));
    }
    if frame[bth + 1] & 0x0F != 0 {
        return Ok(Expect::Drop(Reason::Tver));
    }
    let Some(info) = opcode::lookup(frame[bth]) else {
        return Ok(Expect::Drop(Reason::Opcode));
    };
    let p = bth + 12 + info.ext_len();
    let icrc_off = ip_end - 4;
    if ip_end < p + 4
        || len_field % 4 != 0
        || (!info.payload && icrc_off != p)
        || (fl > ip_end && fl > MIN_FRAME as usize)
    {
        return Ok(Expect::Drop(Reason::Length));
    }
    let pad = usize::from(frame[bth + 1] >> 4 & 3);
    if pad > icrc_off - p {
        return Ok(Expect::Drop(Reason::Padcnt));
    }
    let pkt = RocePacket::parse(frame)
        .map_err(|e| format!("the model accepts a frame RocePacket::parse rejects: {e}"))?;
    if mac_bad || !pkt.icrc_ok() {
        return Ok(Expect::Drop(Reason::Icrc));
    }
    Ok(Expect::Accept(
        Box::new(record_of(&pkt)),
        pkt.payload().to_vec(),
    ))
}

/// The header word of a parsed packet, from its typed fields.
pub fn record_of(p: &RocePacket) -> HeaderRecord {
    let mut r = HeaderRecord::zero();
    r.set("payload_len", p.payload().len() as u64);
    r.set("DstMAC", p.eth.dst.to_u64());
    r.set("SrcMAC", p.eth.src.to_u64());
    if let Some(t) = p.eth.vlan {
        r.set("vlan", 1);
        r.set("PCP", t.pcp.into());
        r.set("DEI", t.dei.into());
        r.set("VID", t.vid.into());
    }
    match p.ip {
        IpParsed::V4(v) => {
            let x = v.repr;
            r.set("DSCP", x.dscp.into());
            r.set("ECN", x.ecn.into());
            r.set("TTL", x.ttl.into());
            r.set("Identification", x.ident.into());
            r.set("DF", x.dont_frag.into());
            r.set("Src4", u32::from(x.src).into());
            r.set("Dst4", u32::from(x.dst).into());
        }
        IpParsed::V6(v) => {
            let x = v.repr;
            r.set("v6", 1);
            r.set("DSCP", x.dscp.into());
            r.set("ECN", x.ecn.into());
            r.set("TTL", x.hop_limit.into());
            r.set("FlowLabel", x.flow_label.into());
            let (s, d) = (u128::from(x.src), u128::from(x.dst));
            r.set("SrcHi", (s >> 64) as u64);
            r.set("SrcLo", s as u64);
            r.set("DstHi", (d >> 64) as u64);
            r.set("DstLo", d as u64);
        }
    }
    r.set("SrcPort", p.udp.repr.src_port.into());
    r.set("DstPort", p.udp.repr.dst_port.into());
    r.set("UdpChecksum", p.udp.repr.checksum.into());
    let b = p.bth;
    r.set("OpCode", b.opcode.into());
    r.set("SE", b.solicited.into());
    r.set("MigReq", b.mig_req.into());
    r.set("PadCnt", p.pad_cnt.into());
    r.set("TVer", b.tver.into());
    r.set("P_Key", b.pkey.into());
    r.set("FECN", b.fecn.into());
    r.set("BECN", b.becn.into());
    r.set("Resv6", b.resv6.into());
    r.set("DestQP", b.dest_qp.into());
    r.set("AckReq", b.ack_req.into());
    r.set("Resv7", b.resv7.into());
    r.set("PSN", b.psn.into());
    let x = p.ext;
    if let Some(v) = x.reth {
        r.set("RETH.VA", v.va);
        r.set("RETH.R_Key", v.rkey.into());
        r.set("RETH.DMALength", v.dma_len.into());
    }
    if let Some(v) = x.aeth {
        r.set("AETH.Syndrome", v.syndrome.into());
        r.set("AETH.MSN", v.msn.into());
    }
    if let Some(v) = x.immdt {
        r.set("ImmDt", v.into());
    }
    if let Some(v) = x.ieth {
        r.set("IETH.R_Key", v.into());
    }
    if let Some(v) = x.atomic_eth {
        r.set("AtomicETH.VA", v.va);
        r.set("AtomicETH.R_Key", v.rkey.into());
        r.set("AtomicETH.SwapAdd", v.swap_add);
        r.set("AtomicETH.Compare", v.compare);
    }
    if let Some(v) = x.atomic_ack_eth {
        r.set("AtomicAckETH.Orig", v.orig);
    }
    if let Some(v) = x.deth {
        r.set("DETH.Q_Key", v.qkey.into());
        r.set("DETH.SrcQP", v.src_qp.into());
        r.set("DETH.Reserved", v.resv.into());
    }
    r
}

/// Ways to break a good frame, one drop reason each (the frame is otherwise fixed up, so that
/// exactly this reason applies: IPv4 checksum and ICRC recomputed after the change).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Break {
    /// Cut the frame short of its IP length.
    Truncate,
    /// Set IPv4 MF.
    Fragment,
    /// Corrupt the IPv4 header checksum.
    Checksum,
    /// UDP length one more than the IP length leaves.
    UdpLength,
    /// TVer = 1.
    Tver,
    /// An opcode no transport defines (0x15).
    Opcode,
    /// PadCnt 3 on a packet without payload.
    PadCnt,
    /// A flipped payload or header bit the ICRC covers.
    Icrc,
}

fn l3_of(f: &[u8]) -> usize {
    if be16(f, 12) == usize::from(eth::ETHERTYPE_VLAN) {
        18
    } else {
        14
    }
}

/// Recomputes the IPv4 checksum (if IPv4) and the ICRC of a frame whose IP packet fills it.
pub fn fix_up(f: &mut [u8]) {
    let l3 = l3_of(f);
    if f[l3] >> 4 == 4 {
        f[l3 + 10] = 0;
        f[l3 + 11] = 0;
        let c = ipv4::checksum(&f[l3..l3 + 20]);
        f[l3 + 10..l3 + 12].copy_from_slice(&c.to_be_bytes());
    }
    let _ = rnic_wire::icrc::fill(&mut f[l3..], l3);
}

/// Applies `b` to a good frame (built by `RoceFrame::build`, no Ethernet padding).
pub fn apply(f: &mut Vec<u8>, b: Break, rng: &mut crate::axis::Rng) {
    let l3 = l3_of(f);
    let v6 = f[l3] >> 4 == 6;
    let bth = l3 + if v6 { 40 } else { 20 } + 8;
    match b {
        Break::Truncate => {
            let cut = 1 + rng.below((f.len() - bth) as u64) as usize;
            f.truncate(f.len() - cut);
        }
        Break::Fragment => {
            f[l3 + 6] |= 0x20;
            fix_up(f);
        }
        Break::Checksum => {
            f[l3 + 11] ^= 1;
        }
        Break::UdpLength => {
            let u = l3 + if v6 { 40 } else { 20 } + 4;
            let v = (be16(f, u) + 1) as u16;
            f[u..u + 2].copy_from_slice(&v.to_be_bytes());
            fix_up(f);
        }
        Break::Tver => {
            f[bth + 1] = (f[bth + 1] & 0xF0) | 1;
            fix_up(f);
        }
        Break::Opcode => {
            f[bth] = 0x15;
            fix_up(f);
        }
        Break::PadCnt => {
            f[bth + 1] |= 0x30;
            fix_up(f);
        }
        Break::Icrc => {
            // A bit after the BTH (extension headers, payload, pad or the ICRC itself).
            let at = bth + 12 + rng.below((f.len() - bth - 12) as u64) as usize;
            f[at] ^= 1 << rng.below(8);
        }
    }
}

/// A frame that is not RoCEv2: ARP, UDP to another port, TCP, or IPv4 with options.
pub fn non_roce(rng: &mut crate::axis::Rng, base: &[u8]) -> Vec<u8> {
    let mut f = base.to_vec();
    let l3 = l3_of(&f);
    match rng.below(4) {
        0 => {
            let mut a = vec![0u8; 42];
            a[..12].copy_from_slice(&f[..12]);
            a[12..14].copy_from_slice(&eth::ETHERTYPE_ARP.to_be_bytes());
            for x in &mut a[14..] {
                *x = rng.next_u64() as u8;
            }
            return a;
        }
        1 => {
            let u = l3 + if f[l3] >> 4 == 6 { 40 } else { 20 };
            f[u + 2] ^= 0x40;
        }
        2 => {
            if f[l3] >> 4 == 6 {
                f[l3 + 6] = ipv4::PROTO_TCP;
            } else {
                f[l3 + 9] = ipv4::PROTO_TCP;
            }
        }
        _ => {
            if f[l3] >> 4 == 4 {
                f[l3] = 0x46;
            } else {
                f[l3 + 6] = 0; // hop-by-hop options
            }
        }
    }
    f
}

/// Random receive traffic: mostly good RoCEv2 frames of every opcode and shape (payloads up to
/// `max_payload`, some MAC-padded to 60 bytes), with broken frames of every kind, frames that
/// are not RoCEv2 and frames the MAC flagged.
pub fn rx_traffic(
    rng: &mut crate::axis::Rng,
    n: usize,
    max_payload: usize,
) -> Vec<(Vec<u8>, bool)> {
    const BREAKS: [Break; 8] = [
        Break::Truncate,
        Break::Fragment,
        Break::Checksum,
        Break::UdpLength,
        Break::Tver,
        Break::Opcode,
        Break::PadCnt,
        Break::Icrc,
    ];
    (0..n)
        .map(|_| {
            let desc = crate::icrc::random_frame(rng, max_payload);
            let mut f = desc.build().expect("random frames build");
            let roll = rng.below(100);
            let mut mac_bad = false;
            if roll < 20 {
                let b = BREAKS[rng.below(BREAKS.len() as u64) as usize];
                if !(b == Break::Fragment || b == Break::Checksum) || f[l3_of(&f)] >> 4 == 4 {
                    apply(&mut f, b, rng);
                }
            } else if roll < 28 {
                f = non_roce(rng, &f);
            } else if roll < 30 {
                mac_bad = true;
            }
            if rng.chance(0.5) {
                rnic_wire::pad_to_min(&mut f);
            }
            (f, mac_bad)
        })
        .collect()
}
