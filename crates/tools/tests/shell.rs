//! bash and python in a confined sandbox: the reference's output convention, errors and
//! viewers, and the tool-level security cases.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::time::Duration;

use actuator_tool_core::{ToolContext, ToolErrorKind, ToolFailure};
use actuator_tools::{BashOptions, ShellOptions, bash, python};
use common::{err, handle, ok};
use serde_json::json;

#[tokio::test]
async fn bash_returns_stdout() {
    let Some((h, _)) = handle() else { return };
    let tool = bash(BashOptions::new()).unwrap();
    assert_eq!(
        ok(&h, &tool, json!({"command": "echo hello"})).await,
        "hello\n"
    );
}

#[tokio::test]
async fn bash_puts_stderr_first_and_never_fails_on_exit_status() {
    let Some((h, _)) = handle() else { return };
    let tool = bash(BashOptions::new()).unwrap();
    let out = ok(
        &h,
        &tool,
        json!({"command": "echo out; echo err >&2; exit 1"}),
    )
    .await;
    assert_eq!(out, "err\n\nout\n");
    let out = ok(&h, &tool, json!({"command": "nonexistent_command_xyz"})).await;
    assert!(
        out.contains("nonexistent_command_xyz: command not found"),
        "{out}"
    );
}

#[tokio::test]
async fn bash_timeout_keeps_partial_output() {
    let Some((h, _)) = handle() else { return };
    let tool = bash(BashOptions::new().timeout(Duration::from_secs(3))).unwrap();
    let e = err(&h, &tool, json!({"command": "echo started; sleep 30"})).await;
    assert_eq!(e.kind(), ToolErrorKind::Timeout);
    assert_eq!(e.message(), "Command timed out before completing.");
    assert_eq!(e.output(), Some("started\n"));
}

#[tokio::test]
async fn bash_runaway_output_is_the_limit_error_with_the_cut_output() {
    let Some((h, _)) = handle() else { return };
    let tool = bash(BashOptions::new()).unwrap();
    let e = err(&h, &tool, json!({"command": "yes"})).await;
    assert_eq!(e.kind(), ToolErrorKind::Limit);
    assert_eq!(e.message(), "The tool exceeded its output limit of 10 MiB.");
    assert_eq!(e.output().map(str::len), Some(10 * 1024 * 1024));
}

#[tokio::test]
async fn bash_non_utf8_output_is_unicode_decode() {
    let Some((h, _)) = handle() else { return };
    let tool = bash(BashOptions::new()).unwrap();
    let e = err(&h, &tool, json!({"command": r"printf '\x80'"})).await;
    assert_eq!(e.kind(), ToolErrorKind::UnicodeDecode);
    assert_eq!(
        e.message(),
        "Error decoding bytes to utf-8: invalid start byte"
    );
}

#[tokio::test]
async fn a_null_byte_is_a_parsing_error_naming_the_tool() {
    let Some((h, _)) = handle() else { return };
    let tool = bash(BashOptions::new()).unwrap();
    let e = err(&h, &tool, json!({"command": "echo a\u{0}b"})).await;
    assert_eq!(e.kind(), ToolErrorKind::Parsing);
    assert_eq!(
        e.message(),
        "An argument to tool 'bash' contained an embedded null byte."
    );
    let tool = python(ShellOptions::new()).unwrap();
    let e = err(&h, &tool, json!({"code": "print('\u{0}')"})).await;
    assert_eq!(
        e.message(),
        "An argument to tool 'python' contained an embedded null byte."
    );
}

#[tokio::test]
async fn python_runs_code_from_stdin() {
    let Some((h, _)) = handle() else { return };
    let tool = python(ShellOptions::new()).unwrap();
    assert_eq!(ok(&h, &tool, json!({"code": "print(6 * 7)"})).await, "42\n");
    let out = ok(
        &h,
        &tool,
        json!({"code": "print('before')\nraise ValueError('boom')"}),
    )
    .await;
    assert!(
        out.starts_with("Traceback (most recent call last):\n"),
        "{out}"
    );
    assert!(out.ends_with("ValueError: boom\n\nbefore\n"), "{out}");
}

#[tokio::test]
async fn python_timeout_is_the_timeout_error() {
    let Some((h, _)) = handle() else { return };
    let tool = python(ShellOptions::new().timeout(Duration::from_secs(1))).unwrap();
    let e = err(&h, &tool, json!({"code": "import time\ntime.sleep(30)"})).await;
    assert_eq!(e.kind(), ToolErrorKind::Timeout);
}

#[tokio::test]
async fn a_user_the_sandbox_cannot_run_as_is_reported() {
    let Some((h, _)) = handle() else { return };
    let tool = bash(BashOptions::new().user("alice")).unwrap();
    let e = err(&h, &tool, json!({"command": "id"})).await;
    assert_eq!(
        e.message(),
        "LocalSandbox cannot execute as \"alice\"; only the current effective user is supported."
    );
}

#[tokio::test]
async fn without_a_sandbox_the_tools_return_sandbox_unavailable() {
    for (tool, args) in [
        (bash(BashOptions::new()).unwrap(), json!({"command": "ls"})),
        (python(ShellOptions::new()).unwrap(), json!({"code": "1"})),
        (
            actuator_tools::text_editor(ShellOptions::new()).unwrap(),
            json!({"command": "view", "path": "."}),
        ),
        (
            actuator_tools::bash_session(actuator_tools::BashSessionOptions::new()).unwrap(),
            json!({"action": "read"}),
        ),
    ] {
        let ctx = ToolContext::new("c", tool.name());
        let Err(ToolFailure::Recoverable(e)) = tool.call(args, ctx).await else {
            panic!("{} ran without a sandbox", tool.name());
        };
        assert_eq!(e.kind(), ToolErrorKind::SandboxUnavailable);
        assert_eq!(e.message(), actuator_sandbox::NO_SANDBOX_MESSAGE);
    }
}

#[tokio::test]
async fn bash_cannot_write_outside_the_workdir_or_read_the_hosts_home() {
    let Some((h, workdir)) = handle() else { return };
    let tool = bash(BashOptions::new()).unwrap();
    let out = ok(
        &h,
        &tool,
        json!({"command": "touch /etc/pwned /usr/pwned /pwned 2>&1; ls /root 2>&1; echo done"}),
    )
    .await;
    assert!(
        out.contains("Read-only file system") || out.contains("Permission denied"),
        "{out}"
    );
    assert!(
        out.contains("ls: cannot access '/root': No such file or directory"),
        "{out}"
    );
    assert!(!std::path::Path::new("/etc/pwned").exists());
    assert!(!std::path::Path::new("/pwned").exists());
    let out = ok(
        &h,
        &tool,
        json!({"command": "echo inside > mine.txt && cat mine.txt"}),
    )
    .await;
    assert_eq!(out, "inside\n");
    assert_eq!(
        std::fs::read_to_string(workdir.join("mine.txt")).unwrap(),
        "inside\n"
    );
}

#[test]
fn viewers_show_code_blocks() {
    let tool = bash(BashOptions::new()).unwrap();
    let args = json!({"command": "ls -la"});
    let view = tool
        .viewer()
        .unwrap()
        .view("bash", args.as_object().unwrap());
    let call = view.call.unwrap();
    assert_eq!(call.title.as_deref(), Some("bash"));
    assert_eq!(call.content, "```bash\nls -la\n```\n");
    let tool = python(ShellOptions::new()).unwrap();
    let args = json!({"code": "print(1)\n"});
    let view = tool
        .viewer()
        .unwrap()
        .view("python", args.as_object().unwrap());
    assert_eq!(view.call.unwrap().content, "```python\nprint(1)\n```\n");
    let think = actuator_tools::think(actuator_tools::ThinkOptions::new()).unwrap();
    let args = json!({"thought": "Let me see."});
    let view = think
        .viewer()
        .unwrap()
        .view("think", args.as_object().unwrap());
    let call = view.call.unwrap();
    assert_eq!((call.title, call.content.as_str()), (None, "Let me see."));
}
