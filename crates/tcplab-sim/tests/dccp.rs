//! Scenario tests: DCCP with CCID 2 (RFC 4341) alone, against itself and against TCP, on the
//! 100 Mb/s dumbbell of `003_ea90dbf933913c7c.txt` (buffer 1 BDP, flow 1 at 0 s, flow 2 at
//! 30 s, throughput per 1 s interval). Hosts add up to 100 µs of processing delay per packet,
//! the noise of a real testbed: without it, a deterministic DropTail queue can lock the flows'
//! losses into a phase that favours one of them for the whole run (Floyd & Jacobson 1992).
//!
//! Seeds: `TCPLAB_SEED` overrides the master seed; the seed in use is printed on failure.

use tcplab_sim::spec::{DccpSpec, FlowSpec, QueueSpec, Recovery, Spec, TcpSpec, Topology};
use tcplab_sim::SimResult;

mod common;
use common::*;

const RATE: u64 = 100_000_000;

/// The paper's buffer: 100% of the BDP, in 1500-byte packets.
fn bdp_rounded(rtt_ns: u64) -> u64 {
    (RATE as f64 * rtt_ns as f64 / 1e9 / 8.0 / 1500.0).round() as u64
}

/// A 100 Mb/s dumbbell with one pair per flow, the whole RTT on the bottleneck.
fn dumbbell(rtt_ns: u64, flows: Vec<FlowSpec>, duration_ns: u64, loss: f64) -> Spec {
    let mut spec = with_loss(common::dumbbell(RATE, rtt_ns, bdp_rounded(rtt_ns), flows, duration_ns), loss, loss);
    spec.host_jitter_ns = 100_000;
    if let Topology::Dumbbell(d) = &mut spec.topology {
        d.access_queue = QueueSpec::Droptail { limit_pkts: Some(1000), limit_bytes: None };
    }
    spec
}

/// Flow `i` of `pairs`: DCCP/CCID 2 from sender i to receiver i, starting at `start_s`.
fn ccid2(i: u32, pairs: u32, start_s: u64) -> FlowSpec {
    let mut d = DccpSpec::new(i, pairs + i);
    d.start_ns = start_s * S;
    FlowSpec::Dccp(d)
}

/// The paper's "NewReno": Linux 2.6.22's reno with SACK on, i.e. Reno congestion control with
/// SACK recovery (RFC 6675) and no PRR (which Linux gained in 3.2).
fn newreno(i: u32, pairs: u32, start_s: u64) -> FlowSpec {
    let mut t = TcpSpec::new(i, pairs + i);
    t.recovery = Recovery::Sack;
    t.prr = false;
    t.start_ns = start_s * S;
    FlowSpec::Tcp(t)
}

/// Per-interval goodput of `flow` in Mb/s for intervals ending in (from_s, to_s].
fn series_mbps(r: &SimResult, flow: u32, from_s: u64, to_s: u64) -> Vec<f64> {
    let t = r.series(flow, "t_ns");
    let g = r.series(flow, "goodput_bytes");
    t.iter().zip(&g).filter(|(t, _)| **t > (from_s * S) as f64 && **t <= (to_s * S) as f64).map(|(_, g)| g * 8.0 / 1e6).collect()
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Eq. (1) over the two flows' mean throughputs in the window, and the mean of eq. (2) per interval.
fn fairness(r: &SimResult, from_s: u64, to_s: u64) -> (f64, f64, f64, f64) {
    let a = series_mbps(r, 0, from_s, to_s);
    let b = series_mbps(r, 1, from_s, to_s);
    let jt: Vec<f64> = a.iter().zip(&b).filter(|(x, y)| **x + **y > 0.0).map(|(x, y)| jain(&[*x, *y])).collect();
    (mean(&a), mean(&b), jain(&[mean(&a), mean(&b)]), mean(&jt))
}

/// Goodput a 1500-byte packet with a 1424-byte payload can carry on the bottleneck.
const CEILING_MBPS: f64 = RATE as f64 * 1424.0 / 1500.0 / 1e6;

#[test]
fn ccid2_fills_a_clean_100mbps_100ms_path() {
    let spec = dumbbell(100 * MS, vec![ccid2(0, 1, 0)], 120 * S, 0.0);
    let r = run(&spec);
    let g = series_mbps(&r, 0, 30, 120);
    let util = mean(&g) / CEILING_MBPS;
    eprintln!("seed {}: CCID2 alone, 100 ms: {:.2} Mb/s over 30–120 s = {:.1}% of {CEILING_MBPS:.2}", spec.seed, mean(&g), util * 100.0);
    assert!(util >= 0.90, "seed {}: utilisation {util:.3}", spec.seed);
    // A saw-tooth of loss events, not timeouts: the window halves, ssthresh follows.
    assert_eq!(r.flow(0, "rto_count"), 0.0, "seed {}", spec.seed);
    assert!(r.flow(0, "recoveries") >= 2.0, "seed {}", spec.seed);
    assert_eq!(r.flow(0, "retrans_pkts"), 0.0);
    // Every delivered datagram counts as goodput: 1424 bytes each.
    assert_eq!(r.flow(0, "goodput_bytes"), r.flow(0, "delivered_pkts") * 1424.0);
    // srtt between the base RTT and base RTT + a full buffer's delay (100 ms).
    let srtt = r.series(0, "srtt_ns");
    let last = srtt[srtt.len() - 1];
    assert!(last > 100e6 && last < 205e6, "seed {}: srtt {last}", spec.seed);
}

#[test]
fn ccid2_and_newreno_share_fairly_across_rtts() {
    // Table III, row "Reno": J = 0.93–0.96 at every RTT from 25 to 200 ms, DCCP first.
    for rtt_ms in [25, 100, 200] {
        let spec = dumbbell(rtt_ms * MS, vec![ccid2(0, 2, 0), newreno(1, 2, 30)], 300 * S, 0.0);
        let r = run(&spec);
        let (a, b, jfi, jt) = fairness(&r, 60, 300);
        eprintln!("seed {}: RTT {rtt_ms} ms: CCID2 {a:.1} Mb/s, NewReno {b:.1} Mb/s, JFI {jfi:.3}, mean J(t) {jt:.3}", spec.seed);
        assert!(jfi > 0.9, "seed {}: RTT {rtt_ms} ms: JFI {jfi:.3} ({a:.1} vs {b:.1} Mb/s)", spec.seed);
        assert!(a + b > 0.85 * CEILING_MBPS, "seed {}: RTT {rtt_ms} ms: {a:.1} + {b:.1} Mb/s", spec.seed);
    }
}

#[test]
fn two_ccid2_flows_are_fair_to_each_other() {
    // Table I, row "CCID2": J = 0.94–0.98.
    for rtt_ms in [25, 100, 200] {
        let spec = dumbbell(rtt_ms * MS, vec![ccid2(0, 2, 0), ccid2(1, 2, 30)], 300 * S, 0.0);
        let r = run(&spec);
        let (a, b, jfi, jt) = fairness(&r, 60, 300);
        eprintln!("seed {}: RTT {rtt_ms} ms: CCID2 {a:.1} Mb/s, CCID2 {b:.1} Mb/s, JFI {jfi:.3}, mean J(t) {jt:.3}", spec.seed);
        assert!(jfi >= 0.9, "seed {}: RTT {rtt_ms} ms: JFI {jfi:.3} ({a:.1} vs {b:.1} Mb/s)", spec.seed);
    }
}

#[test]
fn packets_are_conserved_with_dccp_tcp_and_random_loss() {
    let flows = vec![ccid2(0, 3, 0), newreno(1, 3, 2), ccid2(2, 3, 5)];
    let mut spec = dumbbell(50 * MS, flows, 40 * S, 0.01);
    if let FlowSpec::Dccp(d) = &mut spec.flows[2] {
        d.stop_ns = Some(30 * S);
        d.packet_bytes = 600;
    }
    let r = run(&spec);
    for f in 0..3u32 {
        let sent = r.flow(f, "sent_pkts");
        let accounted = r.flow(f, "delivered_pkts") + r.flow(f, "dropped_pkts") + r.flow(f, "in_flight_pkts");
        eprintln!("seed {}: flow {f}: sent {sent}, dropped {}, in flight {}", spec.seed, r.flow(f, "dropped_pkts"), r.flow(f, "in_flight_pkts"));
        assert_eq!(sent, accounted, "seed {}: flow {f}", spec.seed);
        assert!(r.flow(f, "dropped_pkts") > 0.0, "seed {}: flow {f} saw no loss", spec.seed);
        // The per-interval counters add up to the totals.
        for (col, total) in [("sent_pkts", "sent_pkts"), ("dropped_pkts", "dropped_pkts"), ("goodput_bytes", "goodput_bytes")] {
            let s: f64 = r.series(f, col).iter().sum();
            assert_eq!(s, r.flow(f, total), "seed {}: flow {f} {col}", spec.seed);
        }
    }
    // The 600-byte flow stopped at 30 s: its payload is 524 bytes, and it sent nothing after.
    assert_eq!(r.flow(2, "goodput_bytes"), r.flow(2, "delivered_pkts") * 524.0);
    assert_eq!(r.flow(2, "sent_bytes"), r.flow(2, "sent_pkts") * 600.0);
    let late: f64 = r.series(2, "sent_pkts")[31..].iter().sum();
    assert_eq!(late, 0.0, "seed {}", spec.seed);
    // No DCCP datagram is ever sent twice.
    assert_eq!(r.flow(0, "retrans_pkts") + r.flow(2, "retrans_pkts"), 0.0);
}

#[test]
fn a_lossy_path_slows_ccid2_like_tcp() {
    // 1% random loss on a 50 ms path: both settle near the Mathis rate, 1.22·MSS/(RTT·√p)
    // ≈ 1.22 · 1424 · 8 bit / (50 ms · 0.1) ≈ 2.8 Mb/s; neither is starved or dominant.
    let spec = dumbbell(50 * MS, vec![ccid2(0, 2, 0), newreno(1, 2, 0)], 120 * S, 0.01);
    let r = run(&spec);
    let (a, b, jfi, _) = fairness(&r, 20, 120);
    eprintln!("seed {}: 1% loss, 50 ms: CCID2 {a:.2} Mb/s, NewReno {b:.2} Mb/s, JFI {jfi:.3}", spec.seed);
    assert!(a > 1.0 && a < 8.0, "seed {}: CCID2 {a:.2} Mb/s", spec.seed);
    assert!(jfi > 0.8, "seed {}: {a:.2} vs {b:.2}", spec.seed);
}

#[test]
fn a_ccid2_sender_whose_whole_window_is_lost_recovers_by_its_timeout() {
    // 15% loss each way: every few seconds all a small window's packets or their Acks are lost,
    // and only the retransmission timer (RFC 4341 §5, Linux `ccid2_hc_tx_rto_expire`) gets the
    // sender going again: it fires, and the flow still sends in the last 10 s.
    let spec = dumbbell(50 * MS, vec![ccid2(0, 1, 0)], 60 * S, 0.15);
    let r = run(&spec);
    assert!(r.flow(0, "rto_count") > 0.0, "seed {}: no timeout fired", spec.seed);
    let late: f64 = r.series(0, "sent_pkts")[50..].iter().sum();
    assert!(late > 0.0, "seed {}: CCID2 stalled (rto_count {})", spec.seed, r.flow(0, "rto_count"));
}
