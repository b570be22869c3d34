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
    /// A TCP flow's preamble, before its data (transport::tcp::setup): a request, `seq` its
    /// step, and the receiver's answer to it.
    Setup,
    SetupAck,
}

impl Kind {
    /// Whether the packet carries application data (what `sent = delivered + dropped +
    /// in_flight` counts); acknowledgements do not.
    #[inline]
    pub fn is_data(self) -> bool {
        matches!(self, Kind::Data | Kind::Udp | Kind::DccpData)
    }
}

/// The bits of [`Packet::flags`].
pub struct Flags;

impl Flags {
    /// A retransmitted data segment.
    pub const RETRANS: u8 = 1;
    /// TCP PSH: the last segment of a Linux sender's TSO burst (the tail of each GSO packet).
    pub const PUSH: u8 = 2;
    /// TCP ECE (RFC 3168 §6.1.3): the receiver echoes a CE mark, on every ACK until it sees CWR.
    pub const ECE: u8 = 4;
    /// TCP CWR (RFC 3168 §6.1.2): the sender's window was reduced; the first new segment after it.
    pub const CWR: u8 = 8;
    /// A pure TCP ACK the testbed's router read from a real header (its packets are all
    /// `Kind::Data`, whichever way they go), for CAKE's ACK filter.
    pub const PURE_ACK: u8 = 16;
    /// A TCP header with a flag besides ACK, ECE and CWR (the router's: PSH, FIN, RST, URG).
    pub const OTHER_TCP: u8 = 32;
}

/// The IP header's ECN field (RFC 3168 §5): its two bits as IP carries them, which the router
/// reads from and writes to real packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ecn(u8);

impl Ecn {
    /// Not ECN-capable: an AQM drops it.
    pub const NOT_ECT: Ecn = Ecn(0b00);
    pub const ECT1: Ecn = Ecn(0b01);
    /// ECN-capable, as a Linux sender marks its new data.
    pub const ECT0: Ecn = Ecn(0b10);
    /// Congestion experienced: an AQM marked it instead of dropping it.
    pub const CE: Ecn = Ecn(0b11);

    /// The field from an IPv4 TOS byte's low two bits.
    pub fn from_bits(bits: u8) -> Ecn {
        Ecn(bits & 0b11)
    }

    /// Its two bits.
    pub fn bits(self) -> u8 {
        self.0
    }
}

/// Up to four SACK blocks (RFC 2018: at most 3 fit beside the timestamp option, 4 without).
pub const MAX_SACK_BLOCKS: usize = 4;

/// Runs an Ack Vector carries at most, from the Acknowledgement Number down (see
/// `transport::dccp::AckVector`). Seven keep a packet within 80 bytes: four received runs
/// around three holes.
pub const MAX_ACKVEC_RUNS: usize = 7;

/// The state of an Ack Vector run (RFC 4340 §11.4: the two high bits of each byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RunState {
    Received = 0,
    /// Received with the IP header's ECN field set to CE.
    Marked = 1,
    NotReceived = 3,
}

/// One Ack Vector run: `len` consecutive packets in one state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub state: RunState,
    pub len: u16,
}

impl Run {
    pub const fn received(len: u16) -> Run {
        Run { state: RunState::Received, len }
    }

    pub const fn marked(len: u16) -> Run {
        Run { state: RunState::Marked, len }
    }

    pub const fn not_received(len: u16) -> Run {
        Run { state: RunState::NotReceived, len }
    }

    /// The run in one 32-bit word of the packet: the state above the length.
    fn word(self) -> u32 {
        (self.state as u32) << 16 | self.len as u32
    }

    fn of_word(w: u32) -> Run {
        let state = match w >> 16 {
            0 => RunState::Received,
            1 => RunState::Marked,
            _ => RunState::NotReceived,
        };
        Run { state, len: w as u16 }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub flow: FlowId,
    pub dst: NodeId,
    pub kind: Kind,
    /// One-bit marks ([`Flags`]): a retransmission, and TCP's PSH, ECE and CWR.
    pub flags: u8,
    /// The IP header's DS field, as IP carries it: the DSCP in the six high bits (RFC 2474), the
    /// ECN field in the two low ones (RFC 3168 §5). Read and set through `ecn`/`set_ecn` and
    /// `dscp`/`set_dscp`.
    pub tos: u8,
    /// Number of valid entries in `sack` (TCP) or Ack Vector runs (DCCP-Ack).
    pub n_sack: u8,
    /// IP packet size (what a link serialises).
    pub size_bytes: u32,
    /// Data: segment number (sequence space in whole segments). UDP: datagram number.
    /// TCP ACK: the window it advertises, bytes (`window_bytes`; 0: the flow's fixed `rwnd`).
    /// DCCP: the packet's sequence number (RFC 4340 §7.1; every packet, data or ack, has one).
    pub seq: u32,
    /// ACK: next segment expected (cumulative). DCCP-Ack: the Acknowledgement Number, the
    /// greatest sequence number received (RFC 4340 §7.4). DCCP-Data: the greatest
    /// Acknowledgement Number the sender has received, which acknowledges that Ack and lets the
    /// receiver trim its Ack Vector (RFC 4340 §11.4.2).
    pub ack: u32,
    /// TCP: SACK blocks as [start, end) in segments. DCCP (which has no SACK) keeps its options
    /// in the same words, through `ackvec_runs`/`set_ackvec` and `ack_ratio`/`set_ack_ratio`, so
    /// the packet every queue and pipe copies stays 80 bytes.
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
            flags: 0,
            tos: 0,
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

    /// A TCP acknowledgement that carries no data: the simulator's ACKs and the router's
    /// [`Flags::PURE_ACK`] packets.
    #[inline]
    pub fn is_pure_ack(&self) -> bool {
        self.kind == Kind::Ack || self.has(Flags::PURE_ACK)
    }

    #[inline]
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    #[inline]
    pub fn set_flag(&mut self, flag: u8, on: bool) {
        if on {
            self.flags |= flag;
        } else {
            self.flags &= !flag;
        }
    }

    /// An AQM that would drop this packet to signal congestion marks it CE instead when it is
    /// ECN-capable (RFC 3168 §5; Linux `INET_ECN_set_ce`). Whether it now carries CE: false for
    /// a packet that is not ECN-capable, which the AQM then drops; true for one already marked.
    #[inline]
    pub fn mark_ce(&mut self) -> bool {
        if self.ecn() == Ecn::NOT_ECT {
            return false;
        }
        self.set_ecn(Ecn::CE);
        true
    }

    /// The ECN field.
    #[inline]
    pub fn ecn(&self) -> Ecn {
        Ecn::from_bits(self.tos)
    }

    #[inline]
    pub fn set_ecn(&mut self, ecn: Ecn) {
        self.tos = self.tos & !0b11 | ecn.bits();
    }

    /// The DSCP, 0–63 (0 best effort).
    #[inline]
    pub fn dscp(&self) -> u8 {
        self.tos >> 2
    }

    #[inline]
    pub fn set_dscp(&mut self, dscp: u8) {
        self.tos = (dscp << 2) | self.tos & 0b11;
    }

    /// TCP ACK: the receive window it advertises, bytes from `ack` (its window field times the
    /// window scale); 0 when the receiver's window is the flow's fixed `rwnd`.
    #[inline]
    pub fn window_bytes(&self) -> u64 {
        self.seq as u64
    }

    /// TCP ACK: see `window_bytes`.
    #[inline]
    pub fn set_window_bytes(&mut self, bytes: u64) {
        self.seq = bytes.min(u32::MAX as u64) as u32;
    }

    #[inline]
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..self.n_sack as usize]
    }

    /// DCCP-Ack: the Ack Vector's runs, from the one that ends at `ack` down (RFC 4340 §11.4).
    pub fn ackvec_runs(&self) -> AckVecRuns {
        let mut runs = [Run::received(0); MAX_ACKVEC_RUNS];
        for (i, r) in runs.iter_mut().enumerate().take(self.n_sack as usize) {
            let pair = self.sack[i / 2];
            *r = Run::of_word(if i % 2 == 0 { pair.0 } else { pair.1 });
        }
        AckVecRuns { runs, n: self.n_sack as usize }
    }

    /// DCCP-Ack: store the Ack Vector's runs (at most `MAX_ACKVEC_RUNS`).
    pub fn set_ackvec(&mut self, runs: &[Run]) {
        debug_assert!(runs.len() <= MAX_ACKVEC_RUNS);
        for (i, &r) in runs.iter().enumerate() {
            let pair = &mut self.sack[i / 2];
            if i % 2 == 0 {
                pair.0 = r.word();
            } else {
                pair.1 = r.word();
            }
        }
        self.n_sack = runs.len() as u8;
    }

    /// DCCP-Data: the sender's Ack Ratio (RFC 4340 §11.3), which the receiver applies on arrival.
    pub fn ack_ratio(&self) -> u16 {
        self.sack[0].0 as u16
    }

    pub fn set_ack_ratio(&mut self, ratio: u16) {
        self.sack[0].0 = ratio as u32;
    }

    /// CSFQ's label (docs/queues/csfq.md): its flow's rate in bit/s as the first CSFQ queue on
    /// its path estimated it, lowered to each later one's fair share; `None` before any has
    /// labelled it, and always for acknowledgements, which have no word to spare (a packet that
    /// carries data keeps it in the last SACK slot's end, which data never uses).
    #[inline]
    pub fn csfq_label(&self) -> Option<f32> {
        let bits = self.sack[MAX_SACK_BLOCKS - 1].1;
        (self.kind.is_data() && bits != 0).then(|| f32::from_bits(bits))
    }

    /// Label a packet that carries data (acknowledgements stay unlabelled); a label is above 0.
    #[inline]
    pub fn set_csfq_label(&mut self, rate_bps: f32) {
        if self.kind.is_data() {
            self.sack[MAX_SACK_BLOCKS - 1].1 = rate_bps.max(f32::MIN_POSITIVE).to_bits();
        }
    }
}

/// An Ack Vector's runs, copied out of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckVecRuns {
    runs: [Run; MAX_ACKVEC_RUNS],
    n: usize,
}

impl std::ops::Deref for AckVecRuns {
    type Target = [Run];
    fn deref(&self) -> &[Run] {
        &self.runs[..self.n]
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn packet_stays_small() {
        // Packets are copied through queues and pipes by value; keep them within two cache lines.
        assert!(std::mem::size_of::<super::Packet>() <= 80);
    }
}
