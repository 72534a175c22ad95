//! The requester's segmentation (`rnic_hw::req_segment`) in lock-step on random stimulus:
//! random work requests (opcodes mostly 0-6, lengths from 0 to 2^31 and around the MTU's
//! multiples), QP rows (MTU codes mostly 1-5), positions inside and past the request, AckReq
//! counts, random valid and ready. Besides rust-hdl and Verilator agreeing on every output at
//! every cycle, the handshake holds: a request is taken only while idle, its packet comes out
//! `LATENCY` clocks later and stays, unchanged, until taken. (What the packet is, the model
//! decides: `driver/tests/req_segment.rs`.)

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{FixedLatency, PortDut, PortLockStep, set_field};
use rnic_hw::req_segment::{LATENCY, ReqSegment, SWQE_BITS, swqe_offset_of};
use rnic_hw::row_table::{QP_BITS, qp_offset_of};

#[test]
fn random_requests_in_lock_step() {
    for seed in 1..=3u64 {
        let mut d = PortLockStep::new(ReqSegment::default(), "req_segment", seed).unwrap();
        let mut rng = Rng::new(seed);
        let [
            reset,
            s_valid,
            s_wqe,
            s_len,
            s_qp,
            s_first,
            s_pkt,
            s_noack,
            every,
            m_ready,
        ] = [
            "reset",
            "s_valid",
            "s_wqe",
            "s_len",
            "s_qp",
            "s_first_psn",
            "s_pkt",
            "s_noack",
            "ack_every",
            "m_ready",
        ]
        .map(|n| d.input(n));
        let outs = [
            "m_desc",
            "m_off",
            "m_take",
            "m_last",
            "m_npkts",
            "m_span",
            "m_next_noack",
            "m_bad",
        ]
        .map(|n| d.output(n));
        let [s_ready, m_valid, m_bad] = ["s_ready", "m_valid", "m_bad"].map(|n| d.output(n));
        let mut hs = FixedLatency::new(LATENCY);
        let (mut taken, mut bad, mut good) = (0, 0, 0);
        for cycle in 0..20_000u64 {
            let rst = cycle < 2;
            d.set(reset, u64::from(rst));
            let valid = !rst && rng.chance(0.6);
            d.set(s_valid, u64::from(valid));
            let mut wqe = rng.words(SWQE_BITS);
            if rng.chance(0.9) {
                set_field(&mut wqe, swqe_offset_of("OPCODE").unwrap(), rng.below(7));
            }
            d.set_words(s_wqe, &wqe);
            let mut qp = rng.words(QP_BITS);
            let mtu_code = if rng.chance(0.9) {
                1 + rng.below(5)
            } else {
                rng.below(8)
            };
            set_field(&mut qp, qp_offset_of("PATH_MTU").unwrap(), mtu_code);
            d.set_words(s_qp, &qp);
            let mtu = 128u64 << mtu_code.clamp(1, 5);
            let len = match rng.below(4) {
                0 => rng.below(1 << 31),
                1 => mtu * rng.below(8) + rng.below(3),
                2 => (mtu * rng.below(8)).saturating_sub(1),
                _ => rng.below(3 * mtu),
            };
            d.set(s_len, len);
            d.set(s_first, rng.below(1 << 24));
            let npkts = len.div_ceil(mtu).max(1);
            let pkt = if rng.chance(0.8) {
                rng.below(npkts.min(1 << 24))
            } else {
                npkts - 1 + rng.below(3)
            };
            d.set(s_pkt, pkt & 0xFF_FFFF);
            d.set(s_noack, rng.below(256));
            d.set(every, rng.below(256));
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
                || outs.iter().map(|&o| d.get_words(o)).collect(),
            );
            taken += usize::from(took);
            if answer.is_some() {
                if d.get(m_bad) == 1 {
                    bad += 1;
                } else {
                    good += 1;
                }
            }
            d.tick();
            hs.tick();
        }
        assert!(taken > 1500, "seed {seed}: {taken} requests");
        assert!(
            bad > 100 && good > 1000,
            "seed {seed}: {good} packets, {bad} refused"
        );
    }
}
