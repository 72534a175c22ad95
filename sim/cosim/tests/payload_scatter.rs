//! The payload scatter (`rnic_hw::payload_scatter`) in lock-step under a random host and a
//! random payload stream: commands of one to four pieces at any byte (some empty), payloads
//! exactly as long as the pieces or longer, every handshake stalling at random, writes refused
//! now and then. Expected from the pieces alone: the writes are the non-empty pieces in order,
//! each `ceil(len / 8)` beats with the last one marked and its `keep` covering exactly the
//! piece's last bytes, and together they put the payload's bytes, in order, at the pieces'
//! addresses; done reports a refusal exactly when one happened; the engine never takes a beat
//! of the next payload, and when the pieces need the whole payload it reports taking its end.

use std::collections::{HashMap, VecDeque};

use rnic_cosim::axis::{Rng, beats};
use rnic_cosim::ports::{PortDut, PortLockStep};
use rnic_hw::payload_scatter::PayloadScatter;

struct Job {
    pieces: [(u64, u16); 4],
    payload: Vec<u8>,
    refuse: bool,
}

fn job(rng: &mut Rng, n: usize) -> Job {
    let mut pieces = [(0u64, 0u16); 4];
    let count = 1 + rng.below(4) as usize;
    for (k, p) in pieces.iter_mut().enumerate().take(count) {
        // Disjoint regions, any byte.
        let base = ((n as u64) << 20) + ((k as u64) << 16);
        let len = if rng.chance(0.15) {
            0
        } else if rng.chance(0.3) {
            1 + rng.below(16)
        } else {
            1 + rng.below(700)
        };
        *p = (base + rng.below(64), len as u16);
    }
    let need: usize = pieces.iter().map(|p| usize::from(p.1)).sum();
    let extra = if rng.chance(0.25) {
        1 + rng.below(40) as usize
    } else {
        0
    };
    let payload = (0..need + extra).map(|_| rng.next_u64() as u8).collect();
    Job {
        pieces,
        payload,
        refuse: rng.chance(0.1),
    }
}

#[test]
fn pieces_at_any_byte_in_lock_step() {
    for seed in 1..=4u64 {
        let mut d = PortLockStep::new(PayloadScatter::default(), "payload_scatter", seed).unwrap();
        let mut rng = Rng::new(seed);
        let inp = |d: &PortLockStep<PayloadScatter>, n: &str| d.input(n);
        let [
            reset,
            cmd_valid,
            tdata,
            tkeep,
            tlast,
            tvalid,
            req_ready,
            data_ready,
        ] = [
            "reset",
            "s_cmd_valid",
            "s_axis_tdata",
            "s_axis_tkeep",
            "s_axis_tlast",
            "s_axis_tvalid",
            "m_dma_wr_req_ready",
            "m_dma_wr_data_ready",
        ]
        .map(|n| inp(&d, n));
        let [done_valid, done_err, done_ready] =
            ["m_dma_wr_done_valid", "m_dma_wr_done_err", "m_done_ready"].map(|n| inp(&d, n));
        let cmd_a =
            ["s_cmd_addr0", "s_cmd_addr1", "s_cmd_addr2", "s_cmd_addr3"].map(|n| inp(&d, n));
        let cmd_l = ["s_cmd_len0", "s_cmd_len1", "s_cmd_len2", "s_cmd_len3"].map(|n| inp(&d, n));
        let o = |d: &PortLockStep<PayloadScatter>, n: &str| d.output(n);
        let [cmd_ready, s_ready, req_valid, req_addr, req_len] = [
            "s_cmd_ready",
            "s_axis_tready",
            "m_dma_wr_req_valid",
            "m_dma_wr_req_addr",
            "m_dma_wr_req_len",
        ]
        .map(|n| o(&d, n));
        let [data_valid, data, keep, last, m_done, m_err, m_tail] = [
            "m_dma_wr_data_valid",
            "m_dma_wr_data",
            "m_dma_wr_data_keep",
            "m_dma_wr_data_last",
            "m_done_valid",
            "m_done_err",
            "m_done_tail",
        ]
        .map(|n| o(&d, n));

        let jobs: Vec<Job> = (0..300).map(|n| job(&mut rng, n)).collect();
        // The stream: every job's payload beats back to back, each beat tagged with its job.
        let stream: Vec<(usize, rnic_cosim::axis::Beat)> = jobs
            .iter()
            .enumerate()
            .flat_map(|(j, jb)| {
                let b = if jb.payload.is_empty() {
                    Vec::new()
                } else {
                    beats(&jb.payload, 0)
                };
                b.into_iter().map(move |b| (j, b))
            })
            .collect();
        let mut pos = 0usize;
        let mut cur: Option<usize> = None;
        let mut next_job = 0usize;
        let mut mem: HashMap<u64, u8> = HashMap::new();
        // The write being received: (address, length, beats so far, bytes so far).
        let mut writing: Option<(u64, u64, u64, u64)> = None;
        let mut writes: Vec<(u64, u16)> = Vec::new();
        let mut dones: VecDeque<(u64, bool)> = VecDeque::new();
        let mut refused = false;
        let mut stalls = 0u64;
        let mut tails = 0;
        let mut cycle = 0u64;
        while next_job < jobs.len() || cur.is_some() {
            cycle += 1;
            assert!(cycle < 2_000_000, "seed {seed}: stuck at job {cur:?}");
            let rst = cycle < 3;
            d.set(reset, u64::from(rst));
            let offer = !rst && cur.is_none() && next_job < jobs.len() && rng.chance(0.5);
            d.set(cmd_valid, u64::from(offer));
            if next_job < jobs.len() {
                for k in 0..4 {
                    d.set(cmd_a[k], jobs[next_job].pieces[k].0);
                    d.set(cmd_l[k], u64::from(jobs[next_job].pieces[k].1));
                }
            }
            let beat = stream.get(pos).copied();
            let bv = beat.is_some() && rng.chance(0.8);
            let b = beat.map(|b| b.1).unwrap_or(rnic_cosim::axis::Beat {
                tdata: 0,
                tkeep: 0,
                tlast: false,
                tuser: 0,
            });
            d.set(tdata, b.tdata);
            d.set(tkeep, u64::from(b.tkeep));
            d.set(tlast, u64::from(b.tlast));
            d.set(tvalid, u64::from(bv));
            let rr = rng.chance(0.6);
            let dr = rng.chance(0.75);
            d.set(req_ready, u64::from(rr));
            d.set(data_ready, u64::from(dr));
            // A done some clocks after the write's last beat, in order.
            let give = dones.front().is_some_and(|&(at, _)| at <= cycle);
            d.set(done_valid, u64::from(give));
            d.set(done_err, u64::from(give && dones.front().unwrap().1));
            let drd = rng.chance(0.5);
            d.set(done_ready, u64::from(drd));
            d.settle().unwrap_or_else(|m| panic!("{m}"));
            if rst {
                d.tick();
                continue;
            }
            if give {
                dones.pop_front();
            }
            if offer && d.get(cmd_ready) == 1 {
                cur = Some(next_job);
                next_job += 1;
                writes.clear();
                refused = false;
            }
            if bv && d.get(s_ready) == 1 {
                let (j, _) = stream[pos];
                assert_eq!(Some(j), cur, "seed {seed}: a beat of job {j} taken");
                pos += 1;
            }
            if d.get(req_valid) == 1 {
                if rr {
                    assert!(writing.is_none(), "seed {seed}: a request inside a burst");
                    let (a, l) = (d.get(req_addr), d.get(req_len));
                    writing = Some((a, l, 0, 0));
                    writes.push((a, l as u16));
                } else {
                    stalls += 1;
                }
            }
            if d.get(data_valid) == 1 && dr {
                let (a, l, nb, nbytes) = writing.as_mut().expect("data after a request");
                let kp = d.get(keep) as u8;
                let w = d.get(data).to_le_bytes();
                let n = u64::from(kp.count_ones());
                assert_eq!(kp, ((1u16 << n) - 1) as u8, "seed {seed}: keep {kp:#x}");
                for (i, byte) in w.iter().enumerate().take(n as usize) {
                    mem.insert(*a + *nbytes + i as u64, *byte);
                }
                *nbytes += n;
                *nb += 1;
                let is_last = d.get(last) == 1;
                assert_eq!(
                    is_last,
                    *nbytes == *l,
                    "seed {seed}: last at {nbytes} of {l}"
                );
                assert!(
                    n == 8 || is_last,
                    "seed {seed}: a short beat before the last"
                );
                if is_last {
                    assert_eq!(*nb, l.div_ceil(8));
                    let err = jobs[cur.unwrap()].refuse && rng.chance(0.5);
                    refused |= err;
                    dones.push_back((cycle + 1 + rng.below(6), err));
                    writing = None;
                }
            }
            if d.get(m_done) == 1 && drd {
                let j = cur.take().expect("done while a job runs");
                let jb = &jobs[j];
                assert!(
                    writing.is_none() && dones.is_empty(),
                    "seed {seed}: done early"
                );
                let want: Vec<(u64, u16)> = jb.pieces.iter().copied().filter(|p| p.1 > 0).collect();
                assert_eq!(writes, want, "seed {seed} job {j}: the writes");
                let mut off = 0usize;
                for &(a, l) in &jb.pieces {
                    for i in 0..usize::from(l) {
                        assert_eq!(
                            mem.get(&(a + i as u64)),
                            Some(&jb.payload[off + i]),
                            "seed {seed} job {j}: byte {i} of the piece at {a:#x}"
                        );
                    }
                    off += usize::from(l);
                }
                assert_eq!(d.get(m_err) == 1, refused, "seed {seed} job {j}: err");
                let tail = d.get(m_tail) == 1;
                if off == jb.payload.len() && off > 0 {
                    assert!(tail, "seed {seed} job {j}: the payload's end was needed");
                }
                if tail {
                    tails += 1;
                    assert!(stream.get(pos).is_none_or(|b| b.0 > j));
                } else {
                    // The caller discards the rest.
                    while stream.get(pos).is_some_and(|b| b.0 == j) {
                        pos += 1;
                    }
                }
            }
            d.tick();
        }
        eprintln!("seed {seed}: {cycle} clocks, {stalls} stalls, {tails} tails");
        assert_eq!(pos, stream.len());
        assert!(
            stalls > 100 && tails > 200,
            "seed {seed}: {stalls} stalls, {tails} tails"
        );
    }
}
