//! The sender's per-segment scoreboard (RFC 6675 §3, Linux's `TCPCB_SACKED_ACKED` /
//! `TCPCB_LOST` / `TCPCB_SACKED_RETRANS` bits), kept as a ring over [snd_una, snd_nxt).
//!
//! In-flight follows Linux `tcp_packets_in_flight`: packets_out − (sacked_out + lost_out) +
//! retrans_out — RFC 6675's "pipe".
//!
//! Each segment also carries its delivery-rate snapshot ([`TxRate`], `rate.rs`); ACK and SACK
//! processing feed the delivered segments to [`RateAcc`] (Linux `tcp_rate_skb_delivered`).
//!
//! With RACK (RFC 8985, Linux `tcp_recovery.c`) the same processing advances [`Rack`], and
//! [`Scoreboard::rack_detect_loss`] marks segments lost by time. Original transmissions leave in
//! sequence order, so they are walked from a hint; retransmissions are kept in the order they
//! were sent (Linux walks one time-sorted list of both).

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

/// RACK's state (RFC 8985 §6.1, Linux `tp->rack`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Rack {
    /// Send time and end (seq + 1) of the most recently sent segment delivered so far
    /// (RACK.xmit_ts, RACK.end_seq).
    pub xmit_ns: Nanos,
    pub end_seq: u32,
    /// RTT of the last segment that advanced the state (RACK.rtt).
    pub rtt_ns: Nanos,
    /// A delivery advanced the state since the last loss detection.
    pub advanced: bool,
}

/// RFC 8985 / Linux `tcp_rack_sent_after`: (t1, seq1) was sent after (t2, seq2); segments sent
/// at the same instant are ordered by sequence.
#[inline]
fn sent_after(t1: Nanos, seq1: u32, t2: Nanos, seq2: u32) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Rack {
    /// Linux `tcp_rack_advance`: segment `seq`, last sent at `xmit_ns`, was delivered at `now`.
    #[inline]
    fn advance(&mut self, seq: u32, flags: u8, xmit_ns: Nanos, now: Nanos, min_rtt_ns: Nanos) {
        let rtt = now.saturating_sub(xmit_ns);
        // A retransmitted segment delivered faster than min RTT: it may be the original that
        // arrived, so its send time says nothing (RFC 8985 §6.2 step 2).
        if flags & EVER_RETRANS != 0 && rtt < min_rtt_ns {
            return;
        }
        self.advanced = true;
        self.rtt_ns = rtt;
        if sent_after(xmit_ns, seq + 1, self.xmit_ns, self.end_seq) {
            self.xmit_ns = xmit_ns;
            self.end_seq = seq + 1;
        }
    }
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
    /// Segments SACKed; without SACK blocks ([`Self::without_sack`]) the segments duplicate ACKs
    /// say arrived above the hole, all a sender can know of them (Linux `tcp_add_reno_sack`): no
    /// segment is marked, and the sender keeps the count.
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// The connection has no SACK blocks: `sacked_out` counts duplicate ACKs.
    no_sack: bool,
    /// Everything below this has been checked by the RFC 6675 IsLost rule.
    lost_checked_upto: u32,
    /// No lost-and-not-retransmitted segment lies below this.
    retx_hint: u32,
    /// End of the highest SACKed segment (one past it), or `una` when none.
    pub high_sacked: u32,
    /// Blocks of recent ACKs, by their place in the ACK, clipped to the window: every segment
    /// they cover is SACKed, so a block is walked only where they do not cover it.
    last_blocks: [(u32, u32); 4],
    /// Segments ever marked lost (Linux `tp->lost`).
    pub lost_total: u32,
    /// The current ACK's delivery-rate accumulator; the sender resets it before each ACK.
    pub rate: RateAcc,
    /// RACK loss detection is on (the flow's `rack`).
    rack_on: bool,
    pub rack: Rack,
    /// The ACK being processed: its arrival, the connection's min RTT and the TSecr it echoes.
    ack_now_ns: Nanos,
    ack_min_rtt_ns: Nanos,
    ack_tsecr_ns: Nanos,
    /// Every original transmission below this is SACKed, marked lost or retransmitted.
    rack_hint: u32,
    /// The cumulative ACK's share of RACK's update, applied by [`Self::finish_ack`]: the RTT of
    /// the last segment and the send time and end of the most recently sent one.
    rack_cum: Rack,
    /// Outstanding retransmissions (seq, send time) in the order they were sent; entries whose
    /// segment was delivered, acknowledged or sent again are dropped when met.
    retx_order: VecDeque<(u32, Nanos)>,
}

impl Scoreboard {
    pub fn new(capacity_segs: usize) -> Self {
        Scoreboard {
            una: 0,
            segs: VecDeque::with_capacity(capacity_segs),
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            no_sack: false,
            lost_checked_upto: 0,
            retx_hint: 0,
            high_sacked: 0,
            last_blocks: [(0, 0); 4],
            lost_total: 0,
            rate: RateAcc::default(),
            rack_on: false,
            rack: Rack::default(),
            ack_now_ns: 0,
            ack_min_rtt_ns: Nanos::MAX,
            ack_tsecr_ns: 0,
            rack_hint: 0,
            rack_cum: Rack::default(),
            retx_order: VecDeque::new(),
        }
    }

    /// A connection without SACK blocks: `sacked_out` is the sender's count of duplicate ACKs.
    pub fn without_sack(mut self, no_sack: bool) -> Self {
        self.no_sack = no_sack;
        self
    }

    /// Turn RACK on: deliveries advance [`Rack`] and [`Self::rack_detect_loss`] may be used.
    pub fn with_rack(mut self, on: bool) -> Self {
        self.rack_on = on;
        self
    }

    /// Before processing an ACK: when it arrived, the min RTT and the TSecr it echoes (RACK).
    #[inline]
    pub fn set_ack_context(&mut self, now_ns: Nanos, min_rtt_ns: Nanos, tsecr_ns: Nanos) {
        (self.ack_now_ns, self.ack_min_rtt_ns, self.ack_tsecr_ns) = (now_ns, min_rtt_ns, tsecr_ns);
    }

    /// After the ACK's SACK blocks: its cumulatively acknowledged segments advance RACK, after
    /// the SACKed ones as in Linux (`tcp_sacktag_write_queue`, then `tcp_clean_rtx_queue`).
    #[inline]
    pub fn finish_ack(&mut self) {
        let cum = std::mem::take(&mut self.rack_cum);
        if cum.advanced {
            self.rack.advanced = true;
            self.rack.rtt_ns = cum.rtt_ns;
            if sent_after(cum.xmit_ns, cum.end_seq, self.rack.xmit_ns, self.rack.end_seq) {
                (self.rack.xmit_ns, self.rack.end_seq) = (cum.xmit_ns, cum.end_seq);
            }
        }
    }

    /// Linux `tcp_rack_detect_loss`: mark lost every segment sent before RACK's segment whose
    /// RTT plus `reo_wnd` has passed (a retransmission lost again loses its RETRANS mark and is
    /// due again). Returns the longest wait of those not yet due (0: none), for the
    /// reordering timer.
    pub fn rack_detect_loss(&mut self, now: Nanos, reo_wnd: Nanos) -> Nanos {
        let (rx, rend, rtt) = (self.rack.xmit_ns, self.rack.end_seq, self.rack.rtt_ns);
        let hi = self.una + self.packets_out();
        let mut wait: Nanos = 0;
        // Original transmissions, in sequence (= send) order; later ones are due later.
        let mut seq = self.rack_hint.max(self.una);
        let mut hint = None;
        while seq < hi {
            let seg = self.segs[(seq - self.una) as usize];
            if seg.flags & (SACKED | LOST | EVER_RETRANS) == 0 {
                if !sent_after(rx, rend, seg.xmit_ns, seq + 1) {
                    break;
                }
                let due = seg.xmit_ns + rtt + reo_wnd;
                if due <= now {
                    self.mark_lost(seq);
                } else {
                    hint.get_or_insert(seq);
                    wait = wait.max(due - now);
                }
            }
            seq += 1;
        }
        self.rack_hint = hint.unwrap_or(seq);
        // Retransmissions, in the order they were sent.
        let mut i = 0;
        while i < self.retx_order.len() {
            let (s, t) = self.retx_order[i];
            let live = s >= self.una && s < hi && {
                let seg = self.segs[(s - self.una) as usize];
                seg.flags & RETRANS != 0 && seg.xmit_ns == t
            };
            if !live {
                self.retx_order.remove(i);
                continue;
            }
            if !sent_after(rx, rend, t, s + 1) {
                break;
            }
            let due = t + rtt + reo_wnd;
            if due <= now {
                self.mark_retransmission_lost(s);
                self.retx_order.remove(i);
            } else {
                wait = wait.max(due - now);
                i += 1;
            }
        }
        wait
    }

    /// A retransmission was lost as well (Linux `tcp_mark_skb_lost` on a LOST|SACKED_RETRANS
    /// segment): it is due for retransmission again and counts as lost again.
    fn mark_retransmission_lost(&mut self, seq: u32) {
        let Some(seg) = self.seg_mut(seq) else { return };
        if seg.flags & RETRANS != 0 {
            seg.flags &= !RETRANS;
            self.retrans_out -= 1;
            self.lost_total += 1;
            self.retx_hint = self.retx_hint.min(seq);
        }
    }

    /// After a retransmission timeout with RACK (Linux `tcp_timeout_mark_lost`): the first
    /// segment and every other one whose RACK RTT has passed since it was sent are lost;
    /// segments sent more recently are left to RACK.
    pub fn mark_timeout_lost(&mut self, now: Nanos) {
        let rtt = self.rack.rtt_ns;
        let hi = self.una + self.packets_out();
        for seq in self.una..hi {
            let seg = self.segs[(seq - self.una) as usize];
            if seg.flags & SACKED != 0 || (seq != self.una && seg.xmit_ns + rtt > now) {
                continue;
            }
            if seg.flags & LOST != 0 {
                self.mark_retransmission_lost(seq);
            } else {
                self.mark_lost(seq);
            }
        }
        self.retx_hint = self.una;
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
            // Linux `tcp_clean_rtx_queue`: not for a retransmission the ACK shows was spurious
            // (it echoes a timestamp from before the retransmission).
            if self.rack_on && s.flags & SACKED == 0 && !(s.flags & EVER_RETRANS != 0 && self.ack_tsecr_ns > 0 && self.ack_tsecr_ns < s.xmit_ns) {
                self.rack_cum.advance(self.una, s.flags, s.xmit_ns, self.ack_now_ns, self.ack_min_rtt_ns);
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
        self.rack_hint = self.rack_hint.max(self.una);
        out
    }

    /// Mark [start, end) as SACKed (clipped to the window), the ACK's block number `slot`.
    /// Returns the segments newly SACKed. An ACK's blocks are processed as a set: `rate` reset
    /// before the first, [`Self::finish_ack`] after the last.
    pub fn sack(&mut self, start: u32, end: u32, slot: usize) -> u32 {
        let hi = self.una + self.packets_out();
        let (s, e) = (start.max(self.una), end.min(hi));
        let mut newly = 0;
        let (mut lost, mut retrans) = (0, 0);
        // The receiver repeats its blocks on every ACK, mostly grown at the right edge, and two
        // blocks merge when a repair fills the hole between them: walk only the parts of the
        // block that the blocks kept in `last_blocks` do not cover. Everything those cover is
        // SACKed already (a SACKed segment stays SACKed until acknowledged), so the walk would
        // pass over it without a change.
        let mut at = s;
        while at < e {
            if let Some(&(_, pe)) = self.last_blocks.iter().find(|&&(ps, pe)| ps <= at && at < pe) {
                at = pe;
                continue;
            }
            let stop = self.last_blocks.iter().filter(|&&(ps, _)| ps > at && ps < e).map(|&(ps, _)| ps).min().unwrap_or(e);
            let range = (at - self.una) as usize..(stop - self.una) as usize;
            for (i, seg) in self.segs.range_mut(range).enumerate() {
                if seg.flags & SACKED != 0 {
                    continue;
                }
                let seq = at + i as u32;
                lost += (seg.flags & LOST != 0) as u32;
                retrans += (seg.flags & RETRANS != 0) as u32;
                let (flags, ever) = (seg.flags, seg.flags & EVER_RETRANS);
                seg.flags = ever | SACKED | RATE_DONE;
                newly += 1;
                let (xmit_ns, tx) = (seg.xmit_ns, seg.tx);
                self.rate.delivered(seq, xmit_ns, &tx, ever != 0);
                if self.rack_on {
                    self.rack.advance(seq, flags, xmit_ns, self.ack_now_ns, self.ack_min_rtt_ns);
                }
                if ever == 0 {
                    let first = self.rate.first_sackt_ns.get_or_insert(xmit_ns);
                    *first = (*first).min(xmit_ns);
                    let last = self.rate.last_sackt_ns.get_or_insert(xmit_ns);
                    *last = (*last).max(xmit_ns);
                }
            }
            at = stop;
        }
        self.lost_out -= lost;
        self.retrans_out -= retrans;
        self.sacked_out += newly;
        if e > s {
            self.high_sacked = self.high_sacked.max(e);
            if slot < self.last_blocks.len() {
                self.last_blocks[slot] = (s, e);
            }
        }
        newly
    }

    /// Forget the previous ACK's blocks (after an RTO).
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
    /// outstanding, and duplicate ACKs counted without SACK are forgotten (Linux
    /// `tcp_timeout_mark_lost`).
    pub fn mark_all_lost(&mut self) {
        if self.no_sack {
            self.sacked_out = 0;
        }
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

    /// A timeout proved spurious (Linux `tcp_undo_cwnd_reduction`): no segment is lost any
    /// more, except one whose retransmission is still out: the scoreboard keeps a retransmission
    /// only on a lost segment, so it counts once in flight, where Linux counts its original too.
    pub fn undo_lost(&mut self) {
        let mut lost = 0;
        for seg in self.segs.iter_mut() {
            if seg.flags & RETRANS == 0 {
                seg.flags &= !LOST;
            }
            lost += u32::from(seg.flags & LOST != 0);
        }
        self.lost_out = lost;
        self.retx_hint = self.una;
        // Linux sets `rack.advanced`: RACK looks at every segment again.
        self.rack.advanced = true;
        self.rack_hint = self.una;
        self.lost_checked_upto = self.una;
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
                if self.rack_on {
                    self.retx_order.push_back((seq, now_ns));
                }
            }
        }
    }

    /// Send time of the oldest outstanding segment (0 when none).
    pub fn head_xmit_ns(&self) -> Nanos {
        self.segs.front().map_or(0, |s| s.xmit_ns)
    }

    #[inline]
    pub fn is_sacked(&self, seq: u32) -> bool {
        self.flags(seq) & SACKED != 0
    }

    /// A retransmission of `seq` is outstanding.
    #[inline]
    pub fn is_retransmitted(&self, seq: u32) -> bool {
        self.flags(seq) & RETRANS != 0
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
        let sacked = if self.no_sack {
            assert_eq!(s, 0, "a segment SACKed without SACK");
            self.sacked_out
        } else {
            s
        };
        assert_eq!((sacked, l, r), (self.sacked_out, self.lost_out, self.retrans_out));
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

    /// Skipping what earlier blocks covered changes nothing: a board that forgets its blocks
    /// before every one marks the same segments, counts the same and picks the same segment for
    /// the rate sample, over random ACKs whose blocks grow, merge and move on as a receiver's do.
    #[test]
    fn skipping_covered_blocks_changes_no_outcome() {
        let mut rng = crate::rng::Rng::stream(7, crate::rng::Stream::LinkLoss, 0);
        let (mut skipped, mut walked) = (0_u64, 0_u64);
        for _ in 0..300 {
            let (mut fast, mut slow) = (Scoreboard::new(8).with_rack(true), Scoreboard::new(8).with_rack(true));
            let mut next = 0u32;
            // The receiver's blocks: mostly growing at the right edge, now and then a new one.
            let mut blocks: Vec<(u32, u32)> = Vec::new();
            for step in 0..80u64 {
                let now = step * 10;
                for _ in 0..rng.below(4) {
                    fast.push(now, TxRate { delivered: step as u32, ..TxRate::default() });
                    slow.push(now, TxRate { delivered: step as u32, ..TxRate::default() });
                    next += 1;
                }
                let una = fast.una();
                if rng.below(5) == 0 && next > una + 1 {
                    let a = una + 1 + rng.below((next - una) as u64) as u32;
                    assert_eq!(fast.ack(a).not_sacked, slow.ack(a).not_sacked);
                    blocks.retain(|b| b.1 > a);
                }
                for b in blocks.iter_mut() {
                    b.1 = (b.1 + rng.below(3) as u32).min(next);
                }
                if rng.below(3) == 0 && next > fast.una() + 2 {
                    let s = fast.una() + 1 + rng.below((next - fast.una() - 1) as u64) as u32;
                    blocks.insert(0, (s, (s + 1 + rng.below(4) as u32).min(next)));
                }
                // Overlapping blocks merge, as a receiver reports them.
                blocks.sort();
                let mut merged: Vec<(u32, u32)> = Vec::new();
                for &(s, e) in &blocks {
                    match merged.last_mut() {
                        Some(last) if s <= last.1 => last.1 = last.1.max(e),
                        _ => merged.push((s, e)),
                    }
                }
                blocks = merged;
                blocks.truncate(4);
                for sb in [&mut fast, &mut slow] {
                    sb.rate = RateAcc::default();
                    sb.set_ack_context(now, 5, 0);
                }
                for (i, &(s, e)) in blocks.iter().enumerate() {
                    slow.clear_block_cache();
                    let before = fast.last_blocks;
                    let n = fast.sack(s, e, i);
                    assert_eq!(n, slow.sack(s, e, i));
                    let covered: u32 = (s.max(fast.una())..e).filter(|&q| before.iter().any(|&(ps, pe)| ps <= q && q < pe)).count() as u32;
                    skipped += covered as u64;
                    walked += (e.saturating_sub(s.max(fast.una())) - covered) as u64;
                }
                fast.finish_ack();
                slow.finish_ack();
                let (f, w) = (fast.rate, slow.rate);
                assert_eq!((f.valid, f.seq, f.xmit_ns, f.tx, f.first_sackt_ns, f.last_sackt_ns), (w.valid, w.seq, w.xmit_ns, w.tx, w.first_sackt_ns, w.last_sackt_ns));
                assert_eq!((fast.rack.xmit_ns, fast.rack.end_seq, fast.rack.rtt_ns), (slow.rack.xmit_ns, slow.rack.end_seq, slow.rack.rtt_ns));
                assert_eq!((fast.sacked_out, fast.lost_out, fast.retrans_out, fast.high_sacked), (slow.sacked_out, slow.lost_out, slow.retrans_out, slow.high_sacked));
                if rng.below(4) == 0 {
                    fast.mark_lost_by_sack(3);
                    slow.mark_lost_by_sack(3);
                    if let Some(q) = fast.next_retransmit() {
                        assert_eq!(slow.next_retransmit(), Some(q));
                        fast.on_retransmit(q, now, TxRate::default());
                        slow.on_retransmit(q, now, TxRate::default());
                    }
                }
                fast.check();
            }
        }
        // The random ACKs exercise the skip: most block segments are passed over.
        assert!(skipped > walked, "skipped {skipped}, walked {walked}");
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
