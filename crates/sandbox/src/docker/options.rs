//! [`ComposeOptions`]: how a project is brought up and taken down, and the second compose file
//! that adds its extra bind mounts.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::DockerError;

/// A host directory bind-mounted into a service, through a second compose file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ExtraVolume {
    service: String,
    host: PathBuf,
    container: String,
    read_only: bool,
}

/// How [`ComposeProject::up`](super::ComposeProject::up) runs a project.
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
    pub(super) task: String,
    pub(super) up_timeout: Duration,
    pub(super) down_timeout: Duration,
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

impl ComposeOptions {
    /// The second compose file that adds the extra bind mounts, when there are any.
    pub(super) fn override_yaml(&self) -> Result<Option<String>, DockerError> {
        if self.extra_volumes.is_empty() {
            return Ok(None);
        }
        override_yaml(&self.extra_volumes).map(Some)
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

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
}
