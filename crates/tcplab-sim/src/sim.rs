//! The simulation: owns the whole world (no globals), runs the event loop, measures.

use crate::capture::Capture;
use crate::engine::{self, Event, EventQueue};
use crate::error::SpecError;
use crate::ids::{FlowId, LinkId, NodeId};
use crate::net::packet::{Kind, Packet};
use crate::net::queue::{Queue, QueueDisc};
use crate::net::{Link, LinkStats, Routes};
use crate::result::{Column, SimResult, Table};
use crate::rng::{Rng, Stream};
use crate::spec::{FlowSpec, Spec};
use crate::time::{tx_time_ns, Nanos};
use crate::transport::dccp::{Ccid2Sender, DccpReceiver};
use crate::transport::tcp::{TcpReceiver, TcpSender};
use crate::transport::udp::cbr::{CbrSink, CbrSource};
use crate::transport::TimerSlot;
use std::collections::VecDeque;

/// A flow's two ends.
#[derive(Debug)]
enum Endpoints {
    Tcp { sender: TcpSender, receiver: TcpReceiver },
    Cbr { source: CbrSource, sink: CbrSink },
    Dccp { sender: Ccid2Sender, receiver: DccpReceiver },
}

#[derive(Debug)]
struct Flow {
    src: NodeId,
    dst: NodeId,
    ends: Endpoints,
    /// Data packets (TCP segments, UDP or DCCP datagrams) dropped in the network, by queue or loss model.
    net_dropped_pkts: u64,
}

/// Per-host processing jitter: a FIFO of packets with their ready times.
#[derive(Debug, Default)]
struct Host {
    queue: VecDeque<(Nanos, Packet)>,
    last_ready_ns: Nanos,
}

/// Per-interval samples, preallocated: row = flow · n_intervals + k. A sender's state starts NaN:
/// a row the tick does not write (a CBR flow, a flow not started) is a value not there.
#[derive(Debug)]
struct Series {
    n: usize,
    t_ns: Vec<u64>,
    goodput_bytes: Vec<u64>,
    cwnd_bytes: Vec<f64>,
    ssthresh_bytes: Vec<f64>,
    srtt_ns: Vec<f64>,
    retrans_pkts: Vec<u64>,
    sent_pkts: Vec<u64>,
    dropped_pkts: Vec<u64>,
    in_flight_bytes: Vec<f64>,
    marked_pkts: Vec<u64>,
    pacing_rate_bps: Vec<f64>,
    dctcp_alpha: Vec<f64>,
    /// Cumulative (goodput bytes, retransmissions, sent, dropped, marked) at the previous tick,
    /// per flow.
    last: Vec<[u64; 5]>,
    next_k: usize,
}

impl Series {
    fn new(n_intervals: usize, n_flows: usize) -> Series {
        let rows = n_intervals * n_flows;
        Series {
            n: n_intervals,
            t_ns: vec![0; rows],
            goodput_bytes: vec![0; rows],
            cwnd_bytes: vec![f64::NAN; rows],
            ssthresh_bytes: vec![f64::NAN; rows],
            srtt_ns: vec![f64::NAN; rows],
            retrans_pkts: vec![0; rows],
            sent_pkts: vec![0; rows],
            dropped_pkts: vec![0; rows],
            in_flight_bytes: vec![f64::NAN; rows],
            marked_pkts: vec![0; rows],
            pacing_rate_bps: vec![f64::NAN; rows],
            dctcp_alpha: vec![f64::NAN; rows],
            last: vec![[0; 5]; n_flows],
            next_k: 0,
        }
    }
}

impl Flow {
    /// Cumulative (goodput bytes, retransmissions, data packets sent, data packets dropped, data
    /// packets that arrived marked CE).
    fn counters(&self) -> [u64; 5] {
        match &self.ends {
            Endpoints::Tcp { sender, receiver } => {
                let st = &sender.stats;
                [receiver.stats.goodput_bytes, st.retrans_pkts, st.sent_pkts, self.net_dropped_pkts + st.hook_dropped_pkts, receiver.stats.ce_pkts]
            }
            Endpoints::Cbr { source, sink } => [sink.bytes, 0, source.sent_pkts, self.net_dropped_pkts, 0],
            Endpoints::Dccp { sender, receiver } => {
                [receiver.stats.goodput_bytes, 0, sender.stats.sent_pkts, self.net_dropped_pkts, receiver.stats.ce_pkts]
            }
        }
    }
}

pub struct Simulation {
    now: Nanos,
    duration_ns: Nanos,
    interval_ns: Nanos,
    events: EventQueue,
    links: Vec<Link>,
    routes: Routes,
    node_names: Vec<String>,
    hosts: Vec<Host>,
    host_jitter_ns: Nanos,
    /// (probability, length): a send stalls with that probability, uniformly up to the length.
    host_stall: Option<(f64, Nanos)>,
    host_rng: Vec<Rng>,
    /// Quantile tables of a data send's and an ACK send's hold (empty: the jitter instead).
    data_holds_ns: Vec<Nanos>,
    ack_holds_ns: Vec<Nanos>,
    flows: Vec<Flow>,
    series: Series,
    /// Scratch buffer endpoints write outgoing packets into (reused: no allocation per packet).
    out: Vec<Packet>,
    transmissions: u64,
    events_run: u64,
    /// The spec's `capture`, if any.
    capture: Option<Capture>,
}

impl Simulation {
    pub fn new(spec: &Spec) -> Result<Simulation, SpecError> {
        let built = spec.validate()?;
        let n = built.node_names.len();
        let mut links: Vec<Link> = built
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| Link {
                from: NodeId(l.from),
                to: NodeId(l.to),
                rate_bps: l.rate_bps,
                delay_ns: l.delay_ns,
                queue: Queue::from_spec(&l.queue, l.rate_bps, l.delay_ns, Rng::stream(spec.seed, Stream::Queue, i as u32)),
                loss: l.loss,
                rng: Rng::stream(spec.seed, Stream::LinkLoss, i as u32),
                in_tx: None,
                release_due: false,
                pipe: VecDeque::with_capacity(64),
                stats: LinkStats::default(),
                rate_changes: l.rate_schedule.iter().copied().collect(),
            })
            .collect();
        for l in &mut links {
            l.queue.set_hosts(|| spec.flows.iter().map(|f| f.endpoints()).collect());
        }
        let pairs: Vec<(u32, u32)> = built.links.iter().map(|l| (l.from, l.to)).collect();
        let routes = Routes::compute(n, &pairs);

        let mut events = EventQueue::with_capacity(1024);
        let mut flows = Vec::with_capacity(spec.flows.len());
        for (i, f) in spec.flows.iter().enumerate() {
            let (src, dst) = f.endpoints();
            let (s, d) = (NodeId(src), NodeId(dst));
            if !routes.connected(s, d) || !routes.connected(d, s) {
                let name = &built.node_names[dst as usize];
                return Err(SpecError::new(
                    format!("flows[{i}].dst"),
                    name,
                    format!("a node connected both ways to flows[{i}].src ({})", built.node_names[src as usize]),
                ));
            }
            let id = FlowId(i as u32);
            let ends = match f {
                FlowSpec::Tcp(t) => {
                    let mut sender = TcpSender::new(id, d, t, Rng::stream(spec.seed, Stream::CongestionControl, i as u32));
                    if t.timestamps && t.timestamp_offsets {
                        sender.tp.peer_ts_offset = Rng::stream(spec.seed, Stream::TimestampOffset, i as u32).next_u64() as u32;
                    }
                    Endpoints::Tcp { sender, receiver: TcpReceiver::new(id, s, t) }
                }
                FlowSpec::Cbr(c) => Endpoints::Cbr { source: CbrSource::new(id, d, c, Rng::stream(spec.seed, Stream::CbrGaps, i as u32)), sink: CbrSink::default() },
                FlowSpec::Dccp(c) => Endpoints::Dccp { sender: Ccid2Sender::new(id, d, c), receiver: DccpReceiver::new(id, s, c) },
            };
            let (start, stop) = f.start_stop();
            let mut rng = Rng::stream(spec.seed, Stream::FlowStart, i as u32);
            let start = start + rng.below(spec.start_jitter_ns);
            events.push(start, Event::FlowStart(id));
            if let Some(stop) = stop {
                events.push(stop.max(start), Event::FlowStop(id));
            }
            flows.push(Flow { src: s, dst: d, ends, net_dropped_pkts: 0 });
        }

        for (i, link) in links.iter_mut().enumerate() {
            // A change at time 0 is the link's rate from the start; the first later one is an event.
            while let Some(&(0, rate)) = link.rate_changes.front() {
                link.rate_bps = rate;
                link.rate_changes.pop_front();
            }
            if let Some(&(at, _)) = link.rate_changes.front() {
                events.push(at, Event::LinkRate(LinkId(i as u32)));
            }
        }

        let series = Series::new(spec.duration_ns.div_ceil(spec.interval_ns) as usize, flows.len());
        events.push(spec.interval_ns.min(spec.duration_ns), Event::Tick);
        let capture = spec.capture.as_ref().map(|c| Capture::new(FlowId(c.flow), &c.links, links.len()));

        Ok(Simulation {
            now: 0,
            duration_ns: spec.duration_ns,
            interval_ns: spec.interval_ns,
            events,
            links,
            routes,
            node_names: built.node_names,
            hosts: (0..n).map(|_| Host::default()).collect(),
            host_jitter_ns: spec.host_jitter_ns,
            host_stall: (spec.host_stall_prob > 0.0).then_some((spec.host_stall_prob, spec.host_stall_ns)),
            host_rng: (0..n).map(|i| Rng::stream(spec.seed, Stream::HostJitter, i as u32)).collect(),
            data_holds_ns: spec.host_data_holds_ns.clone(),
            ack_holds_ns: spec.host_ack_holds_ns.clone(),
            flows,
            series,
            out: Vec::with_capacity(256),
            transmissions: 0,
            events_run: 0,
            capture,
        })
    }

    /// Run to the end and collect the results.
    pub fn run(self) -> SimResult {
        self.run_until_cancelled(|| false).expect("never cancelled")
    }

    /// Run to the end, asking `cancelled` every 65,536 events whether to stop (e.g. on Ctrl-C);
    /// `None` if it said so.
    pub fn run_until_cancelled(mut self, mut cancelled: impl FnMut() -> bool) -> Option<SimResult> {
        while let Some((at, ev)) = self.events.pop_until(self.duration_ns) {
            if self.events_run % 65_536 == 0 && cancelled() {
                return None;
            }
            debug_assert!(at >= self.now, "time went back");
            self.now = at;
            self.events_run += 1;
            self.handle(ev);
        }
        self.now = self.duration_ns;
        Some(self.finish())
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::TxDone(l) => self.tx_done(l),
            Event::Release(l) => self.release(l),
            Event::Arrive(l) => self.arrive(l),
            Event::LinkRate(l) => self.link_rate(l),
            Event::HostReady(n) => self.host_ready(n),
            Event::FlowStart(f) => self.flow_start(f),
            Event::FlowStop(f) => match &mut self.flows[f.idx()].ends {
                Endpoints::Tcp { sender, .. } => sender.active = false,
                Endpoints::Cbr { source, .. } => source.active = false,
                Endpoints::Dccp { sender, .. } => sender.active = false,
            },
            Event::Rto(f, gen) => self.timer_fired(f, gen, TimerKind::Rto),
            Event::DelAck(f, gen) => self.timer_fired(f, gen, TimerKind::DelAck),
            Event::Pace(f, gen) => self.timer_fired(f, gen, TimerKind::Pace),
            Event::CbrSend(f) => self.cbr_send(f),
            Event::Tick => self.tick(),
        }
    }

    // ---- links -------------------------------------------------------------------------------

    /// A packet leaves `node` toward its destination.
    fn forward(&mut self, node: NodeId, pkt: Packet) {
        let l = self.routes.next_link(node, pkt.dst).expect("routes checked when the flow was built");
        self.enqueue(l, pkt);
    }

    fn enqueue(&mut self, l: LinkId, mut pkt: Packet) {
        let now = self.now;
        let link = &mut self.links[l.idx()];
        link.stats.enqueued_pkts += 1;
        if link.in_tx.is_none() && link.queue.len_pkts() == 0 && link.queue.hold_until() <= now {
            if !link.queue.pass(&mut pkt, now) {
                link.stats.dropped_pkts += 1;
                self.count_drop(&pkt);
                return;
            }
            link.stats.sojourn.record(0);
            self.start_tx(l, pkt);
            return;
        }
        link.note_len(now);
        pkt.enq_ns = now;
        match link.queue.enqueue(pkt, now) {
            Ok(()) => link.stats.max_pkts = link.stats.max_pkts.max(link.queue.len_pkts() as u64),
            Err(dropped) => {
                link.stats.dropped_pkts += 1;
                let more = link.queue.has_dropped();
                self.count_drop(&dropped);
                if more {
                    self.queue_drops(l);
                }
            }
        }
        // Queued on an idle link: only a shaper holds packets so.
        let link = &self.links[l.idx()];
        if link.in_tx.is_none() && link.queue.len_pkts() > 0 {
            self.hold(l);
        }
    }

    /// The idle link `l`'s queue holds packets until its shaper's time: wake it then (once).
    #[cold]
    fn hold(&mut self, l: LinkId) {
        let link = &mut self.links[l.idx()];
        if link.release_due {
            return;
        }
        let at = link.queue.hold_until();
        debug_assert!(at > self.now, "a queue with packets refused a dequeue past its hold");
        link.release_due = true;
        self.events.push(at.max(self.now), Event::Release(l));
    }

    /// The shaper of idle link `l`'s queue lets its next packet go.
    #[cold]
    fn release(&mut self, l: LinkId) {
        let now = self.now;
        let link = &mut self.links[l.idx()];
        link.release_due = false;
        if link.in_tx.is_some() {
            return; // its end dequeues
        }
        link.note_len(now);
        if let Some(next) = link.queue.dequeue(now) {
            link.stats.sojourn.record(now - next.enq_ns);
            self.start_tx(l, next);
        } else if link.queue.len_pkts() > 0 {
            self.hold(l);
        }
        if self.links[l.idx()].queue.has_dropped() {
            self.queue_drops(l);
        }
    }

    /// Link `l`'s next rate change is due: the next packet it starts is serialised at the new
    /// rate (one being serialised keeps the end its rate gave it). At rate 0 the link is down
    /// (see [`Self::wait_for_link`]).
    #[cold]
    fn link_rate(&mut self, l: LinkId) {
        let link = &mut self.links[l.idx()];
        let (_, rate) = link.rate_changes.pop_front().expect("a rate change was pending");
        if let (Some(cap), true) = (&mut self.capture, link.in_tx.is_some()) {
            cap.rate_changed(l, link.rate_bps);
        }
        link.rate_bps = rate;
        if let Some(&(at, _)) = link.rate_changes.front() {
            self.events.push(at, Event::LinkRate(l));
        }
    }

    fn start_tx(&mut self, l: LinkId, pkt: Packet) {
        let link = &mut self.links[l.idx()];
        if link.rate_bps == 0 {
            return self.wait_for_link(l, pkt);
        }
        // A paced segment does not leave its host before its departure time (its TSval; earlier
        // than now for every other packet): with `fq_pacing` the sender hands segments down
        // early and the host holds them, as Linux's fq does.
        let done = self.now.max(pkt.ts_val_ns) + tx_time_ns(pkt.size_bytes, link.rate_bps);
        link.in_tx = Some(pkt);
        self.transmissions += 1;
        self.events.push(done, Event::TxDone(l));
    }

    /// Link `l` is down (rate 0): `pkt`, handed to it, waits at the transmitter, as in a driver's
    /// ring, and is serialised from the change that brings the link back, at its rate (never if
    /// none does); the queue holds what arrives meanwhile.
    #[cold]
    fn wait_for_link(&mut self, l: LinkId, pkt: Packet) {
        let link = &mut self.links[l.idx()];
        let back = link.rate_changes.iter().find(|&&(_, rate)| rate != 0).copied();
        if let Some((at, rate)) = back {
            let done = at.max(pkt.ts_val_ns) + tx_time_ns(pkt.size_bytes, rate);
            self.transmissions += 1;
            self.events.push(done, Event::TxDone(l));
        }
        link.in_tx = Some(pkt);
    }

    fn tx_done(&mut self, l: LinkId) {
        let now = self.now;
        let link = &mut self.links[l.idx()];
        let pkt = link.in_tx.take().expect("a packet was being serialised");
        // Start the next one first: the link is work-conserving.
        link.note_len(now);
        if let Some(next) = link.queue.dequeue(now) {
            link.stats.sojourn.record(now - next.enq_ns);
            self.start_tx(l, next);
        } else if link.queue.len_pkts() > 0 {
            self.hold(l);
        }
        let link = &mut self.links[l.idx()];
        if link.queue.has_dropped() {
            self.queue_drops(l);
        }
        let link = &mut self.links[l.idx()];
        let lost = link.rng.chance(link.loss);
        if let Some(cap) = &mut self.capture {
            cap.on_tx_done(l, &pkt, now, link.rate_bps, link.delay_ns, lost);
        }
        if lost {
            link.stats.random_loss_pkts += 1;
            self.count_drop(&pkt);
            return;
        }
        if link.delay_ns == 0 {
            let to = link.to;
            self.at_node(to, &pkt);
        } else {
            let at = now + link.delay_ns;
            link.pipe.push_back((at, pkt));
            if link.pipe.len() == 1 {
                self.events.push(at, Event::Arrive(l));
            }
        }
    }

    fn arrive(&mut self, l: LinkId) {
        let link = &mut self.links[l.idx()];
        let (_, pkt) = link.pipe.pop_front().expect("an arrival was pending");
        if let Some(&(next_at, _)) = link.pipe.front() {
            self.events.push(next_at, Event::Arrive(l));
        }
        let to = link.to;
        self.at_node(to, &pkt);
    }

    /// Account for the packets `l`'s queue dropped beyond an arrival it handed back: CoDel's at
    /// the head as it dequeued, DRR's further push-outs.
    #[cold]
    fn queue_drops(&mut self, l: LinkId) {
        let link = &mut self.links[l.idx()];
        let flows = &mut self.flows;
        let stats = &mut link.stats;
        link.queue.take_dropped(|pkt| {
            stats.dropped_pkts += 1;
            if pkt.kind.is_data() {
                flows[pkt.flow.idx()].net_dropped_pkts += 1;
            }
        });
    }

    fn count_drop(&mut self, pkt: &Packet) {
        if pkt.kind.is_data() {
            self.flows[pkt.flow.idx()].net_dropped_pkts += 1;
        }
    }

    /// A packet reached `node`: deliver it or forward it.
    #[inline]
    fn at_node(&mut self, node: NodeId, pkt: &Packet) {
        if node != pkt.dst {
            self.forward(node, *pkt);
        } else {
            self.deliver(node, pkt);
        }
    }

    /// Hand a packet to its endpoint. Kept out of line: inlining every endpoint's handlers into
    /// the event loop made it spill registers on every event (measured: 1.3x slower).
    #[inline(never)]
    fn deliver(&mut self, node: NodeId, pkt: &Packet) {
        let now = self.now;
        let mut out = std::mem::take(&mut self.out);
        let f = pkt.flow;
        let flow = &mut self.flows[f.idx()];
        match (&mut flow.ends, pkt.kind) {
            (Endpoints::Tcp { receiver, .. }, Kind::Data) => receiver.on_data(pkt, now, &mut out),
            (Endpoints::Tcp { sender, .. }, Kind::Ack) => sender.on_ack(pkt, now, &mut out),
            (Endpoints::Tcp { receiver, .. }, Kind::Setup) => receiver.on_setup(pkt, now, &mut out),
            (Endpoints::Tcp { sender, .. }, Kind::SetupAck) => sender.on_setup_ack(pkt, now, &mut out),
            (Endpoints::Cbr { sink, .. }, Kind::Udp) => sink.on_datagram(pkt, now),
            (Endpoints::Dccp { receiver, .. }, Kind::DccpData) => receiver.on_data(pkt, now, &mut out),
            (Endpoints::Dccp { sender, .. }, Kind::DccpAck) => sender.on_ack(pkt, now, &mut out),
            _ => unreachable!("packet kind matches its flow"),
        }
        self.emit(node, &mut out);
        self.out = out;
        self.sync_timers(f);
    }

    /// Send what an endpoint at `node` produced, through the host's processing jitter if any: one
    /// delay for everything it sent at once (a TSO burst reaches the testbed's router as a whole,
    /// its segments under 1 µs apart, 5–80 µs after it left the sender's stack), order kept: a
    /// draw from the data or ACK holds' table when there is one, else uniform up to the jitter.
    /// With probability `host_stall_prob` the delay is a stall, uniform in [0, `host_stall_ns`), instead.
    fn emit(&mut self, node: NodeId, out: &mut Vec<Packet>) {
        if self.host_jitter_ns == 0 && self.host_stall.is_none() && self.data_holds_ns.is_empty() && self.ack_holds_ns.is_empty() {
            for pkt in out.drain(..) {
                self.forward(node, pkt);
            }
            return;
        }
        if out.is_empty() {
            return;
        }
        let rng = &mut self.host_rng[node.idx()];
        let holds = if matches!(out[0].kind, Kind::Ack | Kind::DccpAck | Kind::SetupAck) { &self.ack_holds_ns } else { &self.data_holds_ns };
        let jitter = match self.host_stall {
            Some((p, len)) if rng.chance(p) => rng.below(len),
            _ if !holds.is_empty() => draw_hold(rng, holds),
            _ => rng.below(self.host_jitter_ns), // 0, drawing nothing, without jitter
        };
        for pkt in out.drain(..) {
            let host = &mut self.hosts[node.idx()];
            let ready = (self.now + jitter).max(host.last_ready_ns);
            host.last_ready_ns = ready;
            host.queue.push_back((ready, pkt));
            if host.queue.len() == 1 {
                self.events.push(ready, Event::HostReady(node));
            }
        }
    }

    fn host_ready(&mut self, node: NodeId) {
        let host = &mut self.hosts[node.idx()];
        let (_, pkt) = host.queue.pop_front().expect("a packet was waiting");
        if let Some(&(next, _)) = host.queue.front() {
            self.events.push(next, Event::HostReady(node));
        }
        self.forward(node, pkt);
    }

    // ---- endpoints and timers ----------------------------------------------------------------

    fn flow_start(&mut self, f: FlowId) {
        let now = self.now;
        let mut out = std::mem::take(&mut self.out);
        let flow = &mut self.flows[f.idx()];
        let src = flow.src;
        match &mut flow.ends {
            Endpoints::Tcp { sender, .. } => sender.start(now, &mut out),
            Endpoints::Dccp { sender, .. } => sender.start(now, &mut out),
            Endpoints::Cbr { source, .. } => {
                source.active = true;
                self.events.push(now, Event::CbrSend(f));
            }
        }
        self.emit(src, &mut out);
        self.out = out;
        self.sync_timers(f);
    }

    fn cbr_send(&mut self, f: FlowId) {
        let now = self.now;
        let mut out = std::mem::take(&mut self.out);
        let flow = &mut self.flows[f.idx()];
        let src = flow.src;
        if let Endpoints::Cbr { source, .. } = &mut flow.ends {
            if let Some(next) = source.send(now, &mut out) {
                self.events.push(next, Event::CbrSend(f));
            }
        }
        self.emit(src, &mut out);
        self.out = out;
    }

    fn timer_slot(&mut self, f: FlowId, kind: TimerKind) -> Option<&mut TimerSlot> {
        match (&mut self.flows[f.idx()].ends, kind) {
            (Endpoints::Tcp { sender, .. }, TimerKind::Rto) => Some(&mut sender.rto_timer),
            (Endpoints::Tcp { receiver, .. }, TimerKind::DelAck) => Some(&mut receiver.delack_timer),
            (Endpoints::Dccp { sender, .. }, TimerKind::Rto) => Some(&mut sender.rto_timer),
            (Endpoints::Tcp { sender, .. }, TimerKind::Pace) => Some(&mut sender.pace_timer),
            _ => None,
        }
    }

    /// Keep one event pending per armed timer, no later than its deadline.
    fn sync_timers(&mut self, f: FlowId) {
        let events = &mut self.events;
        match &mut self.flows[f.idx()].ends {
            Endpoints::Tcp { sender, receiver } => {
                sync_slot(&mut sender.rto_timer, |at, gen| events.push(at, Event::Rto(f, gen)));
                sync_slot(&mut receiver.delack_timer, |at, gen| events.push(at, Event::DelAck(f, gen)));
                // A paced sender arms its pacing timer for nearly every segment: the first flows
                // keep it in a slot beside the queue's heap (engine/mod.rs).
                if f.idx() < engine::SLOTS {
                    sync_slot(&mut sender.pace_timer, |at, gen| events.set_slot(f.idx(), at, Event::Pace(f, gen)));
                } else {
                    sync_slot(&mut sender.pace_timer, |at, gen| events.push(at, Event::Pace(f, gen)));
                }
            }
            Endpoints::Dccp { sender, .. } => sync_slot(&mut sender.rto_timer, |at, gen| events.push(at, Event::Rto(f, gen))),
            Endpoints::Cbr { .. } => {}
        }
    }

    fn timer_fired(&mut self, f: FlowId, gen: u32, kind: TimerKind) {
        let now = self.now;
        let Some(slot) = self.timer_slot(f, kind) else { return };
        if slot.gen != gen {
            return; // superseded by an earlier event
        }
        slot.pending_at = None;
        match slot.deadline {
            None => return,
            Some(d) if d > now => {
                self.sync_timers(f);
                return;
            }
            Some(_) => slot.deadline = None,
        }
        let mut out = std::mem::take(&mut self.out);
        let flow = &mut self.flows[f.idx()];
        let node = match (&mut flow.ends, kind) {
            (Endpoints::Tcp { sender, .. }, TimerKind::Rto) => {
                sender.on_rto(now, &mut out);
                flow.src
            }
            (Endpoints::Tcp { receiver, .. }, TimerKind::DelAck) => {
                receiver.on_delack(now, &mut out);
                flow.dst
            }
            (Endpoints::Dccp { sender, .. }, TimerKind::Rto) => {
                sender.on_rto(now, &mut out);
                flow.src
            }
            (Endpoints::Tcp { sender, .. }, TimerKind::Pace) => {
                sender.on_pace(now, &mut out);
                flow.src
            }
            _ => unreachable!(),
        };
        self.emit(node, &mut out);
        self.out = out;
        self.sync_timers(f);
    }

    // ---- measurement -------------------------------------------------------------------------

    fn tick(&mut self) {
        let s = &mut self.series;
        let k = s.next_k;
        if k >= s.n {
            return;
        }
        for (i, flow) in self.flows.iter().enumerate() {
            let row = i * s.n + k;
            s.t_ns[row] = self.now;
            // A sender's state is reported once its flow has started (before, there is no
            // connection: the testbed has none to read either); what is not written stays NaN.
            match &flow.ends {
                Endpoints::Tcp { sender, .. } if sender.active || sender.stats.sent_pkts > 0 => {
                    let mss = sender.tp.mss_bytes as f64;
                    s.cwnd_bytes[row] = sender.tp.snd_cwnd as f64 * mss;
                    s.ssthresh_bytes[row] = sender.ssthresh_bytes().map_or(f64::NAN, |b| b as f64);
                    s.srtt_ns[row] = if sender.rtt.srtt_ns == 0 { f64::NAN } else { sender.rtt.srtt_ns as f64 };
                    s.in_flight_bytes[row] = sender.in_flight_bytes() as f64;
                    s.pacing_rate_bps[row] = sender.pacing_rate_bps().map_or(f64::NAN, |r| r as f64);
                    s.dctcp_alpha[row] = sender.cc.dctcp_alpha().unwrap_or(f64::NAN);
                }
                Endpoints::Dccp { sender, .. } if sender.active || sender.stats.sent_pkts > 0 => {
                    let payload = sender.payload_bytes() as f64;
                    s.cwnd_bytes[row] = sender.cwnd as f64 * payload;
                    s.ssthresh_bytes[row] = sender.ssthresh_pkts().map_or(f64::NAN, |p| p as f64 * payload);
                    s.srtt_ns[row] = if sender.rtt.srtt_ns() == 0 { f64::NAN } else { sender.rtt.srtt_ns() as f64 };
                    s.in_flight_bytes[row] = sender.in_flight_bytes() as f64;
                }
                _ => {}
            }
            let now = flow.counters();
            let d: [u64; 5] = std::array::from_fn(|j| now[j] - s.last[i][j]);
            (s.goodput_bytes[row], s.retrans_pkts[row], s.sent_pkts[row], s.dropped_pkts[row], s.marked_pkts[row]) = (d[0], d[1], d[2], d[3], d[4]);
            s.last[i] = now;
        }
        s.next_k += 1;
        if s.next_k < s.n {
            let next = (self.now + self.interval_ns).min(self.duration_ns);
            self.events.push(next, Event::Tick);
        }
    }

    /// Data packets of each flow still in the network (queues, serialisers, pipes, hosts),
    /// counted by walking them — independent of the send/deliver/drop counters, so
    /// `sent = delivered + dropped + in_flight` is a real check.
    fn in_network(&self) -> Vec<u64> {
        let mut counts = vec![0u64; self.flows.len()];
        let mut count = |p: &Packet| {
            if p.kind.is_data() {
                counts[p.flow.idx()] += 1;
            }
        };
        for link in &self.links {
            link.queue.for_each(&mut count);
            link.in_tx.iter().for_each(&mut count);
            link.pipe.iter().for_each(|(_, p)| count(p));
        }
        for host in &self.hosts {
            host.queue.iter().for_each(|(_, p)| count(p));
        }
        counts
    }

    fn finish(mut self) -> SimResult {
        let in_net = self.in_network();
        let nf = self.flows.len();
        let mut flows = Table::default();
        flows.push("flow", Column::U64((0..nf as u64).collect()));
        let count = |f: &dyn Fn(&Flow, usize) -> u64| Column::U64(self.flows.iter().enumerate().map(|(i, fl)| f(fl, i)).collect());
        let tcp = |fl: &Flow, g: &dyn Fn(&TcpSender) -> u64, d: &dyn Fn(&Ccid2Sender) -> u64| match &fl.ends {
            Endpoints::Tcp { sender, .. } => g(sender),
            Endpoints::Dccp { sender, .. } => d(sender),
            Endpoints::Cbr { .. } => 0,
        };
        flows.push("sent_pkts", count(&|fl, _| fl.counters()[2]));
        flows.push("sent_bytes", count(&|fl, _| match &fl.ends {
            Endpoints::Tcp { sender, .. } => sender.stats.sent_bytes,
            Endpoints::Cbr { source, .. } => source.sent_bytes,
            Endpoints::Dccp { sender, .. } => sender.stats.sent_bytes,
        }));
        flows.push("retrans_pkts", count(&|fl, _| fl.counters()[1]));
        flows.push("dropped_pkts", count(&|fl, _| fl.counters()[3]));
        flows.push("delivered_pkts", count(&|fl, _| match &fl.ends {
            Endpoints::Tcp { receiver, .. } => receiver.stats.delivered_pkts,
            Endpoints::Cbr { sink, .. } => sink.delivered_pkts,
            Endpoints::Dccp { receiver, .. } => receiver.stats.delivered_pkts,
        }));
        flows.push("in_flight_pkts", count(&|_, i| in_net[i]));
        flows.push("goodput_bytes", count(&|fl, _| fl.counters()[0]));
        flows.push("rto_count", count(&|fl, _| tcp(fl, &|s| s.stats.rto_count, &|d| d.stats.rto_count)));
        // Timeouts undone as spurious (`undo`; Linux's TCPLossUndo).
        flows.push("loss_undos", count(&|fl, _| tcp(fl, &|s| s.stats.undos, &|_| 0)));
        // DCCP: window reductions on loss (CCID 2 has no recovery state).
        flows.push("recoveries", count(&|fl, _| tcp(fl, &|s| s.stats.recoveries, &|d| d.stats.congestion_events)));
        flows.push("recovery_ns", count(&|fl, _| tcp(fl, &|s| s.stats.recovery_ns, &|_| 0)));
        // ECN: the flow's data that arrived marked CE, and the sender's window reductions on
        // ECE (DCCP: on marks its Ack Vector reported).
        flows.push("marked_pkts", count(&|fl, _| fl.counters()[4]));
        flows.push("ecn_reductions", count(&|fl, _| tcp(fl, &|s| s.stats.ecn_reductions, &|d| d.stats.ecn_reductions)));
        let owd = |q: &dyn Fn(&crate::measure::Histogram) -> f64| {
            Column::F64(self.flows.iter().map(|fl| q(match &fl.ends {
                Endpoints::Tcp { receiver, .. } => &receiver.stats.owd,
                Endpoints::Cbr { sink, .. } => &sink.owd,
                Endpoints::Dccp { receiver, .. } => &receiver.stats.owd,
            })).collect())
        };
        flows.push("owd_mean_ns", owd(&|h| h.mean()));
        flows.push("owd_min_ns", owd(&|h| h.min()));
        flows.push("owd_p50_ns", owd(&|h| h.quantile(0.5)));
        flows.push("owd_p99_ns", owd(&|h| h.quantile(0.99)));
        flows.push("owd_max_ns", owd(&|h| h.max()));

        let s = std::mem::replace(&mut self.series, Series::new(0, 0));
        // Keep only the intervals that were reached.
        let keep: Vec<usize> = (0..nf).flat_map(|f| (0..s.next_k).map(move |k| f * s.n + k)).collect();
        let pick_u = |v: &Vec<u64>| Column::U64(keep.iter().map(|&r| v[r]).collect());
        let pick_f = |v: &Vec<f64>| Column::F64(keep.iter().map(|&r| v[r]).collect());
        let mut intervals = Table::default();
        intervals.push("flow", Column::U64(keep.iter().map(|&r| (r / s.n.max(1)) as u64).collect()));
        intervals.push("t_ns", pick_u(&s.t_ns));
        intervals.push("goodput_bytes", pick_u(&s.goodput_bytes));
        intervals.push("cwnd_bytes", pick_f(&s.cwnd_bytes));
        intervals.push("ssthresh_bytes", pick_f(&s.ssthresh_bytes));
        intervals.push("srtt_ns", pick_f(&s.srtt_ns));
        intervals.push("retrans_pkts", pick_u(&s.retrans_pkts));
        intervals.push("sent_pkts", pick_u(&s.sent_pkts));
        intervals.push("dropped_pkts", pick_u(&s.dropped_pkts));
        intervals.push("in_flight_bytes", pick_f(&s.in_flight_bytes));
        intervals.push("marked_pkts", pick_u(&s.marked_pkts));
        intervals.push("pacing_rate_bps", pick_f(&s.pacing_rate_bps));
        intervals.push("dctcp_alpha", pick_f(&s.dctcp_alpha));

        let end = self.now;
        for link in self.links.iter_mut() {
            link.note_len(end);
        }
        let links = &self.links;
        let lu = |f: &dyn Fn(&Link) -> u64| Column::U64(links.iter().map(f).collect());
        let lf = |f: &dyn Fn(&Link) -> f64| Column::F64(links.iter().map(f).collect());
        let mut queues = Table::default();
        queues.push("link", Column::U64((0..links.len() as u64).collect()));
        queues.push("from", lu(&|l| l.from.0 as u64));
        queues.push("to", lu(&|l| l.to.0 as u64));
        queues.push("enqueued_pkts", lu(&|l| l.stats.enqueued_pkts));
        queues.push("dropped_pkts", lu(&|l| l.stats.dropped_pkts));
        queues.push("early_drop_pkts", lu(&|l| l.queue.early_drops()));
        queues.push("marked_pkts", lu(&|l| l.queue.marks()));
        queues.push("random_loss_pkts", lu(&|l| l.stats.random_loss_pkts));
        queues.push("max_pkts", lu(&|l| l.stats.max_pkts));
        queues.push("mean_pkts", lf(&|l| l.stats.area_pkt_ns as f64 / end.max(1) as f64));
        queues.push("sojourn_mean_ns", lf(&|l| l.stats.sojourn.mean()));
        queues.push("sojourn_p50_ns", lf(&|l| l.stats.sojourn.quantile(0.5)));
        queues.push("sojourn_p99_ns", lf(&|l| l.stats.sojourn.quantile(0.99)));
        queues.push("sojourn_max_ns", lf(&|l| l.stats.sojourn.max()));
        queues.push("final_pkts", lu(&|l| l.queue.len_pkts() as u64));

        let capture = self.capture.take().map(Capture::into_table);
        SimResult { flows, intervals, queues, capture, transmissions: self.transmissions, events: self.events_run, end_ns: end, node_names: self.node_names }
    }
}

/// A hold drawn from the quantile table `holds` (at probabilities 0, 1/(n-1), ..., 1): a uniform
/// probability, interpolated linearly between the two quantiles around it.
fn draw_hold(rng: &mut Rng, holds: &[Nanos]) -> Nanos {
    let x = rng.uniform() * (holds.len() - 1) as f64;
    let i = (x as usize).min(holds.len() - 2);
    let (lo, hi) = (holds[i] as f64, holds[i + 1] as f64);
    (lo + (x - i as f64) * (hi - lo)).round() as Nanos
}

/// Schedule an event for `slot`'s deadline unless one is pending no later than it: `schedule`
/// gets the deadline and the slot's new generation (an event of an older generation is then
/// ignored when it fires).
#[inline(always)]
fn sync_slot(slot: &mut TimerSlot, schedule: impl FnOnce(Nanos, u32)) {
    let Some(deadline) = slot.deadline else { return };
    if slot.pending_at.is_some_and(|p| p <= deadline) {
        return;
    }
    slot.gen = slot.gen.wrapping_add(1);
    slot.pending_at = Some(deadline);
    schedule(deadline, slot.gen);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TimerKind {
    Rto,
    DelAck,
    Pace,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Holds drawn from a quantile table have that table's quantiles: a two-humped table (most
    /// holds 9–22 µs, a quarter 56–84 µs, as the testbed's receivers hold their ACKs) comes back
    /// within 0.5 µs at every one of its probabilities, and no draw leaves [first, last].
    #[test]
    fn holds_follow_their_quantile_table() {
        let table: Vec<Nanos> = [2.2, 8.8, 18.9, 20.1, 21.9, 56.3, 84.1].iter().map(|us| (us * 1000.0) as Nanos).collect();
        let mut rng = Rng::stream(7, Stream::HostJitter, 0);
        let mut draws: Vec<Nanos> = (0..600_000).map(|_| draw_hold(&mut rng, &table)).collect();
        draws.sort_unstable();
        assert!(draws[0] >= table[0] && *draws.last().unwrap() <= table[6]);
        for (k, &q) in table.iter().enumerate() {
            let at = ((k as f64 / 6.0) * (draws.len() - 1) as f64) as usize;
            assert!(draws[at].abs_diff(q) <= 500, "quantile {k}/6: {} ns against {q}", draws[at]);
        }
        // Between two quantiles the holds are spread evenly: half of the sixth between 21.9 and
        // 56.3 µs lies below their midpoint.
        let below = draws.iter().filter(|&&h| h > 21_900 && h < 39_100).count() as f64 / draws.len() as f64;
        assert!((below - 1.0 / 12.0).abs() < 0.003, "{below}");
    }

    /// A table of one hold, out of order or over 1 s is refused, naming its field; an empty one
    /// (the jitter instead) and an ordered one are taken.
    #[test]
    fn hold_tables_are_checked() {
        let base = Spec::from_json(include_str!("../../../bench/engine_reno.json")).unwrap();
        for (data, ack, field) in [(vec![5], vec![], "host_data_holds_ns"), (vec![], vec![9, 8], "host_ack_holds_ns"), (vec![1, 2_000_000_000], vec![], "host_data_holds_ns")] {
            let spec = Spec { host_data_holds_ns: data, host_ack_holds_ns: ack, ..base.clone() };
            let err = Simulation::new(&spec).err().expect("refused");
            assert!(err.to_string().contains(field), "{err}");
        }
        let spec = Spec { host_data_holds_ns: vec![5_000, 9_000], host_ack_holds_ns: vec![8_000, 8_000, 60_000], ..base };
        assert!(Simulation::new(&spec).is_ok());
    }
}
