//! Queue disciplines. Each is one file implementing [`QueueDisc`]; [`Queue`] dispatches over them
//! with an enum, so the per-packet path has no dynamic dispatch.

mod droptail;

pub use droptail::DropTail;

use crate::net::packet::Packet;
use crate::spec::QueueSpec;
use crate::time::Nanos;

/// What every queue discipline offers a link.
pub trait QueueDisc {
    /// Offer a packet; `Err(packet)` hands it back when the discipline drops it on arrival.
    fn enqueue(&mut self, pkt: Packet, now_ns: Nanos) -> Result<(), Packet>;
    /// The next packet to transmit, if any.
    fn dequeue(&mut self, now_ns: Nanos) -> Option<Packet>;
    fn len_pkts(&self) -> usize;
    fn len_bytes(&self) -> u64;
    /// Visit every queued packet (end-of-run accounting; not on the per-packet path).
    fn for_each(&self, f: &mut dyn FnMut(&Packet));
}

/// The queue disciplines tcplab knows, dispatched by `match`.
#[derive(Debug)]
pub enum Queue {
    DropTail(DropTail),
}

impl Queue {
    pub fn from_spec(spec: &QueueSpec) -> Queue {
        match spec {
            QueueSpec::Droptail { limit_pkts, limit_bytes } => Queue::DropTail(DropTail::new(*limit_pkts, *limit_bytes)),
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            Queue::DropTail($q) => $e,
        }
    };
}

impl QueueDisc for Queue {
    #[inline]
    fn enqueue(&mut self, pkt: Packet, now_ns: Nanos) -> Result<(), Packet> {
        dispatch!(self, q => q.enqueue(pkt, now_ns))
    }
    #[inline]
    fn dequeue(&mut self, now_ns: Nanos) -> Option<Packet> {
        dispatch!(self, q => q.dequeue(now_ns))
    }
    #[inline]
    fn len_pkts(&self) -> usize {
        dispatch!(self, q => q.len_pkts())
    }
    #[inline]
    fn len_bytes(&self) -> u64 {
        dispatch!(self, q => q.len_bytes())
    }
    fn for_each(&self, f: &mut dyn FnMut(&Packet)) {
        dispatch!(self, q => q.for_each(f))
    }
}

// A queue is touched per packet: keep the enum small (the packets live in the discipline's heap).
const _: () = assert!(std::mem::size_of::<Queue>() <= 96);
