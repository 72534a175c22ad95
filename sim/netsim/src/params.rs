//! Scenario configuration: network parameters, the DCQCN profile and `--param key=value`
//! overrides, with one table of every key (what the CLI lists when a key is wrong).
//!
//! Units: KB = 1000 bytes, MB = 10^6 bytes, Gb/s = 10^9 b/s.

use crate::dcqcn::{DcqcnParams, Profile};

/// Network and experiment parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct NetParams {
    /// Every link's rate, Gb/s.
    pub link_gbps: f64,
    /// Every link's propagation delay, ns.
    pub delay_ns: u64,
    /// Payload bytes per packet.
    pub mtu: u32,
    /// RED marking thresholds (KB) and probability.
    pub kmin_kb: f64,
    pub kmax_kb: f64,
    pub pmax: f64,
    /// Mark at dequeue instead of enqueue.
    pub mark_dequeue: bool,
    /// Shared switch buffer and per-port limit, KB.
    pub buffer_kb: f64,
    pub port_buffer_kb: f64,
    /// Link faults (every link).
    pub loss: f64,
    pub reorder: f64,
    pub reorder_delay_ns: u64,
    pub duplicate: f64,
    /// Simulated time; each scenario has its own default.
    pub duration_ms: Option<f64>,
    /// Sampling period of the time series, microseconds.
    pub sample_us: f64,
    /// Message size, KB.
    pub message_kb: f64,
    /// DCQCN on (senders react to CNPs) or off (line rate).
    pub dcqcn: bool,
    /// Use the floating-point reaction point instead of the fixed-point one.
    pub rp_float: bool,
    /// Start of the second flow in the staggered two-flow runs, microseconds.
    pub stagger_us: f64,
    /// Incast degree (default: the sweep 2, 4, 8, 16; red-vs-cutoff: 8).
    pub n: Option<u32>,
    /// Cut-off marking threshold of red-vs-cutoff, KB (Kmin = Kmax).
    pub kcut_kb: f64,
    /// Convergence: bin length (us) and the largest distance from the fair share (fraction).
    pub conv_bin_us: f64,
    pub conv_tol: f64,
    /// Consecutive fair bins needed.
    pub conv_hold: u32,
    /// Receivers check every frame's ICRC and IPv4 checksum.
    pub verify: bool,
    /// Frames captured per tap (0 = no taps).
    pub tap_limit: u64,
}

impl Default for NetParams {
    fn default() -> Self {
        NetParams {
            link_gbps: 40.0,
            delay_ns: 1000,
            mtu: 1024,
            kmin_kb: 5.0,
            kmax_kb: 200.0,
            pmax: 0.01,
            mark_dequeue: false,
            buffer_kb: 12_000.0,
            port_buffer_kb: 12_000.0,
            loss: 0.0,
            reorder: 0.0,
            reorder_delay_ns: 2000,
            duplicate: 0.0,
            duration_ms: None,
            sample_us: 10.0,
            message_kb: 1000.0,
            dcqcn: true,
            rp_float: false,
            stagger_us: 30_000.0,
            n: None,
            kcut_kb: 40.0,
            conv_bin_us: 1000.0,
            conv_tol: 0.1,
            conv_hold: 5,
            verify: true,
            tap_limit: 2000,
        }
    }
}

/// A whole configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub profile: Profile,
    pub seed: u64,
    pub net: NetParams,
    pub dcqcn: DcqcnParams,
}

enum Target {
    Net(fn(&mut NetParams, f64) -> Result<(), String>),
    Dcqcn(fn(&mut DcqcnParams, f64) -> Result<(), String>),
}

/// One `--param` key.
pub struct ParamDef {
    pub key: &'static str,
    pub help: &'static str,
    target: Target,
}

fn flag(v: f64) -> Result<bool, String> {
    match v {
        0.0 => Ok(false),
        1.0 => Ok(true),
        _ => Err(format!("expects 0 or 1, got {v}")),
    }
}

fn uint(v: f64, max: f64) -> Result<u64, String> {
    if v.fract() != 0.0 || v < 0.0 || v > max {
        Err(format!("expects a whole number within 0..{max}, got {v}"))
    } else {
        Ok(v as u64)
    }
}

fn pos(v: f64) -> Result<f64, String> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!("expects a positive number, got {v}"))
    }
}

fn nonneg(v: f64) -> Result<f64, String> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(format!("expects zero or a positive number, got {v}"))
    }
}

fn prob(v: f64) -> Result<f64, String> {
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("expects a probability within 0..1, got {v}"))
    }
}

macro_rules! net {
    ($key:literal, $help:literal, |$p:ident, $v:ident| $body:expr) => {
        ParamDef {
            key: $key,
            help: $help,
            target: Target::Net(|$p, $v| {
                $body;
                Ok(())
            }),
        }
    };
}
macro_rules! dc {
    ($key:literal, $help:literal, |$p:ident, $v:ident| $body:expr) => {
        ParamDef {
            key: $key,
            help: $help,
            target: Target::Dcqcn(|$p, $v| {
                $body;
                Ok(())
            }),
        }
    };
}

/// Every key `--param` accepts.
pub static PARAMS: &[ParamDef] = &[
    net!("link_gbps", "rate of every link, Gb/s (40)", |p, v| p
        .link_gbps =
        pos(v)?),
    net!(
        "delay_ns",
        "propagation delay of every link, ns (1000)",
        |p, v| p.delay_ns = uint(v, 1e9)?
    ),
    net!("mtu", "payload bytes per packet (1024)", |p, v| p.mtu =
        uint(v, 9000.0)?.max(1) as u32),
    net!("kmin_kb", "RED Kmin, KB (5)", |p, v| p.kmin_kb = nonneg(v)?),
    net!("kmax_kb", "RED Kmax, KB (200)", |p, v| p.kmax_kb =
        nonneg(v)?),
    net!("pmax", "RED Pmax (0.01)", |p, v| p.pmax = prob(v)?),
    net!(
        "mark_dequeue",
        "mark at dequeue (1) instead of enqueue (0)",
        |p, v| p.mark_dequeue = flag(v)?
    ),
    net!("buffer_kb", "shared switch buffer, KB (12000)", |p, v| p
        .buffer_kb =
        pos(v)?),
    net!(
        "port_buffer_kb",
        "largest egress queue, KB (12000)",
        |p, v| p.port_buffer_kb = pos(v)?
    ),
    net!("loss", "loss probability per frame per link (0)", |p, v| {
        p.loss = prob(v)?
    }),
    net!(
        "reorder",
        "probability a frame is delayed by reorder_delay_ns (0)",
        |p, v| p.reorder = prob(v)?
    ),
    net!(
        "reorder_delay_ns",
        "extra delay of a reordered frame, ns (2000)",
        |p, v| p.reorder_delay_ns = uint(v, 1e9)?
    ),
    net!(
        "duplicate",
        "probability a frame arrives twice (0)",
        |p, v| p.duplicate = prob(v)?
    ),
    net!(
        "duration_ms",
        "simulated time, ms (per scenario)",
        |p, v| p.duration_ms = Some(pos(v)?)
    ),
    net!(
        "sample_us",
        "sampling period of the time series, us (10)",
        |p, v| p.sample_us = pos(v)?
    ),
    net!(
        "message_kb",
        "RDMA WRITE message size, KB (1000)",
        |p, v| p.message_kb = pos(v)?
    ),
    net!(
        "dcqcn",
        "DCQCN on (1) or senders at line rate (0)",
        |p, v| p.dcqcn = flag(v)?
    ),
    net!(
        "rp_float",
        "floating-point reaction point (1) instead of fixed point (0)",
        |p, v| p.rp_float = flag(v)?
    ),
    net!(
        "stagger_us",
        "start of the second flow when staggered, us (30000)",
        |p, v| p.stagger_us = nonneg(v)?
    ),
    net!(
        "n",
        "incast degree (incast: 2,4,8,16; red-vs-cutoff: 8)",
        |p, v| p.n = Some(uint(v, 1024.0)?.max(1) as u32)
    ),
    net!("kcut_kb", "cut-off marking threshold, KB (40)", |p, v| p
        .kcut_kb =
        nonneg(v)?),
    net!(
        "conv_bin_us",
        "bin length for convergence, us (1000)",
        |p, v| p.conv_bin_us = pos(v)?
    ),
    net!(
        "conv_tol",
        "converged: every flow within this fraction of its fair share (0.1)",
        |p, v| p.conv_tol = prob(v)?
    ),
    net!(
        "conv_hold",
        "consecutive fair bins counted as converged (5)",
        |p, v| p.conv_hold = uint(v, 1e6)?.max(1) as u32
    ),
    net!(
        "verify",
        "receivers check ICRC and IPv4 checksum of every frame (1)",
        |p, v| p.verify = flag(v)?
    ),
    net!(
        "tap_limit",
        "frames per pcap tap, 0 = no taps (2000)",
        |p, v| p.tap_limit = uint(v, 1e12)?
    ),
    dc!(
        "cnp_interval_us",
        "N: minimum time between CNPs per QP, us",
        |p, v| p.cnp_interval_us = nonneg(v)?
    ),
    dc!("alpha_timer_us", "K: alpha decay period, us", |p, v| p
        .alpha_timer_us =
        pos(v)?),
    dc!("g", "alpha gain g", |p, v| p.g = prob(v)?),
    dc!("inc_timer_us", "T: rate increase timer, us", |p, v| p
        .inc_timer_us =
        pos(v)?),
    dc!(
        "byte_reset_kb",
        "B: byte counter period, KB (0 = off)",
        |p, v| p.byte_reset = (nonneg(v)? * 1000.0).round() as u64
    ),
    dc!("f", "F: fast recovery stages", |p, v| p.f =
        uint(v, 1000.0)? as u32),
    dc!("rai_mbps", "R_AI: additive increase, Mb/s", |p, v| p
        .rai_mbps =
        nonneg(v)?),
    dc!("rhai_mbps", "R_HAI: hyper increase, Mb/s", |p, v| p
        .rhai_mbps =
        nonneg(v)?),
    dc!("min_rate_mbps", "minimum rate, Mb/s", |p, v| p
        .min_rate_mbps =
        nonneg(v)?),
    dc!("alpha_init", "alpha before the first CNP", |p, v| p
        .alpha_init =
        prob(v)?),
    dc!("max_cut", "largest single cut, fraction of RC", |p, v| p
        .max_cut =
        prob(v)?),
    dc!("min_dec_us", "minimum time between cuts, us", |p, v| p
        .min_dec_us =
        nonneg(v)?),
    dc!(
        "clamp_target",
        "RT = RC at every cut (1) or RT kept (0)",
        |p, v| p.clamp_target = flag(v)?
    ),
    dc!(
        "release_at_line",
        "limiter goes idle at line rate (1)",
        |p, v| p.release_at_line = flag(v)?
    ),
    dc!(
        "first_cnp_rate_mbps",
        "rate set by a first CNP, Mb/s (0 = cut by alpha)",
        |p, v| p.first_cnp_rate_mbps = nonneg(v)?
    ),
    dc!("clk_ps", "fixed-point clock period, ps (6400)", |p, v| p
        .clk_ps =
        uint(v, 1e6)?),
];

/// The list of keys, for error messages.
pub fn key_list() -> String {
    PARAMS.iter().map(|d| d.key).collect::<Vec<_>>().join(", ")
}

/// One line per key with its help, for `--help`-style listings.
pub fn key_help() -> String {
    PARAMS
        .iter()
        .map(|d| format!("  {:<20} {}\n", d.key, d.help))
        .collect()
}

/// Splits `key=value` and parses the value (a number; `true`/`false` are 1/0).
pub fn parse_kv(s: &str) -> Result<(&'static ParamDef, f64), String> {
    let Some((k, v)) = s.split_once('=') else {
        return Err(format!("--param {s:?}: expected key=value"));
    };
    let (k, v) = (k.trim(), v.trim());
    let Some(def) = PARAMS.iter().find(|d| d.key == k) else {
        return Err(format!(
            "unknown parameter {k:?}; valid keys: {}",
            key_list()
        ));
    };
    let value = match v {
        "true" => 1.0,
        "false" => 0.0,
        _ => v
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("parameter {k}: {v:?} is not a number"))?,
    };
    Ok((def, value))
}

impl Config {
    /// `profile` with `overrides` (`key=value` strings) applied: network keys first, then the
    /// DCQCN profile for the resulting line rate, then DCQCN keys.
    pub fn build(profile: Profile, seed: u64, overrides: &[String]) -> Result<Config, String> {
        let parsed = overrides
            .iter()
            .map(|s| parse_kv(s))
            .collect::<Result<Vec<_>, _>>()?;
        let mut net = NetParams::default();
        for (def, v) in &parsed {
            if let Target::Net(set) = &def.target {
                set(&mut net, *v).map_err(|e| format!("parameter {}: {e}", def.key))?;
            }
        }
        if net.kmax_kb < net.kmin_kb {
            return Err(format!(
                "kmax_kb {} is below kmin_kb {}",
                net.kmax_kb, net.kmin_kb
            ));
        }
        let mut dcqcn = DcqcnParams::profile(profile, net.link_gbps);
        for (def, v) in &parsed {
            if let Target::Dcqcn(set) = &def.target {
                set(&mut dcqcn, *v).map_err(|e| format!("parameter {}: {e}", def.key))?;
            }
        }
        dcqcn.validate()?;
        Ok(Config {
            profile,
            seed,
            net,
            dcqcn,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_key_is_named_with_the_valid_ones() {
        let e = Config::build(Profile::Paper, 1, &["bogus=1".into()]).unwrap_err();
        assert!(e.contains("\"bogus\""), "{e}");
        assert!(e.contains("link_gbps") && e.contains("rai_mbps"), "{e}");
        let e = Config::build(Profile::Paper, 1, &["pmax=abc".into()]).unwrap_err();
        assert!(e.contains("pmax") && e.contains("not a number"), "{e}");
        let e = Config::build(Profile::Paper, 1, &["pmax".into()]).unwrap_err();
        assert!(e.contains("key=value"), "{e}");
    }

    #[test]
    fn profile_follows_the_link_rate_and_overrides_apply_after() {
        let c = Config::build(
            Profile::Paper,
            1,
            &["link_gbps=100".into(), "rai_mbps=7".into()],
        )
        .unwrap();
        assert_eq!(c.dcqcn.line_mbps, 100_000.0);
        // Paper/htsim R_HAI = link / 10.
        assert_eq!(c.dcqcn.rhai_mbps, 10_000.0);
        assert_eq!(c.dcqcn.rai_mbps, 7.0);
    }
}
