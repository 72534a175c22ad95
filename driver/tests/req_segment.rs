//! The requester's segmentation in hardware (`rnic_hw::req_segment`, rust-hdl and Verilator
//! in lock-step) against the transport model's requester: two model NICs run random work
//! requests of every RC opcode (WRITE and SEND with and without immediate, READ, both
//! atomics; any length from 0 to several MTUs, one to three scatter/gather entries, SOLICITED
//! and FENCE at random, PSNs about to wrap, AckReq every 1 to 64 packets) over a link that
//! drops, duplicates and delays frames, so A's requester goes back to NAKed and timed-out
//! PSNs, also inside a message and inside a partly answered READ. Every request frame A sent,
//! in order, is made again by the hardware from the work request and its position: the send
//! descriptor equals the frame's (opcode, PSN, AckReq, SE, destination QP, P_Key, payload
//! length and every extension header), and the payload the frame carries is the message's
//! bytes at the offset and length the hardware names.
//!
//! The test keeps the requester's position as the requester engine will, from the hardware's
//! own outputs (the packet count, the last packet, the AckReq count); only where the next
//! frame's PSN jumps does it read the position off the frame: backwards is a retry (the model
//! counts packets since an AckReq from zero again), forwards is an ACK that covered what was
//! being resent (the count goes on).

mod common;

use common::*;
use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{PortDut, PortLockStep};
use rnic_cosim::transport::{descriptor_of, gather_once};
use rnic_driver::queues::encode_send;
use rnic_driver::responder_sim::row_words;
use rnic_driver::tables::{QpContext, encode_qp};
use rnic_hw::payload_gather::PayloadGather;
use rnic_hw::req_segment::{ReqSegment, SWQE_BITS};
use rnic_hw::transport_header::{Class, class_of};
use rnic_transport::psn;
use rnic_transport::verbs::{Mtu, QpType};
use rnic_wire::RocePacket;

/// The device address of A's region (the host memory the payload gather reads).
const BASE_A: u64 = 0x3_0000_1000;

/// The segmentation's ports, reset.
struct Seg {
    d: PortLockStep<ReqSegment>,
    ins: [usize; 10],
    outs: [usize; 10],
}

/// What the hardware made of one position.
#[derive(Debug)]
struct Packet {
    desc: Vec<u64>,
    off: u64,
    take: u64,
    last: bool,
    npkts: u32,
    next_noack: u32,
    bad: bool,
}

impl Seg {
    fn new(seed: u64) -> Seg {
        let mut d = PortLockStep::new(ReqSegment::default(), "req_segment", seed).unwrap();
        let ins = [
            "reset",
            "s_valid",
            "s_wqe",
            "s_len",
            "s_qp",
            "s_first_psn",
            "s_pkt",
            "s_noack",
            "ack_every",
            "m_ready",
        ]
        .map(|n| d.input(n));
        let outs = [
            "s_ready",
            "m_valid",
            "m_desc",
            "m_off",
            "m_take",
            "m_last",
            "m_npkts",
            "m_span",
            "m_next_noack",
            "m_bad",
        ]
        .map(|n| d.output(n));
        d.set(ins[0], 1);
        d.settle().unwrap();
        d.tick();
        d.set(ins[0], 0);
        Seg { d, ins, outs }
    }

    #[allow(clippy::too_many_arguments)]
    fn packet(
        &mut self,
        wqe: &[u64],
        len: u32,
        qp: &[u64],
        first: u32,
        k: u32,
        noack: u32,
        every: u32,
    ) -> Packet {
        let d = &mut self.d;
        let [
            _,
            s_valid,
            s_wqe,
            s_len,
            s_qp,
            s_first,
            s_pkt,
            s_noack,
            s_every,
            m_ready,
        ] = self.ins;
        let [
            s_ready,
            m_valid,
            m_desc,
            m_off,
            m_take,
            m_last,
            m_npkts,
            _,
            m_noack,
            m_bad,
        ] = self.outs;
        d.set_words(s_wqe, wqe);
        d.set(s_len, len.into());
        d.set_words(s_qp, qp);
        d.set(s_first, first.into());
        d.set(s_pkt, k.into());
        d.set(s_noack, noack.into());
        d.set(s_every, every.into());
        d.set(s_valid, 1);
        d.settle().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.get(s_ready), 1, "idle before a request");
        d.tick();
        d.set(s_valid, 0);
        for _ in 0..16 {
            d.settle().unwrap_or_else(|e| panic!("{e}"));
            if d.get(m_valid) == 1 {
                let p = Packet {
                    desc: d.get_words(m_desc),
                    off: d.get(m_off),
                    take: d.get(m_take),
                    last: d.get(m_last) == 1,
                    npkts: d.get(m_npkts) as u32,
                    next_noack: d.get(m_noack) as u32,
                    bad: d.get(m_bad) == 1,
                };
                d.set(m_ready, 1);
                d.settle().unwrap_or_else(|e| panic!("{e}"));
                d.tick();
                d.set(m_ready, 0);
                return p;
            }
            d.tick();
        }
        panic!("no packet 16 clocks after the request");
    }
}

/// A work request's state in the requester: its first PSN and packet count once started.
#[derive(Clone, Copy, Default)]
struct Started {
    first: u32,
    npkts: u32,
}

struct Covered {
    frames: usize,
    retries: usize,
    forward: usize,
    mid_message: usize,
    gathered: usize,
    opcodes: std::collections::BTreeSet<u8>,
}

fn scenario(seed: u64, mtu: Mtu, ack_every: u32, f: Faults) -> Covered {
    let mut rng = Rng::new(seed);
    let mdra = 1 + rng.below(16) as u8;
    let mut m = model(&mut rng, mtu, ack_every, mdra);
    let fill_a = m.a.mr_bytes(m.mr_a.lkey).unwrap().to_vec();
    let posted = post(&mut m, &mut rng, 100, &fill_a);
    run_model(&mut m, &mut rng, f, None);
    let ctx_a = QpContext {
        qp_type: QpType::Rc,
        pd: 1,
        pkey: 0xFFFF,
        send_cq: 0,
        recv_cq: 0,
        sig_all: false,
    };
    let qp = row_words(&encode_qp(&m.attr_a, &ctx_a).unwrap());
    let wqes: Vec<Vec<u64>> = posted
        .iter()
        .map(|p| {
            let e = encode_send(&p.wr, 0).unwrap();
            e[..SWQE_BITS / 8]
                .chunks(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect()
        })
        .collect();
    let mut seg = Seg::new(seed);
    let mut gather = PortLockStep::new(PayloadGather::default(), "payload_gather", seed).unwrap();
    gather.set(gather.input("reset"), 1);
    gather.settle().unwrap();
    gather.tick();
    gather.set(gather.input("reset"), 0);
    let mut started: Vec<Option<Started>> = vec![None; posted.len()];
    let (mut cur, mut k, mut noack) = (0usize, 0u32, 0u32);
    let mut next_psn = m.attr_a.sq_psn;
    let mut cov = Covered {
        frames: 0,
        retries: 0,
        forward: 0,
        mid_message: 0,
        gathered: 0,
        opcodes: Default::default(),
    };
    for (n, bytes) in m.sent_a.iter().enumerate() {
        let p = RocePacket::parse(bytes).unwrap_or_else(|e| panic!("frame {n}: {e:?}"));
        assert_eq!(
            class_of(p.bth.opcode),
            Class::Request,
            "frame {n}: A sends requests"
        );
        let frame = p.repr();
        let fpsn = frame.bth.psn;
        // Where the requester is: the next packet of the current request, or a new one.
        let expect = match started.get(cur).copied().flatten() {
            Some(s) => psn::add(s.first, k),
            None => next_psn,
        };
        if fpsn != expect {
            let (i, s) = started
                .iter()
                .enumerate()
                .find_map(|(i, s)| {
                    s.filter(|s| {
                        let d = psn::diff(fpsn, s.first);
                        d >= 0 && (d as u32) < s.npkts
                    })
                    .map(|s| (i, s))
                })
                .unwrap_or_else(|| panic!("frame {n}: PSN {fpsn:#x} is in no request sent"));
            if psn::diff(fpsn, expect) < 0 {
                cov.retries += 1;
                noack = 0;
            } else {
                cov.forward += 1;
            }
            cur = i;
            k = psn::diff(fpsn, s.first) as u32;
            if k > 0 {
                cov.mid_message += 1;
            }
        }
        let post = &posted[cur];
        let first = match started[cur] {
            Some(s) => s.first,
            None => next_psn,
        };
        let len = post.wr.total_len() as u32;
        let hw = seg.packet(&wqes[cur], len, &qp, first, k, noack, ack_every);
        assert!(!hw.bad, "frame {n}: request {cur} packet {k} refused");
        match started[cur] {
            Some(s) => assert_eq!(s.npkts, hw.npkts, "frame {n}: request {cur}'s packets"),
            None => {
                started[cur] = Some(Started {
                    first,
                    npkts: hw.npkts,
                });
                next_psn = psn::add(first, hw.npkts);
            }
        }
        let (want, _, _) = descriptor_of(&frame);
        assert_eq!(
            hw.desc,
            want.pack().to_vec(),
            "frame {n}: request {cur} ({:?}, {len} bytes) packet {k}",
            post.wr.opcode
        );
        assert_eq!(
            frame.payload.len() as u64,
            hw.take,
            "frame {n}: payload length"
        );
        if hw.take > 0 {
            let at = hw.off as usize;
            assert_eq!(
                frame.payload,
                post.bytes[at..at + hw.take as usize],
                "frame {n}: payload at {at}"
            );
            // The hardware reads the payload off the request's entries.
            let mut entries = [(0u64, 0u32); 4];
            for (e, s) in entries.iter_mut().zip(&post.wr.sg_list) {
                *e = (BASE_A + (s.addr - m.mr_a.va), s.length);
            }
            let (bytes, bad) = gather_once(
                &mut gather,
                &entries,
                hw.off as u32,
                hw.take as u16,
                BASE_A,
                &fill_a,
            )
            .unwrap_or_else(|e| panic!("frame {n}: {e}"));
            assert!(!bad, "frame {n}: a read refused");
            assert_eq!(bytes, frame.payload, "frame {n}: gathered payload");
            cov.gathered += 1;
        }
        cov.frames += 1;
        cov.opcodes.insert(frame.bth.opcode);
        noack = hw.next_noack;
        if hw.last {
            cur += 1;
            k = 0;
        } else {
            k += 1;
        }
    }
    cov
}

#[test]
fn request_frames_over_a_faulty_link_equal_the_model() {
    let f = Faults {
        drop: 0.04,
        dup: 0.02,
        delay: 0.03,
    };
    let mut all = std::collections::BTreeSet::new();
    let (mut frames, mut retries, mut mid, mut gathered) = (0, 0, 0, 0);
    for (seed, mtu, every) in [
        (1, Mtu::M256, 64),
        (2, Mtu::M1024, 3),
        (3, Mtu::M4096, 1),
        (4, Mtu::M512, 8),
        (5, Mtu::M2048, 64),
    ] {
        let c = scenario(seed, mtu, every, f);
        frames += c.frames;
        retries += c.retries;
        mid += c.mid_message;
        gathered += c.gathered;
        all.extend(c.opcodes);
    }
    eprintln!("{frames} frames, {retries} retries, {mid} inside a message, {gathered} payloads");
    // Every request opcode an RC requester sends, and go-back-N, also inside a message.
    assert_eq!(all.len(), 15, "opcodes seen: {all:x?}");
    assert!(
        frames > 800 && gathered > 400,
        "{frames} frames, {gathered} payloads"
    );
    assert!(
        retries >= 10 && mid >= 5,
        "{retries} retries, {mid} inside a message"
    );
}

#[test]
fn request_frames_over_a_clean_link_equal_the_model() {
    let mut frames = 0;
    for (seed, mtu, every) in [(11, Mtu::M1024, 64), (12, Mtu::M256, 5)] {
        let c = scenario(seed, mtu, every, NO_FAULTS);
        assert_eq!(
            c.retries + c.forward,
            0,
            "seed {seed}: no jumps on a clean link"
        );
        frames += c.frames;
    }
    assert!(frames > 200, "{frames} frames");
}
