//! Seeded random streams. One master seed; every consumer (a flow's start jitter, a link's loss
//! model, a host's processing jitter, a flow's congestion control) gets its own stream derived from (seed, kind, id), so adding
//! a flow does not shift another flow's randomness.

/// The kinds of random stream. The discriminant is mixed into the stream's seed.
#[derive(Clone, Copy, Debug)]
#[repr(u64)]
pub enum Stream {
    FlowStart = 1,
    LinkLoss = 2,
    HostJitter = 3,
    /// A flow's congestion control (BBR's random start phase of the gain cycle).
    CongestionControl = 4,
    /// A link's queue discipline (RED's early drops), id = link index.
    Queue = 5,
    /// A CBR source's random gaps (ns-2's `random_`), id = flow index.
    CbrGaps = 6,
    /// A TCP receiver's timestamp offset (`TcpSpec::timestamp_offsets`), id = flow index.
    TimestampOffset = 7,
}

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, passes BigCrush; enough for jitter and loss.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    /// The stream `kind`/`id` of a run seeded with `seed`.
    pub fn stream(seed: u64, kind: Stream, id: u32) -> Self {
        let s = mix(seed ^ mix((kind as u64) << 32 | id as u64));
        Rng { state: s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.state)
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n); 0 when n is 0.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            ((self.next_u64() as u128 * n as u128) >> 64) as u64
        }
    }

    /// True with probability `p`.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_independent_and_repeatable() {
        let a1: Vec<u64> = (0..4).map({ let mut r = Rng::stream(7, Stream::FlowStart, 0); move |_| r.next_u64() }).collect();
        let a2: Vec<u64> = (0..4).map({ let mut r = Rng::stream(7, Stream::FlowStart, 0); move |_| r.next_u64() }).collect();
        let b: Vec<u64> = (0..4).map({ let mut r = Rng::stream(7, Stream::FlowStart, 1); move |_| r.next_u64() }).collect();
        let c: Vec<u64> = (0..4).map({ let mut r = Rng::stream(8, Stream::FlowStart, 0); move |_| r.next_u64() }).collect();
        assert_eq!(a1, a2);
        assert_ne!(a1, b);
        assert_ne!(a1, c);
    }

    #[test]
    fn uniform_mean_and_chance() {
        let mut r = Rng::stream(1, Stream::LinkLoss, 3);
        let n = 200_000;
        let mean = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.005, "{mean}");
        let hits = (0..n).filter(|_| r.chance(0.01)).count();
        assert!((hits as f64 / n as f64 - 0.01).abs() < 0.001, "{hits}");
        assert!((0..1000).all(|_| r.below(10) < 10));
    }
}
