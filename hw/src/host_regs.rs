//! The host interface's register table: every register of the `rnic-regmap` map, for one
//! build, given a [`Source`] in the register file: the ID block and block headers as
//! constants, control and ring settings as host storage, counters and status as the
//! hardware's status words, the indices the NIC owns as storage the engines load. The slot
//! numbers below are the only place a register meets a wire.

use rnic_regmap::regs::{self, Access, Build};

use crate::csr_file::{Entry, Source};

/// Status words: the receive counters in the map's order, then the rest.
pub const ST_RX_COUNTERS: usize = 0;
pub const ST_TX_FRAMES: usize = 12;
pub const ST_DMA_READ_ERRORS: usize = 13;
pub const ST_DMA_WRITE_ERRORS: usize = 14;
pub const ST_RING_ERRORS: usize = 15;
pub const ST_STATUS: usize = 16;
pub const ST_RAW_RX_DROPS: usize = 17;
pub const ST_RAW_TX_FRAMES: usize = 18;
pub const ST_RAW_RX_FRAMES: usize = 19;
pub const ST_WQE_FETCHED: usize = 20;
pub const ST_CQE_WRITTEN: usize = 21;
pub const ST_CQ_OVERFLOWS: usize = 22;

/// Storage words.
pub const SL_CTRL: usize = 0;
pub const SL_IRQ_ENABLE: usize = 1;
pub const SL_IRQ_STATUS: usize = 2;
pub const SL_MAC_LO: usize = 3;
pub const SL_MAC_HI: usize = 4;
pub const SL_IPV4: usize = 5;
/// Raw ring `r`'s words start at `SL_RING + SL_RING_WORDS * r`: base low, base high, size,
/// producer, consumer.
pub const SL_RING: usize = 6;
pub const SL_RING_WORDS: usize = 5;
pub const RING_BASE_LO: usize = 0;
pub const RING_BASE_HI: usize = 1;
pub const RING_SIZE: usize = 2;
pub const RING_PROD: usize = 3;
pub const RING_CONS: usize = 4;

/// The raw rings: transmit (host produces), receive (host produces buffers), and the
/// receive completion ring (the NIC produces).
pub const RAW_TX: u32 = 0;
pub const RAW_RX: u32 = 1;
pub const RAW_RX_CQ: u32 = 2;

/// Load ports: ring `r`'s NIC-owned index on port `r`; the completion ring's SIZE (ARM).
pub const LOAD_CQ_SIZE: usize = 3;

/// The storage slot of word `w` of raw ring `r`.
pub const fn ring_slot(r: u32, w: usize) -> usize {
    SL_RING + SL_RING_WORDS * r as usize + w
}

/// log2 of the QP rings (send and receive) and completion rings of this build.
pub const LOG_QUEUES: usize = 6;

/// The build of the host interface of this stage: raw rings, and the rings of 64 QPs and 64
/// CQs in block RAM with their fetch engines and completion writer (the transport's engines
/// take the requests and hand in the completions).
pub const HOST_BUILD: Build = Build {
    features: regs::FEATURE_RAW_QUEUES,
    qps: 1 << LOG_QUEUES,
    mrs: 1 << LOG_QUEUES,
    cqs: 1 << LOG_QUEUES,
    clock_khz: 125_000,
    git_hash: 0,
    build_date: 0,
};

/// Whether the NIC (not the host) advances index `name` of raw ring `r`.
pub fn nic_owned(r: u32, name: &str) -> bool {
    match name {
        "PROD" => r == RAW_RX_CQ,
        "CONS" => r != RAW_RX_CQ,
        _ => false,
    }
}

/// Blocks whose per-queue registers live in a queue manager's block RAM, not in the file.
pub const QUEUE_BLOCKS: [&str; 3] = ["send_queues", "receive_queues", "completion_queues"];

/// Blocks whose per-row registers are a table's register window ([`crate::row_table`]).
pub const TABLE_BLOCKS: [&str; 3] = ["address_vectors", "memory_regions", "qp_attributes"];

/// The byte address of queue 0's registers in a queue block, and the bytes per queue.
pub fn queue_area(block: &str) -> (u32, u32) {
    let b = regs::BLOCKS
        .iter()
        .find(|b| b.name == block)
        .expect("a queue block");
    let (rep, _) = b.per_queue.expect("per-queue registers");
    (b.base + rep.first, rep.stride)
}

/// The register table of `build`'s register file (all but the queue blocks' rings).
pub fn table(build: &Build) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    for (addr, b, q, r) in build.registers() {
        if q.is_some() && (QUEUE_BLOCKS.contains(&b.name) || TABLE_BLOCKS.contains(&b.name)) {
            continue;
        }
        let name = regs::qualified_name(b.name, q, r.name);
        let store = |slot: usize| Source::Store {
            slot,
            reset: r.reset,
            mask: r.mask(),
        };
        let source = match (b.name, r.name, q) {
            (_, "BLOCK_HDR" | "BLOCK_NEXT", None) | ("id", _, None) => {
                Source::Const(build.reset(b, r))
            }
            ("ctrl", "CTRL", None) => store(SL_CTRL),
            ("ctrl", "STATUS", None) => Source::Status(ST_STATUS),
            ("ctrl", "IRQ_ENABLE", None) => store(SL_IRQ_ENABLE),
            ("ctrl", "IRQ_STATUS", None) => Source::W1c {
                slot: SL_IRQ_STATUS,
                mask: r.mask(),
            },
            ("ctrl", "MAC_LO", None) => store(SL_MAC_LO),
            ("ctrl", "MAC_HI", None) => store(SL_MAC_HI),
            ("ctrl", "IPV4", None) => store(SL_IPV4),
            ("counters", n, None) => {
                let slot = if let Some(i) = regs::RX_COUNTERS.iter().position(|c| *c == n) {
                    ST_RX_COUNTERS + i
                } else {
                    match n {
                        "TX_FRAMES" => ST_TX_FRAMES,
                        "DMA_READ_ERRORS" => ST_DMA_READ_ERRORS,
                        "DMA_WRITE_ERRORS" => ST_DMA_WRITE_ERRORS,
                        "RING_ERRORS" => ST_RING_ERRORS,
                        "RAW_RX_DROPS" => ST_RAW_RX_DROPS,
                        "RAW_TX_FRAMES" => ST_RAW_TX_FRAMES,
                        "RAW_RX_FRAMES" => ST_RAW_RX_FRAMES,
                        "WQE_FETCHED" => ST_WQE_FETCHED,
                        "CQE_WRITTEN" => ST_CQE_WRITTEN,
                        "CQ_OVERFLOWS" => ST_CQ_OVERFLOWS,
                        _ => return Err(format!("{name}: no hardware counter")),
                    }
                };
                Source::Status(slot)
            }
            ("raw", n, Some(ring)) => {
                let index_mask = r.mask();
                match n {
                    "BASE_LO" => store(ring_slot(ring, RING_BASE_LO)),
                    "BASE_HI" => store(ring_slot(ring, RING_BASE_HI)),
                    // The completion ring's ARM bit is cleared by the NIC when it fires.
                    "SIZE" if ring == RAW_RX_CQ => Source::Shared {
                        slot: ring_slot(ring, RING_SIZE),
                        mask: r.mask(),
                        load: LOAD_CQ_SIZE,
                    },
                    "SIZE" => store(ring_slot(ring, RING_SIZE)),
                    "PROD" | "CONS" => {
                        let w = if n == "PROD" { RING_PROD } else { RING_CONS };
                        if nic_owned(ring, n) {
                            Source::Shared {
                                slot: ring_slot(ring, w),
                                mask: index_mask,
                                load: ring as usize,
                            }
                        } else {
                            Source::Store {
                                slot: ring_slot(ring, w),
                                reset: 0,
                                mask: index_mask,
                            }
                        }
                    }
                    // The doorbell writes the index the host owns.
                    "DOORBELL" => Source::WriteOnly {
                        slot: ring_slot(
                            ring,
                            if ring == RAW_RX_CQ {
                                RING_CONS
                            } else {
                                RING_PROD
                            },
                        ),
                        mask: index_mask,
                    },
                    _ => return Err(format!("{name}: not decoded")),
                }
            }
            _ => return Err(format!("{name}: not decoded by this build")),
        };
        // The map's access type is what the file does.
        let access_ok = match source {
            Source::Const(_) | Source::Status(_) => r.access == Access::Ro,
            Source::Store { .. } | Source::Shared { .. } => r.access == Access::Rw,
            Source::W1c { .. } => r.access == Access::W1c,
            Source::WriteOnly { .. } => r.access == Access::Wo,
        };
        if !access_ok {
            return Err(format!(
                "{name}: {:?} in the map, {source:?} here",
                r.access
            ));
        }
        out.push(Entry { addr, name, source });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csr_file::check;

    #[test]
    fn the_slices_host_nic_uses_are_these_slots() {
        // host_nic.rs reads storage and writes status at these literal bit offsets.
        let bit = |slot: usize| 32 * slot;
        assert_eq!(bit(SL_IRQ_ENABLE), 32);
        assert_eq!(bit(SL_IRQ_STATUS), 64);
        let rings = [
            (RAW_TX, [192, 224, 256, 288, 320]),
            (RAW_RX, [352, 384, 416, 448, 480]),
            (RAW_RX_CQ, [512, 544, 576, 608, 640]),
        ];
        for (r, offs) in rings {
            let words = [RING_BASE_LO, RING_BASE_HI, RING_SIZE, RING_PROD, RING_CONS];
            for (w, off) in words.iter().zip(offs) {
                assert_eq!(bit(ring_slot(r, *w)), off, "ring {r} word {w}");
            }
        }
        assert_eq!(bit(ST_TX_FRAMES), 384);
        assert_eq!(bit(ST_RING_ERRORS), 480);
        assert_eq!(bit(ST_STATUS), 512);
        assert_eq!(bit(ST_RAW_RX_DROPS), 544);
        assert_eq!(bit(ST_RAW_RX_FRAMES), 608);
        assert_eq!(bit(ST_WQE_FETCHED), 640);
        assert_eq!(bit(ST_CQE_WRITTEN), 672);
        assert_eq!(bit(ST_CQ_OVERFLOWS), 704);
        // SIZE: ENABLE bit 8, ARM bit 9.
        let size = regs::RING.iter().find(|r| r.name == "SIZE").unwrap();
        let f = |n: &str| size.fields.iter().find(|f| f.name == n).unwrap().lsb;
        assert_eq!((f("ENABLE"), f("ARM")), (8, 9));
    }

    #[test]
    fn the_host_table_is_complete_and_consistent() {
        let t = table(&HOST_BUILD).unwrap();
        check(&t).unwrap();
        let queues = 3 * (1usize << LOG_QUEUES) * regs::RING.len();
        let rows = TABLE_BLOCKS.len() * (1usize << LOG_QUEUES) * regs::ROW.len();
        assert_eq!(t.len() + queues + rows, HOST_BUILD.registers().len());
        // host_nic decodes the queue areas by address bits 23:11 (64 queues of 32 bytes),
        // the queue by bits 10:5 and the word by bits 4:2.
        assert_eq!(LOG_QUEUES, 6);
        for (b, hi) in QUEUE_BLOCKS
            .iter()
            .zip([0x2000 >> 11, 0x102000 >> 11, 0x202000 >> 11])
        {
            let (base, stride) = queue_area(b);
            assert_eq!((base >> 11, stride), (hi, 32), "{b}");
        }
        assert_eq!(queue_area(TABLE_BLOCKS[0]), (0x30_2000, 32));
        assert_eq!(queue_area(TABLE_BLOCKS[1]), (0x40_2000, 32));
        assert_eq!(queue_area(TABLE_BLOCKS[2]), (0x50_2000, 32));
        let ctrl = regs::offset("ctrl", "CTRL", None).unwrap();
        assert!(t.iter().any(|e| e.addr == ctrl && e.name == "ctrl.CTRL"));
    }
}
