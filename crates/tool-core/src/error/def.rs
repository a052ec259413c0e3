//! Errors of a tool defined wrongly, reported when it is built.

/// A tool defined wrongly: reported when the tool is built, before any model sees it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolDefError {
    /// The name does not match `^[a-zA-Z0-9_-]{1,64}$`.
    #[error(
        "Invalid tool name '{name}': a tool name must be 1 to 64 characters from [a-zA-Z0-9_-]."
    )]
    InvalidName {
        /// The rejected name.
        name: String,
    },
    /// The tool has no description.
    #[error("Description not provided for tool function '{name}'")]
    MissingDescription {
        /// The tool's name.
        name: String,
    },
    /// A parameter has no description.
    #[error("Description not provided for parameter '{param}' of function '{name}'.")]
    MissingParamDescription {
        /// The tool's name.
        name: String,
        /// The parameter without a description.
        param: String,
    },
    /// An override named a parameter the tool does not have.
    #[error("'{param}' is not a valid parameter for the target function.")]
    UnknownParam {
        /// The unknown parameter.
        param: String,
    },
    /// The parameters schema is not a usable object schema.
    #[error("Invalid tool parameters schema: {reason}")]
    InvalidParameters {
        /// What is wrong with it.
        reason: String,
    },
    /// Two tools in one tool set have the same name.
    #[error(
        "Duplicate tool name '{name}': every tool offered to a model must have a distinct name."
    )]
    DuplicateName {
        /// The duplicated name.
        name: String,
    },
    /// A hand-built tool was given no handler.
    #[error("Tool '{name}' has no handler: call `.handler(...)` on its builder.")]
    MissingHandler {
        /// The tool's name.
        name: String,
    },
    /// The parameters schema could not be compiled into a validator.
    #[error("The parameters schema of tool '{name}' is not valid JSON Schema: {reason}")]
    InvalidSchema {
        /// The tool's name.
        name: String,
        /// The compiler's message.
        reason: String,
    },
    /// A replacement parameters schema leaves out, or makes optional, a parameter the tool's
    /// function requires.
    #[error(
        "Parameter '{param}' of tool '{name}' is required by its function, so the new parameters must keep it, and keep it required."
    )]
    RequiredParamDropped {
        /// The tool's name.
        name: String,
        /// The parameter.
        param: String,
    },
}
