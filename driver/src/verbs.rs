//! The verbs API host programs are written against: a [`Backend`] trait a device implements
//! (the transport model in [`crate::model`] today, the Verilator and VFIO hardware later) and
//! typed wrappers in the style of ibverbs on top of it: [`Context`], [`ProtectionDomain`],
//! [`MemoryRegion`], [`CompletionQueue`] and [`QueuePair`], with [`ModifyQp`] builders that set
//! exactly the attributes `ibv_rc_pingpong` and `ibv_ud_pingpong` set.
//!
//! The vocabulary (attributes and their masks, access flags, work requests, completions and
//! their statuses) is the transport model's, re-exported here, so a program, the model and
//! the hardware backend speak one set of types. Every error is a [`VerbsError`] naming the
//! call and the reason.
//!
//! Memory belongs to the backend (on hardware it is DMA memory the device writes behind the
//! program's back): a region is registered by length, the backend chooses its address, and
//! its bytes are read and written through [`MemoryRegion::read`] and [`MemoryRegion::write`]
//! by offset, never through a reference.
//!
//! Nothing moves unless the device is driven: [`CompletionQueue::wait`] and
//! [`Context::progress`] call [`Backend::progress`], which for the model sends and receives
//! frames and runs the retry timers. A [`Context`] may be shared between threads (it holds its
//! backend behind a mutex), but one thread driving it at a time is the intended use, as with
//! busy-polled ibverbs.

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use rnic_transport::verbs::*;
pub use rnic_transport::{Counters, MrInfo, Pd, QpInit, VerbsError};
pub use rnic_wire::MacAddr;

/// The result of a verbs call.
pub type VerbsResult<T> = std::result::Result<T, VerbsError>;

/// A completion queue of a backend (its index).
pub type CqId = usize;

/// What a device is and what it can do (`ibv_device_attr` and `ibv_port_attr`, the fields a
/// RoCE program reads).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceAttr {
    /// The device's name (`ibv_get_device_name`).
    pub name: String,
    /// The port's MAC address.
    pub mac: MacAddr,
    /// The port's GIDs as IP addresses (RoCEv2 GIDs are IPv4-mapped or IPv6 addresses).
    pub gids: Vec<IpAddr>,
    pub phys_port_cnt: u8,
    /// The port's MTU (`active_mtu`), the largest path MTU and the largest UD message.
    pub active_mtu: Mtu,
    pub max_qp: usize,
    pub max_mr: usize,
    pub max_mr_size: u64,
    pub max_cqe: usize,
    /// Outstanding READ and atomic operations per QP, each way (`max_qp_rd_atom`).
    pub max_qp_rd_atom: u8,
}

/// A device the verbs API can drive. Handles are the device's own numbers: PDs, memory keys,
/// CQ indices and QP numbers. The trait is object safe; [`Context`] holds a `Box<dyn Backend>`.
pub trait Backend: Send {
    fn query_device(&self) -> DeviceAttr;

    fn alloc_pd(&mut self) -> VerbsResult<Pd>;

    /// Registers `len` bytes of backend-owned memory (zeroed) with `access`; the backend
    /// chooses the address (`MrInfo::va`, what work requests and peers use).
    fn reg_mr(&mut self, pd: Pd, len: usize, access: Access) -> VerbsResult<MrInfo>;

    fn dereg_mr(&mut self, lkey: u32) -> VerbsResult<()>;

    /// Copies `buf.len()` bytes out of the region of `lkey` from `offset`.
    fn read_mr(&self, lkey: u32, offset: usize, buf: &mut [u8]) -> VerbsResult<()>;

    /// Copies `data` into the region of `lkey` at `offset`.
    fn write_mr(&mut self, lkey: u32, offset: usize, data: &[u8]) -> VerbsResult<()>;

    /// A completion queue of `depth` entries.
    fn create_cq(&mut self, depth: usize) -> VerbsResult<CqId>;

    /// A QP in RESET; returns its number.
    fn create_qp(&mut self, init: &QpInit) -> VerbsResult<u32>;

    fn destroy_qp(&mut self, qpn: u32) -> VerbsResult<()>;

    /// Sets the attributes `mask` names (`ibv_modify_qp`).
    fn modify_qp(&mut self, qpn: u32, attr: &QpAttr, mask: AttrMask) -> VerbsResult<()>;

    /// The QP's current attributes, its state among them (`ibv_query_qp`).
    fn query_qp(&self, qpn: u32) -> VerbsResult<QpAttr>;

    fn post_send(&mut self, qpn: u32, wr: SendWr) -> VerbsResult<()>;

    fn post_recv(&mut self, qpn: u32, wr: RecvWr) -> VerbsResult<()>;

    /// Takes up to `max` completions from CQ `cq`, oldest first.
    fn poll_cq(&mut self, cq: CqId, max: usize) -> VerbsResult<Vec<WorkCompletion>>;

    /// Drives the device until something happened that may have produced a completion (frames
    /// arrived, a timer ran, an interrupt came) or until `deadline` passes. Returns false when
    /// the deadline passed with nothing happening. Callers poll their CQ after it returns.
    fn progress(&mut self, deadline: Instant) -> VerbsResult<bool>;

    /// The device's event and drop counters (the model's names, which the register map
    /// gives the hardware's counters).
    fn counters(&self) -> Counters;

    /// Frames received that were not RoCEv2 (ARP and such), oldest first.
    fn take_raw(&mut self) -> Vec<Vec<u8>>;

    /// Sends a frame that is not RoCEv2 (an ARP reply, say).
    fn send_raw(&mut self, frame: Vec<u8>) -> VerbsResult<()>;
}

/// Longest stretch one call into the backend's `progress` holds the context's lock, so other
/// threads sharing the context get a turn.
const PROGRESS_SLICE: Duration = Duration::from_millis(5);
/// The background thread's slice: short, so the program's calls wait little for the lock.
const BACKGROUND_SLICE: Duration = Duration::from_millis(1);

/// The device running in the background; stops (and reports the device's error, if any)
/// when dropped or [`Background::stop`]ped.
pub struct Background {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<VerbsResult<()>>>,
}

impl Background {
    /// Stops the thread and returns the error that stopped it early, if one did.
    pub fn stop(mut self) -> VerbsResult<()> {
        self.finish()
    }

    fn finish(&mut self) -> VerbsResult<()> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(VerbsError::new("progress", "the device thread panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

type Shared = Arc<Mutex<Box<dyn Backend>>>;

fn lock(b: &Shared) -> MutexGuard<'_, Box<dyn Backend>> {
    // A thread that panicked while holding the lock left the backend as it was; the model
    // keeps no invariant across calls that a panic could break half-way.
    b.lock().unwrap_or_else(|e| e.into_inner())
}

/// An open device (`ibv_context`). Cheap to clone; every object made from it holds a clone.
#[derive(Clone)]
pub struct Context {
    backend: Shared,
    attr: Arc<DeviceAttr>,
}

impl Context {
    /// Opens a device through its backend.
    pub fn open(backend: impl Backend + 'static) -> Context {
        let attr = Arc::new(backend.query_device());
        Context {
            backend: Arc::new(Mutex::new(Box::new(backend))),
            attr,
        }
    }

    pub fn query_device(&self) -> &DeviceAttr {
        &self.attr
    }

    /// The first GID's address: the source address of this port's RoCEv2 packets.
    pub fn gid(&self) -> VerbsResult<IpAddr> {
        self.attr
            .gids
            .first()
            .copied()
            .ok_or_else(|| VerbsError::new("query_gid", "the port has no GID"))
    }

    /// An address vector from this port's first GID to a peer at `dmac`/`dip` (what
    /// `ibv_rc_pingpong` builds from the peer's GID; here the MAC is resolved by the caller).
    pub fn address_to(&self, dmac: MacAddr, dip: IpAddr) -> VerbsResult<AddressVector> {
        Ok(AddressVector::new(dmac, self.gid()?, dip))
    }

    pub fn alloc_pd(&self) -> VerbsResult<ProtectionDomain> {
        let pd = lock(&self.backend).alloc_pd()?;
        Ok(ProtectionDomain {
            ctx: self.clone(),
            pd,
        })
    }

    pub fn create_cq(&self, depth: usize) -> VerbsResult<CompletionQueue> {
        let id = lock(&self.backend).create_cq(depth)?;
        Ok(CompletionQueue {
            ctx: self.clone(),
            id,
        })
    }

    /// Drives the device until `timeout` has passed (a peer that only answers RDMA requests
    /// and sees no completions of its own needs this).
    pub fn progress(&self, timeout: Duration) -> VerbsResult<()> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            let slice = deadline.min(Instant::now() + PROGRESS_SLICE);
            lock(&self.backend).progress(slice)?;
        }
        Ok(())
    }

    pub fn counters(&self) -> Counters {
        lock(&self.backend).counters()
    }

    /// Keeps the device running in a thread of its own (answering ARP, ACKing, retrying)
    /// until the returned guard is dropped, as hardware runs whether or not its host program
    /// is inside a verbs call: a peer resolving our MAC while the program waits on its TCP
    /// exchange still gets its answer.
    pub fn run_in_background(&self) -> Background {
        let stop = Arc::new(AtomicBool::new(false));
        let (b, s) = (self.backend.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                let slice = Instant::now() + BACKGROUND_SLICE;
                lock(&b).progress(slice)?;
                // Let the program's own calls in between slices.
                std::thread::yield_now();
            }
            Ok(())
        });
        Background {
            stop,
            thread: Some(thread),
        }
    }

    /// Frames received that were not RoCEv2, oldest first.
    pub fn take_raw(&self) -> Vec<Vec<u8>> {
        lock(&self.backend).take_raw()
    }

    pub fn send_raw(&self, frame: Vec<u8>) -> VerbsResult<()> {
        lock(&self.backend).send_raw(frame)
    }

    /// Runs `f` on the backend (for calls the wrappers do not cover).
    pub fn with_backend<R>(&self, f: impl FnOnce(&mut dyn Backend) -> R) -> R {
        f(lock(&self.backend).as_mut())
    }

    fn same(&self, other: &Context, call: &'static str) -> VerbsResult<()> {
        if Arc::ptr_eq(&self.backend, &other.backend) {
            Ok(())
        } else {
            Err(VerbsError::new(
                call,
                "the objects belong to different device contexts",
            ))
        }
    }
}

/// A protection domain (`ibv_pd`).
#[derive(Clone)]
pub struct ProtectionDomain {
    ctx: Context,
    pd: Pd,
}

impl ProtectionDomain {
    pub fn handle(&self) -> Pd {
        self.pd
    }

    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// Registers `len` bytes of device-owned memory, zeroed (`ibv_reg_mr`). Deregistered when
    /// the returned region is dropped.
    pub fn reg_mr(&self, len: usize, access: Access) -> VerbsResult<MemoryRegion> {
        let info = lock(&self.ctx.backend).reg_mr(self.pd, len, access)?;
        Ok(MemoryRegion {
            ctx: self.ctx.clone(),
            info,
            live: true,
        })
    }

    /// Starts a QP of `qp_type` on these CQs (`ibv_create_qp`); see [`QpBuilder`].
    pub fn create_qp<'a>(
        &'a self,
        qp_type: QpType,
        send_cq: &'a CompletionQueue,
        recv_cq: &'a CompletionQueue,
    ) -> QpBuilder<'a> {
        QpBuilder {
            pd: self,
            send_cq,
            recv_cq,
            init: QpInit {
                qp_type,
                pd: self.pd,
                send_cq: send_cq.id,
                recv_cq: recv_cq.id,
                cap: QpCap::default(),
                sq_sig_all: false,
                qpn: None,
            },
        }
    }
}

/// A memory region (`ibv_mr`) whose bytes live in the device's memory.
pub struct MemoryRegion {
    ctx: Context,
    info: MrInfo,
    /// Still registered (not yet deregistered by [`MemoryRegion::dereg`]).
    live: bool,
}

impl MemoryRegion {
    pub fn lkey(&self) -> u32 {
        self.info.lkey
    }

    pub fn rkey(&self) -> u32 {
        self.info.rkey
    }

    /// The address the region is registered at.
    pub fn addr(&self) -> u64 {
        self.info.va
    }

    pub fn len(&self) -> usize {
        self.info.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.info.len == 0
    }

    pub fn info(&self) -> MrInfo {
        self.info
    }

    /// A scatter/gather entry for `length` bytes at `offset` of this region.
    pub fn sge(&self, offset: usize, length: u32) -> Sge {
        Sge {
            addr: self.info.va + offset as u64,
            length,
            lkey: self.info.lkey,
        }
    }

    /// Copies `data` into the region at `offset`.
    pub fn write(&self, offset: usize, data: &[u8]) -> VerbsResult<()> {
        lock(&self.ctx.backend).write_mr(self.info.lkey, offset, data)
    }

    /// Copies `len` bytes out of the region from `offset`.
    pub fn read(&self, offset: usize, len: usize) -> VerbsResult<Vec<u8>> {
        let mut buf = vec![0; len];
        lock(&self.ctx.backend).read_mr(self.info.lkey, offset, &mut buf)?;
        Ok(buf)
    }

    /// Deregisters now, reporting an error (dropping deregisters too, silently).
    pub fn dereg(mut self) -> VerbsResult<()> {
        self.live = false;
        lock(&self.ctx.backend).dereg_mr(self.info.lkey)
    }
}

impl Drop for MemoryRegion {
    fn drop(&mut self) {
        if self.live {
            let _ = lock(&self.ctx.backend).dereg_mr(self.info.lkey);
        }
    }
}

/// A completion queue (`ibv_cq`).
#[derive(Clone)]
pub struct CompletionQueue {
    ctx: Context,
    id: CqId,
}

impl CompletionQueue {
    pub fn id(&self) -> CqId {
        self.id
    }

    /// Takes up to `max` completions without driving the device (`ibv_poll_cq`).
    pub fn poll(&self, max: usize) -> VerbsResult<Vec<WorkCompletion>> {
        lock(&self.ctx.backend).poll_cq(self.id, max)
    }

    /// Drives the device until this CQ has completions, then returns all of them; empty when
    /// `timeout` passes first.
    pub fn wait(&self, timeout: Duration) -> VerbsResult<Vec<WorkCompletion>> {
        let deadline = Instant::now() + timeout;
        loop {
            let mut b = lock(&self.ctx.backend);
            let wcs = b.poll_cq(self.id, usize::MAX)?;
            if !wcs.is_empty() {
                return Ok(wcs);
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(wcs);
            }
            b.progress(deadline.min(now + PROGRESS_SLICE))?;
        }
    }
}

/// Creates a QP: sizes and signalling, then [`QpBuilder::build`].
pub struct QpBuilder<'a> {
    pd: &'a ProtectionDomain,
    send_cq: &'a CompletionQueue,
    recv_cq: &'a CompletionQueue,
    init: QpInit,
}

impl QpBuilder<'_> {
    /// Queue sizes (`ibv_qp_cap`); the default is [`QpCap::default`].
    pub fn cap(mut self, cap: QpCap) -> Self {
        self.init.cap = cap;
        self
    }

    /// Every send work request completes, whatever its SIGNALED flag (`sq_sig_all`).
    pub fn sq_sig_all(mut self, all: bool) -> Self {
        self.init.sq_sig_all = all;
        self
    }

    pub fn build(self) -> VerbsResult<QueuePair> {
        let ctx = &self.pd.ctx;
        ctx.same(&self.send_cq.ctx, "create_qp")?;
        ctx.same(&self.recv_cq.ctx, "create_qp")?;
        let qpn = lock(&ctx.backend).create_qp(&self.init)?;
        Ok(QueuePair {
            ctx: ctx.clone(),
            qpn,
            qp_type: self.init.qp_type,
        })
    }
}

/// A queue pair (`ibv_qp`). Destroyed when dropped.
pub struct QueuePair {
    ctx: Context,
    qpn: u32,
    qp_type: QpType,
}

impl QueuePair {
    pub fn qpn(&self) -> u32 {
        self.qpn
    }

    pub fn qp_type(&self) -> QpType {
        self.qp_type
    }

    /// Applies a transition built with [`ModifyQp`] (`ibv_modify_qp`).
    pub fn modify(&self, m: &ModifyQp) -> VerbsResult<()> {
        self.modify_raw(&m.attr, m.mask)
    }

    /// `ibv_modify_qp` with an attribute set and mask of the caller's.
    pub fn modify_raw(&self, attr: &QpAttr, mask: AttrMask) -> VerbsResult<()> {
        lock(&self.ctx.backend).modify_qp(self.qpn, attr, mask)
    }

    /// The QP's attributes (`ibv_query_qp`).
    pub fn query(&self) -> VerbsResult<QpAttr> {
        lock(&self.ctx.backend).query_qp(self.qpn)
    }

    pub fn state(&self) -> VerbsResult<QpState> {
        Ok(self.query()?.state)
    }

    /// `ibv_post_send`.
    pub fn post_send(&self, wr: SendWr) -> VerbsResult<()> {
        lock(&self.ctx.backend).post_send(self.qpn, wr)
    }

    /// `ibv_post_recv`.
    pub fn post_recv(&self, wr: RecvWr) -> VerbsResult<()> {
        lock(&self.ctx.backend).post_recv(self.qpn, wr)
    }
}

impl Drop for QueuePair {
    fn drop(&mut self) {
        let _ = lock(&self.ctx.backend).destroy_qp(self.qpn);
    }
}

/// One `ibv_modify_qp` call: attributes and the mask naming those that are set. The
/// constructors set what the rdma-core examples set (`ibv_rc_pingpong`,
/// `ibv_ud_pingpong`); the setters change one attribute and add it to the mask.
#[derive(Clone, Debug, PartialEq)]
pub struct ModifyQp {
    pub attr: QpAttr,
    pub mask: AttrMask,
}

impl ModifyQp {
    fn to(state: QpState) -> ModifyQp {
        ModifyQp {
            attr: QpAttr {
                state,
                ..QpAttr::default()
            },
            mask: AttrMask::STATE,
        }
    }

    /// RC RESET -> INIT: P_Key index 0, port 1 and the access flags remote peers get.
    pub fn rc_init(access: Access) -> ModifyQp {
        let mut m = Self::to(QpState::Init);
        m.attr.pkey_index = 0;
        m.attr.port = 1;
        m.attr.access = access;
        m.mask |= AttrMask::RC_INIT;
        m
    }

    /// RC INIT -> RTR: path MTU 1024, the peer's QPN and first PSN, max_dest_rd_atomic 1,
    /// min_rnr_timer 12 and the address vector.
    pub fn rc_rtr(av: AddressVector, dest_qpn: u32, rq_psn: u32) -> ModifyQp {
        let mut m = Self::to(QpState::Rtr);
        m.attr.av = Some(av);
        m.attr.path_mtu = Mtu::M1024;
        m.attr.dest_qpn = dest_qpn;
        m.attr.rq_psn = rq_psn;
        m.attr.max_dest_rd_atomic = 1;
        m.attr.min_rnr_timer = 12;
        m.mask |= AttrMask::RC_RTR;
        m
    }

    /// RC RTR -> RTS: timeout 14 (67 ms), retry_cnt 7, rnr_retry 7, our first PSN,
    /// max_rd_atomic 1.
    pub fn rc_rts(sq_psn: u32) -> ModifyQp {
        let mut m = Self::to(QpState::Rts);
        m.attr.timeout = 14;
        m.attr.retry_cnt = 7;
        m.attr.rnr_retry = 7;
        m.attr.sq_psn = sq_psn;
        m.attr.max_rd_atomic = 1;
        m.mask |= AttrMask::RC_RTS;
        m
    }

    /// UD RESET -> INIT: P_Key index 0, port 1 and the Q_Key.
    pub fn ud_init(qkey: u32) -> ModifyQp {
        let mut m = Self::to(QpState::Init);
        m.attr.pkey_index = 0;
        m.attr.port = 1;
        m.attr.qkey = qkey;
        m.mask |= AttrMask::UD_INIT;
        m
    }

    /// UD INIT -> RTR: the state alone.
    pub fn ud_rtr() -> ModifyQp {
        Self::to(QpState::Rtr)
    }

    /// UD RTR -> RTS: our first PSN.
    pub fn ud_rts(sq_psn: u32) -> ModifyQp {
        let mut m = Self::to(QpState::Rts);
        m.attr.sq_psn = sq_psn;
        m.mask |= AttrMask::SQ_PSN;
        m
    }

    /// To ERR (flushes every posted request) or RESET.
    pub fn state(state: QpState) -> ModifyQp {
        Self::to(state)
    }

    pub fn access(mut self, access: Access) -> Self {
        self.attr.access = access;
        self.mask |= AttrMask::ACCESS_FLAGS;
        self
    }

    pub fn path_mtu(mut self, mtu: Mtu) -> Self {
        self.attr.path_mtu = mtu;
        self.mask |= AttrMask::PATH_MTU;
        self
    }

    pub fn timeout(mut self, timeout: u8) -> Self {
        self.attr.timeout = timeout;
        self.mask |= AttrMask::TIMEOUT;
        self
    }

    pub fn retry_cnt(mut self, n: u8) -> Self {
        self.attr.retry_cnt = n;
        self.mask |= AttrMask::RETRY_CNT;
        self
    }

    pub fn rnr_retry(mut self, n: u8) -> Self {
        self.attr.rnr_retry = n;
        self.mask |= AttrMask::RNR_RETRY;
        self
    }

    pub fn min_rnr_timer(mut self, code: u8) -> Self {
        self.attr.min_rnr_timer = code;
        self.mask |= AttrMask::MIN_RNR_TIMER;
        self
    }

    pub fn max_rd_atomic(mut self, n: u8) -> Self {
        self.attr.max_rd_atomic = n;
        self.mask |= AttrMask::MAX_QP_RD_ATOMIC;
        self
    }

    pub fn max_dest_rd_atomic(mut self, n: u8) -> Self {
        self.attr.max_dest_rd_atomic = n;
        self.mask |= AttrMask::MAX_DEST_RD_ATOMIC;
        self
    }

    pub fn qkey(mut self, qkey: u32) -> Self {
        self.attr.qkey = qkey;
        self.mask |= AttrMask::QKEY;
        self
    }
}
