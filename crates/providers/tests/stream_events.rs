//! A run's live stream from a streaming provider's real parse path: the deltas each provider
//! parses reach the run's subscriber in order, tagged with their generation, before the model
//! event; a retry after an attempt that streamed is a boundary event; a sink that wants no
//! deltas gets none. Every replayed event is checked against the official stream schemas.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use actuator_agent::RunContext;
use actuator_events::{Event, EventLog, EventStream, ModelEvent, RunEvent, StreamEvent};
use actuator_model::{ChatMessage, GenerateRequest, Model};
use actuator_providers::{ModelOptions, RetryPolicy};
use common::{spec, tools};
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-s1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
    })
}

/// Text, reasoning, then two calls whose argument chunks interleave.
fn openai_chunks() -> Vec<Value> {
    vec![
        chunk(json!({"role": "assistant", "content": ""}), None),
        chunk(json!({"reasoning_content": "Two sums."}), None),
        chunk(json!({"content": "Adding "}), None),
        chunk(json!({"content": "both."}), None),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "add", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"x\": 3, "}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_2", "type": "function", "function": {"name": "add", "arguments": "{\"x\": 5, \"y\": 6}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"y\": 4}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
    ]
}

fn openai_sse(chunks: &[Value], done: bool) -> ResponseTemplate {
    let mut body = String::new();
    for chunk in chunks {
        let what = "CreateChatCompletionStreamResponse";
        spec::assert_valid(&spec::openai().chat_chunk, chunk, what);
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    if done {
        body.push_str("data: [DONE]\n\n");
    }
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

fn anthropic_sse(events: &[Value]) -> ResponseTemplate {
    let mut body = String::new();
    for event in events {
        let what = "anthropic RawMessageStreamEvent";
        spec::assert_valid(&spec::anthropic().stream_event, event, what);
        let name = event["type"].as_str().unwrap();
        body.push_str(&format!("event: {name}\ndata: {event}\n\n"));
    }
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

fn openai_model(url: &str, attempts: u32) -> Arc<dyn Model> {
    ModelOptions::new()
        .api_key("sk-test")
        .base_url(format!("{url}/v1"))
        .env(|_| None)
        .stream(true)
        .retry(
            RetryPolicy::default()
                .max_attempts(attempts)
                .backoff(Duration::from_millis(5), Duration::from_millis(20)),
        )
        .build("openai/gpt-test")
        .unwrap()
}

async fn mount(server: &MockServer, response: ResponseTemplate, times: Option<u64>) {
    let mock = Mock::given(method("POST")).respond_with(response);
    match times {
        Some(n) => mock.up_to_n_times(n).mount(server).await,
        None => mock.mount(server).await,
    }
}

/// One generation of `model` in a run whose events go to a subscriber; every event it got.
async fn generate_watched(model: &dyn Model) -> Vec<RunEvent> {
    let (sink, mut stream) = EventStream::new();
    let cx = RunContext::with_events(sink);
    let input = [ChatMessage::user("3 + 4 and 5 + 6?")];
    let tools = [tools::add()];
    cx.generate(model, GenerateRequest::new(&input).tools(&tools))
        .await
        .unwrap();
    drop(cx);
    let mut events = Vec::new();
    while let Some(event) = stream.recv().await {
        events.push(event);
    }
    events
}

/// The stream events of `events`, checked to be of the generation the one model event, which
/// comes last, names.
fn deltas_of_the_generation(events: &[RunEvent]) -> (Vec<StreamEvent>, &ModelEvent) {
    let Some(Event::Model(model)) = events.last().map(|e| &e.event) else {
        panic!("the model event is not last: {events:#?}")
    };
    let generation = model.generation.unwrap();
    let deltas = events[..events.len() - 1]
        .iter()
        .filter_map(|e| match &e.event {
            Event::ModelStream(s) => {
                assert_eq!(s.generation, generation);
                Some(s.stream.clone())
            }
            _ => None,
        })
        .collect();
    (deltas, model)
}

fn text(deltas: &[StreamEvent]) -> String {
    deltas
        .iter()
        .filter_map(|d| match d {
            StreamEvent::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// Each call's argument fragments appended, with the function each named.
fn calls(deltas: &[StreamEvent]) -> Vec<(String, String, String)> {
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for d in deltas {
        if let StreamEvent::ToolCall {
            id,
            function,
            arguments,
        } = d
        {
            let id = id.clone().unwrap();
            match calls.iter_mut().find(|c| c.0 == id) {
                Some(call) => call.2.push_str(arguments),
                None => calls.push((id, function.clone().unwrap(), arguments.clone())),
            }
        }
    }
    calls
}

#[tokio::test]
async fn openai_deltas_reach_the_subscriber_in_order_before_their_model_event() {
    let server = MockServer::start().await;
    mount(&server, openai_sse(&openai_chunks(), true), None).await;
    let events = generate_watched(&*openai_model(&server.uri(), 1)).await;
    let (deltas, model) = deltas_of_the_generation(&events);
    assert_eq!(
        deltas[..3],
        [
            StreamEvent::Reasoning {
                reasoning: "Two sums.".into()
            },
            StreamEvent::Text {
                text: "Adding ".into()
            },
            StreamEvent::Text {
                text: "both.".into()
            },
        ]
    );
    let output = model.output.as_ref().unwrap();
    assert_eq!(text(&deltas), output.completion());
    // Interleaved chunks of two calls, each fragment named by its call.
    let streamed = calls(&deltas);
    let made = output.message().unwrap().calls();
    assert_eq!(streamed.len(), made.len());
    for ((id, function, arguments), call) in streamed.iter().zip(made) {
        assert_eq!(
            (id.as_str(), function.as_str()),
            (&*call.id, &*call.function)
        );
        let arguments: Value = serde_json::from_str(arguments).unwrap();
        assert_eq!(arguments, call.arguments.to_value().unwrap());
    }
}

#[tokio::test]
async fn anthropic_deltas_reach_the_subscriber_in_order_before_their_model_event() {
    let events = vec![
        json!({"type": "message_start", "message": {
            "id": "msg_s1", "type": "message", "role": "assistant", "model": "claude-test", "content": [],
            "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 40, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Two "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "sums."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBsig"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": "", "citations": null}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Adding."}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"x\": 3,"}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": " \"y\": 4}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 30}}),
        json!({"type": "message_stop"}),
    ];
    let server = MockServer::start().await;
    mount(&server, anthropic_sse(&events), None).await;
    let model = ModelOptions::new()
        .api_key("sk-ant-test")
        .base_url(server.uri())
        .env(|_| None)
        .stream(true)
        .build("anthropic/claude-test")
        .unwrap();
    let events = generate_watched(&*model).await;
    let (deltas, model) = deltas_of_the_generation(&events);
    let reasoning = |r: &str| StreamEvent::Reasoning {
        reasoning: r.into(),
    };
    assert_eq!(deltas[..2], [reasoning("Two "), reasoning("sums.")]);
    assert_eq!(text(&deltas), "Adding.");
    assert_eq!(
        calls(&deltas),
        [(
            "toolu_1".into(),
            "add".into(),
            "{\"x\": 3, \"y\": 4}".into()
        )]
    );
    assert_eq!(model.output.as_ref().unwrap().completion(), "Adding.");
}

#[tokio::test]
async fn a_retry_after_streamed_deltas_is_a_boundary_before_the_next_attempts_deltas() {
    // The first attempt breaks off after its text and part of a call; the second completes.
    let mut cut = openai_chunks();
    cut.truncate(6);
    let server = MockServer::start().await;
    mount(&server, openai_sse(&cut, false), Some(1)).await;
    mount(&server, openai_sse(&openai_chunks(), true), None).await;
    let events = generate_watched(&*openai_model(&server.uri(), 3)).await;
    let (deltas, model) = deltas_of_the_generation(&events);
    assert_eq!(model.retries, 1);
    let boundary = deltas
        .iter()
        .position(|d| matches!(d, StreamEvent::Retry { .. }))
        .unwrap();
    assert_eq!(deltas[boundary], StreamEvent::Retry { attempt: 2 });
    assert_eq!(deltas.iter().filter(|d| !d.is_delta()).count(), 1);
    // Before it, the broken attempt's deltas; after it, the whole answer again, alone.
    assert_eq!(text(&deltas[..boundary]), "Adding both.");
    let after = &deltas[boundary + 1..];
    assert_eq!(text(after), model.output.as_ref().unwrap().completion());
    assert_eq!(calls(after).len(), 2);
    // The provider's retry event comes before the boundary.
    let retry_at = events
        .iter()
        .position(|e| matches!(e.event, Event::ModelRetry(_)))
        .unwrap();
    let boundary_at = events
        .iter()
        .position(|e| matches!(&e.event, Event::ModelStream(s) if !s.stream.is_delta()))
        .unwrap();
    assert!(retry_at < boundary_at);
}

#[tokio::test]
async fn a_sink_that_wants_no_deltas_gets_none_and_its_model_event_names_no_generation() {
    let server = MockServer::start().await;
    mount(&server, openai_sse(&openai_chunks(), true), None).await;
    let log = EventLog::new();
    let cx = RunContext::with_events(log.clone());
    let input = [ChatMessage::user("3 + 4?")];
    let model = openai_model(&server.uri(), 1);
    cx.generate(&*model, GenerateRequest::new(&input))
        .await
        .unwrap();
    let events = log.events();
    assert_eq!(events.len(), 1, "{events:#?}");
    let Event::Model(model) = &events[0] else {
        panic!("{events:#?}")
    };
    assert!(model.generation.is_none());
}

#[tokio::test]
async fn with_streaming_unset_a_run_that_wants_deltas_asks_for_a_stream_and_only_then() {
    // The server streams when asked and answers whole otherwise.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(wiremock::matchers::body_partial_json(
            json!({"stream": true}),
        ))
        .respond_with(openai_sse(&openai_chunks(), true))
        .mount(&server)
        .await;
    let whole = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1_700_000_000, "model": "gpt-test",
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": null,
                     "message": {"role": "assistant", "content": "Whole.", "refusal": null}}],
    });
    Mock::given(method("POST"))
        .respond_with(common::openai_ok(whole))
        .mount(&server)
        .await;
    let model = ModelOptions::new()
        .api_key("sk-test")
        .base_url(format!("{}/v1", server.uri()))
        .env(|_| None)
        .build("openai/gpt-test")
        .unwrap();
    let events = generate_watched(&*model).await;
    let (deltas, _) = deltas_of_the_generation(&events);
    assert_eq!(text(&deltas), "Adding both.");
    // An event log wants no deltas: the same model asks for a whole answer.
    let log = EventLog::new();
    let input = [ChatMessage::user("3 + 4?")];
    let out = RunContext::with_events(log.clone())
        .generate(&*model, GenerateRequest::new(&input))
        .await
        .unwrap();
    assert_eq!(out.completion(), "Whole.");
    let sent = common::bodies(&server).await;
    assert_eq!(sent[0]["stream"], true);
    assert!(sent[1].get("stream").is_none(), "{}", sent[1]);
}
