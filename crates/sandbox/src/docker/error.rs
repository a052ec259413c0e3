//! [`DockerError`]: what can go wrong reading a compose configuration or driving the
//! `docker compose` CLI.

use std::path::PathBuf;
use std::time::Duration;

use crate::SandboxError;

/// An error from a compose configuration or a compose project.
///
/// It becomes a [`SandboxError::Unavailable`] (with this error as its `source()`) through
/// `From`, which is how a model sees a sandbox that could not be set up.
///
/// ```
/// use actuator_sandbox::docker::{ComposeConfig, DockerError};
/// let dir = tempfile::tempdir().unwrap();
/// let file = dir.path().join("compose.yaml");
/// std::fs::write(&file, "services: [unclosed\n").unwrap();
/// let err = ComposeConfig::from_file(&file).unwrap_err();
/// assert!(matches!(err, DockerError::Malformed { line: Some(_), .. }));
/// assert!(err.to_string().contains("compose.yaml"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DockerError {
    /// The `docker` CLI is not installed (or not on `PATH`).
    #[error(
        "the `docker` CLI was not found: install Docker (Debian/Ubuntu: `apt-get install \
         docker.io`, or run `scripts/setup-test-env`)"
    )]
    DockerMissing {
        /// The failed spawn.
        #[source]
        source: std::io::Error,
    },
    /// `docker` is installed but the Compose v2 plugin (`docker compose`) is not.
    #[error(
        "the Docker Compose v2 plugin (`docker compose`) is missing: {stderr}. Install it \
         (Debian/Ubuntu: `apt-get install docker-compose-plugin` from Docker's repository, or \
         link the `docker-compose` binary into `/usr/local/lib/docker/cli-plugins/`; \
         `scripts/setup-test-env` does the latter)"
    )]
    ComposeMissing {
        /// What `docker compose version` printed.
        stderr: String,
    },
    /// The Docker daemon does not answer.
    #[error(
        "the Docker daemon is not reachable: {stderr}. Start it (as root: `dockerd` in the \
         background, or `systemctl start docker`; `scripts/setup-test-env` starts one), or \
         point `DOCKER_HOST` at a running daemon"
    )]
    DaemonUnreachable {
        /// What `docker version` printed.
        stderr: String,
    },
    /// A compose file or Dockerfile could not be read.
    #[error("cannot read {}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A compose file is larger than [`MAX_COMPOSE_FILE`](crate::docker::MAX_COMPOSE_FILE).
    #[error("{} is larger than the {limit} bytes a compose file may have", file.display())]
    TooLarge {
        /// The file.
        file: PathBuf,
        /// The limit in bytes.
        limit: u64,
    },
    /// A compose file is not valid YAML, or not a mapping.
    #[error("{} is not a valid compose file: {reason}", file.display())]
    Malformed {
        /// The file.
        file: PathBuf,
        /// The line (1-based) the YAML parser stopped at, when it says.
        line: Option<usize>,
        /// What is wrong.
        reason: String,
    },
    /// A compose file declares no services.
    #[error("{} declares no services (a compose file needs a `services:` mapping)", file.display())]
    NoServices {
        /// The file.
        file: PathBuf,
    },
    /// No service is named `default` and none is marked `x-default: true`.
    #[error(
        "no 'default' service found in {} (services: {}). Either name a service 'default' or \
         add 'x-default: true' to one of your service definitions.",
        file.display(),
        services.join(", ")
    )]
    NoDefaultService {
        /// The file.
        file: PathBuf,
        /// The services it declares.
        services: Vec<String>,
    },
    /// More than one service is marked `x-default: true`.
    #[error("{} marks more than one service 'x-default: true': {}", file.display(), services.join(", "))]
    AmbiguousDefault {
        /// The file.
        file: PathBuf,
        /// The services marked.
        services: Vec<String>,
    },
    /// A path handed to compose is not valid UTF-8 (compose files are text).
    #[error("{} is not valid UTF-8, so it cannot be written into a compose file", path.display())]
    NonUtf8Path {
        /// The path.
        path: PathBuf,
    },
    /// A `docker` command failed.
    #[error("`{command}` failed ({status}): {stderr}")]
    Command {
        /// The command line.
        command: String,
        /// Its exit status.
        status: String,
        /// The end of what it printed on standard error (and standard output, for `up`).
        stderr: String,
    },
    /// A `docker` command ran past its timeout and was killed.
    #[error("`{command}` did not finish within {}s and was killed", after.as_secs_f64())]
    Timeout {
        /// The command line.
        command: String,
        /// The timeout.
        after: Duration,
    },
    /// A `docker` command printed something this crate cannot read.
    #[error("`{command}` printed unexpected output: {detail}")]
    UnexpectedOutput {
        /// The command line.
        command: String,
        /// What is wrong with it.
        detail: String,
    },
    /// `up` finished but the default service is not running.
    #[error(
        "compose project {project}: the default service '{service}' is not running after `up` \
         (state: {state}). Compose printed: {output}"
    )]
    NotRunning {
        /// The project name.
        project: String,
        /// The default service.
        service: String,
        /// Its state as `docker compose ps` reports it (`exited`, `missing`, …).
        state: String,
        /// The end of what `up` printed.
        output: String,
    },
    /// Writing the project's generated compose files, or another host-side I/O failure.
    #[error("docker sandbox I/O error")]
    Io(#[from] std::io::Error),
}

impl From<DockerError> for SandboxError {
    fn from(err: DockerError) -> Self {
        SandboxError::unavailable_from("The Docker sandbox is unavailable", err)
    }
}
