//! Run an engine spec (JSON file) and print a per-flow summary: `cargo run --release --example
//! run_spec -- spec.json`.

fn main() {
    let path = std::env::args().nth(1).expect("usage: run_spec SPEC.json");
    let text = std::fs::read_to_string(&path).expect("readable spec");
    let spec = tcplab_sim::Spec::from_json(&text).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let t0 = std::time::Instant::now();
    let r = tcplab_sim::simulate(&spec).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let wall = t0.elapsed().as_secs_f64();
    println!("wall {wall:.3} s, {} transmissions ({:.2} M/s), {} events", r.transmissions, r.transmissions as f64 / wall / 1e6, r.events);
    for f in 0..r.flows.rows() as u32 {
        let g = r.series(f, "goodput_bytes");
        println!(
            "flow {f}: sent {} retrans {} dropped {} delivered {} in-flight {} rto {} recoveries {} goodput {:.2} Mb/s (last 10 intervals {:.2})",
            r.flow(f, "sent_pkts"), r.flow(f, "retrans_pkts"), r.flow(f, "dropped_pkts"), r.flow(f, "delivered_pkts"),
            r.flow(f, "in_flight_pkts"), r.flow(f, "rto_count"), r.flow(f, "recoveries"),
            r.flow(f, "goodput_bytes") * 8.0 / r.end_ns as f64 * 1e3,
            g.iter().rev().take(10).sum::<f64>() * 8.0 / 10.0 / 1e6,
        );
    }
    if std::env::var("TRACE").is_ok() {
        for f in 0..r.flows.rows() as u32 {
            let (g, c, s, rt) = (r.series(f, "goodput_bytes"), r.series(f, "cwnd_bytes"), r.series(f, "ssthresh_bytes"), r.series(f, "retrans_pkts"));
            for k in 0..g.len() {
                println!("f{f} t{k} goodput {:.1} Mb/s cwnd {:.0} ssthresh {:.0} retrans {}", g[k] * 8e-6, c[k] / 1448.0, s[k] / 1448.0, rt[k]);
            }
        }
    }
}
