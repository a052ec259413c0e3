//! `merge` and `log dump`: the verbs that read logs.

use std::path::{Path, PathBuf};

use clap::ArgMatches;

use super::error::{CliError, Exit};
use super::output::print;
use crate::log::{LogFormat, merge_logs, read_eval_log};

/// Merges the shard logs named (files, or every log in a named directory) into `--out`.
pub(super) fn merge(m: &ArgMatches) -> Result<Exit, CliError> {
    let out = PathBuf::from(m.get_one::<String>("out").map_or("", String::as_str));
    let mut logs = Vec::new();
    for input in m.get_many::<String>("logs").into_iter().flatten() {
        let input = Path::new(input);
        if input.is_dir() {
            logs.extend(logs_in(input)?);
        } else {
            logs.push(input.to_owned());
        }
    }
    // A file name says where the merged log goes and its format; anything else is a directory.
    let format = match out.extension().and_then(|e| e.to_str()) {
        Some("eval") => Some(LogFormat::Eval),
        Some("json") => Some(LogFormat::Json),
        _ => None,
    };
    // Never merge the output into itself when it is written among the inputs (however each
    // path is spelled: `logs/all.eval`, `./logs/all.eval`).
    if format.is_some()
        && let Ok(out) = std::fs::canonicalize(&out)
    {
        logs.retain(|l| std::fs::canonicalize(l).map_or(true, |l| l != out));
    }
    let dir = match format {
        Some(_) => out.parent().map(Path::to_owned).unwrap_or_default(),
        None => out.clone(),
    };
    let dir = if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir
    };
    let merged = merge_logs(&logs, &dir, format.unwrap_or(LogFormat::Eval))?;
    let path = if format.is_some() {
        std::fs::rename(&merged.path, &out).map_err(|source| CliError::Io {
            path: out.clone(),
            source,
        })?;
        out
    } else {
        merged.path
    };
    let log = crate::log::read::read_log_header(&path)?;
    for old in &merged.superseded {
        print(&format!(
            "left out {}: a later retry of it was merged\n",
            old.display()
        ));
    }
    if log.status != "success" {
        let merged_logs: Vec<&PathBuf> = logs
            .iter()
            .filter(|l| !merged.superseded.contains(l))
            .collect();
        unfinished(&merged_logs)?;
    }
    print(&format!(
        "merged {} logs of task '{}' ({} samples, {}): {}\n",
        logs.len() - merged.superseded.len(),
        log.eval.task,
        merged.samples,
        log.status,
        path.display()
    ));
    Ok(Exit::of_status(&log.status))
}

/// Names, on stderr, each shard log that did not succeed and what to do about it.
#[allow(clippy::print_stderr)] // what the person who ran the merge has to do next
fn unfinished(logs: &[&PathBuf]) -> Result<(), CliError> {
    for path in logs {
        let header = crate::log::read::read_log_header(path)?;
        if header.status != "success" {
            eprintln!(
                "{}: the shard's evaluation ended '{}': run it again with `retry {}` (its \
                 finished samples are kept), then merge again",
                path.display(),
                header.status,
                path.display()
            );
        }
    }
    Ok(())
}

/// The logs in `dir` (`.eval` and `.json` files, not the `.samples.jsonl` spools), sorted.
pub(super) fn logs_in(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let io = |source| CliError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut logs = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        let is_log = path
            .extension()
            .is_some_and(|e| e == "eval" || (e == "json" && !is_spool_or_index(&path)));
        if is_log && path.is_file() {
            logs.push(path);
        }
    }
    logs.sort();
    Ok(logs)
}

/// Files beside logs that are not logs: the reference's `logs.json` index.
fn is_spool_or_index(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "logs.json")
}

/// Prints a log as JSON, every sample's events in full.
pub(super) fn dump(m: &ArgMatches) -> Result<Exit, CliError> {
    let path = PathBuf::from(m.get_one::<String>("log").map_or("", String::as_str));
    let log = read_eval_log(&path)?;
    let mut text = serde_json::to_string_pretty(&log).map_err(|e| {
        CliError::Log(crate::error::LogError::Format {
            path: path.clone(),
            reason: e.to_string(),
        })
    })?;
    text.push('\n');
    print(&text);
    Ok(Exit::Success)
}
