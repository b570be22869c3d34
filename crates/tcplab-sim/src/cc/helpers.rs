//! The shared AIMD toolkit every classic algorithm uses, as in `net/ipv4/tcp_cong.c`.

use super::TcpCcView;
use crate::time::Nanos;

/// The kernel tick rate the Linux-mirrored algorithms and TCP's timers count time in (`HZ`,
/// ticks per second). tcplab uses 250 (a 4 ms jiffy): Debian's and Ubuntu's kernels
/// (`CONFIG_HZ_250`), and the testbed's.
pub const HZ: u32 = 250;

/// Nanoseconds per jiffy.
pub const JIFFY_NS: Nanos = 1_000_000_000 / HZ as Nanos;

/// A timeout of `ns` as a jiffies timer fires: rounded up to whole jiffies
/// (`usecs_to_jiffies`).
#[inline]
pub fn jiffies_ceil_ns(ns: Nanos) -> Nanos {
    ns.div_ceil(JIFFY_NS) * JIFFY_NS
}

/// Linux `tcp_jiffies32`: simulated time in ticks of 1/`HZ` s, wrapping like a `u32`.
#[inline]
pub fn jiffies(now_ns: Nanos) -> u32 {
    (now_ns / (1_000_000_000 / HZ as u64)) as u32
}

/// Linux `tcp_mstamp` truncated to 32 bits: simulated time in µs.
#[inline]
pub fn clock_us(now_ns: Nanos) -> u32 {
    (now_ns / 1_000) as u32
}

/// Linux `msecs_to_jiffies`: ms to ticks, rounded up (10 ms is 3 jiffies at HZ = 250).
#[inline]
pub const fn msecs_to_jiffies(ms: u32) -> u32 {
    let per = 1_000 / HZ;
    ms.div_ceil(per)
}

/// Linux `usecs_to_jiffies`: µs to ticks, rounded up.
#[inline]
pub fn usecs_to_jiffies(us: u32) -> u32 {
    let per = 1_000_000 / HZ;
    us.div_ceil(per)
}

/// Linux `tcp_slow_start`: grow cwnd by the segments acknowledged, but not past ssthresh.
/// Returns the acknowledged segments left over for congestion avoidance.
pub fn slow_start(tp: &mut TcpCcView, acked: u32) -> u32 {
    let cwnd = (tp.snd_cwnd + acked).min(tp.snd_ssthresh);
    let used = cwnd - tp.snd_cwnd;
    tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
    acked - used
}

/// The start of every classic `cong_avoid` (Linux `tcp_reno_cong_avoid`, `bictcp_cong_avoid`,
/// …): nothing unless the sender is cwnd-limited, then slow start up to ssthresh. Returns the
/// acknowledged segments left for congestion avoidance, or `None` when none are.
pub fn slow_start_leftover(tp: &mut TcpCcView, acked: u32) -> Option<u32> {
    if !tp.is_cwnd_limited {
        return None;
    }
    let left = if tp.in_slow_start() { slow_start(tp, acked) } else { acked };
    (left > 0).then_some(left)
}

/// Linux `tcp_cong_avoid_ai`: in congestion avoidance, grow cwnd by one segment for every `w`
/// segments acknowledged (w = cwnd gives one segment per RTT).
pub fn cong_avoid_ai(tp: &mut TcpCcView, w: u32, acked: u32) {
    let w = w.max(1);
    // If credits accumulated at a higher w, apply them gently now.
    if tp.snd_cwnd_cnt >= w {
        tp.snd_cwnd_cnt = 0;
        tp.snd_cwnd += 1;
    }
    tp.snd_cwnd_cnt += acked;
    if tp.snd_cwnd_cnt >= w {
        let delta = tp.snd_cwnd_cnt / w;
        tp.snd_cwnd_cnt -= delta * w;
        tp.snd_cwnd += delta;
    }
    tp.snd_cwnd = tp.snd_cwnd.min(tp.snd_cwnd_clamp);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_the_rest() {
        let mut tp = TcpCcView::new(10, 1448);
        tp.snd_ssthresh = 14;
        assert_eq!(slow_start(&mut tp, 3), 0);
        assert_eq!(tp.snd_cwnd, 13);
        assert_eq!(slow_start(&mut tp, 3), 2);
        assert_eq!(tp.snd_cwnd, 14);
    }

    #[test]
    fn leftover_after_slow_start_and_nothing_when_not_cwnd_limited() {
        let mut tp = TcpCcView::new(10, 1448);
        tp.snd_ssthresh = 12;
        assert_eq!(slow_start_leftover(&mut tp, 5), None, "not cwnd-limited: no growth");
        assert_eq!(tp.snd_cwnd, 10);
        tp.is_cwnd_limited = true;
        assert_eq!(slow_start_leftover(&mut tp, 1), None, "all used by slow start");
        assert_eq!(slow_start_leftover(&mut tp, 4), Some(3), "11 -> 12, 3 left over");
        assert_eq!(tp.snd_cwnd, 12);
        assert_eq!(slow_start_leftover(&mut tp, 2), Some(2), "congestion avoidance gets all");
    }

    #[test]
    fn additive_increase_is_one_segment_per_window() {
        let mut tp = TcpCcView::new(20, 1448);
        tp.snd_ssthresh = 20;
        for _ in 0..19 {
            cong_avoid_ai(&mut tp, 20, 1);
        }
        assert_eq!(tp.snd_cwnd, 20);
        cong_avoid_ai(&mut tp, 20, 1);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (21, 0));
        // A stretch ACK for 2 segments counts twice.
        cong_avoid_ai(&mut tp, 21, 2);
        assert_eq!(tp.snd_cwnd_cnt, 2);
    }
}
