//! handoff, as_tool and as_solver, with scripted models per agent.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;

use actuator_agent::{
    AgentState, FnAgent, RunContext, agent_fn,
    filter::MessageFilter,
    limits::{LimitKind, message_limit, token_limit, turn_limit},
    react,
    react::AgentPrompt,
    run,
};
use actuator_events::{Event, EventLog};
use actuator_model::{
    ChatMessage, FunctionModel, MessageContent, ModelOutput, ModelUsage, ScriptedModel, ToolCall,
};
use actuator_multi::{
    AgentToolError, Solver, TaskState, as_solver, as_tool, handoff, sanitize_tool_name,
};
use actuator_tool_core::{Content, ToolParams};
use serde_json::{Value, json};

fn transcript(messages: &[ChatMessage]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m {
            ChatMessage::Assistant(a) if !a.calls().is_empty() => {
                format!(
                    "assistant {}",
                    a.calls()
                        .iter()
                        .map(ToolCall::render)
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            }
            ChatMessage::Tool(t) => match &t.error {
                Some(e) => format!("tool error {}", e.message),
                None => format!("tool {}", t.content.text()),
            },
            other => format!("{} {}", other.role(), other.text()),
        })
        .collect()
}

fn call(name: &str, args: Value) -> ModelOutput {
    ModelOutput::for_tool_calls("", "", vec![ToolCall::new(format!("{name}_1"), name, args)])
}

fn submit(answer: &str) -> ModelOutput {
    call("submit", json!({"answer": answer}))
}

fn searcher() -> FnAgent {
    let params = ToolParams::from_value(&json!({
        "properties": {"max_searches": {"type": "integer", "description": "Maximum number of web searches to conduct", "default": 5}}
    }))
    .unwrap();
    agent_fn("searcher", |mut state: AgentState, _cx, args| async move {
        let n = args
            .get("max_searches")
            .and_then(Value::as_i64)
            .unwrap_or(5);
        state.messages.push(ChatMessage::assistant(format!(
            "The maximum searches is {n}"
        )));
        Ok(state)
    })
    .with_description("Searcher that computes max searches.")
    .with_parameters(params)
}

fn sys_only() -> AgentPrompt {
    AgentPrompt {
        instructions: Some("SYS".into()),
        ..AgentPrompt::none()
    }
}

#[test]
fn handoff_tool_schema_matches_the_reference() {
    let tool = handoff(Arc::new(searcher())).build().unwrap();
    assert_eq!(tool.name(), "transfer_to_searcher");
    assert_eq!(tool.description(), "Searcher that computes max searches.");
    assert_eq!(
        serde_json::to_string(tool.parameters()).unwrap(),
        r#"{"type":"object","properties":{"max_searches":{"type":"integer","description":"Maximum number of web searches to conduct","default":5}},"required":[],"additionalProperties":false}"#
    );
    assert!(!tool.parallel());
}

#[tokio::test]
async fn the_reference_transcript() {
    let supervisor = react()
        .prompt(sys_only())
        .tools([handoff(Arc::new(searcher())).build().unwrap()])
        .model(Arc::new(ScriptedModel::new([
            call("transfer_to_searcher", json!({"max_searches": 3})),
            submit("final answer"),
        ])))
        .build()
        .unwrap();
    let out = run(&supervisor, "Q?", &[]).await.unwrap();
    assert_eq!(
        transcript(&out.state.messages),
        vec![
            "system SYS",
            "user Q?",
            "assistant transfer_to_searcher(max_searches=3)",
            "tool Successfully transferred to searcher.",
            "assistant [searcher] The maximum searches is 3",
            "user The searcher agent has completed its work.",
            "assistant final answer",
        ]
    );
}

#[tokio::test]
async fn the_handoff_prompt_is_included_when_a_tool_is_a_handoff() {
    let with = react()
        .model(Arc::new(ScriptedModel::new([])))
        .tools([handoff(Arc::new(searcher())).build().unwrap()])
        .build()
        .unwrap();
    assert!(
        with.system_message()
            .unwrap()
            .contains("**Agents** and **Handoffs**")
    );
    let without = react()
        .model(Arc::new(ScriptedModel::new([])))
        .build()
        .unwrap();
    assert!(!without.system_message().unwrap().contains("Handoffs"));
}

/// An agent that records what it was given and answers.
fn recorder(name: &str, seen: Arc<std::sync::Mutex<Vec<String>>>) -> FnAgent {
    agent_fn(name.to_owned(), move |mut state: AgentState, _cx, _args| {
        let seen = seen.clone();
        async move {
            *seen.lock().unwrap() = transcript(&state.messages);
            let mut reply = actuator_model::ChatMessageAssistant::new(MessageContent::Parts(vec![
                Content::reasoning("private"),
                Content::text("done"),
            ]));
            reply.model = Some("sub".into());
            state.messages.push(ChatMessage::Assistant(Box::new(reply)));
            state.messages.push(ChatMessage::system("sub system"));
            state.messages.push(ChatMessage::assistant(""));
            Ok(state)
        }
    })
    .with_description("Records its input.")
}

#[tokio::test]
async fn filters_boundary_system_messages_and_prefixes() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    // An input filter that keeps only the last user message: the boundary is re-added.
    let last_user = MessageFilter::sync(|m: Vec<ChatMessage>| {
        m.into_iter()
            .filter(|m| m.role() == "user")
            .rev()
            .take(1)
            .collect()
    });
    let tool = handoff(Arc::new(recorder("Sub Agent", seen.clone())))
        .input_filter(last_user)
        .output_filter(None)
        .build()
        .unwrap();
    assert_eq!(tool.name(), "transfer_to_sub_agent");
    let supervisor = react()
        .prompt(sys_only())
        .tools([tool])
        .model(Arc::new(ScriptedModel::new([
            call("transfer_to_sub_agent", json!({})),
            submit("ok"),
        ])))
        .build()
        .unwrap();
    let out = run(&supervisor, "Q?", &[]).await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec!["user Q?", "user Successfully transferred to Sub Agent."]
    );
    let t = transcript(&out.state.messages);
    // Unfiltered output: list content prefixed on its first text; the empty str content too;
    // the sub-agent's system message dropped; the display name is unsanitized.
    assert_eq!(
        t,
        vec![
            "system SYS",
            "user Q?",
            "assistant transfer_to_sub_agent()",
            "tool Successfully transferred to Sub Agent.",
            "assistant [Sub Agent] done",
            "assistant [Sub Agent] ",
            "user The Sub Agent agent has completed its work.",
            "assistant ok",
        ]
    );
    let reasoning_kept = out.state.messages[4]
        .as_assistant()
        .unwrap()
        .content
        .clone();
    assert!(matches!(reasoning_kept, MessageContent::Parts(p) if p.len() == 2));

    // The default output filter (content_only) drops reasoning; system messages never reach the agent.
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let tool = handoff(Arc::new(recorder("helper", seen.clone())))
        .build()
        .unwrap();
    let supervisor = react()
        .prompt(sys_only())
        .tools([tool])
        .model(Arc::new(ScriptedModel::new([
            call("transfer_to_helper", json!({})),
            submit("ok"),
        ])))
        .build()
        .unwrap();
    let out = run(&supervisor, "Q?", &[]).await.unwrap();
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .all(|l| !l.starts_with("system"))
    );
    match out.state.messages[4]
        .as_assistant()
        .unwrap()
        .content
        .clone()
    {
        MessageContent::Parts(p) => assert_eq!(p, vec![Content::text("[helper] done")]),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn two_handoff_calls_in_one_turn_each_see_only_their_own_call() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let tool = handoff(Arc::new(recorder("helper", seen.clone())))
        .build()
        .unwrap();
    let two = ModelOutput::for_tool_calls(
        "",
        "",
        vec![
            ToolCall::new("a", "transfer_to_helper", json!({})),
            ToolCall::new("b", "transfer_to_helper", json!({})),
        ],
    );
    let supervisor = react()
        .prompt(sys_only())
        .tools([tool])
        .model(Arc::new(ScriptedModel::new([two, submit("ok")])))
        .build()
        .unwrap();
    let out = run(&supervisor, "Q?", &[]).await.unwrap();
    assert_eq!(
        seen.lock().unwrap()[1],
        "assistant transfer_to_helper()",
        "only the called handoff is kept"
    );
    let tools: Vec<&str> = out
        .state
        .messages
        .iter()
        .filter_map(|m| m.as_tool())
        .filter_map(|t| t.tool_call_id.as_deref())
        .collect();
    assert_eq!(tools, vec!["a", "b"]);
}

fn chatty() -> Arc<dyn actuator_agent::Agent> {
    // Calls add forever, 10 tokens a turn.
    let model = FunctionModel::new("chatty", |_i, _t| {
        Ok(call("noop", json!({})).with_usage(ModelUsage::new(6, 4)))
    });
    let noop = actuator_tool_core::ToolDef::builder("noop")
        .description("Does nothing.")
        .handler(
            |_a: actuator_tool_core::ToolArgs, _c: actuator_tool_core::ToolContext| async {
                Ok::<_, actuator_tool_core::ToolFailure>("ok")
            },
        )
        .build()
        .unwrap();
    Arc::new(
        react()
            .name("looper")
            .description("Loops.")
            .model(Arc::new(model))
            .no_prompt()
            .tools([noop])
            .build()
            .unwrap(),
    )
}

#[tokio::test]
async fn limits_inside_a_handoff_are_fresh_per_handoff_and_outer_limits_end_the_run() {
    let tool = handoff(chatty()).limits([turn_limit(1)]).build().unwrap();
    let supervisor = react()
        .prompt(sys_only())
        .tools([tool])
        .model(Arc::new(ScriptedModel::new([
            call("transfer_to_looper", json!({})),
            call("transfer_to_looper", json!({})),
            submit("ok"),
        ])))
        .build()
        .unwrap();
    let out = run(&supervisor, "Q?", &[]).await.unwrap();
    // The looper's tool results come back as user messages (content_only); then the closing.
    let users: Vec<String> = out
        .state
        .messages
        .iter()
        .filter(|m| m.role() == "user")
        .map(|m| m.text())
        .collect();
    assert_eq!(
        users,
        vec![
            "Q?",
            "ok",
            "The looper exceeded its turn limit of 1.",
            "ok",
            "The looper exceeded its turn limit of 1."
        ],
        "each handoff gets a fresh limit"
    );

    // An outer limit hit inside the handoff ends the whole run, caught by its own scope.
    let tool = handoff(chatty()).limits([turn_limit(100)]).build().unwrap();
    let supervisor = react()
        .prompt(sys_only())
        .tools([tool])
        .model(Arc::new(ScriptedModel::new([
            call("transfer_to_looper", json!({})),
            submit("never"),
        ])))
        .build()
        .unwrap();
    let out = run(&supervisor, "Q?", &[token_limit(50)]).await.unwrap();
    let limit = out.limit.unwrap();
    assert_eq!(limit.kind, LimitKind::Token);
    assert!(
        out.state
            .messages
            .iter()
            .all(|m| !m.text().contains("exceeded its"))
    );
}

#[tokio::test]
async fn nested_handoffs_appear_as_nested_spans() {
    let inner = searcher();
    let middle = react()
        .name("middle")
        .description("Delegates.")
        .no_prompt()
        .tools([handoff(Arc::new(inner)).build().unwrap()])
        .model(Arc::new(ScriptedModel::new([
            call("transfer_to_searcher", json!({})),
            submit("inner done"),
        ])))
        .build()
        .unwrap();
    let top = react()
        .prompt(sys_only())
        .tools([handoff(Arc::new(middle)).build().unwrap()])
        .model(Arc::new(ScriptedModel::new([
            call("transfer_to_middle", json!({})),
            submit("all done"),
        ])))
        .build()
        .unwrap();
    let log = EventLog::new();
    let out = RunContext::with_events(log.clone())
        .run(&top, "Q?", ())
        .await
        .unwrap();
    let t = transcript(&out.state.messages);
    assert!(
        t.contains(&"assistant [middle] [searcher] The maximum searches is 5".to_owned()),
        "{t:?}"
    );
    assert!(
        t.contains(&"user The middle agent has completed its work.".to_owned()),
        "{t:?}"
    );
    // handoff spans nest: top agent > handoff middle > agent middle > handoff searcher > agent searcher.
    let mut parents = std::collections::HashMap::new();
    let mut names = Vec::new();
    for e in log.events() {
        if let Event::SpanBegin(s) = e {
            parents.insert(s.id.clone(), s.parent_id.clone());
            names.push((s.kind.clone(), s.name.clone(), s.id.clone()));
        }
    }
    let depth = |id: &str| {
        let mut d = 0;
        let mut cur = parents.get(id).cloned().flatten();
        while let Some(p) = cur {
            d += 1;
            cur = parents.get(&p).cloned().flatten();
        }
        d
    };
    let shape: Vec<(String, String, usize)> = names
        .iter()
        .map(|(k, n, id)| (k.clone(), n.clone(), depth(id)))
        .collect();
    assert_eq!(
        shape,
        vec![
            ("agent".into(), "react".into(), 0),
            ("handoff".into(), "middle".into(), 1),
            ("agent".into(), "middle".into(), 2),
            ("handoff".into(), "searcher".into(), 3),
            ("agent".into(), "searcher".into(), 4),
        ]
    );
}

#[test]
fn names_and_build_errors() {
    assert_eq!(sanitize_tool_name("Sub Agent"), "sub_agent");
    assert_eq!(sanitize_tool_name("  A  B\tC!? "), "a_b_c");
    let tool = handoff(Arc::new(searcher()))
        .tool_name("ask_searcher")
        .build()
        .unwrap();
    assert_eq!(tool.name(), "ask_searcher");
    let err = handoff(Arc::new(searcher()))
        .curry("nope", json!(1))
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Agent searcher does not have a 'nope' parameter."
    );
    let bare = agent_fn("bare", |s: AgentState, _cx, _a| async move { Ok(s) });
    let err = handoff(Arc::new(bare)).build().unwrap_err();
    assert!(matches!(
        err,
        AgentToolError::MissingDescription {
            function: "handoff",
            ..
        }
    ));
    assert!(
        err.to_string()
            .starts_with("Description not provided for agent 'bare'."),
        "{err}"
    );
    assert!(err.to_string().contains("handoff()"));
    // Curried parameters disappear from the schema.
    let tool = handoff(Arc::new(searcher()))
        .curry("max_searches", json!(2))
        .build()
        .unwrap();
    assert!(tool.parameters().properties.is_empty());
}

#[test]
fn as_tool_schema() {
    let tool = as_tool(Arc::new(searcher())).build().unwrap();
    insta::assert_json_snapshot!("as_tool_searcher", tool.info());
    assert_eq!(
        tool.parameters().names().collect::<Vec<_>>(),
        vec!["input", "max_searches"]
    );
    assert_eq!(tool.parameters().required, vec!["input"]);
    assert!(!tool.parallel());
    assert_eq!(tool.max_output(), Some(0));
    assert!(
        as_tool(Arc::new(searcher()))
            .parallel(true)
            .build()
            .unwrap()
            .parallel()
    );
    let err = as_tool(Arc::new(agent_fn(
        "bare",
        |s: AgentState, _cx, _a| async move { Ok(s) },
    )))
    .build()
    .unwrap_err();
    assert!(err.to_string().contains("as_tool()"));
}

#[tokio::test]
async fn as_tool_runs_in_isolation_and_turns_its_limits_into_tool_errors() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let tool = as_tool(Arc::new(recorder("helper", seen.clone())))
        .build()
        .unwrap();
    let parent = react()
        .prompt(sys_only())
        .tools([
            tool,
            as_tool(chatty())
                .limits([message_limit(3)])
                .build()
                .unwrap(),
        ])
        .model(Arc::new(ScriptedModel::new([
            call("helper", json!({"input": "Summarize."})),
            call("looper", json!({"input": "Go."})),
            submit("ok"),
        ])))
        .build()
        .unwrap();
    let out = run(&parent, "Parent task", &[]).await.unwrap();
    // No parent messages leak in.
    assert_eq!(*seen.lock().unwrap(), vec!["user Summarize."]);
    let t = transcript(&out.state.messages);
    // No sub-agent messages leak out: just the answer text (reasoning dropped).
    assert_eq!(
        t,
        vec![
            "system SYS",
            "user Parent task",
            "assistant helper(input='Summarize.')",
            "tool ",
            "assistant looper(input='Go.')",
            "tool error The tool exceeded its message limit of 3.",
            "assistant ok",
        ]
    );
}

#[tokio::test]
async fn as_tool_returns_the_final_text() {
    let answerer = agent_fn("answerer", |mut s: AgentState, _cx, _a| async move {
        let mut reply = actuator_model::ChatMessageAssistant::new(MessageContent::Parts(vec![
            Content::reasoning("r"),
            Content::text("42"),
        ]));
        reply.model = Some("m".into());
        s.messages.push(ChatMessage::Assistant(Box::new(reply)));
        Ok(s)
    })
    .with_description("Answers.");
    let tool = as_tool(Arc::new(answerer)).build().unwrap();
    let msgs = vec![
        ChatMessage::user("q"),
        ChatMessage::Assistant(Box::new(
            call("answerer", json!({"input": "?"})).choices[0]
                .message
                .clone(),
        )),
    ];
    let out = actuator_exec::execute_tools(
        &msgs,
        std::slice::from_ref(&tool),
        &RunContext::new().execute_options(),
    )
    .await
    .unwrap();
    assert_eq!(out.messages[0].text(), "42");

    // Without the caller's run context the agent would escape the run's limits and events:
    // the call is refused loudly, never run on a fresh context.
    let err = actuator_exec::execute_tools(&msgs, &[tool], &Default::default())
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("needs the RunContext of the run that calls it"),
        "{err}"
    );
}

#[tokio::test]
async fn as_solver_writes_back_on_success_error_and_limit() {
    let cx = RunContext::new();
    // Success.
    let solver = as_solver(Arc::new(searcher())).build().unwrap();
    let mut task = TaskState {
        messages: vec![ChatMessage::user("Q?")],
        ..TaskState::default()
    };
    solver.solve(&mut task, &cx).await.unwrap();
    assert_eq!(
        transcript(&task.messages),
        vec!["user Q?", "assistant The maximum searches is 5"]
    );
    assert_eq!(task.output.completion(), "The maximum searches is 5");

    // Limit: stops the task, partial work written back.
    let solver = as_solver(chatty()).limits([turn_limit(2)]).build().unwrap();
    let mut task = TaskState {
        messages: vec![ChatMessage::user("Q?")],
        ..TaskState::default()
    };
    solver.solve(&mut task, &cx).await.unwrap();
    assert!(task.completed);
    assert_eq!(task.messages.len(), 5);

    // Error: the error returns, the partial work is written back.
    let failing = agent_fn("failing", |mut s: AgentState, _cx, _a| async move {
        s.messages.push(ChatMessage::assistant("halfway"));
        Err(actuator_agent::AgentError::with_state(
            actuator_agent::AgentErrorKind::Failed("broke".into()),
            s,
        ))
    });
    let solver = as_solver(Arc::new(failing)).build().unwrap();
    let mut task = TaskState {
        messages: vec![ChatMessage::user("Q?")],
        ..TaskState::default()
    };
    let err = solver.solve(&mut task, &cx).await.unwrap_err();
    assert_eq!(err.to_string(), "broke");
    assert_eq!(
        transcript(&task.messages),
        vec!["user Q?", "assistant halfway"]
    );
    assert_eq!(task.output.completion(), "halfway");
}

#[test]
fn as_solver_requires_required_parameters() {
    let params = ToolParams::from_value(&json!({
        "properties": {
            "topic": {"type": "string", "description": "Topic."},
            "depth": {"type": ["integer", "null"], "description": "Depth."}
        },
        "required": ["topic"]
    }))
    .unwrap();
    let agent = Arc::new(
        agent_fn("researcher", |s: AgentState, _cx, _a| async move { Ok(s) })
            .with_parameters(params),
    );
    let err = as_solver(agent.clone()).build().unwrap_err();
    assert_eq!(
        err.to_string(),
        "To use the researcher agent as a solver you must pass a value for the agent's required 'topic' parameter to the as_solver() function."
    );
    // Optional parameters need not be curried (D13).
    assert!(
        as_solver(agent)
            .curry("topic", json!("rust"))
            .build()
            .is_ok()
    );
}

#[test]
fn task_store_is_typed() {
    let mut task = TaskState::default();
    task.store.set("count", &3u32).unwrap();
    assert_eq!(task.store.get::<u32>("count"), Some(3));
    assert_eq!(task.store.get::<String>("count"), None);
    assert!(!task.store.contains("other"));
    let back: TaskState = serde_json::from_value(serde_json::to_value(&task).unwrap()).unwrap();
    assert_eq!(back, task);
}

#[tokio::test]
async fn a_hand_written_agent_ends_cleanly_on_an_outer_limit_hit_inside_a_tool() {
    // The inner agent generates twice; the outer run allows one turn. The limit is hit inside
    // the as_tool call, travels as ExecError::Limit, and the outer run catches its own limit
    // with the partial state, exactly as react's runs do.
    let inner = react()
        .name("worker")
        .description("Works.")
        .model(Arc::new(ScriptedModel::new([
            call("noop", json!({})),
            submit("x"),
        ])))
        .build()
        .unwrap();
    let tool = as_tool(Arc::new(inner)).build().unwrap();
    let outer = agent_fn("outer", move |mut state: AgentState, cx: RunContext, _a| {
        let tool = tool.clone();
        async move {
            state.messages.push(ChatMessage::Assistant(Box::new(
                call("worker", json!({"input": "go"})).choices[0]
                    .message
                    .clone(),
            )));
            // Default options: the context adds itself, its sink and its resources.
            let result = cx
                .execute_tools(&state.messages, &[tool], &Default::default())
                .await
                .map_err(|e| e.or_state(&state))?;
            state.messages.extend(result.messages);
            Ok(state)
        }
    });
    let out = run(&outer, "q", &[turn_limit(1)]).await.unwrap();
    let limit = out.limit.expect("the outer run catches its own limit");
    assert_eq!(limit.kind, LimitKind::Turn);
    assert_eq!(out.state.messages.len(), 2, "the partial state is kept");
}

#[tokio::test]
async fn a_handoff_without_the_run_context_is_a_loud_error() {
    let agent = react()
        .name("helper")
        .description("Helps.")
        .model(Arc::new(ScriptedModel::new([submit("x")])))
        .build()
        .unwrap();
    let tool = handoff(Arc::new(agent)).build().unwrap();
    assert_eq!(
        tool.kind(),
        actuator_tool_core::ToolKind::ConversationTaking
    );
    let msgs = vec![
        ChatMessage::user("q"),
        ChatMessage::Assistant(Box::new(
            call("transfer_to_helper", json!({})).choices[0]
                .message
                .clone(),
        )),
    ];
    let err = actuator_exec::execute_tools(&msgs, std::slice::from_ref(&tool), &Default::default())
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("Tool 'transfer_to_helper' runs an agent, so it needs the RunContext"),
        "{err}"
    );
    // Called directly, a conversation-taking tool says where it can run.
    let err = tool
        .call(
            json!({}),
            actuator_tool_core::ToolContext::new("c", "transfer_to_helper"),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("takes the conversation"), "{err}");
    // With the context, it runs.
    let out = actuator_exec::execute_tools(&msgs, &[tool], &RunContext::new().execute_options())
        .await
        .unwrap();
    assert_eq!(
        out.messages[0].text(),
        "Successfully transferred to helper."
    );
}

#[tokio::test]
async fn as_solver_writes_back_an_explicit_output_without_text_or_calls() {
    // The agent sets an output with metadata only: it still replaces the task's output.
    let agent = agent_fn("tagger", |mut s: AgentState, _cx, _a| async move {
        s.set_output(ModelOutput {
            model: "tagger-model".into(),
            metadata: Some(json!({"tag": "done"})),
            ..ModelOutput::default()
        });
        Ok(s)
    });
    let solver = as_solver(Arc::new(agent)).build().unwrap();
    let mut task = TaskState {
        messages: vec![ChatMessage::user("Q?")],
        output: ModelOutput::from_content("old", "stale"),
        ..TaskState::default()
    };
    solver.solve(&mut task, &RunContext::new()).await.unwrap();
    assert_eq!(task.output.model, "tagger-model");
    assert_eq!(task.output.metadata, Some(json!({"tag": "done"})));
    assert_eq!(task.output.completion(), "");
}

#[test]
fn a_display_name_without_usable_characters_falls_back_to_the_agents_own_name() {
    let researcher: Arc<dyn actuator_agent::Agent> = Arc::new(searcher());
    let emoji = actuator_agent::agent_with(researcher, Some("🔍"), Some("Searches."));
    assert_eq!(actuator_agent::Agent::name(&emoji), "🔍");
    let tool = handoff(Arc::new(emoji.clone())).build().unwrap();
    assert_eq!(tool.name(), "transfer_to_searcher");
    assert_eq!(as_tool(Arc::new(emoji)).build().unwrap().name(), "searcher");
    // Only when neither name has usable characters is it `agent`.
    let nameless =
        agent_fn("✨", |s: AgentState, _cx, _a| async move { Ok(s) }).with_description("Sparkles.");
    assert_eq!(
        handoff(Arc::new(nameless)).build().unwrap().name(),
        "transfer_to_agent"
    );
}

/// A reviewer that ends the run at the first result it reads.
struct Stopper;

impl actuator_exec::Reviewer for Stopper {
    fn review<'a>(
        &'a self,
        _r: actuator_exec::ReviewRequest<'a>,
    ) -> actuator_model::BoxFuture<'a, actuator_exec::Review> {
        Box::pin(async { actuator_exec::Review::terminate() })
    }
}

fn reviewed_looper() -> Arc<dyn actuator_agent::Agent> {
    let noop = actuator_tool_core::ToolDef::builder("noop")
        .description("Does nothing.")
        .handler(
            |_a: actuator_tool_core::ToolArgs, _c: actuator_tool_core::ToolContext| async {
                Ok::<_, actuator_tool_core::ToolFailure>("ok")
            },
        )
        .build()
        .unwrap();
    Arc::new(
        react()
            .name("looper")
            .description("Loops.")
            .model(Arc::new(ScriptedModel::new([call("noop", json!({}))])))
            .no_prompt()
            .tools([noop])
            .review([actuator_exec::ReviewPolicy::new(Arc::new(Stopper), ["noop"]).unwrap()])
            .build()
            .unwrap(),
    )
}

#[tokio::test]
async fn a_reviewers_termination_inside_a_sub_agent_ends_the_whole_run() {
    for (tool, args) in [
        (
            as_tool(reviewed_looper()).build().unwrap(),
            json!({"input": "go"}),
        ),
        (handoff(reviewed_looper()).build().unwrap(), json!({})),
    ] {
        let name = tool.name().to_owned();
        let supervisor = react()
            .prompt(sys_only())
            .tools([tool])
            .model(Arc::new(ScriptedModel::new([
                call(&name, args),
                submit("never"),
            ])))
            .build()
            .unwrap();
        let err = run(&supervisor, "Q?", &[]).await.unwrap_err();
        assert_eq!(
            err.termination(),
            Some("Tool result reviewer requested termination."),
            "{name}: {err}"
        );
    }
}

/// A reviewer that asks a model of its own (1000 tokens a question) before letting a result
/// through.
struct ModelMonitor(Arc<dyn actuator_model::Model>);

impl actuator_exec::Reviewer for ModelMonitor {
    fn review<'a>(
        &'a self,
        r: actuator_exec::ReviewRequest<'a>,
    ) -> actuator_model::BoxFuture<'a, actuator_exec::Review> {
        let question = vec![ChatMessage::user(format!(
            "Is this safe? {}",
            r.result.text()
        ))];
        Box::pin(async move {
            let answer = self
                .0
                .generate(actuator_model::GenerateRequest::new(&question))
                .await
                .unwrap();
            assert_eq!(answer.usage.unwrap().total_tokens, 1000);
            actuator_exec::Review::proceed()
        })
    }
}

#[tokio::test]
async fn a_reviewers_model_calls_do_not_count_against_the_agents_limits() {
    let monitor_model = FunctionModel::new("monitor", |_i, _t| {
        Ok(ModelOutput::from_content("monitor", "safe").with_usage(ModelUsage::new(900, 100)))
    });
    let noop = actuator_tool_core::ToolDef::builder("noop")
        .description("Does nothing.")
        .handler(
            |_a: actuator_tool_core::ToolArgs, _c: actuator_tool_core::ToolContext| async {
                Ok::<_, actuator_tool_core::ToolFailure>("ok")
            },
        )
        .build()
        .unwrap();
    let agent = react()
        .prompt(sys_only())
        .tools([noop])
        .model(Arc::new(FunctionModel::new("agent", |i, _t| {
            let out = if i.iter().any(|m| m.role() == "tool") {
                submit("done")
            } else {
                call("noop", json!({}))
            };
            Ok(out.with_usage(ModelUsage::new(6, 4)))
        })))
        .review([actuator_exec::ReviewPolicy::new(
            Arc::new(ModelMonitor(Arc::new(monitor_model))),
            ["noop"],
        )
        .unwrap()])
        .build()
        .unwrap();
    // The agent's own two generations cost 20 tokens; the monitor's 1000 are not the agent's.
    let out = run(&agent, "Q?", &[token_limit(100)]).await.unwrap();
    assert!(out.limit.is_none(), "{:?}", out.limit);
    assert_eq!(out.usage.tokens, 20);
}
