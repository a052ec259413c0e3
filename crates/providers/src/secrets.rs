//! Keeping credentials with the server they were given for: the redirect policy every
//! provider's client uses, which headers count as credentials, and the redaction of their
//! values from error texts and logs.

use std::sync::Arc;

use reqwest::header::HeaderName;

use crate::error::ProviderError;

/// What a redacted secret is replaced with.
pub(crate) const REDACTED: &str = "[REDACTED]";

/// How many redirects on one origin are followed (reqwest's default).
const MAX_REDIRECTS: usize = 10;

/// A redirect to another origin, refused by [`same_origin_only`].
#[derive(Debug, thiserror::Error)]
#[error("a redirect from {from} to another origin ({to}) was not followed")]
pub(crate) struct CrossOriginRedirect {
    pub from: String,
    pub to: String,
}

/// The redirect policy of every provider client: a redirect is followed only when it stays on
/// the origin (scheme, host and port) of the URL first requested, at most ten times. reqwest's
/// default policy follows any redirect and strips only `authorization` (and cookies) when the
/// host changes, so an `x-api-key`, an `api-key` or a custom header would go along; refusing
/// is also clearer than stripping, which would turn into a puzzling 401 from the other server.
pub(crate) fn same_origin_only() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let Some(first) = attempt.previous().first() else {
            return attempt.follow();
        };
        if attempt.url().origin() != first.origin() {
            let error = CrossOriginRedirect {
                from: first.to_string(),
                to: attempt.url().to_string(),
            };
            return attempt.error(error);
        }
        if attempt.previous().len() > MAX_REDIRECTS {
            return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
        }
        attempt.follow()
    })
}

/// The refused redirect somewhere in `error`'s causes.
pub(crate) fn refused_redirect<'a>(
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

/// Whether a header carries a credential: `authorization`, `proxy-authorization`, `cookie`,
/// and any name with `key`, `token`, `secret`, `auth`, `password` or `session` in it
/// (`x-api-key`, `api-key`, `x-goog-api-key`, `x-auth-token` …).
pub(crate) fn is_secret_header(name: &HeaderName) -> bool {
    let name = name.as_str();
    name == "cookie"
        || ["key", "token", "secret", "auth", "password", "session"]
            .iter()
            .any(|word| name.contains(word))
}

/// `url` (one that may not parse) with whatever precedes an `@` in its authority replaced:
/// `http://user:password@host/x` is `http://***@host/x`.
pub(crate) fn without_user_info(url: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    match url[start..end].rfind('@') {
        Some(at) => format!("{}***{}", &url[..start], &url[start + at..]),
        None => url.to_owned(),
    }
}

/// The secret values of one transport, and what replaces them in texts.
#[derive(Clone, Default)]
pub(crate) struct Secrets(Arc<[(String, &'static str)]>);

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} redacted)", self.0.len())
    }
}

impl Secrets {
    /// The values of the secret headers (and the token of an `authorization` value), and the
    /// user information of `url` (`user:password@`), which reqwest sends as basic auth.
    pub(crate) fn new<'a>(
        headers: impl IntoIterator<Item = (&'a HeaderName, &'a str)>,
        url: &reqwest::Url,
    ) -> Self {
        let mut all: Vec<(String, &'static str)> = Vec::new();
        for (name, value) in headers {
            if !is_secret_header(name) {
                continue;
            }
            all.push((value.to_owned(), REDACTED));
            if let Some((_, token)) = value.split_once(' ') {
                all.push((token.trim().to_owned(), REDACTED));
            }
        }
        if !url.username().is_empty() || url.password().is_some() {
            let user = url.username();
            let info = match url.password() {
                Some(password) => {
                    all.push((password.to_owned(), REDACTED));
                    format!("{user}:{password}@")
                }
                None => {
                    all.push((user.to_owned(), REDACTED));
                    format!("{user}@")
                }
            };
            all.push((info, "***@"));
        }
        all.retain(|(s, _)| !s.is_empty());
        // Longest first, so a value is replaced whole before any part of it.
        all.sort_by_key(|(s, _)| (std::cmp::Reverse(s.len()), s.clone()));
        all.dedup_by(|a, b| a.0 == b.0);
        Secrets(all.into())
    }

    /// `text` with every secret replaced.
    pub(crate) fn scrub(&self, text: &mut String) {
        for (secret, with) in self.0.iter() {
            if text.contains(secret.as_str()) {
                *text = text.replace(secret.as_str(), with);
            }
        }
    }

    /// `error` with every secret replaced in its texts.
    pub(crate) fn scrub_error(&self, error: &mut ProviderError) {
        for text in error.texts_mut() {
            self.scrub(text);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn debug_of_a_transport_shows_header_names_and_no_secret() {
        let options = crate::ModelOptions::new();
        let headers = [
            ("x-api-key".to_owned(), "sk-in-debug-1".to_owned()),
            (
                "authorization".to_owned(),
                "Bearer sk-in-debug-2".to_owned(),
            ),
            ("x-custom-token".to_owned(), "tok-in-debug-3".to_owned()),
        ];
        let transport = crate::http::Transport::new(
            "Test".into(),
            "TEST_API_KEY".into(),
            "http://me:pw-in-debug-4@127.0.0.1:9/v1",
            &headers,
            &options,
        )
        .unwrap();
        let text = format!("{transport:?} {transport:#?}");
        for secret in [
            "sk-in-debug-1",
            "sk-in-debug-2",
            "tok-in-debug-3",
            "pw-in-debug-4",
        ] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert!(
            text.contains("x-custom-token") && text.contains("127.0.0.1:9"),
            "{text}"
        );
    }

    #[test]
    fn user_info_is_cut_from_urls_that_do_not_parse() {
        assert_eq!(
            without_user_info("http://u:p@[::1/v1"),
            "http://***@[::1/v1"
        );
        assert_eq!(without_user_info("u:p@h"), "***@h");
        assert_eq!(without_user_info("http://h/a@b"), "http://h/a@b");
    }

    #[test]
    fn secret_headers_are_recognised() {
        for name in [
            "authorization",
            "proxy-authorization",
            "x-api-key",
            "api-key",
            "x-goog-api-key",
            "x-auth-token",
            "cookie",
        ] {
            assert!(is_secret_header(&HeaderName::from_static(name)), "{name}");
        }
        for name in ["anthropic-version", "openai-organization", "user-agent"] {
            assert!(!is_secret_header(&HeaderName::from_static(name)), "{name}");
        }
    }

    #[test]
    fn values_tokens_and_url_passwords_are_scrubbed() {
        let auth = HeaderName::from_static("authorization");
        let url = reqwest::Url::parse("http://me:hunter2pass@127.0.0.1:9/v1").unwrap();
        let secrets = Secrets::new([(&auth, "Bearer sk-abc123")], &url);
        let mut text =
            "key sk-abc123, header Bearer sk-abc123, url http://me:hunter2pass@127.0.0.1:9/v1 \
             and hunter2pass"
                .to_owned();
        secrets.scrub(&mut text);
        assert_eq!(
            text,
            "key [REDACTED], header [REDACTED], url http://***@127.0.0.1:9/v1 and [REDACTED]"
        );
        assert_eq!(format!("{secrets:?}"), "Secrets(4 redacted)");
    }
}
