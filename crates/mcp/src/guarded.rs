//! The HTTP client handed to rmcp's streamable-HTTP transport: reqwest's own implementation
//! (the redirect policy set on the client), with every error it returns cleared of the
//! credentials a server may have echoed. rmcp logs these errors itself (its worker reports a
//! fatal transport error at ERROR level), so they are scrubbed before rmcp sees them.

use std::collections::HashMap;
use std::sync::Arc;

use actuator_model::credentials::Secrets;
use futures_util::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

type Error = StreamableHttpError<reqwest::Error>;

/// reqwest's client, its errors scrubbed of `secrets`.
#[derive(Clone)]
pub(crate) struct Guarded {
    inner: reqwest::Client,
    secrets: Secrets,
}

impl Guarded {
    pub(crate) fn new(inner: reqwest::Client, secrets: Secrets) -> Self {
        Guarded { inner, secrets }
    }

    /// An error whose text holds a secret becomes the same text, redacted. The HTTP client's
    /// own errors (`Client`) are kept: their text is reqwest's, and the refused redirect in
    /// their causes is read from them.
    fn scrub(&self, error: Error) -> Error {
        if matches!(error, StreamableHttpError::Client(_)) {
            return error;
        }
        let text = format!("{error} {error:?}");
        if self.secrets.found_in(&text) {
            let clean = self.secrets.scrubbed(&error.to_string());
            return StreamableHttpError::UnexpectedServerResponse(clean.into());
        }
        error
    }
}

impl StreamableHttpClient for Guarded {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await
            .map_err(|e| self.scrub(e))
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
            .map_err(|e| self.scrub(e))
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await
            .map_err(|e| self.scrub(e))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
            .map_err(|e| self.scrub(e))
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
            .map_err(|e| self.scrub(e))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
            .map_err(|e| self.scrub(e))
    }
}
