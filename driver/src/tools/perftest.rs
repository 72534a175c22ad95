//! perftest's bandwidth tests (`ib_send_bw`, `ib_write_bw`, `ib_read_bw`, `ib_atomic_bw`)
//! over the verbs API, without rdma_cm: the same TCP exchanges in the same order (version,
//! system data, MTU, the 108-byte keys, the handshakes around the run, the reports, the
//! close), the same QP settings, the same traffic. Every exchange: the client writes then
//! reads, the server reads then writes, each a fixed size. The order, as the golden rxe
//! captures show it:
//!
//! - WRITE/READ/atomic: version 16, page size 4, cache line 4, MTU 2, keys x3 (the QPs are
//!   connected after the first), the client runs while the server waits in a key exchange,
//!   keys, five 8-byte report exchanges, keys, `"done"`.
//! - SEND: the same up to the MTU, keys x4 (the server posts its receives before the last),
//!   the run, keys, `"done"`.

use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv6Addr, TcpStream};
use std::time::{Duration, Instant};

use super::{fail, neighbour};
use crate::verbs::*;

/// Which test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    Send,
    Write,
    Read,
    Atomic,
}

impl Test {
    pub fn name(self) -> &'static str {
        match self {
            Test::Send => "send",
            Test::Write => "write",
            Test::Read => "read",
            Test::Atomic => "atomic",
        }
    }

    /// The access the peer gets to our buffer (INIT access flags).
    fn access(self) -> Access {
        match self {
            Test::Send => Access::REMOTE_WRITE | Access::LOCAL_WRITE,
            Test::Write => Access::REMOTE_WRITE | Access::LOCAL_WRITE,
            Test::Read => Access::REMOTE_READ | Access::LOCAL_WRITE,
            Test::Atomic => Access::REMOTE_ATOMIC | Access::LOCAL_WRITE,
        }
    }

    /// Key exchanges before the run.
    fn handshakes_before(self) -> usize {
        if self == Test::Send { 4 } else { 3 }
    }
}

/// What the options set.
#[derive(Clone, Debug)]
pub struct Options {
    pub test: Test,
    /// Message size (`-s`; atomics are 8 bytes).
    pub size: u32,
    /// Iterations (`-n`).
    pub iters: u32,
    /// Outstanding work requests (`-t`, 128).
    pub tx_depth: u32,
    /// Receives the SEND server keeps posted (512).
    pub rx_depth: u32,
    pub mtu: Mtu,
    /// ACK timeout exponent of our QP (`-u`, 14).
    pub timeout: u8,
    /// Longest wait for progress before giving up.
    pub stall: Duration,
}

impl Options {
    pub fn new(test: Test) -> Options {
        Options {
            test,
            size: if test == Test::Atomic { 8 } else { 65536 },
            iters: if test == Test::Write { 5000 } else { 1000 },
            tx_depth: 128,
            rx_depth: 512,
            mtu: Mtu::M1024,
            timeout: 14,
            stall: Duration::from_secs(30),
        }
    }
}

/// The version we announce (perftest refuses peers older than 5.70).
pub const VERSION: &str = "6.06";
const PAGE_SIZE: u32 = 4096;
const CACHE_LINE: u32 = 64;
/// Length of a key message, NUL included.
pub const KEY_LEN: usize = 108;

/// One side's key (`pingpong_dest` as perftest sends it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    pub lid: u16,
    pub out_reads: u32,
    pub qpn: u32,
    pub psn: u32,
    pub rkey: u32,
    pub vaddr: u64,
    pub gid: [u8; 16],
    pub srqn: u32,
}

impl Key {
    pub fn encode(&self) -> [u8; KEY_LEN] {
        let mut s = format!(
            "{:04x}:{:04x}:{:06x}:{:06x}:{:08x}:{:016x}:",
            self.lid, self.out_reads, self.qpn, self.psn, self.rkey, self.vaddr
        );
        for b in self.gid {
            s.push_str(&format!("{b:02x}:"));
        }
        s.push_str(&format!("{:08x}:", self.srqn));
        let mut out = [0u8; KEY_LEN];
        out[..s.len()].copy_from_slice(s.as_bytes());
        out
    }

    pub fn decode(buf: &[u8]) -> Result<Key, String> {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let s = std::str::from_utf8(&buf[..end]).map_err(|_| "a key that is not text")?;
        let f: Vec<&str> = s.split(':').collect();
        if f.len() < 23 {
            return Err(format!("{s:?} is not a perftest key"));
        }
        let hex = |t: &str| {
            u64::from_str_radix(t, 16).map_err(|_| format!("{t:?} is not hex in the key {s:?}"))
        };
        let mut gid = [0u8; 16];
        for (i, g) in gid.iter_mut().enumerate() {
            *g = hex(f[6 + i])? as u8;
        }
        Ok(Key {
            lid: hex(f[0])? as u16,
            out_reads: hex(f[1])? as u32,
            qpn: hex(f[2])? as u32 & 0xFF_FFFF,
            psn: hex(f[3])? as u32 & 0xFF_FFFF,
            rkey: hex(f[4])? as u32,
            vaddr: hex(f[5])?,
            gid,
            srqn: hex(f[22])? as u32,
        })
    }

    pub fn ip(&self) -> IpAddr {
        let v6 = Ipv6Addr::from(self.gid);
        v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4)
    }
}

/// A bandwidth report (`bw_report_data`) as exchanged: all big-endian 8-byte values.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BwReport {
    pub size: u64,
    pub iters: u64,
    /// MB/s (2^20 bytes).
    pub bw_peak: f64,
    pub bw_avg: f64,
    /// Millions of messages per second.
    pub msg_rate: f64,
}

/// The TCP side: client writes first.
struct Comm {
    s: TcpStream,
    client: bool,
}

impl Comm {
    fn xchg(&mut self, mine: &[u8], what: &str) -> io::Result<Vec<u8>> {
        let mut theirs = vec![0; mine.len()];
        let ctx = |e: io::Error| io::Error::new(e.kind(), format!("exchanging the {what}: {e}"));
        if self.client {
            self.s.write_all(mine).map_err(ctx)?;
            self.s.read_exact(&mut theirs).map_err(ctx)?;
        } else {
            self.s.read_exact(&mut theirs).map_err(ctx)?;
            self.s.write_all(mine).map_err(ctx)?;
        }
        Ok(theirs)
    }

    fn keys(&mut self, mine: &Key) -> Result<Key, String> {
        let b = self
            .xchg(&mine.encode(), "keys")
            .map_err(|e| e.to_string())?;
        Key::decode(&b)
    }
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct Report {
    pub test: Test,
    pub client: bool,
    pub local: Key,
    pub remote: Key,
    /// Ours (the client measures; a server reports zeros) and the peer's.
    pub ours: BwReport,
    pub theirs: Option<BwReport>,
    pub counters: Counters,
}

impl Report {
    /// perftest's table.
    pub fn text(&self) -> String {
        let line = "-".repeat(87);
        let r = if self.client {
            self.ours
        } else {
            self.theirs.unwrap_or(self.ours)
        };
        format!(
            "{line}\n RDMA_{} BW test (rnic-driver perftest, {})\n local address: LID {:#06x} QPN {:#08x} PSN {:#08x} RKey {:#010x} VAddr {:#018x}\n remote address: LID {:#06x} QPN {:#08x} PSN {:#08x} RKey {:#010x} VAddr {:#018x}\n{line}\n #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n {:<10} {:<16} {:<18.2} {:<20.2} {:.6}\n{line}\n",
            self.test.name().to_uppercase(),
            if self.client { "client" } else { "server" },
            self.local.lid,
            self.local.qpn,
            self.local.psn,
            self.local.rkey,
            self.local.vaddr,
            self.remote.lid,
            self.remote.qpn,
            self.remote.psn,
            self.remote.rkey,
            self.remote.vaddr,
            r.size,
            r.iters,
            r.bw_peak,
            r.bw_avg,
            r.msg_rate,
        )
    }
}

fn io_err(e: io::Error) -> String {
    format!("TCP exchange: {e}")
}

/// Runs one test on `ctx` (running in the background) over an established TCP connection.
pub fn run(ctx: &Context, tcp: TcpStream, client: bool, opts: &Options) -> Result<Report, String> {
    if opts.iters < 5 {
        return Err("perftest needs at least 5 iterations".into());
    }
    let size = if opts.test == Test::Atomic {
        8
    } else {
        opts.size
    };
    if size == 0 {
        return Err("size must be at least 1".into());
    }
    let mut comm = Comm { s: tcp, client };
    // Version, system data, MTU.
    let mut v = [0u8; 16];
    v[..VERSION.len()].copy_from_slice(VERSION.as_bytes());
    let theirs = comm.xchg(&v, "versions").map_err(io_err)?;
    let end = theirs.iter().position(|&b| b == 0).unwrap_or(16);
    let their_version = String::from_utf8_lossy(&theirs[..end]).into_owned();
    if their_version.parse::<f64>().unwrap_or(0.0) < 5.70 {
        return Err(format!(
            "the peer's perftest {their_version:?} is older than 5.70"
        ));
    }
    let page = comm
        .xchg(&PAGE_SIZE.to_be_bytes(), "page size")
        .map_err(io_err)?;
    let page = PAGE_SIZE.max(u32::from_be_bytes(page[..4].try_into().expect("4")));
    comm.xchg(&CACHE_LINE.to_be_bytes(), "cache line size")
        .map_err(io_err)?;
    let our_mtu = opts.mtu.min(ctx.query_device().active_mtu);
    let m = comm
        .xchg(&[b'0' + our_mtu as u8, 0], "MTU")
        .map_err(io_err)?;
    let mtu = Mtu::from_ibv(m[0].wrapping_sub(b'0')).map_or(our_mtu, |t| t.min(our_mtu));

    // Resources: a buffer of max(size, page) bytes (twice, as perftest cycles), one QP.
    let gid = ctx.gid().map_err(fail)?;
    let pd = ctx.alloc_pd().map_err(fail)?;
    let buf_len = (size.max(page) as usize) * 2;
    let mr = pd.reg_mr(buf_len, opts.test.access()).map_err(fail)?;
    let depth = opts.tx_depth.max(opts.rx_depth) as usize + 16;
    let cq = ctx.create_cq(depth).map_err(fail)?;
    let qp = pd
        .create_qp(QpType::Rc, &cq, &cq)
        .cap(QpCap {
            max_send_wr: opts.tx_depth,
            max_recv_wr: opts.rx_depth,
            max_send_sge: 1,
            max_recv_sge: 1,
            max_inline_data: 0,
        })
        .build()
        .map_err(fail)?;
    qp.modify(&ModifyQp::rc_init(opts.test.access()))
        .map_err(fail)?;
    let reads = matches!(opts.test, Test::Read | Test::Atomic);
    let out_reads = if reads {
        u32::from(ctx.query_device().max_qp_rd_atom)
    } else {
        1
    };
    let psn = super::random_psn();
    let local = Key {
        lid: 0,
        out_reads,
        qpn: qp.qpn(),
        psn,
        rkey: mr.rkey(),
        vaddr: mr.addr(),
        gid: super::exchange::Dest::gid_of(gid),
        srqn: 0,
    };
    let remote = comm.keys(&local)?;
    let peer = remote.ip();
    let dmac = neighbour::resolve(ctx, peer, Duration::from_secs(3)).map_err(fail)?;
    let mut av = ctx.address_to(dmac, peer).map_err(fail)?;
    av.hop_limit = 0xFF;
    let max_rd = (remote
        .out_reads
        .min(u32::from(ctx.query_device().max_qp_rd_atom)))
    .max(1) as u8;
    qp.modify(
        &ModifyQp::rc_rtr(av, remote.qpn, remote.psn)
            .path_mtu(mtu)
            .max_dest_rd_atomic(out_reads.min(255) as u8),
    )
    .map_err(fail)?;
    qp.modify(
        &ModifyQp::rc_rts(local.psn)
            .timeout(opts.timeout)
            .max_rd_atomic(max_rd),
    )
    .map_err(fail)?;

    let recv = |n: u32| -> Result<(), String> {
        for _ in 0..n {
            qp.post_recv(RecvWr {
                wr_id: 0,
                sg_list: vec![mr.sge(0, size)],
            })
            .map_err(fail)?;
        }
        Ok(())
    };
    for i in 1..opts.test.handshakes_before() {
        if opts.test == Test::Send && !client && i + 1 == opts.test.handshakes_before() {
            recv(opts.rx_depth)?;
        }
        comm.keys(&local)?;
    }

    let mut ours = BwReport {
        size: u64::from(size),
        iters: u64::from(opts.iters),
        ..Default::default()
    };
    let mut theirs = None;
    // Waits for at least one completion; returns how many came (all successful).
    let some = |repost: bool| -> Result<u32, String> {
        let mut idle = Duration::ZERO;
        loop {
            let wcs = cq.wait(Duration::from_millis(100)).map_err(fail)?;
            if wcs.is_empty() {
                idle += Duration::from_millis(100);
                if idle >= opts.stall {
                    return Err(format!("no completion in {:?}", opts.stall));
                }
                continue;
            }
            for wc in &wcs {
                if wc.status != WcStatus::Success {
                    return Err(format!(
                        "completion with status {} ({}) for wr_id {}",
                        wc.status,
                        wc.status.code(),
                        wc.wr_id
                    ));
                }
                if repost {
                    recv(1)?;
                }
            }
            return Ok(wcs.len() as u32);
        }
    };
    if client {
        // The run: up to tx_depth outstanding, every one signaled.
        let start = Instant::now();
        let (mut posted, mut done) = (0u32, 0u32);
        let mut outstanding = 0u32;
        while done < opts.iters {
            while posted < opts.iters && outstanding < opts.tx_depth {
                let wr = match opts.test {
                    Test::Send => SendWr::new(u64::from(posted), WrOpcode::Send).sge(
                        mr.addr(),
                        size,
                        mr.lkey(),
                    ),
                    Test::Write => SendWr::new(u64::from(posted), WrOpcode::RdmaWrite)
                        .sge(mr.addr(), size, mr.lkey())
                        .remote(remote.vaddr, remote.rkey),
                    Test::Read => SendWr::new(u64::from(posted), WrOpcode::RdmaRead)
                        .sge(mr.addr(), size, mr.lkey())
                        .remote(remote.vaddr, remote.rkey),
                    Test::Atomic => SendWr::new(u64::from(posted), WrOpcode::AtomicFetchAndAdd)
                        .sge(mr.addr(), 8, mr.lkey())
                        .remote(remote.vaddr, remote.rkey)
                        .atomic(1, 0),
                };
                qp.post_send(wr).map_err(fail)?;
                posted += 1;
                outstanding += 1;
            }
            let n = some(false)?;
            done += n;
            outstanding -= n;
        }
        let secs = start.elapsed().as_secs_f64().max(1e-9);
        let mb = f64::from(size) * f64::from(opts.iters) / f64::from(1u32 << 20);
        ours.bw_avg = mb / secs;
        ours.bw_peak = ours.bw_avg;
        ours.msg_rate = f64::from(opts.iters) / secs / 1e6;
    } else if opts.test == Test::Send {
        let mut got = 0;
        while got < opts.iters {
            got += some(true)?;
        }
    }
    if opts.test != Test::Send {
        // The server waits here while the client runs; then the reports.
        comm.keys(&local)?;
        let mine = [
            ours.size.to_be_bytes(),
            ours.iters.to_be_bytes(),
            ours.bw_peak.to_bits().to_be_bytes(),
            ours.bw_avg.to_bits().to_be_bytes(),
            ours.msg_rate.to_bits().to_be_bytes(),
        ];
        let mut got = [0u64; 5];
        for (i, m) in mine.iter().enumerate() {
            let b = comm.xchg(m, "reports").map_err(io_err)?;
            got[i] = u64::from_be_bytes(b[..8].try_into().expect("8 bytes"));
        }
        theirs = Some(BwReport {
            size: got[0],
            iters: got[1],
            bw_peak: f64::from_bits(got[2]),
            bw_avg: f64::from_bits(got[3]),
            msg_rate: f64::from_bits(got[4]),
        });
    }
    // Close: one more key exchange, then "done" (nobody reads it).
    comm.keys(&local)?;
    let _ = comm.s.write_all(b"done\0");
    Ok(Report {
        test: opts.test,
        client,
        local,
        remote,
        ours,
        theirs,
        counters: ctx.counters(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_the_108_bytes_perftest_writes() {
        let k = Key {
            lid: 0,
            out_reads: 1,
            qpn: 0x11,
            psn: 0xabcdef,
            rkey: 0x2d6,
            vaddr: 0x555c_35c0_2000,
            gid: super::super::exchange::Dest::gid_of(IpAddr::from([10, 0, 0, 1])),
            srqn: 0,
        };
        let b = k.encode();
        let text = std::str::from_utf8(&b[..107]).unwrap();
        assert_eq!(
            text,
            "0000:0001:000011:abcdef:000002d6:0000555c35c02000:00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01:00000000:"
        );
        assert_eq!(b[107], 0);
        assert_eq!(Key::decode(&b), Ok(k));
        assert_eq!(k.ip(), IpAddr::from([10, 0, 0, 1]));
    }
}
