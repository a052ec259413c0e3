//! How a tool call is shown to a person (an approver, a transcript).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The format of a [`ToolCallContent`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContentFormat {
    /// Plain text.
    Text,
    /// Markdown.
    #[default]
    Markdown,
}

/// A titled piece of text describing a call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallContent {
    /// An optional title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The format of `content`.
    pub format: ContentFormat,
    /// The text.
    pub content: String,
}

/// How a call is shown: optional context, and the call itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallView {
    /// Context shown before the call (for example the file being edited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ToolCallContent>,
    /// The call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<ToolCallContent>,
}

/// Renders a call for humans. Any `Fn(&str, &Map<String, Value>) -> ToolCallView` is a viewer.
///
/// ```
/// use actuator_tool_core::{ContentFormat, ToolCallContent, ToolCallView, ToolCallViewer};
/// let viewer = |_function: &str, args: &serde_json::Map<String, serde_json::Value>| ToolCallView {
///     context: None,
///     call: Some(ToolCallContent {
///         title: Some("bash".into()),
///         format: ContentFormat::Markdown,
///         content: format!("```bash\n{}\n```", args["command"].as_str().unwrap_or_default()),
///     }),
/// };
/// let args = serde_json::json!({"command": "ls"});
/// let view = viewer.view("bash", args.as_object().unwrap());
/// assert_eq!(view.call.unwrap().content, "```bash\nls\n```");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool call viewer",
    note = "a viewer is a `Fn(&str, &serde_json::Map<String, serde_json::Value>) -> ToolCallView + Send + Sync + 'static`"
)]
pub trait ToolCallViewer: Send + Sync + 'static {
    /// Renders the call of `function` with `arguments`.
    fn view(&self, function: &str, arguments: &Map<String, Value>) -> ToolCallView;
}

impl<F> ToolCallViewer for F
where
    F: Fn(&str, &Map<String, Value>) -> ToolCallView + Send + Sync + 'static,
{
    fn view(&self, function: &str, arguments: &Map<String, Value>) -> ToolCallView {
        self(function, arguments)
    }
}
