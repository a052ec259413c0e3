//! What every supervised sandbox does the same way, whatever runs its commands (bubblewrap
//! here, a container): files read and written by commands inside it, so that they see exactly
//! what its commands see and nothing is opened on the host; interactive sessions under a
//! pseudo-terminal; output decoded as the reference decodes it.

use actuator_tool_core::ToolErrorKind;

use crate::error::utf8_reason;
use crate::local::command::shell_join;
use crate::local::run::RawOutput;
use crate::{ExecOutput, ExecRequest, SandboxError, SessionRequest};

/// The largest file [`read_request`] reads (100 MiB): more is an output-limit error.
pub(crate) const MAX_READ_FILE: usize = 100 * 1024 * 1024;

/// A command's output as the model reads it: UTF-8, or the reference's decoding error. A
/// `program` that is there but cannot be run is the reference's `PermissionError`: the
/// launcher's exact report of it (status 126, `PROGRAM: Permission denied` and nothing else)
/// is an error (a command can only fake it about itself).
pub(crate) fn exec_output(program: &str, raw: RawOutput) -> Result<ExecOutput, SandboxError> {
    if raw.status == Some(126)
        && raw.stdout.is_empty()
        && raw.stderr == format!("{program}: Permission denied\n").as_bytes()
    {
        return Err(SandboxError::File {
            kind: ToolErrorKind::Permission,
            message: format!("Permission denied executing command: {program}"),
        });
    }
    Ok(ExecOutput {
        status: raw.status,
        stdout: decode(raw.stdout)?,
        stderr: decode(raw.stderr)?,
    })
}

fn decode(bytes: Vec<u8>) -> Result<String, SandboxError> {
    String::from_utf8(bytes).map_err(|e| SandboxError::UnicodeDecode {
        reason: utf8_reason(&e.utf8_error()).to_owned(),
    })
}

/// The program `request` runs, for [`exec_output`].
pub(crate) fn program(request: &ExecRequest) -> String {
    request.argv.first().cloned().unwrap_or_default()
}

/// The command that reads `path` inside the sandbox.
pub(crate) fn read_request(path: &str) -> ExecRequest {
    ExecRequest::new(["cat", "--", path]).max_output(MAX_READ_FILE)
}

/// The file [`read_request`]'s command read, or why it could not. A file over
/// [`MAX_READ_FILE`] is the reference's output-limit error without its contents (they may be
/// large, and binary).
pub(crate) fn read_result(
    path: &str,
    ran: Result<RawOutput, SandboxError>,
) -> Result<Vec<u8>, SandboxError> {
    match ran {
        Ok(raw) if raw.status == Some(0) => Ok(raw.stdout),
        Ok(raw) => Err(file_error(path, &raw.stderr)),
        Err(SandboxError::OutputLimit { limit, .. }) => Err(SandboxError::OutputLimit {
            limit,
            stdout: String::new(),
            stderr: String::new(),
        }),
        Err(other) => Err(other),
    }
}

/// The command that writes `contents` to `path` inside the sandbox, making its parents.
pub(crate) fn write_request(path: &str, contents: &[u8]) -> ExecRequest {
    let script = r#"mkdir -p -- "$(dirname -- "$1")" && cat > "$1""#;
    ExecRequest::new(["sh", "-c", script, "sh", path]).stdin(contents.to_vec())
}

/// Whether [`write_request`]'s command wrote the file.
pub(crate) fn write_result(path: &str, raw: RawOutput) -> Result<(), SandboxError> {
    if raw.status == Some(0) {
        Ok(())
    } else {
        Err(file_error(path, &raw.stderr))
    }
}

/// Environment variables, in order.
pub(crate) type Environment = Vec<(String, String)>;

/// The argv and environment of an interactive session: under `script` when it wants a
/// terminal (prompts, echo, and Ctrl+C), with a plain terminal type.
pub(crate) fn session_command(
    request: &SessionRequest,
) -> Result<(Vec<String>, Environment), SandboxError> {
    if request.argv.iter().any(|a| a.contains('\0'))
        || request
            .env
            .iter()
            .any(|(k, v)| k.contains('\0') || v.contains('\0'))
    {
        return Err(SandboxError::NulByte);
    }
    let argv = if request.terminal {
        vec![
            "script".to_owned(),
            "-qfec".to_owned(),
            shell_join(&request.argv),
            "/dev/null".to_owned(),
        ]
    } else {
        request.argv.clone()
    };
    let mut env = request.env.clone();
    env.push(("SHELL".to_owned(), "/bin/bash".to_owned()));
    env.push(("TERM".to_owned(), "dumb".to_owned()));
    Ok((argv, env))
}

/// Maps `cat`'s and the shell's complaints about a file to the tool errors a model can act on.
fn file_error(path: &str, stderr: &[u8]) -> SandboxError {
    let text = String::from_utf8_lossy(stderr);
    let (kind, message) = if text.contains("No such file or directory") {
        (
            ToolErrorKind::FileNotFound,
            format!("File '{path}' was not found."),
        )
    } else if text.contains("Permission denied") || text.contains("Read-only file system") {
        (
            ToolErrorKind::Permission,
            format!("Permission denied. Filename '{path}'."),
        )
    } else if text.contains("Is a directory") {
        (
            ToolErrorKind::IsADirectory,
            format!("Is a directory. Filename '{path}'."),
        )
    } else {
        (ToolErrorKind::Unknown, text.trim().to_owned())
    };
    SandboxError::File { kind, message }
}
