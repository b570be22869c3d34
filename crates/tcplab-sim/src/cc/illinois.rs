//! TCP-Illinois: S. Liu, T. Başar, R. Srikant, "TCP-Illinois: A Loss- and Delay-Based Congestion
//! Control Algorithm for High-Speed Networks", VALUETOOLS 2006 (Performance Evaluation 65(6–7),
//! 2008). Mirrors Linux `net/ipv4/tcp_illinois.c`.
//!
//! AIMD whose increase α and decrease β follow the average queueing delay d_a of the last RTT,
//! against the largest seen d_m (both µs, over base RTT):
//!
//! ```text
//!   α = α_max = 10                 if d_a ≤ d1 = d_m/100 (after θ = 5 such RTTs once above it)
//!   α = k1 / (k2 + d_a)            otherwise: falls from 10 at d1 to α_min = 0.3 at d_m
//!   β = β_min = 1/8                if d_a ≤ d2 = d_m/10
//!   β = β_max = 1/2                if d_a ≥ d3 = 8·d_m/10
//!   β linear from 1/8 to 1/2       in between
//!   cwnd < win_thresh (15): α = 1, β = 1/2 (Reno)
//!
//!   per ACK in avoidance: cwnd += α/cwnd;   on loss: ssthresh = cwnd − β·cwnd
//! ```
//!
//! α has 7 fractional bits (ALPHA_SCALE = 128), β 6 (BETA_SCALE = 64), as in Linux. α and β are
//! recomputed once per RTT (when the ACK passes the snd_nxt of the previous update); a timeout
//! (Loss state) resets them to Reno's.
//!
//! Deviations: none in the computation.

use super::helpers::slow_start;
use super::params::{Param, ParamValues};
use super::vegas::{after, rtt_us, RTT_NONE_US};
use super::{AckSample, CaState, CongestionOps, TcpCcView};

pub const PARAMS: &[Param] = &[
    Param { name: "win_thresh", default: 15.0, min: 0.0, max: 1e6, help: "window threshold for starting adaptive sizing (segments, whole number)" },
    Param { name: "theta", default: 5.0, min: 1.0, max: 255.0, help: "number of fast RTTs before full growth (whole number)" },
];

/// α: 7 fractional bits.
const ALPHA_SHIFT: u32 = 7;
const ALPHA_SCALE: u32 = 1 << ALPHA_SHIFT;
/// ≈ 0.3.
const ALPHA_MIN: u32 = (3 * ALPHA_SCALE) / 10;
/// 10.0.
const ALPHA_MAX: u32 = 10 * ALPHA_SCALE;
/// 1.0.
const ALPHA_BASE: u32 = ALPHA_SCALE;
/// Largest RTT used (µs, ≈ 3.3 s), so that α arithmetic cannot wrap.
const RTT_MAX: u32 = u32::MAX / ALPHA_MAX;

/// β: 6 fractional bits.
const BETA_SHIFT: u32 = 6;
const BETA_SCALE: u32 = 1 << BETA_SHIFT;
/// 0.125.
const BETA_MIN: u32 = BETA_SCALE / 8;
/// 0.5.
const BETA_MAX: u32 = BETA_SCALE / 2;
const BETA_BASE: u32 = BETA_MAX;

#[derive(Clone, Debug)]
pub struct Illinois {
    /// Sum of this RTT's samples, µs.
    sum_rtt: u64,
    /// Samples this RTT (u16 as in Linux).
    cnt_rtt: u16,
    /// Minimum RTT ever, µs.
    base_rtt: u32,
    /// Maximum RTT ever, µs.
    max_rtt: u32,
    /// Right edge (snd_nxt, segments) of the current RTT.
    end_seq: u32,
    /// Additive increase, ×ALPHA_SCALE.
    alpha: u32,
    /// Multiplicative decrease, ×BETA_SCALE.
    beta: u32,
    /// Segments acknowledged by the current ACK.
    acked: u32,
    /// The average delay has been above d1.
    rtt_above: bool,
    /// Consecutive RTTs below d1 (u8 as in Linux).
    rtt_low: u8,
    win_thresh: u32,
    theta: u32,
}

impl Illinois {
    pub fn new(v: &ParamValues) -> Self {
        Self::with(v.get("win_thresh").round() as u32, v.get("theta").round() as u32)
    }

    pub fn with(win_thresh: u32, theta: u32) -> Self {
        Illinois {
            sum_rtt: 0,
            cnt_rtt: 0,
            base_rtt: RTT_NONE_US,
            max_rtt: 0,
            end_seq: 0,
            alpha: ALPHA_MAX,
            beta: BETA_BASE,
            acked: 0,
            rtt_above: false,
            rtt_low: 0,
            win_thresh,
            theta,
        }
    }

    fn rtt_reset(&mut self, tp: &TcpCcView) {
        self.end_seq = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.sum_rtt = 0;
    }

    /// Maximum queueing delay d_m, µs.
    fn max_delay(&self) -> u32 {
        self.max_rtt - self.base_rtt
    }

    /// Average queueing delay d_a of this RTT, µs.
    fn avg_delay(&self) -> u32 {
        (self.sum_rtt / self.cnt_rtt as u64) as u32 - self.base_rtt
    }

    /// α (×128) from the average delay `da` and maximum delay `dm`, µs: a convex curve.
    fn alpha(&mut self, da: u32, dm: u32) -> u32 {
        let d1 = dm / 100;
        if da <= d1 {
            // Never out of the low-delay zone: full speed.
            if !self.rtt_above {
                return ALPHA_MAX;
            }
            // Wait for theta good RTTs before going back to full speed.
            self.rtt_low = self.rtt_low.wrapping_add(1);
            if (self.rtt_low as u32) < self.theta {
                return self.alpha;
            }
            self.rtt_low = 0;
            self.rtt_above = false;
            return ALPHA_MAX;
        }
        self.rtt_above = true;
        // α = k1/(k2 + da), k1 = (dm − d1)·αmin·αmax/(αmax − αmin), k2 = (dm − d1)·αmin/(αmax − αmin) − d1.
        let dm = dm - d1;
        let da = da - d1;
        (dm * ALPHA_MAX) / (dm + (da * (ALPHA_MAX - ALPHA_MIN)) / ALPHA_MIN)
    }

    /// β (×64): 1/8 up to d2 = dm/10, 1/2 from d3 = 8·dm/10, linear between.
    fn beta(da: u32, dm: u32) -> u32 {
        let d2 = dm / 10;
        if da <= d2 {
            return BETA_MIN;
        }
        let d3 = (8 * dm) / 10;
        if da >= d3 || d3 <= d2 {
            return BETA_MAX;
        }
        (BETA_MIN * d3 - BETA_MAX * d2 + (BETA_MAX - BETA_MIN) * da) / (d3 - d2)
    }

    /// Once per RTT.
    fn update_params(&mut self, tp: &TcpCcView) {
        if tp.snd_cwnd < self.win_thresh {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
        } else if self.cnt_rtt > 0 {
            let dm = self.max_delay();
            let da = self.avg_delay();
            self.alpha = self.alpha(da, dm);
            self.beta = Self::beta(da, dm);
        }
        self.rtt_reset(tp);
    }
}

impl CongestionOps for Illinois {
    fn init(&mut self, tp: &mut TcpCcView) {
        *self = Self::with(self.win_thresh, self.theta);
        self.rtt_reset(tp);
    }

    /// Multiplicative decrease by β.
    fn ssthresh(&mut self, tp: &TcpCcView) -> u32 {
        (tp.snd_cwnd - ((tp.snd_cwnd as u64 * self.beta as u64) >> BETA_SHIFT) as u32).max(2)
    }

    fn pkts_acked(&mut self, _tp: &mut TcpCcView, sample: &AckSample) {
        self.acked = sample.pkts_acked;
        // Duplicate ACK: no RTT sample.
        let Some(rtt) = sample.rtt_ns else { return };
        // Ignore bogus values; this prevents wraparound in α arithmetic.
        let rtt = rtt_us(rtt).min(RTT_MAX);
        self.base_rtt = self.base_rtt.min(rtt);
        self.max_rtt = self.max_rtt.max(rtt);
        self.cnt_rtt = self.cnt_rtt.wrapping_add(1);
        self.sum_rtt += rtt as u64;
    }

    /// A timeout resets α and β to Reno's.
    fn set_state(&mut self, tp: &mut TcpCcView, new_state: CaState) {
        if new_state == CaState::Loss {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
            self.rtt_low = 0;
            self.rtt_above = false;
            self.rtt_reset(tp);
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpCcView, ack: u32, acked: u32) {
        if after(ack, self.end_seq) {
            self.update_params(tp);
        }
        // RFC 2861: grow only when the window is used.
        if !tp.is_cwnd_limited {
            return;
        }
        if tp.in_slow_start() {
            slow_start(tp, acked);
        } else {
            // snd_cwnd_cnt counts segments since the last increase.
            tp.snd_cwnd_cnt += self.acked;
            self.acked = 1;
            // cwnd += α/cwnd per segment.
            let delta = ((tp.snd_cwnd_cnt as u64 * self.alpha as u64) >> ALPHA_SHIFT) as u32;
            if delta >= tp.snd_cwnd {
                tp.snd_cwnd = (tp.snd_cwnd + delta / tp.snd_cwnd).min(tp.snd_cwnd_clamp);
                tp.snd_cwnd_cnt = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_falls_from_ten_to_point_three_with_average_delay() {
        // dm = 100 000 µs → d1 = 1 000 µs. α·128:
        //   da ≤ d1, never above: α_max = 1280 (10.0)
        //   da = dm: (99 000·1280)/(99 000 + 99 000·(1280 − 38)/38) = 1280·38/1280 = 38 (0.297)
        //   da = 10 000: 99 000·1280/(99 000 + 9 000·1242/38) = 126 720 000/393 157 = 322 (2.52)
        let mut c = Illinois::with(15, 5);
        assert_eq!(ALPHA_MIN, 38);
        assert_eq!(c.alpha(500, 100_000), 1280);
        assert_eq!(c.alpha(100_000, 100_000), 38);
        assert_eq!(c.alpha(10_000, 100_000), 322);
        // Back under d1: α holds for theta − 1 = 4 RTTs, then returns to 10.
        c.alpha = 322;
        for _ in 0..4 {
            assert_eq!(c.alpha(500, 100_000), 322);
        }
        assert_eq!(c.alpha(500, 100_000), 1280);
    }

    #[test]
    fn beta_is_one_eighth_to_one_half_between_d2_and_d3() {
        // dm = 100 000 µs: d2 = 10 000, d3 = 80 000. β·64:
        //   da ≤ d2: 8 (1/8);  da ≥ d3: 32 (1/2)
        //   da = 45 000 (midway): (8·80 000 − 32·10 000 + 24·45 000)/70 000 = 1 400 000/70 000 = 20
        assert_eq!(Illinois::beta(10_000, 100_000), 8);
        assert_eq!(Illinois::beta(80_000, 100_000), 32);
        assert_eq!(Illinois::beta(45_000, 100_000), 20);
        // ssthresh = cwnd − cwnd·β/64: cwnd 100 → 100 − 12 = 88 with β = 1/8; 50 with 1/2.
        let tp = TcpCcView::new(100, 1448);
        let mut c = Illinois::with(15, 5);
        c.beta = 8;
        assert_eq!(c.ssthresh(&tp), 88);
        c.beta = 32;
        assert_eq!(c.ssthresh(&tp), 50);
    }

    #[test]
    fn once_per_rtt_update_from_samples_then_alpha_per_ack_growth() {
        // Base RTT 100 ms (max 200 ms seen): dm = 100 000 µs. Round of samples averaging 145 ms:
        // da = 45 000 → β = 20 (as above), α = 99 000·1280/(99 000 + 44 000·1242/38)
        // = 126 720 000/1 537 105 = 82.
        let mut tp = TcpCcView::new(100, 1448);
        tp.snd_ssthresh = 50;
        tp.is_cwnd_limited = true;
        let mut c = Illinois::with(15, 5);
        c.init(&mut tp);
        let s = |ms: u64| AckSample { pkts_acked: 1, rtt_ns: Some(ms * 1_000_000), in_flight: 0 };
        c.pkts_acked(&mut tp, &s(100));
        c.pkts_acked(&mut tp, &s(200));
        tp.snd_nxt = 100;
        c.rtt_reset(&tp);
        c.pkts_acked(&mut tp, &s(140));
        c.pkts_acked(&mut tp, &s(150));
        tp.snd_nxt = 200; // the next update comes after ACK 200
        c.cong_avoid(&mut tp, 101, 1);
        assert_eq!((c.alpha, c.beta), (82, 20));
        // cwnd += α/cwnd per segment: cnt·82/128 ≥ 100 from cnt = 157 (100·128/82 = 156.1).
        assert_eq!(tp.snd_cwnd_cnt, 1);
        for _ in 0..155 {
            c.pkts_acked(&mut tp, &s(145));
            c.cong_avoid(&mut tp, 102, 1);
        }
        assert_eq!(tp.snd_cwnd, 100);
        c.cong_avoid(&mut tp, 102, 1);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (101, 0));
    }

    #[test]
    fn small_windows_and_timeouts_are_reno() {
        let mut tp = TcpCcView::new(10, 1448);
        let mut c = Illinois::with(15, 5);
        c.init(&mut tp);
        c.pkts_acked(&mut tp, &AckSample { pkts_acked: 1, rtt_ns: Some(50_000_000), in_flight: 0 });
        c.cong_avoid(&mut tp, 1, 1);
        assert_eq!((c.alpha, c.beta), (ALPHA_BASE, BETA_BASE));
        c.alpha = 1000;
        c.beta = 8;
        c.set_state(&mut tp, CaState::Loss);
        assert_eq!((c.alpha, c.beta), (ALPHA_BASE, BETA_BASE));
    }
}
