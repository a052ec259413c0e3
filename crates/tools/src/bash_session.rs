//! `bash_session`: a persistent interactive shell (on a pseudo-terminal) per instance, with
//! the reference's actions, argument errors, timing and output rules.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use actuator_sandbox::{InteractiveProcess, SessionRequest};
use actuator_tool_core::{
    ToolArgs, ToolContext, ToolDef, ToolDefError, ToolError, ToolFailure, ToolParams,
};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{Mutex, watch};
use tokio::time::Instant;

use crate::common::{check_nul, needs_sandbox, sandbox, seconds};

const DESCRIPTION: &str = "Interact with a bash shell.\n\nInteract with a bash shell by sending it input text and retrieving output\nfrom it. There is no guarantee that all output will be returned in a\nsingle call. Call this function multiple times to retrieve additional\noutput from the shell.\n\nUSAGE NOTES:\n- Ensure that the shell is at a command prompt (typically when the\n  output ends in \"$ \" or \"# \") before submitting a new command.\n- Control characters must be sent as Unicode escape sequences (e.g., use\n  \"\\u0003\" for Ctrl+C/ETX, \"\\u0004\" for Ctrl+D/EOT). The literal string\n  \"Ctrl+C\" will not be interpreted as a control character.\n- Use the \"read\" action to retrieve output from the shell without\n  sending any input. This is useful for long-running commands that\n  produce output over time. The \"read\" action will return any new output\n  since the last call.\n- If a long-running command is in progress, additional input to execute\n  a new command will not be processed until the previous completes. To\n  abort a long-running command, use the \"interrupt\" action:\n  `bash_session(action=\"interrupt\")`\n- If output ends with \"> \" (the shell's continuation prompt), it means\n  the previous input contained unmatched quotes, backticks, or other\n  incomplete syntax. Either complete the quoted input or use the\n  \"interrupt\" action to cancel, then retry with corrected input.\n\nExample use case:\n- For a short-running command with a nominal amount of output, a single\n  call may suffice.\n  ```\n  bash_session(action=\"type_submit\", input=\"echo foo\") -> \"foo\\nuser@host:/# \"\n  ```\n- For a long-running command with output over time, multiple calls to are needed.\n  ```\n  bash_session(action=\"type_submit\", input=\"tail -f /tmp/foo.log\") -> <some output>\n  bash_session(action=\"read\") -> <more output>\n  # Send interrupt (Ctrl+C)\n  bash_session(action=\"interrupt\") -> \"<final output>^Cuser@host:/# \"\n  ```\n- Interactive command awaiting more input from the user.\n  ```\n  bash_session(action=\"type_submit\", input=\"ssh fred@foo.com\") -> \"foo.com's password: \"\n  bash_session(action=\"type_submit\", input=\"secret\") -> \"fred@foo.com:~$ \"\n  ```";

const ACTION_DESCRIPTION: &str = "The action to execute:\n- \"type\": Send input without a return key\n- \"type_submit\": Send input followed by a return key\n- \"read\": Read any new output without sending input\n- \"interrupt\": Send a Ctrl+C (ETX character) to interrupt the current process\n- \"restart\": Restart the bash session";

const INPUT_DESCRIPTION: &str = "The input to send to the shell.\nRequired for \"type\". Optional for \"type_submit\" actions. Must\nnot be provided for \"restart\", \"read\", or \"interrupt\" actions.";

/// The reference's `DEFAULT_WAIT_FOR_OUTPUT` (30 s).
const DEFAULT_WAIT_FOR_OUTPUT: Duration = Duration::from_secs(30);
/// The reference's `DEFAULT_IDLE_TIME` (0.5 s): output is complete after this much quiet.
const IDLE_TIME: Duration = Duration::from_millis(500);
/// The reference's `TRANSPORT_TIMEOUT` (180 s), added to `wait_for_output` for the default
/// timeout.
const TRANSPORT_TIMEOUT: Duration = Duration::from_secs(180);
/// Output kept between reads (the tail is kept).
const MAX_OUTPUT_BYTES: usize = 10 * 1024 * 1024;
/// Output at which a read returns at once.
const EAGER_RETURN_BYTES: usize = 4096;

/// An invalid option of [`bash_session`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BashSessionError {
    /// The timeout is shorter than `wait_for_output` plus 180 seconds.
    #[error("Timeout must be at least {min} seconds, but got {got}.")]
    TimeoutTooShort {
        /// The least timeout, in seconds.
        min: String,
        /// The timeout given, in seconds.
        got: String,
    },
    /// The tool definition was refused.
    #[error(transparent)]
    Def(#[from] ToolDefError),
}

/// The options of [`bash_session`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BashSessionOptions {
    /// The timeout of one call (default `wait_for_output` + 180 s; no less is accepted).
    pub timeout: Option<Duration>,
    /// How long to wait for output when there is none yet (default 30 s).
    pub wait_for_output: Option<Duration>,
    /// Each distinct instance has its own shell (default: one shared shell).
    pub instance: Option<String>,
}

impl BashSessionOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the timeout.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets how long to wait for output.
    #[must_use]
    pub fn wait_for_output(mut self, wait: Duration) -> Self {
        self.wait_for_output = Some(wait);
        self
    }

    /// Sets the instance.
    #[must_use]
    pub fn instance(mut self, instance: impl Into<String>) -> Self {
        self.instance = Some(instance.into());
        self
    }
}

/// What a shell printed since the last read, and a counter bumped on each chunk.
#[derive(Default)]
struct Output {
    data: Vec<u8>,
    dropped: usize,
}

/// One live shell.
struct Shell {
    input: std::pin::Pin<Box<dyn tokio::io::AsyncWrite + Send>>,
    output: Arc<std::sync::Mutex<Output>>,
    chunks: watch::Receiver<u64>,
    _reader: tokio::task::JoinHandle<()>,
    _guard: Box<dyn Send + Sync>,
}

impl Drop for Shell {
    fn drop(&mut self) {
        self._reader.abort();
    }
}

/// The shells of one sandbox, by instance.
#[derive(Default)]
struct Shells(Mutex<HashMap<String, Shell>>);

fn lock(output: &std::sync::Mutex<Output>) -> std::sync::MutexGuard<'_, Output> {
    output.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shell {
    fn start(process: InteractiveProcess) -> Shell {
        let InteractiveProcess {
            input,
            mut output,
            guard,
        } = process;
        let buffer = Arc::new(std::sync::Mutex::new(Output::default()));
        let (tx, rx) = watch::channel(0u64);
        let sink = Arc::clone(&buffer);
        let reader = tokio::spawn(async move {
            let mut chunk = vec![0u8; 4096];
            while let Ok(n) = output.read(&mut chunk).await {
                if n == 0 {
                    break;
                }
                {
                    let mut out = lock(&sink);
                    out.data.extend_from_slice(&chunk[..n]);
                    if out.data.len() > MAX_OUTPUT_BYTES {
                        let excess = out.data.len() - MAX_OUTPUT_BYTES;
                        out.data.drain(..excess);
                        out.dropped += excess;
                    }
                }
                tx.send_modify(|c| *c += 1);
            }
        });
        Shell {
            input,
            output: buffer,
            chunks: rx,
            _reader: reader,
            _guard: guard,
        }
    }

    /// The reference's `interact`: send the input, wait `wait_for_output` for a first chunk
    /// (or `IDLE_TIME` when output is already waiting), then until output has been quiet for
    /// `IDLE_TIME` or 4 KiB have arrived.
    async fn interact(&mut self, input: Option<&str>, wait: Duration) -> Result<String, ToolError> {
        self.chunks.borrow_and_update();
        if let Some(text) = input.filter(|t| !t.is_empty()) {
            self.input
                .write_all(text.as_bytes())
                .await
                .map_err(|e| ToolError::new(format!("The shell is gone: {e}")))?;
            self.input.flush().await.map_err(ToolError::from)?;
        }
        let pending = !lock(&self.output).data.is_empty();
        let mut deadline = Instant::now() + if pending { IDLE_TIME } else { wait };
        loop {
            {
                let out = lock(&self.output);
                if out.dropped > 0 || out.data.len() >= EAGER_RETURN_BYTES {
                    break;
                }
            }
            tokio::select! {
                changed = self.chunks.changed() => {
                    if changed.is_err() {
                        break; // the shell exited: return what it printed
                    }
                    deadline = Instant::now() + IDLE_TIME;
                }
                () = tokio::time::sleep_until(deadline) => break,
            }
        }
        let mut out = lock(&self.output);
        let text = format_output(&out.data, out.dropped);
        out.data.clear();
        out.dropped = 0;
        Ok(strip_control_characters(&text))
    }
}

fn format_output(data: &[u8], dropped: usize) -> String {
    let text = String::from_utf8_lossy(data);
    if dropped == 0 {
        return text.into_owned();
    }
    format!(
        "\n[inspect_sandbox_tools: bash_session output exceeded {}; showing the tail; {dropped} bytes omitted]\n{text}",
        actuator_sandbox::format_size(MAX_OUTPUT_BYTES)
    )
}

/// The reference's `strip_control_characters`: ANSI escape sequences, then the C0 controls
/// other than tab, newline and carriage return, and DEL.
fn strip_control_characters(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\x1b'
            && let Some(len) = escape_len(&chars[i + 1..])
        {
            i += 1 + len;
            continue;
        }
        let code = c as u32;
        let control = (code <= 0x08)
            || code == 0x0b
            || code == 0x0c
            || (0x0e..=0x1f).contains(&code)
            || code == 0x7f;
        if !control {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// The length of the escape sequence after an ESC, as the reference's pattern matches it.
fn escape_len(rest: &[char]) -> Option<usize> {
    let first = *rest.first()?;
    match first {
        '[' => {
            let mut j = 1;
            while j < rest.len() && (rest[j].is_ascii_digit() || rest[j] == ';') {
                j += 1;
            }
            (j < rest.len() && rest[j].is_ascii_alphabetic()).then_some(j + 1)
        }
        ']' if rest.get(1) == Some(&'8') && rest.get(2) == Some(&';') => {
            // `]8;.*;`: greedy up to the last `;` on the line.
            let line_end = rest.iter().position(|&c| c == '\n').unwrap_or(rest.len());
            let last = rest[..line_end].iter().rposition(|&c| c == ';')?;
            Some(last + 1)
        }
        '(' if matches!(rest.get(1), Some('A' | 'B' | '0' | '1' | '2')) => Some(2),
        '@'..='Z' | '\\'..='_' => Some(1),
        _ => None,
    }
}

/// The `bash_session` tool (serial).
///
/// Fails when `timeout` is under `wait_for_output` + 180 s, with the reference's text.
pub fn bash_session(options: BashSessionOptions) -> Result<ToolDef, BashSessionError> {
    let wait = options.wait_for_output.unwrap_or(DEFAULT_WAIT_FOR_OUTPUT);
    let min_timeout = wait + TRANSPORT_TIMEOUT;
    let timeout = match options.timeout {
        None => min_timeout,
        Some(t) if t < min_timeout => {
            return Err(BashSessionError::TimeoutTooShort {
                min: seconds(min_timeout),
                got: seconds(t),
            });
        }
        Some(t) => t,
    };
    let instance = options.instance.unwrap_or_default();
    let params = ToolParams::from_value(&json!({
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "description": ACTION_DESCRIPTION,
                "enum": ["type", "type_submit", "restart", "read", "interrupt"],
            },
            "input": {"description": INPUT_DESCRIPTION, "anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["action"],
        "additionalProperties": false,
    }))?;
    let def = ToolDef::builder("bash_session")
        .description(DESCRIPTION)
        .parameters(params)
        .parallel(false)
        .handler(move |mut args: ToolArgs, ctx: ToolContext| {
            let instance = instance.clone();
            async move {
                let action: String = args.required("action")?;
                let input: Option<String> = args.optional("input")?;
                match (action.as_str(), &input) {
                    ("type", None) => {
                        return Err(ToolError::parsing(format!(
                            "'input' is required for '{action}' action."
                        ))
                        .into());
                    }
                    ("restart" | "read" | "interrupt", Some(_)) => {
                        return Err(ToolError::parsing(format!(
                            "Do not provide 'input' with '{action}' action."
                        ))
                        .into());
                    }
                    _ => {}
                }
                if let Some(text) = &input {
                    check_nul(&ctx.function, &[text])?;
                }
                let handle = sandbox(&ctx)?;
                let shells = handle.state::<Shells>();
                let work = async {
                    let mut shells = shells.0.lock().await;
                    if action == "restart" {
                        shells.remove(&instance);
                        let process = handle.spawn_interactive(shell_request()).await?;
                        shells.insert(instance.clone(), Shell::start(process));
                        return Ok::<_, ToolError>("shell restarted successfully".to_owned());
                    }
                    if !shells.contains_key(&instance) {
                        let process = handle.spawn_interactive(shell_request()).await?;
                        shells.insert(instance.clone(), Shell::start(process));
                    }
                    let shell = shells
                        .get_mut(&instance)
                        .ok_or_else(|| ToolError::new("Timed out creating new session"))?;
                    let text = match action.as_str() {
                        "type" => input.clone(),
                        "type_submit" => Some(format!("{}\n", input.as_deref().unwrap_or(""))),
                        "interrupt" => Some("\u{3}".to_owned()),
                        _ => None,
                    };
                    shell.interact(text.as_deref(), wait).await
                };
                match tokio::time::timeout(timeout, work).await {
                    Ok(result) => result.map_err(ToolFailure::from),
                    Err(_) => Err(ToolError::timeout().into()),
                }
            }
        })
        .build()?;
    Ok(needs_sandbox(def))
}

fn shell_request() -> SessionRequest {
    let mut request = SessionRequest::new(["bash", "--norc", "--noprofile", "-i"]);
    request
        .env
        .push(("PS1".to_owned(), "\\u@sandbox:\\w$ ".to_owned()));
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_and_escapes_are_stripped_but_cr_kept() {
        // As the reference's pattern: `ESC[?2004h` is not a match, so only the ESC goes.
        assert_eq!(
            strip_control_characters("\x1b[?2004hroot# ls\r\n\x1b[0mfile\x07\x7f"),
            "[?2004hroot# ls\r\nfile"
        );
        assert_eq!(strip_control_characters("a\x1b(Bb\tc"), "ab\tc");
    }

    #[test]
    fn a_short_timeout_is_refused_with_the_reference_text() {
        let err = bash_session(BashSessionOptions::new().timeout(Duration::from_secs(10)))
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("Timeout must be at least 210 seconds, but got 10.")
        );
        let err = bash_session(
            BashSessionOptions::new()
                .wait_for_output(Duration::from_secs(5))
                .timeout(Duration::from_secs(184)),
        )
        .err()
        .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("Timeout must be at least 185 seconds, but got 184.")
        );
    }

    #[test]
    fn dropped_output_gets_the_reference_notice() {
        assert_eq!(
            format_output(b"tail", 7),
            "\n[inspect_sandbox_tools: bash_session output exceeded 10 MiB; showing the tail; 7 bytes omitted]\ntail"
        );
    }
}
