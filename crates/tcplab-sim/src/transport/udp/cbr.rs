//! A UDP constant-bit-rate source with a piecewise-constant rate schedule (e.g. 1 → 10 Mb/s in
//! 0.1 Mb/s steps, as in `002_ead9e99b0a1c2aa9.txt`), and its sink.

use crate::ids::{FlowId, NodeId};
use crate::measure::Histogram;
use crate::net::packet::{Kind, Packet};
use crate::spec::CbrSpec;
use crate::time::{tx_time_ns, Nanos};

#[derive(Debug)]
pub struct CbrSource {
    flow: FlowId,
    dst: NodeId,
    packet_bytes: u32,
    /// (time_ns, rate_bps), absolute simulation times.
    schedule: Vec<(Nanos, u64)>,
    next_seq: u32,
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
    pub fn new(flow: FlowId, dst: NodeId, spec: &CbrSpec) -> Self {
        CbrSource {
            flow,
            dst,
            packet_bytes: spec.packet_bytes,
            schedule: spec.schedule.clone(),
            next_seq: 0,
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
        p.ts_val_ns = now;
        self.next_seq += 1;
        self.sent_pkts += 1;
        self.sent_bytes += self.packet_bytes as u64;
        out.push(p);
        Some(now + tx_time_ns(self.packet_bytes, rate))
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
        let spec = CbrSpec { src: 0, dst: 1, start_ns: 0, stop_ns: None, packet_bytes: 1000, schedule: vec![(0, 1_000_000), (1_000_000_000, 2_000_000)] };
        let mut s = CbrSource::new(FlowId(0), NodeId(1), &spec);
        s.active = true;
        let mut out = vec![];
        // 1000 B at 1 Mb/s: one every 8 ms.
        assert_eq!(s.send(0, &mut out), Some(8_000_000));
        assert_eq!(s.send(1_000_000_000, &mut out), Some(1_004_000_000));
        assert_eq!(out.len(), 2);
    }
}
