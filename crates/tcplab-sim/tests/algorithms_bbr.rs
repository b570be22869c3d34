//! Scenario tests of BBR v1 and of sender pacing, against the behaviour Cardwell et al. (ACM Queue
//! 2016) and Linux `tcp_bbr.c` specify.
//!
//! Seeds: `TCPLAB_SEED` overrides the master seed; the seed in use is printed when an assertion
//! fails.

use tcplab_sim::spec::{Spec, TcpSpec};
use tcplab_sim::SimResult;

mod common;
use common::*;

/// 100 Mb/s × 100 ms in 1500-byte packets.
const BDP_PKTS: f64 = 833.0;

/// A dumbbell with one pair per flow at 100 Mb/s, sampled every `interval_ns`.
fn dumbbell(rtt_ns: u64, buffer_pkts: u64, flows: Vec<TcpSpec>, duration_ns: u64, interval_ns: u64) -> Spec {
    let mut spec = common::dumbbell(100_000_000, rtt_ns, buffer_pkts, flows, duration_ns);
    spec.interval_ns = interval_ns;
    spec
}

/// Flow `i` of `pairs`, congestion control `cc`, Linux-like (SACK + PRR + RACK-TLP).
fn tcp(i: u32, pairs: u32, cc: &str) -> TcpSpec {
    let mut t = TcpSpec::new(i, pairs + i);
    t.cc = cc.into();
    t.rack = true;
    t
}

/// Goodput ceiling of 100 Mb/s in 1448-byte payloads of 1500-byte packets, bytes per `dt_ns`.
fn ceiling_bytes(dt_ns: u64) -> f64 {
    100e6 / 8.0 * MSS / 1500.0 * dt_ns as f64 / 1e9
}

#[test]
fn startup_reaches_the_bottleneck_rate_in_the_derived_number_of_rounds() {
    // One flow, 100 Mb/s, RTT 100 ms, a 5-BDP buffer (no loss in STARTUP); goodput per RTT.
    //
    // In STARTUP cwnd grows by the segments ACKed (it at most doubles per round) and the pacing
    // rate, 2/ln2 ≈ 2.885 × the measured rate, lets it: the flight goes 10, 20, 40, ..., and
    // reaches the BDP of 833 packets after ⌈log2(833/10)⌉ = 7 rounds. The goodput of a round
    // is measured one way (50 ms) later; the first rounds are also paced at 2.885 × cwnd/RTT,
    // which spreads them over the round. So the first 100-ms interval at ≥ 90% of the
    // bottleneck rate is interval 7 at the earliest and 9 at the latest.
    let rtt = 100 * MS;
    let r = run(&dumbbell(rtt, 5 * 833, vec![tcp(0, 1, "bbr")], 3 * S, rtt));
    let seed = seed();
    let g = r.series(0, "goodput_bytes");
    let inflight: Vec<f64> = r.series(0, "in_flight_bytes").iter().map(|b| b / MSS).collect();
    let first_full = g.iter().position(|&b| b >= 0.9 * ceiling_bytes(rtt)).expect("reaches the bottleneck rate");
    assert!((7..=9).contains(&first_full), "seed {seed}: first full interval {first_full}, goodput {g:?}");
    // Then it stays there: no loss, the pipe stays full.
    assert!(g[first_full..].iter().all(|&b| b >= 0.9 * ceiling_bytes(rtt)), "seed {seed}: {g:?}");
    // Full-pipe detection needs 3 rounds without 25% growth, each round stretched by the queue
    // STARTUP builds: in flight keeps growing toward 2.885 BDP through the 3 intervals after the
    // pipe is full ...
    for k in first_full + 1..=first_full + 3 {
        assert!(inflight[k] > 1.9 * BDP_PKTS, "seed {seed}: interval {k} in flight {}", inflight[k]);
    }
    assert!(r.queues.col("max_pkts").get(0) > 1.5 * BDP_PKTS);
    // ... then DRAIN empties the queue: PROBE_BW keeps in flight near one BDP (at most 5/4 BDP
    // plus the cwnd allowances) by 2.5 s.
    let last = *inflight.last().unwrap();
    assert!(last < 1.3 * BDP_PKTS && last > 0.9 * BDP_PKTS, "seed {seed}: in flight at 3 s {last}");
    assert_eq!(r.flow(0, "retrans_pkts"), 0.0, "seed {seed}");
}

#[test]
fn probe_rtt_drains_to_four_packets_every_ten_seconds() {
    // On a clean path min_rtt is never undercut after the first rounds, so the filter expires
    // 10 s (`min_rtt_win_sec`) after it was set and BBR enters PROBE_RTT: cwnd 4 until in flight
    // is down to 4, then 200 ms (`probe_rtt_mode_ms`, longer than one 100-ms round) at 4.
    let r = run(&dumbbell(100 * MS, 5 * 833, vec![tcp(0, 1, "bbr")], 22 * S, 10 * MS));
    let seed = seed();
    let cwnd: Vec<f64> = r.series(0, "cwnd_bytes").iter().map(|b| b / MSS).collect();
    let inflight: Vec<f64> = r.series(0, "in_flight_bytes").iter().map(|b| b / MSS).collect();
    // 10-ms samples with cwnd at 4, grouped into episodes.
    let low: Vec<usize> = (0..cwnd.len()).filter(|&i| cwnd[i] <= 4.0).collect();
    let mut episodes: Vec<(usize, usize)> = vec![];
    for &i in &low {
        match episodes.last_mut() {
            Some((_, end)) if *end + 1 == i => *end = i,
            _ => episodes.push((i, i)),
        }
    }
    assert_eq!(episodes.len(), 2, "seed {seed}: cwnd-4 episodes {episodes:?}");
    for (k, &(a, b)) in episodes.iter().enumerate() {
        // Sample i ends at (i + 1) · 10 ms. The first starts 10 s after the last min_rtt sample
        // (taken in the first rounds), the second 10 s after the first ended — or after a sample
        // of the segments sent during PROBE_RTT, up to one 100-ms round later, refreshed the stamp.
        let start_s = (a + 1) as f64 * 0.01;
        let end0 = (episodes[0].1 + 1) as f64 * 0.01;
        let expect = if k == 0 { 10.0..10.5 } else { end0 + 10.0..end0 + 10.15 };
        assert!(expect.contains(&start_s), "seed {seed}: episode {k} starts at {start_s} s");
        // In flight reaches 4 and stays there for 200 ms (+ one 10-ms sample of slack).
        let at4 = (a..=b).filter(|&i| inflight[i] <= 4.0).count();
        assert!((20..=21).contains(&at4), "seed {seed}: episode {k}: {at4} samples at in-flight ≤ 4");
        // Draining 2 BDP - 4 at 100 Mb/s takes well under 200 ms.
        assert!(b - a + 1 <= 21 + 20, "seed {seed}: episode {k} lasts {} samples", b - a + 1);
    }
}

#[test]
fn bbr_keeps_the_queue_small_where_reno_fills_it() {
    // One flow, a 5-BDP buffer, 60 s. BBR caps in flight at 2 BDP and paces at the bottleneck
    // rate, so the queue only holds STARTUP's transient and the 5/4 probes (1/4 BDP for one RTT
    // in eight); Reno grows until its send buffer (2896 segments) stops it, 2 BDP of queue.
    let seed = seed();
    let spec = |cc| dumbbell(100 * MS, 5 * 833, vec![tcp(0, 1, cc)], 60 * S, S);
    let (bbr, reno) = (run(&spec("bbr")), run(&spec("reno")));
    let mean = |r: &SimResult| r.queues.col("mean_pkts").get(0);
    assert!(mean(&bbr) < 0.1 * BDP_PKTS, "seed {seed}: BBR mean queue {}", mean(&bbr));
    assert!(mean(&reno) > 1.5 * BDP_PKTS, "seed {seed}: Reno mean queue {}", mean(&reno));
    // Yet BBR keeps the link busy: over 90% of the ceiling on average, PROBE_RTT included.
    let bbr_mbps = bbr.flow(0, "goodput_bytes") * 8.0 / 60.0 / 1e6;
    assert!(bbr_mbps > 0.9 * ceiling_bytes(S) * 8.0 / 1e6, "seed {seed}: {bbr_mbps} Mb/s");
    // Its pacing rate, sampled each second, is the bottleneck's payload rate (less BBR's 1%
    // margin) in six phases of PROBE_BW's eight, so its median is that rate; Reno does not pace.
    let mut rates: Vec<f64> = bbr.series(0, "pacing_rate_bps")[10..].to_vec();
    rates.sort_by(f64::total_cmp);
    let median = rates[rates.len() / 2] / 1e6;
    let ceiling = ceiling_bytes(S) * 8.0 / 1e6;
    println!("seed {seed}: BBR's median pacing rate {median:.2} Mb/s, payload ceiling {ceiling:.2}, rates {:?}", &rates[..5]);
    assert!((median / ceiling - 0.99).abs() < 0.02, "seed {seed}: median pacing rate {median:.2} Mb/s");
    assert!(reno.series(0, "pacing_rate_bps").iter().all(|r| r.is_nan()));
}

#[test]
fn two_bbr_flows_at_equal_rtt_share_fairly() {
    // The reference dumbbell (1-BDP buffer), two BBR flows, the second 5 s later: both converge
    // on the same bandwidth estimate (each PROBE_BW probe takes bandwidth from the other).
    let seed = seed();
    let mut f2 = tcp(1, 2, "bbr");
    f2.start_ns = 5 * S;
    let r = run(&dumbbell(100 * MS, 833, vec![tcp(0, 2, "bbr"), f2], 60 * S, S));
    let means: Vec<f64> = (0..2).map(|f| r.series(f, "goodput_bytes")[20..60].iter().sum::<f64>() * 8.0 / 40.0 / 1e6).collect();
    assert!(jain(&means) >= 0.9, "seed {seed}: {means:?}");
    let total: f64 = means.iter().sum();
    assert!(total > 0.85 * ceiling_bytes(S) * 8.0 / 1e6, "seed {seed}: total {total} Mb/s");
}

#[test]
fn pacing_spreads_a_reno_flow_and_keeps_the_bottleneck_queue_empty_in_slow_start() {
    // Slow start for 0.55 s (cwnd 10 → ~300, below the 833-packet BDP, so the sending rate
    // stays under the bottleneck rate). Unpaced, each ACK releases a burst at the 1 Gb/s access
    // rate and half of each flight queues at the 100 Mb/s bottleneck; paced at Linux's default
    // 200% · cwnd / srtt, segments arrive spaced and hardly queue.
    let seed = seed();
    let run_with = |pacing| {
        let mut t = tcp(0, 1, "reno");
        t.pacing = pacing;
        run(&dumbbell(100 * MS, 5 * 833, vec![t], 550 * MS, 50 * MS))
    };
    let (bursty, paced) = (run_with(false), run_with(true));
    let max_q = |r: &SimResult| r.queues.col("max_pkts").get(0);
    assert!(max_q(&bursty) > 100.0, "seed {seed}: unpaced max queue {}", max_q(&bursty));
    assert!(max_q(&paced) < 15.0, "seed {seed}: paced max queue {}", max_q(&paced));
    // Pacing does not stop slow start: cwnd still grows past 200.
    let cwnd = paced.series(0, "cwnd_bytes");
    assert!(cwnd.last().unwrap() / MSS > 200.0, "seed {seed}: {cwnd:?}");
}

/// How Linux's TCP paces decides when a paced burst leaves its sender. Without fq (Linux's default
/// qdiscs; the testbed's kernel) TCP paces itself: `tcp_pacing_check` holds the burst until its
/// departure time and the pacing timer sends it then, so every segment is handed down at its
/// stamp. Under fq, TCP Small Queues let it hand segments down up to 2^-10 s before their stamps
/// and fq holds them. A lone BBR sender fed its ACKs 10 ms after each departure, for 300 ms.
#[test]
fn tcp_pacing_hands_each_segment_down_when_due_fq_pacing_up_to_a_millisecond_early() {
    let most_early = |fq: bool| {
        let mut t = tcp(0, 1, "bbr");
        t.fq_pacing = fq;
        let (mut s, mut out) = lone_sender(t);
        let (mut acks, mut early, mut paced_sends) = (Vec::new(), 0u64, 0);
        let mut now = 0;
        while now < 300 * MS {
            for p in out.drain(..).filter(|p| p.kind.is_data()) {
                early = early.max(p.ts_val_ns.saturating_sub(now));
                acks.push((p.ts_val_ns.max(now) + 10 * MS, p.seq + 1, p.ts_val_ns));
            }
            // The next event: the pacing timer if it is due first, else the next ACK.
            let next_ack = acks.iter().enumerate().min_by_key(|(_, a)| a.0).map(|(i, a)| (i, a.0));
            match (s.pace_timer.deadline, next_ack) {
                (Some(p), a) if a.map_or(true, |(_, at)| p < at) => {
                    now = p;
                    s.pace_timer.deadline = None;
                    paced_sends += 1;
                    s.on_pace(now, &mut out);
                }
                (_, Some((i, at))) => {
                    now = at;
                    let (_, ack, ecr) = acks.remove(i);
                    s.on_ack(&ack_packet(ack, &[], ecr), now, &mut out);
                }
                _ => break,
            }
        }
        assert!(paced_sends > 5, "fq_pacing {fq}: the pacing timer fired {paced_sends} times");
        early
    };
    assert_eq!(most_early(false), 0, "TCP's own pacing hands nothing down before its time");
    let fq = most_early(true);
    assert!(fq > 100_000 && fq <= 1_000_000_000 >> 10, "fq: handed down up to {fq} ns early");
}

#[test]
fn twelve_paced_flows_all_keep_sending() {
    // The event queue keeps the pacing timers of the first 8 flows in slots beside its heap and
    // the others' in the heap (engine/mod.rs): twelve BBR flows on the reference dumbbell, all
    // paced, each keep sending whichever way their timer is kept. (BBR v1 is not fair among
    // many flows: one of the twelve often holds three times the fair share, so no JFI bound.)
    let seed = seed();
    let n = 12;
    let flows = (0..n).map(|i| tcp(i, n, "bbr")).collect();
    let r = run(&dumbbell(100 * MS, 833, flows, 40 * S, S));
    let means: Vec<f64> = (0..n).map(|f| r.series(f, "goodput_bytes")[20..40].iter().sum::<f64>() * 8.0 / 20.0 / 1e6).collect();
    let fair = ceiling_bytes(S) * 8.0 / 1e6 / n as f64;
    assert!(means.iter().all(|&m| m > 0.25 * fair), "seed {seed}: {means:?}, fair share {fair}");
    let total: f64 = means.iter().sum();
    assert!(total > 0.85 * fair * n as f64, "seed {seed}: total {total} Mb/s");
}
