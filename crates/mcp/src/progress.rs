//! Progress of running tool calls: the server's `notifications/progress`, matched to the call
//! they belong to and handed to an observer ([`McpServer::on_progress`]) and to `tracing`.
//!
//! The notifications are picked off the transport as they are received, in order, before
//! rmcp dispatches them (rmcp hands each notification to a task of its own, so two could be
//! seen out of order, and the last could land after the call's result).
//!
//! [`McpServer::on_progress`]: crate::McpServer::on_progress

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, ProgressNotificationParam, ProgressToken, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// One `notifications/progress` an MCP server sent for a running tool call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct McpProgress {
    /// The server's name ([`McpServer::name`](crate::McpServer::name)).
    pub server: String,
    /// The tool's name on the server (without a prefix given by `mcp_tools`).
    pub tool: String,
    /// The call's id (the model's tool call id, from the `ToolContext`).
    pub call_id: String,
    /// The progress so far (increases with every notification).
    pub progress: f64,
    /// The total, when the server knows it.
    pub total: Option<f64>,
    /// What the server says it is doing, if anything.
    pub message: Option<String>,
}

/// The observer of [`McpServer::on_progress`](crate::McpServer::on_progress).
#[derive(Clone)]
pub(crate) struct ProgressObserver(pub(crate) Arc<dyn Fn(&McpProgress) + Send + Sync>);

impl std::fmt::Debug for ProgressObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressObserver")
    }
}

impl PartialEq for ProgressObserver {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for ProgressObserver {}

/// The call a progress token belongs to.
struct Watch {
    tool: String,
    call_id: String,
    /// The last progress passed on (later values that do not increase are dropped).
    last: Option<f64>,
}

/// How many notifications for tokens not (yet) watched are kept: a call's first notification
/// can arrive before the call has registered its token (it learns it only once sent).
const UNCLAIMED: usize = 32;

#[derive(Default)]
struct Routes {
    watched: HashMap<ProgressToken, Watch>,
    unclaimed: VecDeque<ProgressNotificationParam>,
}

/// Matches progress notifications to calls; shared by a connection's transport and its calls.
pub(crate) struct ProgressRouter {
    server: String,
    observer: Option<ProgressObserver>,
    routes: Mutex<Routes>,
}

impl ProgressRouter {
    pub(crate) fn new(server: String, observer: Option<ProgressObserver>) -> Self {
        ProgressRouter {
            server,
            observer,
            routes: Mutex::new(Routes::default()),
        }
    }

    fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Routes `token`'s notifications to the call `call_id` of `tool` until the returned guard
    /// drops; any that arrived before are passed on now.
    pub(crate) fn watch(
        self: &Arc<Self>,
        token: ProgressToken,
        tool: &str,
        call_id: &str,
    ) -> WatchGuard {
        let mut routes = self.routes();
        routes.watched.insert(
            token.clone(),
            Watch {
                tool: tool.to_owned(),
                call_id: call_id.to_owned(),
                last: None,
            },
        );
        let (early, others): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut routes.unclaimed)
            .into_iter()
            .partition(|p| p.progress_token == token);
        routes.unclaimed = others;
        let seen: Vec<McpProgress> = early
            .into_iter()
            .filter_map(|p| self.accept(&mut routes, p))
            .collect();
        drop(routes);
        for progress in &seen {
            self.pass_on(progress);
        }
        WatchGuard {
            router: Arc::clone(self),
            token,
        }
    }

    /// A notification received from the server.
    fn received(&self, params: ProgressNotificationParam) {
        let mut routes = self.routes();
        if !routes.watched.contains_key(&params.progress_token) {
            if routes.unclaimed.len() == UNCLAIMED {
                routes.unclaimed.pop_front();
            }
            routes.unclaimed.push_back(params);
            return;
        }
        let accepted = self.accept(&mut routes, params);
        drop(routes);
        if let Some(progress) = accepted {
            self.pass_on(&progress);
        }
    }

    /// The progress to pass on for a watched token, if it moves forward.
    fn accept(
        &self,
        routes: &mut Routes,
        params: ProgressNotificationParam,
    ) -> Option<McpProgress> {
        let watch = routes.watched.get_mut(&params.progress_token)?;
        if watch.last.is_some_and(|last| params.progress <= last) {
            tracing::debug!(server = %self.server, tool = %watch.tool, progress = params.progress,
                "MCP progress that does not increase is dropped");
            return None;
        }
        watch.last = Some(params.progress);
        Some(McpProgress {
            server: self.server.clone(),
            tool: watch.tool.clone(),
            call_id: watch.call_id.clone(),
            progress: params.progress,
            total: params.total,
            message: params.message,
        })
    }

    fn pass_on(&self, progress: &McpProgress) {
        tracing::info!(
            server = %progress.server,
            tool = %progress.tool,
            call_id = %progress.call_id,
            progress = progress.progress,
            total = progress.total,
            message = progress.message.as_deref().unwrap_or(""),
            "MCP tool progress"
        );
        if let Some(observer) = &self.observer {
            (observer.0)(progress);
        }
    }
}

/// Stops routing a call's token when the call ends (or is dropped).
pub(crate) struct WatchGuard {
    router: Arc<ProgressRouter>,
    token: ProgressToken,
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        self.router.routes().watched.remove(&self.token);
    }
}

/// A client transport that hands the progress notifications it receives to a router, then
/// passes every message on unchanged.
pub(crate) struct Observed<T> {
    pub(crate) inner: T,
    pub(crate) router: Arc<ProgressRouter>,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Observed<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(n) = &message
            && let ServerNotification::ProgressNotification(p) = &n.notification
        {
            self.router.received(p.params.clone());
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    fn token(n: i64) -> ProgressToken {
        ProgressToken(NumberOrString::Number(n))
    }

    fn note(n: i64, progress: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(token(n), progress)
    }

    fn recording() -> (Arc<ProgressRouter>, Arc<Mutex<Vec<McpProgress>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let observer = ProgressObserver(Arc::new(move |p: &McpProgress| {
            sink.lock().unwrap().push(p.clone());
        }));
        (
            Arc::new(ProgressRouter::new("srv".into(), Some(observer))),
            seen,
        )
    }

    fn values(seen: &Mutex<Vec<McpProgress>>) -> Vec<(String, f64)> {
        seen.lock()
            .unwrap()
            .iter()
            .map(|p| (p.call_id.clone(), p.progress))
            .collect()
    }

    #[test]
    fn notifications_go_to_their_call_and_stop_when_it_ends() {
        let (router, seen) = recording();
        let a = router.watch(token(1), "slow", "call_a");
        let b = router.watch(token(2), "slow", "call_b");
        router.received(note(1, 1.0));
        router.received(note(2, 5.0));
        router.received(note(1, 2.0));
        drop(a);
        router.received(note(1, 3.0));
        drop(b);
        assert_eq!(
            values(&seen),
            [
                ("call_a".into(), 1.0),
                ("call_b".into(), 5.0),
                ("call_a".into(), 2.0)
            ]
        );
    }

    #[test]
    fn progress_that_does_not_increase_is_dropped() {
        let (router, seen) = recording();
        let _watch = router.watch(token(1), "slow", "c");
        for p in [1.0, 3.0, 2.0, 3.0, 4.0] {
            router.received(note(1, p));
        }
        let got: Vec<f64> = values(&seen).into_iter().map(|(_, p)| p).collect();
        assert_eq!(got, [1.0, 3.0, 4.0]);
    }

    #[test]
    fn notifications_that_arrive_before_the_call_watches_are_passed_on_when_it_does() {
        let (router, seen) = recording();
        router.received(note(7, 1.0));
        router.received(note(8, 1.0));
        router.received(note(7, 2.0));
        assert!(values(&seen).is_empty());
        let _watch = router.watch(token(7), "slow", "c");
        assert_eq!(values(&seen), [("c".into(), 1.0), ("c".into(), 2.0)]);
        // The other token's notification is still waiting, and the buffer stays bounded.
        for i in 0..100 {
            router.received(note(100 + i, 1.0));
        }
        assert_eq!(router.routes().unclaimed.len(), UNCLAIMED);
    }
}
