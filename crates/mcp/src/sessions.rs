//! The streamable-HTTP server's sessions: rmcp's in-memory session manager, plus one rule of
//! ours: a request whose client went away is cancelled.
//!
//! Over HTTP a request's answer travels on the SSE stream of its POST. A client may drop that
//! stream and resume it (a GET with `Last-Event-ID`), so a dropped stream alone is not the end
//! of the call; rmcp keeps running it. We wait a grace period: when the stream has not been
//! resumed by then, the call is cancelled as if the client had sent `notifications/cancelled`
//! (the tool's future is dropped), as it is over stdio when the pipe closes.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::Stream;
use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientJsonRpcMessage, ClientNotification,
    JsonRpcMessage, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};

type Sse = Pin<Box<dyn Stream<Item = ServerSseMessage> + Send + Sync>>;

/// One request and the SSE stream (first, or resumed) that carries its answer.
struct Call {
    session: SessionId,
    request: RequestId,
    /// The stream's id in its event ids (`{index}/{stream}`), once an event was seen.
    stream: Mutex<Option<String>>,
    /// Bumped by every resume: a pending cancellation of an older drop is void.
    generation: AtomicU64,
    /// Answered, cancelled, or its session gone.
    done: AtomicBool,
}

pub(crate) struct Inner {
    local: LocalSessionManager,
    grace: Duration,
    /// Calls by (session, stream id), to find a call again when its stream is resumed.
    calls: Mutex<HashMap<(SessionId, String), Arc<Call>>>,
}

impl Inner {
    fn calls(&self) -> std::sync::MutexGuard<'_, HashMap<(SessionId, String), Arc<Call>>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn finish(&self, call: &Call) {
        call.done.store(true, Ordering::SeqCst);
        let stream = call
            .stream
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(stream) = stream {
            self.calls().remove(&(call.session.clone(), stream));
        }
    }
}

impl Inner {
    /// Cancels `call` in its session, as the client's `notifications/cancelled` would.
    async fn cancel(&self, call: &Call, reason: &str) {
        self.finish(call);
        let params =
            CancelledNotificationParam::new(Some(call.request.clone()), Some(reason.to_owned()));
        let cancel = ClientJsonRpcMessage::notification(ClientNotification::CancelledNotification(
            CancelledNotification::new(params),
        ));
        // The session may be gone already (closed, expired): then so is the call.
        let _ = self.local.accept_message(&call.session, cancel).await;
    }
}

/// rmcp's [`LocalSessionManager`] that cancels abandoned requests after `grace`.
#[derive(Clone)]
pub(crate) struct Sessions(Arc<Inner>);

impl Sessions {
    pub(crate) fn new(grace: Duration) -> Self {
        Sessions(Arc::new(Inner {
            local: LocalSessionManager::default(),
            grace,
            calls: Mutex::new(HashMap::new()),
        }))
    }

    fn watch(&self, call: Arc<Call>, stream: Sse) -> Sse {
        Box::pin(Watched {
            inner: stream,
            call,
            sessions: Arc::clone(&self.0),
            armed: true,
        })
    }
}

/// The stream of a call's answer: marks the call done when it ends, and schedules its
/// cancellation when dropped before that.
struct Watched {
    inner: Sse,
    call: Arc<Call>,
    sessions: Arc<Inner>,
    armed: bool,
}

impl Stream for Watched {
    type Item = ServerSseMessage;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = self.inner.as_mut().poll_next(cx);
        match &polled {
            Poll::Ready(None) => {
                self.armed = false;
                self.sessions.finish(&self.call);
            }
            Poll::Ready(Some(event)) => {
                self.learn_stream(event);
                if event
                    .message
                    .as_deref()
                    .is_some_and(|m| answers(m, &self.call.request))
                {
                    self.armed = false;
                    self.sessions.finish(&self.call);
                }
            }
            Poll::Pending => {}
        }
        polled
    }
}

impl Watched {
    /// Records the stream id of the first event id seen, so a resume finds the call.
    fn learn_stream(&self, event: &ServerSseMessage) {
        let Some(stream) = event.event_id.as_deref().and_then(stream_of) else {
            return;
        };
        let mut known = self
            .call
            .stream
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if known.is_none() {
            *known = Some(stream.to_owned());
            self.sessions.calls().insert(
                (self.call.session.clone(), stream.to_owned()),
                Arc::clone(&self.call),
            );
        }
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if !self.armed || self.call.done.load(Ordering::SeqCst) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let call = Arc::clone(&self.call);
        let sessions = Arc::clone(&self.sessions);
        let generation = call.generation.load(Ordering::SeqCst);
        runtime.spawn(async move {
            tokio::time::sleep(sessions.grace).await;
            if call.done.load(Ordering::SeqCst)
                || call.generation.load(Ordering::SeqCst) != generation
            {
                return;
            }
            tracing::debug!(session = %call.session, request = %call.request,
                "MCP HTTP client went away mid-request; cancelling it");
            sessions.cancel(&call, "the client disconnected").await;
        });
    }
}

/// Whether `message` is the answer (a result or an error) to `request`.
fn answers(message: &ServerJsonRpcMessage, request: &RequestId) -> bool {
    match message {
        JsonRpcMessage::Response(r) => &r.id == request,
        JsonRpcMessage::Error(e) => e.id.as_ref() == Some(request),
        _ => false,
    }
}

/// The stream id of an event id `{index}/{stream}`.
fn stream_of(event_id: &str) -> Option<&str> {
    event_id.split_once('/').map(|(_, stream)| stream)
}

impl SessionManager for Sessions {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.0.local.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.0.local.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.0.local.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        // The client ended its session: its running requests are cancelled now (rmcp would
        // give them 5 s to finish, for answers nobody can receive any more).
        let running: Vec<Arc<Call>> = self
            .0
            .calls()
            .iter()
            .filter(|((session, _), _)| session == id)
            .map(|(_, call)| Arc::clone(call))
            .collect();
        for call in running {
            self.0.cancel(&call, "the client ended its session").await;
        }
        self.0.local.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let request = match &message {
            JsonRpcMessage::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        let stream: Sse = Box::pin(self.0.local.create_stream(id, message).await?);
        Ok(match request {
            Some(request) => {
                let call = Arc::new(Call {
                    session: id.clone(),
                    request,
                    stream: Mutex::new(None),
                    generation: AtomicU64::new(0),
                    done: AtomicBool::new(false),
                });
                self.watch(call, stream)
            }
            None => stream,
        })
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.0.local.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.0.local.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let call = stream_of(&last_event_id).and_then(|stream| {
            self.0
                .calls()
                .get(&(id.clone(), stream.to_owned()))
                .cloned()
        });
        if let Some(call) = &call {
            // The client is back for this call: a cancellation pending for the drop is void.
            call.generation.fetch_add(1, Ordering::SeqCst);
        }
        let stream: Sse = Box::pin(self.0.local.resume(id, last_event_id).await?);
        Ok(match call {
            Some(call) => self.watch(call, stream),
            None => stream,
        })
    }
}
