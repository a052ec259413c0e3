//! A conversation keeps every message inline in one vector, so the inline size of a message is
//! what each turn of every live agent costs. Rare parts (metadata, a call's custom view, a tool
//! error) are boxed to keep it small: these bounds catch a field that grows it again.

use actuator_model::{ChatMessage, ChatMessageAssistant, ChatMessageTool, ToolArguments, ToolCall};
use std::mem::size_of;

#[test]
fn messages_and_calls_stay_small_inline() {
    assert!(
        size_of::<ChatMessage>() <= 120,
        "{}",
        size_of::<ChatMessage>()
    );
    assert!(
        size_of::<ChatMessageTool>() <= 112,
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
