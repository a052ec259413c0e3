//! `bash` and `python`: one fresh process per call, output as `stderr\nstdout`.

use std::time::Duration;

use actuator_sandbox::ExecRequest;
use actuator_tool_core::{
    ToolArgs, ToolContext, ToolDef, ToolDefError, ToolError, ToolFailure, ToolParams,
};
use serde_json::json;

use crate::common::{ShellOptions, check_nul, code_viewer, needs_sandbox, sandbox, seconds};

const BASH_DESCRIPTION: &str = "Use this function to execute bash commands.";

const BASH_BACKGROUND_TIMEOUT: &str = "Use this function to execute bash commands.\n\nThis tool terminates any command that runs longer than {timeout} seconds. For operations that may exceed this (builds, large downloads, model training, long-running servers), start them in the background and check on them in later calls instead of blocking. Launch the process and record its PID in the same call (`$!` is only valid in the call that launched it):\n\n  nohup <command> > /tmp/task.log 2>&1 & echo \"PID $!\"\n\nEach call runs in a fresh shell, but a background process keeps running between calls. Track the PID and log path yourself, then poll in later calls:\n\n  ps -p <PID>                # still running?\n  tail -n 50 /tmp/task.log   # latest output\n\nDo not use `sleep` to wait for completion: a sleep longer than {timeout}s is itself terminated. Return and check again in a later call.";

const BASH_BACKGROUND_NO_TIMEOUT: &str = "Use this function to execute bash commands.\n\nFor long-running operations (builds, large downloads, model training, long-running servers), consider starting them in the background so you can continue working and check on progress in later calls instead of blocking a single call. Launch the process and record its PID in the same call (`$!` is only valid in the call that launched it):\n\n  nohup <command> > /tmp/task.log 2>&1 & echo \"PID $!\"\n\nEach call runs in a fresh shell, but a background process keeps running between calls. Track the PID and log path yourself, then poll in later calls:\n\n  ps -p <PID>                # still running?\n  tail -n 50 /tmp/task.log   # latest output";

const PYTHON_DESCRIPTION: &str = "Use the python function to execute Python code.\n\nThe Python tool executes single-run Python scripts. Important notes:\n1. Each execution is independent - no state is preserved between runs\n2. You must explicitly use print() statements to see any output\n3. Simply writing expressions (like in notebooks) will not display results\n4. The script cannot accept interactive input during execution\n5. Return statements alone won't produce visible output\n6. All variables and imports are cleared between executions\n7. Standard output (via print()) is the only way to see results";

/// The options of [`bash`]: a timeout, a user, and the `background` description.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BashOptions {
    /// Kill a command after this long (`None`: no timeout).
    pub timeout: Option<Duration>,
    /// Run as this user (`None`: the sandbox's default user).
    pub user: Option<String>,
    /// Replace the description with the reference's guidance on running long commands in
    /// the background (quoting the timeout when one is set). Behaviour is unchanged.
    pub background: bool,
}

impl BashOptions {
    /// No timeout, the default user, the plain description.
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

    /// Uses the background-task description.
    #[must_use]
    pub fn background(mut self, background: bool) -> Self {
        self.background = background;
        self
    }

    fn description(&self) -> String {
        match (self.background, self.timeout) {
            (false, _) => BASH_DESCRIPTION.to_owned(),
            (true, None) => BASH_BACKGROUND_NO_TIMEOUT.to_owned(),
            (true, Some(t)) => BASH_BACKGROUND_TIMEOUT.replace("{timeout}", &seconds(t)),
        }
    }
}

fn one_string_param(name: &str, description: &str) -> Result<ToolParams, ToolDefError> {
    ToolParams::from_value(&json!({
        "type": "object",
        "properties": {name: {"type": "string", "description": description}},
        "required": [name],
        "additionalProperties": false,
    }))
}

/// Runs `request` in the call's sandbox and returns the reference's `stderr\nstdout`.
async fn run(ctx: &ToolContext, request: ExecRequest) -> Result<String, ToolFailure> {
    let sandbox = sandbox(ctx)?;
    let out = sandbox.exec(request).await.map_err(ToolError::from)?;
    Ok(out.combined())
}

/// The `bash` tool: runs `bash --login -c command` in the sandbox.
///
/// Returns `"{stderr}\n{stdout}"` when the command wrote to standard error, else its
/// standard output; a non-zero exit is never an error. A timeout is the `timeout` error with
/// the output so far; more than the sandbox's output limit is the `limit` error with the
/// output cut.
pub fn bash(options: BashOptions) -> Result<ToolDef, ToolDefError> {
    let description = options.description();
    let BashOptions { timeout, user, .. } = options;
    ToolDef::builder("bash")
        .description(description)
        .parameters(one_string_param("command", "The bash command to execute.")?)
        .parallel(true)
        .viewer(code_viewer("bash", "command"))
        .handler(move |mut args: ToolArgs, ctx: ToolContext| {
            let user = user.clone();
            async move {
                let command: String = args.required("command")?;
                check_nul(&ctx.function, &[&command])?;
                let request = ExecRequest::new(["bash", "--login", "-c", &command])
                    .timeout(timeout)
                    .user(user);
                run(&ctx, request).await
            }
        })
        .build()
        .map(needs_sandbox)
}

/// The `python` tool: runs `bash --login -c "python3 -"` with the code on standard input.
/// Output, timeouts and limits as for [`bash`].
pub fn python(options: ShellOptions) -> Result<ToolDef, ToolDefError> {
    let ShellOptions { timeout, user } = options;
    ToolDef::builder("python")
        .description(PYTHON_DESCRIPTION)
        .parameters(one_string_param("code", "The python code to execute.")?)
        .parallel(true)
        .viewer(code_viewer("python", "code"))
        .handler(move |mut args: ToolArgs, ctx: ToolContext| {
            let user = user.clone();
            async move {
                let code: String = args.required("code")?;
                check_nul(&ctx.function, &[&code])?;
                let request = ExecRequest::new(["bash", "--login", "-c", "python3 -"])
                    .stdin(code)
                    .timeout(timeout)
                    .user(user);
                run(&ctx, request).await
            }
        })
        .build()
        .map(needs_sandbox)
}
