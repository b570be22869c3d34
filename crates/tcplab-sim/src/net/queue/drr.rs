//! Deficit Round Robin (Shreedhar and Varghese, "Efficient Fair Queueing Using Deficit Round
//! Robin", SIGCOMM 1995) as ns-2.35's `Queue/DRR` runs it (`queue/drr.cc`), so that ns-2 studies
//! of fair queueing can be reproduced:
//!
//! - Each source has its own queue (ns-2: one bucket per source address; tcplab: one per flow and
//!   direction, a flow's data and its ACKs apart, as their sources differ).
//! - The sources with packets queued form a round. The one whose turn it is adds `quantum` bytes
//!   to its deficit when its turn begins, and sends packets while the head fits in the deficit;
//!   then the turn passes on. A source whose queue empties leaves the round with its deficit
//!   cleared; a source that gets a packet while out of the round joins it at the end, deficit 0.
//! - The buffer is shared: when an arrival takes the queues over the limit, the source holding
//!   the most bytes loses the packet at its head (the first such source from the current one
//!   round the round, on a tie), until the queues fit again. The arrival itself may be that
//!   packet.
//!
//! The packets live here, not in the FIFO beside it: the FIFO holds none and counts them all
//! ([`DropTail::hold`]), so its lengths and its limit are the queue's.

use std::collections::VecDeque;

use super::droptail::DropTail;
use super::source_key;
use crate::net::packet::Packet;
use crate::spec::DrrSpec;

#[derive(Debug, Default)]
struct Source {
    pkts: VecDeque<Packet>,
    bytes: u64,
    deficit: u64,
    /// Its turn has begun (its quantum added) and not ended (`turn` in ns-2).
    turn: bool,
}

#[derive(Debug)]
pub struct Drr {
    quantum: u64,
    /// Indexed by [`Drr::key`].
    sources: Vec<Source>,
    /// The round: sources with packets queued, the one whose turn it is first.
    round: VecDeque<usize>,
    /// Packets pushed out by an arrival, beyond the one `enqueue` hands back.
    pub(super) dropped: Vec<Packet>,
    drops: u64,
}

impl Drr {
    pub fn new(spec: &DrrSpec) -> Self {
        Drr { quantum: spec.quantum_bytes as u64, sources: Vec::new(), round: VecDeque::new(), dropped: Vec::new(), drops: 0 }
    }


    /// Packets pushed out of a longer queue to make room (apart from arrivals refused outright,
    /// which cannot happen here: every drop is a push-out).
    pub fn drops(&self) -> u64 {
        self.drops
    }

    /// Sources in the round, for tests.
    pub fn active(&self) -> usize {
        self.round.len()
    }

    /// `DRR::enque`: queue `pkt`, counted in `fifo`, then push packets out until `fifo`'s limit
    /// holds. `Err` hands back the first packet pushed out (the rest wait in
    /// `dropped`, for [`super::Queue::take_dropped`]).
    pub fn enqueue(&mut self, fifo: &mut DropTail, pkt: Packet) -> Result<(), Packet> {
        let k = source_key(&pkt);
        if k >= self.sources.len() {
            self.sources.resize_with(k + 1, Source::default);
        }
        let src = &mut self.sources[k];
        fifo.hold(pkt.size_bytes);
        src.bytes += pkt.size_bytes as u64;
        src.pkts.push_back(pkt);
        if src.pkts.len() == 1 {
            src.deficit = 0;
            self.round.push_back(k);
        }
        let mut first = None;
        while fifo.over_limit() {
            let m = self.longest();
            let src = &mut self.sources[m];
            let out = src.pkts.pop_front().expect("the longest source has packets");
            src.bytes -= out.size_bytes as u64;
            fifo.release(out.size_bytes);
            if src.pkts.is_empty() {
                let at = self.round.iter().position(|&s| s == m).expect("in the round");
                self.round.remove(at);
            }
            self.drops += 1;
            if first.is_none() {
                first = Some(out);
            } else {
                self.dropped.push(out);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// ns-2's `getMaxflow`: the source with the most bytes, the first from the current one.
    fn longest(&self) -> usize {
        let mut best = self.round[0];
        for &s in self.round.iter() {
            if self.sources[best].bytes < self.sources[s].bytes {
                best = s;
            }
        }
        best
    }

    /// `DRR::deque`: the next packet, released from `fifo`'s count.
    pub fn dequeue(&mut self, fifo: &mut DropTail) -> Option<Packet> {
        loop {
            let &k = self.round.front()?;
            let src = &mut self.sources[k];
            if !src.turn {
                src.deficit += self.quantum;
                src.turn = true;
            }
            let size = src.pkts.front().expect("a source in the round has packets").size_bytes as u64;
            if src.deficit >= size {
                src.deficit -= size;
                let pkt = src.pkts.pop_front().expect("checked");
                src.bytes -= size;
                fifo.release(pkt.size_bytes);
                if src.pkts.is_empty() {
                    src.turn = false;
                    src.deficit = 0;
                    self.round.pop_front();
                }
                return Some(pkt);
            }
            src.turn = false;
            self.round.rotate_left(1);
        }
    }

    /// Every queued packet, source by source.
    pub fn for_each(&self, f: &mut dyn FnMut(&Packet)) {
        self.sources.iter().flat_map(|s| s.pkts.iter()).for_each(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Kind;
    use crate::ids::{FlowId, NodeId};
    use crate::net::queue::QueueDisc;

    fn pkt(flow: u32, seq: u32, size: u32) -> Packet {
        let mut p = Packet::new(FlowId(flow), NodeId(1), Kind::Data, size);
        p.seq = seq;
        p
    }

    fn drr(quantum: u32) -> Drr {
        Drr::new(&DrrSpec { quantum_bytes: quantum })
    }

    #[test]
    fn equal_sources_take_turns_packet_by_packet() {
        // Quantum 1500, packets 1500: one packet per source per turn.
        let (mut d, mut q) = (drr(1500), DropTail::new(Some(100), None));
        for s in 0..3 {
            d.enqueue(&mut q, pkt(0, s, 1500)).unwrap();
        }
        for s in 0..3 {
            d.enqueue(&mut q, pkt(1, 10 + s, 1500)).unwrap();
        }
        assert_eq!(q.len_pkts(), 6);
        let order: Vec<_> = std::iter::from_fn(|| d.dequeue(&mut q)).map(|p| p.seq).collect();
        assert_eq!(order, [0, 10, 1, 11, 2, 12]);
        assert_eq!((q.len_pkts(), q.len_bytes(), d.active()), (0, 0, 0));
    }

    #[test]
    fn the_deficit_shares_bytes_not_packets() {
        // Source 0 sends 1500-byte packets, source 1 500-byte ones, quantum 500: per 1500 bytes
        // of source 0, three packets of source 1.
        let (mut d, mut q) = (drr(500), DropTail::new(None, Some(1_000_000)));
        for s in 0..4 {
            d.enqueue(&mut q, pkt(0, s, 1500)).unwrap();
        }
        for s in 0..12 {
            d.enqueue(&mut q, pkt(1, 100 + s, 500)).unwrap();
        }
        let sizes: Vec<_> = std::iter::from_fn(|| d.dequeue(&mut q)).take(12).map(|p| p.size_bytes).collect();
        let big = sizes.iter().filter(|&&s| s == 1500).count();
        let small = sizes.iter().filter(|&&s| s == 500).count();
        // Round 1: 0 has 500 (short of 1500), 1 sends one; round 2: 0 has 1000, 1 one more;
        // round 3: 0 sends (1500), 1 one more ... 3 small per big.
        assert_eq!(&sizes[..4], &[500, 500, 1500, 500]);
        assert_eq!((big, small), (3, 9));
    }

    #[test]
    fn overflow_pushes_out_the_head_of_the_longest_source() {
        let (mut d, mut q) = (drr(1500), DropTail::new(Some(4), None));
        for s in 0..3 {
            d.enqueue(&mut q, pkt(0, s, 1500)).unwrap();
        }
        d.enqueue(&mut q, pkt(1, 10, 1500)).unwrap();
        // The fifth packet, source 1's: source 0 holds the most and loses its head.
        assert_eq!(d.enqueue(&mut q, pkt(1, 11, 1500)).unwrap_err().seq, 0);
        assert_eq!((q.len_pkts(), d.drops()), (4, 1));
        // Sources 0 and 1 hold 2 packets each; a third source's arrival: on the tie the first
        // from the current source (0) loses.
        assert_eq!(d.enqueue(&mut q, pkt(2, 20, 1500)).unwrap_err().seq, 1);
        let order: Vec<_> = std::iter::from_fn(|| d.dequeue(&mut q)).map(|p| p.seq).collect();
        assert_eq!(order, [2, 10, 20, 11]);
    }

    #[test]
    fn an_arrival_bigger_than_the_rest_can_push_out_several() {
        let (mut d, mut q) = (drr(1500), DropTail::new(None, Some(2500)));
        d.enqueue(&mut q, pkt(0, 0, 1000)).unwrap();
        d.enqueue(&mut q, pkt(0, 1, 1000)).unwrap();
        d.enqueue(&mut q, pkt(1, 2, 500)).unwrap();
        // 1500 more bytes from source 1: 4000 > 2500; source 0 (2000 B, first on the tie) loses
        // its head, then source 1 (2000 B) against source 0 (1000 B) loses its own.
        assert_eq!(d.enqueue(&mut q, pkt(1, 3, 1500)).unwrap_err().seq, 0);
        assert!(!d.dropped.is_empty());
        assert_eq!(d.dropped.drain(..).map(|p| p.seq).collect::<Vec<_>>(), [2]);
        assert_eq!((q.len_bytes(), q.len_pkts()), (2500, 2));
        let mut seen = Vec::new();
        d.for_each(&mut |p| seen.push(p.seq));
        assert_eq!(seen, [1, 3]);
    }

    #[test]
    fn acks_are_their_own_source() {
        let mut ack = Packet::new(FlowId(0), NodeId(0), Kind::Ack, 52);
        ack.seq = 99;
        let (mut d, mut q) = (drr(1500), DropTail::new(Some(100), None));
        d.enqueue(&mut q, pkt(0, 0, 1500)).unwrap();
        d.enqueue(&mut q, pkt(0, 1, 1500)).unwrap();
        d.enqueue(&mut q, ack).unwrap();
        assert_eq!(d.active(), 2);
        let order: Vec<_> = std::iter::from_fn(|| d.dequeue(&mut q)).map(|p| p.seq).collect();
        assert_eq!(order, [0, 99, 1]);
    }
}
