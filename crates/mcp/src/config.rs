//! [`McpServer`]: how to reach an MCP server (a child process over stdio, or a URL over
//! streamable HTTP) and how its tools behave.

use actuator_tool_core::ElicitationHandler;

use crate::client_requests::{McpRoot, SamplingHandler, ServerRequests};
use actuator_model::credentials::{Secrets, without_user_info};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::progress::{McpProgress, ProgressObserver};

/// How the client reaches a server. Its `Debug` shows header names, not values, and neither
/// the bearer token nor the URL's user information.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
        bearer: Option<String>,
        /// Extra trusted roots, PEM (HTTPS only).
        roots: Vec<Vec<u8>>,
    },
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                // Environment values are often keys.
                .field("env", &env.keys().collect::<Vec<_>>())
                .field("cwd", cwd)
                .finish(),
            Transport::Http {
                url,
                headers,
                bearer,
                roots,
            } => f
                .debug_struct("Http")
                .field("url", &without_user_info(url))
                .field(
                    "headers",
                    &headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
                )
                .field("bearer", &bearer.as_ref().map(|_| "<set>"))
                .field("roots", &roots.len())
                .finish(),
        }
    }
}

/// An MCP server to connect to: over stdio (a child process the client starts and kills when
/// it closes or is dropped) or over streamable HTTP (a URL, with headers for authentication).
///
/// ```
/// use std::time::Duration;
/// use actuator_mcp::McpServer;
///
/// let fs = McpServer::stdio("node", ["server.js", "/tmp/work"])
///     .name("filesystem")
///     .env("NO_UPDATE_NOTIFIER", "1")
///     .timeout(Duration::from_secs(30));
/// assert_eq!(fs.server_name(), "filesystem");
///
/// let remote = McpServer::http("http://127.0.0.1:8000/mcp").bearer_token("s3cret");
/// assert_eq!(remote.server_name(), "http://127.0.0.1:8000/mcp");
///
/// // Progress of long calls, as the server reports it.
/// let watched = McpServer::stdio("node", ["everything.js"])
///     .on_progress(|p| eprintln!("{} {}/{:?}", p.tool, p.progress, p.total));
/// # let _ = watched;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServer {
    pub(crate) name: String,
    pub(crate) transport: Transport,
    pub(crate) timeout: Option<Duration>,
    pub(crate) connect_timeout: Duration,
    pub(crate) parallel: bool,
    pub(crate) progress: Option<ProgressObserver>,
    pub(crate) requests: ServerRequests,
    #[cfg(feature = "oauth")]
    pub(crate) oauth: Option<crate::oauth::OAuth>,
}

/// How long connecting (spawning or reaching the server and the MCP handshake) may take unless
/// told otherwise.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

impl McpServer {
    /// A server started as a child process (`command` with `args`), spoken to over its stdin and
    /// stdout. Its stderr is passed through to this process's stderr. Named after the command
    /// unless [`name`](Self::name) says otherwise.
    pub fn stdio(
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        let command = command.into();
        McpServer {
            name: command.clone(),
            transport: Transport::Stdio {
                command,
                args: args.into_iter().map(Into::into).collect(),
                env: BTreeMap::new(),
                cwd: None,
            },
            timeout: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            parallel: true,
            progress: None,
            requests: ServerRequests::default(),
            #[cfg(feature = "oauth")]
            oauth: None,
        }
    }

    /// A server reached over streamable HTTP at `url`. Named after the URL unless
    /// [`name`](Self::name) says otherwise.
    ///
    /// `http://` always works; `https://` needs this crate's `https` feature (rustls with the
    /// `ring` provider, the platform's certificate roots, plus any
    /// [`root_certificate_pem`](Self::root_certificate_pem)); without it connecting fails
    /// with an error saying so.
    pub fn http(url: impl Into<String>) -> Self {
        let url = url.into();
        McpServer {
            name: without_user_info(&url),
            transport: Transport::Http {
                url,
                headers: Vec::new(),
                bearer: None,
                roots: Vec::new(),
            },
            timeout: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            parallel: true,
            progress: None,
            requests: ServerRequests::default(),
            #[cfg(feature = "oauth")]
            oauth: None,
        }
    }

    /// The secrets of these settings (bearer token, credential headers, the URL's user
    /// information), to redact from error texts.
    pub(crate) fn secrets(&self) -> Secrets {
        match &self.transport {
            Transport::Http {
                url,
                headers,
                bearer,
                ..
            } => Secrets::new(
                headers.iter().map(|(n, v)| (n.as_str(), v.as_str())),
                bearer.as_deref(),
                url,
            ),
            Transport::Stdio { .. } => Secrets::default(),
        }
    }

    /// The server's name, for errors and logs.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The name errors and logs use.
    pub fn server_name(&self) -> &str {
        &self.name
    }

    /// An environment variable for the child process (stdio only; ignored for HTTP).
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let Transport::Stdio { env, .. } = &mut self.transport {
            env.insert(key.into(), value.into());
        }
        self
    }

    /// The child process's working directory (stdio only; ignored for HTTP).
    #[must_use]
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        if let Transport::Stdio { cwd, .. } = &mut self.transport {
            *cwd = Some(dir.into());
        }
        self
    }

    /// A header sent with every request (HTTP only; ignored for stdio).
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Transport::Http { headers, .. } = &mut self.transport {
            headers.push((name.into(), value.into()));
        }
        self
    }

    /// A bearer token, sent as `Authorization: Bearer {token}` (HTTP only).
    #[must_use]
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        if let Transport::Http { bearer, .. } = &mut self.transport {
            *bearer = Some(token.into());
        }
        self
    }

    /// Trusts the certificates in `pem` (one or more PEM `CERTIFICATE` blocks) as roots, beside
    /// the platform's: for a server whose certificate a private CA issued, or a self-signed
    /// one (HTTPS only, with the `https` feature; ignored for stdio). A block that is not a
    /// certificate is a configuration error when connecting.
    #[must_use]
    pub fn root_certificate_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        if let Transport::Http { roots, .. } = &mut self.transport {
            roots.push(pem.into());
        }
        self
    }

    /// Calls `observer` with every progress notification the server sends for a running tool
    /// call (`notifications/progress`, as a long operation reports its steps), in the order
    /// received, skipping any whose progress does not increase. It runs on the connection's
    /// receiving task: keep it quick (hand the value to a channel). Each is also logged with
    /// `tracing` at level INFO.
    #[must_use]
    pub fn on_progress(mut self, observer: impl Fn(&McpProgress) + Send + Sync + 'static) -> Self {
        self.progress = Some(ProgressObserver(Arc::new(observer)));
        self
    }

    /// Answers the server's requests for a completion from our model
    /// (`sampling/createMessage`) with `handler`, and declares the `sampling` capability.
    /// Without one the capability is not declared and such requests are refused.
    ///
    /// ```
    /// use actuator_mcp::McpServer;
    /// use actuator_tool_core::SamplingResult;
    /// let server = McpServer::http("http://127.0.0.1:8000/mcp")
    ///     .sampling(|request: actuator_tool_core::SamplingRequest| async move {
    ///         Ok(SamplingResult::new("a scripted answer", "scripted"))
    ///     });
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn sampling(mut self, handler: impl SamplingHandler) -> Self {
        self.requests.sampling = Some(Arc::new(handler));
        self
    }

    /// Answers the server's questions for our user (`elicitation/create`, form mode) with
    /// `handler`, and declares the `elicitation` capability. Fields the handler leaves out
    /// take the schema's defaults, and the answer is checked against the schema before it
    /// is sent. Without a handler the capability is not declared and such requests are
    /// refused.
    ///
    /// ```
    /// use actuator_mcp::McpServer;
    /// use actuator_tool_core::{ElicitationRequest, ElicitationResult};
    /// let server = McpServer::http("http://127.0.0.1:8000/mcp")
    ///     .elicitation(|_request: ElicitationRequest| async move { Ok(ElicitationResult::decline()) });
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn elicitation(mut self, handler: impl ElicitationHandler) -> Self {
        self.requests.elicitation = Some(Arc::new(handler));
        self
    }

    /// Sends the requests a server makes while one of our calls to it runs to the run that
    /// made the call, and declares `sampling` and `elicitation`: sampling is answered by the
    /// run's `SamplingModel` (actuator-agent), counted in its limits, usage and events as any
    /// generation, and elicitation by its `RunElicitation`. MCP does not say which call a
    /// request belongs to, so this needs the calls in flight on the connection to come
    /// from one run (one `McpClient` per run, or calls that do not overlap); otherwise, or
    /// outside any call, the handlers given with [`McpServer::sampling`] and
    /// [`McpServer::elicitation`] answer, and without them the request is refused with the
    /// reason.
    ///
    /// ```
    /// use actuator_mcp::McpServer;
    /// let server = McpServer::http("http://127.0.0.1:8000/mcp").route_to_calling_run();
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn route_to_calling_run(mut self) -> Self {
        self.requests.to_calling_run = true;
        self
    }

    /// Decides whether each sampling request goes ahead before our model is asked: allowed,
    /// refused with a reason (JSON-RPC code -1), or put to a person first
    /// ([`SamplingDecision`](crate::SamplingDecision)).
    ///
    /// ```
    /// use actuator_mcp::{McpServer, SamplingDecision};
    /// use actuator_tool_core::SamplingRequest;
    /// let server = McpServer::http("http://127.0.0.1:8000/mcp")
    ///     .route_to_calling_run()
    ///     .sampling_policy(|_server: &str, _request: &SamplingRequest| SamplingDecision::Ask);
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn sampling_policy(mut self, policy: impl crate::SamplingPolicy) -> Self {
        self.requests.sampling_policy = Some(Arc::new(policy));
        self
    }

    /// Authorizes with OAuth 2.1 when the server answers the handshake with a 401 challenge
    /// (HTTP servers; feature `oauth`): discovery, registration, PKCE and the token exchange
    /// run, then the connection is made with the token.
    #[cfg(feature = "oauth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "oauth")))]
    #[must_use]
    pub fn oauth(mut self, oauth: crate::oauth::OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// Tells the server where it may work (`roots/list`, for example a sandbox's working
    /// directory), and declares the `roots` capability.
    #[must_use]
    pub fn roots(mut self, roots: impl IntoIterator<Item = McpRoot>) -> Self {
        self.requests.roots = Some(roots.into_iter().collect());
        self
    }

    /// The timeout of every call to the server's tools (the `ToolDef`'s timeout: the executor
    /// stops the call with the `timeout` error, and the server is told the request was
    /// cancelled). Default: none.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// How long connecting may take (default [`DEFAULT_CONNECT_TIMEOUT`]).
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Whether the server's tools may run concurrently with neighbouring parallel calls
    /// (default `true`, as the reference's MCP tools; one session serves concurrent calls).
    #[must_use]
    pub fn parallel(mut self, parallel: bool) -> Self {
        self.parallel = parallel;
        self
    }
}
