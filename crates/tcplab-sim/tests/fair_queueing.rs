//! FRED and CSFQ on whole runs, in paper 004's settings (10 Mb/s links, 1000-byte packets,
//! 64-packet buffers): its findings that CSFQ approaches DRR's fair shares where FIFO and RED do
//! not, that CSFQ and FRED protect TCP from an unresponsive flow, and that a CSFQ label carries a
//! flow's share across several congested links; packets conserved, drops charged to their flows.

mod common;

use common::*;
use tcplab_sim::spec::{CbrSpec, CsfqSpec, DrrSpec, FlowSpec, FredSpec, Graph, LinkSpec, QueueSpec, Spec, Topology};
use tcplab_sim::SimResult;

const BUFFER: u64 = 64;
const FAIR_32: f64 = 10.0 / 32.0;

fn cbr(src: u32, dst: u32, rate_bps: u64) -> FlowSpec {
    FlowSpec::Cbr(CbrSpec { src, dst, dscp: 0, start_ns: 0, stop_ns: None, packet_bytes: 1000, schedule: vec![(0, rate_bps)], random: false })
}

fn queue(kind: &str) -> QueueSpec {
    let (limit_pkts, limit_bytes) = (Some(BUFFER), None);
    match kind {
        "droptail" => QueueSpec::Droptail { limit_pkts, limit_bytes },
        "drr" => QueueSpec::Drr { limit_pkts, limit_bytes, drr: DrrSpec { quantum_bytes: 1000 } },
        "fred" => QueueSpec::Fred { limit_pkts, limit_bytes, fred: FredSpec::default() },
        "csfq" => QueueSpec::Csfq { limit_pkts, limit_bytes, csfq: CsfqSpec::default() },
        _ => unreachable!(),
    }
}

/// `flows` on a 10 Mb/s dumbbell with 1 ms links (4 ms RTT) and `kind` on its bottleneck, 20 s.
fn single_link(kind: &str, flows: Vec<FlowSpec>) -> Spec {
    with_queue(dumbbell(10_000_000, 4 * MS, BUFFER, flows, 20 * S), queue(kind))
}

fn rates(r: &SimResult, n: u32) -> Vec<f64> {
    (0..n).map(|f| mean_mbps(r, f, 5, 20)).collect()
}

fn conserved(r: &SimResult, n: u32) {
    for f in 0..n {
        let [sent, delivered, dropped, in_flight] = ["sent_pkts", "delivered_pkts", "dropped_pkts", "in_flight_pkts"].map(|c| r.flow(f, c));
        assert_eq!(sent, delivered + dropped + in_flight, "flow {f}: sent = delivered + dropped + in flight");
    }
}

/// Paper 004 §2.1: 32 UDP flows, flow i sending i + 1 times its fair share.
#[test]
fn csfq_approaches_drr_fair_shares_among_udp_flows() {
    let flows = |pairs: u32| (0..pairs).map(|i| cbr(i, pairs + i, (i as u64 + 1) * 312_500)).collect::<Vec<_>>();
    let mut jfi = Vec::new();
    for kind in ["droptail", "fred", "drr", "csfq"] {
        let r = run(&single_link(kind, flows(32)));
        let x = rates(&r, 32);
        eprintln!("{kind}: JFI {:.3}, flow 1 {:.3}, flow 16 {:.3}, flow 32 {:.3} Mb/s", jain(&x), x[0], x[15], x[31]);
        conserved(&r, 32);
        let drops: f64 = (0..32).map(|f| r.flow(f, "dropped_pkts")).sum();
        assert_eq!(drops, queue_col(&r, "dropped_pkts"), "{kind}: every drop charged to its flow");
        jfi.push(jain(&x));
        if kind == "csfq" {
            for (i, v) in x.iter().enumerate() {
                assert!((v / FAIR_32 - 1.0).abs() < 0.3, "CSFQ flow {}: {v:.3} Mb/s against a fair share of {FAIR_32}", i + 1);
            }
            assert!(queue_col(&r, "early_drop_pkts") > 0.9 * drops, "CSFQ's drops are its own, not the buffer's");
        }
    }
    let [droptail, fred, drr, csfq] = jfi[..] else { unreachable!() };
    assert!(drr > 0.999 && csfq > 0.99, "DRR {drr:.3}, CSFQ {csfq:.3}");
    assert!(droptail < 0.7 && fred < 0.8, "FIFO {droptail:.3} and FRED {fred:.3} do not share out the link");
}

/// Paper 004 §2.2: one UDP flow at the link's rate against 31 TCP flows.
#[test]
fn csfq_and_fred_protect_tcp_from_an_unresponsive_flow() {
    let pairs = 32;
    let flows = || {
        let mut f = vec![cbr(0, pairs, 10_000_000)];
        f.extend((1..pairs).map(|i| FlowSpec::Tcp(pair_flow(i, pairs, "reno", 0))));
        f
    };
    for (kind, udp_at_most) in [("droptail", f64::INFINITY), ("fred", 4.0), ("csfq", 2.0)] {
        let r = run(&single_link(kind, flows()));
        let x = rates(&r, pairs);
        let tcp = &x[1..];
        let tcp_mean = tcp.iter().sum::<f64>() / tcp.len() as f64;
        eprintln!("{kind}: UDP {:.3} Mb/s, TCP mean {tcp_mean:.3}, TCP JFI {:.3}", x[0], jain(tcp));
        conserved(&r, pairs);
        if kind == "droptail" {
            assert!(x[0] > 9.0, "a FIFO leaves TCP nothing: UDP {:.3}", x[0]);
        } else {
            assert!(x[0] < udp_at_most * FAIR_32, "{kind}: UDP {:.3} Mb/s, more than {udp_at_most} × its share", x[0]);
            assert!(tcp_mean > 0.5 * FAIR_32, "{kind}: TCP {tcp_mean:.3} Mb/s");
        }
    }
    // The same seed, the same run.
    let (a, b) = (run(&single_link("csfq", flows())), run(&single_link("csfq", flows())));
    assert_eq!(queue_col(&a, "dropped_pkts"), queue_col(&b, "dropped_pkts"));
    assert_eq!(rates(&a, pairs), rates(&b, pairs));
}

/// Paper 004 §3.1: a UDP flow crossing `links` congested links, on each of which 10 UDP flows
/// send at twice their fair share (2 · 10/11 Mb/s), as does the flow itself. Its throughput over
/// its fair share.
fn across_congested_links(kind: &str, links: u32) -> f64 {
    // Routers 0..=links in a line; the flow from a host on router 0 to one on the last router;
    // each congested link k has 10 senders on router k − 1 and 10 receivers on router k.
    let routers = links + 1;
    let host = |i: u32| routers + i;
    let mut nodes: Vec<String> = (0..routers).map(|r| format!("r{r}")).collect();
    let mut link_specs = Vec::new();
    let mut duplex = |a: u32, b: u32, q: QueueSpec| {
        for (from, to) in [(a, b), (b, a)] {
            let queue = if from == a { q.clone() } else { QueueSpec::Droptail { limit_pkts: Some(1000), limit_bytes: None } };
            link_specs.push(LinkSpec { from, to, rate_bps: 10_000_000, delay_ns: MS, queue, loss: 0.0, rate_schedule: Vec::new() });
        }
    };
    let fast = QueueSpec::Droptail { limit_pkts: Some(1000), limit_bytes: None };
    for r in 1..routers {
        duplex(r - 1, r, queue(kind));
    }
    let share = 10_000_000 / 11;
    let mut flows = Vec::new();
    let mut hosts = 0;
    let mut add_host = |router: u32, nodes: &mut Vec<String>, duplex: &mut dyn FnMut(u32, u32, QueueSpec)| {
        let h = host(hosts);
        hosts += 1;
        nodes.push(format!("h{h}"));
        duplex(h, router, fast.clone());
        h
    };
    let src = add_host(0, &mut nodes, &mut duplex);
    let dst = add_host(links, &mut nodes, &mut duplex);
    flows.push(cbr(src, dst, 2 * share));
    for k in 1..=links {
        for _ in 0..10 {
            let s = add_host(k - 1, &mut nodes, &mut duplex);
            let d = add_host(k, &mut nodes, &mut duplex);
            flows.push(cbr(s, d, 2 * share));
        }
    }
    let mut spec = dumbbell(10_000_000, 4 * MS, BUFFER, Vec::<FlowSpec>::new(), 20 * S);
    spec.topology = Topology::Graph(Graph { nodes, links: link_specs });
    spec.flows = flows;
    let r = run(&spec);
    conserved(&r, spec.flows.len() as u32);
    mean_mbps(&r, 0, 5, 20) / (share as f64 / 1e6)
}

#[test]
fn a_csfq_label_carries_the_fair_share_across_congested_links() {
    for links in [1, 3, 5] {
        let (fifo, csfq) = (across_congested_links("droptail", links), across_congested_links("csfq", links));
        eprintln!("{links} congested links: relative throughput FIFO {fifo:.3}, CSFQ {csfq:.3}");
        assert!(csfq > 0.8 && csfq < 1.25, "CSFQ over {links} links: {csfq:.3} of the fair share");
        if links > 1 {
            assert!(fifo < 0.8 * csfq, "FIFO over {links} links: {fifo:.3}");
        }
    }
}

#[test]
fn bad_parameters_are_refused() {
    let flows = vec![cbr(0, 1, 1_000_000)];
    let bad = [
        (QueueSpec::Fred { limit_pkts: Some(64), limit_bytes: None, fred: FredSpec { min_thresh_pkts: Some(20.0), max_thresh_pkts: Some(10.0), ..FredSpec::default() } }, "topology.queue.fred.max_thresh_pkts"),
        (QueueSpec::Fred { limit_pkts: Some(64), limit_bytes: None, fred: FredSpec { weight: 1.0, ..FredSpec::default() } }, "topology.queue.fred.weight"),
        (QueueSpec::Csfq { limit_pkts: Some(64), limit_bytes: None, csfq: CsfqSpec { threshold: 0.0, ..CsfqSpec::default() } }, "topology.queue.csfq.threshold"),
        (QueueSpec::Csfq { limit_pkts: Some(64), limit_bytes: None, csfq: CsfqSpec { kc_ns: 0, ..CsfqSpec::default() } }, "topology.queue.csfq.kc_ns"),
    ];
    for (q, field) in bad {
        let spec = with_queue(dumbbell(10_000_000, 4 * MS, BUFFER, flows.clone(), S), q);
        assert_eq!(tcplab_sim::simulate(&spec).expect_err("refused").field, field);
    }
}
