//! Scalable TCP: T. Kelly, "Scalable TCP: Improving Performance in Highspeed Wide Area
//! Networks", ACM SIGCOMM CCR 33(2), 2003. In congestion avoidance cwnd grows by a = 0.01
//! segment per acknowledged segment (multiplicative increase: +1% per RTT) and a loss cuts it to
//! (1 − b) = 0.875 of its value, so the time to recover from a loss is independent of the window.
//!
//! Mirrors Linux `net/ipv4/tcp_scalable.c`: one segment per `TCP_SCALABLE_AI_CNT` = 100 segments
//! acknowledged (or per cwnd if cwnd is smaller: Reno's rate at small windows), and
//! ssthresh = max(cwnd − cwnd >> 3, 2).
//!
//! Profile `linux-2.6.22`: `ai` = 0.02. Kernels up to 4.x (checked: 2.6.22's file as carried into
//! 3.0.8) defined `TCP_SCALABLE_AI_CNT` as 50, i.e. one segment per 50 acknowledged; it became
//! 100 — the paper's 0.01 — later.
//!
//! Deviations: 2.6.22 increased when the counter *exceeded* `min(cwnd, 50)` (one segment per 51
//! ACKs); tcplab uses today's `tcp_cong_avoid_ai` counting for every profile.

use super::helpers::{cong_avoid_ai, slow_start_leftover};
use super::params::{Param, ParamValues};
use super::{CongestionOps, TcpCcView};

/// Linux `TCP_SCALABLE_MD_SCALE`: a loss removes cwnd >> 3 = 1/8 (b = 0.125).
const MD_SHIFT: u32 = 3;

pub const PARAMS: &[Param] = &[Param {
    name: "ai",
    default: 0.01,
    min: 0.0001,
    max: 1.0,
    help: "segments added per segment acknowledged in congestion avoidance (Linux TCP_SCALABLE_AI_CNT = 1/ai)",
}];

#[derive(Clone, Copy, Debug)]
pub struct Scalable {
    /// Segments acknowledged per one-segment increase (Linux `TCP_SCALABLE_AI_CNT`).
    ai_cnt: u32,
}

impl Scalable {
    pub fn new(p: &ParamValues) -> Self {
        Scalable { ai_cnt: (1.0 / p.get("ai")).round().max(1.0) as u32 }
    }
}

impl CongestionOps for Scalable {
    fn ssthresh(&mut self, tp: &TcpCcView) -> u32 {
        (tp.snd_cwnd - (tp.snd_cwnd >> MD_SHIFT)).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut TcpCcView, _ack: u32, acked: u32) {
        let Some(acked) = slow_start_leftover(tp, acked) else { return };
        cong_avoid_ai(tp, tp.snd_cwnd.min(self.ai_cnt), acked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn scalable(profile: &[(&'static str, f64)]) -> Scalable {
        Scalable::new(&ParamValues::resolve(PARAMS, profile, &BTreeMap::new(), "t").unwrap())
    }

    fn ca_view(cwnd: u32) -> TcpCcView {
        let mut tp = TcpCcView::new(cwnd, 1448);
        tp.snd_ssthresh = cwnd;
        tp.is_cwnd_limited = true;
        tp
    }

    #[test]
    fn grows_by_a_hundredth_of_a_segment_per_ack() {
        let mut s = scalable(&[]);
        assert_eq!(s.ai_cnt, 100);
        // cwnd 1000: 0.01 per ACK, so 99 ACKs leave it at 1000 and the 100th adds one;
        // 1000 ACKs (one RTT) add 10 = 1%.
        let mut tp = ca_view(1000);
        for i in 0..99 {
            s.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!(tp.snd_cwnd, 1000);
        s.cong_avoid(&mut tp, 99, 1);
        assert_eq!(tp.snd_cwnd, 1001);
        for i in 100..1000 {
            s.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!(tp.snd_cwnd, 1010);
        // Below 100 segments Linux falls back to one segment per cwnd (Reno): 40 ACKs at cwnd 40.
        let mut tp = ca_view(40);
        for i in 0..40 {
            s.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!(tp.snd_cwnd, 41);
    }

    #[test]
    fn cuts_to_seven_eighths() {
        let mut s = scalable(&[]);
        // 1000 − 1000 >> 3 = 1000 − 125 = 875; 100 − 12 = 88 (integer shift); never below 2.
        assert_eq!(s.ssthresh(&ca_view(1000)), 875);
        assert_eq!(s.ssthresh(&ca_view(100)), 88);
        assert_eq!(s.ssthresh(&ca_view(2)), 2);
    }

    #[test]
    fn linux_2_6_22_grew_one_segment_per_fifty() {
        let mut s = scalable(&[("ai", 0.02)]);
        assert_eq!(s.ai_cnt, 50);
        let mut tp = ca_view(1000);
        for i in 0..1000 {
            s.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!(tp.snd_cwnd, 1020);
    }
}
