//! A sample's id, apart from the samples so that errors can name one without a circle.

use serde::{Deserialize, Serialize};

/// A sample's id: an integer or a string, as the reference allows.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SampleId {
    /// An integer id (datasets without ids are numbered from 1).
    Int(i64),
    /// A string id.
    Str(String),
}

impl std::fmt::Display for SampleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SampleId::Int(i) => write!(f, "{i}"),
            SampleId::Str(s) => f.write_str(s),
        }
    }
}

impl From<i64> for SampleId {
    fn from(v: i64) -> Self {
        SampleId::Int(v)
    }
}
impl From<&str> for SampleId {
    fn from(v: &str) -> Self {
        SampleId::Str(v.to_owned())
    }
}
