//! [`ComposeProject`]: one compose project per sample, brought up with `docker compose up
//! --wait` and always taken down with its containers, networks, volumes and built images.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::alive::Alive;
use super::cli::{self, command_line};
use super::{ComposeConfig, DockerError};

/// The pattern every project name this module makes matches (the reference's
/// `inspect-{task}-i{id}` with this crate's prefix); [`cleanup_orphans`](super::cleanup_orphans)
/// takes down exactly the projects that match it.
pub const PROJECT_NAME_PATTERN: &str = r"^actuator-[a-z0-9\-_]*-i[a-z0-9]{6,}$";

static PROJECT_NAME: LazyLock<Option<regex::Regex>> =
    LazyLock::new(|| regex::Regex::new(PROJECT_NAME_PATTERN).ok());

/// Whether `name` is a project name this module makes ([`PROJECT_NAME_PATTERN`]).
///
/// ```
/// use actuator_sandbox::docker::is_project_name;
/// assert!(is_project_name("actuator-my-task-iab12cd"));
/// assert!(!is_project_name("inspect-my-task-iab12cd"));
/// assert!(!is_project_name("actuator-my-task"));
/// ```
pub fn is_project_name(name: &str) -> bool {
    PROJECT_NAME.as_ref().is_some_and(|re| re.is_match(name))
}

/// A new project name for a sample of `task`: `actuator-{slug}-i{6 random [a-z0-9]}`, where
/// the slug is the task name lowercased, with anything but `[a-z0-9-_]` turned into `-`, runs
/// of `-` folded, cut to 12 characters, without trailing `_` (the reference's rule, which
/// keeps the name within Docker's constraints).
///
/// ```
/// use actuator_sandbox::docker::{is_project_name, project_name};
/// let name = project_name("My Task: Hard!");
/// assert!(name.starts_with("actuator-my-task-hard-i"), "{name}");
/// assert!(is_project_name(&name));
/// assert_ne!(project_name("t"), project_name("t"));
/// ```
pub fn project_name(task: &str) -> String {
    let mut slug = String::new();
    for c in task.to_lowercase().chars() {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_' {
            c
        } else {
            '-'
        };
        if !(c == '-' && slug.ends_with('-')) {
            slug.push(c);
        }
    }
    if slug.is_empty() {
        slug.push_str("task");
    }
    let slug: String = slug.chars().take(12).collect();
    let slug = slug.trim_end_matches('_');
    let id: String = (0..6)
        .map(|_| fastrand::digit(36).to_ascii_lowercase())
        .collect();
    format!("actuator-{slug}-i{id}")
}

/// A host directory bind-mounted into a service, through a second compose file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ExtraVolume {
    service: String,
    host: PathBuf,
    container: String,
    read_only: bool,
}

/// How [`ComposeProject::up`] runs a project.
///
/// ```
/// use std::time::Duration;
/// use actuator_sandbox::docker::ComposeOptions;
/// let options = ComposeOptions::new("my_task")
///     .up_timeout(Duration::from_secs(60))
///     .extra_volume("default", "/tmp/control", "/run/actuator", true);
/// assert_eq!(options.task(), "my_task");
/// ```
#[derive(Debug, Clone)]
pub struct ComposeOptions {
    task: String,
    up_timeout: Duration,
    down_timeout: Duration,
    extra_volumes: Vec<ExtraVolume>,
}

/// How long `up` may take by default (build, start, health checks): 120 s.
pub const DEFAULT_UP_TIMEOUT: Duration = Duration::from_secs(120);
/// How long `down` may take by default: 60 s.
pub const DEFAULT_DOWN_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the quick queries (`ps`, `ls`) may take: 30 s.
pub(crate) const QUERY_TIMEOUT: Duration = Duration::from_secs(30);

impl ComposeOptions {
    /// Options for a sample of `task` (the task's name goes into the project name).
    pub fn new(task: impl Into<String>) -> Self {
        ComposeOptions {
            task: task.into(),
            up_timeout: DEFAULT_UP_TIMEOUT,
            down_timeout: DEFAULT_DOWN_TIMEOUT,
            extra_volumes: Vec::new(),
        }
    }

    /// The task name.
    pub fn task(&self) -> &str {
        &self.task
    }

    /// How long `up` may take ([`DEFAULT_UP_TIMEOUT`]); past it the CLI is killed and the
    /// project taken down.
    pub fn up_timeout(mut self, timeout: Duration) -> Self {
        self.up_timeout = timeout;
        self
    }

    /// How long `down` may take ([`DEFAULT_DOWN_TIMEOUT`]).
    pub fn down_timeout(mut self, timeout: Duration) -> Self {
        self.down_timeout = timeout;
        self
    }

    /// Bind-mounts the host directory `host` at `container` in `service`, read-only or not,
    /// through a second compose file (`-f`) the project writes beside its own; the user's
    /// file is never changed.
    pub fn extra_volume(
        mut self,
        service: impl Into<String>,
        host: impl Into<PathBuf>,
        container: impl Into<String>,
        read_only: bool,
    ) -> Self {
        self.extra_volumes.push(ExtraVolume {
            service: service.into(),
            host: host.into(),
            container: container.into(),
            read_only,
        });
        self
    }
}

/// One service's container in a running project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceContainer {
    /// The compose service.
    pub service: String,
    /// The container's id as `docker compose ps` prints it (possibly shortened; `docker`
    /// commands accept it).
    pub id: String,
    /// The container's name (`{project}-{service}-1`).
    pub name: String,
    /// Its state (`running`, `exited`, …).
    pub state: String,
    /// Its health (`healthy`, `unhealthy`, `starting`), empty without a health check.
    pub health: String,
}

/// A compose project: one sample's containers, networks and volumes, taken down by
/// [`down`](ComposeProject::down) or, failing that, when dropped.
///
/// Dropping a project that was not taken down starts `docker compose down` in the
/// background rather than blocking the dropping thread (which may be an async runtime's):
/// a small `sh` runs it and then removes the project's generated files, in its own process
/// group (a Ctrl-C of the caller's terminal does not stop it), reaped by a thread; it goes
/// on even if the calling process exits first. [`cleanup_orphans`](super::cleanup_orphans)
/// takes down what a killed process left.
///
/// ```no_run
/// use actuator_sandbox::docker::{ComposeConfig, ComposeOptions, ComposeProject};
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), actuator_sandbox::docker::DockerError> {
/// let project = ComposeProject::up(&ComposeConfig::generic(), ComposeOptions::new("demo")).await?;
/// let default = project.container(project.default_service()).unwrap();
/// println!("exec into {}", default.name);
/// project.down().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ComposeProject {
    name: String,
    /// The global options of every compose command: `-p`, `-f`…, `--project-directory`.
    base_args: Vec<OsString>,
    default_service: String,
    containers: Vec<ServiceContainer>,
    down_timeout: Duration,
    /// The generated compose files; kept until the project is down.
    files: Option<tempfile::TempDir>,
    down: bool,
    /// Held while this process owns the project, so that `cleanup_orphans` elsewhere leaves it.
    alive: Option<Alive>,
}

impl ComposeProject {
    /// Brings up a new project for `config` (`docker compose up --detach --wait`), waiting at
    /// most the options' `up_timeout`, and finds each service's container. On any failure
    /// the project is taken down before the error returns.
    pub async fn up(config: &ComposeConfig, options: ComposeOptions) -> Result<Self, DockerError> {
        let name = project_name(&options.task);
        // The generated files' directory, made only when there is something to write (a
        // killed process leaves it behind; `cleanup_orphans` finds it through compose).
        let mut files: Option<tempfile::TempDir> = None;
        let mut write_file = |file: &str, text: &str| -> Result<PathBuf, DockerError> {
            let dir = match &mut files {
                Some(dir) => dir,
                None => files.insert(
                    tempfile::Builder::new()
                        .prefix(&format!("{name}-"))
                        .tempdir()?,
                ),
            };
            let path = dir.path().join(file);
            std::fs::write(&path, text)?;
            Ok(path)
        };
        let mut base_args: Vec<OsString> = vec!["compose".into(), "-p".into(), name.clone().into()];
        let project_dir = match (config.file(), config.generated_yaml()) {
            (Some(file), _) => {
                base_args.extend(["-f".into(), file.as_os_str().to_owned()]);
                config.project_dir().map(Path::to_path_buf)
            }
            (None, Some(yaml)) => {
                let file = write_file("compose.yaml", yaml)?;
                let own_dir = file.parent().map(Path::to_path_buf);
                base_args.extend(["-f".into(), file.into_os_string()]);
                config.project_dir().map(Path::to_path_buf).or(own_dir)
            }
            (None, None) => None,
        };
        if !options.extra_volumes.is_empty() {
            let file = write_file("override.yaml", &override_yaml(&options.extra_volumes)?)?;
            base_args.extend(["-f".into(), file.into_os_string()]);
        }
        if let Some(dir) = project_dir {
            base_args.extend(["--project-directory".into(), dir.into_os_string()]);
        }
        // Marked before it exists, so that no cleanup can take it for an orphan while it
        // comes up.
        let alive = match Alive::mark(&name) {
            Ok(alive) => Some(alive),
            Err(e) => {
                tracing::warn!(project = %name, error = %e,
                    "cannot mark the project as owned: cleanup_orphans elsewhere would take it down");
                None
            }
        };
        // From here on, dropping `project` (an error below, or a cancelled future) takes it
        // down.
        let mut project = ComposeProject {
            name,
            base_args,
            default_service: config.default_service().to_owned(),
            containers: Vec::new(),
            down_timeout: options.down_timeout,
            files,
            down: false,
            alive,
        };
        match project.start(options.up_timeout).await {
            Ok(()) => Ok(project),
            // Without a CLI, plugin or daemon nothing was created, and nothing can go down.
            Err(
                e @ (DockerError::DockerMissing { .. }
                | DockerError::ComposeMissing { .. }
                | DockerError::DaemonUnreachable { .. }),
            ) => {
                project.down = true;
                project.files.take();
                Err(e)
            }
            Err(e) => {
                // Best effort: if this fails too, Drop tries again.
                let _ = project.down_now().await;
                Err(e)
            }
        }
    }

    async fn start(&mut self, timeout: Duration) -> Result<(), DockerError> {
        let deadline = std::time::Instant::now() + timeout;
        let mut built_again = false;
        loop {
            let timeout = deadline.saturating_duration_since(std::time::Instant::now());
            // Compose's own wait is longer than ours, so the deadline is always this one (the
            // CLI killed, a Timeout error), as in the reference.
            let mut up = self.args(["up", "--detach", "--wait", "--wait-timeout"]);
            up.push((timeout.as_secs() + 2).to_string().into());
            let out = cli::run(&up, timeout).await?;
            // As in the reference, `up --wait` failing is not yet an error: it also fails when
            // a service exits successfully. What counts is that the default service runs.
            self.containers = self.ps().await?;
            let state = match self.container(&self.default_service) {
                None => "missing".to_owned(),
                // A health check that has not passed (`starting`, `unhealthy`) is not ready.
                Some(c) if c.state == "running" && !matches!(c.health.as_str(), "" | "healthy") => {
                    format!("running, {}", c.health)
                }
                Some(c) => c.state.clone(),
            };
            if state == "running" {
                return Ok(());
            }
            // Projects built from the same files share the image the builder's cache gives
            // them: one taken down (`--rmi local`) while another tags it removes it under
            // the other's build. Built again, once, it is the other's own.
            let image_gone = [&out.stdout, &out.stderr]
                .iter()
                .any(|t| t.contains("failed to get digest") || t.contains("No such image"));
            if image_gone && !built_again && !timeout.is_zero() {
                built_again = true;
                continue;
            }
            if !out.success
                && let Some(e) = cli::diagnose().await
            {
                return Err(e);
            }
            let mut output = out.stderr;
            if !out.stdout.trim().is_empty() {
                output = format!("{}\n{output}", out.stdout.trim());
            }
            return Err(DockerError::NotRunning {
                project: self.name.clone(),
                service: self.default_service.clone(),
                state,
                output,
            });
        }
    }

    /// The project's name (`actuator-{task}-i{id}`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The default service's name.
    pub fn default_service(&self) -> &str {
        &self.default_service
    }

    /// Every service's container, as `docker compose ps` listed them after `up`.
    pub fn containers(&self) -> &[ServiceContainer] {
        &self.containers
    }

    /// The (first) container of `service`.
    pub fn container(&self, service: &str) -> Option<&ServiceContainer> {
        self.containers.iter().find(|c| c.service == service)
    }

    /// The arguments of `docker compose` for this project with `rest` appended, for a
    /// caller that runs other compose commands (`exec`, `cp`).
    ///
    /// ```no_run
    /// # async fn f(project: &actuator_sandbox::docker::ComposeProject) {
    /// let args = project.args(["exec", "-T", "default", "true"]);
    /// assert_eq!(args[0], "compose");
    /// # }
    /// ```
    pub fn args<I, S>(&self, rest: I) -> Vec<OsString>
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let mut args = self.base_args.clone();
        args.extend(rest.into_iter().map(Into::into));
        args
    }

    /// The containers as `docker compose ps --all --format json` lists them now.
    pub async fn ps(&self) -> Result<Vec<ServiceContainer>, DockerError> {
        let args = self.args(["ps", "--all", "--format", "json"]);
        let out = cli::run_ok(&args, QUERY_TIMEOUT).await?;
        parse_ps(&command_line(&args), &out.stdout, out.stdout_truncated)
    }

    /// Takes the project down: `docker compose down --volumes --remove-orphans --rmi local
    /// -t 1` (containers, networks, volumes, and images compose built for it), waiting at
    /// most the options' `down_timeout`. If it fails, dropping the project tries once more
    /// in the background.
    pub async fn down(mut self) -> Result<(), DockerError> {
        self.down_now().await
    }

    async fn down_now(&mut self) -> Result<(), DockerError> {
        let args = self.down_args();
        cli::run_ok(&args, self.down_timeout).await?;
        self.down = true;
        self.files.take();
        self.alive.take();
        Ok(())
    }

    fn down_args(&self) -> Vec<OsString> {
        self.args([
            "down",
            "--volumes",
            "--remove-orphans",
            "--rmi",
            "local",
            "-t",
            "1",
        ])
    }
}

impl Drop for ComposeProject {
    fn drop(&mut self) {
        if self.down {
            return;
        }
        use std::os::unix::process::CommandExt as _;
        // `sh` runs the down and then removes the generated files, so both happen even when
        // this process exits first; the directory is passed as an argument, never quoted
        // into the script.
        let dir = self.files.take().map(tempfile::TempDir::keep);
        let spawned = std::process::Command::new("sh")
            .arg("-c")
            .arg(r#"dir="$1"; shift; "$@"; status=$?; [ -z "$dir" ] || rm -rf -- "$dir"; exit $status"#)
            .arg("compose-down")
            .arg(dir.as_deref().map_or_else(Default::default, Path::as_os_str))
            .arg("docker")
            .args(self.down_args())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn();
        match spawned {
            Ok(mut child) => {
                let name = self.name.clone();
                // Reaps it. If the thread cannot start, the child still runs (and init reaps
                // it once this process exits).
                let _ = std::thread::Builder::new()
                    .name("compose-down".into())
                    .spawn(move || match child.wait() {
                        Ok(status) if status.success() => {}
                        Ok(status) => tracing::warn!(project = %name, %status,
                            "docker compose down of a dropped project failed; run cleanup_orphans"),
                        Err(e) => tracing::warn!(project = %name, error = %e,
                            "waiting for docker compose down failed"),
                    });
            }
            Err(e) => {
                tracing::warn!(project = %self.name, error = %e,
                    "could not start docker compose down for a dropped project; run cleanup_orphans");
                if let Some(dir) = dir {
                    let _ = std::fs::remove_dir_all(dir);
                }
            }
        }
    }
}

/// The second compose file that adds the bind mounts.
fn override_yaml(volumes: &[ExtraVolume]) -> Result<String, DockerError> {
    #[derive(Serialize)]
    struct Mount<'a> {
        #[serde(rename = "type")]
        kind: &'static str,
        source: &'a str,
        target: &'a str,
        read_only: bool,
    }
    #[derive(Serialize)]
    struct Service<'a> {
        volumes: Vec<Mount<'a>>,
    }
    #[derive(Serialize)]
    struct File<'a> {
        services: std::collections::BTreeMap<&'a str, Service<'a>>,
    }
    let mut file = File {
        services: std::collections::BTreeMap::new(),
    };
    for v in volumes {
        let source = v.host.to_str().ok_or_else(|| DockerError::NonUtf8Path {
            path: v.host.clone(),
        })?;
        file.services
            .entry(&v.service)
            .or_insert_with(|| Service {
                volumes: Vec::new(),
            })
            .volumes
            .push(Mount {
                kind: "bind",
                source,
                target: &v.container,
                read_only: v.read_only,
            });
    }
    serde_norway::to_string(&file)
        .map_err(|e| DockerError::Io(std::io::Error::other(e.to_string())))
}

/// One entry of `docker compose ps --format json`; fields compose may leave out default.
#[derive(Deserialize)]
struct PsEntry {
    #[serde(rename = "ID", default)]
    id: String,
    #[serde(rename = "Name", default)]
    name: String,
    #[serde(rename = "Service", default)]
    service: String,
    #[serde(rename = "State", default)]
    state: String,
    #[serde(rename = "Health", default)]
    health: String,
}

/// Parses `ps --format json`: one JSON array (Compose before 2.21) or one object per line.
pub(crate) fn parse_ps(
    command: &str,
    stdout: &str,
    truncated: bool,
) -> Result<Vec<ServiceContainer>, DockerError> {
    let (text, unexpected) = cli::json_output(command, stdout, truncated)?;
    let entries: Vec<PsEntry> = if text.starts_with('[') {
        serde_json::from_str(text).map_err(|e| unexpected(e.to_string()))?
    } else {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_str(l).map_err(|e| unexpected(e.to_string())))
            .collect::<Result<_, _>>()?
    };
    Ok(entries
        .into_iter()
        .map(|e| ServiceContainer {
            service: e.service,
            id: e.id,
            name: e.name,
            state: e.state,
            health: e.health,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn ps_output_in_either_shape() {
        let lines = r#"{"ID":"a1","Name":"p-default-1","Service":"default","State":"running","Publishers":[]}
{"ID":"b2","Name":"p-web-1","Service":"web","State":"exited"}
"#;
        let array = r#"[{"ID":"a1","Name":"p-default-1","Service":"default","State":"running"},{"ID":"b2","Name":"p-web-1","Service":"web","State":"exited"}]"#;
        let a = parse_ps("ps", lines, false).unwrap();
        let b = parse_ps("ps", array, false).unwrap();
        assert_eq!(a, b);
        assert_eq!(a[1].service, "web");
        assert_eq!(a[1].state, "exited");
        assert!(parse_ps("ps", "", false).unwrap().is_empty());
    }

    #[test]
    fn odd_ps_output_is_an_error_not_a_panic() {
        for odd in ["{", "[1,2]", "null\n", "{\"ID\": 5}", "\u{0}"] {
            let err = parse_ps("docker compose ps", odd, false).unwrap_err();
            assert!(
                matches!(err, DockerError::UnexpectedOutput { .. }),
                "{odd}: {err}"
            );
        }
        let err = parse_ps("ps", "[]", true).unwrap_err();
        assert!(err.to_string().contains("more than"), "{err}");
    }

    #[test]
    fn override_file_mounts_each_volume_in_its_service() {
        let yaml = override_yaml(&[
            ExtraVolume {
                service: "default".into(),
                host: "/tmp/ctl dir".into(),
                container: "/run/actuator".into(),
                read_only: true,
            },
            ExtraVolume {
                service: "default".into(),
                host: "/tmp/b".into(),
                container: "/b".into(),
                read_only: false,
            },
        ])
        .unwrap();
        insta::assert_snapshot!(yaml);
    }

    #[test]
    fn project_names_follow_the_pattern() {
        for task in ["", "___", "A/B:C", "x".repeat(100).as_str(), "тест", "a__"] {
            let name = project_name(task);
            assert!(is_project_name(&name), "{task:?} -> {name}");
        }
        assert!(project_name("a__").starts_with("actuator-a-i"));
        assert!(project_name("").starts_with("actuator-task-i"));
    }
}
