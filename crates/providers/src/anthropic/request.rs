//! Messages API request bodies: system text apart, alternating turns, tool results first in
//! one user message, thinking blocks replayed with their signatures.

use std::sync::Arc;

use actuator_dialect::Dialect;
use actuator_model::{ChatMessage, GenerateConfig, MessageContent};
use actuator_tool_core::{Content, Media, MediaSource, ToolChoice, ToolInfo};
use serde_json::{Map, Value, json};

/// `max_tokens` is required by the API; this is used when the config leaves it unset.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 4096;

pub(crate) fn build(
    model: &str,
    input: &[ChatMessage],
    tools: &[Arc<ToolInfo>],
    tool_choice: &ToolChoice,
    config: &GenerateConfig,
) -> Result<Value, String> {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    let thinking = thinking_budget(config)?;
    // The budget comes out of max_tokens: the default makes room for it.
    let max_tokens = config
        .max_tokens
        .unwrap_or(DEFAULT_MAX_TOKENS + thinking.unwrap_or(0));
    body.insert("max_tokens".into(), json!(max_tokens));
    if let Some(budget) = thinking {
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    let system: Vec<String> = input
        .iter()
        .filter_map(|m| match m {
            ChatMessage::System(s) => Some(s.content.text()),
            _ => None,
        })
        .filter(|t| !t.is_empty())
        .collect();
    let cache = caches_prompt(model, config);
    if !system.is_empty() {
        let system = system.join("\n\n");
        // A breakpoint needs the block form; without caching the plain string stays.
        let system = if cache {
            json!([{"type": "text", "text": system, "cache_control": ephemeral()}])
        } else {
            json!(system)
        };
        body.insert("system".into(), system);
    }
    let mut turns = messages(input, tools)?;
    if cache {
        mark_lookback(&mut turns);
        // Automatic caching: the API places a breakpoint on the last cacheable block.
        body.insert("cache_control".into(), ephemeral());
    }
    body.insert("messages".into(), Value::Array(turns));
    if !tools.is_empty() && *tool_choice != ToolChoice::None {
        let rendered: Vec<Value> = tools
            .iter()
            .map(|info| {
                let r = actuator_dialect::anthropic(info);
                if !r.report.is_empty() {
                    tracing::debug!(tool = %info.name, report = %r.report, "Anthropic dialect changed the tool's schema");
                }
                r.tool
            })
            .collect();
        let mut rendered = rendered;
        if cache && let Some(Value::Object(last)) = rendered.last_mut() {
            last.insert("cache_control".into(), ephemeral());
        }
        body.insert("tools".into(), Value::Array(rendered));
        let mut choice = match tool_choice {
            // Extended thinking rejects a forced tool choice: the model is offered the tools
            // and chooses (as the reference does).
            ToolChoice::Any | ToolChoice::Function { .. } if thinking.is_some() => {
                tracing::warn!(
                    ?tool_choice,
                    "Anthropic's extended thinking cannot force a tool: sending tool_choice auto"
                );
                json!({"type": "auto"})
            }
            ToolChoice::Any => json!({"type": "any"}),
            ToolChoice::Function { name } => json!({"type": "tool", "name": name}),
            ToolChoice::Auto | ToolChoice::None => json!({"type": "auto"}),
        };
        if config.parallel_tool_calls == Some(false) {
            choice["disable_parallel_tool_use"] = json!(true);
        }
        body.insert("tool_choice".into(), choice);
    }
    if config.temperature.is_some() || config.top_p.is_some() {
        // The Messages API (as its SDK 2.14 describes it, specs/anthropic) has no sampling
        // parameters: the API rejects unknown keys, so these are left out.
        tracing::debug!("temperature and top_p are not part of Anthropic's Messages API; not sent");
    }
    if let Some(stop) = &config.stop_seqs
        && !stop.is_empty()
    {
        body.insert("stop_sequences".into(), json!(stop));
    }
    if let Some(schema) = &config.response_schema {
        // Structured output: the answer's JSON Schema (name, description and strictness
        // have no place in Anthropic's format).
        body.insert(
            "output_config".into(),
            json!({"format": {"type": "json_schema", "schema": schema.json_schema}}),
        );
    }
    Ok(Value::Object(body))
}

/// Whether to place cache breakpoints (the reference's `cache_prompt`): unless the config
/// turns caching off, for every model but the old ones that cannot cache.
fn caches_prompt(model: &str, config: &GenerateConfig) -> bool {
    config.cache_prompt != Some(false)
        && !["claude-3-sonnet", "claude-2", "claude-instant"]
            .iter()
            .any(|old| model.contains(old))
}

/// A 5-minute cache breakpoint (the API's default time to live).
fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// Blocks the API rejects `cache_control` on.
const UNCACHEABLE: [&str; 2] = ["thinking", "redacted_thinking"];

/// Marks the second-to-last cacheable block of the conversation, as the reference does:
/// automatic caching covers the last one, and this gives a lookup a fallback when the last
/// block changes from one request to the next (a scorer's or an approver's edit, a branch).
fn mark_lookback(turns: &mut [Value]) {
    let mut blocks = turns
        .iter_mut()
        .rev()
        .filter_map(|turn| turn["content"].as_array_mut())
        .flat_map(|blocks| blocks.iter_mut().rev())
        .filter(|block| !UNCACHEABLE.contains(&block["type"].as_str().unwrap_or_default()));
    if let Some(Value::Object(block)) = blocks.nth(1) {
        block.insert("cache_control".into(), ephemeral());
    }
}

/// The extended-thinking budget of `config`, checked against the API's rules.
pub(crate) fn thinking_budget(config: &GenerateConfig) -> Result<Option<u32>, String> {
    let Some(budget) = config.reasoning_tokens else {
        return Ok(None);
    };
    if budget < MIN_THINKING_BUDGET {
        return Err(format!(
            "reasoning_tokens is {budget}, but Anthropic's extended thinking needs a budget of at least {MIN_THINKING_BUDGET} tokens: raise GenerateConfig::reasoning_tokens or leave it unset"
        ));
    }
    if let Some(max) = config.max_tokens
        && max <= budget
    {
        return Err(format!(
            "max_tokens ({max}) must be greater than reasoning_tokens ({budget}): the thinking budget is part of max_tokens, so raise max_tokens or leave it unset (the default makes room for the budget)"
        ));
    }
    Ok(Some(budget))
}

/// The smallest `budget_tokens` the Messages API takes.
const MIN_THINKING_BUDGET: u32 = 1024;

/// The turns: consecutive messages of one role merged (the API wants them alternating), tool
/// results as `tool_result` blocks of a user turn, before any other content of that turn.
///
/// A replayed call's arguments go back under the parameter names the dialect sent (it renames
/// those Anthropic rejects), as the model gave them.
fn messages(input: &[ChatMessage], tools: &[Arc<ToolInfo>]) -> Result<Vec<Value>, String> {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in input {
        let (role, blocks, results_first) = match m {
            ChatMessage::System(_) => continue,
            ChatMessage::User(u) => ("user", content_blocks(&u.content, false)?, false),
            ChatMessage::Assistant(a) => {
                let mut blocks = content_blocks(&a.content, true)?;
                for call in a.calls() {
                    let mut input = call.arguments.to_value().map_err(|e| {
                        format!("the arguments of call {} cannot be read: {e}", call.id)
                    })?;
                    if let Some(info) = tools.iter().find(|t| t.name == call.function) {
                        actuator_dialect::send_argument_names(Dialect::Anthropic, info, &mut input);
                    }
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.function,
                        "input": input,
                    }));
                }
                ("assistant", blocks, false)
            }
            ChatMessage::Tool(t) => {
                let mut result = Map::new();
                result.insert("type".into(), json!("tool_result"));
                result.insert(
                    "tool_use_id".into(),
                    json!(t.tool_call_id.as_deref().unwrap_or_default()),
                );
                match &t.error {
                    Some(e) => {
                        result.insert("content".into(), json!(e.message));
                        result.insert("is_error".into(), json!(true));
                    }
                    None => {
                        let blocks = content_blocks(&t.content, false)?;
                        if !blocks.is_empty() {
                            result.insert("content".into(), Value::Array(blocks));
                        }
                    }
                }
                ("user", vec![Value::Object(result)], true)
            }
        };
        match turns.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => {
                if results_first {
                    // Tool results go before anything else already in the turn.
                    let at = last_blocks
                        .iter()
                        .take_while(|b| b["type"] == "tool_result")
                        .count();
                    last_blocks.splice(at..at, blocks);
                } else {
                    last_blocks.extend(blocks);
                }
            }
            _ => turns.push((role, blocks)),
        }
    }
    Ok(turns
        .into_iter()
        .map(|(role, blocks)| json!({"role": role, "content": blocks}))
        .collect())
}

fn content_blocks(content: &MessageContent, assistant: bool) -> Result<Vec<Value>, String> {
    let parts = match content {
        MessageContent::Text(t) if t.is_empty() => return Ok(Vec::new()),
        MessageContent::Text(t) => return Ok(vec![json!({"type": "text", "text": t})]),
        MessageContent::Parts(parts) => parts,
    };
    let mut out = Vec::new();
    for part in parts {
        match part {
            Content::Text { text, .. } if text.is_empty() => {}
            Content::Text { text, .. } => out.push(json!({"type": "text", "text": text})),
            Content::Image(media) => out.push(json!({"type": "image", "source": source(media)})),
            Content::Document(media) => {
                out.push(json!({"type": "document", "source": source(media)}));
            }
            // Gemini's thought signatures mean nothing to Anthropic.
            Content::Reasoning { internal, .. }
                if internal.as_ref().is_some_and(|i| i["provider"] == "google") => {}
            Content::Reasoning {
                reasoning,
                signature,
                redacted,
                ..
            } if assistant => {
                if *redacted {
                    if let Some(data) = signature {
                        out.push(json!({"type": "redacted_thinking", "data": data}));
                    }
                } else if let Some(signature) = signature {
                    out.push(
                        json!({"type": "thinking", "thinking": reasoning, "signature": signature}),
                    );
                }
                // Reasoning with no signature came from another provider: Anthropic would
                // reject it, so it is not replayed.
            }
            Content::Audio(_) | Content::Video(_) => {
                return Err(
                    "Anthropic's Messages API does not accept audio or video content".into(),
                );
            }
            _ => {}
        }
    }
    Ok(out)
}

fn source(media: &Media) -> Value {
    match &media.source {
        MediaSource::Url { url } => json!({"type": "url", "url": url}),
        MediaSource::Base64 { data } => {
            json!({"type": "base64", "media_type": media.media_type, "data": data})
        }
    }
}
