//! RTT estimation and the retransmission timer, RFC 6298 as Linux computes it
//! (`tcp_rtt_estimator`, `tcp_set_rto` in net/ipv4/tcp_input.c).

use crate::time::Nanos;

/// Linux's TCP timestamp clock: TSval counts milliseconds (`TCP_TS_HZ` = 1000; microsecond
/// timestamps are an option Linux negotiates only when asked).
pub const TS_TICK_NS: Nanos = 1_000_000;

/// An RTT from an echoed timestamp as Linux measures it (`tcp_rtt_tsopt_us`): whole ticks of
/// the timestamp clock between the echoed TSval and now, at least one. `ts_ecr_ns` is the
/// echoed segment's send time; both ends of the difference are read on the millisecond clock,
/// so a 25.13 ms path gives 25 ms 87% of the time and 26 ms otherwise.
pub fn ts_rtt_ns(now: Nanos, ts_ecr_ns: Nanos) -> Nanos {
    (now / TS_TICK_NS).saturating_sub(ts_ecr_ns / TS_TICK_NS).max(1) * TS_TICK_NS
}

#[derive(Clone, Copy, Debug)]
pub struct RttEstimator {
    /// Smoothed RTT, ns; 0 before the first sample.
    pub srtt_ns: Nanos,
    /// RTT variation, ns.
    pub rttvar_ns: Nanos,
    min_rto_ns: Nanos,
    max_rto_ns: Nanos,
    /// Current RTO before backoff.
    rto_ns: Nanos,
}

impl RttEstimator {
    pub fn new(initial_rto_ns: Nanos, min_rto_ns: Nanos, max_rto_ns: Nanos) -> Self {
        RttEstimator { srtt_ns: 0, rttvar_ns: 0, min_rto_ns, max_rto_ns, rto_ns: initial_rto_ns }
    }

    /// RFC 6298 (2.2) for the first measurement, (2.3) afterwards: rttvar = 3/4 rttvar + 1/4 |srtt − R|,
    /// srtt = 7/8 srtt + 1/8 R. RTO = srtt + max(4·rttvar, min_rto): Linux applies its 200 ms floor
    /// to the variance term (`rttvar_us = max(mdev_max_us, tcp_rto_min_us)`), not to the sum as
    /// RFC 6298 (2.4) does, so an RTT of 100 ms gives an RTO of about 300 ms, as in Linux.
    pub fn sample(&mut self, r: Nanos) {
        let r = r.max(1);
        if self.srtt_ns == 0 {
            self.srtt_ns = r;
            self.rttvar_ns = r / 2;
        } else {
            let err = self.srtt_ns.abs_diff(r);
            self.rttvar_ns = (3 * self.rttvar_ns + err) / 4;
            self.srtt_ns = (7 * self.srtt_ns + r) / 8;
        }
        self.rto_ns = (self.srtt_ns + (4 * self.rttvar_ns).max(self.min_rto_ns)).min(self.max_rto_ns);
    }

    /// The floor of the variance term (Linux's `rto_min`).
    pub fn min_rto_ns(&self) -> Nanos {
        self.min_rto_ns
    }

    /// The timeout after `backoff` consecutive expiries (RFC 6298 (5.5): doubling, capped).
    pub fn rto(&self, backoff: u32) -> Nanos {
        self.rto_ns.saturating_mul(1u64 << backoff.min(20)).min(self.max_rto_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NS_PER_MS;

    #[test]
    fn rfc6298_first_and_later_samples() {
        let mut e = RttEstimator::new(1000 * NS_PER_MS, 200 * NS_PER_MS, 120_000 * NS_PER_MS);
        assert_eq!(e.rto(0), 1000 * NS_PER_MS);
        e.sample(100 * NS_PER_MS);
        assert_eq!((e.srtt_ns, e.rttvar_ns), (100 * NS_PER_MS, 50 * NS_PER_MS));
        // 4·rttvar = 200 ms equals the floor: RTO = 100 + 200 ms.
        assert_eq!(e.rto(0), 300 * NS_PER_MS);
        e.sample(140 * NS_PER_MS);
        // rttvar = (3·50 + 40)/4 = 47.5 ms; srtt = (7·100 + 140)/8 = 105 ms.
        assert_eq!(e.rttvar_ns, 47_500_000);
        assert_eq!(e.srtt_ns, 105 * NS_PER_MS);
        assert_eq!(e.rto(0), 305 * NS_PER_MS);
        assert_eq!(e.rto(2), 1220 * NS_PER_MS);
        assert_eq!(e.rto(30), 120_000 * NS_PER_MS);
    }

    /// Linux `tcp_rtt_tsopt_us`: whole ticks of the millisecond timestamp clock between the
    /// echoed TSval and now. A 25.13 ms path gives 25 ms when sent early in a tick, 26 ms late in
    /// one (the testbed's BBR reports min_rtt 25.000 ms on such a path); never zero.
    #[test]
    fn timestamp_rtts_count_whole_milliseconds() {
        let path = 25_130_000;
        assert_eq!(ts_rtt_ns(500_000 + path, 500_000), 25 * NS_PER_MS);
        assert_eq!(ts_rtt_ns(900_000 + path, 900_000), 26 * NS_PER_MS);
        assert_eq!(ts_rtt_ns(7 * NS_PER_MS + path, 7 * NS_PER_MS), 25 * NS_PER_MS);
        assert_eq!(ts_rtt_ns(3_200_000, 3_100_000), NS_PER_MS);
        assert_eq!(ts_rtt_ns(3_000_000, 3_999_999), NS_PER_MS);
    }
}
