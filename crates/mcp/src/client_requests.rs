//! What a server may ask of our client: its model (`sampling/createMessage`), its user
//! (`elicitation/create`), its roots (`roots/list`). Each is answered only when the
//! [`McpServer`](crate::McpServer) was given a handler, and only then declared as a
//! capability; a server that asks anyway gets "method not found".
//!
//! An elicitation answer is completed and checked before it goes back: fields the handler
//! left out take the schema's defaults (SEP-1034), and the answer must match the schema the
//! server asked with, so a handler's mistake is an error here, not a surprise on the server.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use actuator_tool_core::{
    ElicitationAction, ElicitationRequest, ElicitationResult, HostError, HostFuture,
    SamplingRequest, SamplingResult,
};
use serde_json::{Map, Value};

/// Answers a server's `sampling/createMessage` (for example with the agent's model).
/// Any `Fn(SamplingRequest) -> impl Future<Output = Result<SamplingResult, HostError>>` is
/// one.
pub trait SamplingHandler: Send + Sync + 'static {
    /// The answer to `request` from the server named `server`.
    fn sample(&self, server: &str, request: SamplingRequest)
    -> HostFuture<'static, SamplingResult>;
}

impl<F, Fut> SamplingHandler for F
where
    F: Fn(SamplingRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<SamplingResult, HostError>> + Send + 'static,
{
    fn sample(
        &self,
        _server: &str,
        request: SamplingRequest,
    ) -> HostFuture<'static, SamplingResult> {
        Box::pin(self(request))
    }
}

/// Answers a server's `elicitation/create` (a person at a terminal, an operator, a policy).
/// Any `Fn(ElicitationRequest) -> impl Future<Output = Result<ElicitationResult, HostError>>`
/// is one.
pub trait ElicitationHandler: Send + Sync + 'static {
    /// The answer to `request` from the server named `server`.
    fn elicit(
        &self,
        server: &str,
        request: ElicitationRequest,
    ) -> HostFuture<'static, ElicitationResult>;
}

impl<F, Fut> ElicitationHandler for F
where
    F: Fn(ElicitationRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ElicitationResult, HostError>> + Send + 'static,
{
    fn elicit(
        &self,
        _server: &str,
        request: ElicitationRequest,
    ) -> HostFuture<'static, ElicitationResult> {
        Box::pin(self(request))
    }
}

/// A root the client tells servers about (`roots/list`): a directory they may work in.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpRoot {
    /// Its `file://` URI.
    pub uri: String,
    /// A name to show.
    pub name: Option<String>,
}

impl McpRoot {
    /// The directory `path` as a root (`file://` + its absolute path).
    ///
    /// ```
    /// use actuator_mcp::McpRoot;
    /// let root = McpRoot::directory("/work/repo").name("repo");
    /// assert_eq!(root.uri, "file:///work/repo");
    /// ```
    pub fn directory(path: impl AsRef<std::path::Path>) -> Self {
        McpRoot {
            uri: format!("file://{}", path.as_ref().display()),
            name: None,
        }
    }

    /// Names it.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// The handlers an [`McpServer`](crate::McpServer) was given.
#[derive(Clone, Default)]
pub(crate) struct ServerRequests {
    pub(crate) sampling: Option<Arc<dyn SamplingHandler>>,
    pub(crate) elicitation: Option<Arc<dyn ElicitationHandler>>,
    pub(crate) roots: Option<Arc<[McpRoot]>>,
}

impl fmt::Debug for ServerRequests {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerRequests")
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("roots", &self.roots)
            .finish()
    }
}

impl PartialEq for ServerRequests {
    fn eq(&self, other: &Self) -> bool {
        fn same<T: ?Sized>(a: &Option<Arc<T>>, b: &Option<Arc<T>>) -> bool {
            match (a, b) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
        }
        same(&self.sampling, &other.sampling)
            && same(&self.elicitation, &other.elicitation)
            && self.roots == other.roots
    }
}

impl Eq for ServerRequests {}

/// Fills in the schema's defaults for the fields `content` leaves out (SEP-1034).
pub(crate) fn apply_defaults(schema: &Value, content: &mut Map<String, Value>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        if let Some(default) = property.get("default")
            && !content.contains_key(name)
        {
            content.insert(name.clone(), default.clone());
        }
    }
}

/// A handler's answer, completed with defaults and checked against the schema asked with.
pub(crate) fn complete_answer(
    schema: &Value,
    mut answer: ElicitationResult,
) -> Result<ElicitationResult, HostError> {
    if answer.action != ElicitationAction::Accept {
        answer.content = None;
        return Ok(answer);
    }
    let mut content = answer.content.take().unwrap_or_default();
    apply_defaults(schema, &mut content);
    let content = Value::Object(content);
    let validator = jsonschema::validator_for(schema).map_err(|e| {
        HostError::failed(format!(
            "the server's elicitation schema is not valid JSON Schema: {e}"
        ))
    })?;
    if let Err(e) = validator.validate(&content) {
        return Err(HostError::failed(format!(
            "the elicitation answer does not match the schema the server asked with: {e}"
        )));
    }
    let Value::Object(content) = content else {
        return Err(HostError::failed("an elicitation answer is an object"));
    };
    Ok(ElicitationResult::accept(content))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "note": {"type": "string"},
        }, "required": ["name"]})
    }

    #[test]
    fn omitted_fields_take_the_defaults_and_given_ones_stay() {
        let given = Map::from_iter([("age".to_owned(), json!(41))]);
        let done = complete_answer(&schema(), ElicitationResult::accept(given)).unwrap();
        let content = done.content.unwrap();
        assert_eq!(content["name"], "John Doe");
        assert_eq!(content["age"], 41);
        assert_eq!(content["status"], "active");
        assert!(!content.contains_key("note"));
    }

    #[test]
    fn an_answer_that_breaks_the_schema_is_an_error_naming_it() {
        let bad = Map::from_iter([("status".to_owned(), json!("gone"))]);
        let err = complete_answer(&schema(), ElicitationResult::accept(bad)).unwrap_err();
        assert!(
            err.to_string().contains("does not match the schema"),
            "{err}"
        );
    }

    #[test]
    fn a_decline_carries_no_content() {
        let mut declined = ElicitationResult::decline();
        declined.content = Some(Map::new());
        let done = complete_answer(&schema(), declined).unwrap();
        assert_eq!(done.action, ElicitationAction::Decline);
        assert!(done.content.is_none());
    }
}
