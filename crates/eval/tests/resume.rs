//! An evaluation with checkpoints whose process is killed (SIGKILL) at random points, retried
//! with `eval_retry` and the same checkpoints: the samples it was running go on from their
//! last checkpoint (marked `resume`) with their sandbox's files as they were then, no tool
//! call runs twice, every log along the way reads in the reference, and the checkpoints are
//! gone once every sample is in the log.

#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use actuator_agent::checkpoint::{Checkpoints, FileCheckpoints};
use actuator_agent::react;
use actuator_eval::log::schema::SampleAttempt;
use actuator_eval::{Dataset, EvalOptions, Sample, Task, eval, eval_retry, read_eval_log};
use actuator_model::{ChatMessage, FunctionModel, ModelOutput, ToolCall};
use actuator_multi::as_solver;
use actuator_sandbox::{LocalSandbox, SandboxHandle};
use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure, ToolParams};
use serde_json::json;

/// Set in the child process that runs the evaluation the test kills.
const CHILD_DIR: &str = "ACTUATOR_RESUME_CHILD_DIR";

const SAMPLES: usize = 10;

/// The `step` calls each sample makes, one a turn, before it submits.
const STEPS: usize = 5;

/// The sample's number, from its question.
fn sample_number(messages: &[ChatMessage]) -> i64 {
    messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::User(u) => u.content.text().split(' ').next_back()?.parse().ok(),
            _ => None,
        })
        .unwrap_or(0)
}

/// A task whose samples each call `step` [`STEPS`] times, one call a turn, then submit their
/// number. Each call appends `<sample>:<step>` to `effects`, outside any sandbox (a call run
/// twice shows there twice), and its step to `steps.txt` in the sample's sandbox, answering
/// with that file's content. Each generation takes 60 ms, so a run can be killed mid-sample.
fn stepping_task(effects: PathBuf) -> Task {
    let model = FunctionModel::new("mockllm/model", |messages, _tools| {
        std::thread::sleep(Duration::from_millis(60));
        let n = sample_number(messages);
        let done = messages
            .iter()
            .filter(|m| matches!(m, ChatMessage::Tool(_)))
            .count();
        let call = if done < STEPS {
            ToolCall::new(
                format!("step_{n}_{done}"),
                "step",
                json!({"n": n, "k": done}),
            )
        } else {
            ToolCall::new(
                format!("submit_{n}"),
                "submit",
                json!({"answer": n.to_string()}),
            )
        };
        Ok(ModelOutput::for_tool_calls(
            "mockllm/model",
            "Next.",
            vec![call],
        ))
    });
    let effects = Arc::new(effects);
    let step = ToolDef::builder("step")
        .description("Take one step.")
        .parameters(
            ToolParams::from_value(&json!({
                "properties": {
                    "n": {"type": "integer", "description": "The sample."},
                    "k": {"type": "integer", "description": "The step."}
                },
                "required": ["n", "k"]
            }))
            .unwrap(),
        )
        .handler(move |mut a: ToolArgs, c: ToolContext| {
            let effects = effects.clone();
            async move {
                use std::io::Write;
                let n: i64 = a.required("n")?;
                let k: i64 = a.required("k")?;
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(effects.as_ref())
                    .unwrap();
                writeln!(f, "{n}:{k}").unwrap();
                let sandbox = SandboxHandle::from_context(&c)?;
                let mut steps = sandbox.read_file("steps.txt").await.unwrap_or_default();
                steps.extend_from_slice(format!("{k}\n").as_bytes());
                sandbox.write_file("steps.txt", &steps).await.unwrap();
                Ok::<_, ToolFailure>(String::from_utf8(steps).unwrap())
            }
        })
        .build()
        .unwrap();
    let agent = react()
        .name("stepper")
        .tools([step])
        .model(model)
        .build()
        .unwrap();
    let samples = (1..=SAMPLES).map(|i| Sample::new(format!("Step through {i}"), i.to_string()));
    Task::new(
        "stepping",
        Dataset::new(samples).with_name("stepping"),
        Arc::new(as_solver(Arc::new(agent)).build().unwrap()),
    )
    .sandbox(|| LocalSandbox::new().map(SandboxHandle::new))
}

/// Checkpoints every turn into `dir`.
fn checkpoints(dir: &Path) -> Checkpoints {
    Checkpoints::new(Arc::new(FileCheckpoints::new(dir.join("checkpoints"))), "")
}

/// The child: runs the stepping task with checkpoints into the directory it is given (until
/// killed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn child_runs_the_stepping_task_when_asked() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let task = stepping_task(dir.join("effects.txt"));
    eval(
        &task,
        EvalOptions::new()
            .log_dir(dir.join("logs"))
            .log_buffer(1)
            .max_samples(2)
            .checkpoints(checkpoints(&dir)),
    )
    .await
    .unwrap();
}

/// Every `.ckpt` file under `dir`.
fn checkpoint_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            found.extend(checkpoint_files(&p));
        } else if p.to_string_lossy().contains(".ckpt") {
            found.push(p);
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_mid_sample_and_resumed_from_checkpoints() {
    // A sample takes six 60 ms generations, two run at a time: any kill point inside the
    // run finds samples part way through. The points are random (the seed is printed).
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64;
    println!("kill points seeded with {seed}");
    let mut rng = seed;
    let mut next = move || {
        rng = rng
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        rng >> 33
    };
    let mut resumed_somewhere = false;
    for _ in 0..5 {
        let delay_ms = 200 + next() % 1000;
        let dir = tempfile::tempdir().unwrap();
        let log = common::kill_child_mid_run(
            "child_runs_the_stepping_task_when_asked",
            CHILD_DIR,
            dir.path(),
            Duration::from_millis(delay_ms),
        );

        let crashed = read_eval_log(&log).unwrap();
        assert_eq!(
            crashed.status, "started",
            "killed at {delay_ms} ms (seed {seed})"
        );

        let effects = dir.path().join("effects.txt");
        let task = stepping_task(effects.clone());
        let retried = eval_retry(
            &task,
            &log,
            EvalOptions::new()
                .max_samples(4)
                .checkpoints(checkpoints(dir.path())),
        )
        .await
        .unwrap();
        assert_eq!(retried.log.status, "success", "{retried}");
        let samples = read_eval_log(retried.location.as_ref().unwrap())
            .unwrap()
            .samples
            .unwrap();
        assert_eq!(samples.len(), SAMPLES);
        for s in &samples {
            let output: ModelOutput = serde_json::from_value(s.output.clone()).unwrap();
            let answer = output.completion();
            assert_eq!(
                answer.lines().last(),
                Some(s.id.to_string().as_str()),
                "{answer}"
            );
            if s.attempt == Some(SampleAttempt::Resume) {
                resumed_somewhere = true;
                // Its conversation is whole: each step once, in order, before and after
                // the crash.
                let steps: Vec<String> = s
                    .messages
                    .iter()
                    .filter(|m| m["role"] == "assistant")
                    .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
                    .map(|c| c["arguments"]["k"].to_string())
                    .collect();
                let expected: Vec<String> = (0..STEPS).map(|k| k.to_string()).collect();
                assert_eq!(steps, expected, "sample {} (seed {seed})", s.id);
            }
            // Its sandbox's file holds each step whose call finished, once: the files went
            // back to the checkpoint with the conversation (a call cut off by the kill is
            // undone with its answer).
            let results: Vec<(String, bool)> = s
                .messages
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| {
                    (
                        m["content"].as_str().unwrap_or_default().to_owned(),
                        m["error"].is_null(),
                    )
                })
                .collect();
            let finished_steps: String = results
                .iter()
                .enumerate()
                .filter(|(_, (_, ok))| *ok)
                .map(|(k, _)| format!("{k}\n"))
                .collect();
            // Its events hold each step that ran, before the crash as well as after (the
            // checkpoints carried the earlier ones).
            if s.attempt == Some(SampleAttempt::Resume) {
                let mut evented: Vec<i64> = s
                    .events
                    .iter()
                    .filter(|e| e["event"] == "tool" && e["function"] == "step")
                    .filter_map(|e| e["arguments"]["k"].as_i64())
                    .collect();
                evented.sort_unstable();
                let ran: Vec<i64> = results
                    .iter()
                    .enumerate()
                    .filter(|(_, (_, ok))| *ok)
                    .map(|(k, _)| k as i64)
                    .collect();
                assert_eq!(evented, ran, "sample {}'s tool events (seed {seed})", s.id);
            }
            let last_ok = results
                .iter()
                .rev()
                .find(|(_, ok)| *ok)
                .map(|(c, _)| c.clone());
            assert_eq!(
                last_ok.unwrap_or_default(),
                finished_steps,
                "sample {}'s sandbox files (seed {seed})",
                s.id
            );
        }
        // No call ran twice, across the killed run and the retry; every call of a sample
        // that did not die mid-call ran.
        let lines = std::fs::read_to_string(&effects).unwrap();
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for l in lines.lines() {
            *counts.entry(l).or_default() += 1;
        }
        let twice: Vec<_> = counts.iter().filter(|(_, c)| **c > 1).collect();
        assert!(twice.is_empty(), "calls run twice: {twice:?} (seed {seed})");
        assert!(
            counts.len() + 2 >= SAMPLES * STEPS,
            "at most the two calls in flight at the kill are lost: {} of {}",
            counts.len(),
            SAMPLES * STEPS
        );
        assert!(
            checkpoint_files(dir.path()).is_empty(),
            "every sample is in the log: its checkpoints are removed: {:?}",
            checkpoint_files(dir.path())
        );
        if let Some(reads) = common::reference_read_all(&[log, retried.location.unwrap()]) {
            assert_eq!(reads[0]["status"], "started");
            assert_eq!(reads[1]["status"], "success");
        }
    }
    assert!(resumed_somewhere, "no kill point found a sample mid-run");
}
