//! The event queue: a binary heap of (time, insertion sequence, event). Equal times pop in
//! insertion order, so a run is a pure function of its spec and seed.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::ids::{FlowId, LinkId, NodeId};
use crate::time::Nanos;

/// Small `Copy` events that address components by id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The packet a link was serialising is on the wire.
    TxDone(LinkId),
    /// The head of a link's pipe reaches the far end.
    Arrive(LinkId),
    /// The head of a host's processing queue is ready to go out.
    HostReady(NodeId),
    FlowStart(FlowId),
    FlowStop(FlowId),
    Rto(FlowId, u32),
    DelAck(FlowId, u32),
    /// A paced sender's next departure time.
    Pace(FlowId, u32),
    CbrSend(FlowId),
    /// End of a measurement interval.
    Tick,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    at: Nanos,
    seq: u64,
    ev: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Reversed: `BinaryHeap` is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(n), seq: 0 }
    }

    #[inline]
    pub fn push(&mut self, at: Nanos, ev: Event) {
        self.seq += 1;
        self.heap.push(Entry { at, seq: self.seq, ev });
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        self.heap.pop().map(|e| (e.at, e.ev))
    }

    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|e| e.at)
    }
}

const _: () = assert!(std::mem::size_of::<Event>() <= 12);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_then_insertion_order() {
        let mut q = EventQueue::default();
        q.push(20, Event::Tick);
        q.push(10, Event::FlowStart(FlowId(1)));
        q.push(10, Event::FlowStart(FlowId(2)));
        q.push(5, Event::FlowStop(FlowId(0)));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(5, Event::FlowStop(FlowId(0))), (10, Event::FlowStart(FlowId(1))), (10, Event::FlowStart(FlowId(2))), (20, Event::Tick)]
        );
    }
}
