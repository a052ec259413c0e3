//! A generation's cost from the price tables (issue 38 §4): a run's own `PriceTable`, the
//! process's prices (`set_model_cost` over the shipped table), the provider's own figure kept,
//! a cost limit that trips on priced usage, and an unknown price that is never taken for zero.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use actuator_agent::limits::{LimitKind, cost_limit, turn_limit};
use actuator_agent::{AgentErrorKind, RunOptions, react, run};
use actuator_events::{Event, EventLog};
use actuator_model::pricing::{ModelCost, PriceTable, set_model_cost};
use actuator_model::{FunctionModel, ModelUsage};
use common::*;

/// Calls `add` forever as `name`, reporting a million input and half a million output tokens
/// per turn, and a provider cost when given.
fn looping(name: &str, provider_cost: Option<f64>) -> actuator_agent::react::ReactAgent {
    let model = FunctionModel::new(name, move |_input, _tools| {
        Ok(call_add(1, 1).with_usage(ModelUsage {
            total_cost: provider_cost,
            ..ModelUsage::new(1_000_000, 500_000)
        }))
    });
    react()
        .model(Arc::new(model))
        .no_prompt()
        .tools([add_tool()])
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_runs_price_table_prices_each_generation_and_a_cost_limit_trips_on_it() {
    // $2 + $4 = $6 a turn: a $15 limit is exceeded at the third turn.
    let table = PriceTable::empty().with("test/priced", ModelCost::new(2.0, 8.0));
    let log = EventLog::new();
    let out = run(
        &looping("test/priced", None),
        "q",
        RunOptions::new()
            .limits([cost_limit(15.0), turn_limit(10)])
            .resource(table)
            .events(log.clone()),
    )
    .await
    .unwrap();
    let limit = out.limit.unwrap();
    assert_eq!(limit.kind, LimitKind::Cost);
    assert_eq!(out.usage.turns, 3);
    assert!((out.usage.cost - 18.0).abs() < 1e-9, "{}", out.usage.cost);
    // Each model event's usage carries its cost, as the reference's does (the log's source).
    let costs: Vec<f64> = log
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::Model(m) => m.output.as_ref()?.usage.as_ref()?.total_cost,
            _ => None,
        })
        .collect();
    assert_eq!(costs, vec![6.0, 6.0, 6.0]);
}

#[tokio::test]
async fn the_providers_own_cost_is_kept() {
    let table = PriceTable::empty().with("test/reported", ModelCost::new(2.0, 8.0));
    let out = run(
        &looping("test/reported", Some(0.5)),
        "q",
        RunOptions::new().limits([turn_limit(2)]).resource(table),
    )
    .await
    .unwrap();
    // The turn limit ends the run after the generation that exceeds it: three of them.
    assert_eq!(out.usage.turns, 3);
    assert!((out.usage.cost - 1.5).abs() < 1e-9, "{}", out.usage.cost);
}

#[tokio::test]
async fn process_prices_apply_to_runs_without_a_table_and_the_shipped_table_knows_real_models() {
    set_model_cost("test/process-priced", ModelCost::new(1.0, 1.0));
    let out = run(
        &looping("test/process-priced", None),
        "q",
        RunOptions::new().limits([turn_limit(2)]),
    )
    .await
    .unwrap();
    assert_eq!(out.usage.turns, 3);
    assert!((out.usage.cost - 4.5).abs() < 1e-9, "{}", out.usage.cost);

    // A dated snapshot of a shipped model takes its model's price.
    let shipped = PriceTable::builtin()
        .get("anthropic/claude-sonnet-4-5")
        .copied()
        .unwrap();
    let out = run(
        &looping("anthropic/claude-sonnet-4-5-20250929", None),
        "q",
        RunOptions::new().limits([turn_limit(1)]),
    )
    .await
    .unwrap();
    let expected = shipped.cost(&ModelUsage::new(1_000_000, 500_000));
    assert!(expected > 0.0);
    let turns = out.usage.turns as f64;
    assert!((out.usage.cost - expected * turns).abs() < 1e-9);
}

#[tokio::test]
async fn a_cost_limit_on_a_model_with_an_unknown_price_is_an_error_that_says_what_to_do() {
    let error = run(
        &looping("test/unpriced", None),
        "q",
        RunOptions::new().limits([cost_limit(1.0), turn_limit(5)]),
    )
    .await
    .unwrap_err();
    let AgentErrorKind::Config(message) = &error.kind else {
        panic!("expected a configuration error, got {error}");
    };
    assert!(message.contains("'test/unpriced'"), "{message}");
    assert!(message.contains("set_model_cost"), "{message}");
    // Without a cost limit the same run goes on, its cost unknown rather than zero.
    let log = EventLog::new();
    let out = run(
        &looping("test/unpriced", None),
        "q",
        RunOptions::new()
            .limits([turn_limit(1)])
            .events(log.clone()),
    )
    .await
    .unwrap();
    assert_eq!(out.limit.unwrap().kind, LimitKind::Turn);
    let unknown = log.events().iter().any(|e| match e {
        Event::Model(m) => m
            .output
            .as_ref()
            .and_then(|o| o.usage.as_ref())
            .is_some_and(|u| u.total_cost.is_none()),
        _ => false,
    });
    assert!(unknown);
}
