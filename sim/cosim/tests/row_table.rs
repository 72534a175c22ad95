//! The row table (`rnic_hw::row_table`) in lock-step under a random host and a random engine:
//! a row changes only when its word 7 is written, and then to the staged words; host reads and
//! engine lookups return the committed row (bits past the row's width read 0); a lookup is
//! refused while the host reads, and answered the next cycle otherwise.

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{PortDut, PortLockStep};
use rnic_hw::address_vector::AV_BITS;
use rnic_hw::row_table::RowTable;

type Table = RowTable<AV_BITS, 4>;

fn row_words(row: &[u32; 8]) -> Vec<u64> {
    let mut w = vec![0u64; AV_BITS.div_ceil(64)];
    for (k, v) in row.iter().enumerate() {
        let bits = (*v as u64) << (32 * (k % 2));
        if k / 2 < w.len() {
            w[k / 2] |= bits;
        }
    }
    let top = AV_BITS % 64;
    let last = w.len() - 1;
    w[last] &= (1u64 << top) - 1;
    w
}

fn masked(row: &[u32; 8]) -> [u32; 8] {
    let mut r = *row;
    for (k, v) in r.iter_mut().enumerate() {
        let lo = 32 * k;
        if lo >= AV_BITS {
            *v = 0;
        } else if lo + 32 > AV_BITS {
            *v &= (1u32 << (AV_BITS - lo)) - 1;
        }
    }
    r
}

#[test]
fn rows_commit_whole_and_read_back() {
    for seed in 1..=3u64 {
        let mut d = PortLockStep::new(Table::default(), "row_table", seed).unwrap();
        let mut rng = Rng::new(seed);
        let i: Vec<usize> = [
            "reset",
            "wr_en",
            "wr_row",
            "wr_word",
            "wr_data",
            "rd_start",
            "rd_row",
            "rd_word",
            "look_valid",
            "look_row",
        ]
        .iter()
        .map(|n| d.input(n))
        .collect();
        let o: Vec<usize> = ["rd_data", "look_ready", "got_valid", "got_row", "got_data"]
            .iter()
            .map(|n| d.output(n))
            .collect();
        let mut table = [[0u32; 8]; 16];
        let mut stage = [0u32; 8];
        let mut pending_rd: Option<(usize, usize, u32)> = None;
        let mut pending_look: Option<(usize, Vec<u64>)> = None;
        let (mut commits, mut reads, mut looks) = (0, 0, 0);
        for cycle in 0..8000u64 {
            let reset = cycle < 2;
            let wr = !reset && rng.chance(0.4);
            let (wr_row, wr_word, wr_data) = (
                rng.below(16) as usize,
                rng.below(8) as usize,
                rng.next_u64() as u32,
            );
            let rd = !reset && rng.chance(0.3);
            let (rd_row, rd_word) = (rng.below(16) as usize, rng.below(8) as usize);
            let lk = !reset && rng.chance(0.5);
            let lk_row = rng.below(16) as usize;
            let vals = [
                u64::from(reset),
                u64::from(wr),
                wr_row as u64,
                wr_word as u64,
                u64::from(wr_data),
                u64::from(rd),
                rd_row as u64,
                rd_word as u64,
                u64::from(lk),
                lk_row as u64,
            ];
            for (p, v) in i.iter().zip(vals) {
                d.set(*p, v);
            }
            d.settle().unwrap_or_else(|m| panic!("{m}"));
            // Answers to last cycle's read and lookup.
            if let Some((r, w, want)) = pending_rd.take() {
                assert_eq!(
                    d.get(o[0]) as u32,
                    want,
                    "cycle {cycle}: read row {r} word {w}"
                );
                reads += 1;
            }
            match pending_look.take() {
                Some((r, want)) => {
                    assert_eq!(d.get(o[2]), 1, "cycle {cycle}: lookup answered");
                    assert_eq!(d.get(o[3]) as usize, r, "cycle {cycle}: lookup row");
                    assert_eq!(d.get_words(o[4]), want, "cycle {cycle}: row {r}");
                    looks += 1;
                }
                None if !reset => assert_eq!(d.get(o[2]), 0, "cycle {cycle}: no lookup"),
                None => {}
            }
            assert_eq!(d.get(o[1]) == 1, !rd, "cycle {cycle}: look_ready");
            // What they return is the row before this cycle's commit.
            if rd {
                pending_rd = Some((rd_row, rd_word, masked(&table[rd_row])[rd_word]));
            }
            if lk && !rd {
                pending_look = Some((lk_row, row_words(&table[lk_row])));
            }
            if wr {
                stage[wr_word] = wr_data;
                if wr_word == 7 {
                    table[wr_row] = stage;
                    commits += 1;
                }
            }
            d.tick();
        }
        assert!(
            commits > 300 && reads > 1000 && looks > 1500,
            "seed {seed}: {commits} {reads} {looks}"
        );
    }
}
