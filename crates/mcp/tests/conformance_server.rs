//! Our server against the official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! pinned in `scripts/test-env/mcp-conformance.sh`): every server scenario, each reported by
//! name, each required to pass.

#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout)]

mod common;
#[path = "common/conformance.rs"]
mod conformance;
#[path = "common/conformance_suite.rs"]
mod conformance_suite;

use std::path::Path;
use std::time::Duration;

use actuator_mcp::{HttpOptions, serve_http};
use serde_json::Value;

use conformance::conformance_server;
use conformance_suite::{Suite, scenario_results};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_server_scenario_of_the_suite_passes() {
    let Some(suite) = Suite::installed() else {
        return;
    };
    against_our_server(&suite, &["--suite", "all"]).await;
}

/// The suite's 0.2.0 prerelease, running exactly what spec revision 2025-11-25 requires
/// (frozen at its release), plus what it reports unscored for that revision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_suite_passes_every_server_scenario_2025_11_25_requires() {
    let Some(suite) = Suite::next() else {
        return;
    };
    against_our_server(&suite, &["--requirements", "2025-11-25"]).await;
}

/// Runs `suite`'s server scenarios `selection` against our conformance server over HTTP,
/// and checks each passed.
async fn against_our_server(suite: &Suite, selection: &[&str]) {
    let http = serve_http(conformance_server(), HttpOptions::default())
        .await
        .expect("the server starts");
    let out = tempfile::tempdir().expect("a temp dir");
    let url = http.url();
    let mut args = vec!["server", "--url", &url];
    args.extend_from_slice(selection);
    args.push("-o");
    let run = suite.run(&args, out.path(), Duration::from_secs(300)).await;
    http.shutdown().await;
    let results = scenario_results(out.path());
    report_and_check(&results, out.path(), &run);
}

fn report_and_check(results: &[(String, Vec<Value>)], dir: &Path, run: &str) {
    assert!(
        results.len() >= 32,
        "the suite reported {} scenarios, expected all 32 server scenarios (output in {}):\n{run}",
        results.len(),
        dir.display()
    );
    let mut failed = Vec::new();
    for (scenario, checks) in results {
        let bad: Vec<&Value> = checks
            .iter()
            .filter(|c| c["status"] != "SUCCESS" && c["status"] != "INFO")
            .collect();
        println!(
            "{} {scenario}: {} checks",
            if bad.is_empty() { "pass" } else { "FAIL" },
            checks.len()
        );
        for check in &bad {
            println!(
                "    {} {}: {}",
                check["status"],
                check["id"],
                check["errorMessage"].as_str().unwrap_or_default()
            );
        }
        if !bad.is_empty() {
            failed.push(scenario.clone());
        }
    }
    assert!(
        failed.is_empty(),
        "scenarios that did not pass: {failed:?}\n{run}"
    );
}
