//! Limits and the [`RunContext`] that enforces them.
//!
//! Limits nest: each [`run`](crate::run) opens a scope with its own limits, and usage is
//! recorded in every enclosing scope. A scope's own limits are caught by that scope; an outer
//! limit propagates through inner scopes (D9).

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actuator_events::{Event, EventSink, LimitEvent, SpanBeginEvent, SpanEndEvent};
use actuator_model::{ModelUsage, new_id};
use actuator_tool_core::format_limit;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

/// The kind of a limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// Messages in the conversation.
    Message,
    /// Tokens used by generations.
    Token,
    /// Generations.
    Turn,
    /// Wall-clock time.
    Time,
    /// Wall-clock time less time spent waiting (for approval, retries).
    Working,
    /// Cost in US dollars, from the usage models report.
    Cost,
}

impl LimitKind {
    /// The snake_case name (`message`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            LimitKind::Message => "message",
            LimitKind::Token => "token",
            LimitKind::Turn => "turn",
            LimitKind::Time => "time",
            LimitKind::Working => "working",
            LimitKind::Cost => "cost",
        }
    }
}

impl std::fmt::Display for LimitKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A limit on a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// At most this many messages in the conversation.
    Message(u64),
    /// At most this many tokens (input + output) over all generations.
    Token(u64),
    /// At most this many generations.
    Turn(u64),
    /// At most this much wall-clock time.
    Time(Duration),
    /// At most this much working time (wall clock less waiting).
    Working(Duration),
    /// At most this many US dollars.
    Cost(f64),
}

/// A message limit.
pub fn message_limit(n: u64) -> Limit {
    Limit::Message(n)
}

/// A token limit.
pub fn token_limit(n: u64) -> Limit {
    Limit::Token(n)
}

/// A turn (generation) limit.
pub fn turn_limit(n: u64) -> Limit {
    Limit::Turn(n)
}

/// A wall-clock time limit, in seconds.
pub fn time_limit(seconds: f64) -> Limit {
    Limit::Time(Duration::from_secs_f64(seconds.max(0.0)))
}

/// A working-time limit, in seconds.
pub fn working_limit(seconds: f64) -> Limit {
    Limit::Working(Duration::from_secs_f64(seconds.max(0.0)))
}

/// A cost limit, in US dollars.
pub fn cost_limit(dollars: f64) -> Limit {
    Limit::Cost(dollars)
}

impl Limit {
    /// The kind.
    pub fn kind(&self) -> LimitKind {
        match self {
            Limit::Message(_) => LimitKind::Message,
            Limit::Token(_) => LimitKind::Token,
            Limit::Turn(_) => LimitKind::Turn,
            Limit::Time(_) => LimitKind::Time,
            Limit::Working(_) => LimitKind::Working,
            Limit::Cost(_) => LimitKind::Cost,
        }
    }

    fn value(&self) -> f64 {
        match self {
            Limit::Message(n) | Limit::Token(n) | Limit::Turn(n) => *n as f64,
            Limit::Time(d) | Limit::Working(d) => d.as_secs_f64(),
            Limit::Cost(c) => *c,
        }
    }
}

/// A limit was exceeded. Carries the reference's message (`Message limit exceeded. count: 6;
/// limit: 5`, …) and the scope whose limit it was.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct LimitExceeded {
    /// The kind of limit.
    pub kind: LimitKind,
    /// The value reached.
    pub value: f64,
    /// The limit.
    pub limit: f64,
    /// The message.
    pub message: String,
    scope: u64,
}

impl LimitExceeded {
    /// The limit as the reference prints it in tool errors and handoff messages: integers with
    /// thousands separators for counts, two decimals for time and cost (`1,000`, `60.00`).
    pub fn limit_str(&self) -> String {
        match self.kind {
            LimitKind::Message | LimitKind::Token | LimitKind::Turn => format_limit(self.limit),
            LimitKind::Time | LimitKind::Working | LimitKind::Cost => grouped(self.limit, 2),
        }
    }

    /// Whether this limit belongs to the scope of `cx` (its innermost scope).
    pub fn is_from(&self, cx: &RunContext) -> bool {
        cx.inner.scopes.last().is_some_and(|s| s.id == self.scope)
    }
}

fn seconds_text(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", s as u64)
    } else {
        format!("{s}")
    }
}

/// `v` with `places` decimals and thousands separators (`1,234.50`).
fn grouped(v: f64, places: usize) -> String {
    let text = format!("{:.*}", places, v.abs());
    let (int_part, frac) = text.split_once('.').unwrap_or((&text, ""));
    let int_value: f64 = int_part.parse().unwrap_or(0.0);
    let sign = if v < 0.0 { "-" } else { "" };
    if frac.is_empty() {
        format!("{sign}{}", format_limit(int_value))
    } else {
        format!("{sign}{}.{frac}", format_limit(int_value))
    }
}

fn money(v: f64) -> String {
    grouped(v, 4)
}

static NEXT_SCOPE: AtomicU64 = AtomicU64::new(1);

#[derive(Debug, Default)]
struct Usage {
    tokens: u64,
    turns: u64,
    cost: f64,
    waiting: Duration,
}

#[derive(Debug)]
struct Scope {
    id: u64,
    limits: Vec<Limit>,
    started: Instant,
    usage: Mutex<Usage>,
}

impl Scope {
    fn limit(&self, kind: LimitKind) -> Option<Limit> {
        self.limits.iter().copied().find(|l| l.kind() == kind)
    }

    fn exceeded(&self, kind: LimitKind, value: f64, message: String) -> LimitExceeded {
        let limit = self.limit(kind).map_or(0.0, |l| l.value());
        LimitExceeded {
            kind,
            value,
            limit,
            message,
            scope: self.id,
        }
    }

    fn waiting(&self) -> Duration {
        self.usage.lock().map(|u| u.waiting).unwrap_or_default()
    }

    /// The earliest time or working deadline of this scope.
    fn deadline(&self) -> Option<(Instant, LimitKind)> {
        let mut best: Option<(Instant, LimitKind)> = None;
        for l in &self.limits {
            let candidate = match l {
                Limit::Time(d) => Some((self.started + *d, LimitKind::Time)),
                Limit::Working(d) => Some((self.started + *d + self.waiting(), LimitKind::Working)),
                _ => None,
            };
            if let Some(c) = candidate
                && best.is_none_or(|b| c.0 < b.0)
            {
                best = Some(c);
            }
        }
        best
    }

    fn time_exceeded(&self, kind: LimitKind) -> LimitExceeded {
        let elapsed = self.started.elapsed();
        match (kind, self.limit(kind)) {
            (LimitKind::Working, Some(Limit::Working(d))) => self.exceeded(
                kind,
                elapsed.saturating_sub(self.waiting()).as_secs_f64(),
                format!(
                    "Working time limit exceeded. limit: {} seconds",
                    seconds_text(d)
                ),
            ),
            (_, Some(Limit::Time(d))) => self.exceeded(
                LimitKind::Time,
                elapsed.as_secs_f64(),
                format!("Time limit exceeded. limit: {} seconds", seconds_text(d)),
            ),
            _ => self.exceeded(kind, elapsed.as_secs_f64(), "Time limit exceeded.".into()),
        }
    }
}

struct Inner {
    scopes: Vec<Arc<Scope>>,
    events: Option<Arc<dyn EventSink>>,
    span: Option<String>,
}

/// What an agent run knows about its surroundings: the nested limit scopes it runs under, where
/// events go, and the span it is in. Cheap to clone.
///
/// Agents call [`RunContext::check_messages`] as they add messages,
/// [`RunContext::record_generation`] after each generation, and run long operations through
/// [`RunContext::guard`] so that time limits cancel them while the state is kept.
#[derive(Clone)]
pub struct RunContext {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for RunContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunContext")
            .field("scopes", &self.inner.scopes.len())
            .field("events", &self.inner.events.is_some())
            .field("span", &self.inner.span)
            .finish()
    }
}

impl Default for RunContext {
    fn default() -> Self {
        Self::new()
    }
}

impl RunContext {
    /// A root context: no limits, no event sink.
    pub fn new() -> Self {
        RunContext {
            inner: Arc::new(Inner {
                scopes: Vec::new(),
                events: None,
                span: None,
            }),
        }
    }

    /// A root context sending events to `sink`.
    pub fn with_events(sink: Arc<dyn EventSink>) -> Self {
        RunContext {
            inner: Arc::new(Inner {
                scopes: Vec::new(),
                events: Some(sink),
                span: None,
            }),
        }
    }

    /// A context with one more scope, holding `limits`.
    pub fn scoped(&self, limits: &[Limit]) -> RunContext {
        let mut scopes = self.inner.scopes.clone();
        scopes.push(Arc::new(Scope {
            id: NEXT_SCOPE.fetch_add(1, Ordering::Relaxed),
            limits: limits.to_vec(),
            started: Instant::now(),
            usage: Mutex::new(Usage::default()),
        }));
        RunContext {
            inner: Arc::new(Inner {
                scopes,
                events: self.inner.events.clone(),
                span: self.inner.span.clone(),
            }),
        }
    }

    /// The event sink, if any.
    pub fn events(&self) -> Option<&Arc<dyn EventSink>> {
        self.inner.events.as_ref()
    }

    /// Sends an event to the sink, if any.
    pub fn emit(&self, event: Event) {
        if let Some(sink) = &self.inner.events {
            sink.emit(event);
        }
    }

    /// The current span's id.
    pub fn span_id(&self) -> Option<&str> {
        self.inner.span.as_deref()
    }

    /// Opens a span: emits its begin event (and a `tracing` span is the caller's) and returns
    /// a context inside it plus a guard that emits the end event when dropped.
    pub fn span(&self, kind: &str, name: &str) -> (RunContext, SpanGuard) {
        let id = new_id();
        self.emit(Event::SpanBegin(SpanBeginEvent {
            id: id.clone(),
            parent_id: self.inner.span.clone(),
            kind: kind.to_owned(),
            name: name.to_owned(),
        }));
        let cx = RunContext {
            inner: Arc::new(Inner {
                scopes: self.inner.scopes.clone(),
                events: self.inner.events.clone(),
                span: Some(id.clone()),
            }),
        };
        let guard = SpanGuard {
            id,
            events: self.inner.events.clone(),
        };
        (cx, guard)
    }

    fn report(&self, e: LimitExceeded) -> LimitExceeded {
        self.emit(Event::Limit(LimitEvent {
            kind: e.kind.to_string(),
            message: e.message.clone(),
            limit: e.limit,
        }));
        e
    }

    /// Checks the innermost message limit against a conversation of `count` messages: over the
    /// limit fails; before a generation, reaching it fails too (`Message limit reached. …`).
    pub fn check_messages(&self, count: usize, before_generate: bool) -> Result<(), LimitExceeded> {
        let scope = self
            .inner
            .scopes
            .iter()
            .rev()
            .find_map(|s| s.limit(LimitKind::Message).map(|l| (s, l)));
        let Some((scope, Limit::Message(limit))) = scope else {
            return Ok(());
        };
        let count = count as u64;
        if count > limit || (before_generate && count == limit) {
            let status = if count == limit {
                "reached"
            } else {
                "exceeded"
            };
            let message = format!(
                "Message limit {status}. count: {}; limit: {}",
                format_limit(count as f64),
                format_limit(limit as f64)
            );
            return Err(self.report(scope.exceeded(LimitKind::Message, count as f64, message)));
        }
        Ok(())
    }

    /// Records one generation (a turn, and its tokens and cost) in every scope, then checks
    /// token, turn and cost limits from the outermost scope in.
    pub fn record_generation(&self, usage: Option<&ModelUsage>) -> Result<(), LimitExceeded> {
        let tokens = usage.map_or(0, |u| u.total_tokens);
        let cost = usage.and_then(|u| u.total_cost).unwrap_or(0.0);
        for scope in &self.inner.scopes {
            if let Ok(mut u) = scope.usage.lock() {
                u.tokens += tokens;
                u.turns += 1;
                u.cost += cost;
            }
        }
        for scope in &self.inner.scopes {
            let (tokens, turns, cost) = scope
                .usage
                .lock()
                .map(|u| (u.tokens, u.turns, u.cost))
                .unwrap_or_default();
            for limit in &scope.limits {
                let exceeded = match *limit {
                    Limit::Token(l) if tokens > l => Some(scope.exceeded(
                        LimitKind::Token,
                        tokens as f64,
                        format!(
                            "Token limit exceeded. value: {}; limit: {}",
                            format_limit(tokens as f64),
                            format_limit(l as f64)
                        ),
                    )),
                    Limit::Turn(l) if turns > l => Some(scope.exceeded(
                        LimitKind::Turn,
                        turns as f64,
                        format!(
                            "Turn limit exceeded. value: {}; limit: {}",
                            format_limit(turns as f64),
                            format_limit(l as f64)
                        ),
                    )),
                    Limit::Cost(l) if cost > l => Some(scope.exceeded(
                        LimitKind::Cost,
                        cost,
                        format!(
                            "Cost limit exceeded. value: ${}; limit: ${}",
                            money(cost),
                            money(l)
                        ),
                    )),
                    _ => None,
                };
                if let Some(e) = exceeded {
                    return Err(self.report(e));
                }
            }
        }
        Ok(())
    }

    /// Records time spent waiting (on approval, on retries): it does not count as working time.
    pub fn record_waiting(&self, waited: Duration) {
        for scope in &self.inner.scopes {
            if let Ok(mut u) = scope.usage.lock() {
                u.waiting += waited;
            }
        }
    }

    /// The earliest time or working deadline of any scope, outermost first on ties.
    fn deadline(&self) -> Option<(Instant, usize, LimitKind)> {
        let mut best: Option<(Instant, usize, LimitKind)> = None;
        for (i, scope) in self.inner.scopes.iter().enumerate() {
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
                Err(self.report(self.inner.scopes[i].time_exceeded(kind)))
            }
            _ => Ok(()),
        }
    }

    /// Runs `fut` until it finishes or a time/working limit passes, whichever is first; on the
    /// limit, `fut` is dropped (cancelled).
    pub async fn guard<F: Future>(&self, fut: F) -> Result<F::Output, LimitExceeded> {
        self.check_time()?;
        match self.deadline() {
            None => Ok(fut.await),
            Some((at, i, kind)) => match tokio::time::timeout_at(at, fut).await {
                Ok(out) => Ok(out),
                Err(_) => Err(self.report(self.inner.scopes[i].time_exceeded(kind))),
            },
        }
    }

    /// When this context's own (innermost) scope's time or working limit passes.
    pub(crate) fn own_deadline(&self) -> Option<Instant> {
        self.inner
            .scopes
            .last()
            .and_then(|s| s.deadline())
            .map(|(at, _)| at)
    }

    /// A limit-exceeded error for this context's own scope's time limit.
    pub(crate) fn own_time_exceeded(&self) -> Option<LimitExceeded> {
        let scope = self.inner.scopes.last()?;
        let (_, kind) = scope.deadline()?;
        Some(self.report(scope.time_exceeded(kind)))
    }
}

/// Emits a span's end event when dropped.
pub struct SpanGuard {
    id: String,
    events: Option<Arc<dyn EventSink>>,
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
            sink.emit(Event::SpanEnd(SpanEndEvent {
                id: self.id.clone(),
            }));
        }
    }
}
