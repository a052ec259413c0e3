//! Keeping credentials with the server they were given for: the redirect policy every
//! provider's client uses, and the redaction of secrets from a [`ProviderError`]. What counts
//! as a credential and how it is redacted is `actuator_model::credentials`, shared with the MCP
//! client.

use actuator_model::credentials::{CrossOriginRedirect, MAX_REDIRECTS, Secrets};

use crate::error::ProviderError;

/// The redirect policy of every provider client: a redirect is followed only when it stays on
/// the origin (scheme, host and port) of the URL first requested, at most ten times. reqwest's
/// default policy follows any redirect and strips only `authorization` (and cookies) when the
/// host changes, so an `x-api-key`, an `api-key` or a custom header would go along; refusing
/// is also clearer than stripping, which would turn into a puzzling 401 from the other server.
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

/// `error` with every secret replaced in its texts.
pub(crate) fn scrub_error(secrets: &Secrets, error: &mut ProviderError) {
    for text in error.texts_mut() {
        secrets.scrub(text);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

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
            options.timeout,
            options.retry.clone().unwrap_or_default(),
            options.sse_event_limit(),
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
}
