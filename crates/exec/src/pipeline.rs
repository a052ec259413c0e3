//! The per-call pipeline (§6.3): parse error, nesting, lookup, validation, canonical arguments,
//! approval, deserialization, invocation under the tool's timeout with panics caught, review.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use actuator_events::{ApprovalEvent, LimitExceeded};
use actuator_model::{ToolCall, ToolCallError};
use actuator_tool_core::__private::panic_message;
use actuator_tool_core::{
    Extensions, FatalToolError, ToolArgs, ToolCallView, ToolContext, ToolDef, ToolError,
    ToolFailure, ToolKind, ToolOutput, check_nesting_depth,
};
use futures_util::FutureExt;
use serde_json::{Map, Value};

use crate::approval::{ApprovalDecision, ApprovalRequest, apply_policies, default_view};
use crate::call::{Attempt, CallNames, Runner, Stop};
use crate::conversation::ConversationHandler;
use crate::error::ExecError;

/// A call after the checks that need no waiting (steps 1–4).
pub(crate) struct Checked<'a> {
    /// The tool to run, or why the call fails.
    pub(crate) def: Result<&'a ToolDef, Failed>,
    /// The call's arguments: the copy the checks read, shared with the tool (read in place)
    /// and with the call's events.
    pub(crate) arguments: Arc<Value>,
}

impl Runner<'_> {
    /// Steps 1–4 of the pipeline: parse error, nesting, lookup and validation. They wait for
    /// nothing and emit nothing; the copy of the arguments they check is the call's only one.
    pub(crate) fn check(&self, call: &ToolCall) -> Checked<'_> {
        let fail = |e: ToolError, def: Option<&ToolDef>| Failed::tool(e, self.limit_for(def));
        // 1. The provider's arguments could not be parsed.
        if let Some(parse_error) = &call.parse_error {
            return Checked {
                def: Err(fail(ToolError::parsing(parse_error.clone()), None)),
                arguments: call
                    .arguments
                    .to_shared_value()
                    .unwrap_or_else(|_| Arc::new(Value::Object(Map::new()))),
            };
        }
        // The object a fresh call keeps beside its text, or the text parsed: the one copy
        // the checks read, the tool takes and the events share.
        match call.arguments.to_shared_value() {
            Ok(arguments) => Checked {
                def: self.check_arguments(call, &arguments),
                arguments,
            },
            Err(_) => Checked {
                def: Err(fail(ToolError::too_deep(), None)),
                arguments: Arc::new(Value::Object(Map::new())),
            },
        }
    }

    /// Steps 2–4 on the call's `arguments` (an object).
    fn check_arguments(&self, call: &ToolCall, arguments: &Value) -> Result<&ToolDef, Failed> {
        let fail = |e: ToolError, def: Option<&ToolDef>| Failed::tool(e, self.limit_for(def));
        // 2. Nesting, before anything walks the arguments recursively.
        check_nesting_depth(arguments).map_err(|e| fail(e, None))?;
        // 3. Lookup.
        let Some(def) = self.lookup(&call.function) else {
            return Err(fail(
                ToolError::parsing(format!("Tool {} not found", call.function)),
                None,
            ));
        };
        // 4. Validation (before approval: approvers only see valid calls, D2).
        def.validate(arguments).map_err(|e| fail(e, Some(def)))?;
        Ok(def)
    }

    /// The rest of the per-call pipeline (§6.3) for a call that passed [`Runner::check`]
    /// with tool `def`, up to the tool's result; `extensions` are the call's.
    ///
    /// A tool without canonical arguments in a run without review takes the plain path, whose
    /// future is what every call carries; canonical arguments and review (rare) are a boxed
    /// future of their own around it.
    pub(crate) async fn pipeline(
        &self,
        call: &ToolCall,
        names: &CallNames,
        def: &ToolDef,
        arguments: &Arc<Value>,
        extensions: &Extensions,
        attempt: &mut Attempt,
    ) -> Result<Landed, Failed> {
        if self.options.review.is_empty() && def.canonical_arguments().is_none() {
            self.invoke(call, names, def, arguments, extensions, attempt, ())
                .await
        } else {
            Box::pin(self.governed(call, names, def, arguments, extensions, attempt)).await
        }
    }

    /// The pipeline with canonical arguments (step 4b) before approval and review (step 9)
    /// after invocation.
    async fn governed(
        &self,
        call: &ToolCall,
        names: &CallNames,
        def: &ToolDef,
        arguments: &Arc<Value>,
        extensions: &Extensions,
        attempt: &mut Attempt,
    ) -> Result<Landed, Failed> {
        // 4b. Canonical arguments: what approval and review match on, and what the tool takes.
        let canonical = match def.canonical_arguments() {
            None => None,
            Some(c) => Some(self.canonicalise(call, def, c, object(arguments))?),
        };
        let (call, arguments) = match &canonical {
            None => (call, arguments),
            Some(c) => (&c.call, &c.arguments),
        };
        let mut executed = Executed::default();
        let outcome = self
            .invoke(
                call,
                names,
                def,
                arguments,
                extensions,
                attempt,
                &mut executed,
            )
            .await;
        // 9. Review of the result of a call that ran, before the model reads it.
        if let Some(ran) = executed
            .arguments
            .filter(|_| !self.options.review.is_empty())
        {
            let call = executed.call.as_deref().unwrap_or(call);
            self.review(call, &ran, def, &outcome, attempt).await?;
        }
        outcome
    }

    /// Steps 5–8: approval, then deserialization and invocation under the timeout with panics
    /// caught. `executed` is told the call and arguments the tool ran with (`()` when nobody
    /// asks: it then takes no room in the call's future).
    #[allow(clippy::too_many_arguments)]
    async fn invoke<E: RecordExecuted>(
        &self,
        call: &ToolCall,
        names: &CallNames,
        def: &ToolDef,
        arguments: &Arc<Value>,
        extensions: &Extensions,
        attempt: &mut Attempt,
        executed: E,
    ) -> Result<Landed, Failed> {
        let fail = |e: ToolError, def: Option<&ToolDef>| Failed::tool(e, self.limit_for(def));
        // 5. Approval. Its state lives in its own (boxed) future: most runs have no
        // approvers, and every call's future would otherwise carry it.
        let mut modified_call = if self.options.approval.is_empty() {
            None
        } else {
            Box::pin(self.approve(call, def, object(arguments), attempt)).await?
        };
        let arguments = match &mut modified_call {
            None => Arc::clone(arguments),
            Some(m) => {
                let modified = m
                    .arguments
                    .to_shared_value()
                    .map_err(|_| fail(ToolError::too_deep(), Some(def)))?;
                match def.canonical_arguments() {
                    // A modified call is validated again.
                    None => {
                        def.validate(&modified).map_err(|e| fail(e, Some(def)))?;
                        modified
                    }
                    // Or canonicalised (and so validated) again, as in the reference.
                    Some(c) => {
                        let again = self.canonicalise(m, def, c, object(&modified))?;
                        **m = again.call;
                        again.arguments
                    }
                }
            }
        };
        let call_ref = modified_call.as_deref().unwrap_or(call);
        executed.record(&modified_call, &arguments);
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
                    let args = ToolArgs::shared(arguments);
                    handler
                        .0
                        .call(self.messages, call_ref, args, extensions)
                        .await
                        .map(|o| Landed::Conversation(Box::new(o)))
                }
                _ => {
                    // Made in the statement before the await, so that the context is not
                    // part of the call's future while the tool runs.
                    let running = def.call_args(
                        ToolArgs::shared(arguments),
                        context(names, modified_call.as_deref(), extensions),
                    );
                    running.await.map(|output| Landed::Output { output, limit })
                }
            }
        };
        let guarded = AssertUnwindSafe(invoke).catch_unwind();
        let result = match def.timeout() {
            // Boxed: the timer would otherwise enlarge the future of every call, timed or not.
            Some(t) => match Box::pin(tokio::time::timeout(t, guarded)).await {
                Ok(r) => r,
                Err(_) => return Err(Failed::tool(ToolError::timeout(), limit)),
            },
            None => guarded.await,
        };
        match result {
            Ok(Ok(landed)) => Ok(landed),
            Ok(Err(ToolFailure::Recoverable(e))) => Err(Failed::tool(e, limit)),
            // A limit of an enclosing run, hit by an agent this tool ran (D9).
            Ok(Err(ToolFailure::Fatal(f))) => match f.downcast_ref::<LimitExceeded>() {
                Some(limit) => Err(Failed::stop(Stop::Limit(Box::new(limit.clone())))),
                // An agent this tool ran was terminated by an approver or a reviewer: the
                // termination ends this run too, as the reference's TerminateSampleError does.
                None => match f.downcast_ref::<ExecError>() {
                    Some(ExecError::Terminated { .. }) => Err(Failed::stop(Stop::Terminated)),
                    Some(ExecError::ReviewTerminated { .. }) => {
                        Err(Failed::stop(Stop::ReviewTerminated(Box::default())))
                    }
                    _ => Err(Failed::stop(Stop::Fatal(f))),
                },
            },
            Err(payload) => Err(Failed::stop(Stop::Fatal(FatalToolError::panic(format!(
                "tool '{}' panicked: {}",
                call.function,
                panic_message(payload.as_ref())
            ))))),
        }
    }

    /// Asks the approvers about a valid call (step 5): `Ok(Some(_))` is the modified call to
    /// run instead, `Ok(None)` approval as is; the decision is recorded on `attempt`.
    async fn approve(
        &self,
        call: &ToolCall,
        def: &ToolDef,
        arguments: &Map<String, Value>,
        attempt: &mut Attempt,
    ) -> Result<Option<Box<ToolCall>>, Failed> {
        let fail = |e: ToolError| Failed::tool(e, self.limit_for(Some(def)));
        let view = tool_view(call, def, arguments).map_err(|panicked| {
            fail(ToolError::approval(Some(&format!(
                "The tool call was rejected because the viewer for tool '{}' failed, so it could not be shown for approval: {panicked}",
                call.function
            ))))
        })?;
        let text = self.assistant.content.text();
        let history_end = self.messages.len().saturating_sub(1);
        let request = ApprovalRequest {
            message: &text,
            call,
            view: &view,
            history: &self.messages[..history_end],
        };
        let waited = Instant::now();
        let decided = AssertUnwindSafe(apply_policies(&self.options.approval, request))
            .catch_unwind()
            .await
            .map_err(|p| {
                Failed::stop(Stop::Fatal(FatalToolError::panic(format!(
                    "an approver panicked: {}",
                    panic_message(p.as_ref())
                ))))
            })?;
        attempt.approval_wait = waited.elapsed();
        let approval = decided.approval;
        let mut recorded = ApprovalEvent::new(approval.decision);
        recorded.approver = decided.approver;
        recorded.explanation.clone_from(&approval.explanation);
        // What the approver was shown, when the tool's canonical form changed the call's.
        if def.canonical_arguments().is_some() {
            recorded.arguments = call.arguments.to_map().ok();
        }
        recorded.modified_arguments = approval
            .modified
            .as_ref()
            .and_then(|m| m.arguments.to_map().ok());
        attempt.approval = Some(Box::new(recorded));
        match approval.decision {
            ApprovalDecision::Approve => Ok(None),
            ApprovalDecision::Modify => match approval.modified {
                None => Err(fail(ToolError::approval(Some(
                    "The approver chose to modify this tool call but supplied no modified call, so the call was not run.",
                )))),
                Some(m) if m.function != call.function => Err(Failed::stop(Stop::BadModify {
                    modified: m.function.into(),
                })),
                Some(m) => Ok(Some(Box::new(m))),
            },
            ApprovalDecision::Reject | ApprovalDecision::Escalate => {
                Err(fail(ToolError::approval(approval.explanation.as_deref())))
            }
            ApprovalDecision::Terminate => Err(Failed::stop(Stop::Terminated)),
        }
    }
}

/// How a call is shown: its tool's viewer (templates filled from `arguments`), or the default
/// view; `Err` with the panic's message when the viewer panics.
pub(crate) fn tool_view(
    call: &ToolCall,
    def: &ToolDef,
    arguments: &Map<String, Value>,
) -> Result<ToolCallView, String> {
    let Some(viewer) = def.viewer() else {
        return Ok(default_view(call));
    };
    match std::panic::catch_unwind(AssertUnwindSafe(|| viewer.view(&call.function, arguments))) {
        Ok(mut v) => {
            // Templates name arguments as `{{param}}` (the reference's
            // substitute_tool_call_content).
            v.call = v.call.map(|c| c.substitute(arguments));
            v.context = v.context.map(|c| c.substitute(arguments));
            if v.call.is_none() {
                v.call = default_view(call).call;
            }
            Ok(v)
        }
        Err(payload) => Err(panic_message(payload.as_ref())),
    }
}

/// The call and arguments a tool ran with, for its review: `call` is an approver's
/// modification, when there was one.
#[derive(Default)]
struct Executed {
    call: Option<Box<ToolCall>>,
    arguments: Option<Arc<Value>>,
}

/// Who is told what a call ran with: `()`, nobody; `&mut Executed`, the review.
trait RecordExecuted {
    fn record(self, modified: &Option<Box<ToolCall>>, arguments: &Arc<Value>);
}

impl RecordExecuted for () {
    fn record(self, _modified: &Option<Box<ToolCall>>, _arguments: &Arc<Value>) {}
}

impl RecordExecuted for &mut Executed {
    fn record(self, modified: &Option<Box<ToolCall>>, arguments: &Arc<Value>) {
        self.call.clone_from(modified);
        self.arguments = Some(Arc::clone(arguments));
    }
}

/// A call's tool context: its own names, unless an approver's modification changed them, and
/// its extensions.
fn context(names: &CallNames, modified: Option<&ToolCall>, extensions: &Extensions) -> ToolContext {
    let mut ctx = match modified {
        None => ToolContext::new(Arc::clone(&names.id), Arc::clone(&names.function)),
        Some(m) => ToolContext::new(m.id.as_str(), m.function.as_str()),
    };
    ctx.extensions = extensions.clone();
    ctx
}

/// The map of a call's arguments (always an object; an empty map otherwise).
pub(crate) fn object(value: &Value) -> &Map<String, Value> {
    static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
    value.as_object().unwrap_or(&EMPTY)
}

impl Failed {
    /// A recoverable error with the call's output limit.
    pub(crate) fn tool(error: ToolError, limit: usize) -> Self {
        Failed::Tool(Box::new(error), limit)
    }

    /// The run stops, for `stop`.
    pub(crate) fn stop(stop: Stop) -> Self {
        Failed::Stop(Box::new(stop))
    }
}

pub(crate) enum Landed {
    Output { output: ToolOutput, limit: usize },
    Conversation(Box<crate::conversation::ConversationToolOutput>),
}

pub(crate) enum Failed {
    /// A recoverable error the model is told about, with the call's output limit. Each kind
    /// is boxed: failures are rare, and a call's future holds a `Failed` while its tool runs.
    Tool(Box<ToolError>, usize),
    /// Cancelled by an operator: the model gets this error and empty content.
    Cancelled(Box<ToolCallError>),
    /// The run stops.
    Stop(Box<Stop>),
}
