//! Limits and the scopes that hold them; [`RunContext`](crate::RunContext) enforces them.
//!
//! Limits nest: each [`run`](crate::run) opens a scope with its own limits, and usage is
//! recorded in every enclosing scope. A scope's own limits are caught by that scope; an outer
//! limit propagates through inner scopes (D9).

use std::sync::Mutex;
use std::time::Duration;

use actuator_events::ScopeId;
pub use actuator_events::{LimitExceeded, LimitKind};
use actuator_tool_core::{format_amount, format_limit};
use tokio::time::Instant;

/// A limit on a run.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
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

/// A wall-clock time limit.
///
/// ```
/// use std::time::Duration;
/// use actuator_agent::limits::{time_limit, Limit};
/// assert_eq!(time_limit(Duration::from_secs(60)), Limit::Time(Duration::from_secs(60)));
/// ```
pub fn time_limit(limit: Duration) -> Limit {
    Limit::Time(limit)
}

/// A working-time limit (wall clock less time spent waiting).
pub fn working_limit(limit: Duration) -> Limit {
    Limit::Working(limit)
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

fn seconds_text(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", s as u64)
    } else {
        format!("{s}")
    }
}

fn money(v: f64) -> String {
    format_amount(v, 4)
}

#[derive(Debug, Default)]
pub(crate) struct Usage {
    messages: u64,
    tokens: u64,
    turns: u64,
    cost: f64,
    waiting: Duration,
    /// Time used before this process, by the run a checkpoint resumed.
    carried: Duration,
    /// A message limit exceeded by an addition to a `MessageList`, for the run to stop with.
    violation: Option<LimitExceeded>,
}

/// What a limit scope (a run) has used so far: the reference's `limit.usage`, readable while
/// the run works ([`RunContext::usage`](crate::RunContext::usage)) and after it
/// ([`AgentRun::usage`](crate::AgentRun)).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct LimitUsage {
    /// Messages in the conversation when last counted.
    pub messages: u64,
    /// Tokens of every generation in the scope (nested runs included).
    pub tokens: u64,
    /// Generations.
    pub turns: u64,
    /// Wall-clock time since the scope began.
    pub time: Duration,
    /// Time less time spent waiting (for approval).
    pub working_time: Duration,
    /// Cost in US dollars, from the usage models reported.
    pub cost: f64,
}

#[derive(Debug)]
pub(crate) struct Scope {
    pub(crate) id: ScopeId,
    limits: Vec<Limit>,
    started: Instant,
    usage: Mutex<Usage>,
}

impl Scope {
    pub(crate) fn new(limits: &[Limit]) -> Self {
        Scope {
            id: ScopeId::next(),
            limits: limits.to_vec(),
            started: Instant::now(),
            usage: Mutex::new(Usage::default()),
        }
    }

    pub(crate) fn limit(&self, kind: LimitKind) -> Option<Limit> {
        self.limits.iter().copied().find(|l| l.kind() == kind)
    }

    pub(crate) fn exceeded(&self, kind: LimitKind, value: f64, message: String) -> LimitExceeded {
        let limit = self.limit(kind).map_or(0.0, |l| l.value());
        LimitExceeded::new(kind, value, limit, message, self.id)
    }

    fn waiting(&self) -> Duration {
        self.usage.lock().map(|u| u.waiting).unwrap_or_default()
    }

    fn carried(&self) -> Duration {
        self.usage.lock().map(|u| u.carried).unwrap_or_default()
    }

    /// When the scope began, counting time carried over from a resumed run.
    fn began(&self) -> Instant {
        let carried = self.carried();
        self.started.checked_sub(carried).unwrap_or(self.started)
    }

    /// Time since the scope began, counting time carried over from a resumed run.
    fn elapsed(&self) -> Duration {
        self.started.elapsed() + self.carried()
    }

    /// Adds what a run used before it was resumed from a checkpoint: its tokens, turns and
    /// cost, its time and its waiting, so that its limits go on from where they were.
    pub(crate) fn carry(&self, prior: &LimitUsage) {
        if let Ok(mut u) = self.usage.lock() {
            u.tokens += prior.tokens;
            u.turns += prior.turns;
            u.cost += prior.cost;
            u.carried += prior.time;
            u.waiting += prior.time.saturating_sub(prior.working_time);
        }
    }

    /// The earliest time or working deadline of this scope.
    pub(crate) fn deadline(&self) -> Option<(Instant, LimitKind)> {
        let mut best: Option<(Instant, LimitKind)> = None;
        for l in &self.limits {
            let candidate = match l {
                Limit::Time(d) => Some((self.began() + *d, LimitKind::Time)),
                Limit::Working(d) => Some((self.began() + *d + self.waiting(), LimitKind::Working)),
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

    pub(crate) fn time_exceeded(&self, kind: LimitKind) -> LimitExceeded {
        let elapsed = self.elapsed();
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
    /// What the scope has used so far.
    pub(crate) fn usage(&self) -> LimitUsage {
        let time = self.elapsed();
        self.usage
            .lock()
            .map(|u| LimitUsage {
                messages: u.messages,
                tokens: u.tokens,
                turns: u.turns,
                time,
                working_time: time.saturating_sub(u.waiting),
                cost: u.cost,
            })
            .unwrap_or_default()
    }

    /// Records the conversation's length.
    pub(crate) fn count_messages(&self, count: u64) {
        if let Ok(mut u) = self.usage.lock() {
            u.messages = count;
        }
    }

    /// Records a message limit exceeded by an addition (the first one wins).
    pub(crate) fn record_violation(&self, e: &LimitExceeded) {
        if let Ok(mut u) = self.usage.lock()
            && u.violation.is_none()
        {
            u.violation = Some(e.clone());
        }
    }

    /// The message limit an addition exceeded, if one did.
    pub(crate) fn violation(&self) -> Option<LimitExceeded> {
        self.usage.lock().ok().and_then(|u| u.violation.clone())
    }

    /// Adds one generation's tokens and cost.
    pub(crate) fn record(&self, tokens: u64, cost: f64) {
        if let Ok(mut u) = self.usage.lock() {
            u.tokens += tokens;
            u.turns += 1;
            u.cost += cost;
        }
    }

    /// Adds time spent waiting (not working time).
    pub(crate) fn add_waiting(&self, waited: Duration) {
        if let Ok(mut u) = self.usage.lock() {
            u.waiting += waited;
        }
    }

    /// Takes back waiting added in advance that did not happen.
    pub(crate) fn remove_waiting(&self, unused: Duration) {
        if let Ok(mut u) = self.usage.lock() {
            u.waiting = u.waiting.saturating_sub(unused);
        }
    }

    /// Whether this scope has a cost limit.
    pub(crate) fn has_cost_limit(&self) -> bool {
        self.limits.iter().any(|l| matches!(l, Limit::Cost(_)))
    }

    /// The first token, turn or cost limit of this scope that its usage is over.
    pub(crate) fn usage_exceeded(&self) -> Option<LimitExceeded> {
        let (tokens, turns, cost) = self
            .usage
            .lock()
            .map(|u| (u.tokens, u.turns, u.cost))
            .unwrap_or_default();
        self.limits.iter().find_map(|limit| match *limit {
            Limit::Token(l) if tokens > l => Some(self.exceeded(
                LimitKind::Token,
                tokens as f64,
                format!(
                    "Token limit exceeded. value: {}; limit: {}",
                    format_limit(tokens as f64),
                    format_limit(l as f64)
                ),
            )),
            Limit::Turn(l) if turns > l => Some(self.exceeded(
                LimitKind::Turn,
                turns as f64,
                format!(
                    "Turn limit exceeded. value: {}; limit: {}",
                    format_limit(turns as f64),
                    format_limit(l as f64)
                ),
            )),
            Limit::Cost(l) if cost > l => Some(self.exceeded(
                LimitKind::Cost,
                cost,
                format!(
                    "Cost limit exceeded. value: ${}; limit: ${}",
                    money(cost),
                    money(l)
                ),
            )),
            _ => None,
        })
    }
}
