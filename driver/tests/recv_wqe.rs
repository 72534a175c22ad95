//! The receive request fetch (`rnic_hw::recv_wqe`, rust-hdl and Verilator in lock-step)
//! against the transport model's region check (`MrTable::check` for LOCAL_WRITE) on random
//! rings and requests: regions registered in the model's table with and without LOCAL_WRITE
//! and written as the driver encodes them (`wqe_bench`); rings disabled, empty or holding a
//! request at any slot; requests of zero to four entries whose keys are right, wrong in tag or index or PD,
//! and whose ranges fall inside, below, past and across a region's end, with lengths of zero
//! and 2^32 - 1; reads refused now and then; every handshake stalling at random. Each answer
//! equals what the model and the ring say: empty, refused, or the request's wr_id and index,
//! each used entry's length and (where it passes) device address, whether all pass, and the
//! total length.

mod wqe_bench;

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{PortDut, PortLockStep};
use rnic_hw::recv_wqe::RecvWqe;
use rnic_transport::verbs::Access;
use wqe_bench::{Fetch, entry, fetch, model_check, pick, qp_pd, regions};

#[test]
fn receive_requests_equal_the_models_region_check() {
    for seed in 1..=3u64 {
        let mut rng = Rng::new(seed);
        let r = regions(&mut rng);
        assert!(r.infos.len() > 20);
        let mut d = PortLockStep::new(RecvWqe::<6, 2>::default(), "recv_wqe", seed).unwrap();
        let [m_empty, m_derr, m_wr_id, m_index, m_ok, m_total] = [
            "m_empty",
            "m_dma_err",
            "m_wr_id",
            "m_index",
            "m_ok",
            "m_total",
        ]
        .map(|n| d.output(n));
        let m_addr = ["m_addr0", "m_addr1", "m_addr2"].map(|n| d.output(n));
        let m_len = ["m_len0", "m_len1", "m_len2"].map(|n| d.output(n));
        let got_cons = d.input("got_cons");

        let (mut answers, mut passed, mut failed, mut empties, mut refused) = (0, 0, 0, 0, 0);
        // Entries refused only for want of LOCAL_WRITE.
        let mut read_only = 0;
        for _ in 0..250 {
            // A ring, a request in it, the QP's PD.
            let log = rng.below(9);
            let cons = rng.below(1 << 16);
            let prod = if rng.chance(0.15) {
                cons
            } else {
                (cons + 1 + rng.below(1 << log)) & 0xFFFF
            };
            let base = rng.next_u64() & !0x3F & 0xFFFF_FFFF_FFFF;
            let nsge = pick(&mut rng, &[0u64, 1, 1, 2, 3, 3, 4]);
            let wr_id = rng.next_u64();
            let sges: Vec<(u64, u32, u32)> = (0..3).map(|_| entry(&mut rng, &r)).collect();
            let mut beats = vec![wr_id, nsge | rng.next_u64() << 8];
            for &(a, l, k) in &sges {
                beats.push(a);
                beats.push(u64::from(l) | u64::from(k) << 32);
            }
            let f = Fetch {
                ring: rng.below(4),
                pd: qp_pd(&mut rng, &r, sges[0].2),
                base,
                log,
                enabled: rng.chance(0.9),
                prod,
                cons,
                slot: base + ((cons & ((1 << log) - 1)) << 6),
                beats,
                deny: rng.chance(0.05),
            };
            d.set(got_cons, cons);
            let (empty, derr, got_wr, index, ents, ok, total) =
                fetch(&mut d, &mut rng, &r, &f, answers == 0, |d| {
                    let a: Vec<(u64, u64)> = (0..3)
                        .map(|k| (d.get(m_addr[k]), d.get(m_len[k])))
                        .collect();
                    (
                        d.get(m_empty),
                        d.get(m_derr),
                        d.get_words(m_wr_id)[0],
                        d.get(m_index),
                        a,
                        d.get(m_ok),
                        d.get(m_total),
                    )
                });
            answers += 1;
            if !f.enabled || prod == cons {
                assert_eq!(empty, 1, "seed {seed}: a disabled or empty ring");
                empties += 1;
                continue;
            }
            assert_eq!(empty, 0);
            if f.deny {
                assert_eq!(derr, 1, "seed {seed}: the read was refused");
                refused += 1;
                continue;
            }
            assert_eq!(derr, 0);
            assert_eq!((got_wr, index), (wr_id, cons), "seed {seed}");
            let used = nsge.min(3) as usize;
            let mut all = nsge <= 3;
            let mut sum = 0u64;
            for k in 0..3 {
                if k >= used {
                    assert_eq!(ents[k], (0, 0), "seed {seed}: entry {k} unused");
                    continue;
                }
                assert_eq!(
                    ents[k].1,
                    u64::from(sges[k].1),
                    "seed {seed}: entry {k}'s length"
                );
                sum += u64::from(sges[k].1);
                match model_check(&r, sges[k], f.pd, Access::LOCAL_WRITE) {
                    Some(dev) => assert_eq!(ents[k].0, dev, "seed {seed}: entry {k}"),
                    None => {
                        all = false;
                        if model_check(&r, sges[k], f.pd, Access::NONE).is_some() {
                            read_only += 1;
                        }
                    }
                }
            }
            assert_eq!(
                ok == 1,
                all,
                "seed {seed}: entries {sges:?} nsge {nsge} pd {}",
                f.pd
            );
            assert_eq!(total, sum, "seed {seed}: total");
            if all {
                passed += 1;
            } else {
                failed += 1;
            }
        }
        eprintln!(
            "seed {seed}: {answers} answers, {passed} passed, {failed} refused entries ({read_only} entries only for LOCAL_WRITE), {empties} empty, {refused} reads refused"
        );
        assert!(passed > 20 && failed > 50 && read_only > 5 && empties > 10 && refused > 3);
    }
}
