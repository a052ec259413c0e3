//! The `with_*` overrides of [`ToolDef`]: each returns a new tool and leaves the original as
//! it was.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{ToolDef, ToolSpec, check_descriptions};
use crate::error::ToolDefError;
use crate::info::{ToolInfo, ToolParams, validate_tool_name};
use crate::validate::ArgumentValidator;
use crate::view::ToolCallViewer;

impl ToolDef {
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

pub(super) fn set_param_description(
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
