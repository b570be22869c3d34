//! Queue disciplines, one file each: DropTail's FIFO ([`QueueDisc`]) and RED's admission of
//! arrivals to it ([`Red`]); [`Queue`] joins them without dynamic dispatch.

mod droptail;
mod red;

pub use droptail::DropTail;
pub use red::{Red, RedParams};

use crate::net::packet::Packet;
use crate::rng::Rng;
use crate::spec::QueueSpec;
use crate::time::Nanos;

/// What every queue discipline offers a link.
pub trait QueueDisc {
    /// Offer a packet; `Err(packet)` hands it back when the discipline drops it on arrival.
    fn enqueue(&mut self, pkt: Packet, now_ns: Nanos) -> Result<(), Packet>;
    /// A packet that arrived to an idle link and an empty queue and goes straight to the wire:
    /// never dropped, but a discipline that keeps state per arrival (RED's average) sees it.
    #[inline]
    fn pass(&mut self, _pkt: &Packet, _now_ns: Nanos) {}
    /// The next packet to transmit, if any; `None` tells the discipline the link found it
    /// empty at `now_ns`.
    fn dequeue(&mut self, now_ns: Nanos) -> Option<Packet>;
    fn len_pkts(&self) -> usize;
    fn len_bytes(&self) -> u64;
    /// Visit every queued packet (end-of-run accounting; not on the per-packet path).
    fn for_each(&self, f: &mut dyn FnMut(&Packet));
}

/// A link's queue: a DropTail FIFO, limited in packets or bytes, and optionally RED deciding
/// which arrivals it admits (RED's hard limit is the FIFO's). DropTail's path gains only the
/// checks that RED is absent: 1.5% more instructions on `bench/engine_reno.json` (7.404 against
/// 7.292 G, `bench/engine_cost.py`), where a `match` over an enum of disciplines cost 2.0–4.0%.
#[derive(Debug)]
pub struct Queue {
    fifo: DropTail,
    /// Boxed: RED's state is larger than the queue should be.
    red: Option<Box<Red>>,
}

impl Queue {
    /// The discipline `spec` on a link of `rate_bps` and one-way `delay_ns` (RED sizes its
    /// automatic parameters by them), drawing from `rng` (RED's early drops).
    pub fn from_spec(spec: &QueueSpec, rate_bps: u64, delay_ns: Nanos, rng: Rng) -> Queue {
        match spec {
            QueueSpec::Droptail { limit_pkts, limit_bytes } => Queue { fifo: DropTail::new(*limit_pkts, *limit_bytes), red: None },
            QueueSpec::Red { limit_pkts, limit_bytes, red } => Queue {
                fifo: DropTail::new(*limit_pkts, *limit_bytes),
                red: Some(Box::new(Red::new(RedParams::resolve(red, rate_bps, delay_ns), rng))),
            },
        }
    }

    /// Arrivals RED dropped early (by probability, apart from its hard limit); 0 without RED.
    pub fn early_drops(&self) -> u64 {
        self.red.as_ref().map_or(0, |r| r.early_drops())
    }

    /// RED's state, when the queue has RED.
    pub fn red(&self) -> Option<&Red> {
        self.red.as_deref()
    }

    #[cfg(test)]
    pub(crate) fn red_mut(&mut self) -> Option<&mut Red> {
        self.red.as_deref_mut()
    }
}

impl QueueDisc for Queue {
    #[inline]
    fn enqueue(&mut self, pkt: Packet, now_ns: Nanos) -> Result<(), Packet> {
        if let Some(red) = &mut self.red {
            let (len, bytes, full) = (self.fifo.len_pkts(), self.fifo.len_bytes(), self.fifo.is_full_for(pkt.size_bytes));
            if !red.admit(pkt.size_bytes, now_ns, len, bytes, full) {
                return Err(pkt);
            }
        }
        self.fifo.enqueue(pkt, now_ns)
    }
    #[inline]
    fn pass(&mut self, pkt: &Packet, now_ns: Nanos) {
        if let Some(red) = &mut self.red {
            let kept = red.admit(pkt.size_bytes, now_ns, 0, 0, false);
            debug_assert!(kept, "an empty queue drops nothing");
        }
    }
    #[inline]
    fn dequeue(&mut self, now_ns: Nanos) -> Option<Packet> {
        let pkt = self.fifo.dequeue(now_ns);
        if pkt.is_none() {
            if let Some(red) = &mut self.red {
                red.went_idle(now_ns);
            }
        }
        pkt
    }
    #[inline]
    fn len_pkts(&self) -> usize {
        self.fifo.len_pkts()
    }
    #[inline]
    fn len_bytes(&self) -> u64 {
        self.fifo.len_bytes()
    }
    fn for_each(&self, f: &mut dyn FnMut(&Packet)) {
        self.fifo.for_each(f)
    }
}

// A queue is touched per packet: keep the enum small (the packets live in the discipline's heap).
const _: () = assert!(std::mem::size_of::<Queue>() <= 96);
