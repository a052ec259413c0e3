//! What a [`ToolServer`](crate::ToolServer) remembers of each client session: the log level
//! it asked for (`logging/setLevel`) and the resources it subscribed to, with the session's
//! peer so `notifications/resources/updated` can reach it. Sessions are held weakly: an
//! ended session is forgotten.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, Weak};

use actuator_tool_core::LogLevel;
use rmcp::Peer;
use rmcp::service::RoleServer;

/// The most resources one session may subscribe to: a client cannot make the server's
/// memory grow without bound by subscribing to ever new URIs of a template.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 1024;

#[derive(Debug)]
struct State {
    log_level: LogLevel,
    subscriptions: HashSet<String>,
    peer: Option<Peer<RoleServer>>,
}

impl State {
    fn has_room_for(&self, uri: &str) -> bool {
        self.subscriptions.contains(uri) || self.subscriptions.len() < MAX_SUBSCRIPTIONS
    }
}

/// One client session.
#[derive(Debug)]
pub(crate) struct SessionState(Mutex<State>);

impl SessionState {
    fn new() -> Self {
        SessionState(Mutex::new(State {
            // Until the client says otherwise: what happens, not the detail.
            log_level: LogLevel::Info,
            subscriptions: HashSet::new(),
            peer: None,
        }))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock leaves plain data behind: keep using it.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn log_level(&self) -> LogLevel {
        self.lock().log_level
    }

    pub(crate) fn set_log_level(&self, level: LogLevel) {
        self.lock().log_level = level;
    }

    /// Subscribes to `uri`; `false` when the session holds [`MAX_SUBSCRIPTIONS`] already.
    pub(crate) fn subscribe(&self, uri: &str, peer: Peer<RoleServer>) -> bool {
        let mut state = self.lock();
        if !state.has_room_for(uri) {
            return false;
        }
        state.subscriptions.insert(uri.to_owned());
        state.peer = Some(peer);
        true
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.lock().subscriptions.remove(uri);
    }

    /// The session's peer when it subscribed to `uri`.
    fn subscriber(&self, uri: &str) -> Option<Peer<RoleServer>> {
        let state = self.lock();
        if state.subscriptions.contains(uri) {
            state.peer.clone()
        } else {
            None
        }
    }
}

/// Every live session of a server (shared by the server's per-session copies).
#[derive(Debug, Default)]
pub(crate) struct SessionRegistry(Mutex<Vec<Weak<SessionState>>>);

impl SessionRegistry {
    /// A new session, remembered (and ended sessions forgotten).
    pub(crate) fn open(&self) -> Arc<SessionState> {
        let session = Arc::new(SessionState::new());
        let mut sessions = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        sessions.retain(|s| s.strong_count() > 0);
        sessions.push(Arc::downgrade(&session));
        session
    }

    /// The peers of the live sessions subscribed to `uri`.
    pub(crate) fn subscribers(&self, uri: &str) -> Vec<Peer<RoleServer>> {
        let sessions = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        sessions
            .iter()
            .filter_map(Weak::upgrade)
            .filter_map(|s| s.subscriber(uri))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscriptions_stop_at_the_limit() {
        let registry = SessionRegistry::default();
        let session = registry.open();
        let mut state = session.lock();
        for i in 0..MAX_SUBSCRIPTIONS {
            state.subscriptions.insert(format!("test://{i}"));
        }
        drop(state);
        // A new URI is refused, one already held is not.
        assert!(!session.lock().has_room_for("test://one-more"));
        assert!(session.lock().has_room_for("test://0"));
        session.unsubscribe("test://0");
        assert!(session.lock().has_room_for("test://one-more"));
    }
}
