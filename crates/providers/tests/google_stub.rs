//! The Gemini provider (`google/…`, issue 38 §2) against a stub speaking the Gemini API, every
//! request and response checked against the schemas generated from Google's `google-genai` SDK
//! (specs/gemini): content, function calling with parallel calls and results, thinking with
//! its signatures replayed, usage with cached and thinking tokens, structured output, content
//! filters, and tool schemas and names as the API takes them. Streams, errors and endpoints are
//! in `google_transport.rs`.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use actuator_model::{
    ChatMessage, GenerateConfig, GenerateRequest, ModelOutput, StopReason, ToolCallError,
    generate_structured,
};
use actuator_providers::ModelOptions;
use actuator_tool_core::{Content, ToolChoice, ToolErrorKind};
use common::gemini::{model_at, ok, requests, stub};
use common::tools;
use serde_json::{Value, json};

/// An answer that thought (a summary, then the signature on the first of two parallel calls).
fn thinking_calls() -> Value {
    json!({
        "candidates": [{
            "content": {"role": "model", "parts": [
                {"text": "Two sums to do.", "thought": true},
                {"functionCall": {"name": "add", "args": {"x": 1, "y": 2}}, "thoughtSignature": "c2lnLTE="},
                {"functionCall": {"id": "call_b", "name": "add", "args": {"x": 3, "y": 4}}}
            ]},
            "finishReason": "STOP",
            "index": 0
        }],
        "usageMetadata": {
            "promptTokenCount": 120, "candidatesTokenCount": 20, "cachedContentTokenCount": 100,
            "thoughtsTokenCount": 30, "totalTokenCount": 170
        },
        "modelVersion": "gemini-2.5-flash-001",
        "responseId": "resp-1"
    })
}

#[tokio::test]
async fn thinking_parallel_calls_and_usage_come_back_and_the_signature_is_replayed() {
    let server = stub(ok(thinking_calls())).await;
    let model = model_at(&server, ModelOptions::new());
    let tools = [tools::add()];
    let mut input = vec![
        ChatMessage::system("Be exact."),
        ChatMessage::user("Add 1 + 2 and 3 + 4."),
    ];
    let config = GenerateConfig::default()
        .max_tokens(300)
        .temperature(0.2)
        .reasoning_tokens(128);
    let out = model
        .generate(GenerateRequest::new(&input).tools(&tools).config(&config))
        .await
        .unwrap();
    assert_eq!(out.stop_reason(), Some(StopReason::ToolCalls));
    assert_eq!(out.model, "gemini-2.5-flash-001");
    let message = out.message().unwrap();
    let calls = message.calls();
    assert_eq!(calls.len(), 2);
    assert!(
        !calls[0].id.is_empty(),
        "an id is made when Gemini gives none"
    );
    assert_eq!(calls[1].id, "call_b");
    assert_eq!(calls[1].arguments.get("y"), Some(json!(4)));
    let MessageContentParts(parts) = parts_of(&out);
    let Content::Reasoning {
        reasoning,
        signature,
        ..
    } = &parts[0]
    else {
        panic!("{parts:?}")
    };
    assert_eq!(reasoning, "Two sums to do.");
    assert_eq!(signature.as_deref(), Some("c2lnLTE="));
    let usage = out.usage.unwrap();
    assert_eq!(usage.input_tokens, 20);
    assert_eq!(usage.input_tokens_cache_read, Some(100));
    assert_eq!(usage.output_tokens, 50);
    assert_eq!(usage.reasoning_tokens, Some(30));
    assert_eq!(usage.total_tokens, 170);

    // The next turn: the calls' results (one failed), the signature back on the first call.
    input.push(ChatMessage::Assistant(Box::new(message.clone())));
    input.push(ChatMessage::tool("3", calls[0].id.as_str(), "add", None));
    input.push(ChatMessage::tool(
        "",
        "call_b",
        "add",
        Some(ToolCallError {
            kind: ToolErrorKind::Parsing,
            message: "y: not a number".into(),
        }),
    ));
    let choice = ToolChoice::Function { name: "add".into() };
    model
        .generate(
            GenerateRequest::new(&input)
                .tools(&tools)
                .tool_choice(&choice)
                .config(&config),
        )
        .await
        .unwrap();
    let sent = requests(&server).await;
    let first = &sent[0];
    assert_eq!(
        first["systemInstruction"],
        json!({"parts": [{"text": "Be exact."}]})
    );
    assert_eq!(first["generationConfig"]["maxOutputTokens"], 300);
    assert_eq!(
        first["generationConfig"]["thinkingConfig"],
        json!({"thinkingBudget": 128, "includeThoughts": true})
    );
    assert_eq!(first["tools"][0]["functionDeclarations"][0]["name"], "add");
    assert_eq!(
        first["toolConfig"],
        json!({"functionCallingConfig": {"mode": "AUTO"}})
    );
    let second = &sent[1];
    assert_eq!(
        second["toolConfig"],
        json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["add"]}})
    );
    let contents = second["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 3, "{second:#}");
    let model_turn = &contents[1];
    assert_eq!(model_turn["role"], "model");
    let parts = model_turn["parts"].as_array().unwrap();
    assert_eq!(
        parts.len(),
        2,
        "thought text is not replayed: {model_turn:#}"
    );
    assert_eq!(parts[0]["thoughtSignature"], "c2lnLTE=");
    assert_eq!(parts[0]["functionCall"]["args"], json!({"x": 1, "y": 2}));
    assert!(parts[1].get("thoughtSignature").is_none());
    let results = &contents[2];
    assert_eq!(results["role"], "user");
    assert_eq!(
        results["parts"][0]["functionResponse"]["response"],
        json!({"output": "3"})
    );
    assert_eq!(
        results["parts"][1]["functionResponse"],
        json!({"id": "call_b", "name": "add", "response": {"error": "y: not a number"}})
    );
}

struct MessageContentParts(Vec<Content>);

fn parts_of(out: &ModelOutput) -> MessageContentParts {
    match &out.message().unwrap().content {
        actuator_model::MessageContent::Parts(p) => MessageContentParts(p.clone()),
        other => panic!("expected parts, got {other:?}"),
    }
}

#[tokio::test]
async fn another_providers_reasoning_is_not_replayed() {
    let server = stub(ok(json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}]
    })))
    .await;
    let model = model_at(&server, ModelOptions::new());
    let mut assistant =
        actuator_model::ChatMessageAssistant::new(actuator_model::MessageContent::Parts(vec![
            Content::Reasoning {
                reasoning: "Anthropic's thought.".into(),
                signature: Some("anthropic-sig".into()),
                redacted: false,
                internal: None,
            },
            Content::text("Hello."),
        ]));
    assistant.tool_calls = None;
    let input = [
        ChatMessage::user("Hi"),
        ChatMessage::Assistant(Box::new(assistant)),
        ChatMessage::user("Again"),
    ];
    let out = model.generate(GenerateRequest::new(&input)).await.unwrap();
    assert_eq!(out.completion(), "ok");
    let sent = &requests(&server).await[0];
    assert_eq!(
        sent["contents"][1],
        json!({"role": "model", "parts": [{"text": "Hello."}]})
    );
}

#[tokio::test]
async fn structured_output_sends_the_json_schema_and_reads_the_answer() {
    #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    struct Sum {
        /// The total.
        total: i64,
    }
    let server = stub(ok(json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": "{\"total\": 7}"}]}, "finishReason": "STOP"}]
    })))
    .await;
    let model = model_at(&server, ModelOptions::new());
    let input = [ChatMessage::user("3 + 4?")];
    let structured = generate_structured::<Sum>(&*model, &input, &GenerateConfig::default())
        .await
        .unwrap();
    assert_eq!(structured, Sum { total: 7 });
    let sent = &requests(&server).await[0];
    assert_eq!(
        sent["generationConfig"]["responseMimeType"],
        "application/json"
    );
    assert_eq!(
        sent["generationConfig"]["responseJsonSchema"]["properties"]["total"]["type"],
        "integer"
    );
}

#[tokio::test]
async fn safety_and_blocked_prompts_are_content_filter_outputs() {
    let server = stub(ok(json!({"promptFeedback": {"blockReason": "SAFETY"}}))).await;
    let out = model_at(&server, ModelOptions::new())
        .generate(GenerateRequest::new(&[ChatMessage::user("…")]))
        .await
        .unwrap();
    assert_eq!(out.stop_reason(), Some(StopReason::ContentFilter));
    let server = stub(ok(json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": "par"}]}, "finishReason": "RECITATION"}]
    })))
    .await;
    let out = model_at(&server, ModelOptions::new())
        .generate(GenerateRequest::new(&[ChatMessage::user("…")]))
        .await
        .unwrap();
    assert_eq!(out.stop_reason(), Some(StopReason::ContentFilter));
}

#[tokio::test]
async fn the_dialects_tool_schemas_are_ones_the_apis_schema_accepts() {
    use actuator_tool_core::{ToolInfo, ToolParams};
    let params = ToolParams::from_value(&json!({
        "properties": {
            "query": {"type": "string", "description": "What to find."},
            "limit": {"type": ["integer", "null"], "description": "At most this many."},
            "mode": {"type": "string", "enum": ["fast", "exact"], "description": "How."},
            "level": {"type": "integer", "enum": [1, 2], "description": "A level."},
            "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags."},
            "filters": {
                "type": "array",
                "description": "Filters.",
                "items": {
                    "type": "object",
                    "properties": {"field": {"type": "string"}, "value": {}},
                    "required": ["field"]
                }
            },
            "options": {"type": "object", "description": "Free-form options."},
            "either": {"anyOf": [{"type": "string"}, {"type": "number"}], "description": "One of two."}
        },
        "required": ["query"]
    }))
    .unwrap();
    let tools = [Arc::new(ToolInfo::new("search", "Search things.", params))];
    let server = stub(ok(json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}]
    })))
    .await;
    model_at(&server, ModelOptions::new())
        .generate(GenerateRequest::new(&[ChatMessage::user("Find it.")]).tools(&tools))
        .await
        .unwrap();
    let sent = &requests(&server).await[0];
    let parameters = &sent["tools"][0]["functionDeclarations"][0]["parameters"];
    assert_eq!(parameters["type"], "OBJECT");
    assert_eq!(parameters["properties"]["tags"]["items"]["type"], "STRING");
}

#[tokio::test]
async fn a_function_name_gemini_rejects_is_sent_repaired_and_called_back_by_its_own_name() {
    use actuator_dialect::Dialect;
    use actuator_tool_core::{ToolInfo, ToolParams};
    let own = "3d_render";
    let sent = Dialect::Gemini.function_name(own).into_owned();
    assert_ne!(sent, own);
    let server = stub(ok(json!({
        "candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"id": "c1", "name": sent, "args": {}}}
        ]}, "finishReason": "STOP"}]
    })))
    .await;
    let model = model_at(&server, ModelOptions::new());
    let tools = [Arc::new(ToolInfo::new(
        own,
        "Render.",
        ToolParams::default(),
    ))];
    let mut input = vec![ChatMessage::user("Render it.")];
    let choice = ToolChoice::Function { name: own.into() };
    let out = model
        .generate(
            GenerateRequest::new(&input)
                .tools(&tools)
                .tool_choice(&choice),
        )
        .await
        .unwrap();
    let message = out.message().unwrap().clone();
    assert_eq!(message.calls()[0].function, own);
    input.push(ChatMessage::Assistant(Box::new(message)));
    input.push(ChatMessage::tool("done", "c1", own, None));
    model
        .generate(GenerateRequest::new(&input).tools(&tools))
        .await
        .unwrap();
    let sent_requests = requests(&server).await;
    assert_eq!(
        sent_requests[0]["tools"][0]["functionDeclarations"][0]["name"],
        sent
    );
    assert_eq!(
        sent_requests[0]["toolConfig"]["functionCallingConfig"]["allowedFunctionNames"],
        json!([sent])
    );
    let replay = &sent_requests[1]["contents"];
    assert_eq!(replay[1]["parts"][0]["functionCall"]["name"], sent);
    assert_eq!(replay[2]["parts"][0]["functionResponse"]["name"], sent);
}
