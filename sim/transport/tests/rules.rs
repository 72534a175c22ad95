//! The rules of `shared/docs/rc-transport.md`, one test (or a few) per rule, checked against
//! expectations worked out by hand from that document, never against the model's own output:
//! PSN windows and the 24-bit wrap, the receive checks in rxe's order with their counters,
//! opcode-sequence and length errors, RNR NAKs and the RNR timer table, ACK-timeout retries
//! and their timing, the remote-access matrix (no byte written on a refusal), every
//! operation end to end with its data, ACK coalescing and AckReq placement, go-back-N and
//! READ/atomic replay, and `modify_qp`'s transition rules.
//!
//! Two model NICs are joined by the harness in `common/`; responder rules are driven by
//! frames built by hand with `rnic_wire::RoceFrame` and injected into B.

mod common;

use std::collections::BTreeMap;

use common::*;
use rnic_transport::ops::*;
use rnic_transport::*;
use rnic_wire::RoceFrame;
use rnic_wire::ext::{AtomicEth, Deth, Reth};

const E: u32 = 0x1000; // B's expected PSN (A's first PSN) in the default configuration
const M: usize = 1024; // default path MTU
const T23: u32 = 1 << 23;

fn psn_add(a: u32, n: u32) -> u32 {
    a.wrapping_add(n) & 0xFF_FFFF
}

/// Counters that changed between `before` and `after`, with how much they grew.
fn counter_diff(before: &Counters, after: &Counters) -> BTreeMap<&'static str, u64> {
    before
        .iter()
        .zip(after.iter())
        .filter(|((_, x), (_, y))| x != y)
        .map(|((n, x), (_, y))| (n, y - x))
        .collect()
}

/// A SEND_ONLY from A to B with `len` bytes of payload.
fn send_only(p: &Pair, psn: u32, len: usize) -> RoceFrame {
    let mut f = p.request(RC_SEND_ONLY, psn);
    f.payload = pattern(len, 0x5A);
    f
}

/// Posts one receive of `len` bytes on B (a fresh MR) and returns its MR.
fn b_recv(p: &mut Pair, wr_id: u64, len: u64) -> MrInfo {
    let mr = p.b.reg(len, ALL);
    p.b.post_recv(RecvWr::new(wr_id).sge(mr.va, len as u32, mr.lkey));
    mr
}

fn assert_nak(f: &RoceFrame, syn: u8, psn: u32) {
    assert_eq!(
        (syndrome(f), f.bth.psn),
        (syn, psn),
        "expected syndrome {syn:#04x} for PSN {psn:#x}, got {f:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// PSN arithmetic: ePSN + 2^23 - 1 is ahead, ePSN + 2^23 is behind; the wrap 0xFFFFFF -> 0.
// ---------------------------------------------------------------------------------------------

/// Ahead by 2^23 - 1: ONE NAK "PSN sequence error" (0x60) carrying ePSN, later
/// out-of-sequence packets dropped silently until ePSN arrives; then a new gap gets a new NAK.
#[test]
fn psn_ahead_by_2_23_minus_1_gets_one_sequence_nak_with_epsn() {
    for epsn in [E, 0xFF_FFF0, 0] {
        let mut p = Pair::new(Cfg {
            psn_a: epsn,
            ..Cfg::default()
        });
        let rbuf = b_recv(&mut p, 1, 4096);
        let ahead = psn_add(epsn, T23 - 1);
        let out = p.inject(&send_only(&p, ahead, 16));
        assert_eq!(out.len(), 1, "ePSN {epsn:#x}: one NAK for {ahead:#x}");
        assert_nak(&out[0], AETH_NAK_SEQ, epsn);
        assert_eq!(out[0].ext.aeth.unwrap().msn, 0);
        // Further out-of-sequence packets (including the same one again): silence.
        for psn in [psn_add(epsn, 1), psn_add(epsn, 5), ahead] {
            assert!(p.inject(&send_only(&p, psn, 16)).is_empty(), "PSN {psn:#x}");
        }
        let c = &p.b.nic.counters;
        assert_eq!(
            (
                c.nak_seq_sent,
                c.resp_out_of_sequence,
                c.resp_out_of_sequence_dropped
            ),
            (1, 4, 3)
        );
        assert!(p.b.wcs().is_empty(), "nothing out of sequence was executed");
        // ePSN itself is executed and ACKed.
        let out = p.inject(&send_only(&p, epsn, 16));
        assert_eq!(out.len(), 1);
        assert_nak(&out[0], AETH_ACK, epsn);
        assert_eq!(out[0].ext.aeth.unwrap().msn, 1);
        let wcs = p.b.wcs();
        assert_eq!(wc_summary(&wcs), [(1, WcStatus::Success)]);
        assert_eq!(wcs[0].byte_len, 16);
        assert_eq!(&p.b.mem(rbuf.lkey)[..16], &pattern(16, 0x5A)[..]);
        // A new gap: a new NAK with the new ePSN.
        let out = p.inject(&send_only(&p, psn_add(epsn, 3), 16));
        assert_nak(&out[0], AETH_NAK_SEQ, psn_add(epsn, 1));
        assert_eq!(p.b.nic.counters.nak_seq_sent, 2);
    }
}

/// Behind by 2^23 (and by 1): a duplicate, not executed, re-ACKed with ePSN - 1.
#[test]
fn psn_behind_by_2_23_is_a_duplicate_acked_with_epsn_minus_1() {
    for epsn in [E, 0xFF_FFF0, 0] {
        let mut p = Pair::new(Cfg {
            psn_a: epsn,
            ..Cfg::default()
        });
        b_recv(&mut p, 1, 4096);
        let dup = psn_add(epsn, T23);
        let out = p.inject(&send_only(&p, dup, 16));
        assert_eq!(out.len(), 1, "ePSN {epsn:#x}");
        assert_nak(&out[0], AETH_ACK, psn_add(epsn, 0xFF_FFFF));
        assert_eq!(p.b.nic.counters.resp_duplicate, 1);
        assert!(p.b.wcs().is_empty(), "a duplicate consumes no receive");
        assert_eq!(p.b.qp().rq.len(), 1);
        // Execute ePSN, then repeat it: ACKed with the new ePSN - 1, i.e. the same PSN.
        p.inject(&send_only(&p, epsn, 16));
        assert_eq!(p.b.wcs().len(), 1);
        let out = p.inject(&send_only(&p, epsn, 16));
        assert_nak(&out[0], AETH_ACK, epsn);
        assert_eq!(
            out[0].ext.aeth.unwrap().msn,
            1,
            "MSN not bumped by a duplicate"
        );
        assert!(p.b.wcs().is_empty());
        assert_eq!(p.b.nic.counters.resp_duplicate, 2);
        assert_eq!(p.b.qp().resp.epsn, psn_add(epsn, 1));
    }
}

/// Traffic across 0xFFFFFF -> 0 in both directions: multi-packet SEND, WRITE and READ, PSNs on
/// the wire as worked out by hand, all data delivered.
#[test]
fn traffic_across_the_psn_wrap() {
    let mut p = Pair::new(Cfg {
        psn_a: 0xFF_FFFE,
        psn_b: 0xFF_FFFE,
        ..Cfg::default()
    });
    let src = p.a.reg_with(&pattern(8192, 1), ALL);
    let rd = p.a.reg(4096, ALL);
    let tgt = p.b.reg_with(&pattern(4096, 2), ALL);
    let rbuf = b_recv(&mut p, 100, 8192);
    let rbuf2 = b_recv(&mut p, 101, 8192);
    let a_rbuf = p.a.reg(4096, ALL);
    p.a.post_recv(RecvWr::new(200).sge(a_rbuf.va, 4096, a_rbuf.lkey));
    let bsrc = p.b.reg_with(&pattern(2048, 3), ALL);

    // A: SEND 3000 (FFFFFE, FFFFFF, 0), WRITE 2500 (1, 2, 3), READ 3000 (4, 5, 6), SEND 1024 (7).
    p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 3000, src.lkey));
    p.a.post_send(
        SendWr::new(2, WrOpcode::RdmaWrite)
            .sge(src.va + 3000, 2500, src.lkey)
            .remote(tgt.va, tgt.rkey),
    );
    p.a.post_send(
        SendWr::new(3, WrOpcode::RdmaRead)
            .sge(rd.va, 3000, rd.lkey)
            .remote(tgt.va + 1000, tgt.rkey),
    );
    p.a.post_send(SendWr::new(4, WrOpcode::Send).sge(src.va + 6000, 1024, src.lkey));
    // B: SEND 2048 (FFFFFE, FFFFFF).
    p.b.post_send(SendWr::new(9, WrOpcode::Send).sge(bsrc.va, 2048, bsrc.lkey));
    p.run();

    let req: Vec<(u8, u32)> = p
        .sent(Dir::AtoB)
        .iter()
        .filter(|w| w.opcode() != RC_ACKNOWLEDGE)
        .map(|w| (w.opcode(), w.psn()))
        .collect();
    assert_eq!(
        req,
        [
            (RC_SEND_FIRST, 0xFF_FFFE),
            (RC_SEND_MIDDLE, 0xFF_FFFF),
            (RC_SEND_LAST, 0),
            (RC_WRITE_FIRST, 1),
            (RC_WRITE_MIDDLE, 2),
            (RC_WRITE_LAST, 3),
            (RC_READ_REQUEST, 4),
            (RC_SEND_ONLY, 7),
        ]
    );
    let resp: Vec<(u8, u32)> = p
        .sent(Dir::BtoA)
        .iter()
        .filter(|w| w.opcode() != RC_ACKNOWLEDGE && w.opcode() != RC_SEND_FIRST)
        .filter(|w| w.opcode() != RC_SEND_LAST)
        .map(|w| (w.opcode(), w.psn()))
        .collect();
    assert_eq!(
        resp,
        [
            (RC_READ_RESPONSE_FIRST, 4),
            (RC_READ_RESPONSE_MIDDLE, 5),
            (RC_READ_RESPONSE_LAST, 6),
        ]
    );
    // B's own SEND wrapped too, and A ACKed its last PSN.
    let b_req: Vec<u32> = p
        .sent(Dir::BtoA)
        .iter()
        .filter(|w| matches!(w.opcode(), RC_SEND_FIRST | RC_SEND_LAST))
        .map(|w| w.psn())
        .collect();
    assert_eq!(b_req, [0xFF_FFFE, 0xFF_FFFF]);
    assert!(
        p.sent(Dir::AtoB)
            .iter()
            .any(|w| w.opcode() == RC_ACKNOWLEDGE && w.psn() == 0xFF_FFFF)
    );

    let wa = p.a.wcs();
    let mut sends: Vec<_> = wa.iter().filter(|w| w.opcode != WcOpcode::Recv).collect();
    sends.sort_by_key(|w| w.wr_id);
    assert_eq!(
        sends
            .iter()
            .map(|w| (w.wr_id, w.status, w.byte_len))
            .collect::<Vec<_>>(),
        [
            (1, WcStatus::Success, 3000),
            (2, WcStatus::Success, 2500),
            (3, WcStatus::Success, 3000),
            (4, WcStatus::Success, 1024),
        ]
    );
    assert!(wa.iter().any(|w| w.wr_id == 200 && w.byte_len == 2048));
    let wb = p.b.wcs();
    assert_eq!(
        wb.iter().map(|w| (w.wr_id, w.byte_len)).collect::<Vec<_>>(),
        [(100, 3000), (101, 1024), (9, 2048)]
    );
    let s = pattern(8192, 1);
    assert_eq!(&p.b.mem(rbuf.lkey)[..3000], &s[..3000]);
    assert_eq!(&p.b.mem(rbuf2.lkey)[..1024], &s[6000..7024]);
    let mut t = pattern(4096, 2);
    t[..2500].copy_from_slice(&s[3000..5500]);
    assert_eq!(p.b.mem(tgt.lkey), t);
    assert_eq!(&p.a.mem(rd.lkey)[..3000], &t[1000..4000]);
    assert_eq!(&p.a.mem(a_rbuf.lkey)[..2048], &pattern(2048, 3)[..]);
    assert_eq!(p.a.nic.counters.req_retransmitted, 0);
}

// ---------------------------------------------------------------------------------------------
// Receive checks, in rxe's order; each failure drops silently and counts.
// ---------------------------------------------------------------------------------------------

/// B's extra QPs for the receive checks: a UD QP in RTS, a UD QP in INIT, an RC QP in INIT
/// and an RC QP in RTR (all in B's PD).
struct Extra {
    ud_rts: u32,
    ud_init: u32,
    rc_init: u32,
    rc_rtr: u32,
}

const QKEY: u32 = 0x1111_2222;

fn extra_qps(p: &mut Pair) -> Extra {
    let (pd, cq) = (p.b.pd, p.b.cq);
    let nic = &mut p.b.nic;
    let mut ud = || nic.create_qp(&QpInit::new(QpType::Ud, pd, cq)).unwrap();
    let (ud_rts, ud_init) = (ud(), ud());
    let ud_attr = |state| QpAttr {
        state,
        qkey: QKEY,
        ..Default::default()
    };
    let ud_init_mask = AttrMask::STATE | AttrMask::PKEY_INDEX | AttrMask::PORT | AttrMask::QKEY;
    for q in [ud_rts, ud_init] {
        nic.modify_qp(q, &ud_attr(QpState::Init), ud_init_mask)
            .unwrap();
    }
    nic.modify_qp(ud_rts, &ud_attr(QpState::Rtr), AttrMask::STATE)
        .unwrap();
    nic.modify_qp(
        ud_rts,
        &ud_attr(QpState::Rts),
        AttrMask::STATE | AttrMask::SQ_PSN,
    )
    .unwrap();
    let mut rc = || nic.create_qp(&QpInit::new(QpType::Rc, pd, cq)).unwrap();
    let (rc_init, rc_rtr) = (rc(), rc());
    let mut attr = conn_attr(&p.cfg, IP_B, IP_A, MAC_A, p.a.qpn);
    attr.rq_psn = E;
    attr.state = QpState::Init;
    nic.modify_qp(rc_init, &attr, INIT_MASK).unwrap();
    bring_up(nic, rc_rtr, &attr, false);
    // Receives everywhere, so that a check that wrongly passes shows as an execution.
    let mr = p.b.reg(1 << 16, ALL);
    for (i, q) in [p.b.qpn, ud_rts, ud_init, rc_init, rc_rtr]
        .into_iter()
        .enumerate()
    {
        let wr = RecvWr::new(900 + i as u64).sge(mr.va + 8192 * i as u64, 8192, mr.lkey);
        p.b.nic.post_recv(q, wr).unwrap();
    }
    Extra {
        ud_rts,
        ud_init,
        rc_init,
        rc_rtr,
    }
}

fn ud_send(p: &Pair, qpn: u32, qkey: u32) -> RoceFrame {
    let mut f = p.request(UD_SEND_ONLY, 0);
    f.bth.dest_qp = qpn;
    f.bth.ack_req = false;
    f.ext.deth = Some(Deth {
        qkey,
        src_qp: p.a.qpn,
        resv: 0,
    });
    f.payload = pattern(32, 7);
    f
}

/// A defect of the receive checks: what it does to the frame description and to the built
/// bytes, and the counter that must count it.
#[derive(Clone, Copy)]
struct Defect {
    counter: &'static str,
    what: &'static str,
    frame: fn(&mut RoceFrame, &Extra),
    bytes: fn(&mut Vec<u8>),
}

fn in_frame(
    counter: &'static str,
    what: &'static str,
    frame: fn(&mut RoceFrame, &Extra),
) -> Defect {
    Defect {
        counter,
        what,
        frame,
        bytes: |_| {},
    }
}

fn in_bytes(counter: &'static str, what: &'static str, bytes: fn(&mut Vec<u8>)) -> Defect {
    Defect {
        counter,
        what,
        frame: |_, _| {},
        bytes,
    }
}

/// Offset of the BTH in a frame from A (Ethernet, IPv4, UDP).
const BTH_AT: usize = 14 + 20 + 8;

fn set_ip(f: &mut RoceFrame, src: Option<[u8; 4]>, dst: Option<[u8; 4]>) {
    if let rnic_wire::IpRepr::V4(ip) = &mut f.ip {
        if let Some(s) = src {
            ip.src = s.into();
        }
        if let Some(d) = dst {
            ip.dst = d.into();
        }
    }
}
fn wrong_dst_ip(f: &mut RoceFrame, _: &Extra) {
    set_ip(f, None, Some([10, 0, 0, 9]));
}
fn wrong_src_ip(f: &mut RoceFrame, _: &Extra) {
    set_ip(f, Some([10, 0, 0, 3]), None);
}
fn bad_pkey(f: &mut RoceFrame, _: &Extra) {
    f.bth.pkey = 0x1234;
}
fn flip_icrc(b: &mut [u8]) {
    *b.last_mut().unwrap() ^= 1;
}

/// Sends a SEND_ONLY with `d`'s defects to B (with the extra QPs) and checks that it is
/// dropped silently and that exactly `d.counter` (and `rx_frames`) moved.
fn check_defect(d: Defect) -> Pair {
    let mut p = Pair::with_defaults();
    let x = extra_qps(&mut p);
    let mut f = send_only(&p, E, 64);
    (d.frame)(&mut f, &x);
    let mut bytes = f.build().unwrap();
    (d.bytes)(&mut bytes);
    let before = p.b.nic.counters.clone();
    let out = p.inject_bytes(&bytes);
    let what = d.what;
    assert!(out.is_empty(), "{what}: dropped silently, got {out:?}");
    let diff = counter_diff(&before, &p.b.nic.counters);
    let want = BTreeMap::from([("rx_frames", 1), (d.counter, 1)]);
    assert_eq!(diff, want, "{what}: {} counts it, nothing else", d.counter);
    assert!(p.b.wcs().is_empty(), "{what}: nothing executed");
    assert_eq!(p.b.qp().resp.epsn, E, "{what}");
    p
}

/// Each check alone: the frame is dropped without an answer and exactly its counter (and
/// `rx_frames`) moves; the same frame without the defect is then executed, so each check is
/// really what stopped it.
#[test]
fn receive_checks_drop_silently_and_count() {
    for d in [
        in_bytes("drop_malformed", "truncated IP packet", |b| {
            b.truncate(b.len() - 3)
        }),
        in_bytes("drop_malformed", "shorter than a BTH", |b| {
            b.truncate(BTH_AT + 6)
        }),
        in_bytes("drop_malformed", "unknown opcode", |b| b[BTH_AT] = 0x1F),
        in_frame("drop_bad_tver", "TVer 1", |f, _| f.bth.tver = 1),
        in_frame("drop_not_our_ip", "destination IP", wrong_dst_ip),
        in_frame("drop_qp0", "DestQP 0", |f, _| f.bth.dest_qp = 0),
        in_frame("drop_no_qp", "no such QP", |f, _| f.bth.dest_qp = 0x777),
        in_frame("drop_wrong_transport", "RC opcode on a UD QP", |f, x| {
            f.bth.dest_qp = x.ud_rts
        }),
        in_frame("drop_wrong_transport", "UC opcode on an RC QP", |f, _| {
            f.bth.opcode = 0x24
        }),
        in_frame("drop_bad_state", "request before RTR", |f, x| {
            f.bth.dest_qp = x.rc_init
        }),
        in_frame("drop_address_mismatch", "source IP", wrong_src_ip),
        in_frame("drop_bad_pkey", "P_Key 0x1234", bad_pkey),
        in_frame("drop_bad_pkey", "P_Key 0x8000", |f, _| f.bth.pkey = 0x8000),
        in_bytes("drop_bad_icrc", "ICRC", |b| flip_icrc(b)),
        in_bytes("drop_bad_icrc", "payload byte", |b| b[BTH_AT + 12] ^= 0x80),
    ] {
        let mut p = check_defect(d);
        let out = p.inject(&send_only(&p, E, 64));
        assert_nak(&out[0], AETH_ACK, E);
        assert_eq!(
            p.b.wcs().len(),
            1,
            "{}: the valid frame is executed",
            d.what
        );
    }

    // UD: a wrong Q_Key is dropped and counted, the right one delivered.
    let mut p = Pair::with_defaults();
    let x = extra_qps(&mut p);
    let before = p.b.nic.counters.clone();
    assert!(p.inject(&ud_send(&p, x.ud_rts, QKEY ^ 1)).is_empty());
    let diff = counter_diff(&before, &p.b.nic.counters);
    assert_eq!(
        diff,
        BTreeMap::from([("rx_frames", 1), ("drop_bad_qkey", 1)])
    );
    assert!(p.inject(&ud_send(&p, x.ud_rts, QKEY)).is_empty());
    let wcs = p.b.wcs();
    assert_eq!(wcs.len(), 1);
    assert_eq!((wcs[0].byte_len, wcs[0].src_qp), (40 + 32, p.a.qpn));

    // Accepted: a request to a QP in RTR, and P_Key 0x7FFF (limited member of the default
    // partition matches the full member 0xFFFF).
    let mut f = send_only(&p, E, 64);
    f.bth.dest_qp = x.rc_rtr;
    assert_nak(&p.inject(&f)[0], AETH_ACK, E);
    let mut f = send_only(&p, E, 64);
    f.bth.pkey = 0x7FFF;
    assert_nak(&p.inject(&f)[0], AETH_ACK, E);
    assert_eq!(p.b.wcs().len(), 2);
    // A response (not a request) to a QP in RTR is refused: responses need RTS.
    let before = p.b.nic.counters.clone();
    let mut ack = p.request(RC_ACKNOWLEDGE, 0x2000);
    ack.bth.dest_qp = x.rc_rtr;
    ack.bth.ack_req = false;
    ack.ext.aeth = Some(rnic_wire::ext::Aeth {
        syndrome: AETH_ACK,
        msn: 0,
    });
    assert!(p.inject(&ack).is_empty());
    let diff = counter_diff(&before, &p.b.nic.counters);
    assert_eq!(
        diff,
        BTreeMap::from([("rx_frames", 1), ("drop_bad_state", 1)])
    );
}

/// Two defects at once: the check that comes first in rc-transport.md's list is the one
/// that counts (length, destination IP, TVer, DestQP 0, QP exists, opcode class, state,
/// addresses, P_Key, Q_Key, ICRC).
#[test]
fn receive_checks_run_in_rxe_order() {
    for d in [
        Defect {
            bytes: |b| b.truncate(BTH_AT + 6),
            ..in_frame("drop_malformed", "short + wrong IP", wrong_dst_ip)
        },
        in_frame("drop_not_our_ip", "wrong IP + TVer", |f, x| {
            wrong_dst_ip(f, x);
            f.bth.tver = 1;
        }),
        in_frame("drop_not_our_ip", "wrong IP + DestQP 0", |f, x| {
            wrong_dst_ip(f, x);
            f.bth.dest_qp = 0;
        }),
        in_frame("drop_bad_tver", "TVer + DestQP 0", |f, _| {
            f.bth.tver = 1;
            f.bth.dest_qp = 0;
        }),
        in_frame("drop_qp0", "DestQP 0 + P_Key", |f, x| {
            bad_pkey(f, x);
            f.bth.dest_qp = 0;
        }),
        Defect {
            bytes: |b| flip_icrc(b),
            ..in_frame("drop_no_qp", "no QP + P_Key + ICRC", |f, x| {
                bad_pkey(f, x);
                f.bth.dest_qp = 0x777;
            })
        },
        in_frame("drop_wrong_transport", "RC on UD + state", |f, x| {
            f.bth.dest_qp = x.ud_init
        }),
        in_frame("drop_bad_state", "state + source IP", |f, x| {
            f.bth.dest_qp = x.rc_init;
            wrong_src_ip(f, x);
        }),
        in_frame("drop_address_mismatch", "source IP + P_Key", |f, x| {
            bad_pkey(f, x);
            wrong_src_ip(f, x);
        }),
        Defect {
            bytes: |b| flip_icrc(b),
            ..in_frame("drop_bad_pkey", "P_Key + ICRC", bad_pkey)
        },
    ] {
        check_defect(d);
    }
    // UD: P_Key before Q_Key, Q_Key before ICRC.
    for (counter, pkey, icrc) in [
        ("drop_bad_pkey", true, false),
        ("drop_bad_qkey", false, true),
    ] {
        let mut p = Pair::with_defaults();
        let x = extra_qps(&mut p);
        let mut f = ud_send(&p, x.ud_rts, QKEY ^ 1);
        if pkey {
            f.bth.pkey = 0x1234;
        }
        let mut bytes = f.build().unwrap();
        if icrc {
            flip_icrc(&mut bytes);
        }
        let before = p.b.nic.counters.clone();
        assert!(p.inject_bytes(&bytes).is_empty());
        let diff = counter_diff(&before, &p.b.nic.counters);
        assert_eq!(diff, BTreeMap::from([("rx_frames", 1), (counter, 1)]));
    }
}

// ---------------------------------------------------------------------------------------------
// Opcode sequence and lengths: NAK "invalid request" (0x61) for the packet, QP to ERR.
// ---------------------------------------------------------------------------------------------

fn write_first(p: &Pair, psn: u32, tgt: &MrInfo, dma_len: u32) -> RoceFrame {
    let mut f = p.request(RC_WRITE_FIRST, psn);
    f.ext.reth = Some(Reth {
        va: tgt.va,
        rkey: tgt.rkey,
        dma_len,
    });
    f.payload = pattern(M, 3);
    f
}

/// The responder of `p` has refused with 0x61 at `psn`: one NAK, B in ERR, no completion
/// succeeded, and every receive came back (flushed or in error).
fn assert_invalid_request(p: &mut Pair, out: &[RoceFrame], psn: u32, what: &str) {
    assert_eq!(out.len(), 1, "{what}: {out:?}");
    assert_nak(&out[0], AETH_NAK_INV_REQ, psn);
    assert_eq!(p.b.state(), QpState::Err, "{what}: the QP goes to ERR");
    let wcs = p.b.wcs();
    assert!(!wcs.is_empty(), "{what}: the receives are completed");
    assert!(
        wcs.iter().all(|w| w.status != WcStatus::Success),
        "{what}: {wcs:?}"
    );
    assert_eq!(p.b.nic.counters.nak_inv_req_sent, 1);
}

/// MIDDLE or LAST without an open FIRST.
#[test]
fn middle_or_last_without_first_is_an_invalid_request() {
    for (op, len) in [
        (RC_SEND_MIDDLE, M),
        (RC_SEND_LAST, 100),
        (RC_SEND_LAST_IMM, 100),
        (RC_WRITE_MIDDLE, M),
        (RC_WRITE_LAST, 100),
        (RC_WRITE_LAST_IMM, 100),
    ] {
        let mut p = Pair::with_defaults();
        b_recv(&mut p, 1, 8192);
        let mut f = p.request(op, E);
        f.payload = pattern(len, 1);
        if matches!(op, RC_SEND_LAST_IMM | RC_WRITE_LAST_IMM) {
            f.ext.immdt = Some(7);
        }
        let out = p.inject(&f);
        assert_invalid_request(&mut p, &out, E, &format!("opcode {op:#04x}"));
    }
}

/// FIRST or ONLY (or a READ) while a SEND or WRITE message is open.
#[test]
fn first_or_only_inside_an_open_message_is_an_invalid_request() {
    for (open_send, op) in [
        (true, RC_SEND_FIRST),
        (true, RC_SEND_ONLY),
        (true, RC_WRITE_FIRST),
        (true, RC_READ_REQUEST),
        (false, RC_SEND_FIRST),
        (false, RC_WRITE_ONLY),
        (false, RC_WRITE_FIRST),
    ] {
        let mut p = Pair::with_defaults();
        b_recv(&mut p, 1, 8192);
        b_recv(&mut p, 2, 8192);
        let tgt = p.b.reg(8192, ALL);
        let first = if open_send {
            let mut f = p.request(RC_SEND_FIRST, E);
            f.payload = pattern(M, 1);
            f
        } else {
            write_first(&p, E, &tgt, 3000)
        };
        let out = p.inject(&first);
        assert_nak(&out[0], AETH_ACK, E);
        let mut f = p.request(op, E + 1);
        match op {
            RC_SEND_FIRST => f.payload = pattern(M, 2),
            RC_SEND_ONLY => f.payload = pattern(10, 2),
            RC_WRITE_FIRST => f = write_first(&p, E + 1, &tgt, 3000),
            RC_WRITE_ONLY | RC_READ_REQUEST => {
                f.ext.reth = Some(Reth {
                    va: tgt.va,
                    rkey: tgt.rkey,
                    dma_len: 10,
                });
                if op == RC_WRITE_ONLY {
                    f.payload = pattern(10, 2);
                }
            }
            _ => unreachable!(),
        }
        let out = p.inject(&f);
        let what = format!(
            "opcode {op:#04x} inside an open {}",
            ["WRITE", "SEND"][open_send as usize]
        );
        assert_invalid_request(&mut p, &out, E + 1, &what);
    }
}

/// FIRST and MIDDLE must carry exactly the path MTU, LAST 1..=MTU, ONLY 0..=MTU, a RETH at
/// most 2^31 bytes; a WRITE's packets must add up to its RETH length.
#[test]
fn length_errors_are_invalid_requests() {
    #[derive(Debug)]
    enum Case {
        SendFirst(usize),
        SendMiddle(usize),
        SendLast(usize),
        SendOnly(usize),
        WriteFirst(usize),
        WriteOnlyNotDmaLen,
        ReadTooLong,
    }
    for case in [
        Case::SendFirst(M - 1),
        Case::SendFirst(1),
        Case::SendFirst(M + 1),
        Case::SendMiddle(M - 4),
        Case::SendLast(0),
        Case::SendLast(M + 1),
        Case::SendOnly(M + 1),
        Case::WriteFirst(M / 2),
        Case::WriteOnlyNotDmaLen,
        Case::ReadTooLong,
    ] {
        let mut p = Pair::with_defaults();
        b_recv(&mut p, 1, 8192);
        let tgt = p.b.reg(8192, ALL);
        let mut psn = E;
        let open_send = |p: &mut Pair| {
            let mut f = p.request(RC_SEND_FIRST, E);
            f.payload = pattern(M, 1);
            let out = p.inject(&f);
            assert_nak(&out[0], AETH_ACK, E);
            E + 1
        };
        let f = match case {
            Case::SendFirst(n) => {
                let mut f = p.request(RC_SEND_FIRST, psn);
                f.payload = pattern(n, 1);
                f
            }
            Case::SendMiddle(n) | Case::SendLast(n) => {
                psn = open_send(&mut p);
                let op = if matches!(case, Case::SendMiddle(_)) {
                    RC_SEND_MIDDLE
                } else {
                    RC_SEND_LAST
                };
                let mut f = p.request(op, psn);
                f.payload = pattern(n, 1);
                f
            }
            Case::SendOnly(n) => {
                let mut f = p.request(RC_SEND_ONLY, psn);
                f.payload = pattern(n, 1);
                f
            }
            Case::WriteFirst(n) => {
                let mut f = write_first(&p, psn, &tgt, 4096);
                f.payload.truncate(n);
                f
            }
            Case::WriteOnlyNotDmaLen => {
                let mut f = p.request(RC_WRITE_ONLY, psn);
                f.ext.reth = Some(Reth {
                    va: tgt.va,
                    rkey: tgt.rkey,
                    dma_len: 100,
                });
                f.payload = pattern(99, 1);
                f
            }
            Case::ReadTooLong => p.read_request(psn, tgt.va, tgt.rkey, (1 << 31) + 1),
        };
        let before = p.b.mem(tgt.lkey);
        let out = p.inject(&f);
        assert_invalid_request(&mut p, &out, psn, &format!("{case:?}"));
        assert_eq!(p.b.mem(tgt.lkey), before, "{case:?}: nothing written");
    }
}

// ---------------------------------------------------------------------------------------------
// RNR: a SEND without a posted receive.
// ---------------------------------------------------------------------------------------------

/// The RNR timer table of rc-transport.md, in ns (hand-copied from the ms column).
const RNR_TABLE_NS: [u64; 32] = [
    655_360_000,
    10_000,
    20_000,
    30_000,
    40_000,
    60_000,
    80_000,
    120_000,
    160_000,
    240_000,
    320_000,
    480_000,
    640_000,
    960_000,
    1_280_000,
    1_920_000,
    2_560_000,
    3_840_000,
    5_120_000,
    7_680_000,
    10_240_000,
    15_360_000,
    20_480_000,
    30_720_000,
    40_960_000,
    61_440_000,
    81_920_000,
    122_880_000,
    163_840_000,
    245_760_000,
    327_680_000,
    491_520_000,
];

#[test]
fn rnr_timer_table_matches_the_document() {
    assert_eq!(RNR_TIMER_NS, RNR_TABLE_NS);
}

/// RNR NAK = 0x20 | min_rnr_timer with the packet's PSN; ePSN does not move, so the same
/// packet is accepted once a receive is posted. SENDs and WRITE with immediate need a
/// receive, a plain WRITE does not.
#[test]
fn send_without_a_receive_gets_an_rnr_nak() {
    for timer in [12, 1, 31, 0] {
        let mut p = Pair::new(Cfg {
            min_rnr_timer: timer,
            ..Cfg::default()
        });
        let out = p.inject(&send_only(&p, E, 16));
        assert_eq!(out.len(), 1);
        assert_nak(&out[0], AETH_RNR_NAK | timer, E);
        assert_eq!(out[0].ext.aeth.unwrap().msn, 0);
        let mut f = p.request(RC_SEND_FIRST, E);
        f.payload = pattern(M, 1);
        assert_nak(&p.inject(&f)[0], AETH_RNR_NAK | timer, E);
        assert_eq!(p.b.qp().resp.epsn, E);
        assert_eq!(p.b.state(), QpState::Rts, "RNR is not an error");
        assert_eq!(p.b.nic.counters.nak_rnr_sent, 2);
        b_recv(&mut p, 1, 64);
        assert_nak(&p.inject(&send_only(&p, E, 16))[0], AETH_ACK, E);
        assert_eq!(p.b.wcs().len(), 1);
    }
    // WRITE with immediate needs a receive; a plain WRITE does not.
    let mut p = Pair::with_defaults();
    let tgt = p.b.reg(64, ALL);
    let mut f = p.request(RC_WRITE_ONLY_IMM, E);
    f.ext.reth = Some(Reth {
        va: tgt.va,
        rkey: tgt.rkey,
        dma_len: 8,
    });
    f.ext.immdt = Some(1);
    f.payload = pattern(8, 9);
    assert_nak(&p.inject(&f)[0], AETH_RNR_NAK | 12, E);
    assert_eq!(p.b.mem(tgt.lkey), vec![0; 64]);
    f.bth.opcode = RC_WRITE_ONLY;
    f.ext.immdt = None;
    assert_nak(&p.inject(&f)[0], AETH_ACK, E);
    assert_eq!(&p.b.mem(tgt.lkey)[..8], &pattern(8, 9)[..]);
}

/// The requester waits exactly the RNR timer of the NAK's code after the NAK arrives, then
/// resends the same PSN; with rnr_retry 1 the second RNR NAK ends it.
#[test]
fn requester_waits_the_rnr_timer_then_resends() {
    for (code, wait) in [
        (1u8, 10_000u64),
        (5, 60_000),
        (12, 640_000),
        (18, 5_120_000),
        (0, 655_360_000),
        (31, 491_520_000),
    ] {
        let mut p = Pair::new(Cfg {
            min_rnr_timer: code,
            rnr_retry: 1,
            ..Cfg::default()
        });
        let src = p.a.reg_with(&pattern(64, 1), ALL);
        p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 64, src.lkey));
        p.run();
        let l = p.cfg.latency;
        let sends: Vec<(u64, u32)> = p.sent(Dir::AtoB).iter().map(|w| (w.t, w.psn())).collect();
        assert_eq!(sends, [(0, E), (2 * l + wait, E)], "code {code}");
        let naks: Vec<(u64, u8)> = p
            .sent(Dir::BtoA)
            .iter()
            .map(|w| (w.t, w.syndrome().unwrap()))
            .collect();
        assert_eq!(
            naks,
            [(l, 0x20 | code), (3 * l + wait, 0x20 | code)],
            "code {code}"
        );
        assert_eq!(wc_summary(&p.a.wcs()), [(1, WcStatus::RnrRetryExcErr)]);
    }
}

/// rnr_retry 2: three transmissions, three RNR NAKs, then IBV_WC_RNR_RETRY_EXC_ERR, the QP in
/// ERR and every later request flushed (also one posted afterwards).
#[test]
fn rnr_retry_exhausted_fails_and_flushes() {
    let mut p = Pair::new(Cfg {
        rnr_retry: 2,
        min_rnr_timer: 1,
        ..Cfg::default()
    });
    let src = p.a.reg_with(&pattern(256, 1), ALL);
    for i in 1..=3 {
        p.a.post_send(SendWr::new(i, WrOpcode::Send).sge(src.va, 64, src.lkey));
    }
    p.run();
    let rnr: Vec<u32> = p
        .sent(Dir::BtoA)
        .iter()
        .filter(|w| w.syndrome() == Some(0x21))
        .map(|w| w.psn())
        .collect();
    assert_eq!(rnr, [E, E, E]);
    let first_sends = p.sent(Dir::AtoB).iter().filter(|w| w.psn() == E).count();
    assert_eq!(first_sends, 3);
    assert_eq!(
        wc_summary(&p.a.wcs()),
        [
            (1, WcStatus::RnrRetryExcErr),
            (2, WcStatus::WrFlushErr),
            (3, WcStatus::WrFlushErr)
        ]
    );
    assert_eq!(p.a.state(), QpState::Err);
    p.a.post_send(SendWr::new(4, WrOpcode::Send).sge(src.va, 64, src.lkey));
    assert_eq!(wc_summary(&p.a.wcs()), [(4, WcStatus::WrFlushErr)]);
    let n = p.wire.len();
    p.run();
    assert_eq!(p.wire.len(), n, "a QP in ERR sends nothing");
    assert!(p.b.wcs().is_empty());
}

/// rnr_retry 7 retries forever: 17 RNR NAKs in the first 200 us (hand timeline: one round is
/// 2 x 1 us of wire plus the 10 us timer), then a receive is posted and the SEND completes.
#[test]
fn rnr_retry_7_succeeds_once_a_receive_is_posted() {
    let mut p = Pair::new(Cfg {
        rnr_retry: 7,
        min_rnr_timer: 1,
        ..Cfg::default()
    });
    let src = p.a.reg_with(&pattern(100, 4), ALL);
    p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 100, src.lkey));
    p.run_until(200_000);
    let naks: Vec<u64> = p.sent(Dir::BtoA).iter().map(|w| w.t).collect();
    assert_eq!(
        naks,
        (0..17).map(|k| 1_000 + 12_000 * k).collect::<Vec<_>>()
    );
    assert!(p.a.wcs().is_empty());
    assert_eq!(p.a.state(), QpState::Rts);
    let rbuf = b_recv(&mut p, 7, 100);
    p.run();
    assert_eq!(wc_summary(&p.a.wcs()), [(1, WcStatus::Success)]);
    assert_eq!(wc_summary(&p.b.wcs()), [(7, WcStatus::Success)]);
    assert_eq!(p.b.mem(rbuf.lkey), pattern(100, 4));
    let last = p.sent(Dir::AtoB).last().unwrap().t;
    assert_eq!(
        last,
        17 * 12_000,
        "the 18th try goes at the end of the 17th wait"
    );
}

// ---------------------------------------------------------------------------------------------
// ACK timeout: 4.096 us x 2^timeout; retry_cnt retries, then IBV_WC_RETRY_EXC_ERR.
// ---------------------------------------------------------------------------------------------

/// A peer that never answers: transmissions at 0, T, 2T, ... (retry_cnt + 1 of them) and the
/// error completion at the (retry_cnt + 1)-th timeout, (retry_cnt + 1) x T.
#[test]
fn a_silent_peer_ends_in_retry_exceeded_after_retry_cnt_plus_1_timeouts() {
    for (timeout, t_ns, retry_cnt) in [
        (14u8, 67_108_864u64, 2u8),
        (10, 4_194_304, 3),
        (1, 8_192, 0),
        (8, 1_048_576, 6),
    ] {
        let mut p = Pair::new(Cfg {
            timeout,
            retry_cnt,
            ..Cfg::default()
        });
        p.set_filter(Box::new(|_, _| Fate::Drop));
        let src = p.a.reg_with(&pattern(3000, 1), ALL);
        p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 3000, src.lkey));
        p.a.post_send(SendWr::new(2, WrOpcode::Send).sge(src.va, 10, src.lkey));
        let n = u64::from(retry_cnt) + 1;
        p.run_until(n * t_ns - 1);
        assert!(p.a.wcs().is_empty(), "timeout {timeout}: not yet");
        p.run_until(n * t_ns);
        assert_eq!(
            wc_summary(&p.a.wcs()),
            [(1, WcStatus::RetryExcErr), (2, WcStatus::WrFlushErr)],
            "timeout {timeout}"
        );
        assert_eq!(p.a.state(), QpState::Err);
        // Every round resends the whole window from the oldest PSN: 3 + 1 packets.
        let times: Vec<u64> = p
            .sent(Dir::AtoB)
            .iter()
            .filter(|w| w.psn() == E)
            .map(|w| w.t)
            .collect();
        assert_eq!(
            times,
            (0..n).map(|k| k * t_ns).collect::<Vec<_>>(),
            "timeout {timeout}"
        );
        assert_eq!(p.sent(Dir::AtoB).len() as u64, 4 * n);
        let c = &p.a.nic.counters;
        assert_eq!((c.comp_timeouts, c.req_retransmitted), (n, 4 * (n - 1)));
        p.run();
        assert_eq!(
            p.sent(Dir::AtoB).len() as u64,
            4 * n,
            "nothing after the error"
        );
    }
}

/// retry_cnt 7 never runs out (rxe): ten lost tries and the eleventh succeeds, where
/// retry_cnt 6 fails after seven timeouts.
#[test]
fn retry_cnt_7_retries_forever() {
    for (retry_cnt, ok) in [(7u8, true), (6, false)] {
        let mut p = Pair::new(Cfg {
            timeout: 1,
            retry_cnt,
            ..Cfg::default()
        });
        p.set_filter(drop_first(Dir::AtoB, 10, |_| true));
        let src = p.a.reg_with(&pattern(64, 1), ALL);
        b_recv(&mut p, 5, 64);
        p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 64, src.lkey));
        p.run();
        let wcs = p.a.wcs();
        if ok {
            assert_eq!(wc_summary(&wcs), [(1, WcStatus::Success)]);
            assert_eq!(p.a.nic.counters.comp_timeouts, 10);
            assert_eq!(p.sent(Dir::AtoB).len(), 11);
        } else {
            assert_eq!(wc_summary(&wcs), [(1, WcStatus::RetryExcErr)]);
            assert_eq!(p.a.nic.counters.comp_timeouts, 7);
            assert_eq!(p.sent(Dir::AtoB).len(), 7);
        }
    }
}

/// timeout 0 disables the ACK timer: a lost request is never retried.
#[test]
fn timeout_0_disables_the_ack_timer() {
    let mut p = Pair::new(Cfg {
        timeout: 0,
        ..Cfg::default()
    });
    p.set_filter(Box::new(|_, _| Fate::Drop));
    let src = p.a.reg_with(&pattern(64, 1), ALL);
    p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 64, src.lkey));
    p.run();
    assert_eq!(p.a.nic.next_deadline(), None);
    assert_eq!(p.sent(Dir::AtoB).len(), 1);
    assert!(p.a.wcs().is_empty());
    assert_eq!(p.a.state(), QpState::Rts);
}

// ---------------------------------------------------------------------------------------------
// Remote access: R_Key, PD, rights, bounds, alignment (rdma-core pyverbs / rdma-unit-test).
// ---------------------------------------------------------------------------------------------

/// The remote operations of the access matrix.
#[derive(Clone, Copy, Debug, PartialEq)]
enum RemoteOp {
    Write,
    Read,
    CmpSwap,
    FetchAdd,
}

impl RemoteOp {
    const ALL: [RemoteOp; 4] = [
        RemoteOp::Write,
        RemoteOp::Read,
        RemoteOp::CmpSwap,
        RemoteOp::FetchAdd,
    ];

    /// The MR right each needs.
    fn right(self) -> Access {
        match self {
            RemoteOp::Write => Access::REMOTE_WRITE,
            RemoteOp::Read => Access::REMOTE_READ,
            _ => Access::REMOTE_ATOMIC,
        }
    }

    fn opcode(self) -> WrOpcode {
        match self {
            RemoteOp::Write => WrOpcode::RdmaWrite,
            RemoteOp::Read => WrOpcode::RdmaRead,
            RemoteOp::CmpSwap => WrOpcode::AtomicCmpAndSwp,
            RemoteOp::FetchAdd => WrOpcode::AtomicFetchAndAdd,
        }
    }

    /// A work request of `len` bytes (8 for atomics) between A's `local` and `va`/`rkey`.
    fn wr(self, local: &MrInfo, len: u32, va: u64, rkey: u32) -> SendWr {
        let len = if matches!(self, RemoteOp::Write | RemoteOp::Read) {
            len
        } else {
            8
        };
        SendWr::new(1, self.opcode())
            .sge(local.va, len, local.lkey)
            .remote(va, rkey)
            .atomic(0, 0x77)
    }
}

/// A refused remote access: NAK `syn` for PSN E, A's WC `status` and A in ERR, B in ERR, and
/// not one byte changed in any of `b_mrs` (whole buffers) or in A's local buffer.
fn check_refused(
    p: &mut Pair,
    syn: u8,
    status: WcStatus,
    b_mrs: &[(u32, Vec<u8>)],
    local: &MrInfo,
    local_before: &[u8],
    what: &str,
) {
    let naks: Vec<&Wired> = p
        .sent(Dir::BtoA)
        .into_iter()
        .filter(|w| w.opcode() == RC_ACKNOWLEDGE)
        .collect();
    assert_eq!(naks.len(), 1, "{what}");
    assert_nak(&naks[0].frame, syn, E);
    assert!(
        p.sent(Dir::BtoA)
            .iter()
            .all(|w| w.opcode() == RC_ACKNOWLEDGE),
        "{what}: no READ response or atomic ACK"
    );
    let wcs = p.a.wcs();
    assert_eq!(wc_summary(&wcs), [(1, status)], "{what}");
    assert_eq!(p.a.state(), QpState::Err, "{what}");
    assert_eq!(p.b.state(), QpState::Err, "{what}");
    for (key, before) in b_mrs {
        assert!(p.b.mem(*key) == *before, "{what}: B's MR {key:#x} changed");
    }
    assert!(
        p.a.mem(local.lkey) == local_before,
        "{what}: A's buffer changed"
    );
}

/// Every operation against MRs with every single right (and all of them): it succeeds with
/// the right it needs and is refused with NAK 0x62 / IBV_WC_REM_ACCESS_ERR without it.
#[test]
fn access_matrix_of_mr_rights() {
    let rights = [
        Access::LOCAL_WRITE,
        Access::LOCAL_WRITE | Access::REMOTE_WRITE,
        Access::REMOTE_READ,
        Access::LOCAL_WRITE | Access::REMOTE_READ,
        Access::LOCAL_WRITE | Access::REMOTE_ATOMIC,
        ALL,
    ];
    let mut refused = 0;
    for op in RemoteOp::ALL {
        for has in rights {
            let what = format!("{op:?} on an MR with {has}");
            let mut p = Pair::with_defaults();
            let local = p.a.reg_with(&pattern(64, 1), ALL);
            let tgt = p.b.reg_in(p.b.pd, 64, has);
            let tgt_bytes = pattern(64, 2);
            p.b.set(tgt.lkey, 0, &tgt_bytes);
            p.a.post_send(op.wr(&local, 16, tgt.va + 8, tgt.rkey));
            p.run();
            if has.contains(op.right()) {
                let wcs = p.a.wcs();
                assert_eq!(wc_summary(&wcs), [(1, WcStatus::Success)], "{what}");
                let (a, b) = (p.a.mem(local.lkey), p.b.mem(tgt.lkey));
                match op {
                    RemoteOp::Write => assert_eq!(b[8..24], pattern(64, 1)[..16], "{what}"),
                    RemoteOp::Read => assert_eq!(a[..16], tgt_bytes[8..24], "{what}"),
                    _ => assert_eq!(a[..8], tgt_bytes[8..16], "{what}: original returned"),
                }
            } else {
                refused += 1;
                check_refused(
                    &mut p,
                    AETH_NAK_REM_ACCESS,
                    WcStatus::RemAccessErr,
                    &[(tgt.lkey, tgt_bytes)],
                    &local,
                    &pattern(64, 1),
                    &what,
                );
            }
        }
    }
    // Hand count: WRITE is refused by 4 of the 6 right sets, READ by 3, each atomic by 4.
    assert_eq!(refused, 15);
}

/// Bad R_Key (wrong tag, deregistered, 0), an MR of another PD, one byte past the end or
/// before the start: NAK 0x62, IBV_WC_REM_ACCESS_ERR, both QPs in ERR, no byte written,
/// also not by the first packets of a multi-packet WRITE.
#[test]
fn bad_rkey_wrong_pd_and_out_of_bounds_are_remote_access_errors() {
    #[derive(Clone, Copy, Debug)]
    enum Bad {
        TagPlusOne,
        Deregistered,
        KeyZero,
        OtherPd,
        OnePastTheEnd,
        OneBeforeTheStart,
    }
    for op in RemoteOp::ALL {
        for bad in [
            Bad::TagPlusOne,
            Bad::Deregistered,
            Bad::KeyZero,
            Bad::OtherPd,
            Bad::OnePastTheEnd,
            Bad::OneBeforeTheStart,
        ] {
            let what = format!("{op:?} with {bad:?}");
            let mut p = Pair::with_defaults();
            let local = p.a.reg_with(&pattern(4096, 1), ALL);
            // Atomics: a 63-byte MR, so that an aligned 8 bytes at +56 pass its end by one
            // (and, aligned, "before the start" is the word at -8).
            let len: u64 = if matches!(op, RemoteOp::Write | RemoteOp::Read) {
                4096
            } else {
                63
            };
            let tgt = p.b.reg(len, ALL);
            let other_pd = p.b.nic.alloc_pd();
            let other = p.b.reg_in(other_pd, len, ALL);
            let gone = p.b.reg(len, ALL);
            p.b.nic.dereg_mr(gone.rkey).unwrap();
            let mut b_mrs = Vec::new();
            for (i, mr) in [&tgt, &other].into_iter().enumerate() {
                p.b.set(mr.lkey, 0, &pattern(len as usize, 10 + i as u8));
                b_mrs.push((mr.lkey, pattern(len as usize, 10 + i as u8)));
            }
            let n = 3000u32; // 3 packets for WRITE and READ
            let (va, rkey) = match bad {
                Bad::TagPlusOne => (tgt.va, tgt.rkey + 1),
                Bad::Deregistered => (gone.va, gone.rkey),
                Bad::KeyZero => (tgt.va, 0),
                Bad::OtherPd => (other.va, other.rkey),
                Bad::OnePastTheEnd if len == 63 => (tgt.va + 56, tgt.rkey),
                Bad::OnePastTheEnd => (tgt.va + len - u64::from(n) + 1, tgt.rkey),
                Bad::OneBeforeTheStart if len == 63 => (tgt.va - 8, tgt.rkey),
                Bad::OneBeforeTheStart => (tgt.va - 1, tgt.rkey),
            };
            p.a.post_send(op.wr(&local, n, va, rkey));
            p.run();
            check_refused(
                &mut p,
                AETH_NAK_REM_ACCESS,
                WcStatus::RemAccessErr,
                &b_mrs,
                &local,
                &pattern(4096, 1),
                &what,
            );
            // The WRITE's three packets all reached B; none wrote anything.
            if op == RemoteOp::Write {
                assert_eq!(p.sent(Dir::AtoB).len(), 3, "{what}");
            }
        }
    }
}

/// A bad L_Key (wrong tag, out of the MR's bounds, or a READ into an MR without
/// LOCAL_WRITE): IBV_WC_LOC_PROT_ERR, the QP in ERR, nothing on the wire, later WRs flushed.
#[test]
fn bad_lkey_is_a_local_protection_error() {
    for case in 0..4 {
        let mut p = Pair::with_defaults();
        let local = p.a.reg_with(&pattern(256, 1), ALL);
        let ro = p.a.reg_with(&pattern(256, 2), Access::REMOTE_READ);
        let tgt = p.b.reg_with(&pattern(256, 3), ALL);
        let wr = match case {
            0 => SendWr::new(1, WrOpcode::Send).sge(local.va, 64, local.lkey + 1),
            1 => SendWr::new(1, WrOpcode::Send).sge(local.va + 200, 57, local.lkey),
            2 => SendWr::new(1, WrOpcode::RdmaWrite)
                .sge(local.va, 64, local.lkey)
                .sge(local.va - 1, 8, local.lkey)
                .remote(tgt.va, tgt.rkey),
            _ => SendWr::new(1, WrOpcode::RdmaRead)
                .sge(ro.va, 64, ro.lkey)
                .remote(tgt.va, tgt.rkey),
        };
        p.a.post_send(wr);
        p.a.post_send(SendWr::new(2, WrOpcode::Send).sge(local.va, 8, local.lkey));
        p.run();
        assert_eq!(
            wc_summary(&p.a.wcs()),
            [(1, WcStatus::LocProtErr), (2, WcStatus::WrFlushErr)],
            "case {case}"
        );
        assert_eq!(p.a.state(), QpState::Err);
        assert!(p.wire.is_empty(), "case {case}: nothing sent");
        assert_eq!(p.b.mem(tgt.lkey), pattern(256, 3));
        assert_eq!(p.a.mem(ro.lkey), pattern(256, 2));
    }
}

/// Atomics need 8-byte alignment: NAK 0x61, IBV_WC_REM_INV_REQ_ERR (as rxe), nothing written.
#[test]
fn unaligned_atomics_are_invalid_requests() {
    for op in [RemoteOp::CmpSwap, RemoteOp::FetchAdd] {
        for off in [1u64, 4, 7] {
            let mut p = Pair::with_defaults();
            let local = p.a.reg_with(&pattern(64, 1), ALL);
            let tgt = p.b.reg_with(&[0; 64], ALL);
            p.a.post_send(op.wr(&local, 8, tgt.va + 8 + off, tgt.rkey));
            p.run();
            check_refused(
                &mut p,
                AETH_NAK_INV_REQ,
                WcStatus::RemInvReqErr,
                &[(tgt.lkey, vec![0; 64])],
                &local,
                &pattern(64, 1),
                &format!("{op:?} at +{off}"),
            );
        }
    }
}

/// Remote operations the responder QP does not enable (its access flags, not the MR's) are
/// invalid requests in rxe: NAK 0x61, IBV_WC_REM_INV_REQ_ERR.
#[test]
fn operations_the_qp_does_not_enable_are_invalid_requests() {
    for op in RemoteOp::ALL {
        let mut p = Pair::new(Cfg {
            access: Access(REMOTE_ALL.0 & !op.right().0),
            ..Cfg::default()
        });
        let local = p.a.reg_with(&pattern(64, 1), ALL);
        let tgt = p.b.reg_with(&pattern(64, 2), ALL);
        p.a.post_send(op.wr(&local, 16, tgt.va, tgt.rkey));
        p.run();
        check_refused(
            &mut p,
            AETH_NAK_INV_REQ,
            WcStatus::RemInvReqErr,
            &[(tgt.lkey, pattern(64, 2))],
            &local,
            &pattern(64, 1),
            &format!("{op:?}"),
        );
    }
}

/// A zero-byte RDMA WRITE with immediate needs no R_Key or MR: B completes its receive with
/// IBV_WC_RECV_RDMA_WITH_IMM, 0 bytes and the immediate; the receive buffer is untouched.
#[test]
fn zero_byte_write_with_immediate_needs_no_rkey() {
    for rkey in [0, 0xDEAD_BEEF] {
        let mut p = Pair::with_defaults();
        let rbuf = b_recv(&mut p, 7, 64);
        p.a.post_send(
            SendWr::new(1, WrOpcode::RdmaWriteWithImm)
                .remote(0x1234, rkey)
                .imm(0x1234_5678),
        );
        p.run();
        let req = p.sent(Dir::AtoB);
        assert_eq!(req.len(), 1);
        assert_eq!((req[0].opcode(), req[0].psn()), (RC_WRITE_ONLY_IMM, E));
        assert_eq!(req[0].frame.ext.reth.unwrap().dma_len, 0);
        assert_eq!(req[0].frame.ext.immdt, Some(0x1234_5678));
        let wa = p.a.wcs();
        assert_eq!(
            (wa[0].status, wa[0].opcode, wa[0].byte_len),
            (WcStatus::Success, WcOpcode::RdmaWrite, 0)
        );
        let wb = p.b.wcs();
        assert_eq!(wb.len(), 1);
        let w = &wb[0];
        assert_eq!(
            (w.wr_id, w.status, w.opcode, w.byte_len, w.imm),
            (
                7,
                WcStatus::Success,
                WcOpcode::RecvRdmaWithImm,
                0,
                0x1234_5678
            )
        );
        assert!(w.flags.contains(WcFlags::WITH_IMM));
        assert_eq!(p.b.mem(rbuf.lkey), vec![0; 64]);
        assert_eq!(p.b.state(), QpState::Rts);
    }
}

/// A receive WQE the NIC may not write (bad L_Key) is malformed: NAK 0x63 for the SEND,
/// IBV_WC_REM_OP_ERR at the requester; a receive too short for the SEND is a length error:
/// NAK 0x61 and IBV_WC_LOC_LEN_ERR at the responder.
#[test]
fn malformed_or_short_receive_wqes() {
    let mut p = Pair::with_defaults();
    let src = p.a.reg_with(&pattern(100, 1), ALL);
    let rbuf = p.b.reg(64, ALL);
    p.b.post_recv(RecvWr::new(7).sge(rbuf.va, 64, rbuf.lkey + 1));
    p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 10, src.lkey));
    p.run();
    let naks: Vec<_> = p
        .sent(Dir::BtoA)
        .iter()
        .map(|w| (w.syndrome(), w.psn()))
        .collect();
    assert_eq!(naks, [(Some(AETH_NAK_REM_OP), E)]);
    assert_eq!(wc_summary(&p.a.wcs()), [(1, WcStatus::RemOpErr)]);
    assert_eq!(p.b.state(), QpState::Err);
    assert_eq!(wc_summary(&p.b.wcs()), [(7, WcStatus::LocQpOpErr)]);

    let mut p = Pair::with_defaults();
    let src = p.a.reg_with(&pattern(100, 1), ALL);
    let rbuf = b_recv(&mut p, 7, 64);
    p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 100, src.lkey));
    p.run();
    let naks: Vec<_> = p
        .sent(Dir::BtoA)
        .iter()
        .map(|w| (w.syndrome(), w.psn()))
        .collect();
    assert_eq!(naks, [(Some(AETH_NAK_INV_REQ), E)]);
    assert_eq!(wc_summary(&p.a.wcs()), [(1, WcStatus::RemInvReqErr)]);
    assert_eq!(wc_summary(&p.b.wcs()), [(7, WcStatus::LocLenErr)]);
    assert_eq!(
        p.b.mem(rbuf.lkey),
        vec![0; 64],
        "nothing of a refused SEND is written"
    );
}

// ---------------------------------------------------------------------------------------------
// Operations end to end, with the data and the packets worked out by hand.
// ---------------------------------------------------------------------------------------------

/// (opcode, PSN, payload length, AckReq) of every frame in `dir` that is not an ACK.
fn packets(p: &Pair, dir: Dir) -> Vec<(u8, u32, usize, bool)> {
    p.sent(dir)
        .iter()
        .filter(|w| w.opcode() != RC_ACKNOWLEDGE)
        .map(|w| {
            (
                w.opcode(),
                w.psn(),
                w.frame.payload.len(),
                w.frame.bth.ack_req,
            )
        })
        .collect()
}

/// (PSN, syndrome, MSN) of every ACK in `dir`.
fn acks(p: &Pair, dir: Dir) -> Vec<(u32, u8, u32)> {
    p.sent(dir)
        .iter()
        .filter(|w| w.opcode() == RC_ACKNOWLEDGE)
        .map(|w| {
            let a = w.frame.ext.aeth.unwrap();
            (w.psn(), a.syndrome, a.msn)
        })
        .collect()
}

/// A 3000-byte SEND at MTU 1024: FIRST 1024, MIDDLE 1024, LAST 952 with AckReq; one ACK for
/// the last PSN with MSN 1; the receive gets every byte.
#[test]
fn send_multi_packet() {
    let mut p = Pair::with_defaults();
    let src = p.a.reg_with(&pattern(3000, 1), ALL);
    let rbuf = b_recv(&mut p, 9, 4096);
    p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 3000, src.lkey));
    p.run();
    assert_eq!(
        packets(&p, Dir::AtoB),
        [
            (RC_SEND_FIRST, E, 1024, false),
            (RC_SEND_MIDDLE, E + 1, 1024, false),
            (RC_SEND_LAST, E + 2, 952, true)
        ]
    );
    assert_eq!(acks(&p, Dir::BtoA), [(E + 2, AETH_ACK, 1)]);
    let wa = p.a.wcs();
    assert_eq!(
        (
            wa[0].wr_id,
            wa[0].status,
            wa[0].opcode,
            wa[0].byte_len,
            wa[0].qp_num
        ),
        (1, WcStatus::Success, WcOpcode::Send, 3000, p.a.qpn)
    );
    let wb = p.b.wcs();
    assert_eq!(
        (
            wb[0].wr_id,
            wb[0].status,
            wb[0].opcode,
            wb[0].byte_len,
            wb[0].qp_num
        ),
        (9, WcStatus::Success, WcOpcode::Recv, 3000, p.b.qpn)
    );
    assert!(!wb[0].flags.contains(WcFlags::WITH_IMM));
    let mut want = pattern(3000, 1);
    want.resize(4096, 0);
    assert_eq!(p.b.mem(rbuf.lkey), want);
}

/// SEND with immediate: the immediate rides on the ONLY or LAST packet and reaches the
/// receive completion.
#[test]
fn send_with_immediate() {
    let mut p = Pair::with_defaults();
    let src = p.a.reg_with(&pattern(1500, 1), ALL);
    let r1 = b_recv(&mut p, 1, 2048);
    let r2 = b_recv(&mut p, 2, 2048);
    p.a.post_send(
        SendWr::new(1, WrOpcode::SendWithImm)
            .sge(src.va, 10, src.lkey)
            .imm(0xCAFE),
    );
    p.a.post_send(
        SendWr::new(2, WrOpcode::SendWithImm)
            .sge(src.va, 1500, src.lkey)
            .imm(0xBEEF),
    );
    p.run();
    assert_eq!(
        packets(&p, Dir::AtoB),
        [
            (RC_SEND_ONLY_IMM, E, 10, true),
            (RC_SEND_FIRST, E + 1, 1024, false),
            (RC_SEND_LAST_IMM, E + 2, 476, true)
        ]
    );
    let imms: Vec<_> = p
        .sent(Dir::AtoB)
        .iter()
        .map(|w| w.frame.ext.immdt)
        .collect();
    assert_eq!(imms, [Some(0xCAFE), None, Some(0xBEEF)]);
    let wb = p.b.wcs();
    let got: Vec<_> = wb
        .iter()
        .map(|w| {
            (
                w.wr_id,
                w.opcode,
                w.byte_len,
                w.imm,
                w.flags.contains(WcFlags::WITH_IMM),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (1, WcOpcode::Recv, 10, 0xCAFE, true),
            (2, WcOpcode::Recv, 1500, 0xBEEF, true)
        ]
    );
    assert_eq!(p.b.mem(r1.lkey)[..10], pattern(1500, 1)[..10]);
    assert_eq!(p.b.mem(r2.lkey)[..1500], pattern(1500, 1)[..]);
    assert_eq!(
        wc_summary(&p.a.wcs()),
        [(1, WcStatus::Success), (2, WcStatus::Success)]
    );
}

/// RDMA WRITE: RETH only on FIRST (VA, R_Key, whole length), bytes land at VA and nowhere
/// else, no receive consumed; WRITE with immediate consumes one and reports the length.
#[test]
fn rdma_write_and_write_with_immediate() {
    let mut p = Pair::with_defaults();
    let src = p.a.reg_with(&pattern(4096, 1), ALL);
    let tgt = p.b.reg_with(&pattern(8192, 2), ALL);
    let rbuf = b_recv(&mut p, 5, 64);
    p.a.post_send(
        SendWr::new(1, WrOpcode::RdmaWrite)
            .sge(src.va, 2500, src.lkey)
            .remote(tgt.va + 100, tgt.rkey),
    );
    p.a.post_send(
        SendWr::new(2, WrOpcode::RdmaWriteWithImm)
            .sge(src.va + 2500, 1500, src.lkey)
            .remote(tgt.va + 5000, tgt.rkey)
            .imm(0x0102_0304),
    );
    p.run();
    assert_eq!(
        packets(&p, Dir::AtoB),
        [
            (RC_WRITE_FIRST, E, 1024, false),
            (RC_WRITE_MIDDLE, E + 1, 1024, false),
            (RC_WRITE_LAST, E + 2, 452, true),
            (RC_WRITE_FIRST, E + 3, 1024, false),
            (RC_WRITE_LAST_IMM, E + 4, 476, true),
        ]
    );
    let reths: Vec<_> = p
        .sent(Dir::AtoB)
        .iter()
        .map(|w| w.frame.ext.reth.map(|r| (r.va, r.rkey, r.dma_len)))
        .collect();
    assert_eq!(
        reths,
        [
            Some((tgt.va + 100, tgt.rkey, 2500)),
            None,
            None,
            Some((tgt.va + 5000, tgt.rkey, 1500)),
            None
        ]
    );
    assert_eq!(
        acks(&p, Dir::BtoA),
        [(E + 2, AETH_ACK, 1), (E + 4, AETH_ACK, 2)]
    );
    let mut want = pattern(8192, 2);
    want[100..2600].copy_from_slice(&pattern(4096, 1)[..2500]);
    want[5000..6500].copy_from_slice(&pattern(4096, 1)[2500..4000]);
    assert_eq!(p.b.mem(tgt.lkey), want);
    let wb = p.b.wcs();
    let got: Vec<_> = wb
        .iter()
        .map(|w| (w.wr_id, w.opcode, w.byte_len, w.imm))
        .collect();
    assert_eq!(got, [(5, WcOpcode::RecvRdmaWithImm, 1500, 0x0102_0304)]);
    assert_eq!(
        p.b.mem(rbuf.lkey),
        vec![0; 64],
        "the receive buffer is not written"
    );
    let wa: Vec<_> =
        p.a.wcs()
            .iter()
            .map(|w| (w.wr_id, w.opcode, w.byte_len))
            .collect();
    assert_eq!(
        wa,
        [
            (1, WcOpcode::RdmaWrite, 2500),
            (2, WcOpcode::RdmaWrite, 1500)
        ]
    );
}

/// A 2500-byte READ takes 3 PSNs: responses FIRST (AETH) 1024, MIDDLE (no AETH) 1024, LAST
/// (AETH) 452 at PSNs E..E+2, MSN 1; the next request gets PSN E+3.
#[test]
fn rdma_read_multi_packet() {
    let mut p = Pair::with_defaults();
    let dst = p.a.reg(4096, ALL);
    let src = p.a.reg_with(&pattern(16, 5), ALL);
    let tgt = p.b.reg_with(&pattern(8192, 3), ALL);
    b_recv(&mut p, 5, 64);
    p.a.post_send(
        SendWr::new(1, WrOpcode::RdmaRead)
            .sge(dst.va + 10, 2500, dst.lkey)
            .remote(tgt.va + 300, tgt.rkey),
    );
    p.a.post_send(SendWr::new(2, WrOpcode::Send).sge(src.va, 16, src.lkey));
    p.run();
    let req = p.sent(Dir::AtoB);
    assert_eq!((req[0].opcode(), req[0].psn()), (RC_READ_REQUEST, E));
    let r = req[0].frame.ext.reth.unwrap();
    assert_eq!((r.va, r.rkey, r.dma_len), (tgt.va + 300, tgt.rkey, 2500));
    assert_eq!((req[1].opcode(), req[1].psn()), (RC_SEND_ONLY, E + 3));
    assert_eq!(
        packets(&p, Dir::BtoA),
        [
            (RC_READ_RESPONSE_FIRST, E, 1024, false),
            (RC_READ_RESPONSE_MIDDLE, E + 1, 1024, false),
            (RC_READ_RESPONSE_LAST, E + 2, 452, false)
        ]
    );
    let aeths: Vec<_> = p
        .sent(Dir::BtoA)
        .iter()
        .map(|w| w.frame.ext.aeth.map(|a| (a.syndrome, a.msn)))
        .collect();
    assert_eq!(
        aeths,
        [
            Some((AETH_ACK, 1)),
            None,
            Some((AETH_ACK, 1)),
            Some((AETH_ACK, 2))
        ]
    );
    let mut want = vec![0; 4096];
    want[10..2510].copy_from_slice(&pattern(8192, 3)[300..2800]);
    assert_eq!(p.a.mem(dst.lkey), want);
    let wa: Vec<_> =
        p.a.wcs()
            .iter()
            .map(|w| (w.wr_id, w.status, w.opcode, w.byte_len))
            .collect();
    assert_eq!(
        wa,
        [
            (1, WcStatus::Success, WcOpcode::RdmaRead, 2500),
            (2, WcStatus::Success, WcOpcode::Send, 16)
        ]
    );
    assert_eq!(p.b.mem(tgt.lkey), pattern(8192, 3), "a READ writes nothing");
}

fn word(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

/// CMP_AND_SWP swaps only when the compare value matches and always returns the original;
/// FETCH_AND_ADD adds (wrapping) and returns the original. Each gets an ATOMIC_ACKNOWLEDGE
/// with the original value and the MSN.
#[test]
fn atomics_compare_swap_and_fetch_add() {
    let mut p = Pair::with_defaults();
    let res = p.a.reg(64, ALL);
    let tgt = p.b.reg(16, ALL);
    p.b.set(tgt.lkey, 0, &0x1111_2222_3333_4444u64.to_le_bytes());
    p.b.set(tgt.lkey, 8, &40u64.to_le_bytes());
    let cas = |id, at, cmp, swap| {
        SendWr::new(id, WrOpcode::AtomicCmpAndSwp)
            .sge(res.va + at, 8, res.lkey)
            .remote(tgt.va, tgt.rkey)
            .atomic(cmp, swap)
    };
    let faa = |id, at, add| {
        SendWr::new(id, WrOpcode::AtomicFetchAndAdd)
            .sge(res.va + at, 8, res.lkey)
            .remote(tgt.va + 8, tgt.rkey)
            .atomic(add, 0)
    };
    p.a.post_send(cas(1, 0, 0x1111_2222_3333_4444, 0xAAAA)); // matches: swapped
    p.a.post_send(cas(2, 8, 5, 0xBBBB)); // does not match: unchanged
    p.a.post_send(faa(3, 16, 2)); // 40 -> 42
    p.a.post_send(faa(4, 24, u64::MAX)); // 42 -> 41 (wraps)
    p.run();
    let m = p.b.mem(tgt.lkey);
    assert_eq!((word(&m, 0), word(&m, 8)), (0xAAAA, 41));
    let r = p.a.mem(res.lkey);
    assert_eq!(
        [word(&r, 0), word(&r, 8), word(&r, 16), word(&r, 24)],
        [0x1111_2222_3333_4444, 0xAAAA, 40, 42]
    );
    let req: Vec<_> = p
        .sent(Dir::AtoB)
        .iter()
        .map(|w| (w.opcode(), w.psn(), w.frame.ext.atomic_eth.unwrap()))
        .collect();
    let eth = |va, swap_add, compare| AtomicEth {
        va,
        rkey: tgt.rkey,
        swap_add,
        compare,
    };
    assert_eq!(
        req,
        [
            (
                RC_COMPARE_SWAP,
                E,
                eth(tgt.va, 0xAAAA, 0x1111_2222_3333_4444)
            ),
            (RC_COMPARE_SWAP, E + 1, eth(tgt.va, 0xBBBB, 5)),
            (RC_FETCH_ADD, E + 2, eth(tgt.va + 8, 2, 0)),
            (RC_FETCH_ADD, E + 3, eth(tgt.va + 8, u64::MAX, 0)),
        ]
    );
    let resp: Vec<_> = p
        .sent(Dir::BtoA)
        .iter()
        .map(|w| {
            (
                w.opcode(),
                w.psn(),
                w.frame.ext.aeth.unwrap().msn,
                w.frame.ext.atomic_ack_eth.unwrap().orig,
            )
        })
        .collect();
    assert_eq!(
        resp,
        [
            (RC_ATOMIC_ACKNOWLEDGE, E, 1, 0x1111_2222_3333_4444),
            (RC_ATOMIC_ACKNOWLEDGE, E + 1, 2, 0xAAAA),
            (RC_ATOMIC_ACKNOWLEDGE, E + 2, 3, 40),
            (RC_ATOMIC_ACKNOWLEDGE, E + 3, 4, 42),
        ]
    );
    let wa: Vec<_> =
        p.a.wcs()
            .iter()
            .map(|w| (w.wr_id, w.opcode, w.byte_len))
            .collect();
    assert_eq!(
        wa,
        [
            (1, WcOpcode::CompSwap, 8),
            (2, WcOpcode::CompSwap, 8),
            (3, WcOpcode::FetchAdd, 8),
            (4, WcOpcode::FetchAdd, 8)
        ]
    );
}

/// Scatter/gather lists of several SGEs from several MRs: a SEND gathered from three pieces
/// lands across three receive SGEs; a WRITE gathers, a READ scatters.
#[test]
fn scatter_gather_lists() {
    let mut p = Pair::with_defaults();
    let m1 = p.a.reg_with(&pattern(4096, 1), ALL);
    let m2 = p.a.reg_with(&pattern(4096, 2), ALL);
    let (s1, s2) = (pattern(4096, 1), pattern(4096, 2));
    let mut msg = s1[10..110].to_vec();
    msg.extend_from_slice(&s2[..1500]);
    msg.extend_from_slice(&s1[500..1200]);
    assert_eq!(msg.len(), 2300);
    let r1 = p.b.reg(4096, ALL);
    let r2 = p.b.reg(512, ALL);
    p.b.post_recv(
        RecvWr::new(9)
            .sge(r1.va + 5, 1000, r1.lkey)
            .sge(r2.va, 300, r2.lkey)
            .sge(r1.va + 2000, 2000, r1.lkey),
    );
    p.a.post_send(
        SendWr::new(1, WrOpcode::Send)
            .sge(m1.va + 10, 100, m1.lkey)
            .sge(m2.va, 1500, m2.lkey)
            .sge(m1.va + 500, 700, m1.lkey),
    );
    let tgt = p.b.reg_with(&pattern(4096, 3), ALL);
    p.a.post_send(
        SendWr::new(2, WrOpcode::RdmaWrite)
            .sge(m2.va + 4000, 96, m2.lkey)
            .sge(m1.va, 1100, m1.lkey)
            .remote(tgt.va + 8, tgt.rkey),
    );
    let d1 = p.a.reg(2048, ALL);
    let d2 = p.a.reg(2048, ALL);
    p.a.post_send(
        SendWr::new(3, WrOpcode::RdmaRead)
            .sge(d1.va + 1, 1030, d1.lkey)
            .sge(d2.va, 70, d2.lkey)
            .remote(tgt.va + 2000, tgt.rkey),
    );
    p.run();
    assert_eq!(
        wc_summary(&p.a.wcs()),
        [
            (1, WcStatus::Success),
            (2, WcStatus::Success),
            (3, WcStatus::Success)
        ]
    );
    assert_eq!(p.b.wcs()[0].byte_len, 2300);
    let mut want1 = vec![0; 4096];
    want1[5..1005].copy_from_slice(&msg[..1000]);
    want1[2000..3000].copy_from_slice(&msg[1300..]);
    let mut want2 = vec![0; 512];
    want2[..300].copy_from_slice(&msg[1000..1300]);
    assert_eq!(p.b.mem(r1.lkey), want1);
    assert_eq!(p.b.mem(r2.lkey), want2);
    let mut t = pattern(4096, 3);
    t[8..104].copy_from_slice(&s2[4000..4096]);
    t[104..1204].copy_from_slice(&s1[..1100]);
    assert_eq!(p.b.mem(tgt.lkey), t);
    let mut w1 = vec![0; 2048];
    w1[1..1031].copy_from_slice(&t[2000..3030]);
    let mut w2 = vec![0; 2048];
    w2[..70].copy_from_slice(&t[3030..3100]);
    assert_eq!(p.a.mem(d1.lkey), w1);
    assert_eq!(p.a.mem(d2.lkey), w2);
}

/// Unsignaled work requests complete without a completion entry (success only).
#[test]
fn unsignaled_requests_produce_no_completion() {
    let mut p = Pair::with_defaults();
    let src = p.a.reg_with(&pattern(64, 1), ALL);
    let tgt = p.b.reg(64, ALL);
    for id in 1..=5u64 {
        let flags = if id % 2 == 0 {
            SendFlags::NONE
        } else {
            SendFlags::SIGNALED
        };
        p.a.post_send(
            SendWr::new(id, WrOpcode::RdmaWrite)
                .sge(src.va, 8, src.lkey)
                .remote(tgt.va + 8 * id, tgt.rkey)
                .flags(flags),
        );
    }
    p.run();
    assert_eq!(
        wc_summary(&p.a.wcs()),
        [
            (1, WcStatus::Success),
            (3, WcStatus::Success),
            (5, WcStatus::Success)
        ]
    );
    assert_eq!(p.sent(Dir::AtoB).len(), 5, "all five were sent");
    assert!(p.a.qp().sq.is_empty(), "all five left the send queue");
}

/// AckReq on the last packet of each message and at least every `ack_every` packets: a
/// 200-packet SEND at MTU 256 asks at offsets 63, 127, 191 and 199; the next 3-packet
/// message only at its last. With ack_every 4, a 10-packet message asks at 3, 7 and 9.
#[test]
fn ack_req_on_the_last_packet_and_every_64_packets() {
    for (ack_every, first, want) in [
        (64u32, 200u32, vec![63u32, 127, 191, 199, 202]),
        (4, 10, vec![3, 7, 9, 12]),
    ] {
        let mut p = Pair::new(Cfg {
            mtu: Mtu::M256,
            ack_every,
            ..Cfg::default()
        });
        let n = first as usize * 256;
        let src = p.a.reg_with(&pattern(n, 1), ALL);
        let r1 = b_recv(&mut p, 1, n as u64);
        b_recv(&mut p, 2, 1024);
        p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, n as u32, src.lkey));
        p.a.post_send(SendWr::new(2, WrOpcode::Send).sge(src.va, 700, src.lkey));
        p.run();
        let pk = packets(&p, Dir::AtoB);
        assert_eq!(pk.len() as u32, first + 3);
        let asked: Vec<u32> = pk.iter().filter(|x| x.3).map(|x| x.1 - E).collect();
        assert_eq!(asked, want, "ack_every {ack_every}");
        assert_eq!(p.a.nic.counters.req_retransmitted, 0);
        // One ACK per AckReq.
        let ack_psns: Vec<u32> = acks(&p, Dir::BtoA).iter().map(|a| a.0 - E).collect();
        assert_eq!(ack_psns, want);
        assert_eq!(p.b.mem(r1.lkey), pattern(n, 1));
        assert_eq!(
            wc_summary(&p.a.wcs()),
            [(1, WcStatus::Success), (2, WcStatus::Success)]
        );
    }
}

/// At most 128 unacknowledged PSNs (rxe): the first 128 packets of a 200-packet SEND leave
/// at once, the rest only when the ACKs for PSNs 63 and 127 are back (one round trip later).
#[test]
fn at_most_128_psns_unacknowledged() {
    let mut p = Pair::new(Cfg {
        mtu: Mtu::M256,
        ..Cfg::default()
    });
    let src = p.a.reg_with(&pattern(200 * 256, 1), ALL);
    b_recv(&mut p, 1, 200 * 256);
    p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 200 * 256, src.lkey));
    p.run();
    let rtt = 2 * p.cfg.latency;
    let at: Vec<(u64, u32)> = p
        .sent(Dir::AtoB)
        .iter()
        .map(|w| (w.t, w.psn() - E))
        .collect();
    let want: Vec<(u64, u32)> = (0..200)
        .map(|k| (if k < 128 { 0 } else { rtt }, k))
        .collect();
    assert_eq!(at, want);
    assert_eq!(wc_summary(&p.a.wcs()), [(1, WcStatus::Success)]);
}

/// A coalesced ACK completes every request it covers: the ACKs of the first two WRITEs are
/// lost and the third one's completes all three, in order, at once.
#[test]
fn a_coalesced_ack_completes_several_requests() {
    let mut p = Pair::with_defaults();
    p.set_filter(drop_first(Dir::BtoA, 2, |f| f.bth.opcode == RC_ACKNOWLEDGE));
    let src = p.a.reg_with(&pattern(300, 1), ALL);
    let tgt = p.b.reg(300, ALL);
    for id in 0..3u64 {
        p.a.post_send(
            SendWr::new(id + 1, WrOpcode::RdmaWrite)
                .sge(src.va + 100 * id, 100, src.lkey)
                .remote(tgt.va + 100 * id, tgt.rkey),
        );
    }
    p.run();
    let delivered: Vec<u32> = p
        .sent(Dir::BtoA)
        .iter()
        .filter(|w| w.fate == Fate::Pass)
        .map(|w| w.psn())
        .collect();
    assert_eq!(delivered, [E + 2]);
    assert_eq!(
        acks(&p, Dir::BtoA),
        [(E, AETH_ACK, 1), (E + 1, AETH_ACK, 2), (E + 2, AETH_ACK, 3)]
    );
    assert_eq!(
        wc_summary(&p.a.wcs()),
        [
            (1, WcStatus::Success),
            (2, WcStatus::Success),
            (3, WcStatus::Success)
        ]
    );
    assert_eq!(p.a.nic.counters.comp_acks, 1);
    assert_eq!(p.sent(Dir::AtoB).len(), 3, "nothing resent");
    assert_eq!(p.b.mem(tgt.lkey), pattern(300, 1));
}

/// MSN counts completed SEND and WRITE messages, accepted READs and atomics; every ACK and
/// response carries it.
#[test]
fn msn_counts_messages_reads_and_atomics() {
    let mut p = Pair::with_defaults();
    let src = p.a.reg_with(&pattern(4096, 1), ALL);
    let tgt = p.b.reg(4096, ALL);
    b_recv(&mut p, 1, 4096);
    b_recv(&mut p, 2, 4096);
    p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 100, src.lkey));
    p.a.post_send(
        SendWr::new(2, WrOpcode::RdmaWrite)
            .sge(src.va, 2000, src.lkey)
            .remote(tgt.va, tgt.rkey),
    );
    p.a.post_send(
        SendWr::new(3, WrOpcode::RdmaRead)
            .sge(src.va + 2048, 1500, src.lkey)
            .remote(tgt.va, tgt.rkey),
    );
    p.a.post_send(
        SendWr::new(4, WrOpcode::AtomicFetchAndAdd)
            .sge(src.va + 4000, 8, src.lkey)
            .remote(tgt.va + 2048, tgt.rkey)
            .atomic(1, 0),
    );
    p.a.post_send(SendWr::new(5, WrOpcode::Send).sge(src.va, 2000, src.lkey));
    p.run();
    let got: Vec<(u8, u32, Option<u32>)> = p
        .sent(Dir::BtoA)
        .iter()
        .map(|w| (w.opcode(), w.psn() - E, w.frame.ext.aeth.map(|a| a.msn)))
        .collect();
    assert_eq!(
        got,
        [
            (RC_ACKNOWLEDGE, 0, Some(1)),
            (RC_ACKNOWLEDGE, 2, Some(2)),
            (RC_READ_RESPONSE_FIRST, 3, Some(3)),
            (RC_READ_RESPONSE_LAST, 4, Some(3)),
            (RC_ATOMIC_ACKNOWLEDGE, 5, Some(4)),
            (RC_ACKNOWLEDGE, 7, Some(5)),
        ]
    );
    assert_eq!(p.a.wcs().len(), 5);
}

// ---------------------------------------------------------------------------------------------
// Loss recovery: go-back-N, READ resume and replay, atomic replay, no retransmission storms.
// ---------------------------------------------------------------------------------------------

/// A lost READ response MIDDLE: the LAST arriving ahead of it makes the requester resume the
/// READ at that PSN (RETH at offset 1 x MTU) at once, without waiting for the timeout; the
/// responder replays MIDDLE and LAST from its saved READ; the bytes are right.
#[test]
fn a_lost_read_response_is_resumed_from_its_psn() {
    let mut p = Pair::with_defaults();
    p.set_filter(drop_first(Dir::BtoA, 1, |f| {
        f.bth.opcode == RC_READ_RESPONSE_MIDDLE
    }));
    let dst = p.a.reg(4096, ALL);
    let tgt = p.b.reg_with(&pattern(4096, 7), ALL);
    p.a.post_send(
        SendWr::new(1, WrOpcode::RdmaRead)
            .sge(dst.va, 3000, dst.lkey)
            .remote(tgt.va + 10, tgt.rkey),
    );
    p.run();
    let req: Vec<_> = p
        .sent(Dir::AtoB)
        .iter()
        .map(|w| {
            let r = w.frame.ext.reth.unwrap();
            (w.t, w.opcode(), w.psn(), r.va - tgt.va, r.dma_len)
        })
        .collect();
    assert_eq!(
        req,
        [
            (0, RC_READ_REQUEST, E, 10, 3000),
            (2_000, RC_READ_REQUEST, E + 1, 10 + 1024, 1976)
        ]
    );
    assert_eq!(
        packets(&p, Dir::BtoA),
        [
            (RC_READ_RESPONSE_FIRST, E, 1024, false),
            (RC_READ_RESPONSE_MIDDLE, E + 1, 1024, false),
            (RC_READ_RESPONSE_LAST, E + 2, 952, false),
            (RC_READ_RESPONSE_MIDDLE, E + 1, 1024, false),
            (RC_READ_RESPONSE_LAST, E + 2, 952, false),
        ]
    );
    assert_eq!(wc_summary(&p.a.wcs()), [(1, WcStatus::Success)]);
    let mut want = pattern(4096, 7)[10..3010].to_vec();
    want.resize(4096, 0);
    assert_eq!(p.a.mem(dst.lkey), want);
    assert_eq!(p.b.nic.counters.resp_duplicate, 1);
}

/// A lost READ response ONLY, then the ACK of a later SEND: an ACK beyond a READ without its
/// response is an implied NAK, so both are resent; the responder replays the READ, re-ACKs
/// the duplicate SEND (ePSN - 1) without delivering it twice.
#[test]
fn an_ack_beyond_a_read_without_response_is_an_implied_nak() {
    let mut p = Pair::with_defaults();
    p.set_filter(drop_first(Dir::BtoA, 1, |f| {
        f.bth.opcode == RC_READ_RESPONSE_ONLY
    }));
    let dst = p.a.reg(128, ALL);
    let src = p.a.reg_with(&pattern(16, 1), ALL);
    let tgt = p.b.reg_with(&pattern(128, 7), ALL);
    b_recv(&mut p, 9, 64);
    p.a.post_send(
        SendWr::new(1, WrOpcode::RdmaRead)
            .sge(dst.va, 100, dst.lkey)
            .remote(tgt.va, tgt.rkey),
    );
    p.a.post_send(SendWr::new(2, WrOpcode::Send).sge(src.va, 16, src.lkey));
    p.run();
    let req: Vec<_> = p
        .sent(Dir::AtoB)
        .iter()
        .map(|w| (w.t, w.opcode(), w.psn()))
        .collect();
    assert_eq!(
        req,
        [
            (0, RC_READ_REQUEST, E),
            (0, RC_SEND_ONLY, E + 1),
            (2_000, RC_READ_REQUEST, E),
            (2_000, RC_SEND_ONLY, E + 1)
        ]
    );
    assert_eq!(p.a.nic.counters.comp_implied_nak, 1);
    assert_eq!(
        acks(&p, Dir::BtoA),
        [(E + 1, AETH_ACK, 2), (E + 1, AETH_ACK, 2)]
    );
    assert_eq!(
        wc_summary(&p.a.wcs()),
        [(1, WcStatus::Success), (2, WcStatus::Success)]
    );
    assert_eq!(p.a.mem(dst.lkey)[..100], pattern(128, 7)[..100]);
    assert_eq!(
        wc_summary(&p.b.wcs()),
        [(9, WcStatus::Success)],
        "delivered once"
    );
}

/// Go-back-N from the middle of a message: MIDDLE E+2 of a 5-packet SEND (or WRITE) is lost;
/// E+3 draws one sequence NAK for E+2, E+4 is dropped silently; the requester resends from
/// E+2 with the same opcodes and payloads (MIDDLE, MIDDLE, LAST, no RETH).
#[test]
fn go_back_n_from_the_middle_of_a_message() {
    for write in [false, true] {
        let mut p = Pair::with_defaults();
        p.set_filter(drop_first(Dir::AtoB, 1, |f| f.bth.psn == E + 2));
        let src = p.a.reg_with(&pattern(4500, 1), ALL);
        let rbuf = b_recv(&mut p, 9, 8192);
        let tgt = p.b.reg(8192, ALL);
        let wr = if write {
            SendWr::new(1, WrOpcode::RdmaWrite)
                .sge(src.va, 4500, src.lkey)
                .remote(tgt.va, tgt.rkey)
        } else {
            SendWr::new(1, WrOpcode::Send).sge(src.va, 4500, src.lkey)
        };
        p.a.post_send(wr);
        p.run();
        let sent = p.sent(Dir::AtoB);
        let got: Vec<(u32, u8)> = sent.iter().map(|w| (w.psn() - E, w.opcode())).collect();
        let (first, mid, last) = if write {
            (RC_WRITE_FIRST, RC_WRITE_MIDDLE, RC_WRITE_LAST)
        } else {
            (RC_SEND_FIRST, RC_SEND_MIDDLE, RC_SEND_LAST)
        };
        assert_eq!(
            got,
            [
                (0, first),
                (1, mid),
                (2, mid),
                (3, mid),
                (4, last),
                (2, mid),
                (3, mid),
                (4, last)
            ]
        );
        for k in 0..3 {
            assert_eq!(
                sent[5 + k].frame.payload,
                sent[2 + k].frame.payload,
                "resent payload {k}"
            );
            assert_eq!(sent[5 + k].frame.ext.reth, None);
        }
        assert_eq!(sent[5].t, 2_000, "resent when the NAK arrives");
        let b: Vec<_> = p
            .sent(Dir::BtoA)
            .iter()
            .map(|w| (w.psn() - E, w.syndrome().unwrap()))
            .collect();
        assert_eq!(b, [(2, AETH_NAK_SEQ), (4, AETH_ACK)]);
        let c = &p.b.nic.counters;
        assert_eq!((c.nak_seq_sent, c.resp_out_of_sequence_dropped), (1, 1));
        assert_eq!(wc_summary(&p.a.wcs()), [(1, WcStatus::Success)]);
        let mut want = pattern(4500, 1);
        want.resize(8192, 0);
        if write {
            assert_eq!(p.b.mem(tgt.lkey), want);
            assert!(p.b.wcs().is_empty());
        } else {
            assert_eq!(p.b.mem(rbuf.lkey), want);
            assert_eq!(wc_summary(&p.b.wcs()), [(9, WcStatus::Success)]);
        }
    }
}

/// A lost ATOMIC_ACKNOWLEDGE: the requester resends the atomic after the ACK timeout and the
/// responder answers the duplicate from its saved original value without executing it again
/// (the word is added to once; a re-executed CMP_AND_SWP would return the swapped value).
#[test]
fn a_duplicate_atomic_is_answered_from_the_saved_result() {
    for cas in [false, true] {
        let mut p = Pair::new(Cfg {
            timeout: 8,
            ..Cfg::default()
        });
        p.set_filter(drop_first(Dir::BtoA, 1, |f| {
            f.bth.opcode == RC_ATOMIC_ACKNOWLEDGE
        }));
        let res = p.a.reg(8, ALL);
        let tgt = p.b.reg_with(&100u64.to_le_bytes(), ALL);
        let wr = if cas {
            SendWr::new(1, WrOpcode::AtomicCmpAndSwp).atomic(100, 555)
        } else {
            SendWr::new(1, WrOpcode::AtomicFetchAndAdd).atomic(5, 0)
        };
        p.a.post_send(wr.sge(res.va, 8, res.lkey).remote(tgt.va, tgt.rkey));
        p.run();
        let req: Vec<_> = p.sent(Dir::AtoB).iter().map(|w| (w.t, w.psn())).collect();
        assert_eq!(req, [(0, E), (1_048_576, E)], "resent after 4.096 us x 2^8");
        let orig: Vec<u64> = p
            .sent(Dir::BtoA)
            .iter()
            .map(|w| w.frame.ext.atomic_ack_eth.unwrap().orig)
            .collect();
        assert_eq!(orig, [100, 100]);
        assert_eq!(word(&p.b.mem(tgt.lkey), 0), if cas { 555 } else { 105 });
        assert_eq!(word(&p.a.mem(res.lkey), 0), 100);
        let c = &p.b.nic.counters;
        assert_eq!((c.resp_executed, c.resp_duplicate), (1, 1));
        assert_eq!(wc_summary(&p.a.wcs()), [(1, WcStatus::Success)]);
    }
}

/// A burst of duplicate sequence NAKs starts one retry, not one per copy.
#[test]
fn duplicate_naks_do_not_cause_a_retransmission_storm() {
    let mut p = Pair::with_defaults();
    let mut dropped = false;
    p.set_filter(Box::new(move |d, f| match d {
        Dir::AtoB if f.bth.psn == E + 2 && !dropped => {
            dropped = true;
            Fate::Drop
        }
        Dir::BtoA if f.ext.aeth.is_some_and(|a| a.syndrome == AETH_NAK_SEQ) => Fate::Repeat(5),
        _ => Fate::Pass,
    }));
    let src = p.a.reg_with(&pattern(4500, 1), ALL);
    b_recv(&mut p, 9, 8192);
    p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 4500, src.lkey));
    p.run();
    let psns: Vec<u32> = p.sent(Dir::AtoB).iter().map(|w| w.psn() - E).collect();
    assert_eq!(psns, [0, 1, 2, 3, 4, 2, 3, 4]);
    let c = &p.a.nic.counters;
    assert_eq!((c.nak_seq_received, c.comp_retry_suppressed), (5, 4));
    assert_eq!(wc_summary(&p.a.wcs()), [(1, WcStatus::Success)]);
}

/// Two losses far apart in one long WRITE, with forward progress (positive ACKs) between
/// them: the second sequence NAK is for another PSN, so it starts a retry at once (only a
/// timeout may start a second retry *for the same PSN*), and progress restores retry_cnt, so
/// retry_cnt 1 is enough. Hand timeline (1 us each way, MTU 256, 150 packets):
/// t=0 PSNs 0..127 leave, 10 is lost; t=2us NAK(10) arrives, 10..137 resent (AckReq on 73,
/// 137); t=4us ACK(73), ACK(137) arrive, 138..149 leave, 140 is lost; t=6us NAK(140)
/// arrives and 140..149 are resent; t=8us the last ACK completes the WRITE.
#[test]
fn a_second_loss_after_progress_is_retried_at_once() {
    let mut p = Pair::new(Cfg {
        mtu: Mtu::M256,
        retry_cnt: 1,
        ..Cfg::default()
    });
    let mut first_time = std::collections::BTreeSet::new();
    p.set_filter(Box::new(move |d, f| {
        let k = f.bth.psn.wrapping_sub(E);
        if d == Dir::AtoB && (k == 10 || k == 140) && first_time.insert(k) {
            Fate::Drop
        } else {
            Fate::Pass
        }
    }));
    let n = 150 * 256;
    let src = p.a.reg_with(&pattern(n, 1), ALL);
    let tgt = p.b.reg(n as u64, ALL);
    p.a.post_send(
        SendWr::new(1, WrOpcode::RdmaWrite)
            .sge(src.va, n as u32, src.lkey)
            .remote(tgt.va, tgt.rkey),
    );
    p.run();
    assert_eq!(wc_summary(&p.a.wcs()), [(1, WcStatus::Success)]);
    assert_eq!(p.b.mem(tgt.lkey), pattern(n, 1));
    let resent_140: Vec<u64> = p
        .sent(Dir::AtoB)
        .iter()
        .filter(|w| w.psn() - E == 140)
        .map(|w| w.t)
        .collect();
    assert_eq!(resent_140, [4_000, 6_000]);
    let b: Vec<_> = p
        .sent(Dir::BtoA)
        .iter()
        .map(|w| (w.t, w.psn() - E, w.syndrome().unwrap()))
        .collect();
    assert_eq!(
        b,
        [
            (1_000, 10, AETH_NAK_SEQ),
            (3_000, 73, AETH_ACK),
            (3_000, 137, AETH_ACK),
            (5_000, 140, AETH_NAK_SEQ),
            (7_000, 149, AETH_ACK),
        ]
    );
    assert_eq!(p.a.nic.counters.comp_timeouts, 0);
}

/// Whichever READ response is lost, the READ completes with the right bytes: a lost FIRST is
/// seen at once (MIDDLE ahead: implied NAK) and the whole READ is replayed; a lost LAST
/// leaves nothing ahead, so the ACK timer (restarted by the progress at t = 2 us) resends
/// the READ for its last 952 bytes at 2 us + 4.096 us x 2^8.
#[test]
fn a_lost_first_or_last_read_response_is_recovered() {
    for (lost, retry_t, retry_psn, replay) in [
        (
            RC_READ_RESPONSE_FIRST,
            2_000,
            E,
            vec![
                RC_READ_RESPONSE_FIRST,
                RC_READ_RESPONSE_MIDDLE,
                RC_READ_RESPONSE_LAST,
            ],
        ),
        (
            RC_READ_RESPONSE_LAST,
            2_000 + 1_048_576,
            E + 2,
            vec![RC_READ_RESPONSE_LAST],
        ),
    ] {
        let mut p = Pair::new(Cfg {
            timeout: 8,
            ..Cfg::default()
        });
        p.set_filter(drop_first(Dir::BtoA, 1, move |f| f.bth.opcode == lost));
        let dst = p.a.reg(4096, ALL);
        let tgt = p.b.reg_with(&pattern(4096, 7), ALL);
        p.a.post_send(
            SendWr::new(1, WrOpcode::RdmaRead)
                .sge(dst.va, 3000, dst.lkey)
                .remote(tgt.va + 10, tgt.rkey),
        );
        p.run();
        let req: Vec<_> = p
            .sent(Dir::AtoB)
            .iter()
            .map(|w| (w.t, w.psn(), w.frame.ext.reth.unwrap().dma_len))
            .collect();
        let k = retry_psn - E;
        assert_eq!(
            req,
            [(0, E, 3000), (retry_t, retry_psn, 3000 - 1024 * k)],
            "lost {lost:#x}"
        );
        let resp: Vec<u8> = p
            .sent(Dir::BtoA)
            .iter()
            .skip(3)
            .map(|w| w.opcode())
            .collect();
        assert_eq!(resp, replay);
        assert_eq!(wc_summary(&p.a.wcs()), [(1, WcStatus::Success)]);
        assert_eq!(p.a.mem(dst.lkey)[..3000], pattern(4096, 7)[10..3010]);
    }
}

// ---------------------------------------------------------------------------------------------
// modify_qp: the kernel's transition table, required and optional attributes, ranges.
// ---------------------------------------------------------------------------------------------

/// A fresh RC QP on a NIC whose port MTU is 2048.
fn fresh_qp() -> (Nic, u32) {
    let mut cfg = NicConfig::new(MAC_A, IP_A.into());
    cfg.port_mtu = Mtu::M2048;
    let mut nic = Nic::new(cfg);
    let pd = nic.alloc_pd();
    let cq = nic.create_cq(16).unwrap();
    let q = nic.create_qp(&QpInit::new(QpType::Rc, pd, cq)).unwrap();
    (nic, q)
}

fn rc_attr(state: QpState) -> QpAttr {
    let mut a = conn_attr(&Cfg::default(), IP_A, IP_B, MAC_B, 0x99);
    a.state = state;
    a
}

/// The refusal of a modify call: its reason contains `want` and the QP is unchanged.
fn refused(nic: &mut Nic, q: u32, attr: &QpAttr, mask: AttrMask, want: &str) {
    let before = nic.qp(q).unwrap().attr.clone();
    let e = nic.modify_qp(q, attr, mask).expect_err(want);
    assert_eq!(e.call, "modify_qp");
    assert!(
        e.reason.contains(want),
        "{:?} does not say {want:?}",
        e.reason
    );
    assert_eq!(
        nic.qp(q).unwrap().attr,
        before,
        "a refused call changes nothing"
    );
}

#[test]
fn modify_qp_refuses_illegal_transitions() {
    let (mut nic, q) = fresh_qp();
    for to in [QpState::Rtr, QpState::Rts] {
        refused(
            &mut nic,
            q,
            &rc_attr(to),
            AttrMask::STATE,
            &format!("RESET -> {to} is not a legal transition"),
        );
    }
    nic.modify_qp(q, &rc_attr(QpState::Init), INIT_MASK)
        .unwrap();
    refused(
        &mut nic,
        q,
        &rc_attr(QpState::Rts),
        RTS_MASK,
        "INIT -> RTS is not a legal transition",
    );
    nic.modify_qp(q, &rc_attr(QpState::Rtr), RTR_MASK).unwrap();
    refused(
        &mut nic,
        q,
        &rc_attr(QpState::Init),
        AttrMask::STATE,
        "RTR -> INIT is not a legal transition",
    );
    refused(
        &mut nic,
        q,
        &rc_attr(QpState::Rtr),
        AttrMask::STATE,
        "RTR -> RTR is not a legal transition",
    );
    nic.modify_qp(q, &rc_attr(QpState::Rts), RTS_MASK).unwrap();
    refused(
        &mut nic,
        q,
        &rc_attr(QpState::Rtr),
        RTR_MASK,
        "RTS -> RTR is not a legal transition",
    );
    refused(
        &mut nic,
        q,
        &rc_attr(QpState::Init),
        INIT_MASK,
        "RTS -> INIT is not a legal transition",
    );
    for s in [QpState::Sqd, QpState::Sqe] {
        refused(
            &mut nic,
            q,
            &rc_attr(s),
            AttrMask::STATE,
            "is not supported",
        );
    }
    // Any state -> ERR; ERR -> only RESET (and ERR).
    nic.modify_qp(q, &rc_attr(QpState::Err), AttrMask::STATE)
        .unwrap();
    refused(
        &mut nic,
        q,
        &rc_attr(QpState::Rts),
        RTS_MASK,
        "ERR -> RTS is not a legal transition",
    );
    refused(
        &mut nic,
        q,
        &rc_attr(QpState::Init),
        INIT_MASK,
        "ERR -> INIT is not a legal transition",
    );
    nic.modify_qp(q, &rc_attr(QpState::Reset), AttrMask::STATE)
        .unwrap();
    assert_eq!(nic.qp(q).unwrap().state(), QpState::Reset);
    nic.modify_qp(q, &rc_attr(QpState::Init), INIT_MASK)
        .unwrap();
    // A state the QP is not in as cur_state.
    let mut a = rc_attr(QpState::Init);
    a.cur_state = QpState::Rts;
    refused(
        &mut nic,
        q,
        &a,
        INIT_MASK | AttrMask::CUR_STATE,
        "cur_state RTS does not match the QP's state INIT",
    );
}

#[test]
fn modify_qp_refuses_missing_and_extra_attributes() {
    let (mut nic, q) = fresh_qp();
    let init = rc_attr(QpState::Init);
    refused(
        &mut nic,
        q,
        &init,
        AttrMask::STATE | AttrMask::PORT | AttrMask::PKEY_INDEX,
        "RESET -> INIT requires ACCESS_FLAGS",
    );
    refused(
        &mut nic,
        q,
        &init,
        INIT_MASK | AttrMask::SQ_PSN,
        "RESET -> INIT does not take SQ_PSN",
    );
    refused(
        &mut nic,
        q,
        &init,
        INIT_MASK | AttrMask::QKEY,
        "RESET -> INIT does not take QKEY",
    );
    nic.modify_qp(q, &init, INIT_MASK).unwrap();
    // INIT -> INIT takes the INIT attributes, all optional.
    nic.modify_qp(q, &init, AttrMask::STATE).unwrap();
    let rtr = rc_attr(QpState::Rtr);
    refused(
        &mut nic,
        q,
        &rtr,
        RTR_MASK & !AttrMask::AV,
        "INIT -> RTR requires AV",
    );
    refused(
        &mut nic,
        q,
        &rtr,
        AttrMask::STATE | AttrMask::AV,
        "INIT -> RTR requires PATH_MTU|RQ_PSN|MIN_RNR_TIMER|MAX_DEST_RD_ATOMIC|DEST_QPN",
    );
    refused(
        &mut nic,
        q,
        &rtr,
        RTR_MASK | AttrMask::TIMEOUT,
        "INIT -> RTR does not take TIMEOUT",
    );
    refused(
        &mut nic,
        q,
        &rtr,
        RTR_MASK | AttrMask::SQ_PSN,
        "INIT -> RTR does not take SQ_PSN",
    );
    nic.modify_qp(
        q,
        &rtr,
        RTR_MASK | AttrMask::ACCESS_FLAGS | AttrMask::PKEY_INDEX,
    )
    .unwrap();
    let rts = rc_attr(QpState::Rts);
    refused(
        &mut nic,
        q,
        &rts,
        RTS_MASK & !AttrMask::SQ_PSN,
        "RTR -> RTS requires SQ_PSN",
    );
    refused(
        &mut nic,
        q,
        &rts,
        RTS_MASK & !AttrMask::RETRY_CNT & !AttrMask::RNR_RETRY,
        "RTR -> RTS requires RETRY_CNT|RNR_RETRY",
    );
    refused(
        &mut nic,
        q,
        &rts,
        RTS_MASK | AttrMask::RQ_PSN,
        "RTR -> RTS does not take RQ_PSN",
    );
    nic.modify_qp(q, &rts, RTS_MASK | AttrMask::MIN_RNR_TIMER)
        .unwrap();
    // RTS -> RTS: only the optional attributes.
    refused(
        &mut nic,
        q,
        &rts,
        AttrMask::STATE | AttrMask::PATH_MTU,
        "RTS -> RTS does not take PATH_MTU",
    );
    refused(
        &mut nic,
        q,
        &rts,
        AttrMask::STATE | AttrMask::SQ_PSN,
        "RTS -> RTS does not take SQ_PSN",
    );
    let mut a = rts.clone();
    a.min_rnr_timer = 3;
    nic.modify_qp(q, &a, AttrMask::STATE | AttrMask::MIN_RNR_TIMER)
        .unwrap();
    assert_eq!(nic.qp(q).unwrap().attr.min_rnr_timer, 3);
    // UD: Q_Key at INIT, no access flags, no address vector.
    let pd = nic.alloc_pd();
    let cq = nic.create_cq(4).unwrap();
    let u = nic.create_qp(&QpInit::new(QpType::Ud, pd, cq)).unwrap();
    let ud_init = AttrMask::STATE | AttrMask::PKEY_INDEX | AttrMask::PORT | AttrMask::QKEY;
    refused(
        &mut nic,
        u,
        &init,
        ud_init & !AttrMask::QKEY,
        "RESET -> INIT requires QKEY",
    );
    refused(
        &mut nic,
        u,
        &init,
        ud_init | AttrMask::ACCESS_FLAGS,
        "RESET -> INIT does not take ACCESS_FLAGS",
    );
    nic.modify_qp(u, &init, ud_init).unwrap();
    refused(
        &mut nic,
        u,
        &rtr,
        AttrMask::STATE | AttrMask::AV,
        "INIT -> RTR does not take AV",
    );
}

#[test]
fn modify_qp_refuses_values_out_of_range() {
    let (mut nic, q) = fresh_qp();
    let mut a = rc_attr(QpState::Init);
    a.port = 2;
    refused(&mut nic, q, &a, INIT_MASK, "port 2 does not exist");
    let mut a = rc_attr(QpState::Init);
    a.pkey_index = 1;
    refused(
        &mut nic,
        q,
        &a,
        INIT_MASK,
        "P_Key index 1 is outside the table",
    );
    let mut a = rc_attr(QpState::Init);
    a.access = Access(0x10);
    refused(&mut nic, q, &a, INIT_MASK, "unknown access flags");
    nic.modify_qp(q, &rc_attr(QpState::Init), INIT_MASK)
        .unwrap();
    let rtr = |f: fn(&mut QpAttr)| {
        let mut a = rc_attr(QpState::Rtr);
        f(&mut a);
        a
    };
    for (a, want) in [
        (
            rtr(|a| a.path_mtu = Mtu::M4096),
            "path MTU 4096 is above the port's 2048",
        ),
        (
            rtr(|a| a.rq_psn = 1 << 24),
            "rq_psn 0x1000000 does not fit 24 bits",
        ),
        (
            rtr(|a| a.dest_qpn = 1 << 24),
            "dest_qp_num 0x1000000 does not fit 24 bits",
        ),
        (
            rtr(|a| a.min_rnr_timer = 32),
            "min_rnr_timer 32 is above 31",
        ),
        (
            rtr(|a| a.max_dest_rd_atomic = 17),
            "max_dest_rd_atomic 17 is above 16",
        ),
        (
            rtr(|a| a.av.as_mut().unwrap().sip = "10.0.0.7".parse().unwrap()),
            "source address 10.0.0.7 is not one of the NIC's",
        ),
        (
            rtr(|a| a.av.as_mut().unwrap().dip = "fe80::1".parse().unwrap()),
            "address vector mixes IP versions",
        ),
        (
            rtr(|a| a.av.as_mut().unwrap().flow_label = 1 << 20),
            "flow label 0x100000 does not fit 20 bits",
        ),
        (
            rtr(|a| a.av = None),
            "AV in the mask but no address vector given",
        ),
    ] {
        refused(&mut nic, q, &a, RTR_MASK, want);
    }
    nic.modify_qp(q, &rc_attr(QpState::Rtr), RTR_MASK).unwrap();
    let rts = |f: fn(&mut QpAttr)| {
        let mut a = rc_attr(QpState::Rts);
        f(&mut a);
        a
    };
    for (a, want) in [
        (rts(|a| a.timeout = 32), "timeout 32 is above 31"),
        (rts(|a| a.retry_cnt = 8), "retry_cnt 8 is above 7"),
        (rts(|a| a.rnr_retry = 8), "rnr_retry 8 is above 7"),
        (
            rts(|a| a.sq_psn = 1 << 24),
            "sq_psn 0x1000000 does not fit 24 bits",
        ),
        (
            rts(|a| a.max_rd_atomic = 17),
            "max_rd_atomic 17 is above 16",
        ),
    ] {
        refused(&mut nic, q, &a, RTS_MASK, want);
    }
    nic.modify_qp(q, &rc_attr(QpState::Rts), RTS_MASK).unwrap();
    assert_eq!(nic.qp(q).unwrap().state(), QpState::Rts);
}

/// Moving a QP to ERR flushes every posted send and receive with IBV_WC_WR_FLUSH_ERR
/// (signaled or not), stops its traffic, and later posts complete flushed at once.
#[test]
fn modify_qp_to_err_flushes_everything() {
    let mut p = Pair::with_defaults();
    p.set_filter(Box::new(|_, _| Fate::Drop));
    let src = p.a.reg_with(&pattern(64, 1), ALL);
    let rbuf = p.a.reg(64, ALL);
    p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 64, src.lkey));
    p.a.post_send(
        SendWr::new(2, WrOpcode::Send)
            .sge(src.va, 64, src.lkey)
            .flags(SendFlags::NONE),
    );
    p.a.post_recv(RecvWr::new(3).sge(rbuf.va, 64, rbuf.lkey));
    p.run_until(10_000);
    assert_eq!(p.sent(Dir::AtoB).len(), 2);
    let q = p.a.qpn;
    p.a.nic
        .modify_qp(q, &rc_attr(QpState::Err), AttrMask::STATE)
        .unwrap();
    let mut got = wc_summary(&p.a.wcs());
    got.sort_by_key(|g| g.0);
    assert_eq!(
        got,
        [
            (1, WcStatus::WrFlushErr),
            (2, WcStatus::WrFlushErr),
            (3, WcStatus::WrFlushErr)
        ]
    );
    assert_eq!(p.a.nic.next_deadline(), None, "no timer left");
    p.a.post_recv(RecvWr::new(4).sge(rbuf.va, 64, rbuf.lkey));
    assert_eq!(wc_summary(&p.a.wcs()), [(4, WcStatus::WrFlushErr)]);
    p.run();
    assert_eq!(p.sent(Dir::AtoB).len(), 2, "nothing more sent");
}

/// A frame corrupted on the wire (one payload bit) fails the ICRC and is dropped silently;
/// the next packet draws the sequence NAK and go-back-N delivers the message intact.
#[test]
fn a_corrupted_frame_is_dropped_and_recovered() {
    let mut p = Pair::with_defaults();
    let mut done = false;
    p.set_filter(Box::new(move |d, f| {
        if d == Dir::AtoB && f.bth.psn == E + 1 && !done {
            done = true;
            let mut bytes = f.build().unwrap();
            bytes[BTH_AT + 12 + 5] ^= 0x10;
            Fate::Replace(bytes)
        } else {
            Fate::Pass
        }
    }));
    let src = p.a.reg_with(&pattern(3000, 1), ALL);
    let rbuf = b_recv(&mut p, 9, 4096);
    p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 3000, src.lkey));
    p.run();
    assert_eq!(p.b.nic.counters.drop_bad_icrc, 1);
    let psns: Vec<u32> = p.sent(Dir::AtoB).iter().map(|w| w.psn() - E).collect();
    assert_eq!(psns, [0, 1, 2, 1, 2]);
    assert_eq!(
        acks(&p, Dir::BtoA),
        [(E + 1, AETH_NAK_SEQ, 0), (E + 2, AETH_ACK, 1)]
    );
    assert_eq!(wc_summary(&p.a.wcs()), [(1, WcStatus::Success)]);
    assert_eq!(p.b.mem(rbuf.lkey)[..3000], pattern(3000, 1)[..]);
}
