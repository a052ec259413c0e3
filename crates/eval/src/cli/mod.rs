//! A command line for a program's own tasks: the reference's `inspect` verbs (`list`, `eval`,
//! `retry`, `merge`, `log dump`) in any binary, for the tasks it registers.
//!
//! Rust tasks are code, so the command line lives in the program that has them. [`main`]
//! gives it the verbs:
//!
//! ```text
//! my-evals list
//! my-evals eval TASK [--model M] [-T KEY=VALUE]… [--limit N|START,END] [--shard I/N]
//!                    [--epochs N] [--max-samples N] [--log-dir DIR] [--log-format eval|json]
//!                    [--sandbox local|docker[:CONFIG]] [--fail-on-error N|FRACTION]
//!                    [--no-fail-on-error] [--retry-on-error N] [--resume]
//! my-evals retry LOG [--log-dir DIR] [--max-samples N] …
//! my-evals merge LOGS… --out PATH
//! my-evals log dump LOG
//! ```
//!
//! `--shard I/N` runs every N-th sample from the I-th (from 0, after `--limit`), each with the
//! id it has in the whole dataset, so that the shards of one evaluation, run as the tasks of
//! a Slurm array job or a Kubernetes Indexed Job, merge back into one log (`merge`, which
//! takes the shard logs or the directory they were written to). `retry` makes the task of a
//! log again (its name, `--model`, `-T` arguments, samples and epochs are in the log) and
//! runs only the samples it did not finish; `merge` then takes the retried log in place of the
//! one it retried. `eval --resume` does the same on its own when the log directory already has a
//! log of the same run (task, `-T` arguments, model, samples, epochs): a run that succeeded is
//! not run again, one that did not is retried, so a shard that a batch scheduler runs a second
//! time (Kubernetes' `backoffLimitPerIndex`, Slurm's `--requeue`) neither redoes nor duplicates
//! its samples. Progress is a bar on a terminal and plain lines otherwise (a batch job's
//! output file: every 5 % of the samples, and at least every 30 s while samples finish). The
//! exit code says how it went ([`Exit`]).
//!
//! ```no_run
//! use std::sync::Arc;
//! use actuator_eval::cli::{self, TaskArgs, Tasks};
//! use actuator_eval::{Dataset, Sample, Task, chain};
//!
//! fn greeting(args: &TaskArgs) -> Result<Task, cli::BoxError> {
//!     let n: usize = args.parse("samples")?.unwrap_or(3);
//!     let dataset = Dataset::new((0..n).map(|i| Sample::new(format!("Say hello {i}"), "hello")));
//!     // A real task would make its solver on `args.model()`.
//!     Ok(Task::new("greeting", dataset, Arc::new(chain(Vec::new()))))
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     cli::main(Tasks::new("my-evals").task("greeting", "Says hello", greeting))
//! }
//! ```

mod command;
mod error;
mod logs;
mod output;
mod resume;
mod run;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::str::FromStr;
use std::sync::Arc;

pub use error::{BoxError, CliError, Exit};

use crate::task::Task;

/// Makes a task from its arguments.
pub type MakeTask = Arc<dyn Fn(&TaskArgs) -> Result<Task, BoxError> + Send + Sync>;

/// The tasks a program registers for its command line, by name.
///
/// ```
/// use std::sync::Arc;
/// use actuator_eval::cli::Tasks;
/// use actuator_eval::{Dataset, Task, chain};
/// let tasks = Tasks::new("my-evals")
///     .task("empty", "Nothing to do", |_| Ok(Task::new("empty", Dataset::new([]), Arc::new(chain(Vec::new())))));
/// assert_eq!(tasks.names().collect::<Vec<_>>(), ["empty"]);
/// ```
#[derive(Clone)]
pub struct Tasks {
    program: String,
    about: Option<String>,
    tasks: Vec<(String, String, MakeTask)>,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("program", &self.program)
            .field("tasks", &self.names().collect::<Vec<_>>())
            .finish()
    }
}

impl Tasks {
    /// No tasks yet; `program` is the name the help shows.
    pub fn new(program: impl Into<String>) -> Self {
        Tasks {
            program: program.into(),
            about: None,
            tasks: Vec::new(),
        }
    }

    /// What the program is, for the help.
    #[must_use]
    pub fn about(mut self, about: impl Into<String>) -> Self {
        self.about = Some(about.into());
        self
    }

    /// Registers the task `name`, made by `make` from the command line's arguments. The
    /// task's own name (its log's `task`) should be `name`, so that `retry` finds it from a
    /// log; a registration under a name already taken replaces it.
    #[must_use]
    pub fn task(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        make: impl Fn(&TaskArgs) -> Result<Task, BoxError> + Send + Sync + 'static,
    ) -> Self {
        let name = name.into();
        self.tasks.retain(|(n, _, _)| *n != name);
        self.tasks.push((name, description.into(), Arc::new(make)));
        self
    }

    /// The registered names, in registration order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tasks.iter().map(|(n, _, _)| n.as_str())
    }

    fn find(&self, name: &str) -> Result<&MakeTask, CliError> {
        self.tasks
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, _, make)| make)
            .ok_or_else(|| CliError::UnknownTask {
                name: name.to_owned(),
                known: self.names().collect::<Vec<_>>().join(", "),
            })
    }
}

/// What a task is made from: the `--model` and the `-T KEY=VALUE` arguments of the command
/// line (or, for `retry`, of the log).
///
/// ```
/// use actuator_eval::cli::TaskArgs;
/// let args = TaskArgs::new(Some("openai/gpt-4.1-mini".into()), [("samples", "5")]);
/// assert_eq!(args.model(), Some("openai/gpt-4.1-mini"));
/// assert_eq!(args.parse::<u32>("samples").unwrap(), Some(5));
/// assert!(args.parse::<u32>("missing").unwrap().is_none());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskArgs {
    model: Option<String>,
    args: BTreeMap<String, String>,
}

impl TaskArgs {
    /// Arguments with `model` and these `KEY=VALUE` pairs.
    pub fn new<K: Into<String>, V: Into<String>>(
        model: Option<String>,
        args: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        TaskArgs {
            model,
            args: args
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// The model the task should run on (`--model`), when one was named.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The value of `-T key=…`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.args.get(key).map(String::as_str)
    }

    /// Every argument.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.args.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The value of `-T key=…` parsed as `T`; `None` when it was not given, an error naming
    /// the key, the value and what was expected when it does not parse.
    pub fn parse<T>(&self, key: &str) -> Result<Option<T>, BoxError>
    where
        T: FromStr,
        T::Err: std::fmt::Display,
    {
        let Some(value) = self.get(key) else {
            return Ok(None);
        };
        value.parse().map(Some).map_err(|e: T::Err| {
            format!(
                "-T {key}={value}: {e} (expected {})",
                std::any::type_name::<T>()
            )
            .into()
        })
    }
}

/// Runs the command line of the process with `tasks`, on a runtime of its own, and returns
/// its exit code ([`Exit`]); errors are printed on stderr with their causes.
///
/// ```no_run
/// # use actuator_eval::cli::{self, Tasks};
/// fn main() -> std::process::ExitCode {
///     cli::main(Tasks::new("my-evals"))
/// }
/// ```
pub fn main(tasks: Tasks) -> std::process::ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            report(&CliError::Io {
                path: "tokio runtime".into(),
                source: e,
            });
            return Exit::Failed.into();
        }
    };
    runtime.block_on(run(&tasks, std::env::args_os())).into()
}

/// Runs one command line (`args`, the program's name first) with `tasks`: what [`main`]
/// does, inside a runtime the caller has. Errors are printed on stderr; `--help` prints the
/// help on stdout and succeeds.
pub async fn run<I, T>(tasks: &Tasks, args: I) -> Exit
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    match run::dispatch(tasks, args).await {
        Ok(exit) => exit,
        Err(e) => {
            report(&e);
            e.exit()
        }
    }
}

#[allow(clippy::print_stderr)] // a command line's errors are for the person who ran it
fn report(e: &CliError) {
    if let CliError::Usage(text) = e {
        eprint!("{text}");
        return;
    }
    eprintln!("error: {e}");
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        eprintln!("  caused by: {cause}");
        source = cause.source();
    }
}
