//! The transport's receive path (`rnic_hw::transport_rx` and its parts) driven by name: frames
//! in, three engines out that take headers and payloads at their own pace. What a transport
//! header must hold is worked out here from the wire model's parse of the frame
//! ([`expect_header`]), independently of the hardware's field tables.

use std::net::IpAddr;

use rnic_hw::address_vector::AvRecord;
use rnic_hw::transport_header::{TransportHeader, class_of};
use rnic_wire::ext::ExtHeaders;
use rnic_wire::{IpParsed, IpRepr, RoceFrame, RocePacket};

use crate::axis::{OutFrame, Rng, Sink, Source};
use crate::dut::{AxisIn, AxisOut};
use crate::hdl_ports;
use crate::ports::PortDut;

hdl_ports!(rnic_hw::header_fifo::HeaderFifo<{ rnic_hw::transport_header::TH_BITS }, 4> {
    inputs: [reset, s_data, s_valid, m_ready],
    outputs: [s_ready, m_data, m_valid, fill],
});

hdl_ports!(rnic_hw::header_register::HeaderRegister<{ rnic_hw::transport_header::TH_BITS }> {
    inputs: [reset, s_data, s_valid, m_ready],
    outputs: [s_ready, m_data, m_valid],
});

hdl_ports!(rnic_hw::opcode_demux::OpcodeDemux {
    inputs: [
        reset,
        s_hdr_data,
        s_hdr_valid,
        s_axis_tdata,
        s_axis_tkeep,
        s_axis_tlast,
        s_axis_tvalid,
        m_req_hdr_ready,
        m_req_axis_tready,
        m_resp_hdr_ready,
        m_resp_axis_tready,
        m_cnp_hdr_ready,
    ],
    outputs: [
        s_hdr_ready,
        s_axis_tready,
        m_req_hdr_data,
        m_req_hdr_valid,
        m_req_axis_tdata,
        m_req_axis_tkeep,
        m_req_axis_tlast,
        m_req_axis_tvalid,
        m_resp_hdr_data,
        m_resp_hdr_valid,
        m_resp_axis_tdata,
        m_resp_axis_tkeep,
        m_resp_axis_tlast,
        m_resp_axis_tvalid,
        m_cnp_hdr_data,
        m_cnp_hdr_valid,
        cnt_drop_class,
    ],
});

hdl_ports!(rnic_hw::transport_tx::TransportTx {
    inputs: [
        reset,
        s_desc_data,
        s_desc_av,
        s_desc_sgid,
        s_desc_valid,
        src_mac,
        ttl,
        s_axis_tdata,
        s_axis_tkeep,
        s_axis_tlast,
        s_axis_tvalid,
        s_axis_tuser,
        m_axis_tready,
    ],
    outputs: [
        s_desc_ready,
        s_axis_tready,
        m_axis_tdata,
        m_axis_tkeep,
        m_axis_tlast,
        m_axis_tvalid,
        m_axis_tuser,
        cnt_frames,
        cnt_len_err,
    ],
});

hdl_ports!(rnic_hw::transport_rx::TransportRx {
    inputs: [
        reset,
        s_axis_tdata,
        s_axis_tkeep,
        s_axis_tlast,
        s_axis_tvalid,
        s_axis_tuser,
        m_req_hdr_ready,
        m_req_axis_tready,
        m_resp_hdr_ready,
        m_resp_axis_tready,
        m_cnp_hdr_ready,
        m_bypass_tready,
    ],
    outputs: [
        s_axis_tready,
        m_req_hdr_data,
        m_req_hdr_valid,
        m_req_axis_tdata,
        m_req_axis_tkeep,
        m_req_axis_tlast,
        m_req_axis_tvalid,
        m_resp_hdr_data,
        m_resp_hdr_valid,
        m_resp_axis_tdata,
        m_resp_axis_tkeep,
        m_resp_axis_tlast,
        m_resp_axis_tvalid,
        m_cnp_hdr_data,
        m_cnp_hdr_valid,
        m_bypass_tdata,
        m_bypass_tkeep,
        m_bypass_tlast,
        m_bypass_tvalid,
        m_bypass_tuser,
        cnt_frames,
        cnt_accepted,
        cnt_bypass,
        cnt_drop_oversize,
        cnt_drop_truncated,
        cnt_drop_fragment,
        cnt_drop_checksum,
        cnt_drop_length,
        cnt_drop_tver,
        cnt_drop_opcode,
        cnt_drop_padcnt,
        cnt_drop_icrc,
        cnt_drop_class,
        hdr_fill,
    ],
});

/// The transport header of an accepted RoCEv2 frame, from the wire model's parse: the BTH
/// fields, the source address as a GID, and the extension headers in their union slots
/// (`rnic_hw::transport_header`'s table, restated from its documentation).
pub fn expect_header(p: &RocePacket<'_>) -> TransportHeader {
    let mut t = TransportHeader::zero();
    t.set("class", class_of(p.bth.opcode) as u64);
    t.set("payload_len", p.payload.len() as u64);
    let (v6, ecn, src) = match &p.ip {
        IpParsed::V4(v) => (false, v.repr.ecn, IpAddr::V4(v.repr.src)),
        IpParsed::V6(v) => (true, v.repr.ecn, IpAddr::V6(v.repr.src)),
    };
    let gid = match src {
        IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
        IpAddr::V6(a) => a.octets(),
    };
    t.set("v6", u64::from(v6));
    t.set("ECN", u64::from(ecn));
    t.set(
        "src_gid_hi",
        u64::from_be_bytes(gid[..8].try_into().unwrap()),
    );
    t.set(
        "src_gid_lo",
        u64::from_be_bytes(gid[8..].try_into().unwrap()),
    );
    t.set("OpCode", u64::from(p.bth.opcode));
    t.set("SE", u64::from(p.bth.solicited));
    t.set("P_Key", u64::from(p.bth.pkey));
    t.set("DestQP", u64::from(p.bth.dest_qp));
    t.set("AckReq", u64::from(p.bth.ack_req));
    t.set("PSN", u64::from(p.bth.psn));
    set_ext(&mut t, &p.ext);
    t
}

/// The extension headers in their union slots.
pub fn set_ext(t: &mut TransportHeader, x: &ExtHeaders) {
    let imm = x.immdt.or(x.ieth).map_or(0, u64::from);
    if let Some(r) = x.reth {
        t.set("ext_va", r.va);
        t.set("ext_key", u64::from(r.rkey));
        t.set("ext_mid", u64::from(r.dma_len) | imm << 32);
    } else if let Some(a) = x.atomic_eth {
        t.set("ext_va", a.va);
        t.set("ext_key", u64::from(a.rkey));
        t.set("ext_mid", a.swap_add);
        t.set("ext_cmp", a.compare);
    } else if let Some(d) = x.deth {
        t.set("ext_key", u64::from(d.qkey));
        t.set("ext_mid", u64::from(d.src_qp) | imm << 32);
    } else {
        t.set("ext_mid", imm << 32);
    }
    if let Some(a) = x.aeth {
        t.set("ext_key", u64::from(a.syndrome) << 24 | u64::from(a.msn));
    }
    if let Some(a) = x.atomic_ack_eth {
        t.set("ext_va", a.orig);
    }
}

/// A frame as the transport model sends it, as its send descriptor, address vector and our GID:
/// what an engine hands the transmit path.
pub fn descriptor_of(f: &RoceFrame) -> (TransportHeader, AvRecord, u128) {
    let mut t = TransportHeader::zero();
    t.set("payload_len", f.payload.len() as u64);
    t.set("OpCode", u64::from(f.bth.opcode));
    t.set("SE", u64::from(f.bth.solicited));
    t.set("P_Key", u64::from(f.bth.pkey));
    t.set("DestQP", u64::from(f.bth.dest_qp));
    t.set("AckReq", u64::from(f.bth.ack_req));
    t.set("PSN", u64::from(f.bth.psn));
    set_ext(&mut t, &f.ext);
    let mut av = AvRecord::zero();
    av.set("DMAC", f.eth.dst.to_u64());
    av.set("UDP_SPORT", u64::from(f.udp.src_port));
    let (sgid, dgid) = match &f.ip {
        IpRepr::V4(v) => {
            av.set("TRAFFIC_CLASS", u64::from(v.dscp << 2 | v.ecn));
            (v.src.to_ipv6_mapped(), v.dst.to_ipv6_mapped())
        }
        IpRepr::V6(v) => {
            av.set("V6", 1);
            av.set("TRAFFIC_CLASS", u64::from(v.dscp << 2 | v.ecn));
            av.set("HOP_LIMIT", u64::from(v.hop_limit));
            av.set("FLOW_LABEL", u64::from(v.flow_label));
            (v.src, v.dst)
        }
    };
    av.set_dgid(dgid.octets());
    (t, av, u128::from_be_bytes(sgid.octets()))
}

/// The frame a send descriptor and payload make, the inverse of [`descriptor_of`]: the BTH
/// fields and the extension headers the opcode carries, from their union slots; Ethernet, IP
/// and UDP (what the address vector decides) from `template`, a frame of the same flow.
pub fn frame_of(
    t: &TransportHeader,
    payload: &[u8],
    template: &RoceFrame,
) -> Result<RoceFrame, String> {
    use rnic_wire::ext::{AtomicEth, Reth};
    use rnic_wire::opcode::{Ext, lookup};
    let op = t.get("OpCode") as u8;
    let info = lookup(op).ok_or(format!("opcode {op:#x} is not one of RoCE's"))?;
    let mut f = template.clone();
    f.bth.opcode = op;
    f.bth.solicited = t.get("SE") == 1;
    f.bth.pkey = t.get("P_Key") as u16;
    f.bth.dest_qp = t.get("DestQP") as u32;
    f.bth.ack_req = t.get("AckReq") == 1;
    f.bth.psn = t.get("PSN") as u32;
    let (va, key, mid) = (t.get("ext_va"), t.get("ext_key") as u32, t.get("ext_mid"));
    let mut x = ExtHeaders::default();
    if info.has(Ext::Reth) {
        x.reth = Some(Reth {
            va,
            rkey: key,
            dma_len: mid as u32,
        });
    }
    if info.has(Ext::AtomicEth) {
        x.atomic_eth = Some(AtomicEth {
            va,
            rkey: key,
            swap_add: mid,
            compare: t.get("ext_cmp"),
        });
    }
    if info.has(Ext::ImmDt) {
        x.immdt = Some((mid >> 32) as u32);
    }
    if info.has(Ext::Ieth) {
        x.ieth = Some((mid >> 32) as u32);
    }
    f.ext = x;
    f.payload = payload.to_vec();
    Ok(f)
}

/// What a run of the transmit path produced.
pub struct TxPathRun {
    pub frames: Vec<OutFrame>,
    pub errors: Vec<String>,
    pub cycles: u64,
}

/// Feeds send descriptors (with their vector, our GID and payload) into `transport_tx` with
/// `src_mac` and `ttl`, and collects the frames.
pub fn run_tx_path<D: PortDut>(
    d: &mut D,
    descs: &[(TransportHeader, AvRecord, u128, Vec<u8>)],
    src_mac: u64,
    ttl: u8,
    seed: u64,
    idle: f64,
    stall: f64,
) -> Result<TxPathRun, String> {
    let i_reset = d.input("reset");
    let i_desc = [
        d.input("s_desc_data"),
        d.input("s_desc_av"),
        d.input("s_desc_sgid"),
        d.input("s_desc_valid"),
    ];
    let (i_mac, i_ttl) = (d.input("src_mac"), d.input("ttl"));
    let i_s = [
        d.input("s_axis_tdata"),
        d.input("s_axis_tkeep"),
        d.input("s_axis_tlast"),
        d.input("s_axis_tvalid"),
    ];
    let i_mready = d.input("m_axis_tready");
    let o_dready = d.output("s_desc_ready");
    let o_sready = d.output("s_axis_tready");
    let o_m =
        ["tdata", "tkeep", "tlast", "tvalid", "tuser"].map(|n| d.output(&format!("m_axis_{n}")));
    let pays: Vec<(Vec<u8>, u64)> = descs
        .iter()
        .filter(|x| !x.3.is_empty())
        .map(|x| (x.3.clone(), 0))
        .collect();
    let mut rng = Rng::new(seed);
    let mut src = Source::new(&pays, idle);
    let mut sink = Sink::new(stall);
    let mut next = 0usize;
    let mut presenting = false;
    // Cycles this call may take (the DUT may have run before: a bench reuses it).
    let limit = d.cycle() + (src.total_beats() as u64 + 20 * descs.len() as u64) * 20 + 10_000;
    d.set(i_mac, src_mac);
    d.set(i_ttl, u64::from(ttl));
    loop {
        let cycle = d.cycle();
        let reset = cycle < RESET_CYCLES;
        d.set(i_reset, u64::from(reset));
        if !reset && !presenting && next < descs.len() && !rng.chance(idle) {
            presenting = true;
        }
        let (t, av, sgid, _) = descs
            .get(next)
            .cloned()
            .unwrap_or_else(|| (TransportHeader::zero(), AvRecord::zero(), 0, Vec::new()));
        d.set_words(i_desc[0], &t.pack());
        d.set_words(i_desc[1], &av.pack());
        d.set_words(i_desc[2], &[sgid as u64, (sgid >> 64) as u64]);
        d.set(i_desc[3], u64::from(presenting));
        let mut i = AxisIn::default();
        if !reset {
            src.drive(&mut rng, &mut i);
        }
        for (p, v) in i_s.iter().zip([
            i.tdata,
            u64::from(i.tkeep),
            u64::from(i.tlast),
            u64::from(i.tvalid),
        ]) {
            d.set(*p, v);
        }
        sink.drive(&mut rng, &mut i);
        d.set(i_mready, u64::from(i.m_tready));
        d.settle().map_err(|m| m.to_string())?;
        let o = AxisOut {
            s_tready: d.get(o_sready) == 1,
            tdata: d.get(o_m[0]),
            tkeep: d.get(o_m[1]) as u8,
            tlast: d.get(o_m[2]) == 1,
            tvalid: d.get(o_m[3]) == 1,
            tuser: d.get(o_m[4]),
        };
        if !reset {
            if presenting && d.get(o_dready) == 1 {
                presenting = false;
                next += 1;
            }
            src.after(&i, &o);
            sink.after(cycle, &i, &o);
        }
        d.tick();
        if next == descs.len() && src.done() && sink.frames.len() >= descs.len() {
            break;
        }
        if d.cycle() > limit {
            return Err(format!(
                "no end by cycle {limit}: {} of {} frames out",
                sink.frames.len(),
                descs.len()
            ));
        }
    }
    Ok(TxPathRun {
        frames: sink.frames,
        errors: sink.errors,
        cycles: d.cycle(),
    })
}

/// One engine behind the demultiplexer: takes a header when ready (`think[n % len]` cycles after
/// its `n`-th header, standing in for its table reads, and refusing at random), then its
/// payload.
pub struct Engine {
    pub think: Vec<u64>,
    pub stall: f64,
    busy_until: u64,
    pub headers: Vec<TransportHeader>,
    pub sink: Sink,
}

impl Engine {
    pub fn new(think: Vec<u64>, stall: f64) -> Self {
        assert!(!think.is_empty());
        Engine {
            think,
            stall,
            busy_until: 0,
            headers: Vec::new(),
            sink: Sink::new(stall),
        }
    }

    /// The headers with their payloads (empty for a header without one).
    pub fn packets(&self) -> Vec<(TransportHeader, Vec<u8>)> {
        let mut pay = self.sink.frames.iter();
        self.headers
            .iter()
            .map(|h| {
                let p = if h.get("payload_len") > 0 {
                    pay.next().map(|f| f.data.clone()).unwrap_or_default()
                } else {
                    Vec::new()
                };
                (h.clone(), p)
            })
            .collect()
    }
}

/// What a run of the receive path produced.
pub struct RxPathRun {
    pub req: Vec<(TransportHeader, Vec<u8>)>,
    pub resp: Vec<(TransportHeader, Vec<u8>)>,
    pub cnp: Vec<TransportHeader>,
    pub bypass: Vec<OutFrame>,
    /// The parser's counters ([`rnic_hw::rx_parser::COUNTERS`]), then `cnt_drop_class`.
    pub counters: Vec<u64>,
    /// Cycles the input offered a beat and was refused.
    pub input_stalls: u64,
    /// Most headers seen waiting in the FIFO.
    pub max_fill: u64,
    pub errors: Vec<String>,
    pub cycles: u64,
}

const RESET_CYCLES: u64 = 4;

/// Counter outputs of `transport_rx`, in [`RxPathRun::counters`] order.
pub const RX_PATH_COUNTERS: [&str; 13] = [
    "cnt_frames",
    "cnt_accepted",
    "cnt_bypass",
    "cnt_drop_oversize",
    "cnt_drop_truncated",
    "cnt_drop_fragment",
    "cnt_drop_checksum",
    "cnt_drop_length",
    "cnt_drop_tver",
    "cnt_drop_opcode",
    "cnt_drop_padcnt",
    "cnt_drop_icrc",
    "cnt_drop_class",
];

/// Feeds `frames` (with the MAC's bad flag) into `transport_rx` and runs the three engines
/// (request, response, CNP) until the input is in and the outputs have been quiet for a while.
pub fn run_rx_path<D: PortDut>(
    d: &mut D,
    frames: &[(Vec<u8>, u64)],
    seed: u64,
    idle: f64,
    engines: [&mut Engine; 3],
) -> Result<RxPathRun, String> {
    let [req, resp, cnp] = engines;
    let i_reset = d.input("reset");
    let i_s = [
        d.input("s_axis_tdata"),
        d.input("s_axis_tkeep"),
        d.input("s_axis_tlast"),
        d.input("s_axis_tvalid"),
        d.input("s_axis_tuser"),
    ];
    let i_hready = [
        d.input("m_req_hdr_ready"),
        d.input("m_resp_hdr_ready"),
        d.input("m_cnp_hdr_ready"),
    ];
    let i_pready = [d.input("m_req_axis_tready"), d.input("m_resp_axis_tready")];
    let i_byp_ready = d.input("m_bypass_tready");
    let o_sready = d.output("s_axis_tready");
    let o_hdata = [
        d.output("m_req_hdr_data"),
        d.output("m_resp_hdr_data"),
        d.output("m_cnp_hdr_data"),
    ];
    let o_hvalid = [
        d.output("m_req_hdr_valid"),
        d.output("m_resp_hdr_valid"),
        d.output("m_cnp_hdr_valid"),
    ];
    let o_pay = |d: &D, p: &str| -> [usize; 4] {
        ["tdata", "tkeep", "tlast", "tvalid"].map(|n| d.output(&format!("m_{p}_axis_{n}")))
    };
    let o_p = [o_pay(d, "req"), o_pay(d, "resp")];
    let o_byp =
        ["tdata", "tkeep", "tlast", "tvalid", "tuser"].map(|n| d.output(&format!("m_bypass_{n}")));
    let o_cnt = RX_PATH_COUNTERS.map(|n| d.output(n));
    let o_fill = d.output("hdr_fill");

    let mut rng = Rng::new(seed);
    let mut src = Source::new(frames, idle);
    let mut byp = Sink::new(0.1);
    let limit = src.total_beats() as u64 * 40 + 20_000;
    let mut r = RxPathRun {
        req: Vec::new(),
        resp: Vec::new(),
        cnp: Vec::new(),
        bypass: Vec::new(),
        counters: Vec::new(),
        input_stalls: 0,
        max_fill: 0,
        errors: Vec::new(),
        cycles: 0,
    };
    let mut quiet = 0u64;
    let mut engines = [req, resp, cnp];
    loop {
        let cycle = d.cycle();
        let reset = cycle < RESET_CYCLES;
        let mut i = AxisIn {
            reset,
            ..Default::default()
        };
        if !reset {
            src.drive(&mut rng, &mut i);
        }
        d.set(i_reset, u64::from(reset));
        for (p, v) in i_s.iter().zip([
            i.tdata,
            u64::from(i.tkeep),
            u64::from(i.tlast),
            u64::from(i.tvalid),
            i.tuser & 1,
        ]) {
            d.set(*p, v);
        }
        let mut hready = [false; 3];
        let mut pready = [false; 2];
        for (k, e) in engines.iter_mut().enumerate() {
            hready[k] = cycle >= e.busy_until && !rng.chance(e.stall);
            d.set(i_hready[k], u64::from(hready[k]));
            if k < 2 {
                let mut ai = AxisIn::default();
                e.sink.drive(&mut rng, &mut ai);
                pready[k] = ai.m_tready;
                d.set(i_pready[k], u64::from(pready[k]));
            }
        }
        let mut bi = AxisIn::default();
        byp.drive(&mut rng, &mut bi);
        d.set(i_byp_ready, u64::from(bi.m_tready));
        d.settle().map_err(|m| m.to_string())?;

        let o = AxisOut {
            s_tready: d.get(o_sready) == 1,
            ..Default::default()
        };
        let mut moved = false;
        if !reset {
            if i.tvalid && !o.s_tready {
                r.input_stalls += 1;
            }
            src.after(&i, &o);
            for (k, e) in engines.iter_mut().enumerate() {
                if hready[k] && d.get(o_hvalid[k]) == 1 {
                    e.headers
                        .push(TransportHeader::unpack(&d.get_words(o_hdata[k])));
                    e.busy_until = cycle + e.think[(e.headers.len() - 1) % e.think.len()];
                    moved = true;
                }
                if k < 2 {
                    let po = AxisOut {
                        tdata: d.get(o_p[k][0]),
                        tkeep: d.get(o_p[k][1]) as u8,
                        tlast: d.get(o_p[k][2]) == 1,
                        tvalid: d.get(o_p[k][3]) == 1,
                        ..Default::default()
                    };
                    let ai = AxisIn {
                        m_tready: pready[k],
                        ..Default::default()
                    };
                    moved |= po.tvalid;
                    e.sink.after(cycle, &ai, &po);
                }
            }
            let bo = AxisOut {
                tdata: d.get(o_byp[0]),
                tkeep: d.get(o_byp[1]) as u8,
                tlast: d.get(o_byp[2]) == 1,
                tvalid: d.get(o_byp[3]) == 1,
                tuser: d.get(o_byp[4]),
                ..Default::default()
            };
            moved |= bo.tvalid;
            byp.after(cycle, &bi, &bo);
            r.max_fill = r.max_fill.max(d.get(o_fill));
        }
        d.tick();
        quiet = if moved || !src.done() { 0 } else { quiet + 1 };
        if src.done()
            && quiet
                > 2_000
                    + 4 * engines
                        .iter()
                        .flat_map(|e| e.think.iter())
                        .max()
                        .unwrap_or(&0)
        {
            break;
        }
        if d.cycle() > limit {
            return Err(format!("no end after {limit} cycles"));
        }
    }
    d.settle().map_err(|m| m.to_string())?;
    r.counters = o_cnt.iter().map(|o| d.get(*o)).collect();
    r.cycles = d.cycle();
    for e in &engines {
        r.errors.extend(e.sink.errors.iter().cloned());
    }
    r.errors.extend(byp.errors.iter().cloned());
    r.req = engines[0].packets();
    r.resp = engines[1].packets();
    r.cnp = engines[2].headers.clone();
    r.bypass = byp.frames;
    Ok(r)
}

hdl_ports!(rnic_hw::row_table::RowTable<{ rnic_hw::address_vector::AV_BITS }, 4> {
    inputs: [
        reset, wr_en, wr_row, wr_word, wr_data, rd_start, rd_row, rd_word, look_valid, look_row,
    ],
    outputs: [rd_data, look_ready, got_valid, got_row, got_data],
});

hdl_ports!(rnic_hw::resp_check::RespCheck<6> {
    inputs: [reset, s_valid, s_hdr, s_qp, s_mr, s_state, s_wqe_ready, m_ready],
    outputs: [s_ready, m_valid, m_verdict, m_addr, m_mr_ok],
});

hdl_ports!(rnic_hw::req_segment::ReqSegment {
    inputs: [
        reset,
        s_valid,
        s_wqe,
        s_len,
        s_qp,
        s_first_psn,
        s_pkt,
        s_noack,
        ack_every,
        m_ready,
    ],
    outputs: [
        s_ready,
        m_valid,
        m_desc,
        m_off,
        m_take,
        m_last,
        m_npkts,
        m_span,
        m_next_noack,
        m_bad,
    ],
});

hdl_ports!(rnic_hw::comp_check::CompCheck {
    inputs: [
        reset,
        s_valid,
        s_hdr,
        s_qp,
        s_state,
        s_sent_upto,
        s_front_valid,
        s_front_kind,
        s_front_first,
        s_front_npkts,
        s_front_len,
        s_completed,
        m_ready,
    ],
    outputs: [
        s_ready,
        m_valid,
        m_verdict,
        m_state,
        m_complete,
        m_fail,
        m_status,
        m_rewind,
        m_suppressed,
        m_rnr_wait,
        m_timer,
        m_offset,
    ],
});

hdl_ports!(rnic_hw::req_sched::ReqSched<10> {
    inputs: [reset, db_valid, db_queue, m_ready, s_done_valid, s_done_more],
    outputs: [m_valid, m_qpn, s_done_ready, serving, busy],
});

hdl_ports!(rnic_hw::qp_timers::QpTimers<10> {
    inputs: [
        reset,
        tick_cycles,
        s_cmd_valid,
        s_cmd_qpn,
        s_cmd_arm,
        s_cmd_rnr,
        s_cmd_code,
        m_exp_ready,
    ],
    outputs: [
        s_cmd_ready,
        m_exp_valid,
        m_exp_qpn,
        m_exp_rnr,
        now,
        busy,
    ],
});

hdl_ports!(rnic_hw::payload_gather::PayloadGather {
    inputs: [
        reset,
        s_cmd_valid,
        s_cmd_addr0,
        s_cmd_len0,
        s_cmd_addr1,
        s_cmd_len1,
        s_cmd_addr2,
        s_cmd_len2,
        s_cmd_addr3,
        s_cmd_len3,
        s_cmd_off,
        s_cmd_take,
        m_dma_rd_req_ready,
        m_dma_rd_data_valid,
        m_dma_rd_data,
        m_dma_rd_data_last,
        m_dma_rd_data_err,
        m_axis_tready,
    ],
    outputs: [
        s_cmd_ready,
        m_dma_rd_req_valid,
        m_dma_rd_req_addr,
        m_dma_rd_req_len,
        m_dma_rd_data_ready,
        m_axis_tdata,
        m_axis_tkeep,
        m_axis_tlast,
        m_axis_tuser,
        m_axis_tvalid,
    ],
});

hdl_ports!(rnic_hw::completer::Completer<6> {
    inputs: [
        reset,
        s_hdr_valid,
        s_hdr_data,
        s_axis_tdata,
        s_axis_tkeep,
        s_axis_tlast,
        s_axis_tvalid,
        s_exp_valid,
        s_exp_qp,
        s_exp_rnr,
        s_fail_valid,
        s_fail_qp,
        s_fail_index,
        s_fail_status,
        s_init_valid,
        s_init_qp,
        s_init_psn,
        s_init_index,
        s_init_retry,
        s_init_rnr,
        qp_look_ready,
        qp_got_data,
        sp_got_sent,
        sp_got_nstart,
        cv_look_qp,
        sq_look_ready,
        sq_got_valid,
        sq_got_base,
        sq_got_size,
        sq_got_prod,
        mr_look_ready,
        mr_got_data,
        m_dma_rd_req_ready,
        m_dma_rd_data_valid,
        m_dma_rd_data,
        m_dma_rd_data_last,
        m_dma_rd_data_err,
        m_dma_wr_req_ready,
        m_dma_wr_data_ready,
        m_dma_wr_done_valid,
        m_dma_wr_done_err,
        m_cqe_ready,
        m_tmr_ready,
    ],
    outputs: [
        s_hdr_ready,
        s_axis_tready,
        s_exp_ready,
        s_fail_ready,
        s_init_ready,
        qp_look_valid,
        qp_look_row,
        sp_look_qp,
        cv_got_oldest,
        cv_got_cons,
        cv_got_front,
        cv_got_rd_done,
        cv_got_rewinds,
        cv_got_rnr,
        cv_got_err,
        sq_look_valid,
        sq_look_queue,
        mr_look_valid,
        mr_look_row,
        m_dma_rd_req_valid,
        m_dma_rd_req_addr,
        m_dma_rd_req_len,
        m_dma_rd_data_ready,
        m_dma_wr_req_valid,
        m_dma_wr_req_addr,
        m_dma_wr_req_len,
        m_dma_wr_data_valid,
        m_dma_wr_data,
        m_dma_wr_data_keep,
        m_dma_wr_data_last,
        m_cqe_valid,
        m_cqe_cq,
        m_cqe_data,
        m_cqe_last,
        m_tmr_valid,
        m_tmr_qp,
        m_tmr_arm,
        m_tmr_rnr,
        m_tmr_code,
        m_kick_valid,
        m_kick_qp,
        cnt_responses,
        cnt_dropped,
        cnt_dma_err,
        busy,
    ],
});

hdl_ports!(rnic_hw::sge_pieces::SgePieces {
    inputs: [
        s_off, s_len, s_addr0, s_len0, s_addr1, s_len1, s_addr2, s_len2, s_addr3, s_len3, s_total,
    ],
    outputs: [
        m_off, m_end, m_over, m_addr0, m_len0, m_addr1, m_len1, m_addr2, m_len2, m_addr3, m_len3,
    ],
});

hdl_ports!(rnic_hw::payload_scatter::PayloadScatter {
    inputs: [
        reset,
        s_cmd_valid,
        s_cmd_addr0,
        s_cmd_len0,
        s_cmd_addr1,
        s_cmd_len1,
        s_cmd_addr2,
        s_cmd_len2,
        s_cmd_addr3,
        s_cmd_len3,
        s_axis_tdata,
        s_axis_tkeep,
        s_axis_tlast,
        s_axis_tvalid,
        m_dma_wr_req_ready,
        m_dma_wr_data_ready,
        m_dma_wr_done_valid,
        m_dma_wr_done_err,
        m_done_ready,
    ],
    outputs: [
        s_cmd_ready,
        s_axis_tready,
        m_dma_wr_req_valid,
        m_dma_wr_req_addr,
        m_dma_wr_req_len,
        m_dma_wr_data_valid,
        m_dma_wr_data,
        m_dma_wr_data_keep,
        m_dma_wr_data_last,
        m_done_valid,
        m_done_err,
        m_done_tail,
    ],
});

hdl_ports!(rnic_hw::recv_wqe::RecvWqe<6, 2> {
    inputs: [
        reset,
        s_req_valid,
        s_req_ring,
        s_req_pd,
        look_ready,
        got_valid,
        got_base,
        got_size,
        got_prod,
        got_cons,
        m_dma_rd_req_ready,
        m_dma_rd_data_valid,
        m_dma_rd_data,
        m_dma_rd_data_last,
        m_dma_rd_data_err,
        mr_look_ready,
        mr_got_data,
        m_ready,
    ],
    outputs: [
        s_req_ready,
        look_valid,
        look_queue,
        m_dma_rd_req_valid,
        m_dma_rd_req_addr,
        m_dma_rd_req_len,
        m_dma_rd_data_ready,
        mr_look_valid,
        mr_look_row,
        m_valid,
        m_empty,
        m_dma_err,
        m_wr_id,
        m_index,
        m_addr0,
        m_len0,
        m_addr1,
        m_len1,
        m_addr2,
        m_len2,
        m_ok,
        m_total,
    ],
});

hdl_ports!(rnic_hw::send_wqe::SendWqe<6, 2> {
    inputs: [
        reset,
        s_req_valid,
        s_req_ring,
        s_req_index,
        s_req_pd,
        look_ready,
        got_valid,
        got_base,
        got_size,
        got_prod,
        m_dma_rd_req_ready,
        m_dma_rd_data_valid,
        m_dma_rd_data,
        m_dma_rd_data_last,
        m_dma_rd_data_err,
        mr_look_ready,
        mr_got_data,
        m_ready,
    ],
    outputs: [
        s_req_ready,
        look_valid,
        look_queue,
        m_dma_rd_req_valid,
        m_dma_rd_req_addr,
        m_dma_rd_req_len,
        m_dma_rd_data_ready,
        mr_look_valid,
        mr_look_row,
        m_valid,
        m_empty,
        m_dma_err,
        m_index,
        m_wqe,
        m_addr0,
        m_len0,
        m_addr1,
        m_len1,
        m_addr2,
        m_len2,
        m_addr3,
        m_len3,
        m_ok,
        m_total,
    ],
});

hdl_ports!(rnic_hw::requester::Requester<6, 10> {
    inputs: [
        reset,
        s_turn_valid,
        s_turn_qp,
        m_done_ready,
        s_init_valid,
        s_init_qp,
        s_init_psn,
        s_init_index,
        ack_every,
        max_unacked,
        qp_look_ready,
        qp_got_data,
        cv_look_ready,
        cv_got_oldest,
        cv_got_cons,
        cv_got_front,
        cv_got_rd_done,
        cv_got_rewinds,
        cv_got_rnr,
        cv_got_err,
        sq_look_ready,
        sq_got_valid,
        sq_got_base,
        sq_got_size,
        sq_got_prod,
        mr_look_ready,
        mr_got_data,
        m_dma_rd_req_ready,
        m_dma_rd_data_valid,
        m_dma_rd_data,
        m_dma_rd_data_last,
        m_dma_rd_data_err,
        m_desc_ready,
        m_axis_tready,
        m_fail_ready,
        sp_look_qp,
    ],
    outputs: [
        s_turn_ready,
        m_done_valid,
        m_done_more,
        s_init_ready,
        qp_look_valid,
        qp_look_row,
        cv_look_valid,
        cv_look_qp,
        sq_look_valid,
        sq_look_queue,
        mr_look_valid,
        mr_look_row,
        m_dma_rd_req_valid,
        m_dma_rd_req_addr,
        m_dma_rd_req_len,
        m_dma_rd_data_ready,
        m_desc_valid,
        m_desc_data,
        m_desc_qp,
        m_desc_timeout,
        m_axis_tdata,
        m_axis_tkeep,
        m_axis_tlast,
        m_axis_tuser,
        m_axis_tvalid,
        m_fail_valid,
        m_fail_qp,
        m_fail_index,
        m_fail_status,
        sp_got_sent,
        sp_got_nstart,
        cnt_packets,
        cnt_retransmitted,
        cnt_dma_err,
    ],
});

hdl_ports!(rnic_hw::requester_path::RequesterPath<6, 10> {
    inputs: [
        reset,
        db_valid,
        db_queue,
        s_init_valid,
        s_init_qp,
        s_init_psn,
        s_init_index,
        s_init_retry,
        s_init_rnr,
        ack_every,
        max_unacked,
        tick_cycles,
        qp_look_ready,
        qp_got_data,
        sq_look_ready,
        sq_got_valid,
        sq_got_base,
        sq_got_size,
        sq_got_prod,
        mr_look_ready,
        mr_got_data,
        m_dma_rd_req_ready,
        m_dma_rd_data_valid,
        m_dma_rd_data,
        m_dma_rd_data_last,
        m_dma_rd_data_err,
        m_dma_rd_data_tag,
        m_dma_wr_req_ready,
        m_dma_wr_data_ready,
        m_dma_wr_done_valid,
        m_dma_wr_done_tag,
        m_dma_wr_done_err,
        m_desc_ready,
        m_axis_tready,
        s_hdr_valid,
        s_hdr_data,
        s_axis_tdata,
        s_axis_tkeep,
        s_axis_tlast,
        s_axis_tvalid,
        m_cqe_ready,
    ],
    outputs: [
        s_init_ready,
        qp_look_valid,
        qp_look_row,
        sq_look_valid,
        sq_look_queue,
        mr_look_valid,
        mr_look_row,
        m_dma_rd_req_valid,
        m_dma_rd_req_addr,
        m_dma_rd_req_len,
        m_dma_rd_req_tag,
        m_dma_rd_data_ready,
        m_dma_wr_req_valid,
        m_dma_wr_req_addr,
        m_dma_wr_req_len,
        m_dma_wr_req_tag,
        m_dma_wr_data_valid,
        m_dma_wr_data,
        m_dma_wr_data_keep,
        m_dma_wr_data_last,
        m_desc_valid,
        m_desc_data,
        m_desc_qp,
        m_axis_tdata,
        m_axis_tkeep,
        m_axis_tlast,
        m_axis_tuser,
        m_axis_tvalid,
        s_hdr_ready,
        s_axis_tready,
        m_cqe_valid,
        m_cqe_cq,
        m_cqe_data,
        m_cqe_last,
        cnt_packets,
        cnt_retransmitted,
        cnt_responses,
        cnt_dropped,
        cnt_expiries,
        cnt_arms,
        cnt_req_dma_err,
        cnt_comp_dma_err,
        busy,
    ],
});

hdl_ports!(rnic_hw::rc_nic::RcNic<6, 10, 11, 10> {
    inputs: [
        reset,
        s_axis_tdata,
        s_axis_tkeep,
        s_axis_tlast,
        s_axis_tvalid,
        s_axis_tuser,
        m_axis_tready,
        m_bypass_tready,
        src_mac,
        sgid,
        ttl,
        ack_every,
        max_unacked,
        tick_cycles,
        qp_wr_en,
        qp_wr_row,
        qp_wr_word,
        qp_wr_data,
        mr_wr_en,
        mr_wr_row,
        mr_wr_word,
        mr_wr_data,
        av_wr_en,
        av_wr_row,
        av_wr_word,
        av_wr_data,
        s_resp_init_valid,
        s_resp_init_qp,
        s_resp_init_psn,
        s_req_init_valid,
        s_req_init_qp,
        s_req_init_psn,
        s_req_init_index,
        s_req_init_retry,
        s_req_init_rnr,
        db_valid,
        db_queue,
        sq_look_ready,
        sq_got_valid,
        sq_got_base,
        sq_got_size,
        sq_got_prod,
        rq_look_ready,
        rq_got_valid,
        rq_got_base,
        rq_got_size,
        rq_got_prod,
        rq_got_cons,
        rq_commit_ready,
        m_dma_rd_req_ready,
        m_dma_rd_data_valid,
        m_dma_rd_data,
        m_dma_rd_data_last,
        m_dma_rd_data_err,
        m_dma_rd_data_tag,
        m_dma_wr_req_ready,
        m_dma_wr_data_ready,
        m_dma_wr_done_valid,
        m_dma_wr_done_tag,
        m_dma_wr_done_err,
        m_cqe_ready,
    ],
    outputs: [
        s_axis_tready,
        m_axis_tdata,
        m_axis_tkeep,
        m_axis_tlast,
        m_axis_tvalid,
        m_axis_tuser,
        m_bypass_tdata,
        m_bypass_tkeep,
        m_bypass_tlast,
        m_bypass_tvalid,
        m_bypass_tuser,
        s_resp_init_ready,
        s_req_init_ready,
        sq_look_valid,
        sq_look_queue,
        rq_look_valid,
        rq_look_queue,
        rq_commit_valid,
        rq_commit_queue,
        rq_commit_index,
        m_dma_rd_req_valid,
        m_dma_rd_req_addr,
        m_dma_rd_req_len,
        m_dma_rd_req_tag,
        m_dma_rd_data_ready,
        m_dma_wr_req_valid,
        m_dma_wr_req_addr,
        m_dma_wr_req_len,
        m_dma_wr_req_tag,
        m_dma_wr_data_valid,
        m_dma_wr_data,
        m_dma_wr_data_keep,
        m_dma_wr_data_last,
        m_cqe_valid,
        m_cqe_cq,
        m_cqe_data,
        m_cqe_last,
        cnt_executed,
        cnt_req_dropped,
        cnt_packets,
        cnt_retransmitted,
        cnt_responses,
        cnt_resp_dropped,
        cnt_expiries,
        rx_cnt_frames,
        rx_cnt_accepted,
        rx_cnt_drop_icrc,
        tx_cnt_frames,
        busy,
    ],
});

/// The responder's ports, for each size that has a top.
macro_rules! responder_ports {
    ($($t:ty),*) => {$(
        hdl_ports!($t {
            inputs: [
                reset,
                s_hdr_data,
                s_hdr_valid,
                s_axis_tdata,
                s_axis_tkeep,
                s_axis_tlast,
                s_axis_tvalid,
                s_init_valid,
                s_init_qp,
                s_init_psn,
                qp_look_ready,
                qp_got_data,
                mr_look_ready,
                mr_got_data,
                m_dma_rd_req_ready,
                m_dma_rd_data_valid,
                m_dma_rd_data,
                m_dma_rd_data_last,
                m_dma_rd_data_err,
                m_dma_wr_req_ready,
                m_dma_wr_data_ready,
                m_dma_wr_done_valid,
                m_dma_wr_done_err,
                m_desc_ready,
                m_axis_tready,
                rq_look_ready,
                rq_got_valid,
                rq_got_base,
                rq_got_size,
                rq_got_prod,
                rq_got_cons,
                rq_commit_ready,
                m_cqe_ready,
                cnt_verdict_sel,
            ],
            outputs: [
                s_hdr_ready,
                s_axis_tready,
                s_init_ready,
                rq_look_valid,
                rq_look_queue,
                rq_commit_valid,
                rq_commit_queue,
                rq_commit_index,
                m_cqe_valid,
                m_cqe_cq,
                m_cqe_data,
                m_cqe_last,
                qp_look_valid,
                qp_look_row,
                mr_look_valid,
                mr_look_row,
                m_dma_rd_req_valid,
                m_dma_rd_req_addr,
                m_dma_rd_req_len,
                m_dma_rd_data_ready,
                m_dma_wr_req_valid,
                m_dma_wr_req_addr,
                m_dma_wr_req_len,
                m_dma_wr_data_valid,
                m_dma_wr_data,
                m_dma_wr_data_keep,
                m_dma_wr_data_last,
                m_desc_valid,
                m_desc_data,
                m_desc_qp,
                m_axis_tdata,
                m_axis_tkeep,
                m_axis_tlast,
                m_axis_tuser,
                m_axis_tvalid,
                cnt_executed,
                cnt_dropped,
                cnt_dma_err,
                cnt_replayed,
                cnt_dup_dropped,
                cnt_recv_refused,
                cnt_verdict,
            ],
        });
    )*};
}

responder_ports!(
    rnic_hw::responder::Responder<6, 10, 10>,
    rnic_hw::responder::Responder<10, 12, 11>
);

/// The responder with the packet layer and its tables, for each size that has a top.
macro_rules! responder_path_ports {
    ($($t:ty),*) => {$(
        hdl_ports!($t {
            inputs: [
                reset,
                s_axis_tdata,
                s_axis_tkeep,
                s_axis_tlast,
                s_axis_tvalid,
                s_axis_tuser,
                m_axis_tready,
                m_resp_hdr_ready,
                m_resp_axis_tready,
                m_cnp_hdr_ready,
                m_bypass_tready,
                src_mac,
                sgid,
                ttl,
                qp_wr_en,
                qp_wr_row,
                qp_wr_word,
                qp_wr_data,
                mr_wr_en,
                mr_wr_row,
                mr_wr_word,
                mr_wr_data,
                av_wr_en,
                av_wr_row,
                av_wr_word,
                av_wr_data,
                s_init_valid,
                s_init_qp,
                s_init_psn,
                m_dma_rd_req_ready,
                m_dma_rd_data_valid,
                m_dma_rd_data,
                m_dma_rd_data_last,
                m_dma_rd_data_err,
                m_dma_wr_req_ready,
                m_dma_wr_data_ready,
                m_dma_wr_done_valid,
                m_dma_wr_done_err,
                rq_look_ready,
                rq_got_valid,
                rq_got_base,
                rq_got_size,
                rq_got_prod,
                rq_got_cons,
                rq_commit_ready,
                m_cqe_ready,
                cnt_verdict_sel,
            ],
            outputs: [
                s_axis_tready,
                m_axis_tdata,
                m_axis_tkeep,
                m_axis_tlast,
                m_axis_tvalid,
                m_axis_tuser,
                m_resp_hdr_data,
                m_resp_hdr_valid,
                m_resp_axis_tdata,
                m_resp_axis_tkeep,
                m_resp_axis_tlast,
                m_resp_axis_tvalid,
                m_cnp_hdr_data,
                m_cnp_hdr_valid,
                m_bypass_tdata,
                m_bypass_tkeep,
                m_bypass_tlast,
                m_bypass_tvalid,
                m_bypass_tuser,
                s_init_ready,
                m_dma_rd_req_valid,
                m_dma_rd_req_addr,
                m_dma_rd_req_len,
                m_dma_rd_data_ready,
                m_dma_wr_req_valid,
                m_dma_wr_req_addr,
                m_dma_wr_req_len,
                m_dma_wr_data_valid,
                m_dma_wr_data,
                m_dma_wr_data_keep,
                m_dma_wr_data_last,
                rq_look_valid,
                rq_look_queue,
                rq_commit_valid,
                rq_commit_queue,
                rq_commit_index,
                m_cqe_valid,
                m_cqe_cq,
                m_cqe_data,
                m_cqe_last,
                resp_idle,
                rx_hdr_fill,
                cnt_executed,
                cnt_dropped,
                cnt_dma_err,
                cnt_replayed,
                cnt_dup_dropped,
                cnt_recv_refused,
                cnt_verdict,
                rx_cnt_frames,
                rx_cnt_accepted,
                rx_cnt_bypass,
                rx_cnt_drop_oversize,
                rx_cnt_drop_truncated,
                rx_cnt_drop_fragment,
                rx_cnt_drop_checksum,
                rx_cnt_drop_length,
                rx_cnt_drop_tver,
                rx_cnt_drop_opcode,
                rx_cnt_drop_padcnt,
                rx_cnt_drop_icrc,
                rx_cnt_drop_class,
                tx_cnt_frames,
                tx_cnt_len_err,
            ],
        });
    )*};
}

responder_path_ports!(
    rnic_hw::responder_path::ResponderPath<6, 10, 11>,
    rnic_hw::responder_path::ResponderPath<10, 12, 11>
);

/// The data beats `(data, last, err)` the DMA port returns for a read of `len` bytes at
/// `addr` from host memory `mem` at device address `base`: every beat refused when the read
/// does not lie inside it.
pub fn read_beats(addr: u64, len: u64, base: u64, mem: &[u8]) -> Vec<(u64, bool, bool)> {
    let inside = addr >= base && addr - base + len <= mem.len() as u64;
    let n = len.div_ceil(8) as usize;
    (0..n)
        .map(|k| {
            let mut b = [0u8; 8];
            if inside {
                let i = (addr - base) as usize + 8 * k;
                let end = (i + 8).min(mem.len());
                b[..end - i].copy_from_slice(&mem[i..end]);
            }
            (u64::from_le_bytes(b), k + 1 == n, !inside)
        })
        .collect()
}

/// Runs one command through a payload gather (`rnic_hw::payload_gather`) whose host memory is
/// `mem` at device address `base`, with every handshake ready: the payload's bytes, and
/// whether its last beat was marked refused.
pub fn gather_once<D: PortDut>(
    d: &mut D,
    entries: &[(u64, u32); 4],
    off: u32,
    take: u16,
    base: u64,
    mem: &[u8],
) -> Result<(Vec<u8>, bool), String> {
    for (k, &(a, l)) in entries.iter().enumerate() {
        d.set(d.input(&format!("s_cmd_addr{k}")), a);
        d.set(d.input(&format!("s_cmd_len{k}")), l.into());
    }
    d.set(d.input("s_cmd_off"), off.into());
    d.set(d.input("s_cmd_take"), take.into());
    for n in ["m_dma_rd_req_ready", "m_axis_tready"] {
        d.set(d.input(n), 1);
    }
    let [valid, data_valid, data, last, err] = [
        "s_cmd_valid",
        "m_dma_rd_data_valid",
        "m_dma_rd_data",
        "m_dma_rd_data_last",
        "m_dma_rd_data_err",
    ]
    .map(|n| d.input(n));
    let [
        ready,
        req_valid,
        req_addr,
        req_len,
        data_ready,
        tdata,
        tkeep,
        tlast,
        tuser,
        tvalid,
    ] = [
        "s_cmd_ready",
        "m_dma_rd_req_valid",
        "m_dma_rd_req_addr",
        "m_dma_rd_req_len",
        "m_dma_rd_data_ready",
        "m_axis_tdata",
        "m_axis_tkeep",
        "m_axis_tlast",
        "m_axis_tuser",
        "m_axis_tvalid",
    ]
    .map(|n| d.output(n));
    d.set(valid, 1);
    d.settle().map_err(|m| m.to_string())?;
    if d.get(ready) != 1 {
        return Err("the gather is busy".into());
    }
    d.tick();
    d.set(valid, 0);
    let mut beats: std::collections::VecDeque<(u64, bool, bool)> = Default::default();
    let mut out = Vec::new();
    for _ in 0..20_000 {
        let (w, l, e) = beats.front().copied().unwrap_or((0, false, false));
        let offered = !beats.is_empty();
        d.set(data_valid, u64::from(offered));
        d.set(data, w);
        d.set(last, u64::from(l));
        d.set(err, u64::from(e));
        d.settle().map_err(|m| m.to_string())?;
        if d.get(req_valid) == 1 {
            beats.extend(read_beats(d.get(req_addr), d.get(req_len), base, mem));
        }
        if offered && d.get(data_ready) == 1 {
            beats.pop_front();
        }
        if d.get(tvalid) == 1 {
            let n = d.get(tkeep).trailing_ones() as usize;
            out.extend_from_slice(&d.get(tdata).to_le_bytes()[..n]);
            if d.get(tlast) == 1 {
                let bad = d.get(tuser) == 1;
                d.tick();
                return Ok((out, bad));
            }
        }
        d.tick();
    }
    Err("no end of the payload in 20000 clocks".into())
}
