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
//! The one-way delay is Linux's, from the ACK's timestamps on the timestamp clock (`TCP_TS_HZ`,
//! 1 ms): each ACK that moves both TSval and TSecr gives an estimate of the receiver's
//! timestamp rate, `remote HZ = 1000·ΔTSval/ΔTSecr`, smoothed 63/64 (`tcp_lp_remote_hz_estimator`),
//! and `owd = TSval·(1000 / remote HZ) − TSecr` (`tcp_lp_owd_calculator`), with Linux's integer
//! types throughout: the products and the difference are 32-bit, so the OWD is never negative,
//! and a remote HZ estimated above 1000 makes `1000 / remote HZ` zero. TSval carries the
//! receiver's timestamp offset (`TcpCcView::peer_ts_offset`, random per connection as Linux's
//! `net.ipv4.tcp_timestamps = 1` draws it, or 0), which is then part of every OWD. After an early
//! indication Linux restarts the minimum and maximum at the smoothed OWD and twice it, so the next
//! threshold is 15 % of the OWD above it: with an offset in the OWD (up to 2^32 ms), a rise of 15 %
//! of the offset. TCP-LP then never backs off early again: it is Reno, as Linux's is on such a
//! connection. (An OWD past 2^29 also wraps the smoothed OWD, 8 OWDs in 32 bits.)
//!
//! Deviations:
//! - The timestamp clocks: TSecr is the simulated time in ms, from 0 at the start of the run;
//!   Linux's runs from boot. Only an OWD taken with a remote HZ above 1000 (`−TSecr`) sees it.
//! - Linux has no module parameters for TCP-LP, and neither does tcplab.

use super::params::{Param, ParamValues};
use super::reno::Reno;
use super::{AckSample, CongestionOps, TcpCcView};
use crate::time::Nanos;

pub const PARAMS: &[Param] = &[];

/// The OWD's unit: the timestamp clock's rate (Linux `LP_RESOL` = `TCP_TS_HZ`, 1 kHz).
const LP_RESOL: u32 = 1000;
/// Early-congestion threshold: 15 % of the OWD range above its minimum.
const LP_THRESHOLD_PCT: u32 = 15;
/// Inference period: 3 RTTs.
const LP_INFERENCE_RTTS: u32 = 3;

/// Linux's state flags.
const LP_VALID_RHZ: u32 = 1 << 0;
const LP_VALID_OWD: u32 = 1 << 1;
const LP_WITHIN_THR: u32 = 1 << 3;
const LP_WITHIN_INF: u32 = 1 << 4;

/// Linux's `struct lp`; times on the timestamp clock (ms).
#[derive(Clone, Debug)]
pub struct Lp {
    flag: u32,
    /// Smoothed OWD << 3.
    sowd: u32,
    owd_min: u32,
    owd_max: u32,
    owd_max_rsv: u32,
    /// The receiver's timestamp rate, Hz.
    remote_hz: u32,
    /// TSval and TSecr of the last ACK seen.
    remote_ref_time: u32,
    local_ref_time: u32,
    /// Time of the last early-congestion reduction (0 = none).
    last_drop: u32,
    /// Inference period.
    inference: u32,
}

/// A time on the timestamp clock: ms, in 32 bits (Linux `tcp_time_stamp_ts`).
fn ts(ns: Nanos) -> u32 {
    (ns / 1_000_000) as u32
}

impl Lp {
    pub fn new(_v: &ParamValues) -> Self {
        Lp {
            flag: 0,
            sowd: 0,
            owd_min: u32::MAX,
            owd_max: 0,
            owd_max_rsv: 0,
            remote_hz: 0,
            remote_ref_time: 0,
            local_ref_time: 0,
            last_drop: 0,
            inference: 0,
        }
    }

    /// The ACK's TSval as the receiver wrote it (its clock plus its offset) and its TSecr (this
    /// host's clock: Linux takes the offset off on receipt).
    fn stamps(tp: &TcpCcView) -> (u32, u32) {
        let tsval = if tp.rcv_tsval_ns > 0 { ts(tp.rcv_tsval_ns).wrapping_add(tp.peer_ts_offset) } else { 0 };
        (tsval, ts(tp.rcv_tsecr_ns))
    }

    /// Linux `tcp_lp_remote_hz_estimator`.
    fn estimate_remote_hz(&mut self, tsval: u32, tsecr: u32) -> u32 {
        let mut rhz = (self.remote_hz << 6) as i64;
        if self.remote_ref_time != 0 && self.local_ref_time != 0 && tsval != self.remote_ref_time && tsecr != self.local_ref_time {
            // 32-bit, as in Linux: never negative.
            let m = (LP_RESOL.wrapping_mul(tsval.wrapping_sub(self.remote_ref_time)) / tsecr.wrapping_sub(self.local_ref_time)) as i64;
            if rhz > 0 {
                rhz += m - (rhz >> 6); // 63/64 old + 1/64 new
            } else {
                rhz = m << 6;
            }
        }
        if rhz >> 6 > 0 {
            self.flag |= LP_VALID_RHZ;
        } else {
            self.flag &= !LP_VALID_RHZ;
        }
        self.remote_ref_time = tsval;
        self.local_ref_time = tsecr;
        (rhz >> 6) as u32
    }

    /// Linux `tcp_lp_owd_calculator`: the OWD of the data this ACK acknowledges, a 32-bit
    /// difference.
    fn owd(&mut self, tp: &TcpCcView) -> u32 {
        let (tsval, tsecr) = Self::stamps(tp);
        self.remote_hz = self.estimate_remote_hz(tsval, tsecr);
        let owd = if self.flag & LP_VALID_RHZ != 0 { tsval.wrapping_mul(LP_RESOL.checked_div(self.remote_hz).unwrap_or(0)).wrapping_sub(tsecr) } else { 0 };
        if owd > 0 {
            self.flag |= LP_VALID_OWD;
        } else {
            self.flag &= !LP_VALID_OWD;
        }
        owd
    }

    /// Linux `tcp_lp_rtt_sample`: record min/max OWD and smooth it.
    fn owd_sample(&mut self, tp: &TcpCcView) {
        let mowd = self.owd(tp);
        if self.flag & LP_VALID_RHZ == 0 || self.flag & LP_VALID_OWD == 0 {
            return;
        }
        self.owd_min = self.owd_min.min(mowd);
        // Always forget the largest maximum: keep the one below it.
        if mowd > self.owd_max {
            if mowd > self.owd_max_rsv {
                self.owd_max = if self.owd_max_rsv == 0 { mowd } else { self.owd_max_rsv };
                self.owd_max_rsv = mowd;
            } else {
                self.owd_max = mowd;
            }
        }
        // sowd = 7/8 sowd + 1/8 owd, in 64 bits and kept in 32 (it wraps past 2^32).
        let mowd = mowd as i64;
        self.sowd = if self.sowd != 0 { (self.sowd as i64 + mowd - (self.sowd >> 3) as i64) as u32 } else { (mowd << 3) as u32 };
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
        let now = ts(tp.now_ns);
        if sample.rtt_ns.is_some_and(|r| r >= 1000) {
            self.owd_sample(tp);
        }
        // The inference period: 3 RTTs, the RTT from the echoed timestamp.
        let delta = now.wrapping_sub(ts(tp.rcv_tsecr_ns));
        if (delta as i32) > 0 {
            self.inference = LP_INFERENCE_RTTS.wrapping_mul(delta);
        }
        if self.last_drop != 0 && now.wrapping_sub(self.last_drop) < self.inference {
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

    /// An ACK at `t_ms` for data sent at `sent_ms` that reached the receiver `owd_ms` later
    /// (the receiver's TSval: its clock then, plus `tp.peer_ts_offset`).
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
        // The first ACK only records its stamps: no remote HZ yet, so no OWD.
        ack(&mut lp, &mut tp, 1000, 900, 50);
        assert_eq!((lp.flag & LP_VALID_RHZ, lp.sowd, tp.snd_cwnd), (0, 0, 100));
        // Both stamps moved by 1: remote HZ 1000·1/1 = 1000, OWD 951 − 901 = 50 ms, min = max = 50,
        // sowd = 400. With no range yet the threshold is min + 15 %·0 = 50 and sowd/8 is not
        // below it: Linux treats that as an early indication too and halves cwnd.
        ack(&mut lp, &mut tp, 1001, 901, 50);
        assert_eq!((lp.remote_hz, lp.sowd, tp.snd_cwnd), (1000, 400, 50));
        // The reset put min = 50, max = 100: threshold 57 ms.
        assert_eq!((lp.owd_min, lp.owd_max), (50, 100));
        // RTT 100 ms → inference period 300 ms; growth is frozen inside it.
        assert_eq!(lp.inference, 300);
        // OWD 58 ms on an ACK whose TSecr has not moved (no new remote-HZ sample):
        // sowd = 400 + (58 − 50) = 408 → 51 < 57: within.
        ack(&mut lp, &mut tp, 1101, 901, 58);
        assert_eq!((lp.remote_hz, lp.sowd, tp.snd_cwnd), (1000, 408, 50));
        assert!(lp.flag & LP_WITHIN_INF != 0);
        tp.is_cwnd_limited = true;
        lp.cong_avoid(&mut tp, 1, 10);
        assert_eq!(tp.snd_cwnd, 50, "no growth during inference");
        // Delay climbs to 100 ms: sowd/8 51 → 57 (not below 57): a second indication inside the
        // inference period cuts cwnd to 1.
        ack(&mut lp, &mut tp, 1150, 901, 100);
        assert_eq!((lp.sowd >> 3, tp.snd_cwnd), (57, 1));
    }

    #[test]
    fn remote_hz_above_1000_leaves_only_minus_tsecr() {
        let mut tp = TcpCcView::new(100, 1448);
        let mut lp = Lp::new(&ParamValues::default());
        ack(&mut lp, &mut tp, 1000, 900, 50);
        ack(&mut lp, &mut tp, 1001, 901, 50);
        assert_eq!(lp.remote_hz, 1000);
        // The delay grows by 1 ms between two ACKs 1 ms apart: ΔTSval 2, ΔTSecr 1, a sample of
        // 2000 Hz; 63/64 · 1000 + 1/64 · 2000 = 1015. 1000 / 1015 is 0 in integers, so the OWD
        // is 0 − TSecr in 32 bits.
        tp.rcv_tsecr_ns = 902 * MS;
        tp.rcv_tsval_ns = 953 * MS;
        assert_eq!(lp.owd(&tp), 902u32.wrapping_neg());
        assert_eq!(lp.remote_hz, 1015);
        // Linux keeps the estimate without its fraction (remote_hz, not remote_hz << 6), so each
        // sample of 1000 Hz takes 1 Hz off (⌊(1015·64 − 15) / 64⌋ = 1014): 15 ACKs. (By the same
        // rounding a sample moves it up only if it is 64 Hz or more above it.)
        let mut n = 0;
        while lp.remote_hz > 1000 {
            n += 1;
            ack(&mut lp, &mut tp, 1002 + n, 902 + n, 51);
        }
        assert_eq!(n, 15);
    }

    #[test]
    fn with_the_receivers_timestamp_offset_in_the_owd_lp_backs_off_once_at_most() {
        // The same delays, climbing from 50 ms to 500 ms on ACKs that leave the remote-HZ estimate
        // at 1000, with the receiver's offset 0, 10^7 (2.8 hours) and 3·2^30.
        let cuts = |offset: u32| {
            let mut tp = TcpCcView::new(100, 1448);
            tp.peer_ts_offset = offset;
            let mut lp = Lp::new(&ParamValues::default());
            ack(&mut lp, &mut tp, 1000, 900, 50);
            ack(&mut lp, &mut tp, 1001, 901, 50);
            let first = tp.snd_cwnd;
            for owd in 51..=500 {
                ack(&mut lp, &mut tp, 1001 + owd, 901, owd);
            }
            (first, tp.snd_cwnd, lp.sowd >> 3, lp.owd_min)
        };
        let (first, last, _, _) = cuts(0);
        assert_eq!((first, last), (50, 1), "without an offset the rising delay backs it off");
        // The first sample is an indication (no range yet); its reset puts min = 10^7 + 50 and
        // max = twice that, and the threshold 1.5·10^6 ms above the minimum is never reached.
        let (first, last, _, min) = cuts(10_000_000);
        assert_eq!((first, last, min), (50, 50, 10_000_050));
        // OWD = 3·2^30 + 50: sowd = 8 OWDs wraps to 400, and sowd/8 stays below 2^29 while the
        // minimum is above 3·2^30: not even the first sample is an indication.
        let (first, last, sowd, min) = cuts(3 << 30);
        assert_eq!((first, last), (100, 100));
        assert!(sowd < 1 << 29 && min == (3 << 30) + 50, "sowd/8 {sowd}, min {min}");
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
