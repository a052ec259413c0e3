//! Events, tracing spans, and conversation-taking tools.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use actuator_events::{Event, EventLog};
use actuator_exec::{
    ConversationTool, ConversationToolOutput, ExecuteOptions, execute_tools, with_conversation,
};
use actuator_model::{BoxFuture, ChatMessage, ModelOutput, ToolCall};
use actuator_tool_core::{ToolArgs, ToolError, ToolFailure, ToolOutput};
use common::{conversation, tool};
use serde_json::json;

#[tokio::test]
async fn every_call_produces_a_serializable_event() {
    let log = EventLog::new();
    let tools = [
        tool("ok", true, |_a, _c| async {
            Ok(ToolOutput::Text("fine".into()))
        }),
        tool("bad", true, |_a, _c| async {
            Err::<ToolOutput, _>(ToolError::new("broken").into())
        }),
    ];
    let msgs = conversation(&[
        ("ok", json!({"n": 1})),
        ("bad", json!({})),
        ("missing", json!({})),
    ]);
    execute_tools(
        &msgs,
        &tools,
        &ExecuteOptions::default().events(log.clone()),
    )
    .await
    .unwrap();
    let mut events = log.tool_events();
    events.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(events.len(), 3);
    assert_eq!(&*events[0].id, "call_0");
    assert_eq!(&*events[0].function, "ok");
    assert_eq!(events[0].arguments["n"], 1);
    assert_eq!(events[0].result.text(), "fine");
    assert!(events[0].error.is_none());
    assert!(events[0].completed_at.unwrap() >= events[0].started_at);
    assert!(events[0].started_at > 1.7e9);
    assert!(events[0].working_time.unwrap() >= 0.0);
    assert_eq!(events[1].error.as_ref().unwrap().message, "broken");
    assert_eq!(
        events[2].error.as_ref().unwrap().message,
        "Tool missing not found"
    );
    let json = serde_json::to_value(Event::Tool(Box::new(events[1].clone()))).unwrap();
    assert_eq!(json["event"], "tool");
    assert_eq!(json["error"]["type"], "unknown");
    let back: Event = serde_json::from_value(json).unwrap();
    assert_eq!(back, Event::Tool(Box::new(events[1].clone())));

    // A call's pending and completed events name the same call and share its arguments (one
    // copy); the pending event's id and name are its own inline copies.
    let all = log.events();
    let (mut pending, mut done) = (Vec::new(), Vec::new());
    for e in &all {
        match e {
            Event::ToolPending(p) if &*p.function == "ok" => pending.push(p),
            Event::Tool(t) if &*t.function == "ok" => done.push(t),
            _ => {}
        }
    }
    let ([pending], [done]) = (&pending[..], &done[..]) else {
        panic!("{all:?}")
    };
    assert!(!done.is_pending());
    assert_eq!(
        (&*pending.id, &*pending.function),
        (&*done.id, &*done.function)
    );
    assert!(!pending.id.is_heap_allocated() && !pending.function.is_heap_allocated());
    assert!(std::sync::Arc::ptr_eq(&pending.arguments, &done.arguments));
}

#[tokio::test]
async fn a_fresh_call_is_read_from_the_object_it_keeps_and_a_text_only_one_from_its_text() {
    let tools = [tool("ok", true, |mut a, _c| async move {
        let n: i64 = a.required("n")?;
        Ok(ToolOutput::Text(format!("n={n}").into()))
    })];
    // Runs the calls with a log: the result's text and the first tool event's arguments.
    let run = async |msgs: &[ChatMessage]| {
        let log = EventLog::new();
        let out = execute_tools(msgs, &tools, &ExecuteOptions::default().events(log.clone()))
            .await
            .unwrap();
        (
            out.messages[0].text(),
            log.tool_events()[0].arguments.clone(),
        )
    };
    // A call built from a map keeps it: the events share that very object, not a copy.
    let mut msgs = conversation(&[("ok", json!({"n": 1}))]);
    let call = &msgs[1].as_assistant().unwrap().calls()[0];
    assert!(call.arguments.keeps_parsed());
    let kept = call.arguments.to_shared_value().unwrap();
    let (text, arguments) = run(&msgs).await;
    assert_eq!(text, "n=1");
    assert!(std::sync::Arc::ptr_eq(&arguments, &kept));

    // Released (as an agent does after the call ran), the text is parsed: same result.
    let ChatMessage::Assistant(a) = &mut msgs[1] else {
        panic!()
    };
    a.release_parsed_arguments();
    assert!(!a.calls()[0].arguments.keeps_parsed());
    assert_eq!(a.calls()[0].arguments.as_json(), r#"{"n":1}"#);
    let (text, arguments) = run(&msgs).await;
    assert_eq!(text, "n=1");
    assert_eq!(*arguments, json!({"n": 1}));
    assert!(!std::sync::Arc::ptr_eq(&arguments, &kept));
}

/// A conversation-taking tool: reports how many messages it saw, appends two messages, and
/// returns an output.
struct Counter;
impl ConversationTool for Counter {
    fn call<'a>(
        &'a self,
        conversation: &'a [ChatMessage],
        call: &'a ToolCall,
        mut args: ToolArgs,
        _extensions: &'a actuator_tool_core::Extensions,
    ) -> BoxFuture<'a, Result<ConversationToolOutput, ToolFailure>> {
        Box::pin(async move {
            let tag: String = args.required("s")?;
            Ok(ConversationToolOutput {
                content: format!("saw {} messages", conversation.len()).into(),
                messages: vec![
                    ChatMessage::assistant(format!("[{tag}] working on {}", call.id)),
                    ChatMessage::user("done"),
                ],
                output: Some(ModelOutput::from_content("sub", format!("output {tag}"))),
            })
        })
    }
}

#[tokio::test]
async fn conversation_tools_add_messages_and_output_in_declared_order() {
    let base = tool("transfer", true, |_a, _c| async {
        Err::<ToolOutput, _>(ToolError::new("not via execute_tools").into())
    });
    let transfer = with_conversation(&base, Counter);
    let plain = tool("plain", true, |_a, _c| async {
        Ok(ToolOutput::Text("plain".into()))
    });
    let msgs = conversation(&[
        ("transfer", json!({"s": "a"})),
        ("plain", json!({})),
        ("transfer", json!({"s": "b"})),
    ]);
    let out = execute_tools(&msgs, &[transfer, plain], &ExecuteOptions::default())
        .await
        .unwrap();
    let rendered: Vec<(String, String)> = out
        .messages
        .iter()
        .map(|m| (m.role().to_owned(), m.text()))
        .collect();
    assert_eq!(
        rendered,
        vec![
            ("tool".into(), "saw 2 messages".into()),
            ("assistant".into(), "[a] working on call_0".into()),
            ("user".into(), "done".into()),
            ("tool".into(), "plain".into()),
            ("tool".into(), "saw 2 messages".into()),
            ("assistant".into(), "[b] working on call_2".into()),
            ("user".into(), "done".into()),
        ]
    );
    assert_eq!(out.output.unwrap().completion(), "output b");
    // Validation still applies to conversation tools.
    let msgs = conversation(&[("transfer", json!({"s": 1}))]);
    let base = tool("transfer", false, |_a, _c| async {
        Ok(ToolOutput::default())
    });
    let out = execute_tools(
        &msgs,
        &[with_conversation(&base, Counter)],
        &ExecuteOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(out.messages.len(), 1);
    assert_eq!(
        out.messages[0]
            .as_tool()
            .unwrap()
            .error
            .as_ref()
            .unwrap()
            .kind
            .to_string(),
        "parsing"
    );
}
