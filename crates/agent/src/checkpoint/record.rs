//! What a checkpoint is as stored: the record, the journal's entries, the loop's counters and
//! the usage carried over.

use std::collections::BTreeMap;
use std::time::Duration;

use actuator_model::{ChatMessage, ModelOutput};
use serde::{Deserialize, Serialize};

use crate::limits::LimitUsage;

/// Usage carried over, in a form that reads back anywhere.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct CarriedUsage {
    pub(super) tokens: u64,
    pub(super) turns: u64,
    pub(super) cost: f64,
    pub(super) time_s: f64,
    pub(super) working_s: f64,
}

impl CarriedUsage {
    pub(super) fn of(usage: &LimitUsage) -> Self {
        CarriedUsage {
            tokens: usage.tokens,
            turns: usage.turns,
            cost: usage.cost,
            time_s: usage.time.as_secs_f64(),
            working_s: usage.working_time.as_secs_f64(),
        }
    }

    pub(super) fn usage(&self) -> LimitUsage {
        LimitUsage {
            tokens: self.tokens,
            turns: self.turns,
            cost: self.cost,
            time: Duration::try_from_secs_f64(self.time_s).unwrap_or_default(),
            working_time: Duration::try_from_secs_f64(self.working_s).unwrap_or_default(),
            ..LimitUsage::default()
        }
    }
}

/// The loop's counters, kept with the conversation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopCounters {
    /// Turns begun.
    pub turn: u32,
    /// Submissions judged so far (react's attempts).
    pub attempts: u32,
    /// Refusals in a row (react gives up after three).
    #[serde(default)]
    pub refusals: u32,
}

/// A checkpoint as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Record {
    pub(super) version: u32,
    /// Which checkpoint (the journal names the one it follows).
    pub(super) id: String,
    pub(super) messages: Vec<ChatMessage>,
    pub(super) counters: LoopCounters,
    pub(super) usage: CarriedUsage,
    /// Set when the run finished (the checkpoint is then its final state): its explicit
    /// output, if it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) finished: Option<Finished>,
    /// Each part's description (see [`CheckpointPart`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(super) parts: BTreeMap<String, serde_json::Value>,
}

/// A finished run's output, kept with its final conversation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Finished {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) output: Option<ModelOutput>,
}

/// A journal entry as stored: what the conversation gained since the entry before (or the
/// checkpoint `base`), appended to the key's journal.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Journal {
    pub(super) version: u32,
    pub(super) base: String,
    pub(super) added: Vec<ChatMessage>,
    pub(super) counters: LoopCounters,
    pub(super) usage: CarriedUsage,
}

pub(super) const VERSION: u32 = 2;

pub(super) fn ids(messages: &[ChatMessage]) -> Vec<String> {
    messages.iter().map(|m| m.id().to_owned()).collect()
}

pub(super) fn journal_key(key: &str) -> String {
    format!("{key}#journal")
}
