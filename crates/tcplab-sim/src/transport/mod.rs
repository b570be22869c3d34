//! Endpoints: TCP (sender + receiver, loss recovery separate from congestion control), UDP CBR,
//! and DCCP with CCID 2.

pub mod dccp;
pub mod tcp;
pub mod udp;

use crate::time::Nanos;

/// A lazily scheduled timer (one per flow and kind). The endpoint only moves `deadline`; the
/// simulation keeps at most one event pending for it and, when that event fires early because
/// the deadline moved later, re-schedules it. Restarting an RTO on every ACK therefore costs no
/// event; arming one earlier than the pending event bumps `gen`, so the stale event is dropped.
#[derive(Clone, Copy, Debug, Default)]
pub struct TimerSlot {
    pub deadline: Option<Nanos>,
    pub pending_at: Option<Nanos>,
    pub gen: u32,
}
