//! The event queue: events ordered by integer-nanosecond time, ties broken by insertion order
//! so that a run is deterministic.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::packet::Packet;

/// Simulated time in nanoseconds.
pub type Time = u64;
/// Index of a node (host or switch) in the network.
pub type NodeId = usize;

/// Something that happens at a time.
#[derive(Debug)]
pub enum Event {
    /// The last bit of `pkt` arrives at `port` of `node`.
    Arrive {
        node: NodeId,
        port: usize,
        pkt: Packet,
    },
    /// The egress link of `port` of `node` finished serializing the head of its queue.
    TxDone { node: NodeId, port: usize },
    /// An endpoint asked to be woken with `token`.
    Wake { node: NodeId, token: u64 },
}

struct Entry {
    time: Time,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: the heap pops the earliest.
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// A priority queue of events.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `event` at `time`.
    pub fn push(&mut self, time: Time, event: Event) {
        self.seq += 1;
        self.heap.push(Entry {
            time,
            seq: self.seq,
            event,
        });
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }

    /// Removes the earliest event.
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Pending events, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Event> {
        self.heap.iter().map(|e| &e.event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.push(5, Event::Wake { node: 0, token: 1 });
        q.push(3, Event::Wake { node: 0, token: 2 });
        q.push(5, Event::Wake { node: 0, token: 3 });
        let order: Vec<(u64, u64)> = std::iter::from_fn(|| q.pop())
            .map(|(t, e)| match e {
                Event::Wake { token, .. } => (t, token),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, [(3, 2), (5, 1), (5, 3)]);
    }
}
