//! The pieces of a message's byte range in its scatter/gather entries (`rnic_hw::sge_pieces`,
//! rust-hdl and Verilator in lock-step) against the transport model's `scatter_plan`, which
//! its completer uses to place a READ response's bytes: zero to four entries used, some of
//! them empty, lengths from one byte to 2^32 - 1 (so the entries' starts need 34 bits), ranges
//! inside one entry, across several, starting at an entry's boundary or one byte before it,
//! ending exactly at the entries' end or past it, at any byte of a 2^32-byte message. Each
//! piece (an entry's device address plus the bytes skipped in it, and the bytes taken; zero
//! for an entry the range does not meet) equals the model's, and `over` says exactly when the
//! model finds the entries too short. Inputs held `LATENCY` clocks, then the next range.

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{PortDut, PortLockStep};
use rnic_hw::sge_pieces::{LATENCY, SgePieces};
use rnic_transport::requester::scatter_plan;

struct Case {
    addrs: [u64; 4],
    lens: [u32; 4],
    off: u64,
    len: u16,
}

fn entry_len(rng: &mut Rng) -> u32 {
    match rng.below(6) {
        0 => 0,
        1 => 1 + rng.below(8) as u32,
        2 => 1 + rng.below(5000) as u32,
        3 => u32::MAX - rng.below(4) as u32,
        _ => 1 + rng.below(70_000) as u32,
    }
}

fn case(rng: &mut Rng) -> Case {
    let used = if rng.chance(0.05) {
        0
    } else {
        1 + rng.below(4) as usize
    };
    let mut lens = [0u32; 4];
    let mut addrs = [0u64; 4];
    for k in 0..4 {
        addrs[k] = rng.next_u64() >> rng.below(20);
        if k < used {
            lens[k] = entry_len(rng);
        }
    }
    let total: u64 = lens.iter().map(|&l| u64::from(l)).sum();
    let len = match rng.below(4) {
        0 => 1 + rng.below(8),
        1 => 4096,
        _ => 1 + rng.below(4096),
    } as u16;
    // Starts at a boundary, just before one, near the end, or anywhere.
    let starts: Vec<u64> = (0..=4)
        .map(|k| lens[..k].iter().map(|&l| u64::from(l)).sum())
        .collect();
    let at = starts[rng.below(5) as usize];
    let off = match rng.below(5) {
        0 => at,
        1 => at.saturating_sub(1 + rng.below(8)),
        2 => total.saturating_sub(u64::from(len)) + rng.below(3),
        3 => at.saturating_sub(rng.below(u64::from(len) + 1)),
        _ => rng.below(total.max(1) + 16),
    }
    .min((1 << 32) - 1);
    Case {
        addrs,
        lens,
        off,
        len,
    }
}

#[test]
fn pieces_equal_the_models_plan_in_lock_step() {
    let mut d = PortLockStep::new(SgePieces::default(), "sge_pieces", 1).unwrap();
    let mut rng = Rng::new(7);
    let s_addr = ["s_addr0", "s_addr1", "s_addr2", "s_addr3"].map(|n| d.input(n));
    let s_len = ["s_len0", "s_len1", "s_len2", "s_len3"].map(|n| d.input(n));
    let m_addr = ["m_addr0", "m_addr1", "m_addr2", "m_addr3"].map(|n| d.output(n));
    let m_len = ["m_len0", "m_len1", "m_len2", "m_len3"].map(|n| d.output(n));
    let [s_off, s_plen, s_total] = ["s_off", "s_len", "s_total"].map(|n| d.input(n));
    let [m_off, m_end, m_over] = ["m_off", "m_end", "m_over"].map(|n| d.output(n));
    let (mut over, mut multi, mut boundary) = (0, 0, 0);
    let cases = 4000;
    for n in 0..cases {
        let c = case(&mut rng);
        let total: u64 = c.lens.iter().map(|&l| u64::from(l)).sum();
        for k in 0..4 {
            d.set(s_addr[k], c.addrs[k]);
            d.set(s_len[k], u64::from(c.lens[k]));
        }
        d.set(s_off, c.off);
        d.set(s_plen, u64::from(c.len));
        d.set(s_total, total);
        for _ in 0..LATENCY {
            d.settle().unwrap();
            d.tick();
        }
        d.settle().unwrap();
        let end = c.off + u64::from(c.len);
        assert_eq!(d.get(m_off), c.off, "case {n}");
        assert_eq!(d.get(m_end), end, "case {n}");
        let plan = scatter_plan(&c.lens, c.off as u32, u32::from(c.len));
        let hw_over = d.get(m_over) == 1;
        assert_eq!(hw_over, plan.is_none(), "case {n}: over");
        let Some(plan) = plan else {
            over += 1;
            continue;
        };
        let mut want = [(0u64, 0u64); 4];
        for &(k, skip, take) in &plan {
            want[k] = (c.addrs[k].wrapping_add(u64::from(skip)), u64::from(take));
        }
        for k in 0..4 {
            let len = d.get(m_len[k]);
            assert_eq!(len, want[k].1, "case {n}: piece {k}'s length");
            if len > 0 {
                assert_eq!(d.get(m_addr[k]), want[k].0, "case {n}: piece {k}'s address");
            }
        }
        multi += usize::from(plan.len() > 1);
        let starts = (0..4).map(|k| c.lens[..k].iter().map(|&l| u64::from(l)).sum::<u64>());
        boundary += usize::from(starts.into_iter().any(|s| s == c.off && s < total));
        assert!(end <= total);
    }
    eprintln!(
        "{cases} ranges: {over} past the entries, {multi} across entries, {boundary} at a boundary"
    );
    assert!(over > 200 && multi > 400 && boundary > 400, "coverage");
}
