//! rust-hdl-only checks of the transmit side: the header composer rebuilds every reference
//! frame's header bytes, and the builder (simulated by rust-hdl alone) emits frames that the
//! software model built. Long random runs in lock-step with Verilator are in
//! `sim/cosim/tests/tx_builder.rs`.

use rnic_hw::header_channel::HeaderRecord;
use rnic_hw::header_compose::{compose, plan};
use rnic_hw::header_extract::{CAP_BYTES, bits_from_words, extract};
use rnic_hw::tx_builder::TxBuilder;
use rnic_wire::RocePacket;
use rust_hdl::prelude::*;

fn scapy_frames() -> Vec<Vec<u8>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/golden/scapy_reference.pcap"
    );
    rnic_wire::pcap::read_file(path)
        .expect("reference trace")
        .records
        .into_iter()
        .map(|p| p.data)
        .collect()
}

/// A frame as the builder should emit it: cut to its IP length (no MAC padding).
fn unpadded(f: &[u8]) -> Vec<u8> {
    let p = RocePacket::parse(f).expect("reference frames parse");
    f[..p.eth.header_len() + p.ip_packet().len()].to_vec()
}

/// The header word of a frame, through the extraction block's software side.
fn record_of(f: &[u8]) -> HeaderRecord {
    let p = RocePacket::parse(f).expect("parse");
    let mut cap = [0u8; CAP_BYTES];
    let n = f.len().min(CAP_BYTES);
    cap[..n].copy_from_slice(&f[..n]);
    HeaderRecord {
        values: extract(&cap, p.payload().len() as u64).values,
    }
}

#[test]
fn composer_rebuilds_every_reference_header() {
    let p = plan();
    let frames = scapy_frames();
    assert!(frames.len() > 500);
    for (i, f) in frames.iter().enumerate() {
        let pkt = RocePacket::parse(f).expect("parse");
        let want = unpadded(f);
        let c = compose(&record_of(f).values, &p);
        let hl = want.len() - pkt.payload().len() - pkt.pad().len() - 4;
        assert_eq!(c.hdr_len, hl, "frame {i}: header length");
        assert_eq!(&c.bytes[..hl], &want[..hl], "frame {i}: header bytes");
        assert!(c.bytes[hl..].iter().all(|&b| b == 0), "frame {i}: tail");
        assert_eq!(usize::from(c.pad), pkt.pad().len(), "frame {i}: pad");
        assert_eq!(c.frame_len, want.len() - 4, "frame {i}: frame length");
    }
}

fn step(uut: &mut TxBuilder, clock: bool) {
    uut.clock.next = clock.into();
    assert!(simulate(uut, 1000), "did not settle");
}

/// Drives (header, payload) pairs through the builder, output always ready; returns the frames.
fn run(items: &[(HeaderRecord, Vec<u8>)]) -> (Vec<Vec<u8>>, TxBuilder) {
    let mut uut = TxBuilder::new();
    uut.connect_all();
    let beats: Vec<(u64, u8, bool)> = items
        .iter()
        .flat_map(|(_, pl)| {
            let n = pl.len().div_ceil(8);
            (0..n).map(move |k| {
                let c = &pl[8 * k..(8 * k + 8).min(pl.len())];
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                (
                    u64::from_le_bytes(w),
                    ((1u16 << c.len()) - 1) as u8,
                    k + 1 == n,
                )
            })
        })
        .collect();
    let (mut h, mut b) = (0, 0);
    let mut out = vec![];
    let mut cur = vec![];
    for cycle in 0..(beats.len() * 2 + items.len() * 20 + 100) {
        uut.reset.next = cycle < 2;
        let hv = cycle >= 2 && h < items.len();
        uut.s_hdr_valid.next = hv;
        uut.s_hdr_data.next = if hv {
            bits_from_words(&items[h].0.pack())
        } else {
            Default::default()
        };
        let bv = cycle >= 2 && b < beats.len();
        let (d, k, l) = beats.get(b).copied().unwrap_or((0, 0, false));
        uut.s_axis_tvalid.next = bv;
        uut.s_axis_tdata.next = bits::<64>(d);
        uut.s_axis_tkeep.next = bits::<8>(u64::from(k));
        uut.s_axis_tlast.next = l;
        uut.m_axis_tready.next = true;
        step(&mut uut, false);
        if hv && uut.s_hdr_ready.val() {
            h += 1;
        }
        if bv && uut.s_axis_tready.val() {
            b += 1;
        }
        if uut.m_axis_tvalid.val() {
            let n = uut.m_axis_tkeep.val().to_u64().trailing_ones() as usize;
            cur.extend_from_slice(&uut.m_axis_tdata.val().to_u64().to_le_bytes()[..n]);
            if uut.m_axis_tlast.val() {
                assert!(!uut.m_axis_tuser.val(), "frame {} marked bad", out.len());
                out.push(std::mem::take(&mut cur));
            }
        }
        step(&mut uut, true);
    }
    (out, uut)
}

#[test]
fn verilog_is_generated() {
    let mut uut = TxBuilder::new();
    uut.connect_all();
    check_all(&uut).expect("check_all");
    let v = generate_verilog(&uut);
    assert!(v.contains("module top"));
}

#[test]
fn reference_frames_are_rebuilt_byte_for_byte() {
    let frames: Vec<Vec<u8>> = scapy_frames().into_iter().step_by(23).collect();
    let items: Vec<(HeaderRecord, Vec<u8>)> = frames
        .iter()
        .map(|f| {
            let p = RocePacket::parse(f).expect("parse");
            (record_of(f), p.payload().to_vec())
        })
        .collect();
    let (out, uut) = run(&items);
    assert_eq!(out.len(), frames.len());
    for (i, (got, f)) in out.iter().zip(&frames).enumerate() {
        assert_eq!(got, &unpadded(f), "frame {i}");
    }
    assert_eq!(uut.cnt_frames.val().to_u64(), frames.len() as u64);
    assert_eq!(uut.cnt_len_err.val().to_u64(), 0);
}
