//! Docker sandboxes' foundation (feature `docker`): compose configurations read as the
//! reference reads them, and one compose project per sample, driven through the real
//! `docker compose` CLI (Compose v2) as the reference drives it.
//!
//! - [`ComposeConfig`]: a compose file (`compose.yaml` and its variants, parsed with a real
//!   YAML parser to find the default service: the one marked `x-default: true`, else the one
//!   named `default`), a bare Dockerfile, or the reference's default (the
//!   [`DEFAULT_IMAGE`] with `network_mode: none` and `command: tail -f /dev/null`).
//! - [`ComposeProject`]: `up --detach --wait` under a unique project name
//!   (`actuator-{task}-i{id}`, [`PROJECT_NAME_PATTERN`]) with a deadline, each service's
//!   container, and `down` with volumes, networks and built images, also when dropped.
//! - [`cleanup_orphans`]: the reference's `inspect sandbox cleanup docker`, for projects a
//!   killed process left (not those of a process still running: `alive.rs`).
//!
//! A missing `docker` CLI, Compose plugin or daemon is a [`DockerError`] that says how to get
//! it. The CLI's output is read bounded ([`MAX_CLI_STDOUT`], [`MAX_CLI_STDERR`]) and parsed
//! without trusting its shape.
//!
//! ```no_run
//! use actuator_sandbox::docker::{ComposeConfig, ComposeOptions, ComposeProject};
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), actuator_sandbox::docker::DockerError> {
//! let config = ComposeConfig::from_dir("my_task")?; // compose.yaml, Dockerfile, or the default
//! let project = ComposeProject::up(&config, ComposeOptions::new("my_task")).await?;
//! for container in project.containers() {
//!     println!("{}: {}", container.service, container.name);
//! }
//! project.down().await?;
//! # Ok(()) }
//! ```

mod alive;
mod cleanup;
mod cli;
mod compose;
mod container;
mod error;
mod name;
mod options;
mod project;
mod ps;
mod sandbox;

pub use cleanup::{cleanup_orphans, cleanup_project};
pub use cli::{MAX_CLI_STDERR, MAX_CLI_STDOUT};
pub use compose::{COMPOSE_FILES, ComposeConfig, DEFAULT_IMAGE, DOCKERFILE, MAX_COMPOSE_FILE};
pub use error::DockerError;
pub use name::{PROJECT_NAME_PATTERN, is_project_name, project_name};
pub use options::{ComposeOptions, DEFAULT_DOWN_TIMEOUT, DEFAULT_UP_TIMEOUT};
pub use project::ComposeProject;
pub use ps::ServiceContainer;
pub use sandbox::{DockerSandbox, DockerSandboxBuilder, max_sandboxes};

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn generated_compose_files() {
        insta::assert_snapshot!(
            "generic_compose",
            ComposeConfig::generic().generated_yaml().unwrap()
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("Dockerfile");
        std::fs::write(&file, "FROM scratch\n").unwrap();
        let config = ComposeConfig::from_dockerfile(&file).unwrap();
        insta::assert_snapshot!("dockerfile_compose", config.generated_yaml().unwrap());
        // The generated texts are compose files this module reads back the same way.
        for yaml in [
            ComposeConfig::generic().generated_yaml().unwrap(),
            config.generated_yaml().unwrap(),
        ] {
            let (default, services) =
                compose::parse_services(std::path::Path::new("generated"), yaml).unwrap();
            assert_eq!(default, "default");
            assert_eq!(services, ["default"]);
        }
    }

    #[test]
    fn an_odd_dockerfile_name_is_quoted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("we\"ird: name.Dockerfile");
        std::fs::write(&file, "FROM scratch\n").unwrap();
        let config = ComposeConfig::from_file(&file).unwrap();
        let yaml = config.generated_yaml().unwrap();
        let doc: serde_norway::Value = serde_norway::from_str(yaml).unwrap();
        assert_eq!(
            doc["services"]["default"]["build"]["dockerfile"].as_str(),
            Some("we\"ird: name.Dockerfile")
        );
    }
}
