//! Our client against the official MCP conformance suite's client scenarios: the suite
//! starts its test server and runs `examples/conformance_client.rs` (an `McpClient`, with
//! OAuth) against it. Each scenario is reported by name and must pass.
//!
//! One of the suite's 26 client scenarios is not run against 0.1.16:
//! `auth/2025-03-26-oauth-metadata-backcompat` there serves authorization-server metadata
//! whose issuer differs from where it was fetched, which rmcp refuses (RFC 8414's defence
//! against mix-up attacks) and so do we. The suite fixed its mock in the 0.2.0 line
//! (conformance #359); `docs/mcp.md` records our run of that prerelease.

#![cfg(feature = "oauth-jwt")]
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout)]

mod common;
#[path = "common/conformance_suite.rs"]
mod conformance_suite;

use std::path::{Path, PathBuf};
use std::time::Duration;

use conformance_suite::{Suite, scenario_results};
use serde_json::Value;

/// The client scenarios run, by name.
const SCENARIOS: [&str; 25] = [
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
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/cross-app-access-complete-flow",
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
        if results.is_empty() {
            failed.push(format!("{scenario}: no results\n{run}"));
        }
        for bad in failures(out.path(), &results) {
            failed.push(format!("{bad}\n{run}"));
        }
    }
    assert!(
        failed.is_empty(),
        "scenarios that did not pass:\n{}",
        failed.join("\n")
    );
}

/// The extension scenarios of the 0.2.0 prerelease we do not offer, each with its reason:
/// rmcp implements neither DPoP-bound tokens (RFC 9449) nor the workload-identity JWT
/// bearer grant (RFC 7523 section 2.1), and the suite never scores extensions.
const NOT_OFFERED: [&str; 3] = ["auth/dpop", "auth/dpop-nonce", "auth/wif-jwt-bearer"];

/// The suite's 0.2.0 prerelease: exactly the client scenarios spec revision 2025-11-25
/// requires (frozen at its release) with the extensions and later additions it runs beside
/// them, and the two 2025-03-26 back-compatibility scenarios, whose metadata mock the
/// prerelease fixed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_suite_passes_every_client_scenario_2025_11_25_requires() {
    let Some(suite) = Suite::next() else {
        return;
    };
    let Some(binary) = client_binary() else {
        return;
    };
    let command = binary.display().to_string();
    let runs: [&[&str]; 3] = [
        &["--requirements", "2025-11-25"],
        &["--scenario", "auth/2025-03-26-oauth-metadata-backcompat"],
        &["--scenario", "auth/2025-03-26-oauth-endpoint-fallback"],
    ];
    let mut failed = Vec::new();
    let mut seen = Vec::new();
    for selection in runs {
        let out = tempfile::tempdir().unwrap();
        let mut args = vec!["client", "--command", &command];
        args.extend_from_slice(selection);
        args.push("-o");
        let run = suite.run(&args, out.path(), Duration::from_secs(300)).await;
        let results: Vec<_> = scenario_results(out.path())
            .into_iter()
            .filter(|(name, _)| !NOT_OFFERED.contains(&name.as_str()))
            .collect();
        if results.is_empty() {
            failed.push(format!("{selection:?}: no results\n{run}"));
        }
        seen.extend(results.iter().map(|(name, _)| name.clone()));
        for bad in failures(out.path(), &results) {
            failed.push(format!("{bad}\n{run}"));
        }
    }
    // The 18 scenarios 2025-11-25 requires, the 2 back-compatibility ones, and the
    // unscored ones we offer: client credentials (2), enterprise-managed authorization and
    // JSON Schema 2020-12 preservation.
    assert!(seen.len() >= 24, "too few scenarios ran: {seen:?}");
    assert!(
        failed.is_empty(),
        "scenarios that did not pass:\n{}",
        failed.join("\n")
    );
}

/// Scenarios whose server a correct client refuses: it gives up after repeated step-up
/// challenges, or the protected resource names another server.
const REFUSED: [&str; 2] = ["auth/scope-retry-limit", "auth/resource-mismatch"];

/// Every scenario under `dir` that failed: a failing or warning check, no checks at all, or
/// a client that did not finish (the example prints `<scenario>: <result>` when it does) or,
/// where it must refuse, did.
fn failures(dir: &Path, results: &[(String, Vec<Value>)]) -> Vec<String> {
    let mut failed = Vec::new();
    for (scenario, checks) in results {
        let bad: Vec<_> = checks
            .iter()
            .filter(|c| c["status"] == "FAILURE" || c["status"] == "WARNING")
            .collect();
        let finished = client_output(dir, scenario).starts_with(&format!("{scenario}: "));
        let refuses = REFUSED.contains(&scenario.as_str());
        let passed = !checks.is_empty() && bad.is_empty() && finished != refuses;
        println!(
            "{} {scenario}: {} checks{}",
            if passed { "pass" } else { "FAIL" },
            checks.len(),
            match (finished, refuses) {
                (false, false) => ", the client did not finish",
                (true, true) => ", the client did not refuse",
                _ => "",
            }
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
            failed.push(scenario.clone());
        }
    }
    failed
}

/// What the client printed in `scenario`'s result directory under `dir`.
fn client_output(dir: &Path, scenario: &str) -> String {
    let Some(parent) = dir.join(scenario).parent().map(Path::to_path_buf) else {
        return String::new();
    };
    let leaf = scenario.rsplit('/').next().unwrap_or(scenario);
    std::fs::read_dir(parent)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .strip_prefix(leaf)
                .is_some_and(|rest| rest.starts_with("-20"))
        })
        .find_map(|e| std::fs::read_to_string(e.path().join("stdout.txt")).ok())
        .unwrap_or_default()
}
