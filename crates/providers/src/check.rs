//! The conversation checked against a provider's rules before it is sent, so that a broken
//! conversation is a precise error here instead of a provider's 400.

use std::collections::HashSet;

use actuator_model::{ChatMessage, CompactString};

/// What a provider accepts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules {
    /// Anthropic rejects an assistant turn with no content (except a final one, a prefill).
    pub no_empty_assistant: bool,
}

/// Checks that every tool call is answered by exactly one tool message before the conversation
/// moves on, that every tool message answers a call of the assistant turn before it, and (where
/// the provider rejects them) that no assistant turn is empty. Returns the first problem.
pub(crate) fn check_conversation(messages: &[ChatMessage], rules: Rules) -> Result<(), String> {
    // Calls of the latest assistant turn not answered yet: (id, function, message index).
    let mut pending: Vec<(CompactString, CompactString, usize)> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    let unanswered = |pending: &[(CompactString, CompactString, usize)], at: usize| {
        let (id, function, index) = &pending[0];
        format!(
            "tool call `{id}` ({function}) of message {index} has no tool message answering it before message {at}; \
             run the calls (RunContext::execute_tools) or remove them before generating"
        )
    };
    for (i, message) in messages.iter().enumerate() {
        match message {
            ChatMessage::Assistant(a) => {
                if !pending.is_empty() {
                    return Err(unanswered(&pending, i));
                }
                answered.clear();
                let mut ids = HashSet::new();
                for call in a.calls() {
                    if call.id.is_empty() {
                        return Err(format!(
                            "tool call {} of message {i} has an empty id",
                            call.function
                        ));
                    }
                    if !ids.insert(call.id.as_str()) {
                        return Err(format!(
                            "message {i} has two tool calls with the id `{}`",
                            call.id
                        ));
                    }
                    pending.push((call.id.clone(), call.function.clone(), i));
                }
                let last = i + 1 == messages.len();
                if rules.no_empty_assistant
                    && !last
                    && a.calls().is_empty()
                    && a.content.text().trim().is_empty()
                    && !has_reasoning(&a.content)
                {
                    return Err(format!(
                        "message {i} is an assistant turn with no content and no tool calls, which this provider rejects; \
                         remove it or give it text"
                    ));
                }
            }
            ChatMessage::Tool(t) => {
                let Some(id) = t.tool_call_id.as_deref() else {
                    return Err(format!(
                        "tool message {i} has no tool_call_id; every tool message must name the call it answers"
                    ));
                };
                match pending.iter().position(|(p, _, _)| p == id) {
                    Some(pos) => {
                        pending.remove(pos);
                        answered.insert(id.to_owned());
                    }
                    None if answered.contains(id) => {
                        return Err(format!(
                            "tool message {i} answers call `{id}` a second time"
                        ));
                    }
                    None => {
                        return Err(format!(
                            "tool message {i} answers call `{id}`, which the assistant turn before it did not make"
                        ));
                    }
                }
            }
            ChatMessage::User(_) | ChatMessage::System(_) => {
                if !pending.is_empty() {
                    return Err(unanswered(&pending, i));
                }
            }
        }
    }
    Ok(())
}

fn has_reasoning(content: &actuator_model::MessageContent) -> bool {
    matches!(content, actuator_model::MessageContent::Parts(parts)
        if parts.iter().any(|p| matches!(p, actuator_tool_core::Content::Reasoning { .. })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use actuator_model::{ChatMessageAssistant, ToolCall};
    use serde_json::json;

    const OPENAI: Rules = Rules {
        no_empty_assistant: false,
    };
    const ANTHROPIC: Rules = Rules {
        no_empty_assistant: true,
    };

    fn calls(ids: &[&str]) -> ChatMessage {
        let mut a = ChatMessageAssistant::new("");
        a.tool_calls = Some(
            ids.iter()
                .map(|id| ToolCall::new(*id, "add", json!({})))
                .collect(),
        );
        ChatMessage::Assistant(Box::new(a))
    }

    #[test]
    fn answered_calls_pass() {
        let conv = [
            ChatMessage::user("q"),
            calls(&["a", "b"]),
            ChatMessage::tool("1", "b", "add", None),
            ChatMessage::tool("2", "a", "add", None),
            ChatMessage::user("more"),
        ];
        assert_eq!(check_conversation(&conv, ANTHROPIC), Ok(()));
        // A last turn with calls not yet answered is fine too (nothing is generated after it).
        assert_eq!(check_conversation(&conv[..2], OPENAI), Ok(()));
    }

    #[test]
    fn an_unanswered_call_is_named() {
        let conv = [
            ChatMessage::user("q"),
            calls(&["a", "b"]),
            ChatMessage::tool("1", "a", "add", None),
            ChatMessage::user("next"),
        ];
        let err = check_conversation(&conv, OPENAI).unwrap_err();
        assert!(
            err.contains("`b` (add) of message 1") && err.contains("before message 3"),
            "{err}"
        );
    }

    #[test]
    fn stray_and_duplicate_answers_are_refused() {
        let conv = [calls(&["a"]), ChatMessage::tool("1", "zz", "add", None)];
        assert!(
            check_conversation(&conv, OPENAI)
                .unwrap_err()
                .contains("`zz`, which the assistant turn")
        );
        let conv = [
            calls(&["a"]),
            ChatMessage::tool("1", "a", "add", None),
            ChatMessage::tool("1", "a", "add", None),
        ];
        assert!(
            check_conversation(&conv, OPENAI)
                .unwrap_err()
                .contains("a second time")
        );
        let conv = [calls(&["a", "a"])];
        assert!(
            check_conversation(&conv, OPENAI)
                .unwrap_err()
                .contains("two tool calls")
        );
    }

    #[test]
    fn empty_assistant_turns_only_where_the_provider_rejects_them() {
        let conv = [
            ChatMessage::user("q"),
            ChatMessage::assistant(""),
            ChatMessage::user("again"),
        ];
        assert_eq!(check_conversation(&conv, OPENAI), Ok(()));
        assert!(
            check_conversation(&conv, ANTHROPIC)
                .unwrap_err()
                .contains("message 1")
        );
        // A final empty assistant message is a prefill, not a turn.
        assert_eq!(check_conversation(&conv[..2], ANTHROPIC), Ok(()));
    }
}
