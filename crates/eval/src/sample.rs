//! Samples and datasets: what an evaluation runs, with the reference's field mapping
//! (`FieldSpec`). Reading dataset files is in `dataset_files`.

use actuator_model::{ChatMessage, MessageSource};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{DatasetError, RecordError};
pub use crate::sample_id::SampleId;

/// A sample's input: a text (one user message) or a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum SampleInput {
    /// A text, which becomes one user message.
    Text(String),
    /// Messages, used as they are.
    Messages(Vec<ChatMessage>),
}

impl SampleInput {
    /// The input as messages, marked as the task's input.
    pub fn to_messages(&self) -> Vec<ChatMessage> {
        match self {
            SampleInput::Text(text) => {
                let mut m = ChatMessage::user(text.as_str());
                if let ChatMessage::User(u) = &mut m {
                    u.source = Some(MessageSource::Input);
                }
                vec![m]
            }
            SampleInput::Messages(messages) => messages.clone(),
        }
    }
}

impl From<&str> for SampleInput {
    fn from(v: &str) -> Self {
        SampleInput::Text(v.to_owned())
    }
}
impl From<String> for SampleInput {
    fn from(v: String) -> Self {
        SampleInput::Text(v)
    }
}

/// What an answer is judged against: one text or several (any may match).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum Target {
    /// One target.
    One(String),
    /// Several; scorers accept a match with any.
    Many(Vec<String>),
}

impl Default for Target {
    fn default() -> Self {
        Target::One(String::new())
    }
}

impl Target {
    /// The targets as a list.
    pub fn texts(&self) -> Vec<&str> {
        match self {
            Target::One(t) => vec![t.as_str()],
            Target::Many(ts) => ts.iter().map(String::as_str).collect(),
        }
    }

    /// The targets joined with no separator, as the reference's `Target.text`.
    pub fn text(&self) -> String {
        self.texts().concat()
    }
}

impl From<&str> for Target {
    fn from(v: &str) -> Self {
        Target::One(v.to_owned())
    }
}
impl From<String> for Target {
    fn from(v: String) -> Self {
        Target::One(v)
    }
}
impl From<Vec<String>> for Target {
    fn from(v: Vec<String>) -> Self {
        Target::Many(v)
    }
}

/// One unit of an evaluation: an input, a target, and what else the task needs.
///
/// ```
/// use actuator_eval::Sample;
/// let s = Sample::new("What is 3 + 4?", "7").with_id(1);
/// assert_eq!(s.target.texts(), vec!["7"]);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Sample {
    /// The id (unique in its dataset); numbered from 1 when a dataset has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<SampleId>,
    /// The input.
    pub input: SampleInput,
    /// The target.
    #[serde(default)]
    pub target: Target,
    /// Answer choices, for multiple-choice tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<String>>,
    /// Anything else about the sample (the solver and scorers see it).
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

impl Sample {
    /// A sample with an input and a target.
    pub fn new(input: impl Into<SampleInput>, target: impl Into<Target>) -> Self {
        Sample {
            id: None,
            input: input.into(),
            target: target.into(),
            choices: None,
            metadata: Map::new(),
        }
    }

    /// With an id.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<SampleId>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// With a metadata entry.
    #[must_use]
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }
}

/// Which fields of a record hold what (the reference's `FieldSpec`): `input`, `target`, `id`,
/// `choices`, and the fields kept as metadata (by default, every other field).
///
/// ```
/// use actuator_eval::FieldSpec;
/// let spec = FieldSpec::default().input("question").target("answer");
/// # let _ = spec;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FieldSpec {
    /// The input field.
    pub input: String,
    /// The target field.
    pub target: String,
    /// The id field.
    pub id: String,
    /// The choices field.
    pub choices: String,
    /// The fields kept as metadata; `None`: every field not mapped above.
    pub metadata: Option<Vec<String>>,
}

impl Default for FieldSpec {
    fn default() -> Self {
        FieldSpec {
            input: "input".into(),
            target: "target".into(),
            id: "id".into(),
            choices: "choices".into(),
            metadata: None,
        }
    }
}

impl FieldSpec {
    /// The input field.
    #[must_use]
    pub fn input(mut self, field: impl Into<String>) -> Self {
        self.input = field.into();
        self
    }

    /// The target field.
    #[must_use]
    pub fn target(mut self, field: impl Into<String>) -> Self {
        self.target = field.into();
        self
    }

    /// The id field.
    #[must_use]
    pub fn id(mut self, field: impl Into<String>) -> Self {
        self.id = field.into();
        self
    }

    /// The choices field.
    #[must_use]
    pub fn choices(mut self, field: impl Into<String>) -> Self {
        self.choices = field.into();
        self
    }

    /// Keeps only these fields as metadata.
    #[must_use]
    pub fn metadata<I, S>(mut self, fields: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.metadata = Some(fields.into_iter().map(Into::into).collect());
        self
    }

    /// Maps one record (a JSON object) to a sample. The input field must be present, and a
    /// list must be a list of messages; every other field may be missing or of any type.
    pub fn to_sample(&self, record: &Map<String, Value>) -> Result<Sample, RecordError> {
        let input = match record.get(&self.input) {
            Some(Value::String(s)) => SampleInput::Text(s.clone()),
            Some(v @ Value::Array(_)) => {
                SampleInput::Messages(serde_json::from_value(v.clone()).map_err(|source| {
                    RecordError::WrongType {
                        field: self.input.clone(),
                        expected: "a list of messages",
                        source,
                    }
                })?)
            }
            Some(other) => SampleInput::Text(scalar_text(other)),
            None => {
                return Err(RecordError::MissingField {
                    field: self.input.clone(),
                });
            }
        };
        let target = match record.get(&self.target) {
            None | Some(Value::Null) => Target::default(),
            Some(Value::Array(items)) => Target::Many(items.iter().map(scalar_text).collect()),
            Some(v) => Target::One(scalar_text(v)),
        };
        let id = match record.get(&self.id) {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) if n.is_i64() => n.as_i64().map(SampleId::Int),
            Some(Value::String(s)) if !s.is_empty() => Some(SampleId::Str(s.clone())),
            Some(Value::String(_)) => None,
            Some(other) => Some(SampleId::Str(scalar_text(other))),
        };
        let choices = match record.get(&self.choices) {
            Some(Value::Array(items)) => Some(items.iter().map(scalar_text).collect()),
            _ => None,
        };
        let mapped = [&self.input, &self.target, &self.id, &self.choices];
        let metadata = record
            .iter()
            .filter(|(k, _)| match &self.metadata {
                Some(keep) => keep.iter().any(|m| m == *k),
                None => !mapped.contains(k),
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(Sample {
            id,
            input,
            target,
            choices,
            metadata,
        })
    }
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A named list of samples.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dataset {
    /// Its name (a file's stem by default).
    pub name: Option<String>,
    /// Where it was read from.
    pub location: Option<String>,
    /// The samples, in order.
    pub samples: Vec<Sample>,
}

impl Dataset {
    /// A dataset of `samples`.
    pub fn new(samples: impl IntoIterator<Item = Sample>) -> Self {
        Dataset {
            name: None,
            location: None,
            samples: samples.into_iter().collect(),
        }
    }

    /// With a name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Shard `index` of `count` (from 0): every `count`-th sample starting at `index`, each
    /// keeping the id it has in the whole dataset (its position from 1 when it has none), so
    /// that shards run on different machines merge back into one log
    /// ([`merge_logs`](crate::log::merge_logs)) without clashing ids.
    ///
    /// ```
    /// use actuator_eval::{Dataset, Sample, SampleId};
    /// let ds = Dataset::new((0..5).map(|i| Sample::new(format!("q{i}"), "")));
    /// let shard = ds.shard(1, 2);
    /// let ids: Vec<_> = shard.samples.iter().map(|s| s.id.clone().unwrap()).collect();
    /// assert_eq!(ids, vec![SampleId::Int(2), SampleId::Int(4)]);
    /// ```
    pub fn shard(&self, index: usize, count: usize) -> Dataset {
        let count = count.max(1);
        let samples = self
            .samples
            .iter()
            .enumerate()
            .filter(|(i, _)| i % count == index)
            .map(|(i, s)| {
                let mut s = s.clone();
                s.id.get_or_insert_with(|| SampleId::Int(i64::try_from(i + 1).unwrap_or(i64::MAX)));
                s
            })
            .collect();
        Dataset {
            name: self.name.clone(),
            location: self.location.clone(),
            samples,
        }
    }

    /// Each sample's id, in order: its own, or its position from 1 (the reference's auto ids);
    /// an error when two are the same.
    pub(crate) fn ids(&self) -> Result<Vec<SampleId>, DatasetError> {
        let mut seen = std::collections::HashSet::with_capacity(self.samples.len());
        let mut out = Vec::with_capacity(self.samples.len());
        for (i, sample) in self.samples.iter().enumerate() {
            let id = sample
                .id
                .clone()
                .unwrap_or_else(|| SampleId::Int(i64::try_from(i + 1).unwrap_or(i64::MAX)));
            if !seen.insert(id.clone()) {
                return Err(DatasetError::DuplicateId { id: id.to_string() });
            }
            out.push(id);
        }
        Ok(out)
    }
}
