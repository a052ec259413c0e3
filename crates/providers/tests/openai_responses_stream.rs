//! The Responses API streamed: every replayed event is first checked against the official
//! `ResponseStreamEvent` schema, every request against `CreateResponse`.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use actuator_model::{ChatMessage, GenerateRequest, MessageContent, Model, StopReason};
use actuator_providers::{ModelOptions, ProviderError, RetryPolicy};
use actuator_tool_core::Content;
use common::responses::{reasoning_and_calls, response};
use common::{spec, tools};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// An event stream of `events`, each checked against `ResponseStreamEvent`.
fn sse(events: &[Value]) -> ResponseTemplate {
    let mut body = String::new();
    for (n, event) in events.iter().enumerate() {
        let mut event = event.clone();
        event["sequence_number"] = json!(n);
        spec::assert_valid(
            &spec::openai().response_event,
            &event,
            "ResponseStreamEvent",
        );
        body.push_str(&format!(
            "event: {}\ndata: {event}\n\n",
            event["type"].as_str().unwrap()
        ));
    }
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

/// What a server streams for `final_response`: created, each item added and done (with a text
/// delta for messages), then `last` carrying the response.
fn events_for(final_response: &Value, last: &str) -> Vec<Value> {
    let mut start = final_response.clone();
    start["status"] = json!("in_progress");
    start["output"] = json!([]);
    let mut events = vec![json!({"type": "response.created", "response": start})];
    for (i, item) in final_response["output"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        events.push(json!({"type": "response.output_item.added", "output_index": i, "item": item}));
        if item["type"] == "message" {
            events.push(json!({
                "type": "response.output_text.delta", "item_id": item["id"], "output_index": i,
                "content_index": 0, "delta": item["content"][0]["text"], "logprobs": [],
            }));
        }
        if item["type"] == "function_call" {
            events.push(json!({
                "type": "response.function_call_arguments.delta", "item_id": item["id"],
                "output_index": i, "delta": item["arguments"],
            }));
        }
        events.push(json!({"type": "response.output_item.done", "output_index": i, "item": item}));
    }
    events.push(json!({"type": last, "response": final_response}));
    events
}

fn model(url: &str, retry: RetryPolicy) -> Arc<dyn Model> {
    ModelOptions::new()
        .api_key("sk-test")
        .base_url(format!("{url}/v1"))
        .env(|_| None)
        .stream(true)
        .retry(retry)
        .build("openai/o4-mini")
        .unwrap()
}

fn quick_retries(n: u32) -> RetryPolicy {
    RetryPolicy::default()
        .max_attempts(n)
        .backoff(Duration::from_millis(5), Duration::from_millis(20))
}

async fn ask(model: &dyn Model) -> Result<actuator_model::ModelOutput, actuator_model::ModelError> {
    model
        .generate(
            GenerateRequest::new(&[ChatMessage::user("3 + 4 and read a")])
                .tools(&[tools::add(), tools::read()]),
        )
        .await
}

async fn mount(server: &MockServer, template: ResponseTemplate, times: Option<u64>) {
    let mock = Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(template);
    match times {
        Some(n) => mock.up_to_n_times(n).mount(server).await,
        None => mock.mount(server).await,
    }
}

async fn requests(server: &MockServer) -> Vec<Value> {
    let bodies = common::bodies(server).await;
    for body in &bodies {
        spec::assert_valid(&spec::openai().create_response, body, "CreateResponse");
    }
    bodies
}

#[tokio::test]
async fn a_streamed_response_is_the_same_output_as_a_whole_one() {
    let server = MockServer::start().await;
    let done = response(reasoning_and_calls(), "completed", Value::Null);
    mount(&server, sse(&events_for(&done, "response.completed")), None).await;
    let out = ask(&*model(&server.uri(), RetryPolicy::none()))
        .await
        .unwrap();
    assert_eq!(out.stop_reason(), Some(StopReason::ToolCalls));
    let message = out.message().unwrap();
    let MessageContent::Parts(parts) = &message.content else {
        panic!("{:?}", message.content)
    };
    assert!(
        matches!(&parts[0], Content::Reasoning { reasoning, signature: Some(s), .. } if reasoning == "Two sums." && s == "gAAAAenc")
    );
    assert_eq!(message.content.text(), "Adding.");
    let calls = message.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].arguments.to_map().unwrap()["x"], json!(3));
    // Strict nulls stripped, as for a whole response.
    assert_eq!(calls[1].arguments.to_value().unwrap(), json!({"path": "a"}));
    assert_eq!(out.usage.unwrap().reasoning_tokens, Some(12));
    let sent = requests(&server).await;
    assert_eq!(sent[0]["stream"], true);
}

#[tokio::test]
async fn an_incomplete_stream_is_a_max_tokens_stop() {
    let server = MockServer::start().await;
    let output = json!([{"type": "message", "id": "msg_1", "role": "assistant", "status": "incomplete",
        "content": [{"type": "output_text", "text": "Partial", "annotations": [], "logprobs": []}]}]);
    let incomplete = response(output, "incomplete", json!({"reason": "max_output_tokens"}));
    mount(
        &server,
        sse(&events_for(&incomplete, "response.incomplete")),
        None,
    )
    .await;
    let out = ask(&*model(&server.uri(), RetryPolicy::none()))
        .await
        .unwrap();
    assert_eq!(out.stop_reason(), Some(StopReason::MaxTokens));
    assert_eq!(out.completion(), "Partial");
}

#[tokio::test]
async fn items_done_stand_in_for_an_empty_final_output() {
    let server = MockServer::start().await;
    let done = response(reasoning_and_calls(), "completed", Value::Null);
    let mut events = events_for(&done, "response.completed");
    let last = events.last_mut().unwrap();
    last["response"]["output"] = json!([]);
    mount(&server, sse(&events), None).await;
    let out = ask(&*model(&server.uri(), RetryPolicy::none()))
        .await
        .unwrap();
    assert_eq!(out.message().unwrap().calls().len(), 2);
}

#[tokio::test]
async fn a_stream_cut_before_its_response_is_retried() {
    let server = MockServer::start().await;
    let done = response(reasoning_and_calls(), "completed", Value::Null);
    let events = events_for(&done, "response.completed");
    // The first attempt stops after the first item.
    mount(&server, sse(&events[..3]), Some(1)).await;
    mount(&server, sse(&events), None).await;
    let out = ask(&*model(&server.uri(), quick_retries(3))).await.unwrap();
    assert_eq!(out.message().unwrap().calls().len(), 2);
    assert_eq!(requests(&server).await.len(), 2);

    // With no retries left, it is a connection error that says what happened.
    let server = MockServer::start().await;
    mount(&server, sse(&events[..3]), None).await;
    let err = ask(&*model(&server.uri(), RetryPolicy::none()))
        .await
        .unwrap_err();
    assert!(
        matches!(err.downcast_ref::<ProviderError>(), Some(ProviderError::Connection { message, .. }) if message.contains("ended before")),
        "{err:?}"
    );
}

#[tokio::test]
async fn an_error_event_is_a_server_error_and_a_failed_response_is_reported() {
    let server = MockServer::start().await;
    mount(
        &server,
        sse(&[json!({"type": "error", "code": "server_error", "message": "The server had an error.", "param": null})]),
        None,
    )
    .await;
    let err = ask(&*model(&server.uri(), quick_retries(2)))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.downcast_ref::<ProviderError>(),
            Some(ProviderError::Server { .. })
        ),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("The server had an error."),
        "{err}"
    );
    assert_eq!(
        requests(&server).await.len(),
        2,
        "a server error is retried"
    );

    let server = MockServer::start().await;
    let mut failed = response(json!([]), "failed", Value::Null);
    failed["error"] = json!({"code": "server_error", "message": "Something broke."});
    mount(
        &server,
        sse(&[json!({"type": "response.failed", "response": failed})]),
        None,
    )
    .await;
    let err = ask(&*model(&server.uri(), RetryPolicy::none()))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("Something broke."), "{err}");
}

/// Keeps the deltas it hears, as text.
#[derive(Default)]
struct Deltas(std::sync::Mutex<Vec<String>>);

impl actuator_model::GenerateObserver for Deltas {
    fn retrying(&self, _: &actuator_model::RetryReport) {}
    fn waited(&self, _: &actuator_model::RetryReport, _: Duration) {}
    fn wants_deltas(&self) -> bool {
        true
    }
    fn delta(&self, delta: &actuator_model::StreamDelta<'_>) {
        use actuator_model::StreamDelta;
        let heard = match delta {
            StreamDelta::Text(t) => format!("text {t}"),
            StreamDelta::Reasoning(r) => format!("reasoning {r}"),
            StreamDelta::ToolCall(c) => format!(
                "call {} {} {}",
                c.id.unwrap_or("?"),
                c.function.unwrap_or("?"),
                c.arguments
            ),
            _ => "other".into(),
        };
        self.0.lock().unwrap().push(heard);
    }
}

#[tokio::test]
async fn the_streams_deltas_reach_an_observer_that_wants_them_named_by_their_call() {
    let server = MockServer::start().await;
    let done = response(reasoning_and_calls(), "completed", Value::Null);
    let mut events = events_for(&done, "response.completed");
    // A summary delta after the reasoning item is added.
    events.insert(
        2,
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1",
               "output_index": 0, "summary_index": 0, "delta": "Two sums."}),
    );
    mount(&server, sse(&events), None).await;
    let heard = Deltas::default();
    let input = [ChatMessage::user("3 + 4 and read a")];
    let tools = [tools::add(), tools::read()];
    let model = model(&server.uri(), RetryPolicy::none());
    let request = GenerateRequest::new(&input).tools(&tools).observer(&heard);
    let out = model.generate(request).await.unwrap();
    assert_eq!(out.message().unwrap().calls().len(), 2);
    assert_eq!(
        *heard.0.lock().unwrap(),
        [
            "reasoning Two sums.",
            "text Adding.",
            "call call_1 add ",
            "call call_1 add {\"x\": 3, \"y\": 4}",
            "call call_2 read ",
            "call call_2 read {\"path\": \"a\", \"limit\": null}",
        ]
    );
}
