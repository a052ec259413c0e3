//! model_graded_qa: the reference's template and instructions, the last grade wins, and a
//! reply without one is unscored as `grader_failed`.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};

use actuator_eval::scorers::{DEFAULT_INSTRUCTIONS, DEFAULT_TEMPLATE, model_graded_qa};
use actuator_eval::{Scorer, Target};
use actuator_model::{ChatMessage, FunctionModel, MessageSource, ModelOutput};
use actuator_multi::TaskState;

fn state(question: &str, answer: &str) -> TaskState {
    let mut q = ChatMessage::user(question);
    if let ChatMessage::User(u) = &mut q {
        u.source = Some(MessageSource::Input);
    }
    TaskState {
        messages: vec![q],
        output: ModelOutput::from_content("m", answer),
        ..TaskState::default()
    }
}

fn grader(reply: &'static str, seen: Arc<Mutex<Vec<String>>>) -> Arc<FunctionModel> {
    Arc::new(FunctionModel::new("grader", move |messages, _tools| {
        seen.lock().unwrap().push(messages[0].text());
        Ok(ModelOutput::from_content("grader", reply))
    }))
}

#[tokio::test]
async fn the_grader_reads_the_reference_prompt_and_its_last_grade_counts() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let scorer = model_graded_qa(grader(
        "GRADE: I at first... on reflection GRADE: C",
        seen.clone(),
    ));
    let score = scorer
        .score(
            &state("What is the capital of France?", "Paris"),
            &Target::from("Paris"),
        )
        .await
        .unwrap();
    assert_eq!(serde_json::to_value(&score.value).unwrap(), "C");
    assert_eq!(score.answer.as_deref(), Some("Paris"));
    let prompt = seen.lock().unwrap()[0].clone();
    let expected = DEFAULT_TEMPLATE
        .replace("{question}", "What is the capital of France?")
        .replace("{answer}", "Paris")
        .replace("{criterion}", "Paris")
        .replace("{instructions}", DEFAULT_INSTRUCTIONS);
    assert_eq!(prompt, expected);

    let score = model_graded_qa(grader("I cannot decide.", Arc::default()))
        .score(&state("q", "a"), &Target::from("t"))
        .await
        .unwrap();
    assert_eq!(serde_json::to_value(&score.value).unwrap(), "N");
    assert_eq!(score.reason.as_deref(), Some("grader_failed"));
    assert_eq!(
        score.explanation.as_deref(),
        Some("Grade not found in model output: I cannot decide.")
    );
}

#[tokio::test]
async fn the_template_and_instructions_are_the_references() {
    let Some(python) = common::inspect_python() else {
        return;
    };
    let out = std::process::Command::new(python)
        .args([
            "-c",
            "import json; from inspect_ai.scorer._model import DEFAULT_MODEL_GRADED_QA_TEMPLATE as t, default_instructions as d; print(json.dumps([t, d(False)]))",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let [template, instructions]: [String; 2] = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(DEFAULT_TEMPLATE, template);
    assert_eq!(DEFAULT_INSTRUCTIONS, instructions);
}
