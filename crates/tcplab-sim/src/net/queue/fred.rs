//! Flow Random Early Drop (Lin and Morris, "Dynamics of Random Early Detection", SIGCOMM 1997):
//! RED's average and thresholds, with a count of each flow's packets in the queue, so that drops
//! fall on the flows that hold more than their share of the buffer and flows that do not respond
//! to drops are held to it.
//!
//! On an arrival from flow i (qlen_i its packets queued, avgcq = avg / active flows, at least 1):
//!
//! - An arrival to an empty queue first decays `avg` for the idle time, as RED does:
//!   avg ← (1 − w)^m·avg, m = the packets of `mean_pkt_bytes` the link could have sent.
//! - maxq is `min_thresh`, or 2 while avg ≥ `max_thresh`. A flow with qlen_i ≥ maxq, or with
//!   qlen_i > 2·avgcq while avg ≥ `max_thresh`, or with qlen_i ≥ avgcq after more than one
//!   strike, is non-adaptive: its strike count rises and the arrival is dropped.
//! - Between the thresholds, count rises, and an arrival from a flow with qlen_i ≥
//!   max(`min_q`, avgcq) is dropped with p_b/(1 − count·p_b), p_b = `max_p`·(avg − min)/(max −
//!   min) (count back to 0 on a drop). Below `min_thresh` nothing is dropped (count −1); at or
//!   above `max_thresh` every arrival is (count 0).
//! - A kept arrival makes its flow active (once) and counts in its qlen_i; avg moves by the
//!   weight w towards the queue, the arrival included.
//!
//! On a departure avg moves towards the queue left, and a flow whose last packet left is no
//! longer active and loses its strikes. Flows are told apart as DRR's are: a flow's data and its
//! acknowledgements apart. Thresholds are in packets.
//!
//! `many_flows` is the variant for many flows (FRED-2 in the CSFQ paper, FREDL in paper 004's
//! scripts), which "guarantees to each flow a minimum number of buffers": at or above
//! `max_thresh` an arrival from a flow with fewer than `min_q` packets queued is kept (the buffer
//! limit still holds). This is tcplab's reading of the paper's two-packet buffer; the authors'
//! ns-2 code was not available to check it against.

use super::source_key;
use crate::net::packet::Packet;
use crate::rng::Rng;
use crate::spec::FredSpec;
use crate::time::{Nanos, NS_PER_SEC};

#[derive(Clone, Copy, Debug, Default)]
struct FlowState {
    qlen: u32,
    strike: u32,
}

#[derive(Debug)]
pub struct Fred {
    min_th: f64,
    max_th: f64,
    max_p: f64,
    weight: f64,
    min_q: f64,
    /// FRED-2 / FREDL: above `max_th` a flow with fewer than `min_q` packets queued keeps them.
    many_flows: bool,
    /// Packets of the mean size the link sends per second (the idle decay's m per second).
    pkts_per_s: f64,
    avg: f64,
    count: i64,
    /// When the queue last emptied (`q_time`).
    idle_since: Nanos,
    nactive: u32,
    flows: Vec<FlowState>,
    rng: Rng,
    drops: u64,
}

impl Fred {
    /// FRED on a link of `rate_bps` whose buffer holds `limit_pkts` packets (thresholds by
    /// default a quarter and half of it, as Lin and Morris set them).
    pub fn new(spec: &FredSpec, rate_bps: u64, limit_pkts: f64, rng: Rng) -> Self {
        let min_th = spec.min_thresh_pkts.unwrap_or((limit_pkts / 4.0).max(1.0));
        Fred {
            min_th,
            max_th: spec.max_thresh_pkts.unwrap_or(2.0 * min_th),
            max_p: spec.max_p,
            weight: spec.weight,
            min_q: spec.min_q as f64,
            many_flows: spec.many_flows,
            pkts_per_s: rate_bps as f64 / (8.0 * spec.mean_pkt_bytes as f64),
            avg: 0.0,
            count: 0,
            idle_since: 0,
            nactive: 0,
            flows: Vec::new(),
            rng,
            drops: 0,
        }
    }

    /// Arrivals FRED dropped (not counting the buffer limit's drops).
    pub fn drops(&self) -> u64 {
        self.drops
    }

    /// The average queue, packets.
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// The thresholds in use, packets.
    pub fn thresholds(&self) -> (f64, f64) {
        (self.min_th, self.max_th)
    }

    /// Flows with packets queued.
    pub fn active(&self) -> u32 {
        self.nactive
    }


    fn avgcq(&self) -> f64 {
        let per_flow = if self.nactive > 0 { self.avg / self.nactive as f64 } else { self.avg };
        per_flow.max(1.0)
    }

    /// Whether to keep an arrival from `pkt`'s flow to a queue of `q` packets, which then takes
    /// it unless its limit is reached (`full`).
    pub fn admit(&mut self, pkt: &Packet, q: usize, full: bool, now: Nanos) -> bool {
        let k = source_key(pkt);
        if k >= self.flows.len() {
            self.flows.resize(k + 1, FlowState::default());
        }
        if q == 0 {
            let m = (now - self.idle_since) as f64 / NS_PER_SEC as f64 * self.pkts_per_s;
            self.avg *= (1.0 - self.weight).powf(m);
        }
        let avgcq = self.avgcq();
        let above = self.avg >= self.max_th;
        let maxq = if above { 2.0 } else { self.min_th };
        let f = &mut self.flows[k];
        let qlen = f.qlen as f64;
        if qlen >= maxq || (above && qlen > 2.0 * avgcq) || (qlen >= avgcq && f.strike > 1) {
            f.strike += 1;
            self.drops += 1;
            return false;
        }
        if self.avg >= self.min_th && !above {
            self.count += 1;
            if qlen >= self.min_q.max(avgcq) {
                let pb = self.max_p * (self.avg - self.min_th) / (self.max_th - self.min_th);
                let denom = 1.0 - self.count as f64 * pb;
                let pa = if denom > 0.0 { pb / denom } else { 1.0 };
                if self.rng.uniform() < pa {
                    self.count = 0;
                    self.drops += 1;
                    return false;
                }
            }
        } else if !above {
            self.count = -1;
        } else {
            self.count = 0;
            if !(self.many_flows && qlen < self.min_q) {
                self.drops += 1;
                return false;
            }
        }
        if full {
            return false;
        }
        if f.qlen == 0 {
            self.nactive += 1;
        }
        f.qlen += 1;
        self.avg = (1.0 - self.weight) * self.avg + self.weight * (q + 1) as f64;
        true
    }

    /// `pkt` left, the queue now `q` packets.
    pub fn departed(&mut self, pkt: &Packet, q: usize, now: Nanos) {
        let f = &mut self.flows[source_key(pkt)];
        f.qlen -= 1;
        if f.qlen == 0 {
            f.strike = 0;
            self.nactive -= 1;
        }
        self.avg = (1.0 - self.weight) * self.avg + self.weight * q as f64;
        if q == 0 {
            self.idle_since = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Kind;
    use crate::ids::{FlowId, NodeId};
    use crate::rng::Stream;

    fn fred(min: f64, max: f64) -> Fred {
        let spec = FredSpec { min_thresh_pkts: Some(min), max_thresh_pkts: Some(max), ..FredSpec::default() };
        Fred::new(&spec, 10_000_000, 64.0, Rng::stream(1, Stream::Queue, 0))
    }

    fn udp(flow: u32) -> Packet {
        Packet::new(FlowId(flow), NodeId(1), Kind::Udp, 1000)
    }

    #[test]
    fn defaults_follow_the_paper() {
        let f = Fred::new(&FredSpec::default(), 10_000_000, 64.0, Rng::stream(1, Stream::Queue, 0));
        assert_eq!(f.thresholds(), (16.0, 32.0));
        assert_eq!((f.max_p, f.weight, f.min_q), (0.02, 0.002, 2.0));
    }

    #[test]
    fn below_min_thresh_a_flow_may_queue_up_to_min_thresh_packets() {
        // avg stays near 0 (w = 0.002): no random drops, but a flow is held to maxq = min_th.
        let mut f = fred(16.0, 32.0);
        let mut q = 0;
        for _ in 0..16 {
            assert!(f.admit(&udp(0), q, false, 0));
            q += 1;
        }
        assert!(!f.admit(&udp(0), q, false, 0), "the 17th packet of one flow");
        assert_eq!(f.flows[0].strike, 1);
        // Another flow is not held back by the first one's packets.
        assert!(f.admit(&udp(1), q, false, 0));
        assert_eq!(f.active(), 2);
        assert_eq!(f.count, -1);
    }

    #[test]
    fn a_struck_flow_is_held_to_the_average_per_flow_share() {
        let mut f = fred(16.0, 32.0);
        f.avg = 8.0;
        f.nactive = 2;
        f.flows = vec![FlowState { qlen: 4, strike: 2 }, FlowState::default(), FlowState { qlen: 3, strike: 0 }];
        // avgcq = 4: the struck flow with 4 queued is dropped, an unstruck one with 4 is not.
        assert!(!f.admit(&udp(0), 7, false, 0));
        assert_eq!(f.flows[0].strike, 3);
        assert!(f.admit(&udp(1), 7, false, 0));
    }

    #[test]
    fn random_drops_fall_only_on_flows_above_their_share() {
        // avg between the thresholds; two active flows, avgcq = 12 (24 / 2).
        let mut dropped = [0, 0];
        for seed in 0..400 {
            let spec = FredSpec { min_thresh_pkts: Some(16.0), max_thresh_pkts: Some(32.0), max_p: 0.5, ..FredSpec::default() };
            let mut f = Fred::new(&spec, 10_000_000, 64.0, Rng::stream(seed, Stream::Queue, 0));
            f.avg = 24.0;
            f.nactive = 2;
            f.count = 0;
            f.flows = vec![FlowState { qlen: 13, strike: 0 }, FlowState::default(), FlowState { qlen: 2, strike: 0 }];
            dropped[0] += u32::from(!f.admit(&udp(0), 15, false, 0));
            dropped[1] += u32::from(!f.admit(&udp(1), 15, false, 0));
        }
        // p_b = 0.5 · 8/16 = 0.25, count 1: p_a = 0.25 / 0.75 = 1/3 for the robust flow.
        assert_eq!(dropped[1], 0, "a flow below max(min_q, avgcq) is never dropped at random");
        let frac = dropped[0] as f64 / 400.0;
        assert!((frac - 1.0 / 3.0).abs() < 0.07, "{frac}");
    }

    #[test]
    fn above_max_thresh_every_arrival_is_dropped_and_maxq_is_two() {
        let mut f = fred(16.0, 32.0);
        f.avg = 40.0;
        assert!(!f.admit(&udp(0), 40, false, 0));
        assert_eq!(f.flows[0].strike, 0, "a drop-tail drop is not a strike");
        f.flows[0].qlen = 2;
        f.nactive = 1;
        assert!(!f.admit(&udp(0), 40, false, 0));
        assert_eq!(f.flows[0].strike, 1, "qlen ≥ maxq = 2");
    }

    #[test]
    fn for_many_flows_each_flow_keeps_min_q_packets_above_max_thresh() {
        let spec = FredSpec { min_thresh_pkts: Some(16.0), max_thresh_pkts: Some(32.0), many_flows: true, ..FredSpec::default() };
        let mut f = Fred::new(&spec, 10_000_000, 64.0, Rng::stream(1, Stream::Queue, 0));
        f.avg = 40.0;
        assert!(f.admit(&udp(0), 40, false, 0));
        assert!(f.admit(&udp(0), 41, false, 0));
        assert!(!f.admit(&udp(0), 42, false, 0), "a third packet is over maxq = 2");
        assert!(!f.admit(&udp(1), 42, true, 0), "the buffer's limit still holds");
    }

    #[test]
    fn departures_move_the_average_and_release_the_flow() {
        let mut f = fred(16.0, 32.0);
        assert!(f.admit(&udp(0), 0, false, 0));
        assert!((f.avg - 0.002).abs() < 1e-12);
        f.flows[0].strike = 3;
        f.departed(&udp(0), 0, 5);
        assert_eq!((f.active(), f.flows[0].strike), (0, 0));
        assert!((f.avg - 0.002 * 0.998).abs() < 1e-12);
        // An arrival 1 s later to the empty queue first decays avg as if the link had sent 2500
        // packets of the mean size (500 B at 10 Mb/s).
        let before = f.avg;
        assert!(f.admit(&udp(0), 0, false, 1_000_000_005));
        let decayed = before * 0.998f64.powf(2500.0);
        assert!((f.avg - (0.998 * decayed + 0.002)).abs() < 1e-12, "{}", f.avg);
    }
}
