//! The reference reads every log we write: `inspect_ai.log.read_eval_log` (header only and
//! whole) on both formats, and `inspect log dump`; every sample's messages, scores and events
//! come back as we wrote them.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::path::Path;
use std::process::Command;

use actuator_agent::limits::message_limit;
use actuator_eval::{EvalOptions, FailOnError, LogFormat, Sample, eval, read_eval_log};
use serde_json::Value;

/// Every field we wrote is in what the reference read, with the same value (the reference
/// adds fields of its own, with their defaults).
fn contains(theirs: &Value, ours: &Value, at: &str) -> Result<(), String> {
    match (theirs, ours) {
        (Value::Object(t), Value::Object(o)) => {
            for (k, v) in o {
                if v.is_null() {
                    continue;
                }
                let Some(tv) = t.get(k) else {
                    return Err(format!("{at}.{k} is missing from the reference's reading"));
                };
                contains(tv, v, &format!("{at}.{k}"))?;
            }
            Ok(())
        }
        (Value::Array(t), Value::Array(o)) if t.len() == o.len() => t
            .iter()
            .zip(o)
            .enumerate()
            .try_for_each(|(i, (tv, ov))| contains(tv, ov, &format!("{at}[{i}]"))),
        (Value::Number(t), Value::Number(o))
            if (t.as_f64().unwrap() - o.as_f64().unwrap()).abs() < 1e-9 =>
        {
            Ok(())
        }
        (t, o) if t == o => Ok(()),
        (t, o) => Err(format!("{at}: the reference read {t}, we wrote {o}")),
    }
}

fn reference_reading(python: &Path, log: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/inspect/check_log.py");
    let out = Command::new(python).arg(script).arg(log).output().unwrap();
    assert!(
        out.status.success(),
        "the reference could not read {}:\n{}",
        log.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

async fn check_format(python: &Path, format: LogFormat) {
    let dir = tempfile::tempdir().unwrap();
    let mut task = common::arithmetic_task(3).limits([message_limit(12)]);
    task.dataset
        .samples
        .push(Sample::new("What is 5 + 5? (answer wrong)", "10"));
    task.dataset
        .samples
        .push(Sample::new("Keep adding 1 + 1 forever", "2"));
    let run = eval(
        &task,
        EvalOptions::new()
            .model("mockllm/model")
            .log_dir(dir.path())
            .log_format(format)
            .log_buffer(2)
            .fail_on_error(FailOnError::Never),
    )
    .await
    .unwrap();
    assert_eq!(run.log.status, "success");
    let accuracy = run.score("match").unwrap().metric("accuracy").unwrap();
    assert!((accuracy - 0.6).abs() < 1e-9, "{accuracy}");
    let path = run.location.clone().unwrap();
    assert_eq!(
        path.extension().unwrap(),
        match format {
            LogFormat::Eval => "eval",
            LogFormat::Json => "json",
        }
    );

    let ours = read_eval_log(&path).unwrap();
    let samples = ours.samples.unwrap();
    assert_eq!(samples.len(), 5);
    let theirs = reference_reading(python, &path);
    assert_eq!(theirs["header"]["status"], "success");
    assert_eq!(theirs["header"]["task"], "arithmetic");
    assert_eq!(theirs["header"]["dataset_samples"], 5);
    contains(
        &theirs["header"]["results"],
        &serde_json::to_value(&run.log.results).unwrap(),
        "results",
    )
    .unwrap();
    contains(
        &theirs["header"]["stats"]["model_usage"],
        &Value::Object(run.log.stats.model_usage),
        "usage",
    )
    .unwrap();

    let read = theirs["samples"].as_array().unwrap();
    assert_eq!(read.len(), samples.len());
    for (t, o) in read.iter().zip(&samples) {
        let at = format!("sample {}", o.id);
        assert_eq!(t["id"], serde_json::to_value(&o.id).unwrap(), "{at}");
        contains(
            &t["messages"],
            &Value::Array(o.messages.clone()),
            &format!("{at} messages"),
        )
        .unwrap();
        contains(&t["output"], &o.output, &format!("{at} output")).unwrap();
        contains(
            &t["scores"],
            &Value::Object(o.scores.clone().unwrap_or_default()),
            &format!("{at} scores"),
        )
        .unwrap();
        contains(
            &t["events"],
            &Value::Array(o.events.clone()),
            &format!("{at} events"),
        )
        .unwrap();
        contains(
            &t["model_usage"],
            &Value::Object(o.model_usage.clone()),
            &format!("{at} usage"),
        )
        .unwrap();
    }
    // What each sample's transcript holds, as the reference sees it.
    let first = &read[0];
    let kinds: Vec<&str> = first["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"span_begin"), "{kinds:?}");
    assert!(
        kinds.contains(&"model") && kinds.contains(&"tool"),
        "{kinds:?}"
    );
    // The reference's layout: top-level `solvers` and `scorers` spans, a `scorer` span per
    // scorer holding its score event; no span of the sample itself.
    let events = first["events"].as_array().unwrap();
    let span = |name: &str| {
        events
            .iter()
            .find(|e| e["event"] == "span_begin" && e["name"] == name)
            .unwrap_or_else(|| panic!("no span {name}: {kinds:?}"))
    };
    for top in ["solvers", "scorers"] {
        assert_eq!(span(top)["type"], top);
        assert!(span(top)["parent_id"].is_null(), "{}", span(top));
    }
    assert!(!events.iter().any(|e| e["type"] == "sample"), "{kinds:?}");
    let scorer = span("match");
    assert_eq!(scorer["type"], "scorer");
    assert_eq!(scorer["parent_id"], span("scorers")["id"]);
    let score = events
        .iter()
        .find(|e| e["event"] == "score")
        .expect("a score event");
    assert_eq!(score["scorer"], "match");
    assert_eq!(score["score"]["value"], first["scores"]["match"]["value"]);
    assert_eq!(score["target"], first["target"]);
    assert_eq!(score["intermediate"], false);
    let approval = first["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["event"] == "approval")
        .expect("an approval event");
    assert_eq!(approval["approver"], "auto");
    assert_eq!(approval["decision"], "approve");
    assert_eq!(approval["call"]["function"], "add");
    let tool = first["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["event"] == "tool")
        .unwrap();
    assert_eq!(tool["function"], "add");
    assert!(tool["message_id"].is_string(), "{tool}");
    let limited = read
        .iter()
        .find(|s| s["limit"].is_object())
        .expect("the forever sample hit its limit");
    assert_eq!(limited["limit"]["type"], "message");
    assert!(
        limited["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["event"] == "sample_limit")
    );
    let wrong = read
        .iter()
        .find(|s| s["input"].as_str().is_some_and(|i| i.contains("wrong")))
        .unwrap();
    assert_eq!(wrong["scores"]["match"]["value"], "I");

    // The reference's command line dumps it too.
    let inspect = python.with_file_name("inspect");
    let dump = Command::new(&inspect)
        .args(["log", "dump"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        dump.status.success(),
        "inspect log dump failed: {}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let dumped: Value = serde_json::from_slice(&dump.stdout).unwrap();
    assert_eq!(dumped["eval"]["task"], "arithmetic");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_reads_our_eval_logs() {
    let Some(python) = common::inspect_python() else {
        return;
    };
    check_format(&python, LogFormat::Eval).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_reads_our_json_logs() {
    let Some(python) = common::inspect_python() else {
        return;
    };
    check_format(&python, LogFormat::Json).await;
}

/// A long conversation's model events are written condensed, as the reference writes them:
/// each distinct message once in `events_data`, each event's input as references. The log
/// grows with the conversation, not its square, and both readers give every event its whole
/// input back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_conversation_is_written_once_and_read_back_in_full() {
    let Some(python) = common::inspect_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut task = common::arithmetic_task(0).limits([message_limit(120)]);
    task.dataset
        .samples
        .push(Sample::new("Keep adding 1 + 1 forever", "2"));
    let run = eval(
        &task,
        EvalOptions::new()
            .model("mockllm/model")
            .log_dir(dir.path())
            .log_format(LogFormat::Json)
            .fail_on_error(FailOnError::Never),
    )
    .await
    .unwrap();
    let path = run.location.unwrap();

    // As written: inputs are references into the pool.
    let raw: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let sample = &raw["samples"][0];
    let pool = sample["events_data"]["messages"].as_array().unwrap();
    let conversation = sample["messages"].as_array().unwrap().len();
    assert!(conversation >= 100, "{conversation}");
    assert!(
        pool.len() <= conversation,
        "each message once: {} pooled for {conversation}",
        pool.len()
    );
    let models: Vec<&Value> = sample["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "model")
        .collect();
    assert!(models.len() >= 40, "{}", models.len());
    for event in &models {
        assert_eq!(event["input"], Value::Array(vec![]), "{event}");
        assert!(event["input_refs"].is_array(), "{event}");
    }

    // As read, by us and by the reference: the last model event has the whole conversation
    // before its answer.
    let ours = read_eval_log(&path).unwrap();
    let ours = &ours.samples.unwrap()[0];
    assert!(ours.events_data.is_none());
    let last_input = |events: &[Value]| {
        events.iter().rfind(|e| e["event"] == "model").unwrap()["input"]
            .as_array()
            .unwrap()
            .len()
    };
    let our_last = last_input(&ours.events);
    assert!(our_last + 2 >= conversation, "{our_last} of {conversation}");
    let theirs = reference_reading(&python, &path);
    let their_events = theirs["samples"][0]["events"].as_array().unwrap();
    assert_eq!(last_input(their_events), our_last);
    contains(
        &theirs["samples"][0]["events"],
        &Value::Array(ours.events.clone()),
        "events",
    )
    .unwrap();
}
