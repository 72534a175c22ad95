//! The register map and the descriptor formats are consistent (blocks chained and disjoint,
//! registers aligned and unique, fields inside their words and disjoint, reset values inside
//! their fields), the generated C header compiles and agrees with the map when a C program
//! reads it, the JSON carries every register at its offset, and the shipped REGISTERS.md is
//! what the generator prints.

use std::collections::BTreeSet;
use std::process::Command;

use rnic_regmap::desc::{self, FORMATS, SGE};
use rnic_regmap::regs::{self, BLOCKS, Field, Register, repeat_count};
use rnic_regmap::render;

fn check_fields(what: &str, r: &Register) {
    let mut used = 0u32;
    for f in r.fields {
        assert!(
            f.width >= 1 && u32::from(f.lsb) + u32::from(f.width) <= 32,
            "{what}.{}",
            f.name
        );
        assert_eq!(
            used & f.mask(),
            0,
            "{what}.{} overlaps another field",
            f.name
        );
        used |= f.mask();
    }
    if !r.fields.is_empty() {
        assert_eq!(
            r.reset & !used,
            0,
            "{what}: reset {:#x} outside its fields",
            r.reset
        );
    }
    let names: BTreeSet<_> = r.fields.iter().map(|f: &Field| f.name).collect();
    assert_eq!(names.len(), r.fields.len(), "{what}: field names repeat");
}

#[test]
fn blocks_chain_from_0_and_do_not_overlap() {
    assert_eq!(BLOCKS[0].name, "id");
    assert_eq!(BLOCKS[0].base, 0);
    for (i, b) in BLOCKS.iter().enumerate() {
        let hdr = b.registers.iter().find(|r| r.name == "BLOCK_HDR").unwrap();
        let next = b.registers.iter().find(|r| r.name == "BLOCK_NEXT").unwrap();
        assert_eq!(
            (hdr.offset, next.offset),
            (regs::HDR, regs::NEXT),
            "{}",
            b.name
        );
        assert_eq!(hdr.reset, u32::from(b.type_id) << 16 | u32::from(b.version));
        let want = BLOCKS.get(i + 1).map_or(0, |n| n.base);
        assert_eq!(next.reset, want, "{}: BLOCK_NEXT", b.name);
        if let Some(n) = BLOCKS.get(i + 1) {
            assert!(b.base + b.span <= n.base, "{} overlaps {}", b.name, n.name);
        }
        let mut offs = BTreeSet::new();
        let mut names = BTreeSet::new();
        for r in b.registers {
            assert_eq!(r.offset % 4, 0, "{}.{} unaligned", b.name, r.name);
            assert!(r.offset < b.span, "{}.{} outside the block", b.name, r.name);
            assert!(
                offs.insert(r.offset),
                "{}.{} shares an offset",
                b.name,
                r.name
            );
            assert!(names.insert(r.name), "{}.{} repeats", b.name, r.name);
            check_fields(&format!("{}.{}", b.name, r.name), r);
        }
        if let Some((rep, ring)) = b.per_queue {
            let last = b.registers.iter().map(|r| r.offset).max().unwrap();
            assert!(
                rep.first > last,
                "{}: queues overlap the block's registers",
                b.name
            );
            assert!(
                rep.first + rep.stride * repeat_count(&rep) <= b.span,
                "{}: {} queues do not fit",
                b.name,
                repeat_count(&rep)
            );
            for r in ring {
                assert!(
                    r.offset + 4 <= rep.stride,
                    "{}.{} beyond the stride",
                    b.name,
                    r.name
                );
                check_fields(&format!("{}[i].{}", b.name, r.name), r);
            }
        }
    }
    // Offsets by name, including per queue.
    assert_eq!(regs::offset("id", "MAGIC", None), Some(0x08));
    assert_eq!(regs::offset("ctrl", "IRQ_STATUS", None), Some(0x114));
    assert_eq!(
        regs::offset("send_queues", "DOORBELL", Some(3)),
        Some(0x1000 + 0x1000 + 3 * 0x20 + 0x14)
    );
    assert_eq!(regs::offset("completion_queues", "PROD", Some(1024)), None);
    // The counters block holds every receive counter, in order, contiguous.
    let c = BLOCKS.iter().find(|b| b.name == "counters").unwrap();
    let names: Vec<_> = c.registers[2..2 + regs::RX_COUNTERS.len()]
        .iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(names, regs::RX_COUNTERS);
}

#[test]
fn formats_are_disjoint_and_round_trip() {
    for fmt in FORMATS {
        let mut bits = vec![false; usize::from(fmt.size) * 8];
        let mut mark = |from: usize, n: usize, what: &str| {
            for b in &mut bits[from..from + n] {
                assert!(!*b, "{}: {what} overlaps", fmt.name);
                *b = true;
            }
        };
        for d in fmt.fields {
            assert!(
                usize::from(d.byte) * 8 + usize::from(d.bit) + usize::from(d.bits)
                    <= usize::from(fmt.size) * 8,
                "{}.{} beyond the entry",
                fmt.name,
                d.name
            );
            mark(
                usize::from(d.byte) * 8 + usize::from(d.bit),
                usize::from(d.bits),
                d.name,
            );
        }
        if let Some((first, n)) = fmt.sge {
            mark(
                usize::from(first) * 8,
                usize::from(n) * usize::from(SGE.size) * 8,
                "SGEs",
            );
        }
        // Every field keeps its value and leaves the others alone.
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut buf = vec![0u8; usize::from(fmt.size)];
        let mut want = Vec::new();
        for d in fmt.fields {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = if d.bits == 64 {
                seed
            } else {
                seed & ((1 << d.bits) - 1)
            };
            assert!(fmt.set(&mut buf, d.name, v));
            want.push((d.name, v));
        }
        for (n, v) in want {
            assert_eq!(fmt.get(&buf, n), Some(v), "{}.{n}", fmt.name);
        }
        if let Some(d) = fmt.fields.iter().find(|d| d.bits < 64) {
            assert!(
                !fmt.set(&mut buf, d.name, 1 << d.bits),
                "too wide a value is refused"
            );
        }
    }
    // The phase bit is the top bit of the completion's last byte.
    let mut e = [0u8; 32];
    desc::CQE.set(&mut e, "PHASE", 1);
    assert_eq!(e[31], 0x80);
}

#[test]
fn the_c_header_compiles_and_agrees_with_the_map() {
    let dir = std::env::temp_dir().join(format!("rnic-regmap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("rnic_regs.h"), render::c_header()).unwrap();
    let prog = r#"#include <stdio.h>
#include "rnic_regs.h"
int main(void) {
    printf("%u %u %u %u %u %u %u %u %u %u %u\n",
        RNIC_ID_MAGIC_RESET, RNIC_CTRL_IRQ_STATUS, RNIC_SEND_QUEUES_Q(3) + RNIC_RING_DOORBELL,
        RNIC_COUNTERS_RX_DROP_ICRC, RNIC_RING_SIZE_CQ_SHIFT, RNIC_RING_SIZE_ARM_MASK,
        RNIC_CQE_SIZE, RNIC_CQE_PHASE_BYTE, RNIC_CQE_PHASE_BIT, RNIC_SEND_WQE_SGE_FIRST,
        RNIC_COMPLETION_QUEUES_COUNT_DEFAULT);
    return 0;
}
"#;
    std::fs::write(dir.join("t.c"), prog).unwrap();
    let out = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Werror", "-o"])
        .arg(dir.join("t"))
        .arg(dir.join("t.c"))
        .output()
        .expect("a C compiler (cc): apt-get install -y build-essential");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(dir.join("t")).output().unwrap();
    let got: Vec<u64> = String::from_utf8_lossy(&run.stdout)
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    let ring = BLOCKS
        .iter()
        .find(|b| b.name == "raw")
        .unwrap()
        .per_queue
        .unwrap()
        .1;
    let size = ring.iter().find(|r| r.name == "SIZE").unwrap();
    let field = |n: &str| size.fields.iter().find(|f| f.name == n).unwrap();
    let want = vec![
        u64::from(regs::MAGIC),
        u64::from(regs::offset("ctrl", "IRQ_STATUS", None).unwrap()),
        u64::from(regs::offset("send_queues", "DOORBELL", Some(3)).unwrap()),
        u64::from(regs::offset("counters", "RX_DROP_ICRC", None).unwrap()),
        u64::from(field("CQ").lsb),
        u64::from(field("ARM").mask()),
        32,
        31,
        7,
        0x40,
        u64::from(regs::DEFAULT_CQS),
    ];
    assert_eq!(got, want);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_json_and_the_markdown_carry_every_register() {
    let j = render::json();
    let md = render::markdown();
    for b in BLOCKS {
        let jb = j["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == b.name)
            .unwrap();
        for r in b.registers {
            let jr = jb["registers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["name"] == r.name)
                .unwrap();
            assert_eq!(
                jr["offset"].as_u64().unwrap(),
                u64::from(regs::offset(b.name, r.name, None).unwrap())
            );
            assert!(md.contains(&format!("| {} |", r.name)), "{}", r.name);
        }
    }
    assert_eq!(j["formats"].as_array().unwrap().len(), FORMATS.len());
}

#[test]
fn the_shipped_reference_is_up_to_date() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/REGISTERS.md");
    let shipped = std::fs::read_to_string(path).expect("hw/regmap/REGISTERS.md");
    assert!(
        shipped == render::markdown(),
        "hw/regmap/REGISTERS.md is stale: regenerate it with `rnic regs doc --format md --out hw/regmap/REGISTERS.md`"
    );
}
