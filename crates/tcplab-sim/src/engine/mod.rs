//! The event queue of (time, insertion sequence, event): a binary heap, and beside it a few
//! slots that each hold one pending event and are replaced rather than added to (a paced
//! sender's next departure). Equal times pop in insertion order across both, so a run is a pure
//! function of its spec and seed.

use crate::ids::{FlowId, LinkId, NodeId};
use crate::time::Nanos;

/// Small `Copy` events that address components by id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The packet a link was serialising is on the wire.
    TxDone(LinkId),
    /// An idle link's queue may hand out its next packet (CAKE's shaper let it go).
    Release(LinkId),
    /// The head of a link's pipe reaches the far end.
    Arrive(LinkId),
    /// A link's rate changes (its spec's rate schedule).
    LinkRate(LinkId),
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
    /// Time in the high 64 bits, insertion sequence in the low: one integer orders both.
    key: u128,
    ev: Event,
}

fn key(at: Nanos, seq: u64) -> u128 {
    (at as u128) << 64 | seq as u128
}

/// A binary min-heap on `key`, written out rather than `std::collections::BinaryHeap`: its `pop`
/// stores the last entry at the root and reloads it at once in pieces of other widths, and the
/// reload waits for the stores. In runs whose queue holds more than a few events (BBR's pacing
/// keeps 10–15 pending) that one load was a sixth of the run time. A dumbbell keeps about ten
/// events (one per busy link and pipe, one per armed timer); an unordered array for up to 4–12
/// of them, tried in front of this heap, was no faster (bench/engine_*.json), nor was one slot
/// holding the earliest event when it was pushed as the earliest (BBR 430 → 432 ms with a 4-BDP
/// buffer, 552 → 541 ms on the reference spec, Reno 332–336 ms either way; medians of 15).
///
/// The slots: a paced sender arms its pacing timer for nearly every segment (2.2 M of the
/// 18.6 M events of `bench/engine_bbr.json`). Arming a slot stores its key and, when that moves
/// the earliest slot later, scans the [`SLOTS`] keys; in the heap it would be a push and later a
/// pop. The scan is why there are only 8 (the first flows'); other flows use the heap. With
/// `pop_until` (one look at both where a peek and a pop took two), side by side against the
/// heap alone (hyperfine, means of 20): BBR 568 → 556 ms on the reference spec and 440 → 430 ms
/// with a 4-BDP buffer, Reno 352 ms either way.
#[derive(Debug)]
pub struct EventQueue {
    heap: Vec<Entry>,
    seq: u64,
    slots: [Entry; SLOTS],
    /// Key of the earliest slot (`EMPTY` if none) and its index.
    slot_min: u128,
    slot_min_idx: usize,
}

/// How many single-event slots the queue keeps beside its heap.
pub const SLOTS: usize = 8;

/// The key of an empty slot: after every real one (times are below 2^64 - 1 ns).
const EMPTY: u128 = u128::MAX;

impl Default for EventQueue {
    fn default() -> Self {
        Self::with_capacity(16)
    }
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue { heap: Vec::with_capacity(n), seq: 0, slots: [Entry { key: EMPTY, ev: Event::Tick }; SLOTS], slot_min: EMPTY, slot_min_idx: 0 }
    }

    /// Make `ev` at `at` the one pending event of slot `i` (< [`SLOTS`]), replacing the one it
    /// held: like a push, but the replaced event never pops.
    #[inline]
    pub fn set_slot(&mut self, i: usize, at: Nanos, ev: Event) {
        self.seq += 1;
        let k = key(at, self.seq);
        self.slots[i] = Entry { key: k, ev };
        if k < self.slot_min {
            (self.slot_min, self.slot_min_idx) = (k, i);
        } else if i == self.slot_min_idx {
            self.find_slot_min();
        }
    }

    fn find_slot_min(&mut self) {
        (self.slot_min, self.slot_min_idx) = (EMPTY, 0);
        for (i, e) in self.slots.iter().enumerate() {
            if e.key < self.slot_min {
                (self.slot_min, self.slot_min_idx) = (e.key, i);
            }
        }
    }

    /// Always inlined: most callers build `ev` just before, and a call would pass it through
    /// memory, stored in pieces and reloaded whole (another stalled load).
    #[inline(always)]
    pub fn push(&mut self, at: Nanos, ev: Event) {
        self.seq += 1;
        heap_push(&mut self.heap, Entry { key: key(at, self.seq), ev });
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        self.pop_until(Nanos::MAX)
    }

    /// The earliest event, if it is due no later than `limit` (else it stays queued): one look
    /// at the heap's root and the earliest slot where a peek and a pop would take two.
    #[inline]
    pub fn pop_until(&mut self, limit: Nanos) -> Option<(Nanos, Event)> {
        let top = self.heap.first().map_or(EMPTY, |e| e.key);
        let from_slot = top > self.slot_min;
        let k = if from_slot { self.slot_min } else { top };
        if k == EMPTY || (k >> 64) as Nanos > limit {
            return None;
        }
        let e = if from_slot {
            let i = self.slot_min_idx;
            let e = self.slots[i];
            self.slots[i].key = EMPTY;
            self.find_slot_min();
            e
        } else {
            heap_pop(&mut self.heap).expect("the root was read")
        };
        Some(((e.key >> 64) as Nanos, e.ev))
    }

    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        let k = self.heap.first().map_or(EMPTY, |e| e.key).min(self.slot_min);
        (k != EMPTY).then_some((k >> 64) as Nanos)
    }
}

/// Add `e` to the min-heap `heap`: a hole moves up from the end to where `e` belongs.
#[inline]
fn heap_push(heap: &mut Vec<Entry>, e: Entry) {
    let mut i = heap.len();
    heap.push(e);
    while i > 0 {
        let parent = (i - 1) / 2;
        if heap[parent].key <= e.key {
            break;
        }
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = e;
}

/// Take the root of the min-heap `heap`. The last entry is held in registers while a hole moves
/// down from the root to where it belongs, and is written once.
#[inline]
fn heap_pop(heap: &mut Vec<Entry>) -> Option<Entry> {
    let last = heap.pop()?;
    let Some(&top) = heap.first() else {
        return Some(last);
    };
    let n = heap.len();
    let mut i = 0;
    loop {
        let mut child = 2 * i + 1;
        if child >= n {
            break;
        }
        if child + 1 < n && heap[child + 1].key < heap[child].key {
            child += 1;
        }
        if last.key <= heap[child].key {
            break;
        }
        heap[i] = heap[child];
        i = child;
    }
    heap[i] = last;
    Some(top)
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

    /// A xorshift64 stream from `state`: the tests' own random numbers.
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// Interleaved pushes and pops that take the queue from empty to dozens of events and back,
    /// many times, pop exactly what a sorted list of (time, insertion order) gives.
    #[test]
    fn pops_follow_time_then_insertion_order() {
        let mut q = EventQueue::default();
        let mut reference: Vec<(Nanos, u64)> = Vec::new();
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15_u64);
        let (mut now, mut id, mut popped, mut max_len) = (0, 0_u64, 0, 0);
        for round in 0..20_000 {
            // Phases of growth and shrinkage, so the queue empties and refills.
            let push_bias = if (round / 500) % 2 == 0 { 3 } else { 1 };
            if next() % 4 < push_bias {
                let at = now + next() % 50; // times repeat: ties must pop in insertion order
                id += 1;
                q.push(at, Event::FlowStart(FlowId(id as u32)));
                reference.push((at, id));
            } else if let Some((at, ev)) = q.pop() {
                reference.sort();
                let (want_at, want_id) = reference.remove(0);
                assert_eq!((at, ev), (want_at, Event::FlowStart(FlowId(want_id as u32))));
                assert!(at >= now, "time went back");
                now = at;
                popped += 1;
            }
            max_len = max_len.max(reference.len());
            assert_eq!(q.peek_time(), reference.iter().min().map(|&(at, _)| at));
        }
        assert!(max_len > 48 && popped > 5_000, "max {max_len}, popped {popped}");
    }

    /// Slots and heap together pop in (time, insertion) order; a slot set again pops only its
    /// newest event, and the event it replaced never.
    #[test]
    fn slots_pop_in_order_with_the_heap_and_replace_their_event() {
        let mut q = EventQueue::default();
        // id → (time, insertion), for the events that should still pop.
        let mut live: Vec<(Nanos, u64, u32)> = Vec::new();
        let mut slot_of: [Option<u32>; SLOTS] = [None; SLOTS];
        let mut next = xorshift(0x2545_f491_4f6c_dd1d_u64);
        let (mut now, mut id, mut ins, mut from_slots) = (0, 0_u32, 0_u64, 0);
        for _ in 0..50_000 {
            let r = next() % 8;
            if r < 5 {
                let at = now + next() % 40; // equal times are frequent
                id += 1;
                ins += 1;
                if r < 3 {
                    let i = (next() % SLOTS as u64) as usize;
                    if let Some(old) = slot_of[i].replace(id) {
                        live.retain(|&(_, _, x)| x != old);
                    }
                    q.set_slot(i, at, Event::FlowStart(FlowId(id)));
                } else {
                    q.push(at, Event::FlowStart(FlowId(id)));
                }
                live.push((at, ins, id));
            } else if let Some((at, ev)) = q.pop() {
                live.sort();
                let (want_at, _, want) = live.remove(0);
                assert_eq!((at, ev), (want_at, Event::FlowStart(FlowId(want))));
                if let Some(s) = slot_of.iter_mut().find(|s| **s == Some(want)) {
                    *s = None;
                    from_slots += 1;
                }
                now = at;
            }
            assert_eq!(q.peek_time(), live.iter().min().map(|&(at, _, _)| at));
        }
        assert!(from_slots > 2_000, "{from_slots} popped from slots");
    }
}
