//! How a tool call is shown to a person (an approver, a transcript).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::literal::python_str;

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

impl ToolCallContent {
    /// This content with every `{{param}}` placeholder in its title and text replaced by the
    /// call's argument of that name, written as Python's `str` writes it (the reference's
    /// `substitute_tool_call_content`); placeholders naming no argument stay as they are.
    ///
    /// ```
    /// use actuator_tool_core::{ContentFormat, ToolCallContent};
    /// let template = ToolCallContent {
    ///     title: Some("Run {{cmd}}".into()),
    ///     format: ContentFormat::Markdown,
    ///     content: "```bash\n{{cmd}}\n```\nsudo: {{sudo}}, {{missing}}".into(),
    /// };
    /// let args = serde_json::json!({"cmd": "ls -la", "sudo": false});
    /// let view = template.substitute(args.as_object().unwrap());
    /// assert_eq!(view.title.as_deref(), Some("Run ls -la"));
    /// assert_eq!(view.content, "```bash\nls -la\n```\nsudo: False, {{missing}}");
    /// ```
    #[must_use]
    pub fn substitute(&self, arguments: &Map<String, Value>) -> ToolCallContent {
        ToolCallContent {
            title: self.title.as_deref().map(|t| substitute(t, arguments)),
            format: self.format,
            content: substitute(&self.content, arguments),
        }
    }
}

/// Replaces `{{name}}` (a name of word characters) with the argument `name`, when there is one.
fn substitute(text: &str, arguments: &Map<String, Value>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let name_len = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let name = &after[..name_len];
        match (after[name_len..].starts_with("}}"), arguments.get(name)) {
            (true, Some(value)) if !name.is_empty() => {
                out.push_str(&python_str(value));
                rest = &after[name_len + 2..];
            }
            _ => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
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
