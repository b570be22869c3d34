//! Loss recovery without SACK as Linux runs it (`tcp_is_reno`, `tcp_add_reno_sack`,
//! `tcp_newreno_mark_lost`): duplicate ACKs stand in for SACKed segments, the head is marked
//! lost at the third and again at every partial ACK, PRR sets the window from what the ACKs
//! delivered, and Recovery holds until the ACK passes the point it began at.

use tcplab_sim::cc::CaState;
use tcplab_sim::net::packet::{Flags, Packet};
use tcplab_sim::spec::TcpSpec;
use tcplab_sim::transport::tcp::TcpSender;

mod common;
use common::*;

fn retransmitted(out: &[Packet]) -> Vec<u32> {
    out.iter().filter(|p| p.has(Flags::RETRANS)).map(|p| p.seq).collect()
}

fn without_sack() -> TcpSpec {
    let mut t = TcpSpec::new(0, 1);
    t.sack = false;
    t.prr = true;
    t.rack = false;
    t
}

/// The initial window 0–9 is out; segments 2 and 5 are lost. Every number below follows from
/// Linux's rules: each duplicate ACK counts one segment delivered (`sacked_out` + 1); the third
/// marks segment 2 lost and starts Recovery with ssthresh 6 from cwnd 12; PRR then gives cwnd =
/// in flight + ⌈6·delivered/12⌉ − sent (in flight = out − duplicates − lost + retransmitted); the
/// ACK of 2–4 delivers one segment (the hole; 3 and 4 were counted as duplicates), takes two
/// off the count, and marks segment 5 lost, which goes out at once.
#[test]
fn duplicate_acks_count_as_delivered_and_a_partial_ack_marks_the_next_hole_lost() {
    let (mut s, mut out) = lone_sender(without_sack());
    let mut now = 50 * MS;
    let mut feed = |s: &mut TcpSender, out: &mut Vec<Packet>, a: u32| {
        now += 100_000;
        s.on_ack(&ack_packet(a, &[], 0), now, out);
        (s.ca_state(), s.tp.snd_cwnd, s.in_flight_bytes() / 1448)
    };
    use CaState::*;
    // Slow start on the ACKs of 0 and 1; the duplicates of 3 and 4 send a segment each
    // (Disorder: cwnd unchanged, two fewer in flight).
    assert_eq!(feed(&mut s, &mut out, 1), (Open, 11, 11));
    assert_eq!(feed(&mut s, &mut out, 2), (Open, 12, 12));
    assert_eq!(feed(&mut s, &mut out, 2), (Disorder, 12, 12));
    assert_eq!(feed(&mut s, &mut out, 2), (Disorder, 12, 12));
    assert!(retransmitted(&out).is_empty(), "no retransmission before the third duplicate");
    // The third duplicate (segment 6): 14 out, 3 counted, 1 lost → 10 in flight, + 1.
    assert_eq!(feed(&mut s, &mut out, 2), (Recovery, 11, 11));
    assert_eq!((s.tp.snd_ssthresh, s.snd_nxt()), (6, 16));
    assert_eq!(retransmitted(&out), [2]);
    // Duplicates of 7, 8, 9 (and the new segments sent meanwhile): PRR's proportional part.
    assert_eq!(feed(&mut s, &mut out, 2), (Recovery, 10, 10));
    assert_eq!(feed(&mut s, &mut out, 2), (Recovery, 10, 10));
    assert_eq!(s.snd_nxt(), 17, "one new segment on the third of them");
    assert_eq!(feed(&mut s, &mut out, 2), (Recovery, 9, 9));
    // The repair of 2 arrives: ACK of 2–4, a partial ACK.
    assert_eq!(feed(&mut s, &mut out, 5), (Recovery, 8, 8));
    assert_eq!(retransmitted(&out), [2, 5], "the new head is marked lost and repaired");
    assert_eq!(feed(&mut s, &mut out, 5), (Recovery, 7, 7));
    // In flight reaches ssthresh: PRR's conservative part sends nothing more than delivered.
    assert_eq!(feed(&mut s, &mut out, 5), (Recovery, 6, 6));
    // Everything sent before the loss is acknowledged (16, the recovery point): Recovery holds
    // (`tcp_is_non_sack_preventing_reopen`); only an ACK beyond it ends Recovery, at ssthresh.
    assert_eq!(feed(&mut s, &mut out, 16).0, Recovery);
    assert_eq!(feed(&mut s, &mut out, 17), (Open, 6, s.in_flight_bytes() / 1448));
    assert_eq!(retransmitted(&out), [2, 5], "nothing else resent");
}

/// More duplicate ACKs than segments out beyond a hole are reordering, not loss, to Linux
/// (`tcp_limit_reno_sacked`, `tcp_check_reno_reordering`): with two segments out (the
/// receiver's window allows no more) the count stops at one, the threshold becomes the two
/// segments out, and no number of duplicates starts a fast retransmit; the RTO does.
#[test]
fn more_duplicates_than_segments_out_are_reordering_not_loss() {
    let mut t = without_sack();
    t.rwnd_bytes = 2 * 1448;
    let (mut s, mut out) = lone_sender(t);
    assert_eq!(s.snd_nxt(), 2);
    for i in 1..=10 {
        s.on_ack(&ack_packet(0, &[], 0), 50 * MS + i * 100_000, &mut out);
        assert_eq!(s.ca_state(), CaState::Disorder, "after duplicate {i}");
        assert_eq!(s.in_flight_bytes() / 1448, 1, "one counted as delivered, one hole");
    }
    assert!(retransmitted(&out).is_empty());
    let rto = s.rto_timer.deadline.expect("the RTO is armed");
    s.on_rto(rto, &mut out);
    assert_eq!((s.ca_state(), retransmitted(&out)), (CaState::Loss, vec![0]));
    assert_eq!(s.stats.rto_count, 1);
}

/// A slow start that overflows the buffer loses about as many segments as ssthresh; without
/// SACK the sender learns of one hole per round trip, and with the holes counted in flight PRR
/// holds cwnd at ssthresh and lets out only the repair: one segment a round trip for the rest of
/// the run. The testbed's kernel (Linux 6.18, one `sack` flow with `sack = false`, 100 Mb/s,
/// 50 ms, 1 BDP, 20 s; `tcp:tcp_probe` and `tcp_cong_state_set` traced) did exactly this: 834
/// drops, Recovery entered once at 0.5 s and never left, cwnd = ssthresh = 834 from 0.61 s,
/// 20 retransmissions a second, 0.46 Mb/s over 8–20 s. With SACK the same flow fills the link.
#[test]
fn an_overflowing_slow_start_without_sack_repairs_one_hole_per_round_trip() {
    let rate = 100_000_000;
    let rtt = 50 * MS;
    let bdp = bdp_pkts(rate, rtt);
    let run_with = |sack: bool| {
        let mut t = TcpSpec::new(0, 1);
        t.sack = sack;
        t.prr = true;
        t.rack = sack;
        t.tso = true;
        run(&dumbbell(rate, rtt, bdp, vec![t], 20 * S))
    };
    let r = run_with(false);
    let drops = r.queues.col("dropped_pkts").get(0);
    assert!((700.0..1000.0).contains(&drops), "slow start lost {drops}");
    assert_eq!((r.flow(0, "recoveries"), r.flow(0, "rto_count")), (1.0, 0.0));
    let mbps = mean_mbps(&r, 0, 8, 20);
    assert!(mbps < 1.0, "{mbps} Mb/s over 8-20 s");
    let retrans = r.series(0, "retrans_pkts");
    for (i, &x) in retrans.iter().enumerate().skip(2) {
        assert!((18.0..=21.0).contains(&x), "second {}: {x} retransmissions, one per 50 ms round trip expected", i + 1);
    }
    let cwnd = r.series(0, "cwnd_bytes");
    let ssthresh = r.series(0, "ssthresh_bytes");
    assert_eq!(cwnd[10], ssthresh[10], "cwnd held at ssthresh");
    let sacked = run_with(true);
    assert!(mean_mbps(&sacked, 0, 8, 20) > 90.0);
}

/// The crawl above holds only while the holes are no more than ssthresh. With a few more, pipe
/// stays above ssthresh, PRR lets out ⌈ssthresh · delivered / cwnd⌉ − sent, which a partial ACK
/// (one segment delivered) raises by a half while its repair costs one, and within a few round
/// trips a partial ACK lets nothing out: no segment is in flight to bring another ACK, and the
/// RTO ends the recovery with go-back-N. A 450-packet buffer (with Linux's send buffer, so
/// nothing new goes out in the crawl) leaves 877 holes against ssthresh 873: four repairs, then
/// the timeout. The testbed's kernel sits on this edge in the 1-BDP run above (ssthresh 834–838
/// against 833–841 holes in six traced runs) and left the crawl by a timeout in 14 of 46 runs
/// (2026-12-01; `tests/test_testbed.py`): in one captured at the receiver it answered the third
/// repair at once, and the sender sent nothing more until its RTO, 343 ms later.
///
/// The go-back-N's own slow start then overflows the queue by a few segments, which Loss cannot
/// repair without SACK, and a second timeout follows. That one is the first since an ACK of new
/// data, so Linux's `tcp_enter_loss` halves ssthresh again (`icsk_retransmits` is 0), and the
/// flow fills the link from there. The kernel in that case (router pcap, 2026-12-01): 15 drops at
/// the end of the go-back-N, the second timeout 0.4 s after the first, a burst of 418 segments
/// (half its window) and 96.5 Mb/s from then on.
#[test]
fn more_holes_than_ssthresh_run_prr_dry_and_a_timeout_ends_the_recovery() {
    let rate = 100_000_000;
    let rtt = 50 * MS;
    let mut t = without_sack();
    t.tso = true;
    t.sndbuf_autotuning = true;
    let r = run(&dumbbell(rate, rtt, 450, vec![t], 8 * S));
    let holes = r.series(0, "dropped_pkts")[0];
    let ssthresh = r.series(0, "ssthresh_bytes");
    assert!(holes > ssthresh[0] / 1448.0, "{holes} holes, ssthresh {}", ssthresh[0] / 1448.0);
    let retrans = r.series(0, "retrans_pkts");
    assert!(retrans[0] <= 10.0, "the crawl's repairs before the timeout: {}", retrans[0]);
    assert!(r.flow(0, "rto_count") == 2.0 && retrans[1] > 1000.0, "go-back-N after the timeout: {retrans:?}");
    assert!((ssthresh[1] - ssthresh[0] / 2.0).abs() <= 2.0 * 1448.0, "the second timeout halves ssthresh: {ssthresh:?}");
    let mbps = mean_mbps(&r, 0, 3, 8);
    assert!(mbps > 90.0, "{mbps} Mb/s over 3-8 s");
}

/// Linux's send buffer holds what a recovery without SACK leaves queued: one CUBIC flow, 20
/// Mb/s, 40 ms, 1 BDP, 10 s, window 2–10 s. On the testbed's kernel (2026-11-28, `ss -tmi` in the
/// sender's namespace) the buffer stood at 649,728 bytes (2 · cwnd 141 · 2304) when the first
/// recovery began; with 342 segments unacknowledged and nothing left unsent the sender stopped
/// for ~190 ms, then the writer's refill left at once and overflowed the queue: 37–41 drops in
/// three runs and 17.1–18.3 Mb/s, against 9–10 drops and 19.33 Mb/s with SACK. With
/// `sndbuf_autotuning` the simulator's flow stalls the same way: 39 drops, 17.6 Mb/s; without it
/// (a fixed 4 MB cap) it never runs out of data: 10 drops, 19.31 Mb/s, as with SACK.
#[test]
fn the_send_buffer_runs_dry_in_a_long_recovery_without_sack() {
    let run_with = |sack: bool, sndbuf: bool| {
        let mut t = TcpSpec::new(0, 1);
        t.cc = "cubic".into();
        (t.sack, t.rack, t.prr, t.tso) = (sack, sack, true, true);
        t.sndbuf_autotuning = sndbuf;
        let rtt = 40 * MS;
        let r = run(&dumbbell(20_000_000, rtt, bdp_pkts(20_000_000, rtt), vec![t], 10 * S));
        (r.queues.col("dropped_pkts").get(0), mean_mbps(&r, 0, 2, 10))
    };
    let (drops, mbps) = run_with(false, true);
    assert!(drops >= 30.0 && mbps < 18.5, "without SACK, Linux's buffer: {drops} drops, {mbps} Mb/s");
    let (drops, mbps) = run_with(false, false);
    assert!(drops <= 12.0 && mbps > 19.0, "without SACK, a fixed cap: {drops} drops, {mbps} Mb/s");
    let (drops, mbps) = run_with(true, true);
    assert!(drops <= 12.0 && mbps > 19.0, "with SACK, Linux's buffer: {drops} drops, {mbps} Mb/s");
}
