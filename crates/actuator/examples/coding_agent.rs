//! A coding agent: bash, python and text_editor in a `LocalSandbox` (every command confined
//! with bubblewrap), fixing a small script on the embedded scripted model (no API key).
//!
//! Run with `cargo run --example coding_agent`. Without bubblewrap it says how to install it;
//! `-- --unconfined` runs the commands as plain subprocesses instead (your choice, not a
//! fallback). With `--features providers`, `-- --model PROVIDER/MODEL` gives the same task to a
//! real model (for example `openai/gpt-4.1-mini`).

mod support;

use std::process::ExitCode;
use std::sync::Arc;

use actuator::agent::{RunOptions, react, react::AgentSubmit, run as run_agent};
use actuator::events::ConsoleTranscript;
use actuator::model::{ModelOutput, ScriptedModel, ToolCall};
use actuator::sandbox::{LocalSandbox, Sandbox, SandboxHandle};
use actuator::tools::{BashOptions, ShellOptions, bash, python, text_editor};
use serde_json::json;

/// The script the agent is asked to fix: it divides by zero on an empty list.
const BUGGY: &str = "def average(values):\n    return sum(values) / len(values)\n\nprint(average([3, 4, 5]))\nprint(average([]))\n";

/// What the scripted model does, turn by turn. A real model would decide this itself.
fn script() -> Vec<ModelOutput> {
    let turn = |text: &str, id: &str, function: &str, args: serde_json::Value| {
        ModelOutput::for_tool_calls("scripted", text, vec![ToolCall::new(id, function, args)])
    };
    vec![
        turn(
            "Let me run it first.",
            "call_1",
            "bash",
            json!({"command": "python3 average.py"}),
        ),
        turn(
            "An empty list divides by zero. Let me look at the code.",
            "call_2",
            "text_editor",
            json!({"command": "view", "path": "average.py", "view_range": [1, 2]}),
        ),
        turn(
            "I'll return 0.0 for an empty list.",
            "call_3",
            "text_editor",
            json!({
                "command": "str_replace",
                "path": "average.py",
                "old_str": "    return sum(values) / len(values)",
                "new_str": "    if not values:\n        return 0.0\n    return sum(values) / len(values)",
            }),
        ),
        turn(
            "And check it from Python as well.",
            "call_4",
            "python",
            json!({"code": "import runpy\nrunpy.run_path('average.py')"}),
        ),
        turn(
            "Fixed: it prints 4.0 and then 0.0.",
            "call_5",
            "submit",
            json!({"answer": "average([]) now returns 0.0 instead of dividing by zero"}),
        ),
    ]
}

const USAGE: &str = "usage: coding_agent [--model PROVIDER/MODEL] [--unconfined]";

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(code) => code,
        Err(e) => support::fail(&*e),
    }
}

async fn run() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let args = support::Args::parse(USAGE)?;
    if !args.positional.is_empty() || args.flags.iter().any(|f| f != "--unconfined") {
        return Err(USAGE.into());
    }
    let model = args.model(|| Arc::new(ScriptedModel::new(script())))?;
    let builder = if args.flag("--unconfined") {
        LocalSandbox::builder().unconfined()
    } else {
        LocalSandbox::builder()
    };
    let sandbox = builder.build()?;
    sandbox.write_file("average.py", BUGGY.as_bytes()).await?;
    println!(
        "sandbox: {} ({:?}), working directory {}",
        sandbox.name(),
        sandbox.confinement(),
        sandbox.workdir()
    );

    let transcript = Arc::new(ConsoleTranscript::new());
    let agent = react()
        .name("model")
        .prompt("You fix Python scripts. Use the tools to run and edit them.")
        .tools([
            bash(BashOptions::new())?,
            python(ShellOptions::new())?,
            text_editor(ShellOptions::new())?,
        ])
        .model(model)
        .submit(AgentSubmit {
            answer_only: true,
            ..AgentSubmit::default()
        })
        .build()?;

    let task = "average.py crashes. Please fix it.";
    transcript.user(task);
    let options = RunOptions::new()
        .limits(support::limits())
        .events(transcript.clone())
        .resource(SandboxHandle::new(sandbox));
    let result = run_agent(&agent, task, options).await?;
    let code = support::report(&result, &transcript);
    println!("(the sandbox and everything it started are gone with the run)");
    Ok(code)
}
