//! A react agent on the scripted model, with bash, python and text_editor in a LocalSandbox:
//! it writes a script, runs it both ways, and submits what it printed. The sandbox goes with
//! the run, also when the run is cancelled.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use actuator_agent::{RunOptions, react, react::AgentSubmit, run};
use actuator_model::{ModelOutput, ScriptedModel, ToolCall};
use actuator_sandbox::{LocalSandbox, SandboxHandle, testing};
use actuator_tools::{BashOptions, ShellOptions, bash, python, text_editor};
use serde_json::json;

fn turn(id: &str, function: &str, args: serde_json::Value) -> ModelOutput {
    ModelOutput::for_tool_calls("scripted", "", vec![ToolCall::new(id, function, args)])
}

fn sandbox() -> Option<LocalSandbox> {
    testing::confined(LocalSandbox::builder()).unwrap_or_else(|e| panic!("{e}"))
}

fn host_has_process(marker: &str) -> bool {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .map(|c| {
                    String::from_utf8_lossy(&c)
                        .replace('\0', " ")
                        .contains(marker)
                })
                .unwrap_or(false)
        })
}

#[tokio::test]
async fn react_writes_runs_and_submits_with_the_sandbox_gone_afterwards() {
    let Some(sb) = sandbox() else { return };
    let root = sb.host_root().to_path_buf();
    let script = vec![
        turn(
            "c1",
            "text_editor",
            json!({"command": "create", "path": "hello.py", "file_text": "print(sum(range(10)))\n"}),
        ),
        turn("c2", "bash", json!({"command": "python3 hello.py"})),
        turn(
            "c3",
            "python",
            json!({"code": "exec(open('hello.py').read())"}),
        ),
        turn("c4", "submit", json!({"answer": "45"})),
    ];
    let agent = react()
        .name("coder")
        .prompt("Write and run code.")
        .tools([
            bash(BashOptions::new()).unwrap(),
            python(ShellOptions::new()).unwrap(),
            text_editor(ShellOptions::new()).unwrap(),
        ])
        .model(Arc::new(ScriptedModel::new(script)))
        .submit(AgentSubmit {
            answer_only: true,
            ..AgentSubmit::default()
        })
        .build()
        .unwrap();
    let options = RunOptions::new().resource(SandboxHandle::new(sb));
    let run = run(&agent, "Print the sum of 0..9.", options)
        .await
        .unwrap();
    let tool_texts: Vec<String> = run
        .state
        .messages
        .iter()
        .filter_map(|m| m.as_tool())
        .map(|t| {
            assert!(t.error.is_none(), "{:?}", t.error);
            t.content.text()
        })
        .collect();
    assert_eq!(
        tool_texts[0],
        format!(
            "File created successfully at: {}/work/hello.py",
            root.display()
        )
    );
    assert_eq!(tool_texts[1], "45\n");
    assert_eq!(tool_texts[2], "45\n");
    assert_eq!(run.state.output().completion(), "45");
    assert!(!root.exists(), "the sandbox outlived its run");
}

#[tokio::test]
async fn a_cancelled_run_leaves_no_process_and_no_directory() {
    let Some(sb) = sandbox() else { return };
    let root = sb.host_root().to_path_buf();
    let marker = "sleep 51.25";
    let agent = react()
        .name("sleeper")
        .tools([bash(BashOptions::new()).unwrap()])
        .model(Arc::new(ScriptedModel::new([turn(
            "c1",
            "bash",
            json!({"command": marker}),
        )])))
        .build()
        .unwrap();
    let options = RunOptions::new().resource(SandboxHandle::new(sb));
    let task = tokio::spawn(async move { run(&agent, "Sleep.", options).await.is_ok() });
    let mut started = false;
    for _ in 0..50 {
        if host_has_process(marker) {
            started = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(started, "the command never started");
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    for _ in 0..30 {
        if !host_has_process(marker) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        !host_has_process(marker),
        "a process outlived its cancelled run"
    );
    assert!(!root.exists());
}
