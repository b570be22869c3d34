//! tcplab's testbed router: the simulator's bottleneck applied in real time to the packets policy
//! routing sends into this process's TUN devices (one per direction).
//!
//! [`pipe`] is the timing logic (pure, tested without root); [`hist`] the lateness and sojourn
//! histograms; [`capture`] the optional pcap of the forward direction's arrivals; `sys` the few system calls std does not wrap, the only module allowed `unsafe`.

pub mod capture;
pub mod hist;
pub mod pipe;
pub mod report;
pub mod sys;
