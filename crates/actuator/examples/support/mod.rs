//! What the examples share: their command line (`--model`), the limits every run has, and
//! how a run's end is reported (an answer, or how it ended without one, and the exit code).
//! The transcript each prints as it runs is the library's `ConsoleTranscript`.

use actuator::events::ConsoleTranscript;

/// What every example's command line gives: `--model PROVIDER/MODEL` (a real model by name;
/// the scripted one without it), flags (`--something`) and the other arguments.
#[allow(dead_code)] // each example uses what it needs
pub struct Args {
    /// The model's name, when `--model` was given.
    pub model: Option<String>,
    /// The log directory, when `--log-dir` was given.
    pub log_dir: Option<String>,
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
            log_dir: None,
            flags: Vec::new(),
            positional: Vec::new(),
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--model" => parsed.model = Some(args.next().ok_or(usage)?),
                "--log-dir" => parsed.log_dir = Some(args.next().ok_or(usage)?),
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
pub fn report(
    result: &actuator::agent::AgentRun,
    paint: &ConsoleTranscript,
) -> std::process::ExitCode {
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
