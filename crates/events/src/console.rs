//! [`ConsoleTranscript`]: an [`EventSink`] that prints a run as it happens, for people.

use std::ffi::OsStr;
use std::io::{ErrorKind, IsTerminal, Write};
use std::sync::{Mutex, PoisonError};

use actuator_model::{ChatMessage, MessageContent};
use actuator_tool_core::Content;

use crate::{Event, EventSink, ModelEvent, ModelRetryEvent, ToolEvent};

/// Lines of one text (a result, a model's message, …) shown before the rest is summarised.
const DEFAULT_MAX_LINES: usize = 20;
/// Characters of one text shown before the rest is summarised.
const DEFAULT_MAX_CHARS: usize = 2_000;
/// Where a text's second and later lines start, after the five-column label and a space.
const CONTINUATION: &str = "      ";

/// Prints the events of a run as a readable transcript, as they happen: the user's input,
/// each model turn (its text, and its reasoning when asked), the tool calls it makes and
/// their results or errors, the provider's retries (`retry  openai/gpt-4.1-mini: connection
/// refused; retrying in 2.1 s (attempt 2)`), limits hit, notes ([`InfoEvent`](crate::InfoEvent)s)
/// and compactions. The events of an agent run by another agent (a handoff, `as_tool`) are
/// indented one step per level.
///
/// The user's input is the user messages of each agent's first generation, shown when that
/// generation ends. A caller that wants it shown before the run starts (the first generation
/// can take a while, or be retried) prints it with [`ConsoleTranscript::user`], and the next
/// agent run at the top level does not repeat it; [`ConsoleTranscript::show_input`] turns
/// the input off altogether.
///
/// [`ConsoleTranscript::new`] writes to standard output, in colour when it is a terminal and
/// `NO_COLOR` is unset or empty; [`ConsoleTranscript::to_writer`] writes to any writer,
/// without colour unless [`ConsoleTranscript::color`] asks for it. Long texts are cut to
/// [`max_lines`](ConsoleTranscript::max_lines) lines and
/// [`max_chars`](ConsoleTranscript::max_chars) characters, ending `… (N more lines)`. A
/// write that fails is ignored (a closed pipe ends the transcript, not the run).
///
/// ```
/// use std::sync::Arc;
/// use actuator_events::{ConsoleTranscript, Event, EventSink, LimitEvent};
///
/// // In a program: `RunContext::with_events(Arc::new(ConsoleTranscript::new()))`.
/// let transcript = Arc::new(ConsoleTranscript::to_writer(std::io::sink()).max_lines(10));
/// transcript.user("What is 3 + 4?");
/// transcript.emit(Event::Limit(LimitEvent {
///     kind: "turn".into(),
///     message: "Turn limit exceeded. count: 11; limit: 10".into(),
///     limit: 10.0,
/// }));
/// assert!(!transcript.is_colored());
/// ```
pub struct ConsoleTranscript {
    color: bool,
    show_input: bool,
    reasoning: bool,
    max_lines: usize,
    max_chars: usize,
    inner: Mutex<Inner>,
}

struct Inner {
    out: Box<dyn Write + Send>,
    /// Set once a write found the reader gone: nothing more is written.
    closed: bool,
    /// Open agent runs, outermost first.
    agents: Vec<OpenAgent>,
    /// Whether the input of a generation outside any agent run was shown.
    top_input_shown: bool,
    /// [`ConsoleTranscript::user`] printed the input the next top-level agent receives.
    input_announced: bool,
}

struct OpenAgent {
    id: String,
    name: String,
    input_shown: bool,
}

impl std::fmt::Debug for ConsoleTranscript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsoleTranscript")
            .field("color", &self.color)
            .field("show_input", &self.show_input)
            .field("reasoning", &self.reasoning)
            .field("max_lines", &self.max_lines)
            .field("max_chars", &self.max_chars)
            .finish_non_exhaustive()
    }
}

impl Default for ConsoleTranscript {
    fn default() -> Self {
        Self::new()
    }
}

/// Colour on a terminal unless `NO_COLOR` is set to something (<https://no-color.org>).
fn wants_color(terminal: bool, no_color: Option<&OsStr>) -> bool {
    terminal && no_color.is_none_or(OsStr::is_empty)
}

impl ConsoleTranscript {
    /// A transcript on standard output, in colour when it is a terminal and `NO_COLOR` is
    /// unset or empty.
    pub fn new() -> Self {
        let color = wants_color(
            std::io::stdout().is_terminal(),
            std::env::var_os("NO_COLOR").as_deref(),
        );
        Self::to_writer(std::io::stdout()).color(color)
    }

    /// A transcript written to `out` (a file, a buffer a test reads), without colour.
    pub fn to_writer(out: impl Write + Send + 'static) -> Self {
        ConsoleTranscript {
            color: false,
            show_input: true,
            reasoning: false,
            max_lines: DEFAULT_MAX_LINES,
            max_chars: DEFAULT_MAX_CHARS,
            inner: Mutex::new(Inner {
                out: Box::new(out),
                closed: false,
                agents: Vec::new(),
                top_input_shown: false,
                input_announced: false,
            }),
        }
    }

    /// Colour on or off, whatever the output is.
    #[must_use]
    pub fn color(mut self, on: bool) -> Self {
        self.color = on;
        self
    }

    /// Whether each agent's input (the user messages of its first generation) is shown
    /// (default: yes).
    #[must_use]
    pub fn show_input(mut self, on: bool) -> Self {
        self.show_input = on;
        self
    }

    /// Whether the model's reasoning is shown, when it gives any (default: no).
    #[must_use]
    pub fn reasoning(mut self, on: bool) -> Self {
        self.reasoning = on;
        self
    }

    /// Lines of one text shown before the rest is summarised (default 20).
    #[must_use]
    pub fn max_lines(mut self, n: usize) -> Self {
        self.max_lines = n;
        self
    }

    /// Characters of one text shown before the rest is summarised (default 2,000).
    #[must_use]
    pub fn max_chars(mut self, n: usize) -> Self {
        self.max_chars = n;
        self
    }

    /// Whether this transcript writes in colour.
    pub fn is_colored(&self) -> bool {
        self.color
    }

    /// `text` in an ANSI colour (`"1;32"`: bold green), when colour is on; for lines a
    /// program prints around the transcript (its answer).
    pub fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// Prints the user's input now, before the run that receives it starts; the next agent
    /// run at the top level does not show it again.
    pub fn user(&self, text: &str) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let block = self.block("", &self.paint("1;35", " user"), "", text);
        inner.input_announced = true;
        inner.write(&block);
    }

    /// `label` (five columns) then `head` and `text`, cut to the limits; the text's further
    /// lines indented under it, each line starting with `pad`.
    fn block(&self, pad: &str, label: &str, head: &str, text: &str) -> String {
        let lines = clip(text, self.max_lines, self.max_chars);
        let mut out = format!("{pad}{label} {head}");
        let mut rest = lines.iter();
        if let Some(first) = rest.next() {
            out.push_str(first);
        }
        let trimmed = out.trim_end().len();
        out.truncate(trimmed);
        out.push('\n');
        for line in rest {
            out.push_str(pad);
            out.push_str(CONTINUATION);
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    fn model(&self, inner: &mut Inner, pad: &str, m: &ModelEvent) -> String {
        let mut out = String::new();
        if self.show_input && !inner.take_input_shown() {
            for message in m.input.iter().filter(|m| matches!(m, ChatMessage::User(_))) {
                out += &self.block(pad, &self.paint("1;35", " user"), "", &message.text());
            }
        }
        let who = inner.agents.last().map_or("model", |a| a.name.as_str());
        if let Some(error) = &m.error {
            let label = self.paint("1;31", "error");
            out += &self.block(pad, &label, &format!("{}: ", m.model), error);
            return out;
        }
        let Some(message) = m.output.as_ref().and_then(|o| o.message()) else {
            return out;
        };
        if self.reasoning {
            for reasoning in reasoning_texts(&message.content) {
                out += &self.block(pad, &self.paint("2", "think"), "", reasoning);
            }
        }
        out += &self.block(pad, &self.paint("1;34", who), "", &message.content.text());
        for call in message.calls() {
            out += &self.block(pad, &self.paint("34", " call"), "", &call.render());
        }
        out
    }

    fn tool(&self, pad: &str, t: &ToolEvent) -> String {
        if let Some(fatal) = &t.fatal {
            let head = format!("{} failed, ending the run: ", t.function);
            return self.block(pad, &self.paint("1;31", " tool"), &head, fatal);
        }
        match &t.error {
            None => {
                let head = format!("{} → ", t.function);
                self.block(pad, &self.paint("32", " tool"), &head, &t.result.text())
            }
            Some(e) => {
                let head = format!("{} failed ({}): ", t.function, e.kind);
                self.block(pad, &self.paint("31", " tool"), &head, &e.message)
            }
        }
    }

    fn retry(&self, pad: &str, r: &ModelRetryEvent) -> String {
        // The event counts retries from 1; the request sent after the wait is attempt retry + 1.
        let line = format!(
            "{}: {}; retrying in {:.1} s (attempt {})",
            r.model,
            r.error,
            r.wait,
            r.retry.saturating_add(1)
        );
        self.block(pad, &self.paint("33", "retry"), "", &line)
    }

    fn render(&self, inner: &mut Inner, event: &Event) -> String {
        let pad = "    ".repeat(inner.agents.len().saturating_sub(1));
        match event {
            Event::SpanBegin(s) if s.kind == "agent" => {
                // Input printed by `user` belongs to the run that starts at the top level.
                let input_shown =
                    inner.agents.is_empty() && std::mem::take(&mut inner.input_announced);
                inner.agents.push(OpenAgent {
                    id: s.id.clone(),
                    name: s.name.clone(),
                    input_shown,
                });
                String::new()
            }
            Event::SpanEnd(s) => {
                inner.agents.retain(|a| a.id != s.id);
                String::new()
            }
            Event::Model(m) => self.model(inner, &pad, m),
            Event::Tool(t) if !t.is_pending() => self.tool(&pad, t),
            Event::ModelRetry(r) => self.retry(&pad, r),
            Event::Limit(l) => self.block(&pad, &self.paint("33", "limit"), "", &l.message),
            Event::Info(i) => {
                let head = i
                    .source
                    .as_deref()
                    .map(|s| format!("{s}: "))
                    .unwrap_or_default();
                self.block(&pad, &self.paint("36", " info"), &head, &i.message)
            }
            Event::Compaction(c) => {
                let line = format!(
                    "{} ({}): {} → {} messages, about {} → {} tokens",
                    c.strategy,
                    c.trigger,
                    c.messages_before,
                    c.messages_after,
                    c.tokens_before,
                    c.tokens_after
                );
                self.block(&pad, &self.paint("36", "compact"), "", &line)
            }
            Event::Review(r) => {
                let head = format!("{} on {}: {}", r.reviewer, r.function, r.decision.as_str());
                let colour = match r.decision {
                    crate::ReviewDecision::Terminate => "1;31",
                    _ => "35",
                };
                let line = r
                    .explanation
                    .as_deref()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default();
                self.block(&pad, &self.paint(colour, "review"), &head, &line)
            }
            Event::Score(s) => {
                let value = match &s.score.value {
                    crate::ScoreValue::String(text) => text.clone(),
                    other => serde_json::to_string(other).unwrap_or_default(),
                };
                let head = format!("{}: {value}", s.scorer);
                let line = s
                    .score
                    .explanation
                    .as_deref()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default();
                self.block(&pad, &self.paint("32", " score"), &head, &line)
            }
            Event::Interrupt(i) => {
                let head = format!("{} ({})", i.interrupted.as_str(), i.source.as_str());
                let line = i
                    .interrupted_tool_call_id
                    .as_deref()
                    .map(|id| format!(" call {id}"))
                    .unwrap_or_default();
                self.block(&pad, &self.paint("1;33", "interrupt"), &head, &line)
            }
            _ => String::new(),
        }
    }
}

impl Inner {
    /// Whether the current agent's input was shown, marking it shown.
    fn take_input_shown(&mut self) -> bool {
        let flag = match self.agents.last_mut() {
            Some(agent) => &mut agent.input_shown,
            None => &mut self.top_input_shown,
        };
        std::mem::replace(flag, true)
    }

    fn write(&mut self, text: &str) {
        if self.closed || text.is_empty() {
            return;
        }
        // A transcript is for people watching: a failed write loses lines, never the run.
        let written = self
            .out
            .write_all(text.as_bytes())
            .and_then(|()| self.out.flush());
        if let Err(e) = written
            && e.kind() == ErrorKind::BrokenPipe
        {
            self.closed = true;
        }
    }
}

impl EventSink for ConsoleTranscript {
    fn emit(&self, event: Event) {
        // One lock for the state and the writer: an event's lines are never interleaved with
        // another's, whatever thread emits them.
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let text = self.render(&mut inner, &event);
        inner.write(&text);
    }
}

/// The reasoning items of `content` that have text.
fn reasoning_texts(content: &MessageContent) -> impl Iterator<Item = &str> {
    let parts = match content {
        MessageContent::Parts(parts) => parts.as_slice(),
        MessageContent::Text(_) => &[],
    };
    parts.iter().filter_map(|part| match part {
        Content::Reasoning { reasoning, .. } if !reasoning.is_empty() => Some(reasoning.as_str()),
        _ => None,
    })
}

/// `text` as lines, cut to `max_lines` lines and `max_chars` characters, ending with a note
/// of what was left out (`… (3 more lines)`, or `… (40 more characters)` when only the last
/// line shown was cut).
fn clip(text: &str, max_lines: usize, max_chars: usize) -> Vec<String> {
    let total = text.lines().count();
    let mut out = Vec::new();
    let mut budget = max_chars;
    let mut cut_chars = 0;
    for line in text.lines() {
        if out.len() == max_lines || budget == 0 {
            break;
        }
        let n = line.chars().count();
        if n > budget {
            out.push(line.chars().take(budget).collect::<String>() + "…");
            cut_chars = n - budget;
            break;
        }
        budget -= n;
        out.push(line.to_owned());
    }
    let more = total - out.len();
    if more > 0 {
        out.push(format!(
            "… ({more} more line{})",
            if more == 1 { "" } else { "s" }
        ));
    } else if cut_chars > 0 {
        out.push(format!("… ({cut_chars} more characters)"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(wants_color(true, None));
        assert!(wants_color(true, Some(OsStr::new(""))));
        assert!(!wants_color(true, Some(OsStr::new("1"))));
        assert!(!wants_color(false, None));
    }

    #[test]
    fn clip_counts_what_it_leaves_out() {
        assert_eq!(clip("a\nb\nc", 2, 100), ["a", "b", "… (1 more line)"]);
        assert_eq!(clip("a\nb\nc\nd", 1, 100), ["a", "… (3 more lines)"]);
        assert_eq!(clip("abcdef", 5, 4), ["abcd…", "… (2 more characters)"]);
        assert_eq!(clip("ab\ncdef\ng", 5, 4), ["ab", "cd…", "… (1 more line)"]);
        assert_eq!(clip("", 5, 4), Vec::<String>::new());
        assert_eq!(clip("x", 5, 4), ["x"]);
    }
}
