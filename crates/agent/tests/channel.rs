//! An operator steps into a running react agent through its channel: messages at the top of
//! the next turn, interrupts of a generation or of tool calls, an agent that waits for its
//! task, questions the agent asks back (`ask_user`, `notify_user`), and the transcript.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use actuator_agent::channel::{
    AskUserOptions, CANCELLED_BY_USER, OperatorRequest, ask_user, ask_user_with, notify_user,
};
use actuator_agent::limits::time_limit;
use actuator_agent::{AgentChannel, RunOptions, react, run};
use actuator_events::{Event, EventLog, InterruptSource, Interrupted};
use actuator_model::{
    BoxFuture, ChatMessage, FunctionModel, GenerateRequest, MessageSource, Model, ModelError,
    ModelOutput, ScriptedModel, ToolCall,
};
use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure, ToolParams};
use common::submit;
use serde_json::json;

/// A tool that sleeps for `ms`, and says when it started.
fn sleeper(started: Arc<tokio::sync::Notify>) -> ToolDef {
    ToolDef::builder("wait")
        .description("Waits.")
        .parameters(
            ToolParams::from_value(&json!({
                "properties": {"ms": {"type": "integer", "description": "How long."}},
                "required": ["ms"]
            }))
            .unwrap(),
        )
        .handler(move |mut a: ToolArgs, _c: ToolContext| {
            let started = started.clone();
            async move {
                let ms: u64 = a.required("ms")?;
                started.notify_one();
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok::<_, ToolFailure>(format!("waited {ms}"))
            }
        })
        .build()
        .unwrap()
}

fn operator_messages(messages: &[ChatMessage]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m.source() == Some(MessageSource::Operator))
        .map(ChatMessage::text)
        .collect()
}

#[tokio::test]
async fn an_operator_message_reaches_the_model_at_the_top_of_the_next_turn() {
    let channel = AgentChannel::new();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let model = {
        let (channel, seen) = (channel.clone(), seen.clone());
        FunctionModel::new("mockllm/model", move |messages, _tools| {
            seen.lock().unwrap().push(messages.to_vec());
            Ok(match seen.lock().unwrap().len() {
                1 => {
                    // The operator writes while the first turn runs.
                    channel.post("Please also mention the moon.").unwrap();
                    channel.post("And be brief.").unwrap();
                    ModelOutput::for_tool_calls(
                        "mockllm/model",
                        "",
                        vec![ToolCall::new("c1", "wait", json!({"ms": 1}))],
                    )
                }
                _ => submit("The moon."),
            })
        })
    };
    let agent = react()
        .no_prompt()
        .tools([sleeper(Arc::default())])
        .model(model)
        .build()
        .unwrap();
    let log = EventLog::new();
    let out = run(
        &agent,
        "Answer.",
        RunOptions::new()
            .resource(channel.clone())
            .events(log.clone()),
    )
    .await
    .unwrap();
    assert_eq!(out.state.output().completion(), "The moon.");
    // Both messages, joined, after the first turn's tool result and before the second turn.
    let second = &seen.lock().unwrap()[1];
    assert_eq!(
        operator_messages(second),
        ["Please also mention the moon.\n\nAnd be brief."]
    );
    assert!(matches!(second.last(), Some(ChatMessage::User(_))));
    // Each is its own event.
    let notes: Vec<String> = log
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Info(i) if i.source.as_deref() == Some("operator") => Some(i.message),
            _ => None,
        })
        .collect();
    assert_eq!(notes, ["Please also mention the moon.", "And be brief."]);
    // The operator reads the transcript so far.
    assert!(
        channel
            .transcript()
            .iter()
            .any(|m| m.text() == "Please also mention the moon.\n\nAnd be brief.")
    );
}

#[tokio::test]
async fn an_interrupt_cancels_a_long_tool_call_and_the_operator_redirects() {
    let channel = AgentChannel::new();
    let started = Arc::new(tokio::sync::Notify::new());
    let agent = react()
        .no_prompt()
        .tools([sleeper(started.clone())])
        .model(Arc::new(ScriptedModel::new([
            ModelOutput::for_tool_calls(
                "",
                "",
                vec![ToolCall::new("slow", "wait", json!({"ms": 60_000}))],
            ),
            submit("42"),
        ])))
        .build()
        .unwrap();
    let operator = {
        let channel = channel.clone();
        tokio::spawn(async move {
            started.notified().await;
            channel.interrupt();
            tokio::time::sleep(Duration::from_millis(20)).await;
            channel.post("Stop waiting and answer 42.").unwrap();
        })
    };
    let log = EventLog::new();
    let began = Instant::now();
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        run(
            &agent,
            "Go.",
            RunOptions::new()
                .resource(channel.clone())
                .events(log.clone()),
        ),
    )
    .await
    .expect("the interrupt did not cut the call short")
    .unwrap();
    operator.await.unwrap();
    assert!(began.elapsed() < Duration::from_secs(30));
    assert_eq!(out.state.output().completion(), "42");
    let messages = &out.state.messages;
    let tool = messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::Tool(t) => Some(t),
            _ => None,
        })
        .unwrap();
    assert_eq!(tool.tool_call_id.as_deref(), Some("slow"));
    assert_eq!(tool.content.text(), CANCELLED_BY_USER);
    assert_eq!(operator_messages(messages), ["Stop waiting and answer 42."]);
    let interrupts: Vec<_> = log
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Interrupt(i) => Some(*i),
            _ => None,
        })
        .collect();
    assert_eq!(interrupts.len(), 1);
    assert_eq!(interrupts[0].source, InterruptSource::UserCancel);
    assert_eq!(interrupts[0].interrupted, Interrupted::ToolCall);
    assert_eq!(
        interrupts[0].interrupted_tool_call_id.as_deref(),
        Some("slow")
    );
}

/// A model whose first generation takes a minute.
struct SlowFirst {
    calls: AtomicUsize,
    started: Arc<tokio::sync::Notify>,
}

impl Model for SlowFirst {
    fn name(&self) -> &str {
        "mockllm/slow"
    }
    fn generate<'a>(
        &'a self,
        _request: GenerateRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelOutput, ModelError>> {
        Box::pin(async move {
            if self.calls.fetch_add(1, Ordering::SeqCst) == 0 {
                self.started.notify_one();
                tokio::time::sleep(Duration::from_secs(60)).await;
            }
            Ok(submit("redirected"))
        })
    }
}

#[tokio::test]
async fn an_interrupt_cancels_a_generation() {
    let channel = AgentChannel::new();
    let started = Arc::new(tokio::sync::Notify::new());
    let model = Arc::new(SlowFirst {
        calls: AtomicUsize::new(0),
        started: started.clone(),
    });
    let agent = react().no_prompt().model(model.clone()).build().unwrap();
    {
        let channel = channel.clone();
        tokio::spawn(async move {
            started.notified().await;
            channel.post("Never mind, just say redirected.").unwrap();
            channel.interrupt();
        });
    }
    let log = EventLog::new();
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        run(
            &agent,
            "Think hard.",
            RunOptions::new().resource(channel).events(log.clone()),
        ),
    )
    .await
    .expect("the interrupt did not cut the generation short")
    .unwrap();
    assert_eq!(out.state.output().completion(), "redirected");
    assert_eq!(model.calls.load(Ordering::SeqCst), 2);
    let interrupted: Vec<Interrupted> = log
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Interrupt(i) => Some(i.interrupted),
            _ => None,
        })
        .collect();
    assert_eq!(interrupted, [Interrupted::Generate]);
}

#[tokio::test]
async fn an_agent_without_a_task_waits_for_the_operator_within_its_time_limit() {
    // Given its task later: it waits, then works on it.
    let channel = AgentChannel::new();
    let calls = Arc::new(AtomicUsize::new(0));
    let model = {
        let calls = calls.clone();
        FunctionModel::new("mockllm/model", move |messages, _tools| {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok(submit(&format!(
                "asked: {}",
                messages.last().unwrap().text()
            )))
        })
    };
    let agent = react().no_prompt().model(model).build().unwrap();
    let poster = {
        let (channel, calls) = (channel.clone(), calls.clone());
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert_eq!(
                calls.load(Ordering::SeqCst),
                0,
                "the model ran without a task"
            );
            channel.post("What is 2 + 2?").unwrap();
        })
    };
    let out = run(
        &agent,
        Vec::<ChatMessage>::new(),
        RunOptions::new().resource(channel),
    )
    .await
    .unwrap();
    poster.await.unwrap();
    assert_eq!(out.state.output().completion(), "asked: What is 2 + 2?");

    // Never given one: the time limit ends the wait.
    let agent = react()
        .no_prompt()
        .model(Arc::new(ScriptedModel::new([submit("never")])))
        .build()
        .unwrap();
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        run(
            &agent,
            Vec::<ChatMessage>::new(),
            RunOptions::new()
                .resource(AgentChannel::new())
                .limits([time_limit(Duration::from_millis(200))]),
        ),
    )
    .await
    .expect("the wait for the operator outlived the time limit")
    .unwrap();
    assert!(out.limit.is_some(), "{:?}", out.end);
}

#[tokio::test]
async fn ask_user_is_answered_declined_or_times_out_and_notify_user_reaches_the_operator() {
    let channel = AgentChannel::new();
    let agent = |ask: ToolDef| {
        react()
            .no_prompt()
            .tools([ask, notify_user().unwrap()])
            .model(Arc::new(ScriptedModel::new([
                ModelOutput::for_tool_calls(
                    "",
                    "",
                    vec![ToolCall::new(
                        "n",
                        "notify_user",
                        json!({"title": "Halfway", "message": "Tests pass."}),
                    )],
                ),
                ModelOutput::for_tool_calls(
                    "",
                    "",
                    vec![ToolCall::new(
                        "q",
                        "ask_user",
                        json!({"message": "Deploy?", "schema": {"type": "object", "properties": {"proceed": {"type": "boolean"}}}}),
                    )],
                ),
                submit("done"),
            ])))
            .build()
            .unwrap()
    };
    let tool_text = |messages: &[ChatMessage], id: &str| {
        messages
            .iter()
            .find_map(|m| match m {
                ChatMessage::Tool(t) if t.tool_call_id.as_deref() == Some(id) => Some((
                    t.content.text(),
                    t.error.as_ref().map(|e| e.message.clone()),
                )),
                _ => None,
            })
            .unwrap()
    };

    // Answered.
    let operator = {
        let channel = channel.clone();
        tokio::spawn(async move {
            let notice = channel.next_request().await;
            let OperatorRequest::Notice { message } = notice else {
                panic!("{notice:?}")
            };
            assert_eq!(message, "Halfway\n\nTests pass.");
            let question = channel.next_request().await;
            let OperatorRequest::Question {
                id,
                message,
                schema,
            } = question
            else {
                panic!("{question:?}")
            };
            assert_eq!(message, "Deploy?");
            assert!(schema.is_some());
            channel
                .answer(id, Some(r#"{"proceed": true}"#.to_owned()))
                .unwrap();
            // A question answered twice is refused.
            assert!(channel.answer(id, None).is_err());
        })
    };
    let out = run(
        &agent(ask_user().unwrap()),
        "Go.",
        RunOptions::new().resource(channel.clone()),
    )
    .await
    .unwrap();
    operator.await.unwrap();
    assert_eq!(
        tool_text(&out.state.messages, "q"),
        (r#"{"proceed": true}"#.to_owned(), None)
    );
    assert_eq!(tool_text(&out.state.messages, "n").0, "Notification sent.");

    // Declined.
    let operator = {
        let channel = channel.clone();
        tokio::spawn(async move {
            loop {
                if let OperatorRequest::Question { id, .. } = channel.next_request().await {
                    channel.answer(id, None).unwrap();
                    return;
                }
            }
        })
    };
    let out = run(
        &agent(ask_user().unwrap()),
        "Go.",
        RunOptions::new().resource(channel.clone()),
    )
    .await
    .unwrap();
    operator.await.unwrap();
    let (_, error) = tool_text(&out.state.messages, "q");
    assert_eq!(error.as_deref(), Some(actuator_agent::channel::DECLINED));

    // Nobody answers: the default after the timeout.
    let ask = ask_user_with(
        AskUserOptions::new()
            .timeout(Duration::from_millis(50))
            .default_answer(r#"{"proceed": false}"#),
    )
    .unwrap();
    let out = run(
        &agent(ask),
        "Go.",
        RunOptions::new().resource(AgentChannel::new()),
    )
    .await
    .unwrap();
    assert_eq!(
        tool_text(&out.state.messages, "q"),
        (r#"{"proceed": false}"#.to_owned(), None)
    );

    // No operator at all: the model is told to decide.
    let out = run(&agent(ask_user().unwrap()), "Go.", RunOptions::new())
        .await
        .unwrap();
    let (_, error) = tool_text(&out.state.messages, "q");
    assert_eq!(error.as_deref(), Some(actuator_agent::channel::NO_OPERATOR));
}

#[test]
fn a_channel_is_taken_up_by_one_agent_at_a_time_and_bounds_what_it_carries() {
    let channel = AgentChannel::new();
    let outer = channel.bind().unwrap();
    assert!(channel.bind().is_none(), "an inner agent does not take it");
    drop(outer);
    assert!(channel.bind().is_some());

    let too_long = "x".repeat(actuator_agent::channel::MAX_MESSAGE_BYTES + 1);
    assert!(channel.post(too_long).is_err());
    for _ in 0..actuator_agent::channel::MAX_QUEUED {
        channel.post("hi").unwrap();
    }
    assert_eq!(
        channel.post("one more"),
        Err(actuator_agent::channel::ChannelError::Full)
    );
}

/// One JSON line each way on the operator's socket.
#[cfg(unix)]
struct Operator {
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::net::unix::OwnedReadHalf>>,
    write: tokio::net::unix::OwnedWriteHalf,
}

#[cfg(unix)]
impl Operator {
    async fn connect(path: &std::path::Path) -> Self {
        use tokio::io::AsyncBufReadExt;
        let (read, write) = tokio::net::UnixStream::connect(path)
            .await
            .unwrap()
            .into_split();
        Operator {
            lines: tokio::io::BufReader::new(read).lines(),
            write,
        }
    }

    async fn send(&mut self, line: &str) {
        use tokio::io::AsyncWriteExt;
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
    }

    async fn read(&mut self) -> serde_json::Value {
        let line = tokio::time::timeout(Duration::from_secs(20), self.lines.next_line())
            .await
            .expect("no line from the agent's socket")
            .unwrap()
            .expect("the socket closed");
        serde_json::from_str(&line).unwrap()
    }
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_in_another_process_steps_in_over_the_socket() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.sock");
    let channel = AgentChannel::new();
    let server = actuator_agent::channel::serve_unix(channel.clone(), &path).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the socket is its owner's only");
    // A file already there is never replaced.
    assert!(actuator_agent::channel::serve_unix(channel.clone(), &path).is_err());
    // The private directory the socket was made in is gone, after success and failure.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["agent.sock"]);

    let started = Arc::new(tokio::sync::Notify::new());
    let agent = react()
        .no_prompt()
        .tools([sleeper(started.clone()), ask_user().unwrap()])
        .model(Arc::new(ScriptedModel::new([
            ModelOutput::for_tool_calls(
                "",
                "",
                vec![ToolCall::new(
                    "q",
                    "ask_user",
                    json!({"message": "Which file?"}),
                )],
            ),
            ModelOutput::for_tool_calls(
                "",
                "",
                vec![ToolCall::new("slow", "wait", json!({"ms": 60_000}))],
            ),
            submit("42"),
        ])))
        .build()
        .unwrap();
    let running = tokio::spawn({
        let channel = channel.clone();
        async move {
            run(&agent, "Go.", RunOptions::new().resource(channel))
                .await
                .unwrap()
        }
    });

    let mut op = Operator::connect(&path).await;
    // The agent's question comes unasked; the operator answers it.
    let question = op.read().await;
    assert_eq!(question["op"], "question", "{question}");
    assert_eq!(question["message"], "Which file?");
    op.send(&format!(
        "{{\"op\": \"answer\", \"id\": {}, \"text\": \"main.rs\"}}",
        question["id"]
    ))
    .await;
    assert_eq!(op.read().await["op"], "ok");
    // A line that is no command is answered with why.
    op.send("{\"op\": \"dance\"}").await;
    let reply = op.read().await;
    assert_eq!(reply["op"], "error", "{reply}");
    // Interrupt the long call, read the transcript, redirect.
    started.notified().await;
    op.send("{\"op\": \"interrupt\"}").await;
    assert_eq!(op.read().await["op"], "ok");
    op.send("{\"op\": \"transcript\"}").await;
    let transcript = op.read().await;
    assert_eq!(transcript["op"], "transcript");
    assert!(
        transcript["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["content"] == "main.rs"),
        "{transcript}"
    );
    op.send("{\"op\": \"post\", \"text\": \"Answer 42.\"}")
        .await;
    assert_eq!(op.read().await["op"], "ok");

    let out = tokio::time::timeout(Duration::from_secs(30), running)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(out.state.output().completion(), "42");
    assert_eq!(operator_messages(&out.state.messages), ["Answer 42."]);

    // An over-long line ends that operator's connection, not the server.
    let Operator {
        mut lines,
        mut write,
    } = Operator::connect(&path).await;
    let huge = "x".repeat(actuator_agent::channel::MAX_LINE_BYTES + 10);
    // The server stops reading part way, so the write may fail: only the reply matters.
    let writing = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        let _ = write.write_all(huge.as_bytes()).await;
        write
    });
    let reply = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(reply.contains("\"error\""), "{reply}");
    drop(writing.await);
    drop(server);
    assert!(!path.exists(), "the socket is removed with its server");
}
