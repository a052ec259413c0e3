//! Running the `docker` CLI with a deadline and bounded output, and telling a missing CLI,
//! plugin or daemon apart from a failed command.
//!
//! The CLI's output is input like any other: standard output is kept up to
//! [`MAX_CLI_STDOUT`] and standard error's last [`MAX_CLI_STDERR`] bytes (where the reason
//! for a failure is); the rest is read and dropped, so the CLI never blocks on a full pipe.

use std::ffi::OsString;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

use super::DockerError;

/// The most standard output of one `docker` command that is kept (4 MiB: `ps` of a large
/// project, `ls` of many). Past it the output is marked truncated and not parsed.
pub const MAX_CLI_STDOUT: usize = 4 * 1024 * 1024;
/// The most standard error of one `docker` command that is kept: its last 64 KiB.
pub const MAX_CLI_STDERR: usize = 64 * 1024;

/// What a finished `docker` command printed.
pub(crate) struct CliOutput {
    pub(crate) success: bool,
    /// The exit code (`None`: killed by a signal).
    pub(crate) code: Option<i32>,
    pub(crate) status: String,
    pub(crate) stdout: String,
    pub(crate) stdout_truncated: bool,
    pub(crate) stderr: String,
}

/// A `docker …` command line, kept for error messages.
pub(crate) fn command_line(args: &[OsString]) -> String {
    let mut line = String::from("docker");
    for arg in args {
        line.push(' ');
        line.push_str(&arg.to_string_lossy());
    }
    line
}

/// Runs `docker args…` and waits at most `timeout`; on the deadline the CLI is killed.
pub(crate) async fn run(args: &[OsString], timeout: Duration) -> Result<CliOutput, DockerError> {
    run_program(std::path::Path::new("docker"), args, timeout).await
}

/// [`run`] with the `docker` CLI at `program`.
pub(crate) async fn run_program(
    program: &std::path::Path,
    args: &[OsString],
    timeout: Duration,
) -> Result<CliOutput, DockerError> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A dropped future (a cancelled sample) must not leave the CLI running.
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => DockerError::DockerMissing { source },
            _ => DockerError::Io(source),
        })?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(DockerError::Io(std::io::Error::other(
            "the docker CLI's output pipes were not set up",
        )));
    };
    let finished = tokio::time::timeout(timeout, async {
        let (out, err, status) = tokio::join!(
            read_head(stdout, MAX_CLI_STDOUT),
            read_tail(stderr, MAX_CLI_STDERR),
            child.wait()
        );
        (out, err, status)
    })
    .await;
    let Ok((out, err, status)) = finished else {
        // kill_on_drop reaps it too, but kill now so the caller's clean-up starts at once.
        let _ = child.start_kill();
        let _ = child.wait().await;
        return Err(DockerError::Timeout {
            command: command_line(args),
            after: timeout,
        });
    };
    let (stdout, stdout_truncated) = out?;
    let stderr = err?;
    let status = status?;
    Ok(CliOutput {
        success: status.success(),
        code: status.code(),
        status: status.to_string(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stdout_truncated,
        stderr: String::from_utf8_lossy(&stderr).trim().to_owned(),
    })
}

/// Reads all of `reader`, keeping the first `limit` bytes; also says whether any were dropped.
async fn read_head(
    mut reader: impl AsyncRead + Unpin,
    limit: usize,
) -> std::io::Result<(Vec<u8>, bool)> {
    let mut kept = Vec::new();
    let mut truncated = false;
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        let n = reader.read(&mut chunk).await?;
        if n == 0 {
            return Ok((kept, truncated));
        }
        let room = limit.saturating_sub(kept.len());
        kept.extend_from_slice(&chunk[..n.min(room)]);
        truncated |= n > room;
    }
}

/// Reads all of `reader`, keeping the last `limit` bytes.
async fn read_tail(mut reader: impl AsyncRead + Unpin, limit: usize) -> std::io::Result<Vec<u8>> {
    let mut kept = Vec::new();
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        let n = reader.read(&mut chunk).await?;
        if n == 0 {
            return Ok(kept);
        }
        kept.extend_from_slice(&chunk[..n]);
        if kept.len() > limit {
            kept.drain(..kept.len() - limit);
        }
    }
}

/// After a failed command: is the reason that the daemon or the compose plugin is missing?
/// Returns that error if so (two quick CLI calls, only on the failure path).
pub(crate) async fn diagnose() -> Option<DockerError> {
    const PROBE: Duration = Duration::from_secs(10);
    let version: Vec<OsString> = ["version", "--format", "{{.Server.Version}}"]
        .into_iter()
        .map(OsString::from)
        .collect();
    match run(&version, PROBE).await {
        Err(e @ DockerError::DockerMissing { .. }) => return Some(e),
        Ok(out) if !out.success => {
            return Some(DockerError::DaemonUnreachable { stderr: out.stderr });
        }
        _ => {}
    }
    let compose: Vec<OsString> = ["compose", "version"]
        .into_iter()
        .map(OsString::from)
        .collect();
    match run(&compose, PROBE).await {
        Ok(out) if !out.success => Some(DockerError::ComposeMissing { stderr: out.stderr }),
        _ => None,
    }
}

/// The error for a failed command: the missing piece if [`diagnose`] finds one, else the
/// command's own failure.
pub(crate) async fn failure(args: &[OsString], out: &CliOutput) -> DockerError {
    if let Some(e) = diagnose().await {
        return e;
    }
    DockerError::Command {
        command: command_line(args),
        status: out.status.clone(),
        stderr: out.stderr.clone(),
    }
}

/// Runs a command that must succeed.
pub(crate) async fn run_ok(args: &[OsString], timeout: Duration) -> Result<CliOutput, DockerError> {
    let out = run(args, timeout).await?;
    if out.success {
        Ok(out)
    } else {
        Err(failure(args, &out).await)
    }
}

/// The JSON a `docker … --format json` command printed, trimmed, and the error for output that
/// is not what it should be (`detail`), naming `command`. Output cut at [`MAX_CLI_STDOUT`]
/// cannot be parsed: that is an error too.
pub(crate) fn json_output<'a>(
    command: &'a str,
    stdout: &'a str,
    truncated: bool,
) -> Result<(&'a str, impl Fn(String) -> DockerError + 'a), DockerError> {
    let unexpected = move |detail: String| DockerError::UnexpectedOutput {
        command: command.to_owned(),
        detail,
    };
    if truncated {
        return Err(unexpected(format!("more than {MAX_CLI_STDOUT} bytes")));
    }
    Ok((stdout.trim(), unexpected))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn output_is_bounded_head_and_tail() {
        let data: Vec<u8> = (0..100u8).collect();
        let (head, truncated) = read_head(&data[..], 10).await.unwrap();
        assert_eq!(head, (0..10u8).collect::<Vec<_>>());
        assert!(truncated);
        let (all, truncated) = read_head(&data[..], 100).await.unwrap();
        assert_eq!(all.len(), 100);
        assert!(!truncated);
        let tail = read_tail(&data[..], 10).await.unwrap();
        assert_eq!(tail, (90..100u8).collect::<Vec<_>>());
    }
}
