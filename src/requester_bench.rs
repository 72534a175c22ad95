//! `rnic bench requester`: the hardware requester under Verilator, with no stalls and a
//! window that never closes: 64 KiB WRITEs at path MTU 1024 and 4096 (payload bytes per
//! cycle against the 8 of a beat), 64-byte SENDs (one packet per request: the cost of a
//! turn and a request read) and 64 KiB READ requests, each workload posted whole and sent
//! in the scheduler's turns until the ring is empty.

use anyhow::{Result, anyhow, bail};
use rnic_cosim::ports::VerilatedPorts;
use rnic_driver::queues::encode_send;
use rnic_driver::requester_sim::{RequesterSim, View};
use rnic_driver::responder_sim::row_words;
use rnic_driver::tables::{QpContext, encode_mr, encode_qp};
use rnic_transport::mr::{MrInfo, Pd};
use rnic_transport::verbs::{Access, Mtu, QpAttr, QpState, QpType, SendWr, WrOpcode};

const ROW: usize = 3;
const KEY: u32 = 2 << 8 | 0x33;
const VA: u64 = 0x7000_0000;
const BASE: u64 = 0x1_0000_0000;
const REGION: usize = 1 << 20;
const RING: u64 = 0x2_0000_0000;
const PSN: u32 = 0x100;

fn sim(mtu: Mtu) -> Result<RequesterSim<VerilatedPorts>> {
    let mut s = RequesterSim::verilated(1, 0.0).map_err(anyhow::Error::msg)?;
    let attr = QpAttr {
        state: QpState::Rts,
        path_mtu: mtu,
        dest_qpn: 0x22,
        max_rd_atomic: 16,
        sq_psn: PSN,
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
        access: Access::LOCAL_WRITE,
    };
    s.set_qp(ROW, row_words(&encode_qp(&attr, &ctx)?));
    s.set_mr((KEY >> 8) as usize, row_words(&encode_mr(&mr, BASE)?));
    let fill: Vec<u8> = (0..REGION).map(|i| (i * 7) as u8).collect();
    s.map(BASE, &fill);
    s.set_ring(ROW, RING, 10);
    // A window as wide as PSNs allow.
    s.init_qp(ROW, PSN, 64, (1 << 23) - 1)
        .map_err(anyhow::Error::msg)?;
    s.set_view(
        ROW,
        View {
            oldest: PSN,
            ..View::default()
        },
    );
    Ok(s)
}

/// Posts `n` requests of `len` bytes, runs the turns, and prints the figures.
fn run(mtu: Mtu, op: WrOpcode, len: u32, n: usize) -> Result<()> {
    let mut s = sim(mtu)?;
    for i in 0..n {
        let mut wr = SendWr::new(i as u64, op).sge(VA + 64 * i as u64 % 4096, len, KEY);
        if op != WrOpcode::Send {
            wr = wr.remote(0x9000_0000, 0x1234);
        }
        s.post(ROW, &encode_send(&wr, 0)?)
            .map_err(anyhow::Error::msg)?;
    }
    let t = s.turns(&[ROW]).map_err(anyhow::Error::msg)?;
    if !t.fails.is_empty() {
        bail!("requests failed: {:?}", t.fails);
    }
    let bytes: usize = t.sent.iter().map(|p| p.payload.len()).sum();
    let want = if op == WrOpcode::RdmaRead {
        0
    } else {
        n * len as usize
    };
    if bytes != want {
        bail!("{bytes} payload bytes sent, {want} posted");
    }
    let packets = t.sent.len() as f64;
    let name = match op {
        WrOpcode::RdmaWrite => "write",
        WrOpcode::Send => "send",
        _ => "read",
    };
    println!(
        "requester mtu={} {name}_{len} x{n}: packets={} turns={} cycles={} bytes_per_cycle={:.3} cycles_per_packet={:.1} cycles_per_request={:.1}",
        mtu.bytes(),
        t.sent.len(),
        t.turns,
        t.cycles,
        bytes as f64 / t.cycles as f64,
        t.cycles as f64 / packets.max(1.0),
        t.cycles as f64 / n as f64,
    );
    Ok(())
}

pub fn bench_requester() -> Result<()> {
    println!(
        "requester (Verilator, no stalls, the window open): requests posted whole, sent in the scheduler's turns"
    );
    for mtu in [Mtu::M1024, Mtu::M4096] {
        run(mtu, WrOpcode::RdmaWrite, 64 * 1024, 4)?;
    }
    run(Mtu::M1024, WrOpcode::Send, 64, 256)?;
    run(Mtu::M1024, WrOpcode::RdmaRead, 64 * 1024, 16).map_err(|e| anyhow!("READ: {e}"))?;
    Ok(())
}
