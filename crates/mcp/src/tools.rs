//! [`mcp_tools`]: an MCP server's tools as a [`ToolSource`], each a [`ToolDef`] whose calls
//! are forwarded to the server.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use actuator_tool_core::source::{ToolSource, ToolSourceError};
use actuator_tool_core::{
    ArgumentValidator, BoxFuture, CallHost, ToolArgs, ToolContext, ToolDef, ToolError, ToolFailure,
    ToolOutput, ToolParams, TraceContext, validate_tool_name,
};
use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, ErrorCode, RequestId, RequestMetaObject, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use serde_json::Value;

use crate::callers::Callers;
use crate::client::{Inner, McpClient, ensure_connected};
use crate::convert::output_from_result;
use crate::error::McpError;
use crate::progress::ProgressRouter;

/// An MCP server's tools as a [`ToolSource`]: listed once per turn from the client's cache
/// (re-listed after the server's list-changed notification, or after a reconnect), with an
/// optional name prefix and glob filter, as the reference's `mcp_tools(server, tools=[…])`.
///
/// ```no_run
/// use std::sync::Arc;
/// use actuator_mcp::{McpClient, McpServer, mcp_tools};
///
/// let client = McpClient::new(McpServer::stdio("mcp-server-time", Vec::<String>::new()).name("time"));
/// let tools = mcp_tools(&client).prefix("time_").filter(["get_*"]).unwrap();
/// // react().tool_source(Arc::new(tools)) …
/// # let _ = Arc::new(tools);
/// ```
#[derive(Clone)]
pub struct McpTools {
    client: McpClient,
    name: String,
    prefix: String,
    filter: Vec<glob::Pattern>,
    resources: bool,
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTools")
            .field("server", &self.name)
            .field("prefix", &self.prefix)
            .field(
                "filter",
                &self.filter.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// The tools of `client`'s server, as a [`ToolSource`] (all of them, unprefixed, until
/// [`McpTools::prefix`] and [`McpTools::filter`] say otherwise).
pub fn mcp_tools(client: &McpClient) -> McpTools {
    McpTools {
        client: client.clone(),
        name: client.server().server_name().to_owned(),
        prefix: String::new(),
        filter: Vec::new(),
        resources: false,
    }
}

impl McpTools {
    /// A prefix for every tool's name (`fs_` makes `read_file` `fs_read_file`); calls still
    /// use the server's name. A prefixed name must still be a valid tool name.
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Keeps only the tools whose server name matches one of these globs (`*`, `?`, `[…]`,
    /// as the reference's `fnmatch`). Fails on an invalid pattern.
    pub fn filter(
        mut self,
        patterns: impl IntoIterator<Item = impl AsRef<str>>,
    ) -> Result<Self, McpError> {
        self.filter = patterns
            .into_iter()
            .map(|p| {
                glob::Pattern::new(p.as_ref()).map_err(|e| {
                    McpError::config_from(
                        format!("tool filter '{}' is not a valid glob pattern", p.as_ref()),
                        e,
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(self)
    }

    /// Also offers the server's resources to the model, when the server declares any: two
    /// tools, `{prefix}list_resources` and `{prefix}read_resource(uri)` (text as text, binary
    /// items as media). The filter applies to the server's own tools only.
    #[must_use]
    pub fn resources(mut self) -> Self {
        self.resources = true;
        self
    }

    /// The server's tools now, converted and filtered.
    pub async fn list(&self) -> Result<Vec<ToolDef>, McpError> {
        let mut defs = self.list_server_tools().await?;
        if self.resources && self.client.offers_resources().await? {
            let extra = crate::client_resources::resource_tools(&self.client, &self.prefix)
                .map_err(|e| McpError::config_from("the resource tools could not be built", e))?;
            defs.extend(extra);
        }
        Ok(defs)
    }

    async fn list_server_tools(&self) -> Result<Vec<ToolDef>, McpError> {
        let inner = &self.client.inner;
        let mut guard = inner.connection.lock().await;
        let connection = ensure_connected(inner, &mut guard).await?;
        let stale = connection.stale.swap(false, Ordering::SeqCst);
        let listed = match (&connection.listed, stale) {
            (Some(listed), false) => Arc::clone(listed),
            _ => {
                let tools = connection.peer().list_all_tools().await.map_err(|e| {
                    if matches!(e, ServiceError::TransportClosed) {
                        connection.dead.store(true, Ordering::SeqCst);
                    }
                    connection.stale.store(true, Ordering::SeqCst);
                    McpError::Request {
                        server: inner.server.name.clone(),
                        request: "tools/list".into(),
                        reason: inner.server.secrets().scrubbed(&e.to_string()),
                    }
                })?;
                let tools = Arc::new(tools);
                connection.listed = Some(Arc::clone(&tools));
                tools
            }
        };
        let peer = connection.peer();
        let dead = Arc::clone(&connection.dead);
        let progress = Arc::clone(&connection.progress);
        // Calls register their run only where a server's requests are routed to it.
        let callers = inner
            .server
            .requests
            .to_calling_run
            .then(|| Arc::clone(&connection.callers));
        drop(guard);
        let mut defs = Vec::with_capacity(listed.len());
        let secrets = inner.server.secrets();
        for tool in listed.iter() {
            if !self.filter.is_empty() && !self.filter.iter().any(|p| p.matches(&tool.name)) {
                continue;
            }
            let forward = Forward {
                peer: peer.clone(),
                dead: Arc::clone(&dead),
                progress: Arc::clone(&progress),
                callers: callers.clone(),
                server: inner.server.name.clone(),
                secrets: secrets.clone(),
                tool: tool.name.to_string(),
                _client: self.client.downgrade(),
            };
            if let Some(def) = self.convert(inner, tool, forward) {
                defs.push(def);
            }
        }
        Ok(defs)
    }

    /// One server tool as a `ToolDef`, or `None` (reported once) when it cannot be one.
    fn convert(
        &self,
        inner: &Inner,
        tool: &rmcp::model::Tool,
        forward: Forward,
    ) -> Option<ToolDef> {
        let server = &inner.server;
        let name = format!("{}{}", self.prefix, tool.name);
        if let Err(e) = validate_tool_name(&name) {
            inner.report_once(
                format!("name:{name}"),
                format!(
                    "MCP server '{}' tool '{}' is left out: {e}",
                    server.name, tool.name
                ),
            );
            return None;
        }
        let schema = Value::Object((*tool.input_schema).clone());
        let (params, mut validate) = match ToolParams::pass_through(&schema) {
            Ok(p) => (p, true),
            Err(e) => {
                inner.report_once(
                    format!("params:{name}:{schema}"),
                    format!(
                        "MCP server '{}' tool '{}' has an input schema that is not an object schema ({e}); it is offered without parameters and the server validates its arguments.",
                        server.name, tool.name
                    ),
                );
                (ToolParams::default(), false)
            }
        };
        if validate && let Err(e) = ArgumentValidator::new(&name, &params) {
            inner.report_once(
                format!("schema:{name}:{schema}"),
                format!(
                    "MCP server '{}' tool '{}' has an input schema our validator cannot compile ({e}); the tool is still offered and the server validates its arguments.",
                    server.name, tool.name
                ),
            );
            validate = false;
        }
        let description = tool
            .description
            .as_deref()
            .filter(|d| !d.trim().is_empty())
            .map(str::to_owned)
            .or_else(|| tool.title.clone())
            .unwrap_or_else(|| {
                format!("The '{}' tool of MCP server '{}'.", tool.name, server.name)
            });
        let mut builder = ToolDef::builder(name.clone())
            .description(description)
            .parameters(params)
            .require_param_descriptions(false)
            .validate_arguments(validate)
            .parallel(server.parallel)
            .handler(move |args: ToolArgs, ctx: ToolContext| forward.clone().call(args, ctx));
        if let Some(t) = server.timeout {
            builder = builder.timeout(t);
        }
        match builder.build() {
            Ok(def) => Some(def),
            Err(e) => {
                inner.report_once(
                    format!("def:{name}"),
                    format!(
                        "MCP server '{}' tool '{}' is left out: {e}",
                        server.name, tool.name
                    ),
                );
                None
            }
        }
    }
}

impl ToolSource for McpTools {
    fn name(&self) -> &str {
        &self.name
    }

    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDef>, ToolSourceError>> {
        Box::pin(async move {
            self.list()
                .await
                .map_err(|e| ToolSourceError::new(e.to_string()))
        })
    }
}

/// What a tool's handler needs to forward a call.
#[derive(Clone)]
struct Forward {
    peer: Peer<RoleClient>,
    dead: Arc<std::sync::atomic::AtomicBool>,
    progress: Arc<ProgressRouter>,
    /// Where a server's request during this call finds the run that made it.
    callers: Option<Arc<Callers>>,
    server: String,
    /// The server settings' credentials, redacted from transport errors.
    secrets: actuator_model::credentials::Secrets,
    tool: String,
    /// The client is not kept alive by its tools' handlers beyond the connection itself.
    _client: Weak<Inner>,
}

impl Forward {
    /// Forwards the call, its progress notifications routed to the observer while it runs,
    /// and the run's trace context, if any, in the request's `_meta`. Dropping the future
    /// (the tool's timeout, a cancelled run) sends the server `notifications/cancelled` for
    /// the request.
    async fn call(self, args: ToolArgs, ctx: ToolContext) -> Result<ToolOutput, ToolFailure> {
        let call_id = ctx.call_id;
        let trace = ctx.extensions.get::<TraceContext>().cloned();
        // Registered for the whole call, so a request the server makes meanwhile finds the run.
        let _caller = self
            .callers
            .as_ref()
            .zip(ctx.extensions.get::<CallHost>())
            .map(|(callers, host)| callers.enter(host.clone()));
        let mut params =
            CallToolRequestParams::new(self.tool.clone()).with_arguments(args.into_map());
        if let Some(trace) = trace {
            let mut meta = RequestMetaObject::new();
            meta.set_traceparent(trace.traceparent());
            if let Some(state) = trace.tracestate() {
                meta.set_tracestate(state);
            }
            params.meta = Some(meta);
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| self.error(e))?;
        let _watch = self
            .progress
            .watch(handle.progress_token.clone(), &self.tool, &call_id);
        let mut abandon = Abandon {
            peer: self.peer.clone(),
            id: Some(handle.id.clone()),
        };
        let response = handle.await_response().await;
        abandon.id = None;
        let result = match response {
            Ok(ServerResult::CallToolResult(result)) => result,
            // A result with nothing in it (`{}`) is an empty tool result.
            Ok(ServerResult::EmptyResult(_)) => CallToolResult::default(),
            Ok(_) => {
                return Err(ToolError::new(format!(
                    "MCP server '{}' answered the call of tool '{}' with something other than a tool result.",
                    self.server, self.tool
                ))
                .into());
            }
            Err(e) => return Err(self.error(e).into()),
        };
        let value = serde_json::to_value(&result).map_err(|e| {
            ToolError::new(format!(
                "MCP server '{}' returned a result that could not be read: {e}",
                self.server
            ))
        })?;
        Ok(output_from_result(&value)?)
    }

    fn error(&self, e: ServiceError) -> ToolError {
        match e {
            ServiceError::McpError(data) if data.code == ErrorCode::INVALID_PARAMS => {
                ToolError::parsing(data.message.to_string())
            }
            ServiceError::McpError(data) => ToolError::new(data.message.to_string()),
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                self.dead.store(true, Ordering::SeqCst);
                ToolError::new(format!(
                    "The MCP server '{}' is not running (its connection closed), so tool '{}' could not run. The connection is made again on the next turn.",
                    self.server, self.tool
                ))
            }
            ServiceError::Timeout { .. } => ToolError::timeout(),
            other => ToolError::new(self.secrets.scrubbed(&format!(
                "MCP server '{}' failed to run tool '{}': {other}",
                self.server, self.tool
            ))),
        }
    }
}

/// Tells the server a call is abandoned when its future is dropped before the answer.
struct Abandon {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for Abandon {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        // Dropped outside a runtime (at exit), there is no connection left to tell.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let peer = self.peer.clone();
            runtime.spawn(async move {
                let reason = "the caller stopped waiting (a timeout or a cancelled run)";
                let params = CancelledNotificationParam::new(Some(id), Some(reason.to_owned()));
                let _ = peer.notify_cancelled(params).await;
            });
        }
    }
}
