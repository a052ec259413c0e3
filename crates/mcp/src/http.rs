//! Serving [`ToolServer`]s: over stdio ([`serve_stdio`]) and over streamable HTTP
//! ([`serve_http`]), bound to loopback unless told otherwise, with the protocol's `Origin`
//! check and optional bearer-token authentication.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, Request, Response, StatusCode, header};
use axum::middleware::{self, Next};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::error::McpError;
use crate::listen::{self, AcceptLoop, DEFAULT_BACKLOG};
use crate::server::ToolServer;
use crate::sessions::Sessions;

/// Serves `server` over this process's stdin and stdout until the client closes them (what an
/// MCP client that starts the server as a command expects). Log to stderr only: stdout is
/// the protocol.
pub async fn serve_stdio(server: ToolServer) -> Result<(), McpError> {
    let (stdin, stdout) = rmcp::transport::stdio();
    server.serve_io(stdin, stdout).await
}

/// Where and how [`serve_http`] listens. Its `Debug` says whether a bearer token is set,
/// not what it is.
/// Start from `default()` and chain the setters (the struct is `#[non_exhaustive]`).
///
/// ```
/// use actuator_mcp::HttpOptions;
/// let options = HttpOptions::default().path("/tools").max_body_bytes(1 << 20);
/// assert_eq!(options.path, "/tools");
/// assert_eq!(options.max_body_bytes, 1 << 20);
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The address to bind (default `127.0.0.1:0`: loopback, a free port). Binding another
    /// address is allowed; list the host names clients use in
    /// [`allowed_hosts`](Self::allowed_hosts).
    pub bind: SocketAddr,
    /// The endpoint's path (default `/mcp`).
    pub path: String,
    /// When set, every request must carry `Authorization: Bearer {token}`; any other request
    /// gets 401 and reaches no tool.
    pub bearer_token: Option<String>,
    /// Browser origins allowed in an `Origin` header (the DNS-rebinding rule): a request with
    /// any other `Origin` gets 403. Default: loopback origins on any port. Requests without
    /// an `Origin` (non-browser clients) pass.
    pub allowed_origins: Vec<String>,
    /// Host names (or `host:port`) accepted in the `Host` header. Default: loopback names.
    pub allowed_hosts: Vec<String>,
    /// The largest request body accepted, in bytes (default 4 MiB); a larger one gets 413.
    pub max_body_bytes: usize,
    /// How long a request whose client dropped its response stream keeps running, waiting for
    /// the client to resume the stream (`Last-Event-ID`), before it is cancelled as if the
    /// client had sent `notifications/cancelled` (default 10 s; the server asks clients to
    /// wait 3 s before resuming). A client that ends its session (`DELETE`) cancels its
    /// requests at once.
    pub disconnect_grace: Duration,
    /// The listen backlog: how many connections the kernel queues, handshake done, until the
    /// server accepts them (default [`DEFAULT_BACKLOG`], 1,024). A burst of connections
    /// beyond it makes the kernel drop connection attempts, which clients see as delays or
    /// resets. The kernel caps it at `net.core.somaxconn` (4,096 on recent Linux; raise it
    /// with `sysctl` for a larger backlog).
    pub backlog: u32,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("bind", &self.bind)
            .field("path", &self.path)
            .field("bearer_token", &self.bearer_token.as_ref().map(|_| "<set>"))
            .field("allowed_origins", &self.allowed_origins)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("disconnect_grace", &self.disconnect_grace)
            .finish()
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            path: "/mcp".to_owned(),
            bearer_token: None,
            allowed_origins: vec![
                "http://localhost:*".to_owned(),
                "http://127.0.0.1:*".to_owned(),
                "http://[::1]:*".to_owned(),
            ],
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            max_body_bytes: 4 * 1024 * 1024,
            disconnect_grace: Duration::from_secs(10),
            backlog: DEFAULT_BACKLOG,
        }
    }
}

impl HttpOptions {
    /// The address to bind.
    #[must_use]
    pub fn bind(mut self, addr: SocketAddr) -> Self {
        self.bind = addr;
        self
    }

    /// The endpoint's path (default `/mcp`).
    #[must_use]
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// The host names (or `host:port`) accepted in the `Host` header (replacing the loopback
    /// defaults).
    #[must_use]
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// The largest request body accepted, in bytes.
    #[must_use]
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Requires `Authorization: Bearer {token}` on every request.
    #[must_use]
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// How long a request whose client went away may wait for the client to come back
    /// before it is cancelled.
    #[must_use]
    pub fn disconnect_grace(mut self, grace: Duration) -> Self {
        self.disconnect_grace = grace;
        self
    }

    /// The listen backlog (see [`backlog`](Self::backlog)).
    #[must_use]
    pub fn backlog(mut self, backlog: u32) -> Self {
        self.backlog = backlog;
        self
    }

    /// The origins allowed in an `Origin` header (replacing the loopback defaults).
    #[must_use]
    pub fn allowed_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }
}

/// A running HTTP server: its address, and a handle to stop it (dropping it stops it too).
#[derive(Debug)]
pub struct HttpServer {
    addr: SocketAddr,
    path: String,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl HttpServer {
    /// The bound address (with the port chosen when binding port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint's URL (`http://127.0.0.1:PORT/mcp`).
    pub fn url(&self) -> String {
        format!("http://{}{}", self.addr, self.path)
    }

    /// Stops accepting requests, ends the sessions, and waits for the server task.
    pub async fn shutdown(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Serves `server` over streamable HTTP at `options.path`, on a task of the current Tokio
/// runtime, until [`HttpServer::shutdown`] or the handle is dropped.
///
/// Each client session gets its own copy of the server (the tools are shared).
///
/// # How much it holds
///
/// Every accepted connection is served on its own task, and every request on a connection
/// runs its tool call on its own task, so a server holds as many connections and concurrent
/// calls as clients open: there is no limit in the server itself, only the process's
/// open-file limit (one descriptor per connection; `ulimit -n`) and memory. Connections that
/// arrive faster than they are accepted wait in the kernel's listen queue of
/// [`HttpOptions::backlog`] connections (1,024 by default, capped by `net.core.somaxconn`).
/// When the process runs out of file descriptors, accepting pauses (5 ms, doubling up to
/// 1 s, logged at `warn`) and resumes when descriptors are free again; the server never
/// stops accepting on such an error. A test holds 1,000 connections, each with a call in
/// progress, and answers every call.
///
/// ```no_run
/// use actuator_mcp::{HttpOptions, ServeOptions, ToolServer, serve_http};
/// # async fn demo(tools: Vec<actuator_tool_core::ToolDef>) -> Result<(), actuator_mcp::McpError> {
/// let server = ToolServer::new(tools, ServeOptions::default())?;
/// let http = serve_http(server, HttpOptions::default().bearer_token("s3cret")).await?;
/// println!("MCP endpoint: {}", http.url());
/// # Ok(()) }
/// ```
pub async fn serve_http(server: ToolServer, options: HttpOptions) -> Result<HttpServer, McpError> {
    if !options.path.starts_with('/') {
        return Err(McpError::config(format!(
            "the HTTP path must start with '/', got '{}'",
            options.path
        )));
    }
    let stop = CancellationToken::new();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.allowed_hosts.clone())
        .with_allowed_origins(options.allowed_origins.clone())
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(stop.child_token());
    let config = if options.allowed_origins.is_empty() {
        config.enforce_origin_validation()
    } else {
        config
    };
    let service = StreamableHttpService::new(
        move || Ok(server.for_session()),
        Arc::new(Sessions::new(options.disconnect_grace)),
        config,
    );
    let token = options.bearer_token.clone().map(Arc::<str>::from);
    let router = axum::Router::new()
        .route_service(&options.path, service)
        .layer(middleware::from_fn(
            move |request: Request<Body>, next: Next| {
                let token = token.clone();
                async move { authorize(token.as_deref(), request, next).await }
            },
        ));
    let listener = listen::bind(options.bind, options.backlog)
        .map_err(|e| McpError::serve_from(format!("could not bind {}", options.bind), e))?;
    let addr = listener
        .local_addr()
        .map_err(|e| McpError::serve_from("could not read the bound address", e))?;
    let shutdown = stop.clone();
    let task = tokio::spawn(async move {
        let served = axum::serve(AcceptLoop::new(listener), router)
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await;
        if let Err(e) = served {
            tracing::warn!("MCP HTTP server stopped: {e}");
        }
    });
    Ok(HttpServer {
        addr,
        path: options.path,
        stop,
        task: Some(task),
    })
}

/// 401 unless the request carries the bearer token (when one is required).
async fn authorize(token: Option<&str>, request: Request<Body>, next: Next) -> Response<Body> {
    if let Some(expected) = token {
        let given = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if !given.is_some_and(|g| constant_time_eq(g.as_bytes(), expected.as_bytes())) {
            let mut response = Response::new(Body::from("a valid bearer token is required"));
            *response.status_mut() = StatusCode::UNAUTHORIZED;
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return response;
        }
    }
    next.run(request).await
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
