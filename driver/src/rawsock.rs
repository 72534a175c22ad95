//! A frame link on a real Ethernet interface: a Linux `AF_PACKET` raw socket bound to one
//! interface in promiscuous mode, so the model NIC (with a MAC and IP of its own) can talk to
//! any peer on that wire. Needs CAP_NET_RAW. Give the NIC an address the kernel does not own
//! on that interface (a veth or tap of its own is best), or the kernel answers for it too.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use crate::model::FrameLink;

/// ETH_P_ALL in network byte order.
fn eth_p_all() -> u16 {
    (libc::ETH_P_ALL as u16).to_be()
}

/// An `AF_PACKET` socket on one interface.
pub struct RawSocketLink {
    fd: OwnedFd,
    ifname: String,
    buf: Vec<u8>,
}

impl RawSocketLink {
    /// Opens a raw socket on `ifname`, promiscuous. Errors name the interface and the step.
    pub fn open(ifname: &str) -> io::Result<RawSocketLink> {
        let ctx = |step: &str, e: io::Error| {
            io::Error::new(e.kind(), format!("raw socket on {ifname}: {step}: {e}"))
        };
        let name = CString::new(ifname)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface name has a NUL"))?;
        // SAFETY: if_nametoindex reads the NUL-terminated string we own; no other memory.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
        if ifindex == 0 {
            return Err(ctx("no such interface", io::Error::last_os_error()));
        }
        // SAFETY: socket(2) with constant arguments; the result is checked before use.
        let raw = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                i32::from(eth_p_all()),
            )
        };
        if raw < 0 {
            return Err(ctx(
                "socket(AF_PACKET) (needs CAP_NET_RAW)",
                io::Error::last_os_error(),
            ));
        }
        // SAFETY: raw is a fresh descriptor we own; OwnedFd closes it exactly once.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: sockaddr_ll is plain data; all-zero is a valid value before we fill it.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = eth_p_all();
        sll.sll_ifindex = ifindex as i32;
        // SAFETY: bind(2) reads exactly size_of::<sockaddr_ll>() bytes of `sll`, which lives
        // on our stack for the call.
        let r = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&sll as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        if r < 0 {
            return Err(ctx("bind", io::Error::last_os_error()));
        }
        // SAFETY: packet_mreq is plain data; all-zero is valid before we fill it.
        let mut mreq: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mreq.mr_ifindex = ifindex as i32;
        mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
        // SAFETY: setsockopt(2) reads size_of::<packet_mreq>() bytes of `mreq` for the call.
        let r = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_ADD_MEMBERSHIP,
                (&mreq as *const libc::packet_mreq).cast(),
                std::mem::size_of::<libc::packet_mreq>() as u32,
            )
        };
        if r < 0 {
            return Err(ctx("promiscuous mode", io::Error::last_os_error()));
        }
        Ok(RawSocketLink {
            fd,
            ifname: ifname.to_string(),
            buf: vec![0; 65536 + 64],
        })
    }
}

impl FrameLink for RawSocketLink {
    fn send(&mut self, frame: &[u8]) -> io::Result<()> {
        // SAFETY: send(2) reads frame.len() bytes from the slice for the call.
        let n = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("raw socket on {}: send: {e}", self.ifname),
            ));
        }
        Ok(())
    }

    fn recv(&mut self, timeout: Duration) -> io::Result<Option<Vec<u8>>> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let mut pfd = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = left.as_millis().min(i32::MAX as u128) as i32;
            // SAFETY: poll(2) on one pollfd that lives on our stack for the call.
            let r = unsafe { libc::poll(&mut pfd, 1, ms) };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if r == 0 {
                return Ok(None);
            }
            // SAFETY: sockaddr_ll is plain data; recvfrom fills it.
            let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut flen = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            // SAFETY: recvfrom(2) writes at most buf.len() bytes into our buffer and at most
            // flen bytes into `from`, both owned by us for the call.
            let n = unsafe {
                libc::recvfrom(
                    self.fd.as_raw_fd(),
                    self.buf.as_mut_ptr().cast(),
                    self.buf.len(),
                    libc::MSG_DONTWAIT,
                    (&mut from as *mut libc::sockaddr_ll).cast(),
                    &mut flen,
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                ) {
                    continue;
                }
                return Err(e);
            }
            // Our own frames come back to a packet socket: skip them.
            if from.sll_pkttype == libc::PACKET_OUTGOING {
                if left.is_zero() {
                    return Ok(None);
                }
                continue;
            }
            return Ok(Some(self.buf[..n as usize].to_vec()));
        }
    }
}
