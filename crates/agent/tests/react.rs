//! The react loop, transcript by transcript (scripted models), for every exit condition and
//! parameter.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use actuator_agent::compaction::{Compacted, CompactionStrategy, CompactionThreshold};
use actuator_agent::{
    AgentError, AgentState, RunContext,
    prompts::{
        DEFAULT_ASSISTANT_PROMPT, DEFAULT_CONTINUE_PROMPT, DEFAULT_CONTINUE_PROMPT_NO_SUBMIT,
        DEFAULT_INCORRECT_MESSAGE,
    },
    react,
    react::{
        AgentAttempts, AgentPrompt, AgentSubmit, ContextOverflow, ContinueDecision, ModelAgent,
        OnContinue,
    },
    run,
};
use actuator_events::{Event, EventLog, Score};
use actuator_model::{
    BoxFuture, ChatMessage, FunctionModel, MessageContent, Model, ModelOutput, ScriptedModel,
    StopReason, ToolCall,
};
use actuator_tool_core::{Content, ToolDef, ToolInfo};
use common::*;
use serde_json::json;

fn scripted(outputs: Vec<ModelOutput>) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new(outputs))
}

const SYSTEM_WITH_SUBMIT: &str = concat!(
    "\nYou are a helpful assistant attempting to submit the best possible answer. You have several tools available to help with finding the answer. You will see the result of tool calls right after sending the message. Prioritize parallel tool calls: when operations are independent, run them in one response \u{2014} e.g. reading several files or running several searches at once \u{2014} rather than one at a time. Only sequence calls when one depends on another's result. Do some reasoning before your actions, describing what tool calls you are going to use and how they fit into your plan.\n",
    "\n\nWhen you have completed the task and have an answer, call the submit() tool to report it.\n"
);

fn continue_prompt() -> String {
    DEFAULT_CONTINUE_PROMPT.replace("{submit}", "submit")
}

#[test]
fn default_system_prompts() {
    let model = scripted(vec![]);
    let agent = react().model(model.clone()).build().unwrap();
    assert_eq!(agent.system_message(), Some(SYSTEM_WITH_SUBMIT));
    let no_submit = react().model(model.clone()).no_submit().build().unwrap();
    assert_eq!(no_submit.system_message(), Some(DEFAULT_ASSISTANT_PROMPT));
    let briefed = react()
        .model(model.clone())
        .prompt("Be brief.")
        .build()
        .unwrap();
    assert_eq!(
        briefed.system_message().unwrap(),
        format!("Be brief.\n\n{SYSTEM_WITH_SUBMIT}")
    );
    // D11: all parts empty → no system message.
    let none = react()
        .model(model.clone())
        .prompt(AgentPrompt::none())
        .build()
        .unwrap();
    assert_eq!(none.system_message(), None);
    // A custom submit name reaches the prompt; `{submit}` in the assistant prompt replaces the submit prompt.
    let custom = react()
        .model(model)
        .submit(AgentSubmit {
            name: Some("answer".into()),
            ..AgentSubmit::default()
        })
        .prompt(AgentPrompt {
            assistant_prompt: Some("Use {submit}() when done.".into()),
            ..AgentPrompt::default()
        })
        .build()
        .unwrap();
    assert_eq!(custom.system_message(), Some("Use answer() when done."));
    assert_eq!(custom.submit_name(), Some("answer"));
}

/// The default system message is rendered once for the process: every agent built with the
/// default prompts, and every conversation they start, refers to that one copy.
#[tokio::test]
async fn the_default_system_message_is_shared_not_copied() {
    let model = scripted(vec![submit("3"), submit("4")]);
    let first = react().model(model.clone()).build().unwrap();
    let second = react().model(model.clone()).build().unwrap();
    let (a, b) = (
        first.system_message().unwrap(),
        second.system_message().unwrap(),
    );
    assert_eq!(a, SYSTEM_WITH_SUBMIT);
    assert_eq!(a.as_ptr(), b.as_ptr(), "two agents share the default text");

    let out = run(&first, "What is 1 + 2?", &[]).await.unwrap();
    let ChatMessage::System(system) = &out.state.messages[0] else {
        panic!("the conversation starts with the system message")
    };
    let MessageContent::Text(text) = &system.content else {
        panic!("text content")
    };
    assert_eq!(text.as_ptr(), a.as_ptr(), "the conversation shares it too");

    // Any other prompt is the agent's own.
    let own = react().model(model).prompt("Be brief.").build().unwrap();
    assert_ne!(own.system_message().unwrap().as_ptr(), a.as_ptr());
}

#[tokio::test]
async fn tools_then_continue_prompt_then_submit() {
    let model = scripted(vec![call_add(1, 2), say("Let me think."), submit("3")]);
    let agent = react().model(model).tools([add_tool()]).build().unwrap();
    let input = vec![ChatMessage::user("What is 1 + 2?")];
    let out = run(&agent, input.clone(), &[]).await.unwrap();
    assert!(out.limit.is_none());
    assert_eq!(
        transcript(&out.state.messages),
        vec![
            format!("system: {SYSTEM_WITH_SUBMIT}"),
            "user: What is 1 + 2?".to_owned(),
            "assistant: add(x=1, y=2)".to_owned(),
            "tool add: 3".to_owned(),
            "assistant: Let me think.".to_owned(),
            format!("user: {}", continue_prompt()),
            "assistant: 3 []".to_owned(),
        ]
    );
    assert_eq!(out.state.output().completion(), "3");
    assert_paired(&out.state.messages);
    // The caller's input is untouched.
    assert_eq!(input.len(), 1);
    assert_eq!(input[0].source(), None);
}

#[tokio::test]
async fn submit_options_answer_only_delimiter_keep() {
    let model = scripted(vec![call("I am sure.", "submit", json!({"answer": "42"}))]);
    let agent = react()
        .model(model)
        .no_prompt()
        .submit(AgentSubmit {
            answer_only: true,
            keep_in_messages: true,
            ..AgentSubmit::default()
        })
        .build()
        .unwrap();
    let out = run(&agent, "q", &[]).await.unwrap();
    assert_eq!(
        transcript(&out.state.messages),
        vec![
            "user: q",
            "assistant: I am sure. submit(answer='42')",
            "tool submit: 42"
        ]
    );
    assert_eq!(out.state.output().completion(), "42");

    let model = scripted(vec![call("I am sure.", "submit", json!({"answer": "42"}))]);
    let agent = react()
        .model(model)
        .no_prompt()
        .submit(AgentSubmit {
            answer_delimiter: " => ".into(),
            ..AgentSubmit::default()
        })
        .build()
        .unwrap();
    let out = run(&agent, "q", &[]).await.unwrap();
    assert_eq!(
        transcript(&out.state.messages),
        vec!["user: q", "assistant: I am sure. => 42 []"]
    );
    assert_eq!(out.state.output().completion(), "I am sure. => 42");
}

#[tokio::test]
async fn a_failed_submit_is_not_a_submission_and_disappears() {
    let model = scripted(vec![call("", "submit", json!({"answer": 5})), submit("5")]);
    let agent = react().model(model).no_prompt().build().unwrap();
    let out = run(&agent, "q", &[]).await.unwrap();
    // The failed call's error reached the model, then both submit results were removed.
    assert_eq!(
        transcript(&out.state.messages),
        vec!["user: q", "assistant:  []", "assistant: 5 []"]
    );
}

#[tokio::test]
async fn reasoning_behind_a_submit_call_is_removed() {
    let mut out = submit("7");
    out.choices[0].message.content = vec![Content::reasoning("hmm"), Content::text("Done.")].into();
    let agent = react()
        .model(scripted(vec![out]))
        .no_prompt()
        .build()
        .unwrap();
    let res = run(&agent, "q", &[]).await.unwrap();
    let last = res.state.messages.last().unwrap().as_assistant().unwrap();
    assert_eq!(last.tool_calls.as_deref(), Some(&[][..]));
    match &last.content {
        actuator_model::MessageContent::Parts(p) => {
            assert_eq!(p, &vec![Content::text("Done."), Content::text("7")]);
        }
        other => panic!("{other:?}"),
    }
}

fn ends_with_4() -> AgentAttempts {
    AgentAttempts::new(3).scorer(|s: &AgentState| {
        let correct = s.output().completion().ends_with('4');
        Box::pin(async move { Score::from(if correct { 1.0 } else { 0.0 }) })
    })
}

#[tokio::test]
async fn attempts_correct_on_the_second_try() {
    let model = scripted(vec![submit("5"), submit("4")]);
    let agent = react()
        .model(model.clone())
        .no_prompt()
        .attempts(ends_with_4())
        .build()
        .unwrap();
    let out = run(&agent, "2 + 2?", &[]).await.unwrap();
    assert_eq!(
        transcript(&out.state.messages),
        vec![
            "user: 2 + 2?".to_owned(),
            "assistant: 5 []".to_owned(),
            format!("user: {DEFAULT_INCORRECT_MESSAGE}"),
            "assistant: 4 []".to_owned(),
        ]
    );
    assert_eq!(out.state.output().completion(), "4");
    assert_eq!(model.calls(), 2);
}

#[tokio::test]
async fn attempts_exhausted_stop_without_scoring_the_last() {
    let scored = Arc::new(AtomicUsize::new(0));
    let s = scored.clone();
    let attempts = AgentAttempts::new(2).scorer(move |_st: &AgentState| {
        s.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Score::from(0.0) })
    });
    let attempts = attempts.incorrect_message(actuator_agent::react::IncorrectMessage::Fn(
        Arc::new(|_s: &AgentState, score: &Score| {
            let value = score.as_f64();
            Box::pin(async move { format!("Score {value}: try again.") })
        }),
    ));
    let model = scripted(vec![submit("5"), submit("6")]);
    let agent = react()
        .model(model)
        .no_prompt()
        .attempts(attempts)
        .build()
        .unwrap();
    let out = run(&agent, "2 + 2?", &[]).await.unwrap();
    assert_eq!(
        transcript(&out.state.messages),
        vec![
            "user: 2 + 2?",
            "assistant: 5 []",
            "user: Score 0: try again.",
            "assistant: 6 []"
        ]
    );
    assert_eq!(scored.load(Ordering::SeqCst), 1);
    assert_eq!(out.state.output().completion(), "6");
}

#[test]
fn build_errors() {
    let err = react().build().unwrap_err();
    assert!(err.to_string().contains("needs a model"));
    let err = react()
        .model(scripted(vec![]))
        .attempts(3)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("needs a scorer"));
    let err = react()
        .model(scripted(vec![]))
        .no_submit()
        .on_continue(OnContinue::Text("go".into()))
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Passing a string to on_continue with no submit tool is not permitted, because in this case the agent will always terminate when no tool calls are made."
    );
    let err = react()
        .model(scripted(vec![]))
        .tools([add_tool(), add_tool()])
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("Duplicate tool name 'add'"));
}

fn decide(f: impl Fn(&AgentState) -> ContinueDecision + Send + Sync + 'static) -> OnContinue {
    OnContinue::Fn(Arc::new(move |s: &AgentState| {
        let d = f(s);
        Box::pin(async move { d })
    }))
}

#[tokio::test]
async fn on_continue_each_return_kind() {
    // Continue: the default prompt after a text-only turn, nothing after tool calls.
    let model = scripted(vec![call_add(1, 1), say("hmm"), submit("2")]);
    let agent = react()
        .model(model)
        .no_prompt()
        .tools([add_tool()])
        .on_continue(decide(|_| ContinueDecision::Continue))
        .build()
        .unwrap();
    let out = run(&agent, "q", &[]).await.unwrap();
    assert_eq!(
        transcript(&out.state.messages),
        vec![
            "user: q".to_owned(),
            "assistant: add(x=1, y=1)".to_owned(),
            "tool add: 2".to_owned(),
            "assistant: hmm".to_owned(),
            format!("user: {}", continue_prompt()),
            "assistant: 2 []".to_owned(),
        ]
    );

    // Message: sent after every turn, even after tool calls, with {submit} replaced.
    let model = scripted(vec![call_add(1, 1), submit("2")]);
    let agent = react()
        .model(model)
        .no_prompt()
        .tools([add_tool()])
        .on_continue(decide(|_| {
            ContinueDecision::Message("Use {submit}.".into())
        }))
        .build()
        .unwrap();
    let out = run(&agent, "q", &[]).await.unwrap();
    assert_eq!(
        transcript(&out.state.messages),
        vec![
            "user: q",
            "assistant: add(x=1, y=1)",
            "tool add: 2",
            "user: Use submit.",
            "assistant: 2 []"
        ]
    );

    // Stop: the loop ends.
    let model = scripted(vec![say("done")]);
    let agent = react()
        .model(model)
        .no_prompt()
        .on_continue(decide(|_| ContinueDecision::Stop))
        .build()
        .unwrap();
    let out = run(&agent, "q", &[]).await.unwrap();
    assert_eq!(
        transcript(&out.state.messages),
        vec!["user: q", "assistant: done"]
    );

    // State: adopted as the new state.
    let model = scripted(vec![say("forget this"), submit("ok")]);
    let agent = react()
        .model(model)
        .no_prompt()
        .on_continue(decide(|s| {
            let mut fresh = AgentState::new(vec![
                s.messages[0].clone(),
                ChatMessage::user("Start over."),
            ]);
            fresh.set_output(ModelOutput::default());
            ContinueDecision::State(fresh)
        }))
        .build()
        .unwrap();
    let out = run(&agent, "q", &[]).await.unwrap();
    assert_eq!(
        transcript(&out.state.messages),
        vec!["user: q", "user: Start over.", "assistant: ok []"]
    );

    // Text: replaces the default continue prompt.
    let model = scripted(vec![say("hmm"), submit("x")]);
    let agent = react()
        .model(model)
        .no_prompt()
        .on_continue(OnContinue::Text("Call {submit}!".into()))
        .build()
        .unwrap();
    let out = run(&agent, "q", &[]).await.unwrap();
    assert_eq!(
        transcript(&out.state.messages),
        vec![
            "user: q",
            "assistant: hmm",
            "user: Call submit!",
            "assistant: x []"
        ]
    );
}

#[tokio::test]
async fn refusals_retried_then_three_in_a_row_end_the_loop() {
    let model = scripted(vec![
        stopped("I can't.", StopReason::ContentFilter),
        submit("ok"),
    ]);
    let agent = react()
        .model(model.clone())
        .no_prompt()
        .retry_refusals(1)
        .build()
        .unwrap();
    let out = run(&agent, "q", &[]).await.unwrap();
    assert_eq!(
        transcript(&out.state.messages),
        vec!["user: q", "assistant: ok []"]
    );
    assert_eq!(model.calls(), 2);

    let refusal = || stopped("I can't.", StopReason::ContentFilter);
    let model = scripted(vec![refusal(), refusal(), refusal(), submit("never")]);
    let agent = react().model(model.clone()).no_prompt().build().unwrap();
    let out = run(&agent, "q", &[]).await.unwrap();
    let cp = continue_prompt();
    assert_eq!(
        transcript(&out.state.messages),
        vec![
            "user: q".to_owned(),
            "assistant: I can't.".to_owned(),
            format!("user: {cp}"),
            "assistant: I can't.".to_owned(),
            format!("user: {cp}"),
            "assistant: I can't.".to_owned(),
        ]
    );
    assert_eq!(model.remaining(), 1);

    // A refusal between normal turns resets the count.
    let model = scripted(vec![
        refusal(),
        refusal(),
        say("ok"),
        refusal(),
        refusal(),
        submit("done"),
    ]);
    let agent = react().model(model).no_prompt().build().unwrap();
    let out = run(&agent, "q", &[]).await.unwrap();
    assert_eq!(out.state.output().completion(), "done");
}

#[tokio::test]
async fn overflow_without_recovery_stops() {
    let log = EventLog::new();
    let model = scripted(vec![call_add(1, 1), stopped("", StopReason::ModelLength)]);
    let agent = react()
        .model(model)
        .no_prompt()
        .tools([add_tool()])
        .build()
        .unwrap();
    let cx = RunContext::with_events(log.clone());
    let out = cx.run(&agent, "q", ()).await.unwrap();
    // With no filter, the failed turn stays.
    assert_eq!(
        transcript(&out.state.messages),
        vec![
            "user: q",
            "assistant: add(x=1, y=1)",
            "tool add: 2",
            "assistant: "
        ]
    );
    assert!(log.events().iter().any(|e| matches!(e, Event::Info(i) if i.message == "Agent terminated: model context window exceeded")));
}

#[tokio::test]
async fn overflow_recovered_by_the_truncation_filter() {
    let log = EventLog::new();
    let mut outputs: Vec<ModelOutput> = (0..5).map(|i| call_add(i, i)).collect();
    outputs.push(stopped("", StopReason::ModelLength));
    outputs.push(submit("done"));
    let agent = react()
        .model(scripted(outputs))
        .no_prompt()
        .tools([add_tool()])
        .context_overflow(ContextOverflow::Auto)
        .build()
        .unwrap();
    let cx = RunContext::with_events(log.clone());
    let out = cx.run(&agent, "q", ()).await.unwrap();
    let t = transcript(&out.state.messages);
    // 10 conversation messages trimmed to the newest 70% (7), minus the leading orphan result.
    assert_eq!(t.first().unwrap(), "user: q");
    assert!(t.len() < 12, "{t:?}");
    assert_eq!(t.last().unwrap(), "assistant: done []");
    assert_paired(&out.state.messages);
    assert!(log.events().iter().any(|e| matches!(e, Event::Info(i) if i.message == "Agent exceeded model context window, truncating messages and continuing.")));
    // A filter that does not shrink the history cannot recover.
    let keep = actuator_agent::filter::MessageFilter::sync(|m| m);
    let agent = react()
        .model(scripted(vec![stopped("", StopReason::ModelLength)]))
        .no_prompt()
        .context_overflow(ContextOverflow::Filter(keep))
        .build()
        .unwrap();
    let out = run(&agent, "q", &[]).await.unwrap();
    assert_eq!(transcript(&out.state.messages), vec!["user: q"]);
}

/// A strategy that replaces everything after the prefix with one summary message.
struct Summarize;
impl CompactionStrategy for Summarize {
    fn name(&self) -> &str {
        "test-summary"
    }
    fn threshold(&self) -> CompactionThreshold {
        CompactionThreshold::Tokens(u64::MAX)
    }
    fn compact<'a>(
        &'a self,
        _m: &'a dyn Model,
        messages: &'a [ChatMessage],
        _t: &'a [Arc<ToolInfo>],
        _cx: &'a RunContext,
    ) -> BoxFuture<'a, Result<Compacted, AgentError>> {
        let n = messages.len();
        Box::pin(async move {
            let mut summary = ChatMessage::user(format!("Summary of {n} messages."));
            summary.metadata_mut().insert("summary".into(), json!(true));
            Ok(Compacted {
                input: vec![],
                message: Some(summary),
            })
        })
    }
}

#[tokio::test]
async fn overflow_recovered_by_forced_compaction() {
    let seen: Arc<Mutex<Vec<Vec<String>>>> = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let turns = Arc::new(AtomicUsize::new(0));
    let model = FunctionModel::new("m", move |input, _tools| {
        record.lock().unwrap().push(transcript(input));
        let turn = turns.fetch_add(1, Ordering::SeqCst);
        Ok(match turn {
            0 | 1 => call_add(turn as i64, 1),
            2 => stopped("", StopReason::ModelLength),
            _ => submit("done"),
        })
    });
    let agent = react()
        .model(Arc::new(model))
        .no_prompt()
        .tools([add_tool()])
        .compaction(Arc::new(Summarize))
        .build()
        .unwrap();
    let out = run(&agent, "q", &[]).await.unwrap();
    // The history keeps everything but the failed turn, plus the summary.
    assert_eq!(
        transcript(&out.state.messages),
        vec![
            "user: q",
            "assistant: add(x=0, y=1)",
            "tool add: 1",
            "assistant: add(x=1, y=1)",
            "tool add: 2",
            "user: Summary of 5 messages.",
            "assistant: done []",
        ]
    );
    // The model's last input was the prefix plus the summary.
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen.last().unwrap(),
        &vec![
            "user: q".to_owned(),
            "user: Summary of 5 messages.".to_owned()
        ]
    );
}

#[tokio::test]
async fn no_submit_ends_on_the_first_text_only_turn() {
    let model = scripted(vec![call_add(2, 2), say("It is 4."), say("unused")]);
    let agent = react()
        .model(model.clone())
        .no_prompt()
        .no_submit()
        .tools([add_tool()])
        .build()
        .unwrap();
    let out = run(&agent, "2 + 2?", &[]).await.unwrap();
    assert_eq!(
        transcript(&out.state.messages),
        vec![
            "user: 2 + 2?",
            "assistant: add(x=2, y=2)",
            "tool add: 4",
            "assistant: It is 4."
        ]
    );
    assert_eq!(model.remaining(), 1);
    assert!(agent.tools().iter().all(|t| t.name() != "submit"));

    let model = scripted(vec![say("first"), say("second")]);
    let n = Arc::new(AtomicUsize::new(0));
    let agent = react()
        .model(model)
        .no_prompt()
        .no_submit()
        .on_continue(decide(move |_| {
            if n.fetch_add(1, Ordering::SeqCst) == 0 {
                ContinueDecision::Continue
            } else {
                ContinueDecision::Stop
            }
        }))
        .build()
        .unwrap();
    let out = run(&agent, "q", &[]).await.unwrap();
    assert_eq!(
        transcript(&out.state.messages),
        vec![
            "user: q".to_owned(),
            "assistant: first".to_owned(),
            format!("user: {DEFAULT_CONTINUE_PROMPT_NO_SUBMIT}"),
            "assistant: second".to_owned()
        ]
    );
}

/// An agent used as the model: calls `add` once it sees the tools, then submits.
struct ToolAwareAgent;
impl ModelAgent for ToolAwareAgent {
    fn name(&self) -> &str {
        "tool-aware"
    }
    fn generate(
        &self,
        mut state: AgentState,
        tools: Vec<ToolDef>,
        _cx: RunContext,
    ) -> BoxFuture<'_, Result<AgentState, AgentError>> {
        Box::pin(async move {
            let names: Vec<&str> = tools.iter().map(ToolDef::name).collect();
            assert_eq!(names, vec!["add", "submit"]);
            let answered = state.messages.iter().any(|m| m.as_tool().is_some());
            let out = if answered {
                submit("done")
            } else {
                call_add(3, 4)
            };
            state.messages.push(ChatMessage::Assistant(Box::new(
                out.choices[0].message.clone(),
            )));
            state.set_output(out);
            Ok(state)
        })
    }
}

#[tokio::test]
async fn an_agent_as_the_model_receives_the_tools() {
    let agent = react()
        .model_agent(Arc::new(ToolAwareAgent))
        .no_prompt()
        .tools([add_tool()])
        .build()
        .unwrap();
    let out = run(&agent, "q", &[]).await.unwrap();
    assert_eq!(
        transcript(&out.state.messages),
        vec![
            "user: q",
            "assistant: add(x=3, y=4)",
            "tool add: 7",
            "assistant: done []"
        ]
    );
}

#[tokio::test]
async fn events_are_emitted_for_generations_tools_and_the_agent_span() {
    let log = EventLog::new();
    let agent = react()
        .name("helper")
        .model(scripted(vec![call_add(1, 1), submit("2")]))
        .tools([add_tool()])
        .build()
        .unwrap();
    let cx = RunContext::with_events(log.clone());
    cx.run(&agent, "q", ()).await.unwrap();
    let kinds: Vec<&str> = log
        .events()
        .iter()
        .map(|e| match e {
            Event::SpanBegin(s) => {
                assert_eq!((s.kind.as_str(), s.name.as_str()), ("agent", "helper"));
                "span_begin"
            }
            Event::SpanEnd(_) => "span_end",
            Event::Model(m) => {
                assert_eq!(m.model, "scripted");
                assert_eq!(m.tools.len(), 2);
                "model"
            }
            Event::ToolPending(_) => "tool started",
            Event::Tool(t) => {
                assert!(!t.is_pending(), "a call's completed event is not pending");
                "tool"
            }
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            "span_begin",
            "model",
            "tool started",
            "tool",
            "model",
            "tool started",
            "tool",
            "span_end"
        ]
    );
}

#[tokio::test]
async fn an_empty_output_is_an_error_with_the_state() {
    let agent = react()
        .model(scripted(vec![ModelOutput::default()]))
        .no_prompt()
        .build()
        .unwrap();
    let err = run(&agent, "q", &[]).await.unwrap_err();
    assert_eq!(err.to_string(), "The model returned no choices.");
    assert_eq!(transcript(&err.state.unwrap().messages), vec!["user: q"]);
    let err = run(&react().model(scripted(vec![])).build().unwrap(), "q", &[])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no output left"));
    let _ = ToolCall::new("a", "b", json!({}));
}

#[tokio::test]
async fn approval_policies_and_executor_options_apply_to_the_agents_calls() {
    use actuator_exec::{ApprovalDecision, ApprovalPolicy, auto_approver};
    let big = actuator_tool_core::ToolDef::builder("big")
        .description("Returns a lot.")
        .handler(
            |_a: actuator_tool_core::ToolArgs, _c: actuator_tool_core::ToolContext| async {
                Ok::<_, actuator_tool_core::ToolFailure>("x".repeat(1000))
            },
        )
        .build()
        .unwrap();
    let model = scripted(vec![
        call_add(1, 2),
        call("", "big", json!({})),
        submit("3"),
    ]);
    let agent = react()
        .model(model)
        .no_prompt()
        .tools([add_tool(), big])
        .approval([ApprovalPolicy::new(auto_approver(ApprovalDecision::Reject), ["add"]).unwrap()])
        .approval([ApprovalPolicy::new(auto_approver(ApprovalDecision::Approve), ["*"]).unwrap()])
        .max_output(100)
        .build()
        .unwrap();
    let out = run(&agent, "q", &[]).await.unwrap();
    let t = transcript(&out.state.messages);
    assert_eq!(t[2], "tool add: error approval: Automatic decision.");
    assert!(
        t[4].starts_with(
            "tool big: \nThe output of your call to big was too long to be displayed."
        ),
        "{}",
        t[4]
    );
    assert!(t[4].contains("[... 900 bytes omitted ...]"), "{}", t[4]);
}

#[tokio::test]
async fn a_custom_submit_tool_with_its_own_name_and_description() {
    let custom = actuator_tool_core::ToolDef::builder("finish")
        .description("Finish the task.")
        .parameters(
            actuator_tool_core::ToolParams::from_value(&json!({
                "properties": {"result": {"type": "integer", "description": "The result."}},
                "required": ["result"]
            }))
            .unwrap(),
        )
        .handler(
            |mut a: actuator_tool_core::ToolArgs, _c: actuator_tool_core::ToolContext| async move {
                let r: i64 = a.required("result")?;
                Ok::<_, actuator_tool_core::ToolFailure>(format!("result={r}"))
            },
        )
        .build()
        .unwrap();
    let model = scripted(vec![call("", "done", json!({"result": 7}))]);
    let agent = react()
        .model(model)
        .no_prompt()
        .submit(AgentSubmit {
            tool: Some(custom),
            name: Some("done".into()),
            description: Some("Report the result.".into()),
            answer_only: true,
            ..AgentSubmit::default()
        })
        .build()
        .unwrap();
    let submit = agent.tools().last().unwrap();
    assert_eq!(
        (submit.name(), submit.description()),
        ("done", "Report the result.")
    );
    assert_eq!(
        submit.max_output(),
        Some(0),
        "a submission is never truncated"
    );
    let out = run(&agent, "q", &[]).await.unwrap();
    assert_eq!(out.state.output().completion(), "result=7");
    assert_eq!(
        transcript(&out.state.messages),
        vec!["user: q", "assistant: result=7 []"]
    );
}

#[tokio::test]
async fn attempts_read_the_reference_score_values_and_pass_the_whole_score() {
    // "I" then "C": the reference's value_to_float makes them 0 and 1; the incorrect message
    // function sees the scorer's explanation.
    let verdicts = Arc::new(std::sync::Mutex::new(vec!["C", "I"]));
    let v = verdicts.clone();
    let attempts = AgentAttempts::new(3)
        .scorer(move |_s: &AgentState| {
            let verdict = v.lock().unwrap().pop().unwrap();
            Box::pin(async move { Score::new(verdict).with_explanation("off by one") })
        })
        .incorrect_message(actuator_agent::react::IncorrectMessage::Fn(Arc::new(
            |_s: &AgentState, score: &Score| {
                let text = format!(
                    "{:?} because {}",
                    score.value,
                    score.explanation.clone().unwrap_or_default()
                );
                Box::pin(async move { text })
            },
        )));
    let model = scripted(vec![submit("5"), submit("4")]);
    let agent = react()
        .model(model)
        .no_prompt()
        .attempts(attempts)
        .build()
        .unwrap();
    let out = run(&agent, "2 + 2?", &[]).await.unwrap();
    assert_eq!(
        transcript(&out.state.messages),
        vec![
            "user: 2 + 2?",
            "assistant: 5 []",
            "user: String(\"I\") because off by one",
            "assistant: 4 []"
        ]
    );

    // A custom conversion: only "A+" is correct.
    let attempts = AgentAttempts::new(2)
        .scorer(|_s: &AgentState| Box::pin(async { Score::new("C") }))
        .score_value(|v| f64::from(u8::from(*v == actuator_events::ScoreValue::from("A+"))));
    let model = scripted(vec![submit("5"), submit("4")]);
    let agent = react()
        .model(model.clone())
        .no_prompt()
        .attempts(attempts)
        .build()
        .unwrap();
    run(&agent, "2 + 2?", &[]).await.unwrap();
    assert_eq!(
        model.calls(),
        2,
        "\"C\" is not correct under the custom conversion"
    );
}
