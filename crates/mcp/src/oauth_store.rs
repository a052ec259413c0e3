//! Where OAuth tokens are kept: [`FileCredentialStore`] (one JSON file, readable by its
//! owner only, replaced atomically) and the adapter that lets rmcp's manager share a
//! caller's store.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::transport::auth::enterprise::EmaAccessToken;
use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, OAuthTokenResponse, StoredCredentials,
};

/// OAuth credentials kept in one JSON file, so a program authorizes once and later runs
/// reuse (and refresh) the token.
///
/// The file is created readable and writable by its owner only (mode 0600 on Unix) and
/// replaced atomically: a new file beside it, then a rename, so a crash never leaves half a
/// token. A file larger than [`FileCredentialStore::MAX_FILE_BYTES`], or one that is not the
/// credentials JSON, is an error, not an empty store. Use one file per server; two
/// processes sharing a file are not coordinated.
///
/// ```no_run
/// use actuator_mcp::{FileCredentialStore, McpServer, OAuth};
/// let server = McpServer::http("https://mcp.example.com/mcp").oauth(
///     OAuth::client_credentials("reporting-bot", "s3cret")
///         .credential_store(FileCredentialStore::new("mcp-example-token.json")),
/// );
/// # let _ = server;
/// ```
#[derive(Debug, Clone)]
pub struct FileCredentialStore {
    path: PathBuf,
}

impl FileCredentialStore {
    /// The largest credentials file read: a token response is a few KiB, so anything far
    /// larger is not ours and is refused rather than read into memory.
    pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

    /// A store in the file at `path` (created on the first save; its directory must exist).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileCredentialStore { path: path.into() }
    }

    /// The file the credentials are kept in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn error(&self, what: &str, e: impl std::fmt::Display) -> AuthError {
        AuthError::CredentialStoreError(format!(
            "OAuth credentials file {}: {what}: {e}",
            self.path.display()
        ))
    }
}

#[async_trait::async_trait]
impl CredentialStore for FileCredentialStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let file = match tokio::fs::File::open(&self.path).await {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.error("cannot be opened", e)),
        };
        let mut bytes = Vec::new();
        let mut limited = tokio::io::AsyncReadExt::take(file, Self::MAX_FILE_BYTES + 1);
        tokio::io::AsyncReadExt::read_to_end(&mut limited, &mut bytes)
            .await
            .map_err(|e| self.error("cannot be read", e))?;
        if bytes.len() as u64 > Self::MAX_FILE_BYTES {
            return Err(self.error(
                "is too large",
                format!("more than {} bytes", Self::MAX_FILE_BYTES),
            ));
        }
        // serde_json's error names a line and column, never the token text.
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| self.error("is not OAuth credentials", e))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let json =
            serde_json::to_vec(&credentials).map_err(|e| self.error("cannot be written", e))?;
        let path = self.path.clone();
        let written = tokio::task::spawn_blocking(move || write_private(&path, &json))
            .await
            .map_err(|e| self.error("cannot be written", e))?;
        written.map_err(|e| self.error("cannot be written", e))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match tokio::fs::remove_file(&self.path).await {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(self.error("cannot be removed", e)),
        }
    }
}

/// Writes `bytes` to a new owner-only file beside `path`, then renames it over `path`.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = path.file_name().map_or_else(
        || "credentials".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    let temporary = directory.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let result = (|| {
        let mut file = options.open(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

/// A caller's store shared with rmcp's manager, which takes its store by value.
pub(crate) struct SharedStore(pub(crate) Arc<dyn CredentialStore>);

#[async_trait::async_trait]
impl CredentialStore for SharedStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.0.load().await
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.0.save(credentials).await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.0.clear().await
    }

    async fn on_refresh_token_rejected(
        &self,
        credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        self.0.on_refresh_token_rejected(credentials).await
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        self.0.acquire_refresh_guard().await
    }
}

/// The credentials to keep for a bearer token obtained outside rmcp's manager (cross-app
/// access), in the form the manager reads.
pub(crate) fn stored_bearer(
    client_id: &str,
    token: &EmaAccessToken,
    issuer: Option<String>,
) -> Result<StoredCredentials, AuthError> {
    let mut scopes: Vec<String> = token.scopes.iter().cloned().collect();
    scopes.sort();
    let mut response = serde_json::json!({
        "access_token": token.access_token.secret(),
        "token_type": "bearer",
    });
    if let Some(expires_in) = token.expires_in {
        response["expires_in"] = expires_in.as_secs().into();
    }
    if !scopes.is_empty() {
        response["scope"] = scopes.join(" ").into();
    }
    let response: OAuthTokenResponse = serde_json::from_value(response)
        .map_err(|e| AuthError::InternalError(format!("token response: {e}")))?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Ok(
        StoredCredentials::new(client_id.to_owned(), Some(response), scopes, Some(now))
            .with_issuer(issuer),
    )
}
