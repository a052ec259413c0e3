//! What the W7 benches share: the assistant message they execute and the `RESULT {json}` lines
//! they print (the Python reference's `common.emit` format, nearest-rank percentiles).

use actuator_model::{ChatMessage, ChatMessageAssistant, ToolCall};
use serde_json::json;

/// A user message and an assistant message with `n` `bash("echo hi")` calls.
pub fn batch(n: usize) -> Vec<ChatMessage> {
    let calls = (0..n)
        .map(|i| ToolCall::new(format!("call_{i}"), "bash", json!({"command": "echo hi"})))
        .collect();
    let mut assistant = ChatMessageAssistant::new("");
    assistant.tool_calls = Some(calls);
    vec![
        ChatMessage::user("go"),
        ChatMessage::Assistant(Box::new(assistant)),
    ]
}

/// Prints one `RESULT` line: median, p90 and min of `samples` (seconds, shown in ms when
/// `unit` is `ms`; other units as they are).
pub fn emit(workload: &str, case: &str, samples: &[f64], unit: &str) {
    let scale = if unit == "ms" { 1e3 } else { 1.0 };
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = |q: f64| {
        let r = ((q / 100.0 * sorted.len() as f64) + 0.4999999).round() as usize;
        sorted[r.clamp(1, sorted.len()) - 1]
    };
    let row = json!({
        "workload": workload, "case": case, "median": rank(50.0) * scale,
        "p90": rank(90.0) * scale, "min": sorted[0] * scale, "runs": sorted.len(), "unit": unit,
    });
    println!("RESULT {row}");
}
