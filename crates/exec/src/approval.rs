//! Approval (§7, with D4): approvers decide whether a validated call may run, policies map tool
//! patterns to approvers, and escalation falls through to the next matching policy.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex};

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

/// One pattern of a policy.
#[derive(Debug, Clone)]
enum ToolPattern {
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

    fn matches(&self, call: &ToolCall) -> bool {
        match self {
            ToolPattern::Exact(name) => call.function == name,
            ToolPattern::NameGlob(p) => p.matches(&call.function),
            ToolPattern::CallGlob(p) => p.matches(&call.render_in(usize::MAX)),
        }
    }
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
        let mut patterns = Vec::new();
        for spec in tools {
            for part in spec.as_ref().split(',') {
                let part = part.trim();
                if !part.is_empty() {
                    patterns.push(ToolPattern::parse(part)?);
                }
            }
        }
        Ok(ApprovalPolicy {
            approver,
            patterns,
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

type Io = (Box<dyn BufRead + Send>, Box<dyn Write + Send>);

/// An approver that shows each call on a terminal and asks `y` (approve), `n` (reject),
/// `e` (edit the arguments as JSON) or `q` (terminate).
///
/// Without a terminal on stdin it rejects, saying so, rather than blocking.
pub struct TerminalApprover {
    io: Option<Arc<Mutex<Io>>>,
}

impl std::fmt::Debug for TerminalApprover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalApprover").finish_non_exhaustive()
    }
}

impl Default for TerminalApprover {
    fn default() -> Self {
        Self::new()
    }
}

impl TerminalApprover {
    /// Asks on stdin/stdout.
    pub fn new() -> Self {
        TerminalApprover { io: None }
    }

    /// Asks on the given reader and writer (for scripts and tests).
    pub fn with_io(
        reader: impl BufRead + Send + 'static,
        writer: impl Write + Send + 'static,
    ) -> Self {
        TerminalApprover {
            io: Some(Arc::new(Mutex::new((Box::new(reader), Box::new(writer))))),
        }
    }

    fn ask(io: &mut Io, call: &ToolCall, view: &ToolCallView, message: &str) -> Approval {
        let (reader, writer) = io;
        let mut show = String::new();
        if !message.is_empty() {
            show.push_str(message);
            show.push_str("\n\n");
        }
        for part in [&view.context, &view.call].into_iter().flatten() {
            if let Some(title) = &part.title {
                show.push_str(title);
                show.push('\n');
            }
            show.push_str(&part.content);
            show.push('\n');
        }
        loop {
            let _ = write!(
                writer,
                "{show}Approve this call? [y]es / [n]o / [e]dit / [q]uit: "
            );
            let _ = writer.flush();
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return Approval::reject("The approver's terminal closed."),
                Ok(_) => {}
            }
            match line.trim() {
                "y" | "yes" => return Approval::approve(),
                "n" | "no" => {
                    let _ = write!(writer, "Reason for the model (optional): ");
                    let _ = writer.flush();
                    let mut reason = String::new();
                    let _ = reader.read_line(&mut reason);
                    let reason = reason.trim();
                    return if reason.is_empty() {
                        Approval::new(ApprovalDecision::Reject)
                    } else {
                        Approval::reject(reason)
                    };
                }
                "q" | "quit" => return Approval::terminate(),
                "e" | "edit" => {
                    let _ = write!(writer, "New arguments as a JSON object: ");
                    let _ = writer.flush();
                    let mut json = String::new();
                    let _ = reader.read_line(&mut json);
                    match serde_json::from_str::<Value>(json.trim()) {
                        Ok(Value::Object(arguments)) => {
                            let mut modified = call.clone();
                            modified.arguments = arguments.into();
                            return Approval::modify(modified);
                        }
                        _ => {
                            let _ = writeln!(writer, "That is not a JSON object; try again.");
                        }
                    }
                }
                _ => {
                    let _ = writeln!(writer, "Please answer y, n, e or q.");
                }
            }
            show.clear();
        }
    }
}

impl Approver for TerminalApprover {
    /// The reference's name for its terminal approver.
    fn name(&self) -> &str {
        "human"
    }

    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> BoxFuture<'a, Approval> {
        let call = request.call.clone();
        let view = request.view.clone();
        let message = request.message.to_owned();
        let io = self.io.clone();
        Box::pin(async move {
            let work = move || match io {
                Some(io) => match io.lock() {
                    Ok(mut io) => Self::ask(&mut io, &call, &view, &message),
                    Err(_) => Approval::reject("The approver's terminal is unavailable."),
                },
                None => {
                    if !std::io::stdin().is_terminal() {
                        return Approval::reject(
                            "No terminal is available to ask for approval, so the call was not run.",
                        );
                    }
                    let mut io: Io = (
                        Box::new(std::io::BufReader::new(std::io::stdin())),
                        Box::new(std::io::stdout()),
                    );
                    Self::ask(&mut io, &call, &view, &message)
                }
            };
            // Reading a terminal blocks: keep it off the async workers.
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => handle
                    .spawn_blocking(work)
                    .await
                    .unwrap_or_else(|_| Approval::reject("The approver failed.")),
                Err(_) => work(),
            }
        })
    }
}
