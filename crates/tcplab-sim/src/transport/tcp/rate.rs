//! Delivery-rate estimation, as Linux `net/ipv4/tcp_rate.c` and
//! draft-cheng-iccrg-delivery-rate-estimation-02.
//!
//! Each transmission snapshots the connection's delivery counters into the segment ([`TxRate`],
//! Linux `tcp_skb_cb.tx`, kept in the scoreboard's ring: no allocation per packet). When an ACK
//! delivers segments, the newest-sent of them ([`RateAcc`]) tells how much was delivered between
//! its send and this ACK, and over how long:
//!
//! ```text
//!   delivered   = tp.delivered(now) − tx.delivered                  (segments)
//!   snd_interval = send time of that segment − tx.first_tx_ns       (send phase, draft §3.3)
//!   rcv_interval = now − tx.delivered_ns                            (ACK phase)
//!   interval     = max(snd_interval, rcv_interval)                  (never faster than either)
//! ```
//!
//! Samples whose interval is shorter than min RTT are discarded (ACK compression would inflate
//! them), as Linux does. Flights sent while the application had nothing to send are flagged
//! app-limited (draft §3.4, `tcp_rate_check_app_limited`).
//!
//! Deviations from Linux: none in the arithmetic; times are ns rather than µs; an ACK that
//! reneges SACKed data cannot happen here.

use crate::cc::{RateSample, TcpCcView};
use crate::time::Nanos;

/// Per-segment snapshot at transmission (Linux `tcp_skb_cb.tx`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxRate {
    /// `tp.delivered` when sent, segments.
    pub delivered: u32,
    /// `tp.delivered_ns` when sent, ns.
    pub delivered_ns: Nanos,
    /// `tp.first_tx_ns` when sent, ns.
    pub first_tx_ns: Nanos,
    pub is_app_limited: bool,
}

/// The newest-sent segment among those one ACK delivers (Linux fills `rate_sample` this way in
/// `tcp_rate_skb_delivered`). Reset before each ACK.
#[derive(Clone, Copy, Debug, Default)]
pub struct RateAcc {
    /// A segment was delivered by this ACK.
    pub valid: bool,
    /// Its snapshot.
    pub tx: TxRate,
    /// Its send time and sequence number (ties broken by sequence: Linux `tcp_skb_sent_after`).
    pub xmit_ns: Nanos,
    pub seq: u32,
    pub is_retrans: bool,
    /// Send times of the oldest and the newest never-retransmitted segments SACKed by this ACK
    /// (Linux `first_sackt` and `last_sackt`), for the RTT samples.
    pub first_sackt_ns: Option<Nanos>,
    pub last_sackt_ns: Option<Nanos>,
}

impl RateAcc {
    /// Segment `seq`, sent at `xmit_ns` with snapshot `tx`, was delivered (Linux
    /// `tcp_rate_skb_delivered`).
    #[inline]
    pub fn delivered(&mut self, seq: u32, xmit_ns: Nanos, tx: &TxRate, retrans: bool) {
        if !self.valid || xmit_ns > self.xmit_ns || (xmit_ns == self.xmit_ns && seq > self.seq) {
            *self = RateAcc { valid: true, tx: *tx, xmit_ns, seq, is_retrans: retrans, ..*self };
        }
    }
}

/// A segment goes out at `now` with `packets_out` segments already outstanding (Linux
/// `tcp_rate_skb_sent`): a flight that starts from idle restarts both clocks.
#[inline]
pub fn on_send(tp: &mut TcpCcView, packets_out: u32, now: Nanos) -> TxRate {
    if packets_out == 0 {
        tp.first_tx_ns = now;
        tp.delivered_ns = now;
    }
    TxRate { delivered: tp.delivered, delivered_ns: tp.delivered_ns, first_tx_ns: tp.first_tx_ns, is_app_limited: tp.app_limited != 0 }
}

/// The application has nothing more to send and the window is not full (Linux
/// `tcp_rate_check_app_limited`): mark the bubble until everything now in flight is delivered.
#[inline]
pub fn check_app_limited(tp: &mut TcpCcView, in_flight: u32) {
    if in_flight < tp.snd_cwnd {
        tp.app_limited = tp.delivered.wrapping_add(in_flight).max(1);
    }
}

/// Build the ACK's sample (Linux `tcp_rate_gen`). `delivered`/`lost`: segments newly delivered /
/// marked lost by the ACK (already added to `tp.delivered` / `tp.lost`). A sample whose interval
/// is shorter than `tp.min_rtt_ns` (Linux `tcp_min_rtt`) is not valid.
pub fn gen(
    tp: &mut TcpCcView,
    acc: &RateAcc,
    delivered: u32,
    lost: u32,
    prior_in_flight: u32,
    rtt_ns: Option<Nanos>,
    now: Nanos,
) -> RateSample {
    // Clear the app-limited mark once the bubble has been delivered.
    if tp.app_limited != 0 && (tp.delivered.wrapping_sub(tp.app_limited) as i32) > 0 {
        tp.app_limited = 0;
    }
    if delivered > 0 {
        tp.delivered_ns = now;
    }
    let mut rs = RateSample {
        rtt_ns: rtt_ns.map_or(-1, |r| r as i64),
        losses: lost,
        acked_sacked: delivered,
        prior_in_flight,
        ..RateSample::invalid()
    };
    if !acc.valid {
        return rs;
    }
    // The newest delivered segment's send time starts the next sample's send phase.
    tp.first_tx_ns = acc.xmit_ns;
    rs.prior_delivered = acc.tx.delivered;
    rs.prior_ns = acc.tx.delivered_ns;
    rs.is_app_limited = acc.tx.is_app_limited;
    rs.is_retrans = acc.is_retrans;
    rs.delivered = tp.delivered.wrapping_sub(acc.tx.delivered) as i64;
    rs.snd_interval_ns = acc.xmit_ns as i64 - acc.tx.first_tx_ns as i64;
    rs.rcv_interval_ns = now as i64 - acc.tx.delivered_ns as i64;
    let interval = rs.snd_interval_ns.max(rs.rcv_interval_ns);
    // An interval shorter than min RTT means ACK compression or a retransmission's ambiguity:
    // no valid rate (Linux: "interval_us < tcp_min_rtt").
    rs.interval_ns = if (interval as u64) < tp.min_rtt_ns { -1 } else { interval };
    rs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::tcp::scoreboard::Scoreboard;

    const US: Nanos = 1_000;

    /// Send segments at given times, then ACK them, checking the samples against the draft's
    /// definitions computed by hand.
    #[test]
    fn samples_follow_the_draft_on_a_hand_computed_sequence() {
        let mut tp = TcpCcView::new(10, 1000);
        tp.min_rtt_ns = 500 * US;
        let mut sb = Scoreboard::new(16);
        // t = 0: 4 segments leave back to back at 0, 10, 20, 30 µs (from idle: clocks reset to 0).
        for i in 0..4u64 {
            let tx = on_send(&mut tp, sb.packets_out(), i * 10 * US);
            sb.push(i * 10 * US, tx);
        }
        assert_eq!(sb_tx(&sb, 3), TxRate { delivered: 0, delivered_ns: 0, first_tx_ns: 0, is_app_limited: false });

        // t = 1000 µs: an ACK for segments 0 and 1. Newest delivered = seg 1 (sent at 10 µs):
        // delivered = 2 − 0 = 2; snd = 10 − 0 = 10 µs; rcv = 1000 − 0 = 1000 µs → interval 1000 µs.
        let rs = ack(&mut tp, &mut sb, 2, 1000 * US);
        assert_eq!((rs.delivered, rs.interval_ns, rs.snd_interval_ns, rs.rcv_interval_ns), (2, 1000 * US as i64, 10 * US as i64, 1000 * US as i64));
        assert_eq!((rs.prior_delivered, rs.acked_sacked, rs.prior_in_flight), (0, 2, 4));
        // 2 segments of 1000 B in 1 ms = 16 Mb/s.
        assert_eq!(rs.delivery_rate_bps(1000), Some(16_000_000));
        assert_eq!((tp.delivered, tp.delivered_ns, tp.first_tx_ns), (2, 1000 * US, 10 * US));

        // The ACK clocks out segment 4 at 1000 µs: it carries delivered = 2, delivered_ns = 1000,
        // first_tx = 10 µs (the newest delivered segment's send time).
        let tx = on_send(&mut tp, sb.packets_out(), 1000 * US);
        sb.push(1000 * US, tx);
        assert_eq!(tx, TxRate { delivered: 2, delivered_ns: 1000 * US, first_tx_ns: 10 * US, is_app_limited: false });

        // t = 1500 µs: segment 4 is SACKed (2, 3 still out). Sample from segment 4:
        // delivered = 3 − 2 = 1; snd = 1000 − 10 = 990 µs; rcv = 1500 − 1000 = 500 µs → 990 µs.
        sb.rate = RateAcc::default();
        let newly = sb.sack(4, 5, 0);
        tp.delivered += newly;
        let rs = gen(&mut tp, &sb.rate, newly, 0, 3, None, 1500 * US);
        assert_eq!((rs.delivered, rs.interval_ns, rs.prior_delivered), (1, 990 * US as i64, 2));
        // 500 µs since it was sent.
        assert_eq!(sb.rate.last_sackt_ns, Some(1000 * US));

        // t = 1600 µs: cumulative ACK of 2..5. Segment 4 was counted when SACKed and is skipped;
        // of 2 and 3, the newest is 3 (sent at 30 µs with delivered 0):
        // delivered = 5 − 0 = 5; snd = 30 − 0 = 30; rcv = 1600 − 0 = 1600 µs.
        let rs = ack(&mut tp, &mut sb, 5, 1600 * US);
        assert_eq!((rs.delivered, rs.interval_ns, rs.acked_sacked), (5, 1600 * US as i64, 2));

        // An interval shorter than min RTT is invalid.
        let tx = on_send(&mut tp, sb.packets_out(), 2000 * US);
        sb.push(2000 * US, tx);
        let rs = ack(&mut tp, &mut sb, 6, 2100 * US);
        assert_eq!((rs.delivered, rs.interval_ns), (1, -1));
    }

    #[test]
    fn app_limited_mark_covers_the_bubble_then_clears() {
        let mut tp = TcpCcView::new(10, 1000);
        tp.delivered = 100;
        check_app_limited(&mut tp, 4);
        assert_eq!(tp.app_limited, 104);
        let tx = on_send(&mut tp, 4, 0);
        assert!(tx.is_app_limited);
        // Delivering up to 104 keeps the mark; past it clears it.
        tp.delivered = 104;
        tp.min_rtt_ns = 0;
        gen(&mut tp, &RateAcc::default(), 4, 0, 4, None, 1);
        assert_eq!(tp.app_limited, 104);
        tp.delivered = 105;
        gen(&mut tp, &RateAcc::default(), 1, 0, 1, None, 2);
        assert_eq!(tp.app_limited, 0);
        // A full window is not app-limited.
        check_app_limited(&mut tp, 10);
        assert_eq!(tp.app_limited, 0);
    }

    fn sb_tx(sb: &Scoreboard, seq: u32) -> TxRate {
        sb.tx_rate(seq).expect("in window")
    }

    fn ack(tp: &mut TcpCcView, sb: &mut Scoreboard, to: u32, now: Nanos) -> RateSample {
        let prior_in_flight = sb.in_flight();
        sb.rate = RateAcc::default();
        let a = sb.ack(to);
        let newly = a.not_sacked;
        tp.delivered += newly;
        gen(tp, &sb.rate, newly, 0, prior_in_flight, None, now)
    }
}
