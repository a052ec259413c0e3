//! The HTTP side shared by every provider: one `reqwest` client, JSON requests with retries,
//! and HTTP failures turned into [`ProviderError`]s.

use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use actuator_model::concurrency::{ConcurrencyController, connection_controller};
use actuator_model::{ErrorCause, GenerateRequest, RetryReport};
use actuator_tool_core::TraceContext;

use crate::error::ProviderError;
use crate::retry::{RetryPolicy, retry_after};
use actuator_model::credentials::{Secrets, is_secret_header, refused_redirect, without_user_info};

use crate::secrets::{same_origin_only, scrub_error};
use crate::sse::{SseError, SseParser};

mod failure;

use failure::is_back_off;
pub(crate) use failure::{Failure, StatusFailure, read_failure};

/// What reads a stream of server-sent events, one attempt's worth.
pub(crate) trait SseSink {
    /// One event (`event` is its name, empty when unnamed). Ok(true) when the stream is
    /// complete; a mid-stream error event is an `Err`.
    fn event(&mut self, event: &str, data: &str) -> Result<bool, Failure>;
    /// Whether what was read is a whole response when the stream ends without its end event.
    fn complete(&self) -> bool;
}

/// The most of a failed status's body that is read (its start is what errors quote).
const MAX_ERROR_BODY: usize = 1 << 20;

/// Everything needed to reach one provider. Its `Debug` shows header names, not values.
#[derive(Clone)]
pub(crate) struct Transport {
    client: reqwest::Client,
    /// The display name used in errors (`OpenAI`, `Anthropic`, `vllm` …).
    pub provider: String,
    /// Where the API key comes from, for authentication errors.
    pub key_var: String,
    pub base_url: String,
    headers: HeaderMap,
    pub timeout: Option<Duration>,
    pub retry: RetryPolicy,
    /// The limit on one server-sent event.
    max_event: usize,
    /// The credentials' values, redacted from every error text.
    secrets: Secrets,
    /// The endpoint's limit on concurrent requests, shared with every transport to it.
    connections: Option<Arc<ConcurrencyController>>,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("provider", &self.provider)
            .field("base_url", &self.shown_base_url())
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("max_event", &self.max_event)
            .finish_non_exhaustive()
    }
}

impl Transport {
    /// The transport to `base_url` sending `headers` with every request, its timeout, retry
    /// policy and event limit from `options`.
    pub(crate) fn new(
        provider: String,
        key_var: String,
        base_url: &str,
        headers: &[(String, String)],
        timeout: Option<Duration>,
        retry: RetryPolicy,
        max_event: usize,
    ) -> Result<Self, ProviderError> {
        let base_url = base_url.trim_end_matches('/').to_owned();
        let parsed = reqwest::Url::parse(&base_url);
        let url_secrets = Secrets::new([], None, &base_url);
        let invalid = |message: String| {
            let mut error = ProviderError::InvalidConfig {
                provider: provider.clone(),
                message,
            };
            scrub_error(&url_secrets, &mut error);
            error
        };
        let parsed = parsed.map_err(|e| {
            let shown = without_user_info(&base_url);
            invalid(format!("the base URL `{shown}` is not a URL: {e}"))
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(invalid(format!(
                "the base URL `{base_url}` must start with http:// or https://"
            )));
        }
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| invalid(format!("the header name `{name}` is not valid: {e}")))?;
            let mut value = HeaderValue::from_str(value)
                .map_err(|e| invalid(format!("the value of header `{name}` is not valid: {e}")))?;
            if is_secret_header(name.as_str()) {
                value.set_sensitive(true);
            }
            map.insert(name, value);
        }
        // Every credential given, also one a later header of the same name replaced (a
        // user's `x-goog-api-key` over the key's own): a server may still echo it.
        let secrets = Secrets::new(
            headers.iter().map(|(n, v)| (n.as_str(), v.as_str())),
            None,
            parsed.as_str(),
        );
        let tls = actuator_model::tls::client_config(parsed.scheme() == "https", Vec::new())
            .map_err(|e| {
                invalid(format!(
                    "the TLS settings of the HTTP client cannot be built: {}",
                    actuator_tool_core::ErrorChain(&e)
                ))
            })?;
        let client = reqwest::Client::builder()
            .user_agent(concat!("actuator/", env!("CARGO_PKG_VERSION")))
            .redirect(same_origin_only(secrets.clone()))
            .tls_backend_preconfigured(tls)
            .build()
            .map_err(|e| invalid(format!("the HTTP client cannot be built: {e}")))?;
        Ok(Transport {
            client,
            provider,
            key_var,
            base_url,
            headers: map,
            timeout,
            retry,
            max_event,
            secrets,
            connections: None,
        })
    }

    /// The transport of model `name` at `resolved`: the provider's own credential headers
    /// (`own`), then the user's ([`ModelOptions::headers`](crate::ModelOptions)), with the
    /// options' timeout, retries and event limit, and its endpoint's connection slots.
    pub(crate) fn for_model(
        name: &str,
        resolved: &crate::resolve::Resolved,
        mut own: Vec<(String, String)>,
        options: &crate::ModelOptions,
    ) -> Result<Self, ProviderError> {
        own.extend(options.headers.iter().cloned());
        Ok(Transport::new(
            resolved.service.clone(),
            resolved.key_var.clone(),
            &resolved.base_url,
            &own,
            options.timeout,
            options.retry.clone().unwrap_or_default(),
            options.sse_event_limit(),
        )?
        .with_connections(name, &resolved.model, options))
    }

    /// This transport with the concurrency controller of its endpoint for model `model`
    /// (shown as `name`), as `options` set it ([`ModelOptions::connections`], adaptive by
    /// default). The endpoint is the provider, the base URL, the model and a fingerprint of
    /// the headers (so two accounts on one server are two endpoints, as the reference keys
    /// by API key); the key holds no credential in clear.
    ///
    /// [`ModelOptions::connections`]: crate::ModelOptions::connections
    pub(crate) fn with_connections(
        mut self,
        name: &str,
        model: &str,
        options: &crate::ModelOptions,
    ) -> Self {
        let mut fingerprint = std::hash::DefaultHasher::new();
        self.base_url.hash(&mut fingerprint);
        for (header, value) in &self.headers {
            header.as_str().hash(&mut fingerprint);
            value.as_bytes().hash(&mut fingerprint);
        }
        let key = format!(
            "{}|{}|{model}|{:016x}",
            self.provider,
            self.shown_base_url(),
            fingerprint.finish()
        );
        let limit = options.connections.clone().unwrap_or_default();
        self.connections = Some(connection_controller(&key, name, &limit));
        self
    }

    /// The base URL with any user and password in it replaced, for messages.
    pub(crate) fn shown_base_url(&self) -> String {
        let mut url = self.base_url.clone();
        self.secrets.scrub(&mut url);
        url
    }

    /// `error` for the caller, with every credential redacted from its texts (a response
    /// body quoted in a parse error may echo the key).
    pub(crate) fn model_error(&self, mut error: ProviderError) -> actuator_model::ModelError {
        scrub_error(&self.secrets, &mut error);
        error.into()
    }

    /// The URL of an endpoint (`/chat/completions`, `/v1/messages`).
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// POSTs `body` as JSON to `path` and returns the body of the successful response, retrying
    /// as the policy says. A final failed status comes back as `Err(Failure::Status)` so the
    /// provider can read it (a context-window error is an output, not an error).
    pub(crate) async fn post_json(
        &self,
        path: &str,
        body: &impl serde::Serialize,
        request: &GenerateRequest<'_>,
    ) -> Result<Vec<u8>, Failure> {
        let url = self.url(path);
        let bytes = self.encode(body)?;
        self.with_retries(&url, request, || async {
            let response = self.send(&url, &bytes, false, request.trace).await?;
            match self.read_body(&url, response, self.max_event).await? {
                (body, false) => Ok(body),
                (_, true) => Err(Failure::Other(ProviderError::ResponseTooLarge {
                    provider: self.provider.clone(),
                    limit: self.max_event,
                })),
            }
        })
        .await
    }

    /// POSTs `body` and reads the answer as server-sent events into a fresh `sink` (made by
    /// `new_sink` for each attempt), until the sink says the stream is complete. The whole
    /// stream is one attempt: a stream that breaks off is retried like a reset connection.
    pub(crate) async fn post_sse<S: SseSink>(
        &self,
        path: &str,
        body: &impl serde::Serialize,
        request: &GenerateRequest<'_>,
        new_sink: impl Fn() -> S,
    ) -> Result<S, Failure> {
        use futures_util::StreamExt;

        let url = self.url(path);
        let bytes = self.encode(body)?;
        self.with_retries(&url, request, || async {
            let response = self.send(&url, &bytes, true, request.trace).await?;
            let mut chunks = response.bytes_stream();
            let mut parser = SseParser::new(self.max_event);
            let mut events = Vec::new();
            let mut sink = new_sink();
            while let Some(chunk) = chunks.next().await {
                let chunk = chunk.map_err(|e| Failure::Other(self.send_error(&url, e)))?;
                parser
                    .feed(&chunk, &mut events)
                    .map_err(|e| Failure::Other(self.sse_error(e)))?;
                for event in events.drain(..) {
                    if sink.event(&event.event, &event.data)? {
                        return Ok(sink);
                    }
                }
            }
            if sink.complete() {
                return Ok(sink);
            }
            Err(Failure::Other(ProviderError::Connection {
                provider: self.provider.clone(),
                url: url.clone(),
                message: "the event stream ended before the response was complete".into(),
                source: None,
            }))
        })
        .await
    }

    fn sse_error(&self, error: SseError) -> ProviderError {
        let provider = self.provider.clone();
        match error {
            SseError::TooLarge { limit } => ProviderError::EventTooLarge { provider, limit },
            other => ProviderError::MalformedResponse {
                provider,
                message: format!(
                    "the event stream cannot be read: {}",
                    actuator_tool_core::ErrorChain(&other)
                ),
            },
        }
    }

    fn encode(&self, body: &impl serde::Serialize) -> Result<Vec<u8>, Failure> {
        serde_json::to_vec(body).map_err(|e| {
            Failure::Other(ProviderError::InvalidConversation {
                provider: self.provider.clone(),
                message: format!("the request cannot be written as JSON: {e}"),
            })
        })
    }

    /// Runs `attempt` until it succeeds, fails for good, or the policy says stop; each wait
    /// between attempts goes through `request`, so its observer hears of the retry.
    async fn with_retries<T, F, Fut>(
        &self,
        url: &str,
        request: &GenerateRequest<'_>,
        attempt: F,
    ) -> Result<T, Failure>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T, Failure>>,
    {
        let started = Instant::now();
        let mut n = 1u32;
        let connections = self.connections.as_deref();
        loop {
            // One slot per attempt: a request waiting out its backoff holds none, so the
            // limit counts what is at the server.
            let permit = match connections {
                Some(c) => match c.try_acquire() {
                    Some(permit) => Some(permit),
                    // Queueing for a slot is waiting, not working time.
                    None => Some(request.wait_queued(c.acquire()).await),
                },
                None => None,
            };
            let mut error = match attempt().await {
                Ok(value) => {
                    if let Some(c) = connections {
                        c.success(n > 1);
                    }
                    return Ok(value);
                }
                Err(failure) => failure,
            };
            // A server may echo a credential back (a 401 quoting the key): never pass it on.
            match &mut error {
                Failure::Status(s) => {
                    for text in [&mut s.message]
                        .into_iter()
                        .chain(s.code.as_mut())
                        .chain(s.kind.as_mut())
                    {
                        self.secrets.scrub(text);
                    }
                }
                Failure::Other(e) => scrub_error(&self.secrets, e),
            }
            let as_error = match &error {
                Failure::Status(s) => self.status_error(url, s),
                Failure::Other(e) => e.clone(),
            };
            if let Some(c) = connections {
                if is_back_off(&as_error) {
                    c.rate_limited(as_error.retry_after());
                } else if as_error.is_retryable() {
                    c.retried();
                }
            }
            // Only now, the cut and the pause in place: freed earlier, the slot could go to a
            // queued request under the old limit.
            drop(permit);
            if !as_error.is_retryable() || n >= self.retry.max_attempts {
                return Err(error);
            }
            let wait = as_error
                .retry_after()
                .unwrap_or_else(|| self.retry.backoff_for(n));
            if started.elapsed() + wait > self.retry.max_elapsed {
                tracing::warn!(
                    provider = %self.provider,
                    attempt = n,
                    wait_ms = wait.as_millis() as u64,
                    error = %as_error,
                    "not retrying: the wait would pass the retry policy's max_elapsed"
                );
                return Err(error);
            }
            tracing::warn!(
                provider = %self.provider,
                attempt = n,
                wait_ms = wait.as_millis() as u64,
                error = %as_error,
                "retrying the request"
            );
            // With its causes: "could not be sent" says little without "Connection refused".
            let mut report = RetryReport::new(
                n,
                wait,
                actuator_tool_core::ErrorChain(&as_error).to_string(),
            );
            if let Failure::Status(s) = &error {
                report = report.with_status(s.status);
            }
            request.wait_for_retry(report).await;
            n += 1;
        }
    }

    /// Sends one request, with the W3C trace context headers when the request belongs to a
    /// trace; a failed status (its body read) is `Err(Failure::Status)`.
    async fn send(
        &self,
        url: &str,
        body: &[u8],
        sse: bool,
        trace: Option<&TraceContext>,
    ) -> Result<reqwest::Response, Failure> {
        let mut request = self
            .client
            .post(url)
            .headers(self.headers.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_vec());
        if sse {
            request = request.header(reqwest::header::ACCEPT, "text/event-stream");
        }
        if let Some(trace) = trace {
            request = request.header("traceparent", trace.traceparent());
            // Bounded and checked when the context was made (`MAX_TRACESTATE_LEN`).
            if let Some(state) = trace.tracestate() {
                request = request.header("tracestate", state);
            }
        }
        if let Some(timeout) = self.timeout {
            request = request.timeout(timeout);
        }
        let response = request
            .send()
            .await
            .map_err(|e| Failure::Other(self.send_error(url, e)))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let wait = retry_after(response.headers());
        // Only its start is ever shown or parsed: the rest of a huge error body is not read.
        let (body, _) = self
            .read_body(url, response, MAX_ERROR_BODY.min(self.max_event))
            .await?;
        Err(Failure::Status(read_failure(status.as_u16(), wait, &body)))
    }

    /// Reads a response body, at most `limit` bytes: the flag says it went past them (then
    /// the rest is not read and the connection is dropped).
    async fn read_body(
        &self,
        url: &str,
        mut response: reqwest::Response,
        limit: usize,
    ) -> Result<(Vec<u8>, bool), Failure> {
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| Failure::Other(self.send_error(url, e)))?
        {
            let room = limit - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                return Ok((body, true));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((body, false))
    }

    fn send_error(&self, url: &str, e: reqwest::Error) -> ProviderError {
        if let Some(refused) = refused_redirect(&e) {
            return ProviderError::RedirectRefused {
                provider: self.provider.clone(),
                from: refused.from.clone(),
                to: refused.to.clone(),
            };
        }
        if e.is_timeout() {
            return ProviderError::Timeout {
                provider: self.provider.clone(),
                after: self.timeout.unwrap_or_default(),
            };
        }
        ProviderError::Connection {
            provider: self.provider.clone(),
            url: url.to_owned(),
            message: if e.is_body() || e.is_decode() {
                "the response could not be read".into()
            } else {
                "the request could not be sent".into()
            },
            // Without its URL: the URL may hold credentials, and the cause is not scrubbed.
            source: Some(ErrorCause::new(e.without_url())),
        }
    }
}
