//! Packets in flight: the real frame bytes (what taps write, what the switch marks) with a
//! small side record of where the layers start, so that forwarding does not re-parse.

use std::net::Ipv4Addr;

use rnic_wire::bth::{self, BthRepr};
use rnic_wire::eth::{EthRepr, MacAddr};
use rnic_wire::ext::{ExtHeaders, Reth};
use rnic_wire::ipv4::{Ipv4Header, Ipv4Repr};
use rnic_wire::opcode::{self, Transport};
use rnic_wire::udp::{self, UdpRepr};
use rnic_wire::{IpRepr, RoceFrame, RocePacket};

/// Bytes a frame occupies on the wire besides its own: FCS 4, preamble and SFD 8, minimum
/// inter-frame gap 12.
pub const WIRE_OVERHEAD: u64 = 24;
/// Shortest Ethernet frame without FCS.
pub const MIN_FRAME: usize = 60;
/// DSCP of RoCEv2 data packets (NVIDIA's default traffic class 106 = DSCP 26 + ECT(0)).
pub const DATA_DSCP: u8 = 26;
/// ECN codepoints.
pub const ECN_NOT_ECT: u8 = 0b00;
/// ECT(0).
pub const ECN_ECT0: u8 = 0b10;
/// Congestion experienced.
pub const ECN_CE: u8 = 0b11;

/// What a packet is, as far as the simulator's endpoints care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An RC or UC data-carrying packet (WRITE, SEND, READ response...).
    Data,
    /// A congestion notification packet.
    Cnp,
    /// Anything else RoCEv2 (ACK, READ request...).
    Other,
}

/// Where the layers of a frame start, found once when the packet is created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// Unique per packet copy in one simulation (given by the simulator on injection).
    pub id: u64,
    /// Offset of the IP header (14, or 18 with a VLAN tag).
    pub ip_off: u16,
    /// Offset of the BTH.
    pub bth_off: u16,
    /// True for IPv4.
    pub ipv4: bool,
    pub kind: Kind,
    /// Payload bytes (without pad).
    pub payload_len: u32,
}

/// A frame in flight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// The Ethernet frame without FCS: the truth.
    pub frame: Vec<u8>,
    pub meta: Meta,
}

impl Packet {
    /// Wraps a frame, parsing it once with the wire model to locate its layers. This is how a
    /// Verilator NIC's output would enter the network.
    pub fn from_frame(frame: Vec<u8>) -> Result<Packet, rnic_wire::Error> {
        let p = RocePacket::parse(&frame)?;
        let kind = match p.opcode.transport {
            Transport::Cnp => Kind::Cnp,
            _ if p.opcode.payload => Kind::Data,
            _ => Kind::Other,
        };
        let meta = Meta {
            id: 0,
            ip_off: p.ip_offset as u16,
            bth_off: p.bth_offset as u16,
            ipv4: matches!(p.ip, rnic_wire::IpParsed::V4(_)),
            kind,
            payload_len: p.payload.len() as u32,
        };
        Ok(Packet { frame, meta })
    }

    /// Bytes this frame takes on the wire, with minimum-size padding, FCS, preamble and gap.
    pub fn wire_bytes(&self) -> u64 {
        self.frame.len().max(MIN_FRAME) as u64 + WIRE_OVERHEAD
    }

    /// Frame length (what queues count).
    pub fn len(&self) -> usize {
        self.frame.len()
    }

    /// True for an empty frame (never, for a parsed packet).
    pub fn is_empty(&self) -> bool {
        self.frame.is_empty()
    }

    /// The IPv4 destination, read from the bytes; `None` for IPv6.
    pub fn dst_ipv4(&self) -> Option<u32> {
        if !self.meta.ipv4 {
            return None;
        }
        let o = usize::from(self.meta.ip_off) + 16;
        let b = self.frame.get(o..o + 4)?;
        Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The IP ECN field, read from the bytes.
    pub fn ecn(&self) -> u8 {
        let o = usize::from(self.meta.ip_off);
        if self.meta.ipv4 {
            self.frame[o + 1] & 0b11
        } else {
            (self.frame[o + 1] >> 4) & 0b11
        }
    }

    /// Sets ECN to CE in the bytes and, for IPv4, recomputes the header checksum. Returns
    /// false (and changes nothing) when the packet is not ECN-capable (Not-ECT). The ICRC
    /// masks the ECN bits, so it stays valid.
    pub fn mark_ce(&mut self) -> bool {
        match self.ecn() {
            ECN_NOT_ECT => false,
            ECN_CE => true,
            _ => {
                let o = usize::from(self.meta.ip_off);
                if self.meta.ipv4 {
                    if let Ok(mut h) = Ipv4Header::new_checked(&mut self.frame[o..o + 20], o) {
                        h.set_ecn(ECN_CE);
                        h.fill_checksum();
                    }
                } else {
                    self.frame[o + 1] |= 0b11 << 4;
                }
                true
            }
        }
    }

    /// BTH opcode, from the bytes.
    pub fn opcode(&self) -> u8 {
        self.frame[usize::from(self.meta.bth_off)]
    }

    /// BTH destination QP, from the bytes.
    pub fn dest_qp(&self) -> u32 {
        let o = usize::from(self.meta.bth_off) + 5;
        u32::from_be_bytes([0, self.frame[o], self.frame[o + 1], self.frame[o + 2]])
    }

    /// BTH PSN, from the bytes.
    pub fn psn(&self) -> u32 {
        let o = usize::from(self.meta.bth_off) + 9;
        u32::from_be_bytes([0, self.frame[o], self.frame[o + 1], self.frame[o + 2]])
    }
}

/// A host's Ethernet and IPv4 address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostAddr {
    pub mac: MacAddr,
    pub ip: Ipv4Addr,
}

impl HostAddr {
    /// The address of host number `i`: MAC 02:00:00:00:xx:xx and IP 10.0.x.y (i + 1).
    pub fn host(i: u32) -> HostAddr {
        let n = i + 1;
        HostAddr {
            mac: MacAddr([0x02, 0, 0, 0, (n >> 8) as u8, n as u8]),
            ip: Ipv4Addr::new(10, 0, (n >> 8) as u8, n as u8),
        }
    }
}

/// UDP source port for a QP, spread as soft-RoCE does (0xC000 + 14 bits of the QPN).
pub fn udp_src_port(qpn: u32) -> u16 {
    0xC000 | (qpn & 0x3FFF) as u16
}

/// The description of a RoCEv2 frame from `src` to `dst` over IPv4.
#[allow(clippy::too_many_arguments)]
pub fn frame_desc(
    src: HostAddr,
    dst: HostAddr,
    dscp: u8,
    ecn: u8,
    udp_src: u16,
    bth: BthRepr,
    ext: ExtHeaders,
    payload: Vec<u8>,
) -> RoceFrame {
    RoceFrame {
        eth: EthRepr {
            dst: dst.mac,
            src: src.mac,
            vlan: None,
        },
        ip: IpRepr::V4(Ipv4Repr {
            src: src.ip,
            dst: dst.ip,
            dscp,
            ecn,
            ttl: 64,
            ident: 0,
            dont_frag: true,
        }),
        udp: UdpRepr {
            src_port: udp_src,
            dst_port: udp::ROCE_PORT,
            checksum: 0,
        },
        bth,
        ext,
        payload,
    }
}

/// One RDMA WRITE packet of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteSegment {
    /// Destination QP (the responder's QPN).
    pub dest_qp: u32,
    pub psn: u32,
    /// Byte offset of this packet in the message.
    pub offset: u64,
    /// Payload bytes in this packet.
    pub len: u32,
    /// Total message length (for RETH and to know the last packet).
    pub msg_len: u64,
    /// Remote virtual address of the message.
    pub va: u64,
    pub rkey: u32,
}

impl WriteSegment {
    /// The RC opcode: WRITE_ONLY, WRITE_FIRST, WRITE_MIDDLE or WRITE_LAST.
    pub fn opcode(&self) -> u8 {
        let first = self.offset == 0;
        let last = self.offset + u64::from(self.len) >= self.msg_len;
        match (first, last) {
            (true, true) => 0x0A,
            (true, false) => 0x06,
            (false, false) => 0x07,
            (false, true) => 0x08,
        }
    }

    /// Builds the frame with the wire model (ECT(0), DSCP 26, AckReq on the last packet, RETH
    /// on the first and only packets, zero payload).
    pub fn build(&self, src: HostAddr, dst: HostAddr, udp_src: u16) -> Packet {
        let op = self.opcode();
        let info = opcode::lookup(op).expect("WRITE opcodes are in the table");
        let mut ext = ExtHeaders::default();
        if info.has(opcode::Ext::Reth) {
            ext.reth = Some(Reth {
                va: self.va,
                rkey: self.rkey,
                dma_len: self.msg_len.min(u64::from(u32::MAX)) as u32,
            });
        }
        let bth = BthRepr {
            opcode: op,
            solicited: false,
            mig_req: false,
            tver: 0,
            pkey: bth::DEFAULT_PKEY,
            fecn: false,
            becn: false,
            dest_qp: self.dest_qp & 0xFF_FFFF,
            ack_req: op == 0x0A || op == 0x08,
            psn: self.psn & 0xFF_FFFF,
            resv6: 0,
            resv7: 0,
        };
        let desc = frame_desc(
            src,
            dst,
            DATA_DSCP,
            ECN_ECT0,
            udp_src,
            bth,
            ext,
            vec![0; self.len as usize],
        );
        let frame = desc
            .build()
            .expect("a WRITE description within range builds");
        let bth_off = 14 + 20 + 8;
        Packet {
            frame,
            meta: Meta {
                id: 0,
                ip_off: 14,
                bth_off: bth_off as u16,
                ipv4: true,
                kind: Kind::Data,
                payload_len: self.len,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(offset: u64, len: u32, msg_len: u64) -> WriteSegment {
        WriteSegment {
            dest_qp: 0x123,
            psn: 7,
            offset,
            len,
            msg_len,
            va: 0x1000,
            rkey: 0x55,
        }
    }

    #[test]
    fn write_frames_parse_with_valid_icrc_and_meta_matches_parser() {
        let (a, b) = (HostAddr::host(0), HostAddr::host(1));
        for (s, op) in [
            (seg(0, 1024, 1024), 0x0A),
            (seg(0, 1024, 3000), 0x06),
            (seg(1024, 1024, 3000), 0x07),
            (seg(2048, 952, 3000), 0x08),
        ] {
            let p = s.build(a, b, 0xC123);
            let parsed = RocePacket::parse(&p.frame).unwrap();
            assert!(parsed.icrc_ok());
            assert_eq!(parsed.bth.opcode, op);
            assert_eq!(parsed.payload.len(), s.len as usize);
            let again = Packet::from_frame(p.frame.clone()).unwrap();
            assert_eq!(again.meta, p.meta);
            assert_eq!(p.dest_qp(), 0x123);
            assert_eq!(p.psn(), 7);
            assert_eq!(p.ecn(), ECN_ECT0);
            assert_eq!(p.dst_ipv4(), Some(u32::from(Ipv4Addr::new(10, 0, 0, 2))));
        }
    }

    #[test]
    fn marking_sets_ce_fixes_checksum_keeps_icrc() {
        let mut p = seg(0, 100, 100).build(HostAddr::host(0), HostAddr::host(1), 1);
        let before = p.frame.clone();
        assert!(p.mark_ce());
        assert_eq!(p.ecn(), ECN_CE);
        // Only TOS (byte 15) and the checksum (bytes 24, 25) changed.
        let changed: Vec<usize> = (0..p.len()).filter(|&i| p.frame[i] != before[i]).collect();
        assert!(
            changed.iter().all(|i| [15, 24, 25].contains(i)),
            "{changed:?}"
        );
        let parsed = RocePacket::parse(&p.frame).unwrap();
        assert_eq!(parsed.ip.checksum_ok(), Some(true));
        assert!(parsed.icrc_ok());
        assert_eq!(parsed.ip.repr().dscp_ecn(), (DATA_DSCP, ECN_CE));
    }

    #[test]
    fn wire_bytes_counts_padding_and_overhead() {
        let p = seg(0, 0, 0).build(HostAddr::host(0), HostAddr::host(1), 1);
        // 14 + 20 + 8 + 12 + 16 (RETH) + 4 (ICRC) = 74 bytes, plus 24.
        assert_eq!(p.len(), 74);
        assert_eq!(p.wire_bytes(), 98);
    }
}
