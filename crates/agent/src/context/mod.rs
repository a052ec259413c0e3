//! [`RunContext`]: what an agent run knows about its surroundings, and the one place where a
//! model is called ([`RunContext::generate`]) and tools are executed
//! ([`RunContext::execute_tools`]) with the run's limits, events and spans.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use actuator_events::{Event, EventSink, SpanBeginEvent, SpanEndEvent};
use actuator_exec::{ExecuteOptions, ExecuteToolsResult};
use actuator_model::{ChatMessage, ModelUsage, new_id};
use actuator_tool_core::{CallHost, Extensions, ToolContext, ToolDef, ToolProgress};
use tokio::time::Instant;
use tracing::Instrument;

use crate::budget::Budget;
use crate::error::AgentError;
use crate::limits::{Limit, LimitExceeded, LimitKind, LimitUsage};
use actuator_tool_core::source::ToolSet;

mod generation;
mod host;
mod pricing;
mod progress;
pub use host::{RunElicitation, SamplingModel};
mod structured;
pub use structured::StructuredRunError;

#[derive(Clone)]
struct Inner {
    /// The limit scopes and the event sink (shared with the conversation a run works on).
    budget: Budget,
    /// Shared with the events recorded in the span.
    span: Option<Arc<str>>,
    resources: Extensions,
    /// Set when the agent of the innermost `run` records a submission (fresh per run, shared
    /// by every context derived inside it).
    submission: Option<Arc<AtomicBool>>,
}

/// What an agent run knows about its surroundings: the nested limit scopes it runs under, where
/// events go, the span it is in, and the run's resources. Cheap to clone.
///
/// Agents call models through [`RunContext::generate`] and tools through
/// [`RunContext::execute_tools`], which emit the events, open the spans, apply the time limits
/// and record usage against token, turn and cost limits; they check message limits with
/// [`RunContext::check_messages`] as they add messages, and run other long operations through
/// [`RunContext::guard`] so that time limits cancel them while the state is kept.
///
/// Resources ([`RunContext::with_resource`]) are values of the run that its tools reach through
/// their [`ToolContext`] (a sandbox, an MCP session, a user's own state):
///
/// ```
/// use actuator_agent::RunContext;
/// use actuator_tool_core::ToolContext;
///
/// #[derive(Debug, PartialEq)]
/// struct Workspace(&'static str);
///
/// let cx = RunContext::new().with_resource(Workspace("/tmp/run-1"));
/// assert_eq!(cx.resource::<Workspace>(), Some(&Workspace("/tmp/run-1")));
/// // What a tool called in this run sees:
/// let mut ctx = ToolContext::new("call_1", "read_file");
/// ctx.extensions = cx.execute_options().extensions;
/// assert_eq!(ctx.extensions.get::<Workspace>(), Some(&Workspace("/tmp/run-1")));
/// assert!(RunContext::from_tool_context(&ctx).is_ok());
/// ```
#[derive(Clone)]
pub struct RunContext {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for RunContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunContext")
            .field("budget", &self.inner.budget)
            .field("span", &self.inner.span)
            .field("resources", &self.inner.resources)
            .finish()
    }
}

impl Default for RunContext {
    fn default() -> Self {
        Self::new()
    }
}

/// A tool that runs an agent was called without the [`RunContext`] of the run calling it, so it
/// cannot honour that run's limits or send events to its sink.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Tool '{tool}' runs an agent, so it needs the RunContext of the run that calls it, but the call carried none. Call it from an agent (react(), run()), through RunContext::execute_tools, or put RunContext::execute_options() into the ExecuteOptions given to execute_tools."
)]
pub struct MissingRunContext {
    /// The tool called.
    pub tool: String,
}

impl RunContext {
    /// A root context: no limits, no event sink, no resources.
    pub fn new() -> Self {
        RunContext {
            inner: Arc::new(Inner {
                budget: Budget::default(),
                span: None,
                resources: Extensions::new(),
                submission: None,
            }),
        }
    }

    /// A root context sending events to `sink`.
    pub fn with_events(sink: Arc<dyn EventSink>) -> Self {
        RunContext::new().with_event_sink(sink)
    }

    fn with_inner(&self, f: impl FnOnce(&mut Inner)) -> RunContext {
        let mut inner = (*self.inner).clone();
        f(&mut inner);
        RunContext {
            inner: Arc::new(inner),
        }
    }

    /// This context sending events to `sink` (replacing any sink it had).
    #[must_use]
    pub fn with_event_sink(&self, sink: Arc<dyn EventSink>) -> RunContext {
        self.with_inner(|i| i.budget = i.budget.with_events(sink))
    }

    /// This context with a run resource: `value` is reachable by type through
    /// [`RunContext::resource`] and, in every tool this run calls, through
    /// `ToolContext::extensions`. Replaces an earlier resource of the same type. Nested runs
    /// (handoff, `as_tool`) inherit it.
    #[must_use]
    pub fn with_resource<T: Send + Sync + 'static>(&self, value: T) -> RunContext {
        self.with_inner(|i| i.resources.insert(value))
    }

    /// This context with every resource of `resources` added.
    #[must_use]
    pub fn with_resources(&self, resources: &Extensions) -> RunContext {
        self.with_inner(|i| i.resources.extend(resources))
    }

    /// The run's resource of type `T`, if one was set.
    pub fn resource<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.inner.resources.get::<T>()
    }

    /// All the run's resources.
    pub fn resources(&self) -> &Extensions {
        &self.inner.resources
    }

    /// The run context a tool's call carries (put there by [`RunContext::execute_options`]).
    /// A tool that runs an agent must have it: missing is an error, never a fresh context
    /// that would escape the outer limits and lose the events.
    pub fn from_tool_context(ctx: &ToolContext) -> Result<&RunContext, MissingRunContext> {
        Self::from_extensions(&ctx.extensions, &ctx.function)
    }

    /// Like [`RunContext::from_tool_context`], for handlers that receive the extensions
    /// directly (conversation-taking tools).
    pub fn from_extensions<'a>(
        extensions: &'a Extensions,
        tool: &str,
    ) -> Result<&'a RunContext, MissingRunContext> {
        extensions
            .get::<RunContext>()
            .ok_or_else(|| MissingRunContext {
                tool: tool.to_owned(),
            })
    }

    /// Records that the agent of the run this context belongs to submitted its answer, so
    /// that the run's [`AgentRun::end`](crate::AgentRun::end) is
    /// [`RunEnd::Submitted`](crate::RunEnd::Submitted) (rather than
    /// [`Completed`](crate::RunEnd::Completed)). React records an accepted submission; a
    /// custom agent with its own way of answering calls this when it has answered. Outside a
    /// run it does nothing.
    ///
    /// ```
    /// use actuator_agent::{AgentState, RunEnd, agent_fn, run};
    /// use actuator_model::ChatMessage;
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let answerer = agent_fn("answerer", |mut state: AgentState, cx, _args| async move {
    ///     state.messages.push(ChatMessage::assistant("42"));
    ///     cx.record_submission();
    ///     Ok(state)
    /// });
    /// let result = run(&answerer, "6 × 7?", ()).await.unwrap();
    /// assert_eq!(result.end, RunEnd::Submitted { answer: "42".into() });
    /// # });
    /// ```
    pub fn record_submission(&self) {
        if let Some(flag) = &self.inner.submission {
            flag.store(true, Ordering::Relaxed);
        }
    }

    /// A context for a new run: its own submission flag (read back with
    /// [`RunContext::submitted`]).
    pub(crate) fn for_run(&self) -> RunContext {
        self.with_inner(|i| i.submission = Some(Arc::new(AtomicBool::new(false))))
    }

    /// Whether the run this context belongs to recorded a submission.
    pub(crate) fn submitted(&self) -> bool {
        self.inner
            .submission
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// A context with one more scope, holding `limits`.
    pub fn scoped(&self, limits: &[Limit]) -> RunContext {
        self.with_inner(|i| i.budget = i.budget.scoped(limits))
    }

    /// The event sink, if any.
    pub fn events(&self) -> Option<&Arc<dyn EventSink>> {
        self.inner.budget.events()
    }

    /// Sends an event to the sink, if any, as emitted in this context's span
    /// ([`EventSink::emit_in`]).
    pub fn emit(&self, event: Event) {
        if let Some(sink) = self.inner.budget.events() {
            sink.emit_in(self.span_id(), event);
        }
    }

    /// The current span's id.
    pub fn span_id(&self) -> Option<&str> {
        self.inner.span.as_deref()
    }

    /// Opens a span: emits its begin event, creates the matching `tracing` span, and returns a
    /// context inside it plus a guard that emits the end event when dropped. Instrument the
    /// span's work with [`SpanGuard::tracing_span`], or use [`RunContext::in_span`], which does
    /// both.
    pub fn span(&self, kind: &str, name: &str) -> (RunContext, SpanGuard) {
        self.span_of_call(kind, name, None)
    }

    /// [`RunContext::span`] for the run a tool call started (its begin event names the call).
    pub(crate) fn span_of_call(
        &self,
        kind: &str,
        name: &str,
        tool_call_id: Option<Arc<str>>,
    ) -> (RunContext, SpanGuard) {
        let id = new_id().into_string();
        self.emit(Event::SpanBegin(Box::new(SpanBeginEvent {
            id: id.clone(),
            parent_id: self.inner.span.as_deref().map(str::to_owned),
            kind: kind.to_owned(),
            name: name.to_owned(),
            tool_call_id,
        })));
        let cx = self.with_inner(|i| i.span = Some(Arc::from(id.as_str())));
        let guard = SpanGuard {
            id,
            events: self.inner.budget.events().cloned(),
            tracing: tracing_span(kind, name),
        };
        (cx, guard)
    }

    /// Runs `f` inside a span (`kind`, `name`): its begin and end events, and the `tracing`
    /// span, around the future `f` returns.
    pub async fn in_span<F, Fut>(&self, kind: &str, name: &str, f: F) -> Fut::Output
    where
        F: FnOnce(RunContext) -> Fut,
        Fut: Future,
    {
        let (cx, guard) = self.span(kind, name);
        let span = guard.tracing.clone();
        let out = f(cx).instrument(span).await;
        drop(guard);
        out
    }

    /// Whether `limit` belongs to this context's own (innermost) scope, so this run catches it
    /// (D9); other scopes' limits propagate.
    pub fn owns(&self, limit: &LimitExceeded) -> bool {
        self.inner
            .budget
            .own()
            .is_some_and(|s| s.id == limit.scope())
    }

    fn report(&self, e: LimitExceeded) -> LimitExceeded {
        self.inner.budget.report_in(self.span_id(), e)
    }

    /// What this context's own (innermost) scope has used so far: messages, tokens, turns,
    /// time, working time and cost (the reference's `limit.usage`). A root context without a
    /// scope reports nothing used.
    ///
    /// ```
    /// use actuator_agent::{RunContext, limits::token_limit};
    /// use actuator_model::ModelUsage;
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let cx = RunContext::new().scoped(&[token_limit(1_000)]);
    /// cx.record_generation(Some(&ModelUsage::new(120, 30))).unwrap();
    /// let usage = cx.usage();
    /// assert_eq!((usage.tokens, usage.turns), (150, 1));
    /// # });
    /// ```
    pub fn usage(&self) -> LimitUsage {
        self.inner
            .budget
            .own()
            .map(|s| s.usage())
            .unwrap_or_default()
    }

    /// Fails with the message limit an addition to the state's messages exceeded, if one did.
    pub(crate) fn check_violation(&self) -> Result<(), LimitExceeded> {
        match self.inner.budget.pending_violation() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The limit scopes and event sink, for the conversation a run works on.
    pub(crate) fn budget(&self) -> &Budget {
        &self.inner.budget
    }

    /// Checks the innermost message limit against a conversation of `count` messages: over the
    /// limit fails; before a generation, reaching it fails too (`Message limit reached. …`).
    /// A limit an addition to the state's messages already exceeded fails first.
    pub fn check_messages(&self, count: usize, before_generate: bool) -> Result<(), LimitExceeded> {
        self.check_violation()?;
        self.inner
            .budget
            .message_limit_check(count, before_generate)
            .map_err(|(_, e)| e)
    }

    /// Records one generation (a turn, and its tokens and cost) in every scope, then checks
    /// token, turn and cost limits from the outermost scope in. [`RunContext::generate`] calls
    /// it; call it yourself only for generations made without it.
    pub fn record_generation(&self, usage: Option<&ModelUsage>) -> Result<(), LimitExceeded> {
        let tokens = usage.map_or(0, |u| u.total_tokens);
        let cost = usage.and_then(|u| u.total_cost).unwrap_or(0.0);
        for scope in self.inner.budget.scopes() {
            scope.record(tokens, cost);
        }
        match self
            .inner
            .budget
            .scopes()
            .iter()
            .find_map(|s| s.usage_exceeded())
        {
            Some(e) => Err(self.report(e)),
            None => Ok(()),
        }
    }

    /// Records time spent waiting (on approval, on retries): it does not count as working time.
    pub fn record_waiting(&self, waited: Duration) {
        for scope in self.inner.budget.scopes() {
            scope.add_waiting(waited);
        }
    }

    /// Takes back waiting recorded in advance that did not happen (a retry's wait cut short).
    fn unrecord_waiting(&self, unused: Duration) {
        if unused.is_zero() {
            return;
        }
        for scope in self.inner.budget.scopes() {
            scope.remove_waiting(unused);
        }
    }

    /// The earliest time or working deadline of any scope, outermost first on ties.
    fn deadline(&self) -> Option<(Instant, usize, LimitKind)> {
        let mut best: Option<(Instant, usize, LimitKind)> = None;
        for (i, scope) in self.inner.budget.scopes().iter().enumerate() {
            if let Some((at, kind)) = scope.deadline()
                && best.is_none_or(|b| at < b.0)
            {
                best = Some((at, i, kind));
            }
        }
        best
    }

    /// Fails when a time or working limit has passed.
    pub fn check_time(&self) -> Result<(), LimitExceeded> {
        match self.deadline() {
            Some((at, i, kind)) if Instant::now() >= at => {
                Err(self.report(self.inner.budget.scopes()[i].time_exceeded(kind)))
            }
            _ => Ok(()),
        }
    }

    /// Runs `fut` until it finishes or a time/working limit passes, whichever is first; on the
    /// limit, `fut` is dropped (cancelled).
    ///
    /// A working limit's deadline moves by the waiting recorded while `fut` runs (a
    /// provider's retry waits): when the first deadline passes it is read again, and `fut`
    /// goes on until the deadline no longer moves.
    pub async fn guard<F: Future>(&self, fut: F) -> Result<F::Output, LimitExceeded> {
        self.check_time()?;
        let Some((mut at, _, _)) = self.deadline() else {
            return Ok(fut.await);
        };
        let mut fut = std::pin::pin!(fut);
        loop {
            if let Ok(out) = tokio::time::timeout_at(at, fut.as_mut()).await {
                return Ok(out);
            }
            match self.deadline() {
                Some((next, _, _)) if next > Instant::now() => at = next,
                Some((_, i, kind)) => {
                    return Err(self.report(self.inner.budget.scopes()[i].time_exceeded(kind)));
                }
                None => return Ok(fut.await),
            }
        }
    }

    /// The executor options of this run: its event sink, and extensions holding this context
    /// and the run's resources, so that tools reach both through their `ToolContext`, and a
    /// progress sink that makes each `ToolContext::report_progress` an info event of the run
    /// (`source: "progress"`). Set the other fields (output limit, approval, concurrency) on
    /// the result.
    pub fn execute_options(&self) -> ExecuteOptions {
        let mut extensions = self.inner.resources.clone();
        extensions.insert(self.clone());
        // A tool's progress reports become the run's events (unless a resource routes them).
        if let Some(sink) = self.inner.budget.events()
            && extensions.get::<ToolProgress>().is_none()
        {
            extensions.insert(ToolProgress::new(progress::RunProgress(
                Arc::clone(sink),
                self.inner.span.clone(),
            )));
        }
        // Its log entries become the run's events, and its sampling goes to the run's
        // SamplingModel (unless a resource hosts the tools already).
        if extensions.get::<CallHost>().is_none() {
            extensions.insert(CallHost::new(host::RunHost {
                events: self.inner.budget.events().cloned(),
                context: self.clone(),
                model: extensions.get::<SamplingModel>().cloned(),
                elicitation: extensions.get::<RunElicitation>().cloned(),
            }));
        }
        let mut options = ExecuteOptions::default().extensions(extensions);
        options.events = self.inner.budget.events().cloned();
        options.span_id = self.inner.span.clone();
        options
    }

    /// `options` with this run's context, sink and resources added (options that carry a
    /// context of their own are returned as they are).
    pub(crate) fn execute_options_from(&self, options: &ExecuteOptions) -> ExecuteOptions {
        if options.extensions.get::<RunContext>().is_some() {
            return options.clone();
        }
        let mut own = self.execute_options();
        own.max_output = options.max_output;
        own.max_concurrency = options.max_concurrency;
        own.approval = options.approval.clone();
        own.review = options.review.clone();
        own.extensions.extend(&options.extensions);
        if options.events.is_some() {
            own.events = options.events.clone();
        }
        own
    }

    /// Runs the tool calls of the last message with `actuator_exec::execute_tools`, the way
    /// every agent should: under the run's time limits, with the time spent waiting for
    /// approval recorded, and with this context reaching the tools (when `options` do not
    /// already carry a run context, it is added with the run's event sink and resources; build
    /// them with [`RunContext::execute_options`] to skip that copy). An enclosing run's limit
    /// hit inside a tool comes back as [`AgentErrorKind::Limit`](crate::AgentErrorKind), so it
    /// ends the run it belongs to cleanly.
    pub async fn execute_tools(
        &self,
        messages: &[ChatMessage],
        tools: &[ToolDef],
        options: &ExecuteOptions,
    ) -> Result<ExecuteToolsResult, AgentError> {
        self.check_violation().map_err(AgentError::new)?;
        let filled;
        let options = if options.extensions.get::<RunContext>().is_some() {
            options
        } else {
            filled = self.execute_options_from(options);
            &filled
        };
        let result = self
            .guard(actuator_exec::execute_tools(messages, tools, options))
            .await
            .map_err(AgentError::new)?
            .map_err(AgentError::new)?;
        self.record_waiting(result.waiting);
        Ok(result)
    }

    /// Resolves `tools` for one turn ([`ToolSet::resolve`]) under the run's time limits: the
    /// fixed tools and each source's current tools, checked as a set (D7). Call it once per
    /// turn and use the result both to generate and to run that turn's calls; a source that
    /// fails is an [`AgentErrorKind::Tools`](crate::AgentErrorKind) error for the turn.
    ///
    /// ```
    /// use actuator_agent::RunContext;
    /// use actuator_tool_core::source::ToolSet;
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let tools = RunContext::new().resolve_tools(&ToolSet::new()).await.unwrap();
    /// assert!(tools.is_empty());
    /// # });
    /// ```
    pub async fn resolve_tools(&self, tools: &ToolSet) -> Result<Vec<ToolDef>, AgentError> {
        if !tools.has_sources() {
            return tools.resolve().await.map_err(AgentError::new);
        }
        let span = tracing::info_span!("resolve_tools");
        self.guard(tools.resolve().instrument(span))
            .await
            .map_err(AgentError::new)?
            .map_err(AgentError::new)
    }

    /// When this context's own (innermost) scope's time or working limit passes.
    pub(crate) fn own_deadline(&self) -> Option<Instant> {
        self.inner
            .budget
            .own()
            .and_then(|s| s.deadline())
            .map(|(at, _)| at)
    }

    /// A limit-exceeded error for this context's own scope's time limit.
    pub(crate) fn own_time_exceeded(&self) -> Option<LimitExceeded> {
        let scope = self.inner.budget.own()?;
        let (_, kind) = scope.deadline()?;
        Some(self.report(scope.time_exceeded(kind)))
    }
}

/// The `tracing` span matching a span of the run.
fn tracing_span(kind: &str, name: &str) -> tracing::Span {
    match kind {
        "agent" => tracing::info_span!("agent", name = %name),
        "handoff" => tracing::info_span!("handoff", agent = %name),
        "compaction" => tracing::info_span!("compaction", strategy = %name),
        _ => tracing::info_span!("span", kind = %kind, name = %name),
    }
}

/// Emits a span's end event when dropped, and holds the span's `tracing` span.
pub struct SpanGuard {
    id: String,
    events: Option<Arc<dyn EventSink>>,
    tracing: tracing::Span,
}

impl SpanGuard {
    /// The span's `tracing` span, to instrument the span's work with.
    pub fn tracing_span(&self) -> &tracing::Span {
        &self.tracing
    }
}

impl std::fmt::Debug for SpanGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpanGuard")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl Drop for SpanGuard {
    fn drop(&mut self) {
        if let Some(sink) = &self.events {
            sink.emit_in(
                Some(&self.id),
                Event::SpanEnd(SpanEndEvent {
                    id: self.id.clone(),
                }),
            );
        }
    }
}
