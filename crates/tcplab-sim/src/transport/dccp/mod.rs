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
use crate::net::packet::{Ecn, Kind, Packet, Run, RunState, MAX_ACKVEC_RUNS};
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

/// An Ack Vector (RFC 4340 §11.4) as the engine carries it: runs of packets, each received,
/// received ECN-marked or not received, from the Acknowledgement Number down. The first run
/// ends at the greatest sequence number received, and the last is a received or marked one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckVector {
    pub n: u8,
    pub runs: [Run; MAX_ACKVEC_RUNS],
}

impl Default for AckVector {
    fn default() -> Self {
        AckVector { n: 0, runs: [Run::received(0); MAX_ACKVEC_RUNS] }
    }
}

impl AckVector {
    /// The runs in use.
    pub fn runs(&self) -> &[Run] {
        &self.runs[..self.n as usize]
    }

    /// Append `len` packets in `state` (a run of the same state grows); false once the vector
    /// is full or the run had to be cut at 16 bits, when the encoding stops.
    fn push(&mut self, state: RunState, len: u32) -> bool {
        let n = self.n as usize;
        if n > 0 && self.runs[n - 1].state == state {
            let last = &mut self.runs[n - 1];
            let total = last.len as u32 + len;
            last.len = total.min(u16::MAX as u32) as u16;
            return total <= u16::MAX as u32;
        }
        if n == MAX_ACKVEC_RUNS {
            return false;
        }
        self.runs[n] = Run { state, len: len.min(u16::MAX as u32) as u16 };
        self.n += 1;
        len <= u16::MAX as u32
    }

    /// The vector of `ranges` (sorted, disjoint `[start, end)` of received sequence numbers),
    /// `marked` (sorted sequence numbers among them that arrived CE-marked), covering only
    /// sequence numbers at or above `floor`: from the top range down, as many runs as fit in
    /// [`MAX_ACKVEC_RUNS`] and in 16 bits each, ending with a received or marked run.
    pub fn encode(ranges: &[(u32, u32)], marked: &[u32], floor: u32) -> AckVector {
        let mut v = AckVector::default();
        // Marks at indices below `m` lie below the part of the vector written so far.
        let mut m = marked.len();
        let mut below: Option<u32> = None; // start of the last received range written
        'ranges: for &(start, end) in ranges.iter().rev() {
            if end <= floor {
                break;
            }
            if let Some(b) = below {
                // A gap needs room for the run below it, and must fit in one run.
                let gap = b - end;
                if v.n as usize + 2 > MAX_ACKVEC_RUNS || gap > u16::MAX as u32 {
                    break;
                }
                v.push(RunState::NotReceived, gap);
            }
            let start = start.max(floor);
            let mut top = end; // exclusive
            while top > start {
                while m > 0 && marked[m - 1] >= top {
                    m -= 1;
                }
                let next_mark = (m > 0 && marked[m - 1] >= start).then(|| marked[m - 1]);
                let (state, lo) = match next_mark {
                    Some(k) if k == top - 1 => {
                        m -= 1;
                        (RunState::Marked, k)
                    }
                    Some(k) => (RunState::Received, k + 1),
                    None => (RunState::Received, start),
                };
                if !v.push(state, top - lo) {
                    break 'ranges;
                }
                top = lo;
            }
            if start == floor {
                break;
            }
            below = Some(start);
        }
        v
    }

    /// The runs that report packets, `[lo, hi]` (inclusive, highest first) with their state, of
    /// the vector with Acknowledgement Number `ackno`.
    pub fn reported(ackno: u32, runs: &[Run]) -> impl Iterator<Item = (u32, u32, RunState)> + '_ {
        let mut top = ackno as i64;
        runs.iter().filter_map(move |r| {
            let hi = top;
            let lo = top - r.len as i64 + 1;
            top = lo - 1;
            (r.state != RunState::NotReceived && r.len > 0 && hi >= 0).then(|| (lo.max(0) as u32, hi as u32, r.state))
        })
    }

    /// Bytes of Ack Vector options on the wire (RFC 4340 §11.4: one byte per 64 packets of a
    /// run, at most 253 data bytes per option).
    pub fn option_bytes(runs: &[Run]) -> u32 {
        let data: u32 = runs.iter().map(|r| (r.len as u32).div_ceil(ACKVEC_RUN_PER_BYTE)).sum();
        if data == 0 {
            return 0;
        }
        data + ACKVEC_OPTION_HEADER_BYTES * data.div_ceil(ACKVEC_OPTION_MAX_DATA)
    }

    /// IP size of a DCCP-Ack carrying `runs`: IP, generic header, Acknowledgement Number
    /// subheader, options padded to a multiple of 4 bytes (RFC 4340 §5.1 Data Offset).
    pub fn ack_packet_bytes(runs: &[Run]) -> u32 {
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
    /// Data packets that arrived CE-marked (reported as such in the Ack Vector).
    pub ce_pkts: u64,
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
    /// The received sequence numbers among them that arrived CE-marked, sorted.
    marked: Vec<u32>,
    /// The half-connection is ECN-capable: its Acks leave ECT(0) (RFC 4340 §12).
    ecn: bool,
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
            marked: Vec::new(),
            ecn: spec.ecn,
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

    /// Record `seq` as received; false for a duplicate.
    fn record(&mut self, seq: u32) -> bool {
        let i = self.ranges.partition_point(|r| r.1 < seq);
        match self.ranges.get_mut(i) {
            Some(r) if r.0 <= seq && seq < r.1 => return false, // duplicate
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
            let oldest = self.ranges[0].0;
            let keep = self.marked.partition_point(|&k| k < oldest);
            self.marked.drain(..keep);
        }
        true
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
            let keep = self.marked.partition_point(|&k| k < floor);
            self.marked.drain(..keep);
        }
        if p.ecn() == Ecn::CE {
            self.stats.ce_pkts += 1;
        }
        if p.seq >= self.floor && self.record(p.seq) && p.ecn() == Ecn::CE {
            let i = self.marked.partition_point(|&k| k < p.seq);
            self.marked.insert(i, p.seq);
        }
        self.num_data += 1;
        if self.num_data >= self.ack_ratio {
            self.num_data = 0;
            self.send_ack(p.ts_val_ns, out);
        }
    }

    fn send_ack(&mut self, ts_val_ns: Nanos, out: &mut Vec<Packet>) {
        let Some(gsr) = self.gsr() else { return };
        let v = AckVector::encode(&self.ranges, &self.marked, self.floor);
        let mut a = Packet::new(self.flow, self.peer, Kind::DccpAck, AckVector::ack_packet_bytes(v.runs()));
        a.seq = self.ack_seq;
        a.ack = gsr;
        a.set_ackvec(v.runs());
        if self.ecn {
            a.set_ecn(Ecn::ECT0);
        }
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

    /// The naive model: one state per sequence number.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Naive {
        Lost,
        Got,
        Marked,
    }

    fn ranges_of(received: &[Naive]) -> Vec<(u32, u32)> {
        let mut out: Vec<(u32, u32)> = Vec::new();
        for (s, _) in received.iter().enumerate().filter(|(_, r)| **r != Naive::Lost) {
            let s = s as u32;
            match out.last_mut() {
                Some(r) if r.1 == s => r.1 += 1,
                _ => out.push((s, s + 1)),
            }
        }
        out
    }

    fn marks_of(received: &[Naive]) -> Vec<u32> {
        (0..received.len() as u32).filter(|&s| received[s as usize] == Naive::Marked).collect()
    }

    #[test]
    fn encode_decode_matches_a_naive_model() {
        let mut rng = Rng::stream(7, Stream::FlowStart, 99);
        for case in 0..4000 {
            let n = 1 + rng.below(400) as usize;
            let p_loss = [0.0, 0.01, 0.1, 0.5][case % 4];
            let p_mark = [0.0, 0.005, 0.05, 0.3][(case / 4) % 4];
            let mut received: Vec<Naive> = (0..n)
                .map(|_| if rng.chance(p_loss) { Naive::Lost } else if rng.chance(p_mark) { Naive::Marked } else { Naive::Got })
                .collect();
            if received[n - 1] == Naive::Lost {
                received[n - 1] = Naive::Got; // the packet that triggered the ack
            }
            let floor = rng.below(n as u64) as u32;
            let v = AckVector::encode(&ranges_of(&received), &marks_of(&received), floor);
            let runs = v.runs();
            assert!(!runs.is_empty() && runs.len() <= MAX_ACKVEC_RUNS, "case {case}: {runs:?}");
            assert_ne!(runs.last().unwrap().state, RunState::NotReceived, "case {case}: {runs:?}");
            assert!(runs.windows(2).all(|w| w[0].state != w[1].state), "case {case}: {runs:?}");
            // Runs are contiguous from the ack number down: every covered seq is reported right.
            let covered: u32 = runs.iter().map(|r| r.len as u32).sum();
            let ackno = n as u32 - 1;
            let lowest = ackno + 1 - covered;
            assert!(lowest >= floor, "case {case}: covers {lowest} below the floor {floor}");
            let mut said = vec![Naive::Lost; n];
            for (lo, hi, state) in AckVector::reported(ackno, runs) {
                let st = if state == RunState::Marked { Naive::Marked } else { Naive::Got };
                (lo..=hi).for_each(|s| said[s as usize] = st);
            }
            for s in lowest as usize..n {
                assert_eq!(said[s], received[s], "case {case}: seq {s}");
            }
            // It stops early only for lack of runs: when the states from the top down to the
            // lowest packet received at or above the floor change few enough times to fit, the
            // vector reaches down to that packet.
            let first = (floor as usize..n).find(|&s| received[s] != Naive::Lost).unwrap();
            let needed = 1 + (first..n - 1).filter(|&s| received[s] != received[s + 1]).count();
            if needed <= MAX_ACKVEC_RUNS {
                assert_eq!(lowest as usize, first, "case {case}");
            } else {
                assert!(runs.len() >= MAX_ACKVEC_RUNS - 1, "case {case}: {runs:?}");
            }
        }
    }

    #[test]
    fn runs_longer_than_16_bits_end_the_vector_on_a_received_run() {
        // 70 000 received on top: one run cut at 65 535, nothing below it.
        let v = AckVector::encode(&[(0, 10), (20, 70_020)], &[], 0);
        assert_eq!(v.runs(), &[Run::received(u16::MAX)]);
        // A gap too long for one run: the vector stops above it.
        let v = AckVector::encode(&[(0, 10), (70_000, 70_005)], &[70_001], 0);
        assert_eq!(v.runs(), &[Run::received(3), Run::marked(1), Run::received(1)]);
    }

    #[test]
    fn ack_size_grows_with_the_vector() {
        // 20 IP + 16 generic + 8 ack subheader = 44; a 1-packet run: 2 + 1 = 3 → padded to 4.
        let r = Run::received;
        assert_eq!(AckVector::ack_packet_bytes(&[r(1)]), 48);
        // 64 packets still fit one byte; 65 need two: 2 + 2 = 4.
        assert_eq!(AckVector::option_bytes(&[r(64)]), 3);
        assert_eq!(AckVector::option_bytes(&[r(65)]), 4);
        // 1000 received, 3 lost, 500 received: 16 + 1 + 8 = 25 data bytes + 2 = 27 → 28.
        assert_eq!(AckVector::ack_packet_bytes(&[r(1000), Run::not_received(3), r(500)]), 72);
        // A mark costs a byte of its own, and splits the run it falls in: 1 + 1 + 8 + 2 = 12 → 12.
        assert_eq!(AckVector::ack_packet_bytes(&[r(10), Run::marked(1), r(489)]), 56);
        // 253 data bytes fill one option; the next byte opens a second (RFC 4340 §11.4).
        assert_eq!(AckVector::option_bytes(&[r(253 * 64)]), 255);
        assert_eq!(AckVector::option_bytes(&[r(253 * 64 + 1)]), 258);
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
        assert_eq!((last.kind, last.ack, &*last.ackvec_runs()), (Kind::DccpAck, 6, &[Run::received(2), Run::not_received(1), Run::received(4)][..]));
        // 44 B of headers + Ack Vector option of 2 + 3 bytes, padded to 8.
        assert_eq!(last.size_bytes, 52);
        assert_eq!(r.stats.goodput_bytes, 6 * 1424);
        // The sender has seen an ack up to 3: the vector now starts above 3; Ack Ratio 1.
        data(7, 1, 4, &mut r, &mut out);
        assert_eq!(out.len(), 4);
        assert_eq!((out[3].ack, &*out[3].ackvec_runs()), (7, &[Run::received(3)][..]));
        assert_eq!(out[3].ecn(), Ecn::NOT_ECT);
    }

    #[test]
    fn receiver_reports_ce_marked_packets_in_the_ack_vector() {
        let spec: DccpSpec = serde_json::from_value(serde_json::json!({"src": 0, "dst": 1, "ecn": true, "init_ack_ratio": 1})).unwrap();
        let mut r = DccpReceiver::new(FlowId(0), NodeId(0), &spec);
        let mut out = vec![];
        for (seq, ecn) in [(0, Ecn::ECT0), (1, Ecn::CE), (2, Ecn::CE), (3, Ecn::ECT0), (5, Ecn::CE), (6, Ecn::ECT0)] {
            let mut p = Packet::new(FlowId(0), NodeId(1), Kind::DccpData, 1500);
            p.seq = seq;
            p.set_ecn(ecn);
            p.set_ack_ratio(1);
            r.on_data(&p, 0, &mut out);
        }
        let last = out.last().unwrap();
        // 6 received, 5 marked, 4 lost, 3 received, 2–1 marked, 0 received.
        let want = [Run::received(1), Run::marked(1), Run::not_received(1), Run::received(1), Run::marked(2), Run::received(1)];
        assert_eq!((last.ack, &*last.ackvec_runs()), (6, &want[..]));
        assert_eq!(r.stats.ce_pkts, 3);
        // The Acks themselves are ECN-capable.
        assert!(out.iter().all(|a| a.ecn() == Ecn::ECT0));
        // Once the sender has seen the Ack up to 4, the marks below are forgotten.
        let mut p = Packet::new(FlowId(0), NodeId(1), Kind::DccpData, 1500);
        p.seq = 7;
        p.ack = 4;
        p.set_ack_ratio(1);
        r.on_data(&p, 0, &mut out);
        assert_eq!(&*out.last().unwrap().ackvec_runs(), &[Run::received(2), Run::marked(1)][..]);
    }
}
