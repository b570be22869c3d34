//! Which segment an ACK's RTT sample comes from, as Linux `tcp_clean_rtx_queue` and
//! `tcp_ack_update_rtt` choose it: for srtt the oldest segment the ACK cumulatively acknowledges
//! (none retransmitted, Karn), else the oldest never-retransmitted segment it newly SACKs, else,
//! when it advances snd_una, the echoed timestamp in whole milliseconds; for the algorithm and
//! the min RTT, the newest such segment.

use tcplab_sim::net::packet::Packet;
use tcplab_sim::spec::TcpSpec;
use tcplab_sim::time::Nanos;
use tcplab_sim::transport::tcp::TcpSender;

mod common;
use common::{ack_packet as ack, lone_sender};

const MS: Nanos = 1_000_000;
const US: Nanos = 1_000;

fn sender() -> (TcpSender, Vec<Packet>) {
    let mut spec = TcpSpec::new(0, 1);
    spec.timestamps = true;
    spec.init_cwnd_pkts = 10;
    let (s, out) = lone_sender(spec);
    assert_eq!(out.len(), 10, "the initial window leaves at 0");
    (s, out)
}

#[test]
fn a_duplicate_ack_that_sacks_new_data_is_an_rtt_sample() {
    let (mut s, mut out) = sender();
    // Segment 0 is lost; at 100.3 ms an ACK of 0 SACKs 1-2, sent at 0: srtt takes 100.3 ms,
    // where an ACK that advances nothing would give no sample from the timestamp.
    s.on_ack(&ack(0, &[(1, 3)], 1), 100 * MS + 300 * US, &mut out);
    assert_eq!(s.rtt.srtt_ns, 100 * MS + 300 * US);
    assert_eq!(s.tp.min_rtt_ns, 100 * MS + 300 * US);
}

/// The sender after three duplicate ACKs SACKed 1-3 (RTT 100 ms) at 100-102 ms: segment 0 is
/// retransmitted at 102 ms.
fn sender_after_fast_retransmit() -> (TcpSender, Vec<Packet>) {
    let (mut s, mut out) = sender();
    for (t, end) in [(100, 2), (101, 3), (102, 4)] {
        s.on_ack(&ack(0, &[(1, end)], 1), t * MS, &mut out);
    }
    (s, out)
}

#[test]
fn an_ack_of_retransmitted_data_takes_the_sacked_segments_rtt_before_the_timestamp() {
    let (mut s, mut out) = sender_after_fast_retransmit();
    let srtt = s.rtt.srtt_ns;
    assert!(srtt > 0);
    // At 250.4 ms an ACK of 0-4 (0 retransmitted: no RTT from it, Karn) also SACKs 5-6, sent at 0:
    // the sample is 250.4 ms from the SACKed segments, not the timestamp's whole milliseconds
    // echoed from the retransmission.
    let ts_of_retransmission = 102 * MS;
    s.on_ack(&ack(4, &[(5, 7)], ts_of_retransmission), 250 * MS + 400 * US, &mut out);
    let r = 250 * MS + 400 * US;
    assert_eq!(s.rtt.srtt_ns, (7 * srtt + r) / 8);
}

#[test]
fn without_sacked_segments_an_ack_of_retransmitted_data_takes_the_timestamp() {
    let (mut s, mut out) = sender_after_fast_retransmit();
    let srtt = s.rtt.srtt_ns;
    // An ACK of 0-4 only, 100.7 ms after the retransmission's timestamp: 100 ms (whole ticks).
    s.on_ack(&ack(4, &[], 102 * MS), 202 * MS + 700 * US, &mut out);
    assert_eq!(s.rtt.srtt_ns, (7 * srtt + 100 * MS) / 8);
}
