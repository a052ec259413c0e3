//! What a failed attempt is: a status with what the provider said (read from its error body),
//! or another failure; the typed [`ProviderError`] each status is; and which failures ask the
//! endpoint for less.

use std::time::Duration;

use serde_json::Value;

use super::Transport;
use crate::error::{ProviderError, snippet};
use crate::secrets::scrub_error;

/// A failed HTTP status with what the provider said about it.
#[derive(Debug, Clone)]
pub(crate) struct StatusFailure {
    pub status: u16,
    pub retry_after: Option<Duration>,
    /// `error.message` (or the body when there is none).
    pub message: String,
    /// `error.code`, else `error.type`.
    pub code: Option<String>,
    /// `error.type`.
    pub kind: Option<String>,
}

/// Why one attempt failed.
#[derive(Debug)]
pub(crate) enum Failure {
    Status(StatusFailure),
    Other(ProviderError),
}

impl Transport {
    /// The typed error for a failed status.
    pub(crate) fn status_error(&self, url: &str, s: &StatusFailure) -> ProviderError {
        let mut error = self.status_error_unscrubbed(url, s);
        scrub_error(&self.secrets, &mut error);
        error
    }

    fn status_error_unscrubbed(&self, url: &str, s: &StatusFailure) -> ProviderError {
        let provider = self.provider.clone();
        let message = s.message.clone();
        match s.status {
            401 => ProviderError::Authentication {
                provider,
                status: s.status,
                message,
                var: self.key_var.clone(),
            },
            403 => ProviderError::PermissionDenied { provider, message },
            404 => ProviderError::NotFound {
                provider,
                url: url.to_owned(),
                message,
            },
            429 => ProviderError::RateLimited {
                provider,
                retryable: s.code.as_deref() != Some("insufficient_quota"),
                message,
                retry_after: s.retry_after,
            },
            503 | 529 => ProviderError::Overloaded {
                provider,
                status: s.status,
                message,
                retry_after: s.retry_after,
            },
            408 => ProviderError::Timeout {
                provider,
                after: self.timeout.unwrap_or_default(),
            },
            status if status >= 500 => ProviderError::Server {
                provider,
                status,
                message,
                retry_after: s.retry_after,
            },
            status => ProviderError::BadRequest {
                provider,
                status,
                message,
                code: s.code.clone(),
            },
        }
    }
}

/// Whether a failure tells the endpoint to send less: a rate limit that may be retried (429;
/// not `insufficient_quota`) or Anthropic's overloaded (529). Other 5xx (503 included) and
/// broken connections are retried without a cut, as the reference classifies them; unlike the
/// reference, which counts 529 as transient, a 529 cuts too: the server asks for less.
pub(super) fn is_back_off(error: &ProviderError) -> bool {
    match error {
        ProviderError::RateLimited { retryable, .. } => *retryable,
        ProviderError::Overloaded { status, .. } => *status == 529,
        _ => false,
    }
}

/// Reads an error body: `{"error": {"message", "type", "code"}}` (OpenAI, Anthropic and most
/// compatible servers), `{"error": "…"}`, `{"message": "…"}`, `{"detail": "…"}`, or plain text.
pub(crate) fn read_failure(
    status: u16,
    retry_after: Option<Duration>,
    body: &[u8],
) -> StatusFailure {
    let text = String::from_utf8_lossy(body);
    let json: Option<Value> = serde_json::from_slice(body).ok();
    let error = json.as_ref().and_then(|j| j.get("error"));
    let field = |v: Option<&Value>, key: &str| {
        v.and_then(|v| v.get(key)).and_then(|m| match m {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        })
    };
    let message = field(error, "message")
        .or_else(|| error.and_then(Value::as_str).map(str::to_owned))
        .or_else(|| field(json.as_ref(), "message"))
        .or_else(|| field(json.as_ref(), "detail"))
        .unwrap_or_else(|| {
            if text.trim().is_empty() {
                format!("(no body; HTTP {status})")
            } else {
                snippet(text.trim(), 2000)
            }
        });
    let kind = field(error, "type");
    StatusFailure {
        status,
        retry_after,
        message,
        code: field(error, "code").or_else(|| kind.clone()),
        kind,
    }
}
