//! Tools for the tests, built by hand.

use std::sync::Arc;

use actuator_tool_core::{ToolInfo, ToolParams};
use serde_json::json;

/// `add(x, y)`, both required integers (strict-compatible).
pub fn add() -> Arc<ToolInfo> {
    let mut p = ToolParams::default();
    p.properties.insert(
        "x".into(),
        json!({"type": "integer", "description": "First addend."}),
    );
    p.properties.insert(
        "y".into(),
        json!({"type": "integer", "description": "Second addend."}),
    );
    p.required = vec!["x".into(), "y".into()];
    Arc::new(ToolInfo::new("add", "Add two integers.", p))
}

/// `read(path, limit?)`: an optional parameter, nullable in strict mode.
pub fn read() -> Arc<ToolInfo> {
    let mut p = ToolParams::default();
    p.properties.insert(
        "path".into(),
        json!({"type": "string", "description": "The file."}),
    );
    p.properties.insert(
        "limit".into(),
        json!({"type": "integer", "description": "Most lines."}),
    );
    p.required = vec!["path".into()];
    Arc::new(ToolInfo::new("read", "Read a file.", p))
}

/// `tag(labels)`: a map of strings, which strict mode cannot express (goes out non-strict).
pub fn tag() -> Arc<ToolInfo> {
    let mut p = ToolParams::default();
    p.properties.insert(
        "labels".into(),
        json!({"type": "object", "additionalProperties": {"type": "string"}, "description": "Labels."}),
    );
    p.properties.insert(
        "note".into(),
        json!({"type": "string", "description": "A note."}),
    );
    p.required = vec!["labels".into()];
    Arc::new(ToolInfo::new("tag", "Tag a thing.", p))
}
