//! [`ToolServer`]: a set of `ToolDef`s served over MCP, each call landed by the executor
//! exactly as a model's call would be.

use std::sync::Arc;

use actuator_exec::{ExecError, ExecuteOptions, execute_tools};
use actuator_model::{ChatMessage, ChatMessageAssistant, MessageContent, ToolCall};
use actuator_tool_core::{
    Extensions, ToolDef, ToolDefError, ToolInfo, ToolProgress, check_tool_names,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorCode, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};

use crate::convert::content_to_mcp;
use crate::error::McpError;
use crate::served_progress::CallProgress;

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

/// `ToolDef`s as an MCP server (`rmcp`'s [`ServerHandler`]): `tools/list` renders each tool
/// as MCP lists it (its JSON Schema as is, as `actuator_dialect::mcp` does), and `tools/call` lands the call through
/// `actuator_exec::execute_tools`, so validation, deserialization, the tool's timeout, panics
/// and output truncation behave and read exactly as for a model's call:
///
/// - a recoverable error (a `parsing` error from validation, a timeout, the tool's own
///   `ToolError`) is a result with `isError: true` whose text is the error's message;
/// - a fatal error or a panic is a JSON-RPC internal error (-32603), and the server goes on;
/// - an unknown tool is a JSON-RPC invalid-params error (-32602) `Tool {name} not found`;
/// - a text result that is a JSON object is also sent as `structuredContent`;
/// - `notifications/cancelled` for a running call drops it (the tool's future is cancelled).
///
/// Use [`serve_stdio`](crate::serve_stdio) / [`serve_http`](crate::serve_http), or hand it to
/// any `rmcp` transport with `rmcp::ServiceExt::serve`.
#[derive(Clone)]
pub struct ToolServer {
    tools: Arc<[ToolDef]>,
    listed: Arc<[Tool]>,
    options: Arc<ServeOptions>,
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
        Ok(ToolServer {
            tools: tools.into(),
            listed: listed.into(),
            options: Arc::new(options),
        })
    }

    /// The tools as MCP lists them.
    pub fn listed_tools(&self) -> &[Tool] {
        &self.listed
    }

    /// Serves one connection over a reader and a writer (a pipe, a socket, `tokio::io::duplex`)
    /// until the client closes it.
    pub async fn serve_io<R, W>(self, reader: R, writer: W) -> Result<(), McpError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let running = self
            .serve((reader, writer))
            .await
            .map_err(|e| McpError::serve_from("the MCP handshake failed", e))?;
        running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| McpError::serve_from("the MCP server task failed", e))
    }

    /// Lands one call through the executor and turns its tool message into the MCP result.
    async fn land(
        &self,
        request: CallToolRequestParams,
        id: String,
        progress: Option<&ToolProgress>,
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
        let executed = match progress {
            None => execute_tools(&messages, &self.tools, &self.options.execute).await,
            Some(progress) => {
                // The call's own options: its progress goes to its client.
                let mut execute = self.options.execute.clone();
                execute.extensions.insert(progress.clone());
                execute_tools(&messages, &self.tools, &execute).await
            }
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
fn fatal(name: &str, error: &ExecError) -> ErrorData {
    ErrorData::internal_error(format!("Tool '{name}' failed: {error}"), None)
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                self.options.name.clone(),
                self.options.version.clone(),
            ));
        if let Some(instructions) = &self.options.instructions {
            info = info.with_instructions(instructions.clone());
        }
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.listed.to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.listed.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let id = format!("mcp_{}", context.id);
        let name = request.name.to_string();
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| CallProgress::start(context.peer.clone(), token));
        tokio::select! {
            landed = self.land(request, id, progress.as_ref().map(|p| &p.sink)) => {
                if let Some(progress) = progress {
                    progress.finish().await;
                }
                landed.map(CallToolResponse::Complete)
            }
            () = context.ct.cancelled() => {
                tracing::debug!(tool = %name, "MCP client cancelled the call");
                Err(ErrorData::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("Tool '{name}' was cancelled by the client."),
                    None,
                ))
            }
        }
    }
}
