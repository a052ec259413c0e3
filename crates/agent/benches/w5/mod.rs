//! W5's agent, shared by the benches that run it: the `add` tool that stamps its calls, and
//! the scripted model that calls it until enough results exist, then submits.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use actuator_model::{ChatMessage, ModelError, ModelOutput, ModelUsage, ToolCall};
use actuator_tool_core::ToolInfo;
use actuator_tool_macros::tool;
use serde_json::json;

/// The state of one agent's `add` tool: when each call ran.
pub struct Recorder {
    pub stamps: Mutex<Vec<Instant>>,
}

impl Recorder {
    /// Add two integers.
    ///
    /// # Arguments
    /// * `x` - First addend.
    /// * `y` - Second addend.
    #[tool]
    pub async fn add(&self, x: i64, y: i64) -> i64 {
        if let Ok(mut stamps) = self.stamps.lock() {
            stamps.push(Instant::now());
        }
        x + y
    }
}

/// The mock model's policy: `add` until `submit_after` tool results exist, then `submit`
/// (or answer in text when there is no submit tool).
pub fn script(
    input: &[ChatMessage],
    tools: &[Arc<ToolInfo>],
    submit_after: usize,
) -> Result<ModelOutput, ModelError> {
    let done = input.iter().filter(|m| m.as_tool().is_some()).count();
    let has_submit = tools.iter().any(|t| t.name == "submit");
    let call = |id: String, function: &str, args| {
        ModelOutput::for_tool_calls("mockllm/model", "", vec![ToolCall::new(id, function, args)])
    };
    let out = if done < submit_after {
        call(format!("call_{done}"), "add", json!({"x": done, "y": 1}))
    } else if has_submit {
        call(
            "call_submit".to_owned(),
            "submit",
            json!({"answer": done.to_string()}),
        )
    } else {
        ModelOutput::from_content("mockllm/model", done.to_string())
    };
    Ok(out.with_usage(ModelUsage::new(10, 10)))
}

/// Prints one `RESULT` line of `workload`: the median and 90th percentile (nearest rank) of
/// `samples` seconds, in `unit` (`ms`, else µs).
pub fn emit(workload: &str, case: &str, samples: &[f64], unit: &str) {
    let scale = if unit == "ms" { 1e3 } else { 1e6 };
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = |q: f64| {
        let r = ((q / 100.0 * sorted.len() as f64) + 0.4999999).round() as usize;
        sorted[r.clamp(1, sorted.len()) - 1]
    };
    let row = json!({
        "workload": workload,
        "case": case,
        "median": rank(50.0) * scale,
        "p90": rank(90.0) * scale,
        "min": sorted[0] * scale,
        "runs": sorted.len(),
        "unit": unit,
    });
    println!("RESULT {row}");
}
