//! Logs in the reference's formats (`.eval` and `.json`), readable by `inspect_ai.log` and
//! `inspect view`, and by [`read_eval_log`]; a log whose writer died is read, recovered
//! ([`recover_eval_log`]) and retried ([`eval_retry`](crate::eval_retry)).

pub(crate) mod convert;
pub(crate) mod file;
mod merge;
pub(crate) mod pool;
pub(crate) mod read;
mod recover;
pub(crate) mod results;
mod salvage;
pub mod schema;
mod zip_append;

pub use file::LogFormat;
pub use merge::{MergedLog, merge_logs};
pub use read::read_eval_log;
pub use recover::{RECOVERED_MESSAGE, Recovered, recover_eval_log};
pub use schema::SandboxSpec;
