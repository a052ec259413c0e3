//! Logs in the reference's formats (`.eval` and `.json`), readable by `inspect_ai.log` and
//! `inspect view`, and by [`read_eval_log`].

pub(crate) mod convert;
pub(crate) mod file;
mod merge;
pub mod schema;

pub use file::{LogFormat, read_eval_log};
pub use merge::merge_logs;
