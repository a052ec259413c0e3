//! rmcp: `add` on a `#[tool_router]` server, dispatched in process through its `ToolRouter`.
//!
//! A tool call needs a `RequestContext`, and that needs a `Peer`, which only a running service
//! hands out: [`Harness::start`] serves the server over an in-memory duplex pipe that nothing
//! ever writes to, once, outside the timed region, and keeps the peer. No JSON-RPC message is
//! encoded or decoded on the timed path.

use rmcp::handler::server::tool::{ToolCallContext, ToolRouter};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, CallToolResponse, JsonObject, NumberOrString};
use rmcp::service::{RequestContext, RunningService, serve_directly};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, tool, tool_router};
use serde::Deserialize;
use tokio::io::DuplexStream;

use crate::Outcome;

/// The name the benchmark table and the behaviour table give this path.
pub const FRAMEWORK: &str = "rmcp 3.11 `ToolRouter::call`";

/// The arguments, as the rmcp documentation declares them: `Deserialize` + `JsonSchema`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AddArgs {
    /// First addend.
    pub x: i64,
    /// Second addend.
    pub y: i64,
}

/// A tools-only MCP server with `add`.
#[derive(Debug, Clone, Copy)]
pub struct Adder;

#[tool_router(server_handler)]
impl Adder {
    /// Add two integers.
    #[tool(description = "Add two integers.")]
    async fn add(&self, Parameters(AddArgs { x, y }): Parameters<AddArgs>) -> String {
        (x + y).to_string()
    }
}

/// The server, its router (built once) and a peer to make request contexts from.
pub struct Harness {
    /// The server.
    pub server: Adder,
    /// `Adder::tool_router()`, kept: a server that stores its router in a field calls this.
    pub router: ToolRouter<Adder>,
    peer: Peer<RoleServer>,
    _service: RunningService<RoleServer, Adder>,
    _client_end: DuplexStream,
}

impl Harness {
    /// Serves `Adder` over an in-memory pipe (inside a Tokio runtime: the service loop is
    /// spawned) and keeps its peer.
    pub fn start() -> Harness {
        let (server_end, client_end) = tokio::io::duplex(4096);
        let service = serve_directly(Adder, server_end, None);
        Harness {
            server: Adder,
            router: Adder::tool_router(),
            peer: service.peer().clone(),
            _service: service,
            _client_end: client_end,
        }
    }

    /// The context the service builds for each request (its own cancellation token and
    /// extensions, the peer).
    pub fn request_context(&self) -> RequestContext<RoleServer> {
        RequestContext::new(NumberOrString::Number(1), self.peer.clone())
    }

    /// One call through the kept router: the timed operation.
    pub async fn call(&self, params: CallToolRequestParams) -> Result<CallToolResponse, ErrorData> {
        let context = ToolCallContext::new(&self.server, params, self.request_context());
        self.router.call(context).await
    }

    /// One call through `ServerHandler::call_tool` as `#[tool_router(server_handler)]`
    /// generates it: that builds `Adder::tool_router()` again for every call.
    pub async fn call_tool(
        &self,
        params: CallToolRequestParams,
    ) -> Result<CallToolResponse, ErrorData> {
        self.server.call_tool(params, self.request_context()).await
    }
}

/// The parameters of a `tools/call` of `add` with these arguments, as the transport decodes
/// them (`None` when the text is not a JSON object).
pub fn params(arguments: &str) -> Option<CallToolRequestParams> {
    let arguments: JsonObject = serde_json::from_str(arguments).ok()?;
    Some(CallToolRequestParams::new("add").with_arguments(arguments))
}

/// What the kept router makes of `add` called with `arguments` (inside a Tokio runtime).
pub async fn outcome(harness: &Harness, arguments: &str) -> Outcome {
    let Some(params) = params(arguments) else {
        return Outcome {
            is_error: true,
            text: "the arguments are not a JSON object".to_owned(),
        };
    };
    match harness.call(params).await {
        Ok(CallToolResponse::Complete(result)) => Outcome {
            is_error: result.is_error == Some(true),
            text: result
                .content
                .iter()
                .filter_map(|block| block.as_text().map(|t| t.text.clone()))
                .collect::<Vec<_>>()
                .join("\n"),
        },
        Ok(other) => Outcome {
            is_error: true,
            text: format!("not a complete result: {other:?}"),
        },
        // A JSON-RPC error: the client gets it instead of a tool result.
        Err(error) => Outcome {
            is_error: true,
            text: format!("JSON-RPC error {}: {}", error.code.0, error.message),
        },
    }
}
