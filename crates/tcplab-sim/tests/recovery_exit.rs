//! The ACK that ends a SACK recovery acknowledges at once every segment SACKed during it. Linux
//! grows cwnd by what an ACK newly delivered (`tcp_cong_control` passes `acked_sacked` to
//! `cong_avoid`), so those segments, already counted when they were SACKed (while cwnd was being
//! reduced), earn no growth a second time: the window leaves recovery at ssthresh and grows one
//! segment per RTT from there.

use tcplab_sim::net::packet::Flags;
use tcplab_sim::spec::{Recovery, TcpSpec};

mod common;
use common::*;

#[test]
fn leaving_recovery_does_not_credit_the_sacked_segments_again() {
    // One Linux-like flow (SACK, PRR, RACK), one scripted drop at segment 300 once slow start is
    // past it, a buffer deep enough for nothing else to be lost; cwnd sampled every 5 ms.
    let mut t = TcpSpec::new(0, 1);
    t.recovery = Recovery::Sack;
    t.prr = true;
    t.rack = true;
    t.rwnd_bytes = 64 << 20;
    t.drop_segments = vec![300];
    let mut spec = dumbbell(10_000_000, 100 * MS, 2000, vec![t], 3 * S);
    spec.start_jitter_ns = 0;
    spec.interval_ns = 5 * MS;
    let r = run(&spec);
    assert_eq!(r.flow(0, "recoveries"), 1.0);
    assert_eq!(r.queues.col("dropped_pkts").get(0), 0.0, "only the scripted drop");
    let cwnd = r.series(0, "cwnd_bytes");
    let ssthresh = r.series(0, "ssthresh_bytes");
    let retrans = r.series(0, "retrans_pkts");
    // PRR brings cwnd down to ssthresh over the recovery; the ACK that ends it cumulatively
    // acknowledges the ~150 segments SACKed meanwhile.
    let rtx = retrans.iter().position(|&x| x > 0.0).expect("a retransmission");
    let end = (rtx..cwnd.len() - 1).find(|&i| cwnd[i] < ssthresh[i] + 3.0 * MSS && cwnd[i + 1] >= cwnd[i]).expect("recovery ends");
    let s = ssthresh[end] / MSS;
    assert!(s > 100.0, "a window large enough to tell: ssthresh {s}");
    assert_eq!(cwnd[end] / MSS, s, "cwnd leaves recovery at ssthresh");
    // Then congestion avoidance: one segment per RTT (here over 150 ms), not two at once.
    let most = cwnd[end..end + 30].iter().fold(0.0f64, |m, &c| m.max(c)) / MSS;
    assert!(most <= s + 1.0, "in the 150 ms after recovery cwnd reached {most}, ssthresh {s}");
}

/// Linux `tcp_init_cwnd_reduction` starts the count of segments acknowledged towards the next
/// increase again (`snd_cwnd_cnt = 0`): what was counted before the loss earns nothing after it.
/// Here nine ACKs in congestion avoidance at cwnd 10 leave the count at 9; the loss of segment 9
/// halves cwnd to 5, the ACK that ends recovery leaves it at 5, and so do the next four ACKs of one
/// segment each. With the count carried over, cwnd rose to 6 at the second of them.
#[test]
fn the_count_towards_the_next_increase_starts_again_at_a_loss() {
    let mut t = TcpSpec::new(0, 1);
    t.prr = false;
    t.rack = false;
    t.init_cwnd_pkts = 10;
    let (mut s, mut out) = lone_sender(t);
    // Congestion avoidance from the start: the initial window is acknowledged segment by segment.
    s.tp.snd_ssthresh = 10;
    let ack = |a: u32, sack: Option<(u32, u32)>| ack_packet(a, sack.as_slice(), 0);
    let mut now = 100 * MS;
    for i in 1..=9 {
        now += 10_000;
        s.on_ack(&ack(i, None), now, &mut out);
    }
    assert_eq!((s.tp.snd_cwnd, s.tp.snd_cwnd_cnt), (10, 9));
    // Segment 9 is lost; 10-18 arrive and are SACKed; the third duplicate ACK starts recovery.
    for end in [12, 14, 16, 19] {
        now += 10_000;
        s.on_ack(&ack(9, Some((10, end))), now, &mut out);
    }
    assert_eq!(s.tp.snd_ssthresh, 5);
    assert!(out.iter().any(|p| p.has(Flags::RETRANS) && p.seq == 9), "segment 9 retransmitted");
    // The retransmission arrives: everything up to 19 is acknowledged, and recovery ends.
    now += 100 * MS;
    s.on_ack(&ack(19, None), now, &mut out);
    assert_eq!(s.tp.snd_cwnd, 5, "cwnd leaves recovery at ssthresh");
    // The next ACKs, one segment each, count from nothing: four of them earn no increase yet.
    for a in 20..24 {
        now += 10_000;
        s.on_ack(&ack(a, None), now, &mut out);
        assert_eq!(s.tp.snd_cwnd, 5, "after the ACK of {a}: count {}", s.tp.snd_cwnd_cnt);
    }
}
