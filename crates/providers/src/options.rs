//! [`ModelOptions`]: how a model is reached (key, base URL, headers, timeout, retries, default
//! generation settings), given in code or read from the environment.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use actuator_model::concurrency::ConnectionLimit;
use actuator_model::{GenerateConfig, ModelOutput};

use crate::retry::RetryPolicy;

/// Where [`ModelOptions`] reads environment variables from ([`ModelOptions::env`]): a
/// variable's name to its value, `None` when unset.
pub type EnvLookup = dyn Fn(&str) -> Option<String> + Send + Sync;

/// Options for [`get_model_with`](crate::get_model_with): everything given here wins over the
/// environment variables.
///
/// ```
/// use std::time::Duration;
/// use actuator_model::GenerateConfig;
/// use actuator_providers::{ModelOptions, RetryPolicy};
///
/// let model = ModelOptions::new()
///     .api_key("sk-test")
///     .base_url("http://127.0.0.1:9/v1")
///     .header("OpenAI-Organization", "org-1")
///     .timeout(Duration::from_secs(60))
///     .retry(RetryPolicy::default().max_attempts(3))
///     .config(GenerateConfig::default().max_tokens(512))
///     .build("openai/gpt-4.1-mini")
///     .unwrap();
/// assert_eq!(model.name(), "openai/gpt-4.1-mini");
/// ```
///
/// The fields are public so that a provider registered from outside this crate
/// ([`register_provider`](crate::register_provider)) can read them; set them with the setters
/// (the struct is `#[non_exhaustive]`, so fields can be added without breaking callers).
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct ModelOptions {
    /// The API key ([`ModelOptions::api_key`]).
    pub api_key: Option<String>,
    /// The base URL ([`ModelOptions::base_url`]).
    pub base_url: Option<String>,
    /// Extra headers sent with every request ([`ModelOptions::header`]).
    pub headers: Vec<(String, String)>,
    /// How long one request may take ([`ModelOptions::timeout`]).
    pub timeout: Option<Duration>,
    /// How failed requests are retried ([`ModelOptions::retry`]).
    pub retry: Option<RetryPolicy>,
    /// Default generation settings ([`ModelOptions::config`]).
    pub config: GenerateConfig,
    /// Whether OpenAI tools go out strict ([`ModelOptions::strict_tools`]).
    pub strict_tools: Option<bool>,
    /// Whether answers are streamed ([`ModelOptions::stream`]).
    pub stream: Option<bool>,
    /// Whether OpenAI's Responses API is used ([`ModelOptions::responses_api`]).
    pub responses_api: Option<bool>,
    /// The largest server-sent event ([`ModelOptions::max_sse_event_bytes`]).
    pub max_sse_event_bytes: Option<usize>,
    /// Where environment variables are read from ([`ModelOptions::env`]; read them with
    /// [`ModelOptions::env_var`]).
    pub env: Option<Arc<EnvLookup>>,
    /// The outputs `mockllm/model` returns ([`ModelOptions::script`]).
    pub script: Option<Vec<ModelOutput>>,
    /// How many requests go to the endpoint at once ([`ModelOptions::connections`]).
    pub connections: Option<ConnectionLimit>,
}

impl fmt::Debug for ModelOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelOptions")
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("base_url", &self.base_url)
            .field(
                "headers",
                &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("config", &self.config)
            .field("strict_tools", &self.strict_tools)
            .field("stream", &self.stream)
            .field("responses_api", &self.responses_api)
            .field("max_sse_event_bytes", &self.max_sse_event_bytes)
            .field("env", &self.env.as_ref().map(|_| "<custom>"))
            .field("connections", &self.connections)
            .finish_non_exhaustive()
    }
}

impl ModelOptions {
    /// No options: everything from the environment and the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// The API key (instead of `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `<SERVICE>_API_KEY` …).
    #[must_use]
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// The base URL (instead of `OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, `<SERVICE>_BASE_URL`
    /// or the provider's default). OpenAI-style URLs end in `/v1`; Anthropic's does not.
    #[must_use]
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// An extra header sent with every request.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// How long one request may take, answer included (default: no limit here; the run's
    /// `GenerateConfig::timeout` and time limits still apply). A request that runs out is
    /// retried as the retry policy says.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// How failed requests are retried (default [`RetryPolicy::default`]).
    #[must_use]
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = Some(retry);
        self
    }

    /// How many requests go to the endpoint (provider, base URL, model, credentials) at once,
    /// counted over every model object of the process that reaches it: every sample of an
    /// evaluation shares one limit. Default: [`ConnectionLimit::Adaptive`] with the reference's
    /// bounds (start 20, between 10 and 100), growing while the provider keeps up and cut on
    /// rate limits (429, 529); [`ConnectionLimit::Fixed`] is the reference's
    /// `max_connections`. The first model of an endpoint sets its limit for the process. See
    /// [`actuator_model::concurrency`].
    ///
    /// ```
    /// use actuator_model::concurrency::{AdaptiveConcurrency, ConnectionLimit};
    /// use actuator_providers::ModelOptions;
    /// let adaptive = ModelOptions::new()
    ///     .connections(ConnectionLimit::Adaptive(AdaptiveConcurrency::new(1, 4, 64).unwrap()));
    /// let fixed = ModelOptions::new().connections(ConnectionLimit::Fixed(8));
    /// # let _ = (adaptive, fixed);
    /// ```
    #[must_use]
    pub fn connections(mut self, limit: ConnectionLimit) -> Self {
        self.connections = Some(limit);
        self
    }

    /// Generation settings used where a call's own `GenerateConfig` leaves a field unset.
    #[must_use]
    pub fn config(mut self, config: GenerateConfig) -> Self {
        self.config = config;
        self
    }

    /// Whether OpenAI tools are sent in strict mode where their schema allows it (default
    /// true; a schema that cannot be strict always goes out non-strict). Some compatible
    /// servers do better with plain schemas.
    #[must_use]
    pub fn strict_tools(mut self, strict: bool) -> Self {
        self.strict_tools = Some(strict);
        self
    }

    /// Whether answers are streamed (server-sent events), aggregated into the same output.
    /// Default: on when the request's observer wants the deltas (a run whose event sink wants
    /// them: `EventSink::wants_model_stream`, as the reference's `on_stream` asks for a
    /// stream), and for Anthropic when `max_tokens` is above 16,000 (long requests must stream
    /// there); otherwise off. Dropping the generation closes the stream.
    #[must_use]
    pub fn stream(mut self, stream: bool) -> Self {
        self.stream = Some(stream);
        self
    }

    /// Whether an OpenAI model is reached through the Responses API instead of Chat
    /// Completions (default: yes for OpenAI's reasoning models, whose reasoning is replayed
    /// there, no for every other model and every compatible server).
    #[must_use]
    pub fn responses_api(mut self, yes: bool) -> Self {
        self.responses_api = Some(yes);
        self
    }

    /// The largest server-sent event a streamed answer may contain, in bytes (default
    /// [`DEFAULT_MAX_SSE_EVENT_BYTES`](crate::DEFAULT_MAX_SSE_EVENT_BYTES), 16 MiB). A
    /// larger event ends the request with [`ProviderError::EventTooLarge`](crate::ProviderError::EventTooLarge) instead of
    /// buffering whatever the server sends. The same limit bounds a non-streamed answer's
    /// body ([`ProviderError::ResponseTooLarge`](crate::ProviderError::ResponseTooLarge)); of a failed status's body at most 1 MiB is
    /// read.
    ///
    /// ```
    /// use actuator_providers::ModelOptions;
    /// let options = ModelOptions::new().stream(true).max_sse_event_bytes(64 << 20);
    /// # let _ = options;
    /// ```
    #[must_use]
    pub fn max_sse_event_bytes(mut self, limit: usize) -> Self {
        self.max_sse_event_bytes = Some(limit);
        self
    }

    /// The largest server-sent event a stream may carry (the default when none was set).
    pub(crate) fn sse_event_limit(&self) -> usize {
        self.max_sse_event_bytes
            .unwrap_or(crate::sse::DEFAULT_MAX_SSE_EVENT_BYTES)
    }

    /// Where environment variables are read from (default: the process environment). For
    /// configuration kept elsewhere, and for tests.
    ///
    /// ```
    /// use actuator_providers::{ModelOptions, ProviderError};
    /// let env = ModelOptions::new().env(|var| {
    ///     (var == "TOGETHER_BASE_URL").then(|| "https://api.together.xyz/v1".to_owned())
    /// });
    /// let err = env.build("openai-api/together/llama").err().unwrap();
    /// assert!(matches!(err, ProviderError::MissingApiKey { ref var, .. } if var == "TOGETHER_API_KEY"));
    /// ```
    #[must_use]
    pub fn env(mut self, lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        self.env = Some(Arc::new(lookup));
        self
    }

    /// The outputs `mockllm/model` returns, in order (default: the same text answer forever).
    #[must_use]
    pub fn script(mut self, outputs: impl IntoIterator<Item = ModelOutput>) -> Self {
        self.script = Some(outputs.into_iter().collect());
        self
    }

    /// The environment variable `name`, read where [`ModelOptions::env`] says (default: the
    /// process environment); an empty or blank value counts as unset. For a provider's
    /// factory ([`register_provider`](crate::register_provider)) reading its key or URL.
    ///
    /// ```
    /// use actuator_providers::ModelOptions;
    /// let options = ModelOptions::new().env(|var| (var == "ACME_API_KEY").then(|| "k".to_owned()));
    /// assert_eq!(options.env_var("ACME_API_KEY").as_deref(), Some("k"));
    /// assert_eq!(options.env_var("ACME_BASE_URL"), None);
    /// ```
    pub fn env_var(&self, name: &str) -> Option<String> {
        let value = match &self.env {
            Some(f) => f(name),
            None => std::env::var(name).ok(),
        };
        value.filter(|v| !v.trim().is_empty())
    }
}

/// A call's config over the defaults: each field the call leaves unset comes from `defaults`.
pub(crate) fn merged(defaults: &GenerateConfig, call: &GenerateConfig) -> GenerateConfig {
    if *defaults == GenerateConfig::default() {
        return call.clone();
    }
    call.merge(defaults)
}
