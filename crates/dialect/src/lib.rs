//! # actuator-dialect
//!
//! Provider schema dialects: a [`ToolInfo`] rendered as each provider's tool object, with a
//! report of everything that had to change. The provider side of a call lives here too:
//! [`parse_tool_call`] turns a provider's raw argument text into a `ToolCall`, and
//! [`strip_strict_nulls`] undoes OpenAI strict mode's `null`s before validation.
//!
//! Actuator describes parameters in JSON Schema 2020-12 ([`ToolParams`](actuator_tool_core::ToolParams)). Providers accept
//! different subsets of it, so each dialect rewrites the schema into what its provider accepts
//! and returns a [`DialectReport`] listing every keyword dropped, moved into a description or
//! rewritten, with a JSON pointer into the original schema.
//!
//! **Nothing a dialect drops is lost for validation.** Arguments a model sends are always
//! validated against the full schema of the tool, never against a dialect's rendering, so a
//! constraint the provider cannot express (a `uuid` format, a tuple's positions, a map's value
//! type …) is still enforced: the model gets an error it can correct instead of a wrong call
//! going through. Most renderings are looser than the original; where a dialect has to be
//! stricter it refuses instead (OpenAI strict mode falls back to non-strict, see below).
//!
//! | Dialect | Function | Tool object |
//! |---|---|---|
//! | MCP / JSON Schema 2020-12 | [`mcp`] | `{"name", "description", "inputSchema"}` |
//! | OpenAI chat completions, strict | [`openai_strict`] | `{"type": "function", "function": {"name", "description", "parameters", "strict"}}` |
//! | Anthropic | [`anthropic`] | `{"name", "description", "input_schema"}` |
//! | Gemini | [`gemini`] | `{"name", "description", "parameters"}` (a `FunctionDeclaration`) |
//!
//! # MCP
//!
//! The schema goes out as is, `$defs` included: MCP tools take JSON Schema.
//!
//! ```
//! use actuator_tool_core::{ToolInfo, ToolParams};
//! use serde_json::json;
//!
//! let mut params = ToolParams::default();
//! params.properties.insert("path".into(), json!({"type": "string"}));
//! params.required.push("path".into());
//! let info = ToolInfo::new("read", "Read a file.", params);
//!
//! let rendered = actuator_dialect::mcp(&info);
//! assert_eq!(rendered.tool["inputSchema"], info.parameters_schema());
//! assert!(rendered.report.is_empty());
//! ```
//!
//! # OpenAI strict mode
//!
//! [`openai_strict`] renders a chat-completions function tool with `"strict": true`, which
//! makes the model's arguments follow the schema exactly (Structured Outputs), within the subset
//! of JSON Schema strict mode supports:
//!
//! - Every object, at any depth (in `properties`, `items`, `anyOf`, `$defs` …), is closed with
//!   `"additionalProperties": false` ([`ChangeKind::Closed`]) and lists every property in
//!   `required`. An optional property becomes nullable: `"null"` joins its `type` (and its
//!   `enum`), or it is wrapped as `anyOf: [schema, {"type": "null"}]`
//!   ([`ChangeKind::MadeNullable`]); one that already accepted `null` is just made required
//!   ([`ChangeKind::MadeRequired`]). A `null` argument then means "not given": pass the
//!   arguments through [`strip_strict_nulls`] before validating them.
//! - `oneOf` becomes `anyOf`; an `allOf` whose parts share no keyword is merged into its
//!   parent (that keeps its meaning); tuples
//!   (`prefixItems`) become arrays whose items match any of the element schemas.
//! - `$ref` and `$defs` are kept (recursive types stay recursive), except that a `$ref` with
//!   sibling keywords (a description) gets its definition inlined one level.
//! - Kept: `type`, `description`, `title`, `enum`, `const`, `pattern`, `format` when it is one
//!   of `date-time`, `time`, `date`, `duration`, `email`, `hostname`, `ipv4`, `ipv6`, `uuid`,
//!   `multipleOf`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `minItems`,
//!   `maxItems`.
//! - Moved into the description: other string formats, `default`, `examples`, `minLength`,
//!   `maxLength`, `uniqueItems`. Dropped: any other keyword (an `allOf` that cannot be merged,
//!   `not`, `if`/`then`/`else`, `dependentRequired`, non-string formats like `uint32` …).
//! - `anyOf`, `oneOf`, `allOf`, `enum` and `not` at the top of the parameters, which OpenAI
//!   rejects there in either mode, are merged (an `allOf`, where it can be) or dropped and left
//!   to Actuator's validation.
//!
//! Some schemas cannot be made strict without refusing arguments the tool accepts: a map
//! (`additionalProperties` with a schema, or `true`), `patternProperties`, an object with no
//! properties that accepts any, or a schema that accepts any JSON value (`true`,
//! `serde_json::Value`). Closing them would make the model unable to pass what the tool needs,
//! so the tool is then rendered with `"strict": false` and its schema unchanged, and the report
//! lists only those places ([`ChangeKind::Unsupported`]). An `enum` with a value not of the
//! schema's declared type (`{"type": "integer", "enum": ["1", "2"]}`), an array without
//! `items`, and a schema past the documented limits (5000 properties, 10 levels of objects,
//! 1000 enum values, 120,000 characters of property names and enum and const values, 15,000
//! characters for one enum of more than 250 values), which strict mode rejects with a 400 for
//! the whole request, fall back the same way.
//!
//! ```
//! use actuator_dialect::ChangeKind;
//! use actuator_tool_core::{ToolInfo, ToolParams};
//! use serde_json::json;
//!
//! let mut params = ToolParams::default();
//! params.properties.insert("path".into(), json!({"type": "string"}));
//! params.properties.insert("limit".into(), json!({"type": "integer", "format": "uint32"}));
//! params.required.push("path".into());
//! let info = ToolInfo::new("read", "Read a file.", params);
//!
//! let rendered = actuator_dialect::openai_strict(&info);
//! let function = &rendered.tool["function"];
//! assert_eq!(function["strict"], true);
//! assert_eq!(function["parameters"]["required"], json!(["path", "limit"]));
//! assert_eq!(function["parameters"]["properties"]["limit"], json!({"type": ["integer", "null"]}));
//! let kinds: Vec<_> = rendered.report.changes.iter().map(|c| (c.path.as_str(), c.kind)).collect();
//! assert_eq!(kinds, [
//!     ("/properties/limit/format", ChangeKind::Dropped),
//!     ("/properties/limit", ChangeKind::MadeNullable),
//! ]);
//! ```
//!
//! # Anthropic
//!
//! Anthropic takes JSON Schema as `input_schema`; only `$schema` keywords are removed.
//!
//! ```
//! use actuator_tool_core::{ToolInfo, ToolParams};
//! use serde_json::json;
//!
//! let mut params = ToolParams::default();
//! params.properties.insert("when".into(), json!({"type": "string", "format": "date-time"}));
//! let info = ToolInfo::new("remind", "Set a reminder.", params);
//!
//! let rendered = actuator_dialect::anthropic(&info);
//! assert_eq!(rendered.tool["input_schema"], info.parameters_schema());
//! assert!(rendered.report.is_empty());
//! ```
//!
//! # Gemini
//!
//! [`gemini`] renders a `FunctionDeclaration`, whose `parameters` take a subset of the OpenAPI
//! 3.0 schema object:
//!
//! - Every `$ref` is inlined. A recursive definition is inlined down to
//!   [`GEMINI_MAX_REF_DEPTH`] nested uses of itself; deeper, it becomes a bare `{"type": …}`
//!   placeholder whose description says it is not described further
//!   ([`ChangeKind::RecursionCut`]). `$defs` is dropped.
//! - `type: [T, "null"]`, an `anyOf`/`oneOf` with a `null` alternative and `null` in an `enum`
//!   become `"nullable": true`; an `anyOf` left with one alternative is merged into its parent.
//!   Other `oneOf`s become `anyOf`; a list of several types becomes an `anyOf`; `allOf` is
//!   merged as for OpenAI.
//! - `const` becomes a one-value `enum`. Enums hold strings only, on a string schema: an enum
//!   with other values (integers, booleans), or on a schema of another type (`{"type":
//!   "integer", "enum": ["1", "2"]}`), is dropped and its values listed in the description.
//! - `additionalProperties` is dropped everywhere; a map's value schema is described in words.
//! - `exclusiveMinimum`/`exclusiveMaximum` become `minimum`/`maximum` for integers and a
//!   sentence in the description otherwise. Tuples become arrays as for OpenAI.
//! - `format` is kept only where Gemini supports it: `date-time` and `enum` for strings,
//!   `int32`/`int64` for integers, `float`/`double` for numbers. Other string formats, `default`,
//!   `examples`, `multipleOf` and `uniqueItems` move into the description.
//! - Kept: `type`, `description`, `title`, `properties`, `required`, `items`, `anyOf`, `enum`,
//!   `minimum`, `maximum`, `minItems`, `maxItems`, `minLength`, `maxLength`, `minProperties`,
//!   `maxProperties`, `pattern`. Anything else is dropped.
//! - Gemini rejects an object schema with no properties: a tool without parameters leaves
//!   `parameters` out, and a nested object without properties (a map, an array of untyped
//!   objects) loses its `type` (it then accepts any value; "A JSON object." goes in its
//!   description and Actuator's validation still requires one). `required` on a schema without
//!   properties, and `properties`/`required` on a schema that is not an object, are dropped.
//! - A function name Gemini rejects (it must start with a letter or an underscore) is repaired
//!   ([`ChangeKind::Renamed`]; [`Dialect::function_name`] gives the name sent, to map a call
//!   back). Gemini documents no limit on parameter names (`properties` is a map of any
//!   string), so they are sent as they are.
//! - An array without `items` (Gemini: "items: missing field") gets an empty `items` schema,
//!   and an enum holding an empty string (`enum[N]: cannot be empty`) moves to the description.
//!
//! ```
//! use actuator_tool_core::{ToolInfo, ToolParams};
//! use serde_json::json;
//!
//! let mut params = ToolParams::default();
//! params.properties.insert("level".into(), json!({"type": ["integer", "null"], "enum": [1, 2, 3, null]}));
//! let info = ToolInfo::new("set_level", "Set the level.", params);
//!
//! let rendered = actuator_dialect::gemini(&info);
//! assert_eq!(
//!     rendered.tool["parameters"]["properties"]["level"],
//!     json!({"type": "integer", "nullable": true, "description": "Allowed values: 1, 2, 3."})
//! );
//! ```
//!
//! # Checked against a corpus
//!
//! Every rule above that keeps a provider from rejecting the whole request with a 400 has a
//! test (`tests/provider_rules.rs`), and the crate's tests render a corpus of 3,537 real-world
//! tool definitions (the Berkeley Function Calling Leaderboard's functions, the `tools/list`
//! of github-mcp-server, kubernetes-mcp-server and six other MCP servers, inspect_ai's tools;
//! `tests/corpus/README.md`) through every dialect and check each rendering against its
//! provider's rules, encoded once in `tests/provider_check`. On that corpus: OpenAI strict
//! mode falls back for 63 tools (23 for an enum value not of its type, the rest for maps,
//! open or untyped schemas); Gemini moves the enums of 69 tools (on a non-string schema, or
//! with non-string values) into descriptions and takes the type off objects without properties
//! in 31; Anthropic renames the parameters of one tool (`año_vehiculo`) and drops `$schema`
//! from 62. The counts are a snapshot
//! (`tests/snapshots/provider_corpus__corpus_summary.snap`).
//!
//! No dialect panics on a malformed schema: what cannot be understood is reported as
//! [`ChangeKind::Invalid`] and rendered as well as possible.
#![cfg_attr(docsrs, feature(doc_cfg))]

use serde::Serialize;
use serde_json::json;

use actuator_tool_core::ToolInfo;

mod base;
mod gemini;
mod names;
mod nulls;
mod openai;
mod parse;
mod report;
mod schema;
mod top;
mod walk;
mod yaml_scalar;

pub use gemini::GEMINI_MAX_REF_DEPTH;
pub use names::{restore_argument_names, send_argument_names};
pub use nulls::strip_strict_nulls;
pub use parse::{MAX_SHOWN_ARGUMENT_BYTES, parse_tool_call};
pub use report::{ChangeKind, DialectReport, Rendered, SchemaChange};

use walk::At;

/// The providers a tool can be rendered for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Dialect {
    /// MCP `tools/list` entries: JSON Schema 2020-12 as is ([`mcp`]).
    Mcp,
    /// OpenAI chat-completions function tools in strict mode ([`openai_strict`]).
    OpenAiStrict,
    /// Anthropic Messages API tools ([`anthropic`]).
    Anthropic,
    /// Gemini function declarations ([`gemini`]).
    Gemini,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 4] = [
        Dialect::Mcp,
        Dialect::OpenAiStrict,
        Dialect::Anthropic,
        Dialect::Gemini,
    ];

    /// Renders a tool in this dialect.
    ///
    /// ```
    /// use actuator_dialect::Dialect;
    /// use actuator_tool_core::{ToolInfo, ToolParams};
    /// let info = ToolInfo::new("ping", "Ping.", ToolParams::default());
    /// assert_eq!(Dialect::Gemini.render(&info), actuator_dialect::gemini(&info));
    /// for dialect in Dialect::ALL {
    ///     println!("{dialect}: {}", dialect.render(&info).tool);
    /// }
    /// ```
    pub fn render(self, info: &ToolInfo) -> Rendered {
        match self {
            Dialect::Mcp => mcp(info),
            Dialect::OpenAiStrict => openai_strict(info),
            Dialect::Anthropic => anthropic(info),
            Dialect::Gemini => gemini(info),
        }
    }

    /// The function name this dialect sends for a tool named `name`: the name itself, except
    /// where the provider rejects it and the dialect repairs it (Gemini: a name must start with
    /// a letter or an underscore). A provider maps a call back to its tool by comparing the
    /// name the model called with this.
    ///
    /// ```
    /// use actuator_dialect::Dialect;
    /// assert_eq!(Dialect::Gemini.function_name("read_file"), "read_file");
    /// let sent = Dialect::Gemini.function_name("21st_magic_builder");
    /// assert!(sent.starts_with("_21st_magic_builder_"));
    /// assert_eq!(Dialect::OpenAiStrict.function_name("21st_magic_builder"), "21st_magic_builder");
    /// ```
    pub fn function_name(self, name: &str) -> std::borrow::Cow<'_, str> {
        names::function_name(self, name)
    }

    /// The snake_case name, as serialized (`mcp`, `openai_strict`, `anthropic`, `gemini`).
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Mcp => "mcp",
            Dialect::OpenAiStrict => "openai_strict",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
        }
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Renders a tool for MCP (`tools/list`): `{"name", "description", "inputSchema"}` with the
/// parameters schema as is, and `outputSchema` when the tool declares one. The report is
/// empty.
pub fn mcp(info: &ToolInfo) -> Rendered {
    let mut tool = json!({
        "name": info.name,
        "description": info.description,
        "inputSchema": info.parameters.to_value(),
    });
    if let Some(schema) = &info.output_schema {
        tool["outputSchema"] = schema.clone();
    }
    Rendered {
        tool,
        report: DialectReport::default(),
    }
}

/// Renders a tool as an OpenAI chat-completions function tool in strict mode:
/// `{"type": "function", "function": {"name", "description", "parameters", "strict": true}}`.
///
/// See [the crate docs](crate#openai-strict-mode) for the rules, and for the fallback to
/// `"strict": false` when the schema cannot be strict.
pub fn openai_strict(info: &ToolInfo) -> Rendered {
    openai::render(info)
}

/// Renders a tool for Anthropic's Messages API: `{"name", "description", "input_schema"}`.
///
/// Anthropic accepts JSON Schema, so the schema goes out as is except for `$schema` keywords,
/// which are removed wherever they appear, `anyOf`, `oneOf` and `allOf` at the top level, which
/// Anthropic rejects (an `allOf` is merged where it can be; the rest is left to Actuator's
/// validation), and parameter names outside
/// `^[a-zA-Z0-9_.-]{1,64}$`, which are renamed ([`ChangeKind::Renamed`]; the provider maps the
/// model's arguments back with [`restore_argument_names`]).
pub fn anthropic(info: &ToolInfo) -> Rendered {
    let mut schema = info.parameters.to_value();
    let mut report = DialectReport::default();
    top::plain(&mut schema, "Anthropic", top::ANTHROPIC, &mut report);
    walk::visit_mut(&mut schema, &At::root(), &mut |m, at| {
        if m.shift_remove("$schema").is_some() {
            report.push(
                at.keyword("$schema"),
                ChangeKind::Dropped,
                "$schema is not accepted in a tool's input_schema",
            );
        }
    });
    // Renamed last, so that every path in the report points into the original schema.
    let renames = names::property_renames(&names::ANTHROPIC_PROPERTY, info);
    names::rename_properties(&mut schema, &renames.renamed);
    let pattern = names::ANTHROPIC_PROPERTY.pattern;
    for (name, wire) in &renames.renamed {
        report.push(
            walk::child("/properties", name),
            ChangeKind::Renamed,
            format!(
                "Anthropic rejects parameter names outside {pattern}; '{name}' is sent as \
                 '{wire}' and restore_argument_names maps it back"
            ),
        );
    }
    for name in &renames.collisions {
        report.push(
            walk::child("/properties", name),
            ChangeKind::Unsupported,
            format!(
                "Anthropic rejects parameter names outside {pattern}, and the repaired name \
                 of '{name}' is taken by another parameter; it is sent as is"
            ),
        );
    }
    Rendered {
        tool: json!({
            "name": info.name,
            "description": info.description,
            "input_schema": schema,
        }),
        report,
    }
}

/// Renders a tool as a Gemini `FunctionDeclaration`: `{"name", "description", "parameters"}`,
/// the parameters in Gemini's OpenAPI 3.0 subset.
///
/// See [the crate docs](crate#gemini) for the rules.
pub fn gemini(info: &ToolInfo) -> Rendered {
    gemini::render(info)
}
