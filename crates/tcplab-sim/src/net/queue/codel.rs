//! CoDel, "Controlled Delay" (Nichols and Jacobson, RFC 8289), as Linux's `sch_codel` runs it
//! (`include/net/codel_impl.h`): it drops at the head of the queue, when the packet leaving it
//! has waited too long.
//!
//! - On every dequeue the packet's sojourn time is measured. While it is below `target`, or at
//!   most one MTU is left queued behind it, CoDel is content.
//! - Once the sojourn has stayed at or above `target` for a whole `interval`, CoDel enters the
//!   dropping state: it drops the head packet and takes the next, and schedules the next drop
//!   `interval / √count` later, count growing by one per drop (the control law). It leaves the
//!   state as soon as a dequeued packet's sojourn is below `target` (or the queue empties).
//! - Re-entering soon after leaving (within 16 intervals of the next scheduled drop) resumes the
//!   count where the last cycle ended, less the drops it began with.
//! - 1/√count is Linux's: a 16-bit fixed-point number kept by one Newton step per change of the
//!   count, so the drop times are Linux's to the nanosecond apart from its 1.024-µs clock.
//!
//! - With `ecn`, a packet due to be dropped is marked CE instead when it is ECN-capable, and
//!   sent; the mark counts as a drop for the control law, and the next is scheduled from it
//!   (Linux: off for `codel`, on for `fq_codel`).
//!
//! - With `ce_threshold`, a packet that leaves (is not dropped) after a sojourn longer than it is
//!   marked CE if it is ECN-capable, whatever the state (Linux's `ce_threshold`, for DCTCP-style
//!   senders; counted with the marks). With a `ce_threshold_mask`, only packets whose TOS byte
//!   masked equals `ce_threshold_selector` (Linux ≥ 5.16, set through `fq_codel`).
//!
//! The buffer limit drops arrivals as DropTail does (Linux's `limit`, 1000 packets by default).

use super::droptail::DropTail;
use super::QueueDisc;
use crate::net::packet::Packet;
use crate::spec::CodelSpec;
use crate::time::Nanos;

/// Bits of Linux's `rec_inv_sqrt` (a u16) and the shift that makes it a Q0.32 number.
const REC_INV_SQRT_BITS: u32 = 16;
const REC_INV_SQRT_SHIFT: u32 = 32 - REC_INV_SQRT_BITS;
/// 1/√1 in the 16-bit format (`~0U >> REC_INV_SQRT_SHIFT`).
const REC_INV_SQRT_ONE: u32 = u32::MAX >> REC_INV_SQRT_SHIFT;

/// Where CoDel takes its packets from: a FIFO, or one flow's queue of FQ-CoDel.
pub trait CodelSource {
    /// The head packet, taken out.
    fn pop(&mut self, now: Nanos) -> Option<Packet>;
    /// Bytes left queued: the whole queue's, as Linux passes the qdisc's backlog.
    fn backlog(&self) -> u64;
}

impl CodelSource for DropTail {
    #[inline]
    fn pop(&mut self, now: Nanos) -> Option<Packet> {
        QueueDisc::dequeue(self, now)
    }
    #[inline]
    fn backlog(&self) -> u64 {
        self.len_bytes()
    }
}

#[derive(Debug)]
pub struct Codel {
    target_ns: Nanos,
    interval_ns: Nanos,
    /// Bytes left queued at or below which a packet is never dropped (Linux: the device's MTU).
    mtu_bytes: u64,
    ecn: bool,
    /// `ce_threshold`: a longer sojourn marks the packet leaving.
    ce_threshold_ns: Option<Nanos>,
    ce_threshold_selector: u8,
    ce_threshold_mask: u8,
    /// Drops (and marks) in the current dropping state (Linux's `count`) and where the last one ended.
    count: u32,
    lastcount: u32,
    dropping: bool,
    /// 1/√count, 16-bit fixed point.
    rec_inv_sqrt: u32,
    /// When the sojourn time, above target since, will have been so for an interval (`None`: below).
    first_above: Option<Nanos>,
    drop_next: Nanos,
    /// Packets dropped at the head, waiting for the link to account for them.
    pub(super) dropped: Vec<Packet>,
    drops: u64,
    marks: u64,
}

impl Codel {
    pub fn new(spec: &CodelSpec) -> Self {
        Codel {
            target_ns: spec.target_ns,
            interval_ns: spec.interval_ns,
            mtu_bytes: spec.mtu_bytes as u64,
            ecn: spec.ecn,
            ce_threshold_ns: spec.ce_threshold_ns,
            ce_threshold_selector: spec.ce_threshold_selector,
            ce_threshold_mask: spec.ce_threshold_mask,
            count: 0,
            lastcount: 0,
            dropping: false,
            rec_inv_sqrt: 0,
            first_above: None,
            drop_next: 0,
            dropped: Vec::new(),
            drops: 0,
            marks: 0,
        }
    }

    /// Packets CoDel dropped (not counting the buffer limit's drops).
    pub fn drops(&self) -> u64 {
        self.drops
    }

    /// Packets CoDel marked CE instead of dropping them.
    pub fn marks(&self) -> u64 {
        self.marks
    }

    /// In the dropping state (for tests and the state's docs).
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// The current drop count and the time of the next drop.
    pub fn count(&self) -> u32 {
        self.count
    }

    pub fn drop_next_ns(&self) -> Nanos {
        self.drop_next
    }

    /// A packet that arrived to an empty queue and an idle link: its sojourn is 0, below target.
    #[inline]
    pub fn pass(&mut self) {
        self.first_above = None;
    }

    /// `codel_Newton_step`: one Newton iteration of 1/√count.
    fn newton_step(&mut self) {
        let invsqrt = (self.rec_inv_sqrt << REC_INV_SQRT_SHIFT) as u64;
        let invsqrt2 = (invsqrt * invsqrt) >> 32;
        let mut val = (3u64 << 32).wrapping_sub(self.count as u64 * invsqrt2);
        val >>= 2; // avoid overflow in the next multiply
        val = (val * invsqrt) >> (32 - 2 + 1);
        self.rec_inv_sqrt = (val >> REC_INV_SQRT_SHIFT) as u32;
    }

    /// `codel_control_law`: `t + interval / √count`.
    fn control_law(&self, t: Nanos) -> Nanos {
        t + ((self.interval_ns as u128 * ((self.rec_inv_sqrt << REC_INV_SQRT_SHIFT) as u128)) >> 32) as Nanos
    }

    /// `codel_should_drop` for `pkt`, just taken out with `backlog` bytes left, at `now`.
    fn should_drop(&mut self, pkt: Option<&Packet>, backlog: u64, now: Nanos) -> bool {
        let Some(pkt) = pkt else {
            self.first_above = None;
            return false;
        };
        let sojourn = now.saturating_sub(pkt.enq_ns);
        if sojourn < self.target_ns || backlog <= self.mtu_bytes {
            // Went below: stay below for at least an interval.
            self.first_above = None;
            return false;
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + self.interval_ns);
                false
            }
            Some(t) => now > t,
        }
    }

    fn drop(&mut self, pkt: Packet) {
        self.drops += 1;
        self.dropped.push(pkt);
    }

    /// With ECN on, mark `pkt` CE instead of dropping it, if it is ECN-capable.
    fn mark(&mut self, pkt: &mut Option<Packet>) -> bool {
        if self.ecn && pkt.as_mut().is_some_and(Packet::mark_ce) {
            self.marks += 1;
            return true;
        }
        false
    }

    /// `codel_dequeue`: the next packet to send from `fifo`, after the drops due at `now`. Out of
    /// line, so that the DropTail path beside it stays small.
    #[inline(never)]
    pub fn dequeue(&mut self, fifo: &mut DropTail, now: Nanos) -> Option<Packet> {
        self.dequeue_from(fifo, now)
    }

    /// `codel_dequeue` from any source of packets.
    pub fn dequeue_from(&mut self, fifo: &mut impl CodelSource, now: Nanos) -> Option<Packet> {
        let mut pkt = fifo.pop(now);
        if pkt.is_none() {
            self.dropping = false;
            return None;
        }
        let drop = self.should_drop(pkt.as_ref(), fifo.backlog(), now);
        if self.dropping {
            if !drop {
                // Sojourn below target: leave the dropping state.
                self.dropping = false;
            } else {
                // Drop as many as are due: a large backlog may make the next drop due now.
                while self.dropping && now >= self.drop_next {
                    self.count = self.count.wrapping_add(1);
                    self.newton_step();
                    if self.mark(&mut pkt) {
                        self.drop_next = self.control_law(self.drop_next);
                        break;
                    }
                    self.drop(pkt.take().expect("a packet to drop"));
                    pkt = fifo.pop(now);
                    if !self.should_drop(pkt.as_ref(), fifo.backlog(), now) {
                        self.dropping = false;
                    } else {
                        self.drop_next = self.control_law(self.drop_next);
                    }
                }
            }
        } else if drop {
            if !self.mark(&mut pkt) {
                self.drop(pkt.take().expect("a packet to drop"));
                pkt = fifo.pop(now);
                self.should_drop(pkt.as_ref(), fifo.backlog(), now);
            }
            self.dropping = true;
            // Re-entering soon after the last cycle: its drop rate is a good start.
            let delta = self.count.wrapping_sub(self.lastcount);
            if delta > 1 && (now as i128 - self.drop_next as i128) < 16 * self.interval_ns as i128 {
                self.count = delta;
                self.newton_step();
            } else {
                self.count = 1;
                self.rec_inv_sqrt = REC_INV_SQRT_ONE;
            }
            self.lastcount = self.count;
            self.drop_next = self.control_law(now);
        }
        if let (Some(threshold), Some(p)) = (self.ce_threshold_ns, pkt.as_mut()) {
            // Linux: `codel_time_after(vars->ldelay, params->ce_threshold)`, for the packets the
            // selector picks.
            let picked = |p: &Packet| self.ce_threshold_mask == 0 || p.tos & self.ce_threshold_mask == self.ce_threshold_selector;
            if now.saturating_sub(p.enq_ns) > threshold && picked(p) && p.mark_ce() {
                self.marks += 1;
            }
        }
        pkt
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, NodeId};
    use crate::net::packet::Kind;
    use crate::time::NS_PER_MS;

    fn spec() -> CodelSpec {
        CodelSpec::default()
    }

    fn pkt(seq: u32, enq_ns: Nanos) -> Packet {
        let mut p = Packet::new(FlowId(0), NodeId(1), Kind::Data, 1500);
        p.seq = seq;
        p.enq_ns = enq_ns;
        p
    }

    /// A queue of `n` packets all enqueued at 0.
    fn backlog(n: u32) -> DropTail {
        let mut q = DropTail::new(Some(100_000), None);
        for s in 0..n {
            q.enqueue(pkt(s, 0), 0).unwrap();
        }
        q
    }

    /// Linux's 1/√count after `n` Newton steps from count 1, as a float.
    fn inv_sqrt(c: &Codel) -> f64 {
        c.rec_inv_sqrt as f64 / 65536.0
    }

    #[test]
    fn defaults_are_linuxs() {
        let s = spec();
        assert_eq!((s.target_ns, s.interval_ns, s.mtu_bytes), (5 * NS_PER_MS, 100 * NS_PER_MS, 1500));
    }

    #[test]
    fn a_short_sojourn_never_drops() {
        let mut c = Codel::new(&spec());
        let mut q = backlog(100);
        // Every packet leaves 4.9 ms after it arrived: below target, however long it lasts.
        for i in 0..100 {
            let p = c.dequeue(&mut q, 4_900_000).unwrap();
            assert_eq!(p.seq, i);
        }
        assert_eq!((c.drops(), c.dropping()), (0, false));
    }

    #[test]
    fn the_first_drop_waits_a_whole_interval_above_target() {
        let mut c = Codel::new(&spec());
        let mut q = backlog(1000);
        // Above target from t = 10 ms: the interval runs to 110 ms; only a dequeue after it drops.
        let t0 = 10 * NS_PER_MS;
        assert!(c.dequeue(&mut q, t0).is_some());
        assert_eq!(c.first_above, Some(t0 + 100 * NS_PER_MS));
        for t in [50, 100, 110] {
            assert!(c.dequeue(&mut q, t * NS_PER_MS).is_some());
            assert_eq!(c.drops(), 0, "no drop at {t} ms");
        }
        let seq = c.dequeue(&mut q, 110 * NS_PER_MS + 1).unwrap().seq;
        assert_eq!(c.drops(), 1);
        assert_eq!(c.dropped.drain(..).map(|p| p.seq).collect::<Vec<_>>(), vec![seq - 1], "the head was dropped");
        assert!(c.dropping());
        // An interval later, as Linux computes it: interval · (0xffff << 16) / 2³² (1/√1 is 0xffff).
        assert_eq!((c.count(), c.drop_next_ns()), (1, 110 * NS_PER_MS + 1 + 99_998_474), "next drop an interval later");
    }

    /// Linux's 1/√count for counts 1..=n, by the same Newton recursion in floating point:
    /// y₁ = 1, y_k = y_{k−1} (3 − k y_{k−1}²) / 2 (one step per count, so early counts are off:
    /// y₂ = 0.5, not 0.707).
    fn newton_floats(n: usize) -> Vec<f64> {
        let mut y = vec![1.0f64];
        for k in 2..=n {
            let p = y[k - 2];
            y.push(p * (3.0 - k as f64 * p * p) / 2.0);
        }
        y
    }

    #[test]
    fn drops_follow_the_control_law() {
        // A standing queue that never drains: drop k+1 comes interval · y_k after drop k.
        let mut c = Codel::new(&spec());
        let mut q = backlog(20_000);
        let mut drop_times = Vec::new();
        let mut t = 10 * NS_PER_MS;
        while drop_times.len() < 40 {
            let before = c.drops();
            c.dequeue(&mut q, t).unwrap();
            if c.drops() > before {
                assert_eq!(c.drops(), before + 1, "one drop per dequeue at this rate");
                drop_times.push(t);
            }
            t += 100_000; // a dequeue every 0.1 ms
        }
        // The schedule runs from the scheduled times, not the ticks: compare cumulative times.
        let y = newton_floats(40);
        let mut due = drop_times[0] as f64;
        for k in 1..drop_times.len() {
            due += 100e6 * y[k - 1];
            let at = drop_times[k] as f64;
            // The drop comes at the first 0.1-ms tick at or after it is due; the 16-bit 1/√count
            // truncates, each scheduled time by at most interval · 2⁻¹⁶ (1.5 µs), and they add up.
            let slack = k as f64 * 1600.0;
            assert!(at >= due - slack && at < due + 100_000.0 + slack, "drop {k}: at {at} ns, due {due}");
        }
    }

    /// With `ecn`, ECN-capable packets due to be dropped leave marked CE instead, on the schedule
    /// the drops keep without it (each mark counts for the control law), and nothing is dropped;
    /// Linux `codel_dequeue` with `params->ecn`.
    #[test]
    fn ecn_marks_on_the_drop_schedule() {
        let ect = |n: u32| {
            let mut q = DropTail::new(Some(100_000), None);
            for s in 0..n {
                let mut p = pkt(s, 0);
                p.set_ecn(crate::net::packet::Ecn::ECT0);
                q.enqueue(p, 0).unwrap();
            }
            q
        };
        let (mut drops, mut marks) = (Codel::new(&spec()), Codel::new(&CodelSpec { ecn: true, ..spec() }));
        let (mut qd, mut qm) = (ect(20_000), ect(20_000));
        let (mut drop_times, mut mark_times) = (Vec::new(), Vec::new());
        let mut t = 10 * NS_PER_MS;
        while mark_times.len() < 30 {
            let before = drops.drops();
            drops.dequeue(&mut qd, t).unwrap();
            if drops.drops() > before {
                drop_times.push((t, drops.count()));
            }
            let p = marks.dequeue(&mut qm, t).unwrap();
            if p.ecn() == crate::net::packet::Ecn::CE {
                mark_times.push((t, marks.count()));
            }
            t += 100_000;
        }
        assert_eq!(mark_times[..], drop_times[..30]);
        assert_eq!((marks.drops(), marks.marks(), !marks.dropped.is_empty()), (0, 30, false));
        // What is not ECN-capable is dropped as before.
        let mut q = backlog(1000);
        let mut c = Codel::new(&CodelSpec { ecn: true, ..spec() });
        for t in [10, 50, 111, 112] {
            c.dequeue(&mut q, t * NS_PER_MS);
        }
        assert_eq!((c.drops(), c.marks()), (1, 0));
    }

    #[test]
    fn newton_steps_track_the_inverse_square_root() {
        let mut c = Codel::new(&spec());
        c.count = 1;
        c.rec_inv_sqrt = REC_INV_SQRT_ONE;
        let y = newton_floats(1000);
        for n in 2..=1000u32 {
            c.count = n;
            c.newton_step();
            let fixed = inv_sqrt(&c);
            assert!((fixed - y[n as usize - 1]).abs() < 2e-4, "count {n}: {fixed} against {}", y[n as usize - 1]);
            if n >= 10 {
                let exact = 1.0 / (n as f64).sqrt();
                assert!((fixed - exact).abs() < 0.005 * exact + 1e-4, "count {n}: {fixed} against 1/√n = {exact}");
            }
        }
        assert_eq!(newton_floats(2)[1], 0.5);
    }

    #[test]
    fn a_good_sojourn_leaves_the_dropping_state() {
        let mut c = Codel::new(&spec());
        let mut q = backlog(1000);
        c.dequeue(&mut q, 10 * NS_PER_MS);
        c.dequeue(&mut q, 111 * NS_PER_MS);
        assert!(c.dropping());
        // A packet that waited 1 ms: below target.
        let t = 300 * NS_PER_MS;
        let mut fresh = DropTail::new(Some(10), None);
        for s in 0..5 {
            fresh.enqueue(pkt(5000 + s, t - NS_PER_MS), t - NS_PER_MS).unwrap();
        }
        assert_eq!(c.dequeue(&mut fresh, t).unwrap().seq, 5000);
        assert!(!c.dropping());
        assert_eq!(c.drops(), 1);
    }

    #[test]
    fn one_mtu_left_is_never_dropped() {
        let mut c = Codel::new(&spec());
        // Two packets, long overdue: the first leaves one MTU behind it, so neither is dropped.
        let mut q = backlog(2);
        c.dequeue(&mut q, 10 * NS_PER_MS);
        c.dequeue(&mut q, 500 * NS_PER_MS);
        assert_eq!(c.drops(), 0);
    }

    #[test]
    fn an_empty_queue_ends_the_dropping_state() {
        let mut c = Codel::new(&spec());
        let mut q = backlog(4);
        c.dequeue(&mut q, 10 * NS_PER_MS);
        c.dequeue(&mut q, 111 * NS_PER_MS);
        assert!(c.dropping());
        while c.dequeue(&mut q, 400 * NS_PER_MS).is_some() {}
        assert!(!c.dropping());
        assert_eq!(q.len_pkts(), 0);
    }

    #[test]
    fn re_entering_soon_resumes_the_count() {
        let mut c = Codel::new(&spec());
        let mut q = backlog(5000);
        let mut t = 10 * NS_PER_MS;
        while c.count() < 6 {
            c.dequeue(&mut q, t);
            t += 100_000;
        }
        let (count, next) = (c.count(), c.drop_next_ns());
        // A good packet ends the cycle; the queue builds again and the next cycle starts within
        // 16 intervals of `next`: it starts at count − lastcount (lastcount was 1).
        let mut fresh = DropTail::new(Some(10), None);
        fresh.enqueue(pkt(1, t), t).unwrap();
        fresh.enqueue(pkt(2, t), t).unwrap();
        c.dequeue(&mut fresh, t);
        assert!(!c.dropping());
        let mut q = backlog(3000);
        t += 10 * NS_PER_MS;
        c.dequeue(&mut q, t);
        t += 101 * NS_PER_MS;
        assert!(t < next + 16 * 100 * NS_PER_MS);
        c.dequeue(&mut q, t);
        assert!(c.dropping());
        assert_eq!(c.count(), count - 1);
    }

    /// With a selector, `ce_threshold` marks only the packets whose TOS byte masked equals it:
    /// `0x1/0x1` picks ECT(1) and CE, the L4S identifier, and leaves ECT(0) to CoDel's own law.
    #[test]
    fn the_ce_threshold_selector_picks_which_packets_the_threshold_marks() {
        use crate::net::packet::Ecn;
        let spec = CodelSpec { ce_threshold_ns: Some(NS_PER_MS), ce_threshold_selector: 0x1, ce_threshold_mask: 0x1, ..spec() };
        let mut c = Codel::new(&spec);
        let mut q = DropTail::new(Some(100), None);
        for (seq, ecn) in [(0, Ecn::ECT1), (1, Ecn::ECT0), (2, Ecn::CE), (3, Ecn::NOT_ECT)] {
            let mut p = pkt(seq, 0);
            p.set_ecn(ecn);
            q.enqueue(p, 0).unwrap();
        }
        // All waited 2 ms, below CoDel's 5-ms target: only the threshold can mark.
        let out: Vec<Ecn> = std::iter::from_fn(|| c.dequeue(&mut q, 2 * NS_PER_MS)).map(|p| p.ecn()).collect();
        assert_eq!(out, [Ecn::CE, Ecn::ECT0, Ecn::CE, Ecn::NOT_ECT]);
        assert_eq!((c.marks(), c.drops()), (2, 0));
    }
}
