//! The round robin FQ-CoDel and FQ-PIE share (Linux's `fq_codel_dequeue` and
//! `fq_pie_qdisc_dequeue`, RFC 8290 §4.2): deficit round robin by bytes over two lists of flows.
//!
//! - A flow that gets a packet while on neither list joins the *new* list with a deficit of one
//!   `quantum`.
//! - The new list is served first, then the old one. A flow at the head with no deficit left
//!   gets another quantum and moves to the end of the old list; otherwise it hands out a packet
//!   and its deficit shrinks by the packet's size.
//! - A flow found empty moves from the new list to the end of the old one if the old list has
//!   flows (so that a flow cannot stay "new" by emptying and refilling), and otherwise leaves the
//!   lists.

use std::collections::VecDeque;

use crate::net::packet::Packet;

#[derive(Clone, Copy, Debug, PartialEq)]
enum List {
    New,
    Old,
}

#[derive(Debug)]
pub(super) struct Rounds {
    quantum: i64,
    /// Per flow (by source key): its deficit, and the list it is on.
    deficit: Vec<i64>,
    on: Vec<Option<List>>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
}

impl Rounds {
    pub(super) fn new(quantum_bytes: u32) -> Self {
        Rounds { quantum: quantum_bytes as i64, deficit: Vec::new(), on: Vec::new(), new_flows: VecDeque::new(), old_flows: VecDeque::new() }
    }

    /// Flows on the new and on the old list.
    pub(super) fn lists(&self) -> (usize, usize) {
        (self.new_flows.len(), self.old_flows.len())
    }

    /// Flow `k` has a packet: on neither list, it joins the new one with a quantum.
    pub(super) fn activate(&mut self, k: usize) {
        if self.on.len() <= k {
            self.on.resize(k + 1, None);
            self.deficit.resize(k + 1, 0);
        }
        if self.on[k].is_none() {
            self.on[k] = Some(List::New);
            self.deficit[k] = self.quantum;
            self.new_flows.push_back(k);
        }
    }

    /// `bytes` left flow `k` without a turn of the round (a packet that found the queue empty
    /// and the link idle).
    pub(super) fn spend(&mut self, k: usize, bytes: u32) {
        self.deficit[k] -= bytes as i64;
    }

    /// The next packet of the round: `serve(k)` hands out flow `k`'s next packet, `None` when it
    /// has none.
    pub(super) fn next(&mut self, mut serve: impl FnMut(usize) -> Option<Packet>) -> Option<Packet> {
        loop {
            let (list, k) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&k), _) => (List::New, k),
                (None, Some(&k)) => (List::Old, k),
                (None, None) => return None,
            };
            if self.deficit[k] <= 0 {
                self.deficit[k] += self.quantum;
                self.on[k] = Some(List::Old);
                self.pop(list);
                self.old_flows.push_back(k);
                continue;
            }
            if let Some(pkt) = serve(k) {
                self.deficit[k] -= pkt.size_bytes as i64;
                return Some(pkt);
            }
            self.pop(list);
            if list == List::New && !self.old_flows.is_empty() {
                self.on[k] = Some(List::Old);
                self.old_flows.push_back(k);
            } else {
                self.on[k] = None;
            }
        }
    }

    fn pop(&mut self, list: List) {
        match list {
            List::New => self.new_flows.pop_front(),
            List::Old => self.old_flows.pop_front(),
        };
    }
}
