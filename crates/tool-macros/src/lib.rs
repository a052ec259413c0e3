//! # actuator-tool-macros
//!
//! The `#[tool]` attribute: turns a documented Rust function into an Actuator tool, a
//! `ToolDef` of `actuator-tool-core`. See [`macro@tool`].
//!
//! The macro is written in three steps, each in its own module: `attr` and `docs` read the
//! attribute options and the doc comments, `model` validates everything into a `Tool`
//! (collecting every error in a `ctxt::Ctxt`, each on the user's token it concerns), and
//! `expand` generates the code — or, when there were errors, the function, a stub constructor
//! and the errors, so the user sees the real problems and no follow-on ones.

mod attr;
mod ctxt;
mod docs;
mod expand;
mod model;

use proc_macro::TokenStream;

/// Turns a function into a tool a language model can call.
///
/// ```
/// use actuator_tool_core::{ToolContext, ToolOutput};
/// use actuator_tool_macros::tool;
///
/// /// Add two integers.
/// ///
/// /// # Arguments
/// /// * `x` - First addend.
/// /// * `y` - Second addend.
/// #[tool]
/// async fn add(x: i64, y: i64) -> i64 {
///     x + y
/// }
///
/// let def = add_tool();
/// assert_eq!(def.name(), "add");
/// assert_eq!(def.description(), "Add two integers.");
/// assert_eq!(def.parameters().required, ["x", "y"]);
///
/// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// let args = serde_json::json!({"x": 2, "y": 3});
/// def.validate(&args).unwrap();
/// let out = rt.block_on(def.call(args, ToolContext::new("call_1", "add"))).unwrap();
/// assert_eq!(out, ToolOutput::Text("5".into()));
/// ```
///
/// # What it generates
///
/// The function stays as written (its parameters lose the `#[tool(...)]` and `///` attributes,
/// which only the macro reads), and next to it comes a constructor with the same visibility:
/// `fn add_tool() -> ToolDef`. The tool's name, description and parameters schema are built
/// once, on the first call, and shared by every `ToolDef` built afterwards.
///
/// The generated code names `::actuator_tool_core` when the calling crate depends on it, else
/// the `actuator` facade's `::actuator::tool_core` (found in the caller's `Cargo.toml`); a
/// crate that re-exports it elsewhere says so with `#[tool(crate = path::to::tool_core)]`.
///
/// # Functions and methods
///
/// - `async fn`: called directly.
/// - `fn`: run on Tokio's blocking pool (`spawn_blocking`), so it cannot stall the executor;
///   its arguments and result must be `Send + 'static`.
/// - A method taking `&self` in an inherent `impl` block: the constructor is a method
///   `fn search_tool(self: &Arc<Self>) -> ToolDef` in the same block; the tool holds the `Arc`
///   and calls the method on it. `self`, `mut self` and `&mut self` are rejected (calls may run
///   concurrently: keep mutable state behind a `Mutex`). An associated function without
///   `self` is not supported (write a free function); neither is `#[tool]` in a trait `impl`,
///   where the extra constructor method would not belong to the trait.
///
/// Generic functions, `unsafe fn`, `impl Trait` and reference parameter types are rejected:
/// the model calls the tool with JSON, so every parameter has one concrete, owned type that
/// implements `serde::Deserialize` and `schemars::JsonSchema`. The return type is a `String`,
/// a number, `bool`, `()`, `Content`, `Vec<Content>`, `serde_json::Value`, any other
/// `Serialize` type (returned as compact JSON), or a `Result` of one of these whose error
/// converts into `ToolFailure` (`ToolError`, `FatalToolError`, `std::io::Error`).
///
/// # Descriptions
///
/// The tool description is the doc comment's text before its first `# ` heading, followed by
/// its `# Examples` section if it has one (as `"\n\nExamples\n\n…"`). `# Returns`, `# Errors`,
/// `# Panics` and any other section are left out. Lines are kept as written (one leading space
/// removed from each `///` line); blank lines separate paragraphs; lines rustdoc hides in Rust
/// code blocks (`# use …;`) are hidden here too. `#[doc = "…"]` counts the same as `///`.
///
/// A parameter's description is its own doc comment, or else its entry under `# Arguments`:
///
/// ```text
/// /// # Arguments
/// /// * `query` - What to search for.
/// /// - limit: How many results to return,
/// ///   at most 50.
/// ```
///
/// Both bullet styles work (`` * `x` - text ``, `- x: text`); indented lines continue an entry.
/// A tool without a description, a parameter without one, or an `# Arguments` entry that
/// names no parameter is a compile error.
///
/// # Options
///
/// On the function, `#[tool(...)]` takes:
///
/// | option | meaning |
/// | --- | --- |
/// | `name = "search_docs"` | the tool name (default: the function name); checked against `^[a-zA-Z0-9_-]{1,64}$` |
/// | `description = "…"` | replaces the doc comment's description (parameter descriptions still come from the docs) |
/// | `parallel`, `parallel = true` | calls may run concurrently with neighbouring parallel calls (default: not) |
/// | `max_output = 4096` | the output limit in bytes (`0`: never truncate; default: the run's limit) |
/// | `timeout = "30s"` | the per-call timeout: a whole number with a unit, `ms`, `s`, `m` or `h` |
/// | `viewer = path::to_fn` | how calls are shown to people: any `ToolCallViewer` expression |
/// | `crate = path` | the path to `actuator_tool_core` (default: `::actuator_tool_core`, or `::actuator::tool_core` through the facade) |
///
/// On a parameter:
///
/// - `#[tool(default = expr)]`: the model may leave the parameter out; `expr` is then used, and
///   it is shown in the schema as `default` (the type must be `Serialize` too). `expr` is
///   evaluated when the schema is built and each time the argument is missing.
/// - `#[tool(default)]`: the same with `Default::default()`, not shown in the schema.
/// - `#[tool(flatten)]`: the struct-parameter form: the struct's fields are the tool's
///   parameters (described by the fields' doc comments, through `schemars`), and the arguments
///   are deserialized into it as a whole. At most one parameter can be flattened.
///
/// An `Option<T>` parameter is optional without any attribute: it is `None` when left out.
///
/// ```
/// use actuator_tool_macros::tool;
/// use serde::Deserialize;
/// use schemars::JsonSchema;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Filter {
///     /// Only results newer than this many days.
///     max_age_days: Option<u32>,
/// }
///
/// /// Search the documentation.
/// #[tool(name = "search_docs", parallel, timeout = "10s", max_output = 8192)]
/// fn search(
///     /// What to search for.
///     query: String,
///     /// How many results to return.
///     #[tool(default = 10)]
///     limit: u32,
///     #[tool(flatten)] filter: Filter,
/// ) -> Vec<String> {
///     let _ = filter.max_age_days;
///     vec![format!("{limit} results for {query}")]
/// }
///
/// let def = search_tool();
/// assert_eq!(def.name(), "search_docs");
/// assert!(def.parallel());
/// assert_eq!(def.parameters().required, ["query"]);
/// assert_eq!(def.parameters().properties["limit"]["default"], 10);
/// ```
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::tool(args.into(), input.into()).into()
}
