//! [`ToolDef`]: a tool ready to run.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::args::ToolArgs;
use crate::content::{IntoToolOutput, ToolOutput};
use crate::context::{Extensions, ToolContext};
use crate::error::{FatalToolError, ToolDefError, ToolError, ToolFailure};
use crate::info::{ToolInfo, ToolParams, validate_tool_name};
use crate::validate::ArgumentValidator;
use crate::view::ToolCallViewer;

/// A boxed, sendable future borrowing for `'a` (`'static` where it owns everything). The one
/// future type of every Actuator trait: handlers, models, agents, approvers.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What runs when a tool is called: it receives the (already validated) arguments and returns
/// the output or a failure.
///
/// Any `Fn(ToolArgs, ToolContext) -> impl Future<Output = Result<impl IntoToolOutput,
/// ToolFailure>>` is a handler.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool handler",
    note = "a handler is a `Fn(ToolArgs, ToolContext) -> impl Future<Output = Result<impl IntoToolOutput, ToolFailure>> + Send + Sync + 'static`"
)]
pub trait ToolHandler: Send + Sync + 'static {
    /// Runs the call.
    fn call(
        &self,
        args: ToolArgs,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolFailure>>;
}

impl<F, Fut, R> ToolHandler for F
where
    F: Fn(ToolArgs, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ToolFailure>> + Send + 'static,
    R: IntoToolOutput,
{
    fn call(
        &self,
        args: ToolArgs,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolFailure>> {
        let fut = self(args, ctx);
        Box::pin(async move { fut.await?.into_tool_output() })
    }
}

/// The schema half of a tool: its info and its lazily compiled validator, shared by every clone
/// (and, for `#[tool]` items, by every `ToolDef` built from the same item).
#[derive(Debug)]
pub struct ToolSpec {
    info: Arc<ToolInfo>,
    validator: OnceLock<Result<ArgumentValidator, ToolDefError>>,
    /// Whether every parameter must be described (D6); off only for foreign tools.
    param_descriptions_required: bool,
    /// Whether arguments are validated against the schema here; off only for foreign tools
    /// whose schema our validator cannot compile (their server validates).
    validate_arguments: bool,
}

impl ToolSpec {
    /// A spec for `info`; its validator is compiled on first use.
    pub fn new(info: ToolInfo) -> Self {
        ToolSpec {
            info: Arc::new(info),
            validator: OnceLock::new(),
            param_descriptions_required: true,
            validate_arguments: true,
        }
    }

    fn validator(&self) -> &Result<ArgumentValidator, ToolDefError> {
        self.validator
            .get_or_init(|| ArgumentValidator::new(&self.info.name, &self.info.parameters))
    }
}

/// A tool ready to run: its [`ToolInfo`], its options and its handler.
///
/// Built by `#[tool]` (`my_fn_tool()`), or by hand with [`ToolDef::builder`]. Cloning is cheap
/// (a few `Arc`s). Overrides (`with_*`) return a new `ToolDef` and never change the original.
///
/// ```
/// use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure, ToolParams};
/// use serde_json::json;
///
/// let params = ToolParams::from_value(&json!({
///     "type": "object",
///     "properties": {"name": {"type": "string", "description": "Who to greet."}},
///     "required": ["name"]
/// })).unwrap();
/// let greet = ToolDef::builder("greet")
///     .description("Greets someone.")
///     .parameters(params)
///     .handler(|mut args: ToolArgs, _ctx: ToolContext| async move {
///         let name: String = args.required("name")?;
///         Ok::<_, ToolFailure>(format!("Hello, {name}!"))
///     })
///     .build()
///     .unwrap();
/// assert_eq!(greet.name(), "greet");
/// assert!(!greet.parallel());
/// let loud = greet.with_description("Greets someone loudly.").unwrap();
/// assert_eq!(greet.description(), "Greets someone.");
/// assert_eq!(loud.description(), "Greets someone loudly.");
/// ```
#[derive(Clone)]
pub struct ToolDef {
    spec: Arc<ToolSpec>,
    parallel: bool,
    max_output: Option<usize>,
    timeout: Option<Duration>,
    viewer: Option<Arc<dyn ToolCallViewer>>,
    options: Option<Map<String, Value>>,
    extensions: Extensions,
    handler: Handler,
}

/// How a tool runs: on its arguments alone, or on the conversation too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolKind {
    /// A handler that receives the arguments and its [`ToolContext`] ([`ToolDef::call`]).
    Plain,
    /// A handler that also receives the conversation and may add messages after its result
    /// (handoff). Only an executor that passes the conversation can run it
    /// (`actuator_exec::execute_tools`); [`ToolDef::call`] refuses it with a fatal error.
    ConversationTaking,
}

/// The handler, by kind. A conversation-taking handler's type belongs to the layer that knows
/// messages (the executor), which this crate sits below: it is stored type-erased and the
/// executor takes it back with [`ToolDef::conversation_handler`].
#[derive(Clone)]
enum Handler {
    Plain(Arc<dyn ToolHandler>),
    Conversation(Arc<dyn Any + Send + Sync>),
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef")
            .field("info", &self.spec.info)
            .field("parallel", &self.parallel)
            .field("max_output", &self.max_output)
            .field("timeout", &self.timeout)
            .field("viewer", &self.viewer.is_some())
            .field("options", &self.options)
            .field("kind", &self.kind())
            .finish_non_exhaustive()
    }
}

/// Options of a tool other than its schema, as `#[tool]` sets them (see `__private`).
#[derive(Clone, Default)]
pub struct ToolOptions {
    /// Whether calls may run concurrently with neighbouring parallel calls (default `false`).
    pub parallel: bool,
    /// The output limit in bytes: `None` inherits the run's limit, `Some(0)` never truncates.
    pub max_output: Option<usize>,
    /// How long a call may run before it is stopped with a `timeout` error.
    pub timeout: Option<Duration>,
    /// How a call is shown to people.
    pub viewer: Option<Arc<dyn ToolCallViewer>>,
    /// Provider-specific options, passed through.
    pub options: Option<Map<String, Value>>,
}

impl std::fmt::Debug for ToolOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolOptions")
            .field("parallel", &self.parallel)
            .field("max_output", &self.max_output)
            .field("timeout", &self.timeout)
            .field("viewer", &self.viewer.is_some())
            .field("options", &self.options)
            .finish()
    }
}

/// Checks that a tool and (when `params` is set) each of its parameters has a description (D6).
fn check_descriptions(info: &ToolInfo, params: bool) -> Result<(), ToolDefError> {
    if info.description.trim().is_empty() {
        return Err(ToolDefError::MissingDescription {
            name: info.name.clone(),
        });
    }
    if !params {
        return Ok(());
    }
    for (param, schema) in &info.parameters.properties {
        let described = schema
            .get("description")
            .and_then(Value::as_str)
            .is_some_and(|d| !d.trim().is_empty());
        if !described {
            return Err(ToolDefError::MissingParamDescription {
                name: info.name.clone(),
                param: param.clone(),
            });
        }
    }
    Ok(())
}

impl ToolDef {
    /// Starts a hand-built tool with the given name.
    pub fn builder(name: impl Into<String>) -> ToolDefBuilder {
        ToolDefBuilder {
            name: name.into(),
            description: None,
            parameters: ToolParams::default(),
            param_descriptions: Vec::new(),
            param_descriptions_required: true,
            validate_arguments: true,
            options: ToolOptions::default(),
            handler: None,
        }
    }

    /// Builds a tool from a shared spec (the form `#[tool]` expands to, through `__private`).
    /// The spec's info is not re-checked: the macro has checked it at compile time.
    pub(crate) fn from_spec(
        spec: Arc<ToolSpec>,
        options: ToolOptions,
        handler: impl ToolHandler,
    ) -> ToolDef {
        ToolDef {
            spec,
            parallel: options.parallel,
            max_output: options.max_output,
            timeout: options.timeout,
            viewer: options.viewer,
            options: options.options,
            extensions: Extensions::new(),
            handler: Handler::Plain(Arc::new(handler)),
        }
    }

    /// How the tool runs: [`ToolKind::Plain`], or [`ToolKind::ConversationTaking`].
    pub fn kind(&self) -> ToolKind {
        match self.handler {
            Handler::Plain(_) => ToolKind::Plain,
            Handler::Conversation(_) => ToolKind::ConversationTaking,
        }
    }

    /// The conversation-taking handler, when the tool is one and its handler is a `T` (the
    /// executor's handler type). `None` for plain tools.
    pub fn conversation_handler<T: Any + Send + Sync>(&self) -> Option<&T> {
        match &self.handler {
            Handler::Conversation(h) => h.downcast_ref(),
            Handler::Plain(_) => None,
        }
    }

    /// A copy that is conversation-taking, run by `handler` (a type the executor knows, such
    /// as `actuator_exec::ConversationHandler`; use `actuator_exec::with_conversation`).
    #[must_use]
    pub fn with_conversation_handler<T: Any + Send + Sync>(&self, handler: T) -> ToolDef {
        ToolDef {
            handler: Handler::Conversation(Arc::new(handler)),
            ..self.clone()
        }
    }

    /// The tool's info (name, description, parameters).
    pub fn info(&self) -> &ToolInfo {
        &self.spec.info
    }

    /// The tool's info as a shared pointer: an `Arc` clone, no copying.
    pub fn info_arc(&self) -> Arc<ToolInfo> {
        Arc::clone(&self.spec.info)
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.spec.info.name
    }

    /// The description.
    pub fn description(&self) -> &str {
        &self.spec.info.description
    }

    /// The parameters.
    pub fn parameters(&self) -> &ToolParams {
        &self.spec.info.parameters
    }

    /// Whether calls may run concurrently with neighbouring parallel calls.
    pub fn parallel(&self) -> bool {
        self.parallel
    }

    /// The per-tool output limit: `None` inherits, `Some(0)` never truncates.
    pub fn max_output(&self) -> Option<usize> {
        self.max_output
    }

    /// The per-call timeout.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The viewer, if one is set.
    pub fn viewer(&self) -> Option<&Arc<dyn ToolCallViewer>> {
        self.viewer.as_ref()
    }

    /// Provider-specific options.
    pub fn options(&self) -> Option<&Map<String, Value>> {
        self.options.as_ref()
    }

    /// Typed data attached by outer layers (for example, the executor's conversation-taking
    /// tool hook). Cloned with the tool.
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// A copy with `value` attached as an extension (replacing one of the same type).
    #[must_use]
    pub fn with_extension<T: Send + Sync + 'static>(&self, value: T) -> ToolDef {
        let mut def = self.clone();
        def.extensions.insert(value);
        def
    }

    /// Checks the definition: a valid name, a description for the tool and each parameter, and
    /// a parameters schema that compiles. Executors call this before running anything, so a
    /// wrongly defined tool (for example a struct-parameter tool whose fields lack doc
    /// comments) is reported before a model sees it.
    pub fn check(&self) -> Result<(), ToolDefError> {
        validate_tool_name(self.name())?;
        check_descriptions(self.info(), self.spec.param_descriptions_required)?;
        if !self.spec.validate_arguments {
            return Ok(());
        }
        match self.spec.validator() {
            Ok(_) => Ok(()),
            Err(e) => Err(e.clone()),
        }
    }

    /// Validates a call's arguments (a JSON object) against the parameters schema.
    ///
    /// The validator is compiled on first use and shared by every clone of this tool.
    /// A tool built with [`ToolDefBuilder::validate_arguments`]`(false)` accepts any
    /// arguments here.
    pub fn validate(&self, arguments: &Value) -> Result<(), ToolError> {
        if !self.spec.validate_arguments {
            return Ok(());
        }
        match self.spec.validator() {
            Ok(v) => v.validate(arguments),
            Err(e) => Err(ToolError::parsing(e.to_string())),
        }
    }

    /// Runs the handler with the given (validated) arguments. Deserialization into typed
    /// parameters happens inside, so its failures are `parsing` errors.
    ///
    /// A conversation-taking tool cannot run here (it needs the conversation): the call fails
    /// with a fatal error that says to run it through the executor.
    pub fn call(
        &self,
        arguments: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolFailure>> {
        // A conversation-taking tool's error comes first, whatever the arguments.
        if matches!(self.handler, Handler::Conversation(_)) {
            return self.call_args(ToolArgs::default(), ctx);
        }
        match ToolArgs::from_value(arguments) {
            Ok(args) => self.call_args(args, ctx),
            Err(e) => Box::pin(std::future::ready(Err(e.into()))),
        }
    }

    /// [`ToolDef::call`] with the arguments already wrapped (for example
    /// [`ToolArgs::shared`], which the executor uses so that a call's arguments are not
    /// copied for the tool).
    pub fn call_args(
        &self,
        args: ToolArgs,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolFailure>> {
        let handler = match &self.handler {
            Handler::Plain(h) => h,
            Handler::Conversation(_) => {
                let error = FatalToolError::msg(format!(
                    "Tool '{}' takes the conversation, so it runs only through an executor that passes it (actuator_exec::execute_tools), not through ToolDef::call.",
                    self.name()
                ));
                return Box::pin(std::future::ready(Err(error.into())));
            }
        };
        handler.call(args, ctx)
    }

    fn with_info(&self, info: ToolInfo) -> ToolDef {
        let mut spec = ToolSpec::new(info);
        spec.param_descriptions_required = self.spec.param_descriptions_required;
        spec.validate_arguments = self.spec.validate_arguments;
        ToolDef {
            spec: Arc::new(spec),
            ..self.clone()
        }
    }

    /// A copy with another name (checked against `^[a-zA-Z0-9_-]{1,64}$`).
    pub fn with_name(&self, name: impl Into<String>) -> Result<ToolDef, ToolDefError> {
        let name = name.into();
        validate_tool_name(&name)?;
        let mut info = self.info().clone();
        info.name = name;
        Ok(self.with_info(info))
    }

    /// A copy with another description (which must not be empty).
    pub fn with_description(
        &self,
        description: impl Into<String>,
    ) -> Result<ToolDef, ToolDefError> {
        let mut info = self.info().clone();
        info.description = description.into();
        if info.description.trim().is_empty() {
            return Err(ToolDefError::MissingDescription { name: info.name });
        }
        Ok(self.with_info(info))
    }

    /// A copy with another description for one parameter.
    ///
    /// Fails with `'{param}' is not a valid parameter for the target function.` when the tool
    /// has no such parameter.
    pub fn with_param_description(
        &self,
        param: &str,
        description: impl Into<String>,
    ) -> Result<ToolDef, ToolDefError> {
        let mut info = self.info().clone();
        set_param_description(&mut info.parameters, param, description.into())?;
        Ok(self.with_info(info))
    }

    /// A copy with a whole new parameters schema (the reference's `ToolDef(parameters=…)`),
    /// checked against the parameters the tool's function takes: every new parameter must be
    /// one of them (`'{param}' is not a valid parameter for the target function.`), every
    /// parameter it requires must stay required, and descriptions follow the tool's D6 rule.
    ///
    /// ```
    /// use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure, ToolParams};
    /// use serde_json::json;
    /// let params = |v| ToolParams::from_value(&v).unwrap();
    /// let search = ToolDef::builder("search").description("Searches.")
    ///     .parameters(params(json!({"properties": {
    ///         "q": {"type": "string", "description": "Query."},
    ///         "limit": {"type": "integer", "description": "Hits."}}, "required": ["q"]})))
    ///     .handler(|_a: ToolArgs, _c: ToolContext| async { Ok::<_, ToolFailure>("") })
    ///     .build().unwrap();
    /// // Narrow what the model may send: limit between 1 and 10.
    /// let narrow = search.with_parameters(params(json!({"properties": {
    ///     "q": {"type": "string", "description": "What to look for."},
    ///     "limit": {"type": "integer", "minimum": 1, "maximum": 10, "description": "Hits."}},
    ///     "required": ["q"]}))).unwrap();
    /// assert!(narrow.validate(&json!({"q": "x", "limit": 50})).is_err());
    /// // A parameter the function does not take, or a required one dropped, is refused.
    /// assert!(search.with_parameters(params(json!({"properties": {
    ///     "query": {"type": "string", "description": "Query."}}, "required": ["query"]}))).is_err());
    /// assert!(search.with_parameters(ToolParams::default()).is_err());
    /// ```
    pub fn with_parameters(&self, parameters: ToolParams) -> Result<ToolDef, ToolDefError> {
        let current = self.parameters();
        if let Some(param) = parameters
            .properties
            .keys()
            .find(|p| !current.properties.contains_key(*p))
        {
            return Err(ToolDefError::UnknownParam {
                param: param.clone(),
            });
        }
        if let Some(param) = current
            .required
            .iter()
            .find(|p| !parameters.required.contains(p))
        {
            return Err(ToolDefError::RequiredParamDropped {
                name: self.name().to_owned(),
                param: param.clone(),
            });
        }
        let mut info = self.info().clone();
        info.parameters = parameters;
        check_descriptions(&info, self.spec.param_descriptions_required)?;
        if self.spec.validate_arguments {
            ArgumentValidator::new(&info.name, &info.parameters)?;
        }
        Ok(self.with_info(info))
    }

    /// A copy that runs in parallel stages (or not).
    #[must_use]
    pub fn with_parallel(&self, parallel: bool) -> ToolDef {
        ToolDef {
            parallel,
            ..self.clone()
        }
    }

    /// A copy with another output limit (`None` inherits, `Some(0)` never truncates).
    #[must_use]
    pub fn with_max_output(&self, max_output: Option<usize>) -> ToolDef {
        ToolDef {
            max_output,
            ..self.clone()
        }
    }

    /// A copy with another per-call timeout.
    #[must_use]
    pub fn with_timeout(&self, timeout: Option<Duration>) -> ToolDef {
        ToolDef {
            timeout,
            ..self.clone()
        }
    }

    /// A copy with another viewer.
    #[must_use]
    pub fn with_viewer(&self, viewer: impl ToolCallViewer) -> ToolDef {
        ToolDef {
            viewer: Some(Arc::new(viewer)),
            ..self.clone()
        }
    }

    /// A copy with other provider-specific options.
    #[must_use]
    pub fn with_options(&self, options: Option<Map<String, Value>>) -> ToolDef {
        ToolDef {
            options,
            ..self.clone()
        }
    }
}

fn set_param_description(
    params: &mut ToolParams,
    param: &str,
    description: String,
) -> Result<(), ToolDefError> {
    match params.properties.get_mut(param) {
        Some(Value::Object(schema)) => {
            schema.insert("description".into(), Value::from(description));
            Ok(())
        }
        Some(other) => {
            // A boolean schema (`true`): make it an object to carry the description.
            let mut schema = Map::new();
            if other == &Value::Bool(false) {
                schema.insert("not".into(), Value::Object(Map::new()));
            }
            schema.insert("description".into(), Value::from(description));
            *other = Value::Object(schema);
            Ok(())
        }
        None => Err(ToolDefError::UnknownParam {
            param: param.to_owned(),
        }),
    }
}

/// Builds a [`ToolDef`] by hand from a closure and an explicit schema. See [`ToolDef::builder`].
pub struct ToolDefBuilder {
    name: String,
    description: Option<String>,
    parameters: ToolParams,
    param_descriptions: Vec<(String, String)>,
    param_descriptions_required: bool,
    validate_arguments: bool,
    options: ToolOptions,
    handler: Option<Handler>,
}

impl std::fmt::Debug for ToolDefBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDefBuilder")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("parameters", &self.parameters)
            .field("options", &self.options)
            .field("handler", &self.handler.is_some())
            .finish()
    }
}

impl ToolDefBuilder {
    /// The description (required).
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The parameters schema (default: no parameters).
    #[must_use]
    pub fn parameters(mut self, parameters: ToolParams) -> Self {
        self.parameters = parameters;
        self
    }

    /// Sets one parameter's description (checked when built).
    #[must_use]
    pub fn param_description(
        mut self,
        param: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        self.param_descriptions
            .push((param.into(), description.into()));
        self
    }

    /// Whether every parameter must have a description (default `true`, D6).
    ///
    /// Turn it off only for tools that come from elsewhere (an MCP server, a user's JSON
    /// schema), whose parameters may have no description: the model then sees none. The tool
    /// itself still needs a description, and `check` keeps this setting.
    ///
    /// ```
    /// use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure, ToolParams};
    /// let params = ToolParams::from_value(&serde_json::json!({
    ///     "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]
    /// })).unwrap();
    /// let build = |strict: bool| ToolDef::builder("search")
    ///     .description("Searches.")
    ///     .parameters(params.clone())
    ///     .require_param_descriptions(strict)
    ///     .handler(|_a: ToolArgs, _c: ToolContext| async { Ok::<_, ToolFailure>("") })
    ///     .build();
    /// assert!(build(true).is_err());
    /// assert!(build(false).unwrap().check().is_ok());
    /// ```
    #[must_use]
    pub fn require_param_descriptions(mut self, required: bool) -> Self {
        self.param_descriptions_required = required;
        self
    }

    /// Whether arguments are validated against the parameters schema before the handler runs
    /// (default `true`).
    ///
    /// Turn it off only for a tool that comes from elsewhere and validates its own arguments,
    /// whose schema this crate's validator cannot compile (an MCP server's tool with a dialect
    /// or keyword the validator refuses): the model still sees the schema, the tool is still
    /// callable, and its server reports bad arguments. `build` then does not compile the
    /// schema, and [`ToolDef::validate`] accepts any arguments.
    ///
    /// ```
    /// use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure, ToolParams};
    /// use serde_json::json;
    /// let params = ToolParams::from_value(&json!({
    ///     "properties": {"q": {"type": "string", "pattern": "(unclosed"}}
    /// })).unwrap();
    /// let build = |validate: bool| ToolDef::builder("search")
    ///     .description("Searches.")
    ///     .parameters(params.clone())
    ///     .require_param_descriptions(false)
    ///     .validate_arguments(validate)
    ///     .handler(|_a: ToolArgs, _c: ToolContext| async { Ok::<_, ToolFailure>("") })
    ///     .build();
    /// assert!(build(true).is_err());
    /// let tool = build(false).unwrap();
    /// assert!(tool.check().is_ok());
    /// assert!(tool.validate(&json!({"q": 5})).is_ok());
    /// ```
    #[must_use]
    pub fn validate_arguments(mut self, validate: bool) -> Self {
        self.validate_arguments = validate;
        self
    }

    /// Whether calls may run concurrently with neighbouring parallel calls (default `false`).
    #[must_use]
    pub fn parallel(mut self, parallel: bool) -> Self {
        self.options.parallel = parallel;
        self
    }

    /// The output limit in bytes: `None` inherits, `Some(0)` never truncates.
    #[must_use]
    pub fn max_output(mut self, max_output: Option<usize>) -> Self {
        self.options.max_output = max_output;
        self
    }

    /// The per-call timeout.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options.timeout = Some(timeout);
        self
    }

    /// How calls are shown to people.
    #[must_use]
    pub fn viewer(mut self, viewer: impl ToolCallViewer) -> Self {
        self.options.viewer = Some(Arc::new(viewer));
        self
    }

    /// Provider-specific options.
    #[must_use]
    pub fn options(mut self, options: Map<String, Value>) -> Self {
        self.options.options = Some(options);
        self
    }

    /// What runs when the tool is called.
    #[must_use]
    pub fn handler(mut self, handler: impl ToolHandler) -> Self {
        self.handler = Some(Handler::Plain(Arc::new(handler)));
        self
    }

    /// Makes the tool conversation-taking ([`ToolKind::ConversationTaking`]), run by `handler`,
    /// a handler type the executor knows (`actuator_exec::ConversationHandler`). Replaces
    /// [`handler`](Self::handler).
    #[must_use]
    pub fn conversation_handler<T: Any + Send + Sync>(mut self, handler: T) -> Self {
        self.handler = Some(Handler::Conversation(Arc::new(handler)));
        self
    }

    /// Checks and builds the tool: the name must be valid, the tool and each parameter must have
    /// a description (`Description not provided for tool function '{name}'`,
    /// `Description not provided for parameter '{param}' of function '{name}'.`), every
    /// description override must name a parameter, and the schema must compile.
    pub fn build(self) -> Result<ToolDef, ToolDefError> {
        validate_tool_name(&self.name)?;
        let mut parameters = self.parameters;
        for (param, description) in self.param_descriptions {
            set_param_description(&mut parameters, &param, description)?;
        }
        let info = ToolInfo::new(self.name, self.description.unwrap_or_default(), parameters);
        check_descriptions(&info, self.param_descriptions_required)?;
        let handler = self.handler.ok_or_else(|| ToolDefError::MissingHandler {
            name: info.name.clone(),
        })?;
        let validator = if self.validate_arguments {
            OnceLock::from(Ok(ArgumentValidator::new(&info.name, &info.parameters)?))
        } else {
            OnceLock::new()
        };
        let spec = ToolSpec {
            info: Arc::new(info),
            validator,
            param_descriptions_required: self.param_descriptions_required,
            validate_arguments: self.validate_arguments,
        };
        Ok(ToolDef {
            spec: Arc::new(spec),
            parallel: self.options.parallel,
            max_output: self.options.max_output,
            timeout: self.options.timeout,
            viewer: self.options.viewer,
            options: self.options.options,
            extensions: Extensions::new(),
            handler,
        })
    }
}
