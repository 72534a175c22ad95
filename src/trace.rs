//! `rnic trace show|check|fix`: decode, verify and repair RoCEv2 captures.

use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use rnic_wire::ext::Syndrome;
use rnic_wire::pcap::{self, Capture, Format, LINKTYPE_ETHERNET, PcapWriter, Record};
use rnic_wire::{IpRepr, RoceLocation, RocePacket, icrc, ipv4, locate, udp};
use serde_json::json;

use crate::summary::summarize;

/// Which UDP destination ports count as RoCEv2.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct PortOpts {
    /// Also treat this UDP destination port as RoCEv2 (4791 always is); repeatable.
    #[arg(long = "roce-port", value_name = "N")]
    pub roce_ports: Vec<u16>,
}

impl PortOpts {
    pub fn ports(&self) -> Vec<u16> {
        let mut p = vec![udp::ROCE_PORT];
        p.extend(&self.roce_ports);
        p
    }
}

#[derive(clap::Args, Clone, Debug, Default)]
pub struct ShowOpts {
    #[command(flatten)]
    pub ports: PortOpts,
    /// One JSON object per frame (JSON Lines) instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Clone, Debug, Default)]
pub struct CheckOpts {
    #[command(flatten)]
    pub ports: PortOpts,
    /// Print a verdict for every RoCEv2 frame, not only for failures.
    #[arg(long, short)]
    pub verbose: bool,
}

/// The ICRC verdict of one RoCEv2 frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IcrcVerdict {
    Ok(u32),
    Bad {
        wire: u32,
        calc: u32,
    },
    /// The ICRC cannot be checked (truncated frame, unsupported header).
    Unverifiable(String),
}

impl IcrcVerdict {
    fn is_ok(&self) -> bool {
        matches!(self, IcrcVerdict::Ok(_))
    }

    fn text(&self) -> String {
        match self {
            IcrcVerdict::Ok(_) => "icrc=ok".into(),
            IcrcVerdict::Bad { wire, calc } => {
                format!(
                    "icrc=BAD(wire {} calc {})",
                    icrc_hex(*wire),
                    icrc_hex(*calc)
                )
            }
            IcrcVerdict::Unverifiable(why) => format!("icrc=UNCHECKED({why})"),
        }
    }
}

/// An ICRC as its bytes appear on the wire (least significant byte first), e.g. `82fd002a`.
fn icrc_hex(c: u32) -> String {
    let b = c.to_le_bytes();
    format!("{:02x}{:02x}{:02x}{:02x}", b[0], b[1], b[2], b[3])
}

/// Everything known about one frame.
pub enum Analysis<'a> {
    Roce {
        packet: Box<Result<RocePacket<'a>, rnic_wire::Error>>,
        icrc: IcrcVerdict,
        /// IPv4 header checksum verdict; `None` for IPv6 or when the header is cut off.
        ipv4_ok: Option<bool>,
    },
    Other(crate::summary::Summary),
    /// A link type other than Ethernet.
    OtherLink(u32),
}

/// Looks at one captured frame.
pub fn analyze<'a>(rec: &'a Record, ports: &[u16]) -> Analysis<'a> {
    if rec.linktype != LINKTYPE_ETHERNET {
        return Analysis::OtherLink(rec.linktype);
    }
    let frame = &rec.data[..];
    let Some(loc) = locate(frame, ports) else {
        return Analysis::Other(summarize(frame));
    };
    Analysis::Roce {
        packet: Box::new(RocePacket::parse(frame)),
        icrc: icrc_verdict(rec, &loc),
        ipv4_ok: ipv4_checksum(frame, &loc),
    }
}

fn icrc_verdict(rec: &Record, loc: &RoceLocation) -> IcrcVerdict {
    let frame = &rec.data[..];
    if loc.truncated(frame) {
        let cut = if (rec.orig_len as usize) > frame.len() {
            format!(", capture kept {} of {} bytes", frame.len(), rec.orig_len)
        } else {
            String::new()
        };
        return IcrcVerdict::Unverifiable(format!(
            "frame ends at {} but the IP length ends at {}{cut}",
            frame.len(),
            loc.ip_end
        ));
    }
    let ip = loc.ip_packet(frame);
    match icrc::compute(ip, loc.ip_offset) {
        Ok(calc) => {
            let wire = icrc::wire(ip).expect("compute checked the length");
            if wire == calc {
                IcrcVerdict::Ok(calc)
            } else {
                IcrcVerdict::Bad { wire, calc }
            }
        }
        Err(e) => IcrcVerdict::Unverifiable(e.to_string()),
    }
}

fn ipv4_checksum(frame: &[u8], loc: &RoceLocation) -> Option<bool> {
    let ip = &frame[loc.ip_offset..];
    if ip.first()? >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(ip[0] & 0x0F) * 4;
    (ihl >= 20 && ip.len() >= ihl).then(|| ipv4::checksum(&ip[..ihl]) == 0)
}

fn read(path: &Path) -> Result<Capture> {
    pcap::read_file(path).map_err(anyhow::Error::from)
}

fn format_name(f: Format) -> &'static str {
    match f {
        Format::Pcap { nanos: true, .. } => "pcap, nanosecond",
        Format::Pcap { nanos: false, .. } => "pcap, microsecond",
        Format::PcapNg => "pcapng",
    }
}

/// The text line of a RoCEv2 frame that parsed.
fn roce_line(p: &RocePacket, out: &mut String) {
    let mut layers = String::from("eth");
    if let Some(tag) = p.eth.vlan {
        let _ = write!(layers, "/vlan{}", tag.vid);
    }
    let ip = p.ip.repr();
    layers.push_str(match ip {
        IpRepr::V4(_) => "/ipv4/udp/bth",
        IpRepr::V6(_) => "/ipv6/udp/bth",
    });
    let b = &p.bth;
    let _ = write!(
        out,
        "{layers:<26} {:<33} qp={:#08x} psn={:<8}",
        p.opcode.to_string(),
        b.dest_qp,
        b.psn
    );
    for (on, name) in [
        (b.solicited, "SE"),
        (b.ack_req, "A"),
        (b.fecn, "FECN"),
        (b.becn, "BECN"),
        (ip.dscp_ecn().1 == 3, "CE"),
    ] {
        if on {
            let _ = write!(out, " {name}");
        }
    }
    let x = &p.ext;
    if let Some(r) = x.reth {
        let _ = write!(
            out,
            " va={:#x} rkey={:#010x} dlen={}",
            r.va, r.rkey, r.dma_len
        );
    }
    if let Some(a) = x.aeth {
        let _ = write!(
            out,
            " aeth=[{} msn={}]",
            Syndrome::decode(a.syndrome),
            a.msn
        );
    }
    if let Some(d) = x.deth {
        let _ = write!(out, " qkey={:#010x} src_qp={:#08x}", d.qkey, d.src_qp);
    }
    if let Some(i) = x.immdt {
        let _ = write!(out, " imm={i:#010x}");
    }
    if let Some(k) = x.ieth {
        let _ = write!(out, " inv_rkey={k:#010x}");
    }
    if let Some(a) = x.atomic_eth {
        let _ = write!(
            out,
            " va={:#x} rkey={:#010x} swap_add={:#x} compare={:#x}",
            a.va, a.rkey, a.swap_add, a.compare
        );
    }
    if let Some(a) = x.atomic_ack_eth {
        let _ = write!(out, " orig={:#x}", a.orig);
    }
    let _ = write!(out, " len={}", p.payload.len());
    if p.pad_cnt != 0 {
        let _ = write!(out, " pad={}", p.pad_cnt);
    }
}

fn show_text(out: &mut impl Write, n: usize, t: f64, a: &Analysis) -> io::Result<()> {
    let mut line = format!("{n:>5} {t:>11.6} ");
    match a {
        Analysis::Roce {
            packet,
            icrc,
            ipv4_ok,
        } => {
            match packet.as_ref() {
                Ok(p) => roce_line(p, &mut line),
                Err(e) => {
                    let _ = write!(line, "{:<26} MALFORMED: {e}", "eth/ip/udp/bth");
                }
            }
            let _ = write!(line, " {}", icrc.text());
            if *ipv4_ok == Some(false) {
                line.push_str(" ipv4_checksum=BAD");
            }
        }
        Analysis::Other(s) => {
            let _ = write!(line, "{:<26} {}", s.layers, s.text);
        }
        Analysis::OtherLink(l) => {
            let _ = write!(line, "link type {l} (not Ethernet): not decoded");
        }
    }
    writeln!(out, "{line}")
}

fn show_json(
    out: &mut impl Write,
    file: &Path,
    n: usize,
    rec: &Record,
    a: &Analysis,
) -> Result<()> {
    let mut v = json!({
        "file": file.display().to_string(),
        "frame": n,
        "ts_ns": rec.ts_ns,
        "len": rec.data.len(),
        "orig_len": rec.orig_len,
    });
    let o = v.as_object_mut().expect("object");
    match a {
        Analysis::Roce {
            packet,
            icrc,
            ipv4_ok,
        } => {
            o.insert("kind".into(), json!("roce"));
            match packet.as_ref() {
                Ok(p) => {
                    o.insert("opcode".into(), json!(p.bth.opcode));
                    o.insert("opcode_name".into(), json!(p.opcode.to_string()));
                    o.insert("pad_cnt".into(), json!(p.pad_cnt));
                    o.insert("desc".into(), serde_json::to_value(p.repr())?);
                }
                Err(e) => {
                    o.insert("error".into(), json!(e.to_string()));
                    o.insert("error_reason".into(), json!(e.reason()));
                }
            }
            let (verdict, wire, calc, why) = match icrc {
                IcrcVerdict::Ok(c) => ("ok", Some(*c), Some(*c), None),
                IcrcVerdict::Bad { wire, calc } => ("bad", Some(*wire), Some(*calc), None),
                IcrcVerdict::Unverifiable(w) => ("unchecked", None, None, Some(w.clone())),
            };
            let hex = |x: Option<u32>| x.map(icrc_hex);
            o.insert("icrc".into(), json!(verdict));
            o.insert("icrc_wire".into(), json!(hex(wire)));
            o.insert("icrc_calc".into(), json!(hex(calc)));
            if let Some(w) = why {
                o.insert("icrc_note".into(), json!(w));
            }
            o.insert("ipv4_checksum_ok".into(), json!(ipv4_ok));
        }
        Analysis::Other(s) => {
            o.insert("kind".into(), json!("other"));
            o.insert("layers".into(), json!(s.layers));
            o.insert("summary".into(), json!(s.text));
        }
        Analysis::OtherLink(l) => {
            o.insert("kind".into(), json!("other_link"));
            o.insert("linktype".into(), json!(l));
        }
    }
    serde_json::to_writer(&mut *out, &v)?;
    writeln!(out)?;
    Ok(())
}

/// `rnic trace show`.
pub fn show(opts: &ShowOpts, files: &[PathBuf]) -> Result<ExitCode> {
    let ports = opts.ports.ports();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut unreadable = false;
    for file in files {
        let cap = match read(file) {
            Ok(c) => c,
            Err(e) => {
                out.flush()?;
                eprintln!("error: {e:#}");
                unreadable = true;
                continue;
            }
        };
        if files.len() > 1 && !opts.json {
            writeln!(
                out,
                "# {}: {} frames ({})",
                file.display(),
                cap.records.len(),
                format_name(cap.format)
            )?;
        }
        let t0 = cap.records.first().map_or(0, |r| r.ts_ns);
        for (i, rec) in cap.records.iter().enumerate() {
            let a = analyze(rec, &ports);
            if opts.json {
                show_json(&mut out, file, i + 1, rec, &a)?;
            } else {
                let t = rec.ts_ns.saturating_sub(t0) as f64 / 1e9;
                show_text(&mut out, i + 1, t, &a)?;
            }
        }
    }
    out.flush()?;
    Ok(if unreadable {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// Counts of `rnic trace check`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckCounts {
    pub frames: usize,
    pub roce: usize,
    pub icrc_ok: usize,
    pub icrc_bad: usize,
    pub ipv4_checksum_bad: usize,
    pub malformed: usize,
}

impl CheckCounts {
    fn add(&mut self, o: &CheckCounts) {
        self.frames += o.frames;
        self.roce += o.roce;
        self.icrc_ok += o.icrc_ok;
        self.icrc_bad += o.icrc_bad;
        self.ipv4_checksum_bad += o.ipv4_checksum_bad;
        self.malformed += o.malformed;
    }
}

/// `rnic trace check`. Exit 0 when every RoCEv2 frame has a good ICRC and IPv4 checksum, 1
/// when any has not, 2 when an input cannot be read.
pub fn check(opts: &CheckOpts, files: &[PathBuf]) -> Result<ExitCode> {
    let ports = opts.ports.ports();
    let mut total = CheckCounts::default();
    let mut unreadable = false;
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for file in files {
        let cap = match read(file) {
            Ok(c) => c,
            Err(e) => {
                out.flush()?;
                eprintln!("error: {e:#}");
                unreadable = true;
                continue;
            }
        };
        let mut c = CheckCounts {
            frames: cap.records.len(),
            ..Default::default()
        };
        for (i, rec) in cap.records.iter().enumerate() {
            let Analysis::Roce {
                packet,
                icrc,
                ipv4_ok,
            } = analyze(rec, &ports)
            else {
                continue;
            };
            c.roce += 1;
            let mut problems = Vec::new();
            if icrc.is_ok() {
                c.icrc_ok += 1;
            } else {
                c.icrc_bad += 1;
                problems.push(icrc.text());
            }
            if ipv4_ok == Some(false) {
                c.ipv4_checksum_bad += 1;
                problems.push("ipv4_checksum=BAD".into());
            }
            let what = match packet.as_ref() {
                Ok(p) => format!("{} qp={:#08x} psn={}", p.opcode, p.bth.dest_qp, p.bth.psn),
                Err(e) => {
                    c.malformed += 1;
                    format!("MALFORMED: {e}")
                }
            };
            if !problems.is_empty() || opts.verbose {
                let verdict = if problems.is_empty() {
                    icrc.text()
                } else {
                    problems.join(" ")
                };
                writeln!(out, "{} #{}: {what} {verdict}", file.display(), i + 1)?;
            }
        }
        writeln!(
            out,
            "{}: frames={} roce={} icrc_ok={} icrc_bad={} ipv4_checksum_bad={} malformed={}",
            file.display(),
            c.frames,
            c.roce,
            c.icrc_ok,
            c.icrc_bad,
            c.ipv4_checksum_bad,
            c.malformed
        )?;
        total.add(&c);
    }
    writeln!(
        out,
        "frames={} roce={} icrc_ok={} icrc_bad={}",
        total.frames, total.roce, total.icrc_ok, total.icrc_bad
    )?;
    out.flush()?;
    Ok(if unreadable {
        ExitCode::from(2)
    } else if total.icrc_bad > 0 || total.ipv4_checksum_bad > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `rnic trace fix IN OUT`.
pub fn fix(opts: &PortOpts, input: &Path, output: &Path) -> Result<ExitCode> {
    let ports = opts.ports();
    let cap = read(input)?;
    let linktype = cap
        .records
        .first()
        .map_or(LINKTYPE_ETHERNET, |r| r.linktype);
    if let Some((i, r)) = cap
        .records
        .iter()
        .enumerate()
        .find(|(_, r)| r.linktype != linktype)
    {
        bail!(
            "{}: frame {} has link type {} but frame 1 has {}; one pcap holds one link type",
            input.display(),
            i + 1,
            r.linktype,
            linktype
        );
    }
    let f = std::fs::File::create(output)
        .with_context(|| format!("{}: cannot create", output.display()))?;
    let mut w = PcapWriter::new(BufWriter::new(f), linktype, true)
        .with_context(|| format!("{}: cannot write", output.display()))?;
    let (mut roce, mut icrc_fixed, mut ipv4_fixed, mut skipped) = (0, 0, 0, 0);
    for (i, rec) in cap.records.iter().enumerate() {
        let mut data = rec.data.clone();
        let loc = (rec.linktype == LINKTYPE_ETHERNET)
            .then(|| locate(&data, &ports))
            .flatten();
        if let Some(loc) = loc {
            roce += 1;
            let ip_off = loc.ip_offset;
            if data[ip_off] >> 4 == 4 {
                let ihl = usize::from(data[ip_off] & 0x0F) * 4;
                if ihl >= 20 && data.len() >= ip_off + ihl {
                    let hdr = &mut data[ip_off..ip_off + ihl];
                    let before = [hdr[10], hdr[11]];
                    hdr[10..12].fill(0);
                    let c = ipv4::checksum(hdr);
                    hdr[10..12].copy_from_slice(&c.to_be_bytes());
                    ipv4_fixed += usize::from(before != c.to_be_bytes());
                }
            }
            if loc.truncated(&data) {
                skipped += 1;
                eprintln!("frame {}: truncated, ICRC left as it is", i + 1);
            } else {
                let ip = &mut data[ip_off..loc.ip_end];
                let before = icrc::wire(ip);
                match icrc::fill(ip, ip_off) {
                    Ok(c) => icrc_fixed += usize::from(before != Some(c)),
                    Err(e) => {
                        skipped += 1;
                        eprintln!("frame {}: {e}; ICRC left as it is", i + 1);
                    }
                }
            }
        }
        w.write_cut(rec.ts_ns, &data, rec.orig_len as usize)
            .with_context(|| format!("{}: cannot write", output.display()))?;
    }
    w.finish()
        .with_context(|| format!("{}: cannot write", output.display()))?;
    println!(
        "frames={} roce={roce} icrc_changed={icrc_fixed} ipv4_checksum_changed={ipv4_fixed} unfixable={skipped}",
        cap.records.len()
    );
    Ok(ExitCode::SUCCESS)
}
