//! FQ-CoDel on whole runs: a sparse flow's packets wait for nothing (RFC 8290 §1), bulk flows
//! share the link, packets are conserved through CoDel's drops and the overflow batches.

mod common;

use common::*;
use tcplab_sim::spec::{CbrSpec, FlowSpec, FqCodelSpec, QueueSpec, Spec};

/// Two CUBIC flows and a 0.2 Mb/s stream of 200-byte packets on 20 Mb/s, 40 ms, 30 s.
fn bulk_and_sparse(queue: QueueSpec) -> Spec {
    let cubic = |pair: u32, start_ns: u64| FlowSpec::Tcp(pair_flow(pair, 3, "cubic", start_ns));
    let sparse = CbrSpec { src: 2, dst: 5, dscp: 0, start_ns: 2 * S, stop_ns: None, packet_bytes: 200, schedule: vec![(2 * S, 200_000)], random: false };
    let flows = vec![cubic(0, 0), cubic(1, S), FlowSpec::Cbr(sparse)];
    with_queue(dumbbell(20_000_000, 40 * MS, 500, flows, 30 * S), queue)
}

fn fq_codel(limit: u64) -> QueueSpec {
    QueueSpec::FqCodel { limit_pkts: Some(limit), limit_bytes: None, fq_codel: FqCodelSpec::default() }
}

#[test]
fn a_sparse_flow_waits_for_nothing() {
    let tail = run(&bulk_and_sparse(QueueSpec::Droptail { limit_pkts: Some(500), limit_bytes: None }));
    let r = run(&bulk_and_sparse(fq_codel(500)));
    let owd_ms = |r: &tcplab_sim::SimResult, f: u32| r.flow(f, "owd_mean_ns") / 1e6;
    eprintln!("sparse flow's mean one-way delay: DropTail {:.2} ms, FQ-CoDel {:.2} ms (path 20 ms)", owd_ms(&tail, 2), owd_ms(&r, 2));
    // DropTail: behind CUBIC's standing queue (hundreds of ms). FQ-CoDel: the path's 20 ms and
    // under a millisecond more; the stream loses nothing.
    assert!(owd_ms(&tail, 2) > 150.0);
    assert!(owd_ms(&r, 2) < 21.0, "{:.2} ms", owd_ms(&r, 2));
    assert_eq!(r.flow(2, "dropped_pkts"), 0.0);
    let x = [mean_mbps(&r, 0, 10, 30), mean_mbps(&r, 1, 10, 30)];
    assert!(jain(&x) > 0.95 && x[0] + x[1] > 18.0, "{x:?}");
}

#[test]
fn packets_are_conserved_through_codel_and_overflow_drops() {
    // A 40-packet buffer: slow start overflows it (batch drops from the fattest flow) before
    // CoDel settles the queues.
    let r = run(&bulk_and_sparse(fq_codel(40)));
    let mut drops = 0.0;
    for f in 0..3 {
        let [sent, delivered, dropped, in_flight] = ["sent_pkts", "delivered_pkts", "dropped_pkts", "in_flight_pkts"].map(|c| r.flow(f, c));
        assert_eq!(sent, delivered + dropped + in_flight, "flow {f}: sent = delivered + dropped + in flight");
        drops += dropped;
    }
    let (all, codel) = (queue_col(&r, "dropped_pkts"), queue_col(&r, "early_drop_pkts"));
    assert_eq!(drops, all);
    assert!(codel > 0.0 && codel < all, "{codel} of {all} drops CoDel's: both kinds happen");
    let again = run(&bulk_and_sparse(fq_codel(40)));
    assert_eq!(queue_col(&again, "dropped_pkts"), all, "the same seed, the same run");
}
