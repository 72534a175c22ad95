//! The responder's check (`rnic_hw::resp_check`) in lock-step on random stimulus: random
//! header, row and state words, random valid and ready. Besides rust-hdl and Verilator
//! agreeing on every output at every cycle, the handshake holds: a request is taken only while
//! idle, its verdict comes out `LATENCY` clocks later and stays, unchanged, until taken. (What
//! the verdict is, the model decides: `driver/tests/resp_check.rs`.)

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{FixedLatency, PortDut, PortLockStep};
use rnic_hw::resp_check::{LATENCY, RespCheck};
use rnic_hw::row_table::{MR_BITS, QP_BITS, RS_BITS};
use rnic_hw::transport_header::TH_BITS;

#[test]
fn random_requests_in_lock_step() {
    for seed in 1..=3u64 {
        let mut d = PortLockStep::new(RespCheck::<6>::default(), "resp_check", seed).unwrap();
        let mut rng = Rng::new(seed);
        let [reset, s_valid, s_hdr, s_qp, s_mr, s_state, s_wqe, m_ready] = [
            "reset",
            "s_valid",
            "s_hdr",
            "s_qp",
            "s_mr",
            "s_state",
            "s_wqe_ready",
            "m_ready",
        ]
        .map(|n| d.input(n));
        let [s_ready, m_valid, m_verdict, m_addr] =
            ["s_ready", "m_valid", "m_verdict", "m_addr"].map(|n| d.output(n));
        let mut hs = FixedLatency::new(LATENCY);
        let (mut taken, mut verdicts) = (0usize, [0u32; 16]);
        for cycle in 0..20_000u64 {
            let rst = cycle < 2;
            d.set(reset, u64::from(rst));
            let valid = !rst && rng.chance(0.6);
            d.set(s_valid, u64::from(valid));
            // Narrow the opcode to the request range often, so the decode paths are exercised.
            let mut hdr = rng.words(TH_BITS);
            if rng.chance(0.7) {
                let (op, _) = rnic_hw::transport_header::th_offset_of("OpCode").unwrap();
                let code = [0u64, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 19, 20, 22, 23]
                    [rng.below(17) as usize];
                hdr[op / 64] &= !(0xFF << (op % 64));
                hdr[op / 64] |= code << (op % 64);
            }
            d.set_words(s_hdr, &hdr);
            d.set_words(s_qp, &rng.words(QP_BITS));
            d.set_words(s_mr, &rng.words(MR_BITS));
            // In sequence often, so the later checks decide.
            let mut state = rng.words(RS_BITS);
            if rng.chance(0.6) {
                let (p, _) = rnic_hw::transport_header::th_offset_of("PSN").unwrap();
                let (e, _) = rnic_hw::row_table::rs_offset_of("EPSN").unwrap();
                let psn = (hdr[p / 64] >> (p % 64)) & 0xFF_FFFF;
                assert!(e % 64 + 24 <= 64 && p % 64 + 24 <= 64);
                state[e / 64] &= !(0xFF_FFFF << (e % 64));
                state[e / 64] |= psn << (e % 64);
            }
            d.set_words(s_state, &state);
            d.set(s_wqe, rng.below(2));
            let ready = rng.chance(0.5);
            d.set(m_ready, u64::from(ready));
            d.settle().unwrap_or_else(|m| panic!("{m}"));
            if rst {
                hs.reset();
                d.tick();
                continue;
            }
            let (took, answer) = hs.cycle(
                cycle,
                (valid, d.get(s_ready) == 1),
                (d.get(m_valid) == 1, ready),
                || vec![d.get_words(m_verdict), d.get_words(m_addr)],
            );
            taken += usize::from(took);
            if let Some(v) = answer {
                verdicts[v[0][0] as usize] += 1;
            }
            d.tick();
            hs.tick();
        }
        assert!(taken > 2000, "seed {seed}: {taken} requests");
        let seen = verdicts.iter().filter(|&&n| n > 0).count();
        assert!(seen >= 6, "seed {seed}: verdicts seen {verdicts:?}");
    }
}
