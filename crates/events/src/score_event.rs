//! The record of one scoring (the reference's `ScoreEvent`): which scorer scored the sample,
//! what it said, and against which target.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Score;

/// A scorer's score of a sample, emitted as [`Event::Score`](crate::Event::Score) inside the
/// scorer's span when an evaluation scores a sample (the reference records the same event in
/// the same place). A log writes it as the reference's `score` event; an OpenTelemetry sink
/// exports it as the GenAI conventions' evaluation result.
///
/// ```
/// use actuator_events::{Score, ScoreEvent};
/// let event = ScoreEvent::new("match", Score::new("C").with_explanation("191.5 m"));
/// assert_eq!(event.scorer, "match");
/// assert!(!event.intermediate);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ScoreEvent {
    /// The scorer's name (unique within its task).
    pub scorer: String,
    /// What it said.
    pub score: Score,
    /// The sample's target (a string, or a list of them), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Value>,
    /// Whether this is a score taken during the run rather than the sample's final one.
    #[serde(default)]
    pub intermediate: bool,
    /// When the score was made (Unix seconds).
    pub at: f64,
}

impl ScoreEvent {
    /// `scorer`'s final `score`, made now, without a target.
    pub fn new(scorer: impl Into<String>, score: Score) -> Self {
        ScoreEvent {
            scorer: scorer.into(),
            score,
            target: None,
            intermediate: false,
            at: crate::unix_now(),
        }
    }

    /// The sample's target the score was made against.
    ///
    /// ```
    /// use actuator_events::{Score, ScoreEvent};
    /// let event = ScoreEvent::new("match", Score::new(1)).with_target(serde_json::json!("4"));
    /// assert_eq!(event.target, Some(serde_json::json!("4")));
    /// ```
    pub fn with_target(mut self, target: Value) -> Self {
        self.target = Some(target);
        self
    }

    /// Marks the score as taken during the run (not the sample's final score).
    ///
    /// ```
    /// use actuator_events::{Score, ScoreEvent};
    /// assert!(ScoreEvent::new("progress", Score::new(0.5)).intermediate().intermediate);
    /// ```
    pub fn intermediate(mut self) -> Self {
        self.intermediate = true;
        self
    }
}
