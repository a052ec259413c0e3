//! A server's sampling and elicitation during one of our calls go to the run that made the
//! call (`McpServer::route_to_calling_run`): the run's model answers, counted in its usage
//! and events, and the run's person answers; the sampling policy refuses, allows, or asks
//! that person first.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;

use actuator_agent::{RunContext, RunElicitation, SamplingModel};
use actuator_events::{Event, EventLog, EventSink};
use actuator_exec::ExecuteOptions;
use actuator_mcp::{
    HttpOptions, HttpServer, McpClient, McpServer, SamplingDecision, ServeOptions, ToolServer,
    mcp_tools, serve_http,
};
use actuator_model::{ChatMessage, ChatMessageAssistant, ModelOutput, ScriptedModel, ToolCall};
use actuator_tool_core::{
    Content, ElicitationRequest, ElicitationResult, ErrorChain, SamplingMessage, SamplingRequest,
    ToolContext, ToolDef, ToolError, ToolFailure,
};
use serde_json::{Map, json};

/// A server with two tools: one asks the client's model, one asks the client's person.
async fn asking_server() -> HttpServer {
    let ask_model = ToolDef::builder("ask_model")
        .description("Asks the client's model.")
        .handler(|_args, ctx: ToolContext| async move {
            let answer = ctx
                .sample(SamplingRequest::new(
                    [SamplingMessage::user("What is 2+2?")],
                    50,
                ))
                .await
                .map_err(|e| ToolFailure::from(ToolError::new(ErrorChain(&e).to_string())))?;
            Ok(vec![Content::text(answer.text())])
        })
        .build()
        .unwrap();
    let ask_person = ToolDef::builder("ask_person")
        .description("Asks the client's person.")
        .handler(|_args, ctx: ToolContext| async move {
            let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
            let answer = ctx
                .elicit(ElicitationRequest::new("Your name?", schema))
                .await
                .map_err(|e| ToolFailure::from(ToolError::new(ErrorChain(&e).to_string())))?;
            let name = answer
                .content
                .and_then(|c| c.get("name").cloned())
                .unwrap_or_default();
            Ok(vec![Content::text(format!("{}: {name}", answer.action))])
        })
        .build()
        .unwrap();
    let server = ToolServer::new(
        [ask_model, ask_person],
        ServeOptions::default().name("asking"),
    )
    .unwrap();
    serve_http(server, HttpOptions::default()).await.unwrap()
}

/// The run: a scripted model for sampling, a person who gives `allow` and a name, events.
fn run(allow: bool) -> (RunContext, Arc<EventLog>) {
    let events = EventLog::new();
    let model = ScriptedModel::new([ModelOutput::from_content("scripted", "Four.")]);
    let person = RunElicitation(Arc::new(move |asked: ElicitationRequest| async move {
        let mut content = Map::new();
        if asked.message.contains("Allow it?") {
            content.insert("allow".into(), json!(allow));
        } else {
            content.insert("name".into(), json!("Ada"));
        }
        Ok(ElicitationResult::accept(content))
    }));
    // A scope of its own, so the run's usage is counted.
    let cx = RunContext::with_events(Arc::clone(&events) as Arc<dyn EventSink>)
        .scoped(&[])
        .with_resource(SamplingModel(Arc::new(model)))
        .with_resource(person);
    (cx, events)
}

/// Calls `tool` of `server` from the run `cx`; the tool message's text, or its error.
async fn call_from_run(cx: &RunContext, server: McpServer, tool: &str) -> String {
    let client = McpClient::new(server);
    let tools = mcp_tools(&client).list().await.unwrap();
    let mut assistant = ChatMessageAssistant::new("");
    assistant.tool_calls = Some(vec![ToolCall::new("call_1", tool, json!({}))]);
    let messages = [ChatMessage::Assistant(Box::new(assistant))];
    let result = cx
        .execute_tools(&messages, &tools, &ExecuteOptions::default())
        .await
        .unwrap();
    client.close().await;
    match result.messages.first() {
        Some(ChatMessage::Tool(message)) => match &message.error {
            Some(error) => format!("error: {}", error.message),
            None => message.content.text(),
        },
        other => panic!("no tool message: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_calling_runs_model_and_person_answer_the_server() {
    let http = asking_server().await;
    let (cx, events) = run(true);
    let server = || McpServer::http(http.url()).route_to_calling_run();

    assert_eq!(call_from_run(&cx, server(), "ask_model").await, "Four.");
    // The run's usage and events count the generation the server asked for.
    assert_eq!(cx.usage().turns, 1);
    assert!(
        events
            .events()
            .iter()
            .any(|e| matches!(e, Event::Model(m) if m.output.as_ref().is_some_and(|o| o.completion() == "Four."))),
        "no model event for the sampling"
    );

    assert_eq!(
        call_from_run(&cx, server(), "ask_person").await,
        "accept: \"Ada\""
    );
    http.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_routing_the_server_cannot_ask() {
    let http = asking_server().await;
    let (cx, _) = run(true);
    let text = call_from_run(&cx, McpServer::http(http.url()), "ask_model").await;
    assert!(text.starts_with("error:"), "{text}");
    assert_eq!(cx.usage().turns, 0);
    http.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sampling_policy_denies_or_asks_the_runs_person_first() {
    let http = asking_server().await;

    let (cx, _) = run(true);
    let denying = McpServer::http(http.url())
        .route_to_calling_run()
        .sampling_policy(|server: &str, _: &SamplingRequest| {
            SamplingDecision::Deny(format!("no sampling for {server}"))
        });
    let text = call_from_run(&cx, denying, "ask_model").await;
    assert!(
        text.contains("refused: no sampling for"),
        "the policy's reason reaches the server: {text}"
    );
    assert_eq!(cx.usage().turns, 0, "the model was not asked");

    let asking = || {
        McpServer::http(http.url())
            .route_to_calling_run()
            .sampling_policy(|_: &str, _: &SamplingRequest| SamplingDecision::Ask)
    };
    let (cx, _) = run(true);
    assert_eq!(call_from_run(&cx, asking(), "ask_model").await, "Four.");
    let (cx, _) = run(false);
    let text = call_from_run(&cx, asking(), "ask_model").await;
    assert!(text.contains("did not allow it"), "{text}");
    assert_eq!(cx.usage().turns, 0);
    http.shutdown().await;
}
