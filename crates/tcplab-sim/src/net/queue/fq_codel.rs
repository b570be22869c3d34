//! FQ-CoDel (Hoeiland-Joergensen et al., RFC 8290) as Linux's `sch_fq_codel` runs it
//! (`net/sched/sch_fq_codel.c`), Linux's default queue discipline:
//!
//! - A queue per flow (Linux: per hash bucket of the 5-tuple, 1024 buckets; tcplab: per flow and
//!   direction, never two in one), each with its own CoDel ([`Codel`]), whose "one MTU left"
//!   test reads the whole queue's backlog, as Linux passes it.
//! - Deficit round robin over a new and an old list ([`Rounds`]), a flow's CoDel handing out its
//!   packets (dropping at the head as CoDel does).
//! - When an arrival takes the queue over its limit, the flow holding the most bytes (the first
//!   such on a tie) loses packets from its head until half its bytes are gone, at most
//!   `drop_batch` packets.
//!
//! Each flow's CoDel marks ECN-capable packets instead of dropping them (`ecn`, on by default as
//! in Linux) and, with `ce_threshold`, marks what waited longer (only the packets its selector picks,
//! with `ce_threshold_mask`). The memory limit (tcplab's buffer may be in bytes instead) is not
//! modelled.

use std::collections::VecDeque;

use super::codel::{Codel, CodelSource};
use super::droptail::DropTail;
use super::rounds::Rounds;
use super::source_key;
use super::QueueDisc;
use crate::net::packet::Packet;
use crate::spec::{CodelSpec, FqCodelSpec};
use crate::time::Nanos;

#[derive(Debug)]
struct Flow {
    pkts: VecDeque<Packet>,
    bytes: u64,
    codel: Codel,
}

/// One flow's queue as CoDel sees it: packets leave it and the whole queue's count.
struct FlowSource<'a> {
    pkts: &'a mut VecDeque<Packet>,
    bytes: &'a mut u64,
    fifo: &'a mut DropTail,
}

impl CodelSource for FlowSource<'_> {
    fn pop(&mut self, _now: Nanos) -> Option<Packet> {
        let pkt = self.pkts.pop_front()?;
        *self.bytes -= pkt.size_bytes as u64;
        self.fifo.release(pkt.size_bytes);
        Some(pkt)
    }
    fn backlog(&self) -> u64 {
        self.fifo.len_bytes()
    }
}

#[derive(Debug)]
pub struct FqCodel {
    drop_batch: usize,
    codel: CodelSpec,
    flows: Vec<Flow>,
    rounds: Rounds,
    /// Packets dropped beyond the one `enqueue` hands back: CoDel's and the overlimit batch's.
    pub(super) dropped: Vec<Packet>,
    overlimit_drops: u64,
}

impl FqCodel {
    pub fn new(spec: &FqCodelSpec) -> Self {
        FqCodel {
            drop_batch: spec.drop_batch as usize,
            codel: CodelSpec {
                target_ns: spec.target_ns,
                interval_ns: spec.interval_ns,
                mtu_bytes: spec.mtu_bytes,
                ecn: spec.ecn,
                ce_threshold_ns: spec.ce_threshold_ns,
                ce_threshold_selector: spec.ce_threshold_selector,
                ce_threshold_mask: spec.ce_threshold_mask,
            },
            flows: Vec::new(),
            rounds: Rounds::new(spec.quantum_bytes),
            dropped: Vec::new(),
            overlimit_drops: 0,
        }
    }


    fn flow(&mut self, k: usize) -> &mut Flow {
        while self.flows.len() <= k {
            self.flows.push(Flow { pkts: VecDeque::new(), bytes: 0, codel: Codel::new(&self.codel) });
        }
        &mut self.flows[k]
    }

    /// Packets the flows' CoDels dropped at the head.
    pub fn codel_drops(&self) -> u64 {
        self.flows.iter().map(|f| f.codel.drops()).sum()
    }

    /// Packets the flows' CoDels marked CE instead of dropping them.
    pub fn codel_marks(&self) -> u64 {
        self.flows.iter().map(|f| f.codel.marks()).sum()
    }

    /// Packets dropped because an arrival took the queue over its limit.
    pub fn overlimit_drops(&self) -> u64 {
        self.overlimit_drops
    }

    /// Flows on the new and on the old list, for tests.
    pub fn lists(&self) -> (usize, usize) {
        self.rounds.lists()
    }

    /// `fq_codel_enqueue`: queue `pkt`, counted in `fifo`; over the limit, drop a batch from the
    /// fattest flow's head. `Err` hands back the first packet dropped (the rest wait in
    /// `dropped`, for [`super::Queue::take_dropped`]).
    pub fn enqueue(&mut self, fifo: &mut DropTail, pkt: Packet) -> Result<(), Packet> {
        let k = source_key(&pkt);
        let f = self.flow(k);
        f.bytes += pkt.size_bytes as u64;
        fifo.hold(pkt.size_bytes);
        f.pkts.push_back(pkt);
        self.rounds.activate(k);
        if !fifo.over_limit() {
            return Ok(());
        }
        // `fq_codel_drop`: the fattest flow (the first on a tie) loses up to half its bytes.
        let mut fat = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.bytes > self.flows[fat].bytes {
                fat = i;
            }
        }
        let threshold = self.flows[fat].bytes >> 1;
        let (mut first, mut len, mut n) = (None, 0u64, 0);
        loop {
            let f = &mut self.flows[fat];
            let Some(out) = f.pkts.pop_front() else { break };
            f.bytes -= out.size_bytes as u64;
            fifo.release(out.size_bytes);
            len += out.size_bytes as u64;
            n += 1;
            self.overlimit_drops += 1;
            if first.is_none() {
                first = Some(out);
            } else {
                self.dropped.push(out);
            }
            if n >= self.drop_batch || len >= threshold {
                break;
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// A packet that arrived to an empty queue and an idle link goes straight out: its flow joins
    /// the new list and spends its size, as Linux's enqueue and dequeue at once would leave it.
    pub fn pass(&mut self, pkt: &Packet) {
        let k = source_key(pkt);
        self.flow(k).codel.pass();
        self.rounds.activate(k);
        self.rounds.spend(k, pkt.size_bytes);
    }

    /// `fq_codel_dequeue`.
    pub fn dequeue(&mut self, fifo: &mut DropTail, now: Nanos) -> Option<Packet> {
        let (flows, dropped) = (&mut self.flows, &mut self.dropped);
        self.rounds.next(|k| {
            let Flow { pkts, bytes, codel } = &mut flows[k];
            let pkt = codel.dequeue_from(&mut FlowSource { pkts, bytes, fifo }, now);
            dropped.append(&mut codel.dropped);
            pkt
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
    use crate::net::packet::Kind;
    use crate::ids::{FlowId, NodeId};
    use crate::time::NS_PER_MS;

    fn pkt(flow: u32, seq: u32, size: u32, enq_ns: Nanos) -> Packet {
        let mut p = Packet::new(FlowId(flow), NodeId(1), Kind::Data, size);
        p.seq = seq;
        p.enq_ns = enq_ns;
        p
    }

    fn fq() -> FqCodel {
        FqCodel::new(&FqCodelSpec::default())
    }

    fn drain(f: &mut FqCodel, q: &mut DropTail, now: Nanos) -> Vec<u32> {
        std::iter::from_fn(|| f.dequeue(q, now)).map(|p| p.seq).collect()
    }

    #[test]
    fn defaults_are_linuxs() {
        let s = FqCodelSpec::default();
        assert_eq!((s.target_ns, s.interval_ns, s.quantum_bytes, s.drop_batch, s.mtu_bytes), (5 * NS_PER_MS, 100 * NS_PER_MS, 1500, 64, 1500));
    }

    #[test]
    fn flows_take_turns_by_quantum() {
        let (mut f, mut q) = (fq(), DropTail::new(Some(1000), None));
        for s in 0..3 {
            f.enqueue(&mut q, pkt(0, s, 1500, 0)).unwrap();
        }
        for s in 0..3 {
            f.enqueue(&mut q, pkt(1, 10 + s, 1500, 0)).unwrap();
        }
        assert_eq!(f.lists(), (2, 0));
        // Each flow sends one 1500-byte packet per quantum, alternately.
        assert_eq!(drain(&mut f, &mut q, 0), [0, 10, 1, 11, 2, 12]);
        assert_eq!((f.lists(), q.len_pkts(), q.len_bytes()), ((0, 0), 0, 0));
    }

    #[test]
    fn a_sparse_flow_goes_first() {
        // Flow 0 has a backlog and has used its first quantum (it is on the old list); flow 1's
        // single packet arrives: it joins the new list and leaves before flow 0's next.
        let (mut f, mut q) = (fq(), DropTail::new(Some(1000), None));
        for s in 0..5 {
            f.enqueue(&mut q, pkt(0, s, 1500, 0)).unwrap();
        }
        assert_eq!(f.dequeue(&mut q, 0).unwrap().seq, 0);
        assert_eq!(f.dequeue(&mut q, 0).unwrap().seq, 1); // a new quantum, now on the old list
        assert_eq!(f.lists(), (0, 1));
        f.enqueue(&mut q, pkt(1, 99, 100, 0)).unwrap();
        assert_eq!(f.lists(), (1, 1));
        assert_eq!(f.dequeue(&mut q, 0).unwrap().seq, 99);
        assert_eq!(drain(&mut f, &mut q, 0), [2, 3, 4]);
    }

    #[test]
    fn overlimit_drops_half_the_fattest_flow() {
        let (mut f, mut q) = (fq(), DropTail::new(Some(10), None));
        for s in 0..8 {
            f.enqueue(&mut q, pkt(0, s, 1500, 0)).unwrap();
        }
        f.enqueue(&mut q, pkt(1, 20, 1500, 0)).unwrap();
        f.enqueue(&mut q, pkt(1, 21, 1500, 0)).unwrap();
        // The eleventh packet: flow 0 (12 000 bytes) loses its head until 6000 bytes are gone.
        assert_eq!(f.enqueue(&mut q, pkt(1, 22, 1500, 0)).unwrap_err().seq, 0);
        assert_eq!(f.dropped.drain(..).map(|p| p.seq).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!((f.overlimit_drops(), q.len_pkts()), (4, 7));
        assert_eq!(drain(&mut f, &mut q, 0), [4, 20, 5, 21, 6, 22, 7]);
    }

    #[test]
    fn each_flow_has_its_own_codel() {
        // Flow 0's packets have waited 200 ms when they leave; flow 1's are fresh. After an
        // interval above target, CoDel drops from flow 0 only.
        let (mut f, mut q) = (fq(), DropTail::new(Some(10_000), None));
        let mut seq = 0;
        let mut t = 0;
        for _ in 0..400 {
            t += NS_PER_MS;
            // Flow 0 offers two packets for each one it is served: its queue stands and grows.
            f.enqueue(&mut q, pkt(0, seq, 1500, t.saturating_sub(200 * NS_PER_MS))).unwrap();
            f.enqueue(&mut q, pkt(0, seq + 1, 1500, t.saturating_sub(200 * NS_PER_MS))).unwrap();
            f.enqueue(&mut q, pkt(1, seq + 2, 1500, t)).unwrap();
            seq += 3;
            f.dequeue(&mut q, t);
            f.dequeue(&mut q, t);
        }
        let mut lost = [0, 0];
        f.dropped.drain(..).for_each(|p| lost[p.flow.idx()] += 1);
        assert!(lost[0] > 0 && lost[1] == 0, "{lost:?}");
        assert_eq!(f.codel_drops(), lost[0]);
    }
}
