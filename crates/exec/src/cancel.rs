//! An operator's cancel of one running call (the reference's `ToolEvent._cancel()`): the call
//! ends with the reference's cancelled result, its siblings and the run go on.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use actuator_tool_core::ToolErrorKind;
use futures_util::future::{AbortHandle, AbortRegistration};

/// The message a call cancelled by an operator gets (the reference's, with error type
/// `timeout` and empty content).
pub const CANCELLED_BY_OPERATOR: &str = "Command timed out before completing.";

/// The error kind a call cancelled by an operator gets.
pub(crate) const CANCELLED_BY_OPERATOR_KIND: ToolErrorKind = ToolErrorKind::Timeout;

/// Cancels running tool calls from outside the run, by call id.
///
/// Give one to the executor with [`ExecuteOptions::cancellation`](crate::ExecuteOptions::cancellation),
/// or to an agent run as a run resource (`RunOptions::resource(canceller.clone())` in
/// `actuator-agent`): every call the run executes, at any depth, registers with it while it
/// runs. [`ToolCallCanceller::cancel`] ends a running call at once: its tool's future is
/// dropped, the model is told `Command timed out before completing.` (error type `timeout`,
/// empty content, as the reference), an info event says the operator cancelled it, and its
/// siblings and the run go on. Calls are found by the id the model gave them, which the
/// pending [`ToolEvent`](actuator_events::ToolEvent) a call emits when it starts carries.
///
/// Clones share the same set of running calls.
///
/// ```
/// use actuator_exec::ToolCallCanceller;
/// let canceller = ToolCallCanceller::new();
/// assert!(canceller.running().is_empty());
/// assert!(!canceller.cancel("call_1"), "nothing runs yet");
/// ```
#[derive(Clone, Default)]
pub struct ToolCallCanceller {
    inner: Arc<Mutex<Running>>,
}

#[derive(Default)]
struct Running {
    next: u64,
    calls: Vec<(u64, String, AbortHandle)>,
}

impl std::fmt::Debug for ToolCallCanceller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCallCanceller")
            .field("running", &self.running())
            .finish()
    }
}

impl ToolCallCanceller {
    /// A canceller with no calls registered.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Running> {
        // Nothing panics while the lock is held; use the data regardless.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Cancels every running call with this id; `false` when none is running (it has not
    /// started, or has already finished).
    pub fn cancel(&self, call_id: &str) -> bool {
        let running = self.lock();
        let mut found = false;
        for (_, id, handle) in &running.calls {
            if id == call_id {
                handle.abort();
                found = true;
            }
        }
        found
    }

    /// The ids of the calls running now, in the order they started.
    pub fn running(&self) -> Vec<String> {
        self.lock()
            .calls
            .iter()
            .map(|(_, id, _)| id.clone())
            .collect()
    }

    /// Registers a call as running until the returned guard is dropped.
    pub(crate) fn register(&self, call_id: &str) -> (Registered, AbortRegistration) {
        let (handle, registration) = AbortHandle::new_pair();
        let mut running = self.lock();
        let token = running.next;
        running.next += 1;
        running.calls.push((token, call_id.to_owned(), handle));
        drop(running);
        let guard = Registered {
            canceller: self.clone(),
            token,
        };
        (guard, registration)
    }
}

/// A call's registration; dropping it (the call finished or was dropped) unregisters it.
pub(crate) struct Registered {
    canceller: ToolCallCanceller,
    token: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut running = self.canceller.lock();
        if let Some(i) = running.calls.iter().position(|(t, _, _)| *t == self.token) {
            running.calls.remove(i);
        }
    }
}
