//! [`McpError`]: what went wrong talking to an MCP server, or serving one.

/// An MCP connection, listing or serving error. Each says which server and what to do.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
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
    /// A setting is invalid (a glob pattern, a header, an address).
    #[error("Invalid MCP setting: {0}")]
    Config(String),
    /// The server side failed (binding a port, a transport error).
    #[error("MCP server error: {0}")]
    Serve(String),
}
