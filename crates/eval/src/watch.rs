//! What an evaluation watches in its samples' events while they run: the providers' retries,
//! shown on the progress display as they happen (a server that is down is otherwise silent for
//! as long as the retries last), and the model of the first generation, which the log names.

use std::sync::{Arc, OnceLock};

use actuator_events::{Event, EventSink};

use crate::log::convert::StampedLog;
use crate::progress::Progress;

/// Shared by every sample of one evaluation.
pub(crate) struct RunWatch {
    progress: Progress,
    model: OnceLock<String>,
    /// The user's own sink ([`EvalOptions::events`](crate::EvalOptions::events)), which
    /// every sample's events also reach.
    user: Option<Arc<dyn EventSink>>,
}

impl RunWatch {
    #[cfg(test)]
    pub(crate) fn new(progress: Progress) -> Arc<Self> {
        RunWatch::with_user_sink(progress, None)
    }

    pub(crate) fn with_user_sink(
        progress: Progress,
        user: Option<Arc<dyn EventSink>>,
    ) -> Arc<Self> {
        Arc::new(RunWatch {
            progress,
            model: OnceLock::new(),
            user,
        })
    }

    pub(crate) fn progress(&self) -> &Progress {
        &self.progress
    }

    /// The model of the first generation any sample made (or tried to make).
    pub(crate) fn model(&self) -> Option<&str> {
        self.model.get().map(String::as_str)
    }

    /// The sink of one attempt of a sample: everything goes to `log`, and this watch sees it
    /// first.
    pub(crate) fn sink(self: &Arc<Self>, log: Arc<StampedLog>, sample: String) -> Arc<SampleSink> {
        Arc::new(SampleSink {
            watch: Arc::clone(self),
            log,
            sample,
        })
    }
}

/// One attempt's event sink (see [`RunWatch::sink`]).
pub(crate) struct SampleSink {
    watch: Arc<RunWatch>,
    log: Arc<StampedLog>,
    /// "sample 3 (epoch 1)", for the progress lines.
    sample: String,
}

impl EventSink for SampleSink {
    fn emit(&self, event: Event) {
        self.emit_in(None, event);
    }

    fn emit_in(&self, span_id: Option<&str>, event: Event) {
        if let Some(user) = &self.watch.user {
            // The user's sink alone asked for these (the log drops them): it gets the event
            // itself; others it gets a copy of, and the log the original.
            if matches!(event, Event::ToolPending(_) | Event::ModelStream(_)) {
                user.emit_in(span_id, event);
                return;
            }
            user.emit_in(span_id, event.clone());
        }
        match &event {
            Event::ModelRetry(retry) => {
                let _ = self.watch.model.set(retry.model.clone());
                self.watch.progress.retry(&self.sample, retry);
            }
            Event::Model(model) => {
                let _ = self.watch.model.set(model.model.clone());
            }
            _ => {}
        }
        self.log.emit(event);
    }

    fn wants_pending_tool_events(&self) -> bool {
        self.log.wants_pending_tool_events()
            || self
                .watch
                .user
                .as_ref()
                .is_some_and(|u| u.wants_pending_tool_events())
    }

    fn wants_model_stream(&self) -> bool {
        self.log.wants_model_stream()
            || self
                .watch
                .user
                .as_ref()
                .is_some_and(|u| u.wants_model_stream())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::testing::lines;
    use actuator_events::ModelRetryEvent;

    #[test]
    fn a_sample_sink_declines_pending_tool_events_as_its_log_drops_them() {
        let (progress, _out) = lines("t", 1);
        let log = StampedLog::new();
        let sink = RunWatch::new(progress).sink(log.clone(), "sample 1 (epoch 1)".into());
        // The executor asks before it builds one: a log keeps the completed event only.
        assert!(!sink.wants_pending_tool_events());
        // Nor stream deltas: the log keeps the model event, and no provider builds one.
        assert!(!sink.wants_model_stream());
        sink.emit(Event::ToolPending(actuator_events::PendingToolEvent::new(
            "call_1",
            "add",
            serde_json::json!({}),
            1.0,
        )));
        assert!(log.take().is_empty());
    }

    #[test]
    fn a_retry_reaches_the_progress_lines_and_names_the_model_and_the_log_keeps_it() {
        let (progress, out) = lines("t", 1);
        let watch = RunWatch::new(progress);
        let log = StampedLog::new();
        let sink = watch.sink(log.clone(), "sample 7 (epoch 2)".into());
        sink.emit(Event::ModelRetry(ModelRetryEvent::new(
            "openai-api/local",
            1,
            1.0,
            "connection refused",
        )));
        let text = out.text();
        assert!(
            text.starts_with("t: sample 7 (epoch 2): retry openai-api/local: connection refused"),
            "{text}"
        );
        assert_eq!(watch.model(), Some("openai-api/local"));
        assert_eq!(log.take().len(), 1);
    }
}
