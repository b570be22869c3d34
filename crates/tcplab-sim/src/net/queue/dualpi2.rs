//! DualPI2, the dual-queue coupled AQM of RFC 9332, as Linux's `sch_dualpi2` runs it
//! (`net/sched/sch_dualpi2.c`, Linux ≥ 6.17), with its defaults:
//!
//! - An arrival whose ECN field shares a bit with `ecn_mask` (by default ECT(1) and CE, the L4S
//!   identifier of RFC 9331) joins the L queue, every other packet the classic (C) queue. The
//!   limit counts both and drops the arrival.
//! - One PI2 controller: every `tupdate` (16 ms, from 16 ms after the queue is set up) its base
//!   probability p′ moves by α·(delay − target) + β·(delay − previous delay), the delay being the
//!   longer wait of the two queues' heads; in Linux's fixed point (p′ in 32 bits, α and β scaled
//!   from their 1/256 Hz as `dualpi2_scale_alpha_beta` scales them), so the updates are Linux's
//!   to the bit.
//! - On dequeue (`drop_early` off), unless less than two MTUs stay queued: a classic packet is
//!   dropped, or marked CE if ECN-capable, with probability p′² (two rolls); an L4S packet is
//!   marked with probability k·p′ (`coupling_factor` k = 2). When k·p′ exceeds 1 (overload),
//!   L4S packets are dropped with p′² as classic ones are (`drop_overload`) and marked otherwise.
//! - The L queue's own step: an L4S packet that waited longer than `step_thresh` (1 ms) is
//!   marked (dropped when not ECN-capable).
//! - Weighted round robin by bytes, the C queue's weight `c_protection` (10%): the L queue is
//!   served while the credit is at most 0, each L packet adding wc times its size and each C
//!   packet taking wl; the credit restarts at MTU·(wc − wl) whenever both queues are empty.
//!
//! As in [`super::Pie`], the update timer is not an event: updates due are run before the queue
//! next changes, on the state they would have seen. Not modelled: the memory limit (Linux also
//! bounds the skbs' true sizes, twice the limit in MTUs by default), tc filters and the
//! `LLLL` class, the step threshold in packets, and GSO splitting (tcplab's packets are
//! segments already).

use std::collections::VecDeque;

use super::droptail::DropTail;
use super::QueueDisc;
use crate::net::packet::{Ecn, Packet};
use crate::rng::Rng;
use crate::spec::Dualpi2Spec;
use crate::time::Nanos;

/// Probability 1 in Linux's fixed point (`MAX_PROB`: 2³² − 1).
pub const MAX_PROB: u32 = u32::MAX;

/// `dualpi2_scale_alpha_beta`: a gain of `param`/256 Hz as the probability's change per ns of
/// delay, in units of 2⁻⁶ of the probability's fixed point.
fn scale_alpha_beta(param: u32) -> u32 {
    ((param as u64 * MAX_PROB as u64 >> 2) / 1_000_000_000) as u32
}

#[derive(Debug)]
pub struct Dualpi2 {
    target_ns: u64,
    tupdate_ns: Nanos,
    alpha: u32,
    beta: u32,
    step_thresh_ns: Nanos,
    min_qlen_step: u32,
    coupling: u32,
    drop_overload: bool,
    drop_early: bool,
    wc: i32,
    wl: i32,
    credit_init: i32,
    ecn_mask: u8,
    mtu_bytes: u64,
    /// The L queue, each packet with whether the step applies to it (decided on arrival); the
    /// C queue is the FIFO beside it, which also counts the L queue's packets.
    l: VecDeque<(Packet, bool)>,
    prob: u32,
    last_qdelay: u64,
    credit: i32,
    next_update_ns: Nanos,
    rng: Rng,
    /// Packets dropped on dequeue, for the link to count.
    pub(super) dropped: Vec<Packet>,
    drops: u64,
    marks: u64,
    step_marks: u64,
    packets_in_l: u64,
    packets_in_c: u64,
}

impl Dualpi2 {
    pub fn new(spec: &Dualpi2Spec, rng: Rng) -> Self {
        let wc = spec.c_protection as i32;
        let wl = 100 - wc;
        let credit_init = spec.mtu_bytes as i32 * (wc - wl);
        Dualpi2 {
            target_ns: spec.target_ns,
            tupdate_ns: spec.tupdate_ns,
            alpha: scale_alpha_beta(spec.alpha),
            beta: scale_alpha_beta(spec.beta),
            step_thresh_ns: spec.step_thresh_ns,
            min_qlen_step: spec.min_qlen_step,
            coupling: spec.coupling_factor,
            drop_overload: spec.drop_overload,
            drop_early: spec.drop_early,
            wc,
            wl,
            credit_init,
            ecn_mask: spec.ecn_mask.bits(),
            mtu_bytes: spec.mtu_bytes as u64,
            l: VecDeque::new(),
            prob: 0,
            last_qdelay: 0,
            credit: credit_init,
            next_update_ns: spec.tupdate_ns,
            rng,
            dropped: Vec::new(),
            drops: 0,
            marks: 0,
            step_marks: 0,
            packets_in_l: 0,
            packets_in_c: 0,
        }
    }

    /// Packets the AQM dropped (PI2's and the step's), not the limit's.
    pub fn drops(&self) -> u64 {
        self.drops
    }

    /// Packets marked CE (PI2's and the step's; Linux `ecn_mark`, which counts a packet both
    /// mark would mark twice).
    pub fn marks(&self) -> u64 {
        self.marks
    }

    /// Of those, the step's (Linux `step_marks`).
    pub fn step_marks(&self) -> u64 {
        self.step_marks
    }

    /// Arrivals to the L and the C queue (Linux `packets_in_l`, `packets_in_c`).
    pub fn packets_in(&self) -> (u64, u64) {
        (self.packets_in_l, self.packets_in_c)
    }

    /// The base probability p′ (Linux `prob`, over 2³² − 1).
    pub fn prob(&self) -> f64 {
        self.prob as f64 / MAX_PROB as f64
    }

    /// Packets in the L queue.
    pub fn l_len(&self) -> usize {
        self.l.len()
    }

    fn is_l4s(&self, pkt: &Packet) -> bool {
        pkt.ecn().bits() & self.ecn_mask != 0
    }

    /// Run the probability updates due by `now` on the queue as it has stood since it last
    /// changed (`dualpi2_timer`).
    #[inline]
    pub fn catch_up(&mut self, fifo: &DropTail, now: Nanos) {
        if now >= self.next_update_ns {
            self.run_updates(fifo, now);
        }
    }

    #[cold]
    fn run_updates(&mut self, fifo: &DropTail, now: Nanos) {
        let c_head = fifo.front().map(|p| p.enq_ns);
        let l_head = self.l.front().map(|(p, _)| p.enq_ns);
        while self.next_update_ns <= now {
            let t = self.next_update_ns;
            let wait = |head: Option<Nanos>| head.map_or(0, |h| t - h);
            self.calculate_probability(wait(c_head).max(wait(l_head)));
            self.next_update_ns += self.tupdate_ns;
            if c_head.is_none() && l_head.is_none() && self.prob == 0 && self.last_qdelay == 0 && self.next_update_ns <= now {
                // Empty and at rest: every further update leaves it so.
                let skipped = (now - self.next_update_ns) / self.tupdate_ns + 1;
                self.next_update_ns += skipped * self.tupdate_ns;
            }
        }
    }

    /// `calculate_probability`, in Linux's integer types.
    fn calculate_probability(&mut self, qdelay: u64) {
        let mut delta = (qdelay as i64 - self.target_ns as i64).wrapping_mul(self.alpha as i64);
        delta = delta.wrapping_add((qdelay as i64 - self.last_qdelay as i64).wrapping_mul(self.beta as i64));
        self.last_qdelay = qdelay;
        let new_prob = if delta > 0 {
            let p = ((delta as u64 / 64) as u32).wrapping_add(self.prob);
            if p < self.prob { MAX_PROB } else { p }
        } else {
            let p = self.prob.wrapping_sub((delta.wrapping_neg() as u64 / 64) as u32);
            if p > self.prob { 0 } else { p }
        };
        self.prob = if self.drop_overload { new_prob } else { new_prob.min(MAX_PROB / self.coupling) };
    }

    /// `dualpi2_roll`.
    fn roll(&mut self, prob: u32) -> bool {
        ((self.rng.next_u64() >> 32) as u32) <= prob
    }

    /// `dualpi2_mark`: mark `pkt` CE if it is ECN-capable; whether it was marked here (one
    /// already CE is not counted again, where Linux's `ecn_mark` counts each marking).
    fn mark(&mut self, pkt: &mut Packet) -> bool {
        let was_ce = pkt.ecn() == Ecn::CE;
        let marked = pkt.mark_ce() && !was_ce;
        if marked {
            self.marks += 1;
        }
        marked
    }

    /// `must_drop`: whether `pkt` (an L4S packet when `l4s`) is to be dropped, marking it CE
    /// instead where it may be; `backlog` is what stays queued beside it.
    fn must_drop(&mut self, pkt: &mut Packet, l4s: bool, backlog: u64) -> bool {
        if backlog < 2 * self.mtu_bytes {
            return false;
        }
        let prob = self.prob;
        let local_l_prob = prob as u64 * self.coupling as u64;
        let overload = local_l_prob > MAX_PROB as u64;
        if !l4s {
            // dualpi2_classic_marking
            if self.roll(prob) && self.roll(prob) {
                if overload || pkt.ecn() == Ecn::NOT_ECT {
                    return true;
                }
                self.mark(pkt);
            }
            return false;
        }
        // dualpi2_scalable_marking
        if overload {
            if !self.drop_overload || !(self.roll(prob) && self.roll(prob)) {
                self.mark(pkt);
                return false;
            }
            return true;
        }
        if self.roll(local_l_prob as u32) {
            if pkt.ecn() == Ecn::NOT_ECT {
                return true;
            }
            self.mark(pkt);
        }
        false
    }

    /// `dualpi2_enqueue_skb`: the limit, the early drop when `drop_early`, then the packet's
    /// queue. `Err` hands back a dropped arrival.
    pub fn enqueue(&mut self, fifo: &mut DropTail, mut pkt: Packet, now: Nanos) -> Result<(), Packet> {
        self.catch_up(fifo, now);
        if fifo.is_full_for(pkt.size_bytes) {
            return Err(pkt);
        }
        let l4s = self.is_l4s(&pkt);
        if self.drop_early && self.must_drop(&mut pkt, l4s, fifo.len_bytes()) {
            self.drops += 1;
            return Err(pkt);
        }
        if l4s {
            let step = self.l.len() as u64 >= self.min_qlen_step as u64;
            self.packets_in_l += 1;
            fifo.hold(pkt.size_bytes);
            self.l.push_back((pkt, step));
            return Ok(());
        }
        self.packets_in_c += 1;
        fifo.enqueue(pkt, now)
    }

    /// A packet that arrived to an empty queue and an idle link goes straight out, as Linux's
    /// enqueue and dequeue at once would send it: less than two MTUs queued, no wait, so
    /// neither PI2 nor the step touches it, and the round robin's credit stays as it was.
    pub fn pass(&mut self, pkt: &Packet) {
        if self.is_l4s(pkt) {
            self.packets_in_l += 1;
        } else {
            self.packets_in_c += 1;
        }
    }

    /// `dualpi2_qdisc_dequeue`: the round robin's next packet, unless PI2 or the step drops
    /// it, then the next.
    pub fn dequeue(&mut self, fifo: &mut DropTail, now: Nanos) -> Option<Packet> {
        self.catch_up(fifo, now);
        loop {
            // dequeue_packet
            let l_len = self.l.len();
            let c_len = fifo.len_pkts() - l_len;
            let (mut pkt, step, credit_change) = if l_len > 0 && (c_len == 0 || self.credit <= 0) {
                let (pkt, step) = self.l.pop_front().expect("the L queue has a packet");
                fifo.release(pkt.size_bytes);
                (pkt, Some(step), if c_len > 0 { self.wc } else { 0 })
            } else if c_len > 0 {
                let pkt = fifo.dequeue(now).expect("the C queue has a packet");
                (pkt, None, if l_len > 0 { -self.wl } else { 0 })
            } else {
                self.credit = self.credit_init;
                return None;
            };
            if !self.drop_early && self.must_drop(&mut pkt, step.is_some(), fifo.len_bytes()) {
                self.drops += 1;
                self.dropped.push(pkt);
                continue;
            }
            if step == Some(true) && now - pkt.enq_ns > self.step_thresh_ns {
                // do_step_aqm
                if pkt.ecn() == Ecn::NOT_ECT {
                    self.drops += 1;
                    self.dropped.push(pkt);
                    continue;
                }
                if self.mark(&mut pkt) {
                    self.step_marks += 1;
                }
            }
            self.credit += credit_change * pkt.size_bytes as i32;
            return Some(pkt);
        }
    }

    /// Every packet in the L queue (the C queue's are the FIFO's).
    pub fn for_each(&self, f: &mut dyn FnMut(&Packet)) {
        self.l.iter().for_each(|(p, _)| f(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, NodeId};
    use crate::net::packet::Kind;
    use crate::rng::Stream;
    use crate::time::NS_PER_MS;

    fn pkt(flow: u32, seq: u32, ecn: Ecn, enq_ns: Nanos) -> Packet {
        let mut p = Packet::new(FlowId(flow), NodeId(1), Kind::Data, 1500);
        p.seq = seq;
        p.set_ecn(ecn);
        p.enq_ns = enq_ns;
        p
    }

    fn dualpi2(spec: Dualpi2Spec) -> (Dualpi2, DropTail) {
        (Dualpi2::new(&spec, Rng::stream(1, Stream::Queue, 0)), DropTail::new(Some(1000), None))
    }

    #[test]
    fn defaults_are_linuxs() {
        let s = Dualpi2Spec::default();
        assert_eq!(
            (s.target_ns, s.tupdate_ns, s.alpha, s.beta, s.step_thresh_ns, s.min_qlen_step, s.coupling_factor, s.drop_overload, s.drop_early, s.c_protection),
            (15 * NS_PER_MS, 16 * NS_PER_MS, 41, 819, NS_PER_MS, 0, 2, true, false, 10)
        );
        let (d, _) = dualpi2(s);
        // 41/256 Hz: (41 · (2³² − 1) >> 2) / 10⁹ = 44; 819/256 Hz: 879.
        assert_eq!((d.alpha, d.beta, d.credit, d.next_update_ns), (44, 879, -120_000, 16 * NS_PER_MS));
    }

    #[test]
    fn ect1_and_ce_go_to_the_l_queue_by_default() {
        let (mut d, mut q) = dualpi2(Dualpi2Spec::default());
        for (seq, ecn) in [(0, Ecn::NOT_ECT), (1, Ecn::ECT0), (2, Ecn::ECT1), (3, Ecn::CE)] {
            d.enqueue(&mut q, pkt(0, seq, ecn, 0), 0).unwrap();
        }
        assert_eq!((d.l_len(), q.len_pkts(), d.packets_in()), (2, 4, (2, 2)));
        let (mut d, mut q) = dualpi2(Dualpi2Spec { ecn_mask: crate::spec::Dualpi2EcnMask::AnyEct, ..Default::default() });
        for (seq, ecn) in [(0, Ecn::NOT_ECT), (1, Ecn::ECT0), (2, Ecn::ECT1)] {
            d.enqueue(&mut q, pkt(0, seq, ecn, 0), 0).unwrap();
        }
        assert_eq!(d.l_len(), 2);
    }

    #[test]
    fn one_update_moves_the_probability_by_the_pi_law() {
        let (mut d, mut q) = dualpi2(Dualpi2Spec::default());
        // A classic packet waiting from 0: at the first update (16 ms) the delay is 16 ms.
        d.enqueue(&mut q, pkt(0, 0, Ecn::NOT_ECT, 0), 0).unwrap();
        d.catch_up(&q, 16 * NS_PER_MS);
        // α·(16 − 15) ms + β·(16 − 0) ms, over 64: (44·10⁶ + 879·16·10⁶) / 64.
        let first = ((44 * 1_000_000 + 879 * 16_000_000u64) / 64) as u32;
        assert_eq!(d.prob, first);
        // That is 0.16 Hz · 1 ms + 3.2 Hz · 16 ms of probability, within the fixed point's rounding.
        assert!((d.prob() - (0.16 * 0.001 + 3.2 * 0.016)).abs() < 1e-4, "{}", d.prob());
        // The next update sees 32 ms: α·17 ms + β·16 ms more.
        d.catch_up(&q, 32 * NS_PER_MS);
        assert_eq!(d.prob, first + ((44 * 17_000_000 + 879 * 16_000_000u64) / 64) as u32);
        // Emptied, the delay is 0: the probability falls by α·15 ms + β·32 ms, then by α·15 ms
        // a step, floored at 0.
        let second = d.prob;
        d.dequeue(&mut q, 32 * NS_PER_MS).unwrap();
        d.catch_up(&q, 48 * NS_PER_MS);
        assert_eq!(d.prob, second - ((44 * 15_000_000 + 879 * 32_000_000u64) / 64) as u32);
        d.catch_up(&q, 64 * NS_PER_MS);
        assert_eq!((d.prob, d.last_qdelay), (0, 0));
    }

    #[test]
    fn the_longer_wait_of_the_two_heads_drives_it() {
        let (mut d, mut q) = dualpi2(Dualpi2Spec::default());
        d.enqueue(&mut q, pkt(0, 0, Ecn::ECT1, 2 * NS_PER_MS), 2 * NS_PER_MS).unwrap();
        d.enqueue(&mut q, pkt(1, 1, Ecn::NOT_ECT, 6 * NS_PER_MS), 6 * NS_PER_MS).unwrap();
        d.catch_up(&q, 16 * NS_PER_MS);
        // The L head has waited 14 ms, the C head 10: 14 counts.
        let delta: i64 = (14_000_000 - 15_000_000) * 44 + 14_000_000 * 879;
        assert_eq!(d.prob, (delta / 64) as u32);
    }

    #[test]
    fn the_round_robin_gives_the_classic_queue_a_tenth() {
        let (mut d, mut q) = dualpi2(Dualpi2Spec::default());
        for s in 0..50 {
            d.enqueue(&mut q, pkt(0, s, Ecn::ECT1, 0), 0).unwrap();
            d.enqueue(&mut q, pkt(1, 100 + s, Ecn::NOT_ECT, 0), 0).unwrap();
        }
        // At time 0 nothing waited: no step mark, and PI2's probability is 0.
        let order: Vec<u32> = (0..30).map(|_| d.dequeue(&mut q, 0).unwrap().flow.0).collect();
        // Credit −120000: nine L packets (+15000 each) bring it to +15000, then one C (−135000).
        let expect: Vec<u32> = (0..30).map(|i| u32::from(i % 10 == 9)).collect();
        assert_eq!(order, expect);
        // Alone, a queue is served whatever the credit, and an empty pair restarts it.
        let (mut d, mut q) = dualpi2(Dualpi2Spec::default());
        d.enqueue(&mut q, pkt(1, 0, Ecn::NOT_ECT, 0), 0).unwrap();
        assert_eq!(d.dequeue(&mut q, 0).unwrap().flow.0, 1);
        assert!(d.dequeue(&mut q, 0).is_none());
        assert_eq!(d.credit, -120_000);
    }

    #[test]
    fn the_step_marks_l4s_packets_that_waited_over_a_millisecond() {
        let (mut d, mut q) = dualpi2(Dualpi2Spec::default());
        d.enqueue(&mut q, pkt(0, 0, Ecn::ECT1, 0), 0).unwrap();
        d.enqueue(&mut q, pkt(0, 1, Ecn::ECT1, 500_000), 500_000).unwrap();
        d.enqueue(&mut q, pkt(1, 2, Ecn::ECT0, 0), 0).unwrap();
        // At 1.2 ms: the first waited 1.2 ms (marked), the second 0.7 ms (not); the classic
        // packet waited as long but the step is the L queue's alone.
        let out: Vec<(u32, Ecn)> = std::iter::from_fn(|| d.dequeue(&mut q, 1_200_000)).map(|p| (p.seq, p.ecn())).collect();
        assert_eq!(out, [(0, Ecn::CE), (1, Ecn::ECT1), (2, Ecn::ECT0)]);
        assert_eq!((d.step_marks(), d.marks(), d.drops()), (1, 1, 0));
        // min_qlen_step: the step applies only to arrivals finding that many L packets queued.
        let (mut d, mut q) = dualpi2(Dualpi2Spec { min_qlen_step: 1, ..Default::default() });
        d.enqueue(&mut q, pkt(0, 0, Ecn::ECT1, 0), 0).unwrap();
        d.enqueue(&mut q, pkt(0, 1, Ecn::ECT1, 0), 0).unwrap();
        let out: Vec<Ecn> = std::iter::from_fn(|| d.dequeue(&mut q, 5 * NS_PER_MS)).map(|p| p.ecn()).collect();
        assert_eq!(out, [Ecn::ECT1, Ecn::CE]);
    }

    /// Dequeue `n` packets of one kind through a queue held above two MTUs at probability `p`;
    /// returns the packets marked and dropped.
    fn outcomes(p: f64, ecn: Ecn, spec: Dualpi2Spec, n: u32) -> (u32, u32) {
        let (mut d, mut q) = dualpi2(spec);
        d.prob = (p * MAX_PROB as f64) as u32;
        d.next_update_ns = Nanos::MAX; // hold the probability
        let (mut marked, mut dropped) = (0, 0);
        for s in 0..n {
            // Thirty queued: a run of drops long enough to leave fewer than two behind is
            // too rare to happen.
            while q.len_pkts() < 30 {
                d.enqueue(&mut q, pkt(0, s, ecn, 0), 0).unwrap();
            }
            let before = d.drops();
            let out = d.dequeue(&mut q, 0).unwrap();
            dropped += (d.drops() - before) as u32;
            marked += u32::from(out.ecn() == Ecn::CE);
        }
        (marked, dropped)
    }

    #[test]
    fn classic_packets_see_the_square_and_l4s_packets_k_times_the_probability() {
        let n = 40_000;
        // p′ = 0.2: classic p′² = 4%, L4S k·p′ = 40%.
        let (m, x) = outcomes(0.2, Ecn::NOT_ECT, Dualpi2Spec::default(), n);
        assert_eq!(m, 0);
        let share = x as f64 / (n + x) as f64;
        assert!((share - 0.04).abs() < 0.005, "classic drops {share}");
        let (m, x) = outcomes(0.2, Ecn::ECT0, Dualpi2Spec::default(), n);
        assert_eq!(x, 0);
        assert!((m as f64 / n as f64 - 0.04).abs() < 0.005, "classic marks {m}");
        let (m, x) = outcomes(0.2, Ecn::ECT1, Dualpi2Spec::default(), n);
        assert_eq!(x, 0);
        assert!((m as f64 / n as f64 - 0.4).abs() < 0.01, "L4S marks {m}");
        // Overload (k·p′ = 1.2 > 1): L4S packets are dropped with p′² = 36% and the rest marked;
        // without drop_overload all are marked (p′ is then capped at 1/k by the update).
        let (m, x) = outcomes(0.6, Ecn::ECT1, Dualpi2Spec::default(), n);
        let share = x as f64 / (n + x) as f64;
        assert!((share - 0.36).abs() < 0.01 && m == n, "overload drops {share}, marks {m}");
        let (m, x) = outcomes(0.6, Ecn::ECT1, Dualpi2Spec { drop_overload: false, ..Default::default() }, n);
        assert_eq!((m, x), (n, 0));
    }

    #[test]
    fn nothing_is_dropped_below_two_mtus() {
        let (mut d, mut q) = dualpi2(Dualpi2Spec::default());
        d.prob = MAX_PROB;
        d.next_update_ns = Nanos::MAX;
        d.enqueue(&mut q, pkt(0, 0, Ecn::NOT_ECT, 0), 0).unwrap();
        d.enqueue(&mut q, pkt(0, 1, Ecn::NOT_ECT, 0), 0).unwrap();
        d.enqueue(&mut q, pkt(0, 2, Ecn::NOT_ECT, 0), 0).unwrap();
        // The first leaves 3000 bytes behind (two MTUs): dropped; the next, 1500 behind: kept.
        assert_eq!(d.dequeue(&mut q, 0).unwrap().seq, 1);
        assert_eq!(d.drops(), 1);
        assert_eq!(d.dequeue(&mut q, 0).unwrap().seq, 2);
        assert_eq!(d.dropped.len(), 1);
    }

    #[test]
    fn drop_early_applies_the_probability_on_arrival() {
        let (mut d, mut q) = dualpi2(Dualpi2Spec { drop_early: true, ..Default::default() });
        d.prob = MAX_PROB;
        d.next_update_ns = Nanos::MAX;
        for s in 0..2 {
            d.enqueue(&mut q, pkt(0, s, Ecn::NOT_ECT, 0), 0).unwrap();
        }
        // Two MTUs queued ahead: the arrival is dropped at once, and nothing on dequeue.
        assert_eq!(d.enqueue(&mut q, pkt(0, 2, Ecn::NOT_ECT, 0), 0).unwrap_err().seq, 2);
        assert_eq!(std::iter::from_fn(|| d.dequeue(&mut q, 0)).count(), 2);
        assert!(d.dropped.is_empty());
    }

    #[test]
    fn the_limit_counts_both_queues() {
        let (mut d, _) = dualpi2(Dualpi2Spec::default());
        let mut q = DropTail::new(Some(3), None);
        d.enqueue(&mut q, pkt(0, 0, Ecn::ECT1, 0), 0).unwrap();
        d.enqueue(&mut q, pkt(0, 1, Ecn::ECT1, 0), 0).unwrap();
        d.enqueue(&mut q, pkt(1, 2, Ecn::NOT_ECT, 0), 0).unwrap();
        assert_eq!(d.enqueue(&mut q, pkt(0, 3, Ecn::ECT1, 0), 0).unwrap_err().seq, 3);
        assert_eq!(d.enqueue(&mut q, pkt(1, 4, Ecn::NOT_ECT, 0), 0).unwrap_err().seq, 4);
        assert_eq!(q.len_pkts(), 3);
    }
}
