//! The send buffer as Linux (6.18) sizes it and a bulk writer (iperf3) fills it, in bytes of
//! memory (`sndbuf_autotuning`).
//!
//! - The buffer (`sk_sndbuf`) is sized when the connection is established and again on an ACK
//!   that frees memory while the writer waits, unless the flow has filled its congestion window
//!   (`tcp_sndbuf_expand`, `tcp_should_expand_sndbuf`): 2 · max(10, cwnd, reordering + 1) ·
//!   2304 bytes, at most `tcp_wmem[2]` (the flow's `sndbuf`); it never shrinks. The testbed's
//!   kernel reports 46,080 bytes at the start (cwnd 10) and 649,728 at cwnd 141 (`ss -tmi`).
//! - Queued data costs its payload plus each skb's own memory: the writer's data waits in skbs of
//!   the size goal (45 segments), and each burst the sender sends leaves as an skb of its own
//!   (`tso_fragment`), which holds its memory until its last byte is acknowledged; an ACK frees
//!   the payload it covers at once (`tcp_trim_head`).
//! - The writer blocks once the queue holds the buffer's worth (each skb it starts may take the
//!   queue past it) and is woken when a third of the buffer is free again
//!   (`sk_stream_write_space`: free ≥ queued / 2); then it fills the buffer again.
//!
//! A recovery without SACK keeps every segment above its holes queued for round trips: the
//! buffer fills and the sender runs out of data to send (docs/tcp.md).

use std::collections::VecDeque;

/// Memory per segment in `tcp_sndbuf_expand`'s size, bytes (the testbed's 6.18 kernel).
const EXPAND_PER_SEGMENT: u64 = 2304;
/// Linux `TCP_INIT_CWND`: the least the buffer is sized for, segments.
const INIT_CWND: u64 = 10;
/// Memory an skb holds beyond its payload, bytes: measured on the testbed as the queue's memory
/// per segment sent one at a time (739 KB for 342 segments, less their 1448-byte payloads).
const SKB_OVERHEAD: u64 = 713;
/// Linux's default `tcp_wmem[1]`: the buffer before the connection is established.
const WMEM_DEFAULT: u64 = 16_384;

/// The sender's queue in memory terms: the buffer, what its segments hold, and the writer.
#[derive(Clone, Debug)]
pub struct SndBuf {
    mss: u64,
    /// `tcp_wmem[2]`.
    max_bytes: u64,
    /// `sk_sndbuf`.
    pub limit_bytes: u64,
    /// Segments written and not yet sent, in skbs of `goal` segments (the head one partly sent).
    pub unsent_segs: u32,
    goal: u32,
    /// Bursts sent and not wholly acknowledged: (first unacknowledged segment, one past the last).
    sent: VecDeque<(u32, u32)>,
    sent_segs: u64,
}

impl SndBuf {
    pub fn new(mss_bytes: u32, max_bytes: u64) -> Self {
        SndBuf {
            mss: mss_bytes as u64,
            max_bytes,
            limit_bytes: WMEM_DEFAULT.min(max_bytes),
            unsent_segs: 0,
            goal: 1,
            sent: VecDeque::new(),
            sent_segs: 0,
        }
    }

    /// `sk_wmem_queued`: the payload queued plus each skb's own memory.
    pub fn queued_bytes(&self) -> u64 {
        let skbs = self.sent.len() as u64 + (self.unsent_segs as u64).div_ceil(self.goal as u64);
        (self.sent_segs + self.unsent_segs as u64) * self.mss + skbs * SKB_OVERHEAD
    }

    /// `tcp_sndbuf_expand`: the buffer for `segs` segments of window, never smaller than it was.
    fn expand(&mut self, segs: u32) {
        let want = 2 * (segs as u64).max(INIT_CWND) * EXPAND_PER_SEGMENT;
        self.limit_bytes = self.limit_bytes.max(want.min(self.max_bytes));
    }

    /// The connection is established (`tcp_init_buffer_space`): the buffer is sized for the
    /// initial window and the writer fills it with skbs of `goal` segments.
    pub fn start(&mut self, cwnd: u32, goal: u32) {
        self.expand(cwnd);
        self.write(goal);
    }

    /// The writer writes skbs of `goal` segments while the buffer has room, then blocks (it
    /// always has more to write).
    fn write(&mut self, goal: u32) {
        self.goal = goal.max(1);
        while self.queued_bytes() < self.limit_bytes {
            self.unsent_segs += self.goal;
        }
    }

    /// A burst of `segs` new segments from `first` left: it is an skb of its own
    /// (`tso_fragment` splits it off the queue's head skb).
    pub fn on_sent(&mut self, first: u32, segs: u32) {
        debug_assert!(segs <= self.unsent_segs);
        self.unsent_segs -= segs;
        self.sent_segs += segs as u64;
        self.sent.push_back((first, first + segs));
    }

    /// Everything below `una` is acknowledged: its payload is freed, and each burst wholly
    /// acknowledged frees its skb.
    pub fn on_acked(&mut self, una: u32) {
        while let Some((start, end)) = self.sent.front_mut() {
            if *start >= una {
                break;
            }
            let upto = (*end).min(una);
            self.sent_segs -= (upto - *start) as u64;
            *start = upto;
            if upto < *end {
                break;
            }
            self.sent.pop_front();
        }
    }

    /// After an ACK that freed memory (`tcp_check_space`, `tcp_new_space`): the buffer grows for
    /// the current window unless the window is full, and the blocked writer is woken, and fills
    /// the buffer, once a third of it is free.
    pub fn after_ack(&mut self, cwnd: u32, in_flight: u32, reordering: u32, goal: u32) {
        if in_flight < cwnd {
            self.expand(cwnd.max(reordering + 1));
        }
        let queued = self.queued_bytes();
        if self.limit_bytes.saturating_sub(queued) >= queued / 2 {
            self.write(goal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_is_sized_as_the_kernel_sized_it() {
        // The testbed's kernel: 46,080 bytes at the start, 649,728 at cwnd 141.
        let mut b = SndBuf::new(1448, 4 << 20);
        assert_eq!(b.limit_bytes, 16_384);
        b.start(10, 45);
        assert_eq!(b.limit_bytes, 46_080);
        b.expand(141);
        assert_eq!(b.limit_bytes, 649_728);
        b.expand(20);
        assert_eq!(b.limit_bytes, 649_728, "never shrinks");
        b.expand(10_000);
        assert_eq!(b.limit_bytes, 4 << 20, "at most tcp_wmem[2]");
    }

    #[test]
    fn the_writer_fills_the_buffer_and_waits_for_a_third_of_it() {
        let mut b = SndBuf::new(1448, 4 << 20);
        b.start(10, 45);
        // One skb of 45 segments: the writer started it below 46,080 bytes and filled it.
        assert_eq!((b.unsent_segs, b.queued_bytes()), (45, 45 * 1448 + SKB_OVERHEAD));
        // Ten segments leave one at a time: ten skbs of their own besides the writer's.
        for s in 0..10 {
            b.on_sent(s, 1);
        }
        assert_eq!(b.unsent_segs, 35);
        assert_eq!(b.queued_bytes(), 45 * 1448 + 11 * SKB_OVERHEAD);
        // Five acknowledged: their payload and skbs are freed; the blocked writer sleeps on.
        b.on_acked(5);
        assert_eq!(b.queued_bytes(), 40 * 1448 + 6 * SKB_OVERHEAD);
        b.after_ack(10, 10, 3, 45);
        assert_eq!(b.unsent_segs, 35);
        // All ten: 35 segments in one skb, 51,393 bytes, still above the 46,080-byte buffer.
        b.on_acked(10);
        assert_eq!(b.queued_bytes(), 35 * 1448 + SKB_OVERHEAD);
        b.after_ack(10, 0, 3, 45);
        assert_eq!(b.unsent_segs, 35);
        // The window has grown to 30 (138,240 bytes): a third is free, the writer fills it.
        b.after_ack(30, 0, 3, 45);
        assert_eq!(b.limit_bytes, 138_240);
        assert_eq!(b.unsent_segs, 35 + 2 * 45);
        assert!(b.queued_bytes() >= b.limit_bytes);
        // A full window does not grow the buffer.
        b.after_ack(60, 60, 3, 45);
        assert_eq!(b.limit_bytes, 138_240);
    }

    #[test]
    fn a_burst_keeps_its_skb_until_its_last_segment_is_acknowledged() {
        let mut b = SndBuf::new(1448, 4 << 20);
        b.start(10, 45);
        b.on_sent(0, 10);
        let queued = b.queued_bytes();
        b.on_acked(4);
        assert_eq!(b.queued_bytes(), queued - 4 * 1448);
        b.on_acked(10);
        assert_eq!(b.queued_bytes(), queued - 10 * 1448 - SKB_OVERHEAD);
    }
}
