//! The top of a tool's parameters. OpenAI and Anthropic take only an object schema there: a
//! top-level `anyOf`, `oneOf` or `allOf` (and for OpenAI `enum` or `not`) rejects the whole
//! request ("input_schema does not support oneOf, allOf, or anyOf at the top level"). MCP
//! servers use them to say "at least one of these parameters" (`anyOf` of `required` lists).

use serde_json::Value;

use crate::report::{ChangeKind, DialectReport};
use crate::schema::merge_all_of;

/// The keywords Anthropic rejects at the top level.
pub(crate) const ANTHROPIC: &[&str] = &["anyOf", "oneOf", "allOf"];
/// The keywords OpenAI rejects at the top level.
pub(crate) const OPENAI: &[&str] = &["anyOf", "oneOf", "allOf", "enum", "not"];

/// Removes `forbidden` keywords from the top of `schema`: an `allOf` whose parts can be merged
/// into it is merged ([`ChangeKind::Rewritten`]); anything else is dropped
/// ([`ChangeKind::Dropped`]) and left to Actuator's validation, which still enforces it.
pub(crate) fn plain(
    schema: &mut Value,
    provider: &str,
    forbidden: &[&str],
    report: &mut DialectReport,
) {
    let Value::Object(m) = schema else {
        return;
    };
    if m.contains_key("allOf")
        && let Some(single) = merge_all_of(m)
        && single.get("type") == m.get("type")
    {
        *m = single;
        report.push(
            "/allOf",
            ChangeKind::Rewritten,
            format!("{provider} rejects allOf at the top level; it was merged into the schema"),
        );
    }
    for key in forbidden {
        if m.shift_remove(*key).is_some() {
            report.push(
                format!("/{key}"),
                ChangeKind::Dropped,
                format!(
                    "{provider} rejects {key} at the top level of a tool's parameters; it is \
                     enforced by Actuator's validation only"
                ),
            );
        }
    }
}
