//! [`ToolServer`]: a set of `ToolDef`s served over MCP, each call landed by the executor
//! exactly as a model's call would be.

use std::sync::Arc;

use actuator_exec::{ExecError, ExecuteOptions, execute_tools};
use actuator_model::{ChatMessage, ChatMessageAssistant, MessageContent, ToolCall};
use actuator_tool_core::{
    Extensions, ToolDef, ToolDefError, ToolInfo, TraceContext, check_tool_names,
};
use rmcp::model::{CallToolRequestParams, CallToolResult, ErrorCode, Tool};
use rmcp::{ErrorData, ServiceExt};
use serde_json::{Map, Value, json};

use crate::convert::content_to_mcp;
use crate::error::McpError;
use crate::prompts::Prompt;
use crate::resources::{Resource, ResourceTemplate};
use crate::served_call::CallSession;
use crate::served_session::{SessionRegistry, SessionState};

/// A tool as MCP lists it: `{"name", "description", "inputSchema"}`, the parameters' JSON
/// Schema as is, and `outputSchema` when the tool declares one (its results then carry
/// `structuredContent`). MCP takes JSON Schema, so no dialect rewrites it; this is the value
/// `actuator_dialect::mcp` renders, kept here so serving needs no dialect crate (a test
/// checks that the two agree).
fn listed_tool(info: &ToolInfo) -> Result<Tool, serde_json::Error> {
    let mut tool = json!({
        "name": info.name,
        "description": info.description,
        "inputSchema": info.parameters.to_value(),
    });
    if let Some(schema) = &info.output_schema {
        tool["outputSchema"] = schema.clone();
    }
    serde_json::from_value(tool)
}

/// How a [`ToolServer`] presents itself and runs calls.
/// Start from `default()` and chain the setters (the struct is `#[non_exhaustive]`).
///
/// ```
/// use actuator_mcp::ServeOptions;
/// let options = ServeOptions::default().name("files").version("1.2.0");
/// assert_eq!(options.name, "files");
/// assert_eq!(options.version, "1.2.0");
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ServeOptions {
    /// The server's name in the handshake (default `actuator`).
    pub name: String,
    /// The server's version (default this crate's).
    pub version: String,
    /// Instructions for the client's model, if any.
    pub instructions: Option<String>,
    /// The executor settings calls run with (output limit, approval, extensions for the
    /// tools' `ToolContext`). Default: the executor's defaults.
    pub execute: ExecuteOptions,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            name: "actuator".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            instructions: None,
            execute: ExecuteOptions::default(),
        }
    }
}

impl ServeOptions {
    /// The server's name in the handshake.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Instructions for the client's model.
    #[must_use]
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The server's version in the handshake.
    #[must_use]
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// The executor settings calls run with (replacing the executor's defaults).
    #[must_use]
    pub fn execute(mut self, execute: ExecuteOptions) -> Self {
        self.execute = execute;
        self
    }

    /// Data handed to every call's `ToolContext` (a sandbox, a user's state).
    #[must_use]
    pub fn extensions(mut self, extensions: Extensions) -> Self {
        self.execute.extensions = extensions;
        self
    }
}

/// `ToolDef`s as an MCP server (`rmcp`'s [`ServerHandler`](rmcp::ServerHandler)): `tools/list` renders each tool
/// as MCP lists it (its JSON Schema as is, as `actuator_dialect::mcp` does), and `tools/call` lands the call through
/// `actuator_exec::execute_tools`, so validation, deserialization, the tool's timeout, panics
/// and output truncation behave and read exactly as for a model's call:
///
/// - a recoverable error (a `parsing` error from validation, a timeout, the tool's own
///   `ToolError`) is a result with `isError: true` whose text is the error's message;
/// - a fatal error or a panic is a JSON-RPC internal error (-32603), and the server goes on;
/// - an unknown tool is a JSON-RPC invalid-params error (-32602) `Tool {name} not found`;
/// - `params` that do not fit their method are one too (`invalid params for {method}:
///   {reason}`), an unknown method is method-not-found (-32601);
/// - a text result that is a JSON object is also sent as `structuredContent`;
/// - `notifications/cancelled` for a running call drops it (the tool's future is cancelled).
///
/// Use [`serve_stdio`](crate::serve_stdio) / [`serve_http`](crate::serve_http), or hand it to
/// any `rmcp` transport with `rmcp::ServiceExt::serve`.
#[derive(Clone)]
pub struct ToolServer {
    pub(crate) tools: Arc<[ToolDef]>,
    pub(crate) listed: Arc<[Tool]>,
    pub(crate) options: Arc<ServeOptions>,
    pub(crate) catalog: Arc<Catalog>,
    /// This copy's client session (each HTTP session and each `serve_io` connection gets its
    /// own copy).
    pub(crate) session: Arc<SessionState>,
    pub(crate) sessions: Arc<SessionRegistry>,
}

/// What a server offers beside its tools.
#[derive(Debug, Default, Clone)]
pub(crate) struct Catalog {
    pub(crate) resources: Vec<Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
    pub(crate) prompts: Vec<Prompt>,
}

impl std::fmt::Debug for ToolServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolServer")
            .field(
                "tools",
                &self.tools.iter().map(ToolDef::name).collect::<Vec<_>>(),
            )
            .field("options", &self.options)
            .finish()
    }
}

impl ToolServer {
    /// A server for `tools`, checked as the executor checks them (valid definitions, no two
    /// sharing a name).
    pub fn new(
        tools: impl IntoIterator<Item = ToolDef>,
        options: ServeOptions,
    ) -> Result<Self, McpError> {
        let tools: Vec<ToolDef> = tools.into_iter().collect();
        check_tool_names(&tools).map_err(|e| {
            let message = match &e {
                ToolDefError::DuplicateName { name } => {
                    format!("two tools to serve are named '{name}'; give each a distinct name")
                }
                _ => "the tools to serve are not a valid set".to_owned(),
            };
            McpError::config_from(message, e)
        })?;
        let mut listed = Vec::with_capacity(tools.len());
        for tool in &tools {
            tool.check().map_err(|e| {
                McpError::config_from(format!("tool '{}' is not defined validly", tool.name()), e)
            })?;
            let rendered = listed_tool(tool.info()).map_err(|e| {
                McpError::config_from(
                    format!(
                        "tool '{}' could not be rendered as an MCP tool",
                        tool.name()
                    ),
                    e,
                )
            })?;
            listed.push(rendered);
        }
        let sessions = Arc::new(SessionRegistry::default());
        Ok(ToolServer {
            tools: tools.into(),
            listed: listed.into(),
            options: Arc::new(options),
            catalog: Arc::new(Catalog::default()),
            session: sessions.open(),
            sessions,
        })
    }

    /// A copy for a new client session: the same tools, resources and prompts, its own log
    /// level and subscriptions.
    pub(crate) fn for_session(&self) -> Self {
        ToolServer {
            session: self.sessions.open(),
            ..self.clone()
        }
    }

    /// Also serves `resources` (`resources/list`, `resources/read`, subscriptions).
    /// `Err` when two resources share a URI.
    ///
    /// ```
    /// use actuator_mcp::{Resource, ServeOptions, ToolServer};
    /// let server = ToolServer::new([], ServeOptions::default())?
    ///     .with_resources([Resource::text("docs://readme", "readme", "text/plain", "Hi.")])?;
    /// # Ok::<(), actuator_mcp::McpError>(())
    /// ```
    pub fn with_resources(
        mut self,
        resources: impl IntoIterator<Item = Resource>,
    ) -> Result<Self, McpError> {
        let catalog = Arc::make_mut(&mut self.catalog);
        for resource in resources {
            if catalog.resources.iter().any(|r| r.uri() == resource.uri()) {
                return Err(McpError::config(format!(
                    "two resources to serve have the URI '{}'; give each a distinct URI",
                    resource.uri()
                )));
            }
            catalog.resources.push(resource);
        }
        Ok(self)
    }

    /// Also serves `templates` (`resources/templates/list`; a read of a URI that fits one
    /// goes to its reader, after the fixed resources). `Err` when two share a template.
    pub fn with_resource_templates(
        mut self,
        templates: impl IntoIterator<Item = ResourceTemplate>,
    ) -> Result<Self, McpError> {
        let catalog = Arc::make_mut(&mut self.catalog);
        for template in templates {
            if catalog
                .templates
                .iter()
                .any(|t| t.template() == template.template())
            {
                return Err(McpError::config(format!(
                    "two resource templates to serve are '{}'; give each a distinct template",
                    template.template()
                )));
            }
            catalog.templates.push(template);
        }
        Ok(self)
    }

    /// Also serves `prompts` (`prompts/list`, `prompts/get`, completions of their
    /// arguments). `Err` when two share a name.
    pub fn with_prompts(
        mut self,
        prompts: impl IntoIterator<Item = Prompt>,
    ) -> Result<Self, McpError> {
        let catalog = Arc::make_mut(&mut self.catalog);
        for prompt in prompts {
            if catalog.prompts.iter().any(|p| p.name() == prompt.name()) {
                return Err(McpError::config(format!(
                    "two prompts to serve are named '{}'; give each a distinct name",
                    prompt.name()
                )));
            }
            catalog.prompts.push(prompt);
        }
        Ok(self)
    }

    /// Tells every session subscribed to `uri` that it changed
    /// (`notifications/resources/updated`); returns how many were told.
    pub async fn resource_updated(&self, uri: &str) -> usize {
        let mut told = 0;
        for peer in self.sessions.subscribers(uri) {
            let param: Result<rmcp::model::ResourceUpdatedNotificationParam, _> =
                serde_json::from_value(json!({"uri": uri}));
            let Ok(param) = param else { continue };
            match peer.notify_resource_updated(param).await {
                Ok(()) => told += 1,
                Err(e) => tracing::debug!("a subscriber could not be told '{uri}' changed: {e}"),
            }
        }
        told
    }

    /// The tools as MCP lists them.
    pub fn listed_tools(&self) -> &[Tool] {
        &self.listed
    }

    /// Serves one connection over a reader and a writer (a pipe, a socket, `tokio::io::duplex`)
    /// until the client closes it. The connection is its own client session (log level,
    /// subscriptions), also when clones of one server serve several connections.
    pub async fn serve_io<R, W>(self, reader: R, writer: W) -> Result<(), McpError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        // Clones share `self.session`: without a session of its own, one client's
        // `logging/setLevel` or `resources/subscribe` would reach every other connection.
        let running = self
            .for_session()
            .serve(crate::served_io::checked_io(reader, writer))
            .await
            .map_err(|e| McpError::serve_from("the MCP handshake failed", e))?;
        running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| McpError::serve_from("the MCP server task failed", e))
    }

    /// Lands one call through the executor and turns its tool message into the MCP result.
    pub(crate) async fn land(
        &self,
        request: CallToolRequestParams,
        id: String,
        call: Option<&CallSession>,
        trace: Option<TraceContext>,
    ) -> Result<CallToolResult, ErrorData> {
        let name = request.name.to_string();
        if !self.tools.iter().any(|t| t.name() == name) {
            return Err(ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                format!("Tool {name} not found"),
                None,
            ));
        }
        let arguments: Map<String, Value> = request.arguments.unwrap_or_default();
        let mut assistant = ChatMessageAssistant::new("");
        assistant.tool_calls = Some(vec![ToolCall::new(
            id,
            name.clone(),
            Value::Object(arguments),
        )]);
        let messages = [ChatMessage::Assistant(Box::new(assistant))];
        let executed = if call.is_none() && trace.is_none() {
            execute_tools(&messages, &self.tools, &self.options.execute).await
        } else {
            // The call's own options: its session is its client's, its trace the caller's.
            let mut execute = self.options.execute.clone();
            if let Some(call) = call {
                execute.extensions.insert(call.host.clone());
                if let Some(progress) = &call.progress {
                    execute.extensions.insert(progress.clone());
                }
            }
            if let Some(trace) = trace {
                execute.extensions.insert(trace);
            }
            execute_tools(&messages, &self.tools, &execute).await
        };
        let result = match executed {
            Ok(result) => result,
            Err(e) => return Err(fatal(&name, &e)),
        };
        let Some(ChatMessage::Tool(message)) = result.messages.into_iter().next() else {
            return Err(ErrorData::internal_error(
                format!("tool '{name}' produced no result"),
                None,
            ));
        };
        let mut blocks: Vec<Value> = match &message.content {
            MessageContent::Text(t) if t.is_empty() => Vec::new(),
            MessageContent::Text(t) => vec![json!({"type": "text", "text": t})],
            MessageContent::Parts(parts) => parts.iter().map(content_to_mcp).collect(),
        };
        let mut wire = Map::new();
        match &message.error {
            Some(error) => {
                blocks.insert(0, json!({"type": "text", "text": error.message}));
                wire.insert("isError".into(), Value::Bool(true));
            }
            None => {
                if let MessageContent::Text(t) = &message.content
                    && let Ok(Value::Object(structured)) = serde_json::from_str::<Value>(t)
                {
                    wire.insert("structuredContent".into(), Value::Object(structured));
                }
            }
        }
        wire.insert("content".into(), Value::Array(blocks));
        serde_json::from_value(Value::Object(wire)).map_err(|e| {
            ErrorData::internal_error(
                format!("tool '{name}''s result could not be sent: {e}"),
                None,
            )
        })
    }
}

/// A fatal error, a panic or a termination: a JSON-RPC internal error saying so.
pub(crate) fn fatal(name: &str, error: &ExecError) -> ErrorData {
    ErrorData::internal_error(format!("Tool '{name}' failed: {error}"), None)
}
