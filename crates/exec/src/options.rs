//! [`ExecuteOptions`]: how `execute_tools` runs (output limit, concurrency, approval, review, events,
//! the calls' extensions), and the text of a call cancelled by a failing sibling.

use std::sync::Arc;

use actuator_events::EventSink;
use actuator_tool_core::Extensions;

use crate::approval::ApprovalPolicy;
use crate::cancel::ToolCallCanceller;
use crate::review::ReviewPolicy;

/// The text a call gets when a parallel sibling fails fatally.
pub const CANCELLED_BY_SIBLING: &str =
    "Tool call cancelled because a parallel sibling tool call raised an exception.";

/// How `execute_tools` runs: start from `default()` and chain the setters (the struct is
/// `#[non_exhaustive]`, so fields can be added without breaking callers).
///
/// ```
/// use actuator_exec::ExecuteOptions;
/// let options = ExecuteOptions::default().max_output(4096).max_concurrency(2);
/// assert_eq!(options.max_output, Some(4096));
/// assert_eq!(options.max_concurrency, Some(2));
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct ExecuteOptions {
    /// The output limit for tools without their own (`None`: 16 KiB; `Some(0)`: never truncate).
    pub max_output: Option<usize>,
    /// The most calls of one parallel stage that run at once (`None`: no cap).
    pub max_concurrency: Option<usize>,
    /// Approval policies; empty means every valid call is approved.
    pub approval: Vec<ApprovalPolicy>,
    /// Review policies for executed calls' results; empty means no review.
    pub review: Vec<ReviewPolicy>,
    /// Where events go.
    pub events: Option<Arc<dyn EventSink>>,
    /// Data handed to every call's `ToolContext` (for example, the agent run's limits, so a
    /// tool that runs an agent can nest its scope). A [`ToolCallCanceller`] here lets an
    /// operator cancel running calls.
    pub extensions: Extensions,
    /// The span the calls run in (an agent run's), recorded on their events (which share it).
    pub span_id: Option<Arc<str>>,
}

impl std::fmt::Debug for ExecuteOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecuteOptions")
            .field("max_output", &self.max_output)
            .field("max_concurrency", &self.max_concurrency)
            .field("approval", &self.approval)
            .field("review", &self.review)
            .field("events", &self.events.is_some())
            .field("extensions", &self.extensions)
            .field("span_id", &self.span_id)
            .finish()
    }
}

impl ExecuteOptions {
    /// Sets the default output limit.
    #[must_use]
    pub fn max_output(mut self, bytes: usize) -> Self {
        self.max_output = Some(bytes);
        self
    }

    /// Caps how many calls of a stage run at once.
    #[must_use]
    pub fn max_concurrency(mut self, n: usize) -> Self {
        self.max_concurrency = Some(n);
        self
    }

    /// Adds an approval policy (tried after those added before).
    #[must_use]
    pub fn approval(mut self, policy: ApprovalPolicy) -> Self {
        self.approval.push(policy);
        self
    }

    /// Adds a review policy for executed calls' results (tried after those added before).
    #[must_use]
    pub fn review(mut self, policy: ReviewPolicy) -> Self {
        self.review.push(policy);
        self
    }

    /// Sends events to `sink`.
    #[must_use]
    pub fn events(mut self, sink: Arc<dyn EventSink>) -> Self {
        self.events = Some(sink);
        self
    }

    /// Lets `canceller` cancel the calls while they run (an operator's cancel; see
    /// [`ToolCallCanceller`]).
    #[must_use]
    pub fn cancellation(mut self, canceller: ToolCallCanceller) -> Self {
        self.extensions.insert(canceller);
        self
    }

    /// Replaces the data handed to every call's `ToolContext`.
    #[must_use]
    pub fn extensions(mut self, extensions: Extensions) -> Self {
        self.extensions = extensions;
        self
    }

    /// Records the calls' events in the span `span_id` (an agent run's).
    #[must_use]
    pub fn span_id(mut self, span_id: impl Into<Arc<str>>) -> Self {
        self.span_id = Some(span_id.into());
        self
    }
}
