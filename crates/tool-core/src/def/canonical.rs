//! Canonical arguments (the reference's `set_tool_canonical_arguments`): how a tool resolves
//! its arguments before acting on them, so that approval and review see what the tool will do.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::ToolDef;
use crate::error::ToolError;

type Canonicalise =
    dyn Fn(&Map<String, Value>) -> Result<Map<String, Value>, ToolError> + Send + Sync;

/// Maps a call's arguments to the ones the tool will act on (a path with `..` resolved, a
/// command in its resolved form). Attached to a tool with
/// [`ToolDef::with_canonical_arguments`] or [`ToolDefBuilder::canonical_arguments`]
/// (`#[tool(canonical = path::to_fn)]`).
///
/// The executor applies it once the call is valid and before approval: approvers and reviewers
/// are shown the canonical arguments, and the tool receives exactly them (an approver's
/// modification is canonicalised again). An `Err` is the tool error the model is told about,
/// as the reference reports a `ToolError` its canonicaliser raises; the call does not run.
///
/// Unlike the reference, whose function returns a dict, the canonical arguments are checked
/// against the tool's schema again before anyone sees them: a canonicaliser that produces
/// arguments the tool cannot take fails the call with the validation error rather than
/// handing the approver a call that could not run.
///
/// [`ToolDefBuilder::canonical_arguments`]: crate::ToolDefBuilder::canonical_arguments
///
/// ```
/// use actuator_tool_core::{CanonicalArguments, ToolError};
/// use serde_json::{Map, Value, json};
/// let lower = CanonicalArguments::new(|args: &Map<String, Value>| {
///     let mut out = args.clone();
///     if let Some(Value::String(s)) = out.get_mut("name") {
///         *s = s.to_lowercase();
///     }
///     Ok::<_, ToolError>(out)
/// });
/// let args = json!({"name": "ALICE"});
/// assert_eq!(lower.apply(args.as_object().unwrap()).unwrap()["name"], "alice");
/// ```
#[derive(Clone)]
pub struct CanonicalArguments(Arc<Canonicalise>);

impl std::fmt::Debug for CanonicalArguments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CanonicalArguments(..)")
    }
}

impl CanonicalArguments {
    /// Canonicalises with `f`.
    pub fn new(
        f: impl Fn(&Map<String, Value>) -> Result<Map<String, Value>, ToolError> + Send + Sync + 'static,
    ) -> Self {
        CanonicalArguments(Arc::new(f))
    }

    /// The canonical form of `arguments`.
    pub fn apply(&self, arguments: &Map<String, Value>) -> Result<Map<String, Value>, ToolError> {
        (self.0)(arguments)
    }
}

impl ToolDef {
    /// A copy whose calls are approved, reviewed and run on `canonical(arguments)` (the
    /// reference's `set_tool_canonical_arguments`; see [`CanonicalArguments`]).
    ///
    /// ```
    /// use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolError, ToolFailure};
    /// use serde_json::{Map, Value};
    /// let tool = ToolDef::builder("noop")
    ///     .description("Does nothing.")
    ///     .handler(|_a: ToolArgs, _c: ToolContext| async { Ok::<_, ToolFailure>("") })
    ///     .build()
    ///     .unwrap()
    ///     .with_canonical_arguments(|a: &Map<String, Value>| Ok::<_, ToolError>(a.clone()));
    /// assert!(tool.canonical_arguments().is_some());
    /// ```
    #[must_use]
    pub fn with_canonical_arguments(
        &self,
        canonical: impl Fn(&Map<String, Value>) -> Result<Map<String, Value>, ToolError>
        + Send
        + Sync
        + 'static,
    ) -> ToolDef {
        self.with_extension(CanonicalArguments::new(canonical))
    }

    /// How the tool canonicalises its arguments, when it declares it.
    pub fn canonical_arguments(&self) -> Option<&CanonicalArguments> {
        self.extensions.get::<CanonicalArguments>()
    }
}
