//! The address vector table over the simulated host interface (rust-hdl and Verilator in
//! lock-step): the driver encodes the verbs API's `AddressVector`s, writes them through the
//! register window, reads them back, and an engine's lookup returns each row with the fields
//! the vector says (checked field by field against the vector itself, not against the
//! encoding); a row half written is not seen until its last word commits it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use rnic_cosim::axis::Rng;
use rnic_cosim::host::DeviceConfig;
use rnic_driver::tables::{encode_av, read_av, write_av};
use rnic_driver::transport::SimTransport;
use rnic_regmap::desc::ADDR_VECTOR;
use rnic_transport::nic::rxe_source_port;
use rnic_transport::verbs::AddressVector;
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
struct Looked(Vec<u8>);

impl Looked {
    fn get(&self, name: &str) -> u64 {
        ADDR_VECTOR.get(&self.0, name).unwrap()
    }
}

/// An engine's lookup of `row`: one cycle with the request up, then the answer.
fn look(t: &mut SimTransport, row: u32) -> Looked {
    let d = &mut t.dev;
    let (valid, at) = (d.dut.input("av_look_valid"), d.dut.input("av_look_row"));
    d.dut.set(valid, 1);
    d.dut.set(at, u64::from(row));
    d.run(1).unwrap();
    d.dut.set(valid, 0);
    d.dut.settle().unwrap();
    assert_eq!(
        d.dut.get(d.dut.output("av_got_valid")),
        1,
        "lookup of row {row} answered"
    );
    assert_eq!(d.dut.get(d.dut.output("av_got_row")), u64::from(row));
    let words = d.dut.get_words(d.dut.output("av_got_data"));
    let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    bytes.resize(32, 0);
    Looked(bytes)
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
        write_av(&mut t, qpn, &row).unwrap();
        table.push((av, sgid, row));
    }
    for qpn in (0..64u32).rev() {
        let (av, sgid, row) = &table[qpn as usize];
        assert_eq!(&read_av(&mut t, qpn).unwrap(), row, "QP {qpn}: read back");
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
    write_av(&mut t, 7, &new_row).unwrap();
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
