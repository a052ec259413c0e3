//! Answering a request for a person's input ([`ElicitationHandler`]), and completing and
//! checking an answer against the schema asked with ([`ElicitationRequest::complete`]).

use std::future::Future;

use serde_json::{Map, Value};

use crate::host::{
    ElicitationAction, ElicitationRequest, ElicitationResult, HostError, HostFuture,
};

/// Answers a request for a person's input (an MCP server's `elicitation/create`, a tool's
/// `ToolContext::elicit` in an agent run): a person at a terminal, an operator, a policy.
/// Any `Fn(ElicitationRequest) -> impl Future<Output = Result<ElicitationResult, HostError>>`
/// is one.
pub trait ElicitationHandler: Send + Sync + 'static {
    /// The answer to `request` from `asker` (an MCP server's name, a tool's name).
    fn elicit(
        &self,
        asker: &str,
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
        _asker: &str,
        request: ElicitationRequest,
    ) -> HostFuture<'static, ElicitationResult> {
        Box::pin(self(request))
    }
}

/// Fills in the schema's defaults for the fields `content` leaves out (SEP-1034).
fn apply_defaults(schema: &Value, content: &mut Map<String, Value>) {
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

impl ElicitationRequest {
    /// `answer` completed and checked: an accepted answer gets this request's schema defaults
    /// for the fields it leaves out (SEP-1034) and must then match the schema; a decline or
    /// cancel carries no content.
    ///
    /// ```
    /// use actuator_tool_core::{ElicitationRequest, ElicitationResult};
    /// use serde_json::{Map, json};
    /// let asked = ElicitationRequest::new("Branch?", json!({"type": "object",
    ///     "properties": {"branch": {"type": "string", "default": "main"}}}));
    /// let done = asked.complete(ElicitationResult::accept(Map::new())).unwrap();
    /// assert_eq!(done.content.unwrap()["branch"], "main");
    /// ```
    pub fn complete(&self, answer: ElicitationResult) -> Result<ElicitationResult, HostError> {
        complete_answer(&self.requested_schema, answer)
    }
}

fn complete_answer(
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
            "the elicitation schema is not valid JSON Schema: {e}"
        ))
    })?;
    if let Err(e) = validator.validate(&content) {
        return Err(HostError::failed(format!(
            "the elicitation answer does not match the schema asked with: {e}"
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
