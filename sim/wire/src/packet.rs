//! Whole RoCEv2 frames: the owned description [`RoceFrame`] with its builder, and the parsed
//! view [`RocePacket`] that locates every layer of a received frame.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::bth::{self, BthHeader, BthRepr};
use crate::eth::{self, EthRepr};
use crate::ext::*;
use crate::ipv4::{self, Ipv4Parsed, Ipv4Repr};
use crate::ipv6::{self, Ipv6Parsed, Ipv6Repr};
use crate::opcode::{self, Ext, OpcodeInfo};
use crate::udp::{self, UdpParsed, UdpRepr};
use crate::{BuildError, Error, ErrorKind, Layer, icrc};

/// The network layer of a RoCEv2 frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IpRepr {
    V4(Ipv4Repr),
    V6(Ipv6Repr),
}

impl IpRepr {
    pub fn header_len(&self) -> usize {
        match self {
            IpRepr::V4(_) => ipv4::LAYOUT.len,
            IpRepr::V6(_) => ipv6::LAYOUT.len,
        }
    }

    pub fn ethertype(&self) -> u16 {
        match self {
            IpRepr::V4(_) => eth::ETHERTYPE_IPV4,
            IpRepr::V6(_) => eth::ETHERTYPE_IPV6,
        }
    }

    /// (DSCP, ECN).
    pub fn dscp_ecn(&self) -> (u8, u8) {
        match self {
            IpRepr::V4(r) => (r.dscp, r.ecn),
            IpRepr::V6(r) => (r.dscp, r.ecn),
        }
    }
}

/// A complete description of one RoCEv2 frame: every header field a sender chooses, the
/// extension-header values and the payload. Lengths, PadCnt, pad bytes, the IPv4 checksum and
/// the ICRC are derived by [`RoceFrame::build`]; [`RocePacket::repr`] returns the same
/// description from a frame.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoceFrame {
    pub eth: EthRepr,
    pub ip: IpRepr,
    pub udp: UdpRepr,
    pub bth: BthRepr,
    #[serde(flatten)]
    pub ext: ExtHeaders,
    /// The payload without pad bytes.
    #[serde(with = "hex_bytes")]
    pub payload: Vec<u8>,
}

fn check(field: &'static str, value: u64, max: u64) -> Result<(), BuildError> {
    if value > max {
        Err(BuildError::OutOfRange { field, value, max })
    } else {
        Ok(())
    }
}

impl RoceFrame {
    /// The opcode's table row, or an error for an unknown opcode.
    pub fn opcode(&self) -> Result<&'static OpcodeInfo, BuildError> {
        opcode::lookup(self.bth.opcode).ok_or(BuildError::UnknownOpcode(self.bth.opcode))
    }

    /// Checks that every value fits its field and that the extension headers are exactly the
    /// ones the opcode carries.
    pub fn validate(&self) -> Result<&'static OpcodeInfo, BuildError> {
        if let Some(tag) = self.eth.vlan {
            check("VLAN PCP", tag.pcp.into(), eth::PCP.max())?;
            check("VLAN VID", tag.vid.into(), eth::VID.max())?;
        }
        let (dscp, ecn) = self.ip.dscp_ecn();
        check("DSCP", dscp.into(), ipv4::DSCP.max())?;
        check("ECN", ecn.into(), ipv4::ECN.max())?;
        if let IpRepr::V6(r) = &self.ip {
            check(
                "IPv6 flow label",
                r.flow_label.into(),
                ipv6::FLOW_LABEL.max(),
            )?;
        }
        check("BTH TVer", self.bth.tver.into(), bth::TVER.max())?;
        check("BTH DestQP", self.bth.dest_qp.into(), bth::DEST_QP.max())?;
        check("BTH PSN", self.bth.psn.into(), bth::PSN.max())?;
        check("BTH Resv6", self.bth.resv6.into(), bth::RESV6.max())?;
        check("BTH Resv7", self.bth.resv7.into(), bth::RESV7.max())?;
        if let Some(a) = self.ext.aeth {
            check("AETH MSN", a.msn.into(), AETH_MSN.max())?;
        }
        if let Some(d) = self.ext.deth {
            check("DETH SrcQP", d.src_qp.into(), DETH_SRC_QP.max())?;
        }
        let info = self.opcode()?;
        let present = [
            (Ext::Reth, self.ext.reth.is_some(), Layer::Reth),
            (Ext::Aeth, self.ext.aeth.is_some(), Layer::Aeth),
            (Ext::ImmDt, self.ext.immdt.is_some(), Layer::ImmDt),
            (Ext::Ieth, self.ext.ieth.is_some(), Layer::Ieth),
            (
                Ext::AtomicEth,
                self.ext.atomic_eth.is_some(),
                Layer::AtomicEth,
            ),
            (
                Ext::AtomicAckEth,
                self.ext.atomic_ack_eth.is_some(),
                Layer::AtomicAckEth,
            ),
            (Ext::Deth, self.ext.deth.is_some(), Layer::Deth),
        ];
        for (ext, has, header) in present {
            let opcode = info.code;
            match (info.has(ext), has) {
                (true, false) => return Err(BuildError::MissingHeader { opcode, header }),
                (false, true) => return Err(BuildError::ExtraHeader { opcode, header }),
                _ => {}
            }
        }
        if !info.payload && !self.payload.is_empty() {
            return Err(BuildError::UnexpectedPayload {
                opcode: info.code,
                len: self.payload.len(),
            });
        }
        Ok(info)
    }

    /// PadCnt of this frame.
    pub fn pad_cnt(&self) -> u8 {
        bth::pad_cnt_for(self.payload.len())
    }

    /// Length of the IP packet (IP header to ICRC inclusive).
    pub fn ip_len(&self, info: &OpcodeInfo) -> usize {
        self.ip.header_len()
            + udp::LAYOUT.len
            + bth::LAYOUT.len
            + info.ext_len()
            + self.payload.len()
            + usize::from(self.pad_cnt())
            + icrc::LEN
    }

    /// Builds the frame: Ethernet (and tag), IP with lengths (and IPv4 checksum), UDP with
    /// length and checksum 0, BTH with PadCnt, extension headers, payload, zero pad bytes and
    /// the ICRC. No Ethernet minimum-size padding is added (see [`pad_to_min`]); no FCS.
    pub fn build(&self) -> Result<Vec<u8>, BuildError> {
        let info = self.validate()?;
        let ip_len = self.ip_len(info);
        // The 16-bit length field: IPv4's counts the whole packet, IPv6's the payload only.
        let len_field = match self.ip {
            IpRepr::V4(_) => ip_len,
            IpRepr::V6(_) => ip_len - ipv6::LAYOUT.len,
        };
        if len_field > usize::from(u16::MAX) {
            return Err(BuildError::TooLong { len: ip_len });
        }
        let l3 = self.eth.header_len();
        let mut f = vec![0u8; l3 + ip_len];
        self.eth.emit(&mut f, self.ip.ethertype());
        let l4 = l3 + self.ip.header_len();
        let udp_len = (ip_len - self.ip.header_len()) as u16;
        match &self.ip {
            IpRepr::V4(r) => r.emit(&mut f[l3..], ipv4::PROTO_UDP, ip_len as u16),
            IpRepr::V6(r) => r.emit(&mut f[l3..], ipv4::PROTO_UDP, udp_len),
        }
        self.udp.emit(&mut f[l4..], udp_len);
        let b = l4 + udp::LAYOUT.len;
        self.bth.emit(&mut f[b..], self.pad_cnt());
        let mut at = b + bth::LAYOUT.len;
        for &h in info.headers {
            self.emit_ext(h, &mut f[at..]);
            at += h.wire_len();
        }
        f[at..at + self.payload.len()].copy_from_slice(&self.payload);
        // Pad bytes are already zero.
        icrc::fill(&mut f[l3..], l3).expect("a built packet holds all headers");
        Ok(f)
    }

    fn emit_ext(&self, h: Ext, buf: &mut [u8]) {
        let x = &self.ext;
        match h {
            Ext::Reth => {
                let r = x.reth.expect("validated");
                let mut v = RethHeader::new_checked(buf, 0).expect("sized by the table");
                v.set_va(r.va);
                v.set_rkey(r.rkey);
                v.set_dma_len(r.dma_len);
            }
            Ext::Aeth => {
                let a = x.aeth.expect("validated");
                let mut v = AethHeader::new_checked(buf, 0).expect("sized by the table");
                v.set_syndrome(a.syndrome);
                v.set_msn(a.msn);
            }
            Ext::ImmDt => {
                let mut v = ImmDtHeader::new_checked(buf, 0).expect("sized by the table");
                v.set_imm(x.immdt.expect("validated"));
            }
            Ext::Ieth => {
                let mut v = IethHeader::new_checked(buf, 0).expect("sized by the table");
                v.set_rkey(x.ieth.expect("validated"));
            }
            Ext::AtomicEth => {
                let a = x.atomic_eth.expect("validated");
                let mut v = AtomicEthHeader::new_checked(buf, 0).expect("sized by the table");
                v.set_va(a.va);
                v.set_rkey(a.rkey);
                v.set_swap_add(a.swap_add);
                v.set_compare(a.compare);
            }
            Ext::AtomicAckEth => {
                let a = x.atomic_ack_eth.expect("validated");
                let mut v = AtomicAckEthHeader::new_checked(buf, 0).expect("sized by the table");
                v.set_orig(a.orig);
            }
            Ext::Deth => {
                let d = x.deth.expect("validated");
                let mut v = DethHeader::new_checked(buf, 0).expect("sized by the table");
                v.set_qkey(d.qkey);
                v.set_resv(d.resv);
                v.set_src_qp(d.src_qp);
            }
            Ext::Cnp => {} // 16 zero bytes
        }
    }
}

/// Pads a frame with zeros to the Ethernet minimum of 60 bytes (64 with the FCS), as a sending
/// MAC does.
pub fn pad_to_min(frame: &mut Vec<u8>) {
    if frame.len() < 60 {
        frame.resize(60, 0);
    }
}

/// Where a frame's RoCEv2 packet lies, as far as the headers say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoceLocation {
    /// Offset of the IP header.
    pub ip_offset: usize,
    /// End of the IP packet by its length field; beyond the frame when the frame is truncated.
    pub ip_end: usize,
    /// The UDP destination port that matched.
    pub dst_port: u16,
}

impl RoceLocation {
    /// The IP packet as far as the frame holds it.
    pub fn ip_packet<'a>(&self, frame: &'a [u8]) -> &'a [u8] {
        &frame[self.ip_offset.min(frame.len())..self.ip_end.min(frame.len())]
    }

    /// True when the frame is shorter than its IP length.
    pub fn truncated(&self, frame: &[u8]) -> bool {
        self.ip_end > frame.len()
    }
}

/// Decides whether a frame is RoCEv2 by the lenient rule a capture tool uses: Ethernet (with at
/// most one tag), IPv4 or IPv6, protocol UDP, destination port in `ports`. It reads only what it
/// needs to decide, so a RoCEv2 frame that is malformed further in is still found (and
/// [`RocePacket::parse`] then says what is wrong with it).
pub fn locate(frame: &[u8], ports: &[u16]) -> Option<RoceLocation> {
    let e = EthRepr::parse(frame).ok()?;
    let l3 = e.payload_offset;
    let ip = &frame[l3..];
    let (l4, ip_end) = match e.ethertype {
        eth::ETHERTYPE_IPV4 if ip.len() >= 20 && ip[0] >> 4 == 4 => {
            if ip[9] != ipv4::PROTO_UDP {
                return None;
            }
            let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
            (l3 + usize::from(ip[0] & 0x0F) * 4, l3 + total)
        }
        eth::ETHERTYPE_IPV6 if ip.len() >= 40 && ip[0] >> 4 == 6 => {
            if ip[6] != ipv4::PROTO_UDP {
                return None;
            }
            let payload = usize::from(u16::from_be_bytes([ip[4], ip[5]]));
            (l3 + 40, l3 + 40 + payload)
        }
        _ => return None,
    };
    let port = frame.get(l4 + 2..l4 + 4)?;
    let dst_port = u16::from_be_bytes([port[0], port[1]]);
    ports.contains(&dst_port).then_some(RoceLocation {
        ip_offset: l3,
        ip_end,
        dst_port,
    })
}

/// The parsed network layer of a received frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpParsed {
    V4(Ipv4Parsed),
    V6(Ipv6Parsed),
}

impl IpParsed {
    pub fn repr(&self) -> IpRepr {
        match self {
            IpParsed::V4(p) => IpRepr::V4(p.repr),
            IpParsed::V6(p) => IpRepr::V6(p.repr),
        }
    }

    /// IPv4 header checksum verdict; `None` for IPv6, which has none.
    pub fn checksum_ok(&self) -> Option<bool> {
        match self {
            IpParsed::V4(p) => Some(p.checksum_ok),
            IpParsed::V6(_) => None,
        }
    }
}

/// A received RoCEv2 frame with every layer located. Created by [`RocePacket::parse`], which
/// checks structure and lengths; the ICRC and the IPv4 checksum are reported, not enforced.
#[derive(Clone, Debug)]
pub struct RocePacket<'a> {
    /// The whole frame as received (it may end in Ethernet padding after the IP packet).
    pub frame: &'a [u8],
    pub eth: EthRepr,
    pub ip: IpParsed,
    pub udp: UdpParsed,
    pub bth: BthRepr,
    pub pad_cnt: u8,
    pub opcode: &'static OpcodeInfo,
    pub ext: ExtHeaders,
    /// Offsets in `frame`.
    pub ip_offset: usize,
    pub udp_offset: usize,
    pub bth_offset: usize,
    /// The payload without pad bytes.
    pub payload: Range<usize>,
    /// Start of the ICRC; the IP packet ends 4 bytes later.
    pub icrc_offset: usize,
}

impl<'a> RocePacket<'a> {
    /// Parses a RoCEv2 frame. It does not look at the UDP destination port (the caller decides
    /// what counts as RoCEv2); it rejects anything malformed with an error naming the layer and
    /// offset: truncation, lengths that disagree, a non-UDP protocol, TVer other than 0, an
    /// unknown opcode, or a PadCnt larger than the payload.
    pub fn parse(frame: &'a [u8]) -> Result<Self, Error> {
        let e = EthRepr::parse(frame)?;
        let l3 = e.payload_offset;
        let rest = &frame[l3..];
        let (ip, l4, ip_end) = match e.ethertype {
            eth::ETHERTYPE_IPV4 => {
                let p = Ipv4Repr::parse(rest, l3)?;
                if p.protocol != ipv4::PROTO_UDP {
                    return Err(not_udp(Layer::Ipv4, l3, p.protocol));
                }
                (IpParsed::V4(p), l3 + 20, l3 + usize::from(p.total_len))
            }
            eth::ETHERTYPE_IPV6 => {
                let p = Ipv6Repr::parse(rest, l3)?;
                if p.next_header != ipv4::PROTO_UDP {
                    return Err(not_udp(Layer::Ipv6, l3, p.next_header));
                }
                (
                    IpParsed::V6(p),
                    l3 + 40,
                    l3 + 40 + usize::from(p.payload_len),
                )
            }
            other => {
                return Err(Error::unsupported(
                    Layer::Ethernet,
                    l3 - 2,
                    format!("EtherType {other:#06x} is not IPv4 or IPv6"),
                ));
            }
        };
        let udp = UdpRepr::parse(&frame[l4..ip_end], l4)?;
        let b = l4 + udp::LAYOUT.len;
        let bth_view = BthHeader::new_checked(&frame[b..ip_end], b)?;
        let bth_repr = BthRepr::parse(&bth_view);
        if bth_repr.tver != 0 {
            return Err(Error::new(
                Layer::Bth,
                b + 1,
                ErrorKind::BadField {
                    field: "TVer",
                    value: bth_repr.tver.into(),
                },
            ));
        }
        let info = opcode::lookup(bth_repr.opcode).ok_or(Error::new(
            Layer::Bth,
            b,
            ErrorKind::UnknownOpcode(bth_repr.opcode),
        ))?;
        let mut at = b + bth::LAYOUT.len;
        let mut ext = ExtHeaders::default();
        for &h in info.headers {
            let avail = ip_end.saturating_sub(at + icrc::LEN);
            if avail < h.wire_len() {
                return Err(Error::truncated(
                    h.layer(),
                    at,
                    h.wire_len() + icrc::LEN,
                    ip_end - at,
                ));
            }
            let buf = &frame[at..at + h.wire_len()];
            parse_ext(h, buf, at, &mut ext)?;
            at += h.wire_len();
        }
        if ip_end < at + icrc::LEN {
            return Err(Error::truncated(Layer::Icrc, at, icrc::LEN, ip_end - at));
        }
        let icrc_offset = ip_end - icrc::LEN;
        let pad_cnt = bth_view.pad_cnt();
        let body = icrc_offset - at;
        if !info.payload && body != 0 {
            return Err(Error::new(
                Layer::Payload,
                at,
                ErrorKind::LengthMismatch(format!(
                    "{info} carries no payload, but {body} bytes precede the ICRC"
                )),
            ));
        }
        if usize::from(pad_cnt) > body {
            return Err(Error::new(
                Layer::Bth,
                b + 1,
                ErrorKind::LengthMismatch(format!(
                    "PadCnt {pad_cnt} exceeds the {body} bytes of payload"
                )),
            ));
        }
        Ok(RocePacket {
            frame,
            eth: e.repr,
            ip,
            udp,
            bth: bth_repr,
            pad_cnt,
            opcode: info,
            ext,
            ip_offset: l3,
            udp_offset: l4,
            bth_offset: b,
            payload: at..icrc_offset - usize::from(pad_cnt),
            icrc_offset,
        })
    }

    /// The IP packet, header to ICRC inclusive.
    pub fn ip_packet(&self) -> &'a [u8] {
        &self.frame[self.ip_offset..self.icrc_offset + icrc::LEN]
    }

    /// The payload bytes (without pad).
    pub fn payload(&self) -> &'a [u8] {
        &self.frame[self.payload.clone()]
    }

    /// The pad bytes between payload and ICRC.
    pub fn pad(&self) -> &'a [u8] {
        &self.frame[self.payload.end..self.icrc_offset]
    }

    /// Bytes after the IP packet (Ethernet minimum-size padding).
    pub fn trailer(&self) -> &'a [u8] {
        &self.frame[self.icrc_offset + icrc::LEN..]
    }

    /// The ICRC as carried in the frame.
    pub fn icrc_wire(&self) -> u32 {
        icrc::wire(self.ip_packet()).expect("parse checked the length")
    }

    /// The ICRC computed over the frame.
    pub fn icrc_computed(&self) -> u32 {
        icrc::compute(self.ip_packet(), self.ip_offset).expect("parse checked the length")
    }

    pub fn icrc_ok(&self) -> bool {
        self.icrc_wire() == self.icrc_computed()
    }

    /// The description of this frame; building it gives the frame back (without any Ethernet
    /// padding).
    pub fn repr(&self) -> RoceFrame {
        RoceFrame {
            eth: self.eth,
            ip: self.ip.repr(),
            udp: self.udp.repr,
            bth: self.bth,
            ext: self.ext,
            payload: self.payload().to_vec(),
        }
    }
}

fn not_udp(layer: Layer, offset: usize, proto: u8) -> Error {
    Error::unsupported(
        layer,
        offset,
        format!("next protocol {proto} is not UDP (IPv6 extension headers are not supported)"),
    )
}

fn parse_ext(h: Ext, buf: &[u8], at: usize, ext: &mut ExtHeaders) -> Result<(), Error> {
    match h {
        Ext::Reth => {
            let v = RethHeader::new_checked(buf, at)?;
            ext.reth = Some(Reth {
                va: v.va(),
                rkey: v.rkey(),
                dma_len: v.dma_len(),
            });
        }
        Ext::Aeth => {
            let v = AethHeader::new_checked(buf, at)?;
            ext.aeth = Some(Aeth {
                syndrome: v.syndrome(),
                msn: v.msn(),
            });
        }
        Ext::ImmDt => ext.immdt = Some(ImmDtHeader::new_checked(buf, at)?.imm()),
        Ext::Ieth => ext.ieth = Some(IethHeader::new_checked(buf, at)?.rkey()),
        Ext::AtomicEth => {
            let v = AtomicEthHeader::new_checked(buf, at)?;
            ext.atomic_eth = Some(AtomicEth {
                va: v.va(),
                rkey: v.rkey(),
                swap_add: v.swap_add(),
                compare: v.compare(),
            });
        }
        Ext::AtomicAckEth => {
            ext.atomic_ack_eth = Some(AtomicAckEth {
                orig: AtomicAckEthHeader::new_checked(buf, at)?.orig(),
            });
        }
        Ext::Deth => {
            let v = DethHeader::new_checked(buf, at)?;
            ext.deth = Some(Deth {
                qkey: v.qkey(),
                src_qp: v.src_qp(),
                resv: v.resv(),
            });
        }
        Ext::Cnp => {}
    }
    Ok(())
}

/// Hex strings for byte vectors in serde formats.
mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        let mut out = String::with_capacity(v.len() * 2);
        for b in v {
            out.push_str(&format!("{b:02x}"));
        }
        s.serialize_str(&out)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        crate::parse_hex(&s).map_err(serde::de::Error::custom)
    }
}
