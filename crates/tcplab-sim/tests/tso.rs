//! Linux's TSO/GSO sending (`tso`): new data leaves in bursts of about 1 ms of data at the
//! pacing rate (`tcp_tso_autosize`), and a sender with less cwnd room than a burst waits for the
//! next ACK (`tcp_tso_should_defer`).
//!
//! The reference is the testbed's kernel (Linux 6.18, TSO/GSO off on every veth: TCP still builds
//! GSO packets and the stack splits them). One flow, 100 Mb/s, 100 ms, 1-BDP buffer, the sender's
//! data segments captured with dumpcap 15–18 s into the run and split into bursts wherever two
//! are 20 µs or more apart (docs/validation.md):
//! - `reno` (unpaced): 2808 bursts, 97% of them 9 segments, one every 1.08 ms (median);
//! - `bbr` (paced): 3117 bursts, 8 segments in 70% (6 in 13%, 10 in 15%: its gain cycle's 3/4
//!   and 5/4 phases), one every 0.96 ms.

mod common;

use common::{bdp_pkts, dumbbell, run, MS, S};
use tcplab_sim::spec::{CaptureSpec, Spec, TcpSpec};

/// A Linux-like flow of `cc` (SACK, PRR, RACK-TLP) with or without `tso`, with the testbed's
/// 64 MB buffers.
fn linux_flow(cc: &str, tso: bool) -> TcpSpec {
    let mut t = TcpSpec::new(0, 1);
    t.cc = cc.into();
    t.rack = true;
    t.tso = tso;
    t.rwnd_bytes = 64 << 20;
    t.sndbuf_bytes = 64 << 20;
    t
}

/// One [`linux_flow`] over the kernel's path: 100 Mb/s, 100 ms, a 1-BDP buffer, its data
/// captured on the sender's access link.
fn one_flow(cc: &str, tso: bool) -> Spec {
    let t = linux_flow(cc, tso);
    let mut spec = dumbbell(100_000_000, 100 * MS, bdp_pkts(100_000_000, 100 * MS), vec![t], 18 * S);
    spec.capture = Some(CaptureSpec { flow: 0, links: vec![2] });
    spec
}

struct Bursts {
    /// Segments per burst.
    sizes: Vec<usize>,
    /// Median time from one burst's start to the next's, µs.
    median_spacing_us: f64,
}

/// The flow's data segments leaving the sender from 15 s on, split where two are ≥ 20 µs apart
/// (back to back at the 1 Gb/s access rate they are 12 µs apart).
fn bursts(spec: &Spec) -> Bursts {
    let r = run(spec);
    let cap = r.capture.as_ref().expect("capture");
    let (t, kind) = (cap.col("t_ns"), cap.col("kind"));
    let starts: Vec<f64> = (0..cap.rows()).filter(|&i| kind.get(i) == 0.0 && t.get(i) >= 15e9).map(|i| t.get(i)).collect();
    let mut sizes = vec![1];
    let mut burst_starts = vec![starts[0]];
    for w in starts.windows(2) {
        if w[1] - w[0] >= 20e3 {
            sizes.push(1);
            burst_starts.push(w[1]);
        } else {
            *sizes.last_mut().unwrap() += 1;
        }
    }
    let mut spacing: Vec<f64> = burst_starts.windows(2).map(|w| (w[1] - w[0]) / 1e3).collect();
    spacing.sort_by(f64::total_cmp);
    Bursts { sizes, median_spacing_us: spacing[spacing.len() / 2] }
}

fn share(sizes: &[usize], pred: impl Fn(usize) -> bool) -> f64 {
    sizes.iter().filter(|&&s| pred(s)).count() as f64 / sizes.len() as f64
}

#[test]
fn an_unpaced_flow_sends_bursts_of_a_millisecond_of_data_as_the_kernel_does() {
    let b = bursts(&one_flow("reno", true));
    // 120% of cwnd/srtt ≈ 107 Mb/s here: 2^-10 s of it is 9 segments, as the kernel sent.
    let nine = share(&b.sizes, |s| s == 9);
    assert!(nine > 0.85, "{nine} of bursts are 9 segments: {:?}", &b.sizes[..40]);
    assert!((900.0..1300.0).contains(&b.median_spacing_us), "median burst spacing {} µs", b.median_spacing_us);
    // Without it, each delayed ACK releases its two segments: no burst of 9.
    let b = bursts(&one_flow("reno", false));
    assert!(share(&b.sizes, |s| s <= 3) > 0.9, "{:?}", &b.sizes[..40]);
}

#[test]
fn bbr_paces_bursts_sized_by_its_gain_cycle_as_the_kernel_does() {
    let b = bursts(&one_flow("bbr", true));
    let eight = share(&b.sizes, |s| s == 8);
    let cycle = share(&b.sizes, |s| (6..=10).contains(&s));
    assert!(eight > 0.5 && cycle > 0.9, "8: {eight}, 6–10: {cycle}: {:?}", &b.sizes[..40]);
    assert!((800.0..1200.0).contains(&b.median_spacing_us), "median burst spacing {} µs", b.median_spacing_us);
    // Without it BBR paces one segment per slot.
    let b = bursts(&one_flow("bbr", false));
    assert!(share(&b.sizes, |s| s == 1) > 0.9, "{:?}", &b.sizes[..40]);
}

/// For every burst from 15 s on: how long after the last ACK to reach the sender (before the
/// burst) its first segment left, µs, sorted.
fn ack_to_burst_us(spec: &Spec) -> Vec<f64> {
    let mut spec = spec.clone();
    spec.capture = Some(CaptureSpec { flow: 0, links: vec![2, 3] }); // sender -> router, router -> sender
    let r = run(&spec);
    let cap = r.capture.as_ref().expect("capture");
    let (t, arrive, kind, link) = (cap.col("t_ns"), cap.col("arrive_ns"), cap.col("kind"), cap.col("link"));
    let mut acks: Vec<f64> = (0..cap.rows()).filter(|&i| link.get(i) == 3.0).map(|i| arrive.get(i)).collect();
    acks.sort_by(f64::total_cmp);
    let data: Vec<f64> = (0..cap.rows()).filter(|&i| link.get(i) == 2.0 && kind.get(i) == 0.0 && t.get(i) >= 15e9).map(|i| t.get(i)).collect();
    let mut out: Vec<f64> = data
        .windows(2)
        .filter(|w| w[1] - w[0] >= 20e3)
        .map(|w| {
            let k = acks.partition_point(|&a| a <= w[1]);
            (w[1] - acks[k - 1]) / 1e3
        })
        .collect();
    out.sort_by(f64::total_cmp);
    out
}

#[test]
fn host_jitter_delays_a_burst_as_a_whole() {
    // The testbed's hosts (docs/validation.md): a sender's GSO burst reaches the router 5–80 µs
    // after it leaves the sender's stack, its segments 0.75 µs apart: one delay per burst.
    let mut spec = one_flow("reno", true);
    spec.host_jitter_ns = 60_000;
    let b = bursts(&spec);
    let nine = share(&b.sizes, |s| s == 9);
    assert!(nine > 0.85, "the bursts stay whole: {nine} of them are 9 segments: {:?}", &b.sizes[..40]);
    assert!((900.0..1300.0).contains(&b.median_spacing_us), "median burst spacing {} µs", b.median_spacing_us);
    // Each burst leaves 0–60 µs after the ACK that released it, uniformly; without jitter at once.
    let d = ack_to_burst_us(&spec);
    let q = |p: f64| d[((d.len() - 1) as f64 * p) as usize];
    assert!((20.0..40.0).contains(&q(0.5)) && q(0.1) < 12.0 && (48.0..60.0).contains(&q(0.9)), "p10 {} p50 {} p90 {}", q(0.1), q(0.5), q(0.9));
    let d = ack_to_burst_us(&one_flow("reno", true));
    assert_eq!(d[d.len() * 9 / 10], 0.0, "without jitter a burst leaves as its ACK arrives");
}

#[test]
fn each_burst_ends_with_psh_and_the_receiver_acknowledges_it_at_once() {
    // The testbed's kernel (docs/tcp.md): the senders put PSH on the last segment of ~99% of
    // their bursts of two or more and almost nowhere else (never on a lone segment); the
    // receivers acknowledge a PSH segment at once (26% and 12% of their ACKs cover one segment,
    // each ending at a PSH segment).
    let mut spec = one_flow("reno", true);
    spec.capture = Some(CaptureSpec { flow: 0, links: vec![2, 4, 5] }); // sender →, → receiver, receiver →
    let r = run(&spec);
    let cap = r.capture.as_ref().expect("capture");
    let (t, arrive, kind, link, seq, ack, push) =
        (cap.col("t_ns"), cap.col("arrive_ns"), cap.col("kind"), cap.col("link"), cap.col("seq"), cap.col("ack"), cap.col("push"));
    let rows = |l: f64| (0..cap.rows()).filter(move |&i| link.get(i) == l && t.get(i) >= 15e9);
    // At the sender: PSH exactly on the last segment of each burst (the next one ≥ 20 µs later)
    // of two segments or more.
    let sent: Vec<usize> = rows(2.0).filter(|&i| kind.get(i) == 0.0).collect();
    let ends = sent.windows(2).filter(|w| t.get(w[1]) - t.get(w[0]) >= 20e3).count();
    assert!(ends > 2000, "{ends} bursts");
    let mut size = 0;
    for w in sent.windows(2) {
        size += 1;
        let end = t.get(w[1]) - t.get(w[0]) >= 20e3;
        assert_eq!(push.get(w[0]) == 1.0, end && size > 1, "PSH on the last segment of a burst of two or more only");
        if end {
            size = 0;
        }
    }
    // At the receiver: every in-order PSH segment is acknowledged as it arrives, so the 9-segment
    // bursts draw four two-segment ACKs and one one-segment ACK each.
    let mut acks: Vec<(f64, f64)> = rows(5.0).map(|i| (t.get(i), ack.get(i))).collect();
    acks.sort_by(|a, b| a.0.total_cmp(&b.0));
    let got: Vec<usize> = rows(4.0).filter(|&i| push.get(i) == 1.0).collect();
    let at_once = got
        .iter()
        .filter(|&&i| {
            let k = acks.partition_point(|&(ta, _)| ta < arrive.get(i));
            acks[k..].iter().take_while(|&&(ta, _)| ta == arrive.get(i)).any(|&(_, a)| a == seq.get(i) + 1.0)
        })
        .count();
    assert!(at_once as f64 > 0.99 * got.len() as f64, "{at_once} of {} PSH segments acknowledged at once", got.len());
    let one = acks.windows(2).filter(|w| w[1].1 - w[0].1 == 1.0).count() as f64 / (acks.len() - 1) as f64;
    assert!((0.15..0.25).contains(&one), "{one} of ACKs cover one segment");
    // A sender without `tso` sets no PSH, and its receiver keeps to every second segment.
    let mut spec = one_flow("reno", false);
    spec.capture = Some(CaptureSpec { flow: 0, links: vec![2] });
    let r = run(&spec);
    let cap = r.capture.as_ref().expect("capture");
    assert_eq!((0..cap.rows()).filter(|&i| cap.col("push").get(i) == 1.0).count(), 0);
}

#[test]
fn a_lone_segment_carries_no_psh_and_is_acknowledged_with_the_next() {
    // The testbed's kernel, SACK Reno next to BBR at 25 ms with a 1-BDP buffer, 40–60 s (both
    // directions captured at Reno's sender; docs/validation.md): Reno, at ~8 Mb/s, sends pairs
    // and some lone segments (14% of its bursts). No lone segment carries PSH (0 of 995; 55 of
    // 3,460 in the 25 ms runs against CUBIC), so the receiver holds it for the next: 1.2% of
    // them get an ACK of their own, and the one-segment ACKs end at a pair's PSH segment (98%),
    // never two in a row. With PSH on lone segments too, 95% of them were ACKed alone and went
    // on as lone segments round after round.
    let mut reno = TcpSpec::new(0, 2);
    reno.cc = "reno".into();
    let mut bbr = TcpSpec::new(1, 3);
    bbr.cc = "bbr".into();
    bbr.start_ns = 30 * S;
    for t in [&mut reno, &mut bbr] {
        t.rack = true;
        t.tso = true;
        t.sack_compression = true;
        t.rwnd_bytes = 64 << 20;
        t.sndbuf_bytes = 64 << 20;
    }
    let mut spec = dumbbell(100_000_000, 25 * MS, bdp_pkts(100_000_000, 25 * MS), vec![reno, bbr], 50 * S);
    spec.capture = Some(CaptureSpec { flow: 0, links: vec![2, 3] }); // Reno's data out, its ACKs in
    let r = run(&spec);
    let cap = r.capture.as_ref().expect("capture");
    let (t, arrive, kind, link, seq, ack, push, n_sack) =
        (cap.col("t_ns"), cap.col("arrive_ns"), cap.col("kind"), cap.col("link"), cap.col("seq"), cap.col("ack"), cap.col("push"), cap.col("n_sack"));
    let sent: Vec<usize> = (0..cap.rows()).filter(|&i| link.get(i) == 2.0 && kind.get(i) == 0.0 && t.get(i) >= 40e9).collect();
    // Lone segments: ≥ 20 µs from both neighbours.
    let lone: Vec<usize> = sent.windows(3).filter(|w| t.get(w[1]) - t.get(w[0]) >= 20e3 && t.get(w[2]) - t.get(w[1]) >= 20e3).map(|w| w[1]).collect();
    assert!(lone.len() > 100, "{} lone segments", lone.len());
    assert!(lone.iter().all(|&i| push.get(i) == 0.0), "a lone segment with PSH");
    // The ACKs reaching the sender, in order: cumulative ACK advances without SACK blocks.
    let mut acks: Vec<(f64, f64)> = (0..cap.rows()).filter(|&i| link.get(i) == 3.0 && t.get(i) >= 40e9 && n_sack.get(i) == 0.0).map(|i| (arrive.get(i), ack.get(i))).collect();
    acks.sort_by(|a, b| a.0.total_cmp(&b.0));
    let steps: Vec<f64> = acks.windows(2).map(|w| w[1].1 - w[0].1).filter(|&d| d > 0.0).collect();
    // A lone segment's first ACK ends at it (an ACK of its own) rarely.
    let own = lone.iter().filter(|&&i| acks.iter().find(|&&(ta, a)| ta > t.get(i) && a > seq.get(i)).is_some_and(|&(_, a)| a == seq.get(i) + 1.0)).count();
    assert!((own as f64) < 0.35 * lone.len() as f64, "{own} of {} lone segments acknowledged alone", lone.len());
    let ones = steps.iter().filter(|&&d| d == 1.0).count();
    let runs = steps.windows(2).filter(|w| w[0] == 1.0 && w[1] == 1.0).count();
    assert!((runs as f64) < 0.05 * ones as f64, "{runs} of {ones} one-segment ACKs follow another");
}

#[test]
fn slow_start_bursts_follow_the_write_queues_skbs_as_the_kernels_do() {
    // Linux queues the application's data in skbs of `tcp_xmit_size_goal`: 64 KB or half the
    // largest window offered, 45 segments of 1448 bytes here. A burst never spans two; a head skb
    // shorter than the burst it may send takes data from the next (`tcp_grow_skb`, Linux ≥ 6.10);
    // a head skb whose rest fits goes at once, without waiting for the next ACK
    // (`tcp_tso_should_defer`). The testbed's kernel, Reno alone at 400 ms / 1 BDP, in the last
    // two rounds of its slow start (docs/validation.md): one burst in five of 8, 10 or 12
    // segments (97 of 484), half of them (50-55%) ending at the same segment number modulo 45.
    let t = linux_flow("reno", true);
    let mut spec = dumbbell(100_000_000, 400 * MS, bdp_pkts(100_000_000, 400 * MS), vec![t], 8 * S);
    spec.capture = Some(CaptureSpec { flow: 0, links: vec![2] });
    let r = run(&spec);
    let cap = r.capture.as_ref().expect("capture");
    let (t, kind, seq, retrans) = (cap.col("t_ns"), cap.col("kind"), cap.col("seq"), cap.col("retrans"));
    let data: Vec<usize> = (0..cap.rows()).filter(|&i| kind.get(i) == 0.0).collect();
    let first_retrans = data.iter().position(|&i| retrans.get(i) == 1.0).expect("slow start overflows the queue");
    let slow_start = &data[..first_retrans];
    // Bursts (segments less than 20 µs apart) as (first segment's row, size).
    let mut bursts: Vec<(usize, usize)> = vec![(slow_start[0], 1)];
    for w in slow_start.windows(2) {
        if t.get(w[1]) - t.get(w[0]) >= 20e3 {
            bursts.push((w[1], 1));
        } else {
            bursts.last_mut().unwrap().1 += 1;
        }
    }
    // The last two rounds: bursts starting at segments 6,700-13,300 (the window doubles from one
    // BDP to two; the queue overflows at the end).
    let last: Vec<(usize, usize)> = bursts.into_iter().filter(|&(i, _)| (6_700.0..13_300.0).contains(&seq.get(i))).collect();
    let mean = last.iter().map(|b| b.1).sum::<usize>() as f64 / last.len() as f64;
    // Where the bursts of 8, 10 or 12 end, modulo 45 segments.
    let mut ends = [0usize; 45];
    for &(i, n) in &last {
        if [8, 10, 12].contains(&n) {
            ends[(seq.get(i) as usize + n) % 45] += 1;
        }
    }
    let small: usize = ends.iter().sum();
    let commonest = *ends.iter().max().unwrap();
    let report = format!("{} bursts, mean {mean:.2} segments, {small} of 8, 10 or 12, {commonest} of those ending at one place modulo 45", last.len());
    // The simulator: 443 bursts, mean 14.9, 62 of 8/10/12, 19 of them at one place (the data
    // taken as one stream: 407 bursts, mean 16.2, none of 8, 10 or 12).
    assert!((12.5..15.5).contains(&mean), "{report}");
    assert!(small as f64 > 0.08 * last.len() as f64, "{report}");
    assert!(commonest as f64 >= 0.25 * small as f64, "{report}");
}
