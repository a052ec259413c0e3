//! Progress a tool reports while it runs ([`ToolContext::report_progress`]): whoever runs the
//! call decides where it goes (an MCP server sends `notifications/progress` to the client that
//! asked for it; an agent run records it as an event). Nobody listening costs nothing.

use std::sync::Arc;

use crate::context::ToolContext;

/// One progress report: how far along, out of how much when known, and what is happening.
///
/// ```
/// use actuator_tool_core::ProgressReport;
/// let report = ProgressReport::new(2.0).total(5.0).message("Reading page 2");
/// assert_eq!(report.total, Some(5.0));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProgressReport {
    /// The progress so far (it should grow with each report).
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// What is happening, for people.
    pub message: Option<String>,
}

impl ProgressReport {
    /// A report of `progress`.
    pub fn new(progress: f64) -> Self {
        ProgressReport {
            progress,
            total: None,
            message: None,
        }
    }

    /// Sets the total.
    #[must_use]
    pub fn total(mut self, total: f64) -> Self {
        self.total = Some(total);
        self
    }

    /// Sets the message.
    #[must_use]
    pub fn message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

/// Where a call's progress reports go. Called on the tool's task: an implementation must not
/// block (hand the report on, and drop it rather than wait when its receiver is behind).
pub trait ProgressSink: Send + Sync + 'static {
    /// `report` from the call `call_id` of the tool `tool`.
    fn progress(&self, tool: &str, call_id: &str, report: ProgressReport);
}

/// The progress sink of a call, in its [`ToolContext::extensions`] (put there by whoever runs
/// the call).
#[derive(Clone)]
pub struct ToolProgress(Arc<dyn ProgressSink>);

impl std::fmt::Debug for ToolProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ToolProgress")
    }
}

impl ToolProgress {
    /// Reports go to `sink`.
    pub fn new(sink: impl ProgressSink) -> Self {
        ToolProgress(Arc::new(sink))
    }
}

impl ToolContext {
    /// Reports the call's progress to whoever runs it (an MCP client that asked for progress,
    /// the run's events). Returns whether anyone listens.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use actuator_tool_core::{ProgressReport, ProgressSink, ToolContext, ToolProgress};
    ///
    /// #[derive(Default, Clone)]
    /// struct Seen(Arc<Mutex<Vec<f64>>>);
    /// impl ProgressSink for Seen {
    ///     fn progress(&self, _tool: &str, _call_id: &str, report: ProgressReport) {
    ///         self.0.lock().unwrap().push(report.progress);
    ///     }
    /// }
    /// let mut ctx = ToolContext::new("call_1", "index");
    /// assert!(!ctx.report_progress(ProgressReport::new(1.0))); // nobody listens
    /// let seen = Seen::default();
    /// ctx.extensions.insert(ToolProgress::new(seen.clone()));
    /// assert!(ctx.report_progress(ProgressReport::new(1.0).total(2.0)));
    /// assert_eq!(*seen.0.lock().unwrap(), [1.0]);
    /// ```
    pub fn report_progress(&self, report: ProgressReport) -> bool {
        match self.extensions.get::<ToolProgress>() {
            Some(sink) => {
                sink.0.progress(&self.function, &self.call_id, report);
                true
            }
            None => false,
        }
    }
}
