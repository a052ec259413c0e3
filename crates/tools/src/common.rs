//! What the tools share: options, the code viewer, finding the sandbox, and argument checks.

use std::time::Duration;

use actuator_sandbox::SandboxHandle;
use actuator_tool_core::{
    ContentFormat, ToolCallContent, ToolCallView, ToolCallViewer, ToolContext, ToolDef, ToolError,
};
use serde_json::{Map, Value};

/// The options of `python` and `text_editor`: a timeout and a user.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShellOptions {
    /// Kill a command after this long (`None`: no timeout; `text_editor`: 180 s).
    pub timeout: Option<Duration>,
    /// Run as this user (`None`: the sandbox's default user).
    pub user: Option<String>,
}

impl ShellOptions {
    /// No timeout, the default user.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the timeout.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the user.
    #[must_use]
    pub fn user(mut self, user: impl Into<String>) -> Self {
        self.user = Some(user.into());
        self
    }
}

/// The reference's viewer for code tools: the argument `code_param` in a fenced block of
/// `language` (titled `language`), or the function's name when the argument is missing.
///
/// ```
/// use actuator_tool_core::ToolCallViewer;
/// let viewer = actuator_tools::code_viewer("bash", "command");
/// let args = serde_json::json!({"command": " ls -la \n"});
/// let view = viewer.view("bash", args.as_object().unwrap());
/// assert_eq!(view.call.unwrap().content, "```bash\nls -la\n```\n");
/// ```
pub fn code_viewer(language: &'static str, code_param: &'static str) -> impl ToolCallViewer {
    move |function: &str, arguments: &Map<String, Value>| {
        let code = match arguments.get(code_param) {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::Null) | None => function.to_owned(),
            Some(Value::String(_)) => function.to_owned(),
            Some(other) => other.to_string(),
        };
        ToolCallView {
            context: None,
            call: Some(ToolCallContent {
                title: Some(language.to_owned()),
                format: ContentFormat::Markdown,
                content: format!("```{language}\n{}\n```\n", code.trim()),
            }),
        }
    }
}

/// `def`, declaring that it runs in the run's sandbox (so a run without one is refused
/// before it starts).
pub(crate) fn needs_sandbox(def: ToolDef) -> ToolDef {
    def.with_requirement(SandboxHandle::requirement())
}

/// The run's sandbox, or the `sandbox_unavailable` error.
pub(crate) fn sandbox(ctx: &ToolContext) -> Result<SandboxHandle, ToolError> {
    SandboxHandle::from_context(ctx).cloned()
}

/// The reference's `parsing` error for an argument holding a NUL byte.
pub(crate) fn check_nul(function: &str, values: &[&str]) -> Result<(), ToolError> {
    if values.iter().any(|v| v.contains('\0')) {
        Err(ToolError::embedded_null_byte(function))
    } else {
        Ok(())
    }
}

/// Seconds as the reference prints an `int` timeout (`60`), or with a fraction when there is
/// one.
pub(crate) fn seconds(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        d.as_secs().to_string()
    } else {
        format!("{}", d.as_secs_f64())
    }
}
