//! The verbs API on two model NICs joined by an in-process link, one thread each: the
//! exchanges of ibv_rc_pingpong and ibv_ud_pingpong, RDMA WRITE / READ / atomics, the RC
//! pingpong on a link that loses every 7th frame, and the errors a program sees. Time limits
//! here are deadlines that fail a test that hangs, never performance assertions.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;
use std::time::{Duration, Instant};

use rnic_driver::model::{ChannelLink, FrameLink, ModelBackend, NicConfig};
use rnic_driver::pattern;
use rnic_driver::verbs::*;

/// How long any one step may take before the test fails.
const STEP: Duration = Duration::from_secs(30);

fn config(n: u8) -> NicConfig {
    NicConfig::new(MacAddr([0x02, 0, 0, 0, 0, n]), IpAddr::from([10, 0, 0, n]))
}

/// What ibv_rc_pingpong exchanges over TCP (LID, QPN, PSN, GID), the MAC standing in for the
/// neighbour lookup, and an MR for the RDMA test.
#[derive(Clone, Copy, Debug)]
struct Dest {
    qpn: u32,
    psn: u32,
    mac: MacAddr,
    ip: IpAddr,
    addr: u64,
    rkey: u32,
}

/// One side's out-of-band channel to the other.
struct Oob {
    tx: Sender<Dest>,
    rx: Receiver<Dest>,
}

impl Oob {
    fn pair() -> (Oob, Oob) {
        let (a_tx, b_rx) = mpsc::channel();
        let (b_tx, a_rx) = mpsc::channel();
        (Oob { tx: a_tx, rx: a_rx }, Oob { tx: b_tx, rx: b_rx })
    }

    fn send(&self, d: Dest) {
        self.tx.send(d).expect("the peer thread is alive");
    }

    fn recv(&self) -> Dest {
        self.rx
            .recv_timeout(STEP)
            .expect("the peer's address within the deadline")
    }
}

fn dest(ctx: &Context, qp: &QueuePair, psn: u32, mr: Option<&MemoryRegion>) -> Dest {
    Dest {
        qpn: qp.qpn(),
        psn,
        mac: ctx.query_device().mac,
        ip: ctx.gid().unwrap(),
        addr: mr.map_or(0, |m| m.addr()),
        rkey: mr.map_or(0, |m| m.rkey()),
    }
}

/// Waits for exactly `n` completions on `cq`; fails the test at the deadline.
fn wait_n(cq: &CompletionQueue, n: usize, what: &str) -> Vec<WorkCompletion> {
    let deadline = Instant::now() + STEP;
    let mut got = Vec::new();
    while got.len() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(
            !left.is_zero(),
            "{what}: {} of {n} completions within {STEP:?}: {got:?}",
            got.len()
        );
        got.extend(cq.wait(left).unwrap());
    }
    assert_eq!(
        got.len(),
        n,
        "{what}: more completions than expected: {got:?}"
    );
    got
}

/// Completions of one CQ taken in the order the program wants them, whatever order they
/// arrive in (a SEND's completion waits for the ACK, which may come after the reply).
struct Wcs<'a> {
    cq: &'a CompletionQueue,
    buf: Vec<WorkCompletion>,
}

impl<'a> Wcs<'a> {
    fn new(cq: &'a CompletionQueue) -> Self {
        Wcs {
            cq,
            buf: Vec::new(),
        }
    }

    /// The first completion of `opcode`; fails the test at the deadline.
    fn take(&mut self, opcode: WcOpcode, what: &str) -> WorkCompletion {
        let deadline = Instant::now() + STEP;
        loop {
            if let Some(i) = self.buf.iter().position(|w| w.opcode == opcode) {
                return self.buf.remove(i);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "{what}: no {opcode} within {STEP:?}; have {:?}",
                self.buf
            );
            self.buf.extend(self.cq.wait(left).unwrap());
        }
    }
}

fn ok(wc: &WorkCompletion, opcode: WcOpcode, what: &str) {
    assert_eq!(
        (wc.status, wc.opcode),
        (WcStatus::Success, opcode),
        "{what}: {wc:?}"
    );
}

/// Keeps answering the peer (ACKs for its retransmissions) until both sides are done.
fn linger(ctx: &Context, done: &AtomicUsize) {
    done.fetch_add(1, Ordering::SeqCst);
    let deadline = Instant::now() + STEP;
    while done.load(Ordering::SeqCst) < 2 {
        assert!(Instant::now() < deadline, "the peer did not finish in time");
        ctx.progress(Duration::from_millis(10)).unwrap();
    }
}

/// Runs `client` and `server` in two threads, each on its own model NIC on one end of `link`.
fn two_nics<C, S, R>(link: (ChannelLink, ChannelLink), client: C, server: S) -> (R, R)
where
    C: FnOnce(Context, Oob, Arc<AtomicUsize>) -> R + Send + 'static,
    S: FnOnce(Context, Oob, Arc<AtomicUsize>) -> R + Send + 'static,
    R: Send + 'static,
{
    let (a, b) = link;
    let (oa, ob) = Oob::pair();
    let done = Arc::new(AtomicUsize::new(0));
    let d = done.clone();
    let c = thread::spawn(move || client(Context::open(ModelBackend::new(config(1), a)), oa, d));
    let s = thread::spawn(move || server(Context::open(ModelBackend::new(config(2), b)), ob, done));
    let c = c.join().expect("client thread");
    let s = s.join().expect("server thread");
    (c, s)
}

const PP_ITERS: u64 = 100;
const PP_SIZE: usize = 4096;

/// RESET -> INIT -> RTR -> RTS for an RC QP, as ibv_rc_pingpong's `pp_connect_ctx`.
fn rc_connect(ctx: &Context, qp: &QueuePair, my_psn: u32, peer: &Dest) {
    let av = ctx.address_to(peer.mac, peer.ip).unwrap();
    qp.modify(&ModifyQp::rc_rtr(av, peer.qpn, peer.psn))
        .unwrap();
    assert_eq!(qp.state().unwrap(), QpState::Rtr);
    qp.modify(&ModifyQp::rc_rts(my_psn)).unwrap();
    assert_eq!(qp.state().unwrap(), QpState::Rts);
}

/// One side of ibv_rc_pingpong: 4096-byte SENDs, the client first, strict alternation, every
/// message checked. Returns the NIC's counters.
fn rc_pingpong_side(ctx: Context, oob: Oob, done: Arc<AtomicUsize>, client: bool) -> Counters {
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(501).unwrap();
    let qp = pd.create_qp(QpType::Rc, &cq, &cq).build().unwrap();
    let send = pd.reg_mr(PP_SIZE, Access::LOCAL_WRITE).unwrap();
    let recv = pd.reg_mr(PP_SIZE, Access::LOCAL_WRITE).unwrap();
    qp.modify(&ModifyQp::rc_init(Access::NONE)).unwrap();
    assert_eq!(qp.state().unwrap(), QpState::Init);
    let post_recv = |i: u64| {
        qp.post_recv(RecvWr::new(1000 + i).sge(recv.addr(), PP_SIZE as u32, recv.lkey()))
            .unwrap()
    };
    post_recv(0);
    // PSNs near the top of the 24-bit space, so the exchange wraps them.
    let my_psn = if client { 0xFF_FF00 } else { 0xFF_FFF0 };
    // The client sends its address first; the server connects before answering with its own,
    // so it is ready when the first message comes.
    if client {
        oob.send(dest(&ctx, &qp, my_psn, None));
        let peer = oob.recv();
        rc_connect(&ctx, &qp, my_psn, &peer);
    } else {
        let peer = oob.recv();
        rc_connect(&ctx, &qp, my_psn, &peer);
        oob.send(dest(&ctx, &qp, my_psn, None));
    }
    let ping = |i: u64| pattern::bytes(2 * i, PP_SIZE);
    let pong = |i: u64| pattern::bytes(2 * i + 1, PP_SIZE);
    let send_msg = |i: u64, data: &[u8]| {
        send.write(0, data).unwrap();
        qp.post_send(SendWr::new(i, WrOpcode::Send).sge(send.addr(), PP_SIZE as u32, send.lkey()))
            .unwrap();
    };
    let check_recv = |wc: &WorkCompletion, i: u64, want: &[u8], what: &str| {
        ok(wc, WcOpcode::Recv, what);
        assert_eq!(
            (wc.wr_id, wc.byte_len, wc.qp_num),
            (1000 + i, PP_SIZE as u32, qp.qpn())
        );
        assert!(
            recv.read(0, PP_SIZE).unwrap() == want,
            "{what}: data differs"
        );
    };
    let mut wcs = Wcs::new(&cq);
    let check_send = |wcs: &mut Wcs, i: u64, what: &str| {
        let wc = wcs.take(WcOpcode::Send, what);
        ok(&wc, WcOpcode::Send, what);
        assert_eq!((wc.wr_id, wc.byte_len), (i, PP_SIZE as u32), "{what}");
    };
    for i in 0..PP_ITERS {
        if client {
            send_msg(i, &ping(i));
            let what = format!("client iteration {i}");
            check_send(&mut wcs, i, &what);
            check_recv(&wcs.take(WcOpcode::Recv, &what), i, &pong(i), &what);
            post_recv(i + 1);
        } else {
            let what = format!("server iteration {i}");
            check_recv(&wcs.take(WcOpcode::Recv, &what), i, &ping(i), &what);
            post_recv(i + 1);
            send_msg(i, &pong(i));
            check_send(&mut wcs, i, &what);
        }
    }
    assert!(wcs.buf.is_empty(), "left over: {:?}", wcs.buf);
    linger(&ctx, &done);
    assert_eq!(qp.state().unwrap(), QpState::Rts);
    ctx.counters()
}

fn rc_pingpong(link: (ChannelLink, ChannelLink)) -> (Counters, Counters) {
    two_nics(
        link,
        |ctx, oob, done| rc_pingpong_side(ctx, oob, done, true),
        |ctx, oob, done| rc_pingpong_side(ctx, oob, done, false),
    )
}

#[test]
fn rc_pingpong_100_sends_of_4096_bytes() {
    let (c, s) = rc_pingpong(ChannelLink::pair());
    for (name, k) in [("client", &c), ("server", &s)] {
        // 4096 bytes at MTU 1024: four packets a message, nothing lost, nothing resent.
        assert_eq!(k.req_packets, 4 * PP_ITERS, "{name}: {k:?}");
        assert_eq!(k.req_retransmitted, 0, "{name}: {k:?}");
        assert_eq!(k.resp_executed, 4 * PP_ITERS, "{name}: {k:?}");
        assert_eq!(k.wc_errors, 0, "{name}: {k:?}");
    }
}

#[test]
fn rc_pingpong_completes_when_every_7th_frame_is_lost() {
    let (a, b) = ChannelLink::pair();
    let (a, b) = (a.drop_every(7, 0), b.drop_every(7, 3));
    let (sa, sb) = (a.stats(), b.stats());
    let (c, s) = rc_pingpong((a, b));
    let dropped = sa.dropped() + sb.dropped();
    assert!(dropped >= 100, "the link dropped {dropped} frames");
    let resent = c.req_retransmitted + s.req_retransmitted;
    let retries = c.comp_timeouts + s.comp_timeouts + c.nak_seq_received + s.nak_seq_received;
    assert!(resent > 0 && retries > 0, "client {c:?}\nserver {s:?}");
    assert!(
        c.resp_duplicate + s.resp_duplicate + c.resp_out_of_sequence + s.resp_out_of_sequence > 0,
        "client {c:?}\nserver {s:?}"
    );
    assert_eq!(c.wc_errors + s.wc_errors, 0, "client {c:?}\nserver {s:?}");
    eprintln!(
        "lossy pingpong: {dropped} frames dropped, {resent} packets resent, {} timeouts, {} sequence NAKs",
        c.comp_timeouts + s.comp_timeouts,
        c.nak_seq_received + s.nak_seq_received
    );
}

#[test]
fn rdma_write_read_back_and_atomics() {
    const LEN: usize = 4096;
    const WORD: usize = LEN; // the atomic word's offset in the target's region
    let remote = Access::REMOTE_WRITE | Access::REMOTE_READ | Access::REMOTE_ATOMIC;
    two_nics(
        ChannelLink::pair(),
        move |ctx, oob, done| {
            let pd = ctx.alloc_pd().unwrap();
            let cq = ctx.create_cq(16).unwrap();
            let qp = pd.create_qp(QpType::Rc, &cq, &cq).build().unwrap();
            // [0, LEN): what is written; [LEN, 2 LEN): what is read back; then 8-byte results.
            let mr = pd.reg_mr(2 * LEN + 64, Access::LOCAL_WRITE).unwrap();
            qp.modify(&ModifyQp::rc_init(Access::NONE)).unwrap();
            oob.send(dest(&ctx, &qp, 100, None));
            let peer = oob.recv();
            rc_connect(&ctx, &qp, 100, &peer);

            let data = pattern::bytes(0xD47A, LEN);
            mr.write(0, &data).unwrap();
            qp.post_send(
                SendWr::new(1, WrOpcode::RdmaWrite)
                    .sge(mr.addr(), LEN as u32, mr.lkey())
                    .remote(peer.addr, peer.rkey),
            )
            .unwrap();
            let wc = wait_n(&cq, 1, "WRITE");
            ok(&wc[0], WcOpcode::RdmaWrite, "WRITE");
            assert_eq!((wc[0].wr_id, wc[0].byte_len), (1, LEN as u32));

            qp.post_send(
                SendWr::new(2, WrOpcode::RdmaRead)
                    .sge(mr.addr() + LEN as u64, LEN as u32, mr.lkey())
                    .remote(peer.addr, peer.rkey),
            )
            .unwrap();
            let wc = wait_n(&cq, 1, "READ");
            ok(&wc[0], WcOpcode::RdmaRead, "READ");
            assert_eq!((wc[0].wr_id, wc[0].byte_len), (2, LEN as u32));
            assert!(
                mr.read(LEN, LEN).unwrap() == data,
                "READ returned other bytes"
            );

            // FETCH_ADD twice, then COMPARE_SWAP; each returns the word before it.
            let word =
                |off: usize| u64::from_le_bytes(mr.read(off, 8).unwrap().try_into().unwrap());
            let ops = [
                (WrOpcode::AtomicFetchAndAdd, 5, 0, 100, WcOpcode::FetchAdd),
                (WrOpcode::AtomicFetchAndAdd, 7, 0, 105, WcOpcode::FetchAdd),
                (
                    WrOpcode::AtomicCmpAndSwp,
                    112,
                    1000,
                    112,
                    WcOpcode::CompSwap,
                ),
            ];
            for (k, (op, compare_add, swap, orig, wc_op)) in ops.into_iter().enumerate() {
                let off = 2 * LEN + 8 * k;
                qp.post_send(
                    SendWr::new(10 + k as u64, op)
                        .sge(mr.addr() + off as u64, 8, mr.lkey())
                        .remote(peer.addr + WORD as u64, peer.rkey)
                        .atomic(compare_add, swap),
                )
                .unwrap();
                let wc = wait_n(&cq, 1, "atomic");
                ok(&wc[0], wc_op, "atomic");
                assert_eq!((wc[0].wr_id, wc[0].byte_len), (10 + k as u64, 8));
                assert_eq!(word(off), orig, "{op:?} returned the original value");
            }
            // Tell the target we are done (a zero-length SEND).
            qp.post_send(SendWr::new(99, WrOpcode::Send)).unwrap();
            ok(&wait_n(&cq, 1, "done")[0], WcOpcode::Send, "done");
            linger(&ctx, &done);
        },
        move |ctx, oob, done| {
            let pd = ctx.alloc_pd().unwrap();
            let cq = ctx.create_cq(16).unwrap();
            let qp = pd.create_qp(QpType::Rc, &cq, &cq).build().unwrap();
            let mr = pd.reg_mr(LEN + 8, Access::LOCAL_WRITE | remote).unwrap();
            mr.write(WORD, &100u64.to_le_bytes()).unwrap();
            qp.modify(&ModifyQp::rc_init(remote)).unwrap();
            qp.post_recv(RecvWr::new(7)).unwrap();
            let peer = oob.recv();
            rc_connect(&ctx, &qp, 200, &peer);
            oob.send(dest(&ctx, &qp, 200, Some(&mr)));
            // The target sees nothing until the done message; its NIC answers meanwhile.
            let wc = wait_n(&cq, 1, "target's done message");
            ok(&wc[0], WcOpcode::Recv, "done message");
            assert_eq!((wc[0].wr_id, wc[0].byte_len), (7, 0));
            assert!(
                mr.read(0, LEN).unwrap() == pattern::bytes(0xD47A, LEN),
                "the WRITE's bytes are in the target's memory"
            );
            let word = u64::from_le_bytes(mr.read(WORD, 8).unwrap().try_into().unwrap());
            assert_eq!(word, 1000, "100 + 5 + 7, then swapped for 1000");
            let k = ctx.counters();
            assert_eq!(k.atomic_acks_sent, 3, "{k:?}");
            assert_eq!(k.read_responses_sent, 4, "{k:?}");
            linger(&ctx, &done);
        },
    );
}

#[test]
fn ud_pingpong_with_the_grh_in_front() {
    const SIZE: usize = 2048;
    const GRH: usize = 40;
    const QKEY: u32 = 0x1111_1111;
    const ITERS: u64 = 100;
    let side = |client: bool| {
        move |ctx: Context, oob: Oob, done: Arc<AtomicUsize>| {
            let pd = ctx.alloc_pd().unwrap();
            let cq = ctx.create_cq(64).unwrap();
            let qp = pd.create_qp(QpType::Ud, &cq, &cq).build().unwrap();
            let send = pd.reg_mr(SIZE, Access::LOCAL_WRITE).unwrap();
            let recv = pd.reg_mr(SIZE + GRH, Access::LOCAL_WRITE).unwrap();
            qp.modify(&ModifyQp::ud_init(QKEY)).unwrap();
            qp.modify(&ModifyQp::ud_rtr()).unwrap();
            let psn = if client { 0x10 } else { 0x20 };
            qp.modify(&ModifyQp::ud_rts(psn)).unwrap();
            assert_eq!(qp.state().unwrap(), QpState::Rts);
            let post_recv = |i: u64| {
                qp.post_recv(RecvWr::new(i).sge(recv.addr(), (SIZE + GRH) as u32, recv.lkey()))
                    .unwrap()
            };
            post_recv(0);
            let peer = if client {
                oob.send(dest(&ctx, &qp, psn, None));
                oob.recv()
            } else {
                let p = oob.recv();
                oob.send(dest(&ctx, &qp, psn, None));
                p
            };
            let to = UdDest {
                av: ctx.address_to(peer.mac, peer.ip).unwrap(),
                remote_qpn: peer.qpn,
                remote_qkey: QKEY,
            };
            let msg =
                |i: u64, from_client: bool| pattern::bytes(4 * i + u64::from(from_client), SIZE);
            let send_msg = |i: u64| {
                send.write(0, &msg(i, client)).unwrap();
                qp.post_send(
                    SendWr::new(i, WrOpcode::Send)
                        .sge(send.addr(), SIZE as u32, send.lkey())
                        .ud(to),
                )
                .unwrap();
            };
            let check = |wc: &WorkCompletion, i: u64| {
                ok(wc, WcOpcode::Recv, "UD receive");
                assert_eq!(wc.byte_len as usize, GRH + SIZE, "{wc:?}");
                assert_eq!(wc.src_qp, peer.qpn, "{wc:?}");
                assert!(wc.flags.contains(WcFlags::GRH), "{wc:?}");
                let buf = recv.read(0, GRH + SIZE).unwrap();
                // An IPv4 GRH: the IP header in the last 20 bytes of the 40.
                assert_eq!(buf[20], 0x45, "IPv4 header at GRH offset 20");
                assert_eq!(
                    &buf[32..36],
                    &[10, 0, 0, if client { 2 } else { 1 }],
                    "source"
                );
                assert!(buf[GRH..] == msg(i, !client), "UD payload after the GRH");
            };
            let mut wcs = Wcs::new(&cq);
            for i in 0..ITERS {
                if client {
                    send_msg(i);
                    ok(
                        &wcs.take(WcOpcode::Send, "UD client"),
                        WcOpcode::Send,
                        "UD send",
                    );
                    check(&wcs.take(WcOpcode::Recv, "UD client"), i);
                    post_recv(i + 1);
                } else {
                    check(&wcs.take(WcOpcode::Recv, "UD server"), i);
                    post_recv(i + 1);
                    send_msg(i);
                    ok(
                        &wcs.take(WcOpcode::Send, "UD server"),
                        WcOpcode::Send,
                        "UD send",
                    );
                }
            }
            assert!(wcs.buf.is_empty(), "left over: {:?}", wcs.buf);
            linger(&ctx, &done);
            let k = ctx.counters();
            assert_eq!((k.ud_dropped, k.req_packets), (0, ITERS), "{k:?}");
        }
    };
    two_nics(ChannelLink::pair(), side(true), side(false));
}

/// One NIC whose link end leads nowhere in particular (the other end is kept, unused).
fn lone_nic() -> (Context, ChannelLink) {
    let (a, b) = ChannelLink::pair();
    (Context::open(ModelBackend::new(config(1), a)), b)
}

#[test]
fn post_send_before_rts_is_refused_naming_rts() {
    let (ctx, _peer) = lone_nic();
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let qp = pd.create_qp(QpType::Rc, &cq, &cq).build().unwrap();
    let mr = pd.reg_mr(64, Access::LOCAL_WRITE).unwrap();
    let wr = SendWr::new(1, WrOpcode::Send).sge(mr.addr(), 64, mr.lkey());
    let e = qp.post_send(wr.clone()).unwrap_err();
    assert_eq!(e.call, "post_send");
    assert!(
        e.reason.contains("RESET") && e.reason.contains("RTS"),
        "{e}"
    );
    qp.modify(&ModifyQp::rc_init(Access::NONE)).unwrap();
    let e = qp.post_send(wr.clone()).unwrap_err();
    assert!(e.to_string().starts_with("post_send: "), "{e}");
    assert!(e.reason.contains("INIT") && e.reason.contains("RTS"), "{e}");
    let peer = IpAddr::from([10, 0, 0, 2]);
    let av = ctx.address_to(MacAddr([2, 0, 0, 0, 0, 2]), peer).unwrap();
    qp.modify(&ModifyQp::rc_rtr(av, 0x11, 0)).unwrap();
    let e = qp.post_send(wr).unwrap_err();
    assert!(e.reason.contains("RTR") && e.reason.contains("RTS"), "{e}");
    // Other refusals name their call too.
    let e = qp.modify(&ModifyQp::rc_init(Access::NONE)).unwrap_err();
    assert_eq!(e.call, "modify_qp");
    assert!(e.reason.contains("RTR -> INIT"), "{e}");
    let e = mr.read(60, 8).unwrap_err();
    assert_eq!(e.call, "read_mr", "{e}");
    assert!(cq.poll(16).unwrap().is_empty());
}

#[test]
fn a_bad_lkey_completes_with_loc_prot_err() {
    let (ctx, _peer) = lone_nic();
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let qp = pd.create_qp(QpType::Rc, &cq, &cq).build().unwrap();
    let mr = pd.reg_mr(64, Access::LOCAL_WRITE).unwrap();
    qp.modify(&ModifyQp::rc_init(Access::NONE)).unwrap();
    let av = ctx
        .address_to(MacAddr([2, 0, 0, 0, 0, 2]), IpAddr::from([10, 0, 0, 2]))
        .unwrap();
    qp.modify(&ModifyQp::rc_rtr(av, 0x11, 0)).unwrap();
    qp.modify(&ModifyQp::rc_rts(0)).unwrap();
    let bad = mr.lkey() ^ 0x80; // same index, another tag
    qp.post_send(SendWr::new(5, WrOpcode::Send).sge(mr.addr(), 64, bad))
        .unwrap();
    let wc = wait_n(&cq, 1, "bad lkey");
    assert_eq!(wc[0].wr_id, 5);
    assert_eq!(wc[0].status, WcStatus::LocProtErr, "{:?}", wc[0]);
    assert_eq!(wc[0].status.name(), "IBV_WC_LOC_PROT_ERR");
    assert_eq!(qp.state().unwrap(), QpState::Err);
    // Later requests on the QP in ERR complete flushed.
    qp.post_send(SendWr::new(6, WrOpcode::Send).sge(mr.addr(), 64, mr.lkey()))
        .unwrap();
    let wc = wait_n(&cq, 1, "flushed");
    assert_eq!((wc[0].wr_id, wc[0].status), (6, WcStatus::WrFlushErr));
    assert_eq!(ctx.counters().req_packets, 0, "nothing was sent");
}

#[test]
fn frames_that_are_not_roce_reach_take_raw() {
    let (a, b) = ChannelLink::pair();
    let one = Context::open(ModelBackend::new(config(1), a));
    let two = Context::open(ModelBackend::new(config(2), b));
    // A broadcast ARP request (EtherType 0x0806), padded to the minimum frame.
    let mut arp = vec![0xFF; 6];
    arp.extend_from_slice(&[0x02, 0, 0, 0, 0, 1, 0x08, 0x06]);
    arp.resize(60, 0);
    one.send_raw(arp.clone()).unwrap();
    let deadline = Instant::now() + STEP;
    let got = loop {
        two.progress(Duration::from_millis(10)).unwrap();
        let raw = two.take_raw();
        if !raw.is_empty() {
            break raw;
        }
        assert!(Instant::now() < deadline, "the ARP frame never arrived");
    };
    assert_eq!(got, vec![arp]);
    assert_eq!(two.counters().rx_raw, 1);
}

#[test]
fn the_builders_set_what_the_pingpong_examples_set() {
    fn _backend_is_object_safe(_: &dyn Backend) {}
    fn _link_is_object_safe(_: &dyn FrameLink) {}
    let av = AddressVector::new(
        MacAddr([2, 0, 0, 0, 0, 2]),
        IpAddr::from([10, 0, 0, 1]),
        IpAddr::from([10, 0, 0, 2]),
    );
    let init = ModifyQp::rc_init(Access::REMOTE_WRITE);
    assert_eq!(
        init.mask,
        AttrMask::STATE | AttrMask::PKEY_INDEX | AttrMask::PORT | AttrMask::ACCESS_FLAGS
    );
    assert_eq!(
        (init.attr.state, init.attr.access, init.attr.port),
        (QpState::Init, Access::REMOTE_WRITE, 1)
    );
    let rtr = ModifyQp::rc_rtr(av, 0x12, 0x345);
    assert_eq!(
        rtr.mask,
        AttrMask::STATE
            | AttrMask::AV
            | AttrMask::PATH_MTU
            | AttrMask::DEST_QPN
            | AttrMask::RQ_PSN
            | AttrMask::MAX_DEST_RD_ATOMIC
            | AttrMask::MIN_RNR_TIMER
    );
    let a = &rtr.attr;
    assert_eq!(
        (
            a.path_mtu,
            a.dest_qpn,
            a.rq_psn,
            a.max_dest_rd_atomic,
            a.min_rnr_timer,
            a.av
        ),
        (Mtu::M1024, 0x12, 0x345, 1, 12, Some(av))
    );
    let rts = ModifyQp::rc_rts(7);
    assert_eq!(
        rts.mask,
        AttrMask::STATE
            | AttrMask::TIMEOUT
            | AttrMask::RETRY_CNT
            | AttrMask::RNR_RETRY
            | AttrMask::SQ_PSN
            | AttrMask::MAX_QP_RD_ATOMIC
    );
    let a = &rts.attr;
    assert_eq!(
        (
            a.timeout,
            a.retry_cnt,
            a.rnr_retry,
            a.sq_psn,
            a.max_rd_atomic
        ),
        (14, 7, 7, 7, 1)
    );
    assert_eq!(
        ModifyQp::ud_init(0x1111_1111).mask,
        AttrMask::STATE | AttrMask::PKEY_INDEX | AttrMask::PORT | AttrMask::QKEY
    );
    assert_eq!(ModifyQp::ud_rtr().mask, AttrMask::STATE);
    assert_eq!(ModifyQp::ud_rts(3).mask, AttrMask::STATE | AttrMask::SQ_PSN);
    let m = ModifyQp::rc_rtr(av, 1, 2).path_mtu(Mtu::M4096);
    assert_eq!(m.attr.path_mtu, Mtu::M4096);
}
