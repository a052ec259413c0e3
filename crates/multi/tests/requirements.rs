//! What an agent's tools need, the tool or solver that runs the agent needs too: a supervisor
//! that can hand off to (or call) an agent with `query` is refused without a database, as is
//! an evaluation of it.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;

use actuator_agent::{Agent, RunOptions, react, run};
use actuator_model::{ModelOutput, ScriptedModel};
use actuator_multi::{Solver, as_solver, as_tool, handoff};
use actuator_tool_core::{
    ResourceRequirement, ToolArgs, ToolContext, ToolDef, ToolFailure, ToolRequirement,
};

struct Database;

fn query_tool() -> ToolDef {
    ToolDef::builder("query")
        .description("Queries the database.")
        .handler(|_args: ToolArgs, _ctx: ToolContext| async { Ok::<_, ToolFailure>("rows") })
        .build()
        .unwrap()
        .with_requirement(ResourceRequirement::of::<Database>(
            "a database",
            "add one to the run's resources",
        ))
}

fn analyst() -> Arc<dyn Agent> {
    Arc::new(
        react()
            .name("analyst")
            .description("Analyses the sales.")
            .model(Arc::new(ScriptedModel::new(Vec::<ModelOutput>::new())))
            .tools([query_tool()])
            .build()
            .unwrap(),
    )
}

fn needs_database(needs: &[ToolRequirement]) -> bool {
    needs.iter().any(|n| n.requirement.is_for::<Database>())
}

#[test]
fn as_tool_handoff_and_as_solver_carry_the_agents_requirements() {
    let tool = as_tool(analyst()).build().unwrap();
    assert!(tool.requirements()[0].is_for::<Database>());
    let transfer = handoff(analyst()).build().unwrap();
    assert!(transfer.requirements()[0].is_for::<Database>());
    let solver = as_solver(analyst()).build().unwrap();
    assert!(needs_database(&solver.requirements()));
}

#[tokio::test]
async fn a_supervisor_that_hands_off_is_refused_without_the_resource() {
    let model = Arc::new(ScriptedModel::new(Vec::<ModelOutput>::new()));
    let supervisor = react()
        .name("supervisor")
        .model(model.clone())
        .tools([handoff(analyst()).build().unwrap()])
        .build()
        .unwrap();
    assert!(needs_database(&supervisor.requirements()));
    let err = run(&supervisor, "How were sales?", ()).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("the tool 'transfer_to_analyst' needs a database"),
        "{err}"
    );
    assert_eq!(model.calls(), 0);
    // Given the resource, the check passes (and the scripted model, with nothing to say,
    // fails the run for its own reason).
    let err = run(
        &supervisor,
        "How were sales?",
        RunOptions::new().resource(Database),
    )
    .await
    .unwrap_err();
    assert!(!err.to_string().contains("needs a database"), "{err}");
}
