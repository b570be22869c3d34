//! The receive window with Linux's receive-buffer autotuning (`rcvbuf_autotuning`): what the
//! receiver advertises limits what the sender has in flight.

mod common;

use tcplab_sim::spec::TcpSpec;

use common::*;

/// One SACK Reno flow alone on 100 Mb/s at 100 ms (1 BDP of buffer), its receiver's buffer
/// capped at `rwnd_bytes`.
fn window_limited(rwnd_bytes: u64, autotuning: bool) -> f64 {
    window_limited_ts(rwnd_bytes, autotuning, true)
}

fn window_limited_ts(rwnd_bytes: u64, autotuning: bool, timestamps: bool) -> f64 {
    let mut t = TcpSpec::new(0, 1);
    t.rwnd_bytes = rwnd_bytes;
    t.rcvbuf_autotuning = autotuning;
    t.timestamps = timestamps;
    t.sack_compression = true;
    let r = run(&dumbbell(100_000_000, 100 * MS, bdp_pkts(100_000_000, 100 * MS), vec![t], 20 * S));
    mean_mbps(&r, 0, 5, 20)
}

#[test]
fn linux_advertises_its_buffer_less_the_per_packet_overhead() {
    // A fixed window of 256 KB: 181 whole segments a round trip, 20.97 Mb/s.
    let fixed = window_limited(256 << 10, false);
    assert!((fixed / 20.97 - 1.0).abs() < 0.01, "{fixed}");
    // Linux offers 160/256 of a 256 KB buffer: 163840 B, 113 whole segments, 13.09 Mb/s; the
    // buffer starts at 128 KB and has grown to its cap long before 5 s.
    let tuned = window_limited(256 << 10, true);
    assert!((tuned / 13.09 - 1.0).abs() < 0.01, "{tuned}");
}

#[test]
fn a_large_buffer_does_not_limit_the_flow() {
    // 64 MB, as the fidelity experiments: the window opens ahead of cwnd, so the flow fills the
    // path (a 1-BDP buffer: no loss after slow start's).
    let tuned = window_limited(64 << 20, true);
    let fixed = window_limited(64 << 20, false);
    assert!(tuned > 90.0 && (tuned / fixed - 1.0).abs() < 0.02, "{tuned} {fixed}");
}

#[test]
fn without_timestamps_the_receiver_times_whole_windows() {
    // No timestamps, so no RTT from their echoes: Linux times how long the receiver takes to get
    // one advertised window (`tcp_rcv_rtt_measure`), which is one round trip while the sender is
    // held by that window, and the buffer grows from that. Without it the window would stay at
    // 81920 B (56 segments a round trip: 6.5 Mb/s).
    let tuned = window_limited_ts(64 << 20, true, false);
    assert!(tuned > 90.0, "{tuned}");
}
