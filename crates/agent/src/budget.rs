//! [`Budget`]: what a run's limits need to be enforced: its nested limit scopes and the sink the
//! limit events go to. A [`RunContext`](crate::RunContext) holds one, and so does the
//! conversation it runs on ([`MessageList`](crate::MessageList)), which needs nothing else of
//! the run to enforce the message limit as messages are added.

use std::sync::Arc;

use actuator_events::{Event, EventSink};
use actuator_tool_core::format_limit;

use crate::limits::{Limit, LimitExceeded, LimitKind, Scope};

/// The limit scopes of a run, outermost first, and the sink their limit events go to. Cheap to
/// clone (one reference count).
#[derive(Clone, Default)]
pub(crate) struct Budget {
    inner: Arc<BudgetInner>,
}

#[derive(Clone, Default)]
struct BudgetInner {
    scopes: Vec<Arc<Scope>>,
    events: Option<Arc<dyn EventSink>>,
}

impl std::fmt::Debug for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budget")
            .field("scopes", &self.inner.scopes.len())
            .field("events", &self.inner.events.is_some())
            .finish()
    }
}

impl Budget {
    fn with(&self, f: impl FnOnce(&mut BudgetInner)) -> Budget {
        let mut inner = BudgetInner::clone(&self.inner);
        f(&mut inner);
        Budget {
            inner: Arc::new(inner),
        }
    }

    /// This budget with one more (innermost) scope holding `limits`.
    pub(crate) fn scoped(&self, limits: &[Limit]) -> Budget {
        self.with(|i| i.scopes.push(Arc::new(Scope::new(limits))))
    }

    /// This budget reporting to `sink`.
    pub(crate) fn with_events(&self, sink: Arc<dyn EventSink>) -> Budget {
        self.with(|i| i.events = Some(sink))
    }

    /// The scopes, outermost first.
    pub(crate) fn scopes(&self) -> &[Arc<Scope>] {
        &self.inner.scopes
    }

    /// The innermost scope, the run's own.
    pub(crate) fn own(&self) -> Option<&Arc<Scope>> {
        self.inner.scopes.last()
    }

    /// The sink of the run's events, if any.
    pub(crate) fn events(&self) -> Option<&Arc<dyn EventSink>> {
        self.inner.events.as_ref()
    }

    /// Sends a limit's event to the sink and hands the limit back.
    pub(crate) fn report(&self, e: LimitExceeded) -> LimitExceeded {
        self.report_in(None, e)
    }

    /// [`Budget::report`] from the span `span_id`.
    pub(crate) fn report_in(&self, span_id: Option<&str>, e: LimitExceeded) -> LimitExceeded {
        if let Some(sink) = &self.inner.events {
            sink.emit_in(span_id, Event::Limit(e.event()));
        }
        e
    }

    /// A message limit that an addition to a conversation exceeded, in any scope.
    pub(crate) fn pending_violation(&self) -> Option<LimitExceeded> {
        self.inner.scopes.iter().find_map(|s| s.violation())
    }

    /// Whether a conversation may grow to `count` messages: when that is over the innermost
    /// message limit, the limit is recorded (and reported) for the run to stop with.
    pub(crate) fn admit_messages(&self, count: usize) -> bool {
        match self.message_limit_check(count, false) {
            Ok(()) => true,
            Err((scope, e)) => {
                scope.record_violation(&e);
                false
            }
        }
    }

    /// Checks the innermost message limit against a conversation of `count` messages: over the
    /// limit fails; before a generation, reaching it fails too (`Message limit reached. …`).
    pub(crate) fn message_limit_check(
        &self,
        count: usize,
        before_generate: bool,
    ) -> Result<(), (&Arc<Scope>, LimitExceeded)> {
        for scope in &self.inner.scopes {
            scope.count_messages(count as u64);
        }
        let scope = self
            .inner
            .scopes
            .iter()
            .rev()
            .find_map(|s| s.limit(LimitKind::Message).map(|l| (s, l)));
        let Some((scope, Limit::Message(limit))) = scope else {
            return Ok(());
        };
        let count = count as u64;
        if count > limit || (before_generate && count == limit) {
            let status = if count == limit {
                "reached"
            } else {
                "exceeded"
            };
            let message = format!(
                "Message limit {status}. count: {}; limit: {}",
                format_limit(count as f64),
                format_limit(limit as f64)
            );
            return Err((
                scope,
                self.report(scope.exceeded(LimitKind::Message, count as f64, message)),
            ));
        }
        Ok(())
    }
}
