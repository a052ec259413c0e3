//! [`ToolSpec`] (a tool's info and validator) and [`ToolOptions`] (everything else `#[tool]`
//! sets), and the description check both kinds of tool share.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::error::ToolDefError;
use crate::info::ToolInfo;
use crate::validate::ArgumentValidator;
use crate::view::ToolCallViewer;

/// The schema half of a tool: its info and its lazily compiled validator, shared by every clone
/// (and, for `#[tool]` items, by every `ToolDef` built from the same item).
#[derive(Debug)]
pub struct ToolSpec {
    pub(super) info: Arc<ToolInfo>,
    pub(super) validator: OnceLock<Result<ArgumentValidator, ToolDefError>>,
    /// Whether every parameter must be described (D6); off only for foreign tools.
    pub(super) param_descriptions_required: bool,
    /// Whether arguments are validated against the schema here; off only for foreign tools
    /// whose schema our validator cannot compile (their server validates).
    pub(super) validate_arguments: bool,
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

    pub(super) fn validator(&self) -> &Result<ArgumentValidator, ToolDefError> {
        self.validator
            .get_or_init(|| ArgumentValidator::new(&self.info.name, &self.info.parameters))
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
pub(crate) fn check_descriptions(info: &ToolInfo, params: bool) -> Result<(), ToolDefError> {
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
