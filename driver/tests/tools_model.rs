//! The host tools over the verbs API on two model NICs: `ibv_rc_pingpong` and
//! `ibv_ud_pingpong` run end to end over a real TCP exchange on loopback, with the peers'
//! MACs resolved by ARP through the NICs (each answers for its own address), also on a link
//! that loses every 5th RoCE frame.

use std::net::{IpAddr, TcpListener, TcpStream};
use std::thread;
use std::time::Duration;

use rnic_driver::model::{ChannelLink, ModelBackend, NicConfig};
use rnic_driver::tools::perftest;
use rnic_driver::tools::pingpong::{self, Options, Role};
use rnic_driver::verbs::*;

fn context(n: u8, link: ChannelLink) -> Context {
    let cfg = NicConfig::new(MacAddr([0x02, 0, 0, 0, 0, n]), IpAddr::from([10, 0, 0, n]));
    Context::open(ModelBackend::new(cfg, link))
}

fn pingpong(opts: Options, drop_every: Option<u64>) -> (pingpong::Report, pingpong::Report) {
    let (a, b) = ChannelLink::pair();
    let (a, b) = match drop_every {
        Some(n) => (a.drop_every(n, 0), b.drop_every(n, 3)),
        None => (a, b),
    };
    let (server_ctx, client_ctx) = (context(1, a), context(2, b));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let o = opts.clone();
    let server = thread::spawn(move || {
        let _bg = server_ctx.run_in_background();
        let (s, _) = listener.accept().unwrap();
        let session = pingpong::run(&server_ctx, Role::Server(s), &o)?;
        // The client's last ACK may be lost: answer until it has gone quiet.
        session.linger(Duration::from_millis(300), Duration::from_secs(10), || {
            false
        });
        Ok::<_, String>(session.report.clone())
    });
    let _bg = client_ctx.run_in_background();
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let session = pingpong::run(&client_ctx, Role::Client(s), &opts).expect("client");
    session.linger(Duration::from_millis(300), Duration::from_secs(10), || {
        false
    });
    let server = server.join().unwrap().expect("server");
    (server, session.report.clone())
}

#[test]
fn rc_pingpong_between_two_model_nics() {
    let mut o = Options::new(false);
    o.iters = 50;
    let (s, c) = pingpong(o, None);
    assert_eq!((s.remote.qpn, s.remote.psn), (c.local.qpn, c.local.psn));
    assert_eq!((c.remote.qpn, c.remote.psn), (s.local.qpn, s.local.psn));
    // 4096-byte SENDs at MTU 1024: 4 packets each, 50 each way, no loss.
    for r in [&s, &c] {
        assert_eq!(r.counters.req_packets, 200, "{:?}", r.counters);
        assert_eq!(r.counters.req_retransmitted, 0);
        assert!(r.counters.arp_replies >= 1, "the peer resolved us by ARP");
    }
    let text = c.text();
    assert!(text.contains("409600 bytes in"), "{text}");
    assert!(text.contains("50 iters in"), "{text}");
    assert!(text.contains("GID ::ffff:10.0.0.1"), "{text}");
}

#[test]
fn rc_pingpong_recovers_from_loss() {
    let mut o = Options::new(false);
    o.iters = 30;
    o.size = 2048;
    let (s, c) = pingpong(o, Some(5));
    let retx = s.counters.req_retransmitted + c.counters.req_retransmitted;
    assert!(retx > 0, "{:?} {:?}", s.counters, c.counters);
}

#[test]
fn ud_pingpong_between_two_model_nics() {
    let mut o = Options::new(true);
    o.iters = 40;
    o.size = 512;
    let (s, c) = pingpong(o, None);
    for r in [&s, &c] {
        assert_eq!(r.counters.req_packets, 40);
        assert_eq!(r.counters.ud_dropped, 0);
    }
}

fn perftest(test: perftest::Test, iters: u32, size: u32) -> (perftest::Report, perftest::Report) {
    let (a, b) = ChannelLink::pair();
    let (server_ctx, client_ctx) = (context(1, a), context(2, b));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut o = perftest::Options::new(test);
    o.iters = iters;
    o.size = size;
    let so = o.clone();
    let server = thread::spawn(move || {
        let _bg = server_ctx.run_in_background();
        let (s, _) = listener.accept().unwrap();
        perftest::run(&server_ctx, s, false, &so)
    });
    let _bg = client_ctx.run_in_background();
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let client = perftest::run(&client_ctx, s, true, &o).expect("client");
    (server.join().unwrap().expect("server"), client)
}

#[test]
fn perftest_bandwidth_tests_between_two_model_nics() {
    use perftest::Test;
    for (test, size) in [
        (Test::Write, 8192u32),
        (Test::Read, 8192),
        (Test::Send, 4096),
        (Test::Atomic, 8),
    ] {
        let (s, c) = perftest(test, 40, size);
        assert_eq!(c.ours.iters, 40, "{test:?}");
        assert!(c.ours.bw_avg > 0.0);
        // The server got the client's report through the exchange.
        if test != Test::Send {
            assert_eq!(s.theirs.unwrap().iters, 40);
            assert_eq!(s.theirs.unwrap().bw_avg, c.ours.bw_avg);
        }
        let packets = u64::from(size.div_ceil(1024)) * 40;
        match test {
            Test::Write | Test::Send => assert_eq!(c.counters.req_packets, packets),
            Test::Read => assert_eq!(s.counters.read_responses_sent, packets),
            Test::Atomic => assert_eq!(s.counters.atomic_acks_sent, 40),
        }
        assert!(c.text().contains("#bytes"), "{}", c.text());
    }
}
