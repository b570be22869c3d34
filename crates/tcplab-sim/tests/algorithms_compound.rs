//! Compound TCP on the papers' 100 Mb/s dumbbell (paper 000, §III): fairness to itself at equal
//! RTT, and its share against NewReno (Linux `reno` with SACK) at a large RTT with a small buffer.
//!
//! Seeds: `TCPLAB_SEED` overrides the master seed; the seed in use is printed when an assertion fails.

use tcplab_sim::spec::{FlowSpec, Recovery, Spec, TcpSpec};
use tcplab_sim::SimResult;

mod common;
use common::*;

const RATE_BPS: u64 = 100_000_000;

/// Paper 000's set-up: two pairs, the RTT on the bottleneck, a drop-tail buffer of
/// `buffer_bdp` × BDP; flow 1 starts at 0 s, flow 2 at 60 s; flows as the papers' Linux 2.6.22
/// ran them (SACK, PRR-like reduction, no RACK, no SACK compression).
fn pair(cc1: &str, cc2: &str, rtt_ns: u64, buffer_bdp: f64) -> Spec {
    let flows = [cc1, cc2]
        .iter()
        .enumerate()
        .map(|(i, cc)| {
            let mut t = TcpSpec::new(i as u32, 2 + i as u32);
            t.cc = cc.to_string();
            t.recovery = Recovery::Sack;
            t.sack = true;
            t.sack_compression = false;
            t.start_ns = if i == 0 { 0 } else { 60 * S };
            FlowSpec::Tcp(t)
        })
        .collect();
    dumbbell(RATE_BPS, rtt_ns, (bdp_pkts(RATE_BPS, rtt_ns) as f64 * buffer_bdp) as u64, flows, 300 * S)
}

/// Mean goodput of `flow` in Mb/s over the papers' window, 120–300 s.
fn mean_mbps(r: &SimResult, flow: u32) -> f64 {
    let t = r.series(flow, "t_ns");
    let g = r.series(flow, "goodput_bytes");
    let picked: Vec<f64> = t.iter().zip(&g).filter(|(t, _)| **t > (120 * S) as f64).map(|(_, g)| *g).collect();
    picked.iter().sum::<f64>() * 8.0 / picked.len() as f64 / 1e6
}

#[test]
fn compound_is_fair_to_itself_at_equal_rtt() {
    // Both flows see the same RTT (100 ms); whatever the buffer, the delay-based components see
    // the same queue and the Reno components the same losses.
    for buffer_bdp in [0.2, 1.0] {
        let r = run(&pair("compound", "compound", 100 * MS, buffer_bdp));
        let x = [mean_mbps(&r, 0), mean_mbps(&r, 1)];
        let j = jain(&x);
        println!("compound/compound, 100 ms, {buffer_bdp} BDP: {:.1} / {:.1} Mb/s, JFI {j:.3}", x[0], x[1]);
        assert!(j >= 0.9, "seed {}: buffer {buffer_bdp} BDP: {x:?} Mb/s, JFI {j:.3}", seed());
        assert!(x[0] + x[1] > 85.0, "seed {}: the pair leaves the link idle: {x:?}", seed());
    }
}

#[test]
fn compound_takes_at_least_newrenos_share_at_large_rtt_with_a_small_buffer() {
    // Paper 000 (§IV-B, Fig. 4(g)/(h)): Compound as flow 2 is unfair to NewReno, worst "at high
    // RTTs and low RB"; each variant achieves higher throughput than NewReno.
    for rtt_ms in [200, 300, 400] {
        let r = run(&pair("reno", "compound", rtt_ms * MS, 0.2));
        let (newreno, compound) = (mean_mbps(&r, 0), mean_mbps(&r, 1));
        println!("newreno/compound, {rtt_ms} ms, 0.2 BDP: {newreno:.1} / {compound:.1} Mb/s");
        assert!(compound >= newreno, "seed {}: {rtt_ms} ms: NewReno {newreno:.1} Mb/s, Compound {compound:.1} Mb/s", seed());
    }
    // At 400 ms Reno's window alone (one segment per RTT) is slow to fill the pipe after a loss;
    // the delay-based window fills it while the queue stays short, so Compound as flow 2 gets
    // more than a NewReno flow 2 would in its place.
    let with_compound = mean_mbps(&run(&pair("reno", "compound", 400 * MS, 0.2)), 1);
    let reno_pair = run(&pair("reno", "reno", 400 * MS, 0.2));
    let with_newreno = mean_mbps(&reno_pair, 1);
    println!(
        "flow 2 at 400 ms, 0.2 BDP: Compound {with_compound:.1} Mb/s, NewReno {with_newreno:.1} Mb/s (its flow 1 {:.1})",
        mean_mbps(&reno_pair, 0)
    );
    assert!(with_compound > 1.2 * with_newreno, "seed {}: Compound {with_compound:.1}, NewReno {with_newreno:.1} Mb/s", seed());
}
