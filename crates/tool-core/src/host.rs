//! What a running tool can ask of whoever runs it ([`ToolHost`]): write to its log, ask its
//! model (sampling), ask its person (elicitation). An MCP server answers over the call's
//! session (`notifications/message`, `sampling/createMessage`, `elicitation/create`); an agent
//! run records logs as events and sends sampling to the run's model. Nobody listening: a log
//! goes nowhere, and sampling and elicitation are [`HostError::Unsupported`].

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::Content;
use crate::context::ToolContext;

/// A boxed future a [`ToolHost`] returns.
pub type HostFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, HostError>> + Send + 'a>>;

/// How severe a log entry is: the syslog levels MCP uses (`logging/setLevel`), least severe
/// first, so `a >= b` means "at least as severe".
///
/// ```
/// use actuator_tool_core::LogLevel;
/// assert!(LogLevel::Error > LogLevel::Info);
/// assert_eq!(serde_json::to_string(&LogLevel::Warning).unwrap(), "\"warning\"");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// What is happening.
    Info,
    /// Normal but significant.
    Notice,
    /// Something may be wrong.
    Warning,
    /// Something failed.
    Error,
    /// A component failed.
    Critical,
    /// Act now.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// The level's name as MCP writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One log entry a tool writes: its level, an optional logger name, and any JSON (a string
/// for a plain message).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LogEntry {
    /// How severe.
    pub level: LogLevel,
    /// Which part of the tool wrote it.
    pub logger: Option<String>,
    /// What it says.
    pub data: Value,
}

impl LogEntry {
    /// An entry at `level` carrying `data`.
    pub fn new(level: LogLevel, data: impl Into<Value>) -> Self {
        LogEntry {
            level,
            logger: None,
            data: data.into(),
        }
    }

    /// Names the logger.
    #[must_use]
    pub fn logger(mut self, logger: impl Into<String>) -> Self {
        self.logger = Some(logger.into());
        self
    }
}

/// Who speaks a message in a sampling request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SamplingRole {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// One message of a sampling request or its answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: SamplingRole,
    /// What is said (text, an image, audio).
    pub content: Content,
}

impl SamplingMessage {
    /// A user message.
    pub fn user(content: impl Into<Content>) -> Self {
        SamplingMessage {
            role: SamplingRole::User,
            content: content.into(),
        }
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<Content>) -> Self {
        SamplingMessage {
            role: SamplingRole::Assistant,
            content: content.into(),
        }
    }
}

/// A tool asking the model of whoever runs it for a completion (MCP's
/// `sampling/createMessage`).
///
/// ```
/// use actuator_tool_core::{SamplingMessage, SamplingRequest};
/// let request = SamplingRequest::new([SamplingMessage::user("Name a colour.")], 20)
///     .system_prompt("Answer in one word.");
/// assert_eq!(request.max_tokens, 20);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SamplingRequest {
    /// The conversation to complete.
    pub messages: Vec<SamplingMessage>,
    /// A system prompt, if any.
    pub system_prompt: Option<String>,
    /// The most tokens to generate.
    pub max_tokens: u32,
    /// The sampling temperature, if the tool has a preference.
    pub temperature: Option<f64>,
    /// Sequences that end generation.
    pub stop_sequences: Vec<String>,
}

impl SamplingRequest {
    /// A request to complete `messages` in at most `max_tokens` tokens.
    pub fn new(messages: impl IntoIterator<Item = SamplingMessage>, max_tokens: u32) -> Self {
        SamplingRequest {
            messages: messages.into_iter().collect(),
            system_prompt: None,
            max_tokens,
            temperature: None,
            stop_sequences: Vec::new(),
        }
    }

    /// Sets the system prompt.
    #[must_use]
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Sets the temperature.
    #[must_use]
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }
}

/// The model's answer to a [`SamplingRequest`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SamplingResult {
    /// The answer (an assistant message).
    pub message: SamplingMessage,
    /// The model that answered.
    pub model: String,
    /// Why generation stopped (`endTurn`, `maxTokens`, `stopSequence`, or the provider's
    /// word), when known.
    pub stop_reason: Option<String>,
}

impl SamplingResult {
    /// An assistant answer `content` from `model`.
    pub fn new(content: impl Into<Content>, model: impl Into<String>) -> Self {
        SamplingResult {
            message: SamplingMessage::assistant(content),
            model: model.into(),
            stop_reason: None,
        }
    }

    /// Sets why generation stopped.
    #[must_use]
    pub fn stop_reason(mut self, reason: impl Into<String>) -> Self {
        self.stop_reason = Some(reason.into());
        self
    }

    /// The answer's text.
    pub fn text(&self) -> String {
        self.message
            .content
            .as_text()
            .unwrap_or_default()
            .to_owned()
    }
}

/// A tool asking a person for structured input (MCP's `elicitation/create`, form mode): a
/// message and the JSON Schema of a flat object of strings, numbers, booleans and enums.
///
/// ```
/// use actuator_tool_core::ElicitationRequest;
/// use serde_json::json;
/// let request = ElicitationRequest::new(
///     "Which branch should I deploy?",
///     json!({"type": "object", "properties": {"branch": {"type": "string", "default": "main"}}}),
/// );
/// assert_eq!(request.requested_schema["properties"]["branch"]["default"], "main");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ElicitationRequest {
    /// What to ask.
    pub message: String,
    /// The JSON Schema of the answer (an object).
    pub requested_schema: Value,
}

impl ElicitationRequest {
    /// Asks `message`, expecting an answer matching `requested_schema`.
    pub fn new(message: impl Into<String>, requested_schema: Value) -> Self {
        ElicitationRequest {
            message: message.into(),
            requested_schema,
        }
    }
}

/// What the person did with an [`ElicitationRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitationAction {
    /// Answered (the content holds the answer).
    Accept,
    /// Said no.
    Decline,
    /// Dismissed the question without choosing.
    Cancel,
}

impl fmt::Display for ElicitationAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ElicitationAction::Accept => "accept",
            ElicitationAction::Decline => "decline",
            ElicitationAction::Cancel => "cancel",
        })
    }
}

/// The answer to an [`ElicitationRequest`].
///
/// ```
/// use actuator_tool_core::{ElicitationAction, ElicitationResult};
/// let declined = ElicitationResult::decline();
/// assert_eq!(declined.action, ElicitationAction::Decline);
/// assert!(declined.content.is_none());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ElicitationResult {
    /// What the person did.
    pub action: ElicitationAction,
    /// The answer, when accepted.
    pub content: Option<Map<String, Value>>,
}

impl ElicitationResult {
    /// Accepted with `content`.
    pub fn accept(content: Map<String, Value>) -> Self {
        ElicitationResult {
            action: ElicitationAction::Accept,
            content: Some(content),
        }
    }

    /// Declined.
    pub fn decline() -> Self {
        ElicitationResult {
            action: ElicitationAction::Decline,
            content: None,
        }
    }

    /// Cancelled.
    pub fn cancel() -> Self {
        ElicitationResult {
            action: ElicitationAction::Cancel,
            content: None,
        }
    }
}

/// Why a [`ToolHost`] request failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// Whoever runs the call cannot do this (an MCP client without the capability, a run
    /// without a model or an operator).
    #[error("{what} is not available here: {reason}")]
    Unsupported {
        /// What was asked (`sampling`, `elicitation`).
        what: &'static str,
        /// Why not, and what would make it available.
        reason: String,
    },
    /// A policy refused the request.
    #[error("{what} was refused: {reason}")]
    Refused {
        /// What was asked.
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// The request was made and failed.
    #[error("{message}")]
    Failed {
        /// What failed.
        message: String,
        /// The cause.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

impl HostError {
    /// A failure with a message and no cause.
    pub fn failed(message: impl Into<String>) -> Self {
        HostError::Failed {
            message: message.into(),
            source: None,
        }
    }

    /// A failure with its cause.
    pub fn failed_from(
        message: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        HostError::Failed {
            message: message.into(),
            source: Some(source.into()),
        }
    }
}

/// Whoever runs a call, as the tool sees it. Every method has a default (logs go nowhere,
/// sampling and elicitation are unsupported), so a host implements what it offers.
///
/// `log` is called on the tool's task and must not block: hand the entry on, and drop it
/// rather than wait when the receiver is behind.
pub trait ToolHost: Send + Sync + 'static {
    /// `entry`, written by the call `call_id` of the tool `tool`. Returns whether it went
    /// anywhere (a level below the listener's threshold does not).
    fn log(&self, tool: &str, call_id: &str, entry: LogEntry) -> bool {
        let _ = (tool, call_id, entry);
        false
    }

    /// Asks the host's model.
    fn sample(&self, request: SamplingRequest) -> HostFuture<'_, SamplingResult> {
        let _ = request;
        Box::pin(std::future::ready(Err(HostError::Unsupported {
            what: "sampling",
            reason: "whoever runs this tool offers no model to ask".into(),
        })))
    }

    /// Asks the host's person.
    fn elicit(&self, request: ElicitationRequest) -> HostFuture<'_, ElicitationResult> {
        let _ = request;
        Box::pin(std::future::ready(Err(HostError::Unsupported {
            what: "elicitation",
            reason: "whoever runs this tool offers nobody to ask".into(),
        })))
    }
}

/// The host of a call, in its [`ToolContext::extensions`] (put there by whoever runs the
/// call).
#[derive(Clone)]
pub struct CallHost(Arc<dyn ToolHost>);

impl fmt::Debug for CallHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CallHost")
    }
}

impl CallHost {
    /// Requests go to `host`.
    pub fn new(host: impl ToolHost) -> Self {
        CallHost(Arc::new(host))
    }

    /// Requests go to a shared `host`.
    pub fn from_arc(host: Arc<dyn ToolHost>) -> Self {
        CallHost(host)
    }

    /// The host.
    pub fn host(&self) -> &dyn ToolHost {
        &*self.0
    }
}

impl ToolContext {
    /// Writes `entry` to whoever runs the call (an MCP client's log at its level, the run's
    /// events). Returns whether it went anywhere.
    ///
    /// ```
    /// use actuator_tool_core::{LogEntry, LogLevel, ToolContext};
    /// let ctx = ToolContext::new("call_1", "index");
    /// assert!(!ctx.log(LogEntry::new(LogLevel::Info, "indexing"))); // nobody listens
    /// ```
    pub fn log(&self, entry: LogEntry) -> bool {
        match self.extensions.get::<CallHost>() {
            Some(host) => host.0.log(&self.function, &self.call_id, entry),
            None => false,
        }
    }

    /// Asks the model of whoever runs the call: an MCP client's model
    /// (`sampling/createMessage`), or the run's model, its limits and usage counting.
    ///
    /// ```
    /// use actuator_tool_core::{HostError, SamplingMessage, SamplingRequest, ToolContext};
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let ctx = ToolContext::new("call_1", "summarize");
    /// let asked = ctx.sample(SamplingRequest::new([SamplingMessage::user("Hi")], 10)).await;
    /// assert!(matches!(asked, Err(HostError::Unsupported { .. })));
    /// # });
    /// ```
    pub async fn sample(&self, request: SamplingRequest) -> Result<SamplingResult, HostError> {
        match self.extensions.get::<CallHost>() {
            Some(host) => host.0.sample(request).await,
            None => Err(HostError::Unsupported {
                what: "sampling",
                reason: "this call runs without a host (serve it over MCP or run it in an agent)"
                    .into(),
            }),
        }
    }

    /// Asks the person behind whoever runs the call for structured input: an MCP client's
    /// user (`elicitation/create`), or the run's operator.
    pub async fn elicit(
        &self,
        request: ElicitationRequest,
    ) -> Result<ElicitationResult, HostError> {
        match self.extensions.get::<CallHost>() {
            Some(host) => host.0.elicit(request).await,
            None => Err(HostError::Unsupported {
                what: "elicitation",
                reason: "this call runs without a host (serve it over MCP or run it in an agent)"
                    .into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[derive(Default)]
    struct Recording(Mutex<Vec<(String, LogEntry)>>);

    struct Host(Arc<Recording>);

    impl ToolHost for Host {
        fn log(&self, tool: &str, _call_id: &str, entry: LogEntry) -> bool {
            self.0.0.lock().unwrap().push((tool.to_owned(), entry));
            true
        }

        fn sample(&self, request: SamplingRequest) -> HostFuture<'_, SamplingResult> {
            let asked = request.messages[0]
                .content
                .as_text()
                .unwrap_or_default()
                .to_owned();
            Box::pin(async move { Ok(SamplingResult::new(format!("echo: {asked}"), "test")) })
        }
    }

    #[tokio::test]
    async fn a_context_reaches_its_host_and_a_bare_one_says_what_is_missing() {
        let recording = Arc::new(Recording::default());
        let mut ctx = ToolContext::new("c1", "index");
        ctx.extensions
            .insert(CallHost::new(Host(recording.clone())));
        assert!(ctx.log(LogEntry::new(LogLevel::Info, "started").logger("indexer")));
        let answer = ctx
            .sample(SamplingRequest::new([SamplingMessage::user("hi")], 5))
            .await
            .unwrap();
        assert_eq!(answer.text(), "echo: hi");
        // Not offered by this host: the default says so.
        let elicited = ctx
            .elicit(ElicitationRequest::new("?", serde_json::json!({})))
            .await;
        assert!(matches!(
            elicited,
            Err(HostError::Unsupported {
                what: "elicitation",
                ..
            })
        ));
        {
            let logged = recording.0.lock().unwrap();
            assert_eq!(logged[0].0, "index");
            assert_eq!(logged[0].1.logger.as_deref(), Some("indexer"));
        }

        let bare = ToolContext::new("c2", "index");
        let err = bare
            .sample(SamplingRequest::new([SamplingMessage::user("hi")], 5))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("serve it over MCP"), "{err}");
    }
}
