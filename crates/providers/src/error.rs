//! [`ProviderError`]: everything that can go wrong between Actuator and a model provider, in
//! words that say what was wrong and what to do about it.

use std::time::Duration;

use actuator_model::{ErrorCause, ModelError};

/// A provider could not be set up, or a request to it failed.
///
/// Every variant names the provider it is about; the messages say what to do. Inside an agent
/// run the error arrives as a [`ModelError::Api`], from which
/// [`ModelError::downcast_ref`] gives it back:
///
/// ```
/// use actuator_model::{ErrorCause, ModelError};
/// use actuator_providers::ProviderError;
///
/// let err = ProviderError::MissingApiKey { provider: "OpenAI".into(), var: "OPENAI_API_KEY".into() };
/// assert_eq!(
///     err.to_string(),
///     "No API key for OpenAI: set the environment variable OPENAI_API_KEY, or give one in code with ModelOptions::api_key."
/// );
/// let model_error = ModelError::from(err);
/// assert!(!model_error.is_retryable());
/// assert!(matches!(
///     model_error.downcast_ref::<ProviderError>(),
///     Some(ProviderError::MissingApiKey { var, .. }) if var == "OPENAI_API_KEY"
/// ));
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// The model name's provider prefix is neither built in nor registered.
    #[error(
        "Unknown model provider `{provider}` in `{model}`. Use one of: {}. A crate can add a provider with actuator_providers::register_provider.",
        .known.join(", ")
    )]
    UnknownProvider {
        /// The prefix given.
        provider: String,
        /// The whole model name.
        model: String,
        /// The form of each known provider's names (`openai/<model>`,
        /// `openai-api/<service>/<model>` …), sorted by prefix.
        known: Vec<String>,
    },
    /// A provider prefix was registered twice ([`register_provider`](crate::register_provider)).
    #[error(
        "The model provider prefix `{provider}` is already registered (a built-in provider's, or registered before); each prefix is registered once, so choose another."
    )]
    DuplicateProvider {
        /// The prefix.
        provider: String,
    },
    /// A registered provider's factory failed with an error of its own, kept as the source.
    #[error("The `{provider}` provider could not make the model `{model}`")]
    Factory {
        /// The prefix.
        provider: String,
        /// The whole model name.
        model: String,
        /// The factory's error.
        #[source]
        source: ErrorCause,
    },
    /// The model name is not of the form `provider/model`.
    #[error("Invalid model name `{model}`: {reason}")]
    InvalidModelName {
        /// The name given.
        model: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No API key was found.
    #[error(
        "No API key for {provider}: set the environment variable {var}, or give one in code with ModelOptions::api_key."
    )]
    MissingApiKey {
        /// The provider.
        provider: String,
        /// The environment variable read.
        var: String,
    },
    /// No base URL was found for a service that has no default.
    #[error(
        "No base URL for {provider}: set the environment variable {var}, or give one in code with ModelOptions::base_url."
    )]
    MissingBaseUrl {
        /// The provider.
        provider: String,
        /// The environment variable read.
        var: String,
    },
    /// The configuration given is unusable (a base URL, a header, a retry policy, a provider
    /// prefix).
    #[error("Invalid configuration for {provider}: {message}")]
    InvalidConfig {
        /// The provider.
        provider: String,
        /// What is wrong.
        message: String,
    },
    /// The provider refused the API key (HTTP 401).
    #[error(
        "{provider} rejected the API key (HTTP {status}): {message}. Check the key in {var}, or the one given with ModelOptions::api_key."
    )]
    Authentication {
        /// The provider.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
        /// The environment variable the key is read from.
        var: String,
    },
    /// The key is valid but may not do this (HTTP 403).
    #[error("{provider} denied permission (HTTP 403): {message}")]
    PermissionDenied {
        /// The provider.
        provider: String,
        /// The provider's message.
        message: String,
    },
    /// The model or the endpoint does not exist (HTTP 404).
    #[error(
        "{provider} has no such model or endpoint (HTTP 404 from {url}): {message}. Check the model name and the base URL."
    )]
    NotFound {
        /// The provider.
        provider: String,
        /// The URL requested.
        url: String,
        /// The provider's message.
        message: String,
    },
    /// Too many requests (HTTP 429).
    #[error("{provider} rate limit reached (HTTP 429): {message}")]
    RateLimited {
        /// The provider.
        provider: String,
        /// The provider's message.
        message: String,
        /// How long the provider asked to wait (`Retry-After`).
        retry_after: Option<Duration>,
        /// False when retrying cannot help (an exhausted quota).
        retryable: bool,
    },
    /// The provider is overloaded (HTTP 529, or 503).
    #[error("{provider} is overloaded (HTTP {status}): {message}")]
    Overloaded {
        /// The provider.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
        /// How long the provider asked to wait (`Retry-After`).
        retry_after: Option<Duration>,
    },
    /// The provider rejected the request (HTTP 400, 413, 422 …).
    #[error("{provider} rejected the request (HTTP {status}): {message}")]
    BadRequest {
        /// The provider.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
        /// The provider's error code or type, when it gave one.
        code: Option<String>,
    },
    /// The provider failed (HTTP 5xx).
    #[error("{provider} failed (HTTP {status}): {message}")]
    Server {
        /// The provider.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
        /// How long the provider asked to wait (`Retry-After`).
        retry_after: Option<Duration>,
    },
    /// The provider did not answer in time.
    #[error(
        "{provider} did not answer within {} seconds (ModelOptions::timeout).",
        .after.as_secs_f64()
    )]
    Timeout {
        /// The provider.
        provider: String,
        /// The timeout.
        after: Duration,
    },
    /// The connection failed or broke off (refused, reset, closed mid-response).
    #[error(
        "The connection to {provider} at {url} failed: {message}. Is the server running, and is the base URL right?"
    )]
    Connection {
        /// The provider.
        provider: String,
        /// The URL requested.
        url: String,
        /// What failed (the request, the body, the event stream).
        message: String,
        /// The transport's error behind it (without its URL, which may hold credentials),
        /// when there was one.
        #[source]
        source: Option<ErrorCause>,
    },
    /// The provider answered with a body that is not what its API describes.
    #[error("{provider} sent a response that cannot be read: {message}")]
    MalformedResponse {
        /// The provider.
        provider: String,
        /// What is wrong with it, with the start of the body.
        message: String,
    },
    /// The server answered with a redirect to another origin (scheme, host or port), which is
    /// not followed: the request carries the API key and other credential headers, and the
    /// conversation, none of which may reach a server they were not configured for.
    #[error(
        "{provider} at {from} redirected the request to another origin ({to}), which is not followed so that the API key and headers stay with the server they were given for. If {to} is the right server, configure it as the base URL (ModelOptions::base_url or the base-URL environment variable)."
    )]
    RedirectRefused {
        /// The provider.
        provider: String,
        /// The URL requested.
        from: String,
        /// Where the server redirected to.
        to: String,
    },
    /// One server-sent event of a streamed answer was larger than the limit.
    #[error(
        "{provider} sent a stream event larger than {limit} bytes; raise the limit with ModelOptions::max_sse_event_bytes if the server's events are legitimately this large."
    )]
    EventTooLarge {
        /// The provider.
        provider: String,
        /// The limit, in bytes.
        limit: usize,
    },
    /// A non-streamed answer was larger than the limit (the same limit as one stream event).
    #[error(
        "{provider} sent an answer larger than {limit} bytes; raise the limit with ModelOptions::max_sse_event_bytes if the server's answers are legitimately this large."
    )]
    ResponseTooLarge {
        /// The provider.
        provider: String,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The conversation breaks one of the provider's rules; nothing was sent.
    #[error("The conversation cannot be sent to {provider}: {message}")]
    InvalidConversation {
        /// The provider.
        provider: String,
        /// The rule broken, and where.
        message: String,
    },
}

impl ProviderError {
    /// Whether trying again may succeed: rate limits (but not an exhausted quota), overloaded
    /// and failing servers, timeouts and broken connections.
    pub fn is_retryable(&self) -> bool {
        match self {
            ProviderError::RateLimited { retryable, .. } => *retryable,
            ProviderError::Overloaded { .. }
            | ProviderError::Server { .. }
            | ProviderError::Timeout { .. }
            | ProviderError::Connection { .. } => true,
            _ => false,
        }
    }

    /// How long the provider asked to wait before trying again, when it said.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ProviderError::RateLimited { retry_after, .. }
            | ProviderError::Overloaded { retry_after, .. }
            | ProviderError::Server { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

impl ProviderError {
    /// Every text in the error that came from a server or a URL, to redact secrets from.
    pub(crate) fn texts_mut(&mut self) -> Vec<&mut String> {
        use ProviderError as E;
        match self {
            E::UnknownProvider { model, .. }
            | E::InvalidModelName { model, .. }
            | E::Factory { model, .. } => vec![model],
            E::MissingApiKey { .. } | E::MissingBaseUrl { .. } | E::Timeout { .. } => vec![],
            E::DuplicateProvider { .. } => vec![],
            E::EventTooLarge { .. } | E::ResponseTooLarge { .. } => vec![],
            E::InvalidConfig { message, .. }
            | E::PermissionDenied { message, .. }
            | E::Overloaded { message, .. }
            | E::Server { message, .. }
            | E::RateLimited { message, .. }
            | E::MalformedResponse { message, .. }
            | E::InvalidConversation { message, .. }
            | E::Authentication { message, .. } => vec![message],
            E::BadRequest { message, code, .. } => {
                let mut texts = vec![message];
                texts.extend(code.as_mut());
                texts
            }
            E::NotFound { url, message, .. } | E::Connection { url, message, .. } => {
                vec![url, message]
            }
            E::RedirectRefused { from, to, .. } => vec![from, to],
        }
    }
}

impl From<ProviderError> for ModelError {
    fn from(err: ProviderError) -> Self {
        if err.is_retryable() {
            ModelError::api_retryable(err)
        } else {
            ModelError::api(err)
        }
    }
}

/// The first `max` bytes of a body, for error messages.
pub(crate) fn snippet(body: &str, max: usize) -> String {
    if body.len() <= max {
        return body.to_owned();
    }
    let mut end = max;
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &body[..end], body.len())
}
