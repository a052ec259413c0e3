//! Which run a server's request belongs to. A server asks for sampling or elicitation while
//! one of our calls to it runs (the request arrives on that call's stream), but MCP does not
//! say which call. With [`McpServer::route_to_calling_run`](crate::McpServer), each
//! forwarded call registers the host of the run that made it while it is in flight; a
//! request is answered by that run when all the calls in flight on the connection belong to
//! one run, and refused, saying why, when they belong to several or to none.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use actuator_tool_core::{CallHost, HostError, ToolHost};

/// The calls in flight on one connection, with the host of the run each came from.
#[derive(Default)]
pub(crate) struct Callers {
    next: AtomicU64,
    calls: Mutex<Vec<(u64, CallHost)>>,
}

/// Removes its call from [`Callers`] when the call ends (or its future is dropped).
pub(crate) struct InFlight<'a> {
    callers: &'a Callers,
    id: u64,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut calls = self.callers.lock();
        calls.retain(|(id, _)| *id != self.id);
    }
}

fn same_host(a: &CallHost, b: &CallHost) -> bool {
    std::ptr::addr_eq(
        a.host() as *const dyn ToolHost,
        b.host() as *const dyn ToolHost,
    )
}

impl Callers {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, CallHost)>> {
        // A panic while holding the lock leaves the list consistent (push and retain).
        self.calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a call made by the run hosting it, until the guard drops.
    pub(crate) fn enter(&self, host: CallHost) -> InFlight<'_> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().push((id, host));
        InFlight { callers: self, id }
    }

    /// The one run whose calls are in flight, or why there is none to answer.
    pub(crate) fn caller(&self, what: &'static str) -> Result<CallHost, HostError> {
        let calls = self.lock();
        let Some((_, first)) = calls.first() else {
            return Err(HostError::Unsupported {
                what,
                reason: "the server asked while none of our runs' calls to it was in flight, \
                         so no run can answer"
                    .into(),
            });
        };
        if calls.iter().any(|(_, host)| !same_host(host, first)) {
            return Err(HostError::Unsupported {
                what,
                reason: "calls from several runs are in flight on this connection and MCP \
                         does not say which one asked; give each run its own McpClient"
                    .into(),
            });
        }
        Ok(first.clone())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    struct Host;
    impl ToolHost for Host {}

    #[test]
    fn one_run_in_flight_answers_and_none_or_several_are_refused() {
        let callers = Callers::default();
        assert!(callers.caller("sampling").is_err());
        let run_a = CallHost::new(Host);
        let run_b = CallHost::new(Host);
        let first = callers.enter(run_a.clone());
        let second = callers.enter(run_a.clone());
        assert!(same_host(&callers.caller("sampling").unwrap(), &run_a));
        drop(first);
        let other = callers.enter(run_b);
        let err = callers.caller("sampling").unwrap_err().to_string();
        assert!(err.contains("several runs"), "{err}");
        drop(other);
        drop(second);
        assert!(callers.caller("elicitation").is_err());
    }
}
