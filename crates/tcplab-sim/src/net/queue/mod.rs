//! Queue disciplines, one file each: DropTail's FIFO ([`QueueDisc`]), RED's and PIE's admission
//! of arrivals to it ([`Red`], [`Pie`]) and CoDel's drops at its head ([`Codel`]); [`Queue`] joins
//! them without dynamic dispatch.

mod codel;
mod droptail;
mod pie;
mod red;

pub use codel::Codel;
pub use droptail::DropTail;
pub use pie::Pie;
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

/// A link's queue: a DropTail FIFO, limited in packets or bytes, and optionally an active queue
/// manager ([`Aqm`]) deciding which arrivals it admits (RED, PIE) or which packets leave it dropped
/// (CoDel); the FIFO's limit stays the hard one. DropTail's path gains only the checks that the
/// manager is absent: 2.0% more instructions on `bench/engine_reno.json` than with no manager
/// at all (7.438 against 7.292 G, `bench/engine_cost.py`; RED's checks 1.5%, the link's check for
/// CoDel's drops at the head 0.5%), where a `match` over an enum of disciplines cost 2.0–4.0% for
/// RED alone.
#[derive(Debug)]
pub struct Queue {
    fifo: DropTail,
    /// Boxed: a manager's state is larger than the queue should be.
    aqm: Option<Box<Aqm>>,
}

/// The active queue managers a [`Queue`] may have.
#[derive(Debug)]
pub enum Aqm {
    Red(Red),
    Codel(Codel),
    Pie(Pie),
}

impl Queue {
    /// The discipline `spec` on a link of `rate_bps` and one-way `delay_ns` (RED sizes its
    /// automatic parameters by them), drawing from `rng` (RED's and PIE's early drops).
    pub fn from_spec(spec: &QueueSpec, rate_bps: u64, delay_ns: Nanos, rng: Rng) -> Queue {
        let (limit_pkts, limit_bytes, aqm) = match spec {
            QueueSpec::Droptail { limit_pkts, limit_bytes } => (limit_pkts, limit_bytes, None),
            QueueSpec::Red { limit_pkts, limit_bytes, red } => {
                (limit_pkts, limit_bytes, Some(Aqm::Red(Red::new(RedParams::resolve(red, rate_bps, delay_ns), rng))))
            }
            QueueSpec::Codel { limit_pkts, limit_bytes, codel } => (limit_pkts, limit_bytes, Some(Aqm::Codel(Codel::new(codel)))),
            QueueSpec::Pie { limit_pkts, limit_bytes, pie } => (limit_pkts, limit_bytes, Some(Aqm::Pie(Pie::new(pie, rng)))),
        };
        Queue { fifo: DropTail::new(*limit_pkts, *limit_bytes), aqm: aqm.map(Box::new) }
    }

    /// Packets the manager dropped (RED's and PIE's early drops, CoDel's drops at the head),
    /// apart from the limit's; 0 for DropTail.
    pub fn early_drops(&self) -> u64 {
        match self.aqm.as_deref() {
            None => 0,
            Some(Aqm::Red(r)) => r.early_drops(),
            Some(Aqm::Codel(c)) => c.drops(),
            Some(Aqm::Pie(p)) => p.drops(),
        }
    }

    /// RED's state, when the queue has RED.
    pub fn red(&self) -> Option<&Red> {
        match self.aqm.as_deref() {
            Some(Aqm::Red(r)) => Some(r),
            _ => None,
        }
    }

    /// PIE's state, when the queue has PIE.
    pub fn pie(&self) -> Option<&Pie> {
        match self.aqm.as_deref() {
            Some(Aqm::Pie(p)) => Some(p),
            _ => None,
        }
    }

    /// CoDel's state, when the queue has CoDel.
    pub fn codel(&self) -> Option<&Codel> {
        match self.aqm.as_deref() {
            Some(Aqm::Codel(c)) => Some(c),
            _ => None,
        }
    }

    #[cfg(test)]
    pub(crate) fn red_mut(&mut self) -> Option<&mut Red> {
        match self.aqm.as_deref_mut() {
            Some(Aqm::Red(r)) => Some(r),
            _ => None,
        }
    }

    /// Packets a dequeue dropped at the head (CoDel) are waiting for [`Queue::take_dropped`].
    #[inline]
    pub fn has_dropped(&self) -> bool {
        matches!(self.aqm.as_deref(), Some(Aqm::Codel(c)) if c.has_dropped())
    }

    /// Hand every packet dropped at the head since the last call to `f`, oldest first.
    #[cold]
    pub fn take_dropped(&mut self, f: impl FnMut(Packet)) {
        if let Some(Aqm::Codel(c)) = self.aqm.as_deref_mut() {
            c.take_dropped().for_each(f);
        }
    }
}

/// The managers' entry points, each out of line: the DropTail path only checks that there is no
/// manager, and stays small enough to inline into the link.
impl Aqm {
    /// An arrival of `size` bytes at `now` to `fifo`: true admits it (the FIFO's limit still
    /// applies after).
    #[inline(never)]
    fn admit(&mut self, fifo: &DropTail, size: u32, now_ns: Nanos) -> bool {
        match self {
            Aqm::Red(red) => red.admit(size, now_ns, fifo.len_pkts(), fifo.len_bytes(), fifo.is_full_for(size)),
            Aqm::Pie(pie) => pie.offer(fifo, size, now_ns),
            Aqm::Codel(_) => true,
        }
    }

    #[inline(never)]
    fn pass(&mut self, size: u32, now_ns: Nanos) {
        match self {
            Aqm::Red(red) => {
                let kept = red.admit(size, now_ns, 0, 0, false);
                debug_assert!(kept, "an empty queue drops nothing");
            }
            Aqm::Codel(codel) => codel.pass(),
            Aqm::Pie(pie) => pie.pass(now_ns),
        }
    }

    #[inline(never)]
    fn dequeue(&mut self, fifo: &mut DropTail, now_ns: Nanos) -> Option<Packet> {
        match self {
            Aqm::Red(red) => {
                let pkt = fifo.dequeue(now_ns);
                if pkt.is_none() {
                    red.went_idle(now_ns);
                }
                pkt
            }
            Aqm::Codel(codel) => codel.dequeue(fifo, now_ns),
            Aqm::Pie(pie) => pie.dequeue(fifo, now_ns),
        }
    }
}

impl QueueDisc for Queue {
    #[inline]
    fn enqueue(&mut self, pkt: Packet, now_ns: Nanos) -> Result<(), Packet> {
        if let Some(aqm) = &mut self.aqm {
            if !aqm.admit(&self.fifo, pkt.size_bytes, now_ns) {
                return Err(pkt);
            }
        }
        self.fifo.enqueue(pkt, now_ns)
    }
    #[inline]
    fn pass(&mut self, pkt: &Packet, now_ns: Nanos) {
        if let Some(aqm) = &mut self.aqm {
            aqm.pass(pkt.size_bytes, now_ns);
        }
    }
    #[inline]
    fn dequeue(&mut self, now_ns: Nanos) -> Option<Packet> {
        match &mut self.aqm {
            None => self.fifo.dequeue(now_ns),
            Some(aqm) => aqm.dequeue(&mut self.fifo, now_ns),
        }
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
