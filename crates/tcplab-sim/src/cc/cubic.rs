//! CUBIC: RFC 9438 (2023); S. Ha, I. Rhee, L. Xu, "CUBIC: A New TCP-Friendly High-Speed TCP
//! Variant", ACM SIGOPS OSR 42(5), 2008; with HyStart (S. Ha, I. Rhee, "Taming the Elephants: New
//! TCP Slow Start", Computer Networks 55(9), 2011).
//!
//! After a loss at W_max the window follows W(t) = C·(t − K)³ + W_max (RFC 9438 §4.2, eq. 1) with
//! K = ∛(W_max·(1 − β)/C) (eq. 2), t the time since the epoch began plus one minimum RTT, C = 0.4
//! and β = 0.7; never slower than a Reno flow with the same β would be (the TCP-friendly
//! region, §4.3); fast convergence (§4.7) remembers only (1 + β)/2 of a W_max that shrank.
//!
//! ```text
//!              HyStart: ACK train ≥ delay_min/2, or
//!              round's min RTT ≥ delay_min + clamp(delay_min/8, 4 ms, 16 ms)
//!   slow start ───────────────────────────────────────► congestion avoidance (cubic)
//!        ▲        ssthresh = cwnd                           │ loss: W_max = cwnd,
//!        └──── RTO (Loss: all state reset) ─────────────────┘ ssthresh = β·cwnd, new epoch
//! ```
//!
//! Mirrors Linux `net/ipv4/tcp_cubic.c` (CUBIC v2.3): segments; β in 1/1024
//! (`BICTCP_BETA_SCALE`), C as `bic_scale` = 41 in 1/1024 with the RTT folded in
//! (`cube_rtt_scale` = bic_scale·10: W grows by C·t³ with t in 1/1024 s, `BICTCP_HZ` = 10);
//! epoch time in jiffies (`HZ` = 250), HyStart in µs; the increase as `cnt` ACKs per segment
//! for `tcp_cong_avoid_ai`, recomputed at most once per jiffy; cnt ≥ 2 (at most ×1.5 per RTT);
//! before the first loss cnt ≤ 20 (≥ 5% per RTT).
//!
//! Profile `linux-2.6.22` (CUBIC v2.1): β = 0.8 (819/1024; 717 since 2.6.25) and no HyStart
//! (added in 2.6.29). Other v2.1 differences are not modelled — see deviations.
//!
//! Deviations:
//! - K uses an exact integer cube root; Linux uses a table plus one Newton–Raphson step
//!   (≈0.2% error in K).
//! - HyStart's exit (ssthresh = cwnd) is found in `pkts_acked`, which sees the connection
//!   read-only here, and is applied at the start of `cong_avoid` on the same ACK (every ACK in
//!   slow start without loss advances snd_una, so `cong_avoid` follows it).
//! - HyStart's ACK-train threshold has no TSO/GRO cushion (`hystart_ack_delay` = 0): the
//!   threshold is delay_min/2. Linux ≥ 5.7 halves delay_min + min(1 ms, 4 · 64 KB / pacing rate)
//!   when unpaced (every flow has a pacing rate there), delay_min + that cushion when paced.
//! - `cwnd_event(TX_START)`'s epoch shift after an idle period is not modelled (tcplab's
//!   sources are never idle).
//! - For `linux-2.6.22`, v2.1's extra clamps are not modelled: cnt ≥ the value giving at most
//!   `max_increment` = 16 segments per 100 ms above K, cnt = 50 before the first loss, the
//!   delayed-ACK ratio scaling of cnt, and `max(cwnd, W_max)` on undo.

use super::helpers::{clock_us, cong_avoid_ai, jiffies, slow_start_leftover, usecs_to_jiffies, HZ};
use super::params::{Param, ParamValues};
use super::{AckSample, CaState, CongestionOps, TcpCcView};

/// Linux `BICTCP_BETA_SCALE`: β in 1/1024.
const BETA_SCALE: u32 = 1024;
/// Linux `BICTCP_HZ`: the cubic's time unit is 2^-10 s.
const BICTCP_HZ: u32 = 10;
/// Linux `HYSTART_ACK_TRAIN`, `HYSTART_DELAY`: `hystart_detect` bits.
const HYSTART_ACK_TRAIN: u32 = 0x1;
const HYSTART_DELAY: u32 = 0x2;
/// Linux `HYSTART_MIN_SAMPLES`: RTT samples per round before the delay test.
const HYSTART_MIN_SAMPLES: u8 = 8;
/// Linux `HYSTART_DELAY_MIN` / `_MAX`: bounds of the delay-increase threshold, µs.
const HYSTART_DELAY_MIN_US: u32 = 4_000;
const HYSTART_DELAY_MAX_US: u32 = 16_000;

pub const PARAMS: &[Param] = &[
    Param { name: "beta", default: 0.7, min: 0.1, max: 0.99, help: "window kept after a loss, as a fraction of cwnd (Linux beta = 717/1024)" },
    Param { name: "c", default: 0.4, min: 0.01, max: 10.0, help: "cubic scaling constant C, segments/s^3 (Linux bic_scale = 41 = C·1024/10)" },
    Param { name: "fast_convergence", default: 1.0, min: 0.0, max: 1.0, help: "remember only (1 + beta)/2 of W_max when it shrank (0 or 1)" },
    Param { name: "tcp_friendliness", default: 1.0, min: 0.0, max: 1.0, help: "grow at least as fast as Reno would (TCP-friendly region; 0 or 1)" },
    Param { name: "hystart", default: 1.0, min: 0.0, max: 1.0, help: "hybrid slow start: leave slow start before the first loss (0 or 1)" },
    Param { name: "hystart_detect", default: 3.0, min: 1.0, max: 3.0, help: "HyStart detectors: 1 ACK train, 2 delay increase, 3 both" },
    Param { name: "hystart_low_window", default: 16.0, min: 2.0, max: 1e6, help: "HyStart acts only from this cwnd, segments" },
    Param { name: "hystart_ack_delta_us", default: 2000.0, min: 1.0, max: 1e6, help: "ACKs closer than this form a train, us" },
    Param { name: "initial_ssthresh", default: 0.0, min: 0.0, max: 1e9, help: "initial slow-start threshold without HyStart, segments (0 = unlimited)" },
];

#[derive(Clone, Copy, Debug)]
struct CubicConfig {
    /// β in 1/1024.
    beta: u32,
    fast_convergence: bool,
    tcp_friendliness: bool,
    hystart: bool,
    hystart_detect: u32,
    /// Segments.
    hystart_low_window: u32,
    hystart_ack_delta_us: u32,
    /// Segments, 0 = none.
    initial_ssthresh: u32,
    /// Linux `cube_rtt_scale` = bic_scale·10: C in 1/1024 per (1/1024 s)³ after `>> 40`.
    cube_rtt_scale: u32,
    /// Linux `beta_scale` = 8(1024 + β)/3/(1024 − β): ACKs per Reno increase, in 1/8 of cwnd.
    beta_scale: u32,
    /// Linux `cube_factor` = 2^40/(bic_scale·10): (W_max − cwnd)·cube_factor = K³ in (1/1024 s)³.
    cube_factor: u64,
}

#[derive(Clone, Copy, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    /// ACKs (segments) per one-segment increase.
    cnt: u32,
    /// W_max, segments.
    last_max_cwnd: u32,
    /// cwnd when `cnt` was last computed, segments.
    last_cwnd: u32,
    /// When `cnt` was last computed, jiffies.
    last_time: u32,
    /// The cubic's plateau, segments.
    bic_origin_point: u32,
    /// K: time from the epoch start to the plateau, 1/1024 s.
    bic_k: u32,
    /// Minimum RTT, µs (0 = none yet).
    delay_min: u32,
    /// Start of the epoch, jiffies (0 = none).
    epoch_start: u32,
    /// Segments acknowledged in the epoch, for the Reno estimate.
    ack_cnt: u32,
    /// What Reno's cwnd would be now, segments.
    tcp_cwnd: u32,
    /// HyStart: RTT samples this round.
    sample_cnt: u8,
    /// HyStart has found the exit point.
    found: bool,
    /// HyStart's exit, not yet applied to ssthresh (see deviations).
    exit_pending: bool,
    /// HyStart: start of the round, µs.
    round_start: u32,
    /// HyStart: the round ends when snd_una passes this (segments).
    end_seq: u32,
    /// HyStart: last ACK of the current train, µs.
    last_ack: u32,
    /// HyStart: minimum RTT of this round, µs.
    curr_rtt: u32,
}

/// Floor of the cube root of `a`.
fn cube_root(a: u64) -> u32 {
    let cube = |x: u64| (x as u128).pow(3);
    let mut x = (a as f64).cbrt() as u64;
    while x > 0 && cube(x) > a as u128 {
        x -= 1;
    }
    while cube(x + 1) <= a as u128 {
        x += 1;
    }
    x as u32
}

impl Cubic {
    pub fn new(p: &ParamValues) -> Self {
        let beta = p.scaled("beta", BETA_SCALE as f64);
        // C = bic_scale·10/1024 (the 10 is 1/RTT for Linux's reference RTT of 100 ms).
        let bic_scale = p.scaled("c", BETA_SCALE as f64 / 10.0).max(1);
        let cfg = CubicConfig {
            beta,
            fast_convergence: p.flag("fast_convergence"),
            tcp_friendliness: p.flag("tcp_friendliness"),
            hystart: p.flag("hystart"),
            hystart_detect: p.get("hystart_detect") as u32,
            hystart_low_window: p.get("hystart_low_window") as u32,
            hystart_ack_delta_us: p.get("hystart_ack_delta_us") as u32,
            initial_ssthresh: p.get("initial_ssthresh") as u32,
            cube_rtt_scale: bic_scale * 10,
            beta_scale: 8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta),
            cube_factor: (1u64 << (10 + 3 * BICTCP_HZ)) / (bic_scale as u64 * 10),
        };
        Cubic::new_zeroed(cfg)
    }

    /// Linux `bictcp_reset`.
    fn reset(&mut self) {
        *self = Cubic::new_zeroed(self.cfg);
    }

    fn new_zeroed(cfg: CubicConfig) -> Cubic {
        Cubic {
            cfg,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: 0,
            ack_cnt: 0,
            tcp_cwnd: 0,
            sample_cnt: 0,
            found: false,
            exit_pending: false,
            round_start: 0,
            end_seq: 0,
            last_ack: 0,
            curr_rtt: 0,
        }
    }

    /// Linux `bictcp_hystart_reset`: a new round begins.
    fn hystart_reset(&mut self, tp: &TcpCcView) {
        let now = clock_us(tp.now_ns);
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = tp.snd_nxt;
        self.curr_rtt = u32::MAX;
        self.sample_cnt = 0;
    }

    /// Linux `bictcp_update`: `cnt` for window `cwnd` at jiffy `now`.
    fn update(&mut self, cwnd: u32, acked: u32, now: u32) {
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        if self.last_cwnd == cwnd && (now.wrapping_sub(self.last_time) as i32) <= (HZ / 32) as i32 {
            return;
        }
        // The cubic is evaluated at most once per jiffy; the Reno estimate on every ACK.
        if !(self.epoch_start != 0 && now == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = now;
            if self.epoch_start == 0 {
                self.epoch_start = now;
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.bic_k = 0;
                    self.bic_origin_point = cwnd;
                } else {
                    // RFC 9438 eq. 2: K = ∛((W_max − cwnd)/C), in 1/1024 s.
                    self.bic_k = cube_root(self.cfg.cube_factor * (self.last_max_cwnd - cwnd) as u64);
                    self.bic_origin_point = self.last_max_cwnd;
                }
            }
            // t = time since the epoch began + one minimum RTT (the window a RTT from now), 1/1024 s.
            let mut t = now.wrapping_sub(self.epoch_start) as i32 as i64 as u64;
            t += usecs_to_jiffies(self.delay_min) as u64;
            t = (t << BICTCP_HZ) / HZ as u64;
            let k = self.bic_k as u64;
            let offs = t.abs_diff(k);
            // RFC 9438 eq. 1: C·(t − K)³ in segments.
            let delta = ((self.cfg.cube_rtt_scale as u64).wrapping_mul(offs).wrapping_mul(offs).wrapping_mul(offs)
                >> (10 + 3 * BICTCP_HZ)) as u32;
            let target =
                if t < k { self.bic_origin_point.wrapping_sub(delta) } else { self.bic_origin_point.wrapping_add(delta) };
            // Reach the target in one RTT (cwnd ACKs).
            self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { 100 * cwnd };
            // Before the first loss the bandwidth is unknown: at least 5% per RTT.
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // RFC 9438 §4.3, as Linux: the window Reno would have, growing 3(1 − β)/(1 + β) per RTT.
        if self.cfg.tcp_friendliness {
            let per = (cwnd * self.cfg.beta_scale) >> 3; // ACKs per Reno increase
            while self.ack_cnt > per {
                self.ack_cnt -= per;
                self.tcp_cwnd += 1;
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                if self.cnt > max_cnt {
                    self.cnt = max_cnt;
                }
            }
        }
        // At most one segment per two acknowledged: ×1.5 per RTT.
        self.cnt = self.cnt.max(2);
    }

    /// Linux `hystart_update`: look for the end of slow start in RTT sample `delay` (µs).
    fn hystart_update(&mut self, tp: &TcpCcView, delay: u32) {
        if (tp.snd_una.wrapping_sub(self.end_seq) as i32) > 0 {
            self.hystart_reset(tp);
        }
        if tp.snd_cwnd < self.cfg.hystart_low_window {
            return;
        }
        if self.cfg.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now = clock_us(tp.now_ns);
            // ACKs arriving back to back form a train; a train lasting over delay_min/2 means
            // the window already fills the pipe.
            if (now.wrapping_sub(self.last_ack) as i32) <= self.cfg.hystart_ack_delta_us as i32 {
                self.last_ack = now;
                let threshold = self.delay_min >> 1;
                if (now.wrapping_sub(self.round_start) as i32) > threshold as i32 {
                    self.found = true;
                }
            }
        }
        if self.cfg.hystart_detect & HYSTART_DELAY != 0 {
            // The round's minimum RTT over at least 8 samples, against delay_min plus
            // clamp(delay_min/8, 4 ms, 16 ms).
            self.curr_rtt = self.curr_rtt.min(delay);
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh = (self.delay_min >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
                if self.curr_rtt > self.delay_min + thresh {
                    self.found = true;
                }
            }
        }
        if self.found {
            self.exit_pending = true;
        }
    }
}

impl CongestionOps for Cubic {
    fn init(&mut self, tp: &mut TcpCcView) {
        self.reset();
        if self.cfg.hystart {
            self.hystart_reset(tp);
        } else if self.cfg.initial_ssthresh > 0 {
            tp.snd_ssthresh = self.cfg.initial_ssthresh;
        }
    }

    fn ssthresh(&mut self, tp: &TcpCcView) -> u32 {
        let cwnd = tp.snd_cwnd;
        self.epoch_start = 0;
        self.exit_pending = false;
        // RFC 9438 §4.7 fast convergence.
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.cfg.fast_convergence {
            cwnd * (BETA_SCALE + self.cfg.beta) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        // RFC 9438 §4.6: ssthresh = β·cwnd.
        (cwnd * self.cfg.beta / BETA_SCALE).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut TcpCcView, _ack: u32, acked: u32) {
        if self.exit_pending {
            // HyStart found the exit on this ACK (Linux sets it in `hystart_update`).
            self.exit_pending = false;
            if tp.in_slow_start() {
                tp.snd_ssthresh = tp.snd_cwnd;
            }
        }
        let Some(acked) = slow_start_leftover(tp, acked) else { return };
        self.update(tp.snd_cwnd, acked, jiffies(tp.now_ns));
        cong_avoid_ai(tp, self.cnt, acked);
    }

    fn set_state(&mut self, tp: &mut TcpCcView, new_state: CaState) {
        if new_state == CaState::Loss {
            self.reset();
            self.hystart_reset(tp);
        }
    }

    fn pkts_acked(&mut self, tp: &mut TcpCcView, sample: &AckSample) {
        let Some(rtt_ns) = sample.rtt_ns else { return };
        // Discard delay samples right after a loss (the queue is still draining).
        if self.epoch_start != 0 && (jiffies(tp.now_ns).wrapping_sub(self.epoch_start) as i32) < HZ as i32 {
            return;
        }
        let delay = ((rtt_ns / 1_000) as u32).max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if !self.found && tp.in_slow_start() && self.cfg.hystart {
            self.hystart_update(tp, delay);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    const MS: u64 = 1_000_000;

    fn cubic(profile: &[(&'static str, f64)]) -> Cubic {
        Cubic::new(&ParamValues::resolve(PARAMS, profile, &BTreeMap::new(), "t").unwrap())
    }

    #[test]
    fn fixed_point_constants_match_linux() {
        let c = cubic(&[]);
        // beta 0.7 → 717; bic_scale 0.4·102.4 = 40.96 → 41; cube_rtt_scale 410;
        // beta_scale = 8·1741/3/307 = 4642/307 = 15; cube_factor = 2^40/410 = 2681735677.
        assert_eq!((c.cfg.beta, c.cfg.cube_rtt_scale, c.cfg.beta_scale, c.cfg.cube_factor), (717, 410, 15, 2_681_735_677));
        let old = cubic(&[("beta", 0.8), ("hystart", 0.0)]);
        assert_eq!((old.cfg.beta, old.cfg.hystart), (819, false));
        assert_eq!(cube_root(1000), 10);
        assert_eq!(cube_root(999), 9);
        assert_eq!(cube_root(u64::MAX), 2_642_245);
    }

    #[test]
    fn loss_sets_beta_and_w_max_with_fast_convergence() {
        let mut c = cubic(&[]);
        // 1000·717/1024 = 700 (700.2); W_max = 1000.
        assert_eq!(c.ssthresh(&TcpCcView::new(1000, 1448)), 700);
        assert_eq!(c.last_max_cwnd, 1000);
        // A loss below W_max: W_max = 900·(1024 + 717)/2048 = 765.
        assert_eq!(c.ssthresh(&TcpCcView::new(900, 1448)), 630);
        assert_eq!(c.last_max_cwnd, 765);
    }

    /// Drive `c` through `secs` seconds of congestion avoidance at RTT `rtt_ms`: every ms the
    /// ACKs for cwnd/rtt_ms segments (the ACK clock of a full window per RTT), one segment
    /// each. Returns cwnd at each whole second.
    fn run_ack_clock(c: &mut Cubic, tp: &mut TcpCcView, start_ns: u64, secs: u64, rtt_ms: u64) -> Vec<u32> {
        let mut owed = 0u64; // segments to acknowledge, in 1/rtt_ms
        let mut out = vec![];
        for ms in 1..=secs * 1000 {
            tp.now_ns = start_ns + ms * MS;
            owed += tp.snd_cwnd as u64;
            while owed >= rtt_ms {
                owed -= rtt_ms;
                c.cong_avoid(tp, 0, 1);
            }
            if ms % 1000 == 0 {
                out.push(tp.snd_cwnd);
            }
        }
        out
    }

    #[test]
    fn window_follows_the_cubic_after_a_loss() {
        let mut c = cubic(&[]);
        let mut tp = TcpCcView::new(1000, 1448);
        tp.is_cwnd_limited = true;
        // delay_min = 100 ms from an RTT sample before the loss.
        c.pkts_acked(&mut tp, &AckSample { pkts_acked: 1, rtt_ns: Some(100 * MS), in_flight: 1000 });
        tp.now_ns = 10_000 * MS;
        tp.snd_ssthresh = c.ssthresh(&tp);
        tp.snd_cwnd = tp.snd_ssthresh; // 700 after recovery
        let cwnd = run_ack_clock(&mut c, &mut tp, 10_000 * MS, 20, 100);
        // RFC 9438 eq. 1-2 with Linux's constants: C = 410/1024 = 0.400390625 segments/s³,
        // W_max = 1000, cwnd after the cut 700, so K = ∛(300/C) = 9.0816 s. Linux evaluates
        // W one minimum RTT ahead (t + 0.1 s) and sets cnt to reach it within one RTT, so cwnd
        // at time t is W(t) to within one segment.
        let cc: f64 = 410.0 / 1024.0;
        let k = (300.0 / cc).cbrt();
        for (i, &w) in cwnd.iter().enumerate() {
            let t = (i + 1) as f64;
            let model = cc * (t - k).powi(3) + 1000.0;
            assert!((w as f64 - model).abs() <= 1.0, "t = {t} s: cwnd {w} vs C(t − K)³ + W_max = {model:.2}");
        }
    }

    /// cwnd one and two seconds after a loss at W_max = 20 on a 10 ms path.
    fn small_window_after_loss(friendly: bool) -> Vec<u32> {
        let mut c = cubic(&[("tcp_friendliness", if friendly { 1.0 } else { 0.0 })]);
        let mut tp = TcpCcView::new(20, 1448);
        tp.is_cwnd_limited = true;
        c.pkts_acked(&mut tp, &AckSample { pkts_acked: 1, rtt_ns: Some(10 * MS), in_flight: 20 });
        tp.now_ns = 10_000 * MS;
        tp.snd_ssthresh = c.ssthresh(&tp);
        assert_eq!(tp.snd_ssthresh, 14); // 20·717/1024 = 14.0
        tp.snd_cwnd = 14;
        run_ack_clock(&mut c, &mut tp, 10_000 * MS, 2, 10)
    }

    #[test]
    fn tcp_friendly_region_grows_at_renos_pace_on_short_paths() {
        // W_max 20, cwnd 14: K = ∛(6/C) = 2.47 s, so for two seconds the cubic stays below
        // W_max (W(1 s) = 20 − C·(2.47 − 1.01)³ = 18.8). Reno with β = 0.7 gains
        // 3(1 − β)/(1 + β) = 8/15 segment per RTT (Linux: one per cwnd·beta_scale/8 =
        // cwnd·15/8 ACKs): on a 10 ms path 100 RTTs per second, so 14 + 53.3 = 67 after 1 s
        // and 67 + 53.3 = 121 after 2 s. cwnd follows the larger of the two, 2 segments above
        // to 4 below it: cwnd lags the estimate by up to one segment, each RTT's ACKs count at
        // the cwnd they arrive at, and `cnt` is recomputed at most once per jiffy (4 ms at
        // HZ = 250, 0.4 RTT here).
        let cwnd = small_window_after_loss(true);
        assert!((63..=69).contains(&cwnd[0]) && (117..=123).contains(&cwnd[1]), "{cwnd:?}");
        // Without the TCP-friendly region it is the cubic: 19 after 1 s, 20 after 2 s (W(2.01) =
        // 20 − C·0.46³ = 19.96 → the target is 19 or 20 segments).
        let cwnd = small_window_after_loss(false);
        assert!((18..=19).contains(&cwnd[0]) && (19..=20).contains(&cwnd[1]), "{cwnd:?}");
    }

    #[test]
    fn hystart_leaves_slow_start_on_a_delay_increase() {
        let mut c = cubic(&[]);
        let mut tp = TcpCcView::new(10, 1448);
        tp.is_cwnd_limited = true;
        c.init(&mut tp);
        // Round 1: snd_nxt = 32, RTT 100 ms → delay_min = 100 000 µs. ACKs 2 ms apart (no
        // train). Threshold: clamp(100 000/8 = 12 500 µs, 4 000, 16 000) = 12 500 µs.
        tp.snd_cwnd = 32;
        let ack = |c: &mut Cubic, tp: &mut TcpCcView, una: u32, t_us: u64, rtt_us: u64| {
            tp.now_ns = t_us * 1_000;
            tp.snd_una = una;
            c.pkts_acked(tp, &AckSample { pkts_acked: 1, rtt_ns: Some(rtt_us * 1_000), in_flight: tp.snd_cwnd });
            c.cong_avoid(tp, una, 1);
        };
        tp.snd_nxt = 32;
        for i in 1..=16u32 {
            ack(&mut c, &mut tp, i, 100_000 + 3_000 * i as u64, 100_000);
        }
        assert_eq!(c.delay_min, 100_000);
        assert!(tp.in_slow_start() && !c.found);
        // Round 2 (una passes end_seq = 32): RTTs 112 ms — below 100 + 12.5 — do not trigger…
        tp.snd_nxt = 96;
        for i in 33..=45u32 {
            ack(&mut c, &mut tp, i, 300_000 + 3_000 * i as u64, 112_000);
        }
        assert!(!c.found, "112 ms is within the threshold");
        // …round 3 at 113 ms does, on its 9th sample (8 samples first, then the test).
        tp.snd_nxt = 200;
        for (n, i) in (97..=105u32).enumerate() {
            assert!(!c.found, "found after {n} samples");
            ack(&mut c, &mut tp, i, 600_000 + 3_000 * i as u64, 113_000);
        }
        assert!(c.found);
        // ssthresh = cwnd: slow start is over.
        assert_eq!(tp.snd_ssthresh, tp.snd_cwnd);
        assert!(!tp.in_slow_start());
    }

    #[test]
    fn hystart_ack_train_exits_when_the_train_spans_half_the_min_rtt() {
        let mut c = cubic(&[("hystart_detect", 1.0)]);
        let mut tp = TcpCcView::new(20, 1448);
        tp.is_cwnd_limited = true;
        c.init(&mut tp);
        tp.snd_nxt = 200;
        // delay_min 40 ms: threshold 20 ms. ACKs every 1 ms (< 2 ms: one train) from the round
        // start: the ACK at 21 ms after it is past the threshold.
        let t0 = 1_000_000u64; // µs
        tp.now_ns = t0 * 1_000;
        tp.snd_una = 0;
        c.hystart_reset(&tp);
        for i in 1..=21u64 {
            tp.now_ns = (t0 + 1_000 * i) * 1_000;
            tp.snd_una = i as u32;
            c.pkts_acked(&mut tp, &AckSample { pkts_acked: 1, rtt_ns: Some(40 * MS), in_flight: 20 });
            assert_eq!(c.found, i == 21, "ACK {i}");
        }
    }

    #[test]
    fn the_linux_2_6_22_profile_reaches_cubic() {
        let super::super::Cc::Cubic(c) = super::super::Cc::new("cubic", "linux-2.6.22", &BTreeMap::new(), "f").unwrap() else {
            panic!("cubic built something else")
        };
        assert_eq!((c.cfg.beta, c.cfg.hystart), (819, false));
    }

    #[test]
    fn linux_2_6_22_profile_has_no_hystart() {
        let mut c = cubic(&[("beta", 0.8), ("hystart", 0.0)]);
        let mut tp = TcpCcView::new(32, 1448);
        c.init(&mut tp);
        c.pkts_acked(&mut tp, &AckSample { pkts_acked: 1, rtt_ns: Some(100 * MS), in_flight: 32 });
        tp.snd_una = 100;
        c.pkts_acked(&mut tp, &AckSample { pkts_acked: 1, rtt_ns: Some(500 * MS), in_flight: 32 });
        assert!(!c.found && !c.exit_pending);
        // 1000·819/1024 = 799.
        assert_eq!(c.ssthresh(&TcpCcView::new(1000, 1448)), 799);
    }
}
