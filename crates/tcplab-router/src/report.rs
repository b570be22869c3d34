//! The router's report: one JSON object per direction with what the pipe measured.

use serde_json::{json, Value};

use crate::hist::Histogram;
use crate::pipe::{Pipe, Stats};

fn percentiles_ns(h: &Histogram) -> Value {
    json!({
        "count": h.count(),
        "mean_ns": h.mean(),
        "p50_ns": h.quantile(0.5),
        "p99_ns": h.quantile(0.99),
        "p999_ns": h.quantile(0.999),
        "max_ns": h.max(),
    })
}

fn addr(a: u32) -> String {
    std::net::Ipv4Addr::from(a).to_string()
}

/// One direction: its configuration, counters, queue occupancy, sojourn and timer lateness.
pub fn direction(name: &str, pipe: &Pipe, stats: &Stats, realtime: bool) -> Value {
    let cfg = pipe.config();
    let (rate_now_bps, rate_changes) = pipe.rate();
    json!({
        "device": name,
        "rate_bps": cfg.rate_bps,
        "rate_schedule": cfg.rate_schedule,
        "rate_now_bps": rate_now_bps,
        "rate_changes": rate_changes,
        "delay_ns": cfg.delay_ns,
        "overhead_bytes": cfg.overhead_bytes,
        "slots": cfg.slots,
        "realtime": realtime,
        "received_pkts": stats.received_pkts,
        "received_bytes": stats.received_bytes,
        "forwarded_pkts": stats.forwarded_pkts,
        "dropped_pkts": stats.dropped_pkts,
        "early_drop_pkts": pipe.early_drop_pkts(),
        "marked_pkts": pipe.marked_pkts(),
        "overflow_pkts": stats.overflow_pkts,
        "write_errors": stats.write_errors,
        "max_pkts": stats.max_pkts,
        "max_bytes": stats.max_bytes,
        "mean_pkts": stats.mean_pkts(),
        "final_pkts": pipe.queued_pkts(),
        "in_flight_pkts": pipe.in_flight_pkts(),
        "sojourn": percentiles_ns(&stats.sojourn),
        "lateness": percentiles_ns(&stats.lateness),
        "stall_limit_ns": cfg.stall_ns,
        "stops_clock_on_stall": cfg.stop_clock_on_stall,
        "stalls": json!({"count": stats.stalls, "total_ns": stats.stalled_ns, "max_ns": stats.longest_stall_ns}),
        "sources": stats.sources.iter().map(|s| json!({
            "addr": addr(s.addr), "pkts": s.pkts, "bytes": s.bytes, "dropped": s.dropped, "marked": s.marked,
            "first_data_ns": s.first_data_ns,
        })).collect::<Vec<_>>(),
    })
}
