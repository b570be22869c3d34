//! A UDP constant-bit-rate source with a piecewise-constant rate schedule (e.g. 1 → 10 Mb/s in
//! 0.1 Mb/s steps, as in `002_ead9e99b0a1c2aa9.txt`), and its sink.

use crate::ids::{FlowId, NodeId};
use crate::measure::Histogram;
use crate::net::packet::{Kind, Packet};
use crate::rng::Rng;
use crate::spec::CbrSpec;
use crate::time::{tx_time_ns, Nanos};

#[derive(Debug)]
pub struct CbrSource {
    flow: FlowId,
    dst: NodeId,
    packet_bytes: u32,
    dscp: u8,
    /// (time_ns, rate_bps), absolute simulation times.
    schedule: Vec<(Nanos, u64)>,
    next_seq: u32,
    /// With ns-2's `random_`: the draws of each gap.
    gaps: Option<Rng>,
    pub active: bool,
    pub sent_pkts: u64,
    pub sent_bytes: u64,
}

#[derive(Debug, Default)]
pub struct CbrSink {
    pub delivered_pkts: u64,
    pub bytes: u64,
    pub owd: Histogram,
}

impl CbrSource {
    /// The source of `spec`; `rng` draws its gaps when `spec.random`.
    pub fn new(flow: FlowId, dst: NodeId, spec: &CbrSpec, rng: Rng) -> Self {
        CbrSource {
            flow,
            dst,
            packet_bytes: spec.packet_bytes,
            dscp: spec.dscp,
            schedule: spec.schedule.clone(),
            next_seq: 0,
            gaps: spec.random.then_some(rng),
            active: false,
            sent_pkts: 0,
            sent_bytes: 0,
        }
    }

    /// The rate in force at `now`, and when the next step begins.
    fn rate_at(&self, now: Nanos) -> (u64, Option<Nanos>) {
        let i = self.schedule.partition_point(|&(t, _)| t <= now);
        let rate = if i == 0 { 0 } else { self.schedule[i - 1].1 };
        (rate, self.schedule.get(i).map(|&(t, _)| t))
    }

    /// Send one datagram if the rate is positive; returns when to call again.
    pub fn send(&mut self, now: Nanos, out: &mut Vec<Packet>) -> Option<Nanos> {
        if !self.active {
            return None;
        }
        let (rate, next_step) = self.rate_at(now);
        if rate == 0 {
            return next_step;
        }
        let mut p = Packet::new(self.flow, self.dst, Kind::Udp, self.packet_bytes);
        p.seq = self.next_seq;
        p.set_dscp(self.dscp);
        p.ts_val_ns = now;
        self.next_seq += 1;
        self.sent_pkts += 1;
        self.sent_bytes += self.packet_bytes as u64;
        out.push(p);
        let gap = tx_time_ns(self.packet_bytes, rate);
        Some(now + match &mut self.gaps {
            // ns-2 `CBR_Traffic::next_interval`: interval_ · (1 + U(−0.5, 0.5)).
            Some(rng) => (gap as f64 * (0.5 + rng.uniform())).round() as Nanos,
            None => gap,
        })
    }
}

impl CbrSink {
    pub fn on_datagram(&mut self, p: &Packet, now: Nanos) {
        self.delivered_pkts += 1;
        self.bytes += p.size_bytes as u64;
        self.owd.record(now.saturating_sub(p.ts_val_ns));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_the_schedule() {
        let spec = CbrSpec { src: 0, dst: 1, dscp: 0, start_ns: 0, stop_ns: None, packet_bytes: 1000, schedule: vec![(0, 1_000_000), (1_000_000_000, 2_000_000)], random: false };
        let mut s = CbrSource::new(FlowId(0), NodeId(1), &spec, Rng::stream(1, crate::rng::Stream::CbrGaps, 0));
        s.active = true;
        let mut out = vec![];
        // 1000 B at 1 Mb/s: one every 8 ms.
        assert_eq!(s.send(0, &mut out), Some(8_000_000));
        assert_eq!(s.send(1_000_000_000, &mut out), Some(1_004_000_000));
        assert_eq!(out.len(), 2);
    }

    /// ns-2's `random_`: every gap within [0.5, 1.5) of the mean, the mean rate kept (100 000
    /// datagrams of 1000 B at 8 Mb/s: 1 ms apart on average, within 0.5%), the same gaps for the
    /// same seed and different ones for another.
    #[test]
    fn random_gaps_keep_the_rate() {
        let spec = CbrSpec { src: 0, dst: 1, dscp: 0, start_ns: 0, stop_ns: None, packet_bytes: 1000, schedule: vec![(0, 8_000_000)], random: true };
        let gaps = |seed: u64| {
            let mut s = CbrSource::new(FlowId(0), NodeId(1), &spec, Rng::stream(seed, crate::rng::Stream::CbrGaps, 0));
            s.active = true;
            let (mut out, mut now, mut gaps) = (vec![], 0, vec![]);
            for _ in 0..100_000 {
                let next = s.send(now, &mut out).unwrap();
                gaps.push(next - now);
                now = next;
            }
            gaps
        };
        let g = gaps(1);
        assert!(g.iter().all(|&x| (500_000..=1_500_000).contains(&x)));
        let mean = g.iter().sum::<u64>() as f64 / g.len() as f64;
        assert!((mean - 1e6).abs() < 5e3, "mean gap {mean} ns");
        assert_eq!(g, gaps(1));
        assert_ne!(g, gaps(2));
    }
}
