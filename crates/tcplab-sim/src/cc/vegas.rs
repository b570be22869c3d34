//! TCP Vegas: L. S. Brakmo, L. L. Peterson, "TCP Vegas: End to End Congestion Avoidance on a
//! Global Internet", IEEE JSAC 13(8), 1995. Mirrors Linux `net/ipv4/tcp_vegas.c`.
//!
//! Once per RTT (when the ACK passes `beg_snd_nxt`, the snd_nxt of one round ago) Vegas compares
//! the window with what the path would carry at the propagation delay:
//!
//! ```text
//!   baseRTT = min of every RTT sample (µs, +1)       rtt = min RTT sample of the last round
//!   diff    = cwnd · (rtt − baseRTT) / baseRTT       (segments; Linux's form, see below)
//!
//!   slow start:  diff > gamma → cwnd = min(cwnd, cwnd·baseRTT/rtt + 1), leave slow start
//!                otherwise    → tcp_slow_start
//!   avoidance:   diff > beta  → cwnd − 1        diff < alpha → cwnd + 1        else hold
//! ```
//!
//! ```text
//!   set_state(Open) ──► doing_vegas_now (wait one full round of samples, then decide per RTT)
//!   any other state ──► not doing Vegas: Reno's growth until Open again
//! ```
//!
//! Fewer than 3 RTT samples in a round (only delayed ACKs seen) falls back to Reno for that round.
//! Losses are Reno's: ssthresh = cwnd/2 (`tcp_reno_ssthresh`).
//!
//! Deviations:
//! - The paper's Diff is (Expected − Actual)·baseRTT = cwnd·(rtt − baseRTT)/rtt; Linux divides by
//!   baseRTT, as here, so diff is the queued segments scaled by rtt/baseRTT.
//! - `diff` is computed in 64 bits (Linux: 32-bit `u32` product, which could wrap only for a
//!   window × queueing delay above 4·10⁹ segment·µs).
//! - No `CA_EVENT_CWND_RESTART`: tcplab's bulk senders never go idle.

use super::helpers::slow_start;
use super::params::{Param, ParamValues};
use super::reno::Reno;
use super::{AckSample, CaEvent, CaState, CongestionOps, TcpCcView};
use crate::time::Nanos;

/// Linux module parameters (`alpha`, `beta`, `gamma`; integers, segments).
pub const PARAMS: &[Param] = &[
    Param { name: "alpha", default: 2.0, min: 0.0, max: 1000.0, help: "lower bound of packets in network (segments, whole number)" },
    Param { name: "beta", default: 4.0, min: 0.0, max: 1000.0, help: "upper bound of packets in network (segments, whole number)" },
    Param { name: "gamma", default: 1.0, min: 0.0, max: 1000.0, help: "limit on increase: leave slow start above this many queued (segments, whole number)" },
];

/// Linux's "no sample yet" value for minRTT and baseRTT (µs).
pub(crate) const RTT_NONE_US: u32 = 0x7fff_ffff;

/// Linux `after(seq1, seq2)`: seq1 is later than seq2 in sequence space.
#[inline]
pub(crate) fn after(seq1: u32, seq2: u32) -> bool {
    (seq1.wrapping_sub(seq2) as i32) > 0
}

/// An RTT sample in µs, as Linux's `ack_sample.rtt_us`.
#[inline]
pub(crate) fn rtt_us(rtt_ns: Nanos) -> u32 {
    (rtt_ns / 1000).min(i32::MAX as u64) as u32
}

/// Linux `tcp_current_ssthresh` outside cwnd reduction: max(ssthresh, ¾·cwnd).
#[inline]
pub(crate) fn current_ssthresh(tp: &TcpCcView) -> u32 {
    if matches!(tp.ca_state, CaState::Cwr | CaState::Recovery) {
        tp.snd_ssthresh
    } else {
        tp.snd_ssthresh.max((tp.snd_cwnd >> 1) + (tp.snd_cwnd >> 2))
    }
}

#[derive(Clone, Debug)]
pub struct Vegas {
    /// Right edge (snd_nxt, segments) of the round being measured.
    pub(crate) beg_snd_nxt: u32,
    /// Whether Vegas decisions are on (Open state).
    pub(crate) doing_vegas_now: bool,
    /// RTT samples in this round.
    pub(crate) cnt_rtt: u32,
    /// Minimum RTT of this round, µs (+1).
    pub(crate) min_rtt: u32,
    /// Minimum RTT ever seen (propagation delay estimate), µs (+1).
    pub(crate) base_rtt: u32,
    /// Segments.
    alpha: u32,
    beta: u32,
    gamma: u32,
}

impl Vegas {
    pub fn new(v: &ParamValues) -> Self {
        Self::with(v.get("alpha").round() as u32, v.get("beta").round() as u32, v.get("gamma").round() as u32)
    }

    pub fn with(alpha: u32, beta: u32, gamma: u32) -> Self {
        Vegas { beg_snd_nxt: 0, doing_vegas_now: true, cnt_rtt: 0, min_rtt: RTT_NONE_US, base_rtt: RTT_NONE_US, alpha, beta, gamma }
    }

    /// Linux `vegas_enable`: start sampling a fresh round at the current snd_nxt.
    pub(crate) fn enable(&mut self, tp: &TcpCcView) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = RTT_NONE_US;
    }

    /// Linux `tcp_vegas_init`.
    pub(crate) fn reset(&mut self, tp: &TcpCcView) {
        self.base_rtt = RTT_NONE_US;
        self.enable(tp);
    }
}

impl Default for Vegas {
    fn default() -> Self {
        Self::with(2, 4, 1)
    }
}

impl CongestionOps for Vegas {
    fn init(&mut self, tp: &mut TcpCcView) {
        self.reset(tp);
    }

    fn ssthresh(&mut self, tp: &TcpCcView) -> u32 {
        Reno.ssthresh(tp)
    }

    /// Linux `tcp_vegas_pkts_acked`: min-filter the round's RTT and the base RTT.
    fn pkts_acked(&mut self, _tp: &mut TcpCcView, sample: &AckSample) {
        let Some(rtt) = sample.rtt_ns else { return };
        // Never allow zero rtt or baseRTT.
        let vrtt = rtt_us(rtt) + 1;
        self.base_rtt = self.base_rtt.min(vrtt);
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt += 1;
    }

    fn set_state(&mut self, tp: &mut TcpCcView, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable(tp);
        } else {
            self.doing_vegas_now = false;
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpCcView, ev: CaEvent) {
        if matches!(ev, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.reset(tp);
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpCcView, ack: u32, acked: u32) {
        if !self.doing_vegas_now {
            Reno.cong_avoid(tp, ack, acked);
            return;
        }
        if after(ack, self.beg_snd_nxt) {
            // Once per RTT: remember where the next round ends.
            self.beg_snd_nxt = tp.snd_nxt;
            if self.cnt_rtt <= 2 {
                // Only one or two (delayed) ACKs this round: too few samples, act as Reno.
                Reno.cong_avoid(tp, ack, acked);
            } else {
                let rtt = self.min_rtt as u64;
                let base = self.base_rtt as u64;
                let cwnd = tp.snd_cwnd as u64;
                // The window that would give the actual rate at the propagation delay.
                let target_cwnd = cwnd * base / rtt;
                // "Diff" of the Arizona papers, in segments.
                let diff = cwnd * (rtt - base) / base;
                if diff > self.gamma as u64 && tp.in_slow_start() {
                    // Going too fast: match the actual rate (+1 for truncation), leave slow start.
                    tp.snd_cwnd = tp.snd_cwnd.min(target_cwnd as u32 + 1);
                    tp.snd_ssthresh = tp.snd_ssthresh.min(tp.snd_cwnd);
                } else if tp.in_slow_start() {
                    slow_start(tp, acked);
                } else if diff > self.beta as u64 {
                    tp.snd_cwnd -= 1;
                    tp.snd_ssthresh = tp.snd_ssthresh.min(tp.snd_cwnd);
                } else if diff < self.alpha as u64 {
                    tp.snd_cwnd += 1;
                }
                tp.snd_cwnd = tp.snd_cwnd.max(2).min(tp.snd_cwnd_clamp);
                tp.snd_ssthresh = current_ssthresh(tp);
            }
            // Wipe the slate clean for the next RTT.
            self.cnt_rtt = 0;
            self.min_rtt = RTT_NONE_US;
        } else if tp.in_slow_start() {
            slow_start(tp, acked);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::INFINITE_SSTHRESH;

    const MS: Nanos = 1_000_000;

    fn sample(rtt_ns: Nanos) -> AckSample {
        AckSample { pkts_acked: 1, rtt_ns: Some(rtt_ns), in_flight: 0 }
    }

    /// A Vegas in congestion avoidance at cwnd 100, baseRTT 100 ms (+1 µs), one round of three
    /// samples whose minimum is `rtt_ms`; then the ACK that ends the round.
    fn round(rtt_ms: u64) -> TcpCcView {
        let mut tp = TcpCcView::new(100, 1448);
        tp.snd_ssthresh = 50;
        tp.is_cwnd_limited = true;
        let mut v = Vegas::default();
        v.init(&mut tp);
        v.pkts_acked(&mut tp, &sample(100 * MS));
        tp.snd_nxt = 100;
        v.enable(&tp); // a new round ends at snd_nxt 100
        for r in [rtt_ms + 5, rtt_ms, rtt_ms + 1] {
            v.pkts_acked(&mut tp, &sample(r * MS));
        }
        tp.snd_nxt = 200;
        v.cong_avoid(&mut tp, 101, 1);
        tp
    }

    #[test]
    fn once_per_rtt_plus_one_hold_or_minus_one_around_alpha_and_beta() {
        // diff = cwnd·(rtt − base)/base with base = 100 001 µs, cwnd = 100:
        //   rtt 101 ms: 100·1 000/100 001 = 0  < alpha 2  → cwnd 101
        //   rtt 103 ms: 100·3 000/100 001 = 2  in [2, 4] → hold at 100
        //   rtt 105 ms: 100·5 000/100 001 = 4  in [2, 4] → hold (4 is not above beta)
        //   rtt 106 ms: 100·6 000/100 001 = 5  > beta 4  → cwnd 99, ssthresh min(50, 99) then
        //               tcp_current_ssthresh = max(50, 49 + 24) = 73.
        assert_eq!(round(101).snd_cwnd, 101);
        assert_eq!(round(103).snd_cwnd, 100);
        assert_eq!(round(105).snd_cwnd, 100);
        let tp = round(106);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (99, 73));
    }

    #[test]
    fn leaves_slow_start_at_the_actual_rate_when_diff_exceeds_gamma() {
        // Slow start, cwnd 40, base 50 ms (+1 µs), round minimum 60 ms (+1 µs):
        //   diff = 40·10 000/50 001 = 7 > gamma 1;
        //   target = 40·50 001/60 001 = 33 → cwnd = min(40, 33 + 1) = 34,
        //   ssthresh = min(∞, 34) then max(34, 17 + 8) = 34: no longer in slow start.
        let mut tp = TcpCcView::new(40, 1448);
        let mut v = Vegas::default();
        v.init(&mut tp);
        v.pkts_acked(&mut tp, &sample(50 * MS));
        tp.snd_nxt = 40;
        v.enable(&tp);
        for r in [60, 61, 62] {
            v.pkts_acked(&mut tp, &sample(r * MS));
        }
        assert_eq!(tp.snd_ssthresh, INFINITE_SSTHRESH);
        v.cong_avoid(&mut tp, 41, 1);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (34, 34));
        assert!(!tp.in_slow_start());
    }

    #[test]
    fn within_a_round_only_slow_start_grows_and_few_samples_fall_back_to_reno() {
        let mut tp = TcpCcView::new(10, 1448);
        tp.snd_ssthresh = 10; // congestion avoidance
        tp.is_cwnd_limited = true;
        let mut v = Vegas::default();
        v.init(&mut tp);
        tp.snd_nxt = 10;
        v.enable(&tp);
        // Inside the round: no change in congestion avoidance.
        v.cong_avoid(&mut tp, 5, 1);
        assert_eq!(tp.snd_cwnd, 10);
        // End of a round with only two samples: Reno's counter advances instead.
        v.pkts_acked(&mut tp, &sample(100 * MS));
        v.pkts_acked(&mut tp, &sample(100 * MS));
        v.cong_avoid(&mut tp, 11, 1);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (10, 1));
        // Out of Open: Reno on every ACK (10 acked segments → +1).
        v.set_state(&mut tp, CaState::Disorder);
        v.cong_avoid(&mut tp, 12, 9);
        assert_eq!(tp.snd_cwnd, 11);
    }

    #[test]
    fn loss_halves_like_reno() {
        let tp = TcpCcView::new(30, 1448);
        assert_eq!(Vegas::default().ssthresh(&tp), 15);
    }
}
