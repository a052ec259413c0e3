//! Messages, outputs, tool choice and the test models.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;

use actuator_model::{
    ChatMessage, ChatMessageAssistant, FunctionModel, GenerateConfig, GenerateRequest,
    MessageContent, MessageSource, Model, ModelError, ModelOutput, ModelUsage, ScriptedModel,
    StopReason, ToolCall, ToolCallError, format_function_call, generate,
};
use actuator_tool_core::{Content, ToolChoice, ToolErrorKind, ToolInfo, ToolParams};
use serde_json::{Value, json};

fn round_trip(m: &ChatMessage) {
    let text = serde_json::to_string(m).unwrap();
    let back: ChatMessage = serde_json::from_str(&text).unwrap();
    assert_eq!(&back, m, "{text}");
}

#[test]
fn every_message_kind_round_trips() {
    let mut user = ChatMessage::user(vec![
        Content::text("look"),
        Content::image_url("https://x/y.png", "image/png"),
    ]);
    user.set_source(Some(MessageSource::Input));
    let mut call = ToolCall::new("call_1", "add", json!({"x": 1}));
    call.parse_error = Some("bad".into());
    let assistant = ChatMessage::Assistant(Box::new(ChatMessageAssistant {
        id: "a1".into(),
        content: MessageContent::Parts(vec![Content::reasoning("think"), Content::text("ok")]),
        source: Some(MessageSource::Generate),
        metadata: None,
        tool_calls: Some(vec![call]),
        model: Some("m".into()),
    }));
    let tool = ChatMessage::tool(
        "",
        "call_1",
        "add",
        Some(ToolCallError {
            kind: ToolErrorKind::Timeout,
            message: "Command timed out before completing.".into(),
        }),
    );
    for m in [
        ChatMessage::system("sys"),
        user,
        assistant.clone(),
        tool.clone(),
    ] {
        round_trip(&m);
    }
    let json = serde_json::to_value(&tool).unwrap();
    assert_eq!(json["role"], "tool");
    assert_eq!(
        json["error"],
        json!({"type": "timeout", "message": "Command timed out before completing."})
    );
    assert_eq!(json["tool_call_id"], "call_1");
    let json = serde_json::to_value(&assistant).unwrap();
    assert_eq!(json["tool_calls"][0]["type"], "function");
    assert_eq!(json["tool_calls"][0]["parse_error"], "bad");
    assert_eq!(assistant.text(), "ok");
}

#[test]
fn ids_are_unique() {
    let ids: std::collections::HashSet<String> = (0..1000)
        .map(|_| ChatMessage::user("x").id().to_owned())
        .collect();
    assert_eq!(ids.len(), 1000);
    // Ids are the reference's: a v4 UUID in shortuuid's 22 characters.
    let alphabet = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    for id in ids.iter().take(10) {
        assert_eq!(id.len(), 22, "{id}");
        assert!(id.chars().all(|c| alphabet.contains(c)), "{id}");
    }
}

#[test]
fn outputs_round_trip_and_answer_questions() {
    let out =
        ModelOutput::for_tool_call("m", "add", json!({"x": 1})).with_usage(ModelUsage::new(10, 5));
    let back: ModelOutput = serde_json::from_value(serde_json::to_value(&out).unwrap()).unwrap();
    assert_eq!(back, out);
    assert_eq!(out.usage.unwrap().total_tokens, 15);
    assert_eq!(out.stop_reason(), Some(StopReason::ToolCalls));
    assert_eq!(out.message().unwrap().model.as_deref(), Some("m"));
    for (reason, text) in [
        (StopReason::Stop, "stop"),
        (StopReason::MaxTokens, "max_tokens"),
        (StopReason::ModelLength, "model_length"),
        (StopReason::ToolCalls, "tool_calls"),
        (StopReason::ContentFilter, "content_filter"),
        (StopReason::Unknown, "unknown"),
    ] {
        assert_eq!(serde_json::to_value(reason).unwrap(), text);
    }
    assert!(ModelOutput::default().is_empty());
    assert_eq!(ModelOutput::default().completion(), "");
    let mut total = ModelUsage::new(1, 2);
    total += ModelUsage {
        reasoning_tokens: Some(3),
        ..ModelUsage::new(4, 5)
    };
    assert_eq!(
        (
            total.input_tokens,
            total.output_tokens,
            total.total_tokens,
            total.reasoning_tokens
        ),
        (5, 7, 12, Some(3))
    );
    let config: GenerateConfig =
        serde_json::from_value(json!({"max_tokens": 10, "timeout": 2.5})).unwrap();
    assert_eq!(
        config,
        GenerateConfig::default()
            .max_tokens(10)
            .timeout(std::time::Duration::from_millis(2500))
    );
    // Durations are seconds on the wire, and a negative one is refused with a clear error.
    assert_eq!(
        serde_json::to_value(&config).unwrap(),
        json!({"max_tokens": 10, "timeout": 2.5})
    );
    let err = serde_json::from_value::<GenerateConfig>(json!({"timeout": -1})).unwrap_err();
    assert!(err.to_string().contains("non-negative"), "{err}");
}

#[test]
fn calls_render_like_the_reference() {
    let args = json!({"location": "New York", "days": 3});
    assert_eq!(
        format_function_call("get_weather", args.as_object().unwrap(), 80),
        "get_weather(location='New York', days=3)"
    );
    assert_eq!(
        format_function_call("f2", &serde_json::Map::new(), 80),
        "f2()"
    );
    let long = json!({"command": "x".repeat(70), "timeout": 30});
    assert_eq!(
        format_function_call("bash", long.as_object().unwrap(), 80),
        format!(
            "bash(\n    command='{}',\n    timeout=30\n)",
            "x".repeat(70)
        )
    );
    assert_eq!(
        ToolCall::new("c", "addition", json!({"x": 1, "y": 1})).render(),
        "addition(x=1, y=1)"
    );
}

fn info(name: &str) -> Arc<ToolInfo> {
    Arc::new(ToolInfo::new(name, "d", ToolParams::default()))
}

#[tokio::test]
async fn tool_choice_is_applied_before_generate() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let model = FunctionModel::new("spy", move |_input, tools| {
        record
            .lock()
            .unwrap()
            .push(tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>());
        Ok(ModelOutput::from_content("spy", "ok"))
    });
    let tools = vec![info("a"), info("b")];
    let input = [ChatMessage::user("hi")];
    let config = GenerateConfig::default();
    for choice in [
        ToolChoice::Auto,
        ToolChoice::Any,
        ToolChoice::None,
        ToolChoice::function("b"),
        ToolChoice::function("zz"),
    ] {
        let request = GenerateRequest::new(&input)
            .tools(&tools)
            .tool_choice(&choice)
            .config(&config);
        generate(&model, request).await.unwrap();
    }
    let seen = seen.lock().unwrap().clone();
    let expected: Vec<Vec<&str>> = vec![vec!["a", "b"], vec!["a", "b"], vec![], vec!["b"], vec![]];
    assert_eq!(seen, expected);
}

#[tokio::test]
async fn scripted_model_plays_in_order_then_says_it_ran_out() {
    let model = ScriptedModel::new([
        ModelOutput::for_tool_call("", "add", json!({"x": 1, "y": 2})),
        ModelOutput::from_content("", "3"),
    ]);
    let m: Arc<dyn Model> = Arc::new(model);
    let cfg = GenerateConfig::default();
    let first = m
        .generate(GenerateRequest::new(&[]).config(&cfg))
        .await
        .unwrap();
    assert_eq!(first.model, "scripted");
    assert_eq!(
        first.message().unwrap().calls()[0]
            .arguments
            .to_map()
            .unwrap()["y"],
        2
    );
    assert_eq!(
        m.generate(GenerateRequest::new(&[]).config(&cfg))
            .await
            .unwrap()
            .completion(),
        "3"
    );
    let err = m
        .generate(GenerateRequest::new(&[]).config(&cfg))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ModelError::ScriptExhausted {
            call: 3,
            scripted: 2
        }
    );
    assert!(
        err.to_string()
            .contains("generation 3 was requested but only 2 output(s) were scripted")
    );
}

#[test]
fn token_estimate_grows_with_text() {
    let model = ScriptedModel::new([]);
    let short = model.count_tokens(&[ChatMessage::user("hi")]);
    let long = model.count_tokens(&[ChatMessage::user("hi ".repeat(400))]);
    assert!(long > short + 200);
    let _: Value = json!(null);
}
