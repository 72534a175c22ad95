//! Two model NICs (`rnic-transport`) through one simulated cable that loses, duplicates,
//! reorders and corrupts frames: every message is delivered exactly once, in order and intact,
//! and every work request completes with IBV_WC_SUCCESS (retry_cnt and rnr_retry 7, which are
//! infinite). The expected results come from a plain reference that applies the same
//! operations, in order, to byte arrays.

use proptest::prelude::*;
use rnic_netsim::link::LinkConfig;
use rnic_netsim::rdma::{
    HostReport, Op, PairRun, Workload, exposed_init, imm_of, pattern, run_pair,
};
use rnic_transport::{Mtu, WcOpcode, WcStatus, WrOpcode};

/// Simulated time after which a run still under way fails (a stuck run, with nothing in flight
/// and no timer running, stops at once).
const LIMIT_NS: u64 = 20_000_000_000;

fn link(f: impl FnOnce(&mut LinkConfig)) -> LinkConfig {
    let mut l = LinkConfig::new(10_000_000_000, 1000);
    f(&mut l);
    l
}

/// A receive the reference expects.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ExpectedRecv {
    opcode: WcOpcode,
    byte_len: u32,
    imm: Option<u32>,
    data: Vec<u8>,
}

/// What one direction of a run must produce: host `s` running `ops` against host `r`.
struct Expected {
    /// Host r's exposed region at the end.
    exposed: Vec<u8>,
    /// Host r's receive completions, in order.
    recvs: Vec<ExpectedRecv>,
    /// Host s's completion data per operation (READ bytes, atomic original values).
    results: Vec<Vec<u8>>,
}

/// The plain reference: the operations applied in order to byte arrays.
fn reference(s: usize, r: usize, w: &Workload) -> Expected {
    let mut mem = exposed_init(r, w.exposed_len as usize);
    let mut recvs = Vec::new();
    let mut results = Vec::new();
    for (i, op) in w.ops.iter().enumerate() {
        let off = op.remote_off as usize;
        let len = op.len as usize;
        let mut result = Vec::new();
        match op.opcode {
            WrOpcode::Send | WrOpcode::SendWithImm => recvs.push(ExpectedRecv {
                opcode: WcOpcode::Recv,
                byte_len: op.len,
                imm: (op.opcode == WrOpcode::SendWithImm).then(|| imm_of(s, i)),
                data: pattern(s, i, len),
            }),
            WrOpcode::RdmaWrite | WrOpcode::RdmaWriteWithImm => {
                mem[off..off + len].copy_from_slice(&pattern(s, i, len));
                if op.opcode == WrOpcode::RdmaWriteWithImm {
                    recvs.push(ExpectedRecv {
                        opcode: WcOpcode::RecvRdmaWithImm,
                        byte_len: op.len,
                        imm: Some(imm_of(s, i)),
                        data: Vec::new(),
                    });
                }
            }
            WrOpcode::RdmaRead => result = mem[off..off + len].to_vec(),
            WrOpcode::AtomicFetchAndAdd | WrOpcode::AtomicCmpAndSwp => {
                let orig = u64::from_le_bytes(mem[off..off + 8].try_into().unwrap());
                let new = if op.opcode == WrOpcode::AtomicFetchAndAdd {
                    orig.wrapping_add(op.compare_add)
                } else if orig == op.compare_add {
                    op.swap
                } else {
                    orig
                };
                mem[off..off + 8].copy_from_slice(&new.to_le_bytes());
                result = orig.to_le_bytes().to_vec();
            }
        }
        results.push(result);
    }
    Expected {
        exposed: mem,
        recvs,
        results,
    }
}

/// Checks one direction: sender `s`'s completions and results, receiver `r`'s deliveries and
/// memory. Returns a description of the first difference.
fn check_direction(s: usize, w: &Workload, hs: &HostReport, hr: &HostReport) -> Result<(), String> {
    let r = 1 - s;
    let e = reference(s, r, w);
    if !hs.post_errors.is_empty() {
        return Err(format!("host {s}: post errors {:?}", hs.post_errors));
    }
    if hs.sent.len() != w.ops.len() {
        return Err(format!(
            "host {s}: {} completions for {} operations",
            hs.sent.len(),
            w.ops.len()
        ));
    }
    for (i, (c, op)) in hs.sent.iter().zip(&w.ops).enumerate() {
        if c.wr_id != i as u64 {
            return Err(format!("host {s}: completion {i} is wr_id {}", c.wr_id));
        }
        if c.status != WcStatus::Success {
            return Err(format!("host {s}: op {i} ({op:?}) completed {}", c.status));
        }
        if c.opcode != op.opcode.wc_opcode() || c.byte_len != op.len {
            return Err(format!(
                "host {s}: op {i} completed as {} with byte_len {}, expected {} {}",
                c.opcode,
                c.byte_len,
                op.opcode.wc_opcode(),
                op.len
            ));
        }
        if c.data != e.results[i] {
            return Err(format!(
                "host {s}: op {i} ({op:?}) result differs from the reference ({} bytes vs {})",
                c.data.len(),
                e.results[i].len()
            ));
        }
    }
    if hr.received.len() != e.recvs.len() {
        return Err(format!(
            "host {r}: {} receive completions, expected {}",
            hr.received.len(),
            e.recvs.len()
        ));
    }
    for (k, (got, want)) in hr.received.iter().zip(&e.recvs).enumerate() {
        if got.status != WcStatus::Success {
            return Err(format!("host {r}: receive {k} completed {}", got.status));
        }
        let g = ExpectedRecv {
            opcode: got.opcode,
            byte_len: got.byte_len,
            imm: got.imm,
            data: got.data.clone(),
        };
        if g != *want {
            return Err(format!(
                "host {r}: receive {k} is {} {} bytes imm {:?}, expected {} {} bytes imm {:?}{}",
                g.opcode,
                g.byte_len,
                g.imm,
                want.opcode,
                want.byte_len,
                want.imm,
                if g.data != want.data {
                    " (contents differ)"
                } else {
                    ""
                }
            ));
        }
    }
    if hr.exposed != e.exposed {
        let at = hr
            .exposed
            .iter()
            .zip(&e.exposed)
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        return Err(format!(
            "host {r}: exposed memory differs from the reference from byte {at}"
        ));
    }
    Ok(())
}

/// Runs `w0` on host 0 and `w1` on host 1 and checks both directions against the reference.
fn run_and_check(
    seed: u64,
    l: LinkConfig,
    w0: &Workload,
    w1: &Workload,
) -> Result<PairRun, String> {
    let run = run_pair(seed, l, w0.clone(), w1.clone(), LIMIT_NS).map_err(|e| e.to_string())?;
    let ctx = |m: String| {
        format!(
            "seed {seed}, {l:?}: {m}\nlinks {:?}\nhost 0 {:?}\nhost 1 {:?}",
            run.links,
            nonzero(&run.hosts[0]),
            nonzero(&run.hosts[1])
        )
    };
    if !run.finished {
        return Err(ctx(format!(
            "{} at {} ns: host 0 {}/{} completions, host 1 {}/{}",
            if run.stuck {
                "stuck (nothing in flight, no timer)"
            } else {
                "not finished by the time limit"
            },
            run.sim_ns,
            run.hosts[0].sent.len(),
            w0.ops.len(),
            run.hosts[1].sent.len(),
            w1.ops.len()
        )));
    }
    check_direction(0, w0, &run.hosts[0], &run.hosts[1]).map_err(ctx)?;
    check_direction(1, w1, &run.hosts[1], &run.hosts[0]).map_err(ctx)?;
    for h in &run.hosts {
        if h.counters.wc_errors != 0 || h.counters.cq_overflow != 0 {
            return Err(ctx("error completions or CQ overflow counted".into()));
        }
    }
    Ok(run)
}

fn nonzero(h: &HostReport) -> Vec<(&'static str, u64)> {
    h.counters.iter().filter(|(_, v)| *v != 0).collect()
}

/// Exposed-region layout of the fixed mix: the FETCH_ADD counter at 0 and the CMP_SWAP word at
/// 8 (both start at zero), an area only READ from 64, and fresh WRITE targets above it.
const COUNTER: u64 = 0;
const CAS_WORD: u64 = 8;
const READ_AREA: u64 = 64;
const WRITE_AREA: u64 = 16 << 10;

/// The fixed mix of host `host`: `n` operations cycling through every opcode, with sizes from
/// empty through one MTU (1024) and its neighbours to several packets. Every WRITE gets
/// fresh bytes; READs read the read-only area or an earlier WRITE's target (READ after WRITE
/// is ordered); CMP_SWAP k compares k and swaps k + 1, so each one succeeds.
fn mixed_ops(host: usize, n: usize) -> Workload {
    const SIZES: [u32; 11] = [0, 1, 7, 100, 1023, 1024, 1025, 2048, 3000, 4097, 9000];
    let mut ops = Vec::new();
    let mut write_off = WRITE_AREA;
    let mut writes: Vec<(u64, u32)> = Vec::new();
    let mut cas = 0u64;
    for i in 0..n {
        let size = SIZES[(i * 7 + host * 3) % SIZES.len()];
        let op = match i % 8 {
            0 | 4 => {
                if i % 16 == 4 {
                    Op::send_imm(size)
                } else {
                    Op::send(size)
                }
            }
            1 | 5 => {
                let op = if i % 16 == 5 {
                    Op::write_imm(write_off, size)
                } else {
                    Op::write(write_off, size)
                };
                writes.push((write_off, size));
                write_off += u64::from(size).next_multiple_of(8) + 8;
                op
            }
            2 => Op::read(READ_AREA + (i as u64 * 13) % 4096, size.min(8192)),
            3 => Op::fetch_add(COUNTER, 1),
            6 => {
                cas += 1;
                Op::cmp_swap(CAS_WORD, cas - 1, cas)
            }
            _ => match writes.last() {
                Some(&(off, len)) => Op::read(off, len),
                None => Op::read(READ_AREA, 64),
            },
        };
        ops.push(op);
    }
    let mut w = Workload::new(ops);
    w.exposed_len = write_off.next_multiple_of(4096);
    // Host 1 starts near the end of the PSN space, so its PSNs wrap.
    w.start_psn = if host == 1 { 0xFF_FF00 } else { 0x1234 };
    w
}

/// Runs the fixed mix both ways over `seeds` seeds with link `l`, and checks also the literal
/// counts: the counter is the number of FETCH_ADDs, the CMP_SWAP word the number of CMP_SWAPs.
/// Returns the frames lost, duplicated, reordered and corrupted over all runs.
fn sweep(seeds: std::ops::Range<u64>, n: usize, l: LinkConfig) -> [u64; 4] {
    let (w0, w1) = (mixed_ops(0, n), mixed_ops(1, n));
    let mut totals = [0u64; 4];
    for seed in seeds {
        let run = match run_and_check(seed, l, &w0, &w1) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        };
        for (s, w) in [(0, &w0), (1, &w1)] {
            let mem = &run.hosts[1 - s].exposed;
            let word =
                |o: u64| u64::from_le_bytes(mem[o as usize..o as usize + 8].try_into().unwrap());
            let count = |k| w.ops.iter().filter(|o| o.opcode == k).count() as u64;
            assert_eq!(
                word(COUNTER),
                count(WrOpcode::AtomicFetchAndAdd),
                "seed {seed}"
            );
            assert_eq!(
                word(CAS_WORD),
                count(WrOpcode::AtomicCmpAndSwp),
                "seed {seed}"
            );
        }
        for l in &run.links {
            totals[0] += l.lost;
            totals[1] += l.duplicated;
            totals[2] += l.reordered;
            totals[3] += l.corrupted;
        }
    }
    totals
}

#[test]
fn lossless_link_runs_the_mix_without_retransmitting() {
    let run = run_and_check(1, link(|_| {}), &mixed_ops(0, 200), &mixed_ops(1, 200)).unwrap();
    for h in &run.hosts {
        assert_eq!(h.counters.req_retransmitted, 0);
        assert_eq!(h.counters.comp_timeouts, 0);
    }
}

#[test]
fn loss_0_1_percent() {
    let t = sweep(0..150, 200, link(|l| l.loss = 0.001));
    assert!(t[0] > 0, "some frames were lost");
}

#[test]
fn loss_1_percent() {
    let t = sweep(1000..1150, 200, link(|l| l.loss = 0.01));
    assert!(t[0] > 100, "lost {}", t[0]);
}

#[test]
fn loss_10_percent() {
    let t = sweep(2000..2120, 120, link(|l| l.loss = 0.1));
    assert!(t[0] > 1000, "lost {}", t[0]);
}

#[test]
fn duplication() {
    let t = sweep(3000..3100, 200, link(|l| l.duplicate = 0.05));
    assert!(t[1] > 100, "duplicated {}", t[1]);
}

#[test]
fn reordering() {
    // Held back 3 us, about three 1 KiB frames at 10 Gb/s.
    let t = sweep(
        4000..4100,
        200,
        link(|l| {
            l.reorder = 0.05;
            l.reorder_delay_ns = 3000;
        }),
    );
    assert!(t[2] > 100, "reordered {}", t[2]);
}

#[test]
fn corruption() {
    let t = sweep(5000..5100, 200, link(|l| l.corrupt = 0.02));
    assert!(t[3] > 100, "corrupted {}", t[3]);
}

#[test]
fn corrupted_frames_fail_the_icrc() {
    let run = run_and_check(
        7,
        link(|l| l.corrupt = 0.05),
        &mixed_ops(0, 200),
        &mixed_ops(1, 200),
    )
    .unwrap();
    let corrupted: u64 = run.links.iter().map(|l| l.corrupted).sum();
    assert!(corrupted > 0);
    assert_eq!(run.net.corrupted, corrupted);
    // Every corrupted frame is dropped by one of the receive checks, most by the ICRC (a flip
    // in the BTH may fail an earlier check: opcode, QPN, P_Key, TVer).
    let c = |f: fn(&rnic_transport::Counters) -> u64| -> u64 {
        run.hosts.iter().map(|h| f(&h.counters)).sum()
    };
    let dropped = c(|c| c.drop_bad_icrc)
        + c(|c| c.drop_malformed)
        + c(|c| c.drop_bad_tver)
        + c(|c| c.drop_no_qp)
        + c(|c| c.drop_bad_pkey)
        + c(|c| c.drop_wrong_transport);
    assert_eq!(dropped, corrupted);
    assert!(c(|c| c.drop_bad_icrc) * 2 > corrupted);
}

#[test]
fn all_faults_mixed() {
    let t = sweep(
        6000..6120,
        160,
        link(|l| {
            l.loss = 0.02;
            l.duplicate = 0.02;
            l.reorder = 0.02;
            l.reorder_delay_ns = 5000;
            l.corrupt = 0.02;
        }),
    );
    assert!(t.iter().all(|&n| n > 20), "{t:?}");
}

#[test]
fn large_messages_and_small_mtu_under_loss() {
    // 64 KiB WRITEs and SENDs at path MTU 256 (256 packets each, past the 128-PSN window).
    let ops = |host: usize| {
        let mut w = Workload::new(
            (0..24)
                .map(|i| match i % 3 {
                    0 => Op::write((i as u64 % 4) * (64 << 10), 64 << 10),
                    1 => Op::send(60_000 + host as u32),
                    _ => Op::read((i as u64 % 4) * (64 << 10), 64 << 10),
                })
                .collect(),
        );
        w.exposed_len = 256 << 10;
        w.path_mtu = Mtu::M256;
        w.max_outstanding = 4;
        w
    };
    // READs read what an earlier WRITE wrote; the later WRITEs to the same place are fenced.
    let fence = |mut w: Workload| {
        for op in w.ops.iter_mut().filter(|o| o.opcode.is_write()) {
            *op = op.fenced();
        }
        w
    };
    let (w0, w1) = (fence(ops(0)), fence(ops(1)));
    for seed in 0..6 {
        run_and_check(seed, link(|l| l.loss = 0.01), &w0, &w1).unwrap();
    }
}

/// Host 0 READs 3000 bytes (three responses at path MTU 1024) from host 1, and the LAST
/// response is lost. The completer must still be waiting for it, its ACK timer running, and
/// when the timer fires ask again for the rest; the READ then completes with the right bytes.
/// (The model once counted only the READ request's own PSN as sent, so the FIRST response
/// stopped the timer and such a READ at the end of the work hung.)
#[test]
fn a_lost_last_read_response_is_retried() {
    use rnic_netsim::endpoint::{Ctx, Endpoint};
    use rnic_netsim::packet::{HostAddr, Packet};
    use rnic_netsim::rdma::RdmaHost;

    let reader = Workload::new(vec![Op::read(64, 3000)]);
    let idle = Workload::new(Vec::new());
    let mut h0 = RdmaHost::new(0, HostAddr::host(0), reader.clone(), idle.exposed_len).unwrap();
    let mut h1 = RdmaHost::new(1, HostAddr::host(1), idle, reader.exposed_len).unwrap();
    let (i0, i1) = (h0.info(), h1.info());
    h0.connect(i1).unwrap();
    h1.connect(i0).unwrap();
    let (mut out, mut wakes) = (Vec::<Packet>::new(), Vec::new());
    h0.start(&mut Ctx::detached(0, &mut out, &mut wakes));
    assert_eq!(out.len(), 1, "the READ request");
    let request = out.remove(0);
    let mut responses = Vec::new();
    h1.receive(
        request,
        &mut Ctx::detached(1_000, &mut responses, &mut wakes),
    );
    assert_eq!(responses.len(), 3, "FIRST, MIDDLE, LAST");
    responses.pop(); // the LAST is lost
    for r in responses {
        h0.receive(r, &mut Ctx::detached(2_000, &mut out, &mut wakes));
    }
    assert!(h0.sent.is_empty());
    let deadline = h0.nic().next_deadline();
    assert!(
        deadline.is_some(),
        "the READ waits for its LAST response with no timer running: {:?}",
        h0.nic().qp(h0.qpn()).map(|q| (&q.req, &q.comp))
    );
    // From here on nothing is lost: the retry completes the READ.
    let mut now = deadline.unwrap();
    for _ in 0..100 {
        let mut to1 = Vec::new();
        h0.wake(now, &mut Ctx::detached(now, &mut to1, &mut wakes));
        let mut to0 = Vec::new();
        for p in to1 {
            h1.receive(p, &mut Ctx::detached(now, &mut to0, &mut wakes));
        }
        for p in to0 {
            h0.receive(p, &mut Ctx::detached(now, &mut Vec::new(), &mut wakes));
        }
        if !h0.sent.is_empty() {
            break;
        }
        now = h0.nic().next_deadline().unwrap_or(now + 1_000_000);
    }
    assert_eq!(h0.sent.len(), 1);
    assert_eq!(h0.sent[0].status, WcStatus::Success);
    assert_eq!(
        h0.sent[0].data,
        exposed_init(1, reader.exposed_len as usize)[64..3064]
    );
}

/// Exposed-region size of the property test: small, so operations overlap.
const PROP_EXPOSED: u64 = 8192;

fn arb_op() -> impl Strategy<Value = Op> {
    let len = prop_oneof![0u32..=8, 9u32..=1100, 1101u32..=4000];
    let word = (0u64..16).prop_map(|w| w * 8);
    prop_oneof![
        len.clone().prop_map(Op::send),
        len.clone().prop_map(Op::send_imm),
        (0u64..PROP_EXPOSED, len.clone()).prop_map(|(o, l)| Op::write(o, l)),
        (0u64..PROP_EXPOSED, len.clone()).prop_map(|(o, l)| Op::write_imm(o, l)),
        (0u64..PROP_EXPOSED, len).prop_map(|(o, l)| Op::read(o, l)),
        (word.clone(), 0u64..1000).prop_map(|(o, a)| Op::fetch_add(o, a)),
        (word, 0u64..4, 0u64..4).prop_map(|(o, c, s)| Op::cmp_swap(o, c, s)),
    ]
    .prop_map(|mut op| {
        // Keep every operation inside the region.
        if op.is_remote() && op.remote_off + u64::from(op.len) > PROP_EXPOSED {
            op.remote_off = PROP_EXPOSED - u64::from(op.len);
            if op.opcode.is_atomic() {
                op.remote_off &= !7;
            }
        }
        op
    })
}

/// A workload of `ops` in which every operation that changes remote memory where an earlier
/// READ reads is fenced: without the fence a retried READ may return the later bytes, which
/// the verbs allow (a READ is not ordered before later WRITEs and atomics unless they are
/// fenced).
fn prop_workload(ops: Vec<Op>, mtu: Mtu, outstanding: usize, psn: u32) -> Workload {
    let mut reads: Vec<(u64, u64)> = Vec::new();
    let mut fenced = Vec::new();
    for op in ops {
        let (a, b) = (op.remote_off, op.remote_off + u64::from(op.len));
        let changes = op.opcode.is_write() || op.opcode.is_atomic();
        let mut op = op;
        if changes && reads.iter().any(|&(ra, rb)| a < rb && ra < b) {
            op = op.fenced();
        }
        if op.opcode == WrOpcode::RdmaRead {
            reads.push((a, b));
        }
        fenced.push(op);
    }
    let mut w = Workload::new(fenced);
    w.exposed_len = PROP_EXPOSED;
    w.path_mtu = mtu;
    w.max_outstanding = outstanding;
    w.start_psn = psn;
    w
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Random mixes both ways over a lossy, duplicating, reordering, corrupting link: the
    /// final memory images, the READ and atomic results and the received messages equal the
    /// reference.
    #[test]
    fn random_mixes_match_the_plain_reference(
        ops0 in proptest::collection::vec(arb_op(), 1..60),
        ops1 in proptest::collection::vec(arb_op(), 0..60),
        mtu in prop_oneof![Just(Mtu::M256), Just(Mtu::M1024), Just(Mtu::M4096)],
        outstanding in 1usize..20,
        psn in prop_oneof![Just(0u32), Just(0xFF_FFF0u32), 0u32..0x100_0000],
        loss in prop_oneof![Just(0.001), Just(0.01), Just(0.05)],
        faults in 0.0f64..0.03,
        seed in 0u64..1 << 32,
    ) {
        let w0 = prop_workload(ops0, mtu, outstanding, psn);
        let w1 = prop_workload(ops1, mtu, outstanding, psn ^ 0x80_0000);
        let l = link(|l| {
            l.loss = loss;
            l.duplicate = faults;
            l.reorder = faults;
            l.reorder_delay_ns = 4000;
            l.corrupt = faults;
        });
        if let Err(e) = run_and_check(seed, l, &w0, &w1) {
            return Err(TestCaseError::fail(e));
        }
    }
}
