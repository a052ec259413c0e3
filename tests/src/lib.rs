//! A catalogue of tools covering the parameter and return shapes Actuator supports, shared by
//! the snapshot, contract and end-to-end tests (and by the benchmarks' fixtures).
//!
//! Every tool here is defined with `#[tool]` exactly as a user would write it.
#![allow(missing_docs)]

pub mod catalogue;
pub mod types;

pub use catalogue::all_tools;
