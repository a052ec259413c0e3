//! `list`, `eval` and `retry`: the verbs that make tasks.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::ArgMatches;
use serde_json::{Map, Value};

use super::command::command;
use super::error::{CliError, Exit};
use super::output::print;
use super::resume::previous_run;
use super::{TaskArgs, Tasks, logs};
use crate::log::LogFormat;
use crate::log::read::read_log_header;
use crate::log::schema::EvalLog;
use crate::options::{EvalOptions, FailOnError};
use crate::run::EvalRun;
use crate::sample::SampleId;
use crate::task::Task;

/// The model name a log records when no model was called.
const NO_MODEL: &str = "none/none";

pub(super) async fn dispatch<I, T>(tasks: &Tasks, args: I) -> Result<Exit, CliError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let matches = match command(&tasks.program, tasks.about.as_deref()).try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) if !e.use_stderr() => {
            // --help and --version: printed on stdout, a success.
            print(&e.render().to_string());
            return Ok(Exit::Success);
        }
        Err(e) => return Err(CliError::Usage(e.render().to_string())),
    };
    match matches.subcommand() {
        Some(("list", _)) => {
            let width = tasks.names().map(str::len).max().unwrap_or(0);
            let mut out = String::new();
            for (name, description, _) in &tasks.tasks {
                out.push_str(&format!("{name:width$}  {description}\n"));
            }
            print(&out);
            Ok(Exit::Success)
        }
        Some(("eval", m)) => eval(tasks, m).await,
        Some(("retry", m)) => retry(tasks, m).await,
        Some(("merge", m)) => logs::merge(m),
        Some(("log", m)) => match m.subcommand() {
            Some(("dump", m)) => logs::dump(m),
            _ => Err(CliError::Usage("log: name a subcommand (dump)\n".into())),
        },
        _ => Err(CliError::Usage(
            "name a command: list, eval, retry, merge, log\n".into(),
        )),
    }
}

fn string<'a>(m: &'a ArgMatches, id: &str) -> Option<&'a str> {
    m.get_one::<String>(id).map(String::as_str)
}

async fn eval(tasks: &Tasks, m: &ArgMatches) -> Result<Exit, CliError> {
    let name = string(m, "task").unwrap_or_default();
    let make = tasks.find(name)?;
    let mut pairs = Vec::new();
    for pair in m.get_many::<String>("task-arg").into_iter().flatten() {
        let Some((k, v)) = pair.split_once('=') else {
            return Err(bad("-T", pair, "expected KEY=VALUE"));
        };
        pairs.push((k.trim().to_owned(), v.to_owned()));
    }
    let args = TaskArgs::new(string(m, "model").map(str::to_owned), pairs);
    let mut task = make_task(make, name, &args)?;
    if let Some(sandbox) = string(m, "sandbox") {
        task = with_sandbox(task, sandbox)?;
    }
    // Ids are given before anything is cut, so that every part keeps its whole-dataset ids.
    task.dataset = task.dataset.shard(0, 1);
    if let Some(limit) = string(m, "limit") {
        let (start, end) = parse_limit(limit)?;
        let end = end.min(task.dataset.samples.len());
        task.dataset.samples = task
            .dataset
            .samples
            .get(start..end)
            .map(<[_]>::to_vec)
            .unwrap_or_default();
    }
    if let Some(shard) = string(m, "shard") {
        let (index, count) = parse_shard(shard)?;
        task.dataset = task.dataset.shard(index, count);
    }
    if let Some(epochs) = m.get_one::<u32>("epochs") {
        task.epochs = *epochs;
    }
    let mut options = run_options(m)?.log_dir(string(m, "log-dir").unwrap_or("logs"));
    if let Some(model) = args.model() {
        options = options.model(model);
    }
    let recorded: Map<String, Value> = args
        .iter()
        .map(|(k, v)| (k.to_owned(), Value::String(v.to_owned())))
        .collect();
    if m.get_flag("resume") {
        let dir = options.log_dir.clone().unwrap_or_default();
        if let Some((path, header)) = previous_run(&dir, &task, &recorded, args.model())? {
            if header.status == "success" {
                print(&format!(
                    "eval '{}' already succeeded: {} (nothing to run)\n",
                    task.name,
                    path.display()
                ));
                return Ok(Exit::Success);
            }
            print(&format!(
                "eval '{}' resumes {} (ended '{}'): its finished samples are kept\n",
                task.name,
                path.display(),
                header.status
            ));
            let run = crate::retry::eval_retry(&task, &path, options.task_args(recorded)).await?;
            return Ok(finished(&run));
        }
    }
    let run = crate::run::eval(&task, options.task_args(recorded)).await?;
    Ok(finished(&run))
}

async fn retry(tasks: &Tasks, m: &ArgMatches) -> Result<Exit, CliError> {
    let path = PathBuf::from(string(m, "log").unwrap_or_default());
    let header = read_log_header(&path)?;
    let spec = &header.eval;
    let make = tasks.find(&spec.task)?;
    let model = (spec.model != NO_MODEL).then(|| spec.model.clone());
    let args = TaskArgs::new(
        model.clone(),
        spec.task_args.iter().map(|(k, v)| {
            let v = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), v)
        }),
    );
    let mut task = make_task(make, &spec.task, &args)?;
    // A sandbox the log names but the task lacks came from `--sandbox`: given again.
    if task.sandbox.is_none()
        && let Some(sandbox) = &spec.sandbox
    {
        let flag = match &sandbox.config {
            Some(config) => format!("{}:{config}", sandbox.kind),
            None => sandbox.kind.clone(),
        };
        task = with_sandbox(task, &flag)?;
    }
    // The same samples (a shard, a limit) and epochs as the run retried.
    let ids: HashSet<&SampleId> = spec.dataset.sample_ids.iter().collect();
    task.dataset = task.dataset.shard(0, 1);
    task.dataset
        .samples
        .retain(|s| s.id.as_ref().is_some_and(|id| ids.contains(id)));
    if let Some(epochs) = spec.config.get("epochs").and_then(Value::as_u64) {
        task.epochs = u32::try_from(epochs).unwrap_or(u32::MAX).max(1);
    }
    let mut options = retry_defaults(&path, &header, run_options(m)?, m);
    if let Some(model) = model {
        options = options.model(model);
    }
    if let Some(dir) = string(m, "log-dir") {
        options = options.log_dir(dir);
    }
    let run =
        crate::retry::eval_retry(&task, &path, options.task_args(spec.task_args.clone())).await?;
    Ok(finished(&run))
}

/// What a retry takes from the log's configuration when the command line does not say.
fn retry_defaults(
    path: &Path,
    header: &EvalLog,
    mut options: EvalOptions,
    m: &ArgMatches,
) -> EvalOptions {
    let config = &header.eval.config;
    if m.get_one::<u64>("max-samples").is_none()
        && let Some(n) = config.get("max_samples").and_then(Value::as_u64)
    {
        options = options.max_samples(usize::try_from(n).unwrap_or(usize::MAX).max(1));
    }
    if m.get_one::<u32>("retry-on-error").is_none()
        && let Some(n) = config.get("retry_on_error").and_then(Value::as_u64)
    {
        options = options.retry_on_error(u32::try_from(n).unwrap_or(u32::MAX));
    }
    // A `.json` log's retry is written as `.json` too.
    if string(m, "log-format").is_none() && path.extension().is_some_and(|e| e == "json") {
        options = options.log_format(LogFormat::Json);
    }
    options
}

fn run_options(m: &ArgMatches) -> Result<EvalOptions, CliError> {
    let mut options = EvalOptions::new().progress(true).ctrl_c(true);
    if let Some(n) = m.get_one::<u64>("max-samples") {
        options = options.max_samples(usize::try_from(*n).unwrap_or(usize::MAX));
    }
    if let Some(n) = m.get_one::<u32>("retry-on-error") {
        options = options.retry_on_error(*n);
    }
    if m.get_flag("no-fail-on-error") {
        options = options.fail_on_error(FailOnError::Never);
    } else if let Some(v) = string(m, "fail-on-error") {
        options = options.fail_on_error(parse_fail_on_error(v)?);
    }
    if string(m, "log-format") == Some("json") {
        options = options.log_format(LogFormat::Json);
    }
    Ok(options)
}

fn make_task(make: &super::MakeTask, name: &str, args: &TaskArgs) -> Result<Task, CliError> {
    // A constructor is user code: a panic in it is reported ("its constructor panicked: …"),
    // not propagated.
    let source: super::BoxError =
        match crate::contain::contain_sync("its constructor", || make(args)) {
            Ok(Ok(task)) => return Ok(task),
            Ok(Err(source)) => source,
            Err(panicked) => panicked.message.into(),
        };
    Err(CliError::Task {
        name: name.to_owned(),
        source,
    })
}

/// The run's status as an exit code, its summary printed.
fn finished(run: &EvalRun) -> Exit {
    // The summary names the log file.
    print(&format!("{run}\n"));
    Exit::of_status(&run.log.status)
}

fn bad(flag: &'static str, value: &str, reason: impl Into<String>) -> CliError {
    CliError::BadValue {
        flag,
        value: value.to_owned(),
        reason: reason.into(),
    }
}

/// `N` (the first N samples) or `START,END` (from 1, inclusive), as a slice range.
pub(super) fn parse_limit(value: &str) -> Result<(usize, usize), CliError> {
    let number = |s: &str| {
        s.trim().parse::<usize>().map_err(|_| {
            bad(
                "--limit",
                value,
                "expected N or START,END (positive integers)",
            )
        })
    };
    match value.split_once(',') {
        None => Ok((0, number(value)?)),
        Some((start, end)) => {
            let (start, end) = (number(start)?, number(end)?);
            if start == 0 || end < start {
                return Err(bad(
                    "--limit",
                    value,
                    "START counts from 1 and END is not before it",
                ));
            }
            Ok((start - 1, end))
        }
    }
}

/// `I/N`: shard I of N, from 0.
pub(super) fn parse_shard(value: &str) -> Result<(usize, usize), CliError> {
    let parsed = value.split_once('/').and_then(|(i, n)| {
        Some((
            i.trim().parse::<usize>().ok()?,
            n.trim().parse::<usize>().ok()?,
        ))
    });
    match parsed {
        Some((index, count)) if count > 0 && index < count => Ok((index, count)),
        _ => Err(bad(
            "--shard",
            value,
            "expected I/N with 0 <= I < N (a Slurm array's $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)",
        )),
    }
}

fn parse_fail_on_error(value: &str) -> Result<FailOnError, CliError> {
    if let Ok(n) = value.parse::<usize>() {
        if n >= 1 {
            return Ok(if n == 1 {
                FailOnError::Any
            } else {
                FailOnError::Count(n)
            });
        }
    } else if let Ok(f) = value.parse::<f64>()
        && f > 0.0
        && f < 1.0
    {
        return Ok(FailOnError::Fraction(f));
    }
    Err(bad(
        "--fail-on-error",
        value,
        "expected a count of samples (1 or more) or a proportion between 0 and 1",
    ))
}

/// The task with `flag`'s sandbox (`local`, `docker`, `docker:CONFIG`) in place of its own.
fn with_sandbox(task: Task, flag: &str) -> Result<Task, CliError> {
    let (kind, config) = match flag.split_once(':') {
        Some((kind, config)) => (kind, Some(config)),
        None => (flag, None),
    };
    match (kind, config) {
        ("local", None) => {
            let mut task = task.sandbox(|| {
                actuator_sandbox::LocalSandbox::new().map(actuator_sandbox::SandboxHandle::new)
            });
            task.sandbox_spec = Some(crate::log::SandboxSpec::new("local", None));
            Ok(task)
        }
        #[cfg(feature = "docker")]
        ("docker", config) => {
            use actuator_sandbox::docker::ComposeConfig;
            let compose = match config {
                None => Ok(ComposeConfig::generic()),
                Some(path) if Path::new(path).is_dir() => ComposeConfig::from_dir(path),
                Some(path) if path.ends_with("Dockerfile") => ComposeConfig::from_dockerfile(path),
                Some(path) => ComposeConfig::from_file(path),
            };
            let compose = compose.map_err(|e| bad("--sandbox", flag, e.to_string()))?;
            Ok(task.docker(compose))
        }
        #[cfg(not(feature = "docker"))]
        ("docker", _) => Err(bad(
            "--sandbox",
            flag,
            "this program was built without Docker sandboxes (the `docker` feature)",
        )),
        _ => Err(bad(
            "--sandbox",
            flag,
            "expected local, docker or docker:CONFIG",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_and_shards_parse_as_the_help_says() {
        assert_eq!(parse_limit("10").unwrap(), (0, 10));
        assert_eq!(parse_limit("3,5").unwrap(), (2, 5));
        assert!(parse_limit("0,5").is_err());
        assert!(parse_limit("5,3").is_err());
        assert!(parse_limit("ten").is_err());
        assert_eq!(parse_shard("2/4").unwrap(), (2, 4));
        for bad in ["4/4", "1/0", "1", "a/b", "-1/4"] {
            let e = parse_shard(bad).unwrap_err().to_string();
            assert!(e.contains("expected I/N"), "{bad}: {e}");
        }
        assert_eq!(parse_fail_on_error("1").unwrap(), FailOnError::Any);
        assert_eq!(parse_fail_on_error("3").unwrap(), FailOnError::Count(3));
        assert_eq!(
            parse_fail_on_error("0.2").unwrap(),
            FailOnError::Fraction(0.2)
        );
        assert!(parse_fail_on_error("0").is_err());
        assert!(parse_fail_on_error("1.5").is_err());
    }
}
