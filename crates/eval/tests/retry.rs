//! `eval_retry` and `recover_eval_log`: an evaluation that failed, or whose process died (a
//! torn log, a child process killed with SIGKILL), run again keeping every finished sample,
//! with logs the reference reads.

#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use actuator_eval::log::schema::{EvalSample, SampleAttempt};
use actuator_eval::log::{RECOVERED_MESSAGE, recover_eval_log};
use actuator_eval::{EvalError, EvalOptions, FailOnError, Task, eval, eval_retry, read_eval_log};
use actuator_model::{ChatMessage, FunctionModel, ModelError};
use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure, ToolParams};
use serde_json::json;

/// The question of a conversation.
fn question(messages: &[ChatMessage]) -> String {
    messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::User(u) => Some(u.content.text()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The arithmetic model, failing every question whose first number is odd while `broken` is
/// set, and counting the calls each question gets.
fn flaky_model(
    broken: Arc<AtomicBool>,
    calls: Arc<std::sync::Mutex<HashMap<String, usize>>>,
) -> FunctionModel {
    FunctionModel::new("mockllm/model", move |messages, _tools| {
        let q = question(messages);
        *calls.lock().unwrap().entry(q.clone()).or_default() += 1;
        let first: u64 = q
            .split(|c: char| !c.is_ascii_digit())
            .find_map(|w| w.parse().ok())
            .unwrap_or(0);
        if broken.load(Ordering::SeqCst) && first % 2 == 1 {
            return Err(ModelError::other("the model's server went away"));
        }
        Ok(common::arithmetic_reply(messages))
    })
}

fn by_key(samples: &[EvalSample]) -> HashMap<(String, u32), &EvalSample> {
    samples
        .iter()
        .map(|s| ((s.id.to_string(), s.epoch), s))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_keeps_the_finished_samples_and_runs_only_the_failed_ones() {
    let broken = Arc::new(AtomicBool::new(true));
    let calls = Arc::new(std::sync::Mutex::new(HashMap::new()));
    let task = common::arithmetic_task_on(6, flaky_model(broken.clone(), calls.clone())).epochs(2);
    let dir = tempfile::tempdir().unwrap();
    let first = eval(
        &task,
        EvalOptions::new()
            .log_dir(dir.path())
            .fail_on_error(FailOnError::Never),
    )
    .await
    .unwrap();
    assert_eq!(first.error_count, 6, "{first}");
    let first_path = first.location.clone().unwrap();
    let first_log = read_eval_log(&first_path).unwrap();

    broken.store(false, Ordering::SeqCst);
    calls.lock().unwrap().clear();
    let retried = eval_retry(
        &task,
        &first_path,
        EvalOptions::new().fail_on_error(FailOnError::Never),
    )
    .await
    .unwrap();
    assert_eq!(retried.log.status, "success", "{retried}");
    assert_eq!(retried.error_count, 0);
    let path = retried.location.clone().unwrap();
    assert_eq!(path.parent(), first_path.parent(), "written beside the log");
    assert_ne!(path, first_path);
    let results = retried.log.results.as_ref().unwrap();
    assert_eq!((results.total_samples, results.completed_samples), (12, 12));
    assert_eq!(
        retried.score("match").unwrap().metric("accuracy"),
        Some(1.0)
    );
    assert_eq!(retried.log.eval.task_id, first_log.eval.task_id);
    // Usage counts the kept samples (from the first log) and the restarted ones.
    let tokens = |log: &actuator_eval::log::schema::EvalLog| {
        log.stats.model_usage["mockllm/model"]["total_tokens"]
            .as_u64()
            .unwrap()
    };
    let kept_tokens: u64 = first_log
        .samples
        .as_ref()
        .unwrap()
        .iter()
        .filter(|s| s.error.is_none())
        .map(|s| {
            s.model_usage["mockllm/model"]["total_tokens"]
                .as_u64()
                .unwrap()
        })
        .sum();
    assert!(tokens(&retried.log) > kept_tokens);

    // Only the failed questions ran again.
    for (q, n) in calls.lock().unwrap().iter() {
        let first_number: u64 = q
            .split(|c: char| !c.is_ascii_digit())
            .find_map(|w| w.parse().ok())
            .unwrap();
        assert_eq!(first_number % 2, 1, "{q} ran again ({n} calls)");
    }

    let log = read_eval_log(&path).unwrap();
    let samples = log.samples.as_ref().unwrap();
    assert_eq!(samples.len(), 12);
    let before = by_key(first_log.samples.as_ref().unwrap());
    for s in samples {
        let old = before[&(s.id.to_string(), s.epoch)];
        match &old.error {
            None => {
                assert_eq!(s.attempt, Some(SampleAttempt::Initial));
                assert_eq!(s.uuid, old.uuid, "kept as it was");
                assert_eq!(s.messages, old.messages);
                assert_eq!(s.events, old.events);
            }
            Some(error) => {
                assert_eq!(s.attempt, Some(SampleAttempt::Restart));
                assert_ne!(s.uuid, old.uuid);
                assert!(s.error.is_none());
                let retries = s.error_retries.as_ref().unwrap();
                assert_eq!(
                    retries[0].message, error.message,
                    "the first run's error kept"
                );
            }
        }
    }

    if let Some(read) = common::reference_read(&path) {
        assert_eq!(read["header"]["status"], "success");
        assert_eq!(read["samples"].as_array().unwrap().len(), 12);
    }
}

/// Cuts the finished `.eval` log `path` in the middle of the entry `name`, as a process killed
/// while writing it leaves the file (no central directory after it).
fn tear_at(path: &Path, name: &str) {
    let bytes = std::fs::read(path).unwrap();
    let at = bytes
        .windows(name.len())
        .position(|w| w == name.as_bytes())
        .unwrap();
    // The local header (30 bytes) before the name, the name, and part of the body.
    let cut = at + name.len() + 40;
    assert!(cut < bytes.len());
    std::fs::write(path, &bytes[..cut]).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_torn_mid_write_is_recovered_and_retried() {
    let task = common::arithmetic_task(5);
    let dir = tempfile::tempdir().unwrap();
    let run = eval(&task, EvalOptions::new().log_dir(dir.path()))
        .await
        .unwrap();
    let path = run.location.unwrap();
    let whole = read_eval_log(&path).unwrap();
    tear_at(&path, "samples/4_epoch_1.json");

    // Read up to the torn write: started, the samples before it.
    let torn = read_eval_log(&path).unwrap();
    assert_eq!(torn.status, "started");
    let ids: Vec<String> = torn
        .samples
        .as_ref()
        .unwrap()
        .iter()
        .map(|s| s.id.to_string())
        .collect();
    assert_eq!(ids, ["1", "2", "3"]);

    let recovered = recover_eval_log(&path).unwrap();
    assert!(recovered.torn);
    assert_eq!(recovered.samples, 3);
    assert!(
        recovered
            .path
            .to_string_lossy()
            .ends_with("-recovered.eval")
    );
    let log = read_eval_log(&recovered.path).unwrap();
    assert_eq!(log.status, "error");
    assert_eq!(log.error.as_ref().unwrap().message, RECOVERED_MESSAGE);
    let results = log.results.as_ref().unwrap();
    assert_eq!((results.total_samples, results.completed_samples), (5, 3));
    let matched = results.scores.iter().find(|s| s.name == "match").unwrap();
    assert_eq!(matched.scored_samples, 3);
    assert_eq!(matched.metric("accuracy"), Some(1.0));
    for (a, b) in log
        .samples
        .as_ref()
        .unwrap()
        .iter()
        .zip(whole.samples.as_ref().unwrap())
    {
        assert_eq!((&a.id, &a.uuid, &a.events), (&b.id, &b.uuid, &b.events));
    }
    if let Some(read) = common::reference_read(&recovered.path) {
        assert_eq!(read["header"]["status"], "error");
        assert_eq!(read["header"]["error"], RECOVERED_MESSAGE);
        assert_eq!(read["samples"].as_array().unwrap().len(), 3);
    }
    // The recovered log is finished: there is nothing more to recover in it.
    let again = recover_eval_log(&recovered.path).unwrap_err();
    assert!(again.to_string().contains("nothing to recover"), "{again}");

    // The retry runs the two samples of the torn write.
    let retried = eval_retry(&task, &path, EvalOptions::new()).await.unwrap();
    assert_eq!(retried.log.status, "success", "{retried}");
    let log = read_eval_log(retried.location.as_ref().unwrap()).unwrap();
    let attempts: Vec<(String, Option<SampleAttempt>)> = log
        .samples
        .as_ref()
        .unwrap()
        .iter()
        .map(|s| (s.id.to_string(), s.attempt))
        .collect();
    let initial = Some(SampleAttempt::Initial);
    let restart = Some(SampleAttempt::Restart);
    assert_eq!(
        attempts,
        [
            ("1".into(), initial),
            ("2".into(), initial),
            ("3".into(), initial),
            ("4".into(), restart),
            ("5".into(), restart)
        ]
    );
    if let Some(read) = common::reference_read(retried.location.as_ref().unwrap()) {
        assert_eq!(read["header"]["status"], "success");
        assert_eq!(common::reference_keys(&read).len(), 5);
    }
}

#[tokio::test]
async fn a_log_of_another_task_or_shape_is_refused_with_the_reason() {
    let task = common::arithmetic_task(3);
    let dir = tempfile::tempdir().unwrap();
    let run = eval(&task, EvalOptions::new().log_dir(dir.path()))
        .await
        .unwrap();
    let path = run.location.unwrap();

    let mut other = common::arithmetic_task(3);
    other.name = "geometry".into();
    let err = eval_retry(&other, &path, EvalOptions::new())
        .await
        .unwrap_err();
    assert!(matches!(err, EvalError::Retry { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("task 'arithmetic', not 'geometry'"),
        "{err}"
    );

    // Fewer samples than the log has: not the task that wrote it.
    let smaller = common::arithmetic_task(2);
    let err = eval_retry(&smaller, &path, EvalOptions::new())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("sample 3 (epoch 1)"), "{err}");

    // A finished log has nothing to recover; a file of another kind is no log.
    let err = recover_eval_log(&path).unwrap_err();
    assert!(err.to_string().contains("status 'success'"), "{err}");
    let err = recover_eval_log(dir.path().join("x.txt")).unwrap_err();
    assert!(err.to_string().contains("neither"), "{err}");
}

/// Set in the child process that runs the evaluation [`killed_mid_run_and_retried`] kills.
const CHILD_DIR: &str = "ACTUATOR_RETRY_CHILD_DIR";

/// The samples of [`slow_task`].
const SLOW_SAMPLES: usize = 36;

/// The task the child runs and the parent retries: each call of `add` appends its first
/// addend (the sample's number) to `effects`, outside any sandbox, and each generation takes
/// a few milliseconds, so that the run lasts long enough to be killed part way.
fn slow_task(effects: PathBuf) -> Task {
    let model = FunctionModel::new("mockllm/model", |messages, _tools| {
        std::thread::sleep(Duration::from_millis(50));
        Ok(common::arithmetic_reply(messages))
    });
    let effects = Arc::new(effects);
    let add = ToolDef::builder("add")
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
        .handler(move |mut a: ToolArgs, _c: ToolContext| {
            let effects = effects.clone();
            async move {
                use std::io::Write;
                let x: i64 = a.required("x")?;
                let y: i64 = a.required("y")?;
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(effects.as_ref())
                    .unwrap();
                writeln!(f, "{x}").unwrap();
                Ok::<_, ToolFailure>(x + y)
            }
        })
        .build()
        .unwrap();
    common::arithmetic_task_with(SLOW_SAMPLES, model, add)
}

/// The child: runs the slow task into the directory it is given (until killed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn child_runs_the_slow_task_when_asked() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let task = slow_task(dir.join("effects.txt"));
    eval(
        &task,
        EvalOptions::new()
            .log_dir(dir.join("logs"))
            .log_buffer(1)
            .max_samples(2),
    )
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_mid_run_and_retried() {
    // Kill points spread over the run (which lasts at least 2.7 s: 36 samples, two at a
    // time, three 50 ms generations each): before the first flush, after one, after two.
    for delay_ms in [300, 1300, 2100] {
        let dir = tempfile::tempdir().unwrap();
        let log = common::kill_child_mid_run(
            "child_runs_the_slow_task_when_asked",
            CHILD_DIR,
            dir.path(),
            Duration::from_millis(delay_ms),
        );

        let crashed = read_eval_log(&log).unwrap();
        assert_eq!(crashed.status, "started", "killed at {delay_ms} ms");
        let kept = crashed.samples.as_ref().unwrap().clone();
        let effects = dir.path().join("effects.txt");
        let before = std::fs::read_to_string(&effects).unwrap_or_default();

        let task = slow_task(effects.clone());
        let retried = eval_retry(&task, &log, EvalOptions::new().max_samples(4))
            .await
            .unwrap();
        assert_eq!(retried.log.status, "success", "{retried}");
        let samples = read_eval_log(retried.location.as_ref().unwrap())
            .unwrap()
            .samples
            .unwrap();
        let ids: Vec<String> = samples.iter().map(|s| s.id.to_string()).collect();
        let expected: Vec<String> = (1..=SLOW_SAMPLES).map(|i| i.to_string()).collect();
        assert_eq!(ids, expected, "every sample once (killed at {delay_ms} ms)");
        let old = by_key(&kept);
        for s in &samples {
            match old.get(&(s.id.to_string(), s.epoch)) {
                Some(k) => {
                    assert_eq!(s.uuid, k.uuid);
                    assert_eq!(s.attempt, Some(SampleAttempt::Initial));
                }
                None => assert_eq!(s.attempt, Some(SampleAttempt::Restart)),
            }
        }
        // The retry's tool effects are the restarted samples' only.
        let after = std::fs::read_to_string(&effects).unwrap();
        let added = &after[before.len()..];
        for k in &kept {
            let n = k.id.to_string();
            assert!(!added.lines().any(|l| l == n), "sample {n} ran again");
        }
        // The retry's log, not the crashed one: a kill during a write leaves that one torn (no
        // zip directory), which only this crate's reader reads (the reference's fails on it).
        if let Some(reads) = common::reference_read_all(&[retried.location.unwrap()]) {
            assert_eq!(reads[0]["status"], "success");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unfinished_json_log_is_read_from_its_spool_recovered_and_retried() {
    let task = common::arithmetic_task(5);
    let dir = tempfile::tempdir().unwrap();
    let run = eval(
        &task,
        EvalOptions::new()
            .log_dir(dir.path())
            .log_format(actuator_eval::LogFormat::Json),
    )
    .await
    .unwrap();
    let path = run.location.unwrap();
    let whole = read_eval_log(&path).unwrap();

    // As a process killed while spooling sample 4 leaves it: the document holds the start,
    // the spool samples 1 to 3 and part of the line of 4.
    let mut start = whole.clone();
    start.status = "started".into();
    start.results = None;
    start.samples = None;
    std::fs::write(&path, serde_json::to_vec(&start).unwrap()).unwrap();
    let mut spool = Vec::new();
    for s in &whole.samples.as_ref().unwrap()[..3] {
        spool.extend(serde_json::to_vec(s).unwrap());
        spool.push(b'\n');
    }
    let fourth = serde_json::to_vec(&whole.samples.as_ref().unwrap()[3]).unwrap();
    spool.extend(&fourth[..fourth.len() / 2]);
    std::fs::write(path.with_extension("samples.jsonl"), spool).unwrap();

    let read = read_eval_log(&path).unwrap();
    assert_eq!(read.status, "started");
    assert_eq!(read.samples.as_ref().unwrap().len(), 3);

    let recovered = recover_eval_log(&path).unwrap();
    assert!(recovered.torn);
    assert!(
        recovered
            .path
            .to_string_lossy()
            .ends_with("-recovered.json")
    );
    let log = read_eval_log(&recovered.path).unwrap();
    assert_eq!(
        (log.status.as_str(), log.samples.unwrap().len()),
        ("error", 3)
    );
    if let Some(read) = common::reference_read(&recovered.path) {
        assert_eq!(read["header"]["error"], RECOVERED_MESSAGE);
        assert_eq!(read["samples"].as_array().unwrap().len(), 3);
    }

    let retried = eval_retry(&task, &path, EvalOptions::new()).await.unwrap();
    assert_eq!(retried.log.status, "success", "{retried}");
    let samples = read_eval_log(retried.location.unwrap())
        .unwrap()
        .samples
        .unwrap();
    let restarted: Vec<String> = samples
        .iter()
        .filter(|s| s.attempt == Some(SampleAttempt::Restart))
        .map(|s| s.id.to_string())
        .collect();
    assert_eq!(restarted, ["4", "5"]);
}
