//! The [`Model`] trait, its forwarding impls for `Arc` and `Box`, and the helpers around a
//! generation: the tool-choice rules applied before it and the token estimate.

use std::sync::Arc;

pub use actuator_tool_core::BoxFuture;
use actuator_tool_core::{ToolChoice, ToolInfo};

use crate::error::ModelError;
use crate::message::ChatMessage;
use crate::output::ModelOutput;
use crate::request::GenerateRequest;

/// A language model: generates the next assistant message from a conversation and the tools on
/// offer, given as one [`GenerateRequest`]. Object-safe, so agents hold `Arc<dyn Model>`.
///
/// ```
/// use actuator_model::{BoxFuture, GenerateRequest, Model, ModelError, ModelOutput};
///
/// /// Answers with the number of messages it was shown.
/// struct Counter;
/// impl Model for Counter {
///     fn name(&self) -> &str { "counter" }
///     fn generate<'a>(&'a self, request: GenerateRequest<'a>) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
///         let n = request.input.len();
///         Box::pin(async move { Ok(ModelOutput::from_content("counter", n.to_string())) })
///     }
/// }
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let input = [actuator_model::ChatMessage::user("hi")];
/// let out = Counter.generate(GenerateRequest::new(&input)).await.unwrap();
/// assert_eq!(out.completion(), "1");
/// # });
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a Model",
    note = "implement `actuator_model::Model` (name + generate), or use `ScriptedModel` / `FunctionModel` in tests"
)]
pub trait Model: Send + Sync {
    /// The model's name (recorded on its messages).
    fn name(&self) -> &str;

    /// Generates the next output for `request`. Callers apply the tool choice first (see
    /// [`generate`]), so `request.tools` is exactly what the model may call. A provider waits
    /// between attempts with [`GenerateRequest::wait_for_retry`], so the request's observer
    /// hears of its retries; a model that wraps another passes the request on.
    fn generate<'a>(
        &'a self,
        request: GenerateRequest<'a>,
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
        request: GenerateRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        (**self).generate(request)
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
        request: GenerateRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        (**self).generate(request)
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
    // An `Arc<dyn Model>` already is what is kept: share it instead of wrapping it (a count
    // up for the copy, a count down when `model` is dropped).
    if let Some(shared) = (&model as &dyn std::any::Any).downcast_ref::<Arc<dyn Model>>() {
        return Arc::clone(shared);
    }
    Arc::new(model)
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

/// Generates with `model` after applying the request's tool choice
/// ([`resolve_tool_choice`]): what a caller outside an agent's run uses, where
/// `RunContext::generate` (in `actuator-agent`) would.
///
/// ```
/// use std::sync::Arc;
/// use actuator_model::{FunctionModel, GenerateRequest, ModelOutput, generate};
/// use actuator_tool_core::{ToolChoice, ToolInfo, ToolParams};
///
/// // Answers with the names of the tools it was offered.
/// let model = FunctionModel::new("m", |_input, tools| {
///     let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
///     Ok(ModelOutput::from_content("m", names.join(",")))
/// });
/// let tools = vec![
///     Arc::new(ToolInfo::new("a", "A.", ToolParams::default())),
///     Arc::new(ToolInfo::new("b", "B.", ToolParams::default())),
/// ];
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let choice = ToolChoice::function("b");
/// let request = GenerateRequest::new(&[]).tools(&tools).tool_choice(&choice);
/// assert_eq!(generate(&model, request).await.unwrap().completion(), "b");
/// # });
/// ```
pub async fn generate(
    model: &dyn Model,
    request: GenerateRequest<'_>,
) -> Result<ModelOutput, ModelError> {
    let (offered, choice) = resolve_tool_choice(request.tools, request.tool_choice);
    model
        .generate(request.tools(&offered).tool_choice(&choice))
        .await
}
