//! `tcplab-router`: run in the testbed's router namespace. Creates two TUN devices (forward and
//! reverse), prints `ready` on stdout once they exist, and from then on applies the bottleneck to
//! every packet read from each: queue (the simulator's discipline), serialisation at the rate,
//! one-way delay, then writes it back to the same device for normal forwarding.
//!
//! ```text
//! tcplab-router --fwd tcplab-fwd --rev tcplab-rev --rate-bps 100000000 --delay-ns 25000000 \
//!               --queue '{"kind":"droptail","limit_pkts":417}' --report /tmp/report.json
//! ```
//!
//! `--pcap-fwd FILE` also writes the forward direction's arrivals, as the queue sees them, to a
//! pcap file (`capture`). SIGUSR1 writes the report so far; SIGINT/SIGTERM stop both directions, write the final report
//! and exit 0. One thread per direction, SCHED_FIFO when permitted, sleeping on a timerfd armed at
//! the next absolute deadline while polling the TUN device: no busy-waiting.
//!
//! `--rate-schedule JSON` changes the rate over the run: `[[offset_ns, rate_bps], ...]` from the
//! run's start, which SIGUSR2 marks (the router answers `started NS` on stdout, NS its
//! CLOCK_MONOTONIC time of the start); both directions follow it unless `--rev-rate-bps` is given.
//! A rate of 0 takes the link down until the next step (the next packet waits at the transmitter).
//! `--rate-schedule @FILE` reads the list from FILE.
//!
//! A wake-up more than `--stall-us` (default 1000; 0: none) late is a stall, counted in the report;
//! with `--stop-clock-on-stall` the pipe's clock stops for it (`pipe`; docs/testbed.md, "Stalls").

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;

use serde_json::{json, Value};
use tcplab_router::capture::Capture;
use tcplab_router::pipe::{Pipe, PipeConfig, SLOT_BYTES};
use tcplab_router::report;
use tcplab_router::sys::{self, Signal, Signals, Timer, Tun};
use tcplab_sim::spec::{check_rate_schedule, QueueSpec};

const USAGE: &str = "usage: tcplab-router --fwd DEV --rev DEV --rate-bps N [--rate-schedule JSON|@FILE] [--rev-rate-bps N] --delay-ns N [--rev-delay-ns N] \
--queue JSON [--overhead-bytes N] [--slots N] [--rt-priority N] [--no-realtime] [--stall-us N] [--stop-clock-on-stall] [--seed N] [--report FILE] [--pcap-fwd FILE]";

/// Longest sleep without checking for a stop or report request.
const MAX_SLEEP_MS: i32 = 50;
/// Packets read per wake before servicing the delay line (bounds the time between services).
const READ_BATCH: usize = 64;
/// Lateness (µs) beyond which a wake-up is a stall: the lateness a valid run's p99.9 may reach
/// (tcplab.testbed.experiment.LATENESS_LIMIT_NS).
const DEFAULT_STALL_US: u64 = 1_000;

struct Args {
    fwd: String,
    rev: String,
    fwd_cfg: PipeConfig,
    rev_cfg: PipeConfig,
    rt_priority: Option<i32>,
    report: Option<String>,
    pcap_fwd: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let (mut fwd, mut rev, mut queue) = (None, None, None);
    let (mut rate, mut rev_rate, mut delay, mut rev_delay) = (None, None, None, None);
    let (mut overhead, mut slots, mut rt, mut report, mut pcap_fwd) = (0u32, 32_768usize, Some(50), None, None);
    let (mut stall_us, mut stop_clock_on_stall, mut seed) = (DEFAULT_STALL_US, false, 1u64);
    let mut schedule: Vec<(u64, u64)> = Vec::new();
    fn num<T: std::str::FromStr>(flag: &str, v: Option<String>) -> Result<T, String> {
        let v = v.ok_or_else(|| format!("{flag} needs a value"))?;
        v.parse().map_err(|_| format!("{flag}: '{v}' is not a non-negative integer"))
    }
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--fwd" => fwd = it.next(),
            "--rev" => rev = it.next(),
            "--rate-bps" => rate = Some(num::<u64>(&flag, it.next())?),
            "--rev-rate-bps" => rev_rate = Some(num::<u64>(&flag, it.next())?),
            "--rate-schedule" => {
                let arg = it.next().ok_or("--rate-schedule needs a value")?;
                // `@FILE`: the list is in FILE (a long schedule outgrows an argument's 128 KiB).
                let text = match arg.strip_prefix('@') {
                    Some(path) => std::fs::read_to_string(path).map_err(|e| format!("--rate-schedule: cannot read '{path}' ({e})"))?,
                    None => arg,
                };
                let shown: String = text.chars().take(80).collect();
                schedule = serde_json::from_str(&text).map_err(|e| format!("--rate-schedule: '{shown}' is not a list of [offset_ns, rate_bps] ({e})"))?;
                check_rate_schedule(&schedule, "--rate-schedule").map_err(|e| e.to_string())?;
            }
            "--delay-ns" => delay = Some(num::<u64>(&flag, it.next())?),
            "--rev-delay-ns" => rev_delay = Some(num::<u64>(&flag, it.next())?),
            "--overhead-bytes" => overhead = num(&flag, it.next())?,
            "--slots" => slots = num(&flag, it.next())?,
            "--rt-priority" => rt = Some(num(&flag, it.next())?),
            "--no-realtime" => rt = None,
            "--stall-us" => stall_us = num(&flag, it.next())?,
            "--stop-clock-on-stall" => stop_clock_on_stall = true,
            "--seed" => seed = num(&flag, it.next())?,
            "--report" => report = it.next(),
            "--pcap-fwd" => pcap_fwd = Some(it.next().ok_or("--pcap-fwd needs a file")?),
            "--queue" => {
                let text = it.next().ok_or("--queue needs a value")?;
                let spec: QueueSpec = serde_json::from_str(&text).map_err(|e| format!("--queue: '{text}' is not a queue spec ({e})"))?;
                queue = Some(spec);
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    let rate = rate.ok_or("--rate-bps is required")?;
    let delay = delay.ok_or("--delay-ns is required")?;
    let queue = queue.ok_or("--queue is required")?;
    if rate == 0 || rev_rate == Some(0) {
        return Err("rates must be positive".into());
    }
    if slots == 0 {
        return Err("--slots must be positive".into());
    }
    let stall_ns = (stall_us > 0).then(|| stall_us * 1_000);
    let cfg = |rate_bps, rate_schedule, delay_ns, stream| PipeConfig { rate_bps, rate_schedule, delay_ns, overhead_bytes: overhead, queue: queue.clone(), seed, stream, slots, stall_ns, stop_clock_on_stall };
    let rev_schedule = if rev_rate.is_some() { Vec::new() } else { schedule.clone() };
    Ok(Args {
        fwd: fwd.ok_or("--fwd is required")?,
        rev: rev.ok_or("--rev is required")?,
        fwd_cfg: cfg(rate, schedule, delay, 0),
        rev_cfg: cfg(rev_rate.unwrap_or(rate), rev_schedule, rev_delay.unwrap_or(delay), 1),
        rt_priority: rt,
        report,
        pcap_fwd,
    })
}

/// What a direction's thread shares with the main thread.
struct Control {
    stop: AtomicBool,
    /// Bumped by the main thread to ask for a report; each direction answers once per bump.
    report_gen: AtomicU64,
    /// The run's start (CLOCK_MONOTONIC ns) once SIGUSR2 marked it; 0 before.
    started_ns: AtomicU64,
}

/// One direction's loop; returns its final report.
fn run_direction(
    mut tun: Tun,
    mut pipe: Pipe,
    mut capture: Option<Capture>,
    rt_priority: Option<i32>,
    control: Arc<Control>,
    reports: mpsc::Sender<Value>,
) -> Result<Value, String> {
    let realtime = match rt_priority {
        Some(p) => match sys::set_fifo(p) {
            Ok(()) => true,
            Err(e) => {
                eprintln!("tcplab-router: {}: SCHED_FIFO not permitted ({e}); running at normal priority", tun.name);
                false
            }
        },
        None => false,
    };
    let mut timer = Timer::new().map_err(|e| format!("timerfd: {e}"))?;
    let mut scratch = vec![0u8; SLOT_BYTES];
    let mut seen_gen = 0;
    let name = tun.name.clone();
    while !control.stop.load(Ordering::Relaxed) {
        let started = control.started_ns.load(Ordering::Relaxed);
        if started != 0 {
            pipe.start_schedule(started);
        }
        let gen = control.report_gen.load(Ordering::Relaxed);
        if gen != seen_gen {
            seen_gen = gen;
            let _ = reports.send(report::direction(&name, &pipe, &pipe.stats, realtime));
        }
        timer.set(pipe.next_deadline()).map_err(|e| format!("timerfd_settime: {e}"))?;
        let [_, fired] = sys::poll_readable([tun.fd(), timer.fd()], MAX_SLEEP_MS).map_err(|e| format!("poll: {e}"))?;
        if fired {
            timer.clear();
        }
        for _ in 0..READ_BATCH {
            let got = match pipe.free_slot() {
                Some((slot, buf)) => tun.recv(buf).map(|n| Some((slot, n))),
                None => tun.recv(&mut scratch).map(|n| {
                    pipe.overflow(n);
                    None
                }),
            };
            match got {
                Ok(Some((slot, n))) => {
                    let now = sys::now_ns();
                    if let Some(c) = capture.as_mut() {
                        c.record(now, pipe.slot_bytes(slot, n)).map_err(|e| format!("{name}: --pcap-fwd: {e}"))?;
                    }
                    pipe.arrive(slot, n, now);
                }
                Ok(None) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("{name}: read: {e}")),
            }
        }
        let now = sys::now_ns();
        pipe.service(now, |packet| tun.send(packet).is_ok());
    }
    if let Some(c) = capture {
        c.finish().map_err(|e| format!("{name}: --pcap-fwd: {e}"))?;
    }
    Ok(report::direction(&name, &pipe, &pipe.stats, realtime))
}

fn write_report(path: Option<&str>, directions: &[Value]) -> Result<(), String> {
    let value = json!({ "version": env!("CARGO_PKG_VERSION"), "directions": directions });
    let text = serde_json::to_string_pretty(&value).expect("a JSON value serialises");
    match path {
        Some(path) => {
            // Write beside the target and rename, so a reader never sees half a report.
            let tmp = format!("{path}.tmp");
            std::fs::write(&tmp, text + "\n").map_err(|e| format!("{tmp}: {e}"))?;
            std::fs::rename(&tmp, path).map_err(|e| format!("{path}: {e}"))
        }
        None => {
            println!("{text}");
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(msg) => {
            if !msg.is_empty() {
                eprintln!("tcplab-router: error: {msg}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    // Block the signals before any thread exists, so that only the signalfd sees them.
    let mut signals = match Signals::block() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("tcplab-router: error: signalfd: {e}");
            return ExitCode::from(1);
        }
    };
    if let Err(e) = sys::lock_memory() {
        eprintln!("tcplab-router: mlockall not permitted ({e}); pages may fault on the packet path");
    }
    let mut tuns = Vec::new();
    for name in [&args.fwd, &args.rev] {
        match Tun::open(name) {
            Ok(t) => tuns.push(t),
            Err(e) => {
                eprintln!("tcplab-router: error: cannot create TUN device '{name}': {e} (needs root or CAP_NET_ADMIN and /dev/net/tun)");
                return ExitCode::from(1);
            }
        }
    }
    let capture = match args.pcap_fwd.as_deref().map(Capture::create).transpose() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("tcplab-router: error: --pcap-fwd {}: {e}", args.pcap_fwd.as_deref().unwrap_or_default());
            return ExitCode::from(1);
        }
    };
    let control = Arc::new(Control { stop: AtomicBool::new(false), report_gen: AtomicU64::new(0), started_ns: AtomicU64::new(0) });
    let (tx, rx) = mpsc::channel();
    let rev_tun = tuns.pop().expect("two devices");
    let fwd_tun = tuns.pop().expect("two devices");
    let mut workers = Vec::new();
    for (tun, cfg, capture) in [(fwd_tun, args.fwd_cfg.clone(), capture), (rev_tun, args.rev_cfg.clone(), None)] {
        let (control, tx, rt) = (control.clone(), tx.clone(), args.rt_priority);
        let name = tun.name.clone();
        let handle = thread::Builder::new()
            .name(name)
            .spawn(move || run_direction(tun, Pipe::new(cfg), capture, rt, control, tx))
            .expect("spawn a thread");
        workers.push(handle);
    }
    println!("ready");
    let mut failed = false;
    loop {
        match signals.wait(200) {
            Ok(Some(Signal::Stop)) => break,
            Ok(Some(Signal::Start)) => {
                // Once: a second SIGUSR2 is answered with the first start.
                let now = sys::now_ns();
                let started = control.started_ns.compare_exchange(0, now, Ordering::Relaxed, Ordering::Relaxed).map_or_else(|first| first, |_| now);
                println!("started {started}");
            }
            Ok(Some(Signal::Report)) => {
                control.report_gen.fetch_add(1, Ordering::Relaxed);
                let got: Vec<Value> = (0..workers.len()).filter_map(|_| rx.recv_timeout(std::time::Duration::from_secs(1)).ok()).collect();
                let mut sorted = got;
                sorted.sort_by_key(|v| (v["device"].as_str() != Some(args.fwd.as_str())) as u8);
                if let Err(e) = write_report(args.report.as_deref(), &sorted) {
                    eprintln!("tcplab-router: error: report: {e}");
                }
            }
            Ok(None) => {
                if workers.iter().any(|w| w.is_finished()) {
                    failed = true; // a direction stopped on its own: an error, reported below
                    break;
                }
            }
            Err(e) => {
                eprintln!("tcplab-router: error: signalfd: {e}");
                failed = true;
                break;
            }
        }
    }
    control.stop.store(true, Ordering::Relaxed);
    let mut finals = Vec::new();
    for w in workers {
        match w.join() {
            Ok(Ok(v)) => finals.push(v),
            Ok(Err(msg)) => {
                eprintln!("tcplab-router: error: {msg}");
                failed = true;
            }
            Err(_) => failed = true,
        }
    }
    if let Err(e) = write_report(args.report.as_deref(), &finals) {
        eprintln!("tcplab-router: error: report: {e}");
        failed = true;
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
