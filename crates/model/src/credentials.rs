//! Keeping credentials with the server they were given for: which headers count as
//! credentials, the refusal of a redirect to another origin, and the redaction of secret values
//! from error texts, logs and `Debug` output.
//!
//! Shared by every HTTP client in the workspace (the model providers and the MCP client), each
//! of which builds its own `reqwest` redirect policy around [`CrossOriginRedirect`].
//!
//! ```
//! use actuator_model::credentials::{Secrets, without_user_info};
//!
//! let secrets = Secrets::new(
//!     [("x-api-key", "sk-123"), ("anthropic-version", "2023-06-01")],
//!     Some("tok-456"),
//!     "http://me:hunter2@127.0.0.1:9/v1",
//! );
//! let text = secrets.scrubbed("401: key sk-123, token tok-456, http://me:hunter2@127.0.0.1:9/v1");
//! assert_eq!(text, "401: key [REDACTED], token [REDACTED], http://***@127.0.0.1:9/v1");
//! assert_eq!(without_user_info("http://u:p@host/x"), "http://***@host/x");
//! ```

use std::sync::Arc;

/// What a redacted secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// How many redirects on one origin an HTTP client follows (reqwest's default).
pub const MAX_REDIRECTS: usize = 10;

/// A redirect to another origin, refused so that no credential follows it. An HTTP client's
/// redirect policy returns it as the redirect's error; [`refused_redirect`] finds it again
/// among an error's causes.
///
/// ```
/// use actuator_model::credentials::{CrossOriginRedirect, refused_redirect};
///
/// let refused = CrossOriginRedirect { from: "http://a/".into(), to: "http://b/".into() };
/// assert_eq!(refused_redirect(&refused).map(|r| r.to.as_str()), Some("http://b/"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a redirect from {from} to another origin ({to}) was not followed")]
pub struct CrossOriginRedirect {
    /// The URL first requested (redacted).
    pub from: String,
    /// Where the server redirected to (redacted).
    pub to: String,
}

/// The refused redirect somewhere in `error`'s chain of causes.
pub fn refused_redirect<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a CrossOriginRedirect> {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if let Some(found) = e.downcast_ref::<CrossOriginRedirect>() {
            return Some(found);
        }
        cause = e.source();
    }
    None
}

/// Whether a header carries a credential: `cookie`, and any name with `key`, `token`,
/// `secret`, `auth`, `password` or `session` in it (`authorization`, `x-api-key`, `api-key`,
/// `x-goog-api-key`, `x-auth-token` …), in any case.
///
/// ```
/// use actuator_model::credentials::is_secret_header;
/// assert!(is_secret_header("X-Api-Key") && is_secret_header("authorization"));
/// assert!(!is_secret_header("anthropic-version"));
/// ```
pub fn is_secret_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == "cookie"
        || ["key", "token", "secret", "auth", "password", "session"]
            .iter()
            .any(|word| name.contains(word))
}

/// Where the user information of `url` (`user:password` before an `@` in its authority)
/// starts and ends, if it has any. Works on text that does not parse as a URL.
fn user_info_range(url: &str) -> Option<(usize, usize)> {
    let start = url.find("://").map_or(0, |i| i + 3);
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    let at = url[start..end].rfind('@')?;
    Some((start, start + at))
}

/// `url` (one that may not parse) with its user information replaced by `***`:
/// `http://user:password@host/x` is `http://***@host/x`.
pub fn without_user_info(url: &str) -> String {
    match user_info_range(url) {
        Some((from, to)) => format!("{}***{}", &url[..from], &url[to..]),
        None => url.to_owned(),
    }
}

/// The secret values of one client (credential header values and the token of an
/// `authorization` value, a bearer token, the user information of its URL) and what replaces
/// each in texts. Its `Debug` shows only how many there are.
#[derive(Clone, Default)]
pub struct Secrets(Arc<[(String, &'static str)]>);

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} redacted)", self.0.len())
    }
}

impl Secrets {
    /// The secrets of a client that sends `headers` (only those [`is_secret_header`] names
    /// count), `bearer` as a bearer token, to `url`.
    pub fn new<'a>(
        headers: impl IntoIterator<Item = (&'a str, &'a str)>,
        bearer: Option<&str>,
        url: &str,
    ) -> Self {
        let mut all: Vec<(String, &'static str)> = Vec::new();
        all.extend(bearer.map(|token| (token.to_owned(), REDACTED)));
        for (name, value) in headers {
            if !is_secret_header(name) {
                continue;
            }
            all.push((value.to_owned(), REDACTED));
            if let Some((_, token)) = value.split_once(' ') {
                all.push((token.trim().to_owned(), REDACTED));
            }
        }
        if let Some((from, to)) = user_info_range(url) {
            let info = &url[from..to];
            all.push((format!("{info}@"), "***@"));
            // The password alone wherever it appears; a user name only when it is all there
            // is (then it is the credential), not to redact a common word everywhere.
            let secret = info.split_once(':').map_or(info, |(_, password)| password);
            all.push((secret.to_owned(), REDACTED));
        }
        all.retain(|(s, _)| !s.is_empty());
        // Longest first, so a value is replaced whole before any part of it.
        all.sort_by_key(|(s, _)| (std::cmp::Reverse(s.len()), s.clone()));
        all.dedup_by(|a, b| a.0 == b.0);
        Secrets(all.into())
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `text` holds any of the secrets.
    pub fn found_in(&self, text: &str) -> bool {
        self.0
            .iter()
            .any(|(secret, _)| text.contains(secret.as_str()))
    }

    /// Replaces every secret in `text`.
    pub fn scrub(&self, text: &mut String) {
        for (secret, with) in self.0.iter() {
            if text.contains(secret.as_str()) {
                *text = text.replace(secret.as_str(), with);
            }
        }
    }

    /// `text` with every secret replaced.
    pub fn scrubbed(&self, text: &str) -> String {
        let mut text = text.to_owned();
        self.scrub(&mut text);
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_tokens_and_user_info_are_scrubbed_longest_first() {
        let secrets = Secrets::new(
            [
                ("Authorization", "Bearer sk-abc123"),
                ("X-Trace", "visible"),
            ],
            Some("tok-secret-3"),
            "http://me:hunter2pass@127.0.0.1:9/v1",
        );
        assert_eq!(
            secrets.scrubbed(
                "key sk-abc123, header Bearer sk-abc123, url \
                 http://me:hunter2pass@127.0.0.1:9/v1, hunter2pass, tok-secret-3, visible"
            ),
            "key [REDACTED], header [REDACTED], url http://***@127.0.0.1:9/v1, [REDACTED], \
             [REDACTED], visible"
        );
        assert_eq!(format!("{secrets:?}"), "Secrets(5 redacted)");
        assert!(Secrets::new([], None, "http://h/").is_empty());
    }

    #[test]
    fn user_info_is_cut_from_urls_that_do_not_parse() {
        assert_eq!(
            without_user_info("http://u:p@[::1/v1"),
            "http://***@[::1/v1"
        );
        assert_eq!(without_user_info("u:p@h"), "***@h");
        assert_eq!(without_user_info("http://h/a@b"), "http://h/a@b");
        assert_eq!(without_user_info("http://http@h/"), "http://***@h/");
    }

    #[test]
    fn secret_headers_are_recognised_in_any_case() {
        for name in [
            "authorization",
            "Proxy-Authorization",
            "x-api-key",
            "api-key",
            "x-goog-api-key",
            "X-Auth-Token",
            "cookie",
        ] {
            assert!(is_secret_header(name), "{name}");
        }
        for name in ["anthropic-version", "openai-organization", "user-agent"] {
            assert!(!is_secret_header(name), "{name}");
        }
    }
}
