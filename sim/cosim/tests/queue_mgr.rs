//! The queue manager in lock-step (rust-hdl and Verilator on every cycle) against a model of
//! its table: random host writes (every word, doorbells), host reads, engine lookups and
//! commits, all at once; every answer checked against the model.

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{PortDut, PortLockStep};
use rnic_hw::queue_mgr::QueueMgr;

const MASKS: [u32; 5] = [0xFFFF_F000, 0xFFFF_FFFF, 0xFFFF_031F, 0xFFFF, 0xFFFF];

#[test]
fn host_and_engines_see_one_consistent_table() {
    for seed in 1..=3 {
        let mut d = PortLockStep::new(QueueMgr::<4>::new(false), "queue_mgr", seed).unwrap();
        let mut rng = Rng::new(seed);
        let mut table = [[0u32; 5]; 16];
        let p = |d: &PortLockStep<QueueMgr<4>>, n: &str| d.input(n);
        let g = |d: &PortLockStep<QueueMgr<4>>, n: &str| d.get(d.output(n));
        let (mut reads, mut looks, mut commits, mut dbs) = (0, 0, 0, 0);
        // What was asked last cycle, answered this one.
        // (queue, word, the table as it was when asked: the RAM reads before it writes).
        let mut pending_read: Option<(usize, usize, u32)> = None;
        let mut pending_look: Option<(usize, [u32; 5])> = None;
        for _ in 0..3000 {
            let wr = rng.chance(0.3);
            let (wq, ww, wd) = (
                rng.below(16) as usize,
                rng.below(6) as usize,
                rng.next_u64() as u32,
            );
            let rd = rng.chance(0.3);
            let (rq, rw) = (rng.below(16) as usize, rng.below(6) as usize);
            let look = rng.chance(0.4);
            let lq = rng.below(16) as usize;
            let commit = rng.chance(0.3);
            let (cq, ci) = (rng.below(16) as usize, rng.below(1 << 16) as u32);
            let disarm = rng.chance(0.2);
            let (dq, ds) = (rng.below(16) as usize, rng.next_u64() as u32);
            for (n, v) in [
                ("wr_en", u64::from(wr)),
                ("wr_queue", wq as u64),
                ("wr_word", ww as u64),
                ("wr_data", u64::from(wd)),
                ("rd_start", u64::from(rd)),
                ("rd_queue", rq as u64),
                ("rd_word", rw as u64),
                ("look_valid", u64::from(look)),
                ("look_queue", lq as u64),
                ("commit_valid", u64::from(commit)),
                ("commit_queue", cq as u64),
                ("commit_index", u64::from(ci)),
                ("disarm_valid", u64::from(disarm)),
                ("disarm_queue", dq as u64),
                ("disarm_size", u64::from(ds)),
            ] {
                let i = p(&d, n);
                d.set(i, v);
            }
            d.settle().unwrap_or_else(|m| panic!("{m}"));
            // Answers to last cycle's requests come from the table as it was then.
            if let Some((q, w, want)) = pending_read.take() {
                assert_eq!(g(&d, "rd_data") as u32, want, "seed {seed}: read q{q} w{w}");
                reads += 1;
            }
            assert_eq!(g(&d, "got_valid") != 0, pending_look.is_some());
            if let Some((q, t)) = pending_look.take() {
                assert_eq!(g(&d, "got_queue") as usize, q);
                assert_eq!(g(&d, "got_base"), u64::from(t[1]) << 32 | u64::from(t[0]));
                assert_eq!(g(&d, "got_size") as u32, t[2]);
                assert_eq!(g(&d, "got_prod") as u32, t[3]);
                assert_eq!(g(&d, "got_cons") as u32, t[4]);
                looks += 1;
            }
            // This cycle's handshakes.
            assert_eq!(g(&d, "look_ready") != 0, !rd, "host reads go first");
            let host_cons = wr && ww == 4;
            assert_eq!(g(&d, "commit_ready") != 0, !host_cons);
            assert_eq!(g(&d, "db_valid") != 0, wr && ww == 5);
            let host_size = wr && ww == 2;
            assert_eq!(g(&d, "disarm_ready") != 0, !host_size);
            if wr && ww == 5 {
                assert_eq!(g(&d, "db_queue") as usize, wq);
                dbs += 1;
            }
            if rd {
                pending_read = Some((rq, rw, if rw == 5 { 0 } else { table[rq][rw] }));
            } else if look {
                pending_look = Some((lq, table[lq]));
            }
            d.tick();
            // The table after the edge.
            if wr {
                let w = if ww == 5 { 3 } else { ww };
                table[wq][w] = wd & MASKS[w];
            }
            if disarm && !host_size {
                table[dq][2] = ds & MASKS[2] & !(1 << 9);
            }
            if commit && !host_cons {
                table[cq][4] = ci;
                commits += 1;
            }
        }
        assert!(reads > 500 && looks > 300 && commits > 500 && dbs > 50);
    }
}
