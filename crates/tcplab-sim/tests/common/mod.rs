//! What the scenario tests share: building dumbbells, running them, measuring like the papers.
//!
//! `TCPLAB_SEED` overrides the master seed of every scenario built here; the seed in use is
//! printed when a run fails.

#![allow(dead_code)] // each test binary uses its own part

use tcplab_sim::spec::{Dumbbell, FlowSpec, QueueSpec, Spec, TcpSpec, Topology};
use tcplab_sim::{simulate, SimResult};

pub const MS: u64 = 1_000_000;
pub const S: u64 = 1_000_000_000;
/// Linux's MSS with timestamps on a 1500-byte MTU.
pub const MSS: f64 = 1448.0;

pub fn seed() -> u64 {
    std::env::var("TCPLAB_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1)
}

/// The bandwidth-delay product in 1500-byte packets.
pub fn bdp_pkts(rate_bps: u64, rtt_ns: u64) -> u64 {
    rate_bps * rtt_ns / S / 8 / 1500
}

/// A dumbbell with one pair per flow (flow i: sender i → receiver i), 1 Gb/s access links, the
/// whole RTT on the bottleneck, a DropTail buffer of `buffer_pkts`, 5 ms start jitter.
pub fn dumbbell<F: Into<FlowSpec>>(rate_bps: u64, rtt_ns: u64, buffer_pkts: u64, flows: Vec<F>, duration_ns: u64) -> Spec {
    let pairs = flows.len() as u32;
    Spec {
        seed: seed(),
        duration_ns,
        interval_ns: S,
        start_jitter_ns: 5 * MS,
        host_jitter_ns: 0,
        host_stall_ns: 0,
        host_stall_prob: 0.0,
        host_data_holds_ns: Vec::new(),
        host_ack_holds_ns: Vec::new(),
        topology: Topology::Dumbbell(Dumbbell {
            pairs,
            bottleneck_rate_bps: rate_bps,
            bottleneck_delay_ns: rtt_ns / 2,
            access_rate_bps: 1_000_000_000,
            access_delay_ns: vec![0; pairs as usize],
            queue: QueueSpec::Droptail { limit_pkts: Some(buffer_pkts), limit_bytes: None },
            access_queue: QueueSpec::Droptail { limit_pkts: Some(10_000), limit_bytes: None },
            loss: 0.0,
            reverse_loss: 0.0,
            bottleneck_schedule: Vec::new(),
        }),
        flows: flows.into_iter().map(Into::into).collect(),
        capture: None,
    }
}

/// Set the random loss on the forward (and reverse) bottleneck of a dumbbell.
pub fn with_loss(mut spec: Spec, forward: f64, reverse: f64) -> Spec {
    if let Topology::Dumbbell(d) = &mut spec.topology {
        d.loss = forward;
        d.reverse_loss = reverse;
    }
    spec
}

pub fn run(spec: &Spec) -> SimResult {
    simulate(spec).unwrap_or_else(|e| panic!("seed {}: {e}", spec.seed))
}

/// Per-interval goodput of `flow` in Mb/s for the intervals ending in (from_s, to_s], as iperf's
/// 1 s reports over the papers' window.
pub fn series_mbps(r: &SimResult, flow: u32, from_s: u64, to_s: u64) -> Vec<f64> {
    let t = r.series(flow, "t_ns");
    let g = r.series(flow, "goodput_bytes");
    t.iter()
        .zip(&g)
        .filter(|(t, _)| **t > (from_s * S) as f64 && **t <= (to_s * S) as f64)
        .map(|(_, g)| *g * 8.0 / 1e6)
        .collect()
}

/// Mean goodput of `flow` in Mb/s over intervals ending in (from_s, to_s].
pub fn mean_mbps(r: &SimResult, flow: u32, from_s: u64, to_s: u64) -> f64 {
    let x = series_mbps(r, flow, from_s, to_s);
    x.iter().sum::<f64>() / x.len() as f64
}

/// Jain's fairness index, eq. (1) of 000_d4086674ca413fb5.txt.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let q: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * q)
}

/// The most goodput a 1500-byte packet carrying 1448 bytes can give on `rate_bps`.
pub fn goodput_ceiling_mbps(rate_bps: u64) -> f64 {
    rate_bps as f64 * MSS / 1500.0 / 1e6
}

/// A sender with SACK recovery on its own (no network), flow 0 to node 1, that has sent its
/// initial window at time 0 (returned): for tests that feed it ACKs by hand. `spec.sack` stays
/// as given (on by default; off: Linux's recovery without SACK).
pub fn lone_sender(mut spec: tcplab_sim::spec::TcpSpec) -> (tcplab_sim::transport::tcp::TcpSender, Vec<tcplab_sim::net::packet::Packet>) {
    use tcplab_sim::ids::{FlowId, NodeId};
    use tcplab_sim::rng::{Rng, Stream};
    spec.recovery = tcplab_sim::spec::Recovery::Sack;
    let mut s = tcplab_sim::transport::tcp::TcpSender::new(FlowId(0), NodeId(1), &spec, Rng::stream(1, Stream::CongestionControl, 0));
    let mut out = vec![];
    s.start(0, &mut out);
    (s, out)
}

/// An ACK of everything below segment `ack`, with SACK blocks `sack` and the echoed timestamp
/// `ts_ecr_ns` (0: none).
pub fn ack_packet(ack: u32, sack: &[(u32, u32)], ts_ecr_ns: u64) -> tcplab_sim::net::packet::Packet {
    use tcplab_sim::ids::{FlowId, NodeId};
    let mut a = tcplab_sim::net::packet::Packet::new(FlowId(0), NodeId(0), tcplab_sim::net::packet::Kind::Ack, 52);
    a.ack = ack;
    for (slot, &b) in a.sack.iter_mut().zip(sack) {
        *slot = b;
    }
    a.n_sack = sack.len() as u8;
    a.ts_ecr_ns = ts_ecr_ns;
    a
}

/// A TCP flow of `cc` from sender `pair` to its receiver in a dumbbell of `pairs` pairs.
pub fn pair_flow(pair: u32, pairs: u32, cc: &str, start_ns: u64) -> TcpSpec {
    let mut t = TcpSpec::new(pair, pairs + pair);
    t.cc = cc.into();
    t.start_ns = start_ns;
    t
}

/// `spec` (a dumbbell) with `queue` on its bottleneck.
pub fn with_queue(mut spec: Spec, queue: QueueSpec) -> Spec {
    if let Topology::Dumbbell(d) = &mut spec.topology {
        d.queue = queue;
    }
    spec
}

/// Column `col` of the forward bottleneck's row of the queues table.
pub fn queue_col(r: &SimResult, col: &str) -> f64 {
    r.queues.col(col).get(0)
}
