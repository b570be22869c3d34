//! TCP Westwood+: S. Mascolo, C. Casetti, M. Gerla, M. Y. Sanadidi, R. Wang, "TCP Westwood:
//! Bandwidth Estimation for Enhanced Transport over Wireless Links", ACM MobiCom 2001; and
//! L. A. Grieco, S. Mascolo, "Performance Evaluation and Comparison of Westwood+, New Reno, and
//! Vegas TCP Congestion Control", ACM CCR 34(2), 2004 (the "+": one bandwidth sample per RTT).
//! Mirrors Linux `net/ipv4/tcp_westwood.c`.
//!
//! Probing is Reno's. Westwood+ counts the bytes acknowledged in each RTT-long window
//! (at least 50 ms), takes bk/Δt as a bandwidth sample and low-pass filters it twice:
//!
//! ```text
//!   bw_ns_est = (7·bw_ns_est + bk/Δt) / 8      bw_est = (7·bw_est + bw_ns_est) / 8
//!   (bytes per jiffy; the first sample fills both)
//!
//!   after fast recovery (CA_EVENT_COMPLETE_CWR):  ssthresh = cwnd = max(bw_est·RTTmin/MSS, 2)
//!   on a timeout        (CA_EVENT_LOSS):          ssthresh = max(bw_est·RTTmin/MSS, 2)
//! ```
//!
//! Entering recovery still halves (Linux uses `tcp_reno_ssthresh`); the estimate sets where the
//! window lands when recovery ends.
//!
//! Deviations:
//! - Time is counted in jiffies (`helpers::HZ`); RTTs are rounded up to jiffies as
//!   `usecs_to_jiffies` does.
//! - Linux feeds the estimator from `in_ack_event` on every ACK (fast path: snd_una advance; slow
//!   path: also duplicate ACKs, credited one MSS each and debited from the next cumulative ACK).
//!   tcplab has no `in_ack_event`; the same accounting runs from `pkts_acked`, i.e. on every ACK
//!   that acknowledges something (cumulatively or by SACK). A duplicate ACK that SACKs nothing new
//!   is not seen, so its MSS is credited when the cumulative ACK arrives instead.
//! - `bw_est·RTTmin` is computed in 64 bits (Linux: 32 bits, which wraps above ~4·10⁹ bytes).

use super::helpers::{HZ, JIFFY_NS};
use super::params::{Param, ParamValues};
use super::reno::Reno;
use super::{AckSample, CaEvent, CongestionOps, TcpCcView};
use crate::time::Nanos;

pub const PARAMS: &[Param] = &[];

/// Nanoseconds per jiffy.
const NS_PER_JIFFY: Nanos = JIFFY_NS;
/// Shortest bandwidth-sampling window: 50 ms (Linux `TCP_WESTWOOD_RTT_MIN` = HZ/20).
const RTT_MIN_JIFFIES: u32 = HZ / 20;
/// Initial RTT and RTTmin before the first sample: 20 s (Linux `TCP_WESTWOOD_INIT_RTT`).
const INIT_RTT_JIFFIES: u32 = 20 * HZ;

#[derive(Clone, Debug)]
pub struct Westwood {
    /// First filter stage, bytes per jiffy.
    bw_ns_est: u32,
    /// Bandwidth estimate, bytes per jiffy.
    bw_est: u32,
    /// Start of the current sampling window, jiffies.
    rtt_win_sx: u32,
    /// Bytes acknowledged in the current window.
    bk: u32,
    /// snd_una (bytes) already accounted for.
    snd_una: u32,
    cumul_ack: u32,
    /// Bytes credited for duplicate ACKs, not yet debited.
    accounted: u32,
    /// Last RTT sample, jiffies.
    rtt: u32,
    /// Minimum RTT, jiffies.
    rtt_min: u32,
    first_ack: bool,
    /// Take the next RTT sample as RTTmin (after a timeout).
    reset_rtt_min: bool,
}

fn jiffies(ns: Nanos) -> u32 {
    (ns / NS_PER_JIFFY) as u32
}

/// Linux `usecs_to_jiffies`: rounded up.
fn rtt_jiffies(ns: Nanos) -> u32 {
    ns.div_ceil(NS_PER_JIFFY).min(u32::MAX as u64) as u32
}

/// Linux `westwood_do_filter`: 7/8 old + 1/8 new.
#[inline]
fn filter(a: u32, b: u32) -> u32 {
    ((7 * a as u64 + b as u64) >> 3) as u32
}

impl Westwood {
    pub fn new(_v: &ParamValues) -> Self {
        Westwood {
            bw_ns_est: 0,
            bw_est: 0,
            rtt_win_sx: 0,
            bk: 0,
            snd_una: 0,
            cumul_ack: 0,
            accounted: 0,
            rtt: INIT_RTT_JIFFIES,
            rtt_min: INIT_RTT_JIFFIES,
            first_ack: true,
            reset_rtt_min: true,
        }
    }

    /// The bandwidth estimate, bytes per second.
    pub fn bw_bytes_per_s(&self) -> u64 {
        self.bw_est as u64 * 1000
    }

    fn snd_una_bytes(tp: &TcpCcView) -> u32 {
        tp.snd_una.wrapping_mul(tp.mss_bytes)
    }

    /// Linux `westwood_filter`.
    fn filter(&mut self, delta: u32) {
        let sample = self.bk / delta;
        if self.bw_ns_est == 0 && self.bw_est == 0 {
            self.bw_ns_est = sample;
            self.bw_est = sample;
        } else {
            self.bw_ns_est = filter(self.bw_ns_est, sample);
            self.bw_est = filter(self.bw_est, self.bw_ns_est);
        }
    }

    /// Linux `westwood_update_window`: close the sampling window once an RTT (≥ 50 ms) passed.
    fn update_window(&mut self, tp: &TcpCcView) {
        let now = jiffies(tp.now_ns);
        let delta = now.wrapping_sub(self.rtt_win_sx);
        if self.first_ack {
            self.snd_una = Self::snd_una_bytes(tp);
            self.first_ack = false;
        }
        if self.rtt != 0 && delta > self.rtt.max(RTT_MIN_JIFFIES) {
            self.filter(delta);
            self.bk = 0;
            self.rtt_win_sx = now;
        }
    }

    fn update_rtt_min(&mut self) {
        if self.reset_rtt_min {
            self.rtt_min = self.rtt;
            self.reset_rtt_min = false;
        } else {
            self.rtt_min = self.rtt_min.min(self.rtt);
        }
    }

    /// Linux `westwood_acked_count`: bytes this ACK stands for, duplicate ACKs included.
    fn acked_count(&mut self, tp: &TcpCcView) -> u32 {
        let mss = tp.mss_bytes;
        let una = Self::snd_una_bytes(tp);
        self.cumul_ack = una.wrapping_sub(self.snd_una);
        if self.cumul_ack == 0 {
            // A duplicate ACK: one segment left the network.
            self.accounted += mss;
            self.cumul_ack = mss;
        }
        if self.cumul_ack > mss {
            // Partial or delayed ACK: debit what duplicate ACKs already credited.
            if self.accounted >= self.cumul_ack {
                self.accounted -= self.cumul_ack;
                self.cumul_ack = mss;
            } else {
                self.cumul_ack -= self.accounted;
                self.accounted = 0;
            }
        }
        self.snd_una = una;
        self.cumul_ack
    }

    /// Linux `tcp_westwood_bw_rttmin`: the window, in segments, that the estimated bandwidth
    /// fills in RTTmin; at least 2.
    pub fn bw_rttmin(&self, tp: &TcpCcView) -> u32 {
        ((self.bw_est as u64 * self.rtt_min as u64) / tp.mss_bytes as u64).max(2).min(u32::MAX as u64) as u32
    }
}

impl CongestionOps for Westwood {
    fn init(&mut self, tp: &mut TcpCcView) {
        *self = Westwood::new(&ParamValues::default());
        self.rtt_win_sx = jiffies(tp.now_ns);
        self.snd_una = Self::snd_una_bytes(tp);
    }

    fn ssthresh(&mut self, tp: &TcpCcView) -> u32 {
        Reno.ssthresh(tp)
    }

    fn cong_avoid(&mut self, tp: &mut TcpCcView, ack: u32, acked: u32) {
        Reno.cong_avoid(tp, ack, acked);
    }

    fn pkts_acked(&mut self, tp: &mut TcpCcView, sample: &AckSample) {
        // Linux `tcp_westwood_ack` (slow path), which runs before `pkts_acked` sees the sample.
        self.update_window(tp);
        self.bk = self.bk.wrapping_add(self.acked_count(tp));
        self.update_rtt_min();
        // Linux `tcp_westwood_pkts_acked`.
        if let Some(rtt) = sample.rtt_ns.filter(|&r| r > 0) {
            self.rtt = rtt_jiffies(rtt);
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpCcView, ev: CaEvent) {
        match ev {
            CaEvent::CompleteCwr => {
                tp.snd_ssthresh = self.bw_rttmin(tp);
                tp.snd_cwnd = tp.snd_ssthresh;
            }
            CaEvent::Loss => {
                tp.snd_ssthresh = self.bw_rttmin(tp);
                // Take RTTmin afresh from the next ACK.
                self.reset_rtt_min = true;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Times below are in jiffies (4 ms at HZ = 250).
    const J: Nanos = NS_PER_JIFFY;

    /// One ACK per `gap` jiffies, each acknowledging `segs` segments of 1000 bytes, RTT `rtt`
    /// jiffies.
    fn feed(w: &mut Westwood, tp: &mut TcpCcView, n: u32, segs: u32, gap: u64, rtt: u64) {
        for _ in 0..n {
            tp.now_ns += gap * J;
            tp.snd_una += segs;
            w.pkts_acked(tp, &AckSample { pkts_acked: segs, rtt_ns: Some(rtt * J), in_flight: 0 });
        }
    }

    #[test]
    fn bandwidth_is_sampled_per_rtt_and_sets_ssthresh_after_recovery() {
        // 1000-byte segments, one per jiffy (1000 bytes/jiffy), RTT 100 jiffies.
        let mut tp = TcpCcView::new(10, 1000);
        let mut w = Westwood::new(&ParamValues::default());
        w.init(&mut tp);
        // First ACK: the window update runs before the ACK's RTT sample is taken, so RTTmin
        // starts from the initial 20 s and becomes 100 jiffies on the next ACK.
        feed(&mut w, &mut tp, 1, 1, 1, 100);
        assert_eq!((w.rtt, w.rtt_min), (100, INIT_RTT_JIFFIES));
        // The window closes on the first ACK more than 100 jiffies after it opened (t = 101):
        // bk = 100 ACKs · 1000 bytes before it → sample 100 000 / 101 = 990 bytes/jiffy, which
        // fills both filter stages.
        feed(&mut w, &mut tp, 100, 1, 1, 100);
        assert_eq!(w.bw_est, 990);
        // ssthresh = cwnd = bw_est·RTTmin/MSS = 990·100/1000 = 99 segments when recovery ends.
        tp.snd_cwnd = 50;
        w.cwnd_event(&mut tp, CaEvent::CompleteCwr);
        assert_eq!((tp.snd_ssthresh, tp.snd_cwnd), (99, 99));
        // The next window (t = 101..202: 101 jiffies, 101 000 bytes) gives 1000 bytes/jiffy:
        // bw_ns_est = (7·990 + 1000)/8 = 991, bw_est = (7·990 + 991)/8 = 990.
        feed(&mut w, &mut tp, 101, 1, 1, 100);
        assert_eq!((w.bw_ns_est, w.bw_est), (991, 990));
    }

    #[test]
    fn duplicate_acks_are_credited_then_debited() {
        let mut tp = TcpCcView::new(10, 1000);
        let mut w = Westwood::new(&ParamValues::default());
        w.init(&mut tp);
        // The first ACK finds nothing new past snd_una (Linux takes snd_una from it) and is
        // credited like a duplicate; a 2-segment ACK debits that credit.
        feed(&mut w, &mut tp, 1, 1, 1, 100);
        assert_eq!(w.accounted, 1000);
        feed(&mut w, &mut tp, 1, 2, 1, 100);
        assert_eq!(w.accounted, 0);
        let bk = w.bk;
        // Three duplicate ACKs (SACKing new data): one MSS each.
        feed(&mut w, &mut tp, 3, 0, 1, 100);
        assert_eq!((w.bk - bk, w.accounted), (3000, 3000));
        // A cumulative ACK for 5 segments after them counts 5000 − 3000.
        feed(&mut w, &mut tp, 1, 5, 1, 100);
        assert_eq!((w.bk - bk, w.accounted), (5000, 0));
    }

    #[test]
    fn a_timeout_sets_ssthresh_from_the_estimate_and_retakes_rtt_min() {
        let mut tp = TcpCcView::new(10, 1000);
        let mut w = Westwood::new(&ParamValues::default());
        w.init(&mut tp);
        // No estimate yet: the floor of two segments.
        w.cwnd_event(&mut tp, CaEvent::Loss);
        assert_eq!(tp.snd_ssthresh, 2);
        feed(&mut w, &mut tp, 1, 1, 1, 80);
        assert_eq!(w.rtt_min, INIT_RTT_JIFFIES);
        feed(&mut w, &mut tp, 1, 1, 1, 120);
        assert_eq!(w.rtt_min, 80);
        w.cwnd_event(&mut tp, CaEvent::Loss);
        // The ACK's own sample arrives after the window update, so the first ACK after the
        // timeout takes the previous sample (120) as the new RTTmin.
        feed(&mut w, &mut tp, 1, 1, 1, 90);
        assert_eq!(w.rtt_min, 120);
        feed(&mut w, &mut tp, 1, 1, 1, 90);
        assert_eq!(w.rtt_min, 90);
    }
}
