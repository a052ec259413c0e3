//! `ask_user` and `notify_user` (the reference's tools): the agent's side of its channel.

use std::time::Duration;

use actuator_events::{Event, InfoEvent};
use actuator_tool_core::{
    ToolArgs, ToolContext, ToolDef, ToolDefError, ToolError, ToolFailure, ToolParams,
};
use serde_json::{Value, json};

use super::{AgentChannel, Answer};
use crate::context::RunContext;

/// What the model reads when no operator is attached to the run.
pub const NO_OPERATOR: &str = "No operator is attached to this run, so nobody can answer: \
     decide with what you have, and say what you assumed in your answer.";

/// What the model reads when the operator declined a question (the reference's words).
pub const DECLINED: &str = "User declined to answer the question.";

/// What the model reads when nobody answered in time and there is no default (the
/// reference's words).
pub const UNANSWERED: &str = "Question was cancelled before the user answered.";

/// How `ask_user` waits.
///
/// ```
/// use std::time::Duration;
/// use actuator_agent::channel::{AskUserOptions, ask_user_with};
/// let options = AskUserOptions::new()
///     .timeout(Duration::from_secs(30))
///     .default_answer(r#"{"proceed": false}"#);
/// let tool = ask_user_with(options).unwrap();
/// assert_eq!(tool.name(), "ask_user");
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AskUserOptions {
    /// How long a question waits for its answer (default five minutes).
    pub timeout: Duration,
    /// The answer the model gets when nobody answers in time; without one it reads
    /// [`UNANSWERED`] as an error.
    pub default_answer: Option<String>,
}

impl Default for AskUserOptions {
    fn default() -> Self {
        AskUserOptions {
            timeout: Duration::from_secs(300),
            default_answer: None,
        }
    }
}

impl AskUserOptions {
    /// Five minutes, no default.
    pub fn new() -> Self {
        Self::default()
    }

    /// How long a question waits.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The answer when nobody answers in time.
    #[must_use]
    pub fn default_answer(mut self, answer: impl Into<String>) -> Self {
        self.default_answer = Some(answer.into());
        self
    }
}

/// The run's channel, if the run has one.
fn channel_of(ctx: &ToolContext) -> Option<(RunContext, AgentChannel)> {
    let cx = RunContext::from_tool_context(ctx).ok()?;
    let channel = cx.resource::<AgentChannel>()?.clone();
    Some((cx.clone(), channel))
}

fn note(cx: &RunContext, source: &str, message: String) {
    cx.emit(Event::Info(InfoEvent {
        source: Some(source.to_owned()),
        message,
    }));
}

/// `ask_user` with the default options (five minutes, no default answer).
///
/// # Errors
///
/// Never in practice: the definition is fixed (the builder's checks are kept).
pub fn ask_user() -> Result<ToolDef, ToolDefError> {
    ask_user_with(AskUserOptions::default())
}

/// `ask_user(message, schema?)`: asks the operator through the run's [`AgentChannel`] and
/// returns the answer (a JSON object's text when a schema was given). Declined, unanswered
/// in time (without a default) or without an operator, the model reads why as the call's
/// error. Each question and how it ended is an info event (`ask_user`).
///
/// # Errors
///
/// Never in practice: the definition is fixed (the builder's checks are kept).
pub fn ask_user_with(options: AskUserOptions) -> Result<ToolDef, ToolDefError> {
    let params = ToolParams::from_value(&json!({
        "properties": {
            "message": {"type": "string", "description": "The question to show the operator."},
            "schema": {
                "type": "object",
                "description": "Optional JSON Schema of the answer: an object whose properties are the fields the operator fills in."
            }
        },
        "required": ["message"]
    }))?;
    ToolDef::builder("ask_user")
        .description(
            "Ask the human operator a question and wait for the answer. Use it for what you \
         cannot find out yourself (a preference, a missing parameter, a confirmation before \
         something hard to undo); not when you are merely unsure.",
        )
        .parameters(params)
        .handler(move |mut args: ToolArgs, ctx: ToolContext| {
            let options = options.clone();
            async move {
                let message: String = args.required("message")?;
                let schema: Option<Value> = args.optional("schema")?;
                let Some((cx, channel)) = channel_of(&ctx) else {
                    return Err(ToolFailure::from(ToolError::new(NO_OPERATOR)));
                };
                let answer = channel.ask(message.clone(), schema, options.timeout).await;
                let (outcome, result) = match answer {
                    Answer::Accepted(text) => ("accepted", Ok(text)),
                    Answer::Declined => ("declined", Err(DECLINED.to_owned())),
                    Answer::TimedOut => match &options.default_answer {
                        Some(default) => ("timed out: default answer", Ok(default.clone())),
                        None => ("timed out", Err(UNANSWERED.to_owned())),
                    },
                };
                note(&cx, "ask_user", format!("{message} ({outcome})"));
                result.map_err(|e| ToolFailure::from(ToolError::new(e)))
            }
        })
        .build()
}

/// `notify_user(title, message)`: tells the operator through the run's [`AgentChannel`];
/// nothing comes back. Without an operator the model reads that nobody will see it.
///
/// # Errors
///
/// Never in practice: the definition is fixed (the builder's checks are kept).
pub fn notify_user() -> Result<ToolDef, ToolDefError> {
    let params = ToolParams::from_value(&json!({
        "properties": {
            "title": {"type": "string", "description": "A short headline the operator sees first."},
            "message": {"type": "string", "description": "The notice itself."}
        },
        "required": ["title", "message"]
    }))?;
    ToolDef::builder("notify_user")
        .description(
            "Tell the human operator something they should know without having to answer \
         (a milestone reached, a blocking condition). Use it sparingly; for an answer, use \
         ask_user.",
        )
        .parameters(params)
        .handler(|mut args: ToolArgs, ctx: ToolContext| async move {
            let title: String = args.required("title")?;
            let message: String = args.required("message")?;
            let Some((cx, channel)) = channel_of(&ctx) else {
                return Ok::<_, ToolFailure>(
                    "No operator is attached to this run, so nobody will see the notice: if \
                     it matters, say it in your answer."
                        .to_owned(),
                );
            };
            let text = format!("{title}\n\n{message}");
            note(&cx, "notify_user", text.clone());
            channel.notify(text);
            Ok("Notification sent.".to_owned())
        })
        .build()
}
