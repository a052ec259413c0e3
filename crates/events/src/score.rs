//! [`Score`]: what a scorer says about an answer, as the reference's `Score`, and the
//! reference's conversion of a score's value to a number ([`ScoreValue::as_f64`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

/// A score's value: a number, a bool, a string (such as `C`orrect / `I`ncorrect), or a map of
/// named values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ScoreValue {
    /// `true` or `false`.
    Bool(bool),
    /// A number, integer or float.
    Number(Number),
    /// A string: `C`, `I`, `P` (partial), `N` (no answer), `yes`, `0.5`, …
    String(String),
    /// Named values (several metrics at once).
    Map(BTreeMap<String, ScoreValue>),
}

/// The correct value of the reference's scorers.
pub const CORRECT: &str = "C";
/// The incorrect value.
pub const INCORRECT: &str = "I";
/// Partial credit.
pub const PARTIAL: &str = "P";
/// No answer.
pub const NOANSWER: &str = "N";

impl ScoreValue {
    /// The value as a number, as the reference's default `value_to_float()` converts it:
    /// `C` is 1, `P` 0.5, `I` and `N` 0; numbers and bools as they are; strings `yes`/`true`
    /// (any case) 1 and `no`/`false` 0, numeric strings parsed; anything else (a map, an
    /// unknown string) 0, with a warning in the log.
    ///
    /// ```
    /// use actuator_events::ScoreValue;
    /// assert_eq!(ScoreValue::from("C").as_f64(), 1.0);
    /// assert_eq!(ScoreValue::from("P").as_f64(), 0.5);
    /// assert_eq!(ScoreValue::from("Yes").as_f64(), 1.0);
    /// assert_eq!(ScoreValue::from(" 0.25").as_f64(), 0.25);
    /// assert_eq!(ScoreValue::from(true).as_f64(), 1.0);
    /// assert_eq!(ScoreValue::from(3).as_f64(), 3.0);
    /// assert_eq!(ScoreValue::from("maybe").as_f64(), 0.0);
    /// ```
    pub fn as_f64(&self) -> f64 {
        match self {
            ScoreValue::String(s) if s == CORRECT => 1.0,
            ScoreValue::String(s) if s == PARTIAL => 0.5,
            ScoreValue::String(s) if s == INCORRECT || s == NOANSWER => 0.0,
            ScoreValue::Bool(b) => f64::from(u8::from(*b)),
            ScoreValue::Number(n) => n.as_f64().unwrap_or(0.0),
            ScoreValue::String(s) => {
                let lower = s.to_lowercase();
                match lower.as_str() {
                    "yes" | "true" => 1.0,
                    "no" | "false" => 0.0,
                    other => match other.trim().parse::<f64>() {
                        Ok(v) if v.is_finite() => v,
                        _ => unconvertible(self),
                    },
                }
            }
            ScoreValue::Map(_) => unconvertible(self),
        }
    }
}

fn unconvertible(value: &ScoreValue) -> f64 {
    tracing::warn!("Unable to convert value to float: {value:?}");
    0.0
}

impl From<bool> for ScoreValue {
    fn from(v: bool) -> Self {
        ScoreValue::Bool(v)
    }
}
impl From<i64> for ScoreValue {
    fn from(v: i64) -> Self {
        ScoreValue::Number(v.into())
    }
}
impl From<i32> for ScoreValue {
    fn from(v: i32) -> Self {
        ScoreValue::Number(v.into())
    }
}
impl From<f64> for ScoreValue {
    /// A float; a NaN or infinite value (which JSON cannot hold) becomes `0`.
    fn from(v: f64) -> Self {
        ScoreValue::Number(Number::from_f64(v).unwrap_or_else(|| 0.into()))
    }
}
impl From<&str> for ScoreValue {
    fn from(v: &str) -> Self {
        ScoreValue::String(v.to_owned())
    }
}
impl From<String> for ScoreValue {
    fn from(v: String) -> Self {
        ScoreValue::String(v)
    }
}

/// What a scorer says about an answer: its value, the answer it judged, why, and anything else.
///
/// ```
/// use actuator_events::Score;
/// let score = Score::new("C").with_answer("42").with_explanation("Matches the target.");
/// assert_eq!(score.as_f64(), 1.0);
/// assert_eq!(
///     serde_json::to_value(&score).unwrap(),
///     serde_json::json!({"value": "C", "answer": "42", "explanation": "Matches the target."})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Score {
    /// The value.
    pub value: ScoreValue,
    /// The answer that was judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// Why the scorer judged so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// A machine-readable reason for the value, as the reference's built-in scorers give it
    /// (`no_response` for an empty completion, `invalid_response_format` when a pattern
    /// found nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Anything else worth keeping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl Score {
    /// A score with a value.
    pub fn new(value: impl Into<ScoreValue>) -> Self {
        Score {
            value: value.into(),
            answer: None,
            explanation: None,
            reason: None,
            metadata: None,
        }
    }

    /// With the answer judged.
    #[must_use]
    pub fn with_answer(mut self, answer: impl Into<String>) -> Self {
        self.answer = Some(answer.into());
        self
    }

    /// With an explanation.
    #[must_use]
    pub fn with_explanation(mut self, explanation: impl Into<String>) -> Self {
        self.explanation = Some(explanation.into());
        self
    }

    /// With a reason (`no_response`, `invalid_response_format`, …).
    #[must_use]
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// With metadata.
    #[must_use]
    pub fn with_metadata(mut self, metadata: Map<String, Value>) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// The value as a number ([`ScoreValue::as_f64`]).
    pub fn as_f64(&self) -> f64 {
        self.value.as_f64()
    }
}

impl<V: Into<ScoreValue>> From<V> for Score {
    fn from(value: V) -> Self {
        Score::new(value)
    }
}
