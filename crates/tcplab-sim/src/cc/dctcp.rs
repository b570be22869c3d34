//! DCTCP (RFC 8257; Alizadeh et al., SIGCOMM 2010), as Linux `net/ipv4/tcp_dctcp.c` runs it: Reno
//! whose window reduction on ECN marks is proportional to the fraction of marked data. Once per
//! window of data (when snd_una passes the `snd_nxt` of the last update) the fraction F of
//! delivered segments whose ACK carried ECE updates α ← (1 − g)·α + g·F, in 1/1024 with g =
//! 2^−shift_g; an ECN reduction sets ssthresh = cwnd − cwnd·α/2 (`dctcp_ssthresh`); a loss halves as
//! Reno does (`dctcp_react_to_loss`, on entering Recovery and on a timeout's first reduction).
//!
//! The receiver's side (ECE set exactly while the last data segment arrived CE, and an immediate
//! ACK when that changes, `dctcp_ece_ack_update`) is the receiver's `dctcp` mode, and the sender
//! sends every segment ECN-capable, retransmissions too (`TCP_CONG_NEEDS_ECN`); see
//! `transport::tcp`. Linux counts F from `tp->delivered_ce` (segments delivered by ACKs with ECE)
//! since 5.1, as here.
//!
//! Deviations: PLB (Protective Load Balancing, a flow-label rehash on persistent marks) is not
//! modelled (one path); without ECN Linux falls back to `dctcp-reno`, which tcplab refuses instead.

use super::params::{Param, ParamValues};
use super::{CaEvent, CaState, CongestionOps, Reno, TcpCcView};

/// Linux `DCTCP_MAX_ALPHA`: α = 1 in its fixed point.
pub(super) const MAX_ALPHA: u32 = 1024;

pub const PARAMS: &[Param] = &[
    Param { name: "shift_g", default: 4.0, min: 0.0, max: 10.0, help: "the estimation gain g = 1/2^shift_g of the marked fraction's moving average (Linux dctcp_shift_g)" },
    Param { name: "alpha_on_init", default: 1.0, min: 0.0, max: 1.0, help: "alpha at the start, the fraction of the window the first ECN reduction halves (Linux dctcp_alpha_on_init = 1024/1024)" },
];

#[derive(Clone, Copy, Debug)]
pub struct Dctcp {
    shift_g: u32,
    alpha_on_init: u32,
    /// α in 1/1024 (Linux `dctcp_alpha`).
    pub alpha: u32,
    /// The window's end: α is updated once snd_una reaches it (Linux `next_seq`).
    next_seq: u32,
    old_delivered: u32,
    old_delivered_ce: u32,
    /// cwnd at the last reduction, for undo (Linux `loss_cwnd`).
    loss_cwnd: u32,
}

impl Dctcp {
    pub fn new(p: &ParamValues) -> Self {
        let alpha_on_init = p.scaled("alpha_on_init", MAX_ALPHA as f64);
        Dctcp {
            shift_g: p.get("shift_g").round() as u32,
            alpha_on_init,
            alpha: alpha_on_init,
            next_seq: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            loss_cwnd: 0,
        }
    }

    /// Linux `dctcp_reset`: the next window starts now.
    fn reset(&mut self, tp: &TcpCcView) {
        self.next_seq = tp.snd_nxt;
        self.old_delivered = tp.delivered;
        self.old_delivered_ce = tp.delivered_ce;
    }

    /// Linux `dctcp_react_to_loss`: a loss halves, as Reno.
    fn react_to_loss(&mut self, tp: &mut TcpCcView) {
        self.loss_cwnd = tp.snd_cwnd;
        tp.snd_ssthresh = Reno.ssthresh(tp);
    }
}

impl CongestionOps for Dctcp {
    fn init(&mut self, tp: &mut TcpCcView) {
        self.alpha = self.alpha_on_init.min(MAX_ALPHA);
        self.loss_cwnd = 0;
        self.reset(tp);
    }

    /// Linux `dctcp_ssthresh`: cwnd less α/2 of it.
    fn ssthresh(&mut self, tp: &TcpCcView) -> u32 {
        self.loss_cwnd = tp.snd_cwnd;
        let cut = ((tp.snd_cwnd as u64 * self.alpha as u64) >> 11) as u32;
        (tp.snd_cwnd - cut).max(2)
    }

    /// Linux `tcp_reno_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut TcpCcView, ack: u32, acked: u32) {
        Reno.cong_avoid(tp, ack, acked);
    }

    /// Linux `dctcp_cwnd_undo`.
    fn undo_cwnd(&mut self, tp: &TcpCcView) -> u32 {
        tp.snd_cwnd.max(self.loss_cwnd)
    }

    /// Linux `dctcp_state`: entering Recovery halves (after `ssthresh` set α's cut).
    fn set_state(&mut self, tp: &mut TcpCcView, new_state: CaState) {
        if new_state == CaState::Recovery && tp.ca_state != CaState::Recovery {
            self.react_to_loss(tp);
        }
    }

    /// Linux `dctcp_cwnd_event`: a timeout's first reduction halves.
    fn cwnd_event(&mut self, tp: &mut TcpCcView, ev: CaEvent) {
        if ev == CaEvent::Loss {
            self.react_to_loss(tp);
        }
    }

    /// Linux `dctcp_update_alpha`, on every ACK after its deliveries are counted.
    fn in_ack_event(&mut self, tp: &mut TcpCcView) {
        if tp.snd_una < self.next_seq {
            return;
        }
        let delivered = tp.delivered.wrapping_sub(self.old_delivered);
        let delivered_ce = tp.delivered_ce.wrapping_sub(self.old_delivered_ce);
        let mut alpha = self.alpha;
        // α ← (1 − g)·α: Linux's `min_not_zero(alpha, alpha >> g)` takes at least what the shift
        // gives, and all of a small α when the shift gives nothing (so α decays to 0).
        let decay = alpha >> self.shift_g;
        alpha -= if decay == 0 { alpha } else { decay.min(alpha) };
        if delivered_ce > 0 {
            let f = ((delivered_ce as u64) << (10 - self.shift_g)) / delivered.max(1) as u64;
            alpha = (alpha + f as u32).min(MAX_ALPHA);
        }
        self.alpha = alpha;
        self.reset(tp);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn dctcp(given: &[(&str, f64)]) -> Dctcp {
        let given: BTreeMap<String, f64> = given.iter().map(|&(k, v)| (k.to_string(), v)).collect();
        let mut d = Dctcp::new(&ParamValues::resolve(PARAMS, &[], &given, "t").unwrap());
        d.init(&mut TcpCcView::new(10, 1448));
        d
    }

    /// One window of `n` segments delivered, `marked` of them by ACKs with ECE, then the ACK that
    /// ends it.
    fn window(d: &mut Dctcp, tp: &mut TcpCcView, n: u32, marked: u32) {
        tp.snd_nxt += n;
        tp.delivered += n;
        tp.delivered_ce += marked;
        tp.snd_una = tp.snd_nxt;
        d.in_ack_event(tp);
    }

    #[test]
    fn alpha_is_the_moving_average_of_the_marked_fraction_with_gain_one_sixteenth() {
        let mut d = dctcp(&[]);
        let mut tp = TcpCcView::new(10, 1448);
        d.reset(&tp);
        assert_eq!(d.alpha, 1024);
        // No marks: α·15/16 per window, in Linux's integer steps (1024 − 64 = 960, 960 − 60 = 900 …).
        let mut expect = 1024u32;
        for _ in 0..5 {
            window(&mut d, &mut tp, 100, 0);
            expect -= expect >> 4;
            assert_eq!(d.alpha, expect);
        }
        assert_eq!(d.alpha, 743);
        // A quarter of every window marked: α falls to F = 256/1024, within the shift's rounding
        // (α − ⌊α/16⌋ + 16 = α for α in 256–271).
        for _ in 0..300 {
            window(&mut d, &mut tp, 100, 25);
        }
        assert!((256..=271).contains(&d.alpha), "alpha {}", d.alpha);
        // Every segment marked: α reaches 1 and stays.
        for _ in 0..300 {
            window(&mut d, &mut tp, 100, 100);
        }
        assert_eq!(d.alpha, 1024);
    }

    #[test]
    fn alpha_is_updated_once_per_window_of_data() {
        let mut d = dctcp(&[]);
        let mut tp = TcpCcView::new(10, 1448);
        tp.snd_nxt = 100;
        d.in_ack_event(&mut tp); // snd_una 0 ≥ next_seq 0: the first window starts at 100
        assert_eq!(d.alpha, 1024 - 64);
        // ACKs within the window leave α alone, however many are marked.
        for una in 1..100 {
            tp.snd_una = una;
            tp.delivered += 1;
            tp.delivered_ce += 1;
            d.in_ack_event(&mut tp);
            assert_eq!(d.alpha, 960);
        }
        tp.snd_una = 100;
        tp.delivered += 1;
        tp.delivered_ce += 1;
        d.in_ack_event(&mut tp);
        // F = 100/100: 960 − 60 + 64 = 964.
        assert_eq!(d.alpha, 964);
    }

    #[test]
    fn an_ecn_reduction_cuts_alpha_half_of_the_window_and_a_loss_halves() {
        let mut d = dctcp(&[("alpha_on_init", 0.25)]);
        assert_eq!(d.alpha, 256);
        let mut tp = TcpCcView::new(100, 1448);
        // RFC 8257 §3.3: cwnd × (1 − α/2) = 100 × 0.875.
        assert_eq!(d.ssthresh(&tp), 88);
        tp.snd_cwnd = 2;
        assert_eq!(d.ssthresh(&tp), 2);
        tp.snd_cwnd = 100;
        d.ssthresh(&tp);
        d.set_state(&mut tp, CaState::Recovery);
        assert_eq!(tp.snd_ssthresh, 50);
        tp.snd_cwnd = 40;
        tp.ca_state = CaState::Recovery;
        // Already in Recovery: nothing more.
        d.set_state(&mut tp, CaState::Recovery);
        assert_eq!(tp.snd_ssthresh, 50);
        d.cwnd_event(&mut tp, CaEvent::Loss);
        assert_eq!(tp.snd_ssthresh, 20);
        // Undo goes back to the window before the last reduction.
        tp.snd_cwnd = 1;
        assert_eq!(d.undo_cwnd(&tp), 40);
        // With α = 0 an ECN reduction keeps the whole window.
        let mut d = dctcp(&[("alpha_on_init", 0.0)]);
        tp.snd_cwnd = 100;
        assert_eq!(d.ssthresh(&tp), 100);
    }

    #[test]
    fn the_gain_is_a_parameter() {
        let mut d = dctcp(&[("shift_g", 1.0)]);
        let mut tp = TcpCcView::new(10, 1448);
        d.reset(&tp);
        window(&mut d, &mut tp, 10, 0);
        assert_eq!(d.alpha, 512);
        window(&mut d, &mut tp, 10, 10);
        assert_eq!(d.alpha, 256 + 512);
        // A small α decays to nothing rather than sticking at the shift's floor.
        let mut d = dctcp(&[("alpha_on_init", 10.0 / 1024.0)]);
        d.reset(&tp);
        window(&mut d, &mut tp, 10, 0);
        assert_eq!(d.alpha, 0);
    }
}
