//! Test harness: two model NICs, A (10.0.0.1) and B (10.0.0.2), each with one PD, one CQ and
//! one RC QP connected to the other's, joined by a wire with a fixed one-way latency and a
//! deterministic clock. Time only moves to the next frame arrival or the next timer deadline
//! either NIC reports, so every run is reproducible.
//!
//! Every frame put on the wire is parsed with `rnic_wire::RocePacket::parse` and kept in
//! [`Pair::wire`] with its time and direction. A test may install a [`Filter`] that drops,
//! duplicates or replaces chosen frames, or inject hand-built frames straight into B
//! ([`Pair::inject`]) to drive the responder without A's requester.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr};

use rnic_transport::ops::RC_READ_REQUEST;
use rnic_transport::*;
use rnic_wire::bth::BthRepr;
use rnic_wire::eth::EthRepr;
use rnic_wire::ext::{ExtHeaders, Reth};
use rnic_wire::ipv4::Ipv4Repr;
use rnic_wire::udp::{ROCE_PORT, UdpRepr};
use rnic_wire::{IpRepr, MacAddr, RoceFrame, RocePacket};

pub const MAC_A: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x0A]);
pub const MAC_B: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x0B]);
pub const IP_A: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
pub const IP_B: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

/// Every right an MR can have.
pub const ALL: Access = Access(
    Access::LOCAL_WRITE.0
        | Access::REMOTE_WRITE.0
        | Access::REMOTE_READ.0
        | Access::REMOTE_ATOMIC.0,
);
/// The three remote rights a QP can enable.
pub const REMOTE_ALL: Access =
    Access(Access::REMOTE_WRITE.0 | Access::REMOTE_READ.0 | Access::REMOTE_ATOMIC.0);

/// Direction of a frame on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    AtoB,
    BtoA,
}

/// What the wire does with one frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fate {
    Pass,
    Drop,
    /// Delivered this many times, back to back.
    Repeat(usize),
    /// These bytes are delivered instead.
    Replace(Vec<u8>),
}

/// Decides the fate of each frame as it is sent.
pub type Filter = Box<dyn FnMut(Dir, &RoceFrame) -> Fate>;

/// Drops the first `times` frames in `dir` that match `pred`; everything else passes.
pub fn drop_first(dir: Dir, times: usize, pred: impl Fn(&RoceFrame) -> bool + 'static) -> Filter {
    let mut left = times;
    Box::new(move |d, f| {
        if d == dir && left > 0 && pred(f) {
            left -= 1;
            Fate::Drop
        } else {
            Fate::Pass
        }
    })
}

/// One frame that went on the wire.
#[derive(Clone, Debug)]
pub struct Wired {
    /// When it was sent (ns).
    pub t: u64,
    pub dir: Dir,
    pub frame: RoceFrame,
    pub fate: Fate,
}

impl Wired {
    pub fn psn(&self) -> u32 {
        self.frame.bth.psn
    }
    pub fn opcode(&self) -> u8 {
        self.frame.bth.opcode
    }
    pub fn syndrome(&self) -> Option<u8> {
        self.frame.ext.aeth.map(|a| a.syndrome)
    }
}

/// QP settings used for both QPs of a pair.
#[derive(Clone, Debug)]
pub struct Cfg {
    pub mtu: Mtu,
    /// A's first send PSN (B's expected PSN) and B's.
    pub psn_a: u32,
    pub psn_b: u32,
    pub timeout: u8,
    pub retry_cnt: u8,
    pub rnr_retry: u8,
    pub min_rnr_timer: u8,
    /// Remote rights enabled on both QPs.
    pub access: Access,
    pub max_rd_atomic: u8,
    pub ack_every: u32,
    /// One-way latency of the wire (ns).
    pub latency: u64,
}

impl Default for Cfg {
    /// rdma-core's test defaults (rc-transport.md), with PSNs that differ per side so that a
    /// mix-up shows.
    fn default() -> Cfg {
        Cfg {
            mtu: Mtu::M1024,
            psn_a: 0x1000,
            psn_b: 0x2000,
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            min_rnr_timer: 12,
            access: REMOTE_ALL,
            max_rd_atomic: 1,
            ack_every: 64,
            latency: 1_000,
        }
    }
}

/// One NIC of the pair with its PD, CQ and connected QP.
pub struct Side {
    pub nic: Nic,
    pub pd: Pd,
    pub cq: usize,
    pub qpn: u32,
    next_va: u64,
}

impl Side {
    fn new(mac: MacAddr, ip: Ipv4Addr, ack_every: u32) -> Side {
        let mut c = NicConfig::new(mac, IpAddr::V4(ip));
        c.ack_every = ack_every;
        let mut nic = Nic::new(c);
        let pd = nic.alloc_pd();
        let cq = nic.create_cq(4096).unwrap();
        let qpn = nic.create_qp(&QpInit::new(QpType::Rc, pd, cq)).unwrap();
        Side {
            nic,
            pd,
            cq,
            qpn,
            next_va: 0x10_0000,
        }
    }

    /// Registers a zeroed MR of `len` bytes in the side's PD.
    pub fn reg(&mut self, len: u64, access: Access) -> MrInfo {
        let pd = self.pd;
        self.reg_in(pd, len, access)
    }

    /// Registers a zeroed MR in `pd`, at a fresh virtual address.
    pub fn reg_in(&mut self, pd: Pd, len: u64, access: Access) -> MrInfo {
        let va = self.next_va;
        self.next_va += (len + 0xFFFF) & !0xFFF;
        self.nic
            .reg_mr(MrSpec {
                pd,
                va,
                len,
                access,
                key: None,
            })
            .unwrap()
    }

    /// Registers an MR holding `data`.
    pub fn reg_with(&mut self, data: &[u8], access: Access) -> MrInfo {
        let mr = self.reg(data.len() as u64, access);
        self.set(mr.lkey, 0, data);
        mr
    }

    pub fn set(&mut self, key: u32, offset: usize, data: &[u8]) {
        self.nic.mr_bytes_mut(key).unwrap()[offset..offset + data.len()].copy_from_slice(data);
    }

    pub fn mem(&self, key: u32) -> Vec<u8> {
        self.nic.mr_bytes(key).unwrap().to_vec()
    }

    pub fn post_send(&mut self, wr: SendWr) {
        let q = self.qpn;
        self.nic.post_send(q, wr).unwrap();
    }

    pub fn post_recv(&mut self, wr: RecvWr) {
        let q = self.qpn;
        self.nic.post_recv(q, wr).unwrap();
    }

    /// Takes every completion of the side's CQ.
    pub fn wcs(&mut self) -> Vec<WorkCompletion> {
        let cq = self.cq;
        self.nic.poll_cq(cq, usize::MAX)
    }

    pub fn state(&self) -> QpState {
        self.nic.qp(self.qpn).unwrap().state()
    }

    pub fn qp(&self) -> &Qp {
        self.nic.qp(self.qpn).unwrap()
    }
}

/// The attributes of a connection from `sip` to `dip` under `cfg`.
pub fn conn_attr(cfg: &Cfg, sip: Ipv4Addr, dip: Ipv4Addr, dmac: MacAddr, dest_qpn: u32) -> QpAttr {
    QpAttr {
        access: cfg.access,
        av: Some(AddressVector::new(dmac, IpAddr::V4(sip), IpAddr::V4(dip))),
        path_mtu: cfg.mtu,
        timeout: cfg.timeout,
        retry_cnt: cfg.retry_cnt,
        rnr_retry: cfg.rnr_retry,
        min_rnr_timer: cfg.min_rnr_timer,
        max_rd_atomic: cfg.max_rd_atomic,
        max_dest_rd_atomic: cfg.max_rd_atomic,
        dest_qpn,
        ..Default::default()
    }
}

/// The RC masks of RESET -> INIT, INIT -> RTR and RTR -> RTS (the kernel's required sets).
pub const INIT_MASK: AttrMask = AttrMask(
    AttrMask::STATE.0 | AttrMask::PKEY_INDEX.0 | AttrMask::PORT.0 | AttrMask::ACCESS_FLAGS.0,
);
pub const RTR_MASK: AttrMask = AttrMask(
    AttrMask::STATE.0
        | AttrMask::AV.0
        | AttrMask::PATH_MTU.0
        | AttrMask::DEST_QPN.0
        | AttrMask::RQ_PSN.0
        | AttrMask::MAX_DEST_RD_ATOMIC.0
        | AttrMask::MIN_RNR_TIMER.0,
);
pub const RTS_MASK: AttrMask = AttrMask(
    AttrMask::STATE.0
        | AttrMask::SQ_PSN.0
        | AttrMask::TIMEOUT.0
        | AttrMask::RETRY_CNT.0
        | AttrMask::RNR_RETRY.0
        | AttrMask::MAX_QP_RD_ATOMIC.0,
);

/// Moves an RC QP through RESET -> INIT -> RTR (-> RTS when `rts`).
pub fn bring_up(nic: &mut Nic, qpn: u32, attr: &QpAttr, rts: bool) {
    let mut a = attr.clone();
    for (state, mask) in [
        (QpState::Init, INIT_MASK),
        (QpState::Rtr, RTR_MASK),
        (QpState::Rts, RTS_MASK),
    ] {
        if state == QpState::Rts && !rts {
            break;
        }
        a.state = state;
        nic.modify_qp(qpn, &a, mask).unwrap();
    }
}

/// Two NICs with a connected RC QP each, and the wire between them.
pub struct Pair {
    pub a: Side,
    pub b: Side,
    pub cfg: Cfg,
    /// The simulated time (ns).
    pub now: u64,
    /// Every frame sent so far, in order.
    pub wire: Vec<Wired>,
    in_flight: VecDeque<(u64, Dir, Vec<u8>)>,
    filter: Option<Filter>,
}

impl Pair {
    pub fn new(cfg: Cfg) -> Pair {
        let mut a = Side::new(MAC_A, IP_A, cfg.ack_every);
        let mut b = Side::new(MAC_B, IP_B, cfg.ack_every);
        let mut at = conn_attr(&cfg, IP_A, IP_B, MAC_B, b.qpn);
        at.sq_psn = cfg.psn_a;
        at.rq_psn = cfg.psn_b;
        let mut bt = conn_attr(&cfg, IP_B, IP_A, MAC_A, a.qpn);
        bt.sq_psn = cfg.psn_b;
        bt.rq_psn = cfg.psn_a;
        bring_up(&mut a.nic, a.qpn, &at, true);
        bring_up(&mut b.nic, b.qpn, &bt, true);
        Pair {
            a,
            b,
            cfg,
            now: 0,
            wire: Vec::new(),
            in_flight: VecDeque::new(),
            filter: None,
        }
    }

    pub fn with_defaults() -> Pair {
        Pair::new(Cfg::default())
    }

    pub fn set_filter(&mut self, f: Filter) {
        self.filter = Some(f);
    }

    pub fn clear_filter(&mut self) {
        self.filter = None;
    }

    /// Polls both NICs at `now` and puts what they send on the wire.
    fn transmit(&mut self) {
        for dir in [Dir::AtoB, Dir::BtoA] {
            let frames = match dir {
                Dir::AtoB => self.a.nic.poll(self.now),
                Dir::BtoA => self.b.nic.poll(self.now),
            };
            for bytes in frames {
                self.put(dir, bytes);
            }
        }
    }

    fn put(&mut self, dir: Dir, bytes: Vec<u8>) {
        let frame = RocePacket::parse(&bytes)
            .unwrap_or_else(|e| panic!("the model sent a frame the wire model rejects: {e}"))
            .repr();
        let fate = match &mut self.filter {
            Some(f) => f(dir, &frame),
            None => Fate::Pass,
        };
        let at = self.now + self.cfg.latency;
        match &fate {
            Fate::Pass => self.in_flight.push_back((at, dir, bytes)),
            Fate::Drop => {}
            Fate::Repeat(n) => {
                for _ in 0..*n {
                    self.in_flight.push_back((at, dir, bytes.clone()));
                }
            }
            Fate::Replace(other) => self.in_flight.push_back((at, dir, other.clone())),
        }
        self.wire.push(Wired {
            t: self.now,
            dir,
            frame,
            fate,
        });
    }

    /// Runs until nothing is in flight and no timer is armed, or until time `limit`.
    pub fn run_until(&mut self, limit: u64) {
        for _ in 0..1_000_000 {
            self.transmit();
            let frame_t = self.in_flight.front().map(|f| f.0);
            let timer_t = [self.a.nic.next_deadline(), self.b.nic.next_deadline()]
                .into_iter()
                .flatten()
                .min();
            let Some(t) = [frame_t, timer_t].into_iter().flatten().min() else {
                return;
            };
            if t > limit {
                self.now = self.now.max(limit);
                return;
            }
            if frame_t != Some(t) {
                assert!(
                    t > self.now,
                    "a timer is due at {t} ns (now {}) but polling did not handle it",
                    self.now
                );
            }
            self.now = self.now.max(t);
            while self.in_flight.front().is_some_and(|f| f.0 <= self.now) {
                let (_, dir, bytes) = self.in_flight.pop_front().expect("front");
                match dir {
                    Dir::AtoB => self.b.nic.receive(self.now, &bytes),
                    Dir::BtoA => self.a.nic.receive(self.now, &bytes),
                }
            }
        }
        panic!("the pair did not settle in a million steps");
    }

    /// Runs until quiet, for at most 10 s of simulated time.
    pub fn run(&mut self) {
        let limit = self.now + 10_000_000_000;
        self.run_until(limit);
    }

    /// Frames sent in `dir` so far.
    pub fn sent(&self, dir: Dir) -> Vec<&Wired> {
        self.wire.iter().filter(|w| w.dir == dir).collect()
    }

    /// A frame between the pair's QPs in `dir` with `opcode` and `psn` (nothing else set).
    pub fn frame(&self, dir: Dir, opcode: u8, psn: u32) -> RoceFrame {
        let ((src_mac, src_ip, src_qpn), (dst_mac, dst_ip, dst_qpn)) = match dir {
            Dir::AtoB => ((MAC_A, IP_A, self.a.qpn), (MAC_B, IP_B, self.b.qpn)),
            Dir::BtoA => ((MAC_B, IP_B, self.b.qpn), (MAC_A, IP_A, self.a.qpn)),
        };
        RoceFrame {
            eth: EthRepr {
                dst: dst_mac,
                src: src_mac,
                vlan: None,
            },
            ip: IpRepr::V4(Ipv4Repr {
                src: src_ip,
                dst: dst_ip,
                dscp: 0,
                ecn: 0,
                ttl: 64,
                ident: 0,
                dont_frag: true,
            }),
            udp: UdpRepr {
                src_port: rxe_source_port(src_qpn),
                dst_port: ROCE_PORT,
                checksum: 0,
            },
            bth: BthRepr::new(opcode, dst_qpn, psn),
            ext: ExtHeaders::default(),
            payload: Vec::new(),
        }
    }

    /// A request from A's QP to B's QP with `opcode` and `psn` (AckReq set, nothing else).
    pub fn request(&self, opcode: u8, psn: u32) -> RoceFrame {
        let mut f = self.frame(Dir::AtoB, opcode, psn);
        f.bth.ack_req = true;
        f
    }

    /// A READ request from A's QP to B's for `len` bytes at `va` under `rkey`.
    pub fn read_request(&self, psn: u32, va: u64, rkey: u32, len: u32) -> RoceFrame {
        let mut f = self.request(RC_READ_REQUEST, psn);
        f.ext.reth = Some(Reth {
            va,
            rkey,
            dma_len: len,
        });
        f
    }

    /// Delivers raw bytes to B as if A had sent them, then returns what B sends in answer
    /// (logged on the wire as B -> A, but not delivered to A).
    pub fn inject_bytes(&mut self, bytes: &[u8]) -> Vec<RoceFrame> {
        self.b.nic.receive(self.now, bytes);
        let out = self.b.nic.poll(self.now);
        let mut answers = Vec::new();
        for bytes in out {
            let frame = RocePacket::parse(&bytes)
                .expect("B sends valid frames")
                .repr();
            answers.push(frame.clone());
            self.wire.push(Wired {
                t: self.now,
                dir: Dir::BtoA,
                frame,
                fate: Fate::Drop,
            });
        }
        answers
    }

    /// Builds `frame`, delivers it to B and returns B's answers.
    pub fn inject(&mut self, frame: &RoceFrame) -> Vec<RoceFrame> {
        let bytes = frame.build().expect("a buildable test frame");
        self.inject_bytes(&bytes)
    }
}

/// `len` bytes of a recognisable pattern depending on `seed`.
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 8) as u8)
        .collect()
}

/// The AETH syndrome of an answer, which must be an ACK or NAK.
pub fn syndrome(f: &RoceFrame) -> u8 {
    assert_eq!(
        f.bth.opcode,
        rnic_transport::ops::RC_ACKNOWLEDGE,
        "expected an ACKNOWLEDGE, got {f:?}"
    );
    f.ext.aeth.expect("an ACKNOWLEDGE carries an AETH").syndrome
}

/// (wr_id, status) of each work completion, in order.
pub fn wc_summary(wcs: &[WorkCompletion]) -> Vec<(u64, WcStatus)> {
    wcs.iter().map(|w| (w.wr_id, w.status)).collect()
}
