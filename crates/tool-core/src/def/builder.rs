//! [`ToolDefBuilder`]: a tool built by hand from a closure and an explicit schema.

use std::any::Any;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{Map, Value};

use super::overrides::set_param_description;
use super::{
    CanonicalArguments, Handler, ToolDef, ToolHandler, ToolOptions, ToolSpec, check_descriptions,
};
use crate::context::Extensions;
use crate::error::{ToolDefError, ToolError};
use crate::info::{ToolInfo, ToolParams, validate_tool_name};
use crate::validate::ArgumentValidator;
use crate::view::ToolCallViewer;

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
    canonical: Option<CanonicalArguments>,
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
    pub(super) fn new(name: String) -> Self {
        ToolDefBuilder {
            name,
            description: None,
            parameters: ToolParams::default(),
            param_descriptions: Vec::new(),
            param_descriptions_required: true,
            validate_arguments: true,
            options: ToolOptions::default(),
            handler: None,
            canonical: None,
        }
    }

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

    /// How the tool canonicalises its arguments before approval (see [`CanonicalArguments`]).
    ///
    /// ```
    /// use actuator_tool_core::{ToolArgs, ToolContext, ToolDef, ToolError, ToolFailure};
    /// use serde_json::{Map, Value};
    /// let tool = ToolDef::builder("noop")
    ///     .description("Does nothing.")
    ///     .canonical_arguments(|a: &Map<String, Value>| Ok::<_, ToolError>(a.clone()))
    ///     .handler(|_a: ToolArgs, _c: ToolContext| async { Ok::<_, ToolFailure>("") })
    ///     .build()
    ///     .unwrap();
    /// assert!(tool.canonical_arguments().is_some());
    /// ```
    #[must_use]
    pub fn canonical_arguments(
        mut self,
        canonical: impl Fn(&Map<String, Value>) -> Result<Map<String, Value>, ToolError>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.canonical = Some(CanonicalArguments::new(canonical));
        self
    }

    /// What runs when the tool is called.
    #[must_use]
    pub fn handler(mut self, handler: impl ToolHandler) -> Self {
        self.handler = Some(Handler::Plain(Arc::new(handler)));
        self
    }

    /// Makes the tool conversation-taking ([`ToolKind::ConversationTaking`]), run by
    /// `handler`, a handler type the executor knows (`actuator_exec::ConversationHandler`).
    /// Replaces [`handler`](Self::handler).
    ///
    /// [`ToolKind::ConversationTaking`]: super::ToolKind::ConversationTaking
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
            extensions: {
                let mut extensions = Extensions::new();
                if let Some(canonical) = self.canonical {
                    extensions.insert(canonical);
                }
                extensions
            },
            requirements: Arc::from([]),
            handler,
        })
    }
}
