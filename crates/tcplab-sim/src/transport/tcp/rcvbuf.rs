//! The receive window as Linux (6.18) opens it: receive-buffer autotuning
//! (`tcp_moderate_rcvbuf`, dynamic right-sizing) and the window advertised from it, in bytes.
//!
//! - The buffer (`sk_rcvbuf`) starts at `tcp_rmem[1]` (128 KB, or `rwnd` when smaller) and grows
//!   up to `tcp_rmem[2]` (the flow's `rwnd`). Once per receiver RTT the reader's progress is
//!   measured (`tcp_rcv_space_adjust`); when it read more than in the previous measurement, the
//!   buffer is sized for twice that plus twice its growth (`tcp_rcvbuf_grow`): a sender in slow
//!   start may double its rate in the next RTT. Out-of-order data adds its span at once.
//! - A window is what a buffer holds less the kernel's per-packet overhead: `scaling_ratio`/256
//!   of it (`tcp_win_from_space`). The testbed's receivers measure 160 (1448 B of payload in
//!   2304 B of `truesize`); the window clamp follows the buffer.
//! - The advertised window is `rcv_ssthresh`, which each arriving segment raises by two MSS up to
//!   the clamp and the free space (`tcp_grow_window`); each raise asks for an immediate ACK
//!   (`icsk_ack.quick |= 1`), so in slow start Linux ACKs nearly every segment. The window is
//!   rounded up to the window scale's unit and never shrinks (`tcp_select_window`).
//! - The connection opens with `rcv_ssthresh` = the SYN's window: 64 KB rounded down to whole MSS
//!   (`tcp_select_initial_window`, the listener's default ratio of 128).
//!
//! The reader (iperf3) takes in-order data as it arrives; only out-of-order data holds buffer
//! memory.

use crate::time::Nanos;

/// Linux `TCP_RMEM_TO_WIN_SCALE`: `scaling_ratio` is in 1/256.
const RMEM_TO_WIN_SCALE: u32 = 8;
/// Linux `TCP_DEFAULT_SCALING_RATIO`: the listener's ratio, which sizes the SYN's window.
const DEFAULT_SCALING_RATIO: u64 = 128;
/// The ratio the testbed's receivers measure on the first full segment (`tcp_measure_rcv_mss`).
pub const SCALING_RATIO: u64 = 160;
/// Memory one full segment holds while queued (its `truesize`) at that ratio.
const SEGMENT_TRUESIZE: u64 = 2304;
/// Linux's default `tcp_rmem[1]`: the buffer a connection starts with.
pub const RMEM_DEFAULT: u64 = 131_072;
/// Linux's default `net.core.rmem_max`; the window scale is chosen for the larger of it and
/// `tcp_rmem[2]`.
const RMEM_MAX: u64 = 212_992;
/// The largest window before scaling (RFC 7323).
const MAX_UNSCALED_WINDOW: u64 = 65_535;
/// Linux `TCP_MAX_WSCALE`.
const MAX_WSCALE: u32 = 14;

/// Linux `tcp_win_from_space`.
fn win_from_space(space: u64, ratio: u64) -> u64 {
    (space * ratio) >> RMEM_TO_WIN_SCALE
}

/// Linux `tcp_space_from_win`.
fn space_from_win(win: u64, ratio: u64) -> u64 {
    (win << RMEM_TO_WIN_SCALE) / ratio
}

/// The window the SYN offers, what the sender may send before the first ACK
/// (`tcp_select_initial_window`): the starting buffer at the listener's ratio, in whole MSS, at
/// most 64 KB unscaled.
pub fn syn_window_bytes(mss_bytes: u32, rwnd_bytes: u64) -> u64 {
    let mss = mss_bytes as u64;
    let space = win_from_space(RMEM_DEFAULT.min(rwnd_bytes), DEFAULT_SCALING_RATIO);
    let space = if space > mss { space - space % mss } else { space };
    space.min(MAX_UNSCALED_WINDOW)
}

#[derive(Clone, Debug)]
pub struct RcvBuf {
    mss: u64,
    /// `tcp_rmem[2]`: the flow's `rwnd`.
    rmem_max: u64,
    /// `sk_rcvbuf`.
    pub rcvbuf: u64,
    pub window_clamp: u64,
    pub rcv_ssthresh: u64,
    /// The window last advertised (`rcv_wnd`), bytes from `rcv_wup`.
    pub rcv_wnd: u64,
    /// rcv_nxt when that window was advertised (segments).
    rcv_wup: u32,
    wscale: u32,
    /// `rcvq_space`: bytes read in the last measurement, where and when the current one began.
    pub space: u64,
    space_seq: u32,
    space_time_ns: Option<Nanos>,
}

impl RcvBuf {
    /// A connection whose `tcp_rmem` is (4096, min(128 KB, rwnd), rwnd).
    pub fn new(mss_bytes: u32, rwnd_bytes: u64) -> Self {
        let mss = mss_bytes as u64;
        let rcvbuf = RMEM_DEFAULT.min(rwnd_bytes);
        let rcv_wnd = syn_window_bytes(mss_bytes, rwnd_bytes);
        let largest = rcv_wnd.max(rwnd_bytes).max(RMEM_MAX);
        let wscale = (largest.ilog2().saturating_sub(15)).min(MAX_WSCALE);
        RcvBuf {
            mss,
            rmem_max: rwnd_bytes,
            rcvbuf,
            // The clamp follows the buffer at the first full segment's ratio.
            window_clamp: win_from_space(rcvbuf, SCALING_RATIO),
            rcv_ssthresh: rcv_wnd,
            rcv_wnd,
            rcv_wup: 0,
            wscale,
            // `tcp_init_buffer_space`: min(rcv_ssthresh, rcv_wnd, 10 segments).
            space: rcv_wnd.min(10 * mss),
            space_seq: 0,
            space_time_ns: None,
        }
    }

    /// Free space in window units with `ooo_segs` out-of-order segments held (`tcp_space`).
    fn free_space(&self, ooo_segs: u32) -> u64 {
        win_from_space(self.rcvbuf.saturating_sub(ooo_segs as u64 * SEGMENT_TRUESIZE), SCALING_RATIO)
    }

    /// A data segment arrived (`tcp_grow_window`); whether the window grew, which asks for an
    /// immediate ACK.
    pub fn grow_window(&mut self, ooo_segs: u32) -> bool {
        let limit = self.window_clamp.min(self.free_space(ooo_segs));
        if limit <= self.rcv_ssthresh {
            return false;
        }
        self.rcv_ssthresh += (limit - self.rcv_ssthresh).min(2 * self.mss);
        true
    }

    /// The first data segment arrived: the first measurement starts (`tcp_init_buffer_space`,
    /// at the end of the handshake, which the data follows).
    pub fn start(&mut self, now: Nanos) {
        self.space_time_ns.get_or_insert(now);
    }

    /// The reader has taken everything up to `rcv_nxt` (segments); `rtt_ns` is the receiver's RTT
    /// estimate (`tcp_rcv_space_adjust`).
    pub fn reader_progress(&mut self, rcv_nxt: u32, rtt_ns: Nanos, now: Nanos) {
        let Some(t) = self.space_time_ns else { return };
        if rtt_ns == 0 || now - t < rtt_ns {
            return;
        }
        let copied = (rcv_nxt - self.space_seq) as u64 * self.mss;
        if copied > self.space {
            self.grow_buffer(copied, 0);
        }
        self.space_seq = rcv_nxt;
        self.space_time_ns = Some(now);
    }

    /// Out-of-order data spans `ooo_span` bytes past rcv_nxt (`tcp_data_queue_ofo`).
    pub fn ooo_queued(&mut self, ooo_span: u64) {
        self.grow_buffer(self.space, ooo_span);
    }

    /// Linux `tcp_rcvbuf_grow`.
    fn grow_buffer(&mut self, copied: u64, ooo_span: u64) {
        let old = self.space;
        self.space = copied;
        let mut rcvwin = copied << 1;
        // Slow start: allow the sender to double its rate.
        rcvwin += ((rcvwin * (copied - old)) / old) << 1;
        rcvwin += ooo_span;
        let rcvbuf = space_from_win(rcvwin, SCALING_RATIO).min(self.rmem_max);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.window_clamp = win_from_space(rcvbuf, SCALING_RATIO);
        }
    }

    /// The window an ACK sent now advertises, bytes from `rcv_nxt` (`tcp_select_window`).
    pub fn select_window(&mut self, rcv_nxt: u32, ooo_segs: u32) -> u64 {
        let unit = 1u64 << self.wscale;
        let cur = (self.rcv_wup as u64 * self.mss + self.rcv_wnd).saturating_sub(rcv_nxt as u64 * self.mss);
        // `__tcp_select_window`.
        let allowed = win_from_space(self.rcvbuf, SCALING_RATIO);
        let full = self.window_clamp.min(allowed);
        let mut free = self.free_space(ooo_segs);
        let mut new = 0;
        if free < full / 2 {
            // Memory is short: offer what is free in whole units, nothing when that is little.
            free -= free % unit;
            if free < allowed / 16 || free < self.mss {
                free = 0;
            }
        }
        if free > 0 {
            new = free.min(self.rcv_ssthresh).div_ceil(unit) * unit;
        }
        // Never shrink the offered window.
        if new < cur {
            new = cur.div_ceil(unit) * unit;
        }
        self.rcv_wnd = new;
        self.rcv_wup = rcv_nxt;
        new.min(MAX_UNSCALED_WINDOW << self.wscale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    /// Figures from the kernel's `tcp_rcvbuf_grow` tracepoint on the testbed (Linux 6.18, one
    /// flow at 200 ms, `tcp_rmem` 4096 131072 67108864).
    #[test]
    fn the_buffer_grows_as_the_kernel_grew_it() {
        let mut b = RcvBuf::new(MSS, 64 << 20);
        assert_eq!((b.rcvbuf, b.window_clamp, b.rcv_wnd, b.space), (131_072, 81_920, 65_160, 14_480));
        // The reader took 27512 B in the first RTT (28960 copied less 1448 still queued).
        b.grow_buffer(27_512, 0);
        assert_eq!((b.rcvbuf, b.window_clamp), (246_505, 154_065));
        b.grow_buffer(56_472, 0);
        assert_eq!((b.rcvbuf, b.window_clamp), (561_152, 350_720));
        // A measurement no larger than the last one (39 segments: 56472 B) changes nothing.
        b.start(0);
        b.reader_progress(39, 1, 10);
        assert_eq!((b.rcvbuf, b.space), (561_152, 56_472));
    }

    #[test]
    fn the_window_opens_two_segments_per_segment_up_to_the_clamp() {
        let mut b = RcvBuf::new(MSS, 64 << 20);
        let mut grown = 0;
        while b.grow_window(0) {
            grown += 1;
        }
        // 65160 → 81920 by 2896 B a segment: 6 segments, the last one short.
        assert_eq!((grown, b.rcv_ssthresh), (6, 81_920));
        // Window scale 11 for 64 MB (2^26): windows in units of 2048 B.
        assert_eq!(b.select_window(10, 0), 81_920);
    }

    #[test]
    fn the_offered_window_never_shrinks() {
        let mut b = RcvBuf::new(MSS, 64 << 20);
        while b.grow_window(0) {}
        assert_eq!(b.select_window(0, 0), 81_920);
        // Out-of-order data takes buffer memory, so the free space falls below rcv_ssthresh; the
        // right edge stays where it was (81920 B from 0 is 80736 B from segment 1, rounded up).
        assert_eq!(b.select_window(1, 20), 81_920);
    }

    #[test]
    fn a_measurement_waits_one_receiver_rtt() {
        let mut b = RcvBuf::new(MSS, 64 << 20);
        b.start(0);
        b.reader_progress(30, 50_000_000, 49_999_999);
        assert_eq!(b.rcvbuf, 131_072);
        b.reader_progress(30, 50_000_000, 50_000_000);
        // copied 30·1448 = 43440 > 14480: rcvwin = 86880 + 2·(86880·2) = 434400.
        assert_eq!(b.space, 43_440);
        assert_eq!(b.rcvbuf, 434_400 * 256 / 160);
    }

    #[test]
    fn a_small_rwnd_caps_the_buffer() {
        let mut b = RcvBuf::new(MSS, 100_000);
        assert_eq!(b.rcvbuf, 100_000);
        b.grow_buffer(1_000_000, 0);
        assert_eq!((b.rcvbuf, b.window_clamp), (100_000, 62_500));
    }
}
