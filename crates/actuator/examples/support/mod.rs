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
