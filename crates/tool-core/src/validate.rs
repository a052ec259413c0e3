//! Argument validation: every call's arguments are checked against the tool's compiled JSON
//! Schema before they are deserialized, and all problems are reported to the model at once.

use std::fmt::Write as _;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::LocationSegment;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

use crate::error::{ToolDefError, ToolError, format_limit};
use crate::info::ToolParams;
use crate::literal::{python_float, python_literal_capped, python_quoted_capped};

/// The deepest argument nesting accepted; deeper arguments are a `parsing` error.
pub const MAX_ARGUMENT_DEPTH: usize = 100;

/// The longest rendering of a value inside a validation message, in characters.
const MAX_REPR_CHARS: usize = 200;

/// The most errors a validation message lists; the rest are counted.
const MAX_LISTED_ERRORS: usize = 20;

/// The most unexpected property names one error lists; the rest are counted.
const MAX_LISTED_NAMES: usize = 20;

/// `text` cut to [`MAX_REPR_CHARS`] characters (paths built from a model's keys).
fn capped(text: &str) -> String {
    if text.chars().count() > MAX_REPR_CHARS {
        let cut: String = text.chars().take(MAX_REPR_CHARS).collect();
        format!("{cut}...")
    } else {
        text.to_owned()
    }
}

/// Checks that `value` nests at most [`MAX_ARGUMENT_DEPTH`] arrays/objects deep, without
/// recursion (so hostile input cannot overflow the stack).
///
/// ```
/// use actuator_tool_core::check_nesting_depth;
/// let mut deep = serde_json::json!(1);
/// for _ in 0..101 { deep = serde_json::json!([deep]); }
/// let err = check_nesting_depth(&deep).unwrap_err();
/// assert_eq!(
///     err.message(),
///     "Error parsing tool call arguments: arguments exceed the maximum supported nesting depth of 100"
/// );
/// ```
pub fn check_nesting_depth(value: &Value) -> Result<(), ToolError> {
    // Only containers are stacked, and the stack starts empty (no allocation): every call's
    // arguments pass here, and most hold scalars only.
    let mut stack: Vec<(&Value, usize)> = Vec::new();
    let mut next = Some((value, 0));
    while let Some((v, depth)) = next.take().or_else(|| stack.pop()) {
        let depth = depth + 1;
        let containers = |c: &&Value| matches!(c, Value::Array(_) | Value::Object(_));
        match v {
            Value::Array(_) | Value::Object(_) if depth > MAX_ARGUMENT_DEPTH => {
                return Err(ToolError::too_deep());
            }
            Value::Array(items) => {
                stack.extend(items.iter().filter(containers).map(|c| (c, depth)));
            }
            Value::Object(map) => {
                stack.extend(map.values().filter(containers).map(|c| (c, depth)));
            }
            _ => {}
        }
    }
    Ok(())
}

/// A tool's compiled argument validator.
///
/// Compiled once per tool (a [`ToolDef`](crate::ToolDef) compiles it lazily and shares it
/// between clones). Formats declared by parameter types (`date-time`, `date`, `uuid`, …) are
/// enforced, and a number with a zero fraction is accepted where an integer is expected.
#[derive(Debug, Clone)]
pub struct ArgumentValidator {
    validator: Validator,
    /// The root schema's keywords in order: errors are reported in this order, as the
    /// reference (which walks the schema's keywords in order) reports them.
    keyword_order: Vec<String>,
}

impl ArgumentValidator {
    /// Compiles the validator for a tool's parameters.
    pub fn new(tool_name: &str, params: &ToolParams) -> Result<Self, ToolDefError> {
        let schema = params.to_value();
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&schema)
            .map_err(|e| ToolDefError::InvalidSchema {
                name: tool_name.to_owned(),
                reason: e.to_string(),
            })?;
        let keyword_order = schema
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        Ok(ArgumentValidator {
            validator,
            keyword_order,
        })
    }

    /// Validates a call's arguments, reporting every error as one `parsing` error:
    ///
    /// ```text
    /// Found 2 validation errors parsing tool input arguments:
    /// - x: '1' is not of type 'integer'
    /// - y: 'y' is a required property
    /// ```
    ///
    /// `arguments` is the JSON object of the call's arguments.
    pub fn validate(&self, arguments: &Value) -> Result<(), ToolError> {
        // The validator walks arguments recursively: bound the depth first.
        check_nesting_depth(arguments)?;
        let instance = arguments;
        if self.validator.is_valid(instance) {
            return Ok(());
        }
        let mut errors: Vec<ValidationError<'_>> = self.validator.iter_errors(instance).collect();
        errors.sort_by_key(|e| {
            let keyword = e.schema_path().segments().next().map(|s| s.to_string());
            keyword
                .and_then(|k| self.keyword_order.iter().position(|o| *o == k))
                .unwrap_or(usize::MAX)
        });
        let n = errors.len();
        let mut message = format!(
            "Found {n} validation {} parsing tool input arguments:",
            if n == 1 { "error" } else { "errors" }
        );
        // Whatever a model sent, what it reads back stays a few KiB: the first errors, then
        // how many more there were.
        for e in errors.iter().take(MAX_LISTED_ERRORS) {
            let _ = write!(
                message,
                "\n- {}: {}",
                capped(&error_path(e)),
                error_message(e)
            );
        }
        if n > MAX_LISTED_ERRORS {
            let more = n - MAX_LISTED_ERRORS;
            let _ = write!(
                message,
                "\n… and {} more {}",
                format_limit(more as f64),
                if more == 1 { "error" } else { "errors" }
            );
        }
        Err(ToolError::parsing(message))
    }
}

/// Renders an instance path as `a.b[0].c`; the root is `(arguments)`. For a missing or
/// unexpected property the property itself is named.
fn error_path(err: &ValidationError<'_>) -> String {
    let mut path = String::new();
    for segment in err.instance_path().segments() {
        match segment {
            LocationSegment::Property(p) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&p);
            }
            LocationSegment::Index(i) => {
                let _ = write!(path, "[{i}]");
            }
        }
    }
    let named = match err.kind() {
        ValidationErrorKind::Required { property } => property.as_str().map(str::to_owned),
        ValidationErrorKind::AdditionalProperties { unexpected } if unexpected.len() == 1 => {
            unexpected.first().cloned()
        }
        _ => None,
    };
    if let Some(name) = named {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(&name);
    }
    if path.is_empty() {
        path.push_str("(arguments)");
    }
    path
}

/// The message for one validation error, worded as Python's `jsonschema` words it (the
/// reference behaviour), with values rendered as Python literals.
fn error_message(err: &ValidationError<'_>) -> String {
    let instance = py_repr(err.instance());
    match err.kind() {
        ValidationErrorKind::Type { kind } => {
            let types = match kind {
                TypeKind::Single(t) => format!("'{t}'"),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| format!("'{t}'"))
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            format!("{instance} is not of type {types}")
        }
        ValidationErrorKind::Required { property } => {
            format!("{} is a required property", py_repr(property))
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let mut names: Vec<String> = unexpected
                .iter()
                .take(MAX_LISTED_NAMES)
                .map(|n| py_str(n))
                .collect();
            if unexpected.len() > MAX_LISTED_NAMES {
                let more = unexpected.len() - MAX_LISTED_NAMES;
                names.push(format!("… and {} more", format_limit(more as f64)));
            }
            let verb = if unexpected.len() == 1 { "was" } else { "were" };
            format!(
                "Additional properties are not allowed ({} {verb} unexpected)",
                names.join(", ")
            )
        }
        ValidationErrorKind::Enum { options } => {
            format!("{instance} is not one of {}", py_repr(options))
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("{} was expected", py_repr(expected_value))
        }
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            let base = format!("{instance} is not valid under any of the given schemas");
            match closest_cause(err, context) {
                Some(cause) => format!("{base} (closest match: {cause})"),
                None => base,
            }
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => {
            format!("{instance} is valid under more than one of the given schemas")
        }
        ValidationErrorKind::Minimum { limit } => {
            format!("{instance} is less than the minimum of {}", py_repr(limit))
        }
        ValidationErrorKind::Maximum { limit } => {
            format!(
                "{instance} is greater than the maximum of {}",
                py_repr(limit)
            )
        }
        ValidationErrorKind::ExclusiveMinimum { limit } => format!(
            "{instance} is less than or equal to the minimum of {}",
            py_repr(limit)
        ),
        ValidationErrorKind::ExclusiveMaximum { limit } => format!(
            "{instance} is greater than or equal to the maximum of {}",
            py_repr(limit)
        ),
        ValidationErrorKind::MinLength { limit } | ValidationErrorKind::MinItems { limit } => {
            if *limit == 1 {
                format!("{instance} should be non-empty")
            } else {
                format!("{instance} is too short")
            }
        }
        ValidationErrorKind::MaxLength { limit } | ValidationErrorKind::MaxItems { limit } => {
            if *limit == 0 {
                format!("{instance} is expected to be empty")
            } else {
                format!("{instance} is too long")
            }
        }
        ValidationErrorKind::Pattern { pattern } => {
            format!("{instance} does not match {}", py_str(pattern))
        }
        ValidationErrorKind::Format { format } => {
            format!("{instance} is not a {}", py_str(format))
        }
        ValidationErrorKind::MultipleOf { multiple_of } => {
            format!(
                "{instance} is not a multiple of {}",
                python_float(*multiple_of)
            )
        }
        ValidationErrorKind::UniqueItems => format!("{instance} has non-unique elements"),
        ValidationErrorKind::FalseSchema => format!("False schema does not allow {instance}"),
        ValidationErrorKind::MinProperties { .. } => {
            format!("{instance} does not have enough properties")
        }
        ValidationErrorKind::MaxProperties { .. } => {
            format!("{instance} has too many properties")
        }
        _ => err.to_string(),
    }
}

/// Picks the alternative of a failed `anyOf`/`oneOf` that came closest to matching and names
/// its first problem. An alternative whose type matched beats one whose type did not; then the
/// one with the fewest errors wins.
fn closest_cause(
    parent: &ValidationError<'_>,
    context: &[Vec<ValidationError<'static>>],
) -> Option<String> {
    let parent_depth = parent.instance_path().segments().count();
    let score = |errors: &Vec<ValidationError<'static>>| {
        let wrong_type = errors.iter().any(|e| {
            matches!(e.kind(), ValidationErrorKind::Type { .. })
                && e.instance_path().segments().count() == parent_depth
        });
        (wrong_type, errors.len())
    };
    let best = context
        .iter()
        .filter(|errors| !errors.is_empty())
        .min_by_key(|errors| score(errors))?;
    // Alternatives that all fail on type alone give no useful hint.
    if score(best).0 && context.len() > 1 {
        return None;
    }
    let first = best.first()?;
    let message = error_message(first);
    let depth = first.instance_path().segments().count();
    if depth > parent_depth {
        Some(format!("{}: {message}", error_path(first)))
    } else {
        Some(message)
    }
}

/// A Python `repr`-style rendering of a JSON value, capped in length.
pub(crate) fn py_repr(value: &Value) -> String {
    python_literal_capped(value, MAX_REPR_CHARS)
}

/// A Python `repr` of a string, capped in length.
fn py_str(s: &str) -> String {
    python_quoted_capped(s, MAX_REPR_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn py_repr_matches_python() {
        assert_eq!(py_repr(&json!("1")), "'1'");
        assert_eq!(py_repr(&json!(null)), "None");
        assert_eq!(py_repr(&json!(1.5)), "1.5");
        assert_eq!(py_repr(&json!(1.0)), "1.0");
        assert_eq!(py_repr(&json!(["fast", "exact"])), "['fast', 'exact']");
        assert_eq!(py_repr(&json!({"a": [1, "x"]})), "{'a': [1, 'x']}");
        assert_eq!(py_repr(&json!("it's")), "\"it's\"");
        assert_eq!(py_repr(&json!(true)), "True");
    }
}
