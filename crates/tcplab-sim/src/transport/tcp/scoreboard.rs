//! The sender's per-segment scoreboard (RFC 6675 §3, Linux's `TCPCB_SACKED_ACKED` /
//! `TCPCB_LOST` / `TCPCB_SACKED_RETRANS` bits), kept as a ring over [snd_una, snd_nxt).
//!
//! In-flight follows Linux `tcp_packets_in_flight`: packets_out − (sacked_out + lost_out) +
//! retrans_out — RFC 6675's "pipe".
//!
//! Each segment also carries its delivery-rate snapshot ([`TxRate`], `rate.rs`); ACK and SACK
//! processing feed the delivered segments to [`RateAcc`] (Linux `tcp_rate_skb_delivered`).

use std::collections::VecDeque;

use super::rate::{RateAcc, TxRate};
use crate::time::Nanos;

const SACKED: u8 = 1;
const LOST: u8 = 2;
/// Retransmitted, and that retransmission is still outstanding.
const RETRANS: u8 = 4;
/// Retransmitted at least once (Karn: no RTT sample from it).
const EVER_RETRANS: u8 = 8;
/// Counted for delivery rate when SACKed: the cumulative ACK skips it (Linux zeroes
/// `tx.delivered_mstamp`).
const RATE_DONE: u8 = 16;

#[derive(Clone, Copy, Debug)]
struct Seg {
    flags: u8,
    /// Latest transmission, ns.
    xmit_ns: Nanos,
    tx: TxRate,
}

/// What a cumulative ACK removed from the scoreboard.
#[derive(Clone, Copy, Debug, Default)]
pub struct Acked {
    pub segs: u32,
    /// Send time of the oldest newly acknowledged never-retransmitted segment (RTO estimator).
    pub first_xmit_ns: Option<Nanos>,
    /// Send time of the newest one (congestion control's RTT).
    pub last_xmit_ns: Option<Nanos>,
    /// Newly acknowledged segments that had not been SACKed before.
    pub not_sacked: u32,
    /// A retransmitted segment was among them (Linux `FLAG_RETRANS_DATA_ACKED`): Karn's rule
    /// forbids a per-segment RTT sample from this ACK.
    pub retrans_acked: bool,
}

#[derive(Clone, Debug)]
pub struct Scoreboard {
    una: u32,
    segs: VecDeque<Seg>,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// Everything below this has been checked by the RFC 6675 IsLost rule.
    lost_checked_upto: u32,
    /// No lost-and-not-retransmitted segment lies below this.
    retx_hint: u32,
    /// End of the highest SACKed segment (one past it), or `una` when none.
    pub high_sacked: u32,
    /// Blocks marked by the previous ACK: a repeated block is only scanned where it grew.
    last_blocks: [(u32, u32); 4],
    /// Segments ever marked lost (Linux `tp->lost`).
    pub lost_total: u32,
    /// The current ACK's delivery-rate accumulator; the sender resets it before each ACK.
    pub rate: RateAcc,
}

impl Scoreboard {
    pub fn new(capacity_segs: usize) -> Self {
        Scoreboard {
            una: 0,
            segs: VecDeque::with_capacity(capacity_segs),
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            lost_checked_upto: 0,
            retx_hint: 0,
            high_sacked: 0,
            last_blocks: [(0, 0); 4],
            lost_total: 0,
            rate: RateAcc::default(),
        }
    }

    #[inline]
    pub fn una(&self) -> u32 {
        self.una
    }

    /// Segments sent and not cumulatively acknowledged (Linux `packets_out`).
    #[inline]
    pub fn packets_out(&self) -> u32 {
        self.segs.len() as u32
    }

    /// Linux `tcp_packets_in_flight`, RFC 6675 "pipe".
    #[inline]
    pub fn in_flight(&self) -> u32 {
        self.packets_out() + self.retrans_out - self.sacked_out - self.lost_out
    }

    /// A new segment (number una + packets_out) was sent at `now` with rate snapshot `tx`.
    #[inline]
    pub fn push(&mut self, now_ns: Nanos, tx: TxRate) {
        self.segs.push_back(Seg { flags: 0, xmit_ns: now_ns, tx });
    }

    /// The rate snapshot of outstanding segment `seq`.
    pub fn tx_rate(&self, seq: u32) -> Option<TxRate> {
        self.segs.get(seq.wrapping_sub(self.una) as usize).map(|s| s.tx)
    }

    #[inline]
    fn seg_mut(&mut self, seq: u32) -> Option<&mut Seg> {
        self.segs.get_mut(seq.wrapping_sub(self.una) as usize)
    }

    #[inline]
    fn flags(&self, seq: u32) -> u8 {
        self.segs.get(seq.wrapping_sub(self.una) as usize).map_or(0, |s| s.flags)
    }

    /// Cumulative ACK up to (not including) `ack`.
    pub fn ack(&mut self, ack: u32) -> Acked {
        let mut out = Acked::default();
        while self.una < ack {
            let Some(s) = self.segs.pop_front() else { break };
            if s.flags & RATE_DONE == 0 {
                self.rate.delivered(self.una, s.xmit_ns, &s.tx, s.flags & EVER_RETRANS != 0);
            }
            self.una += 1;
            out.segs += 1;
            if s.flags & SACKED != 0 {
                self.sacked_out -= 1;
            } else {
                out.not_sacked += 1;
            }
            if s.flags & LOST != 0 {
                self.lost_out -= 1;
            }
            if s.flags & RETRANS != 0 {
                self.retrans_out -= 1;
            }
            if s.flags & EVER_RETRANS != 0 {
                out.retrans_acked = true;
            } else if s.flags & SACKED == 0 {
                out.first_xmit_ns.get_or_insert(s.xmit_ns);
                out.last_xmit_ns = Some(s.xmit_ns);
            }
        }
        self.lost_checked_upto = self.lost_checked_upto.max(self.una);
        self.retx_hint = self.retx_hint.max(self.una);
        self.high_sacked = self.high_sacked.max(self.una);
        out
    }

    /// Mark [start, end) as SACKed (clipped to the window). Returns the segments newly SACKed.
    /// Blocks are processed as a set per ACK: `begin_sack` first, then each block.
    pub fn sack(&mut self, start: u32, end: u32, slot: usize) -> u32 {
        let hi = self.una + self.packets_out();
        let (mut s, e) = (start.max(self.una), end.min(hi));
        // The receiver repeats blocks, mostly growing at the right edge: skip what the same block
        // already covered on the previous ACK.
        if let Some(&(ps, pe)) = self.last_blocks.iter().find(|b| b.0 == start) {
            if ps == start && pe > s {
                s = pe.max(s);
            }
        }
        if slot < self.last_blocks.len() {
            self.last_blocks[slot] = (start, end);
        }
        let mut newly = 0;
        let (mut lost, mut retrans) = (0, 0);
        let range = if e > s { (s - self.una) as usize..(e - self.una) as usize } else { 0..0 };
        for (i, seg) in self.segs.range_mut(range).enumerate() {
            if seg.flags & SACKED != 0 {
                continue;
            }
            lost += (seg.flags & LOST != 0) as u32;
            retrans += (seg.flags & RETRANS != 0) as u32;
            let ever = seg.flags & EVER_RETRANS;
            seg.flags = ever | SACKED | RATE_DONE;
            newly += 1;
            self.rate.delivered(s + i as u32, seg.xmit_ns, &seg.tx, ever != 0);
            if ever == 0 {
                let t = self.rate.last_sackt_ns.get_or_insert(seg.xmit_ns);
                *t = (*t).max(seg.xmit_ns);
            }
        }
        self.lost_out -= lost;
        self.retrans_out -= retrans;
        self.sacked_out += newly;
        if e > s {
            self.high_sacked = self.high_sacked.max(e);
        }
        newly
    }

    /// Forget the previous ACK's blocks (after a cumulative ACK or an RTO).
    pub fn clear_block_cache(&mut self) {
        self.last_blocks = [(0, 0); 4];
    }

    /// Mark one segment lost (e.g. the head, on fast retransmit).
    pub fn mark_lost(&mut self, seq: u32) {
        let Some(seg) = self.seg_mut(seq) else { return };
        if seg.flags & (SACKED | LOST) == 0 {
            seg.flags |= LOST;
            self.lost_out += 1;
            self.lost_total += 1;
            self.retx_hint = self.retx_hint.min(seq);
        }
    }

    /// RFC 6675 IsLost: a segment is lost once `dupthresh` segments above it are SACKed. Marks
    /// every un-SACKed segment below the `dupthresh`-th highest SACKed one. Amortised O(1): the
    /// boundary only moves up.
    pub fn mark_lost_by_sack(&mut self, dupthresh: u32) {
        if self.sacked_out < dupthresh {
            return;
        }
        // Walk down from the highest SACKed segment until `dupthresh` SACKed ones are counted.
        let mut count = 0;
        let mut seq = self.high_sacked;
        while seq > self.una && seq > self.lost_checked_upto {
            seq -= 1;
            if self.flags(seq) & SACKED != 0 {
                count += 1;
                if count == dupthresh {
                    break;
                }
            }
        }
        if count < dupthresh {
            return;
        }
        for s in self.lost_checked_upto.max(self.una)..seq {
            self.mark_lost(s);
        }
        self.lost_checked_upto = self.lost_checked_upto.max(seq);
    }

    /// After a retransmission timeout: every segment not SACKed is lost, no retransmission is
    /// outstanding (Linux `tcp_enter_loss`).
    pub fn mark_all_lost(&mut self) {
        for seg in self.segs.iter_mut() {
            seg.flags &= !RETRANS;
            if seg.flags & SACKED == 0 {
                seg.flags |= LOST;
            }
        }
        self.retrans_out = 0;
        let lost_out = self.packets_out() - self.sacked_out;
        self.lost_total += lost_out - self.lost_out;
        self.lost_out = lost_out;
        self.retx_hint = self.una;
        self.clear_block_cache();
    }

    /// The lowest segment that is lost and not yet retransmitted (RFC 6675 NextSeg rule 1).
    pub fn next_retransmit(&mut self) -> Option<u32> {
        if self.lost_out <= self.retrans_out {
            // Every lost segment is retransmitted (retransmitted ⊆ lost).
            return None;
        }
        let hi = self.una + self.packets_out();
        let mut seq = self.retx_hint.max(self.una);
        while seq < hi {
            if self.flags(seq) & (LOST | RETRANS | SACKED) == LOST {
                self.retx_hint = seq;
                return Some(seq);
            }
            seq += 1;
        }
        self.retx_hint = hi;
        None
    }

    /// `seq` was retransmitted at `now` with rate snapshot `tx`.
    pub fn on_retransmit(&mut self, seq: u32, now_ns: Nanos, tx: TxRate) {
        if let Some(seg) = self.seg_mut(seq) {
            if seg.flags & RETRANS == 0 {
                seg.flags |= RETRANS | EVER_RETRANS;
                seg.xmit_ns = now_ns;
                seg.tx = tx;
                self.retrans_out += 1;
            }
        }
    }

    #[inline]
    pub fn is_lost(&self, seq: u32) -> bool {
        self.flags(seq) & LOST != 0
    }

    /// Check the counters against the flags (debug builds and tests).
    pub fn check(&self) {
        let (mut s, mut l, mut r) = (0, 0, 0);
        for seg in &self.segs {
            s += (seg.flags & SACKED != 0) as u32;
            l += (seg.flags & LOST != 0) as u32;
            r += (seg.flags & RETRANS != 0) as u32;
            assert!(seg.flags & SACKED == 0 || seg.flags & (LOST | RETRANS) == 0, "sacked and lost");
            assert!(seg.flags & RETRANS == 0 || seg.flags & LOST != 0, "retransmitted but not lost");
        }
        assert_eq!((s, l, r), (self.sacked_out, self.lost_out, self.retrans_out));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u32) -> Scoreboard {
        let mut b = Scoreboard::new(64);
        for i in 0..n {
            b.push(i as Nanos, TxRate::default());
        }
        b
    }

    #[test]
    fn pipe_follows_rfc6675() {
        let mut b = board(10);
        assert_eq!(b.in_flight(), 10);
        // Segment 0 lost, 1..4 SACKed.
        assert_eq!(b.sack(1, 4, 0), 3);
        b.mark_lost_by_sack(3);
        assert!(b.is_lost(0));
        assert_eq!((b.sacked_out, b.lost_out), (3, 1));
        assert_eq!(b.in_flight(), 6);
        assert_eq!(b.next_retransmit(), Some(0));
        b.on_retransmit(0, 100, TxRate::default());
        assert_eq!(b.in_flight(), 7);
        assert_eq!(b.next_retransmit(), None);
        let a = b.ack(4);
        assert_eq!((a.segs, a.not_sacked, a.first_xmit_ns), (4, 1, None));
        assert_eq!((b.sacked_out, b.lost_out, b.retrans_out, b.in_flight()), (0, 0, 0, 6));
        b.check();
    }

    #[test]
    fn several_holes_are_found_in_one_pass() {
        let mut b = board(20);
        // Holes at 0, 5, 10; everything else SACKed up to 15.
        b.sack(1, 5, 0);
        b.sack(6, 10, 1);
        b.sack(11, 15, 2);
        b.mark_lost_by_sack(3);
        let mut holes = vec![];
        while let Some(s) = b.next_retransmit() {
            b.on_retransmit(s, 1, TxRate::default());
            holes.push(s);
        }
        assert_eq!(holes, vec![0, 5, 10]);
        b.check();
    }

    #[test]
    fn growing_block_is_counted_once() {
        let mut b = board(20);
        assert_eq!(b.sack(2, 4, 0), 2);
        assert_eq!(b.sack(2, 6, 0), 2);
        assert_eq!(b.sack(2, 6, 0), 0);
        assert_eq!(b.sacked_out, 4);
        b.check();
    }

    #[test]
    fn rto_marks_everything_not_sacked() {
        let mut b = board(8);
        b.sack(3, 5, 0);
        b.mark_lost(0);
        b.on_retransmit(0, 5, TxRate::default());
        b.mark_all_lost();
        assert_eq!((b.sacked_out, b.lost_out, b.retrans_out), (2, 6, 0));
        assert_eq!(b.in_flight(), 0);
        let order: Vec<u32> = std::iter::from_fn(|| {
            let s = b.next_retransmit()?;
            b.on_retransmit(s, 9, TxRate::default());
            Some(s)
        })
        .collect();
        assert_eq!(order, vec![0, 1, 2, 5, 6, 7]);
        b.check();
    }

    /// The scoreboard's counters against a naive model, over random ACK/SACK/loss sequences.
    #[test]
    fn counters_match_a_naive_model() {
        let mut rng = crate::rng::Rng::stream(42, crate::rng::Stream::LinkLoss, 0);
        for _ in 0..200 {
            let mut b = Scoreboard::new(8);
            let mut next = 0u32;
            for _ in 0..60 {
                match rng.below(6) {
                    0 | 1 => {
                        b.push(0, TxRate::default());
                        next += 1;
                    }
                    2 => {
                        let s = b.una() + rng.below((next - b.una() + 1) as u64) as u32;
                        let e = s + rng.below(5) as u32;
                        b.sack(s, e, rng.below(4) as usize);
                    }
                    3 => {
                        let a = b.una() + rng.below((next - b.una() + 1) as u64) as u32;
                        b.ack(a);
                        b.clear_block_cache();
                    }
                    4 => b.mark_lost_by_sack(3),
                    _ => {
                        if let Some(s) = b.next_retransmit() {
                            b.on_retransmit(s, 1, TxRate::default());
                        } else if rng.below(4) == 0 {
                            b.mark_all_lost();
                        }
                    }
                }
                b.check();
                assert!(b.in_flight() <= b.packets_out() + b.retrans_out);
            }
        }
    }
}
