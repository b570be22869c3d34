//! DRR on whole runs: packets conserved through push-outs, every drop charged to the flow that
//! lost it, a fair share for flows the FIFO treats unequally.

mod common;

use common::*;
use tcplab_sim::spec::{DrrSpec, QueueSpec, Spec};

/// Scalable TCP against Reno on 10 Mb/s, 40 ms, a 30-packet buffer, 60 s.
fn scalable_and_reno(queue: QueueSpec) -> Spec {
    let flows = vec![pair_flow(0, 2, "scalable", 0), pair_flow(1, 2, "reno", S)];
    with_queue(dumbbell(10_000_000, 40 * MS, 30, flows, 60 * S), queue)
}

#[test]
fn drr_shares_fairly_and_conserves_packets() {
    let tail = run(&scalable_and_reno(QueueSpec::Droptail { limit_pkts: Some(30), limit_bytes: None }));
    let drr = QueueSpec::Drr { limit_pkts: Some(30), limit_bytes: None, drr: DrrSpec { quantum_bytes: 1500 } };
    let r = run(&scalable_and_reno(drr.clone()));
    let x_tail = [mean_mbps(&tail, 0, 10, 60), mean_mbps(&tail, 1, 10, 60)];
    let x = [mean_mbps(&r, 0, 10, 60), mean_mbps(&r, 1, 10, 60)];
    eprintln!("Scalable / Reno: DropTail {x_tail:?}, DRR {x:?}");
    // Scalable's fast growth takes most of a shared FIFO; DRR gives each flow its half.
    assert!(jain(&x_tail) < 0.9, "DropTail {x_tail:?}");
    assert!(jain(&x) > 0.98 && x[0] + x[1] > 8.5, "DRR {x:?}");
    for f in 0..2 {
        let [sent, delivered, dropped, in_flight] = ["sent_pkts", "delivered_pkts", "dropped_pkts", "in_flight_pkts"].map(|c| r.flow(f, c));
        assert_eq!(sent, delivered + dropped + in_flight, "flow {f}: sent = delivered + dropped + in flight");
    }
    let drops: f64 = (0..2).map(|f| r.flow(f, "dropped_pkts")).sum();
    assert_eq!(drops, queue_col(&r, "dropped_pkts"));
    assert_eq!(queue_col(&r, "early_drop_pkts"), 0.0);
    // The same seed, the same run.
    let again = run(&scalable_and_reno(drr));
    assert_eq!((0..2).map(|f| again.flow(f, "dropped_pkts")).collect::<Vec<_>>(), (0..2).map(|f| r.flow(f, "dropped_pkts")).collect::<Vec<_>>());
}

#[test]
fn a_zero_quantum_is_refused() {
    let spec = scalable_and_reno(QueueSpec::Drr { limit_pkts: Some(30), limit_bytes: None, drr: DrrSpec { quantum_bytes: 0 } });
    assert_eq!(tcplab_sim::simulate(&spec).expect_err("refused").field, "topology.queue.drr.quantum_bytes");
}
