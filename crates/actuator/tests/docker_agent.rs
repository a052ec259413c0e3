//! The built-in tools unchanged on a Docker sandbox: a react agent with `bash`, `python`,
//! `text_editor` and `bash_session` in a compose project, its commands as a non-root user;
//! and an evaluation whose samples each get a compose project of their own, its log read
//! back by the reference's own reader, which names the sandbox as it does for its own.
//!
//! Docker comes from `scripts/setup-test-env`; without it the tests skip with a note, except
//! with `CI` set.

#![cfg(all(feature = "docker", feature = "eval"))]
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

use std::sync::Arc;

use actuator::agent::{RunOptions, limits::turn_limit, react, run};
use actuator::eval::scorers::{IncludesOptions, includes};
use actuator::eval::{Dataset, EvalOptions, Sample, Task, eval};
use actuator::model::{ChatMessage, FunctionModel, ModelOutput, ScriptedModel, ToolCall};
use actuator::multi::as_solver;
use actuator::sandbox::docker::{ComposeConfig, ComposeOptions, DockerSandbox};
use actuator::sandbox::{Sandbox, SandboxHandle, testing};
use actuator::tools::{
    BashOptions, BashSessionOptions, ShellOptions, bash, bash_session, python, text_editor,
};
use serde_json::{Value, json};

fn calls(calls: &[(&str, &str, Value)]) -> ModelOutput {
    ModelOutput::for_tool_calls(
        "scripted",
        "",
        calls
            .iter()
            .map(|(id, f, args)| ToolCall::new(*id, *f, args.clone()))
            .collect(),
    )
}

/// The tool results of a conversation, by call id.
fn result(messages: &[ChatMessage], id: &str) -> String {
    messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::Tool(t) if t.tool_call_id.as_deref() == Some(id) => Some(t.content.text()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {id}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_built_in_tools_work_unchanged_in_a_compose_sandbox_as_a_non_root_user() {
    let Some(_lock) = testing::docker_engine(false).unwrap() else {
        return;
    };
    let sandbox = DockerSandbox::builder(ComposeConfig::generic())
        .options(ComposeOptions::new("tools-test"))
        .user("nobody")
        .build()
        .await
        .unwrap();
    let sandbox = Arc::new(sandbox);
    let model = ScriptedModel::named(
        "mockllm/scripted",
        [
            calls(&[
                (
                    "b1",
                    "bash",
                    json!({"command": "id -un; echo hi > /tmp/note; cat /tmp/note"}),
                ),
                ("p1", "python", json!({"code": "print(6 * 7)"})),
                (
                    "e1",
                    "text_editor",
                    json!({"command": "create", "path": "/tmp/plan.txt", "file_text": "step one\nstep two\n"}),
                ),
                ("r1", "bash", json!({"command": "touch /root/forbidden"})),
            ]),
            calls(&[
                (
                    "e2",
                    "text_editor",
                    json!({"command": "view", "path": "/tmp/plan.txt"}),
                ),
                (
                    "s1",
                    "bash_session",
                    json!({"action": "type_submit", "input": "echo session-$((40 + 2))"}),
                ),
            ]),
            calls(&[("done", "submit", json!({"answer": "done"}))]),
        ],
    );
    let agent = react()
        .tools([
            bash(BashOptions::new()).unwrap(),
            python(ShellOptions::new()).unwrap(),
            text_editor(ShellOptions::new()).unwrap(),
            bash_session(BashSessionOptions::new()).unwrap(),
        ])
        .model(Arc::new(model))
        .build()
        .unwrap();
    let handle = SandboxHandle::from_arc(sandbox.clone());
    let result_state = run(
        &agent,
        "Take notes.",
        RunOptions::new().resource(handle).limits([turn_limit(10)]),
    )
    .await
    .unwrap();
    let messages = &result_state.state.messages;
    assert_eq!(result(messages, "b1"), "nobody\nhi\n");
    assert_eq!(result(messages, "p1"), "42\n");
    assert!(
        result(messages, "e1").contains("/tmp/plan.txt"),
        "{}",
        result(messages, "e1")
    );
    assert!(
        result(messages, "r1").contains("Permission denied"),
        "a non-root user: {}",
        result(messages, "r1")
    );
    let view = result(messages, "e2");
    assert!(
        view.contains("step one") && view.contains("step two"),
        "{view}"
    );
    assert!(
        result(messages, "s1").contains("session-42"),
        "{}",
        result(messages, "s1")
    );
    assert_eq!(result_state.state.output().completion(), "done");
    sandbox.cleanup().await.unwrap();
}

/// The reference's Python with inspect_ai, from `scripts/setup-test-env`.
fn inspect_python() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().unwrap();
    let python = exe
        .ancestors()
        .nth(3)
        .unwrap()
        .join("test-env/venv-inspect/bin/python");
    if python.exists() {
        return Some(python);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set and {} is missing (run scripts/setup-test-env)",
        python.display()
    );
    eprintln!(
        "skipped the reference's reading: {} is missing",
        python.display()
    );
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_evaluation_gives_each_sample_a_compose_project_and_its_log_names_it() {
    let Some(_lock) = testing::docker_engine(false).unwrap() else {
        return;
    };
    // Each sample looks for a mark an earlier sample would have left, then leaves one.
    let model = FunctionModel::new("mockllm/model", |messages, _tools| {
        let last = messages.iter().rev().find_map(|m| match m {
            ChatMessage::Tool(t) => Some(t.content.text()),
            _ => None,
        });
        Ok(match last {
            None => calls(&[(
                "b",
                "bash",
                json!({"command": "cat /tmp/mark 2>/dev/null || echo fresh; echo x > /tmp/mark"}),
            )]),
            Some(out) => calls(&[("s", "submit", json!({"answer": out.trim()}))]),
        })
    });
    let agent = react()
        .tools([bash(BashOptions::new()).unwrap()])
        .model(Arc::new(model))
        .build()
        .unwrap();
    let task = Task::new(
        "docker_eval",
        Dataset::new((0..3).map(|i| Sample::new(format!("sample {i}"), "fresh"))),
        Arc::new(as_solver(Arc::new(agent)).build().unwrap()),
    )
    .scorer(includes(IncludesOptions::default()))
    .docker(ComposeConfig::generic());
    let dir = tempfile::tempdir().unwrap();
    let run = eval(&task, EvalOptions::new().max_samples(2).log_dir(dir.path()))
        .await
        .unwrap();
    assert_eq!(run.log.status, "success", "{run}");
    assert_eq!(
        run.score("includes").unwrap().metric("accuracy"),
        Some(1.0),
        "every sample's sandbox was fresh"
    );
    let Some(python) = inspect_python() else {
        return;
    };
    let script = r#"
import json, sys
from inspect_ai.log import read_eval_log
log = read_eval_log(sys.argv[1])
print(json.dumps({
    "eval": log.eval.sandbox.model_dump() if log.eval.sandbox else None,
    "samples": [s.sandbox.model_dump() if s.sandbox else None for s in log.samples],
    "tools": sum(1 for s in log.samples for e in s.events if e.event == "tool"),
}))
"#;
    let out = std::process::Command::new(python)
        .args(["-c", script])
        .arg(run.location.as_ref().unwrap())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read: Value = serde_json::from_slice(&out.stdout).unwrap();
    let spec = json!({"type": "docker", "config": null});
    assert_eq!(read["eval"], spec);
    assert_eq!(read["samples"], json!([spec, spec, spec]));
    assert_eq!(read["tools"], 6, "a bash call and a submit per sample");
}

/// Panics in every sample, after its sandbox is up.
struct Panics;
impl actuator::multi::Solver for Panics {
    fn solve<'a>(
        &'a self,
        _state: &'a mut actuator::multi::TaskState,
        _cx: &'a actuator::agent::RunContext,
    ) -> actuator::model::BoxFuture<'a, Result<(), actuator::agent::AgentError>> {
        Box::pin(async { panic!("the solver broke") })
    }
}

/// The compose projects (any state) whose names start with `prefix`.
fn projects(prefix: &str) -> Vec<String> {
    let out = std::process::Command::new("docker")
        .args(["compose", "ls", "--all", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap_or(json!([]));
    listed
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|p| p["Name"].as_str())
        .filter(|n| n.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_sample_leaves_no_project_behind() {
    let Some(_lock) = testing::docker_engine(false).unwrap() else {
        return;
    };
    let task = Task::new(
        "docker_panic",
        Dataset::new((0..2).map(|i| Sample::new(format!("sample {i}"), ""))),
        Arc::new(Panics),
    )
    .docker(ComposeConfig::generic());
    let run = eval(
        &task,
        EvalOptions::new().fail_on_error(actuator::eval::FailOnError::Never),
    )
    .await
    .unwrap();
    assert_eq!(run.error_count, 2);
    assert!(run.errors[0].message.contains("the solver broke"), "{run}");
    // The projects' names: the task's slug then a random id.
    let name = actuator::sandbox::docker::project_name("docker_panic");
    let prefix = name[..name.len() - 6].to_owned();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let left = projects(&prefix);
        if left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "left behind: {left:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}
