//! Packet capture files: read pcap (microsecond or nanosecond timestamps, either byte order) and
//! pcapng (section, interface, enhanced, simple and obsolete packet blocks, with the interface's
//! timestamp resolution); write pcap.
//!
//! Written here rather than taken from a crate: the crate that fits (pcap-file 2.0) ignores the
//! pcapng `if_tsresol` option (so default microsecond pcapng timestamps come out 1000 times too
//! small), and its errors carry no file offset. Errors here name the file and the byte offset.

use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Link type of Ethernet frames.
pub const LINKTYPE_ETHERNET: u32 = 1;

/// The container format of a capture file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Classic pcap; `nanos` says whether timestamps are in nanoseconds.
    Pcap {
        nanos: bool,
        big_endian: bool,
    },
    PcapNg,
}

/// One captured frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Timestamp in nanoseconds since the epoch.
    pub ts_ns: u64,
    /// Link type of the interface it was captured on.
    pub linktype: u32,
    /// Length on the wire; larger than `data.len()` when the capture cut the frame.
    pub orig_len: u32,
    pub data: Vec<u8>,
}

/// How a link delivered one captured frame: the record, the copies it passed on intact (0:
/// dropped or corrupted),
/// and when, in the capture's clock (later than the record's own time when the link held the
/// frame back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub record: usize,
    pub copies: u8,
    pub ts_ns: u64,
}

impl Delivery {
    /// Every record once, at its own time.
    pub fn as_captured(records: &[Record]) -> Vec<Delivery> {
        records
            .iter()
            .enumerate()
            .map(|(record, r)| Delivery {
                record,
                copies: 1,
                ts_ns: r.ts_ns,
            })
            .collect()
    }
}

/// A whole capture file in memory.
#[derive(Clone, Debug)]
pub struct Capture {
    pub format: Format,
    pub records: Vec<Record>,
}

/// Why a capture could not be read or written.
#[derive(Debug)]
pub enum PcapError {
    Io {
        path: PathBuf,
        source: io::Error,
    },
    Format {
        path: PathBuf,
        offset: usize,
        what: String,
    },
}

impl fmt::Display for PcapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PcapError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            PcapError::Format { path, offset, what } => {
                write!(f, "{}: at byte {offset}: {what}", path.display())
            }
        }
    }
}

impl std::error::Error for PcapError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PcapError::Io { source, .. } => Some(source),
            PcapError::Format { .. } => None,
        }
    }
}

/// A format error before the file name is attached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError {
    pub offset: usize,
    pub what: String,
}

fn ferr(offset: usize, what: impl Into<String>) -> FormatError {
    FormatError {
        offset,
        what: what.into(),
    }
}

/// Reads a pcap or pcapng file.
pub fn read_file(path: impl AsRef<Path>) -> Result<Capture, PcapError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| PcapError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse(&bytes).map_err(|e| PcapError::Format {
        path: path.to_owned(),
        offset: e.offset,
        what: e.what,
    })
}

/// Parses a pcap or pcapng file held in memory.
pub fn parse(bytes: &[u8]) -> Result<Capture, FormatError> {
    if bytes.len() < 4 {
        return Err(ferr(
            0,
            format!("file of {} bytes is too short for a capture", bytes.len()),
        ));
    }
    match [bytes[0], bytes[1], bytes[2], bytes[3]] {
        [0xD4, 0xC3, 0xB2, 0xA1] => parse_pcap(bytes, false, false),
        [0xA1, 0xB2, 0xC3, 0xD4] => parse_pcap(bytes, true, false),
        [0x4D, 0x3C, 0xB2, 0xA1] => parse_pcap(bytes, false, true),
        [0xA1, 0xB2, 0x3C, 0x4D] => parse_pcap(bytes, true, true),
        [0x0A, 0x0D, 0x0D, 0x0A] => parse_pcapng(bytes),
        m => Err(ferr(
            0,
            format!(
                "not a pcap or pcapng file (magic {:02x}{:02x}{:02x}{:02x})",
                m[0], m[1], m[2], m[3]
            ),
        )),
    }
}

#[derive(Clone, Copy)]
struct Endian(bool);

impl Endian {
    fn u16(self, b: &[u8], at: usize) -> u16 {
        let v = [b[at], b[at + 1]];
        if self.0 {
            u16::from_be_bytes(v)
        } else {
            u16::from_le_bytes(v)
        }
    }
    fn u32(self, b: &[u8], at: usize) -> u32 {
        let v = [b[at], b[at + 1], b[at + 2], b[at + 3]];
        if self.0 {
            u32::from_be_bytes(v)
        } else {
            u32::from_le_bytes(v)
        }
    }
}

fn parse_pcap(b: &[u8], big: bool, nanos: bool) -> Result<Capture, FormatError> {
    if b.len() < 24 {
        return Err(ferr(
            0,
            format!("pcap header truncated ({} of 24 bytes)", b.len()),
        ));
    }
    let e = Endian(big);
    let linktype = e.u32(b, 20) & 0x0FFF_FFFF;
    let mut records = Vec::new();
    let mut off = 24;
    while off < b.len() {
        if b.len() - off < 16 {
            return Err(ferr(
                off,
                format!(
                    "record header of frame {} truncated ({} of 16 bytes)",
                    records.len() + 1,
                    b.len() - off
                ),
            ));
        }
        let sec = u64::from(e.u32(b, off));
        let frac = u64::from(e.u32(b, off + 4));
        let incl = e.u32(b, off + 8) as usize;
        let orig = e.u32(b, off + 12);
        let data_at = off + 16;
        if b.len() - data_at < incl {
            return Err(ferr(
                off,
                format!(
                    "frame {} truncated: record says {incl} bytes, {} remain",
                    records.len() + 1,
                    b.len() - data_at
                ),
            ));
        }
        let ts_ns = sec * 1_000_000_000 + if nanos { frac } else { frac * 1000 };
        records.push(Record {
            ts_ns,
            linktype,
            orig_len: orig,
            data: b[data_at..data_at + incl].to_vec(),
        });
        off = data_at + incl;
    }
    Ok(Capture {
        format: Format::Pcap {
            nanos,
            big_endian: big,
        },
        records,
    })
}

struct Interface {
    linktype: u32,
    /// Timestamp unit: (true, k) = 2^-k s, (false, k) = 10^-k s.
    resol: (bool, u8),
}

fn ts_to_ns(ts: u64, resol: (bool, u8)) -> u64 {
    let ts = u128::from(ts);
    let ns = match resol {
        (false, k) if k <= 9 => ts * 10u128.pow(u32::from(9 - k)),
        (false, k) => ts / 10u128.pow(u32::from(k.min(38) - 9)),
        (true, k) => (ts * 1_000_000_000) >> k.min(127),
    };
    u64::try_from(ns).unwrap_or(u64::MAX)
}

fn parse_pcapng(b: &[u8]) -> Result<Capture, FormatError> {
    let mut records = Vec::new();
    let mut ifaces: Vec<Interface> = Vec::new();
    let mut e = Endian(false);
    let mut off = 0;
    while off < b.len() {
        if b.len() - off < 12 {
            return Err(ferr(
                off,
                format!("block header truncated ({} bytes left)", b.len() - off),
            ));
        }
        let is_shb = b[off..off + 4] == [0x0A, 0x0D, 0x0D, 0x0A];
        if is_shb {
            e = match b[off + 8..off + 12] {
                [0x1A, 0x2B, 0x3C, 0x4D] => Endian(true),
                [0x4D, 0x3C, 0x2B, 0x1A] => Endian(false),
                _ => return Err(ferr(off + 8, "section header: bad byte-order magic")),
            };
            ifaces.clear();
        }
        let btype = e.u32(b, off);
        let blen = e.u32(b, off + 4) as usize;
        if blen < 12 || blen % 4 != 0 {
            return Err(ferr(off + 4, format!("block length {blen} is invalid")));
        }
        if b.len() - off < blen {
            return Err(ferr(
                off,
                format!(
                    "block of {blen} bytes truncated ({} bytes left)",
                    b.len() - off
                ),
            ));
        }
        if e.u32(b, off + blen - 4) as usize != blen {
            return Err(ferr(
                off + blen - 4,
                "block's trailing length differs from its leading length",
            ));
        }
        let body = &b[off + 8..off + blen - 4];
        let at = off + 8;
        let iface = |id: usize, ifaces: &[Interface]| -> Result<(u32, (bool, u8)), FormatError> {
            ifaces
                .get(id)
                .map(|i| (i.linktype, i.resol))
                .ok_or_else(|| {
                    ferr(
                        at,
                        format!("packet names interface {id}, which is not described"),
                    )
                })
        };
        match btype {
            1 => {
                if body.len() < 8 {
                    return Err(ferr(at, "interface description block too short"));
                }
                let linktype = u32::from(e.u16(body, 0));
                let mut resol = (false, 6u8);
                let mut o = 8;
                while o + 4 <= body.len() {
                    let code = e.u16(body, o);
                    let len = usize::from(e.u16(body, o + 2));
                    if code == 0 {
                        break;
                    }
                    if body.len() - o - 4 < len {
                        return Err(ferr(at + o, "interface option overruns its block"));
                    }
                    if code == 9 && len >= 1 {
                        let v = body[o + 4];
                        resol = (v & 0x80 != 0, v & 0x7F);
                    }
                    o += 4 + len.div_ceil(4) * 4;
                }
                ifaces.push(Interface { linktype, resol });
            }
            6 | 2 => {
                if body.len() < 20 {
                    return Err(ferr(at, "packet block too short"));
                }
                let id = if btype == 6 {
                    e.u32(body, 0) as usize
                } else {
                    usize::from(e.u16(body, 0))
                };
                let ts = (u64::from(e.u32(body, 4)) << 32) | u64::from(e.u32(body, 8));
                let cap = e.u32(body, 12) as usize;
                let orig = e.u32(body, 16);
                if body.len() - 20 < cap {
                    return Err(ferr(
                        at,
                        format!("packet of {cap} bytes overruns its block"),
                    ));
                }
                let (linktype, resol) = iface(id, &ifaces)?;
                records.push(Record {
                    ts_ns: ts_to_ns(ts, resol),
                    linktype,
                    orig_len: orig,
                    data: body[20..20 + cap].to_vec(),
                });
            }
            3 => {
                if body.len() < 4 {
                    return Err(ferr(at, "simple packet block too short"));
                }
                let orig = e.u32(body, 0);
                let cap = (orig as usize).min(body.len() - 4);
                let (linktype, _) = iface(0, &ifaces)?;
                records.push(Record {
                    ts_ns: 0,
                    linktype,
                    orig_len: orig,
                    data: body[4..4 + cap].to_vec(),
                });
            }
            _ => {} // section header, statistics, name resolution, custom: nothing to take
        }
        off += blen;
    }
    Ok(Capture {
        format: Format::PcapNg,
        records,
    })
}

/// Writes a classic little-endian pcap with nanosecond or microsecond timestamps.
pub struct PcapWriter<W: Write> {
    out: W,
    nanos: bool,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header.
    pub fn new(mut out: W, linktype: u32, nanos: bool) -> io::Result<Self> {
        let magic: u32 = if nanos { 0xA1B2_3C4D } else { 0xA1B2_C3D4 };
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&magic.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&262_144u32.to_le_bytes());
        h.extend_from_slice(&linktype.to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter { out, nanos })
    }

    /// Writes one frame, captured whole.
    pub fn write(&mut self, ts_ns: u64, data: &[u8]) -> io::Result<()> {
        self.write_cut(ts_ns, data, data.len())
    }

    /// Writes one frame of which the capture kept `data` out of `orig_len` bytes.
    pub fn write_cut(&mut self, ts_ns: u64, data: &[u8], orig_len: usize) -> io::Result<()> {
        let too_big = || io::Error::new(io::ErrorKind::InvalidInput, "frame over 4 GiB");
        let len = u32::try_from(data.len()).map_err(|_| too_big())?;
        let orig = u32::try_from(orig_len.max(data.len())).map_err(|_| too_big())?;
        let sec = u32::try_from(ts_ns / 1_000_000_000).unwrap_or(u32::MAX);
        let frac = if self.nanos {
            ts_ns % 1_000_000_000
        } else {
            ts_ns % 1_000_000_000 / 1000
        } as u32;
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&sec.to_le_bytes());
        h[4..8].copy_from_slice(&frac.to_le_bytes());
        h[8..12].copy_from_slice(&len.to_le_bytes());
        h[12..16].copy_from_slice(&orig.to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(data)
    }

    /// Flushes and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Writes `records` to `path` as an Ethernet pcap with nanosecond timestamps.
pub fn write_file<'a>(
    path: impl AsRef<Path>,
    records: impl IntoIterator<Item = (u64, &'a [u8])>,
) -> Result<(), PcapError> {
    let path = path.as_ref();
    let io_err = |source| PcapError::Io {
        path: path.to_owned(),
        source,
    };
    let f = std::fs::File::create(path).map_err(io_err)?;
    let mut w = PcapWriter::new(io::BufWriter::new(f), LINKTYPE_ETHERNET, true).map_err(io_err)?;
    for (ts, data) in records {
        w.write(ts, data).map_err(io_err)?;
    }
    w.finish().map_err(io_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pcap_bytes(nanos: bool, frames: &[(u64, &[u8])]) -> Vec<u8> {
        let mut w = PcapWriter::new(Vec::new(), 1, nanos).unwrap();
        for &(t, d) in frames {
            w.write(t, d).unwrap();
        }
        w.finish().unwrap()
    }

    #[test]
    fn pcap_round_trip_us_and_ns() {
        let frames: [(u64, &[u8]); 2] = [(1_700_000_000_123_456_789, b"abc"), (5, b"")];
        let c = parse(&pcap_bytes(true, &frames)).unwrap();
        assert_eq!(c.records.len(), 2);
        assert_eq!(c.records[0].ts_ns, 1_700_000_000_123_456_789);
        assert_eq!(c.records[0].data, b"abc");
        let c = parse(&pcap_bytes(false, &frames)).unwrap();
        assert_eq!(c.records[0].ts_ns, 1_700_000_000_123_456_000);
        assert_eq!(
            c.format,
            Format::Pcap {
                nanos: false,
                big_endian: false
            }
        );
    }

    #[test]
    fn big_endian_pcap_hand_worked() {
        let mut b = vec![0xA1, 0xB2, 0xC3, 0xD4, 0, 2, 0, 4];
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(&[0, 0, 0xFF, 0xFF, 0, 0, 0, 1]);
        b.extend_from_slice(&[0, 0, 0, 2, 0, 0, 0, 7, 0, 0, 0, 2, 0, 0, 0, 60]);
        b.extend_from_slice(&[0xAB, 0xCD]);
        let c = parse(&b).unwrap();
        let r = &c.records[0];
        assert_eq!((r.ts_ns, r.linktype, r.orig_len), (2_000_007_000, 1, 60));
        assert_eq!(r.data, [0xAB, 0xCD]);
    }

    fn block(btype: u32, body: &[u8]) -> Vec<u8> {
        let len = (12 + body.len().div_ceil(4) * 4) as u32;
        let mut v = btype.to_le_bytes().to_vec();
        v.extend_from_slice(&len.to_le_bytes());
        v.extend_from_slice(body);
        v.resize(len as usize - 4, 0);
        v.extend_from_slice(&len.to_le_bytes());
        v
    }

    #[test]
    fn pcapng_with_tsresol() {
        let mut shb = 0x1A2B_3C4Du32.to_le_bytes().to_vec();
        shb.extend_from_slice(&[1, 0, 0, 0]);
        shb.extend_from_slice(&u64::MAX.to_le_bytes());
        let mut f = block(0x0A0D_0D0A, &shb);
        // Interface 0: default resolution (microseconds). Interface 1: if_tsresol = 9 (ns).
        f.extend(block(1, &[1, 0, 0, 0, 0, 0, 4, 0]));
        f.extend(block(
            1,
            &[1, 0, 0, 0, 0, 0, 4, 0, 9, 0, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0],
        ));
        for (id, ts) in [(0u32, 1_500_000u64), (1, 1_500_000_000)] {
            let mut epb = id.to_le_bytes().to_vec();
            epb.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
            epb.extend_from_slice(&(ts as u32).to_le_bytes());
            epb.extend_from_slice(&3u32.to_le_bytes());
            epb.extend_from_slice(&3u32.to_le_bytes());
            epb.extend_from_slice(b"xyz");
            f.extend(block(6, &epb));
        }
        let c = parse(&f).unwrap();
        assert_eq!(c.format, Format::PcapNg);
        assert_eq!(c.records.len(), 2);
        assert_eq!(c.records[0].ts_ns, 1_500_000_000);
        assert_eq!(c.records[1].ts_ns, 1_500_000_000);
        assert_eq!(c.records[1].data, b"xyz");
    }

    #[test]
    fn errors_name_the_offset() {
        let e = parse(b"hello world").unwrap_err();
        assert_eq!(e.offset, 0);
        assert!(e.what.contains("not a pcap or pcapng file"), "{}", e.what);
        let mut b = pcap_bytes(false, &[(0, b"abcdef")]);
        b.truncate(b.len() - 2);
        let e = parse(&b).unwrap_err();
        assert_eq!(e.offset, 24);
        assert!(e.what.contains("frame 1 truncated"), "{}", e.what);
    }
}
