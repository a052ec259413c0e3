//! What tools return: [`Content`] items, the [`ToolOutput`] a call produces, and the
//! [`IntoToolOutput`] conversion from ordinary Rust values.

use compact_str::CompactString;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{FatalToolError, ToolFailure};

/// Where the bytes of a media item live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MediaSource {
    /// A URL the provider can fetch (`https://…`, or a `data:` URL).
    Url {
        /// The URL.
        url: String,
    },
    /// Base64-encoded bytes.
    Base64 {
        /// The base64 text (no `data:` prefix).
        data: String,
    },
}

/// A media item: an image, audio, video or document, with its media type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Media {
    /// Where the bytes are.
    pub source: MediaSource,
    /// The IANA media type (`image/png`, `application/pdf`, …).
    pub media_type: String,
    /// A file name to show, for documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// Provider-private data kept for replay to the provider that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internal: Option<Value>,
}

/// The kind of a tool a provider ran on its own side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ServerToolKind {
    /// A web search.
    WebSearch,
    /// A call to an MCP server the provider connected to.
    McpCall,
    /// Code the provider ran.
    CodeExecution,
}

/// A tool the provider ran itself (web search, code execution, a remote MCP call), with its
/// arguments and result, as the reference's `ContentToolUse`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerToolUse {
    /// What kind of tool it was.
    pub tool_type: ServerToolKind,
    /// The call's id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// Where it ran (an MCP server's name, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The arguments, as the provider sent them.
    pub arguments: String,
    /// The result.
    pub result: String,
    /// The error, when the call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Provider-private data kept for replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internal: Option<Value>,
}

/// One item of tool or message content.
///
/// ```
/// use actuator_tool_core::Content;
/// let image = Content::image_url("https://example.com/cat.png", "image/png");
/// assert_eq!(Content::text("hi").as_text(), Some("hi"));
/// assert!(image.as_text().is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
        /// Provider-private data kept for replay to the provider that produced it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        internal: Option<Value>,
    },
    /// An image.
    Image(Media),
    /// Audio.
    Audio(Media),
    /// Video.
    Video(Media),
    /// A document (PDF, spreadsheet, …).
    Document(Media),
    /// A model's reasoning, kept so it can be replayed to the provider that produced it.
    /// Tool results never carry reasoning: it is dropped from them.
    Reasoning {
        /// The reasoning text (empty when redacted).
        reasoning: String,
        /// The provider's signature over the reasoning, when it gives one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// Whether the provider redacted the text.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        redacted: bool,
        /// Provider-private data kept for replay.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        internal: Option<Value>,
    },
    /// A tool the provider ran on its own side.
    ToolUse(ServerToolUse),
    /// Provider-private data with no text of its own (the reference's `ContentData`), kept for
    /// replay.
    Data {
        /// The payload.
        data: Map<String, Value>,
    },
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::text(text)
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::text(text)
    }
}

impl Content {
    /// A text item.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text {
            text: text.into(),
            internal: None,
        }
    }

    /// An image at a URL.
    pub fn image_url(url: impl Into<String>, media_type: impl Into<String>) -> Self {
        Content::Image(Media {
            source: MediaSource::Url { url: url.into() },
            media_type: media_type.into(),
            filename: None,
            internal: None,
        })
    }

    /// An image from base64 data.
    pub fn image_base64(data: impl Into<String>, media_type: impl Into<String>) -> Self {
        Content::Image(Media {
            source: MediaSource::Base64 { data: data.into() },
            media_type: media_type.into(),
            filename: None,
            internal: None,
        })
    }

    /// A reasoning item.
    pub fn reasoning(text: impl Into<String>) -> Self {
        Content::Reasoning {
            reasoning: text.into(),
            signature: None,
            redacted: false,
            internal: None,
        }
    }

    /// This item without its provider-private data (what filters show another model).
    #[must_use]
    pub fn without_internal(mut self) -> Self {
        match &mut self {
            Content::Text { internal, .. } | Content::Reasoning { internal, .. } => {
                *internal = None;
            }
            Content::Image(m) | Content::Audio(m) | Content::Video(m) | Content::Document(m) => {
                m.internal = None;
            }
            Content::ToolUse(t) => t.internal = None,
            Content::Data { .. } => {}
        }
        self
    }

    /// Whether this is a reasoning item.
    pub fn is_reasoning(&self) -> bool {
        matches!(self, Content::Reasoning { .. })
    }

    /// The text, when this is a text item.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// The result of a successful tool call: plain text, or a list of content items.
///
/// Only text is ever truncated; content lists are passed on whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolOutput {
    /// Text, as a compact string: up to 24 bytes (most results: a number, a word, a short
    /// line) are kept inline, so that a short result costs no allocation on its way to the
    /// tool message. Build one with `.into()` from a `&str` or a `String`:
    /// `ToolOutput::Text("done".into())`.
    Text(CompactString),
    /// Content items (text, images, …).
    Content(Vec<Content>),
}

impl ToolOutput {
    /// The text of the output: the string itself, or the text items joined.
    pub fn text(&self) -> String {
        match self {
            ToolOutput::Text(t) => t.to_string(),
            ToolOutput::Content(items) => items.iter().filter_map(Content::as_text).collect(),
        }
    }
}

impl Default for ToolOutput {
    fn default() -> Self {
        ToolOutput::Text(CompactString::default())
    }
}

/// Converts what a tool function returns into a [`ToolOutput`].
///
/// `String`/`&str` are unchanged, numbers use `Display`, `bool` is `true`/`false`, `()` is `""`,
/// [`Content`] and `Vec<Content>` stay content, and [`serde_json::Value`] or [`Json`] become
/// compact JSON. In `#[tool]` functions, any other `Serialize` type is rendered as compact JSON
/// too, without a wrapper.
///
/// ```
/// use actuator_tool_core::{IntoToolOutput, Json, ToolOutput};
/// assert_eq!(3.5_f64.into_tool_output().unwrap(), ToolOutput::Text("3.5".into()));
/// assert_eq!(true.into_tool_output().unwrap(), ToolOutput::Text("true".into()));
/// assert_eq!(Json(vec![1, 2]).into_tool_output().unwrap(), ToolOutput::Text("[1,2]".into()));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    note = "return a String, a number, bool, (), Content, Vec<Content>, serde_json::Value, or wrap a `Serialize` value in `Json(..)`"
)]
pub trait IntoToolOutput {
    /// Performs the conversion. Fails only when a value cannot be serialized (a fatal error:
    /// the tool is broken, not the model's call).
    fn into_tool_output(self) -> Result<ToolOutput, ToolFailure>;
}

impl IntoToolOutput for ToolOutput {
    fn into_tool_output(self) -> Result<ToolOutput, ToolFailure> {
        Ok(self)
    }
}

impl IntoToolOutput for String {
    fn into_tool_output(self) -> Result<ToolOutput, ToolFailure> {
        Ok(ToolOutput::Text(self.into()))
    }
}

impl IntoToolOutput for &str {
    fn into_tool_output(self) -> Result<ToolOutput, ToolFailure> {
        Ok(ToolOutput::Text(self.into()))
    }
}

impl IntoToolOutput for std::borrow::Cow<'_, str> {
    fn into_tool_output(self) -> Result<ToolOutput, ToolFailure> {
        Ok(ToolOutput::Text(self.into()))
    }
}

impl IntoToolOutput for () {
    fn into_tool_output(self) -> Result<ToolOutput, ToolFailure> {
        Ok(ToolOutput::Text(CompactString::default()))
    }
}

impl IntoToolOutput for Content {
    fn into_tool_output(self) -> Result<ToolOutput, ToolFailure> {
        vec![self].into_tool_output()
    }
}

impl IntoToolOutput for Vec<Content> {
    /// Reasoning items are dropped: a tool result carries only text and media.
    fn into_tool_output(self) -> Result<ToolOutput, ToolFailure> {
        Ok(ToolOutput::Content(
            self.into_iter().filter(|c| !c.is_reasoning()).collect(),
        ))
    }
}

impl IntoToolOutput for serde_json::Value {
    fn into_tool_output(self) -> Result<ToolOutput, ToolFailure> {
        Ok(ToolOutput::Text(self.to_string().into()))
    }
}

// `format_compact!`, not `to_compact_string`: the latter writes floats with `ryu` ("3.0" where
// `Display` writes "3"). Both keep a short result inline.
macro_rules! display_output {
    ($($t:ty),*) => {$(
        impl IntoToolOutput for $t {
            fn into_tool_output(self) -> Result<ToolOutput, ToolFailure> {
                Ok(ToolOutput::Text(compact_str::format_compact!("{self}")))
            }
        }
    )*};
}
display_output!(bool, char, f32, f64);

// Integers are written as `Display` writes them, without going through the formatter: a
// tool's integer result is on every call's path.
macro_rules! integer_output {
    ($($t:ty),*) => {$(
        impl IntoToolOutput for $t {
            fn into_tool_output(self) -> Result<ToolOutput, ToolFailure> {
                Ok(ToolOutput::Text(CompactString::new(itoa::Buffer::new().format(self))))
            }
        }
    )*};
}
integer_output!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize
);

/// Wraps any `Serialize` value so that it is returned as compact JSON.
///
/// `#[tool]` functions do this automatically; use `Json` in generic code or hand-built tools.
/// Its JSON Schema is `T`'s, so a `#[tool]` returning `Json<T>` declares `T`'s schema as its
/// output schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: schemars::JsonSchema> schemars::JsonSchema for Json<T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }
    fn schema_id() -> std::borrow::Cow<'static, str> {
        T::schema_id()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

impl<T: Serialize> IntoToolOutput for Json<T> {
    fn into_tool_output(self) -> Result<ToolOutput, ToolFailure> {
        serde_json::to_string(&self.0)
            .map(|json| ToolOutput::Text(json.into()))
            .map_err(|e| {
                FatalToolError::msg(format!(
                    "The tool's result could not be serialized as JSON: {e}"
                ))
                .into()
            })
    }
}
