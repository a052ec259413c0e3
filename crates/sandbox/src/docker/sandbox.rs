//! [`DockerSandbox`]: a compose project per sandbox, its commands through a supervisor per
//! container and user.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use actuator_tool_core::BoxFuture;
use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore};

use super::container::ContainerExec;
use super::{ComposeConfig, ComposeOptions, ComposeProject};
use crate::shell;
use crate::{
    ExecOutput, ExecRequest, InteractiveProcess, Sandbox, SandboxConnection, SandboxError,
    SessionRequest,
};

/// The host's control directory, under the sandbox's own directory.
fn control_mount(root: &Path) -> PathBuf {
    root.join("ctl")
}

/// The control directory's path in the containers: the host's, so the supervisor's scripts
/// name the same files on both sides.
fn ctl_path(ctl: &Path) -> Result<String, SandboxError> {
    ctl.to_str().map(str::to_owned).ok_or_else(|| {
        SandboxError::unavailable(format!(
            "The sandbox's control directory {} is not UTF-8; set TMPDIR to a plain path.",
            ctl.display()
        ))
    })
}

/// A limit on the Docker sandboxes that exist at once, to share between the sandboxes of an
/// evaluation ([`DockerSandboxBuilder::limit`]): the reference's `max_sandboxes` default, twice
/// the machine's cores.
///
/// ```
/// let limit = actuator_sandbox::docker::max_sandboxes();
/// assert!(limit.available_permits() >= 2);
/// ```
pub fn max_sandboxes() -> Arc<Semaphore> {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    Arc::new(Semaphore::new(2 * cores))
}

/// Builds a [`DockerSandbox`].
#[derive(Debug, Clone)]
pub struct DockerSandboxBuilder {
    config: ComposeConfig,
    options: ComposeOptions,
    user: Option<String>,
    docker: PathBuf,
    limit: Option<Arc<Semaphore>>,
}

/// A Docker sandbox: a compose project (Inspect's compose files unchanged, a bare
/// `Dockerfile`, or Inspect's default image) brought up for it and taken down with it, its
/// default service's container running the tools' commands.
///
/// Each command costs what a [`LocalSandbox`](crate::LocalSandbox) command costs: one
/// supervisor per container and user is started with `docker exec` the first time, and
/// every command after goes through it (a script file and two FIFOs in a control directory
/// the host owns, bound read-only into the containers), not through a `docker exec` of its
/// own. Timeouts, output limits, process groups and their texts are `LocalSandbox`'s.
///
/// ```no_run
/// use actuator_sandbox::docker::{ComposeConfig, DockerSandbox};
/// use actuator_sandbox::{ExecRequest, Sandbox};
/// # async fn demo() -> Result<(), actuator_sandbox::SandboxError> {
/// let sandbox = DockerSandbox::builder(ComposeConfig::from_file("compose.yaml")?)
///     .build()
///     .await?;
/// let out = sandbox.exec(ExecRequest::new(["echo", "hi"])).await?;
/// assert_eq!(out.stdout, "hi\n");
/// sandbox.cleanup().await?; // the project goes down (dropping does it too)
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct DockerSandbox {
    service: String,
    workdir: String,
    execs: HashMap<String, Arc<ContainerExec>>,
    /// The project; `None` once cleaned up.
    project: Mutex<Option<ComposeProject>>,
    project_name: String,
    _permit: Option<OwnedSemaphorePermit>,
    // Last: the control directory outlives the supervisors and the project.
    _root: tempfile::TempDir,
}

impl DockerSandbox {
    /// A builder for a sandbox of `config`'s compose project.
    pub fn builder(config: ComposeConfig) -> DockerSandboxBuilder {
        DockerSandboxBuilder {
            config,
            options: ComposeOptions::new("sandbox"),
            user: None,
            docker: PathBuf::from("docker"),
            limit: None,
        }
    }

    /// The compose project's name (`actuator-…-i…`).
    pub fn project(&self) -> &str {
        &self.project_name
    }

    /// The default service's name.
    pub fn service(&self) -> &str {
        &self.service
    }

    /// Runs `request` in `service`'s container (a service other than the default one, as
    /// the reference's `sandbox("name")` does).
    ///
    /// # Errors
    ///
    /// As [`Sandbox::exec`], and [`SandboxError::Unavailable`] for a service the project
    /// does not have.
    pub async fn exec_in(
        &self,
        service: &str,
        request: ExecRequest,
    ) -> Result<ExecOutput, SandboxError> {
        let exec = self.execs.get(service).ok_or_else(|| {
            let mut known: Vec<&str> = self.execs.keys().map(String::as_str).collect();
            known.sort_unstable();
            SandboxError::unavailable(format!(
                "The sandbox has no service '{service}' (its services: {}).",
                known.join(", ")
            ))
        })?;
        let program = shell::program(&request);
        shell::exec_output(&program, exec.exec_raw(request).await?)
    }

    fn default_exec(&self) -> Result<&ContainerExec, SandboxError> {
        self.execs
            .get(&self.service)
            .map(Arc::as_ref)
            .ok_or_else(|| SandboxError::unavailable("The sandbox was cleaned up.".to_owned()))
    }
}

impl DockerSandboxBuilder {
    /// Runs commands as `user` by default (a name or uid the image knows), rather than the
    /// image's user.
    #[must_use]
    pub fn user(mut self, user: impl Into<String>) -> Self {
        self.user = Some(user.into());
        self
    }

    /// The compose options (the task whose name the project's starts with, time limits).
    #[must_use]
    pub fn options(mut self, options: ComposeOptions) -> Self {
        self.options = options;
        self
    }

    /// At most as many of these sandboxes at once as `limit` has permits (the reference's
    /// `max_sandboxes`): `build` waits for one, and the sandbox holds it until dropped.
    /// Share one [`max_sandboxes`](super::max_sandboxes) semaphore between the sandboxes of
    /// an evaluation.
    #[must_use]
    pub fn limit(mut self, limit: Arc<Semaphore>) -> Self {
        self.limit = Some(limit);
        self
    }

    /// The `docker` CLI to run (default: `docker` on `PATH`).
    #[must_use]
    pub fn docker(mut self, docker: impl Into<PathBuf>) -> Self {
        self.docker = docker.into();
        self
    }

    /// Brings the project up (`docker compose up --wait`) and connects to its containers.
    ///
    /// # Errors
    ///
    /// The daemon unreachable or the compose plugin missing (saying how to fix it), the
    /// project failing to come up (with what compose printed), a time limit passed.
    pub async fn build(self) -> Result<DockerSandbox, SandboxError> {
        let permit = match self.limit {
            Some(limit) => Some(limit.acquire_owned().await.map_err(|_| {
                SandboxError::unavailable("The sandbox limit was closed.".to_owned())
            })?),
            None => None,
        };
        let root = tempfile::Builder::new()
            .prefix("actuator-docker-")
            .tempdir()?;
        let ctl = control_mount(root.path());
        std::fs::create_dir(&ctl)?;
        // The containers' users traverse it to their own control directories in it.
        std::fs::set_permissions(&ctl, std::os::unix::fs::PermissionsExt::from_mode(0o711))?;
        // Bound read-only at the same path in every service's container.
        let mut options = self.options;
        for service in self.config.services() {
            options = options.extra_volume(service.clone(), ctl.clone(), ctl_path(&ctl)?, true);
        }
        let project = ComposeProject::up(&self.config, options).await?;
        let service = project.default_service().to_owned();
        let mut execs = HashMap::new();
        for container in project.containers() {
            let exec = ContainerExec::new(
                self.docker.clone(),
                container.id.clone(),
                ctl.clone(),
                root.path().to_owned(),
                self.user.clone(),
            )
            .await;
            match exec {
                Ok(exec) => {
                    execs.insert(container.service.clone(), Arc::new(exec));
                }
                Err(e) => {
                    let _ = project.down().await;
                    return Err(e);
                }
            }
        }
        let Some(workdir) = execs
            .get(&service)
            .map(|e| e.workdir().to_string_lossy().into_owned())
        else {
            let _ = project.down().await;
            return Err(SandboxError::unavailable(format!(
                "The compose project has no running container for its default service '{service}'."
            )));
        };
        // The default service's supervisor starts in the background: neither the set-up nor
        // the first tool call (usually a model call later) waits for all of it. A failure is
        // the first command's error, with the reason.
        if let Some(exec) = execs.get(&service) {
            let exec = Arc::clone(exec);
            tokio::spawn(async move {
                if let Err(e) = exec.warm().await {
                    tracing::debug!("the sandbox's supervisor did not start ahead: {e}");
                }
            });
        }
        Ok(DockerSandbox {
            service,
            workdir,
            execs,
            project_name: project.name().to_owned(),
            project: Mutex::new(Some(project)),
            _permit: permit,
            _root: root,
        })
    }
}

impl Sandbox for DockerSandbox {
    fn name(&self) -> &str {
        "docker"
    }

    fn workdir(&self) -> &str {
        &self.workdir
    }

    fn exec(&self, request: ExecRequest) -> BoxFuture<'_, Result<ExecOutput, SandboxError>> {
        Box::pin(async move {
            let program = shell::program(&request);
            shell::exec_output(&program, self.default_exec()?.exec_raw(request).await?)
        })
    }

    fn read_file<'a>(&'a self, path: &'a str) -> BoxFuture<'a, Result<Vec<u8>, SandboxError>> {
        Box::pin(async move {
            let ran = self
                .default_exec()?
                .exec_raw(shell::read_request(path))
                .await;
            shell::read_result(path, ran)
        })
    }

    fn write_file<'a>(
        &'a self,
        path: &'a str,
        contents: &'a [u8],
    ) -> BoxFuture<'a, Result<(), SandboxError>> {
        Box::pin(async move {
            let raw = self
                .default_exec()?
                .exec_raw(shell::write_request(path, contents))
                .await?;
            shell::write_result(path, raw)
        })
    }

    fn spawn_interactive(
        &self,
        request: SessionRequest,
    ) -> BoxFuture<'_, Result<InteractiveProcess, SandboxError>> {
        Box::pin(async move {
            let (argv, env) = shell::session_command(&request)?;
            self.default_exec()?.session(&argv, &env).await
        })
    }

    fn connection(&self) -> Option<SandboxConnection> {
        let container = self.execs.get(&self.service)?.container().to_owned();
        let mut connection =
            SandboxConnection::new("docker", format!("docker exec -it {container} bash -l"));
        connection.container = Some(container);
        Some(connection)
    }

    fn cleanup(&self) -> BoxFuture<'_, Result<(), SandboxError>> {
        Box::pin(async move {
            let Some(project) = self.project.lock().await.take() else {
                return Ok(());
            };
            Ok(project.down().await?)
        })
    }
}
