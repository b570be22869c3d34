//! ECN (RFC 3168) end to end: the sender's ECT(0) data and its once-per-window reduction on ECE
//! with CWR, the receiver's echo until CWR, and AQMs that mark instead of dropping.

use tcplab_sim::cc::CaState;
use tcplab_sim::ids::{FlowId, NodeId};
use tcplab_sim::net::packet::{Ecn, Flags, Kind, Packet};
use tcplab_sim::spec::{CodelSpec, QueueSpec, TcpSpec};
use tcplab_sim::transport::tcp::TcpReceiver;

mod common;
use common::*;

/// A lone sender (`lone_sender`), with ECN or not, reducing as Linux does (PRR, RACK) or not,
/// that has sent its initial window of 10; its ssthresh is 10, so its next ACKs find it in
/// congestion avoidance.
fn sender(ecn: bool, linux: bool) -> (tcplab_sim::transport::tcp::TcpSender, Vec<Packet>) {
    let mut t = TcpSpec::new(0, 1);
    (t.ecn, t.prr, t.rack, t.init_cwnd_pkts) = (ecn, linux, linux, 10);
    let (mut s, out) = lone_sender(t);
    s.tp.snd_ssthresh = 10;
    (s, out)
}

fn ece(ack: u32) -> Packet {
    let mut a = ack_packet(ack, &[], 0);
    a.set_flag(Flags::ECE, true);
    a
}

/// A Linux-like sender (SACK, PRR, RACK) with ECN, in congestion avoidance at cwnd 10: its new
/// data leaves ECT(0); the first ACK with ECE sets ssthresh to 5 (Reno) and enters CWR; PRR
/// brings cwnd to 5 over the ACKs of the window; the first new segment after it carries CWR and
/// no other does; ECE on the window's remaining ACKs reduces nothing more; the reduction ends
/// once an ACK passes the window's end, and a new ECE then reduces again (RFC 3168 §6.1.2:
/// at most once per window of data; Linux `tcp_enter_cwr`, `tcp_cwnd_reduction`).
#[test]
fn ece_reduces_the_window_once_per_window_and_the_next_segment_carries_cwr() {
    let (mut s, mut out) = sender(true, true);
    assert_eq!(out.len(), 10);
    assert!(out.iter().all(|p| p.ecn() == Ecn::ECT0 && !p.has(Flags::CWR)), "new data is ECT(0)");
    out.clear();
    let mut now = 100 * MS;
    s.on_ack(&ece(1), now, &mut out);
    assert_eq!((s.ca_state(), s.tp.snd_ssthresh, s.stats.ecn_reductions), (CaState::Cwr, 5, 1));
    // Every later ECE of this window (the receiver echoes until it sees CWR) changes nothing.
    for a in 2..=10 {
        now += 1 * MS;
        s.on_ack(&ece(a), now, &mut out);
        assert_eq!((s.ca_state(), s.tp.snd_ssthresh, s.stats.ecn_reductions), (CaState::Cwr, 5, 1), "ACK {a}");
    }
    // PRR: of 10 delivered, ssthresh/prior_cwnd = half sent; pipe is then at ssthresh.
    assert_eq!(s.tp.snd_cwnd, 5, "cwnd {} after the window's ACKs", s.tp.snd_cwnd);
    let cwr: Vec<u32> = out.iter().filter(|p| p.has(Flags::CWR)).map(|p| p.seq).collect();
    assert_eq!(cwr, vec![10], "CWR on the first new segment only");
    assert!(out.iter().all(|p| p.ecn() == Ecn::ECT0));
    assert!(out.len() <= 5, "PRR sent {} during the reduction", out.len());
    // The answer to segment 10 (above the reduction's start, snd_nxt 10) ends it at ssthresh.
    now += 40 * MS;
    s.on_ack(&ack_packet(11, &[], 0), now, &mut out);
    assert_eq!((s.ca_state(), s.tp.snd_cwnd), (CaState::Open, 5));
    // A fresh mark: a second reduction.
    now += 1 * MS;
    s.on_ack(&ece(12), now, &mut out);
    assert_eq!((s.ca_state(), s.stats.ecn_reductions), (CaState::Cwr, 2));
    assert!(s.tp.snd_ssthresh < 5);
    assert_eq!(s.stats.recoveries, 0);
    assert_eq!(s.stats.retrans_pkts, 0);
}

/// Without PRR (ns-2's agents), ECE halves cwnd at once (RFC 3168 §6.1.2), once per window.
#[test]
fn without_prr_ece_halves_cwnd_at_once() {
    let (mut s, mut out) = sender(true, false);
    s.on_ack(&ece(1), 100 * MS, &mut out);
    assert_eq!((s.tp.snd_ssthresh, s.tp.snd_cwnd), (5, 5));
    s.on_ack(&ece(2), 101 * MS, &mut out);
    assert_eq!((s.tp.snd_ssthresh, s.stats.ecn_reductions), (5, 1), "once per window");
}

/// A sender without ECN ignores ECE, and its data is not ECN-capable.
#[test]
fn without_ecn_data_is_not_ect_and_ece_is_ignored() {
    let (mut s, mut out) = sender(false, true);
    assert!(out.iter().all(|p| p.ecn() == Ecn::NOT_ECT));
    s.on_ack(&ece(1), 100 * MS, &mut out);
    assert_eq!((s.ca_state(), s.tp.snd_ssthresh, s.stats.ecn_reductions), (CaState::Open, 10, 0));
}

fn data(seq: u32, ecn: Ecn, cwr: bool) -> Packet {
    let mut p = Packet::new(FlowId(0), NodeId(1), Kind::Data, 1500);
    p.seq = seq;
    p.set_ecn(ecn);
    p.set_flag(Flags::CWR, cwr);
    p
}

/// The receiver echoes a CE mark with ECE on every ACK until a segment with CWR arrives, and (its
/// Linux ACK policy) acknowledges the marked segment and the CWR segment at once (RFC 3168
/// §6.1.3; Linux `__tcp_ecn_check_ce`, `tcp_ecn_accept_cwr`).
#[test]
fn the_receiver_echoes_ce_until_cwr() {
    let mut t = TcpSpec::new(0, 1);
    t.ecn = true;
    t.sack_compression = true;
    let mut r = TcpReceiver::new(FlowId(0), NodeId(0), &t);
    let mut out = vec![];
    let mut now = 0;
    // Out of quick-ACK mode first: 40 ECT segments, ACKs every second one.
    for seq in 0..40 {
        now += 100_000;
        r.on_data(&data(seq, Ecn::ECT0, false), now, &mut out);
    }
    assert!(out.iter().all(|a| !a.has(Flags::ECE)));
    out.clear();
    now += 100_000;
    r.on_data(&data(40, Ecn::CE, false), now, &mut out);
    assert_eq!(out.len(), 1, "a CE segment is acknowledged at once (quick-ACK mode)");
    assert!(out[0].has(Flags::ECE));
    assert_eq!(r.stats.ce_pkts, 1);
    for seq in 41..50 {
        now += 100_000;
        r.on_data(&data(seq, Ecn::ECT0, false), now, &mut out);
    }
    assert!(out.len() >= 5 && out.iter().all(|a| a.has(Flags::ECE)), "every ACK echoes until CWR");
    out.clear();
    now += 100_000;
    r.on_data(&data(50, Ecn::ECT0, true), now, &mut out);
    assert_eq!(out.len(), 1, "the CWR segment is acknowledged at once");
    assert!(!out[0].has(Flags::ECE), "CWR ends the echo");
    for seq in 51..60 {
        now += 100_000;
        r.on_data(&data(seq, Ecn::ECT0, false), now, &mut out);
    }
    assert!(out.iter().all(|a| !a.has(Flags::ECE)));
}

/// Two Linux CUBIC flows with ECN through CoDel with ECN, 20 Mb/s, 40 ms, 400 packets: CoDel
/// marks where it dropped, so nothing is lost or retransmitted, the senders reduce on the echoes
/// (about once per mark episode), the queue stays as short and the link as full as with drops;
/// every mark reaches a receiver, and every packet sent is delivered or still in flight.
#[test]
fn codel_marks_instead_of_dropping_and_nothing_is_lost() {
    let flows: Vec<TcpSpec> = (0..2)
        .map(|i| {
            let mut t = pair_flow(i, 2, "cubic", u64::from(i) * S);
            (t.recovery, t.prr, t.rack, t.sack_compression, t.tso) = (tcplab_sim::spec::Recovery::Sack, true, true, true, true);
            t
        })
        .collect();
    let run_with = |ecn: bool| {
        let flows = flows.iter().cloned().map(|mut t| {
            t.ecn = ecn;
            t
        });
        let spec = dumbbell(20_000_000, 40 * MS, 400, flows.collect(), 30 * S);
        run(&with_queue(spec, QueueSpec::Codel { limit_pkts: Some(400), limit_bytes: None, codel: CodelSpec { ecn, ..CodelSpec::default() } }))
    };
    let (drops, marks) = (run_with(false), run_with(true));
    let total = |r: &tcplab_sim::SimResult| mean_mbps(r, 0, 8, 30) + mean_mbps(r, 1, 8, 30);
    println!(
        "drops: {:.2} Mb/s, queue {:.1}, {} drops; marks: {:.2} Mb/s, queue {:.1}, {} marks, {} reductions",
        total(&drops),
        queue_col(&drops, "mean_pkts"),
        queue_col(&drops, "dropped_pkts"),
        total(&marks),
        queue_col(&marks, "mean_pkts"),
        queue_col(&marks, "marked_pkts"),
        marks.flow(0, "ecn_reductions") + marks.flow(1, "ecn_reductions"),
    );
    assert!(queue_col(&drops, "dropped_pkts") > 20.0 && queue_col(&drops, "marked_pkts") == 0.0);
    assert_eq!(queue_col(&marks, "dropped_pkts"), 0.0);
    for f in 0..2 {
        assert_eq!(marks.flow(f, "retrans_pkts"), 0.0);
        assert_eq!(marks.flow(f, "recoveries"), 0.0);
        let sent = marks.flow(f, "sent_pkts");
        assert_eq!(sent, marks.flow(f, "delivered_pkts") + marks.flow(f, "in_flight_pkts"), "flow {f}: conservation");
    }
    let marked = queue_col(&marks, "marked_pkts");
    assert!(marked > 20.0);
    assert_eq!(marks.flow(0, "marked_pkts") + marks.flow(1, "marked_pkts"), marked, "every mark arrives");
    let reductions = marks.flow(0, "ecn_reductions") + marks.flow(1, "ecn_reductions");
    assert!(reductions >= 0.5 * marked && reductions <= marked, "{reductions} reductions for {marked} marks");
    assert!(total(&marks) > 0.95 * goodput_ceiling_mbps(20_000_000), "{}", total(&marks));
    assert!((queue_col(&marks, "mean_pkts") - queue_col(&drops, "mean_pkts")).abs() < 2.0);
}

/// ECN-incapable traffic through an AQM with ECN is still dropped: a CBR flow's datagrams.
#[test]
fn an_aqm_with_ecn_still_drops_what_is_not_ecn_capable() {
    let mut t = pair_flow(0, 2, "reno", 0);
    t.ecn = true;
    let cbr: tcplab_sim::spec::FlowSpec = serde_json::from_value(serde_json::json!({
        "kind": "cbr", "src": 1, "dst": 3, "start_ns": 0, "packet_bytes": 1000, "schedule": [[0, 30_000_000u64]]
    }))
    .expect("a CBR spec");
    let spec = dumbbell(20_000_000, 40 * MS, 400, vec![tcplab_sim::spec::FlowSpec::from(t), cbr], 10 * S);
    let r = run(&with_queue(spec, QueueSpec::Codel { limit_pkts: Some(400), limit_bytes: None, codel: CodelSpec { ecn: true, ..CodelSpec::default() } }));
    assert!(queue_col(&r, "early_drop_pkts") > 100.0, "the CBR flow's datagrams are dropped");
    assert!(r.flow(1, "dropped_pkts") > 100.0);
}
