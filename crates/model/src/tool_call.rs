//! Tool calls: what a model asks for, and how a call is rendered for people. Parsing a
//! provider's raw argument text is `actuator_dialect::parse_tool_call`.

use crate::ToolArguments;
use actuator_tool_core::ToolCallContent;
use actuator_tool_core::python_literal;
use compact_str::CompactString;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The kind of a tool call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallKind {
    /// A function call with JSON arguments.
    #[default]
    Function,
    /// A provider-defined custom tool call.
    Custom,
}

/// A call a model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The id the model gave the call.
    pub id: CompactString,
    /// The tool to call.
    pub function: CompactString,
    /// The arguments, a JSON object kept as its text.
    #[serde(default)]
    pub arguments: ToolArguments,
    /// Why the raw arguments could not be parsed, when they could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parse_error: Option<String>,
    /// A custom view of the call for people; boxed, as it is rare and every call keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<Box<ToolCallContent>>,
    /// The kind of call.
    #[serde(rename = "type", default)]
    pub kind: ToolCallKind,
}

impl ToolCall {
    /// A function call with the given arguments (a JSON object; anything else gives no
    /// arguments).
    pub fn new(
        id: impl Into<CompactString>,
        function: impl Into<CompactString>,
        arguments: Value,
    ) -> Self {
        ToolCall {
            id: id.into(),
            function: function.into(),
            arguments: match arguments {
                Value::Object(map) => ToolArguments::from_parsed(map),
                _ => ToolArguments::new(),
            },
            parse_error: None,
            view: None,
            kind: ToolCallKind::Function,
        }
    }

    /// The call rendered as `name(k='v', n=3)`, in [`DEFAULT_CALL_WIDTH`] columns.
    pub fn render(&self) -> String {
        self.render_in(DEFAULT_CALL_WIDTH)
    }

    /// The call rendered as [`format_function_call`] does, in `width` columns.
    pub fn render_in(&self, width: usize) -> String {
        match self.arguments.to_map() {
            Ok(map) => format_function_call(&self.function, &map, width),
            // Only a map nested past the parser's limit; its text is still worth showing.
            Err(_) => format!("{}({})", self.function, self.arguments),
        }
    }
}

/// The line width [`format_function_call`] fits calls into by default.
pub const DEFAULT_CALL_WIDTH: usize = 80;

/// Renders a call as the reference does, `name(k='v', n=3)`: a string argument in single
/// quotes (unescaped), every other value as a Python literal (`opts={'a': [1, 2]}`,
/// `flag=True`, `none=None`). When the arguments do not fit in `width - len(name) - 3`
/// characters, each goes on its own line, indented four spaces.
///
/// ```
/// use actuator_model::format_function_call;
/// let args = serde_json::json!({"location": "New York", "days": 3, "opts": {"a": [1, 2]}, "flag": true, "none": null});
/// assert_eq!(
///     format_function_call("get_weather", args.as_object().unwrap(), 100),
///     "get_weather(location='New York', days=3, opts={'a': [1, 2]}, flag=True, none=None)"
/// );
/// ```
pub fn format_function_call(
    function: &str,
    arguments: &Map<String, Value>,
    width: usize,
) -> String {
    let parts: Vec<String> = arguments
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}='{s}'"),
            other => format!("{k}={}", python_literal(other)),
        })
        .collect();
    let joined = parts.join(", ");
    let room = width.saturating_sub(function.chars().count() + 3);
    if joined.chars().count() <= room {
        format!("{function}({joined})")
    } else {
        format!("{function}(\n    {}\n)", parts.join(",\n    "))
    }
}
