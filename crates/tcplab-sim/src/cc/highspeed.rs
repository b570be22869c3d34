//! HighSpeed TCP: S. Floyd, RFC 3649 (2003). Above Low_Window = 38 segments the additive increase
//! a(w) grows and the decrease b(w) shrinks with the window, following the response function
//! w = 0.12 / p^0.835 (§5), so that a flow can hold a 83 000-segment window at a loss rate of
//! 10⁻⁷. Below 38 segments it is Reno.
//!
//! Mirrors Linux `net/ipv4/tcp_highspeed.c`: the RFC's Appendix B table, the decrease in 1/256
//! units, the row index `ai` kept so that table[ai − 1].cwnd < cwnd ≤ table[ai].cwnd, and
//! a(w) = ai + 1 segments per RTT (cwnd_cnt += ai + 1 per ACK, +1 segment when it reaches cwnd).
//!
//! Profile `linux-2.6.22`: no change (the table and the arithmetic are the same in 2.6.22).
//!
//! Deviations: none known. Like Linux, ssthresh uses the row found by the last congestion-
//! avoidance ACK (row 0, b = 0.5, if cwnd never left slow start).

use super::helpers::slow_start;
use super::params::Param;
use super::{CongestionOps, TcpCcView};

/// Linux's `hstcp_aimd_vals` scale for b(w): `md` / 256.
const MD_SCALE_SHIFT: u32 = 8;

/// RFC 3649 Appendix B: (w, b(w)·256). a(w) is the row index + 1.
const AIMD: [(u32, u32); 72] = [
    (38, 128), (118, 112), (221, 104), (347, 98), (495, 93), (663, 89), (851, 86), (1058, 83),
    (1284, 81), (1529, 78), (1793, 76), (2076, 74), (2378, 72), (2699, 71), (3039, 69),
    (3399, 68), (3778, 66), (4177, 65), (4596, 64), (5036, 62), (5497, 61), (5979, 60),
    (6483, 59), (7009, 58), (7558, 57), (8130, 56), (8726, 55), (9346, 54), (9991, 53),
    (10661, 52), (11358, 52), (12082, 51), (12834, 50), (13614, 49), (14424, 48), (15265, 48),
    (16137, 47), (17042, 46), (17981, 45), (18955, 45), (19965, 44), (21013, 43), (22101, 43),
    (23230, 42), (24402, 41), (25618, 41), (26881, 40), (28193, 39), (29557, 39), (30975, 38),
    (32450, 38), (33986, 37), (35586, 36), (37253, 36), (38992, 35), (40808, 35), (42707, 34),
    (44694, 33), (46776, 33), (48961, 32), (51258, 32), (53677, 31), (56230, 30), (58932, 30),
    (61799, 29), (64851, 28), (68113, 28), (71617, 27), (75401, 26), (79517, 26), (84035, 25),
    (89053, 24),
];

/// Linux has no module parameters for HighSpeed TCP.
pub const PARAMS: &[Param] = &[];

#[derive(Clone, Copy, Debug, Default)]
pub struct HighSpeed {
    /// Row of the AIMD table for the current window.
    ai: u32,
}

impl HighSpeed {
    /// Move `ai` to the row whose window range holds `cwnd`.
    fn update_row(&mut self, cwnd: u32) {
        let last = AIMD.len() as u32 - 1;
        while cwnd > AIMD[self.ai as usize].0 && self.ai < last {
            self.ai += 1;
        }
        while self.ai > 0 && cwnd <= AIMD[self.ai as usize - 1].0 {
            self.ai -= 1;
        }
    }
}

impl CongestionOps for HighSpeed {
    fn init(&mut self, tp: &mut TcpCcView) {
        self.ai = 0;
        // Keep cwnd · md within 32 bits.
        tp.snd_cwnd_clamp = tp.snd_cwnd_clamp.min(u32::MAX / 128);
    }

    /// RFC 3649 §5: w ← (1 − b(w))·w.
    fn ssthresh(&mut self, tp: &TcpCcView) -> u32 {
        let md = AIMD[self.ai as usize].1;
        (tp.snd_cwnd - ((tp.snd_cwnd * md) >> MD_SCALE_SHIFT)).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut TcpCcView, _ack: u32, acked: u32) {
        if !tp.is_cwnd_limited {
            return;
        }
        if tp.in_slow_start() {
            slow_start(tp, acked);
            return;
        }
        self.update_row(tp.snd_cwnd);
        // RFC 3649 §5: w ← w + a(w)/w per ACK.
        if tp.snd_cwnd < tp.snd_cwnd_clamp {
            tp.snd_cwnd_cnt += self.ai + 1;
            if tp.snd_cwnd_cnt >= tp.snd_cwnd {
                tp.snd_cwnd_cnt -= tp.snd_cwnd;
                tp.snd_cwnd += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ca_view(cwnd: u32) -> TcpCcView {
        let mut tp = TcpCcView::new(cwnd, 1448);
        tp.snd_ssthresh = 1;
        tp.is_cwnd_limited = true;
        tp
    }

    /// a(w) (segments per RTT) and b(w) as the engine applies them at window `w`.
    fn a_b(w: u32) -> (u32, f64) {
        let mut h = HighSpeed::default();
        let mut tp = ca_view(w);
        h.cong_avoid(&mut tp, 0, 1);
        tp.snd_cwnd = w; // measure b at w itself
        let cut = w - h.ssthresh(&tp);
        (h.ai + 1, cut as f64 / w as f64)
    }

    #[test]
    fn follows_the_rfc_3649_table_at_its_windows() {
        // RFC 3649 Appendix B, rows (w, a(w), b(w)) as printed.
        let rfc = [
            (38, 1, 0.50), (118, 2, 0.44), (221, 3, 0.41), (347, 4, 0.38), (495, 5, 0.37), (663, 6, 0.35),
            (851, 7, 0.34), (1058, 8, 0.33), (1284, 9, 0.32), (1529, 10, 0.31), (1793, 11, 0.30),
            (5036, 20, 0.25), (10661, 30, 0.21), (84035, 71, 0.10), (89053, 72, 0.10),
        ];
        for (w, a, b) in rfc {
            let (got_a, got_b) = a_b(w);
            assert_eq!(got_a, a, "a({w})");
            // b is stored in 1/256 and applied with an integer shift: within 1/256 + rounding of
            // the table's two decimals.
            assert!((got_b - b).abs() <= 0.005 + 1.0 / 256.0, "b({w}) = {got_b} vs {b}");
        }
    }

    #[test]
    fn every_row_follows_the_rfc_response_function() {
        // RFC 3649 §5: b(w) = (High_Decrease − 0.5)·(log w − log Low_Window)/(log High_Window −
        // log Low_Window) + 0.5 with High_Decrease 0.1, Low_Window 38, High_Window 83000; and
        // a(w) = w²·p(w)·2·b(w)/(2 − b(w)) with p(w) = 0.078/w^1.2 (§5, the response function).
        for (i, &(w, md)) in AIMD.iter().enumerate() {
            let wf = w as f64;
            let b = (0.1 - 0.5) * (wf.ln() - 38f64.ln()) / (83000f64.ln() - 38f64.ln()) + 0.5;
            let p = 0.078 / wf.powf(1.2);
            let a = wf * wf * p * 2.0 * b / (2.0 - b);
            assert!((md as f64 / 256.0 - b).abs() < 0.006, "row {i}: b({w}) {} vs {b:.4}", md as f64 / 256.0);
            assert!((a - (i + 1) as f64).abs() < 0.51, "row {i}: a({w}) = {a:.3}, table {}", i + 1);
        }
    }

    #[test]
    fn below_low_window_it_is_reno() {
        let (a, b) = a_b(30);
        assert_eq!((a, b), (1, 0.5));
        // One RTT of ACKs at cwnd 30 adds one segment.
        let mut h = HighSpeed::default();
        let mut tp = ca_view(30);
        for i in 0..30 {
            h.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!(tp.snd_cwnd, 31);
    }

    #[test]
    fn at_ten_thousand_segments_it_adds_thirty_per_rtt() {
        // 9991 < 10 000 <= 10 661: row 29, a = 30. One RTT = 10 000 ACKs gives 300 000 credits;
        // each increase spends the current cwnd (10 000, 10 001, …): 29 increases spend
        // 290 406, leaving 9 594 < 10 029 — so +29, the 30th a few ACKs into the next RTT.
        let mut h = HighSpeed::default();
        let mut tp = ca_view(10_000);
        for i in 0..10_000 {
            h.cong_avoid(&mut tp, i, 1);
        }
        assert_eq!(h.ai, 29);
        assert_eq!(tp.snd_cwnd, 10_029);
        // b(10 029) = 52/256: 10 029 − (10 029·52 >> 8) = 10 029 − 2037 = 7992.
        assert_eq!(h.ssthresh(&tp), 7992);
    }
}
