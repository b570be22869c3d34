//! TCP Hybla: C. Caini, R. Firrincieli, "TCP Hybla: a TCP Enhancement for Heterogeneous
//! Networks", International Journal of Satellite Communications and Networking 22(5), 2004.
//! Mirrors Linux `net/ipv4/tcp_hybla.c`.
//!
//! Hybla makes a long-RTT flow grow, per unit of time, like a flow with the reference RTT0:
//!
//! ```text
//!   rho = max(RTT/RTT0, 1)         (RTT = the smallest smoothed RTT seen; RTT0 = 25 ms)
//!   slow start, per ACK:           cwnd += 2^rho − 1
//!   congestion avoidance, per ACK: cwnd += rho² / cwnd
//! ```
//!
//! rho is kept with 3 fractional bits (`rho_3ls`), rho² with 7 (`rho2_7ls`); increments are in
//! 1/128 segment (`snd_cwnd_cents` carries the fractions), and 2^fraction comes from an 8-entry
//! table (2^(k/8)·128). Outside Open state Hybla grows like Reno. Losses are Reno's.
//!
//! Deviations:
//! - Linux starts Hybla when the connection is established, with the handshake's RTT: rho from
//!   it and cwnd = rho, as here with a `preamble` (its SYN and SYN-ACK give srtt before
//!   `init`). Without a preamble tcplab has no handshake, so at start srtt is unknown;
//!   cwnd keeps the configured initial window and rho is computed from the first smoothed RTT
//!   (the "smallest srtt seen" starts at infinity instead of at the handshake RTT).
//! - Like Linux, the increase is per ACK (a delayed ACK counts once), not per acknowledged
//!   segment.

use super::params::{Param, ParamValues};
use super::reno::Reno;
use super::{CaState, CongestionOps, TcpCcView};
use crate::time::Nanos;

pub const PARAMS: &[Param] = &[Param {
    name: "rtt0",
    default: 25.0,
    min: 1.0,
    max: 10_000.0,
    help: "reference round trip time (ms, whole number)",
}];

/// 2^(k/8) << 7 for k = 0..7: the fractional part of 2^rho.
const FRACTIONS: [u32; 8] = [128, 139, 152, 165, 181, 197, 215, 234];

#[derive(Clone, Debug)]
pub struct Hybla {
    hybla_en: bool,
    /// Fractions of a segment not yet added to cwnd, 1/128 segment.
    snd_cwnd_cents: u32,
    /// rho, integer part.
    rho: u32,
    /// rho², integer part.
    rho2: u32,
    /// rho << 3.
    rho_3ls: u32,
    /// rho² << 7.
    rho2_7ls: u32,
    /// Smallest smoothed RTT seen, ns.
    minrtt_ns: Nanos,
    /// Reference RTT, ms.
    rtt0_ms: u32,
}

/// Linux `hybla_fraction`.
fn fraction(odds: u32) -> u32 {
    FRACTIONS.get(odds as usize).copied().unwrap_or(128)
}

impl Hybla {
    pub fn new(v: &ParamValues) -> Self {
        Self::with_rtt0_ms(v.get("rtt0").round() as u32)
    }

    pub fn with_rtt0_ms(rtt0_ms: u32) -> Self {
        Hybla { hybla_en: true, snd_cwnd_cents: 0, rho: 0, rho2: 0, rho_3ls: 0, rho2_7ls: 0, minrtt_ns: Nanos::MAX, rtt0_ms }
    }

    /// Linux `hybla_recalc_param`: rho·8 = max(8·srtt/RTT0, 8) (Linux's `srtt_us` is 8·srtt in µs).
    fn recalc_param(&mut self, tp: &TcpCcView) {
        let srtt_us_x8 = (tp.srtt_ns / 1000) << 3;
        self.rho_3ls = ((srtt_us_x8 / (self.rtt0_ms as u64 * 1000)).min(u32::MAX as u64) as u32).max(8);
        self.rho = self.rho_3ls >> 3;
        self.rho2_7ls = (self.rho_3ls * self.rho_3ls) << 1;
        self.rho2 = self.rho2_7ls >> 7;
    }
}

impl CongestionOps for Hybla {
    fn init(&mut self, tp: &mut TcpCcView) {
        *self = Self::with_rtt0_ms(self.rtt0_ms);
        tp.snd_cwnd_clamp = 65535;
        if tp.srtt_ns > 0 {
            // Linux: the first rho from the handshake RTT, and cwnd = rho.
            self.recalc_param(tp);
            self.minrtt_ns = tp.srtt_ns;
            tp.snd_cwnd = self.rho;
        }
    }

    fn ssthresh(&mut self, tp: &TcpCcView) -> u32 {
        Reno.ssthresh(tp)
    }

    fn set_state(&mut self, _tp: &mut TcpCcView, new_state: CaState) {
        self.hybla_en = new_state == CaState::Open;
    }

    fn cong_avoid(&mut self, tp: &mut TcpCcView, ack: u32, acked: u32) {
        // Recalculate rho only when this srtt is the lowest.
        if tp.srtt_ns > 0 && tp.srtt_ns < self.minrtt_ns {
            self.recalc_param(tp);
            self.minrtt_ns = tp.srtt_ns;
        }
        if !tp.is_cwnd_limited {
            return;
        }
        if !self.hybla_en {
            Reno.cong_avoid(tp, ack, acked);
            return;
        }
        if self.rho == 0 {
            self.recalc_param(tp);
        }
        let rho_fractions = self.rho_3ls - (self.rho << 3);
        let slow_start = tp.in_slow_start();
        // Increment in 1/128 segment.
        let increment = if slow_start {
            // 2^rho − 1 = 2^int · 2^fract − 1.
            (1u32 << self.rho.min(16)) * fraction(rho_fractions) - 128
        } else {
            // rho² / cwnd.
            let inc = self.rho2_7ls / tp.snd_cwnd;
            if inc < 128 {
                tp.snd_cwnd_cnt += 1;
            }
            inc
        };
        let odd = increment % 128;
        tp.snd_cwnd += increment >> 7;
        self.snd_cwnd_cents += odd;
        // Whole segments from the accumulated fractions.
        while self.snd_cwnd_cents >= 128 {
            tp.snd_cwnd += 1;
            self.snd_cwnd_cents -= 128;
            tp.snd_cwnd_cnt = 0;
        }
        // A window so large that the increment rounds to 0: one segment per window of ACKs.
        if increment == 0 && odd == 0 && tp.snd_cwnd_cnt >= tp.snd_cwnd {
            tp.snd_cwnd += 1;
            tp.snd_cwnd_cnt = 0;
        }
        if slow_start {
            tp.snd_cwnd = tp.snd_cwnd.min(tp.snd_ssthresh);
        }
        tp.snd_cwnd = tp.snd_cwnd.min(tp.snd_cwnd_clamp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn hybla(srtt_ms: u64, cwnd: u32, ssthresh: u32) -> (Hybla, TcpCcView) {
        let mut tp = TcpCcView::new(cwnd, 1448);
        let mut h = Hybla::with_rtt0_ms(25);
        h.init(&mut tp);
        tp.srtt_ns = srtt_ms * MS;
        tp.snd_ssthresh = ssthresh;
        tp.is_cwnd_limited = true;
        (h, tp)
    }

    #[test]
    fn rho_is_rtt_over_rtt0_in_eighths() {
        // 100 ms / 25 ms: rho_3ls = 8·100 000/25 000 = 32 → rho 4, rho²·128 = 32²·2 = 2048 (16).
        let (mut h, mut tp) = hybla(100, 10, 1000);
        h.cong_avoid(&mut tp, 1, 1);
        assert_eq!((h.rho_3ls, h.rho, h.rho2_7ls, h.rho2), (32, 4, 2048, 16));
        // 60 ms: 8·60/25 = 19 → rho 2 and 3/8; rho² = 19²·2/128 = 5.6 → 5.
        let (mut h, mut tp) = hybla(60, 10, 1000);
        h.cong_avoid(&mut tp, 1, 1);
        assert_eq!((h.rho_3ls, h.rho, h.rho2), (19, 2, 5));
        // Shorter than RTT0: rho = 1 (Reno).
        let (mut h, mut tp) = hybla(10, 10, 1000);
        h.cong_avoid(&mut tp, 1, 1);
        assert_eq!((h.rho_3ls, h.rho), (8, 1));
    }

    #[test]
    fn slow_start_adds_two_to_the_rho_minus_one_per_ack() {
        // rho = 4: 2^4 − 1 = 15 segments per ACK (increment 16·128 − 128 = 1920 = 15·128).
        let (mut h, mut tp) = hybla(100, 10, 1000);
        h.cong_avoid(&mut tp, 1, 1);
        assert_eq!(tp.snd_cwnd, 25);
        // rho = 2 3/8: 2^2 · 2^(3/8) = 4·165/128 → increment 4·165 − 128 = 532 = 4 segments
        // + 20/128; the fractions add up to a fifth segment on the 7th ACK (7·20 = 140).
        let (mut h, mut tp) = hybla(60, 10, 1000);
        for i in 1..=6 {
            h.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!(tp.snd_cwnd, 10 + 6 * 4);
        h.cong_avoid(&mut tp, 7, 1);
        assert_eq!(tp.snd_cwnd, 10 + 7 * 4 + 1);
        // Never past ssthresh in slow start.
        let (mut h, mut tp) = hybla(100, 10, 20);
        h.cong_avoid(&mut tp, 1, 1);
        assert_eq!(tp.snd_cwnd, 20);
    }

    #[test]
    fn avoidance_adds_rho_squared_over_cwnd_per_ack() {
        // rho = 4, cwnd 100 (avoidance): increment = 2048/100 = 20/128 segment per ACK, i.e.
        // rho² = 16 segments per window of ACKs instead of Reno's 1. The first 7 ACKs add
        // 7·20 = 140/128 → cwnd 101 with 12/128 left over.
        let (mut h, mut tp) = hybla(100, 100, 50);
        for i in 0..7 {
            h.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!((tp.snd_cwnd, h.snd_cwnd_cents), (101, 12));
        // A window of 100 ACKs in all: the increment shrinks as cwnd grows (2048/cwnd = 20 down to
        // 17): +14 segments with 77/128 left (summing 2048/cwnd step by step).
        for i in 7..100 {
            h.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!((tp.snd_cwnd, h.snd_cwnd_cents), (114, 77));
        // Below RTT0, rho = 1: the increment is 128/cwnd = 128/100 = 1/128 per ACK after Linux's
        // integer division, so +1 segment takes 128 ACKs (Reno: 100).
        let (mut h, mut tp) = hybla(20, 100, 50);
        for i in 0..127 {
            h.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!(tp.snd_cwnd, 100);
        h.cong_avoid(&mut tp, 127, 1);
        assert_eq!(tp.snd_cwnd, 101);
    }

    #[test]
    fn outside_open_it_is_reno() {
        let (mut h, mut tp) = hybla(100, 10, 1000);
        h.set_state(&mut tp, CaState::Disorder);
        h.cong_avoid(&mut tp, 1, 1);
        assert_eq!(tp.snd_cwnd, 11);
    }
}
