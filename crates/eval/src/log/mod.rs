//! Logs in the reference's formats (`.eval` and `.json`), readable by `inspect_ai.log` and
//! `inspect view`, and by [`read_eval_log`].

pub(crate) mod convert;
pub(crate) mod file;
mod merge;
pub(crate) mod pool;
mod read;
pub mod schema;
mod zip_append;

pub use file::LogFormat;
pub use merge::merge_logs;
pub use read::read_eval_log;
pub use schema::SandboxSpec;
