//! # actuator-tool-macros
//!
//! The `#[tool]` attribute turns a documented Rust function into an Actuator tool, a `ToolDef`
//! of `actuator-tool-core` (see [`macro@tool`]); the `#[agent]` attribute turns a documented
//! `async fn` into an agent, a `FnAgent` of `actuator-agent` (see [`macro@agent`]).
//!
//! Each macro is written in three steps: `attr` and `docs` read the attribute options and the
//! doc comments, `model` (`agent_model`) validates everything into a `Tool` (an `AgentFn`),
//! collecting every error in a `ctxt::Ctxt`, each on the user's token it concerns, and `expand`
//! (`agent_expand`) generates the code — or, when there were errors, the function, a stub
//! constructor and the errors, so the user sees the real problems and no follow-on ones. The
//! parameters are read (`params`) and their schema and arguments generated (`expand`) by the
//! same code for both, so an agent's parameters follow a tool's rules.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod agent_expand;
mod agent_model;
mod attr;
mod ctxt;
mod docs;
mod expand;
mod input;
mod model;
mod params;

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
/// | `canonical = path::to_fn` | the arguments approval and review see and the tool runs with: a `Fn(&Map<String, Value>) -> Result<Map<String, Value>, ToolError>` (see `CanonicalArguments`) |
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

/// Turns an `async fn` into an agent whose parameters have a schema.
///
/// ```
/// use actuator_agent::{Agent, AgentError, AgentState, RunContext, RunOptions};
/// use actuator_model::ChatMessage;
/// use actuator_tool_macros::agent;
///
/// /// Summarizes the conversation in a few words.
/// ///
/// /// # Arguments
/// /// * `words` - At most this many words.
/// /// * `style` - The tone of the summary, if any.
/// #[agent]
/// async fn summarize(
///     mut state: AgentState,
///     cx: RunContext,
///     #[agent(default = 10)] words: usize,
///     style: Option<String>,
/// ) -> Result<AgentState, AgentError> {
///     let _ = cx; // the run's context: limits, events, resources, nested runs
///     let text: Vec<String> = state.messages.iter().map(|m| m.text()).collect();
///     let mut summary: Vec<&str> = text.iter().flat_map(|t| t.split(' ')).take(words).collect();
///     if let Some(style) = &style {
///         summary.insert(0, style);
///     }
///     state.messages.push(ChatMessage::assistant(summary.join(" ")));
///     Ok(state)
/// }
///
/// let agent = summarize_agent();
/// assert_eq!(agent.name(), "summarize");
/// assert_eq!(agent.description(), Some("Summarizes the conversation in a few words."));
/// assert_eq!(agent.parameters().names().collect::<Vec<_>>(), ["words", "style"]);
/// assert!(agent.parameters().required.is_empty());
/// assert_eq!(agent.parameters().properties["words"]["default"], 10);
///
/// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// let args = serde_json::json!({"words": 2}).as_object().unwrap().clone();
/// let out = rt.block_on(RunContext::new().run(&agent, "one two three", RunOptions::new().args(args))).unwrap();
/// assert_eq!(out.state.output().completion(), "one two");
/// ```
///
/// # What it generates
///
/// The function stays as written (its parameters lose the `#[agent(...)]` and `///` attributes,
/// which only the macro reads), and next to it comes a constructor with the same visibility and
/// `#[cfg]`s: `fn summarize_agent() -> FnAgent`. It is `agent_fn(name, …)` with the agent's
/// description and parameters; the parameters' schema is built once, on the first call. Each
/// run takes the agent's arguments out of the run's arguments (applying defaults) and calls
/// the function; an argument missing or not fitting its type ends the run with an
/// `AgentErrorKind::Config` error naming the agent and the argument (the function is not
/// called).
///
/// The generated code names `::actuator_agent` when the calling crate depends on it, else the
/// `actuator` facade's `::actuator::agent`; a crate that re-exports it elsewhere says so with
/// `#[agent(crate = path::to::agent)]`. The attribute itself lives here, in
/// `actuator-tool-macros` (compile time only): a crate using `actuator-agent` without the
/// facade adds this crate too; the facade re-exports it as `actuator::agent` (the attribute;
/// the module of the same name is the agent crate) and in its prelude.
///
/// # The function
///
/// `async fn name(state: AgentState, <params…>) -> Result<AgentState, AgentError>`:
///
/// - The first parameter is the state the agent runs on (any name, type `AgentState`).
/// - A parameter whose type is `RunContext` (by value) receives the run's context: its
///   limits, events and resources, and what nested runs go through. It is not in the schema.
/// - Every other parameter is one of the agent's arguments, which handoffs and `as_tool` offer
///   to the model and `run` passes: it has one concrete, owned type implementing
///   `serde::Deserialize` and `schemars::JsonSchema`, as a `#[tool]` parameter does.
///
/// A method taking `&self` in an inherent `impl` block works as with `#[tool]`: the
/// constructor is `fn name_agent(self: &Arc<Self>) -> FnAgent` and the agent holds the `Arc`.
/// A function that is not `async`, generic, `unsafe`, or a method taking `self`, `mut self`
/// or `&mut self` is a compile error.
///
/// # Descriptions
///
/// As for [`macro@tool`]: the agent's description is the doc comment's text before its first
/// `# ` heading (plus any `# Examples`); a parameter's description is its own doc comment or
/// its entry under `# Arguments`. An agent or a parameter without a description, or an
/// `# Arguments` entry naming no parameter, is a compile error; entries may describe the
/// state and context parameters for Rust readers (they are left out of the schema).
///
/// # Options
///
/// On the function, `#[agent(...)]` takes:
///
/// | option | meaning |
/// | --- | --- |
/// | `name = "researcher"` | the agent's name (default: the function name) |
/// | `description = "…"` | replaces the doc comment's description (parameter descriptions still come from the docs) |
/// | `crate = path` | the path to `actuator_agent` (default: `::actuator_agent`, or `::actuator::agent` through the facade) |
///
/// On a parameter, `#[agent(default = expr)]` and `#[agent(default)]` work as `#[tool]`'s
/// (`expr` is shown in the schema as `default`), and an `Option<T>` parameter is optional
/// without any attribute.
#[proc_macro_attribute]
pub fn agent(args: TokenStream, input: TokenStream) -> TokenStream {
    agent_expand::agent(args.into(), input.into()).into()
}

/// Makes a struct or an enum a tool's parameter type: derives `Deserialize` and `JsonSchema`
/// through `actuator`'s re-exports of `serde` and `schemars` (the same paths as
/// `#[derive(serde::Deserialize, schemars::JsonSchema)]` plus `#[serde(crate = …)]` and
/// `#[schemars(crate = …)]`), so a crate that depends on `actuator` alone can write tools with
/// struct parameters. Field doc comments become the schema's descriptions, and `#[serde(…)]` /
/// `#[schemars(…)]` attributes on the type and its fields work as usual. `crate = path` names
/// the runtime crate when it is not found in `Cargo.toml` (as `#[tool(crate = …)]`).
///
/// ```
/// use actuator_tool_macros::{tool, tool_input};
///
/// /// Where to look.
/// #[tool_input]
/// struct Filter {
///     /// Only files newer than this many days.
///     max_age_days: Option<u32>,
/// }
///
/// /// Search the documentation.
/// #[tool]
/// fn search(
///     /// What to search for.
///     query: String,
///     #[tool(flatten)] filter: Filter,
/// ) -> String {
///     format!("{query} {:?}", filter.max_age_days)
/// }
///
/// let def = search_tool();
/// assert!(def.parameters().properties.contains_key("max_age_days"));
/// ```
#[proc_macro_attribute]
pub fn tool_input(args: TokenStream, input: TokenStream) -> TokenStream {
    input::tool_input(args.into(), input.into()).into()
}
