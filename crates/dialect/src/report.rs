//! What a dialect rendering returns: the provider's tool object and a report of every change.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

/// A tool rendered for one provider, with the report of what had to change on the way.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rendered {
    /// The provider's tool object, ready to put into a request.
    pub tool: Value,
    /// What was dropped or rewritten to fit the provider; empty when the schema went out as is.
    pub report: DialectReport,
}

/// Every change a dialect made to a tool's parameters schema, in the order they were made.
///
/// An empty report means the provider sees exactly the schema Actuator validates against.
/// Whatever the report lists, arguments are still validated against the full schema.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DialectReport {
    /// The changes; each location and kind is listed once.
    pub changes: Vec<SchemaChange>,
}

impl DialectReport {
    /// True when nothing was changed.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The changes of one kind.
    ///
    /// ```
    /// use actuator_dialect::{ChangeKind, DialectReport};
    /// let report = DialectReport::default();
    /// assert_eq!(report.of_kind(ChangeKind::Dropped).count(), 0);
    /// ```
    pub fn of_kind(&self, kind: ChangeKind) -> impl Iterator<Item = &SchemaChange> {
        self.changes.iter().filter(move |c| c.kind == kind)
    }

    /// Records a change unless the same one is already recorded (inlined definitions are
    /// walked once per use but reported once).
    pub(crate) fn push(
        &mut self,
        path: impl Into<String>,
        kind: ChangeKind,
        detail: impl Into<String>,
    ) {
        let change = SchemaChange {
            path: path.into(),
            kind,
            detail: detail.into(),
        };
        if !self.changes.contains(&change) {
            self.changes.push(change);
        }
    }
}

impl fmt::Display for DialectReport {
    /// One line per change: `path: kind: detail`, with `(root)` for the empty path.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, change) in self.changes.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{change}")?;
        }
        Ok(())
    }
}

/// One change made to the parameters schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaChange {
    /// JSON pointer into the tool's parameters schema ([`ToolParams::to_value`]) where the change
    /// happened, e.g. `/properties/when/format`; empty for the root. Changes inside a definition
    /// that a provider needed inlined point into `/$defs/…`.
    ///
    /// [`ToolParams::to_value`]: actuator_tool_core::ToolParams::to_value
    pub path: String,
    /// What kind of change it was.
    pub kind: ChangeKind,
    /// What happened, for a person reading it.
    pub detail: String,
}

impl fmt::Display for SchemaChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "(root)"
        } else {
            &self.path
        };
        write!(f, "{path}: {}: {}", self.kind.as_str(), self.detail)
    }
}

/// The kinds of change a dialect makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ChangeKind {
    /// A keyword the provider does not support was removed.
    Dropped,
    /// A keyword the provider does not support was removed and its meaning appended to the
    /// `description` (a format, a default, examples, a bound …).
    MovedToDescription,
    /// A construct was replaced by one the provider supports that accepts the same values or
    /// more (`oneOf` → `anyOf`, `const` → one-value `enum`, a tuple → an array …).
    Rewritten,
    /// A name the provider rejects was replaced by one it accepts, derived from the original
    /// so that the provider's side maps it back ([`Dialect::function_name`],
    /// [`restore_argument_names`]).
    ///
    /// [`Dialect::function_name`]: crate::Dialect::function_name
    /// [`restore_argument_names`]: crate::restore_argument_names
    Renamed,
    /// A `$ref` was replaced by the definition it points to.
    Inlined,
    /// A recursive `$ref` was replaced by a bare placeholder to stop the inlining.
    RecursionCut,
    /// An optional property became required and nullable (OpenAI strict mode); a `null` argument
    /// means "not given" (see [`strip_strict_nulls`](crate::strip_strict_nulls)).
    MadeNullable,
    /// An optional property that already accepted `null` became required (OpenAI strict mode).
    MadeRequired,
    /// An object got `"additionalProperties": false` (OpenAI strict mode).
    Closed,
    /// Something the provider cannot express at all; the detail says how it was rendered.
    Unsupported,
    /// The input schema is malformed here; it was rendered as well as possible.
    Invalid,
}

impl ChangeKind {
    /// The snake_case name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Dropped => "dropped",
            ChangeKind::MovedToDescription => "moved_to_description",
            ChangeKind::Rewritten => "rewritten",
            ChangeKind::Renamed => "renamed",
            ChangeKind::Inlined => "inlined",
            ChangeKind::RecursionCut => "recursion_cut",
            ChangeKind::MadeNullable => "made_nullable",
            ChangeKind::MadeRequired => "made_required",
            ChangeKind::Closed => "closed",
            ChangeKind::Unsupported => "unsupported",
            ChangeKind::Invalid => "invalid",
        }
    }
}

impl fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
