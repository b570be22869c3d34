//! tcplab's packet-level network simulator.
//!
//! ```no_run
//! let spec = tcplab_sim::Spec::from_json(r#"{ ... }"#).unwrap();
//! let result = tcplab_sim::simulate(&spec).unwrap();
//! println!("{} transmissions", result.transmissions);
//! ```
//!
//! See `docs/engine-spec.md` for the spec and the result's columns.

pub mod capture;
pub mod cc;
pub mod engine;
pub mod error;
pub mod ids;
pub mod measure;
pub mod net;
pub mod result;
pub mod rng;
pub mod sim;
pub mod spec;
pub mod time;
pub mod transport;

pub use error::SpecError;
pub use result::{Column, SimResult, Table};
pub use sim::Simulation;
pub use spec::Spec;

/// Build and run a simulation.
pub fn simulate(spec: &Spec) -> Result<SimResult, SpecError> {
    Ok(Simulation::new(spec)?.run())
}

/// The engine's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
