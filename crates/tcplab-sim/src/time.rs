//! Simulated time: an integer count of nanoseconds. No floating-point time in the event loop.

/// Nanoseconds since the start of the run.
pub type Nanos = u64;

pub const NS_PER_US: Nanos = 1_000;
pub const NS_PER_MS: Nanos = 1_000_000;
pub const NS_PER_SEC: Nanos = 1_000_000_000;

/// Time to serialise `bytes` onto a link of `rate_bps`, rounded up to a whole nanosecond.
#[inline]
pub fn tx_time_ns(bytes: u32, rate_bps: u64) -> Nanos {
    // An IP packet is under 64 KiB, so bytes · 8·10^9 < 2^53 fits in u64 (a u128 division costs
    // three times as much on the per-packet path).
    debug_assert!(bytes <= 65_535, "{bytes}-byte packet");
    (bytes as u64 * 8 * NS_PER_SEC).div_ceil(rate_bps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialisation_times() {
        // 1500 B at 100 Mb/s = 12,000 bits / 1e8 bit/s = 120 us.
        assert_eq!(tx_time_ns(1500, 100_000_000), 120_000);
        // 1500 B at 1 Gb/s = 12 us.
        assert_eq!(tx_time_ns(1500, 1_000_000_000), 12_000);
        // 64 B at 1.5 Mb/s = 512 bits / 1.5e6 = 341,333.3 ns -> rounded up.
        assert_eq!(tx_time_ns(64, 1_500_000), 341_334);
    }
}
