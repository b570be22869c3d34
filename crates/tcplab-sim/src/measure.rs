//! Fixed-size measurement: a log-linear histogram for delays (percentiles without storing samples).

/// Sub-buckets per power of two: relative error of a percentile below 1/16.
const SUB_BITS: u32 = 4;
const SUB: usize = 1 << SUB_BITS;
const BUCKETS: usize = 64 * SUB;

/// Histogram of non-negative integers (nanoseconds), HDR-style: exact below 16, then 16 linear
/// sub-buckets per power of two.
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Box<[u64; BUCKETS]>,
    n: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: Box::new([0; BUCKETS]), n: 0, sum: 0, min: u64::MAX, max: 0 }
    }
}

#[inline]
fn bucket(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // v in [2^e, 2^(e+1)), e >= SUB_BITS
    let sub = (v >> (e - SUB_BITS)) as usize & (SUB - 1);
    (e - SUB_BITS + 1) as usize * SUB + sub
}

/// The lowest value that falls into bucket `b`.
fn bucket_low(b: usize) -> u64 {
    if b < SUB {
        return b as u64;
    }
    let e = (b / SUB) as u32 + SUB_BITS - 1;
    let sub = (b % SUB) as u64;
    (1u64 << e) | (sub << (e - SUB_BITS))
}

impl Histogram {
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[bucket(v)] += 1;
        self.n += 1;
        self.sum += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 { f64::NAN } else { self.sum as f64 / self.n as f64 }
    }

    pub fn min(&self) -> f64 {
        if self.n == 0 { f64::NAN } else { self.min as f64 }
    }

    pub fn max(&self) -> f64 {
        if self.n == 0 { f64::NAN } else { self.max as f64 }
    }

    /// The q-quantile (0 ≤ q ≤ 1), as the midpoint of its bucket, clamped to [min, max].
    pub fn quantile(&self, q: f64) -> f64 {
        if self.n == 0 {
            return f64::NAN;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        if rank == self.n {
            return self.max as f64;
        }
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let lo = bucket_low(b);
                let hi = if b + 1 < BUCKETS { bucket_low(b + 1) } else { u64::MAX };
                let mid = lo as f64 + (hi - lo) as f64 / 2.0;
                return mid.clamp(self.min as f64, self.max as f64);
            }
        }
        self.max as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotone_and_cover() {
        let mut last = 0;
        for v in [0u64, 1, 15, 16, 17, 31, 32, 33, 1000, 1 << 20, u64::MAX / 2, u64::MAX] {
            let b = bucket(v);
            assert!(b >= last && b < BUCKETS, "{v} -> {b}");
            assert!(bucket_low(b) <= v, "{v}: low {} of bucket {b}", bucket_low(b));
            last = b;
        }
    }

    #[test]
    fn quantiles_within_bucket_error() {
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        assert_eq!(h.count(), 100_000);
        assert!((h.mean() - 50_000_500.0).abs() < 1.0);
        for (q, exact) in [(0.5, 50_000_000.0), (0.99, 99_000_000.0)] {
            let got = h.quantile(q);
            assert!((got - exact).abs() / exact < 1.0 / 16.0, "q{q}: {got} vs {exact}");
        }
        assert_eq!(h.quantile(1.0), 100_000_000.0);
        assert_eq!(h.min(), 1000.0);
    }
}
