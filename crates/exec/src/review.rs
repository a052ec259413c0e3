//! Review of tool results (the reference's `inspect_ai.review`, 0.3.285): after a call has run
//! and before the model reads its result, reviewers matched by policy decide whether the run
//! continues, ends, or the next reviewer decides.

use std::sync::Arc;

use actuator_events::ToolEvent;
use actuator_model::{BoxFuture, ChatMessage, MessageContent, ToolCall, ToolCallError};
use actuator_tool_core::{ToolCallView, ToolOutput};
use serde_json::{Map, Value};

pub use actuator_events::ReviewDecision;

use crate::approval::{ToolPattern, parse_patterns};

/// Why a run ends when a reviewer terminates it (the reference's `TerminateSampleError`
/// reason).
pub const REVIEW_TERMINATED: &str = "Tool result reviewer requested termination.";

/// The result a reviewer terminated the run on: recorded on the call's event, as the
/// reference keeps an executed call's result when its review stops the sample (empty when the
/// review was of a call inside an agent this call ran; that call's event has it).
#[derive(Default)]
pub(crate) struct ReviewStop {
    pub(crate) content: MessageContent,
    pub(crate) error: Option<ToolCallError>,
    pub(crate) truncated: Option<(usize, usize)>,
}

impl ReviewStop {
    /// Puts the reviewed result on the call's completed event.
    pub(crate) fn record(&mut self, event: &mut ToolEvent) {
        event.result = std::mem::take(&mut self.content);
        event.error = self.error.take();
        event.truncated = self.truncated.take();
    }
}

/// A reviewer's answer (the reference's `Review`).
#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    /// The decision.
    pub decision: ReviewDecision,
    /// Why; recorded on the decision's event.
    pub explanation: Option<String>,
    /// Anything else worth recording.
    pub metadata: Option<Map<String, Value>>,
}

impl Review {
    /// An answer with a decision and no explanation.
    pub fn new(decision: ReviewDecision) -> Self {
        Review {
            decision,
            explanation: None,
            metadata: None,
        }
    }

    /// Let the model read the result (the reference's `continue`, a keyword in Rust).
    pub fn proceed() -> Self {
        Self::new(ReviewDecision::Continue)
    }

    /// End the run.
    pub fn terminate() -> Self {
        Self::new(ReviewDecision::Terminate)
    }

    /// Let the next matching reviewer decide.
    pub fn escalate() -> Self {
        Self::new(ReviewDecision::Escalate)
    }

    /// Adds an explanation.
    #[must_use]
    pub fn with_explanation(mut self, explanation: impl Into<String>) -> Self {
        self.explanation = Some(explanation.into());
        self
    }
}

/// What a reviewer is shown (the reference's `Reviewer` arguments).
///
/// The reference passes the tool message itself as `result`; here its parts are given
/// (`result`, `error`, `truncated`), as the message is made once the review has let it through.
/// A reviewer is not given the call's extensions: the run's limits reach tools through them, so
/// what a reviewer does (a model it asks, an agent it runs) is never charged to the run, as the
/// reference suspends the agent's token, turn and working limits while reviewing. Time spent
/// reviewing counts as waiting, not working.
#[derive(Debug, Clone, Copy)]
pub struct ReviewRequest<'a> {
    /// The text of the assistant message that made the call.
    pub message: &'a str,
    /// The call as it ran: canonical arguments, after any approver's modification.
    pub call: &'a ToolCall,
    /// The result as the model will read it: after output truncation.
    pub result: &'a MessageContent,
    /// The error the model will read, when the call failed (a timeout, a tool error).
    pub error: Option<&'a ToolCallError>,
    /// `(original_bytes, limit)` when the output was truncated.
    pub truncated: Option<(usize, usize)>,
    /// The tool's untruncated output.
    pub output: &'a ToolOutput,
    /// How the call is shown (the tool's viewer, or the default view).
    pub view: &'a ToolCallView,
    /// The conversation up to and including the assistant turn that made the call.
    pub history: &'a [ChatMessage],
}

/// Decides about an executed call's result (the reference's `Reviewer` protocol).
///
/// ```
/// use actuator_exec::{Review, ReviewRequest, Reviewer};
/// use actuator_model::BoxFuture;
///
/// /// Ends the run when a result mentions a secret.
/// struct SecretMonitor;
/// impl Reviewer for SecretMonitor {
///     fn review<'a>(&'a self, request: ReviewRequest<'a>) -> BoxFuture<'a, Review> {
///         let leaked = match request.output {
///             actuator_tool_core::ToolOutput::Text(t) => t.contains("BEGIN PRIVATE KEY"),
///             _ => false,
///         };
///         Box::pin(async move {
///             if leaked {
///                 Review::terminate().with_explanation("a private key in the output")
///             } else {
///                 Review::proceed()
///             }
///         })
///     }
///     fn name(&self) -> &str {
///         "secret_monitor"
///     }
/// }
/// # let _ = SecretMonitor;
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a reviewer",
    note = "implement `actuator_exec::Reviewer`"
)]
pub trait Reviewer: Send + Sync {
    /// Reviews one executed call's result.
    fn review<'a>(&'a self, request: ReviewRequest<'a>) -> BoxFuture<'a, Review>;

    /// The name recorded on the decision's event (the reference's registry name). Defaults to
    /// the type's name; a policy can override it with [`ReviewPolicy::named`].
    fn name(&self) -> &str {
        std::any::type_name::<Self>()
    }
}

/// A policy pattern that is not a valid glob.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid review pattern '{pattern}': {reason}")]
pub struct ReviewPolicyError {
    /// The pattern.
    pub pattern: String,
    /// What is wrong.
    pub reason: String,
}

/// A reviewer and the tools whose results it reviews (the reference's `ReviewPolicy`).
///
/// Patterns are an [`ApprovalPolicy`](crate::ApprovalPolicy)'s: comma lists are split; a name
/// without `*`/`?` matches that tool exactly; a glob matches names; a pattern with `(` matches
/// the rendered call with its canonical arguments (`write_file(path='/etc/*`). The reference
/// matches review patterns as it matches approval patterns, appending `*` to a bare name, so
/// that its `bash` also reviews `bash_session`; Actuator keeps D4 here as for approval: `bash`
/// is `bash`, and `bash*` says the rest.
#[derive(Clone)]
pub struct ReviewPolicy {
    reviewer: Arc<dyn Reviewer>,
    patterns: Vec<ToolPattern>,
    name: Option<String>,
}

impl std::fmt::Debug for ReviewPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReviewPolicy")
            .field("reviewer", &self.reviewer_name())
            .field("patterns", &self.patterns)
            .finish_non_exhaustive()
    }
}

impl ReviewPolicy {
    /// A policy for the tools matching any of `tools` (each may be a comma list).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use actuator_exec::{Review, ReviewPolicy, ReviewRequest, Reviewer};
    /// use actuator_model::BoxFuture;
    /// struct Pass;
    /// impl Reviewer for Pass {
    ///     fn review<'a>(&'a self, _r: ReviewRequest<'a>) -> BoxFuture<'a, Review> {
    ///         Box::pin(async { Review::proceed() })
    ///     }
    /// }
    /// let policy = ReviewPolicy::new(Arc::new(Pass), ["bash, python", "web_*"]).unwrap();
    /// assert!(ReviewPolicy::new(Arc::new(Pass), ["web_[*"]).is_err());
    /// # let _ = policy;
    /// ```
    pub fn new<I, S>(reviewer: Arc<dyn Reviewer>, tools: I) -> Result<Self, ReviewPolicyError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let patterns = parse_patterns(tools).map_err(|e| ReviewPolicyError {
            pattern: e.pattern,
            reason: e.reason,
        })?;
        Ok(ReviewPolicy {
            reviewer,
            patterns,
            name: None,
        })
    }

    /// Records the reviewer's decisions under `name` (policy files use the entry's name).
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The name decisions of this policy are recorded under.
    pub fn reviewer_name(&self) -> &str {
        self.name.as_deref().unwrap_or_else(|| self.reviewer.name())
    }

    fn matches(&self, call: &ToolCall) -> bool {
        self.patterns.iter().any(|p| p.matches(call))
    }
}

/// One reviewer's decision, as [`apply_review_policies`] gathered it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewDecided {
    /// The reviewer's name ([`ReviewPolicy::reviewer_name`]), or `policy` for the `continue`
    /// recorded when every matching reviewer escalated.
    pub reviewer: String,
    /// Its answer.
    pub review: Review,
}

/// Asks the matching reviewers in order until one does not escalate (the reference's
/// `policy_reviewer`). Returns every decision made, to be recorded, in order; the last is the
/// outcome. A result no policy covers continues and records nothing (review is opt-in per
/// tool); one that every matching reviewer escalated continues, recorded under `policy` as
/// `No reviewer took the escalation for tool {function}`.
///
/// ```
/// use std::sync::Arc;
/// use actuator_exec::{Review, ReviewDecision, ReviewPolicy, ReviewRequest, Reviewer, apply_review_policies, default_view};
/// use actuator_model::{BoxFuture, MessageContent, ToolCall};
/// use actuator_tool_core::ToolOutput;
/// struct Unsure;
/// impl Reviewer for Unsure {
///     fn review<'a>(&'a self, _r: ReviewRequest<'a>) -> BoxFuture<'a, Review> {
///         Box::pin(async { Review::escalate() })
///     }
///     fn name(&self) -> &str { "unsure" }
/// }
/// let policies = [ReviewPolicy::new(Arc::new(Unsure), ["bash"]).unwrap()];
/// let call = ToolCall::new("c1", "bash", serde_json::json!({"cmd": "ls"}));
/// let (view, result, output) = (default_view(&call), MessageContent::from("a b"), ToolOutput::Text("a b".into()));
/// let request = ReviewRequest {
///     message: "", call: &call, result: &result, error: None, truncated: None,
///     output: &output, view: &view, history: &[],
/// };
/// let decided = futures_util::FutureExt::now_or_never(apply_review_policies(&policies, request)).unwrap();
/// assert_eq!(decided.len(), 2);
/// assert_eq!(decided[0].review.decision, ReviewDecision::Escalate);
/// assert_eq!(decided[1].reviewer, "policy");
/// assert_eq!(decided[1].review.explanation.as_deref(), Some("No reviewer took the escalation for tool bash"));
/// ```
pub async fn apply_review_policies(
    policies: &[ReviewPolicy],
    request: ReviewRequest<'_>,
) -> Vec<ReviewDecided> {
    let mut decided = Vec::new();
    for policy in policies.iter().filter(|p| p.matches(request.call)) {
        let review = policy.reviewer.review(request).await;
        let escalated = review.decision == ReviewDecision::Escalate;
        decided.push(ReviewDecided {
            reviewer: policy.reviewer_name().to_owned(),
            review,
        });
        if !escalated {
            return decided;
        }
    }
    if !decided.is_empty() {
        decided.push(ReviewDecided {
            reviewer: "policy".to_owned(),
            review: Review::proceed().with_explanation(format!(
                "No reviewer took the escalation for tool {}",
                request.call.function
            )),
        });
    }
    decided
}
