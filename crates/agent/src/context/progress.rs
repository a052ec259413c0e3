//! A tool's progress reports in an agent run: each becomes an info event of the run
//! (`source: "progress"`), which the console transcript shows and the log keeps.

use std::sync::Arc;

use actuator_events::{Event, EventSink, InfoEvent};
use actuator_tool_core::{ProgressReport, ProgressSink};

/// The run's sink and the span the calls run in.
pub(super) struct RunProgress(pub(super) Arc<dyn EventSink>, pub(super) Option<Arc<str>>);

impl ProgressSink for RunProgress {
    fn progress(&self, tool: &str, call_id: &str, report: ProgressReport) {
        let mut message = format!("{tool} ({call_id}): {}", report.progress);
        if let Some(total) = report.total {
            message.push_str(&format!(" of {total}"));
        }
        if let Some(text) = report.message {
            message.push_str(": ");
            message.push_str(&text);
        }
        self.0.emit_in(
            self.1.as_deref(),
            Event::Info(InfoEvent {
                source: Some("progress".to_owned()),
                message,
            }),
        );
    }
}
