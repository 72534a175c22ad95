//! The NIC's host interface contract, defined once with no HDL dependency: the register map
//! ([`regs`]: an ID block, control and interrupts, counters, raw rings, send, receive and
//! completion rings, as a chain of self-describing blocks), the descriptor and completion
//! formats in host memory ([`desc`]), and the documents generated from them ([`render`]:
//! Markdown, JSON, a C header). The hardware's CSR decoder, the driver and the documentation
//! all read these tables.

pub mod desc;
pub mod regs;
pub mod render;
