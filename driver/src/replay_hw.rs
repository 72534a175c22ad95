//! The hardware backend of `rnic trace replay --nic hw`: the Verilator responder
//! ([`crate::responder_sim`]) set up from the model NIC the replay built, request by request
//! as the link delivered them, and every response it sends shaped into a frame by the
//! Verilator transmit path (`rnic_hw::transport_tx`: the send descriptor plus the QP's
//! address vector, our GID, MAC and TTL).
//!
//! The setup is the model's, table by table: each QP's attribute row is encoded from the
//! model QP's `QpAttr` (`tables::encode_qp`) and its address vector from the model's
//! (`tables::encode_av`); each region's row from the model's `MrInfo` at a device address of
//! its own, its bytes copied into host memory; each QP's receive ring filled with the model's
//! posted receive requests (`queues::encode_recv`), topped up before every request when the
//! model posted more than the ring holds. What the hardware cannot hold as the capture named it
//! is renumbered, and said so ([`HwReplayNic::notes`]): a QPN beyond the table's rows is given
//! a free row (the QP's number in the hardware), and an R_Key whose index is beyond the
//! region rows a free row with the same tag; requests are rewritten to those numbers (the
//! ICRC recomputed) before they go in, and responses need no rewriting (they carry the
//! requester's QPN and no key). MAX_DEST_RD_ATOMIC is held in 5 bits: above 31 it is 31.
//!
//! Requests enter the responder as the receive path hands them on (the wire model's parse
//! into the transport header, which `transport_rx` equals on every real capture).

use std::collections::{BTreeMap, VecDeque};
use std::net::IpAddr;

use rnic_cosim::ports::VerilatedPorts;
use rnic_cosim::transport::run_tx_path;
use rnic_hw::address_vector::AvRecord;
use rnic_hw::transport_header::TransportHeader;
use rnic_hw::transport_tx::TransportTx;
use rnic_regmap::desc::RECV_WQE;
use rnic_transport::mr::MrInfo;
use rnic_transport::nic::Nic;
use rnic_transport::replay::{ReplayNic, Setup};
use rnic_transport::verbs::{QpState, RecvWr};
use rnic_wire::RocePacket;

use crate::queues::encode_recv;
use crate::responder_sim::{ROWS, ResponderSim, SLOTS, row_words};
use crate::tables::{QpContext, encode_av, encode_mr, encode_qp};

/// The model's check codes, as the responder counts them (`cnt_verdict_sel`).
const VERDICTS: [&str; 16] = [
    "verdict_execute",
    "verdict_nak_seq",
    "verdict_seq_drop",
    "verdict_duplicate",
    "verdict_rnr",
    "verdict_bad_sequence",
    "verdict_qp_access",
    "verdict_no_resources",
    "verdict_bad_length",
    "verdict_bad_key",
    "verdict_wrong_pd",
    "verdict_no_right",
    "verdict_out_of_bounds",
    "verdict_length_mismatch",
    "verdict_unaligned",
    "verdict_residual",
];

/// The responder's own counters.
const COUNTERS: [&str; 6] = [
    "cnt_executed",
    "cnt_dropped",
    "cnt_dma_err",
    "cnt_replayed",
    "cnt_dup_dropped",
    "cnt_recv_refused",
];

/// Log2 of the largest receive ring given to a QP.
const MAX_RING_LOG: u32 = 12;

/// Where host memory starts (device addresses).
const DMA_START: u64 = 0x1_0000_0000;

/// A region as the hardware holds it.
#[derive(Clone, Copy, Debug)]
struct Region {
    base: u64,
    len: usize,
}

/// A QP row's receive ring: the model's requests not yet posted, and how many were.
#[derive(Default)]
struct Ring {
    log: u32,
    pending: VecDeque<Vec<u8>>,
    posted: u16,
}

/// The Verilator responder set up as a model NIC.
pub struct HwReplayNic {
    sim: ResponderSim<VerilatedPorts>,
    tx: VerilatedPorts,
    /// The capture's QPN -> the QP's row.
    rows: BTreeMap<u32, usize>,
    /// The capture's R_Key -> the key the hardware knows it by.
    keys: BTreeMap<u32, u32>,
    regions: BTreeMap<u32, Region>,
    rings: Vec<Ring>,
    avs: Vec<AvRecord>,
    src_mac: u64,
    sgid: u128,
    ttl: u8,
    notes: Vec<String>,
}

/// A free row, `want` when it is in range and free.
fn pick(used: &mut [bool], want: u64) -> Option<usize> {
    let w = usize::try_from(want)
        .ok()
        .filter(|&w| w < used.len() && !used[w]);
    let r = w.or_else(|| (1..used.len()).find(|&r| !used[r]))?;
    used[r] = true;
    Some(r)
}

impl HwReplayNic {
    /// The hardware given the tables of `nic`, as `setup` lists them.
    pub fn from_model(nic: &Nic, setup: &Setup) -> Result<Self, String> {
        let mut sim = ResponderSim::verilated(1, 0.0)?;
        let tx = VerilatedPorts::of::<TransportTx>("transport_tx")?;
        let mut notes = Vec::new();
        let mut cursor = DMA_START;
        let mut alloc = |len: u64| {
            let at = cursor;
            cursor += len.div_ceil(4096) * 4096 + 4096;
            at
        };

        let mut used = vec![false; ROWS];
        let mut keys = BTreeMap::new();
        let mut regions = BTreeMap::new();
        for &key in &setup.keys {
            let info = nic
                .mr_info(key)
                .ok_or(format!("the model has no region with key {key:#x}"))?;
            let row = pick(&mut used, u64::from(key >> 8)).ok_or(format!(
                "more than {ROWS} regions: the hardware's table has {ROWS} rows"
            ))?;
            let hw_key = (row as u32) << 8 | (key & 0xFF);
            if hw_key != key {
                notes.push(format!(
                    "R_Key {key:#x} is {hw_key:#x} in the hardware (region row {row})"
                ));
            }
            let base = alloc(info.len);
            let hw = MrInfo {
                lkey: hw_key,
                rkey: hw_key,
                ..info
            };
            sim.set_mr(row, &encode_mr(&hw, base).map_err(|e| e.to_string())?);
            sim.map(base, info.len as usize);
            let bytes = nic.mr_bytes(key).expect("a region's bytes");
            if !sim.fill(base, bytes) {
                return Err(format!("region {key:#x}: host memory refused its bytes"));
            }
            keys.insert(key, hw_key);
            regions.insert(
                key,
                Region {
                    base,
                    len: info.len as usize,
                },
            );
        }

        let mut used = vec![false; ROWS];
        let mut rows = BTreeMap::new();
        let mut rings: Vec<Ring> = (0..ROWS).map(|_| Ring::default()).collect();
        let mut avs = vec![AvRecord::zero(); ROWS];
        for &qpn in &setup.qpns {
            let qp = nic.qp(qpn).ok_or(format!("the model has no QP {qpn:#x}"))?;
            let row = pick(&mut used, u64::from(qpn)).ok_or(format!(
                "more than {ROWS} QPs: the hardware's table has {ROWS} rows"
            ))?;
            if row as u32 != qpn {
                notes.push(format!("QP {qpn:#08x} is QP {row:#x} in the hardware"));
            }
            let mut attr = qp.attr.clone();
            if usize::from(attr.max_dest_rd_atomic) > SLOTS {
                notes.push(format!(
                    "QP {qpn:#08x}: max_dest_rd_atomic {} is above the hardware's {SLOTS} slots; it keeps the newest {SLOTS} READs and atomics",
                    attr.max_dest_rd_atomic
                ));
            }
            if attr.max_dest_rd_atomic > 31 {
                attr.max_dest_rd_atomic = 31;
            }
            if !matches!(attr.state, QpState::Rtr | QpState::Rts) {
                return Err(format!("QP {qpn:#x} is not ready to receive"));
            }
            let ctx = QpContext {
                qp_type: qp.qp_type,
                pd: qp.pd.0,
                pkey: 0xFFFF,
                send_cq: qp.send_cq as u32,
                recv_cq: qp.recv_cq as u32,
                sig_all: qp.sq_sig_all,
            };
            sim.set_qp(
                row,
                &encode_qp(&attr, &ctx).map_err(|e| format!("QP {qpn:#x}: {e}"))?,
            );
            let av = attr.av.as_ref().ok_or(format!("QP {qpn:#x} has no path"))?;
            let av_row = encode_av(av, 0, qpn).map_err(|e| format!("QP {qpn:#x}: {e}"))?;
            avs[row] = AvRecord::unpack(&row_words(&av_row));
            // The model's posted receives, their keys renumbered as the regions were.
            let mut pending = VecDeque::new();
            for wr in &qp.rq {
                let mut w = RecvWr {
                    wr_id: wr.wr_id,
                    sg_list: wr.sg_list.clone(),
                };
                for s in &mut w.sg_list {
                    s.lkey = keys.get(&s.lkey).copied().unwrap_or(s.lkey);
                }
                pending.push_back(encode_recv(&w).map_err(|e| e.to_string())?);
            }
            let log = pending
                .len()
                .max(1)
                .next_power_of_two()
                .trailing_zeros()
                .clamp(1, MAX_RING_LOG);
            let ring_base = alloc(u64::from(RECV_WQE.size) << log);
            sim.set_rq(row, ring_base, log);
            rings[row] = Ring {
                log,
                pending,
                posted: 0,
            };
            sim.init_qp(row, attr.rq_psn)?;
            rows.insert(qpn, row);
        }
        let ip = nic.cfg.ips.first().ok_or("the model NIC has no address")?;
        let gid = match ip {
            IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
            IpAddr::V6(a) => a.octets(),
        };
        Ok(HwReplayNic {
            sim,
            tx,
            rows,
            keys,
            regions,
            rings,
            avs,
            src_mac: nic.cfg.mac.to_u64(),
            sgid: u128::from_be_bytes(gid),
            ttl: nic.cfg.ttl,
            notes,
        })
    }

    /// What was renumbered to fit the hardware's tables.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The request as the hardware's numbering has it (QPN and R_Key), ICRC recomputed.
    fn renumber(&self, frame: &[u8]) -> Result<Vec<u8>, String> {
        let p = RocePacket::parse(frame).map_err(|e| format!("a request frame: {e}"))?;
        let mut f = p.repr();
        let row = self.rows.get(&f.bth.dest_qp).map(|&r| r as u32);
        let mut changed = false;
        if let Some(r) = row.filter(|&r| r != f.bth.dest_qp) {
            f.bth.dest_qp = r;
            changed = true;
        }
        let key = f.ext.reth.as_mut().map(|r| &mut r.rkey).or(f
            .ext
            .atomic_eth
            .as_mut()
            .map(|a| &mut a.rkey));
        if let Some(k) = key {
            if let Some(&hw) = self.keys.get(k).filter(|&&hw| hw != *k) {
                *k = hw;
                changed = true;
            }
        }
        if !changed {
            return Ok(frame.to_vec());
        }
        f.build()
            .map_err(|e| format!("rebuilding a request: {e:?}"))
    }

    /// Posts the model's receive requests while the rings have room.
    fn top_up(&mut self) -> Result<(), String> {
        for row in 0..ROWS {
            let r = &mut self.rings[row];
            if r.pending.is_empty() {
                continue;
            }
            let cons = self.sim.rq_consumer(row).unwrap_or(0);
            while r.posted.wrapping_sub(cons) < 1 << r.log {
                let Some(e) = r.pending.pop_front() else {
                    break;
                };
                self.sim.post_recv(row, &e)?;
                r.posted = r.posted.wrapping_add(1);
            }
        }
        Ok(())
    }
}

impl ReplayNic for HwReplayNic {
    fn deliver(&mut self, _at: u64, frame: &[u8]) -> Result<Vec<Vec<u8>>, String> {
        let req = self.renumber(frame)?;
        self.top_up()?;
        let (resp, _) = self.sim.run(&[req])?;
        if resp.is_empty() {
            return Ok(Vec::new());
        }
        let descs: Vec<_> = resp
            .into_iter()
            .map(|r| {
                (
                    TransportHeader::unpack(&r.desc),
                    self.avs[r.qp].clone(),
                    self.sgid,
                    r.payload,
                )
            })
            .collect();
        let run = run_tx_path(&mut self.tx, &descs, self.src_mac, self.ttl, 1, 0.0, 0.0)?;
        if let Some(e) = run.errors.first() {
            return Err(format!("the transmit path: {e}"));
        }
        Ok(run.frames.into_iter().map(|f| f.data).collect())
    }

    fn executed(&self) -> u64 {
        self.sim.counter("cnt_executed")
    }

    fn region(&self, key: u32) -> Option<Vec<u8>> {
        let r = self.regions.get(&key)?;
        self.sim.read(r.base, r.len).map(<[u8]>::to_vec)
    }

    fn set_region(&mut self, key: u32, offset: usize, bytes: &[u8]) {
        if let Some(r) = self.regions.get(&key) {
            self.sim.fill(r.base + offset as u64, bytes);
        }
    }

    fn counts(&mut self) -> Result<Vec<(&'static str, u64)>, String> {
        let mut c: Vec<(&'static str, u64)> =
            COUNTERS.iter().map(|&n| (n, self.sim.counter(n))).collect();
        for (v, name) in VERDICTS.iter().enumerate() {
            c.push((name, self.sim.verdict_count(v as u8)?));
        }
        Ok(c)
    }
}
