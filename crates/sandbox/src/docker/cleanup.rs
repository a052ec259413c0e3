//! [`cleanup_orphans`]: the reference's `inspect sandbox cleanup docker`, for the projects a
//! killed process could not take down.

use std::ffi::OsString;
use std::path::Path;

use serde::Deserialize;

use super::DockerError;
use super::cli::{self, command_line};
use super::name::is_project_name;
use super::options::{DEFAULT_DOWN_TIMEOUT, QUERY_TIMEOUT};

/// One entry of `docker compose ls --format json`.
#[derive(Deserialize)]
struct LsEntry {
    #[serde(rename = "Name", default)]
    name: String,
    #[serde(rename = "ConfigFiles", default)]
    config_files: Option<String>,
}

/// Takes down every compose project whose name matches
/// [`PROJECT_NAME_PATTERN`](super::PROJECT_NAME_PATTERN) and whose owner is gone, running or
/// not, with its volumes, networks and built images, and returns the names taken down.
///
/// A project's owner is the process that brought it up: while that process lives it holds a
/// lock on a file named after the project (in `$TMPDIR/actuator-compose-<uid>`), which the
/// kernel releases however the process ends. So projects left by a killed process go, and
/// those of evaluations still running on this machine (other shards, other users' runs
/// under the same account) stay, unlike the reference's cleanup command, which takes down
/// every project it finds. A project made by an older version, or by a process that could not
/// make its lock file (it says so in a warning), has no owner here and is taken down.
///
/// Every matching project is tried; if any fails, the first failure is returned after the
/// others were taken down.
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), actuator_sandbox::docker::DockerError> {
/// for name in actuator_sandbox::docker::cleanup_orphans().await? {
///     println!("removed {name}");
/// }
/// # Ok(()) }
/// ```
pub async fn cleanup_orphans() -> Result<Vec<String>, DockerError> {
    cleanup_where(|_| true).await
}

/// Takes down the one compose project named `name` (if it exists, is this module's and its
/// owner is gone), as [`cleanup_orphans`] would; returns whether it did.
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), actuator_sandbox::docker::DockerError> {
/// let removed = actuator_sandbox::docker::cleanup_project("actuator-my-task-iab12cd").await?;
/// # Ok(()) }
/// ```
pub async fn cleanup_project(name: &str) -> Result<bool, DockerError> {
    Ok(!cleanup_where(|n| n == name).await?.is_empty())
}

async fn cleanup_where(select: impl Fn(&str) -> bool) -> Result<Vec<String>, DockerError> {
    let ls: Vec<OsString> = ["compose", "ls", "--all", "--format", "json"]
        .into_iter()
        .map(OsString::from)
        .collect();
    let out = cli::run_ok(&ls, QUERY_TIMEOUT).await?;
    let projects = parse_ls(&command_line(&ls), &out.stdout, out.stdout_truncated)?;
    let mut removed = Vec::new();
    let mut first_error = None;
    for project in projects {
        if !is_project_name(&project.name) || !select(&project.name) {
            continue;
        }
        if super::alive::is_alive(&project.name) {
            tracing::info!(project = %project.name, "left up: the process that owns it is running");
            continue;
        }
        // One project that will not go down does not keep the others up.
        match down(&project).await {
            Ok(()) => removed.push(project.name),
            Err(e) => {
                tracing::warn!(project = %project.name, error = %e, "cleanup of a compose project failed");
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(removed),
    }
}

async fn down(project: &LsEntry) -> Result<(), DockerError> {
    let mut args: Vec<OsString> = vec!["compose".into(), "-p".into(), project.name.clone().into()];
    // With its compose files compose also removes the images it built and networks it
    // declared; without them (the files went with a temporary directory) it still removes
    // everything labelled with the project, and the built images go below.
    let files: Vec<&str> = project
        .config_files
        .as_deref()
        .unwrap_or("")
        .split(',')
        .filter(|f| !f.is_empty())
        .collect();
    let have_files = !files.is_empty() && files.iter().all(|f| Path::new(f).is_file());
    if have_files {
        for file in &files {
            args.extend(["-f".into(), (*file).into()]);
        }
    }
    args.extend(
        [
            "down",
            "--volumes",
            "--remove-orphans",
            "--rmi",
            "local",
            "-t",
            "1",
        ]
        .map(OsString::from),
    );
    cli::run_ok(&args, DEFAULT_DOWN_TIMEOUT).await?;
    if have_files {
        for file in files {
            remove_generated_files(&project.name, Path::new(file));
        }
    } else {
        remove_built_images(&project.name).await?;
    }
    Ok(())
}

/// Removes the directory of a project's generated compose files (`{tmp}/{project}-XXXXXX`,
/// see `ComposeProject::up`), which a killed process could not; a user's own compose file is
/// never in such a directory.
fn remove_generated_files(project: &str, file: &Path) {
    let Some(dir) = file.parent() else { return };
    let ours = dir.parent() == Some(std::env::temp_dir().as_path())
        && dir
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix(project))
            .is_some_and(|rest| rest.starts_with('-'));
    if ours && let Err(e) = std::fs::remove_dir_all(dir) {
        tracing::warn!(dir = %dir.display(), error = %e, "could not remove an orphaned project's files");
    }
}

/// Removes the images compose built for `project` (named `{project}-{service}`), as the
/// reference's cleanup does.
async fn remove_built_images(project: &str) -> Result<(), DockerError> {
    let list: Vec<OsString> = [
        "image".to_owned(),
        "ls".to_owned(),
        "--quiet".to_owned(),
        "--filter".to_owned(),
        format!("reference={project}-*"),
    ]
    .map(OsString::from)
    .into();
    let out = cli::run_ok(&list, QUERY_TIMEOUT).await?;
    let ids: Vec<&str> = out.stdout.split_whitespace().collect();
    if ids.is_empty() {
        return Ok(());
    }
    let mut rmi: Vec<OsString> = vec!["rmi".into()];
    rmi.extend(ids.into_iter().map(OsString::from));
    cli::run_ok(&rmi, DEFAULT_DOWN_TIMEOUT).await?;
    Ok(())
}

/// Parses `ls --format json` (one JSON array).
fn parse_ls(command: &str, stdout: &str, truncated: bool) -> Result<Vec<LsEntry>, DockerError> {
    let (text, unexpected) = cli::json_output(command, stdout, truncated)?;
    if text.is_empty() || text == "null" {
        return Ok(Vec::new());
    }
    serde_json::from_str(text).map_err(|e| unexpected(e.to_string()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn ls_output_and_odd_output() {
        let ls = parse_ls(
            "ls",
            r#"[{"Name":"actuator-t-iabcdef","Status":"running(1)","ConfigFiles":"/a.yaml,/b.yaml"},{"Name":"other"}]"#,
            false,
        )
        .unwrap();
        assert_eq!(ls.len(), 2);
        assert_eq!(ls[0].config_files.as_deref(), Some("/a.yaml,/b.yaml"));
        assert!(ls[1].config_files.is_none());
        assert!(parse_ls("ls", "", false).unwrap().is_empty());
        for odd in ["{", "{\"Name\":1}", "[{\"Name\":[]}]"] {
            assert!(matches!(
                parse_ls("ls", odd, false),
                Err(DockerError::UnexpectedOutput { .. })
            ));
        }
    }
}
