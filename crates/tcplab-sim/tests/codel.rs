//! CoDel on whole runs: the queueing delay held near `target` whatever the buffer (Nichols and
//! Jacobson's finding, RFC 8289 §1), the link kept busy, packets conserved, drops at the head
//! counted as the queue's.

mod common;

use common::*;
use tcplab_sim::spec::{CodelSpec, QueueSpec, Spec};

/// Two CUBIC flows on 10 Mb/s, 40 ms (a BDP of 33 packets), 60 s; the bottleneck's queue `queue`.
fn two_flows(queue: QueueSpec) -> Spec {
    let flows = vec![pair_flow(0, 2, "cubic", 0), pair_flow(1, 2, "cubic", 2 * S)];
    with_queue(dumbbell(10_000_000, 40 * MS, 100, flows, 60 * S), queue)
}

#[test]
fn codel_holds_the_delay_near_target_whatever_the_buffer() {
    let mut first = None;
    for buffer in [100, 400, 1000] {
        let tail = run(&two_flows(QueueSpec::Droptail { limit_pkts: Some(buffer), limit_bytes: None }));
        let r = run(&two_flows(QueueSpec::Codel { limit_pkts: Some(buffer), limit_bytes: None, codel: CodelSpec::default() }));
        let ms = |r: &tcplab_sim::SimResult| queue_col(r, "sojourn_p50_ns") / 1e6;
        let x = [mean_mbps(&r, 0, 10, 60), mean_mbps(&r, 1, 10, 60)];
        eprintln!("buffer {buffer}: median sojourn DropTail {:.1} ms, CoDel {:.1} ms; CoDel goodput {x:?}", ms(&tail), ms(&r));
        // DropTail's standing queue grows with the buffer (1.2 ms per 1500-byte packet); CoDel's
        // stays about its 5-ms target.
        assert!(ms(&tail) > 0.3 * 1.2 * buffer as f64, "buffer {buffer}: DropTail median {:.1} ms", ms(&tail));
        assert!(ms(&r) > 2.0 && ms(&r) < 10.0, "buffer {buffer}: CoDel median {:.1} ms", ms(&r));
        assert!(x[0] + x[1] > 8.5, "buffer {buffer}: CoDel's goodput {x:?} of 10 Mb/s");
        assert!(jain(&x) > 0.9, "buffer {buffer}: CoDel's fairness {x:?}");
        for f in 0..2 {
            let [sent, delivered, dropped, in_flight] =
                ["sent_pkts", "delivered_pkts", "dropped_pkts", "in_flight_pkts"].map(|c| r.flow(f, c));
            assert_eq!(sent, delivered + dropped + in_flight, "buffer {buffer}: flow {f}: sent = delivered + dropped + in flight");
        }
        let drops: f64 = (0..2).map(|f| r.flow(f, "dropped_pkts")).sum();
        assert_eq!(drops, queue_col(&r, "dropped_pkts"), "buffer {buffer}: every drop is the bottleneck's");
        // The queue never reaches even the 100-packet buffer: every drop is CoDel's, and the run
        // is the same whatever the buffer.
        let early = queue_col(&r, "early_drop_pkts");
        eprintln!("buffer {buffer}: CoDel: {early} of {drops} drops its own, at most {} packets queued", queue_col(&r, "max_pkts"));
        assert_eq!(early, drops, "buffer {buffer}: a drop at the limit");
        assert!(queue_col(&r, "max_pkts") < 100.0);
        let first = first.get_or_insert((drops, x));
        assert_eq!(*first, (drops, x), "buffer {buffer}: another run than with 100 packets");
        assert_eq!(queue_col(&tail, "early_drop_pkts"), 0.0);
    }
}

#[test]
fn codel_runs_are_deterministic() {
    let spec = two_flows(QueueSpec::Codel { limit_pkts: Some(400), limit_bytes: None, codel: CodelSpec::default() });
    let (a, b) = (run(&spec), run(&spec));
    let drops = |r: &tcplab_sim::SimResult| (0..2).map(|f| r.flow(f, "dropped_pkts")).collect::<Vec<_>>();
    assert_eq!(drops(&a), drops(&b));
    assert_eq!(queue_col(&a, "sojourn_mean_ns"), queue_col(&b, "sojourn_mean_ns"));
}

#[test]
fn a_zero_target_or_interval_is_refused() {
    for (codel, field) in [
        (CodelSpec { target_ns: 0, ..CodelSpec::default() }, "topology.queue.codel.target_ns"),
        (CodelSpec { interval_ns: 0, ..CodelSpec::default() }, "topology.queue.codel.interval_ns"),
    ] {
        let spec = two_flows(QueueSpec::Codel { limit_pkts: Some(100), limit_bytes: None, codel });
        assert_eq!(tcplab_sim::simulate(&spec).expect_err("refused").field, field);
    }
}
