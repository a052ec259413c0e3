//! Our client against the official MCP conformance suite's client scenarios: the suite
//! starts its test server and runs `examples/conformance_client.rs` (an `McpClient`, with
//! OAuth) against it. Each scenario is reported by name and must pass.
//!
//! Four of the suite's 26 client scenarios are not run, each for a reason (`docs/mcp.md`):
//! `auth/2025-03-26-oauth-metadata-backcompat` serves authorization-server metadata whose
//! issuer differs from where it was fetched, which rmcp refuses (RFC 8414's defence against
//! mix-up attacks) and so do we; `auth/client-credentials-basic`,
//! `auth/client-credentials-jwt` and `auth/cross-app-access-complete-flow` are extension
//! scenarios for grants `McpClient` does not offer yet.

#![cfg(feature = "oauth")]
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout)]

mod common;
#[path = "common/conformance_suite.rs"]
mod conformance_suite;

use std::path::PathBuf;
use std::time::Duration;

use conformance_suite::{Suite, scenario_results};

/// The client scenarios run, by name.
const SCENARIOS: [&str; 22] = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
];

/// The example binary cargo builds beside this test (`target/<profile>/examples/`).
fn client_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let profile_dir = exe.parent()?.parent()?;
    let binary = profile_dir.join("examples/conformance_client");
    if binary.exists() {
        return Some(binary);
    }
    let reason = format!(
        "the conformance client example is not built at {} (`cargo test` builds examples with \
         the tests; with a narrower selection, add `--example conformance_client`)",
        binary.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{reason}");
    println!("skipped: {reason}");
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_client_scenario_we_support_passes() {
    let Some(suite) = Suite::installed() else {
        return;
    };
    let Some(binary) = client_binary() else {
        return;
    };
    let command = binary.display().to_string();
    let mut failed = Vec::new();
    for scenario in SCENARIOS {
        let out = tempfile::tempdir().unwrap();
        let run = suite
            .run(
                &[
                    "client",
                    "--command",
                    &command,
                    "--scenario",
                    scenario,
                    "-o",
                ],
                out.path(),
                Duration::from_secs(120),
            )
            .await;
        let results = scenario_results(out.path());
        let checks: Vec<_> = results.into_iter().flat_map(|(_, checks)| checks).collect();
        let bad: Vec<_> = checks
            .iter()
            .filter(|c| c["status"] == "FAILURE" || c["status"] == "WARNING")
            .collect();
        let passed = !checks.is_empty() && bad.is_empty();
        println!(
            "{} {scenario}: {} checks",
            if passed { "pass" } else { "FAIL" },
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
        if !passed {
            failed.push(format!("{scenario}:\n{run}"));
        }
    }
    assert!(
        failed.is_empty(),
        "scenarios that did not pass:\n{}",
        failed.join("\n")
    );
}
