//! DCCP (RFC 4340) as a bulk datagram transfer with CCID 2, TCP-like congestion control
//! (RFC 4341), as Linux's `net/dccp/ccids/ccid2.c` runs it: the sender ([`Ccid2Sender`]) sends
//! datagrams of a fixed size while `pipe < cwnd` and never retransmits; the receiver
//! ([`DccpReceiver`]) delivers every datagram that arrives and sends a DCCP-Ack with an Ack
//! Vector every Ack Ratio data packets. `docs/algorithms/ccid2.md` lists the differences from
//! Linux.
//!
//! Sequence numbers count packets (RFC 4340 §7.1); the engine gives them 32 bits, not 48
//! (2³² packets is 6 TB at 1500 B).

pub mod ccid2;

pub use ccid2::Ccid2Sender;

use crate::ids::{FlowId, NodeId};
use crate::measure::Histogram;
use crate::net::packet::{Kind, Packet, MAX_ACKVEC_RUNS};
use crate::spec::DccpSpec;
use crate::time::Nanos;

/// IPv4 header, bytes.
pub const IP_HEADER_BYTES: u32 = 20;
/// DCCP generic header with 48-bit sequence numbers (X = 1), RFC 4340 §5.1.
pub const GENERIC_HEADER_BYTES: u32 = 16;
/// Acknowledgement Number subheader with a 48-bit number, RFC 4340 §5.3.
pub const ACK_SUBHEADER_BYTES: u32 = 8;
/// Ack Vector option type and length bytes, RFC 4340 §11.4.
pub const ACKVEC_OPTION_HEADER_BYTES: u32 = 2;
/// Most data bytes one Ack Vector option holds (its length byte counts the 2 header bytes).
pub const ACKVEC_OPTION_MAX_DATA: u32 = 253;
/// Packets one Ack Vector byte covers: a 6-bit run length L stands for L + 1 packets.
pub const ACKVEC_RUN_PER_BYTE: u32 = 64;

/// An Ack Vector (RFC 4340 §11.4) as the engine carries it: run lengths in packets, alternately
/// received and not received, from the Acknowledgement Number down. The first run is received
/// (it ends at the greatest sequence number received) and so is the last. ECN-marked states are
/// not modelled (the engine has no ECN).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckVector {
    pub n: u8,
    pub runs: [u16; MAX_ACKVEC_RUNS],
}

impl AckVector {
    /// The runs in use.
    pub fn runs(&self) -> &[u16] {
        &self.runs[..self.n as usize]
    }

    /// The vector of `ranges` (sorted, disjoint `[start, end)` of received sequence numbers),
    /// covering only sequence numbers at or above `floor`: from the top range down, as many
    /// runs as fit in [`MAX_ACKVEC_RUNS`] and in 16 bits each, ending with a received run.
    pub fn encode(ranges: &[(u32, u32)], floor: u32) -> AckVector {
        let mut v = AckVector::default();
        let mut below: Option<u32> = None; // start of the last received run written
        for &(start, end) in ranges.iter().rev() {
            if end <= floor {
                break;
            }
            let n = v.n as usize;
            if let Some(b) = below {
                let gap = b - end;
                if n + 2 > MAX_ACKVEC_RUNS || gap > u16::MAX as u32 {
                    break;
                }
                v.runs[n] = gap as u16;
                v.n += 1;
            }
            let start = start.max(floor);
            let len = (end - start).min(u16::MAX as u32);
            v.runs[v.n as usize] = len as u16;
            v.n += 1;
            if start == floor || len < end - start {
                break;
            }
            below = Some(start);
        }
        v
    }

    /// The received ranges `[lo, hi]` (inclusive, highest first) that the vector with
    /// Acknowledgement Number `ackno` reports.
    pub fn received(ackno: u32, runs: &[u16]) -> impl Iterator<Item = (u32, u32)> + '_ {
        let mut top = ackno as i64;
        runs.iter().enumerate().filter_map(move |(i, &len)| {
            let hi = top;
            let lo = top - len as i64 + 1;
            top = lo - 1;
            (i % 2 == 0 && len > 0 && hi >= 0).then(|| (lo.max(0) as u32, hi as u32))
        })
    }

    /// Bytes of Ack Vector options on the wire (RFC 4340 §11.4: one byte per 64 packets of a
    /// run, at most 253 data bytes per option).
    pub fn option_bytes(runs: &[u16]) -> u32 {
        let data: u32 = runs.iter().map(|&l| (l as u32).div_ceil(ACKVEC_RUN_PER_BYTE)).sum();
        if data == 0 {
            return 0;
        }
        data + ACKVEC_OPTION_HEADER_BYTES * data.div_ceil(ACKVEC_OPTION_MAX_DATA)
    }

    /// IP size of a DCCP-Ack carrying `runs`: IP, generic header, Acknowledgement Number
    /// subheader, options padded to a multiple of 4 bytes (RFC 4340 §5.1 Data Offset).
    pub fn ack_packet_bytes(runs: &[u16]) -> u32 {
        IP_HEADER_BYTES + GENERIC_HEADER_BYTES + ACK_SUBHEADER_BYTES + Self::option_bytes(runs).next_multiple_of(4)
    }
}

/// Received ranges the receiver keeps at most; older ones are forgotten first.
const MAX_RX_RANGES: usize = 64;

#[derive(Clone, Debug, Default)]
pub struct ReceiverStats {
    /// Data packets that reached the receiver.
    pub delivered_pkts: u64,
    /// Payload bytes delivered to the application: every datagram that arrives (no ordering).
    pub goodput_bytes: u64,
    pub acks_sent: u64,
    pub owd: Histogram,
}

/// The receiving half-connection: CCID 2's receiver (`ccid2_hc_rx_packet_recv`: a DCCP-Ack
/// every Ack Ratio data packets, RFC 4341 §6.1) and the Ack Vector state (RFC 4340 §11.4.2).
#[derive(Debug)]
pub struct DccpReceiver {
    flow: FlowId,
    /// Where acks go (the sender's node).
    peer: NodeId,
    payload_bytes: u32,
    /// Received sequence numbers as sorted, disjoint `[start, end)` ranges above `floor`.
    ranges: Vec<(u32, u32)>,
    /// Everything below is known to the sender (it acknowledged an Ack that reported it).
    floor: u32,
    /// Ack Ratio in force: the latest value the sender signalled (RFC 4340 §11.3).
    pub ack_ratio: u32,
    /// Data packets since the last ack.
    num_data: u32,
    /// Sequence number of the next DCCP-Ack.
    ack_seq: u32,
    pub stats: ReceiverStats,
}

impl DccpReceiver {
    pub fn new(flow: FlowId, peer: NodeId, spec: &DccpSpec) -> Self {
        DccpReceiver {
            flow,
            peer,
            payload_bytes: spec.payload_bytes(),
            ranges: Vec::with_capacity(MAX_RX_RANGES + 1),
            floor: 0,
            ack_ratio: spec.init_ack_ratio,
            num_data: 0,
            ack_seq: 0,
            stats: ReceiverStats::default(),
        }
    }

    /// Greatest sequence number received (RFC 4340 §7.1 GSR), if any.
    pub fn gsr(&self) -> Option<u32> {
        self.ranges.last().map(|r| r.1 - 1)
    }

    fn record(&mut self, seq: u32) {
        let i = self.ranges.partition_point(|r| r.1 < seq);
        match self.ranges.get_mut(i) {
            Some(r) if r.0 <= seq && seq < r.1 => return, // duplicate
            Some(r) if r.1 == seq => {
                r.1 += 1;
                if let Some(&next) = self.ranges.get(i + 1) {
                    if next.0 == seq + 1 {
                        self.ranges[i].1 = next.1;
                        self.ranges.remove(i + 1);
                    }
                }
            }
            Some(r) if r.0 == seq + 1 => r.0 = seq,
            _ => self.ranges.insert(i, (seq, seq + 1)),
        }
        if self.ranges.len() > MAX_RX_RANGES {
            self.ranges.remove(0);
        }
    }

    /// A DCCP-Data packet arrived.
    pub fn on_data(&mut self, p: &Packet, now: Nanos, out: &mut Vec<Packet>) {
        self.stats.delivered_pkts += 1;
        self.stats.goodput_bytes += self.payload_bytes as u64;
        self.stats.owd.record(now.saturating_sub(p.ts_val_ns));
        self.ack_ratio = (p.ack_ratio() as u32).max(1);
        if p.ack > self.floor {
            // Ack-of-ack: the sender has seen every Ack up to Acknowledgement Number p.ack − 1.
            self.floor = p.ack;
            let floor = self.floor;
            let keep = self.ranges.partition_point(|r| r.1 <= floor);
            self.ranges.drain(..keep);
        }
        if p.seq >= self.floor {
            self.record(p.seq);
        }
        self.num_data += 1;
        if self.num_data >= self.ack_ratio {
            self.num_data = 0;
            self.send_ack(p.ts_val_ns, out);
        }
    }

    fn send_ack(&mut self, ts_val_ns: Nanos, out: &mut Vec<Packet>) {
        let Some(gsr) = self.gsr() else { return };
        let v = AckVector::encode(&self.ranges, self.floor);
        let mut a = Packet::new(self.flow, self.peer, Kind::DccpAck, AckVector::ack_packet_bytes(v.runs()));
        a.seq = self.ack_seq;
        a.ack = gsr;
        a.set_ackvec(&v.runs[..v.n as usize]);
        a.ts_ecr_ns = ts_val_ns;
        self.ack_seq = self.ack_seq.wrapping_add(1);
        self.stats.acks_sent += 1;
        out.push(a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, Stream};

    /// The naive model: one flag per sequence number.
    fn ranges_of(received: &[bool]) -> Vec<(u32, u32)> {
        let mut out: Vec<(u32, u32)> = Vec::new();
        for (s, _) in received.iter().enumerate().filter(|(_, r)| **r) {
            let s = s as u32;
            match out.last_mut() {
                Some(r) if r.1 == s => r.1 += 1,
                _ => out.push((s, s + 1)),
            }
        }
        out
    }

    #[test]
    fn encode_decode_matches_a_naive_model() {
        let mut rng = Rng::stream(7, Stream::FlowStart, 99);
        for case in 0..2000 {
            let n = 1 + rng.below(400) as usize;
            let p_loss = [0.0, 0.01, 0.1, 0.5][case % 4];
            let mut received: Vec<bool> = (0..n).map(|_| !rng.chance(p_loss)).collect();
            received[n - 1] = true; // the packet that triggered the ack
            let floor = rng.below(n as u64) as u32;
            let v = AckVector::encode(&ranges_of(&received), floor);
            let runs = v.runs();
            assert!(!runs.is_empty() && runs.len() <= MAX_ACKVEC_RUNS && runs.len() % 2 == 1, "case {case}: {runs:?}");
            // Runs are contiguous from the ack number down: every covered seq is reported right.
            let covered: u32 = runs.iter().map(|&l| l as u32).sum();
            let ackno = n as u32 - 1;
            let lowest = ackno + 1 - covered;
            assert!(lowest >= floor, "case {case}: covers {lowest} below the floor {floor}");
            let mut said = vec![false; n];
            for (lo, hi) in AckVector::received(ackno, runs) {
                (lo..=hi).for_each(|s| said[s as usize] = true);
            }
            for s in lowest as usize..n {
                assert_eq!(said[s], received[s], "case {case}: seq {s}");
            }
            // It stops early only for lack of runs: with fewer holes above the floor than fit,
            // it reaches down to the lowest received packet at or above the floor.
            let holes = ranges_of(&received).iter().filter(|r| r.1 > floor).count() - 1;
            if holes < MAX_ACKVEC_RUNS / 2 {
                let first = (floor as usize..n).find(|&s| received[s]).unwrap() as u32;
                assert_eq!(lowest, first, "case {case}");
            } else {
                assert_eq!(runs.len(), MAX_ACKVEC_RUNS, "case {case}");
            }
        }
    }

    #[test]
    fn ack_size_grows_with_the_vector() {
        // 20 IP + 16 generic + 8 ack subheader = 44; a 1-packet run: 2 + 1 = 3 → padded to 4.
        assert_eq!(AckVector::ack_packet_bytes(&[1]), 48);
        // 64 packets still fit one byte; 65 need two: 2 + 2 = 4.
        assert_eq!(AckVector::option_bytes(&[64]), 3);
        assert_eq!(AckVector::option_bytes(&[65]), 4);
        // 1000 received, 3 lost, 500 received: 16 + 1 + 8 = 25 data bytes + 2 = 27 → 28.
        assert_eq!(AckVector::ack_packet_bytes(&[1000, 3, 500]), 72);
        // 253 data bytes fill one option; the next byte opens a second (RFC 4340 §11.4).
        assert_eq!(AckVector::option_bytes(&[253 * 64]), 255);
        assert_eq!(AckVector::option_bytes(&[253 * 64 + 1]), 258);
    }

    #[test]
    fn receiver_acks_every_ack_ratio_packets_and_trims_below_the_ack_of_ack() {
        let spec: DccpSpec = serde_json::from_value(serde_json::json!({"src": 0, "dst": 1})).unwrap();
        let mut r = DccpReceiver::new(FlowId(0), NodeId(0), &spec);
        let mut out = vec![];
        let data = |seq: u32, ratio: u16, ack: u32, r: &mut DccpReceiver, out: &mut Vec<Packet>| {
            let mut p = Packet::new(FlowId(0), NodeId(1), Kind::DccpData, 1500);
            p.seq = seq;
            p.set_ack_ratio(ratio);
            p.ack = ack;
            r.on_data(&p, 0, out);
        };
        for seq in [0, 1, 2, 3, 5, 6] {
            data(seq, 2, 0, &mut r, &mut out);
        }
        // Ack Ratio 2: an ack after the 2nd, 4th and 6th data packet.
        assert_eq!(out.len(), 3);
        let last = out[2];
        assert_eq!((last.kind, last.ack, &*last.ackvec_runs()), (Kind::DccpAck, 6, &[2u16, 1, 4][..]));
        // 44 B of headers + Ack Vector option of 2 + 3 bytes, padded to 8.
        assert_eq!(last.size_bytes, 52);
        assert_eq!(r.stats.goodput_bytes, 6 * 1424);
        // The sender has seen an ack up to 3: the vector now starts above 3; Ack Ratio 1.
        data(7, 1, 4, &mut r, &mut out);
        assert_eq!(out.len(), 4);
        assert_eq!((out[3].ack, &*out[3].ackvec_runs()), (7, &[3u16][..]));
    }
}
