//! A flow's preamble (`preamble`, transport::tcp::setup): the round trips before the data, what
//! the sender and the receiver take from them, and a lost SYN.

mod common;

use tcplab_sim::net::packet::Kind;
use tcplab_sim::result::SimResult;
use tcplab_sim::spec::{Preamble, TcpSpec};
use tcplab_sim::{simulate, Spec};

use common::*;

/// One pair, 100 Mb/s, RTT 100 ms (all on the bottleneck), 1 Gb/s access links; one SACK flow
/// with `preamble` from 1 s to 3 s; the sender's access links (2: data, 3: answers) captured.
fn run_with(preamble: &str, timestamps: bool) -> SimResult {
    let v = serde_json::json!({
        "seed": 3, "duration_ns": 4_000_000_000u64, "start_jitter_ns": 0,
        "topology": {"kind": "dumbbell", "pairs": 1, "bottleneck_rate_bps": 100_000_000u64,
            "bottleneck_delay_ns": 50_000_000u64, "access_rate_bps": 1_000_000_000u64, "access_delay_ns": [0],
            "queue": {"kind": "droptail", "limit_pkts": 833}, "access_queue": {"kind": "droptail", "limit_pkts": 1000}},
        "flows": [{"kind": "tcp", "src": 0, "dst": 1, "start_ns": 1_000_000_000u64, "stop_ns": 3_000_000_000u64,
            "preamble": preamble, "timestamps": timestamps}],
        "capture": {"flow": 0, "links": [2, 3]},
    });
    simulate(&Spec::from_json(&v.to_string()).unwrap()).unwrap()
}

struct Row {
    link: u64,
    kind: u64,
    seq: u64,
    t: u64,
    size: u64,
    ts_val: u64,
    ts_ecr: u64,
}

fn rows(r: &SimResult) -> Vec<Row> {
    let c = r.capture.as_ref().expect("a capture table");
    let col = |name: &str| {
        let c = c.col(name);
        (0..c.len()).map(|i| c.get(i) as u64).collect::<Vec<_>>()
    };
    let (link, kind, seq, t, size, ts_val, ts_ecr) = (col("link"), col("kind"), col("seq"), col("t_ns"), col("size_bytes"), col("ts_val_ns"), col("ts_ecr_ns"));
    let mut out: Vec<Row> = (0..link.len())
        .map(|i| Row { link: link[i], kind: kind[i], seq: seq[i], t: t[i], size: size[i], ts_val: ts_val[i], ts_ecr: ts_ecr[i] })
        .collect();
    out.sort_by_key(|r| r.t);
    out
}

const RTT_NS: u64 = 100_000_000;

#[test]
fn iperf3_sends_five_round_trips_then_the_data() {
    let r = run_with("iperf3", true);
    let rows = rows(&r);
    let requests: Vec<&Row> = rows.iter().filter(|x| x.link == 2 && x.kind == Kind::Setup as u64).collect();
    let answers: Vec<&Row> = rows.iter().filter(|x| x.link == 3 && x.kind == Kind::SetupAck as u64).collect();
    assert_eq!(requests.iter().map(|x| (x.seq, x.size)).collect::<Vec<_>>(), [(0, 60), (1, 89), (2, 206), (3, 60), (4, 89)]);
    assert_eq!(answers.iter().map(|x| (x.seq, x.size)).collect::<Vec<_>>(), [(0, 60), (1, 53), (2, 53), (3, 60), (4, 52)]);
    // The first request leaves at the flow's start; each next one when the answer to the last is
    // in (the answer crosses the sender's access link as it arrives), one round trip later.
    assert_eq!(requests[0].t, S);
    for k in 1..5 {
        assert_eq!(requests[k].t, answers[k - 1].t + answers[k - 1].size * 8, "request {k}");
        let round_trip = requests[k].t - requests[k - 1].t;
        assert!(round_trip > RTT_NS && round_trip < RTT_NS + 100_000, "round trip {k}: {round_trip}");
    }
    // The data: 1 ms (iperf3's server starting the test) after the cookie's ACK is in, its
    // segments echoing that ACK's timestamp.
    let data: Vec<&Row> = rows.iter().filter(|x| x.link == 2 && x.kind == Kind::Data as u64).collect();
    let cookie_ack = answers[4];
    assert_eq!(data[0].t, cookie_ack.t + cookie_ack.size * 8 + 1_000_000);
    assert!(data[..10].iter().all(|x| x.ts_ecr == cookie_ack.ts_val && x.ts_val == data[0].ts_val));
    assert!(r.flow(0, "goodput_bytes") > 0.0);
}

#[test]
fn a_handshake_is_one_round_trip_and_the_data_follows_at_once() {
    let r = run_with("handshake", true);
    let rows = rows(&r);
    let kinds: Vec<(u64, u64)> = rows.iter().take(3).map(|x| (x.link, x.kind)).collect();
    assert_eq!(kinds, [(2, Kind::Setup as u64), (3, Kind::SetupAck as u64), (2, Kind::Data as u64)]);
    assert_eq!(rows[2].t, rows[1].t + 60 * 8);
    assert_eq!(rows[2].ts_ecr, rows[1].ts_val);
}

#[test]
fn without_timestamps_the_preamble_is_smaller_by_their_option() {
    let r = run_with("iperf3", false);
    let sizes: Vec<u64> = rows(&r).iter().filter(|x| x.kind == Kind::Setup as u64).map(|x| x.size).collect();
    assert_eq!(sizes, [52, 77, 194, 52, 77]);
}

#[test]
fn none_starts_the_data_at_the_flows_start() {
    let r = run_with("none", true);
    let rows = rows(&r);
    assert!(rows.iter().all(|x| x.kind == Kind::Data as u64 || x.kind == Kind::Ack as u64));
    assert_eq!(rows[0].t, S);
}

/// The sender on its own: what the SYN-ACK gives it, and a lost SYN.
#[test]
fn the_syn_ack_gives_the_first_rtt_and_a_lost_syn_is_sent_again_after_a_second() {
    use tcplab_sim::ids::{FlowId, NodeId};
    use tcplab_sim::net::packet::Packet;
    use tcplab_sim::rng::{Rng, Stream};
    use tcplab_sim::transport::tcp::TcpSender;
    let mut spec = TcpSpec::new(0, 1);
    spec.preamble = Preamble::Handshake;
    let mut s = TcpSender::new(FlowId(0), NodeId(1), &spec, Rng::stream(1, Stream::CongestionControl, 0));
    let mut out = vec![];
    s.start(0, &mut out);
    assert_eq!((out.len(), out[0].kind), (1, Kind::Setup));
    // RFC 6298 (2.1): 1 s for the SYN, then twice that.
    assert_eq!(s.rto_timer.deadline, Some(S));
    out.clear();
    s.on_rto(S, &mut out);
    assert_eq!((out.len(), out[0].kind, out[0].seq), (1, Kind::Setup, 0));
    assert_eq!(s.rto_timer.deadline, Some(3 * S));
    // The SYN-ACK to the second SYN, 120 ms later: Karn's rule leaves the send times aside, the
    // echoed timestamp gives 120 ms; then the initial window, its RTO from that sample.
    let mut answer = Packet::new(FlowId(0), NodeId(0), Kind::SetupAck, 60);
    answer.ts_val_ns = S + 60_000_000;
    answer.ts_ecr_ns = S;
    out.clear();
    s.on_setup_ack(&answer, S + 120_000_000, &mut out);
    assert_eq!(s.rtt.srtt_ns, 120_000_000);
    assert_eq!(s.tp.min_rtt_ns, 120_000_000);
    assert_eq!(out.len(), 10);
    assert!(out.iter().all(|p| p.kind == Kind::Data && p.ts_ecr_ns == answer.ts_val_ns));
    // RTO = srtt + max(4·rttvar, 200 ms) = 120 + 240 ms.
    assert_eq!(s.rto_timer.deadline, Some(S + 120_000_000 + 360_000_000));
    // An answer to a SYN sent again is ignored.
    out.clear();
    s.on_setup_ack(&answer, S + 130_000_000, &mut out);
    assert!(out.is_empty());
    assert_eq!(s.rtt.srtt_ns, 120_000_000);
}

/// After iperf3's preamble the flow is the bulk transfer it is without one.
#[test]
fn after_the_preamble_the_flow_fills_the_path_as_without_it() {
    let mut plain = TcpSpec::new(0, 1);
    plain.sack = true;
    let mut hs = plain.clone();
    hs.preamble = Preamble::Iperf3;
    let spec = |t: TcpSpec| dumbbell(100_000_000, 100 * MS, bdp_pkts(100_000_000, 100 * MS), vec![t], 20 * S);
    let (a, b) = (run(&spec(plain)), run(&spec(hs)));
    // Five round trips and 1 ms later the flow is the same bulk transfer: the path filled.
    let (ma, mb) = (mean_mbps(&a, 0, 5, 20), mean_mbps(&b, 0, 5, 20));
    assert!(ma > 90.0 && (ma / mb - 1.0).abs() < 0.01, "{ma} {mb}");
    // And its first second carries less: 0.5 s of it went to the preamble.
    assert!(mean_mbps(&b, 0, 0, 1) < mean_mbps(&a, 0, 0, 1));
}
