//! DCTCP (RFC 8257, Linux `tcp_dctcp.c`) end to end: its receiver's exact echo of each CE state,
//! its ECN-capable retransmissions and ACKs, and the paper's findings on a shallow marking
//! threshold (CoDel's `ce_threshold`): the link stays full with a queue of about the threshold,
//! where Reno with ECN leaves a good part of it idle; DCTCP flows share fairly; and DCTCP takes
//! most of a marking queue it shares with a conventional ECN flow.

use tcplab_sim::ids::{FlowId, NodeId};
use tcplab_sim::net::packet::{Ecn, Flags, Kind, Packet};
use tcplab_sim::spec::{CodelSpec, QueueSpec, Recovery, TcpSpec};
use tcplab_sim::transport::tcp::TcpReceiver;

mod common;
use common::*;

fn data(seq: u32, ecn: Ecn, cwr: bool) -> Packet {
    let mut p = Packet::new(FlowId(0), NodeId(1), Kind::Data, 1500);
    p.seq = seq;
    p.set_ecn(ecn);
    p.set_flag(Flags::CWR, cwr);
    p
}

/// (ACK number, ECE) of each ACK in `out`, which it empties.
fn acks(out: &mut Vec<Packet>) -> Vec<(u32, bool)> {
    out.drain(..).map(|a| (a.ack, a.has(Flags::ECE))).collect()
}

/// The receiver of a DCTCP flow (Linux `dctcp_ece_ack_update`), with Linux's ACK policy, past
/// quick-ACK mode: ECE follows the CE state of the last segment, not CWR; a change is acknowledged
/// at once, after an ACK with the old state for the segment a delayed ACK was holding; while the
/// state holds, ACKs are delayed as usual (every second segment). Its ACKs are ECT(0).
#[test]
fn the_receiver_echoes_each_ce_state_and_acknowledges_a_change_at_once() {
    let mut t = TcpSpec::new(0, 1);
    (t.cc, t.ecn, t.sack_compression) = ("dctcp".into(), true, true);
    let mut r = TcpReceiver::new(FlowId(0), NodeId(0), &t);
    let mut out = vec![];
    let mut now = 0;
    let mut send = |r: &mut TcpReceiver, seq: u32, ecn: Ecn, cwr: bool, out: &mut Vec<Packet>| {
        now += 100_000;
        r.on_data(&data(seq, ecn, cwr), now, out);
    };
    for seq in 0..40 {
        send(&mut r, seq, Ecn::ECT0, false, &mut out);
    }
    assert!(out.iter().all(|a| !a.has(Flags::ECE) && a.ecn() == Ecn::ECT0), "ACKs are ECT(0), without ECE");
    assert_eq!(out.last().map(|a| a.ack), Some(39), "segment 39 waits for a delayed ACK");
    out.clear();
    send(&mut r, 40, Ecn::CE, false, &mut out);
    assert_eq!(acks(&mut out), vec![(40, false), (41, true)], "the held ACK with the old state, then the change");
    send(&mut r, 41, Ecn::CE, false, &mut out);
    assert_eq!(acks(&mut out), vec![], "no change: delayed");
    send(&mut r, 42, Ecn::CE, false, &mut out);
    assert_eq!(acks(&mut out), vec![(43, true)]);
    // CWR does not end the echo while segments arrive marked (RFC 3168's receiver stops at CWR).
    send(&mut r, 43, Ecn::CE, true, &mut out);
    assert_eq!(acks(&mut out), vec![(44, true)], "CWR is acknowledged at once, still with ECE");
    // The first unmarked segment ends it, with no CWR; nothing was held.
    send(&mut r, 44, Ecn::ECT0, false, &mut out);
    assert_eq!(acks(&mut out), vec![(45, false)]);
    send(&mut r, 45, Ecn::ECT0, false, &mut out);
    send(&mut r, 46, Ecn::ECT0, false, &mut out);
    assert_eq!(acks(&mut out), vec![(47, false)]);
    assert_eq!(r.stats.ce_pkts, 4);

    // The same without Linux's ACK policy (RFC 5681's, ns-2's): the change is acknowledged at once.
    t.sack_compression = false;
    let mut r = TcpReceiver::new(FlowId(0), NodeId(0), &t);
    for seq in 0..3 {
        send(&mut r, seq, Ecn::ECT0, false, &mut out);
    }
    assert_eq!(acks(&mut out), vec![(2, false)]);
    send(&mut r, 3, Ecn::CE, false, &mut out);
    assert_eq!(acks(&mut out), vec![(3, false), (4, true)]);
}

/// A DCTCP sender keeps its retransmissions ECN-capable (Linux keeps ECT on every packet of a
/// socket whose algorithm needs ECN); a Reno sender with ECN sends them not ECN-capable.
#[test]
fn dctcp_retransmissions_are_ecn_capable() {
    for (cc, ect) in [("dctcp", Ecn::ECT0), ("reno", Ecn::NOT_ECT)] {
        let mut t = TcpSpec::new(0, 1);
        (t.cc, t.ecn, t.prr, t.rack, t.init_cwnd_pkts) = (cc.into(), true, true, true, 10);
        let (mut s, mut out) = lone_sender(t);
        assert!(out.iter().all(|p| p.ecn() == Ecn::ECT0));
        out.clear();
        // Segment 0 lost: ACKs SACK 1..=k; RACK marks it once 3 segments are SACKed and the
        // reordering window has passed.
        for k in 1..=9u32 {
            s.on_ack(&ack_packet(0, &[(1, 1 + k)], 0), 100 * MS + u64::from(k) * MS, &mut out);
        }
        let retrans: Vec<&Packet> = out.iter().filter(|p| p.seq == 0).collect();
        assert!(!retrans.is_empty(), "{cc}: segment 0 resent");
        assert!(retrans.iter().all(|p| p.ecn() == ect), "{cc}: retransmission {:?}", retrans[0].ecn());
    }
}

/// A Linux-like flow (SACK, PRR, RACK, Linux's ACKs, TSO) of `cc` with ECN.
fn flow(pair: u32, pairs: u32, cc: &str, start_ns: u64) -> TcpSpec {
    let mut t = pair_flow(pair, pairs, cc, start_ns);
    (t.recovery, t.prr, t.rack, t.undo, t.sack_compression, t.tso, t.ecn) = (Recovery::Sack, true, true, true, true, true, true);
    t
}

/// CoDel whose own law never acts here (its target is 5 ms) but whose `ce_threshold` marks every
/// ECN-capable packet that waited over 1 ms: the step marking DCTCP was designed for.
fn step_marking() -> QueueSpec {
    QueueSpec::Codel { limit_pkts: Some(1000), limit_bytes: None, codel: CodelSpec { ce_threshold_ns: Some(MS), ..CodelSpec::default() } }
}

/// DCTCP's central claim (Alizadeh et al. 2010, RFC 8257's introduction): with a marking threshold far
/// below the bandwidth-delay product, DCTCP keeps the link full, because each window's marks cut
/// it by α/2 rather than half; Reno with ECN halves at every marked window and leaves the link
/// idle for much of each cycle. 100 Mb/s, 20 ms (a BDP of 167 packets), threshold 1 ms (8
/// packets); one flow, 30 s.
#[test]
fn with_a_shallow_threshold_dctcp_fills_the_link_where_reno_with_ecn_cannot() {
    let run_with = |cc: &str| run(&with_queue(dumbbell(100_000_000, 20 * MS, 1000, vec![flow(0, 1, cc, 0)], 30 * S), step_marking()));
    let (dctcp, reno) = (run_with("dctcp"), run_with("reno"));
    let ceiling = goodput_ceiling_mbps(100_000_000);
    let (d, r) = (mean_mbps(&dctcp, 0, 5, 30) / ceiling, mean_mbps(&reno, 0, 5, 30) / ceiling);
    println!(
        "utilisation: dctcp {d:.3} (queue {:.1} pkts, {} marks, {} reductions), reno {r:.3} (queue {:.1}, {} marks, {} reductions)",
        queue_col(&dctcp, "mean_pkts"),
        queue_col(&dctcp, "marked_pkts"),
        dctcp.flow(0, "ecn_reductions"),
        queue_col(&reno, "mean_pkts"),
        queue_col(&reno, "marked_pkts"),
        reno.flow(0, "ecn_reductions"),
    );
    assert!(d > 0.95, "dctcp fills the link: {d:.3}");
    assert!(r < 0.9, "reno with ECN leaves it idle: {r:.3}");
    assert!(queue_col(&dctcp, "mean_pkts") < 20.0, "dctcp's queue stays near the threshold");
    for res in [&dctcp, &reno] {
        assert_eq!(queue_col(res, "dropped_pkts"), 0.0);
        assert_eq!(res.flow(0, "retrans_pkts"), 0.0);
        assert_eq!(res.flow(0, "sent_pkts"), res.flow(0, "delivered_pkts") + res.flow(0, "in_flight_pkts"), "conservation");
    }
}

/// Two DCTCP flows, the second starting 5 s later, share the shallow-marking link fairly
/// (JFI ≥ 0.95 over 15–60 s) and keep it full. Paced (Linux's internal pacing, as under fq): the
/// unpaced TSO bursts of the same flows (about 1 ms of data each, the threshold's length) leave
/// the late flow at about 5 Mb/s here, its packets marked eight times as often as the first
/// flow's, a phase effect of bursts against the threshold (docs/algorithms/dctcp.md).
#[test]
fn two_paced_dctcp_flows_share_fairly() {
    let flows = vec![paced(flow(0, 2, "dctcp", 0)), paced(flow(1, 2, "dctcp", 5 * S))];
    let r = run(&with_queue(dumbbell(100_000_000, 20 * MS, 1000, flows, 60 * S), step_marking()));
    let x = [mean_mbps(&r, 0, 15, 60), mean_mbps(&r, 1, 15, 60)];
    println!("dctcp pair: {x:?} Mb/s, jfi {:.3}", jain(&x));
    assert!(jain(&x) >= 0.95, "{x:?}");
    assert!(x[0] + x[1] > 0.95 * goodput_ceiling_mbps(100_000_000));
}

fn paced(mut t: TcpSpec) -> TcpSpec {
    t.pacing = true;
    t
}

/// DCTCP and a conventional ECN flow (CUBIC, RFC 3168) in one marking queue: the marks cut CUBIC
/// by 30% for each marked window and DCTCP by α/2 of a small α, so DCTCP takes most of the link
/// (RFC 8257's deployment section: DCTCP and conventional TCP do not coexist in one queue).
#[test]
fn dctcp_takes_most_of_a_marking_queue_shared_with_cubic() {
    for pacing in [false, true] {
        let flows = vec![flow(0, 2, "cubic", 0), flow(1, 2, "dctcp", 0)].into_iter().map(|mut t| {
            t.pacing = pacing;
            t
        });
        let r = run(&with_queue(dumbbell(100_000_000, 20 * MS, 1000, flows.collect(), 60 * S), step_marking()));
        let (cubic, dctcp) = (mean_mbps(&r, 0, 10, 60), mean_mbps(&r, 1, 10, 60));
        println!("pacing {pacing}: cubic {cubic:.2} Mb/s, dctcp {dctcp:.2} Mb/s");
        assert!(dctcp > 3.0 * cubic, "pacing {pacing}: dctcp {dctcp:.2} against cubic {cubic:.2}");
    }
}

/// The series report DCTCP's α at each interval's end (in Linux's 1/1024 steps; NaN for another
/// algorithm) and each flow's marks per interval, which add up to its total. With `shift_g` = 0, α
/// is the last window's marked fraction, so over the run it averages the fraction of packets
/// marked (Linux's `shift_g` 4: tests/dualpi2.rs).
#[test]
fn the_series_report_alpha_and_marks() {
    let mut d = flow(0, 2, "dctcp", 0);
    d.cc_params.insert("shift_g".into(), 0.0);
    let flows = vec![paced(d), paced(flow(1, 2, "cubic", 0))];
    let r = run(&with_queue(dumbbell(100_000_000, 20 * MS, 1000, flows, 30 * S), step_marking()));
    for f in 0..2 {
        assert_eq!(r.series(f, "marked_pkts").iter().sum::<f64>(), r.flow(f, "marked_pkts"), "flow {f}: marks add up");
    }
    assert!(r.series(1, "dctcp_alpha").iter().all(|a| a.is_nan()), "cubic has no alpha");
    let alpha = r.series(0, "dctcp_alpha");
    assert!(alpha.iter().all(|a| (0.0..=1.0).contains(a) && (a * 1024.0).fract() == 0.0), "{alpha:?}");
    let (marked, sent) = (r.series(0, "marked_pkts"), r.series(0, "sent_pkts"));
    let fraction = marked[5..].iter().sum::<f64>() / sent[5..].iter().sum::<f64>();
    let mean_alpha = alpha[5..].iter().sum::<f64>() / alpha[5..].len() as f64;
    println!("marked fraction {fraction:.4}, mean alpha {mean_alpha:.5}, alpha {:?}", &alpha[..8]);
    assert!(fraction > 0.01, "{fraction}");
    assert!((mean_alpha / fraction - 1.0).abs() < 0.5, "mean alpha {mean_alpha:.5} against the marked fraction {fraction:.5}");
}
