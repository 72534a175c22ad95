//! Rules of `shared/docs/rc-transport.md` that `rules.rs` leaves open (the gaps of the issue 11
//! audit), each checked against expectations worked out by hand from the document, never
//! against the model's own output: a NAK acknowledges every earlier PSN; the implied NAK of an
//! atomic; sequence-error retries counted against retry_cnt; a timeout starting a second retry
//! while a NAK-started one is under way; a 0-byte READ takes one PSN; the destination half of
//! receive check 2 and the RETH length of a WRITE; fence and the READ/atomic limits of both
//! sides; and the address vector on the wire (IPv6, UDP source port, traffic class). Where the
//! document is silent, the expectation is rxe's behaviour, and the comment says so.
//!
//! Two model NICs are joined by the harness in `common/` (1 us each way, time moves only to
//! the next frame or timer); responder rules are driven by frames built by hand and injected
//! into B, completer rules by hand-built ACKs delivered to A.
//!
//! Check 8 and unaligned atomics (audit gap 7): rc-transport.md's check 8 ends "Violation ->
//! NAK remote access error (0x62)", which reads as if it covered the 8-byte alignment of
//! atomics too. rxe does not answer a misaligned atomic that way: its responder finds the
//! misalignment when it executes the atomic (RESPST_ERR_MISALIGNED_ATOMIC) and handles it as a
//! class C error, `do_class_ac_error(qp, AETH_NAK_INVALID_REQ, IB_WC_REM_INV_REQ_ERR)`, i.e.
//! NAK 0x61 and IBV_WC_REM_INV_REQ_ERR at the requester, not 0x62. The model follows rxe, the
//! peer it must interoperate with, and `rules.rs::unaligned_atomics_are_invalid_requests`
//! asserts 0x61; this file leaves that choice as it is.

mod common;

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use common::*;
use rnic_transport::ops::*;
use rnic_transport::*;
use rnic_wire::ext::{Aeth, AtomicEth, Reth};
use rnic_wire::ipv6::Ipv6Repr;
use rnic_wire::udp::ROCE_PORT;
use rnic_wire::{IpRepr, RoceFrame};

const E: u32 = 0x1000; // A's first PSN, B's expected PSN (Cfg::default)
const M: usize = 1024; // default path MTU
const L: u64 = 1_000; // one-way wire latency (Cfg::default), ns

/// Counters that moved between two snapshots, with by how much.
fn grown(before: &Counters, after: &Counters) -> BTreeMap<&'static str, u64> {
    before
        .iter()
        .zip(after.iter())
        .filter(|(x, y)| x.1 != y.1)
        .map(|(x, y)| (x.0, y.1 - x.1))
        .collect()
}

/// (time, opcode, PSN) of every frame sent in `dir`.
fn frames(p: &Pair, dir: Dir) -> Vec<(u64, u8, u32)> {
    p.sent(dir)
        .iter()
        .map(|w| (w.t, w.opcode(), w.psn()))
        .collect()
}

/// (time, PSN, syndrome, MSN, delivered) of every ACKNOWLEDGE sent in `dir`.
fn acks_on_wire(p: &Pair, dir: Dir) -> Vec<(u64, u32, u8, u32, bool)> {
    p.sent(dir)
        .iter()
        .filter(|w| w.opcode() == RC_ACKNOWLEDGE)
        .map(|w| {
            let a = w.frame.ext.aeth.expect("an ACKNOWLEDGE has an AETH");
            (w.t, w.psn(), a.syndrome, a.msn, w.fate != Fate::Drop)
        })
        .collect()
}

/// Times at which A sent PSN `psn`.
fn sent_at(p: &Pair, psn: u32) -> Vec<u64> {
    p.sent(Dir::AtoB)
        .iter()
        .filter(|w| w.psn() == psn)
        .map(|w| w.t)
        .collect()
}

/// Posts one receive of `len` bytes on B, in a fresh MR.
fn b_recv(p: &mut Pair, wr_id: u64, len: u32) -> MrInfo {
    let mr = p.b.reg(u64::from(len), ALL);
    p.b.post_recv(RecvWr::new(wr_id).sge(mr.va, len, mr.lkey));
    mr
}

/// A SEND_ONLY of `len` bytes from A's QP to B's, built by hand.
fn send_to_b(p: &Pair, psn: u32, len: usize) -> RoceFrame {
    let mut f = p.request(RC_SEND_ONLY, psn);
    f.payload = pattern(len, 0x3C);
    f
}

/// The bytes of an ACKNOWLEDGE from B's QP to A's with `syndrome`, built by hand (the peer's
/// side of a completer test).
fn ack_to_a(p: &Pair, syndrome: u8, psn: u32, msn: u32) -> Vec<u8> {
    let mut f = p.frame(Dir::BtoA, RC_ACKNOWLEDGE, psn);
    f.ext.aeth = Some(Aeth { syndrome, msn });
    f.build().expect("a buildable ACK")
}

/// (opcode, PSN, payload length, AETH syndrome and MSN) of an answer.
fn answer(f: &RoceFrame) -> (u8, u32, usize, Option<(u8, u32)>) {
    (
        f.bth.opcode,
        f.bth.psn,
        f.payload.len(),
        f.ext.aeth.map(|a| (a.syndrome, a.msn)),
    )
}

// ---------------------------------------------------------------------------------------------
// ACK coalescing: "A NAK implicitly acknowledges every earlier PSN."
// ---------------------------------------------------------------------------------------------

/// SEND 1 (E, 100 bytes) and SEND 2 (E+1, E+2: 1500 bytes) are outstanding. The ACK of SEND 1
/// is lost and so is SEND 2's first packet, so the only answer A gets is B's sequence NAK for
/// E+1 (sent at 1 us when E+2 arrives, carrying MSN 1). Arriving at 2 us it completes SEND 1
/// at once, and SEND 2 is resent from E+1 at 2 us; B ACKs E+2 (MSN 2) at 3 us, and SEND 2
/// completes at 4 us. No timeout is involved.
#[test]
fn a_sequence_nak_acknowledges_the_requests_before_its_psn() {
    let mut p = Pair::with_defaults();
    let (mut packet_lost, mut ack_lost) = (false, false);
    p.set_filter(Box::new(move |d, f| match d {
        Dir::AtoB if f.bth.psn == E + 1 && !packet_lost => {
            packet_lost = true;
            Fate::Drop
        }
        Dir::BtoA if f.ext.aeth.is_some_and(|a| a.syndrome == AETH_ACK) && !ack_lost => {
            ack_lost = true;
            Fate::Drop
        }
        _ => Fate::Pass,
    }));
    let src = p.a.reg_with(&pattern(1600, 1), ALL);
    let r1 = b_recv(&mut p, 1, 128);
    let r2 = b_recv(&mut p, 2, 2048);
    p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 100, src.lkey));
    p.a.post_send(SendWr::new(2, WrOpcode::Send).sge(src.va + 100, 1500, src.lkey));

    p.run_until(2 * L);
    let wcs = p.a.wcs();
    assert_eq!(
        wc_summary(&wcs),
        [(1, WcStatus::Success)],
        "the NAK completes SEND 1"
    );
    assert_eq!((wcs[0].opcode, wcs[0].byte_len), (WcOpcode::Send, 100));

    p.run();
    assert_eq!(wc_summary(&p.a.wcs()), [(2, WcStatus::Success)]);
    assert_eq!(
        frames(&p, Dir::AtoB),
        [
            (0, RC_SEND_ONLY, E),
            (0, RC_SEND_FIRST, E + 1),
            (0, RC_SEND_LAST, E + 2),
            (2 * L, RC_SEND_FIRST, E + 1),
            (2 * L, RC_SEND_LAST, E + 2),
        ]
    );
    assert_eq!(
        acks_on_wire(&p, Dir::BtoA),
        [
            (L, E, AETH_ACK, 1, false),
            (L, E + 1, AETH_NAK_SEQ, 1, true),
            (3 * L, E + 2, AETH_ACK, 2, true),
        ]
    );
    let c = &p.a.nic.counters;
    assert_eq!(
        (
            c.nak_seq_received,
            c.comp_timeouts,
            c.req_retransmitted,
            c.comp_retry_suppressed
        ),
        (1, 0, 2, 0)
    );
    assert_eq!(
        wc_summary(&p.b.wcs()),
        [(1, WcStatus::Success), (2, WcStatus::Success)]
    );
    assert_eq!(p.b.mem(r1.lkey)[..100], pattern(1600, 1)[..100]);
    assert_eq!(p.b.mem(r2.lkey)[..1500], pattern(1600, 1)[100..]);
}

/// The same with an RNR NAK: a WRITE (E) whose ACK is lost, then a SEND (E+1) that finds no
/// receive at B, which answers RNR NAK 0x21 (min_rnr_timer 1 = 10 us) for E+1, MSN 1. At 2 us
/// the RNR NAK completes the WRITE; the SEND waits the RNR timer and goes again at 12 us; a
/// receive posted meanwhile takes it (ACK at 13 us, completion at 14 us).
#[test]
fn an_rnr_nak_acknowledges_the_requests_before_its_psn() {
    let mut p = Pair::new(Cfg {
        min_rnr_timer: 1,
        ..Cfg::default()
    });
    p.set_filter(drop_first(Dir::BtoA, 1, |f| {
        f.ext.aeth.is_some_and(|a| a.syndrome == AETH_ACK)
    }));
    let src = p.a.reg_with(&pattern(200, 2), ALL);
    let tgt = p.b.reg(256, ALL);
    p.a.post_send(
        SendWr::new(1, WrOpcode::RdmaWrite)
            .sge(src.va, 100, src.lkey)
            .remote(tgt.va, tgt.rkey),
    );
    p.a.post_send(SendWr::new(2, WrOpcode::Send).sge(src.va + 100, 64, src.lkey));

    p.run_until(2 * L);
    let wcs = p.a.wcs();
    assert_eq!(
        wc_summary(&wcs),
        [(1, WcStatus::Success)],
        "the RNR NAK completes the WRITE"
    );
    assert_eq!((wcs[0].opcode, wcs[0].byte_len), (WcOpcode::RdmaWrite, 100));
    let rbuf = b_recv(&mut p, 7, 64);

    p.run();
    assert_eq!(wc_summary(&p.a.wcs()), [(2, WcStatus::Success)]);
    assert_eq!(
        frames(&p, Dir::AtoB),
        [
            (0, RC_WRITE_ONLY, E),
            (0, RC_SEND_ONLY, E + 1),
            (12 * L, RC_SEND_ONLY, E + 1),
        ]
    );
    assert_eq!(
        acks_on_wire(&p, Dir::BtoA),
        [
            (L, E, AETH_ACK, 1, false),
            (L, E + 1, AETH_RNR_NAK | 1, 1, true),
            (13 * L, E + 1, AETH_ACK, 2, true),
        ]
    );
    let c = &p.a.nic.counters;
    assert_eq!((c.nak_rnr_received, c.comp_timeouts), (1, 0));
    assert_eq!(p.b.mem(tgt.lkey)[..100], pattern(200, 2)[..100]);
    assert_eq!(p.b.mem(rbuf.lkey), pattern(200, 2)[100..164]);
}

// ---------------------------------------------------------------------------------------------
// Completer: implied NAK for an atomic; retry_cnt and sequence NAKs; timeouts and started_retry.
// ---------------------------------------------------------------------------------------------

/// The oldest pending request is an atomic whose ATOMIC_ACKNOWLEDGE is lost, and the ACK of the
/// SEND after it (E+1) arrives at 2 us: an ACK beyond a pending atomic means its response was
/// lost, so A retries at once from E (the atomic, then the SEND again). B answers the duplicate
/// atomic from its saved original value without executing it again and re-ACKs the duplicate
/// SEND with ePSN - 1 = E+1; the atomic completes with the original value at 4 us.
#[test]
fn an_ack_beyond_an_atomic_without_its_acknowledge_is_an_implied_nak() {
    for cas in [false, true] {
        let mut p = Pair::with_defaults();
        p.set_filter(drop_first(Dir::BtoA, 1, |f| {
            f.bth.opcode == RC_ATOMIC_ACKNOWLEDGE
        }));
        let res = p.a.reg(8, ALL);
        let src = p.a.reg_with(&pattern(32, 3), ALL);
        let tgt = p.b.reg_with(&100u64.to_le_bytes(), ALL);
        b_recv(&mut p, 9, 64);
        let (wr, op, wc_op, after) = if cas {
            (
                SendWr::new(1, WrOpcode::AtomicCmpAndSwp).atomic(100, 555),
                RC_COMPARE_SWAP,
                WcOpcode::CompSwap,
                555u64,
            )
        } else {
            (
                SendWr::new(1, WrOpcode::AtomicFetchAndAdd).atomic(5, 0),
                RC_FETCH_ADD,
                WcOpcode::FetchAdd,
                105,
            )
        };
        p.a.post_send(wr.sge(res.va, 8, res.lkey).remote(tgt.va, tgt.rkey));
        p.a.post_send(SendWr::new(2, WrOpcode::Send).sge(src.va, 32, src.lkey));
        p.run();

        assert_eq!(
            frames(&p, Dir::AtoB),
            [
                (0, op, E),
                (0, RC_SEND_ONLY, E + 1),
                (2 * L, op, E),
                (2 * L, RC_SEND_ONLY, E + 1),
            ],
            "cas {cas}"
        );
        let b: Vec<_> = p
            .sent(Dir::BtoA)
            .iter()
            .map(|w| {
                (
                    w.t,
                    w.opcode(),
                    w.psn(),
                    w.frame.ext.atomic_ack_eth.map(|a| a.orig),
                    w.fate != Fate::Drop,
                )
            })
            .collect();
        assert_eq!(
            b,
            [
                (L, RC_ATOMIC_ACKNOWLEDGE, E, Some(100), false),
                (L, RC_ACKNOWLEDGE, E + 1, None, true),
                (3 * L, RC_ATOMIC_ACKNOWLEDGE, E, Some(100), true),
                (3 * L, RC_ACKNOWLEDGE, E + 1, None, true),
            ],
            "cas {cas}"
        );
        let c = &p.a.nic.counters;
        assert_eq!(
            (c.comp_implied_nak, c.comp_timeouts, c.req_retransmitted),
            (1, 0, 2),
            "cas {cas}"
        );
        let wcs = p.a.wcs();
        assert_eq!(
            wcs.iter()
                .map(|w| (w.wr_id, w.status, w.opcode, w.byte_len))
                .collect::<Vec<_>>(),
            [
                (1, WcStatus::Success, wc_op, 8),
                (2, WcStatus::Success, WcOpcode::Send, 32)
            ],
            "cas {cas}"
        );
        assert_eq!(
            p.a.mem(res.lkey),
            100u64.to_le_bytes(),
            "the original value"
        );
        assert_eq!(p.b.mem(tgt.lkey), after.to_le_bytes(), "executed once");
        let c = &p.b.nic.counters;
        assert_eq!((c.resp_executed, c.resp_duplicate), (2, 2));
        assert_eq!(
            wc_summary(&p.b.wcs()),
            [(9, WcStatus::Success)],
            "delivered once"
        );
    }
}

/// "Each timeout or sequence-error retry decrements retry_cnt", and "only a timeout may start
/// a second retry for the same PSN while one is under way". A's peer is played by hand: every
/// frame A sends is lost, and a sequence NAK for E (MSN 0) reaches A 2 us after each
/// transmission of E; no positive ACK ever comes, so no progress restores retry_cnt. With
/// timeout 10 (T = 4.096 us x 2^10 = 4,194,304 ns, running from the first transmission, as
/// nothing is acknowledged) the hand timeline is:
/// - retry_cnt 0: the first NAK finds no retry left: IBV_WC_RETRY_EXC_ERR at 2 us.
/// - retry_cnt 1: NAK at 2 us retries (1 -> 0); the NAK at 4 us is suppressed (a retry is
///   under way); the timeout at T finds none left: error at T.
/// - retry_cnt 2 and 3: the same, and each timeout retries (the NAK after it is suppressed)
///   until the last: error at retry_cnt x T.
///
/// A silent peer (no NAK) with retry_cnt 2 fails only at 3 T: one retry went to the NAK.
/// Either way E goes out retry_cnt + 1 times, later WRs are flushed and the QP is in ERR.
#[test]
fn sequence_naks_count_against_retry_cnt() {
    const T: u64 = 4_194_304;
    struct Case {
        retry_cnt: u8,
        naks: Vec<u64>,
        sent: Vec<u64>,
        fail: u64,
        suppressed: u64,
        timeouts: u64,
    }
    for c in [
        Case {
            retry_cnt: 0,
            naks: vec![2 * L],
            sent: vec![0],
            fail: 2 * L,
            suppressed: 0,
            timeouts: 0,
        },
        Case {
            retry_cnt: 1,
            naks: vec![2 * L, 4 * L],
            sent: vec![0, 2 * L],
            fail: T,
            suppressed: 1,
            timeouts: 1,
        },
        Case {
            retry_cnt: 2,
            naks: vec![2 * L, 4 * L, T + 2 * L],
            sent: vec![0, 2 * L, T],
            fail: 2 * T,
            suppressed: 2,
            timeouts: 2,
        },
        Case {
            retry_cnt: 3,
            naks: vec![2 * L, 4 * L, T + 2 * L, 2 * T + 2 * L],
            sent: vec![0, 2 * L, T, 2 * T],
            fail: 3 * T,
            suppressed: 3,
            timeouts: 3,
        },
        Case {
            retry_cnt: 2,
            naks: vec![],
            sent: vec![0, T, 2 * T],
            fail: 3 * T,
            suppressed: 0,
            timeouts: 3,
        },
    ] {
        let what = format!("retry_cnt {} with {} NAKs", c.retry_cnt, c.naks.len());
        let mut p = Pair::new(Cfg {
            timeout: 10,
            retry_cnt: c.retry_cnt,
            ..Cfg::default()
        });
        p.set_filter(Box::new(|_, _| Fate::Drop));
        let src = p.a.reg_with(&pattern(64, 1), ALL);
        p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 64, src.lkey));
        p.a.post_send(SendWr::new(2, WrOpcode::Send).sge(src.va, 64, src.lkey));
        for &t in &c.naks {
            p.run_until(t);
            assert_eq!(p.a.state(), QpState::Rts, "{what}: still retrying at {t}");
            let nak = ack_to_a(&p, AETH_NAK_SEQ, E, 0);
            p.a.nic.receive(t, &nak);
        }
        if c.fail > p.now {
            p.run_until(c.fail - 1);
            assert!(p.a.wcs().is_empty(), "{what}: not yet at {}", c.fail - 1);
            p.run_until(c.fail);
        }
        assert_eq!(
            wc_summary(&p.a.wcs()),
            [(1, WcStatus::RetryExcErr), (2, WcStatus::WrFlushErr)],
            "{what}"
        );
        assert_eq!(p.a.state(), QpState::Err, "{what}");
        p.run();
        assert_eq!(sent_at(&p, E), c.sent, "{what}: transmissions of E");
        assert_eq!(
            p.sent(Dir::AtoB).len(),
            2 * c.sent.len(),
            "{what}: each try resends both SENDs, nothing after the error"
        );
        let k = &p.a.nic.counters;
        assert_eq!(
            (
                k.nak_seq_received,
                k.comp_retry_suppressed,
                k.comp_timeouts,
                k.req_retransmitted
            ),
            (
                c.naks.len() as u64,
                c.suppressed,
                c.timeouts,
                2 * (c.sent.len() as u64 - 1)
            ),
            "{what}"
        );
    }
}

/// A NAK starts a retry, the retry is lost too, and the ACK timer fires: a timeout may start a
/// second retry for the same PSN while the NAK-started one is under way. A 3-packet SEND
/// (E..E+2, AckReq on E+2) with timeout 8 (T = 1,048,576 ns); E is lost twice. At 1 us B sees
/// E+1 and NAKs E (three copies reach A: two are suppressed); E+2 is dropped silently. At 2 us
/// A resends E..E+2; E is lost again and B, which has NAKed this gap already, stays silent.
/// Nothing was acknowledged, so the timer armed at 0 fires at T: A resends E..E+2 again, B
/// executes them and ACKs E+2 at T + 1 us. With timeout 0 there is no timer: after the lost
/// NAK-started retry nothing may start another one, and the SEND never completes.
#[test]
fn a_timeout_starts_a_second_retry_while_a_nak_started_one_is_under_way() {
    const T: u64 = 1_048_576;
    for timeout in [8u8, 0] {
        let mut p = Pair::new(Cfg {
            timeout,
            ..Cfg::default()
        });
        let mut losses = 2;
        p.set_filter(Box::new(move |d, f| match d {
            Dir::AtoB if f.bth.psn == E && losses > 0 => {
                losses -= 1;
                Fate::Drop
            }
            Dir::BtoA if f.ext.aeth.is_some_and(|a| a.syndrome == AETH_NAK_SEQ) => Fate::Repeat(3),
            _ => Fate::Pass,
        }));
        let src = p.a.reg_with(&pattern(3000, 5), ALL);
        let rbuf = b_recv(&mut p, 9, 4096);
        p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 3000, src.lkey));
        p.run();

        let mut want_a = vec![
            (0, RC_SEND_FIRST, E),
            (0, RC_SEND_MIDDLE, E + 1),
            (0, RC_SEND_LAST, E + 2),
            (2 * L, RC_SEND_FIRST, E),
            (2 * L, RC_SEND_MIDDLE, E + 1),
            (2 * L, RC_SEND_LAST, E + 2),
        ];
        let mut want_b = vec![(L, E, AETH_NAK_SEQ, 0, true)];
        if timeout == 8 {
            want_a.extend([
                (T, RC_SEND_FIRST, E),
                (T, RC_SEND_MIDDLE, E + 1),
                (T, RC_SEND_LAST, E + 2),
            ]);
            want_b.push((T + L, E + 2, AETH_ACK, 1, true));
        }
        assert_eq!(frames(&p, Dir::AtoB), want_a, "timeout {timeout}");
        assert_eq!(acks_on_wire(&p, Dir::BtoA), want_b, "timeout {timeout}");
        let c = &p.a.nic.counters;
        let timeouts = u64::from(timeout == 8);
        assert_eq!(
            (
                c.nak_seq_received,
                c.comp_retry_suppressed,
                c.comp_timeouts,
                c.req_retransmitted
            ),
            (3, 2, timeouts, 3 + 3 * timeouts),
            "timeout {timeout}"
        );
        let c = &p.b.nic.counters;
        assert_eq!(
            (
                c.nak_seq_sent,
                c.resp_out_of_sequence,
                c.resp_out_of_sequence_dropped
            ),
            (1, 4, 3),
            "timeout {timeout}: one NAK for the gap"
        );
        if timeout == 8 {
            assert_eq!(wc_summary(&p.a.wcs()), [(1, WcStatus::Success)]);
            assert_eq!(wc_summary(&p.b.wcs()), [(9, WcStatus::Success)]);
            assert_eq!(p.b.mem(rbuf.lkey)[..3000], pattern(3000, 5)[..]);
        } else {
            assert!(p.a.wcs().is_empty());
            assert_eq!(p.a.state(), QpState::Rts);
            assert_eq!(p.a.nic.next_deadline(), None);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Responder progress: "for a READ request ePSN += max(1, ceil(len / MTU))".
// ---------------------------------------------------------------------------------------------

/// A 0-byte READ takes one PSN: the SEND after it gets E+1; B answers one READ_RESPONSE_ONLY
/// without payload (AETH, MSN 1) and its ePSN moves by 1; the READ completes with 0 bytes.
/// Then READs injected into B of 0, 1, 1024, 1025 and 0 bytes move ePSN by 1, 1, 1, 2 and 1.
#[test]
fn a_zero_byte_read_takes_one_psn() {
    let mut p = Pair::with_defaults();
    let tgt = p.b.reg_with(&pattern(64, 9), ALL);
    let src = p.a.reg_with(&pattern(16, 1), ALL);
    let rbuf = b_recv(&mut p, 5, 64);
    p.a.post_send(SendWr::new(1, WrOpcode::RdmaRead).remote(tgt.va, tgt.rkey));
    p.a.post_send(SendWr::new(2, WrOpcode::Send).sge(src.va, 16, src.lkey));
    p.run();
    assert_eq!(
        frames(&p, Dir::AtoB),
        [(0, RC_READ_REQUEST, E), (0, RC_SEND_ONLY, E + 1)]
    );
    let r = p.sent(Dir::AtoB)[0].frame.ext.reth.unwrap();
    assert_eq!((r.va, r.rkey, r.dma_len), (tgt.va, tgt.rkey, 0));
    let b: Vec<_> = p.sent(Dir::BtoA).iter().map(|w| answer(&w.frame)).collect();
    assert_eq!(
        b,
        [
            (RC_READ_RESPONSE_ONLY, E, 0, Some((AETH_ACK, 1))),
            (RC_ACKNOWLEDGE, E + 1, 0, Some((AETH_ACK, 2))),
        ]
    );
    assert_eq!((p.b.qp().resp.epsn, p.b.qp().resp.msn), (E + 2, 2));
    let wa: Vec<_> =
        p.a.wcs()
            .iter()
            .map(|w| (w.wr_id, w.status, w.opcode, w.byte_len))
            .collect();
    assert_eq!(
        wa,
        [
            (1, WcStatus::Success, WcOpcode::RdmaRead, 0),
            (2, WcStatus::Success, WcOpcode::Send, 16)
        ]
    );
    assert_eq!(p.b.mem(rbuf.lkey)[..16], pattern(16, 1)[..]);
    assert_eq!(p.b.mem(tgt.lkey), pattern(64, 9), "a READ writes nothing");

    // Injected READs: (length, responses as (opcode, PSN offset, bytes)), ePSN offset after.
    let mut p = Pair::with_defaults();
    let tgt = p.b.reg_with(&pattern(4096, 4), ALL);
    let mut psn = E;
    for (len, want, epsn_after) in [
        (0u32, vec![(RC_READ_RESPONSE_ONLY, 0u32, 0usize)], 1u32),
        (1, vec![(RC_READ_RESPONSE_ONLY, 1, 1)], 2),
        (1024, vec![(RC_READ_RESPONSE_ONLY, 2, 1024)], 3),
        (
            1025,
            vec![
                (RC_READ_RESPONSE_FIRST, 3, 1024),
                (RC_READ_RESPONSE_LAST, 4, 1),
            ],
            5,
        ),
        (0, vec![(RC_READ_RESPONSE_ONLY, 5, 0)], 6),
    ] {
        let out = p.inject(&p.read_request(psn, tgt.va, tgt.rkey, len));
        let got: Vec<_> = out
            .iter()
            .map(|f| (f.bth.opcode, f.bth.psn - E, f.payload.len()))
            .collect();
        assert_eq!(got, want, "READ of {len} bytes at E+{}", psn - E);
        assert_eq!(p.b.qp().resp.epsn, E + epsn_after, "READ of {len} bytes");
        psn = E + epsn_after;
    }
    // The next request is expected at E+6, not a duplicate and not ahead.
    let out = p.inject(&{
        let mut f = p.request(RC_WRITE_ONLY, E + 6);
        f.ext.reth = Some(Reth {
            va: tgt.va,
            rkey: tgt.rkey,
            dma_len: 4,
        });
        f.payload = vec![1, 2, 3, 4];
        f
    });
    assert_eq!(
        out.iter().map(answer).collect::<Vec<_>>(),
        [(RC_ACKNOWLEDGE, E + 6, 0, Some((AETH_ACK, 6)))]
    );
    let c = &p.b.nic.counters;
    assert_eq!(
        (c.resp_executed, c.resp_duplicate, c.resp_out_of_sequence),
        (6, 0, 0)
    );
}

// ---------------------------------------------------------------------------------------------
// Receive check 2 (destination half) and check 6 (RETH length of a WRITE).
// ---------------------------------------------------------------------------------------------

/// Check 2: "for RC/UC the source and destination IP match the QP's address vector". B
/// answers to two addresses, 10.0.0.2 (the AV of its first QP) and 10.0.0.3 (the AV of a
/// second QP). A request whose destination is one of B's addresses passes check 1, but if it
/// is not its QP's AV source address it is dropped silently at check 2 and counted as
/// `drop_address_mismatch` (also before a bad P_Key, check 3); an address that is not B's at
/// all stops at check 1 (`drop_not_our_ip`). Each QP executes requests sent to its own address,
/// and answers from it.
#[test]
fn a_destination_ip_of_ours_but_not_the_avs_is_an_address_mismatch() {
    const IP_B2: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 3);
    let mut p = Pair::with_defaults();
    p.b.nic.cfg.ips.push(IpAddr::V4(IP_B2));
    let q2 =
        p.b.nic
            .create_qp(&QpInit::new(QpType::Rc, p.b.pd, p.b.cq))
            .unwrap();
    let mut attr = conn_attr(&p.cfg, IP_B2, IP_A, MAC_A, p.a.qpn);
    attr.rq_psn = E;
    attr.sq_psn = 0x3000;
    bring_up(&mut p.b.nic, q2, &attr, true);
    let q1 = p.b.qpn;
    b_recv(&mut p, 1, 64);
    let mr = p.b.reg(64, ALL);
    p.b.nic
        .post_recv(q2, RecvWr::new(2).sge(mr.va, 64, mr.lkey))
        .unwrap();

    let to = |p: &Pair, qpn: u32, dst: Ipv4Addr, pkey: u16| {
        let mut f = send_to_b(p, E, 16);
        f.bth.dest_qp = qpn;
        f.bth.pkey = pkey;
        if let IpRepr::V4(ip) = &mut f.ip {
            ip.dst = dst;
        }
        f
    };
    for (what, qpn, dst, pkey, counter) in [
        (
            "QP 1 at the second address",
            q1,
            IP_B2,
            0xFFFF,
            "drop_address_mismatch",
        ),
        (
            "... with a bad P_Key",
            q1,
            IP_B2,
            0x1234,
            "drop_address_mismatch",
        ),
        (
            "QP 2 at the first address",
            q2,
            IP_B,
            0xFFFF,
            "drop_address_mismatch",
        ),
        (
            "QP 1 at 10.0.0.9",
            q1,
            Ipv4Addr::new(10, 0, 0, 9),
            0xFFFF,
            "drop_not_our_ip",
        ),
    ] {
        let before = p.b.nic.counters.clone();
        let out = p.inject(&to(&p, qpn, dst, pkey));
        assert!(out.is_empty(), "{what}: dropped silently, got {out:?}");
        assert_eq!(
            grown(&before, &p.b.nic.counters),
            BTreeMap::from([("rx_frames", 1), (counter, 1)]),
            "{what}"
        );
        assert!(p.b.wcs().is_empty(), "{what}: nothing executed");
    }
    for q in [q1, q2] {
        assert_eq!(p.b.nic.qp(q).unwrap().resp.epsn, E);
    }
    for (qpn, dst, wr_id) in [(q1, IP_B, 1), (q2, IP_B2, 2)] {
        let out = p.inject(&to(&p, qpn, dst, 0xFFFF));
        assert_eq!(
            out.iter().map(answer).collect::<Vec<_>>(),
            [(RC_ACKNOWLEDGE, E, 0, Some((AETH_ACK, 1)))],
            "QP {qpn:#x} at {dst}"
        );
        let IpRepr::V4(ip) = out[0].ip else {
            panic!("an IPv4 AV answers over IPv4")
        };
        assert_eq!(
            (ip.src, ip.dst),
            (dst, IP_A),
            "answered from its AV's address"
        );
        assert_eq!(wc_summary(&p.b.wcs()), [(wr_id, WcStatus::Success)]);
    }
}

/// Check 6: "RETH DMA length at most 2^31", for a WRITE (rules.rs tries only a READ). A
/// WRITE_FIRST or WRITE_ONLY announcing 2^31 + 1 (or 2^32 - 1) bytes is refused with NAK 0x61
/// for its PSN, B goes to ERR and nothing is written. Exactly 2^31 passes check 6 and is
/// refused by check 8 instead, the range lying outside the 8 KiB MR: NAK 0x62.
#[test]
fn a_write_reth_longer_than_2_31_is_an_invalid_request() {
    for (op, dma_len, syn) in [
        (RC_WRITE_FIRST, (1u32 << 31) + 1, AETH_NAK_INV_REQ),
        (RC_WRITE_FIRST, u32::MAX, AETH_NAK_INV_REQ),
        (RC_WRITE_ONLY, (1 << 31) + 1, AETH_NAK_INV_REQ),
        (RC_WRITE_FIRST, 1 << 31, AETH_NAK_REM_ACCESS),
        (RC_WRITE_ONLY, 1 << 31, AETH_NAK_REM_ACCESS),
    ] {
        let what = format!("opcode {op:#04x}, DMA length {dma_len:#x}");
        let mut p = Pair::with_defaults();
        let tgt = p.b.reg_with(&pattern(8192, 6), ALL);
        let mut f = p.request(op, E);
        f.ext.reth = Some(Reth {
            va: tgt.va,
            rkey: tgt.rkey,
            dma_len,
        });
        f.payload = pattern(if op == RC_WRITE_FIRST { M } else { 10 }, 1);
        let before = p.b.nic.counters.clone();
        let out = p.inject(&f);
        assert_eq!(
            out.iter().map(answer).collect::<Vec<_>>(),
            [(RC_ACKNOWLEDGE, E, 0, Some((syn, 0)))],
            "{what}"
        );
        assert_eq!(p.b.state(), QpState::Err, "{what}");
        assert_eq!(
            p.b.mem(tgt.lkey),
            pattern(8192, 6),
            "{what}: nothing written"
        );
        let nak = if syn == AETH_NAK_INV_REQ {
            "nak_inv_req_sent"
        } else {
            "nak_rem_access_sent"
        };
        assert_eq!(
            grown(&before, &p.b.nic.counters),
            BTreeMap::from([("rx_frames", 1), (nak, 1)]),
            "{what}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Fence, max_rd_atomic (requester) and max_dest_rd_atomic (responder).
// ---------------------------------------------------------------------------------------------

/// A fenced SEND posted after a READ is not sent until the READ's response is complete, and
/// the SEND behind it waits too (in order). READ of 2500 bytes = E..E+2, SENDs E+3 and E+4.
/// Without the fence both SENDs leave at once. With it they leave at 2 us, when the three
/// responses are in. If the READ's LAST response is lost, the READ completes only after the
/// timer (timeout 8, re-armed by the progress at 2 us) resends it from E+2 at 2 us + T and the
/// replayed LAST arrives 2 us later: the SENDs leave then, at 4 us + T.
#[test]
fn a_fenced_send_waits_for_the_read_before_it() {
    const T: u64 = 1_048_576;
    for (fence, lose_last, want) in [
        (
            false,
            false,
            vec![
                (0, RC_READ_REQUEST, E),
                (0, RC_SEND_ONLY, E + 3),
                (0, RC_SEND_ONLY, E + 4),
            ],
        ),
        (
            true,
            false,
            vec![
                (0, RC_READ_REQUEST, E),
                (2 * L, RC_SEND_ONLY, E + 3),
                (2 * L, RC_SEND_ONLY, E + 4),
            ],
        ),
        (
            true,
            true,
            vec![
                (0, RC_READ_REQUEST, E),
                (2 * L + T, RC_READ_REQUEST, E + 2),
                (4 * L + T, RC_SEND_ONLY, E + 3),
                (4 * L + T, RC_SEND_ONLY, E + 4),
            ],
        ),
    ] {
        let what = format!("fence {fence}, LAST lost {lose_last}");
        let mut p = Pair::new(Cfg {
            timeout: 8,
            ..Cfg::default()
        });
        if lose_last {
            p.set_filter(drop_first(Dir::BtoA, 1, |f| {
                f.bth.opcode == RC_READ_RESPONSE_LAST
            }));
        }
        let dst = p.a.reg(4096, ALL);
        let src = p.a.reg_with(&pattern(64, 1), ALL);
        let tgt = p.b.reg_with(&pattern(4096, 2), ALL);
        let r1 = b_recv(&mut p, 11, 64);
        let r2 = b_recv(&mut p, 12, 64);
        p.a.post_send(
            SendWr::new(1, WrOpcode::RdmaRead)
                .sge(dst.va, 2500, dst.lkey)
                .remote(tgt.va, tgt.rkey),
        );
        let flags = if fence {
            SendFlags::SIGNALED | SendFlags::FENCE
        } else {
            SendFlags::SIGNALED
        };
        p.a.post_send(
            SendWr::new(2, WrOpcode::Send)
                .sge(src.va, 16, src.lkey)
                .flags(flags),
        );
        p.a.post_send(SendWr::new(3, WrOpcode::Send).sge(src.va + 16, 16, src.lkey));
        p.run();
        assert_eq!(frames(&p, Dir::AtoB), want, "{what}");
        assert_eq!(
            wc_summary(&p.a.wcs()),
            [
                (1, WcStatus::Success),
                (2, WcStatus::Success),
                (3, WcStatus::Success)
            ],
            "{what}"
        );
        assert_eq!(
            p.a.mem(dst.lkey)[..2500],
            pattern(4096, 2)[..2500],
            "{what}"
        );
        assert_eq!(
            wc_summary(&p.b.wcs()),
            [(11, WcStatus::Success), (12, WcStatus::Success)]
        );
        assert_eq!(p.b.mem(r1.lkey)[..16], pattern(64, 1)[..16]);
        assert_eq!(p.b.mem(r2.lkey)[..16], pattern(64, 1)[16..32]);
    }
}

/// max_rd_atomic caps the READs and atomics in flight ("one outstanding READ/atomic each way"
/// by default). READ (E), FETCH_ADD (E+1), READ (E+2) and a SEND (E+3), every answer back 2 us
/// after its request: with max_rd_atomic 1 each READ/atomic waits for the one before to
/// complete (0, 2, 4 us) and the SEND waits behind them; with 2 the first two leave together
/// and the third when both are answered; with 3 everything leaves at once.
#[test]
fn max_rd_atomic_limits_outstanding_reads_and_atomics() {
    for (cap, times) in [(1u8, [0, 2, 4, 4]), (2, [0, 0, 2, 2]), (3, [0, 0, 0, 0])] {
        let mut p = Pair::new(Cfg {
            max_rd_atomic: cap,
            ..Cfg::default()
        });
        let dst = p.a.reg(512, ALL);
        let src = p.a.reg_with(&pattern(16, 1), ALL);
        let tgt = p.b.reg_with(&pattern(2048, 3), ALL);
        p.b.set(tgt.lkey, 1024, &40u64.to_le_bytes());
        b_recv(&mut p, 9, 64);
        p.a.post_send(
            SendWr::new(1, WrOpcode::RdmaRead)
                .sge(dst.va, 100, dst.lkey)
                .remote(tgt.va, tgt.rkey),
        );
        p.a.post_send(
            SendWr::new(2, WrOpcode::AtomicFetchAndAdd)
                .sge(dst.va + 256, 8, dst.lkey)
                .remote(tgt.va + 1024, tgt.rkey)
                .atomic(2, 0),
        );
        p.a.post_send(
            SendWr::new(3, WrOpcode::RdmaRead)
                .sge(dst.va + 128, 100, dst.lkey)
                .remote(tgt.va + 200, tgt.rkey),
        );
        p.a.post_send(SendWr::new(4, WrOpcode::Send).sge(src.va, 16, src.lkey));
        p.run();
        let ops = [RC_READ_REQUEST, RC_FETCH_ADD, RC_READ_REQUEST, RC_SEND_ONLY];
        let want: Vec<_> = (0..4)
            .map(|i| (times[i] * L, ops[i], E + i as u32))
            .collect();
        assert_eq!(frames(&p, Dir::AtoB), want, "max_rd_atomic {cap}");
        assert_eq!(
            wc_summary(&p.a.wcs()),
            [
                (1, WcStatus::Success),
                (2, WcStatus::Success),
                (3, WcStatus::Success),
                (4, WcStatus::Success)
            ]
        );
        let a = p.a.mem(dst.lkey);
        let t = pattern(2048, 3);
        assert_eq!(a[..100], t[..100]);
        assert_eq!(a[128..228], t[200..300]);
        assert_eq!(a[256..264], 40u64.to_le_bytes());
        assert_eq!(p.b.mem(tgt.lkey)[1024..1032], 42u64.to_le_bytes());
        assert_eq!(p.a.nic.counters.req_retransmitted, 0);
    }
}

/// The responder's max_dest_rd_atomic: rc-transport.md says nothing about more READs arriving
/// than it allows, so the expectation is rxe's (check_resource: "it is the requesters job to
/// not send too many read/atomic ops, we just recycle the responder resource queue"). Every
/// READ is executed and answered; only the last max_dest_rd_atomic of them stay saved, so a
/// duplicate of an older one is dropped silently while a duplicate of a saved one is
/// replayed. max_dest_rd_atomic 0 (no resources at all) refuses a READ: NAK 0x61, QP in ERR.
#[test]
fn the_responder_recycles_its_read_resources_beyond_max_dest_rd_atomic() {
    for (cap, replayed) in [(1u8, [false, false, true]), (2, [false, true, true])] {
        let mut p = Pair::new(Cfg {
            max_rd_atomic: cap,
            ..Cfg::default()
        });
        let tgt = p.b.reg_with(&pattern(1024, 4), ALL);
        let t = pattern(1024, 4);
        for k in 0..3u32 {
            let f = p.read_request(E + k, tgt.va + 100 * u64::from(k), tgt.rkey, 100);
            let out = p.inject(&f);
            assert_eq!(
                out.iter().map(answer).collect::<Vec<_>>(),
                [(RC_READ_RESPONSE_ONLY, E + k, 100, Some((AETH_ACK, k + 1)))],
                "cap {cap}: READ {k} is executed"
            );
            let at = 100 * k as usize;
            assert_eq!(out[0].payload, t[at..at + 100]);
        }
        assert_eq!(p.b.state(), QpState::Rts);
        assert_eq!(p.b.qp().resp.epsn, E + 3);
        for k in 0..3u32 {
            let f = p.read_request(E + k, tgt.va + 100 * u64::from(k), tgt.rkey, 100);
            let out = p.inject(&f);
            let want = if replayed[k as usize] {
                vec![(RC_READ_RESPONSE_ONLY, E + k, 100, Some((AETH_ACK, 3)))]
            } else {
                vec![]
            };
            assert_eq!(
                out.iter().map(answer).collect::<Vec<_>>(),
                want,
                "cap {cap}: duplicate of READ {k}"
            );
        }
        let c = &p.b.nic.counters;
        let dropped = replayed.iter().filter(|r| !**r).count() as u64;
        assert_eq!(
            (c.resp_executed, c.resp_duplicate, c.resp_duplicate_dropped),
            (3, 3, dropped),
            "cap {cap}"
        );
    }
    let mut p = Pair::new(Cfg {
        max_rd_atomic: 0,
        ..Cfg::default()
    });
    let tgt = p.b.reg_with(&pattern(1024, 4), ALL);
    let out = p.inject(&p.read_request(E, tgt.va, tgt.rkey, 100));
    assert_eq!(
        out.iter().map(answer).collect::<Vec<_>>(),
        [(RC_ACKNOWLEDGE, E, 0, Some((AETH_NAK_INV_REQ, 0)))]
    );
    assert_eq!(p.b.state(), QpState::Err);
    // An atomic likewise.
    let mut p = Pair::new(Cfg {
        max_rd_atomic: 0,
        ..Cfg::default()
    });
    let tgt = p.b.reg_with(&7u64.to_le_bytes(), ALL);
    let mut f = p.request(RC_FETCH_ADD, E);
    f.ext.atomic_eth = Some(AtomicEth {
        va: tgt.va,
        rkey: tgt.rkey,
        swap_add: 1,
        compare: 0,
    });
    let out = p.inject(&f);
    assert_eq!(
        out.iter().map(answer).collect::<Vec<_>>(),
        [(RC_ACKNOWLEDGE, E, 0, Some((AETH_NAK_INV_REQ, 0)))]
    );
    assert_eq!(p.b.mem(tgt.lkey), 7u64.to_le_bytes(), "not executed");
}

// ---------------------------------------------------------------------------------------------
// The address vector on the wire: IPv4 or IPv6, UDP source port, traffic class.
// ---------------------------------------------------------------------------------------------

/// Takes `side`'s QP back to RESET and up to RTS again with address vector `av`.
fn readdress(side: &mut Side, cfg: &Cfg, av: AddressVector, psns: (u32, u32), dest_qpn: u32) {
    let mut attr = conn_attr(cfg, IP_A, IP_B, MAC_B, dest_qpn);
    attr.av = Some(av);
    (attr.sq_psn, attr.rq_psn) = psns;
    let mut reset = attr.clone();
    reset.state = QpState::Reset;
    let q = side.qpn;
    side.nic.modify_qp(q, &reset, AttrMask::STATE).unwrap();
    bring_up(&mut side.nic, q, &attr, true);
}

/// RC over IPv6 between two model NICs: A SENDs 3000 bytes and READs 2000 to B, B SENDs 100
/// to A. Every frame carries its sender's AV: IPv6 source and destination, traffic class
/// (DSCP = TC >> 2, ECN = TC & 3: A 0xB9 -> 46/1, B 0x68 -> 26/0), flow label, hop limit and
/// the UDP source port set in the AV (A 0xD00D, B 0xBEEF), to UDP port 4791; every request
/// completes with its data, nothing is dropped or resent.
#[test]
fn rc_over_ipv6_carries_the_address_vector() {
    let a6 = Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 0xa);
    let b6 = Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 0xb);
    let mut p = Pair::with_defaults();
    p.a.nic.cfg.ips.push(a6.into());
    p.b.nic.cfg.ips.push(b6.into());
    let av_a = AddressVector {
        udp_sport: 0xD00D,
        traffic_class: 0xB9,
        hop_limit: 17,
        flow_label: 0xABCDE,
        ..AddressVector::new(MAC_B, a6.into(), b6.into())
    };
    let av_b = AddressVector {
        udp_sport: 0xBEEF,
        traffic_class: 0x68,
        hop_limit: 200,
        flow_label: 1,
        ..AddressVector::new(MAC_A, b6.into(), a6.into())
    };
    let cfg = p.cfg.clone();
    let (aq, bq) = (p.a.qpn, p.b.qpn);
    readdress(&mut p.a, &cfg, av_a, (cfg.psn_a, cfg.psn_b), bq);
    readdress(&mut p.b, &cfg, av_b, (cfg.psn_b, cfg.psn_a), aq);

    let src = p.a.reg_with(&pattern(3000, 1), ALL);
    let dst = p.a.reg(2048, ALL);
    let a_rbuf = p.a.reg(128, ALL);
    p.a.post_recv(RecvWr::new(20).sge(a_rbuf.va, 128, a_rbuf.lkey));
    let tgt = p.b.reg_with(&pattern(2048, 2), ALL);
    let b_src = p.b.reg_with(&pattern(100, 3), ALL);
    let rbuf = b_recv(&mut p, 10, 4096);
    p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 3000, src.lkey));
    p.a.post_send(
        SendWr::new(2, WrOpcode::RdmaRead)
            .sge(dst.va, 2000, dst.lkey)
            .remote(tgt.va, tgt.rkey),
    );
    p.b.post_send(SendWr::new(3, WrOpcode::Send).sge(b_src.va, 100, b_src.lkey));
    p.run();

    let b_psn = cfg.psn_b;
    let no_acks = |dir| -> Vec<(u64, u8, u32)> {
        frames(&p, dir)
            .into_iter()
            .filter(|f| f.1 != RC_ACKNOWLEDGE)
            .collect()
    };
    assert_eq!(
        no_acks(Dir::AtoB),
        [
            (0, RC_SEND_FIRST, E),
            (0, RC_SEND_MIDDLE, E + 1),
            (0, RC_SEND_LAST, E + 2),
            (0, RC_READ_REQUEST, E + 3),
        ]
    );
    assert_eq!(
        no_acks(Dir::BtoA),
        [
            (0, RC_SEND_ONLY, b_psn),
            (L, RC_READ_RESPONSE_FIRST, E + 3),
            (L, RC_READ_RESPONSE_LAST, E + 4),
        ]
    );
    assert_eq!(acks_on_wire(&p, Dir::AtoB), [(L, b_psn, AETH_ACK, 1, true)]);
    assert_eq!(acks_on_wire(&p, Dir::BtoA), [(L, E + 2, AETH_ACK, 1, true)]);
    for w in &p.wire {
        let (from, to, tc, fl, hl, sport, smac, dmac) = match w.dir {
            Dir::AtoB => (a6, b6, 0xB9u8, 0xABCDE, 17, 0xD00D, MAC_A, MAC_B),
            Dir::BtoA => (b6, a6, 0x68, 1, 200, 0xBEEF, MAC_B, MAC_A),
        };
        let f = &w.frame;
        assert_eq!(
            f.ip,
            IpRepr::V6(Ipv6Repr {
                src: from,
                dst: to,
                dscp: tc >> 2,
                ecn: tc & 3,
                flow_label: fl,
                hop_limit: hl,
            }),
            "{:?} opcode {:#04x} PSN {:#x}",
            w.dir,
            w.opcode(),
            w.psn()
        );
        assert_eq!((f.udp.src_port, f.udp.dst_port), (sport, ROCE_PORT));
        assert_eq!((f.eth.src, f.eth.dst), (smac, dmac));
    }
    assert_eq!(p.wire.len(), 9);

    assert_eq!(
        wc_summary(&p.a.wcs()),
        [
            (20, WcStatus::Success),
            (1, WcStatus::Success),
            (2, WcStatus::Success)
        ]
    );
    assert_eq!(
        wc_summary(&p.b.wcs()),
        [(10, WcStatus::Success), (3, WcStatus::Success)]
    );
    assert_eq!(p.b.mem(rbuf.lkey)[..3000], pattern(3000, 1)[..]);
    assert_eq!(p.a.mem(dst.lkey)[..2000], pattern(2048, 2)[..2000]);
    assert_eq!(p.a.mem(a_rbuf.lkey)[..100], pattern(100, 3)[..]);
    for nic in [&p.a.nic, &p.b.nic] {
        let drops: u64 = nic
            .counters
            .iter()
            .filter(|(n, _)| n.starts_with("drop_"))
            .map(|(_, v)| v)
            .sum();
        assert_eq!((drops, nic.counters.req_retransmitted), (0, 0));
    }
}

/// Over IPv4 the AV's traffic class is the TOS byte (A: 0x8A -> DSCP 34, ECN 2) and its UDP
/// source port is used as set (A: 0x1234); an AV that leaves both at 0 (B) sends TOS 0 and
/// rxe's port for its QPN, 0xC000 | hash_32(qpn, 14).
#[test]
fn ipv4_tos_and_udp_source_port_follow_the_address_vector() {
    let mut p = Pair::with_defaults();
    let av_a = AddressVector {
        udp_sport: 0x1234,
        traffic_class: 0x8A,
        ..AddressVector::new(MAC_B, IP_A.into(), IP_B.into())
    };
    let cfg = p.cfg.clone();
    let bq = p.b.qpn;
    readdress(&mut p.a, &cfg, av_a, (cfg.psn_a, cfg.psn_b), bq);
    let src = p.a.reg_with(&pattern(1500, 1), ALL);
    let rbuf = b_recv(&mut p, 10, 2048);
    p.a.post_send(SendWr::new(1, WrOpcode::Send).sge(src.va, 1500, src.lkey));
    p.run();
    // rxe_source_port, worked out by hand for B's QPN: hash_32(qpn, 14) is
    // (qpn * 0x61C88647 mod 2^32) >> 18.
    let b_port = 0xC000 | (((u64::from(p.b.qpn) * 0x61C8_8647) % (1 << 32)) >> 18) as u16;
    let got: Vec<_> = p
        .wire
        .iter()
        .map(|w| {
            let IpRepr::V4(ip) = w.frame.ip else {
                panic!("an IPv4 AV sends IPv4")
            };
            (
                w.dir,
                w.opcode(),
                ip.dscp,
                ip.ecn,
                ip.ttl,
                w.frame.udp.src_port,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (Dir::AtoB, RC_SEND_FIRST, 34, 2, 64, 0x1234),
            (Dir::AtoB, RC_SEND_LAST, 34, 2, 64, 0x1234),
            (Dir::BtoA, RC_ACKNOWLEDGE, 0, 0, 64, b_port),
        ]
    );
    assert_eq!(wc_summary(&p.a.wcs()), [(1, WcStatus::Success)]);
    assert_eq!(p.b.mem(rbuf.lkey)[..1500], pattern(1500, 1)[..]);
}
