//! Checkpoints: a run that dies (killed, out of memory, the machine lost) goes on from its
//! last checkpoint when run again with the same key, and never runs a tool call twice.
//!
//! Two records per key:
//! - the **checkpoint**, at a turn boundary when the [policy](Checkpoints::every_turns) says:
//!   the conversation, the loop's counters, the limits' usage;
//! - the **journal**, before and after each batch of tool calls: what the conversation gained
//!   since the checkpoint (the assistant message whose calls are about to run included, then
//!   their results). It is small, and it is what makes calls exactly-once: on resume, every
//!   call whose result the journal holds is not run again, and a call that was running when
//!   the process died is reported and, by default, not run again either: the model reads
//!   that it was interrupted and that its effect is unknown ([`InFlightPolicy`]).
//!
//! Give a run a [`Checkpoints`] as a resource; react uses it, and a custom agent does in a few
//! lines ([`Checkpoints::bind`]).

mod binding;
mod checkpoints;
mod directory;
mod frames;
mod part;
mod record;
mod resume;
mod store;

pub use binding::CheckpointBinding;
pub use checkpoints::{Checkpoints, INTERRUPTED_BY_CRASH, InFlightPolicy, ResumeReport};
pub use directory::{DEFAULT_MAX_DIRECTORY_BYTES, DEFAULT_MAX_DIRECTORY_ENTRIES, DirectoryPart};
pub use part::{CheckpointPart, PartBlobs};
pub use record::LoopCounters;
pub use resume::Resumed;
pub use store::{CheckpointError, CheckpointStore, DEFAULT_MAX_CHECKPOINT_BYTES, FileCheckpoints};
