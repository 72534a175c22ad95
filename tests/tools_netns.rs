//! `rnic pingpong` and `rnic perf` through real Linux interfaces: two network namespaces
//! joined by a veth pair, one of our model NICs on each end through a raw packet socket, the
//! TCP exchange over the kernels' own addresses. Needs root (namespaces, raw sockets) and
//! iproute2; without them the test fails saying so.

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Two namespaces joined by a veth pair; removed when dropped.
struct Pair {
    a: String,
    b: String,
}

fn ip(args: &[&str]) {
    let o = Command::new("ip")
        .args(args)
        .output()
        .expect("ip (iproute2) must be installed: apt-get install -y iproute2");
    assert!(
        o.status.success(),
        "ip {}: {} (this test needs root)",
        args.join(" "),
        String::from_utf8_lossy(&o.stderr)
    );
}

impl Pair {
    fn new(tag: &str) -> Pair {
        let id = std::process::id();
        let (a, b) = (format!("rn{tag}a{id}"), format!("rn{tag}b{id}"));
        let (va, vb) = (
            format!("v{tag}a{}", id % 10000),
            format!("v{tag}b{}", id % 10000),
        );
        ip(&["netns", "add", &a]);
        let p = Pair { a, b };
        ip(&["netns", "add", &p.b]);
        ip(&["link", "add", &va, "type", "veth", "peer", "name", &vb]);
        ip(&["link", "set", &va, "netns", &p.a]);
        ip(&["link", "set", &vb, "netns", &p.b]);
        for (ns, dev, addr) in [(&p.a, &va, "10.9.0.11/24"), (&p.b, &vb, "10.9.0.12/24")] {
            ip(&["-n", ns, "addr", "add", addr, "dev", dev]);
            ip(&["-n", ns, "link", "set", dev, "up"]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        p
    }

    fn rnic(&self, ns: &str, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns, env!("CARGO_BIN_EXE_rnic")]);
        c.args(args);
        c
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        for ns in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

fn wait(mut c: Child, limit: Duration) -> Output {
    let end = Instant::now() + limit;
    while c.try_wait().unwrap().is_none() {
        if Instant::now() > end {
            let _ = c.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    c.wait_with_output().unwrap()
}

/// Runs the same tool as server in A and client in B; returns both outputs.
fn both(p: &Pair, a_dev: &str, b_dev: &str, tool: &[&str]) -> (String, String) {
    let mut sa = tool.to_vec();
    sa.extend(["--iface", a_dev, "--ip", "10.9.0.1", "--linger", "1"]);
    let server = p
        .rnic(&p.a, &sa)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The server listens before the client connects (the client does not retry).
    std::thread::sleep(Duration::from_millis(700));
    let mut sb = tool.to_vec();
    sb.extend([
        "--iface",
        b_dev,
        "--ip",
        "10.9.0.2",
        "--linger",
        "1",
        "10.9.0.11",
    ]);
    let client = p
        .rnic(&p.b, &sb)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (c, s) = (
        wait(client, Duration::from_secs(60)),
        wait(server, Duration::from_secs(60)),
    );
    let text = |o: &Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    assert!(s.status.success(), "server: {}", text(&s));
    assert!(c.status.success(), "client: {}", text(&c));
    (text(&s), text(&c))
}

#[test]
fn pingpong_and_perftest_between_namespaces() {
    let p = Pair::new("t");
    let id = std::process::id() % 10000;
    let (va, vb) = (format!("vta{id}"), format!("vtb{id}"));
    let (s, c) = both(&p, &va, &vb, &["pingpong", "-n", "50", "-s", "2048"]);
    for t in [&s, &c] {
        assert!(t.contains("204800 bytes in"), "{t}");
    }
    assert!(c.contains("remote address: LID 0x0000") && c.contains("GID ::ffff:10.9.0.1"));
    let (s, _) = both(&p, &va, &vb, &["pingpong", "--ud", "-n", "30", "-s", "512"]);
    assert!(s.contains("30720 bytes in"), "{s}");
    for test in ["write", "read", "send", "atomic"] {
        let (_, c) = both(&p, &va, &vb, &["perf", test, "-n", "50", "-s", "8192"]);
        let size = if test == "atomic" { "8 " } else { "8192 " };
        assert!(c.contains(&format!(" {size}")), "{test}: {c}");
        assert!(c.contains(" 50 "), "{test}: {c}");
    }
}

#[test]
fn bad_nic_arguments_are_refused() {
    for (args, needle) in [
        (
            vec!["pingpong", "--iface", "lo", "--ip", "10.0.0.300"],
            "10.0.0.300",
        ),
        (
            vec!["pingpong", "--iface", "nosuchif0", "--ip", "10.9.9.9"],
            "nosuchif0",
        ),
        (
            vec!["pingpong", "--iface", "lo", "--ip", "10.9.9.9", "-g", "0"],
            "GID index 0",
        ),
        (
            vec![
                "perf", "write", "--iface", "lo", "--ip", "10.9.9.9", "-n", "3",
            ],
            "at least 5",
        ),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_rnic"))
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
