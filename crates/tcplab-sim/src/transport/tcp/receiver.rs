//! The TCP receiver: cumulative ACKs, SACK blocks (RFC 2018), delayed ACKs (RFC 1122 §4.2.3.2 as
//! Linux does it: every second full segment, a 40 ms timer, an immediate ACK for out-of-order
//! data and for data that fills a hole), and RFC 7323 timestamp echo.

use std::collections::VecDeque;

use crate::ids::{FlowId, NodeId};
use crate::measure::Histogram;
use crate::net::packet::{Kind, Packet, MAX_SACK_BLOCKS};
use crate::spec::TcpSpec;
use crate::time::Nanos;
use crate::transport::TimerSlot;

/// An out-of-order range [start, end) held by the receiver.
#[derive(Clone, Copy, Debug)]
struct OooRange {
    start: u32,
    end: u32,
    /// When it last grew, for RFC 2018's "most recently received first" block order.
    touched: u64,
}

#[derive(Clone, Debug, Default)]
pub struct ReceiverStats {
    /// Data packets that reached the receiver (duplicates included).
    pub delivered_pkts: u64,
    /// Bytes delivered in order to the application.
    pub goodput_bytes: u64,
    pub acks_sent: u64,
    /// One-way delay of data packets, sender to receiver.
    pub owd: Histogram,
}

#[derive(Debug)]
pub struct TcpReceiver {
    flow: FlowId,
    /// Where ACKs go (the sender's node).
    peer: NodeId,
    mss_bytes: u32,
    header_bytes: u32,
    delayed_ack: bool,
    delack_timeout_ns: Nanos,
    sack: bool,
    timestamps: bool,
    pub rcv_nxt: u32,
    /// Out-of-order data, sorted; holes are filled from the front, so a deque.
    ooo: VecDeque<OooRange>,
    touch: u64,
    /// One segment inside each of the most recently touched ranges, newest first (distinct
    /// ranges): the SACK blocks without a scan of every range when there are many holes.
    recent: [u32; MAX_SACK_BLOCKS],
    n_recent: usize,
    /// In-order full segments received since the last ACK.
    unacked_segs: u32,
    ts_recent: Nanos,
    last_ack_sent: u32,
    pub delack_timer: TimerSlot,
    pub stats: ReceiverStats,
}

impl TcpReceiver {
    pub fn new(flow: FlowId, peer: NodeId, spec: &TcpSpec) -> Self {
        TcpReceiver {
            flow,
            peer,
            mss_bytes: spec.mss_bytes,
            header_bytes: spec.header_bytes,
            delayed_ack: spec.delayed_ack,
            delack_timeout_ns: spec.delack_timeout_ns,
            sack: spec.sack,
            timestamps: spec.timestamps,
            rcv_nxt: 0,
            ooo: VecDeque::with_capacity(64),
            touch: 0,
            recent: [0; MAX_SACK_BLOCKS],
            n_recent: 0,
            unacked_segs: 0,
            ts_recent: 0,
            last_ack_sent: 0,
            delack_timer: TimerSlot::default(),
            stats: ReceiverStats::default(),
        }
    }

    /// A data segment arrived.
    pub fn on_data(&mut self, p: &Packet, now: Nanos, out: &mut Vec<Packet>) {
        self.stats.delivered_pkts += 1;
        self.stats.owd.record(now.saturating_sub(p.ts_val_ns));
        // RFC 7323 §4.3: remember TSval of the segment that starts at or before the last ACK sent.
        if self.timestamps && p.seq <= self.last_ack_sent {
            self.ts_recent = p.ts_val_ns;
        }
        if p.seq == self.rcv_nxt {
            let before = self.rcv_nxt;
            self.rcv_nxt += 1;
            let had_hole = !self.ooo.is_empty();
            while let Some(first) = self.ooo.front() {
                if first.start > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(first.end);
                self.ooo.pop_front();
            }
            self.stats.goodput_bytes += (self.rcv_nxt - before) as u64 * self.mss_bytes as u64;
            if had_hole || !self.delayed_ack {
                self.send_ack(now, out);
            } else {
                self.unacked_segs += 1;
                if self.unacked_segs >= 2 {
                    self.send_ack(now, out);
                } else if self.delack_timer.deadline.is_none() {
                    self.delack_timer.deadline = Some(now + self.delack_timeout_ns);
                }
            }
        } else if p.seq > self.rcv_nxt {
            self.insert_ooo(p.seq);
            self.send_ack(now, out);
        } else {
            // Old duplicate: ACK at once so the sender learns where we are.
            self.send_ack(now, out);
        }
    }

    fn insert_ooo(&mut self, seq: u32) {
        self.touch += 1;
        let touched = self.touch;
        let i = self.ooo.partition_point(|r| r.end < seq);
        if i < self.ooo.len() && self.ooo[i].start <= seq + 1 && seq <= self.ooo[i].end {
            // Extends or lies in range i (touching it on the left or right).
            let r = &mut self.ooo[i];
            r.start = r.start.min(seq);
            r.end = r.end.max(seq + 1);
            r.touched = touched;
            // Merge with the next range if they now touch.
            if i + 1 < self.ooo.len() && self.ooo[i + 1].start <= self.ooo[i].end {
                self.ooo[i].end = self.ooo[i].end.max(self.ooo[i + 1].end);
                self.ooo.remove(i + 1);
            }
        } else {
            self.ooo.insert(i, OooRange { start: seq, end: seq + 1, touched });
        }
        // `seq`'s range is now the most recent: drop older marks inside it, put `seq` first.
        let (lo, hi) = (self.ooo[i].start, self.ooo[i].end);
        let mut kept = [seq; MAX_SACK_BLOCKS];
        let mut n = 1;
        for &m in &self.recent[..self.n_recent] {
            if (m < lo || m >= hi) && n < MAX_SACK_BLOCKS {
                kept[n] = m;
                n += 1;
            }
        }
        (self.recent, self.n_recent) = (kept, n);
    }

    /// The ranges for the SACK option, most recently touched first (RFC 2018 §4), as
    /// (touched, start, end); returns how many.
    fn sack_ranges(&self, max_blocks: usize, best: &mut [(u64, u32, u32); MAX_SACK_BLOCKS]) -> usize {
        // Marks below rcv_nxt belong to ranges already delivered.
        let mut n = 0;
        for &m in &self.recent[..self.n_recent] {
            if m >= self.rcv_nxt && n < max_blocks {
                let r = &self.ooo[self.ooo.partition_point(|r| r.end <= m)];
                best[n] = (r.touched, r.start, r.end);
                n += 1;
            }
        }
        if n == max_blocks || n == self.ooo.len() {
            return n;
        }
        // Fewer marks than ranges wanted (ranges were delivered): one pass keeping the
        // `max_blocks` most recently touched (`touched` values are distinct).
        n = 0;
        for r in &self.ooo {
            if n == max_blocks && r.touched <= best[n - 1].0 {
                continue;
            }
            let mut i = if n < max_blocks { n } else { n - 1 };
            while i > 0 && best[i - 1].0 < r.touched {
                best[i] = best[i - 1];
                i -= 1;
            }
            best[i] = (r.touched, r.start, r.end);
            n = (n + 1).min(max_blocks);
        }
        n
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.unacked_segs > 0 {
            self.send_ack(now, out);
        }
    }

    fn send_ack(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let mut a = Packet::new(self.flow, self.peer, Kind::Ack, self.header_bytes);
        a.ack = self.rcv_nxt;
        a.ts_val_ns = now;
        a.ts_ecr_ns = if self.timestamps { self.ts_recent } else { 0 };
        if self.sack && !self.ooo.is_empty() {
            // RFC 2018 §4: the most recently changed block first, then the others most recent first.
            let max_blocks = if self.timestamps { 3 } else { MAX_SACK_BLOCKS };
            let mut best = [(0, 0, 0); MAX_SACK_BLOCKS];
            let n = self.sack_ranges(max_blocks, &mut best);
            for (slot, b) in a.sack.iter_mut().zip(&best[..n]) {
                *slot = (b.1, b.2);
            }
            a.n_sack = n as u8;
            // The SACK option: kind, length and 8 bytes a block, padded with two NOPs (Linux).
            a.size_bytes += 4 + 8 * n as u32;
        }
        self.stats.acks_sent += 1;
        self.last_ack_sent = self.rcv_nxt;
        self.unacked_segs = 0;
        self.delack_timer.deadline = None;
        out.push(a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rx(delayed: bool) -> TcpReceiver {
        let mut spec = TcpSpec::new(0, 1);
        spec.delayed_ack = delayed;
        TcpReceiver::new(FlowId(0), NodeId(0), &spec)
    }

    fn data(seq: u32) -> Packet {
        let mut p = Packet::new(FlowId(0), NodeId(1), Kind::Data, 1500);
        p.seq = seq;
        p
    }

    #[test]
    fn acks_every_second_segment_and_arms_the_timer_for_the_odd_one() {
        let mut r = rx(true);
        let mut out = vec![];
        r.on_data(&data(0), 0, &mut out);
        assert!(out.is_empty());
        assert_eq!(r.delack_timer.deadline, Some(40_000_000));
        r.on_data(&data(1), 10, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack, 2);
        assert_eq!(r.delack_timer.deadline, None);
        r.on_data(&data(2), 20, &mut out);
        assert_eq!(out.len(), 1);
        r.on_delack(40_000_020, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].ack, 3);
    }

    #[test]
    fn out_of_order_data_is_acked_at_once_with_sack_blocks() {
        let mut r = rx(true);
        let mut out = vec![];
        for s in [0, 1] {
            r.on_data(&data(s), 0, &mut out);
        }
        out.clear();
        // Segment 2 lost; 3, 4 arrive, then 6 (5 lost too).
        for s in [3, 4, 6] {
            r.on_data(&data(s), 0, &mut out);
        }
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|a| a.ack == 2));
        assert_eq!(out[1].sack_blocks(), &[(3, 5)]);
        assert_eq!(out[2].sack_blocks(), &[(6, 7), (3, 5)]);
        // 52-byte header + SACK option 4 + 2·8.
        assert_eq!(out[2].size_bytes, 52 + 20);
        out.clear();
        // The retransmission of 2 fills the first hole: immediate ACK up to 5.
        r.on_data(&data(2), 0, &mut out);
        assert_eq!(out[0].ack, 5);
        assert_eq!(out[0].sack_blocks(), &[(6, 7)]);
        r.on_data(&data(5), 0, &mut out);
        assert_eq!(out[1].ack, 7);
        assert_eq!(out[1].n_sack, 0);
        assert_eq!(r.stats.goodput_bytes, 7 * 1448);
    }

    /// The SACK blocks against a naive pick (most recently touched first, RFC 2018 §4), over
    /// random arrival orders with many holes.
    #[test]
    fn sack_blocks_are_the_most_recently_touched_ranges() {
        let mut rng = crate::rng::Rng::stream(3, crate::rng::Stream::LinkLoss, 0);
        for timestamps in [true, false] {
            let mut r = rx(false);
            r.timestamps = timestamps;
            let mut out = vec![];
            for k in 0..2000 {
                // Mostly out of order; now and then the missing segment, delivering ranges.
                let seq = if k % 40 == 39 { r.rcv_nxt } else { r.rcv_nxt + 1 + rng.below(300) as u32 };
                r.on_data(&data(seq), 0, &mut out);
                let a = out.pop().unwrap();
                let mut ranges: Vec<_> = r.ooo.iter().map(|o| (o.touched, o.start, o.end)).collect();
                ranges.sort_by(|x, y| y.0.cmp(&x.0));
                let want: Vec<(u32, u32)> = ranges.iter().take(if timestamps { 3 } else { 4 }).map(|x| (x.1, x.2)).collect();
                assert_eq!(a.sack_blocks(), &want[..]);
            }
        }
    }

    #[test]
    fn ranges_merge() {
        let mut r = rx(false);
        for s in [5, 7, 6, 9, 8] {
            r.insert_ooo(s);
        }
        assert_eq!(r.ooo.len(), 1);
        assert_eq!((r.ooo[0].start, r.ooo[0].end), (5, 10));
    }
}
