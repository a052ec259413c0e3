//! A run whose tools need a resource it lacks is refused before it starts, naming the tool and
//! how to provide it; `allow_missing_resources` keeps the reference's behaviour, where only
//! the model reads the tool's error.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use actuator_agent::limits::turn_limit;
use actuator_agent::{AgentErrorKind, RunContext, RunOptions, react, run};
use actuator_model::{ChatMessage, ScriptedModel};
use actuator_tool_core::{
    ResourceRequirement, ToolArgs, ToolContext, ToolDef, ToolError, ToolFailure, ToolRequirement,
};
use common::*;

/// The resource the `query` tool needs.
struct Database(&'static str);

fn query_tool() -> ToolDef {
    ToolDef::builder("query")
        .description("Queries the database.")
        .handler(|_args: ToolArgs, ctx: ToolContext| async move {
            match ctx.extensions.get::<Database>() {
                Some(db) => Ok::<_, ToolFailure>(format!("rows from {}", db.0)),
                None => Err(ToolError::new("There is no database.").into()),
            }
        })
        .build()
        .unwrap()
        .with_requirement(ResourceRequirement::of::<Database>(
            "a database",
            "add one with RunOptions::new().resource(Database(..))",
        ))
}

fn agent(model: Arc<ScriptedModel>) -> actuator_agent::react::ReactAgent {
    react()
        .name("reporter")
        .model(model)
        .tools([add_tool(), query_tool()])
        .build()
        .unwrap()
}

fn query_then_submit() -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new(vec![
        call("Querying.", "query", serde_json::json!({})),
        submit("done"),
    ]))
}

#[test]
fn react_reports_its_tools_requirements_once_each() {
    use actuator_agent::Agent;
    let agent = agent(query_then_submit());
    let needs = agent.requirements();
    assert_eq!(needs.len(), 1, "{needs:?}");
    assert_eq!(needs[0].tool, "query");
    assert!(needs[0].requirement.is_for::<Database>());
}

#[tokio::test]
async fn a_run_without_the_resource_is_refused_before_the_model_is_called() {
    let model = query_then_submit();
    let err = run(&agent(model.clone()), "report", [turn_limit(5)])
        .await
        .unwrap_err();
    assert!(matches!(err.kind, AgentErrorKind::Config(_)), "{err:?}");
    let message = err.to_string();
    assert!(
        message.starts_with("Cannot run agent 'reporter': the tool 'query' needs a database, and the run has none: add one with RunOptions::new().resource(Database(..))"),
        "{message}"
    );
    assert!(message.contains("allow_missing_resources"), "{message}");
    assert_eq!(model.calls(), 0, "the model was called");
}

#[tokio::test]
async fn a_run_with_the_resource_runs() {
    let out = run(
        &agent(query_then_submit()),
        "report",
        RunOptions::new()
            .limits([turn_limit(5)])
            .resource(Database("sales")),
    )
    .await
    .unwrap();
    assert_eq!(out.answer(), Some("done"));
    let result = out
        .state
        .messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::Tool(t) => Some(t.content.text()),
            _ => None,
        })
        .unwrap();
    assert_eq!(result, "rows from sales");
}

#[tokio::test]
async fn allowing_missing_resources_keeps_the_reference_behaviour() {
    let out = run(
        &agent(query_then_submit()),
        "report",
        RunOptions::new()
            .limits([turn_limit(5)])
            .allow_missing_resources(),
    )
    .await
    .unwrap();
    // The model read the tool's error, and the run went on.
    let error = out
        .state
        .messages
        .iter()
        .find_map(|m| match m {
            ChatMessage::Tool(t) => t.error.as_ref().map(|e| e.message.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(error, "There is no database.");
    assert_eq!(out.answer(), Some("done"));
}

#[tokio::test]
async fn nested_runs_check_and_inherit_the_choice() {
    let inner = agent(query_then_submit());
    // Inside a run without the resource, a nested run is refused too…
    let err = RunContext::new()
        .run(&inner, "report", ())
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("the tool 'query' needs a database")
    );
    // …unless the enclosing run allowed it, or gave the resource.
    let allowed = RunContext::new().allowing_missing_resources();
    assert!(allowed.run(&inner, "report", ()).await.is_ok());
    let given = RunContext::new().with_resource(Database("sales"));
    let inner = agent(query_then_submit());
    assert_eq!(
        given.run(&inner, "report", ()).await.unwrap().answer(),
        Some("done")
    );
}

#[test]
fn requirements_of_tools_are_listed_once_per_tool_and_resource() {
    let tools = [query_tool(), query_tool(), add_tool()];
    let needs = ToolRequirement::of_tools(&tools);
    assert_eq!(needs.len(), 1);
    assert!(
        needs[0]
            .missing_message()
            .starts_with("the tool 'query' needs a database")
    );
}
