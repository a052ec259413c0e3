//! Actuator's events and messages in the reference's log shapes: ISO timestamps, `working_start`,
//! event tags and field names as `inspect_ai.event` has them.

use crate::log::pool::MessagePool;
use actuator_events::{Event, EventSink, ReviewEvent, ToolEvent, unix_now};
use actuator_model::new_id;
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex, PoisonError};

/// ISO 8601 (UTC, microseconds) of a Unix time in seconds.
pub(crate) fn iso(seconds: f64) -> String {
    let micros = (seconds * 1e6).round();
    let micros = if micros.is_finite() { micros as i64 } else { 0 };
    chrono::DateTime::from_timestamp_micros(micros)
        .unwrap_or_default()
        .format("%Y-%m-%dT%H:%M:%S%.6f+00:00")
        .to_string()
}

/// The current time, ISO 8601.
pub(crate) fn now_iso() -> String {
    iso(unix_now())
}

/// An event sink that stamps each event with its arrival time (span, info and limit events
/// carry none of their own, and the log needs one for every event).
#[derive(Default)]
pub(crate) struct StampedLog {
    events: Mutex<Vec<(f64, Event)>>,
}

impl StampedLog {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub(crate) fn take(&self) -> Vec<(f64, Event)> {
        std::mem::take(&mut *self.events.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The events from the `from`th on (copies), and how many there are in all.
    pub(crate) fn since(&self, from: usize) -> (Vec<(f64, Event)>, usize) {
        let events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        (
            events.get(from..).unwrap_or_default().to_vec(),
            events.len(),
        )
    }

    /// Puts `earlier` (events of an attempt before this one) before the events so far; how
    /// many there are now.
    pub(crate) fn restore(&self, earlier: Vec<(f64, Event)>) -> usize {
        let mut events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        events.splice(0..0, earlier);
        events.len()
    }
}

impl EventSink for StampedLog {
    fn emit(&self, event: Event) {
        // Pending tool events are superseded by their completed ones: the log keeps the latter.
        // Stream deltas are superseded by their model event (the reference logs none); this
        // sink does not ask for them, so only a sink wrapped around it could pass one on.
        match &event {
            Event::ToolPending(_) | Event::ModelStream(_) => return,
            Event::Tool(t) if t.is_pending() => return,
            _ => {}
        }
        let now = unix_now();
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((now, event));
    }

    fn wants_pending_tool_events(&self) -> bool {
        false
    }

    fn wants_model_stream(&self) -> bool {
        false
    }
}

fn base(kind: &str, at: f64, sample_start: f64) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("event".into(), kind.into());
    m.insert("uuid".into(), new_id().as_str().into());
    m.insert("timestamp".into(), iso(at).into());
    m.insert("working_start".into(), json!((at - sample_start).max(0.0)));
    m
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Generation settings the reference's `GenerateConfig` reads with the same types.
fn generate_config(config: &Value) -> Value {
    const SHARED: [&str; 10] = [
        "max_tokens",
        "temperature",
        "top_p",
        "top_k",
        "seed",
        "stop_seqs",
        "parallel_tool_calls",
        "max_retries",
        "reasoning_effort",
        "reasoning_tokens",
    ];
    let mut out = Map::new();
    if let Value::Object(m) = config {
        for key in SHARED {
            if let Some(v) = m.get(key).filter(|v| !v.is_null()) {
                out.insert(key.into(), v.clone());
            }
        }
    }
    Value::Object(out)
}

fn tool_event(t: &ToolEvent, sample_start: f64) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(approval) = &t.approval {
        let mut a = base("approval", t.started_at, sample_start);
        a.insert("message".into(), "".into());
        // The call the approver was shown: canonical, when the tool declares its canonical form.
        let shown = match &approval.arguments {
            Some(canonical) => json!(canonical),
            None => Value::clone(&t.arguments),
        };
        a.insert(
            "call".into(),
            json!({"id": t.id, "function": t.function, "arguments": shown, "type": "function"}),
        );
        a.insert(
            "approver".into(),
            approval
                .approver
                .clone()
                .unwrap_or_else(|| "policy".into())
                .into(),
        );
        a.insert("decision".into(), to_value(&approval.decision));
        if let Some(e) = &approval.explanation {
            a.insert("explanation".into(), e.clone().into());
        }
        if let Some(args) = &approval.modified_arguments {
            a.insert(
                "modified".into(),
                json!({"id": t.id, "function": t.function, "arguments": args, "type": "function"}),
            );
        }
        out.push(Value::Object(a));
    }
    let mut e = base("tool", t.started_at, sample_start);
    e.insert("type".into(), "function".into());
    e.insert("id".into(), (*t.id).into());
    e.insert("function".into(), (*t.function).into());
    e.insert("arguments".into(), Value::clone(&t.arguments));
    e.insert("result".into(), to_value(&t.result));
    if let Some((from, to)) = t.truncated {
        e.insert("truncated".into(), json!([from, to]));
    }
    if let Some(err) = &t.error {
        e.insert("error".into(), to_value(err));
    }
    if let Some(c) = t.completed_at {
        e.insert("completed".into(), iso(c).into());
    }
    if let Some(w) = t.working_time {
        e.insert("working_time".into(), json!(w));
    }
    for (key, value) in [
        ("agent", t.agent.as_deref()),
        ("agent_span_id", t.agent_span_id.as_deref()),
        ("message_id", t.message_id.as_deref()),
        ("span_id", t.span_id.as_deref()),
    ] {
        if let Some(v) = value {
            e.insert(key.into(), v.into());
        }
    }
    if t.failed == Some(true) || t.fatal.is_some() {
        e.insert("failed".into(), true.into());
    }
    out.push(Value::Object(e));
    out
}

/// One event in the reference's shapes (an approval becomes its own event before the tool's).
/// A model event's input goes into `pool` (the sample's `events_data`) and the event keeps
/// references to it.
pub(crate) fn event_json(
    at: f64,
    event: &Event,
    sample_start: f64,
    pool: &mut MessagePool,
) -> Vec<Value> {
    match event {
        Event::Tool(t) => tool_event(t, sample_start),
        // The log drops these (see `StampedLog`); given one, it is the reference's pending event.
        Event::ToolPending(p) => tool_event(&p.to_tool_event(), sample_start),
        Event::Model(m) => {
            let mut e = base("model", m.started_at, sample_start);
            e.insert("model".into(), m.model.clone().into());
            e.insert("input".into(), json!([]));
            e.insert("input_refs".into(), pool.refs(m.input.iter()));
            e.insert("tools".into(), to_value(&m.tools));
            e.insert("tool_choice".into(), to_value(&m.tool_choice));
            e.insert("config".into(), generate_config(&to_value(&m.config)));
            let output = match &m.output {
                Some(o) => to_value(o),
                None => json!({"model": m.model, "choices": []}),
            };
            e.insert("output".into(), output);
            if let Some(err) = &m.error {
                e.insert("error".into(), err.clone().into());
            }
            e.insert("completed".into(), iso(m.completed_at).into());
            e.insert("working_time".into(), json!(m.working_time));
            if m.retries > 0 {
                e.insert("retries".into(), json!(m.retries));
            }
            vec![Value::Object(e)]
        }
        // The reference logs a retry rather than recording it: a note in the reference's
        // log-line shape keeps it visible in the viewer.
        Event::ModelRetry(r) => {
            let mut e = base("info", at, sample_start);
            e.insert("source".into(), "model_retry".into());
            e.insert(
                "data".into(),
                format!(
                    "-> {} retry {} (retrying in {} seconds) {}",
                    r.model, r.retry, r.wait, r.error
                )
                .into(),
            );
            vec![Value::Object(e)]
        }
        Event::SpanBegin(s) => {
            let mut e = base("span_begin", at, sample_start);
            e.insert("id".into(), s.id.clone().into());
            if let Some(p) = &s.parent_id {
                e.insert("parent_id".into(), p.clone().into());
            }
            e.insert("type".into(), s.kind.clone().into());
            e.insert("name".into(), s.name.clone().into());
            vec![Value::Object(e)]
        }
        Event::SpanEnd(s) => {
            let mut e = base("span_end", at, sample_start);
            e.insert("id".into(), s.id.clone().into());
            vec![Value::Object(e)]
        }
        Event::Info(i) => {
            let mut e = base("info", at, sample_start);
            if let Some(s) = &i.source {
                e.insert("source".into(), s.clone().into());
            }
            e.insert("data".into(), i.message.clone().into());
            vec![Value::Object(e)]
        }
        Event::Compaction(c) => {
            let mut e = base("compaction", at, sample_start);
            e.insert("type".into(), c.strategy.clone().into());
            e.insert("tokens_before".into(), json!(c.tokens_before));
            e.insert("tokens_after".into(), json!(c.tokens_after));
            e.insert("source".into(), c.trigger.clone().into());
            vec![Value::Object(e)]
        }
        Event::Limit(l) => vec![limit_event(at, &l.kind, &l.message, l.limit, sample_start)],
        Event::Review(r) => vec![review_event(r, sample_start)],
        Event::Score(score) => {
            let mut e = base("score", score.at, sample_start);
            e.insert("score".into(), to_value(&score.score));
            if let Some(target) = &score.target {
                e.insert("target".into(), target.clone());
            }
            e.insert("intermediate".into(), score.intermediate.into());
            e.insert("scorer".into(), score.scorer.clone().into());
            vec![Value::Object(e)]
        }
        Event::Interrupt(i) => {
            let mut e = base("interrupt", i.at, sample_start);
            e.insert("source".into(), i.source.as_str().into());
            e.insert("interrupted".into(), i.interrupted.as_str().into());
            if let Some(id) = &i.interrupted_tool_call_id {
                e.insert("interrupted_tool_call_id".into(), id.clone().into());
            }
            vec![Value::Object(e)]
        }
        // Event kinds added later are kept as notes rather than dropped.
        other => {
            let mut e = base("info", at, sample_start);
            e.insert("source".into(), "actuator".into());
            e.insert("data".into(), to_value(other));
            vec![Value::Object(e)]
        }
    }
}

/// The reference's `review` event (`inspect_ai.event.ReviewEvent`): the reviewed call as
/// the reference's `ToolCall`, the reviewer, its decision, explanation and metadata.
fn review_event(r: &ReviewEvent, sample_start: f64) -> Value {
    let mut e = base("review", r.at, sample_start);
    if let Some(span) = &r.span_id {
        e.insert("span_id".into(), (**span).into());
    }
    if let Some(m) = &r.metadata {
        e.insert("metadata".into(), Value::Object(m.clone()));
    }
    e.insert("message".into(), r.message.clone().into());
    e.insert(
        "call".into(),
        json!({"id": r.id, "function": r.function, "arguments": r.arguments, "type": "function"}),
    );
    e.insert("reviewer".into(), r.reviewer.clone().into());
    e.insert("decision".into(), r.decision.as_str().into());
    if let Some(x) = &r.explanation {
        e.insert("explanation".into(), x.clone().into());
    }
    Value::Object(e)
}

/// The reference's `sample_limit` event.
pub(crate) fn limit_event(
    at: f64,
    kind: &str,
    message: &str,
    limit: f64,
    sample_start: f64,
) -> Value {
    let mut e = base("sample_limit", at, sample_start);
    e.insert("type".into(), kind.into());
    e.insert("message".into(), message.into());
    e.insert("limit".into(), json!(limit));
    Value::Object(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use actuator_events::{ModelEvent, ModelRetryEvent, SharedMessages};
    use actuator_model::{GenerateConfig, ModelOutput};
    use actuator_tool_core::ToolChoice;

    #[test]
    fn the_stamped_log_asks_for_no_stream_deltas_and_drops_any_it_is_given() {
        use actuator_events::{ModelStreamEvent, StreamEvent};
        let log = StampedLog::new();
        assert!(!log.wants_model_stream());
        let delta = StreamEvent::Text { text: "Hel".into() };
        log.emit(Event::ModelStream(ModelStreamEvent::new(1, delta)));
        log.emit_in(
            Some("span_1"),
            Event::ModelStream(ModelStreamEvent::new(1, StreamEvent::Retry { attempt: 2 })),
        );
        assert!(log.take().is_empty());
    }

    #[test]
    fn a_review_is_the_references_review_event() {
        use actuator_events::{ReviewDecision, ReviewEvent};
        let mut r = ReviewEvent::new(
            "call_1",
            "bash",
            serde_json::json!({"cmd": "ls"}),
            "monitor",
            ReviewDecision::Terminate,
        );
        r.message = "Listing.".into();
        r.explanation = Some("too much".into());
        r.at = 11.0;
        let [json] = event_json(
            11.0,
            &Event::Review(Box::new(r)),
            10.0,
            &mut MessagePool::default(),
        )
        .try_into()
        .unwrap_or_else(|_| panic!());
        assert_eq!(json["event"], "review");
        assert_eq!(json["working_start"], 1.0);
        assert_eq!(json["message"], "Listing.");
        assert_eq!(
            json["call"],
            serde_json::json!({"id": "call_1", "function": "bash", "arguments": {"cmd": "ls"}, "type": "function"})
        );
        assert_eq!(json["reviewer"], "monitor");
        assert_eq!(json["decision"], "terminate");
        assert_eq!(json["explanation"], "too much");
    }

    #[test]
    fn an_approval_shows_the_canonical_call_its_approver_saw() {
        use actuator_events::{ApprovalDecision, ApprovalEvent, ToolEvent};
        let mut t =
            ToolEvent::pending("call_1", "read", serde_json::json!({"path": "a/../b"}), 1.0);
        let mut approval = ApprovalEvent::new(ApprovalDecision::Approve);
        approval.arguments = serde_json::json!({"path": "/work/b"}).as_object().cloned();
        t.approval = Some(Box::new(approval));
        let events = event_json(
            1.0,
            &Event::Tool(Box::new(t)),
            0.0,
            &mut MessagePool::default(),
        );
        assert_eq!(events[0]["event"], "approval");
        assert_eq!(events[0]["call"]["arguments"]["path"], "/work/b");
        assert_eq!(events[1]["event"], "tool");
        assert_eq!(events[1]["arguments"]["path"], "a/../b");
    }

    #[test]
    fn the_stamped_log_keeps_a_calls_completed_event_and_drops_its_pending_ones() {
        use actuator_events::{PendingToolEvent, ToolEvent};
        let log = StampedLog::new();
        let pending = PendingToolEvent::new("call_1", "add", serde_json::json!({"x": 1}), 1.0);
        log.emit(Event::ToolPending(pending.clone()));
        log.emit(Event::Tool(Box::new(pending.to_tool_event())));
        let mut done = ToolEvent::pending("call_1", "add", serde_json::json!({"x": 1}), 1.0);
        done.pending = None;
        done.completed_at = Some(2.0);
        log.emit(Event::Tool(Box::new(done.clone())));
        let kept: Vec<Event> = log.take().into_iter().map(|(_, e)| e).collect();
        assert_eq!(kept, vec![Event::Tool(Box::new(done))]);
        // Converted anyway, a pending event has the reference's pending shape.
        let [json] = event_json(
            1.0,
            &Event::ToolPending(pending),
            0.0,
            &mut MessagePool::default(),
        )
        .try_into()
        .unwrap_or_else(|_| panic!());
        assert_eq!(
            (json["event"].as_str(), json["id"].as_str()),
            (Some("tool"), Some("call_1"))
        );
    }

    #[test]
    fn a_retry_is_a_note_and_the_model_event_counts_retries() {
        let retry = Event::ModelRetry(
            ModelRetryEvent::new("openai/gpt", 2, 1.5, "HTTP 429: slow down")
                .with_status(Some(429)),
        );
        let [note] = event_json(100.0, &retry, 99.0, &mut MessagePool::default())
            .try_into()
            .unwrap_or_else(|_| panic!());
        assert_eq!(note["event"], "info");
        assert_eq!(note["source"], "model_retry");
        assert_eq!(
            note["data"],
            "-> openai/gpt retry 2 (retrying in 1.5 seconds) HTTP 429: slow down"
        );
        let model = |retries| {
            Event::Model(Box::new(ModelEvent {
                model: "openai/gpt".into(),
                input: SharedMessages::from(&[][..]),
                tools: Vec::new().into(),
                tool_choice: ToolChoice::Auto,
                config: GenerateConfig::default(),
                output: Some(ModelOutput::from_content("openai/gpt", "hi").into()),
                error: None,
                started_at: 99.0,
                completed_at: 100.0,
                working_time: 0.2,
                retries,
                generation: None,
            }))
        };
        assert_eq!(
            event_json(100.0, &model(2), 99.0, &mut MessagePool::default())[0]["retries"],
            2
        );
        assert!(
            event_json(100.0, &model(0), 99.0, &mut MessagePool::default())[0]
                .get("retries")
                .is_none()
        );
    }
}
