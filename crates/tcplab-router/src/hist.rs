//! A log-linear histogram of nanosecond values: exact below 1024 ns, then 64 buckets per power of
//! two (within 1.6 %), fixed size, so recording allocates nothing. The maximum is kept exactly.

const LINEAR: u64 = 1024;
const SUB_BITS: u32 = 6;
const SUB: usize = 1 << SUB_BITS;
/// Linear part, then 64 buckets for each power of two from 2^10 to 2^63.
const BUCKETS: usize = LINEAR as usize + (64 - 10) * SUB;

#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Box<[u64]>,
    n: u64,
    max: u64,
    sum: u128,
}

fn bucket(v: u64) -> usize {
    if v < LINEAR {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // ≥ 10
    let m = (v >> (e - SUB_BITS)) as usize & (SUB - 1);
    LINEAR as usize + (e as usize - 10) * SUB + m
}

/// The smallest value that falls in bucket `b`.
fn lower(b: usize) -> u64 {
    if b < LINEAR as usize {
        return b as u64;
    }
    let e = (b - LINEAR as usize) / SUB + 10;
    let m = ((b - LINEAR as usize) % SUB) as u64;
    (1u64 << e) + (m << (e as u32 - SUB_BITS))
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new()
    }
}

impl Histogram {
    pub fn new() -> Histogram {
        Histogram { counts: vec![0; BUCKETS].into_boxed_slice(), n: 0, max: 0, sum: 0 }
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[bucket(v)] += 1;
        self.n += 1;
        self.max = self.max.max(v);
        self.sum += v as u128;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    /// The value at quantile `q` in [0, 1] (its bucket's lower bound, never above the maximum); 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return lower(b).min(self.max);
            }
        }
        self.max
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.n += other.n;
        self.max = self.max.max(other.max);
        self.sum += other.sum;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_exact_below_1024_and_within_two_percent_above() {
        for v in [0u64, 1, 1023, 1024, 1500, 65_537, 1_000_000, 123_456_789, u64::MAX / 3] {
            let lo = lower(bucket(v));
            assert!(lo <= v, "{v}: lower bound {lo}");
            assert!((v - lo) as f64 <= v as f64 / 64.0, "{v}: lower bound {lo}");
            if v < 1024 {
                assert_eq!(lo, v);
            }
        }
        assert!(bucket(u64::MAX) < BUCKETS);
    }

    #[test]
    fn quantiles_of_a_known_sample() {
        let mut h = Histogram::new();
        for v in 1..=1000u64 {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), 500);
        assert_eq!(h.quantile(0.99), 990);
        assert_eq!(h.quantile(0.999), 999);
        assert_eq!(h.quantile(1.0), 1000);
        assert_eq!(h.max(), 1000);
        assert!((h.mean() - 500.5).abs() < 1e-9);
    }
}
