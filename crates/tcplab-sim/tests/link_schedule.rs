//! A link whose rate changes over the run (`bottleneck_schedule`, a graph link's `rate_schedule`):
//! what crosses it follows the rate, a packet keeps the rate it started at, a link at rate 0 is
//! down, nothing is lost or made up, and a bad schedule is refused with its field.

use tcplab_sim::spec::{CaptureSpec, CbrSpec, FlowSpec, Spec, TcpSpec, Topology};
use tcplab_sim::simulate;

mod common;
use common::*;

/// A CBR flow of 1000-byte packets at `rate_bps` from sender `i` of `pairs`.
fn cbr(i: u32, pairs: u32, rate_bps: u64) -> FlowSpec {
    FlowSpec::Cbr(CbrSpec { src: i, dst: pairs + i, dscp: 0, start_ns: 0, stop_ns: None, packet_bytes: 1000, schedule: vec![(0, rate_bps)], random: false })
}

fn with_schedule(mut spec: Spec, schedule: &[(u64, u64)]) -> Spec {
    if let Topology::Dumbbell(d) = &mut spec.topology {
        d.bottleneck_schedule = schedule.to_vec();
    }
    spec
}

/// Bytes delivered to flow `f`'s receiver in each interval (a CBR flow's: whole packets).
fn delivered_bytes(r: &tcplab_sim::SimResult, f: u32) -> Vec<f64> {
    r.series(f, "goodput_bytes")
}

#[test]
fn an_overloaded_link_delivers_at_each_of_its_rates() {
    // 20 Mb/s of CBR into a bottleneck of 10, then 4 (from 3 s), then 16 Mb/s (from 6 s): the
    // queue never empties, so each second the link carries its rate of the time.
    let spec = with_schedule(dumbbell(10_000_000, 20 * MS, 100, vec![cbr(0, 1, 20_000_000)], 9 * S), &[(3 * S, 4_000_000), (6 * S, 16_000_000)]);
    let r = run(&spec);
    let bytes = delivered_bytes(&r, 0);
    let payload = 1000.0; // a CBR flow's goodput counts its whole packets
    for (k, rate) in [(1, 10e6), (2, 10e6), (4, 4e6), (5, 4e6), (7, 16e6), (8, 16e6)] {
        let expected = rate / 8.0 / 1000.0 * payload;
        let got = bytes[k];
        assert!((got - expected).abs() <= 2.0 * payload, "second {k}: {got} bytes, expected {expected} (the link at {rate} b/s)");
    }
    // Without the schedule, 10 Mb/s all along.
    let flat = run(&dumbbell(10_000_000, 20 * MS, 100, vec![cbr(0, 1, 20_000_000)], 9 * S));
    assert!(delivered_bytes(&flat, 0)[4..].iter().all(|&b| (b - 10e6 / 8e3 * payload).abs() <= 2.0 * payload));
}

#[test]
fn a_packet_keeps_the_rate_it_started_at() {
    // 1000-byte packets back to back on a 10 Mb/s link: 800 µs each; the rate drops to 5 Mb/s
    // at 2.0004 s, halfway through a packet, and to 2 Mb/s (4 ms a packet) 100 µs later: that
    // packet still takes 800 µs (and the capture says so), every packet after it 4 ms.
    let change = 2 * S + 400_000;
    let schedule = [(change, 5_000_000), (change + 100_000, 2_000_000)];
    let mut spec = with_schedule(dumbbell(10_000_000, 20 * MS, 100, vec![cbr(0, 1, 20_000_000)], 3 * S), &schedule);
    spec.capture = Some(CaptureSpec { flow: 0, links: vec![0] });
    let r = run(&spec);
    let cap = r.capture.as_ref().expect("a capture");
    let (start, end) = (cap.col("t_ns"), cap.col("arrive_ns"));
    let delay = 10 * MS as u64;
    let crossings: Vec<(u64, u64)> = (0..cap.rows()).map(|i| (start.get(i) as u64, end.get(i) as u64 - delay)).collect();
    assert!(crossings.len() > 2500, "{} crossings", crossings.len());
    // Back to back: each starts when the one before ended.
    assert!(crossings.windows(2).skip(100).all(|w| w[1].0 == w[0].1), "the queue kept the link busy");
    let spanning = crossings.iter().position(|&(s, e)| s < change && e > change).expect("a packet spans the change");
    let (s, e) = crossings[spanning];
    assert_eq!(e - s, 800_000, "the packet being serialised at the change keeps 10 Mb/s");
    for &(s, e) in &crossings[spanning - 50..spanning] {
        assert_eq!(e - s, 800_000, "before the change: 10 Mb/s ({s})");
    }
    for &(s, e) in &crossings[spanning + 1..] {
        assert_eq!(e - s, 4_000_000, "after the changes: 2 Mb/s ({s})");
    }
}

#[test]
fn tcp_follows_the_capacity_and_every_packet_is_accounted_for() {
    // CUBIC on a 20 Mb/s path that drops to 5 Mb/s for 10 s and comes back: it fills each rate
    // (by the end of each phase), and sent = delivered + dropped + in flight.
    let mut t = TcpSpec::new(0, 1);
    t.cc = "cubic".to_string();
    let spec = with_schedule(dumbbell(20_000_000, 40 * MS, 66, vec![t], 30 * S), &[(10 * S, 5_000_000), (20 * S, 20_000_000)]);
    let r = run(&spec);
    let ceiling = |rate| goodput_ceiling_mbps(rate);
    let high = mean_mbps(&r, 0, 5, 10);
    let low = mean_mbps(&r, 0, 13, 20);
    let again = mean_mbps(&r, 0, 25, 30);
    assert!(high > 0.9 * ceiling(20_000_000) && high <= ceiling(20_000_000) * 1.001, "before the drop: {high} Mb/s");
    assert!(low > 0.9 * ceiling(5_000_000) && low <= ceiling(5_000_000) * 1.001, "at 5 Mb/s: {low} Mb/s");
    assert!(again > 0.9 * ceiling(20_000_000) && again <= ceiling(20_000_000) * 1.001, "after the rise: {again} Mb/s");
    assert!(r.flow(0, "dropped_pkts") > 0.0, "the drop in rate overflowed the buffer");
    let [sent, delivered, dropped, in_flight] = ["sent_pkts", "delivered_pkts", "dropped_pkts", "in_flight_pkts"].map(|c| r.flow(0, c));
    assert_eq!(sent, delivered + dropped + in_flight);
    // The same seed, the same run.
    assert_eq!(run(&spec), r);
}

#[test]
fn a_graph_links_schedule_and_a_change_at_time_zero() {
    // A change at time 0 is the link's rate from the start: 2 Mb/s rather than 10.
    let json = |schedule: serde_json::Value| {
        serde_json::json!({
            "seed": 1, "duration_ns": 4 * S,
            "topology": {"kind": "graph", "nodes": ["a", "b"], "links": [
                {"from": 0, "to": 1, "rate_bps": 10_000_000, "delay_ns": 5 * MS, "queue": {"kind": "droptail", "limit_pkts": 50}, "rate_schedule": schedule},
                {"from": 1, "to": 0, "rate_bps": 10_000_000, "delay_ns": 5 * MS, "queue": {"kind": "droptail", "limit_pkts": 50}}]},
            "flows": [{"kind": "cbr", "src": 0, "dst": 1, "packet_bytes": 1000, "schedule": [[0, 20_000_000]]}]
        })
        .to_string()
    };
    let r = run(&Spec::from_json(&json(serde_json::json!([[0, 2_000_000], [2 * S, 8_000_000]]))).unwrap());
    let bytes = delivered_bytes(&r, 0);
    assert!((bytes[1] - 2e6 / 8e3 * 1000.0).abs() <= 2.0 * 1000.0, "{bytes:?}");
    assert!((bytes[3] - 8e6 / 8e3 * 1000.0).abs() <= 2.0 * 1000.0, "{bytes:?}");

    // Bad schedules name the field, the step and what is allowed.
    for (schedule, field, allowed) in [
        (serde_json::json!([[2 * S, 1_000_000], [S, 2_000_000]]), "topology.links[0].rate_schedule[1]", "a time after the step before"),
        (serde_json::json!([[S, 1_000_000], [S, 2_000_000]]), "topology.links[0].rate_schedule[1]", "a time after the step before"),
    ] {
        let err = simulate(&Spec::from_json(&json(schedule.clone())).unwrap()).expect_err("refused");
        let text = err.to_string();
        assert!(text.contains(field) && text.contains(allowed), "{schedule}: {text}");
    }
    let bad = with_schedule(dumbbell(10_000_000, 20 * MS, 100, vec![cbr(0, 1, 1_000_000)], S), &[(S / 2, 0), (S / 4, 1_000_000)]);
    assert!(simulate(&bad).expect_err("refused").to_string().contains("topology.bottleneck_schedule[1]"));
}

/// The capture's crossings of link 0 by flow 0: (start, end of serialisation) in ns.
fn crossings(r: &tcplab_sim::SimResult, delay_ns: u64) -> Vec<(u64, u64)> {
    let cap = r.capture.as_ref().expect("a capture");
    let (start, end) = (cap.col("t_ns"), cap.col("arrive_ns"));
    (0..cap.rows()).map(|i| (start.get(i) as u64, end.get(i) as u64 - delay_ns)).collect()
}

#[test]
fn a_link_at_rate_zero_is_down_and_its_queue_waits_for_it() {
    // 5 Mb/s of CBR (625 packets a second) into 10 Mb/s, down from 2 s to 2.5 s: the packet
    // being serialised at 2 s ends as it would have, nothing starts while the link is down (the
    // next packet waits at the transmitter, the queue holds the 311 or so after it), the link
    // starts again at 2.5 s at its full rate, back to back until the backlog is gone, and none
    // is lost.
    let (down, up) = (2 * S, 2 * S + S / 2);
    let mut spec = with_schedule(dumbbell(10_000_000, 20 * MS, 1000, vec![cbr(0, 1, 5_000_000)], 4 * S), &[(down, 0), (up, 10_000_000)]);
    spec.capture = Some(CaptureSpec { flow: 0, links: vec![0] });
    let r = run(&spec);
    let c = crossings(&r, 10 * MS);
    assert!(c.iter().all(|&(s, e)| e - s == 800_000), "every packet at 10 Mb/s");
    assert!(c.iter().all(|&(s, _)| !(down..up).contains(&s)), "a packet started while the link was down");
    let first_after = c.iter().position(|&(s, _)| s >= up).expect("packets after the outage");
    assert_eq!(c[first_after].0, up, "the queue's head starts as the link comes back");
    let backlog = c[first_after..].windows(2).take_while(|w| w[1].0 == w[0].1).count() + 1;
    assert!((600..=640).contains(&backlog), "{backlog} packets back to back after the outage: 312 queued and as many again while they drain");
    let max_q = queue_col(&r, "max_pkts");
    assert!((311.0..=314.0).contains(&max_q), "the queue grew to {max_q} packets");
    assert_eq!(queue_col(&r, "dropped_pkts"), 0.0);
    let [sent, delivered, in_flight] = ["sent_pkts", "delivered_pkts", "in_flight_pkts"].map(|c| r.flow(0, c));
    assert!(delivered == sent - in_flight && in_flight < 30.0, "{sent} sent, {delivered} delivered, {in_flight} in flight");

    // A short buffer overflows instead: 100 packets queued (and one at the transmitter), the rest
    // of the outage's arrivals lost.
    let short = with_schedule(dumbbell(10_000_000, 20 * MS, 100, vec![cbr(0, 1, 5_000_000)], 4 * S), &[(down, 0), (up, 10_000_000)]);
    let r = run(&short);
    assert_eq!(queue_col(&r, "max_pkts"), 100.0);
    let dropped = queue_col(&r, "dropped_pkts");
    assert!((208.0..=216.0).contains(&dropped), "{dropped} packets dropped");
}

#[test]
fn tcp_waits_out_an_outage_and_a_link_down_to_the_end_keeps_its_packets() {
    // CUBIC on 20 Mb/s, 40 ms; the link is down from 10 s to 11 s: nothing arrives while it is
    // down, the flow's timeouts bring it back, every packet is accounted for, and the same seed
    // gives the same run.
    let mut t = TcpSpec::new(0, 1);
    t.cc = "cubic".to_string();
    let spec = with_schedule(dumbbell(20_000_000, 40 * MS, 66, vec![t.clone()], 25 * S), &[(10 * S, 0), (11 * S, 20_000_000)]);
    let r = run(&spec);
    let series = series_mbps(&r, 0, 0, 25);
    assert!(series[10] < 0.5, "the second the link was down delivered {} Mb/s", series[10]);
    let again = mean_mbps(&r, 0, 18, 25);
    assert!(again > 0.9 * goodput_ceiling_mbps(20_000_000), "after the outage: {again} Mb/s");
    assert!(r.flow(0, "rto_count") > 0.0, "the outage outlasted the retransmission timer");
    let accounted = |r: &tcplab_sim::SimResult| {
        let [sent, delivered, dropped, in_flight] = ["sent_pkts", "delivered_pkts", "dropped_pkts", "in_flight_pkts"].map(|c| r.flow(0, c));
        assert_eq!(sent, delivered + dropped + in_flight);
        in_flight
    };
    accounted(&r);
    assert_eq!(run(&spec), r);

    // Down from 5 s to the end: the queue keeps what it holds, counted in flight, never delivered.
    let spec = with_schedule(dumbbell(20_000_000, 40 * MS, 66, vec![t], 8 * S), &[(5 * S, 0)]);
    let r = run(&spec);
    assert!(accounted(&r) > 0.0, "packets were left in the queue");
    assert_eq!(series_mbps(&r, 0, 0, 8)[6..], [0.0, 0.0]);
}
