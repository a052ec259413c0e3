//! [`McpError`]: what went wrong talking to an MCP server, or serving one.

/// The error behind an [`McpError::Config`] or [`McpError::Serve`], returned as its
/// `source()` (downcast it to the library's own type: `std::io::Error`, `glob::PatternError`,
/// …).
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// An MCP connection, listing or serving error. Each says which server and what to do.
///
/// A setting or serving error keeps the error that caused it as its `source()` rather than
/// in its message; print the chain to see both:
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use std::error::Error as _;
/// use actuator_mcp::{McpClient, McpServer, mcp_tools};
/// let client = McpClient::new(McpServer::stdio("true", Vec::<String>::new()));
/// let err = mcp_tools(&client).filter(["[unclosed"]).unwrap_err();
/// assert_eq!(err.to_string(), "Invalid MCP setting: tool filter '[unclosed' is not a valid glob pattern");
/// assert!(err.source().unwrap().downcast_ref::<glob::PatternError>().is_some());
/// # });
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The server could not be started or reached.
    #[error(
        "Could not start or reach MCP server '{server}': {reason}. Check the command (is it installed and on PATH?) or the URL."
    )]
    Connect {
        /// The server's name.
        server: String,
        /// Why.
        reason: String,
    },
    /// The server was reached, but the MCP handshake failed.
    #[error("MCP server '{server}' did not complete the MCP handshake: {reason}")]
    Handshake {
        /// The server's name.
        server: String,
        /// Why.
        reason: String,
    },
    /// Connecting took longer than the connect timeout.
    #[error(
        "MCP server '{server}' did not answer the handshake within {seconds:.1} s; raise McpServer::connect_timeout if it is slow to start."
    )]
    ConnectTimeout {
        /// The server's name.
        server: String,
        /// The timeout, in seconds.
        seconds: f64,
    },
    /// A request to a connected server failed.
    #[error("MCP server '{server}' failed to answer {request}: {reason}")]
    Request {
        /// The server's name.
        server: String,
        /// The request (`tools/list`, …).
        request: String,
        /// Why.
        reason: String,
    },
    /// The server answered with a redirect to another origin (scheme, host or port), which is
    /// not followed: the bearer token and headers are for the configured server only.
    #[error(
        "MCP server '{server}' at {from} redirected to another origin ({to}), which is not followed so that its token and headers stay with the server they were given for. If {to} is the right server, configure that URL in McpServer::http."
    )]
    RedirectRefused {
        /// The server's name.
        server: String,
        /// The URL requested.
        from: String,
        /// Where the server redirected to.
        to: String,
    },
    /// A setting is invalid (a glob pattern, a header, an address, a tool to serve).
    #[error("Invalid MCP setting: {message}")]
    Config {
        /// Which setting, and what is wrong with it.
        message: String,
        /// The error behind it, if there is one (the glob library's, the header's, TLS's).
        #[source]
        source: Option<BoxError>,
    },
    /// The server side failed (binding a port, a transport error).
    #[error("MCP server error: {message}")]
    Serve {
        /// What failed.
        message: String,
        /// The error behind it, if there is one (the socket's, the transport's).
        #[source]
        source: Option<BoxError>,
    },
}

impl McpError {
    /// A [`Config`](McpError::Config) error with no error behind it.
    pub(crate) fn config(message: impl Into<String>) -> Self {
        McpError::Config {
            message: message.into(),
            source: None,
        }
    }

    /// A [`Config`](McpError::Config) error caused by `source`.
    pub(crate) fn config_from(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        McpError::Config {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// A [`Serve`](McpError::Serve) error caused by `source`.
    pub(crate) fn serve_from(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        McpError::Serve {
            message: message.into(),
            source: Some(source.into()),
        }
    }
}

/// Why a served resource or prompt could not answer (a missing record, a bad argument): its
/// message reaches the client as a JSON-RPC error, so say what was wrong and what would work.
///
/// ```
/// use actuator_mcp::HandlerError;
/// let err = HandlerError::new("no user 'carol'; known users: alice, bob");
/// assert_eq!(err.to_string(), "no user 'carol'; known users: alice, bob");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct HandlerError(pub String);

impl HandlerError {
    /// An error saying `message`.
    pub fn new(message: impl Into<String>) -> Self {
        HandlerError(message.into())
    }
}
