//! Resources a [`ToolServer`](crate::ToolServer) serves (`resources/list`, `resources/read`,
//! `resources/templates/list`, subscriptions): fixed ones ([`Resource`]) and families of URIs
//! from a template ([`ResourceTemplate`], RFC 6570 level 1: `{name}` stands for one path
//! segment).

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use actuator_tool_core::{BoxFuture, Content, Media, MediaSource};
use serde_json::{Value, json};

use crate::complete::Completer;
use crate::error::HandlerError;

/// The body of a resource read: text, or bytes (sent base64).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ResourceBody {
    /// Text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

/// One item a resource read returns: where it is, its MIME type, its body.
///
/// ```
/// use actuator_mcp::ResourceContent;
/// let content = ResourceContent::text("test://note", "text/plain", "hello");
/// assert_eq!(content.uri, "test://note");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ResourceContent {
    /// The item's URI.
    pub uri: String,
    /// Its MIME type.
    pub mime_type: String,
    /// Its body.
    pub body: ResourceBody,
}

impl ResourceContent {
    /// A text item.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        ResourceContent {
            uri: uri.into(),
            mime_type: mime_type.into(),
            body: ResourceBody::Text(text.into()),
        }
    }

    /// A binary item.
    pub fn blob(uri: impl Into<String>, mime_type: impl Into<String>, bytes: Vec<u8>) -> Self {
        ResourceContent {
            uri: uri.into(),
            mime_type: mime_type.into(),
            body: ResourceBody::Blob(bytes),
        }
    }

    /// As content to embed in a tool result or a prompt message: MCP sends it as an embedded
    /// resource (`{"type": "resource", …}`), text for a textual MIME type.
    ///
    /// ```
    /// use actuator_mcp::ResourceContent;
    /// use actuator_tool_core::Content;
    /// let embedded = ResourceContent::text("test://a", "text/plain", "hi").to_content();
    /// assert!(matches!(embedded, Content::Document(ref m) if m.filename.as_deref() == Some("test://a")));
    /// ```
    pub fn to_content(&self) -> Content {
        let bytes = match &self.body {
            ResourceBody::Text(text) => text.as_bytes(),
            ResourceBody::Blob(bytes) => bytes.as_slice(),
        };
        Content::Document(Media {
            source: MediaSource::Base64 {
                data: crate::convert::base64_encode(bytes),
            },
            media_type: self.mime_type.clone(),
            filename: Some(self.uri.clone()),
            internal: None,
        })
    }

    /// As MCP writes it (`{"uri", "mimeType", "text" | "blob"}`).
    pub(crate) fn to_wire(&self) -> Value {
        match &self.body {
            ResourceBody::Text(text) => {
                json!({"uri": self.uri, "mimeType": self.mime_type, "text": text})
            }
            ResourceBody::Blob(bytes) => json!({
                "uri": self.uri,
                "mimeType": self.mime_type,
                "blob": crate::convert::base64_encode(bytes),
            }),
        }
    }
}

type ReadFn = Arc<
    dyn Fn(ResourceRead) -> BoxFuture<'static, Result<Vec<ResourceContent>, HandlerError>>
        + Send
        + Sync,
>;

/// A read request handed to a resource's reader: the URI asked for, and the values of a
/// template's variables (empty for a fixed resource).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ResourceRead {
    /// The URI the client asked for.
    pub uri: String,
    /// Each template variable's value, by name.
    pub params: BTreeMap<String, String>,
}

/// What the listings show of a resource or template.
#[derive(Debug, Clone)]
struct Listing {
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
}

impl Listing {
    fn to_wire(&self, key: &str, uri: &str) -> Value {
        let mut out = json!({key: uri, "name": self.name});
        if let Some(title) = &self.title {
            out["title"] = json!(title);
        }
        if let Some(description) = &self.description {
            out["description"] = json!(description);
        }
        if let Some(mime) = &self.mime_type {
            out["mimeType"] = json!(mime);
        }
        out
    }
}

/// A fixed resource: one URI, listed by `resources/list`, read by `resources/read`, and
/// subscribable (its subscribers hear of [`ToolServer::resource_updated`](crate::ToolServer::resource_updated)).
///
/// ```
/// use actuator_mcp::{Resource, ResourceContent};
/// let fixed = Resource::text("docs://readme", "readme", "text/plain", "Read me.")
///     .description("The project's README");
/// let live = Resource::new("metrics://now", "metrics")
///     .mime_type("application/json")
///     .read(|read| async move {
///         Ok(vec![ResourceContent::text(read.uri, "application/json", r#"{"load":0.1}"#)])
///     });
/// # let _ = (fixed, live);
/// ```
#[derive(Clone)]
pub struct Resource {
    uri: String,
    listing: Listing,
    read: ReadFn,
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resource")
            .field("uri", &self.uri)
            .field("name", &self.listing.name)
            .finish_non_exhaustive()
    }
}

fn not_readable(uri: String) -> ReadFn {
    Arc::new(move |_| {
        let uri = uri.clone();
        Box::pin(async move {
            Err(HandlerError::new(format!(
                "resource '{uri}' has no reader (give it one with Resource::read)"
            )))
        })
    })
}

impl Resource {
    /// A resource at `uri` named `name`; give it a reader with [`read`](Self::read).
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        let uri = uri.into();
        Resource {
            read: not_readable(uri.clone()),
            uri,
            listing: Listing {
                name: name.into(),
                title: None,
                description: None,
                mime_type: None,
            },
        }
    }

    /// A resource whose body is fixed text.
    pub fn text(
        uri: impl Into<String>,
        name: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        let mime_type = mime_type.into();
        let uri = uri.into();
        let content = ResourceContent::text(uri.clone(), mime_type.clone(), text);
        Resource::new(uri, name)
            .mime_type(mime_type)
            .read(move |_| std::future::ready(Ok(vec![content.clone()])))
    }

    /// A resource whose body is fixed bytes.
    pub fn blob(
        uri: impl Into<String>,
        name: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: Vec<u8>,
    ) -> Self {
        let mime_type = mime_type.into();
        let uri = uri.into();
        let content = ResourceContent::blob(uri.clone(), mime_type.clone(), bytes);
        Resource::new(uri, name)
            .mime_type(mime_type)
            .read(move |_| std::future::ready(Ok(vec![content.clone()])))
    }

    /// Its description in the listing.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.listing.description = Some(description.into());
        self
    }

    /// Its title in the listing.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.listing.title = Some(title.into());
        self
    }

    /// Its MIME type in the listing.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.listing.mime_type = Some(mime_type.into());
        self
    }

    /// How it is read, on each `resources/read`.
    #[must_use]
    pub fn read<F, Fut>(mut self, read: F) -> Self
    where
        F: Fn(ResourceRead) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContent>, HandlerError>> + Send + 'static,
    {
        self.read = Arc::new(move |request| Box::pin(read(request)));
        self
    }

    /// Its URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    pub(crate) fn to_wire(&self) -> Value {
        self.listing.to_wire("uri", &self.uri)
    }

    pub(crate) fn reader(&self) -> &ReadFn {
        &self.read
    }
}

/// One piece of a URI template: literal text, or a variable standing for one path segment.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Literal(String),
    Variable(String),
}

/// Splits `template` into pieces; `None` when a brace is unbalanced, a variable is empty or
/// uses an RFC 6570 operator (only level 1 is supported), or two variables touch.
fn parse_template(template: &str) -> Option<Vec<Piece>> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while !rest.is_empty() {
        match rest.find(['{', '}']) {
            None => {
                pieces.push(Piece::Literal(rest.to_owned()));
                break;
            }
            Some(at) if rest.as_bytes()[at] == b'}' => return None,
            Some(at) => {
                if at > 0 {
                    pieces.push(Piece::Literal(rest[..at].to_owned()));
                }
                let close = rest[at..].find('}')? + at;
                let name = &rest[at + 1..close];
                let valid = !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
                if !valid || matches!(pieces.last(), Some(Piece::Variable(_))) {
                    return None;
                }
                pieces.push(Piece::Variable(name.to_owned()));
                rest = &rest[close + 1..];
            }
        }
    }
    Some(pieces)
}

/// The variables' values when `uri` fits `pieces`: a variable takes a non-empty run of
/// characters up to the next literal, never a `/`.
fn match_template(pieces: &[Piece], uri: &str) -> Option<BTreeMap<String, String>> {
    let mut params = BTreeMap::new();
    let mut rest = uri;
    let mut i = 0;
    while i < pieces.len() {
        match &pieces[i] {
            Piece::Literal(text) => rest = rest.strip_prefix(text.as_str())?,
            Piece::Variable(name) => {
                let end = match pieces.get(i + 1) {
                    Some(Piece::Literal(next)) => rest.find(next.as_str())?,
                    _ => rest.len(),
                };
                let value = &rest[..end];
                if value.is_empty() || value.contains('/') {
                    return None;
                }
                params.insert(name.clone(), value.to_owned());
                rest = &rest[end..];
            }
        }
        i += 1;
    }
    rest.is_empty().then_some(params)
}

/// A family of resources behind a URI template (`files://{path}`), listed by
/// `resources/templates/list`; a read of a URI that fits it calls its reader with the
/// variables' values, and `completion/complete` for a variable asks its completer.
///
/// ```
/// use actuator_mcp::{ResourceContent, ResourceTemplate};
/// let users = ResourceTemplate::new("users://{id}/profile", "profile")
///     .unwrap()
///     .mime_type("application/json")
///     .read(|read| async move {
///         let id = read.params["id"].clone();
///         Ok(vec![ResourceContent::text(read.uri, "application/json", format!(r#"{{"id":"{id}"}}"#))])
///     })
///     .complete("id", |prefix, _context| {
///         ["alice", "bob"].into_iter().filter(|n| n.starts_with(prefix)).map(String::from).collect()
///     });
/// # let _ = users;
/// ```
#[derive(Clone)]
pub struct ResourceTemplate {
    template: String,
    pieces: Arc<[Piece]>,
    listing: Listing,
    read: ReadFn,
    completers: BTreeMap<String, Completer>,
}

impl fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceTemplate")
            .field("template", &self.template)
            .field("name", &self.listing.name)
            .finish_non_exhaustive()
    }
}

impl ResourceTemplate {
    /// A template named `name`. `Err` when the template is not RFC 6570 level 1 (`{name}`
    /// variables only, none empty, no two adjacent), saying what is wrong.
    pub fn new(template: impl Into<String>, name: impl Into<String>) -> Result<Self, HandlerError> {
        let template = template.into();
        let pieces = parse_template(&template).ok_or_else(|| {
            HandlerError::new(format!(
                "'{template}' is not a URI template this server reads: use {{name}} variables \
                 (letters, digits, '_' or '.'), each closed, none next to another"
            ))
        })?;
        Ok(ResourceTemplate {
            read: not_readable(template.clone()),
            template,
            pieces: pieces.into(),
            listing: Listing {
                name: name.into(),
                title: None,
                description: None,
                mime_type: None,
            },
            completers: BTreeMap::new(),
        })
    }

    /// Its description in the listing.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.listing.description = Some(description.into());
        self
    }

    /// Its title in the listing.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.listing.title = Some(title.into());
        self
    }

    /// The MIME type of what it reads.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.listing.mime_type = Some(mime_type.into());
        self
    }

    /// How a URI that fits is read.
    #[must_use]
    pub fn read<F, Fut>(mut self, read: F) -> Self
    where
        F: Fn(ResourceRead) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContent>, HandlerError>> + Send + 'static,
    {
        self.read = Arc::new(move |request| Box::pin(read(request)));
        self
    }

    /// Completes the variable `variable`: called with what the user typed so far and the
    /// other variables' values already given; returns the suggestions, best first.
    #[must_use]
    pub fn complete<F>(mut self, variable: impl Into<String>, complete: F) -> Self
    where
        F: Fn(&str, &BTreeMap<String, String>) -> Vec<String> + Send + Sync + 'static,
    {
        self.completers
            .insert(variable.into(), Completer::new(complete));
        self
    }

    /// The template.
    pub fn template(&self) -> &str {
        &self.template
    }

    /// The variables' values when `uri` fits the template.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        match_template(&self.pieces, uri)
    }

    pub(crate) fn to_wire(&self) -> Value {
        self.listing.to_wire("uriTemplate", &self.template)
    }

    pub(crate) fn reader(&self) -> &ReadFn {
        &self.read
    }

    pub(crate) fn completer(&self, variable: &str) -> Option<&Completer> {
        self.completers.get(variable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_matches_one_segment_per_variable() {
        let t = ResourceTemplate::new("test://template/{id}/data", "t").unwrap();
        assert_eq!(t.matches("test://template/123/data").unwrap()["id"], "123");
        assert!(t.matches("test://template//data").is_none());
        assert!(t.matches("test://template/1/2/data").is_none());
        assert!(t.matches("test://template/123/data/more").is_none());
        let two = ResourceTemplate::new("db://{table}.{row}", "t").unwrap();
        let params = two.matches("db://users.7").unwrap();
        assert_eq!(
            (params["table"].as_str(), params["row"].as_str()),
            ("users", "7")
        );
    }

    #[test]
    fn a_template_beyond_level_one_is_refused_with_the_reason() {
        for bad in [
            "x://{",
            "x://}",
            "x://{}",
            "x://{+path}",
            "x://{a}{b}",
            "x://{a",
        ] {
            let err = ResourceTemplate::new(bad, "t").unwrap_err();
            assert!(err.to_string().contains("{name} variables"), "{bad}: {err}");
        }
    }

    #[tokio::test]
    async fn a_resource_without_a_reader_says_how_to_give_it_one() {
        let r = Resource::new("x://a", "a");
        let err = (r.reader())(ResourceRead {
            uri: "x://a".into(),
            params: BTreeMap::new(),
        })
        .await
        .unwrap_err();
        assert!(err.to_string().contains("Resource::read"), "{err}");
    }
}
