//! Structured output in OpenAI's strict mode where the schema allows it, as tools are: the
//! answer's schema goes through the strict dialect (every property required, optional ones
//! nullable, objects closed), or out non-strict with the dialect's reason logged; the `null`s
//! a strict schema made the model write for optional properties are removed from the answer,
//! so that it is checked against the schema the caller gave.

use actuator_model::{GenerateConfig, MessageContent, ModelOutput};
use actuator_tool_core::{ToolInfo, ToolParams};
use serde_json::Value;

/// `config` with its response schema in strict form when `strict_by_default` (OpenAI itself,
/// unless strict tools were turned off) and the caller did not turn strictness off; and the
/// schema as a tool, for [`restore`], when it was made strict.
pub(crate) fn prepare(
    config: GenerateConfig,
    strict_by_default: bool,
) -> (GenerateConfig, Option<ToolInfo>) {
    let Some(schema) = config.response_schema.as_ref() else {
        return (config, None);
    };
    if !strict_by_default || schema.strict == Some(false) {
        return (config, None);
    }
    let params = match ToolParams::pass_through(&schema.json_schema) {
        Ok(params) => params,
        Err(e) => {
            tracing::warn!(schema = %schema.name, reason = %e, "structured output is sent without strict mode: its schema is not an object schema");
            return (config, None);
        }
    };
    let info = ToolInfo::new(
        schema.name.as_str(),
        schema.description.clone().unwrap_or_default(),
        params,
    );
    let rendered = actuator_dialect::openai_strict(&info);
    if rendered.tool["function"]["strict"] != Value::Bool(true) {
        tracing::warn!(schema = %schema.name, report = %rendered.report, "structured output is sent without strict mode: OpenAI's strict mode cannot take its schema");
        let mut config = config;
        if let Some(schema) = config.response_schema.as_mut() {
            schema.strict = schema.strict.map(|_| false);
        }
        return (config, None);
    }
    let mut config = config;
    if let Some(schema) = config.response_schema.as_mut() {
        schema.json_schema = rendered.tool["function"]["parameters"].clone();
        schema.strict = Some(true);
    }
    (config, Some(info))
}

/// Removes from the answer the `null`s that stand for optional properties left out (see
/// [`actuator_dialect::strip_strict_nulls`]), when the schema was made strict.
pub(crate) fn restore(out: &mut ModelOutput, strict: Option<&ToolInfo>) {
    let Some(info) = strict else {
        return;
    };
    let Ok(mut answer) = serde_json::from_str::<Value>(&out.completion()) else {
        return; // not JSON: left for the caller's check to report, with the text
    };
    if actuator_dialect::strip_strict_nulls(info, &mut answer).is_empty() {
        return;
    }
    let text = answer.to_string();
    match out.message_mut() {
        Some(message) if matches!(message.content, MessageContent::Text(_)) => {
            message.content = MessageContent::Text(text.into());
        }
        _ => out.set_completion(text),
    }
}
