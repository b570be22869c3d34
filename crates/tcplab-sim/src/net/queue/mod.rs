//! Queue disciplines, one file each: DropTail's FIFO ([`QueueDisc`]), RED's, PIE's, FRED's and
//! CSFQ's admission of arrivals to it ([`Red`], [`Pie`], [`Fred`], [`Csfq`]), CoDel's drops at its
//! head ([`Codel`]), and DRR's, FQ-CoDel's, FQ-PIE's and CAKE's queues per source beside it ([`Drr`],
//! [`FqCodel`], [`FqPie`], [`Cake`]), and DualPI2's L4S queue beside it ([`Dualpi2`]); [`Queue`]
//! joins them without dynamic dispatch.

mod cake;
mod codel;
mod csfq;
mod droptail;
mod drr;
mod dualpi2;
mod fq_codel;
mod fq_pie;
mod fred;
mod pie;
mod red;
mod rounds;

pub use cake::Cake;
pub use codel::Codel;
pub use csfq::Csfq;
pub use droptail::DropTail;
pub use drr::Drr;
pub use dualpi2::Dualpi2;
pub use fq_codel::FqCodel;
pub use fq_pie::FqPie;
pub use fred::Fred;
pub use pie::Pie;
pub use red::{Red, RedParams};

use crate::net::packet::Packet;
use crate::rng::Rng;
use crate::spec::QueueSpec;
use crate::time::Nanos;

/// The source a per-flow discipline (DRR, FQ-CoDel, FQ-PIE, FRED, CSFQ) keeps state for: a flow in one
/// direction, its data (or datagrams) apart from the acknowledgements coming back.
#[inline]
fn source_key(pkt: &Packet) -> usize {
    pkt.flow.idx() * 2 + usize::from(!pkt.kind.is_data())
}

/// What every queue discipline offers a link.
pub trait QueueDisc {
    /// Offer a packet; `Err(packet)` hands it back when the discipline drops it on arrival.
    fn enqueue(&mut self, pkt: Packet, now_ns: Nanos) -> Result<(), Packet>;
    /// A packet that arrived to an idle link and an empty queue, to go straight to the wire: a
    /// discipline that keeps state per arrival (RED's average) sees it, one that labels packets
    /// (CSFQ) labels it, and one that may drop an arrival to an empty queue (FRED, CSFQ) may drop
    /// it (`false`).
    #[inline]
    fn pass(&mut self, _pkt: &mut Packet, _now_ns: Nanos) -> bool {
        true
    }
    /// The next packet to transmit, if any; `None` tells the discipline the link found it
    /// empty at `now_ns`.
    fn dequeue(&mut self, now_ns: Nanos) -> Option<Packet>;
    fn len_pkts(&self) -> usize;
    fn len_bytes(&self) -> u64;
    /// Visit every queued packet (end-of-run accounting; not on the per-packet path).
    fn for_each(&self, f: &mut dyn FnMut(&Packet));
}

/// A link's queue: a DropTail FIFO, limited in packets or bytes, and optionally a queue manager
/// ([`Aqm`]) deciding which arrivals it admits (RED, PIE) or which packets leave it dropped
/// (CoDel), or holding the packets in queues of its own (DRR, FQ-CoDel; the FIFO counts them).
/// The FIFO's limit stays the hard one. DropTail's path gains only the checks that the manager is
/// absent and a count: 2.4% more instructions on `bench/engine_reno.json` than with no manager at
/// all (7.468 against 7.292 G, `bench/engine_cost.py`; the checks 1.5%, the link's check for drops
/// other than an arrival's 0.5%, the FIFO's own packet count 0.4%), where a `match` over an enum
/// of disciplines cost 2.0–4.0% for RED alone.
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
    Drr(Drr),
    FqCodel(FqCodel),
    FqPie(FqPie),
    Fred(Fred),
    Csfq(Csfq),
    Cake(Cake),
    Dualpi2(Dualpi2),
}

impl Queue {
    /// The discipline `spec` on a link of `rate_bps` and one-way `delay_ns` (RED sizes its
    /// automatic parameters by them), drawing from `rng` (RED's, PIE's, FRED's and CSFQ's
    /// drops).
    pub fn from_spec(spec: &QueueSpec, rate_bps: u64, delay_ns: Nanos, rng: Rng) -> Queue {
        let (limit_pkts, limit_bytes, aqm) = match spec {
            QueueSpec::Droptail { limit_pkts, limit_bytes } => (limit_pkts, limit_bytes, None),
            QueueSpec::Red { limit_pkts, limit_bytes, red } => {
                (limit_pkts, limit_bytes, Some(Aqm::Red(Red::new(RedParams::resolve(red, rate_bps, delay_ns), rng))))
            }
            QueueSpec::Codel { limit_pkts, limit_bytes, codel } => (limit_pkts, limit_bytes, Some(Aqm::Codel(Codel::new(codel)))),
            QueueSpec::Pie { limit_pkts, limit_bytes, pie } => (limit_pkts, limit_bytes, Some(Aqm::Pie(Pie::new(pie, rng)))),
            QueueSpec::Drr { limit_pkts, limit_bytes, drr } => (limit_pkts, limit_bytes, Some(Aqm::Drr(Drr::new(drr)))),
            QueueSpec::FqCodel { limit_pkts, limit_bytes, fq_codel } => (limit_pkts, limit_bytes, Some(Aqm::FqCodel(FqCodel::new(fq_codel)))),
            QueueSpec::Fred { limit_pkts, limit_bytes, fred } => {
                let buffer = limit_pkts.map_or_else(|| limit_bytes.unwrap_or(0) as f64 / fred.mean_pkt_bytes as f64, |p| p as f64);
                (limit_pkts, limit_bytes, Some(Aqm::Fred(Fred::new(fred, rate_bps, buffer, rng))))
            }
            QueueSpec::Csfq { limit_pkts, limit_bytes, csfq } => (limit_pkts, limit_bytes, Some(Aqm::Csfq(Csfq::new(csfq, rate_bps, rng)))),
            QueueSpec::FqPie { limit_pkts, limit_bytes, fq_pie } => (limit_pkts, limit_bytes, Some(Aqm::FqPie(FqPie::new(fq_pie, rng)))),
            QueueSpec::Cake { limit_pkts, limit_bytes, cake } => (limit_pkts, limit_bytes, Some(Aqm::Cake(Cake::new(cake, rate_bps, rng)))),
            QueueSpec::Dualpi2 { limit_pkts, limit_bytes, dualpi2 } => (limit_pkts, limit_bytes, Some(Aqm::Dualpi2(Dualpi2::new(dualpi2, rng)))),
        };
        Queue { fifo: DropTail::new(*limit_pkts, *limit_bytes), aqm: aqm.map(Box::new) }
    }

    /// Packets the manager dropped (RED's, PIE's and FQ-PIE's early drops, CoDel's and FQ-CoDel's
    /// drops at the head, FRED's and CSFQ's drops of arrivals), apart from the limit's; 0 for
    /// DropTail and DRR (whose drops are all the limit's).
    pub fn early_drops(&self) -> u64 {
        match self.aqm.as_deref() {
            None => 0,
            Some(Aqm::Red(r)) => r.early_drops(),
            Some(Aqm::Codel(c)) => c.drops(),
            Some(Aqm::Pie(p)) => p.drops(),
            Some(Aqm::Drr(_)) => 0,
            Some(Aqm::FqCodel(f)) => f.codel_drops(),
            Some(Aqm::FqPie(f)) => f.pie_drops(),
            Some(Aqm::Fred(f)) => f.drops(),
            Some(Aqm::Csfq(c)) => c.drops(),
            Some(Aqm::Cake(c)) => c.cobalt_drops(),
            Some(Aqm::Dualpi2(d)) => d.drops(),
        }
    }

    /// Packets the manager marked CE instead of dropping them (ECN: RED, PIE, CoDel, FQ-CoDel
    /// and FQ-PIE with `ecn`); 0 for the others.
    pub fn marks(&self) -> u64 {
        match self.aqm.as_deref() {
            Some(Aqm::Red(r)) => r.marks(),
            Some(Aqm::Codel(c)) => c.marks(),
            Some(Aqm::Pie(p)) => p.marks(),
            Some(Aqm::FqCodel(f)) => f.codel_marks(),
            Some(Aqm::FqPie(f)) => f.pie_marks(),
            Some(Aqm::Cake(c)) => c.marks(),
            Some(Aqm::Dualpi2(d)) => d.marks(),
            _ => 0,
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

    /// FQ-PIE's state, when the queue has FQ-PIE.
    pub fn fq_pie(&self) -> Option<&FqPie> {
        match self.aqm.as_deref() {
            Some(Aqm::FqPie(f)) => Some(f),
            _ => None,
        }
    }

    /// CAKE's state, when the queue has CAKE.
    pub fn cake(&self) -> Option<&Cake> {
        match self.aqm.as_deref() {
            Some(Aqm::Cake(c)) => Some(c),
            _ => None,
        }
    }

    /// The time before which the discipline hands out no packet (CAKE's shaper); 0 for the
    /// others. A link with packets queued and nothing to send waits for it.
    #[inline]
    pub fn hold_until(&self) -> Nanos {
        match self.aqm.as_deref() {
            Some(Aqm::Cake(c)) => c.hold_until(),
            _ => 0,
        }
    }

    /// Tell a CAKE queue each flow's source and destination node (by flow index), which its host
    /// isolation keys by; other disciplines ignore it.
    pub fn set_hosts(&mut self, hosts: impl FnOnce() -> Vec<(u32, u32)>) {
        if let Some(Aqm::Cake(c)) = self.aqm.as_deref_mut() {
            c.set_hosts(hosts());
        }
    }

    #[cfg(test)]
    pub(crate) fn red_mut(&mut self) -> Option<&mut Red> {
        match self.aqm.as_deref_mut() {
            Some(Aqm::Red(r)) => Some(r),
            _ => None,
        }
    }

    /// Packets dropped other than one `enqueue` handed back (CoDel's and FQ-CoDel's at the head
    /// as they dequeue, DRR's and FQ-CoDel's further drops for one arrival) are waiting for
    /// [`Queue::take_dropped`].
    #[inline]
    pub fn has_dropped(&self) -> bool {
        match self.aqm.as_deref() {
            Some(Aqm::Codel(Codel { dropped, .. }) | Aqm::Drr(Drr { dropped, .. }) | Aqm::FqCodel(FqCodel { dropped, .. }) | Aqm::Cake(Cake { dropped, .. }) | Aqm::Dualpi2(Dualpi2 { dropped, .. })) => {
                !dropped.is_empty()
            }
            _ => false,
        }
    }

    /// Hand every such packet dropped since the last call to `f`, oldest first.
    #[cold]
    pub fn take_dropped(&mut self, f: impl FnMut(Packet)) {
        if let Some(
            Aqm::Codel(Codel { dropped, .. }) | Aqm::Drr(Drr { dropped, .. }) | Aqm::FqCodel(FqCodel { dropped, .. }) | Aqm::Cake(Cake { dropped, .. }) | Aqm::Dualpi2(Dualpi2 { dropped, .. }),
        ) = self.aqm.as_deref_mut()
        {
            dropped.drain(..).for_each(f);
        }
    }
}

/// The managers' entry points, each out of line: the DropTail path only checks that there is no
/// manager, and stays small enough to inline into the link.
impl Aqm {
    /// An arrival at `now`, beside `fifo`: `Err` hands back a packet dropped (the arrival, or
    /// for DRR the packet it pushed out).
    #[inline(never)]
    fn enqueue(&mut self, fifo: &mut DropTail, pkt: Packet, now_ns: Nanos) -> Result<(), Packet> {
        let size = pkt.size_bytes;
        let admitted = match self {
            Aqm::Red(red) => return red.enqueue(fifo, pkt, now_ns),
            Aqm::Pie(pie) => return pie.enqueue(fifo, pkt, now_ns),
            Aqm::Fred(fred) => fred.admit(&pkt, fifo.len_pkts(), fifo.is_full_for(size), now_ns),
            Aqm::Codel(_) => true,
            Aqm::Csfq(csfq) => return csfq.enqueue(fifo, pkt, now_ns),
            Aqm::Drr(drr) => return drr.enqueue(fifo, pkt),
            Aqm::FqCodel(fq) => return fq.enqueue(fifo, pkt),
            Aqm::FqPie(fq) => return fq.enqueue(fifo, pkt, now_ns),
            Aqm::Cake(cake) => return cake.enqueue(fifo, pkt, now_ns),
            Aqm::Dualpi2(d) => return d.enqueue(fifo, pkt, now_ns),
        };
        if admitted {
            fifo.enqueue(pkt, now_ns)
        } else {
            Err(pkt)
        }
    }

    #[inline(never)]
    fn pass(&mut self, pkt: &mut Packet, now_ns: Nanos) -> bool {
        match self {
            Aqm::Red(red) => {
                let kept = red.admit(pkt, now_ns, 0, 0, false);
                debug_assert!(kept, "an empty queue drops nothing");
            }
            Aqm::Codel(codel) => codel.pass(),
            Aqm::Pie(pie) => pie.pass(now_ns),
            // Queued and served at once: its source joins and leaves the round as it was.
            Aqm::Drr(_) => {}
            Aqm::FqCodel(fq) => fq.pass(pkt),
            Aqm::FqPie(fq) => fq.pass(pkt, now_ns),
            Aqm::Cake(cake) => cake.pass(pkt, now_ns),
            Aqm::Dualpi2(d) => d.pass(pkt),
            Aqm::Fred(fred) => {
                if !fred.admit(pkt, 0, false, now_ns) {
                    return false;
                }
                fred.departed(pkt, 0, now_ns);
            }
            Aqm::Csfq(csfq) => return csfq.pass(pkt, now_ns),
        }
        true
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
            Aqm::Drr(drr) => drr.dequeue(fifo),
            Aqm::FqCodel(fq) => fq.dequeue(fifo, now_ns),
            Aqm::FqPie(fq) => fq.dequeue(fifo, now_ns),
            Aqm::Cake(cake) => cake.dequeue(fifo, now_ns),
            Aqm::Dualpi2(d) => d.dequeue(fifo, now_ns),
            Aqm::Fred(fred) => {
                let pkt = fifo.dequeue(now_ns)?;
                fred.departed(&pkt, fifo.len_pkts(), now_ns);
                Some(pkt)
            }
            Aqm::Csfq(_) => fifo.dequeue(now_ns),
        }
    }
}

impl QueueDisc for Queue {
    #[inline]
    fn enqueue(&mut self, pkt: Packet, now_ns: Nanos) -> Result<(), Packet> {
        if let Some(aqm) = &mut self.aqm {
            return aqm.enqueue(&mut self.fifo, pkt, now_ns);
        }
        self.fifo.enqueue(pkt, now_ns)
    }
    #[inline]
    fn pass(&mut self, pkt: &mut Packet, now_ns: Nanos) -> bool {
        match &mut self.aqm {
            None => true,
            Some(aqm) => aqm.pass(pkt, now_ns),
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
        self.fifo.for_each(f);
        match self.aqm.as_deref() {
            Some(Aqm::Drr(d)) => d.for_each(f),
            Some(Aqm::FqCodel(q)) => q.for_each(f),
            Some(Aqm::FqPie(q)) => q.for_each(f),
            Some(Aqm::Cake(q)) => q.for_each(f),
            Some(Aqm::Dualpi2(q)) => q.for_each(f),
            _ => {}
        }
    }
}

// A queue is touched per packet: keep the enum small (the packets live in the discipline's heap).
const _: () = assert!(std::mem::size_of::<Queue>() <= 96);
