//! OAuth 2.1 for HTTP servers that require it (feature `oauth`), on rmcp's implementation of
//! the specification's authorization section: protected-resource and authorization-server
//! metadata discovery (with the SSRF filter rmcp applies to discovered hosts), and one of
//! three grants:
//!
//! - the authorization code with PKCE ([`OAuth::new`]): client registration (pre-registered,
//!   client ID metadata document, or dynamic), scopes from the server's challenge, refresh;
//!   the one interactive step, a person approving access in a browser, is the caller's
//!   callback ([`OAuth::authorize`]);
//! - client credentials for a program acting as itself (SEP-1046):
//!   [`OAuth::client_credentials`] with a secret, or [`OAuth::private_key_jwt`] with a signed
//!   assertion (feature `oauth-jwt`);
//! - cross-app access for enterprise-managed authorization (SEP-990):
//!   [`OAuth::cross_app_access`] exchanges the user's ID token at their identity provider
//!   for an identity assertion grant, and that at the server's authorization server.
//!
//! Tokens live in a [`CredentialStore`]: memory by default, [`FileCredentialStore`] to keep
//! them across runs, or the caller's own. They are never logged or shown by `Debug`.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use actuator_tool_core::{BoxFuture, HostError};
pub use rmcp::transport::auth::{CredentialStore, InMemoryCredentialStore, StoredCredentials};

pub use crate::oauth_store::FileCredentialStore;

pub(crate) type AuthorizeFn =
    dyn Fn(String) -> BoxFuture<'static, Result<String, HostError>> + Send + Sync;
pub(crate) type IdTokenFn = dyn Fn() -> BoxFuture<'static, Result<String, HostError>> + Send + Sync;

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
    pub(crate) grant: Grant,
    pub(crate) redirect_uri: String,
    pub(crate) client_name: Option<String>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<String>,
    pub(crate) scopes: Vec<String>,
    pub(crate) authorize: Option<Arc<AuthorizeFn>>,
    pub(crate) store: Option<Arc<dyn CredentialStore>>,
}

/// Which OAuth grant obtains the token.
#[derive(Clone)]
pub(crate) enum Grant {
    /// The authorization code with PKCE; a person approves in a browser.
    AuthorizationCode,
    /// Client credentials with a client secret (HTTP Basic where the server asks for it,
    /// the request body otherwise).
    ClientSecret,
    /// Client credentials with an RFC 7523 assertion signed with a private key.
    #[cfg(feature = "oauth-jwt")]
    PrivateKeyJwt {
        key_pem: Arc<[u8]>,
        algorithm: rmcp::transport::auth::JwtSigningAlgorithm,
    },
    /// Enterprise-managed cross-app access.
    CrossAppAccess(Arc<CrossAppAccess>),
}

impl Grant {
    fn name(&self) -> &'static str {
        match self {
            Grant::AuthorizationCode => "authorization_code",
            Grant::ClientSecret => "client_credentials (client secret)",
            #[cfg(feature = "oauth-jwt")]
            Grant::PrivateKeyJwt { .. } => "client_credentials (private_key_jwt)",
            Grant::CrossAppAccess(_) => "cross-app access (ID-JAG)",
        }
    }
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("grant", &self.grant.name())
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
            .field("store", &self.store.as_ref().map(|_| "<custom>"))
            .finish()
    }
}

fn same_arc<T: ?Sized>(a: &Option<Arc<T>>, b: &Option<Arc<T>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        _ => false,
    }
}

impl PartialEq for OAuth {
    fn eq(&self, other: &Self) -> bool {
        let same_grant = match (&self.grant, &other.grant) {
            (Grant::AuthorizationCode, Grant::AuthorizationCode)
            | (Grant::ClientSecret, Grant::ClientSecret) => true,
            #[cfg(feature = "oauth-jwt")]
            (Grant::PrivateKeyJwt { key_pem: a, .. }, Grant::PrivateKeyJwt { key_pem: b, .. }) => {
                a == b
            }
            (Grant::CrossAppAccess(a), Grant::CrossAppAccess(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        same_grant
            && self.redirect_uri == other.redirect_uri
            && self.client_name == other.client_name
            && self.client_metadata_url == other.client_metadata_url
            && self.client_id == other.client_id
            && self.client_secret == other.client_secret
            && self.scopes == other.scopes
            && same_arc(&self.authorize, &other.authorize)
            && same_arc(&self.store, &other.store)
    }
}

impl Eq for OAuth {}

impl OAuth {
    fn with_grant(grant: Grant) -> Self {
        OAuth {
            grant,
            redirect_uri: String::new(),
            client_name: None,
            client_metadata_url: None,
            client_id: None,
            client_secret: None,
            scopes: Vec::new(),
            authorize: None,
            store: None,
        }
    }

    /// The authorization code grant with `redirect_uri` as the registered redirect (a
    /// loopback callback for a local program); give [`OAuth::authorize`] the interactive
    /// step.
    pub fn new(redirect_uri: impl Into<String>) -> Self {
        let mut oauth = OAuth::with_grant(Grant::AuthorizationCode);
        oauth.redirect_uri = redirect_uri.into();
        oauth
    }

    /// The client credentials grant: a program authorized as itself with a client
    /// registered beforehand and its secret, with no person in the loop. The secret goes in
    /// HTTP Basic when the authorization server lists only `client_secret_basic`, in the
    /// request body otherwise. The server's token endpoint must be HTTPS (or loopback).
    ///
    /// ```
    /// use actuator_mcp::{McpServer, OAuth};
    /// let server = McpServer::http("https://mcp.example.com/mcp")
    ///     .oauth(OAuth::client_credentials("reporting-bot", "s3cret").scopes(["read"]));
    /// # let _ = server;
    /// ```
    pub fn client_credentials(client_id: impl Into<String>, secret: impl Into<String>) -> Self {
        let mut oauth = OAuth::with_grant(Grant::ClientSecret);
        oauth.client_id = Some(client_id.into());
        oauth.client_secret = Some(secret.into());
        oauth
    }

    /// The client credentials grant authenticated by a JWT assertion (RFC 7523,
    /// `private_key_jwt`) signed with `key_pem` (a PKCS#8 PEM private key) using
    /// `algorithm`, for a client whose public key the authorization server holds
    /// (feature `oauth-jwt`).
    ///
    /// ```
    /// use actuator_mcp::{JwtSigningAlgorithm, McpServer, OAuth};
    /// # let pem = String::new();
    /// let server = McpServer::http("https://mcp.example.com/mcp").oauth(
    ///     OAuth::private_key_jwt("reporting-bot", pem, JwtSigningAlgorithm::ES256),
    /// );
    /// # let _ = server;
    /// ```
    #[cfg(feature = "oauth-jwt")]
    #[cfg_attr(docsrs, doc(cfg(feature = "oauth-jwt")))]
    pub fn private_key_jwt(
        client_id: impl Into<String>,
        key_pem: impl Into<Vec<u8>>,
        algorithm: rmcp::transport::auth::JwtSigningAlgorithm,
    ) -> Self {
        let mut oauth = OAuth::with_grant(Grant::PrivateKeyJwt {
            key_pem: key_pem.into().into(),
            algorithm,
        });
        oauth.client_id = Some(client_id.into());
        oauth
    }

    /// Enterprise-managed cross-app access (SEP-990): the user's ID token from their
    /// identity provider is exchanged there for an identity assertion grant (ID-JAG) bound
    /// to this server, and that grant at the server's authorization server (discovered as
    /// for any grant) for the access token. No browser is involved.
    pub fn cross_app_access(access: CrossAppAccess) -> Self {
        OAuth::with_grant(Grant::CrossAppAccess(Arc::new(access)))
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

    /// Where tokens are kept: in memory by default. A token found in the store is used
    /// before any flow runs (refreshed when it has expired and a refresh token is there);
    /// the token a flow obtains is saved to it.
    ///
    /// ```no_run
    /// use actuator_mcp::{FileCredentialStore, McpServer, OAuth};
    /// let store = FileCredentialStore::new("/home/me/.config/my-agent/mcp-example.json");
    /// let server = McpServer::http("https://mcp.example.com/mcp")
    ///     .oauth(OAuth::client_credentials("reporting-bot", "s3cret").credential_store(store));
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn credential_store(mut self, store: impl CredentialStore + 'static) -> Self {
        self.store = Some(Arc::new(store));
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

/// The two registrations and the user's identity behind [`OAuth::cross_app_access`]: the
/// identity provider (issuer, token endpoint, this client's ID there) and this client's ID
/// at the MCP server's authorization server, with a source of fresh ID tokens.
///
/// ```
/// use actuator_mcp::{CrossAppAccess, McpServer, OAuth};
/// let access = CrossAppAccess::new(
///     "https://idp.example.com",
///     "https://idp.example.com/oauth2/token",
///     "agent-at-idp",
///     "agent-at-mcp",
/// )
/// .client_secret("secret-at-mcp")
/// .id_token(|| async { Ok("eyJ…the user's ID token".to_owned()) });
/// let server = McpServer::http("https://mcp.example.com/mcp").oauth(OAuth::cross_app_access(access));
/// # let _ = server;
/// ```
#[derive(Clone)]
pub struct CrossAppAccess {
    pub(crate) idp_issuer: String,
    pub(crate) idp_token_endpoint: String,
    pub(crate) idp_client_id: String,
    pub(crate) idp_client_secret: Option<String>,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<String>,
    pub(crate) id_token: Option<Arc<IdTokenFn>>,
}

impl fmt::Debug for CrossAppAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CrossAppAccess")
            .field("idp_issuer", &self.idp_issuer)
            .field("idp_token_endpoint", &self.idp_token_endpoint)
            .field("idp_client_id", &self.idp_client_id)
            .field(
                "idp_client_secret",
                &self.idp_client_secret.as_ref().map(|_| "<set>"),
            )
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<set>"),
            )
            .field("id_token", &self.id_token.is_some())
            .finish()
    }
}

impl CrossAppAccess {
    /// The identity provider's issuer and token endpoint with this client's ID there, and
    /// this client's ID at the MCP server's authorization server. Both clients are public
    /// until given a secret.
    pub fn new(
        idp_issuer: impl Into<String>,
        idp_token_endpoint: impl Into<String>,
        idp_client_id: impl Into<String>,
        client_id: impl Into<String>,
    ) -> Self {
        CrossAppAccess {
            idp_issuer: idp_issuer.into(),
            idp_token_endpoint: idp_token_endpoint.into(),
            idp_client_id: idp_client_id.into(),
            idp_client_secret: None,
            client_id: client_id.into(),
            client_secret: None,
            id_token: None,
        }
    }

    /// This client's secret at the identity provider.
    #[must_use]
    pub fn idp_client_secret(mut self, secret: impl Into<String>) -> Self {
        self.idp_client_secret = Some(secret.into());
        self
    }

    /// This client's secret at the MCP server's authorization server.
    #[must_use]
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// Where the user's ID token comes from: called at each authorization, so it can hand
    /// out a fresh one (the exchange fails on an expired token).
    #[must_use]
    pub fn id_token<F, Fut>(mut self, id_token: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, HostError>> + Send + 'static,
    {
        self.id_token = Some(Arc::new(move || Box::pin(id_token())));
        self
    }
}
