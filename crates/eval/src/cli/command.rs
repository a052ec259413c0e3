//! The command line's grammar (clap's builder: no derive macro to compile).

use clap::{Arg, ArgAction, Command, value_parser};

/// The verbs and their flags, named as the reference's `inspect` names them where it has them.
pub(crate) fn command(name: &str, about: Option<&str>) -> Command {
    Command::new(name.to_owned())
        .about(about.map_or_else(
            || "Runs the evaluation tasks this program registers.".to_owned(),
            str::to_owned,
        ))
        .subcommand_required(true)
        .arg_required_else_help(true)
        .after_help(
            "Exit codes: 0 the command succeeded; 1 the evaluation failed (sample errors over \
             the --fail-on-error threshold, or its log could not be written); 2 the command \
             could not start (a wrong flag, an unknown task, an unreadable log); 130 it was \
             cancelled (Ctrl-C).",
        )
        .subcommand(Command::new("list").about("Lists the tasks"))
        .subcommand(eval())
        .subcommand(retry())
        .subcommand(merge())
        .subcommand(
            Command::new("log")
                .about("Reads logs")
                .subcommand_required(true)
                .subcommand(
                    Command::new("dump")
                        .about("Prints a log (either format, finished or not) as JSON")
                        .arg(Arg::new("log").required(true).value_name("LOG")),
                ),
        )
}

fn eval() -> Command {
    Command::new("eval")
        .about("Runs a task, or one shard of it, and writes its log")
        .arg(Arg::new("task").required(true).value_name("TASK"))
        .arg(
            Arg::new("model")
                .long("model")
                .value_name("MODEL")
                .help("The model the task runs on (`provider/model`), given to the task"),
        )
        .arg(
            Arg::new("task-arg")
                .short('T')
                .long("task-arg")
                .value_name("KEY=VALUE")
                .action(ArgAction::Append)
                .help("An argument for the task (repeatable), recorded in the log"),
        )
        .arg(
            Arg::new("limit")
                .long("limit")
                .value_name("N|START,END")
                .help("Runs the first N samples, or samples START to END (from 1, inclusive)"),
        )
        .arg(
            Arg::new("shard")
                .long("shard")
                .value_name("I/N")
                .help("Runs shard I of N (from 0): every N-th sample from the I-th, after --limit"),
        )
        .arg(
            Arg::new("epochs")
                .long("epochs")
                .value_name("N")
                .value_parser(value_parser!(u32).range(1..))
                .help("How often each sample runs (default: the task's)"),
        )
        .arg(
            Arg::new("sandbox")
                .long("sandbox")
                .value_name("local|docker[:CONFIG]")
                .help("Gives each sample this sandbox instead of the task's own"),
        )
        .arg(
            Arg::new("resume")
                .long("resume")
                .action(ArgAction::SetTrue)
                .help(
                    "When --log-dir has a log of this same run (task, -T arguments, model, \
                     samples, epochs): nothing runs if it succeeded, else it is retried \
                     (for shards a batch scheduler may run twice)",
                ),
        )
        .args(run_flags())
}

fn retry() -> Command {
    Command::new("retry")
        .about(
            "Runs a failed, cancelled or crashed evaluation again from its log, keeping the \
             samples it finished",
        )
        .arg(Arg::new("log").required(true).value_name("LOG"))
        .args(run_flags())
}

/// What `eval` and `retry` share: where the log goes and how the run goes.
fn run_flags() -> [Arg; 6] {
    [
        Arg::new("log-dir")
            .long("log-dir")
            .value_name("DIR")
            .help("Where the log is written (eval: default ./logs; retry: beside LOG)"),
        Arg::new("log-format")
            .long("log-format")
            .value_name("eval|json")
            .value_parser(["eval", "json"])
            .help("The log's format (default eval)"),
        Arg::new("max-samples")
            .long("max-samples")
            .value_name("N")
            .value_parser(value_parser!(u64).range(1..))
            .help("Samples running at once (default 100)"),
        Arg::new("fail-on-error")
            .long("fail-on-error")
            .value_name("N|FRACTION")
            .help(
                "Fails the evaluation when this many samples (an integer) or this proportion \
                 of them (below 1) fail (default: the first)",
            ),
        Arg::new("no-fail-on-error")
            .long("no-fail-on-error")
            .action(ArgAction::SetTrue)
            .conflicts_with("fail-on-error")
            .help("Never fails the evaluation for sample errors (they stay on their samples)"),
        Arg::new("retry-on-error")
            .long("retry-on-error")
            .value_name("N")
            .value_parser(value_parser!(u32))
            .help("Runs a sample that errors again, up to N times"),
    ]
}

fn merge() -> Command {
    Command::new("merge")
        .about("Merges the logs of a task's shards into one log")
        .arg(
            Arg::new("logs")
                .required(true)
                .num_args(1..)
                .value_name("LOGS")
                .help("Shard logs, or directories of them (every .eval and .json log in each)"),
        )
        .arg(
            Arg::new("out")
                .long("out")
                .required(true)
                .value_name("PATH")
                .help("The merged log: a file (NAME.eval, NAME.json) or a directory"),
        )
}
