//! The server the official conformance suite drives: the tools, resources and prompts its
//! server scenarios name (`test_simple_text`, `test://static-text`, `test_simple_prompt`, …),
//! each built from Actuator's public API the way a user would build them.

use std::time::Duration;

use actuator_mcp::{
    HandlerError, Prompt, PromptArgument, PromptMessage, Resource, ResourceContent,
    ResourceTemplate, ServeOptions, ToolServer,
};
use actuator_tool_core::{
    Content, ElicitationRequest, LogEntry, LogLevel, Media, MediaSource, ProgressReport,
    SamplingMessage, SamplingRequest, ToolArgs, ToolContext, ToolDef, ToolError, ToolFailure,
    ToolParams,
};
use serde_json::{Value, json};

/// A 1×1 red PNG.
pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A 16-sample silent WAV.
const WAV: &str =
    "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA";

fn media(data: &str, mime: &str) -> Media {
    Media {
        source: MediaSource::Base64 {
            data: data.to_owned(),
        },
        media_type: mime.to_owned(),
        filename: None,
        internal: None,
    }
}

fn no_params() -> ToolParams {
    ToolParams::from_value(&json!({"type": "object", "properties": {}})).expect("a valid schema")
}

/// A tool with no arguments whose body is `run`.
fn tool<F, Fut>(name: &str, description: &str, run: F) -> ToolDef
where
    F: Fn(ToolArgs, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Vec<Content>, ToolFailure>> + Send + 'static,
{
    tool_with(name, description, no_params(), run)
}

fn tool_with<F, Fut>(name: &str, description: &str, params: ToolParams, run: F) -> ToolDef
where
    F: Fn(ToolArgs, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Vec<Content>, ToolFailure>> + Send + 'static,
{
    ToolDef::builder(name)
        .description(description)
        .parameters(params)
        .handler(run)
        .build()
        .expect("a valid tool")
}

fn string_arg(args: &ToolArgs, name: &str) -> String {
    args.as_map()
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn one_string(name: &str, description: &str) -> ToolParams {
    ToolParams::from_value(&json!({
        "type": "object",
        "properties": {name: {"type": "string", "description": description}},
        "required": [name],
    }))
    .expect("a valid schema")
}

fn host_error(e: actuator_tool_core::HostError) -> ToolFailure {
    ToolError::new(e.to_string()).into()
}

fn elicitation_text(result: &actuator_tool_core::ElicitationResult) -> String {
    let content = result.content.clone().map_or(Value::Null, Value::Object);
    format!(
        "Elicitation completed: action={}, content={content}",
        result.action
    )
}

fn tools() -> Vec<ToolDef> {
    vec![
        tool("test_simple_text", "Returns simple text.", |_, _| async {
            Ok(vec![Content::text(
                "This is a simple text response for testing.",
            )])
        }),
        tool("test_image_content", "Returns an image.", |_, _| async {
            Ok(vec![Content::Image(media(PNG, "image/png"))])
        }),
        tool("test_audio_content", "Returns audio.", |_, _| async {
            Ok(vec![Content::Audio(media(WAV, "audio/wav"))])
        }),
        tool(
            "test_embedded_resource",
            "Returns an embedded resource.",
            |_, _| async {
                Ok(vec![
                    ResourceContent::text(
                        "test://embedded-resource",
                        "text/plain",
                        "This is an embedded resource content.",
                    )
                    .to_content(),
                ])
            },
        ),
        tool(
            "test_multiple_content_types",
            "Returns text, an image and a resource.",
            |_, _| async {
                Ok(vec![
                    Content::text("Multiple content types test:"),
                    Content::Image(media(PNG, "image/png")),
                    ResourceContent::text(
                        "test://mixed-content-resource",
                        "application/json",
                        r#"{"test":"data","value":123}"#,
                    )
                    .to_content(),
                ])
            },
        ),
        tool(
            "test_tool_with_logging",
            "Logs three times while it runs.",
            |_, ctx| async move {
                for (i, message) in [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ]
                .into_iter()
                .enumerate()
                {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    ctx.log(LogEntry::new(LogLevel::Info, message));
                }
                Ok(vec![Content::text("Logged three messages.")])
            },
        ),
        tool("test_error_handling", "Always fails.", |_, _| async {
            Err(ToolError::new("This tool intentionally returns an error for testing").into())
        }),
        tool(
            "test_tool_with_progress",
            "Reports its progress.",
            |_, ctx| async move {
                for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    ctx.report_progress(ProgressReport::new(step).total(100.0));
                }
                Ok(vec![Content::text("Progress reported.")])
            },
        ),
        tool_with(
            "test_sampling",
            "Asks the client's model.",
            one_string("prompt", "The prompt to send to the LLM"),
            |args, ctx| async move {
                let prompt = string_arg(&args, "prompt");
                let answer = ctx
                    .sample(SamplingRequest::new([SamplingMessage::user(prompt)], 100))
                    .await
                    .map_err(host_error)?;
                Ok(vec![Content::text(format!(
                    "LLM response: {}",
                    answer.text()
                ))])
            },
        ),
        tool_with(
            "test_elicitation",
            "Asks the client's user.",
            one_string("message", "The message to show the user"),
            |args, ctx| async move {
                let schema = json!({
                    "type": "object",
                    "properties": {
                        "username": {"type": "string", "description": "User's response"},
                        "email": {"type": "string", "description": "User's email address"},
                    },
                    "required": ["username", "email"],
                });
                let answer = ctx
                    .elicit(ElicitationRequest::new(
                        string_arg(&args, "message"),
                        schema,
                    ))
                    .await
                    .map_err(host_error)?;
                let content = answer.content.clone().map_or(Value::Null, Value::Object);
                Ok(vec![Content::text(format!(
                    "User response: action={}, content={content}",
                    answer.action
                ))])
            },
        ),
        tool(
            "test_elicitation_sep1034_defaults",
            "Asks with defaults for every primitive type.",
            |_, ctx| async move {
                let schema = json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "default": "John Doe"},
                        "age": {"type": "integer", "default": 30},
                        "score": {"type": "number", "default": 95.5},
                        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                        "verified": {"type": "boolean", "default": true},
                    },
                });
                let answer = ctx
                    .elicit(ElicitationRequest::new(
                        "Please review your profile",
                        schema,
                    ))
                    .await
                    .map_err(host_error)?;
                Ok(vec![Content::text(elicitation_text(&answer))])
            },
        ),
        tool(
            "test_elicitation_sep1330_enums",
            "Asks with every kind of enum.",
            |_, ctx| async move {
                let schema = json!({
                    "type": "object",
                    "properties": {
                        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                        "titledSingle": {"type": "string", "oneOf": [
                            {"const": "value1", "title": "First Option"},
                            {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"},
                        ]},
                        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                            "enumNames": ["Option One", "Option Two", "Option Three"]},
                        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                        "titledMulti": {"type": "array", "items": {"anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"},
                        ]}},
                    },
                });
                let answer = ctx
                    .elicit(ElicitationRequest::new("Choose your options", schema))
                    .await
                    .map_err(host_error)?;
                Ok(vec![Content::text(elicitation_text(&answer))])
            },
        ),
        tool_with(
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features",
            ToolParams::pass_through(&json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {
                    "street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {
                    "name": {"type": "string", "description": "A name."},
                    "address": {"$ref": "#/$defs/address", "description": "An address."},
                    "contactMethod": {"type": "string", "enum": ["phone", "email"],
                        "description": "How to reach them."},
                    "phone": {"type": "string", "description": "A phone number."},
                    "email": {"type": "string", "description": "An email address."},
                },
                // Composition and conditionals (SEP-2106): one way to reach the person.
                "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
                "then": {"required": ["phone"]},
                "else": {"required": ["email"]},
                "additionalProperties": false,
            }))
            .expect("a valid schema"),
            |args, _| async move {
                Ok(vec![Content::text(format!(
                    "Received: {}",
                    Value::Object(args.into_map())
                ))])
            },
        ),
        tool(
            "test_reconnection",
            "Survives a dropped stream.",
            |_, _| async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                Ok(vec![Content::text("Reconnection test completed")])
            },
        ),
    ]
}

fn resources() -> Vec<Resource> {
    vec![
        Resource::text(
            "test://static-text",
            "Static Text Resource",
            "text/plain",
            "This is the content of the static text resource.",
        )
        .description("A static text resource for testing"),
        Resource::blob(
            "test://static-binary",
            "Static Binary Resource",
            "image/png",
            decode(PNG),
        )
        .description("A static binary resource (image) for testing"),
        Resource::text(
            "test://watched-resource",
            "Watched Resource",
            "text/plain",
            "Watched resource content",
        )
        .description("A resource for subscription tests"),
    ]
}

fn template() -> ResourceTemplate {
    ResourceTemplate::new("test://template/{id}/data", "Resource Template")
        .expect("a level-1 template")
        .description("A resource template with parameter substitution")
        .mime_type("application/json")
        .read(|read| async move {
            let id = read.params.get("id").cloned().unwrap_or_default();
            let body =
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
            Ok(vec![ResourceContent::text(
                read.uri,
                "application/json",
                body.to_string(),
            )])
        })
        .complete("id", |typed, _| {
            ["123", "456", "789"]
                .into_iter()
                .filter(|v| v.starts_with(typed))
                .map(String::from)
                .collect()
        })
}

fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::new("test_simple_prompt")
            .description("A simple prompt without arguments")
            .get(|_| async {
                Ok(vec![PromptMessage::user(
                    "This is a simple prompt for testing.",
                )])
            }),
        Prompt::new("test_prompt_with_arguments")
            .description("A prompt with arguments")
            .argument(
                PromptArgument::new("arg1")
                    .description("First test argument")
                    .required(),
            )
            .argument(
                PromptArgument::new("arg2")
                    .description("Second test argument")
                    .required(),
            )
            .get(|args| async move {
                Ok(vec![PromptMessage::user(format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    args["arg1"], args["arg2"]
                ))])
            })
            .complete("arg1", |typed, _| {
                ["paris", "park", "party"]
                    .into_iter()
                    .filter(|v| v.starts_with(typed))
                    .map(String::from)
                    .collect()
            }),
        Prompt::new("test_prompt_with_embedded_resource")
            .description("A prompt with an embedded resource")
            .argument(
                PromptArgument::new("resourceUri")
                    .description("URI of the resource to embed")
                    .required(),
            )
            .get(|args| async move {
                let uri = args
                    .get("resourceUri")
                    .cloned()
                    .ok_or_else(|| HandlerError::new("the argument resourceUri is required"))?;
                Ok(vec![
                    PromptMessage::user(
                        ResourceContent::text(
                            uri,
                            "text/plain",
                            "Embedded resource content for testing.",
                        )
                        .to_content(),
                    ),
                    PromptMessage::user("Please process the embedded resource above."),
                ])
            }),
        Prompt::new("test_prompt_with_image")
            .description("A prompt with an image")
            .get(|_| async {
                Ok(vec![
                    PromptMessage::user(Content::Image(media(PNG, "image/png"))),
                    PromptMessage::user("Please analyze the image above."),
                ])
            }),
    ]
}

/// Base64 → bytes (the fixture's one binary resource), without a base64 crate.
fn decode(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut buffer, mut bits) = (0u32, 0u32);
    for c in text.bytes().filter(|&c| c != b'=') {
        let value = ALPHABET.iter().position(|&a| a == c).expect("base64") as u32;
        buffer = (buffer << 6) | value;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
        }
    }
    out
}

/// The server the suite's server scenarios expect.
pub fn conformance_server() -> ToolServer {
    ToolServer::new(
        tools(),
        ServeOptions::default().name("actuator-conformance"),
    )
    .and_then(|s| s.with_resources(resources()))
    .and_then(|s| s.with_resource_templates([template()]))
    .and_then(|s| s.with_prompts(prompts()))
    .expect("a valid server")
}
