//! Packet capture taps: the frames a link carries, written as they are to a pcap file with
//! nanosecond timestamps (simulated time), so that Wireshark opens them.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use rnic_wire::pcap::{LINKTYPE_ETHERNET, PcapWriter};

/// A capture of one link direction.
pub struct Tap {
    path: PathBuf,
    writer: Option<PcapWriter<BufWriter<File>>>,
    limit: u64,
    /// Frames written.
    pub written: u64,
    /// Frames not written because the limit was reached.
    pub skipped: u64,
    error: Option<io::Error>,
}

impl Tap {
    /// Creates `path` and writes the pcap header; at most `limit` frames are written.
    pub fn create(path: impl AsRef<Path>, limit: u64) -> io::Result<Tap> {
        let path = path.as_ref().to_owned();
        let f = File::create(&path)?;
        let w = PcapWriter::new(BufWriter::new(f), LINKTYPE_ETHERNET, true)?;
        Ok(Tap {
            path,
            writer: Some(w),
            limit,
            written: 0,
            skipped: 0,
            error: None,
        })
    }

    /// Records `frame` at `ts_ns`. The first write error is kept and reported by
    /// [`Tap::finish`].
    pub fn record(&mut self, ts_ns: u64, frame: &[u8]) {
        if self.written >= self.limit {
            self.skipped += 1;
            return;
        }
        if let Some(w) = self.writer.as_mut() {
            match w.write(ts_ns, frame) {
                Ok(()) => self.written += 1,
                Err(e) => {
                    self.error = Some(e);
                    self.writer = None;
                }
            }
        }
    }

    /// The capture file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes the file; an error names it.
    pub fn finish(&mut self) -> anyhow::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(anyhow::anyhow!("writing {}: {e}", self.path.display()));
        }
        if let Some(w) = self.writer.take() {
            w.finish()
                .map_err(|e| anyhow::anyhow!("writing {}: {e}", self.path.display()))?;
        }
        Ok(())
    }
}
