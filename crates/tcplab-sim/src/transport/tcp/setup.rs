//! What crosses the path before a flow's data (`Preamble`): round trips of small packets, each a
//! request from the sender's host and the receiver's answer, sent again on a timeout.
//!
//! iperf3 (3.x, as the testbed runs it) opens a control connection and sends a cookie; the server
//! asks for the parameters (`PARAM_EXCHANGE`), the client sends them as JSON and the server asks
//! for the streams (`CREATE_STREAMS`); the client then opens the data connection and sends the
//! same cookie on it; the server, all streams connected, answers with `TEST_START` and
//! `TEST_RUNNING` on the control connection while its kernel ACKs the cookie, and the client's
//! first data segment follows. Five round trips, the last two on the data connection itself:
//!
//! - its SYN and SYN-ACK give the sender an RTT before the first segment (Linux takes it in
//!   `tcp_ack` on the SYN-ACK: srtt, RTO and min RTT, so the congestion control is initialised,
//!   and a pacing rate set, from a measured RTT);
//! - the cookie's arrival establishes the receiver's side: its first receive-buffer measurement
//!   starts there (`tcp_init_buffer_space`) and the cookie starts quick-ACK mode, as a first
//!   data segment does; the ACK that answers it carries the timestamp the first data segments
//!   echo, so the receiver's first RTT sample is one round trip long (`tcp_rcv_rtt_measure_ts`).
//!
//! The applications' own delays are left out but one: iperf3's server starts the test about 1 ms
//! after the cookie's ACK leaves (`IPERF3_TEST_START_NS`).
//!
//! Packet sizes are IP bytes with timestamps: a SYN or SYN-ACK 60 (MSS, SACK-permitted,
//! timestamps and window-scale options), a pure ACK 52, the 37-byte cookie 89, a one-byte state
//! message 53, the parameters 206 (a 4-byte length and about 150 bytes of JSON).

use crate::spec::Preamble;
use crate::time::Nanos;

/// One round trip of the preamble.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// IP bytes of the request (sender to receiver) and of its answer, with timestamps.
    pub request_bytes: u32,
    pub reply_bytes: u32,
    /// A SYN, answered by a SYN-ACK.
    pub syn: bool,
    /// On the data connection (iperf3's first round trips are on its control connection).
    pub data_connection: bool,
    /// The request establishes the receiver's side of the data connection (the handshake's
    /// last ACK, with the cookie).
    pub establishes: bool,
    /// How long after the answer arrives the sender goes on (the applications' own delays).
    pub then_ns: Nanos,
}

impl Step {
    /// The data connection's SYN: its answer gives the sender its first RTT sample.
    pub fn data_syn(&self) -> bool {
        self.syn && self.data_connection
    }

    /// IP bytes of the request and of the answer: without timestamps a SYN's options take 12
    /// bytes rather than 20 (MSS, SACK-permitted, window scale, NOP-padded) and other segments
    /// lose the 12-byte timestamp option.
    pub fn sizes(&self, timestamps: bool) -> (u32, u32) {
        let less = match (timestamps, self.syn) {
            (true, _) => 0,
            (false, true) => 8,
            (false, false) => 12,
        };
        (self.request_bytes - less, self.reply_bytes - less)
    }
}

const SYN: Step = Step { request_bytes: 60, reply_bytes: 60, syn: true, data_connection: false, establishes: false, then_ns: 0 };
const SEGMENT: Step = Step { syn: false, ..SYN };

const HANDSHAKE: [Step; 1] = [Step { data_connection: true, ..SYN }];

const IPERF3: [Step; 5] = [
    // Control connection: handshake, cookie → PARAM_EXCHANGE, parameters → CREATE_STREAMS.
    SYN,
    Step { request_bytes: 89, reply_bytes: 53, ..SEGMENT },
    Step { request_bytes: 206, reply_bytes: 53, ..SEGMENT },
    // Data connection: handshake, cookie → its ACK (and TEST_START on the control connection).
    Step { data_connection: true, ..SYN },
    Step { request_bytes: 89, reply_bytes: 52, data_connection: true, establishes: true, then_ns: IPERF3_TEST_START_NS, ..SEGMENT },
];

/// iperf3's server sends TEST_START and TEST_RUNNING about 1 ms after its kernel ACKs the data
/// connection's cookie, and the client's first segment follows within 0.15 ms (testbed sender
/// captures: 1.03 ms at 50 ms RTT, 0.79 and 0.86 ms at 400 ms); the first data segments echo that
/// ACK's timestamp, so the receiver's first RTT sample is one round trip plus this.
const IPERF3_TEST_START_NS: Nanos = 1_000_000;

/// The round trips of `preamble`, in order.
pub fn steps(preamble: Preamble) -> &'static [Step] {
    match preamble {
        Preamble::None => &[],
        Preamble::Handshake => &HANDSHAKE,
        Preamble::Iperf3 => &IPERF3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iperf3_opens_two_connections_and_the_data_one_last() {
        let s = steps(Preamble::Iperf3);
        assert_eq!(s.len(), 5);
        assert_eq!(s.iter().filter(|x| x.data_syn()).count(), 1);
        assert!(s[3].data_syn() && s[4].establishes && !s[0].data_syn() && s[0].syn);
        assert_eq!(s.iter().map(|x| x.sizes(true)).collect::<Vec<_>>(), [(60, 60), (89, 53), (206, 53), (60, 60), (89, 52)]);
        assert_eq!(s[4].sizes(false), (77, 40));
        assert_eq!(s[3].sizes(false), (52, 52));
        assert_eq!(steps(Preamble::Handshake).len(), 1);
        assert!(steps(Preamble::Handshake)[0].data_syn());
        assert!(steps(Preamble::None).is_empty());
    }
}
