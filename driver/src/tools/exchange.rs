//! The out-of-band exchange of the rdma-core examples (`ibv_rc_pingpong`, `ibv_ud_pingpong`):
//! `"%04x:%06x:%06x:%s"` = LID:QPN:PSN:GID as a fixed 52-byte message with its NUL, the GID as
//! 32 hex digits of its 16 bytes in order.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv6Addr};

/// Length of the message on the wire, NUL included.
pub const MSG_LEN: usize = 52;

/// One side's connection data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dest {
    pub lid: u16,
    pub qpn: u32,
    pub psn: u32,
    pub gid: [u8; 16],
}

impl Dest {
    /// The GID of an address: IPv4 as `::ffff:a.b.c.d`.
    pub fn gid_of(ip: IpAddr) -> [u8; 16] {
        match ip {
            IpAddr::V4(v) => v.to_ipv6_mapped().octets(),
            IpAddr::V6(v) => v.octets(),
        }
    }

    /// The address a GID stands for (IPv4-mapped GIDs as IPv4).
    pub fn ip(&self) -> IpAddr {
        let v6 = Ipv6Addr::from(self.gid);
        match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        }
    }

    /// The 52 bytes.
    pub fn encode(&self) -> [u8; MSG_LEN] {
        let hex: String = self.gid.iter().map(|b| format!("{b:02x}")).collect();
        let s = format!("{:04x}:{:06x}:{:06x}:{hex}", self.lid, self.qpn, self.psn);
        let mut out = [0u8; MSG_LEN];
        out[..s.len()].copy_from_slice(s.as_bytes());
        out
    }

    /// Parses a message; the error says what is wrong with it.
    pub fn decode(buf: &[u8]) -> Result<Dest, String> {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let s = std::str::from_utf8(&buf[..end]).map_err(|_| "not text".to_string())?;
        let f: Vec<&str> = s.split(':').collect();
        if f.len() != 4 || f[3].len() != 32 {
            return Err(format!("{s:?} is not LID:QPN:PSN:GID"));
        }
        let n = |t: &str, what: &str| {
            u32::from_str_radix(t, 16).map_err(|_| format!("{what} {t:?} is not hex in {s:?}"))
        };
        let mut gid = [0u8; 16];
        for (i, g) in gid.iter_mut().enumerate() {
            *g = u8::from_str_radix(&f[3][2 * i..2 * i + 2], 16)
                .map_err(|_| format!("GID {:?} is not hex", f[3]))?;
        }
        Ok(Dest {
            lid: n(f[0], "LID")? as u16,
            qpn: n(f[1], "QPN")? & 0xFF_FFFF,
            psn: n(f[2], "PSN")? & 0xFF_FFFF,
            gid,
        })
    }
}

impl fmt::Display for Dest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "LID {:#06x}, QPN {:#08x}, PSN {:#08x}, GID {}",
            self.lid,
            self.qpn,
            self.psn,
            Ipv6Addr::from(self.gid)
        )
    }
}

/// Reads exactly `n` bytes (the examples read fixed sizes).
pub fn read_exact<R: Read>(r: &mut R, n: usize, what: &str) -> io::Result<Vec<u8>> {
    let mut b = vec![0; n];
    r.read_exact(&mut b).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("reading the peer's {what} ({n} bytes): {e}"),
        )
    })?;
    Ok(b)
}

/// The client's half: write ours, read theirs, write "done".
pub fn client<S: Read + Write>(s: &mut S, ours: &Dest) -> io::Result<Dest> {
    s.write_all(&ours.encode())?;
    let theirs = decode_io(&read_exact(s, MSG_LEN, "connection data")?)?;
    s.write_all(b"done\0")?;
    Ok(theirs)
}

/// The server's first half: read theirs (then connect, then [`server_reply`]).
pub fn server_read<S: Read>(s: &mut S) -> io::Result<Dest> {
    decode_io(&read_exact(s, MSG_LEN, "connection data")?)
}

/// The server's second half: write ours, read "done".
pub fn server_reply<S: Read + Write>(s: &mut S, ours: &Dest) -> io::Result<()> {
    s.write_all(&ours.encode())?;
    let done = read_exact(s, 5, "\"done\"")?;
    if &done[..4] != b"done" {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "expected \"done\", got {:?}",
                String::from_utf8_lossy(&done)
            ),
        ));
    }
    Ok(())
}

fn decode_io(b: &[u8]) -> io::Result<Dest> {
    Dest::decode(b).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_is_the_one_rdma_core_writes() {
        let d = Dest {
            lid: 0,
            qpn: 0x11,
            psn: 0x5a8e38,
            gid: Dest::gid_of(IpAddr::from([10, 0, 0, 1])),
        };
        let m = d.encode();
        assert_eq!(
            &m[..51],
            b"0000:000011:5a8e38:00000000000000000000ffff0a000001"
        );
        assert_eq!(m[51], 0);
        assert_eq!(Dest::decode(&m), Ok(d));
        assert_eq!(d.ip(), IpAddr::from([10, 0, 0, 1]));
        assert!(Dest::decode(b"0000:zz:1:00").is_err());
    }
}
