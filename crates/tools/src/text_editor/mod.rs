//! `text_editor`: view, create, str_replace, insert and undo_edit, with the outputs of
//! Anthropic's text editor tool that the reference follows. Every file operation runs inside
//! the sandbox, and paths that resolve outside its working directory are refused.

mod format;
mod ops;

use std::time::Duration;

use actuator_tool_core::{
    ToolArgs, ToolContext, ToolDef, ToolDefError, ToolError, ToolFailure, ToolParams,
};
use serde_json::json;

use crate::common::{ShellOptions, check_nul, needs_sandbox, sandbox};
use ops::{Editor, History};

const DESCRIPTION: &str = "Use this function to execute text editing commands.";
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(180);

fn parameters() -> Result<ToolParams, ToolDefError> {
    let optional = |ty: serde_json::Value, description: &str| json!({"description": description, "anyOf": [ty, {"type": "null"}]});
    ToolParams::from_value(&json!({
        "type": "object",
        "properties": {
            "command": {
                "type": "string",
                "description": "The command to execute. Note: `undo_edit` retains only the last 10 edits per file.",
                "enum": ["view", "create", "str_replace", "insert", "undo_edit"],
            },
            "path": {
                "type": "string",
                "description": "Path to file or directory, e.g. `/repo/file.py` or `../repo`.",
            },
            "file_text": optional(json!({"type": "string"}), "Required parameter of `create` command, with the content of the file to be created."),
            "insert_line": optional(json!({"type": "integer"}), "Required parameter of `insert` command. The `new_str` will be inserted AFTER the line `insert_line` of `path`."),
            "insert_text": optional(json!({"type": "string"}), "Required parameter of `insert` command containing the string to insert."),
            "new_str": optional(json!({"type": "string"}), "Optional parameter of `str_replace` command containing the new string (if not given, no string will be added)."),
            "old_str": optional(json!({"type": "string"}), "Required parameter of `str_replace` command containing the string in `path` to replace."),
            "view_range": optional(json!({"type": "array", "items": {"type": "integer"}}), "Optional parameter of `view` command when `path` points to a file. If none is given, the full file is shown. If provided, the file will be shown in the indicated line number range, e.g. [11, 12] will show lines 11 and 12. Indexing at 1 to start. Setting `[start_line, -1]` shows all lines from `start_line` to the end of the file."),
        },
        "required": ["command", "path"],
        "additionalProperties": false,
    }))
}

/// The reference's `parsing` error for a command whose required argument is missing (its
/// sandbox server's pydantic message: the argument arrives as `null`).
fn missing(command: &str, param: &str) -> ToolError {
    let kind = if param == "insert_line" {
        "integer"
    } else {
        "string"
    };
    ToolError::parsing(format!(
        "Invalid parameters: '{command}.{param}' Input should be a valid {kind}"
    ))
}

/// The `text_editor` tool (serial; `timeout` defaults to 180 seconds).
///
/// Paths are resolved inside the sandbox (relative ones from its working directory, symlinks
/// followed); a path that resolves outside the working directory is refused. The undo
/// history (10 edits per file) belongs to the run's sandbox handle.
pub fn text_editor(options: ShellOptions) -> Result<ToolDef, ToolDefError> {
    let ShellOptions { timeout, user } = options;
    let timeout = timeout.unwrap_or(DEFAULT_TIMEOUT);
    ToolDef::builder("text_editor")
        .description(DESCRIPTION)
        .parameters(parameters()?)
        .parallel(false)
        .handler(move |mut args: ToolArgs, ctx: ToolContext| {
            let user = user.clone();
            async move {
                let command: String = args.required("command")?;
                let path: String = args.required("path")?;
                let file_text: Option<String> = args.optional("file_text")?;
                let insert_line: Option<i64> = args.optional("insert_line")?;
                let insert_text: Option<String> = args.optional("insert_text")?;
                let mut new_str: Option<String> = args.optional("new_str")?;
                let old_str: Option<String> = args.optional("old_str")?;
                let view_range: Option<Vec<i64>> = args.optional("view_range")?;
                let strings = [&path, &command]
                    .into_iter()
                    .map(String::as_str)
                    .chain(
                        [&file_text, &insert_text, &new_str, &old_str]
                            .into_iter()
                            .filter_map(|s| s.as_deref()),
                    )
                    .collect::<Vec<_>>();
                check_nul(&ctx.function, &strings)?;
                // The reference rewires `insert_text` to `new_str` inside the tool (after
                // approval saw the original arguments).
                if command == "insert" && new_str.is_none() && insert_text.is_some() {
                    new_str = insert_text;
                }
                let handle = sandbox(&ctx)?;
                let editor = Editor {
                    sandbox: handle.sandbox().as_ref(),
                    user,
                    history: handle.state::<History>(),
                };
                let work = async {
                    match command.as_str() {
                        "view" => editor.view(&path, view_range.as_deref()).await,
                        "create" => {
                            let text = file_text.ok_or_else(|| missing("create", "file_text"))?;
                            editor.create(&path, &text).await
                        }
                        "str_replace" => {
                            let old = old_str.ok_or_else(|| missing("str_replace", "old_str"))?;
                            editor.str_replace(&path, &old, new_str.as_deref()).await
                        }
                        "insert" => {
                            let line = insert_line.ok_or_else(|| missing("insert", "insert_line"))?;
                            let text = new_str.ok_or_else(|| missing("insert", "new_str"))?;
                            editor.insert(&path, line, &text).await
                        }
                        "undo_edit" => editor.undo_edit(&path).await,
                        other => Err(ToolError::parsing(format!(
                            "Unknown command `{other}`: use one of view, create, str_replace, insert, undo_edit."
                        ))),
                    }
                };
                match tokio::time::timeout(timeout, work).await {
                    Ok(result) => result.map_err(ToolFailure::from),
                    Err(_) => Err(ToolError::timeout().into()),
                }
            }
        })
        .build()
        .map(needs_sandbox)
}
