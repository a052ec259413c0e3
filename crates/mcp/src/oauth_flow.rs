//! One authorization with an HTTP server, for the grant an [`OAuth`] names: after the
//! server's challenge, a token from the credential store when it still works, or else the
//! grant's flow, whose token is saved to the store.

use std::sync::Arc;

use actuator_tool_core::ErrorChain;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
};
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadata, AuthorizationRequest, ClientCredentialsConfig,
    CredentialStore, InMemoryCredentialStore, OAuthState, WWWAuthenticateParams,
    default_oauth_http_client,
};

use crate::oauth::{CrossAppAccess, Grant, OAuth};
use crate::oauth_store::{SharedStore, stored_bearer};

fn failed(what: &str, e: &dyn std::error::Error) -> String {
    format!("OAuth authorization failed: {what}: {}", ErrorChain(e))
}

/// Authorizes with the server at `url` after its `challenge` (the 401's
/// `WWW-Authenticate`), returning the authorized manager, or what failed. With
/// `reuse_stored`, a working token already in the store is used instead of a new flow.
pub(crate) async fn authorize(
    url: &str,
    oauth: &OAuth,
    challenge: Option<String>,
    reuse_stored: bool,
) -> Result<AuthorizationManager, String> {
    // rmcp builds its own reqwest client for OAuth (with its filter on discovered hosts).
    // With `https`, reqwest has TLS but no built-in crypto provider, so that build would
    // panic without a process-wide one: install ring's unless the program chose one.
    #[cfg(feature = "https")]
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| failed("the server's address is not usable", &e))?;
    if let Some(store) = &oauth.store {
        manager.set_credential_store(SharedStore(Arc::clone(store)));
        if reuse_stored && stored_token_works(&mut manager).await {
            return Ok(manager);
        }
    }
    match &oauth.grant {
        Grant::AuthorizationCode => authorization_code(manager, oauth, challenge).await,
        Grant::ClientSecret => {
            let config = ClientCredentialsConfig::ClientSecret {
                client_id: oauth.client_id.clone().unwrap_or_default(),
                client_secret: oauth.client_secret.clone().unwrap_or_default(),
                scopes: scopes(oauth, url, challenge.as_deref()),
                resource: Some(url.to_owned()),
            };
            client_credentials(manager, config).await
        }
        #[cfg(feature = "oauth-jwt")]
        Grant::PrivateKeyJwt { key_pem, algorithm } => {
            let config = ClientCredentialsConfig::PrivateKeyJwt {
                client_id: oauth.client_id.clone().unwrap_or_default(),
                signing_key: key_pem.to_vec(),
                signing_algorithm: *algorithm,
                token_endpoint_audience: None,
                scopes: scopes(oauth, url, challenge.as_deref()),
                resource: Some(url.to_owned()),
            };
            client_credentials(manager, config).await
        }
        Grant::CrossAppAccess(access) => {
            cross_app_access(manager, oauth, access, url, challenge).await
        }
    }
}

/// Whether the store holds a token issued by this server's authorization server that is
/// still valid or could be refreshed.
async fn stored_token_works(manager: &mut AuthorizationManager) -> bool {
    match manager.initialize_from_store().await {
        Ok(true) => manager.get_access_token().await.is_ok(),
        Ok(false) => false,
        Err(e) => {
            tracing::warn!(error = %ErrorChain(&e), "the OAuth credential store could not be read");
            false
        }
    }
}

/// The scopes to ask for: the configured ones, else the challenge's.
fn scopes(oauth: &OAuth, url: &str, challenge: Option<&str>) -> Vec<String> {
    if !oauth.scopes.is_empty() {
        return oauth.scopes.clone();
    }
    let (Some(challenge), Ok(base)) = (challenge, reqwest::Url::parse(url)) else {
        return Vec::new();
    };
    WWWAuthenticateParams::parse(challenge, &base)
        .scope
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

async fn authorization_code(
    manager: AuthorizationManager,
    oauth: &OAuth,
    challenge: Option<String>,
) -> Result<AuthorizationManager, String> {
    let Some(callback) = &oauth.authorize else {
        return Err(
            "the server requires OAuth authorization; give OAuth::authorize a callback \
                    that opens the authorization URL and returns the redirect"
                .to_owned(),
        );
    };
    let mut state = OAuthState::Unauthorized(manager);
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

/// The client credentials grant. rmcp's token request holds a form serializer that is
/// not `Send` across an await, which would make every connect future `!Send` (unusable
/// with `tokio::spawn`); so the grant runs on a blocking thread, on the caller's runtime.
async fn client_credentials(
    manager: AuthorizationManager,
    config: ClientCredentialsConfig,
) -> Result<AuthorizationManager, String> {
    let runtime = tokio::runtime::Handle::current();
    // Dropping this future (a connect timeout, a cancelled run) drops `_abandon`, which ends
    // the grant on its thread too: a token endpoint that never answers holds nothing.
    let (_abandon, abandoned) = tokio::sync::oneshot::channel::<()>();
    tokio::task::spawn_blocking(move || {
        runtime.block_on(async {
            tokio::select! {
                granted = client_credentials_grant(manager, config) => granted,
                _ = abandoned => Err("OAuth authorization was abandoned".to_owned()),
            }
        })
    })
    .await
    .map_err(|e| format!("OAuth authorization failed: the client credentials grant stopped: {e}"))?
}

async fn client_credentials_grant(
    manager: AuthorizationManager,
    config: ClientCredentialsConfig,
) -> Result<AuthorizationManager, String> {
    let mut state = OAuthState::Unauthorized(manager);
    state
        .authenticate_client_credentials(config)
        .await
        .map_err(|e| failed("the client credentials grant was refused", &e))?;
    state
        .into_authorization_manager()
        .ok_or_else(|| "OAuth authorization did not complete".to_owned())
}

/// How a confidential client authenticates at `metadata`'s token endpoint: HTTP Basic
/// unless the server lists only the request body.
fn client_authentication(
    secret: Option<&str>,
    metadata: Option<&AuthorizationMetadata>,
) -> EmaClientAuthentication {
    let Some(secret) = secret else {
        return EmaClientAuthentication::None;
    };
    let secret = oauth2::ClientSecret::new(secret.to_owned());
    let methods = metadata
        .and_then(|m| {
            m.additional_fields
                .get("token_endpoint_auth_methods_supported")
        })
        .and_then(|v| v.as_array());
    let only_post = methods.is_some_and(|methods| {
        methods.iter().any(|m| m == "client_secret_post")
            && !methods.iter().any(|m| m == "client_secret_basic")
    });
    if only_post {
        EmaClientAuthentication::ClientSecretPost(secret)
    } else {
        EmaClientAuthentication::ClientSecretBasic(secret)
    }
}

async fn cross_app_access(
    mut manager: AuthorizationManager,
    oauth: &OAuth,
    access: &CrossAppAccess,
    url: &str,
    challenge: Option<String>,
) -> Result<AuthorizationManager, String> {
    let Some(id_token) = &access.id_token else {
        return Err(
            "cross-app access needs the user's ID token; give CrossAppAccess::id_token a source"
                .to_owned(),
        );
    };
    let metadata = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(|e| {
            failed(
                "the server's authorization server could not be discovered",
                &e,
            )
        })?
        .metadata;
    let Some(issuer) = metadata.issuer.clone() else {
        return Err(
            "OAuth authorization failed: the server's authorization server \
                    metadata names no issuer, which cross-app access needs as the audience"
                .to_owned(),
        );
    };
    let idp = EmaAuthorizationServer::new(
        access.idp_issuer.clone(),
        access.idp_token_endpoint.clone(),
        access.idp_client_id.clone(),
    )
    .with_client_authentication(client_authentication(
        access.idp_client_secret.as_deref(),
        None,
    ));
    let resource_as = EmaAuthorizationServer::new(
        issuer,
        metadata.token_endpoint.clone(),
        access.client_id.clone(),
    )
    .with_client_authentication(client_authentication(
        access.client_secret.as_deref(),
        Some(&metadata),
    ));
    let id_token = id_token()
        .await
        .map_err(|e| failed("the ID token source failed", &e))?;
    let http = default_oauth_http_client()
        .map_err(|e| failed("no HTTP client for the token exchanges", &e))?;
    let token = EmaExchangeRequest::new_with_id_token(idp, resource_as, url, &id_token)
        .with_scopes(scopes(oauth, url, challenge.as_deref()))
        .exchange(&http, &http)
        .await
        .map_err(|e| failed("the cross-app access exchange was refused", &e))?;
    let stored = stored_bearer(&access.client_id, &token, metadata.issuer.clone())
        .map_err(|e| failed("the access token could not be kept", &e))?;
    // The token goes where the manager reads it: the caller's store (already the
    // manager's), or a fresh one in memory.
    let saved = match &oauth.store {
        Some(store) => store.save(stored).await,
        None => {
            let memory = InMemoryCredentialStore::new();
            let saved = memory.save(stored).await;
            manager.set_credential_store(memory);
            saved
        }
    };
    saved.map_err(|e| failed("the access token could not be kept", &e))?;
    manager.set_metadata(metadata);
    Ok(manager)
}
