//! [`McpClient`]: one connection to an MCP server, made on first use, re-made after the server
//! dies, and closed (the child process killed) when the client closes or its last clone drops.

// Sampling and roots are deprecated by SEP-2577 for the protocol version after 2025-11-25;
// every version this crate speaks has them.
#![allow(deprecated)]

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use actuator_tool_core::{ElicitationRequest, ErrorChain, HostError};
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ErrorCode, Implementation, ListRootsResult, ProtocolVersion,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ErrorData, ServiceExt};
use serde_json::{Value, json};

use crate::callers::Callers;
use crate::client_requests::{Refused, ServerRequests};
use crate::sampling::{request_from_wire, result_to_wire};

use crate::config::{McpServer, Transport};
use crate::error::McpError;
use crate::progress::{Observed, ProgressRouter};

/// Receives the server's notifications (a list-changed marks the tool list stale) and answers
/// its requests with the handlers the settings give.
#[derive(Clone)]
pub(crate) struct Handler {
    stale: Arc<AtomicBool>,
    server: String,
    requests: ServerRequests,
    /// The runs whose calls are in flight, for requests routed to the calling run.
    callers: Arc<Callers>,
}

/// A handler's failure as the JSON-RPC error the server reads.
fn request_error(what: &str, error: &HostError) -> ErrorData {
    ErrorData::internal_error(format!("{what} failed: {}", ErrorChain(error)), None)
}

/// A sampling request the policy or a person refused: code -1, as the specification's
/// example of a user rejecting one.
fn refused(Refused(reason): Refused) -> ErrorData {
    ErrorData::new(
        ErrorCode(-1),
        format!("the sampling request was refused: {reason}"),
        None,
    )
}

impl ClientHandler for Handler {
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        if !self.requests.answers_sampling() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::CreateMessageRequestMethod,
            >());
        }
        let request = request_from_wire(&serde_json::to_value(&params).unwrap_or(Value::Null))?;
        let answer = self
            .requests
            .sample(&self.server, &self.callers, request)
            .await
            .map_err(refused)?
            .map_err(|e| request_error("sampling", &e))?;
        serde_json::from_value(result_to_wire(&answer)).map_err(|e| {
            ErrorData::internal_error(format!("the sampling answer could not be sent: {e}"), None)
        })
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if !self.requests.answers_elicitation() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::ElicitationCreateRequestMethod,
            >());
        }
        let wire = serde_json::to_value(&request).unwrap_or(Value::Null);
        if wire["mode"] == "url" {
            return Err(ErrorData::invalid_params(
                "this client answers form elicitations only, not URL ones",
                None,
            ));
        }
        let asked = ElicitationRequest::new(
            wire["message"].as_str().unwrap_or_default(),
            wire["requestedSchema"].clone(),
        );
        let answer = self
            .requests
            .elicit(&self.server, &self.callers, asked.clone())
            .await
            .and_then(|answer| asked.complete(answer))
            .map_err(|e| request_error("elicitation", &e))?;
        let mut out = json!({"action": answer.action});
        if let Some(content) = answer.content {
            out["content"] = Value::Object(content);
        }
        serde_json::from_value(out).map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let roots: Vec<Value> = self
            .requests
            .roots
            .iter()
            .flat_map(|roots| roots.iter())
            .map(|root| {
                let mut out = json!({"uri": root.uri});
                if let Some(name) = &root.name {
                    out["name"] = json!(name);
                }
                out
            })
            .collect();
        serde_json::from_value(json!({"roots": roots}))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        tracing::debug!("MCP server sent tools/list_changed");
        self.stale.store(true, Ordering::SeqCst);
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = json!({});
        if self.requests.answers_sampling() {
            capabilities["sampling"] = json!({});
        }
        if self.requests.answers_elicitation() {
            capabilities["elicitation"] = json!({"form": {}});
        }
        if self.requests.roots.is_some() {
            capabilities["roots"] = json!({"listChanged": false});
        }
        // The newest version with an `initialize` handshake (2025-11-25), not rmcp's newest
        // (a draft without one): a server on an older version answers with its own, which
        // rmcp accepts, as the specification's negotiation says.
        ClientConfig::new(
            serde_json::from_value(capabilities).unwrap_or_else(|_| ClientCapabilities::default()),
            Implementation::new("actuator", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

/// A live connection.
pub(crate) struct Connection {
    service: RunningService<RoleClient, Handler>,
    /// Set by a list-changed notification (and initially), cleared by a listing.
    pub(crate) stale: Arc<AtomicBool>,
    /// Set when a call found the transport closed.
    pub(crate) dead: Arc<AtomicBool>,
    /// The server's tools as last listed (their JSON form).
    pub(crate) listed: Option<Arc<Vec<rmcp::model::Tool>>>,
    /// Where this connection's progress notifications go.
    pub(crate) progress: Arc<ProgressRouter>,
    /// The runs whose calls are in flight on this connection.
    pub(crate) callers: Arc<Callers>,
}

impl Connection {
    fn alive(&self) -> bool {
        !self.dead.load(Ordering::SeqCst)
            && !self.service.is_closed()
            && !self.service.peer().is_transport_closed()
    }

    pub(crate) fn peer(&self) -> Peer<RoleClient> {
        self.service.peer().clone()
    }
}

pub(crate) struct Inner {
    pub(crate) server: McpServer,
    pub(crate) connection: tokio::sync::Mutex<Option<Connection>>,
    /// Problems with the server's tools already reported (each once).
    reported: Mutex<(HashSet<String>, Vec<String>)>,
    /// How many connections were made (a reconnect adds one).
    connects: std::sync::atomic::AtomicUsize,
}

impl Inner {
    /// Reports a problem with the server's tools once: a warning in the log, and a line in
    /// [`McpClient::reports`].
    pub(crate) fn report_once(&self, key: String, message: String) {
        let mut reported = self
            .reported
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if reported.0.insert(key) {
            tracing::warn!(server = %self.server.name, "{message}");
            reported.1.push(message);
        }
    }
}

/// A client of one MCP server: the connection is made on first use ([`connect`](Self::connect)
/// or the first listing), the tool list is cached until the server says it changed
/// (`notifications/tools/list_changed`), and a connection found dead is made again on the
/// next listing (the next turn). Cloning shares the connection; [`close`](Self::close), or
/// dropping the last clone and every tool made from it, ends it (a stdio server's child
/// process is killed).
///
/// Use [`mcp_tools`](crate::mcp_tools) to offer its tools to an agent.
#[derive(Clone)]
pub struct McpClient {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("server", &self.inner.server.name)
            .finish_non_exhaustive()
    }
}

impl McpClient {
    /// A client of `server` (nothing is started until first use).
    pub fn new(server: McpServer) -> Self {
        McpClient {
            inner: Arc::new(Inner {
                server,
                connection: tokio::sync::Mutex::new(None),
                reported: Mutex::new((HashSet::new(), Vec::new())),
                connects: std::sync::atomic::AtomicUsize::new(0),
            }),
        }
    }

    /// The server's settings.
    pub fn server(&self) -> &McpServer {
        &self.inner.server
    }

    /// Connects now (when not connected already), so a wrong command or URL is found before
    /// a run starts.
    pub async fn connect(&self) -> Result<(), McpError> {
        let mut guard = self.inner.connection.lock().await;
        ensure_connected(&self.inner, &mut guard).await.map(|_| ())
    }

    /// Closes the connection (a stdio server's process is stopped). The next use connects
    /// again.
    pub async fn close(&self) {
        let taken = self.inner.connection.lock().await.take();
        if let Some(mut c) = taken {
            let _ = c.service.close().await;
        }
    }

    /// How many times a connection was made (1 after the first use; a reconnect adds one).
    pub fn connections_made(&self) -> usize {
        self.inner.connects.load(Ordering::SeqCst)
    }

    /// Problems found with the server's tools, each reported once (also logged as warnings):
    /// schemas our validator cannot compile (the tool is still offered and its server
    /// validates), and names no provider accepts (the tool is left out).
    pub fn reports(&self) -> Vec<String> {
        self.inner
            .reported
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .1
            .clone()
    }

    pub(crate) fn downgrade(&self) -> Weak<Inner> {
        Arc::downgrade(&self.inner)
    }
}

/// Makes sure `slot` holds a live connection, connecting (again) when it does not.
pub(crate) async fn ensure_connected<'a>(
    inner: &Inner,
    slot: &'a mut Option<Connection>,
) -> Result<&'a mut Connection, McpError> {
    if slot.as_ref().is_some_and(|c| !c.alive()) {
        tracing::info!(server = %inner.server.name, "MCP server connection is closed; reconnecting");
        if let Some(mut dead) = slot.take() {
            let _ = dead.service.close().await;
        }
    }
    if slot.is_none() {
        let server = &inner.server;
        let connecting = tokio::time::timeout(server.connect_timeout, connect(server));
        let connection = match connecting.await {
            Ok(result) => result?,
            Err(_) => {
                return Err(McpError::ConnectTimeout {
                    server: server.name.clone(),
                    seconds: server.connect_timeout.as_secs_f64(),
                });
            }
        };
        inner.connects.fetch_add(1, Ordering::SeqCst);
        *slot = Some(connection);
    }
    slot.as_mut().ok_or_else(|| McpError::Connect {
        server: inner.server.name.clone(),
        reason: "no connection".into(),
    })
}

async fn connect(server: &McpServer) -> Result<Connection, McpError> {
    let stale = Arc::new(AtomicBool::new(true));
    let callers = Arc::new(Callers::default());
    let handler = Handler {
        stale: Arc::clone(&stale),
        server: server.name.clone(),
        requests: server.requests.clone(),
        callers: Arc::clone(&callers),
    };
    let connect_error = |reason: String| McpError::Connect {
        server: server.name.clone(),
        reason,
    };
    let handshake_error = |e: rmcp::service::ClientInitializeError| handshake_error(server, &e);
    let progress = Arc::new(ProgressRouter::new(
        server.name.clone(),
        server.progress.clone(),
    ));
    let router = Arc::clone(&progress);
    let service = match &server.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args).envs(env).kill_on_drop(true);
            if let Some(dir) = cwd {
                cmd.current_dir(dir);
            }
            let (transport, _stderr) = rmcp::transport::TokioChildProcess::builder(cmd)
                .stderr(std::process::Stdio::inherit())
                .spawn()
                .map_err(|e| connect_error(format!("could not run '{command}': {e}")))?;
            handler
                .serve(Observed {
                    inner: transport,
                    router,
                })
                .await
                .map_err(handshake_error)?
        }
        Transport::Http {
            url,
            headers,
            bearer,
            roots,
        } => {
            use axum::http::{HeaderName, HeaderValue};
            use rmcp::transport::StreamableHttpClientTransport;
            use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
            let mut custom = std::collections::HashMap::new();
            for (name, value) in headers {
                let n = HeaderName::try_from(name.as_str()).map_err(|e| {
                    McpError::config_from(format!("header name '{name}' is not valid"), e)
                })?;
                let v = HeaderValue::try_from(value.as_str()).map_err(|e| {
                    McpError::config_from(format!("the value of header '{name}' is not valid"), e)
                })?;
                custom.insert(n, v);
            }
            let mut config =
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
            if let Some(token) = bearer {
                config = config.auth_header(token.clone());
            }
            let client = crate::guarded::Guarded::new(
                crate::http_client::client(&server.name, url, roots, server.secrets())?,
                server.secrets(),
            );
            #[cfg(feature = "oauth")]
            if let Some(oauth) = &server.oauth {
                // Authorization starts when the server answers with a challenge.
                let client = crate::oauth_client::Authorizing::new(
                    client,
                    &server.name,
                    url,
                    oauth.clone(),
                    server.connect_timeout,
                );
                let transport = StreamableHttpClientTransport::with_client(client, config);
                return finish(
                    handler
                        .serve(Observed {
                            inner: transport,
                            router,
                        })
                        .await
                        .map_err(handshake_error)?,
                    stale,
                    progress,
                    callers,
                );
            }
            let transport = StreamableHttpClientTransport::with_client(client, config);
            handler
                .serve(Observed {
                    inner: transport,
                    router,
                })
                .await
                .map_err(handshake_error)?
        }
    };
    finish(service, stale, progress, callers)
}

fn finish(
    service: RunningService<RoleClient, Handler>,
    stale: Arc<AtomicBool>,
    progress: Arc<ProgressRouter>,
    callers: Arc<Callers>,
) -> Result<Connection, McpError> {
    Ok(Connection {
        service,
        stale,
        dead: Arc::new(AtomicBool::new(false)),
        listed: None,
        progress,
        callers,
    })
}

/// A failed handshake: a server that could not be reached (refused, an untrusted TLS
/// certificate, a 401) is a connection error with the HTTP client's reason; anything else is a
/// handshake error.
fn handshake_error(server: &McpServer, error: &rmcp::service::ClientInitializeError) -> McpError {
    use rmcp::service::ClientInitializeError;
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    // A server may echo a credential back (a 401 quoting the token): never pass it on.
    let secrets = server.secrets();
    let scrub = |text: &str| secrets.scrubbed(text);
    if let ClientInitializeError::TransportError { error, context } = error {
        // rmcp keeps the HTTP client's error as a value, not a source: look for it.
        let reason = match error
            .error
            .downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            Some(StreamableHttpError::Client(e)) => {
                if let Some(refused) = actuator_model::credentials::refused_redirect(e) {
                    return McpError::RedirectRefused {
                        server: server.name.clone(),
                        from: scrub(&refused.from),
                        to: scrub(&refused.to),
                    };
                }
                ErrorChain(e).to_string()
            }
            Some(other) => ErrorChain(other).to_string(),
            None => ErrorChain(&*error.error).to_string(),
        };
        return McpError::Connect {
            server: server.name.clone(),
            reason: scrub(&format!("{reason} ({context})")),
        };
    }
    McpError::Handshake {
        server: server.name.clone(),
        reason: scrub(&ErrorChain(error).to_string()),
    }
}
