//! The tools that run in the sandbox declare it, so a run that offers them without one is
//! refused before the model is called, naming the tool and how to give it one; `think` needs
//! nothing.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;

use actuator_agent::{RunOptions, react, run};
use actuator_model::{ModelOutput, ScriptedModel};
use actuator_sandbox::{LocalSandbox, SandboxHandle, testing};
use actuator_tools::{
    BashOptions, BashSessionOptions, ShellOptions, ThinkOptions, bash, bash_session, python,
    text_editor, think,
};

#[test]
fn the_sandbox_tools_declare_the_sandbox_and_think_does_not() {
    let tools = [
        bash(BashOptions::new()).unwrap(),
        python(ShellOptions::new()).unwrap(),
        text_editor(ShellOptions::new()).unwrap(),
        bash_session(BashSessionOptions::new()).unwrap(),
    ];
    for tool in &tools {
        let needs = tool.requirements();
        assert_eq!(needs.len(), 1, "{}", tool.name());
        assert!(needs[0].is_for::<SandboxHandle>(), "{}", tool.name());
        assert_eq!(needs[0].what(), "a sandbox");
    }
    assert!(
        think(ThinkOptions::new())
            .unwrap()
            .requirements()
            .is_empty()
    );
}

#[tokio::test]
async fn bash_without_a_sandbox_is_refused_before_the_model_is_called() {
    let model = Arc::new(ScriptedModel::new(Vec::<ModelOutput>::new()));
    let agent = react()
        .name("coder")
        .model(model.clone())
        .tools([
            bash(BashOptions::new()).unwrap(),
            think(ThinkOptions::new()).unwrap(),
        ])
        .build()
        .unwrap();
    let err = run(&agent, "Which Python is installed?", ())
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with("Cannot run agent 'coder': the tool 'bash' needs a sandbox, and the run has none: give the run one with RunOptions::new().resource(SandboxHandle::new(LocalSandbox::new()?))"),
        "{message}"
    );
    assert_eq!(model.calls(), 0);
}

#[tokio::test]
async fn with_a_sandbox_or_the_opt_out_it_runs() {
    let submit = || {
        ModelOutput::for_tool_calls(
            "scripted",
            "",
            vec![actuator_model::ToolCall::new(
                "c1",
                "submit",
                serde_json::json!({"answer": "ok"}),
            )],
        )
    };
    let agent = |model| {
        react()
            .model(Arc::new(model))
            .tools([bash(BashOptions::new()).unwrap()])
            .build()
            .unwrap()
    };
    let out = run(
        &agent(ScriptedModel::new([submit()])),
        "hi",
        RunOptions::new().allow_missing_resources(),
    )
    .await
    .unwrap();
    assert_eq!(out.answer(), Some("ok"));
    let Some(sandbox) =
        testing::confined(LocalSandbox::builder()).unwrap_or_else(|e| panic!("{e}"))
    else {
        return;
    };
    let out = run(
        &agent(ScriptedModel::new([submit()])),
        "hi",
        RunOptions::new().resource(SandboxHandle::new(sandbox)),
    )
    .await
    .unwrap();
    assert_eq!(out.answer(), Some("ok"));
}
