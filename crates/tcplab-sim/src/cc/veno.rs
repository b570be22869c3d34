//! TCP Veno: C. P. Fu, S. C. Liew, "TCP Veno: TCP Enhancement for Transmission over Wireless
//! Access Networks", IEEE JSAC 21(2), 2003. Mirrors Linux `net/ipv4/tcp_veno.c`.
//!
//! Veno estimates the backlog a flow keeps in the bottleneck queue, Vegas-style, and uses it to
//! tell congestion losses from random ones:
//!
//! ```text
//!   N    = cwnd − cwnd·baseRTT/rtt            (segments, fixed point ×2: V_PARAM_SHIFT = 1)
//!   N <  beta (3 segments): non-congestive → +1 segment per RTT; a loss cuts cwnd to 4/5
//!   N >= beta              : congestive     → +1 segment every other RTT; a loss halves cwnd
//! ```
//!
//! `rtt` is the minimum RTT sample since the previous window update (Linux resets it on every
//! `cong_avoid` call), `baseRTT` the minimum ever. Until three RTT samples have been seen, and
//! outside Open state, Veno grows like Reno.
//!
//! Deviations: none in the computation. Linux has no module parameters for Veno (beta is a
//! compile-time constant), so neither does tcplab.

use super::helpers::{cong_avoid_ai, slow_start};
use super::params::{Param, ParamValues};
use super::reno::Reno;
use super::vegas::{rtt_us, RTT_NONE_US};
use super::{AckSample, CaEvent, CaState, CongestionOps, TcpCcView};

pub const PARAMS: &[Param] = &[];

/// Fixed-point shift of `diff` and `BETA`.
const V_PARAM_SHIFT: u32 = 1;
/// Backlog threshold between non-congestive and congestive state: 3 segments (<< V_PARAM_SHIFT).
const BETA: u32 = 3 << V_PARAM_SHIFT;

#[derive(Clone, Debug)]
pub struct Veno {
    doing_veno_now: bool,
    /// RTT samples seen (Linux never resets it after init; u16 as in Linux).
    cnt_rtt: u16,
    /// Minimum RTT since the last window update, µs (+1).
    min_rtt: u32,
    /// Minimum RTT ever, µs (+1).
    base_rtt: u32,
    /// Whether the next congestive-state increase is taken (every other RTT).
    inc: bool,
    /// Backlog estimate N, segments << V_PARAM_SHIFT.
    diff: u32,
}

impl Veno {
    pub fn new(_v: &ParamValues) -> Self {
        Veno { doing_veno_now: true, cnt_rtt: 0, min_rtt: RTT_NONE_US, base_rtt: RTT_NONE_US, inc: true, diff: 0 }
    }

    fn enable(&mut self) {
        self.doing_veno_now = true;
        self.min_rtt = RTT_NONE_US;
    }

    fn reset(&mut self) {
        self.base_rtt = RTT_NONE_US;
        self.inc = true;
        self.enable();
    }
}

impl CongestionOps for Veno {
    fn init(&mut self, _tp: &mut TcpCcView) {
        self.reset();
    }

    /// Veno's multiplicative decrease: 1/5 off in non-congestive state, 1/2 in congestive.
    fn ssthresh(&mut self, tp: &TcpCcView) -> u32 {
        if self.diff < BETA {
            (tp.snd_cwnd * 4 / 5).max(2)
        } else {
            (tp.snd_cwnd >> 1).max(2)
        }
    }

    fn pkts_acked(&mut self, _tp: &mut TcpCcView, sample: &AckSample) {
        let Some(rtt) = sample.rtt_ns else { return };
        let vrtt = rtt_us(rtt) + 1;
        self.base_rtt = self.base_rtt.min(vrtt);
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt = self.cnt_rtt.wrapping_add(1);
    }

    fn set_state(&mut self, _tp: &mut TcpCcView, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable();
        } else {
            self.doing_veno_now = false;
        }
    }

    fn cwnd_event(&mut self, _tp: &mut TcpCcView, ev: CaEvent) {
        if matches!(ev, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.reset();
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpCcView, ack: u32, mut acked: u32) {
        if !self.doing_veno_now {
            Reno.cong_avoid(tp, ack, acked);
            return;
        }
        // Limited by the application.
        if !tp.is_cwnd_limited {
            return;
        }
        if self.cnt_rtt <= 2 {
            Reno.cong_avoid(tp, ack, acked);
        } else {
            let rtt = self.min_rtt as u64;
            let target_cwnd = ((tp.snd_cwnd as u64 * self.base_rtt as u64) << V_PARAM_SHIFT) / rtt;
            self.diff = (tp.snd_cwnd << V_PARAM_SHIFT).wrapping_sub(target_cwnd as u32);
            let mut grow = true;
            if tp.in_slow_start() {
                acked = slow_start(tp, acked);
                grow = acked > 0;
            }
            if grow {
                if self.diff < BETA {
                    // Non-congestive: one segment per RTT.
                    cong_avoid_ai(tp, tp.snd_cwnd, acked);
                } else if tp.snd_cwnd_cnt >= tp.snd_cwnd {
                    // Congestive: one segment every other RTT.
                    if self.inc && tp.snd_cwnd < tp.snd_cwnd_clamp {
                        tp.snd_cwnd += 1;
                        self.inc = false;
                    } else {
                        self.inc = true;
                    }
                    tp.snd_cwnd_cnt = 0;
                } else {
                    tp.snd_cwnd_cnt += acked;
                }
            }
            tp.snd_cwnd = tp.snd_cwnd.max(2).min(tp.snd_cwnd_clamp);
        }
        // Wipe the slate clean for the next window update.
        self.min_rtt = RTT_NONE_US;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Nanos;

    const MS: Nanos = 1_000_000;

    fn veno_at(cwnd: u32, base_ms: u64, rtt_ms: u64) -> (Veno, TcpCcView) {
        let mut tp = TcpCcView::new(cwnd, 1448);
        tp.snd_ssthresh = 10;
        tp.is_cwnd_limited = true;
        let mut v = Veno::new(&ParamValues::default());
        v.init(&mut tp);
        let s = |ms: u64| AckSample { pkts_acked: 1, rtt_ns: Some(ms * MS), in_flight: 0 };
        v.pkts_acked(&mut tp, &s(base_ms));
        v.pkts_acked(&mut tp, &s(base_ms));
        v.pkts_acked(&mut tp, &s(rtt_ms));
        v.min_rtt = rtt_us(rtt_ms * MS) + 1; // the last window update's minimum is this sample
        v.cong_avoid(&mut tp, 1, 1);
        (v, tp)
    }

    #[test]
    fn backlog_decides_between_four_fifths_and_one_half() {
        // N = cwnd − cwnd·base/rtt, ×2: cwnd 100, base 100 ms (+1 µs):
        //   rtt 102 ms: 200 − 200·100 001/102 001 = 200 − 196 = 4 < 6  → non-congestive,
        //               ssthresh = 100·4/5 = 80
        //   rtt 104 ms: 200 − 200·100 001/104 001 = 200 − 192 = 8 >= 6 → congestive,
        //               ssthresh = 100/2 = 50
        let (mut v, tp) = veno_at(100, 100, 102);
        assert_eq!(v.diff, 4);
        assert_eq!(v.ssthresh(&tp), 80);
        let (mut v, tp) = veno_at(100, 100, 104);
        assert_eq!(v.diff, 8);
        assert_eq!(v.ssthresh(&tp), 50);
        // Small windows keep two segments.
        let tp = TcpCcView::new(2, 1448);
        assert_eq!(v.ssthresh(&tp), 2);
    }

    #[test]
    fn congestive_state_grows_every_other_rtt() {
        // Congestive (N = 8 stays >= 6 at cwnd 101, 102): the counter must reach cwnd, and only
        // every other time it does is cwnd raised — one segment per two RTTs.
        let (mut v, mut tp) = veno_at(100, 100, 104);
        let s = AckSample { pkts_acked: 1, rtt_ns: Some(104 * MS), in_flight: 0 };
        let mut acks = |k: u32, tp: &mut TcpCcView| {
            for _ in 0..k {
                v.pkts_acked(tp, &s);
                v.cong_avoid(tp, 2, 1);
            }
        };
        tp.snd_cwnd_cnt = 100;
        acks(1, &mut tp);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (101, 0));
        // 101 ACKs fill the counter, the 102nd decides: this time no increase.
        acks(102, &mut tp);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (101, 0));
        acks(102, &mut tp);
        assert_eq!(tp.snd_cwnd, 102);
    }

    #[test]
    fn non_congestive_state_grows_like_reno() {
        // N = 4 < 6: cong_avoid_ai, +1 after cwnd acknowledged segments.
        let (mut v, mut tp) = veno_at(100, 100, 102);
        assert_eq!(tp.snd_cwnd_cnt, 1);
        let s = AckSample { pkts_acked: 1, rtt_ns: Some(102 * MS), in_flight: 0 };
        for _ in 0..99 {
            v.pkts_acked(&mut tp, &s);
            v.cong_avoid(&mut tp, 2, 1);
        }
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (101, 0));
    }
}
