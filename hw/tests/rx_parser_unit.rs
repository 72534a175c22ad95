//! rust-hdl-only checks of the RX parser: its Verilog is generated and elaborates, and a few
//! frames built by the software model come out as the model says (header word, payload).
//! The long random runs are in `sim/cosim/tests/packet_lockstep.rs`.

use rnic_hw::header_channel::HeaderRecord;
use rnic_hw::header_extract::words_of;
use rnic_hw::rx_parser::RxParser;
use rnic_wire::RocePacket;
use rust_hdl::prelude::*;

fn step(uut: &mut RxParser, clock: bool) {
    uut.clock.next = clock.into();
    assert!(simulate(uut, 1000), "did not settle");
}

/// Runs frames through the parser; returns (headers, payload bytes, bypass frames, cycles).
/// Headers, payloads and bypassed frames out, and the parser (for its counters).
type RunOut = (Vec<HeaderRecord>, Vec<Vec<u8>>, Vec<Vec<u8>>, RxParser);

fn run(frames: &[Vec<u8>]) -> RunOut {
    let mut uut = RxParser::new();
    uut.connect_all();
    let beats: Vec<(u64, u8, bool)> = frames
        .iter()
        .flat_map(|f| {
            let n = f.len().div_ceil(8);
            (0..n).map(move |k| {
                let c = &f[8 * k..(8 * k + 8).min(f.len())];
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
    let (mut hdrs, mut pays, mut byps) = (vec![], vec![], vec![]);
    let (mut cur, mut bcur) = (vec![], vec![]);
    let mut next = 0;
    for cycle in 0..(beats.len() * 3 + 200) {
        uut.reset.next = cycle < 2;
        let b = beats.get(next).copied();
        uut.s_axis_tvalid.next = b.is_some() && cycle >= 2;
        let (d, k, l) = b.unwrap_or((0, 0, false));
        uut.s_axis_tdata.next = bits::<64>(d);
        uut.s_axis_tkeep.next = bits::<8>(u64::from(k));
        uut.s_axis_tlast.next = l;
        uut.s_axis_tuser.next = false;
        uut.m_axis_tready.next = true;
        uut.m_bypass_tready.next = true;
        uut.m_hdr_ready.next = true;
        step(&mut uut, false);
        if uut.s_axis_tvalid.val() && uut.s_axis_tready.val() {
            next += 1;
        }
        if std::env::var("RXDBG").is_ok() && (uut.m_hdr_valid.val() || uut.m_axis_tvalid.val()) {
            eprintln!(
                "cycle {cycle} hdr {} pay {} last {}",
                uut.m_hdr_valid.val(),
                uut.m_axis_tvalid.val(),
                uut.m_axis_tlast.val()
            );
        }
        if uut.m_hdr_valid.val() {
            hdrs.push(HeaderRecord::unpack(&words_of(uut.m_hdr_data.val())));
        }
        if uut.m_axis_tvalid.val() {
            let n = uut.m_axis_tkeep.val().to_u64().trailing_ones() as usize;
            cur.extend_from_slice(&uut.m_axis_tdata.val().to_u64().to_le_bytes()[..n]);
            if uut.m_axis_tlast.val() {
                pays.push(std::mem::take(&mut cur));
            }
        }
        if uut.m_bypass_tvalid.val() {
            let n = uut.m_bypass_tkeep.val().to_u64().trailing_ones() as usize;
            bcur.extend_from_slice(&uut.m_bypass_tdata.val().to_u64().to_le_bytes()[..n]);
            if uut.m_bypass_tlast.val() {
                byps.push(std::mem::take(&mut bcur));
            }
        }
        step(&mut uut, true);
    }
    (hdrs, pays, byps, uut)
}

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

#[test]
fn verilog_is_generated() {
    let mut uut = RxParser::new();
    uut.connect_all();
    check_all(&uut).expect("check_all");
    let v = generate_verilog(&uut);
    assert!(v.contains("module top"));
}

#[test]
fn reference_frames_parse_like_the_model() {
    let frames: Vec<Vec<u8>> = scapy_frames().into_iter().take(12).collect();
    let (hdrs, pays, byps, uut) = run(&frames);
    let good: Vec<RocePacket> = frames
        .iter()
        .filter_map(|f| RocePacket::parse(f).ok().filter(|p| p.icrc_ok()))
        .collect();
    eprintln!(
        "frames {} accepted {} bypass {} dropped icrc {} len {}",
        uut.cnt_frames.val().to_u64(),
        uut.cnt_accepted.val().to_u64(),
        uut.cnt_bypass.val().to_u64(),
        uut.cnt_drop_icrc.val().to_u64(),
        uut.cnt_drop_length.val().to_u64()
    );
    assert_eq!(hdrs.len(), good.len());
    assert!(byps.is_empty());
    let with_payload: Vec<&RocePacket> = good.iter().filter(|p| !p.payload().is_empty()).collect();
    let got: Vec<usize> = pays.iter().map(|p| p.len()).collect();
    let want: Vec<usize> = with_payload.iter().map(|p| p.payload().len()).collect();
    assert_eq!(got, want);
    for (p, got) in with_payload.iter().zip(&pays) {
        assert_eq!(p.payload(), &got[..]);
    }
    for (p, h) in good.iter().zip(&hdrs) {
        assert_eq!(h.get("OpCode"), u64::from(p.bth.opcode));
        assert_eq!(h.get("PSN"), u64::from(p.bth.psn));
        assert_eq!(h.get("payload_len"), p.payload().len() as u64);
    }
}
