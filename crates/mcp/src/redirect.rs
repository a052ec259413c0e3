//! Credentials stay with the MCP server they were given for: the redirect policy of every
//! streamable-HTTP client. What counts as a credential and how it is redacted is
//! `actuator_model::credentials`, shared with the model providers.

use actuator_model::credentials::{CrossOriginRedirect, MAX_REDIRECTS, Secrets};

/// The redirect policy of the MCP client: follow a redirect only on the origin (scheme, host,
/// port) first requested. reqwest's default follows any redirect and strips only
/// `authorization` and cookies when the host changes, so a credential in a custom header
/// would reach the other origin.
///
/// The refusal's URLs are redacted of `secrets` (a hostile server may put the token it was
/// sent into the `Location`), as rmcp logs the error as it is.
pub(crate) fn same_origin_only(secrets: Secrets) -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(move |attempt| {
        let Some(first) = attempt.previous().first() else {
            return attempt.follow();
        };
        if attempt.url().origin() != first.origin() {
            let error = CrossOriginRedirect {
                from: secrets.scrubbed(first.as_str()),
                to: secrets.scrubbed(attempt.url().as_str()),
            };
            return attempt.error(error);
        }
        if attempt.previous().len() > MAX_REDIRECTS {
            return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
        }
        attempt.follow()
    })
}
