//! What recording a tool call costs in memory: the message id an event keeps is inline, and
//! the approval few calls have is out of line.

use actuator_events::ToolEvent;
use actuator_model::new_id;
use serde_json::json;

#[test]
fn a_tool_events_message_id_is_kept_inline() {
    let mut event = ToolEvent::pending("call_1", "add", json!({"x": 1}), 0.0);
    event.message_id = Some(new_id());
    let id = event.message_id.as_ref().map(|id| id.is_heap_allocated());
    assert_eq!(id, Some(false), "a message id is inline, not a heap string");
}

#[test]
fn a_tool_event_keeps_its_rare_approval_out_of_line() {
    // The approval (most calls have none) is boxed: an event is moved into its sink whole.
    assert!(
        size_of::<ToolEvent>() <= 320,
        "{} bytes",
        size_of::<ToolEvent>()
    );
}

#[test]
fn a_pending_tool_event_is_inline_and_no_larger_than_the_other_events() {
    use actuator_events::{Event, PendingToolEvent};
    // Every call emits one before its tool runs: it lives in the event itself, with no block
    // of its own, and does not make every event of the log larger. Its id and name are
    // inline copies (24 bytes each), not shared strings whose counts are atomic operations.
    let event = Event::ToolPending(PendingToolEvent::new("call_1", "add", json!({}), 0.0));
    assert!(matches!(event, Event::ToolPending(_)));
    assert!(
        size_of::<Event>() <= 96,
        "an event takes {} bytes",
        size_of::<Event>()
    );
    assert!(
        size_of::<PendingToolEvent>() <= 80,
        "{} bytes",
        size_of::<PendingToolEvent>()
    );
}
