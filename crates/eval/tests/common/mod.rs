//! A small arithmetic task on a model that computes its answers: it calls `add` for the
//! question's numbers, then submits the tool's result.
#![allow(dead_code, clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

use std::path::PathBuf;
use std::sync::Arc;

use actuator_agent::react;
use actuator_eval::{Dataset, Sample, Task, scorers};
use actuator_model::{ChatMessage, FunctionModel, ModelOutput, ModelUsage, ToolCall};
use actuator_multi::as_solver;
use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure, ToolParams};
use serde_json::json;

pub fn add_tool() -> ToolDef {
    ToolDef::builder("add")
        .description("Add two integers.")
        .parameters(
            ToolParams::from_value(&json!({
                "properties": {
                    "x": {"type": "integer", "description": "First addend."},
                    "y": {"type": "integer", "description": "Second addend."}
                },
                "required": ["x", "y"]
            }))
            .unwrap(),
        )
        .parallel(true)
        .handler(|mut a: ToolArgs, _c: ToolContext| async move {
            let x: i64 = a.required("x")?;
            let y: i64 = a.required("y")?;
            Ok::<_, ToolFailure>(x + y)
        })
        .build()
        .unwrap()
}

/// "What is X + Y?" → add(X, Y) → submit(result). A question containing "wrong" gets a
/// wrong answer; "forever" keeps calling add.
pub fn arithmetic_model() -> Arc<FunctionModel> {
    Arc::new(FunctionModel::new("mockllm/model", |messages, _tools| {
        Ok(arithmetic_reply(messages))
    }))
}

/// What [`arithmetic_model`] answers to `messages`.
pub fn arithmetic_reply(messages: &[ChatMessage]) -> ModelOutput {
    {
        let question = messages
            .iter()
            .find_map(|m| match m {
                ChatMessage::User(u) => Some(u.content.text()),
                _ => None,
            })
            .unwrap_or_default();
        let numbers: Vec<i64> = question
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect();
        let last_tool = messages.iter().rev().find_map(|m| match m {
            ChatMessage::Tool(t) => Some(t.content.text()),
            _ => None,
        });
        let mut out = match (last_tool, question.contains("forever")) {
            (Some(_), false) => {
                let answer = if question.contains("wrong") {
                    "0".to_owned()
                } else {
                    last_tool_answer(messages)
                };
                ModelOutput::for_tool_calls(
                    "mockllm/model",
                    "Submitting.",
                    vec![ToolCall::new(
                        format!("submit_{}", messages.len()),
                        "submit",
                        json!({"answer": answer}),
                    )],
                )
            }
            _ => ModelOutput::for_tool_calls(
                "mockllm/model",
                "Let me add.",
                vec![ToolCall::new(
                    format!("add_{}", messages.len()),
                    "add",
                    json!({"x": numbers.first().copied().unwrap_or(0), "y": numbers.get(1).copied().unwrap_or(0)}),
                )],
            ),
        };
        out.usage = Some(ModelUsage::new(10, 5));
        out
    }
}

fn last_tool_answer(messages: &[ChatMessage]) -> String {
    messages
        .iter()
        .rev()
        .find_map(|m| match m {
            ChatMessage::Tool(t) if t.function.as_deref() == Some("add") => Some(t.content.text()),
            _ => None,
        })
        .unwrap_or_default()
}

pub fn arithmetic_task(samples: usize) -> Task {
    arithmetic_task_on(samples, arithmetic_model())
}

/// [`arithmetic_task`] on `model` (one that answers as [`arithmetic_model`] does).
pub fn arithmetic_task_on(samples: usize, model: impl actuator_model::Model + 'static) -> Task {
    arithmetic_task_with(samples, model, add_tool())
}

/// [`arithmetic_task_on`] with `add` as the agent's tool (one that adds as [`add_tool`] does).
pub fn arithmetic_task_with(
    samples: usize,
    model: impl actuator_model::Model + 'static,
    add: ToolDef,
) -> Task {
    let agent = react()
        .name("arithmetic")
        .prompt(actuator_agent::react::AgentPrompt {
            instructions: Some("Use add, then submit.".into()),
            ..actuator_agent::react::AgentPrompt::none()
        })
        .tools([add])
        .model(model)
        // Every call is approved by the automatic approver: the log shows approval events.
        .approval([actuator_exec::ApprovalPolicy::new(
            actuator_exec::auto_approver(actuator_exec::ApprovalDecision::Approve),
            ["*"],
        )
        .unwrap()])
        .build()
        .unwrap();
    let samples = (1..=samples).map(|i| {
        let (x, y) = (i as i64, 2 * i as i64);
        Sample::new(format!("What is {x} + {y}?"), (x + y).to_string()).with_metadata("n", i)
    });
    Task::new(
        "arithmetic",
        Dataset::new(samples).with_name("arithmetic"),
        Arc::new(as_solver(Arc::new(agent)).build().unwrap()),
    )
    .solver_name("react")
    .scorer(scorers::match_(
        scorers::MatchOptions::default().numeric(true),
    ))
    .scorer(scorers::includes(scorers::IncludesOptions::default()))
}

/// The reference's Python (with `inspect_ai` 0.3.285), installed by `scripts/setup-test-env`.
/// `None` (the test then skips, printing why) only outside CI.
pub fn inspect_python() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let python = std::env::var_os("ACTUATOR_INSPECT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| target.join("test-env/venv-inspect/bin/python"));
    if python.exists() {
        return Some(python);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "the reference's Python is missing at {}: run scripts/setup-test-env",
        python.display()
    );
    eprintln!(
        "skipping: {} is missing (run scripts/setup-test-env)",
        python.display()
    );
    None
}

/// Reads `log` with the reference's own `read_eval_log` (`tests/inspect/check_log.py`): its
/// header and samples as the reference sees them. Panics when the reference cannot read it;
/// `None` (the check skipped, printing why) only outside CI, without the reference's Python.
pub fn reference_read(log: &std::path::Path) -> Option<serde_json::Value> {
    let python = inspect_python()?;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/inspect/check_log.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the reference cannot read {}: {}",
        log.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// The `(id, epoch)` of every sample the reference read, in its order.
pub fn reference_keys(read: &serde_json::Value) -> Vec<(String, u64)> {
    read["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].to_string().trim_matches('"').to_owned(),
                s["epoch"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Reads every log of `logs` with the reference's own `read_eval_log`, in one Python
/// (`tests/inspect/check_logs.py`): per log, its status, its error and its samples as
/// `[id, epoch, error]`. Panics when the reference cannot read one; `None` only outside CI,
/// without the reference's Python.
pub fn reference_read_all(logs: &[PathBuf]) -> Option<Vec<serde_json::Value>> {
    let python = inspect_python()?;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/inspect/check_logs.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .args(logs)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the reference cannot read one of {logs:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// Runs this test binary's test `child_test` in a child process with `env_var` set to `dir`,
/// waits (at most a minute) for the log it writes into `dir/logs`, lets it run `delay` more,
/// and kills it with SIGKILL, as the machine or the OOM killer would. The log's path.
pub fn kill_child_mid_run(
    child_test: &str,
    env_var: &str,
    dir: &std::path::Path,
    delay: std::time::Duration,
) -> PathBuf {
    use std::time::{Duration, Instant};
    let stderr = dir.join("stderr.txt");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", child_test, "--nocapture"])
        .env(env_var, dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let logs = dir.join("logs");
    let deadline = Instant::now() + Duration::from_secs(60);
    let log = loop {
        let found = std::fs::read_dir(&logs)
            .ok()
            .and_then(|mut d| d.find_map(|e| e.ok().map(|e| e.path())));
        if let Some(found) = found {
            break found;
        }
        let exited = child.try_wait().unwrap();
        assert!(
            exited.is_none() && Instant::now() < deadline,
            "the child wrote no log ({exited:?}): {}",
            std::fs::read_to_string(&stderr).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(delay);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    log
}

/// The `.eval` logs in `dir`, as a shell's `dir/*.eval` gives them.
pub fn eval_logs(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "eval"))
        .collect();
    logs.sort();
    logs
}
