//! The model pair the hardware tests drive: two model NICs, A (the requester) and B (the
//! responder), with one RC QP each, connected over a link that drops, duplicates and delays
//! frames both ways, in the model's own time (it moves to the next arrival or timer).
//! `driver/tests/responder.rs` feeds what B received to the hardware responder;
//! `driver/tests/req_segment.rs` what A sent to the hardware requester's segmentation;
//! `driver/tests/comp_check.rs` the steps A's completer decided to the hardware completer's.

#![allow(dead_code)]

use std::net::{IpAddr, Ipv4Addr};

use rnic_cosim::axis::Rng;
use rnic_driver::tables::QpContext;
use rnic_transport::mr::{MrInfo, MrSpec};
use rnic_transport::nic::{Nic, NicConfig};
use rnic_transport::qp::QpInit;
use rnic_transport::verbs::{
    Access, AddressVector, AttrMask, Mtu, QpAttr, QpState, QpType, RecvWr, SendFlags, SendWr,
    WrOpcode,
};
use rnic_wire::MacAddr;

pub const MAC_A: MacAddr = MacAddr([2, 0, 0, 0, 0, 0xA]);
pub const MAC_B: MacAddr = MacAddr([2, 0, 0, 0, 0, 0xB]);
pub const IP_A: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
pub const IP_B: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
/// The responder's region: its key (index 3, a tag), VA, length and device address.
pub const KEY_B: u32 = 3 << 8 | 0x5A;
pub const VA_B: u64 = 0x7F00_1234_5000;
pub const LEN_B: u64 = 48 * 1024;
pub const BASE_B: u64 = 0x2_0000_1000;

pub struct Model {
    pub a: Nic,
    pub b: Nic,
    pub qa: u32,
    pub qb: u32,
    pub mr_a: MrInfo,
    /// B's region as it was filled, before any request.
    pub fill_b: Vec<u8>,
    /// A's attributes (in RTS) and B's.
    pub attr_a: QpAttr,
    pub attr_b: QpAttr,
    pub ctx_b: QpContext,
    pub mr_b: MrInfo,
    /// B's completion queue.
    pub cq_b: usize,
    /// The link: the model's time, frames in flight (arrival time, sequence, to B?, bytes).
    pub now: u64,
    pub seq: u64,
    pub flight: Vec<(u64, u64, bool, Vec<u8>)>,
    /// Rewrites every frame A sends, before the link (a request no requester would send).
    pub mangle: Option<fn(&mut Vec<u8>)>,
    /// Every frame A sent, in order (before the link's faults).
    pub sent_a: Vec<Vec<u8>>,
}

pub fn bring_up(nic: &mut Nic, qpn: u32, attr: &QpAttr) {
    let masks = [
        (
            QpState::Init,
            AttrMask(
                AttrMask::STATE.0
                    | AttrMask::PKEY_INDEX.0
                    | AttrMask::PORT.0
                    | AttrMask::ACCESS_FLAGS.0,
            ),
        ),
        (
            QpState::Rtr,
            AttrMask(
                AttrMask::STATE.0
                    | AttrMask::AV.0
                    | AttrMask::PATH_MTU.0
                    | AttrMask::DEST_QPN.0
                    | AttrMask::RQ_PSN.0
                    | AttrMask::MAX_DEST_RD_ATOMIC.0
                    | AttrMask::MIN_RNR_TIMER.0,
            ),
        ),
        (
            QpState::Rts,
            AttrMask(
                AttrMask::STATE.0
                    | AttrMask::SQ_PSN.0
                    | AttrMask::TIMEOUT.0
                    | AttrMask::RETRY_CNT.0
                    | AttrMask::RNR_RETRY.0
                    | AttrMask::MAX_QP_RD_ATOMIC.0,
            ),
        ),
    ];
    let mut a = attr.clone();
    for (state, mask) in masks {
        a.state = state;
        nic.modify_qp(qpn, &a, mask).unwrap();
    }
}

pub fn model(rng: &mut Rng, mtu: Mtu, ack_every: u32, mdra: u8) -> Model {
    let mut ca = NicConfig::new(MAC_A, IpAddr::V4(IP_A));
    ca.ack_every = ack_every;
    let mut a = Nic::new(ca);
    let mut b = Nic::new(NicConfig::new(MAC_B, IpAddr::V4(IP_B)));
    let (pa, pb) = (a.alloc_pd(), b.alloc_pd());
    let (ca, cb) = (a.create_cq(4096).unwrap(), b.create_cq(4096).unwrap());
    let qa = a.create_qp(&QpInit::new(QpType::Rc, pa, ca)).unwrap();
    let qb = b.create_qp(&QpInit::new(QpType::Rc, pb, cb)).unwrap();
    let mr_a = a
        .reg_mr(MrSpec {
            pd: pa,
            va: 0x10_0000,
            len: 64 * 1024,
            access: Access::LOCAL_WRITE,
            key: None,
        })
        .unwrap();
    let fill: Vec<u8> = (0..64 * 1024).map(|_| rng.next_u64() as u8).collect();
    a.mr_bytes_mut(mr_a.lkey).unwrap().copy_from_slice(&fill);
    let mr_b = b
        .reg_mr(MrSpec {
            pd: pb,
            va: VA_B,
            len: LEN_B,
            access: Access::LOCAL_WRITE
                | Access::REMOTE_WRITE
                | Access::REMOTE_READ
                | Access::REMOTE_ATOMIC,
            key: Some(KEY_B),
        })
        .unwrap();
    // Random bytes, but the first 256 zero: compare-and-swap targets that can succeed.
    let fill_b: Vec<u8> = (0..LEN_B)
        .map(|k| if k < 256 { 0 } else { rng.next_u64() as u8 })
        .collect();
    b.mr_bytes_mut(mr_b.rkey).unwrap().copy_from_slice(&fill_b);
    // PSNs near the wrap, so that it happens mid-stream.
    let psn_a = (1 << 24) - 1 - rng.below(200) as u32;
    let conn = |sip, dip, dmac, dest_qpn| QpAttr {
        access: Access::REMOTE_WRITE | Access::REMOTE_READ | Access::REMOTE_ATOMIC,
        av: Some(AddressVector::new(dmac, IpAddr::V4(sip), IpAddr::V4(dip))),
        path_mtu: mtu,
        timeout: 14,
        retry_cnt: 7,
        rnr_retry: 7,
        min_rnr_timer: 12,
        max_rd_atomic: mdra,
        max_dest_rd_atomic: mdra,
        dest_qpn,
        ..Default::default()
    };
    let mut at = conn(IP_A, IP_B, MAC_B, qb);
    at.sq_psn = psn_a;
    at.rq_psn = 100;
    let mut bt = conn(IP_B, IP_A, MAC_A, qa);
    bt.sq_psn = 100;
    bt.rq_psn = psn_a;
    bring_up(&mut a, qa, &at);
    bring_up(&mut b, qb, &bt);
    at.state = QpState::Rts;
    bt.state = QpState::Rts;
    let ctx_b = QpContext {
        qp_type: QpType::Rc,
        pd: pb.0,
        pkey: 0xFFFF,
        send_cq: cb as u32,
        recv_cq: cb as u32,
        sig_all: false,
    };
    Model {
        a,
        b,
        qa,
        qb,
        mr_a,
        fill_b,
        attr_a: at,
        attr_b: bt,
        ctx_b,
        mr_b,
        cq_b: cb,
        now: 0,
        seq: 0,
        flight: Vec::new(),
        mangle: None,
        sent_a: Vec::new(),
    }
}

/// Link faults, per frame.
#[derive(Clone, Copy)]
pub struct Faults {
    pub drop: f64,
    pub dup: f64,
    pub delay: f64,
}

impl Faults {
    /// When a frame sent at `now` over a link of latency `lat` arrives: never (dropped), once,
    /// or twice (duplicated), each copy perhaps held back three latencies more.
    pub fn arrivals(&self, rng: &mut Rng, now: u64, lat: u64) -> Vec<u64> {
        if rng.chance(self.drop) {
            return Vec::new();
        }
        let copies = if rng.chance(self.dup) { 2 } else { 1 };
        (0..copies)
            .map(|_| {
                let extra = if rng.chance(self.delay) { 3 * lat } else { 0 };
                now + lat + extra
            })
            .collect()
    }
}

/// A clean link.
pub const NO_FAULTS: Faults = Faults {
    drop: 0.0,
    dup: 0.0,
    delay: 0.0,
};

/// Runs the pair until quiet (or, with `until`, until nothing happens before that time);
/// returns the frames B received, in order, and B's responses.
pub fn run_model(
    m: &mut Model,
    rng: &mut Rng,
    f: Faults,
    until: Option<u64>,
) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    const LAT: u64 = 2_000;
    let (mut to_b, mut from_b) = (Vec::new(), Vec::new());
    for _ in 0..2_000_000 {
        let now = m.now;
        for to_b_dir in [true, false] {
            let frames = if to_b_dir {
                m.a.poll(now)
            } else {
                m.b.poll(now)
            };
            for mut bytes in frames {
                if to_b_dir {
                    m.sent_a.push(bytes.clone());
                }
                if !to_b_dir {
                    from_b.push(bytes.clone());
                } else if let Some(mangle) = m.mangle {
                    mangle(&mut bytes);
                }
                for at in f.arrivals(rng, now, LAT) {
                    m.flight.push((at, m.seq, to_b_dir, bytes.clone()));
                    m.seq += 1;
                }
            }
        }
        m.flight.sort_by_key(|x| (x.0, x.1));
        let frame_t = m.flight.first().map(|x| x.0);
        let timer_t = [m.a.next_deadline(), m.b.next_deadline()]
            .into_iter()
            .flatten()
            .min();
        let Some(t) = [frame_t, timer_t].into_iter().flatten().min() else {
            return (to_b, from_b);
        };
        if until.is_some_and(|u| t > u) {
            return (to_b, from_b);
        }
        m.now = m.now.max(t);
        let now = m.now;
        while m.flight.first().is_some_and(|x| x.0 <= now) {
            let (_, _, dir, bytes) = m.flight.remove(0);
            if dir {
                to_b.push(bytes.clone());
                m.b.receive(now, &bytes);
            } else {
                m.a.receive(now, &bytes);
            }
        }
    }
    panic!("the model pair did not settle");
}

/// A's region: messages are gathered from the lower half (never written), READ and atomic
/// results land in the upper half.
pub const A_LEN: u64 = 64 * 1024;
pub const A_SRC: u64 = A_LEN / 2;

pub struct Posted {
    pub wr: SendWr,
    /// The message's bytes (a SEND or WRITE's, gathered from A's region when posted).
    pub bytes: Vec<u8>,
}

/// Posts `n` random work requests of every RC opcode on A (any length from 0 to several MTUs,
/// one to three scatter/gather entries, SOLICITED and FENCE at random), and a receive request
/// on B for each that takes one.
pub fn post(m: &mut Model, rng: &mut Rng, n: usize, fill_a: &[u8]) -> Vec<Posted> {
    post_in(m, rng, n, fill_a, false)
}

/// As [`post`], with `reads_apart`: READs read B's upper half and nothing writes there (atomics,
/// WRITEs and receive buffers in the lower half), so a READ that is executed again after later
/// requests (its responses lost, the request sent again) reads what it read the first time.
pub fn post_in(
    m: &mut Model,
    rng: &mut Rng,
    n: usize,
    fill_a: &[u8],
    reads_apart: bool,
) -> Vec<Posted> {
    let half = LEN_B / 2;
    // A remote offset for `len` bytes from a draw over the whole region.
    let place = |draw: u64, len: u64, read: bool| -> u64 {
        if !reads_apart {
            draw
        } else if read {
            half + draw % (half - len + 1)
        } else {
            draw % (half - len + 1)
        }
    };
    let mtu = m.attr_a.path_mtu.bytes() as u64;
    let mut out = Vec::new();
    for i in 0..n {
        let op = [
            WrOpcode::RdmaWrite,
            WrOpcode::RdmaWriteWithImm,
            WrOpcode::Send,
            WrOpcode::SendWithImm,
            WrOpcode::RdmaRead,
            WrOpcode::AtomicCmpAndSwp,
            WrOpcode::AtomicFetchAndAdd,
        ][rng.below(7) as usize];
        let mut flags = SendFlags::NONE;
        for (f, p) in [
            (SendFlags::SIGNALED, 0.5),
            (SendFlags::SOLICITED, 0.5),
            (SendFlags::FENCE, 0.1),
        ] {
            if rng.chance(p) {
                flags |= f;
            }
        }
        let mut wr = SendWr::new(i as u64, op).flags(flags);
        let mut bytes = Vec::new();
        if op.is_atomic() {
            let dst = A_SRC + 8 * rng.below(A_SRC / 8);
            let slot = rng.below(LEN_B / 8);
            let slot = if reads_apart { slot % (half / 8) } else { slot };
            wr = wr
                .sge(m.mr_a.va + dst, 8, m.mr_a.lkey)
                .remote(VA_B + 8 * slot, KEY_B)
                .atomic(rng.next_u64(), rng.next_u64());
        } else {
            let len = match rng.below(4) {
                0 => rng.below(16),
                1 => mtu * (1 + rng.below(3)) - rng.below(2),
                _ => rng.below(3 * mtu + 100),
            };
            let pieces = 1 + rng.below(3);
            let mut left = len;
            for k in 0..pieces {
                let take = if k + 1 == pieces {
                    left
                } else {
                    rng.below(left + 1)
                };
                left -= take;
                if op == WrOpcode::RdmaRead {
                    let at = A_SRC + rng.below(A_SRC - take + 1);
                    wr = wr.sge(m.mr_a.va + at, take as u32, m.mr_a.lkey);
                } else {
                    let at = rng.below(A_SRC - take + 1);
                    wr = wr.sge(m.mr_a.va + at, take as u32, m.mr_a.lkey);
                    bytes.extend_from_slice(&fill_a[at as usize..(at + take) as usize]);
                }
            }
            if op != WrOpcode::Send && op != WrOpcode::SendWithImm {
                let read = op == WrOpcode::RdmaRead;
                wr = wr.remote(VA_B + place(rng.below(LEN_B - len + 1), len, read), KEY_B);
            }
            if matches!(op, WrOpcode::SendWithImm | WrOpcode::RdmaWriteWithImm) {
                wr = wr.imm(rng.next_u64() as u32);
            }
        }
        if matches!(
            op,
            WrOpcode::Send | WrOpcode::SendWithImm | WrOpcode::RdmaWriteWithImm
        ) {
            let len = wr.total_len();
            let at = place(rng.below(LEN_B - len + 1), len, false);
            let recv = RecvWr::new(i as u64).sge(VA_B + at, len as u32, KEY_B);
            m.b.post_recv(m.qb, recv).unwrap();
        }
        m.a.post_send(m.qa, wr.clone()).unwrap();
        out.push(Posted { wr, bytes });
    }
    out
}
