//! Scenario tests of the delay-aware congestion controls (`cc/vegas.rs`, `veno.rs`,
//! `westwood.rs`, `illinois.rs`, `yeah.rs`, `lp.rs`, `hybla.rs`) against their papers' findings.
//!
//! Seeds: `TCPLAB_SEED` overrides the master seed of every scenario here; the seed in use is
//! printed when an assertion fails.

use tcplab_sim::rng::{Rng, Stream};
use tcplab_sim::spec::{FlowSpec, Recovery, Spec, TcpSpec};

mod common;
use common::*;


/// Flow `i` of `pairs` with congestion control `cc`, run as Linux runs it (SACK + PRR).
fn linux(cc: &str, i: u32, pairs: u32) -> TcpSpec {
    let mut t = TcpSpec::new(i, pairs + i);
    t.cc = cc.to_string();
    // The paper's stack (Linux 2.6.x): no RACK, no SACK compression.
    t.sack_compression = false;
    t
}

/// Flow `i` of `pairs` as the ns-2 studies' NewReno: Reno congestion control, NewReno recovery,
/// no SACK.
fn newreno(cc: &str, i: u32, pairs: u32) -> TcpSpec {
    let mut t = linux(cc, i, pairs);
    t.recovery = Recovery::Newreno;
    t.sack = false;
    t.prr = false;
    t
}

/// Mean bottleneck queue (waiting packets, link 0) over (from_s, to_s]: the run is deterministic,
/// so a run to `from_s` is a prefix of the run to `to_s`, and their queue areas subtract.
fn mean_queue_pkts(spec: &Spec, from_s: u64, to_s: u64) -> f64 {
    let area = |end_s: u64| {
        let mut s = spec.clone();
        s.duration_ns = end_s * S;
        run(&s).queues.col("mean_pkts").get(0) * end_s as f64
    };
    (area(to_s) - area(from_s)) / (to_s - from_s) as f64
}

/// Vegas (Linux `tcp_vegas.c`) holds cwnd while diff = ⌊cwnd·(rtt − baseRTT)/baseRTT⌋ is in
/// [alpha, beta], rtt being the round's minimum. On a clean 10 Mb/s, 60 ms path a queued segment
/// adds 1.2 ms: with Q queued, rtt ≈ baseRTT + 1.2·Q ms and cwnd ≈ 51 + Q, so
///   Q = 4: ⌊55·4.8/61.3⌋ = 4 (hold);  Q = 5: ⌊56·6.0/61.3⌋ = 5 > beta (−1);  Q = 1: ⌊52·1.2/61.3⌋ = 1 < alpha (+1)
/// → Vegas settles with alpha..beta = 2..4 segments queued.
#[test]
fn vegas_keeps_between_alpha_and_beta_segments_queued_on_a_clean_path() {
    let one = |t: TcpSpec| dumbbell(10_000_000, 60 * MS, 1000, vec![FlowSpec::Tcp(t)], 160 * S);
    // Without delayed ACKs every ACK releases one segment, so the queue is flat at what Vegas
    // measures. Slow start overshoots (Vegas decides once per RTT, on the round's minimum RTT)
    // and the excess drains at one segment per RTT: steady state from about 15 s; measured over
    // 40–160 s.
    let mut t = linux("vegas", 0, 1);
    t.delayed_ack = false;
    let spec = one(t.clone());
    let q = mean_queue_pkts(&spec, 40, 160);
    println!("Vegas, no delayed ACKs: mean queue {q:.2} segments");
    assert!((2.0..=4.5).contains(&q), "seed {}: mean queue {q:.2} segments, alpha..beta = 2..4", spec.seed);
    let r = run(&spec);
    assert_eq!(r.queues.col("dropped_pkts").get(0), 0.0, "Vegas never fills a 1000-packet buffer");
    let util = mean_mbps(&r, 0, 40, 160) / goodput_ceiling_mbps(10_000_000);
    assert!(util >= 0.97, "seed {}: utilisation {util:.3}: a few queued segments keep the link busy", spec.seed);

    // The parameters are Linux's module parameters: alpha 6, beta 8 keep 6..8 queued.
    t.cc_params = [("alpha".to_string(), 6.0), ("beta".to_string(), 8.0)].into();
    let spec = one(t);
    let q = mean_queue_pkts(&spec, 40, 160);
    println!("Vegas alpha 6 beta 8: mean queue {q:.2} segments");
    assert!((6.0..=8.5).contains(&q), "seed {}: mean queue {q:.2} segments, alpha..beta = 6..8", spec.seed);

    // With delayed ACKs, an ACK releases two segments back to back from a 1 Gb/s access link:
    // the queue swings one segment above the minimum Vegas sees.
    let spec = one(linux("vegas", 0, 1));
    let q = mean_queue_pkts(&spec, 40, 160);
    println!("Vegas, delayed ACKs: mean queue {q:.2} segments");
    assert!((2.0..=6.0).contains(&q), "seed {}: mean queue {q:.2} segments with delayed ACKs", spec.seed);
}

/// The finding of the ns-2 study of Tahoe/Reno/NewReno/Vegas (shared/papers/002, Experiment 2,
/// NewReno/Vegas): under congestion NewReno takes the bottleneck and Vegas, which reads the
/// queue NewReno builds as congestion, keeps backing off and "never gets predominant back".
/// Both flows use NewReno loss recovery without SACK, so only the congestion control differs.
#[test]
fn newreno_starves_vegas_on_a_shared_droptail_bottleneck() {
    // 10 Mb/s (the paper's links), RTT 40 ms (BDP 33 packets), DropTail buffer 50 packets.
    let spec = dumbbell(10_000_000, 40 * MS, 50, vec![FlowSpec::Tcp(newreno("reno", 0, 2)), FlowSpec::Tcp(newreno("vegas", 1, 2))], 200 * S);
    let r = run(&spec);
    let (nr, vegas) = (mean_mbps(&r, 0, 20, 200), mean_mbps(&r, 1, 20, 200));
    println!("NewReno {nr:.2} Mb/s, Vegas {vegas:.2} Mb/s");
    let total = nr + vegas;
    assert!(total >= 0.9 * goodput_ceiling_mbps(10_000_000), "seed {}: the pair fills the link: {total:.2} Mb/s", spec.seed);
    assert!(vegas <= 0.25 * total, "seed {}: Vegas {vegas:.2} Mb/s vs NewReno {nr:.2}: well below its fair half", spec.seed);
    // The same path with Vegas alone gets it all: the starvation is the competition's.
    let alone = dumbbell(10_000_000, 40 * MS, 50, vec![FlowSpec::Tcp(newreno("vegas", 0, 1))], 100 * S);
    let v = mean_mbps(&run(&alone), 0, 20, 100);
    assert!(v >= 0.9 * goodput_ceiling_mbps(10_000_000), "seed {}: Vegas alone {v:.2} Mb/s", alone.seed);
}

/// Two flows of the same variant, equal RTT, the second starting 10 s later (so a late Vegas
/// flow's baseRTT includes the first flow's queue, and loss-based flows start out of phase):
/// 20 Mb/s, RTT 40 ms, DropTail buffer of one BDP (67 packets). JFI over 50–200 s.
///
/// TCP-LP runs without delayed ACKs here: Linux's TCP-LP reads one-way delay as TSval − TSecr,
/// and a delayed ACK adds the receiver's hold time (up to 40 ms) to it, which TCP-LP takes for
/// queueing and answers with cwnd = 1 — both flows then crawl equally (fair, but not a test of
/// anything). Without delayed ACKs its early-congestion cuts, which leave ssthresh infinite, still
/// send it back to slow start over and over, so it uses only part of the link (see
/// docs/algorithms/lp.md); only its fairness is asserted.
#[test]
fn each_variant_shares_fairly_with_itself_at_equal_rtt() {
    for cc in ["vegas", "veno", "westwood", "illinois", "yeah", "lp", "hybla"] {
        let pairs = 2;
        let (mut first, mut second) = (linux(cc, 0, pairs), linux(cc, 1, pairs));
        second.start_ns = 10 * S;
        if cc == "lp" {
            first.delayed_ack = false;
            second.delayed_ack = false;
        }
        let spec = dumbbell(20_000_000, 40 * MS, 67, vec![FlowSpec::Tcp(first), FlowSpec::Tcp(second)], 200 * S);
        let r = run(&spec);
        let x = [mean_mbps(&r, 0, 50, 200), mean_mbps(&r, 1, 50, 200)];
        let j = jain(&x);
        println!("{cc}: {x:.2?} Mb/s, JFI {j:.3}");
        assert!(j >= 0.9, "seed {}: {cc}: JFI {j:.3} for {x:.2?} Mb/s", spec.seed);
        if cc != "lp" {
            assert!(x[0] + x[1] >= 0.9 * goodput_ceiling_mbps(20_000_000), "seed {}: {cc}: {x:.2?} Mb/s", spec.seed);
        }
    }
}

/// TCP-LP against Reno (SACK, PRR), 100 Mb/s, RTT 100 ms, one BDP, LP from 10 s, throughput
/// over 30–60 s (experiments/validation-lp.toml's path, where the kernel's LP does the same).
/// Linux's TCP-LP takes the one-way delay as TSval − TSecr, and with Linux's default random
/// timestamp offsets (`timestamp_offsets`) TSval carries the receiver's: after its first early
/// indication LP's threshold is 15 % of the offset above the delay, and it never backs off early
/// again (docs/algorithms/lp.md). Without offsets it yields. With offsets: the seed of the
/// smallest offset among the first 80 (0xb9c025 ms, 3.4 hours) and seed 1 (0x7f06d1dc).
#[test]
fn lp_yields_to_reno_only_without_timestamp_offsets() {
    let offset = |seed: u64| Rng::stream(seed, Stream::TimestampOffset, 1).next_u64() as u32;
    let smallest = (1..=80).min_by_key(|&s| offset(s)).unwrap();
    let shares = |offsets: bool, seed: u64| {
        let (mut reno, mut lp) = (linux("reno", 0, 2), linux("lp", 1, 2));
        lp.start_ns = 10 * S;
        (reno.timestamp_offsets, lp.timestamp_offsets) = (offsets, offsets);
        let mut spec = dumbbell(100_000_000, 100 * MS, 833, vec![FlowSpec::Tcp(reno), FlowSpec::Tcp(lp)], 60 * S);
        spec.seed = seed;
        let r = run(&spec);
        [mean_mbps(&r, 0, 30, 60), mean_mbps(&r, 1, 30, 60)]
    };
    let x = shares(false, 1);
    println!("no offsets: {x:.2?} Mb/s");
    assert!(x[1] < 0.01 * x[0], "LP {:.2} Mb/s beside Reno's {:.2}", x[1], x[0]);
    for seed in [1, smallest] {
        let x = shares(true, seed);
        println!("offsets, seed {seed} (offset {:#x}): {x:.2?} Mb/s", offset(seed));
        assert!(jain(&x) > 0.9, "seed {seed}: LP {:.2} Mb/s beside Reno's {:.2}: it yielded", x[1], x[0]);
    }
}
