//! W8 of `cargo xtask bench`: one MCP `tools/call` round trip over stdio, both ways, beside the
//! official MCP Python SDK in the same run:
//!
//! - the SDK's client calling `add` on Actuator's server (`w8 serve`) and on the SDK's own
//!   MCPServer (`bench/mcp/w8.py`);
//! - Actuator's client (`w8 client`) and the SDK's client calling server-everything's `echo`.
//!
//! It needs the MCP components of `scripts/setup-test-env` (the `venv-mcp` virtualenv and
//! server-everything under `target/test-env`). Without them the step is skipped with a note,
//! unless it was asked for by name (`--only w8`) or `CI` is set: then it fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::measure::{Measure, capture, results};

/// The figures' keys (`W8|{case}`), as the bench binary and the script name their cases.
pub const OUR_SERVER: &str = "W8|python client -> actuator server, add";
/// The SDK's server, same client and tool.
pub const PY_SERVER: &str = "W8|python client -> python MCPServer, add";
/// A `resources/read` of `bench://note` on our server, from the SDK's client.
pub const OUR_READ: &str = "W8|python client -> actuator server, resources/read";
/// The same on the SDK's server.
pub const PY_READ: &str = "W8|python client -> python MCPServer, resources/read";
/// A sampling round trip (the tool `ask` asks the client's scripted model) on our server.
pub const OUR_SAMPLING: &str = "W8|python client -> actuator server, sampling";
/// The same on the SDK's server.
pub const PY_SAMPLING: &str = "W8|python client -> python MCPServer, sampling";
/// Our client on server-everything's `echo`.
pub const OUR_CLIENT: &str = "W8|actuator client -> server-everything echo";
/// The SDK's client on the same.
pub const PY_CLIENT: &str = "W8|python client -> server-everything echo";

/// `target/test-env`, where `scripts/setup-test-env` installs the interop components.
fn test_env(root: &Path) -> PathBuf {
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if Path::new(&dir).is_absolute() => PathBuf::from(dir),
        Some(dir) => root.join(dir),
        None => root.join("target"),
    };
    target.join("test-env")
}

/// Runs W8 with `exe` (the `w8` bench binary). `required`: fail rather than skip when the
/// components are missing.
pub fn run(
    exe: &Path,
    root: &Path,
    quick: bool,
    required: bool,
    rust: &mut BTreeMap<String, Measure>,
) -> Result<(), String> {
    let env = test_env(root);
    let python = env.join("venv-mcp/bin/python");
    let everything =
        env.join("npm-mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    for (path, what) in [
        (&python, "the MCP Python SDK virtualenv"),
        (&everything, "@modelcontextprotocol/server-everything"),
    ] {
        if !path.exists() {
            let reason = format!(
                "{what} is not at {}: run scripts/setup-test-env",
                path.display()
            );
            if required || std::env::var_os("CI").is_some() {
                return Err(format!("W8: {reason}"));
            }
            eprintln!("   W8 skipped: {reason}");
            return Ok(());
        }
    }
    let runs = if quick { "200" } else { "1000" };
    let mut ours = Command::new(exe);
    ours.args(["client", "--runs", runs, "node"])
        .arg(&everything)
        .arg("stdio");
    results(&capture(&mut ours)?, rust);
    let mut theirs = Command::new(&python);
    theirs
        .arg(root.join("bench/mcp/w8.py"))
        .arg(runs)
        .arg(&everything)
        .arg(exe)
        .arg("serve")
        .current_dir(root);
    results(&capture(&mut theirs)?, rust);
    for key in [
        OUR_SERVER,
        PY_SERVER,
        OUR_READ,
        PY_READ,
        OUR_SAMPLING,
        PY_SAMPLING,
        OUR_CLIENT,
        PY_CLIENT,
    ] {
        if !rust.contains_key(key) {
            return Err(format!("W8 printed no '{key}' figure"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Unit;

    #[test]
    fn the_table_sets_each_actuator_figure_beside_the_sdks_of_the_same_step() {
        let us = |v: f64| Measure {
            value: v * 1e-6,
            unit: Unit::Seconds,
        };
        let mut rust = BTreeMap::new();
        let mut out = String::new();
        results(
            concat!(
                "RESULT {\"workload\": \"W8\", \"case\": \"python client -> actuator server, add\", \"median\": 400.0, \"unit\": \"us\"}\n",
                "RESULT {\"workload\": \"W8\", \"case\": \"python client -> python MCPServer, add\", \"median\": 1600.0, \"unit\": \"us\"}\n",
            ),
            &mut rust,
        );
        rust.insert(OUR_CLIENT.into(), us(200.0));
        rust.insert(PY_CLIENT.into(), us(500.0));
        // Without an Inspect run the SDK's figures are there all the same.
        out.push_str(&crate::report::table(&rust, None));
        let server = out.lines().find(|l| l.contains("Actuator server")).unwrap();
        assert!(server.contains("| 400 µs | 1.60 ms | 4.0× |"), "{server}");
        let client = out.lines().find(|l| l.contains("Actuator client")).unwrap();
        assert!(client.contains("| 200 µs | 500 µs | 2.5× |"), "{client}");
    }
}
