//! `think`: a scratchpad the model writes to; no effect, returns nothing.

use actuator_tool_core::{
    ContentFormat, ToolArgs, ToolCallContent, ToolCallView, ToolContext, ToolDef, ToolDefError,
    ToolFailure, ToolParams,
};
use serde_json::{Map, Value, json};

const DESCRIPTION: &str = "Use the tool to think about something.\n\nThe will not obtain new information or change the environment, but just append the thought to the log. Use it when complex reasoning or some cache memory is needed.";
const THOUGHT_DESCRIPTION: &str = "A thought to think about.";

/// The options of [`think`]: its two descriptions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ThinkOptions {
    /// Replaces the tool's description.
    pub description: Option<String>,
    /// Replaces the description of its `thought` parameter.
    pub thought_description: Option<String>,
}

impl ThinkOptions {
    /// The reference's descriptions.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the tool's description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Replaces the description of `thought`.
    #[must_use]
    pub fn thought_description(mut self, description: impl Into<String>) -> Self {
        self.thought_description = Some(description.into());
        self
    }
}

/// The `think` tool: returns an empty result; the thought stays in the conversation. Its
/// viewer shows the thought as markdown.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let think = actuator_tools::think(actuator_tools::ThinkOptions::new()).unwrap();
/// let ctx = actuator_tool_core::ToolContext::new("c1", "think");
/// let out = think.call(serde_json::json!({"thought": "x"}), ctx).await.unwrap();
/// assert_eq!(out.text(), "");
/// # });
/// ```
pub fn think(options: ThinkOptions) -> Result<ToolDef, ToolDefError> {
    let thought = options
        .thought_description
        .unwrap_or_else(|| THOUGHT_DESCRIPTION.to_owned());
    let params = ToolParams::from_value(&json!({
        "type": "object",
        "properties": {"thought": {"type": "string", "description": thought}},
        "required": ["thought"],
        "additionalProperties": false,
    }))?;
    ToolDef::builder("think")
        .description(
            options
                .description
                .unwrap_or_else(|| DESCRIPTION.to_owned()),
        )
        .parameters(params)
        .parallel(true)
        .viewer(|_function: &str, args: &Map<String, Value>| ToolCallView {
            context: None,
            call: Some(ToolCallContent {
                title: None,
                format: ContentFormat::Markdown,
                content: args
                    .get("thought")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            }),
        })
        .handler(|_args: ToolArgs, _ctx: ToolContext| async { Ok::<_, ToolFailure>("") })
        .build()
}
