//! A packet: a small `Copy` struct stored by value in queues and pipes. No heap, no pointers.

use crate::ids::{FlowId, NodeId};
use crate::time::Nanos;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A TCP data segment.
    Data,
    /// A pure TCP ACK.
    Ack,
    /// A UDP datagram (CBR).
    Udp,
}

/// Up to four SACK blocks (RFC 2018: at most 3 fit beside the timestamp option, 4 without).
pub const MAX_SACK_BLOCKS: usize = 4;

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub flow: FlowId,
    pub dst: NodeId,
    pub kind: Kind,
    /// Retransmitted data segment.
    pub retrans: bool,
    /// Number of valid entries in `sack`.
    pub n_sack: u8,
    /// IP packet size (what a link serialises).
    pub size_bytes: u32,
    /// Data: segment number (sequence space in whole segments). UDP: datagram number.
    pub seq: u32,
    /// ACK: next segment expected (cumulative).
    pub ack: u32,
    /// SACK blocks as [start, end) in segments.
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
    /// RFC 7323 TSval: when the sender sent it.
    pub ts_val_ns: Nanos,
    /// RFC 7323 TSecr.
    pub ts_ecr_ns: Nanos,
    /// When the packet entered its current queue (for sojourn time).
    pub enq_ns: Nanos,
}

impl Packet {
    pub fn new(flow: FlowId, dst: NodeId, kind: Kind, size_bytes: u32) -> Self {
        Packet {
            flow,
            dst,
            kind,
            retrans: false,
            n_sack: 0,
            size_bytes,
            seq: 0,
            ack: 0,
            sack: [(0, 0); MAX_SACK_BLOCKS],
            ts_val_ns: 0,
            ts_ecr_ns: 0,
            enq_ns: 0,
        }
    }

    #[inline]
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..self.n_sack as usize]
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn packet_stays_small() {
        // Packets are copied through queues and pipes by value; keep them within two cache lines.
        assert!(std::mem::size_of::<super::Packet>() <= 96);
    }
}
