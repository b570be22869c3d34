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
    /// A DCCP-Data packet (RFC 4340 §5.1): one application datagram, never retransmitted.
    DccpData,
    /// A DCCP-Ack packet carrying an Ack Vector (RFC 4340 §11.4).
    DccpAck,
}

impl Kind {
    /// Whether the packet carries application data (what `sent = delivered + dropped +
    /// in_flight` counts); acknowledgements do not.
    #[inline]
    pub fn is_data(self) -> bool {
        matches!(self, Kind::Data | Kind::Udp | Kind::DccpData)
    }
}

/// Up to four SACK blocks (RFC 2018: at most 3 fit beside the timestamp option, 4 without).
pub const MAX_SACK_BLOCKS: usize = 4;

/// Runs an Ack Vector carries at most: alternately received and not received, from the
/// Acknowledgement Number down (see `transport::dccp::AckVector`). Seven keep a packet within
/// 96 bytes: four received runs around three holes.
pub const MAX_ACKVEC_RUNS: usize = 7;

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub flow: FlowId,
    pub dst: NodeId,
    pub kind: Kind,
    /// Retransmitted data segment.
    pub retrans: bool,
    /// Number of valid entries in `sack`.
    pub n_sack: u8,
    /// Number of valid entries in `ackvec`.
    pub n_runs: u8,
    /// IP packet size (what a link serialises).
    pub size_bytes: u32,
    /// Data: segment number (sequence space in whole segments). UDP: datagram number.
    /// DCCP: the packet's sequence number (RFC 4340 §7.1; every packet, data or ack, has one).
    pub seq: u32,
    /// ACK: next segment expected (cumulative). DCCP-Ack: the Acknowledgement Number, the
    /// greatest sequence number received (RFC 4340 §7.4). DCCP-Data: the greatest
    /// Acknowledgement Number the sender has received, which acknowledges that Ack and lets the
    /// receiver trim its Ack Vector (RFC 4340 §11.4.2).
    pub ack: u32,
    /// SACK blocks as [start, end) in segments.
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
    /// DCCP-Ack: Ack Vector run lengths in packets, alternately received and not received,
    /// starting with the received run that ends at `ack` (RFC 4340 §11.4).
    pub ackvec: [u16; MAX_ACKVEC_RUNS],
    /// DCCP-Data: the sender's Ack Ratio (RFC 4340 §11.3), which the receiver applies on arrival.
    pub ack_ratio: u16,
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
            n_runs: 0,
            size_bytes,
            seq: 0,
            ack: 0,
            sack: [(0, 0); MAX_SACK_BLOCKS],
            ackvec: [0; MAX_ACKVEC_RUNS],
            ack_ratio: 0,
            ts_val_ns: 0,
            ts_ecr_ns: 0,
            enq_ns: 0,
        }
    }

    #[inline]
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..self.n_sack as usize]
    }

    /// The Ack Vector's runs (DCCP-Ack).
    #[inline]
    pub fn ackvec_runs(&self) -> &[u16] {
        &self.ackvec[..self.n_runs as usize]
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
