//! Undo of a spurious retransmission timeout (`undo`; Linux `tcp_try_undo_loss` with Eifel
//! detection, `tcp_packet_delayed`, RFC 3522): the first ACK of new data after the timeout echoes
//! a timestamp from before the first retransmission, so the original was delayed, not lost; the
//! window and ssthresh go back to what they were and nothing stays marked lost. Checked against
//! the testbed's kernel through a link outage.

use tcplab_sim::cc::CaState;
use tcplab_sim::net::packet::{Flags, Packet};
use tcplab_sim::spec::{Spec, TcpSpec, Topology};
use tcplab_sim::transport::tcp::TcpSender;

mod common;
use common::*;

fn retransmitted(out: &[Packet]) -> Vec<u32> {
    out.iter().filter(|p| p.has(Flags::RETRANS)).map(|p| p.seq).collect()
}

/// A sender whose second flight (segments 10–29, sent at 50 ms) meets a timeout: returns it
/// with the time its first retransmission (of segment 10) left.
fn timed_out(undo: bool) -> (TcpSender, Vec<Packet>, u64) {
    let mut t = TcpSpec::new(0, 1);
    t.rack = false;
    t.undo = undo;
    let (mut s, mut out) = lone_sender(t);
    s.on_ack(&ack_packet(10, &[], 0), 50 * MS, &mut out);
    assert_eq!(s.snd_nxt(), 30, "slow start doubled the window");
    out.clear();
    let rto = s.rto_timer.deadline.expect("the RTO is armed");
    s.on_rto(rto, &mut out);
    assert_eq!((s.ca_state(), retransmitted(&out), s.tp.snd_cwnd), (CaState::Loss, vec![10], 1));
    (s, out, rto)
}

#[test]
fn an_ack_echoing_the_originals_timestamp_undoes_the_timeout() {
    // The ACK of segment 10 echoes 50 ms, its original's timestamp: the original arrived, the
    // timeout was spurious. cwnd is 20 again, Open, no segment lost, nothing more resent, and
    // the window's room goes to new data.
    let (mut s, mut out, rto) = timed_out(true);
    s.on_ack(&ack_packet(11, &[], 50 * MS), rto + 5 * MS, &mut out);
    assert_eq!(s.ca_state(), CaState::Open);
    assert!(s.tp.snd_cwnd >= 20, "cwnd {} after the undo", s.tp.snd_cwnd);
    assert_eq!(s.ssthresh_bytes(), None, "ssthresh is infinite again, as before the timeout");
    assert_eq!(retransmitted(&out), [10], "no go-back-N");
    assert_eq!(s.in_flight_bytes() / 1448, 19 + (s.snd_nxt() - 30) as u64, "segments 11–29 counted in flight again, and the new ones");
    assert!(s.snd_nxt() > 30, "new data went out");
    assert_eq!(s.stats.undos, 1);
}

#[test]
fn an_ack_of_the_retransmission_or_without_undo_keeps_the_timeout() {
    // The ACK echoes the retransmission's timestamp: the original was lost; Loss goes on in
    // slow start from cwnd 1, resending what follows.
    let (mut s, mut out, rto) = timed_out(true);
    let echo = out.iter().find(|p| p.has(Flags::RETRANS)).expect("the retransmission").ts_val_ns;
    s.on_ack(&ack_packet(11, &[], echo), rto + 50 * MS, &mut out);
    assert_eq!(s.ca_state(), CaState::Loss);
    assert_eq!(s.tp.snd_cwnd, 2);
    assert_eq!(retransmitted(&out), [10, 11, 12]);
    // The original's echo, but `undo` off: the same as a real loss.
    let (mut s, mut out, rto) = timed_out(false);
    s.on_ack(&ack_packet(11, &[], 50 * MS), rto + 5 * MS, &mut out);
    assert_eq!((s.ca_state(), s.tp.snd_cwnd), (CaState::Loss, 2));
    assert_eq!(retransmitted(&out), [10, 11, 12]);
    assert_eq!(s.stats.undos, 0);
}

/// CUBIC on 20 Mb/s, 40 ms, a 1-BDP buffer, the link down from 8 s to 9.5 s.
fn outage(undo: bool) -> Spec {
    let mut t = TcpSpec::new(0, 1);
    t.cc = "cubic".to_string();
    t.rack = true;
    t.tso = true;
    t.undo = undo;
    let mut spec = dumbbell(20_000_000, 40 * MS, 67, vec![t], 18 * S);
    if let Topology::Dumbbell(d) = &mut spec.topology {
        d.bottleneck_schedule = vec![(8 * S, 0), (9 * S + S / 2, 20_000_000)];
    }
    spec
}

#[test]
fn after_an_outage_the_queued_originals_undo_the_timeouts() {
    // The sender times out twice while the link is down; when it comes back, the packets the
    // queue held arrive and their ACKs echo timestamps from before the timeouts. Linux undoes
    // the timeouts and repairs only what the full queue dropped: the testbed's kernel CUBIC
    // (tcplab testbed, this scenario with 0.1-s reports) saw 2 timeouts, 38 drops and 17.38 Mb/s
    // over 3–18 s. Without undo the sender resends the whole window (go-back-N) on top of what
    // the queue still delivers, and overflows it again.
    let with = run(&outage(true));
    let without = run(&outage(false));
    for r in [&with, &without] {
        assert_eq!(r.flow(0, "rto_count"), 2.0);
        let [sent, delivered, dropped, in_flight] = ["sent_pkts", "delivered_pkts", "dropped_pkts", "in_flight_pkts"].map(|c| r.flow(0, c));
        assert_eq!(sent, delivered + dropped + in_flight);
    }
    let (drops, drops_without) = (with.flow(0, "dropped_pkts"), without.flow(0, "dropped_pkts"));
    assert!((30.0..=50.0).contains(&drops), "{drops} drops with undo (the kernel: 38)");
    assert!(drops_without > 2.0 * drops, "{drops_without} drops without undo, {drops} with");
    assert_eq!((with.flow(0, "loss_undos"), without.flow(0, "loss_undos")), (1.0, 0.0), "one undo, of the second timeout's episode");
    let (retrans, retrans_without) = (with.flow(0, "retrans_pkts"), without.flow(0, "retrans_pkts"));
    assert!(retrans_without > 3.0 * retrans, "{retrans_without} retransmissions without undo, {retrans} with");
    // The two seconds after the link is back: more goes through with undo.
    let after = |r| mean_mbps(r, 0, 9, 11);
    assert!(after(&with) > after(&without), "{} against {} Mb/s", after(&with), after(&without));
    assert_eq!(run(&outage(true)), with);
}

#[test]
fn undo_is_refused_without_a_sack_connection() {
    for (recovery, sack) in [(tcplab_sim::spec::Recovery::Newreno, true), (tcplab_sim::spec::Recovery::Sack, false)] {
        let mut t = TcpSpec::new(0, 1);
        t.recovery = recovery;
        t.sack = sack;
        t.undo = true;
        let err = tcplab_sim::simulate(&dumbbell(10_000_000, 20 * MS, 50, vec![t], S)).expect_err("refused").to_string();
        assert!(err.contains("flows[0].undo") && err.contains("sack"), "{err}");
    }
}
