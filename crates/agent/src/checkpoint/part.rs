//! What a checkpoint holds besides the conversation: parts that save and restore themselves
//! (a sandbox's files, see [`DirectoryPart`](super::DirectoryPart)).

use actuator_model::BoxFuture;
use serde_json::Value;

use super::store::{CheckpointError, CheckpointStore};

/// Something a checkpoint holds besides the conversation, saved with each checkpoint and
/// restored before a resumed run goes on, so that the two agree.
///
/// `save` returns a small description kept in the checkpoint record; bulky content goes to
/// the store as blobs through [`PartBlobs`] (written before the record, so a record never
/// names a blob that is not there). `committed` runs once the record that holds a saved
/// description is written (to remove blobs it no longer needs); `clear` when the run's
/// checkpoints are removed.
///
/// ```
/// use actuator_agent::checkpoint::{CheckpointError, CheckpointPart, PartBlobs};
/// use actuator_model::BoxFuture;
/// use serde_json::{Value, json};
/// use std::sync::Mutex;
///
/// /// A counter the run keeps, checkpointed with it.
/// struct Counter(Mutex<u64>);
///
/// impl CheckpointPart for Counter {
///     fn name(&self) -> &str {
///         "counter"
///     }
///     fn save<'a>(&'a self, _blobs: PartBlobs<'a>) -> BoxFuture<'a, Result<Value, CheckpointError>> {
///         Box::pin(async move { Ok(json!(*self.0.lock().unwrap())) })
///     }
///     fn restore<'a>(
///         &'a self,
///         _blobs: PartBlobs<'a>,
///         saved: Value,
///     ) -> BoxFuture<'a, Result<(), CheckpointError>> {
///         Box::pin(async move {
///             *self.0.lock().unwrap() = saved.as_u64().unwrap_or(0);
///             Ok(())
///         })
///     }
/// }
/// ```
pub trait CheckpointPart: Send + Sync {
    /// Its name, unique among the run's parts: the key of its description in the record.
    fn name(&self) -> &str;

    /// Its state now: a description for the record (its blobs saved first).
    fn save<'a>(&'a self, blobs: PartBlobs<'a>) -> BoxFuture<'a, Result<Value, CheckpointError>>;

    /// Puts back the state `saved` describes.
    fn restore<'a>(
        &'a self,
        blobs: PartBlobs<'a>,
        saved: Value,
    ) -> BoxFuture<'a, Result<(), CheckpointError>>;

    /// The record holding `saved` is written: blobs only earlier records used can go.
    fn committed<'a>(&'a self, blobs: PartBlobs<'a>, saved: &'a Value) -> BoxFuture<'a, ()> {
        let _ = (blobs, saved);
        Box::pin(async {})
    }

    /// The run's checkpoints are being removed: the blobs `saved` uses go too.
    fn clear<'a>(
        &'a self,
        blobs: PartBlobs<'a>,
        saved: Value,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        let _ = (blobs, saved);
        Box::pin(async { Ok(()) })
    }
}

/// A part's blobs in the run's store, under keys of their own (`{run key}#{part}#{name}`).
#[derive(Clone, Copy)]
pub struct PartBlobs<'a> {
    store: &'a dyn CheckpointStore,
    key: &'a str,
    part: &'a str,
}

impl std::fmt::Debug for PartBlobs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartBlobs")
            .field("key", &self.key)
            .field("part", &self.part)
            .finish_non_exhaustive()
    }
}

impl<'a> PartBlobs<'a> {
    pub(crate) fn new(store: &'a dyn CheckpointStore, key: &'a str, part: &'a str) -> Self {
        PartBlobs { store, key, part }
    }

    fn blob_key(&self, name: &str) -> String {
        format!("{}#{}#{name}", self.key, self.part)
    }

    /// Saves the blob `name` (atomically, checksummed, as the store saves a checkpoint).
    pub async fn save(&self, name: &str, bytes: Vec<u8>) -> Result<(), CheckpointError> {
        self.store.save(&self.blob_key(name), bytes).await
    }

    /// The blob `name`, if there is one.
    pub async fn load(&self, name: &str) -> Result<Option<Vec<u8>>, CheckpointError> {
        self.store.load(&self.blob_key(name)).await
    }

    /// Removes the blob `name`.
    pub async fn remove(&self, name: &str) -> Result<(), CheckpointError> {
        self.store.remove(&self.blob_key(name)).await
    }
}
