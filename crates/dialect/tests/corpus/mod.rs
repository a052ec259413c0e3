//! The corpus of real-world tool definitions (`tools.jsonl.gz`, see README.md), loaded as
//! Actuator would offer its tools. Shared by the dialect crate's corpus test and the Gemini
//! provider's (through `#[path]`).

use std::io::Read;

use actuator_tool_core::{ToolInfo, ToolParams, validate_tool_name};
use serde_json::Value;

/// The corpus's tools as Actuator would offer them, and how many it leaves out (an input schema
/// that is not an object schema). A name Actuator refuses (`validate_tool_name`, as the MCP
/// client does; many BFCL names hold dots) has each other character replaced by `_`, so that
/// the tool's schema is still checked.
pub fn corpus() -> (Vec<(String, ToolInfo)>, usize) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../dialect/tests/corpus/tools.jsonl.gz"
    );
    let file = std::fs::File::open(path).unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .unwrap();
    let mut tools = Vec::new();
    let mut left_out = 0;
    for line in text.lines() {
        let entry: Value = serde_json::from_str(line).unwrap();
        let mut name = entry["name"].as_str().unwrap().to_owned();
        if validate_tool_name(&name).is_err() {
            name = name
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .take(64)
                .collect();
        }
        match ToolParams::pass_through(&entry["inputSchema"]) {
            Ok(params) => {
                validate_tool_name(&name).unwrap();
                let description = entry["description"].as_str().unwrap_or_default();
                let source = entry["source"].as_str().unwrap().to_owned();
                tools.push((source, ToolInfo::new(name, description, params)));
            }
            Err(_) => left_out += 1,
        }
    }
    (tools, left_out)
}
