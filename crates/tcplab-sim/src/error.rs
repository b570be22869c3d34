//! The engine's one error: a spec it cannot run, naming the field, the value and what is allowed.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// Dotted path of the offending field, e.g. `flows[1].dst`.
    pub field: String,
    /// The offending value as the user gave it.
    pub value: String,
    /// What would have been accepted.
    pub allowed: String,
}

impl SpecError {
    pub fn new(field: impl Into<String>, value: impl ToString, allowed: impl Into<String>) -> Self {
        SpecError { field: field.into(), value: value.to_string(), allowed: allowed.into() }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {}: expected {}", self.field, self.value, self.allowed)
    }
}

impl std::error::Error for SpecError {}
