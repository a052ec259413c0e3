//! Whether a server may have our model answer it ([`SamplingPolicy`]): allowed, refused
//! with a reason, or put to a person first (through the calling run's elicitation, or the
//! connection's elicitation handler).

use actuator_tool_core::{ElicitationRequest, SamplingRequest};
use serde_json::json;

/// What to do with one `sampling/createMessage` request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SamplingDecision {
    /// Answer it.
    Allow,
    /// Refuse it; the server reads the reason.
    Deny(String),
    /// Ask a person first: the calling run's elicitation handler (with
    /// [`McpServer::route_to_calling_run`](crate::McpServer::route_to_calling_run)) or the
    /// connection's ([`McpServer::elicitation`](crate::McpServer::elicitation)). Nobody to
    /// ask, a decline or a cancel refuses the request.
    Ask,
}

/// Decides, before our model is asked, whether a server's sampling request goes ahead. Any
/// `Fn(&str, &SamplingRequest) -> SamplingDecision` (the server's name, the request) is one.
///
/// ```
/// use actuator_mcp::{McpServer, SamplingDecision};
/// use actuator_tool_core::SamplingRequest;
///
/// let server = McpServer::http("http://127.0.0.1:8000/mcp")
///     .route_to_calling_run()
///     .sampling_policy(|_server: &str, request: &SamplingRequest| {
///         if request.max_tokens > 4_000 {
///             SamplingDecision::Deny("at most 4000 tokens per request".into())
///         } else {
///             SamplingDecision::Allow
///         }
///     });
/// # let _ = server;
/// ```
pub trait SamplingPolicy: Send + Sync + 'static {
    /// The decision for `request` from the server named `server`.
    fn decide(&self, server: &str, request: &SamplingRequest) -> SamplingDecision;
}

impl<F> SamplingPolicy for F
where
    F: Fn(&str, &SamplingRequest) -> SamplingDecision + Send + Sync + 'static,
{
    fn decide(&self, server: &str, request: &SamplingRequest) -> SamplingDecision {
        self(server, request)
    }
}

/// The question a person answers for [`SamplingDecision::Ask`]: what the server asks (its
/// last message, cut to 500 characters) and a yes/no field `allow`.
pub(crate) fn approval_question(server: &str, request: &SamplingRequest) -> ElicitationRequest {
    const SHOWN: usize = 500;
    let last = request
        .messages
        .last()
        .and_then(|m| m.content.as_text())
        .unwrap_or_default();
    let shown: String = last.chars().take(SHOWN).collect();
    let cut = if shown.len() < last.len() { "…" } else { "" };
    ElicitationRequest::new(
        format!(
            "MCP server '{server}' asks our model to answer {} message(s), up to {} tokens. \
             The last one: \"{shown}{cut}\". Allow it?",
            request.messages.len(),
            request.max_tokens
        ),
        json!({
            "type": "object",
            "properties": {"allow": {"type": "boolean", "description": "Let the model answer."}},
            "required": ["allow"],
        }),
    )
}
