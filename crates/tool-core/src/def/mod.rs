//! [`ToolDef`]: a tool ready to run. Its handler trait is in `handler`, its schema half in
//! `spec`, the `with_*` overrides in `overrides` and the hand-built form in `builder`.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::args::ToolArgs;
use crate::content::ToolOutput;
use crate::context::{Extensions, ToolContext};
use crate::error::{FatalToolError, ToolDefError, ToolError, ToolFailure};
use crate::info::{ToolInfo, ToolParams, validate_tool_name};
use crate::requirement::ResourceRequirement;
use crate::view::ToolCallViewer;

mod builder;
mod canonical;
mod handler;
mod overrides;
mod spec;

pub use builder::ToolDefBuilder;
pub use canonical::CanonicalArguments;
pub use handler::{BoxFuture, ToolHandler};
pub(crate) use spec::check_descriptions;
pub use spec::{ToolOptions, ToolSpec};

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
    requirements: Arc<[ResourceRequirement]>,
    handler: Handler,
}

/// A tool's declaration that a call repeated with the same arguments does no more than the
/// call once (a read, a computation, a write of fixed content to a fixed place): see
/// [`ToolDef::as_idempotent`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Idempotent;

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
            .field("requirements", &self.requirements)
            .finish_non_exhaustive()
    }
}

impl ToolDef {
    /// Starts a hand-built tool with the given name.
    pub fn builder(name: impl Into<String>) -> ToolDefBuilder {
        ToolDefBuilder::new(name.into())
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
            requirements: Arc::from([]),
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

    /// Whether the tool is declared [`Idempotent`]: a call repeated with the same arguments
    /// does no more than the call once.
    pub fn idempotent(&self) -> bool {
        self.extensions.get::<Idempotent>().is_some()
    }

    /// A copy declared [`Idempotent`]. A run resumed after a crash runs such a tool's calls
    /// that were cut off again, rather than telling the model their effect is unknown.
    ///
    /// ```
    /// use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolFailure, ToolParams};
    /// let read = ToolDef::builder("read_config")
    ///     .description("Read the configuration.")
    ///     .parameters(ToolParams::from_value(&serde_json::json!({"properties": {}})).unwrap())
    ///     .handler(|_a: ToolArgs, _c: ToolContext| async { Ok::<_, ToolFailure>("{}") })
    ///     .build()
    ///     .unwrap();
    /// assert!(!read.idempotent());
    /// assert!(read.as_idempotent().idempotent());
    /// ```
    #[must_use]
    pub fn as_idempotent(&self) -> ToolDef {
        self.with_extension(Idempotent)
    }

    /// A copy with `value` attached as an extension (replacing one of the same type).
    #[must_use]
    pub fn with_extension<T: Send + Sync + 'static>(&self, value: T) -> ToolDef {
        let mut def = self.clone();
        def.extensions.insert(value);
        def
    }

    /// The run resources the tool cannot work without (a sandbox, for the built-in shell
    /// tools): a run that lacks one is refused before it starts.
    pub fn requirements(&self) -> &[ResourceRequirement] {
        &self.requirements
    }

    /// A copy that declares it needs `requirement` (declared once, however often given).
    ///
    /// ```
    /// use actuator_tool_core::{ResourceRequirement, ToolArgs, ToolContext, ToolDef, ToolFailure};
    /// struct Database;
    /// let tool = ToolDef::builder("query")
    ///     .description("Queries the database.")
    ///     .handler(|_a: ToolArgs, _c: ToolContext| async { Ok::<_, ToolFailure>("") })
    ///     .build()
    ///     .unwrap();
    /// let needs = ResourceRequirement::of::<Database>("a database", "add one to the run's resources");
    /// let tool = tool.with_requirement(needs.clone()).with_requirement(needs);
    /// assert_eq!(tool.requirements().len(), 1);
    /// ```
    #[must_use]
    pub fn with_requirement(&self, requirement: ResourceRequirement) -> ToolDef {
        let mut def = self.clone();
        if !def.requirements.contains(&requirement) {
            let mut all = def.requirements.to_vec();
            all.push(requirement);
            def.requirements = all.into();
        }
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
}
