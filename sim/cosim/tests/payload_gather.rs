//! The payload gather (`rnic_hw::payload_gather`) in lock-step under a random host: commands
//! of one to four entries at any byte (some empty), a packet's part of the message anywhere in
//! it (inside one entry, across several, from an entry's first or last byte), every handshake
//! stalling at random, reads refused now and then (an entry outside host memory). Expected
//! from the entries alone, as the transport model's `gather` walks them: the reads are the
//! pieces the part covers, in order, each from its first byte rounded down to eight bytes and
//! as long as the piece plus that rounding; the stream is the message's bytes from `off`, `take`
//! of them, packed from the first lane, full beats but the last, whose `keep` covers exactly
//! the last bytes; `tuser` on the last beat exactly when a read was refused; a command with
//! `take` 0 gives nothing.

use std::collections::VecDeque;

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{PortDut, PortLockStep};
use rnic_cosim::transport::read_beats;
use rnic_hw::payload_gather::PayloadGather;

/// Host memory: `MEM` random bytes at device address `BASE`; reads elsewhere are refused.
const BASE: u64 = 0x4_0000_0000;
const MEM: usize = 1 << 20;

struct Job {
    entries: [(u64, u32); 4],
    off: u32,
    take: u16,
    /// The reads the walk makes: (aligned address, length).
    reads: Vec<(u64, u16)>,
    payload: Vec<u8>,
    refused: bool,
    /// Reads the engine has issued for it.
    issued: usize,
}

fn job(rng: &mut Rng, mem: &[u8]) -> Job {
    let mut entries = [(0u64, 0u32); 4];
    let count = 1 + rng.below(4) as usize;
    for e in entries.iter_mut().take(count) {
        let len = match rng.below(6) {
            0 => 0,
            1 => 1 + rng.below(8) as u32,
            2 => 4096 + rng.below(9) as u32,
            _ => rng.below(3000) as u32,
        };
        let at = rng.below((MEM - len as usize) as u64);
        *e = (BASE + at, len);
        if rng.chance(0.03) {
            // Outside host memory: the read is refused.
            e.0 = BASE - 0x10_0000 + rng.below(4096);
        }
    }
    let total: u64 = entries.iter().map(|e| u64::from(e.1)).sum();
    let (off, take) = if total == 0 || rng.chance(0.03) {
        (0, 0)
    } else {
        let off = match rng.below(3) {
            0 => 0,
            1 => total - 1 - rng.below(total.min(16)),
            _ => rng.below(total),
        };
        let take = 1 + rng.below((total - off).min(4096));
        (off as u32, take as u16)
    };
    // The model's walk.
    let (mut skip, mut left) = (u64::from(off), u64::from(take));
    let (mut reads, mut payload, mut refused) = (Vec::new(), Vec::new(), false);
    for &(addr, len) in &entries {
        if left == 0 {
            break;
        }
        let len = u64::from(len);
        if skip >= len {
            skip -= len;
            continue;
        }
        let t = (len - skip).min(left);
        let a = addr + skip;
        reads.push((a & !7, (a % 8 + t) as u16));
        if a >= BASE && a + t <= BASE + MEM as u64 {
            let i = (a - BASE) as usize;
            payload.extend_from_slice(&mem[i..i + t as usize]);
        } else {
            refused = true;
            payload.extend(std::iter::repeat_n(0, t as usize));
        }
        left -= t;
        skip = 0;
    }
    Job {
        entries,
        off,
        take,
        reads,
        payload,
        refused,
        issued: 0,
    }
}

#[test]
fn random_gathers_in_lock_step() {
    for seed in 1..=4u64 {
        let mut d = PortLockStep::new(PayloadGather::default(), "payload_gather", seed).unwrap();
        let mut rng = Rng::new(seed);
        let mem: Vec<u8> = (0..MEM).map(|_| rng.next_u64() as u8).collect();
        let i = |d: &mut PortLockStep<PayloadGather>, n: &str| d.input(n);
        let reset = i(&mut d, "reset");
        let cmd_valid = i(&mut d, "s_cmd_valid");
        let cmd: Vec<(usize, usize)> = (0..4)
            .map(|k| {
                (
                    d.input(&format!("s_cmd_addr{k}")),
                    d.input(&format!("s_cmd_len{k}")),
                )
            })
            .collect();
        let [
            off,
            take,
            req_ready,
            data_valid,
            data,
            data_last,
            data_err,
            tready,
        ] = [
            "s_cmd_off",
            "s_cmd_take",
            "m_dma_rd_req_ready",
            "m_dma_rd_data_valid",
            "m_dma_rd_data",
            "m_dma_rd_data_last",
            "m_dma_rd_data_err",
            "m_axis_tready",
        ]
        .map(|n| d.input(n));
        let [
            cmd_ready,
            req_valid,
            req_addr,
            req_len,
            data_ready,
            tdata,
            tkeep,
            tlast,
            tuser,
            tvalid,
        ] = [
            "s_cmd_ready",
            "m_dma_rd_req_valid",
            "m_dma_rd_req_addr",
            "m_dma_rd_req_len",
            "m_dma_rd_data_ready",
            "m_axis_tdata",
            "m_axis_tkeep",
            "m_axis_tlast",
            "m_axis_tuser",
            "m_axis_tvalid",
        ]
        .map(|n| d.output(n));
        d.set(reset, 1);
        d.settle().unwrap();
        d.tick();
        d.set(reset, 0);
        // Jobs taken and not yet fully out; reads seen; reads' beats still to come.
        let mut open: VecDeque<Job> = VecDeque::new();
        let mut next = job(&mut rng, &mem);
        let mut beats: VecDeque<(u64, bool, bool)> = VecDeque::new();
        let mut out: Vec<u8> = Vec::new();
        let (mut done, mut multi, mut refused, mut empty) = (0, 0, 0, 0);
        for cycle in 0..150_000u64 {
            let cv = rng.chance(0.7);
            d.set(cmd_valid, u64::from(cv));
            for (k, &(a, l)) in cmd.iter().enumerate() {
                d.set(a, next.entries[k].0);
                d.set(l, next.entries[k].1.into());
            }
            d.set(off, next.off.into());
            d.set(take, next.take.into());
            let rq = rng.chance(0.7);
            d.set(req_ready, u64::from(rq));
            let dv = !beats.is_empty() && rng.chance(0.8);
            let (w, last, err) = beats.front().copied().unwrap_or((0, false, false));
            d.set(data_valid, u64::from(dv));
            d.set(data, w);
            d.set(data_last, u64::from(last));
            d.set(data_err, u64::from(err));
            let tr = rng.chance(0.7);
            d.set(tready, u64::from(tr));
            d.settle().unwrap_or_else(|m| panic!("{m}"));

            if cv && d.get(cmd_ready) == 1 {
                // Taken once the last one's payload is out (its last beat may wait).
                assert!(
                    open.iter().all(|j| j.issued == j.reads.len()),
                    "cycle {cycle}: a command taken while busy"
                );
                let j = std::mem::replace(&mut next, job(&mut rng, &mem));
                if j.take == 0 {
                    empty += 1;
                } else {
                    open.push_back(j);
                }
            }
            if rq && d.get(req_valid) == 1 {
                let j = open
                    .back_mut()
                    .unwrap_or_else(|| panic!("cycle {cycle}: a read while idle"));
                let (a, l) = (d.get(req_addr), d.get(req_len) as u16);
                assert_eq!(
                    Some(&(a, l)),
                    j.reads.get(j.issued),
                    "cycle {cycle}: read {} of {:?}",
                    j.issued,
                    j.reads
                );
                j.issued += 1;
                beats.extend(read_beats(a, l.into(), BASE, &mem));
            }
            if dv && d.get(data_ready) == 1 {
                beats.pop_front();
            }
            if tr && d.get(tvalid) == 1 {
                let j = open
                    .front()
                    .unwrap_or_else(|| panic!("cycle {cycle}: a beat while idle"));
                let keep = d.get(tkeep);
                let n = keep.trailing_ones() as usize;
                assert_eq!(
                    keep >> n,
                    0,
                    "cycle {cycle}: keep {keep:#x} is a run from lane 0"
                );
                let is_last = d.get(tlast) == 1;
                if !is_last {
                    assert_eq!(keep, 0xFF, "cycle {cycle}: a full beat before the last");
                }
                out.extend_from_slice(&d.get(tdata).to_le_bytes()[..n]);
                if is_last {
                    assert_eq!(
                        out.len(),
                        usize::from(j.take),
                        "cycle {cycle}: payload length"
                    );
                    if !j.refused {
                        assert_eq!(out, j.payload, "cycle {cycle}: payload bytes");
                    }
                    assert_eq!(d.get(tuser) == 1, j.refused, "cycle {cycle}: tuser");
                    assert_eq!(j.issued, j.reads.len(), "cycle {cycle}: every read issued");
                    done += 1;
                    multi += usize::from(j.reads.len() > 1);
                    refused += usize::from(j.refused);
                    out.clear();
                    open.pop_front();
                } else {
                    assert!(
                        out.len() < usize::from(j.take),
                        "cycle {cycle}: beyond the payload"
                    );
                }
            }
            d.tick();
        }
        assert!(
            done > 300 && multi > 80 && refused > 5 && empty > 5,
            "seed {seed}: {done} payloads, {multi} of several pieces, {refused} refused, {empty} empty"
        );
    }
}
