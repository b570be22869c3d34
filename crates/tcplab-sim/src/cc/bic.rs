//! BIC-TCP: L. Xu, K. Harfoush, I. Rhee, "Binary Increase Congestion Control (BIC) for Fast
//! Long-Distance Networks", IEEE INFOCOM 2004. After a loss the window searches for the window of
//! the last loss (W_max) by binary search: each RTT it moves a fraction 1/B of the way to W_max,
//! by at most S_max (`max_increment`) segments and at least S_min; above W_max it probes
//! symmetrically ("max probing": slow, then faster, then linear). A loss cuts cwnd to β = 0.8 of
//! its value; with fast convergence a flow whose W_max fell remembers only (1 + β)/2 of it.
//!
//! ```text
//!   cwnd < W_max:  dist = (W_max − cwnd)/B      dist > max_increment → +max_increment per RTT
//!                                               1 < dist ≤ max_increment → +dist per RTT
//!                                               dist ≤ 1 → +B/smooth_part per RTT
//!   cwnd ≥ W_max:  < W_max + B                  → +B/smooth_part per RTT
//!                  < W_max + max_increment(B−1) → +(cwnd − W_max)/(B − 1) per RTT
//!                  otherwise                    → +max_increment per RTT
//!   cwnd ≤ low_window: Reno (+1 per RTT, halve on loss)
//! ```
//!
//! Mirrors Linux `net/ipv4/tcp_bic.c`: segments, the increase expressed as `cnt` (ACKs per
//! one-segment increase) for `tcp_cong_avoid_ai`, β in 1/1024 (`BICTCP_BETA_SCALE`), the
//! delayed-ACK ratio estimate in 1/16 (`ACK_RATIO_SHIFT`), time in jiffies (`HZ` = 250).
//!
//! Profile `linux-2.6.22`: no change. BIC's constants (β 819/1024, max_increment 16 — 32 before
//! 2.6.14.2 —, low_window 14, smooth_part 20, B = 4) were the same in 2.6.22 as today.
//!
//! Deviations: 2.6.22 counted the "no loss yet" case with a separate `loss_cwnd` and restored
//! `max(cwnd, last_max_cwnd)` on undo; tcplab follows today's file (`last_max_cwnd == 0`, Reno
//! undo). `init` runs when the flow is built, not at connection set-up (no effect: it only
//! resets counters).

use super::helpers::{cong_avoid_ai, jiffies, slow_start_leftover, HZ};
use super::params::{Param, ParamValues};
use super::{AckSample, CaState, CongestionOps, TcpCcView};

/// Linux `BICTCP_BETA_SCALE`: β is in 1/1024.
const BETA_SCALE: u32 = 1024;
/// Linux `BICTCP_B`: binary search goes to (max + min)/B.
const BICTCP_B: u32 = 4;
/// Linux `ACK_RATIO_SHIFT`: `delayed_ack` is segments per ACK in 1/16.
const ACK_RATIO_SHIFT: u32 = 4;

pub const PARAMS: &[Param] = &[
    Param { name: "beta", default: 0.8, min: 0.1, max: 0.99, help: "window kept after a loss, as a fraction of cwnd (Linux beta = 819/1024)" },
    Param { name: "fast_convergence", default: 1.0, min: 0.0, max: 1.0, help: "remember only (1 + beta)/2 of W_max when it shrank (0 or 1)" },
    Param { name: "max_increment", default: 16.0, min: 1.0, max: 1024.0, help: "largest increase per RTT in the binary search, segments" },
    Param { name: "low_window", default: 14.0, min: 0.0, max: 1e6, help: "at or below this cwnd (segments) behave like Reno" },
    Param { name: "smooth_part", default: 20.0, min: 1.0, max: 1000.0, help: "RTTs to creep from W_max − B to W_max (increase B/smooth_part per RTT near W_max)" },
    Param { name: "initial_ssthresh", default: 0.0, min: 0.0, max: 1e9, help: "initial slow-start threshold, segments (0 = unlimited)" },
];

#[derive(Clone, Copy, Debug)]
struct BicConfig {
    /// β in 1/1024.
    beta: u32,
    fast_convergence: bool,
    /// Segments per RTT.
    max_increment: u32,
    /// Segments.
    low_window: u32,
    smooth_part: u32,
    /// Segments, 0 = none.
    initial_ssthresh: u32,
}

#[derive(Clone, Copy, Debug)]
pub struct Bic {
    cfg: BicConfig,
    /// ACKs (segments) per one-segment increase.
    cnt: u32,
    /// W_max: cwnd at the last loss, segments (0 before the first).
    last_max_cwnd: u32,
    /// cwnd when `cnt` was last computed, segments.
    last_cwnd: u32,
    /// When `cnt` was last computed, jiffies.
    last_time: u32,
    /// Start of the current epoch (since the last loss), jiffies; 0 = none.
    epoch_start: u32,
    /// Segments per ACK, in 1/16 (`ACK_RATIO_SHIFT`).
    delayed_ack: u32,
}

impl Bic {
    pub fn new(p: &ParamValues) -> Self {
        let cfg = BicConfig {
            beta: p.scaled("beta", BETA_SCALE as f64),
            fast_convergence: p.flag("fast_convergence"),
            max_increment: p.get("max_increment") as u32,
            low_window: p.get("low_window") as u32,
            smooth_part: p.get("smooth_part") as u32,
            initial_ssthresh: p.get("initial_ssthresh") as u32,
        };
        let mut b = Bic { cfg, cnt: 0, last_max_cwnd: 0, last_cwnd: 0, last_time: 0, epoch_start: 0, delayed_ack: 0 };
        b.reset();
        b
    }

    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.epoch_start = 0;
        // Start by assuming delayed ACKs: two segments per ACK.
        self.delayed_ack = 2 << ACK_RATIO_SHIFT;
    }

    /// Linux `bictcp_update`: the ACKs per one-segment increase at window `cwnd`.
    fn update(&mut self, cwnd: u32, now: u32) {
        // Recompute at most every HZ/32 jiffies (7: 28 ms) while cwnd stands still.
        if self.last_cwnd == cwnd && (now.wrapping_sub(self.last_time) as i32) <= (HZ / 32) as i32 {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = now;
        if self.epoch_start == 0 {
            self.epoch_start = now;
        }
        let c = &self.cfg;
        if cwnd <= c.low_window {
            self.cnt = cwnd; // Reno
            return;
        }
        let w_max = self.last_max_cwnd;
        self.cnt = if cwnd < w_max {
            // Binary search toward W_max.
            let dist = (w_max - cwnd) / BICTCP_B;
            if dist > c.max_increment {
                cwnd / c.max_increment // additive increase by S_max
            } else if dist <= 1 {
                cwnd * c.smooth_part / BICTCP_B
            } else {
                cwnd / dist
            }
        } else if cwnd < w_max + BICTCP_B {
            cwnd * c.smooth_part / BICTCP_B // max probing: slow start around W_max
        } else if cwnd < w_max + c.max_increment * (BICTCP_B - 1) {
            cwnd * (BICTCP_B - 1) / (cwnd - w_max)
        } else {
            cwnd / c.max_increment
        };
        // Before the first loss (or at very low utilisation) grow at least 5% per RTT.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
        // Count segments, not ACKs: divide by the delayed-ACK ratio.
        self.cnt = ((self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack).max(1);
    }
}

impl CongestionOps for Bic {
    fn init(&mut self, tp: &mut TcpCcView) {
        self.reset();
        if self.cfg.initial_ssthresh > 0 {
            tp.snd_ssthresh = self.cfg.initial_ssthresh;
        }
    }

    fn ssthresh(&mut self, tp: &TcpCcView) -> u32 {
        let cwnd = tp.snd_cwnd;
        self.epoch_start = 0;
        // Fast convergence: a flow whose W_max shrank releases bandwidth to newcomers.
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.cfg.fast_convergence {
            cwnd * (BETA_SCALE + self.cfg.beta) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        if cwnd <= self.cfg.low_window {
            (cwnd >> 1).max(2)
        } else {
            (cwnd * self.cfg.beta / BETA_SCALE).max(2)
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpCcView, _ack: u32, acked: u32) {
        let Some(acked) = slow_start_leftover(tp, acked) else { return };
        self.update(tp.snd_cwnd, jiffies(tp.now_ns));
        cong_avoid_ai(tp, self.cnt, acked);
    }

    fn set_state(&mut self, _tp: &mut TcpCcView, new_state: CaState) {
        if new_state == CaState::Loss {
            self.reset();
        }
    }

    /// The delayed-ACK ratio as a moving average: ratio = (15·ratio + sample)/16.
    fn pkts_acked(&mut self, tp: &mut TcpCcView, sample: &AckSample) {
        if tp.ca_state == CaState::Open {
            self.delayed_ack = self.delayed_ack.wrapping_add(sample.pkts_acked.wrapping_sub(self.delayed_ack >> ACK_RATIO_SHIFT));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn bic() -> Bic {
        Bic::new(&ParamValues::resolve(PARAMS, &[], &BTreeMap::new(), "t").unwrap())
    }

    /// `cnt` at `cwnd` with W_max = `w_max` and a measured ratio of one segment per ACK.
    fn cnt(w_max: u32, cwnd: u32) -> u32 {
        let mut b = bic();
        b.last_max_cwnd = w_max;
        b.delayed_ack = 1 << ACK_RATIO_SHIFT;
        b.update(cwnd, 1000);
        b.cnt
    }

    #[test]
    fn binary_search_and_max_probing_increments() {
        // Below W_max = 1000: dist = (1000 − cwnd)/4.
        assert_eq!(cnt(1000, 900), 56); // dist 25 > 16: +16 per RTT, cnt = 900/16
        assert_eq!(cnt(1000, 980), 196); // dist 5: +5 per RTT, cnt = 980/5
        assert_eq!(cnt(1000, 998), 4990); // dist 0: +B/smooth_part = 0.2 per RTT, cnt = 998·20/4
        // Max probing above W_max.
        assert_eq!(cnt(1000, 1002), 5010); // < W_max + B: 1002·20/4
        assert_eq!(cnt(1000, 1010), 303); // < W_max + 48: 1010·3/10
        assert_eq!(cnt(1000, 1100), 68); // linear: 1100/16
        // Reno at or below low_window.
        assert_eq!(cnt(1000, 14), 14);
        // Before the first loss at least 5% per RTT: cnt ≤ 20.
        assert_eq!(cnt(0, 500), 20);
    }

    #[test]
    fn delayed_ack_ratio_scales_cnt() {
        // Fresh state assumes two segments per ACK: cnt = (56 << 4)/32 = 28 ACKs.
        let mut b = bic();
        b.last_max_cwnd = 1000;
        b.update(900, 1000);
        assert_eq!(b.cnt, 28);
        // Each Open-state ACK for one segment moves the ratio 1/16 of the way to 1:
        // 32 → 32 + 1 − 2 = 31 → 31 + 1 − 1 = 31 (31 >> 4 = 1): it settles at 31/16.
        let mut tp = TcpCcView::new(10, 1448);
        let s = AckSample { pkts_acked: 1, rtt_ns: None, in_flight: 10 };
        b.pkts_acked(&mut tp, &s);
        assert_eq!(b.delayed_ack, 31);
        b.pkts_acked(&mut tp, &s);
        assert_eq!(b.delayed_ack, 31);
    }

    #[test]
    fn far_below_w_max_grows_max_increment_per_rtt() {
        // W_max 1000, cwnd 500: cnt = cwnd/16 ACKs per segment. One RTT of 500 one-segment ACKs:
        // 31 ACKs per segment up to cwnd 512 (12 segments, 372 ACKs), then 32 (128 ACKs, 4
        // segments): +16 = max_increment.
        let mut b = bic();
        b.last_max_cwnd = 1000;
        b.delayed_ack = 1 << ACK_RATIO_SHIFT;
        let mut tp = TcpCcView::new(500, 1448);
        tp.snd_ssthresh = 500;
        tp.is_cwnd_limited = true;
        for i in 0..500 {
            b.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!(tp.snd_cwnd, 516);
    }

    #[test]
    fn loss_keeps_beta_and_fast_convergence_lowers_w_max() {
        let mut b = bic();
        let tp = TcpCcView::new(1000, 1448);
        // ssthresh = 1000·819/1024 = 799; W_max = 1000.
        assert_eq!(b.ssthresh(&tp), 799);
        assert_eq!(b.last_max_cwnd, 1000);
        // Next loss at 900 < W_max: W_max = 900·(1024 + 819)/2048 = 809.
        let tp = TcpCcView::new(900, 1448);
        assert_eq!(b.ssthresh(&tp), 719);
        assert_eq!(b.last_max_cwnd, 809);
        // At or below low_window: halve.
        let tp = TcpCcView::new(14, 1448);
        assert_eq!(b.ssthresh(&tp), 7);
    }
}
