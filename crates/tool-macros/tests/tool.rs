//! Behaviour of `#[tool]`: the generated `ToolInfo`, options and handlers, end to end.
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use actuator_tool_core::{
    ContentFormat, FatalToolError, ToolCallContent, ToolCallView, ToolContext, ToolDef, ToolError,
    ToolErrorKind, ToolFailure, ToolOutput,
};
use actuator_tool_macros::tool;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

fn info(def: &ToolDef) -> Value {
    serde_json::to_value(def.info()).unwrap()
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

/// Runs a call after validating its arguments, as an executor does.
fn call(def: &ToolDef, args: Value) -> Result<ToolOutput, ToolFailure> {
    def.validate(&args)?;
    rt().block_on(def.call(args, ToolContext::new("c1", def.name())))
}

fn text(def: &ToolDef, args: Value) -> String {
    match call(def, args) {
        Ok(ToolOutput::Text(t)) => t.into(),
        other => panic!("expected text, got {other:?}"),
    }
}

// ---- descriptions ---------------------------------------------------------------------------

/// Add two integers.
///
/// # Arguments
/// * `x` - First addend.
/// * `y` - Second addend.
#[tool]
async fn add(x: i64, y: i64) -> i64 {
    x + y
}

#[test]
fn add_info_and_call() {
    let def = add_tool();
    assert_eq!(
        info(&def),
        json!({
            "name": "add",
            "description": "Add two integers.",
            "parameters": {
                "type": "object",
                "properties": {
                    // As the reference shows an `int`: no ±9.2e18 bounds (issue 10's decision).
                    "x": {"type": "integer", "description": "First addend."},
                    "y": {"type": "integer", "description": "Second addend."}
                },
                "required": ["x", "y"],
                "additionalProperties": false
            }
        })
    );
    def.check().unwrap();
    assert!(!def.parallel());
    assert_eq!(def.max_output(), None);
    assert_eq!(def.timeout(), None);
    assert!(def.viewer().is_none());
    let out = call(&def, json!({"x": 2, "y": 3})).unwrap();
    assert_eq!(out, ToolOutput::Text("5".into()));
    // The range is still enforced: past i64 the call is a `parsing` error naming the argument.
    let big = json!({"x": 9_223_372_036_854_775_808_u64, "y": 1});
    def.validate(&big).unwrap();
    let err = call(&def, big).unwrap_err();
    assert!(err.to_string().contains("'x'"), "{err}");
}

#[test]
fn spec_is_shared_between_constructions() {
    let a = add_tool();
    let b = add_tool();
    assert!(Arc::ptr_eq(&a.info_arc(), &b.info_arc()));
}

#[test]
fn bad_arguments_are_recoverable_errors() {
    let def = add_tool();
    let err = def.validate(&json!({"x": "two", "y": 3})).unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Parsing);
    // Without validation, deserialization reports the parameter.
    let err = rt()
        .block_on(def.call(json!({"x": 1}), ToolContext::new("c1", "add")))
        .unwrap_err();
    match err {
        ToolFailure::Recoverable(e) => {
            assert_eq!(
                e.message(),
                "Required parameter y not provided to tool call."
            );
        }
        other => panic!("{other:?}"),
    }
}

/// Look something up.
///
/// Second paragraph, with a line
/// that continues it.
///
/// # Arguments
///
/// - key: The key
///   to look up.
/// - `fallback`: What to return
///     when the key is missing.
///
/// # Returns
///
/// The value.
///
/// # Errors
///
/// When the store is down.
///
/// # Examples
///
/// ```
/// # let store = ();
/// lookup("a".into(), "b".into());
/// ```
#[tool]
fn lookup(key: String, fallback: String) -> String {
    format!("{key}:{fallback}")
}

#[test]
fn sections_bullets_and_continuations() {
    let v = info(&lookup_tool());
    assert_eq!(
        v["description"],
        "Look something up.\n\nSecond paragraph, with a line\nthat continues it.\n\n\
         Examples\n\n```\nlookup(\"a\".into(), \"b\".into());\n```"
    );
    assert_eq!(
        v["parameters"]["properties"]["key"]["description"],
        "The key\nto look up."
    );
    assert_eq!(
        v["parameters"]["properties"]["fallback"]["description"],
        "What to return\nwhen the key is missing."
    );
}

#[doc = "Greets someone."]
#[doc = ""]
#[doc = "# Arguments"]
#[doc = "* `name` - Overridden by the parameter's own doc."]
#[doc = "* greeting - The greeting word."]
#[tool]
async fn greet(
    /// Who to greet.
    /// (A full name is best.)
    name: String,
    greeting: String,
) -> String {
    format!("{greeting}, {name}!")
}

#[test]
fn doc_attributes_and_parameter_docs_win() {
    let v = info(&greet_tool());
    assert_eq!(v["description"], "Greets someone.");
    assert_eq!(
        v["parameters"]["properties"]["name"]["description"],
        "Who to greet.\n(A full name is best.)"
    );
    assert_eq!(
        v["parameters"]["properties"]["greeting"]["description"],
        "The greeting word."
    );
    let def = greet_tool();
    assert_eq!(
        text(&def, json!({"name": "Ada", "greeting": "Hello"})),
        "Hello, Ada!"
    );
}

/// Ignored: the description option wins.
#[tool(description = "Says hello.")]
async fn hello() -> &'static str {
    "hello"
}

#[test]
fn description_option_overrides_docs() {
    let def = hello_tool();
    assert_eq!(def.description(), "Says hello.");
    assert_eq!(
        info(&def)["parameters"],
        json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
    );
    assert_eq!(text(&def, json!({})), "hello");
    let out = rt()
        .block_on(def.call(Value::Null, ToolContext::new("c1", "hello")))
        .unwrap();
    assert_eq!(out, ToolOutput::Text("hello".into()));
}

// ---- options --------------------------------------------------------------------------------

fn show_call(function: &str, args: &serde_json::Map<String, Value>) -> ToolCallView {
    ToolCallView {
        context: None,
        call: Some(ToolCallContent {
            title: Some(function.to_owned()),
            format: ContentFormat::Text,
            content: args.len().to_string(),
        }),
    }
}

/// Counts.
#[tool(
    name = "count-things",
    parallel,
    max_output = 4096,
    timeout = "30s",
    viewer = show_call,
    crate = ::actuator_tool_core
)]
pub async fn count() -> u32 {
    3
}

/// `path` without a trailing slash, as the tool would open it.
fn trimmed_path(
    args: &serde_json::Map<String, Value>,
) -> Result<serde_json::Map<String, Value>, actuator_tool_core::ToolError> {
    let mut out = args.clone();
    if let Some(Value::String(p)) = out.get_mut("path") {
        *p = p.trim_end_matches('/').to_owned();
    }
    Ok(out)
}

/// Opens a file.
///
/// # Arguments
/// * `path` - The file.
#[tool(canonical = trimmed_path)]
fn open_file(path: String) -> String {
    path
}

#[test]
fn the_canonical_option_declares_the_tools_canonical_arguments() {
    let def = open_file_tool();
    let canonical = def.canonical_arguments().unwrap();
    let args = json!({"path": "/tmp/a/"});
    assert_eq!(
        Value::Object(canonical.apply(args.as_object().unwrap()).unwrap()),
        json!({"path": "/tmp/a"})
    );
    assert!(count_tool().canonical_arguments().is_none());
}

/// Sleeps a little.
#[tool(parallel = false, timeout = "250ms", max_output = 0)]
async fn nap() {}

#[test]
fn tool_options() {
    let def = count_tool();
    assert_eq!(def.name(), "count-things");
    assert!(def.parallel());
    assert_eq!(def.max_output(), Some(4096));
    assert_eq!(def.timeout(), Some(Duration::from_secs(30)));
    let view = def
        .viewer()
        .unwrap()
        .view("count-things", json!({"a": 1}).as_object().unwrap());
    assert_eq!(view.call.unwrap().content, "1");
    assert_eq!(text(&def, json!({})), "3");

    let def = nap_tool();
    assert!(!def.parallel());
    assert_eq!(def.max_output(), Some(0));
    assert_eq!(def.timeout(), Some(Duration::from_millis(250)));
    assert_eq!(text(&def, json!({})), "");
}

mod facade {
    //! A crate that re-exports the runtime crate under another path.
    pub mod tools {
        pub use actuator_tool_core as core;
    }
}

/// Through a re-export.
#[tool(crate = facade::tools::core)]
async fn reexported() -> bool {
    true
}

#[test]
fn crate_option() {
    assert_eq!(text(&reexported_tool(), json!({})), "true");
}

// ---- parameters -----------------------------------------------------------------------------

/// Paginates.
#[tool]
async fn page(
    /// The query.
    query: String,
    /// The page size.
    #[tool(default = 20)]
    size: u32,
    /// The sort order.
    #[tool(default = String::from("asc"))]
    order: String,
    /// Include drafts.
    #[tool(default)]
    drafts: bool,
    /// A label.
    label: Option<String>,
) -> String {
    format!("{query}/{size}/{order}/{drafts}/{label:?}")
}

#[test]
fn defaults_and_options() {
    let def = page_tool();
    let v = info(&def);
    let props = &v["parameters"]["properties"];
    assert_eq!(v["parameters"]["required"], json!(["query"]));
    assert_eq!(props["size"]["default"], 20);
    assert_eq!(props["order"]["default"], "asc");
    assert!(props["drafts"].get("default").is_none());
    assert_eq!(props["drafts"]["type"], "boolean");
    assert_eq!(props["label"]["description"], "A label.");
    let names: Vec<&str> = def.parameters().names().collect();
    assert_eq!(names, ["query", "size", "order", "drafts", "label"]);

    assert_eq!(text(&def, json!({"query": "q"})), "q/20/asc/false/None");
    assert_eq!(
        text(
            &def,
            json!({"query": "q", "size": 5, "order": "desc", "drafts": true, "label": "x"})
        ),
        "q/5/desc/true/Some(\"x\")"
    );
    assert_eq!(
        text(&def, json!({"query": "q", "label": null})),
        "q/20/asc/false/None"
    );
}

/// Search arguments.
#[derive(Debug, Deserialize, JsonSchema)]
struct SearchArgs {
    /// What to search for.
    query: String,
    /// How many results.
    #[serde(default = "default_limit")]
    limit: u32,
}

fn default_limit() -> u32 {
    10
}

/// Searches.
#[tool]
async fn search(
    /// Which index.
    index: String,
    #[tool(flatten)] args: SearchArgs,
) -> String {
    format!("{index}:{}:{}", args.query, args.limit)
}

#[test]
fn flatten() {
    let def = search_tool();
    let v = info(&def);
    let props = &v["parameters"]["properties"];
    assert_eq!(props["index"]["description"], "Which index.");
    assert_eq!(props["query"]["description"], "What to search for.");
    assert_eq!(props["limit"]["description"], "How many results.");
    assert_eq!(v["parameters"]["required"], json!(["index", "query"]));
    def.check().unwrap();
    assert_eq!(
        text(&def, json!({"index": "docs", "query": "tokio"})),
        "docs:tokio:10"
    );
    assert_eq!(
        text(&def, json!({"index": "docs", "query": "tokio", "limit": 3})),
        "docs:tokio:3"
    );
}

/// Uses raw identifiers.
///
/// # Arguments
/// * count - How many.
#[tool]
async fn r#match(
    /// The type.
    r#type: String,
    mut count: u8,
) -> String {
    count += 1;
    format!("{type}{count}", type = r#type)
}

#[test]
fn raw_identifiers_and_mut_bindings() {
    let def = match_tool();
    assert_eq!(def.name(), "match");
    assert_eq!(text(&def, json!({"type": "t", "count": 1})), "t2");
}

// ---- methods --------------------------------------------------------------------------------

struct Counter {
    calls: AtomicU64,
    prefix: String,
}

impl Counter {
    /// Counts a call and echoes the text.
    ///
    /// # Arguments
    /// * `text` - Text to echo.
    #[tool(parallel)]
    async fn echo(&self, text: String) -> String {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        format!("{}{text}#{n}", self.prefix)
    }

    /// Reports the number of calls so far.
    #[tool]
    fn calls(&self) -> u64 {
        self.calls.load(Ordering::SeqCst)
    }
}

#[test]
fn methods_carry_state() {
    let counter = Arc::new(Counter {
        calls: AtomicU64::new(0),
        prefix: "> ".into(),
    });
    let echo = counter.echo_tool();
    let calls = counter.calls_tool();
    assert!(echo.parallel());
    assert_eq!(echo.name(), "echo");
    assert_eq!(
        info(&echo)["parameters"]["properties"]["text"]["description"],
        "Text to echo."
    );
    assert_eq!(text(&echo, json!({"text": "hi"})), "> hi#1");
    assert_eq!(text(&echo, json!({"text": "ho"})), "> ho#2");
    assert_eq!(text(&calls, json!({})), "2");
    // The tools keep the value alive.
    drop(counter);
    assert_eq!(text(&echo, json!({"text": "x"})), "> x#3");
}

// ---- sync functions -------------------------------------------------------------------------

/// Reports the thread it runs on.
#[tool]
fn where_am_i() -> String {
    format!("{:?}", std::thread::current().id())
}

/// Panics.
#[tool]
fn explode() -> String {
    panic!("boom")
}

#[test]
fn sync_functions_run_off_the_executor() {
    // A current-thread runtime runs its tasks on this thread; the tool must not.
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let def = where_am_i_tool();
    let out = rt
        .block_on(def.call(json!({}), ToolContext::new("c1", "where_am_i")))
        .unwrap();
    assert_ne!(out.text(), format!("{:?}", std::thread::current().id()));

    let err = rt
        .block_on(explode_tool().call(json!({}), ToolContext::new("c1", "explode")))
        .unwrap_err();
    assert!(!err.is_recoverable());
    assert!(err.to_string().contains("boom"), "{err}");
}

// ---- return values --------------------------------------------------------------------------

#[derive(Serialize)]
struct Point {
    x: i32,
    y: i32,
}

/// Returns a point.
#[tool]
async fn point() -> Point {
    Point { x: 1, y: -2 }
}

/// Returns unit.
#[tool]
async fn unit() {}

/// Returns a bool.
#[tool]
fn yes() -> bool {
    true
}

/// Fails on request.
///
/// # Arguments
/// * `fail` - Whether to fail.
#[tool]
async fn maybe(fail: bool) -> Result<String, ToolError> {
    if fail {
        Err(ToolError::new("it failed"))
    } else {
        Ok("fine".into())
    }
}

/// Fails fatally on request.
///
/// # Arguments
/// * `fail` - Whether to fail.
#[tool]
async fn fatal(fail: bool) -> Result<Point, FatalToolError> {
    if fail {
        Err(FatalToolError::msg("broken"))
    } else {
        Ok(Point { x: 0, y: 0 })
    }
}

/// Reads a file.
///
/// # Arguments
/// * `path` - The file.
#[tool]
fn read(path: String) -> std::io::Result<String> {
    std::fs::read_to_string(path)
}

type Res<T> = Result<T, ToolError>;

/// Returns through an alias.
#[tool]
async fn aliased() -> Res<String> {
    Ok("plain".into())
}

/// Returns content.
#[tool]
async fn picture() -> actuator_tool_core::Content {
    actuator_tool_core::Content::image_url("https://example.com/a.png", "image/png")
}

#[test]
fn return_conversions() {
    assert_eq!(text(&point_tool(), json!({})), r#"{"x":1,"y":-2}"#);
    assert_eq!(text(&unit_tool(), json!({})), "");
    assert_eq!(text(&yes_tool(), json!({})), "true");
    assert_eq!(text(&maybe_tool(), json!({"fail": false})), "fine");
    let err = call(&maybe_tool(), json!({"fail": true})).unwrap_err();
    assert!(err.is_recoverable());
    assert_eq!(err.to_string(), "it failed");

    assert_eq!(
        text(&fatal_tool(), json!({"fail": false})),
        r#"{"x":0,"y":0}"#
    );
    let err = call(&fatal_tool(), json!({"fail": true})).unwrap_err();
    assert!(!err.is_recoverable());

    let err = call(&read_tool(), json!({"path": "/definitely/not/here"})).unwrap_err();
    match err {
        ToolFailure::Recoverable(e) => assert_eq!(e.kind(), ToolErrorKind::FileNotFound),
        other => panic!("{other:?}"),
    }

    // Results the macro cannot see through (aliases) keep `String` as plain text.
    assert_eq!(text(&aliased_tool(), json!({})), "plain");
    let path = std::env::temp_dir().join(format!("actuator-read-{}.txt", std::process::id()));
    std::fs::write(&path, "file text").unwrap();
    let out = text(&read_tool(), json!({"path": path.to_str().unwrap()}));
    std::fs::remove_file(&path).unwrap();
    assert_eq!(out, "file text");

    match call(&picture_tool(), json!({})).unwrap() {
        ToolOutput::Content(items) => assert_eq!(items.len(), 1),
        other => panic!("{other:?}"),
    }
}

// ---- visibility and docs --------------------------------------------------------------------

mod nested {
    use actuator_tool_macros::tool;

    /// A public tool in a module.
    #[tool]
    pub async fn public() -> u8 {
        1
    }

    /// A crate-visible tool.
    #[tool]
    pub(crate) fn crate_visible() -> u8 {
        2
    }
}

#[test]
fn constructor_visibility_follows_the_function() {
    assert_eq!(nested::public_tool().name(), "public");
    assert_eq!(nested::crate_visible_tool().name(), "crate_visible");
}

// ---- Output schemas ----------------------------------------------------------------------

/// Where something is.
#[derive(Serialize, JsonSchema)]
struct Place {
    /// Its name.
    name: String,
    /// How far, in metres.
    metres: u32,
}

/// A result without a schema.
#[derive(Serialize)]
struct Opaque {
    name: String,
}

/// Finds a place.
#[tool]
async fn find_place() -> Place {
    Place {
        name: "home".into(),
        metres: 3,
    }
}

/// Finds a place, or fails.
#[tool]
async fn try_find_place() -> Result<actuator_tool_core::Json<Place>, std::io::Error> {
    Ok(actuator_tool_core::Json(Place {
        name: "home".into(),
        metres: 3,
    }))
}

/// Finds something opaque.
#[tool]
async fn find_opaque() -> Opaque {
    Opaque {
        name: "home".into(),
    }
}

/// Counts.
#[tool]
async fn count_things() -> u32 {
    3
}

#[test]
fn a_structured_return_type_with_a_schema_is_the_output_schema() {
    for tool in [find_place_tool(), try_find_place_tool()] {
        let schema = tool.info().output_schema.clone().unwrap();
        assert_eq!(schema["type"], "object", "{}", tool.name());
        assert_eq!(schema["required"], json!(["name", "metres"]));
        assert!(schema.get("$schema").is_none());
    }
    // No schema to give, or not an object: none.
    assert!(find_opaque_tool().info().output_schema.is_none());
    assert!(count_things_tool().info().output_schema.is_none());
    // The info serializes as before when there is none.
    assert!(
        serde_json::to_value(count_things_tool().info())
            .unwrap()
            .get("output_schema")
            .is_none()
    );
}
