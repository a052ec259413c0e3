//! [`TerminalApprover`]: the reference's `human` approver, a prompt on the terminal. A user
//! interface rather than part of the executor, so it is behind the `terminal` feature, with
//! [`TerminalElicitation`](crate::TerminalElicitation).

use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex};

use actuator_model::{BoxFuture, ToolCall};
use actuator_tool_core::ToolCallView;
use serde_json::Value;

use crate::approval::{Approval, ApprovalDecision, ApprovalRequest, Approver};

pub(crate) type Io = (Box<dyn BufRead + Send>, Box<dyn Write + Send>);

/// `text` without control characters (newlines and tabs kept): text from a model or a
/// server shown on a terminal cannot move the cursor, clear the screen or retitle the window.
/// What an operator is shown of a call: the message with it, then the view's context and
/// call parts (titles and contents), every text made printable.
pub(crate) fn shown(view: &ToolCallView, message: &str) -> String {
    let mut show = String::new();
    if !message.is_empty() {
        show.push_str(&printable(message));
        show.push_str("\n\n");
    }
    for part in [&view.context, &view.call].into_iter().flatten() {
        if let Some(title) = &part.title {
            show.push_str(&printable(title));
            show.push('\n');
        }
        show.push_str(&printable(&part.content));
        show.push('\n');
    }
    show
}

pub(crate) fn printable(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .collect()
}

/// An approver that shows each call on a terminal and asks `y` (approve), `n` (reject),
/// `e` (edit the arguments as JSON) or `q` (terminate).
///
/// Without a terminal on stdin it rejects, saying so, rather than blocking.
pub struct TerminalApprover {
    io: Option<Arc<Mutex<Io>>>,
}

impl std::fmt::Debug for TerminalApprover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalApprover").finish_non_exhaustive()
    }
}

impl Default for TerminalApprover {
    fn default() -> Self {
        Self::new()
    }
}

impl TerminalApprover {
    /// Asks on stdin/stdout.
    pub fn new() -> Self {
        TerminalApprover { io: None }
    }

    /// Asks on the given reader and writer (for scripts and tests).
    pub fn with_io(
        reader: impl BufRead + Send + 'static,
        writer: impl Write + Send + 'static,
    ) -> Self {
        TerminalApprover {
            io: Some(Arc::new(Mutex::new((Box::new(reader), Box::new(writer))))),
        }
    }

    fn ask(io: &mut Io, call: &ToolCall, view: &ToolCallView, message: &str) -> Approval {
        let (reader, writer) = io;
        let mut show = shown(view, message);
        loop {
            let _ = write!(
                writer,
                "{show}Approve this call? [y]es / [n]o / [e]dit / [q]uit: "
            );
            let _ = writer.flush();
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return Approval::reject("The approver's terminal closed."),
                Ok(_) => {}
            }
            match line.trim() {
                "y" | "yes" => return Approval::approve(),
                "n" | "no" => {
                    let _ = write!(writer, "Reason for the model (optional): ");
                    let _ = writer.flush();
                    let mut reason = String::new();
                    let _ = reader.read_line(&mut reason);
                    let reason = reason.trim();
                    return if reason.is_empty() {
                        Approval::new(ApprovalDecision::Reject)
                    } else {
                        Approval::reject(reason)
                    };
                }
                "q" | "quit" => return Approval::terminate(),
                "e" | "edit" => {
                    let _ = write!(writer, "New arguments as a JSON object: ");
                    let _ = writer.flush();
                    let mut json = String::new();
                    let _ = reader.read_line(&mut json);
                    match serde_json::from_str::<Value>(json.trim()) {
                        Ok(Value::Object(arguments)) => {
                            let mut modified = call.clone();
                            modified.arguments = arguments.into();
                            return Approval::modify(modified);
                        }
                        _ => {
                            let _ = writeln!(writer, "That is not a JSON object; try again.");
                        }
                    }
                }
                _ => {
                    let _ = writeln!(writer, "Please answer y, n, e or q.");
                }
            }
            show.clear();
        }
    }
}

impl Approver for TerminalApprover {
    /// The reference's name for its terminal approver.
    fn name(&self) -> &str {
        "human"
    }

    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> BoxFuture<'a, Approval> {
        let call = request.call.clone();
        let view = request.view.clone();
        let message = request.message.to_owned();
        let io = self.io.clone();
        Box::pin(async move {
            let work = move || match io {
                Some(io) => match io.lock() {
                    Ok(mut io) => Self::ask(&mut io, &call, &view, &message),
                    Err(_) => Approval::reject("The approver's terminal is unavailable."),
                },
                None => {
                    if !std::io::stdin().is_terminal() {
                        return Approval::reject(
                            "No terminal is available to ask for approval, so the call was not run.",
                        );
                    }
                    let mut io: Io = (
                        Box::new(std::io::BufReader::new(std::io::stdin())),
                        Box::new(std::io::stdout()),
                    );
                    Self::ask(&mut io, &call, &view, &message)
                }
            };
            // Reading a terminal blocks: keep it off the async workers.
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => handle
                    .spawn_blocking(work)
                    .await
                    .unwrap_or_else(|_| Approval::reject("The approver failed.")),
                Err(_) => work(),
            }
        })
    }
}
