//! What one command is ([`Launch`]), the bash the supervisor runs, and the script it sources
//! for each command.

use std::path::Path;

use super::command::shell_quote;

/// How a launched command gets its standard input.
#[derive(Debug)]
pub(crate) enum Input {
    /// `/dev/null`.
    Null,
    /// These bytes (a file in the control directory).
    Bytes(Vec<u8>),
    /// A FIFO the host writes to (an interactive process).
    Pipe,
}

/// One command to start in the sandbox.
#[derive(Debug)]
pub(crate) struct Launch<'a> {
    pub argv: &'a [String],
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub input: Input,
    /// Whether standard error is kept (else it goes to `/dev/null`).
    pub stderr: bool,
}

/// The supervisor, run as `bash --noprofile --norc -c SUPERVISOR supervisor CTL`.
///
/// fd 3: events (the original standard output); fd 4: requests (the original standard
/// input); fd 5 (the killer's only): the kill FIFO, opened read-write so it never sees end
/// of file. Standard error goes to a log file on the host.
pub(crate) const SUPERVISOR: &str = r#"ctl=$1
exec 3>&1 4<&0 </dev/null >/dev/null
exec 5<>"$ctl/kill"
{
  exec 3>&- 4<&-
  while IFS= read -r -u 5 pg; do
    case $pg in ''|*[!0-9]*|0|1) ;; *) kill -KILL -- "-$pg" 2>/dev/null ;; esac
  done
} &
exec 5<&-
set -m
printf 'ready\n' >&3
while IFS= read -r -u 4 id; do
  case $id in ''|*[!0-9]*) continue ;; esac
  { . "$ctl/$id.sh" || printf '%s x 127\n' "$id" >&3; } &
done
"#;

/// Whether `key` can be `export`ed by a shell (else it goes through `env`).
fn shell_name(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// The script the supervisor sources for one command, in a background job of its own. The
/// command runs in a subshell, a job (process group) of its own again, that opens its
/// streams, reports them open with its group, enters its working directory, sets its
/// environment and `exec`s it (never a builtin), with no descriptor of the supervisor's left
/// open; the job shell waits for it and reports its status. A
/// missing working directory is exit status 1, a missing program 127, a path that is there
/// but cannot be run (not executable, a directory) 126 with `PATH: Permission denied` (as
/// bash has them), each with a message on standard error.
pub(crate) fn command_script(
    id: u64,
    stdin: &str,
    stdout: &Path,
    stderr: Option<&Path>,
    launch: &Launch<'_>,
    start_dir: &Path,
) -> String {
    let q = |s: &str| shell_quote(s);
    let p = |p: &Path| shell_quote(&p.to_string_lossy());
    let stderr = stderr.map_or_else(|| "/dev/null".to_owned(), p);
    let cwd = launch.cwd.to_string_lossy();
    // The supervisor's own directory needs no `cd` (the common case: the working directory).
    let cd = if launch.cwd == start_dir {
        String::new()
    } else {
        format!(
            "cd -- {} 2>/dev/null || {{ printf '%s\\n' {} >&2; exit 1; }}\n",
            q(&cwd),
            q(&format!("Can't chdir to {cwd}: No such file or directory")),
        )
    };
    let mut exports = String::new();
    let mut env_args = String::new();
    for (key, value) in launch.env {
        let pair = q(&format!("{key}={value}"));
        if shell_name(key) {
            exports.push_str(&format!("export {pair}\n"));
        } else {
            env_args.push_str(&format!(" {pair}"));
        }
    }
    let program = launch.argv.first().map_or("true", String::as_str);
    let mut command = String::new();
    if !env_args.is_empty() {
        command.push_str("env --");
        command.push_str(&env_args);
        command.push(' ');
    }
    command.push_str(&q(program));
    for arg in launch.argv.iter().skip(1) {
        command.push(' ');
        command.push_str(&q(arg));
    }
    // The job shell holds the command's standard output open (fd 6) until it has reported
    // the exit, so the host's end of file on it means the report was sent, or never will be
    // (the job shell was killed). The command runs as a job of its own, so `kill 0` in it
    // signals its own group, not the shell that waits for it. Plain `wait`: bash 5.2's
    // `wait -f` loops forever ("No record of process") on a job reaped before it was called.
    format!(
        "set -m\nexec 2>/dev/null 6<>{stdout}\n(\n\
         exec <{stdin} 1<>{stdout} 2<>{stderr} 4<&- 6<&-\n\
         printf '%s s %s\\n' {id} \"$BASHPID\" >&3\n\
         {cd}\
         unset PWD OLDPWD SHLVL\n\
         {exports}\
         type -P -- {program_q} >/dev/null || {{ case {program_q} in */*) [ -e {program_q} ] && {{ printf '%s: Permission denied\\n' {program_q} >&2; exit 126; }};; esac; printf '%s: command not found\\n' {program_q} >&2; exit 127; }}\n\
         exec 3>&- -- {command}\n\
         ) &\n\
         wait \"$!\"\n\
         printf '%s x %s\\n' {id} \"$?\" >&3\n",
        stdin = q(stdin),
        stdout = p(stdout),
        program_q = q(program),
    )
}
