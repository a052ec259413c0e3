//! [`ModelError`]: why a generation failed, and the shared causes it keeps.

use std::sync::Arc;

/// A generation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A scripted model was asked for more outputs than it was given.
    #[error(
        "The scripted model has no output left: generation {call} was requested but only {scripted} output(s) were scripted. Add more outputs to the script."
    )]
    ScriptExhausted {
        /// Which generation (1-based) was requested.
        call: usize,
        /// How many outputs were scripted.
        scripted: usize,
    },
    /// The provider returned an error.
    #[error("The model provider returned an error: {message}")]
    Provider {
        /// The provider's message.
        message: String,
        /// Whether retrying may succeed.
        retryable: bool,
    },
    /// The generation took longer than the configured `GenerateConfig::timeout`.
    #[error(
        "The generation did not finish within its timeout of {} seconds (GenerateConfig::timeout).",
        .after.as_secs_f64()
    )]
    Timeout {
        /// The timeout.
        after: std::time::Duration,
    },
    /// A provider's request failed with a typed error (for example
    /// `actuator_providers::ProviderError`): its message is this error's message, and
    /// [`ModelError::downcast_ref`] gives back the typed error.
    #[error(transparent)]
    Api(ApiError),
    /// Any other failure: what failed, and the error that caused it (its
    /// [`source`](std::error::Error::source), not part of the message).
    #[error("{message}")]
    Other {
        /// What failed.
        message: String,
        /// The error that caused it.
        #[source]
        source: Option<ErrorCause>,
    },
}

impl ModelError {
    /// Wraps a provider's typed error that trying again will not cure (a refused key, an
    /// invalid request). [`ModelError::api_retryable`] is the one that may.
    ///
    /// ```
    /// use actuator_model::ModelError;
    /// #[derive(Debug, thiserror::Error)]
    /// #[error("invalid API key")]
    /// struct Unauthorized;
    /// let err = ModelError::api(Unauthorized);
    /// assert_eq!(err.to_string(), "invalid API key");
    /// assert!(!err.is_retryable());
    /// assert!(err.downcast_ref::<Unauthorized>().is_some());
    /// ```
    pub fn api(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        ModelError::Api(ApiError {
            error: Arc::new(error),
            retryable: false,
        })
    }

    /// Wraps a provider's typed error that trying again may cure (a rate limit, an overloaded
    /// server, a dropped connection): retry policies retry it.
    ///
    /// ```
    /// use actuator_model::ModelError;
    /// #[derive(Debug, thiserror::Error)]
    /// #[error("rate limited")]
    /// struct RateLimited;
    /// let err = ModelError::api_retryable(RateLimited);
    /// assert!(err.is_retryable());
    /// assert!(err.downcast_ref::<RateLimited>().is_some());
    /// ```
    pub fn api_retryable(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        ModelError::Api(ApiError {
            error: Arc::new(error),
            retryable: true,
        })
    }

    /// Any other failure, with no cause behind it.
    ///
    /// ```
    /// use actuator_model::ModelError;
    /// let err = ModelError::other("the tokenizer is missing");
    /// assert_eq!(err.to_string(), "the tokenizer is missing");
    /// assert!(std::error::Error::source(&err).is_none());
    /// ```
    pub fn other(message: impl Into<String>) -> Self {
        ModelError::Other {
            message: message.into(),
            source: None,
        }
    }

    /// Any other failure, caused by `cause`: the cause stays reachable as the error's
    /// [`source`](std::error::Error::source) rather than being flattened into its message.
    ///
    /// ```
    /// use actuator_model::ModelError;
    /// let cause = std::io::Error::other("disk full");
    /// let err = ModelError::caused_by("the cache could not be written", cause);
    /// assert_eq!(err.to_string(), "the cache could not be written");
    /// let source = std::error::Error::source(&err).unwrap();
    /// assert_eq!(source.to_string(), "disk full");
    /// ```
    pub fn caused_by(
        message: impl Into<String>,
        cause: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        ModelError::Other {
            message: message.into(),
            source: Some(ErrorCause::new(cause)),
        }
    }

    /// The provider's typed error, when this is an [`ModelError::Api`] of type `E`.
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        match self {
            ModelError::Api(api) => api.error.downcast_ref::<E>(),
            _ => None,
        }
    }

    /// Whether trying the generation again may succeed (rate limits, overloaded or failing
    /// servers, lost connections, timeouts).
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Provider { retryable, .. } => *retryable,
            ModelError::Api(api) => api.retryable,
            ModelError::Timeout { .. } => true,
            ModelError::ScriptExhausted { .. } | ModelError::Other { .. } => false,
        }
    }
}

/// A provider's typed error inside a [`ModelError::Api`]: shared (so `ModelError` stays
/// `Clone`), compared by identity.
#[derive(Debug, Clone)]
pub struct ApiError {
    error: Arc<dyn std::error::Error + Send + Sync + 'static>,
    retryable: bool,
}

impl ApiError {
    /// The typed error.
    pub fn error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.error
    }

    /// Whether trying again may succeed.
    pub fn retryable(&self) -> bool {
        self.retryable
    }
}

impl PartialEq for ApiError {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.error, &other.error) && self.retryable == other.retryable
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for ApiError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

/// The error that caused another, kept as that error's
/// [`source`](std::error::Error::source): shared (so the errors holding it stay `Clone`),
/// compared by identity. As a source it reads as the cause itself (its message, then the
/// cause's own source); [`ErrorCause::get`] and [`ErrorCause::downcast_ref`] reach the typed
/// cause.
///
/// ```
/// use actuator_model::ErrorCause;
/// let cause = ErrorCause::new(std::io::Error::other("refused"));
/// assert_eq!(cause.to_string(), "refused");
/// assert!(cause.downcast_ref::<std::io::Error>().is_some());
/// assert_eq!(cause, cause.clone());
/// assert_ne!(cause, ErrorCause::new(std::io::Error::other("refused")));
/// ```
#[derive(Debug, Clone)]
pub struct ErrorCause(Arc<dyn std::error::Error + Send + Sync + 'static>);

impl ErrorCause {
    /// Keeps `error` as a cause.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        ErrorCause(Arc::new(error))
    }

    /// Keeps an already boxed `error` as a cause, as its own type (which
    /// [`ErrorCause::downcast_ref`] still reaches): a boxed error is not itself an `Error`.
    ///
    /// ```
    /// use actuator_model::ErrorCause;
    /// let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(std::io::Error::other("refused"));
    /// let cause = ErrorCause::from_boxed(boxed);
    /// assert!(cause.downcast_ref::<std::io::Error>().is_some());
    /// ```
    pub fn from_boxed(error: Box<dyn std::error::Error + Send + Sync + 'static>) -> Self {
        ErrorCause(Arc::from(error))
    }

    /// The cause.
    pub fn get(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0
    }

    /// The cause, when it is of type `E`.
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.0.downcast_ref::<E>()
    }
}

impl PartialEq for ErrorCause {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Display for ErrorCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for ErrorCause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_errors_keep_their_cause_as_source() {
        let err = ModelError::caused_by("failed", std::io::Error::other("disk full"));
        let source = std::error::Error::source(&err).unwrap();
        let cause = source.downcast_ref::<ErrorCause>().unwrap();
        assert!(cause.downcast_ref::<std::io::Error>().is_some());
        assert!(!err.to_string().contains("disk full"));
    }
}
