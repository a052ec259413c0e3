//! What a model generation returns.

use compact_str::CompactString;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::{ChatMessageAssistant, MessageContent, MessageSource, new_id};
use crate::tool_call::ToolCall;

/// Why a generation stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The model finished its answer.
    #[default]
    Stop,
    /// The output hit `max_tokens`.
    MaxTokens,
    /// The input plus output exceeded the model's context window.
    ModelLength,
    /// The model called tools.
    ToolCalls,
    /// The provider's content filter refused.
    ContentFilter,
    /// Anything else.
    Unknown,
}

/// Token usage of a generation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelUsage {
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Total tokens.
    pub total_tokens: u64,
    /// Input tokens written to the provider's cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens_cache_write: Option<u64>,
    /// Input tokens read from the provider's cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens_cache_read: Option<u64>,
    /// Tokens spent on reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Cost in US dollars, when the model reports prices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_cost: Option<f64>,
}

impl ModelUsage {
    /// Usage with the given input and output tokens (total is their sum).
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        ModelUsage {
            input_tokens,
            output_tokens,
            total_tokens: input_tokens + output_tokens,
            ..ModelUsage::default()
        }
    }
}

impl std::ops::AddAssign for ModelUsage {
    fn add_assign(&mut self, rhs: Self) {
        fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            match (a, b) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
            }
        }
        self.input_tokens += rhs.input_tokens;
        self.output_tokens += rhs.output_tokens;
        self.total_tokens += rhs.total_tokens;
        self.input_tokens_cache_write =
            add(self.input_tokens_cache_write, rhs.input_tokens_cache_write);
        self.input_tokens_cache_read =
            add(self.input_tokens_cache_read, rhs.input_tokens_cache_read);
        self.reasoning_tokens = add(self.reasoning_tokens, rhs.reasoning_tokens);
        self.total_cost = match (self.total_cost, rhs.total_cost) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
    }
}

/// One choice of a generation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatCompletionChoice {
    /// The assistant message.
    pub message: ChatMessageAssistant,
    /// Why it stopped.
    #[serde(default)]
    pub stop_reason: StopReason,
}

/// The output of a generation.
///
/// ```
/// use actuator_model::{ModelOutput, StopReason};
/// let out = ModelOutput::for_tool_call("mock", "add", serde_json::json!({"x": 1, "y": 2}));
/// assert_eq!(out.stop_reason(), Some(StopReason::ToolCalls));
/// assert_eq!(out.message().unwrap().calls()[0].function, "add");
/// assert_eq!(ModelOutput::from_content("mock", "4").completion(), "4");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelOutput {
    /// The model that generated it.
    #[serde(default)]
    pub model: CompactString,
    /// The choices (usually one).
    #[serde(default)]
    pub choices: Vec<ChatCompletionChoice>,
    /// Token usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ModelUsage>,
    /// Seconds the generation took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<f64>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// The completion, when it was set apart from the message text (for example, a react
    /// agent's submitted answer). `None` means the first message's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion: Option<String>,
}

impl ModelOutput {
    /// An output with one assistant message of text.
    pub fn from_content(
        model: impl Into<CompactString>,
        content: impl Into<MessageContent>,
    ) -> Self {
        Self::from_message(model, ChatMessageAssistant::new(content), StopReason::Stop)
    }

    /// An output with one assistant message calling one tool.
    pub fn for_tool_call(
        model: impl Into<CompactString>,
        function: impl Into<CompactString>,
        arguments: Value,
    ) -> Self {
        Self::for_tool_calls(
            model,
            "",
            vec![ToolCall::new(
                format!("call_{}", new_id()),
                function,
                arguments,
            )],
        )
    }

    /// An output with one assistant message with text and tool calls.
    pub fn for_tool_calls(
        model: impl Into<CompactString>,
        content: impl Into<MessageContent>,
        calls: Vec<ToolCall>,
    ) -> Self {
        let model = model.into();
        let message = ChatMessageAssistant {
            id: new_id(),
            content: content.into(),
            source: Some(MessageSource::Generate),
            metadata: None,
            tool_calls: Some(calls),
            model: Some(model.clone()),
        };
        Self::from_message(model, message, StopReason::ToolCalls)
    }

    /// An output with one message and a stop reason.
    pub fn from_message(
        model: impl Into<CompactString>,
        mut message: ChatMessageAssistant,
        stop_reason: StopReason,
    ) -> Self {
        let model = model.into();
        if message.model.is_none() && !model.is_empty() {
            message.model = Some(model.clone());
        }
        ModelOutput {
            model,
            choices: vec![ChatCompletionChoice {
                message,
                stop_reason,
            }],
            usage: None,
            time: None,
            metadata: None,
            completion: None,
        }
    }

    /// Sets the usage.
    #[must_use]
    pub fn with_usage(mut self, usage: ModelUsage) -> Self {
        self.usage = Some(usage);
        self
    }

    /// Sets the stop reason of the first choice.
    #[must_use]
    pub fn with_stop_reason(mut self, stop_reason: StopReason) -> Self {
        if let Some(choice) = self.choices.first_mut() {
            choice.stop_reason = stop_reason;
        }
        self
    }

    /// The first choice's message.
    pub fn message(&self) -> Option<&ChatMessageAssistant> {
        self.choices.first().map(|c| &c.message)
    }

    /// The first choice's stop reason.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.choices.first().map(|c| c.stop_reason)
    }

    /// The completion: the text set with [`ModelOutput::set_completion`], else the text of the
    /// first choice's message (empty when there is none).
    pub fn completion(&self) -> String {
        match &self.completion {
            Some(c) => c.clone(),
            None => self.message().map(|m| m.content.text()).unwrap_or_default(),
        }
    }

    /// Sets the completion apart from the message text. An output with no choices gets one: an
    /// assistant message with the completion as its text (as the reference does when an
    /// output is built from a completion alone), so the output is no longer empty.
    ///
    /// ```
    /// use actuator_model::ModelOutput;
    /// let mut out = ModelOutput::default();
    /// out.set_completion("42");
    /// assert!(!out.is_empty());
    /// assert_eq!(out.message().unwrap().content.text(), "42");
    /// assert_eq!(out.completion(), "42");
    /// ```
    pub fn set_completion(&mut self, completion: impl Into<String>) {
        let completion = completion.into();
        if self.choices.is_empty() {
            let mut message = ChatMessageAssistant::new(completion.clone());
            if !self.model.is_empty() {
                message.model = Some(self.model.clone());
            }
            self.choices.push(ChatCompletionChoice {
                message,
                stop_reason: StopReason::Stop,
            });
        }
        self.completion = Some(completion);
    }

    /// The first choice's message, mutably.
    pub fn message_mut(&mut self) -> Option<&mut ChatMessageAssistant> {
        self.choices.first_mut().map(|c| &mut c.message)
    }

    /// Whether there are no choices.
    pub fn is_empty(&self) -> bool {
        self.choices.is_empty()
    }
}
