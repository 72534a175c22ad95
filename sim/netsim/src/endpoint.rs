//! The endpoint interface: what a host on the simulated network is. A host receives packets,
//! emits packets and asks to be woken at a time; it sees nothing else of the network. The
//! DCQCN senders and receivers of [`crate::traffic`] are endpoints, and so will be a Verilator
//! model of the NIC (frames in, frames out, a clock advanced to the wake-up time).

use std::any::Any;

use crate::event::Time;
use crate::packet::Packet;

/// What an endpoint may do while handling a call.
pub struct Ctx<'a> {
    pub(crate) now: Time,
    pub(crate) out: &'a mut Vec<Packet>,
    pub(crate) wakes: &'a mut Vec<(Time, u64)>,
    pub(crate) backlog_bytes: u64,
}

impl Ctx<'_> {
    /// A context outside a network (for driving an endpoint by hand in tests).
    pub fn detached<'a>(
        now: Time,
        out: &'a mut Vec<Packet>,
        wakes: &'a mut Vec<(Time, u64)>,
    ) -> Ctx<'a> {
        Ctx {
            now,
            out,
            wakes,
            backlog_bytes: 0,
        }
    }

    /// Current simulated time, ns.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Hands a frame to the host's egress port (its MAC); it is serialized in order.
    pub fn send(&mut self, pkt: Packet) {
        self.out.push(pkt);
    }

    /// Asks for a [`Endpoint::wake`] call with `token` at `at` (now, if `at` is past).
    pub fn wake_at(&mut self, at: Time, token: u64) {
        self.wakes.push((at, token));
    }

    /// Frame bytes waiting in the host's egress queue (including the frame on the wire) when
    /// the call began.
    pub fn backlog_bytes(&self) -> u64 {
        self.backlog_bytes
    }
}

/// A host on the network.
pub trait Endpoint: Any {
    /// Called once, at time 0, before any other call.
    fn start(&mut self, ctx: &mut Ctx<'_>);
    /// A frame arrived (its last bit, at `ctx.now()`).
    fn receive(&mut self, pkt: Packet, ctx: &mut Ctx<'_>);
    /// A wake-up asked for with [`Ctx::wake_at`].
    fn wake(&mut self, token: u64, ctx: &mut Ctx<'_>);
    /// For reading an endpoint's own state after a run.
    fn as_any(&self) -> &dyn Any;
}
