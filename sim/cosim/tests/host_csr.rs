//! The register drift test and the CSR port, in lock-step (rust-hdl and Verilator on every
//! cycle): every register of the host interface read through AXI4-Lite and compared with the
//! `rnic-regmap` map (reset value, access type, the bits that exist); decode errors and
//! partial writes answered as documented; the receive counters counting what the parser did.

use rnic_cosim::axil::AxilMaster;
use rnic_cosim::ports::{PortDut, PortLockStep};
use rnic_hw::address_vector::AV_BITS;
use rnic_hw::host_nic::HostNic;
use rnic_hw::host_regs::{HOST_BUILD, TABLE_BLOCKS};
use rnic_hw::row_table::{MR_BITS, QP_BITS};
use rnic_regmap::regs::{self, Access, Register};

fn dut(seed: u64) -> PortLockStep<HostNic> {
    let mut d = PortLockStep::new(HostNic::new(), "host_nic", seed).unwrap();
    let reset = d.input("reset");
    d.set(d.input("link_up"), 1);
    d.set(reset, 1);
    for _ in 0..2 {
        d.settle().unwrap();
        d.tick();
    }
    d.set(reset, 0);
    d
}

/// The bits of `r` that exist: its fields, or the whole word.
fn mask(r: &Register) -> u32 {
    if r.fields.is_empty() {
        !0
    } else {
        r.fields.iter().fold(0, |m, f| m | f.mask())
    }
}

fn expected_reset(b: &regs::Block, r: &Register) -> u32 {
    match (b.name, r.name) {
        // LINK_UP (driven high here) and RESET_DONE.
        ("ctrl", "STATUS") => 0b11,
        _ => HOST_BUILD.reset(b, r),
    }
}

#[test]
fn every_register_reads_as_the_map_says_after_reset() {
    let mut d = dut(1);
    let mut bus = AxilMaster::new(&d, 1, 0.3);
    let all = HOST_BUILD.registers();
    assert!(all.len() > 50, "{} registers", all.len());
    for (addr, b, q, r) in &all {
        let (v, resp) = bus.read(&mut d, *addr).unwrap();
        assert_eq!(
            resp, 0,
            "{}.{} {q:?} at {addr:#x}: response",
            b.name, r.name
        );
        let want = if r.access == Access::Wo {
            0
        } else {
            expected_reset(b, r)
        };
        assert_eq!(v, want, "{}.{} {q:?} at {addr:#x}", b.name, r.name);
    }
    // The chain walks from 0 through every block to 0.
    let mut at = 0u32;
    let mut seen = Vec::new();
    loop {
        let (hdr, _) = bus.read(&mut d, at).unwrap();
        seen.push(hdr >> 16);
        let (next, _) = bus.read(&mut d, at + regs::NEXT).unwrap();
        if next == 0 {
            break;
        }
        assert!(next > at, "the chain goes forward");
        at = next;
    }
    let types: Vec<u32> = regs::BLOCKS.iter().map(|b| u32::from(b.type_id)).collect();
    assert_eq!(seen, types);
}

#[test]
fn every_register_has_the_access_type_of_the_map() {
    let mut d = dut(2);
    let mut bus = AxilMaster::new(&d, 2, 0.2);
    // Rings stay disabled (SIZE.ENABLE low) so no engine moves an index meanwhile.
    for (addr, b, q, r) in HOST_BUILD.registers() {
        let what = format!("{}.{} {q:?} at {addr:#x}", b.name, r.name);
        let before = bus.read(&mut d, addr).unwrap().0;
        let enable = r
            .fields
            .iter()
            .find(|f| f.name == "ENABLE")
            .map_or(0, |f| f.mask());
        let pattern = 0xA5C3_5A3C & !enable;
        assert_eq!(
            bus.write(&mut d, addr, pattern).unwrap(),
            0,
            "{what}: write"
        );
        let after = bus.read(&mut d, addr).unwrap().0;
        if TABLE_BLOCKS.contains(&b.name) {
            // A table row's window: words 0-6 are staged (they read the committed row until
            // word 7 commits them all); bits past the row's width do not exist.
            let k = (addr % 32 / 4) as usize;
            if k < 7 {
                assert_eq!(after, before, "{what}: staged until word 7");
                continue;
            }
            let row = addr - 28;
            let width = match b.name {
                "address_vectors" => AV_BITS,
                "memory_regions" => MR_BITS,
                _ => QP_BITS,
            };
            for w in 0..8u32 {
                let lo = 32 * w as usize;
                let bits = width.saturating_sub(lo).min(32);
                let m = if bits == 32 { !0 } else { (1u32 << bits) - 1 };
                let v = bus.read(&mut d, row + 4 * w).unwrap().0;
                assert_eq!(v, pattern & m, "{what}: word {w} committed");
            }
            continue;
        }
        match r.access {
            Access::Ro => assert_eq!(after, before, "{what}: read only"),
            Access::Rw => assert_eq!(after, pattern & mask(r), "{what}: read/write"),
            Access::Wo => assert_eq!(after, 0, "{what}: write only reads 0"),
            Access::W1c => {
                // Nothing pending: ones clear nothing and set nothing.
                assert_eq!(after, 0, "{what}: write 1 to clear");
            }
        }
        if r.access == Access::Rw {
            assert_eq!(bus.write(&mut d, addr, r.reset).unwrap(), 0);
        }
    }
}

#[test]
fn a_doorbell_writes_the_index_the_host_owns() {
    let mut d = dut(3);
    let mut bus = AxilMaster::new(&d, 3, 0.0);
    for ring in 0..regs::RAW_RINGS {
        let db = regs::offset("raw", "DOORBELL", Some(ring)).unwrap();
        let owned = if ring == 2 { "CONS" } else { "PROD" };
        let idx = regs::offset("raw", owned, Some(ring)).unwrap();
        bus.write(&mut d, db, 0x1_2345).unwrap();
        assert_eq!(
            bus.read(&mut d, idx).unwrap().0,
            0x2345,
            "ring {ring} {owned}"
        );
    }
}

#[test]
fn bad_accesses_get_error_responses_and_change_nothing() {
    let mut d = dut(4);
    let mut bus = AxilMaster::new(&d, 4, 0.5);
    let mac = regs::offset("ctrl", "MAC_LO", None).unwrap();
    bus.write(&mut d, mac, 0x1122_3344).unwrap();
    // Partial write: SLVERR, nothing written.
    assert_eq!(bus.write_strb(&mut d, mac, 0xFFFF_FFFF, 0x3).unwrap(), 2);
    assert_eq!(bus.read(&mut d, mac).unwrap(), (0x1122_3344, 0));
    // An address no block decodes: DECERR both ways, reads return 0.
    for hole in [0x30, 0x1F0, 0x000F_FFFC, 0x1008] {
        assert_eq!(bus.write(&mut d, hole, 1).unwrap(), 3, "{hole:#x}");
        assert_eq!(bus.read(&mut d, hole).unwrap(), (0, 3), "{hole:#x}");
    }
    // CTRL.RESET holds the datapath in reset; the registers stay.
    let ctrl = regs::offset("ctrl", "CTRL", None).unwrap();
    bus.write(&mut d, ctrl, 1).unwrap();
    assert_eq!(bus.read(&mut d, mac).unwrap(), (0x1122_3344, 0));
    bus.write(&mut d, ctrl, 0).unwrap();
}

#[test]
fn the_csr_port_alone_answers_as_its_register_file_says() {
    use rnic_hw::axil_slave::AxilSlave;
    for seed in 0..4 {
        let mut d = PortLockStep::new(AxilSlave::default(), "axil_slave", seed).unwrap();
        let mut bus = AxilMaster::new(&d, seed, 0.4);
        let (wr_hit, rd_hit, rd_data) = (
            d.input("reg_wr_hit"),
            d.input("reg_rd_hit"),
            d.input("reg_rd_data"),
        );
        d.set(d.input("reset"), 1);
        d.settle().unwrap();
        d.tick();
        d.set(d.input("reset"), 0);
        for (hit, data) in [(1, 0xDEAD_BEEF), (0, 0x1234_5678), (1, 7)] {
            d.set(wr_hit, hit);
            d.set(rd_hit, hit);
            d.set(rd_data, data);
            let want = if hit == 1 { 0 } else { 3 };
            assert_eq!(bus.write(&mut d, 0x108, 5).unwrap(), want);
            assert_eq!(
                bus.write_strb(&mut d, 0x108, 5, 1).unwrap(),
                if hit == 1 { 2 } else { 3 }
            );
            let got = bus.read(&mut d, 0x10C).unwrap();
            assert_eq!(got, if hit == 1 { (data as u32, 0) } else { (0, 3) });
        }
    }
}
