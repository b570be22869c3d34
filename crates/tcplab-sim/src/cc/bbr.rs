//! BBR v1 ("Bottleneck Bandwidth and Round-trip propagation time") congestion control.
//!
//! Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR: Congestion-Based Congestion Control",
//! ACM Queue 14(5), 2016; draft-cardwell-iccrg-bbr-congestion-control-00 (2017). Mirrors Linux
//! `net/ipv4/tcp_bbr.c` (v1, as in Linux 5.x/6.x, with the ACK-aggregation allowance and the
//! long-term bandwidth sampling for policers), function for function and with its fixed-point
//! scales: gains in units of 1/256 (`BBR_UNIT`), bandwidth in segments per µs << 24 (`BW_UNIT`).
//!
//! BBR models the path as a bottleneck rate `btl_bw` (windowed max of delivery-rate samples over
//! 10 rounds) and a propagation delay `min_rtt` (min RTT over 10 s). It paces at
//! `pacing_gain · btl_bw` and caps in-flight at `cwnd_gain · btl_bw · min_rtt` (BDP):
//!
//! ```text
//!                 start
//!                   │
//!                   ▼
//!   ┌────────── STARTUP ─────────┐  pacing and cwnd gain 2/ln2 ≈ 2.89: the rate doubles per round
//!   │               │            │
//!   │               │ full pipe: btl_bw grew < 25% in 3 non-app-limited rounds
//!   │               ▼            │
//!   │  ┌─────────  DRAIN ─────── │ ┐  pacing gain 1/2.89 until in-flight ≤ BDP
//!   │  │            │            │ │
//!   │  │            │ in-flight ≤ BDP
//!   │  │            ▼            │ │
//!   │  │  ┌──►  PROBE_BW  ◄───┐  │ │  pacing gain cycles 5/4, 3/4, 1, 1, 1, 1, 1, 1 (one
//!   │  │  │         │         │  │ │  phase per min_rtt), cwnd gain 2
//!   │  │  │         │         │  │ │
//!   │  │  │  min_rtt not refreshed for 10 s (from any state, when not idle)
//!   │  │  │         ▼         │  │ │
//!   └──┴──┴───►  PROBE_RTT ───┘──┘─┘  cwnd 4 segments for max(200 ms, one round), then back to
//!                                     PROBE_BW (pipe was full) or STARTUP (it was not)
//! ```
//!
//! Loss: BBR does not react to loss as such; in fast recovery it sends one segment per segment
//! delivered (packet conservation) for the first round, and restores cwnd on leaving recovery.
//! A policer is detected by long-term sampling (`lt_bw`): 4+ rounds with ≥ 20% loss at a steady
//! rate make BBR pace at that rate for 48 rounds.
//!
//! Deviations from Linux:
//! * Time is the simulator's ns; BBR's µs quantities are derived from it (ns / 1000), and its
//!   jiffies stamps (PROBE_RTT, the min_rtt filter) are kept in ns instead of 1 ms ticks.
//! * TSO: the simulator sends single segments, so the TSO goal (`bbr_tso_segs_goal`) only enters
//!   the cwnd allowance (3 × the goal, as Linux); it is computed as Linux's from the pacing rate
//!   (1 ms of data at `sk_pacing_shift` 10, at least 2 segments, 1 below 1.2 Mb/s, at most 127),
//!   with Linux's 64 KB GSO limit less a fixed 320-byte `MAX_TCP_HEADER`.
//! * `sk_max_pacing_rate` is unlimited; `is_ack_delayed` (a runt segment's delayed ACK) never
//!   happens because every segment is full-sized.
//! * The random start phase of PROBE_BW comes from the flow's seeded stream
//!   (`rng::Stream::CongestionControl`), not `get_random_u32_below`.

use super::params::{Param, ParamValues};
use super::{CaEvent, CaState, CongestionOps, RateSample, TcpCcView, INFINITE_SSTHRESH};
use crate::rng::{Rng, Stream};
use crate::time::{Nanos, NS_PER_MS, NS_PER_SEC, NS_PER_US};

/// Gains are in units of 1/256 (Linux `BBR_SCALE`).
const BBR_SCALE: u32 = 8;
const BBR_UNIT: u32 = 1 << BBR_SCALE;
/// Bandwidth is in segments per µs scaled by 2^24 (Linux `BW_SCALE`).
const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
const USEC_PER_SEC: u64 = 1_000_000;
/// Linux `TCP_INIT_CWND`.
const TCP_INIT_CWND: u32 = 10;

/// Phases of PROBE_BW's gain cycle (Linux `CYCLE_LEN`).
const CYCLE_LEN: usize = 8;
/// PROBE_BW pacing gains: probe up 5/4 for one min_rtt, drain the probe 3/4, cruise 1 for six
/// (Linux `bbr_pacing_gain`).
const PACING_GAIN: [u32; CYCLE_LEN] =
    [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
/// PROBE_BW starts in a random phase other than the 3/4 one (Linux `bbr_cycle_rand`).
const CYCLE_RAND: u64 = 7;

/// Long-term bandwidth sampling (policer detection), Linux's constants.
/// An interval is at least this many rounds...
const LT_INTVL_MIN_RTTS: u32 = 4;
/// ...with loss of at least 50/256 ≈ 20% of delivered...
const LT_LOSS_THRESH: u32 = 50;
/// ...and two intervals agree if within 1/8 of each other...
const LT_BW_RATIO: u32 = BBR_UNIT / 8;
/// ...or within 4 kbit/s (bytes/s).
const LT_BW_DIFF: u64 = 4000 / 8;
/// Use the long-term bandwidth for this many rounds.
const LT_BW_MAX_RTTS: u32 = 48;

/// ACK aggregation: window of the max filter of extra ACKed data, rounds; reset an epoch after
/// this many segments; cap the allowance at 100 ms of data (Linux `bbr_extra_acked_*`).
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
const EXTRA_ACKED_MAX_US: u64 = 100_000;

/// A 1.2 Mb/s pacing rate, below which one-segment TSO bursts suffice (Linux `bbr_min_tso_rate`).
const MIN_TSO_RATE_BPS: u64 = 1_200_000;
/// Linux `sk_pacing_shift`: TSO bursts of about 1 ms (2^-10 s) of data.
const PACING_SHIFT: u32 = 10;
/// Linux `GSO_LEGACY_MAX_SIZE − 1 − MAX_TCP_HEADER` (MAX_TCP_HEADER taken as 320 bytes).
const TSO_MAX_BYTES: u64 = 65_536 - 1 - 320;

/// BBR's parameters, Linux's defaults (module constants in `tcp_bbr.c`), in the unit users
/// think in; gains become 1/256 fixed point when built (defaults chosen to give Linux's integers).
pub const PARAMS: &[Param] = &[
    Param { name: "high_gain", default: 739.0 / 256.0, min: 1.0, max: 10.0, help: "STARTUP pacing and cwnd gain, 2/ln2 ≈ 2.885 (Linux 739/256)" },
    Param { name: "drain_gain", default: 88.0 / 256.0, min: 0.05, max: 1.0, help: "DRAIN pacing gain, 1/2.885 (Linux 88/256)" },
    Param { name: "cwnd_gain", default: 2.0, min: 1.0, max: 10.0, help: "PROBE_BW cwnd gain: in-flight cap in BDPs" },
    Param { name: "bw_rtts", default: 10.0, min: 2.0, max: 100.0, help: "window of the max-bandwidth filter, rounds (gain cycle length + 2)" },
    Param { name: "min_rtt_win_sec", default: 10.0, min: 1.0, max: 600.0, help: "window of the min_rtt filter, s; PROBE_RTT when it expires" },
    Param { name: "probe_rtt_mode_ms", default: 200.0, min: 0.0, max: 10_000.0, help: "time at cwnd 4 in PROBE_RTT, ms (and at least one round); 0 = never probe RTT" },
    Param { name: "full_bw_thresh", default: 1.25, min: 1.0, max: 4.0, help: "STARTUP ends when btl_bw grows less than this factor..." },
    Param { name: "full_bw_cnt", default: 3.0, min: 1.0, max: 100.0, help: "...for this many rounds" },
    Param { name: "cwnd_min_target", default: 4.0, min: 1.0, max: 100.0, help: "minimum cwnd and PROBE_RTT cwnd, segments" },
    Param { name: "pacing_margin_percent", default: 1.0, min: 0.0, max: 50.0, help: "pace this many percent below the estimated rate" },
    Param { name: "extra_acked_gain", default: 1.0, min: 0.0, max: 4.0, help: "cwnd allowance for ACK aggregation, times the extra data ACKed" },
    Param { name: "lt_bw", default: 1.0, min: 0.0, max: 1.0, help: "long-term bandwidth sampling (policer detection): 1 on, 0 off" },
];

/// BBR's states (Linux `enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up sending rate rapidly to fill the pipe.
    Startup,
    /// Drain any queue created during startup.
    Drain,
    /// Discover, share bandwidth: pace around the estimated bandwidth.
    ProbeBw,
    /// Cut in-flight to the minimum to probe min_rtt.
    ProbeRtt,
}

/// A windowed running maximum over three samples (Kathleen Nichols' algorithm, Linux
/// `lib/win_minmax.c`): the best, second-best and third-best values in the window, each with
/// the time (here: the round) it was seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaxFilter {
    s: [(u32, u32); 3], // (t, v)
}

impl MaxFilter {
    pub fn get(&self) -> u32 {
        self.s[0].1
    }

    pub fn reset(&mut self, t: u32, v: u32) -> u32 {
        self.s = [(t, v); 3];
        v
    }

    /// Linux `minmax_running_max`: add sample `v` at time `t`, window `win`.
    pub fn running_max(&mut self, win: u32, t: u32, v: u32) -> u32 {
        if v >= self.s[0].1 || t.wrapping_sub(self.s[2].0) > win {
            return self.reset(t, v); // a new max, or nothing left in the window
        }
        if v >= self.s[1].1 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        // Linux `minmax_subwin_update`: age the samples through quarter and half windows.
        let dt = t.wrapping_sub(self.s[0].0);
        if dt > win {
            self.s = [self.s[1], self.s[2], (t, v)];
            if t.wrapping_sub(self.s[0].0) > win {
                self.s = [self.s[1], self.s[2], (t, v)];
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = (t, v);
        }
        self.s[0].1
    }
}

#[derive(Clone, Debug)]
pub struct Bbr {
    // Parameters (fixed point as in Linux).
    high_gain: u32,
    drain_gain: u32,
    cwnd_gain_probe_bw: u32,
    bw_rtts: u32,
    min_rtt_win_ns: Nanos,
    probe_rtt_mode_ns: Nanos,
    full_bw_thresh: u32,
    full_bw_cnt_target: u32,
    cwnd_min_target: u32,
    pacing_margin_percent: u64,
    extra_acked_gain: u32,
    lt_enabled: bool,
    /// The flow's random stream (start phase of the gain cycle).
    pub rng: Rng,

    mode: Mode,
    /// Max filter of delivery rate, segments/µs << 24, over `bw_rtts` rounds.
    bw: MaxFilter,
    /// Packet-timed rounds so far.
    rtt_cnt: u32,
    /// `tp.delivered` at the end of the current round.
    next_rtt_delivered: u32,
    /// Start of the current gain-cycle phase, µs (a `delivered_ns` stamp).
    cycle_mstamp_us: u64,
    /// Min RTT in the filter window, µs (`u32::MAX` before a sample).
    min_rtt_us: u32,
    /// When `min_rtt_us` was taken, ns.
    min_rtt_stamp_ns: Nanos,
    /// End of the PROBE_RTT dwell, ns (None until in-flight is down to the target).
    probe_rtt_done_ns: Option<Nanos>,
    prev_ca_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    /// Long-term bandwidth, segments/µs << 24.
    lt_bw: u32,
    lt_last_delivered: u32,
    lt_last_stamp_ms: u32,
    lt_last_lost: u32,
    /// Current gains, 1/256.
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    /// Recent bw, to spot the plateau that ends STARTUP.
    full_bw: u32,
    cycle_idx: usize,
    has_seen_rtt: bool,
    /// cwnd before loss recovery or PROBE_RTT, segments.
    prior_cwnd: u32,
    /// Pacing rate, bytes/s (Linux `sk_pacing_rate`); the view gets it in bit/s.
    pacing_rate_bytes_ps: u64,
    /// `bbr_tso_segs_goal` for the current pacing rate (recomputed when the rate changes).
    tso_segs_goal: u32,
    ack_epoch_mstamp_us: u64,
    ack_epoch_acked: u32,
    extra_acked: [u32; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
}

impl Bbr {
    pub fn new(v: &ParamValues) -> Bbr {
        Bbr {
            high_gain: v.scaled("high_gain", BBR_UNIT as f64),
            drain_gain: v.scaled("drain_gain", BBR_UNIT as f64),
            cwnd_gain_probe_bw: v.scaled("cwnd_gain", BBR_UNIT as f64),
            bw_rtts: v.get("bw_rtts") as u32,
            min_rtt_win_ns: (v.get("min_rtt_win_sec") * NS_PER_SEC as f64) as Nanos,
            probe_rtt_mode_ns: (v.get("probe_rtt_mode_ms") * NS_PER_MS as f64) as Nanos,
            full_bw_thresh: v.scaled("full_bw_thresh", BBR_UNIT as f64),
            full_bw_cnt_target: v.get("full_bw_cnt") as u32,
            cwnd_min_target: v.get("cwnd_min_target") as u32,
            pacing_margin_percent: v.get("pacing_margin_percent") as u64,
            extra_acked_gain: v.scaled("extra_acked_gain", BBR_UNIT as f64),
            lt_enabled: v.flag("lt_bw"),
            rng: Rng::stream(0, Stream::CongestionControl, 0),
            mode: Mode::Startup,
            bw: MaxFilter::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp_us: 0,
            min_rtt_us: u32::MAX,
            min_rtt_stamp_ns: 0,
            probe_rtt_done_ns: None,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp_ms: 0,
            lt_last_lost: 0,
            pacing_gain: BBR_UNIT,
            cwnd_gain: BBR_UNIT,
            full_bw_reached: false,
            full_bw_cnt: 0,
            full_bw: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            pacing_rate_bytes_ps: 0,
            tso_segs_goal: 1,
            ack_epoch_mstamp_us: 0,
            ack_epoch_acked: 0,
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The windowed max bandwidth, segments/µs << 24.
    pub fn max_bw(&self) -> u32 {
        self.bw.get()
    }

    /// The bandwidth BBR uses: the long-term one when policed (Linux `bbr_bw`).
    fn bw(&self) -> u32 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// Linux `bbr_rate_bytes_per_sec`: `rate` (segments/µs << 24) · gain, less the margin.
    fn rate_bytes_per_sec(&self, tp: &TcpCcView, rate: u64, gain: u32) -> u64 {
        let mut rate = rate * tp.mss_bytes as u64;
        rate *= gain as u64;
        rate >>= BBR_SCALE;
        rate *= USEC_PER_SEC / 100 * (100 - self.pacing_margin_percent);
        rate >> BW_SCALE
    }

    fn bw_to_pacing_rate(&self, tp: &TcpCcView, bw: u32, gain: u32) -> u64 {
        self.rate_bytes_per_sec(tp, bw as u64, gain)
    }

    fn publish_pacing_rate(&mut self, tp: &mut TcpCcView) {
        tp.pacing_rate_bps = self.pacing_rate_bytes_ps.saturating_mul(8).max(1);
        self.tso_segs_goal = self.compute_tso_segs_goal(tp);
    }

    /// Linux `bbr_init_pacing_rate_from_rtt`: high_gain · cwnd / RTT (nominal 1 ms before one).
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut TcpCcView) {
        let rtt_us = if tp.srtt_ns > 0 {
            self.has_seen_rtt = true;
            (tp.srtt_ns / NS_PER_US).max(1)
        } else {
            1_000
        };
        let bw = tp.snd_cwnd as u64 * BW_UNIT / rtt_us;
        self.pacing_rate_bytes_ps = self.bw_to_pacing_rate(tp, bw.min(u32::MAX as u64) as u32, self.high_gain);
        self.publish_pacing_rate(tp);
    }

    /// Linux `bbr_set_pacing_rate`: never slow down before the pipe is full.
    fn set_pacing_rate(&mut self, tp: &mut TcpCcView, bw: u32, gain: u32) {
        let rate = self.bw_to_pacing_rate(tp, bw, gain);
        if !self.has_seen_rtt && tp.srtt_ns > 0 {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full_bw_reached || rate > self.pacing_rate_bytes_ps {
            self.pacing_rate_bytes_ps = rate;
            self.publish_pacing_rate(tp);
        }
    }

    /// Linux `bbr_tso_segs_goal` for the current pacing rate.
    fn tso_segs_goal(&self, _tp: &TcpCcView) -> u32 {
        self.tso_segs_goal
    }

    /// Linux `bbr_tso_segs_goal` (see the deviations above).
    fn compute_tso_segs_goal(&self, tp: &TcpCcView) -> u32 {
        let min_segs = self.min_tso_segs(tp).unwrap_or(2);
        let bytes = (self.pacing_rate_bytes_ps >> PACING_SHIFT).min(TSO_MAX_BYTES);
        ((bytes / tp.mss_bytes as u64) as u32).max(min_segs).min(0x7f)
    }

    /// Linux `bbr_save_cwnd`: remember the last good cwnd before recovery or PROBE_RTT.
    fn save_cwnd(&mut self, tp: &TcpCcView) {
        if !matches!(self.prev_ca_state, CaState::Recovery | CaState::Loss) && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = tp.snd_cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(tp.snd_cwnd);
        }
    }

    /// Linux `bbr_bdp`: bw · min_rtt · gain, segments, rounded up (10 before an RTT sample).
    fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        let w = bw as u64 * self.min_rtt_us as u64;
        (((w * gain as u64) >> BBR_SCALE).div_ceil(BW_UNIT)) as u32
    }

    /// Linux `bbr_quantization_budget`: room for TSO bursts, an even cwnd, and +2 while probing.
    fn quantization_budget(&self, tp: &TcpCcView, cwnd: u32) -> u32 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal(tp);
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// Linux `bbr_inflight`: the in-flight target for `bw` at `gain`.
    fn inflight(&self, tp: &TcpCcView, bw: u32, gain: u32) -> u32 {
        self.quantization_budget(tp, self.bdp(bw, gain))
    }

    /// Linux `bbr_packets_in_net_at_edt`: in-flight expected when the next segment departs.
    fn packets_in_net_at_edt(&self, tp: &TcpCcView, inflight_now: u32) -> u32 {
        let edt_ns = tp.wstamp_ns.max(tp.now_ns);
        let interval_delivered = (self.bw() as u64 * ((edt_ns - tp.now_ns) / NS_PER_US)) >> BW_SCALE;
        let mut inflight_at_edt = inflight_now as u64;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += self.tso_segs_goal(tp) as u64; // include the EDT burst
        }
        inflight_at_edt.saturating_sub(interval_delivered) as u32
    }

    /// Linux `bbr_ack_aggregation_cwnd`.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if self.extra_acked_gain == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr_cwnd = (self.bw() as u64 * EXTRA_ACKED_MAX_US / BW_UNIT) as u32;
        let aggr_cwnd = (self.extra_acked_gain * self.extra_acked()) >> BBR_SCALE;
        aggr_cwnd.min(max_aggr_cwnd)
    }

    /// Linux `bbr_set_cwnd_to_recover_or_restore`: packet conservation for the first round of
    /// recovery, cwnd restored on leaving it. Returns the cwnd, and whether it is final.
    fn cwnd_to_recover_or_restore(&mut self, tp: &TcpCcView, rs: &RateSample, acked: u32) -> (u32, bool) {
        let (prev_state, state) = (self.prev_ca_state, tp.ca_state);
        let mut cwnd = tp.snd_cwnd;
        // An ACK for a loss: cwnd falls by the segments lost.
        if rs.losses > 0 {
            cwnd = (cwnd as i64 - rs.losses as i64).max(1) as u32;
        }
        let in_recovery = |s: CaState| matches!(s, CaState::Recovery | CaState::Loss);
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            // Starting the first round of recovery: send one segment per segment delivered.
            self.packet_conservation = true;
            self.next_rtt_delivered = tp.delivered; // start the round now
            cwnd = tp.packets_in_flight + acked;
        } else if in_recovery(prev_state) && !in_recovery(state) {
            // Exiting loss recovery: restore cwnd.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(tp.packets_in_flight + acked), true);
        }
        (cwnd, false)
    }

    /// Linux `bbr_set_cwnd`: grow toward cwnd_gain · BDP (+ allowances) by the segments ACKed.
    fn set_cwnd(&mut self, tp: &mut TcpCcView, rs: &RateSample, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = tp.snd_cwnd;
        if acked > 0 {
            let (c, done) = self.cwnd_to_recover_or_restore(tp, rs, acked);
            cwnd = c;
            if !done {
                let mut target = self.bdp(bw, gain);
                target += self.ack_aggregation_cwnd();
                target = self.quantization_budget(tp, target);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || tp.delivered < TCP_INIT_CWND {
                    cwnd += acked;
                }
                cwnd = cwnd.max(self.cwnd_min_target);
            }
        }
        tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            tp.snd_cwnd = tp.snd_cwnd.min(self.cwnd_min_target);
        }
    }

    /// Linux `bbr_is_next_cycle_phase`: a phase lasts one min_rtt; the 5/4 probe also until
    /// in-flight reaches 5/4 BDP (or loss), the 3/4 drain ends early once in-flight ≤ BDP.
    fn is_next_cycle_phase(&self, tp: &TcpCcView, rs: &RateSample) -> bool {
        let delivered_us = tp.delivered_ns / NS_PER_US;
        let is_full_length = delivered_us.saturating_sub(self.cycle_mstamp_us) > self.min_rtt_us as u64;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length && (rs.losses > 0 || inflight >= self.inflight(tp, bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    fn advance_cycle_phase(&mut self, tp: &TcpCcView) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp_us = tp.delivered_ns / NS_PER_US;
    }

    fn update_cycle_phase(&mut self, tp: &TcpCcView, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(tp, rs) {
            self.advance_cycle_phase(tp);
        }
    }

    /// Linux `bbr_reset_probe_bw_mode`: start the gain cycle at a random phase, never the 3/4
    /// one (index 1): cycle_idx = 7 − rand(7) ∈ {1..7}, then advanced to {2..7, 0}.
    fn reset_probe_bw_mode(&mut self, tp: &TcpCcView) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.below(CYCLE_RAND) as usize;
        self.advance_cycle_phase(tp);
    }

    fn reset_mode(&mut self, tp: &TcpCcView) {
        if !self.full_bw_reached {
            self.mode = Mode::Startup;
        } else {
            self.reset_probe_bw_mode(tp);
        }
    }

    // ---- long-term bandwidth sampling (policer detection) ------------------------------------

    fn reset_lt_bw_sampling_interval(&mut self, tp: &TcpCcView) {
        self.lt_last_stamp_ms = (tp.delivered_ns / NS_PER_MS) as u32;
        self.lt_last_delivered = tp.delivered;
        self.lt_last_lost = tp.lost;
        self.lt_rtt_cnt = 0;
    }

    fn reset_lt_bw_sampling(&mut self, tp: &TcpCcView) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// Linux `bbr_lt_bw_interval_done`: two consecutive lossy intervals at about the same rate
    /// mean a policer; use their average.
    fn lt_bw_interval_done(&mut self, tp: &TcpCcView, bw: u32) {
        if self.lt_bw != 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * BBR_UNIT <= LT_BW_RATIO * self.lt_bw || self.rate_bytes_per_sec(tp, diff as u64, BBR_UNIT) <= LT_BW_DIFF {
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT; // try to avoid drops
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// Linux `bbr_lt_bw_sampling`.
    fn lt_bw_sampling(&mut self, tp: &TcpCcView, rs: &RateSample) {
        if !self.lt_enabled {
            return;
        }
        if self.lt_use_bw {
            // Already using the long-term rate: for how long?
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(tp);
                    self.reset_probe_bw_mode(tp);
                }
            }
            return;
        }
        // Wait for the first loss before sampling, to let the policer exhaust its tokens.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tp);
            self.lt_is_sampling = true;
        }
        // An app-limited sample says nothing about the policer.
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(tp); // too long: start over
            return;
        }
        // End the interval at a loss, so it spans whole token-bucket cycles.
        if rs.losses == 0 {
            return;
        }
        let lost = tp.lost.wrapping_sub(self.lt_last_lost);
        let delivered = tp.delivered.wrapping_sub(self.lt_last_delivered);
        // Is the loss rate high enough (≥ 50/256) to suggest a policer?
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t_ms = ((tp.delivered_ns / NS_PER_MS) as u32).wrapping_sub(self.lt_last_stamp_ms) as i32;
        if t_ms < 1 {
            return; // interval too short
        }
        if t_ms as u32 >= u32::MAX / 1000 {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        let t_us = t_ms as u64 * 1000;
        let bw = delivered as u64 * BW_UNIT / t_us;
        self.lt_bw_interval_done(tp, bw.min(u32::MAX as u64) as u32);
    }

    // ---- the model ---------------------------------------------------------------------------

    /// Linux `bbr_update_bw`: count rounds; feed the max filter.
    fn update_bw(&mut self, tp: &TcpCcView, rs: &RateSample) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_ns <= 0 {
            return; // not a valid observation
        }
        // A round ends when a segment sent after the previous round's end is delivered.
        if (rs.prior_delivered.wrapping_sub(self.next_rtt_delivered) as i32) >= 0 {
            self.next_rtt_delivered = tp.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(tp, rs);
        // Delivery rate, segments/µs << 24. App-limited samples only count if they raise it.
        let interval_us = (rs.interval_ns as u64 / NS_PER_US).max(1);
        let bw = (rs.delivered as u64 * BW_UNIT / interval_us).min(u32::MAX as u64) as u32;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(self.bw_rtts, self.rtt_cnt, bw);
        }
    }

    /// Linux `bbr_update_ack_aggregation`: the largest excess of data ACKed over what bw
    /// predicts within an epoch, max-filtered over 5–10 rounds.
    fn update_ack_aggregation(&mut self, tp: &TcpCcView, rs: &RateSample) {
        if self.extra_acked_gain == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_ns <= 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let delivered_us = tp.delivered_ns / NS_PER_US;
        let epoch_us = delivered_us.saturating_sub(self.ack_epoch_mstamp_us);
        let mut expected_acked = (self.bw() as u64 * epoch_us / BW_UNIT) as u32;
        // Reset the epoch when ACKs fall behind the expected rate, or the count gets large.
        if self.ack_epoch_acked <= expected_acked || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp_us = delivered_us;
            expected_acked = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = (self.ack_epoch_acked - expected_acked).min(tp.snd_cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    /// Linux `bbr_check_full_bw_reached`: the pipe is full when bw stops growing by 25% for
    /// three non-app-limited rounds.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let bw_thresh = ((self.full_bw as u64 * self.full_bw_thresh as u64) >> BBR_SCALE) as u32;
        if self.max_bw() >= bw_thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= self.full_bw_cnt_target;
    }

    /// Linux `bbr_check_drain`: STARTUP → DRAIN when the pipe is full; DRAIN → PROBE_BW once the
    /// queue it built is gone.
    fn check_drain(&mut self, tp: &mut TcpCcView) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            tp.snd_ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain && self.packets_in_net_at_edt(tp, tp.packets_in_flight) <= self.inflight(tp, self.max_bw(), BBR_UNIT) {
            self.reset_probe_bw_mode(tp);
        }
    }

    fn check_probe_rtt_done(&mut self, tp: &mut TcpCcView) {
        let Some(done) = self.probe_rtt_done_ns else { return };
        if tp.now_ns <= done {
            return;
        }
        self.min_rtt_stamp_ns = tp.now_ns; // wait a while until PROBE_RTT again
        tp.snd_cwnd = tp.snd_cwnd.max(self.prior_cwnd);
        self.reset_mode(tp);
    }

    /// Linux `bbr_update_min_rtt`: the min_rtt filter, and PROBE_RTT when it expires.
    fn update_min_rtt(&mut self, tp: &mut TcpCcView, rs: &RateSample) {
        let filter_expired = tp.now_ns > self.min_rtt_stamp_ns + self.min_rtt_win_ns;
        if rs.rtt_ns >= 0 && ((rs.rtt_ns as u64 / NS_PER_US) < self.min_rtt_us as u64 || filter_expired) {
            self.min_rtt_us = (rs.rtt_ns as u64 / NS_PER_US).min(u32::MAX as u64 - 1) as u32;
            self.min_rtt_stamp_ns = tp.now_ns;
        }
        if self.probe_rtt_mode_ns > 0 && filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt; // dip, drain queue
            self.save_cwnd(tp); // note cwnd so we can restore it
            self.probe_rtt_done_ns = None;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore low rate samples during this mode.
            tp.app_limited = tp.delivered.wrapping_add(tp.packets_in_flight).max(1);
            // Maintain min packets in flight for the dwell time.
            if self.probe_rtt_done_ns.is_none() && tp.packets_in_flight <= self.cwnd_min_target {
                self.probe_rtt_done_ns = Some(tp.now_ns + self.probe_rtt_mode_ns);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = tp.delivered;
            } else if self.probe_rtt_done_ns.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(tp);
                }
            }
        }
        // Restart after idle ends only once we process a new S/ACK for data.
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (self.high_gain, self.high_gain),
            Mode::Drain => (self.drain_gain, self.high_gain), // slow, to drain; keep cwnd
            Mode::ProbeBw => (if self.lt_use_bw { BBR_UNIT } else { PACING_GAIN[self.cycle_idx] }, self.cwnd_gain_probe_bw),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    fn update_model(&mut self, tp: &mut TcpCcView, rs: &RateSample) {
        self.update_bw(tp, rs);
        self.update_ack_aggregation(tp, rs);
        self.update_cycle_phase(tp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(tp);
        self.update_min_rtt(tp, rs);
        self.update_gains();
    }
}

impl CongestionOps for Bbr {
    /// Linux `bbr_init`.
    fn init(&mut self, tp: &mut TcpCcView) {
        self.prior_cwnd = 0;
        tp.snd_ssthresh = INFINITE_SSTHRESH;
        self.rtt_cnt = 0;
        self.next_rtt_delivered = tp.delivered;
        self.prev_ca_state = CaState::Open;
        self.packet_conservation = false;
        self.probe_rtt_done_ns = None;
        self.probe_rtt_round_done = false;
        self.min_rtt_us = if tp.min_rtt_ns == Nanos::MAX { u32::MAX } else { (tp.min_rtt_ns / NS_PER_US) as u32 };
        self.min_rtt_stamp_ns = tp.now_ns;
        self.bw.reset(self.rtt_cnt, 0);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(tp);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp_us = 0;
        self.cycle_idx = 0;
        self.reset_lt_bw_sampling(tp);
        self.mode = Mode::Startup;
        self.update_gains();
        self.ack_epoch_mstamp_us = tp.now_ns / NS_PER_US;
        self.ack_epoch_acked = 0;
        self.extra_acked_win_rtts = 0;
        self.extra_acked_win_idx = 0;
        self.extra_acked = [0; 2];
    }

    /// Linux `bbr_ssthresh`: BBR does not use ssthresh; note cwnd for restoring after recovery.
    fn ssthresh(&mut self, tp: &TcpCcView) -> u32 {
        self.save_cwnd(tp);
        tp.snd_ssthresh
    }

    /// Never called: BBR has `cong_control`.
    fn cong_avoid(&mut self, _tp: &mut TcpCcView, _ack: u32, _acked: u32) {}

    /// Linux `bbr_undo_cwnd`: a spurious slow-down; restart full-pipe detection.
    fn undo_cwnd(&mut self, tp: &TcpCcView) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(tp);
        tp.snd_cwnd
    }

    /// Linux `bbr_set_state`: an RTO ends the round and counts as a loss for lt sampling.
    fn set_state(&mut self, tp: &mut TcpCcView, new_state: CaState) {
        if new_state == CaState::Loss {
            let rs = RateSample { losses: 1, ..RateSample::invalid() };
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true; // treat RTO like the end of a round
            self.lt_bw_sampling(tp, &rs);
        }
    }

    /// Linux `bbr_cwnd_event`: restarting from idle, pace at bw instead of the stale gain.
    fn cwnd_event(&mut self, tp: &mut TcpCcView, ev: CaEvent) {
        if ev == CaEvent::TxStart && tp.app_limited != 0 {
            self.idle_restart = true;
            self.ack_epoch_mstamp_us = tp.now_ns / NS_PER_US;
            self.ack_epoch_acked = 0;
            // (Linux re-paces at bw here: the view is read-only in this hook, so the next ACK
            // does it.)
        }
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// Linux `bbr_main`.
    fn cong_control(&mut self, tp: &mut TcpCcView, rs: &RateSample) {
        self.update_model(tp, rs);
        let bw = self.bw();
        self.set_pacing_rate(tp, bw, self.pacing_gain);
        self.set_cwnd(tp, rs, rs.acked_sacked, bw, self.cwnd_gain);
    }

    /// Linux `bbr_min_tso_segs`: one-segment bursts below 1.2 Mb/s, else two.
    fn min_tso_segs(&self, _tp: &TcpCcView) -> Option<u32> {
        Some(if self.pacing_rate_bytes_ps < MIN_TSO_RATE_BPS >> 3 { 1 } else { 2 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn bbr() -> Bbr {
        Bbr::new(&ParamValues::resolve(PARAMS, &[], &BTreeMap::new(), "f").unwrap())
    }

    #[test]
    fn gains_are_linux_fixed_point() {
        let b = bbr();
        // BBR_UNIT · 2885/1000 + 1 = 739; BBR_UNIT · 1000/2885 = 88; 2 · BBR_UNIT = 512.
        assert_eq!((b.high_gain, b.drain_gain, b.cwnd_gain_probe_bw, b.full_bw_thresh), (739, 88, 512, 320));
        assert_eq!(PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
        assert_eq!((b.bw_rtts, b.min_rtt_win_ns, b.probe_rtt_mode_ns, b.cwnd_min_target), (10, 10 * NS_PER_SEC, 200 * NS_PER_MS, 4));
    }

    #[test]
    fn max_filter_keeps_the_best_of_the_window_and_ages_out() {
        let mut f = MaxFilter::default();
        f.reset(0, 100);
        // Lower samples within the window do not replace the max.
        assert_eq!(f.running_max(10, 1, 80), 100);
        assert_eq!(f.running_max(10, 3, 60), 100);
        // A new max replaces everything.
        assert_eq!(f.running_max(10, 4, 120), 120);
        // 120 at t=4 ages out after t=14; the best since (90 at t=9) takes over until it ages
        // out after t=19, then 50 (t=15), then 40.
        assert_eq!(f.running_max(10, 9, 90), 120);
        assert_eq!(f.running_max(10, 14, 50), 120);
        assert_eq!(f.running_max(10, 15, 50), 90);
        assert_eq!(f.running_max(10, 19, 40), 90);
        assert_eq!(f.running_max(10, 20, 40), 50);
        assert_eq!(f.running_max(10, 30, 40), 40);
    }

    #[test]
    fn max_filter_against_a_naive_window_max() {
        // The three-sample filter equals the true max over the last `win` rounds when samples
        // only grow or the window holds a recent best; with one sample per round it never
        // reports more than the true max and never less than the latest sample.
        let mut rng = Rng::stream(5, Stream::CongestionControl, 0);
        let mut f = MaxFilter::default();
        let mut hist = vec![];
        for t in 0..2000u32 {
            let v = rng.below(1000) as u32;
            hist.push(v);
            let got = f.running_max(10, t, v);
            let lo = t.saturating_sub(10) as usize;
            let true_max = *hist[lo..].iter().max().unwrap();
            assert!(got <= true_max && got >= v, "t {t}: {got} vs window max {true_max}");
        }
    }

    #[test]
    fn probe_bw_starts_anywhere_but_the_drain_phase_and_cycles_in_order() {
        let mut b = bbr();
        let mut tp = TcpCcView::new(10, 1448);
        let mut seen = [0u32; CYCLE_LEN];
        for _ in 0..700 {
            b.reset_probe_bw_mode(&tp);
            seen[b.cycle_idx] += 1;
        }
        // Start phases {2..7, 0}, each about 1/7 of the time; never 1 (the 3/4 phase).
        assert_eq!(seen[1], 0);
        for (i, &n) in seen.iter().enumerate().filter(|(i, _)| *i != 1) {
            assert!((60..=140).contains(&n), "phase {i}: {n}");
        }
        // Cruising phases advance after one min_rtt of delivery time.
        b.min_rtt_us = 100_000;
        b.cycle_idx = 2;
        b.cycle_mstamp_us = 0;
        b.bw.reset(0, 1000);
        let rs = RateSample { prior_in_flight: 10, ..RateSample::invalid() };
        let mut gains = vec![];
        for k in 1..=16u64 {
            b.update_gains();
            tp.delivered_ns = k * 100_001 * NS_PER_US; // just over one min_rtt per step
            tp.now_ns = tp.delivered_ns;
            gains.push(b.pacing_gain);
            b.update_cycle_phase(&tp, &rs);
        }
        // Phases 2..7 (gain 1) each last one min_rtt; then the 5/4 probe, which with in-flight
        // (10) below 5/4 BDP and no loss does not end on time alone.
        assert_eq!(&gains[..6], &[256; 6]);
        assert_eq!(&gains[6..], &[320; 10]);
    }

    #[test]
    fn probe_up_phase_ends_when_in_flight_reaches_five_quarters_bdp() {
        let mut b = bbr();
        let mut tp = TcpCcView::new(100, 1000);
        b.mode = Mode::ProbeBw;
        b.min_rtt_us = 10_000; // 10 ms
        // bw = 1 segment per 100 µs → BDP over 10 ms = 100 segments.
        b.bw.reset(0, (BW_UNIT / 100) as u32);
        b.cycle_idx = 0;
        b.update_gains();
        tp.delivered_ns = 20_000 * NS_PER_US; // two min_rtts into the phase
        tp.now_ns = tp.delivered_ns;
        tp.wstamp_ns = tp.now_ns;
        // inflight target at 5/4: bdp 125 + 3·tso goal + even + 2. Pacing 0 → tso goal 1.
        let target = b.inflight(&tp, b.max_bw(), 320);
        assert_eq!(target, 125 + 3 + 2);
        let rs = |in_flight| RateSample { prior_in_flight: in_flight, ..RateSample::invalid() };
        // In-flight at the next departure counts one TSO burst (1 segment) more while probing.
        b.update_cycle_phase(&tp, &rs(target - 2));
        assert_eq!(b.cycle_idx, 0, "below 5/4 BDP the probe goes on");
        b.update_cycle_phase(&tp, &rs(target - 1));
        assert_eq!(b.cycle_idx, 1);
        // The 3/4 phase ends as soon as in-flight is at most one BDP (+ budget), even early.
        b.update_gains();
        tp.delivered_ns += NS_PER_US; // not a full min_rtt
        b.update_cycle_phase(&tp, &rs(200));
        assert_eq!(b.cycle_idx, 1);
        b.update_cycle_phase(&tp, &rs(100));
        assert_eq!(b.cycle_idx, 2);
    }

    #[test]
    fn startup_ends_after_three_rounds_without_25_percent_growth() {
        let mut b = bbr();
        b.round_start = true;
        for (bw, reached) in [(100, false), (200, false), (240, false), (245, false), (249, true)] {
            b.bw.reset(0, bw);
            b.check_full_bw_reached(&RateSample::invalid());
            assert_eq!(b.full_bw_reached, reached, "bw {bw}");
        }
        // 100 → 200 grew by ≥ 25%; 240, 245, 249 are each below 1.25 · 200 = 250.
        assert_eq!(b.full_bw, 200);
    }

    #[test]
    fn bdp_and_pacing_rate_arithmetic() {
        let b = bbr();
        let mut b = b;
        let tp = TcpCcView::new(10, 1448);
        // 100 Mb/s of 1500-byte packets = 8333.3 pkt/s = 0.0083333 pkt/µs; min_rtt 100 ms.
        let bw = (8_333u64 * BW_UNIT / 1_000_000) as u32;
        b.min_rtt_us = 100_000;
        // BDP = 833.3 segments, rounded up.
        assert_eq!(b.bdp(bw, BBR_UNIT), 834);
        assert_eq!(b.bdp(bw, 512), 1667);
        // Pacing at gain 1: 8333 · 1448 B/s · 0.99 ≈ 11.945 MB/s (fixed-point truncation).
        let r = b.bw_to_pacing_rate(&tp, bw, BBR_UNIT);
        assert!((11_940_000..11_950_000).contains(&r), "{r}");
        b.pacing_rate_bytes_ps = r;
        // TSO goal: r >> 10 = 11,666 B → 8 segments.
        assert_eq!(b.compute_tso_segs_goal(&tp), 8);
    }
}
