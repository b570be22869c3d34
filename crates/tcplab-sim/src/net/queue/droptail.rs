//! DropTail (FIFO, tail drop), limited in packets or in bytes, like Linux's `pfifo` / `bfifo` and
//! ns-2's `Queue/DropTail`. The packet being serialised is not counted: it has left the queue.

use std::collections::VecDeque;

use super::QueueDisc;
use crate::net::packet::Packet;
use crate::time::Nanos;

#[derive(Debug)]
pub struct DropTail {
    fifo: VecDeque<Packet>,
    limit_pkts: Option<u64>,
    limit_bytes: Option<u64>,
    /// Packets and bytes counted: the FIFO's, and those a per-source discipline holds in its
    /// own queues beside it ([`DropTail::hold`]).
    pkts: usize,
    bytes: u64,
}

impl DropTail {
    pub fn new(limit_pkts: Option<u64>, limit_bytes: Option<u64>) -> Self {
        // Preallocate for the packet limit (bounded, so a huge limit costs nothing up front).
        let cap = limit_pkts.unwrap_or(64).min(1 << 16) as usize;
        DropTail { fifo: VecDeque::with_capacity(cap), limit_pkts, limit_bytes, pkts: 0, bytes: 0 }
    }

    /// Count a packet of `size` bytes held elsewhere (a per-source discipline's queues), so that
    /// the lengths and the limit are the whole queue's.
    #[inline]
    pub fn hold(&mut self, size: u32) {
        self.pkts += 1;
        self.bytes += size as u64;
    }

    /// A held packet left.
    #[inline]
    pub fn release(&mut self, size: u32) {
        self.pkts -= 1;
        self.bytes -= size as u64;
    }

    /// The packet at the FIFO's head.
    #[inline]
    pub fn front(&self) -> Option<&Packet> {
        self.fifo.front()
    }

    /// The packets counted exceed the limit.
    #[inline]
    pub fn over_limit(&self) -> bool {
        self.limit_pkts.is_some_and(|l| self.pkts as u64 > l) || self.limit_bytes.is_some_and(|l| self.bytes > l)
    }

    /// How full the queue is: its length over its limit (in packets or bytes, as limited).
    pub fn fill(&self) -> f64 {
        match (self.limit_pkts, self.limit_bytes) {
            (Some(l), _) => self.pkts as f64 / l as f64,
            (None, Some(l)) => self.bytes as f64 / l as f64,
            (None, None) => 0.0,
        }
    }

    /// An arrival of `size` bytes would exceed the limit.
    #[inline]
    pub fn is_full_for(&self, size: u32) -> bool {
        if let Some(limit) = self.limit_pkts {
            if self.pkts as u64 >= limit {
                return true;
            }
        }
        if let Some(limit) = self.limit_bytes {
            if self.bytes + size as u64 > limit {
                return true;
            }
        }
        false
    }
}

impl QueueDisc for DropTail {
    #[inline]
    fn enqueue(&mut self, pkt: Packet, _now_ns: Nanos) -> Result<(), Packet> {
        if self.is_full_for(pkt.size_bytes) {
            return Err(pkt);
        }
        self.pkts += 1;
        self.bytes += pkt.size_bytes as u64;
        self.fifo.push_back(pkt);
        Ok(())
    }

    #[inline]
    fn dequeue(&mut self, _now_ns: Nanos) -> Option<Packet> {
        let pkt = self.fifo.pop_front()?;
        self.pkts -= 1;
        self.bytes -= pkt.size_bytes as u64;
        Some(pkt)
    }

    fn len_pkts(&self) -> usize {
        self.pkts
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn for_each(&self, f: &mut dyn FnMut(&Packet)) {
        self.fifo.iter().for_each(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, NodeId};
    use crate::net::packet::Kind;

    fn pkt(size: u32, seq: u32) -> Packet {
        let mut p = Packet::new(FlowId(0), NodeId(1), Kind::Data, size);
        p.seq = seq;
        p
    }

    #[test]
    fn packet_limit_drops_the_arrival_and_keeps_fifo_order() {
        let mut q = DropTail::new(Some(2), None);
        assert!(q.enqueue(pkt(1500, 0), 0).is_ok());
        assert!(q.enqueue(pkt(1500, 1), 0).is_ok());
        assert_eq!(q.enqueue(pkt(1500, 2), 0).unwrap_err().seq, 2);
        assert_eq!(q.dequeue(0).unwrap().seq, 0);
        assert!(q.enqueue(pkt(1500, 3), 0).is_ok());
        assert_eq!(q.dequeue(0).unwrap().seq, 1);
        assert_eq!(q.dequeue(0).unwrap().seq, 3);
        assert!(q.dequeue(0).is_none());
    }

    #[test]
    fn byte_limit_counts_sizes() {
        let mut q = DropTail::new(None, Some(3000));
        assert!(q.enqueue(pkt(1500, 0), 0).is_ok());
        assert!(q.enqueue(pkt(1000, 1), 0).is_ok());
        // 2500 queued: a 1500-byte packet would exceed 3000, a 500-byte one fits.
        assert!(q.enqueue(pkt(1500, 2), 0).is_err());
        assert!(q.enqueue(pkt(500, 3), 0).is_ok());
        assert_eq!(q.len_bytes(), 3000);
        assert_eq!(q.len_pkts(), 3);
    }
}
