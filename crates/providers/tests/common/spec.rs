//! The official schemas in `specs/`, compiled once.

use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::{Map, Value, json};

#[path = "../../../dialect/tests/openai_spec/mod.rs"]
mod openai_spec;

pub struct OpenAi {
    pub chat_request: Validator,
    pub chat_response: Validator,
    pub chat_chunk: Validator,
    pub create_response: Validator,
    pub response: Validator,
    pub response_event: Validator,
    /// Every property name `CreateChatCompletionRequest` declares (through its `allOf`).
    pub request_fields: Vec<String>,
}

pub struct Anthropic {
    pub request: Validator,
    pub request_streaming: Validator,
    pub response: Validator,
    pub stream_event: Validator,
}

fn specs_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../specs")
}

fn read(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; the specs are part of the repository (specs/SOURCES.md)",
            path.display()
        )
    });
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

pub fn openai() -> &'static OpenAi {
    static SPEC: OnceLock<OpenAi> = OnceLock::new();
    SPEC.get_or_init(|| {
        let spec = read(&specs_dir().join("openai-openapi.subset.json"));
        let mut components = spec["components"].clone();
        openai_spec::nullable_to_null_type(&mut components);
        let compile = |name: &str| {
            let root = json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$ref": format!("#/components/schemas/{name}"),
                "components": components,
            });
            jsonschema::draft202012::new(&root)
                .unwrap_or_else(|e| panic!("{name} does not compile: {e}"))
        };
        let schemas = components["schemas"].as_object().unwrap();
        let mut request_fields = Vec::new();
        collect_fields(
            schemas,
            &schemas["CreateChatCompletionRequest"],
            &mut request_fields,
        );
        OpenAi {
            chat_request: compile("CreateChatCompletionRequest"),
            chat_response: compile("CreateChatCompletionResponse"),
            chat_chunk: compile("CreateChatCompletionStreamResponse"),
            create_response: compile("CreateResponse"),
            response: compile("Response"),
            response_event: compile("ResponseStreamEvent"),
            request_fields,
        }
    })
}

/// Property names of a schema, through `allOf` and local `$ref`s.
fn collect_fields(schemas: &Map<String, Value>, schema: &Value, out: &mut Vec<String>) {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap();
        collect_fields(schemas, &schemas[name], out);
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        out.extend(props.keys().cloned());
    }
    for part in schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        collect_fields(schemas, part, out);
    }
}

pub fn anthropic() -> &'static Anthropic {
    static SPEC: OnceLock<Anthropic> = OnceLock::new();
    SPEC.get_or_init(|| {
        let compile = |file: &str| {
            let schema = read(&specs_dir().join("anthropic").join(file));
            jsonschema::draft202012::new(&schema)
                .unwrap_or_else(|e| panic!("{file} does not compile: {e}"))
        };
        Anthropic {
            request: compile("messages-request.schema.json"),
            request_streaming: compile("messages-request-streaming.schema.json"),
            response: compile("message-response.schema.json"),
            stream_event: compile("stream-event.schema.json"),
        }
    })
}

pub struct Gemini {
    pub request: Validator,
    pub response: Validator,
    pub error: Validator,
}

/// The Gemini API's schemas, generated from Google's `google-genai` SDK (specs/SOURCES.md).
pub fn gemini() -> &'static Gemini {
    static SPEC: OnceLock<Gemini> = OnceLock::new();
    SPEC.get_or_init(|| {
        let compile = |file: &str| {
            let schema = read(&specs_dir().join("gemini").join(file));
            jsonschema::draft202012::new(&schema)
                .unwrap_or_else(|e| panic!("{file} does not compile: {e}"))
        };
        Gemini {
            request: compile("generate-content-request.schema.json"),
            response: compile("generate-content-response.schema.json"),
            error: compile("error.schema.json"),
        }
    })
}

pub fn assert_valid(validator: &Validator, instance: &Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} rejects {instance:#}:\n{}",
        errors.join("\n")
    );
}

/// Validates a Chat Completions request body, field names included (the schema is open).
pub fn check_openai_request(body: &Value) {
    let spec = openai();
    assert_valid(&spec.chat_request, body, "CreateChatCompletionRequest");
    for key in body.as_object().unwrap().keys() {
        assert!(
            spec.request_fields.contains(key),
            "CreateChatCompletionRequest has no field {key}: {body:#}"
        );
    }
}
