//! TCP: a bulk sender (infinite backlog, like iperf) and its receiver, in segment units.

pub mod rate;
pub mod rcvbuf;
pub mod receiver;
pub mod rtt;
pub mod scoreboard;
pub mod setup;
pub mod sndbuf;
pub mod sender;

pub use receiver::TcpReceiver;
pub use sender::TcpSender;
