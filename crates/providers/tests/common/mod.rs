//! Shared by the provider tests: the official schemas as oracles, stub-server helpers, and the
//! real servers (llama.cpp, LiteLLM) started from the venvs `scripts/setup-test-env` makes.
#![allow(dead_code, clippy::panic, clippy::unwrap_used, clippy::print_stderr)]

pub mod forced;
pub mod gemini;
pub mod openai;
pub mod rate_limited;
pub mod responses;
pub mod servers;
pub mod spec;
pub mod tools;

use serde_json::Value;
use wiremock::{MockServer, ResponseTemplate};

/// A 200 response with `body`, after checking that `body` is a valid
/// `CreateChatCompletionResponse`: fixtures cannot drift from the API.
pub fn openai_ok(body: Value) -> ResponseTemplate {
    spec::assert_valid(
        &spec::openai().chat_response,
        &body,
        "CreateChatCompletionResponse",
    );
    ResponseTemplate::new(200).set_body_json(body)
}

/// A 200 response with `body`, after checking it against Anthropic's `Message` schema.
pub fn anthropic_ok(body: Value) -> ResponseTemplate {
    spec::assert_valid(&spec::anthropic().response, &body, "anthropic Message");
    ResponseTemplate::new(200).set_body_json(body)
}

/// The JSON bodies the server received.
pub async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

/// The request bodies the server received, each checked against `CreateChatCompletionRequest`
/// (and its field names against the schema's properties).
pub async fn openai_requests(server: &MockServer) -> Vec<Value> {
    let bodies = bodies(server).await;
    for body in &bodies {
        spec::check_openai_request(body);
    }
    bodies
}

/// The request bodies, each checked against Anthropic's request schema.
pub async fn anthropic_requests(server: &MockServer) -> Vec<Value> {
    let bodies = bodies(server).await;
    for body in &bodies {
        spec::assert_valid(
            &spec::anthropic().request,
            body,
            "anthropic MessageCreateParams",
        );
    }
    bodies
}

/// A minimal Chat Completions response around one message.
/// The message gets `"refusal": null` unless it has one (the schema requires the field).
pub fn chat_completion(mut message: Value, finish_reason: &str) -> Value {
    if message.get("refusal").is_none() {
        message["refusal"] = Value::Null;
    }
    serde_json::json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    })
}

/// A minimal Anthropic message around some content blocks.
pub fn anthropic_message(content: Value, stop_reason: &str) -> Value {
    serde_json::json!({
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    })
}

/// A `tracing` writer into a shared buffer, to check what the providers log.
#[derive(Clone, Default)]
pub struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Captured {
    /// Installs a subscriber writing here at `level` and above, for this thread until the
    /// guard drops (use a current-thread runtime).
    pub fn install(&self, level: tracing::Level) -> tracing::subscriber::DefaultGuard {
        let subscriber = tracing_subscriber::fmt()
            .with_writer(self.clone())
            .with_max_level(level)
            .with_ansi(false)
            .finish();
        tracing::subscriber::set_default(subscriber)
    }

    /// What was written.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}
