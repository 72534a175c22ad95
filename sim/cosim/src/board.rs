//! A whole board top under Verilator, driven at its pins as a PHY and an oscillator drive it:
//! the input clock and the PHY's receive clock from two unrelated oscillators (so the receive
//! crossing really crosses), RGMII receive nibbles on both edges of the receive clock, the
//! transmit pins decoded on both edges of the transmit clock, and the LED pins sampled.
//!
//! Time is in picoseconds. The simulation models of the ECP5 cells hand the input clock to
//! every PLL output, so the core and transmit domains run at the input clock's rate here.

use std::collections::VecDeque;

use crate::mac::{INBAND_LINK_UP, TxDecoder, TxWireFrame, WireByte};
use crate::verilated::{Port, Verilated};

/// How to drive a board run.
#[derive(Clone, Debug)]
pub struct BoardStimulus {
    /// Half periods of the input clock and of the PHY's receive clock.
    pub clk_half_ps: u64,
    pub rxc_half_ps: u64,
    /// When the receive clock's first edge comes (its phase against the input clock).
    pub rxc_phase_ps: u64,
    /// Receive-clock cycles of idle with the in-band status "link down" (nibble 0) before the
    /// PHY reports link up.
    pub link_down_cycles: usize,
    /// Then idle cycles with the status "link up" before the first frame.
    pub link_up_cycles: usize,
    /// Wire frames (preamble, SFD, data, FCS) for the receive pins, each after `gap` idles.
    pub rx_wire: Vec<Vec<WireByte>>,
    pub gap: usize,
    /// Input-clock cycles the transmit pins must stay quiet, after everything was sent, for
    /// the run to end; and the most input-clock cycles a run may take.
    pub quiet_cycles: u64,
    pub max_cycles: u64,
}

/// A change of the LED pins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LedChange {
    pub time_ps: u64,
    pub led_n: u64,
}

/// What a run produced.
#[derive(Clone, Debug, Default)]
pub struct BoardRun {
    /// Frames on the transmit pins (bytes while TX_EN, with the preamble and the FCS).
    pub tx_wire: Vec<TxWireFrame>,
    /// The LED pins: their value after the first clock, then every change.
    pub leds: Vec<LedChange>,
    /// When the link-up status began.
    pub link_up_ps: u64,
    /// Input-clock cycles run, and whether the PHY reset pin was ever asserted (low).
    pub cycles: u64,
    pub phy_reset_seen: bool,
}

impl BoardRun {
    /// The LED pins at time `t` (the last change at or before it).
    pub fn leds_at(&self, t: u64) -> u64 {
        self.leds
            .iter()
            .take_while(|c| c.time_ps <= t)
            .last()
            .map_or(0, |c| c.led_n)
    }
}

const IN_PORTS: [&str; 4] = ["clk_in", "rgmii_rxc", "rgmii_rxd", "rgmii_rx_ctl"];
const OUT_PORTS: [&str; 5] = [
    "rgmii_txc",
    "rgmii_txd",
    "rgmii_tx_ctl",
    "phy_rst_n",
    "led_n",
];

/// A board top under Verilator (`board_1led`).
pub struct VerilatedBoard {
    pub model: Verilated,
    inp: Vec<Port>,
    out: Vec<Port>,
}

impl VerilatedBoard {
    pub fn new(top: &str) -> Result<Self, String> {
        let model = Verilated::new(top).ok_or_else(|| format!("no verilated top {top}"))?;
        let inp = model.ports(&IN_PORTS)?;
        let out = model.ports(&OUT_PORTS)?;
        Ok(VerilatedBoard { model, inp, out })
    }
}

/// Runs a board: see [`BoardStimulus`].
pub fn run_board(b: &mut VerilatedBoard, s: &BoardStimulus) -> BoardRun {
    assert!(
        s.rxc_half_ps % 2 == 0,
        "receive data changes a quarter period before each edge"
    );
    let down = WireByte {
        data: 0,
        dv: false,
        er: false,
    };
    let up = WireByte {
        data: INBAND_LINK_UP,
        dv: false,
        er: false,
    };
    let mut queue: VecDeque<WireByte> = VecDeque::new();
    queue.extend(std::iter::repeat_n(down, s.link_down_cycles));
    let link_up_at = queue.len();
    queue.extend(std::iter::repeat_n(up, s.link_up_cycles));
    for w in &s.rx_wire {
        queue.extend(std::iter::repeat_n(up, s.gap));
        queue.extend(w.iter().copied());
    }
    let total_bytes = queue.len();

    let (p_clk, p_rxc, p_rxd, p_ctl) = (b.inp[0], b.inp[1], b.inp[2], b.inp[3]);
    let (p_txd, p_txctl, p_rst, p_led) = (b.out[1], b.out[2], b.out[3], b.out[4]);
    let m = &mut b.model;
    m.set(p_clk, 0);
    m.set(p_rxc, 0);
    m.set(p_rxd, 0);
    m.set(p_ctl, 0);
    m.eval();

    let mut run = BoardRun::default();
    let (mut t_clk, mut clk) = (s.clk_half_ps, false);
    let (mut t_rxc, mut rxc) = (s.rxc_phase_ps.max(s.rxc_half_ps / 2 + 1), false);
    let mut t_data = t_rxc - s.rxc_half_ps / 2;
    let mut byte = up;
    let mut sent = 0usize;
    let mut hi = (0u8, false);
    let mut tx_pins = TxDecoder::default();
    let mut quiet = 0u64;
    loop {
        let t = t_clk.min(t_rxc).min(t_data);
        let mut clk_edge = false;
        if t == t_data {
            // The data for the receive clock's next edge, a quarter period ahead of it.
            if !rxc {
                if sent == link_up_at {
                    run.link_up_ps = t;
                }
                byte = queue.pop_front().unwrap_or(up);
                sent += 1;
                m.set(p_rxd, u64::from(byte.data & 15));
                m.set(p_ctl, u64::from(byte.dv));
            } else {
                m.set(p_rxd, u64::from(byte.data >> 4));
                m.set(p_ctl, u64::from(byte.dv ^ byte.er));
            }
            t_data += s.rxc_half_ps;
        }
        if t == t_rxc {
            rxc = !rxc;
            m.set(p_rxc, u64::from(rxc));
            t_rxc += s.rxc_half_ps;
        }
        if t == t_clk {
            clk = !clk;
            m.set(p_clk, u64::from(clk));
            t_clk += s.clk_half_ps;
            clk_edge = true;
        }
        m.eval();
        if !clk_edge {
            continue;
        }
        if clk {
            // The transmit pins show the low nibble and TX_EN while the clock is high.
            hi = (m.get(p_txd) as u8, m.get(p_txctl) != 0);
            run.cycles += 1;
            let led = m.get(p_led);
            if run.leds.last().is_none_or(|c| c.led_n != led) {
                run.leds.push(LedChange {
                    time_ps: t,
                    led_n: led,
                });
            }
            run.phy_reset_seen |= m.get(p_rst) == 0;
            continue;
        }
        let lo = (m.get(p_txd) as u8, m.get(p_txctl) != 0);
        if let Some(f) = tx_pins.step(hi, lo) {
            run.tx_wire.push(f);
        }
        quiet = if tx_pins.idle() && sent >= total_bytes {
            quiet + 1
        } else {
            0
        };
        if quiet >= s.quiet_cycles || run.cycles >= s.max_cycles {
            break;
        }
    }
    run
}
