//! [`TerminalReviewer`]: the reference's `human` reviewer (`human_reviewer`), the executed call
//! and its result shown on the terminal and a decision asked for. Behind the `terminal`
//! feature, with `TerminalApprover`.

use std::io::{IsTerminal, Write as _};
use std::sync::{Arc, Mutex};

use actuator_model::{BoxFuture, MessageContent, ToolCallError};
use actuator_tool_core::{Content, ContentFormat, ToolCallContent, ToolCallView};

use crate::review::{Review, ReviewDecision, ReviewRequest, Reviewer};
use crate::terminal::{Io, shown};

/// The reference's explanation of an operator's `continue`.
const HUMAN_CONTINUED: &str =
    "Human operator reviewed the tool result and let the sample continue.";
/// The reference's explanation of an operator's `terminate`.
const HUMAN_TERMINATED: &str =
    "Human operator reviewed the tool result and asked that the sample be terminated.";
/// The reference's explanation of an operator's `escalate`.
const HUMAN_ESCALATED: &str = "Human operator escalated the tool result review.";

/// A reviewer that shows each executed call with its result on a terminal and asks for one of
/// its choices (by default `continue` and `terminate`, as the reference's `human_reviewer`).
///
/// A review that ends without one of the offered choices (the terminal closed, or there is
/// none on stdin) fails closed, as the reference's does: the call has run, so the safe outcome
/// is to end the run. The reference reaches the operator through its approval surfaces and
/// words that case with the approval's decision; here the reason is given directly.
///
/// ```
/// use actuator_exec::{ReviewDecision, TerminalReviewer};
/// let reviewer = TerminalReviewer::with_io(std::io::Cursor::new("e\n"), Vec::new())
///     .choices([ReviewDecision::Continue, ReviewDecision::Escalate]);
/// # let _ = reviewer;
/// ```
pub struct TerminalReviewer {
    io: Option<Arc<Mutex<Io>>>,
    choices: Vec<ReviewDecision>,
}

impl std::fmt::Debug for TerminalReviewer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalReviewer")
            .field("choices", &self.choices)
            .finish_non_exhaustive()
    }
}

impl Default for TerminalReviewer {
    fn default() -> Self {
        Self::new()
    }
}

impl TerminalReviewer {
    /// Asks on stdin/stdout, offering `continue` and `terminate`.
    pub fn new() -> Self {
        TerminalReviewer {
            io: None,
            choices: vec![ReviewDecision::Continue, ReviewDecision::Terminate],
        }
    }

    /// Asks on the given reader and writer (for scripts and tests).
    pub fn with_io(
        reader: impl std::io::BufRead + Send + 'static,
        writer: impl std::io::Write + Send + 'static,
    ) -> Self {
        TerminalReviewer {
            io: Some(Arc::new(Mutex::new((Box::new(reader), Box::new(writer))))),
            ..Self::new()
        }
    }

    /// The decisions offered (in the order given; an empty list keeps the default).
    #[must_use]
    pub fn choices(mut self, choices: impl IntoIterator<Item = ReviewDecision>) -> Self {
        let mut offered: Vec<ReviewDecision> = Vec::new();
        for c in choices {
            if !offered.contains(&c) {
                offered.push(c);
            }
        }
        if !offered.is_empty() {
            self.choices = offered;
        }
        self
    }

    fn ask(io: &mut Io, view: &ToolCallView, message: &str, choices: &[ReviewDecision]) -> Review {
        let (reader, writer) = io;
        let mut show = shown(view, message);
        let offered: Vec<String> = choices
            .iter()
            .map(|c| {
                let name = c.as_str();
                format!("[{}]{}", &name[..1], &name[1..])
            })
            .collect();
        loop {
            let _ = write!(
                writer,
                "{show}Review this result: {}: ",
                offered.join(" / ")
            );
            let _ = writer.flush();
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return fail_closed("the reviewer's terminal closed"),
                Ok(_) => {}
            }
            let answer = line.trim();
            let chosen = choices.iter().find(|c| {
                let name = c.as_str();
                !answer.is_empty() && (answer == name || answer == &name[..1])
            });
            match chosen {
                Some(&decision) => {
                    return Review::new(decision).with_explanation(explanation(decision));
                }
                None => {
                    let _ = writeln!(writer, "Please answer {}.", offered.join(", "));
                }
            }
            show.clear();
        }
    }
}

fn explanation(decision: ReviewDecision) -> &'static str {
    match decision {
        ReviewDecision::Continue => HUMAN_CONTINUED,
        ReviewDecision::Terminate => HUMAN_TERMINATED,
        ReviewDecision::Escalate => HUMAN_ESCALATED,
    }
}

/// The review of an operator who gave none of the offered choices: the run ends.
fn fail_closed(why: &str) -> Review {
    Review::terminate().with_explanation(format!(
        "Human review ended without one of the offered choices ({why}); the sample is terminated."
    ))
}

impl Reviewer for TerminalReviewer {
    /// The reference's name for its terminal reviewer.
    fn name(&self) -> &str {
        "human"
    }

    fn review<'a>(&'a self, request: ReviewRequest<'a>) -> BoxFuture<'a, Review> {
        let view = view_with_result(request.view, request.result, request.error);
        let message = request.message.to_owned();
        let choices = self.choices.clone();
        let io = self.io.clone();
        Box::pin(async move {
            let work = move || match io {
                Some(io) => match io.lock() {
                    Ok(mut io) => Self::ask(&mut io, &view, &message, &choices),
                    Err(_) => fail_closed("the reviewer's terminal is unavailable"),
                },
                None => {
                    if !std::io::stdin().is_terminal() {
                        return fail_closed("no terminal is available to ask");
                    }
                    let mut io: Io = (
                        Box::new(std::io::BufReader::new(std::io::stdin())),
                        Box::new(std::io::stdout()),
                    );
                    Self::ask(&mut io, &view, &message, &choices)
                }
            };
            // Reading a terminal blocks: keep it off the async workers.
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => handle
                    .spawn_blocking(work)
                    .await
                    .unwrap_or_else(|_| fail_closed("the reviewer failed")),
                Err(_) => work(),
            }
        })
    }
}

/// The call's view with the result it returned appended (the reference's `view_with_result`):
/// a markdown view gets a `**Result**` section in a fence longer than any backtick run of the
/// result; a text view stays text.
pub(crate) fn view_with_result(
    view: &ToolCallView,
    result: &MessageContent,
    error: Option<&ToolCallError>,
) -> ToolCallView {
    let outcome = match error {
        Some(e) => format!("Error ({}): {}", e.kind, e.message),
        None => result_text(result),
    };
    // The `{{param}}` placeholders of a view are filled from the call's arguments; evidence
    // shown there is not a template.
    let outcome = outcome.replace("{{", "{ {");
    let result_block = format!("**Result**\n\n{}", fenced(&outcome));
    let call = match &view.call {
        None => ToolCallContent {
            title: None,
            format: ContentFormat::Markdown,
            content: result_block,
        },
        Some(c) if c.format == ContentFormat::Markdown => ToolCallContent {
            title: c.title.clone(),
            format: ContentFormat::Markdown,
            content: format!("{}\n\n{result_block}", c.content),
        },
        Some(c) => ToolCallContent {
            title: c.title.clone(),
            format: ContentFormat::Text,
            content: format!("{}\n\nResult\n\n{outcome}", c.content),
        },
    };
    ToolCallView {
        context: view.context.clone(),
        call: Some(call),
    }
}

/// The result's text, with parts a terminal cannot show named (`[image]`), so that a
/// screenshot does not reach the operator as an empty result.
fn result_text(result: &MessageContent) -> String {
    match result {
        MessageContent::Text(t) => t.to_string(),
        MessageContent::Parts(parts) => parts
            .iter()
            .map(|p| match (p.as_text(), p) {
                (Some(text), _) => text.to_owned(),
                (None, Content::Image(_)) => "[image]".to_owned(),
                (None, Content::Audio(_)) => "[audio]".to_owned(),
                (None, Content::Video(_)) => "[video]".to_owned(),
                (None, Content::Document(_)) => "[document]".to_owned(),
                (None, _) => "[content]".to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// `text` in a backtick fence longer than any backtick run in it (at least three).
fn fenced(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}\n{text}\n{fence}")
}
