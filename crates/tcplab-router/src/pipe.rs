//! One direction of the emulated bottleneck, as pure logic on integer nanoseconds (no system
//! call, so it is tested without root): a slab of packet buffers, the simulator's queue
//! discipline (`tcplab_sim::net::queue::Queue`), a transmitter at the bottleneck rate, and a
//! constant-delay line.
//!
//! Timing follows the simulator's link: a packet is serialised at `rate_bps` once the ones ahead
//! of it are (`tx_time_ns`, rounded up), then propagates for `delay_ns`, so it leaves at
//! `finish + delay`. Serialisation is computed on ideal (virtual) times, not on when the thread
//! happened to wake: a late wake-up delays a packet's release by the lateness only, never the
//! packets behind it, so the rate is exact. The queue sees arrivals at their read time and
//! departures at their ideal start, in time order, so its drops are the simulator's DropTail's.
//!
//! A wake-up later than `stall_ns` for the packet due first is a stall (of the thread, or of the
//! whole virtual machine: docs/testbed.md, "Stalls"), counted. With `stop_clock_on_stall` the
//! pipe's clock also stops for it, so that every packet it holds leaves as late as the stall made
//! the first and no later, spaced as it was, instead of all at once when the stall ends; but the
//! link then idles for the stall too, while whatever the hosts sent meanwhile waits to be read.

use std::collections::VecDeque;

use tcplab_sim::ids::{FlowId, NodeId};
use tcplab_sim::net::packet::{Ecn, Flags, Kind, Packet, MAX_SACK_BLOCKS};
use tcplab_sim::net::queue::{Queue, QueueDisc};
use tcplab_sim::rng::{Rng, Stream};
use tcplab_sim::spec::{CakeAckFilter, QueueSpec};
use tcplab_sim::time::{tx_time_ns, Nanos};

use crate::hist::Histogram;

/// Bytes per slab slot: an IP packet of a 1500-byte MTU (TSO/GSO/GRO are off on the testbed's
/// links), rounded up. Longer packets are dropped and counted.
pub const SLOT_BYTES: usize = 2048;

/// The bottleneck of one direction.
#[derive(Clone, Debug)]
pub struct PipeConfig {
    pub rate_bps: u64,
    /// Later rates: `(offset_ns, rate_bps)` from the schedule's start ([`Pipe::start_schedule`]),
    /// in increasing time; a packet is serialised at the rate of its start time.
    pub rate_schedule: Vec<(Nanos, u64)>,
    /// One-way delay added after serialisation.
    pub delay_ns: Nanos,
    /// Bytes added to each packet's size for the rate (e.g. 38 for Ethernet framing); 0 counts IP bytes.
    pub overhead_bytes: u32,
    pub queue: QueueSpec,
    /// Seed and stream id of the queue discipline's random numbers (RED's early drops).
    pub seed: u64,
    pub stream: u32,
    /// Packet buffers (queue + delay line); an arrival finding none free is dropped and counted.
    pub slots: usize,
    /// Lateness beyond which a wake-up is a stall (see the module's head); `None` counts none.
    pub stall_ns: Option<Nanos>,
    /// Stop the pipe's clock for each stall (a `--pcap-fwd` capture keeps the real times).
    pub stop_clock_on_stall: bool,
}

/// IP bytes from which an arrival is a data segment: a bulk flow's first one is the first packet
/// this long (its segments carry 1448 bytes of payload on the testbed's 1500-byte MTU), while
/// what iperf3 sends before its data (handshakes, cookie, parameters) stays under 300 bytes.
pub const DATA_MIN_BYTES: usize = 1000;

/// Per-source-address counters (IPv4 source of the packets the router received).
#[derive(Clone, Copy, Debug, Default)]
pub struct SourceStats {
    pub addr: u32,
    pub pkts: u64,
    pub bytes: u64,
    pub dropped: u64,
    /// Packets the queue discipline marked CE (ECN) instead of dropping them.
    pub marked: u64,
    /// Real time (CLOCK_MONOTONIC, as `arrive` was given it) of the source's first arrival of
    /// [`DATA_MIN_BYTES`] or more: when its data started, after any preamble.
    pub first_data_ns: Option<Nanos>,
}

/// What a direction measured.
#[derive(Clone, Debug)]
pub struct Stats {
    pub received_pkts: u64,
    pub received_bytes: u64,
    pub forwarded_pkts: u64,
    /// Dropped by the queue discipline on arrival.
    pub dropped_pkts: u64,
    /// Dropped because no slab slot was free or the packet exceeded a slot.
    pub overflow_pkts: u64,
    pub write_errors: u64,
    pub max_pkts: usize,
    pub max_bytes: u64,
    /// ∫ queue length (packets) dt, in packet·ns, for the time average.
    pub area_pkt_ns: u128,
    pub first_ns: Option<Nanos>,
    pub last_ns: Nanos,
    /// Release time minus deadline (ns): how late the timer let each packet out. With
    /// `stop_clock_on_stall` the first packet out after a stall counts the stall in, and the
    /// others due in it leave on the stopped clock.
    pub lateness: Histogram,
    /// Stalls (wake-ups later than `stall_ns`): how many, how long in all, the longest.
    pub stalls: u64,
    pub stalled_ns: Nanos,
    pub longest_stall_ns: Nanos,
    /// Time from arrival to the start of serialisation (ns).
    pub sojourn: Histogram,
    /// Per IPv4 source (few: one per host), in order of first appearance.
    pub sources: Vec<SourceStats>,
}

impl Stats {
    fn new() -> Stats {
        Stats {
            received_pkts: 0,
            received_bytes: 0,
            forwarded_pkts: 0,
            dropped_pkts: 0,
            overflow_pkts: 0,
            write_errors: 0,
            max_pkts: 0,
            max_bytes: 0,
            area_pkt_ns: 0,
            first_ns: None,
            last_ns: 0,
            lateness: Histogram::new(),
            stalls: 0,
            stalled_ns: 0,
            longest_stall_ns: 0,
            sojourn: Histogram::new(),
            sources: Vec::with_capacity(64),
        }
    }

    /// Time-average queue length in packets since the first arrival.
    pub fn mean_pkts(&self) -> f64 {
        match self.first_ns {
            Some(first) if self.last_ns > first => self.area_pkt_ns as f64 / (self.last_ns - first) as f64,
            _ => 0.0,
        }
    }

    fn source(&mut self, addr: u32) -> Option<&mut SourceStats> {
        let i = self.source_index(addr)?;
        Some(&mut self.sources[i])
    }

    /// The source's place in `sources`, added if new.
    fn source_index(&mut self, addr: u32) -> Option<usize> {
        if let Some(i) = self.sources.iter().position(|s| s.addr == addr) {
            return Some(i);
        }
        if self.sources.len() == self.sources.capacity() {
            return None; // no allocation on the packet path: sources past 64 go uncounted
        }
        self.sources.push(SourceStats { addr, ..SourceStats::default() });
        Some(self.sources.len() - 1)
    }
}

/// The IPv4 source address of a packet, if it is one.
pub fn ipv4_source(packet: &[u8]) -> Option<u32> {
    if packet.len() >= 20 && packet[0] >> 4 == 4 {
        Some(u32::from_be_bytes([packet[12], packet[13], packet[14], packet[15]]))
    } else {
        None
    }
}

/// The TOS byte of an IPv4 packet, its DS field: the DSCP and the ECN field (0 for anything
/// else).
pub fn ipv4_tos(packet: &[u8]) -> u8 {
    if packet.len() >= 20 && packet[0] >> 4 == 4 {
        packet[1]
    } else {
        0
    }
}

/// The ECN field of an IPv4 packet (RFC 3168 §5: the low two bits of the TOS byte).
pub fn ipv4_ecn(packet: &[u8]) -> Ecn {
    Ecn::from_bits(ipv4_tos(packet))
}

/// For CAKE's ACK filter: the TCP header of an IPv4 packet read into `pkt`. A pure ACK (the
/// ACK flag, no SYN, no payload) gets [`Flags::PURE_ACK`]; ECE and CWR their flags, PSH, FIN,
/// RST and URG [`Flags::OTHER_TCP`]; `ack` the acknowledgement number, `sack` the SACK blocks
/// (bytes), `ts_val_ns`/`ts_ecr_ns` the timestamp option's two values (the 32-bit TSval and
/// TSecr, not nanoseconds), and `dst` the ports (source << 16 | destination), which with the
/// source address (`flow`) tell the connection apart. Anything else is left as it was.
pub fn read_tcp_ack(packet: &[u8], pkt: &mut Packet) {
    if packet.len() < 20 || packet[0] >> 4 != 4 || packet[9] != 6 {
        return;
    }
    let ihl = (packet[0] & 0x0f) as usize * 4;
    let total = (u16::from_be_bytes([packet[2], packet[3]]) as usize).min(packet.len());
    let Some(tcp) = packet.get(ihl..total) else { return };
    if tcp.len() < 20 {
        return;
    }
    let doff = (tcp[12] >> 4) as usize * 4;
    let flags = tcp[13];
    let word = |at: usize| u32::from_be_bytes([tcp[at], tcp[at + 1], tcp[at + 2], tcp[at + 3]]);
    if doff < 20 || doff > tcp.len() || flags & 0x10 == 0 || flags & 0x02 != 0 || tcp.len() != doff {
        return;
    }
    pkt.set_flag(Flags::PURE_ACK, true);
    pkt.set_flag(Flags::ECE, flags & 0x40 != 0);
    pkt.set_flag(Flags::CWR, flags & 0x80 != 0);
    pkt.set_flag(Flags::OTHER_TCP, flags & 0x2d != 0);
    pkt.ack = word(8);
    pkt.dst = NodeId(word(0));
    let mut at = 20;
    while at < doff {
        let kind = tcp[at];
        if kind == 0 {
            break;
        }
        if kind == 1 {
            at += 1;
            continue;
        }
        let Some(&len) = tcp.get(at + 1) else { break };
        let len = len as usize;
        if len < 2 || at + len > doff {
            break;
        }
        match kind {
            5 => {
                let n = ((len - 2) / 8).min(MAX_SACK_BLOCKS);
                for b in 0..n {
                    pkt.sack[b] = (word(at + 2 + 8 * b), word(at + 6 + 8 * b));
                }
                pkt.n_sack = n as u8;
            }
            8 if len == 10 => {
                pkt.ts_val_ns = word(at + 2) as u64;
                pkt.ts_ecr_ns = word(at + 6) as u64;
            }
            _ => {}
        }
        at += len;
    }
}

/// Write `tos` into an IPv4 packet's TOS byte (its DSCP and ECN field) and compute its header
/// checksum anew. Whether the byte changed: not for a packet that is not IPv4, or one that
/// already carries `tos`.
pub fn ipv4_set_tos(packet: &mut [u8], tos: u8) -> bool {
    if packet.len() < 20 || packet[0] >> 4 != 4 || packet[1] == tos {
        return false;
    }
    packet[1] = tos;
    let ihl = ((packet[0] & 0x0f) as usize * 4).clamp(20, packet.len());
    packet[10] = 0;
    packet[11] = 0;
    let check = !ones_complement_sum(&packet[..ihl]);
    packet[10..12].copy_from_slice(&check.to_be_bytes());
    true
}

/// The Internet checksum's 16-bit one's-complement sum of `bytes` (RFC 1071; an odd last byte
/// padded with zero). A header's checksum is its complement with the checksum field zero; a
/// header whose checksum is right sums to 0xffff.
pub fn ones_complement_sum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = bytes.chunks(2).map(|w| u32::from(w[0]) << 8 | u32::from(*w.get(1).unwrap_or(&0))).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

pub struct Pipe {
    cfg: PipeConfig,
    slab: Vec<u8>,
    lens: Vec<u16>,
    free: Vec<u32>,
    queue: Queue,
    /// (release time, slot), in release order (constant delay keeps it FIFO).
    delay_line: VecDeque<(Nanos, u32)>,
    /// When the transmitter finishes the packet it is serialising (ideal time).
    link_free_ns: Nanos,
    /// Time of the last queue-length change (for the occupancy integral).
    last_change_ns: Nanos,
    /// How long the pipe's clock has stood still for stalls: its time is the real time minus this.
    stopped_ns: Nanos,
    /// A stall not yet counted into a packet's lateness.
    uncounted_stall_ns: Nanos,
    /// The pipe's time at the last stall: packets due before it were late for that one.
    last_stall_ns: Nanos,
    /// Whether the queue reads TCP headers (CAKE's ACK filter).
    read_acks: bool,
    /// Whether the queue clears the DSCP of what it sends (CAKE's `wash`).
    wash: bool,
    /// The rate packets are serialised at now.
    rate_bps: u64,
    /// The pipe's time of the rate schedule's start, once started.
    schedule_start_ns: Option<Nanos>,
    /// Rate changes of the schedule applied so far.
    rate_changes: usize,
    /// A packet was handed to a link that went down for good (no step brings it back).
    stranded: bool,
    pub stats: Stats,
}

impl Pipe {
    pub fn new(cfg: PipeConfig) -> Pipe {
        assert!(cfg.rate_bps > 0, "rate must be positive");
        assert!(cfg.slots > 0 && cfg.slots <= u32::MAX as usize, "slots out of range");
        let slots = cfg.slots;
        let mut slab = vec![0u8; slots * SLOT_BYTES];
        // Touch every page now, so that no page fault lands on the packet path.
        for byte in slab.iter_mut().step_by(4096) {
            *byte = 1;
        }
        Pipe {
            slab,
            lens: vec![0; slots],
            // Popped from the end: slot 0 first.
            free: (0..slots as u32).rev().collect(),
            queue: Queue::from_spec(&cfg.queue, cfg.rate_bps, cfg.delay_ns, Rng::stream(cfg.seed, Stream::Queue, cfg.stream)),
            delay_line: VecDeque::with_capacity(slots),
            link_free_ns: 0,
            last_change_ns: 0,
            stopped_ns: 0,
            uncounted_stall_ns: 0,
            last_stall_ns: 0,
            read_acks: matches!(&cfg.queue, QueueSpec::Cake { cake, .. } if cake.ack_filter != CakeAckFilter::None),
            wash: matches!(&cfg.queue, QueueSpec::Cake { cake, .. } if cake.wash),
            rate_bps: cfg.rate_bps,
            schedule_start_ns: None,
            rate_changes: 0,
            stranded: false,
            stats: Stats::new(),
            cfg,
        }
    }

    pub fn config(&self) -> &PipeConfig {
        &self.cfg
    }

    /// A free slot to read the next packet into, or `None` when all are in use.
    pub fn free_slot(&mut self) -> Option<(u32, &mut [u8])> {
        let slot = *self.free.last()?;
        let start = slot as usize * SLOT_BYTES;
        Some((slot, &mut self.slab[start..start + SLOT_BYTES]))
    }

    /// The first `len` bytes of slot `slot` (a packet just read into it by `free_slot`).
    pub fn slot_bytes(&self, slot: u32, len: usize) -> &[u8] {
        let start = slot as usize * SLOT_BYTES;
        &self.slab[start..start + len.min(SLOT_BYTES)]
    }

    /// Count an arrival that found no free slot (or did not fit one): dropped before the queue.
    pub fn overflow(&mut self, len: usize) {
        self.stats.received_pkts += 1;
        self.stats.received_bytes += len as u64;
        self.stats.overflow_pkts += 1;
    }

    /// The pipe's time at real time `now`. If `now` is a wake-up later than `stall_ns` for the
    /// packet due first (and that packet was not late for an earlier stall), the stall is counted
    /// and, with `stop_clock_on_stall`, the clock stops for it.
    fn clock(&mut self, now: Nanos) -> Nanos {
        let t = now.saturating_sub(self.stopped_ns);
        let (Some(limit), Some(&(due, _))) = (self.cfg.stall_ns, self.delay_line.front()) else {
            return t;
        };
        let late = t.saturating_sub(due);
        if late <= limit || due <= self.last_stall_ns {
            return t;
        }
        self.stats.stalls += 1;
        self.stats.stalled_ns += late;
        self.stats.longest_stall_ns = self.stats.longest_stall_ns.max(late);
        if !self.cfg.stop_clock_on_stall {
            self.last_stall_ns = t;
            return t;
        }
        self.stopped_ns += late;
        self.uncounted_stall_ns += late;
        due
    }

    /// Start the rate schedule at real time `now` (CLOCK_MONOTONIC, as every `now` here): its
    /// offsets count from there. Once only; later calls change nothing.
    pub fn start_schedule(&mut self, now: Nanos) {
        self.schedule_start_ns.get_or_insert(now.saturating_sub(self.stopped_ns));
    }

    /// The rate now (the schedule's latest step, else the configured rate) and how many of the
    /// schedule's steps have come.
    pub fn rate(&self) -> (u64, usize) {
        (self.rate_bps, self.rate_changes)
    }

    /// Apply the schedule's steps at or before pipe time `t`.
    fn schedule_to(&mut self, t: Nanos) {
        if let Some(origin) = self.schedule_start_ns {
            while let Some(&(offset, rate)) = self.cfg.rate_schedule.get(self.rate_changes) {
                if origin + offset > t {
                    break;
                }
                self.rate_bps = rate;
                self.rate_changes += 1;
            }
        }
    }

    /// When a `size`-byte packet handed to the link at pipe time `start` ends serialisation: at
    /// the rate of the schedule's latest step at or before `start`. While the link is down (rate
    /// 0) the packet waits at the transmitter for the step that brings it back, as the
    /// simulator's does; `None` if none does.
    fn transmit(&mut self, size: u32, start: Nanos) -> Option<Nanos> {
        self.schedule_to(start);
        let mut start = start;
        if self.rate_bps == 0 {
            // Only a started schedule sets rate 0.
            let origin = self.schedule_start_ns?;
            let &(offset, _) = self.cfg.rate_schedule[self.rate_changes..].iter().find(|&&(_, rate)| rate != 0)?;
            start = origin + offset;
            self.schedule_to(start);
        }
        Some(start + tx_time_ns(size + self.cfg.overhead_bytes, self.rate_bps))
    }

    fn occupancy_to(&mut self, t: Nanos) {
        let t = t.max(self.last_change_ns);
        self.stats.area_pkt_ns += self.queue.len_pkts() as u128 * (t - self.last_change_ns) as u128;
        self.last_change_ns = t;
        self.stats.last_ns = self.stats.last_ns.max(t);
    }

    /// The packet read into the slot `free_slot` gave (`len` bytes) arrived at `now`: offer it to
    /// the queue. Returns whether it was queued.
    pub fn arrive(&mut self, slot: u32, len: usize, now: Nanos) -> bool {
        // Take the slot off the free list before anything else can put slots back on it: the
        // serialisation below may free the slots of packets CoDel drops as it dequeues.
        let taken = self.free.pop();
        debug_assert_eq!(taken, Some(slot), "arrive() takes the slot free_slot() gave");
        let real_now = now;
        let now = self.clock(now);
        self.serialise(now);
        let start = slot as usize * SLOT_BYTES;
        let source = ipv4_source(&self.slab[start..start + len.min(SLOT_BYTES)]);
        self.stats.first_ns.get_or_insert(now);
        if len > SLOT_BYTES || len > u16::MAX as usize {
            self.free.push(slot);
            self.overflow(len);
            return false;
        }
        self.stats.received_pkts += 1;
        self.stats.received_bytes += len as u64;
        // The flow is the source (a discipline with a queue per source, DRR, tells them apart by
        // it); sources past the counted ones share one.
        let flow = source.and_then(|a| self.stats.source_index(a)).unwrap_or(self.stats.sources.capacity());
        let mut pkt = Packet::new(FlowId(flow as u32), NodeId(0), Kind::Data, len as u32);
        pkt.seq = slot; // the packet's bytes live in slab slot `seq`
        pkt.tos = ipv4_tos(&self.slab[start..start + len]);
        if self.read_acks {
            read_tcp_ack(&self.slab[start..start + len], &mut pkt);
        }
        pkt.enq_ns = now;
        self.lens[slot as usize] = len as u16;
        self.occupancy_to(now);
        let result = self.queue.enqueue(pkt, now);
        // The packet handed back may be another, queued before, that this one pushed out (DRR).
        let queued = !matches!(&result, Err(p) if p.seq == slot);
        if queued {
            self.stats.max_pkts = self.stats.max_pkts.max(self.queue.len_pkts());
            self.stats.max_bytes = self.stats.max_bytes.max(self.queue.len_bytes());
        } else {
            self.free.push(slot);
            self.stats.dropped_pkts += 1;
        }
        if let Err(p) = result {
            if queued {
                self.drop_queued(p.seq);
            }
        }
        if self.queue.has_dropped() {
            self.queue_drops();
        }
        if let Some(s) = source.and_then(|a| self.stats.source(a)) {
            s.pkts += 1;
            s.bytes += len as u64;
            s.dropped += u64::from(!queued);
            if len >= DATA_MIN_BYTES {
                s.first_data_ns.get_or_insert(real_now);
            }
        }
        self.serialise(now);
        queued
    }

    /// Start serialising every queued packet whose ideal start time is at or before `now`: when
    /// the link is free and the queue's shaper (CAKE's) lets it go.
    fn serialise(&mut self, now: Nanos) {
        while self.queue.len_pkts() > 0 {
            let start_at = self.link_free_ns.max(self.queue.hold_until());
            if start_at > now {
                break;
            }
            // The queue's departure happens at the ideal start (≥ the last change: times are ordered).
            self.occupancy_to(start_at);
            let pkt = self.queue.dequeue(start_at);
            if self.queue.has_dropped() {
                self.queue_drops();
            }
            // CoDel may have dropped every packet left.
            let Some(pkt) = pkt else { continue };
            // The discipline may have changed the DS field: a CE mark, CAKE's wash.
            if pkt.ecn() == Ecn::CE || self.wash {
                self.write_tos(&pkt);
            }
            let start = start_at.max(pkt.enq_ns);
            if start > start_at {
                self.occupancy_to(start);
            }
            self.stats.sojourn.record(start - pkt.enq_ns);
            let Some(finish) = self.transmit(pkt.size_bytes, start) else {
                // Down to the end: the packet stays at the transmitter, the rest in the queue.
                self.stranded = true;
                self.link_free_ns = Nanos::MAX;
                break;
            };
            self.link_free_ns = finish;
            self.delay_line.push_back((finish + self.cfg.delay_ns, pkt.seq));
        }
        // An idle link is free from now on (a packet arriving later starts at its arrival). The
        // discipline learns when it found nothing to send (RED's idle time starts there).
        if self.queue.len_pkts() == 0 && self.link_free_ns < now {
            let none = self.queue.dequeue(self.link_free_ns);
            debug_assert!(none.is_none());
            self.link_free_ns = now;
        }
    }

    /// The discipline changed the DS field of the packet in slot `pkt.seq` (a CE mark, on arrival
    /// or at the head; CAKE's wash): write `pkt.tos` into its IP header, and count a CE mark new
    /// here against its source.
    #[cold]
    fn write_tos(&mut self, pkt: &Packet) {
        let start = pkt.seq as usize * SLOT_BYTES;
        let bytes = &mut self.slab[start..start + self.lens[pkt.seq as usize] as usize];
        let was_ce = ipv4_ecn(bytes) == Ecn::CE;
        if ipv4_set_tos(bytes, pkt.tos) && pkt.ecn() == Ecn::CE && !was_ce {
            if let Some(s) = ipv4_source(bytes).and_then(|a| self.stats.source(a)) {
                s.marked += 1;
            }
        }
    }

    /// Count and free the packets the discipline dropped from the queue beyond an arrival it
    /// handed back (CoDel's at the head, DRR's further push-outs).
    #[cold]
    fn queue_drops(&mut self) {
        let mut slots = Vec::new();
        self.queue.take_dropped(|pkt| slots.push(pkt.seq));
        for slot in slots {
            self.drop_queued(slot);
        }
    }

    /// A packet in slab slot `slot`, queued before, was dropped: count it against its source and
    /// free the slot.
    #[cold]
    fn drop_queued(&mut self, slot: u32) {
        self.stats.dropped_pkts += 1;
        let start = slot as usize * SLOT_BYTES;
        let len = self.lens[slot as usize] as usize;
        if let Some(s) = ipv4_source(&self.slab[start..start + len]).and_then(|a| self.stats.source(a)) {
            s.dropped += 1;
        }
        self.free.push(slot);
    }

    /// Release every packet whose time has come, in order, through `send`, and record how late
    /// each is. `send` returns `false` when the write failed (counted).
    pub fn service(&mut self, now: Nanos, mut send: impl FnMut(&[u8]) -> bool) {
        let now = self.clock(now);
        self.serialise(now);
        while let Some(&(release, slot)) = self.delay_line.front() {
            if release > now {
                break;
            }
            self.delay_line.pop_front();
            self.stats.lateness.record(now - release + std::mem::take(&mut self.uncounted_stall_ns));
            let start = slot as usize * SLOT_BYTES;
            let len = self.lens[slot as usize] as usize;
            if send(&self.slab[start..start + len]) {
                self.stats.forwarded_pkts += 1;
            } else {
                self.stats.write_errors += 1;
            }
            self.free.push(slot);
        }
        self.occupancy_to(now);
    }

    /// The next time `service` has work: the release of the head of the delay line, or the time
    /// a shaper (CAKE's) lets the next queued packet go. Queued packets need no other wake-up of
    /// their own: while any waits for the link, the packet being serialised is already in the
    /// delay line (it enters at its start), and dequeues are computed on ideal times.
    pub fn next_deadline(&self) -> Option<Nanos> {
        let line = self.delay_line.front().map(|&(t, _)| t);
        let held = Some(self.queue.hold_until()).filter(|&t| t > self.link_free_ns && self.queue.len_pkts() > 0);
        line.into_iter().chain(held).min().map(|t| t + self.stopped_ns)
    }

    /// Packets the queue discipline dropped apart from its limit (RED's early drops, CoDel's at
    /// the head), among `stats.dropped_pkts`.
    pub fn early_drop_pkts(&self) -> u64 {
        self.queue.early_drops()
    }

    /// Packets the queue discipline marked CE instead of dropping them (ECN).
    pub fn marked_pkts(&self) -> u64 {
        self.queue.marks()
    }

    pub fn queued_pkts(&self) -> usize {
        self.queue.len_pkts()
    }

    /// Packets past the queue not yet released: in serialisation or propagation, or stranded
    /// at the transmitter of a link down for good.
    pub fn in_flight_pkts(&self) -> usize {
        self.delay_line.len() + usize::from(self.stranded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_sim::spec::{CakeAtm, CakeBandwidth, CakeSpec};

    const MS: Nanos = 1_000_000;

    fn pipe(rate_bps: u64, delay_ns: Nanos, limit_pkts: u64) -> Pipe {
        Pipe::new(PipeConfig {
            rate_bps,
            rate_schedule: Vec::new(),
            delay_ns,
            overhead_bytes: 0,
            queue: QueueSpec::Droptail { limit_pkts: Some(limit_pkts), limit_bytes: None },
            seed: 1,
            stream: 0,
            slots: 64,
            stall_ns: None,
            stop_clock_on_stall: false,
        })
    }

    fn stalling_pipe(rate_bps: u64, delay_ns: Nanos, limit_pkts: u64, stall_ns: Nanos, stop_clock_on_stall: bool) -> Pipe {
        let mut p = pipe(rate_bps, delay_ns, limit_pkts);
        p.cfg.stall_ns = Some(stall_ns);
        p.cfg.stop_clock_on_stall = stop_clock_on_stall;
        p
    }

    /// Offer a `len`-byte packet tagged with `tag` in its first byte at `now`.
    fn offer(p: &mut Pipe, len: usize, tag: u8, now: Nanos) -> bool {
        let (slot, buf) = p.free_slot().expect("a free slot");
        buf[0] = tag;
        p.arrive(slot, len, now)
    }

    /// Offer `n` packets of `len` bytes at `now`, tagged 0..n; each must be queued.
    fn offer_burst(p: &mut Pipe, n: u8, len: usize, now: Nanos) {
        for k in 0..n {
            assert!(offer(p, len, k, now));
        }
    }

    /// Run `service` at `now`, returning (tag, now) of what left.
    fn drain(p: &mut Pipe, now: Nanos) -> Vec<u8> {
        let mut out = Vec::new();
        p.service(now, |b| {
            out.push(b[0]);
            true
        });
        out
    }

    #[test]
    fn one_packet_leaves_after_serialisation_plus_delay() {
        // 1500 B at 100 Mb/s = 120 µs; plus 25 ms.
        let mut p = pipe(100_000_000, 25 * MS, 10);
        assert!(offer(&mut p, 1500, 7, 1_000));
        assert_eq!(p.next_deadline(), Some(1_000 + 120_000 + 25 * MS));
        assert!(drain(&mut p, 1_000 + 120_000 + 25 * MS - 1).is_empty());
        assert_eq!(drain(&mut p, 1_000 + 120_000 + 25 * MS), vec![7]);
        assert_eq!(p.stats.lateness.max(), 0);
        assert_eq!(p.next_deadline(), None);
    }

    #[test]
    fn a_burst_is_paced_at_the_rate_even_when_serviced_late() {
        // Ten 1250-byte packets at 10 Mb/s: 1 ms apart, released at (k+1) ms + 5 ms.
        let mut p = pipe(10_000_000, 5 * MS, 100);
        offer_burst(&mut p, 10, 1250, 0);
        let deadlines: Vec<Nanos> = (0..10).map(|k| (k + 1) * MS + 5 * MS).collect();
        assert_eq!(p.next_deadline(), Some(deadlines[0]));
        // Woken 300 µs late for the 4th packet: the first four leave together...
        let late = deadlines[3] + 300_000;
        assert_eq!(drain(&mut p, late), vec![0, 1, 2, 3]);
        // ...but the fifth keeps its ideal time: lateness does not accumulate.
        assert_eq!(p.next_deadline(), Some(deadlines[4]));
        assert_eq!(drain(&mut p, 20 * MS), vec![4, 5, 6, 7, 8, 9]);
        assert_eq!(p.stats.forwarded_pkts, 10);
        assert_eq!(p.stats.lateness.max(), 20 * MS - deadlines[4]);
    }

    #[test]
    fn droptail_limit_counts_the_packet_being_sent_as_gone() {
        // Limit 2: the first packet starts serialising at once, two more wait, the fourth drops.
        let mut p = pipe(10_000_000, 0, 2);
        assert!(offer(&mut p, 1250, 0, 0));
        assert!(offer(&mut p, 1250, 1, 0));
        assert!(offer(&mut p, 1250, 2, 0));
        assert!(!offer(&mut p, 1250, 3, 0));
        assert_eq!(p.stats.dropped_pkts, 1);
        assert_eq!(p.queued_pkts(), 2);
        // At 1 ms packet 1 starts: one place frees up.
        assert_eq!(drain(&mut p, MS), vec![0]);
        assert!(offer(&mut p, 1250, 4, MS));
        assert!(!offer(&mut p, 1250, 5, MS));
        assert_eq!(drain(&mut p, 10 * MS), vec![1, 2, 4]);
        assert_eq!(p.stats.max_pkts, 2);
    }

    #[test]
    fn idle_link_starts_a_later_arrival_at_its_arrival() {
        let mut p = pipe(8_000_000, 0, 10); // 1000 B = 1 ms
        assert!(offer(&mut p, 1000, 0, 0));
        assert_eq!(drain(&mut p, MS), vec![0]);
        assert!(offer(&mut p, 1000, 1, 50 * MS));
        assert_eq!(p.next_deadline(), Some(51 * MS));
    }

    /// Each packet's tag and release time, servicing the pipe at each deadline until it is empty.
    fn releases(p: &mut Pipe) -> Vec<(u8, Nanos)> {
        let mut out = Vec::new();
        while let Some(t) = p.next_deadline() {
            out.extend(drain(p, t).into_iter().map(|tag| (tag, t)));
        }
        out
    }

    #[test]
    fn the_rate_schedule_counts_from_its_start_and_a_packet_keeps_its_starting_rate() {
        // 1000 B: 1 ms at 8 Mb/s, 2 ms at 4 Mb/s from 4.5 ms after the schedule's start.
        let scheduled = |start: Option<Nanos>| {
            let mut p = pipe(8_000_000, 0, 20);
            p.cfg.rate_schedule = vec![(4_500_000, 4_000_000)];
            if let Some(t) = start {
                p.start_schedule(t);
            }
            offer_burst(&mut p, 9, 1000, 0);
            (releases(&mut p), p.rate())
        };
        // Not started: the configured rate throughout.
        let (out, rate) = scheduled(None);
        assert_eq!(out, (0..9).map(|k| (k, (k as Nanos + 1) * MS)).collect::<Vec<_>>());
        assert_eq!(rate, (8_000_000, 0));
        // Started at 1 ms: the change is at 5.5 ms; packet 5 started at 5 ms and keeps 1 ms,
        // packet 6 starts at 6 ms and takes 2.
        let (out, rate) = scheduled(Some(MS));
        let ends = [1, 2, 3, 4, 5, 6, 8, 10, 12];
        assert_eq!(out, (0..9).map(|k| (k, ends[k as usize] * MS)).collect::<Vec<_>>());
        assert_eq!(rate, (4_000_000, 1));
        // A second start changes nothing.
        let mut p = pipe(8_000_000, 0, 20);
        p.cfg.rate_schedule = vec![(0, 4_000_000)];
        p.start_schedule(10 * MS);
        p.start_schedule(0);
        offer_burst(&mut p, 2, 1000, 0);
        assert_eq!(releases(&mut p), vec![(0, MS), (1, 2 * MS)]);
    }

    #[test]
    fn a_link_at_rate_zero_is_down_and_the_next_packet_waits_at_the_transmitter() {
        // 1000 B at 8 Mb/s: 1 ms each. Down from 1.5 ms to 6 ms: packet 1 (started at 1 ms)
        // keeps its end; packet 2, handed over at 2 ms, starts at 6 ms; the rest follow it.
        let down = |schedule: Vec<(Nanos, u64)>| {
            let mut p = pipe(8_000_000, 0, 20);
            p.cfg.rate_schedule = schedule;
            p.start_schedule(0);
            offer_burst(&mut p, 6, 1000, 0);
            let out = releases(&mut p);
            (out, p.queued_pkts(), p.in_flight_pkts())
        };
        let (out, queued, in_flight) = down(vec![(1_500_000, 0), (6 * MS, 8_000_000)]);
        let ends = [1, 2, 7, 8, 9, 10];
        assert_eq!(out, (0..6).map(|k| (k, ends[k as usize] * MS)).collect::<Vec<_>>());
        assert_eq!((queued, in_flight), (0, 0));
        // Back at another rate (4 Mb/s: 2 ms each), through a second zero step.
        let (out, ..) = down(vec![(1_500_000, 0), (3 * MS, 0), (6 * MS, 4_000_000)]);
        let ends = [1, 2, 8, 10, 12, 14];
        assert_eq!(out, (0..6).map(|k| (k, ends[k as usize] * MS)).collect::<Vec<_>>());
        // Down for good: packet 2 stays at the transmitter, three more in the queue.
        let (out, queued, in_flight) = down(vec![(1_500_000, 0)]);
        assert_eq!(out, vec![(0, MS), (1, 2 * MS)]);
        assert_eq!((queued, in_flight), (3, 1));
    }

    #[test]
    fn overhead_bytes_slow_the_rate() {
        let mut p = Pipe::new(PipeConfig {
            rate_bps: 8_000_000,
            rate_schedule: Vec::new(),
            delay_ns: 0,
            overhead_bytes: 24,
            queue: QueueSpec::Droptail { limit_pkts: Some(10), limit_bytes: None },
            seed: 1,
            stream: 0,
            slots: 4,
            stall_ns: None,
            stop_clock_on_stall: false,
        });
        assert!(offer(&mut p, 976, 0, 0));
        assert_eq!(p.next_deadline(), Some(MS)); // (976 + 24) B at 8 Mb/s
    }

    #[test]
    fn occupancy_average_and_sojourn_follow_the_queue() {
        // Three 1 ms packets at t=0: queue holds 2 for 1 ms, then 1 for 1 ms: area 3 pkt·ms.
        let mut p = pipe(8_000_000, 0, 10);
        for k in 0..3 {
            assert!(offer(&mut p, 1000, k, 0));
        }
        assert_eq!(drain(&mut p, 4 * MS), vec![0, 1, 2]);
        assert_eq!(p.stats.area_pkt_ns, 3 * MS as u128);
        assert!((p.stats.mean_pkts() - 0.75).abs() < 1e-12);
        assert_eq!(p.stats.sojourn.max(), 2 * MS);
    }

    #[test]
    fn a_stall_that_stops_the_clock_delays_what_the_pipe_holds_by_its_length_and_keeps_the_spacing() {
        // Ten 1250-byte packets at 10 Mb/s, 1 ms apart, due at (k+1) ms + 5 ms; stalls from 1 ms.
        let mut p = stalling_pipe(10_000_000, 5 * MS, 100, MS, true);
        offer_burst(&mut p, 10, 1250, 0);
        // The router stood still for 4.5 ms past the first packet's time: that one leaves now,
        // counted 4.5 ms late; every later one leaves 4.5 ms after its time, 1 ms apart.
        let stall = 4_500_000;
        assert_eq!(drain(&mut p, 6 * MS + stall), vec![0]);
        assert_eq!((p.stats.stalls, p.stats.stalled_ns, p.stats.longest_stall_ns), (1, stall, stall));
        assert_eq!(p.stats.lateness.max(), stall);
        for k in 1..10u8 {
            let due = (u64::from(k) + 6) * MS + stall;
            assert_eq!(p.next_deadline(), Some(due));
            assert!(drain(&mut p, due - 1).is_empty());
            assert_eq!(drain(&mut p, due), vec![k]);
        }
        assert_eq!(p.stats.lateness.max(), stall);
        assert_eq!(p.stats.lateness.count(), 10);
        // A packet arriving after the stall queues on the stopped clock: the link is idle, so it
        // leaves 1 ms (serialisation) + 5 ms after it came.
        assert!(offer(&mut p, 1250, 10, 30 * MS));
        assert_eq!(p.next_deadline(), Some(36 * MS));
    }

    #[test]
    fn lateness_up_to_the_stall_limit_is_only_lateness() {
        let mut p = stalling_pipe(10_000_000, 5 * MS, 100, MS, true);
        offer_burst(&mut p, 3, 1250, 0);
        // 1 ms late for the first packet: not a stall; the second keeps its own time.
        assert_eq!(drain(&mut p, 7 * MS), vec![0, 1]);
        assert_eq!(p.stats.stalls, 0);
        assert_eq!(p.next_deadline(), Some(8 * MS));
        // Without a limit (stall_ns None) a 4.5 ms stand-still is not counted.
        let mut q = pipe(10_000_000, 5 * MS, 100);
        offer_burst(&mut q, 10, 1250, 0);
        assert_eq!(drain(&mut q, 6 * MS + 4_500_000), vec![0, 1, 2, 3, 4]);
        assert_eq!(q.stats.stalls, 0);
    }

    #[test]
    fn a_stall_is_counted_once_and_the_clock_runs_on_unless_told() {
        let mut p = stalling_pipe(10_000_000, 5 * MS, 100, MS, false);
        offer_burst(&mut p, 10, 1250, 0);
        // 4.5 ms late: everything due leaves at once, the rest on time; one stall of 4.5 ms.
        let stall = 4_500_000;
        assert_eq!(drain(&mut p, 6 * MS + stall), vec![0, 1, 2, 3, 4]);
        assert_eq!(p.next_deadline(), Some(11 * MS));
        // Called again within the same wake-up (as each arrival does): still one stall.
        assert!(drain(&mut p, 6 * MS + stall + 1).is_empty());
        assert_eq!((p.stats.stalls, p.stats.stalled_ns, p.stats.longest_stall_ns), (1, stall, stall));
        assert_eq!(p.stats.lateness.max(), stall);
        // A later 2 ms stall is the second; 1 ms late is none.
        assert_eq!(drain(&mut p, 13 * MS), vec![5, 6, 7]);
        assert_eq!(drain(&mut p, 15 * MS), vec![8, 9]);
        assert_eq!((p.stats.stalls, p.stats.stalled_ns, p.stats.longest_stall_ns), (2, stall + 2 * MS, stall));
    }

    #[test]
    fn slots_run_out_before_the_queue_does() {
        let mut p = Pipe::new(PipeConfig {
            rate_bps: 1_000_000,
            rate_schedule: Vec::new(),
            delay_ns: 0,
            overhead_bytes: 0,
            queue: QueueSpec::Droptail { limit_pkts: Some(100), limit_bytes: None },
            seed: 1,
            stream: 0,
            slots: 2,
            stall_ns: None,
            stop_clock_on_stall: false,
        });
        assert!(offer(&mut p, 100, 0, 0));
        assert!(offer(&mut p, 100, 1, 0));
        assert!(p.free_slot().is_none());
        p.overflow(100);
        assert_eq!(p.stats.overflow_pkts, 1);
        assert_eq!(drain(&mut p, MS * 10), vec![0, 1]);
        assert!(p.free_slot().is_some());
    }

    #[test]
    fn counts_per_ipv4_source() {
        let mut p = pipe(1_000_000_000, 0, 1);
        for (src, now) in [([10, 10, 1, 2], 0), ([10, 10, 2, 2], 0), ([10, 10, 1, 2], 0)] {
            let (slot, buf) = p.free_slot().unwrap();
            buf[0] = 0x45;
            buf[12..16].copy_from_slice(&src);
            p.arrive(slot, 60, now);
        }
        let s = &p.stats.sources;
        assert_eq!(s.len(), 2);
        // The first is serialised at once, the second waits (limit 1), the third finds it full.
        assert_eq!((s[0].addr, s[0].pkts, s[0].dropped), (u32::from_be_bytes([10, 10, 1, 2]), 2, 1));
        assert_eq!((s[1].addr, s[1].pkts, s[1].dropped), (u32::from_be_bytes([10, 10, 2, 2]), 1, 0));
        assert_eq!(p.stats.dropped_pkts, 1);
    }

    #[test]
    fn each_source_notes_when_its_data_began() {
        // A preamble's small packets, then data: the first arrival of DATA_MIN_BYTES or more, at
        // the time it came; a source that sent only small packets has none.
        let mut p = pipe(1_000_000_000, 0, 100);
        let arrivals = [([10, 10, 1, 2], 60, MS), ([10, 10, 1, 2], DATA_MIN_BYTES - 1, 2 * MS), ([10, 10, 1, 2], 1500, 5 * MS), ([10, 10, 1, 2], 1500, 6 * MS), ([10, 10, 2, 2], 200, 7 * MS)];
        for (src, len, now) in arrivals {
            let (slot, buf) = p.free_slot().unwrap();
            buf[0] = 0x45;
            buf[12..16].copy_from_slice(&src);
            p.arrive(slot, len, now);
        }
        let s = &p.stats.sources;
        assert_eq!((s[0].pkts, s[0].first_data_ns), (4, Some(5 * MS)));
        assert_eq!((s[1].pkts, s[1].first_data_ns), (1, None));
    }

    /// RED in the router: arrivals at twice the link's rate meet early drops long before the
    /// 64-packet limit, and once the link has sat idle the average has decayed for that time.
    #[test]
    fn red_drops_early_and_decays_while_the_link_is_idle() {
        let mut p = pipe(12_000_000, MS, 64); // 1 ms per 1500-byte packet
        let red = tcplab_sim::spec::RedSpec { min_thresh_pkts: Some(2.0), max_thresh_pkts: Some(6.0), weight: Some(0.2), byte_mode: false, ..Default::default() };
        p.queue = Queue::from_spec(&QueueSpec::Red { limit_pkts: Some(64), limit_bytes: None, red }, 12_000_000, MS, Rng::stream(1, Stream::Queue, 0));
        let mut most = 0;
        for i in 0..400 {
            let now = i * MS / 2;
            p.service(now, |_| true);
            offer(&mut p, 1500, 0, now);
            most = most.max(p.queued_pkts());
        }
        let early = p.queue.red().expect("RED").early_drops();
        assert!(early > 100 && early == p.stats.dropped_pkts, "{early} early drops of {} drops", p.stats.dropped_pkts);
        assert!(most < 20, "the queue reached {most} packets");
        // Drain, sit idle for a second, arrive again: the average has decayed to nearly nothing.
        p.service(1_000 * MS, |_| true);
        assert_eq!(p.queued_pkts(), 0);
        offer(&mut p, 1500, 0, 1_000 * MS);
        let avg = p.queue.red().expect("RED").avg();
        assert!(avg < 0.01, "average {avg} after a second idle");
    }

    /// A 12 Mb/s pipe (1 ms per 1500-byte packet), 1 ms of delay, 256 slots, queue `queue`.
    fn aqm_pipe(queue: QueueSpec) -> Pipe {
        Pipe::new(PipeConfig {
            rate_bps: 12_000_000,
            rate_schedule: Vec::new(),
            delay_ns: MS,
            overhead_bytes: 0,
            queue,
            seed: 1,
            stream: 0,
            slots: 256,
            stall_ns: None,
            stop_clock_on_stall: false,
        })
    }

    /// CAKE shaped to 10 Mb/s on a 1-Gb/s link without delay: a burst of ten 1500-byte packets
    /// leaves one 1514-byte frame time (1.2112 ms) apart, each 12 µs after its start, and the pipe
    /// asks to be woken when the shaper lets the next go (its delay line is empty by then). A
    /// 50-ms target keeps COBALT from dropping the burst's tail (12 ms at the end).
    #[test]
    fn cakes_shaper_spaces_the_packets_and_wakes_the_pipe() {
        let cake = CakeSpec { bandwidth: CakeBandwidth::RateBps(10_000_000), target_ns: 50 * MS, ..Default::default() };
        let mut p = aqm_pipe(QueueSpec::Cake { limit_pkts: Some(100), limit_bytes: None, cake });
        (p.cfg.rate_bps, p.rate_bps) = (1_000_000_000, 1_000_000_000);
        p.cfg.delay_ns = 0;
        for _ in 0..10 {
            assert!(offer_from(&mut p, 1, 1500, 0));
        }
        let mut out = Vec::new();
        while let Some(t) = p.next_deadline() {
            p.service(t, |_| true);
            out.push(t);
        }
        let frame = 1_211_200;
        let releases: Vec<Nanos> = (0..10).flat_map(|k| [k * frame, k * frame + 12_000]).skip(1).collect();
        // Woken at each packet's release and at each shaper time after it.
        assert_eq!(out, releases);
        assert_eq!((p.stats.forwarded_pkts, p.stats.lateness.max()), (10, 0));
    }

    /// Offer a `len`-byte IPv4 packet from 10.10.`host`.2 at `now`; whether it was queued.
    /// A real pure TCP ACK from 10.10.`host`.2, port 5201 to 40000, acknowledging byte `ack`
    /// with the timestamp option (TSval `ts`) and `sack` blocks, offered at `now`.
    fn offer_ack(p: &mut Pipe, host: u8, ack: u32, ts: u32, sack: &[(u32, u32)], now: Nanos) -> bool {
        let mut tcp = vec![0u8; 20];
        tcp[0..2].copy_from_slice(&5201u16.to_be_bytes());
        tcp[2..4].copy_from_slice(&40000u16.to_be_bytes());
        tcp[8..12].copy_from_slice(&ack.to_be_bytes());
        tcp[13] = 0x10;
        tcp.extend([1, 1, 8, 10]);
        tcp.extend(ts.to_be_bytes());
        tcp.extend(7u32.to_be_bytes());
        if !sack.is_empty() {
            tcp.extend([1, 1, 5, 2 + 8 * sack.len() as u8]);
            for &(a, b) in sack {
                tcp.extend(a.to_be_bytes());
                tcp.extend(b.to_be_bytes());
            }
        }
        tcp[12] = ((tcp.len() / 4) as u8) << 4;
        let len = 20 + tcp.len();
        let (slot, buf) = p.free_slot().expect("a free slot");
        buf[..20].copy_from_slice(&[0x45, 0, 0, len as u8, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 10, host, 2, 10, 10, 0, 1]);
        buf[20..len].copy_from_slice(&tcp);
        p.arrive(slot, len, now)
    }

    /// CAKE's ACK filter in the router reads the real headers: of four ACKs queued behind a
    /// 1500-byte packet on a slow link, the first goes when the third arrives and the second when
    /// the fourth does (each time two older ACKs it covers); an ACK SACKing a block the newer ones
    /// do not report stays.
    #[test]
    fn cakes_ack_filter_reads_the_real_tcp_headers() {
        let mut read = Packet::new(FlowId(0), NodeId(0), Kind::Data, 0);
        let mut p = aqm_pipe(QueueSpec::Cake {
            limit_pkts: Some(100),
            limit_bytes: None,
            cake: CakeSpec { ack_filter: CakeAckFilter::Filter, flow_mode: tcplab_sim::spec::CakeFlowMode::Flowblind, ..Default::default() },
        });
        assert!(offer_from(&mut p, 9, 1500, 0));
        for (k, ack) in [1000, 2000, 3000, 4000].into_iter().enumerate() {
            assert!(offer_ack(&mut p, 1, ack, k as u32, &[], 0));
        }
        let mut sent = Vec::new();
        p.service(100 * MS, |b| {
            let mut pkt = Packet::new(FlowId(0), NodeId(0), Kind::Data, b.len() as u32);
            read_tcp_ack(b, &mut pkt);
            if pkt.has(Flags::PURE_ACK) {
                read = pkt;
                sent.push(pkt.ack);
            }
            true
        });
        assert_eq!(sent, vec![3000, 4000]);
        assert_eq!(p.stats.dropped_pkts, 2);
        // The header as the router read it.
        assert_eq!((read.ts_val_ns, read.ts_ecr_ns, read.dst.0), (3, 7, 5201 << 16 | 40000));

        // A hole reported by the older ACK alone keeps it.
        let mut p = aqm_pipe(QueueSpec::Cake { limit_pkts: Some(100), limit_bytes: None, cake: CakeSpec { ack_filter: CakeAckFilter::Aggressive, ..Default::default() } });
        assert!(offer_from(&mut p, 9, 1500, 0));
        assert!(offer_ack(&mut p, 1, 1000, 1, &[(3000, 4000)], 0));
        assert!(offer_ack(&mut p, 1, 1000, 2, &[(5000, 6000)], 0));
        assert!(offer_ack(&mut p, 1, 1000, 3, &[(5000, 7000)], 0));
        let mut n = 0;
        p.service(100 * MS, |_| {
            n += 1;
            true
        });
        assert_eq!((n, p.stats.dropped_pkts), (3, 1));
    }

    /// CAKE's tins in the router: each packet's DSCP is read from its TOS byte (diffserv3: CS1 to
    /// bulk, EF to voice), and the byte leaves as it came; with `wash`, the tins are the same and
    /// the packets leave with DSCP 0, their ECN field and a valid header checksum.
    #[test]
    fn cakes_tins_read_the_dscp_of_the_real_packets() {
        for wash in [false, true] {
            let mut p = aqm_pipe(QueueSpec::Cake { limit_pkts: Some(100), limit_bytes: None, cake: CakeSpec { wash, ..Default::default() } });
            let sent: [u8; 4] = [0x00, 8 << 2, 46 << 2 | 0b10, 46 << 2];
            for (host, &tos) in sent.iter().enumerate() {
                let (slot, buf) = p.free_slot().expect("a free slot");
                buf[..20].copy_from_slice(&[0x45, tos, 0x05, 0xdc, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 10, host as u8 + 1, 2, 10, 10, 9, 2]);
                let check = !ones_complement_sum(&buf[..20]);
                buf[10..12].copy_from_slice(&check.to_be_bytes());
                assert!(p.arrive(slot, 1500, 0));
            }
            let mut out = Vec::new();
            p.service(100 * MS, |b| {
                assert_eq!(ones_complement_sum(&b[..20]), 0xffff, "a valid header checksum");
                out.push(b[1]);
                true
            });
            let c = p.queue.cake().expect("a CAKE");
            assert_eq!((0..c.tin_count()).map(|t| c.tin_sent(t).0).collect::<Vec<_>>(), vec![1, 1, 2]);
            out.sort_unstable();
            assert_eq!(out, if wash { vec![0, 0, 0, 0b10] } else { vec![0x00, 8 << 2, 46 << 2, 46 << 2 | 0b10] });
        }
    }

    fn offer_from(p: &mut Pipe, host: u8, len: usize, now: Nanos) -> bool {
        let (slot, buf) = p.free_slot().expect("a free slot");
        buf[0] = 0x45;
        buf[12..16].copy_from_slice(&[10, 10, host, 2]);
        p.arrive(slot, len, now)
    }

    /// DRR in the router: a source sending at twice the link's rate and one at half of it share
    /// the link; the light one loses nothing, the heavy one every push-out, charged to it.
    #[test]
    fn drr_keeps_a_light_source_whole_beside_a_heavy_one() {
        let mut p = aqm_pipe(QueueSpec::Drr { limit_pkts: Some(50), limit_bytes: None, drr: tcplab_sim::spec::DrrSpec { quantum_bytes: 1500 } });
        let mut sent = [0u64; 2];
        let mut now = 0;
        for step in 0..4000u64 {
            now = step * MS / 2;
            p.service(now, |b| {
                sent[usize::from(b[14] == 2)] += 1;
                true
            });
            offer_from(&mut p, 1, 1500, now);
            if step % 4 == 0 {
                offer_from(&mut p, 2, 1500, now);
            }
        }
        p.service(now + 200 * MS, |b| {
            sent[usize::from(b[14] == 2)] += 1;
            true
        });
        let s = &p.stats.sources;
        assert_eq!((s[0].pkts, s[1].pkts), (4000, 1000));
        assert_eq!(s[1].dropped, 0, "the light source lost packets");
        assert_eq!(s[0].dropped, p.stats.dropped_pkts);
        assert_eq!(sent[1], 1000);
        assert_eq!(sent[0] + s[0].dropped, 4000);
        assert_eq!(p.free.len(), 256, "every slot is free again");
        assert_eq!(p.early_drop_pkts(), 0, "DRR drops only at the limit");
    }

    /// FRED and CSFQ in the router: a source at twice the link's rate and one at half of it share
    /// the link; the light one loses under 5% (CSFQ's share estimate wavers about its rate), the
    /// heavy one is held near the other half (CSFQ: by the rate it labels its packets with), every
    /// drop charged to it.
    #[test]
    fn fred_and_csfq_hold_a_heavy_source_to_its_share() {
        for queue in [
            QueueSpec::Fred { limit_pkts: Some(50), limit_bytes: None, fred: Default::default() },
            QueueSpec::Csfq { limit_pkts: Some(50), limit_bytes: None, csfq: Default::default() },
        ] {
            let mut p = aqm_pipe(queue.clone());
            let mut sent = [0u64; 2];
            let mut now = 0;
            for step in 0..8000u64 {
                now = step * MS / 2;
                p.service(now, |b| {
                    if now >= 2000 * MS {
                        sent[usize::from(b[14] == 2)] += 1;
                    }
                    true
                });
                offer_from(&mut p, 1, 1500, now);
                if step % 4 == 0 {
                    offer_from(&mut p, 2, 1500, now);
                }
            }
            p.service(now + 200 * MS, |_| true);
            let s = &p.stats.sources;
            assert!(s[1].dropped * 20 < s[1].pkts, "{queue:?}: the light source lost {} of {}", s[1].dropped, s[1].pkts);
            assert_eq!(s[0].dropped + s[1].dropped, p.stats.dropped_pkts);
            assert!(p.early_drop_pkts() > 0);
            // Over the last 2 s the link (1000 packets a second) carried about 1000 of the light
            // source's packets and as many of the heavy one's.
            let heavy = sent[0] as f64 / 1000.0;
            assert!((0.85..1.15).contains(&heavy), "{queue:?}: the heavy source had {heavy:.2} of its share");
            assert_eq!(p.free.len(), 256, "every slot is free again");
        }
    }

    /// FQ-CoDel in the router: a source at twice the link's rate and a sparse one (a packet
    /// every 20 ms) share it; the sparse one loses nothing, the heavy one every drop, charged
    /// to it, and the slots all come back.
    #[test]
    fn fq_codel_lets_a_sparse_source_through() {
        let mut p = aqm_pipe(QueueSpec::FqCodel { limit_pkts: Some(200), limit_bytes: None, fq_codel: Default::default() });
        let mut now = 0;
        for step in 0..10_000u64 {
            now = step * MS / 2;
            p.service(now, |_| true);
            offer_from(&mut p, 1, 1500, now);
            if step % 40 == 7 {
                offer_from(&mut p, 2, 200, now);
            }
        }
        p.service(now + 500 * MS, |_| true);
        let s = &p.stats.sources;
        assert_eq!(s[1].dropped, 0, "the sparse source lost packets");
        assert!(s[0].dropped > 4000, "{} of the heavy source's 10000 dropped", s[0].dropped);
        assert_eq!(s[0].dropped, p.stats.dropped_pkts);
        assert_eq!(p.free.len(), 256, "every slot is free again");
        // An unresponsive source at twice the rate outruns CoDel's slowly rising drop rate: the
        // buffer overflows too, and the fattest flow, the heavy one, pays in batches.
        let codel = p.early_drop_pkts();
        assert!(codel > 0 && codel < p.stats.dropped_pkts, "{codel} of {} drops CoDel's", p.stats.dropped_pkts);
    }

    /// FQ-PIE in the router: a source at the link's rate and a light one (a
    /// packet every 4 ms, a quarter of the link) share it; the light one loses nothing, the
    /// heavy one's PIE drops enough of its packets to hold its own queue near the target, every
    /// drop charged to it, and the slots all come back.
    #[test]
    fn fq_pie_holds_a_heavy_source_to_its_share_and_its_queue_to_the_target() {
        let mut p = aqm_pipe(QueueSpec::FqPie { limit_pkts: Some(1000), limit_bytes: None, fq_pie: Default::default() });
        let mut sent = [0u64; 2];
        let mut now = 0;
        for step in 0..30_000u64 {
            now = step * MS / 3;
            p.service(now, |b| {
                sent[usize::from(b[14] == 2)] += 1;
                true
            });
            if step % 3 == 0 {
                offer_from(&mut p, 1, 1500, now);
            }
            if step % 12 == 0 {
                offer_from(&mut p, 2, 1500, now);
            }
        }
        // The heavy source's own PIE holds its queue's delay about the 15-ms target.
        let heavy = p.queue.fq_pie().expect("FQ-PIE").flow_pie(0).expect("the heavy source's PIE");
        let delay_ms = heavy.qdelay_ns() as f64 / 1e6;
        assert!((5.0..30.0).contains(&delay_ms), "the heavy source's delay {delay_ms} ms");
        p.service(now + 2000 * MS, |b| {
            sent[usize::from(b[14] == 2)] += 1;
            true
        });
        let s = &p.stats.sources;
        assert_eq!((s[0].pkts, s[1].pkts), (10_000, 2500));
        assert_eq!(s[1].dropped, 0, "the light source lost packets");
        assert_eq!(s[0].dropped, p.stats.dropped_pkts);
        assert_eq!(p.early_drop_pkts(), p.stats.dropped_pkts, "every drop PIE's, none at the limit");
        // 10 s at 1000 packets a second: the light source's 2500 and 7500 of the heavy one's.
        assert_eq!(sent[1], 2500);
        assert!((7400..7600).contains(&(sent[0] as i64)), "{} of the heavy source's packets sent", sent[0]);
        assert_eq!(p.free.len(), 256, "every slot is free again");
    }

    /// PIE in the router: the same standing queue (100 packets, then arrivals at the link's
    /// rate) loses arrivals once the burst allowance is spent, until the delay is below the
    /// 15-ms target; the queue's drops are PIE's, charged to their source.
    #[test]
    fn pie_brings_a_standing_queue_to_its_target() {
        let mut p = aqm_pipe(QueueSpec::Pie { limit_pkts: Some(1000), limit_bytes: None, pie: Default::default() });
        for _ in 0..100 {
            assert!(offer_from(&mut p, 1, 1500, 0));
        }
        let (mut sent, mut now) = (0, 0);
        while now < 10_000 * MS {
            now += MS;
            p.service(now, |_| {
                sent += 1;
                true
            });
            offer_from(&mut p, 1, 1500, now);
        }
        let dropped = p.stats.dropped_pkts;
        assert_eq!(p.early_drop_pkts(), dropped);
        assert_eq!(p.stats.sources[0].dropped, dropped);
        let delay_ms = p.queue.pie().expect("PIE").qdelay_ns() as f64 / 1e6;
        // Arrivals at exactly the link's rate never let a queue shrink by itself: each drop
        // shortens it by one for good, and PIE drops while the delay is above half its target
        // or its probability high, so it ends below the target.
        assert!((85..=100).contains(&dropped), "{dropped} dropped");
        assert!(p.queued_pkts() <= 15 && delay_ms < 15.0, "{} queued, delay {delay_ms} ms", p.queued_pkts());
        p.service(now + 100 * MS, |_| {
            sent += 1;
            true
        });
        assert_eq!(sent + dropped, 100 + 10_000);
        assert_eq!(p.free.len(), 256, "every slot is free again");
    }

    /// The IPv4 header checksum of `h` verifies: its 16-bit one's-complement sum is 0xffff.
    fn checksum_ok(h: &[u8]) -> bool {
        ones_complement_sum(&h[..20]) == 0xffff
    }

    /// The checksum of a textbook IPv4 header (192.168.0.1 → 192.168.0.199, UDP, 115 bytes):
    /// 0xb861, and the header with it sums to 0xffff.
    #[test]
    fn the_internet_checksum_of_a_known_header() {
        let mut h = [0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7];
        assert_eq!(!ones_complement_sum(&h), 0xb861);
        h[10..12].copy_from_slice(&[0xb8, 0x61]);
        assert!(checksum_ok(&h));
    }

    /// A 20-byte IPv4 header with ECN field `ecn` from 10.10.`host`.2 and a valid checksum.
    fn header(host: u8, ecn: Ecn) -> [u8; 20] {
        let mut h = [0u8; 20];
        h[0] = 0x45;
        h[1] = ecn.bits();
        h[8] = 64;
        h[9] = 6;
        h[12..16].copy_from_slice(&[10, 10, host, 2]);
        h[16..20].copy_from_slice(&[10, 20, host, 2]);
        let check = !ones_complement_sum(&h);
        h[10..12].copy_from_slice(&check.to_be_bytes());
        h
    }

    /// CoDel with `ecn` in the router, on the standing queue below: ECN-capable packets due to be
    /// dropped leave marked CE in their IP header, with a valid checksum, and nothing is
    /// dropped (the marks do not shorten the queue: these arrivals do not answer them); a packet
    /// that is not ECN-capable is dropped as without ECN. The marks are counted for the
    /// direction and against their source.
    #[test]
    fn codel_with_ecn_marks_the_ip_header_instead_of_dropping() {
        let codel = tcplab_sim::spec::CodelSpec { ecn: true, ..Default::default() };
        let mut p = aqm_pipe(QueueSpec::Codel { limit_pkts: Some(1000), limit_bytes: None, codel });
        let offer = |p: &mut Pipe, h: &[u8; 20], now: Nanos| {
            let (slot, buf) = p.free_slot().expect("a free slot");
            buf[..20].copy_from_slice(h);
            assert!(p.arrive(slot, 1500, now), "the limit is never reached");
        };
        let ect = header(1, Ecn::ECT0);
        assert!(checksum_ok(&ect));
        for _ in 0..100 {
            offer(&mut p, &ect, 0);
        }
        let (mut sent, mut ce) = (0, 0);
        let mut now = 0;
        while now < 2_000 * MS {
            now += MS;
            p.service(now, |b| {
                sent += 1;
                ce += u64::from(ipv4_ecn(b) == Ecn::CE);
                assert!(checksum_ok(b), "the checksum after a mark");
                true
            });
            offer(&mut p, &ect, now);
        }
        // Drain the queue and the delay line.
        p.service(now + 1_000 * MS, |b| {
            sent += 1;
            ce += u64::from(ipv4_ecn(b) == Ecn::CE);
            assert!(checksum_ok(b));
            true
        });
        assert_eq!(sent, 100 + 2_000);
        assert_eq!((p.stats.dropped_pkts, p.early_drop_pkts()), (0, 0));
        assert!(ce > 20 && ce == p.marked_pkts() && p.stats.sources[0].marked == ce, "{ce} marked, {} counted", p.marked_pkts());
        // Not ECN-capable: the next due packet is dropped.
        let plain = header(2, Ecn::NOT_ECT);
        now += 1_000 * MS;
        for _ in 0..100 {
            offer(&mut p, &plain, now);
        }
        for _ in 0..300 {
            now += MS;
            p.service(now, |_| true);
            offer(&mut p, &plain, now);
        }
        assert!(p.stats.dropped_pkts > 0 && p.stats.dropped_pkts == p.early_drop_pkts());
        assert_eq!(p.stats.sources[1].marked, 0);
    }

    /// DualPI2 in the router classifies by the IP header's ECN field: behind a first packet that
    /// goes straight out, ECT(1) packets (host 1) take nine of every ten turns from the classic
    /// ones (host 2), and every one that waited more than the step's millisecond leaves marked
    /// CE in its header, with a valid checksum, counted against its source.
    #[test]
    fn dualpi2_reads_the_l4s_identifier_and_marks_its_header() {
        let mut p = aqm_pipe(QueueSpec::Dualpi2 { limit_pkts: Some(100), limit_bytes: None, dualpi2: Default::default() });
        let offer = |p: &mut Pipe, h: &[u8; 20]| {
            let (slot, buf) = p.free_slot().expect("a free slot");
            buf[..20].copy_from_slice(h);
            assert!(p.arrive(slot, 1500, 0));
        };
        for _ in 0..20 {
            offer(&mut p, &header(2, Ecn::NOT_ECT));
        }
        for _ in 0..20 {
            offer(&mut p, &header(1, Ecn::ECT1));
        }
        let mut out = Vec::new();
        p.service(100 * MS, |b| {
            assert!(checksum_ok(b));
            out.push((b[14], ipv4_ecn(b)));
            true
        });
        assert_eq!(out.len(), 40);
        let hosts: Vec<u8> = out[..12].iter().map(|&(h, _)| h).collect();
        assert_eq!(hosts, [2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1]);
        // 1 ms per packet at 12 Mb/s: the first ECT(1) packet left after exactly 1 ms, unmarked.
        let l4s: Vec<Ecn> = out.iter().filter(|&&(h, _)| h == 1).map(|&(_, e)| e).collect();
        assert_eq!(l4s[0], Ecn::ECT1);
        assert!(l4s[1..].iter().all(|&e| e == Ecn::CE), "{l4s:?}");
        assert_eq!((p.marked_pkts(), p.stats.sources[1].marked, p.stats.sources[0].marked), (19, 19, 0));
    }

    /// CoDel in the router: a standing queue (100 packets built by a burst, then arrivals at
    /// exactly the link's rate, which DropTail would keep for ever) is dropped at the head until
    /// packets wait about `target`; the dropped packets' slots come back and their source is
    /// charged for them.
    #[test]
    fn codel_drains_a_standing_queue_to_its_target() {
        let mut p = aqm_pipe(QueueSpec::Codel { limit_pkts: Some(1000), limit_bytes: None, codel: Default::default() });
        for _ in 0..100 {
            assert!(offer_from(&mut p, 1, 1500, 0), "the limit is never reached");
        }
        let mut sent = 0;
        let mut now = 0;
        while now < 5_000 * MS {
            now += MS;
            p.service(now, |_| {
                sent += 1;
                true
            });
            assert!(offer_from(&mut p, 1, 1500, now), "the limit is never reached");
        }
        let dropped = p.stats.dropped_pkts;
        assert_eq!(p.early_drop_pkts(), dropped);
        assert_eq!(p.stats.sources[0].dropped, dropped);
        // Each drop shortens the standing queue by one: about 95 leave it at the 5-ms target.
        assert!((90..=100).contains(&dropped), "{dropped} dropped");
        assert!(p.queued_pkts() <= 6, "{} packets still queued", p.queued_pkts());
        // Nothing lost: every arrival was sent, dropped, or is still in the pipe.
        p.service(now + 100 * MS, |_| {
            sent += 1;
            true
        });
        assert_eq!(sent + dropped, 100 + 5_000);
        assert_eq!(p.free.len(), 256, "every slot is free again");
    }

    /// Every discipline, offered more than the link carries by two sources in bursts and serviced
    /// at irregular times (late wake-ups included): each packet leaves at most once, with its own
    /// bytes, in the order its source sent it, and every slot comes back. A slot freed while its
    /// packet still waits would let a later arrival's bytes leave in that packet's place. CAKE
    /// with the ACK filter gets pure TCP ACKs (numbered by their acknowledgement numbers) through
    /// a 0.2-Mb/s shaper, so that it filters queued ACKs.
    #[test]
    fn every_discipline_sends_each_packet_once_in_order_and_frees_every_slot() {
        let queues = [
            QueueSpec::Droptail { limit_pkts: Some(40), limit_bytes: None },
            QueueSpec::Red { limit_pkts: Some(40), limit_bytes: None, red: Default::default() },
            QueueSpec::Codel { limit_pkts: Some(40), limit_bytes: None, codel: Default::default() },
            QueueSpec::Pie { limit_pkts: Some(40), limit_bytes: None, pie: Default::default() },
            QueueSpec::Drr { limit_pkts: Some(40), limit_bytes: None, drr: Default::default() },
            QueueSpec::FqCodel { limit_pkts: Some(40), limit_bytes: None, fq_codel: Default::default() },
            QueueSpec::FqPie { limit_pkts: Some(40), limit_bytes: None, fq_pie: Default::default() },
            QueueSpec::Fred { limit_pkts: Some(40), limit_bytes: None, fred: Default::default() },
            QueueSpec::Csfq { limit_pkts: Some(40), limit_bytes: None, csfq: Default::default() },
            QueueSpec::Dualpi2 { limit_pkts: Some(40), limit_bytes: None, dualpi2: Default::default() },
            QueueSpec::Cake { limit_pkts: Some(40), limit_bytes: None, cake: Default::default() },
            QueueSpec::Cake { limit_pkts: Some(40), limit_bytes: None, cake: CakeSpec { bandwidth: CakeBandwidth::RateBps(8_000_000), ..Default::default() } },
            QueueSpec::Cake {
                limit_pkts: Some(40),
                limit_bytes: None,
                cake: CakeSpec { bandwidth: CakeBandwidth::RateBps(200_000), overhead: Some(40), atm: CakeAtm::Atm, ingress: true, ack_filter: CakeAckFilter::Aggressive, ..Default::default() },
            },
        ];
        for queue in queues {
            let name = format!("{queue:?}");
            let acks = matches!(&queue, QueueSpec::Cake { cake, .. } if cake.ack_filter != CakeAckFilter::None);
            // Where each packet carries its number: an ACK's acknowledgement number, else the
            // bytes after the IP header.
            let (tag_at, len) = if acks { (28, 40) } else { (20, 1500) };
            let mut p = aqm_pipe(queue);
            let mut rng = Rng::stream(7, Stream::Queue, 1);
            let mut next = [0u32; 2];
            let mut last_out = [None::<u32>; 2];
            let (mut sent, mut offered, mut now) = (0u64, 0u64, 0);
            let check = |b: &[u8], last_out: &mut [Option<u32>; 2]| {
                let source = usize::from(b[14] - 1);
                let tag = u32::from_be_bytes(b[tag_at..tag_at + 4].try_into().unwrap());
                assert!(last_out[source].map_or(true, |l| tag > l), "{name}: source {source} sent {tag} after {:?}", last_out[source]);
                last_out[source] = Some(tag);
            };
            for _ in 0..20_000 {
                // Wake-ups 0.4–3.3 ms apart, now and then 20 ms late.
                now += 300_000 + if rng.uniform() < 0.01 { 20 * MS } else { (rng.uniform() * 3.0 * MS as f64) as Nanos + 100_000 };
                p.service(now, |b| {
                    check(b, &mut last_out);
                    sent += 1;
                    true
                });
                // Arrivals between wake-ups: each may find the link ready for its next packet.
                for k in 0..(rng.uniform() * 6.0) as Nanos {
                    let host = 1 + (rng.uniform() < 0.3) as u8;
                    let Some((slot, buf)) = p.free_slot() else { break };
                    buf[0] = 0x45;
                    buf[12..16].copy_from_slice(&[10, 10, host, 2]);
                    if acks {
                        // IPv4 total length 40, TCP, ports 5201 -> 40000, ACK only, no options.
                        buf[2..4].copy_from_slice(&40u16.to_be_bytes());
                        buf[9] = 6;
                        buf[20..24].copy_from_slice(&[0x14, 0x51, 0x9c, 0x40]);
                        buf[32..34].copy_from_slice(&[0x50, 0x10]);
                    }
                    buf[tag_at..tag_at + 4].copy_from_slice(&next[usize::from(host - 1)].to_be_bytes());
                    next[usize::from(host - 1)] += 1;
                    offered += 1;
                    p.arrive(slot, len, now + k * 50_000);
                }
            }
            p.service(now + 10_000 * MS, |b| {
                check(b, &mut last_out);
                sent += 1;
                true
            });
            assert_eq!(sent + p.stats.dropped_pkts, offered, "{name}: sent {sent}, dropped {}", p.stats.dropped_pkts);
            if acks {
                let filtered = p.queue.cake().map_or(0, |c| c.ack_drops());
                assert!(filtered > 1000 && filtered <= p.stats.dropped_pkts, "{name}: {filtered} filtered of {} dropped", p.stats.dropped_pkts);
            }
            assert_eq!(p.free.len(), 256, "{name}: every slot free again");
        }
    }
}
