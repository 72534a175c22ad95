//! The receive request fetch (`rnic_hw::recv_wqe`, rust-hdl and Verilator in lock-step)
//! against the transport model's region check (`MrTable::check` for LOCAL_WRITE) on random
//! rings and requests: regions registered in the model's table with and without LOCAL_WRITE
//! and written as the driver encodes them; rings disabled, empty or holding a request at any
//! slot; requests of zero to four entries whose keys are right, wrong in tag or index or PD,
//! and whose ranges fall inside, below, past and across a region's end, with lengths of zero
//! and 2^32 - 1; reads refused now and then; every handshake stalling at random. Each answer
//! equals what the model and the ring say: empty, refused, or the request's wr_id and index,
//! each used entry's length and (where it passes) device address, whether all pass, and the
//! total length.

use std::collections::HashMap;

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{PortDut, PortLockStep};
use rnic_driver::responder_sim::row_words;
use rnic_driver::tables::encode_mr;
use rnic_hw::recv_wqe::RecvWqe;
use rnic_transport::mr::{MrInfo, MrSpec, MrTable, Pd};
use rnic_transport::verbs::Access;

const MRS: usize = 64;

fn pick<T: Copy>(rng: &mut Rng, xs: &[T]) -> T {
    xs[rng.below(xs.len() as u64) as usize]
}

struct Regions {
    table: MrTable,
    infos: Vec<MrInfo>,
    rows: Vec<Vec<u64>>,
    bases: Vec<u64>,
}

fn regions(rng: &mut Rng) -> Regions {
    let mut table = MrTable::new(MRS);
    let (mut infos, mut rows, mut bases) = (Vec::new(), vec![vec![0; 4]; MRS], vec![0; MRS]);
    for idx in 1..MRS {
        if rng.chance(0.3) {
            continue;
        }
        let mut access = Access::REMOTE_WRITE;
        if rng.chance(0.8) {
            access |= Access::LOCAL_WRITE;
        }
        let any = rng.next_u64() >> 8;
        let va = pick(rng, &[0, 0x1000, 0xFFFF_FFFF_FFFF_0000, any]);
        let any = rng.below(20_000);
        let len = pick(rng, &[0, 8, 4096, 65536, any]);
        let Ok(info) = table.register(MrSpec {
            pd: Pd(1 + rng.below(2) as u32),
            va,
            len,
            access,
            key: Some((idx as u32) << 8 | rng.below(256) as u32),
        }) else {
            continue;
        };
        bases[idx] = rng.next_u64() & !0xFFF;
        rows[idx] = row_words(&encode_mr(&info, bases[idx]).unwrap());
        infos.push(info);
    }
    Regions {
        table,
        infos,
        rows,
        bases,
    }
}

/// An entry (address, length, key) aimed at a region's edges, or with a wrong key.
fn entry(rng: &mut Rng, r: &Regions) -> (u64, u32, u32) {
    let m = pick(rng, &r.infos);
    let mut key = m.lkey;
    match rng.below(10) {
        0 => key ^= 1 + rng.below(255) as u32, // wrong tag
        1 => key = (rng.below(300) as u32) << 8 | key & 0xFF, // another or no row
        _ => {}
    }
    let any = rng.below(70_000) as u32;
    let len: u32 = pick(rng, &[0, 1, 8, 100, 4096, u32::MAX, any]);
    let end = m.va.wrapping_add(m.len);
    let addr = match rng.below(6) {
        0 => m.va.wrapping_sub(1 + rng.below(16)),
        1 => end.wrapping_sub(u64::from(len)),
        2 => end
            .wrapping_sub(u64::from(len))
            .wrapping_add(1 + rng.below(8)),
        3 => end,
        _ => m.va + rng.below(m.len.max(1)),
    };
    (addr, len, key)
}

#[test]
fn receive_requests_equal_the_models_region_check() {
    for seed in 1..=3u64 {
        let mut rng = Rng::new(seed);
        let r = regions(&mut rng);
        assert!(r.infos.len() > 20);
        let mut d = PortLockStep::new(RecvWqe::<6, 2>::default(), "recv_wqe", seed).unwrap();
        let i = |d: &PortLockStep<RecvWqe<6, 2>>, n: &str| d.input(n);
        let o = |d: &PortLockStep<RecvWqe<6, 2>>, n: &str| d.output(n);
        let [reset, req_valid, req_ring, req_pd, look_ready, got_valid] = [
            "reset",
            "s_req_valid",
            "s_req_ring",
            "s_req_pd",
            "look_ready",
            "got_valid",
        ]
        .map(|n| i(&d, n));
        let [got_base, got_size, got_prod, got_cons, rd_ready, rd_valid] = [
            "got_base",
            "got_size",
            "got_prod",
            "got_cons",
            "m_dma_rd_req_ready",
            "m_dma_rd_data_valid",
        ]
        .map(|n| i(&d, n));
        let [rd_data, rd_last, rd_err, mr_ready, mr_data, m_ready] = [
            "m_dma_rd_data",
            "m_dma_rd_data_last",
            "m_dma_rd_data_err",
            "mr_look_ready",
            "mr_got_data",
            "m_ready",
        ]
        .map(|n| i(&d, n));
        let [
            s_ready,
            look_valid,
            look_queue,
            rd_req,
            rd_addr,
            rd_len,
            rd_dready,
        ] = [
            "s_req_ready",
            "look_valid",
            "look_queue",
            "m_dma_rd_req_valid",
            "m_dma_rd_req_addr",
            "m_dma_rd_req_len",
            "m_dma_rd_data_ready",
        ]
        .map(|n| o(&d, n));
        let [
            mr_valid,
            mr_row,
            m_valid,
            m_empty,
            m_derr,
            m_wr_id,
            m_index,
            m_ok,
            m_total,
        ] = [
            "mr_look_valid",
            "mr_look_row",
            "m_valid",
            "m_empty",
            "m_dma_err",
            "m_wr_id",
            "m_index",
            "m_ok",
            "m_total",
        ]
        .map(|n| o(&d, n));
        let m_addr = ["m_addr0", "m_addr1", "m_addr2"].map(|n| o(&d, n));
        let m_len = ["m_len0", "m_len1", "m_len2"].map(|n| o(&d, n));

        let (mut answers, mut passed, mut failed, mut empties, mut refused) = (0, 0, 0, 0, 0);
        let mut mr_got = 0usize;
        for _ in 0..250 {
            // A ring, a request in it, the QP's PD.
            let ring = rng.below(4);
            let pd = 1 + rng.below(2);
            let log = rng.below(9);
            let enabled = rng.chance(0.9);
            let cons = rng.below(1 << 16);
            let prod = if rng.chance(0.15) {
                cons
            } else {
                (cons + 1 + rng.below(1 << log)) & 0xFFFF
            };
            let base = rng.next_u64() & !0x3F & 0xFFFF_FFFF_FFFF;
            let slot = base + ((cons & ((1 << log) - 1)) << 6);
            let nsge = pick(&mut rng, &[0u64, 1, 1, 2, 3, 3, 4]);
            let wr_id = rng.next_u64();
            let sges: Vec<(u64, u32, u32)> = (0..3).map(|_| entry(&mut rng, &r)).collect();
            let mut beats = vec![wr_id, nsge | rng.next_u64() << 8];
            for &(a, l, k) in &sges {
                beats.push(a);
                beats.push(u64::from(l) | u64::from(k) << 32);
            }
            let deny = rng.chance(0.05);
            let mut mem: HashMap<u64, Vec<u64>> = HashMap::new();
            mem.insert(slot, beats.clone());

            // Drive it through.
            let mut phase = 0; // 0 offer, 1 running
            let (mut got_at, mut reading, mut sent) = (None::<u64>, None::<Vec<u64>>, 0usize);
            let mut answer = None;
            for cycle in 0..5_000u64 {
                let rst = cycle < 2 && answers == 0;
                d.set(reset, u64::from(rst));
                let offer = phase == 0 && !rst && rng.chance(0.7);
                d.set(req_valid, u64::from(offer));
                d.set(req_ring, ring);
                d.set(req_pd, pd);
                let lr = rng.chance(0.7);
                d.set(look_ready, u64::from(lr));
                d.set(got_valid, u64::from(got_at == Some(cycle)));
                d.set(got_base, base);
                d.set(got_size, log | u64::from(enabled) << 8 | rng.below(8) << 9);
                d.set(got_prod, prod);
                d.set(got_cons, cons);
                let rr = rng.chance(0.6);
                d.set(rd_ready, u64::from(rr));
                let beat = reading
                    .as_ref()
                    .filter(|_| rng.chance(0.7))
                    .map(|b| b[sent]);
                d.set(rd_valid, u64::from(beat.is_some()));
                d.set(rd_data, beat.unwrap_or(0));
                d.set(rd_last, u64::from(beat.is_some() && sent == 7));
                d.set(rd_err, u64::from(beat.is_some() && deny));
                let mrr = rng.chance(0.7);
                d.set(mr_ready, u64::from(mrr));
                d.set_words(mr_data, &r.rows[mr_got]);
                let mready = rng.chance(0.5);
                d.set(m_ready, u64::from(mready));
                d.settle().unwrap_or_else(|m| panic!("{m}"));
                if rst {
                    d.tick();
                    continue;
                }
                if offer && d.get(s_ready) == 1 {
                    phase = 1;
                }
                if d.get(look_valid) == 1 && lr {
                    assert_eq!(d.get(look_queue), ring);
                    got_at = Some(cycle + 1);
                }
                if d.get(rd_req) == 1 && rr {
                    assert!(reading.is_none());
                    assert_eq!((d.get(rd_addr), d.get(rd_len)), (slot, 64));
                    reading = Some(mem[&slot].clone());
                    sent = 0;
                }
                if beat.is_some() && d.get(rd_dready) == 1 {
                    sent += 1;
                    if sent == 8 {
                        reading = None;
                    }
                }
                if d.get(mr_valid) == 1 && mrr {
                    mr_got = d.get(mr_row) as usize;
                }
                if d.get(m_valid) == 1 && mready {
                    let a: Vec<(u64, u64)> = (0..3)
                        .map(|k| (d.get(m_addr[k]), d.get(m_len[k])))
                        .collect();
                    answer = Some((
                        d.get(m_empty),
                        d.get(m_derr),
                        d.get_words(m_wr_id)[0],
                        d.get(m_index),
                        a,
                        d.get(m_ok),
                        d.get(m_total),
                    ));
                    d.tick();
                    break;
                }
                d.tick();
            }
            let (empty, derr, got_wr, index, ents, ok, total) =
                answer.expect("answered within 5000 clocks");
            answers += 1;
            if !enabled || prod == cons {
                assert_eq!(empty, 1, "seed {seed}: a disabled or empty ring");
                empties += 1;
                continue;
            }
            assert_eq!(empty, 0);
            if deny {
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
                let (a, l, key) = sges[k];
                if k >= used {
                    assert_eq!(ents[k], (0, 0), "seed {seed}: entry {k} unused");
                    continue;
                }
                assert_eq!(ents[k].1, u64::from(l), "seed {seed}: entry {k}'s length");
                sum += u64::from(l);
                match r
                    .table
                    .check(key, Pd(pd as u32), a, l.into(), Access::LOCAL_WRITE)
                {
                    Ok(off) => {
                        let idx = (key >> 8) as usize;
                        assert_eq!(
                            ents[k].0,
                            r.bases[idx] + off as u64,
                            "seed {seed}: entry {k}"
                        );
                    }
                    Err(_) => all = false,
                }
            }
            assert_eq!(
                ok == 1,
                all,
                "seed {seed}: entries {sges:?} nsge {nsge} pd {pd}"
            );
            assert_eq!(total, sum, "seed {seed}: total");
            if all {
                passed += 1;
            } else {
                failed += 1;
            }
        }
        eprintln!(
            "seed {seed}: {answers} answers, {passed} passed, {failed} refused entries, {empties} empty, {refused} reads refused"
        );
        assert!(passed > 20 && failed > 50 && empties > 10 && refused > 3);
    }
}
