//! The log's own writes failing part way, as on a full disk: the run ends with a clear, typed
//! error (the `io::Error` as its source), and the log on disk still reads, with the reference's
//! own `read_eval_log`, holding every sample written before the failure once.
//!
//! A full disk is simulated with a file size limit (`RLIMIT_FSIZE`): a write past the limit
//! fails part way with `EFBIG`, as one past the disk's end fails with `ENOSPC`. The limit is
//! the process's, so this binary has this one test (nextest runs each test in a process of
//! its own; `cargo test` runs this binary's tests in one).

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use actuator_agent::{AgentError, RunContext};
use actuator_eval::{
    Dataset, EvalError, EvalOptions, FailOnError, LogError, LogFormat, Sample, Task, eval,
    read_eval_log,
};
use actuator_model::{BoxFuture, ChatMessage, ModelOutput};
use actuator_multi::{Solver, TaskState};
use rustix::process::{Resource, Rlimit, Signal, getrlimit, setrlimit};
use tokio::signal::unix::{SignalKind, signal};

/// Answers with a couple of kilobytes that compress poorly, so that the log grows quickly.
struct Verbose;
impl Solver for Verbose {
    fn solve<'a>(
        &'a self,
        state: &'a mut TaskState,
        _cx: &'a RunContext,
    ) -> BoxFuture<'a, Result<(), AgentError>> {
        Box::pin(async move {
            let input = state.messages[0].text();
            let mut x: u64 = input.bytes().fold(0x9e37_79b9_7f4a_7c15, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x1000_0000_01b3)
            });
            let noise: String = (0..256)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    format!("{x:016x}")
                })
                .collect();
            let answer = format!("{input} {noise}");
            state.messages.push(ChatMessage::assistant(answer.clone()));
            state.output = ModelOutput::from_content("verbose", answer);
            Ok(())
        })
    }
}

const SAMPLES: usize = 250;

fn task() -> Task {
    Task::new(
        "verbose",
        Dataset::new((1..=SAMPLES).map(|i| Sample::new(format!("s{i}"), format!("s{i}")))),
        Arc::new(Verbose),
    )
}

/// Limits the size of any file this process writes (`None`: no limit).
fn limit_file_size(bytes: Option<u64>) {
    let hard = getrlimit(Resource::Fsize).maximum;
    setrlimit(
        Resource::Fsize,
        Rlimit {
            current: bytes.or(hard),
            maximum: hard,
        },
    )
    .unwrap();
}

fn only_file(dir: &Path) -> Option<PathBuf> {
    let mut files = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path());
    let first = files.next();
    assert!(files.next().is_none(), "one log, no leftovers, in {dir:?}");
    first
}

async fn run(dir: &Path, format: LogFormat, limit: Option<u64>) -> Result<PathBuf, EvalError> {
    let options = EvalOptions::new()
        .max_samples(10)
        .log_buffer(1)
        .fail_on_error(FailOnError::Never)
        .log_format(format)
        .log_dir(dir);
    limit_file_size(limit);
    let run = eval(&task(), options).await;
    limit_file_size(None);
    run.map(|r| r.location.unwrap())
}

/// The write error under the evaluation's error, with the limit's `EFBIG` as its source.
fn assert_write_error(err: &EvalError, context: &str) {
    let EvalError::Log(LogError::Write { path, source, .. }) = err else {
        panic!("{context}: not a write error: {err:?}");
    };
    assert_eq!(
        source.raw_os_error(),
        Some(27),
        "{context}: EFBIG: {source}"
    );
    let text = err.to_string();
    assert!(
        text.contains(&path.display().to_string()) && text.contains("free disk space"),
        "{context}: says what failed and what to do: {text}"
    );
    let cause = std::error::Error::source(err).unwrap();
    assert!(cause.is::<std::io::Error>(), "{context}: {cause:?}");
}

#[tokio::test]
async fn a_log_that_cannot_be_written_part_way_ends_the_run_with_a_clear_error_and_still_reads() {
    // SIGXFSZ would end the process at the limit; handled, the write fails instead.
    let _xfsz = signal(SignalKind::from_raw(Signal::XFSZ.as_raw())).unwrap();

    // The whole log's size, unlimited.
    let whole = tempfile::tempdir().unwrap();
    let full = run(whole.path(), LogFormat::Eval, None).await.unwrap();
    let size = std::fs::metadata(&full).unwrap().len();
    assert_eq!(
        read_eval_log(&full).unwrap().samples.unwrap().len(),
        SAMPLES
    );

    // The disk fills at points through the run: in the start, in the samples' writes, in the
    // final header.
    let mut logs = Vec::new();
    let mut dirs = Vec::new();
    for limit in [
        200,
        size / 10,
        size * 3 / 10,
        size / 2,
        size * 7 / 10,
        size * 9 / 10,
        size - 20_000,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let context = format!("a limit of {limit} of {size} bytes");
        let err = run(dir.path(), LogFormat::Eval, Some(limit))
            .await
            .unwrap_err();
        let log = only_file(dir.path());
        assert_write_error(&err, &context);
        let Some(log) = log else {
            // Only a start that cannot be written leaves no log (nothing was recorded).
            assert!(limit < 1000, "{context}: no log left");
            continue;
        };
        let read = read_eval_log(&log).unwrap_or_else(|e| panic!("{context}: unreadable: {e}"));
        let samples = read.samples.unwrap();
        let keys: BTreeSet<String> = samples.iter().map(|s| s.id.to_string()).collect();
        assert_eq!(keys.len(), samples.len(), "{context}: each sample once");
        if limit > size / 2 {
            assert!(samples.len() >= 100, "{context}: {} kept", samples.len());
        }
        // Ended with its header when there was room for one, else read from its journal.
        match read.status.as_str() {
            "error" => assert!(
                read.error
                    .unwrap()
                    .message
                    .starts_with("Cannot write the log"),
                "{context}"
            ),
            other => assert_eq!(other, "started", "{context}"),
        }
        logs.push((log, samples.len(), read.status, context));
        dirs.push(dir);
    }

    // The JSON format: samples are spooled beside the log, and the document assembled at the
    // end (beside it too, then renamed over it): the spool fills, and the document ends with
    // the samples spooled before, and the error.
    let whole_json = tempfile::tempdir().unwrap();
    let full_json = run(whole_json.path(), LogFormat::Json, None).await.unwrap();
    let json_size = std::fs::metadata(&full_json).unwrap().len();
    let dir = tempfile::tempdir().unwrap();
    let err = run(dir.path(), LogFormat::Json, Some(json_size * 6 / 10))
        .await
        .unwrap_err();
    assert_write_error(&err, "the .json format");
    let spool = err.to_string();
    assert!(spool.contains(".samples.jsonl"), "names the spool: {spool}");
    let json = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    let read_json = read_eval_log(&json).unwrap();
    assert_eq!(read_json.status, "error");
    let spooled = read_json.samples.unwrap();
    let keys: BTreeSet<String> = spooled.iter().map(|s| s.id.to_string()).collect();
    assert!(!spooled.is_empty() && keys.len() == spooled.len());

    // Near the end, the last samples do not fit but the header does.
    assert_eq!(logs.last().unwrap().2, "error");

    let paths: Vec<PathBuf> = logs.iter().map(|(p, ..)| p.clone()).chain([json]).collect();
    let Some(read) = common::reference_read_all(&paths) else {
        return;
    };
    for ((_, kept, status, context), by_reference) in logs.iter().zip(&read) {
        assert_eq!(&by_reference["status"], status, "{context}");
        let keys: BTreeSet<String> = by_reference["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s[0].to_string())
            .collect();
        assert_eq!(
            keys.len(),
            *kept,
            "{context}: the reference reads them all, once"
        );
    }
    let json_by_reference = read.last().unwrap();
    assert_eq!(json_by_reference["status"], "error");
    assert_eq!(
        json_by_reference["samples"].as_array().unwrap().len(),
        spooled.len()
    );
}
