//! The bench the work request readers share (`rnic_hw::recv_wqe`, `rnic_hw::send_wqe`): a
//! random memory region table, registered in the transport model and written as the driver
//! encodes it, entries aimed at its regions' edges and keys, and one request driven through a
//! reader (ring lookup, DMA read of the request's beats, region lookups, the answer) with every
//! handshake stalling at random.

#![allow(dead_code)]

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::PortDut;
use rnic_driver::responder_sim::row_words;
use rnic_driver::tables::encode_mr;
use rnic_transport::mr::{MrInfo, MrSpec, MrTable, Pd};
use rnic_transport::verbs::Access;

/// Rows of the region table (the readers' tops look up 2^6).
pub const MRS: usize = 64;

pub fn pick<T: Copy>(rng: &mut Rng, xs: &[T]) -> T {
    xs[rng.below(xs.len() as u64) as usize]
}

pub struct Regions {
    pub table: MrTable,
    pub infos: Vec<MrInfo>,
    pub rows: Vec<Vec<u64>>,
    pub bases: Vec<u64>,
}

/// Regions at random rows, with and without LOCAL_WRITE, in two PDs.
pub fn regions(rng: &mut Rng) -> Regions {
    let mut table = MrTable::new(MRS);
    let (mut infos, mut rows, mut bases) = (Vec::new(), vec![vec![0; 4]; MRS], vec![0; MRS]);
    for idx in 1..MRS {
        if rng.chance(0.3) {
            continue;
        }
        // A region the NIC may write, or one it may only read (ibv_reg_mr refuses remote
        // writes without LOCAL_WRITE).
        let access = if rng.chance(0.65) {
            Access::LOCAL_WRITE | Access::REMOTE_WRITE
        } else {
            Access::REMOTE_READ
        };
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
    assert!(
        infos
            .iter()
            .any(|m| !m.access.contains(Access::LOCAL_WRITE)),
        "some regions are read-only"
    );
    Regions {
        table,
        infos,
        rows,
        bases,
    }
}

/// An entry (address, length, key) aimed at a region's edges, or with a wrong key.
pub fn entry(rng: &mut Rng, r: &Regions) -> (u64, u32, u32) {
    let m = pick(rng, &r.infos);
    let mut key = m.lkey;
    match rng.below(10) {
        0 => key ^= 1 + rng.below(255) as u32, // wrong tag
        1 => key = (rng.below(300) as u32) << 8 | key & 0xFF, // another or no row
        _ => {}
    }
    let end = m.va.wrapping_add(m.len);
    if rng.chance(0.4) {
        // Inside the region, to its end at most.
        let off = rng.below(m.len + 1);
        let len = rng.below(m.len - off + 1).min(u64::from(u32::MAX)) as u32;
        return (m.va + off, len, key);
    }
    let any = rng.below(70_000) as u32;
    let len: u32 = pick(rng, &[0, 1, 8, 100, 4096, u32::MAX, any]);
    let addr = match rng.below(5) {
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

/// The QP's PD for a request whose first entry has key `key`: mostly that region's (so that
/// the other checks are reached), else either PD.
pub fn qp_pd(rng: &mut Rng, r: &Regions, key: u32) -> u64 {
    let own = r
        .infos
        .iter()
        .find(|m| m.lkey == key)
        .map(|m| u64::from(m.pd.0));
    match own {
        Some(pd) if rng.chance(0.8) => pd,
        _ => 1 + rng.below(2),
    }
}

/// The device address of an entry the model's check passes, `None` where it fails.
pub fn model_check(r: &Regions, e: (u64, u32, u32), pd: u64, need: Access) -> Option<u64> {
    let (a, l, key) = e;
    r.table
        .check(key, Pd(pd as u32), a, l.into(), need)
        .ok()
        .map(|off| r.bases[(key >> 8) as usize] + off as u64)
}

/// One request for a reader: the ring's queue manager entry and what host memory holds.
pub struct Fetch {
    pub ring: u64,
    pub pd: u64,
    pub base: u64,
    /// log2 of the ring's entries (SIZE's low bits) and SIZE.ENABLE.
    pub log: u64,
    pub enabled: bool,
    pub prod: u64,
    pub cons: u64,
    /// Where the reader must read, and the request's beats there.
    pub slot: u64,
    pub beats: Vec<u64>,
    /// The host refuses the read.
    pub deny: bool,
}

/// Drives one request through reader `d` (its `s_req_*` other than ring and PD, and its
/// ring's `got_*` other than base, size and producer, set by the caller) and returns what
/// `read` takes from the answer, on the clock the answer is taken.
pub fn fetch<D: PortDut, T>(
    d: &mut D,
    rng: &mut Rng,
    r: &Regions,
    f: &Fetch,
    first: bool,
    read: impl Fn(&D) -> T,
) -> T {
    let i = |d: &D, n: &str| d.input(n);
    let o = |d: &D, n: &str| d.output(n);
    let [reset, req_valid, look_ready, got_valid, rd_ready, rd_valid] = [
        "reset",
        "s_req_valid",
        "look_ready",
        "got_valid",
        "m_dma_rd_req_ready",
        "m_dma_rd_data_valid",
    ]
    .map(|n| i(d, n));
    let [rd_data, rd_last, rd_err, mr_ready, mr_data, m_ready] = [
        "m_dma_rd_data",
        "m_dma_rd_data_last",
        "m_dma_rd_data_err",
        "mr_look_ready",
        "mr_got_data",
        "m_ready",
    ]
    .map(|n| i(d, n));
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
    .map(|n| o(d, n));
    let [mr_valid, mr_row, m_valid] = ["mr_look_valid", "mr_look_row", "m_valid"].map(|n| o(d, n));
    let sets = [
        ("s_req_ring", f.ring),
        ("s_req_pd", f.pd),
        ("got_base", f.base),
        ("got_prod", f.prod),
    ];
    for (n, v) in sets {
        let p = i(d, n);
        d.set(p, v);
    }
    let got_size = i(d, "got_size");
    let bytes = 8 * f.beats.len() as u64;

    let mut taken = false;
    let (mut got_at, mut reading, mut sent) = (None::<u64>, false, 0usize);
    let mut mr_got = 0usize;
    for cycle in 0..10_000u64 {
        let rst = first && cycle < 2;
        d.set(reset, u64::from(rst));
        let offer = !taken && !rst && rng.chance(0.7);
        d.set(req_valid, u64::from(offer));
        let lr = rng.chance(0.7);
        d.set(look_ready, u64::from(lr));
        d.set(got_valid, u64::from(got_at == Some(cycle)));
        // SIZE's bits above ENABLE are not the reader's business.
        d.set(
            got_size,
            f.log | u64::from(f.enabled) << 8 | rng.below(8) << 9,
        );
        let rr = rng.chance(0.6);
        d.set(rd_ready, u64::from(rr));
        let beat = (reading && rng.chance(0.7)).then(|| f.beats[sent]);
        d.set(rd_valid, u64::from(beat.is_some()));
        d.set(rd_data, beat.unwrap_or(0));
        d.set(
            rd_last,
            u64::from(beat.is_some() && sent + 1 == f.beats.len()),
        );
        d.set(rd_err, u64::from(beat.is_some() && f.deny));
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
            taken = true;
        }
        if d.get(look_valid) == 1 && lr {
            assert_eq!(d.get(look_queue), f.ring);
            got_at = Some(cycle + 1);
        }
        if d.get(rd_req) == 1 && rr {
            assert!(!reading, "one read at a time");
            assert_eq!((d.get(rd_addr), d.get(rd_len)), (f.slot, bytes));
            reading = true;
            sent = 0;
        }
        if beat.is_some() && d.get(rd_dready) == 1 {
            sent += 1;
            if sent == f.beats.len() {
                reading = false;
            }
        }
        if d.get(mr_valid) == 1 && mrr {
            mr_got = d.get(mr_row) as usize;
        }
        if d.get(m_valid) == 1 && mready {
            let v = read(d);
            d.tick();
            return v;
        }
        d.tick();
    }
    panic!("no answer within 10000 clocks");
}
