//! Structured output inside a run: the run's limits stop the generation, and a wrong answer
//! is an error with its text.

#![allow(clippy::unwrap_used, clippy::panic)]

use actuator_agent::limits::turn_limit;
use actuator_agent::{RunContext, StructuredRunError};
use actuator_model::{ChatMessage, GenerateConfig, ModelOutput, ScriptedModel};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Verdict {
    /// Whether to approve.
    approve: bool,
}

#[tokio::test]
async fn the_runs_limits_apply_and_a_wrong_answer_says_what_it_was() {
    let model = ScriptedModel::new([
        ModelOutput::from_content("m", r#"{"approve": "yes"}"#),
        ModelOutput::from_content("m", r#"{"approve": true}"#),
    ]);
    let input = [ChatMessage::user("Approve?")];
    let cx = RunContext::new().scoped(&[turn_limit(1)]);
    let err = cx
        .generate_structured::<Verdict>(&model, &input, &GenerateConfig::default())
        .await
        .unwrap_err();
    match &err {
        StructuredRunError::Answer(answer) => {
            let text = answer.to_string();
            assert!(
                text.contains("does not follow the schema 'Verdict'"),
                "{text}"
            );
            assert!(text.contains(r#"{"approve": "yes"}"#), "{text}");
        }
        other => panic!("{other:?}"),
    }
    // The turn limit of the run stops the next generation.
    let err = cx
        .generate_structured::<Verdict>(&model, &input, &GenerateConfig::default())
        .await
        .unwrap_err();
    match err {
        StructuredRunError::Run(run) => assert!(run.limit().is_some(), "{run:?}"),
        other => panic!("{other:?}"),
    }
    // Within the limits, the answer comes back typed.
    let model = ScriptedModel::new([ModelOutput::from_content("m", r#"{"approve": true}"#)]);
    let verdict: Verdict = RunContext::new()
        .generate_structured(&model, &input, &GenerateConfig::default())
        .await
        .unwrap();
    assert!(verdict.approve);
}
