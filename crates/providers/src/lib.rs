//! # actuator-providers
//!
//! Real models for Actuator's agents: [`get_model`] turns a name such as
//! `openai/gpt-4.1-mini`, `anthropic/claude-sonnet-4-5` or `vllm/Qwen/Qwen3-8B` into an
//! `Arc<dyn Model>`, configured from the conventional environment variables or in code with
//! [`ModelOptions`].
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use actuator_model::{ChatMessage, GenerateRequest, Model};
//!
//! let model = actuator_providers::get_model("openai/gpt-4.1-mini")?; // reads OPENAI_API_KEY
//! let out = model.generate(GenerateRequest::new(&[ChatMessage::user("Hi!")])).await?;
//! println!("{}", out.completion());
//! # Ok(()) }
//! ```
//!
//! - **Open registry**: a crate outside Actuator adds a provider prefix (`bedrock/…`) with
//!   [`register_provider`]; the built-in prefixes are registered the same way
//!   ([`registered_providers`] lists them all).
//! - **Wire formats**: OpenAI Chat Completions ([`OpenAiChat`], feature `openai`), which every
//!   OpenAI-compatible server speaks, and Anthropic Messages ([`AnthropicMessages`], feature
//!   `anthropic`).
//! - **Faults** are [`ProviderError`]s, carried inside a [`ModelError::Api`]; rate limits,
//!   overloaded or failing servers, timeouts and broken connections are retried with
//!   exponential backoff and jitter ([`RetryPolicy`]), honouring `Retry-After`, each retry
//!   logged through `tracing` and reported to the request's observer
//!   ([`GenerateRequest::wait_for_retry`](actuator_model::GenerateRequest::wait_for_retry)).
//! - **Concurrency** per endpoint (provider, base URL, model, credentials), shared by every
//!   model object of the process that reaches it: by default the reference's adaptive
//!   connections (start 20, between 10 and 100), growing while the provider keeps up and cut on
//!   rate limits (429, 529); a rate limit's `Retry-After` holds the endpoint's new requests
//!   until it has passed; a fixed limit is [`ConnectionLimit::Fixed`]
//!   ([`ModelOptions::connections`]). Each HTTP attempt holds a slot; waiting for one is
//!   reported to the request's observer, so a run counts it as waiting, not working time. See
//!   [`actuator_model::concurrency`].
//! - **Before sending**, the conversation is checked against the provider's rules (every tool
//!   call answered, ids matching): a violation is a [`ProviderError::InvalidConversation`] that
//!   says where, not a provider's 400.
//! - **Cancellation**: dropping the future drops the request and closes its connection.
//! - **Credentials** stay with the base URL's origin: a redirect to another origin (scheme,
//!   host or port) is not followed ([`ProviderError::RedirectRefused`]), and the key, credential
//!   headers and a URL's password are redacted from every error, log line and `Debug` output.
//! - **Streams** are read in time linear in their size; one server-sent event larger than
//!   [`ModelOptions::max_sse_event_bytes`] (default [`DEFAULT_MAX_SSE_EVENT_BYTES`], 16 MiB)
//!   is a [`ProviderError::EventTooLarge`].
//! - **TLS** is rustls with the `ring` provider and the platform's certificate roots, on the
//!   same reqwest 0.13 as actuator-mcp. The provider is handed to this crate's clients, not
//!   installed process-wide; as reqwest's `rustls-no-provider` feature is on, another reqwest
//!   0.13 client in the same program built with `reqwest::Client::new()` needs one installed
//!   (`rustls::crypto::ring::default_provider().install_default()`), unless something enables
//!   reqwest's default TLS.
//!
//! [`ModelError::Api`]: actuator_model::ModelError::Api
//! [`ConnectionLimit::Fixed`]: actuator_model::concurrency::ConnectionLimit::Fixed
#![cfg_attr(docsrs, feature(doc_cfg))]

mod builtin;
mod check;
mod deltas;
mod error;
mod http;
mod options;
mod registry;
mod resolve;
mod retry;
mod secrets;
mod sse;

#[cfg(feature = "anthropic")]
mod anthropic;
#[cfg(feature = "google")]
mod google;
#[cfg(feature = "openai")]
mod openai;

#[cfg(feature = "anthropic")]
#[cfg_attr(docsrs, doc(cfg(feature = "anthropic")))]
pub use anthropic::{ANTHROPIC_VERSION, AnthropicMessages};
pub use error::ProviderError;
#[cfg(feature = "google")]
#[cfg_attr(docsrs, doc(cfg(feature = "google")))]
pub use google::GoogleGemini;
#[cfg(feature = "openai")]
#[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
pub use openai::OpenAiChat;
pub use options::{EnvLookup, ModelOptions};
pub use registry::{get_model, get_model_with, register_provider, registered_providers};
pub use retry::RetryPolicy;
pub use sse::DEFAULT_MAX_SSE_EVENT_BYTES;

/// Entry points for the fuzz target `fuzz/fuzz_targets/provider_parsers.rs`: every parser a
/// provider applies to bytes from the network, without the HTTP around it. Not part of the
/// API; it may change at any time.
#[doc(hidden)]
pub mod __fuzz {
    pub use crate::fuzzing::parse_everything;
}

mod fuzzing;
