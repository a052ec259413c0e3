//! W6's 100-message conversation, built by the same rule as `conversation()` in
//! `bench/python-reference/w6_provider.py`: a system prompt, a user task, then 49 turns of an
//! assistant message (a sentence and one tool call, `add` on even turns, `search` on odd ones)
//! and its tool result (the sum, or eight lines of search hits). About 50 KB of JSON.

use actuator_model::{ChatMessage, ChatMessageAssistant, ToolCall};
use serde_json::json;

/// The words the filler text cycles through.
const WORDS: [&str; 16] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    "kilo", "lima", "mike", "november", "oscar", "papa",
];

/// `n` words of filler, starting at a place fixed by `seed`.
pub fn text(seed: usize, n: usize) -> String {
    (0..n)
        .map(|k| WORDS[(seed * 7 + k) % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

/// The conversation: exactly 100 messages, ending with a tool result.
pub fn build() -> Vec<ChatMessage> {
    let mut messages = vec![
        ChatMessage::system(format!(
            "You are a careful assistant working on a data task. Use the tools to compute and \
             look things up; answer briefly. {}",
            text(0, 120)
        )),
        ChatMessage::user(format!(
            "Work through the records below and total them.\n{}",
            text(1, 80)
        )),
    ];
    for i in 0..49 {
        let id = format!("call_{i}");
        let (function, arguments, result) = if i % 2 == 0 {
            ("add", json!({"x": i, "y": i + 1}), (2 * i + 1).to_string())
        } else {
            let hits: Vec<String> = (0..8)
                .map(|k| format!("hit {k}: {}", text(i + k, 20)))
                .collect();
            (
                "search",
                json!({"query": text(i, 4), "limit": 8}),
                hits.join("\n"),
            )
        };
        let mut assistant = ChatMessageAssistant::new(format!("Step {i}: {}", text(i + 2, 30)));
        assistant.tool_calls = Some(vec![ToolCall::new(id.clone(), function, arguments)]);
        messages.push(ChatMessage::Assistant(Box::new(assistant)));
        messages.push(ChatMessage::tool(result, id, function, None));
    }
    messages
}
