//! An evaluation's samples in a real OpenTelemetry consumer: Arize Phoenix receives, through
//! `EvalOptions::events(OtelSink)`, one trace per sample (the sample's span, the solver's run
//! under `solvers`, the scorers under `scorers`), and each score as the GenAI conventions'
//! evaluation result (`gen_ai.evaluation.result`) on its scorer's span, read back through
//! Phoenix's REST API.
//!
//! Phoenix stays on loopback (see tests/otel). Without it the test skips with a printed
//! reason, except when `CI` is set, where its absence is a failure.
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stderr)]

mod otel;

use std::sync::Arc;
use std::time::Duration;

use actuator::agent::react;
use actuator::eval::scorers::{MatchOptions, match_};
use actuator::eval::{Dataset, EvalOptions, Sample, Task, eval};
use actuator::model::{ModelOutput, ModelUsage, ScriptedModel, ToolCall};
use actuator::multi::as_solver;
use actuator::otel::OtelSink;
use serde_json::{Value, json};

use otel::{Phoenix, attribute, phoenix_venv};

#[test]
fn phoenix_receives_each_sample_as_a_trace_with_its_scores_as_evaluation_results() {
    let Some(venv) = phoenix_venv() else {
        return;
    };
    let phoenix = Phoenix::start(&venv);

    // Two samples, one answered right and one wrong, one generation each.
    let answers = ["191.5", "42"];
    let model = ScriptedModel::named(
        "mockllm/scripted",
        answers.map(|a| {
            ModelOutput::for_tool_calls(
                "scripted",
                "",
                vec![ToolCall::new("s1", "submit", json!({"answer": a}))],
            )
            .with_usage(ModelUsage::new(50, 5))
        }),
    );
    let agent = react()
        .name("solver")
        .model(Arc::new(model))
        .build()
        .unwrap();
    let task = Task::new(
        "heights",
        Dataset::new([
            Sample::new("Eiffel Tower minus the Great Pyramid?", "191.5"),
            Sample::new("And the other way round?", "-191.5"),
        ]),
        Arc::new(as_solver(Arc::new(agent)).build().unwrap()),
    )
    .scorer(match_(MatchOptions::default().numeric(true)));

    let sink = Arc::new(
        OtelSink::builder()
            .endpoint(phoenix.url("/v1/traces"))
            .service_name("actuator-eval-test")
            .build()
            .unwrap(),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // One sample at a time: the scripted model answers in order.
    let run = runtime
        .block_on(eval(
            &task,
            EvalOptions::new().max_samples(1).events(sink.clone()),
        ))
        .unwrap();
    assert_eq!(run.log.status, "success");
    sink.force_flush().unwrap();
    sink.shutdown().unwrap();

    // Per sample: sample, solvers, invoke_agent, chat, execute_tool submit, scorers, scorer.
    let spans = phoenix.spans(14, Duration::from_secs(30));
    let names: Vec<&str> = spans.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(spans.len(), 14, "{names:?}\n{}", phoenix.log_tail());
    let id = |span: &Value| span["context"]["span_id"].as_str().unwrap().to_owned();
    let trace = |span: &Value| span["context"]["trace_id"].as_str().unwrap().to_owned();
    let parent = |span: &Value| span["parent_id"].as_str().map(str::to_owned);
    let child = |of: &Value, name: &str| -> Value {
        spans
            .iter()
            .find(|s| s["name"] == name && parent(s) == Some(id(of)))
            .unwrap_or_else(|| panic!("no {name} under {}: {names:?}", of["name"]))
            .clone()
    };

    let mut results = Vec::new();
    for n in ["1", "2"] {
        let sample = spans
            .iter()
            .find(|s| s["name"] == format!("sample heights {n} epoch 1"))
            .unwrap_or_else(|| panic!("no sample {n}: {names:?}"));
        assert_eq!(parent(sample), None, "a sample is the root of its trace");
        let solvers = child(sample, "solvers solvers");
        let agent = child(&solvers, "invoke_agent solver");
        let chat = child(&agent, "chat scripted");
        assert_eq!(
            attribute(&chat, "gen_ai.usage.input_tokens"),
            Some(&json!(50))
        );
        let scorer = child(&child(sample, "scorers scorers"), "scorer match");
        for span in [&solvers, &agent, &chat, &scorer] {
            assert_eq!(trace(span), trace(sample), "one trace per sample");
        }
        let events = scorer["events"].as_array().cloned().unwrap_or_default();
        assert_eq!(events.len(), 1, "{scorer}");
        let event = &events[0];
        assert_eq!(event["name"], "gen_ai.evaluation.result");
        let attr = |key: &str| {
            let attributes = &event["attributes"];
            attributes
                .get(key)
                .or_else(|| key.split('.').try_fold(attributes, |v, part| v.get(part)))
                .cloned()
        };
        assert_eq!(attr("gen_ai.evaluation.name"), Some(json!("match")));
        results.push((
            attr("gen_ai.evaluation.score.label"),
            attr("gen_ai.evaluation.score.value"),
        ));
    }
    results.sort_by_key(|(label, _)| label.as_ref().map(Value::to_string));
    assert_eq!(
        results,
        vec![
            (Some(json!("C")), Some(json!(1.0))),
            (Some(json!("I")), Some(json!(0.0))),
        ]
    );
}
