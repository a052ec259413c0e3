//! Approval (§7, with D4): approvers decide whether a validated call may run, policies map tool
//! patterns to approvers, and escalation falls through to the next matching policy.

use std::sync::Arc;

use actuator_model::{BoxFuture, ChatMessage, ToolCall};
use actuator_tool_core::{ContentFormat, ToolCallContent, ToolCallView};
use serde_json::{Map, Value};

pub use actuator_events::ApprovalDecision;

/// An approver's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Approval {
    /// The decision.
    pub decision: ApprovalDecision,
    /// The modified call, for [`ApprovalDecision::Modify`].
    pub modified: Option<ToolCall>,
    /// Why; a rejection's explanation is what the model sees.
    pub explanation: Option<String>,
    /// Anything else worth recording.
    pub metadata: Option<Map<String, Value>>,
}

impl Approval {
    /// An answer with a decision and no explanation.
    pub fn new(decision: ApprovalDecision) -> Self {
        Approval {
            decision,
            modified: None,
            explanation: None,
            metadata: None,
        }
    }

    /// Approve.
    pub fn approve() -> Self {
        Self::new(ApprovalDecision::Approve)
    }

    /// Reject, telling the model why.
    pub fn reject(explanation: impl Into<String>) -> Self {
        Self::new(ApprovalDecision::Reject).with_explanation(explanation)
    }

    /// Run `call` instead (it must call the same function).
    pub fn modify(call: ToolCall) -> Self {
        Approval {
            modified: Some(call),
            ..Self::new(ApprovalDecision::Modify)
        }
    }

    /// End the run.
    pub fn terminate() -> Self {
        Self::new(ApprovalDecision::Terminate)
    }

    /// Let the next policy decide.
    pub fn escalate() -> Self {
        Self::new(ApprovalDecision::Escalate)
    }

    /// Adds an explanation.
    #[must_use]
    pub fn with_explanation(mut self, explanation: impl Into<String>) -> Self {
        self.explanation = Some(explanation.into());
        self
    }
}

/// What an approver is shown: the assistant's text, the call, its view, and the conversation.
#[derive(Debug, Clone, Copy)]
pub struct ApprovalRequest<'a> {
    /// The text of the assistant message that made the call.
    pub message: &'a str,
    /// The call (already validated).
    pub call: &'a ToolCall,
    /// How the call is shown (the tool's viewer, or the default view).
    pub view: &'a ToolCallView,
    /// The conversation up to the call.
    pub history: &'a [ChatMessage],
}

/// Decides whether a call may run.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an approver",
    note = "implement `actuator_exec::Approver`, or use `auto_approver(..)` / `TerminalApprover`"
)]
pub trait Approver: Send + Sync {
    /// Decides about one call.
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> BoxFuture<'a, Approval>;

    /// The name recorded on the call's event as the approver of its decision (the reference's
    /// registry name, such as `auto` or `human`). Defaults to the type's name; a policy can
    /// override it with [`ApprovalPolicy::named`].
    fn name(&self) -> &str {
        std::any::type_name::<Self>()
    }
}

/// An approver that always gives the same decision, explained as `Automatic decision.`
///
/// ```
/// use actuator_exec::{ApprovalDecision, auto_approver};
/// let reject_all = auto_approver(ApprovalDecision::Reject);
/// # let _ = reject_all;
/// ```
pub fn auto_approver(decision: ApprovalDecision) -> Arc<dyn Approver> {
    Arc::new(AutoApprover { decision })
}

struct AutoApprover {
    decision: ApprovalDecision,
}

impl Approver for AutoApprover {
    fn approve<'a>(&'a self, _request: ApprovalRequest<'a>) -> BoxFuture<'a, Approval> {
        Box::pin(std::future::ready(
            Approval::new(self.decision).with_explanation("Automatic decision."),
        ))
    }

    fn name(&self) -> &str {
        "auto"
    }
}

/// One pattern of a policy (approval's and review's).
#[derive(Debug, Clone)]
pub(crate) enum ToolPattern {
    /// No `*`/`?`/`(`: the tool name exactly.
    Exact(String),
    /// A glob on the tool name.
    NameGlob(glob::Pattern),
    /// Contains `(`: a glob on the rendered call `name(k='v', …)`.
    CallGlob(glob::Pattern),
}

impl ToolPattern {
    fn parse(spec: &str) -> Result<Self, ApprovalPolicyError> {
        let glob = |s: &str| {
            glob::Pattern::new(s).map_err(|e| ApprovalPolicyError {
                pattern: s.to_owned(),
                reason: e.to_string(),
            })
        };
        if spec.contains('(') {
            Ok(ToolPattern::CallGlob(glob(spec)?))
        } else if spec.contains(['*', '?', '[']) {
            Ok(ToolPattern::NameGlob(glob(spec)?))
        } else {
            Ok(ToolPattern::Exact(spec.to_owned()))
        }
    }

    pub(crate) fn matches(&self, call: &ToolCall) -> bool {
        match self {
            ToolPattern::Exact(name) => call.function == name,
            ToolPattern::NameGlob(p) => p.matches(&call.function),
            ToolPattern::CallGlob(p) => p.matches(&call.render_in(usize::MAX)),
        }
    }
}

/// The patterns of `tools`, each entry a comma list.
pub(crate) fn parse_patterns<I, S>(tools: I) -> Result<Vec<ToolPattern>, ApprovalPolicyError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut patterns = Vec::new();
    for spec in tools {
        for part in spec.as_ref().split(',') {
            let part = part.trim();
            if !part.is_empty() {
                patterns.push(ToolPattern::parse(part)?);
            }
        }
    }
    Ok(patterns)
}

/// A policy pattern that is not a valid glob.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid approval pattern '{pattern}': {reason}")]
pub struct ApprovalPolicyError {
    /// The pattern.
    pub pattern: String,
    /// What is wrong.
    pub reason: String,
}

/// An approver and the tools it decides for.
///
/// Patterns (comma lists are split): a name without `*`/`?` matches that tool exactly (D4: `add`
/// does not match `addition`); a glob (`bash*`) matches names; a pattern with `(` matches the
/// rendered call (`addition(x=1*`).
#[derive(Clone)]
pub struct ApprovalPolicy {
    approver: Arc<dyn Approver>,
    patterns: Vec<ToolPattern>,
    name: Option<String>,
}

impl std::fmt::Debug for ApprovalPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalPolicy")
            .field("approver", &self.approver_name())
            .field("patterns", &self.patterns)
            .finish_non_exhaustive()
    }
}

impl ApprovalPolicy {
    /// A policy for the tools matching any of `tools` (each may be a comma list).
    ///
    /// ```
    /// use actuator_exec::{ApprovalDecision, ApprovalPolicy, auto_approver};
    /// let policy = ApprovalPolicy::new(auto_approver(ApprovalDecision::Approve), ["read_file, list_dir", "git_*"]).unwrap();
    /// # let _ = policy;
    /// ```
    pub fn new<I, S>(approver: Arc<dyn Approver>, tools: I) -> Result<Self, ApprovalPolicyError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Ok(ApprovalPolicy {
            approver,
            patterns: parse_patterns(tools)?,
            name: None,
        })
    }

    /// Records the approver's decisions under `name` (policy files use the entry's name).
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The name decisions of this policy are recorded under.
    pub fn approver_name(&self) -> &str {
        self.name.as_deref().unwrap_or_else(|| self.approver.name())
    }

    fn matches(&self, call: &ToolCall) -> bool {
        self.patterns.iter().any(|p| p.matches(call))
    }
}

/// What [`apply_policies`] decided, and which approver decided it.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyDecision {
    /// The deciding approver's answer.
    pub approval: Approval,
    /// The deciding approver's name ([`ApprovalPolicy::approver_name`]); `None` when every
    /// matching approver escalated or none matched, and the call was rejected for that.
    pub approver: Option<String>,
}

/// Asks the policies in order; the first decision that is not `escalate` wins. With none left,
/// the call is rejected: `No approval granted for tool {function}` when some policy matched,
/// `No approvers registered for tool {function}` when none did.
pub async fn apply_policies(
    policies: &[ApprovalPolicy],
    request: ApprovalRequest<'_>,
) -> PolicyDecision {
    let mut matched = false;
    for policy in policies.iter().filter(|p| p.matches(request.call)) {
        matched = true;
        let approval = policy.approver.approve(request).await;
        if approval.decision != ApprovalDecision::Escalate {
            return PolicyDecision {
                approval,
                approver: Some(policy.approver_name().to_owned()),
            };
        }
    }
    let function = &request.call.function;
    PolicyDecision {
        approval: Approval::reject(if matched {
            format!("No approval granted for tool {function}")
        } else {
            format!("No approvers registered for tool {function}")
        }),
        approver: None,
    }
}

/// The view of a call when its tool has no viewer: the rendered call in a code block.
pub fn default_view(call: &ToolCall) -> ToolCallView {
    ToolCallView {
        context: None,
        call: Some(ToolCallContent {
            title: None,
            format: ContentFormat::Markdown,
            content: format!("```python\n{}\n```\n", call.render_in(80)),
        }),
    }
}
