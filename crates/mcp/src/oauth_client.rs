//! The HTTP client of a server with OAuth ([`Authorizing`]): requests go out with the
//! current token (none at first); a 401 challenge, or a 403 asking for more scope (step-up),
//! runs the authorization flow with that challenge and the request is sent again with the
//! new token. At most [`MAX_AUTHORIZATIONS`] flows run per connection, so a server that
//! keeps refusing cannot keep us authorizing forever.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use crate::oauth::OAuth;
use crate::oauth_flow::authorize;

/// The most authorization flows one connection runs (the first, and step-ups).
pub(crate) const MAX_AUTHORIZATIONS: u32 = 3;

type Error<C> = StreamableHttpError<<C as StreamableHttpClient>::Error>;

struct Authorized<C> {
    client: Option<AuthClient<C>>,
    /// Bumped by each authorization, so a request that failed with an older token retries
    /// with the newer one instead of authorizing again.
    generation: u64,
    flows: u32,
}

/// `inner` with OAuth added as the server asks for it.
pub(crate) struct Authorizing<C> {
    inner: C,
    server: Arc<str>,
    url: Arc<str>,
    oauth: OAuth,
    /// The longest one authorization may take: the connect timeout. rmcp's transport worker
    /// keeps a request going after the connect that wanted it gave up, so the flow is
    /// bounded here, not only by the caller.
    within: Duration,
    state: Arc<tokio::sync::Mutex<Authorized<C>>>,
}

impl<C: Clone> Clone for Authorizing<C> {
    fn clone(&self) -> Self {
        Authorizing {
            inner: self.inner.clone(),
            server: Arc::clone(&self.server),
            url: Arc::clone(&self.url),
            oauth: self.oauth.clone(),
            within: self.within,
            state: Arc::clone(&self.state),
        }
    }
}

impl<C> Authorizing<C>
where
    C: StreamableHttpClient + Clone + Send + Sync + 'static,
{
    pub(crate) fn new(inner: C, server: &str, url: &str, oauth: OAuth, within: Duration) -> Self {
        Authorizing {
            inner,
            server: server.into(),
            url: url.into(),
            oauth,
            within,
            state: Arc::new(tokio::sync::Mutex::new(Authorized {
                client: None,
                generation: 0,
                flows: 0,
            })),
        }
    }

    /// Sends with the current token; on a challenge, authorizes and sends again.
    async fn send<T, P, PF, A, AF>(&self, plain: P, authed: A) -> Result<T, Error<C>>
    where
        P: Fn(C) -> PF,
        PF: Future<Output = Result<T, Error<C>>>,
        A: Fn(AuthClient<C>) -> AF,
        AF: Future<Output = Result<T, Error<C>>>,
    {
        loop {
            let (client, generation) = {
                let state = self.state.lock().await;
                (state.client.clone(), state.generation)
            };
            let result = match client {
                Some(client) => authed(client).await,
                None => plain(self.inner.clone()).await,
            };
            let challenge = match &result {
                Err(e) => e.auth_challenge().map(str::to_owned),
                Ok(_) => None,
            };
            let Some(challenge) = challenge else {
                return result;
            };
            let mut state = self.state.lock().await;
            if state.generation != generation {
                // Another request authorized meanwhile: try its token.
                continue;
            }
            if state.flows >= MAX_AUTHORIZATIONS {
                tracing::warn!(
                    server = %self.server,
                    "the server still refuses after {MAX_AUTHORIZATIONS} authorizations; giving up"
                );
                return result;
            }
            // The first flow may reuse a stored token; later ones follow its refusal.
            let reuse_stored = state.flows == 0;
            state.flows += 1;
            let authorizing = authorize(&self.url, &self.oauth, Some(challenge), reuse_stored);
            let manager = match tokio::time::timeout(self.within, authorizing).await {
                Ok(authorized) => authorized,
                Err(_) => Err(format!(
                    "OAuth authorization did not finish within {:.1} s (the server's connect \
                     timeout; raise McpServer::connect_timeout for a slow authorization)",
                    self.within.as_secs_f64()
                )),
            }
            .map_err(|reason| StreamableHttpError::UnexpectedServerResponse(reason.into()))?;
            state.client = Some(AuthClient::new(self.inner.clone(), manager));
            state.generation += 1;
        }
    }
}

impl<C> StreamableHttpClient for Authorizing<C>
where
    C: StreamableHttpClient + Clone + Send + Sync + 'static,
{
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error<C>> {
        let args = || {
            (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        };
        self.send(
            |c| {
                let (u, m, s, a, h) = args();
                async move { c.post_message(u, m, s, a, h).await }
            },
            |c| {
                let (u, m, s, a, h) = args();
                async move { c.post_message(u, m, s, a, h).await }
            },
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Error<C>> {
        let args = || {
            (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        };
        self.send(
            |c| {
                let (u, m, s, a, h) = args();
                async move {
                    c.post_message_with_max_sse_event_size(u, m, s, a, h, max_sse_event_size)
                        .await
                }
            },
            |c| {
                let (u, m, s, a, h) = args();
                async move {
                    c.post_message_with_max_sse_event_size(u, m, s, a, h, max_sse_event_size)
                        .await
                }
            },
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error<C>> {
        let args = || {
            (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                limits,
            )
        };
        self.send(
            |c| {
                let (u, m, s, a, h, l) = args();
                async move { c.post_message_with_response_limits(u, m, s, a, h, l).await }
            },
            |c| {
                let (u, m, s, a, h, l) = args();
                async move { c.post_message_with_response_limits(u, m, s, a, h, l).await }
            },
        )
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error<C>> {
        let args = || {
            (
                uri.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        };
        self.send(
            |c| {
                let (u, s, a, h) = args();
                async move { c.delete_session(u, s, a, h).await }
            },
            |c| {
                let (u, s, a, h) = args();
                async move { c.delete_session(u, s, a, h).await }
            },
        )
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error<C>> {
        let args = || {
            (
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        };
        self.send(
            |c| {
                let (u, s, l, a, h) = args();
                async move { c.get_stream(u, s, l, a, h).await }
            },
            |c| {
                let (u, s, l, a, h) = args();
                async move { c.get_stream(u, s, l, a, h).await }
            },
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error<C>> {
        let args = || {
            (
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        };
        self.send(
            |c| {
                let (u, s, l, a, h) = args();
                async move {
                    c.get_stream_with_max_sse_event_size(u, s, l, a, h, max_sse_event_size)
                        .await
                }
            },
            |c| {
                let (u, s, l, a, h) = args();
                async move {
                    c.get_stream_with_max_sse_event_size(u, s, l, a, h, max_sse_event_size)
                        .await
                }
            },
        )
        .await
    }
}
