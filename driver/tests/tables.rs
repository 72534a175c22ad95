//! The NIC's tables over the simulated host interface (rust-hdl and Verilator in lock-step):
//! the driver encodes the verbs API's `AddressVector`s, registered regions and QP attributes,
//! writes them through the register windows, reads them back, and an engine's lookup returns
//! each row with the fields the verbs object says (checked field by field against the object
//! itself, not against the encoding); a row half written is not seen until its last word
//! commits it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use rnic_cosim::axis::Rng;
use rnic_cosim::host::DeviceConfig;
use rnic_driver::tables::{QpContext, Table, encode_av, encode_mr, encode_qp, read_row, write_row};
use rnic_driver::transport::SimTransport;
use rnic_regmap::desc::{ADDR_VECTOR, Format, MR_ENTRY, QP_ATTR};
use rnic_transport::mr::{MrInfo, Pd};
use rnic_transport::nic::rxe_source_port;
use rnic_transport::verbs::AddressVector;
use rnic_transport::verbs::{Access, Mtu, QpAttr, QpState, QpType};
use rnic_wire::MacAddr;

fn random_av(rng: &mut Rng) -> AddressVector {
    let v6 = rng.chance(0.5);
    let (sip, dip) = if v6 {
        (
            IpAddr::V6(Ipv6Addr::from(u128::from(rng.next_u64()) << 64 | 1)),
            IpAddr::V6(Ipv6Addr::from(
                u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64()),
            )),
        )
    } else {
        (
            IpAddr::V4(Ipv4Addr::from(rng.next_u64() as u32)),
            IpAddr::V4(Ipv4Addr::from(rng.next_u64() as u32)),
        )
    };
    let mut av = AddressVector::new(MacAddr::from_u64(rng.next_u64()), sip, dip);
    av.udp_sport = if rng.chance(0.3) {
        0
    } else {
        rng.next_u64() as u16 | 1
    };
    av.traffic_class = rng.next_u64() as u8;
    av.hop_limit = rng.next_u64() as u8;
    av.flow_label = if v6 { rng.below(1 << 20) as u32 } else { 0 };
    av
}

/// A looked-up row: its bits as the register map's row bytes.
struct Looked(Vec<u8>, &'static Format);

impl Looked {
    fn get(&self, name: &str) -> u64 {
        self.1.get(&self.0, name).unwrap()
    }
}

/// An engine's lookup of `row` of the address vector table.
fn look(t: &mut SimTransport, row: u32) -> Looked {
    look_in(t, "av", &ADDR_VECTOR, row)
}

/// An engine's lookup of `row` of table `p` (port prefix): one cycle with the request up,
/// then the answer.
fn look_in(t: &mut SimTransport, p: &str, fmt: &'static Format, row: u32) -> Looked {
    let d = &mut t.dev;
    let (valid, at) = (
        d.dut.input(&format!("{p}_look_valid")),
        d.dut.input(&format!("{p}_look_row")),
    );
    d.dut.set(valid, 1);
    d.dut.set(at, u64::from(row));
    d.run(1).unwrap();
    d.dut.set(valid, 0);
    d.dut.settle().unwrap();
    let got = |d: &rnic_cosim::host::SimDevice, n: &str| d.dut.output(&format!("{p}_got_{n}"));
    assert_eq!(
        d.dut.get(got(d, "valid")),
        1,
        "{p}: lookup of row {row} answered"
    );
    assert_eq!(d.dut.get(got(d, "row")), u64::from(row));
    let words = d.dut.get_words(got(d, "data"));
    let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    bytes.resize(32, 0);
    Looked(bytes, fmt)
}

fn check(got: &Looked, av: &AddressVector, sgid: u8, qpn: u32) {
    let dgid = match av.dip {
        IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
        IpAddr::V6(a) => a.octets(),
    };
    let sport = if av.udp_sport == 0 {
        rxe_source_port(qpn)
    } else {
        av.udp_sport
    };
    let want = [
        ("DMAC", av.dmac.to_u64()),
        ("DGID_HI", u64::from_be_bytes(dgid[..8].try_into().unwrap())),
        ("DGID_LO", u64::from_be_bytes(dgid[8..].try_into().unwrap())),
        ("SGID_INDEX", u64::from(sgid)),
        ("UDP_SPORT", u64::from(sport)),
        ("TRAFFIC_CLASS", u64::from(av.traffic_class)),
        ("HOP_LIMIT", u64::from(av.hop_limit)),
        ("FLOW_LABEL", u64::from(av.flow_label)),
        ("V6", u64::from(av.dip.is_ipv6())),
    ];
    for (name, v) in want {
        assert_eq!(got.get(name), v, "QP {qpn}: {name}");
    }
}

#[test]
fn address_vectors_written_by_the_driver_are_what_the_engines_look_up() {
    let cfg = DeviceConfig {
        lockstep: true,
        seed: 3,
        stall: 0.2,
        ..Default::default()
    };
    let mut t = SimTransport::new(cfg).unwrap();
    let mut rng = Rng::new(9);
    let mut table = Vec::new();
    for qpn in 0..64u32 {
        let av = random_av(&mut rng);
        let sgid = rng.below(16) as u8;
        let row = encode_av(&av, sgid, qpn).unwrap();
        write_row(&mut t, Table::AddressVectors, qpn, &row).unwrap();
        table.push((av, sgid, row));
    }
    for qpn in (0..64u32).rev() {
        let (av, sgid, row) = &table[qpn as usize];
        assert_eq!(
            &read_row(&mut t, Table::AddressVectors, qpn).unwrap(),
            row,
            "QP {qpn}: read back"
        );
        check(&look(&mut t, qpn), av, *sgid, qpn);
    }
    // A row half rewritten keeps its old contents until word 7 commits the new ones.
    let (new_av, new_sgid) = (random_av(&mut rng), 5);
    let new_row = encode_av(&new_av, new_sgid, 7).unwrap();
    for k in 0..7u32 {
        t.dev
            .write32(
                rnic_regmap::regs::offset("address_vectors", &format!("WORD{k}"), Some(7)).unwrap(),
                new_row[k as usize],
            )
            .unwrap();
    }
    let (old_av, old_sgid, _) = &table[7];
    check(&look(&mut t, 7), old_av, *old_sgid, 7);
    write_row(&mut t, Table::AddressVectors, 7, &new_row).unwrap();
    check(&look(&mut t, 7), &new_av, new_sgid, 7);
}

#[test]
fn a_mixed_address_vector_is_refused() {
    let av = AddressVector::new(
        MacAddr::from_u64(1),
        IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(Ipv6Addr::LOCALHOST),
    );
    let e = encode_av(&av, 0, 1).unwrap_err();
    assert!(
        e.to_string()
            .contains("both addresses must be IPv4 or both IPv6"),
        "{e}"
    );
}

#[test]
fn regions_and_qp_attributes_written_by_the_driver_are_what_the_engines_look_up() {
    let cfg = DeviceConfig {
        lockstep: true,
        seed: 4,
        stall: 0.2,
        ..Default::default()
    };
    let mut t = SimTransport::new(cfg).unwrap();
    let mut rng = Rng::new(10);
    let rights = [
        Access::LOCAL_WRITE,
        Access::REMOTE_WRITE,
        Access::REMOTE_READ,
        Access::REMOTE_ATOMIC,
    ];
    let mut mrs = Vec::new();
    let mut qps = Vec::new();
    for i in 0..64u32 {
        let access = rights
            .iter()
            .filter(|_| rng.chance(0.5))
            .fold(Access::NONE, |a, r| a | *r);
        let tag = rng.below(256) as u32;
        let mr = MrInfo {
            lkey: i << 8 | tag,
            rkey: i << 8 | tag,
            va: rng.next_u64(),
            len: rng.below(1 << 40),
            pd: Pd(rng.below(1 << 16) as u32),
            access,
        };
        let base = rng.next_u64() & !0xFFF;
        write_row(
            &mut t,
            Table::MemoryRegions,
            i,
            &encode_mr(&mr, base).unwrap(),
        )
        .unwrap();
        mrs.push((mr, base));
        let a = QpAttr {
            state: [QpState::Init, QpState::Rtr, QpState::Rts, QpState::Err][rng.below(4) as usize],
            access,
            path_mtu: [Mtu::M256, Mtu::M1024, Mtu::M4096][rng.below(3) as usize],
            timeout: rng.below(32) as u8,
            retry_cnt: rng.below(8) as u8,
            rnr_retry: rng.below(8) as u8,
            min_rnr_timer: rng.below(32) as u8,
            max_rd_atomic: rng.below(17) as u8,
            max_dest_rd_atomic: rng.below(17) as u8,
            dest_qpn: rng.below(1 << 24) as u32,
            sq_psn: rng.below(1 << 24) as u32,
            rq_psn: rng.below(1 << 24) as u32,
            qkey: rng.next_u64() as u32,
            ..Default::default()
        };
        let c = QpContext {
            qp_type: if rng.chance(0.5) {
                QpType::Rc
            } else {
                QpType::Ud
            },
            pd: rng.below(1 << 16) as u32,
            pkey: 0xFFFF,
            send_cq: rng.below(64) as u32,
            recv_cq: rng.below(64) as u32,
            sig_all: rng.chance(0.5),
        };
        write_row(&mut t, Table::QpAttributes, i, &encode_qp(&a, &c).unwrap()).unwrap();
        qps.push((a, c));
    }
    for i in (0..64u32).rev() {
        let (mr, base) = &mrs[i as usize];
        let row = encode_mr(mr, *base).unwrap();
        assert_eq!(
            read_row(&mut t, Table::MemoryRegions, i).unwrap(),
            row,
            "MR {i}"
        );
        let got = look_in(&mut t, "mr", &MR_ENTRY, i);
        let want = [
            ("VALID", 1),
            ("KEY_TAG", u64::from(mr.rkey & 0xFF)),
            ("PD", u64::from(mr.pd.0)),
            ("ACCESS", u64::from(mr.access.bits())),
            ("VA", mr.va),
            ("LENGTH", mr.len),
            ("DMA_BASE", *base),
        ];
        for (name, v) in want {
            assert_eq!(got.get(name), v, "MR {i}: {name}");
        }
        let (a, c) = &qps[i as usize];
        let got = look_in(&mut t, "qp", &QP_ATTR, i);
        let want = [
            ("STATE", a.state as u64),
            ("TYPE", u64::from(c.qp_type == QpType::Ud)),
            ("ACCESS", u64::from(a.access.bits())),
            ("PD", u64::from(c.pd)),
            ("PATH_MTU", a.path_mtu as u64),
            ("TIMEOUT", u64::from(a.timeout)),
            ("RETRY_CNT", u64::from(a.retry_cnt)),
            ("RNR_RETRY", u64::from(a.rnr_retry)),
            ("MIN_RNR_TIMER", u64::from(a.min_rnr_timer)),
            ("MAX_RD_ATOMIC", u64::from(a.max_rd_atomic)),
            ("MAX_DEST_RD_ATOMIC", u64::from(a.max_dest_rd_atomic)),
            ("DEST_QPN", u64::from(a.dest_qpn)),
            ("SQ_PSN", u64::from(a.sq_psn)),
            ("RQ_PSN", u64::from(a.rq_psn)),
            ("QKEY", u64::from(a.qkey)),
            ("PKEY", u64::from(c.pkey)),
            ("SEND_CQ", u64::from(c.send_cq)),
            ("RECV_CQ", u64::from(c.recv_cq)),
            ("SIG_ALL", u64::from(c.sig_all)),
        ];
        for (name, v) in want {
            assert_eq!(got.get(name), v, "QP {i}: {name}");
        }
    }
    // A PD too wide for the row is refused, naming the field.
    let mut mr = mrs[0].0;
    mr.pd = Pd(1 << 16);
    let e = encode_mr(&mr, 0).unwrap_err();
    assert!(e.to_string().contains("mr_entry.PD"), "{e}");
}
