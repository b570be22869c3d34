//! RACK-TLP (RFC 8985, Linux `tcp_recovery.c`) against RFC 6675's duplicate-ACK threshold, on
//! scripted drops: where the two agree (three holes under a full window), and the three cases
//! RACK-TLP exists for — a loss with too few segments behind it for three SACKs, a whole flight
//! lost (the tail loss probe), and a lost retransmission — which RFC 6675 can only end with a
//! retransmission timeout.

use tcplab_sim::spec::{Recovery, TcpSpec};
use tcplab_sim::SimResult;

mod common;
use common::*;

const RTT: u64 = 100 * MS;

/// One SACK flow over 10 Mb/s, RTT 100 ms (BDP 83 packets), its window limited by the receiver
/// to `window` segments so no queue builds: only the scripted segments are lost.
fn scripted(rack: bool, window: u64, drops: &[u32], retransmit_drops: &[u32]) -> SimResult {
    let mut t = TcpSpec::new(0, 1);
    t.recovery = Recovery::Sack;
    t.prr = true;
    t.rack = rack;
    t.rwnd_bytes = window * 1448;
    t.drop_segments = drops.to_vec();
    t.drop_retransmits = retransmit_drops.to_vec();
    let mut spec = dumbbell(10_000_000, RTT, 1000, vec![t], 20 * S);
    spec.start_jitter_ns = 0;
    let r = run(&spec);
    assert_eq!(r.queues.col("dropped_pkts").get(0), 0.0, "only scripted drops");
    r
}

fn counts(r: &SimResult) -> (f64, f64, f64) {
    (r.flow(0, "recoveries"), r.flow(0, "rto_count"), r.flow(0, "retrans_pkts"))
}

#[test]
fn three_holes_in_a_full_window_recover_as_with_dupthresh() {
    // Once three segments are SACKed the reordering window is zero (no reordering seen): RACK
    // marks the holes when the third SACK arrives, as RFC 6675's IsLost would.
    let holes = [2000, 2010, 2020];
    for rack in [false, true] {
        let r = scripted(rack, 60, &holes, &[]);
        assert_eq!(counts(&r), (1.0, 0.0, 3.0), "rack {rack}");
        let rtts = r.flow(0, "recovery_ns") / RTT as f64;
        assert!(rtts < 1.6, "rack {rack}: recovery lasted {rtts:.2} RTTs");
    }
}

#[test]
fn a_loss_with_two_segments_behind_it_needs_the_reordering_timer() {
    // A window of 4: segments 200 and 201 are lost, 202 and 203 arrive. Two SACKs never
    // reach DupThresh: RFC 6675 waits for the RTO; RACK marks both lost min_rtt/4 (+2 ms) after
    // the first SACK and recovers.
    let dupthresh = scripted(false, 4, &[200, 201], &[]);
    assert_eq!(dupthresh.flow(0, "rto_count"), 1.0, "RFC 6675 needs a timeout");
    let rack = scripted(true, 4, &[200, 201], &[]);
    assert_eq!(counts(&rack), (1.0, 0.0, 2.0));
    // Repaired within about 1.25 RTT of the loss rather than after an RTO: the flow delivers
    // more in the second of the loss.
    let lost_at = 200.0 / 4.0 * RTT as f64 / 1e9; // window-limited: 4 segments per RTT
    let second = lost_at.floor() as u64;
    assert!(
        mean_mbps(&rack, 0, second, second + 2) > mean_mbps(&dupthresh, 0, second, second + 2),
        "RACK repairs sooner than an RTO"
    );
}

#[test]
fn a_whole_lost_flight_is_probed_not_timed_out() {
    // The second flight of slow start (segments 10–29) is lost entirely: no ACK comes back.
    // RFC 6675 waits for the RTO. The tail loss probe fires 2·SRTT + 2 ms after the last send
    // and sends new data (segment 30, whatever cwnd says); its SACK lets RACK mark the twenty
    // segments sent more than an RTT before it, and one recovery repairs them.
    let flight: Vec<u32> = (10..30).collect();
    let dupthresh = scripted(false, 10_000, &flight, &[]);
    assert_eq!(dupthresh.flow(0, "rto_count"), 1.0);
    let rack = scripted(true, 10_000, &flight, &[]);
    // Exactly the twenty lost segments are resent (no go-back-N after a timeout).
    assert_eq!(counts(&rack), (1.0, 0.0, 20.0));
}

#[test]
fn a_lost_retransmission_is_found_without_a_timeout() {
    // Segment 300 (in slow start) and its first retransmission are lost; the window is the
    // sender's, so segments sent after the retransmission follow it. RFC 6675 cannot see a lost
    // retransmission and waits for the RTO; RACK marks it lost once a segment sent after it is
    // SACKed and its RTT has passed, and sends it a third time.
    let dupthresh = scripted(false, 10_000, &[300], &[300]);
    assert!(dupthresh.flow(0, "rto_count") >= 1.0);
    let rack = scripted(true, 10_000, &[300], &[300]);
    assert_eq!(counts(&rack), (1.0, 0.0, 2.0));
    assert!(mean_mbps(&rack, 0, 0, 5) > mean_mbps(&dupthresh, 0, 0, 5));
}

#[test]
fn rack_flows_conserve_packets_and_repeat_for_a_seed() {
    // Two RACK flows with random loss both ways and a shallow buffer: every segment sent is
    // delivered, dropped or still in flight, and the same seed gives the same run.
    let mk = |i: u32| {
        let mut t = TcpSpec::new(i, 2 + i);
        t.rack = true;
        t.start_ns = i as u64 * 2 * S;
        t
    };
    let spec = with_loss(dumbbell(100_000_000, 50 * MS, 80, vec![mk(0), mk(1)], 30 * S), 0.002, 0.001);
    let (a, b) = (run(&spec), run(&spec));
    for f in 0..2 {
        for col in ["sent_pkts", "retrans_pkts", "goodput_bytes", "rto_count", "recoveries"] {
            assert_eq!(a.flow(f, col), b.flow(f, col), "flow {f} {col}");
        }
        let sent = a.flow(f, "sent_pkts");
        let (delivered, dropped, in_flight) = (a.flow(f, "delivered_pkts"), a.flow(f, "dropped_pkts"), a.flow(f, "in_flight_pkts"));
        assert_eq!(sent, delivered + dropped + in_flight, "flow {f}: {sent} = {delivered} + {dropped} + {in_flight}");
    }
}
