//! # actuator-mcp
//!
//! The Model Context Protocol both ways, on the official Rust SDK (`rmcp`):
//!
//! - **Client**: an MCP server's tools as [`ToolDef`](actuator_tool_core::ToolDef)s for
//!   agents. [`McpServer`] says how to reach it (a child process over stdio, or streamable
//!   HTTP with headers); [`McpClient`] holds the connection (made on first use, made again
//!   after the server dies, closed with the client); [`mcp_tools`] is a
//!   [`ToolSource`](actuator_tool_core::ToolSource) that lists the tools once per turn (re-listed
//!   when the server says its list changed), with a name prefix and a glob filter.
//!   Calls are forwarded with cancellation (a dropped call sends `notifications/cancelled`)
//!   under the server's timeout; results become [`Content`](actuator_tool_core::Content)
//!   (text, image, audio, resources); `isError` is a recoverable tool error the model reads;
//!   a dead server is a tool error saying so. A schema our validator cannot compile is
//!   reported once ([`McpClient::reports`]) and the tool stays callable (the server
//!   validates). Progress a server reports for a running call reaches
//!   [`McpServer::on_progress`] as [`McpProgress`], in order, and the log. A server's
//!   requests for our model, our user or our roots are answered by the handlers
//!   [`McpServer::sampling`], [`McpServer::elicitation`] and [`McpServer::roots`] give.
//! - **Server**: [`serve_stdio`] and [`serve_http`] offer a set of `ToolDef`s to any MCP
//!   client, with the same validation, classification and texts as the executor, and with
//!   [`Resource`]s, [`ResourceTemplate`]s and [`Prompt`]s beside them. A served tool reaches
//!   the call's session through its `ToolContext` (progress, logs, sampling, elicitation).
//!   Every scenario of the official conformance suite passes (`docs/mcp.md`). Over HTTP
//!   a call whose client went away is cancelled (after [`HttpOptions::disconnect_grace`], the
//!   time a client has to resume its stream).
//! - **Credentials** of an HTTP server (its bearer token, headers, a URL's user info) stay
//!   with its origin: a redirect to another origin is not followed
//!   ([`McpError::RedirectRefused`]), and they are redacted from errors, from the errors
//!   rmcp logs, and from `Debug` output.
//!
//! ## Features
//!
//! - `https`: `https://` servers for the HTTP client, on rustls with the `ring` provider (no
//!   aws-lc build), the platform's certificate roots (`rustls-platform-verifier`) and
//!   `McpServer::root_certificate_pem`. Off by default: it adds rustls, ring and the verifier
//!   to a clean build (on the 2-vCPU machine of `docs/benchmarks.md`, 2026-12-01: a clean
//!   debug `cargo build -p actuator-mcp` took 94 s; turning `https` on afterwards rebuilt for
//!   54 s more, reqwest and rmcp included). It turns on reqwest 0.13's `rustls-no-provider`; this crate hands its
//!   own clients the provider, but another reqwest 0.13 client in the same program built
//!   with `reqwest::Client::new()` then needs a process-wide provider
//!   (`rustls::crypto::ring::default_provider().install_default()`), unless something enables
//!   reqwest's default TLS.
//!
//! - `oauth`: OAuth 2.1 for HTTP servers that require it (`McpServer::oauth`, on rmcp's
//!   `auth` and `auth-enterprise-managed`): discovery, registration, PKCE, scope step-up and
//!   token refresh; the client credentials grant and enterprise-managed cross-app access;
//!   tokens kept in a `CredentialStore` (`FileCredentialStore` on disk). Off by default:
//!   it adds the oauth2 crate and its dependencies (22 crates over the default build).
//! - `oauth-jwt`: `oauth` plus client credentials authenticated by a signed JWT
//!   (`OAuth::private_key_jwt`, RFC 7523). Separate because it adds jsonwebtoken and
//!   aws-lc-rs (16 crates more), whose C library is compiled (a C compiler is needed).
//!
//! ```no_run
//! use std::sync::Arc;
//! use actuator_mcp::{McpClient, McpServer, mcp_tools};
//!
//! let fs = McpClient::new(
//!     McpServer::stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "/tmp/work"])
//!         .name("filesystem"),
//! );
//! let source = Arc::new(mcp_tools(&fs).prefix("fs_"));
//! // actuator_agent::react().tool_source(source).model(…).build()
//! # let _ = source;
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

mod callers;
mod client;
mod client_requests;
mod client_resources;
mod complete;
mod config;
mod convert;
mod error;
mod guarded;
mod http;
mod http_client;
mod listen;
#[cfg(feature = "oauth")]
mod oauth;
#[cfg(feature = "oauth")]
mod oauth_client;
#[cfg(feature = "oauth")]
mod oauth_flow;
#[cfg(feature = "oauth")]
mod oauth_store;
mod progress;
mod prompts;
mod redirect;
mod resources;
mod sampling;
mod sampling_policy;
mod served_call;
mod served_handler;
mod served_io;
mod served_params;
mod served_session;
mod server;
mod sessions;
mod tools;

pub use actuator_tool_core::ElicitationHandler;
pub use client::McpClient;
pub use client_requests::{McpRoot, SamplingHandler};
pub use client_resources::{ListedResource, MAX_LISTED_RESOURCES};
pub use complete::MAX_COMPLETION_VALUES;
pub use config::{DEFAULT_CONNECT_TIMEOUT, McpServer};
pub use convert::{content_from_mcp, content_to_mcp, output_from_result};
pub use error::{HandlerError, McpError};
pub use http::{HttpOptions, HttpServer, serve_http, serve_stdio};
pub use listen::DEFAULT_BACKLOG;
#[cfg(feature = "oauth")]
#[cfg_attr(docsrs, doc(cfg(feature = "oauth")))]
pub use oauth::{
    CredentialStore, CrossAppAccess, FileCredentialStore, InMemoryCredentialStore, OAuth,
    StoredCredentials,
};
pub use progress::McpProgress;
pub use prompts::{Prompt, PromptArgument, PromptMessage};
pub use resources::{Resource, ResourceBody, ResourceContent, ResourceRead, ResourceTemplate};
#[cfg(feature = "oauth-jwt")]
#[cfg_attr(docsrs, doc(cfg(feature = "oauth-jwt")))]
pub use rmcp::transport::auth::JwtSigningAlgorithm;
pub use sampling_policy::{SamplingDecision, SamplingPolicy};
pub use server::{ServeOptions, ToolServer};
pub use tools::{McpTools, mcp_tools};
