//! H-TCP: D. Leith, R. Shorten, "H-TCP: TCP for high-speed and long-distance networks", PFLDnet
//! 2004; D. Leith, R. Shorten, Y. Lee, "H-TCP: A framework for congestion control in high-speed
//! and long-distance networks", PFLDnet 2005. The increase per RTT grows with the time Δ since
//! the last congestion event:
//!
//! ```text
//!   α(Δ) = 1                                       Δ ≤ Δ_L = 1 s
//!   α(Δ) = 1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)²        Δ > Δ_L          (Δ in seconds)
//!   increase per RTT = 2(1 − β)·α(Δ)·(RTT_min / 100 ms)   (RTT scaling, ratio clamped to [0.5, 10])
//!   on loss: cwnd ← β·cwnd, β = RTT_min/RTT_max clamped to [0.5, 0.8] (adaptive backoff),
//!            β = 0.5 if the achieved throughput moved by more than 20% (bandwidth switch)
//! ```
//!
//! Mirrors Linux `net/ipv4/tcp_htcp.c`: segments, α and β in 1/128 (`<< 7`: `ALPHA_BASE` = 1.0,
//! `BETA_MIN` = 0.5, `BETA_MAX` = 102/128 = 0.8), RTTs and Δ in jiffies (`HZ` = 250), the
//! throughput estimate in segments per second; `snd_cwnd_cnt` counts segments acknowledged and
//! cwnd grows by one when cnt·α/128 ≥ cwnd.
//!
//! Profile `linux-2.6.22`: no change (the constants and both switches, on by default, were the
//! same in 2.6.22).
//!
//! Deviations:
//! - `init` (Δ's origin, `last_cong`) runs when the flow starts sending (`CA_EVENT_TX_START`),
//!   not at connection set-up: without a preamble tcplab has no handshake, and with
//!   `preamble = "iperf3"` the first send follows the data connection's handshake by a round
//!   trip (the cookie's).
//! - Time runs at HZ = 250 (Debian's and Ubuntu's kernels, and the testbed's; a 4 ms jiffy).

use super::helpers::{jiffies, msecs_to_jiffies, slow_start, usecs_to_jiffies, HZ};
use super::params::{Param, ParamValues};
use super::{AckSample, CaEvent, CaState, CongestionOps, TcpCcView};

/// α and β are in 1/128 (`<< 7`).
const SCALE_SHIFT: u32 = 7;
/// Linux `ALPHA_BASE`: α = 1.0.
const ALPHA_BASE: u32 = 1 << SCALE_SHIFT;

pub const PARAMS: &[Param] = &[
    Param { name: "use_rtt_scaling", default: 1.0, min: 0.0, max: 1.0, help: "scale the increase by RTT_min/100 ms (0 or 1)" },
    Param { name: "use_bandwidth_switch", default: 1.0, min: 0.0, max: 1.0, help: "back off by 0.5 when throughput changed by over 20% (0 or 1)" },
    Param { name: "beta_min", default: 0.5, min: 0.1, max: 0.99, help: "smallest backoff factor (Linux BETA_MIN = 64/128)" },
    Param { name: "beta_max", default: 0.8, min: 0.1, max: 0.99, help: "largest backoff factor (Linux BETA_MAX = 102/128)" },
];

#[derive(Clone, Copy, Debug)]
struct HtcpConfig {
    use_rtt_scaling: bool,
    use_bandwidth_switch: bool,
    /// In 1/128.
    beta_min: u32,
    beta_max: u32,
}

#[derive(Clone, Copy, Debug)]
pub struct Htcp {
    cfg: HtcpConfig,
    started: bool,
    /// Increase per RTT, segments in 1/128.
    alpha: u32,
    /// Backoff factor, 1/128.
    beta: u32,
    /// Adaptive backoff only after one congestion event with RTT data.
    modeswitch: bool,
    /// Segments acknowledged by the last Open-state ACK.
    pkts_acked: u32,
    /// Segments acknowledged since `lasttime`, for the throughput estimate.
    packetcount: u32,
    /// RTTs, jiffies.
    min_rtt: u32,
    max_rtt: u32,
    /// Start of the last congestion event, jiffies.
    last_cong: u32,
    undo_last_cong: u32,
    undo_max_rtt: u32,
    undo_old_max_b: u32,
    /// Throughput estimates, segments per second.
    min_b: u32,
    max_b: u32,
    old_max_b: u32,
    bi: u32,
    /// Start of the throughput sample, jiffies.
    lasttime: u32,
}

/// Linux `between(seq1, seq2, seq3)`: seq2 ≤ seq1 ≤ seq3 in wrapping arithmetic.
fn between(a: u32, lo: u32, hi: u32) -> bool {
    hi.wrapping_sub(lo) >= a.wrapping_sub(lo)
}

impl Htcp {
    pub fn new(p: &ParamValues) -> Self {
        let s = (1u32 << SCALE_SHIFT) as f64;
        let cfg = HtcpConfig {
            use_rtt_scaling: p.flag("use_rtt_scaling"),
            use_bandwidth_switch: p.flag("use_bandwidth_switch"),
            beta_min: p.scaled("beta_min", s),
            beta_max: p.scaled("beta_max", s),
        };
        Htcp {
            cfg,
            started: false,
            alpha: ALPHA_BASE,
            beta: cfg.beta_min,
            modeswitch: false,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt: 0,
            max_rtt: 0,
            last_cong: 0,
            undo_last_cong: 0,
            undo_max_rtt: 0,
            undo_old_max_b: 0,
            min_b: 0,
            max_b: 0,
            old_max_b: 0,
            bi: 0,
            lasttime: 0,
        }
    }

    /// Linux `htcp_reset`: a congestion event starts now.
    fn reset(&mut self, now: u32) {
        self.undo_last_cong = self.last_cong;
        self.undo_max_rtt = self.max_rtt;
        self.undo_old_max_b = self.old_max_b;
        self.last_cong = now;
    }

    /// Linux `measure_rtt`, `rtt` in jiffies.
    fn measure_rtt(&mut self, state: CaState, rtt: u32) {
        if self.min_rtt > rtt || self.min_rtt == 0 {
            self.min_rtt = rtt;
        }
        if state == CaState::Open {
            if self.max_rtt < self.min_rtt {
                self.max_rtt = self.min_rtt;
            }
            // Grow the max only by samples close to it (20 ms), ignoring outliers.
            if self.max_rtt < rtt && rtt <= self.max_rtt + msecs_to_jiffies(20) {
                self.max_rtt = rtt;
            }
        }
    }

    /// Linux `htcp_beta_update`: the adaptive backoff factor.
    fn beta_update(&mut self) {
        if self.cfg.use_bandwidth_switch {
            let (max_b, old_max_b) = (self.max_b, self.old_max_b);
            self.old_max_b = max_b;
            // Throughput moved by more than ±20%: the path changed, back off by half.
            if !between(5u32.wrapping_mul(max_b), 4u32.wrapping_mul(old_max_b), 6u32.wrapping_mul(old_max_b)) {
                self.beta = self.cfg.beta_min;
                self.modeswitch = false;
                return;
            }
        }
        if self.modeswitch && self.min_rtt > msecs_to_jiffies(10) && self.max_rtt > 0 {
            // β = RTT_min/RTT_max: the fraction of the window that was not queue.
            self.beta = ((self.min_rtt << SCALE_SHIFT) / self.max_rtt).clamp(self.cfg.beta_min, self.cfg.beta_max);
        } else {
            self.beta = self.cfg.beta_min;
            self.modeswitch = true;
        }
    }

    /// Linux `htcp_alpha_update`: α(Δ) at jiffy `now`.
    fn alpha_update(&mut self, now: u32) {
        let mut factor: u32 = 1;
        let mut diff = now.wrapping_sub(self.last_cong); // Δ, jiffies
        if diff > HZ {
            // 1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)², Δ_L = 1 s, in whole units.
            diff -= HZ;
            factor = 1 + (10 * diff + (diff / 2) * (diff / 2) / HZ) / HZ;
        }
        if self.cfg.use_rtt_scaling && self.min_rtt > 0 {
            // 100 ms / RTT_min in 1/8, clamped to [0.5, 10].
            let scale = ((HZ << 3) / (10 * self.min_rtt)).clamp(1 << 2, 10 << 3);
            factor = ((factor << 3) / scale).max(1);
        }
        // 2(1 − β)·α(Δ).
        self.alpha = 2 * factor * ((1 << SCALE_SHIFT) - self.beta);
        if self.alpha == 0 {
            self.alpha = ALPHA_BASE;
        }
    }

    /// Linux `htcp_param_update`, at a congestion event.
    fn param_update(&mut self, now: u32) {
        self.beta_update();
        self.alpha_update(now);
        // Let the maximum RTT fade slowly (route changes).
        if self.min_rtt > 0 && self.max_rtt > self.min_rtt {
            self.max_rtt = self.min_rtt + (self.max_rtt - self.min_rtt) * 95 / 100;
        }
    }
}

impl CongestionOps for Htcp {
    fn ssthresh(&mut self, tp: &TcpCcView) -> u32 {
        self.param_update(jiffies(tp.now_ns));
        ((tp.snd_cwnd * self.beta) >> SCALE_SHIFT).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut TcpCcView, _ack: u32, acked: u32) {
        if !tp.is_cwnd_limited {
            return;
        }
        if tp.in_slow_start() {
            slow_start(tp, acked);
            return;
        }
        // cwnd += α/cwnd per segment acknowledged.
        if (tp.snd_cwnd_cnt * self.alpha) >> SCALE_SHIFT >= tp.snd_cwnd {
            if tp.snd_cwnd < tp.snd_cwnd_clamp {
                tp.snd_cwnd += 1;
            }
            tp.snd_cwnd_cnt = 0;
            self.alpha_update(jiffies(tp.now_ns));
        } else {
            tp.snd_cwnd_cnt += self.pkts_acked;
        }
        self.pkts_acked = 1;
    }

    fn undo_cwnd(&mut self, tp: &TcpCcView) -> u32 {
        if self.undo_last_cong != 0 {
            self.last_cong = self.undo_last_cong;
            self.max_rtt = self.undo_max_rtt;
            self.old_max_b = self.undo_old_max_b;
            self.undo_last_cong = 0;
        }
        tp.snd_cwnd.max(tp.prior_cwnd)
    }

    fn set_state(&mut self, tp: &mut TcpCcView, new_state: CaState) {
        let now = jiffies(tp.now_ns);
        match new_state {
            CaState::Open => {
                if self.undo_last_cong != 0 {
                    self.last_cong = now;
                    self.undo_last_cong = 0;
                }
            }
            CaState::Cwr | CaState::Recovery | CaState::Loss => self.reset(now),
            CaState::Disorder => {}
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpCcView, ev: CaEvent) {
        if ev == CaEvent::TxStart && !self.started {
            // Linux `htcp_init` at connection start: Δ counts from here.
            self.started = true;
            self.last_cong = jiffies(tp.now_ns);
            self.lasttime = self.last_cong;
        }
    }

    /// Linux `measure_achieved_throughput`.
    fn pkts_acked(&mut self, tp: &mut TcpCcView, sample: &AckSample) {
        let now = jiffies(tp.now_ns);
        if tp.ca_state == CaState::Open {
            self.pkts_acked = sample.pkts_acked;
        }
        if let Some(rtt_ns) = sample.rtt_ns {
            if rtt_ns > 0 {
                self.measure_rtt(tp.ca_state, usecs_to_jiffies((rtt_ns / 1_000).min(u32::MAX as u64) as u32));
            }
        }
        if !self.cfg.use_bandwidth_switch {
            return;
        }
        if !matches!(tp.ca_state, CaState::Open | CaState::Disorder) {
            self.packetcount = 0;
            self.lasttime = now;
            return;
        }
        self.packetcount += sample.pkts_acked;
        let per_rtt = (self.alpha >> SCALE_SHIFT).max(1);
        if self.packetcount >= tp.snd_cwnd.wrapping_sub(per_rtt)
            && now.wrapping_sub(self.lasttime) >= self.min_rtt
            && self.min_rtt > 0
        {
            // Segments per second over the last window.
            let cur_bi = self.packetcount * HZ / now.wrapping_sub(self.lasttime);
            if now.wrapping_sub(self.last_cong) / self.min_rtt <= 3 {
                // Just after a backoff.
                self.min_b = cur_bi;
                self.max_b = cur_bi;
                self.bi = cur_bi;
            } else {
                self.bi = (3 * self.bi + cur_bi) / 4;
                self.max_b = self.max_b.max(self.bi);
                if self.min_b > self.max_b {
                    self.min_b = self.max_b;
                }
            }
            self.packetcount = 0;
            self.lasttime = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn htcp() -> Htcp {
        Htcp::new(&ParamValues::resolve(PARAMS, &[], &BTreeMap::new(), "t").unwrap())
    }

    /// Milliseconds in jiffies (HZ = 250: 4 ms each), rounded down.
    fn j(ms: u32) -> u32 {
        ms * HZ / 1000
    }

    /// α (1/128) `delta_ms` after the last congestion event with RTT_min `rtt_ms` and β = 0.5.
    fn alpha(delta_ms: u32, rtt_ms: u32) -> u32 {
        let mut h = htcp();
        h.min_rtt = j(rtt_ms);
        h.last_cong = j(5_000);
        h.alpha_update(j(5_000 + delta_ms));
        h.alpha
    }

    #[test]
    fn alpha_grows_with_time_since_congestion() {
        // β = 0.5: α = 2(1 − 0.5)·α(Δ) = α(Δ), in 1/128. RTT_min 100 ms: no RTT scaling (8/8).
        assert_eq!(alpha(500, 100), 128); // Δ ≤ 1 s: α(Δ) = 1
        assert_eq!(alpha(1_000, 100), 128);
        // Δ = 2 s: 1 + 10·1 + (1/2)² = 11.25 → Linux's integer arithmetic in jiffies (diff = HZ
        // past the first second): 1 + (10·250 + 125²/250)/250 = 1 + 2562/250 = 11.
        assert_eq!(alpha(2_000, 100), 11 * 128);
        // Δ = 3 s: 1 + 20 + 1 = 22 exactly.
        assert_eq!(alpha(3_000, 100), 22 * 128);
        // Δ = 5 s: 1 + 40 + 4 = 45.
        assert_eq!(alpha(5_000, 100), 45 * 128);
    }

    #[test]
    fn rtt_scaling_makes_the_increase_per_second_independent_of_rtt() {
        // Δ = 3 s (α(Δ) = 22). scale = (HZ·8)/(10·RTT_min) = 100 ms/RTT_min in 1/8.
        assert_eq!(alpha(3_000, 200), 44 * 128); // scale 4 (0.5): factor 22·8/4 = 44
        assert_eq!(alpha(3_000, 50), 11 * 128); // scale 16 (2): 22·8/16 = 11
        assert_eq!(alpha(3_000, 10), 2 * 128); // scale 80 (10, the clamp): 176/80 = 2
        assert_eq!(alpha(3_000, 5), 2 * 128); // scale 160 → clamped to 80
        assert_eq!(alpha(3_000, 400), 44 * 128); // scale 2 → clamped to 4 (0.5)
    }

    #[test]
    fn adaptive_backoff_is_rtt_min_over_rtt_max() {
        // RTTs in jiffies: 100 and 150 jiffies are 400 and 600 ms at HZ = 250.
        let backoff = |min_rtt: u32, max_rtt: u32| {
            let mut h = htcp();
            h.cfg.use_bandwidth_switch = false;
            h.modeswitch = true;
            h.min_rtt = min_rtt;
            h.max_rtt = max_rtt;
            h.beta_update();
            h.beta
        };
        assert_eq!(backoff(100, 125), 102); // 12 800/125 = 102.4 → 102 = β_max 0.8
        assert_eq!(backoff(100, 150), 85); // 0.66
        assert_eq!(backoff(100, 190), 67); // 0.52
        assert_eq!(backoff(100, 300), 64); // 0.33 → β_min 0.5
        assert_eq!(backoff(100, 100), 102); // 1.0 → β_max
        assert_eq!(backoff(j(10), j(15)), 64); // RTT_min ≤ 10 ms: β_min
        // Linux compares with msecs_to_jiffies(10), rounded up to 3 jiffies at HZ = 250: an
        // RTT_min of 3 jiffies (8-12 ms) still backs off by half, 4 jiffies adapts.
        assert_eq!(backoff(3, 4), 64);
        assert_eq!(backoff(4, 5), 102);
    }

    #[test]
    fn first_loss_halves_then_backoff_adapts() {
        let mut h = htcp();
        let mut tp = TcpCcView::new(1000, 1448);
        tp.now_ns = 10_000_000_000;
        h.min_rtt = 100;
        h.max_rtt = 150;
        // First congestion event: modeswitch off, β = 0.5 → 500; then the max RTT fades:
        // 100 + 50·95/100 = 147.
        assert_eq!(h.ssthresh(&tp), 500);
        assert_eq!(h.max_rtt, 147);
        // Second: β = 12 800/147 = 87 → 1000·87 >> 7 = 679. (Bandwidth unchanged: 5·0 ∈ [0, 0].)
        assert_eq!(h.ssthresh(&tp), 679);
        // A 50% jump in throughput resets β to 0.5 (bandwidth switch).
        h.max_b = 150;
        h.old_max_b = 100;
        assert_eq!(h.ssthresh(&tp), 500);
    }

    #[test]
    fn increase_per_rtt_is_alpha_segments() {
        // α = 11 segments per RTT (1408/128): cwnd 1000 grows once cnt·1408 >> 7 ≥ 1000, i.e.
        // cnt ≥ 91; the ACK that finds it so performs the increase without counting (Linux's
        // counter), so the 92nd ACK adds the segment and recomputes α.
        let mut h = htcp();
        h.alpha = 11 * 128;
        h.min_rtt = j(100);
        let mut tp = TcpCcView::new(1000, 1448);
        tp.snd_ssthresh = 1000;
        tp.is_cwnd_limited = true;
        // Δ = 1.5 s since last_cong = 0: the update gives α(Δ) = 1 + (10·125 + 62²/250)/250 = 6.
        tp.now_ns = 1_500_000_000;
        for i in 0..92 {
            h.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!(tp.snd_cwnd, 1001);
        assert_eq!(h.alpha, 6 * 128);
    }
}
