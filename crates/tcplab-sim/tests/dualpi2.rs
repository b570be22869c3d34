//! DualPI2 (RFC 9332, Linux `sch_dualpi2`) end to end, on a 100 Mb/s, 20 ms dumbbell: a scalable
//! flow sending ECT(1) (DCTCP) and a classic one (CUBIC, no ECN) beside it.
//!
//! - With a scalable response as RFC 9332 models it (α each window's marked fraction), the
//!   coupling k = 2 makes the windows about equal, so the rates split by the round trips: the L4S
//!   flow waits about the step's millisecond, the classic one about PI2's 15-ms target.
//! - Linux's DCTCP keeps α in 1/1024 with the gain 1/16, and a decay that takes all of an α
//!   below 16/1024: while a window's marked fraction stays under a quarter α stays at a
//!   sixteenth of it, so it cuts its window a sixteenth as much and takes most of the link.
//! - DCTCP sending ECT(0) is a classic flow to DualPI2: the square of PI2's probability is far
//!   below the marking its response needs.
//! - FQ-CoDel's L4S set-up: a step threshold for ECT(1) packets only (`ce_threshold_selector`).

use tcplab_sim::spec::{Dualpi2Spec, FqCodelSpec, QueueSpec, Recovery, TcpSpec};

mod common;
use common::*;

/// A Linux-like flow (SACK, PRR, RACK, Linux's ACKs, TSO) of `cc`, with ECN when `ecn`.
fn flow(pair: u32, cc: &str, ecn: bool) -> TcpSpec {
    let mut t = pair_flow(pair, 2, cc, 0);
    (t.recovery, t.prr, t.rack, t.undo, t.sack_compression, t.tso, t.ecn) = (Recovery::Sack, true, true, true, true, true, ecn);
    t
}

/// DCTCP sending ECT(1), with `shift_g` (Linux's 4, or 0: α is each window's marked fraction).
fn l4s_dctcp(shift_g: f64) -> TcpSpec {
    let mut t = flow(0, "dctcp", true);
    t.ect1 = true;
    t.cc_params.insert("shift_g".into(), shift_g);
    t
}

struct Pair {
    mbps: [f64; 2],
    /// Median one-way delays, ms (10 of them propagation).
    owd_ms: [f64; 2],
    marked: f64,
    /// The L4S flow's mean α over 10–60 s (NaN unless DCTCP).
    alpha: f64,
}

/// `l` and a CUBIC flow without ECN through DualPI2 for 60 s; rates over 10–60 s.
fn pair(l: TcpSpec) -> Pair {
    let queue = QueueSpec::Dualpi2 { limit_pkts: Some(1000), limit_bytes: None, dualpi2: Dualpi2Spec::default() };
    let r = run(&with_queue(dumbbell(100_000_000, 20 * MS, 1000, vec![l, flow(1, "cubic", false)], 60 * S), queue));
    let p = Pair {
        mbps: [mean_mbps(&r, 0, 10, 60), mean_mbps(&r, 1, 10, 60)],
        owd_ms: [r.flow(0, "owd_p50_ns") / 1e6, r.flow(1, "owd_p50_ns") / 1e6],
        marked: r.flow(0, "marked_pkts") / r.flow(0, "sent_pkts"),
        alpha: r.series(0, "dctcp_alpha")[10..60].iter().sum::<f64>() / 50.0,
    };
    println!(
        "{:.2} / {:.2} Mb/s, owd p50 {:.2} / {:.2} ms, {:.1}% of the first flow's packets marked, mean alpha {:.4}",
        p.mbps[0],
        p.mbps[1],
        p.owd_ms[0],
        p.owd_ms[1],
        100.0 * p.marked,
        p.alpha
    );
    for f in 0..2 {
        assert_eq!(r.flow(f, "sent_pkts"), r.flow(f, "delivered_pkts") + r.flow(f, "dropped_pkts") + r.flow(f, "in_flight_pkts"), "conservation, flow {f}");
    }
    p
}

/// RFC 9332 §2.1 and Appendix A: a scalable window 2/p_L against Reno's 1.22/√p_C, with
/// p_L = 2p′ and p_C = p′², makes the L4S window 0.82 of the classic one; with the round trips
/// here (20 + ~0.5 ms against 20 + ~13 ms) the L4S flow's rate is about 1.3 times CUBIC's.
/// Measured: 56.72 / 39.79 Mb/s, delays 10.22 / 22.54 ms.
#[test]
fn dualpi2_couples_a_scalable_flow_to_a_classic_one_as_rfc_9332_predicts() {
    let p = pair(l4s_dctcp(0.0));
    let ratio = p.mbps[0] / p.mbps[1];
    assert!((1.0..1.7).contains(&ratio), "L4S / classic rate {ratio:.2}: {:?}", p.mbps);
    assert!(p.mbps[0] + p.mbps[1] > 0.9 * goodput_ceiling_mbps(100_000_000), "{:?}", p.mbps);
    assert!(p.owd_ms[0] < 10.0 + 2.0, "the L4S flow's packets wait about the step: {:?}", p.owd_ms);
    assert!(p.owd_ms[1] > 10.0 + 8.0 && p.owd_ms[1] < 10.0 + 20.0, "the classic flow's wait PI2's target: {:?}", p.owd_ms);
}

/// Linux's DCTCP (`shift_g` 4): about 7% of its packets come back marked, yet α stays at a few
/// 1/1024 (64 times the fraction, rounded down, each window: a sixteenth of the fraction, where
/// with `shift_g` 0 it is the fraction) and it takes about four times CUBIC's rate. Measured:
/// 78.37 / 18.15 Mb/s, 7.0% marked, mean α 0.0046 (with `shift_g` 0: 1.6% marked, α 0.0133).
#[test]
fn linux_dctcps_alpha_cannot_rise_from_a_low_marked_fraction() {
    let p = pair(l4s_dctcp(4.0));
    assert!(p.mbps[0] > 3.0 * p.mbps[1], "{:?}", p.mbps);
    assert!(p.marked > 0.03 && p.marked < 0.25, "marked {:.3}", p.marked);
    assert!(p.alpha < p.marked / 8.0, "mean alpha {:.4}, marked {:.3}", p.alpha, p.marked);
    assert!(p.owd_ms[0] < 10.0 + 2.0, "{:?}", p.owd_ms);
}

/// DCTCP sending ECT(0) goes to the classic queue with CUBIC, and waits as CUBIC does; PI2's
/// p′² is far below what its response needs, so it takes most of the link.
#[test]
fn dctcp_sending_ect0_is_classic_to_dualpi2() {
    let p = pair(flow(0, "dctcp", true));
    assert!(p.mbps[0] > 2.0 * p.mbps[1], "{:?}", p.mbps);
    assert!(p.owd_ms[0] > 10.0 + 8.0, "{:?}", p.owd_ms);
}

/// FQ-CoDel's L4S set-up (Linux ≥ 5.16: `ce_threshold 1ms ce_threshold_selector 0x1/0x1`): the
/// 1-ms step marks only ECT(1) and CE, so a classic ECN flow (CUBIC, ECT(0)) in its own queue
/// answers CoDel's 5-ms law alone. Without the selector the step marks CUBIC's packets too,
/// each marked window costs it 30%, and the pair leaves part of the link idle. Measured: 47.73 /
/// 47.97 Mb/s with the selector, 54.53 / 31.60 without.
#[test]
fn fq_codels_ce_threshold_selector_keeps_the_step_to_l4s_packets() {
    let run_with = |selector: u8, mask: u8| {
        let fq = FqCodelSpec { ce_threshold_ns: Some(MS), ce_threshold_selector: selector, ce_threshold_mask: mask, ..FqCodelSpec::default() };
        let queue = QueueSpec::FqCodel { limit_pkts: Some(1000), limit_bytes: None, fq_codel: fq };
        let r = run(&with_queue(dumbbell(100_000_000, 20 * MS, 1000, vec![l4s_dctcp(4.0), flow(1, "cubic", true)], 60 * S), queue));
        let x = [mean_mbps(&r, 0, 10, 60), mean_mbps(&r, 1, 10, 60)];
        println!("selector {selector:#x}/{mask:#x}: {:.2} / {:.2} Mb/s, CUBIC's packets marked {}", x[0], x[1], r.flow(1, "marked_pkts"));
        x
    };
    let (picked, all) = (run_with(0x1, 0x1), run_with(0, 0));
    assert!(jain(&picked) > 0.99 && picked[0] + picked[1] > 0.95 * goodput_ceiling_mbps(100_000_000), "{picked:?}");
    assert!(all[1] < 0.75 * all[0] && all[0] + all[1] < 0.92 * goodput_ceiling_mbps(100_000_000), "{all:?}");
}
