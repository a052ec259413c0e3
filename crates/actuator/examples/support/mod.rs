//! A transcript printer shared by the examples: an event sink that prints each model turn and
//! tool call as it happens, indented by agent depth.

use std::io::IsTerminal;
use std::sync::Mutex;

use actuator::events::{Event, EventSink};

/// Prints events as a readable, optionally coloured transcript.
pub struct Transcript {
    color: bool,
    /// Open agent spans: (span id, agent name).
    agents: Mutex<Vec<(String, String)>>,
}

impl Transcript {
    /// Colour when stdout is a terminal and `NO_COLOR` is not set.
    pub fn new() -> Self {
        Transcript {
            color: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
            agents: Mutex::new(Vec::new()),
        }
    }

    /// `text` in an ANSI colour, when colour is on.
    pub fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn indent(&self) -> String {
        let depth = self.agents.lock().map_or(1, |a| a.len());
        "    ".repeat(depth.saturating_sub(1))
    }

    fn agent(&self) -> String {
        self.agents
            .lock()
            .ok()
            .and_then(|a| a.last().map(|(_, n)| n.clone()))
            .unwrap_or_default()
    }
}

impl EventSink for Transcript {
    fn emit(&self, event: Event) {
        let pad = self.indent();
        match event {
            Event::SpanBegin(s) if s.kind == "agent" => {
                if let Ok(mut a) = self.agents.lock() {
                    a.push((s.id, s.name));
                }
            }
            Event::SpanEnd(s) => {
                if let Ok(mut a) = self.agents.lock() {
                    a.retain(|(id, _)| *id != s.id);
                }
            }
            Event::Model(m) => {
                let Some(message) = m.output.as_ref().and_then(|o| o.message()) else {
                    return;
                };
                let who = self.paint("1;34", &self.agent());
                let text = message.content.text();
                if !text.is_empty() {
                    println!("{pad}{who} {text}");
                } else {
                    println!("{pad}{who}");
                }
                for call in message.calls() {
                    println!("{pad}{} {}", self.paint("34", "  call"), call.render());
                }
            }
            Event::Tool(t) => match &t.error {
                None => println!(
                    "{pad}{} {} → {}",
                    self.paint("32", "  tool"),
                    t.function,
                    t.result.text().replace('\n', " ")
                ),
                Some(e) => println!(
                    "{pad}{} {} failed ({}): {}",
                    self.paint("31", "  tool"),
                    t.function,
                    e.kind,
                    e.message.replace('\n', &format!("\n{pad}       "))
                ),
            },
            _ => {}
        }
    }
}

/// What every example's command line gives: `--model PROVIDER/MODEL` (a real model by name;
/// the scripted one without it), flags (`--something`) and the other arguments.
#[allow(dead_code)] // each example uses what it needs
pub struct Args {
    /// The model's name, when `--model` was given.
    pub model: Option<String>,
    /// Flags other than `--model`.
    pub flags: Vec<String>,
    /// The remaining arguments.
    pub positional: Vec<String>,
}

#[allow(dead_code)]
impl Args {
    /// Reads the process's arguments; `-h`/`--help` and a `--model` without a value print
    /// `usage` and fail.
    pub fn parse(usage: &str) -> Result<Args, String> {
        let mut parsed = Args {
            model: None,
            flags: Vec::new(),
            positional: Vec::new(),
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--model" => parsed.model = Some(args.next().ok_or(usage)?),
                "-h" | "--help" => return Err(usage.to_owned()),
                flag if flag.starts_with("--") => parsed.flags.push(arg),
                _ => parsed.positional.push(arg),
            }
        }
        Ok(parsed)
    }

    /// Whether `flag` was given.
    pub fn flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }

    /// The model `--model` names (through `get_model`: keys and base URLs from the usual
    /// environment variables), or `scripted` without it.
    pub fn model(
        &self,
        scripted: impl FnOnce() -> std::sync::Arc<dyn actuator::model::Model>,
    ) -> Result<std::sync::Arc<dyn actuator::model::Model>, Box<dyn std::error::Error>> {
        match &self.model {
            None => Ok(scripted()),
            #[cfg(feature = "providers")]
            Some(name) => Ok(actuator::providers::get_model(name)?),
            #[cfg(not(feature = "providers"))]
            Some(name) => Err(format!(
                "--model {name} needs the providers: add `--features providers` to cargo run"
            )
            .into()),
        }
    }
}

/// Limits every example's run has: a real model that never submits stops here rather than
/// running until the context window is full.
#[allow(dead_code)]
pub fn limits() -> [actuator::agent::limits::Limit; 3] {
    use actuator::agent::limits::{time_limit, token_limit, turn_limit};
    [
        turn_limit(20),
        token_limit(100_000),
        time_limit(std::time::Duration::from_secs(300)),
    ]
}

/// Prints the answer, or how the run ended without one (a limit, the context window, a
/// refusal) on stderr; the exit code says which.
#[allow(dead_code, clippy::print_stderr)]
pub fn report(result: &actuator::agent::AgentRun, paint: &Transcript) -> std::process::ExitCode {
    match result.answer() {
        Some(answer) => {
            println!("\n{} {answer}", paint.paint("1;32", "answer:"));
            std::process::ExitCode::SUCCESS
        }
        None => {
            eprintln!("\n{} {}", paint.paint("1;31", "no answer:"), result.end);
            std::process::ExitCode::FAILURE
        }
    }
}

/// Prints an error with its causes (the providers' errors say what to do: which variable to
/// set, which server did not answer) and fails.
#[allow(dead_code, clippy::print_stderr)]
pub fn fail(error: &(dyn std::error::Error + 'static)) -> std::process::ExitCode {
    eprintln!("error: {}", actuator::tool_core::ErrorChain(error));
    std::process::ExitCode::FAILURE
}
