//! The model backend of the verbs API: an [`rnic_transport::Nic`] on a [`FrameLink`], driven in
//! wall-clock time. The model has no clock of its own; here its time is the nanoseconds since
//! the backend was created (a monotonic [`Instant`]), so its ACK and RNR timers run in real
//! time and a lost frame is retried as on hardware.
//!
//! [`ChannelLink::pair`] joins two backends in one process (two threads, one each), optionally
//! dropping every Nth RoCEv2 frame; any other carrier of Ethernet frames (the QEMU host link's
//! channels, a TAP device) needs only the two calls of [`FrameLink`].

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use rnic_transport::mr::MAX_MR_LEN;
use rnic_transport::{MrSpec, Nic};

use crate::verbs::*;

pub use rnic_transport::NicConfig;

/// A carrier of whole Ethernet frames (no FCS).
pub trait FrameLink {
    /// Sends one frame. A link with nobody at the other end loses it without an error, as a
    /// wire does.
    fn send(&mut self, frame: &[u8]) -> io::Result<()>;

    /// The next frame, waiting at most `timeout` (`Duration::ZERO`: only what has arrived);
    /// `None` when none came.
    fn recv(&mut self, timeout: Duration) -> io::Result<Option<Vec<u8>>>;
}

/// What one end of a [`ChannelLink`] did, readable while the link is in use elsewhere.
#[derive(Debug, Default)]
pub struct LinkStats {
    sent: AtomicU64,
    dropped: AtomicU64,
    received: AtomicU64,
}

impl LinkStats {
    /// Frames handed to the link for sending (dropped ones included).
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    /// Frames the fault hook dropped, or lost because the other end was gone.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    pub fn received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }
}

/// One end of an in-process link: frames sent at one end are received at the other, in order.
pub struct ChannelLink {
    tx: Sender<Vec<u8>>,
    rx: Receiver<Vec<u8>>,
    /// Drop RoCEv2 frame k (counted from 1) when `(k + seed) % n == 0`.
    drop_every: Option<(u64, u64)>,
    roce_sent: u64,
    stats: Arc<LinkStats>,
}

impl ChannelLink {
    /// Two ends joined to each other.
    pub fn pair() -> (ChannelLink, ChannelLink) {
        let (a_tx, b_rx) = mpsc::channel();
        let (b_tx, a_rx) = mpsc::channel();
        (
            ChannelLink::from_channels(a_tx, a_rx),
            ChannelLink::from_channels(b_tx, b_rx),
        )
    }

    /// An end on channels of the caller's (a hub's port, say).
    pub fn from_channels(tx: Sender<Vec<u8>>, rx: Receiver<Vec<u8>>) -> ChannelLink {
        ChannelLink {
            tx,
            rx,
            drop_every: None,
            roce_sent: 0,
            stats: Arc::default(),
        }
    }

    /// Drops every `n`th RoCEv2 frame this end sends (other frames always pass, as on the QEMU
    /// link); `seed` picks which frame of each `n` goes: frame k (from 1) is dropped when
    /// `(k + seed) % n == 0`, so seed 0 drops frames n, 2n, ...
    ///
    /// # Panics
    /// When `n` is 0.
    pub fn drop_every(mut self, n: u64, seed: u64) -> ChannelLink {
        assert!(n > 0, "drop_every: n must be at least 1");
        self.drop_every = Some((n, seed % n));
        self
    }

    /// This end's counts, shared: keep a clone before moving the end into a backend.
    pub fn stats(&self) -> Arc<LinkStats> {
        self.stats.clone()
    }
}

impl FrameLink for ChannelLink {
    fn send(&mut self, frame: &[u8]) -> io::Result<()> {
        self.stats.sent.fetch_add(1, Ordering::Relaxed);
        if let Some((n, seed)) = self.drop_every {
            if rnic_wire::locate(frame, &[rnic_wire::udp::ROCE_PORT]).is_some() {
                self.roce_sent += 1;
                if (self.roce_sent + seed) % n == 0 {
                    self.stats.dropped.fetch_add(1, Ordering::Relaxed);
                    return Ok(());
                }
            }
        }
        if self.tx.send(frame.to_vec()).is_err() {
            // The other end is gone: the frame is lost on the wire.
            self.stats.dropped.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    fn recv(&mut self, timeout: Duration) -> io::Result<Option<Vec<u8>>> {
        let got = if timeout.is_zero() {
            // Empty or nobody at the other end: nothing has arrived.
            self.rx.try_recv().ok()
        } else {
            match self.rx.recv_timeout(timeout) {
                Ok(f) => Some(f),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => {
                    // Nobody at the other end: silence until the timeout.
                    std::thread::sleep(timeout);
                    None
                }
            }
        };
        if got.is_some() {
            self.stats.received.fetch_add(1, Ordering::Relaxed);
        }
        Ok(got)
    }
}

/// Frames taken from the link in one [`Backend::progress`] round after the first.
const RX_BATCH: usize = 64;

/// Where the first registered region goes; regions follow at page boundaries with a page of
/// gap between them, so an off-by-one address falls outside every region.
const FIRST_VA: u64 = 0x1_0000_0000;
const PAGE: u64 = 4096;

/// The transport model as a verbs device.
pub struct ModelBackend {
    nic: Nic,
    link: Box<dyn FrameLink + Send>,
    start: Instant,
    /// Model time of the last `Nic::poll`: every timer due by then has run.
    last_poll: u64,
    next_va: u64,
}

impl ModelBackend {
    /// A model NIC of `cfg` on `link`; its clock starts now.
    pub fn new(cfg: NicConfig, link: impl FrameLink + Send + 'static) -> ModelBackend {
        ModelBackend {
            nic: Nic::new(cfg),
            link: Box::new(link),
            start: Instant::now(),
            last_poll: 0,
            next_va: FIRST_VA,
        }
    }

    /// The model, for inspection.
    pub fn nic(&self) -> &Nic {
        &self.nic
    }

    /// Model time: nanoseconds since the backend was created.
    pub fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// Runs the model's timers and requester now and sends what it has.
    fn transmit(&mut self, call: &'static str) -> VerbsResult<()> {
        let now = self.now_ns();
        let frames = self.nic.poll(now);
        self.last_poll = now;
        for f in frames {
            self.link
                .send(&f)
                .map_err(|e| VerbsError::new(call, format!("link: sending a frame: {e}")))?;
        }
        Ok(())
    }

    fn recv(&mut self, timeout: Duration) -> VerbsResult<Option<Vec<u8>>> {
        self.link
            .recv(timeout)
            .map_err(|e| VerbsError::new("progress", format!("link: receiving: {e}")))
    }

    fn mr_range(
        &self,
        call: &'static str,
        lkey: u32,
        offset: usize,
        len: usize,
    ) -> VerbsResult<()> {
        let Some(bytes) = self.nic.mr_bytes(lkey) else {
            return Err(VerbsError::new(
                call,
                format!("no memory region has key {lkey:#010x}"),
            ));
        };
        if offset.checked_add(len).is_none_or(|end| end > bytes.len()) {
            return Err(VerbsError::new(
                call,
                format!(
                    "{len} bytes at offset {offset} are outside the region of key {lkey:#010x} ({} bytes)",
                    bytes.len()
                ),
            ));
        }
        Ok(())
    }
}

impl Backend for ModelBackend {
    fn query_device(&self) -> DeviceAttr {
        let c = &self.nic.cfg;
        DeviceAttr {
            name: "rnic-model".into(),
            mac: c.mac,
            gids: c.ips.clone(),
            phys_port_cnt: 1,
            active_mtu: c.port_mtu,
            max_qp: c.max_qps,
            max_mr: c.max_mrs,
            max_mr_size: MAX_MR_LEN,
            max_cqe: c.max_cqe,
            max_qp_rd_atom: c.max_rd_atomic,
        }
    }

    fn alloc_pd(&mut self) -> VerbsResult<Pd> {
        Ok(self.nic.alloc_pd())
    }

    fn reg_mr(&mut self, pd: Pd, len: usize, access: Access) -> VerbsResult<MrInfo> {
        let va = self.next_va;
        let info = self.nic.reg_mr(MrSpec {
            pd,
            va,
            len: len as u64,
            access,
            key: None,
        })?;
        self.next_va = va + (len as u64).max(1).div_ceil(PAGE) * PAGE + PAGE;
        Ok(info)
    }

    fn dereg_mr(&mut self, lkey: u32) -> VerbsResult<()> {
        self.nic.dereg_mr(lkey)
    }

    fn read_mr(&self, lkey: u32, offset: usize, buf: &mut [u8]) -> VerbsResult<()> {
        self.mr_range("read_mr", lkey, offset, buf.len())?;
        let bytes = self.nic.mr_bytes(lkey).expect("checked");
        buf.copy_from_slice(&bytes[offset..offset + buf.len()]);
        Ok(())
    }

    fn write_mr(&mut self, lkey: u32, offset: usize, data: &[u8]) -> VerbsResult<()> {
        self.mr_range("write_mr", lkey, offset, data.len())?;
        let bytes = self.nic.mr_bytes_mut(lkey).expect("checked");
        bytes[offset..offset + data.len()].copy_from_slice(data);
        Ok(())
    }

    fn create_cq(&mut self, depth: usize) -> VerbsResult<CqId> {
        self.nic.create_cq(depth)
    }

    fn create_qp(&mut self, init: &QpInit) -> VerbsResult<u32> {
        self.nic.create_qp(init)
    }

    fn destroy_qp(&mut self, qpn: u32) -> VerbsResult<()> {
        self.nic.destroy_qp(qpn)
    }

    fn modify_qp(&mut self, qpn: u32, attr: &QpAttr, mask: AttrMask) -> VerbsResult<()> {
        self.nic.modify_qp(qpn, attr, mask)
    }

    fn query_qp(&self, qpn: u32) -> VerbsResult<QpAttr> {
        self.nic
            .qp(qpn)
            .map(|q| q.attr.clone())
            .ok_or_else(|| VerbsError::new("query_qp", format!("no QP {qpn:#x}")))
    }

    fn post_send(&mut self, qpn: u32, wr: SendWr) -> VerbsResult<()> {
        self.nic.post_send(qpn, wr)?;
        // The doorbell: the requester starts at once, as hardware would.
        self.transmit("post_send")
    }

    fn post_recv(&mut self, qpn: u32, wr: RecvWr) -> VerbsResult<()> {
        self.nic.post_recv(qpn, wr)
    }

    fn poll_cq(&mut self, cq: CqId, max: usize) -> VerbsResult<Vec<WorkCompletion>> {
        if !self.nic.cq_exists(cq) {
            return Err(VerbsError::new(
                "poll_cq",
                format!("CQ {cq} does not exist"),
            ));
        }
        Ok(self.nic.poll_cq(cq, max))
    }

    fn progress(&mut self, deadline: Instant) -> VerbsResult<bool> {
        loop {
            let now = self.now_ns();
            // A timer that came due since the last poll: this poll runs it.
            let timer_due = self
                .nic
                .next_deadline()
                .is_some_and(|t| t <= now && t > self.last_poll);
            self.transmit("progress")?;
            if timer_due {
                return Ok(true);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let polled = self.last_poll;
            let wait = match self.nic.next_deadline().filter(|&t| t > polled) {
                Some(t) => left.min(Duration::from_nanos(t.saturating_sub(self.now_ns()))),
                None => left,
            };
            match self.recv(wait)? {
                Some(frame) => {
                    self.nic.receive(self.now_ns(), &frame);
                    for _ in 0..RX_BATCH {
                        match self.recv(Duration::ZERO)? {
                            Some(f) => self.nic.receive(self.now_ns(), &f),
                            None => break,
                        }
                    }
                    // What the frames caused (ACKs, responses) leaves before the caller looks.
                    self.transmit("progress")?;
                    return Ok(true);
                }
                None if Instant::now() >= deadline => return Ok(false),
                // A timer is due: the next round runs it.
                None => {}
            }
        }
    }

    fn counters(&self) -> Counters {
        self.nic.counters.clone()
    }

    fn take_raw(&mut self) -> Vec<Vec<u8>> {
        self.nic.take_raw()
    }

    fn send_raw(&mut self, frame: Vec<u8>) -> VerbsResult<()> {
        self.nic.send_raw(frame);
        self.transmit("send_raw")
    }
}
