//! YeAH-TCP: A. Baiocchi, A. P. Castellani, F. Vacirca, "YeAH-TCP: Yet Another Highspeed TCP",
//! PFLDnet 2007. Mirrors Linux `net/ipv4/tcp_yeah.c` (which reuses `tcp_vegas.c`'s RTT sampling).
//!
//! Two modes, switched once per RTT on the queue the flow keeps at the bottleneck:
//!
//! ```text
//!   Q = cwnd · (rtt − baseRTT) / rtt        (segments; rtt = min RTT of the round)
//!
//!   Q ≤ alpha (80) and rtt − baseRTT ≤ baseRTT/phy (1/8) ──► Fast: Scalable-TCP growth
//!        (cwnd += 1 per min(cwnd, 100) acknowledged segments)
//!   otherwise ──────────────────────────────────────────────► Slow: Reno growth, and if
//!        Q > alpha "precautionary decongestion": cwnd −= min(Q/gamma, cwnd/2^epsilon),
//!        not below reno_count; ssthresh = cwnd
//!
//!   on loss: after fewer than rho (16) Slow RTTs in a row, cwnd − max(min(Q, cwnd/2), cwnd/8);
//!            otherwise halve
//! ```
//!
//! `reno_count` estimates the window a competing Reno flow would have; 50 Fast RTTs (zeta) in
//! a row reset it.
//!
//! Deviations: none in the computation. Linux's constants (alpha 80, gamma 1, delta 3,
//! epsilon 1, phy 8, rho 16, zeta 50) are compile-time there and are not parameters here either.

use super::helpers::{cong_avoid_ai, slow_start};
use super::params::{Param, ParamValues};
use super::vegas::{after, Vegas, RTT_NONE_US};
use super::{AckSample, CaEvent, CaState, CongestionOps, TcpCcView};

pub const PARAMS: &[Param] = &[];

/// Packets queued at the bottleneck above which YeAH decongests.
const TCP_YEAH_ALPHA: u32 = 80;
/// Fraction of the queue removed per RTT (1/gamma).
const TCP_YEAH_GAMMA: u32 = 1;
/// log2 of the minimum fraction of cwnd removed on loss.
const TCP_YEAH_DELTA: u32 = 3;
/// log2 of the maximum fraction removed on early decongestion.
const TCP_YEAH_EPSILON: u32 = 1;
/// Maximum queueing delay as a fraction (1/phy) of base RTT.
const TCP_YEAH_PHY: u32 = 8;
/// Minimum consecutive Slow RTTs to treat a loss as competition with Reno.
const TCP_YEAH_RHO: u32 = 16;
/// Minimum Fast RTTs in a row to reset reno_count.
const TCP_YEAH_ZETA: u32 = 50;
/// Scalable TCP's increase: one segment per 100 acknowledged.
const TCP_SCALABLE_AI_CNT: u32 = 100;

#[derive(Clone, Debug)]
pub struct Yeah {
    vegas: Vegas,
    /// Queue estimate of the last round, segments.
    last_q: u32,
    /// Consecutive Slow (Reno) rounds; 0 = Fast mode.
    doing_reno_now: u32,
    /// Estimated window of a competing Reno flow, segments.
    reno_count: u32,
    /// Consecutive Fast rounds.
    fast_count: u32,
}

impl Yeah {
    pub fn new(_v: &ParamValues) -> Self {
        Yeah { vegas: Vegas::default(), last_q: 0, doing_reno_now: 0, reno_count: 2, fast_count: 0 }
    }
}

impl CongestionOps for Yeah {
    fn init(&mut self, tp: &mut TcpCcView) {
        self.vegas.reset(tp);
        self.doing_reno_now = 0;
        self.last_q = 0;
        self.reno_count = 2;
        // Keep the decrease arithmetic in range.
        tp.snd_cwnd_clamp = tp.snd_cwnd_clamp.min(0xffff_ffff / 128);
    }

    fn ssthresh(&mut self, tp: &TcpCcView) -> u32 {
        let cwnd = tp.snd_cwnd;
        let reduction = if self.doing_reno_now < TCP_YEAH_RHO {
            self.last_q.min((cwnd >> 1).max(2)).max(cwnd >> TCP_YEAH_DELTA)
        } else {
            (cwnd >> 1).max(2)
        };
        self.fast_count = 0;
        self.reno_count = (self.reno_count >> 1).max(2);
        (cwnd as i64 - reduction as i64).max(2) as u32
    }

    fn pkts_acked(&mut self, tp: &mut TcpCcView, sample: &AckSample) {
        self.vegas.pkts_acked(tp, sample);
    }

    fn set_state(&mut self, tp: &mut TcpCcView, new_state: CaState) {
        self.vegas.set_state(tp, new_state);
    }

    fn cwnd_event(&mut self, tp: &mut TcpCcView, ev: CaEvent) {
        self.vegas.cwnd_event(tp, ev);
    }

    fn cong_avoid(&mut self, tp: &mut TcpCcView, ack: u32, mut acked: u32) {
        if !tp.is_cwnd_limited {
            return;
        }
        let mut grow = true;
        if tp.in_slow_start() {
            acked = slow_start(tp, acked);
            grow = acked > 0;
        }
        if grow {
            if self.doing_reno_now == 0 {
                // Fast mode: Scalable TCP.
                cong_avoid_ai(tp, tp.snd_cwnd.min(TCP_SCALABLE_AI_CNT), acked);
            } else {
                // Slow mode: Reno.
                cong_avoid_ai(tp, tp.snd_cwnd, acked);
            }
        }

        // Once per RTT, from the Vegas samples of the round.
        let v = &mut self.vegas;
        if after(ack, v.beg_snd_nxt) {
            // Three samples or more: at least one was not from a delayed ACK.
            if v.cnt_rtt > 2 {
                let rtt = v.min_rtt;
                let base = v.base_rtt;
                // Segments above what the bandwidth needs: the flow's queue.
                let queue = (tp.snd_cwnd as u64 * (rtt - base) as u64 / rtt as u64) as u32;
                if queue > TCP_YEAH_ALPHA || rtt - base > base / TCP_YEAH_PHY {
                    if queue > TCP_YEAH_ALPHA && tp.snd_cwnd > self.reno_count {
                        // Precautionary decongestion.
                        let reduction = (queue / TCP_YEAH_GAMMA).min(tp.snd_cwnd >> TCP_YEAH_EPSILON);
                        tp.snd_cwnd = (tp.snd_cwnd - reduction).max(self.reno_count);
                        tp.snd_ssthresh = tp.snd_cwnd;
                    }
                    if self.reno_count <= 2 {
                        self.reno_count = (tp.snd_cwnd >> 1).max(2);
                    } else {
                        self.reno_count += 1;
                    }
                    self.doing_reno_now = (self.doing_reno_now + 1).min(0xff_ffff);
                } else {
                    self.fast_count += 1;
                    if self.fast_count > TCP_YEAH_ZETA {
                        self.reno_count = 2;
                        self.fast_count = 0;
                    }
                    self.doing_reno_now = 0;
                }
                self.last_q = queue;
            }
            // The round that starts now ends at the current snd_nxt.
            v.beg_snd_nxt = tp.snd_nxt;
            // Wipe the slate clean for the next RTT.
            v.cnt_rtt = 0;
            v.min_rtt = RTT_NONE_US;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// YeAH at `cwnd` (avoidance), base RTT 100 ms (+1 µs), one round with minimum `rtt_ms`.
    fn round(y: &mut Yeah, tp: &mut TcpCcView, rtt_ms: u64) {
        let s = |ms: u64| AckSample { pkts_acked: 1, rtt_ns: Some(ms * MS), in_flight: 0 };
        y.pkts_acked(tp, &s(100));
        y.vegas.min_rtt = RTT_NONE_US; // the base sample belonged to an earlier round
        for _ in 0..3 {
            y.pkts_acked(tp, &s(rtt_ms));
        }
        let end = y.vegas.beg_snd_nxt;
        tp.snd_nxt = end + tp.snd_cwnd;
        y.cong_avoid(tp, end + 1, 1);
    }

    fn yeah(cwnd: u32) -> (Yeah, TcpCcView) {
        let mut tp = TcpCcView::new(cwnd, 1448);
        tp.snd_ssthresh = 2;
        tp.is_cwnd_limited = true;
        let mut y = Yeah::new(&ParamValues::default());
        y.init(&mut tp);
        (y, tp)
    }

    #[test]
    fn fast_mode_grows_like_scalable_tcp() {
        // Q = 1000·(101 001 − 100 001)/101 001 = 9 ≤ 80 and 1 ms ≤ 100 ms/8: Fast.
        // Scalable: +1 per min(cwnd, 100) = 100 segments; the round's ACK counted one already.
        let (mut y, mut tp) = yeah(1000);
        round(&mut y, &mut tp, 101);
        assert_eq!((y.doing_reno_now, y.last_q, y.fast_count), (0, 9, 1));
        for _ in 0..99 {
            y.cong_avoid(&mut tp, 1, 1);
        }
        assert_eq!(tp.snd_cwnd, 1001);
    }

    #[test]
    fn a_queue_above_alpha_is_drained_precautionarily() {
        // cwnd 1000, rtt 120 ms: Q = 1000·20 000/120 001 = 166 > 80 → Slow mode;
        // cwnd > reno_count (2): reduction = min(166/1, 1000/2) = 166 → cwnd = 834 (the round's
        // ACK first added nothing: Scalable count 1 of 100), ssthresh = 834; reno_count was 2 →
        // 834/2 = 417.
        let (mut y, mut tp) = yeah(1000);
        round(&mut y, &mut tp, 120);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (834, 834));
        assert_eq!((y.last_q, y.reno_count, y.doing_reno_now), (166, 417, 1));
    }

    #[test]
    fn loss_takes_off_the_queue_unless_competing_with_reno() {
        // After a Fast round with Q = 9 at cwnd 1000: reduction = max(min(9, 500), 1000/8 = 125)
        // = 125 → ssthresh 875.
        let (mut y, mut tp) = yeah(1000);
        round(&mut y, &mut tp, 101);
        assert_eq!(y.ssthresh(&tp), 875);
        // Queue 300: min(300, 500) = 300 → 700.
        y.last_q = 300;
        assert_eq!(y.ssthresh(&tp), 700);
        // Sixteen Slow rounds in a row: a Reno flow shares the path, halve.
        y.doing_reno_now = 16;
        assert_eq!(y.ssthresh(&tp), 500);
        assert_eq!(y.reno_count, 2);
    }

    #[test]
    fn queueing_delay_above_an_eighth_of_base_rtt_is_slow_mode_without_decongestion() {
        // cwnd 50, rtt 115 ms: Q = 50·15 000/115 001 = 6 ≤ 80 but 15 000 > 100 001/8 = 12 500:
        // Slow (Reno growth), no cwnd reduction.
        let (mut y, mut tp) = yeah(50);
        round(&mut y, &mut tp, 115);
        assert_eq!((tp.snd_cwnd, y.doing_reno_now, y.reno_count), (50, 1, 25));
    }
}
