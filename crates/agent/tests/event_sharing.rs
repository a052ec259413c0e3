//! Recording a turn costs O(1) in the conversation's length: each model event's input shares
//! the messages of the events before it (and its tools the agent's infos) instead of copying
//! them, and still says exactly what the model was shown.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};

use actuator_agent::{AgentState, RunOptions, react, react::AgentAttempts, run};
use actuator_events::{Event, EventLog, ModelEvent};
use actuator_model::{ChatMessage, FunctionModel, ModelOutput};
use common::{add_tool, call_add, submit};

fn model_events(log: &EventLog) -> Vec<ModelEvent> {
    log.events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Model(m) => Some(*m),
            _ => None,
        })
        .collect()
}

/// Every input a model was shown.
type Seen = Arc<Mutex<Vec<Vec<ChatMessage>>>>;

/// A model that plays `outputs` in turn and remembers every input it was shown.
fn recording(outputs: Vec<ModelOutput>) -> (Arc<FunctionModel>, Seen) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let outputs = Mutex::new(outputs.into_iter());
    let model = FunctionModel::new("recording", move |input, _tools| {
        s.lock().unwrap().push(input.to_vec());
        Ok(outputs.lock().unwrap().next().unwrap())
    });
    (Arc::new(model), seen)
}

#[tokio::test]
async fn each_model_event_shares_the_input_of_the_one_before() {
    let (model, seen) = recording(vec![
        call_add(1, 1),
        call_add(2, 1),
        call_add(3, 1),
        call_add(4, 1),
        submit("5"),
    ]);
    let agent = react().model(model).tools([add_tool()]).build().unwrap();
    let log = EventLog::new();
    run(&agent, "count", RunOptions::new().events(log.clone()))
        .await
        .unwrap();
    let events = model_events(&log);
    assert_eq!(events.len(), 5);
    let seen = seen.lock().unwrap();
    for (k, event) in events.iter().enumerate() {
        // What the model was shown, message for message.
        assert_eq!(event.input.to_vec(), seen[k], "event {k}");
        // The tools are the agent's own infos, not copies.
        for (offered, def) in event.tools.iter().zip(agent.tools()) {
            assert!(Arc::ptr_eq(offered, &def.info_arc()));
        }
    }
    // Not merely equal: the earlier input's storage is the later one's prefix.
    for pair in events.windows(2) {
        assert!(
            pair[0].input.is_shared_prefix_of(&pair[1].input),
            "a turn copied the conversation instead of sharing it"
        );
    }
    // The JSON is unchanged: the input is a plain list of messages.
    let json = serde_json::to_value(&events[1]).unwrap();
    assert_eq!(json["input"], serde_json::to_value(&seen[1]).unwrap());
    assert_eq!(json["tools"][0]["name"], "add");
}

#[tokio::test]
async fn a_submission_that_edits_the_history_is_recorded_as_edited() {
    // A wrong answer: react appends it to the assistant message in place (same id), so the
    // next event cannot reuse what it recorded before and must show the edited message.
    let (model, seen) = recording(vec![call_add(1, 1), submit("5"), submit("4")]);
    let attempts = AgentAttempts::new(2).scorer(|s: &AgentState| {
        let correct = s.output().completion().ends_with('4');
        Box::pin(async move { actuator_events::Score::from(if correct { 1.0 } else { 0.0 }) })
    });
    let agent = react()
        .model(model)
        .tools([add_tool()])
        .attempts(attempts)
        .build()
        .unwrap();
    let log = EventLog::new();
    run(&agent, "2 + 2?", RunOptions::new().events(log.clone()))
        .await
        .unwrap();
    let events = model_events(&log);
    let seen = seen.lock().unwrap();
    assert_eq!(events.len(), 3);
    for (k, event) in events.iter().enumerate() {
        assert_eq!(event.input.to_vec(), seen[k], "event {k}");
    }
    assert!(events[0].input.is_shared_prefix_of(&events[1].input));
}

#[tokio::test]
async fn the_state_keeps_the_output_its_model_event_recorded_and_events_share_the_tools() {
    let (model, _seen) = recording(vec![call_add(1, 1), call_add(2, 1), call_add(3, 1)]);
    let agent = react().model(model).tools([add_tool()]).build().unwrap();
    let log = EventLog::new();
    // The third generation goes over the turn limit: the run ends with the second's output.
    let out = run(
        &agent,
        "count",
        RunOptions::new()
            .events(log.clone())
            .limits([actuator_agent::limits::turn_limit(2)]),
    )
    .await
    .unwrap();
    assert!(out.limit.is_some());
    let events = model_events(&log);
    assert_eq!(events.len(), 3);
    let kept = out.state.explicit_output().unwrap();
    let recorded = events[1].output.as_deref().unwrap();
    assert_eq!(kept, recorded);
    assert!(
        std::ptr::eq(kept, recorded),
        "the state holds a copy of the output its event recorded"
    );
    // Every turn's event holds the agent's one list of tool infos.
    assert!(Arc::ptr_eq(&events[0].tools, &events[2].tools));
}

#[tokio::test]
async fn the_conversation_keeps_each_call_as_text_once_it_has_run() {
    let (model, _seen) = recording(vec![call_add(1, 1), call_add(2, 1), submit("3")]);
    let agent = react().model(model).tools([add_tool()]).build().unwrap();
    let out = run(&agent, "count", RunOptions::new()).await.unwrap();
    let calls: Vec<_> = out
        .state
        .messages
        .iter()
        .filter_map(ChatMessage::as_assistant)
        .flat_map(|a| a.calls())
        .collect();
    assert_eq!(calls.iter().filter(|c| c.function == "add").count(), 2);
    for call in calls {
        assert!(!call.arguments.keeps_parsed(), "{call:?}");
        assert!(!call.arguments.as_json().is_empty());
    }
}
