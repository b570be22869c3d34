//! PIE, "Proportional Integral controller Enhanced" (Pan et al., RFC 8033), as Linux's `sch_pie`
//! runs it with its defaults (`net/sched/sch_pie.c`, `include/net/pie.h`; the delay taken from
//! packet timestamps, packet mode): it drops arrivals with a probability it tunes every
//! `tupdate` from the queueing delay.
//!
//! - Every dequeue records the leaving packet's sojourn as the current delay (0 when the queue
//!   is left empty) and spends the time since the last dequeue from the burst allowance.
//! - Every `tupdate` (the first 0.5 s after start, as Linux arms its timer) the probability moves
//!   by α · (delay − target) + β · (delay − previous delay); α and β are scaled down while the
//!   probability is small (÷2 below 10%, then ÷4 per decade below 1%), a rise is capped at 2%
//!   per update from 10%, a delay over 250 ms adds 2%, and two updates with no delay decay it by
//!   1/64. Two updates below half the target with the probability at 0 restore the burst
//!   allowance (150 ms).
//! - An arrival is never dropped while burst allowance is left, while the delay is below half the
//!   target and the probability below 20%, or while less than two MTUs are queued. Otherwise the
//!   probabilities of successive arrivals accumulate: no drop below 0.85, always from 8.5, else a
//!   drop with the current probability (de-randomisation, RFC 8033 §5.1).
//!
//! Time runs in Linux's scheduler ticks (64 ns) and the probability in its 56-bit fixed point, so
//! the updates are Linux's to the bit. The update timer is not an event: updates due are run
//! before the queue next changes, on the state they would have seen (nothing they read changes in
//! between).
//! - With `ecn` (off by default, as in Linux), an arrival due to be dropped early is marked CE
//!   instead when it is ECN-capable and the probability is at most 10% (RFC 8033 §5.1); the
//!   accumulated probability is kept, as Linux keeps it for a mark.
//!
//! Byte mode and the dequeue-rate estimator are not modelled.

use super::droptail::DropTail;
use super::QueueDisc;
use crate::net::packet::Packet;
use crate::rng::Rng;
use crate::spec::PieSpec;
use crate::time::Nanos;

/// Probability 1 in Linux's fixed point (`MAX_PROB`: 2⁵⁶ − 1).
pub const MAX_PROB: u64 = u64::MAX >> 8;
/// Linux's scheduler clock: 64-ns ticks (`PSCHED_SHIFT`).
const TICK_SHIFT: u32 = 6;
const TICKS_PER_SEC: u64 = 1_000_000_000 >> TICK_SHIFT;
/// The burst allowance (`pie_vars_init`): 150 ms.
const BURST_TICKS: u64 = 150_000_000 >> TICK_SHIFT;
/// The first update comes half a second after the queue is set up (`mod_timer(.., HZ / 2)`).
const FIRST_UPDATE_NS: Nanos = 500_000_000;

fn ticks(ns: Nanos) -> u64 {
    ns >> TICK_SHIFT
}

#[derive(Debug)]
pub struct Pie {
    /// In ticks.
    target: u64,
    tupdate_ns: Nanos,
    /// α and β in sixteenths (Linux's `alpha 2`, `beta 20`: 0.125 and 1.25).
    alpha: u32,
    beta: u32,
    mtu_bytes: u64,
    ecn: bool,
    /// The probability at or below which an early drop of an ECN-capable packet becomes a mark
    /// (`sch_pie`: 10%; `sch_fq_pie`: its `ecn_prob`).
    ecn_max_prob: u64,
    /// The current and previous delay, in ticks.
    qdelay: u64,
    qdelay_old: u64,
    burst_time: u64,
    /// Ticks of the last dequeue (`None`: `DTIME_INVALID`).
    dq_tstamp: Option<u64>,
    prob: u64,
    accu_prob: u64,
    next_update_ns: Nanos,
    rng: Rng,
    drops: u64,
    marks: u64,
}

impl Pie {
    pub fn new(spec: &PieSpec, rng: Rng) -> Self {
        Pie {
            target: ticks(spec.target_ns),
            tupdate_ns: spec.tupdate_ns,
            alpha: spec.alpha,
            beta: spec.beta,
            mtu_bytes: spec.mtu_bytes as u64,
            ecn: spec.ecn,
            ecn_max_prob: MAX_PROB / 10,
            qdelay: 0,
            qdelay_old: 0,
            burst_time: BURST_TICKS,
            dq_tstamp: None,
            prob: 0,
            accu_prob: 0,
            next_update_ns: FIRST_UPDATE_NS,
            rng,
            drops: 0,
            marks: 0,
        }
    }

    /// Marks instead of early drops while the probability is at most `percent`% (Linux
    /// `sch_fq_pie`'s `ecn_prob`, computed as it computes it).
    pub fn with_ecn_prob(mut self, percent: u32) -> Self {
        self.ecn_max_prob = MAX_PROB / 100 * percent as u64;
        self
    }

    /// Arrivals PIE dropped (not counting the buffer limit's drops).
    pub fn drops(&self) -> u64 {
        self.drops
    }

    /// Arrivals PIE marked CE instead of dropping them.
    pub fn marks(&self) -> u64 {
        self.marks
    }

    /// The drop probability, as a fraction.
    pub fn prob(&self) -> f64 {
        self.prob as f64 / MAX_PROB as f64
    }

    /// The current delay estimate, in ns (Linux's resolution: 64 ns).
    pub fn qdelay_ns(&self) -> Nanos {
        self.qdelay << TICK_SHIFT
    }

    /// Burst allowance left, in ns.
    pub fn burst_ns(&self) -> Nanos {
        self.burst_time << TICK_SHIFT
    }

    /// Run every update due at or before `now` on a queue of `backlog` bytes (unchanged since the
    /// last call: the queue changes only where this is called first).
    #[inline]
    pub fn catch_up(&mut self, now: Nanos, backlog: u64) {
        if now >= self.next_update_ns {
            self.run_updates(now, backlog);
        }
    }

    #[cold]
    fn run_updates(&mut self, now: Nanos, backlog: u64) {
        while self.next_update_ns <= now {
            let before = self.state();
            self.calculate_probability(backlog);
            self.next_update_ns += self.tupdate_ns;
            if self.state() == before && self.next_update_ns <= now {
                // Nothing moved: every further update until `now` would do the same nothing.
                let skipped = (now - self.next_update_ns) / self.tupdate_ns + 1;
                self.next_update_ns += skipped * self.tupdate_ns;
            }
        }
    }

    fn state(&self) -> (u64, u64, u64, u64, Option<u64>, u64) {
        (self.qdelay, self.qdelay_old, self.burst_time, self.prob, self.dq_tstamp, self.accu_prob)
    }

    /// `pie_vars_init` (what it resets; the probability and delays stay).
    fn restart(&mut self) {
        self.burst_time = BURST_TICKS;
        self.dq_tstamp = None;
        self.accu_prob = 0;
    }

    /// `pie_calculate_probability`, the timer's work, on a queue of `backlog` bytes.
    fn calculate_probability(&mut self, backlog: u64) {
        let (qdelay, qdelay_old) = (self.qdelay, self.qdelay_old);
        // A small queue that shows no delay yet: do not decay the probability this round.
        let mut update_prob = !(qdelay == 0 && backlog != 0);
        let per_tick = MAX_PROB / TICKS_PER_SEC;
        let (mut alpha, mut beta) = ((self.alpha as u64 * per_tick) >> 4, (self.beta as u64 * per_tick) >> 4);
        // Gentler steps while the probability is small (RFC 8033 §5.2's auto-tuning).
        if self.prob < MAX_PROB / 10 {
            alpha >>= 1;
            beta >>= 1;
            let mut power = 100u64;
            while self.prob < MAX_PROB / power && power <= 1_000_000 {
                alpha >>= 2;
                beta >>= 2;
                power *= 10;
            }
        }
        // Linux's arithmetic: unsigned products that wrap to the signed difference.
        let mut delta = (alpha.wrapping_mul(qdelay.wrapping_sub(self.target)) as i64)
            .wrapping_add(beta.wrapping_mul(qdelay.wrapping_sub(qdelay_old)) as i64);
        let oldprob = self.prob;
        if delta > (MAX_PROB / 50) as i64 && self.prob >= MAX_PROB / 10 {
            delta = (MAX_PROB / 100 * 2) as i64;
        }
        if qdelay > ticks(250_000_000) {
            delta = delta.wrapping_add((MAX_PROB / 50) as i64);
        }
        self.prob = self.prob.wrapping_add(delta as u64);
        if delta > 0 {
            if self.prob < oldprob {
                self.prob = MAX_PROB;
                update_prob = false;
            }
        } else if self.prob > oldprob {
            self.prob = 0;
        }
        if qdelay == 0 && qdelay_old == 0 && update_prob {
            self.prob -= self.prob / 64;
        }
        self.qdelay = qdelay;
        if self.qdelay < self.target / 2 && self.qdelay_old < self.target / 2 && self.prob == 0 {
            self.restart();
        }
        self.qdelay_old = qdelay;
    }

    /// An arrival of `size` bytes at `now` to `fifo`, after the updates due. True keeps it. Out
    /// of line, as every PIE entry point, so that the DropTail path beside it stays small.
    #[inline(never)]
    pub fn offer(&mut self, fifo: &DropTail, pkt: &mut Packet, now: Nanos) -> bool {
        let backlog = fifo.len_bytes();
        self.catch_up(now, backlog);
        self.admit(pkt, backlog, fifo.is_full_for(pkt.size_bytes))
    }

    /// An arrival beside `fifo`: admitted (perhaps marked) into it, or handed back.
    pub fn enqueue(&mut self, fifo: &mut DropTail, mut pkt: Packet, now: Nanos) -> Result<(), Packet> {
        if self.offer(fifo, &mut pkt, now) {
            fifo.enqueue(pkt, now)
        } else {
            Err(pkt)
        }
    }

    /// A packet that arrived at `now` to an empty queue and an idle link: Linux queues it and
    /// dequeues it at once, a sojourn of 0 with nothing left behind.
    #[inline(never)]
    pub fn pass(&mut self, now: Nanos) {
        self.catch_up(now, 0);
        self.dequeued(now, now, 0);
    }

    /// `pie_drop_early` and the enqueue around it: an arrival `pkt` finding `backlog` bytes
    /// queued, which the buffer's limit drops when `full`. True keeps it (marked CE when its
    /// early drop became a mark).
    pub fn admit(&mut self, pkt: &mut Packet, backlog: u64, full: bool) -> bool {
        if full {
            self.accu_prob = 0;
            return false;
        }
        if !self.drop_early(backlog) {
            return true;
        }
        if self.ecn && self.prob <= self.ecn_max_prob && pkt.mark_ce() {
            self.marks += 1;
            return true;
        }
        self.drops += 1;
        self.accu_prob = 0;
        false
    }

    fn drop_early(&mut self, backlog: u64) -> bool {
        if self.burst_time > 0 {
            return false;
        }
        if self.qdelay < self.target / 2 && self.prob < MAX_PROB / 5 {
            return false;
        }
        // Fewer than two MTUs queued: like RED's min_th.
        if backlog < 2 * self.mtu_bytes {
            return false;
        }
        let local_prob = self.prob;
        if local_prob == 0 {
            self.accu_prob = 0;
        } else {
            self.accu_prob = self.accu_prob.wrapping_add(local_prob);
        }
        if self.accu_prob < MAX_PROB / 100 * 85 {
            return false;
        }
        if self.accu_prob >= MAX_PROB / 2 * 17 {
            return true;
        }
        if (self.rng.next_u64() >> 8) < local_prob {
            self.accu_prob = 0;
            return true;
        }
        false
    }

    /// `pie_process_dequeue` for a packet that arrived at `enq_ns` leaving at `now`, `backlog`
    /// bytes left behind it.
    pub fn dequeued(&mut self, enq_ns: Nanos, now: Nanos, backlog: u64) {
        // Saturating: the router may dequeue at an ideal time a little before a stamp it took
        // on its own clock; Linux's clock never runs back.
        let now_t = ticks(now);
        self.qdelay = now_t.saturating_sub(ticks(enq_ns));
        let dtime = self.dq_tstamp.map_or(0, |t| now_t.saturating_sub(t));
        self.dq_tstamp = Some(now_t);
        if backlog == 0 {
            self.qdelay = 0;
        }
        if dtime == 0 {
            return;
        }
        self.burst_time = self.burst_time.saturating_sub(dtime);
    }

    /// The next packet from `fifo` at `now`, after the updates due.
    #[inline(never)]
    pub fn dequeue(&mut self, fifo: &mut DropTail, now: Nanos) -> Option<Packet> {
        self.catch_up(now, fifo.len_bytes());
        let pkt = fifo.dequeue(now)?;
        self.dequeued(pkt.enq_ns, now, fifo.len_bytes());
        Some(pkt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, NodeId};
    use crate::net::packet::Kind;
    use crate::rng::Stream;
    use crate::time::NS_PER_MS;

    fn pie() -> Pie {
        Pie::new(&PieSpec::default(), Rng::stream(1, Stream::Queue, 0))
    }

    fn data() -> Packet {
        Packet::new(FlowId(0), NodeId(1), Kind::Data, 1500)
    }

    fn pkt(seq: u32, enq_ns: Nanos) -> Packet {
        let mut p = Packet::new(FlowId(0), NodeId(1), Kind::Data, 1500);
        p.seq = seq;
        p.enq_ns = enq_ns;
        p
    }

    /// α and β as Linux scales them per tick, before the auto-tuning.
    fn alpha_beta(p: &Pie) -> (u64, u64) {
        let per_tick = MAX_PROB / TICKS_PER_SEC;
        ((p.alpha as u64 * per_tick) >> 4, (p.beta as u64 * per_tick) >> 4)
    }

    #[test]
    fn defaults_are_linuxs() {
        let s = PieSpec::default();
        assert_eq!((s.target_ns, s.tupdate_ns, s.alpha, s.beta, s.mtu_bytes), (15 * NS_PER_MS, 15 * NS_PER_MS, 2, 20, 1500));
        let p = pie();
        assert_eq!((p.target, p.burst_time, p.next_update_ns), (234_375, 2_343_750, 500 * NS_PER_MS));
    }

    #[test]
    fn one_update_moves_the_probability_by_the_pi_law() {
        // From a probability of 10% (no auto-tuning), a delay of 20 ms against a 15-ms target
        // that was 18 ms at the last update: Δp = α·(20 − 15) ms + β·(20 − 18) ms, α = 0.125/s and
        // β = 1.25/s (per second of delay) — 0.000625 + 0.0025.
        let mut p = pie();
        p.prob = MAX_PROB / 10;
        p.qdelay = ticks(20 * NS_PER_MS);
        p.qdelay_old = ticks(18 * NS_PER_MS);
        p.calculate_probability(100_000);
        let dp = p.prob() - 0.1;
        assert!((dp - 0.003125).abs() < 1e-6, "Δp {dp}");
        assert_eq!(p.qdelay_old, ticks(20 * NS_PER_MS));
        // The same integers as Linux: Δ = α·5 ms + β·2 ms in ticks.
        let (a, b) = alpha_beta(&pie());
        assert_eq!(p.prob - MAX_PROB / 10, a * (ticks(20 * NS_PER_MS) - ticks(15 * NS_PER_MS)) + b * (ticks(20 * NS_PER_MS) - ticks(18 * NS_PER_MS)));
    }

    #[test]
    fn small_probabilities_take_smaller_steps() {
        // Below 10% α and β halve; below 1% they are quartered again per decade.
        let step = |prob: u64| {
            let mut p = pie();
            p.prob = prob;
            p.qdelay = ticks(16 * NS_PER_MS);
            p.qdelay_old = ticks(16 * NS_PER_MS);
            p.calculate_probability(100_000);
            p.prob - prob
        };
        let full = step(MAX_PROB / 5);
        assert!((step(MAX_PROB / 20) as f64 / full as f64 - 0.5).abs() < 1e-3);
        assert!((step(MAX_PROB / 200) as f64 / full as f64 - 1.0 / 8.0).abs() < 1e-3);
        assert!((step(MAX_PROB / 2000) as f64 / full as f64 - 1.0 / 32.0).abs() < 1e-3);
    }

    #[test]
    fn rises_are_capped_at_two_percent_from_ten() {
        let mut p = pie();
        p.prob = MAX_PROB / 5;
        p.qdelay = ticks(200 * NS_PER_MS);
        p.qdelay_old = ticks(20 * NS_PER_MS);
        p.calculate_probability(1_000_000);
        assert_eq!(p.prob - MAX_PROB / 5, MAX_PROB / 100 * 2);
        // Over 250 ms of delay another 2% on top.
        p.qdelay = ticks(300 * NS_PER_MS);
        let before = p.prob;
        p.calculate_probability(1_000_000);
        assert_eq!(p.prob - before, MAX_PROB / 100 * 2 + MAX_PROB / 50);
    }

    #[test]
    fn no_delay_decays_the_probability_and_restores_the_burst_allowance() {
        let mut p = pie();
        p.prob = MAX_PROB / 100;
        p.burst_time = 0;
        p.qdelay = 0;
        p.qdelay_old = 0;
        p.calculate_probability(0);
        // The PI law lowers it (delay 0 is below target), then the 1/64 decay.
        assert!(p.prob < MAX_PROB / 100 - MAX_PROB / 100 / 64);
        assert_eq!(p.burst_time, 0, "the allowance waits for the probability to reach 0");
        for _ in 0..200 {
            p.calculate_probability(0);
        }
        assert_eq!(p.prob, 0);
        assert_eq!(p.burst_time, BURST_TICKS);
    }

    #[test]
    fn the_burst_allowance_and_short_queues_admit_everything() {
        let mut p = pie();
        p.prob = MAX_PROB; // certain drop, once allowed to drop
        p.qdelay = ticks(30 * NS_PER_MS);
        assert!(p.admit(&mut data(), 100_000, false), "burst allowance left");
        p.burst_time = 0;
        assert!(p.admit(&mut data(), 2999, false), "under two MTUs queued");
        assert!(!p.admit(&mut data(), 3000, false));
        assert_eq!(p.drops(), 1);
        // Low delay and a probability under 20%: no drop however long the queue.
        p.prob = MAX_PROB / 5 - 1;
        p.qdelay = ticks(7 * NS_PER_MS);
        assert!((0..100).all(|_| p.admit(&mut data(), 1_000_000, false)));
        // The limit drops without counting as PIE's.
        assert!(!p.admit(&mut data(), 0, true));
        assert_eq!(p.drops(), 1);
    }

    /// With `ecn`, an early drop of an ECN-capable arrival becomes a CE mark while the
    /// probability is at most 10%, and the accumulated probability is kept (Linux resets it only
    /// on a drop); above 10%, or for an arrival that is not ECN-capable, it is a drop.
    #[test]
    fn ecn_marks_below_ten_percent() {
        let mut p = Pie::new(&PieSpec { ecn: true, ..PieSpec::default() }, Rng::stream(1, Stream::Queue, 0));
        p.burst_time = 0;
        p.qdelay = ticks(30 * NS_PER_MS);
        p.prob = MAX_PROB / 10;
        p.accu_prob = MAX_PROB / 2 * 17; // the next early decision is certain
        let mut ect = data();
        ect.set_ecn(crate::net::packet::Ecn::ECT0);
        let mut pkt = ect;
        assert!(p.admit(&mut pkt, 100_000, false));
        assert_eq!((pkt.ecn(), p.marks(), p.drops()), (crate::net::packet::Ecn::CE, 1, 0));
        assert!(p.accu_prob >= MAX_PROB / 2 * 17, "kept after a mark");
        assert!(!p.admit(&mut data(), 100_000, false), "not ECN-capable: dropped");
        assert_eq!((p.drops(), p.accu_prob), (1, 0));
        p.prob = MAX_PROB / 10 + 1;
        p.accu_prob = MAX_PROB / 2 * 17;
        let mut pkt = ect;
        assert!(!p.admit(&mut pkt, 100_000, false), "above 10%: dropped");
        assert_eq!((p.marks(), p.drops()), (1, 2));
    }

    #[test]
    fn drops_are_derandomised() {
        // At p = 10%: no drop until the accumulated probability reaches 0.85 (9 arrivals), always
        // one from 8.5 (86 arrivals: 85 × ⌊MAX_PROB / 10⌋ falls just short of it in Linux's
        // integers); in between at p each. Over many arrivals: about one in 18.
        let mut p = pie();
        p.burst_time = 0;
        p.prob = MAX_PROB / 10;
        p.qdelay = ticks(30 * NS_PER_MS);
        let mut gaps = Vec::new();
        let mut since = 0;
        for _ in 0..100_000 {
            since += 1;
            if !p.admit(&mut data(), 100_000, false) {
                gaps.push(since);
                since = 0;
            }
        }
        assert!(gaps.iter().all(|&g| (9..=86).contains(&g)), "gaps from {:?} to {:?}", gaps.iter().min(), gaps.iter().max());
        let mean = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64;
        // Geometric at p from the 9th arrival on: 8 + 1/p = 18.
        assert!((mean - 18.0).abs() < 0.5, "mean gap {mean}");
    }

    #[test]
    fn dequeues_measure_the_delay_and_spend_the_allowance() {
        let mut p = pie();
        let mut q = DropTail::new(Some(100), None);
        for s in 0..3 {
            q.enqueue(pkt(s, 0), 0).unwrap();
        }
        p.dequeue(&mut q, 10 * NS_PER_MS).unwrap();
        assert_eq!(p.qdelay_ns(), ticks(10 * NS_PER_MS) << TICK_SHIFT);
        assert_eq!(p.burst_time, BURST_TICKS, "the first dequeue has no time since the last");
        p.dequeue(&mut q, 30 * NS_PER_MS).unwrap();
        assert_eq!(p.burst_time, BURST_TICKS - (ticks(30 * NS_PER_MS) - ticks(10 * NS_PER_MS)));
        // The last packet leaves the queue empty: the delay reads 0.
        p.dequeue(&mut q, 40 * NS_PER_MS).unwrap();
        assert_eq!(p.qdelay, 0);
    }

    #[test]
    fn updates_run_every_tupdate_from_half_a_second() {
        // A standing 30-ms delay from the start: the first update at 0.5 s, then every 15 ms;
        // the probability rises at each, as the timer would have it rise.
        let mut p = pie();
        p.qdelay = ticks(30 * NS_PER_MS);
        p.qdelay_old = ticks(30 * NS_PER_MS);
        p.catch_up(499 * NS_PER_MS, 100_000);
        assert_eq!(p.prob, 0);
        p.catch_up(500 * NS_PER_MS, 100_000);
        let one = p.prob;
        assert!(one > 0);
        let mut stepwise = pie();
        stepwise.qdelay = p.qdelay;
        stepwise.qdelay_old = p.qdelay;
        for k in 0..=10 {
            stepwise.catch_up(500 * NS_PER_MS + k * 15 * NS_PER_MS, 100_000);
        }
        p.catch_up(650 * NS_PER_MS + 1, 100_000);
        assert_eq!(p.prob, stepwise.prob, "eleven updates at once or one by one");
        assert_eq!(p.next_update_ns, 665 * NS_PER_MS);
    }

    #[test]
    fn an_idle_queue_skips_its_updates_once_nothing_moves() {
        let mut p = pie();
        p.catch_up(3_600_000 * NS_PER_MS, 0);
        assert_eq!(p.prob, 0);
        assert_eq!(p.next_update_ns, 3_600_005 * NS_PER_MS);
    }
}
