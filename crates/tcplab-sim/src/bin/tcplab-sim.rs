//! The engine on its own, without Python: run an engine spec (JSON, `docs/engine-spec.md`) and
//! print one JSON line with the totals and each flow's mean goodput over a window.
//!
//! ```text
//! tcplab-sim SPEC.json [--window START_S:END_S]
//! ```
//!
//! `python -c 'import tcplab, json; print(json.dumps(tcplab.load_scenario(F).to_engine_spec()))'`
//! lowers a scenario file to a spec. The benchmark uses this to time the simulator alone.

use std::process::ExitCode;

fn usage(msg: &str) -> ExitCode {
    eprintln!("tcplab-sim: error: {msg}\nusage: tcplab-sim SPEC.json [--window START_S:END_S]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, window) = match args.as_slice() {
        [p] => (p, None),
        [p, flag, w] if flag == "--window" => {
            let parsed = w.split_once(':').and_then(|(a, b)| Some((a.parse::<f64>().ok()?, b.parse::<f64>().ok()?)));
            match parsed {
                Some((a, b)) if a < b => (p, Some((a, b))),
                _ => return usage(&format!("--window = '{w}': expected START_S:END_S with START_S < END_S")),
            }
        }
        _ => return usage("expected a spec file"),
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return usage(&format!("spec = '{path}': {e}")),
    };
    let spec = match tcplab_sim::Spec::from_json(&text) {
        Ok(s) => s,
        Err(e) => return usage(&e.to_string()),
    };
    let t0 = std::time::Instant::now();
    let r = match tcplab_sim::simulate(&spec) {
        Ok(r) => r,
        Err(e) => return usage(&e.to_string()),
    };
    let sim_s = t0.elapsed().as_secs_f64();
    let (w0, w1) = window.unwrap_or((0.0, r.end_ns as f64 / 1e9));
    let mut line = serde_json::json!({
        "sim": "tcplab-engine", "transmissions": r.transmissions, "events": r.events, "sim_s": sim_s,
    });
    let mut means = vec![];
    for f in 0..r.flows.rows() as u32 {
        let t = r.series(f, "t_ns");
        let g = r.series(f, "goodput_bytes");
        // Intervals lying wholly inside the window (1 s intervals ending in (w0 + 1, w1]).
        let inside: Vec<f64> = t.iter().zip(&g).filter(|(t, _)| **t / 1e9 > w0 + 0.5 && **t / 1e9 <= w1 + 1e-9).map(|(_, g)| *g).collect();
        let mbps = inside.iter().sum::<f64>() * 8.0 / inside.len().max(1) as f64 / 1e6;
        line[format!("flow{}_mbps", f + 1)] = serde_json::json!(mbps);
        means.push(mbps);
    }
    let (s, q): (f64, f64) = (means.iter().sum(), means.iter().map(|x| x * x).sum());
    line["jfi"] = serde_json::json!(s * s / (means.len() as f64 * q));
    println!("{line}");
    ExitCode::SUCCESS
}
