//! The driver's QP rings over the simulated host interface (Verilator; rust-hdl in lock-step
//! where marked): work requests the driver posts to send and receive rings come out of the
//! hardware's fetch engines byte for byte, with their QP and ring index, in order per ring;
//! completions handed to the hardware's completion writer for them come back through the
//! driver's completion rings as the work completions they describe (WR_ID, QPN, index,
//! status, opcode, length, immediate), through every wrap of every index, with the
//! interrupt when the driver waits. The transport's engines are stood in for by the
//! simulated device's `QueueEngines`, which answers every request with a completion built
//! from the request the hardware fetched (not from what the driver posted).

use rnic_cosim::host::DeviceConfig;
use rnic_driver::queues::{CompletionRing, WorkKind, WorkRing, encode_recv, encode_send};
use rnic_driver::transport::{Budget, SimTransport};
use rnic_driver::verbs::{RecvWr, SendWr, Sge, WcOpcode, WcStatus, WrOpcode};
use rnic_regmap::desc::{CQE, RECV_WQE, SEND_WQE, SGE};

const OPS: [WrOpcode; 7] = [
    WrOpcode::Send,
    WrOpcode::SendWithImm,
    WrOpcode::RdmaWrite,
    WrOpcode::RdmaWriteWithImm,
    WrOpcode::RdmaRead,
    WrOpcode::AtomicCmpAndSwp,
    WrOpcode::AtomicFetchAndAdd,
];

/// The completion an engine would write for a fetched request: read from the fetched bytes
/// with the formats, the opcode mapped as ibverbs does.
fn completion_for(kind: WorkKind, queue: u64, index: u64, bytes: &[u8]) -> [u8; 32] {
    let mut c = [0u8; 32];
    let fmt = match kind {
        WorkKind::Send => &SEND_WQE,
        WorkKind::Receive => &RECV_WQE,
    };
    let wr_id = fmt.get(bytes, "WR_ID").unwrap();
    assert!(CQE.set(&mut c, "WR_ID", wr_id));
    assert!(CQE.set(&mut c, "QPN", queue));
    assert!(CQE.set(&mut c, "WQE_INDEX", index));
    assert!(CQE.set(&mut c, "STATUS", 0));
    let (opcode, len, flags, imm) = match kind {
        WorkKind::Send => {
            let op = SEND_WQE.get(bytes, "OPCODE").unwrap();
            // ibv_wr_opcode -> ibv_wc_opcode: WRITE(_IMM) 1, SEND(_IMM) 0, READ 2, CAS 3, FAA 4.
            let wc = [1, 1, 0, 0, 2, 3, 4][op as usize];
            let (first, _) = SEND_WQE.sge.unwrap();
            let len = (0..SEND_WQE.get(bytes, "NUM_SGE").unwrap() as usize)
                .map(|i| {
                    let at = usize::from(first) + i * usize::from(SGE.size);
                    SGE.get(&bytes[at..], "LENGTH").unwrap()
                })
                .sum::<u64>();
            (wc, len, 0, 0)
        }
        WorkKind::Receive => (128, 4096, 2, index ^ 0x5A5A),
    };
    assert!(CQE.set(&mut c, "OPCODE", opcode));
    assert!(CQE.set(&mut c, "BYTE_LEN", len));
    assert!(CQE.set(&mut c, "FLAGS", flags));
    assert!(CQE.set(&mut c, "IMM", imm));
    c
}

fn run(cfg: DeviceConfig, per_ring: u64) {
    let mut t = SimTransport::new(cfg).unwrap();
    let qps = [0u32, 9, 63];
    let mut cqs = [
        CompletionRing::new(&mut t, 1, 3).unwrap(),
        CompletionRing::new(&mut t, 40, 4).unwrap(),
    ];
    let mut rings = Vec::new();
    for (i, qp) in qps.iter().enumerate() {
        let log = 1 + i as u32;
        rings.push(WorkRing::new(&mut t, WorkKind::Send, *qp, log, 1).unwrap());
        rings.push(WorkRing::new(&mut t, WorkKind::Receive, *qp, log + 1, 40).unwrap());
    }
    // Posted: per ring, (wr_id, index, entry bytes).
    let mut posted: Vec<Vec<(u64, u16, Vec<u8>)>> = vec![Vec::new(); rings.len()];
    let mut seen = [0usize; 2];
    let mut completed = 0u64;
    let mut n = 0u64;
    while completed < per_ring * rings.len() as u64 {
        // Post while there is room (the driver refuses a full ring).
        for (r, ring) in rings.iter_mut().enumerate() {
            while (posted[r].len() as u64) < per_ring && ring.pending(&mut t).unwrap() < ring.size()
            {
                n += 1;
                let wr_id = 0xC0DE_0000_0000 | (r as u64) << 24 | n;
                let entry = match ring.kind() {
                    WorkKind::Send => {
                        let mut w = SendWr::new(wr_id, OPS[n as usize % OPS.len()]);
                        w.imm = n as u32;
                        w.remote_addr = n << 12;
                        w.rkey = 0x100 | n as u32;
                        w.compare_add = n;
                        w.swap = !n;
                        w.sg_list = (0..(n % 5))
                            .map(|i| Sge {
                                addr: 0x1000 * i,
                                length: 64 * (i as u32 + 1),
                                lkey: 0x200 + i as u32,
                            })
                            .collect();
                        encode_send(&w, 0).unwrap()
                    }
                    WorkKind::Receive => {
                        encode_recv(&RecvWr::new(wr_id).sge(0x8000, 4096, 0x300)).unwrap()
                    }
                };
                let index = ring.post(&mut t, &entry).unwrap();
                posted[r].push((wr_id, index, entry));
            }
        }
        t.dev.run(64).unwrap();
        // The stand-in engines answer every request fetched since last time.
        for (k, kind) in [WorkKind::Send, WorkKind::Receive].into_iter().enumerate() {
            let fetched = t.dev.env.engines.fetched[k][seen[k]..].to_vec();
            seen[k] += fetched.len();
            for f in fetched {
                assert!(!f.err, "{f:?}");
                let cq = if kind == WorkKind::Send { 1 } else { 40 };
                let c = completion_for(kind, f.queue, f.index, &f.bytes);
                t.dev.env.engines.cqes.push_back((cq, c));
            }
        }
        // The driver takes every completion there is; the first of each pass by waiting.
        for cq in cqs.iter_mut() {
            let mut first = true;
            loop {
                let c = if first {
                    cq.wait(&mut t, Budget::SHORT).unwrap()
                } else {
                    cq.poll(&mut t).unwrap()
                };
                first = false;
                let Some(c) = c else { break };
                let r = rings
                    .iter()
                    .position(|w| {
                        w.qp() == c.qpn && (w.kind() == WorkKind::Send) == (cq.cqn() == 1)
                    })
                    .expect("a completion for one of our rings");
                let (_, index, entry) = posted[r]
                    .iter()
                    .find(|p| p.0 == c.wr_id)
                    .unwrap_or_else(|| panic!("wr_id {:#x} was never posted", c.wr_id))
                    .clone();
                assert_eq!(c.wqe_index, index, "{c:?}");
                assert_eq!(c.status, WcStatus::Success);
                match rings[r].kind() {
                    WorkKind::Send => {
                        // The posted request's opcode, and its completion opcode as the
                        // transport model gives it (the stand-in used its own table).
                        let op = SEND_WQE.get(&entry, "OPCODE").unwrap() as u32;
                        let posted = OPS.into_iter().find(|o| o.code() == op).unwrap();
                        let want = posted.wc_opcode();
                        assert_eq!(c.opcode, want);
                    }
                    WorkKind::Receive => {
                        assert_eq!(c.opcode, WcOpcode::Recv);
                        assert_eq!((c.byte_len, c.imm), (4096, u32::from(index) ^ 0x5A5A));
                    }
                }
                completed += 1;
            }
        }
    }
    // Every request was fetched exactly once, whole, in ring order, with its QP and index.
    for (r, ring) in rings.iter().enumerate() {
        let k = usize::from(ring.kind() == WorkKind::Receive);
        let got: Vec<_> = t.dev.env.engines.fetched[k]
            .iter()
            .filter(|f| f.queue == u64::from(ring.qp()))
            .collect();
        assert_eq!(
            got.len(),
            posted[r].len(),
            "QP {} {:?}",
            ring.qp(),
            ring.kind()
        );
        for (f, (_, index, entry)) in got.iter().zip(&posted[r]) {
            assert_eq!((f.index, &f.bytes), (u64::from(*index), entry));
        }
        assert!(ring.producer() as u64 == per_ring, "every index moved");
    }
    assert_eq!(completed, per_ring * rings.len() as u64);
    for cq in &cqs {
        assert_eq!(cq.errors.bad_completion + cq.errors.bad_index, 0);
    }
    assert!(t.dev.env.irq_edges > 0, "waiting used the interrupt");
}

#[test]
fn posted_requests_come_back_as_their_completions() {
    run(
        DeviceConfig {
            lockstep: false,
            seed: 5,
            stall: 0.2,
            idle: 0.0,
        },
        40,
    );
}

#[test]
fn posted_requests_come_back_in_lockstep() {
    run(
        DeviceConfig {
            lockstep: true,
            seed: 6,
            stall: 0.3,
            idle: 0.0,
        },
        5,
    );
}
