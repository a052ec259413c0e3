//! A scorer's score as the GenAI conventions' evaluation result: a `gen_ai.evaluation.result`
//! event on the span the score was made in (an evaluation's `scorer` span, in the sample's
//! trace beside the run it judged).

use std::collections::BTreeMap;

use actuator_events::{ScoreEvent, ScoreValue};
use opentelemetry::KeyValue;
use opentelemetry::trace::Event as SpanEvent;

use crate::attrs::{
    GEN_AI_EVALUATION_EXPLANATION, GEN_AI_EVALUATION_NAME, GEN_AI_EVALUATION_RESULT,
    GEN_AI_EVALUATION_SCORE_LABEL, GEN_AI_EVALUATION_SCORE_VALUE,
};

/// The most evaluation results one span carries: a scorer's map of values gives one per
/// entry, and a map can be as large as the scorer makes it. Further ones are counted as
/// dropped on the span.
pub(crate) const MAX_RESULTS_PER_SPAN: usize = 128;

/// The results `score` (made `at`) gives, at most `room` of them, and how many more there were: one, or
/// one per entry of a map of values (named `{scorer}/{key}`). The explanation, which often
/// quotes the model's answer, only with `capture_content`.
pub(crate) fn results(
    score: &ScoreEvent,
    at: std::time::SystemTime,
    capture_content: bool,
    room: usize,
    cut: impl Fn(String) -> String,
) -> (Vec<SpanEvent>, usize) {
    let explanation = score
        .score
        .explanation
        .as_ref()
        .filter(|_| capture_content)
        .map(|e| cut(e.clone()));
    let one = |name: String, value: &ScoreValue| {
        let mut attributes = Vec::with_capacity(4);
        attributes.push(KeyValue::new(GEN_AI_EVALUATION_NAME, name));
        let number = value.as_f64();
        if number.is_finite() {
            attributes.push(KeyValue::new(GEN_AI_EVALUATION_SCORE_VALUE, number));
        }
        if let Some(label) = label(value) {
            attributes.push(KeyValue::new(GEN_AI_EVALUATION_SCORE_LABEL, label));
        }
        if let Some(text) = &explanation {
            attributes.push(KeyValue::new(GEN_AI_EVALUATION_EXPLANATION, text.clone()));
        }
        SpanEvent::new(GEN_AI_EVALUATION_RESULT, at, attributes, 0)
    };
    match &score.score.value {
        ScoreValue::Map(values) => {
            let made: Vec<_> = entries(values)
                .take(room)
                .map(|(key, value)| one(format!("{}/{key}", score.scorer), value))
                .collect();
            let more = entries(values).count() - made.len();
            (made, more)
        }
        _ if room == 0 => (Vec::new(), 1),
        value => (vec![one(score.scorer.clone(), value)], 0),
    }
}

/// A map's entries; nested maps are not evaluation results of their own.
fn entries(values: &BTreeMap<String, ScoreValue>) -> impl Iterator<Item = (&String, &ScoreValue)> {
    values
        .iter()
        .filter(|(_, v)| !matches!(v, ScoreValue::Map(_)))
}

/// The value as people read it, when it is not a number: `C`, `I`, `true`, …
fn label(value: &ScoreValue) -> Option<String> {
    match value {
        ScoreValue::String(text) => Some(text.clone()),
        ScoreValue::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}
