//! Message filters (§10).

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use actuator_agent::filter::{
    MessageFilter, content_only, last_message, remove_tools, trim_messages,
};
use actuator_model::{ChatMessage, ChatMessageAssistant, MessageContent, MessageSource, ToolCall};
use actuator_tool_core::Content;
use common::*;
use serde_json::json;

fn assistant_with(content: MessageContent, calls: Vec<ToolCall>) -> ChatMessage {
    let mut a = ChatMessageAssistant::new(content);
    a.tool_calls = Some(calls);
    ChatMessage::Assistant(Box::new(a))
}

#[test]
fn content_only_keeps_content() {
    let user = ChatMessage::user("hi");
    let calls = vec![
        ToolCall::new(
            "1",
            "get_weather",
            json!({"location": "New York", "days": 3, "opts": {"a": [1, 2]}}),
        ),
        ToolCall::new("2", "f2", json!({})),
    ];
    let assistant = assistant_with(
        MessageContent::Parts(vec![
            Content::reasoning("secret"),
            Content::text("Checking."),
        ]),
        calls,
    );
    let tool = ChatMessage::tool("sunny", "1", "get_weather", None);
    let out = content_only(vec![
        ChatMessage::system("sys"),
        user.clone(),
        assistant,
        tool.clone(),
    ]);
    assert_eq!(out.len(), 3);
    assert_eq!(out[0], user, "user messages pass unchanged");
    let a = out[1].as_assistant().unwrap();
    assert!(a.tool_calls.is_none());
    assert_eq!(
        a.content,
        MessageContent::Parts(vec![
            Content::text("Checking."),
            Content::text("get_weather(location='New York', days=3, opts={'a': [1, 2]})\nf2()"),
        ])
    );
    assert_eq!(out[2].role(), "user");
    assert_eq!(
        out[2].id(),
        tool.id(),
        "a tool result becomes a user message with the same id"
    );
    assert_eq!(out[2].text(), "sunny");
    // Plain text is wrapped; no calls, no extra item.
    let out = content_only(vec![ChatMessage::assistant("plain")]);
    assert_eq!(
        out[0].content(),
        &MessageContent::Parts(vec![Content::text("plain")])
    );
}

#[tokio::test]
async fn remove_tools_and_last_message() {
    let msgs = vec![
        ChatMessage::user("q"),
        assistant_with("".into(), vec![ToolCall::new("1", "add", json!({}))]),
        ChatMessage::tool("3", "1", "add", None),
        ChatMessage::assistant("done"),
    ];
    let out = remove_tools(msgs.clone());
    assert_eq!(
        transcript(&out),
        vec!["user: q", "assistant: ", "assistant: done"]
    );
    assert!(out[1].as_assistant().unwrap().tool_calls.is_none());
    assert_eq!(
        transcript(&last_message(msgs.clone())),
        vec!["assistant: done"]
    );
    assert!(last_message(vec![]).is_empty());
    let filtered = MessageFilter::remove_tools().apply(msgs).await;
    assert_eq!(filtered.len(), 3);
}

#[test]
fn trim_keeps_prefix_newest_share_and_pairs() {
    let mut msgs = vec![ChatMessage::system("sys")];
    let mut input = ChatMessage::user("task");
    input.set_source(Some(MessageSource::Input));
    msgs.push(input);
    for i in 0..5 {
        msgs.push(assistant_with(
            "".into(),
            vec![ToolCall::new(format!("c{i}"), "add", json!({"x": i}))],
        ));
        msgs.push(ChatMessage::tool(
            format!("{i}"),
            format!("c{i}"),
            "add",
            None,
        ));
    }
    msgs.push(ChatMessage::assistant("trailing"));
    let out = trim_messages(msgs.clone(), 0.7);
    // 11 conversation messages; int(11 * 0.3) = 3 dropped → starts at a tool result, whose call
    // is gone, so it is dropped too; the trailing assistant message is dropped.
    assert_eq!(
        transcript(&out),
        vec![
            "system: sys",
            "user: task",
            "assistant: add(x=2)",
            "tool add: 2",
            "assistant: add(x=3)",
            "tool add: 3",
            "assistant: add(x=4)",
            "tool add: 4",
        ]
    );
    assert_paired(&out[2..]);
    // Orphan calls (results trimmed away) are removed from their message.
    let msgs = vec![
        ChatMessage::user("q"),
        assistant_with(
            "".into(),
            vec![
                ToolCall::new("a", "add", json!({})),
                ToolCall::new("b", "add", json!({})),
            ],
        ),
        ChatMessage::tool("1", "a", "add", None),
        ChatMessage::user("next"),
    ];
    let out = trim_messages(msgs, 1.0);
    assert_eq!(out[1].as_assistant().unwrap().calls().len(), 1);
}

#[test]
fn content_only_drops_internal_data_and_renders_server_tool_use() {
    let search = actuator_tool_core::ServerToolUse {
        tool_type: actuator_tool_core::ServerToolKind::WebSearch,
        id: "ws_1".into(),
        name: "web_search".into(),
        context: None,
        arguments: "{\"query\": \"rust\"}".into(),
        result: "3 results".into(),
        error: None,
        internal: Some(json!({"opaque": 1})),
    };
    let text = Content::Text {
        text: "Found it.".into(),
        internal: Some(json!({"item_id": "msg_9"})),
    };
    let out = content_only(vec![assistant_with(
        MessageContent::Parts(vec![Content::ToolUse(search), text]),
        vec![],
    )]);
    let MessageContent::Parts(parts) = &out[0].as_assistant().unwrap().content else {
        panic!("parts expected");
    };
    assert_eq!(
        parts,
        &vec![
            Content::text("web_search {\"query\": \"rust\"}\n\n3 results"),
            Content::text("Found it."),
        ]
    );
    // Both round-trip through serde in the reference's shape.
    let item = serde_json::to_value(Content::Text {
        text: "t".into(),
        internal: Some(json!(1)),
    })
    .unwrap();
    assert_eq!(item, json!({"type": "text", "text": "t", "internal": 1}));
}
