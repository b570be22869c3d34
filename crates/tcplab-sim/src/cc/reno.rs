//! TCP Reno congestion control: slow start, additive increase of one segment per RTT,
//! multiplicative decrease to half (RFC 5681 §3.1). Mirrors Linux `tcp_reno_cong_avoid` /
//! `tcp_reno_ssthresh` / `tcp_reno_undo_cwnd` in `net/ipv4/tcp_cong.c`, which Linux registers as
//! "reno" and which, with Linux's NewReno/SACK loss recovery, is what the papers call NewReno.
//!
//! Deviations: none known.

use super::helpers::{cong_avoid_ai, slow_start_leftover};
use super::{CongestionOps, TcpCcView};

#[derive(Clone, Copy, Debug, Default)]
pub struct Reno;

impl CongestionOps for Reno {
    /// RFC 5681 (4): ssthresh = max(FlightSize / 2, 2·SMSS); Linux halves cwnd.
    fn ssthresh(&mut self, tp: &TcpCcView) -> u32 {
        (tp.snd_cwnd >> 1).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut TcpCcView, _ack: u32, acked: u32) {
        let Some(acked) = slow_start_leftover(tp, acked) else { return };
        // In dangerous area, increase slowly.
        cong_avoid_ai(tp, tp.snd_cwnd, acked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_on_loss_but_never_below_two() {
        let mut tp = TcpCcView::new(100, 1448);
        assert_eq!(Reno.ssthresh(&tp), 50);
        tp.snd_cwnd = 3;
        assert_eq!(Reno.ssthresh(&tp), 2);
    }

    #[test]
    fn slow_start_doubles_per_rtt_then_grows_by_one() {
        let mut tp = TcpCcView::new(10, 1448);
        tp.is_cwnd_limited = true;
        // One RTT of ACKs for 10 segments, one ACK per segment: cwnd 10 -> 20.
        for i in 0..10 {
            Reno.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!(tp.snd_cwnd, 20);
        tp.snd_ssthresh = 20;
        // Congestion avoidance: 20 ACKed segments -> +1.
        for i in 0..20 {
            Reno.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!(tp.snd_cwnd, 21);
    }

    #[test]
    fn does_not_grow_when_not_cwnd_limited() {
        let mut tp = TcpCcView::new(10, 1448);
        tp.is_cwnd_limited = false;
        Reno.cong_avoid(&mut tp, 0, 5);
        assert_eq!(tp.snd_cwnd, 10);
    }
}
