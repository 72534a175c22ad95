//! The real-kernel harness: Linux soft-RoCE (rdma_rxe) peers and VFIO in QEMU guests under
//! software emulation (TCG), built from the host's Debian packages.
//!
//! - [`image`]: guest kernel and busybox initramfs (modules, tools, libraries), cached.
//! - [`runner`]: QEMU processes with a timeout, console logs, and reaping.
//! - [`link`]: the host side of `-netdev stream`: pcap, fault injection, simulator endpoints.
//! - [`rxe`]: two-guest scenarios with the verbs tools and perftest.
//! - [`analysis`]: what an RC trace says about the transport (frames by opcode, NAKs,
//!   retransmissions, go-back-N, duplicate handling), checked against a responder model.
//! - [`vfio`]: a guest with an emulated IOMMU, ivshmem and edu, for the driver's VFIO tests.
//! - [`cpio`]: the initramfs archive format.

pub mod analysis;
pub mod cpio;
pub mod image;
pub mod interop;
pub mod link;
pub mod runner;
pub mod rxe;
pub mod vfio;
