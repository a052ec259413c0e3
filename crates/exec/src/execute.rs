//! `execute_tools`: stage the last assistant message's calls, run each through the per-call
//! pipeline, and return the tool messages in declared order.

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use actuator_model::{
    ChatMessage, ChatMessageAssistant, MessageContent, ModelOutput, ToolCall, ToolCallError,
};
use actuator_tool_core::__private::panic_message;
use actuator_tool_core::{
    DEFAULT_MAX_OUTPUT, Extensions, FatalToolError, ToolArgs, ToolContext, ToolDef, ToolDefError,
    ToolError, ToolFailure, ToolKind, ToolOutput, check_nesting_depth, truncate_tool_output,
};
use futures_util::FutureExt;
use futures_util::stream::{FuturesUnordered, StreamExt};
use serde_json::Value;
use tracing::Instrument;

use crate::approval::{
    ApprovalDecision, ApprovalPolicy, ApprovalRequest, apply_policies, default_view,
};
use crate::conversation::ConversationHandler;
use crate::error::ExecError;
use actuator_events::{ApprovalEvent, Event, EventSink, LimitExceeded, ToolEvent, unix_seconds};

/// The text a call gets when a parallel sibling fails fatally.
pub const CANCELLED_BY_SIBLING: &str =
    "Tool call cancelled because a parallel sibling tool call raised an exception.";

/// How `execute_tools` runs.
#[derive(Clone, Default)]
pub struct ExecuteOptions {
    /// The output limit for tools without their own (`None`: 16 KiB; `Some(0)`: never truncate).
    pub max_output: Option<usize>,
    /// The most calls of one parallel stage that run at once (`None`: no cap).
    pub max_concurrency: Option<usize>,
    /// Approval policies; empty means every valid call is approved.
    pub approval: Vec<ApprovalPolicy>,
    /// Where events go.
    pub events: Option<Arc<dyn EventSink>>,
    /// Data handed to every call's [`ToolContext`] (for example, the agent run's limits, so a
    /// tool that runs an agent can nest its scope).
    pub extensions: Extensions,
}

impl std::fmt::Debug for ExecuteOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecuteOptions")
            .field("max_output", &self.max_output)
            .field("max_concurrency", &self.max_concurrency)
            .field("approval", &self.approval)
            .field("events", &self.events.is_some())
            .field("extensions", &self.extensions)
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

    /// Sends events to `sink`.
    #[must_use]
    pub fn events(mut self, sink: Arc<dyn EventSink>) -> Self {
        self.events = Some(sink);
        self
    }
}

/// What `execute_tools` returns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecuteToolsResult {
    /// One tool message per call, in declared order, each followed by the extra messages its
    /// conversation-taking tool added.
    pub messages: Vec<ChatMessage>,
    /// The last output a conversation-taking tool returned, in declared order.
    pub output: Option<ModelOutput>,
    /// Time spent waiting for approvers, summed over calls (not working time).
    pub waiting: Duration,
}

/// Splits calls into stages (§6.2): consecutive calls to parallel tools form one stage; any
/// other call (serial or unknown) is a stage alone.
///
/// ```
/// use actuator_exec::plan_stages;
/// let stages = plan_stages(&[true, true, false, true, false, true]);
/// assert_eq!(stages, vec![0..2, 2..3, 3..4, 4..5, 5..6]);
/// ```
pub fn plan_stages(parallel: &[bool]) -> Vec<std::ops::Range<usize>> {
    let mut stages = Vec::new();
    let mut start = 0;
    while start < parallel.len() {
        let mut end = start + 1;
        if parallel[start] {
            while end < parallel.len() && parallel[end] {
                end += 1;
            }
        }
        stages.push(start..end);
        start = end;
    }
    stages
}

/// Checks that no two tools share a name (D7).
pub fn check_tool_names(tools: &[ToolDef]) -> Result<(), ToolDefError> {
    let mut seen = HashSet::with_capacity(tools.len());
    for tool in tools {
        if !seen.insert(tool.name()) {
            return Err(ToolDefError::DuplicateName {
                name: tool.name().to_owned(),
            });
        }
    }
    Ok(())
}

/// Runs the tool calls of the last message, if it is an assistant message with calls.
///
/// Per call, in order: parse error → nesting check → lookup (`Tool {name} not found`) →
/// schema validation → approval → deserialization → invocation (under the tool's timeout) →
/// result conversion → truncation. Recoverable errors become tool messages with `error` set;
/// a fatal error or a panic cancels the stage's other calls, skips later stages and returns
/// [`ExecError::Fatal`] with the messages produced so far.
///
/// Dropping the returned future cancels every call in flight (a plain `fn` tool already running
/// on the blocking pool finishes there, but its result is discarded).
pub async fn execute_tools(
    messages: &[ChatMessage],
    tools: &[ToolDef],
    options: &ExecuteOptions,
) -> Result<ExecuteToolsResult, ExecError> {
    let Some(ChatMessage::Assistant(assistant)) = messages.last() else {
        return Ok(ExecuteToolsResult::default());
    };
    let calls = assistant.calls();
    if calls.is_empty() {
        return Ok(ExecuteToolsResult::default());
    }
    check_tool_names(tools)?;

    let runner = Runner {
        messages,
        assistant,
        tools,
        options,
    };
    let parallel: Vec<bool> = calls
        .iter()
        .map(|c| runner.lookup(&c.function).is_some_and(ToolDef::parallel))
        .collect();

    let mut done: Vec<Option<CallDone>> = (0..calls.len()).map(|_| None).collect();
    for stage in plan_stages(&parallel) {
        if stage.len() == 1 {
            let i = stage.start;
            match runner.run_call(&calls[i]).await {
                Ok(d) => done[i] = Some(d),
                Err(stop) => return Err(runner.stopped(stop, &calls[i], done)),
            }
            continue;
        }
        let cap = options.max_concurrency.unwrap_or(usize::MAX).max(1);
        if let Some(workers) = crate::spread::spreads(stage.len()) {
            let spread =
                crate::spread::run_stage(&runner, calls, stage.clone(), workers, cap, &mut done);
            if let Err((i, stop)) = spread.await {
                for j in stage.clone() {
                    if j != i && done[j].is_none() {
                        done[j] = Some(runner.cancelled(&calls[j]));
                    }
                }
                return Err(runner.stopped(stop, &calls[i], done));
            }
            continue;
        }
        let start = |i: usize| runner.run_call(&calls[i]).map(move |r| (i, r));
        let mut pending = FuturesUnordered::new();
        let mut next = stage.start;
        while next < stage.end && pending.len() < cap {
            pending.push(start(next));
            next += 1;
        }
        while let Some((i, outcome)) = pending.next().await {
            match outcome {
                Ok(d) => done[i] = Some(d),
                Err(stop) => {
                    drop(pending);
                    for j in stage.clone() {
                        if j != i && done[j].is_none() {
                            done[j] = Some(runner.cancelled(&calls[j]));
                        }
                    }
                    return Err(runner.stopped(stop, &calls[i], done));
                }
            }
            if next < stage.end {
                pending.push(start(next));
                next += 1;
            }
        }
    }

    let mut result = ExecuteToolsResult::default();
    for d in done.into_iter().flatten() {
        result.messages.push(d.message);
        result.messages.extend(d.extra);
        result.waiting += d.waiting;
        if d.output.is_some() {
            result.output = d.output;
        }
    }
    Ok(result)
}

/// A finished call.
pub(crate) struct CallDone {
    message: ChatMessage,
    extra: Vec<ChatMessage>,
    output: Option<ModelOutput>,
    waiting: Duration,
}

/// Why a call stopped the run.
pub(crate) enum Stop {
    Fatal(FatalToolError),
    Limit(Box<LimitExceeded>),
    Terminated,
    BadModify { modified: String },
}

pub(crate) struct Runner<'a> {
    pub(crate) messages: &'a [ChatMessage],
    pub(crate) assistant: &'a ChatMessageAssistant,
    pub(crate) tools: &'a [ToolDef],
    pub(crate) options: &'a ExecuteOptions,
}

/// What happened to one call before it produced a result.
struct Attempt {
    approval: Option<ApprovalEvent>,
    approval_wait: Duration,
}

impl Runner<'_> {
    fn lookup(&self, name: &str) -> Option<&ToolDef> {
        self.tools.iter().find(|t| t.name() == name)
    }

    fn emit(&self, event: ToolEvent) {
        if let Some(sink) = &self.options.events {
            sink.emit(Event::Tool(event));
        }
    }

    fn stopped(&self, stop: Stop, call: &ToolCall, done: Vec<Option<CallDone>>) -> ExecError {
        let mut messages = Vec::new();
        for d in done.into_iter().flatten() {
            messages.push(d.message);
            messages.extend(d.extra);
        }
        let function = call.function.clone();
        let call_id = call.id.clone();
        match stop {
            Stop::Fatal(cause) => ExecError::Fatal {
                function,
                call_id,
                cause,
                messages,
            },
            Stop::Limit(limit) => ExecError::Limit {
                limit,
                function,
                call_id,
                messages,
            },
            Stop::Terminated => ExecError::Terminated {
                function,
                call_id,
                messages,
            },
            Stop::BadModify { modified } => ExecError::InvalidModification {
                original: function,
                modified,
                messages,
            },
        }
    }

    fn cancelled(&self, call: &ToolCall) -> CallDone {
        let now = unix_seconds(SystemTime::now());
        let error = ToolCallError {
            kind: actuator_tool_core::ToolErrorKind::Cancelled,
            message: CANCELLED_BY_SIBLING.to_owned(),
        };
        self.emit(ToolEvent {
            id: call.id.clone(),
            function: call.function.clone(),
            arguments: call.arguments.clone(),
            result: MessageContent::default(),
            error: Some(error.clone()),
            truncated: None,
            approval: None,
            started_at: now,
            completed_at: now,
            working_time: 0.0,
            fatal: None,
        });
        CallDone {
            message: ChatMessage::tool("", call.id.clone(), call.function.clone(), Some(error)),
            extra: Vec::new(),
            output: None,
            waiting: Duration::ZERO,
        }
    }

    pub(crate) async fn run_call(&self, call: &ToolCall) -> Result<CallDone, Stop> {
        let span = tracing::info_span!("tool_call", tool = %call.function, call_id = %call.id);
        async move {
            let started = SystemTime::now();
            let clock = Instant::now();
            let mut attempt = Attempt {
                approval: None,
                approval_wait: Duration::ZERO,
            };
            let outcome = self.pipeline(call, &mut attempt).await;
            let completed = SystemTime::now();
            let waiting = attempt.approval_wait;
            let working_time = clock
                .elapsed()
                .saturating_sub(attempt.approval_wait)
                .as_secs_f64();
            // Without a sink the event is never seen: skip its copies (empty strings and maps
            // do not allocate).
            let recording = self.options.events.is_some();
            let mut event = ToolEvent {
                id: if recording {
                    call.id.clone()
                } else {
                    String::new()
                },
                function: if recording {
                    call.function.clone()
                } else {
                    String::new()
                },
                arguments: if recording {
                    call.arguments.clone()
                } else {
                    Default::default()
                },
                result: MessageContent::default(),
                error: None,
                truncated: None,
                approval: attempt.approval,
                started_at: unix_seconds(started),
                completed_at: unix_seconds(completed),
                working_time,
                fatal: None,
            };
            match outcome {
                Ok(Landed::Output { output, limit }) => {
                    let (content, truncated) = self.finish_output(&call.function, output, limit);
                    if recording {
                        event.result = content.clone();
                    }
                    event.truncated = truncated;
                    self.emit(event);
                    Ok(CallDone {
                        message: ChatMessage::tool(
                            content,
                            call.id.clone(),
                            call.function.clone(),
                            None,
                        ),
                        extra: Vec::new(),
                        output: None,
                        waiting,
                    })
                }
                Ok(Landed::Conversation(out)) => {
                    let out = *out;
                    if recording {
                        event.result = out.content.clone();
                    }
                    self.emit(event);
                    Ok(CallDone {
                        message: ChatMessage::tool(
                            out.content,
                            call.id.clone(),
                            call.function.clone(),
                            None,
                        ),
                        extra: out.messages,
                        output: out.output,
                        waiting,
                    })
                }
                Err(Failed::Tool(err, limit)) => {
                    let content = match err.output() {
                        Some(partial) => {
                            let (content, truncated) = self.finish_output(
                                &call.function,
                                ToolOutput::Text(partial.to_owned()),
                                limit,
                            );
                            event.truncated = truncated;
                            content
                        }
                        None => MessageContent::default(),
                    };
                    let error = ToolCallError::from(&err);
                    tracing::debug!(kind = %err.kind(), message = err.message(), "tool error");
                    if recording {
                        event.result = content.clone();
                        event.error = Some(error.clone());
                    }
                    self.emit(event);
                    Ok(CallDone {
                        message: ChatMessage::tool(
                            content,
                            call.id.clone(),
                            call.function.clone(),
                            Some(error),
                        ),
                        extra: Vec::new(),
                        output: None,
                        waiting,
                    })
                }
                Err(Failed::Stop(stop)) => {
                    event.fatal = Some(match &stop {
                        Stop::Fatal(cause) => cause.to_string(),
                        Stop::Limit(limit) => limit.to_string(),
                        Stop::Terminated => "Tool call approver requested termination.".to_owned(),
                        Stop::BadModify { modified } => format!("modified call names '{modified}'"),
                    });
                    tracing::warn!(fatal = event.fatal.as_deref(), "tool call stopped the run");
                    self.emit(event);
                    Err(stop)
                }
            }
        }
        .instrument(span)
        .await
    }

    /// Truncates text output to the call's limit.
    fn finish_output(
        &self,
        function: &str,
        output: ToolOutput,
        limit: usize,
    ) -> (MessageContent, Option<(usize, usize)>) {
        match output {
            ToolOutput::Text(text) => match truncate_tool_output(function, &text, limit) {
                Some(t) => (
                    MessageContent::Text(t.output),
                    Some((t.original_bytes, t.limit)),
                ),
                None => (MessageContent::Text(text), None),
            },
            ToolOutput::Content(parts) => (MessageContent::Parts(parts), None),
        }
    }

    fn limit_for(&self, def: Option<&ToolDef>) -> usize {
        def.and_then(ToolDef::max_output)
            .or(self.options.max_output)
            .unwrap_or(DEFAULT_MAX_OUTPUT)
    }

    async fn pipeline(&self, call: &ToolCall, attempt: &mut Attempt) -> Result<Landed, Failed> {
        let fail = |e: ToolError, def: Option<&ToolDef>| Failed::Tool(e, self.limit_for(def));
        // 1. The provider's arguments could not be parsed.
        if let Some(parse_error) = &call.parse_error {
            return Err(fail(ToolError::parsing(parse_error.clone()), None));
        }
        // 2. Nesting, before anything walks the arguments recursively.
        let mut arguments = Value::Object(call.arguments.clone());
        check_nesting_depth(&arguments).map_err(|e| fail(e, None))?;
        // 3. Lookup.
        let Some(def) = self.lookup(&call.function) else {
            return Err(fail(
                ToolError::parsing(format!("Tool {} not found", call.function)),
                None,
            ));
        };
        // 4. Validation (before approval: approvers only see valid calls, D2).
        def.validate(&arguments).map_err(|e| fail(e, Some(def)))?;
        // 5. Approval.
        let mut call_ref = call;
        let modified_call;
        if !self.options.approval.is_empty() {
            let view = match def.viewer() {
                None => default_view(call),
                Some(viewer) => {
                    match std::panic::catch_unwind(AssertUnwindSafe(|| {
                        viewer.view(&call.function, &call.arguments)
                    })) {
                        Ok(mut v) => {
                            // Templates name arguments as `{{param}}` (the reference's
                            // substitute_tool_call_content).
                            v.call = v.call.map(|c| c.substitute(&call.arguments));
                            v.context = v.context.map(|c| c.substitute(&call.arguments));
                            if v.call.is_none() {
                                v.call = default_view(call).call;
                            }
                            v
                        }
                        Err(payload) => {
                            return Err(fail(
                                ToolError::approval(Some(&format!(
                                    "The tool call was rejected because the viewer for tool '{}' failed, so it could not be shown for approval: {}",
                                    call.function,
                                    panic_message(payload.as_ref())
                                ))),
                                Some(def),
                            ));
                        }
                    }
                }
            };
            let text = self.assistant.content.text();
            let history_end = self.messages.len().saturating_sub(1);
            let request = ApprovalRequest {
                message: &text,
                call,
                view: &view,
                history: &self.messages[..history_end],
            };
            let waited = Instant::now();
            let approval = AssertUnwindSafe(apply_policies(&self.options.approval, request))
                .catch_unwind()
                .await
                .map_err(|p| {
                    Failed::Stop(Stop::Fatal(FatalToolError::panic(format!(
                        "an approver panicked: {}",
                        panic_message(p.as_ref())
                    ))))
                })?;
            attempt.approval_wait = waited.elapsed();
            attempt.approval = Some(ApprovalEvent {
                decision: approval.decision,
                explanation: approval.explanation.clone(),
                modified_arguments: approval.modified.as_ref().map(|m| m.arguments.clone()),
            });
            match approval.decision {
                ApprovalDecision::Approve => {}
                ApprovalDecision::Modify => match approval.modified {
                    None => {
                        return Err(fail(
                            ToolError::approval(Some(
                                "The approver chose to modify this tool call but supplied no modified call, so the call was not run.",
                            )),
                            Some(def),
                        ));
                    }
                    Some(m) if m.function != call.function => {
                        return Err(Failed::Stop(Stop::BadModify {
                            modified: m.function,
                        }));
                    }
                    Some(m) => {
                        modified_call = m;
                        call_ref = &modified_call;
                        arguments = Value::Object(call_ref.arguments.clone());
                        // A modified call is validated again.
                        def.validate(&arguments).map_err(|e| fail(e, Some(def)))?;
                    }
                },
                ApprovalDecision::Reject | ApprovalDecision::Escalate => {
                    return Err(fail(
                        ToolError::approval(approval.explanation.as_deref()),
                        Some(def),
                    ));
                }
                ApprovalDecision::Terminate => return Err(Failed::Stop(Stop::Terminated)),
            }
        }
        // 6–8. Deserialization and invocation, under the timeout, with panics caught.
        let limit = self.limit_for(Some(def));
        let invoke = async {
            match def.kind() {
                ToolKind::ConversationTaking => {
                    let Some(handler) = def.conversation_handler::<ConversationHandler>() else {
                        return Err(FatalToolError::msg(format!(
                            "Tool '{}' is conversation-taking, but its handler is not an actuator_exec::ConversationHandler: build it with actuator_exec::with_conversation or ToolDefBuilder::conversation_handler(ConversationHandler::new(...)).",
                            def.name()
                        ))
                        .into());
                    };
                    let args = ToolArgs::from_value(arguments)?;
                    handler
                        .0
                        .call(self.messages, call_ref, args, &self.options.extensions)
                        .await
                        .map(|o| Landed::Conversation(Box::new(o)))
                }
                _ => {
                    let mut ctx = ToolContext::new(call_ref.id.clone(), call_ref.function.clone());
                    ctx.extensions = self.options.extensions.clone();
                    def.call(arguments, ctx)
                        .await
                        .map(|output| Landed::Output { output, limit })
                }
            }
        };
        let guarded = AssertUnwindSafe(invoke).catch_unwind();
        let result = match def.timeout() {
            Some(t) => match tokio::time::timeout(t, guarded).await {
                Ok(r) => r,
                Err(_) => return Err(Failed::Tool(ToolError::timeout(), limit)),
            },
            None => guarded.await,
        };
        match result {
            Ok(Ok(landed)) => Ok(landed),
            Ok(Err(ToolFailure::Recoverable(e))) => Err(Failed::Tool(e, limit)),
            // A limit of an enclosing run, hit by an agent this tool ran (D9).
            Ok(Err(ToolFailure::Fatal(f))) => match f.downcast_ref::<LimitExceeded>() {
                Some(limit) => Err(Failed::Stop(Stop::Limit(Box::new(limit.clone())))),
                None => Err(Failed::Stop(Stop::Fatal(f))),
            },
            Err(payload) => Err(Failed::Stop(Stop::Fatal(FatalToolError::panic(format!(
                "tool '{}' panicked: {}",
                call.function,
                panic_message(payload.as_ref())
            ))))),
        }
    }
}

enum Landed {
    Output { output: ToolOutput, limit: usize },
    Conversation(Box<crate::conversation::ConversationToolOutput>),
}

enum Failed {
    Tool(ToolError, usize),
    Stop(Stop),
}
