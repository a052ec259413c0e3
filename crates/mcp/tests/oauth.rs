//! OAuth behaviour beyond the conformance suite: what a user without an authorize callback
//! reads, and that the callback's failure reaches them with its reason.

#![cfg(feature = "oauth")]
#![allow(clippy::unwrap_used, clippy::panic)]

use actuator_mcp::{
    HttpOptions, McpClient, McpServer, OAuth, ServeOptions, ToolServer, serve_http,
};
use actuator_tool_core::HostError;

async fn protected() -> actuator_mcp::HttpServer {
    let server = ToolServer::new([], ServeOptions::default()).unwrap();
    serve_http(
        server,
        HttpOptions::default().bearer_token("a-token-nobody-has"),
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn a_server_that_needs_authorization_without_a_callback_says_what_to_give() {
    let http = protected().await;
    let client = McpClient::new(
        McpServer::http(http.url()).oauth(OAuth::new("http://127.0.0.1:1/callback")),
    );
    let err = client.connect().await.unwrap_err().to_string();
    assert!(err.contains("give OAuth::authorize a callback"), "{err}");
}

#[tokio::test]
async fn a_server_without_oauth_metadata_is_an_error_naming_the_step() {
    // Our server's 401 names no authorization server: discovery finds none.
    let http = protected().await;
    let client = McpClient::new(
        McpServer::http(http.url()).oauth(
            OAuth::new("http://127.0.0.1:1/callback")
                .authorize(|_url: String| async { Err(HostError::failed("no browser here")) }),
        ),
    );
    let err = client.connect().await.unwrap_err().to_string();
    assert!(err.contains("OAuth authorization failed"), "{err}");
    assert!(!err.contains("a-token-nobody-has"), "{err}");
}
