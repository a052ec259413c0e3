//! A conversation keeps one 16-byte slot per message and each message in its own box, so the
//! size of a message is what each turn of every live agent costs. Rare parts (metadata, a
//! call's custom view, a tool error) are boxed, and ids, names and short texts are kept inline:
//! these bounds catch a field that grows a message again or costs an allocation again.

use actuator_model::{
    ChatMessage, ChatMessageAssistant, ChatMessageTool, MessageContent, ModelOutput, ToolArguments,
    ToolCall, new_id,
};
use serde_json::json;
use std::mem::size_of;

#[test]
fn messages_and_calls_stay_small_inline() {
    assert_eq!(size_of::<ChatMessage>(), 16);
    assert!(
        size_of::<ChatMessageTool>() <= 120,
        "{}",
        size_of::<ChatMessageTool>()
    );
    assert!(
        size_of::<ChatMessageAssistant>() <= 120,
        "{}",
        size_of::<ChatMessageAssistant>()
    );
    assert!(size_of::<ToolCall>() <= 112, "{}", size_of::<ToolCall>());
    assert_eq!(size_of::<ToolArguments>(), 24);
}

#[test]
fn ids_names_and_short_texts_take_no_allocation() {
    assert!(!new_id().is_heap_allocated());

    let call = ToolCall::new("call_7", "add", json!({"x": 1}));
    assert!(!call.id.is_heap_allocated());
    assert!(!call.function.is_heap_allocated());

    let out = ModelOutput::for_tool_calls("mockllm/model", "", vec![call]);
    assert!(!out.model.is_heap_allocated());
    let message = out.message().expect("one choice");
    assert!(
        message
            .model
            .as_ref()
            .is_some_and(|m| !m.is_heap_allocated())
    );

    let ChatMessage::Tool(tool) = ChatMessage::tool("3", "call_7", "add", None) else {
        unreachable!("ChatMessage::tool builds a tool message")
    };
    assert!(!tool.id.is_heap_allocated());
    assert!(tool.tool_call_id.is_some_and(|id| !id.is_heap_allocated()));
    let MessageContent::Text(text) = &tool.content else {
        unreachable!("text content")
    };
    assert!(!text.is_heap_allocated());

    // A long text is kept on the heap, as a `String` would keep it, and reads the same.
    let long = "a tool result longer than twenty-four bytes";
    let content = MessageContent::from(long.to_owned());
    assert_eq!(content.text(), long);
}
