//! An evaluation: 20 arithmetic questions, the quickstart's tools, a react agent on a model
//! that computes its answers (no API key), a progress display, and a log `inspect view` opens.
//!
//! Run with `cargo run --example eval --features eval [-- --log-dir DIR]` (default `logs`),
//! then `inspect view --log-dir DIR` (from `pip install inspect_ai`). With `--features
//! eval,providers -- --model PROVIDER/MODEL` the agent runs on a real model. It exits non-zero
//! when the evaluation did not succeed, printing the first sample's error.

#[path = "support/arithmetic.rs"]
mod arithmetic;
mod support;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use actuator::agent::react;
use actuator::eval::scorers::{Location, MatchOptions, match_};
use actuator::eval::{EvalOptions, Task, eval};
use actuator::multi::as_solver;
use arithmetic::{add_tool, arithmetic_model, dataset, multiply_tool};

const USAGE: &str = "usage: eval [--model PROVIDER/MODEL] [--log-dir DIR]";

#[tokio::main]
async fn main() -> ExitCode {
    match try_main().await {
        Ok(code) => code,
        Err(e) => support::fail(&*e),
    }
}

#[allow(clippy::print_stderr)]
async fn try_main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let args = support::Args::parse(USAGE)?;
    let log_dir = PathBuf::from(args.log_dir.as_deref().unwrap_or("logs"));
    if let Some(other) = args.positional.first().or(args.flags.first()) {
        return Err(format!("unknown argument {other}; {USAGE}").into());
    }
    let model = args.model(|| Arc::new(arithmetic_model(None)))?;
    let agent = react()
        .name("calculator")
        .tools([add_tool(), multiply_tool()])
        .model(model)
        .build()?;
    let task = Task::new(
        "arithmetic",
        dataset(20),
        Arc::new(as_solver(Arc::new(agent)).build()?),
    )
    .solver_name("react")
    // A real model that never submits stops here, and the sample says which limit it hit.
    .limits(support::limits())
    .scorer(match_(
        MatchOptions::default()
            .location(Location::End)
            .numeric(true),
    ));
    // The log names the model the samples called; progress shows retries as they happen.
    let run = eval(
        &task,
        EvalOptions::new()
            .max_samples(8)
            .log_dir(&log_dir)
            .progress(true)
            .ctrl_c(true),
    )
    .await?;
    // How it went: the status, the scores, and when samples failed, the first error.
    if run.log.status != "success" || run.error_count > 0 {
        eprintln!("{run}");
        return Ok(ExitCode::FAILURE);
    }
    println!("{run}");
    if run.location.is_some() {
        println!("open it with: inspect view --log-dir {}", log_dir.display());
    }
    Ok(ExitCode::SUCCESS)
}
