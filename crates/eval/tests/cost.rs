//! The log records each sample's cost as the reference does: `total_cost` in the sample's and
//! the evaluation's `model_usage`, priced from the process's prices, and read back by the
//! reference's own reader (issue 38 §4).

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use actuator_eval::{EvalOptions, eval, read_eval_log};
use actuator_model::FunctionModel;
use actuator_model::pricing::{ModelCost, set_model_cost};

const MODEL: &str = "test/eval-priced";

#[tokio::test]
async fn each_samples_cost_is_in_its_model_usage_and_the_reference_reads_it() {
    // $1 per million input tokens and $2 per million output: each generation of the
    // arithmetic model (10 in, 5 out) costs $0.00002.
    set_model_cost(MODEL, ModelCost::new(1.0, 2.0));
    let model = FunctionModel::new(MODEL, |messages, _tools| {
        Ok(common::arithmetic_reply(messages))
    });
    let task = common::arithmetic_task_on(3, model);
    let dir = tempfile::tempdir().unwrap();
    let run = eval(&task, EvalOptions::new().model(MODEL).log_dir(dir.path()))
        .await
        .unwrap();
    assert_eq!(run.log.status, "success");
    let path = run.location.unwrap();
    let log = read_eval_log(&path).unwrap();
    let samples = log.samples.unwrap();
    let mut total = 0.0;
    for sample in &samples {
        let usage = &sample.model_usage[MODEL];
        let turns = usage["input_tokens"].as_u64().unwrap() / 10;
        assert!(turns >= 2, "{usage}");
        let cost = usage["total_cost"].as_f64().unwrap();
        assert!((cost - turns as f64 * 0.00002).abs() < 1e-12, "{usage}");
        total += cost;
    }
    let header_cost = log.stats.model_usage[MODEL]["total_cost"].as_f64().unwrap();
    assert!((header_cost - total).abs() < 1e-12);

    let Some(theirs) = common::reference_read(&path) else {
        return;
    };
    for (ours, theirs) in samples.iter().zip(theirs["samples"].as_array().unwrap()) {
        let read = theirs["model_usage"][MODEL]["total_cost"].as_f64().unwrap();
        let wrote = ours.model_usage[MODEL]["total_cost"].as_f64().unwrap();
        assert!((read - wrote).abs() < 1e-12);
    }
}
