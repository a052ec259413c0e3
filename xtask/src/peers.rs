//! `cargo xtask bench --peers`: W2 (one `add` call) in Actuator and in the Rust peers rig and
//! rmcp, from the `peers/` crate (its own workspace, outside the default members like `fuzz/`).
//!
//! Builds `peers/benches/peers.rs` (a divan bench) in its own target folder, `peers/` under
//! the workspace's target, runs it once with `--behaviour` (what each framework does with a
//! wrongly typed argument and an unknown key) and once as a divan bench, records the medians
//! as `W2 peers|{name}`, and renders the rows the table shows right after our W2 row, plus
//! the behaviour table printed after it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

use crate::measure::{Measure, capture, ratio, show, show_ratio};

/// The row of the main table the peers' rows follow: ours, one `add` call, events on.
pub const ANCHOR: &str = "divan|execute/w2_execute_tools/add_1_call";

/// The key of Actuator's own figure in the peers binary, the one the peers are compared with.
const OURS: &str = "W2 peers|Actuator execute_tools";

/// The same, awaited inside the entered runtime: what the peers' `*_awaited` rows are
/// compared with.
const OURS_AWAITED: &str = "W2 peers|Actuator execute_tools, awaited";

/// Ours without an event sink (validation, the call and the message, nothing recorded): the
/// figure issue 39 compares with rmcp's bare router, which records nothing either.
const OURS_OFF: &str = "W2 peers|Actuator execute_tools, events off";

/// The same, awaited inside the entered runtime.
const OURS_OFF_AWAITED: &str = "W2 peers|Actuator execute_tools, events off, awaited";

/// Ours recording completed calls only (a log that declines pending events, as an
/// evaluation's does).
const OURS_RESULTS: &str = "W2 peers|Actuator execute_tools, results only";

/// The same, awaited inside the entered runtime.
const OURS_RESULTS_AWAITED: &str = "W2 peers|Actuator execute_tools, results only, awaited";

/// The benches of `peers/benches/peers.rs`: divan path, key, table label (peers only), and the
/// key of our figure the peer is compared with.
#[rustfmt::skip]
const BENCHES: [(&str, &str, Option<&str>, &str); 11] = [
    ("peers/actuator_execute_tools", OURS, None, OURS),
    ("peers/actuator_execute_tools_results_only", OURS_RESULTS, None, OURS_RESULTS),
    ("peers/actuator_execute_tools_results_only_awaited", OURS_RESULTS_AWAITED, None, OURS_RESULTS_AWAITED),
    ("peers/actuator_execute_tools_events_off", OURS_OFF, None, OURS_OFF),
    ("peers/actuator_execute_tools_events_off_awaited", OURS_OFF_AWAITED, None, OURS_OFF_AWAITED),
    ("peers/rig_toolset_execute", "W2 peers|rig-agent 0.44 ToolSet::execute",
     Some("W2 peer: rig-agent 0.44 `ToolSet::execute`, same `add` (the peer in the Inspect column, Actuator from the same binary)"), OURS),
    ("peers/rmcp_tool_router_call", "W2 peers|rmcp 3.11 ToolRouter::call",
     Some("W2 peer: rmcp 3.11 `ToolRouter::call`, router kept, same `add` (the peer in the Inspect column)"), OURS),
    ("peers/rmcp_call_tool_default_handler", "W2 peers|rmcp 3.11 call_tool, default #[tool_handler]",
     Some("W2 peer: rmcp 3.11 `call_tool` of the default `#[tool_handler]` (router rebuilt per call; the peer in the Inspect column)"), OURS),
    ("peers/actuator_execute_tools_awaited", OURS_AWAITED, None, OURS_AWAITED),
    ("peers/rig_toolset_execute_awaited", "W2 peers|rig-agent 0.44 ToolSet::execute, awaited",
     Some("W2 peer, awaited inside the runtime (no `block_on` per call, for both sides): rig-agent 0.44 `ToolSet::execute`"), OURS_AWAITED),
    ("peers/rmcp_tool_router_call_awaited", "W2 peers|rmcp 3.11 ToolRouter::call, awaited",
     Some("W2 peer, awaited inside the runtime (no `block_on` per call, for both sides): rmcp 3.11 `ToolRouter::call`"), OURS_AWAITED),
];

/// Rows that put rmcp's router beside ours recording less: nothing (events off), or completed
/// calls only (the peer's key, the label, ours).
#[rustfmt::skip]
const LESS_RECORDED_ROWS: [(&str, &str, &str); 4] = [
    ("W2 peers|rmcp 3.11 ToolRouter::call",
     "W2 peer: rmcp 3.11 `ToolRouter::call` beside Actuator with events off (no sink: validation, call and message only)", OURS_OFF),
    ("W2 peers|rmcp 3.11 ToolRouter::call, awaited",
     "W2 peer, awaited inside the runtime: rmcp 3.11 `ToolRouter::call` beside Actuator with events off", OURS_OFF_AWAITED),
    ("W2 peers|rmcp 3.11 ToolRouter::call",
     "W2 peer: rmcp 3.11 `ToolRouter::call` beside Actuator recording completed calls only (`EventLog::results_only`, as an evaluation's log)", OURS_RESULTS),
    ("W2 peers|rmcp 3.11 ToolRouter::call, awaited",
     "W2 peer, awaited inside the runtime: rmcp 3.11 `ToolRouter::call` beside Actuator recording completed calls only", OURS_RESULTS_AWAITED),
];

/// The frameworks of the behaviour table, in its column order, as the bench names them.
const FRAMEWORKS: [&str; 3] = [
    "Actuator `execute_tools`",
    "rig-agent 0.44 `ToolSet::execute`",
    "rmcp 3.11 `ToolRouter::call`",
];

/// One `BEHAVIOUR {json}` line of the bench.
#[derive(Debug, Clone, PartialEq)]
pub struct Behaviour {
    framework: String,
    case: String,
    arguments: String,
    is_error: bool,
    text: String,
}

/// The target folder of the peers crate: `peers` under the workspace's (`CARGO_TARGET_DIR`
/// when set), so `cargo clean` removes it and the root build's artifacts stay untouched.
fn target_dir(root: &Path) -> PathBuf {
    let target = match std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from) {
        // Relative to where cargo was started, not to `peers/` where the build runs.
        Some(dir) if dir.is_relative() => std::env::current_dir()
            .map(|cwd| cwd.join(&dir))
            .unwrap_or(dir),
        Some(dir) => dir,
        None => root.join("target"),
    };
    target.join("peers")
}

/// Builds and runs the peers bench; records its medians and returns the behaviour lines.
pub fn run(
    root: &Path,
    samples: u32,
    rust: &mut BTreeMap<String, Measure>,
) -> Result<Vec<Behaviour>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let t0 = Instant::now();
    let out = capture(
        Command::new(cargo)
            .current_dir(root.join("peers"))
            .env("CARGO_TARGET_DIR", target_dir(root))
            .args([
                "bench",
                "--no-run",
                "--bench",
                "peers",
                "--message-format=json-render-diagnostics",
            ]),
    )?;
    eprintln!(
        "   peers build: {:.1} s (target/peers)",
        t0.elapsed().as_secs_f64()
    );
    let exe = out
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find_map(|msg| {
            (msg["target"]["name"] == "peers")
                .then(|| msg["executable"].as_str().map(PathBuf::from))
                .flatten()
        })
        .ok_or("the peers build produced no 'peers' executable")?;

    let behaviour = parse_behaviour(&capture(Command::new(&exe).arg("--behaviour"))?);
    if behaviour.len() != FRAMEWORKS.len() * 3 {
        return Err(format!(
            "peers --behaviour printed {} BEHAVIOUR lines, expected {}",
            behaviour.len(),
            FRAMEWORKS.len() * 3
        ));
    }

    let text = capture(Command::new(&exe).args([
        "--bench",
        "--color",
        "never",
        "--sample-count",
        &samples.to_string(),
    ]))?;
    eprint!("{text}");
    record(&crate::divan::parse(&text), rust)?;
    Ok(behaviour)
}

/// Records the medians of the peers bench under their `W2 peers|…` keys.
fn record(
    medians: &[crate::divan::Median],
    rust: &mut BTreeMap<String, Measure>,
) -> Result<(), String> {
    for (path, key, _, _) in BENCHES {
        let median = medians
            .iter()
            .find(|m| m.path == path)
            .ok_or_else(|| format!("the peers bench printed no median for {path}"))?;
        rust.insert(key.to_owned(), Measure::seconds(median.seconds));
    }
    Ok(())
}

/// Reads the `BEHAVIOUR {json}` lines; other lines are ignored.
fn parse_behaviour(stdout: &str) -> Vec<Behaviour> {
    stdout
        .lines()
        .filter_map(|line| line.strip_prefix("BEHAVIOUR "))
        .filter_map(|json| serde_json::from_str::<Value>(json).ok())
        .filter_map(|v| {
            Some(Behaviour {
                framework: v["framework"].as_str()?.to_owned(),
                case: v["case"].as_str()?.to_owned(),
                arguments: v["arguments"].as_str()?.to_owned(),
                is_error: v["is_error"].as_bool()?,
                text: v["text"].as_str()?.to_owned(),
            })
        })
        .collect()
}

/// The peers' rows of the main table: Actuator (from the peers binary) in the Actuator
/// column, the peer in the comparison column, ratio = peer ÷ Actuator. Empty when the peers
/// did not run.
pub fn table_rows(rust: &BTreeMap<String, Measure>) -> String {
    let mut out = String::new();
    let labelled = BENCHES
        .iter()
        .filter_map(|&(_, key, label, compared)| Some((key, label?, compared)))
        .chain(LESS_RECORDED_ROWS);
    for (key, label, compared) in labelled {
        let (Some(&peer), Some(&ours)) = (rust.get(key), rust.get(compared)) else {
            continue;
        };
        let r = ratio(ours, peer).map_or_else(|| "–".to_owned(), show_ratio);
        out.push_str(&format!(
            "| {label} | {} | {} | {r} |\n",
            show(ours),
            show(peer)
        ));
    }
    out
}

/// The behaviour table: one row per case, one column per framework.
pub fn behaviour_table(rows: &[Behaviour]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nW2 peers: what the model is shown for each call of `add`\n\n| case | arguments |",
    );
    for f in FRAMEWORKS {
        out.push_str(&format!(" {f} |"));
    }
    out.push_str("\n|---|---|");
    out.push_str(&"---|".repeat(FRAMEWORKS.len()));
    out.push('\n');
    let mut cases: Vec<(&str, &str)> = Vec::new();
    for row in rows {
        if !cases.iter().any(|(c, _)| *c == row.case) {
            cases.push((&row.case, &row.arguments));
        }
    }
    for (case, arguments) in cases {
        out.push_str(&format!("| {case} | `{arguments}` |"));
        for f in FRAMEWORKS {
            let cell = rows
                .iter()
                .find(|r| r.framework == f && r.case == case)
                .map_or_else(
                    || "–".to_owned(),
                    |r| {
                        let verdict = if r.is_error { "error" } else { "accepted" };
                        format!("{verdict}: {}", cell_text(&r.text))
                    },
                );
            out.push_str(&format!(" {cell} |"));
        }
        out.push('\n');
    }
    out
}

/// A message on one table line: newlines and pipes escaped, long texts cut.
fn cell_text(text: &str) -> String {
    const MAX: usize = 160;
    let one_line = text.replace('\n', " ⏎ ").replace('|', "\\|");
    match one_line.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None => one_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The versions in the labels are the ones `peers/Cargo.toml` pins.
    #[test]
    fn labels_name_the_pinned_versions() {
        let manifest = include_str!("../../peers/Cargo.toml");
        assert!(manifest.contains(r#"rig-agent = { version = "=0.44.0""#));
        assert!(manifest.contains(r#"rmcp = { version = "=3.11.0""#));
        for (_, key, label, _) in BENCHES {
            let text = format!("{key} {}", label.unwrap_or(""));
            assert!(
                !text.contains("rig") || text.contains("rig-agent 0.44"),
                "{text}"
            );
            assert!(
                !text.contains("rmcp") || text.contains("rmcp 3.11"),
                "{text}"
            );
        }
    }

    #[test]
    fn medians_are_recorded_under_their_keys_and_rendered_beside_ours() {
        // In `BENCHES` order: ours, ours results only (both awaits), ours off (both), rig,
        // rmcp, rmcp's default handler, ours awaited, rig awaited, rmcp awaited.
        let medians: Vec<_> = [
            2e-6, 9e-7, 8e-7, 5e-7, 4e-7, 1e-6, 4e-7, 8e-6, 1.5e-6, 6e-7, 3e-7,
        ]
        .iter()
        .zip(BENCHES)
        .map(|(&seconds, (path, _, _, _))| crate::divan::Median {
            path: path.to_owned(),
            seconds,
        })
        .collect();
        let mut rust = BTreeMap::new();
        assert!(
            table_rows(&rust).is_empty(),
            "no rows when the peers did not run"
        );
        record(&medians, &mut rust).expect("all medians present");
        assert_eq!(rust[OURS].value, 2e-6);
        let rows = table_rows(&rust);
        let lines: Vec<_> = rows.lines().collect();
        assert_eq!(lines.len(), 9, "{rows}");
        assert!(
            lines[0].contains("| 2.00 µs | 1.00 µs | 0.5× |"),
            "{}",
            lines[0]
        );
        // An awaited peer is set beside our awaited figure, not the `block_on` one.
        assert!(lines[4].contains("awaited"), "{}", lines[4]);
        assert!(
            lines[4].contains("| 1.50 µs | 300 ns | 0.2× |"),
            "{}",
            lines[4]
        );
        // rmcp, which records nothing, is also set beside ours with events off...
        assert!(lines[6].contains("events off"), "{}", lines[6]);
        assert!(lines[6].contains("| 400 ns | 300 ns |"), "{}", lines[6]);
        // ...and beside ours recording completed calls only.
        assert!(lines[8].contains("completed calls only"), "{}", lines[8]);
        assert!(lines[8].contains("| 800 ns | 300 ns |"), "{}", lines[8]);
    }

    #[test]
    fn a_missing_median_is_an_error() {
        let mut rust = BTreeMap::new();
        let err = record(&[], &mut rust).expect_err("no medians");
        assert!(err.contains("peers/actuator_execute_tools"), "{err}");
    }

    #[test]
    fn behaviour_lines_make_one_row_per_case() {
        let mut stdout = String::from("noise\n");
        for case in ["valid", "unknown key"] {
            for (i, f) in FRAMEWORKS.iter().enumerate() {
                let line = serde_json::json!({"framework": f, "case": case,
                    "arguments": "{\"x\": 1}", "is_error": i == 0 && case != "valid",
                    "text": "a|b\nc"});
                stdout.push_str(&format!("BEHAVIOUR {line}\n"));
            }
        }
        let rows = parse_behaviour(&stdout);
        assert_eq!(rows.len(), 6);
        let table = behaviour_table(&rows);
        let lines: Vec<_> = table.lines().filter(|l| l.starts_with("| ")).collect();
        assert_eq!(lines.len(), 3, "{table}");
        assert!(
            lines[2].starts_with("| unknown key | `{\"x\": 1}` | error: a\\|b ⏎ c |"),
            "{table}"
        );
        assert!(lines[2].ends_with("| accepted: a\\|b ⏎ c |"), "{table}");
    }
}
