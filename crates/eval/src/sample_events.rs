//! A sample's events as a checkpoint part: a sample resumed after a crash keeps in its log
//! what happened before it (up to its last checkpoint).

use std::sync::{Arc, Mutex, PoisonError};

use actuator_agent::checkpoint::{CheckpointError, CheckpointPart, PartBlobs};
use actuator_events::Event;
use actuator_model::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::log::convert::StampedLog;

/// The part's name in a checkpoint.
const NAME: &str = "events";

/// Each checkpoint writes the events since the one before as a blob of its own.
pub(crate) struct EventsPart {
    log: Arc<StampedLog>,
    state: Mutex<Saved>,
}

/// The description in the record: the blobs, in order.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Saved {
    blobs: Vec<String>,
    /// Events in the log when the last blob was written.
    #[serde(skip)]
    count: usize,
}

impl EventsPart {
    pub(crate) fn new(log: Arc<StampedLog>) -> Self {
        EventsPart {
            log,
            state: Mutex::default(),
        }
    }

    fn error(reason: impl std::fmt::Display) -> CheckpointError {
        CheckpointError::Format {
            key: NAME.to_owned(),
            reason: reason.to_string(),
        }
    }
}

impl CheckpointPart for EventsPart {
    fn name(&self) -> &str {
        NAME
    }

    fn save<'a>(&'a self, blobs: PartBlobs<'a>) -> BoxFuture<'a, Result<Value, CheckpointError>> {
        Box::pin(async move {
            let (from, mut names) = {
                let s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                (s.count, s.blobs.clone())
            };
            let (new, count) = self.log.since(from);
            if !new.is_empty() {
                let name = names.len().to_string();
                let bytes = serde_json::to_vec(&new).map_err(Self::error)?;
                blobs.save(&name, bytes).await?;
                names.push(name);
            }
            let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            s.blobs.clone_from(&names);
            s.count = count;
            serde_json::to_value(Saved {
                blobs: names,
                count,
            })
            .map_err(Self::error)
        })
    }

    fn restore<'a>(
        &'a self,
        blobs: PartBlobs<'a>,
        saved: Value,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(async move {
            let saved: Saved = serde_json::from_value(saved).map_err(Self::error)?;
            let mut earlier: Vec<(f64, Event)> = Vec::new();
            for name in &saved.blobs {
                let bytes = blobs.load(name).await?.ok_or_else(|| {
                    Self::error(format!("the events {name} are not in the store"))
                })?;
                let events: Vec<(f64, Event)> =
                    serde_json::from_slice(&bytes).map_err(Self::error)?;
                earlier.extend(events);
            }
            let count = self.log.restore(earlier);
            let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            s.blobs = saved.blobs;
            s.count = count;
            Ok(())
        })
    }

    fn clear<'a>(
        &'a self,
        blobs: PartBlobs<'a>,
        saved: Value,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(async move {
            let saved: Saved = serde_json::from_value(saved).map_err(Self::error)?;
            let mut names = saved.blobs;
            // Blobs of a save whose record was never written are named on from these.
            let known = self
                .state
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .blobs
                .len();
            names.extend((names.len()..known.max(names.len()) + 1).map(|i| i.to_string()));
            for name in names {
                blobs.remove(&name).await?;
            }
            Ok(())
        })
    }
}
