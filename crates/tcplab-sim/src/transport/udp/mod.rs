//! UDP endpoints.

pub mod cbr;
