//! OAuth 2.1 for HTTP servers that require it (feature `oauth`), on rmcp's implementation of
//! the specification's authorization section: protected-resource and authorization-server
//! metadata discovery (with the SSRF filter rmcp applies to discovered hosts), client
//! registration (pre-registered, client ID metadata document, or dynamic), PKCE, scopes
//! from the server's challenge, and token refresh.
//!
//! The one interactive step, a person approving access in a browser, is the caller's:
//! [`OAuth::authorize`] takes a callback that is given the authorization URL and returns the
//! URL the browser was redirected to. Tokens stay in memory, in rmcp's credential store, and
//! are never logged or shown by `Debug`.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use actuator_tool_core::{BoxFuture, ErrorChain, HostError};
use rmcp::transport::auth::{AuthorizationManager, AuthorizationRequest, OAuthState};

type AuthorizeFn = dyn Fn(String) -> BoxFuture<'static, Result<String, HostError>> + Send + Sync;

/// How [`McpClient`](crate::McpClient) authorizes with an HTTP server that answers 401 with
/// an OAuth challenge.
///
/// ```
/// use actuator_mcp::{McpServer, OAuth};
/// let server = McpServer::http("https://mcp.example.com/mcp").oauth(
///     OAuth::new("http://127.0.0.1:8765/callback")
///         .client_name("my-agent")
///         .authorize(|url: String| async move {
///             // Open `url` in a browser, wait for the redirect to the callback, return it.
///             Err(actuator_tool_core::HostError::failed(format!("open {url} to continue")))
///         }),
/// );
/// # let _ = server;
/// ```
#[derive(Clone)]
pub struct OAuth {
    pub(crate) redirect_uri: String,
    pub(crate) client_name: Option<String>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<String>,
    pub(crate) scopes: Vec<String>,
    pub(crate) authorize: Option<Arc<AuthorizeFn>>,
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("redirect_uri", &self.redirect_uri)
            .field("client_name", &self.client_name)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<set>"),
            )
            .field("scopes", &self.scopes)
            .field("authorize", &self.authorize.is_some())
            .finish()
    }
}

impl PartialEq for OAuth {
    fn eq(&self, other: &Self) -> bool {
        self.redirect_uri == other.redirect_uri
            && self.client_name == other.client_name
            && self.client_metadata_url == other.client_metadata_url
            && self.client_id == other.client_id
            && self.client_secret == other.client_secret
            && self.scopes == other.scopes
            && match (&self.authorize, &other.authorize) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
    }
}

impl Eq for OAuth {}

impl OAuth {
    /// Authorization with `redirect_uri` as the registered redirect (a loopback callback for
    /// a local program).
    pub fn new(redirect_uri: impl Into<String>) -> Self {
        OAuth {
            redirect_uri: redirect_uri.into(),
            client_name: None,
            client_metadata_url: None,
            client_id: None,
            client_secret: None,
            scopes: Vec::new(),
            authorize: None,
        }
    }

    /// The name the client registers with (dynamic registration).
    #[must_use]
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = Some(name.into());
        self
    }

    /// The URL of this client's metadata document, used as its client ID where the
    /// authorization server supports client ID metadata documents.
    #[must_use]
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// A client registered beforehand with the authorization server (no registration).
    #[must_use]
    pub fn client(mut self, id: impl Into<String>, secret: Option<String>) -> Self {
        self.client_id = Some(id.into());
        self.client_secret = secret;
        self
    }

    /// The scopes to ask for; by default those of the server's challenge or metadata.
    #[must_use]
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The interactive step: given the authorization URL, return the URL the user's browser
    /// was redirected to (it carries the code and state). Without it, a server that needs
    /// authorization is a connection error saying so.
    #[must_use]
    pub fn authorize<F, Fut>(mut self, authorize: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, HostError>> + Send + 'static,
    {
        self.authorize = Some(Arc::new(move |url| Box::pin(authorize(url))));
        self
    }
}

/// Runs the authorization flow for `url` after its `challenge` (the 401's
/// `WWW-Authenticate`), returning the authorized manager, or what failed.
pub(crate) async fn authorize(
    url: &str,
    oauth: &OAuth,
    challenge: Option<String>,
) -> Result<AuthorizationManager, String> {
    let failed = |what: &str, e: &dyn std::error::Error| {
        format!("OAuth authorization failed: {what}: {}", ErrorChain(e))
    };
    let Some(callback) = &oauth.authorize else {
        return Err(
            "the server requires OAuth authorization; give OAuth::authorize a callback \
                    that opens the authorization URL and returns the redirect"
                .to_owned(),
        );
    };
    // rmcp builds its own reqwest client for OAuth (with its filter on discovered hosts).
    // With `https`, reqwest has TLS but no built-in crypto provider, so that build would
    // panic without a process-wide one: install ring's unless the program chose one.
    #[cfg(feature = "https")]
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    let mut state = OAuthState::new(url, None)
        .await
        .map_err(|e| failed("the server's metadata could not be read", &e))?;
    let mut request = AuthorizationRequest::new(oauth.redirect_uri.clone());
    if let Some(name) = &oauth.client_name {
        request = request.with_client_name(name.clone());
    }
    if let Some(metadata) = &oauth.client_metadata_url {
        request = request.with_client_metadata_url(metadata.clone());
    }
    if let Some(id) = &oauth.client_id {
        request = request.with_preregistered_client(id.clone());
        if let Some(secret) = &oauth.client_secret {
            request = request.with_client_secret(secret.clone());
        }
    }
    if !oauth.scopes.is_empty() {
        request = request.with_scopes(oauth.scopes.iter().cloned());
    }
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    state
        .start_authorization(request)
        .await
        .map_err(|e| failed("authorization could not start", &e))?;
    let authorization_url = state
        .get_authorization_url()
        .await
        .map_err(|e| failed("no authorization URL", &e))?;
    let redirected = callback(authorization_url)
        .await
        .map_err(|e| failed("the authorize callback failed", &e))?;
    state
        .handle_callback_url(&redirected)
        .await
        .map_err(|e| failed("the code could not be exchanged for a token", &e))?;
    state
        .into_authorization_manager()
        .ok_or_else(|| "OAuth authorization did not complete".to_owned())
}
