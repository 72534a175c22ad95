//! The responder's check in hardware (`rnic_hw::resp_check`, rust-hdl and Verilator in
//! lock-step) against the transport model's (`rnic_transport::resp_check::check`) on random
//! requests: random regions registered in the model's MR table and written as the driver
//! encodes them, random QP attributes (the driver's row), responder states and requests aimed
//! at every boundary the checks have (PSN distance around 0 and 2^23, lengths around the path
//! MTU, keys with a wrong tag, index or PD, rights missing, ranges below, past and straddling
//! a region's end, 2^31-byte RETHs, unaligned atomics, WRITE continuations against their
//! residual). Every verdict equals the model's, and where a region is checked and the request
//! passes, the device address equals the region's base plus the VA's offset in it.

use rnic_cosim::axis::Rng;
use rnic_cosim::ports::{PortDut, PortLockStep};
use rnic_cosim::transport::set_ext;
use rnic_driver::responder_sim::row_words;
use rnic_driver::tables::{QpContext, encode_mr, encode_qp};
use rnic_hw::resp_check::RespCheck;
use rnic_hw::transport_header::TransportHeader;
use rnic_regmap::desc::RESP_STATE;
use rnic_transport::mr::{MrInfo, MrSpec, MrTable, Pd};
use rnic_transport::ops;
use rnic_transport::psn;
use rnic_transport::qp::OpenMsg;
use rnic_transport::resp_check::{Check, CheckInput, check};
use rnic_transport::verbs::{Access, Mtu, QpAttr, QpType};
use rnic_wire::ext::{AtomicEth, ExtHeaders, Reth};

/// Memory region rows of the hardware (`RespCheck<6>`) and entries of the model's table.
const MRS: usize = 64;

const REQUESTS: [u8; 17] = [
    ops::RC_SEND_FIRST,
    ops::RC_SEND_MIDDLE,
    ops::RC_SEND_LAST,
    ops::RC_SEND_LAST_IMM,
    ops::RC_SEND_ONLY,
    ops::RC_SEND_ONLY_IMM,
    ops::RC_WRITE_FIRST,
    ops::RC_WRITE_MIDDLE,
    ops::RC_WRITE_LAST,
    ops::RC_WRITE_LAST_IMM,
    ops::RC_WRITE_ONLY,
    ops::RC_WRITE_ONLY_IMM,
    ops::RC_READ_REQUEST,
    ops::RC_COMPARE_SWAP,
    ops::RC_FETCH_ADD,
    ops::RC_SEND_LAST_INV,
    ops::RC_SEND_ONLY_INV,
];

fn pick<T: Copy>(rng: &mut Rng, xs: &[T]) -> T {
    xs[rng.below(xs.len() as u64) as usize]
}

fn random_access(rng: &mut Rng) -> Access {
    let mut a = Access::NONE;
    for f in [
        Access::REMOTE_WRITE,
        Access::REMOTE_READ,
        Access::REMOTE_ATOMIC,
    ] {
        if rng.chance(0.7) {
            a |= f;
        }
    }
    a
}

/// The regions: registered in the model's table under random keys, with their rows.
struct Regions {
    table: MrTable,
    infos: Vec<MrInfo>,
    rows: Vec<Vec<u64>>,
    bases: Vec<u64>,
}

fn regions(rng: &mut Rng) -> Regions {
    let mut table = MrTable::new(MRS);
    let mut infos = Vec::new();
    let mut rows = vec![row_words(&[0; 8]); MRS];
    let mut bases = vec![0; MRS];
    for idx in 1..MRS {
        if rng.chance(0.4) {
            continue;
        }
        let access = random_access(rng) | Access::LOCAL_WRITE;
        let any = rng.next_u64() >> 8;
        let odd = rng.below(8) * u64::from(rng.chance(0.2));
        let va = pick(rng, &[0, 0x1000, 0xFFFF_FFFF_FFFF_0000, any]) & !7 | odd;
        let any = rng.below(20_000);
        let len = pick(rng, &[0, 8, 64, 4096, 65536, any]);
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

/// A key: usually a region's, else one with a wrong tag, an index without a region or past
/// the table.
fn random_key(rng: &mut Rng, r: &Regions) -> u32 {
    let k = if r.infos.is_empty() {
        rng.next_u64() as u32
    } else {
        pick(rng, &r.infos).rkey
    };
    match rng.below(10) {
        0 => k ^ (1 + rng.below(255) as u32),
        1 => (rng.below(MRS as u64) as u32) << 8 | rng.below(256) as u32,
        2 => rng.next_u64() as u32,
        _ => k,
    }
}

/// A VA and length aimed at the region of `key` (inside, below, past or straddling its end).
fn random_range(rng: &mut Rng, r: &Regions, key: u32, mtu: u32) -> (u64, u32) {
    let (va, len) = r
        .infos
        .iter()
        .find(|i| i.rkey == key)
        .map_or((rng.next_u64(), 4096), |i| (i.va, i.len));
    let any = rng.below(70_000) as u32;
    let n = pick(rng, &[0, 1, 8, mtu, mtu + 1, 2 * mtu, len as u32, any]);
    let at = match rng.below(6) {
        0 => va.wrapping_sub(1 + rng.below(8)),
        1 => va.wrapping_add(len).wrapping_sub(u64::from(n) / 2),
        2 => va.wrapping_add(len),
        3 => u64::MAX - rng.below(16),
        _ => va.wrapping_add(rng.below(len.max(1))),
    };
    let n = match rng.below(20) {
        0 => 0x8000_0000 + rng.below(2) as u32,
        1 => u32::MAX,
        _ => n,
    };
    (at, n)
}

struct Case {
    input: CheckInput,
    qp_row: Vec<u64>,
    state_row: Vec<u64>,
    hdr: Vec<u64>,
    mr_index: usize,
}

/// A random case; one in three is aimed at passing (in sequence, rights granted, the PD and
/// range of the region its key names), so that executed requests check the device address.
fn random_case(rng: &mut Rng, r: &Regions) -> Case {
    let good = rng.chance(0.35) && !r.infos.is_empty();
    let region = good.then(|| pick(rng, &r.infos));
    let mtu_e = pick(
        rng,
        &[Mtu::M256, Mtu::M512, Mtu::M1024, Mtu::M2048, Mtu::M4096],
    );
    let mtu = mtu_e.bytes() as u32;
    let mut access = random_access(rng);
    let mut pd = Pd(1 + rng.below(2) as u32);
    let mut max_dest_rd_atomic = pick(rng, &[0, 1, 1, 4, 16]);
    if let Some(g) = region {
        access = Access::REMOTE_WRITE | Access::REMOTE_READ | Access::REMOTE_ATOMIC;
        pd = g.pd;
        max_dest_rd_atomic = 1;
    }
    let attr = QpAttr {
        access,
        path_mtu: mtu_e,
        max_dest_rd_atomic,
        ..QpAttr::default()
    };
    let ctx = QpContext {
        qp_type: QpType::Rc,
        pd: pd.0,
        pkey: 0xFFFF,
        send_cq: 0,
        recv_cq: 0,
        sig_all: false,
    };
    let qp_row = row_words(&encode_qp(&attr, &ctx).unwrap());

    let any = rng.below(1 << 24) as u32;
    let epsn = pick(rng, &[0, psn::PSN_MASK, 1 << 23, any]);
    let open = match if good { 3 } else { rng.below(4) } {
        0 => Some(OpenMsg::Send),
        1 => {
            let any = rng.below(9000) as u32;
            Some(OpenMsg::Write {
                rkey: 0,
                va: 0,
                resid: pick(rng, &[0, 1, mtu - 1, mtu, mtu + 1, 3 * mtu, any]),
            })
        }
        _ => None,
    };
    let sent_nak = rng.chance(0.3);
    let wqe_ready = rng.chance(0.7);
    let mut st = [0u8; 32];
    let resid = match open {
        Some(OpenMsg::Write { resid, .. }) => resid,
        _ => 0,
    };
    let open_code = match open {
        None => 0,
        Some(OpenMsg::Send) => 1,
        Some(OpenMsg::Write { .. }) => 2,
    };
    for (f, v) in [
        ("EPSN", u64::from(epsn)),
        ("MSN", rng.below(1 << 24)),
        ("SENT_NAK", u64::from(sent_nak)),
        ("OPEN", open_code),
        ("WR_ADDR", rng.next_u64()),
        ("WR_RESID", u64::from(resid)),
        ("WR_LEN", rng.below(1 << 32)),
    ] {
        assert!(RESP_STATE.set(&mut st, f, v), "{f}");
    }
    let state_row: Vec<u64> = st
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();

    let opcode = pick(rng, &REQUESTS);
    let delta: i64 = match if good { 9 } else { rng.below(10) } {
        0 => 1 + rng.below(4) as i64,
        1 => -1 - rng.below(4) as i64,
        2 => pick(rng, &[1 << 23, (1 << 23) - 1, -(1 << 23), -(1 << 23) + 1]),
        _ => 0,
    };
    let p = (i64::from(epsn) + delta).rem_euclid(1 << 24) as u32;
    let any = rng.below(4200) as u32;
    let payload_len = pick(rng, &[0, 1, mtu - 1, mtu, mtu + 1, resid, any]) as usize;
    let mut ext = ExtHeaders::default();
    let mut key = random_key(rng, r);
    let (mut va, mut n) = random_range(rng, r, key, mtu);
    if let Some(g) = region {
        key = g.rkey;
        let off = rng.below(g.len + 1);
        va = g.va + off;
        n = rng.below(g.len - off + 1) as u32;
    }
    let has_reth = matches!(
        opcode,
        ops::RC_WRITE_FIRST | ops::RC_WRITE_ONLY | ops::RC_WRITE_ONLY_IMM | ops::RC_READ_REQUEST
    );
    if has_reth {
        let dma_len = match rng.below(4) {
            0 => payload_len as u32,
            _ => n,
        };
        ext.reth = Some(Reth {
            va,
            rkey: key,
            dma_len,
        });
    }
    if matches!(opcode, ops::RC_COMPARE_SWAP | ops::RC_FETCH_ADD) {
        let va = if rng.chance(0.8) { va & !7 } else { va };
        ext.atomic_eth = Some(AtomicEth {
            va,
            rkey: key,
            swap_add: rng.next_u64(),
            compare: rng.next_u64(),
        });
    }
    if matches!(
        opcode,
        ops::RC_SEND_LAST_IMM
            | ops::RC_SEND_ONLY_IMM
            | ops::RC_WRITE_LAST_IMM
            | ops::RC_WRITE_ONLY_IMM
    ) {
        ext.immdt = Some(rng.next_u64() as u32);
    }
    if matches!(opcode, ops::RC_SEND_LAST_INV | ops::RC_SEND_ONLY_INV) {
        ext.ieth = Some(rng.next_u64() as u32);
    }
    let mut th = TransportHeader::zero();
    th.set("OpCode", u64::from(opcode));
    th.set("PSN", u64::from(p));
    th.set("payload_len", payload_len as u64);
    th.set("DestQP", rng.below(1 << 24));
    th.set("AckReq", rng.below(2));
    set_ext(&mut th, &ext);
    let mr_index = (key >> 8) as usize % MRS;
    Case {
        input: CheckInput {
            opcode,
            psn: p,
            payload_len,
            reth: ext.reth,
            atomic: ext.atomic_eth,
            epsn,
            sent_nak,
            open,
            wqe_ready,
            access,
            max_dest_rd_atomic,
            mtu,
            pd,
        },
        qp_row,
        state_row,
        hdr: th.pack().to_vec(),
        mr_index,
    }
}

#[test]
fn the_hardware_check_equals_the_model() {
    let mut seen = [0usize; 16];
    let mut addrs = 0;
    let mut mr_oks = [0usize; 2];
    for seed in 1..=4u64 {
        let mut rng = Rng::new(seed);
        let mut d = PortLockStep::new(RespCheck::<6>::default(), "resp_check", seed).unwrap();
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
        let [s_ready, m_valid, m_verdict, m_addr, m_mr_ok] =
            ["s_ready", "m_valid", "m_verdict", "m_addr", "m_mr_ok"].map(|n| d.output(n));
        d.set(reset, 1);
        d.settle().unwrap();
        d.tick();
        d.set(reset, 0);
        let mut r = regions(&mut rng);
        for n in 0..6000 {
            if n % 500 == 499 {
                r = regions(&mut rng);
            }
            let c = random_case(&mut rng, &r);
            let want = check(&c.input, &r.table);
            d.set_words(s_hdr, &c.hdr);
            d.set_words(s_qp, &c.qp_row);
            d.set_words(s_mr, &r.rows[c.mr_index]);
            d.set_words(s_state, &c.state_row);
            d.set(s_wqe, u64::from(c.input.wqe_ready));
            d.set(s_valid, 1);
            d.settle().unwrap_or_else(|m| panic!("{m}"));
            assert_eq!(d.get(s_ready), 1, "case {n}: idle");
            d.tick();
            d.set(s_valid, 0);
            let mut waited = 0;
            loop {
                d.settle().unwrap_or_else(|m| panic!("{m}"));
                if d.get(m_valid) == 1 {
                    break;
                }
                waited += 1;
                assert!(waited < 10, "case {n}: no verdict");
                d.tick();
            }
            let got = Check::from_code(d.get(m_verdict) as u8).unwrap();
            assert_eq!(
                got,
                want,
                "seed {seed} case {n}: {:?} key {:#x} row {:?}",
                c.input,
                c.input
                    .reth
                    .map(|x| x.rkey)
                    .or(c.input.atomic.map(|x| x.rkey))
                    .unwrap_or(0),
                r.infos
                    .iter()
                    .find(|i| (i.rkey >> 8) as usize == c.mr_index)
            );
            seen[want.code() as usize] += 1;
            let range = c
                .input
                .reth
                .filter(|x| x.dma_len > 0)
                .map(|x| (x.rkey, x.va))
                .or(c.input.atomic.map(|a| (a.rkey, a.va)));
            // A READ's range against its region whatever the verdict (a duplicate READ is
            // answered again only where the region allows it now).
            if let (ops::RC_READ_REQUEST, Some(x)) = (c.input.opcode, c.input.reth) {
                let ok = r
                    .table
                    .check(
                        x.rkey,
                        c.input.pd,
                        x.va,
                        x.dma_len.into(),
                        Access::REMOTE_READ,
                    )
                    .is_ok();
                assert_eq!(
                    d.get(m_mr_ok) == 1,
                    ok,
                    "case {n}: the READ's range allowed"
                );
                mr_oks[usize::from(ok)] += 1;
            }
            if let (Check::Execute, Some((key, va))) = (want, range) {
                let info = r.table.info(key).expect("checked");
                let want_addr = r.bases[c.mr_index].wrapping_add(va - info.va);
                assert_eq!(
                    d.get_words(m_addr)[0],
                    want_addr,
                    "case {n}: device address"
                );
                addrs += 1;
            }
            d.set(m_ready, 1);
            d.settle().unwrap();
            d.tick();
            d.set(m_ready, 0);
        }
    }
    for c in Check::ALL {
        assert!(
            seen[c.code() as usize] >= 10,
            "{c:?} decided only {} times: {seen:?}",
            seen[c.code() as usize]
        );
    }
    assert!(addrs >= 200, "{addrs} device addresses checked");
    assert!(
        mr_oks[0] >= 100 && mr_oks[1] >= 100,
        "READ ranges refused and allowed: {mr_oks:?}"
    );
}
