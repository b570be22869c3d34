//! Scenario tests: the engine's behaviour against TCP's specifications and models.
//!
//! Seeds: `TCPLAB_SEED` overrides the master seed of every scenario here; the seed in use is
//! printed when an assertion fails.

use tcplab_sim::spec::{CaptureSpec, CbrSpec, FlowSpec, Recovery, Spec, TcpSpec, Topology};
use tcplab_sim::{simulate, SimResult};

mod common;
use common::*;


/// TCP flow `i` of a dumbbell with `pairs` pairs: sender i → receiver i.
fn tcp(i: u32, pairs: u32, recovery: Recovery) -> TcpSpec {
    let mut t = TcpSpec::new(i, pairs + i);
    t.recovery = recovery;
    t.sack = recovery == Recovery::Sack;
    t
}

#[test]
fn one_newreno_flow_fills_the_pipe_with_a_sawtooth() {
    // 100 Mb/s, RTT 100 ms: BDP = 1.25 MB = 833 packets of 1500 B; buffer 1 BDP.
    let bdp = 833.0;
    let spec = dumbbell(100_000_000, 100 * MS, 833, vec![tcp(0, 1, Recovery::Newreno)], 400 * S);
    let r = run(&spec);
    // Slow start through 1 Gb/s access links overshoots and loses about every other segment of
    // the last window; NewReno without SACK repairs that with timeouts, leaving a small ssthresh
    // and a linear climb of up to ~80 s. Steady state is measured from 120 s, like the papers'
    // window.
    let util = mean_mbps(&r, 0, 120, 400) / goodput_ceiling_mbps(100_000_000);
    assert!(util >= 0.95, "seed {}: utilisation {util:.3} after slow start", spec.seed);

    // Linux-style cwnd counts segments; the saw-tooth runs between BDP + buffer (the window that
    // overflows the queue) and half of it.
    let cwnd: Vec<f64> = r.series(0, "cwnd_bytes").iter().skip(120).map(|b| b / MSS).collect();
    let (lo, hi) = cwnd.iter().fold((f64::MAX, 0.0f64), |(lo, hi), &c| (lo.min(c), hi.max(c)));
    let top = bdp + 833.0;
    assert!((0.95 * top..=1.1 * top).contains(&hi), "seed {}: cwnd peak {hi} vs BDP+buffer {top}", spec.seed);
    assert!((0.45 * top..=0.6 * top).contains(&lo), "seed {}: cwnd trough {lo} vs half of {top}", spec.seed);
    assert!(r.flow(0, "recoveries") >= 2.0, "a saw-tooth has several teeth");
}

/// Mathis, Semke, Mahdavi, Ott (1997): BW = MSS/RTT · sqrt(3/(2bp)). tcplab (like Linux) grows
/// cwnd by acknowledged segments, not ACKs, so one segment per RTT whatever the ACK ratio: b = 1.
#[test]
fn throughput_under_random_loss_follows_mathis() {
    for (p, delayed_ack) in [(0.001, true), (0.01, true), (0.01, false)] {
        let mut t = tcp(0, 1, Recovery::Sack);
        t.delayed_ack = delayed_ack;
        let mut spec = dumbbell(1_000_000_000, 100 * MS, 100_000, vec![t], 300 * S);
        if let Topology::Dumbbell(d) = &mut spec.topology {
            d.loss = p;
        }
        let r = run(&spec);
        let model = MSS * 8.0 / 0.1 * (3.0 / (2.0 * p)).sqrt() / 1e6;
        let got = mean_mbps(&r, 0, 20, 300);
        assert!(
            (got / model - 1.0).abs() <= 0.25,
            "seed {}: p = {p}, delayed ACK {delayed_ack}: {got:.3} Mb/s vs Mathis {model:.3} Mb/s",
            spec.seed
        );
        assert_eq!(r.queues.col("dropped_pkts").get(0), 0.0, "the path must be otherwise uncongested");
    }
}

#[test]
fn two_newreno_flows_with_equal_rtt_share_fairly() {
    // The papers' reference: flow 2 starts at 60 s; JFI over 120–300 s.
    let pairs = 2;
    let mut second = tcp(1, pairs, Recovery::Newreno);
    second.start_ns = 60 * S;
    for (recovery, label) in [(Recovery::Newreno, "newreno"), (Recovery::Sack, "sack")] {
        let mut first = tcp(0, pairs, recovery);
        first.recovery = recovery;
        let mut second = second.clone();
        second.recovery = recovery;
        second.sack = recovery == Recovery::Sack;
        first.sack = second.sack;
        let spec = dumbbell(100_000_000, 100 * MS, 833, vec![first, second], 300 * S);
        let r = run(&spec);
        let x = [mean_mbps(&r, 0, 120, 300), mean_mbps(&r, 1, 120, 300)];
        let j = jain(&x);
        assert!(j >= 0.95, "seed {}: {label}: JFI {j:.3} for {x:?}", spec.seed);
        assert!(x[0] + x[1] >= 0.95 * goodput_ceiling_mbps(100_000_000), "{label}: {x:?}");
    }
}

fn assert_conserved(r: &SimResult, label: &str) {
    let mut totals = [0.0; 4];
    for f in 0..r.flows.rows() as u32 {
        let [sent, delivered, dropped, in_flight] =
            ["sent_pkts", "delivered_pkts", "dropped_pkts", "in_flight_pkts"].map(|c| r.flow(f, c));
        assert_eq!(sent, delivered + dropped + in_flight, "{label}: flow {f}: sent = delivered + dropped + in flight");
        for (t, v) in totals.iter_mut().zip([sent, delivered, dropped, in_flight]) {
            *t += v;
        }
    }
    assert_eq!(totals[0], totals[1] + totals[2] + totals[3], "{label}: in total");
    // The per-interval series add up to the run's totals (the last interval may be partial).
    for f in 0..r.flows.rows() as u32 {
        for c in ["sent_pkts", "dropped_pkts", "retrans_pkts", "goodput_bytes", "marked_pkts"] {
            assert_eq!(r.series(f, c).iter().sum::<f64>(), r.flow(f, c), "{label}: flow {f}: intervals of {c}");
        }
    }
}

#[test]
fn packets_are_conserved() {
    // Congestion drops, random loss on both directions, a CBR flow, host jitter, a run that ends
    // with packets everywhere.
    let pairs = 4;
    let flows: Vec<TcpSpec> = [Recovery::Tahoe, Recovery::Reno, Recovery::Newreno, Recovery::Sack]
        .into_iter()
        .enumerate()
        .map(|(i, rec)| tcp(i as u32, pairs, rec))
        .collect();
    let mut spec = dumbbell(20_000_000, 60 * MS, 50, flows, 30 * S + 123_457);
    spec.host_jitter_ns = 200_000;
    if let Topology::Dumbbell(d) = &mut spec.topology {
        d.loss = 0.002;
        d.reverse_loss = 0.002;
    }
    let r = run(&spec);
    assert_conserved(&r, "four TCPs");
    assert!((0..4).all(|f| r.flow(f, "dropped_pkts") > 0.0), "every flow saw drops");
    assert!((0..4).any(|f| r.flow(f, "in_flight_pkts") > 0.0), "the run ends with packets in flight");

    // CBR across a graph topology, overloading a link.
    let cbr = serde_json::json!({
        "seed": seed(), "duration_ns": 10 * S + 1,
        "topology": {"kind": "graph", "nodes": ["a", "b", "c"], "links": [
            {"from": 0, "to": 1, "rate_bps": 10_000_000, "delay_ns": 5 * MS, "queue": {"kind": "droptail", "limit_pkts": 20}},
            {"from": 1, "to": 2, "rate_bps": 2_000_000, "delay_ns": 5 * MS, "queue": {"kind": "droptail", "limit_bytes": 15000}},
            {"from": 2, "to": 0, "rate_bps": 10_000_000, "delay_ns": 5 * MS, "queue": {"kind": "droptail", "limit_pkts": 20}}]},
        "flows": [{"kind": "cbr", "src": 0, "dst": 2, "packet_bytes": 1000, "schedule": [[0, 1_000_000], [2 * S, 3_000_000]]},
                  {"kind": "tcp", "src": 0, "dst": 2, "recovery": "sack"}]
    });
    let r = run(&Spec::from_json(&cbr.to_string()).unwrap());
    assert_conserved(&r, "cbr + tcp on a ring");
    assert!(r.flow(0, "dropped_pkts") > 0.0);
}

/// Every value of a result, NaN-safe, for exact comparison.
fn fingerprint(r: &SimResult) -> Vec<u64> {
    let mut out = vec![r.transmissions, r.events];
    for t in [&r.flows, &r.intervals, &r.queues] {
        for (_, c) in &t.columns {
            out.extend((0..c.len()).map(|i| c.get(i).to_bits()));
        }
    }
    out
}

#[test]
fn same_seed_same_run_other_seed_other_run() {
    let mk = |seed| {
        let pairs = 3;
        let mut spec = dumbbell(50_000_000, 40 * MS, 100, (0..pairs).map(|i| tcp(i, pairs, Recovery::Sack)).collect(), 20 * S);
        spec.seed = seed;
        spec.host_jitter_ns = 50_000;
        spec
    };
    let a = run(&mk(7));
    let b = run(&mk(7));
    assert_eq!(fingerprint(&a), fingerprint(&b), "same seed, same result");
    let c = run(&mk(8));
    assert_ne!(fingerprint(&a), fingerprint(&c), "another seed, another result");
    assert_ne!(a.series(0, "goodput_bytes"), c.series(0, "goodput_bytes"), "the series differ");
    // Start jitter differs: the first second's deliveries differ per flow.
    assert_ne!(
        (0..3).map(|f| a.series(f, "goodput_bytes")[0]).collect::<Vec<_>>(),
        (0..3).map(|f| c.series(f, "goodput_bytes")[0]).collect::<Vec<_>>()
    );
}

#[test]
fn adding_a_flow_does_not_shift_another_flows_start() {
    // Per-stream randomness: flow 0's start jitter is the same whether or not flow 1 exists. With
    // the second flow starting late, flow 0's first seconds are identical.
    let one = dumbbell(50_000_000, 40 * MS, 100, vec![tcp(0, 2, Recovery::Sack)], 3 * S);
    let mut late = tcp(1, 2, Recovery::Sack);
    late.start_ns = 5 * S;
    let mut two = dumbbell(50_000_000, 40 * MS, 100, vec![tcp(0, 2, Recovery::Sack), late], 3 * S);
    // Same pair numbering in both (two pairs), only the flow list differs.
    if let (Topology::Dumbbell(a), Topology::Dumbbell(b)) = (&mut two.topology, &one.topology) {
        a.pairs = 2;
        let _ = b;
    }
    let mut one = one;
    if let Topology::Dumbbell(d) = &mut one.topology {
        d.pairs = 2;
        d.access_delay_ns = vec![0, 0];
    }
    let (a, b) = (run(&one), run(&two));
    assert_eq!(a.series(0, "goodput_bytes"), b.series(0, "goodput_bytes"));
}

/// One flow on an uncongested 10 Mb/s, 100 ms path (no drops but the scripted ones), window
/// limited to 60 segments by the receiver — below the 83-packet BDP, so no standing queue and
/// the RTT stays 100 ms.
fn scripted(recovery: Recovery, drops: &[u32]) -> SimResult {
    let mut t = tcp(0, 1, recovery);
    t.rwnd_bytes = 60 * 1448;
    t.drop_segments = drops.to_vec();
    let mut spec = dumbbell(10_000_000, 100 * MS, 1000, vec![t], 20 * S);
    spec.start_jitter_ns = 0;
    run(&spec)
}

#[test]
fn scripted_drops_show_how_the_four_recoveries_differ() {
    // Three holes in one window (segments 2000, 2010, 2020; the window is 60 segments). With
    // RFC 6582's Impatient timer, NewReno's last repair must come within one RTO (300 ms here)
    // of its first partial ACK: three holes do, four would end in a timeout.
    let holes = [2000, 2010, 2020];
    let rtt_ns = 100.0 * MS as f64;

    let tahoe = scripted(Recovery::Tahoe, &holes);
    let reno = scripted(Recovery::Reno, &holes);
    let newreno = scripted(Recovery::Newreno, &holes);
    let sack = scripted(Recovery::Sack, &holes);
    for (r, name) in [(&tahoe, "tahoe"), (&reno, "reno"), (&newreno, "newreno"), (&sack, "sack")] {
        assert_conserved(r, name);
        assert_eq!(r.queues.col("dropped_pkts").get(0), 0.0, "{name}: only scripted drops");
    }

    // Tahoe: one fast retransmit, then slow start from one segment resending the window
    // (go-back-N), so it retransmits more than the three lost segments; no fast recovery time.
    assert_eq!(tahoe.flow(0, "recoveries"), 1.0);
    assert_eq!(tahoe.flow(0, "recovery_ns"), 0.0);
    assert!(tahoe.flow(0, "retrans_pkts") > 3.0, "tahoe resends what arrived: {}", tahoe.flow(0, "retrans_pkts"));

    // Reno leaves recovery on the first partial ACK: the remaining holes need further fast
    // retransmits (each halving the window again) or a timeout.
    assert!(
        reno.flow(0, "recoveries") >= 2.0 || reno.flow(0, "rto_count") >= 1.0,
        "reno: {} recoveries, {} timeouts",
        reno.flow(0, "recoveries"),
        reno.flow(0, "rto_count")
    );

    // NewReno stays in one recovery and repairs one hole per round trip: about three RTTs.
    assert_eq!((newreno.flow(0, "recoveries"), newreno.flow(0, "rto_count")), (1.0, 0.0));
    assert_eq!(newreno.flow(0, "retrans_pkts"), 3.0);
    let nr = newreno.flow(0, "recovery_ns") / rtt_ns;
    assert!((2.5..4.0).contains(&nr), "newreno recovery lasted {nr:.2} RTTs");

    // SACK repairs all three holes in the first round trip of one recovery.
    assert_eq!((sack.flow(0, "recoveries"), sack.flow(0, "rto_count")), (1.0, 0.0));
    assert_eq!(sack.flow(0, "retrans_pkts"), 3.0);
    let sr = sack.flow(0, "recovery_ns") / rtt_ns;
    assert!(sr < 1.6, "sack recovery lasted {sr:.2} RTTs");
}

#[test]
fn a_whole_lost_window_needs_a_timeout() {
    for recovery in [Recovery::Tahoe, Recovery::Reno, Recovery::Newreno, Recovery::Sack] {
        // The initial window (segments 0–9) is lost entirely: no duplicate ACK can come back.
        let r = scripted(recovery, &(0..10).collect::<Vec<_>>());
        assert_eq!(r.flow(0, "rto_count"), 1.0, "{recovery:?}");
        assert_eq!(r.flow(0, "recoveries"), 0.0, "{recovery:?}");
        assert!(r.flow(0, "goodput_bytes") > 1e6, "{recovery:?}: the flow recovers");
    }
}

#[test]
fn unconnected_flow_is_rejected_with_its_field() {
    let spec = serde_json::json!({
        "duration_ns": S,
        "topology": {"kind": "graph", "nodes": ["a", "b", "c"], "links": [
            {"from": 0, "to": 1, "rate_bps": 1_000_000, "delay_ns": 0, "queue": {"kind": "droptail", "limit_pkts": 10}},
            {"from": 1, "to": 0, "rate_bps": 1_000_000, "delay_ns": 0, "queue": {"kind": "droptail", "limit_pkts": 10}}]},
        "flows": [{"kind": "tcp", "src": 0, "dst": 1}, {"kind": "tcp", "src": 0, "dst": 2}]
    });
    let err = simulate(&Spec::from_json(&spec.to_string()).unwrap()).unwrap_err();
    assert_eq!(err.field, "flows[1].dst");
    assert_eq!(err.value, "c");
}

#[test]
fn host_stall_settings_are_checked() {
    let spec = |prob: f64, stall: u64| {
        let mut s = common::dumbbell(10_000_000, 20 * MS, 20, vec![TcpSpec::new(0, 1)], S);
        s.host_stall_prob = prob;
        s.host_stall_ns = stall;
        s
    };
    let err = simulate(&spec(1.5, MS)).unwrap_err();
    assert_eq!((err.field.as_str(), err.value.as_str()), ("host_stall_prob", "1.5"));
    let err = simulate(&spec(0.01, 0)).unwrap_err();
    assert_eq!(err.field, "host_stall_ns");
    assert!(simulate(&spec(1.0, MS)).is_ok(), "every send may stall");
}

/// How long after its due time each packet of a 100-packet/s CBR source at sender 0 enters its
/// access link, µs, over `secs` seconds (a packet every 10 ms: no packet waits behind another).
fn cbr_host_delays_us(stall_ns: u64, prob: f64, jitter_ns: u64, secs: u64) -> Vec<f64> {
    let cbr = FlowSpec::Cbr(CbrSpec { src: 0, dst: 1, dscp: 0, start_ns: 0, stop_ns: None, packet_bytes: 1000, schedule: vec![(0, 800_000)], random: false });
    let mut spec = dumbbell(10_000_000, 20 * MS, 100, vec![cbr], secs * S);
    spec.host_stall_ns = stall_ns;
    spec.host_stall_prob = prob;
    spec.host_jitter_ns = jitter_ns;
    spec.capture = Some(CaptureSpec { flow: 0, links: vec![0] });
    let r = run(&spec);
    let cap = r.capture.as_ref().expect("capture");
    let t: Vec<f64> = (0..cap.rows()).map(|i| cap.col("t_ns").get(i)).collect();
    let offset = t.iter().enumerate().map(|(k, &x)| x - k as f64 * 1e7).fold(f64::INFINITY, f64::min);
    t.iter().enumerate().map(|(k, &x)| (x - k as f64 * 1e7 - offset) / 1e3).collect()
}

#[test]
fn host_stalls_delay_the_given_share_of_sends_up_to_their_length() {
    // 2% of sends stall uniformly in [0, 1 ms); the rest leave on time.
    let d = cbr_host_delays_us(MS, 0.02, 0, 200);
    let n = d.len() as f64;
    assert!(n > 19_000.0, "{n} packets");
    let stalled: Vec<f64> = d.iter().copied().filter(|&x| x > 0.0).collect();
    let share = stalled.len() as f64 / n;
    assert!((0.015..0.025).contains(&share), "{share} of sends stalled");
    let max = stalled.iter().copied().fold(0.0, f64::max);
    assert!(max < 1000.0, "no stall reaches its length: {max} µs");
    let mean = stalled.iter().sum::<f64>() / stalled.len() as f64;
    assert!((400.0..600.0).contains(&mean), "uniform stalls average half their length: {mean} µs");
    // Between stalls the host's jitter applies as before.
    let d = cbr_host_delays_us(MS, 0.02, 20_000, 50);
    let small = d.iter().filter(|&&x| x < 20.0).count() as f64 / d.len() as f64;
    assert!((0.96..0.99).contains(&small), "{small} of sends within the 20 µs jitter");
    // A stall of probability 0 is no stall: the run is exactly the one without.
    assert_eq!(cbr_host_delays_us(MS, 0.0, 20_000, 50), cbr_host_delays_us(0, 0.0, 20_000, 50));
}

#[test]
fn a_flow_reports_no_sender_state_before_it_starts() {
    // The second flow starts at 5 s (plus the start jitter): its window, round trip, bytes in
    // flight and pacing rate are NaN at the ends of the intervals before (no connection yet, as
    // on the testbed), its window and bytes in flight present at every end after.
    let pairs = 2;
    let mut late = tcp(1, pairs, Recovery::Sack);
    late.start_ns = 5 * S;
    let r = run(&dumbbell(20_000_000, 40 * MS, 100, vec![tcp(0, pairs, Recovery::Sack), late], 10 * S));
    for c in ["cwnd_bytes", "ssthresh_bytes", "srtt_ns", "in_flight_bytes", "pacing_rate_bps", "dctcp_alpha"] {
        assert!(r.series(1, c)[..5].iter().all(|v| v.is_nan()), "{c}: {:?}", r.series(1, c));
    }
    for c in ["cwnd_bytes", "in_flight_bytes"] {
        assert!(r.series(1, c)[5..].iter().all(|v| *v > 0.0), "{c}: {:?}", r.series(1, c));
        assert!(r.series(0, c).iter().all(|v| *v > 0.0), "{c}: {:?}", r.series(0, c));
    }
}
