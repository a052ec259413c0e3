//! The [`Model`] trait, the tool-choice rules applied before a generation, and the test
//! models that ship with the library.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

pub use actuator_tool_core::BoxFuture;
use actuator_tool_core::{ToolChoice, ToolInfo};

use crate::config::GenerateConfig;
use crate::message::ChatMessage;
use crate::output::ModelOutput;

/// A generation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A scripted model was asked for more outputs than it was given.
    #[error(
        "The scripted model has no output left: generation {call} was requested but only {scripted} output(s) were scripted. Add more outputs to the script."
    )]
    ScriptExhausted {
        /// Which generation (1-based) was requested.
        call: usize,
        /// How many outputs were scripted.
        scripted: usize,
    },
    /// The provider returned an error.
    #[error("The model provider returned an error: {message}")]
    Provider {
        /// The provider's message.
        message: String,
        /// Whether retrying may succeed.
        retryable: bool,
    },
    /// The generation took longer than the configured `GenerateConfig::timeout`.
    #[error(
        "The generation did not finish within its timeout of {} seconds (GenerateConfig::timeout).",
        .after.as_secs_f64()
    )]
    Timeout {
        /// The timeout.
        after: std::time::Duration,
    },
    /// A provider's request failed with a typed error (for example
    /// `actuator_providers::ProviderError`): its message is this error's message, and
    /// [`ModelError::downcast_ref`] gives back the typed error.
    #[error(transparent)]
    Api(ApiError),
    /// Any other failure: what failed, and the error that caused it (its
    /// [`source`](std::error::Error::source), not part of the message).
    #[error("{message}")]
    Other {
        /// What failed.
        message: String,
        /// The error that caused it.
        #[source]
        source: Option<ErrorCause>,
    },
}

impl ModelError {
    /// Wraps a provider's typed error; `retryable` says whether trying again may succeed.
    ///
    /// ```
    /// use actuator_model::ModelError;
    /// #[derive(Debug, thiserror::Error)]
    /// #[error("rate limited")]
    /// struct RateLimited;
    /// let err = ModelError::api(RateLimited, true);
    /// assert_eq!(err.to_string(), "rate limited");
    /// assert!(err.is_retryable());
    /// assert!(err.downcast_ref::<RateLimited>().is_some());
    /// ```
    pub fn api(error: impl std::error::Error + Send + Sync + 'static, retryable: bool) -> Self {
        ModelError::Api(ApiError {
            error: Arc::new(error),
            retryable,
        })
    }

    /// Any other failure, with no cause behind it.
    ///
    /// ```
    /// use actuator_model::ModelError;
    /// let err = ModelError::other("the tokenizer is missing");
    /// assert_eq!(err.to_string(), "the tokenizer is missing");
    /// assert!(std::error::Error::source(&err).is_none());
    /// ```
    pub fn other(message: impl Into<String>) -> Self {
        ModelError::Other {
            message: message.into(),
            source: None,
        }
    }

    /// Any other failure, caused by `cause`: the cause stays reachable as the error's
    /// [`source`](std::error::Error::source) rather than being flattened into its message.
    ///
    /// ```
    /// use actuator_model::ModelError;
    /// let cause = std::io::Error::other("disk full");
    /// let err = ModelError::caused_by("the cache could not be written", cause);
    /// assert_eq!(err.to_string(), "the cache could not be written");
    /// let source = std::error::Error::source(&err).unwrap();
    /// assert_eq!(source.to_string(), "disk full");
    /// ```
    pub fn caused_by(
        message: impl Into<String>,
        cause: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        ModelError::Other {
            message: message.into(),
            source: Some(ErrorCause::new(cause)),
        }
    }

    /// The provider's typed error, when this is an [`ModelError::Api`] of type `E`.
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        match self {
            ModelError::Api(api) => api.error.downcast_ref::<E>(),
            _ => None,
        }
    }

    /// Whether trying the generation again may succeed (rate limits, overloaded or failing
    /// servers, lost connections, timeouts).
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Provider { retryable, .. } => *retryable,
            ModelError::Api(api) => api.retryable,
            ModelError::Timeout { .. } => true,
            ModelError::ScriptExhausted { .. } | ModelError::Other { .. } => false,
        }
    }
}

/// A provider's typed error inside a [`ModelError::Api`]: shared (so `ModelError` stays
/// `Clone`), compared by identity.
#[derive(Debug, Clone)]
pub struct ApiError {
    error: Arc<dyn std::error::Error + Send + Sync + 'static>,
    retryable: bool,
}

impl ApiError {
    /// The typed error.
    pub fn error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.error
    }

    /// Whether trying again may succeed.
    pub fn retryable(&self) -> bool {
        self.retryable
    }
}

impl PartialEq for ApiError {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.error, &other.error) && self.retryable == other.retryable
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for ApiError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

/// The error that caused another, kept as that error's
/// [`source`](std::error::Error::source): shared (so the errors holding it stay `Clone`),
/// compared by identity. As a source it reads as the cause itself (its message, then the
/// cause's own source); [`ErrorCause::get`] and [`ErrorCause::downcast_ref`] reach the typed
/// cause.
///
/// ```
/// use actuator_model::ErrorCause;
/// let cause = ErrorCause::new(std::io::Error::other("refused"));
/// assert_eq!(cause.to_string(), "refused");
/// assert!(cause.downcast_ref::<std::io::Error>().is_some());
/// assert_eq!(cause, cause.clone());
/// assert_ne!(cause, ErrorCause::new(std::io::Error::other("refused")));
/// ```
#[derive(Debug, Clone)]
pub struct ErrorCause(Arc<dyn std::error::Error + Send + Sync + 'static>);

impl ErrorCause {
    /// Keeps `error` as a cause.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        ErrorCause(Arc::new(error))
    }

    /// Keeps an already boxed `error` as a cause, as its own type (which
    /// [`ErrorCause::downcast_ref`] still reaches): a boxed error is not itself an `Error`.
    ///
    /// ```
    /// use actuator_model::ErrorCause;
    /// let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(std::io::Error::other("refused"));
    /// let cause = ErrorCause::from_boxed(boxed);
    /// assert!(cause.downcast_ref::<std::io::Error>().is_some());
    /// ```
    pub fn from_boxed(error: Box<dyn std::error::Error + Send + Sync + 'static>) -> Self {
        ErrorCause(Arc::from(error))
    }

    /// The cause.
    pub fn get(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0
    }

    /// The cause, when it is of type `E`.
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.0.downcast_ref::<E>()
    }
}

impl PartialEq for ErrorCause {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Display for ErrorCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for ErrorCause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// A language model: generates the next assistant message from a conversation and the tools on
/// offer. Object-safe, so agents hold `Arc<dyn Model>`.
///
/// Tools are passed as `Arc<ToolInfo>` so that offering them each turn copies nothing.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a Model",
    note = "implement `actuator_model::Model` (name + generate), or use `ScriptedModel` / `FunctionModel` in tests"
)]
pub trait Model: Send + Sync {
    /// The model's name (recorded on its messages).
    fn name(&self) -> &str;

    /// Generates the next output. Callers apply the tool choice first (see [`generate`]), so
    /// `tools` is exactly what the model may call.
    fn generate<'a>(
        &'a self,
        input: &'a [ChatMessage],
        tools: &'a [Arc<ToolInfo>],
        tool_choice: &'a ToolChoice,
        config: &'a GenerateConfig,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>>;

    /// The model's context window in tokens, when known.
    fn context_window(&self) -> Option<u64> {
        None
    }

    /// An estimate of the tokens `messages` take: about four characters a token. Providers
    /// with a real tokenizer override it.
    fn count_tokens(&self, messages: &[ChatMessage]) -> u64 {
        estimate_tokens(messages)
    }
}

impl<M: Model + ?Sized> Model for Arc<M> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn generate<'a>(
        &'a self,
        input: &'a [ChatMessage],
        tools: &'a [Arc<ToolInfo>],
        tool_choice: &'a ToolChoice,
        config: &'a GenerateConfig,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        (**self).generate(input, tools, tool_choice, config)
    }

    fn context_window(&self) -> Option<u64> {
        (**self).context_window()
    }

    fn count_tokens(&self, messages: &[ChatMessage]) -> u64 {
        (**self).count_tokens(messages)
    }
}

impl<M: Model + ?Sized> Model for Box<M> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn generate<'a>(
        &'a self,
        input: &'a [ChatMessage],
        tools: &'a [Arc<ToolInfo>],
        tool_choice: &'a ToolChoice,
        config: &'a GenerateConfig,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        (**self).generate(input, tools, tool_choice, config)
    }

    fn context_window(&self) -> Option<u64> {
        (**self).context_window()
    }

    fn count_tokens(&self, messages: &[ChatMessage]) -> u64 {
        (**self).count_tokens(messages)
    }
}

/// `model` as the `Arc<dyn Model>` agents keep: builders take `impl Model + 'static` and call
/// this, so a caller passes a model by value (`ScriptedModel::new(..)`) or one it shares (an
/// `Arc<dyn Model>`, an `Arc<ScriptedModel>`). An `Arc<dyn Model>` is kept as it is rather
/// than wrapped in a second `Arc`.
///
/// ```
/// use std::sync::Arc;
/// use actuator_model::{Model, ScriptedModel, shared_model};
/// let shared: Arc<dyn Model> = Arc::new(ScriptedModel::new([]));
/// assert!(Arc::ptr_eq(&shared_model(shared.clone()), &shared));
/// assert_eq!(shared_model(ScriptedModel::named("by value", [])).name(), "by value");
/// ```
pub fn shared_model(model: impl Model + 'static) -> Arc<dyn Model> {
    let mut slot = Some(model);
    // An `Arc<dyn Model>` already is what is kept: take it instead of wrapping it.
    if let Some(shared) = (&mut slot as &mut dyn std::any::Any)
        .downcast_mut::<Option<Arc<dyn Model>>>()
        .and_then(Option::take)
    {
        return shared;
    }
    match slot {
        Some(model) => Arc::new(model),
        // Unreachable: the slot is emptied only when it held an `Arc<dyn Model>`.
        None => Arc::new(ScriptedModel::new([])),
    }
}

/// About four characters a token, plus a few tokens of overhead per message.
pub fn estimate_tokens(messages: &[ChatMessage]) -> u64 {
    messages
        .iter()
        .map(|m| {
            let mut chars = m.text().chars().count();
            if let Some(a) = m.as_assistant() {
                for call in a.calls() {
                    chars += call.function.len() + call.arguments.as_json().len();
                }
            }
            (chars as u64).div_ceil(4) + 4
        })
        .sum()
}

/// Applies a tool choice to the tools on offer (§1.4): `Function(name)` offers only that
/// tool; `None`, or nothing left to offer, offers none and makes the choice `None`.
///
/// ```
/// use std::sync::Arc;
/// use actuator_model::resolve_tool_choice;
/// use actuator_tool_core::{ToolChoice, ToolInfo, ToolParams};
/// let info = |n: &str| Arc::new(ToolInfo::new(n, "d", ToolParams::default()));
/// let tools = vec![info("a"), info("b")];
/// let (offered, choice) = resolve_tool_choice(&tools, &ToolChoice::function("b"));
/// assert_eq!(offered.len(), 1);
/// assert_eq!(choice, ToolChoice::function("b"));
/// let (offered, choice) = resolve_tool_choice(&tools, &ToolChoice::function("zzz"));
/// assert!(offered.is_empty());
/// assert_eq!(choice, ToolChoice::None);
/// ```
pub fn resolve_tool_choice(
    tools: &[Arc<ToolInfo>],
    choice: &ToolChoice,
) -> (Vec<Arc<ToolInfo>>, ToolChoice) {
    let offered: Vec<Arc<ToolInfo>> = match choice {
        ToolChoice::None => Vec::new(),
        ToolChoice::Function { name } => {
            tools.iter().filter(|t| &t.name == name).cloned().collect()
        }
        ToolChoice::Auto | ToolChoice::Any => tools.to_vec(),
    };
    if offered.is_empty() {
        (offered, ToolChoice::None)
    } else {
        (offered, choice.clone())
    }
}

/// Generates with `model` after applying the tool choice.
pub async fn generate(
    model: &dyn Model,
    input: &[ChatMessage],
    tools: &[Arc<ToolInfo>],
    tool_choice: &ToolChoice,
    config: &GenerateConfig,
) -> Result<ModelOutput, ModelError> {
    let (offered, choice) = resolve_tool_choice(tools, tool_choice);
    model.generate(input, &offered, &choice, config).await
}

/// A model that returns prepared outputs in order: the embedded default of the examples and
/// the workhorse of tests. Running out is a [`ModelError::ScriptExhausted`].
///
/// ```
/// use actuator_model::{ChatMessage, GenerateConfig, Model, ModelOutput, ScriptedModel};
/// use actuator_tool_core::ToolChoice;
/// # tokio_test_block(async {
/// let model = ScriptedModel::new([ModelOutput::from_content("scripted", "hello")]);
/// let input = [ChatMessage::user("hi")];
/// let out = model.generate(&input, &[], &ToolChoice::Auto, &GenerateConfig::default()).await.unwrap();
/// assert_eq!(out.completion(), "hello");
/// assert!(model.generate(&input, &[], &ToolChoice::Auto, &GenerateConfig::default()).await.is_err());
/// # });
/// # fn tokio_test_block(f: impl std::future::Future<Output = ()>) {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Debug)]
pub struct ScriptedModel {
    name: String,
    state: Mutex<ScriptState>,
}

#[derive(Debug)]
struct ScriptState {
    outputs: VecDeque<ModelOutput>,
    scripted: usize,
    calls: usize,
}

impl ScriptedModel {
    /// A model named `scripted` that returns `outputs` in order.
    pub fn new(outputs: impl IntoIterator<Item = ModelOutput>) -> Self {
        Self::named("scripted", outputs)
    }

    /// A scripted model with a name.
    pub fn named(name: impl Into<String>, outputs: impl IntoIterator<Item = ModelOutput>) -> Self {
        let outputs: VecDeque<ModelOutput> = outputs.into_iter().collect();
        ScriptedModel {
            name: name.into(),
            state: Mutex::new(ScriptState {
                scripted: outputs.len(),
                outputs,
                calls: 0,
            }),
        }
    }

    /// How many generations were requested so far.
    pub fn calls(&self) -> usize {
        self.state.lock().map_or(0, |s| s.calls)
    }

    /// How many outputs are left.
    pub fn remaining(&self) -> usize {
        self.state.lock().map_or(0, |s| s.outputs.len())
    }
}

impl Model for ScriptedModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn generate<'a>(
        &'a self,
        _input: &'a [ChatMessage],
        _tools: &'a [Arc<ToolInfo>],
        _tool_choice: &'a ToolChoice,
        _config: &'a GenerateConfig,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        let result = match self.state.lock() {
            Ok(mut state) => {
                state.calls += 1;
                match state.outputs.pop_front() {
                    Some(mut out) => {
                        stamp_model(&mut out, &self.name);
                        Ok(out)
                    }
                    None => Err(ModelError::ScriptExhausted {
                        call: state.calls,
                        scripted: state.scripted,
                    }),
                }
            }
            Err(_) => Err(ModelError::other("the scripted model's lock was poisoned")),
        };
        Box::pin(std::future::ready(result))
    }
}

fn stamp_model(out: &mut ModelOutput, name: &str) {
    if out.model.is_empty() {
        out.model = name.into();
    }
    for choice in &mut out.choices {
        if choice.message.model.is_none() {
            choice.message.model = Some(out.model.clone());
        }
    }
}

type GenerateFn =
    dyn Fn(&[ChatMessage], &[Arc<ToolInfo>]) -> Result<ModelOutput, ModelError> + Send + Sync;

/// A model that computes each output from the conversation and the tools on offer.
///
/// ```
/// use actuator_model::{FunctionModel, ModelOutput};
/// // Answers with the number of messages it was shown.
/// let model = FunctionModel::new("counter", |input, _tools| {
///     Ok(ModelOutput::from_content("counter", input.len().to_string()))
/// });
/// # let _ = model;
/// ```
pub struct FunctionModel {
    name: String,
    f: Arc<GenerateFn>,
}

impl std::fmt::Debug for FunctionModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FunctionModel")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl FunctionModel {
    /// A model named `name` whose outputs `f` computes.
    pub fn new(
        name: impl Into<String>,
        f: impl Fn(&[ChatMessage], &[Arc<ToolInfo>]) -> Result<ModelOutput, ModelError>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        FunctionModel {
            name: name.into(),
            f: Arc::new(f),
        }
    }
}

impl Model for FunctionModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn generate<'a>(
        &'a self,
        input: &'a [ChatMessage],
        tools: &'a [Arc<ToolInfo>],
        _tool_choice: &'a ToolChoice,
        _config: &'a GenerateConfig,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        let result = (self.f)(input, tools).map(|mut out| {
            stamp_model(&mut out, &self.name);
            out
        });
        Box::pin(std::future::ready(result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn say(text: &str) -> ModelOutput {
        ModelOutput::from_content("m", text)
    }

    #[tokio::test]
    async fn arc_and_box_of_a_model_are_models_that_forward_to_it() {
        let input = [ChatMessage::user("hi")];
        let config = GenerateConfig::default();
        let inner = Arc::new(ScriptedModel::named("inner", [say("a"), say("b")]));
        let boxed: Box<dyn Model> = Box::new(Arc::clone(&inner));
        let out = boxed
            .generate(&input, &[], &ToolChoice::Auto, &config)
            .await
            .unwrap();
        assert_eq!(boxed.name(), "inner");
        assert_eq!(out.completion(), "a");
        let shared = shared_model(Arc::clone(&inner));
        let out = shared
            .generate(&input, &[], &ToolChoice::Auto, &config)
            .await
            .unwrap();
        assert_eq!(out.completion(), "b");
        assert_eq!(inner.calls(), 2);
    }

    #[test]
    fn shared_model_keeps_an_arc_dyn_model_as_it_is() {
        let shared: Arc<dyn Model> = Arc::new(ScriptedModel::new([]));
        assert!(Arc::ptr_eq(&shared_model(Arc::clone(&shared)), &shared));
    }

    #[test]
    fn other_errors_keep_their_cause_as_source() {
        let err = ModelError::caused_by("failed", std::io::Error::other("disk full"));
        let source = std::error::Error::source(&err).unwrap();
        let cause = source.downcast_ref::<ErrorCause>().unwrap();
        assert!(cause.downcast_ref::<std::io::Error>().is_some());
        assert!(!err.to_string().contains("disk full"));
    }
}
