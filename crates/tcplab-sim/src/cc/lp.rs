//! TCP-LP (Low Priority): A. Kuzmanovic, E. W. Knightly, "TCP-LP: A Distributed Algorithm for
//! Low Priority Data Transfer", IEEE INFOCOM 2003. Mirrors Linux `net/ipv4/tcp_lp.c`.
//!
//! TCP-LP uses only the capacity other (Reno) flows leave: it watches the one-way delay (OWD)
//! of its data, from the timestamp option, and backs off before the queue fills:
//!
//! ```text
//!   sowd = 7/8 sowd + 1/8 owd                       (smoothed OWD; owd_min, owd_max tracked)
//!   early congestion indication: sowd > owd_min + 15% · (owd_max − owd_min)
//!       first indication            → cwnd = cwnd/2, start an inference period of 3·RTT
//!       another within the inference → cwnd = 1
//!   during the inference period: no window growth; otherwise Reno growth
//! ```
//!
//! Losses are Reno's (`tcp_reno_ssthresh`).
//!
//! Deviations:
//! - OWD: Linux computes it from the ACK's TSval (the receiver's clock) and TSecr (the sender's),
//!   estimating the receiver's timestamp clock rate ("remote HZ") from successive ACKs. tcplab's
//!   hosts share one clock, so the rate is known exactly and OWD = TSval − TSecr (the data's
//!   forward delay plus the time the receiver held its ACK); the estimator is skipped. No
//!   approximation by RTT/2 is needed. Like Linux, TCP-LP does nothing without timestamps.
//! - Resolution: OWD, the inference period and the drop time are kept in µs; Linux uses its
//!   timestamp clock (`TCP_TS_HZ`, 1 ms).
//! - Linux has no module parameters for TCP-LP, and neither does tcplab.

use super::params::{Param, ParamValues};
use super::reno::Reno;
use super::{AckSample, CongestionOps, TcpCcView};
use crate::time::Nanos;

pub const PARAMS: &[Param] = &[];

/// Early-congestion threshold: 15 % of the OWD range above its minimum.
const LP_THRESHOLD_PCT: u32 = 15;
/// Inference period: 3 RTTs.
const LP_INFERENCE_RTTS: u64 = 3;

/// Linux's state flags.
const LP_VALID_OWD: u32 = 1 << 1;
const LP_WITHIN_THR: u32 = 1 << 3;
const LP_WITHIN_INF: u32 = 1 << 4;

#[derive(Clone, Debug)]
pub struct Lp {
    flag: u32,
    /// Smoothed OWD << 3, µs.
    sowd: u32,
    /// µs.
    owd_min: u32,
    owd_max: u32,
    owd_max_rsv: u32,
    /// Time of the last early-congestion reduction, µs (0 = none).
    last_drop: u64,
    /// Inference period, µs.
    inference: u64,
}

fn us(ns: Nanos) -> u64 {
    ns / 1000
}

impl Lp {
    pub fn new(_v: &ParamValues) -> Self {
        Lp { flag: 0, sowd: 0, owd_min: u32::MAX, owd_max: 0, owd_max_rsv: 0, last_drop: 0, inference: 0 }
    }

    /// OWD of the data this ACK acknowledges, µs (Linux `tcp_lp_owd_calculator` with the
    /// receiver's clock rate known).
    fn owd(&mut self, tp: &TcpCcView) -> i64 {
        let owd = if tp.rcv_tsval_ns > 0 && tp.rcv_tsecr_ns > 0 {
            (us(tp.rcv_tsval_ns) as i64 - us(tp.rcv_tsecr_ns) as i64).abs()
        } else {
            0
        };
        if owd > 0 {
            self.flag |= LP_VALID_OWD;
        } else {
            self.flag &= !LP_VALID_OWD;
        }
        owd
    }

    /// Linux `tcp_lp_rtt_sample`: record min/max OWD and smooth it.
    fn owd_sample(&mut self, tp: &TcpCcView) {
        let mut mowd = self.owd(tp);
        if self.flag & LP_VALID_OWD == 0 {
            return;
        }
        if mowd < self.owd_min as i64 {
            self.owd_min = mowd as u32;
        }
        // Always forget the largest maximum: keep the one below it.
        if mowd > self.owd_max as i64 {
            if mowd > self.owd_max_rsv as i64 {
                self.owd_max = if self.owd_max_rsv == 0 { mowd as u32 } else { self.owd_max_rsv };
                self.owd_max_rsv = mowd as u32;
            } else {
                self.owd_max = mowd as u32;
            }
        }
        // sowd = 7/8 sowd + 1/8 owd.
        if self.sowd != 0 {
            mowd -= (self.sowd >> 3) as i64;
            self.sowd = (self.sowd as i64 + mowd) as u32;
        } else {
            self.sowd = (mowd << 3) as u32;
        }
    }
}

impl CongestionOps for Lp {
    fn init(&mut self, _tp: &mut TcpCcView) {
        *self = Lp::new(&ParamValues::default());
    }

    fn ssthresh(&mut self, tp: &TcpCcView) -> u32 {
        Reno.ssthresh(tp)
    }

    /// Reno growth, except during an inference period.
    fn cong_avoid(&mut self, tp: &mut TcpCcView, ack: u32, acked: u32) {
        if self.flag & LP_WITHIN_INF == 0 {
            Reno.cong_avoid(tp, ack, acked);
        }
    }

    /// Linux `tcp_lp_pkts_acked`: the early-congestion reaction.
    fn pkts_acked(&mut self, tp: &mut TcpCcView, sample: &AckSample) {
        let now = us(tp.now_ns);
        if sample.rtt_ns.is_some_and(|r| r >= 1000) {
            self.owd_sample(tp);
        }
        // The inference period: 3 RTTs, the RTT from the echoed timestamp.
        let delta = now as i64 - us(tp.rcv_tsecr_ns) as i64;
        if delta > 0 {
            self.inference = LP_INFERENCE_RTTS * delta as u64;
        }
        if self.last_drop != 0 && now - self.last_drop < self.inference {
            self.flag |= LP_WITHIN_INF;
        } else {
            self.flag &= !LP_WITHIN_INF;
        }
        // Within the threshold? (32-bit arithmetic as in Linux: before any sample the range
        // wraps to 1 and the threshold is the maximum.)
        let range = self.owd_max.wrapping_sub(self.owd_min);
        let thr = self.owd_min.wrapping_add(LP_THRESHOLD_PCT.wrapping_mul(range) / 100);
        if self.sowd >> 3 < thr {
            self.flag |= LP_WITHIN_THR;
        } else {
            self.flag &= !LP_WITHIN_THR;
        }
        if self.flag & LP_WITHIN_THR != 0 {
            return;
        }
        // Start the min/max afresh around the current delay.
        self.owd_min = self.sowd >> 3;
        self.owd_max = self.sowd >> 2;
        self.owd_max_rsv = self.sowd >> 2;
        if self.flag & LP_WITHIN_INF != 0 {
            // A second indication within the inference period.
            tp.snd_cwnd = 1;
        } else {
            tp.snd_cwnd = (tp.snd_cwnd >> 1).max(1);
        }
        self.last_drop = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    /// An ACK at `t_ms` for data sent at `sent_ms` that reached the receiver `owd_ms` later.
    fn ack(lp: &mut Lp, tp: &mut TcpCcView, t_ms: u64, sent_ms: u64, owd_ms: u64) {
        tp.now_ns = t_ms * MS;
        tp.rcv_tsecr_ns = sent_ms * MS;
        tp.rcv_tsval_ns = (sent_ms + owd_ms) * MS;
        lp.pkts_acked(tp, &AckSample { pkts_acked: 1, rtt_ns: Some((t_ms - sent_ms) * MS), in_flight: 0 });
    }

    #[test]
    fn owd_is_smoothed_and_an_early_indication_halves_then_a_second_one_resets() {
        let mut tp = TcpCcView::new(100, 1448);
        let mut lp = Lp::new(&ParamValues::default());
        // First sample, OWD 50 ms: min = max = 50 000 µs, sowd = 50 000·8. With no range yet the
        // threshold is min + 15 %·0 = 50 000 and sowd/8 is not below it: Linux treats that as an
        // early indication too and halves cwnd.
        ack(&mut lp, &mut tp, 1000, 900, 50);
        assert_eq!(lp.sowd, 400_000);
        assert_eq!(tp.snd_cwnd, 50);
        // The reset put min = 50 000, max = 100 000: threshold 57 500 µs.
        assert_eq!((lp.owd_min, lp.owd_max), (50_000, 100_000));
        // RTT 100 ms → inference period 300 ms; growth is frozen inside it.
        assert_eq!(lp.inference, 300_000);
        // OWD 58 ms: sowd = 400 000 + (58 000 − 50 000) = 408 000 → 51 000 < 57 500: within.
        ack(&mut lp, &mut tp, 1100, 1000, 58);
        assert_eq!((lp.sowd, tp.snd_cwnd), (408_000, 50));
        assert!(lp.flag & LP_WITHIN_INF != 0);
        tp.is_cwnd_limited = true;
        lp.cong_avoid(&mut tp, 1, 10);
        assert_eq!(tp.snd_cwnd, 50, "no growth during inference");
        // Delay climbs: 100 ms OWD samples until sowd/8 passes min + 15 % of the new range.
        // max becomes 100 000 (rsv) → threshold stays 57 500; sowd/8 after k samples of 100 000:
        // 51 000 → 57 125 → 62 484: the second one inside the inference period cuts cwnd to 1.
        ack(&mut lp, &mut tp, 1150, 1050, 100);
        assert_eq!((lp.sowd >> 3, tp.snd_cwnd), (57_125, 50));
        ack(&mut lp, &mut tp, 1200, 1100, 100);
        assert_eq!(lp.sowd >> 3, 62_484);
        assert_eq!(tp.snd_cwnd, 1);
    }

    #[test]
    fn without_timestamps_it_is_reno() {
        let mut tp = TcpCcView::new(10, 1448);
        tp.is_cwnd_limited = true;
        let mut lp = Lp::new(&ParamValues::default());
        for i in 0..10 {
            tp.now_ns = (i + 1) * 100 * MS;
            lp.pkts_acked(&mut tp, &AckSample { pkts_acked: 1, rtt_ns: Some(100 * MS), in_flight: 0 });
            lp.cong_avoid(&mut tp, i as u32, 1);
        }
        assert_eq!(tp.snd_cwnd, 20);
        assert_eq!(Lp::new(&ParamValues::default()).ssthresh(&tp), 10);
    }
}
