//! `rnic pingpong` and `rnic perf`: the rdma-core pingpong examples and perftest's bandwidth
//! tests on our NIC (the transport model), compatible with the real tools over TCP and on the
//! wire, against any peer reachable through a network interface (a raw packet socket). The
//! TCP exchange uses the kernel's own address on that network; our NIC has an address of its
//! own (`--ip`), which the kernel must not own.

use std::net::{IpAddr, Ipv4Addr, TcpListener, TcpStream};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use clap::Args;
use rnic_driver::model::{ModelBackend, NicConfig};
use rnic_driver::rawsock::RawSocketLink;
use rnic_driver::tools::{perftest, pingpong};
use rnic_driver::verbs::{Context, MacAddr, Mtu};

/// Where our NIC is attached and what it is called.
#[derive(Args, Debug, Clone)]
pub struct NicArgs {
    /// The network interface our NIC sends and receives on (raw socket; needs CAP_NET_RAW).
    #[arg(long)]
    pub iface: String,
    /// Our NIC's IPv4 address (its GID ::ffff:ADDR); not one the kernel owns there.
    #[arg(long)]
    pub ip: Ipv4Addr,
    /// Our NIC's MAC (default 02:00 followed by the address's four bytes).
    #[arg(long)]
    pub mac: Option<String>,
    /// GID index (as the real tools' -g/-x): 1, the IPv4-mapped GID, is the only one.
    #[arg(short = 'g', long = "gid-index", default_value_t = 1)]
    pub gid_index: u8,
    /// TCP port of the exchange.
    #[arg(short = 'p', long, default_value_t = 18515)]
    pub port: u16,
    /// After the run, keep answering (re-ACKing the peer's resends) until the peer has been
    /// silent this many seconds: ibv_rc_pingpong has no closing handshake, so a peer whose
    /// last ACK was lost resends until it hears one.
    #[arg(long, default_value_t = 2)]
    pub linger: u64,
}

#[derive(Args, Debug)]
pub struct PingpongArgs {
    #[command(flatten)]
    pub nic: NicArgs,
    /// ibv_ud_pingpong instead of ibv_rc_pingpong.
    #[arg(long)]
    pub ud: bool,
    /// The server to connect to; without it we are the server.
    pub host: Option<String>,
    /// Message size (default 4096, UD 1024).
    #[arg(short = 's', long)]
    pub size: Option<u32>,
    /// Iterations.
    #[arg(short = 'n', long, default_value_t = 1000)]
    pub iters: u32,
    /// Path MTU in bytes.
    #[arg(short = 'm', long, default_value_t = 1024)]
    pub mtu: usize,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerfTest {
    Send,
    Write,
    Read,
    Atomic,
}

#[derive(Args, Debug)]
pub struct PerfArgs {
    /// Which bandwidth test.
    #[arg(value_enum)]
    pub test: PerfTest,
    #[command(flatten)]
    pub nic: NicArgs,
    /// The server to connect to; without it we are the server.
    pub host: Option<String>,
    /// Message size (default 65536; atomics are 8 bytes).
    #[arg(short = 's', long)]
    pub size: Option<u32>,
    /// Iterations (default 1000, write 5000).
    #[arg(short = 'n', long)]
    pub iters: Option<u32>,
    /// Outstanding work requests.
    #[arg(short = 't', long, default_value_t = 128)]
    pub tx_depth: u32,
    /// Path MTU in bytes.
    #[arg(short = 'm', long, default_value_t = 1024)]
    pub mtu: usize,
}

fn parse_mac(s: &str) -> Result<MacAddr> {
    let b: Vec<u8> = s
        .split(':')
        .map(|x| u8::from_str_radix(x, 16))
        .collect::<Result<_, _>>()
        .with_context(|| format!("--mac {s:?} is not a MAC address"))?;
    let b: [u8; 6] = b
        .try_into()
        .map_err(|_| anyhow::anyhow!("--mac {s:?} is not six bytes"))?;
    Ok(MacAddr(b))
}

/// Our NIC on the interface, running in the background, and the TCP connection.
fn open(nic: &NicArgs, host: Option<&str>) -> Result<(Context, TcpStream, bool)> {
    if nic.gid_index != 1 {
        bail!(
            "GID index {}: this NIC has one GID, index 1 (::ffff:{}); RoCEv2 over IPv4",
            nic.gid_index,
            nic.ip
        );
    }
    let mac = match &nic.mac {
        Some(m) => parse_mac(m)?,
        None => {
            let o = nic.ip.octets();
            MacAddr([0x02, 0x00, o[0], o[1], o[2], o[3]])
        }
    };
    let link = RawSocketLink::open(&nic.iface)?;
    let ctx = Context::open(ModelBackend::new(
        NicConfig::new(mac, IpAddr::V4(nic.ip)),
        link,
    ));
    let (tcp, client) = match host {
        Some(h) => (
            TcpStream::connect((h, nic.port))
                .with_context(|| format!("connecting to {h}:{}", nic.port))?,
            true,
        ),
        None => {
            let l = TcpListener::bind(("0.0.0.0", nic.port))
                .with_context(|| format!("listening on port {}", nic.port))?;
            println!("waiting for a client on port {}", nic.port);
            (l.accept().context("accepting")?.0, false)
        }
    };
    Ok((ctx, tcp, client))
}

fn mtu_of(n: usize) -> Result<Mtu> {
    Mtu::from_bytes(n).with_context(|| format!("MTU {n} is not 256, 512, 1024, 2048 or 4096"))
}

pub fn run_pingpong(a: &PingpongArgs) -> Result<ExitCode> {
    let mtu = mtu_of(a.mtu)?;
    let (ctx, tcp, client) = open(&a.nic, a.host.as_deref())?;
    let _bg = ctx.run_in_background();
    let mut o = pingpong::Options::new(a.ud);
    if let Some(s) = a.size {
        o.size = s;
    }
    o.iters = a.iters;
    o.mtu = mtu;
    let role = if client {
        pingpong::Role::Client(tcp)
    } else {
        pingpong::Role::Server(tcp)
    };
    match pingpong::run(&ctx, role, &o) {
        Ok(session) => {
            print!("{}", session.report.text());
            // Silence ends it; the bound only stops a peer that never stops resending.
            session.linger(
                Duration::from_secs(a.nic.linger),
                Duration::from_secs(600),
                || false,
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

pub fn run_perf(a: &PerfArgs) -> Result<ExitCode> {
    let mtu = mtu_of(a.mtu)?;
    let test = match a.test {
        PerfTest::Send => perftest::Test::Send,
        PerfTest::Write => perftest::Test::Write,
        PerfTest::Read => perftest::Test::Read,
        PerfTest::Atomic => perftest::Test::Atomic,
    };
    let mut o = perftest::Options::new(test);
    if let Some(s) = a.size {
        o.size = s;
    }
    if let Some(n) = a.iters {
        o.iters = n;
    }
    o.tx_depth = a.tx_depth.max(1);
    o.mtu = mtu;
    if o.iters < 5 {
        bail!("-n {}: perftest needs at least 5 iterations", o.iters);
    }
    let (ctx, tcp, client) = open(&a.nic, a.host.as_deref())?;
    let _bg = ctx.run_in_background();
    match perftest::run(&ctx, tcp, client, &o) {
        Ok(r) => {
            print!("{}", r.text());
            std::thread::sleep(Duration::from_secs(a.nic.linger));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(1))
        }
    }
}
