//! A writer for the "newc" cpio format, the only one the kernel accepts for an initramfs.
//!
//! Entries are written in the order given; the kernel creates them in that order, so a
//! directory must come before what it contains (the image builder sorts its paths).

use std::io::{self, Write};

/// File type bits of `st_mode`.
const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFLNK: u32 = 0o120000;

/// Writes a newc archive entry by entry.
pub struct CpioWriter<W: Write> {
    out: W,
    written: u64,
    next_ino: u32,
}

impl<W: Write> CpioWriter<W> {
    pub fn new(out: W) -> Self {
        CpioWriter {
            out,
            written: 0,
            next_ino: 1,
        }
    }

    /// A directory with permissions `perm` (e.g. 0o755).
    pub fn dir(&mut self, path: &str, perm: u32) -> io::Result<()> {
        self.entry(path, S_IFDIR | perm, 2, &[])
    }

    /// A regular file.
    pub fn file(&mut self, path: &str, perm: u32, data: &[u8]) -> io::Result<()> {
        self.entry(path, S_IFREG | perm, 1, data)
    }

    /// A symbolic link pointing at `target`.
    pub fn symlink(&mut self, path: &str, target: &str) -> io::Result<()> {
        self.entry(path, S_IFLNK | 0o777, 1, target.as_bytes())
    }

    /// Writes the trailer and returns the sink.
    pub fn finish(mut self) -> io::Result<W> {
        self.entry("TRAILER!!!", 0, 1, &[])?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn entry(&mut self, path: &str, mode: u32, nlink: u32, data: &[u8]) -> io::Result<()> {
        let name = path.trim_start_matches('/');
        if name.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cpio entry with an empty name",
            ));
        }
        let size = u32::try_from(data.len()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{path}: {} bytes is too large for cpio", data.len()),
            )
        })?;
        let ino = if name == "TRAILER!!!" {
            0
        } else {
            self.next_ino
        };
        self.next_ino += 1;
        // Fields: magic, ino, mode, uid, gid, nlink, mtime, filesize, devmajor, devminor,
        // rdevmajor, rdevminor, namesize (with the NUL), check.
        let header = format!(
            "070701{ino:08X}{mode:08X}{:08X}{:08X}{nlink:08X}{:08X}{size:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}",
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            name.len() + 1,
            0
        );
        self.put(header.as_bytes())?;
        self.put(name.as_bytes())?;
        self.put(&[0])?;
        self.align()?;
        self.put(data)?;
        self.align()
    }

    fn put(&mut self, b: &[u8]) -> io::Result<()> {
        self.out.write_all(b)?;
        self.written += b.len() as u64;
        Ok(())
    }

    fn align(&mut self) -> io::Result<()> {
        let pad = (4 - (self.written % 4) as usize) % 4;
        self.put(&[0u8; 3][..pad])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads back the entries of a newc archive (name, mode, data) by the format's definition.
    fn read_back(b: &[u8]) -> Vec<(String, u32, Vec<u8>)> {
        let hex = |s: &[u8]| u32::from_str_radix(std::str::from_utf8(s).unwrap(), 16).unwrap();
        let mut at = 0;
        let mut out = Vec::new();
        loop {
            assert_eq!(&b[at..at + 6], b"070701", "magic at {at}");
            let mode = hex(&b[at + 14..at + 22]);
            let size = hex(&b[at + 54..at + 62]) as usize;
            let namesize = hex(&b[at + 94..at + 102]) as usize;
            let name_at = at + 110;
            let name = String::from_utf8(b[name_at..name_at + namesize - 1].to_vec()).unwrap();
            assert_eq!(b[name_at + namesize - 1], 0);
            let data_at = (name_at + namesize).next_multiple_of(4);
            let data = b[data_at..data_at + size].to_vec();
            at = (data_at + size).next_multiple_of(4);
            if name == "TRAILER!!!" {
                assert_eq!(at, b.len());
                return out;
            }
            out.push((name, mode, data));
        }
    }

    #[test]
    fn entries_round_trip_with_alignment() {
        let mut w = CpioWriter::new(Vec::new());
        w.dir("/bin", 0o755).unwrap();
        w.file("/bin/x", 0o755, b"abcde").unwrap();
        w.symlink("/bin/sh", "busybox").unwrap();
        w.file("init", 0o644, b"").unwrap();
        let bytes = w.finish().unwrap();
        assert_eq!(bytes.len() % 4, 0);
        let e = read_back(&bytes);
        assert_eq!(e.len(), 4);
        assert_eq!(e[0], ("bin".into(), 0o040755, vec![]));
        assert_eq!(e[1], ("bin/x".into(), 0o100755, b"abcde".to_vec()));
        assert_eq!(e[2], ("bin/sh".into(), 0o120777, b"busybox".to_vec()));
        assert_eq!(e[3], ("init".into(), 0o100644, vec![]));
    }

    #[test]
    fn empty_name_is_refused() {
        let mut w = CpioWriter::new(Vec::new());
        assert!(w.file("/", 0o644, b"x").is_err());
    }
}
