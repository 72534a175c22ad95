//! The send request reader (`rnic_hw::send_wqe`, rust-hdl and Verilator in lock-step) against
//! the transport model's check of a request before it is sent (`MrTable::check` of every entry,
//! LOCAL_WRITE for a READ's or an atomic's destination, a local read for the others) on random
//! rings and requests: regions with and without LOCAL_WRITE in two PDs (`wqe_bench`); rings
//! disabled, or read at an index that has reached the producer or lies anywhere before it;
//! requests of every opcode (and a few no verbs layer sends) with zero to five entries aimed at
//! the regions' edges, wrong keys and the other PD; reads refused now and then; every handshake
//! stalling at random. Each answer equals what the model and the ring say: empty, refused, or
//! the fixed part as written, each used entry's length and (where it passes) device address,
//! whether all pass, and the message's length.

mod wqe_bench;

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{PortDut, PortLockStep};
use rnic_hw::send_wqe::SendWqe;
use rnic_transport::verbs::Access;
use wqe_bench::{Fetch, entry, fetch, model_check, pick, qp_pd, regions};

/// ibv_wr_opcode: the READ and the two atomics write their entries.
fn writes_entries(op: u64) -> bool {
    (4..=6).contains(&op)
}

#[test]
fn send_requests_equal_the_models_local_check() {
    for seed in 1..=3u64 {
        let mut rng = Rng::new(seed);
        let r = regions(&mut rng);
        assert!(r.infos.len() > 20);
        let mut d = PortLockStep::new(SendWqe::<6, 2>::default(), "send_wqe", seed).unwrap();
        let [m_empty, m_derr, m_index, m_wqe, m_ok, m_total] = [
            "m_empty",
            "m_dma_err",
            "m_index",
            "m_wqe",
            "m_ok",
            "m_total",
        ]
        .map(|n| d.output(n));
        let m_addr = ["m_addr0", "m_addr1", "m_addr2", "m_addr3"].map(|n| d.output(n));
        let m_len = ["m_len0", "m_len1", "m_len2", "m_len3"].map(|n| d.output(n));
        let req_index = d.input("s_req_index");

        let (mut answers, mut passed, mut failed, mut empties, mut refused) = (0, 0, 0, 0, 0);
        // Requests refused only because a READ or atomic may not write a read-only region,
        // and SENDs or WRITEs that passed reading one.
        let (mut no_write, mut read_only_sent) = (0, 0);
        for _ in 0..300 {
            let log = rng.below(9);
            let cons = rng.below(1 << 16);
            let posted = rng.below(1 << log) + 1;
            let prod = (cons + posted) & 0xFFFF;
            // The requester's index: anywhere from the consumer to the producer.
            let index = if rng.chance(0.15) {
                prod
            } else {
                (cons + rng.below(posted)) & 0xFFFF
            };
            let base = rng.next_u64() & !0x7F & 0xFFFF_FFFF_FFFF;
            let op = if rng.chance(0.05) {
                7 + rng.below(249)
            } else {
                rng.below(7)
            };
            let nsge = pick(&mut rng, &[0u64, 1, 1, 2, 3, 4, 4, 5]);
            let sges: Vec<(u64, u32, u32)> = (0..4).map(|_| entry(&mut rng, &r)).collect();
            let mut beats: Vec<u64> = (0..8).map(|_| rng.next_u64()).collect();
            beats[1] = op | rng.below(8) << 8 | nsge << 16 | rng.next_u64() << 32;
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
                slot: base + ((index & ((1 << log) - 1)) << 7),
                beats,
                deny: rng.chance(0.05),
            };
            d.set(req_index, index);
            let (empty, derr, got_index, wqe, ents, ok, total) =
                fetch(&mut d, &mut rng, &r, &f, answers == 0, |d| {
                    let a: Vec<(u64, u64)> = (0..4)
                        .map(|k| (d.get(m_addr[k]), d.get(m_len[k])))
                        .collect();
                    (
                        d.get(m_empty),
                        d.get(m_derr),
                        d.get(m_index),
                        d.get_words(m_wqe),
                        a,
                        d.get(m_ok),
                        d.get(m_total),
                    )
                });
            answers += 1;
            assert_eq!(got_index, index, "seed {seed}: the index asked");
            if !f.enabled || index == prod {
                assert_eq!(
                    empty, 1,
                    "seed {seed}: a disabled ring or nothing at the index"
                );
                empties += 1;
                continue;
            }
            assert_eq!(
                empty, 0,
                "seed {seed}: a request at {index} (producer {prod})"
            );
            if f.deny {
                assert_eq!(derr, 1, "seed {seed}: the read was refused");
                refused += 1;
                continue;
            }
            assert_eq!(derr, 0);
            assert_eq!(wqe, f.beats[..8], "seed {seed}: the fixed part");
            let need = if writes_entries(op) {
                Access::LOCAL_WRITE
            } else {
                Access::NONE
            };
            let used = nsge.min(4) as usize;
            let (mut all, mut reads_only) = (nsge <= 4, false);
            let mut sum = 0u64;
            for k in 0..4 {
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
                let read = model_check(&r, sges[k], f.pd, Access::NONE);
                match model_check(&r, sges[k], f.pd, need) {
                    Some(dev) => {
                        assert_eq!(ents[k].0, dev, "seed {seed}: entry {k}");
                        let write = model_check(&r, sges[k], f.pd, Access::LOCAL_WRITE);
                        reads_only |= write.is_none();
                    }
                    None => {
                        all = false;
                        if read.is_some() {
                            no_write += 1;
                        }
                    }
                }
            }
            assert_eq!(
                ok == 1,
                all,
                "seed {seed}: opcode {op}, entries {sges:?}, nsge {nsge}, pd {}",
                f.pd
            );
            assert_eq!(total, sum, "seed {seed}: the message's length");
            if all {
                passed += 1;
                if reads_only {
                    read_only_sent += 1;
                }
            } else {
                failed += 1;
            }
        }
        eprintln!(
            "seed {seed}: {answers} answers, {passed} passed ({read_only_sent} reading a read-only region), {failed} refused ({no_write} entries only for LOCAL_WRITE), {empties} empty, {refused} reads refused"
        );
        assert!(passed > 20 && failed > 50 && empties > 10 && refused > 3);
        assert!(no_write > 3 && read_only_sent > 3);
    }
}
