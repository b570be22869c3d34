//! FQ-PIE (Ramakrishnan et al., "FQ-PIE Queue Discipline in the Linux Kernel", 2020) as Linux's
//! `sch_fq_pie` runs it (`net/sched/sch_fq_pie.c`, since 5.6), with its defaults:
//!
//! - A queue per flow (Linux: per hash bucket of the 5-tuple, 1024 buckets; tcplab: per flow and
//!   direction, never two in one), each with its own PIE state ([`Pie`]): its delay from its own
//!   packets' timestamps, its own drop probability and burst allowance, its "two MTUs queued"
//!   test on its own backlog.
//! - An arrival is dropped when the whole queue is at its limit; otherwise its flow's PIE decides
//!   (`pie_drop_early`, as `sch_pie`), and with `ecn` an ECN-capable arrival due to be dropped is
//!   marked CE instead while the flow's probability is at most `ecn_prob`% (10).
//! - The timer recalculates every flow's probability every `tupdate`, from 0.5 s on; as in
//!   [`Pie`], updates due are run before the flow's queue next changes (each flow's update reads
//!   only that flow's state).
//! - Deficit round robin over a new and an old list, as `sch_fq_codel` ([`Rounds`]). Unlike
//!   FQ-CoDel there is no drop from the fattest flow: the limit drops the arrival.
//!
//! The memory limit (Linux only counts arrivals over it, `overmemory`), byte mode and the
//! dequeue-rate estimator are not modelled.

use std::collections::VecDeque;

use super::droptail::DropTail;
use super::pie::Pie;
use super::rounds::Rounds;
use super::source_key;
use crate::net::packet::Packet;
use crate::rng::{Rng, Stream};
use crate::spec::{FqPieSpec, PieSpec};
use crate::time::Nanos;

#[derive(Debug)]
struct Flow {
    pkts: VecDeque<Packet>,
    bytes: u64,
    pie: Pie,
}

#[derive(Debug)]
pub struct FqPie {
    pie: PieSpec,
    ecn_prob: u32,
    flows: Vec<Flow>,
    rounds: Rounds,
    /// Seeds each flow's random stream (Linux draws from one generator; here each flow's PIE
    /// has its own, seeded in the order the flows appear).
    seeds: Rng,
}

impl FqPie {
    pub fn new(spec: &FqPieSpec, rng: Rng) -> Self {
        FqPie {
            pie: PieSpec { target_ns: spec.target_ns, tupdate_ns: spec.tupdate_ns, alpha: spec.alpha, beta: spec.beta, mtu_bytes: spec.mtu_bytes, ecn: spec.ecn },
            ecn_prob: spec.ecn_prob,
            flows: Vec::new(),
            rounds: Rounds::new(spec.quantum_bytes),
            seeds: rng,
        }
    }

    fn flow(&mut self, k: usize) -> &mut Flow {
        while self.flows.len() <= k {
            let id = self.flows.len() as u32;
            let rng = Rng::stream(self.seeds.next_u64(), Stream::Queue, id);
            self.flows.push(Flow { pkts: VecDeque::new(), bytes: 0, pie: Pie::new(&self.pie, rng).with_ecn_prob(self.ecn_prob) });
        }
        &mut self.flows[k]
    }

    /// Arrivals the flows' PIEs dropped (not the limit's).
    pub fn pie_drops(&self) -> u64 {
        self.flows.iter().map(|f| f.pie.drops()).sum()
    }

    /// Arrivals the flows' PIEs marked CE instead of dropping them.
    pub fn pie_marks(&self) -> u64 {
        self.flows.iter().map(|f| f.pie.marks()).sum()
    }

    /// The PIE state of the flow with source key `k` (see `source_key`), if it has appeared.
    pub fn flow_pie(&self, k: usize) -> Option<&Pie> {
        self.flows.get(k).map(|f| &f.pie)
    }

    /// Flows on the new and on the old list, for tests.
    pub fn lists(&self) -> (usize, usize) {
        self.rounds.lists()
    }

    /// `fq_pie_qdisc_enqueue`: the limit, then the flow's PIE; admitted packets are counted in
    /// `fifo` and wait in their flow's queue. `Err` hands back a dropped arrival.
    pub fn enqueue(&mut self, fifo: &mut DropTail, mut pkt: Packet, now: Nanos) -> Result<(), Packet> {
        let k = source_key(&pkt);
        let full = fifo.is_full_for(pkt.size_bytes);
        let f = self.flow(k);
        f.pie.catch_up(now, f.bytes);
        if !f.pie.admit(&mut pkt, f.bytes, full) {
            return Err(pkt);
        }
        f.bytes += pkt.size_bytes as u64;
        fifo.hold(pkt.size_bytes);
        f.pkts.push_back(pkt);
        self.rounds.activate(k);
        Ok(())
    }

    /// A packet that arrived to an empty queue and an idle link goes straight out: its flow joins
    /// the new list and spends its size, and its PIE sees a sojourn of 0, as Linux's enqueue and
    /// dequeue at once would leave them.
    pub fn pass(&mut self, pkt: &Packet, now: Nanos) {
        let k = source_key(pkt);
        self.flow(k).pie.pass(now);
        self.rounds.activate(k);
        self.rounds.spend(k, pkt.size_bytes);
    }

    /// `fq_pie_qdisc_dequeue`: the round's next flow hands out its head, after its PIE's updates
    /// due; its PIE sees the packet leave.
    pub fn dequeue(&mut self, fifo: &mut DropTail, now: Nanos) -> Option<Packet> {
        let flows = &mut self.flows;
        self.rounds.next(|k| {
            let f = &mut flows[k];
            let pkt = f.pkts.pop_front()?;
            f.pie.catch_up(now, f.bytes);
            f.bytes -= pkt.size_bytes as u64;
            fifo.release(pkt.size_bytes);
            f.pie.dequeued(pkt.enq_ns, now, f.bytes);
            Some(pkt)
        })
    }

    /// Every queued packet, flow by flow.
    pub fn for_each(&self, f: &mut dyn FnMut(&Packet)) {
        self.flows.iter().flat_map(|fl| fl.pkts.iter()).for_each(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, NodeId};
    use crate::net::packet::{Ecn, Kind};
    use crate::net::queue::QueueDisc;
    use crate::time::NS_PER_MS;

    fn pkt(flow: u32, seq: u32, size: u32, enq_ns: Nanos) -> Packet {
        let mut p = Packet::new(FlowId(flow), NodeId(1), Kind::Data, size);
        p.seq = seq;
        p.enq_ns = enq_ns;
        p
    }

    fn fq(spec: FqPieSpec) -> FqPie {
        FqPie::new(&spec, Rng::stream(1, Stream::Queue, 0))
    }

    fn drain(f: &mut FqPie, q: &mut DropTail, now: Nanos) -> Vec<u32> {
        std::iter::from_fn(|| f.dequeue(q, now)).map(|p| p.seq).collect()
    }

    #[test]
    fn defaults_are_linuxs() {
        let s = FqPieSpec::default();
        assert_eq!((s.target_ns, s.tupdate_ns, s.alpha, s.beta, s.quantum_bytes, s.mtu_bytes, s.ecn, s.ecn_prob), (15 * NS_PER_MS, 15 * NS_PER_MS, 2, 20, 1500, 1500, false, 10));
    }

    #[test]
    fn flows_take_turns_by_quantum_and_a_sparse_flow_goes_first() {
        let (mut f, mut q) = (fq(FqPieSpec::default()), DropTail::new(Some(1000), None));
        for s in 0..3 {
            f.enqueue(&mut q, pkt(0, s, 1500, 0), 0).unwrap();
            f.enqueue(&mut q, pkt(1, 10 + s, 1500, 0), 0).unwrap();
        }
        assert_eq!((f.lists(), q.len_pkts(), q.len_bytes()), ((2, 0), 6, 9000));
        assert_eq!(drain(&mut f, &mut q, 0), [0, 10, 1, 11, 2, 12]);
        assert_eq!((f.lists(), q.len_pkts(), q.len_bytes()), ((0, 0), 0, 0));
        // Flow 0 backlogged and on the old list; flow 1's one small packet overtakes it.
        for s in 0..5 {
            f.enqueue(&mut q, pkt(0, s, 1500, 0), 0).unwrap();
        }
        assert_eq!(f.dequeue(&mut q, 0).unwrap().seq, 0);
        assert_eq!(f.dequeue(&mut q, 0).unwrap().seq, 1);
        assert_eq!(f.lists(), (0, 1));
        f.enqueue(&mut q, pkt(1, 99, 100, 0), 0).unwrap();
        assert_eq!(f.dequeue(&mut q, 0).unwrap().seq, 99);
        assert_eq!(drain(&mut f, &mut q, 0), [2, 3, 4]);
    }

    #[test]
    fn the_limit_drops_the_arrival_not_the_fattest_flow() {
        let (mut f, mut q) = (fq(FqPieSpec::default()), DropTail::new(Some(4), None));
        for s in 0..4 {
            f.enqueue(&mut q, pkt(0, s, 1500, 0), 0).unwrap();
        }
        assert_eq!(f.enqueue(&mut q, pkt(1, 9, 1500, 0), 0).unwrap_err().seq, 9);
        assert_eq!((f.pie_drops(), q.len_pkts()), (0, 4));
    }

    /// Two packets leave per ms. Flow 1 offers one every 2 ms and never queues; flow 0 offers 1.6
    /// per ms, 7% more than the 1.5 left to it, so its queue stands and its PIE must drop (or
    /// mark) about 1 in 16 of its packets. Returns the queue and the packets lost and marked per
    /// flow over 10 s.
    fn standing_queue(spec: FqPieSpec) -> (FqPie, [u64; 2], [u64; 2]) {
        let (mut f, mut q) = (fq(spec), DropTail::new(Some(100_000), None));
        let (mut lost, mut marked) = ([0; 2], [0; 2]);
        let mut seq = 0;
        for ms in 0..10_000u64 {
            let t = ms * NS_PER_MS;
            let offers = [1 + u64::from(ms % 5 < 3), u64::from(ms % 2 == 0)];
            for (flow, n) in offers.into_iter().enumerate() {
                for _ in 0..n {
                    let mut p = pkt(flow as u32, seq, 1500, t);
                    p.set_ecn(Ecn::ECT0);
                    seq += 1;
                    if f.enqueue(&mut q, p, t).is_err() {
                        lost[flow] += 1;
                    }
                }
            }
            for _ in 0..2 {
                if let Some(p) = f.dequeue(&mut q, t) {
                    marked[p.flow.idx()] += u64::from(p.ecn() == Ecn::CE);
                }
            }
        }
        (f, lost, marked)
    }

    #[test]
    fn each_flow_has_its_own_pie() {
        let (f, lost, marked) = standing_queue(FqPieSpec::default());
        // Flow 0 sent 16 000 packets and could take 15 000: about 1000 dropped, none of flow 1's.
        assert!((800..1200).contains(&lost[0]) && lost[1] == 0, "{lost:?}");
        assert_eq!(marked, [0, 0]);
        assert_eq!(f.pie_drops(), lost[0]);
        let (p0, p1) = (f.flow_pie(0).unwrap(), f.flow_pie(2).unwrap());
        assert!(p0.prob() > 0.01 && p1.prob() == 0.0, "{} {}", p0.prob(), p1.prob());
        // Flow 0's own delay is held near the target; flow 1's packets never wait.
        assert!(p0.qdelay_ns() > 5 * NS_PER_MS && p0.qdelay_ns() < 60 * NS_PER_MS, "{}", p0.qdelay_ns());
        assert_eq!(p1.qdelay_ns(), 0);
    }

    #[test]
    fn with_ecn_marks_up_to_ecn_prob() {
        // The same overload with ECN: flow 0's early drops become marks while its probability is
        // at most 10% (the default ecn_prob). Marks do not shed load, so its queue and probability
        // climb until drops (above 10%) take over: both happen, and flow 1 sees neither.
        let (f, lost, marked) = standing_queue(FqPieSpec { ecn: true, ..FqPieSpec::default() });
        assert!(marked[0] > 10 && lost[0] > 100 && lost[1] == 0 && marked[1] == 0, "{lost:?} {marked:?}");
        assert_eq!((f.pie_marks(), f.pie_drops()), (marked[0], lost[0]));
        // With ecn_prob 0 no probability is low enough to mark at.
        let (f, lost, marked) = standing_queue(FqPieSpec { ecn: true, ecn_prob: 0, ..FqPieSpec::default() });
        assert!(marked == [0, 0] && lost[0] > 100, "{lost:?} {marked:?}");
        assert_eq!(f.pie_marks(), 0);
    }
}
