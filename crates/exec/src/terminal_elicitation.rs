//! [`TerminalElicitation`]: a person at the terminal answers a request for input (an MCP
//! server's `elicitation/create`, a tool's `ToolContext::elicit`), field by field.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex};

use actuator_tool_core::{
    ElicitationHandler, ElicitationRequest, ElicitationResult, HostError, HostFuture,
};
use serde_json::{Map, Value};

use crate::terminal::printable;

type Io = (Box<dyn BufRead + Send>, Box<dyn Write + Send>);

/// How many times one field is asked again after an answer that does not fit it.
const MAX_RETRIES: usize = 5;

/// An [`ElicitationHandler`] that shows the question on a terminal and asks `a` (answer),
/// `d` (decline) or `c` (cancel); answering asks each field of the schema in turn (strings,
/// numbers, integers, booleans, one of an enum, several of an array's enum), an empty line
/// leaving a field to its default. Text from the asker is shown without control characters,
/// so it cannot rewrite the terminal. Without a terminal on stdin it declines, saying so,
/// rather than blocking.
///
/// ```
/// use actuator_exec::TerminalElicitation;
/// use actuator_tool_core::{ElicitationHandler, ElicitationRequest};
/// use serde_json::json;
///
/// let typed = std::io::Cursor::new("a\nAda\n");
/// let person = TerminalElicitation::with_io(typed, std::io::sink());
/// let asked = ElicitationRequest::new(
///     "Who are you?",
///     json!({"type": "object", "properties": {"name": {"type": "string"}}}),
/// );
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let answer = person.elicit("a tool", asked).await.unwrap();
/// assert_eq!(answer.content.unwrap()["name"], "Ada");
/// # });
/// ```
pub struct TerminalElicitation {
    io: Option<Arc<Mutex<Io>>>,
}

impl std::fmt::Debug for TerminalElicitation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalElicitation")
            .finish_non_exhaustive()
    }
}

impl Default for TerminalElicitation {
    fn default() -> Self {
        Self::new()
    }
}

impl TerminalElicitation {
    /// Asks on stdin/stdout.
    pub fn new() -> Self {
        TerminalElicitation { io: None }
    }

    /// Asks on the given reader and writer (for scripts and tests).
    pub fn with_io(
        reader: impl BufRead + Send + 'static,
        writer: impl Write + Send + 'static,
    ) -> Self {
        TerminalElicitation {
            io: Some(Arc::new(Mutex::new((Box::new(reader), Box::new(writer))))),
        }
    }
}

/// One line from the reader, trimmed; `None` when it closed.
fn read_line(reader: &mut dyn BufRead) -> Option<String> {
    let mut line = String::new();
    match reader.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_owned()),
    }
}

/// The choices a property allows: its `enum`, or its `oneOf`/`anyOf` of `const`s.
fn choices(property: &Value) -> Option<Vec<Value>> {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return Some(values.clone());
    }
    let options = property
        .get("oneOf")
        .or_else(|| property.get("anyOf"))
        .and_then(Value::as_array)?;
    let consts: Vec<Value> = options
        .iter()
        .filter_map(|o| o.get("const").cloned())
        .collect();
    (!consts.is_empty()).then_some(consts)
}

/// `text` read as a value of `property`'s type, or why not.
fn parse(property: &Value, text: &str) -> Result<Value, String> {
    let kind = property
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("string");
    if kind == "array" {
        let allowed = property.get("items").and_then(choices).unwrap_or_default();
        let picked: Vec<Value> = text
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| {
                allowed
                    .iter()
                    .find(|c| c.as_str() == Some(t))
                    .cloned()
                    .ok_or_else(|| format!("{t:?} is not one of the choices"))
            })
            .collect::<Result<_, _>>()?;
        return Ok(Value::Array(picked));
    }
    if let Some(allowed) = choices(property) {
        // A string choice as typed; a number or boolean choice read as JSON.
        let typed = serde_json::from_str::<Value>(text).ok();
        return allowed
            .iter()
            .find(|c| c.as_str() == Some(text) || typed.as_ref() == Some(*c))
            .cloned()
            .ok_or_else(|| "that is not one of the choices".to_owned());
    }
    match kind {
        "boolean" => match text.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("answer y or n".to_owned()),
        },
        "integer" => text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| "that is not a whole number".to_owned()),
        "number" => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| "that is not a number".to_owned()),
        _ => Ok(Value::String(text.to_owned())),
    }
}

/// What the prompt for one field shows: its title or name, description, choices, default.
fn field_prompt(name: &str, property: &Value, required: bool) -> String {
    let title = property
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or(name);
    let mut prompt = printable(title);
    if let Some(description) = property.get("description").and_then(Value::as_str) {
        prompt.push_str(&format!(" ({})", printable(description)));
    }
    let listed = choices(property).or_else(|| property.get("items").and_then(choices));
    if let Some(listed) = listed {
        let names: Vec<String> = listed
            .iter()
            .map(|c| printable(c.as_str().map_or(&c.to_string(), |s| s)))
            .collect();
        let how = if property.get("type").and_then(Value::as_str) == Some("array") {
            "any of, comma-separated"
        } else {
            "one of"
        };
        prompt.push_str(&format!(" [{how}: {}]", names.join(", ")));
    }
    if let Some(default) = property.get("default") {
        prompt.push_str(&format!(" [default {}]", printable(&default.to_string())));
    } else if !required {
        prompt.push_str(" [optional]");
    }
    prompt.push_str(": ");
    prompt
}

/// Asks the whole request; `Ok(None)` when the terminal closed.
fn ask(io: &mut Io, asker: &str, request: &ElicitationRequest) -> Option<ElicitationResult> {
    let (reader, writer) = io;
    let _ = writeln!(
        writer,
        "{} asks: {}",
        printable(asker),
        printable(&request.message)
    );
    loop {
        let _ = write!(writer, "[a]nswer / [d]ecline / [c]ancel: ");
        let _ = writer.flush();
        match read_line(reader)?.as_str() {
            "a" | "answer" => break,
            "d" | "decline" => return Some(ElicitationResult::decline()),
            "c" | "cancel" => return Some(ElicitationResult::cancel()),
            _ => {
                let _ = writeln!(writer, "Please answer a, d or c.");
            }
        }
    }
    let schema = &request.requested_schema;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, property) in properties.into_iter().flatten() {
        let needed = required.contains(&name.as_str()) && property.get("default").is_none();
        let prompt = field_prompt(name, property, needed);
        let mut tries = 0;
        loop {
            let _ = write!(writer, "{prompt}");
            let _ = writer.flush();
            let text = read_line(reader)?;
            if text.is_empty() && !needed {
                break; // left to its default, or out
            }
            match parse(property, &text) {
                Ok(value) => {
                    content.insert(name.clone(), value);
                    break;
                }
                Err(why) if tries < MAX_RETRIES => {
                    tries += 1;
                    let _ = writeln!(writer, "{why}; try again.");
                }
                Err(_) => return Some(ElicitationResult::cancel()),
            }
        }
    }
    Some(ElicitationResult::accept(content))
}

impl ElicitationHandler for TerminalElicitation {
    fn elicit(
        &self,
        asker: &str,
        request: ElicitationRequest,
    ) -> HostFuture<'static, ElicitationResult> {
        let io = self.io.clone();
        let asker = asker.to_owned();
        Box::pin(async move {
            let closed = || ElicitationResult::cancel();
            let work = move || match io {
                Some(io) => match io.lock() {
                    Ok(mut io) => Ok(ask(&mut io, &asker, &request).unwrap_or_else(closed)),
                    Err(_) => Err(HostError::failed("the terminal is unavailable")),
                },
                None => {
                    if !std::io::stdin().is_terminal() {
                        return Ok(ElicitationResult::decline());
                    }
                    let mut io: Io = (
                        Box::new(std::io::BufReader::new(std::io::stdin())),
                        Box::new(std::io::stdout()),
                    );
                    Ok(ask(&mut io, &asker, &request).unwrap_or_else(closed))
                }
            };
            // Reading a terminal blocks: keep it off the async workers.
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => handle
                    .spawn_blocking(work)
                    .await
                    .unwrap_or_else(|_| Err(HostError::failed("the terminal prompt failed"))),
                Err(_) => work(),
            }
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A writer whose bytes the test reads afterwards.
    #[derive(Clone, Default)]
    struct Screen(Arc<Mutex<Vec<u8>>>);

    impl Write for Screen {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Screen {
        fn text(&self) -> String {
            String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
        }
    }

    async fn answer(typed: &str, request: ElicitationRequest) -> (ElicitationResult, String) {
        let screen = Screen::default();
        let person =
            TerminalElicitation::with_io(std::io::Cursor::new(typed.to_owned()), screen.clone());
        let answer = person.elicit("server", request).await.unwrap();
        (answer, screen.text())
    }

    fn form() -> ElicitationRequest {
        ElicitationRequest::new(
            "Set up the run",
            json!({"type": "object", "properties": {
                "name": {"type": "string", "title": "Name"},
                "retries": {"type": "integer", "default": 3},
                "verbose": {"type": "boolean"},
                "tier": {"type": "string", "enum": ["small", "large"]},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}},
                "ratio": {"type": "number"},
            }, "required": ["name", "tier"]}),
        )
    }

    #[tokio::test]
    async fn each_field_is_asked_typed_and_defaults_are_left_out() {
        // Fields in the schema's order: name, retries (a bad integer asked again, then left
        // to its default), verbose, tier, tags, ratio.
        let typed = "a\nAda\nmany\n\ny\nlarge\na, c\n0.5\n";
        let (answer, screen) = answer(typed, form()).await;
        let answer = form().complete(answer).unwrap();
        let content = answer.content.unwrap();
        assert_eq!(
            Value::Object(content),
            json!({"name": "Ada", "ratio": 0.5, "retries": 3, "tags": ["a", "c"],
                   "tier": "large", "verbose": true})
        );
        assert!(screen.contains("that is not a whole number"), "{screen}");
        assert!(screen.contains("[one of: small, large]"), "{screen}");
    }

    #[tokio::test]
    async fn decline_cancel_and_a_closed_terminal() {
        assert_eq!(answer("d\n", form()).await.0, ElicitationResult::decline());
        assert_eq!(answer("c\n", form()).await.0, ElicitationResult::cancel());
        // The terminal closes in the middle of the form: nothing half-answered is sent.
        assert_eq!(
            answer("a\nAda\n", form()).await.0,
            ElicitationResult::cancel()
        );
    }

    #[tokio::test]
    async fn a_required_field_is_asked_until_answered_then_the_form_gives_up() {
        let typed = "a\n\n\n\n\n\n\n\n";
        assert_eq!(answer(typed, form()).await.0, ElicitationResult::cancel());
    }

    #[tokio::test]
    async fn the_askers_text_cannot_drive_the_terminal() {
        let request = ElicitationRequest::new(
            "Hello\u{1b}[2J\u{1b}]0;pwned\u{7}\rOK",
            json!({"type": "object", "properties": {"x": {"type": "string",
                "description": "\u{1b}[31mred\u{1b}[0m"}}}),
        );
        let (_, screen) = answer("a\nfine\n", request).await;
        assert!(!screen.contains('\u{1b}'), "{screen:?}");
        assert!(!screen.contains('\r'), "{screen:?}");
        assert!(!screen.contains('\u{7}'), "{screen:?}");
    }
}
