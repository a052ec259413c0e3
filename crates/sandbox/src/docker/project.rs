//! [`ComposeProject`]: one compose project per sample, brought up with `docker compose up
//! --wait` and always taken down with its containers, networks, volumes and built images.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::alive::Alive;
use super::cli::{self, command_line};
use super::name::project_name;
use super::options::{ComposeOptions, QUERY_TIMEOUT};
use super::ps::{ServiceContainer, parse_ps};
use super::{ComposeConfig, DockerError};

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
        if let Some(yaml) = options.override_yaml()? {
            let file = write_file("override.yaml", &yaml)?;
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
