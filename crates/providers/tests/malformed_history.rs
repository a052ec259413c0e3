//! A model that emits tool-call arguments that are not JSON gets the reference's parsing error
//! back, and the conversation it sends next is one a strict server accepts: a stub that does
//! what vLLM does (a 400 for the whole request when an assistant tool call's `arguments` in the
//! history is not a JSON object) sees only valid histories, and the run goes on to its answer.
//! The raw text stays in the model event's tool call, for the log. (Issue 38 §5.)

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use actuator_agent::limits::turn_limit;
use actuator_agent::{RunOptions, react, run};
use actuator_events::{Event, EventLog};
use actuator_model::ChatMessage;
use actuator_providers::{ModelOptions, RetryPolicy};
use common::openai::model_at;
use common::{chat_completion, openai_ok};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Answers as vLLM does: a history with a tool call whose arguments are not a JSON object is
/// a 400; otherwise the first request gets a malformed call of `add`, the next a submission.
#[derive(Clone, Default)]
struct StrictServer {
    calls: Arc<AtomicUsize>,
    rejected: Arc<AtomicUsize>,
}

fn malformed_history(body: &Value) -> Option<String> {
    for message in body["messages"].as_array()? {
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            let arguments = call["function"]["arguments"].as_str().unwrap_or_default();
            match serde_json::from_str::<Value>(arguments) {
                Ok(Value::Object(_)) => {}
                _ => return Some(arguments.to_owned()),
            }
        }
    }
    None
}

impl Respond for StrictServer {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        common::spec::check_openai_request(&body);
        if let Some(bad) = malformed_history(&body) {
            self.rejected.fetch_add(1, Ordering::SeqCst);
            return ResponseTemplate::new(400).set_body_json(json!({
                "object": "error",
                "message": format!("Invalid tool call arguments in history: {bad}"),
                "type": "BadRequestError",
                "code": 400
            }));
        }
        let call = |id: &str, name: &str, arguments: &str| json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}});
        let message = match self.calls.fetch_add(1, Ordering::SeqCst) {
            0 => json!({"role": "assistant", "content": null,
                        "tool_calls": [call("call_1", "add", r#"{"x": 1, "y": "#)]}),
            _ => json!({"role": "assistant", "content": null,
                        "tool_calls": [call("call_2", "submit", r#"{"answer": "done"}"#)]}),
        };
        openai_ok(chat_completion(message, "tool_calls"))
    }
}

/// Add two integers.
///
/// # Arguments
/// * `x` - First addend.
/// * `y` - Second addend.
#[actuator_tool_macros::tool]
async fn add(x: i64, y: i64) -> i64 {
    x + y
}

#[tokio::test]
async fn a_malformed_call_never_poisons_the_history_a_strict_server_sees() {
    let server = MockServer::start().await;
    let strict = StrictServer::default();
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(strict.clone())
        .mount(&server)
        .await;
    let model = model_at(
        &server.uri(),
        ModelOptions::new().retry(RetryPolicy::none()),
    );
    let agent = react().tools([add_tool()]).model(model).build().unwrap();
    let log = EventLog::new();
    let out = run(
        &agent,
        "What is 1 + 2?",
        RunOptions::new()
            .limits([turn_limit(5)])
            .events(log.clone()),
    )
    .await
    .unwrap();
    assert_eq!(out.answer(), Some("done"));
    assert_eq!(
        strict.rejected.load(Ordering::SeqCst),
        0,
        "a poisoned history was sent"
    );
    assert_eq!(strict.calls.load(Ordering::SeqCst), 2);
    // What was sent back for the malformed call: the call, with an empty arguments object.
    let sent = common::openai_requests(&server).await;
    let replayed = sent[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|m| m["tool_calls"].as_array().map(|c| c[0].clone()))
        .unwrap();
    assert_eq!(replayed["function"]["name"], "add");
    assert_eq!(replayed["function"]["arguments"], "{}");

    // The model read the reference's parsing error.
    let error = out
        .state
        .messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::Tool(t) => t.error.as_ref().map(|e| e.message.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        error.starts_with("Error parsing the following tool call arguments:"),
        "{error}"
    );
    // The raw text stays in the model event, for the log.
    let raw = log
        .events()
        .iter()
        .find_map(|e| match e {
            Event::Model(m) => m
                .output
                .as_ref()
                .and_then(|o| o.message())
                .and_then(|a| a.calls().first().cloned())
                .and_then(|c| c.parse_error),
            _ => None,
        })
        .unwrap();
    assert!(raw.contains(r#"{"x": 1, "y": "#), "{raw}");
}
