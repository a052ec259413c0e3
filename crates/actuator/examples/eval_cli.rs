//! A program with its own evaluation command line: two tasks registered with
//! `actuator::eval::cli`, and the reference's verbs for them.
//!
//! ```text
//! cargo run --example eval_cli --features cli,tools -- list
//! cargo run --example eval_cli --features cli,tools -- eval arithmetic -T samples=40 --shard 0/4 --log-dir logs/run-1
//! cargo run --example eval_cli --features cli,tools -- merge logs/run-1 --out logs/run-1.eval
//! cargo run --example eval_cli --features cli,tools -- retry logs/run-1/<a failed shard>.eval
//! cargo run --example eval_cli --features cli,tools -- log dump logs/run-1.eval
//! ```
//!
//! Without `--model` (or with `--model mockllm/model`) the tasks run on stand-in models that
//! need no key; with `--features cli,tools,providers` and `--model PROVIDER/MODEL`, on a real
//! one. `EVAL_CLI_CRASH_ON=ID` makes the arithmetic task's process abort when it reaches
//! sample ID (a stand-in for a machine that fails, to show `retry`). `docs/scaling.md` runs
//! it as a Slurm array job.

#[path = "support/arithmetic.rs"]
mod arithmetic;

use std::process::ExitCode;
use std::sync::Arc;

use actuator::agent::limits::turn_limit;
use actuator::agent::react;
use actuator::eval::cli::{self, BoxError, TaskArgs, Tasks};
use actuator::eval::scorers::{Location, MatchOptions, match_};
use actuator::eval::{Dataset, Sample, Task};
use actuator::model::{ChatMessage, FunctionModel, Model, ModelOutput, ToolCall};
use actuator::multi::as_solver;
use actuator::sandbox::{LocalSandbox, SandboxHandle};
use actuator::tools::{BashOptions, bash};
use serde_json::json;

/// The model `--model` names; `stand_in` without one, or for `mockllm/model`.
fn model(
    args: &TaskArgs,
    stand_in: impl FnOnce() -> FunctionModel,
) -> Result<Arc<dyn Model>, BoxError> {
    match args.model() {
        None | Some("mockllm/model") => Ok(Arc::new(stand_in())),
        #[cfg(feature = "providers")]
        Some(name) => Ok(actuator::providers::get_model(name)?),
        #[cfg(not(feature = "providers"))]
        Some(name) => Err(format!(
            "--model {name} needs the providers: build with `--features providers`"
        )
        .into()),
    }
}

/// Arithmetic questions (`-T samples=N`, default 20) for a react agent with `add` and
/// `multiply`.
fn arithmetic_task(args: &TaskArgs) -> Result<Task, BoxError> {
    let samples: i64 = args.parse("samples")?.unwrap_or(20);
    let crash_on = std::env::var("EVAL_CLI_CRASH_ON")
        .ok()
        .and_then(|id| id.parse().ok())
        .map(arithmetic::question);
    let agent = react()
        .name("calculator")
        .tools([arithmetic::add_tool(), arithmetic::multiply_tool()])
        .model(model(args, || arithmetic::arithmetic_model(crash_on))?)
        .build()?;
    Ok(Task::new(
        "arithmetic",
        arithmetic::dataset(samples),
        Arc::new(as_solver(Arc::new(agent)).build()?),
    )
    .solver_name("react")
    .limits([turn_limit(20)])
    .scorer(match_(
        MatchOptions::default()
            .location(Location::End)
            .numeric(true),
    )))
}

/// A stand-in for a real model on the shell task: it runs `seq N | wc -l` with `bash`, then
/// submits what it printed.
fn shell_model() -> FunctionModel {
    FunctionModel::new("mockllm/model", |messages, _tools| {
        let output = messages.iter().rev().find_map(|m| match m {
            ChatMessage::Tool(t) => Some(t.content.text()),
            _ => None,
        });
        let call = match output {
            Some(out) => ToolCall::new("submit_1", "submit", json!({"answer": out.trim()})),
            None => {
                let question = arithmetic::first_question(messages);
                let n: String = question.chars().filter(char::is_ascii_digit).collect();
                ToolCall::new(
                    "call_1",
                    "bash",
                    json!({"command": format!("seq {n} | wc -l")}),
                )
            }
        };
        Ok(ModelOutput::for_tool_calls("mockllm/model", "", vec![call]))
    })
}

/// Counting lines with the shell, in a sandbox of its own per sample (`LocalSandbox`, or the
/// one `--sandbox` names).
fn shell_task(args: &TaskArgs) -> Result<Task, BoxError> {
    let samples: u32 = args.parse("samples")?.unwrap_or(5);
    let dataset = Dataset::new((1..=samples).map(|n| {
        Sample::new(
            format!("How many lines does `seq {n}` print? Use bash."),
            n.to_string(),
        )
    }))
    .with_name("shell");
    let agent = react()
        .name("shell")
        .tools([bash(BashOptions::default())?])
        .model(model(args, shell_model)?)
        .build()?;
    Ok(Task::new(
        "shell",
        dataset,
        Arc::new(as_solver(Arc::new(agent)).build()?),
    )
    .solver_name("react")
    .sandbox(|| LocalSandbox::new().map(SandboxHandle::new))
    .limits([turn_limit(20)])
    .scorer(match_(
        MatchOptions::default()
            .location(Location::End)
            .numeric(true),
    )))
}

fn main() -> ExitCode {
    cli::main(
        Tasks::new("eval_cli")
            .about("The eval_cli example's tasks, run with the reference's verbs")
            .task(
                "arithmetic",
                "Arithmetic questions for a react agent with add and multiply",
                arithmetic_task,
            )
            .task(
                "shell",
                "Counting lines with bash in a sandbox per sample",
                shell_task,
            ),
    )
}
