//! Credentials stay with the MCP server they were given for: the redirect policy of every
//! streamable-HTTP client, and the redaction of the bearer token, credential headers and URL
//! user info from error texts.

/// How many redirects on one origin are followed (reqwest's default).
const MAX_REDIRECTS: usize = 10;

/// A redirect to another origin, refused by [`same_origin_only`].
#[derive(Debug, thiserror::Error)]
#[error("a redirect from {from} to another origin ({to}) was not followed")]
pub(crate) struct CrossOriginRedirect {
    pub from: String,
    pub to: String,
}

/// The redirect policy of the MCP client: follow a redirect only on the origin (scheme, host,
/// port) first requested. reqwest's default follows any redirect and strips only
/// `authorization` and cookies when the host changes, so a credential in a custom header
/// would reach the other origin.
///
/// The refusal's URLs are redacted of `secrets` (a hostile server may put the token it was
/// sent into the `Location`), as rmcp logs the error as it is.
pub(crate) fn same_origin_only(secrets: Vec<String>) -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(move |attempt| {
        let Some(first) = attempt.previous().first() else {
            return attempt.follow();
        };
        if attempt.url().origin() != first.origin() {
            let error = CrossOriginRedirect {
                from: scrub(&secrets, first.as_str()),
                to: scrub(&secrets, attempt.url().as_str()),
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

/// Whether a header carries a credential (`authorization`, `cookie`, and any name with
/// `key`, `token`, `secret`, `auth`, `password` or `session` in it).
pub(crate) fn is_secret_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == "cookie"
        || ["key", "token", "secret", "auth", "password", "session"]
            .iter()
            .any(|word| name.contains(word))
}

/// The secrets of one server's settings: the bearer token, the values of credential headers,
/// and the user information of its URL. Longest first.
pub(crate) fn secrets(
    url: &str,
    headers: &[(String, String)],
    bearer: Option<&str>,
) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    all.extend(bearer.map(str::to_owned));
    for (name, value) in headers {
        if is_secret_header(name) {
            all.push(value.clone());
            if let Some((_, token)) = value.split_once(' ') {
                all.push(token.trim().to_owned());
            }
        }
    }
    if let Some(info) = user_info(url) {
        all.extend(info.split(':').map(str::to_owned));
        all.push(info.to_owned());
    }
    all.retain(|s| !s.is_empty());
    all.sort_by_key(|s| (std::cmp::Reverse(s.len()), s.clone()));
    all.dedup();
    all
}

/// Where the user information of `url` (`user:password` before an `@` in its authority)
/// starts and ends, if it has any.
fn user_info_range(url: &str) -> Option<(usize, usize)> {
    let start = url.find("://").map_or(0, |i| i + 3);
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    let at = url[start..end].rfind('@')?;
    Some((start, start + at))
}

/// The user information of `url`, if any.
fn user_info(url: &str) -> Option<&str> {
    user_info_range(url).map(|(from, to)| &url[from..to])
}

/// `url` with its user information replaced by `***`, for messages and `Debug`.
pub(crate) fn shown_url(url: &str) -> String {
    match user_info_range(url) {
        Some((from, to)) if from < to => format!("{}***{}", &url[..from], &url[to..]),
        _ => url.to_owned(),
    }
}

/// `text` with every one of `secrets` replaced by `[REDACTED]`.
pub(crate) fn scrub(secrets: &[String], text: &str) -> String {
    let mut text = text.to_owned();
    for secret in secrets {
        if text.contains(secret.as_str()) {
            text = text.replace(secret.as_str(), "[REDACTED]");
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_headers_and_user_info_are_redacted() {
        let headers = [
            ("X-Api-Key".to_owned(), "hdr-secret-1".to_owned()),
            ("X-Trace".to_owned(), "visible".to_owned()),
        ];
        let url = "http://me:pw-secret-2@127.0.0.1:9/mcp";
        let secrets = secrets(url, &headers, Some("tok-secret-3"));
        let text = scrub(
            &secrets,
            &format!("{url} sent hdr-secret-1, tok-secret-3 and visible"),
        );
        assert_eq!(
            text,
            "http://[REDACTED]@127.0.0.1:9/mcp sent [REDACTED], [REDACTED] and visible"
        );
        assert_eq!(shown_url(url), "http://***@127.0.0.1:9/mcp");
        assert_eq!(shown_url("http://h/a@b"), "http://h/a@b");
        assert_eq!(shown_url("http://http@h/"), "http://***@h/");
    }
}
