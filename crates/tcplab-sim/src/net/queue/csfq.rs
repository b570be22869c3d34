//! Core-Stateless Fair Queueing (Stoica, Shenker and Zhang, "Core-Stateless Fair Queueing:
//! Achieving Approximately Fair Bandwidth Allocations in High Speed Networks", SIGCOMM 1998), as
//! the authors' ns-2 code runs it (the `estimateRate` / `estimateAlpha` routines and their
//! constants), so that paper 004's studies can be reproduced:
//!
//! - **Edge.** Each flow's arrival rate is averaged exponentially over its packets:
//!   r ← (1 − e^(−T/K))·l/T + e^(−T/K)·r, T the gap since the flow's previous packet (since 0 for
//!   its first), l the packet's size. Packets arriving at the same instant are added to the next
//!   sample. The packet is labelled with r. tcplab labels a packet at the first CSFQ queue on its
//!   path (that queue is its edge); later CSFQ queues use the label it carries. Acknowledgements
//!   carry no label ([`Packet::csfq_label`]): every CSFQ queue estimates their flows afresh.
//! - **Core.** An arrival labelled r is dropped with probability max(0, 1 − α/r), α the link's
//!   fair share (nothing is dropped while α is 0); a packet kept with r > α leaves labelled α.
//! - **The fair share.** The aggregate arrival rate A and accepted rate F are averaged as a flow's
//!   rate is, over every arrival, with the constant Kc. While A ≥ C (the link's rate), every Kc
//!   α ← min(α·C/F, C). While A < C, α becomes the largest label seen over each Kc, and is set back
//!   to 0 (no drops) when the queue is then below its threshold. A change between the two states
//!   starts a new Kc. At start, and after such a reset, α stays 0 until the queue reaches the
//!   threshold; it then starts from the largest label seen meanwhile (C/2 if none).
//! - **The buffer.** An arrival the buffer cannot hold is dropped and cuts α by 1%, at most 30
//!   times in a Kc (0.99³⁰ ≈ 0.74: the paper's "at most 25%"; ns-2's `KALPHA` 29,
//!   post-decremented). The count starts again with each Kc of congestion.
//!
//! Flow weights, the ns-2 code's penalty box and its `SRCID` keying are not modelled.

use super::droptail::DropTail;
use super::source_key;
use super::QueueDisc;
use crate::net::packet::Packet;
use crate::rng::Rng;
use crate::spec::CsfqSpec;
use crate::time::{Nanos, NS_PER_SEC};

/// α's cuts on buffer overflow allowed per congested period, less one (ns-2's `KALPHA`).
const KALPHA: i32 = 29;

/// One flow's rate as its edge estimates it.
#[derive(Clone, Copy, Debug, Default)]
struct FlowRate {
    /// bit/s.
    rate: f64,
    last_ns: Nanos,
    /// Bytes of packets that arrived at `last_ns`, not yet in `rate`.
    pending: u64,
}

#[derive(Debug)]
pub struct Csfq {
    k_ns: f64,
    kc_ns: Nanos,
    link_bps: f64,
    /// The queue's threshold as a fraction of its limit.
    thresh: f64,
    flows: Vec<FlowRate>,
    /// The fair share α, bit/s; 0: no drops.
    alpha: f64,
    /// The largest label seen in the current uncongested Kc (or while α is 0).
    tmp_alpha: f64,
    /// The aggregate arrival rate A and accepted rate F, bit/s.
    rate_total: f64,
    rate_accepted: f64,
    last_arrival_ns: Nanos,
    pending_total: u64,
    pending_accepted: u64,
    congested: bool,
    /// When the current Kc began.
    window_ns: Nanos,
    kalpha: i32,
    rng: Rng,
    drops: u64,
}

impl Csfq {
    pub fn new(spec: &CsfqSpec, rate_bps: u64, rng: Rng) -> Self {
        Csfq {
            k_ns: spec.k_ns as f64,
            kc_ns: spec.kc_ns,
            link_bps: rate_bps as f64,
            thresh: spec.threshold,
            flows: Vec::new(),
            alpha: 0.0,
            tmp_alpha: 0.0,
            rate_total: 0.0,
            rate_accepted: 0.0,
            last_arrival_ns: 0,
            pending_total: 0,
            pending_accepted: 0,
            congested: true,
            window_ns: 0,
            kalpha: KALPHA,
            rng,
            drops: 0,
        }
    }

    /// Arrivals dropped by their label (not counting the buffer's drops).
    pub fn drops(&self) -> u64 {
        self.drops
    }

    /// The fair share α, bit/s (0 while CSFQ drops nothing).
    pub fn alpha_bps(&self) -> f64 {
        self.alpha
    }


    /// The edge's estimate of `pkt`'s flow after this arrival (`estimateRate`), bit/s.
    fn estimate_rate(&mut self, pkt: &Packet, now: Nanos) -> f64 {
        let k = source_key(pkt);
        if k >= self.flows.len() {
            self.flows.resize(k + 1, FlowRate::default());
        }
        let f = &mut self.flows[k];
        let size = pkt.size_bytes as u64;
        if now == f.last_ns {
            f.pending += size;
            return f.rate;
        }
        let t = (now - f.last_ns) as f64;
        let bits = ((f.pending + size) * 8) as f64;
        let w = (-t / self.k_ns).exp();
        f.rate = (1.0 - w) * bits * NS_PER_SEC as f64 / t + w * f.rate;
        f.pending = 0;
        f.last_ns = now;
        f.rate
    }

    /// `estimateAlpha`: account for an arrival of `size` bytes labelled `label`, `accepted` or
    /// not, with the queue at `fill` of its limit.
    fn estimate_alpha(&mut self, size: u32, label: f64, accepted: bool, fill: f64, now: Nanos) {
        if self.last_arrival_ns == 0 {
            self.last_arrival_ns = now;
        }
        self.pending_total += size as u64;
        if accepted {
            self.pending_accepted += size as u64;
        }
        if now == self.last_arrival_ns {
            return;
        }
        let t = (now - self.last_arrival_ns) as f64;
        let w = (-t / self.kc_ns as f64).exp();
        let per_s = 8.0 * NS_PER_SEC as f64 / t;
        self.rate_total = (1.0 - w) * self.pending_total as f64 * per_s + w * self.rate_total;
        self.rate_accepted = (1.0 - w) * self.pending_accepted as f64 * per_s + w * self.rate_accepted;
        self.last_arrival_ns = now;
        self.pending_total = 0;
        self.pending_accepted = 0;

        let below = fill < self.thresh;
        if self.alpha == 0.0 {
            if below {
                self.tmp_alpha = self.tmp_alpha.max(label);
                return;
            }
            self.alpha = self.tmp_alpha;
            if self.alpha == 0.0 {
                self.alpha = self.link_bps / 2.0;
            }
            self.tmp_alpha = 0.0;
        }
        if self.rate_total >= self.link_bps {
            if !self.congested {
                self.congested = true;
                self.window_ns = now;
                self.kalpha = KALPHA;
            } else if now >= self.window_ns + self.kc_ns {
                self.window_ns = now;
                self.kalpha = KALPHA;
                self.alpha = (self.alpha * self.link_bps / self.rate_accepted).min(self.link_bps);
            }
        } else if self.congested {
            self.congested = false;
            self.window_ns = now;
            self.tmp_alpha = 0.0;
        } else if now < self.window_ns + self.kc_ns {
            self.tmp_alpha = self.tmp_alpha.max(label);
        } else {
            self.alpha = self.tmp_alpha;
            self.window_ns = now;
            if below {
                self.alpha = 0.0;
            } else {
                self.tmp_alpha = 0.0;
            }
        }
    }

    /// An arrival: label it, and keep it (`Ok`, relabelled, with room in `fifo` to take it) or
    /// drop it (`Err`).
    fn admit(&mut self, pkt: &mut Packet, fill: f64, full: bool, now: Nanos) -> bool {
        let label = match pkt.csfq_label() {
            Some(l) => l as f64,
            None => {
                let r = self.estimate_rate(pkt, now);
                pkt.set_csfq_label(r as f32);
                r
            }
        };
        let p = if self.alpha > 0.0 && label > 0.0 { 1.0 - self.alpha / label } else { 0.0 };
        if p > 0.0 && self.rng.uniform() < p {
            self.estimate_alpha(pkt.size_bytes, label, false, fill, now);
            self.drops += 1;
            return false;
        }
        self.estimate_alpha(pkt.size_bytes, label, !full, fill, now);
        if p > 0.0 {
            pkt.set_csfq_label(self.alpha as f32);
        }
        if full {
            if self.kalpha >= 0 {
                self.alpha *= 0.99;
            }
            self.kalpha -= 1;
            return false;
        }
        true
    }

    /// An arrival at `fifo`.
    pub fn enqueue(&mut self, fifo: &mut DropTail, mut pkt: Packet, now: Nanos) -> Result<(), Packet> {
        let full = fifo.is_full_for(pkt.size_bytes);
        if self.admit(&mut pkt, fifo.fill(), full, now) {
            fifo.enqueue(pkt, now)
        } else {
            Err(pkt)
        }
    }

    /// An arrival to an idle link and an empty queue: `false` if its label drops it.
    pub fn pass(&mut self, pkt: &mut Packet, now: Nanos) -> bool {
        self.admit(pkt, 0.0, false, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Kind;
    use crate::ids::{FlowId, NodeId};
    use crate::rng::Stream;

    const MS: Nanos = 1_000_000;

    fn csfq(rate_bps: u64) -> Csfq {
        Csfq::new(&CsfqSpec::default(), rate_bps, Rng::stream(1, Stream::Queue, 0))
    }

    fn udp(flow: u32, size: u32) -> Packet {
        Packet::new(FlowId(flow), NodeId(1), Kind::Udp, size)
    }

    #[test]
    fn edge_rate_converges_to_the_sending_rate() {
        // 1000-byte packets every 1 ms: 8 Mb/s. After 1 s (10 K) the estimate is within 0.01%.
        let mut q = csfq(10_000_000);
        let mut r = 0.0;
        for i in 1..=1000 {
            r = q.estimate_rate(&udp(0, 1000), i * MS);
        }
        assert!((r - 8e6).abs() / 8e6 < 1e-4, "{r}");
        // One sample by the formula: the gap doubles, the rate moves towards 4 Mb/s by 1 − e^(−0.02).
        let next = q.estimate_rate(&udp(0, 1000), 1002 * MS);
        let w = (-0.02f64).exp();
        assert!((next - ((1.0 - w) * 4e6 + w * r)).abs() < 1e-6);
        // A second packet at the same instant joins the next sample.
        let mut a = csfq(10_000_000);
        let mut b = csfq(10_000_000);
        for q in [&mut a, &mut b] {
            q.estimate_rate(&udp(0, 1000), MS);
            q.estimate_rate(&udp(0, 500), 2 * MS);
        }
        assert_eq!(a.estimate_rate(&udp(0, 500), 2 * MS), b.flows[0].rate, "no new sample");
        let (ra, rb) = (a.estimate_rate(&udp(0, 1000), 3 * MS), b.estimate_rate(&udp(0, 1500), 3 * MS));
        assert!((ra - rb).abs() < 1e-9, "{ra} {rb}");
    }

    #[test]
    fn a_label_above_alpha_is_dropped_with_probability_one_minus_alpha_over_label() {
        let mut q = csfq(10_000_000);
        q.alpha = 2e6;
        q.last_arrival_ns = 1;
        let mut fifo = DropTail::new(Some(1_000_000), None);
        let (mut kept, n) = (0, 20_000);
        for i in 0..n {
            let mut p = udp(0, 1000);
            p.set_csfq_label(8e6);
            // Keep the queue short and the state congested-free of side effects: dequeue at once.
            if q.enqueue(&mut fifo, p, 10 + i as Nanos * 1000).is_ok() {
                let out = fifo.dequeue(0).unwrap();
                assert_eq!(out.csfq_label(), Some(q.alpha as f32), "a kept packet leaves labelled α");
                kept += 1;
            }
        }
        // 1 − 2/8 = 0.75 dropped.
        let frac = kept as f64 / n as f64;
        assert!((frac - 0.25).abs() < 0.02, "{frac}");
        // A label at or below α is never dropped, and keeps its label.
        let mut p = udp(1, 1000);
        p.set_csfq_label(1e6);
        assert!(q.enqueue(&mut fifo, p, 30_000_000).is_ok());
        assert_eq!(fifo.dequeue(0).unwrap().csfq_label(), Some(1e6));
    }

    #[test]
    fn congested_alpha_scales_by_capacity_over_accepted_rate_every_kc() {
        let mut q = csfq(10_000_000);
        q.alpha = 1e6;
        q.congested = true;
        q.window_ns = 0;
        q.rate_total = 20e6;
        q.rate_accepted = 12.5e6;
        q.last_arrival_ns = 50 * MS;
        // Within Kc: α unchanged.
        q.estimate_alpha(1000, 1e6, true, 0.9, 60 * MS);
        assert_eq!(q.alpha, 1e6);
        // At Kc: α·C/F with F as just updated.
        q.estimate_alpha(1000, 1e6, true, 0.9, 100 * MS);
        let f = q.rate_accepted;
        assert!((q.alpha - 1e6 * 10e6 / f).abs() < 1e-6, "{} {f}", q.alpha);
        assert_eq!(q.window_ns, 100 * MS);
    }

    #[test]
    fn uncongested_alpha_is_the_largest_label_of_the_window_or_zero_below_the_threshold() {
        let mut q = csfq(10_000_000);
        q.alpha = 3e6;
        q.congested = false;
        q.window_ns = 0;
        q.last_arrival_ns = 1;
        for (i, label) in [1e6, 2.5e6, 2e6].into_iter().enumerate() {
            q.estimate_alpha(100, label, true, 0.9, (i as Nanos + 1) * 10 * MS);
        }
        assert_eq!(q.alpha, 3e6);
        q.estimate_alpha(100, 1e6, true, 0.9, 100 * MS);
        assert_eq!(q.alpha, 2.5e6);
        // The next window ends with the queue below its threshold: α back to 0, no drops.
        q.estimate_alpha(100, 4e6, true, 0.9, 150 * MS);
        q.estimate_alpha(100, 1e6, true, 0.1, 200 * MS);
        assert_eq!(q.alpha, 0.0);
        // It restarts once the queue reaches the threshold, from the largest label meanwhile.
        q.estimate_alpha(100, 5e6, true, 0.1, 210 * MS);
        q.estimate_alpha(100, 1e6, true, 0.8, 220 * MS);
        assert_eq!(q.alpha, 5e6);
    }

    #[test]
    fn overflow_cuts_alpha_by_one_percent_at_most_thirty_times_a_kc() {
        let mut q = csfq(10_000_000);
        let mut fifo = DropTail::new(Some(1), None);
        fifo.enqueue(udp(9, 1000), 0).unwrap();
        q.alpha = 1e6;
        q.congested = true;
        q.window_ns = 0;
        q.rate_total = 20e6;
        q.rate_accepted = 10e6;
        q.last_arrival_ns = 1;
        for i in 0..40 {
            let mut p = udp(0, 1000);
            p.set_csfq_label(1.0);
            assert!(q.enqueue(&mut fifo, p, 2 + i).is_err());
        }
        assert!((q.alpha - 1e6 * 0.99f64.powi(30)).abs() < 1e-6, "{}", q.alpha);
    }

    #[test]
    fn acknowledgements_carry_no_label() {
        let mut p = Packet::new(FlowId(0), NodeId(1), Kind::Ack, 40);
        p.set_csfq_label(5e6);
        assert_eq!(p.csfq_label(), None);
        assert_eq!(p.sack, [(0, 0); 4]);
        let mut d = Packet::new(FlowId(0), NodeId(1), Kind::Data, 1500);
        assert_eq!(d.csfq_label(), None);
        d.set_csfq_label(5e6);
        assert_eq!(d.csfq_label(), Some(5e6));
        d.set_csfq_label(0.0);
        assert!(d.csfq_label().is_some(), "a zero estimate still labels the packet");
    }
}
