//! PIE on whole runs: the queueing delay held about `target` whatever the buffer (RFC 8033 §1),
//! the link kept busy, packets conserved, the early drops a function of the seed.

mod common;

use common::*;
use tcplab_sim::spec::{PieSpec, QueueSpec, Spec};

/// Two CUBIC flows on 20 Mb/s, 40 ms (a BDP of 67 packets), 60 s; the bottleneck's queue `queue`.
fn two_flows(queue: QueueSpec) -> Spec {
    let flows = vec![pair_flow(0, 2, "cubic", 0), pair_flow(1, 2, "cubic", 2 * S)];
    with_queue(dumbbell(20_000_000, 40 * MS, 100, flows, 60 * S), queue)
}

fn pie(buffer: u64) -> QueueSpec {
    QueueSpec::Pie { limit_pkts: Some(buffer), limit_bytes: None, pie: PieSpec::default() }
}

#[test]
fn pie_holds_the_delay_about_target_whatever_the_buffer() {
    for buffer in [300, 1000] {
        let tail = run(&two_flows(QueueSpec::Droptail { limit_pkts: Some(buffer), limit_bytes: None }));
        let r = run(&two_flows(pie(buffer)));
        let ms = |r: &tcplab_sim::SimResult, col: &str| queue_col(r, col) / 1e6;
        let x = [mean_mbps(&r, 0, 10, 60), mean_mbps(&r, 1, 10, 60)];
        eprintln!(
            "buffer {buffer}: mean sojourn DropTail {:.1} ms, PIE {:.2} ms (median {:.2}); PIE: {} drops, at most {} packets, goodput {x:?}",
            ms(&tail, "sojourn_mean_ns"),
            ms(&r, "sojourn_mean_ns"),
            ms(&r, "sojourn_p50_ns"),
            queue_col(&r, "dropped_pkts"),
            queue_col(&r, "max_pkts")
        );
        // DropTail's standing queue grows with the buffer (0.6 ms per 1500-byte packet); PIE's
        // mean delay sits at its 15-ms target.
        assert!(ms(&tail, "sojourn_mean_ns") > 0.3 * 0.6 * buffer as f64);
        assert!((ms(&r, "sojourn_mean_ns") - 15.0).abs() < 3.0, "buffer {buffer}: PIE mean sojourn {:.2} ms", ms(&r, "sojourn_mean_ns"));
        assert!(x[0] + x[1] > 17.5, "buffer {buffer}: PIE's goodput {x:?} of 20 Mb/s");
        assert!(jain(&x) > 0.9, "buffer {buffer}: PIE's fairness {x:?}");
        for f in 0..2 {
            let [sent, delivered, dropped, in_flight] =
                ["sent_pkts", "delivered_pkts", "dropped_pkts", "in_flight_pkts"].map(|c| r.flow(f, c));
            assert_eq!(sent, delivered + dropped + in_flight, "buffer {buffer}: flow {f}: sent = delivered + dropped + in flight");
        }
        let drops: f64 = (0..2).map(|f| r.flow(f, "dropped_pkts")).sum();
        assert_eq!(drops, queue_col(&r, "dropped_pkts"));
        // Every drop PIE's: the queue stays far from either buffer.
        assert_eq!(queue_col(&r, "early_drop_pkts"), drops, "buffer {buffer}: a drop at the limit");
        assert!(queue_col(&r, "max_pkts") < 300.0);
    }
}

#[test]
fn pie_drops_follow_the_seed() {
    let spec = two_flows(pie(300));
    let drops = |r: &tcplab_sim::SimResult| (0..2).map(|f| r.flow(f, "dropped_pkts")).collect::<Vec<_>>();
    let a = run(&spec);
    assert_eq!(drops(&a), drops(&run(&spec)));
    let mut other = spec.clone();
    other.seed += 1;
    assert_ne!(drops(&a), drops(&run(&other)), "another seed, the same drops");
}

#[test]
fn bad_pie_parameters_are_refused() {
    for (p, field) in [
        (PieSpec { target_ns: 0, ..PieSpec::default() }, "topology.queue.pie.target_ns"),
        (PieSpec { tupdate_ns: 0, ..PieSpec::default() }, "topology.queue.pie.tupdate_ns"),
        (PieSpec { alpha: 33, ..PieSpec::default() }, "topology.queue.pie.alpha"),
        (PieSpec { beta: 40, ..PieSpec::default() }, "topology.queue.pie.beta"),
    ] {
        let spec = two_flows(QueueSpec::Pie { limit_pkts: Some(100), limit_bytes: None, pie: p });
        assert_eq!(tcplab_sim::simulate(&spec).expect_err("refused").field, field);
    }
}
