//! Random Early Detection (Floyd and Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", IEEE/ACM ToN 1993) as ns-2.35's `Queue/RED` runs it (`queue/red.cc`, defaults
//! from `ns-default.tcl`), so that ns-2 studies such as paper 002's can be reproduced:
//!
//! - On every arrival the average queue `avg` moves by the weight w towards the current queue
//!   (packets, or bytes in byte mode). After an idle period it first decays as if
//!   m = ⌊C · idle time⌋ packets had arrived to an empty queue, C the link's rate in packets of
//!   `mean_pkt_bytes` per second.
//! - Below `min_thresh` nothing is dropped. Between the thresholds the drop probability grows
//!   linearly from 0 to `max_p`; with `gentle`, from `max_p` at `max_thresh` to 1 at twice it.
//! - The count of arrivals since the last drop spreads drops out: with `wait`, none until
//!   count · p ≥ 1, then p / (2 − count · p); without, p / (1 − count · p). In byte mode the count
//!   is in mean-sized packets and the probability scales with the packet's size.
//! - An arrival when the queue holds at most one packet (one byte in byte mode) is never dropped
//!   early; the hard limit (the buffer) drops as DropTail does.
//!
//! - Adaptive RED (Floyd, Gummadi and Shenker, "Adaptive RED", 2001; ns-2.35's `adaptive_ 1`):
//!   on an arrival at least `interval` after max_p last changed, an average below
//!   min + 0.4·(max − min) lowers max_p by the factor β (while above `bottom`), one above
//!   max − 0.4·(max − min) raises it by min(α, max_p/4) (while below `top`). As in ns-2.35, the
//!   gentle slope above `max_thresh` keeps the initial max_p.
//!
//! - ECN (`ecn`, ns-2's `setbit_`): an early drop of an ECN-capable packet between the
//!   thresholds (ns-2's unforced drop) marks it CE instead; where the probability is 1 (above
//!   `max_thresh`, or twice it with `gentle`: ns-2's forced drop) and at the hard limit it is
//!   dropped. The count starts again as for a drop.
//!
//! Feng's adaptive variant and the drop-front/drop-random victims are not modelled.

use crate::net::packet::Packet;
use crate::rng::Rng;
use crate::spec::{AredSpec, RedSpec};
use crate::time::{Nanos, NS_PER_SEC};

/// RED's parameters once the automatic ones are set for the link.
#[derive(Clone, Debug, PartialEq)]
pub struct RedParams {
    /// Thresholds in the average's unit: packets, or bytes in byte mode.
    pub min_thresh: f64,
    pub max_thresh: f64,
    pub max_p: f64,
    pub weight: f64,
    pub gentle: bool,
    pub wait: bool,
    pub byte_mode: bool,
    pub mean_pkt_bytes: u32,
    /// Packets of `mean_pkt_bytes` the link sends per second (ns-2's `ptc`).
    pub pkts_per_s: f64,
    /// Adaptive RED's parameters, `bottom` resolved.
    pub adaptive: Option<AredSpec>,
    /// Mark ECN-capable packets instead of dropping them early (ns-2's `setbit_`).
    pub ecn: bool,
}

impl RedParams {
    /// ns-2's `initialize_params` for a link of `rate_bps` and one-way `delay_ns`.
    pub fn resolve(spec: &RedSpec, rate_bps: u64, delay_ns: Nanos) -> Self {
        let ptc = rate_bps as f64 / (8.0 * spec.mean_pkt_bytes as f64);
        let weight = spec.weight.unwrap_or_else(|| {
            let rtt = (3.0 * (delay_ns as f64 / NS_PER_SEC as f64 + 1.0 / ptc)).max(0.1);
            1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
        });
        let min_pkts = spec.min_thresh_pkts.unwrap_or_else(|| RedSpec::auto_min_thresh_pkts(rate_bps, spec.mean_pkt_bytes));
        let max_pkts = spec.max_thresh_pkts.unwrap_or(3.0 * min_pkts);
        let unit = if spec.byte_mode { spec.mean_pkt_bytes as f64 } else { 1.0 };
        RedParams {
            min_thresh: min_pkts * unit,
            max_thresh: max_pkts * unit,
            max_p: spec.max_p,
            weight,
            gentle: spec.gentle,
            wait: spec.wait,
            byte_mode: spec.byte_mode,
            mean_pkt_bytes: spec.mean_pkt_bytes,
            pkts_per_s: ptc,
            adaptive: spec.adaptive.as_ref().map(|a| AredSpec { bottom: Some(a.bottom.unwrap_or((80_000.0 / rate_bps as f64).min(0.01))), ..a.clone() }),
            ecn: spec.ecn,
        }
    }

    /// The drop probability for an average `avg`, before the count spreads it (`calculate_p_new`).
    pub fn base_p(&self, avg: f64) -> f64 {
        self.base_p_at(avg, self.max_p)
    }

    /// `base_p` with Adaptive RED's current `max_p` between the thresholds (the gentle slope
    /// above them keeps the initial one, as ns-2.35's `v_c` and `v_d` do).
    pub fn base_p_at(&self, avg: f64, max_p: f64) -> f64 {
        let p = if avg >= self.max_thresh {
            if self.gentle {
                // max_p at max_thresh, rising linearly to 1 at twice max_thresh.
                (1.0 - self.max_p) / self.max_thresh * avg + 2.0 * self.max_p - 1.0
            } else {
                1.0
            }
        } else {
            (avg - self.min_thresh) / (self.max_thresh - self.min_thresh) * max_p
        };
        p.min(1.0)
    }

    /// The probability of dropping this arrival (`modify_p`): `p` spread by `count` arrivals
    /// (`count_bytes` in byte mode) since the last drop, scaled by size in byte mode.
    pub fn spread_p(&self, p: f64, count: u64, count_bytes: u64, size: u32) -> f64 {
        let count = if self.byte_mode { (count_bytes / self.mean_pkt_bytes as u64) as f64 } else { count as f64 };
        let cp = count * p;
        let mut p = if self.wait {
            if cp < 1.0 {
                0.0
            } else if cp < 2.0 {
                p / (2.0 - cp)
            } else {
                1.0
            }
        } else if cp < 1.0 {
            p / (1.0 - cp)
        } else {
            1.0
        };
        if self.byte_mode && p < 1.0 {
            p = p * size as f64 / self.mean_pkt_bytes as f64;
        }
        p.min(1.0)
    }
}

/// RED's state beside the FIFO it guards ([`super::Queue`] holds both: the packets stay in the
/// DropTail FIFO, whose limit is RED's hard limit).
#[derive(Debug)]
pub struct Red {
    params: RedParams,
    /// The average queue, in packets or bytes.
    avg: f64,
    /// Arrivals (and their bytes) since the last drop, or since the average crossed min_thresh.
    count: u64,
    count_bytes: u64,
    /// The average was at or above min_thresh with a non-empty queue at the last arrival.
    above: bool,
    /// The link found the queue empty when it went to send, at `idle_since`.
    idle: bool,
    idle_since: Nanos,
    rng: Rng,
    early_drops: u64,
    marks: u64,
    /// max_p as Adaptive RED has set it (the initial one otherwise), and when it last changed.
    cur_max_p: f64,
    max_p_set_ns: Nanos,
}

impl Red {
    pub fn new(params: RedParams, rng: Rng) -> Self {
        let cur_max_p = params.max_p;
        Red { params, avg: 0.0, count: 0, count_bytes: 0, above: false, idle: true, idle_since: 0, rng, early_drops: 0, marks: 0, cur_max_p, max_p_set_ns: 0 }
    }

    /// max_p now (Adaptive RED changes it).
    pub fn max_p(&self) -> f64 {
        self.cur_max_p
    }

    /// Adaptive RED's `updateMaxP`: move max_p towards an average between the thresholds.
    #[cold]
    fn adapt(&mut self, now: Nanos) {
        let (p, a) = match &self.params.adaptive {
            Some(a) if now > self.max_p_set_ns + a.interval_ns => (&self.params, a),
            _ => return,
        };
        let part = 0.4 * (p.max_thresh - p.min_thresh);
        if self.avg < p.min_thresh + part && self.cur_max_p > a.bottom.unwrap_or(0.0) {
            self.cur_max_p *= a.beta;
            self.max_p_set_ns = now;
        } else if self.avg > p.max_thresh - part && a.top > self.cur_max_p {
            self.cur_max_p += a.alpha.min(0.25 * self.cur_max_p);
            self.max_p_set_ns = now;
        }
    }

    /// The average queue after the last arrival (packets, or bytes in byte mode).
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// Arrivals dropped early (by probability, not by the hard limit).
    pub fn early_drops(&self) -> u64 {
        self.early_drops
    }

    /// Arrivals marked CE instead of dropped early.
    pub fn marks(&self) -> u64 {
        self.marks
    }

    /// An arrival `pkt` finding `len_pkts` packets and `len_bytes` bytes queued, which the hard
    /// limit drops when `full`: update the average and decide. True keeps it (marked CE when an
    /// early drop became a mark). Out of line, so that the DropTail path it sits beside stays
    /// small enough to inline.
    #[inline(never)]
    pub fn admit(&mut self, pkt: &mut Packet, now: Nanos, len_pkts: usize, len_bytes: u64, full: bool) -> bool {
        let size = pkt.size_bytes;
        let p = &self.params;
        // Packets that could have gone out while the queue was idle, each seen as an empty queue.
        let m = if self.idle {
            self.idle = false;
            (p.pkts_per_s * now.saturating_sub(self.idle_since) as f64 / NS_PER_SEC as f64) as i32
        } else {
            0
        };
        let qlen = if p.byte_mode { len_bytes as f64 } else { len_pkts as f64 };
        self.avg = self.avg * (1.0 - p.weight).powi(m.saturating_add(1)) + p.weight * qlen;
        if p.adaptive.is_some() {
            self.adapt(now);
        }
        let p = &self.params;
        self.count += 1;
        self.count_bytes += size as u64;
        let mut early = false;
        let mut forced = false;
        if self.avg >= p.min_thresh && qlen > 1.0 {
            if !self.above {
                // Just crossed min_thresh (or the queue is no longer nearly empty): count anew.
                self.above = true;
                self.count = 1;
                self.count_bytes = size as u64;
            } else {
                let base = p.base_p_at(self.avg, self.cur_max_p);
                let prob = p.spread_p(base, self.count, self.count_bytes, size);
                if prob > 0.0 && self.rng.uniform() <= prob {
                    early = true;
                    forced = base >= 1.0;
                    self.count = 0;
                    self.count_bytes = 0;
                }
            }
        } else {
            self.above = false;
        }
        if full {
            // A forced drop, RED's or not, starts the count again.
            self.count = 0;
            self.count_bytes = 0;
            return false;
        }
        if early && p.ecn && !forced && pkt.mark_ce() {
            self.marks += 1;
            return true;
        }
        self.early_drops += early as u64;
        !early
    }

    /// An arrival beside `fifo`: admitted (perhaps marked) into it, or handed back. (Taking the
    /// packet here, not as a mutable argument of the queue's dispatch, keeps the DropTail path
    /// beside it from copying every packet: 0.6% of `bench/engine_reno.json`'s instructions.)
    pub fn enqueue(&mut self, fifo: &mut super::DropTail, mut pkt: Packet, now: Nanos) -> Result<(), Packet> {
        use super::QueueDisc;
        let full = fifo.is_full_for(pkt.size_bytes);
        if self.admit(&mut pkt, now, fifo.len_pkts(), fifo.len_bytes(), full) {
            fifo.enqueue(pkt, now)
        } else {
            Err(pkt)
        }
    }

    /// The link went to send at `now` and found the queue empty: the idle period starts (once).
    #[inline(never)]
    pub fn went_idle(&mut self, now: Nanos) {
        if !self.idle {
            self.idle = true;
            self.idle_since = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, NodeId};
    use crate::net::packet::{Kind, Packet};
    use crate::net::queue::{Queue, QueueDisc};
    use crate::rng::Stream;
    use crate::spec::QueueSpec;

    fn pkt(size: u32) -> Packet {
        Packet::new(FlowId(0), NodeId(1), Kind::Data, size)
    }

    fn packet_mode(min: f64, max: f64, weight: f64) -> RedSpec {
        RedSpec { min_thresh_pkts: Some(min), max_thresh_pkts: Some(max), weight: Some(weight), byte_mode: false, ..RedSpec::default() }
    }

    fn red(spec: &RedSpec, limit: u64, rate_bps: u64) -> Queue {
        let spec = QueueSpec::Red { limit_pkts: Some(limit), limit_bytes: None, red: spec.clone() };
        Queue::from_spec(&spec, rate_bps, 10_000_000, Rng::stream(1, Stream::Queue, 0))
    }

    /// RED's state in `q`.
    fn state(q: &mut Queue) -> &mut Red {
        q.red_mut().expect("a RED queue")
    }

    /// ns-2.35's automatic parameters at 10 Mb/s and 10 ms (paper 002's links): C = 2500 packets
    /// of 500 bytes per second, min_thresh = max(5, 0.005 · 2500 / 2) = 6.25 packets, max_thresh
    /// 18.75, w = 1 − exp(−1/(10 · 0.1 · 2500)) (3 · (10 ms + 0.4 ms) is below 0.1 s); in byte
    /// mode the thresholds are 3125 and 9375 bytes.
    #[test]
    fn automatic_parameters_follow_ns2() {
        let p = RedParams::resolve(&RedSpec::default(), 10_000_000, 10_000_000);
        assert_eq!(p.pkts_per_s, 2500.0);
        assert_eq!((p.min_thresh, p.max_thresh), (3125.0, 9375.0));
        assert!((p.weight - (1.0 - (-1.0f64 / 2500.0).exp())).abs() < 1e-15);
        // 100 Mb/s, 50 ms: 25000 packets/s, min 62.5, 3 · (0.05 + 0.00004) = 0.15012 s.
        let p = RedParams::resolve(&RedSpec { byte_mode: false, ..RedSpec::default() }, 100_000_000, 50_000_000);
        assert_eq!((p.min_thresh, p.max_thresh), (62.5, 187.5));
        assert!((p.weight - (1.0 - (-1.0 / (10.0 * 0.15012 * 25000.0f64)).exp())).abs() < 1e-15);
        // A slow link keeps the floor of 5 packets.
        let p = RedParams::resolve(&RedSpec { byte_mode: false, ..RedSpec::default() }, 1_000_000, 0);
        assert_eq!((p.min_thresh, p.max_thresh), (5.0, 15.0));
    }

    /// The probability: 0 → max_p linearly between the thresholds, then (gentle) max_p → 1 up
    /// to twice max_thresh, or 1 at once without gentle.
    #[test]
    fn base_probability_is_piecewise_linear() {
        let mut p = RedParams::resolve(&packet_mode(5.0, 15.0, 0.002), 10_000_000, 0);
        assert_eq!(p.base_p(5.0), 0.0);
        assert!((p.base_p(10.0) - 0.05).abs() < 1e-12);
        assert!((p.base_p(15.0) - 0.1).abs() < 1e-12);
        assert!((p.base_p(22.5) - 0.55).abs() < 1e-12);
        assert!((p.base_p(30.0) - 1.0).abs() < 1e-12);
        assert_eq!(p.base_p(45.0), 1.0);
        p.gentle = false;
        assert_eq!(p.base_p(15.0), 1.0);
    }

    /// With `wait`, no drop until count · p ≥ 1, then p/(2 − count · p), certain at count · p = 2;
    /// without, p/(1 − count · p). Byte mode counts mean-sized packets and scales by size.
    #[test]
    fn the_count_spreads_drops() {
        let mut p = RedParams::resolve(&packet_mode(5.0, 15.0, 0.002), 10_000_000, 0);
        assert_eq!(p.spread_p(0.05, 19, 0, 1500), 0.0);
        assert!((p.spread_p(0.05, 20, 0, 1500) - 0.05).abs() < 1e-12);
        assert!((p.spread_p(0.05, 30, 0, 1500) - 0.1).abs() < 1e-12);
        assert_eq!(p.spread_p(0.05, 40, 0, 1500), 1.0);
        p.wait = false;
        assert!((p.spread_p(0.05, 10, 0, 1500) - 0.1).abs() < 1e-12);
        assert_eq!(p.spread_p(0.05, 20, 0, 1500), 1.0);
        p.byte_mode = true;
        // 9999 bytes are 19 packets of 500 (integer division, as ns-2): 0.05/(1 − 0.95) = 1.
        assert_eq!(p.spread_p(0.05, 0, 9999, 1500), 1.0);
        // 5000 bytes: 10 packets, 0.05/(1 − 0.5) = 0.1, × 40/500 for a 40-byte packet.
        assert!((p.spread_p(0.05, 0, 5000, 40) - 0.008).abs() < 1e-12);
    }

    /// The average is an EWMA of the queue seen at each arrival; after the link sat idle it
    /// first decays by (1 − w)^m, m = ⌊C · idle time⌋.
    #[test]
    fn average_moves_by_weight_and_decays_when_idle() {
        let w = 0.25;
        let mut q = red(&packet_mode(100.0, 300.0, w), 1000, 12_000_000); // C = 3000 packets/s of 500 B
        let mut expect = 0.0;
        for i in 0..8u64 {
            q.enqueue(pkt(500), i).unwrap();
            expect = expect * (1.0 - w) + w * i as f64;
            assert!((state(&mut q).avg() - expect).abs() < 1e-12, "arrival {i}");
        }
        for _ in 0..8 {
            q.dequeue(100).unwrap();
        }
        assert!(q.dequeue(1_000_000).is_none()); // idle from 1 ms
        // 2 ms later: m = ⌊3000 · 0.002⌋ = 6 packets' worth of empty queue, then this arrival's.
        q.enqueue(pkt(500), 3_000_000).unwrap();
        expect *= (1.0 - w).powi(7);
        assert!((state(&mut q).avg() - expect).abs() < 1e-12);
        // The idle period starts at the first empty dequeue, not at a later one.
        q.dequeue(3_000_000).unwrap();
        assert!(q.dequeue(4_000_000).is_none());
        assert!(q.dequeue(9_000_000).is_none());
        q.enqueue(pkt(500), 5_000_000).unwrap();
        expect *= (1.0 - w).powi(4);
        assert!((state(&mut q).avg() - expect).abs() < 1e-12);
    }

    /// Held steadily between the thresholds (p = 0.05), RED spreads its drops uniformly: with
    /// `wait` the gap from one early drop to the next is uniform on about 1/p .. 2/p arrivals
    /// (20..39 or 21..40, mean 29.5–30.5, as p rounds either side of 0.05), without it on about
    /// 1 .. 1/p (mean about 10). A geometric spread (no count) would give gaps from 1, mean 20.
    #[test]
    fn steady_average_gives_uniform_gaps() {
        for (wait, lo, hi, mean) in [(true, 20, 40, 30.0), (false, 1, 20, 10.0)] {
            // w tiny: the average stays at 10 packets (p_b = 0.05 for thresholds 5 and 15).
            let mut spec = packet_mode(5.0, 15.0, 1e-12);
            spec.wait = wait;
            let mut q = red(&spec, 1000, 10_000_000);
            state(&mut q).avg = 10.0;
            for _ in 0..10 {
                q.enqueue(pkt(1500), 0).unwrap();
            }
            let (mut gaps, mut since) = (Vec::new(), 0);
            for _ in 0..200_000 {
                since += 1;
                match q.enqueue(pkt(1500), 0) {
                    Ok(()) => {
                        q.dequeue(0);
                    }
                    Err(_) => {
                        gaps.push(since);
                        since = 0;
                    }
                }
            }
            let gaps = &gaps[1..]; // the first counts from the threshold crossing
            let m = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64;
            assert!(gaps.iter().all(|&g| (lo..=hi).contains(&g)), "wait {wait}: gaps outside {lo}..{hi}");
            assert!((m - mean).abs() < 0.7, "wait {wait}: mean gap {m}, expected {mean}");
        }
    }

    /// With `ecn` (ns-2's `setbit_`), the same early decisions mark ECN-capable arrivals CE and
    /// keep them, counted as marks, not drops; an arrival that is not ECN-capable is dropped as
    /// before; in the forced region (gentle: average at twice max_thresh or more) ECN-capable
    /// arrivals are dropped too.
    #[test]
    fn ecn_marks_the_early_drops_of_ecn_capable_arrivals() {
        let ect = || {
            let mut p = pkt(1500);
            p.set_ecn(crate::net::packet::Ecn::ECT0);
            p
        };
        let spec = RedSpec { ecn: true, ..packet_mode(5.0, 15.0, 1e-12) };
        let (mut q, mut plain) = (red(&spec, 1000, 10_000_000), red(&packet_mode(5.0, 15.0, 1e-12), 1000, 10_000_000));
        for q in [&mut q, &mut plain] {
            state(q).avg = 10.0;
            for _ in 0..10 {
                q.enqueue(pkt(1500), 0).unwrap();
            }
        }
        // Same random stream, same decisions: a drop in one is a mark in the other.
        let (mut marked, mut dropped, mut ce) = (0, 0, 0);
        let is_ce = |p: Option<Packet>| u64::from(p.expect("a packet").ecn() == crate::net::packet::Ecn::CE);
        for _ in 0..10_000 {
            let kept = plain.enqueue(ect(), 0).is_ok();
            if kept {
                plain.dequeue(0);
            }
            let before = q.marks();
            q.enqueue(ect(), 0).expect("an ECN-capable arrival is kept");
            assert_eq!(q.marks() - before, u64::from(!kept));
            ce += is_ce(q.dequeue(0));
            marked += u64::from(!kept);
        }
        while q.len_pkts() > 0 {
            ce += is_ce(q.dequeue(0));
        }
        assert!(marked > 200 && ce == marked, "{marked} marks, {ce} packets left marked");
        assert_eq!((q.marks(), q.early_drops(), plain.early_drops()), (marked, 0, marked));
        for _ in 0..10 {
            q.enqueue(pkt(1500), 0).unwrap();
        }
        for _ in 0..10_000 {
            if q.enqueue(pkt(1500), 0).is_ok() {
                q.dequeue(0);
            } else {
                dropped += 1;
            }
        }
        assert!(dropped > 200 && q.early_drops() == dropped, "not ECN-capable: dropped");
        // The forced region: every arrival dropped, ECN-capable or not.
        state(&mut q).avg = 40.0;
        let before = q.marks();
        assert!((0..100).all(|_| q.enqueue(ect(), 0).is_err()));
        assert_eq!(q.marks(), before);
    }

    /// The hard limit drops like DropTail and resets the count; an arrival to a queue of at most
    /// one packet is never dropped early, whatever the average.
    #[test]
    fn hard_limit_and_nearly_empty_queue() {
        let mut q = red(&packet_mode(1.0, 2.0, 0.9), 3, 10_000_000);
        state(&mut q).avg = 100.0;
        assert!(q.enqueue(pkt(1500), 0).is_ok());
        assert!(q.enqueue(pkt(1500), 0).is_ok());
        assert_eq!(q.early_drops(), 0);
        let mut q = red(&packet_mode(50.0, 60.0, 1e-9), 3, 10_000_000);
        for _ in 0..3 {
            q.enqueue(pkt(1500), 0).unwrap();
        }
        assert!(q.enqueue(pkt(1500), 0).is_err());
        assert_eq!((q.early_drops(), state(&mut q).count, q.len_pkts()), (0, 0, 3));
    }

    /// Adaptive RED's AIMD on max_p (ns-2.35's `updateMaxP`): below the band's lower edge
    /// (min + 0.4·(max − min)) max_p × β, above its upper edge (max − 0.4·(max − min)) + min(α,
    /// max_p/4), at most once per interval, within bottom and top; the gentle slope keeps the
    /// initial max_p.
    #[test]
    fn adaptive_red_moves_max_p_by_aimd_once_per_interval() {
        let spec = RedSpec { adaptive: Some(AredSpec::default()), ..packet_mode(10.0, 30.0, 0.002) };
        let mut q = red(&spec, 1000, 10_000_000);
        let ms = 1_000_000;
        // The band is [18, 22]. An average of 25 raises max_p 0.1 → 0.11 (α = 0.01 < 0.1/4).
        // (The queue is busy: no idle decay; an arrival may be dropped early, which is no matter.)
        state(&mut q).idle = false;
        state(&mut q).avg = 25.0 / 0.998;
        let _ = q.enqueue(pkt(1500), 501 * ms);
        assert!((state(&mut q).max_p() - 0.11).abs() < 1e-12);
        // Within the interval nothing changes; after it, again.
        state(&mut q).avg = 25.0 / 0.998;
        let _ = q.enqueue(pkt(1500), 900 * ms);
        assert!((state(&mut q).max_p() - 0.11).abs() < 1e-12);
        let _ = q.enqueue(pkt(1500), 1002 * ms);
        assert!((state(&mut q).max_p() - 0.12).abs() < 1e-12);
        // Below the band: × 0.9. Inside it: unchanged.
        state(&mut q).avg = 12.0;
        let _ = q.enqueue(pkt(1500), 1503 * ms);
        assert!((state(&mut q).max_p() - 0.108).abs() < 1e-12);
        state(&mut q).avg = 20.0;
        let _ = q.enqueue(pkt(1500), 2004 * ms);
        assert!((state(&mut q).max_p() - 0.108).abs() < 1e-12);
        // A small max_p grows by a quarter of itself; bottom (80 kb/s / 10 Mb/s = 0.008) stops the
        // decrease.
        let r = state(&mut q);
        r.cur_max_p = 0.02;
        r.avg = 25.0;
        let _ = q.enqueue(pkt(1500), 2600 * ms);
        assert!((state(&mut q).max_p() - 0.025).abs() < 1e-12);
        state(&mut q).cur_max_p = 0.0079;
        state(&mut q).avg = 5.0;
        let _ = q.enqueue(pkt(1500), 3200 * ms);
        assert_eq!(state(&mut q).max_p(), 0.0079);
        // Between the thresholds the current max_p sets the probability; above them the gentle
        // slope starts from the initial 0.1.
        let r = state(&mut q);
        assert!((r.params.base_p_at(20.0, 0.2) - 0.1).abs() < 1e-12);
        assert_eq!(r.params.base_p_at(30.0, 0.2), r.params.base_p(30.0));
    }
}
