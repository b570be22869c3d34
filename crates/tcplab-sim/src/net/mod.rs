//! The network: one-way links (serialisation at a rate, then propagation) and static routes.

pub mod packet;
pub mod queue;

use std::collections::VecDeque;

use crate::ids::{LinkId, NodeId};
use crate::measure::Histogram;
use crate::rng::Rng;
use crate::time::Nanos;
use packet::Packet;
use queue::{Queue, QueueDisc};

#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    pub enqueued_pkts: u64,
    pub dropped_pkts: u64,
    pub random_loss_pkts: u64,
    pub max_pkts: u64,
    /// ∫ queue length dt, in packet·ns, up to `last_change_ns`.
    pub area_pkt_ns: u128,
    pub last_change_ns: Nanos,
    pub sojourn: Histogram,
}

/// A one-way link: a queue discipline feeding a serialiser (`in_tx`) feeding a pipe of packets
/// in propagation. Only the serialiser and the pipe's head have an event pending (htsim-style).
#[derive(Debug)]
pub struct Link {
    pub from: NodeId,
    pub to: NodeId,
    pub rate_bps: u64,
    pub delay_ns: Nanos,
    pub queue: Queue,
    pub loss: f64,
    pub rng: Rng,
    /// The packet being serialised.
    pub in_tx: Option<Packet>,
    /// A `Release` is due: the link is idle while its queue's shaper holds packets.
    pub release_due: bool,
    /// Packets in propagation with their arrival times (FIFO: the delay is constant).
    pub pipe: VecDeque<(Nanos, Packet)>,
    pub stats: LinkStats,
    /// Rate changes still to come, `(time_ns, rate_bps)`, the next first (a `LinkRate` event is
    /// pending for it).
    pub rate_changes: VecDeque<(Nanos, u64)>,
}

impl Link {
    /// Account the queue length up to `now` before it changes.
    #[inline]
    pub fn note_len(&mut self, now: Nanos) {
        let len = self.queue.len_pkts() as u128;
        self.stats.area_pkt_ns += len * (now - self.stats.last_change_ns) as u128;
        self.stats.last_change_ns = now;
    }
}

/// Static routes: for each (node, destination) the outgoing link, by fewest hops (ties: lowest
/// link id), computed once with a breadth-first search from every destination.
#[derive(Debug)]
pub struct Routes {
    n: usize,
    next: Vec<u32>,
}

const NO_ROUTE: u32 = u32::MAX;

impl Routes {
    pub fn compute(n: usize, links: &[(u32, u32)]) -> Routes {
        let mut next = vec![NO_ROUTE; n * n];
        // Incoming links per node, in link-id order.
        let mut incoming: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (id, &(_, to)) in links.iter().enumerate() {
            incoming[to as usize].push(id as u32);
        }
        let mut dist = vec![u32::MAX; n];
        let mut frontier = VecDeque::new();
        for dst in 0..n {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst] = 0;
            frontier.clear();
            frontier.push_back(dst);
            while let Some(v) = frontier.pop_front() {
                for &l in &incoming[v] {
                    let u = links[l as usize].0 as usize;
                    if dist[u] == u32::MAX {
                        dist[u] = dist[v] + 1;
                        next[u * n + dst] = l;
                        frontier.push_back(u);
                    } else if dist[u] == dist[v] + 1 && l < next[u * n + dst] {
                        next[u * n + dst] = l;
                    }
                }
            }
        }
        Routes { n, next }
    }

    #[inline]
    pub fn next_link(&self, at: NodeId, dst: NodeId) -> Option<LinkId> {
        let l = self.next[at.idx() * self.n + dst.idx()];
        (l != NO_ROUTE).then_some(LinkId(l))
    }

    pub fn connected(&self, src: NodeId, dst: NodeId) -> bool {
        src == dst || self.next_link(src, dst).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortest_path_and_unreachable() {
        // 0 -> 1 -> 2, 0 -> 2 directly (link 2), 3 isolated.
        let r = Routes::compute(4, &[(0, 1), (1, 2), (0, 2)]);
        assert_eq!(r.next_link(NodeId(0), NodeId(2)), Some(LinkId(2)));
        assert_eq!(r.next_link(NodeId(1), NodeId(2)), Some(LinkId(1)));
        assert_eq!(r.next_link(NodeId(2), NodeId(0)), None);
        assert!(!r.connected(NodeId(0), NodeId(3)));
    }
}
