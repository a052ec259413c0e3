//! `cli::run` in process: each verb's work and the exit code that says how it went, for tasks
//! registered as a program registers them. (The built example's command line, its output and
//! Ctrl-C are tested in the facade's `eval_cli` test; a real Slurm array in its `slurm` test.)

#![cfg(feature = "cli")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use actuator_agent::{AgentError, AgentErrorKind, RunContext};
use actuator_eval::cli::{self, Exit, TaskArgs, Tasks};
use actuator_eval::{Dataset, Sample, SampleId, Task, read_eval_log};
use actuator_model::{BoxFuture, ChatMessage, ModelOutput};
use actuator_multi::{Solver, TaskState};

/// Echoes its input, failing the samples named in `fail` while `failing` is set.
struct Echo {
    fail: Vec<String>,
    failing: Arc<AtomicBool>,
}

impl Solver for Echo {
    fn solve<'a>(
        &'a self,
        state: &'a mut TaskState,
        _cx: &'a RunContext,
    ) -> BoxFuture<'a, Result<(), AgentError>> {
        Box::pin(async move {
            let input = state.messages[0].text();
            if self.failing.load(Ordering::SeqCst) && self.fail.contains(&input) {
                return Err(AgentError::new(AgentErrorKind::Failed(format!(
                    "{input} failed"
                ))));
            }
            state.messages.push(ChatMessage::assistant(input.clone()));
            state.output = ModelOutput::from_content("echo", input);
            Ok(())
        })
    }
}

/// A program with task `echo` (`-T samples=N`, default 10; `-T fail=q3,q5` fails those while
/// `failing` is set) and task `broken`, whose constructor panics.
fn tasks(failing: Arc<AtomicBool>) -> Tasks {
    Tasks::new("test-evals")
        .task("echo", "Echoes", move |args: &TaskArgs| {
            let n: usize = args.parse("samples")?.unwrap_or(10);
            let fail = args
                .get("fail")
                .map(|f| f.split(',').map(str::to_owned).collect())
                .unwrap_or_default();
            assert_eq!(
                args.model(),
                Some("mockllm/model"),
                "the model reaches the task"
            );
            let dataset =
                Dataset::new((1..=n).map(|i| Sample::new(format!("q{i}"), format!("q{i}"))));
            Ok(Task::new(
                "echo",
                dataset,
                Arc::new(Echo {
                    fail,
                    failing: failing.clone(),
                }),
            ))
        })
        .task("broken", "Cannot be made", |_| panic!("no such dataset"))
}

async fn run(tasks: &Tasks, args: &[&str]) -> Exit {
    cli::run(
        tasks,
        std::iter::once("test-evals").chain(args.iter().copied()),
    )
    .await
}

fn ids(log: &Path) -> Vec<SampleId> {
    let log = read_eval_log(log).unwrap();
    let mut ids: Vec<SampleId> = log.samples.unwrap().into_iter().map(|s| s.id).collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn limit_then_shard_keep_the_whole_datasets_ids_and_the_log_records_the_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let tasks = tasks(Arc::new(AtomicBool::new(false)));
    let args = [
        "eval",
        "echo",
        "--model",
        "mockllm/model",
        "-T",
        "samples=20",
    ];
    let exit = run(
        &tasks,
        &[
            &args[..],
            &["--limit", "3,12", "--shard", "1/3", "--log-dir", d],
        ]
        .concat(),
    )
    .await;
    assert_eq!(exit, Exit::Success);
    let log = &common::eval_logs(dir.path())[0];
    // Samples 3 to 12, then every third from the second of them: 4, 7, 10.
    assert_eq!(ids(log), [4, 7, 10].map(SampleId::Int));
    let header = read_eval_log(log).unwrap();
    assert_eq!(header.eval.model, "mockllm/model");
    assert_eq!(header.eval.task_args["samples"], "20");
}

#[tokio::test]
async fn sample_errors_over_the_threshold_exit_1_and_a_retry_runs_only_those_samples() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let failing = Arc::new(AtomicBool::new(true));
    let tasks = tasks(failing.clone());
    let base = [
        "eval",
        "echo",
        "--model",
        "mockllm/model",
        "-T",
        "fail=q2,q4",
        "--log-dir",
        d,
    ];
    // The first error fails the evaluation (the reference's default)…
    assert_eq!(run(&tasks, &base).await, Exit::Failed);
    // …a threshold of 3 failed samples does not, nor does --no-fail-on-error.
    assert_eq!(
        run(&tasks, &[&base[..], &["--fail-on-error", "3"]].concat()).await,
        Exit::Success
    );
    assert_eq!(
        run(&tasks, &[&base[..], &["--no-fail-on-error"]].concat()).await,
        Exit::Success
    );
    let failed = common::eval_logs(dir.path())
        .into_iter()
        .find(|l| read_eval_log(l).unwrap().status == "error")
        .unwrap();

    // The retry makes the task again from the log (model, -T arguments) and runs the rest.
    failing.store(false, Ordering::SeqCst);
    let before = common::eval_logs(dir.path()).len();
    assert_eq!(
        run(&tasks, &["retry", failed.to_str().unwrap()]).await,
        Exit::Success
    );
    let after = common::eval_logs(dir.path());
    assert_eq!(
        after.len(),
        before + 1,
        "the retry writes a new log beside the old"
    );
    let retried = after.iter().find(|l| !logs_in_before(&failed, l)).unwrap();
    let log = read_eval_log(retried).unwrap();
    assert_eq!(log.status, "success");
    assert_eq!(log.eval.task_args["fail"], "q2,q4");
    assert_eq!(
        ids(retried),
        (1..=10).map(SampleId::Int).collect::<Vec<_>>()
    );
}

/// Whether `log` is `failed` or was written before it (file names start with the time).
fn logs_in_before(failed: &Path, log: &Path) -> bool {
    log == failed
        || read_eval_log(log).unwrap().eval.task_id != read_eval_log(failed).unwrap().eval.task_id
}

#[tokio::test]
async fn what_cannot_start_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let tasks = tasks(Arc::new(AtomicBool::new(false)));
    for args in [
        &["eval", "nope"][..],
        &["eval", "echo", "--shard", "3/3"],
        &["eval", "echo", "--limit", "0,4"],
        &[
            "eval",
            "echo",
            "--model",
            "mockllm/model",
            "-T",
            "samples=many",
        ],
        &["eval", "echo", "-T", "samples"],
        &["eval", "broken"],
        &["eval", "echo", "--sandbox", "vm"],
        &["eval", "echo", "--max-samples", "0"],
        &["eval", "echo", "--fail-on-error", "1.5"],
        &["retry", "missing.eval"],
        &["merge", "--out", "x.eval"],
        &["frobnicate"],
    ] {
        let args: Vec<&str> = args.iter().copied().chain(["--log-dir", d]).collect();
        let args = if args[0] == "merge" || args[0] == "frobnicate" {
            &args[..args.len() - 2]
        } else {
            &args[..]
        };
        assert_eq!(run(&tasks, args).await, Exit::Config, "{args:?}");
    }
    assert!(common::eval_logs(dir.path()).is_empty(), "nothing ran");
    assert_eq!(run(&tasks, &["list"]).await, Exit::Success);
    assert_eq!(run(&tasks, &["--help"]).await, Exit::Success);
}

#[tokio::test]
async fn shards_merge_from_their_directory_into_the_file_named() {
    let dir = tempfile::tempdir().unwrap();
    let shards = dir.path().join("shards");
    let s = shards.to_str().unwrap();
    let tasks = tasks(Arc::new(AtomicBool::new(false)));
    for i in 0..3 {
        let shard = format!("{i}/3");
        let args = [
            "eval",
            "echo",
            "--model",
            "mockllm/model",
            "--shard",
            &shard,
            "--log-dir",
            s,
        ];
        assert_eq!(run(&tasks, &args).await, Exit::Success);
    }
    let out = dir.path().join("all.eval");
    assert_eq!(
        run(&tasks, &["merge", s, "--out", out.to_str().unwrap()]).await,
        Exit::Success
    );
    assert_eq!(ids(&out), (1..=10).map(SampleId::Int).collect::<Vec<_>>());
    assert_eq!(read_eval_log(&out).unwrap().status, "success");
    // Written among its inputs and merged again, spelled another way: not read as an input.
    let inside = shards.join("all.eval");
    let inside_other = format!("{s}/./all.eval");
    for out in [inside.to_str().unwrap(), &inside_other] {
        assert_eq!(
            run(&tasks, &["merge", s, "--out", out]).await,
            Exit::Success,
            "{out}"
        );
    }
    assert_eq!(
        ids(&inside),
        (1..=10).map(SampleId::Int).collect::<Vec<_>>()
    );
    std::fs::remove_file(&inside).unwrap();
    // Into a directory, the merged log takes its own name there.
    let into = dir.path().join("merged");
    assert_eq!(
        run(&tasks, &["merge", s, "--out", into.to_str().unwrap()]).await,
        Exit::Success
    );
    assert_eq!(common::eval_logs(&into).len(), 1);
}

#[tokio::test]
async fn resume_retries_an_unfinished_shard_skips_a_finished_one_and_the_merge_takes_the_latest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let failing = Arc::new(AtomicBool::new(true));
    let tasks = tasks(failing.clone());
    let shard = |i: &'static str| {
        [
            "eval",
            "echo",
            "--model",
            "mockllm/model",
            "-T",
            "fail=q1",
            "--shard",
            i,
            "--log-dir",
            d,
            "--resume",
        ]
    };
    // Shard 0 fails on q1; a scheduler runs it again, now healthy: it resumes that log.
    assert_eq!(run(&tasks, &shard("0/2")).await, Exit::Failed);
    failing.store(false, Ordering::SeqCst);
    assert_eq!(run(&tasks, &shard("0/2")).await, Exit::Success);
    let logs = common::eval_logs(dir.path());
    assert_eq!(logs.len(), 2);
    let task_ids: Vec<String> = logs
        .iter()
        .map(|l| read_eval_log(l).unwrap().eval.task_id)
        .collect();
    assert_eq!(
        task_ids[0], task_ids[1],
        "the second attempt is a retry of the first"
    );
    // Run a third time, it finds the success and runs nothing.
    assert_eq!(run(&tasks, &shard("0/2")).await, Exit::Success);
    assert_eq!(common::eval_logs(dir.path()).len(), 2);
    // Another shard, or other arguments, are another run.
    assert_eq!(run(&tasks, &shard("1/2")).await, Exit::Success);
    assert_eq!(common::eval_logs(dir.path()).len(), 3);

    let out = dir.path().join("all.eval");
    let out_s = out.to_str().unwrap();
    assert_eq!(
        run(&tasks, &["merge", d, "--out", out_s]).await,
        Exit::Success
    );
    assert_eq!(ids(&out), (1..=10).map(SampleId::Int).collect::<Vec<_>>());

    // Without --resume the same shard runs again as a new evaluation: a merge refuses the
    // samples both hold.
    let again = &shard("1/2")[..10];
    assert_eq!(run(&tasks, again).await, Exit::Success);
    assert_eq!(
        run(&tasks, &["merge", d, "--out", out_s]).await,
        Exit::Config
    );
}

#[tokio::test]
async fn epochs_max_samples_and_log_format_reach_the_run_and_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let tasks = tasks(Arc::new(AtomicBool::new(false)));
    let args = [
        "eval",
        "echo",
        "--model",
        "mockllm/model",
        "-T",
        "samples=3",
        "--epochs",
        "2",
        "--max-samples",
        "3",
        "--log-format",
        "json",
        "--log-dir",
        d,
    ];
    assert_eq!(run(&tasks, &args).await, Exit::Success);
    let logs: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    let log = read_eval_log(&logs[0]).unwrap();
    assert_eq!(log.eval.config["epochs"], 2);
    assert_eq!(log.eval.config["max_samples"], 3);
    let mut keys: Vec<(SampleId, u32)> = log
        .samples
        .unwrap()
        .into_iter()
        .map(|s| (s.id, s.epoch))
        .collect();
    keys.sort();
    let expected: Vec<(SampleId, u32)> = (1..=3)
        .flat_map(|i| [(SampleId::Int(i), 1), (SampleId::Int(i), 2)])
        .collect();
    assert_eq!(keys, expected);
}
