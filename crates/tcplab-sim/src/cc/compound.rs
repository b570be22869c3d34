//! Compound TCP (CTCP): a Reno window plus a scalable delay-based window.
//!
//! K. Tan, J. Song, Q. Zhang, M. Sridharan, "A Compound TCP Approach for High-speed and Long
//! Distance Networks", IEEE INFOCOM 2006 (§3), with the γ auto-tuning of K. Tan, J. Song,
//! M. Sridharan, C.-Y. Ho, "CTCP-TUBE: Improving TCP-Friendliness over Low-Buffered Network
//! Links" (2008). Not in mainline Linux (Windows Vista/Server 2008 ship it); this file follows
//! Caltech's Linux module `tcp_compound.c` (L. Andrew, after A. Castellani and S. Hemminger,
//! <http://netlab.caltech.edu/lachlan/ctcp/>), the implementation paper 000 ran.
//!
//! The sending window is `win = min(cwnd + dwnd, awnd)` (§3.1): `cwnd` is Reno's loss-based
//! window, `dwnd` the delay-based one. Once per RTT, with `diff = win·(1 − baseRTT/RTT)` the
//! segments this flow keeps queued (Vegas' Expected − Actual, times baseRTT):
//!
//! ```text
//!   dwnd ← dwnd + (α·win^k − 1)⁺          diff <  γ   (the −1: cwnd grows by 1 per RTT itself)
//!   dwnd ← (dwnd − η·diff)⁺                diff ≥  γ
//!   dwnd ← (win·(1 − β) − cwnd/2)⁺         on loss (and cwnd ← cwnd/2)
//! ```
//!
//! How the sender sees it: the sender has one window, `snd_cwnd`, so — as in Caltech's module —
//! `snd_cwnd` holds the sum `cwnd + ⌊dwnd⌋` and this struct keeps the two components. Reno's
//! growth is applied to `snd_cwnd` (one segment per `snd_cwnd` segments acknowledged: the paper's
//! `cwnd += 1/(cwnd + dwnd)` per ACK), and the Reno component is what remains after `dwnd`. When
//! the sender changes `snd_cwnd` itself (fast recovery, PRR, a timeout), the next hook
//! reconciles: a reduction shrinks both components in proportion, an increase goes to `cwnd`.
//! On a loss, `ssthresh` returns the new sum `max(cwnd/2 + dwnd', 2)`, which the sender installs
//! when recovery ends.
//!
//! ```text
//!            slow start (dwnd = 0) ──cwnd ≥ ssthresh──► congestion avoidance (dwnd per RTT)
//!                 ▲                                          │ loss: cwnd/2, dwnd' as above
//!                 └──────────── RTO: dwnd = 0, cwnd = 1 ◄────┘
//! ```
//!
//! Units: windows in segments; `dwnd`, `diff` and `γ` in fixed point of 1/[`DWND_ONE`] segment;
//! α, β, η, λ in 1/[`PARAM_SCALE`]; RTTs in ns.
//!
//! Deviations (see `docs/algorithms/compound.md`): `dwnd` keeps fractions of a segment (Caltech
//! rounds each change to whole segments); `win^k` is evaluated in floating point once per RTT
//! (k is a parameter; Caltech computes `win/⁴√win` in integers); paced increments are spread per
//! segment acknowledged over one RTT (Caltech: per ACK over half an RTT); a new measurement round
//! starts from the current `snd_una` as well as `snd_nxt` when the connection returns to Open.

use super::params::{Param, ParamValues};
use super::{helpers, AckSample, CaEvent, CaState, CongestionOps, TcpCcView};
use crate::time::Nanos;

/// Fixed-point shift of `dwnd`, `diff` and `γ`: 1/1024 segment.
pub const DWND_SHIFT: u32 = 10;
/// One segment in `dwnd` units.
pub const DWND_ONE: u64 = 1 << DWND_SHIFT;
/// Scale of α, β, η and λ (like Linux's `BICTCP_BETA_SCALE`).
pub const PARAM_SCALE: u64 = 1024;
/// CTCP-TUBE: a γ sample is 3/4 of the backlog Reno alone would keep (`diff_reno`), as Caltech's
/// module (`g_sample = diff_reno * 3/4`).
const GAMMA_SAMPLE_NUM: u64 = 3;
const GAMMA_SAMPLE_DEN: u64 = 4;
/// Caltech: the delay estimate needs at least 3 RTT samples in a round (with only 1–2, all may
/// be delayed ACKs).
const MIN_RTT_SAMPLES: u32 = 3;

/// The parameters `tcplab variants compound` lists; the defaults are the INFOCOM paper's and
/// Caltech's module's (1.3).
pub const PARAMS: &[Param] = &[
    Param { name: "k", default: 0.75, min: 0.5, max: 1.0, help: "exponent k of dwnd's increase α·win^k per RTT (paper §3.2)" },
    Param { name: "alpha", default: 0.125, min: 0.01, max: 1.0, help: "α: factor of win^k by which dwnd grows per RTT" },
    Param { name: "beta", default: 0.5, min: 0.1, max: 0.9, help: "β: the window after a loss is win·(1 − β)" },
    Param { name: "eta", default: 1.0, min: 0.1, max: 4.0, help: "η: dwnd shrinks by η·diff per RTT when diff ≥ γ" },
    Param { name: "gamma", default: 30.0, min: 1.0, max: 1000.0, help: "γ, segments: backlog that signals early congestion (initial value when tuned)" },
    Param { name: "gamma_tuning", default: 1.0, min: 0.0, max: 1.0, help: "1: adapt γ to 3/4 of Reno's backlog at each loss (CTCP-TUBE); 0: fixed γ" },
    Param { name: "gamma_min", default: 5.0, min: 1.0, max: 1000.0, help: "γ tuning: smallest γ, segments" },
    Param { name: "gamma_max", default: 30.0, min: 1.0, max: 1000.0, help: "γ tuning: largest γ, segments" },
    Param { name: "lambda", default: 0.25, min: 0.01, max: 1.0, help: "γ tuning: weight of a new sample (γ += λ·(sample − γ))" },
    Param { name: "low_window", default: 38.0, min: 0.0, max: 100000.0, help: "dwnd is used only while the window is at least this many segments (Reno below)" },
    Param { name: "pace_dwnd", default: 1.0, min: 0.0, max: 1.0, help: "1: spread each RTT's dwnd increase over the next RTT; 0: add it at once" },
];

#[derive(Clone, Debug)]
pub struct Compound {
    // Parameters.
    k: f64,
    /// α, /PARAM_SCALE.
    alpha: u64,
    /// β, /PARAM_SCALE.
    beta: u64,
    /// η, /PARAM_SCALE.
    eta: u64,
    /// Initial γ, /DWND_ONE segments.
    gamma_init: u64,
    gamma_tuning: bool,
    gamma_min: u64,
    gamma_max: u64,
    /// λ, /PARAM_SCALE.
    lambda: u64,
    low_window: u32,
    pace_dwnd: bool,

    // State.
    /// Loss-based (Reno) component, segments.
    cwnd: u32,
    /// Delay-based component, /DWND_ONE segments.
    dwnd: u64,
    /// Early-congestion threshold γ, /DWND_ONE segments.
    gamma: u64,
    /// Smallest RTT ever seen: the propagation delay estimate, ns.
    base_rtt_ns: Nanos,
    /// Smallest RTT in the current round, ns.
    round_min_rtt_ns: Nanos,
    /// RTT samples in the current round.
    cnt_rtt: u32,
    /// The current round: segments [beg_snd_una, beg_snd_nxt) were in flight when it began.
    beg_snd_una: u32,
    beg_snd_nxt: u32,
    /// `cwnd` when the round began (for `diff_reno`).
    beg_cwnd: u32,
    /// The backlog Reno's window alone would keep (last round), /DWND_ONE; `None` until measured
    /// again after a γ update.
    diff_reno: Option<u64>,
    /// Paced increase still to add this round, and the step per acknowledged segment, /DWND_ONE.
    dwnd_left: u64,
    pace_step: u64,
    /// Components before the last reduction, for undo.
    prior_cwnd: u32,
    prior_dwnd: u64,
}

impl Compound {
    pub fn new(p: &ParamValues) -> Self {
        let fp = |name: &str| (p.get(name) * DWND_ONE as f64).round() as u64;
        let gamma_min = fp("gamma_min");
        Compound {
            k: p.get("k"),
            alpha: p.scaled("alpha", PARAM_SCALE as f64) as u64,
            beta: p.scaled("beta", PARAM_SCALE as f64) as u64,
            eta: p.scaled("eta", PARAM_SCALE as f64) as u64,
            gamma_init: fp("gamma"),
            gamma_tuning: p.flag("gamma_tuning"),
            gamma_min,
            gamma_max: fp("gamma_max").max(gamma_min),
            lambda: p.scaled("lambda", PARAM_SCALE as f64) as u64,
            low_window: p.get("low_window").round() as u32,
            pace_dwnd: p.flag("pace_dwnd"),
            cwnd: 0,
            dwnd: 0,
            gamma: fp("gamma"),
            base_rtt_ns: Nanos::MAX,
            round_min_rtt_ns: Nanos::MAX,
            cnt_rtt: 0,
            beg_snd_una: 0,
            beg_snd_nxt: 0,
            beg_cwnd: 0,
            diff_reno: None,
            dwnd_left: 0,
            pace_step: 0,
            prior_cwnd: 0,
            prior_dwnd: 0,
        }
    }

    /// The defaults.
    pub fn with_defaults() -> Self {
        Self::new(&ParamValues::resolve(PARAMS, &[], &Default::default(), "compound").expect("defaults in range"))
    }

    /// Reno component, segments.
    pub fn cwnd(&self) -> u32 {
        self.cwnd
    }

    /// Delay-based component, segments (fractional).
    pub fn dwnd(&self) -> f64 {
        self.dwnd as f64 / DWND_ONE as f64
    }

    /// γ, segments.
    pub fn gamma(&self) -> f64 {
        self.gamma as f64 / DWND_ONE as f64
    }

    #[inline]
    fn dwnd_segs(&self) -> u32 {
        (self.dwnd >> DWND_SHIFT) as u32
    }

    /// Caltech `ctcp_enable`: start a new measurement round with fresh samples.
    fn start_round(&mut self, tp: &TcpCcView) {
        self.beg_snd_una = tp.snd_una;
        self.beg_snd_nxt = tp.snd_nxt;
        self.beg_cwnd = self.cwnd;
        self.cnt_rtt = 0;
        self.round_min_rtt_ns = Nanos::MAX;
        self.diff_reno = None;
        self.dwnd_left = 0;
    }

    /// Take in changes the sender made to `snd_cwnd` (Caltech: "update ctcp->cwnd to reflect
    /// external decreases in snd_cwnd"): a reduction shrinks cwnd and dwnd in proportion, an
    /// increase goes to the Reno component.
    fn sync(&mut self, tp: &TcpCcView) {
        let total = self.cwnd as u64 + (self.dwnd >> DWND_SHIFT);
        let snd_cwnd = tp.snd_cwnd as u64;
        if snd_cwnd < total {
            self.dwnd = self.dwnd * snd_cwnd / total;
            self.dwnd_left = 0;
        }
        if snd_cwnd != total {
            self.cwnd = tp.snd_cwnd - self.dwnd_segs();
        }
    }

    /// The once-per-RTT dwnd update (paper §3.2) for a round in which `old_wnd` segments were
    /// sent, `rtt_ns` the smallest RTT seen in it, while `tp.snd_cwnd` is the current window.
    fn update_dwnd(&mut self, tp: &TcpCcView, old_wnd: u32, old_cwnd: u32, rtt_ns: Nanos) {
        let base = self.base_rtt_ns as u128;
        let rtt = rtt_ns.max(self.base_rtt_ns) as u128;
        // diff = win·(1 − baseRTT/RTT) = (Expected − Actual)·baseRTT, segments.
        let backlog = |w: u32| (((w as u128) << DWND_SHIFT) * (rtt - base) / rtt) as u64;
        let diff = backlog(old_wnd);
        // CTCP-TUBE: what Reno's window alone would keep queued.
        self.diff_reno = Some(backlog(old_cwnd));
        if diff < self.gamma {
            // (α·win^k − 1)⁺, /DWND_ONE.
            let grow = (self.alpha as f64 * (old_wnd as f64).powf(self.k) * (DWND_ONE / PARAM_SCALE) as f64) as u64;
            let inc = grow.saturating_sub(DWND_ONE);
            if self.pace_dwnd && inc > 0 {
                self.dwnd_left = inc;
                self.pace_step = inc.div_ceil(tp.snd_cwnd.max(1) as u64);
            } else {
                self.dwnd += inc;
            }
        } else {
            // (dwnd − η·diff)⁺
            self.dwnd = self.dwnd.saturating_sub(self.eta * diff / PARAM_SCALE);
            self.dwnd_left = 0;
        }
    }

    /// CTCP-TUBE γ tuning at a loss: γ += λ·(¾·diff_reno − γ), clipped to [γ_min, γ_max].
    fn tune_gamma(&mut self) {
        if !self.gamma_tuning {
            return;
        }
        if let Some(diff_reno) = self.diff_reno.take() {
            let sample = (diff_reno * GAMMA_SAMPLE_NUM / GAMMA_SAMPLE_DEN) as i64;
            let g = self.gamma as i64;
            let g = g + (sample - g) * self.lambda as i64 / PARAM_SCALE as i64;
            self.gamma = (g.max(0) as u64).clamp(self.gamma_min, self.gamma_max);
        }
    }
}

impl CongestionOps for Compound {
    fn init(&mut self, tp: &mut TcpCcView) {
        self.cwnd = tp.snd_cwnd;
        self.dwnd = 0;
        self.gamma = self.gamma_init;
        self.base_rtt_ns = Nanos::MAX;
        self.start_round(tp);
    }

    /// Paper §3.2 on loss: cwnd ← cwnd/2, dwnd ← (win·(1 − β) − cwnd/2)⁺; returns the new
    /// window, cwnd + dwnd (at least 2, like Reno).
    fn ssthresh(&mut self, tp: &TcpCcView) -> u32 {
        self.sync(tp);
        self.tune_gamma();
        self.prior_cwnd = self.cwnd;
        self.prior_dwnd = self.dwnd;
        let win = (tp.snd_cwnd as u64) << DWND_SHIFT;
        let half_cwnd = ((self.cwnd as u64) << DWND_SHIFT) / 2;
        self.dwnd = (win * (PARAM_SCALE - self.beta) / PARAM_SCALE).saturating_sub(half_cwnd);
        self.dwnd_left = 0;
        self.cwnd = (self.cwnd >> 1).max(2u32.saturating_sub(self.dwnd_segs()));
        self.cwnd + self.dwnd_segs()
    }

    fn cong_avoid(&mut self, tp: &mut TcpCcView, ack: u32, mut acked: u32) {
        self.sync(tp);
        if !tp.is_cwnd_limited {
            return;
        }
        // Reno's component: slow start, then one segment per window of ACKs (paper §3.1:
        // cwnd += 1/(cwnd + dwnd) per ACK). dwnd is zero in slow start.
        if tp.in_slow_start() {
            self.dwnd = 0;
            self.dwnd_left = 0;
            tp.snd_cwnd = self.cwnd;
            acked = helpers::slow_start(tp, acked);
        }
        if acked > 0 {
            helpers::cong_avoid_ai(tp, tp.snd_cwnd, acked);
        }
        self.cwnd = tp.snd_cwnd - self.dwnd_segs();

        // Paced part of the last round's dwnd increase.
        if self.dwnd_left > 0 {
            let step = self.dwnd_left.min(self.pace_step * acked.max(1) as u64);
            self.dwnd += step;
            self.dwnd_left -= step;
        }

        // Once per RTT: the whole of the last round is acknowledged.
        if ack >= self.beg_snd_nxt {
            self.dwnd += self.dwnd_left;
            self.dwnd_left = 0;
            let old_wnd = self.beg_snd_nxt - self.beg_snd_una;
            let old_cwnd = self.beg_cwnd;
            let (cnt, rtt) = (self.cnt_rtt, self.round_min_rtt_ns);
            self.beg_snd_una = self.beg_snd_nxt;
            self.beg_snd_nxt = tp.snd_nxt;
            self.beg_cwnd = self.cwnd;
            self.cnt_rtt = 0;
            self.round_min_rtt_ns = Nanos::MAX;
            if tp.snd_cwnd < self.low_window || tp.in_slow_start() {
                // Small windows are Reno's (Caltech `LOW_WINDOW`).
                self.dwnd = 0;
            } else if cnt >= MIN_RTT_SAMPLES && old_wnd > 0 && self.base_rtt_ns < Nanos::MAX {
                self.update_dwnd(tp, old_wnd, old_cwnd, rtt);
            }
        }
        tp.snd_cwnd = (self.cwnd + self.dwnd_segs()).min(tp.snd_cwnd_clamp);
    }

    fn undo_cwnd(&mut self, tp: &TcpCcView) -> u32 {
        self.cwnd = self.prior_cwnd.max(1);
        self.dwnd = self.prior_dwnd;
        tp.snd_cwnd.max(self.cwnd + self.dwnd_segs())
    }

    /// Caltech `tcp_compound_state`: returning to Open starts a fresh measurement round.
    fn set_state(&mut self, tp: &mut TcpCcView, new_state: CaState) {
        if new_state == CaState::Open {
            self.start_round(tp);
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpCcView, ev: CaEvent) {
        match ev {
            // Caltech: restart as at connection start, but keep baseRTT.
            CaEvent::TxStart | CaEvent::CwndRestart => {
                self.cwnd = tp.snd_cwnd;
                self.dwnd = 0;
                self.gamma = self.gamma_init;
                self.start_round(tp);
            }
            // A timeout: the sender slow-starts from one segment with Reno's window alone.
            CaEvent::Loss => {
                self.cwnd = 1;
                self.dwnd = 0;
                self.dwnd_left = 0;
            }
            CaEvent::CompleteCwr => {}
        }
    }

    /// RTT samples: baseRTT is the smallest ever; the round keeps its smallest (filtering out
    /// delayed ACKs, as Vegas does).
    fn pkts_acked(&mut self, _tp: &mut TcpCcView, sample: &AckSample) {
        if let Some(rtt) = sample.rtt_ns {
            let rtt = rtt.max(1);
            self.base_rtt_ns = self.base_rtt_ns.min(rtt);
            self.round_min_rtt_ns = self.round_min_rtt_ns.min(rtt);
            self.cnt_rtt += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    const MS: Nanos = 1_000_000;

    fn with(params: &[(&str, f64)]) -> Compound {
        let given: BTreeMap<String, f64> = params.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        Compound::new(&ParamValues::resolve(PARAMS, &[], &given, "t").unwrap())
    }

    /// A connection in congestion avoidance with the window `cwnd + dwnd` and one round of
    /// `win` segments [0, win) in flight.
    fn steady(c: &mut Compound, cwnd: u32, dwnd_segs: u32) -> TcpCcView {
        let mut tp = TcpCcView::new(cwnd, 1448);
        c.init(&mut tp);
        c.cwnd = cwnd;
        c.dwnd = (dwnd_segs as u64) << DWND_SHIFT;
        tp.snd_cwnd = cwnd + dwnd_segs;
        tp.snd_ssthresh = 2;
        tp.is_cwnd_limited = true;
        tp.snd_una = 0;
        tp.snd_nxt = tp.snd_cwnd;
        c.start_round(&tp);
        tp
    }

    /// ACK the round one segment per ACK, each with an RTT sample of `rtt`; the base RTT is 100 ms.
    fn ack_round(c: &mut Compound, tp: &mut TcpCcView, rtt: Nanos) {
        c.base_rtt_ns = 100 * MS;
        let (from, to) = (tp.snd_una, tp.snd_nxt);
        for seq in from..to {
            c.pkts_acked(tp, &AckSample { pkts_acked: 1, rtt_ns: Some(rtt), in_flight: tp.snd_cwnd });
            tp.snd_una = seq + 1;
            tp.snd_nxt = tp.snd_una + tp.snd_cwnd;
            c.cong_avoid(tp, seq + 1, 1);
        }
    }

    #[test]
    fn dwnd_grows_by_alpha_win_to_the_k_minus_one_when_the_queue_is_short() {
        // No pacing: the increase lands at the round's end.
        let mut c = with(&[("pace_dwnd", 0.0)]);
        let mut tp = steady(&mut c, 60, 40); // win = 100
        // RTT 101 ms over a base of 100 ms: diff = 100·(1 − 100/101) = 0.990 segments < γ = 30.
        ack_round(&mut c, &mut tp, 101 * MS);
        // α·win^k − 1 = 100^0.75/8 − 1 = 31.6228/8 − 1 = 2.95285 segments
        //   = ⌊128·31.6228⌋ − 1024 = 4047 − 1024 = 3023 /1024.
        assert_eq!(c.dwnd, (40 << DWND_SHIFT) + 3023);
        // Reno's part grew by one segment over the window of 100 ACKs (+1 per win ACKed).
        assert_eq!(c.cwnd, 61);
        assert_eq!(tp.snd_cwnd, 61 + 42);
    }

    #[test]
    fn paced_increase_adds_the_same_over_the_next_round() {
        let mut c = with(&[]);
        let mut tp = steady(&mut c, 60, 40);
        ack_round(&mut c, &mut tp, 101 * MS);
        assert_eq!((c.dwnd, c.dwnd_left), (40 << DWND_SHIFT, 3023));
        // Step ⌈3023/101⌉ = 30 per segment ACKed: half a round later 50·30 = 1500 added.
        assert_eq!(c.pace_step, 30);
        let start = tp.snd_una;
        for seq in start..start + 50 {
            tp.snd_una = seq + 1;
            c.cong_avoid(&mut tp, seq + 1, 1);
        }
        assert_eq!(c.dwnd, (40 << DWND_SHIFT) + 1500);
    }

    #[test]
    fn dwnd_shrinks_by_eta_diff_when_the_queue_reaches_gamma() {
        let mut c = with(&[("gamma_tuning", 0.0)]);
        let mut tp = steady(&mut c, 60, 40); // win = 100
        // RTT 150 ms: diff = 100·(1 − 100/150) = 33.33 segments ≥ γ = 30 → dwnd = 40 − 33.33.
        ack_round(&mut c, &mut tp, 150 * MS);
        // diff = ⌊102400·50/150⌋ = 34133 /1024; dwnd = 40960 − 34133 = 6827 /1024 (6.667).
        assert_eq!(c.dwnd, 6827);
        assert_eq!(tp.snd_cwnd, 61 + 6);
        // η = 2 empties it: (40 − 66.67)⁺ = 0.
        let mut c = with(&[("eta", 2.0)]);
        let mut tp = steady(&mut c, 60, 40);
        ack_round(&mut c, &mut tp, 150 * MS);
        assert_eq!(c.dwnd, 0);
    }

    #[test]
    fn loss_leaves_win_times_one_minus_beta() {
        let mut c = with(&[]);
        let tp = steady(&mut c, 60, 40); // win = 100
        // cwnd → 30; dwnd → (100·(1 − ½) − 60/2)⁺ = 20; the new window 50 = ssthresh.
        assert_eq!(c.ssthresh(&tp), 50);
        assert_eq!((c.cwnd, c.dwnd), (30, 20 << DWND_SHIFT));
        // β = 0.8: (100·0.2 − 30)⁺ = 0, the window is Reno's cwnd/2 = 30.
        let mut c = with(&[("beta", 0.8)]);
        let tp = steady(&mut c, 60, 40);
        assert_eq!(c.ssthresh(&tp), 30);
        assert_eq!((c.cwnd, c.dwnd), (30, 0));
        // Odd cwnd: cwnd = 61, dwnd = 40, win = 101: dwnd = 50.5 − 30.5 = 20, cwnd = 30.
        let mut c = with(&[]);
        let tp = steady(&mut c, 61, 40);
        assert_eq!(c.ssthresh(&tp), 50);
        // The sender ends recovery with snd_cwnd = ssthresh: nothing to reconcile.
        let mut tp2 = tp;
        tp2.snd_cwnd = 50;
        tp2.snd_ssthresh = 50;
        c.sync(&tp2);
        assert_eq!((c.cwnd, c.dwnd), (30, 20 << DWND_SHIFT));
    }

    #[test]
    fn a_timeout_falls_back_to_reno_from_one_segment() {
        let mut c = with(&[]);
        let mut tp = steady(&mut c, 60, 40);
        tp.snd_ssthresh = c.ssthresh(&tp);
        c.cwnd_event(&mut tp, CaEvent::Loss);
        tp.snd_cwnd = 1;
        assert_eq!((c.cwnd, c.dwnd), (1, 0));
        // Slow start: one ACK → 2 segments, all Reno.
        c.cong_avoid(&mut tp, 1, 1);
        assert_eq!((tp.snd_cwnd, c.cwnd, c.dwnd), (2, 2, 0));
    }

    #[test]
    fn sender_reductions_shrink_both_components_in_proportion() {
        let mut c = with(&[]);
        let mut tp = steady(&mut c, 60, 40);
        tp.snd_cwnd = 50; // e.g. PRR left the window at 50 of 100
        c.sync(&tp);
        assert_eq!((c.cwnd, c.dwnd), (30, 20 << DWND_SHIFT));
        tp.snd_cwnd = 55; // growth the sender made goes to Reno's part
        c.sync(&tp);
        assert_eq!((c.cwnd, c.dwnd), (35, 20 << DWND_SHIFT));
    }

    #[test]
    fn gamma_tracks_three_quarters_of_renos_backlog() {
        let mut c = with(&[("pace_dwnd", 0.0)]);
        let mut tp = steady(&mut c, 60, 40);
        // RTT 125 ms: Reno's 60 segments keep 60·(1 − 100/125) = 12 queued; diff (win 100) = 20 < 30.
        ack_round(&mut c, &mut tp, 125 * MS);
        assert_eq!(c.diff_reno, Some(12 << DWND_SHIFT));
        c.ssthresh(&tp);
        // γ = 30 + ¼·(¾·12 − 30) = 30 − 5.25 = 24.75.
        assert_eq!(c.gamma, 24 * DWND_ONE + 768);
        assert_eq!(c.diff_reno, None);
        // A tiny backlog drives γ to its floor of 5, not below.
        c.gamma = 6 * DWND_ONE;
        c.diff_reno = Some(0);
        c.ssthresh(&tp);
        assert_eq!(c.gamma, 5 * DWND_ONE);
        // Tuning off: γ stays.
        let mut c = with(&[("gamma_tuning", 0.0)]);
        c.diff_reno = Some(0);
        c.ssthresh(&tp);
        assert_eq!(c.gamma, 30 * DWND_ONE);
    }

    #[test]
    fn small_windows_and_slow_start_are_reno_only() {
        let mut c = with(&[("pace_dwnd", 0.0)]);
        let mut tp = steady(&mut c, 20, 10); // win 30 < low_window 38
        ack_round(&mut c, &mut tp, 101 * MS);
        assert_eq!(c.dwnd, 0);
        let mut c = with(&[]);
        let mut tp = steady(&mut c, 60, 40);
        tp.snd_ssthresh = 1000;
        c.cong_avoid(&mut tp, 1, 1);
        assert_eq!((c.dwnd, tp.snd_cwnd), (0, 61));
    }

    #[test]
    fn no_growth_when_not_cwnd_limited_and_few_samples_change_nothing() {
        let mut c = with(&[("pace_dwnd", 0.0)]);
        let mut tp = steady(&mut c, 60, 40);
        tp.is_cwnd_limited = false;
        c.cong_avoid(&mut tp, 100, 100);
        assert_eq!((tp.snd_cwnd, c.dwnd), (100, 40 << DWND_SHIFT));
        // Two RTT samples in a round (delayed ACKs) are not enough for a dwnd update.
        tp.is_cwnd_limited = true;
        c.base_rtt_ns = 100 * MS;
        for _ in 0..2 {
            c.pkts_acked(&mut tp, &AckSample { pkts_acked: 50, rtt_ns: Some(101 * MS), in_flight: 100 });
        }
        c.cong_avoid(&mut tp, 100, 100);
        assert_eq!(c.dwnd, 40 << DWND_SHIFT);
    }
}
