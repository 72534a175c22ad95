//! Behaviours of Linux rxe that surprised us while replaying its captures and running the
//! real tools against the model, each pinned by a test of the model (the replays of
//! tests/trace_replay.rs check them against rxe itself).

mod common;

use common::*;
use rnic_transport::ops::*;
use rnic_wire::RoceFrame;

fn send(p: &Pair, opcode: u8, psn: u32, ack_req: bool) -> RoceFrame {
    let mut f = p.request(opcode, psn);
    f.bth.ack_req = ack_req;
    f.payload = pattern(1024, psn as u8);
    f
}

/// rxe ACKs every duplicate SEND/WRITE packet with ePSN - 1, whether it asks for an ACK or
/// not (write_bw-drop-9.pcap frames 56-59: a resent FIRST without AckReq and its LAST draw
/// one ACK each).
#[test]
fn every_duplicate_packet_is_acked_even_without_ackreq() {
    let mut p = Pair::new(Cfg::default());
    let e = 0x1000;
    let mr = p.b.reg(4096, ALL);
    p.b.post_recv(rnic_transport::RecvWr::new(1).sge(mr.va, 4096, mr.lkey));
    assert!(p.inject(&send(&p, RC_SEND_FIRST, e, false)).is_empty());
    let acks = p.inject(&send(&p, RC_SEND_LAST, e + 1, true));
    assert_eq!(acks.len(), 1);
    // The message again, as a go-back-N resend: two ACKs, both for ePSN - 1.
    for (op, psn, ack_req) in [(RC_SEND_FIRST, e, false), (RC_SEND_LAST, e + 1, true)] {
        let out = p.inject(&send(&p, op, psn, ack_req));
        assert_eq!(out.len(), 1, "{op:#x}");
        assert_eq!(out[0].bth.opcode, RC_ACKNOWLEDGE);
        assert_eq!(out[0].bth.psn, e + 1);
        assert_eq!(syndrome(&out[0]), AETH_ACK);
    }
    assert_eq!(p.b.nic.counters.resp_duplicate, 2);
}

/// A duplicate READ that starts inside the original is answered from MIDDLE (no FIRST), and
/// rxe then keeps the replayed address as the resource's start with the original length, so
/// the original request repeated afterwards falls outside it and is dropped.
#[test]
fn a_read_replayed_from_its_middle_starts_with_middle_and_moves_the_saved_start() {
    let mut p = Pair::new(Cfg::default());
    let e = 0x1000;
    let data = pattern(3072, 7);
    let mr = p.b.reg_with(&data, ALL);
    let out = p.inject(&p.read_request(e, mr.va, mr.rkey, 3072));
    let ops: Vec<u8> = out.iter().map(|f| f.bth.opcode).collect();
    assert_eq!(
        ops,
        [
            RC_READ_RESPONSE_FIRST,
            RC_READ_RESPONSE_MIDDLE,
            RC_READ_RESPONSE_LAST
        ]
    );
    // The requester lost the MIDDLE and asks again from there.
    let out = p.inject(&p.read_request(e + 1, mr.va + 1024, mr.rkey, 2048));
    let got: Vec<(u8, u32)> = out.iter().map(|f| (f.bth.opcode, f.bth.psn)).collect();
    assert_eq!(
        got,
        [
            (RC_READ_RESPONSE_MIDDLE, e + 1),
            (RC_READ_RESPONSE_LAST, e + 2)
        ]
    );
    assert_eq!(out[0].payload, data[1024..2048]);
    assert_eq!(out[1].payload, data[2048..]);
    // The original again: outside the moved resource, dropped.
    let out = p.inject(&p.read_request(e, mr.va, mr.rkey, 3072));
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(p.b.nic.counters.resp_duplicate_dropped, 1);
}
