//! A tool's progress reports (`ToolContext::report_progress`) in an agent run are the run's
//! info events, with the tool and call they came from.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use actuator_agent::limits::turn_limit;
use actuator_agent::{RunOptions, react, run};
use actuator_model::ScriptedModel;
use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure};
use common::*;

#[tokio::test]
async fn a_tools_progress_is_an_event_of_the_run() {
    use actuator_events::{Event, EventLog};
    use actuator_tool_core::ProgressReport;
    let indexer = ToolDef::builder("index")
        .description("Indexes two pages.")
        .handler(|_args: ToolArgs, ctx: ToolContext| async move {
            ctx.report_progress(ProgressReport::new(1.0).total(2.0).message("page 1"));
            ctx.report_progress(ProgressReport::new(2.0).total(2.0));
            Ok::<_, ToolFailure>("indexed")
        })
        .build()
        .unwrap();
    let agent = react()
        .model(Arc::new(ScriptedModel::new(vec![
            call("Indexing.", "index", serde_json::json!({})),
            submit("done"),
        ])))
        .tools([indexer])
        .build()
        .unwrap();
    let log = EventLog::new();
    let out = run(
        &agent,
        "index",
        RunOptions::new()
            .limits([turn_limit(5)])
            .events(log.clone()),
    )
    .await
    .unwrap();
    assert_eq!(out.answer(), Some("done"));
    let progress: Vec<String> = log
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::Info(i) if i.source.as_deref() == Some("progress") => Some(i.message.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(progress.len(), 2, "{progress:?}");
    assert!(progress[0].starts_with("index ("), "{progress:?}");
    assert!(progress[0].ends_with("): 1 of 2: page 1"), "{progress:?}");
    assert!(progress[1].ends_with("): 2 of 2"), "{progress:?}");
}
