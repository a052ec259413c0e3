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
use actuator_tool_core::ToolDef;
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

/// The history an agent sends after a malformed turn (arguments that are not JSON, and a call
/// of a tool that does not exist, each answered by the reference's parsing error through
/// `execute_tools`) is one llama.cpp's server (llama-cpp-python) accepts and answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_cpps_server_accepts_the_history_after_a_malformed_turn() {
    use actuator_model::{ChatMessageAssistant, GenerateConfig, GenerateRequest, Model};
    use std::time::Duration;

    let Some(llama) = common::servers::llama_server() else {
        return;
    };
    let tools = [add_tool()];
    let garbled =
        actuator_dialect::parse_tool_call("call_1", "add", Some(r#"{"x": 1, "y": "#), &[]);
    assert!(garbled.parse_error.is_some());
    let unknown = actuator_dialect::parse_tool_call("call_2", "multiply", Some(r#"{"x": 2}"#), &[]);
    let mut assistant = ChatMessageAssistant::new("Let me add those.");
    assistant.tool_calls = Some(vec![garbled, unknown]);
    let mut messages = vec![
        ChatMessage::user("What is 1 + 2? Use the add tool."),
        ChatMessage::from(assistant),
    ];
    let landed = actuator_exec::execute_tools(&messages, &tools, &Default::default())
        .await
        .unwrap();
    let errors: Vec<String> = landed
        .messages
        .iter()
        .filter_map(|m| {
            m.as_tool()
                .and_then(|t| t.error.as_ref())
                .map(|e| e.message.clone())
        })
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].starts_with("Error parsing the following tool call arguments:"));
    assert_eq!(errors[1], "Tool multiply not found");
    messages.extend(landed.messages);

    let model = ModelOptions::new()
        .base_url(format!("{}/v1", llama.url()))
        .env(|_| None)
        .config(GenerateConfig::default().max_tokens(32).temperature(0.0))
        .timeout(Duration::from_secs(120))
        .retry(RetryPolicy::none())
        .build("llama-cpp-python/smollm2")
        .unwrap();
    let infos: Vec<_> = tools.iter().map(ToolDef::info_arc).collect();
    let output = model
        .generate(GenerateRequest::new(&messages).tools(&infos))
        .await
        .unwrap_or_else(|e| panic!("the server refused the history: {e:#}"));
    assert!(output.message().is_some(), "{output:?}");
}
