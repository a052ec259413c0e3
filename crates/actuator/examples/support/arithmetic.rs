//! The arithmetic task's pieces, shared by the `eval` and `eval_cli` examples: two tools, a
//! stand-in model that uses them, and the questions.

use actuator::eval::{Dataset, Sample};
use actuator::model::{ChatMessage, FunctionModel, ModelOutput, ModelUsage, ToolCall};
use actuator::prelude::*;
use serde_json::json;

/// Add two integers.
///
/// # Arguments
/// * `x` - First addend.
/// * `y` - Second addend.
#[tool]
pub async fn add(x: i64, y: i64) -> i64 {
    x + y
}

/// Multiply two integers.
///
/// # Arguments
/// * `x` - First factor.
/// * `y` - Second factor.
#[tool]
pub async fn multiply(x: i64, y: i64) -> Result<i64, ToolError> {
    x.checked_mul(y)
        .ok_or_else(|| ToolError::new("The product does not fit in 64 bits."))
}

/// A stand-in for a real model: it reads "What is X + Y?" or "What is X × Y?", calls the
/// matching tool, then submits the tool's answer.
///
/// `crash_on`, a question, makes the model abort the whole process when it is asked it: a
/// stand-in for a machine that fails mid-run, for the `eval_cli` example's `retry`.
pub fn arithmetic_model(crash_on: Option<String>) -> FunctionModel {
    FunctionModel::new("mockllm/model", move |messages, _tools| {
        let question = first_question(messages);
        if crash_on.as_ref() == Some(&question) {
            std::process::abort();
        }
        let numbers: Vec<i64> = question
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect();
        let result = messages.iter().rev().find_map(|m| match m {
            ChatMessage::Tool(t) if t.error.is_none() => Some(t.content.text()),
            _ => None,
        });
        let (text, call) = match result {
            Some(answer) => (
                format!("The answer is {answer}."),
                ToolCall::new("submit_1", "submit", json!({"answer": answer})),
            ),
            None => {
                let tool = if question.contains('×') {
                    "multiply"
                } else {
                    "add"
                };
                let args = json!({"x": numbers.first().copied().unwrap_or(0), "y": numbers.get(1).copied().unwrap_or(0)});
                (
                    format!("Let me {tool}."),
                    ToolCall::new("call_1", tool, args),
                )
            }
        };
        let mut out = ModelOutput::for_tool_calls("mockllm/model", text, vec![call]);
        out.usage = Some(ModelUsage::new(120, 18));
        Ok(out)
    })
}

/// The text of the conversation's first user message: the sample's question.
pub fn first_question(messages: &[ChatMessage]) -> String {
    messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::User(u) => Some(u.content.text()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The question of sample `i` (from 1).
pub fn question(i: i64) -> String {
    let (x, y) = (i * 3, i + 4);
    if i % 2 == 0 {
        format!("What is {x} × {y}?")
    } else {
        format!("What is {x} + {y}?")
    }
}

/// `n` questions (ids 1 to `n`), each with its answer as the target.
pub fn dataset(n: i64) -> Dataset {
    let samples = (1..=n).map(|i: i64| {
        let (x, y) = (i * 3, i + 4);
        let answer = if i % 2 == 0 { x * y } else { x + y };
        Sample::new(question(i), answer.to_string()).with_id(i)
    });
    Dataset::new(samples).with_name("arithmetic")
}
