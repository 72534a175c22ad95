//! `ibv_rc_pingpong` and `ibv_ud_pingpong` over the verbs API: the same 52-byte exchange over
//! TCP, the same QP settings and the same traffic (the client sends first; each side posts
//! its next SEND once its previous one completed and a message arrived), so either side can
//! be the real tool.

use std::net::{IpAddr, TcpStream};
use std::time::{Duration, Instant};

use super::exchange::{self, Dest};
use super::{fail, neighbour};
use crate::verbs::*;

/// `ibv_ud_pingpong`'s Q_Key.
pub const UD_QKEY: u32 = 0x1111_1111;
/// Bytes of the GRH area in front of every UD receive buffer.
pub const GRH_LEN: u32 = 40;
const SEND_WRID: u64 = 2;
const RECV_WRID: u64 = 1;

/// What the tool's options set.
#[derive(Clone, Debug)]
pub struct Options {
    pub ud: bool,
    /// Message size (`-s`): 4096 for RC, 1024 for UD by default.
    pub size: u32,
    /// Iterations each way (`-n`).
    pub iters: u32,
    /// Receives kept posted (`-r`, 500).
    pub rx_depth: u32,
    /// Path MTU (`-m`, 1024).
    pub mtu: Mtu,
    /// Our first PSN; random (`lrand48() & 0xffffff` in the original) when `None`.
    pub psn: Option<u32>,
    /// Longest wait for one completion before giving up.
    pub timeout: Duration,
    /// Set when the peer's tool is known to have finished successfully (a harness watching
    /// it). The peer finishes only after receiving all our messages, so then our last SEND
    /// counts as delivered even when its ACK was lost and the peer's QP is gone (the tools
    /// have no closing handshake).
    pub peer_done: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Options {
    pub fn new(ud: bool) -> Options {
        Options {
            ud,
            size: if ud { 1024 } else { 4096 },
            iters: 1000,
            rx_depth: 500,
            mtu: Mtu::M1024,
            psn: None,
            timeout: Duration::from_secs(20),
            peer_done: None,
        }
    }
}

/// Which side of the TCP exchange we are, on an established connection.
pub enum Role {
    /// We connected: we write first.
    Client(TcpStream),
    /// We accepted: we read first.
    Server(TcpStream),
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct Report {
    pub local: Dest,
    pub remote: Dest,
    pub iters: u32,
    pub size: u32,
    pub elapsed: Duration,
    pub counters: Counters,
    /// Our last SEND was never ACKed; the peer's success says it arrived.
    pub last_send_unacked: bool,
}

impl Report {
    /// The lines the original prints.
    pub fn text(&self) -> String {
        let bytes = u64::from(self.size) * u64::from(self.iters) * 2;
        let s = self.elapsed.as_secs_f64();
        format!(
            "  local address:  {}\n  remote address: {}\n{bytes} bytes in {s:.2} seconds = {:.2} Mbit/sec\n{} iters in {s:.2} seconds = {:.2} usec/iter\n",
            self.local,
            self.remote,
            bytes as f64 * 8.0 / s.max(1e-9) / 1e6,
            self.iters,
            s * 1e6 / f64::from(self.iters.max(1)),
        ) + if self.last_send_unacked {
            "the ACK of our last SEND was lost; the peer finished, so it had arrived\n"
        } else {
            ""
        }
    }
}

/// A finished run whose QP still answers: ibv_rc_pingpong has no closing handshake, so the
/// peer may still be resending its last message (our final ACK lost) after we are done. Drop
/// it once the peer has finished; [`Session::linger`] waits for that.
pub struct Session {
    pub report: Report,
    ctx: Context,
    // Field order is drop order: the QP before the CQ and the memory it uses.
    _qp: QueuePair,
    _cq: CompletionQueue,
    _mr: MemoryRegion,
    _pd: ProtectionDomain,
}

impl Session {
    /// Keeps the QP answering until `done()` says the peer has finished, or until no frame
    /// has arrived for `quiet`, whichever comes first; at most `max`.
    pub fn linger(&self, quiet: Duration, max: Duration, done: impl Fn() -> bool) {
        let end = Instant::now() + max;
        let mut last = self.ctx.counters().rx_frames;
        let mut since = Instant::now();
        while !done() && Instant::now() < end && since.elapsed() < quiet {
            std::thread::sleep(Duration::from_millis(20));
            let now = self.ctx.counters().rx_frames;
            if now != last {
                last = now;
                since = Instant::now();
            }
        }
    }
}

/// Runs the exchange and the traffic on `ctx`, which must be running in the background (so
/// that ARP and ACKs are answered while we wait on TCP).
pub fn run(ctx: &Context, role: Role, opts: &Options) -> Result<Session, String> {
    if opts.size == 0 || opts.iters == 0 || opts.rx_depth < 2 {
        return Err("size and iterations must be at least 1, rx depth at least 2".into());
    }
    if opts.ud && opts.size as usize > ctx.query_device().active_mtu.bytes() {
        return Err(format!(
            "UD messages of {} bytes do not fit the port MTU {}",
            opts.size,
            ctx.query_device().active_mtu.bytes()
        ));
    }
    let gid = ctx.gid().map_err(fail)?;
    let pd = ctx.alloc_pd().map_err(fail)?;
    let grh = if opts.ud { GRH_LEN } else { 0 };
    let buf_len = (opts.size + grh) as usize;
    let mr = pd.reg_mr(buf_len, Access::LOCAL_WRITE).map_err(fail)?;
    mr.write(0, &vec![0x7b; buf_len]).map_err(fail)?;
    let cq = ctx.create_cq((opts.rx_depth + 1) as usize).map_err(fail)?;
    let qp_type = if opts.ud { QpType::Ud } else { QpType::Rc };
    let qp = pd
        .create_qp(qp_type, &cq, &cq)
        .cap(QpCap {
            max_send_wr: 1,
            max_recv_wr: opts.rx_depth,
            max_send_sge: 1,
            max_recv_sge: 1,
            max_inline_data: 0,
        })
        .build()
        .map_err(fail)?;
    if opts.ud {
        qp.modify(&ModifyQp::ud_init(UD_QKEY)).map_err(fail)?;
    } else {
        qp.modify(&ModifyQp::rc_init(Access::NONE)).map_err(fail)?;
    }
    let post_recv = |n: u32| -> Result<u32, String> {
        for _ in 0..n {
            qp.post_recv(RecvWr {
                wr_id: RECV_WRID,
                sg_list: vec![mr.sge(0, opts.size + grh)],
            })
            .map_err(fail)?;
        }
        Ok(n)
    };
    let mut routs = post_recv(opts.rx_depth)?;
    let local = Dest {
        lid: 0,
        qpn: qp.qpn(),
        psn: opts.psn.unwrap_or_else(super::random_psn),
        gid: Dest::gid_of(gid),
    };

    // Connect: the server connects its QP between reading and writing, the client after.
    let connect = |remote: &Dest| -> Result<Option<AddressVector>, String> {
        let peer: IpAddr = remote.ip();
        let dmac = neighbour::resolve(ctx, peer, Duration::from_secs(3)).map_err(fail)?;
        let av = ctx.address_to(dmac, peer).map_err(fail)?;
        if opts.ud {
            qp.modify(&ModifyQp::ud_rtr()).map_err(fail)?;
            qp.modify(&ModifyQp::ud_rts(local.psn)).map_err(fail)?;
        } else {
            qp.modify(&ModifyQp::rc_rtr(av, remote.qpn, remote.psn).path_mtu(opts.mtu))
                .map_err(fail)?;
            qp.modify(&ModifyQp::rc_rts(local.psn)).map_err(fail)?;
        }
        Ok(Some(av))
    };
    let tcp_err = |e: std::io::Error| format!("TCP exchange: {e}");
    let (remote, av, client) = match role {
        Role::Client(mut s) => {
            let remote = exchange::client(&mut s, &local).map_err(tcp_err)?;
            let av = connect(&remote)?;
            (remote, av, true)
        }
        Role::Server(mut s) => {
            let remote = exchange::server_read(&mut s).map_err(tcp_err)?;
            let av = connect(&remote)?;
            exchange::server_reply(&mut s, &local).map_err(tcp_err)?;
            (remote, av, false)
        }
    };
    let av = av.expect("connected");
    let send = || -> Result<(), String> {
        let mut wr = SendWr::new(SEND_WRID, WrOpcode::Send).sge(
            mr.addr() + u64::from(grh),
            opts.size,
            mr.lkey(),
        );
        if opts.ud {
            wr = wr.ud(UdDest {
                av,
                remote_qpn: remote.qpn,
                remote_qkey: UD_QKEY,
            });
        }
        qp.post_send(wr).map_err(fail)
    };

    let start = Instant::now();
    let mut pending = RECV_WRID;
    if client {
        send()?;
        pending |= SEND_WRID;
    }
    let (mut scnt, mut rcnt) = (0u32, 0u32);
    let mut last_send_unacked = false;
    let mut waited = Duration::ZERO;
    let slice = Duration::from_millis(100).min(opts.timeout);
    while scnt < opts.iters || rcnt < opts.iters {
        let wcs = cq.wait(slice).map_err(fail)?;
        if wcs.is_empty() {
            waited += slice;
            let peer_done = opts
                .peer_done
                .as_ref()
                .is_some_and(|d| d.load(std::sync::atomic::Ordering::Relaxed));
            if peer_done && rcnt == opts.iters && scnt + 1 == opts.iters {
                last_send_unacked = true;
                break;
            }
            if waited < opts.timeout {
                continue;
            }
            return Err(format!(
                "no completion in {:?} after {scnt} sends and {rcnt} receives (QP {:?})",
                opts.timeout,
                qp.state().ok()
            ));
        }
        waited = Duration::ZERO;
        for wc in wcs {
            if wc.status != WcStatus::Success {
                return Err(format!(
                    "Failed status {} ({}) for wr_id {}",
                    wc.status,
                    wc.status.code(),
                    wc.wr_id
                ));
            }
            match wc.wr_id {
                SEND_WRID => scnt += 1,
                RECV_WRID => {
                    routs -= 1;
                    if routs <= 1 {
                        routs += post_recv(opts.rx_depth - routs)?;
                    }
                    rcnt += 1;
                }
                other => return Err(format!("completion for unknown wr_id {other}")),
            }
            pending &= !wc.wr_id;
            if scnt < opts.iters && pending == 0 {
                send()?;
                pending = RECV_WRID | SEND_WRID;
            }
        }
    }
    let report = Report {
        local,
        remote,
        iters: opts.iters,
        size: opts.size,
        elapsed: start.elapsed(),
        counters: ctx.counters(),
        last_send_unacked,
    };
    Ok(Session {
        report,
        ctx: ctx.clone(),
        _qp: qp,
        _cq: cq,
        _mr: mr,
        _pd: pd,
    })
}
