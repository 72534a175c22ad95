//! `rnic bench responder`: the hardware responder under Verilator, with no stalls: WRITE
//! messages back to back into host memory, SEND messages back to back into receive requests of
//! three entries each (every packet reads its request and checks its entries), and READ
//! requests back to back answered from host memory, at
//! path MTU 1024 and 4096 (bytes per cycle against the 8 of a beat), the cycles from a small
//! WRITE's last beat in to its ACK's descriptor out, and from a small READ request in to its
//! response's descriptor out; then the responder path (`responder_path`: the receive parser,
//! the responder, its tables and the transmit builder), frames in and frames out.

use std::net::{IpAddr, Ipv4Addr};

use anyhow::{Result, anyhow, bail};
use rnic_cosim::ports::VerilatedPorts;
use rnic_driver::queues::encode_recv;
use rnic_driver::responder_sim::{ResponderSim, RunStats};
use rnic_driver::tables::{QpContext, encode_av, encode_mr, encode_qp};
use rnic_transport::mr::{MrInfo, Pd};
use rnic_transport::verbs::{Access, AddressVector, Mtu, QpAttr, QpState, QpType, RecvWr};
use rnic_wire::bth::BthRepr;
use rnic_wire::ext::{ExtHeaders, Reth};
use rnic_wire::ipv4::Ipv4Repr;
use rnic_wire::udp::UdpRepr;
use rnic_wire::{EthRepr, IpRepr, MacAddr, RoceFrame};

const QPN: u32 = 0x11;
const KEY: u32 = 2 << 8 | 0x33;
const VA: u64 = 0x7000_0000;
const BASE: u64 = 0x1_0000_0000;
const REGION: usize = 1 << 20;

/// A request frame to the bench's QP.
fn request(
    opcode: u8,
    psn: u32,
    ack: bool,
    reth: Option<Reth>,
    payload: Vec<u8>,
) -> Result<Vec<u8>> {
    let f = RoceFrame {
        eth: EthRepr {
            dst: MacAddr([2, 0, 0, 0, 0, 2]),
            src: MacAddr([2, 0, 0, 0, 0, 1]),
            vlan: None,
        },
        ip: IpRepr::V4(Ipv4Repr {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 0,
            ecn: 0,
            ttl: 64,
            ident: 0,
            dont_frag: true,
        }),
        udp: UdpRepr {
            src_port: 0xC000,
            dst_port: 4791,
            checksum: 0,
        },
        bth: BthRepr {
            ack_req: ack,
            ..BthRepr::new(opcode, QPN, psn)
        },
        ext: ExtHeaders {
            reth,
            ..Default::default()
        },
        payload,
    };
    Ok(f.build()?)
}

/// A message's opcodes: ONLY, FIRST, MIDDLE, LAST.
struct Ops {
    /// WRITE: a RETH on the first (or only) packet.
    reth: bool,
    only: u8,
    first: u8,
    middle: u8,
    last: u8,
}

const WRITE_OPS: Ops = Ops {
    reth: true,
    only: 0x0A,
    first: 0x06,
    middle: 0x07,
    last: 0x08,
};
const SEND_OPS: Ops = Ops {
    reth: false,
    only: 0x04,
    first: 0x00,
    middle: 0x01,
    last: 0x02,
};

/// Payload byte `j` of message `m`, for messages whose bytes step by `mul`.
fn pattern(mul: usize, m: usize, j: usize) -> u8 {
    (j * mul + m) as u8
}

/// The frames of `messages` messages of `len` bytes each, segmented at `mtu`, AckReq on each
/// last packet, PSNs from 0; WRITEs (with a RETH on the first packet) go one after the other
/// into the region.
fn segment(ops: &Ops, mul: usize, mtu: usize, len: usize, messages: usize) -> Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut psn = 0u32;
    for m in 0..messages {
        let n = len.div_ceil(mtu).max(1);
        for k in 0..n {
            let op = match (n, k) {
                (1, _) => ops.only,
                (_, 0) => ops.first,
                (_, k) if k + 1 == n => ops.last,
                _ => ops.middle,
            };
            let reth = (ops.reth && (op == ops.first || op == ops.only)).then_some(Reth {
                va: VA + (m * len) as u64,
                rkey: KEY,
                dma_len: len as u32,
            });
            let from = k * mtu;
            let to = (from + mtu).min(len);
            let payload = (from..to).map(|j| pattern(mul, m, j)).collect();
            out.push(request(op, psn, k + 1 == n, reth, payload)?);
            psn += 1;
        }
    }
    Ok(out)
}

/// Checks a run of `messages` messages of `len` bytes written one after the other from
/// `BASE` (and `completions` completions), then prints its figures after `label`.
fn report(
    label: &str,
    name: usize,
    s: &ResponderSim<VerilatedPorts>,
    run: (usize, &RunStats),
    frames: usize,
    (len, messages, mul, completions): (usize, usize, usize, usize),
) -> Result<()> {
    let (acks, st) = run;
    if acks != messages
        || st.dma_bytes != (len * messages) as u64
        || s.completions.len() != completions
    {
        bail!(
            "mtu {name}: {acks} ACKs, {} bytes written and {} completions, expected {messages}, {} and {completions}",
            st.dma_bytes,
            s.completions.len(),
            len * messages
        );
    }
    let got = s
        .read(BASE, len * messages)
        .ok_or_else(|| anyhow!("unmapped"))?;
    if (0..len * messages).any(|j| got[j] != pattern(mul, j / len, j % len)) {
        bail!("mtu {name}: host memory differs from the payloads");
    }
    let beats: u64 = (len * messages / 8) as u64;
    print!(
        "{label}mtu={name} packets={frames} bytes={} cycles={} bytes_per_cycle={:.3} (payload beats {beats}: {:.1} overhead cycles per packet)",
        st.dma_bytes,
        st.cycles,
        st.dma_bytes as f64 / st.cycles as f64,
        (st.cycles - beats) as f64 / frames as f64
    );
    if completions > 0 {
        print!(" completions={completions}");
    }
    println!();
    Ok(())
}

fn sim(mtu: Mtu) -> Result<ResponderSim<VerilatedPorts>> {
    let mut s = ResponderSim::verilated(1, 0.0).map_err(anyhow::Error::msg)?;
    setup(&mut s, mtu)?;
    Ok(s)
}

/// The responder path (`responder_path`: frames in, frames out), set up as [`sim`].
fn path_sim(mtu: Mtu) -> Result<ResponderSim<VerilatedPorts>> {
    let mut s = ResponderSim::path_verilated::<6, 10, 11>("responder_path", 1, 0.0)
        .map_err(anyhow::Error::msg)?;
    setup(&mut s, mtu)?;
    Ok(s)
}

/// The bench's QP (RTS, path MTU `mtu`) and region, and the QP's address vector and our
/// identity for the responder path's frames.
fn setup(s: &mut ResponderSim<VerilatedPorts>, mtu: Mtu) -> Result<()> {
    let attr = QpAttr {
        state: QpState::Rts,
        access: Access::REMOTE_WRITE | Access::REMOTE_READ,
        av: Some(AddressVector::new(
            MacAddr([2, 0, 0, 0, 0, 1]),
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        )),
        path_mtu: mtu,
        dest_qpn: 0x22,
        max_dest_rd_atomic: 4,
        ..QpAttr::default()
    };
    let ctx = QpContext {
        qp_type: QpType::Rc,
        pd: 1,
        pkey: 0xFFFF,
        send_cq: 0,
        recv_cq: 0,
        sig_all: false,
    };
    let mr = MrInfo {
        lkey: KEY,
        rkey: KEY,
        va: VA,
        len: REGION as u64,
        pd: Pd(1),
        access: Access::LOCAL_WRITE | Access::REMOTE_WRITE | Access::REMOTE_READ,
    };
    s.set_qp(QPN as usize, &encode_qp(&attr, &ctx)?);
    s.set_mr((KEY >> 8) as usize, &encode_mr(&mr, BASE)?);
    if let Some(av) = &attr.av {
        s.set_av(QPN as usize, &encode_av(av, 0, QPN)?);
    }
    s.set_identity(
        MacAddr([2, 0, 0, 0, 0, 2]).to_u64(),
        u128::from_be_bytes(Ipv4Addr::new(10, 0, 0, 2).to_ipv6_mapped().octets()),
        64,
    );
    s.map(BASE, REGION);
    s.init_qp(QPN as usize, 0).map_err(anyhow::Error::msg)?;
    Ok(())
}

pub fn bench_responder() -> Result<()> {
    println!("responder (Verilator, no stalls): WRITE messages back to back into host memory");
    for (mtu, name) in [(Mtu::M1024, 1024), (Mtu::M4096, 4096)] {
        let (len, messages) = (64 * 1024, 4);
        let frames = segment(&WRITE_OPS, 7, name, len, messages)?;
        let mut s = sim(mtu)?;
        let (resp, st) = s.run(&frames).map_err(anyhow::Error::msg)?;
        report(
            "",
            name,
            &s,
            (resp.len(), &st),
            frames.len(),
            (len, messages, 7, 0),
        )?;
    }
    println!(
        "write_only_64 ack_latency_cycles={} (last payload beat in to the ACK's descriptor out; DMA write done at once)",
        ack_latency(&mut sim(Mtu::M1024)?)?
    );
    bench_sends()?;
    bench_reads()?;
    bench_path()
}

/// Cycles from a 64-byte WRITE ONLY's last beat in to its ACK out (a descriptor from the
/// responder, a frame's first beat from the path).
fn ack_latency(s: &mut ResponderSim<VerilatedPorts>) -> Result<u64> {
    let f = request(
        0x0A,
        0,
        true,
        Some(Reth {
            va: VA,
            rkey: KEY,
            dma_len: 64,
        }),
        vec![0xA5; 64],
    )?;
    let (resp, st) = s.run(&[f]).map_err(anyhow::Error::msg)?;
    let (Some(r), Some(t)) = (resp.first(), st.taken.first()) else {
        bail!("no ACK for a 64-byte WRITE");
    };
    Ok(r.cycle - t)
}

/// The responder path: WRITE frames back to back (a frame's headers take beats of the line
/// too), READ responses as frames, and a small WRITE's latency from its frame's last beat in
/// to its ACK frame's first beat out.
fn bench_path() -> Result<()> {
    println!(
        "responder path (Verilator, no stalls): WRITE frames back to back in through the receive parser, ACK frames out"
    );
    for (mtu, name) in [(Mtu::M1024, 1024), (Mtu::M4096, 4096)] {
        let (len, messages) = (64 * 1024, 4);
        let frames = segment(&WRITE_OPS, 7, name, len, messages)?;
        let wire: usize = frames.iter().map(|f| f.len().div_ceil(8)).sum();
        let mut s = path_sim(mtu)?;
        let (resp, st) = s.run(&frames).map_err(anyhow::Error::msg)?;
        report(
            &format!("path frame_beats={wire} "),
            name,
            &s,
            (resp.len(), &st),
            frames.len(),
            (len, messages, 7, 0),
        )?;
    }
    let pattern = |j: usize| (j * 11 + j / 4096) as u8;
    let (len, messages) = (64 * 1024, 4);
    let frames = reads(4096, len, messages)?;
    let mut s = path_sim(Mtu::M4096)?;
    let bytes: Vec<u8> = (0..len * messages).map(pattern).collect();
    if !s.fill(BASE, &bytes) {
        bail!("the region is not mapped");
    }
    let (resp, st) = s.run(&frames).map_err(anyhow::Error::msg)?;
    let sent: Vec<u8> = resp
        .iter()
        .flat_map(|r| r.payload.iter().copied())
        .collect();
    if sent != bytes {
        bail!("path: the READ responses do not carry the region's bytes");
    }
    let wire: u64 = s.sent.iter().map(|f| f.len() as u64).sum();
    println!(
        "path read mtu=4096 responses={} bytes={} frame_bytes={wire} cycles={} bytes_per_cycle={:.3} frame_bytes_per_cycle={:.3} (a 2048-word READ FIFO)",
        resp.len(),
        st.payload_bytes,
        st.cycles,
        st.payload_bytes as f64 / st.cycles as f64,
        wire as f64 / st.cycles as f64
    );
    println!(
        "path write_only_64 ack_latency_cycles={} (the request frame's last beat in to the ACK frame's first beat out; DMA write done at once)",
        ack_latency(&mut path_sim(Mtu::M1024)?)?
    );
    Ok(())
}

/// The receive ring of the bench's QP.
const RQ_BASE: u64 = 0x2_0000_0000;

fn bench_sends() -> Result<()> {
    println!(
        "responder (Verilator, no stalls): SEND messages back to back into receive requests of three entries"
    );
    for (mtu, name) in [(Mtu::M1024, 1024), (Mtu::M4096, 4096)] {
        let (len, messages) = (64 * 1024, 4);
        let frames = segment(&SEND_OPS, 5, name, len, messages)?;
        let mut s = sim(mtu)?;
        s.set_rq(QPN as usize, RQ_BASE, 4);
        // Entries of a third each (the first a byte longer), message m's after m - 1's.
        let third = len / 3;
        for m in 0..messages {
            let at = VA + (m * len) as u64;
            let wr = RecvWr::new(m as u64)
                .sge(at, (third + 1) as u32, KEY)
                .sge(at + (third + 1) as u64, third as u32, KEY)
                .sge(
                    at + (2 * third + 1) as u64,
                    (len - 2 * third - 1) as u32,
                    KEY,
                );
            s.post_recv(QPN as usize, &encode_recv(&wr)?)
                .map_err(anyhow::Error::msg)?;
        }
        let (resp, st) = s.run(&frames).map_err(anyhow::Error::msg)?;
        report(
            "send ",
            name,
            &s,
            (resp.len(), &st),
            frames.len(),
            (len, messages, 5, messages),
        )?;
    }
    Ok(())
}

/// READ requests of `len` bytes each, one after the other in the region; PSNs leave room for
/// each one's responses.
fn reads(mtu: usize, len: usize, messages: usize) -> Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut psn = 0u32;
    for m in 0..messages {
        let reth = Reth {
            va: VA + (m * len) as u64,
            rkey: KEY,
            dma_len: len as u32,
        };
        out.push(request(0x0C, psn, false, Some(reth), Vec::new())?);
        psn += len.div_ceil(mtu).max(1) as u32;
    }
    Ok(out)
}

fn bench_reads() -> Result<()> {
    println!(
        "responder (Verilator, no stalls): READ requests back to back, answered from host memory (DMA data the cycle after the request; a 1024-word READ FIFO)"
    );
    let pattern = |j: usize| (j * 13 + j / 4096) as u8;
    for (mtu, name) in [(Mtu::M1024, 1024), (Mtu::M4096, 4096)] {
        let (len, messages) = (64 * 1024, 4);
        let frames = reads(name, len, messages)?;
        let mut s = sim(mtu)?;
        let bytes: Vec<u8> = (0..len * messages).map(pattern).collect();
        if !s.fill(BASE, &bytes) {
            bail!("the region is not mapped");
        }
        let (resp, st) = s.run(&frames).map_err(anyhow::Error::msg)?;
        let packets = messages * len.div_ceil(name);
        let sent: Vec<u8> = resp
            .iter()
            .flat_map(|r| r.payload.iter().copied())
            .collect();
        if resp.len() != packets || sent != bytes {
            bail!(
                "mtu {name}: {} responses with {} bytes, expected {packets} with the region's {}",
                resp.len(),
                sent.len(),
                bytes.len()
            );
        }
        let beats = (len * messages / 8) as u64;
        println!(
            "mtu={name} responses={packets} bytes={} cycles={} bytes_per_cycle={:.3} (payload beats {beats}: {:.1} overhead cycles per response)",
            st.payload_bytes,
            st.cycles,
            st.payload_bytes as f64 / st.cycles as f64,
            (st.cycles - beats) as f64 / packets as f64
        );
    }
    let mut s = sim(Mtu::M1024)?;
    let f = reads(1024, 64, 1)?;
    let (resp, st) = s.run(&f).map_err(anyhow::Error::msg)?;
    let (Some(r), Some(t)) = (resp.first(), st.taken.first()) else {
        bail!("no response to a 64-byte READ");
    };
    println!(
        "read_64 response_latency_cycles={} (request in to the response's descriptor out, its payload in the FIFO; DMA data the cycle after the request)",
        r.cycle - t
    );
    Ok(())
}
