//! Tokens kept across connections: `FileCredentialStore` on disk (owner-only, atomic,
//! bounded), a stored token reused instead of a new grant, and a stored token the server
//! no longer accepts replaced by a new grant. The server is a stub on loopback with OAuth
//! metadata, a client-credentials token endpoint that counts its grants, and an MCP
//! endpoint that answers only the current token.

#![cfg(feature = "oauth")]
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use actuator_mcp::{
    CredentialStore, FileCredentialStore, McpClient, McpServer, OAuth, StoredCredentials,
};
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

#[derive(Clone)]
struct Stub {
    base: String,
    /// Grants issued so far; the token of grant N is `token-N`.
    grants: Arc<AtomicU32>,
    /// The token the MCP endpoint accepts: `token-<accepted>`.
    accepted: Arc<AtomicU32>,
    /// Another token endpoint the metadata names instead of `/token`, when set.
    token_endpoint: Arc<Mutex<Option<String>>>,
}

async fn protected_resource(State(stub): State<Stub>) -> Json<Value> {
    Json(json!({
        "resource": format!("{}/mcp", stub.base),
        "authorization_servers": [stub.base],
    }))
}

async fn authorization_server(State(stub): State<Stub>) -> Json<Value> {
    Json(json!({
        "issuer": stub.base,
        "authorization_endpoint": format!("{}/authorize", stub.base),
        "token_endpoint": stub
            .token_endpoint
            .lock()
            .unwrap()
            .clone()
            .unwrap_or_else(|| format!("{}/token", stub.base)),
        "response_types_supported": ["code"],
        "grant_types_supported": ["client_credentials"],
        "token_endpoint_auth_methods_supported": ["client_secret_post"],
    }))
}

async fn token(State(stub): State<Stub>, body: String) -> Response {
    let form: Vec<(String, String)> = serde_urlencoded_pairs(&body);
    let has = |k: &str, v: &str| form.iter().any(|(a, b)| a == k && b == v);
    if !has("grant_type", "client_credentials")
        || !has("client_id", "bot")
        || !has("client_secret", "bot-secret")
    {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": "invalid_client"})),
        )
            .into_response();
    }
    let n = stub.grants.fetch_add(1, Ordering::SeqCst) + 1;
    Json(json!({"access_token": format!("token-{n}"), "token_type": "Bearer", "expires_in": 3600}))
        .into_response()
}

/// `a=b&c=d` into pairs (the token request's form body; values here need no decoding
/// beyond `+` and `%XX`, which none of ours carry).
fn serde_urlencoded_pairs(body: &str) -> Vec<(String, String)> {
    body.split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

async fn mcp(State(stub): State<Stub>, headers: HeaderMap, Json(message): Json<Value>) -> Response {
    let expected = format!("Bearer token-{}", stub.accepted.load(Ordering::SeqCst));
    let authorized = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == expected);
    if !authorized {
        let challenge = format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
            stub.base
        );
        return (
            StatusCode::UNAUTHORIZED,
            [("www-authenticate", challenge)],
            "",
        )
            .into_response();
    }
    let Some(id) = message.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let result = match message["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "stub", "version": "1.0.0"},
        }),
        Some("tools/list") => json!({"tools": []}),
        _ => json!({}),
    };
    Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}

async fn start() -> (Stub, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let stub = Stub {
        base,
        grants: Arc::new(AtomicU32::new(0)),
        accepted: Arc::new(AtomicU32::new(1)),
        token_endpoint: Arc::default(),
    };
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(protected_resource),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(authorization_server),
        )
        .route("/token", post(token))
        .route("/mcp", post(mcp))
        .with_state(stub.clone());
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (stub, task)
}

async fn connect(stub: &Stub, store: &FileCredentialStore) -> Result<(), String> {
    let client = McpClient::new(
        McpServer::http(format!("{}/mcp", stub.base))
            .oauth(OAuth::client_credentials("bot", "bot-secret").credential_store(store.clone())),
    );
    let result = client.connect().await.map_err(|e| e.to_string());
    client.close().await;
    result.map(|_| ())
}

#[tokio::test]
async fn a_stored_token_is_reused_and_a_refused_one_replaced_by_a_new_grant() {
    let (stub, task) = start().await;
    let dir = tempfile::tempdir().unwrap();
    let store = FileCredentialStore::new(dir.path().join("token.json"));

    connect(&stub, &store).await.unwrap();
    assert_eq!(stub.grants.load(Ordering::SeqCst), 1);
    let saved = std::fs::read_to_string(store.path()).unwrap();
    assert!(saved.contains("token-1"), "{saved}");
    assert!(
        !saved.contains("bot-secret"),
        "the client secret is not stored"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "owner-only, was {mode:o}");
    }

    // A second connection (a later run) uses the stored token: no new grant.
    connect(&stub, &store).await.unwrap();
    assert_eq!(stub.grants.load(Ordering::SeqCst), 1);

    // The server stops accepting it (revoked): one new grant, and the store has it.
    stub.accepted.store(2, Ordering::SeqCst);
    connect(&stub, &store).await.unwrap();
    assert_eq!(stub.grants.load(Ordering::SeqCst), 2);
    let saved = std::fs::read_to_string(store.path()).unwrap();
    assert!(saved.contains("token-2"), "{saved}");

    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["token.json"]);
    task.abort();
}

/// A token endpoint that never answers: the connect times out, and the grant's request
/// (run on a blocking thread) is given up with it rather than left hanging.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_endpoint_that_never_answers_is_given_up_with_the_connect() {
    let (stub, task) = start().await;
    // A token endpoint that reads the request and never answers; it sees the client close.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    *stub.token_endpoint.lock().unwrap() =
        Some(format!("http://{}/token", silent.local_addr().unwrap()));
    let closed = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&closed);
    let silent = tokio::spawn(async move {
        let (mut conn, _) = silent.accept().await.unwrap();
        let mut buf = [0u8; 4096];
        while conn.read(&mut buf).await.is_ok_and(|n| n > 0) {}
        seen.store(true, Ordering::SeqCst);
    });
    let client = McpClient::new(
        McpServer::http(format!("{}/mcp", stub.base))
            .oauth(OAuth::client_credentials("bot", "bot-secret"))
            .connect_timeout(std::time::Duration::from_millis(500)),
    );
    let err = client.connect().await.unwrap_err().to_string();
    assert!(
        err.contains("did not connect within") || err.contains("0.5"),
        "{err}"
    );
    let given_up = async {
        while !closed.load(Ordering::SeqCst) {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), given_up)
        .await
        .expect("the token request was dropped after the connect gave up");
    silent.abort();
    task.abort();
}

#[tokio::test]
async fn a_missing_file_is_an_empty_store_and_clear_removes_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileCredentialStore::new(dir.path().join("absent.json"));
    assert!(store.load().await.unwrap().is_none());
    store
        .save(StoredCredentials::new("bot".into(), None, vec![], None))
        .await
        .unwrap();
    assert_eq!(store.load().await.unwrap().unwrap().client_id, "bot");
    store.clear().await.unwrap();
    assert!(!store.path().exists());
    store.clear().await.unwrap();
}

#[tokio::test]
async fn a_file_that_is_too_large_or_not_credentials_is_an_error_that_shows_no_content() {
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.json");
    std::fs::write(
        &huge,
        vec![b' '; (FileCredentialStore::MAX_FILE_BYTES + 1) as usize],
    )
    .unwrap();
    let err = FileCredentialStore::new(&huge).load().await.unwrap_err();
    assert!(err.to_string().contains("too large"), "{err}");

    let garbage = dir.path().join("garbage.json");
    std::fs::write(&garbage, "{\"access_token\": \"leaked-if-shown\"").unwrap();
    let err = FileCredentialStore::new(&garbage)
        .load()
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("is not OAuth credentials"), "{err}");
    assert!(!err.contains("leaked-if-shown"), "{err}");
}

#[test]
fn debug_output_never_shows_a_secret() {
    let oauth = OAuth::client_credentials("bot", "bot-secret");
    let shown = format!("{oauth:?}");
    assert!(!shown.contains("bot-secret"), "{shown}");
    let access = actuator_mcp::CrossAppAccess::new("https://idp", "https://idp/token", "a", "b")
        .client_secret("b-secret")
        .idp_client_secret("a-secret");
    let shown = format!("{access:?}");
    assert!(
        !shown.contains("b-secret") && !shown.contains("a-secret"),
        "{shown}"
    );
}

/// rmcp's JWT client-credentials request is not `Send` across an await; connecting must
/// still be, so a client can connect from a spawned task.
#[cfg(feature = "oauth-jwt")]
#[test]
fn connecting_with_a_signed_jwt_grant_is_a_send_future() {
    fn send<T: Send>(_: &T) {}
    let client = McpClient::new(McpServer::http("http://127.0.0.1:1/mcp").oauth(
        OAuth::private_key_jwt("bot", "not a key", actuator_mcp::JwtSigningAlgorithm::ES256),
    ));
    let connecting = client.connect();
    send(&connecting);
}
